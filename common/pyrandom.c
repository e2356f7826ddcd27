/* pyrandom.c - MT19937 seeding and state refill for pyrandom.h, and its
 * shuffles.
 *
 * The algorithm is the reference one of Matsumoto and Nishimura
 * (mt19937ar.c, 2002: init_genrand, init_by_array, genrand_int32), which
 * CPython's _randommodule.c uses unchanged; see pyrandom.h for how random()
 * and friends derive from it. With SSE2 (every x86-64) the refill and the
 * shuffles' tempering work on four words at a time, with the same words.
 */
#include "common/pyrandom.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define MT_M 397
#define MT_MATRIX_A 0x9908b0dfu
#define MT_UPPER 0x80000000u
#define MT_LOWER 0x7fffffffu

/* mt19937ar's init_genrand(s). */
static void init_genrand(PyRandom *r, uint32_t s) {
    uint32_t *mt = r->mt;
    mt[0] = s;
    for (int i = 1; i < PYRANDOM_N; i++)
        mt[i] = 1812433253u * (mt[i - 1] ^ (mt[i - 1] >> 30)) + (uint32_t)i;
    r->mti = PYRANDOM_N;
}

void pyrandom_seed_limbs(PyRandom *r, const uint32_t *key, size_t n) {
    static const uint32_t zero = 0;
    if (!n) key = &zero, n = 1;
    uint32_t *mt = r->mt;
    init_genrand(r, 19650218u);
    size_t i = 1, j = 0;
    for (size_t k = PYRANDOM_N > n ? PYRANDOM_N : n; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525u)) + key[j] + (uint32_t)j;
        i++, j++;
        if (i >= PYRANDOM_N) mt[0] = mt[PYRANDOM_N - 1], i = 1;
        if (j >= n) j = 0;
    }
    for (size_t k = PYRANDOM_N - 1; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941u)) - (uint32_t)i;
        i++;
        if (i >= PYRANDOM_N) mt[0] = mt[PYRANDOM_N - 1], i = 1;
    }
    mt[0] = 0x80000000u; /* non-zero initial state */
    r->mti = PYRANDOM_N;
    r->blocks = 0;
}

void pyrandom_seed(PyRandom *r, uint64_t seed) {
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    pyrandom_seed_limbs(r, key, key[1] ? 2 : 1);
}

void pyrandom_seed_i64(PyRandom *r, int64_t seed) {
    pyrandom_seed(r, seed < 0 ? 0 - (uint64_t)seed : (uint64_t)seed);
}

#if defined(__SSE2__)
/* mt19937's tempering of four words. */
static inline __attribute__((always_inline)) __m128i temper4(__m128i y) {
    y = _mm_xor_si128(y, _mm_srli_epi32(y, 11));
    y = _mm_xor_si128(y, _mm_and_si128(_mm_slli_epi32(y, 7), _mm_set1_epi32((int)0x9d2c5680u)));
    y = _mm_xor_si128(y, _mm_and_si128(_mm_slli_epi32(y, 15), _mm_set1_epi32((int)0xefc60000u)));
    return _mm_xor_si128(y, _mm_srli_epi32(y, 18));
}

/* Words k .. k + 3 of the refill from words k .. k + 4 and kf .. kf + 3
 * (kf = k + MT_M mod N), as four steps of the loop one word at a time
 * would make them: none of the words read is among the four written, as
 * MT_M and N - MT_M are both above 3. */
static inline __attribute__((always_inline)) void regen4(uint32_t *mt, int k, int kf) {
    const __m128i upper = _mm_set1_epi32((int)MT_UPPER), lower = _mm_set1_epi32((int)MT_LOWER);
    __m128i y = _mm_or_si128(_mm_and_si128(_mm_loadu_si128((const __m128i *)(mt + k)), upper),
                             _mm_and_si128(_mm_loadu_si128((const __m128i *)(mt + k + 1)), lower));
    __m128i odd = _mm_srai_epi32(_mm_slli_epi32(y, 31), 31); /* all ones where y is odd */
    __m128i v = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(mt + kf)), _mm_srli_epi32(y, 1));
    v = _mm_xor_si128(v, _mm_and_si128(odd, _mm_set1_epi32((int)MT_MATRIX_A)));
    _mm_storeu_si128((__m128i *)(mt + k), v);
}
#endif

void pyrandom_regen(PyRandom *r) {
    uint32_t *mt = r->mt, y;
    int k = 0;
#if defined(__SSE2__)
    for (; k + 4 <= PYRANDOM_N - MT_M; k += 4)
        regen4(mt, k, k + MT_M);
#endif
    for (; k < PYRANDOM_N - MT_M; k++) {
        y = (mt[k] & MT_UPPER) | (mt[k + 1] & MT_LOWER);
        mt[k] = mt[k + MT_M] ^ (y >> 1) ^ ((y & 1u) ? MT_MATRIX_A : 0u);
    }
#if defined(__SSE2__)
    for (; k + 4 <= PYRANDOM_N - 1; k += 4)
        regen4(mt, k, k + (MT_M - PYRANDOM_N));
#endif
    for (; k < PYRANDOM_N - 1; k++) {
        y = (mt[k] & MT_UPPER) | (mt[k + 1] & MT_LOWER);
        mt[k] = mt[k + (MT_M - PYRANDOM_N)] ^ (y >> 1) ^ ((y & 1u) ? MT_MATRIX_A : 0u);
    }
    y = (mt[PYRANDOM_N - 1] & MT_UPPER) | (mt[0] & MT_LOWER);
    mt[PYRANDOM_N - 1] = mt[MT_M - 1] ^ (y >> 1) ^ ((y & 1u) ? MT_MATRIX_A : 0u);
    r->mti = 0;
    r->blocks++;
}

void pyrandom_skip(PyRandom *r, uint64_t n) {
    while (n) {
        if (r->mti >= PYRANDOM_N) pyrandom_regen(r);
        uint64_t step = (uint64_t)(PYRANDOM_N - r->mti);
        if (step > n) step = n;
        r->mti += (int)step;
        n -= step;
    }
}

void pyrandom_shuffle(PyRandom *r, void *base, size_t n, size_t size) {
    unsigned char *p = base, tmp[64];
    for (size_t i = n; i-- > 1;) {
        size_t j = (size_t)pyrandom_below(r, (uint64_t)i + 1);
        if (j == i) continue;
        unsigned char *a = p + i * size, *b = p + j * size;
        for (size_t off = 0; off < size; off += sizeof tmp) {
            size_t c = size - off < sizeof tmp ? size - off : sizeof tmp;
            memcpy(tmp, a + off, c);
            memcpy(a + off, b + off, c);
            memcpy(b + off, tmp, c);
        }
    }
}

static inline uint32_t temper(uint32_t y) {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

/* The loop of pyrandom_shuffle_draws and pyrandom_shuffle_i32, which draw
 * millions of words per shard. A rejected draw is a coin flip the branch
 * predictor cannot learn, so the loop is branch-free per word: m is i + 1
 * of the original's loop, a word is accepted when its top bit_length(m)
 * bits are below m, and a rejected word swaps a[m - 1] with itself. The
 * shift is constant while m keeps its bit length, which leaves a compare
 * and a subtract on the chain from word to word. Swaps only when a is not
 * NULL (inlined, so the draws-only version has no swap code at all). With
 * SSE2 the words are tempered and shifted four at a time while m keeps its
 * bit length over all four (m >= lo + 3), then taken in turn. */
static inline __attribute__((always_inline)) uint32_t shuffle_step(int32_t *a, uint32_t m,
                                                                   uint32_t x) {
    uint32_t acc = x < m;
    if (a) {
        uint32_t j = acc ? x : m - 1;
        int32_t t = a[m - 1];
        a[m - 1] = a[j];
        a[j] = t;
    }
    return m - acc;
}

static inline __attribute__((always_inline)) void shuffle_words(PyRandom *r, int32_t *a,
                                                                uint32_t m) {
    int mti = r->mti;
    while (m > 1) {
        if (mti >= PYRANDOM_N) {
            pyrandom_regen(r);
            mti = 0;
        }
        const uint32_t *mt = r->mt;
        int sh = __builtin_clz(m);
        uint32_t lo = 0x80000000u >> sh; /* m's bit length holds while m >= lo */
#if defined(__SSE2__)
        const __m128i cnt = _mm_cvtsi32_si128(sh);
        for (; mti <= PYRANDOM_N - 4 && m >= lo + 3; mti += 4) {
            uint32_t x[4];
            _mm_storeu_si128(
                (__m128i *)x,
                _mm_srl_epi32(temper4(_mm_loadu_si128((const __m128i *)(mt + mti))), cnt));
            m = shuffle_step(a, m, x[0]);
            m = shuffle_step(a, m, x[1]);
            m = shuffle_step(a, m, x[2]);
            m = shuffle_step(a, m, x[3]);
        }
#endif
        for (; mti < PYRANDOM_N && m >= lo; mti++)
            m = shuffle_step(a, m, temper(mt[mti]) >> sh);
    }
    r->mti = mti;
}

void pyrandom_shuffle_draws(PyRandom *r, size_t n) {
    if (n > UINT32_MAX) {
        for (size_t i = n; i-- > 1;)
            pyrandom_below(r, (uint64_t)i + 1);
        return;
    }
    shuffle_words(r, NULL, (uint32_t)n);
}

void pyrandom_shuffle_i32(PyRandom *r, int32_t *a, size_t n) {
    if (n > UINT32_MAX) {
        pyrandom_shuffle(r, a, n, sizeof *a);
        return;
    }
    shuffle_words(r, a, (uint32_t)n);
}
