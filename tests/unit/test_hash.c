/* test_hash.c - arena, StrMap and the seeded RNG. */
#include "tests/test.h"
#include "common/arena.h"
#include "common/hash.h"
#include "common/rng.h"

static void test_arena(void) {
    Arena a;
    arena_init(&a, 1024);
    char *p = arena_alloc(&a, 10);
    test_cond("aligned", ((uintptr_t)p & 15) == 0);
    memset(p, 'x', 10);
    char *big = arena_alloc(&a, 5000); /* own block */
    memset(big, 'y', 5000);
    ArenaMark m = arena_mark(&a);
    for (int i = 0; i < 100; i++)
        memset(arena_alloc(&a, 100), i, 100);
    arena_release(&a, m);
    char *s = arena_strndup(&a, "hello world", 5);
    test_str_eq("strndup", s, "hello");
    test_cond("earlier data kept", p[9] == 'x' && big[4999] == 'y');
    arena_reset(&a);
    test_cond("reset keeps one block", a.head != NULL && a.total >= 1024);
    arena_free(&a);
}

static void test_map(void) {
    StrMap m;
    strmap_init(&m, 0);
    char key[32];
    for (int i = 0; i < 10000; i++) {
        int n = snprintf(key, sizeof key, "k%d", i % 2500);
        *strmap_slot(&m, key, (size_t)n) += 1;
    }
    test_cond("count", m.count == 2500);
    int ok = 1;
    for (int i = 0; i < 2500; i++) {
        int n = snprintf(key, sizeof key, "k%d", i);
        uint64_t *v = strmap_get(&m, key, (size_t)n);
        ok &= v && *v == 4;
    }
    test_cond("values", ok);
    test_cond("absent", strmap_get(&m, "nope", 4) == NULL);
    test_cond("load factor", m.count * 2 <= m.cap);
    test_cond("embedded NUL keys differ", strmap_get(&m, "k1\0", 3) == NULL);
    strmap_free(&m);
    test_cond("hash stable", hash_bytes("abc", 3) == hash_bytes("abc", 3) &&
                                 hash_bytes("abc", 3) != hash_bytes("abd", 3));
}

static void test_rng(void) {
    Rng a, b, c;
    rng_seed(&a, 42);
    rng_seed(&b, 42);
    rng_seed(&c, 43);
    int same = 1, diff = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t x = rng_u64(&a), y = rng_u64(&b), z = rng_u64(&c);
        same &= x == y;
        diff |= x != z;
    }
    test_cond("same seed, same sequence", same);
    test_cond("other seed, other sequence", diff);
    int inrange = 1, hist[10] = {0};
    for (int i = 0; i < 100000; i++) {
        uint64_t k = rng_below(&a, 10);
        inrange &= k < 10;
        if (k < 10) hist[k]++;
        double d = rng_double(&a);
        inrange &= d >= 0 && d < 1;
    }
    test_cond("ranges", inrange);
    int flat = 1;
    for (int i = 0; i < 10; i++)
        flat &= hist[i] > 9500 && hist[i] < 10500;
    test_cond("roughly uniform", flat);
}

int main(void) {
    test_arena();
    test_map();
    test_rng();
    return test_report();
}
