/* ckpt.h - training checkpoints and the Hugging Face export.
 *
 * A checkpoint (OUTPUT_DIR/ckpt_<step>.wbckpt) holds everything a run
 * needs to continue exactly: the model config, the weights, the optimizer
 * kind, step and moments, the global step and the data position. Layout:
 * "WBCKPT1\0", a u32 length and a JSON header (config, counts, steps, data
 * position), the float32 arrays (weights, m, v), then "WBCKEND\0" and a
 * 64-bit FNV-1a hash of all that came before: the completion marker. It is
 * written to a temp file and renamed, so a checkpoint either is whole or is
 * not there; a damaged or cut file is refused with a reason.
 *
 * The export is what transformers' BertForPreTraining.from_pretrained
 * reads: config.json, model.safetensors (float32, Hugging Face tensor
 * names; the decoder weight is tied to the word embeddings and its bias to
 * cls.predictions.bias, so neither is stored twice), vocab.txt and the
 * tokenizer files, and a README.md model card.
 *
 * The import (--init_checkpoint) reads such a directory, or any
 * model.safetensors of BertForPreTraining, BertForMaskedLM or BertModel,
 * as transformers' from_pretrained would: the heads a checkpoint lacks
 * keep their fresh initialization.
 */
#ifndef WB_CKPT_H
#define WB_CKPT_H

#include <stdint.h>

#include "train/bert.h"
#include "train/data.h"
#include "train/optim.h"

typedef struct CkptInfo {
    int64_t step;   /* optimizer steps done */
    DataState data; /* where the next batch comes from (rank 0) */
    uint64_t seed;
    int nranks;       /* data-parallel ranks that wrote it (1 or more) */
    DataState *ranks; /* each rank's position; ckpt_load allocates it (free it) */
    /* The options the order and content of the batches depend on, as the
     * trainer words them ("train_batch_size=8 seed=42 ..."); "" when the
     * checkpoint predates it. Kept in the header as "run". */
    char run[256];
} CkptInfo;

/* Write m, o and info to path atomically (temp file + rename). Returns 0
 * or -1 with err. */
int ckpt_save(const char *path, const Bert *m, const Optim *o, const CkptInfo *info, Err *err);

/* Read a checkpoint into a model created with the same config (a different
 * config is an error naming the first differing field) and, when o is not
 * NULL, the optimizer (which must be of the same kind). with_optim 0 loads
 * the weights only (--init_checkpoint). Returns 0 or -1 with err. */
int ckpt_load(const char *path, Bert *m, Optim *o, CkptInfo *info, Err *err);

/* Called for a checkpoint file that fails the completion check; why names
 * the file and the reason ("DIR/ckpt_9.wbckpt: cut short (header)"). */
typedef void (*CkptSkipFn)(void *arg, const Err *why);

/* The newest complete checkpoint in dir (largest step whose file passes
 * the completion check), written into path (cap bytes). Files are checked
 * newest first; each newer one that fails is passed to skip (when not
 * NULL) and counted in *ndamaged. A missing dir holds none. Returns 1
 * found, 0 none, -1 error (dir unreadable). */
int ckpt_latest(const char *dir, char *path, size_t cap, CkptSkipFn skip, void *arg, int *ndamaged,
                Err *err);

/* 1 when path is a file that starts as a wikibert checkpoint, else 0. */
int ckpt_is_wikibert(const char *path);

/* The weights of --init_checkpoint into m (created from --config_file and
 * initialized with the seed): path is a wikibert checkpoint (weights only,
 * as ckpt_load), a Hugging Face model directory (its model.safetensors;
 * its config.json, when there, must have m's layers, width and heads) or
 * a safetensors file. Safetensors tensors take Hugging Face's names with
 * or without "bert." (BertModel), TF-era LayerNorm gamma/beta too; F32,
 * F16 and BF16 are read (converted to float32); each shape must be m's
 * (else an error naming the tensor and both shapes), but for the word
 * embeddings and cls.predictions.bias, which may lack the rows that
 * rounding vocab_size up to a multiple of 8 added. The MLM decoder weight
 * is the word embeddings (a stored one is not read; its bias stands for
 * cls.predictions.bias when that is absent). Missing pooler and cls.*
 * tensors (BertModel, BertForMaskedLM) keep m's values; any other missing
 * tensor is an error. note gets one line of what kept m's values and what
 * was not used ("" when everything matched). Returns 0 or -1 with err. */
int ckpt_init_load(const char *path, Bert *m, Buf *note, Err *err);

/* The tokenizer's normalization, as BertTokenizer's arguments. */
typedef struct HfTokenizer {
    int lower; /* do_lower_case */
    int strip; /* strip_accents: 0, 1, or -1 (None: as do_lower_case) */
} HfTokenizer;

/* What the export's README.md (the model card) says of the training. */
typedef struct HfCard {
    const char *program;   /* train_bert_cpu or train_bert */
    const char *cmdline;   /* the command line (shell-quoted) */
    const char *input_dir; /* --input_dir */
    int nfiles;            /* its HDF5 training files */
    int64_t steps;         /* optimizer steps (of this phase) */
    int phase2;            /* the steps were phase 2's */
    double loss, mlm, nsp; /* the last step's losses */
} HfCard;

/* Hugging Face directory: dir/config.json, dir/model.safetensors, and,
 * when vocab is not NULL, vocab.txt holding the vocab_len bytes of vocab,
 * tokenizer_config.json (BertTokenizer with tk's normalization, so that
 * AutoTokenizer normalizes as the training data was; model_max_length
 * max_position_embeddings), special_tokens_map.json and tokenizer.json
 * (common/tokjson.h: the fast tokenizer, the same normalization); when
 * card is not NULL, README.md, a model card. Each file is written
 * atomically. Returns 0 or -1 with err. */
int export_hf(const char *dir, const Bert *m, const char *vocab, size_t vocab_len,
              const HfTokenizer *tk, const HfCard *card, Err *err);

#endif
