/* test_h5file.c - the HDF5 layer: h5py's chunk shapes (the spec's worked
 * examples), datasets written with direct chunk writes read back through
 * HDF5's own filter pipeline (partial edge chunks, column strips, 1-D),
 * byte-identical files for 1 and 4 threads, for the datasets written
 * one call each or all in one call and filled a band or a chunk at a
 * time, the atomic temp file, the
 * reader's info and errors, damaged files (superblock, dataspace, chunk
 * and type fields patched in a written file), and h5py's view of the file
 * when h5py exists.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hdf5gen/h5file.h"
#include "common/io.h"
#include "tests/test.h"

static void test_chunks(void) {
    /* spec 11.6: N = 50000, L = 128, P = 20 */
    uint64_t c[2];
    uint64_t s1[2] = {50000, 128};
    h5_guess_chunk(2, s1, 4, c);
    test_cond("input_ids chunk (1563, 8)", c[0] == 1563 && c[1] == 8);
    h5_guess_chunk(2, s1, 1, c);
    test_cond("input_mask chunk (3125, 8)", c[0] == 3125 && c[1] == 8);
    uint64_t s2[2] = {50000, 20};
    h5_guess_chunk(2, s2, 4, c);
    test_cond("masked_lm_positions chunk (3125, 2)", c[0] == 3125 && c[1] == 2);
    uint64_t s3[1] = {50000};
    h5_guess_chunk(1, s3, 1, c);
    test_cond("next_sentence_labels chunk (6250,)", c[0] == 6250);
    uint64_t s4[2] = {50000, 512};
    h5_guess_chunk(2, s4, 4, c);
    test_cond("L = 512 input_ids chunk (782, 16)", c[0] == 782 && c[1] == 16);
    uint64_t s5[2] = {3, 7};
    h5_guess_chunk(2, s5, 4, c);
    test_cond("tiny dataset: one chunk of the whole shape", c[0] == 3 && c[1] == 7);
}

typedef struct Gen {
    int elem;
    uint64_t cols;
} Gen;

static int32_t value_at(uint64_t r, uint64_t c) {
    return (int32_t)((r * 7919u + c * 104729u) % 30522u) - (int32_t)(c % 3);
}

static void fill(void *arg, uint64_t row0, uint64_t nrows, void *buf) {
    Gen *g = arg;
    for (uint64_t r = 0; r < nrows; r++)
        for (uint64_t c = 0; c < g->cols; c++) {
            int32_t v = value_at(row0 + r, c);
            if (g->elem == 4)
                ((int32_t *)buf)[r * g->cols + c] = v;
            else
                ((int8_t *)buf)[r * g->cols + c] = (int8_t)(v & 0x7f);
        }
}

/* The same values a chunk at a time: columns c0 .. c0 + nc, rows width apart. */
static void strip(void *arg, uint64_t row0, uint64_t nrows, uint64_t c0, uint64_t nc,
                  uint64_t width, void *buf) {
    Gen *g = arg;
    for (uint64_t r = 0; r < nrows; r++)
        for (uint64_t c = c0; c < c0 + nc; c++) {
            int32_t v = value_at(row0 + r, c);
            if (g->elem == 4)
                ((int32_t *)buf)[r * width + (c - c0)] = v;
            else
                ((int8_t *)buf)[r * width + (c - c0)] = (int8_t)(v & 0x7f);
        }
}

static char *slurp(const char *path, size_t *n) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long len = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *p = malloc((size_t)len + 1);
    *n = fread(p, 1, (size_t)len, fp);
    fclose(fp);
    return p;
}

/* Write the three test datasets with `threads`, one h5out_write each or
 * (all) one h5out_write_all, the 2-D ones filled a chunk at a time when
 * by_strip; returns 0 on success. */
static int write_file_by(const char *path, uint64_t rows, int threads, int level, int all,
                         int by_strip) {
    Err err;
    H5Out *o;
    if (h5out_create(&o, path, 1, &err)) {
        printf("  %s\n", err.msg);
        return -1;
    }
    Gen g4 = {4, 131}, g1 = {1, 20}, g0 = {1, 1};
    H5StripFn st = by_strip ? strip : NULL;
    H5Dataset d[3] = {{"ids", 4, 2, rows, 131, fill, &g4, st},
                      {"mask", 1, 2, rows, 20, fill, &g1, st},
                      {"labels", 1, 1, rows, 1, fill, &g0, NULL}};
    for (int i = 0; i < (all ? 1 : 3); i++)
        if (all ? h5out_write_all(o, d, 3, level, threads, &err)
                : h5out_write(o, &d[i], level, threads, &err)) {
            printf("  %s\n", err.msg);
            h5out_abort(o);
            return -1;
        }
    return h5out_close(o, &err);
}

static int write_file_as(const char *path, uint64_t rows, int threads, int level, int all) {
    return write_file_by(path, rows, threads, level, all, 0);
}

static int write_file(const char *path, uint64_t rows, int threads, int level) {
    return write_file_as(path, rows, threads, level, 0);
}

/* The same bytes whether the datasets go one call each or all in one call
 * (whose compression runs ahead across them), for any thread count. */
static void test_write_all(const char *dir) {
    char p1[512], pa[512];
    snprintf(p1, sizeof p1, "%s/one.hdf5", dir);
    snprintf(pa, sizeof pa, "%s/all.hdf5", dir);
    const uint64_t rows = 20011;
    for (int level = 0; level <= 6; level += 6) {
        int ok = write_file_as(p1, rows, 1, level, 0) == 0;
        size_t n1 = 0;
        char *b1 = ok ? slurp(p1, &n1) : NULL;
        static const int threads[] = {1, 2, 3, 8, 64};
        for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
            size_t na = 0;
            char *ba = NULL;
            if (b1 && write_file_as(pa, rows, threads[t], level, 1) == 0) ba = slurp(pa, &na);
            char name[96];
            snprintf(name, sizeof name, "write_all, level %d, %d threads: the same file", level,
                     threads[t]);
            test_cond(name, ba && na == n1 && memcmp(ba, b1, n1) == 0);
            free(ba);
            /* the 2-D datasets filled a chunk at a time: the same file */
            ba = NULL;
            if (b1 && write_file_by(pa, rows, threads[t], level, 1, 1) == 0) ba = slurp(pa, &na);
            snprintf(name, sizeof name, "... filled a chunk at a time, %d threads: the same file",
                     threads[t]);
            test_cond(name, ba && na == n1 && memcmp(ba, b1, n1) == 0);
            free(ba);
        }
        free(b1);
    }
}

static void test_roundtrip(const char *dir) {
    char p1[512], p4[512];
    snprintf(p1, sizeof p1, "%s/t1.hdf5", dir);
    snprintf(p4, sizeof p4, "%s/t4.hdf5", dir);
    const uint64_t rows = 20011; /* several bands, partial edge chunks both ways (131 columns) */
    test_cond("write with 1 thread", write_file(p1, rows, 1, 0) == 0);
    test_cond("write with 4 threads", write_file(p4, rows, 4, 0) == 0);
    char pl[512];
    snprintf(pl, sizeof pl, "%s/tl.hdf5", dir);
    test_cond("write with libdeflate level 6", write_file(pl, rows, 2, 6) == 0);
    size_t n1 = 0, n4 = 0;
    char *b1 = slurp(p1, &n1), *b4 = slurp(p4, &n4);
    test_cond("files exist", b1 && b4);
    test_cond("byte-identical for 1 and 4 threads",
              b1 && b4 && n1 == n4 && memcmp(b1, b4, n1) == 0);
    free(b1);
    free(b4);

    Err err;
    H5In *in = NULL;
    test_cond("libdeflate file opens", h5in_open(&in, pl, &err) == 0);
    if (in) {
        H5Info li;
        test_cond("libdeflate level 6 recorded",
                  h5in_info(in, "ids", &li, &err) == 1 && li.deflate_level == 6);
        int32_t *a = malloc(rows * 131 * sizeof *a);
        int diff = h5in_read_rows(in, "ids", 0, rows, a, &err) != 0;
        for (uint64_t i = 0; i < rows * 131 && !diff; i++)
            diff = a[i] != value_at(i / 131, i % 131);
        test_cond("libdeflate file reads back", !diff);
        free(a);
        h5in_close(in);
        in = NULL;
    }
    test_cond("open for reading", h5in_open(&in, p4, &err) == 0);
    if (!in) return;
    char **names = NULL;
    int nn = h5in_list(in, &names, &err);
    test_cond("three datasets, alphabetical", nn == 3 && !strcmp(names[0], "ids") &&
                                                  !strcmp(names[1], "labels") &&
                                                  !strcmp(names[2], "mask") && names[3] == NULL);
    free(names);
    H5Info info;
    test_cond("ids info", h5in_info(in, "ids", &info, &err) == 1);
    test_cond("ids: i32 LE signed, (rows, 131)",
              info.is_integer && info.elem_size == 4 && info.is_signed && info.little_endian &&
                  info.rank == 2 && info.dims[0] == rows && info.dims[1] == 131);
    uint64_t want[2], shape[2] = {rows, 131};
    h5_guess_chunk(2, shape, 4, want);
    test_cond("ids: chunked as guessed, deflate 4, nothing else",
              info.chunked && info.chunk[0] == want[0] && info.chunk[1] == want[1] &&
                  info.deflate_level == 4 && info.other_filters == 0);
    test_cond("labels: rank 1, i8",
              h5in_info(in, "labels", &info, &err) == 1 && info.rank == 1 && info.elem_size == 1);
    test_cond("absent dataset", h5in_info(in, "nope", &info, &err) == 0);

    /* every value, read through HDF5's deflate filter, in uneven blocks */
    int bad = 0;
    int32_t *buf = malloc(4099 * 131 * sizeof *buf);
    for (uint64_t r0 = 0; r0 < rows; r0 += 4099) {
        uint64_t n = rows - r0 < 4099 ? rows - r0 : 4099;
        if (h5in_read_rows(in, "ids", r0, n, buf, &err)) {
            bad++;
            break;
        }
        for (uint64_t r = 0; r < n; r++)
            for (uint64_t c = 0; c < 131; c++)
                bad += buf[r * 131 + c] != value_at(r0 + r, c);
        if (h5in_read_rows(in, "mask", r0, n, buf, &err)) {
            bad++;
            break;
        }
        for (uint64_t r = 0; r < n; r++)
            for (uint64_t c = 0; c < 20; c++)
                bad += buf[r * 20 + c] != (value_at(r0 + r, c) & 0x7f);
        if (h5in_read_rows(in, "labels", r0, n, buf, &err)) {
            bad++;
            break;
        }
        for (uint64_t r = 0; r < n; r++)
            bad += buf[r] != (value_at(r0 + r, 0) & 0x7f);
    }
    test_cond("every value reads back", bad == 0);
    test_cond("rows out of range",
              h5in_read_rows(in, "ids", rows - 1, 2, buf, &err) == -1 && strstr(err.msg, "rows"));
    test_cond("read of a missing dataset", h5in_read_rows(in, "nope", 0, 1, buf, &err) == -1 &&
                                               strstr(err.msg, "nope: no such dataset"));
    free(buf);
    h5in_close(in);

    /* h5py, an independent reader, sees the same values and layout */
    char py[256], cmd[2048];
    if (!test_find_python("import h5py, numpy", py, sizeof py)) {
        printf("not run: h5py comparison (no Python with h5py)\n");
    } else {
        snprintf(cmd, sizeof cmd,
                 "'%s' -c 'import h5py, numpy as np\n"
                 "f = h5py.File(\"%s\", \"r\")\n"
                 "r = np.arange(%llu, dtype=np.int64)[:, None]; c = np.arange(131, "
                 "dtype=np.int64)[None, :]\n"
                 "v = ((r * 7919 + c * 104729) %% 30522) - (c %% 3)\n"
                 "d = f[\"ids\"]\n"
                 "assert d.dtype == np.dtype(\"<i4\") and d.compression == \"gzip\" and "
                 "d.compression_opts == 4\n"
                 "assert d.shuffle is False and d.fletcher32 is False\n"
                 "assert (d[:] == v).all()\n"
                 "assert (f[\"mask\"][:] == (v[:, :20] & 0x7f)).all() and f[\"mask\"].dtype == "
                 "np.dtype(\"i1\")\n"
                 "assert (f[\"labels\"][:] == (v[:, 0] & 0x7f)).all()\n"
                 "g = h5py.File(\"%s/h5py.hdf5\", \"w\"); g.create_dataset(\"x\", data=d[:], "
                 "compression=\"gzip\")\n"
                 "assert g[\"x\"].chunks == d.chunks, (g[\"x\"].chunks, d.chunks)\n'",
                 py, p4, (unsigned long long)rows, dir);
        test_cond("h5py reads our file and guesses the same chunks", system(cmd) == 0);
    }

    /* existing file without force; no temp file left */
    H5Out *o;
    test_cond("existing file refused",
              h5out_create(&o, p1, 0, &err) == -1 && strstr(err.msg, "already exists"));
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p1, (long)getpid());
    struct stat st;
    test_cond("no temp file after close", stat(tmp, &st) != 0);
    /* abort removes the temp file and keeps the old file */
    test_cond("create over an existing file with force", h5out_create(&o, p1, 1, &err) == 0);
    test_cond("temp file while open", stat(tmp, &st) == 0);
    h5out_abort(o);
    test_cond("abort removes the temp file", stat(tmp, &st) != 0);
    test_cond("abort keeps the old file", stat(p1, &st) == 0 && st.st_size > 1000);

    /* reader errors */
    char junk[512];
    snprintf(junk, sizeof junk, "%s/junk.hdf5", dir);
    FILE *fp = fopen(junk, "w");
    fputs("not hdf5 at all\n", fp);
    fclose(fp);
    test_cond("not an HDF5 file",
              h5in_open(&in, junk, &err) == -1 && strstr(err.msg, "junk.hdf5: not an HDF5 file"));
    snprintf(junk, sizeof junk, "%s/missing.hdf5", dir);
    test_cond("missing file", h5in_open(&in, junk, &err) == -1 && strstr(err.msg, "No such file"));
    snprintf(junk, sizeof junk, "%s/nodir/x.hdf5", dir);
    test_cond("unwritable output",
              h5out_create(&o, junk, 0, &err) == -1 && strstr(err.msg, "x.hdf5"));
}

/* Write n bytes of b to dir/name; returns the path (static buffer). */
static const char *put(const char *dir, const char *name, const void *b, size_t n) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    if (fp) {
        fwrite(b, 1, n, fp);
        fclose(fp);
    }
    return path;
}

/* Offset of the first occurrence of pat[0..m) in b[0..n), or -1. */
static long find(const uint8_t *b, size_t n, const uint8_t *pat, size_t m) {
    for (size_t i = 0; i + m <= n; i++)
        if (memcmp(b + i, pat, m) == 0) return (long)i;
    return -1;
}

static void put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* h5in_open's -2 and its message for the file b[0..n) */
static int damaged_open(const char *dir, const char *name, const void *b, size_t n,
                        const char *want) {
    Err err;
    H5In *in = NULL;
    int rc = h5in_open(&in, put(dir, name, b, n), &err);
    if (in) h5in_close(in);
    if (rc != -2 || !strstr(err.msg, want)) printf("  got %d: %s\n", rc, rc ? err.msg : "");
    return rc == -2 && strstr(err.msg, name) && strstr(err.msg, want);
}

/* h5in_info and h5in_read_rows on dataset "ids" of the file b[0..n):
 * both -1 with a message containing want */
static int damaged_ids(const char *dir, const char *name, const void *b, size_t n,
                       const char *want) {
    Err err;
    H5In *in = NULL;
    if (h5in_open(&in, put(dir, name, b, n), &err)) {
        printf("  open: %s\n", err.msg);
        return 0;
    }
    H5Info info;
    int r1 = h5in_info(in, "ids", &info, &err);
    int ok1 = r1 == -1 && strstr(err.msg, name) && strstr(err.msg, want);
    if (!ok1) printf("  info: %d %s\n", r1, r1 < 0 ? err.msg : "");
    int32_t row[131 * 2];
    int r2 = h5in_read_rows(in, "ids", 0, 1, row, &err);
    int ok2 = r2 == -1 && strstr(err.msg, want);
    if (!ok2) printf("  read: %d %s\n", r2, r2 < 0 ? err.msg : "");
    h5in_close(in);
    return ok1 && ok2;
}

/* Damaged files: the superblock checked against the file's size before
 * HDF5 walks it, and datasets whose shape, chunks or type do not fit. */
static void test_damaged(const char *dir) {
    char p[512];
    snprintf(p, sizeof p, "%s/good.hdf5", dir);
    const uint64_t rows = 50;
    test_cond("a small file", write_file(p, rows, 1, 0) == 0);
    size_t n = 0;
    uint8_t *good = (uint8_t *)slurp(p, &n), *b = malloc(n + 1);
    if (!good || n < 4096) {
        test_cond("the small file read back", 0);
        return;
    }
    test_cond("superblock version 0, 8-byte addresses (what the offsets below assume)",
              good[8] == 0 && good[13] == 8 && good[14] == 8);
    uint64_t eof = 0;
    for (int i = 7; i >= 0; i--)
        eof = eof << 8 | good[40 + i];
    test_cond("its end-of-file address is its size", eof == n);

    char want[128];
    snprintf(want, sizeof want,
             "damaged HDF5 file (truncated: its superblock says %zu bytes, the file has %zu)", n,
             n / 2);
    test_cond("cut in half: truncated", damaged_open(dir, "half.hdf5", good, n / 2, want));
    test_cond(
        "cut in the superblock",
        damaged_open(dir, "sb.hdf5", good, 40, "damaged HDF5 file (truncated in its superblock)"));
    memcpy(b, good, n);
    b[13] = 3;
    test_cond("3-byte addresses",
              damaged_open(dir, "osize.hdf5", b, n,
                           "damaged HDF5 file (superblock: 3-byte addresses, 8-byte lengths)"));
    memcpy(b, good, n);
    put_u64(b + 40, (uint64_t)n + 1); /* end-of-file address past the end */
    test_cond("end-of-file address past the end",
              damaged_open(dir, "eof.hdf5", b, n, "truncated: its superblock says"));
    memcpy(b, good, n);
    put_u64(b + 64, 1ull << 40); /* the root group's object header */
    test_cond("root group header past the end",
              damaged_open(dir, "root.hdf5", b, n,
                           "damaged HDF5 file (the root group's header at 1099511627776, past the "
                           "end of its data at"));
    memcpy(b, good, n);
    put_u64(b + 88, (uint64_t)n + 4096); /* the root group's name heap */
    test_cond(
        "root group heap past the end",
        damaged_open(dir, "heap.hdf5", b, n, "damaged HDF5 file (the root group's name heap at"));
    memcpy(b, good, n);
    b[0] = 'X';
    Err err;
    H5In *in = NULL;
    test_cond("no signature: not HDF5, -1",
              h5in_open(&in, put(dir, "nosig.hdf5", b, n), &err) == -1 &&
                  strstr(err.msg, "nosig.hdf5: not an HDF5 file"));

    /* ids: dataspace message v1 (rank 2, max dims present) with (rows, 131) / (rows, 131) */
    uint8_t space[40] = {1, 2, 1, 0, 0, 0, 0, 0};
    put_u64(space + 8, rows), put_u64(space + 16, 131), put_u64(space + 24, rows),
        put_u64(space + 32, 131);
    long at = find(good, n, space, sizeof space);
    test_cond("ids' dataspace found", at > 0);
    if (at > 0) {
        memcpy(b, good, n);
        put_u64(b + at + 8, 1ull << 40), put_u64(b + at + 24, 1ull << 40);
        snprintf(
            want, sizeof want,
            "dataset ids claims 1099511627776 rows of 131 (more than a file of %zu bytes can hold)",
            n);
        test_cond("2^40 rows: refused before reading", damaged_ids(dir, "rows.hdf5", b, n, want));
        memcpy(b, good, n);
        put_u64(b + at + 16, (1ull << 32) + 131), put_u64(b + at + 32, (1ull << 32) + 131);
        test_cond(
            "2^32 + 131 columns: refused",
            damaged_ids(dir, "cols.hdf5", b, n, "ids: 4294967427 columns (more than 2147483647)"));
        memcpy(b, good, n);
        put_u64(b + at + 16, 131 + (1ull << 39));
        test_cond(
            "a dimension past its maximum",
            damaged_ids(dir, "dims.hdf5", b, n,
                        "damaged HDF5 file (ids: dimension 1 is 549755814019, its maximum 131)"));
    }
    /* ids: chunked layout message v3 (rank + 1 dimensions, the last the element size) */
    uint64_t shape[2] = {rows, 131}, ch[2];
    h5_guess_chunk(2, shape, 4, ch);
    uint8_t lay[12];
    put_u32(lay, (uint32_t)ch[0]), put_u32(lay + 4, (uint32_t)ch[1]), put_u32(lay + 8, 4);
    at = find(good, n, lay, sizeof lay);
    test_cond("ids' chunk dimensions found",
              at > 11 && good[at - 11] == 3 && good[at - 10] == 2 && good[at - 9] == 3);
    if (at > 11) {
        memcpy(b, good, n);
        put_u32(b + at + 4, (uint32_t)ch[1] + (1u << 24));
        snprintf(want, sizeof want,
                 "damaged HDF5 file (ids: chunk dimension 1 is %llu, the dataset's at most 131)",
                 (unsigned long long)ch[1] + (1u << 24));
        test_cond("a chunk larger than the dataset", damaged_ids(dir, "chunk.hdf5", b, n, want));
    }
    /* ids: datatype message v1, fixed-point, signed little-endian, 4 bytes, offset 0, precision 32
     */
    uint8_t type[12] = {0x10, 0x08, 0, 0, 4, 0, 0, 0, 0, 0, 32, 0};
    at = find(good, n, type, sizeof type);
    test_cond("ids' datatype found", at > 0);
    if (at > 0) {
        memcpy(b, good, n);
        put_u32(b + at + 4, 0x100004);
        test_cond(
            "a 1048580-byte integer",
            damaged_ids(dir, "type.hdf5", b, n, "damaged HDF5 file (ids: 1048580-byte integers)"));
    }
    free(good);
    free(b);
}

int main(void) {
    char dir[] = "/tmp/test_h5file.XXXXXX";
    if (!mkdtemp(dir)) return 1;
    test_chunks();
    test_roundtrip(dir);
    test_write_all(dir);
    test_damaged(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) return 1;
    return test_report();
}
