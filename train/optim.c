/* optim.c - LAMB, AdamW and the PolyWarmUp schedule (see optim.h). */
#include "train/optim.h"

#include <math.h>
#include <string.h>

#include "train/cpukern.h"

#define CHUNK 65536 /* elements per partial sum: the order of a norm never depends on threads */

void optim_config_default(OptimConfig *c, OptKind kind) {
    c->kind = kind;
    c->weight_decay = 0.01f;
    c->beta1 = 0.9f;
    c->beta2 = 0.999f;
    c->eps = 1e-6f;
    c->max_grad_norm = 1.0f;
}

void optim_init(Optim *o, const OptimConfig *c, const Bert *m) {
    memset(o, 0, sizeof *o);
    o->c = *c;
    o->n = m->nparams;
    o->m = xcalloc_huge(o->n ? o->n : 1, sizeof *o->m);
    o->v = xcalloc_huge(o->n ? o->n : 1, sizeof *o->v);
}

void optim_free(Optim *o) {
    free(o->m);
    free(o->v);
    memset(o, 0, sizeof *o);
}

/* sum of x[i]^2 over [0, n), chunk by chunk in order */
static double sumsq(const float *x, size_t n, double *part) {
    size_t nc = (n + CHUNK - 1) / CHUNK;
#pragma omp parallel for schedule(static)
    for (size_t c = 0; c < nc; c++) {
        size_t a = c * CHUNK, b = a + CHUNK < n ? a + CHUNK : n;
        part[c] = vsumsq(x + a, b - a);
    }
    double s = 0;
    for (size_t c = 0; c < nc; c++)
        s += part[c];
    return s;
}

void optim_step(Optim *o, Bert *m, float lr) {
    const OptimConfig *c = &o->c;
    o->step++;
    double *part = xmalloc((2 * (m->nparams / CHUNK) + m->ntensors + 2) * sizeof *part);
    double norm = sqrt(sumsq(m->grads, m->nparams, part));
    o->last_grad_norm = norm;
    float gscale = 1.0f;
    if (c->max_grad_norm > 0) {
        if (c->kind == OPT_LAMB)
            gscale = (float)(1.0 / fmax(norm / c->max_grad_norm, 1.0));
        else if (c->max_grad_norm / (norm + 1e-6) < 1)
            gscale = (float)(c->max_grad_norm / (norm + 1e-6));
    }
    double bc1 = 1.0 - pow(c->beta1, (double)o->step), bc2 = 1.0 - pow(c->beta2, (double)o->step);
    float b1 = c->beta1, b2 = c->beta2, eps = c->eps;
    for (int t = 0; t < m->ntensors; t++) {
        const BertTensor *bt = bert_tensor(m, t);
        float *p = m->params + bt->off, *g = m->grads + bt->off, *mm = o->m + bt->off,
              *vv = o->v + bt->off;
        size_t n = bt->n;
        float wd = bt->decay ? c->weight_decay : 0.0f;
        if (c->kind == OPT_ADAMW) {
            float decay = 1.0f - lr * wd, step = (float)(lr / bc1), sbc2 = (float)sqrt(bc2);
#pragma omp parallel for schedule(static)
            for (size_t i = 0; i < n; i++) {
                float gi = g[i] * gscale;
                p[i] *= decay;
                mm[i] = b1 * mm[i] + (1 - b1) * gi;
                vv[i] = b2 * vv[i] + (1 - b2) * gi * gi;
                p[i] -= step * mm[i] / (sqrtf(vv[i]) / sbc2 + eps);
            }
            continue;
        }
        /* LAMB stage 1: the update into g, and with weight decay the
         * sums of squares of p and of the update, chunk by chunk as sumsq
         * adds them, in the same pass */
        LambStage k = {gscale, b1, b2, (float)(1.0 / bc1), (float)(1.0 / bc2), eps, wd};
        size_t nc = (n + CHUNK - 1) / CHUNK;
        double *pp = part, *up = part + nc;
#pragma omp parallel for schedule(static)
        for (size_t ch = 0; ch < nc; ch++) {
            size_t a = ch * CHUNK, b = a + CHUNK < n ? a + CHUNK : n;
            vlamb_stage1(g + a, mm + a, vv + a, p + a, b - a, &k, &pp[ch], &up[ch]);
        }
        /* stage 2: trust ratio */
        float ratio = lr;
        if (wd != 0) {
            double ps = 0, us = 0;
            for (size_t ch = 0; ch < nc; ch++)
                ps += pp[ch], us += up[ch];
            double pn = sqrt(ps), un = sqrt(us);
            if (pn != 0 && un != 0) ratio = (float)(lr * (pn / un));
        }
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++)
            p[i] -= ratio * g[i];
    }
    free(part);
}

float poly_warmup_lr(int64_t step, float base_lr, float warmup, int64_t total_steps) {
    if (total_steps <= 0) return base_lr;
    double progress = (double)step / (double)total_steps;
    if (progress < warmup) return (float)(base_lr * progress / warmup);
    double rest = 1.0 - progress;
    return rest > 0 ? (float)(base_lr * pow(rest, 0.5)) : 0.0f;
}
