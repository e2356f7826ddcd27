/* pyrandom.h - CPython's random.Random, bit for bit, for the calls that
 * create_pretraining_data.py makes.
 *
 * NVIDIA's (and Google's) create_pretraining_data.py draws every decision
 * from one random.Random(seed); reproducing its instances byte for byte
 * needs the same generator and the same derivation of each draw:
 *
 *   generator   MT19937 (Matsumoto & Nishimura, mt19937ar.c), 624 words
 *   seed(s)     s >= 0 as its 32-bit limbs, least significant first (at
 *               least one), fed to init_by_array; seed(-s) == seed(s)
 *   random()    (u32 >> 5) * 2^26 + (u32 >> 6), divided by 2^53
 *   getrandbits(k <= 32)    u32 >> (32 - k); for 32 < k <= 64 the low word
 *               comes first, the high word is u32 >> (64 - k)
 *   _randbelow(n)           k = bit_length(n) (of n, not n - 1; so n == 1
 *               still draws until it gets a 0 bit); repeat getrandbits(k)
 *               until < n
 *   randint(a, b)           a + _randbelow(b - a + 1)
 *   shuffle(x)  for i = len - 1 down to 1: swap x[i], x[_randbelow(i + 1)]
 *
 * This is CPython 3.6 through 3.12 (Modules/_randommodule.c, Lib/random.py;
 * 3.6 is what the NGC container of the original ran; the vectors in
 * tests/unit/test_pyrandom.c come from 3.11).
 *
 *   PyRandom r;
 *   pyrandom_seed(&r, 12345);
 *   double u = pyrandom_random(&r);          // 0.41661987254534116
 *   int64_t k = pyrandom_randint(&r, 0, 9);
 */
#ifndef WB_PYRANDOM_H
#define WB_PYRANDOM_H

#include <stddef.h>
#include <stdint.h>

#define PYRANDOM_N 624

typedef struct PyRandom {
    uint32_t mt[PYRANDOM_N];
    int mti;         /* next word of mt to temper; PYRANDOM_N: regenerate first */
    uint64_t blocks; /* refills so far (for pyrandom_tell) */
} PyRandom;

/* random.Random(seed) for a non-negative integer seed. */
void pyrandom_seed(PyRandom *r, uint64_t seed);

/* The same for a signed seed: Python seeds with abs(seed). */
void pyrandom_seed_i64(PyRandom *r, int64_t seed);

/* Seed from the 32-bit limbs of any non-negative integer, least significant
 * first (n >= 1; Python passes [0] for 0): mt19937ar's init_by_array. */
void pyrandom_seed_limbs(PyRandom *r, const uint32_t *key, size_t n);

/* Refill the state with the next 624 untempered words (internal; called by
 * pyrandom_u32 every 624 draws). */
void pyrandom_regen(PyRandom *r);

/* Number of 32-bit words drawn since seeding (random() draws 2). */
static inline uint64_t pyrandom_tell(const PyRandom *r) {
    return r->blocks * PYRANDOM_N + (uint64_t)r->mti - PYRANDOM_N;
}

/* Draw and discard n 32-bit words (cheaper than drawing them: only the
 * refills are computed). */
void pyrandom_skip(PyRandom *r, uint64_t n);

/* The next 32-bit output (mt19937ar's genrand_int32). */
static inline uint32_t pyrandom_u32(PyRandom *r) {
    if (r->mti >= PYRANDOM_N) pyrandom_regen(r);
    uint32_t y = r->mt[r->mti++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/* random.random(): a double in [0, 1) with 53 random bits. */
static inline double pyrandom_random(PyRandom *r) {
    uint32_t a = pyrandom_u32(r) >> 5, b = pyrandom_u32(r) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

/* random.getrandbits(k) for 1 <= k <= 64. */
static inline uint64_t pyrandom_getrandbits(PyRandom *r, int k) {
    if (k <= 32) return pyrandom_u32(r) >> (32 - k);
    uint64_t lo = pyrandom_u32(r);
    uint64_t hi = pyrandom_u32(r) >> (64 - k);
    return lo | hi << 32;
}

/* Number of bits of n (Python's int.bit_length); 0 for 0. */
static inline int pyrandom_bit_length(uint64_t n) { return n ? 64 - __builtin_clzll(n) : 0; }

/* random._randbelow(n): uniform in [0, n) by rejection, n >= 1 (n == 0
 * returns 0 without drawing; Python would raise). */
static inline uint64_t pyrandom_below(PyRandom *r, uint64_t n) {
    if (!n) return 0;
    int k = pyrandom_bit_length(n);
    if (k <= 32) {
        uint32_t m = (uint32_t)n, x;
        do
            x = pyrandom_u32(r) >> (32 - k);
        while (x >= m);
        return x;
    }
    uint64_t x;
    do
        x = pyrandom_getrandbits(r, k);
    while (x >= n);
    return x;
}

/* The draws random.shuffle makes for n elements, without moving anything
 * (the draws depend only on n). */
void pyrandom_shuffle_draws(PyRandom *r, size_t n);

/* random.shuffle of n int32 values (the same draws; a faster loop). */
void pyrandom_shuffle_i32(PyRandom *r, int32_t *x, size_t n);

/* random.randint(a, b), a <= b (and b - a < 2^63). */
static inline int64_t pyrandom_randint(PyRandom *r, int64_t a, int64_t b) {
    return a + (int64_t)pyrandom_below(r, (uint64_t)(b - a) + 1);
}

/* random.shuffle on an array of n elements of `size` bytes each (any type;
 * the draws depend only on n). */
void pyrandom_shuffle(PyRandom *r, void *base, size_t n, size_t size);

#endif
