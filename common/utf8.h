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

#include "buf.h"

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

/* Append code point cp (must be <= 0x10FFFF) as UTF-8. */
void utf8_append_cp(Buf *out, uint32_t cp);

#endif
