/* mlm.c - masked-LM rules shared by hdf5gen and the trainer; see mlm.h. */
#include "common/mlm.h"

#include <math.h>

size_t mlm_num_to_predict(size_t len, double masked_lm_prob, int max_predictions) {
    double x = nearbyint((double)len * masked_lm_prob); /* default rounding: ties to even */
    size_t num = x < 1 ? 1 : (size_t)x;
    return num > (size_t)max_predictions ? (size_t)max_predictions : num;
}
