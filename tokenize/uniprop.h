/* uniprop.h - Unicode character properties, from ICU.
 *
 * The only file that includes ICU headers is uniprop.c. The tokenize stage
 * asks these questions per code point in its inner loops, so the BMP answers
 * are precomputed into one byte-per-code-point table on first use (thread
 * safe); code points above U+FFFF go to ICU directly.
 *
 * The predicates follow Python's str methods, because the workflows we
 * replace are defined by them (filterdocs.py's ratios and word regex):
 *
 *   UNI_ALPHA    str.isalpha    general category L*
 *   UNI_DECIMAL  str.isdecimal  Numeric_Type=Decimal (= category Nd); re's \d
 *   UNI_DIGIT    str.isdigit    Numeric_Type Decimal or Digit
 *   UNI_NUMERIC  str.isnumeric  Numeric_Type Decimal, Digit or Numeric
 *   UNI_UPPER    str.isupper    the Uppercase property (one character)
 *   UNI_LOWER    str.islower    the Lowercase property (one character)
 *   UNI_SPACE    str.isspace    bidi class WS, B or S, or category Zs
 *   UNI_WORD     re's \w        alpha or numeric, or '_'
 *
 *   if (uni_is(cp, UNI_UPPER)) ...
 */
#ifndef WB_UNIPROP_H
#define WB_UNIPROP_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

enum {
    UNI_ALPHA = 1 << 0,
    UNI_DECIMAL = 1 << 1,
    UNI_DIGIT = 1 << 2,
    UNI_NUMERIC = 1 << 3,
    UNI_UPPER = 1 << 4,
    UNI_LOWER = 1 << 5,
    UNI_SPACE = 1 << 6,
    UNI_WORD = 1 << 7,
};

/* The property bits of code point cp (0 for cp > U+10FFFF). */
unsigned uni_props(uint32_t cp);

/* Nonzero if cp has any of the property bits in `mask`. */
static inline int uni_is(uint32_t cp, unsigned mask) { return (uni_props(cp) & mask) != 0; }

/* Simple (one-to-one) case mappings, as ICU's u_tolower / u_toupper. */
uint32_t uni_tolower(uint32_t cp);
uint32_t uni_toupper(uint32_t cp);

/* Append the full upper-case form of cp (Python's str.upper on one
 * character, root locale; may be several code points, e.g. ß -> SS). */
void uni_append_upper(Buf *out, uint32_t cp);

/* The ICU version string ("72.1"), for --version lines. */
const char *uni_icu_version(void);

#endif
