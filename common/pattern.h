/* pattern.h - user-given regular expressions (PCRE2, UTF-8 mode).
 *
 * The one home of PCRE2 in the tree: only pattern.c includes pcre2.h. A
 * pattern is compiled once with PCRE2_UTF (and PCRE2_UCP, so \w, \d and \b
 * know non-ASCII letters and digits) and then JIT-compiled; where the JIT
 * is unavailable (a platform without it, or a build with it off) matching
 * falls back to PCRE2's interpreter, with the same results, only slower.
 * A compiled Pattern is read-only, so threads may share it; each thread
 * matches with its own PatternData.
 *
 *   Err err;
 *   Pattern *p = pattern_create("^(Forrás|Jegyzetek):", &err); // NULL: err says why
 *   PatternData *d = pattern_data_create(p);
 *   int hit = pattern_find(p, d, line, len, 0);  // 1, 0, or -1 (err)
 *   pattern_data_destroy(d); pattern_destroy(p);
 */
#ifndef WB_PATTERN_H
#define WB_PATTERN_H

#include <stddef.h>

#include "common/common.h"

typedef struct Pattern Pattern;
typedef struct PatternData PatternData;

/* pattern_find flag: the subject is known to be valid UTF-8 (the caller
 * validated or repaired it), so PCRE2 skips its own check. Never pass it
 * for unchecked bytes: PCRE2's behaviour on invalid UTF-8 is then
 * undefined. */
#define PATTERN_VALID_UTF8 1u

/* Compile the NUL-terminated UTF-8 `re`. Returns NULL and fills err with
 * PCRE2's message and the offset (in bytes) where it stopped, as
 * "bad pattern 'RE': MESSAGE at offset N", when it does not compile.
 * Pair with pattern_destroy(). */
Pattern *pattern_create(const char *re, Err *err);

void pattern_destroy(Pattern *p);

/* The source text of p, as given to pattern_create. */
const char *pattern_source(const Pattern *p);

/* Nonzero when p runs JIT-compiled code. */
int pattern_jit(const Pattern *p);

/* Per-thread match state for p; freed with pattern_data_destroy(). Dies on
 * out-of-memory, as xmalloc does. */
PatternData *pattern_data_create(const Pattern *p);

void pattern_data_destroy(PatternData *d);

/* Search s[0..n) (no NUL needed; embedded NULs are ordinary characters)
 * for a match of p anywhere. Returns 1 on a match, 0 on none, and -1 with
 * err filled when the subject is not valid UTF-8 (without
 * PATTERN_VALID_UTF8) or matching hit PCRE2's match or depth limit. */
int pattern_find(const Pattern *p, PatternData *d, const char *s, size_t n, unsigned flags,
                 Err *err);

#endif
