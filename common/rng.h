/* rng.h - seeded pseudo-random numbers (header-only).
 *
 * xoshiro256** (Blackman & Vigna, 2018) seeded through splitmix64, so any
 * 64-bit --seed gives a well-mixed state. Never seeded from the clock: the
 * same seed gives the same sequence on every machine, which is what makes
 * outputs byte-identical between runs. (Bit-exact replication of Python's
 * random.Random, which create_pretraining_data.py needs, lives with that
 * stage.)
 *
 *   Rng r; rng_seed(&r, 12345);
 *   uint64_t x = rng_u64(&r); double u = rng_double(&r); uint64_t k = rng_below(&r, 10);
 */
#ifndef WB_RNG_H
#define WB_RNG_H

#include <stdint.h>

typedef struct Rng {
    uint64_t s[4];
} Rng;

static inline uint64_t rng_splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void rng_seed(Rng *r, uint64_t seed) {
    for (int i = 0; i < 4; i++)
        r->s[i] = rng_splitmix64(&seed);
}

static inline uint64_t rng_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rng_u64(Rng *r) {
    uint64_t *s = r->s;
    uint64_t result = rng_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rng_rotl(s[3], 45);
    return result;
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double rng_double(Rng *r) { return (double)(rng_u64(r) >> 11) * 0x1.0p-53; }

/* Uniform integer in [0, n), n > 0, without modulo bias (rejection). */
static inline uint64_t rng_below(Rng *r, uint64_t n) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = rng_u64(r);
    while (x >= limit);
    return x % n;
}

#endif
