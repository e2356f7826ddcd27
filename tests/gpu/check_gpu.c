/* check_gpu.c - train_bert's CUDA backend against the PyTorch reference of
 * tests/data/bert_tiny_ref.bin (the file test_bert.c checks the C model
 * with), on this machine's GPU; run by `make gpu-check`.
 *
 *   check_gpu [REF]                 the reference checks, fp32 and bf16
 *   check_gpu runs CONFIG A B LR WARMUP STEPS
 *       the checkpoints of train_bert (output directory A) against those
 *       of train_bert_cpu (B) after STEPS LAMB steps of the schedule LR,
 *       WARMUP: gradients (through the moments) at every step whose
 *       checkpoint both hold and the weights at the last, within the bounds
 *       tests/gpu/compare_cpu.sh derives; prints the worst of each
 *
 * fp32 (--precision fp32: pedantic float32 cuBLAS): losses, every gradient
 * (without and with dropout: the masks are dropout.h's on both sides), the
 * weights after two LAMB and two AdamW steps, each within 1e-4 of the
 * reference as test_bert.c requires of the C model. bf16: losses within
 * 1e-2, and after each optimizer step the loss at the weights (computed by
 * the C model) within 1e-2 of the loss at the reference's weights;
 * gradients and weight differences are printed. Both: gradient accumulation (two half-scaled
 * micro-batches = one) and repeatability (the same gradients bit for bit when run again). Then fp32
 * gradients against the C model's on a batch of long embedding lists.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"
#include "tests/bert_ref.h"
#include "train/ckpt.h"
#include "train/cuda/gpu.h"
#include "train/optim.h"

#ifndef TEST_DATA
#define TEST_DATA "tests/data"
#endif

/* the loss of the C model (bert.c, float32) with m's config at params */
static float loss_at(const Bert *m, const float *params, const BertBatch *b) {
    Bert c;
    Err err;
    BertLoss l = {0};
    if (bert_create(&c, &m->c, &err) == 0) {
        memcpy(c.params, params, c.nparams * sizeof(float));
        bert_forward(&c, b, &l, NULL, NULL);
        bert_free(&c);
    }
    return l.total;
}

/* a single process's options: one micro-batch per step, bf16 or fp32,
 * the fused or the matmul attention */
static TrainOpts one_process(int bf16, int attn_matmul) {
    TrainOpts o = {0};
    o.accum = 1, o.bf16 = bf16, o.attn_matmul = attn_matmul, o.rank = -1, o.world = -1,
    o.local_rank = -1;
    return o;
}

static void check_precision(const Ref *r, int bf16) {
    const char *pn = bf16 ? "bf16" : "fp32";
    BertConfig c = {
        r->V, r->H, r->L, r->A, r->I, r->P, r->T, r->eps, 0.02f, r->dropout_p[0], r->dropout_p[1],
        0};
    Bert m;
    Err err;
    if (bert_create(&m, &c, &err)) {
        test_cond("create the tiny model", 0);
        return;
    }
    OptimConfig oc;
    optim_config_default(&oc, OPT_LAMB);
    Optim opt;
    optim_init(&opt, &oc, &m);
    TrainOpts o = one_process(bf16, 0);
    TrainBackend be;
    char what[160];
    if (gpu_backend_open(&be, &m, &opt, &o, &err)) {
        printf("  %s\n", err.msg);
        test_cond("open the CUDA backend", 0);
        optim_free(&opt), bert_free(&m);
        return;
    }
    printf("  %s\n", be.name);
    memcpy(m.params, r->params, m.nparams * sizeof(float));
    be.from_host(be.ctx);
    BertBatch b = batch_of(r);
    double ltol = bf16 ? 1e-2 : 1e-4, gtol = bf16 ? 1e30 : 1e-4, wtol = 1e-4;

    /* forward + backward, no dropout */
    TrainStats st;
    be.zero_grad(be.ctx);
    be.micro_step(be.ctx, &b, 1.0f, 0, 0);
    be.opt_step(be.ctx, 0.0f); /* lr 0: weights stay; gives the gradient norm */
    be.stats(be.ctx, &st);
    printf("  %s: loss %.7f (ref %.7f), mlm %.7f (%.7f), nsp %.7f (%.7f)\n", pn, st.loss,
           r->losses[0], st.mlm, r->losses[1], st.nsp, r->losses[2]);
    snprintf(what, sizeof what, "%s: losses within %g", pn, ltol);
    test_cond(what, fabs(st.loss - r->losses[0]) <= ltol * r->losses[0] &&
                        fabs(st.mlm - r->losses[1]) <= ltol * r->losses[1] &&
                        fabs(st.nsp - r->losses[2]) <= ltol * r->losses[2]);
    test_cond("masked tokens and rows counted", st.masked == r->nmask && st.rows == r->B);

    be.zero_grad(be.ctx);
    be.micro_step(be.ctx, &b, 1.0f, 0, 0);
    gpu_backend_grads_to_host(be.ctx);
    snprintf(what, sizeof what, "%s gradients", pn);
    int ok = tensors_close(&m, m.grads, r->grads, gtol, what);
    if (!bf16) test_cond("fp32: every gradient within 1e-4", ok);
    float *g1 = malloc(m.nparams * sizeof *g1);
    memcpy(g1, m.grads, m.nparams * sizeof *g1);

    /* repeatability and accumulation */
    be.zero_grad(be.ctx);
    be.micro_step(be.ctx, &b, 1.0f, 0, 0);
    gpu_backend_grads_to_host(be.ctx);
    snprintf(what, sizeof what, "%s: the same gradients bit for bit when run again", pn);
    test_cond(what, memcmp(g1, m.grads, m.nparams * sizeof *g1) == 0);
    o.accum = 2;
    TrainBackend be2;
    if (gpu_backend_open(&be2, &m, &opt, &o, &err) == 0) {
        be2.from_host(be2.ctx);
        be2.zero_grad(be2.ctx);
        be2.micro_step(be2.ctx, &b, 0.5f, 0, 0);
        be2.micro_step(be2.ctx, &b, 0.5f, 0, 0);
        gpu_backend_grads_to_host(be2.ctx);
        double e = rel_err(m.grads, g1, m.nparams);
        printf("  %s: accumulation 2 x 1/2 vs 1: %.2e\n", pn, e);
        snprintf(what, sizeof what, "%s: gradient accumulation (2 x 1/2)", pn);
        test_cond(what, e <= (bf16 ? 1e-2 : 1e-6));
        be2.close(be2.ctx);
    }

    /* dropout: the reference's pass key, the same masks */
    be.zero_grad(be.ctx);
    be.micro_step(be.ctx, &b, 1.0f, 1, r->dropout_key);
    be.opt_step(be.ctx, 0.0f);
    be.stats(be.ctx, &st);
    printf("  %s dropout: loss %.7f (ref %.7f)\n", pn, st.loss, r->dropout_losses[0]);
    snprintf(what, sizeof what, "%s: loss with dropout within %g", pn, ltol);
    test_cond(what, fabs(st.loss - r->dropout_losses[0]) <= ltol * r->dropout_losses[0]);
    be.zero_grad(be.ctx);
    be.micro_step(be.ctx, &b, 1.0f, 1, r->dropout_key);
    gpu_backend_grads_to_host(be.ctx);
    snprintf(what, sizeof what, "%s gradients, dropout", pn);
    ok = tensors_close(&m, m.grads, r->dropout_grads, gtol, what);
    if (!bf16) test_cond("fp32: every gradient with dropout within 1e-4", ok);
    be.close(be.ctx);
    optim_free(&opt);

    /* two optimizer steps each */
    for (int kind = 0; kind < 2; kind++) {
        optim_config_default(&oc, kind == 0 ? OPT_LAMB : OPT_ADAMW);
        oc.weight_decay = r->hyp[1], oc.beta1 = r->hyp[2], oc.beta2 = r->hyp[3], oc.eps = r->hyp[4];
        oc.max_grad_norm = r->hyp[5];
        optim_init(&opt, &oc, &m);
        memcpy(m.params, r->params, m.nparams * sizeof(float));
        o.accum = 1;
        if (gpu_backend_open(&be, &m, &opt, &o, &err)) {
            test_cond("open the CUDA backend", 0);
            break;
        }
        be.from_host(be.ctx);
        for (int s = 0; s < 2; s++) {
            be.zero_grad(be.ctx);
            be.micro_step(be.ctx, &b, 1.0f, 0, 0);
            be.opt_step(be.ctx, poly_warmup_lr(s + 1, r->hyp[0], r->hyp[6], r->total_steps));
            be.to_host(be.ctx);
            const float *want = kind == 0 ? r->lamb[s] : r->adamw[s];
            snprintf(what, sizeof what, "%s %s step %d weights", pn, kind == 0 ? "LAMB" : "AdamW",
                     s + 1);
            int close = tensors_close(&m, m.params, want, wtol, what);
            if (!bf16) {
                test_cond(what, close);
                continue;
            }
            /* bf16: tensors whose gradient is rounding noise (the key biases')
             * move at random under Adam's normalisation, so the check is what
             * the weights do: the loss at them (the C model, float32) */
            float lg = loss_at(&m, m.params, &b), lr_ = loss_at(&m, want, &b);
            printf("  %s: loss at the weights %.6f (at the reference's %.6f)\n", what, lg, lr_);
            snprintf(what, sizeof what, "bf16 %s step %d: the loss at the weights within 1e-2",
                     kind == 0 ? "LAMB" : "AdamW", s + 1);
            test_cond(what, fabsf(lg - lr_) <= 1e-2f * lr_);
        }
        be.close(be.ctx);
        optim_free(&opt);
    }
    free(g1);
    bert_free(&m);
}

/* the C model's gradients of m at its weights on bt (dropout masks from
 * key when drop), malloc'd */
static float *model_grads(Bert *m, const BertBatch *bt, int drop, uint64_t key) {
    BertLoss l;
    bert_zero_grad(m);
    m->dropout = drop, m->dropout_key = key;
    bert_forward(m, bt, &l, NULL, NULL);
    bert_backward(m, 1.0f);
    m->dropout = 0;
    float *g = malloc(m->nparams * sizeof *g);
    memcpy(g, m->grads, m->nparams * sizeof *g);
    return g;
}

/* the fp32 backend's gradients of m on bt against want within 1e-4,
 * counted as what */
static void fp32_grads_vs(Bert *m, const BertBatch *bt, int drop, uint64_t key, const float *want,
                          const char *what) {
    OptimConfig oc;
    optim_config_default(&oc, OPT_LAMB);
    Optim opt;
    optim_init(&opt, &oc, m);
    TrainOpts o = one_process(0, 0);
    TrainBackend be;
    Err err;
    if (gpu_backend_open(&be, m, &opt, &o, &err) == 0) {
        be.from_host(be.ctx);
        be.zero_grad(be.ctx);
        be.micro_step(be.ctx, bt, 1.0f, drop, key);
        gpu_backend_grads_to_host(be.ctx);
        test_cond(what, tensors_close(m, m->grads, want, 1e-4, what));
        be.close(be.ctx);
    } else {
        test_cond("open the CUDA backend", 0);
    }
    optim_free(&opt);
}

/* fp32 gradients on a batch whose token ids and types repeat over many
 * rows (a type over 200 of them, a few ids over 64: the embedding
 * gradient's long lists, summed in segments), against the C model's */
static void check_long_lists(const Ref *r) {
    BertConfig c = {r->V, r->H, r->L, r->A, r->I, r->P, r->T, r->eps, 0.02f, 0, 0, 0};
    Bert m;
    Err err;
    if (bert_create(&m, &c, &err)) {
        test_cond("create the tiny model", 0);
        return;
    }
    memcpy(m.params, r->params, m.nparams * sizeof(float));
    enum { B = 6, M = 5 };
    int S = r->P < 64 ? r->P : 64, N = B * S;
    int32_t *ids = calloc((size_t)N, 4), *seg = calloc((size_t)N, 4), *mask = calloc((size_t)N, 4);
    int32_t mpos[B * M] = {0}, mids[B * M] = {0}, nsp[B];
    uint64_t x = 12345;
    for (int n = 0; n < N; n++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int s = n % S;
        ids[n] = s < 3 * S / 4 ? 5 + (int)(x >> 60) % 3
                               : (int)((x >> 33) % (uint64_t)r->V); /* ids 5-7 often */
        seg[n] = s >= S / 2, mask[n] = s < S - 2;
    }
    for (int b = 0; b < B; b++) {
        nsp[b] = b & 1;
        for (int k = 0; k < M - (b & 1); k++)
            mpos[b * M + k] = 1 + 3 * k, mids[b * M + k] = ids[b * S + 1 + 3 * k];
    }
    BertBatch bt = {B, S, M, ids, seg, mask, mpos, mids, nsp};
    float *want = model_grads(&m, &bt, 0, 0);
    fp32_grads_vs(&m, &bt, 0, 0, want,
                  "fp32 gradients on a batch of long embedding lists within 1e-4 of the C model's");
    free(want), free(ids), free(seg), free(mask);
    bert_free(&m);
}

/* x's key-bias gradients to 0: they are 0 in exact arithmetic (a constant
 * added to a softmax row's scores changes nothing), rounding noise in
 * float32 and bf16 alike */
static void drop_key_bias(const Bert *m, float *x) {
    for (int t = 0; t < m->ntensors; t++) {
        const BertTensor *bt = bert_tensor(m, t);
        if (strstr(bt->name, "attention.self.key.bias")) memset(x + bt->off, 0, bt->n * sizeof *x);
    }
}

/* 3 rows of 80 tokens (five key tiles, two blocks of query tiles) padded
 * to 80, 61 and 37 tokens, 6 masked each, ids below 128 */
enum { TB = 3, TS = 80, TM = 6, TV = 128 };
static BertBatch test_batch(void) {
    static const int len[TB] = {80, 61, 37};
    static int32_t ids[TB * TS], seg[TB * TS], mask[TB * TS], mpos[TB * TM], mids[TB * TM],
        nsp[TB] = {0, 1, 0};
    uint64_t x = 777;
    for (int n = 0; n < TB * TS; n++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        ids[n] = 5 + (int)((x >> 33) % (TV - 5)), seg[n] = n % TS >= TS / 2,
        mask[n] = n % TS < len[n / TS];
    }
    for (int b = 0; b < TB; b++)
        for (int k = 0; k < TM; k++)
            mpos[b * TM + k] = 1 + k * (len[b] - 2) / TM,
                          mids[b * TM + k] = ids[b * TS + mpos[b * TM + k]];
    BertBatch bt = {TB, TS, TM, ids, seg, mask, mpos, mids, nsp};
    return bt;
}

/* bf16 with the fused attention kernels (head sizes 16, 32 and 64) against
 * the C model's float32 gradients (the key biases' aside), with and
 * without dropout, on test_batch, weights N(0, 0.05) and the query
 * weights 8 times that, so that the attention is peaked (scores of
 * standard deviation ~2), biases uniform in [-0.1, 0.1]; the matmul
 * path's errors printed beside. Also: the same bits when run again. */
static void check_fused_attention(void) {
    enum { S = TS, V = TV };
    static const int hidden[3] = {64, 64, 128}, heads[3] = {4, 2, 2};
    BertBatch bt = test_batch();
    uint64_t x = 777;
    for (int v = 0; v < 3; v++) {
        BertConfig c = {V, hidden[v], 2,     heads[v], 2 * hidden[v], S,
                        2, 1e-12f,    0.05f, 0.1f,     0.1f,          0};
        Bert m;
        Err err;
        if (bert_create(&m, &c, &err)) {
            test_cond("create the model", 0);
            continue;
        }
        bert_init_weights(&m, 11 + (uint64_t)v);
        for (int t = 0; t < m.ntensors;
             t++) { /* peaked attention: query weights x 8; biases not 0 */
            const BertTensor *tq = bert_tensor(&m, t);
            size_t nl = strlen(tq->name);
            if (strstr(tq->name, "attention.self.query.weight"))
                for (size_t i = 0; i < tq->n; i++)
                    m.params[tq->off + i] *= 8;
            if (nl > 5 && !strcmp(tq->name + nl - 5, ".bias"))
                for (size_t i = 0; i < tq->n; i++) {
                    x = x * 6364136223846793005ull + 1442695040888963407ull;
                    m.params[tq->off + i] =
                        (float)((double)(x >> 11) / 9007199254740992.0 - 0.5) * 0.2f;
                }
        }
        float *want[2], *got = malloc(m.nparams * sizeof *got);
        for (int d = 0; d < 2; d++) { /* the C model, without and with dropout */
            want[d] = model_grads(&m, &bt, d, 0x5eedULL);
            drop_key_bias(&m, want[d]);
        }
        OptimConfig oc;
        optim_config_default(&oc, OPT_LAMB);
        Optim opt;
        optim_init(&opt, &oc, &m);
        for (int path = 0; path < 2; path++) { /* fused, matmul */
            TrainOpts o = one_process(1, path);
            TrainBackend be;
            if (gpu_backend_open(&be, &m, &opt, &o, &err)) {
                test_cond("open the CUDA backend", 0);
                continue;
            }
            be.from_host(be.ctx);
            char what[160];
            for (int d = 0; d < 2; d++) {
                be.zero_grad(be.ctx);
                be.micro_step(be.ctx, &bt, 1.0f, d, 0x5eedULL);
                gpu_backend_grads_to_host(be.ctx);
                drop_key_bias(&m, m.grads);
                snprintf(what, sizeof what,
                         "bf16 %s attention, head size %d%s: gradients within 5e-2",
                         path ? "matmul" : "fused", hidden[v] / heads[v], d ? ", dropout" : "");
                int ok = tensors_close(&m, m.grads, want[d], 5e-2, what);
                if (path == 0) test_cond(what, ok);
            }
            if (path == 0) {
                memcpy(got, m.grads, m.nparams * sizeof *got);
                be.zero_grad(be.ctx);
                be.micro_step(be.ctx, &bt, 1.0f, 1, 0x5eedULL);
                gpu_backend_grads_to_host(be.ctx);
                drop_key_bias(&m, m.grads);
                snprintf(what, sizeof what,
                         "bf16 fused attention, head size %d: the same bits when run again",
                         hidden[v] / heads[v]);
                test_cond(what, memcmp(got, m.grads, m.nparams * sizeof *got) == 0);
            }
            be.close(be.ctx);
        }
        optim_free(&opt);
        free(want[0]), free(want[1]), free(got);
        bert_free(&m);
    }
}

/* fp32 with a hidden size of 34 (rows not a whole number of 16-byte
 * vectors, tensors not 16-byte aligned: the one-element forms of the row
 * and column kernels; head size 17: the matmul attention) against the C
 * model's gradients with dropout, 1e-4 */
static void check_odd_width(void) {
    BertConfig c = {TV, 34, 2, 2, 52, TS, 2, 1e-12f, 0.05f, 0.1f, 0.1f, 0};
    BertBatch bt = test_batch();
    Bert m;
    Err err;
    if (bert_create(&m, &c, &err)) {
        test_cond("create the model", 0);
        return;
    }
    bert_init_weights(&m, 5);
    float *want = model_grads(&m, &bt, 1, 0x5eedULL);
    fp32_grads_vs(&m, &bt, 1, 0x5eedULL, want,
                  "fp32, hidden size 34: gradients with dropout within 1e-4 of the C model's");
    free(want);
    /* a first micro-batch without masked tokens: the MLM head's matmuls,
     * which set their weights' gradients on the first micro-batch, do not run */
    int32_t nopos[TB * TM] = {0};
    BertBatch bn = bt;
    bn.masked_lm_positions = nopos;
    want = model_grads(&m, &bn, 0, 0);
    fp32_grads_vs(&m, &bn, 0, 0, want,
                  "fp32, no masked token: gradients within 1e-4 of the C model's");
    free(want);
    bert_free(&m);
}

/* ---- train_bert's checkpoints against train_bert_cpu's ----
 * The bounds of tests/gpu/compare_cpu.sh's header, which derives them:
 * a gradient element may differ by CMP_TAU x (its size + CMP_PHI x its
 * tensor's largest + CMP_ETA x the model's largest); a weight by what
 * that does to LAMB's updates (lr x trust ratio x the change of
 * m^/(sqrt(v^) + eps), at most 2), step by step, plus rounding. */
#define CMP_TAU 1e-3
#define CMP_PHI 1e-1
#define CMP_ETA 1e-4
#define CMP_MAXSTEPS 64

typedef struct Worst {
    double ratio, err, bound;
    const char *tensor;
    size_t at;
    int step;
} Worst;

/* keep the largest err / bound */
static void worst_note(Worst *w, double err, double bound, const char *tensor, size_t at,
                       int step) {
    double r = err / bound;
    if (r > w->ratio || r != r) *w = (Worst){r != r ? INFINITY : r, err, bound, tensor, at, step};
}

typedef struct CkptSide {
    Bert m;
    Optim o;
    int have;
} CkptSide;

/* dir/ckpt_<step>.wbckpt into s (s->have 0 when there is no such file);
 * -1 on a damaged or foreign one */
static int load_side(CkptSide *s, const BertConfig *c, const char *dir, int step) {
    char path[4096];
    Err err;
    OptimConfig oc;
    optim_config_default(&oc, OPT_LAMB);
    snprintf(path, sizeof path, "%s/ckpt_%d.wbckpt", dir, step);
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fclose(f);
    if (bert_create(&s->m, c, &err)) goto bad;
    optim_init(&s->o, &oc, &s->m);
    if (ckpt_load(path, &s->m, &s->o, NULL, &err)) goto bad;
    s->have = 1;
    return 0;
bad:
    fprintf(stderr, "%s\n", err.msg);
    return -1;
}

/* the gradient allowance delta of element i at a step (moments of the
 * reference r after its step-th update; GT: the largest sqrt(v^) of i's
 * tensor, G: of the model) */
static double grad_allow(const Optim *r, size_t i, double bc2, double GT, double G) {
    return CMP_TAU * (sqrt(r->v[i] / bc2) + CMP_PHI * GT + CMP_ETA * G);
}

static int compare_runs(const char *config, const char *da, const char *db, double lr,
                        double warmup, int S) {
    BertConfig c;
    Err err;
    if (bert_config_load(&c, config, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    if (c.vocab_size % 8) c.vocab_size += 8 - c.vocab_size % 8;
    if (S < 1 || S > CMP_MAXSTEPS) {
        fprintf(stderr, "steps %d: 1 to %d\n", S, CMP_MAXSTEPS);
        return 2;
    }
    CkptSide A[CMP_MAXSTEPS + 1] = {0}, B[CMP_MAXSTEPS + 1] = {0};
    int rc = 0;
    for (int s = 1; s <= S && !rc; s++)
        if (load_side(&A[s], &c, da, s) || load_side(&B[s], &c, db, s)) rc = 2;
    if (!rc && !(A[S].have && B[S].have)) {
        fprintf(stderr, "no ckpt_%d.wbckpt in %s and %s\n", S, da, db);
        rc = 2;
    }
    OptimConfig oc;
    optim_config_default(&oc, OPT_LAMB);
    double b1 = oc.beta1, b2 = oc.beta2, eps = oc.eps;
    /* kappa[s]: |m^| <= kappa sqrt(v^) after s steps (Cauchy-Schwarz over
     * the moments' weights; 1 after one step) */
    double kappa[CMP_MAXSTEPS + 1] = {0};
    for (int s = 1; s <= S; s++) {
        double bc1 = 1 - pow(b1, s), bc2 = 1 - pow(b2, s), k2 = 0;
        for (int t = 1; t <= s; t++) {
            double a = (1 - b1) * pow(b1, s - t) / bc1, cw = (1 - b2) * pow(b2, s - t) / bc2;
            k2 += a * a / cw;
        }
        kappa[s] = sqrt(k2);
    }
    const Bert *mS = &B[S].m;
    int T = mS->ntensors;
    /* per step: G and each tensor's GT (reference), the trust ratio rho */
    double *GT = xcalloc((size_t)(S + 1) * T, sizeof *GT), *rho = xcalloc((size_t)(S + 1) * T, 8);
    double G[CMP_MAXSTEPS + 1] = {0};
    Worst wm = {0}, wv = {0}, ww = {0};
    char steps[256] = "";
    for (int s = 1; s <= S && !rc; s++) {
        double lrs = poly_warmup_lr(s, (float)lr, (float)warmup, S), bc1 = 1 - pow(b1, s),
               bc2 = 1 - pow(b2, s);
        for (int t = 0; t < T; t++)
            rho[s * T + t] = lrs; /* without its checkpoint: 1 (and u may differ by 2 kappa) */
        if (!(A[s].have && B[s].have)) continue;
        snprintf(steps + strlen(steps), sizeof steps - strlen(steps), "%s%d", *steps ? ", " : "",
                 s);
        const Optim *ra = &A[s].o, *rb = &B[s].o;
        for (int t = 0; t < T; t++) {
            const BertTensor *bt = bert_tensor(mS, t);
            double gt = 0, wn = 0, un = 0, wd = bt->decay ? oc.weight_decay : 0;
            for (size_t i = bt->off; i < bt->off + bt->n; i++) {
                double gh = sqrt(rb->v[i] / bc2), w = B[s].m.params[i];
                double u = rb->m[i] / bc1 / (gh + eps) + wd * w;
                gt = fmax(gt, gh), wn += w * w, un += u * u;
            }
            GT[s * T + t] = gt, G[s] = fmax(G[s], gt);
            rho[s * T + t] = lrs * (wd != 0 && wn > 0 && un > 0 ? sqrt(wn / un) : 1.0);
        }
        for (int t = 0; t < T; t++) {
            const BertTensor *bt = bert_tensor(mS, t);
            for (size_t i = bt->off; i < bt->off + bt->n; i++) {
                double d = grad_allow(rb, i, bc2, GT[s * T + t], G[s]);
                worst_note(&wm, fabs((double)ra->m[i] - rb->m[i]) / bc1, d, bt->name, i - bt->off,
                           s);
                worst_note(&wv, fabs(sqrt(ra->v[i] / bc2) - sqrt(rb->v[i] / bc2)), d, bt->name,
                           i - bt->off, s);
            }
        }
    }
    /* the weights after step S: each step's update may differ by rho x the
     * change of u (at most 2 kappa, or (1 + kappa) delta / (sqrt(v^) + eps)
     * with m^ and sqrt(v^) within delta) plus rho x TAU (the trust ratio's
     * own rounding), and each write by its rounding */
    for (int t = 0; t < T && !rc; t++) {
        const BertTensor *bt = bert_tensor(mS, t);
        for (size_t i = bt->off; i < bt->off + bt->n; i++) {
            double wb = mS->params[i], bound = S * 0x1p-22 * fabs(wb);
            for (int s = 1; s <= S; s++) {
                double du = 2 * kappa[s];
                if (A[s].have && B[s].have) {
                    double bc2 = 1 - pow(b2, s), gh = sqrt(B[s].o.v[i] / bc2),
                           d = grad_allow(&B[s].o, i, bc2, GT[s * T + t], G[s]);
                    du = fmin(2 * kappa[s], (1 + kappa[s]) * d / (gh + eps)) + CMP_TAU;
                }
                bound += rho[s * T + t] * du;
            }
            worst_note(&ww, fabs((double)A[S].m.params[i] - wb), bound, bt->name, i - bt->off, S);
        }
    }
    if (!rc) {
        const char *what[3] = {"weights", "gradients (first moments)",
                               "gradients (sqrt of second moments)"};
        Worst *wo[3] = {&ww, &wm, &wv};
        printf("  %s against %s, steps with both checkpoints: %s\n", da, db, steps);
        for (int k = 0; k < 3; k++)
            printf("  %s: worst %s[%zu] at step %d, error %.3g of bound %.3g (%.3f)\n", what[k],
                   wo[k]->tensor ? wo[k]->tensor : "-", wo[k]->at, wo[k]->step, wo[k]->err,
                   wo[k]->bound, wo[k]->ratio);
        rc = ww.ratio <= 1 && wm.ratio <= 1 && wv.ratio <= 1 ? 0 : 1;
    }
    for (int s = 1; s <= S; s++) {
        if (A[s].have) bert_free(&A[s].m), optim_free(&A[s].o);
        if (B[s].have) bert_free(&B[s].m), optim_free(&B[s].o);
    }
    free(GT), free(rho);
    return rc;
}

int main(int argc, char **argv) {
    if (argc == 8 && strcmp(argv[1], "runs") == 0)
        return compare_runs(argv[2], argv[3], argv[4], atof(argv[5]), atof(argv[6]), atoi(argv[7]));
    Ref r = {0};
    char path[512];
    snprintf(path, sizeof path, "%s/bert_tiny_ref.bin", TEST_DATA);
    if (load_ref(&r, argc > 1 ? argv[1] : path)) {
        test_cond("reference file readable", 0);
        return test_report();
    }
    check_precision(&r, 0);
    check_precision(&r, 1);
    check_long_lists(&r);
    check_fused_attention();
    check_odd_width();
    free_ref(&r);
    return test_report();
}
