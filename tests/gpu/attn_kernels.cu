/* attn_kernels.cu - the fused attention kernels of train_bert's CUDA
 * backend (train/cuda/attention.cuh) alone, without cuBLAS, on seeded
 * random inputs: for compute-sanitizer's racecheck, initcheck and memcheck
 * of exactly those kernels (under racecheck, cuBLAS's Hopper bf16
 * matmuls stop the sanitizer before any attention kernel runs in
 * check_gpu or train_bert).
 *
 *   attn_kernels            every case; exit 0 when all pass
 *
 * Cases: head sizes 16, 32 and 64 (2 sequences, 2 heads, length 80, the
 * last 13 positions masked), without and with attention dropout. Each
 * runs k_attn_fwd, k_attn_bwd_q and k_attn_bwd_kv on inputs copied from
 * the host (so every byte a kernel reads was written), then checks that
 * ctx, the Q/K/V gradient and the row statistics are finite, that ctx and
 * the gradients agree with attention computed on the host in double from
 * the same bf16 inputs (no dropout; within 2e-2 and 3e-2 of the largest
 * value), and that a second run gives the same bits. One line per case;
 * built by nvcc (sm_90) for a GPU and by the C++ compiler against
 * train/cuda/emu/cuda_emu.h for make test.
 */
#ifdef WB_CUDA_EMU
#include "train/cuda/emu/cuda_emu.h"
#define LAUNCH_COOP_RAW EMU_LAUNCH_COOP
#else
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>
#define LAUNCH_COOP_RAW(k, grid, block, stream, ...)                                               \
    k<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__)
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

typedef __nv_bfloat16 bf16;
#include "train/cuda/reduce.cuh"
#include "train/cuda/attention.cuh"

static void ck(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        fprintf(stderr, "attn_kernels: %s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

/* splitmix64: the inputs' seeded values in [-1, 1) */
static float rnd(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (float)(z >> 40) / (float)(1 << 23) - 1.0f;
}

template <typename X> static X *dcopy(const std::vector<X> &h) {
    void *d;
    ck(cudaMalloc(&d, h.size() * sizeof(X)), "cudaMalloc");
    ck(cudaMemcpy(d, h.data(), h.size() * sizeof(X), cudaMemcpyHostToDevice), "cudaMemcpy");
    return (X *)d;
}
template <typename X> static std::vector<X> hcopy(const X *d, size_t n) {
    std::vector<X> h(n);
    ck(cudaMemcpy(h.data(), d, n * sizeof(X), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return h;
}

struct Out {
    std::vector<bf16> ctx, dqkv;
    std::vector<float> rmax, rinv, rdi;
    int in_range; /* no dropout: ctx and the gradients as computed here, within bf16's rounding */
    double err, gerr; /* their largest errors, relative to the largest value */
};

/* n uninitialised device elements: what the kernels must write before they
 * read it (initcheck reports any other read) */
template <typename X> static X *dalloc(size_t n) {
    void *d;
    ck(cudaMalloc(&d, n * sizeof(X)), "cudaMalloc");
    return (X *)d;
}

/* one forward and backward of head size D (dropout p) on the seeded inputs */
static Out run(int D, float p, uint64_t seed) {
    const int B = 2, A = 2, S = 80, H = A * D, N = B * S, R = B * A * S;
    uint64_t s = seed;
    std::vector<bf16> qkv((size_t)N * 3 * H), dctx((size_t)N * H);
    for (auto &x : qkv)
        x = __float2bfloat16(2.0f * rnd(&s));
    for (auto &x : dctx)
        x = __float2bfloat16(rnd(&s));
    std::vector<float> bias(3 * (size_t)H), mask((size_t)B * S);
    for (auto &x : bias)
        x = 0.1f * rnd(&s);
    for (int b = 0; b < B; b++)
        for (int i = 0; i < S; i++)
            mask[(size_t)b * S + i] = i >= S - 13 ? -10000.0f : 0.0f;
    bf16 *dq = dcopy(qkv), *ddc = dcopy(dctx), *dctxo = dalloc<bf16>((size_t)N * H),
         *dgr = dalloc<bf16>((size_t)N * 3 * H);
    float *db = dcopy(bias), *dm = dcopy(mask);
    float *rmax = dalloc<float>(R), *rinv = dalloc<float>(R), *rdi = dalloc<float>(R);
    uint8_t *bits = p > 0 ? dalloc<uint8_t>((size_t)R * S / 8) : NULL;
    AttnArgs a = {dq,
                  {db, db + H, db + 2 * H},
                  dm,
                  rmax,
                  rinv,
                  rdi,
                  bits,
                  S,
                  H,
                  A,
                  1.0f / sqrtf((float)D),
                  dropout_site_key(seed, 1),
                  dropout_threshold(p),
                  p > 0 ? 1.0f / (1.0f - p) : 1.0f};
    dim3 grid((S + AROWS - 1) / AROWS, (unsigned)(B * A));
    cudaStream_t st = 0;
#define L3(kern, ...)                                                                              \
    do {                                                                                           \
        if (D == 16)                                                                               \
            LAUNCH_COOP_RAW(kern<1>, grid, 32 * AWARPS, st, __VA_ARGS__);                          \
        else if (D == 32)                                                                          \
            LAUNCH_COOP_RAW(kern<2>, grid, 32 * AWARPS, st, __VA_ARGS__);                          \
        else                                                                                       \
            LAUNCH_COOP_RAW(kern<4>, grid, 32 * AWARPS, st, __VA_ARGS__);                          \
        ck(cudaGetLastError(), #kern);                                                             \
        ck(cudaDeviceSynchronize(), #kern);                                                        \
    } while (0)
    L3(k_attn_fwd, a, dctxo);
    L3(k_attn_bwd_q, a, (const bf16 *)dctxo, (const bf16 *)ddc, dgr);
    L3(k_attn_bwd_kv, a, (const bf16 *)ddc, dgr);
    Out o = {hcopy(dctxo, (size_t)N * H),
             hcopy(dgr, (size_t)N * 3 * H),
             hcopy(rmax, R),
             hcopy(rinv, R),
             hcopy(rdi, R),
             1,
             0,
             0};
    cudaFree(dq), cudaFree(ddc), cudaFree(dctxo), cudaFree(dgr), cudaFree(db), cudaFree(dm);
    cudaFree(rmax), cudaFree(rinv), cudaFree(rdi);
    if (bits) cudaFree(bits);
    /* no dropout: against attention computed here in double from the same bf16 inputs */
    if (p == 0) {
        double err = 0, big = 0, gerr = 0, gbig = 0;
        auto in = [&](int b, int j, int part, int c) {
            return (double)__bfloat162float(
                __float2bfloat16(__bfloat162float(qkv[((size_t)b * S + j) * 3 * H + part * H + c]) +
                                 bias[(size_t)part * H + c]));
        };
        std::vector<double> P((size_t)S * S), dP((size_t)S * S);
        for (int b = 0; b < B; b++)
            for (int h = 0; h < A; h++) {
                for (int i = 0; i < S; i++) { /* P = softmax(q k^T / sqrt(D) + mask) */
                    double mx = -1e300, sum = 0;
                    for (int j = 0; j < S; j++) {
                        double x = 0;
                        for (int d = 0; d < D; d++)
                            x += in(b, i, 0, h * D + d) * in(b, j, 1, h * D + d);
                        P[(size_t)i * S + j] = x / sqrt((double)D) + mask[(size_t)b * S + j];
                        mx = fmax(mx, P[(size_t)i * S + j]);
                    }
                    for (int j = 0; j < S; j++)
                        sum += P[(size_t)i * S + j] = exp(P[(size_t)i * S + j] - mx);
                    for (int j = 0; j < S; j++)
                        P[(size_t)i * S + j] /= sum;
                }
                for (int i = 0; i < S; i++) /* ctx = P v; dP = d(ctx) v^T */
                    for (int d = 0; d < D; d++) {
                        double c = 0;
                        for (int j = 0; j < S; j++)
                            c += P[(size_t)i * S + j] * in(b, j, 2, h * D + d);
                        double g = __bfloat162float(o.ctx[((size_t)b * S + i) * H + h * D + d]);
                        err = fmax(err, fabs(g - c)), big = fmax(big, fabs(c));
                    }
                auto dc = [&](int i, int d) {
                    return (double)__bfloat162float(dctx[((size_t)b * S + i) * H + h * D + d]);
                };
                for (int i = 0; i < S; i++) {
                    double di = 0;
                    for (int j = 0; j < S; j++) {
                        double x = 0;
                        for (int d = 0; d < D; d++)
                            x += dc(i, d) * in(b, j, 2, h * D + d);
                        dP[(size_t)i * S + j] = x;
                        di += x * P[(size_t)i * S + j];
                    }
                    for (int j = 0; j < S; j++) /* dS = P (dP - sum(dP P)) / sqrt(D) */
                        dP[(size_t)i * S + j] =
                            P[(size_t)i * S + j] * (dP[(size_t)i * S + j] - di) / sqrt((double)D);
                }
                for (int n = 0; n < S; n++) /* dq = dS k, dk = dS^T q, dv = P^T d(ctx) */
                    for (int d = 0; d < D; d++) {
                        double g3[3] = {0, 0, 0};
                        for (int j = 0; j < S; j++) {
                            g3[0] += dP[(size_t)n * S + j] * in(b, j, 1, h * D + d);
                            g3[1] += dP[(size_t)j * S + n] * in(b, j, 0, h * D + d);
                            g3[2] += P[(size_t)j * S + n] * dc(j, d);
                        }
                        for (int t = 0; t < 3; t++) {
                            double g = __bfloat162float(
                                o.dqkv[((size_t)b * S + n) * 3 * H + t * H + h * D + d]);
                            gerr = fmax(gerr, fabs(g - g3[t])), gbig = fmax(gbig, fabs(g3[t]));
                        }
                    }
            }
        o.in_range = err <= 2e-2 * big && gerr <= 3e-2 * gbig;
        o.err = err / big, o.gerr = gerr / gbig;
    }
    return o;
}

static int finite_bf(const std::vector<bf16> &v) {
    for (const auto &x : v)
        if (!isfinite(__bfloat162float(x))) return 0;
    return 1;
}
static int finite_f(const std::vector<float> &v) {
    for (float x : v)
        if (!isfinite(x)) return 0;
    return 1;
}

int main(void) {
    int failed = 0, passed = 0;
    const int ds[] = {16, 32, 64};
    const float ps[] = {0.0f, 0.1f};
    for (int di = 0; di < 3; di++)
        for (int pi = 0; pi < 2; pi++) {
            int D = ds[di];
            float p = ps[pi];
            Out a = run(D, p, 42 + D), b = run(D, p, 42 + D);
            const char *why = NULL;
            if (!a.in_range)
                why = "ctx or a gradient off the reference";
            else if (!finite_bf(a.ctx) || !finite_bf(a.dqkv) || !finite_f(a.rmax) ||
                     !finite_f(a.rinv) || !finite_f(a.rdi))
                why = "a value that is not finite";
            else if (memcmp(a.ctx.data(), b.ctx.data(), a.ctx.size() * sizeof(bf16)) ||
                     memcmp(a.dqkv.data(), b.dqkv.data(), a.dqkv.size() * sizeof(bf16)))
                why = "a second run gives other bits";
            char e[96] = "";
            if (p == 0)
                snprintf(e, sizeof e, " (largest error: ctx %.1e, gradients %.1e)", a.err, a.gerr);
            printf("%s head size %d, dropout %.1f: forward, d(q), d(k) and d(v)%s%s%s\n",
                   why ? "FAIL" : "ok", D, p, e, why ? ": " : "", why ? why : "");
            why ? failed++ : passed++;
        }
    printf("attn_kernels: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
