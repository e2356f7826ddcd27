/* test_darray.c - the double-array trie builder (vocab/darray.c).
 *
 * Key sets with shared prefixes, every 1-byte key, long keys and random
 * byte strings are built and searched back: every key finds its value, and
 * the prefixes of arbitrary strings (found with darray_prefixes and
 * textnorm's darts_longest_prefix) are exactly those a hash set of the keys
 * gives. The walk of Darts-clone's commonPrefixSearch, which has no bounds
 * checks, is replayed with a check that it never leaves the array. Output
 * must not depend on the input order; equal subtries must share units;
 * bad key sets are refused.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tests/test.h"
#include "vocab/darray.h"
#include "common/hash.h"
#include "common/rng.h"
#include "vocab/textnorm.h"

typedef struct {
    char **k;
    size_t *len;
    int32_t *v;
    size_t n, cap;
    StrMap set; /* key -> value + 1 */
} Keys;

static void keys_init(Keys *ks) {
    memset(ks, 0, sizeof *ks);
    strmap_init(&ks->set, 0);
}

/* Add a key unless it is already there. */
static void keys_add(Keys *ks, const char *k, size_t len, int32_t v) {
    uint64_t *slot = strmap_slot(&ks->set, k, len);
    if (*slot) return;
    *slot = (uint64_t)v + 1;
    if (ks->n == ks->cap) {
        ks->cap = ks->cap ? ks->cap * 2 : 1024;
        ks->k = xrealloc(ks->k, ks->cap * sizeof *ks->k);
        ks->len = xrealloc(ks->len, ks->cap * sizeof *ks->len);
        ks->v = xrealloc(ks->v, ks->cap * sizeof *ks->v);
    }
    ks->k[ks->n] = xmalloc(len + 1);
    memcpy(ks->k[ks->n], k, len);
    ks->len[ks->n] = len;
    ks->v[ks->n++] = v;
}

static void keys_free(Keys *ks) {
    for (size_t i = 0; i < ks->n; i++)
        free(ks->k[i]);
    free(ks->k), free(ks->len), free(ks->v);
    strmap_free(&ks->set);
}

/* Darts-clone's commonPrefixSearch walk, with the bounds it does not
 * check counted as violations. Returns the number of matches. */
static size_t darts_walk(const DArray *da, const char *s, size_t n, int *oob) {
    const uint32_t *u = da->units;
    size_t found = 0;
    uint32_t pos = (u[0] >> 10) << ((u[0] & (1u << 9)) >> 6);
    for (size_t i = 0; i < n; i++) {
        pos ^= (unsigned char)s[i];
        if (pos >= da->n) return (*oob)++, found;
        uint32_t unit = u[pos];
        if ((unit & 0x800000FFu) != (unsigned char)s[i]) return found;
        pos ^= (unit >> 10) << ((unit & (1u << 9)) >> 6);
        if ((unit >> 8) & 1) {
            if (pos >= da->n) return (*oob)++, found;
            found++;
        }
    }
    return found;
}

/* Check every key and `nq` probes (keys with random tails, random
 * strings) against the hash set. */
static void check_lookups(const char *what, const Keys *ks, const DArray *da, Rng *r, size_t nq) {
    char msg[200];
    size_t bad_key = 0, bad_probe = 0, bad_longest = 0;
    int oob = 0;
    for (size_t i = 0; i < ks->n; i++) {
        size_t len = 0;
        int32_t v = darts_longest_prefix(da->units, da->n, ks->k[i], ks->len[i], &len);
        if (v != ks->v[i] || len != ks->len[i]) bad_key++;
        darts_walk(da, ks->k[i], ks->len[i], &oob);
    }
    snprintf(msg, sizeof msg, "%s: each of %zu keys finds its own value", what, ks->n);
    test_cond(msg, bad_key == 0);

    char q[300];
    int32_t vals[300];
    size_t lens[300];
    for (size_t t = 0; t < nq; t++) {
        size_t qn;
        if (t % 2 == 0 && ks->n > 0) { /* a key, cut or extended */
            size_t i = rng_below(r, ks->n), keep = ks->len[i] < 250 ? ks->len[i] : 250;
            keep = rng_below(r, keep + 1);
            memcpy(q, ks->k[i], keep);
            qn = keep + rng_below(r, 6);
            for (size_t j = keep; j < qn; j++)
                q[j] = (char)rng_below(r, 256);
        } else {
            qn = rng_below(r, 12);
            for (size_t j = 0; j < qn; j++)
                q[j] = (char)(rng_below(r, 256));
        }
        /* brute force: every prefix that is a key */
        int32_t want_v[300];
        size_t want_l[300], nw = 0;
        for (size_t l = 1; l <= qn; l++) {
            uint64_t *s = strmap_get(&ks->set, q, l);
            if (s) want_v[nw] = (int32_t)(*s - 1), want_l[nw++] = l;
        }
        size_t got = darray_prefixes(da->units, da->n, q, qn, vals, lens, 300);
        int ok = got == nw;
        for (size_t j = 0; ok && j < nw; j++)
            ok = vals[j] == want_v[j] && lens[j] == want_l[j];
        bad_probe += !ok;
        size_t len = 0;
        int32_t v = darts_longest_prefix(da->units, da->n, q, qn, &len);
        bad_longest += nw ? (v != want_v[nw - 1] || len != want_l[nw - 1]) : v != -1;
        int oob0 = oob;
        size_t walked = darts_walk(da, q, qn, &oob);
        bad_probe += oob == oob0 && walked != nw;
    }
    snprintf(msg, sizeof msg, "%s: all prefixes of %zu probes, as the hash set says", what, nq);
    test_cond(msg, bad_probe == 0);
    snprintf(msg, sizeof msg, "%s: longest prefix of %zu probes", what, nq);
    test_cond(msg, bad_longest == 0);
    snprintf(msg, sizeof msg, "%s: Darts-clone's unchecked walk stays inside the array", what);
    test_cond(msg, oob == 0);
    snprintf(msg, sizeof msg, "%s: whole 256-unit blocks", what);
    test_cond(msg, da->n > 0 && da->n % 256 == 0);
    if (bad_key || bad_probe || bad_longest || oob)
        printf("  %zu bad keys, %zu bad probes, %zu bad longest, %d out of bounds\n", bad_key,
               bad_probe, bad_longest, oob);
}

static int build(DArray *da, const Keys *ks) {
    Err err;
    int rc = darray_build(da, ks->n, (const char *const *)ks->k, ks->len, ks->v, &err);
    if (rc) printf("  darray_build: %s\n", err.msg);
    return rc;
}

static void test_small(void) {
    Keys ks;
    keys_init(&ks);
    const char *words[] = {"a",
                           "ab",
                           "abc",
                           "abd",
                           "b",
                           "ba",
                           "bab",
                           "z",
                           "zzzzzzzz",
                           "\xc3\xa9",
                           "\xc3\xa9t\xc3\xa9"};
    for (int i = 0; i < 11; i++)
        keys_add(&ks, words[i], strlen(words[i]), i * 7);
    DArray da;
    test_cond("small set builds", build(&da, &ks) == 0);
    size_t len = 0;
    test_cond("longest prefix of abcx is abc",
              darts_longest_prefix(da.units, da.n, "abcx", 4, &len) == 14 && len == 3);
    test_cond("longest prefix of abx is ab",
              darts_longest_prefix(da.units, da.n, "abx", 3, &len) == 7 && len == 2);
    test_cond("no key prefixes c", darts_longest_prefix(da.units, da.n, "cab", 3, &len) == -1);
    test_cond("zzz: z only",
              darts_longest_prefix(da.units, da.n, "zzz", 3, &len) == 49 && len == 1);
    int32_t v[8];
    size_t l[8];
    test_cond("abd: three prefixes, shortest first",
              darray_prefixes(da.units, da.n, "abdz", 4, v, l, 8) == 3 && v[0] == 0 && l[0] == 1 &&
                  v[1] == 7 && l[1] == 2 && v[2] == 21 && l[2] == 3);
    test_cond("count without room", darray_prefixes(da.units, da.n, "abdz", 4, NULL, NULL, 0) == 3);
    test_cond("a NUL byte never matches",
              darts_longest_prefix(da.units, da.n, "a\0bc", 4, &len) == 0 && len == 1);
    test_cond("empty input", darts_longest_prefix(da.units, da.n, "", 0, &len) == -1);
    check_lookups("small", &ks, &da, &(Rng){{1, 2, 3, 4}}, 2000);
    darray_free(&da);
    keys_free(&ks);
}

/* Every non-NUL byte as a key, and every pair of them below 0x20. */
static void test_bytes(void) {
    Keys ks;
    keys_init(&ks);
    for (int c = 1; c < 256; c++) {
        char k = (char)c;
        keys_add(&ks, &k, 1, c);
    }
    for (int a = 1; a < 32; a++)
        for (int b = 1; b < 256; b += 3) {
            char k[2] = {(char)a, (char)b};
            keys_add(&ks, k, 2, 1000 + a * 256 + b);
        }
    DArray da;
    test_cond("255 one-byte keys build", build(&da, &ks) == 0);
    check_lookups("bytes", &ks, &da, &(Rng){{5, 6, 7, 8}}, 5000);
    darray_free(&da);
    keys_free(&ks);
}

/* 100,000 random keys with shared prefixes, some long. */
static void test_random(void) {
    Keys ks;
    keys_init(&ks);
    Rng r;
    rng_seed(&r, 20240601);
    char k[5000];
    while (ks.n < 100000) {
        size_t len;
        if (ks.n > 0 && rng_below(&r, 3) == 0) { /* extend or vary an earlier key */
            size_t i = rng_below(&r, ks.n);
            len = ks.len[i] < 40 ? ks.len[i] : 40;
            memcpy(k, ks.k[i], len);
            size_t extra = 1 + rng_below(&r, 4);
            for (size_t j = 0; j < extra; j++)
                k[len++] = (char)(1 + rng_below(&r, 255));
        } else {
            len = 1 + rng_below(&r, rng_below(&r, 2) ? 6 : 30);
            /* mostly a small alphabet, for prefix sharing */
            for (size_t j = 0; j < len; j++)
                k[j] = (char)(rng_below(&r, 4) ? 'a' + rng_below(&r, 4) : 1 + rng_below(&r, 255));
        }
        keys_add(&ks, k, len, (int32_t)rng_below(&r, 1u << 31));
    }
    for (int i = 0; i < 3; i++) { /* long keys sharing a 4000-byte prefix */
        for (size_t j = 0; j < sizeof k; j++)
            k[j] = (char)('A' + j % 23);
        k[4000 + i] = 'x';
        keys_add(&ks, k, 4001 + i * 300, i);
    }
    keys_add(&ks, k, 3999, 0x7FFFFFFF);
    DArray da;
    test_cond("100,003 keys build", build(&da, &ks) == 0);
    check_lookups("random", &ks, &da, &r, 40000);
    size_t len = 0;
    test_cond("a long key's own value",
              darts_longest_prefix(da.units, da.n, ks.k[ks.n - 1], 3999, &len) == 0x7FFFFFFF);

    /* the same keys in another order give the same units */
    Keys sh;
    keys_init(&sh);
    size_t *perm = xmalloc(ks.n * sizeof *perm);
    for (size_t i = 0; i < ks.n; i++)
        perm[i] = i;
    for (size_t i = ks.n - 1; i > 0; i--) {
        size_t j = rng_below(&r, i + 1), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    for (size_t i = 0; i < ks.n; i++)
        keys_add(&sh, ks.k[perm[i]], ks.len[perm[i]], ks.v[perm[i]]);
    DArray d2, d3;
    test_cond("shuffled keys build", build(&d2, &sh) == 0);
    test_cond("input order does not matter",
              d2.n == da.n && memcmp(d2.units, da.units, da.n * 4) == 0);
    test_cond("a second build is identical",
              build(&d3, &ks) == 0 && d3.n == da.n && memcmp(d3.units, da.units, da.n * 4) == 0);
    darray_free(&d2), darray_free(&d3);
    free(perm);
    keys_free(&sh);
    darray_free(&da);
    keys_free(&ks);
}

/* Keys whose tails repeat with the same values share units. */
static void test_sharing(void) {
    Keys same, diff;
    keys_init(&same), keys_init(&diff);
    for (int a = 0; a < 200; a++)
        for (int b = 0; b < 20; b++) {
            char k[6] = {
                (char)(0xC4 + a / 64), (char)(0x80 + a % 64), 'x', (char)('a' + b), 'y', 'z'};
            keys_add(&same, k, 6, b);
            keys_add(&diff, k, 6, a * 20 + b);
        }
    DArray ds, dd;
    test_cond("shared tails build", build(&ds, &same) == 0 && build(&dd, &diff) == 0);
    check_lookups("shared tails", &same, &ds, &(Rng){{9, 9, 9, 9}}, 3000);
    check_lookups("distinct tails", &diff, &dd, &(Rng){{9, 9, 9, 10}}, 3000);
    test_cond("equal subtries are stored once", ds.n * 8 < dd.n);
    printf("test_darray: 4000 keys: %zu units with shared tails, %zu without\n", ds.n, dd.n);
    darray_free(&ds), darray_free(&dd);
    keys_free(&same), keys_free(&diff);
}

static void test_errors(void) {
    DArray da;
    Err err;
    const char *k2[] = {"ab", "ab"};
    size_t l2[] = {2, 2};
    int32_t v2[] = {1, 2};
    test_cond("repeated key refused",
              darray_build(&da, 2, k2, l2, v2, &err) == -1 && strstr(err.msg, "repeated"));
    const char *k1[] = {"a\0b"};
    size_t l1[] = {3};
    test_cond("NUL byte refused",
              darray_build(&da, 1, k1, l1, v2, &err) == -1 && strstr(err.msg, "NUL"));
    size_t l0[] = {0};
    test_cond("empty key refused",
              darray_build(&da, 1, k1, l0, v2, &err) == -1 && strstr(err.msg, "empty"));
    int32_t neg[] = {-5};
    test_cond("negative value refused",
              darray_build(&da, 1, k2, l2, neg, &err) == -1 && strstr(err.msg, "negative"));
    test_cond("no keys: an array that matches nothing",
              darray_build(&da, 0, NULL, NULL, NULL, &err) == 0 && da.n == 256);
    size_t len;
    test_cond("no keys: lookups fail",
              darts_longest_prefix(da.units, da.n, "abc", 3, &len) == -1 &&
                  darray_prefixes(da.units, da.n, "\x01", 1, NULL, NULL, 0) == 0);
    darray_free(&da);
}

int main(void) {
    test_small();
    test_bytes();
    test_random();
    test_sharing();
    test_errors();
    return test_report();
}
