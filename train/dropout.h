/* dropout.h - dropout masks as a pure function of (key, element index), the
 * same on the CPU and the GPU and for any thread count.
 *
 * An element is kept when hash(key, index) >= p * 2^32 and then scaled by
 * 1 / (1 - p); a dropped one is 0. The hash is two rounds of a 32-bit
 * integer mixer (lowbias32), one per half of the 64-bit key, so a mask
 * needs no stored state: backward recomputes it. Keys: one per forward
 * pass (dropout_pass_key: seed, optimizer step, micro-batch; data-parallel
 * rank r's micro-batch a counts as r * accumulation steps + a, so every
 * micro-batch of a global step has its own masks and rank 0's are those of
 * a single process), one per
 * dropout site within it (dropout_site_key: the embeddings are site 0,
 * layer l's attention probabilities 1 + 3l, attention output 2 + 3l,
 * feed-forward output 3 + 3l). A resumed run therefore drops the same
 * elements as an uninterrupted one.
 *
 * Header-only (static inline) so that CUDA kernels use the same code.
 */
#ifndef WB_DROPOUT_H
#define WB_DROPOUT_H

#include <stdint.h>

#ifdef __CUDACC__
#define WB_HD __host__ __device__
#else
#define WB_HD
#endif

static inline WB_HD uint32_t dropout_mix32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

static inline WB_HD uint64_t dropout_mix64(uint64_t z) { /* splitmix64's finaliser */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The key of one forward pass: micro-batch `micro` of optimizer step `step`. */
static inline WB_HD uint64_t dropout_pass_key(uint64_t seed, int64_t step, int micro) {
    return dropout_mix64(dropout_mix64(seed + 0x9e3779b97f4a7c15ULL) ^
                         ((uint64_t)step << 20 ^ (uint64_t)micro));
}

/* The key of dropout site `site` within a pass. */
static inline WB_HD uint64_t dropout_site_key(uint64_t pass_key, uint32_t site) {
    return dropout_mix64(pass_key + 0x9e3779b97f4a7c15ULL * ((uint64_t)site + 1));
}

/* p * 2^32, the smallest kept hash value (p in [0, 1)). */
static inline WB_HD uint32_t dropout_threshold(float p) {
    double t = (double)p * 4294967296.0;
    return t <= 0 ? 0U : t >= 4294967295.0 ? 4294967295U : (uint32_t)t;
}

/* 1 when element idx survives under site key `key`. */
static inline WB_HD int dropout_keep(uint64_t key, uint32_t idx, uint32_t threshold) {
    uint32_t x = dropout_mix32(idx ^ (uint32_t)key);
    x = dropout_mix32(x ^ (uint32_t)(key >> 32));
    return x >= threshold;
}

#endif
