/* optimizer.cuh - the optimizer's kernels of train_bert's CUDA backend: the
 * gradient norm (per-chunk sums of squares in float64, reduced in a fixed
 * tree), LAMB in three stages (moments and update, the per-tensor trust
 * ratio, the weight update), AdamW, and the matmul weights' copy (bf16 or
 * float32) of the updated float32 weights. They work on chunks of up to
 * OCHUNK elements of one tensor, listed by the host (cstart, clen,
 * ctensor); a ZeRO shard's moments start at element moff. Header-only,
 * part of backend.cu's one translation unit.
 *
 * Needs from what came before: backend.cu's prelude (the CUDA headers or
 * cuda_emu.h, bf16) and reduce.cuh (WARPS).
 */
#ifndef WB_OPTIMIZER_CUH
#define WB_OPTIMIZER_CUH

#include "train/cuda/reduce.cuh"

#define OCHUNK 65536 /* elements per optimizer chunk (never across tensors) */

/* part[k] = sum of x^2 over chunk k (block per chunk, fixed tree) */
__global__ void k_sumsq(const float *x, const long long *cstart, const int *clen, int c0,
                        double *part) {
    __shared__ double sh[256];
    int k = c0 + blockIdx.x, t = threadIdx.x;
    const float *p = x + cstart[k];
    double s = 0;
    for (int i = t; i < clen[k]; i += 256)
        s += (double)p[i] * p[i];
    sh[t] = s;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (t < w) sh[t] += sh[t + w];
        __syncthreads();
    }
    if (t == 0) part[k] = sh[0];
}

/* norm[0] = sqrt(sum of part) * scale: one block of 256 threads, each
 * summing every 256th term in order, then a fixed tree */
__global__ void k_norm(const double *part, int n, double scale, double *norm) {
    __shared__ double sh[256];
    int t = threadIdx.x;
    double s = 0;
    for (int k = t; k < n; k += 256)
        s += part[k];
    sh[t] = s;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (t < w) sh[t] += sh[t + w];
        __syncthreads();
    }
    if (t == 0) norm[0] = sqrt(sh[0]) * scale;
}

/* the factor the (summed) gradients are multiplied by: 1 / world, then
 * clipping (LAMB: 1 / max(norm / max, 1); AdamW: max / (norm + 1e-6) if < 1) */
__device__ __forceinline__ float grad_factor(const double *norm, float inv_world, float max_norm,
                                             int lamb) {
    double nm = norm[0], f = 1.0;
    if (max_norm > 0) {
        if (lamb)
            f = 1.0 / fmax(nm / max_norm, 1.0);
        else if (max_norm / (nm + 1e-6) < 1)
            f = max_norm / (nm + 1e-6);
    }
    return (float)f * inv_world;
}

/* one element of LAMB stage 1: the moments *m, *v of gradient gi, the
 * update (returned), and w^2 and update^2 added to *a and *b */
__device__ __forceinline__ float lamb_elem(float gi, float w, float *m, float *v, float b1,
                                           float b2, float eps, float ibc1, float ibc2, float wd,
                                           double *a, double *b) {
    float mi = b1 * *m + (1 - b1) * gi, vi = b2 * *v + (1 - b2) * gi * gi;
    float u = (mi * ibc1) / (sqrtf(vi * ibc2) + eps) + wd * w;
    *m = mi, *v = vi;
    *a += (double)w * w, *b += (double)u * u;
    return u;
}

/* LAMB stage 1 per chunk (chunks c0 + block): moments, the update into g;
 * part2[k] = (sum w^2, sum update^2) of the chunk. m and v hold elements
 * moff onwards (a ZeRO shard; 0: all) */
__global__ void k_lamb1(float *p, float *g, float *m, float *v, size_t moff,
                        const long long *cstart, const int *clen, int c0, const int *ctensor,
                        const float *twd, const double *norm, float inv_world, float max_norm,
                        float b1, float b2, float eps, float ibc1, float ibc2, double *part2) {
    __shared__ double sw[256], su[256];
    int k = c0 + blockIdx.x, t = threadIdx.x;
    size_t o = cstart[k];
    float f = grad_factor(norm, inv_world, max_norm, 1), wd = twd[ctensor[k]];
    double a = 0, b = 0;
    float *gk = g + o, *mk = m + (o - moff), *vk = v + (o - moff);
    const float *pk = p + o;
    int n = clen[k];
    /* thread t takes elements 4t .. 4t + 3, then 1024 further on: one 16-byte load of each
     * array where they are aligned (a ZeRO shard's moments may not be), the same sums
     * either way */
    bool al = o % 4 == 0 && (o - moff) % 4 == 0;
    for (int i = 4 * t; i < n; i += 4 * 256) {
        if (al && i + 4 <= n) {
            Vec<float, 4> gv = vld<4>(gk + i), pv = vld<4>(pk + i), mv = vld<4>(mk + i),
                          vv = vld<4>(vk + i);
            UNROLL
            for (int e = 0; e < 4; e++)
                gv.v[e] = lamb_elem(gv.v[e] * f, pv.v[e], &mv.v[e], &vv.v[e], b1, b2, eps, ibc1,
                                    ibc2, wd, &a, &b);
            vst<4>(mk + i, mv), vst<4>(vk + i, vv), vst<4>(gk + i, gv);
        } else {
            for (int j = i; j < i + 4 && j < n; j++)
                gk[j] = lamb_elem(gk[j] * f, pk[j], &mk[j], &vk[j], b1, b2, eps, ibc1, ibc2, wd, &a,
                                  &b);
        }
    }
    sw[t] = a, su[t] = b;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (t < w) sw[t] += sw[t + w], su[t] += su[t + w];
        __syncthreads();
    }
    if (t == 0) part2[2 * k] = sw[0], part2[2 * k + 1] = su[0];
}

/* LAMB stage 2: ratio[t] = lr * ||w|| / ||update|| for tensors with weight
 * decay (lr where a norm is 0), lr otherwise; warp per tensor, each lane
 * summing every 32nd chunk in order, then the shuffle tree */
__global__ void k_lamb_ratio(const double *part2, const int *tchunk0, const int *tnchunks,
                             const float *twd, int T, float lr, float *ratio) {
    int t = blockIdx.x * WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (t >= T) return;
    double a = 0, b = 0;
    for (int k = tchunk0[t] + lane; k < tchunk0[t] + tnchunks[t]; k += 32)
        a += part2[2 * k], b += part2[2 * k + 1];
    for (int o = 16; o > 0; o >>= 1)
        a += __shfl_xor_sync(0xffffffffu, a, o), b += __shfl_xor_sync(0xffffffffu, b, o);
    if (lane) return;
    float r = lr;
    if (twd[t] != 0) {
        double pn = sqrt(a), un = sqrt(b);
        if (pn != 0 && un != 0) r = (float)(lr * (pn / un));
    }
    ratio[t] = r;
}

/* element i of the matmul weights (bf16 or float32) := v */
__device__ __forceinline__ void put_pw(void *pw, int pw_bf16, long long i, float v) {
    if (pw_bf16)
        ((bf16 *)pw)[i] = __float2bfloat16(v);
    else
        ((float *)pw)[i] = v;
}

/* LAMB stage 3: w -= ratio * update; the matmul weights' copy (chunk k's
 * elements from cpw[k] there) */
__global__ void k_lamb3(float *p, const float *g, void *pw, int pw_bf16, const long long *cpw,
                        const long long *cstart, const int *clen, int c0, const int *ctensor,
                        const float *ratio) {
    int k = c0 + blockIdx.x;
    size_t o = cstart[k];
    float r = ratio[ctensor[k]];
    float *__restrict__ pk = p + o;
    const float *__restrict__ gk = g + o;
    long long q = cpw[k];
    int n = clen[k];
    /* four elements a thread in 16-byte loads where the chunk and its copy
     * start aligned (tensors of a multiple of 4 elements), the rest (all of
     * it otherwise) one by one: the same values either way */
    int nv = o % 4 == 0 && q % 4 == 0 ? n / 4 : 0;
    for (int i = threadIdx.x; i < nv; i += blockDim.x) {
        Vec<float, 4> wv = vld<4>(pk + 4 * i), gv = vld<4>(gk + 4 * i);
        UNROLL
        for (int e = 0; e < 4; e++)
            wv.v[e] = wv.v[e] - r * gv.v[e];
        vst<4>(pk + 4 * i, wv);
        if (pw_bf16) {
            Vec<bf16, 4> bv;
            UNROLL
            for (int e = 0; e < 4; e++)
                bv.v[e] = __float2bfloat16(wv.v[e]);
            vst<4>((bf16 *)pw + q + 4 * i, bv);
        } else {
            vst<4>((float *)pw + q + 4 * i, wv);
        }
    }
    for (int i = 4 * nv + threadIdx.x; i < n; i += blockDim.x) {
        float w = pk[i] - r * gk[i];
        pk[i] = w;
        put_pw(pw, pw_bf16, q + i, w);
    }
}

/* AdamW (torch.optim.AdamW after clip_grad_norm_) per chunk (c0 + block;
 * m and v from element moff, as k_lamb1) */
__global__ void k_adamw(float *p, const float *g, float *m, float *v, size_t moff, void *pw,
                        int pw_bf16, const long long *cpw, const long long *cstart, const int *clen,
                        int c0, const int *ctensor, const float *twd, const double *norm,
                        float inv_world, float max_norm, float lr, float b1, float b2, float eps,
                        float step, float sbc2) {
    int k = c0 + blockIdx.x;
    size_t o = cstart[k];
    float f = grad_factor(norm, inv_world, max_norm, 0), decay = 1.0f - lr * twd[ctensor[k]];
    for (int i = threadIdx.x; i < clen[k]; i += blockDim.x) {
        size_t j = o + i, q = j - moff;
        float gi = g[j] * f;
        p[j] *= decay;
        m[q] = b1 * m[q] + (1 - b1) * gi;
        v[q] = b2 * v[q] + (1 - b2) * gi * gi;
        p[j] -= step * m[q] / (sqrtf(v[q]) / sbc2 + eps);
        put_pw(pw, pw_bf16, cpw[k] + i, p[j]);
    }
}

/* the matmul weights' copy of chunks c0 + block */
__global__ void k_to_pw(const float *p, void *pw, int pw_bf16, const long long *cpw,
                        const long long *cstart, const int *clen, int c0) {
    int k = c0 + blockIdx.x;
    for (int i = threadIdx.x; i < clen[k]; i += blockDim.x)
        put_pw(pw, pw_bf16, cpw[k] + i, p[cstart[k] + i]);
}

#endif
