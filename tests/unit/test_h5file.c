/* test_h5file.c - the HDF5 layer: h5py's chunk shapes (the spec's worked
 * examples), datasets written with direct chunk writes read back through
 * HDF5's own filter pipeline (partial edge chunks, column strips, 1-D),
 * byte-identical files for 1 and 4 threads, the atomic temp file, the
 * reader's info and errors, and h5py's view of the file when h5py exists.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5file.h"
#include "io.h"
#include "../test.h"

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

static int32_t value_at(uint64_t r, uint64_t c) { return (int32_t)((r * 7919u + c * 104729u) % 30522u) - (int32_t)(c % 3); }

static void fill(void *arg, uint64_t row0, uint64_t nrows, void *buf) {
    Gen *g = arg;
    for (uint64_t r = 0; r < nrows; r++)
        for (uint64_t c = 0; c < g->cols; c++) {
            int32_t v = value_at(row0 + r, c);
            if (g->elem == 4) ((int32_t *)buf)[r * g->cols + c] = v;
            else ((int8_t *)buf)[r * g->cols + c] = (int8_t)(v & 0x7f);
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

/* Write the three test datasets with `threads`; returns 0 on success. */
static int write_file(const char *path, uint64_t rows, int threads, int level) {
    Err err;
    H5Out *o;
    if (h5out_create(&o, path, 1, &err)) {
        printf("  %s\n", err.msg);
        return -1;
    }
    Gen g4 = {4, 131}, g1 = {1, 20}, g0 = {1, 1};
    H5Dataset d[3] = {{"ids", 4, 2, rows, 131, fill, &g4}, {"mask", 1, 2, rows, 20, fill, &g1}, {"labels", 1, 1, rows, 1, fill, &g0}};
    for (int i = 0; i < 3; i++)
        if (h5out_write(o, &d[i], level, threads, &err)) {
            printf("  %s\n", err.msg);
            h5out_abort(o);
            return -1;
        }
    return h5out_close(o, &err);
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
    test_cond("byte-identical for 1 and 4 threads", b1 && b4 && n1 == n4 && memcmp(b1, b4, n1) == 0);
    free(b1);
    free(b4);

    Err err;
    H5In *in = NULL;
    test_cond("libdeflate file opens", h5in_open(&in, pl, &err) == 0);
    if (in) {
        H5Info li;
        test_cond("libdeflate level 6 recorded", h5in_info(in, "ids", &li, &err) == 1 && li.deflate_level == 6);
        int32_t *a = malloc(rows * 131 * sizeof *a);
        int diff = h5in_read_rows(in, "ids", 0, rows, a, &err) != 0;
        for (uint64_t i = 0; i < rows * 131 && !diff; i++) diff = a[i] != value_at(i / 131, i % 131);
        test_cond("libdeflate file reads back", !diff);
        free(a);
        h5in_close(in);
        in = NULL;
    }
    test_cond("open for reading", h5in_open(&in, p4, &err) == 0);
    if (!in) return;
    char **names = NULL;
    int nn = h5in_list(in, &names, &err);
    test_cond("three datasets, alphabetical", nn == 3 && !strcmp(names[0], "ids") && !strcmp(names[1], "labels") &&
                                                   !strcmp(names[2], "mask") && names[3] == NULL);
    free(names);
    H5Info info;
    test_cond("ids info", h5in_info(in, "ids", &info, &err) == 1);
    test_cond("ids: i32 LE signed, (rows, 131)", info.is_integer && info.elem_size == 4 && info.is_signed &&
                                                    info.little_endian && info.rank == 2 && info.dims[0] == rows &&
                                                    info.dims[1] == 131);
    uint64_t want[2], shape[2] = {rows, 131};
    h5_guess_chunk(2, shape, 4, want);
    test_cond("ids: chunked as guessed, deflate 4, nothing else",
              info.chunked && info.chunk[0] == want[0] && info.chunk[1] == want[1] && info.deflate_level == 4 &&
                  info.other_filters == 0);
    test_cond("labels: rank 1, i8", h5in_info(in, "labels", &info, &err) == 1 && info.rank == 1 && info.elem_size == 1);
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
            for (uint64_t c = 0; c < 131; c++) bad += buf[r * 131 + c] != value_at(r0 + r, c);
        if (h5in_read_rows(in, "mask", r0, n, buf, &err)) {
            bad++;
            break;
        }
        for (uint64_t r = 0; r < n; r++)
            for (uint64_t c = 0; c < 20; c++) bad += buf[r * 20 + c] != (value_at(r0 + r, c) & 0x7f);
        if (h5in_read_rows(in, "labels", r0, n, buf, &err)) {
            bad++;
            break;
        }
        for (uint64_t r = 0; r < n; r++) bad += buf[r] != (value_at(r0 + r, 0) & 0x7f);
    }
    test_cond("every value reads back", bad == 0);
    test_cond("rows out of range", h5in_read_rows(in, "ids", rows - 1, 2, buf, &err) == -1 && strstr(err.msg, "rows"));
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
                 "r = np.arange(%llu, dtype=np.int64)[:, None]; c = np.arange(131, dtype=np.int64)[None, :]\n"
                 "v = ((r * 7919 + c * 104729) %% 30522) - (c %% 3)\n"
                 "d = f[\"ids\"]\n"
                 "assert d.dtype == np.dtype(\"<i4\") and d.compression == \"gzip\" and d.compression_opts == 4\n"
                 "assert d.shuffle is False and d.fletcher32 is False\n"
                 "assert (d[:] == v).all()\n"
                 "assert (f[\"mask\"][:] == (v[:, :20] & 0x7f)).all() and f[\"mask\"].dtype == np.dtype(\"i1\")\n"
                 "assert (f[\"labels\"][:] == (v[:, 0] & 0x7f)).all()\n"
                 "g = h5py.File(\"%s/h5py.hdf5\", \"w\"); g.create_dataset(\"x\", data=d[:], compression=\"gzip\")\n"
                 "assert g[\"x\"].chunks == d.chunks, (g[\"x\"].chunks, d.chunks)\n'",
                 py, p4, (unsigned long long)rows, dir);
        test_cond("h5py reads our file and guesses the same chunks", system(cmd) == 0);
    }

    /* existing file without force; no temp file left */
    H5Out *o;
    test_cond("existing file refused", h5out_create(&o, p1, 0, &err) == -1 && strstr(err.msg, "already exists"));
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
    test_cond("not an HDF5 file", h5in_open(&in, junk, &err) == -1 && strstr(err.msg, "junk.hdf5: not an HDF5 file"));
    snprintf(junk, sizeof junk, "%s/missing.hdf5", dir);
    test_cond("missing file", h5in_open(&in, junk, &err) == -1 && strstr(err.msg, "No such file"));
    snprintf(junk, sizeof junk, "%s/nodir/x.hdf5", dir);
    test_cond("unwritable output", h5out_create(&o, junk, 0, &err) == -1 && strstr(err.msg, "x.hdf5"));
}

int main(void) {
    char dir[] = "/tmp/test_h5file.XXXXXX";
    if (!mkdtemp(dir)) return 1;
    test_chunks();
    test_roundtrip(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) return 1;
    return test_report();
}
