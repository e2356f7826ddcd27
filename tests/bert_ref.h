/* bert_ref.h - the reference file of train/ref/make_reference.py
 * (tests/data/bert_tiny_ref.bin) and the comparisons the BERT tests make
 * against it; shared by tests/unit/test_bert.c (the C model) and
 * tests/gpu/check_gpu.c (the CUDA one). Static functions: include once.
 */
#ifndef WB_BERT_REF_H
#define WB_BERT_REF_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/bert.h"

typedef struct Ref {
    int V, H, L, A, I, P, T, B, S, M, nparams, nmask;
    float eps;
    float *params, *mlm_logits, *nsp_logits, losses[3], *grads;
    int32_t *ids, *seg, *mask, *mpos, *mids, *nsp;
    float hyp[7];
    int total_steps;
    float lr[2];
    float *lamb[2], *adamw[2];
    float dropout_p[2];   /* hidden, attention */
    uint64_t dropout_key; /* pass key */
    float dropout_losses[3], *dropout_grads;
} Ref;

static int rd(FILE *f, void *p, size_t n) { return fread(p, 1, n, f) == n ? 0 : -1; }

static float *rdf(FILE *f, size_t n, int *bad) {
    float *p = malloc(n * sizeof *p + 1);
    *bad |= rd(f, p, n * sizeof *p);
    return p;
}

static int32_t *rdi(FILE *f, size_t n, int *bad) {
    int32_t *p = malloc(n * sizeof *p + 1);
    *bad |= rd(f, p, n * sizeof *p);
    return p;
}

static int load_ref(Ref *r, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char magic[8];
    int32_t h[12];
    int bad =
        rd(f, magic, 8) || memcmp(magic, "WBBERT1", 8) || rd(f, h, sizeof h) || rd(f, &r->eps, 4);
    if (bad) {
        fclose(f);
        return -1;
    }
    r->V = h[0], r->H = h[1], r->L = h[2], r->A = h[3], r->I = h[4], r->P = h[5], r->T = h[6];
    r->B = h[7], r->S = h[8], r->M = h[9], r->nparams = h[10], r->nmask = h[11];
    size_t np = (size_t)r->nparams, BS = (size_t)r->B * r->S, BM = (size_t)r->B * r->M;
    r->params = rdf(f, np, &bad);
    r->ids = rdi(f, BS, &bad), r->seg = rdi(f, BS, &bad), r->mask = rdi(f, BS, &bad);
    r->mpos = rdi(f, BM, &bad), r->mids = rdi(f, BM, &bad), r->nsp = rdi(f, (size_t)r->B, &bad);
    r->mlm_logits = rdf(f, (size_t)r->nmask * r->V, &bad);
    r->nsp_logits = rdf(f, (size_t)r->B * 2, &bad);
    bad |= rd(f, r->losses, sizeof r->losses);
    r->grads = rdf(f, np, &bad);
    bad |= rd(f, r->hyp, sizeof r->hyp) || rd(f, &r->total_steps, 4) || rd(f, r->lr, sizeof r->lr);
    for (int i = 0; i < 2; i++)
        r->lamb[i] = rdf(f, np, &bad);
    for (int i = 0; i < 2; i++)
        r->adamw[i] = rdf(f, np, &bad);
    bad |= rd(f, r->dropout_p, sizeof r->dropout_p) || rd(f, &r->dropout_key, 8) ||
           rd(f, r->dropout_losses, sizeof r->dropout_losses);
    r->dropout_grads = rdf(f, np, &bad);
    char extra;
    bad |= fread(&extra, 1, 1, f) != 0;
    fclose(f);
    return bad ? -1 : 0;
}

static void free_ref(Ref *r) {
    free(r->params), free(r->mlm_logits), free(r->nsp_logits), free(r->grads);
    free(r->ids), free(r->seg), free(r->mask), free(r->mpos), free(r->mids), free(r->nsp);
    for (int i = 0; i < 2; i++)
        free(r->lamb[i]), free(r->adamw[i]);
    free(r->dropout_grads);
}

/* max |a - b| / max |b| over n values */
static double rel_err(const float *a, const float *b, size_t n) {
    double d = 0, mx = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]);
        if (e > d || e != e) d = e != e ? INFINITY : e;
        if (fabs(b[i]) > mx) mx = fabs(b[i]);
    }
    return mx > 0 ? d / mx : d;
}

/* every tensor of x against ref within tol, relative to the tensor's
 * largest value or, for tensors whose values are all tiny, to 1e-3 of the
 * largest value of all (the key biases' gradients are exactly 0 in exact
 * arithmetic: a constant added to every score of a softmax row changes
 * nothing, so both sides hold only rounding noise); prints the worst */
static int tensors_close(const Bert *m, const float *x, const float *ref, double tol,
                         const char *what) {
    double worst = 0, all = 0;
    const char *wn = "";
    for (size_t i = 0; i < m->nparams; i++)
        all = fmax(all, fabs(ref[i]));
    for (int t = 0; t < m->ntensors; t++) {
        const BertTensor *bt = bert_tensor(m, t);
        double d = 0, mx = 1e-3 * all;
        for (size_t i = 0; i < bt->n; i++) {
            double e = fabs((double)x[bt->off + i] - ref[bt->off + i]);
            d = e > d || e != e ? (e != e ? INFINITY : e) : d;
            mx = fmax(mx, fabs(ref[bt->off + i]));
        }
        double e = mx > 0 ? d / mx : d;
        if (e > worst || e != e) worst = e, wn = bt->name;
    }
    printf("  %s: worst tensor %s, relative error %.2e\n", what, wn, worst);
    return worst <= tol;
}

static BertBatch batch_of(const Ref *r) {
    BertBatch b = {r->B, r->S, r->M, r->ids, r->seg, r->mask, r->mpos, r->mids, r->nsp};
    return b;
}

#endif
