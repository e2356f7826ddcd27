/* cpukern.c - the CPU trainer's compute kernels (see cpukern.h).
 *
 * Matrix products: the blocked scheme of Goto and van de Geijn ("Anatomy of
 * high-performance matrix multiplication", 2008) as BLIS arranges it. For
 * each NC-wide panel of columns and KC-deep slice of the inner dimension,
 * op(B) is packed into NR-column slivers (k-major, zero-padded), then for
 * each MC-tall block of rows op(A) is packed into MR-row slivers, and the
 * micro-kernel multiplies one A sliver by one B sliver into an MR x NR tile
 * of C held in registers:
 *
 *     C tile (6 x 16)  +=  sum over k of  a[k][0..5] (outer product) b[k][0..15]
 *
 * Each KC-deep slice sums its products into a tile that starts at 0, one
 * chain of multiply-adds in increasing k per element, and the tile is then
 * added to C (the first slice stores it, unless accumulating). An element
 * of C is thus C + chain(slice 1) + chain(slice 2) ... whatever the tile
 * edges (the padding only touches padded rows and columns), the order the
 * tiles are computed in or the threads: the product's bits depend only on
 * its inputs and KC. Sizes: a B sliver (KC x NR,
 * 16 KiB) stays in L1, an A block (MC x KC, 96 KiB) in L2.
 *
 * The AVX2 micro-kernel keeps the 6 x 16 tile in 12 ymm registers and
 * issues 12 FMAs per k; it is compiled for AVX2 + FMA with a target pragma
 * and chosen at run time (__builtin_cpu_supports), the portable one is
 * plain C. B is packed a row's run of slivers at a time, or, transposed,
 * in eight-by-eight blocks turned in registers; transposed A eight k at a
 * time, summing its rows on the way when asked (mm_rowsum: a linear
 * layer's bias gradient with its weight gradient). The packing buffers
 * sit on huge pages (xmalloc_huge). Dropout masks, LAMB's
 * first stage, the norms' sums of squares and LayerNorm's rows run eight
 * lanes at a time, each operation rounded as the portable code rounds it
 * (no FMA) and the sums in fixed lanes, so they give the same bits with
 * either kernel set. exp and erf on AVX2 machines are glibc's libmvec
 * (_ZGVdN8v_expf, _ZGVdN8v_erff, the vector ABI's 8-lane AVX2 variants, at
 * most 4 ulp) where the build found it, libm one value at a time elsewhere.
 */
#include "train/cpukern.h"

#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "train/dropout.h"

#define MR 6
#define NR 16
#define KC 256
#define MC 96   /* a multiple of MR */
#define NC 2048 /* a multiple of NR */
#define PG 8    /* B slivers packed by one task */

/* The micro-kernel: element (r, k) of the A sliver is a[r * rs + k * cs]
 * (a packed sliver: rs 1, cs MR; A read in place: its row and column
 * strides), b is a packed sliver, c the tile (row stride ldc), mr x nr of
 * it inside the product. */
typedef void (*Kernel)(int kc, const float *a, int rs, int cs, const float *b, float *c, int ldc,
                       int load, int mr, int nr);

static int imin(int a, int b) { return a < b ? a : b; }

/* ---- portable kernels ---- */

/* c[0..mr) x [0..nr) = (load ? c : 0) + (sum over k of a(r, k) b[k][j], in k order) */
static void kern_generic(int kc, const float *a, int rs, int cs, const float *b, float *c, int ldc,
                         int load, int mr, int nr) {
    float t[MR][NR] = {{0}};
    for (int k = 0; k < kc; k++) {
        const float *ak = a + (size_t)k * cs, *bk = b + (size_t)k * NR;
        for (int r = 0; r < MR; r++) {
            float ar = ak[(size_t)r * rs];
            for (int j = 0; j < NR; j++)
                t[r][j] += ar * bk[j];
        }
    }
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nr; j++)
            c[(size_t)r * ldc + j] = load ? c[(size_t)r * ldc + j] + t[r][j] : t[r][j];
}

static void exp_generic(float *y, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        y[i] = expf(x[i]);
}

static double exp_sum_generic(float *y, const float *x, float mx, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += y[i] = expf(x[i] - mx);
    return s;
}

static void gelu_generic(float *h, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        h[i] = 0.5f * x[i] * (1.0f + erff(x[i] * (float)M_SQRT1_2));
}

static void gelu_bwd_generic(float *dx, const float *dh, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        dx[i] = dh[i] * (0.5f * (1.0f + erff(v * (float)M_SQRT1_2)) +
                         v * expf(-0.5f * v * v) * 0.3989422804014327f);
    }
}

static void dropout_generic(float *y, const float *x, size_t n, uint64_t key, uint32_t idx0,
                            uint32_t thr, float scale) {
    for (size_t i = 0; i < n; i++)
        y[i] = dropout_keep(key, idx0 + (uint32_t)i, thr) ? (x ? x[i] * scale : scale) : 0.0f;
}

/* Sums in eight lanes (term i into lane i % 8, the lanes added
 * ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7))) and element-wise steps, from
 * element i to n: the portable kernels run them from 0, the AVX2 ones from
 * where their vectors stopped, so both give the same bits. */
static double lanes_sum(const double s[8]) {
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

static float lanes_sumf(const float s[8]) {
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

static void lanes_add(double s[8], const float *x, size_t i, size_t n) {
    for (; i < n; i++)
        s[i % 8] += x[i];
}

static void lanes_add_sq(double s[8], const float *x, size_t i, size_t n) {
    for (; i < n; i++)
        s[i % 8] += (double)x[i] * x[i];
}

/* sum (x - mu)^2 */
static void lanes_add_dev(double s[8], const float *x, float mu, size_t i, size_t n) {
    for (; i < n; i++)
        s[i % 8] += (double)(x[i] - mu) * (x[i] - mu);
}

/* LayerNorm: 1 / sqrt(variance + eps) from the lanes of sum (x - mu)^2 */
static float ln_rstd(const double q[8], size_t n, float eps) {
    return 1.0f / sqrtf((float)(lanes_sum(q) / (double)n) + eps);
}

static void ln_out(float *y, const float *x, const float *w, const float *b, float mu, float rs,
                   size_t i, size_t n) {
    for (; i < n; i++)
        y[i] = (x[i] - mu) * rs * w[i] + b[i];
}

/* LayerNorm's backward sums: g = dy w into a, g xh into c */
static void ln_bwd_lanes(float a[8], float c[8], const float *dy, const float *x, const float *w,
                         float mu, float rs, size_t i, size_t n) {
    for (; i < n; i++) {
        float g = dy[i] * w[i], xh = (x[i] - mu) * rs;
        a[i % 8] += g;
        c[i % 8] += g * xh;
    }
}

static void ln_dx(float *dx, const float *dy, const float *x, const float *w, float mu, float rs,
                  float am, float cm, size_t i, size_t n) {
    for (; i < n; i++) {
        float xh = (x[i] - mu) * rs;
        dx[i] = (dy[i] * w[i] - am - xh * cm) * rs;
    }
}

/* LAMB's first stage, the sums of p^2 into a and of the update^2 into b */
static void lamb1_lanes(float *g, float *m, float *v, const float *p, const LambStage *k,
                        double a[8], double b[8], size_t i, size_t n) {
    for (; i < n; i++) {
        float gi = g[i] * k->gscale;
        m[i] = k->b1 * m[i] + (1 - k->b1) * gi;
        v[i] = k->b2 * v[i] + (1 - k->b2) * gi * gi;
        g[i] = (m[i] * k->ibc1) / (sqrtf(v[i] * k->ibc2) + k->eps) + k->wd * p[i];
        a[i % 8] += (double)p[i] * p[i];
        b[i % 8] += (double)g[i] * g[i];
    }
}

static double sumsq_generic(const float *x, size_t n) {
    double s[8] = {0};
    lanes_add_sq(s, x, 0, n);
    return lanes_sum(s);
}

static void ln_generic(float *y, float *mean, float *rstd, const float *x, const float *w,
                       const float *b, size_t n, float eps) {
    double s[8] = {0}, q[8] = {0};
    lanes_add(s, x, 0, n);
    float mu = (float)(lanes_sum(s) / (double)n);
    lanes_add_dev(q, x, mu, 0, n);
    float rs = ln_rstd(q, n, eps);
    ln_out(y, x, w, b, mu, rs, 0, n);
    *mean = mu, *rstd = rs;
}

static void ln_bwd_generic(float *dx, const float *dy, const float *x, const float *w, float mu,
                           float rs, size_t n) {
    float a[8] = {0}, c[8] = {0};
    ln_bwd_lanes(a, c, dy, x, w, mu, rs, 0, n);
    ln_dx(dx, dy, x, w, mu, rs, lanes_sumf(a) / (float)n, lanes_sumf(c) / (float)n, 0, n);
}

static void lamb1_generic(float *g, float *m, float *v, const float *p, size_t n,
                          const LambStage *k, double *sp, double *su) {
    double a[8] = {0}, b[8] = {0};
    lamb1_lanes(g, m, v, p, k, a, b, 0, n);
    *sp = lanes_sum(a), *su = lanes_sum(b);
}

/* ---- AVX2 + FMA kernels ---- */

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_AVX2_PATH 1
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma")

/* libmvec's AVX2 variants (glibc >= 2.22 for expf, 2.35 for erff), where
 * the Makefile found libmvec (WB_HAVE_MVEC); else exp and erf use libm */
#ifdef WB_HAVE_MVEC
__m256 _ZGVdN8v_expf(__m256);
__m256 _ZGVdN8v_erff(__m256);
#define HAVE_MVEC 1
#else
#define _ZGVdN8v_expf(x) (x)
#define _ZGVdN8v_erff(x) (x)
#define HAVE_MVEC 0
#endif

static void kern_avx2(int kc, const float *restrict a, int rs, int cs, const float *restrict b,
                      float *c, int ldc, int load, int mr, int nr) {
    float tmp[MR * NR] __attribute__((aligned(32)));
    float *cc = c;
    int ld = ldc;
    if (mr < MR || nr < NR) { /* an edge tile: through a full-size copy */
        cc = tmp, ld = NR;
        if (load)
            for (int r = 0; r < MR; r++)
                for (int j = 0; j < NR; j++)
                    tmp[r * NR + j] = r < mr && j < nr ? c[(size_t)r * ldc + j] : 0.0f;
    }
    /* the tile's sums start at 0 and C is added after the k loop (a
     * slice's chain, then C + chain): C's lines are prefetched now and
     * arrive while the loop runs */
    if (load)
        for (int r = 0; r < MR; r++)
            _mm_prefetch((const char *)(cc + (size_t)r * ld), _MM_HINT_T0),
                _mm_prefetch((const char *)(cc + (size_t)r * ld + NR - 1), _MM_HINT_T0);
    __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
    c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = _mm256_setzero_ps();
    /* two row pointers, each with offsets 0, rs and 2 rs, bumped by cs a
     * step: no address arithmetic in the loop beyond two adds */
    size_t r1 = (size_t)rs, r2 = 2 * (size_t)rs;
    const float *p = a, *q = a + 3 * (size_t)rs;
    for (int k = 0; k < kc; k++, p += cs, q += cs, b += NR) {
        __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8), t;
        t = _mm256_broadcast_ss(p);
        c00 = _mm256_fmadd_ps(t, b0, c00), c01 = _mm256_fmadd_ps(t, b1, c01);
        t = _mm256_broadcast_ss(p + r1);
        c10 = _mm256_fmadd_ps(t, b0, c10), c11 = _mm256_fmadd_ps(t, b1, c11);
        t = _mm256_broadcast_ss(p + r2);
        c20 = _mm256_fmadd_ps(t, b0, c20), c21 = _mm256_fmadd_ps(t, b1, c21);
        t = _mm256_broadcast_ss(q);
        c30 = _mm256_fmadd_ps(t, b0, c30), c31 = _mm256_fmadd_ps(t, b1, c31);
        t = _mm256_broadcast_ss(q + r1);
        c40 = _mm256_fmadd_ps(t, b0, c40), c41 = _mm256_fmadd_ps(t, b1, c41);
        t = _mm256_broadcast_ss(q + r2);
        c50 = _mm256_fmadd_ps(t, b0, c50), c51 = _mm256_fmadd_ps(t, b1, c51);
    }
    if (load) {
        c00 = _mm256_add_ps(_mm256_loadu_ps(cc), c00);
        c01 = _mm256_add_ps(_mm256_loadu_ps(cc + 8), c01);
        c10 = _mm256_add_ps(_mm256_loadu_ps(cc + ld), c10);
        c11 = _mm256_add_ps(_mm256_loadu_ps(cc + ld + 8), c11);
        c20 = _mm256_add_ps(_mm256_loadu_ps(cc + 2 * ld), c20);
        c21 = _mm256_add_ps(_mm256_loadu_ps(cc + 2 * ld + 8), c21);
        c30 = _mm256_add_ps(_mm256_loadu_ps(cc + 3 * ld), c30);
        c31 = _mm256_add_ps(_mm256_loadu_ps(cc + 3 * ld + 8), c31);
        c40 = _mm256_add_ps(_mm256_loadu_ps(cc + 4 * ld), c40);
        c41 = _mm256_add_ps(_mm256_loadu_ps(cc + 4 * ld + 8), c41);
        c50 = _mm256_add_ps(_mm256_loadu_ps(cc + 5 * ld), c50);
        c51 = _mm256_add_ps(_mm256_loadu_ps(cc + 5 * ld + 8), c51);
    }
    _mm256_storeu_ps(cc, c00), _mm256_storeu_ps(cc + 8, c01);
    _mm256_storeu_ps(cc + ld, c10), _mm256_storeu_ps(cc + ld + 8, c11);
    _mm256_storeu_ps(cc + 2 * ld, c20), _mm256_storeu_ps(cc + 2 * ld + 8, c21);
    _mm256_storeu_ps(cc + 3 * ld, c30), _mm256_storeu_ps(cc + 3 * ld + 8, c31);
    _mm256_storeu_ps(cc + 4 * ld, c40), _mm256_storeu_ps(cc + 4 * ld + 8, c41);
    _mm256_storeu_ps(cc + 5 * ld, c50), _mm256_storeu_ps(cc + 5 * ld + 8, c51);
    if (cc == tmp)
        for (int r = 0; r < mr; r++)
            for (int j = 0; j < nr; j++)
                c[(size_t)r * ldc + j] = tmp[r * NR + j];
}

/* n values from x into an 8-lane vector, the rest `fill` */
static __m256 load_part(const float *x, size_t n, float fill) {
    float t[8];
    for (size_t i = 0; i < 8; i++)
        t[i] = i < n ? x[i] : fill;
    return _mm256_loadu_ps(t);
}

static void store_part(float *y, __m256 v, size_t n) {
    float t[8];
    _mm256_storeu_ps(t, v);
    memcpy(y, t, n * sizeof *y);
}

static void exp_avx2(float *y, const float *x, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _ZGVdN8v_expf(_mm256_loadu_ps(x + i)));
    if (i < n) store_part(y + i, _ZGVdN8v_expf(load_part(x + i, n - i, 0.0f)), n - i);
}

static double exp_sum_avx2(float *y, const float *x, float mx, size_t n) {
    __m256 m = _mm256_set1_ps(mx);
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    size_t i = 0;
    for (; i < n; i += 8) {
        size_t k = n - i < 8 ? n - i : 8;
        /* the tail's missing lanes: exp(-inf) = 0 adds nothing */
        __m256 v = k == 8 ? _mm256_loadu_ps(x + i) : load_part(x + i, k, -INFINITY);
        __m256 e = _ZGVdN8v_expf(_mm256_sub_ps(v, m));
        if (k == 8)
            _mm256_storeu_ps(y + i, e);
        else
            store_part(y + i, e, k);
        s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
        s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    }
    double t0[4], t1[4];
    _mm256_storeu_pd(t0, s0), _mm256_storeu_pd(t1, s1);
    return ((t0[0] + t0[1]) + (t0[2] + t0[3])) + ((t1[0] + t1[1]) + (t1[2] + t1[3]));
}

static __m256 gelu8(__m256 x) {
    __m256 e = _ZGVdN8v_erff(_mm256_mul_ps(x, _mm256_set1_ps((float)M_SQRT1_2)));
    __m256 half_x = _mm256_mul_ps(x, _mm256_set1_ps(0.5f));
    return _mm256_fmadd_ps(half_x, e, half_x);
}

static void gelu_avx2(float *h, const float *x, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(h + i, gelu8(_mm256_loadu_ps(x + i)));
    if (i < n) store_part(h + i, gelu8(load_part(x + i, n - i, 0.0f)), n - i);
}

/* gelu'(x) = (1 + erf(x / sqrt 2)) / 2 + x exp(-x^2 / 2) / sqrt(2 pi) */
static __m256 gelu_grad8(__m256 x) {
    __m256 e = _ZGVdN8v_erff(_mm256_mul_ps(x, _mm256_set1_ps((float)M_SQRT1_2)));
    __m256 g = _ZGVdN8v_expf(_mm256_mul_ps(_mm256_mul_ps(x, x), _mm256_set1_ps(-0.5f)));
    __m256 cdf = _mm256_fmadd_ps(e, _mm256_set1_ps(0.5f), _mm256_set1_ps(0.5f));
    return _mm256_fmadd_ps(_mm256_mul_ps(x, g), _mm256_set1_ps(0.3989422804014327f), cdf);
}

static void gelu_bwd_avx2(float *dx, const float *dh, const float *x, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(
            dx + i, _mm256_mul_ps(_mm256_loadu_ps(dh + i), gelu_grad8(_mm256_loadu_ps(x + i))));
    if (i < n)
        store_part(dx + i,
                   _mm256_mul_ps(load_part(dh + i, n - i, 0.0f),
                                 gelu_grad8(load_part(x + i, n - i, 0.0f))),
                   n - i);
}

/* dropout_mix32 on eight lanes */
static __m256i mix32_avx2(__m256i x) {
    x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
    x = _mm256_mullo_epi32(x, _mm256_set1_epi32((int)0x7feb352dU));
    x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 15));
    x = _mm256_mullo_epi32(x, _mm256_set1_epi32((int)0x846ca68bU));
    return _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
}

static void dropout_avx2(float *y, const float *x, size_t n, uint64_t key, uint32_t idx0,
                         uint32_t thr, float scale) {
    __m256i klo = _mm256_set1_epi32((int)(uint32_t)key),
            khi = _mm256_set1_epi32((int)(uint32_t)(key >> 32)), t = _mm256_set1_epi32((int)thr),
            step = _mm256_set1_epi32(8),
            idx = _mm256_add_epi32(_mm256_set1_epi32((int)idx0),
                                   _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m256 sc = _mm256_set1_ps(scale);
    size_t i = 0;
    for (; i + 8 <= n; i += 8, idx = _mm256_add_epi32(idx, step)) {
        __m256i h = mix32_avx2(_mm256_xor_si256(mix32_avx2(_mm256_xor_si256(idx, klo)), khi));
        /* kept: h >= thr, unsigned */
        __m256 keep = _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_max_epu32(h, t), h));
        __m256 v = x ? _mm256_mul_ps(_mm256_loadu_ps(x + i), sc) : sc;
        _mm256_storeu_ps(y + i, _mm256_and_ps(keep, v));
    }
    dropout_generic(y + i, x ? x + i : NULL, n - i, key, idx0 + (uint32_t)i, thr, scale);
}

/* 16 rows of kc values each (row r at src + r * ld) into one 16-wide
 * sliver, k-major: eight-by-eight blocks transposed in registers */
_Static_assert(NR == 16, "pack_rows16_avx2 fills 16-wide slivers");
static void pack_rows16_avx2(float *d, const float *src, size_t ld, int kc) {
    int k8 = kc / 8 * 8;
    for (int rb = 0; rb < 16; rb += 8) {
        const float *s = src + (size_t)rb * ld;
        for (int k = 0; k < k8; k += 8) {
            __m256 r0 = _mm256_loadu_ps(s + k), r1 = _mm256_loadu_ps(s + ld + k),
                   r2 = _mm256_loadu_ps(s + 2 * ld + k), r3 = _mm256_loadu_ps(s + 3 * ld + k),
                   r4 = _mm256_loadu_ps(s + 4 * ld + k), r5 = _mm256_loadu_ps(s + 5 * ld + k),
                   r6 = _mm256_loadu_ps(s + 6 * ld + k), r7 = _mm256_loadu_ps(s + 7 * ld + k);
            __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1),
                   t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3),
                   t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
                   t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
            __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee),
                   u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee),
                   u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee),
                   u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
            float *o = d + (size_t)k * 16 + rb;
            _mm256_storeu_ps(o, _mm256_permute2f128_ps(u0, u4, 0x20));
            _mm256_storeu_ps(o + 16, _mm256_permute2f128_ps(u1, u5, 0x20));
            _mm256_storeu_ps(o + 32, _mm256_permute2f128_ps(u2, u6, 0x20));
            _mm256_storeu_ps(o + 48, _mm256_permute2f128_ps(u3, u7, 0x20));
            _mm256_storeu_ps(o + 64, _mm256_permute2f128_ps(u0, u4, 0x31));
            _mm256_storeu_ps(o + 80, _mm256_permute2f128_ps(u1, u5, 0x31));
            _mm256_storeu_ps(o + 96, _mm256_permute2f128_ps(u2, u6, 0x31));
            _mm256_storeu_ps(o + 112, _mm256_permute2f128_ps(u3, u7, 0x31));
        }
        for (int r = 0; r < 8; r++)
            for (int k = k8; k < kc; k++)
                d[(size_t)k * 16 + rb + r] = s[(size_t)r * ld + k];
    }
}

static float max_avx2(const float *x, size_t n) {
    __m256 m = _mm256_set1_ps(x[0]);
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        m = _mm256_max_ps(m, _mm256_loadu_ps(x + i));
    float t[8], mx;
    _mm256_storeu_ps(t, m);
    mx = t[0];
    for (int j = 1; j < 8; j++)
        mx = t[j] > mx ? t[j] : mx;
    for (; i < n; i++)
        mx = x[i] > mx ? x[i] : mx;
    return mx;
}

#pragma GCC pop_options

/* AVX2 without FMA: LAMB's, the norms' and LayerNorm's operations
 * rounded one by one, as the portable code does them */
#pragma GCC push_options
#pragma GCC target("avx2,no-fma")

/* 8 floats' squares into the lanes' double sums lo (0-3) and hi (4-7) */
static inline void sq_acc(__m256 x, __m256d *lo, __m256d *hi) {
    __m256d a = _mm256_cvtps_pd(_mm256_castps256_ps128(x)),
            b = _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1));
    *lo = _mm256_add_pd(*lo, _mm256_mul_pd(a, a));
    *hi = _mm256_add_pd(*hi, _mm256_mul_pd(b, b));
}

/* 8 floats into the lanes' double sums lo (0-3) and hi (4-7) */
static inline void sum_acc(__m256 x, __m256d *lo, __m256d *hi) {
    *lo = _mm256_add_pd(*lo, _mm256_cvtps_pd(_mm256_castps256_ps128(x)));
    *hi = _mm256_add_pd(*hi, _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)));
}

static void ln_avx2(float *y, float *mean, float *rstd, const float *x, const float *w,
                    const float *b, size_t n, float eps) {
    __m256d lo = _mm256_setzero_pd(), hi = lo;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        sum_acc(_mm256_loadu_ps(x + i), &lo, &hi);
    double s[8];
    _mm256_storeu_pd(s, lo), _mm256_storeu_pd(s + 4, hi);
    lanes_add(s, x, i, n);
    float mu = (float)(lanes_sum(s) / (double)n);
    __m256 m = _mm256_set1_ps(mu);
    lo = hi = _mm256_setzero_pd();
    for (i = 0; i + 8 <= n; i += 8)
        sq_acc(_mm256_sub_ps(_mm256_loadu_ps(x + i), m), &lo, &hi);
    _mm256_storeu_pd(s, lo), _mm256_storeu_pd(s + 4, hi);
    lanes_add_dev(s, x, mu, i, n);
    float rs = ln_rstd(s, n, eps);
    __m256 r = _mm256_set1_ps(rs);
    for (i = 0; i + 8 <= n; i += 8) {
        __m256 t = _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), m), r),
                                 _mm256_loadu_ps(w + i));
        _mm256_storeu_ps(y + i, _mm256_add_ps(t, _mm256_loadu_ps(b + i)));
    }
    ln_out(y, x, w, b, mu, rs, i, n);
    *mean = mu, *rstd = rs;
}

static void ln_bwd_avx2(float *dx, const float *dy, const float *x, const float *w, float mu,
                        float rs, size_t n) {
    __m256 m = _mm256_set1_ps(mu), r = _mm256_set1_ps(rs), av = _mm256_setzero_ps(), cv = av;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 g = _mm256_mul_ps(_mm256_loadu_ps(dy + i), _mm256_loadu_ps(w + i));
        __m256 xh = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), m), r);
        av = _mm256_add_ps(av, g);
        cv = _mm256_add_ps(cv, _mm256_mul_ps(g, xh));
    }
    float a[8], c[8];
    _mm256_storeu_ps(a, av), _mm256_storeu_ps(c, cv);
    ln_bwd_lanes(a, c, dy, x, w, mu, rs, i, n);
    float am = lanes_sumf(a) / (float)n, cm = lanes_sumf(c) / (float)n;
    __m256 A = _mm256_set1_ps(am), C = _mm256_set1_ps(cm);
    for (i = 0; i + 8 <= n; i += 8) {
        __m256 xh = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), m), r);
        __m256 g = _mm256_mul_ps(_mm256_loadu_ps(dy + i), _mm256_loadu_ps(w + i));
        __m256 d = _mm256_sub_ps(_mm256_sub_ps(g, A), _mm256_mul_ps(xh, C));
        _mm256_storeu_ps(dx + i, _mm256_mul_ps(d, r));
    }
    ln_dx(dx, dy, x, w, mu, rs, am, cm, i, n);
}

static double sumsq_avx2(const float *x, size_t n) {
    __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        sq_acc(_mm256_loadu_ps(x + i), &lo, &hi);
    double s[8];
    _mm256_storeu_pd(s, lo), _mm256_storeu_pd(s + 4, hi);
    lanes_add_sq(s, x, i, n);
    return lanes_sum(s);
}

static void lamb1_avx2(float *g, float *m, float *v, const float *p, size_t n, const LambStage *k,
                       double *sp, double *su) {
    __m256 gs = _mm256_set1_ps(k->gscale), b1 = _mm256_set1_ps(k->b1),
           c1 = _mm256_set1_ps(1 - k->b1), b2 = _mm256_set1_ps(k->b2),
           c2 = _mm256_set1_ps(1 - k->b2), i1 = _mm256_set1_ps(k->ibc1),
           i2 = _mm256_set1_ps(k->ibc2), eps = _mm256_set1_ps(k->eps), wd = _mm256_set1_ps(k->wd);
    __m256d plo = _mm256_setzero_pd(), phi = plo, ulo = plo, uhi = plo;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 gi = _mm256_mul_ps(_mm256_loadu_ps(g + i), gs), pi = _mm256_loadu_ps(p + i);
        __m256 mi = _mm256_add_ps(_mm256_mul_ps(b1, _mm256_loadu_ps(m + i)), _mm256_mul_ps(c1, gi));
        __m256 vi = _mm256_add_ps(_mm256_mul_ps(b2, _mm256_loadu_ps(v + i)),
                                  _mm256_mul_ps(_mm256_mul_ps(c2, gi), gi));
        __m256 ui =
            _mm256_add_ps(_mm256_div_ps(_mm256_mul_ps(mi, i1),
                                        _mm256_add_ps(_mm256_sqrt_ps(_mm256_mul_ps(vi, i2)), eps)),
                          _mm256_mul_ps(wd, pi));
        _mm256_storeu_ps(m + i, mi), _mm256_storeu_ps(v + i, vi), _mm256_storeu_ps(g + i, ui);
        sq_acc(pi, &plo, &phi);
        sq_acc(ui, &ulo, &uhi);
    }
    double a[8], b[8];
    _mm256_storeu_pd(a, plo), _mm256_storeu_pd(a + 4, phi);
    _mm256_storeu_pd(b, ulo), _mm256_storeu_pd(b + 4, uhi);
    lamb1_lanes(g, m, v, p, k, a, b, i, n);
    *sp = lanes_sum(a), *su = lanes_sum(b);
}

#pragma GCC pop_options
#endif

/* ---- dispatch ---- */

static struct {
    Kernel kern;
    void (*exp)(float *, const float *, size_t);
    double (*exp_sum)(float *, const float *, float, size_t);
    void (*gelu)(float *, const float *, size_t);
    void (*gelu_bwd)(float *, const float *, const float *, size_t);
    void (*dropout)(float *, const float *, size_t, uint64_t, uint32_t, uint32_t, float);
    double (*sumsq)(const float *, size_t);
    void (*ln)(float *, float *, float *, const float *, const float *, const float *, size_t,
               float);
    void (*ln_bwd)(float *, const float *, const float *, const float *, float, float, size_t);
    void (*lamb1)(float *, float *, float *, const float *, size_t, const LambStage *, double *,
                  double *);
    int avx2; /* the AVX2 matrix kernel */
} kd;
static pthread_once_t k_once = PTHREAD_ONCE_INIT;

static void k_init(void) {
    kd.kern = kern_generic, kd.exp = exp_generic, kd.exp_sum = exp_sum_generic;
    kd.gelu = gelu_generic, kd.gelu_bwd = gelu_bwd_generic;
    kd.sumsq = sumsq_generic, kd.lamb1 = lamb1_generic, kd.dropout = dropout_generic;
    kd.ln = ln_generic, kd.ln_bwd = ln_bwd_generic;
#ifdef HAVE_AVX2_PATH
    const char *e = getenv("WIKIBERT_KERNELS");
    __builtin_cpu_init();
    if (!(e && strcmp(e, "generic") == 0) && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma")) {
        kd.kern = kern_avx2, kd.avx2 = 1;
        kd.sumsq = sumsq_avx2, kd.lamb1 = lamb1_avx2, kd.dropout = dropout_avx2;
        kd.ln = ln_avx2, kd.ln_bwd = ln_bwd_avx2;
        if (HAVE_MVEC) {
            kd.exp = exp_avx2, kd.exp_sum = exp_sum_avx2;
            kd.gelu = gelu_avx2, kd.gelu_bwd = gelu_bwd_avx2;
        }
    }
#endif
}

static void k_ready(void) { pthread_once(&k_once, k_init); }

const char *cpukern_name(void) {
    k_ready();
    return kd.avx2 ? "avx2" : "generic";
}

/* ---- matrix products ---- */

/* n (<= w) rows of kc values each, row r at src + r * ld, into one w-wide
 * sliver, k-major (d[k * w + r]); rows n .. w - 1 zero */
static void pack_rows(float *d, int w, int n, const float *src, size_t ld, int kc) {
    for (int r = 0; r < w; r++) {
        const float *row = src + (size_t)r * ld;
        for (int k = 0; k < kc; k++)
            d[(size_t)k * w + r] = r < n ? row[k] : 0.0f;
    }
}

/* op(A) rows [i0, i0 + mc), k [p0, p0 + kc) into MR-row slivers, k-major;
 * with sum (transposed A only: NULL otherwise), sum[r] += op(A)[i0 + r, k]
 * in increasing k as well */
static void pack_a(float *dst, const float *A, int lda, int ta, int i0, int mc, int p0, int kc,
                   float *sum) {
    if (ta) {
        /* rows of op(A) are columns of A: eight k at a time (eight runs of
         * A, in L1 while they last), each sliver gets its eight steps as
         * one contiguous stretch (about 1.4x the speed of k by k, whose
         * stores land in every sliver per k) */
        enum { KB = 8 };
        int full = mc / MR * MR;
        for (int k0 = 0; k0 < kc; k0 += KB) {
            int kn = imin(KB, kc - k0);
            const float *src = A + (size_t)(p0 + k0) * lda + i0;
            for (int s = 0; s < full; s += MR) {
                float *d = dst + (size_t)s * kc + (size_t)k0 * MR;
                for (int k = 0; k < kn; k++)
                    memcpy(d + (size_t)k * MR, src + (size_t)k * lda + s, MR * sizeof *src);
            }
            if (full < mc)
                for (int k = 0; k < kn; k++)
                    for (int r = 0; r < MR; r++)
                        dst[(size_t)full * kc + (size_t)(k0 + k) * MR + r] =
                            full + r < mc ? src[(size_t)k * lda + full + r] : 0.0f;
            if (sum) /* while the runs are in L1 */
                for (int k = 0; k < kn; k++)
                    for (int r = 0; r < mc; r++)
                        sum[r] += src[(size_t)k * lda + r];
        }
        return;
    }
    for (int s = 0; s < mc; s += MR)
        pack_rows(dst + (size_t)s * kc, MR, imin(MR, mc - s), A + (size_t)(i0 + s) * lda + p0, lda,
                  kc);
}

/* op(B) k [p0, p0 + kc), columns [j0, j0 + nc) into NR-column slivers, k-major */
static void pack_b(float *dst, const float *B, int ldb, int tb, int p0, int kc, int j0, int nc) {
    if (tb) { /* op(B)'s columns are B's rows: 16 of them turned into a sliver */
        for (int s = 0; s < nc; s += NR) {
            int nr = imin(NR, nc - s);
            const float *src = B + (size_t)(j0 + s) * ldb + p0;
            float *d = dst + (size_t)s * kc;
#ifdef HAVE_AVX2_PATH
            if (kd.avx2 && nr == NR) {
                pack_rows16_avx2(d, src, ldb, kc);
                continue;
            }
#endif
            pack_rows(d, NR, nr, src, ldb, kc);
        }
        return;
    }
    /* B's rows in order: each k's slivers from one run of memory, the last
     * one zero-padded */
    int full = nc / NR * NR, nr = nc - full;
    for (int k = 0; k < kc; k++) {
        const float *row = B + (size_t)(p0 + k) * ldb + j0;
        for (int c = 0; c < full; c += NR)
            memcpy(dst + (size_t)c * kc + (size_t)k * NR, row + c, NR * sizeof *row);
        if (nr) {
            float *d = dst + (size_t)full * kc + (size_t)k * NR;
            memcpy(d, row + full, (size_t)nr * sizeof *row);
            memset(d + nr, 0, (size_t)(NR - nr) * sizeof *d);
        }
    }
}

/* Each thread's packing buffers, made on its first product and kept (the
 * list keeps them reachable for leak checkers; OpenMP reuses its threads). */
static _Thread_local float *tl_pa, *tl_pb;
static pthread_mutex_t ws_lock = PTHREAD_MUTEX_INITIALIZER;
static float **ws_list;
static size_t ws_n, ws_cap;

static float *ws_alloc(size_t nfloats) {
    float *p = xmalloc_huge(nfloats * sizeof(float));
    pthread_mutex_lock(&ws_lock);
    if (ws_n == ws_cap) {
        ws_cap = ws_cap ? 2 * ws_cap : 16;
        ws_list = xrealloc(ws_list, ws_cap * sizeof *ws_list);
    }
    ws_list[ws_n++] = p;
    pthread_mutex_unlock(&ws_lock);
    return p;
}

/* One task of a slice: rows [ic, ic + mc) and columns [j0, j1) of the
 * packed panel (columns jc + j of C), k slice [pc, pc + kc) against the
 * packed pb; pa is the thread's buffer for A slivers that need packing. */
static void mm_task(const float *A, int lda, int ta, const float *pb, float *C, int ldc, int load,
                    int last, MmEpilogue epi, void *ectx, int ic, int mc, int jc, int j0, int j1,
                    int pc, int kc, float *pa, float *asum) {
    /* Row-major A: its full slivers are read in place (packing them would
     * cost a pass over A per product, as much as the multiply when N is
     * small), a partial one is packed and zero-padded. Transposed A is
     * packed whole: in place, each k of a sliver would be a new page. */
    int full = ta ? 0 : mc / MR * MR;
    /* op(A)'s row sums: by the first column chunk's task of each row block */
    float *sum = asum && jc == 0 && j0 == 0 ? asum + ic : NULL;
    if (full < mc) pack_a(pa, A, lda, ta, ic + full, mc - full, pc, kc, ta ? sum : NULL);
    if (sum && !ta)
        for (int r = 0; r < mc; r++)
            for (int k = 0; k < kc; k++)
                sum[r] += A[(size_t)(ic + r) * lda + pc + k];
    const float *Ab = A + (size_t)ic * lda + pc;
    float *Cb = C + (size_t)ic * ldc + jc;
    Kernel kern = kd.kern;
    for (int jr = j0; jr < j1; jr += NR)
        for (int ir = 0; ir < mc; ir += MR)
            if (ir < full)
                kern(kc, Ab + (size_t)ir * lda, lda, 1, pb + (size_t)jr * kc,
                     Cb + (size_t)ir * ldc + jr, ldc, load, MR, imin(NR, j1 - jr));
            else
                kern(kc, pa + (size_t)(ir - full) * kc, 1, MR, pb + (size_t)jr * kc,
                     Cb + (size_t)ir * ldc + jr, ldc, load, imin(MR, mc - ir), imin(NR, j1 - jr));
    if (last && epi) epi(ectx, C, ldc, ic, ic + mc, jc + j0, jc + j1);
}

static void ws_ready(void) {
    if (!tl_pa) tl_pa = ws_alloc((size_t)MC * KC), tl_pb = ws_alloc((size_t)KC * NC);
}

/* mm, and with asum op(A)'s row sums: from 0 in increasing k into a
 * scratch row, added to asum once all of K is in */
static void mm_run(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb,
                   int tb, float *C, int ldc, int acc, MmEpilogue epi, void *ectx, int threads,
                   float *asum) {
    if (M <= 0 || N <= 0) return;
    k_ready();
    if (K <= 0) {
        if (!acc)
            for (int i = 0; i < M; i++)
                memset(C + (size_t)i * ldc, 0, (size_t)N * sizeof *C);
        if (epi) epi(ectx, C, ldc, 0, M, 0, N);
        if (asum)
            for (int i = 0; i < M; i++)
                asum[i] += 0.0f;
        return;
    }
    float *rs = asum ? xcalloc((size_t)M, sizeof *rs) : NULL;
    /* small products are not worth waking threads for */
    if ((double)M * N * K < 65536.0 || omp_in_parallel()) threads = 1;
    ws_ready();
    float *pb = tl_pb; /* the caller's packed B panel, shared by the team */
    int mb = (M + MC - 1) / MC;
    for (int jc = 0; jc < N; jc += NC) {
        int nc = imin(NC, N - jc);
        /* column chunks of a task: enough tasks to keep the threads busy */
        int nt = nc;
        while (threads > 1 && nt > NR && (long)mb * ((nc + nt - 1) / nt) < 4L * threads)
            nt = (nt / 2 + NR - 1) / NR * NR;
        int tasks = mb * ((nc + nt - 1) / nt), T = imin(threads, tasks);
        for (int pc = 0; pc < K; pc += KC) {
            int kc = imin(KC, K - pc), load = acc || pc > 0, last = pc + kc == K;
            /* B is packed PG slivers at a time (whole rows' runs of memory) */
            int ns = (nc + NR * PG - 1) / (NR * PG);
#pragma omp parallel num_threads(T) if (T > 1)
            {
#pragma omp for schedule(static)
                for (int sl = 0; sl < ns; sl++)
                    pack_b(pb + (size_t)sl * PG * NR * kc, B, ldb, tb, pc, kc, jc + sl * PG * NR,
                           imin(PG * NR, nc - sl * PG * NR));
                ws_ready();
                /* Tasks are handed out as threads come free, so a thread
                 * the machine delays does not hold the others up; every
                 * element's sum is the same whoever computes it. */
#pragma omp for schedule(dynamic)
                for (int t = 0; t < tasks; t++) {
                    int ic = t % mb * MC, j0 = t / mb * nt;
                    mm_task(A, lda, ta, pb, C, ldc, load, last, epi, ectx, ic, imin(MC, M - ic), jc,
                            j0, imin(nc, j0 + nt), pc, kc, tl_pa, rs);
                }
            }
        }
    }
    if (rs) {
        for (int i = 0; i < M; i++)
            asum[i] += rs[i];
        free(rs);
    }
}

void mm(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb, int tb,
        float *C, int ldc, int acc, MmEpilogue epi, void *ectx, int threads) {
    mm_run(M, N, K, A, lda, ta, B, ldb, tb, C, ldc, acc, epi, ectx, threads, NULL);
}

void mm_rowsum(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb,
               int tb, float *C, int ldc, int acc, float *asum, int threads) {
    mm_run(M, N, K, A, lda, ta, B, ldb, tb, C, ldc, acc, NULL, NULL, threads, asum);
}

/* ---- element-wise ---- */

void vexp(float *y, const float *x, size_t n) {
    k_ready();
    kd.exp(y, x, n);
}

double vexp_sum(float *y, const float *x, float mx, size_t n) {
    k_ready();
    return kd.exp_sum(y, x, mx, n);
}

float vmax(const float *x, size_t n, int *arg) {
    k_ready();
    float mx;
#ifdef HAVE_AVX2_PATH
    if (kd.avx2)
        mx = max_avx2(x, n);
    else
#endif
    {
        mx = x[0];
        for (size_t i = 1; i < n; i++)
            mx = x[i] > mx ? x[i] : mx;
    }
    if (arg) {
        size_t i = 0;
        while (i < n && !(x[i] == mx))
            i++;
        *arg = i < n ? (int)i : 0;
    }
    return mx;
}

void vgelu(float *h, const float *x, size_t n) {
    k_ready();
    kd.gelu(h, x, n);
}

void vgelu_bwd(float *dx, const float *dh, const float *x, size_t n) {
    k_ready();
    kd.gelu_bwd(dx, dh, x, n);
}

void vdropout(float *y, const float *x, size_t n, uint64_t key, uint32_t idx0, uint32_t thr,
              float scale) {
    k_ready();
    kd.dropout(y, x, n, key, idx0, thr, scale);
}

void vln_row(float *y, float *mean, float *rstd, const float *x, const float *w, const float *b,
             size_t n, float eps) {
    k_ready();
    kd.ln(y, mean, rstd, x, w, b, n, eps);
}

void vln_bwd_row(float *dx, const float *dy, const float *x, const float *w, float mean, float rstd,
                 size_t n) {
    k_ready();
    kd.ln_bwd(dx, dy, x, w, mean, rstd, n);
}

double vsumsq(const float *x, size_t n) {
    k_ready();
    return kd.sumsq(x, n);
}

void vlamb_stage1(float *g, float *m, float *v, const float *p, size_t n, const LambStage *k,
                  double *sp, double *su) {
    k_ready();
    kd.lamb1(g, m, v, p, n, k, sp, su);
}
