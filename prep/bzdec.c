/* bzdec.c - fast decoder for one bzip2 stream (see bzdec.h).
 *
 * The bzip2 format, as a decoder sees it (all fields MSB-first bits):
 *
 *   stream  "BZh" level('1'..'9')  block*  eos
 *   block   magic 0x314159265359, crc32, randomised:1, origPtr:24,
 *           symbol map (16-bit used-ranges mask, 16 bits per used range),
 *           nGroups:3 (2..6), nSelectors:15, selectors (unary, MTF-coded),
 *           per group: start length:5 then delta-coded code lengths (1..20),
 *           Huffman-coded MTF/RLE2 symbols (the table switches every 50
 *           symbols): RUNA/RUNB digits of a bijective base-2 run length of
 *           the front byte, k+1 = move byte k of the MTF list to the front,
 *           EOB = nInUse+1
 *   eos     magic 0x177245385090, combined crc32 (rotl(c,1) ^ blockcrc)
 *
 * The symbols give the BWT's last column L; counting sort turns it into the
 * successor links, origPtr is where the original text starts, and walking
 * the links while undoing the initial run-length step (4 equal bytes then
 * a count byte) yields the block. Huffman decoding uses one 2^10-entry table
 * per group for codes up to 10 bits (nearly all of them) and a canonical
 * first-code walk for the longer ones.
 */
#include "prep/bzdec.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

#define MAX_GROUPS 6
#define MAX_ALPHA 258
#define MAX_SELECTORS 18002
#define MAX_CODE_LEN 20
#define LUT_BITS 10
#define BLOCK_MAGIC 0x314159265359ull
#define EOS_MAGIC 0x177245385090ull

/* ---- CRC ---- */

static uint32_t crc_tab[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i << 24;
        for (int k = 0; k < 8; k++)
            c = (c & 0x80000000u) ? (c << 1) ^ 0x04c11db7u : c << 1;
        crc_tab[0][i] = c;
    }
    for (int t = 1; t < 8; t++)
        for (int i = 0; i < 256; i++)
            crc_tab[t][i] = (crc_tab[t - 1][i] << 8) ^ crc_tab[0][crc_tab[t - 1][i] >> 24];
}

uint32_t bzdec_crc_update(uint32_t crc, const unsigned char *p, size_t n) {
    pthread_once(&crc_once, crc_init);
    while (n >= 8) {
        uint32_t a =
            crc ^ ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
        crc = crc_tab[7][a >> 24] ^ crc_tab[6][(a >> 16) & 255] ^ crc_tab[5][(a >> 8) & 255] ^
              crc_tab[4][a & 255] ^ crc_tab[3][p[4]] ^ crc_tab[2][p[5]] ^ crc_tab[1][p[6]] ^
              crc_tab[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = (crc << 8) ^ crc_tab[0][(crc >> 24) ^ *p++];
    return crc;
}

/* ---- bit reader ---- */

typedef struct Bits {
    const unsigned char *p;
    size_t len, pos; /* pos: next byte to load (may pass len: zeros) */
    uint64_t buf;    /* valid bits left-aligned */
    unsigned cnt;    /* number of valid bits in buf */
} Bits;

static inline uint64_t load_be64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return __builtin_bswap64(v);
}

/* Top the buffer up to at least 56 valid bits. */
static inline void refill(Bits *b) {
    if (b->pos + 8 <= b->len) {
        b->buf |= load_be64(b->p + b->pos) >> b->cnt;
        b->pos += (63 - b->cnt) >> 3;
        b->cnt |= 56;
        return;
    }
    while (b->cnt <= 56) {
        uint64_t byte = b->pos < b->len ? b->p[b->pos] : 0;
        b->pos++;
        b->buf |= byte << (56 - b->cnt);
        b->cnt += 8;
    }
}

/* n in 1..32 */
static inline uint32_t getbits(Bits *b, unsigned n) {
    if (b->cnt < n) refill(b);
    uint32_t v = (uint32_t)(b->buf >> (64 - n));
    b->buf <<= n;
    b->cnt -= n;
    return v;
}

static inline uint64_t bits_consumed(const Bits *b) { return (uint64_t)b->pos * 8 - b->cnt; }

/* ---- Huffman tables ---- */

typedef struct Huff {
    uint16_t lut[1 << LUT_BITS];      /* (len << 9) | sym, 0 = longer code */
    uint32_t first[MAX_CODE_LEN + 1]; /* first canonical code of each length */
    uint16_t count[MAX_CODE_LEN + 1], offset[MAX_CODE_LEN + 1];
    uint16_t perm[MAX_ALPHA]; /* symbols ordered by (length, symbol) */
    int maxlen;
} Huff;

/* bzip2 assigns canonical codes in order of length, then symbol. Returns
 * -1 for an over-subscribed code. */
static int huff_build(Huff *h, const unsigned char *len, int n) {
    int minlen = MAX_CODE_LEN, maxlen = 0;
    memset(h->lut, 0, sizeof h->lut);
    memset(h->count, 0, sizeof h->count);
    for (int i = 0; i < n; i++) {
        if (len[i] < minlen) minlen = len[i];
        if (len[i] > maxlen) maxlen = len[i];
        h->count[len[i]]++;
    }
    h->maxlen = maxlen;
    uint32_t code = 0;
    int pp = 0;
    for (int l = 1; l <= MAX_CODE_LEN; l++) {
        h->first[l] = code;
        h->offset[l] = (uint16_t)pp;
        if (l >= minlen && l <= maxlen)
            for (int i = 0; i < n; i++)
                if (len[i] == l) {
                    if (code >= (1u << l)) return -1;
                    h->perm[pp++] = (uint16_t)i;
                    if (l <= LUT_BITS) {
                        uint32_t lo = code << (LUT_BITS - l), hi = (code + 1) << (LUT_BITS - l);
                        for (uint32_t k = lo; k < hi; k++)
                            h->lut[k] = (uint16_t)(l << 9 | i);
                    }
                    code++;
                }
        code <<= 1;
    }
    return 0;
}

/* Decode one symbol; the buffer must hold >= 20 bits. -1: no such code. */
static inline int huff_decode(const Huff *h, Bits *b) {
    unsigned e = h->lut[b->buf >> (64 - LUT_BITS)];
    if (__builtin_expect(e != 0, 1)) {
        unsigned l = e >> 9;
        b->buf <<= l;
        b->cnt -= l;
        return (int)(e & 511);
    }
    for (int l = LUT_BITS + 1; l <= h->maxlen; l++) {
        uint32_t code = (uint32_t)(b->buf >> (64 - l));
        if (code - h->first[l] < h->count[l]) {
            b->buf <<= l;
            b->cnt -= (unsigned)l;
            return h->perm[h->offset[l] + code - h->first[l]];
        }
    }
    return -1;
}

/* ---- one block ---- */

static void grow_out(unsigned char **out, size_t *outcap, size_t need) {
    if (need <= *outcap) return;
    size_t cap = *outcap ? *outcap : 1 << 20;
    while (cap < need)
        cap *= 2;
    *out = xrealloc(*out, cap);
    *outcap = cap;
}

/* Decode the block after its magic; appends to the output and checks the
 * block CRC. Returns 0 and sets *crc_out, or -1. */
/* ---- inverse BWT ---- */

/* The successor links form one cycle through all rows; the text is read by
 * walking it from psi(origPtr). One walk is a chain of dependent cache
 * misses, so the cycle is cut at fixed rows into segments (about WALK_SEG
 * bytes each) and WALK_K of them are walked at once, each into its own
 * chunks of a pool. A walk stops at the next marked row, which names the
 * segment that follows; the segments are then read in that order. Rows
 * are visited exactly once whatever the data, so a damaged block cannot
 * loop or overflow: its segments just fail to add up to the block. */
#define WALK_K 6
#define WALK_CHUNK 4096u
#define WALK_SEG 8192u
#define ROW_MASK 0xFFFFFu /* psi < 900000 < 2^20 */
#define ROW_MARK 0x80000000u

static uint32_t walk_nseg(uint32_t nblock) { return nblock / WALK_SEG + 1; }

static void walk_alloc(BzDec *d, uint32_t nblock_max) {
    uint32_t nseg = walk_nseg(nblock_max);
    size_t nchunks = nblock_max / WALK_CHUNK + nseg + 2;
    free(d->tt);
    free(d->pool);
    free(d->link);
    free(d->seg);
    free(d->srow);
    d->tt = xmalloc((size_t)nblock_max * sizeof *d->tt);
    d->pool = xmalloc(nchunks * WALK_CHUNK);
    d->link = xmalloc(nchunks * sizeof *d->link);
    d->seg = xmalloc(nseg * sizeof *d->seg);
    d->srow = xmalloc(nseg * 2 * sizeof *d->srow);
    d->nchunks = nchunks;
    d->tt_cap = nblock_max;
}

/* The segment starting at row r (a marked row). */
static uint32_t seg_of_row(const BzDec *d, uint32_t ns, uint32_t r) {
    uint32_t lo = 0, hi = ns; /* srow[2i] = row, srow[2i+1] = segment, by row */
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (d->srow[2 * mid] <= r)
            lo = mid;
        else
            hi = mid;
    }
    return d->srow[2 * lo + 1];
}

static int walk(BzDec *d, uint32_t *tt, uint32_t nblock, uint32_t f0) {
    WalkSeg *seg = d->seg;
    uint32_t nseg = walk_nseg(nblock), ns = 0;
    if (nseg > nblock) nseg = nblock;
    /* segment 0 starts the text; the others at evenly spaced rows */
    tt[f0] |= ROW_MARK;
    seg[ns++] = (WalkSeg){f0, 0, 0, 0};
    for (uint32_t i = 1; i < nseg; i++) {
        uint32_t r = (uint32_t)((uint64_t)i * nblock / nseg);
        if (tt[r] & ROW_MARK) continue;
        tt[r] |= ROW_MARK;
        seg[ns++] = (WalkSeg){r, 0, 0, 0};
    }
    /* rows of segments 1.. are increasing: insert segment 0 in order */
    uint32_t k = 0;
    for (uint32_t i = 1, put = 0; i <= ns; i++) {
        if (!put && (i == ns || seg[i].row > f0)) {
            d->srow[2 * k] = f0, d->srow[2 * k + 1] = 0, k++;
            put = 1;
        }
        if (i < ns) d->srow[2 * k] = seg[i].row, d->srow[2 * k + 1] = i, k++;
    }

    unsigned char *pool = d->pool;
    uint32_t *link = d->link, nextchunk = 0, nextseg = 0;
    unsigned char *p[WALK_K], *e[WALK_K];
    uint32_t f[WALK_K], cs[WALK_K], cc[WALK_K], done[WALK_K];
    int act[WALK_K], na = 0;

#define START(c)                                                                                   \
    do {                                                                                           \
        uint32_t s_ = nextseg++, ch_ = nextchunk++;                                                \
        seg[s_].first = ch_;                                                                       \
        cs[c] = s_, cc[c] = ch_, done[c] = 0;                                                      \
        p[c] = pool + (size_t)ch_ * WALK_CHUNK;                                                    \
        e[c] = p[c] + WALK_CHUNK;                                                                  \
        uint32_t v_ = tt[seg[s_].row];                                                             \
        *p[c]++ = (unsigned char)v_;                                                               \
        f[c] = (v_ >> 8) & ROW_MASK;                                                               \
    } while (0)

    for (int c = 0; c < WALK_K && nextseg < ns; c++) {
        START(c);
        act[na++] = c;
    }
    while (na > 0) {
        for (int a = 0; a < na; a++) {
            int c = act[a];
            uint32_t v = tt[f[c]];
            if (__builtin_expect((v & ROW_MARK) != 0, 0)) {
                WalkSeg *sg = &seg[cs[c]];
                sg->len = done[c] + (uint32_t)(p[c] - (pool + (size_t)cc[c] * WALK_CHUNK));
                sg->next = seg_of_row(d, ns, f[c]);
                if (nextseg < ns) {
                    START(c);
                } else {
                    act[a] = act[--na];
                    a--;
                }
                continue;
            }
            *p[c]++ = (unsigned char)v;
            f[c] = (v >> 8) & ROW_MASK;
            if (__builtin_expect(p[c] == e[c], 0)) {
                if (nextchunk >= d->nchunks) return -1;
                uint32_t ch = nextchunk++;
                link[cc[c]] = ch;
                cc[c] = ch;
                done[c] += WALK_CHUNK;
                p[c] = pool + (size_t)ch * WALK_CHUNK;
                e[c] = p[c] + WALK_CHUNK;
            }
        }
    }
#undef START
    /* the chain of segments from segment 0 must cover the block */
    uint64_t total = 0;
    uint32_t s = 0, hops = 0;
    do {
        total += seg[s].len;
        s = seg[s].next;
    } while (s != 0 && ++hops < ns);
    return s == 0 && total == nblock ? 0 : -1;
}

static int decode_block(BzDec *d, Bits *b, uint32_t nblock_max, unsigned char **out, size_t *outlen,
                        size_t *outcap, uint32_t *crc_out) {
    uint32_t crc = getbits(b, 32);
    if (getbits(b, 1)) return -1; /* randomised (bzip2 0.9.0): leave to libbz2 */
    uint32_t orig = getbits(b, 24);

    unsigned char unseq[256];
    int ninuse = 0;
    uint32_t used16 = getbits(b, 16);
    for (int i = 0; i < 16; i++)
        if (used16 & (0x8000u >> i)) {
            uint32_t m = getbits(b, 16);
            for (int j = 0; j < 16; j++)
                if (m & (0x8000u >> j)) unseq[ninuse++] = (unsigned char)(i * 16 + j);
        }
    if (ninuse == 0) return -1;
    int alpha = ninuse + 2;

    int ngroups = (int)getbits(b, 3);
    if (ngroups < 2 || ngroups > MAX_GROUPS) return -1;
    int nsel = (int)getbits(b, 15);
    if (nsel < 1 || nsel > MAX_SELECTORS) return -1;
    static __thread unsigned char selector[MAX_SELECTORS];
    unsigned char pos[MAX_GROUPS];
    for (int i = 0; i < ngroups; i++)
        pos[i] = (unsigned char)i;
    for (int i = 0; i < nsel; i++) {
        int j = 0;
        while (getbits(b, 1))
            if (++j >= ngroups) return -1;
        unsigned char v = pos[j];
        for (; j > 0; j--)
            pos[j] = pos[j - 1];
        pos[0] = v;
        selector[i] = v;
    }

    Huff huff[MAX_GROUPS];
    unsigned char len[MAX_ALPHA];
    for (int t = 0; t < ngroups; t++) {
        int curr = (int)getbits(b, 5);
        for (int i = 0; i < alpha; i++) {
            for (;;) {
                if (curr < 1 || curr > MAX_CODE_LEN) return -1;
                if (!getbits(b, 1)) break;
                curr += getbits(b, 1) ? -1 : 1;
            }
            len[i] = (unsigned char)curr;
        }
        if (huff_build(&huff[t], len, alpha) < 0) return -1;
    }

    if (d->tt_cap < nblock_max) walk_alloc(d, nblock_max);
    uint32_t *tt = d->tt;
    uint32_t nblock = 0, count[256] = {0};
    unsigned char mtf[256];
    for (int i = 0; i < ninuse; i++)
        mtf[i] = unseq[i];
    const int eob = ninuse + 1;
    int group = -1, gleft = 0, sym;
    const Huff *h = NULL;

#define NEXT_SYM()                                                                                 \
    do {                                                                                           \
        if (gleft == 0) {                                                                          \
            if (++group >= nsel) return -1;                                                        \
            gleft = 50;                                                                            \
            h = &huff[selector[group]];                                                            \
        }                                                                                          \
        gleft--;                                                                                   \
        if (b->cnt < MAX_CODE_LEN) refill(b);                                                      \
        sym = huff_decode(h, b);                                                                   \
        if (sym < 0) return -1;                                                                    \
    } while (0)

    NEXT_SYM();
    for (;;) {
        if (sym <= 1) { /* RUNA / RUNB */
            uint32_t run = 0, n = 1;
            do {
                if (n >= 2 * 1024 * 1024) return -1;
                run += (uint32_t)(sym + 1) * n;
                n <<= 1;
                NEXT_SYM();
            } while (sym <= 1);
            unsigned char c = mtf[0];
            if (run > nblock_max - nblock) return -1;
            count[c] += run;
            for (uint32_t k = 0; k < run; k++)
                tt[nblock + k] = c;
            nblock += run;
            continue; /* sym is the next symbol already */
        }
        if (sym == eob) break;
        int k = sym - 1;
        unsigned char c = mtf[k];
        while (k > 0) {
            mtf[k] = mtf[k - 1];
            k--;
        }
        mtf[0] = c;
        if (nblock >= nblock_max) return -1;
        count[c]++;
        tt[nblock++] = c;
        NEXT_SYM();
    }
#undef NEXT_SYM
    if (orig >= nblock) return -1;

    uint32_t cf[256], sum = 0;
    for (int i = 0; i < 256; i++) {
        cf[i] = sum;
        sum += count[i];
    }
    /* tt[j] >> 8 = psi(j), the row after row j (bits 8..27); bit 31 marks
     * the rows where walk segments start */
    for (uint32_t i = 0; i < nblock; i++) {
        uint32_t c = tt[i] & 0xff, j = cf[c]++;
        tt[j] |= i << 8;
    }
    if (walk(d, tt, nblock, tt[orig] >> 8) < 0) return -1;

    /* undo the initial run-length step: 4 equal bytes, then a count byte;
     * the text is the walk's segments in chain order */
    grow_out(out, outcap, *outlen + nblock + 256);
    unsigned char *base = *out, *op = base + *outlen, *end = base + *outcap;
    int last = -1, run = 0;
    uint32_t left = nblock;
    for (uint32_t s = 0;;) {
        const WalkSeg *sg = &d->seg[s];
        uint32_t slen = sg->len;
        for (uint32_t ch_i = sg->first; slen > 0; ch_i = d->link[ch_i]) {
            const unsigned char *rp = d->pool + (size_t)ch_i * WALK_CHUNK;
            uint32_t m = slen < WALK_CHUNK ? slen : WALK_CHUNK;
            slen -= m;
            left -= m;
            for (uint32_t i = 0; i < m; i++) {
                unsigned ch = rp[i];
                if (run == 4) {
                    if (ch) {
                        if ((size_t)(end - op) < ch + (size_t)left + (m - i)) {
                            size_t at = (size_t)(op - base);
                            grow_out(out, outcap, at + ch + left + (m - i) + 256);
                            base = *out;
                            op = base + at;
                            end = base + *outcap;
                        }
                        memset(op, last, ch);
                        op += ch;
                    }
                    run = 0;
                    last = -1;
                    continue;
                }
                if ((int)ch == last)
                    run++;
                else {
                    last = (int)ch;
                    run = 1;
                }
                *op++ = (unsigned char)ch;
            }
        }
        s = sg->next;
        if (s == 0) break;
    }
    size_t start = *outlen, n = (size_t)(op - base) - start;
    if (~bzdec_crc_update(0xffffffffu, base + start, n) != crc) return -1;
    *outlen = start + n;
    *crc_out = crc;
    return 0;
}

int bzdec_stream(BzDec *d, const unsigned char *in, size_t len, unsigned char **out, size_t *outlen,
                 size_t *outcap, size_t *used) {
    if (len < 4 || memcmp(in, "BZh", 3) != 0 || in[3] < '1' || in[3] > '9') return -1;
    uint32_t nblock_max = (uint32_t)(in[3] - '0') * 100000;
    Bits b = {in, len, 4, 0, 0};
    size_t start = *outlen;
    uint32_t comb = 0;
    for (;;) {
        uint64_t magic = (uint64_t)getbits(&b, 24) << 24;
        magic |= getbits(&b, 24);
        if (magic == BLOCK_MAGIC) {
            uint32_t crc;
            if (decode_block(d, &b, nblock_max, out, outlen, outcap, &crc) < 0) goto fail;
            comb = ((comb << 1) | (comb >> 31)) ^ crc;
        } else if (magic == EOS_MAGIC) {
            if (getbits(&b, 32) != comb) goto fail;
            break;
        } else {
            goto fail;
        }
    }
    uint64_t bits = bits_consumed(&b);
    if (bits > (uint64_t)len * 8) goto fail;
    *used = (size_t)((bits + 7) / 8);
    return 0;
fail:
    *outlen = start;
    return -1;
}

void bzdec_free(BzDec *d) {
    free(d->tt);
    free(d->pool);
    free(d->link);
    free(d->seg);
    free(d->srow);
    memset(d, 0, sizeof *d);
}
