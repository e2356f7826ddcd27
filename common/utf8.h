/* utf8.h - UTF-8 validation and repair.
 *
 * Decoding follows RFC 3629: overlong forms, surrogates (U+D800..DFFF) and
 * code points above U+10FFFF are invalid. Repair replaces each maximal
 * invalid subsequence with U+FFFD, the "substitution of maximal subparts"
 * practice of Unicode chapter 3 (what Python's errors="replace" does).
 */
#ifndef WB_UTF8_H
#define WB_UTF8_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/common.h"

/* Decode one code point at s (n bytes available). Returns its length 1..4
 * and sets *cp, or returns 0 if the bytes at s are not a valid sequence. */
size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/* Length of the longest valid UTF-8 prefix of s[0..n). */
size_t utf8_valid_prefix(const char *s, size_t n);

/* Length of the prefix of s[0..n) that ends on a character boundary: drops
 * an incomplete (but so far valid) sequence at the very end, for chunked
 * readers that must not split a character. */
size_t utf8_boundary(const char *s, size_t n);

/* Length (>= 1) of the maximal ill-formed subpart at s, for a position where
 * utf8_decode() returned 0: the bytes that one U+FFFD replaces. */
size_t utf8_bad_len(const unsigned char *s, size_t n);

/* Append s[0..n) to out with invalid sequences replaced by U+FFFD. Returns
 * the number of replacements made. */
size_t utf8_append_repair(Buf *out, const char *s, size_t n);

/* Write code point cp (<= 0x10FFFF) as UTF-8 at p, which has room for 4
 * bytes; returns the byte count. */
static inline size_t utf8_encode(uint32_t cp, unsigned char *p) {
    if (cp < 0x80) {
        p[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        p[0] = (unsigned char)(0xC0 | (cp >> 6));
        p[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        p[0] = (unsigned char)(0xE0 | (cp >> 12));
        p[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        p[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    p[0] = (unsigned char)(0xF0 | (cp >> 18));
    p[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    p[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    p[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Bytes utf8_wide_encoding() looks at (it decides from fewer at the end of
 * a short input). */
#define UTF8_SNIFF_BYTES 64

/* Whether text starting with s[0..n) is UTF-16 or UTF-32 rather than UTF-8:
 * a UTF-32 or UTF-16 byte order mark, or NUL bytes in every other (UTF-16)
 * or three of four (UTF-32) places of the first UTF8_SNIFF_BYTES bytes, as
 * ASCII text in those encodings has. Returns "UTF-16", "UTF-32" or NULL
 * (UTF-8 text, with or without a BOM, or too few bytes to tell). */
const char *utf8_wide_encoding(const char *s, size_t n);

/* Refuse text whose first bytes s[0..n) are UTF-16 or UTF-32: returns -1
 * with err "NAME: UTF-16 text (convert it to UTF-8, e.g. iconv -f UTF-16 -t
 * UTF-8)", else 0. Readers call it once per input, on its first bytes. */
int utf8_refuse_wide(const char *name, const char *s, size_t n, Err *err);

/* Room for utf8_quote() output that messages use: about 60 characters. */
#define UTF8_QUOTE_CAP 64

/* Copy input text s[0..n) into out[cap] (cap >= 8) for quoting in a message:
 * printable characters and tabs as they are, a backslash as \\, every
 * other byte (control characters such as ESC, DEL, C1 controls, invalid
 * UTF-8) as \xNN, so a message stays one line that cannot drive a
 * terminal. Text that does not fit is cut on a character boundary and ends
 * in "...". Returns out. */
const char *utf8_quote(char *out, size_t cap, const char *s, size_t n);

/* Append code point cp (must be <= 0x10FFFF) as UTF-8. */
void utf8_append_cp(Buf *out, uint32_t cp);

#endif
