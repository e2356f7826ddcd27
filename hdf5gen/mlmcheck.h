/* mlmcheck.h - validation and statistics of masked-LM HDF5 files, read the
 * way NVIDIA's pretraining_dataset reads them (spec 14).
 *
 * File rules: the six datasets input_ids, input_mask, segment_ids,
 * masked_lm_positions, masked_lm_ids, next_sentence_labels exist, are
 * integer, agree in N (rows), L (input_*, segment_ids) and P (masked_lm_*),
 * next_sentence_labels is 1-D; NVIDIA's exact types (i32, i8, i8, i32, i32,
 * i8) are a warning when different, an error with strict.
 * Row rules (mlmcheck_row): input_mask is ones then zeros, at least 2;
 * padding is 0 in input_ids and segment_ids; [CLS] first, [SEP] last;
 * segment ids 0...0 1...1 with a [SEP] ending segment A; label 0 or 1, 0
 * without a segment B; masked positions strictly increasing inside the
 * sequence, never on [CLS] or a closing [SEP], then zeros only (the reader
 * stops at the first 0); masked_lm_ids 0 in the padding; with a vocabulary,
 * every id inside it.
 *
 *   MlmCheckOpts o = {.vocab_size = 30522, .cls = 101, .sep = 102, .mask = 103, .unk = 100};
 *   MlmCheckStats st = {0};
 *   if (mlmcheck_file("x.hdf5", &o, &st, &err)) puts(err.msg);
 */
#ifndef WB_MLMCHECK_H
#define WB_MLMCHECK_H

#include <stdint.h>
#include <stdio.h>

#include "common/common.h"

typedef struct MlmCheckOpts {
    int32_t vocab_size;     /* 0: unknown (no range check) */
    int32_t cls, sep, mask; /* token ids; mask -1 when unknown */
    int32_t unk;            /* [UNK]'s id, counted in the statistics; -1 when unknown */
    int strict;             /* other integer types are errors, not warnings */
    FILE *dump;             /* if set: every row in inst_dump's text format */
} MlmCheckOpts;

typedef struct MlmCheckStats {
    uint64_t instances, tokens, masked;
    uint64_t unk; /* [UNK] tokens of the text (a masked position counts its original id) */
    uint64_t masked_as_mask, masked_kept, masked_other; /* what the masked positions hold */
    uint64_t random_next, with_b;
    uint64_t hist[8]; /* sequence lengths in eighths of L */
    int32_t max_id;
    int L, P;
    int warnings;
} MlmCheckStats;

/* Check one padded row (ids, mask, seg: L values; pos, lab: P values; nsp).
 * Adds it to st (if not NULL). Returns 0, or -1 with the reason in why. */
int mlmcheck_row(const MlmCheckOpts *o, int L, int P, const int32_t *ids, const int32_t *mask,
                 const int32_t *seg, const int32_t *pos, const int32_t *lab, int32_t nsp,
                 MlmCheckStats *st, char *why, size_t cap);

/* Check the file at path, adding to st. Returns 0; -1 on a violation (err:
 * "PATH: instance 12: masked_lm_positions not increasing (9 then 5)"),
 * damage included ("PATH: damaged HDF5 file (...)", a chunk that does not
 * decompress); -2 when the file cannot be read as HDF5 at all: missing,
 * unreadable, not HDF5, refused by the library's open (err names it).
 * Warnings go to stderr through warn(). */
int mlmcheck_file(const char *path, const MlmCheckOpts *o, MlmCheckStats *st, Err *err);

#endif
