/* test_bert.c - the C BERT (train/bert.c) and its optimizers (train/optim.c)
 * against an independent PyTorch implementation: tests/data/bert_tiny_ref.bin,
 * written by train/ref/make_reference.py in float64 for a tiny config (2
 * layers, 4 heads, hidden 32, vocab 100) and a batch of 3 rows with padding
 * and masked tokens. Checked: MLM and NSP logits, the three losses, every
 * parameter's gradient, the learning rates of PolyWarmUp, and the weights
 * after one and two steps of LAMB and of AdamW (each step a new forward and
 * backward). Tolerance: per tensor, max |ours - ref| <= 1e-4 * max |ref|
 * (see tensors_close for tensors that are all but zero).
 * Also: the same gradients for 1 and 3 threads, bit for bit, and with the
 * padding after each row's last token computed or skipped; gradient
 * accumulation (two half-scaled backward passes = one); a batch cut after
 * its last token (--bin_size) gives the full batch's loss and gradients;
 * the top layer computed only at the rows the heads read gives the whole
 * layer's results (to rounding), masked positions in any order;
 * config parsing and
 * its errors. Training mode: the reference applies the same dropout masks
 * (train/dropout.h's hash, reimplemented in Python), so losses and every
 * gradient with dropout are checked too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"
#include "tests/bert_ref.h"
#include "train/bert.h"
#include "train/dropout.h"
#include "train/optim.h"

#ifndef TEST_DATA
#define TEST_DATA "tests/data"
#endif

static void test_against_reference(void) {
    Ref r = {0};
    char path[512];
    snprintf(path, sizeof path, "%s/bert_tiny_ref.bin", TEST_DATA);
    if (load_ref(&r, path)) {
        test_cond("reference file tests/data/bert_tiny_ref.bin readable", 0);
        free_ref(&r);
        return;
    }
    BertConfig c = {r.V, r.H, r.L, r.A, r.I, r.P, r.T, r.eps, 0.02f, 0, 0, 0};
    Bert m;
    Err err;
    test_cond("create the tiny model", bert_create(&m, &c, &err) == 0);
    test_cond("same parameter count as the reference", m.nparams == (size_t)r.nparams);
    if (m.nparams != (size_t)r.nparams) {
        bert_free(&m);
        free_ref(&r);
        return;
    }
    memcpy(m.params, r.params, m.nparams * sizeof(float));
    BertBatch b = batch_of(&r);
    test_cond("batch passes the checks", bert_batch_check(&m, &b, &err) == 0);

    float *mlm = malloc((size_t)r.nmask * r.V * sizeof *mlm), nsp[64];
    BertLoss l;
    bert_forward(&m, &b, &l, mlm, nsp);
    test_cond("masked tokens counted", l.masked == r.nmask);
    double e1 = rel_err(mlm, r.mlm_logits, (size_t)r.nmask * r.V),
           e2 = rel_err(nsp, r.nsp_logits, (size_t)r.B * 2);
    printf("  logits: MLM %.2e, NSP %.2e; loss %.7f (ref %.7f)\n", e1, e2, l.total, r.losses[0]);
    test_cond("MLM logits at the masked positions", e1 <= 1e-4);
    test_cond("NSP logits", e2 <= 1e-4);
    float lo[3] = {l.total, l.mlm, l.nsp};
    test_cond("losses (total, MLM, NSP)", rel_err(lo, r.losses, 3) <= 1e-4 &&
                                              fabsf(l.mlm - r.losses[1]) <= 1e-4f * r.losses[1] &&
                                              fabsf(l.nsp - r.losses[2]) <= 1e-4f * r.losses[2]);
    bert_zero_grad(&m);
    bert_backward(&m, 1.0f);
    test_cond("every gradient", tensors_close(&m, m.grads, r.grads, 1e-4, "gradients"));

    /* the same gradients on 1 and 3 threads, bit for bit */
    float *g1 = malloc(m.nparams * sizeof *g1);
    memcpy(g1, m.grads, m.nparams * sizeof *g1);
    bert_set_threads(1);
    bert_zero_grad(&m);
    bert_forward(&m, &b, &l, NULL, NULL);
    bert_backward(&m, 1.0f);
    int same1 = memcmp(g1, m.grads, m.nparams * sizeof *g1) == 0;
    bert_set_threads(3);
    bert_zero_grad(&m);
    bert_forward(&m, &b, &l, NULL, NULL);
    bert_backward(&m, 1.0f);
    test_cond("gradients identical for 1, 3 and all threads",
              same1 && memcmp(g1, m.grads, m.nparams * sizeof *g1) == 0);
    bert_set_threads(0);

    /* accumulation: two backward passes at scale 1/2 = one at 1 */
    bert_zero_grad(&m);
    bert_forward(&m, &b, &l, NULL, NULL);
    bert_backward(&m, 0.5f);
    bert_forward(&m, &b, &l, NULL, NULL);
    bert_backward(&m, 0.5f);
    test_cond("gradient accumulation (2 x 1/2)", rel_err(m.grads, g1, m.nparams) <= 1e-6);

    /* the padded rows cut after their last token (train_bert's --bin_size):
     * the padding changes nothing but the work (masked keys, no loss there) */
    {
        int S = b.S, M = b.M, n = 0, cut = 2, rows[64];
        for (int i = 0; i < b.B && n < 64; i++) {
            int last = 0;
            for (int j = 0; j < S; j++)
                if (b.input_mask[i * S + j]) last = j + 1;
            if (last < S) rows[n++] = i, cut = last > cut ? last : cut;
        }
        test_cond("the reference batch has rows with padding", n > 0 && cut < S);
        int32_t *f[3], *c3[3], *mp = malloc((size_t)(n ? n : 1) * M * 4),
                               *mi = malloc((size_t)(n ? n : 1) * M * 4),
                               *ns = malloc((size_t)(n ? n : 1) * 4);
        const int32_t *src[3] = {b.input_ids, b.segment_ids, b.input_mask};
        for (int k = 0; k < 3; k++) {
            f[k] = malloc((size_t)(n ? n : 1) * S * 4),
            c3[k] = malloc((size_t)(n ? n : 1) * cut * 4);
            for (int i = 0; i < n; i++) {
                memcpy(f[k] + i * S, src[k] + rows[i] * S, (size_t)S * 4);
                memcpy(c3[k] + i * cut, src[k] + rows[i] * S, (size_t)cut * 4);
            }
        }
        for (int i = 0; i < n; i++) {
            memcpy(mp + i * M, b.masked_lm_positions + rows[i] * M, (size_t)M * 4);
            memcpy(mi + i * M, b.masked_lm_ids + rows[i] * M, (size_t)M * 4);
            ns[i] = b.next_sentence_labels[rows[i]];
        }
        BertBatch bf = {n, S, M, f[0], f[1], f[2], mp, mi, ns},
                  bc = {n, cut, M, c3[0], c3[1], c3[2], mp, mi, ns};
        BertLoss lc, lf;
        float *gf = malloc(m.nparams * sizeof *gf);
        if (n) {
            bert_zero_grad(&m);
            bert_forward(&m, &bf, &lf, NULL, NULL);
            bert_backward(&m, 1.0f);
            memcpy(gf, m.grads, m.nparams * sizeof *gf);
            bert_zero_grad(&m);
            bert_forward(&m, &bc, &lc, NULL, NULL);
            bert_backward(&m, 1.0f);
            double ge = rel_err(m.grads, gf, m.nparams);
            printf("  %d padded rows cut after the last token (%d of %d): loss %.7f vs %.7f, "
                   "gradients %.2e\n",
                   n, cut, S, lc.total, lf.total, ge);
            test_cond("cut rows: the full rows' loss and gradients",
                      fabsf(lc.total - lf.total) <= 1e-6f * lf.total && lc.masked == lf.masked &&
                          ge <= 1e-5);
        }
        for (int k = 0; k < 3; k++)
            free(f[k]), free(c3[k]);
        free(mp), free(mi), free(ns), free(gf);
    }

    /* the schedule */
    float lr1 = poly_warmup_lr(1, r.hyp[0], r.hyp[6], r.total_steps),
          lr2 = poly_warmup_lr(2, r.hyp[0], r.hyp[6], r.total_steps);
    test_cond("PolyWarmUp learning rates of steps 1 and 2",
              fabsf(lr1 - r.lr[0]) <= 1e-7f && fabsf(lr2 - r.lr[1]) <= 1e-7f);
    test_cond("PolyWarmUp after warm-up: base * (1 - progress)^0.5",
              fabsf(poly_warmup_lr(5, 1.0f, 0.3f, 10) - sqrtf(0.5f)) < 1e-6f &&
                  poly_warmup_lr(10, 1.0f, 0.3f, 10) == 0.0f);

    /* two optimizer steps each, from the reference's initial weights */
    for (int kind = 0; kind < 2; kind++) {
        OptimConfig oc;
        optim_config_default(&oc, kind == 0 ? OPT_LAMB : OPT_ADAMW);
        oc.weight_decay = r.hyp[1], oc.beta1 = r.hyp[2], oc.beta2 = r.hyp[3], oc.eps = r.hyp[4];
        oc.max_grad_norm = r.hyp[5];
        Optim o;
        optim_init(&o, &oc, &m);
        memcpy(m.params, r.params, m.nparams * sizeof(float));
        for (int s = 0; s < 2; s++) {
            bert_zero_grad(&m);
            bert_forward(&m, &b, &l, NULL, NULL);
            bert_backward(&m, 1.0f);
            optim_step(&o, &m, poly_warmup_lr(s + 1, r.hyp[0], r.hyp[6], r.total_steps));
            char what[64];
            snprintf(what, sizeof what, "%s step %d weights", kind == 0 ? "LAMB" : "AdamW", s + 1);
            test_cond(what,
                      tensors_close(&m, m.params, kind == 0 ? r.lamb[s] : r.adamw[s], 1e-4, what));
        }
        if (kind == 0)
            test_cond("LAMB clipped: the gradient norm exceeded 1", o.last_grad_norm > 1.0);
        optim_free(&o);
    }

    /* training mode: dropout masks from the pass key, same in the reference */
    memcpy(m.params, r.params, m.nparams * sizeof(float));
    m.c.hidden_dropout_prob = r.dropout_p[0], m.c.attention_probs_dropout_prob = r.dropout_p[1];
    m.dropout = 1, m.dropout_key = r.dropout_key;
    bert_zero_grad(&m);
    bert_forward(&m, &b, &l, NULL, NULL);
    bert_backward(&m, 1.0f);
    float dl[3] = {l.total, l.mlm, l.nsp};
    printf("  dropout: loss %.7f (ref %.7f; without dropout %.7f)\n", l.total, r.dropout_losses[0],
           r.losses[0]);
    test_cond("dropout changes the loss",
              fabsf(r.dropout_losses[0] - r.losses[0]) > 1e-3f * r.losses[0]);
    test_cond("losses with dropout (total, MLM, NSP)",
              rel_err(dl, r.dropout_losses, 3) <= 1e-4 &&
                  fabsf(l.nsp - r.dropout_losses[2]) <= 1e-4f * r.dropout_losses[2]);
    test_cond("every gradient with dropout",
              tensors_close(&m, m.grads, r.dropout_grads, 1e-4, "gradients, dropout"));
    memcpy(g1, m.grads, m.nparams * sizeof *g1);
    /* the padding after each row's last token is skipped: computing it
     * gives the same bits (its keys add exact zeros, its rows reach no loss) */
    {
        BertLoss lp;
        m.keep_padding = 1;
        bert_zero_grad(&m);
        bert_forward(&m, &b, &lp, NULL, NULL);
        bert_backward(&m, 1.0f);
        m.keep_padding = 0;
        test_cond("padding computed: the same loss and gradients, bit for bit",
                  lp.total == l.total && memcmp(g1, m.grads, m.nparams * sizeof *g1) == 0);
        memcpy(m.grads, g1, m.nparams * sizeof *g1);
    }
    /* the top layer runs at the rows the heads read ([CLS], the masked
     * tokens): computed at every token, the loss and gradients are the
     * same to rounding; also with each row's masked positions listed in
     * reverse order (a file need not sort them) */
    {
        BertLoss lt, lr, lrt;
        m.keep_top = 1;
        bert_zero_grad(&m);
        bert_forward(&m, &b, &lt, NULL, NULL);
        bert_backward(&m, 1.0f);
        m.keep_top = 0;
        int tc = tensors_close(&m, m.grads, g1, 1e-5, "top layer at every token");
        printf("  top layer at every token: loss %.7f vs %.7f\n", lt.total, l.total);
        test_cond("top layer at every token: the same loss and gradients (1e-5)",
                  fabsf(lt.total - l.total) <= 1e-6f * l.total && lt.masked == l.masked &&
                      lt.mlm_correct == l.mlm_correct && tc);
        int32_t *rp = malloc((size_t)b.B * b.M * 4), *ri = malloc((size_t)b.B * b.M * 4);
        int reordered = 0;
        for (int i = 0; i < b.B; i++) {
            int n = 0;
            while (n < b.M && b.masked_lm_positions[i * b.M + n])
                n++;
            for (int k = 0; k < b.M; k++) {
                int src = k < n ? i * b.M + n - 1 - k : i * b.M + k;
                rp[i * b.M + k] = b.masked_lm_positions[src];
                ri[i * b.M + k] = b.masked_lm_ids[src];
            }
            reordered += n > 1;
        }
        BertBatch br = b;
        br.masked_lm_positions = rp, br.masked_lm_ids = ri;
        float *gr = malloc(m.nparams * sizeof *gr);
        bert_zero_grad(&m);
        bert_forward(&m, &br, &lr, NULL, NULL);
        bert_backward(&m, 1.0f);
        memcpy(gr, m.grads, m.nparams * sizeof *gr);
        m.keep_top = 1;
        bert_zero_grad(&m);
        bert_forward(&m, &br, &lrt, NULL, NULL);
        bert_backward(&m, 1.0f);
        m.keep_top = 0;
        int rc = tensors_close(&m, gr, g1, 1e-5, "masked positions reversed") &&
                 tensors_close(&m, m.grads, g1, 1e-5, "reversed, top layer at every token");
        test_cond("masked positions in reverse order: the same loss and gradients",
                  reordered > 0 && fabsf(lr.total - l.total) <= 1e-6f * l.total &&
                      fabsf(lrt.total - l.total) <= 1e-6f * l.total && rc);
        free(rp), free(ri), free(gr);
        memcpy(m.grads, g1, m.nparams * sizeof *g1);
    }
    bert_set_threads(1);
    bert_zero_grad(&m);
    bert_forward(&m, &b, &l, NULL, NULL);
    bert_backward(&m, 1.0f);
    bert_set_threads(0);
    test_cond("dropout gradients identical for 1 and all threads",
              memcmp(g1, m.grads, m.nparams * sizeof *g1) == 0);
    m.dropout_key++;
    bert_forward(&m, &b, &l, NULL, NULL);
    test_cond("another pass key, other masks", fabsf(l.total - dl[0]) > 1e-6f);
    m.dropout = 0;
    bert_forward(&m, &b, &l, NULL, NULL);
    test_cond("dropout off again: the reference loss",
              fabsf(l.total - r.losses[0]) <= 1e-4f * r.losses[0]);
    free(mlm), free(g1);
    bert_free(&m);
    free_ref(&r);
}

/* the mask hash: keep rate near 1 - p over many elements, keys independent */
static void test_dropout_mask(void) {
    uint64_t k1 = dropout_site_key(dropout_pass_key(42, 1, 0), 0),
             k2 = dropout_site_key(dropout_pass_key(42, 1, 0), 1);
    uint32_t thr = dropout_threshold(0.1f);
    long kept = 0, both = 0, n = 1000000;
    for (uint32_t i = 0; i < (uint32_t)n; i++) {
        int a = dropout_keep(k1, i, thr), b = dropout_keep(k2, i, thr);
        kept += a, both += a && b;
    }
    printf("  dropout 0.1: kept %.4f, kept at two sites %.4f (independent: 0.81)\n",
           (double)kept / n, (double)both / n);
    test_cond("dropout keeps 90 % (+-0.3 %)", fabs((double)kept / n - 0.9) < 0.003);
    test_cond("two sites' masks independent", fabs((double)both / n - 0.81) < 0.004);
    test_cond("p = 0 keeps everything", dropout_threshold(0.0f) == 0 && dropout_keep(k1, 12345, 0));
    test_cond("pass keys differ by step and micro-batch",
              dropout_pass_key(42, 1, 0) != dropout_pass_key(42, 2, 0) &&
                  dropout_pass_key(42, 1, 0) != dropout_pass_key(42, 1, 1) &&
                  dropout_pass_key(42, 1, 0) != dropout_pass_key(43, 1, 0));
}

static void test_config(void) {
    BertConfig c;
    Err err;
    const char *ok =
        "{\"attention_probs_dropout_prob\": 0.1, \"hidden_act\": \"gelu\", "
        "\"hidden_dropout_prob\": 0.1,"
        " \"hidden_size\": 1024, \"initializer_range\": 0.02, \"intermediate_size\": 4096,"
        " \"max_position_embeddings\": 512, \"num_attention_heads\": 16, \"num_hidden_layers\": 24,"
        " \"type_vocab_size\": 2, \"vocab_size\": 32000}";
    test_cond("BERT-large config (the Hungarian workflow's)",
              bert_config_parse(&c, ok, strlen(ok), "cfg", &err) == 0 && c.hidden_size == 1024 &&
                  c.num_hidden_layers == 24 && c.vocab_size == 32000 &&
                  c.intermediate_size == 4096);
    const char *base =
        "{\"hidden_size\": 768, \"intermediate_size\": 3072, \"max_position_embeddings\": 512,"
        " \"num_attention_heads\": 12, \"num_hidden_layers\": 12, \"vocab_size\": 30522}";
    Bert m;
    size_t encoder = 0;
    int rc = bert_config_parse(&c, base, strlen(base), "base", &err) || bert_create(&m, &c, &err);
    if (rc == 0) {
        for (int t = 0; t < m.ntensors; t++)
            if (strncmp(bert_tensor(&m, t)->name, "bert.", 5) == 0)
                encoder += bert_tensor(&m, t)->n;
        bert_free(&m);
    }
    test_cond("BERT-base: the encoder has bert-base-uncased's 109,482,240 parameters",
              rc == 0 && encoder == 109482240u);
    const char *noheads =
        "{\"hidden_size\": 64, \"intermediate_size\": 4, \"max_position_embeddings\": 8,"
        " \"num_hidden_layers\": 1, \"vocab_size\": 10}";
    test_cond("missing num_attention_heads named",
              bert_config_parse(&c, noheads, strlen(noheads), "cfg", &err) < 0 &&
                  strstr(err.msg, "num_attention_heads"));
    const char *div =
        "{\"hidden_size\": 30, \"num_attention_heads\": 4, \"intermediate_size\": 4,"
        " \"max_position_embeddings\": 8, \"num_hidden_layers\": 1, \"vocab_size\": 10}";
    test_cond("heads must divide hidden_size",
              bert_config_parse(&c, div, strlen(div), "cfg", &err) < 0 &&
                  strstr(err.msg, "not a multiple"));
    const char *act =
        "{\"hidden_act\": \"relu\", \"hidden_size\": 8, \"num_attention_heads\": 2, "
        "\"intermediate_size\": 4,"
        " \"max_position_embeddings\": 8, \"num_hidden_layers\": 1, \"vocab_size\": 10}";
    test_cond("hidden_act other than gelu refused",
              bert_config_parse(&c, act, strlen(act), "cfg", &err) < 0 &&
                  strstr(err.msg, "hidden_act"));
    const char *broken = "{\"hidden_size\": 8,, }";
    test_cond("malformed JSON: file:line and byte offset",
              bert_config_parse(&c, broken, strlen(broken), "cfg.json", &err) < 0 &&
                  strstr(err.msg, "cfg.json:1: ") && strstr(err.msg, "(byte 18)"));
    const char *neg =
        "{\"hidden_size\": -8, \"num_attention_heads\": 2, \"intermediate_size\": 4,"
        " \"max_position_embeddings\": 8, \"num_hidden_layers\": 1, \"vocab_size\": 10}";
    test_cond("negative size refused", bert_config_parse(&c, neg, strlen(neg), "cfg", &err) < 0 &&
                                           strstr(err.msg, "hidden_size"));
    /* out of range: each refused naming its field (a field set twice: the last one counts) */
    static const struct {
        const char *set, *field;
    } bad[] = {
        {"\"num_hidden_layers\": 1e9", "num_hidden_layers 1000000000: at most"},
        {"\"num_hidden_layers\": 4097", "num_hidden_layers 4097"},
        {"\"hidden_size\": 65536, \"num_attention_heads\": 1", "hidden_size 65536 x hidden_size"},
        {"\"vocab_size\": 1000000000", "vocab_size 1000000000 x hidden_size 8"},
        {"\"hidden_size\": 2048, \"intermediate_size\": 2000000, \"num_attention_heads\": 1",
         "intermediate_size 2000000 x hidden_size 2048"},
        {"\"hidden_size\": 16384, \"intermediate_size\": 65536, \"num_hidden_layers\": 16",
         "num_hidden_layers 16 of "},
        {"\"hidden_dropout_prob\": 1", "hidden_dropout_prob 1: must be in [0, 1)"},
        {"\"attention_probs_dropout_prob\": 2",
         "attention_probs_dropout_prob 2: must be in [0, 1)"},
        {"\"hidden_dropout_prob\": -0.5", "hidden_dropout_prob: not a number"},
        {"\"layer_norm_eps\": 0", "layer_norm_eps 0: must be positive"},
        {"\"layer_norm_eps\": 1e-300", "layer_norm_eps 0: must be positive"},
        {"\"type_vocab_size\": 0", "type_vocab_size"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char js[512];
        snprintf(
            js, sizeof js,
            "{\"hidden_size\": 8, \"num_attention_heads\": 2, \"intermediate_size\": 4,"
            " \"max_position_embeddings\": 8, \"num_hidden_layers\": 1, \"vocab_size\": 10, %s}",
            bad[i].set);
        int r = bert_config_parse(&c, js, strlen(js), "cfg", &err);
        test_cond(bad[i].set, r < 0 && strstr(err.msg, bad[i].field));
        if (r == 0 || !strstr(err.msg, bad[i].field))
            printf("  %s\n", r < 0 ? err.msg : "accepted");
    }
    const char *edge =
        "{\"hidden_size\": 8, \"num_attention_heads\": 2, \"intermediate_size\": 4,"
        " \"max_position_embeddings\": 8, \"num_hidden_layers\": 4096, \"vocab_size\": 10,"
        " \"hidden_dropout_prob\": 0, \"attention_probs_dropout_prob\": 0.999}";
    test_cond("4096 layers and dropout 0 and 0.999 are fine",
              bert_config_parse(&c, edge, strlen(edge), "cfg", &err) == 0);
}

/* the initial weights: N(0, initializer_range) (not truncated: 4.55 % beyond
 * 2 sigma), biases 0, LayerNorm weights 1; the same bytes for 1, 3 and all
 * threads; a tensor's values depend on its name, not on the other
 * tensors; another seed, other values */
static void test_init(void) {
    BertConfig c = {1000, 96, 2, 4, 200, 64, 2, 1e-12f, 0.02f, 0.1f, 0.1f, 0};
    BertConfig c1 = c;
    c1.num_hidden_layers = 1;
    Bert m, m1;
    Err err;
    if (bert_create(&m, &c, &err) || bert_create(&m1, &c1, &err)) {
        test_cond("create the models", 0);
        return;
    }
    size_t bytes = m.nparams * sizeof(float);
    float *p1 = xmalloc(bytes), *p3 = xmalloc(bytes);
    bert_set_threads(1);
    bert_init_weights(&m, 7);
    memcpy(p1, m.params, bytes);
    bert_set_threads(3);
    bert_init_weights(&m, 7);
    memcpy(p3, m.params, bytes);
    bert_set_threads(0);
    bert_init_weights(&m, 7);
    test_cond("initial weights identical for 1, 3 and all threads",
              memcmp(p1, p3, bytes) == 0 && memcmp(p1, m.params, bytes) == 0);
    double s = 0, s2 = 0, n = 0, tail = 0, big = 0;
    int shapes_ok = 1;
    for (int t = 0; t < m.ntensors; t++) {
        const BertTensor *bt = bert_tensor(&m, t);
        const float *x = m.params + bt->off;
        size_t len = strlen(bt->name);
        int lnw = strstr(bt->name, "LayerNorm.weight") != NULL,
            bias = len > 5 && strcmp(bt->name + len - 5, ".bias") == 0;
        for (size_t i = 0; i < bt->n; i++) {
            if (lnw || bias) {
                shapes_ok &= x[i] == (lnw ? 1.0f : 0.0f);
                continue;
            }
            double z = x[i] / 0.02;
            s += z, s2 += z * z, n++, tail += fabs(z) > 2, big = fmax(big, fabs(z));
        }
    }
    double mean = s / n, sd = sqrt(s2 / n - mean * mean);
    printf("  initial weights: %.0f normal values, mean %.4f, sd %.4f (x initializer_range), "
           "beyond 2 sd %.4f, largest %.2f\n",
           n, mean, sd, tail / n, big);
    test_cond("biases 0, LayerNorm weights 1", shapes_ok);
    test_cond("weights N(0, 0.02): mean and sd", fabs(mean) < 0.005 && fabs(sd - 1) < 0.005);
    test_cond("... not truncated: 4.55 % beyond 2 sd",
              fabs(tail / n - 0.0455) < 0.002 && big > 3.5);
    const BertTensor *q = bert_tensor_named(&m, "bert.encoder.layer.0.attention.self.query.weight"),
                     *q1 =
                         bert_tensor_named(&m1, "bert.encoder.layer.0.attention.self.query.weight"),
                     *k = bert_tensor_named(&m, "bert.encoder.layer.0.attention.self.key.weight");
    bert_init_weights(&m1, 7);
    test_cond("a tensor's values depend on its name, not on the model's other tensors",
              q && q1 && k && memcmp(m.params + q->off, m1.params + q1->off, q->n * 4) == 0 &&
                  memcmp(m.params + q->off, m.params + k->off, q->n * 4) != 0);
    bert_init_weights(&m, 8);
    test_cond("another seed, other values", memcmp(p1, m.params, bytes) != 0);
    free(p1), free(p3);
    bert_free(&m), bert_free(&m1);
}

int main(void) {
    test_against_reference();
    test_dropout_mask();
    test_init();
    test_config();
    return test_report();
}
