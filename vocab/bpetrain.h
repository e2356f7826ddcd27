/* bpetrain.h - SentencePiece-compatible BPE training.
 *
 * Learns the same pieces, in the same order and with the same scores, as
 * `spm_train --model_type=bpe` (google/sentencepiece, bpe_model_trainer.cc
 * and trainer_interface.cc; NOTES-bpe.md has the details), with the
 * library's defaults for everything this module has no option for:
 * split_by_whitespace, split_by_unicode_script and split_by_number on,
 * no user-defined or control symbols, <unk> <s> </s> as ids 0-2.
 *
 * The work comes in two phases:
 *
 *   1. counting: each input line that spm_train would load (not empty, at
 *      most max_sentence_length bytes, no U+2585) is normalized (textnorm),
 *      the strings "<unk>", "<s>" and "</s>" are replaced by a TAB as
 *      spm_train does, and the line is split into words, each starting at
 *      a U+2581; words are counted in per-thread hash tables that are
 *      added together at the end. Memory grows with the number of distinct
 *      words, not with the corpus. Only sampling (input_sentence_size with
 *      shuffle, below) can hold sentences;
 *   2. training (bpe_train): character counts from the word counts, the
 *      alphabet by coverage, rare characters replaced by U+2585, the words
 *      counted again, and the merges.
 *
 * Sampling: with input_sentence_size N > 0 and more than N loadable
 * lines, spm_train keeps the first N (shuffle off) or a reservoir sample
 * (shuffle on) drawn with std::mt19937 seeded with 12345678. The same
 * sample is drawn here from the same generator (seed = BpeOpts.seed,
 * 12345678 by default). When every input is a regular file the sample is
 * taken as a list of line numbers and the files are read a second time;
 * otherwise (stdin, pipes) the sampled lines are kept in memory, at most N
 * of them.
 *
 *   BpeOpts o = BPE_OPTS_DEFAULT;
 *   o.norm = sn;                                   // an TextNorm
 *   BpeTrainer *t = bpe_create(&o);
 *   if (bpe_read(t, files, nfiles, &err) || bpe_train(t, &err)) die(...);
 *   bpe_model(t, &model);                          // pieces into an SpModel
 *   bpe_destroy(t);
 */
#ifndef WB_BPETRAIN_H
#define WB_BPETRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/common.h"
#include "vocab/spmodel.h"
#include "vocab/textnorm.h"

/* spm_train's fixed seed for its sentence sampler. */
#define BPE_SPM_SEED 12345678u

typedef struct BpeOpts {
    int vocab_size;               /* pieces in the model, meta pieces included */
    float character_coverage;     /* share of character occurrences the alphabet covers */
    int max_piece_length;         /* in code points */
    uint64_t input_sentence_size; /* 0: every line */
    int shuffle;                  /* sample at random (1) or take the first N (0) */
    uint64_t seed;                /* for the sampler */
    size_t max_sentence_length;   /* longer lines (in bytes) are skipped */
    int nthreads;                 /* counting threads */
    const TextNorm *norm;         /* normalizer (borrowed; made with the default
                                   * switches, as spm_train's BPE needs them);
                                   * NULL = the identity rule */
    /* Called now and then during long phases (may be NULL): phase is
     * "reading" (done = lines, total = 0) or "merging" (done of total). */
    void (*progress)(void *ctx, const char *phase, uint64_t done, uint64_t total);
    void *progress_ctx;
    /* Beyond spm_train (all off by default):
     * held_out: the share of the lines to be counted that are held back
     * from training instead, chosen by a hash of the line's bytes and
     * `seed` (so equal lines go the same way, for any thread count), and
     * kept for bpe_held_out();
     * pretok: rewrites each counted line before normalization, into out
     * (worker: the counting thread, 0 .. nthreads-1), e.g. BERT's basic
     * tokenization, so that the pieces are those its tokenizer can use;
     * limit_alphabet: the alphabet holds at most this many characters, the
     * most frequent (0: as many as character_coverage takes). */
    double held_out;
    void (*pretok)(void *ctx, int worker, const char *line, size_t len, Buf *out);
    void *pretok_ctx;
    size_t limit_alphabet;
    /* soft_limit (spm_train's --hard_vocab_limit=false): a text that runs
     * out of pairs before vocab_size gives the pieces it has (vocab_size
     * becomes their count) instead of an error */
    int soft_limit;
} BpeOpts;

#define BPE_OPTS_DEFAULT                                                                           \
    { 32000, 0.9995f, 16, 0, 1, BPE_SPM_SEED, 4192, 1, NULL, NULL, NULL, 0.0, NULL, NULL, 0, 0 }

typedef struct BpeStats {
    uint64_t lines;          /* lines read */
    uint64_t empty;          /* empty lines (skipped, as spm_train does) */
    uint64_t too_long;       /* lines over max_sentence_length (skipped) */
    uint64_t reserved;       /* lines holding U+2585 (skipped) */
    uint64_t loadable;       /* the rest: lines spm_train would load */
    uint64_t sentences;      /* loadable lines used (the sample, if sampled) */
    uint64_t held_out;       /* lines of the sample held back (BpeOpts.held_out) */
    int sampled;             /* 1: a sample of `sentences` lines was drawn */
    uint64_t words;          /* word occurrences */
    uint64_t distinct_words; /* after rare characters became U+2585 */
    uint64_t chars;          /* character occurrences (U+2581 included) */
    uint64_t alphabet;       /* required characters */
    double coverage;         /* share of `chars` they cover */
    uint64_t merges;         /* merged pieces */
    uint64_t duplicates;     /* merges skipped because the piece existed */
    uint64_t pairs;          /* most pair symbols alive at once */
    uint64_t window_skips;   /* best pair skipped because it was outside the active set */
    uint64_t cut_ties;       /* active-set updates whose cut split a tie */
    uint64_t cut_ties_used;  /* ... where the choice at that cut mattered */
    double sec_read, sec_alphabet, sec_pairs, sec_merges; /* wall time per phase */
} BpeStats;

typedef struct BpeTrainer BpeTrainer;

/* A trainer with options o (copied; o->norm is borrowed and must outlive
 * the trainer). Pair with bpe_destroy(). */
BpeTrainer *bpe_create(const BpeOpts *o);
void bpe_destroy(BpeTrainer *t);

/* Read the inputs (n == 0 or "-": stdin) and count their words, applying
 * the line filters and sampling described above, on o->nthreads threads.
 * Returns 0, or -1 with err set ("FILE: No such file or directory", read
 * errors). */
int bpe_read(BpeTrainer *t, char **inputs, int n, Err *err);

/* Count one raw line as bpe_read would (filters, normalization, words),
 * without sampling: for callers with text in memory. */
void bpe_add_line(BpeTrainer *t, const char *line, size_t len);

/* Add `count` occurrences of one word as it is after normalization
 * (UTF-8; a word should start with U+2581 and hold no other U+2581). For
 * tests that need exact word counts. */
void bpe_add_word(BpeTrainer *t, const char *word, size_t len, uint64_t count);

/* The normalization bpe_add_line() applies to a line (textnorm_normalize()
 * of o->norm, computed with a faster path for ASCII), appended to out.
 * Exposed for tests. */
void bpe_normalize(const BpeTrainer *t, const char *s, size_t n, Buf *out);

/* Train: alphabet, merges, final piece list. Returns 0, or -1 with err set
 * when there is nothing to train on, when vocab_size is smaller than the
 * meta pieces plus the alphabet (the message names the minimum), or when
 * the corpus runs out of pairs before vocab_size (spm_train's "Vocabulary
 * size too high"; the message names the maximum) unless soft_limit: then
 * vocab_size is lowered to what the text gives (bpe_vocab_size()). Call
 * once. */
int bpe_train(BpeTrainer *t, Err *err);

/* Number of trained pieces (merged pieces, then the alphabet; the meta
 * pieces not included) and piece i with its length and score. Valid after
 * bpe_train() until bpe_destroy(). */
size_t bpe_npieces(const BpeTrainer *t);

/* The model's pieces, meta pieces included: vocab_size, or fewer when
 * soft_limit let the text give fewer. Valid after bpe_train(). */
int bpe_vocab_size(const BpeTrainer *t);
const char *bpe_piece(const BpeTrainer *t, size_t i, size_t *len, float *score);

/* Append <unk> <s> </s> and the trained pieces to m, as spm_train orders
 * them. The caller sets trainer_spec and normalizer_spec. */
void bpe_model(const BpeTrainer *t, SpModel *m);

/* Append the held-out lines (BpeOpts.held_out), each followed by '\n', to
 * out: every one once, in an order that may vary with the threads. */
void bpe_held_out(const BpeTrainer *t, Buf *out);

/* Counters of the run so far. */
const BpeStats *bpe_stats(const BpeTrainer *t);

/* The script class spm_train's piece validity check gives cp: its
 * Unicode 9.0 Scripts.txt table (code points assigned later are Common),
 * with Hiragana, Katakana and U+30FC as Han. Returns a UNI_SC_* code, or
 * BPE_SCRIPT_ANY for characters that never split a piece (Inherited;
 * U+2581 is handled by its own rule). Exposed for tests. */
enum { BPE_SCRIPT_ANY = -1 };
int bpe_script(uint32_t cp);

/* Nonzero if the UTF-8 string s[0..n) may be a piece under spm_train's
 * rules with maximum length max_len (code points): no U+2585, U+2581
 * only first, one script (bpe_script), no NUL or TAB. Exposed for tests. */
int bpe_valid_piece(const char *s, size_t n, int max_len);

#endif
