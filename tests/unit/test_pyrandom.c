/* test_pyrandom.c - CPython random.Random replication.
 *
 * Always: output vectors of CPython 3.11's random.Random written down here
 * (getrandbits(32), random(), randint, randrange, shuffle for several seeds,
 * including seeds of two 32-bit limbs). When a python3 is found
 * (WIKIBERT_PYTHON, python3, /usr/bin/python3) a longer mixed sequence of
 * calls is also run through CPython and compared value for value; without
 * one that check prints that it did not run and counts nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/test.h"
#include "common/pyrandom.h"

static void test_vectors(void) {
    PyRandom r;
    /* random.Random(12345).getrandbits(32) x5 */
    static const uint32_t u32_12345[5] = {1789368711u, 3146859322u, 43676229u, 3522623596u,
                                          3544234957u};
    pyrandom_seed(&r, 12345);
    int ok = 1;
    for (int i = 0; i < 5; i++)
        ok &= pyrandom_u32(&r) == u32_12345[i];
    test_cond("seed 12345: first five u32", ok);

    /* random.Random(12345).random() x5 (repr round-trips exactly) */
    static const double rnd_12345[5] = {0.41661987254534116, 0.010169169457068361,
                                        0.8252065092537432, 0.2986398551995928, 0.3684116894884757};
    pyrandom_seed(&r, 12345);
    ok = 1;
    for (int i = 0; i < 5; i++)
        ok &= pyrandom_random(&r) == rnd_12345[i];
    test_cond("seed 12345: first five random()", ok);

    static const int ri_12345[10] = {6, 0, 4, 5, 3, 4, 9, 6, 2, 5};
    pyrandom_seed(&r, 12345);
    ok = 1;
    for (int i = 0; i < 10; i++)
        ok &= pyrandom_randint(&r, 0, 9) == ri_12345[i];
    test_cond("seed 12345: randint(0, 9) x10", ok);

    static const int ri2_12345[5] = {55, 95, 3, 106, 107};
    pyrandom_seed(&r, 12345);
    ok = 1;
    for (int i = 0; i < 5; i++)
        ok &= pyrandom_randint(&r, 2, 125) == ri2_12345[i];
    test_cond("seed 12345: randint(2, 125) x5", ok);

    static const int sh_12345[10] = {8, 7, 3, 5, 1, 2, 9, 4, 0, 6};
    int x[10];
    for (int i = 0; i < 10; i++)
        x[i] = i;
    pyrandom_seed(&r, 12345);
    pyrandom_shuffle(&r, x, 10, sizeof x[0]);
    test_cond("seed 12345: shuffle(range(10))", memcmp(x, sh_12345, sizeof x) == 0);

    /* seed 0 is the key [0] */
    pyrandom_seed(&r, 0);
    test_cond("seed 0: u32", pyrandom_u32(&r) == 3626764237u && pyrandom_u32(&r) == 1654615998u &&
                                 pyrandom_u32(&r) == 3255389356u);
    pyrandom_seed(&r, 0);
    test_cond("seed 0: random()", pyrandom_random(&r) == 0.8444218515250481);

    /* two limbs: 2^32 + 5 -> [5, 1]; 2^64 - 1 -> [0xffffffff, 0xffffffff] */
    pyrandom_seed(&r, (1ull << 32) + 5);
    test_cond("seed 2^32+5", pyrandom_u32(&r) == 675479763u && pyrandom_u32(&r) == 2085189291u &&
                                 pyrandom_u32(&r) == 1213270837u);
    pyrandom_seed(&r, UINT64_MAX);
    test_cond("seed 2^64-1", pyrandom_u32(&r) == 93740670u && pyrandom_u32(&r) == 1068495656u &&
                                 pyrandom_u32(&r) == 1452108352u);
    pyrandom_seed_i64(&r, -12345);
    test_cond("seed -12345 == seed 12345", pyrandom_u32(&r) == u32_12345[0]);

    /* randint(0, 0) is not free: getrandbits(1) until a 0 bit */
    pyrandom_seed(&r, 42);
    ok = 1;
    for (int i = 0; i < 3; i++)
        ok &= pyrandom_randint(&r, 0, 0) == 0;
    test_cond("seed 42: randint(0, 0) x3 then getrandbits(32)",
              ok && pyrandom_u32(&r) == 1051802512u);

    /* randrange(1000000007) x3 (30-bit rejection) */
    pyrandom_seed(&r, 42);
    test_cond("seed 42: randrange(1000000007)", pyrandom_below(&r, 1000000007) == 686579303 &&
                                                    pyrandom_below(&r, 1000000007) == 119540831 &&
                                                    pyrandom_below(&r, 1000000007) == 26855092);

    /* getrandbits(64) x2, then randrange(2**40 + 3) x2: words low first */
    pyrandom_seed(&r, 42);
    test_cond("seed 42: getrandbits(64)",
              pyrandom_getrandbits(&r, 64) == 2053695854357871005ull &&
                  pyrandom_getrandbits(&r, 64) == 13679192365072849617ull);
    test_cond("seed 42: randrange(2**40+3)",
              pyrandom_below(&r, (1ull << 40) + 3) == 538052153943ull &&
                  pyrandom_below(&r, (1ull << 40) + 3) == 305901360862ull);

    /* shuffle(range(1000)) with seed 7, first ten, then random() */
    static const int sh_7[10] = {878, 857, 349, 313, 382, 850, 927, 194, 261, 946};
    int *big = malloc(1000 * sizeof *big);
    for (int i = 0; i < 1000; i++)
        big[i] = i;
    pyrandom_seed(&r, 7);
    pyrandom_shuffle(&r, big, 1000, sizeof big[0]);
    test_cond("seed 7: shuffle(range(1000))[:10]", memcmp(big, sh_7, sizeof sh_7) == 0);
    test_cond("seed 7: random() after the shuffle", pyrandom_random(&r) == 0.6673550488376796);
    free(big);

    /* the state refill: 1000 random() (2000 words) then getrandbits(32) */
    pyrandom_seed(&r, 12345);
    for (int i = 0; i < 1000; i++)
        pyrandom_random(&r);
    test_cond("seed 12345: word 2001", pyrandom_u32(&r) == 269534382u);

    /* shuffle of wide elements swaps whole elements */
    struct {
        char s[100];
    } w[10];
    for (int i = 0; i < 10; i++)
        memset(w[i].s, 'a' + i, sizeof w[i].s);
    pyrandom_seed(&r, 12345);
    pyrandom_shuffle(&r, w, 10, sizeof w[0]);
    ok = 1;
    for (int i = 0; i < 10; i++)
        ok &= w[i].s[0] == 'a' + sh_12345[i] && w[i].s[99] == 'a' + sh_12345[i];
    test_cond("shuffle of 100-byte elements", ok);

    test_cond("bit_length", pyrandom_bit_length(0) == 0 && pyrandom_bit_length(1) == 1 &&
                                pyrandom_bit_length(2) == 2 && pyrandom_bit_length(255) == 8 &&
                                pyrandom_bit_length(256) == 9 &&
                                pyrandom_bit_length(UINT64_MAX) == 64);
}

/* The Python program and the C side run the same script of calls:
 * for each seed: 300 x (random, randint(0, m), randrange(big)), then a
 * shuffle of range(n), printing every value. */
static const uint64_t script_seeds[] = {1, 12345, 4294967295ull, 4294967296ull,
                                        987654321987654321ull};

static void run_c_script(FILE *out) {
    PyRandom r;
    for (size_t s = 0; s < sizeof script_seeds / sizeof script_seeds[0]; s++) {
        pyrandom_seed(&r, script_seeds[s]);
        for (int i = 0; i < 300; i++) {
            double u = pyrandom_random(&r);
            int64_t a = pyrandom_randint(&r, 0, i % 37);
            int64_t b = pyrandom_randint(&r, -5, 3 + 1000003LL * i);
            uint64_t c = pyrandom_below(&r, 1 + (uint64_t)i * 77777777777ull);
            fprintf(out, "%.17g %" PRId64 " %" PRId64 " %" PRIu64 "\n", u, a, b, c);
        }
        int n = 1 + (int)(script_seeds[s] % 500);
        int *x = malloc((size_t)n * sizeof *x);
        for (int i = 0; i < n; i++)
            x[i] = i;
        pyrandom_shuffle(&r, x, (size_t)n, sizeof *x);
        for (int i = 0; i < n; i++)
            fprintf(out, "%d%c", x[i], i + 1 < n ? ' ' : '\n');
        free(x);
    }
}

static const char py_script[] =
    "import random\n"
    "for s in (1, 12345, 4294967295, 4294967296, 987654321987654321):\n"
    "    r = random.Random(s)\n"
    "    for i in range(300):\n"
    "        u = r.random(); a = r.randint(0, i % 37); b = r.randint(-5, 3 + 1000003 * i)\n"
    "        c = r.randrange(1 + i * 77777777777)\n"
    "        print('%.17g %d %d %d' % (u, a, b, c))\n"
    "    x = list(range(1 + s % 500)); r.shuffle(x)\n"
    "    print(' '.join(map(str, x)))\n";

static void test_against_python(void) {
    const char *cands[] = {getenv("WIKIBERT_PYTHON"), "python3", "/usr/bin/python3"};
    const char *py = NULL;
    char cmd[1024];
    for (int i = 0; i < 3 && !py; i++) {
        if (!cands[i] || !*cands[i]) continue;
        snprintf(cmd, sizeof cmd, "'%s' -c 'import random' >/dev/null 2>&1", cands[i]);
        if (system(cmd) == 0) py = cands[i];
    }
    if (!py) {
        printf("test_pyrandom: no python3: the comparison with CPython did not run\n");
        return;
    }
    char dir[] = "/tmp/test_pyrandom.XXXXXX";
    if (!mkdtemp(dir)) {
        test_cond("mkdtemp", 0);
        return;
    }
    char path[600];
    snprintf(path, sizeof path, "%s/script.py", dir);
    FILE *fp = fopen(path, "w");
    fputs(py_script, fp);
    fclose(fp);
    snprintf(path, sizeof path, "%s/c.txt", dir);
    fp = fopen(path, "w");
    run_c_script(fp);
    fclose(fp);
    snprintf(cmd, sizeof cmd, "cd %s && '%s' script.py > py.txt && cmp -s py.txt c.txt", dir, py);
    test_cond("mixed calls, 5 seeds: identical to CPython", system(cmd) == 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) printf("test_pyrandom: could not remove %s\n", dir);
}

/* The fast paths used by hdf5gen against the plain ones: shuffle_i32 moves
 * like pyrandom_shuffle, shuffle_draws draws what it draws, skip(n) draws
 * n words, tell counts them; sizes around the 624-word refill. */
static void test_fast_paths(void) {
    static const size_t sizes[] = {0, 1, 2, 3, 7, 100, 623, 624, 625, 1000, 5000};
    int same_moves = 1, same_draws = 1, same_tell = 1;
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        int32_t *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
        for (size_t i = 0; i < n; i++)
            a[i] = b[i] = (int32_t)(i * 7 + 3);
        PyRandom r1, r2, r3;
        pyrandom_seed(&r1, 12345 + n), pyrandom_seed(&r2, 12345 + n), pyrandom_seed(&r3, 12345 + n);
        pyrandom_u32(&r1), pyrandom_u32(&r2), pyrandom_u32(&r3);
        pyrandom_shuffle(&r1, a, n, sizeof *a);
        pyrandom_shuffle_i32(&r2, b, n);
        pyrandom_shuffle_draws(&r3, n);
        for (size_t i = 0; i < n; i++)
            same_moves &= a[i] == b[i];
        uint32_t x1 = pyrandom_u32(&r1), x2 = pyrandom_u32(&r2), x3 = pyrandom_u32(&r3);
        same_draws &= x1 == x2 && x1 == x3;
        same_tell &= pyrandom_tell(&r1) == pyrandom_tell(&r3);
        free(a), free(b);
    }
    test_cond("shuffle_i32 moves like shuffle (n = 0 .. 5000)", same_moves);
    test_cond("shuffle_i32 and shuffle_draws draw what shuffle draws", same_draws);
    test_cond("tell agrees after shuffle and shuffle_draws", same_tell);

    static const uint64_t skips[] = {0, 1, 623, 624, 625, 1248, 10000, 123457};
    int skip_ok = 1, tell_ok = 1;
    for (size_t k = 0; k < sizeof skips / sizeof *skips; k++) {
        PyRandom r1, r2;
        pyrandom_seed(&r1, 7), pyrandom_seed(&r2, 7);
        pyrandom_u32(&r1), pyrandom_u32(&r2);
        for (uint64_t i = 0; i < skips[k]; i++)
            pyrandom_u32(&r1);
        pyrandom_skip(&r2, skips[k]);
        tell_ok &= pyrandom_tell(&r1) == skips[k] + 1 && pyrandom_tell(&r2) == skips[k] + 1;
        for (int i = 0; i < 700; i++)
            skip_ok &= pyrandom_u32(&r1) == pyrandom_u32(&r2);
    }
    test_cond("skip(n) == n draws (n around refills)", skip_ok);
    test_cond("tell counts words drawn", tell_ok);
}

int main(void) {
    test_vectors();
    test_fast_paths();
    test_against_python();
    return test_report();
}
