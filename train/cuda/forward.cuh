/* forward.cuh - the forward pass's kernels of train_bert's CUDA backend
 * (the fused attention's are in attention.cuh): embeddings + LayerNorm,
 * the Q/K/V bias and head layout, the matmul attention's masked softmax +
 * dropout, bias + dropout + residual + LayerNorm, bias + activation, the
 * gathers of the heads' rows, and the two losses with their gradients.
 * Header-only, part of backend.cu's one translation unit.
 *
 * Kernels are templates over the activation type T (float or bf16), or
 * over V = VT<T, n> (n elements a load) for the row and elementwise
 * kernels that backend.cu launches with VLAUNCH; warp-per-row kernels take
 * WARPS rows a block.
 *
 * Needs from what came before: backend.cu's prelude (the CUDA headers or
 * cuda_emu.h, bf16) and reduce.cuh.
 */
#ifndef WB_FORWARD_CUH
#define WB_FORWARD_CUH

#include "train/cuda/reduce.cuh"

/* e = wte[id] + wpe[pos] + wtt[seg]; x0 = dropout(LN(e)); warp per row */
template <typename V>
__global__ void k_embed_ln(const int *ids, const int *seg, const float *wte, const float *wpe,
                           const float *wtt, const float *gamma, const float *beta,
                           typename V::T *e, typename V::T *x0, float *mean, float *rstd, int N,
                           int S, int H, float eps, uint64_t key, uint32_t thr, float dscale) {
    typedef typename V::T T;
    const int K = V::n;
    int n = blockIdx.x * WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (n >= N) return;
    const float *w = wte + (size_t)ids[n] * H, *p = wpe + (size_t)(n % S) * H,
                *t = wtt + (size_t)seg[n] * H;
    T *er = e + (size_t)n * H;
    float s = 0;
    for (int i = lane * K; i < H; i += 32 * K) {
        Vec<float, K> a = vld<K>(w + i), b = vld<K>(p + i), c = vld<K>(t + i);
        Vec<T, K> ev;
        for (int k = 0; k < K; k++)
            ev.v[k] = fromf<T>(a.v[k] + b.v[k] + c.v[k]), s += tof(ev.v[k]);
        vst<K>(er + i, ev);
    }
    float mu = warp_sum(s) / H, ss = 0;
    for (int i = lane * K; i < H; i += 32 * K) {
        Vec<T, K> ev = vld<K>(er + i);
        for (int k = 0; k < K; k++) {
            float d = tof(ev.v[k]) - mu;
            ss += d * d;
        }
    }
    float rs = rsqrtf(warp_sum(ss) / H + eps);
    T *y = x0 + (size_t)n * H;
    for (int i = lane * K; i < H; i += 32 * K) {
        Vec<T, K> ev = vld<K>(er + i), yv;
        Vec<float, K> gv = vld<K>(gamma + i), bv = vld<K>(beta + i);
        for (int k = 0; k < K; k++)
            yv.v[k] = fromf<T>(((tof(ev.v[k]) - mu) * rs * gv.v[k] + bv.v[k]) *
                               drop_factor(key, (uint32_t)((size_t)n * H + i + k), thr, dscale));
        vst<K>(y + i, yv);
    }
    if (lane == 0) mean[n] = mu, rstd[n] = rs;
}

/* raw [N][3H] (x [Wq; Wk; Wv]^T) + biases -> q, k, v as [B][A][S][D];
 * block per row n, thread per V::n elements (V::n divides D: a vector
 * stays within a head) */
template <typename V>
__global__ void k_qkv_bias_split(const typename V::T *raw, const float *bq, const float *bk,
                                 const float *bv, typename V::T *qp, typename V::T *kp,
                                 typename V::T *vp, int N, int S, int H, int A) {
    typedef typename V::T T;
    const int K = V::n;
    int n = blockIdx.x, D = H / A, b = n / S, s = n % S;
    const T *row = raw + (size_t)n * 3 * H;
    for (int rc = threadIdx.x * K; rc < 3 * H; rc += blockDim.x * K) {
        int t = rc / H, c = rc - t * H, h = c / D, d = c - h * D;
        const float *bias = (t == 0 ? bq : t == 1 ? bk : bv) + c;
        T *dst = (t == 0 ? qp : t == 1 ? kp : vp) + (((size_t)b * A + h) * S + s) * D + d;
        Vec<T, K> x = vld<K>(row + rc), y;
        Vec<float, K> bb = vld<K>(bias);
        for (int k = 0; k < K; k++)
            y.v[k] = fromf<T>(tof(x.v[k]) + bb.v[k]);
        vst<K>(dst, y);
    }
}

/* [B][A][S][D] <-> [N][H] (from_heads 0: to heads, 1: from heads); block
 * per row n, thread per V::n elements (V::n divides D) */
template <typename V>
__global__ void k_permute(const typename V::T *src, typename V::T *dst, int N, int S, int H, int A,
                          int from_heads) {
    const int K = V::n;
    int n = blockIdx.x, D = H / A, b = n / S, s = n % S;
    for (int c = threadIdx.x * K; c < H; c += blockDim.x * K) {
        int h = c / D, d = c - h * D;
        size_t hi = (((size_t)b * A + h) * S + s) * D + d, ri = (size_t)n * H + c;
        if (from_heads)
            vst<K>(dst + ri, vld<K>(src + hi));
        else
            vst<K>(dst + hi, vld<K>(src + ri));
    }
}

/* scores (already scaled) + mask bias -> softmax probabilities P in place;
 * Pd = dropout(P) when Pd is not NULL, over B*A*S rows. G lanes a row
 * (32 / G rows a warp), the row in registers: lane j of a row's G holds
 * its V::n-element vectors j, j + G, ... (at most M: S <= G * M * V::n) */
template <typename V, int M, int G>
__global__ void k_softmax(typename V::T *P, typename V::T *Pd, const float *maskbias, int rows,
                          int A, int S, uint64_t key, uint32_t thr, float dscale) {
    typedef typename V::T T;
    const int K = V::n;
    int r = (blockIdx.x * WARPS + threadIdx.x / 32) * (32 / G) + threadIdx.x % 32 / G,
        lane = threadIdx.x % G, nv = S / K;
    bool ok = r < rows; /* a row past the end: no loads or stores, but in the shuffles */
    T *p = P + (size_t)r * S;
    const float *mb = maskbias + (size_t)(r / S / A) * S;
    float x[M][K] = {}, mx = -INFINITY;
    UNROLL
    for (int m = 0; m < M; m++) {
        int j = (lane + G * m) * K;
        if (ok && lane + G * m < nv) {
            Vec<T, K> pv = vld<K>(p + j);
            Vec<float, K> bv = vld<K>(mb + j);
            for (int k = 0; k < K; k++)
                x[m][k] = tof(pv.v[k]) + bv.v[k], mx = fmaxf(mx, x[m][k]);
        }
    }
    mx = group_max<G>(mx);
    float s = 0;
    UNROLL
    for (int m = 0; m < M; m++)
        if (ok && lane + G * m < nv)
            for (int k = 0; k < K; k++)
                x[m][k] = expf(x[m][k] - mx), s += x[m][k];
    float inv = 1.0f / group_sum<G>(s);
    UNROLL
    for (int m = 0; m < M; m++) {
        int j = (lane + G * m) * K;
        if (ok && lane + G * m < nv) {
            Vec<T, K> pv, dv;
            for (int k = 0; k < K; k++) {
                pv.v[k] = fromf<T>(x[m][k] * inv);
                if (Pd)
                    dv.v[k] =
                        fromf<T>(tof(pv.v[k]) *
                                 drop_factor(key, (uint32_t)((size_t)r * S + j + k), thr, dscale));
            }
            vst<K>(p + j, pv);
            if (Pd) vst<K>(Pd + (size_t)r * S + j, dv);
        }
    }
}

/* r = dropout(y + bias) + res (bias, res may be NULL); out = LN(r); warp per row */
template <typename V>
__global__ void k_bias_drop_res_ln(const typename V::T *y, const float *bias,
                                   const typename V::T *res, const float *gamma, const float *beta,
                                   typename V::T *r, typename V::T *out, float *mean, float *rstd,
                                   int N, int H, float eps, uint64_t key, uint32_t thr,
                                   float dscale) {
    typedef typename V::T T;
    const int K = V::n;
    int n = blockIdx.x * WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (n >= N) return;
    size_t o = (size_t)n * H;
    float s = 0;
    for (int i = lane * K; i < H; i += 32 * K) {
        Vec<T, K> yv = vld<K>(y + o + i), rv, cv;
        Vec<float, K> bv;
        if (bias) bv = vld<K>(bias + i);
        if (res) cv = vld<K>(res + o + i);
        for (int k = 0; k < K; k++) {
            float v = tof(yv.v[k]) + (bias ? bv.v[k] : 0.0f);
            v *= drop_factor(key, (uint32_t)(o + i + k), thr, dscale);
            if (res) v += tof(cv.v[k]);
            rv.v[k] = fromf<T>(v);
            s += tof(rv.v[k]);
        }
        vst<K>(r + o + i, rv);
    }
    float mu = warp_sum(s) / H, ss = 0;
    for (int i = lane * K; i < H; i += 32 * K) {
        Vec<T, K> rv = vld<K>(r + o + i);
        for (int k = 0; k < K; k++) {
            float d = tof(rv.v[k]) - mu;
            ss += d * d;
        }
    }
    float rs = rsqrtf(warp_sum(ss) / H + eps);
    for (int i = lane * K; i < H; i += 32 * K) {
        Vec<T, K> rv = vld<K>(r + o + i), ov;
        Vec<float, K> gv = vld<K>(gamma + i), bv = vld<K>(beta + i);
        for (int k = 0; k < K; k++)
            ov.v[k] = fromf<T>((tof(rv.v[k]) - mu) * rs * gv.v[k] + bv.v[k]);
        vst<K>(out + o + i, ov);
    }
    if (lane == 0) mean[n] = mu, rstd[n] = rs;
}

/* pre += bias (in place); out = act(pre): 0 GELU, 1 tanh, 2 none (out may be pre) */
template <typename T>
__global__ void k_bias_act(T *pre, T *out, const float *bias, size_t n, int C, int act) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = tof(pre[i]) + bias[i % C];
    pre[i] = fromf<T>(v);
    out[i] = fromf<T>(act == 0 ? gelu(v) : act == 1 ? tanhf(v) : v);
}

/* out = GELU(pre + bias), pre left as the matmul wrote it (k_gelu_bwd_cols
 * adds the bias again); thread per V::n elements */
template <typename V>
__global__ void k_bias_gelu(const typename V::T *pre, typename V::T *out, const float *bias,
                            size_t n, int C) {
    typedef typename V::T T;
    const int K = V::n;
    size_t i = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * K;
    if (i >= n) return;
    Vec<T, K> pv = vld<K>(pre + i), ov;
    Vec<float, K> bv = vld<K>(bias + i % C);
    for (int k = 0; k < K; k++)
        ov.v[k] = fromf<T>(gelu(tof(pv.v[k]) + bv.v[k]));
    vst<K>(out + i, ov);
}

/* out[j] = x[rows[j]] (H columns) */
template <typename T> __global__ void k_gather(const T *x, const int *rows, int n, int H, T *out) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)n * H) return;
    out[i] = x[(size_t)rows[i / H] * H + i % H];
}

/* MLM cross-entropy, one block per masked token: per-row loss and
 * correctness; logits replaced by d(loss)/d(logits) * g. A row labelled
 * -1 (the head's padding) gets a zero gradient, loss and correctness. */
template <typename T>
__global__ void k_mlm_ce(T *logits, const int *labels, int V, float g, float *rowloss,
                         int *rowcorrect) {
    __shared__ float sv[256];
    __shared__ int si[256];
    int j = blockIdx.x, t = threadIdx.x;
    T *z = logits + (size_t)j * V;
    if (labels[j] < 0) {
        for (int i = t; i < V; i += 256)
            z[i] = fromf<T>(0.0f);
        if (t == 0) rowloss[j] = 0.0f, rowcorrect[j] = 0;
        return;
    }
    float mx = -INFINITY;
    int arg = V;
    for (int i = t; i < V; i += 256) {
        float v = tof(z[i]);
        if (v > mx) mx = v, arg = i; /* first maximum of this thread's share */
    }
    sv[t] = mx, si[t] = arg;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (t < w && (sv[t + w] > sv[t] || (sv[t + w] == sv[t] && si[t + w] < si[t])))
            sv[t] = sv[t + w], si[t] = si[t + w];
        __syncthreads();
    }
    mx = sv[0];
    int am = si[0];
    __syncthreads();
    float s = 0;
    for (int i = t; i < V; i += 256)
        s += expf(tof(z[i]) - mx);
    sv[t] = s;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (t < w) sv[t] += sv[t + w];
        __syncthreads();
    }
    float sum = sv[0], lab = tof(z[labels[j]]);
    __syncthreads();
    for (int i = t; i < V; i += 256)
        z[i] = fromf<T>((expf(tof(z[i]) - mx) / sum - (i == labels[j] ? 1.0f : 0.0f)) * g);
    if (t == 0) rowloss[j] = -(lab - mx - logf(sum)), rowcorrect[j] = am == labels[j];
}

/* NSP cross-entropy over B rows of 2 logits (float32 logits buffer of T) */
template <typename T>
__global__ void k_nsp_ce(T *z, const int *labels, int B, float g, float *rowloss, int *rowcorrect) {
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= B) return;
    float z0 = tof(z[2 * b]), z1 = tof(z[2 * b + 1]), mx = fmaxf(z0, z1);
    float e0 = expf(z0 - mx), e1 = expf(z1 - mx), s = e0 + e1;
    int l = labels[b];
    rowloss[b] = -((l ? z1 : z0) - mx - logf(s));
    rowcorrect[b] = (z1 > z0) == (l == 1);
    z[2 * b] = fromf<T>((e0 / s - (l == 0)) * g);
    z[2 * b + 1] = fromf<T>((e1 / s - (l == 1)) * g);
}

/* stats[0..6] += loss, mlm, nsp, masked, mlm correct, nsp correct, rows (scale
 * = 1 / accumulation steps); one thread, rows in order */
__global__ void k_stats(double *stats, const float *mlmloss, const int *mlmcorrect, int nm,
                        const float *nsploss, const int *nspcorrect, int B, float scale) {
    double m = 0, n = 0;
    long long mc = 0, nc = 0;
    for (int j = 0; j < nm; j++)
        m += mlmloss[j], mc += mlmcorrect[j];
    for (int b = 0; b < B; b++)
        n += nsploss[b], nc += nspcorrect[b];
    float mf = nm ? (float)(m / nm) : 0.0f, nf = (float)(n / B);
    stats[0] += (double)(mf + nf) * scale;
    stats[1] += (double)mf * scale;
    stats[2] += (double)nf * scale;
    stats[3] += nm;
    stats[4] += (double)mc;
    stats[5] += (double)nc;
    stats[6] += B;
}

#endif
