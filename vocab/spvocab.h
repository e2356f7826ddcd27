/* spvocab.h - SentencePiece .vocab to BERT WordPiece vocab.txt.
 *
 * Reproduces sent2wordpiece.py (spyysalo/sent2wordpiece @47ba44e), which the
 * HILBERT workflow runs as `sent2wordpiece.py bert.vocab > vocab.txt`:
 *
 *   1. read "PIECE<TAB>SCORE" lines; SCORE must be -?[0-9.]+ (so "1e-05"
 *      is an error) and PIECE is everything before the last TAB; lines end
 *      at \n, \r\n or a lone \r (Python's universal newlines); a repeated
 *      piece is an error; the score is discarded, the order kept;
 *   2. drop <unk>, <s>, </s> (unless keep_special);
 *   3. a piece starting with U+2581 loses exactly that one character and
 *      becomes a word-initial token; any other piece gets "##" in front;
 *      then tokens that are empty or all whitespace (str.isspace) are
 *      dropped, so the bare piece "▁" disappears (an empty piece becomes
 *      "##" and stays, as in the original);
 *   4. unless no_special: [PAD], [unused0..U-1], [UNK], [CLS], [SEP], [MASK]
 *      go first;
 *   5. add_chars appends every character of every token (a leading "##"
 *      removed) that is not yet a token. The original uses Python set order,
 *      which changes from run to run; here the order is code-point order.
 *      Beyond the original, VOCABCONV_CHARS_BOTH takes the characters of
 *      the converted pieces (not of the special tokens) and appends each
 *      missing one both as a word-initial token and as a "##" continuation,
 *      as Hugging Face's WordPiece trainer's alphabet is: BERT's tokenizer
 *      splits punctuation into words of its own, so a comma that BPE only
 *      learned glued to a word ("##,") needs "," too, and any letter may
 *      start or continue a word; without both forms such words are [UNK].
 *
 * Beyond the original, `size` makes the list exactly that long: a longer
 * list loses tokens from its end (for a BPE vocab the rarest single
 * characters, or the characters add_chars appended), a shorter one is
 * padded with [unusedK] for K = U, U+1, ... (K from 0 with no_special).
 * Conversion can produce the same token twice (spm "▁##a" and "a" both give
 * "##a"); the list keeps both, as the original does, and the stats count
 * them, because BERT's load_vocab then maps the token to its last line.
 *
 *   VocabList pieces = {0}, out = {0};
 *   if (spm_vocab_parse(data, len, "bert.vocab", &pieces, NULL, &err)) ...
 *   if (vocab_convert(&pieces, &opts, &out, &stats, &err)) ...
 *   for (size_t i = 0; i < out.n; i++) fwrite(vocablist_at(&out, i), ...);
 *   vocablist_free(&pieces), vocablist_free(&out);
 */
#ifndef WB_SPVOCAB_H
#define WB_SPVOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/common.h"

/* An ordered list of byte strings, stored back to back in one buffer.
 * Zero-initialise; free with vocablist_free(). */
typedef struct VocabList {
    Buf text;       /* all tokens, each followed by a NUL */
    size_t *off;    /* token i starts at text.data + off[i] */
    uint32_t *len;  /* and has len[i] bytes */
    uint64_t *line; /* 1-based input line of token i (0 if synthetic) */
    size_t n, cap;
} VocabList;

/* Append token s[0..n) that came from input line `line` (0: none). */
void vocablist_push(VocabList *l, const char *s, size_t n, uint64_t line);

/* Token i as a NUL-terminated string (its length is l->len[i]). The
 * pointer is valid until the next push. */
static inline const char *vocablist_at(const VocabList *l, size_t i) {
    return l->text.data + l->off[i];
}

/* Free the list's memory and zero it. */
void vocablist_free(VocabList *l);

/* Parse SentencePiece .vocab text data[0..len) into pieces (and, when
 * scores is non-NULL, an array of pieces->n scores the caller frees with
 * free()). `name` is used in messages. Returns 0, or -1 with err set to
 * "name:line: ..." for a line that is not PIECE<TAB>SCORE, a repeated
 * piece, or invalid UTF-8. */
int spm_vocab_parse(const char *data, size_t len, const char *name, VocabList *pieces,
                    double **scores, Err *err);

typedef struct VocabConvOpts {
    int add_chars;    /* -c: add every character as a token (VOCABCONV_CHARS_*) */
    int no_special;   /* -n: no [PAD] [unusedN] [UNK] [CLS] [SEP] [MASK] */
    int keep_special; /* -k: keep <unk> <s> </s> */
    int unused;       /* -u: number of [unusedN] tokens (default 100) */
    int64_t size;     /* --size: exact number of output lines; -1: any */
} VocabConvOpts;

/* add_chars: none, the original's -c, or both forms of each character. */
enum { VOCABCONV_CHARS_NONE = 0, VOCABCONV_CHARS_ADD = 1, VOCABCONV_CHARS_BOTH = 2 };

/* The defaults of sent2wordpiece.py: 100 unused tokens, no size. */
#define VOCABCONV_DEFAULTS                                                                         \
    { 0, 0, 0, 100, -1 }

typedef struct VocabConvStats {
    size_t read;                 /* pieces read */
    size_t filtered;             /* after dropping <unk> <s> </s> */
    size_t converted;            /* after dropping empty and whitespace tokens */
    size_t extended;             /* after adding the BERT special tokens */
    size_t with_chars;           /* after add_chars */
    size_t padded;               /* [unusedK] tokens added for size */
    size_t dropped;              /* tokens dropped from the end for size */
    uint64_t first_dropped_line; /* input line of the first dropped token (0: none or synthetic) */
    char first_dropped[64];      /* its text for messages (utf8_quote: escaped, possibly cut) */
    size_t duplicates;           /* output tokens equal to an earlier one */
    char first_duplicate[64];
    size_t total; /* output tokens */
} VocabConvStats;

/* Convert SentencePiece pieces into the WordPiece token list `out` (which
 * must be empty) following the steps above; fills stats. Returns 0, or -1
 * with err set for options out of range. */
int vocab_convert(const VocabList *pieces, const VocabConvOpts *opts, VocabList *out,
                  VocabConvStats *stats, Err *err);

#endif
