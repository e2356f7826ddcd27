/* mlmfile.h - an InstSet (instances.h) as NVIDIA's masked-LM HDF5 file.
 *
 * The six datasets of create_pretraining_data.py, in its order, in the
 * root group (spec 11.6): input_ids i32 (N, L), input_mask i8 (N, L),
 * segment_ids i8 (N, L), masked_lm_positions i32 (N, P), masked_lm_ids
 * i32 (N, P), next_sentence_labels i8 (N,); rows right-padded with 0, gzip
 * level 4 in h5py's chunk shapes (h5file.h). The values equal the
 * original's for the same instances; the file bytes are the same for any
 * thread count.
 *
 *   MlmFileOpts fo = {.max_seq_length = 128, .max_predictions = 20, .level = 4, .threads = 2};
 *   if (mlmfile_write(&set, &fo, "x_training_0.hdf5", &bytes, &err)) ...
 */
#ifndef WB_MLMFILE_H
#define WB_MLMFILE_H

#include <stdint.h>

#include "common/common.h"
#include "hdf5gen/instances.h"

typedef struct MlmFileOpts {
    int max_seq_length;  /* L: every instance has len <= L */
    int max_predictions; /* P: every instance has nmask <= P */
    int level;           /* deflate level (4: NVIDIA's) */
    int threads;         /* compression threads */
    int force;           /* replace an existing file */
} MlmFileOpts;

/* Write the s->n rows of s (output order) to `path`, atomically (temp file
 * renamed at the end); a spilled set first gets its row file
 * (inst_rows_prepare). s->n must be > 0. On success *bytes (if not NULL) is
 * the compressed payload size. Returns 0, or -1 with err ("PATH: already
 * exists (use -f to overwrite)", "PATH: writing input_ids: No space left
 * on device", "PATH: temporary file in DIR: Input/output error"); no file is left
 * at path then. */
int mlmfile_write(InstSet *s, const MlmFileOpts *o, const char *path, uint64_t *bytes, Err *err);

#endif
