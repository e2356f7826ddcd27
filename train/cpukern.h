/* cpukern.h - the CPU trainer's compute kernels: matrix products and the
 * vectorised element-wise functions (exp, GELU) of train/bert.c.
 *
 * Matrix products are packed and blocked (BLIS's loop order) around a
 * 6 x 16 micro-kernel: AVX2 + FMA where the CPU has them (chosen at run
 * time, so one binary runs everywhere), portable C elsewhere. exp and erf
 * come from glibc's vector math library (libmvec) on AVX2 machines and
 * from libm one value at a time elsewhere.
 *
 * Results never depend on the thread count or on how a product is cut into
 * tiles: every element of a product is summed by one thread in a fixed
 * order (a chain of multiply-adds in increasing k per 256-deep slice of
 * the inner dimension, the slices added in order; the inner dimension is
 * never split across threads), so any partition of the rows and columns
 * gives the same bits. They may differ between the AVX2 and the portable kernels
 * (fused multiply-add rounds once); WIKIBERT_KERNELS=generic in the
 * environment forces the portable ones (for tests and comparisons).
 *
 *   mm(M, N, K, A, K, 0, W, K, 1, C, N, 0, NULL, NULL, threads);  C = A W^T
 */
#ifndef WB_CPUKERN_H
#define WB_CPUKERN_H

#include <stddef.h>
#include <stdint.h>

/* Called on each finished block of a product, rows [i0, i1) and columns
 * [j0, j1) of C in the whole product's numbering; C points at element
 * (0, 0) and ldc is its row stride. Blocks of one call never overlap, and
 * a call may come from any thread of the product. */
typedef void (*MmEpilogue)(void *ctx, float *C, int ldc, int i0, int i1, int j0, int j1);

/* C[M x N] = (acc ? C : 0) + op(A) op(B), row-major with row strides lda,
 * ldb, ldc. op(A) is M x K: A[i * lda + k], or with ta A[k * lda + i];
 * op(B) is K x N: B[k * ldb + j], or with tb B[j * ldb + k]. epi (may be
 * NULL) runs on every block once its sums are final. With threads > 1
 * the product's blocks of rows and columns go to up to that many threads
 * as they come free (inside an OpenMP parallel region, and for small
 * products, it runs on the calling thread alone). M, N or K may be 0
 * (K == 0 gives C = acc ? C : 0). */
void mm(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb, int tb,
        float *C, int ldc, int acc, MmEpilogue epi, void *ectx, int threads);

/* mm (without an epilogue) that also adds op(A)'s row sums to asum:
 * asum[i] += s, s the sum of op(A)[i, k] from 0 in increasing k, in
 * float (asum NULL: the product alone). The bias gradient of a linear
 * layer rides on its weight gradient's product this way (op(A) =
 * dout^T), summed while A's columns are packed instead of in a pass of
 * its own. */
void mm_rowsum(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb,
               int tb, float *C, int ldc, int acc, float *asum, int threads);

/* y[i] = exp(x[i]) for i < n (y may be x). */
void vexp(float *y, const float *x, size_t n);

/* y = exp(x - mx) for i < n (y may be x); returns the sum of y in double,
 * accumulated in a fixed order. */
double vexp_sum(float *y, const float *x, float mx, size_t n);

/* The largest x[i] (n >= 1) and, in *arg, its first index. */
float vmax(const float *x, size_t n, int *arg);

/* GELU (erf form): h[i] = x[i] / 2 (1 + erf(x[i] / sqrt 2)); h may be x. */
void vgelu(float *h, const float *x, size_t n);

/* GELU's backward pass: dx[i] = dh[i] gelu'(x[i]); dx may be dh. */
void vgelu_bwd(float *dx, const float *dh, const float *x, size_t n);

/* Dropout (train/dropout.h) of n values: y[i] = x[i] scale where element
 * idx0 + i survives under site key `key` and threshold thr, else 0; with
 * x NULL, y[i] = scale or 0 (the mask). y may be x. The same bits with
 * either kernel set. */
void vdropout(float *y, const float *x, size_t n, uint64_t key, uint32_t idx0, uint32_t thr,
              float scale);

/* LayerNorm of one row of n values: *mean = sum x / n, *rstd =
 * 1 / sqrt(sum (x - mean)^2 / n + eps), y[i] = (x[i] - mean) rstd w[i] +
 * b[i]. Both sums in double in vsumsq's lane order, every operation
 * rounded alone: the same bits with either kernel set. */
void vln_row(float *y, float *mean, float *rstd, const float *x, const float *w, const float *b,
             size_t n, float eps);

/* LayerNorm's backward pass on one row: with g = dy w and xh = (x - mean)
 * rstd, a = sum g / n and c = sum g xh / n (float, eight lanes added as
 * vsumsq's), dx = (g - a - xh c) rstd. The same bits with either kernel
 * set. */
void vln_bwd_row(float *dx, const float *dy, const float *x, const float *w, float mean, float rstd,
                 size_t n);

/* The sum of x[i]^2 (in double) over i < n, as eight running sums (term i
 * into sum i % 8) added ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)) at the
 * end: the same bits with either kernel set. */
double vsumsq(const float *x, size_t n);

/* LAMB's first stage's constants (train/optim.c). */
typedef struct LambStage {
    float gscale, b1, b2, ibc1, ibc2, eps, wd;
} LambStage;

/* LAMB's first stage over i < n, with gs = g[i] gscale:
 *   m[i] = b1 m[i] + (1 - b1) gs,   v[i] = b2 v[i] + (1 - b2) gs gs,
 *   g[i] = m[i] ibc1 / (sqrt(v[i] ibc2) + eps) + wd p[i]
 * each operation rounded on its own (no fused multiply-add), and in *sp
 * and *su the sums of p[i]^2 and of the new g[i]^2 in vsumsq's order: the
 * same bits with either kernel set. */
void vlamb_stage1(float *g, float *m, float *v, const float *p, size_t n, const LambStage *k,
                  double *sp, double *su);

/* The kernels in use: "avx2" or "generic". */
const char *cpukern_name(void);

#endif
