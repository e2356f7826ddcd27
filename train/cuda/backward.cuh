/* backward.cuh - the backward pass's kernels of train_bert's CUDA backend
 * (the fused attention's are in attention.cuh): LayerNorm backward, the
 * column sums of the bias and LayerNorm gradients (per-chunk partial sums
 * of CROWS rows, added in chunk order: no atomics), the column kernels
 * that fuse an elementwise step with those sums, the Q/K/V gradients'
 * layout, dropout, activation and softmax backward, the scatter of the
 * heads' gradients, and the embedding gradients (segment lists built on
 * the host, summed in list order). Header-only, part of backend.cu's one
 * translation unit.
 *
 * Needs from what came before: backend.cu's prelude (the CUDA headers or
 * cuda_emu.h, bf16) and reduce.cuh. Gives CROWS and ESEG, which the host
 * code sizes its buffers by.
 */
#ifndef WB_BACKWARD_CUH
#define WB_BACKWARD_CUH

#include "train/cuda/reduce.cuh"

/* the row means of g = dout * gamma and of g * xhat over row o / H (the
 * whole warp; every lane gets them) */
template <int K, typename T>
__device__ __forceinline__ void ln_bwd_means(const T *dout, const T *in, const float *gamma,
                                             size_t o, int H, int lane, float mu, float rs,
                                             float *a_, float *b_) {
    float a = 0, b = 0;
    for (int i = lane * K; i < H; i += 32 * K) {
        Vec<T, K> dv = vld<K>(dout + o + i), xv = vld<K>(in + o + i);
        Vec<float, K> gv = vld<K>(gamma + i);
        for (int k = 0; k < K; k++) {
            float g = tof(dv.v[k]) * gv.v[k], xh = (tof(xv.v[k]) - mu) * rs;
            a += g, b += g * xh;
        }
    }
    *a_ = warp_sum(a) / H, *b_ = warp_sum(b) / H;
}

/* din = LN backward of dout (warp per row) */
template <typename V>
__global__ void k_ln_bwd(const typename V::T *dout, const typename V::T *in, const float *gamma,
                         const float *mean, const float *rstd, typename V::T *din, int N, int H) {
    typedef typename V::T T;
    const int K = V::n;
    int n = blockIdx.x * WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (n >= N) return;
    size_t o = (size_t)n * H;
    float mu = mean[n], rs = rstd[n], a, b;
    ln_bwd_means<K>(dout, in, gamma, o, H, lane, mu, rs, &a, &b);
    for (int i = lane * K; i < H; i += 32 * K) {
        Vec<T, K> dv = vld<K>(dout + o + i), xv = vld<K>(in + o + i), ov;
        Vec<float, K> gv = vld<K>(gamma + i);
        for (int k = 0; k < K; k++) {
            float xh = (tof(xv.v[k]) - mu) * rs;
            ov.v[k] = fromf<T>((tof(dv.v[k]) * gv.v[k] - a - xh * b) * rs);
        }
        vst<K>(din + o + i, ov);
    }
}

#define CROWS 32     /* rows per partial column sum */
#define ROWS_AHEAD 4 /* rows a column kernel loads before it uses the first */

/* part[chunk][c] = sum over the chunk's rows of x[n][c] (mode 0), or of
 * x[n][c] * (in[n][c] - mean[n]) * rstd[n] (mode 1: LayerNorm weight);
 * thread per V::n columns */
template <typename V>
__global__ void k_colsum_part(const typename V::T *x, const typename V::T *in, const float *mean,
                              const float *rstd, int N, int C, float *part, int mode) {
    typedef typename V::T T;
    const int K = V::n;
    int c = (blockIdx.x * blockDim.x + threadIdx.x) * K, chunk = blockIdx.y;
    if (c >= C) return;
    int n0 = chunk * CROWS, n1 = min(N, n0 + CROWS);
    float s[K];
    for (int k = 0; k < K; k++)
        s[k] = 0;
    for (int n = n0; n < n1; n++) {
        Vec<T, K> xv = vld<K>(x + (size_t)n * C + c), iv;
        if (mode) iv = vld<K>(in + (size_t)n * C + c);
        for (int k = 0; k < K; k++)
            s[k] += mode ? tof(xv.v[k]) * ((tof(iv.v[k]) - mean[n]) * rstd[n]) : tof(xv.v[k]);
    }
    for (int k = 0; k < K; k++)
        part[(size_t)chunk * C + c + k] = s[k];
}

/* g[zstart[r] .. + zlen[r]) = 0, block per range: 16-byte stores from the
 * range's first aligned element, single ones before it and after the last
 * whole vector */
__global__ void k_zero_ranges(float *g, const long long *zstart, const int *zlen) {
    float *p = g + zstart[blockIdx.x];
    int n = zlen[blockIdx.x], h = (int)((4 - zstart[blockIdx.x] % 4) % 4);
    if (h > n) h = n;
    int nv = (n - h) / 4;
    Vec<float, 4> z = {{0.0f, 0.0f, 0.0f, 0.0f}};
    for (int i = threadIdx.x; i < nv; i += blockDim.x)
        vst<4>(p + h + 4 * i, z);
    if ((int)threadIdx.x < h) p[threadIdx.x] = 0.0f;
    for (int i = h + 4 * nv + threadIdx.x; i < n; i += blockDim.x)
        p[i] = 0.0f;
}

/* grad[v][c] += sum of the chunks' partial sums part[v * pv + k * ld + c];
 * v = blockIdx.y < 3. A block of 32 columns x FGROUPS warps: warp w sums
 * chunks w, w + FGROUPS, ... in order, then the FGROUPS sums are added in
 * warp order */
#define FGROUPS 8
struct Grads3 {
    float *g[3];
};
__global__ void k_colsum_finish(const float *part, size_t pv, int chunks, int C, int ld,
                                Grads3 grad) {
    __shared__ float sh[FGROUPS][32];
    int cx = threadIdx.x % 32, w = threadIdx.x / 32, c = blockIdx.x * 32 + cx, v = blockIdx.y;
    float s = 0;
    if (c < C) {
        const float *p = part + v * pv + c;
        for (int k = w; k < chunks; k += FGROUPS)
            s += p[(size_t)k * ld];
    }
    sh[w][cx] = s;
    __syncthreads();
    if (w || c >= C) return;
    for (int u = 1; u < FGROUPS; u++)
        s += sh[u][cx];
    grad.g[v][c] += s;
}

/* The column kernels below fuse an elementwise backward step with the
 * column sums of its results: block (column tile of 128, chunk of CROWS
 * rows), thread per column, rows in order, so every partial sum is the
 * one k_colsum_part would form from the written values; the sums go to
 * part[(v * chunks + chunk) * C + c] for k_colsum_finish. */

/* LayerNorm backward, first half: ab[2n], ab[2n + 1] = the row means of
 * g = dout * gamma and of g * xhat (warp per row, as k_ln_bwd) */
template <typename V>
__global__ void k_ln_rowstats(const typename V::T *dout, const typename V::T *in,
                              const float *gamma, const float *mean, const float *rstd, float *ab,
                              int N, int H) {
    int n = blockIdx.x * WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (n >= N) return;
    float a, b;
    ln_bwd_means<V::n>(dout, in, gamma, (size_t)n * H, H, lane, mean[n], rstd[n], &a, &b);
    if (lane == 0) ab[2 * n] = a, ab[2 * n + 1] = b;
}

/* LayerNorm backward, second half, for out = LN(r), r = dropout(y) + res:
 * din = d(r) (also d(res)); dy = dropout(din) when thr (else dy is din and
 * not written); sums 0, 1, 2: the LayerNorm weight's gradient (dout *
 * xhat), its bias's (dout) and y's bias's (dy) */
template <typename V>
__global__ void k_ln_bwd_cols(const typename V::T *dout, const typename V::T *in,
                              const float *gamma, const float *mean, const float *rstd,
                              const float *ab, typename V::T *din, typename V::T *dy, int N, int H,
                              uint64_t key, uint32_t thr, float dscale, float *part) {
    typedef typename V::T T;
    const int K = V::n;
    int c = (blockIdx.x * blockDim.x + threadIdx.x) * K, chunk = blockIdx.y, chunks = gridDim.y;
    if (c >= H) return;
    int n0 = chunk * CROWS, n1 = min(N, n0 + CROWS);
    float sg[K], sb[K], sy[K];
    Vec<float, K> gm = vld<K>(gamma + c);
    for (int k = 0; k < K; k++)
        sg[k] = sb[k] = sy[k] = 0;
    for (int n = n0; n < n1; n += ROWS_AHEAD) {
        Vec<T, K> dvs[ROWS_AHEAD], xvs[ROWS_AHEAD];
        UNROLL
        for (int u = 0; u < ROWS_AHEAD; u++)
            if (n + u < n1) {
                size_t j = (size_t)(n + u) * H + c;
                dvs[u] = vld<K>(dout + j), xvs[u] = vld<K>(in + j);
            }
        UNROLL
        for (int u = 0; u < ROWS_AHEAD; u++) {
            if (n + u >= n1) break;
            int r = n + u;
            size_t j = (size_t)r * H + c;
            float rs = rstd[r], mu = mean[r], a = ab[2 * r], b = ab[2 * r + 1];
            Vec<T, K> ov, uv;
            for (int k = 0; k < K; k++) {
                float d = tof(dvs[u].v[k]), xh = (tof(xvs[u].v[k]) - mu) * rs;
                ov.v[k] = fromf<T>((d * gm.v[k] - a - xh * b) * rs);
                sg[k] += d * xh, sb[k] += d;
                if (thr) {
                    uv.v[k] =
                        fromf<T>(tof(ov.v[k]) * drop_factor(key, (uint32_t)(j + k), thr, dscale));
                    sy[k] += tof(uv.v[k]);
                } else {
                    sy[k] += tof(ov.v[k]);
                }
            }
            vst<K>(din + j, ov);
            if (thr) vst<K>(dy + j, uv);
        }
    }
    for (int k = 0; k < K; k++) {
        part[(size_t)chunk * H + c + k] = sg[k];
        part[((size_t)chunks + chunk) * H + c + k] = sb[k];
        part[((size_t)2 * chunks + chunk) * H + c + k] = sy[k];
    }
}

/* d = d * GELU'(pre + bias) over [N, C]; sum 0: the bias's gradient */
template <typename V>
__global__ void k_gelu_bwd_cols(typename V::T *d, const typename V::T *pre, const float *bias,
                                int N, int C, float *part) {
    typedef typename V::T T;
    const int K = V::n;
    int c = (blockIdx.x * blockDim.x + threadIdx.x) * K, chunk = blockIdx.y;
    if (c >= C) return;
    int n0 = chunk * CROWS, n1 = min(N, n0 + CROWS);
    float s[K];
    Vec<float, K> bc = vld<K>(bias + c);
    for (int k = 0; k < K; k++)
        s[k] = 0;
    for (int n = n0; n < n1; n += ROWS_AHEAD) {
        Vec<T, K> dv[ROWS_AHEAD], pv[ROWS_AHEAD];
        UNROLL
        for (int u = 0; u < ROWS_AHEAD; u++)
            if (n + u < n1) {
                size_t j = (size_t)(n + u) * C + c;
                dv[u] = vld<K>(d + j), pv[u] = vld<K>(pre + j);
            }
        UNROLL
        for (int u = 0; u < ROWS_AHEAD; u++)
            if (n + u < n1) {
                for (int k = 0; k < K; k++) {
                    dv[u].v[k] = fromf<T>(tof(dv[u].v[k]) * gelu_grad(tof(pv[u].v[k]) + bc.v[k]));
                    s[k] += tof(dv[u].v[k]);
                }
                vst<K>(d + (size_t)(n + u) * C + c, dv[u]);
            }
    }
    for (int k = 0; k < K; k++)
        part[(size_t)chunk * C + c + k] = s[k];
}

/* the gradients of Q, K, V per head [3][B][A][S][D] -> dst [N][3H] (row
 * n: dq, dk, dv); sums 0, 1, 2: the three biases' gradients (blockIdx.y =
 * t * chunks + chunk); thread per V::n columns (V::n divides D) */
template <typename V>
__global__ void k_qkv_bwd_cols(const typename V::T *src, typename V::T *dst, int N, int S, int H,
                               int A, int chunks, float *part) {
    typedef typename V::T T;
    const int K = V::n;
    int c = (blockIdx.x * blockDim.x + threadIdx.x) * K, t = blockIdx.y / chunks,
        chunk = blockIdx.y % chunks;
    if (c >= H) return;
    int n0 = chunk * CROWS, n1 = min(N, n0 + CROWS), D = H / A, h = c / D, dd = c % D;
    const T *sp = src + (size_t)t * N * H;
    T *dp = dst + (size_t)t * H + c;
    float s[K];
    for (int k = 0; k < K; k++)
        s[k] = 0;
    for (int n = n0; n < n1; n += ROWS_AHEAD) {
        Vec<T, K> v[ROWS_AHEAD];
        UNROLL
        for (int u = 0; u < ROWS_AHEAD; u++)
            if (n + u < n1) {
                int b = (n + u) / S, q = (n + u) % S;
                v[u] = vld<K>(sp + (((size_t)b * A + h) * S + q) * D + dd);
            }
        UNROLL
        for (int u = 0; u < ROWS_AHEAD; u++)
            if (n + u < n1) {
                vst<K>(dp + (size_t)(n + u) * 3 * H, v[u]);
                for (int k = 0; k < K; k++)
                    s[k] += tof(v[u].v[k]);
            }
    }
    for (int k = 0; k < K; k++)
        part[((size_t)t * chunks + chunk) * H + c + k] = s[k];
}

/* x = dropout(x) (in place, site key) */
template <typename T>
__global__ void k_dropout(T *out, const T *in, size_t n, uint64_t key, uint32_t thr, float dscale) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = fromf<T>(tof(in[i]) * drop_factor(key, (uint32_t)i, thr, dscale));
}

/* d = d * act'(pre): 0 GELU (pre: before GELU), 1 tanh (pre: the tanh output) */
template <typename T> __global__ void k_act_bwd(T *d, const T *pre, size_t n, int act) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float p = tof(pre[i]);
    d[i] = fromf<T>(tof(d[i]) * (act == 0 ? gelu_grad(p) : 1.0f - p * p));
}

/* softmax backward with the attention dropout: dP holds d(dropped
 * probabilities) and becomes d(scores) (before the 1/sqrt(D) scale, which
 * the next matmul applies); G lanes a row, the row in registers, as
 * k_softmax */
template <typename V, int M, int G>
__global__ void k_softmax_bwd(typename V::T *dP, const typename V::T *P, int rows, int S,
                              uint64_t key, uint32_t thr, float dscale) {
    typedef typename V::T T;
    const int K = V::n;
    int r = (blockIdx.x * WARPS + threadIdx.x / 32) * (32 / G) + threadIdx.x % 32 / G,
        lane = threadIdx.x % G, nv = S / K;
    bool ok = r < rows;
    T *d = dP + (size_t)r * S;
    const T *p = P + (size_t)r * S;
    float gv[M][K] = {}, pv[M][K] = {}, dot = 0;
    UNROLL
    for (int m = 0; m < M; m++) {
        int j = (lane + G * m) * K;
        if (ok && lane + G * m < nv) {
            Vec<T, K> dv = vld<K>(d + j), qv = vld<K>(p + j);
            for (int k = 0; k < K; k++) {
                float g =
                    tof(dv.v[k]) * drop_factor(key, (uint32_t)((size_t)r * S + j + k), thr, dscale);
                gv[m][k] = tof(fromf<T>(g)), pv[m][k] = tof(qv.v[k]);
                dot += g * pv[m][k];
            }
        }
    }
    dot = group_sum<G>(dot);
    UNROLL
    for (int m = 0; m < M; m++) {
        int j = (lane + G * m) * K;
        if (ok && lane + G * m < nv) {
            Vec<T, K> ov;
            for (int k = 0; k < K; k++)
                ov.v[k] = fromf<T>(pv[m][k] * (gv[m][k] - dot));
            vst<K>(d + j, ov);
        }
    }
}

/* x[rows[j]] += src[j] (rows distinct: the data reader refuses a masked
 * position listed twice) */
template <typename T>
__global__ void k_scatter_add(T *x, const int *rows, const T *src, int n, int H) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)n * H) return;
    T *d = x + (size_t)rows[i / H] * H + i % H;
    *d = fromf<T>(tof(*d) + tof(src[i]));
}

/* ---- embedding gradients ---- */

/* The embedding gradients: grad[key] += the rows of src listed for key, in
 * list order. A list is cut into segments of up to ESEG rows so that a
 * long list (a token type, [PAD]) is summed by many blocks: a segment
 * that is its key's whole list adds to grad directly (sdst[s] = key),
 * the others write a partial sum to slot -sdst[s] - 1, and k_embed_finish
 * adds a key's slots in order. Keys of the two kinds are distinct, so no
 * element is written by two blocks. Block per segment. */
#define ESEG 64
template <typename T>
__global__ void k_embed_seg(const T *src, const int *rows, const int *sstart, const int *sdst,
                            int H, float *grad, float *part) {
    int u = blockIdx.x, d = sdst[u], k0 = sstart[u], k1 = sstart[u + 1];
    float *out = d >= 0 ? grad + (size_t)d * H : part + (size_t)(-d - 1) * H;
    for (int c = threadIdx.x; c < H; c += blockDim.x) {
        float s = 0;
        for (int k = k0; k < k1; k++)
            s += tof(src[(size_t)rows[k] * H + c]);
        if (d >= 0)
            out[c] += s;
        else
            out[c] = s;
    }
}

/* grad[mkey[j]] += the slots mslot[j] .. mslot[j + 1] in order; block per key */
__global__ void k_embed_finish(const float *part, const int *mkey, const int *mslot, int H,
                               float *grad) {
    int j = blockIdx.x;
    float *g = grad + (size_t)mkey[j] * H;
    for (int c = threadIdx.x; c < H; c += blockDim.x) {
        float s = 0;
        for (int q = mslot[j]; q < mslot[j + 1]; q++)
            s += part[(size_t)q * H + c];
        g[c] += s;
    }
}

/* position embedding gradient: grad[s] += sum over b of src[b * S + s] */
template <typename T> __global__ void k_pos_grad(const T *src, int B, int S, int H, float *grad) {
    int s = blockIdx.x;
    for (int c = threadIdx.x; c < H; c += blockDim.x) {
        float a = 0;
        for (int b = 0; b < B; b++)
            a += tof(src[((size_t)b * S + s) * H + c]);
        grad[(size_t)s * H + c] += a;
    }
}

#endif
