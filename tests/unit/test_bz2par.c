/* test_bz2par.c - unit tests for the parallel bz2 decoder (prep/bz2par.c).
 *
 * All bz2 data is made here with libbz2 (BZ2_bzBuffToBuffCompress, mostly
 * with 100k blocks so that a few hundred KB of text gives many blocks), so
 * the suite needs no files. Checks: byte-identical output for 1, 2, 3 and 8
 * threads from a file and from a pipe; multistream input with and without
 * an index; errors (block CRC, corrupt data, truncation, not bz2, broken
 * stream header, bad index) with the right byte offset and with all output
 * before the bad block delivered; trailing garbage; recovery from false
 * magics through the test hooks; early close; and the real
 * Wikimedia multistream sample shipped in tests/data, with its index.
 */
#include <bzlib.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/test.h"
#include "common/buf.h"
#include "prep/bz2par.h"

/* ---- helpers: data ---- */

static uint64_t rng_state = 88172645463325252ULL;

static uint32_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

/* Varied text with no byte repeated 3 times in a row (so every 100k block
 * holds exactly 100000-19 input bytes). */
static void make_text(Buf *b, size_t n) {
    static const char *words[] = {"the",  "wiki", "page",   "article", "Ελλάδα", "<title>",
                                  "data", "bz2",  "stream", "block",   "ref",    "{{cite}}"};
    buf_reserve(b, n + 64);
    while (b->len < n) {
        if (rnd() % 3 == 0) {
            buf_puts(b, words[rnd() % 12]);
        } else {
            int wl = 1 + (int)(rnd() % 9);
            for (int i = 0; i < wl; i++)
                buf_putc(b, (char)('a' + rnd() % 26));
        }
        buf_putc(b, rnd() % 11 == 0 ? '\n' : ' ');
    }
    b->len = n;
    for (size_t i = 2; i < n; i++)
        if (b->data[i] == b->data[i - 1] && b->data[i] == b->data[i - 2])
            b->data[i] = b->data[i] == 'q' ? 'z' : 'q';
}

#define BLOCK1 (100000 - 19) /* input bytes per block at level 1 without runs */

static void compress_into(Buf *dst, const void *src, size_t n, int level) {
    unsigned cap = (unsigned)(n + n / 50 + 1024);
    buf_reserve(dst, cap);
    unsigned got = cap;
    int r = BZ2_bzBuffToBuffCompress(dst->data + dst->len, &got, (char *)src, (unsigned)n, level, 0,
                                     30);
    if (r != BZ_OK) {
        fprintf(stderr, "compress failed %d\n", r);
        exit(1);
    }
    dst->len += got;
}

static uint64_t get48(const unsigned char *p, uint64_t bit) {
    uint64_t v = 0;
    for (int i = 0; i < 48; i++) {
        uint64_t q = bit + (uint64_t)i;
        v = (v << 1) | ((p[q >> 3] >> (7 - (q & 7))) & 1);
    }
    return v;
}

/* Bit offsets of every block magic, found one bit at a time. */
static size_t find_blocks(const Buf *z, uint64_t *pos, size_t max) {
    size_t n = 0;
    const unsigned char *p = (const unsigned char *)z->data;
    for (uint64_t bit = 0; bit + 48 <= (uint64_t)z->len * 8 && n < max; bit++)
        if (get48(p, bit) == 0x314159265359ULL) pos[n++] = bit;
    return n;
}

static void flip_bit(Buf *z, uint64_t bit) { z->data[bit >> 3] ^= (char)(0x80 >> (bit & 7)); }

/* ---- helpers: running the decoder ---- */

typedef struct Res {
    int rc;
    Buf out;
    Err err;
    uint64_t cpos, garbage;
} Res;

typedef struct Writer {
    int fd;
    const char *data;
    size_t len;
} Writer;

static void *writer_main(void *arg) {
    Writer *w = arg;
    size_t off = 0;
    while (off < w->len) {
        size_t n = w->len - off > 7777 ? 7777 : w->len - off; /* odd pieces */
        ssize_t r = write(w->fd, w->data + off, n);
        if (r < 0) {
            if (errno == EINTR) continue;
            break;
        }
        off += (size_t)r;
    }
    close(w->fd);
    return NULL;
}

static char tmpdir_path[64];

static int temp_file(const void *data, size_t len) {
    char path[128];
    snprintf(path, sizeof path, "%s/in.XXXXXX", tmpdir_path);
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    unlink(path);
    if (write(fd, data, len) != (ssize_t)len) {
        close(fd);
        return -1;
    }
    lseek(fd, 0, SEEK_SET);
    return fd;
}

enum { VIA_FILE, VIA_PIPE };

/* Decode data (via a temp file or a pipe fed by a thread); collect all
 * output, the return code of the last bz2par_next (or -2 if open failed). */
static Res run(const Buf *z, int nthreads, int via, const Bz2ParOpts *base) {
    Res res;
    memset(&res, 0, sizeof res);
    Bz2ParOpts o;
    if (base)
        o = *base;
    else
        memset(&o, 0, sizeof o);
    o.nthreads = nthreads;
    o.name = "in.bz2";
    int fd;
    pthread_t th;
    Writer w;
    int piped = via == VIA_PIPE;
    if (piped) {
        int p[2];
        if (pipe(p) < 0) exit(1);
        fd = p[0];
        w = (Writer){p[1], z->data, z->len};
        pthread_create(&th, NULL, writer_main, &w);
    } else {
        fd = temp_file(z->data, z->len);
    }
    Bz2Par *b = bz2par_open(fd, &o, &res.err);
    if (!b) {
        res.rc = -2;
    } else {
        const char *d;
        size_t n;
        while ((res.rc = bz2par_next(b, &d, &n, &res.err)) > 0) {
            if (n == 0) res.rc = -9; /* pieces must not be empty */
            buf_append(&res.out, d, n);
        }
        if (res.rc < 0) {
            const char *d2;
            size_t n2;
            Err e2;
            if (bz2par_next(b, &d2, &n2, &e2) != -1 || strcmp(e2.msg, res.err.msg) != 0)
                res.rc = -8; /* the error must stick */
        }
        res.cpos = bz2par_compressed_pos(b);
        res.garbage = bz2par_trailing_garbage(b);
        bz2par_close(b);
    }
    close(fd);
    if (piped) pthread_join(th, NULL);
    if (!res.out.data) buf_reserve(&res.out, 1);
    return res;
}

static void res_free(Res *r) { buf_free(&r->out); }

static int has(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

static int is_prefix(const Res *r, const Buf *want, size_t n) {
    return r->out.len == n && n <= want->len && memcmp(r->out.data, want->data, n) == 0;
}

static const int threads[] = {1, 2, 3, 8};

/* Expect an exact, clean decode for every thread count and both inputs. */
static void check_ok(const char *what, const Buf *z, const Buf *want, const Bz2ParOpts *o) {
    for (int t = 0; t < 4; t++)
        for (int via = 0; via < 2; via++) {
            Res r = run(z, threads[t], via, o);
            char d[200];
            snprintf(d, sizeof d, "%s (-j%d, %s)", what, threads[t], via ? "pipe" : "file");
            test_cond(d, r.rc == 0);
            if (r.rc != 0) printf("  rc %d: %s\n", r.rc, r.err.msg);
            test_cond(d, r.out.len == want->len && memcmp(r.out.data, want->data, want->len) == 0);
            test_cond(d, r.cpos == z->len);
            res_free(&r);
        }
}

/* Expect an error containing `msg` at "byte N", after exactly `prefix`
 * bytes of correct output, for every thread count and both inputs. */
static void check_err(const char *what, const Buf *z, const Buf *want, size_t prefix, uint64_t byte,
                      const char *msg, const Bz2ParOpts *o) {
    char at[64];
    snprintf(at, sizeof at, "in.bz2: byte %" PRIu64 ": ", byte);
    for (int t = 0; t < 4; t++)
        for (int via = 0; via < 2; via++) {
            Res r = run(z, threads[t], via, o);
            char d[200];
            snprintf(d, sizeof d, "%s (-j%d, %s)", what, threads[t], via ? "pipe" : "file");
            test_cond(d, r.rc == -1);
            test_cond(d, has(r.err.msg, at) && has(r.err.msg, msg));
            if (r.rc != -1 || !has(r.err.msg, at) || !has(r.err.msg, msg))
                printf("  rc %d, got \"%s\", want \"%s%s\"\n", r.rc, r.err.msg, at, msg);
            test_cond(d, is_prefix(&r, want, prefix));
            if (!is_prefix(&r, want, prefix))
                printf("  output %zu bytes, want a %zu-byte prefix\n", r.out.len, prefix);
            res_free(&r);
        }
}

/* ---- tests ---- */

static void test_single_stream(const Buf *text) {
    Buf z = {0};
    compress_into(&z, text->data, text->len, 1);
    check_ok("single stream, level 1", &z, text, NULL);
    buf_free(&z);

    compress_into(&z, text->data, text->len, 9);
    check_ok("single stream, level 9", &z, text, NULL);
    buf_free(&z);

    Buf empty = {0};
    buf_reserve(&empty, 1);
    compress_into(&z, "", 0, 9);
    check_ok("empty stream", &z, &empty, NULL);
    buf_free(&z);

    compress_into(&z, "x", 1, 9);
    Buf one = {0};
    buf_append(&one, "x", 1);
    check_ok("one byte", &z, &one, NULL);
    buf_free(&z);
    buf_free(&one);
    buf_free(&empty);
}

static void test_rle_block(void) {
    /* long runs: RLE makes one 100k block expand to megabytes */
    Buf t = {0};
    for (int i = 0; i < 3; i++) {
        size_t n = (size_t)(1 + i) * 1500000;
        buf_reserve(&t, n);
        memset(t.data + t.len, 'a' + i, n);
        t.len += n;
        buf_puts(&t, "separator text between the runs");
    }
    Buf z = {0};
    compress_into(&z, t.data, t.len, 1);
    check_ok("runs of megabytes", &z, &t, NULL);
    buf_free(&z);
    buf_free(&t);
}

/* Several streams of different levels (one empty) back to back. */
static void make_multi(const Buf *text, Buf *z, Buf *want, uint64_t *offs, size_t *noffs) {
    static const int levels[] = {1, 9, 3, 1, 5, 1, 2};
    static const size_t sizes[] = {1000, 250000, 0, 120000, 7, 180000, 60000};
    size_t pos = 0;
    *noffs = 0;
    for (int i = 0; i < 7; i++) {
        offs[(*noffs)++] = z->len;
        compress_into(z, text->data + pos, sizes[i], levels[i]);
        buf_append(want, text->data + pos, sizes[i]);
        pos += sizes[i];
    }
}

static void test_multistream(const Buf *text) {
    Buf z = {0}, want = {0};
    uint64_t offs[16];
    size_t n;
    make_multi(text, &z, &want, offs, &n);
    check_ok("multistream", &z, &want, NULL);

    /* corrupt block in the 4th stream: offset is that block's magic */
    uint64_t blk[64];
    size_t nb = find_blocks(&z, blk, 64);
    size_t k = 0;
    while (k < nb && blk[k] < offs[3] * 8)
        k++;
    test_cond("found blocks of stream 4", k < nb && blk[k] == offs[3] * 8 + 32);
    Buf bad = {0};
    buf_append(&bad, z.data, z.len);
    flip_bit(&bad, blk[k] + 60); /* stored block CRC */
    check_err("multistream, CRC error in stream 4", &bad, &want, 1000 + 250000, blk[k] / 8,
              "bz2 block CRC mismatch", NULL);
    buf_free(&bad);

    /* broken header of the 2nd stream (after a stream with a block) */
    buf_append(&bad, z.data, z.len);
    bad.data[offs[1]] = 'C';
    check_err("multistream, broken 2nd header", &bad, &want, 1000, offs[1], "not a bz2 stream",
              NULL);
    buf_free(&bad);

    /* broken header of the 4th stream (after an empty stream) */
    buf_append(&bad, z.data, z.len);
    bad.data[offs[3] + 1] = 'X';
    check_err("multistream, broken 4th header", &bad, &want, 1000 + 250000, offs[3],
              "not a bz2 stream", NULL);
    buf_free(&bad);

    /* "BZh" followed by nonsense */
    buf_append(&bad, z.data, z.len);
    bad.data[offs[3] + 5] ^= 0x10;
    check_err("multistream, bad magic after 4th header", &bad, &want, 1000 + 250000, offs[3],
              "corrupt bz2 stream header", NULL);
    buf_free(&bad);

    /* stream CRC (combined) wrong: last stream's trailer */
    buf_append(&bad, z.data, z.len);
    uint64_t eos = 0;
    const unsigned char *p = (const unsigned char *)bad.data;
    for (uint64_t bit = (uint64_t)offs[6] * 8; bit + 48 <= (uint64_t)bad.len * 8; bit++)
        if (get48(p, bit) == 0x177245385090ULL) eos = bit;
    test_cond("found last EOS", eos > 0);
    flip_bit(&bad, eos + 48 + 5);
    check_err("multistream, stream CRC", &bad, &want, want.len, eos / 8, "bz2 stream CRC mismatch",
              NULL);
    buf_free(&bad);

    buf_free(&z);
    buf_free(&want);
}

static void test_corruption(const Buf *text) {
    Buf z = {0};
    compress_into(&z, text->data, text->len, 1);
    uint64_t blk[64];
    size_t nb = find_blocks(&z, blk, 64);
    test_cond("many blocks", nb >= 5);
    if (nb < 5) return;

    Buf bad = {0};
    buf_append(&bad, z.data, z.len);
    flip_bit(&bad, blk[3] + 48 + 7);
    check_err("CRC error in block 3", &bad, text, 3 * (size_t)BLOCK1, blk[3] / 8,
              "bz2 block CRC mismatch", NULL);
    buf_free(&bad);

    /* data damage: either a structural error or a CRC mismatch */
    buf_append(&bad, z.data, z.len);
    flip_bit(&bad, (blk[2] + blk[3]) / 2);
    check_err("damaged data in block 2", &bad, text, 2 * (size_t)BLOCK1, blk[2] / 8, "bz2 ", NULL);
    buf_free(&bad);

    buf_append(&bad, z.data, z.len);
    flip_bit(&bad, blk[0] + 48 + 32 + 30);
    check_err("damaged block 0 header", &bad, text, 0, blk[0] / 8, "bz2 ", NULL);
    buf_free(&bad);

    /* damaged last block */
    buf_append(&bad, z.data, z.len);
    flip_bit(&bad, blk[nb - 1] + 48 + 3);
    check_err("CRC error in the last block", &bad, text, (nb - 1) * (size_t)BLOCK1, blk[nb - 1] / 8,
              "bz2 block CRC mismatch", NULL);
    buf_free(&bad);

    /* truncation: mid-block, inside the EOS trailer, right after the header */
    Buf cut = {0};
    buf_append(&cut, z.data, (size_t)(blk[4] / 8 + 1000));
    check_err("truncated in block 4", &cut, text, 4 * (size_t)BLOCK1, cut.len,
              "unexpected end of bz2 data (truncated file?)", NULL);
    buf_free(&cut);
    buf_append(&cut, z.data, z.len - 3);
    check_err("truncated in the stream CRC", &cut, text, text->len, cut.len,
              "unexpected end of bz2 data", NULL);
    buf_free(&cut);
    buf_append(&cut, z.data, 4);
    check_err("header only", &cut, text, 0, 4, "unexpected end of bz2 data", NULL);
    buf_free(&cut);
    buf_append(&cut, z.data, 2);
    check_err("two bytes", &cut, text, 0, 0, "not bz2 data", NULL);
    buf_free(&cut);
    buf_append(&cut, z.data, (size_t)(blk[1] / 8));
    check_err("cut at a block boundary", &cut, text, 0, cut.len, "unexpected end of bz2 data",
              NULL);
    buf_free(&cut);

    /* not bz2 at all, empty input */
    Buf junk = {0};
    buf_append(&junk, text->data, 5000);
    check_err("plain text", &junk, text, 0, 0, "not bz2 data", NULL);
    buf_clear(&junk);
    check_err("empty input", &junk, text, 0, 0, "not bz2 data", NULL);
    buf_free(&junk);
    buf_free(&z);
}

static void test_trailing(const Buf *text) {
    Buf z = {0}, want = {0};
    buf_append(&want, text->data, 300000);
    compress_into(&z, want.data, want.len, 1);
    size_t zlen = z.len;

    buf_append(&z, "\0\0\0\0\0\0\0\0\0\0", 10);
    check_ok("trailing zeros", &z, &want, NULL);
    Res r = run(&z, 2, VIA_FILE, NULL);
    test_cond("trailing zeros counted", r.rc == 0 && r.garbage == 10);
    res_free(&r);

    z.len = zlen;
    buf_puts(&z, "some junk that is not bz2\n");
    check_ok("trailing junk", &z, &want, NULL);
    r = run(&z, 1, VIA_PIPE, NULL);
    test_cond("trailing junk counted", r.rc == 0 && r.garbage == 26);
    res_free(&r);

    z.len = zlen;
    buf_puts(&z, "BZ");
    check_err("trailing start of a header", &z, &want, want.len, zlen + 2,
              "unexpected end of bz2 data", NULL);

    z.len = zlen;
    buf_puts(&z, "BZh9");
    check_err("trailing header only", &z, &want, want.len, zlen + 4, "unexpected end of bz2 data",
              NULL);
    buf_free(&z);
    buf_free(&want);
}

/* False magics (through the test hooks) must not change the output. */
static void test_false_magic(const Buf *text) {
    Buf z = {0};
    compress_into(&z, text->data, text->len, 1);
    uint64_t blk[64];
    size_t nb = find_blocks(&z, blk, 64);
    if (nb < 5) return;
    uint64_t fb[] = {blk[1] + 5000, blk[2] + 999, blk[2] + 20001, blk[2] + 300001,
                     blk[nb - 1] + 4321};
    Bz2ParOpts o;
    memset(&o, 0, sizeof o);
    o.test_fake_block = fb;
    o.n_test_fake_block = 5;
    check_ok("fake block magics", &z, text, &o);

    uint64_t fe[] = {blk[1] + 777, blk[3] + 12345, blk[nb - 1] + 1000};
    memset(&o, 0, sizeof o);
    o.test_fake_eos = fe;
    o.n_test_fake_eos = 3;
    check_ok("fake end-of-stream magics", &z, text, &o);

    o.test_fake_block = fb;
    o.n_test_fake_block = 5;
    check_ok("fake magics of both kinds", &z, text, &o);

    /* a real error after a fake split is still reported at the block */
    Buf bad = {0};
    buf_append(&bad, z.data, z.len);
    flip_bit(&bad, blk[2] + 48 + 1);
    memset(&o, 0, sizeof o);
    o.test_fake_block = fb;
    o.n_test_fake_block = 5;
    check_err("CRC error in a split block", &bad, text, 2 * (size_t)BLOCK1, blk[2] / 8,
              "bz2 block CRC mismatch", &o);
    buf_free(&bad);
    buf_free(&z);
}

static int write_text(const char *path, const char *s, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fwrite(s, 1, n, f);
    return fclose(f);
}

static void test_index(const Buf *text) {
    Buf z = {0}, want = {0}, ix = {0};
    uint64_t offs[16];
    size_t n;
    make_multi(text, &z, &want, offs, &n);
    char path[128], line[128];
    /* like Wikimedia's: header stream not listed, repeated offsets */
    for (size_t i = 1; i < n; i++)
        for (int pg = 0; pg < 3; pg++) {
            snprintf(line, sizeof line, "%" PRIu64 ":%zu:Title %zu:%d\n", offs[i], i * 10 + pg, i,
                     pg);
            buf_puts(&ix, line);
        }
    snprintf(path, sizeof path, "%s/index.txt", tmpdir_path);
    write_text(path, ix.data, ix.len);
    Bz2ParOpts o;
    memset(&o, 0, sizeof o);
    o.index_path = path;
    check_ok("index (text)", &z, &want, &o);

    Buf ixz = {0};
    compress_into(&ixz, ix.data, ix.len, 9);
    compress_into(&ixz, "", 0, 9); /* multistream index file */
    char pathz[128];
    snprintf(pathz, sizeof pathz, "%s/index.txt.bz2", tmpdir_path);
    write_text(pathz, ixz.data, ixz.len);
    o.index_path = pathz;
    check_ok("index (bz2)", &z, &want, &o);

    /* partial index: later streams found by the bit scan */
    snprintf(line, sizeof line, "%" PRIu64 ":1:a\n", offs[3]);
    write_text(path, line, strlen(line));
    o.index_path = path;
    check_ok("index listing one stream", &z, &want, &o);

    /* the last piece holds streams 4-7: damage in stream 7 (one block) */
    uint64_t blk[64];
    size_t nb = find_blocks(&z, blk, 64), k = 0;
    while (k < nb && blk[k] < offs[6] * 8)
        k++;
    Buf bad = {0};
    buf_append(&bad, z.data, z.len);
    flip_bit(&bad, blk[k] + 48 + 20);
    check_err("partial index, CRC error in stream 7", &bad, &want, want.len - 60000, blk[k] / 8,
              "bz2 block CRC mismatch", &o);
    buf_free(&bad);

    /* trailing junk after the last indexed piece */
    Buf zj = {0};
    buf_append(&zj, z.data, z.len);
    buf_puts(&zj, "junk after the dump");
    check_ok("partial index, trailing junk", &zj, &want, &o);
    zj.len = z.len;
    buf_puts(&zj, "junk");
    buf_append(&zj, z.data + offs[6], z.len - offs[6]); /* stream 7 again, no header */
    check_err("partial index, damaged trailing stream", &zj, &want, want.len, z.len,
              "not a bz2 stream", &o);
    zj.len = z.len;
    buf_puts(&zj, "BZh91AY");
    check_err("partial index, truncated trailing stream", &zj, &want, want.len, zj.len,
              "unexpected end of bz2 data", &o);
    buf_free(&zj);

    /* CRC of stream 4's 2nd block (level 1, 120000 bytes): the indexed
     * piece is decoded again block by block to find it */
    k = 0;
    while (k < nb && blk[k] < offs[3] * 8)
        k++;
    buf_append(&bad, z.data, z.len);
    flip_bit(&bad, blk[k + 1] + 48 + 9);
    o.index_path = pathz;
    check_err("index, CRC error in 2nd block of stream 4", &bad, &want, 1000 + 250000 + BLOCK1,
              blk[k + 1] / 8, "bz2 block CRC mismatch", &o);
    buf_free(&bad);

    /* offsets that do not fit the file */
    snprintf(line, sizeof line, "%" PRIu64 ":1:a\n%" PRIu64 ":2:b\n", offs[2], offs[2] + 3);
    write_text(path, line, strlen(line));
    o.index_path = path;
    check_err("index offset inside a stream", &z, &want, 1000 + 250000, offs[2] + 3,
              "does not point at a bz2 stream", &o);

    snprintf(line, sizeof line, "%" PRIu64 ":1:a\n%" PRIu64 ":2:b\n", offs[4], offs[2]);
    write_text(path, line, strlen(line));
    Res r = run(&z, 2, VIA_FILE, &o);
    test_cond("unsorted index",
              r.rc == -1 && has(r.err.msg, "line 2") && has(r.err.msg, "not sorted"));
    if (!has(r.err.msg, "not sorted")) printf("  got \"%s\"\n", r.err.msg);
    res_free(&r);

    snprintf(line, sizeof line, "%zu:1:a\n", z.len + 100);
    write_text(path, line, strlen(line));
    r = run(&z, 2, VIA_FILE, &o);
    test_cond("index beyond the file (file)", r.rc == -2 && has(r.err.msg, "beyond the end"));
    res_free(&r);
    r = run(&z, 2, VIA_PIPE, &o);
    test_cond("index beyond the file (pipe)",
              r.rc == -1 && has(r.err.msg, "beyond the end") && r.out.len == want.len);
    res_free(&r);

    write_text(path, "hello world\n", 12);
    r = run(&z, 2, VIA_FILE, &o);
    test_cond("malformed index",
              r.rc == -2 && has(r.err.msg, "line 1") && has(r.err.msg, "offset:pageid:title"));
    res_free(&r);
    write_text(path, "", 0);
    r = run(&z, 2, VIA_FILE, &o);
    test_cond("empty index", r.rc == -2 && has(r.err.msg, "no offsets"));
    res_free(&r);
    snprintf(line, sizeof line, "%s/missing.txt", tmpdir_path);
    o.index_path = line;
    r = run(&z, 2, VIA_FILE, &o);
    test_cond("missing index", r.rc == -2 && has(r.err.msg, "cannot open index"));
    res_free(&r);

    unlink(path);
    unlink(pathz);
    buf_free(&ixz);
    buf_free(&ix);
    buf_free(&z);
    buf_free(&want);
}

/* An indexed stream over 2 MB compressed is bit-scanned instead. */
static void test_index_big_piece(void) {
    Buf t = {0}, z = {0};
    buf_reserve(&t, 2600000);
    for (size_t i = 0; i < 2600000; i++)
        t.data[i] = (char)(rnd() & 0xff);
    t.len = 2600000;
    compress_into(&z, "header\n", 7, 9);
    uint64_t o2 = z.len;
    compress_into(&z, t.data, t.len, 9);
    uint64_t o3 = z.len;
    compress_into(&z, "footer\n", 7, 9);
    Buf want = {0};
    buf_puts(&want, "header\n");
    buf_append(&want, t.data, t.len);
    buf_puts(&want, "footer\n");
    char path[128], line[128];
    snprintf(path, sizeof path, "%s/index2.txt", tmpdir_path);
    snprintf(line, sizeof line, "%" PRIu64 ":1:a\n%" PRIu64 ":2:b\n", o2, o3);
    write_text(path, line, strlen(line));
    Bz2ParOpts o;
    memset(&o, 0, sizeof o);
    o.index_path = path;
    test_cond("big piece is big", o3 - o2 > (2u << 20));
    check_ok("index with a 2.6 MB stream", &z, &want, &o);
    unlink(path);
    buf_free(&t);
    buf_free(&z);
    buf_free(&want);
}

/* More than the scanner's 4 MB window: the window must slide. */
static void test_big_input(const Buf *text) {
    Buf t = {0}, z = {0};
    buf_reserve(&t, 5000000);
    for (size_t i = 0; i < 4400000; i++)
        t.data[i] = (char)(rnd() & 0xff);
    t.len = 4400000;
    buf_append(&t, text->data, 600000);
    compress_into(&z, t.data, t.len, 9);
    test_cond("big input is big", z.len > (4u << 20));
    static const int cfg[][2] = {{1, VIA_FILE}, {2, VIA_PIPE}, {3, VIA_FILE}};
    for (int i = 0; i < 3; i++) {
        Res r = run(&z, cfg[i][0], cfg[i][1], NULL);
        test_cond("big input", r.rc == 0 && r.cpos == z.len);
        test_cond("big input", r.out.len == t.len && memcmp(r.out.data, t.data, t.len) == 0);
        res_free(&r);
    }
    buf_free(&t);
    buf_free(&z);
}

/* Stop after the first piece: close must not hang or leak. */
static void test_early_close(const Buf *text) {
    Buf z = {0};
    compress_into(&z, text->data, text->len, 1);
    for (int t = 0; t < 4; t++)
        for (int via = 0; via < 2; via++) {
            int fd, p[2] = {-1, -1};
            pthread_t th;
            Writer w;
            if (via == VIA_PIPE) {
                if (pipe(p) < 0) exit(1);
                fd = p[0];
                w = (Writer){p[1], z.data, z.len};
                pthread_create(&th, NULL, writer_main, &w);
            } else {
                fd = temp_file(z.data, z.len);
            }
            Bz2ParOpts o;
            memset(&o, 0, sizeof o);
            o.nthreads = threads[t];
            Err err;
            Bz2Par *b = bz2par_open(fd, &o, &err);
            const char *d;
            size_t n;
            int r = b ? bz2par_next(b, &d, &n, &err) : -2;
            test_cond("early close: first piece", r == 1 && n > 0 && memcmp(d, text->data, n) == 0);
            test_cond("early close: progress",
                      bz2par_compressed_pos(b) > 0 && bz2par_compressed_pos(b) < z.len);
            bz2par_close(b);
            close(fd); /* the writer gets EPIPE */
            if (via == VIA_PIPE) pthread_join(th, NULL);
        }
    bz2par_close(NULL);
    buf_free(&z);
}

/* The real Wikimedia multistream sample in tests/data (made by Wikimedia's
 * recompressxml) and its index; tests run from the repository root. */
static void test_shared_sample(void) {
    const char *dir = "tests/data/";
    char f[256], fi[256], fs[256];
    snprintf(f, sizeof f, "%selwikivoyage-17.multistream.xml.bz2", dir);
    snprintf(fi, sizeof fi, "%selwikivoyage-17.multistream-index.txt.bz2", dir);
    snprintf(fs, sizeof fs, "%selwikivoyage-17.xml.bz2", dir);
    test_cond("sample files present (run from the repository root)",
              access(f, R_OK) == 0 && access(fi, R_OK) == 0 && access(fs, R_OK) == 0);
    if (access(f, R_OK) || access(fi, R_OK) || access(fs, R_OK)) return;
    Buf z = {0}, zs = {0}, want = {0};
    FILE *fp = fopen(f, "rb");
    char tmp[65536];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, fp)) > 0)
        buf_append(&z, tmp, n);
    fclose(fp);
    fp = fopen(fs, "rb");
    while ((n = fread(tmp, 1, sizeof tmp, fp)) > 0)
        buf_append(&zs, tmp, n);
    fclose(fp);
    Res r = run(&zs, 2, VIA_FILE, NULL); /* the single-stream version */
    buf_append(&want, r.out.data, r.out.len);
    test_cond("sample single stream", r.rc == 0 && want.len > 50000);
    res_free(&r);
    Bz2ParOpts o;
    memset(&o, 0, sizeof o);
    r = run(&z, 3, VIA_PIPE, &o);
    test_mem_eq("sample multistream = single stream", r.out.data, r.out.len, want.data, want.len);
    res_free(&r);
    o.index_path = fi;
    r = run(&z, 2, VIA_FILE, &o);
    test_cond("sample multistream with its index", r.rc == 0);
    test_mem_eq("sample multistream with its index", r.out.data, r.out.len, want.data, want.len);
    res_free(&r);
    buf_free(&z);
    buf_free(&zs);
    buf_free(&want);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    snprintf(tmpdir_path, sizeof tmpdir_path, "/tmp/test_bz2par.XXXXXX");
    if (!mkdtemp(tmpdir_path)) {
        perror("mkdtemp");
        return 1;
    }
    Buf text = {0};
    make_text(&text, 700000);
    test_single_stream(&text);
    test_rle_block();
    test_multistream(&text);
    test_corruption(&text);
    test_trailing(&text);
    test_false_magic(&text);
    test_index(&text);
    test_index_big_piece();
    test_big_input(&text);
    test_early_close(&text);
    test_shared_sample();
    buf_free(&text);
    rmdir(tmpdir_path);
    return test_report();
}
