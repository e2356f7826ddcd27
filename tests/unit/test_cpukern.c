/* test_cpukern.c - the CPU trainer's matrix product (train/cpukern.c)
 * against a scalar product written from cpukern.h's contract alone: each
 * element a chain of multiply-adds in increasing k per 256-deep slice,
 * the slices added to C in order (fused multiply-adds with the AVX2
 * kernel, a multiply then an add with the portable one). Checked bit for
 * bit: every transpose of A and B, strides wider than the rows, edge tiles
 * (rows not a multiple of 6, columns not a multiple of 16), inner
 * dimensions over one slice, more columns than one packed panel,
 * accumulation into C, 1 to 3 threads, and the epilogue called once on
 * every element; mm_rowsum's row sums of op(A) in their documented
 * order. Also the sums of squares and LAMB's first stage against scalar
 * code in their documented order, bit for bit, at lengths around the
 * eight lanes, and dropout against dropout.h's scalar test of each element
 * (in place, and the mask alone), and LayerNorm's rows forward and
 * backward against scalar code in the same order (and against a finite
 * difference). The program runs itself again with the portable kernels
 * (WIKIBERT_KERNELS=generic), so both sets are held to the same bits.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/test.h"
#include "train/cpukern.h"
#include "train/dropout.h"

#define SLICE 256

static uint32_t rng = 12345;
static float frand(void) {
    rng = rng * 1664525u + 1013904223u;
    return (float)(rng >> 8) / 16777216.0f - 0.5f; /* 24 random bits */
}

/* the contract's sums: C = (acc ? C : 0) + op(A) op(B), slice by slice */
static void ref_mm(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb,
                   int tb, float *C, int ldc, int acc, int fused) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float c = acc ? C[(size_t)i * ldc + j] : 0.0f;
            for (int p = 0; p < K; p += SLICE) {
                float s = 0.0f;
                for (int k = p; k < K && k < p + SLICE; k++) {
                    float a = ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];
                    float b = tb ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j];
                    if (fused) {
                        s = fmaf(a, b, s);
                    } else {
                        volatile float m = a * b; /* rounded before the add */
                        s = s + m;
                    }
                }
                c = p == 0 && !acc ? s : c + s;
            }
            C[(size_t)i * ldc + j] = c;
        }
}

typedef struct Seen {
    int *count;
    int ldc;
} Seen;

/* counts the epilogue's visits per element (blocks come from any thread,
 * but never overlap) */
static void count_epi(void *ctx, float *C, int ldc, int i0, int i1, int j0, int j1) {
    Seen *s = ctx;
    (void)C;
    (void)ldc;
    for (int i = i0; i < i1; i++)
        for (int j = j0; j < j1; j++)
            s->count[(size_t)i * s->ldc + j]++;
}

static void check(int M, int N, int K, int ta, int tb, int acc, int pad) {
    int lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
    size_t na = (size_t)(ta ? K : M) * lda, nb = (size_t)(tb ? N : K) * ldb, nc = (size_t)M * ldc;
    float *A = malloc(na * sizeof *A), *B = malloc(nb * sizeof *B);
    float *C0 = malloc(nc * sizeof *C0), *want = malloc(nc * sizeof *want);
    float *got = malloc(nc * sizeof *got);
    int *count = calloc(nc, sizeof *count);
    for (size_t i = 0; i < na; i++)
        A[i] = frand();
    for (size_t i = 0; i < nb; i++)
        B[i] = frand();
    for (size_t i = 0; i < nc; i++)
        C0[i] = frand();
    memcpy(want, C0, nc * sizeof *want);
    ref_mm(M, N, K, A, lda, ta, B, ldb, tb, want, ldc, acc, strcmp(cpukern_name(), "avx2") == 0);
    char what[160];
    for (int threads = 1; threads <= 3; threads++) {
        memcpy(got, C0, nc * sizeof *got);
        memset(count, 0, nc * sizeof *count);
        Seen seen = {count, ldc};
        mm(M, N, K, A, lda, ta, B, ldb, tb, got, ldc, acc, count_epi, &seen, threads);
        int same = 1, once = 1, untouched = 1;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < ldc; j++) {
                size_t e = (size_t)i * ldc + j;
                if (j < N) {
                    same &= memcmp(&got[e], &want[e], sizeof *got) == 0;
                    once &= count[e] == 1;
                } else {
                    untouched &= memcmp(&got[e], &C0[e], sizeof *got) == 0 && count[e] == 0;
                }
            }
        snprintf(what, sizeof what,
                 "%dx%dx%d ta %d tb %d acc %d pad %d, %d threads: the bits of the scalar sums", M,
                 N, K, ta, tb, acc, pad, threads);
        test_cond(what, same);
        snprintf(what, sizeof what,
                 "%dx%dx%d ta %d tb %d, %d threads: the epilogue once per element", M, N, K, ta, tb,
                 threads);
        test_cond(what, once);
        snprintf(what, sizeof what, "%dx%dx%d ta %d tb %d, %d threads: the stride's gap left alone",
                 M, N, K, ta, tb, threads);
        test_cond(what, untouched);
    }
    /* mm_rowsum: the same C, and op(A)'s row sums (from 0 in increasing k,
     * then added) once, with more row blocks, slices or panels than one */
    float *s0 = malloc((size_t)M * sizeof *s0), *swant = malloc((size_t)M * sizeof *swant);
    float *sgot = malloc((size_t)M * sizeof *sgot);
    for (int i = 0; i < M; i++) {
        float t = 0;
        for (int k = 0; k < K; k++)
            t += ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];
        s0[i] = frand();
        swant[i] = s0[i] + t;
    }
    for (int threads = 1; threads <= 3; threads++) {
        memcpy(got, C0, nc * sizeof *got);
        memcpy(sgot, s0, (size_t)M * sizeof *sgot);
        mm_rowsum(M, N, K, A, lda, ta, B, ldb, tb, got, ldc, acc, sgot, threads);
        int same = 1;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++)
                same &=
                    memcmp(&got[(size_t)i * ldc + j], &want[(size_t)i * ldc + j], sizeof *got) == 0;
        snprintf(what, sizeof what,
                 "mm_rowsum %dx%dx%d ta %d tb %d, %d threads: the product's bits", M, N, K, ta, tb,
                 threads);
        test_cond(what, same);
        snprintf(what, sizeof what,
                 "mm_rowsum %dx%dx%d ta %d tb %d, %d threads: op(A)'s row sums, bit for bit", M, N,
                 K, ta, tb, threads);
        test_cond(what, memcmp(sgot, swant, (size_t)M * sizeof *sgot) == 0);
    }
    free(s0), free(swant), free(sgot);
    free(A), free(B), free(C0), free(want), free(got), free(count);
}

/* the contract's order: term i into lane i % 8, lanes added pairwise */
static double ref_lanes(const double s[8]) {
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

static void check_vectors(size_t n) {
    float *x = malloc((n + 1) * sizeof *x), *g = malloc((n + 1) * sizeof *g);
    float *m = malloc((n + 1) * sizeof *m), *v = malloc((n + 1) * sizeof *v);
    float *g2 = malloc((n + 1) * sizeof *g2), *m2 = malloc((n + 1) * sizeof *m2);
    float *v2 = malloc((n + 1) * sizeof *v2);
    for (size_t i = 0; i < n; i++) {
        x[i] = frand() * 3.0f, g[i] = frand() * 0.01f, m[i] = frand() * 1e-3f;
        v[i] = (frand() + 0.5f) * 1e-5f;
    }
    double lanes[8] = {0};
    for (size_t i = 0; i < n; i++)
        lanes[i % 8] += (double)x[i] * x[i];
    double want = ref_lanes(lanes), got = vsumsq(x, n);
    char what[96];
    snprintf(what, sizeof what, "vsumsq of %zu values: the bits of the lanes' order", n);
    test_cond(what, memcmp(&got, &want, sizeof got) == 0);

    LambStage k = {0.7f, 0.9f, 0.999f, 1.0f / 0.271f, 1.0f / 0.0039f, 1e-6f, n % 2 ? 0.01f : 0.0f};
    memcpy(g2, g, n * sizeof *g), memcpy(m2, m, n * sizeof *m), memcpy(v2, v, n * sizeof *v);
    double pl[8] = {0}, ul[8] = {0};
    for (size_t i = 0; i < n; i++) {
        volatile float gi = g2[i] * k.gscale, t1 = k.b1 * m2[i], t2 = (1 - k.b1) * gi;
        m2[i] = t1 + t2;
        volatile float t3 = k.b2 * v2[i], t4 = (1 - k.b2) * gi, t5 = t4 * gi;
        v2[i] = t3 + t5;
        volatile float q = m2[i] * k.ibc1, r = sqrtf(v2[i] * k.ibc2) + k.eps, w = k.wd * x[i];
        volatile float d = q / r;
        g2[i] = d + w;
        pl[i % 8] += (double)x[i] * x[i];
        ul[i % 8] += (double)g2[i] * g2[i];
    }
    double sp, su, wp = ref_lanes(pl), wu = ref_lanes(ul);
    vlamb_stage1(g, m, v, x, n, &k, &sp, &su);
    snprintf(what, sizeof what, "vlamb_stage1 of %zu values: m, v and the update, bit for bit", n);
    test_cond(what, !memcmp(g, g2, n * sizeof *g) && !memcmp(m, m2, n * sizeof *m) &&
                        !memcmp(v, v2, n * sizeof *v));
    snprintf(what, sizeof what, "vlamb_stage1 of %zu values: both sums in the lanes' order", n);
    test_cond(what, !memcmp(&sp, &wp, sizeof sp) && !memcmp(&su, &wu, sizeof su));
    free(x), free(g), free(m), free(v), free(g2), free(m2), free(v2);
}

static void check_dropout(size_t n, uint64_t key, uint32_t idx0, float p) {
    float *x = calloc(n + 1, sizeof *x), *y = calloc(n + 1, sizeof *y);
    float *want = malloc((n + 1) * sizeof *want), *mask = malloc((n + 1) * sizeof *mask);
    uint32_t thr = dropout_threshold(p);
    float scale = 1.0f / (1.0f - p);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        x[i] = frand();
    int mask_ok = 1;
    vdropout(y, x, n, key, idx0, thr, scale);
    vdropout(mask, NULL, n, key, idx0, thr, scale);
    for (size_t i = 0; i < n; i++) {
        int k = dropout_keep(key, idx0 + (uint32_t)i, thr);
        want[i] = k ? x[i] * scale : 0.0f;
        mask_ok &= mask[i] == (k ? scale : 0.0f);
        kept += k;
    }
    char what[128];
    snprintf(what, sizeof what,
             "vdropout of %zu values from %u, p %.2f: dropout_keep's elements, scaled", n, idx0, p);
    test_cond(what, !memcmp(y, want, n * sizeof *y));
    vdropout(x, x, n, key, idx0, thr, scale);
    snprintf(what, sizeof what, "vdropout of %zu values in place, p %.2f", n, p);
    test_cond(what, !memcmp(x, want, n * sizeof *x));
    snprintf(what, sizeof what, "vdropout's mask of %zu values, p %.2f", n, p);
    test_cond(what, mask_ok);
    if (n >= 10000 && p > 0) {
        snprintf(what, sizeof what, "vdropout p %.2f keeps about 1 - p (%zu of %zu)", p, kept, n);
        test_cond(what, fabs((double)kept / n - (1 - p)) < 0.02);
    }
    free(x), free(y), free(want), free(mask);
}

static void check_layernorm(size_t n) {
    float *x = calloc(n, sizeof *x), *w = calloc(n, sizeof *w), *b = calloc(n, sizeof *b);
    float *y = calloc(n, sizeof *y), *want = calloc(n, sizeof *want), *dy = calloc(n, sizeof *dy);
    float *dx = calloc(n, sizeof *dx), *dwant = calloc(n, sizeof *dwant);
    for (size_t i = 0; i < n; i++)
        x[i] = 3.0f + frand() * 2.0f, w[i] = 1.0f + frand(), b[i] = frand(), dy[i] = frand();
    /* the contract, term by term */
    double s[8] = {0}, q[8] = {0};
    for (size_t i = 0; i < n; i++)
        s[i % 8] += x[i];
    float mu = (float)(ref_lanes(s) / (double)n), eps = 1e-12f;
    for (size_t i = 0; i < n; i++)
        q[i % 8] += (double)(x[i] - mu) * (x[i] - mu);
    float rs = 1.0f / sqrtf((float)(ref_lanes(q) / (double)n) + eps);
    for (size_t i = 0; i < n; i++) {
        volatile float t = (x[i] - mu) * rs, u = t * w[i];
        want[i] = u + b[i];
    }
    float mean, rstd;
    vln_row(y, &mean, &rstd, x, w, b, n, eps);
    char what[96];
    snprintf(what, sizeof what, "vln_row of %zu values: mean, rstd and output bit for bit", n);
    test_cond(what, mean == mu && rstd == rs && !memcmp(y, want, n * sizeof *y));

    float a[8] = {0}, c[8] = {0};
    for (size_t i = 0; i < n; i++) {
        volatile float g = dy[i] * w[i], xh = (x[i] - mu) * rs, gx = g * xh;
        a[i % 8] += g;
        c[i % 8] += gx;
    }
    float am = (((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))) / (float)n;
    float cm = (((c[0] + c[1]) + (c[2] + c[3])) + ((c[4] + c[5]) + (c[6] + c[7]))) / (float)n;
    for (size_t i = 0; i < n; i++) {
        volatile float xh = (x[i] - mu) * rs, g = dy[i] * w[i], d1 = g - am, d2 = xh * cm;
        volatile float d = d1 - d2;
        dwant[i] = d * rs;
    }
    vln_bwd_row(dx, dy, x, w, mu, rs, n);
    snprintf(what, sizeof what, "vln_bwd_row of %zu values: bit for bit", n);
    test_cond(what, !memcmp(dx, dwant, n * sizeof *dx));

    /* and it is the gradient: sum dy y against x[j] +- h, in double */
    if (n >= 8) {
        size_t j = n / 3;
        double h = 1e-3, f[2];
        for (int sgn = 0; sgn < 2; sgn++) {
            float old = x[j];
            x[j] = old + (float)(sgn ? -h : h);
            vln_row(y, &mean, &rstd, x, w, b, n, eps);
            f[sgn] = 0;
            for (size_t i = 0; i < n; i++)
                f[sgn] += (double)dy[i] * y[i];
            x[j] = old;
        }
        double fd = (f[0] - f[1]) / (2 * h);
        snprintf(what, sizeof what, "vln_bwd_row of %zu values: a finite difference's slope", n);
        /* y's float rounding moves f by about 1e-5 at n 1024: 5e-3 in the slope */
        test_cond(what, fabs(fd - dx[j]) <= 2e-2 * fabs(fd) + 1e-2);
    }
    free(x), free(w), free(b), free(y), free(want), free(dy), free(dx), free(dwant);
}

int main(int argc, char **argv) {
    printf("kernels: %s\n", cpukern_name());
    /* shapes: whole tiles; edges in both directions; K over one and two
     * slices; a long K (the MLM decoder's gradient); more columns than a
     * panel (2048); one row, one column */
    static const int shapes[][3] = {
        {12, 32, 64},  {13, 37, 5},  {7, 16, 300}, {97, 50, 513},  {1, 1, 1},
        {6, 2100, 40}, {200, 17, 1}, {5, 48, 257}, {31, 64, 1030},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                check(shapes[s][0], shapes[s][1], shapes[s][2], ta, tb, (int)(s + ta + tb) % 2,
                      (int)s % 3 == 1 ? 3 : 0);
    /* accumulation both ways on one shape with padded strides */
    check(19, 40, 270, 0, 1, 0, 5);
    check(19, 40, 270, 1, 0, 1, 5);

    /* K == 0: C is zeroed (or kept when accumulating) */
    float c[6] = {1, 2, 3, 4, 5, 6};
    mm(2, 3, 0, NULL, 0, 0, NULL, 0, 0, c, 3, 1, NULL, NULL, 1);
    test_cond("K 0 with acc keeps C", c[0] == 1 && c[5] == 6);
    mm(2, 3, 0, NULL, 0, 0, NULL, 0, 0, c, 3, 0, NULL, NULL, 1);
    test_cond("K 0 without acc zeroes C", c[0] == 0 && c[5] == 0);
    float rs[2] = {1.5f, -2};
    c[0] = 7;
    mm_rowsum(2, 3, 0, NULL, 0, 1, NULL, 0, 0, c, 3, 1, rs, 1);
    test_cond("mm_rowsum with K 0 keeps the sums and C", rs[0] == 1.5f && rs[1] == -2 && c[0] == 7);

    static const size_t lens[] = {0, 1, 7, 8, 9, 15, 16, 17, 64, 1001, 65536};
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
        check_vectors(lens[i]);
    static const float ps[] = {0.0f, 0.1f, 0.5f};
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
        for (size_t j = 0; j < sizeof ps / sizeof *ps; j++)
            check_dropout(lens[i], 0x9e3779b97f4a7c15ULL * (i + 1), (uint32_t)(i * 1000003u),
                          ps[j]);
    static const size_t lnlens[] = {1, 7, 8, 13, 32, 128, 257, 768, 1024};
    for (size_t i = 0; i < sizeof lnlens / sizeof *lnlens; i++)
        check_layernorm(lnlens[i]);
    /* the element index wraps at 2^32, as dropout_keep's does */
    check_dropout(40, 12345, 0xfffffff0u, 0.1f);

    /* the same checks with the portable kernels, in a process of their own */
    if (argc == 1 && !getenv("WIKIBERT_KERNELS") && strcmp(cpukern_name(), "generic") != 0) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            setenv("WIKIBERT_KERNELS", "generic", 1);
            if (!freopen("/dev/null", "w", stdout)) _exit(3);
            execv(argv[0], argv);
            _exit(3);
        }
        int st = 0;
        test_cond("the portable kernels pass the same checks",
                  pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    return test_report();
}
