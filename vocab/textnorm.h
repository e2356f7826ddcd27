/* textnorm.h - SentencePiece text normalization (the Normalizer of a model).
 *
 * SentencePiece normalizes every sentence before training and encoding:
 *
 *   1. a compiled character map (NormalizerSpec.precompiled_charsmap) is
 *      applied left to right, each time replacing the longest input prefix
 *      the map knows (nmt_nfkc: NFKC plus the nmt rules that delete
 *      control characters and turn odd spaces into ' '); bytes that are
 *      not UTF-8 become U+FFFD one byte at a time; with no map (the
 *      "identity" rule) characters pass unchanged;
 *   2. remove_extra_whitespaces: leading and trailing spaces are dropped
 *      and runs of spaces (after mapping) collapse into one;
 *   3. add_dummy_prefix: a space is put in front;
 *   4. escape_whitespaces: every space is written as U+2581 ("▁").
 *
 * The compiled map is a 4-byte little-endian size, a Darts-clone
 * double-array trie of that many bytes (32-bit units) whose values are
 * byte offsets into the rest of the blob: NUL-terminated replacement
 * strings. This module executes such a blob (whether taken from a model
 * spm_train wrote or built by charsmap.c) and validates it on load, so a
 * damaged blob is an error, never an out-of-bounds read.
 *
 *   TextNorm *sn = textnorm_new(blob, blob_len, NULL, &err);
 *   textnorm_normalize(sn, line, len, &out);      // "▁Hello▁world"
 *   textnorm_free(sn);
 */
#ifndef WB_TEXTNORM_H
#define WB_TEXTNORM_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/common.h"

/* The NormalizerSpec switches (all true in SentencePiece's defaults). */
typedef struct TextNormOpts {
    int add_dummy_prefix;
    int remove_extra_whitespaces;
    int escape_whitespaces;
} TextNormOpts;

typedef struct TextNorm TextNorm;

/* A normalizer running the compiled map blob[0..n) (copied; NULL or n = 0
 * for the identity rule) with opts (NULL = all true). Returns NULL with
 * err set when the blob is malformed (sizes, offsets or trie units out of
 * range). Pair with textnorm_free(). */
TextNorm *textnorm_new(const void *blob, size_t n, const TextNormOpts *opts, Err *err);
void textnorm_free(TextNorm *sn);

/* Append the normalized form of s[0..n) to out, exactly as
 * SentencePiece's Normalizer::Normalize does with the same spec (the
 * result is empty when s holds only whitespace). */
void textnorm_normalize(const TextNorm *sn, const char *s, size_t n, Buf *out);

/* Apply only the character map to the longest known prefix of s[0..n)
 * (n > 0): sets *rep and *rep_len to its replacement (which may be empty) and
 * returns the number of input bytes consumed (>= 1). Unknown characters
 * map to themselves, an invalid UTF-8 byte to U+FFFD. */
size_t textnorm_prefix(const TextNorm *sn, const char *s, size_t n, const char **rep,
                       size_t *rep_len);

/* Look key[0..n) up in a Darts-clone double array units[0..nunits):
 * the value of the longest key that is a prefix of it, with *len set to
 * that key's length; -1 when none is. Exposed for the trie builder's
 * tests. */
int32_t darts_longest_prefix(const uint32_t *units, size_t nunits, const char *key, size_t n,
                             size_t *len);

/* Nonzero if some key of the compiled map is longer than one byte, starts
 * with byte c and continues with a byte below 0x80: the test a caller needs
 * before copying an ASCII character c that is followed by ASCII without
 * asking the map. 0 for the identity rule. */
int textnorm_key_continues_ascii(const TextNorm *sn, unsigned char c);

#endif
