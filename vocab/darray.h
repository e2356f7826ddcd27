/* darray.h - build a double-array trie in Darts-clone's unit format.
 *
 * SentencePiece stores its normalization table (precompiled_charsmap) as a
 * Darts-clone double array: 32-bit units, the root at unit 0, the child of
 * the node at unit i for byte c at unit i ^ offset(i) ^ c, where it is
 * valid only when that unit's label is c. A unit is
 *
 *   node   bits 0-7 label, bit 8 has-leaf, bits 10-31 offset (shifted
 *          left by 8 more when bit 9 is set: offsets of 2^21 and beyond
 *          must have their low 8 bits zero)
 *   value  bit 31 set, bits 0-30 the value; it sits at the child slot for
 *          label 0 (offset ^ 0) of a node whose has-leaf bit is set
 *
 * This builder merges equal subtries first (a minimal acyclic automaton,
 * built incrementally from the sorted keys as in Daciuk et al. 2000), so
 * the 225,000 nmt_nfkc keys whose tails repeat (Hangul jamo spelled three
 * ways) share their units. States are then laid out depth-first: each
 * gets the first base, among the free units of the last few 256-unit
 * blocks, at which all its labels are free; the array grows a block at a
 * time. Unused units get a value-unit filler, which never matches a label,
 * so every lookup that follows the format (textnorm.c's darts_longest_prefix,
 * Darts-clone's commonPrefixSearch, which has no bounds checks) stays
 * inside the array. Output depends only on the key set.
 *
 *   DArray da;
 *   if (darray_build(&da, n, keys, lens, values, &err)) ...
 *   int32_t v = darts_longest_prefix(da.units, da.n, s, len, &k);
 *   darray_free(&da);
 */
#ifndef WB_DARRAY_H
#define WB_DARRAY_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

typedef struct DArray {
    uint32_t *units; /* n units, host order; n is a multiple of 256 */
    size_t n;
} DArray;

/* Build the double array of n distinct keys: key i is keys[i][0..lens[i])
 * (non-empty, no NUL byte) with value values[i] (0 <= v < 2^31). Keys may
 * come in any order. Returns 0 with *da filled (pair with darray_free), or
 * -1 with err set (an empty key, a NUL byte, a repeated key, a negative
 * value, or an array beyond the 2^29-unit reach of the offsets). */
int darray_build(DArray *da, size_t n, const char *const *keys, const size_t *lens,
                 const int32_t *values, Err *err);

/* Free the units and zero *da. */
void darray_free(DArray *da);

/* Every key that is a prefix of s[0..n), shortest first, as Darts-clone's
 * commonPrefixSearch: the first max of them go to values[] and lens[]
 * (either may be NULL when max is 0); returns how many there are. Lookups
 * never leave units[0..nunits). */
size_t darray_prefixes(const uint32_t *units, size_t nunits, const char *s, size_t n,
                       int32_t *values, size_t *lens, size_t max);

#endif
