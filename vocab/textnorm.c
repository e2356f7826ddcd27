/* textnorm.c - SentencePiece text normalization: run a compiled character
 * map (Darts-clone double array + replacement strings) and the whitespace
 * rules. See textnorm.h. */
#include "vocab/textnorm.h"

#include <string.h>

#include "common/utf8.h"

struct TextNorm {
    uint32_t *units; /* the trie; NULL for the identity rule */
    size_t nunits;
    char *strs; /* replacement strings, with one extra NUL at the end */
    size_t nstrs;
    TextNormOpts o;
};

/* Darts-clone unit fields. A unit is a node (label in bits 0-7, has-leaf
 * in bit 8, offset in bits 10-31, scaled by 256 when bit 9 is set) or a
 * value (bit 31 set, value in bits 0-30). */
static inline uint32_t u_label(uint32_t u) { return u & 0x800000FFu; }
static inline int u_has_leaf(uint32_t u) { return (u >> 8) & 1; }
static inline uint32_t u_offset(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }
static inline int32_t u_value(uint32_t u) { return (int32_t)(u & 0x7FFFFFFFu); }

int32_t darts_longest_prefix(const uint32_t *units, size_t nunits, const char *key, size_t n,
                             size_t *len) {
    int32_t best = -1;
    if (!units || nunits == 0) return -1;
    size_t pos = u_offset(units[0]);
    for (size_t i = 0; i < n; i++) {
        uint32_t c = (unsigned char)key[i];
        pos ^= c;
        if (pos >= nunits) break;
        uint32_t u = units[pos];
        if (u_label(u) != c) break;
        pos ^= u_offset(u);
        if (u_has_leaf(u)) {
            if (pos >= nunits) break;
            best = u_value(units[pos]);
            *len = i + 1;
        }
    }
    return best;
}

TextNorm *textnorm_new(const void *blob, size_t n, const TextNormOpts *opts, Err *err) {
    TextNorm *sn = xcalloc(1, sizeof *sn);
    sn->o = opts ? *opts : (TextNormOpts){1, 1, 1};
    if (!blob || n == 0) return sn;
    const unsigned char *b = blob;
    if (n <= 4) {
        err_set(err, "precompiled_charsmap: %zu bytes, too short", n);
        goto fail;
    }
    uint32_t tsize =
        (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    if (tsize == 0 || tsize % 4 || tsize > n - 4) {
        err_set(err, "precompiled_charsmap: trie size %u does not fit the %zu-byte blob", tsize, n);
        goto fail;
    }
    sn->nunits = tsize / 4;
    sn->units = xmalloc(tsize);
    for (size_t i = 0; i < sn->nunits; i++) {
        const unsigned char *p = b + 4 + 4 * i;
        sn->units[i] =
            (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    }
    sn->nstrs = n - 4 - tsize;
    sn->strs = xmalloc(sn->nstrs + 1);
    memcpy(sn->strs, b + 4 + tsize, sn->nstrs);
    sn->strs[sn->nstrs] = '\0';
    return sn;
fail:
    textnorm_free(sn);
    return NULL;
}

void textnorm_free(TextNorm *sn) {
    if (!sn) return;
    free(sn->units);
    free(sn->strs);
    free(sn);
}

size_t textnorm_prefix(const TextNorm *sn, const char *s, size_t n, const char **rep,
                       size_t *rep_len) {
    size_t len = 0;
    int32_t v = darts_longest_prefix(sn->units, sn->nunits, s, n, &len);
    if (v >= 0 && (size_t)v < sn->nstrs) {
        *rep = sn->strs + v;
        *rep_len = strlen(*rep);
        return len;
    }
    uint32_t cp;
    size_t k = utf8_decode((const unsigned char *)s, n, &cp);
    if (k == 0) {
        *rep = "\xEF\xBF\xBD";
        *rep_len = 3;
        return 1;
    }
    *rep = s;
    *rep_len = k;
    return k;
}

void textnorm_normalize(const TextNorm *sn, const char *s, size_t n, Buf *out) {
    static const char kSpace[] = "\xE2\x96\x81";
    const char *rep;
    size_t rlen;
    if (sn->o.remove_extra_whitespaces) {
        while (n > 0) {
            size_t k = textnorm_prefix(sn, s, n, &rep, &rlen);
            if (!(rlen == 1 && rep[0] == ' ')) break;
            s += k;
            n -= k;
        }
    }
    if (n == 0) return;
    size_t start = out->len;
    if (sn->o.add_dummy_prefix) {
        if (sn->o.escape_whitespaces)
            buf_append(out, kSpace, 3);
        else
            buf_putc(out, ' ');
    }
    int prev_space = sn->o.remove_extra_whitespaces;
    while (n > 0) {
        size_t k = textnorm_prefix(sn, s, n, &rep, &rlen);
        if (prev_space)
            while (rlen > 0 && rep[0] == ' ')
                rep++, rlen--;
        if (rlen > 0) {
            buf_reserve(out, rlen * 3);
            for (size_t i = 0; i < rlen; i++) {
                if (rep[i] == ' ' && sn->o.escape_whitespaces)
                    buf_append(out, kSpace, 3);
                else
                    out->data[out->len++] = rep[i];
            }
            out->data[out->len] = '\0';
            prev_space = rep[rlen - 1] == ' ';
        }
        s += k;
        n -= k;
        if (!sn->o.remove_extra_whitespaces) prev_space = 0;
    }
    if (sn->o.remove_extra_whitespaces) {
        const char *sp = sn->o.escape_whitespaces ? kSpace : " ";
        size_t sl = sn->o.escape_whitespaces ? 3 : 1;
        while (out->len - start >= sl && memcmp(out->data + out->len - sl, sp, sl) == 0)
            out->len -= sl;
        out->data[out->len] = '\0';
    }
}

int textnorm_key_continues_ascii(const TextNorm *sn, unsigned char c) {
    if (!sn->units || sn->nunits == 0) return 0;
    size_t p = u_offset(sn->units[0]) ^ c;
    if (p >= sn->nunits || u_label(sn->units[p]) != c) return 0;
    size_t base = p ^ u_offset(sn->units[p]);
    for (uint32_t c2 = 1; c2 < 0x80; c2++) {
        size_t q = base ^ c2;
        if (q < sn->nunits && u_label(sn->units[q]) == c2) return 1;
    }
    return 0;
}
