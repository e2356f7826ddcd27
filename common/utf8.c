/* utf8.c - UTF-8 decoding, validation, boundary and repair helpers. */
#include "utf8.h"

#include <string.h>

size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
    if (n == 0) return 0;
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c < 0xC2) return 0;
    if (c < 0xE0) {
        if (n < 2 || (s[1] & 0xC0) != 0x80) return 0;
        *cp = ((c & 0x1Fu) << 6) | (s[1] & 0x3Fu);
        return 2;
    }
    if (c < 0xF0) {
        if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && s[1] < 0xA0) return 0; /* overlong */
        if (c == 0xED && s[1] >= 0xA0) return 0; /* surrogate */
        *cp = ((c & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
        return 3;
    }
    if (c < 0xF5) {
        if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && s[1] < 0x90) return 0; /* overlong */
        if (c == 0xF4 && s[1] >= 0x90) return 0; /* > U+10FFFF */
        *cp = ((c & 0x07u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) | (s[3] & 0x3Fu);
        return 4;
    }
    return 0;
}

size_t utf8_valid_prefix(const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        if (i + 8 <= n) { /* ASCII fast path, 8 bytes at a time */
            uint64_t v;
            memcpy(&v, p + i, 8);
            if (!(v & 0x8080808080808080ull)) {
                i += 8;
                continue;
            }
        }
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t k = utf8_decode(p + i, n - i, &cp);
        if (!k) break;
        i += k;
    }
    return i;
}

size_t utf8_boundary(const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = n, back = 0;
    while (i > 0 && back < 4 && (p[i - 1] & 0xC0) == 0x80) {
        i--;
        back++;
    }
    if (i == 0) return n;
    unsigned c = p[i - 1];
    size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (c >= 0x80 && need > back + 1) return i - 1; /* incomplete at the end */
    return n;
}

size_t utf8_bad_len(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    size_t need;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c < 0xE0) need = 2;
    else if (c >= 0xE0 && c < 0xF0) {
        need = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c < 0xF5) {
        need = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else
        return 1;
    size_t k = 1;
    if (k < n && s[k] >= lo && s[k] <= hi) {
        k++;
        while (k < need && k < n && (s[k] & 0xC0) == 0x80) k++;
    }
    return k;
}

size_t utf8_append_repair(Buf *out, const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, run = 0, bad = 0;
    buf_reserve(out, n);
    while (i < n) {
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t k = utf8_decode(p + i, n - i, &cp);
        if (k) {
            i += k;
            continue;
        }
        buf_append(out, s + run, i - run);
        buf_append(out, "\xEF\xBF\xBD", 3);
        bad++;
        i += utf8_bad_len(p + i, n - i);
        run = i;
    }
    buf_append(out, s + run, n - run);
    return bad;
}

void utf8_append_cp(Buf *out, uint32_t cp) {
    unsigned char t[4];
    buf_append(out, t, utf8_encode(cp, t));
}
