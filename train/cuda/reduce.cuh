/* reduce.cuh - the device helpers every kernel of train_bert's CUDA backend
 * uses: conversions between float and the activation type T (float or
 * bf16), warp reductions, GELU and its derivative, the dropout factor
 * (train/dropout.h's mask), and the 16-byte vectors (VT, Vec, vld, vst) of
 * the row and elementwise kernels. Header-only, part of backend.cu's one
 * translation unit.
 *
 * Needs from what came before (backend.cu's prelude): the CUDA headers (or
 * train/cuda/emu/cuda_emu.h under WB_CUDA_EMU) and bf16, the typedef of
 * __nv_bfloat16.
 */
#ifndef WB_REDUCE_CUH
#define WB_REDUCE_CUH

#include "train/dropout.h"

/* T (float or bf16) to float, and float to T (rounded to nearest even) */
__device__ __forceinline__ float tof(float x) { return x; }
__device__ __forceinline__ float tof(bf16 x) { return __bfloat162float(x); }
template <typename T> __device__ __forceinline__ T fromf(float x);
template <> __device__ __forceinline__ float fromf<float>(float x) { return x; }
template <> __device__ __forceinline__ bf16 fromf<bf16>(float x) { return __float2bfloat16(x); }

/* the sum (warp_sum) or max (warp_max) of v over the 32 lanes of a warp,
 * every lane getting it; a fixed butterfly pattern, so the same bits on
 * every lane and every run (the tests' second emulated build,
 * WB_EMU_ALT_ORDER, runs the sum's butterfly from offset 1 up: another
 * order of the same sum, which the comparisons with the CPU must allow) */
__device__ __forceinline__ float warp_sum(float v) {
#ifdef WB_EMU_ALT_ORDER
    for (int o = 1; o < 32; o <<= 1)
#else
    for (int o = 16; o > 0; o >>= 1)
#endif
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* the sum (group_sum) or max (group_max) of v over the G lanes of a warp
 * that share lane / G (G a power of two up to 32; 32: warp_sum's order) */
template <int G> __device__ __forceinline__ float group_sum(float v) {
#ifdef WB_EMU_ALT_ORDER
    for (int o = 1; o < G; o <<= 1)
#else
    for (int o = G / 2; o > 0; o >>= 1)
#endif
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

template <int G> __device__ __forceinline__ float group_max(float v) {
    for (int o = G / 2; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* The normal distribution's CDF Phi(x) = (1 + erf(x / sqrt 2)) / 2 and,
 * in *pdf, its density phi(x), from one exponential: Abramowitz and
 * Stegun 7.1.26 (erf within 1.5e-7; Phi for x < 0 without cancellation)
 * with the GPU's fast exp and reciprocal, about 1e-6 in all: far below
 * bf16's 4e-3 and the fp32 checks' 1e-4. erff and expf were half of the
 * GELU kernels' instructions, which run at the issue rate, not the
 * memory's. */
__device__ __forceinline__ float norm_cdf_pdf(float x, float *pdf) {
    float z = fabsf(x) * 0.70710678118654752f;
    float t = __fdividef(1.0f, 1.0f + 0.3275911f * z);
    float e = __expf(-z * z); /* exp(-x^2 / 2) */
    float p =
        t * (0.254829592f +
             t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
    float q = 0.5f * p * e; /* Phi(-|x|) */
    *pdf = e * 0.3989422804014327f;
    return x >= 0.0f ? 1.0f - q : q;
}

/* GELU (the erf form, as bert.c) and its derivative */
__device__ __forceinline__ float gelu(float x) {
    float pdf;
    return x * norm_cdf_pdf(x, &pdf);
}
__device__ __forceinline__ float gelu_grad(float x) {
    float pdf, cdf = norm_cdf_pdf(x, &pdf);
    return cdf + x * pdf;
}

/* dropout factor of element idx: 0 or 1 / (1 - p); 1 when off (thr 0) */
__device__ __forceinline__ float drop_factor(uint64_t key, uint32_t idx, uint32_t thr,
                                             float scale) {
    return thr == 0 ? 1.0f : (dropout_keep(key, idx, thr) ? scale : 0.0f);
}

#define WARPS 8 /* warps per block of the row kernels */

/* unroll the loop that follows (a loop over a compile-time count, so that
 * its arrays stay in registers) */
#ifdef WB_CUDA_EMU
#define UNROLL
#else
#define UNROLL _Pragma("unroll")
#endif

/* Vectors: the row and elementwise kernels take VT<T, n>, n elements of
 * type T per load and store: 16 bytes (8 bf16 or 4 floats) where the row
 * length is a multiple of that and every pointer is 16-byte aligned
 * (vec_ok), else 1. A lane of a row kernel takes elements lane * n ..
 * lane * n + n - 1, then 32 * n further on; sums run in that order. */
template <typename E, int N> struct VT {
    typedef E T;
    enum { n = N };
};
template <typename E, int N> struct alignas(N * sizeof(E) >= 16 ? 16 : N * sizeof(E)) Vec {
    E v[N];
};
#ifdef WB_CUDA_EMU
#define VCHECK(p, N, E) emu_check_align(p, alignof(Vec<E, N>), 16, "vector access")
#else
#define VCHECK(p, N, E)
#endif
/* N elements at p as one load (vld) or store (vst); p aligned as Vec<E, N>
 * (checked by the emulation) */
template <int N, typename E> __device__ __forceinline__ Vec<E, N> vld(const E *p) {
    VCHECK(p, N, E);
    return *(const Vec<E, N> *)p;
}
template <int N, typename E> __device__ __forceinline__ void vst(E *p, const Vec<E, N> &x) {
    VCHECK(p, N, E);
    *(Vec<E, N> *)p = x;
}

#endif
