/* bz2par.c - parallel, ordered bz2 decompression on top of libbz2.
 *
 * Format (bzip2 1.0 "BZh" streams, see the bzip2 manual and the format notes
 * by J. Seward; bits are read most-significant first):
 *   stream  = "BZh" level('1'..'9') block* eos crc32 padding-to-byte
 *   block   = magic 0x314159265359 (48 bits) blockcrc (32 bits) huffman data
 *   eos     = magic 0x177245385090 (48 bits), then the stream's combined CRC,
 *             combined = rotl1(combined) ^ blockcrc over its blocks
 * Blocks are not byte aligned and carry no length, so a block runs from its
 * magic to the next block or end-of-stream magic. Multistream files (as
 * Wikimedia's pages-articles-multistream) are plain concatenations of
 * streams; each new "BZh" header starts on the byte after the previous
 * stream's padding.
 *
 * Pipeline (one reader/scanner thread, N decode workers, the caller):
 *  - The scanner reads the input sequentially in 1 MB chunks into a sliding
 *    window and searches it for the two 48-bit magics at every bit offset.
 *    The search tests bytes j+1 and j+2 of each position j against two
 *    256-entry tables (a set bit means "this byte is what the magic at shift
 *    s would put here"), so only ~1 position in 4096 needs the full 48-bit
 *    compare. Each block [magic, next magic) is copied, shifted to byte
 *    alignment, into a standalone one-block stream: "BZh" + the level digit +
 *    the block + EOS magic + the block's own CRC as the stream CRC (for one
 *    block the combined CRC is the block CRC) + padding. libbz2 checks the
 *    block CRC while decoding it.
 *  - A magic can also occur by chance inside compressed data (~2^-48 per
 *    bit). A false block magic splits a block in two pieces that both fail
 *    to decode: the caller's side retries the failing piece merged with the
 *    following candidate(s) before reporting an error. A false end-of-stream
 *    magic is recognised by what follows it: a real one is followed by a
 *    "BZh" header or by the end of input; otherwise it is kept provisional
 *    and the scan goes on (if another magic turns up, it was not an end;
 *    if none does, the rest of the input is trailing garbage).
 *  - The caller side (bz2par_next) takes finished jobs strictly in order,
 *    keeps each stream's combined CRC and compares it with the stored one.
 *  - With a multistream index ("offset:pageid:title" lines, plain or bz2),
 *    the scanner instead cuts the input at the listed byte offsets and each
 *    piece (one or more whole streams) is decoded as is, without bit scan.
 *    A piece over 2 MB compressed is bit-scanned instead (memory bound);
 *    the cut resumes at the next listed offset. If a whole-stream decode
 *    fails, the worker decodes that piece again block by block to deliver
 *    the good blocks and name the offset of the bad one.
 * Memory: at most 2*N+4 jobs are in flight (each ~1 MB in, ~1 MB out for a
 * level-9 block; outputs grow as needed, RLE can make a block ~46 MB), and
 * each worker keeps libbz2's ~3.6 MB decode tables between blocks.
 *
 * Trailing data after the last complete stream: if it begins like a stream
 * header ("BZh", or a prefix of it at end of input) it is decoded and any
 * damage is an error; anything else (zeros, junk) is ignored like bzip2
 * does, and its size is reported by bz2par_trailing_garbage().
 */
#include "prep/bz2par.h"
#include "prep/bzdec.h"

#include <bzlib.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

/* ---- constants ---- */

#define CHUNK ((size_t)1 << 20)             /* read size */
#define WINDOW_INIT ((size_t)4 << 20)       /* initial scan window */
#define SLACK 16                            /* zeroed bytes after data for 64-bit loads */
#define MAX_BLOCK_BYTES ((uint64_t)3 << 20) /* > any compressed bz2 block (~2.3 MB) */
#define SEG_MAX ((uint64_t)2 << 20)         /* larger index pieces are bit-scanned */
#define MAX_MERGE 4                         /* candidates merged after a failure */
#define MAX_THREADS 256
#define KEEP_BUF_MAX ((size_t)8 << 20) /* pooled buffers above this are freed */
#define IDX_BUF (256 * 1024)

#define MAGIC_BLOCK 0x314159265359ULL
#define MAGIC_EOS 0x177245385090ULL

enum { MK_NONE = 0, MK_BLOCK = 1, MK_EOS = 2 };
enum { JOB_BLOCK, JOB_SEGMENT, JOB_ERROR, JOB_END };
enum { ST_QUEUED, ST_RUNNING, ST_DONE };
enum { SC_HEADER, SC_BLOCKS, SC_SEGMENT, SC_GARBAGE, SC_DONE };
enum { DEC_OK, DEC_ERR };

/* ---- types ---- */

/* Small cache for libbz2's allocations: a decoder allocates its state and
 * its block tables (~3.6 MB at level 9) for every stream; re-framed blocks
 * are one stream each, so the same sizes come back every time. */
typedef struct AllocCache {
    void *p[4];
    size_t n[4];
    int used[4];
    BzDec dec;  /* the fast decoder's block array */
    int libbz2; /* 1: decode with libbz2 only (WIKIBERT_BZ2=libbz2) */
} AllocCache;

/* Growable output area. */
typedef struct OutBuf {
    unsigned char *p;
    size_t len, cap;
} OutBuf;

typedef struct Job {
    struct Job *next;  /* in-flight list, input order */
    struct Job *qnext; /* worker queue */
    int kind, state;
    /* input: JOB_BLOCK a framed one-block stream whose block bits start at
     * bit 32; JOB_SEGMENT raw bytes of whole streams */
    unsigned char *in;
    size_t in_len, in_cap;
    uint64_t start_bit; /* file bit offset of the block magic / piece start */
    uint64_t nbits;     /* JOB_BLOCK: magic to next magic */
    uint64_t end_byte;  /* compressed offset reached once this is output */
    int level;          /* '1'..'9' */
    uint32_t block_crc;
    int stream_start, stream_end;
    uint32_t stream_crc; /* stored combined CRC when stream_end */
    uint64_t eos_bit;    /* end-of-stream magic when stream_end */
    uint64_t refuted;    /* provisional EOS inside the block range, or 0 */
    int last_piece;      /* JOB_SEGMENT: runs to the end of input */
    /* result */
    OutBuf out;
    int ok;
    uint64_t err_byte; /* JOB_SEGMENT failure / JOB_ERROR: where */
    uint64_t garbage;  /* JOB_SEGMENT: ignored trailing bytes */
    char msg[512];     /* failure reason; JOB_ERROR: the full message */
} Job;

typedef struct Worker {
    struct Bz2Par *b;
    pthread_t th;
    AllocCache ac;
    unsigned char *scratch;
    size_t scratch_cap;
} Worker;

/* Lazy reader of a multistream index, used by the scanner thread. */
typedef struct Index {
    int fd;
    char *path;
    int is_bz2, bz_live, in_eof;
    bz_stream bz;
    unsigned char *ibuf;
    size_t ipos, ilen;
    char *tbuf;
    size_t tpos, tlen;
    uint64_t line, prev;
} Index;

typedef struct Scan {
    unsigned char *w; /* window: file bytes [wbase, wbase + wlen) */
    size_t wcap, wlen;
    uint64_t wbase;
    int eof;
    int state;
    uint64_t hdr;      /* SC_HEADER: byte offset of the next stream header */
    uint64_t nstreams; /* streams (or index pieces) seen */
    int level;
    uint64_t cur;    /* SC_BLOCKS: bit offset of the current block magic */
    uint64_t search; /* SC_BLOCKS: bit offset where the search resumes */
    int stream_start;
    int has_prov; /* provisional end-of-stream pending */
    uint64_t prov_eos;
    uint32_t prov_crc;
    uint64_t refuted;
    uint64_t gstart; /* SC_GARBAGE: first ignored byte */
    Index *idx;
    uint64_t seg_start, seg_end; /* SC_SEGMENT; seg_end UINT64_MAX: to EOF */
    size_t fake_b, fake_e;
} Scan;

struct Bz2Par {
    int fd;
    char *name;
    int nthreads;
    int is_reg;
    uint64_t fsize;
    const uint64_t *fake_block, *fake_eos;
    size_t n_fake_block, n_fake_eos;

    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_done, cv_space;
    Job *head, *tail;   /* in flight, input order */
    Job *qhead, *qtail; /* waiting for a worker */
    Job *pool;
    int inflight, max_inflight;
    int stop;

    pthread_t scan_th;
    int scan_started;
    Worker *workers;
    int nworkers;
    Scan sc;

    /* caller side */
    Job *cur;
    int done; /* 1 clean end, -1 error */
    int pending_err;
    Err saved;
    uint32_t comb;
    uint64_t cpos, garbage;
    AllocCache ac;
    unsigned char *scratch;
    size_t scratch_cap;
};

/* ---- bit helpers ---- */

static uint16_t magic_t1[256], magic_t2[256];
static pthread_once_t magic_once = PTHREAD_ONCE_INIT;

/* Bit k (k < 8) of magic_t1[x] says: a block magic starting at bit k of byte
 * j puts x in byte j+1; bits 8..15 the same for the EOS magic. magic_t2
 * likewise for byte j+2. */
static void magic_tables_init(void) {
    for (int s = 0; s < 8; s++) {
        uint64_t wb = MAGIC_BLOCK << (16 - s), we = MAGIC_EOS << (16 - s);
        magic_t1[(wb >> 48) & 0xff] |= (uint16_t)(1u << s);
        magic_t2[(wb >> 40) & 0xff] |= (uint16_t)(1u << s);
        magic_t1[(we >> 48) & 0xff] |= (uint16_t)(1u << (8 + s));
        magic_t2[(we >> 40) & 0xff] |= (uint16_t)(1u << (8 + s));
    }
}

static inline uint64_t load_be64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* n (1..56) bits starting at bit offset `bit` of base; needs 8 readable
 * bytes from base + bit/8. */
static inline uint64_t get_bits(const unsigned char *base, uint64_t bit, unsigned n) {
    return (load_be64(base + (bit >> 3)) << (bit & 7)) >> (64 - n);
}

static inline int magic_kind(uint64_t v) {
    return v == MAGIC_BLOCK ? MK_BLOCK : v == MAGIC_EOS ? MK_EOS : MK_NONE;
}

/* First magic at bit p of w with from <= p and p + 48 <= limit. Returns its
 * kind and sets *pos, or MK_NONE and sets *resume to the first position not
 * yet examined. w needs SLACK readable bytes after limit/8. */
static int find_magic(const unsigned char *w, uint64_t from, uint64_t limit, uint64_t *pos,
                      uint64_t *resume) {
    if (limit < from + 48) {
        *resume = from;
        return MK_NONE;
    }
    uint64_t last = limit - 48; /* last position that fits */
    size_t j = (size_t)(from >> 3), jend = (size_t)(last >> 3);
    for (; j <= jend; j++) {
        unsigned m = magic_t1[w[j + 1]] & magic_t2[w[j + 2]];
        if (__builtin_expect(m == 0, 1)) continue;
        uint64_t v = load_be64(w + j);
        for (unsigned s = 0; s < 8; s++) {
            unsigned bits = (m >> s & 1) | (m >> (8 + s) & 1);
            if (!bits) continue;
            uint64_t p = (uint64_t)j * 8 + s;
            if (p < from || p > last) continue;
            int k = magic_kind((v >> (16 - s)) & 0xffffffffffffULL);
            if (k) {
                *pos = p;
                return k;
            }
        }
    }
    *resume = last + 1;
    return MK_NONE;
}

typedef struct BitW {
    unsigned char *p;
    size_t len;
    uint64_t acc;
    unsigned nacc;
} BitW;

static inline void bw_put(BitW *w, uint32_t v, unsigned n) {
    w->acc = (w->acc << n) | v;
    w->nacc += n;
    while (w->nacc >= 8) {
        w->nacc -= 8;
        w->p[w->len++] = (unsigned char)(w->acc >> w->nacc);
    }
}

/* Append n bits of src starting at bit offset `bit`. */
static void bw_copy(BitW *w, const unsigned char *src, uint64_t bit, uint64_t n) {
    if (w->nacc == 0 && (bit & 7) == 0) {
        size_t nb = (size_t)(n >> 3);
        memcpy(w->p + w->len, src + (bit >> 3), nb);
        w->len += nb;
        bit += (uint64_t)nb * 8;
        n -= (uint64_t)nb * 8;
    }
    while (n >= 32) {
        bw_put(w, (uint32_t)get_bits(src, bit, 32), 32);
        bit += 32;
        n -= 32;
    }
    if (n) bw_put(w, (uint32_t)get_bits(src, bit, (unsigned)n), (unsigned)n);
}

/* A piece of a bit string: nbits bits of base from bit offset bit. */
typedef struct BitRange {
    const unsigned char *base;
    uint64_t bit, nbits;
} BitRange;

/* Build a standalone one-block bz2 stream from the concatenation of the
 * ranges (which start with the block magic) into *buf (grown as needed,
 * SLACK zeroed bytes after the data). Returns its length. */
static size_t frame_block(unsigned char **buf, size_t *cap, int level, const BitRange *r, int nr,
                          uint32_t crc) {
    uint64_t nbits = 0;
    for (int i = 0; i < nr; i++)
        nbits += r[i].nbits;
    size_t need = 4 + (size_t)(nbits >> 3) + 1 + 10 + 1 + SLACK;
    if (*cap < need) {
        *cap = need + need / 4;
        free(*buf);
        *buf = xmalloc(*cap);
    }
    BitW w = {*buf, 0, 0, 0};
    memcpy(w.p, "BZh", 3);
    w.p[3] = (unsigned char)level;
    w.len = 4;
    for (int i = 0; i < nr; i++)
        bw_copy(&w, r[i].base, r[i].bit, r[i].nbits);
    bw_put(&w, (uint32_t)(MAGIC_EOS >> 24), 24);
    bw_put(&w, (uint32_t)(MAGIC_EOS & 0xffffff), 24);
    bw_put(&w, crc, 32);
    if (w.nacc) bw_put(&w, 0, 8 - w.nacc);
    memset(w.p + w.len, 0, SLACK);
    return w.len;
}

static inline uint32_t crc_combine(uint32_t comb, uint32_t blockcrc) {
    return ((comb << 1) | (comb >> 31)) ^ blockcrc;
}

/* ---- libbz2 decoding ---- */

static void *ac_alloc(void *opaque, int items, int size) {
    AllocCache *c = opaque;
    size_t n = (size_t)items * (size_t)size;
    for (int i = 0; i < 4; i++)
        if (c->p[i] && !c->used[i] && c->n[i] == n) {
            c->used[i] = 1;
            return c->p[i];
        }
    void *p = malloc(n);
    if (!p) return NULL;
    int slot = -1;
    for (int i = 0; i < 4 && slot < 0; i++)
        if (!c->p[i]) slot = i;
    for (int i = 0; i < 4 && slot < 0; i++)
        if (!c->used[i]) {
            free(c->p[i]);
            slot = i;
        }
    if (slot >= 0) {
        c->p[slot] = p;
        c->n[slot] = n;
        c->used[slot] = 1;
    }
    return p;
}

static void ac_free(void *opaque, void *p) {
    AllocCache *c = opaque;
    for (int i = 0; i < 4; i++)
        if (c->p[i] == p) {
            c->used[i] = 0;
            return;
        }
    free(p);
}

static void ac_destroy(AllocCache *c) {
    for (int i = 0; i < 4; i++)
        free(c->p[i]);
    bzdec_free(&c->dec);
    memset(c, 0, sizeof *c);
}

static void out_reserve(OutBuf *o, size_t want) {
    if (o->cap >= want) return;
    size_t cap = o->cap ? o->cap : 64 * 1024;
    while (cap < want)
        cap *= 2;
    o->p = xrealloc(o->p, cap);
    o->cap = cap;
}

/* Decode the one bz2 stream at in[0..len), appending its output to o.
 * On DEC_OK *used is the input it took (through its padding); on DEC_ERR
 * msg says why and o->len is back where it was. The fast decoder (bzdec.c)
 * goes first; whatever it declines is decoded by libbz2, which also gives
 * the diagnostics. */
static int bz_decode_stream(AllocCache *ac, const unsigned char *in, size_t len, OutBuf *o,
                            size_t *used, char *msg, size_t msgsz) {
    if (!ac->libbz2 && bzdec_stream(&ac->dec, in, len, &o->p, &o->len, &o->cap, used) == 0)
        return DEC_OK;
    bz_stream s;
    memset(&s, 0, sizeof s);
    s.bzalloc = ac_alloc;
    s.bzfree = ac_free;
    s.opaque = ac;
    size_t start = o->len;
    int r = BZ2_bzDecompressInit(&s, 0, 0);
    if (r != BZ_OK) {
        snprintf(msg, msgsz, "libbz2 init failed (error %d)", r);
        return DEC_ERR;
    }
    s.next_in = (char *)in;
    s.avail_in = len > UINT_MAX ? UINT_MAX : (unsigned)len;
    size_t fed = s.avail_in;
    for (;;) {
        if (o->cap - o->len < 4096) out_reserve(o, o->len + 4096 + o->len / 2);
        size_t room = o->cap - o->len;
        if (room > UINT_MAX) room = UINT_MAX;
        s.next_out = (char *)o->p + o->len;
        s.avail_out = (unsigned)room;
        if (s.avail_in == 0 && fed < len) {
            size_t more = len - fed > UINT_MAX ? UINT_MAX : len - fed;
            s.next_in = (char *)in + fed;
            s.avail_in = (unsigned)more;
            fed += more;
        }
        r = BZ2_bzDecompress(&s);
        o->len += room - s.avail_out;
        if (r == BZ_STREAM_END) {
            *used = fed - s.avail_in;
            BZ2_bzDecompressEnd(&s);
            return DEC_OK;
        }
        if (r != BZ_OK) {
            if (r == BZ_DATA_ERROR)
                snprintf(msg, msgsz,
                         o->len > start ? "bz2 block CRC mismatch"
                                        : "bz2 data error (corrupt block)");
            else if (r == BZ_DATA_ERROR_MAGIC)
                snprintf(msg, msgsz, "not bz2 data");
            else if (r == BZ_MEM_ERROR)
                snprintf(msg, msgsz, "out of memory in libbz2");
            else
                snprintf(msg, msgsz, "libbz2 error %d", r);
            break;
        }
        if (s.avail_in == 0 && fed == len && s.avail_out > 0) {
            snprintf(msg, msgsz, "unexpected end of bz2 data");
            break;
        }
    }
    BZ2_bzDecompressEnd(&s);
    o->len = start;
    return DEC_ERR;
}

/* Frame and decode one block made of the given ranges; appends the output
 * to o. Returns DEC_OK only if the block ends exactly at the end of the
 * ranges (so the candidate boundary is a real one). */
static int decode_ranges(AllocCache *ac, unsigned char **scratch, size_t *cap, int level,
                         const BitRange *r, int nr, uint32_t crc, OutBuf *o, char *msg,
                         size_t msgsz) {
    size_t len = frame_block(scratch, cap, level, r, nr, crc);
    size_t used = 0, start = o->len;
    if (bz_decode_stream(ac, *scratch, len, o, &used, msg, msgsz) != DEC_OK) return DEC_ERR;
    if (used != len) {
        o->len = start;
        snprintf(msg, msgsz, "bz2 data error (corrupt block)");
        return DEC_ERR;
    }
    return DEC_OK;
}

/* ---- worker side ---- */

static int is_header_prefix(const unsigned char *p, size_t n) {
    size_t m = n < 3 ? n : 3;
    if (memcmp(p, "BZh", m) != 0) return 0;
    return n < 4 || (p[3] >= '1' && p[3] <= '9');
}

/* Whether in[pos..len) (data after the last stream) holds a block or
 * end-of-stream magic, i.e. is a stream with a damaged header rather than
 * garbage to ignore. */
static int garbage_has_block(const unsigned char *in, size_t pos, size_t len) {
    uint64_t p, resume;
    return find_magic(in, (uint64_t)pos * 8, (uint64_t)len * 8, &p, &resume) != MK_NONE;
}

/* Decode an index piece (whole streams, no bit scan needed) block by
 * block, to deliver every good block before the bad one and to name the bad
 * block's offset. Sets j->out, j->ok, j->msg, j->err_byte, j->garbage. */
static void decode_piece_blockwise(Worker *wk, Job *j) {
    const unsigned char *in = j->in;
    size_t len = j->in_len;
    uint64_t nb = (uint64_t)len * 8, base = j->start_bit >> 3;
    const char *trunc = j->last_piece
                            ? "unexpected end of bz2 data (truncated file?)"
                            : "bz2 stream does not end before the next index offset (wrong index?)";
    size_t pos = 0;
    j->out.len = 0;
    j->ok = 0;
    while (pos < len) {
        size_t rem = len - pos;
        if (!is_header_prefix(in + pos, rem) || (rem < 4 && !j->last_piece)) {
            if (pos > 0 && j->last_piece && !garbage_has_block(in, pos, len)) {
                j->garbage = rem;
                break;
            }
            j->err_byte = base + pos;
            snprintf(j->msg, sizeof j->msg, "%s",
                     pos == 0        ? "not bz2 data"
                     : j->last_piece ? "data after the end of a bz2 stream is not a bz2 stream "
                                       "(corrupt stream header?)"
                                     : "garbage between bz2 streams");
            return;
        }
        if (rem < 10) {
            j->err_byte = base + len;
            snprintf(j->msg, sizeof j->msg, "%s", trunc);
            return;
        }
        int level = in[pos + 3];
        uint64_t cur = (uint64_t)(pos + 4) * 8;
        int kind = magic_kind(get_bits(in, cur, 48));
        if (!kind) {
            j->err_byte = base + pos;
            snprintf(j->msg, sizeof j->msg, "corrupt bz2 stream header");
            return;
        }
        uint32_t comb = 0;
        while (kind == MK_BLOCK) {
            uint64_t from = cur + 80, q = 0, resume;
            int qk = MK_NONE, ok = 0;
            char first[256] = "";
            for (int t = 0; t <= MAX_MERGE; t++) {
                qk = find_magic(in, from, nb, &q, &resume);
                if (!qk) break;
                BitRange r = {in, cur, q - cur};
                char m[256];
                if (decode_ranges(&wk->ac, &wk->scratch, &wk->scratch_cap, level, &r, 1,
                                  (uint32_t)get_bits(in, cur + 48, 32), &j->out, m,
                                  sizeof m) == DEC_OK) {
                    ok = 1;
                    break;
                }
                if (t == 0 || strstr(m, "CRC")) snprintf(first, sizeof first, "%s", m);
                from = q + 48;
            }
            if (!ok) {
                j->err_byte = first[0] ? base + cur / 8 : base + len;
                snprintf(j->msg, sizeof j->msg, "%s", first[0] ? first : trunc);
                return;
            }
            comb = crc_combine(comb, (uint32_t)get_bits(in, cur + 48, 32));
            cur = q;
            kind = qk;
        }
        if (cur + 80 > nb) {
            j->err_byte = base + len;
            snprintf(j->msg, sizeof j->msg, "%s", trunc);
            return;
        }
        if ((uint32_t)get_bits(in, cur + 48, 32) != comb) {
            j->err_byte = base + cur / 8;
            snprintf(j->msg, sizeof j->msg, "bz2 stream CRC mismatch");
            return;
        }
        pos = (size_t)((cur + 80 + 7) / 8);
    }
    j->ok = 1;
}

/* Decode an index piece as whole streams; on any failure fall back to the
 * block-by-block decode. */
static void decode_piece(Worker *wk, Job *j) {
    size_t pos = 0, len = j->in_len;
    char m[256];
    j->out.len = 0;
    out_reserve(&j->out, len * 5 + 65536);
    while (pos < len) {
        if (pos > 0 && !is_header_prefix(j->in + pos, len - pos) && j->last_piece &&
            !garbage_has_block(j->in, pos, len)) {
            j->garbage = len - pos;
            break;
        }
        size_t used = 0;
        if (bz_decode_stream(&wk->ac, j->in + pos, len - pos, &j->out, &used, m, sizeof m) !=
            DEC_OK) {
            decode_piece_blockwise(wk, j);
            return;
        }
        pos += used;
    }
    j->ok = 1;
}

static void decode_job(Worker *wk, Job *j) {
    j->ok = 0;
    j->msg[0] = '\0';
    if (j->kind == JOB_SEGMENT) {
        decode_piece(wk, j);
        return;
    }
    j->out.len = 0;
    out_reserve(&j->out, (size_t)(j->level - '0') * 100000 + 4096);
    size_t used = 0;
    if (bz_decode_stream(&wk->ac, j->in, j->in_len, &j->out, &used, j->msg, sizeof j->msg) !=
        DEC_OK)
        return;
    if (used != j->in_len) {
        j->out.len = 0;
        snprintf(j->msg, sizeof j->msg, "bz2 data error (corrupt block)");
        return;
    }
    j->ok = 1;
}

static void *worker_main(void *arg) {
    Worker *wk = arg;
    Bz2Par *b = wk->b;
    pthread_mutex_lock(&b->mu);
    for (;;) {
        while (!b->stop && !b->qhead)
            pthread_cond_wait(&b->cv_work, &b->mu);
        if (b->stop) break;
        Job *j = b->qhead;
        b->qhead = j->qnext;
        if (!b->qhead) b->qtail = NULL;
        j->state = ST_RUNNING;
        pthread_mutex_unlock(&b->mu);
        decode_job(wk, j);
        pthread_mutex_lock(&b->mu);
        j->state = ST_DONE;
        pthread_cond_broadcast(&b->cv_done);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* ---- job pool and queues ---- */

static void job_free(Job *j) {
    if (!j) return;
    free(j->in);
    free(j->out.p);
    free(j);
}

/* Return a job to the pool (any thread). */
static void job_recycle(Bz2Par *b, Job *j) {
    if (j->in_cap > KEEP_BUF_MAX) {
        free(j->in);
        j->in = NULL;
        j->in_cap = 0;
    }
    if (j->out.cap > KEEP_BUF_MAX) {
        free(j->out.p);
        j->out.p = NULL;
        j->out.cap = 0;
    }
    pthread_mutex_lock(&b->mu);
    j->next = b->pool;
    b->pool = j;
    pthread_mutex_unlock(&b->mu);
}

/* Scanner: wait for room in flight, then hand out a clean job. NULL when
 * the decoder is being closed. */
static Job *job_get(Bz2Par *b) {
    pthread_mutex_lock(&b->mu);
    while (!b->stop && b->inflight >= b->max_inflight)
        pthread_cond_wait(&b->cv_space, &b->mu);
    if (b->stop) {
        pthread_mutex_unlock(&b->mu);
        return NULL;
    }
    b->inflight++;
    Job *j = b->pool;
    if (j) b->pool = j->next;
    pthread_mutex_unlock(&b->mu);
    if (!j) j = xcalloc(1, sizeof *j);
    unsigned char *in = j->in;
    size_t in_cap = j->in_cap;
    OutBuf out = j->out;
    memset(j, 0, sizeof *j);
    j->in = in;
    j->in_cap = in_cap;
    j->out = out;
    j->out.len = 0;
    return j;
}

/* Scanner: append a filled job to the in-flight list (and the worker queue
 * when it needs decoding). */
static void job_submit(Bz2Par *b, Job *j) {
    pthread_mutex_lock(&b->mu);
    j->next = NULL;
    if (b->tail)
        b->tail->next = j;
    else
        b->head = j;
    b->tail = j;
    if (j->kind == JOB_BLOCK || j->kind == JOB_SEGMENT) {
        j->state = ST_QUEUED;
        j->qnext = NULL;
        if (b->qtail)
            b->qtail->qnext = j;
        else
            b->qhead = j;
        b->qtail = j;
        pthread_cond_signal(&b->cv_work);
    } else {
        j->state = ST_DONE;
    }
    pthread_cond_broadcast(&b->cv_done);
    pthread_mutex_unlock(&b->mu);
}

static void in_reserve(Job *j, size_t n) {
    if (j->in_cap >= n) return;
    free(j->in);
    j->in_cap = n + n / 4;
    j->in = xmalloc(j->in_cap);
}

/* ---- multistream index ---- */

static void idx_close(Index *x) {
    if (!x) return;
    if (x->bz_live) BZ2_bzDecompressEnd(&x->bz);
    if (x->fd >= 0) close(x->fd);
    free(x->path);
    free(x->ibuf);
    free(x->tbuf);
    free(x);
}

static int idx_read(Index *x, unsigned char *dst, size_t n, char *msg, size_t msgsz) {
    for (;;) {
        ssize_t r = read(x->fd, dst, n);
        if (r >= 0) return (int)r;
        if (errno == EINTR) continue;
        fmt_fit(msg, msgsz, "%s: read error: %s", x->path, strerror(errno));
        return -1;
    }
}

/* Refill x->tbuf with index text. 1: some text, 0: end, -1: error. */
static int idx_fill(Index *x, char *msg, size_t msgsz) {
    x->tpos = x->tlen = 0;
    if (!x->is_bz2) {
        int r = idx_read(x, (unsigned char *)x->tbuf, IDX_BUF, msg, msgsz);
        if (r < 0) return -1;
        x->tlen = (size_t)r;
        return r > 0;
    }
    for (;;) {
        if (x->ipos == x->ilen && !x->in_eof) {
            int r = idx_read(x, x->ibuf, IDX_BUF, msg, msgsz);
            if (r < 0) return -1;
            x->ipos = 0;
            x->ilen = (size_t)r;
            if (r == 0) x->in_eof = 1;
        }
        if (!x->bz_live) {
            if (x->ipos == x->ilen && x->in_eof) return 0;
            memset(&x->bz, 0, sizeof x->bz);
            if (BZ2_bzDecompressInit(&x->bz, 0, 0) != BZ_OK) {
                fmt_fit(msg, msgsz, "%s: libbz2 init failed", x->path);
                return -1;
            }
            x->bz_live = 1;
        }
        x->bz.next_in = (char *)x->ibuf + x->ipos;
        x->bz.avail_in = (unsigned)(x->ilen - x->ipos);
        x->bz.next_out = x->tbuf;
        x->bz.avail_out = IDX_BUF;
        int r = BZ2_bzDecompress(&x->bz);
        x->ipos = x->ilen - x->bz.avail_in;
        x->tlen = IDX_BUF - x->bz.avail_out;
        if (r == BZ_STREAM_END) {
            BZ2_bzDecompressEnd(&x->bz);
            x->bz_live = 0;
        } else if (r != BZ_OK) {
            fmt_fit(msg, msgsz, "%s: corrupt bz2 index (libbz2 error %d)", x->path, r);
            return -1;
        } else if (x->tlen == 0 && x->ipos == x->ilen && x->in_eof) {
            fmt_fit(msg, msgsz, "%s: unexpected end of bz2 index (truncated file?)", x->path);
            return -1;
        }
        if (x->tlen) return 1;
    }
}

/* Next distinct stream offset from the index: 1 with *off, 0 at its end,
 * -1 with msg. Offsets must not decrease; repeats (several pages per
 * stream) and offset 0 are skipped. */
static int idx_next(Index *x, uint64_t *off, char *msg, size_t msgsz) {
    for (;;) {
        uint64_t v = 0;
        int nd = 0, c = -1, over = 0;
        for (;;) {
            if (x->tpos == x->tlen) {
                int r = idx_fill(x, msg, msgsz);
                if (r < 0) return -1;
                if (r == 0) break;
            }
            c = (unsigned char)x->tbuf[x->tpos++];
            if (c < '0' || c > '9') break;
            if (v > (UINT64_MAX - 9) / 10) over = 1;
            v = v * 10 + (uint64_t)(c - '0');
            nd++;
        }
        if (c == -1 && nd == 0) return 0;
        x->line++;
        if (c == '\n' && nd == 0) continue; /* blank line */
        if (c != ':' || nd == 0 || over) {
            fmt_fit(msg, msgsz, "%s: line %" PRIu64 ": expected \"offset:pageid:title\"", x->path,
                    x->line);
            return -1;
        }
        for (;;) { /* skip the rest of the line */
            if (x->tpos == x->tlen) {
                int r = idx_fill(x, msg, msgsz);
                if (r < 0) return -1;
                if (r == 0) break;
            }
            char *nl = memchr(x->tbuf + x->tpos, '\n', x->tlen - x->tpos);
            if (nl) {
                x->tpos = (size_t)(nl - x->tbuf) + 1;
                break;
            }
            x->tpos = x->tlen;
        }
        if (v < x->prev) {
            snprintf(msg, msgsz,
                     "%s: line %" PRIu64 ": offset %" PRIu64
                     " is smaller than the previous offset %" PRIu64 " (index not sorted?)",
                     x->path, x->line, v, x->prev);
            return -1;
        }
        if (v == x->prev) continue;
        x->prev = v;
        *off = v;
        return 1;
    }
}

static Index *idx_open(const char *path, Err *err) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        err_set(err, "%s: cannot open index: %s", path, strerror(errno));
        return NULL;
    }
    Index *x = xcalloc(1, sizeof *x);
    x->fd = fd;
    x->path = xstrdup(path);
    x->ibuf = xmalloc(IDX_BUF);
    x->tbuf = xmalloc(IDX_BUF);
    char msg[512];
    int r = idx_read(x, x->ibuf, IDX_BUF, msg, sizeof msg);
    if (r < 0) {
        err_set(err, "%s", msg);
        idx_close(x);
        return NULL;
    }
    x->ilen = (size_t)r;
    if (r >= 3 && memcmp(x->ibuf, "BZh", 3) == 0) {
        x->is_bz2 = 1;
    } else {
        memcpy(x->tbuf, x->ibuf, x->ilen); /* plain text: what was read is text */
        x->tlen = x->ilen;
        x->ilen = 0;
    }
    return x;
}

/* ---- scanner thread ---- */

#define WEND(sc) ((sc)->wbase + (sc)->wlen)
#define WPTR(sc, off) ((sc)->w + ((off) - (sc)->wbase))

static int scan_error(Bz2Par *b, uint64_t off, const char *fmt, ...) WB_PRINTF(3, 4);

/* Queue an error (in order) and finish the scan. Returns 0. */
static int scan_error(Bz2Par *b, uint64_t off, const char *fmt, ...) {
    b->sc.state = SC_DONE;
    Job *j = job_get(b);
    if (!j) return 0;
    j->kind = JOB_ERROR;
    char why[sizeof j->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    fmt_fit(j->msg, sizeof j->msg, "%s: byte %" PRIu64 ": %s", b->name, off, why);
    job_submit(b, j);
    return 0;
}

/* Queue an error whose message is already complete. Returns 0. */
static int scan_error_msg(Bz2Par *b, const char *msg) {
    b->sc.state = SC_DONE;
    Job *j = job_get(b);
    if (!j) return 0;
    j->kind = JOB_ERROR;
    snprintf(j->msg, sizeof j->msg, "%s", msg);
    job_submit(b, j);
    return 0;
}

static int scan_end(Bz2Par *b, uint64_t garbage) {
    b->sc.state = SC_DONE;
    Job *j = job_get(b);
    if (!j) return 0;
    j->kind = JOB_END;
    j->garbage = garbage;
    j->end_byte = WEND(&b->sc);
    job_submit(b, j);
    return 0;
}

/* Queue the block [a, e) (file bit offsets) for decoding. -1 if closing. */
static int emit_block(Bz2Par *b, uint64_t a, uint64_t e, int end, uint32_t scrc, uint64_t eos) {
    Scan *sc = &b->sc;
    Job *j = job_get(b);
    if (!j) return -1;
    uint64_t wb = sc->wbase * 8;
    j->kind = JOB_BLOCK;
    j->level = sc->level;
    j->start_bit = a;
    j->nbits = e - a;
    j->block_crc = (uint32_t)get_bits(sc->w, a - wb + 48, 32);
    j->stream_start = sc->stream_start;
    j->stream_end = end;
    j->stream_crc = scrc;
    j->eos_bit = eos;
    j->end_byte = end ? (eos + 80 + 7) / 8 : e / 8;
    j->refuted = sc->refuted;
    BitRange r = {sc->w, a - wb, e - a};
    j->in_len = frame_block(&j->in, &j->in_cap, j->level, &r, 1, j->block_crc);
    sc->stream_start = 0;
    sc->refuted = 0;
    job_submit(b, j);
    return 0;
}

static int emit_piece(Bz2Par *b, uint64_t s0, uint64_t e, int last) {
    Scan *sc = &b->sc;
    Job *j = job_get(b);
    if (!j) return -1;
    j->kind = JOB_SEGMENT;
    j->start_bit = s0 * 8;
    j->end_byte = e;
    j->last_piece = last;
    size_t n = (size_t)(e - s0);
    in_reserve(j, n + SLACK);
    memcpy(j->in, WPTR(sc, s0), n);
    memset(j->in + n, 0, SLACK);
    j->in_len = n;
    job_submit(b, j);
    return 0;
}

/* Magic search over the window with file-absolute bit offsets, including
 * the test hooks' fake magics. */
static int scan_find(Bz2Par *b, uint64_t from, uint64_t *pos, uint64_t *resume) {
    Scan *sc = &b->sc;
    uint64_t wb = sc->wbase * 8, limit = WEND(sc) * 8, p = 0, r = 0;
    int k = find_magic(sc->w, from - wb, limit - wb, &p, &r);
    uint64_t best = k ? p + wb : UINT64_MAX;
    *resume = r + wb;
    while (sc->fake_b < b->n_fake_block && b->fake_block[sc->fake_b] < from)
        sc->fake_b++;
    while (sc->fake_e < b->n_fake_eos && b->fake_eos[sc->fake_e] < from)
        sc->fake_e++;
    if (sc->fake_b < b->n_fake_block) {
        uint64_t f = b->fake_block[sc->fake_b];
        if (f < best && f + 48 <= limit) best = f, k = MK_BLOCK;
    }
    if (sc->fake_e < b->n_fake_eos) {
        uint64_t f = b->fake_eos[sc->fake_e];
        if (f < best && f + 48 <= limit) best = f, k = MK_EOS;
    }
    if (k) *pos = best;
    return k;
}

/* The provisional end of stream was real: emit the stream's last block and
 * ignore everything after it. */
static int finish_provisional(Bz2Par *b) {
    Scan *sc = &b->sc;
    if (emit_block(b, sc->cur, sc->prov_eos, 1, sc->prov_crc, sc->prov_eos) < 0) return -1;
    sc->has_prov = 0;
    sc->gstart = (sc->prov_eos + 80 + 7) / 8;
    sc->search = sc->gstart * 8;
    sc->state = SC_GARBAGE;
    return 0;
}

/* Next index offset into sc->seg_end (UINT64_MAX at the end of the index).
 * 0 on success, -1 after queueing an error. */
static int scan_next_offset(Bz2Par *b) {
    Scan *sc = &b->sc;
    char msg[512];
    uint64_t off;
    int r = idx_next(sc->idx, &off, msg, sizeof msg);
    if (r < 0) {
        scan_error_msg(b, msg);
        return -1;
    }
    if (r == 0) {
        sc->seg_end = UINT64_MAX;
        return 0;
    }
    if (b->is_reg && off >= b->fsize) {
        scan_error(b, off,
                   "index offset %" PRIu64 " is beyond the end of the input (%" PRIu64 " bytes)",
                   off, b->fsize);
        return -1;
    }
    sc->seg_end = off;
    return 0;
}

/* Stream header expected at byte sc->hdr. 1: go on, 0: need data/done. */
static int scan_header(Bz2Par *b) {
    Scan *sc = &b->sc;
    uint64_t h = sc->hdr, avail = WEND(sc) - h;
    if (sc->idx && sc->seg_end != UINT64_MAX) {
        if (h == sc->seg_end) {
            sc->seg_start = h;
            sc->state = SC_SEGMENT;
            return scan_next_offset(b) == 0;
        }
        if (h > sc->seg_end)
            return scan_error(b, sc->seg_end,
                              "index offset %" PRIu64 " is not at the start of a bz2 stream",
                              sc->seg_end);
    }
    if (avail < 14 && !sc->eof) return 0;
    const unsigned char *p = WPTR(sc, h);
    if (avail == 0) {
        if (sc->nstreams == 0) return scan_error(b, 0, "not bz2 data (empty input)");
        if (sc->idx && sc->seg_end != UINT64_MAX)
            return scan_error(
                b, h, "index offset %" PRIu64 " is beyond the end of the input (%" PRIu64 " bytes)",
                sc->seg_end, h);
        return scan_end(b, 0);
    }
    if (!is_header_prefix(p, avail)) {
        if (sc->nstreams == 0) return scan_error(b, h, "not bz2 data");
        sc->gstart = h;
        sc->search = h * 8;
        sc->state = SC_GARBAGE;
        return 1;
    }
    if (avail < 4 && sc->nstreams == 0) return scan_error(b, h, "not bz2 data");
    if (avail < 10) return scan_error(b, WEND(sc), "unexpected end of bz2 data (truncated file?)");
    int kind = magic_kind(get_bits(sc->w, (h - sc->wbase + 4) * 8, 48));
    if (!kind) return scan_error(b, h, sc->nstreams ? "corrupt bz2 stream header" : "not bz2 data");
    sc->nstreams++;
    sc->level = p[3];
    if (kind == MK_EOS) { /* empty stream */
        if (avail < 14)
            return scan_error(b, WEND(sc), "unexpected end of bz2 data (truncated file?)");
        if (get_bits(sc->w, (h - sc->wbase + 10) * 8, 32) != 0)
            return scan_error(b, h + 4, "bz2 stream CRC mismatch");
        sc->hdr = h + 14;
        return 1;
    }
    sc->state = SC_BLOCKS;
    sc->cur = (h + 4) * 8;
    sc->search = sc->cur + 80;
    sc->stream_start = 1;
    sc->has_prov = 0;
    sc->refuted = 0;
    return 1;
}

/* Blocks of the current stream. 1: go on, 0: need data/done. */
static int scan_blocks(Bz2Par *b) {
    Scan *sc = &b->sc;
    for (;;) {
        uint64_t p = 0, resume = 0;
        int kind = scan_find(b, sc->search, &p, &resume);
        if (!kind) {
            if (!sc->eof) {
                sc->search = resume;
                if (resume - sc->cur <= MAX_BLOCK_BYTES * 8) return 0;
                if (sc->has_prov) return finish_provisional(b) == 0;
                return scan_error(b, sc->cur / 8,
                                  "corrupt bz2 data (no block boundary within %d MB)",
                                  (int)(MAX_BLOCK_BYTES >> 20));
            }
            if (sc->has_prov) return finish_provisional(b) == 0;
            return scan_error(b, WEND(sc), "unexpected end of bz2 data (truncated file?)");
        }
        if (kind == MK_BLOCK) {
            if (sc->has_prov) {
                if (!sc->refuted) sc->refuted = sc->prov_eos;
                sc->has_prov = 0;
            }
            if (emit_block(b, sc->cur, p, 0, 0, 0) < 0) return 0;
            sc->cur = p;
            sc->search = p + 80;
            continue;
        }
        /* end-of-stream candidate */
        uint64_t nh = (p + 80 + 7) / 8, wend = WEND(sc);
        if (wend * 8 < p + 80 || wend < nh + 3) {
            if (!sc->eof) {
                sc->search = p;
                return 0;
            }
            if (wend * 8 < p + 80) {
                if (emit_block(b, sc->cur, p, 0, 0, 0) < 0) return 0;
                return scan_error(b, wend, "unexpected end of bz2 data (truncated file?)");
            }
        }
        uint32_t crc = (uint32_t)get_bits(sc->w, p - sc->wbase * 8 + 48, 32);
        uint64_t rem = wend - nh;
        if (rem == 0 || memcmp(WPTR(sc, nh), "BZh", rem < 3 ? (size_t)rem : 3) == 0) {
            if (sc->has_prov) {
                if (!sc->refuted) sc->refuted = sc->prov_eos;
                sc->has_prov = 0;
            }
            if (emit_block(b, sc->cur, p, 1, crc, p) < 0) return 0;
            sc->state = SC_HEADER;
            sc->hdr = nh;
            return 1;
        }
        if (!sc->has_prov) {
            sc->has_prov = 1;
            sc->prov_eos = p;
            sc->prov_crc = crc;
        }
        sc->search = p + 48;
    }
}

/* Index piece starting at sc->seg_start. 1: go on, 0: need data/done. */
static int scan_segment(Bz2Par *b) {
    Scan *sc = &b->sc;
    uint64_t s0 = sc->seg_start, wend = WEND(sc), avail = wend - s0;
    if (avail < 3 && !sc->eof) return 0;
    if (avail == 0) {
        if (s0 == 0) return scan_error(b, 0, "not bz2 data (empty input)");
        return scan_end(b, 0);
    }
    if (avail < 3 || memcmp(WPTR(sc, s0), "BZh", 3) != 0) {
        if (s0 == 0) return scan_error(b, 0, "not bz2 data");
        return scan_error(b, s0,
                          "index offset %" PRIu64
                          " does not point at a bz2 stream (index for another file?)",
                          s0);
    }
    if (wend >= sc->seg_end) {
        uint64_t e = sc->seg_end;
        if (wend - e < 3 && !sc->eof) return 0;
        if (wend - e < 3 || memcmp(WPTR(sc, e), "BZh", 3) != 0)
            return scan_error(b, e,
                              "index offset %" PRIu64
                              " does not point at a bz2 stream (index for another file?)",
                              e);
        sc->nstreams++;
        if (emit_piece(b, s0, sc->seg_end, 0) < 0) return 0;
        sc->seg_start = sc->seg_end;
        return scan_next_offset(b) == 0;
    }
    if (avail > SEG_MAX || (sc->seg_end != UINT64_MAX && sc->seg_end - s0 > SEG_MAX)) {
        sc->state = SC_HEADER; /* too big to hold whole: bit-scan it */
        sc->hdr = s0;
        return 1;
    }
    if (!sc->eof) return 0;
    if (sc->seg_end != UINT64_MAX) {
        if (emit_piece(b, s0, wend, 1) < 0) return 0;
        return scan_error(
            b, wend, "index offset %" PRIu64 " is beyond the end of the input (%" PRIu64 " bytes)",
            sc->seg_end, wend);
    }
    sc->nstreams++;
    if (emit_piece(b, s0, wend, 1) < 0) return 0;
    return scan_end(b, 0);
}

/* Data after the last stream that does not start like a stream header:
 * ignored unless a bz2 block turns up in it (then it is a stream whose
 * header was damaged). 1: go on, 0: need data/done. */
static int scan_garbage(Bz2Par *b) {
    Scan *sc = &b->sc;
    uint64_t p, resume;
    if (scan_find(b, sc->search, &p, &resume))
        return scan_error(b, sc->gstart,
                          "data after the end of a bz2 stream is not a bz2 stream "
                          "(corrupt stream header?)");
    sc->search = resume;
    if (!sc->eof) return 0;
    return scan_end(b, WEND(sc) - sc->gstart);
}

/* Run the scan state machine on the data in the window. 1: needs more
 * input, 0: finished (end or error queued, or closing). */
static int scan_run(Bz2Par *b) {
    Scan *sc = &b->sc;
    for (;;) {
        int r;
        switch (sc->state) {
        case SC_HEADER:
            r = scan_header(b);
            break;
        case SC_BLOCKS:
            r = scan_blocks(b);
            break;
        case SC_SEGMENT:
            r = scan_segment(b);
            break;
        case SC_GARBAGE:
            r = scan_garbage(b);
            break;
        default:
            return 0;
        }
        if (sc->state == SC_DONE) return 0;
        if (!r) return 1;
    }
}

/* First byte offset the scanner still needs. */
static uint64_t scan_keep(const Scan *sc) {
    switch (sc->state) {
    case SC_HEADER:
        return sc->hdr;
    case SC_BLOCKS:
        return sc->cur / 8;
    case SC_SEGMENT:
        return sc->seg_start;
    case SC_GARBAGE:
        return sc->search / 8;
    default:
        return WEND(sc);
    }
}

/* Read the next chunk into the window. 0 ok (sets sc->eof at the end), -1
 * after queueing an error, or when closing. */
static int scan_read(Bz2Par *b) {
    Scan *sc = &b->sc;
    if (sc->wcap - sc->wlen - SLACK < CHUNK) {
        uint64_t keep = scan_keep(sc);
        if (keep > WEND(sc)) keep = WEND(sc);
        size_t drop = (size_t)(keep - sc->wbase);
        if (drop) {
            memmove(sc->w, sc->w + drop, sc->wlen - drop);
            sc->wbase += drop;
            sc->wlen -= drop;
        }
        if (sc->wcap - sc->wlen - SLACK < CHUNK) {
            sc->wcap = (sc->wlen + CHUNK + SLACK) * 2;
            sc->w = xrealloc(sc->w, sc->wcap);
        }
    }
    for (;;) {
        pthread_mutex_lock(&b->mu);
        int stop = b->stop;
        pthread_mutex_unlock(&b->mu);
        if (stop) return -1;
        if (!b->is_reg) {
            struct pollfd pfd = {.fd = b->fd, .events = POLLIN};
            int pr = poll(&pfd, 1, 200);
            if (pr == 0 || (pr < 0 && errno == EINTR)) continue;
        }
        size_t room = sc->wcap - sc->wlen - SLACK;
        if (room > 4 * CHUNK) room = 4 * CHUNK;
        ssize_t n = read(b->fd, sc->w + sc->wlen, room);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            scan_error(b, WEND(sc), "read error: %s", strerror(errno));
            return -1;
        }
        if (n == 0)
            sc->eof = 1;
        else
            sc->wlen += (size_t)n;
        memset(sc->w + sc->wlen, 0, SLACK);
        return 0;
    }
}

static void *scan_main(void *arg) {
    Bz2Par *b = arg;
    for (;;) {
        if (!scan_run(b)) break;
        if (scan_read(b) < 0) break;
    }
    return NULL;
}

/* ---- caller side ---- */

/* The i-th job still in flight (0 = head), once it is finished. */
static Job *wait_nth(Bz2Par *b, int i) {
    pthread_mutex_lock(&b->mu);
    Job *j;
    for (;;) {
        j = b->head;
        for (int t = 0; t < i && j; t++)
            j = j->next;
        if (j && j->state == ST_DONE) break;
        pthread_cond_wait(&b->cv_done, &b->mu);
    }
    pthread_mutex_unlock(&b->mu);
    return j;
}

static void pop_head(Bz2Par *b) {
    pthread_mutex_lock(&b->mu);
    Job *j = b->head;
    b->head = j->next;
    if (!b->head) b->tail = NULL;
    b->inflight--;
    pthread_cond_signal(&b->cv_space);
    pthread_mutex_unlock(&b->mu);
}

/* Job j failed to decode: retry it merged with the following block
 * candidates (a false block magic split it). 0 if a merge decoded; the
 * merged-in jobs are then consumed. */
static int try_merge(Bz2Par *b, Job *j) {
    BitRange r[MAX_MERGE + 1];
    Job *parts[MAX_MERGE];
    r[0] = (BitRange){j->in, 32, j->nbits};
    int stream_end = j->stream_end;
    for (int m = 1; m <= MAX_MERGE && !stream_end; m++) {
        Job *k = wait_nth(b, m - 1);
        if (k->kind != JOB_BLOCK || k->stream_start) break;
        parts[m - 1] = k;
        r[m] = (BitRange){k->in, 32, k->nbits};
        stream_end = k->stream_end;
        OutBuf o = {NULL, 0, 0};
        char msg[256];
        out_reserve(&o, j->out.cap);
        if (decode_ranges(&b->ac, &b->scratch, &b->scratch_cap, j->level, r, m + 1, j->block_crc,
                          &o, msg, sizeof msg) != DEC_OK) {
            /* a CRC mismatch means the whole block was read: the better report */
            if (strstr(msg, "CRC")) snprintf(j->msg, sizeof j->msg, "%s", msg);
            free(o.p);
            continue;
        }
        free(j->out.p);
        j->out = o;
        j->ok = 1;
        for (int t = 0; t < m; t++) {
            if (parts[t]->refuted && !j->refuted) j->refuted = parts[t]->refuted;
            j->nbits += parts[t]->nbits;
            if (t == m - 1) {
                j->stream_end = parts[t]->stream_end;
                j->stream_crc = parts[t]->stream_crc;
                j->eos_bit = parts[t]->eos_bit;
                j->end_byte = parts[t]->end_byte;
            }
            pop_head(b);
            job_recycle(b, parts[t]);
        }
        return 0;
    }
    return -1;
}

/* Job j spans a provisional end of stream that was taken back, and failed
 * to decode: see whether the end was real (then the data after it is a
 * broken stream header). 0 if the block decodes when cut there. */
static int try_cut(Bz2Par *b, Job *j) {
    if (!j->refuted) return -1;
    uint64_t n = j->refuted - j->start_bit;
    BitRange r = {j->in, 32, n};
    char msg[256];
    j->out.len = 0;
    if (decode_ranges(&b->ac, &b->scratch, &b->scratch_cap, j->level, &r, 1, j->block_crc, &j->out,
                      msg, sizeof msg) != DEC_OK)
        return -1;
    j->stream_end = 1;
    j->stream_crc = (uint32_t)get_bits(j->in, 32 + n + 48, 32);
    j->eos_bit = j->refuted;
    j->end_byte = (j->refuted + 80 + 7) / 8;
    j->ok = 1;
    return 0;
}

static void set_saved(Bz2Par *b, uint64_t off, const char *what) {
    err_set(&b->saved, "%s: byte %" PRIu64 ": %s", b->name, off, what);
}

/* Next piece of output in input order (contract in bz2par.h): 1 with
 * *data and *len owned by b until the next call, 0 at the end, -1 with err. */
int bz2par_next(Bz2Par *b, const char **data, size_t *len, Err *err) {
    *data = NULL;
    *len = 0;
    for (;;) {
        if (b->cur) {
            job_recycle(b, b->cur);
            b->cur = NULL;
        }
        if (b->done > 0) return 0;
        if (b->done < 0 || b->pending_err) {
            b->done = -1;
            *err = b->saved;
            return -1;
        }
        Job *j = wait_nth(b, 0);
        pop_head(b);
        b->cur = j;
        switch (j->kind) {
        case JOB_END:
            b->garbage += j->garbage;
            b->cpos = j->end_byte;
            b->done = 1;
            continue;
        case JOB_ERROR:
            snprintf(b->saved.msg, sizeof b->saved.msg, "%s", j->msg);
            b->done = -1;
            continue;
        case JOB_SEGMENT:
            b->garbage += j->garbage;
            b->cpos = j->end_byte;
            if (!j->ok) {
                set_saved(b, j->err_byte, j->msg);
                b->pending_err = 1;
            }
            break;
        default: /* JOB_BLOCK */
            if (!j->ok && try_merge(b, j) < 0) {
                if (try_cut(b, j) == 0) {
                    set_saved(b, (j->refuted + 80 + 7) / 8,
                              "data after the end of a bz2 stream is not a bz2 stream "
                              "(corrupt stream header?)");
                    b->pending_err = 1;
                } else {
                    set_saved(b, j->start_bit / 8, j->msg);
                    b->done = -1;
                    continue;
                }
            }
            if (j->stream_start) b->comb = 0;
            b->comb = crc_combine(b->comb, j->block_crc);
            if (j->stream_end && b->comb != j->stream_crc) {
                set_saved(b, j->eos_bit / 8, "bz2 stream CRC mismatch");
                b->pending_err = 1;
            }
            b->cpos = j->end_byte;
            break;
        }
        if (j->out.len == 0) continue;
        *data = (const char *)j->out.p;
        *len = j->out.len;
        return 1;
    }
}

/* Compressed end offset of the output returned so far (caller's thread). */
uint64_t bz2par_compressed_pos(const Bz2Par *b) { return b->cpos; }

/* Bytes of ignored non-bz2 data after the last stream, known at the end. */
uint64_t bz2par_trailing_garbage(const Bz2Par *b) { return b->garbage; }

/* ---- open / close ---- */

/* Start the scanner and opts->nthreads workers on fd (contract in
 * bz2par.h). Returns the decoder, to be freed with bz2par_close(), or NULL
 * with err filled; fd stays the caller's. */
Bz2Par *bz2par_open(int fd, const Bz2ParOpts *opts, Err *err) {
    pthread_once(&magic_once, magic_tables_init);
    Bz2Par *b = xcalloc(1, sizeof *b);
    b->fd = fd;
    b->name = xstrdup(opts && opts->name ? opts->name : "-");
    int n = opts ? opts->nthreads : 1;
    b->nthreads = n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n;
    b->max_inflight = 2 * b->nthreads + 4;
    if (opts) {
        b->fake_block = opts->test_fake_block;
        b->n_fake_block = opts->test_fake_block ? opts->n_test_fake_block : 0;
        b->fake_eos = opts->test_fake_eos;
        b->n_fake_eos = opts->test_fake_eos ? opts->n_test_fake_eos : 0;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        err_set(err, "%s: %s", b->name, strerror(errno));
        free(b->name);
        free(b);
        return NULL;
    }
    b->is_reg = S_ISREG(st.st_mode);
    b->fsize = (uint64_t)st.st_size;
    Scan *sc = &b->sc;
    sc->state = SC_HEADER;
    if (opts && opts->index_path) {
        sc->idx = idx_open(opts->index_path, err);
        if (!sc->idx) goto fail;
        char msg[512];
        uint64_t off;
        int r = idx_next(sc->idx, &off, msg, sizeof msg);
        if (r < 0) {
            err_set(err, "%s", msg);
            goto fail;
        }
        if (r == 0) {
            err_set(err, "%s: no offsets in index", opts->index_path);
            goto fail;
        }
        if (b->is_reg && off >= b->fsize) {
            err_set(err,
                    "%s: index offset %" PRIu64 " is beyond the end of the input (%" PRIu64
                    " bytes)",
                    b->name, off, b->fsize);
            goto fail;
        }
        sc->state = SC_SEGMENT;
        sc->seg_start = 0;
        sc->seg_end = off;
    }
    sc->wcap = WINDOW_INIT + SLACK;
    sc->w = xmalloc(sc->wcap);
    memset(sc->w, 0, SLACK);

    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv_work, NULL);
    pthread_cond_init(&b->cv_done, NULL);
    pthread_cond_init(&b->cv_space, NULL);
    b->workers = xcalloc((size_t)b->nthreads, sizeof *b->workers);
    const char *dec = getenv("WIKIBERT_BZ2");
    int only_lib = dec && strcmp(dec, "libbz2") == 0;
    for (int i = 0; i < b->nthreads; i++) {
        b->workers[i].b = b;
        b->workers[i].ac.libbz2 = only_lib;
        int e = pthread_create(&b->workers[i].th, NULL, worker_main, &b->workers[i]);
        if (e) {
            err_set(err, "%s: cannot start thread: %s", b->name, strerror(e));
            bz2par_close(b);
            return NULL;
        }
        b->nworkers++;
    }
    int e = pthread_create(&b->scan_th, NULL, scan_main, b);
    if (e) {
        err_set(err, "%s: cannot start thread: %s", b->name, strerror(e));
        bz2par_close(b);
        return NULL;
    }
    b->scan_started = 1;
    return b;

fail:
    idx_close(sc->idx);
    free(b->name);
    free(b);
    return NULL;
}

/* Stop and join all threads, free everything; fine at any point, and on
 * NULL. Does not close the fd. */
void bz2par_close(Bz2Par *b) {
    if (!b) return;
    pthread_mutex_lock(&b->mu);
    b->stop = 1;
    pthread_cond_broadcast(&b->cv_work);
    pthread_cond_broadcast(&b->cv_done);
    pthread_cond_broadcast(&b->cv_space);
    pthread_mutex_unlock(&b->mu);
    if (b->scan_started) pthread_join(b->scan_th, NULL);
    for (int i = 0; i < b->nworkers; i++)
        pthread_join(b->workers[i].th, NULL);
    for (int i = 0; i < b->nthreads; i++) {
        ac_destroy(&b->workers[i].ac);
        free(b->workers[i].scratch);
    }
    free(b->workers);
    for (Job *j = b->head, *nx; j; j = nx) {
        nx = j->next;
        job_free(j);
    }
    for (Job *j = b->pool, *nx; j; j = nx) {
        nx = j->next;
        job_free(j);
    }
    job_free(b->cur);
    ac_destroy(&b->ac);
    free(b->scratch);
    idx_close(b->sc.idx);
    free(b->sc.w);
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv_work);
    pthread_cond_destroy(&b->cv_done);
    pthread_cond_destroy(&b->cv_space);
    free(b->name);
    free(b);
}

/* libbz2's version string, for --version. */
const char *bz2par_lib_version(void) { return BZ2_bzlibVersion(); }
