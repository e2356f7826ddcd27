/* test_deflate.c - the run-length + Huffman zlib encoder: every output
 * decodes (libdeflate's strict zlib decoder, checksum included) to the
 * input, for empty, tiny, constant, random, skewed (deep Huffman trees),
 * run-heavy and token-id-like inputs of many sizes; the bound holds; the
 * output is deterministic; stored blocks take over when Huffman coding
 * would not save anything; Adler-32 matches the RFC 1950 example.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"
#include "hdf5gen/deflate.h"
#include "hdf5gen/h5file.h"
#include "common/rng.h"

static DflScratch sc;
static int bad_roundtrips, roundtrips;

static size_t roundtrip(const uint8_t *src, size_t n) {
    size_t cap = dfl_bound(n);
    uint8_t *z = malloc(cap), *back = malloc(n + 1), *z2 = malloc(cap);
    size_t zn = dfl_compress(src, n, z, cap, &sc);
    size_t zn2 = dfl_compress(src, n, z2, cap, &sc);
    int ok = zn > 0 && zn <= cap && h5_inflate(z, zn, back, n) == 0 && memcmp(back, src, n) == 0 &&
             zn2 == zn && memcmp(z, z2, zn) == 0;
    if (zn > 6 && dfl_compress(src, n, z2, zn - 1, &sc) != 0) ok = 0; /* too small a buffer: 0 */
    roundtrips++;
    if (!ok) {
        bad_roundtrips++;
        if (bad_roundtrips < 5) printf("  roundtrip failed: n = %zu, compressed %zu\n", n, zn);
    }
    free(z);
    free(z2);
    free(back);
    return zn;
}

/* Adler-32 by its definition (RFC 1950 section 8.2), a byte at a time. */
static uint32_t adler_ref(const uint8_t *p, size_t n) {
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < n; i++)
        a = (a + p[i]) % 65521, b = (b + a) % 65521;
    return b << 16 | a;
}

int main(void) {
    const uint8_t abc[] = "Wikipedia";
    test_cond("adler32 of 'Wikipedia' (RFC 1950 example) = 0x11E60398",
              dfl_adler32(1, abc, 9) == 0x11E60398u);
    uint8_t *big = malloc(1 << 20);
    for (size_t i = 0; i < (1u << 20); i++)
        big[i] = (uint8_t)(i * 2654435761u >> 13);
    uint8_t *ff = malloc(1 << 20);
    memset(ff, 0xff, 1 << 20);
    int agree = 1;
    static const size_t lens[] = {0,    1,    15,   16,    17,     255,    4095,
                                  4096, 4097, 5552, 65536, 100003, 1 << 20};
    for (size_t k = 0; k < sizeof lens / sizeof *lens; k++)
        agree &= dfl_adler32(1, big, lens[k]) == adler_ref(big, lens[k]) &&
                 dfl_adler32(1, ff, lens[k]) == adler_ref(ff, lens[k]);
    test_cond("adler32 = its definition (lengths 0 .. 1 MiB, all-0xff bytes too)", agree);
    free(ff);
    test_cond("adler32 in pieces = at once",
              dfl_adler32(dfl_adler32(1, big, 7000), big + 7000, (1 << 20) - 7000) ==
                  dfl_adler32(1, big, 1 << 20));

    roundtrip(big, 0);
    uint8_t one = 42;
    roundtrip(&one, 1);
    Rng r;
    rng_seed(&r, 7);
    static const size_t sizes[] = {2,    3,    4,     5,     8,     9,      10,
                                   15,   16,   17,    100,   257,   258,    259,
                                   1000, 4095, 65535, 65536, 65537, 200000, 1 << 20};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si];
        memset(big, 0, n); /* constant: all runs */
        roundtrip(big, n);
        memset(big, 0xab, n);
        roundtrip(big, n);
        for (size_t i = 0; i < n; i++)
            big[i] = (uint8_t)rng_u64(&r); /* random: stored blocks */
        size_t zn = roundtrip(big, n);
        if (n == 65537) test_cond("random data: no more than stored size", zn <= n + 5 * 2 + 6);
        for (size_t i = 0; i < n; i++)
            big[i] = (uint8_t)(rng_u64(&r) % 3 == 0 ? rng_u64(&r) : 0); /* sparse */
        roundtrip(big, n);
        for (size_t i = 0; i < n; i++) { /* Fibonacci-like frequencies: a tree deeper than 15 */
            uint64_t x = rng_u64(&r);
            int k = 0;
            while (k < 24 && (x & 1))
                x >>= 1, k++;
            big[i] = (uint8_t)k;
        }
        roundtrip(big, n);
        for (size_t i = 0; i + 4 <= n; i += 4) { /* int32 token ids with zero padding runs */
            uint32_t id = (i / 4) % 128 > 100 ? 0 : (uint32_t)(rng_u64(&r) % 30522);
            memcpy(big + i, &id, 4);
        }
        roundtrip(big, n);
        for (size_t i = 0; i < n; i++)
            big[i] = (uint8_t)((i / 7) % 2); /* short runs, near the 3-byte minimum */
        roundtrip(big, n);
        for (size_t i = 0; i < n; i++)
            big[i] = (uint8_t)(i % 5 < 3 ? 9 : i); /* runs of exactly 3 */
        roundtrip(big, n);
    }
    for (int t = 0; t < 300; t++) { /* random mixtures of runs and noise, random sizes */
        size_t n = (size_t)(rng_u64(&r) % 3000) + 1;
        for (size_t i = 0; i < n;) {
            size_t run = (size_t)(rng_u64(&r) % 300);
            uint8_t b = (uint8_t)(rng_u64(&r) % 4);
            for (size_t k = 0; k < run && i < n; k++)
                big[i++] = b;
            if (i < n) big[i++] = (uint8_t)rng_u64(&r);
        }
        roundtrip(big, n);
    }
    test_cond("every roundtrip decodes to the input", bad_roundtrips == 0);
    test_cond("roundtrips made", roundtrips > 400);
    /* compresses what it should: 1 MB of zeros to about 1 byte per 258-byte run */
    memset(big, 0, 1 << 20);
    uint8_t *z = malloc(dfl_bound(1 << 20));
    size_t zn = dfl_compress(big, 1 << 20, z, dfl_bound(1 << 20), &sc);
    test_cond("1 MB of zeros: under 2 KB", zn > 0 && zn < 2048);
    test_cond("zlib header 78 01", z[0] == 0x78 && z[1] == 0x01 && (z[0] * 256 + z[1]) % 31 == 0);
    free(z);
    free(big);
    dfl_scratch_free(&sc);
    return test_report();
}
