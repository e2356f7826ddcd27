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

#include "common/buf.h"

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

/* General categories, numbered as ICU's UCharCategory (Cn is 0). */
enum {
    UNI_GC_CN,
    UNI_GC_LU,
    UNI_GC_LL,
    UNI_GC_LT,
    UNI_GC_LM,
    UNI_GC_LO,
    UNI_GC_MN,
    UNI_GC_ME,
    UNI_GC_MC,
    UNI_GC_ND,
    UNI_GC_NL,
    UNI_GC_NO,
    UNI_GC_ZS,
    UNI_GC_ZL,
    UNI_GC_ZP,
    UNI_GC_CC,
    UNI_GC_CF,
    UNI_GC_CO,
    UNI_GC_CS,
    UNI_GC_PD,
    UNI_GC_PS,
    UNI_GC_PE,
    UNI_GC_PC,
    UNI_GC_PO,
    UNI_GC_SM,
    UNI_GC_SC,
    UNI_GC_SK,
    UNI_GC_SO,
    UNI_GC_PI,
    UNI_GC_PF,
};

/* General category of cp (UNI_GC_*; UNI_GC_CN for cp > U+10FFFF), as
 * Python's unicodedata.category. BMP answers come from a table. */
unsigned uni_gc(uint32_t cp);

/* Nonzero if general category g is one of C* (Cc Cf Co Cs Cn) or P*. */
static inline int uni_gc_is_c(unsigned g) {
    return g == UNI_GC_CN || (g >= UNI_GC_CC && g <= UNI_GC_CS);
}
static inline int uni_gc_is_punct(unsigned g) {
    return (g >= UNI_GC_PD && g <= UNI_GC_PO) || g == UNI_GC_PI || g == UNI_GC_PF;
}

/* Append the full lower-case form of the valid UTF-8 string s[0..n)
 * (Python's str.lower: root locale, SpecialCasing included, e.g.
 * U+0130 -> "i" U+0307, and the Final_Sigma rule applied over the whole
 * string). Returns 0, or -1 if ICU failed (out unchanged). */
int uni_append_lower(Buf *out, const char *s, size_t n);

/* Append the canonical decomposition (NFD, Python's
 * unicodedata.normalize('NFD', s)) of the valid UTF-8 string s[0..n).
 * Returns 0, or -1 if ICU failed (out unchanged). */
int uni_append_nfd(Buf *out, const char *s, size_t n);

/* The Unicode version of ICU's tables ("15.0"), for --version lines. */
const char *uni_unicode_version(void);

/* The ICU version string ("72.1"), for --version lines. */
const char *uni_icu_version(void);

/* ---- NFKC and NFKD of code-point sequences ---- */

/* The compatibility decomposition (NFKD) of the one code point cp, when it
 * has one: written to out[0..cap), and its length returned (NFKD output of
 * one code point is at most 18 long). Returns 0 when cp has no
 * decomposition, i.e. NFKD and NFKC of cp are cp itself (the fast answer
 * for almost every code point), and -1 when ICU failed or cap is too
 * small. */
int uni_nfkd_cp(uint32_t cp, uint32_t *out, size_t cap);

/* The smallest code point >= cp that has a decomposition mapping
 * (Decomposition_Type other than None), or 0x110000 when none is left: a
 * way to visit the ~17,000 code points that NFKD changes without asking
 * about the other million one by one. */
uint32_t uni_next_decomposable(uint32_t cp);

/* NFKC (uni_nfkc) or NFKD (uni_nfkd) of the code points in[0..n): the
 * result goes to out[0..cap) and its length is returned. A length above
 * cap means out was too small (its contents are then undefined; call again
 * with at least that much room). Returns -1 when ICU failed or in holds a
 * surrogate or a value above U+10FFFF. */
long uni_nfkc(const uint32_t *in, size_t n, uint32_t *out, size_t cap);
long uni_nfkd(const uint32_t *in, size_t n, uint32_t *out, size_t cap);

/* Script codes, numbered as ICU's UScriptCode (the values are part of
 * ICU's stable API; uniprop.c checks them at compile time). Only the ones
 * callers name are listed; uni_script() returns any code ICU knows. */
enum {
    UNI_SC_COMMON = 0,
    UNI_SC_INHERITED = 1,
    UNI_SC_ARABIC = 2,
    UNI_SC_ARMENIAN = 3,
    UNI_SC_DEVANAGARI = 10,
    UNI_SC_HAN = 17,
    UNI_SC_HIRAGANA = 20,
    UNI_SC_KATAKANA = 22,
    UNI_SC_LATIN = 25,
    UNI_SC_UNKNOWN = 103,
};

/* The Unicode Script property of cp (ICU's uscript_getScript: the
 * Scripts.txt value, not Script_Extensions): UNI_SC_COMMON, UNI_SC_LATIN,
 * ...; UNI_SC_UNKNOWN for unassigned code points and cp > U+10FFFF. BMP
 * answers come from a table built on first use. */
int uni_script(uint32_t cp);

/* The Unicode version that assigned cp (DerivedAge), as major * 256 +
 * minor: 0x0901 for 9.1; 0 for an unassigned code point. */
unsigned uni_age(uint32_t cp);

#endif
