/* buf.h - growable byte buffer (header-only).
 *
 * A Buf owns a heap block that doubles as it grows; data is always
 * NUL-terminated after len so that it can be handed to C string functions,
 * but every user must go by len because wikitext may contain NUL bytes.
 * Allocation failure is fatal (xrealloc reports the size and exits).
 *
 *   Buf b = {0};
 *   buf_append(&b, "abc", 3);
 *   buf_putc(&b, '\n');
 *   fwrite(b.data, 1, b.len, stdout);
 *   buf_free(&b);
 */
#ifndef WB_BUF_H
#define WB_BUF_H

#include <stddef.h>
#include <string.h>

#include "common/common.h"

typedef struct Buf {
    char *data;
    size_t len;
    size_t cap;
} Buf;

/* Make room for at least `extra` more bytes plus the terminating NUL. */
static inline void buf_reserve(Buf *b, size_t extra) {
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    b->data = (char *)xrealloc(b->data, cap);
    b->cap = cap;
    b->data[b->len] = '\0';
}

/* Append n bytes from p (p may be NULL when n is 0). */
static inline void buf_append(Buf *b, const void *p, size_t n) {
    buf_reserve(b, n);
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

/* Append a NUL-terminated string (without its NUL). */
static inline void buf_puts(Buf *b, const char *s) { buf_append(b, s, strlen(s)); }

/* Append one byte. */
static inline void buf_putc(Buf *b, char c) {
    buf_reserve(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}

/* Empty the buffer but keep its memory for reuse. */
static inline void buf_clear(Buf *b) {
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}

/* Release the memory; the Buf is empty and reusable afterwards. */
static inline void buf_free(Buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

#endif
