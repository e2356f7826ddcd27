/* mlm.h - masked-LM rules shared by example generation (hdf5gen) and the
 * trainer's dynamic masking (train/data.c), so both mask the same number
 * of tokens for a sequence of a given length.
 *
 *   size_t k = mlm_num_to_predict(len, 0.15, 20);   // tokens to mask
 */
#ifndef WB_MLM_H
#define WB_MLM_H

#include <stddef.h>

/* num_to_predict of create_pretraining_data.py:
 * min(max_predictions, max(1, round(len * masked_lm_prob))) with Python's
 * round() (ties to even: 30 * 0.15 = 4.5 -> 4). */
size_t mlm_num_to_predict(size_t len, double masked_lm_prob, int max_predictions);

#endif
