/* data.h - training batches from masked-LM HDF5 files, read the way
 * NVIDIA's run_pretraining.py reads them.
 *
 * Files: the regular files directly in the input directory whose names
 * contain "training", sorted, then shuffled with CPython's
 * random.Random(seed + epoch) (common/pyrandom.h) - the same permutation on
 * every rank (run_pretraining.py after 7a4c4250; at 4733603 each local rank
 * shuffled differently). Rank r of W reads, at file step f of an epoch,
 * files[(f W + r) mod F], or files[(f W + r + (W mod F) f) mod F] when
 * W > F; an epoch is F file steps. A file is read whole (the six datasets,
 * any integer types), checked (shapes agree, ids inside the vocabulary,
 * labels 0/1, rows no longer than max_positions), and its rows are visited in a seeded random order
 * (xoshiro from seed, epoch and file step; PyTorch's RandomSampler order
 * cannot be reproduced outside PyTorch), micro-batch by micro-batch; the
 * last batch of a file may be short (run_pretraining.py keeps it too).
 *
 * Masked positions end at the first 0 (pretraining_dataset's rule). A file
 * without any masked position (hdf5gen --no-mask) is masked on the fly
 * when dynamic masking is on: per row, num = min(max_predictions,
 * max(1, round(0.15 * tokens))) of the tokens that are not [CLS]/[SEP],
 * each 80 % [MASK], 10 % a random id, 10 % kept, drawn from a generator
 * seeded by seed, epoch, file step and row, so a resumed run masks alike.
 *
 * Length bins (bin_size N > 0; LDDL's sequence binning): a row's length is
 * one past its last token or masked position, its bin (length - 1) / N.
 * Rows are visited in the seeded order and queued by bin; a bin whose
 * queue holds micro_batch rows becomes the next batch, and at the file's
 * end the partly filled bins follow in bin order. A batch is cut to its
 * bin's upper bound ((bin + 1) N tokens, at most the file's length): the
 * padding past it is not computed, which changes nothing but the work
 * (padded keys are masked; no loss reads padded positions).
 *
 * The position (epoch, file step, row) is all a checkpoint needs to resume
 * exactly (data_state / data_seek), given the same options.
 */
#ifndef WB_DATA_H
#define WB_DATA_H

#include <stdint.h>

#include "train/bert.h"

typedef struct DataOpts {
    const char *dir;
    uint64_t seed;
    int rank, world;           /* 0, 1 */
    int micro_batch;           /* rows per batch */
    int max_predictions;       /* masked slots per row in a batch (run_pretraining.py's
                                  --max_predictions_per_seq) */
    int vocab_size;            /* ids must be below it */
    int max_seq_length;        /* 0: any; else files must have it */
    int dynamic_mask;          /* mask files that have no masks */
    int32_t cls, sep, mask_id; /* for dynamic masking (BERT's 101, 102, 103) */
    int bin_size;              /* > 0: length bins of this many tokens (above) */
    int no_prefetch;   /* 1: read each file when it is reached (no thread reading the next ahead) */
    int max_positions; /* > 0: files with longer sequences are refused (the model's
                          max_position_embeddings) */
} DataOpts;

typedef struct DataState {
    int64_t epoch, file_step, row; /* next batch starts here */
} DataState;

typedef struct Data Data;

/* List and check the directory and load the first file. Returns 0, or -1
 * with err ("DIR: no file with 'training' in its name", "FILE: input_ids:
 * 2 dimensions expected", "FILE: sequences of 128 tokens, more than the
 * config's max_position_embeddings 64", ...). Every file is checked so
 * when it is read: the first here, the others before their first batch. */
int data_open(Data **d, const DataOpts *o, Err *err);

/* One file, its rows in file order (for evaluation). Returns 0 or -1. */
int data_open_file(Data **d, const DataOpts *o, const char *path, Err *err);

/* The next micro-batch (pointers valid until the next call). Moves to the
 * next file (and epoch) as needed. Returns 0, or -1 with err on a bad file. */
int data_next(Data *d, BertBatch *b, Err *err);

/* Where the next batch comes from; data_seek goes there (loading the file). */
DataState data_state(const Data *d);
int data_seek(Data *d, DataState s, Err *err);

/* Token positions of the batches handed out so far: computed, and at the
 * files' full length (the same without length bins). */
void data_tokens(const Data *d, int64_t *computed, int64_t *full);

/* The file the last batch came from, and the number of files. */
const char *data_file(const Data *d);
int data_nfiles(const Data *d);

/* The i-th training file in sorted order (0 <= i < data_nfiles), or NULL. */
const char *data_file_at(const Data *d, int i);

void data_close(Data *d);

#endif
