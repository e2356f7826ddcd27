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
 * cls.predictions.bias, so neither is stored twice; an untied decoder,
 * tie_word_embeddings false, is stored with its bias under both names, as
 * transformers 5 unties both), vocab.txt and the tokenizer files, and a
 * README.md model card (without a vocabulary, it says the tokenizer files
 * are missing).
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

/* The checkpoint files in dir (ckpt_<step>.wbckpt, complete or not) of a
 * step above `above`, the newest one's path into newest[cap] (when not
 * NULL and there is one). A missing dir holds none. Returns the count, or
 * -1 with err. */
int ckpt_count(const char *dir, int64_t above, char *newest, size_t cap, Err *err);

/* Remove the checkpoint files of dir of a step above `above` (a fresh
 * run's -f), unless keep (not NULL) is one of them: then nothing is
 * removed and -1 returned with err naming it. Returns the number removed,
 * or -1 with err. */
int ckpt_remove_all(const char *dir, int64_t above, const char *keep, Err *err);

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
 * is m's own tensor when m is untied (a tied checkpoint's word embeddings
 * when the file has none); when m ties it to the word embeddings, a stored
 * one must equal them (else an error: the checkpoint is untied; so is a
 * directory whose config.json says tie_word_embeddings false). The
 * decoder's bias, where stored, is cls.predictions.bias (the one the
 * logits take). Missing pooler and cls.*
 * tensors (BertModel, BertForMaskedLM) keep m's values; any other missing
 * tensor is an error. note gets one line of what kept m's values and what
 * was not used ("" when everything matched). Returns 0 or -1 with err. */
int ckpt_init_load(const char *path, Bert *m, Buf *note, Err *err);

/* The tokenizer's normalization, as BertTokenizer's arguments. */
typedef struct HfTokenizer {
    int lower; /* do_lower_case */
    int strip; /* strip_accents: 0, 1, or -1 (None: as do_lower_case) */
} HfTokenizer;

/* The tokenizer normalization a Hugging Face model directory holds: its
 * tokenizer.json's BertNormalizer (common/tokjson.h), else its
 * tokenizer_config.json's do_lower_case and strip_accents (BertTokenizer's
 * defaults true and null where absent). Returns 1 with tk set and file
 * (cap bytes) naming the file read, 0 when dir has neither file, -1 with
 * err on a file that cannot be read (a tokenizer.json of another model
 * than WordPiece, broken JSON). */
int hf_dir_tokenizer(const char *dir, HfTokenizer *tk, char *file, size_t cap, Err *err);

/* What the export's README.md (the model card) says of the training. */
typedef struct HfCard {
    const char *program;   /* train_bert_cpu or train_bert */
    const char *cmdline;   /* the command line (shell-quoted) */
    const char *input_dir; /* --input_dir */
    int nfiles;            /* its HDF5 training files */
    int64_t steps;         /* optimizer steps (of this phase) */
    int phase2;            /* the steps were phase 2's */
    double loss, mlm, nsp; /* the last step's losses */
    const char *example;   /* a fill-mask sentence of the training text (one [MASK]), or NULL */
    const char *masked;    /* the word it masks */
} HfCard;

/* A fill-mask example in the training text's language: the first
 * sentence of the rows of b (their masked positions restored to the
 * original tokens, decoded with vocab[0..vocab_len), vocab.txt's text)
 * that ends in . ! or ?, holds 8 to 40 words (punctuation counted) and no
 * [UNK], follows another in its segment (a segment may begin inside a
 * sentence) and has no punctuation inside but up to two commas (else
 * without that rule, else the first of 5 to 40 words anywhere), with its
 * longest word of letters after the first masked as one [MASK]. The
 * sentence goes into example and the word into word. Returns 0, or -1
 * when no row has such a sentence. */
int hf_fill_mask_example(const BertBatch *b, const char *vocab, size_t vocab_len, Buf *example,
                         Buf *word);

/* What the model card and the trainer say of an export without a
 * vocabulary (no --vocab_file). */
#define HF_NO_TOKENIZER                                                                            \
    "missing: no tokenizer files (vocab.txt, tokenizer.json, tokenizer_config.json, "              \
    "special_tokens_map.json), as the training was given no --vocab_file; copy the vocabulary "    \
    "the HDF5 files were made with into this directory (or train with --vocab_file) before "       \
    "loading a tokenizer from it"

/* Hugging Face directory: dir/config.json, dir/model.safetensors, and,
 * when vocab is not NULL, vocab.txt holding the vocab_len bytes of vocab,
 * tokenizer_config.json (BertTokenizer with tk's normalization, so that
 * AutoTokenizer normalizes as the training data was; model_max_length
 * max_position_embeddings), special_tokens_map.json and tokenizer.json
 * (common/tokjson.h: the fast tokenizer, the same normalization); when
 * card is not NULL, README.md, a model card. The export is written whole
 * into DIR.tmp.<pid> beside dir (config.json last) and then swapped in
 * (renameat2 RENAME_EXCHANGE; on file systems without it, the old export
 * is renamed to DIR.old.<pid> and back on failure): on a failure (a full
 * disk) or a crash dir holds the old export or the new one, whole, never
 * a mix. The temp directories of dead processes are removed first. An
 * existing dir must pass export_hf_check. Returns 0 or -1 with err. */
/* Whether the export may replace dir: it does not exist, or is a
 * directory holding only the files of an export (a directory of other
 * files is not swapped away). Returns 0, or -1 with err naming what is in
 * the way. */
int export_hf_check(const char *dir, Err *err);

int export_hf(const char *dir, const Bert *m, const char *vocab, size_t vocab_len,
              const HfTokenizer *tk, const HfCard *card, Err *err);

#endif
