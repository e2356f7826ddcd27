/* test_data.c - the training reader's length bins (train/data.c,
 * --bin_size): on a file written here whose rows have lengths 4..64,
 * every row of the file comes once per pass; each batch holds rows of one
 * bin only and is cut to the bin's bound (each row's tokens and masked
 * positions kept, row-major at the cut length); full bins come first, in
 * the order the seeded visit fills them, then the partly filled ones in
 * bin order; the same options give the same batches; a checkpoint
 * position resumes at the same batch, and a position inside a batch is
 * refused. Without bins: full-length batches in the seeded order.
 * Several files: reading the next file ahead on a thread gives the bytes
 * of reading each when it is reached, over epochs, and a bad file's error
 * at the same batch with the same message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/test.h"
#include "train/data.h"
#include "hdf5gen/h5file.h"

#define ROWS 50
#define L 64
#define P 4

static int row_len(uint64_t r) { return 4 + (int)((r * 37) % (L - 3)); } /* 4..64 */
static int32_t g_base = 1000; /* the first row's first id (files differ by it) */

/* the six datasets of row r: ids 1000 + r at the tokens, 0 padding; mask
 * positions 1 and len - 2 */
static void fill(void *arg, uint64_t row0, uint64_t n, void *buf) {
    const char *which = arg;
    int32_t *o = buf;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = row0 + i;
        int len = row_len(r);
        if (!strcmp(which, "nsp")) {
            o[i] = (int32_t)(r % 2);
            continue;
        }
        if (!strcmp(which, "mpos") || !strcmp(which, "mids")) {
            int32_t *p = o + i * P;
            p[0] = !strcmp(which, "mpos") ? 1 : 7;
            p[1] = !strcmp(which, "mpos") ? len - 2 : 8;
            continue;
        }
        for (int j = 0; j < len; j++)
            o[i * L + j] = !strcmp(which, "ids")    ? g_base + (int32_t)r
                           : !strcmp(which, "mask") ? 1
                                                    : (j >= len / 2);
    }
}

static int write_file(const char *path) {
    Err err;
    H5Out *o;
    if (h5out_create(&o, path, 1, &err)) return -1;
    H5Dataset ds[] = {{"input_ids", 4, 2, ROWS, L, fill, "ids", NULL},
                      {"input_mask", 4, 2, ROWS, L, fill, "mask", NULL},
                      {"segment_ids", 4, 2, ROWS, L, fill, "seg", NULL},
                      {"masked_lm_positions", 4, 2, ROWS, P, fill, "mpos", NULL},
                      {"masked_lm_ids", 4, 2, ROWS, P, fill, "mids", NULL},
                      {"next_sentence_labels", 4, 1, ROWS, 1, fill, "nsp", NULL}};
    for (size_t i = 0; i < sizeof ds / sizeof *ds; i++)
        if (h5out_write(o, &ds[i], 0, 1, &err)) {
            h5out_abort(o);
            return -1;
        }
    return h5out_close(o, &err);
}

/* rows of one pass over the file: checks each batch, returns the number of
 * batches and fills seen[] and the batch shapes */
static int one_pass(Data *d, int bin, int mb, int *seen, int *shapeB, int *shapeS,
                    int64_t *first_row) {
    Err err;
    int nb = 0, bad = 0, rows = 0, full_phase = 1, last_partial_bin = -1;
    while (rows < ROWS) {
        BertBatch b;
        if (data_next(d, &b, &err)) {
            printf("  %s\n", err.msg);
            return -1;
        }
        int binof = -1;
        for (int i = 0; i < b.B; i++) {
            int r = b.input_ids[i * b.S] - 1000, len = row_len((uint64_t)r);
            seen[r]++;
            int rb = bin ? (len - 1) / bin : 0;
            if (binof < 0) binof = rb;
            bad |= rb != binof; /* one bin per batch */
            bad |= len > b.S;   /* every token inside */
            for (int j = 0; j < b.S; j++)
                bad |= b.input_mask[i * b.S + j] != (j < len);
            bad |= b.masked_lm_positions[i * b.M + 1] != len - 2; /* positions kept */
        }
        int bound = bin ? ((binof + 1) * bin > L ? L : (binof + 1) * bin) : L;
        bad |= b.S != bound;
        if (b.B < mb) { /* partly filled: after every full one, in bin order */
            bad |= binof <= last_partial_bin;
            last_partial_bin = binof, full_phase = 0;
        } else {
            bad |= !full_phase && rows + b.B < ROWS;
        }
        if (first_row) first_row[nb] = b.input_ids[0] - 1000;
        shapeB[nb] = b.B, shapeS[nb] = b.S;
        rows += b.B, nb++;
    }
    test_cond("one bin per batch, cut to its bound, tokens and masks kept, partial bins last in "
              "bin order",
              !bad);
    return nb;
}

static void test_bins(const char *dir) {
    Err err;
    DataOpts o = {dir, 9, 0, 1, 8, P, 2000, L, 0, 101, 102, 103, 16, 0, 0};
    Data *d;
    if (data_open(&d, &o, &err)) {
        printf("  %s\n", err.msg);
        test_cond("open", 0);
        return;
    }
    int seen[ROWS] = {0}, B1[ROWS], S1[ROWS], B2[ROWS], S2[ROWS];
    int64_t f1[ROWS], f2[ROWS];
    int nb = one_pass(d, 16, 8, seen, B1, S1, f1);
    int once = nb > 0;
    for (int r = 0; r < ROWS; r++)
        once &= seen[r] == 1;
    test_cond("every row once per pass", once);
    int64_t done, full;
    data_tokens(d, &done, &full);
    test_cond("fewer token positions than at full length",
              done < full && full == (int64_t)ROWS * L);
    int shorter = 0;
    for (int i = 0; i < nb; i++)
        shorter += S1[i] < L;
    test_cond("batches shorter than the file's length", shorter >= 2);

    /* the same options: the same batches; resume at the third batch */
    Data *d2;
    DataState at = {0, 0, 0};
    if (data_open(&d2, &o, &err) == 0) {
        memset(seen, 0, sizeof seen);
        int nb2 = one_pass(d2, 16, 8, seen, B2, S2, f2);
        int same = nb2 == nb;
        for (int i = 0; same && i < nb; i++)
            same = B1[i] == B2[i] && S1[i] == S2[i] && f1[i] == f2[i];
        test_cond("the same options give the same batches", same);
        at.row = B1[0] + B1[1];
        BertBatch b;
        test_cond("seek to a batch start", data_seek(d2, at, &err) == 0 &&
                                               data_next(d2, &b, &err) == 0 && b.B == B1[2] &&
                                               b.S == S1[2] && b.input_ids[0] - 1000 == f1[2]);
        at.row = B1[0] + 1;
        test_cond("a position inside a batch is refused", data_seek(d2, at, &err) == 0 &&
                                                              data_next(d2, &b, &err) == -1 &&
                                                              strstr(err.msg, "--bin_size 16"));
        data_close(d2);
    }
    data_close(d);

    /* without bins: full-length batches of 8, the last one short */
    o.bin_size = 0;
    if (data_open(&d, &o, &err) == 0) {
        memset(seen, 0, sizeof seen);
        nb = one_pass(d, 0, 8, seen, B1, S1, NULL);
        int ok = nb == (ROWS + 7) / 8;
        for (int i = 0; ok && i < nb; i++)
            ok = S1[i] == L && B1[i] == (i < nb - 1 ? 8 : ROWS - 8 * (nb - 1));
        test_cond("without bins: full-length batches in the seeded order", ok);
        data_tokens(d, &done, &full);
        test_cond("... every position computed", done == full);
        data_close(d);
    }
}

static int same_batch(const BertBatch *a, const BertBatch *b) {
    size_t t = (size_t)a->B * a->S * 4, m = (size_t)a->B * a->M * 4;
    return a->B == b->B && a->S == b->S && a->M == b->M && !memcmp(a->input_ids, b->input_ids, t) &&
           !memcmp(a->segment_ids, b->segment_ids, t) && !memcmp(a->input_mask, b->input_mask, t) &&
           !memcmp(a->masked_lm_positions, b->masked_lm_positions, m) &&
           !memcmp(a->masked_lm_ids, b->masked_lm_ids, m) &&
           !memcmp(a->next_sentence_labels, b->next_sentence_labels, (size_t)a->B * 4);
}

/* read up to n batches from readers with and without the prefetch thread;
 * returns the batches both gave alike (-1 if they differ), errors in ea/eb;
 * *files: the moves to another file (or epoch) */
static int both_read(const DataOpts *o, int n, int *files, Err *ea, Err *eb) {
    DataOpts on = *o, off = *o;
    off.no_prefetch = 1;
    Data *a, *b;
    int ra = data_open(&a, &on, ea), rb = data_open(&b, &off, eb);
    if (ra || rb) {
        if (!ra) data_close(a);
        if (!rb) data_close(b);
        return ra && rb && !strcmp(ea->msg, eb->msg) ? 0 : -1;
    }
    int k = 0, changes = 0;
    int64_t last = -1;
    for (; k < n; k++) {
        BertBatch x, y;
        ra = data_next(a, &x, ea), rb = data_next(b, &y, eb);
        if (ra || rb) {
            if (!(ra && rb && !strcmp(ea->msg, eb->msg))) k = -1;
            break;
        }
        DataState sa = data_state(a), sb = data_state(b);
        if (!same_batch(&x, &y) || sa.epoch != sb.epoch || sa.file_step != sb.file_step ||
            sa.row != sb.row || strcmp(data_file(a), data_file(b))) {
            k = -1;
            break;
        }
        changes +=
            last >= 0 && last != sa.epoch * 100000 + sa.file_step; /* a new file's first batch */
        last = sa.epoch * 100000 + sa.file_step;
    }
    data_close(a), data_close(b);
    *files = changes;
    return k;
}

static void test_prefetch(const char *dir) {
    char path[300];
    int ok = 1;
    for (int f = 0; f < 3 && ok; f++) {
        snprintf(path, sizeof path, "%s/p_training_%d.hdf5", dir, f);
        g_base = 10000 * (f + 1);
        ok = write_file(path) == 0;
    }
    g_base = 1000;
    test_cond("three files written", ok);
    if (!ok) return;
    Err ea, eb;
    int files = 0;
    DataOpts o = {dir, 9, 0, 1, 8, P, 40000, L, 0, 101, 102, 103, 0, 0, 0};
    int n =
        both_read(&o, 3 * 3 * 7, &files, &ea, &eb); /* three epochs of three files of 7 batches */
    test_cond("reading ahead: the same batches and positions over three epochs as reading each "
              "file when reached",
              n == 63 && files == 8);
    o.bin_size = 16;
    n = both_read(&o, 70, &files, &ea, &eb);
    test_cond("... with length bins too", n == 70 && files >= 6);
    /* a bad file among them: the same batches, then the same error */
    snprintf(path, sizeof path, "%s/p_training_3.hdf5", dir);
    FILE *fp = fopen(path, "w");
    ok = fp && fputs("not an HDF5 file\n", fp) >= 0;
    if (fp) fclose(fp);
    o.bin_size = 0;
    for (o.seed = 1; ok && o.seed < 50; o.seed++) { /* a seed whose first file is a good one */
        Data *d;
        DataOpts off = o;
        off.no_prefetch = 1;
        if (data_open(&d, &off, &ea) == 0) {
            data_close(d);
            break;
        }
    }
    n = both_read(&o, 200, &files, &ea, &eb);
    test_cond("a bad file read ahead: its error at the same batch as reading it when reached",
              n >= 7 && n < 200);
    test_cond("... naming it", strstr(ea.msg, "p_training_3.hdf5") != NULL);
    for (int f = 0; f < 4; f++) {
        snprintf(path, sizeof path, "%s/p_training_%d.hdf5", dir, f);
        unlink(path);
    }
}

int main(void) {
    char dir[] = "/tmp/test_data.XXXXXX", path[256];
    if (!mkdtemp(dir)) return 1;
    snprintf(path, sizeof path, "%s/x_training_0.hdf5", dir);
    int ok = write_file(path) == 0;
    test_cond("test file written", ok);
    if (ok) test_bins(dir);
    unlink(path);
    test_prefetch(dir);
    rmdir(dir);
    return test_report();
}
