/* test_spill.c - hdf5gen's temporary files: appends read back by offset,
 * the error kept for a missing directory, records by bucket (many blocks
 * per bucket, read back in the order added, whatever the interleaving)
 * and the counting sort that groups records by bucket.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdf5gen/spill.h"
#include "tests/test.h"

typedef struct Rec {
    uint32_t key, seq, pad;
} Rec;

static void test_file(void) {
    Spill f;
    Err err;
    test_cond("open in the current directory", spill_open(&f, NULL, "t", &err) == 0);
    uint64_t a = spill_append(&f, "hello", 5), b = spill_append(&f, "world!", 6);
    char got[8] = {0};
    test_cond("appends get consecutive offsets", a == 0 && b == 5);
    test_cond("read back by offset", spill_pread(&f, got, 6, b) == 0 && !memcmp(got, "world!", 6));
    test_cond("a read past the end fails and zeroes", spill_pread(&f, got, 8, 8) == -1 && !got[0]);
    test_cond("... and the error is kept, naming the file's use",
              spill_failed(&f, &err) == 1 && strstr(err.msg, "t: temporary file in .:"));
    spill_close(&f);
    test_cond("a missing directory is an error naming it",
              spill_open(&f, "/nonexistent-dir", "x.hdf5", &err) == -1 &&
                  strstr(err.msg, "x.hdf5: cannot create a temporary file in /nonexistent-dir"));
}

static void test_buckets(void) {
    enum { K = 5, N = 5000 };
    SpillBuckets sb;
    Err err;
    /* buffers of 4 records: a bucket's records in many blocks, the buckets' blocks interleaved */
    test_cond("buckets: open",
              spill_buckets_open(&sb, K, sizeof(Rec), 4 * sizeof(Rec), NULL, "b", &err) == 0);
    uint32_t count[K] = {0}, x = 12345;
    for (uint32_t i = 0; i < N; i++) {
        x = x * 1103515245u + 12345u;
        Rec r = {(x >> 16) % K, i, 0};
        count[r.key]++;
        spill_buckets_add(&sb, r.key, &r);
    }
    test_cond("buckets: most records went to the file as blocks",
              sb.nblk * 4 > N - 4 * K && sb.nblk * 4 <= N);
    Buf out = {0};
    int ok = 1;
    uint32_t total = 0;
    for (int pass = 0; pass < 2; pass++) /* a bucket can be read again */
        for (int k = K - 1; k >= 0; k--) {
            ok &= spill_buckets_read(&sb, (size_t)k, &out) == 0;
            size_t n = out.len / sizeof(Rec);
            const Rec *r = (const Rec *)(const void *)out.data;
            ok &= n == count[k];
            for (size_t i = 0; i < n; i++)
                ok &= r[i].key == (uint32_t)k && (i == 0 || r[i].seq > r[i - 1].seq);
            if (!pass) total += (uint32_t)n;
        }
    test_cond("buckets: each read back whole, its records in the order added",
              ok && total == N && !spill_failed(&sb.f, &err));
    buf_free(&out);
    spill_buckets_close(&sb);
}

static void test_group(void) {
    Rec r[7] = {{2, 0, 0}, {0, 1, 0}, {2, 2, 0}, {3, 3, 0}, {0, 4, 0}, {2, 5, 0}, {0, 6, 0}};
    size_t *first, *ord = group_by_bucket(r, 7, sizeof *r, 0, 4, &first);
    static const size_t want_ord[7] = {1, 4, 6, 0, 2, 5, 3}, want_first[5] = {0, 3, 3, 6, 7};
    test_cond("group_by_bucket: by bucket, each in its order; an empty bucket",
              !memcmp(ord, want_ord, sizeof want_ord) &&
                  !memcmp(first, want_first, sizeof want_first));
    free(ord), free(first);
    ord = group_by_bucket(NULL, 0, sizeof *r, 0, 3, &first);
    test_cond("group_by_bucket: no records", first[0] == 0 && first[3] == 0);
    free(ord), free(first);
}

int main(void) {
    test_file();
    test_buckets();
    test_group();
    return test_report();
}
