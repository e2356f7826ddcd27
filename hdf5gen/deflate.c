/* deflate.c - run-length + Huffman deflate encoder in zlib format; see
 * deflate.h. Written from RFC 1950 (zlib container) and RFC 1951 (deflate).
 *
 * Pass 1 turns the input into tokens (a literal byte, or a run of >= 3
 * copies of the previous byte: a match at distance 1) and counts symbols.
 * Code lengths come from a Huffman tree (frequencies halved and the tree
 * rebuilt while it is deeper than deflate allows), which is always a
 * complete code, as inflate requires. The exact output size is known
 * before any bit is written; when stored blocks are smaller they are used.
 */
#include "hdf5gen/deflate.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/common.h"

enum { NLITLEN = 286, NDIST = 30, NCL = 19, MAXBITS = 15, MAXCLBITS = 7 };

/* length 3..258 -> symbol 257..285, extra bit count, extra value */
static uint16_t len_sym[259];
static uint8_t len_ebits[259];
static uint16_t len_eval[259];

static const uint8_t cl_order[NCL] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                      11, 4,  12, 3, 13, 2, 14, 1, 15};

static void init_tables(void) {
    static const uint16_t base[29] = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                      15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                      67, 83, 99, 115, 131, 163, 195, 227, 258};
    static const uint8_t ebits[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    for (int s = 0; s < 29; s++) {
        int hi = s == 28 ? 258 : base[s] + (1 << ebits[s]) - 1;
        if (s == 27) hi = 257; /* 227 + 31 = 258 belongs to symbol 285 */
        for (int l = base[s]; l <= hi && l <= 258; l++) {
            len_sym[l] = (uint16_t)(257 + s);
            len_ebits[l] = ebits[s];
            len_eval[l] = (uint16_t)(l - base[s]);
        }
    }
}

/* Adler-32 over blocks of 16-byte steps: with T the byte sum of a step and
 * W = sum (16 - i) x[i] its weighted sum, N steps from (a, b) give
 *   a += sum T,  b += 16 N a + 16 sum_(steps) (T of the steps before) + sum W.
 * With SSE2: psadbw for T, pmaddwd for W; 256 steps keep every 32-bit lane
 * small. Elsewhere a byte at a time. */
uint32_t dfl_adler32(uint32_t adler, const void *buf, size_t n) {
    const uint8_t *p = buf;
    uint64_t a = adler & 0xffff, b = adler >> 16;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    const __m128i w0 = _mm_setr_epi16(16, 15, 14, 13, 12, 11, 10, 9),
                  w1 = _mm_setr_epi16(8, 7, 6, 5, 4, 3, 2, 1);
    while (n >= 16) {
        size_t steps = n / 16 < 256 ? n / 16 : 256;
        __m128i T = zero, P = zero, W = zero;
        for (size_t k = 0; k < steps; k++, p += 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)p);
            P = _mm_add_epi32(P, T);
            T = _mm_add_epi32(T, _mm_sad_epu8(x, zero));
            W = _mm_add_epi32(W, _mm_madd_epi16(_mm_unpacklo_epi8(x, zero), w0));
            W = _mm_add_epi32(W, _mm_madd_epi16(_mm_unpackhi_epi8(x, zero), w1));
        }
        uint32_t t[4], q[4], w[4];
        _mm_storeu_si128((__m128i *)t, T);
        _mm_storeu_si128((__m128i *)q, P);
        _mm_storeu_si128((__m128i *)w, W);
        uint64_t sum_t = (uint64_t)t[0] + t[2], sum_p = (uint64_t)q[0] + q[2];
        uint64_t sum_w = (uint64_t)w[0] + w[1] + w[2] + w[3];
        b = (b + 16 * steps * a + 16 * sum_p + sum_w) % 65521;
        a = (a + sum_t) % 65521;
        n -= steps * 16;
    }
#endif
    while (n) {
        size_t k = n < 5552 ? n : 5552; /* the most bytes before a 32-bit b could overflow */
        n -= k;
        while (k--)
            a += *p++, b += a;
        a %= 65521;
        b %= 65521;
    }
    return (uint32_t)b << 16 | (uint32_t)a;
}

size_t dfl_bound(size_t n) { return 2 + n + 5 * (n / 65535 + 1) + 4 + 8; }

void dfl_scratch_free(DflScratch *sc) {
    free(sc->tok);
    sc->tok = NULL;
    sc->cap = 0;
}

/* ---- Huffman code lengths ---- */

typedef struct Node {
    uint32_t freq;
    int16_t parent;
} Node;

/* Sort keys (freq << 9 | symbol) ascending: LSD radix, 8 bits a pass,
 * as many passes as the largest key needs (a few hundred keys per call,
 * where qsort's calls through a pointer cost more than the work). */
static void sort_keys(uint64_t *k, int m) {
    uint64_t tmp[NLITLEN], *a = k, *b = tmp, max = 0;
    for (int i = 0; i < m; i++)
        max |= k[i];
    for (int shift = 0; shift < 64 && (max >> shift); shift += 8) {
        uint32_t count[257] = {0};
        for (int i = 0; i < m; i++)
            count[((a[i] >> shift) & 0xff) + 1]++;
        for (int d = 0; d < 256; d++)
            count[d + 1] += count[d];
        for (int i = 0; i < m; i++)
            b[count[(a[i] >> shift) & 0xff]++] = a[i];
        uint64_t *t = a;
        a = b, b = t;
    }
    if (a != k) memcpy(k, a, (size_t)m * sizeof *k);
}

/* Code lengths (<= limit) for freq[0..n); a symbol with frequency 0 gets 0.
 * Fewer than two used symbols are padded to two, so the code is complete. */
static void build_lengths(const uint32_t *freq_in, int n, int limit, uint8_t *len) {
    uint32_t freq[NLITLEN];
    memcpy(freq, freq_in, (size_t)n * sizeof *freq);
    int used = 0;
    for (int i = 0; i < n; i++)
        used += freq[i] != 0;
    for (int i = 0; used < 2 && i < n; i++)
        if (!freq[i]) freq[i] = 1, used++;
    for (;;) {
        uint64_t leaf[NLITLEN]; /* (frequency, symbol), sorted by both */
        int m = 0;
        for (int i = 0; i < n; i++)
            if (freq[i]) leaf[m++] = (uint64_t)freq[i] << 9 | (uint64_t)i;
        if (m < 2) { /* n < 2: nothing to build */
            memset(len, 0, (size_t)n);
            if (m) len[leaf[0] & 511] = 1;
            return;
        }
        sort_keys(leaf, m);
        /* two queues: sorted leaves (nodes 0..m-1), internal nodes in creation order */
        Node node[2 * NLITLEN];
        for (int i = 0; i < m; i++)
            node[i].freq = (uint32_t)(leaf[i] >> 9), node[i].parent = -1;
        int li = 0, ii = m, next = m;
        for (int k = 0; k < m - 1; k++) {
            int pick[2];
            for (int t = 0; t < 2; t++) {
                if (li < m && (ii >= next || node[li].freq <= node[ii].freq))
                    pick[t] = li++;
                else
                    pick[t] = ii++;
            }
            node[next].freq = node[pick[0]].freq + node[pick[1]].freq;
            node[next].parent = -1;
            node[pick[0]].parent = node[pick[1]].parent = (int16_t)next;
            next++;
        }
        /* depths: parents come after children, so walk from the root down */
        uint8_t depth[2 * NLITLEN];
        depth[next - 1] = 0;
        for (int i = next - 2; i >= 0; i--)
            depth[i] = (uint8_t)(depth[node[i].parent] + 1);
        int maxd = 0;
        for (int i = 0; i < m; i++)
            maxd = depth[i] > maxd ? depth[i] : maxd;
        if (maxd <= limit) {
            memset(len, 0, (size_t)n);
            for (int i = 0; i < m; i++)
                len[leaf[i] & 511] = depth[i];
            return;
        }
        for (int i = 0; i < n; i++)
            if (freq[i]) freq[i] = (freq[i] >> 1) | 1; /* flatten and retry */
    }
}

/* Canonical codes, bit-reversed for LSB-first output. */
static void build_codes(const uint8_t *len, int n, uint16_t *code) {
    uint16_t count[MAXBITS + 1] = {0}, next[MAXBITS + 2];
    for (int i = 0; i < n; i++)
        count[len[i]]++;
    count[0] = 0;
    uint16_t c = 0;
    for (int b = 1; b <= MAXBITS; b++) {
        c = (uint16_t)((c + count[b - 1]) << 1);
        next[b] = c;
    }
    for (int i = 0; i < n; i++) {
        if (!len[i]) {
            code[i] = 0;
            continue;
        }
        uint16_t v = next[len[i]]++, r = 0;
        for (int b = 0; b < len[i]; b++)
            r = (uint16_t)(r << 1 | ((v >> b) & 1));
        code[i] = r;
    }
}

/* The run-length encoding of the code lengths (symbols 0..18 with extra
 * bits), as (symbol | extra << 5 | extra bits << 12) items. */
static int rle_lengths(const uint8_t *l, int n, uint32_t *items, uint32_t *clfreq) {
    int k = 0;
    for (int i = 0; i < n;) {
        int v = l[i], r = 1;
        while (i + r < n && l[i + r] == v)
            r++;
        int left = r;
        if (v == 0) {
            while (left >= 11) {
                int t = left > 138 ? 138 : left;
                items[k++] = 18u | (uint32_t)(t - 11) << 5 | 7u << 12;
                clfreq[18]++;
                left -= t;
            }
            if (left >= 3) {
                items[k++] = 17u | (uint32_t)(left - 3) << 5 | 3u << 12;
                clfreq[17]++;
                left = 0;
            }
        } else {
            items[k++] = (uint32_t)v; /* the value once, then repeats of it */
            clfreq[v]++;
            left--;
            while (left >= 3) {
                int t = left > 6 ? 6 : left;
                items[k++] = 16u | (uint32_t)(t - 3) << 5 | 2u << 12;
                clfreq[16]++;
                left -= t;
            }
        }
        while (left-- > 0) {
            items[k++] = (uint32_t)v;
            clfreq[v]++;
        }
        i += r;
    }
    return k;
}

static inline uint64_t load64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Length of the run of bytes equal to b starting at src[i], at most
 * lim - i. */
static size_t run_end(const uint8_t *src, size_t i, size_t lim, uint8_t b) {
    uint64_t rep = 0x0101010101010101ull * b;
    size_t j = i;
    while (j + 8 <= lim) {
        uint64_t x = load64(src + j) ^ rep;
        if (x) return j + ((size_t)__builtin_ctzll(x) >> 3);
        j += 8;
    }
    while (j < lim && src[j] == b)
        j++;
    return j;
}

/* Byte histogram of src[a..b) added to freq (four interleaved tables so
 * that repeated bytes do not serialise on one counter). */
static void histogram(const uint8_t *src, size_t a, size_t b, uint32_t h[4][256]) {
    size_t j = a;
    for (; j + 4 <= b; j += 4) {
        h[0][src[j]]++;
        h[1][src[j + 1]]++;
        h[2][src[j + 2]]++;
        h[3][src[j + 3]]++;
    }
    for (; j < b; j++)
        h[0][src[j]]++;
}

size_t dfl_compress(const void *src_, size_t n, void *dst_, size_t cap, DflScratch *sc) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_tables);
    const uint8_t *src = src_;
    uint8_t *dst = dst_;
    if (cap < 6) return 0;
    /* pass 1: runs of >= 3 copies of the previous byte, as (position,
     * length) pairs; histograms of the literals between them */
    size_t nrun = 0;
    uint32_t h[4][256];
    memset(h, 0, sizeof h);
    uint32_t lfreq[NLITLEN] = {0};
    size_t lit = 0; /* start of the pending literals */
    const uint64_t lo7 = 0x7f7f7f7f7f7f7f7full;
    for (size_t p = 0; p + 9 <= n;) {
        /* z: high bit of byte k set when src[p+k] == src[p+k+1]; a run
         * starts after p+k when bytes k, k+1, k+2 of z are all set */
        uint64_t x = load64(src + p) ^ load64(src + p + 1);
        uint64_t z = ~(((x & lo7) + lo7) | x | lo7);
        uint64_t t = z & (z >> 8) & (z >> 16) & 0x0000808080808080ull;
        if (!t) {
            p += 6;
            continue;
        }
        size_t i = p + ((size_t)__builtin_ctzll(t) >> 3) + 1; /* first byte of the run */
        size_t j = run_end(src, i, n - i < 258 ? n : i + 258, src[i - 1]);
        if (sc->cap <= nrun) {
            sc->cap = sc->cap ? 2 * sc->cap : 1024;
            sc->tok = xrealloc(sc->tok, sc->cap * sizeof *sc->tok);
        }
        sc->tok[nrun++] = (uint32_t)i; /* run positions; lengths found again in pass 2 */
        histogram(src, lit, i, h);
        lfreq[len_sym[j - i]]++;
        lit = p = j;
    }
    /* the tail (fewer than 9 bytes after the last word): runs as above */
    for (size_t i = lit > 0 ? lit : 1; i + 3 <= n; i++) {
        if (src[i] == src[i - 1] && src[i + 1] == src[i - 1] && src[i + 2] == src[i - 1] &&
            i >= lit) {
            size_t j = run_end(src, i, n - i < 258 ? n : i + 258, src[i - 1]);
            if (sc->cap <= nrun) {
                sc->cap = sc->cap ? 2 * sc->cap : 1024;
                sc->tok = xrealloc(sc->tok, sc->cap * sizeof *sc->tok);
            }
            sc->tok[nrun++] = (uint32_t)i;
            histogram(src, lit, i, h);
            lfreq[len_sym[j - i]]++;
            lit = j;
            i = j - 1;
        }
    }
    histogram(src, lit, n, h);
    for (int k = 0; k < 256; k++)
        lfreq[k] = h[0][k] + h[1][k] + h[2][k] + h[3][k];
    lfreq[256] = 1;

    uint8_t llen[NLITLEN + NDIST];
    build_lengths(lfreq, NLITLEN, MAXBITS, llen);
    int nlit = NLITLEN;
    while (nlit > 257 && !llen[nlit - 1])
        nlit--;
    /* distances: only code 0 (distance 1) is used; codes 0 and 1 of one bit
     * make a complete code */
    int ndist = 2;
    uint8_t *dlen = llen + nlit;
    dlen[0] = dlen[1] = 1;
    uint32_t items[NLITLEN + NDIST], clfreq[NCL] = {0};
    int nitems = rle_lengths(llen, nlit + ndist, items, clfreq);
    uint8_t cllen[NCL];
    build_lengths(clfreq, NCL, MAXCLBITS, cllen);
    int ncl = NCL;
    while (ncl > 4 && !cllen[cl_order[ncl - 1]])
        ncl--;

    /* exact size of the dynamic block, in bits */
    uint64_t bits = 3 + 5 + 5 + 4 + 3 * (uint64_t)ncl;
    for (int i = 0; i < nitems; i++)
        bits += cllen[items[i] & 31] + (items[i] >> 12);
    for (int k = 0; k < 256; k++)
        bits += (uint64_t)lfreq[k] * llen[k];
    bits += llen[256];
    for (int sym = 257; sym < NLITLEN; sym++) { /* length code + extra bits + one distance bit */
        if (!lfreq[sym]) continue;
        static const uint8_t eb[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                       2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
        bits += (uint64_t)lfreq[sym] * (llen[sym] + eb[sym - 257] + 1);
    }
    size_t dyn_bytes = (size_t)((bits + 7) / 8);
    size_t nstored = n / 65535 + 1;
    size_t stored_bytes = n + 5 * nstored;

    dst[0] = 0x78; /* deflate, 32K window */
    dst[1] = 0x01; /* FLEVEL 0 (fastest); 0x7801 % 31 == 0 */
    uint8_t *o;
    if (dyn_bytes <= stored_bytes) {
        if (cap < 2 + dyn_bytes + 4 + 8) return 0; /* + 8: the literal loop's whole-word stores */
        uint16_t lcode[NLITLEN + NDIST], clcode[NCL], dcode[2];
        build_codes(llen, nlit, lcode);
        build_codes(dlen, ndist, dcode);
        build_codes(cllen, NCL, clcode);
        uint32_t litc[256]; /* code | length << 16 */
        for (int k = 0; k < 256; k++)
            litc[k] = lcode[k] | (uint32_t)llen[k] << 16;
        /* the exact size is known, so whole 32-bit words never pass it */
        o = dst + 2;
        uint64_t acc = 0;
        int nb = 0;
#define PUT(v, k)                                                                                  \
    do {                                                                                           \
        acc |= (uint64_t)(v) << nb;                                                                \
        nb += (k);                                                                                 \
        if (nb >= 32) {                                                                            \
            uint32_t w32 = (uint32_t)acc;                                                          \
            memcpy(o, &w32, 4); /* little-endian */                                                \
            o += 4;                                                                                \
            acc >>= 32;                                                                            \
            nb -= 32;                                                                              \
        }                                                                                          \
    } while (0)
        PUT(1 | 2 << 1, 3); /* final block, dynamic Huffman */
        PUT(nlit - 257, 5);
        PUT(ndist - 1, 5);
        PUT(ncl - 4, 4);
        for (int i = 0; i < ncl; i++)
            PUT(cllen[cl_order[i]], 3);
        for (int i = 0; i < nitems; i++) {
            uint32_t sy = items[i] & 31;
            PUT(clcode[sy], cllen[sy]);
            if (items[i] >> 12) PUT((items[i] >> 5) & 127, (int)(items[i] >> 12));
        }
        size_t pos = 0;
        for (size_t r = 0; r <= nrun; r++) {
            size_t end = r < nrun ? sc->tok[r] : n;
            /* literals three at a time (<= 45 bits) into the 64-bit
             * accumulator, then whole bytes out without a branch: an
             * 8-byte store of which nb / 8 bytes count (the 8 bytes of
             * slack the size check below asks for) */
            memcpy(o, &acc, 8);
            o += nb >> 3;
            acc >>= nb & ~7;
            nb &= 7;
            for (; pos + 3 <= end; pos += 3) {
                uint32_t c0 = litc[src[pos]], c1 = litc[src[pos + 1]], c2 = litc[src[pos + 2]];
                acc |= (uint64_t)(c0 & 0xffff) << nb;
                nb += (int)(c0 >> 16);
                acc |= (uint64_t)(c1 & 0xffff) << nb;
                nb += (int)(c1 >> 16);
                acc |= (uint64_t)(c2 & 0xffff) << nb;
                nb += (int)(c2 >> 16);
                memcpy(o, &acc, 8); /* little-endian */
                o += nb >> 3;
                acc >>= nb & ~7; /* nb <= 52: at most 6 bytes out */
                nb &= 7;
            }
            for (; pos < end; pos++) {
                uint32_t c = litc[src[pos]];
                PUT(c & 0xffff, (int)(c >> 16));
            }
            if (r == nrun) break;
            size_t j = run_end(src, pos, n - pos < 258 ? n : pos + 258, src[pos - 1]);
            size_t len = j - pos;
            uint32_t sy = len_sym[len];
            PUT(lcode[sy] | (uint32_t)len_eval[len] << llen[sy], llen[sy] + len_ebits[len]);
            PUT(dcode[0], 1);
            pos = j;
        }
        PUT(lcode[256], llen[256]);
#undef PUT
        while (nb > 0) {
            *o++ = (uint8_t)acc;
            acc >>= 8;
            nb -= 8;
        }
    } else { /* stored blocks */
        if (cap < 2 + stored_bytes + 4) return 0;
        o = dst + 2;
        size_t off = 0;
        for (size_t b = 0; b < nstored; b++) {
            size_t k = n - off < 65535 ? n - off : 65535;
            *o++ = (uint8_t)(b + 1 == nstored); /* BFINAL, BTYPE 00, padding */
            o[0] = (uint8_t)k, o[1] = (uint8_t)(k >> 8);
            o[2] = (uint8_t)~k, o[3] = (uint8_t)(~k >> 8);
            memcpy(o + 4, src + off, k);
            o += 4 + k;
            off += k;
        }
    }
    uint32_t a = dfl_adler32(1, src, n);
    o[0] = (uint8_t)(a >> 24), o[1] = (uint8_t)(a >> 16), o[2] = (uint8_t)(a >> 8),
    o[3] = (uint8_t)a;
    return (size_t)(o + 4 - dst);
}
