/* attention.cuh - the fused attention of train_bert's CUDA backend (bf16;
 * head size D = 16, 32 or 64; S a multiple of 16): k_attn_fwd, k_attn_bwd_q
 * and k_attn_bwd_kv. Header-only, part of backend.cu's one translation
 * unit.
 *
 * No S x S matrix is stored: one warp per 16 rows (queries, or keys in
 * k_attn_bwd_kv) forms the scores 16 x 16 at a time with tensor-core
 * products (wmma); a block of AWARPS warps shares the keys and values (or
 * queries) it stages in shared memory, AROWS rows at a time. q, k and v
 * are read from the Q/K/V matmul's output [N][3H] (row n: q, k, v) with
 * their biases added as they are staged (rounded to bf16, as
 * k_qkv_bias_split does);
 * ctx and d(ctx) are [N][H]; dq, dk, dv are written into [N][3H] as the
 * Q/K/V matmul's output gradient. Forward: pass 1 over the key tiles
 * finds each row's max and sum of exponentials (kept for the backward
 * pass), pass 2 forms the probabilities, their dropout, and ctx += P' v.
 * Backward (as FlashAttention's): Di = d(ctx) . ctx per row; k_attn_bwd_q
 * recomputes P tile by tile, dS = P (dP - Di) with dP the dropout of
 * d(P'), and dq = dS k; k_attn_bwd_kv, per key tile, dv = P'^T d(ctx) and
 * dk = dS^T q. The dropout mask is k_softmax's (element r * S + j of row
 * r = (b * A + h) * S + i), drawn by the forward pass and kept as bits
 * for the backward's; every sum is in a fixed order. Within a score
 * tile a thread takes row lane / 2, columns (lane % 2) * 8 .. + 8.
 *
 * Needs from what came before: backend.cu's prelude (the CUDA headers
 * with mma.h's nvcuda::wmma, or cuda_emu.h's; bf16) and reduce.cuh.
 */
#ifndef WB_ATTENTION_CUH
#define WB_ATTENTION_CUH

#include "train/cuda/reduce.cuh"

#define AWARPS 4            /* warps per block */
#define AROWS (16 * AWARPS) /* rows (queries or keys) per block, and staged at a time */
namespace wm = nvcuda::wmma;
typedef wm::fragment<wm::matrix_a, 16, 16, 16, bf16, wm::row_major> FragA;
typedef wm::fragment<wm::matrix_b, 16, 16, 16, bf16, wm::row_major> FragBr;
typedef wm::fragment<wm::matrix_b, 16, 16, 16, bf16, wm::col_major> FragBc;
typedef wm::fragment<wm::accumulator, 16, 16, 16, float> FragC;

/* The arguments every fused-attention kernel takes */
struct AttnArgs {
    const bf16 *qkv;       /* [N][3H], before the biases */
    const float *bias[3];  /* q, k, v biases [H] */
    const float *maskbias; /* [B][S]: 0 or -10000 */
    float *rmax, *rinv;    /* [B*A*S]: each row's max and inverse sum */
    float *rdi;            /* [B*A*S]: d(ctx) . ctx per row */
    uint8_t *dbits; /* [B*A*S][S / 8]: the forward's dropout, bit set: kept (NULL: no dropout) */
    int S, H, A;
    float scale;  /* 1 / sqrt(D) */
    uint64_t key; /* attention dropout */
    uint32_t thr;
    float dscale;
};

/* dst [rows][D] (shared, the whole block staging) = rows n0 .. n0 + rows - 1
 * of sequence b, head h, part t (0 q, 1 k, 2 v) of the Q/K/V output, with
 * the bias */
template <int DT>
__device__ __forceinline__ void stage_chunk(bf16 *dst, const AttnArgs &a, int b, int h, int t,
                                            int n0, int rows) {
    const int D = 16 * DT;
    size_t ld = 3 * (size_t)a.H;
    const bf16 *src = a.qkv + ((size_t)b * a.S + n0) * ld + (size_t)t * a.H + h * D;
    const float *bias = a.bias[t] + h * D;
    for (int e = threadIdx.x * 8; e < rows * D; e += blockDim.x * 8) {
        Vec<bf16, 8> x = vld<8>(src + (size_t)(e / D) * ld + e % D);
        Vec<float, 8> bv = vld<8>(bias + e % D);
        for (int k = 0; k < 8; k++)
            x.v[k] = __float2bfloat16(__bfloat162float(x.v[k]) + bv.v[k]);
        vst<8>(dst + e, x);
    }
}

/* dst[0 .. rows) = src[0 .. rows) (shared, the whole block) */
__device__ __forceinline__ void stage_floats(float *dst, const float *src, int rows) {
    for (int i = threadIdx.x; i < rows; i += blockDim.x)
        dst[i] = src[i];
}

/* a[0 .. DT) = the 16 rows at p (ld elements apart), 16 columns each */
template <int DT> __device__ __forceinline__ void load_rows(FragA *a, const bf16 *p, int ld) {
    for (int kk = 0; kk < DT; kk++)
        wm::load_matrix_sync(a[kk], p + kk * 16, ld);
}

/* x = this warp's 16 of the block's AROWS rows from rb of part t (q, k, v),
 * staged through buf by the whole block between two barriers (not loaded
 * where the warp is past the end: act 0) */
template <int DT>
__device__ __forceinline__ void load_own(FragA *x, bf16 *buf, const AttnArgs &a, int b, int h,
                                         int t, int rb, bool act) {
    __syncthreads();
    stage_chunk<DT>(buf, a, b, h, t, rb, min(AROWS, a.S - rb));
    __syncthreads();
    if (act) load_rows<DT>(x, buf + (threadIdx.x / 32) * 16 * 16 * DT, 16 * DT);
}

/* between two barriers of the block: keys n0 .. n0 + nr - 1 of sequence b,
 * head h into kc (and their values into vc, unless NULL), their mask bias
 * into mbc */
template <int DT>
__device__ __forceinline__ void stage_keys(bf16 *kc, bf16 *vc, float *mbc, const AttnArgs &a, int b,
                                           int h, int n0, int nr) {
    __syncthreads();
    stage_chunk<DT>(kc, a, b, h, 1, n0, nr);
    if (vc) stage_chunk<DT>(vc, a, b, h, 2, n0, nr);
    stage_floats(mbc, a.maskbias + (size_t)b * a.S + n0, nr);
    __syncthreads();
}

/* c [16][16] (float, row-major) = a t^T, t the 16 rows of 16 * DT at p */
template <int DT>
__device__ __forceinline__ void tile_abT(float *c, const FragA *a, const bf16 *t, int ldt) {
    FragC acc;
    wm::fill_fragment(acc, 0.0f);
    for (int kk = 0; kk < DT; kk++) {
        FragBc b;
        wm::load_matrix_sync(b, t + kk * 16, ldt);
        wm::mma_sync(acc, a[kk], b, acc);
    }
    wm::store_matrix_sync(c, acc, 16, wm::mem_row_major);
}

/* acc[dt] += a x the 16 x 16 tile dt of the 16 rows at p (row-major) */
template <int DT>
__device__ __forceinline__ void tile_acc(FragC *acc, const FragA &a, const bf16 *p, int ld) {
    for (int dt = 0; dt < DT; dt++) {
        FragBr b;
        wm::load_matrix_sync(b, p + dt * 16, ld);
        wm::mma_sync(acc[dt], a, b, acc[dt]);
    }
}

/* the 16 x 16 * DT accumulators times mul -> 16 bf16 rows at dst (ld
 * apart), through stage (16 * 16 * DT floats) */
template <int DT>
__device__ __forceinline__ void put_rows(float *stage, const FragC *acc, float mul, bf16 *dst,
                                         size_t ld) {
    __syncwarp();
    for (int dt = 0; dt < DT; dt++)
        wm::store_matrix_sync(stage + dt * 16, acc[dt], DT * 16, wm::mem_row_major);
    __syncwarp();
    for (int e = (threadIdx.x % 32) * 8; e < 16 * 16 * DT; e += 32 * 8) {
        Vec<float, 8> x = vld<8>(stage + e);
        Vec<bf16, 8> y;
        for (int k = 0; k < 8; k++)
            y.v[k] = __float2bfloat16(x.v[k] * mul);
        vst<8>(dst + (size_t)(e / (16 * DT)) * ld + e % (16 * DT), y);
    }
}

/* the max and the inverse sum of exponentials of the two half rows held
 * by lanes 2i and 2i + 1, the even lane's half first in both */
__device__ __forceinline__ void pair_stats(float m, float l, float *M, float *inv) {
    int odd = threadIdx.x & 1;
    float mo = __shfl_xor_sync(0xffffffffu, m, 1), lo = __shfl_xor_sync(0xffffffffu, l, 1);
    float m0 = odd ? mo : m, l0 = odd ? lo : l, m1 = odd ? m : mo, l1 = odd ? l : lo;
    *M = fmaxf(m0, m1);
    *inv = 1.0f / (l0 * expf(m0 - *M) + l1 * expf(m1 - *M));
}

/* ctx [N][H] = dropout(softmax(q k^T scale + mask)) v; a.rmax, a.rinv.
 * Block per AROWS queries of one sequence and head (grid (S / AROWS rounded
 * up, B * A)); the block stages AROWS keys (and values) at a time for all
 * its warps. Bounds: 5 blocks an SM (at most 102 registers, which head size
 * 64 fits without spilling; its shared memory allows 6). */
template <int DT>
__global__ void __launch_bounds__(32 * AWARPS, 5) k_attn_fwd(AttnArgs a, bf16 *ctx) {
    const int D = 16 * DT;
    __shared__ __align__(32) float scr[AWARPS][16 * 64], mbc[AROWS];
    __shared__ __align__(32) bf16 kc[AROWS * 64], vc[AROWS * 64], ptile[AWARPS][16 * 16];
    int w = threadIdx.x / 32, lane = threadIdx.x % 32, bh = blockIdx.y, b = bh / a.A, h = bh % a.A,
        S = a.S;
    int qb = blockIdx.x * AROWS, q0 = qb + w * 16, rr = lane >> 1, c0 = (lane & 1) * 8;
    bool act = q0 < S; /* warps past the end only stage */
    float *sc = scr[w];
    bf16 *pt = ptile[w];
    size_t row = (size_t)bh * S + q0 + rr;
    FragA qa[DT];
    load_own<DT>(qa, kc, a, b, h, 0, qb, act);
    float m = -INFINITY, l = 0, M = 0, inv = 0;
    for (int n0 = 0; n0 < S; n0 += AROWS) {
        int nr = min(AROWS, S - n0);
        stage_keys<DT>(kc, NULL, mbc, a, b, h, n0, nr);
        if (!act) continue;
        for (int t0 = 0; t0 < nr; t0 += 16) {
            tile_abT<DT>(sc, qa, kc + t0 * D, D);
            __syncwarp();
            Vec<float, 8> sv =
                vld<8>(sc + rr * 16 + c0); /* a lane's 8 scores in 16-byte reads: 2-way banks */
            float v[8], tm = m, s = 0;
            for (int j = 0; j < 8; j++)
                v[j] = sv.v[j] * a.scale + mbc[t0 + c0 + j], tm = fmaxf(tm, v[j]);
            for (int j = 0; j < 8; j++)
                s += expf(v[j] - tm);
            l = l * expf(m - tm) + s, m = tm;
            __syncwarp();
        }
    }
    if (act) {
        pair_stats(m, l, &M, &inv);
        if (!(lane & 1)) a.rmax[row] = M, a.rinv[row] = inv;
    }
    FragC o[DT];
    for (int dt = 0; dt < DT; dt++)
        wm::fill_fragment(o[dt], 0.0f);
    for (int n0 = 0; n0 < S; n0 += AROWS) {
        int nr = min(AROWS, S - n0);
        stage_keys<DT>(kc, vc, mbc, a, b, h, n0, nr);
        if (!act) continue;
        for (int t0 = 0; t0 < nr; t0 += 16) {
            tile_abT<DT>(sc, qa, kc + t0 * D, D);
            __syncwarp();
            unsigned bits = 0;
            Vec<float, 8> sv = vld<8>(sc + rr * 16 + c0);
            Vec<bf16, 8> pv;
            for (int j = 0; j < 8; j++) {
                int c = n0 + t0 + c0 + j;
                float p = expf(sv.v[j] * a.scale + mbc[t0 + c0 + j] - M) * inv;
                float f = drop_factor(a.key, (uint32_t)(row * S + c), a.thr, a.dscale);
                pv.v[j] = __float2bfloat16(p * f);
                bits |= (unsigned)(f != 0.0f) << j;
            }
            vst<8>(pt + rr * 16 + c0, pv);
            if (a.dbits) a.dbits[(row * S + n0 + t0 + c0) / 8] = (uint8_t)bits;
            __syncwarp();
            FragA pa;
            wm::load_matrix_sync(pa, pt, 16);
            tile_acc<DT>(o, pa, vc + t0 * D, D);
            __syncwarp();
        }
    }
    if (act) put_rows<DT>(sc, o, 1.0f, ctx + ((size_t)b * S + q0) * a.H + h * D, a.H);
}

/* dq into dqkv [N][3H] from d(ctx) [N][H]; a.rdi. Grid and blocks as
 * k_attn_fwd's. */
template <int DT>
__global__ void k_attn_bwd_q(AttnArgs a, const bf16 *ctx, const bf16 *dctx, bf16 *dqkv) {
    const int D = 16 * DT;
    __shared__ __align__(32) float scr[AWARPS][16 * 64], mbc[AROWS];
    __shared__ __align__(32) bf16 kc[AROWS * 64], vc[AROWS * 64], ptile[AWARPS][16 * 16];
    int w = threadIdx.x / 32, lane = threadIdx.x % 32, bh = blockIdx.y, b = bh / a.A, h = bh % a.A,
        S = a.S, H = a.H;
    int qb = blockIdx.x * AROWS, q0 = qb + w * 16, rr = lane >> 1, c0 = (lane & 1) * 8;
    bool act = q0 < S;
    float *sc = scr[w], *sd = scr[w] + 256;
    bf16 *pt = ptile[w];
    const bf16 *O = ctx + ((size_t)b * S + q0) * H + h * D,
               *dO = dctx + ((size_t)b * S + q0) * H + h * D;
    size_t row = (size_t)bh * S + q0 + rr;
    float di = 0, M = 0, inv = 0;
    FragA qa[DT], oa[DT];
    if (act) {
        for (int c = (lane & 1) * (D / 2); c < ((lane & 1) + 1) * (D / 2); c += 8) {
            Vec<bf16, 8> x = vld<8>(dO + (size_t)rr * H + c), y = vld<8>(O + (size_t)rr * H + c);
            for (int k = 0; k < 8; k++)
                di += __bfloat162float(x.v[k]) * __bfloat162float(y.v[k]);
        }
        float dio = __shfl_xor_sync(0xffffffffu, di, 1);
        di = lane & 1 ? dio + di : di + dio;
        if (!(lane & 1)) a.rdi[row] = di;
        M = a.rmax[row], inv = a.rinv[row];
        load_rows<DT>(oa, dO, H);
    }
    load_own<DT>(qa, kc, a, b, h, 0, qb, act);
    FragC acc[DT];
    for (int dt = 0; dt < DT; dt++)
        wm::fill_fragment(acc[dt], 0.0f);
    for (int n0 = 0; n0 < S; n0 += AROWS) {
        int nr = min(AROWS, S - n0);
        stage_keys<DT>(kc, vc, mbc, a, b, h, n0, nr);
        if (!act) continue;
        for (int t0 = 0; t0 < nr; t0 += 16) {
            tile_abT<DT>(sc, qa, kc + t0 * D, D);
            tile_abT<DT>(sd, oa, vc + t0 * D, D); /* d(P') */
            __syncwarp();
            unsigned bits = a.dbits ? a.dbits[(row * S + n0 + t0 + c0) / 8] : 0xffu;
            int e = rr * 16 + c0;
            Vec<float, 8> sv = vld<8>(sc + e), dv = vld<8>(sd + e);
            Vec<bf16, 8> pv;
            for (int j = 0; j < 8; j++) {
                float p = expf(sv.v[j] * a.scale + mbc[t0 + c0 + j] - M) * inv;
                float dp = dv.v[j] * ((bits >> j) & 1 ? a.dscale : 0.0f);
                pv.v[j] = __float2bfloat16(p * (dp - di));
            }
            vst<8>(pt + e, pv);
            __syncwarp();
            FragA da;
            wm::load_matrix_sync(da, pt, 16);
            tile_acc<DT>(acc, da, kc + t0 * D, D);
            __syncwarp();
        }
    }
    if (act)
        put_rows<DT>(sc, acc, a.scale, dqkv + ((size_t)b * S + q0) * 3 * H + h * D, 3 * (size_t)H);
}

/* dk, dv into dqkv [N][3H], after k_attn_bwd_q (rdi). Block per AROWS keys
 * (warp per 16); the block stages AROWS queries and their row statistics
 * at a time. */
template <int DT> __global__ void k_attn_bwd_kv(AttnArgs a, const bf16 *dctx, bf16 *dqkv) {
    const int D = 16 * DT;
    __shared__ __align__(32) float scr[AWARPS][16 * 64], smax[AROWS], sinv[AROWS], sdi[AROWS];
    __shared__ __align__(32) bf16 qc[AROWS * 64], vc[AROWS * 64], ptile[AWARPS][16 * 16],
        stile[AWARPS][16 * 16];
    __shared__ uint8_t sbits[AROWS * AROWS / 8]; /* the chunk's queries x the block's keys */
    int w = threadIdx.x / 32, lane = threadIdx.x % 32, bh = blockIdx.y, b = bh / a.A, h = bh % a.A,
        S = a.S, H = a.H;
    int kb = blockIdx.x * AROWS, k0 = kb + w * 16, kr = lane >> 1, c0 = (lane & 1) * 8,
        kk = w * 16 + kr;
    bool act = k0 < S;
    float *sc = scr[w], *sd = scr[w] + 256;
    bf16 *pt = ptile[w], *st = stile[w];
    const bf16 *dO = dctx + (size_t)b * S * H + h * D;
    float mbk = act ? a.maskbias[(size_t)b * S + k0 + kr] : 0.0f;
    FragA ka[DT], va[DT];
    load_own<DT>(ka, qc, a, b, h, 1, kb, act);
    load_own<DT>(va, vc, a, b, h, 2, kb, act);
    FragC dka[DT], dva[DT];
    for (int dt = 0; dt < DT; dt++)
        wm::fill_fragment(dka[dt], 0.0f), wm::fill_fragment(dva[dt], 0.0f);
    for (int n0 = 0; n0 < S; n0 += AROWS) {
        int nr = min(AROWS, S - n0);
        size_t r0 = (size_t)bh * S + n0;
        __syncthreads();
        stage_chunk<DT>(qc, a, b, h, 0, n0, nr);
        stage_floats(smax, a.rmax + r0, nr), stage_floats(sinv, a.rinv + r0, nr),
            stage_floats(sdi, a.rdi + r0, nr);
        for (int i = threadIdx.x; a.dbits && i < nr * (AROWS / 8); i += blockDim.x)
            if (kb / 8 + i % (AROWS / 8) < S / 8)
                sbits[i] = a.dbits[((r0 + i / (AROWS / 8)) * S + kb) / 8 + i % (AROWS / 8)];
        __syncthreads();
        if (!act) continue;
        for (int t0 = 0; t0 < nr; t0 += 16) {
            tile_abT<DT>(sc, ka, qc + t0 * D, D);                /* scores^T [key][query] */
            tile_abT<DT>(sd, va, dO + (size_t)(n0 + t0) * H, H); /* d(P')^T */
            __syncwarp();
            int e = kr * 16 + c0;
            Vec<float, 8> sv = vld<8>(sc + e), dv = vld<8>(sd + e);
            Vec<bf16, 8> pv, sv2;
            for (int j = 0; j < 8; j++) {
                int qi = t0 + c0 + j; /* the row statistics: 2 addresses a warp, broadcast */
                float p = expf(sv.v[j] * a.scale + mbk - smax[qi]) * sinv[qi];
                float f = !a.dbits || (sbits[qi * (AROWS / 8) + kk / 8] >> (kk % 8) & 1) ? a.dscale
                                                                                         : 0.0f;
                pv.v[j] = __float2bfloat16(p * f);
                sv2.v[j] = __float2bfloat16(p * (dv.v[j] * f - sdi[qi]));
            }
            vst<8>(pt + e, pv), vst<8>(st + e, sv2);
            __syncwarp();
            FragA pa, sa;
            wm::load_matrix_sync(pa, pt, 16);
            wm::load_matrix_sync(sa, st, 16);
            tile_acc<DT>(dva, pa, dO + (size_t)(n0 + t0) * H, H);
            tile_acc<DT>(dka, sa, qc + t0 * D, D);
            __syncwarp();
        }
    }
    if (!act) return;
    bf16 *out = dqkv + ((size_t)b * S + k0) * 3 * H + h * D;
    put_rows<DT>(sc, dka, a.scale, out + H, 3 * (size_t)H);
    put_rows<DT>(sc, dva, 1.0f, out + 2 * H, 3 * (size_t)H);
}

#endif
