/* wptrain.h - train a BERT WordPiece vocabulary the way Hugging Face's
 * WordPieceTrainer does (tokenizers 0.23: a BPE trainer with the
 * continuing-subword prefix "##"), and write it as vocab.txt and as a
 * tokenizer.json that tokenizers.Tokenizer.from_file() loads.
 *
 * Three steps, each usable on its own:
 *
 *   1. counting: text -> BertNormalizer + BertPreTokenizer (wordpiece.h,
 *      WP_FLAVOR_HF) -> a table word -> count. Streaming: only the table is
 *      kept, never the text; wpcounts_read() runs on N threads with
 *      per-thread tables merged into hash-sharded global ones, so the counts
 *      are the same for every N.
 *   2. training (wptrain_train): special tokens, the alphabet, "##" forms of
 *      the characters, then BPE merges until the vocabulary has vocab_size
 *      tokens, no pair is left, or the best pair is rarer than
 *      min_frequency.
 *   3. output: wpvocab_txt() and wpvocab_json() into a Buf.
 *
 * wptrain_run() chains them for a program: inputs -> vocab.txt and/or
 * tokenizer.json written atomically, a summary on stderr.
 *
 *   WpTrainOpts o = WPTRAIN_DEFAULTS;
 *   o.vocab_size = 32000;
 *   char *in[] = {"sentences.txt"};
 *   if (wptrain_run(&o, (const char *const *)in, 1, "vocab.txt", "tokenizer.json", &err)) ...
 *
 * Output order (ids): [PAD], [unused0] .. [unused{U-1}], [UNK], [CLS],
 * [SEP], [MASK]; the alphabet (single characters, code point order); "##c"
 * for each alphabet character seen inside a word (code point order); the
 * merged tokens in the order they were made. vocab_size counts all of them.
 */
#ifndef WB_WPTRAIN_H
#define WB_WPTRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/common.h"
#include "vocab/spvocab.h"
#include "tokenize/wordpiece.h"

typedef struct WpTrainOpts {
    size_t vocab_size;      /* tokens in the output, special ones included */
    int unused;             /* number of [unusedN] tokens after [PAD] */
    int cased;              /* keep case (BertNormalizer lowercase=false) */
    int strip_accents;      /* BertNormalizer strip_accents: 0, 1, or -1 (None: as !cased) */
    uint64_t min_frequency; /* never merge a pair seen fewer times than this */
    size_t limit_alphabet;  /* keep only the most frequent characters; 0: all */
    int threads;            /* counting threads; 0: all cores */
    int force;              /* wptrain_run: overwrite existing output files */
    /* Optional, normally NULL: the alphabet and the "##c" tokens to use, in
     * this id order (other tokens in the list are ignored; characters not
     * listed are dropped as limit_alphabet drops them; a "##c" the list
     * lacks follows in alphabet order). Given the initial part of a vocab.txt
     * that Hugging Face's trainer wrote, this reproduces that file. */
    const VocabList *initial;
} WpTrainOpts;

/* BertWordPieceTokenizer.train's defaults (vocab_size 30000, min_frequency
 * 2, limit_alphabet 1000) with vocab_convert's 100 [unusedN] tokens. */
#define WPTRAIN_DEFAULTS                                                                           \
    { 30000, 100, 0, -1, 2, 1000, 0, 0, NULL }

/* Largest --unused accepted (as vocab_convert). */
#define WPTRAIN_MAX_UNUSED 100000

/* ---- counting ---- */

typedef struct WpCounts WpCounts;

typedef struct WpCountStats {
    uint64_t lines;    /* input lines read */
    uint64_t bytes;    /* input bytes read */
    uint64_t words;    /* words counted (pre-tokenizer pieces) */
    uint64_t bad_utf8; /* invalid UTF-8 sequences dropped */
} WpCountStats;

/* An empty word table. Free with wpcounts_destroy(). */
WpCounts *wpcounts_create(void);
void wpcounts_destroy(WpCounts *c);

/* Add `count` to the word w[0..n) exactly as given, without normalization
 * (an empty word, or one that is not valid UTF-8, is ignored). For callers
 * with their own word lists. */
void wpcounts_add(WpCounts *c, const char *w, size_t n, uint64_t count);

/* Normalize and pre-tokenize text[0..len) as BertNormalizer +
 * BertPreTokenizer (with the wordpiece.h switches `norm`: WP_UNCASED
 * lower-cases and strips accents) and count its words; one thread.
 * Returns the number of words. */
size_t wpcounts_add_text(WpCounts *c, const char *text, size_t len, int norm);

/* Read the inputs ("-" is stdin; none means stdin) line by line and count
 * their words as wpcounts_add_text() does, on `threads` threads (0: all
 * cores). Memory: the table, plus 4 MiB of text and a private table per
 * thread. Adds to *st (zero it first). Returns 0, or -1 with err set
 * ("FILE: No such file or directory", read errors). */
int wpcounts_read(WpCounts *c, const char *const *inputs, int ninputs, int norm, int threads,
                  WpCountStats *st, Err *err);

/* Number of distinct words. */
size_t wpcounts_distinct(const WpCounts *c);

/* Append "word<TAB>count\n" for every word, by falling count, then by
 * bytes: a deterministic listing for tests and inspection. */
void wpcounts_dump(const WpCounts *c, Buf *out);

/* ---- training ---- */

/* Why the merge loop ended. */
enum { WPT_STOP_SIZE, WPT_STOP_FREQUENCY, WPT_STOP_NO_PAIRS };

typedef struct WpVocab {
    VocabList tok;        /* tokens in id order */
    uint64_t *count;      /* count[id]: the pair count that made a merged token; 0 otherwise */
    size_t nspecial;      /* [PAD] [unusedN] [UNK] [CLS] [SEP] [MASK] */
    size_t nalpha;        /* single characters */
    size_t ncont;         /* "##" + a character */
    size_t nmerged;       /* tokens made by merges */
    size_t merges;        /* merge steps, including those that remade an existing token */
    size_t dropped_chars; /* distinct characters cut by limit_alphabet */
    int stop;             /* WPT_STOP_* */
    int cased;
    int strip_accents; /* as WpTrainOpts */
} WpVocab;

/* Train on the counted words with o's vocab_size, unused, min_frequency
 * and limit_alphabet (o->cased and o->strip_accents are only recorded for wpvocab_json). Fills
 * v (zero-initialised by the caller; free with wpvocab_free). The result
 * does not depend on how the words were counted or in which order. Returns
 * 0, or -1 with err set when there are no words, or when vocab_size is
 * smaller than the special tokens and characters together. */
int wptrain_train(const WpCounts *c, const WpTrainOpts *o, WpVocab *v, Err *err);

/* Release a vocabulary; v is zeroed and reusable. */
void wpvocab_free(WpVocab *v);

/* Append vocab.txt: one token per line, line number = id. */
void wpvocab_txt(const WpVocab *v, Buf *out);

/* Append tokenizer.json exactly as tokenizers 0.23's Tokenizer.save()
 * lays it out, with the vocabulary's normalization (common/tokjson.h
 * writes it: BertNormalizer, BertPreTokenizer, the [CLS]/[SEP] template,
 * the WordPiece decoder and model). */
void wpvocab_json(const WpVocab *v, Buf *out);

/* ---- all together ---- */

/* Count the inputs, train, and write vocab_txt_path and/or
 * tokenizer_json_path (either may be NULL; "-" is stdout) atomically
 * through Writer, refusing existing files unless o->force. Progress (at
 * display level >= 3 or on a terminal) and a summary line (level >= 2) go
 * to stderr. Returns 0, or -1 with err set; nothing is left behind on
 * error. */
int wptrain_run(const WpTrainOpts *o, const char *const *inputs, int ninputs,
                const char *vocab_txt_path, const char *tokenizer_json_path, Err *err);

#endif
