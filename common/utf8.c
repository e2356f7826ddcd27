/* utf8.c - UTF-8 decoding, validation, boundary and repair helpers. */
#include "common/utf8.h"

#include <stdio.h>
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
        if (c == 0xE0 && s[1] < 0xA0) return 0;  /* overlong */
        if (c == 0xED && s[1] >= 0xA0) return 0; /* surrogate */
        *cp = ((c & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
        return 3;
    }
    if (c < 0xF5) {
        if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && s[1] < 0x90) return 0;  /* overlong */
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
    if (c >= 0xC2 && c < 0xE0)
        need = 2;
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
        while (k < need && k < n && (s[k] & 0xC0) == 0x80)
            k++;
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

/* NUL bytes of p[0..len) counted by position modulo `stride` into z. */
static void count_nuls(const unsigned char *p, size_t len, size_t stride, size_t *z) {
    for (size_t i = 0; i < stride; i++)
        z[i] = 0;
    for (size_t i = 0; i < len; i++)
        z[i % stride] += p[i] == 0;
}

const char *utf8_wide_encoding(const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    if (n >= 4 && ((p[0] == 0xFF && p[1] == 0xFE && p[2] == 0 && p[3] == 0) ||
                   (p[0] == 0 && p[1] == 0 && p[2] == 0xFE && p[3] == 0xFF)))
        return "UTF-32";
    if (n >= 2 && ((p[0] == 0xFF && p[1] == 0xFE) || (p[0] == 0xFE && p[1] == 0xFF)))
        return "UTF-16";
    if (n > UTF8_SNIFF_BYTES) n = UTF8_SNIFF_BYTES;
    size_t z[4], u = n / 4;
    /* ASCII in UTF-32: three NULs in every unit, little- or big-endian */
    count_nuls(p, u * 4, 4, z);
    if (u && z[1] == u && z[2] == u && ((z[3] == u && z[0] < u) || (z[0] == u && z[3] < u)))
        return "UTF-32";
    /* ASCII in UTF-16: the high byte of (at least half of) the units is NUL,
     * the low byte never */
    u = n / 2;
    count_nuls(p, u * 2, 2, z);
    if (u && ((z[1] * 2 >= u && z[0] == 0) || (z[0] * 2 >= u && z[1] == 0))) return "UTF-16";
    return NULL;
}

int utf8_refuse_wide(const char *name, const char *s, size_t n, Err *err) {
    const char *enc = utf8_wide_encoding(s, n);
    if (!enc) return 0;
    return err_set(err, "%s: %s text (convert it to UTF-8, e.g. iconv -f %s -t UTF-8)", name, enc,
                   enc);
}

const char *utf8_quote(char *out, size_t cap, const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0, room = cap - 4; /* keep room for "..." and the NUL */
    for (size_t i = 0; i < n;) {
        char piece[8];
        size_t plen;
        uint32_t cp = 0;
        size_t k = utf8_decode(p + i, n - i, &cp);
        if (k && (cp >= 0x20 || cp == '\t') && cp != 0x7F && !(cp >= 0x80 && cp < 0xA0) &&
            cp != '\\') {
            memcpy(piece, p + i, k);
            plen = k;
        } else if (k == 1 && cp == '\\') {
            memcpy(piece, "\\\\", 2);
            plen = 2;
        } else {
            k = 1;
            plen = (size_t)snprintf(piece, sizeof piece, "\\x%02X", p[i]);
        }
        if (o + plen > room) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        memcpy(out + o, piece, plen);
        o += plen;
        i += k;
    }
    out[o] = '\0';
    return out;
}
