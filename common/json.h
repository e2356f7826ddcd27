/* json.h - the JSON needed for JSON Lines records: writing strings, and
 * walking objects and arrays without building a tree.
 *
 * Writing: json_append_string() quotes and escapes (", \, control
 * characters; everything else stays UTF-8 as is, like Python's
 * json.dumps(ensure_ascii=False)) and repairs invalid UTF-8 with U+FFFD.
 *
 * Reading: a JsonIter walks the members of one object (or the elements of one
 * array) of a complete text span and hands out raw value spans; nested
 * values are walked by starting a new iterator on their span. Strings are
 * decoded on demand with json_decode_string().
 *
 *   JsonIter it; const char *k, *v; size_t kn, vn;
 *   json_iter_init(&it, line, len, '{');
 *   while (json_iter_next(&it, &k, &kn, &v, &vn) == 1) ...
 *   if (it.error) ... it.error names the problem, it.pos its byte offset
 */
#ifndef WB_JSON_H
#define WB_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

/* Append s[0..n) as a quoted JSON string. Returns the number of invalid
 * UTF-8 sequences replaced by U+FFFD. */
size_t json_append_string(Buf *out, const char *s, size_t n);

/* Same as json_append_string() for text already known to be valid UTF-8
 * (no repair pass; about 8 bytes per step). */
void json_append_string_utf8(Buf *out, const char *s, size_t n);

/* Append s[0..n) as a quoted JSON string the way Python's json.dumps() does
 * by default (ensure_ascii): every non-ASCII character as \uXXXX (lower-case
 * hex, surrogate pairs above U+FFFF). s must be valid UTF-8; invalid bytes
 * are written as \ufffd. */
void json_append_string_ascii(Buf *out, const char *s, size_t n);

typedef struct JsonIter {
    const char *base; /* start of the whole text, for offsets */
    const char *p, *end;
    char kind; /* '{' object or '[' array */
    int count;
    const char *error; /* static message, NULL if fine */
    size_t pos;        /* byte offset of the error in the text */
} JsonIter;

/* Start walking the object ('{') or array ('[') that text[0..n) holds
 * (leading/trailing whitespace allowed, and a UTF-8 byte order mark
 * first). Returns 0, or -1 and sets error. */
int json_iter_init(JsonIter *it, const char *text, size_t n, char kind);

/* Next member. For objects key and klen give the raw key without quotes (still
 * escaped); for arrays key is NULL. val and vlen give the raw value span (with
 * quotes for strings). Returns 1, 0 after the last member (the closing
 * bracket must end the text), -1 on a syntax error (error/pos set). */
int json_iter_next(JsonIter *it, const char **key, size_t *klen, const char **val, size_t *vlen);

/* Decode a raw string value (with quotes) into out (appended). Returns 0, or
 * -1 for a malformed string or escape. Lone surrogates become U+FFFD. */
int json_decode_string(Buf *out, const char *raw, size_t n);

/* Parse a raw integer value. Returns 0, or -1 if not an integer (a
 * leading zero, as in 012, is not JSON). A quoted integer ("12") is
 * accepted as well, as WikiExtractor writes ids. */
int json_to_i64(const char *raw, size_t n, int64_t *out);

/* Compare a raw key, as json_iter_next gives it (its quotes around it in
 * the text), with a plain name; escapes are decoded first, so
 * "hidden\u005fsize" is hidden_size. */
int json_key_is(const char *key, size_t klen, const char *name);

/* Parse a raw value that must be a JSON number (RFC 8259 6: -?int frac?
 * exp?): NaN, Infinity, +1, .5, 1., 0x10 and leading zeros are refused.
 * Returns 0 with *out, or -1. */
int json_number(const char *raw, size_t n, double *out);

/* The 1-based line of byte pos of text, for messages. */
size_t json_line(const char *text, size_t pos);

#endif
