/* bert.c - BERT pretraining forward and backward (see bert.h).
 *
 * Layout: row-major float32; a linear layer is y = x W^T + b with W of
 * shape [out, in] (PyTorch's). Tokens are the B*S rows of the batch;
 * attention runs per (row, head). Every loop that sums writes each result
 * from one thread in a fixed order (weight gradients are parallel over
 * output rows or columns, never reduced across threads), so results are
 * the same for any thread count.
 */
#include "train/bert.h"

#include <math.h>
#include <omp.h>
#include <string.h>

#include "common/cli.h"
#include "train/dropout.h"
#include "common/io.h"
#include "common/json.h"
#include "train/cpukern.h"

/* ---- config ---- */

int bert_config_parse(BertConfig *c, const char *json, size_t n, const char *name, Err *err) {
    memset(c, 0, sizeof *c);
    c->layer_norm_eps = 1e-12f;
    c->initializer_range = 0.02f;
    c->type_vocab_size = 2;
    c->hidden_dropout_prob = c->attention_probs_dropout_prob = 0.1f;
    JsonIter it;
    if (json_iter_init(&it, json, n, '{'))
        return err_set(err, "%s:%zu: %s (byte %zu)", name, json_line(json, it.pos), it.error,
                       it.pos);
    const char *k, *v;
    size_t kn, vn;
    int r, seen = 0;
    static const char *const keys[] = {"vocab_size",        "hidden_size",
                                       "num_hidden_layers", "num_attention_heads",
                                       "intermediate_size", "max_position_embeddings"};
    while ((r = json_iter_next(&it, &k, &kn, &v, &vn)) == 1) {
        double x;
        size_t line = json_line(json, (size_t)(v - json)); /* of the value, for messages */
        /* a bare value of any key is a JSON literal or number: not NaN, 032, +1 */
        int literal = (vn == 4 && (!memcmp(v, "true", 4) || !memcmp(v, "null", 4))) ||
                      (vn == 5 && !memcmp(v, "false", 5));
        if (vn && v[0] != '"' && v[0] != '{' && v[0] != '[' && !literal && json_number(v, vn, &x))
            return err_set(err, "%s:%zu: %.*s: %.*s is not a JSON number", name, line, (int)kn, k,
                           (int)vn, v);
        int *ints[] = {&c->vocab_size,          &c->hidden_size,       &c->num_hidden_layers,
                       &c->num_attention_heads, &c->intermediate_size, &c->max_position_embeddings};
        int matched = 0;
        for (int i = 0; i < 6; i++)
            if (json_key_is(k, kn, keys[i])) {
                if (json_number(v, vn, &x) || x != floor(x) || x < 1 || x > 1e9)
                    return err_set(err, "%s:%zu: %s: not a positive integer (%.*s)", name, line,
                                   keys[i], (int)vn, v);
                *ints[i] = (int)x;
                seen |= 1 << i;
                matched = 1;
            }
        if (matched) continue;
        if (json_key_is(k, kn, "type_vocab_size")) {
            if (json_number(v, vn, &x) || x != floor(x) || x < 1 || x > 1e6)
                return err_set(err, "%s:%zu: type_vocab_size: not a positive integer (%.*s)", name,
                               line, (int)vn, v);
            c->type_vocab_size = (int)x;
        } else if (json_key_is(k, kn, "layer_norm_eps") ||
                   json_key_is(k, kn, "initializer_range") ||
                   json_key_is(k, kn, "hidden_dropout_prob") ||
                   json_key_is(k, kn, "attention_probs_dropout_prob")) {
            /* the ranges bert_config_check enforces; a float that rounds to 0 is checked there */
            if (json_number(v, vn, &x) || !(x >= 0 && x < 1e3))
                return err_set(err, "%s:%zu: %.*s: not a number in [0, 1000) (%.*s)", name, line,
                               (int)kn, k, (int)vn, v);
            if (json_key_is(k, kn, "layer_norm_eps"))
                c->layer_norm_eps = (float)x;
            else if (json_key_is(k, kn, "initializer_range"))
                c->initializer_range = (float)x;
            else if (json_key_is(k, kn, "hidden_dropout_prob"))
                c->hidden_dropout_prob = (float)x;
            else
                c->attention_probs_dropout_prob = (float)x;
        } else if (json_key_is(k, kn, "tie_word_embeddings")) {
            int t = vn == 4 && !memcmp(v, "true", 4), f = vn == 5 && !memcmp(v, "false", 5);
            if (!t && !f)
                return err_set(err, "%s: tie_word_embeddings: true or false, not %.*s", name,
                               (int)(vn > 40 ? 40 : vn), v);
            c->untied = f;
        } else if (json_key_is(k, kn, "hidden_act")) {
            Buf s = {0};
            int bad =
                json_decode_string(&s, v, vn) != 0 || s.len != 4 || memcmp(s.data, "gelu", 4) != 0;
            buf_free(&s);
            if (bad)
                return err_set(err, "%s:%zu: hidden_act %.*s: only \"gelu\" is supported", name,
                               line, (int)vn, v);
        }
    }
    if (r < 0)
        return err_set(err, "%s:%zu: %s (byte %zu)", name, json_line(json, it.pos), it.error,
                       it.pos);
    for (int i = 0; i < 6; i++)
        if (!(seen & (1 << i))) return err_set(err, "%s: no %s", name, keys[i]);
    if (bert_config_check(c, err)) {
        char m[sizeof err->msg];
        snprintf(m, sizeof m, "%s", err->msg);
        return err_set(err, "%s: %s", name, m);
    }
    return 0;
}

void bert_config_json(const BertConfig *c, Buf *out) {
    char t[1024];
    snprintf(
        t, sizeof t,
        "{\n  \"architectures\": [\"BertForPreTraining\"],\n  \"model_type\": \"bert\",\n"
        "  \"attention_probs_dropout_prob\": %.9g,\n  \"hidden_act\": \"gelu\",\n"
        "  \"hidden_dropout_prob\": %.9g,\n  \"hidden_size\": %d,\n  \"initializer_range\": %.9g,\n"
        "  \"intermediate_size\": %d,\n  \"layer_norm_eps\": %.9g,\n  \"max_position_embeddings\": "
        "%d,\n"
        "  \"num_attention_heads\": %d,\n  \"num_hidden_layers\": %d,\n  \"pad_token_id\": 0,\n"
        "  \"position_embedding_type\": \"absolute\",\n  \"tie_word_embeddings\": %s,\n"
        "  \"torch_dtype\": \"float32\",\n  \"type_vocab_size\": %d,\n  \"vocab_size\": %d\n}\n",
        c->attention_probs_dropout_prob, c->hidden_dropout_prob, c->hidden_size,
        c->initializer_range, c->intermediate_size, c->layer_norm_eps, c->max_position_embeddings,
        c->num_attention_heads, c->num_hidden_layers, c->untied ? "false" : "true",
        c->type_vocab_size, c->vocab_size);
    buf_append(out, t, strlen(t));
}

int bert_config_load(BertConfig *c, const char *path, Err *err) {
    Buf b = {0};
    if (read_text_file(path, &b, err)) return -1;
    int rc = bert_config_parse(c, b.data ? b.data : "", b.len, path, err);
    buf_free(&b);
    return rc;
}

int bert_config_check(const BertConfig *c, Err *err) {
    const struct {
        const char *name;
        int v, rows; /* rows: the first dimension of a v x hidden_size tensor */
    } dims[] = {{"vocab_size", c->vocab_size, 1},
                {"hidden_size", c->hidden_size, 1},
                {"num_hidden_layers", c->num_hidden_layers, 0},
                {"num_attention_heads", c->num_attention_heads, 0},
                {"intermediate_size", c->intermediate_size, 1},
                {"max_position_embeddings", c->max_position_embeddings, 1},
                {"type_vocab_size", c->type_vocab_size, 1}};
    size_t nd = sizeof dims / sizeof *dims;
    for (size_t i = 0; i < nd; i++)
        if (dims[i].v < 1) return err_set(err, "%s %d: must be positive", dims[i].name, dims[i].v);
    if (c->hidden_size % c->num_attention_heads)
        return err_set(err, "hidden_size %d is not a multiple of num_attention_heads %d",
                       c->hidden_size, c->num_attention_heads);
    if (c->num_hidden_layers > BERT_MAX_LAYERS)
        return err_set(err, "num_hidden_layers %d: at most %d", c->num_hidden_layers,
                       BERT_MAX_LAYERS);
    /* every matrix (and so every matmul dimension product) fits an int */
    int64_t H = c->hidden_size;
    for (size_t i = 0; i < nd; i++)
        if (dims[i].rows && (int64_t)dims[i].v * H > INT32_MAX)
            return err_set(err, "%s %d x hidden_size %d: a tensor of more than 2^31 - 1 floats",
                           dims[i].name, dims[i].v, c->hidden_size);
    /* each term is below 2^31 and there are at most BERT_MAX_LAYERS layers: no overflow */
    int64_t I = c->intermediate_size, layer = 4 * H * H + 2 * H * I + 9 * H + I;
    int64_t rest = ((int64_t)c->vocab_size + c->max_position_embeddings + c->type_vocab_size) * H +
                   2 * H * H + c->vocab_size + 8 * H + 2 +
                   (c->untied ? (int64_t)c->vocab_size * H : 0);
    if (layer * c->num_hidden_layers + rest > BERT_MAX_PARAMS)
        return err_set(
            err, "num_hidden_layers %d of %lld parameters each: more than 2^34 parameters in all",
            c->num_hidden_layers, (long long)layer);
    if (!(c->hidden_dropout_prob >= 0 && c->hidden_dropout_prob < 1))
        return err_set(err, "hidden_dropout_prob %g: must be in [0, 1)", c->hidden_dropout_prob);
    if (!(c->attention_probs_dropout_prob >= 0 && c->attention_probs_dropout_prob < 1))
        return err_set(err, "attention_probs_dropout_prob %g: must be in [0, 1)",
                       c->attention_probs_dropout_prob);
    if (!(c->layer_norm_eps > 0 && c->layer_norm_eps < 1e3f))
        return err_set(err, "layer_norm_eps %g: must be positive (and below 1000)",
                       c->layer_norm_eps);
    if (!(c->initializer_range >= 0 && c->initializer_range < 1e3f))
        return err_set(err, "initializer_range %g: must be in [0, 1000)", c->initializer_range);
    return 0;
}

/* ---- parameters ---- */

/* Offsets of one encoder layer's tensors, in state-dict order. */
enum { QW, QB, KW, KB, VW, VB, AOW, AOB, LN1W, LN1B, IW, IB, OW, OB, LN2W, LN2B, NLAYER_T };
static const char *const layer_names[NLAYER_T] = {"attention.self.query.weight",
                                                  "attention.self.query.bias",
                                                  "attention.self.key.weight",
                                                  "attention.self.key.bias",
                                                  "attention.self.value.weight",
                                                  "attention.self.value.bias",
                                                  "attention.output.dense.weight",
                                                  "attention.output.dense.bias",
                                                  "attention.output.LayerNorm.weight",
                                                  "attention.output.LayerNorm.bias",
                                                  "intermediate.dense.weight",
                                                  "intermediate.dense.bias",
                                                  "output.dense.weight",
                                                  "output.dense.bias",
                                                  "output.LayerNorm.weight",
                                                  "output.LayerNorm.bias"};
/* the tensors outside the layers: before them (embeddings) and after */
enum { WTE, WPE, WTT, ELNW, ELNB, NHEAD_T };
/* DECW: the untied MLM decoder (tie_word_embeddings false), else the word embeddings */
enum { POOLW, POOLB, MLMBIAS, TRW, TRB, TLNW, TLNB, NSPW, NSPB, DECW, NTAIL_T };

typedef struct Offs {
    size_t head[NHEAD_T], tail[NTAIL_T];
    size_t *layer; /* layers x NLAYER_T */
} Offs;

struct BertAct {
    Offs o;
    int B, S, M;    /* sizes allocated for */
    int Bc, Sc, Mc; /* the last forward's */
    int nmask;      /* masked tokens of the last forward */
    int drop;       /* the last forward applied dropout with pass key dkey */
    uint64_t dkey;
    const BertBatch *batch;
    /* per batch */
    int32_t *ids, *seg, *mrow, *mlabel; /* copies; mrow: token row of each masked token */
    /* Tokens computed: each row up to its last token or masked position
     * (the padding after it is skipped, see bert_forward), packed: row b's
     * tokens are rows off[b] .. off[b + 1] - 1 of every activation, and
     * full[n] is packed row n's place b * S + s in the batch. */
    int32_t *off, *full;
    int ntok;
    float *maskbias; /* B x S: 0 or -10000 */
    int32_t *nsp;
    /* embeddings */
    float *e, *emean, *erstd, *x0;
    /* per layer, layers x ... */
    float *q, *k, *v, *att, *ctx, *r1, *m1, *s1, *x1, *hpre, *h, *r2, *m2, *s2, *x2;
    /* heads */
    float *pin, *ppre, *pooled, *nsplog, *nspprob;
    float *tin, *tpre, *tg, *tmean, *trstd, *t, *logits; /* logits hold the softmax after forward */
    /* backward scratch */
    float *dx, *dx1, *dh, *dq, *dk, *dv, *dctx, *dtmp, *dt, *dlog;
    float *dxl; /* gradient flowing into the top layer output */
    /* The top layer at the rows the heads read (see bert_forward): top[r]
     * is the token row of its row r, [CLS] and the masked tokens of batch
     * row b its rows topoff[b] .. topoff[b + 1] - 1, at sequence positions
     * toppos and batch places topfull; mtop[j] is masked token j's row;
     * xr the layer's input at those rows. sub: the last forward used them. */
    int32_t *top, *topoff, *toppos, *topfull, *mtop;
    int32_t *tidx; /* scratch: token row -> top row */
    int ntop, sub;
    float *xr;
};

static size_t add_tensor(Bert *m, size_t *off, const char *name, int64_t d0, int64_t d1,
                         int decay) {
    BertTensor *t = &m->tensors[m->ntensors++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->rank = d1 ? 2 : 1;
    t->shape[0] = d0;
    t->shape[1] = d1;
    t->n = (size_t)d0 * (size_t)(d1 ? d1 : 1);
    t->off = *off;
    t->decay = decay;
    *off += t->n;
    return t->off;
}

int bert_create(Bert *m, const BertConfig *c, Err *err) {
    memset(m, 0, sizeof *m);
    if (bert_config_check(c, err)) return -1;
    m->c = *c;
    int L = c->num_hidden_layers;
    int64_t V = c->vocab_size, H = c->hidden_size, I = c->intermediate_size;
    m->tensors = xcalloc((size_t)(NHEAD_T + NTAIL_T + L * NLAYER_T), sizeof *m->tensors);
    m->act = xcalloc(1, sizeof *m->act);
    Offs *o = &m->act->o;
    o->layer = xmalloc((size_t)L * NLAYER_T * sizeof *o->layer);
    size_t off = 0;
    o->head[WTE] = add_tensor(m, &off, "bert.embeddings.word_embeddings.weight", V, H, 1);
    o->head[WPE] = add_tensor(m, &off, "bert.embeddings.position_embeddings.weight",
                              c->max_position_embeddings, H, 1);
    o->head[WTT] = add_tensor(m, &off, "bert.embeddings.token_type_embeddings.weight",
                              c->type_vocab_size, H, 1);
    o->head[ELNW] = add_tensor(m, &off, "bert.embeddings.LayerNorm.weight", H, 0, 0);
    o->head[ELNB] = add_tensor(m, &off, "bert.embeddings.LayerNorm.bias", H, 0, 0);
    for (int l = 0; l < L; l++)
        for (int t = 0; t < NLAYER_T; t++) {
            char name[80];
            snprintf(name, sizeof name, "bert.encoder.layer.%d.%s", l, layer_names[t]);
            int64_t d0 = t == IW || t == IB ? I : H;
            int64_t d1 = t == QW || t == KW || t == VW || t == AOW ? H
                         : t == IW                                 ? H
                         : t == OW                                 ? I
                                                                   : 0;
            int decay = t == QW || t == KW || t == VW || t == AOW || t == IW || t == OW;
            o->layer[l * NLAYER_T + t] = add_tensor(m, &off, name, d0, d1, decay);
        }
    o->tail[POOLW] = add_tensor(m, &off, "bert.pooler.dense.weight", H, H, 1);
    o->tail[POOLB] = add_tensor(m, &off, "bert.pooler.dense.bias", H, 0, 0);
    o->tail[MLMBIAS] = add_tensor(m, &off, "cls.predictions.bias", V, 0, 0);
    o->tail[TRW] = add_tensor(m, &off, "cls.predictions.transform.dense.weight", H, H, 1);
    o->tail[TRB] = add_tensor(m, &off, "cls.predictions.transform.dense.bias", H, 0, 0);
    o->tail[TLNW] = add_tensor(m, &off, "cls.predictions.transform.LayerNorm.weight", H, 0, 0);
    o->tail[TLNB] = add_tensor(m, &off, "cls.predictions.transform.LayerNorm.bias", H, 0, 0);
    o->tail[NSPW] = add_tensor(m, &off, "cls.seq_relationship.weight", 2, H, 1);
    o->tail[NSPB] = add_tensor(m, &off, "cls.seq_relationship.bias", 2, 0, 0);
    o->tail[DECW] =
        c->untied ? add_tensor(m, &off, "cls.predictions.decoder.weight", V, H, 1) : o->head[WTE];
    m->nparams = off;
    m->params = xcalloc_huge(off, sizeof *m->params);
    m->grads = xcalloc_huge(off, sizeof *m->grads);
    return 0;
}

static void act_free(BertAct *a);

void bert_free(Bert *m) {
    if (m->act) {
        act_free(m->act);
        free(m->act->o.layer);
        free(m->act);
    }
    free(m->params);
    free(m->grads);
    free(m->tensors);
    memset(m, 0, sizeof *m);
}

const BertTensor *bert_tensor(const Bert *m, int i) {
    return i >= 0 && i < m->ntensors ? &m->tensors[i] : NULL;
}

const BertTensor *bert_tensor_named(const Bert *m, const char *name) {
    for (int i = 0; i < m->ntensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0) return &m->tensors[i];
    return NULL;
}

/* ---- threads ---- */

static int threads_wanted; /* bert_set_threads; 0: all cores */

static int nthreads(void) {
    if (!threads_wanted) threads_wanted = cli_ncpus();
    return threads_wanted;
}

void bert_set_threads(int n) {
    threads_wanted = n > 0 ? n : 0;
    omp_set_num_threads(nthreads()); /* the optimizer's loops on this thread too */
}

/* ---- initial weights ----
 *
 * Hugging Face's BertPreTrainedModel._init_weights and NVIDIA's
 * init_bert_weights: every matrix and embedding N(0, initializer_range),
 * not truncated (torch's normal_; Google's TensorFlow BERT truncates at 2
 * sigma, the PyTorch trainers do not), biases 0, LayerNorm weight 1 and
 * bias 0. The [PAD] row of the word embeddings is drawn like the others,
 * as NVIDIA does (Hugging Face zeroes the row of pad_token_id).
 *
 * The values come from a counter-based generator, so each depends only on
 * (seed, tensor name, index) and the tensors fill in parallel with the
 * same bytes for any thread count: element pair k of a tensor is
 * Box-Muller on two splitmix64 outputs at counters 2k + 1 and 2k + 2 of
 * the tensor's key (splitmix64 is a counter hashed by its finaliser);
 * element 2k takes the cosine, 2k + 1 the sine. The radius is computed in
 * double from a 53-bit uniform in (0, 1] (tails out to 8.6 sigma), the
 * angle in float. Keyed by the name, a tensor's values do not depend on
 * the model's other tensors (a 2-layer and a 4-layer model share their
 * first layers' initial weights). */

static inline uint64_t init_mix(uint64_t z) { /* splitmix64's finaliser */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#define INIT_GOLDEN 0x9e3779b97f4a7c15ull

/* the generator's key of a tensor: seed and the name's FNV-1a hash, mixed */
static uint64_t init_key(uint64_t seed, const char *name) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = (h ^ *c) * 0x100000001b3ull;
    return init_mix(init_mix(seed + INIT_GOLDEN) ^ h);
}

/* p[0..n) = range * N(0, 1), the elements of the tensor of key from index
 * 0; called by every thread of a parallel region, which share the pairs */
static void init_normal(float *p, size_t n, uint64_t key, float range) {
    size_t pairs = (n + 1) / 2;
#pragma omp for schedule(static) nowait
    for (size_t k = 0; k < pairs; k++) {
        uint64_t a = init_mix(key + (2 * k + 1) * INIT_GOLDEN),
                 b = init_mix(key + (2 * k + 2) * INIT_GOLDEN);
        double u1 = (double)((a >> 11) + 1) * 0x1.0p-53; /* (0, 1] */
        float r = (float)sqrt(-2.0 * log(u1)), t = 6.28318531f * ((float)(b >> 40) * 0x1.0p-24f);
        p[2 * k] = r * cosf(t) * range;
        if (2 * k + 1 < n) p[2 * k + 1] = r * sinf(t) * range;
    }
}

void bert_init_weights(Bert *m, uint64_t seed) {
    /* one parallel region: every thread meets each tensor's loop in turn
     * and takes its share (no barrier between tensors: no value depends on
     * another) */
#pragma omp parallel num_threads(nthreads())
    for (int i = 0; i < m->ntensors; i++) {
        const BertTensor *t = &m->tensors[i];
        float *p = m->params + t->off;
        size_t len = strlen(t->name);
        int is_ln_w = strstr(t->name, "LayerNorm.weight") != NULL;
        int is_bias = len > 5 && strcmp(t->name + len - 5, ".bias") == 0;
        if (is_ln_w || is_bias) {
#pragma omp for schedule(static) nowait
            for (size_t j = 0; j < t->n; j++)
                p[j] = is_ln_w ? 1.0f : 0.0f;
        } else {
            init_normal(p, t->n, init_key(seed, t->name), m->c.initializer_range);
        }
    }
}

void bert_zero_grad(Bert *m) { memset(m->grads, 0, m->nparams * sizeof *m->grads); }

/* ---- batch ---- */

int bert_batch_check(const Bert *m, const BertBatch *b, Err *err) {
    const BertConfig *c = &m->c;
    if (b->B < 1 || b->S < 2 || b->M < 0) return err_set(err, "batch of %d x %d", b->B, b->S);
    if ((int64_t)b->B * b->S > INT32_MAX || (int64_t)b->B * b->M > INT32_MAX)
        return err_set(err, "batch of %d x %d tokens (%d masked slots a row): more than 2^31 - 1",
                       b->B, b->S, b->M);
    if (b->S > c->max_position_embeddings)
        return err_set(err, "sequence length %d exceeds max_position_embeddings %d", b->S,
                       c->max_position_embeddings);
    for (int i = 0; i < b->B; i++) {
        for (int s = 0; s < b->S; s++) {
            int32_t id = b->input_ids[i * b->S + s], sg = b->segment_ids[i * b->S + s];
            if (id < 0 || id >= c->vocab_size)
                return err_set(err, "row %d: input id %d outside the vocabulary (%d)", i, id,
                               c->vocab_size);
            if (sg < 0 || sg >= c->type_vocab_size)
                return err_set(err, "row %d: segment id %d", i, sg);
        }
        for (int k = 0; k < b->M; k++) {
            int32_t p = b->masked_lm_positions[i * b->M + k], id = b->masked_lm_ids[i * b->M + k];
            if (p == 0) break;
            if (p < 0 || p >= b->S)
                return err_set(err, "row %d: masked position %d outside the sequence", i, p);
            if (id < 0 || id >= c->vocab_size)
                return err_set(err, "row %d: masked label %d outside the vocabulary (%d)", i, id,
                               c->vocab_size);
        }
        int32_t l = b->next_sentence_labels[i];
        if (l != 0 && l != 1) return err_set(err, "row %d: next_sentence_label %d", i, l);
    }
    return 0;
}

/* ---- activations ---- */

static void act_free(BertAct *a) {
    float **f[] = {&a->maskbias, &a->e,      &a->emean,  &a->erstd,   &a->x0,   &a->q,    &a->k,
                   &a->v,        &a->att,    &a->ctx,    &a->r1,      &a->m1,   &a->s1,   &a->x1,
                   &a->hpre,     &a->h,      &a->r2,     &a->m2,      &a->s2,   &a->x2,   &a->pin,
                   &a->ppre,     &a->pooled, &a->nsplog, &a->nspprob, &a->tin,  &a->tpre, &a->tg,
                   &a->tmean,    &a->trstd,  &a->t,      &a->logits,  &a->dx,   &a->dx1,  &a->dh,
                   &a->dq,       &a->dk,     &a->dv,     &a->dctx,    &a->dtmp, &a->dt,   &a->dlog,
                   &a->dxl,      &a->xr};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        free(*f[i]), *f[i] = NULL;
    free(a->ids), free(a->seg), free(a->mrow), free(a->mlabel), free(a->nsp);
    free(a->off), free(a->full);
    free(a->top), free(a->topoff), free(a->toppos), free(a->topfull), free(a->mtop), free(a->tidx);
    a->ids = a->seg = a->mrow = a->mlabel = a->nsp = a->off = a->full = NULL;
    a->top = a->topoff = a->toppos = a->topfull = a->mtop = a->tidx = NULL;
    a->B = a->S = a->M = 0;
}

#define FA(n) xmalloc_huge((size_t)(n) * sizeof(float))

static void act_reserve(Bert *m, int B, int S, int M) {
    BertAct *a = m->act;
    if (B <= a->B && S <= a->S && M <= a->M) return;
    act_free(a); /* arrays only: the offsets stay */
    B = B > a->B ? B : a->B, S = S > a->S ? S : a->S, M = M > a->M ? M : a->M;
    a->B = B, a->S = S, a->M = M;
    const BertConfig *c = &m->c;
    size_t N = (size_t)B * S, H = c->hidden_size, I = c->intermediate_size,
           L = c->num_hidden_layers;
    size_t A = c->num_attention_heads, V = c->vocab_size, NM = (size_t)B * (M ? M : 1);
    a->ids = xmalloc(N * sizeof *a->ids), a->seg = xmalloc(N * sizeof *a->seg);
    a->mrow = xmalloc(NM * sizeof *a->mrow), a->mlabel = xmalloc(NM * sizeof *a->mlabel);
    a->nsp = xmalloc((size_t)B * sizeof *a->nsp);
    a->off = xmalloc((size_t)(B + 1) * sizeof *a->off), a->full = xmalloc(N * sizeof *a->full);
    a->maskbias = FA(N);
    a->e = FA(N * H), a->emean = FA(N), a->erstd = FA(N), a->x0 = FA(N * H);
    a->q = FA(L * N * H), a->k = FA(L * N * H), a->v = FA(L * N * H);
    /* on small pages: of each pair's S x S block only the rows and columns
     * of its tokens are touched, and a huge page would make the rest
     * resident (bert_small at 512/80, batch 8: 56 MB more at the peak) */
    a->att = xmalloc(L * B * A * S * S * sizeof(float));
    a->ctx = FA(L * N * H), a->r1 = FA(L * N * H), a->m1 = FA(L * N), a->s1 = FA(L * N),
    a->x1 = FA(L * N * H);
    a->hpre = FA(L * N * I), a->h = FA(L * N * I), a->r2 = FA(L * N * H), a->m2 = FA(L * N),
    a->s2 = FA(L * N);
    a->x2 = FA(L * N * H);
    a->pin = FA(B * H), a->ppre = FA(B * H), a->pooled = FA(B * H), a->nsplog = FA(B * 2),
    a->nspprob = FA(B * 2);
    a->tin = FA(NM * H), a->tpre = FA(NM * H), a->tg = FA(NM * H), a->tmean = FA(NM),
    a->trstd = FA(NM);
    a->t = FA(NM * H), a->logits = FA(NM * V);
    a->dx = FA(N * H), a->dx1 = FA(N * H), a->dh = FA(N * I), a->dq = FA(N * H), a->dk = FA(N * H);
    a->dv = FA(N * H), a->dctx = FA(N * H), a->dtmp = FA(N * H + 2 * (size_t)B * (H + 1));
    a->dt = FA(NM * H), a->dlog = FA(NM * V), a->dxl = FA(N * H);
    a->top = xmalloc(N * sizeof *a->top), a->topoff = xmalloc((size_t)(B + 1) * sizeof *a->topoff);
    a->toppos = xmalloc(N * sizeof *a->toppos), a->topfull = xmalloc(N * sizeof *a->topfull);
    a->mtop = xmalloc(NM * sizeof *a->mtop), a->xr = FA(N * H);
    a->tidx = xmalloc(N * sizeof *a->tidx);
}

/* ---- kernels ---- */

/* Matrix products go through train/cpukern (packed, AVX2 + FMA where the
 * CPU has it); the functions here add what a BLAS cannot: bias, GELU,
 * dropout and the residual in the product's epilogue, while its tile is in
 * cache, and GELU's derivative in that of its input gradient. */

#define ECHUNK 16384 /* elements per task of an element-wise loop (a multiple of 8) */

static size_t zmin(size_t a, size_t b) { return a < b ? a : b; }

/* What a linear layer's epilogue adds to x W^T, in this order: the bias,
 * dropout (site key, threshold, 1 / (1 - p); element index row * O + col),
 * the residual (N x O), and GELU into act (act = gelu(C), C kept). */
typedef struct LinEpi {
    const float *bias, *res;
    float *act;
    const int32_t *full; /* dropout: packed row -> batch row (bert_forward) */
    int drop;
    uint64_t key;
    uint32_t thr;
    float keep;
} LinEpi;

static void lin_epi(void *ctx, float *C, int ldc, int i0, int i1, int j0, int j1) {
    const LinEpi *e = ctx;
    for (int i = i0; i < i1; i++) {
        float *c = C + (size_t)i * ldc;
        if (e->bias)
            for (int j = j0; j < j1; j++)
                c[j] += e->bias[j];
        if (e->drop) {
            uint32_t base = (uint32_t)((size_t)e->full[i] * ldc);
            vdropout(c + j0, c + j0, (size_t)(j1 - j0), e->key, base + (uint32_t)j0, e->thr,
                     e->keep);
        }
        if (e->res)
            for (int j = j0; j < j1; j++)
                c[j] += e->res[(size_t)i * ldc + j];
        if (e->act) vgelu(e->act + (size_t)i * ldc + j0, c + j0, (size_t)(j1 - j0));
    }
}

/* out[n, o] = b[o] + sum_k in[n, k] W[o, k] (W is [O, K], PyTorch's layout) */
static void linear_fwd(float *out, const float *in, const float *W, const float *b, int N, int K,
                       int O) {
    LinEpi e = {.bias = b};
    mm(N, O, K, in, K, 0, W, K, 1, out, O, 0, b ? lin_epi : NULL, &e, nthreads());
}

/* GELU's derivative applied to a finished block of dh = dout Wo */
static void gelu_bwd_epi(void *ctx, float *C, int ldc, int i0, int i1, int j0, int j1) {
    const float *pre = ctx;
    for (int i = i0; i < i1; i++)
        vgelu_bwd(C + (size_t)i * ldc + j0, C + (size_t)i * ldc + j0, pre + (size_t)i * ldc + j0,
                  (size_t)(j1 - j0));
}

/* din = dout W (din may be NULL; added to din with din_acc, then epi);
 * dW[o, k] += sum_n dout[n, o] in[n, k]; db[o] += sum_n dout[n, o] */
static void linear_bwd_ex(float *din, int din_acc, MmEpilogue epi, void *ectx, float *dW, float *db,
                          const float *dout, const float *in, const float *W, int N, int K, int O) {
    int T = nthreads();
    if (din) mm(N, K, O, dout, O, 0, W, K, 0, din, K, din_acc, epi, ectx, T);
    /* db's column sums while dW's product packs dout's columns */
    mm_rowsum(O, K, N, dout, O, 1, in, K, 0, dW, K, 1, db, T);
}

static void linear_bwd(float *din, float *dW, float *db, const float *dout, const float *in,
                       const float *W, int N, int K, int O) {
    linear_bwd_ex(din, 0, NULL, NULL, dW, db, dout, in, W, N, K, O);
}

static void layernorm_fwd(float *out, float *mean, float *rstd, const float *in, const float *w,
                          const float *b, int N, int H, float eps) {
#pragma omp parallel for schedule(dynamic, 32) num_threads(nthreads())
    for (int n = 0; n < N; n++)
        vln_row(out + (size_t)n * H, &mean[n], &rstd[n], in + (size_t)n * H, w, b, (size_t)H, eps);
}

/* din = d(LN)/d(in) . dout (set); dw, db += ... (per column, rows in order) */
static void layernorm_bwd(float *din, float *dw, float *db, const float *dout, const float *in,
                          const float *w, const float *mean, const float *rstd, int N, int H) {
#pragma omp parallel for schedule(dynamic, 32) num_threads(nthreads())
    for (int n = 0; n < N; n++)
        vln_bwd_row(din + (size_t)n * H, dout + (size_t)n * H, in + (size_t)n * H, w, mean[n],
                    rstd[n], (size_t)H);
    enum { W = 128 };
    int nc = (H + W - 1) / W;
#pragma omp parallel for schedule(static) num_threads(nthreads()) if (nc > 1)
    for (int c = 0; c < nc; c++) {
        int i0 = c * W, w_ = H - i0 < W ? H - i0 : W;
        float sw[W] = {0}, sb[W] = {0};
        for (int n = 0; n < N; n++) {
            const float *g = dout + (size_t)n * H + i0, *x = in + (size_t)n * H + i0;
            float mu = mean[n], rs = rstd[n];
            for (int i = 0; i < w_; i++) {
                sw[i] += g[i] * (x[i] - mu) * rs;
                sb[i] += g[i];
            }
        }
        for (int i = 0; i < w_; i++)
            dw[i0 + i] += sw[i], db[i0 + i] += sb[i];
    }
}

/* din = dout * gelu'(in) */
static void gelu_bwd(float *din, const float *dout, const float *in, size_t n) {
    size_t nc = (n + ECHUNK - 1) / ECHUNK;
#pragma omp parallel for schedule(static) num_threads(nthreads())
    for (size_t c = 0; c < nc; c++)
        vgelu_bwd(din + c * ECHUNK, dout + c * ECHUNK, in + c * ECHUNK,
                  zmin(ECHUNK, n - c * ECHUNK));
}

/* out = in * (kept ? 1 / (1 - p) : 0) under site key `key` (dropout.h) for
 * N packed rows of H; element (n, i) is element full[n] * H + i of the
 * batch's [B * S, H]. The same call applies a mask forward and to a
 * gradient backward. out may be in. */
static void dropout_apply(float *out, const float *in, const int32_t *full, int N, int H,
                          uint64_t key, float p) {
    uint32_t thr = dropout_threshold(p);
    float keep = 1.0f / (1.0f - p);
#pragma omp parallel for schedule(dynamic, 32) num_threads(nthreads())
    for (int n = 0; n < N; n++) {
        uint32_t base = (uint32_t)((size_t)full[n] * H);
        const float *x = in + (size_t)n * H;
        float *y = out + (size_t)n * H;
        vdropout(y, x, (size_t)H, key, base, thr, keep);
    }
}

/* Self-attention of one layer: q [query rows, H], k, v [tokens, H] -> ctx
 * [query rows, H], probs [B, A, S, S] (before dropout; ctx uses the
 * probabilities after dropout with site key dkey when dprob > 0). Row b's
 * keys are token rows off[b] .. off[b + 1] - 1 (n of them), its queries
 * rows qoff[b] .. qoff[b + 1] - 1 of q (nq), at sequence positions qpos
 * (NULL: 0 .. nq - 1, every token). A (row, head) pair's probabilities are
 * the top left nq x n of its S x S block, and the dropout mask's element
 * (i, j) is element (b * A + h) * S * S + qpos[i] * S + j, as for the
 * whole sequence. Per pair: scores Q K^T as one product, the masked softmax
 * row by row, then (dropped) P V. */
static void attention_fwd(float *ctx, float *att, const float *q, const float *k, const float *v,
                          const float *maskbias, const int32_t *off, const int32_t *qoff,
                          const int32_t *qpos, int B, int S, int H, int A, uint64_t dkey,
                          float dprob) {
    int D = H / A;
    float scale = 1.0f / sqrtf((float)D);
    uint32_t thr = dropout_threshold(dprob);
    float dscale = dprob > 0 ? 1.0f / (1.0f - dprob) : 1.0f;
#pragma omp parallel num_threads(nthreads())
    {
        float *pd = dprob > 0 ? xmalloc((size_t)S * S * sizeof *pd) : NULL;
#pragma omp for schedule(dynamic)
        for (int ba = 0; ba < B * A; ba++) {
            int b = ba / A, h = ba % A, n = off[b + 1] - off[b], nq = qoff[b + 1] - qoff[b];
            size_t o = (size_t)off[b] * H + (size_t)h * D, oq = (size_t)qoff[b] * H + (size_t)h * D;
            float *p = att + (size_t)ba * S * S;
            mm(nq, n, D, q + oq, H, 0, k + o, H, 1, p, S, 0, NULL, NULL, 1);
            const float *mb = maskbias + (size_t)b * S;
            for (int i = 0; i < nq; i++) {
                float *pi = p + (size_t)i * S;
                for (int j = 0; j < n; j++)
                    pi[j] = pi[j] * scale + mb[j];
                float mx = vmax(pi, (size_t)n, NULL);
                float sum = (float)vexp_sum(pi, pi, mx, (size_t)n);
                for (int j = 0; j < n; j++)
                    pi[j] /= sum;
            }
            const float *pv = p;
            if (pd) {
                for (int i = 0; i < nq; i++) {
                    int s = qpos ? qpos[qoff[b] + i] : i;
                    uint32_t base = (uint32_t)(((size_t)ba * S + s) * S);
                    const float *pi = p + (size_t)i * S;
                    float *di = pd + (size_t)i * S;
                    vdropout(di, pi, (size_t)n, dkey, base, thr, dscale);
                }
                pv = pd;
            }
            mm(nq, D, n, pv, S, 0, v + o, H, 0, ctx + oq, H, 0, NULL, NULL, 1);
        }
        free(pd);
    }
}

/* attention_fwd's backward pass: dq [query rows, H], dk, dv [tokens, H]
 * (set) from dctx [query rows, H]. */
static void attention_bwd(float *dq, float *dk, float *dv, const float *dctx, const float *att,
                          const float *q, const float *k, const float *v, const int32_t *off,
                          const int32_t *qoff, const int32_t *qpos, int B, int S, int H, int A,
                          uint64_t dkey, float dprob) {
    int D = H / A;
    float scale = 1.0f / sqrtf((float)D);
    uint32_t thr = dropout_threshold(dprob);
    float dscale = dprob > 0 ? 1.0f / (1.0f - dprob) : 1.0f;
    size_t SS = (size_t)S * S;
#pragma omp parallel num_threads(nthreads())
    {
        /* the probabilities' gradient, the dropout mask (0 or 1 / (1 - p))
         * and the dropped probabilities: one (row, head) pair's at a time,
         * so they stay in this core's cache */
        float *dp = xmalloc((dprob > 0 ? 3 : 1) * SS * sizeof *dp);
        float *ms = dprob > 0 ? dp + SS : NULL, *pd = ms ? ms + SS : NULL;
#pragma omp for schedule(dynamic)
        for (int ba = 0; ba < B * A; ba++) {
            int b = ba / A, h = ba % A, n = off[b + 1] - off[b], nq = qoff[b + 1] - qoff[b];
            size_t o = (size_t)off[b] * H + (size_t)h * D, oq = (size_t)qoff[b] * H + (size_t)h * D;
            const float *p = att + (size_t)ba * SS, *pv = p;
            if (ms) {
                for (int i = 0; i < nq; i++) {
                    int s = qpos ? qpos[qoff[b] + i] : i;
                    uint32_t base = (uint32_t)(((size_t)ba * S + s) * S);
                    float *mi = ms + (size_t)i * S, *di = pd + (size_t)i * S;
                    const float *pi = p + (size_t)i * S;
                    vdropout(mi, NULL, (size_t)n, dkey, base, thr, dscale);
                    for (int j = 0; j < n; j++)
                        di[j] = pi[j] * mi[j];
                }
                pv = pd;
            }
            /* d(dropped probabilities) = dctx V^T; dV = P'^T dctx */
            mm(nq, n, D, dctx + oq, H, 0, v + o, H, 1, dp, S, 0, NULL, NULL, 1);
            mm(n, D, nq, pv, S, 1, dctx + oq, H, 0, dv + o, H, 0, NULL, NULL, 1);
            for (int i = 0; i < nq; i++) {
                float *dpi = dp + (size_t)i * S, dot = 0;
                const float *pi = p + (size_t)i * S;
                if (ms)
                    for (int j = 0; j < n; j++)
                        dpi[j] *= ms[(size_t)i * S + j]; /* d(probabilities before dropout) */
                for (int j = 0; j < n; j++)
                    dot += dpi[j] * pi[j];
                for (int j = 0; j < n; j++)
                    dpi[j] = pi[j] * (dpi[j] - dot) * scale; /* d(scores before scale) */
            }
            mm(nq, D, n, dp, S, 0, k + o, H, 0, dq + oq, H, 0, NULL, NULL, 1);
            mm(n, D, nq, dp, S, 1, q + oq, H, 0, dk + o, H, 0, NULL, NULL, 1);
        }
        free(dp);
    }
}

/* ---- forward ---- */

#define PP(off) (m->params + (off))
#define GG(off) (m->grads + (off))
#define LO(l, t) (a->o.layer[(size_t)(l)*NLAYER_T + (t)])

/* The rows one encoder layer computes: its queries and everything after
 * attention run on n rows, the input's rows top[0 .. n) (top NULL: all N
 * token rows, in order), which are batch row b's rows off[b] .. off[b + 1] - 1
 * at sequence positions pos (NULL: 0, 1, ...) and batch places full (for
 * dropout masks); xq is the input at those rows. */
typedef struct LayerRows {
    int n;
    const int32_t *top, *off, *pos, *full;
    const float *xq;
} LayerRows;

/* Encoder layer l forward on input x (all N token rows; keys and values
 * at every token): its activations at rows r (N rows in a->k, a->v; r->n in
 * the others) from the slots of layer l in a's arrays. */
static void layer_fwd(Bert *m, int l, const float *x, const LayerRows *r, float hp, float ap) {
    BertAct *a = m->act;
    int B = a->Bc, S = a->Sc, N = a->ntok, n = r->n, H = m->c.hidden_size;
    int I = m->c.intermediate_size, A = m->c.num_attention_heads, T = nthreads();
    size_t NH = (size_t)N * H, NI = (size_t)N * I;
    float *q = a->q + l * NH, *k = a->k + l * NH, *v = a->v + l * NH, *ctx = a->ctx + l * NH;
    float *att = a->att + (size_t)l * B * A * S * S, *r1 = a->r1 + l * NH, *x1 = a->x1 + l * NH;
    float *hpre = a->hpre + l * NI, *h = a->h + l * NI, *r2 = a->r2 + l * NH, *x2 = a->x2 + l * NH;
    float eps = m->c.layer_norm_eps;
    LinEpi sub = {
        .full = r->full, .drop = hp > 0, .thr = dropout_threshold(hp), .keep = 1.0f / (1.0f - hp)};
    linear_fwd(q, r->xq, PP(LO(l, QW)), PP(LO(l, QB)), n, H, H);
    linear_fwd(k, x, PP(LO(l, KW)), PP(LO(l, KB)), N, H, H);
    linear_fwd(v, x, PP(LO(l, VW)), PP(LO(l, VB)), N, H, H);
    attention_fwd(ctx, att, q, k, v, a->maskbias, a->off, r->off, r->pos, B, S, H, A,
                  dropout_site_key(a->dkey, 1 + 3 * l), ap);
    /* r1 = dropout(ctx Wao^T + bao) + x, in the product's epilogue */
    sub.bias = PP(LO(l, AOB)), sub.res = r->xq, sub.act = NULL;
    sub.key = dropout_site_key(a->dkey, 2 + 3 * l);
    mm(n, H, H, ctx, H, 0, PP(LO(l, AOW)), H, 1, r1, H, 0, lin_epi, &sub, T);
    layernorm_fwd(x1, a->m1 + (size_t)l * N, a->s1 + (size_t)l * N, r1, PP(LO(l, LN1W)),
                  PP(LO(l, LN1B)), n, H, eps);
    /* hpre = x1 Wi^T + bi, h = gelu(hpre) */
    LinEpi up = {.bias = PP(LO(l, IB)), .act = h};
    mm(n, I, H, x1, H, 0, PP(LO(l, IW)), H, 1, hpre, I, 0, lin_epi, &up, T);
    /* r2 = dropout(h Wo^T + bo) + x1 */
    sub.bias = PP(LO(l, OB)), sub.res = x1;
    sub.key = dropout_site_key(a->dkey, 3 + 3 * l);
    mm(n, H, I, h, I, 0, PP(LO(l, OW)), I, 1, r2, H, 0, lin_epi, &sub, T);
    layernorm_fwd(x2, a->m2 + (size_t)l * N, a->s2 + (size_t)l * N, r2, PP(LO(l, LN2W)),
                  PP(LO(l, LN2B)), n, H, eps);
}

/* Encoder layer l backward: dx holds d(layer output) at rows r (r->n rows)
 * and gets d(layer input) at all N token rows (a->dxl's size); the weight
 * gradients are added. xin is the layer's input. */
static void layer_bwd(Bert *m, int l, float *dx, const float *xin, const LayerRows *r, float hp,
                      float ap) {
    BertAct *a = m->act;
    int B = a->Bc, S = a->Sc, N = a->ntok, n = r->n, H = m->c.hidden_size;
    int I = m->c.intermediate_size, A = m->c.num_attention_heads;
    size_t NH = (size_t)N * H, NI = (size_t)N * I;
    float *q = a->q + l * NH, *k = a->k + l * NH, *v = a->v + l * NH, *ctx = a->ctx + l * NH;
    float *att = a->att + (size_t)l * B * A * S * S, *r1 = a->r1 + l * NH, *x1 = a->x1 + l * NH;
    float *hpre = a->hpre + l * NI, *h = a->h + l * NI, *r2 = a->r2 + l * NH;
    size_t nH = (size_t)n * H;
    /* x2 = LN2(r2), r2 = dropout(h Wo^T + bo) + x1 */
    float *dr2 = a->dx1;
    layernorm_bwd(dr2, GG(LO(l, LN2W)), GG(LO(l, LN2B)), dx, r2, PP(LO(l, LN2W)),
                  a->m2 + (size_t)l * N, a->s2 + (size_t)l * N, n, H);
    const float *dff = dr2; /* d(feed-forward output), before its dropout */
    if (hp > 0)
        dropout_apply(a->dtmp, dr2, r->full, n, H, dropout_site_key(a->dkey, 3 + 3 * l), hp),
            dff = a->dtmp;
    /* dh = (dff Wo) gelu'(hpre), GELU's derivative in the product's epilogue */
    linear_bwd_ex(a->dh, 0, gelu_bwd_epi, hpre, GG(LO(l, OW)), GG(LO(l, OB)), dff, h, PP(LO(l, OW)),
                  n, I, H);
    /* dx1 = dr2 + dh Wi (the product added to dr2) */
    float *dx1 = a->dtmp;
    memcpy(dx1, dr2, nH * sizeof *dx1);
    linear_bwd_ex(dx1, 1, NULL, NULL, GG(LO(l, IW)), GG(LO(l, IB)), a->dh, x1, PP(LO(l, IW)), n, H,
                  I);
    /* x1 = LN1(r1), r1 = dropout(ctx Wao^T + bao) + xin */
    float *dr1 = dx; /* dx is free now */
    layernorm_bwd(dr1, GG(LO(l, LN1W)), GG(LO(l, LN1B)), dx1, r1, PP(LO(l, LN1W)),
                  a->m1 + (size_t)l * N, a->s1 + (size_t)l * N, n, H);
    const float *dao = dr1; /* d(attention output), before its dropout */
    if (hp > 0)
        dropout_apply(a->dtmp, dr1, r->full, n, H, dropout_site_key(a->dkey, 2 + 3 * l), hp),
            dao = a->dtmp;
    linear_bwd(a->dctx, GG(LO(l, AOW)), GG(LO(l, AOB)), dao, ctx, PP(LO(l, AOW)), n, H, H);
    attention_bwd(a->dq, a->dk, a->dv, a->dctx, att, q, k, v, a->off, r->off, r->pos, B, S, H, A,
                  dropout_site_key(a->dkey, 1 + 3 * l), ap);
    /* d(xin) = dr1 + the three projections' input gradients: the query's
     * at the layer's rows, the key's and value's at every token */
    linear_bwd_ex(dr1, 1, NULL, NULL, GG(LO(l, QW)), GG(LO(l, QB)), a->dq, r->xq, PP(LO(l, QW)), n,
                  H, H);
    if (r->top) {
        /* a->dx1 (dr2) is free: the key's and value's into it, then dr1 */
        linear_bwd_ex(a->dx1, 0, NULL, NULL, GG(LO(l, KW)), GG(LO(l, KB)), a->dk, xin,
                      PP(LO(l, KW)), N, H, H);
        linear_bwd_ex(a->dx1, 1, NULL, NULL, GG(LO(l, VW)), GG(LO(l, VB)), a->dv, xin,
                      PP(LO(l, VW)), N, H, H);
        for (int i = 0; i < n; i++) {
            float *d = a->dx1 + (size_t)r->top[i] * H;
            const float *s = dr1 + (size_t)i * H;
            for (int j = 0; j < H; j++)
                d[j] += s[j];
        }
        memcpy(dx, a->dx1, NH * sizeof *dx);
    } else {
        linear_bwd_ex(dr1, 1, NULL, NULL, GG(LO(l, KW)), GG(LO(l, KB)), a->dk, xin, PP(LO(l, KW)),
                      N, H, H);
        linear_bwd_ex(dr1, 1, NULL, NULL, GG(LO(l, VW)), GG(LO(l, VB)), a->dv, xin, PP(LO(l, VW)),
                      N, H, H);
    }
}

void bert_forward(Bert *m, const BertBatch *bt, BertLoss *loss, float *mlm_logits,
                  float *nsp_logits) {
    const BertConfig *c = &m->c;
    act_reserve(m, bt->B, bt->S, bt->M);
    BertAct *a = m->act;
    int B = bt->B, S = bt->S, H = c->hidden_size;
    int V = c->vocab_size, L = c->num_hidden_layers, BS = B * S, T = nthreads();
    float eps = c->layer_norm_eps;
    a->Bc = B, a->Sc = S, a->Mc = bt->M, a->batch = bt;
    memcpy(a->ids, bt->input_ids, (size_t)BS * sizeof *a->ids);
    memcpy(a->seg, bt->segment_ids, (size_t)BS * sizeof *a->seg);
    memcpy(a->nsp, bt->next_sentence_labels, (size_t)B * sizeof *a->nsp);
    for (int i = 0; i < BS; i++)
        a->maskbias[i] = bt->input_mask[i] ? 0.0f : -10000.0f;
    /* The tokens computed: each row up to its last token (input_mask 1) or
     * masked position, at least [CLS]. The padding after it changes nothing
     * the losses or gradients see, bit for bit: its keys get the scores
     * -10000 + s, whose exp is exactly 0 in float, so they add exact zeros
     * to every sum over keys, and its own outputs reach no loss, so its
     * gradients are exact zeros; skipping it only saves the work. */
    /* Masked tokens: per row, positions until the first 0
     * (pretraining_dataset's rule). */
    int nm = 0;
    a->off[0] = 0;
    for (int b = 0; b < B; b++) {
        int n = m->keep_padding ? S : 1;
        for (int s = 0; s < S; s++)
            if (bt->input_mask[b * S + s]) n = s + 1 > n ? s + 1 : n;
        for (int k = 0; k < bt->M; k++) {
            int32_t p = bt->masked_lm_positions[b * bt->M + k];
            if (p == 0) break;
            n = p + 1 > n ? p + 1 : n;
            a->mrow[nm] = a->off[b] + p;
            a->mlabel[nm] = bt->masked_lm_ids[b * bt->M + k];
            nm++;
        }
        for (int s = 0; s < n; s++)
            a->full[a->off[b] + s] = b * S + s;
        a->off[b + 1] = a->off[b] + n;
    }
    int N = a->ntok = a->off[B];
    a->nmask = nm;

    /* embeddings */
    const float *wte = PP(a->o.head[WTE]), *wpe = PP(a->o.head[WPE]), *wtt = PP(a->o.head[WTT]);
#pragma omp parallel for schedule(dynamic, 32) num_threads(T)
    for (int n = 0; n < N; n++) {
        int f = a->full[n];
        const float *w = wte + (size_t)a->ids[f] * H, *p = wpe + (size_t)(f % S) * H,
                    *t = wtt + (size_t)a->seg[f] * H;
        float *e = a->e + (size_t)n * H;
        for (int i = 0; i < H; i++)
            e[i] = w[i] + p[i] + t[i];
    }
    layernorm_fwd(a->x0, a->emean, a->erstd, a->e, PP(a->o.head[ELNW]), PP(a->o.head[ELNB]), N, H,
                  eps);
    /* dropout (training only): hidden after the embeddings and after each
     * sublayer's output projection, attention on the probabilities */
    a->drop = m->dropout && (c->hidden_dropout_prob > 0 || c->attention_probs_dropout_prob > 0);
    a->dkey = m->dropout_key;
    float hp = a->drop ? c->hidden_dropout_prob : 0.0f,
          ap = a->drop ? c->attention_probs_dropout_prob : 0.0f;
    if (hp > 0) dropout_apply(a->x0, a->x0, a->full, N, H, dropout_site_key(a->dkey, 0), hp);
    /* The top layer at the rows the heads read: only [CLS] (the NSP head)
     * and the masked tokens (the MLM head) of its output reach a loss, so
     * its queries, attention output and feed-forward run at those rows
     * alone, its keys and values at every token; the other rows' outputs
     * would get exact zero gradients. A change of work, not of the model:
     * the results are the full layer's up to the rounding of sums over
     * fewer terms (m->keep_top computes every row, for tests). */
    int32_t *tidx = a->tidx; /* token row -> its row in the top layer, -1: none */
    for (int t = 0; t < N; t++)
        tidx[t] = -1;
    for (int b = 0; b < B; b++)
        tidx[a->off[b]] = 0;
    for (int j = 0; j < nm; j++)
        tidx[a->mrow[j]] = 0;
    int nt = 0;
    for (int b = 0; b < B; b++) {
        a->topoff[b] = nt;
        for (int t = a->off[b]; t < a->off[b + 1]; t++)
            if (tidx[t] >= 0) {
                a->top[nt] = t, a->toppos[nt] = t - a->off[b], a->topfull[nt] = a->full[t];
                tidx[t] = nt++;
            }
    }
    a->topoff[B] = a->ntop = nt;
    for (int j = 0; j < nm; j++)
        a->mtop[j] = tidx[a->mrow[j]];
    a->sub = !m->keep_top && nt < N;

    /* encoder */
    const float *x = a->x0;
    size_t NH = (size_t)N * H;
    for (int l = 0; l < L; l++) {
        LayerRows r = {N, NULL, a->off, NULL, a->full, x};
        if (l == L - 1 && a->sub) {
            for (int i = 0; i < nt; i++)
                memcpy(a->xr + (size_t)i * H, x + (size_t)a->top[i] * H, (size_t)H * sizeof(float));
            r = (LayerRows){nt, a->top, a->topoff, a->toppos, a->topfull, a->xr};
        }
        layer_fwd(m, l, x, &r, hp, ap);
        x = a->x2 + l * NH;
    }
    /* the heads' rows of x: [CLS] of row b and masked token j */
    const int32_t *hcls = a->sub ? a->topoff : a->off, *hmask = a->sub ? a->mtop : a->mrow;

    /* NSP head */
    for (int b = 0; b < B; b++) /* [CLS] */
        memcpy(a->pin + (size_t)b * H, x + (size_t)hcls[b] * H, (size_t)H * sizeof(float));
    linear_fwd(a->ppre, a->pin, PP(a->o.tail[POOLW]), PP(a->o.tail[POOLB]), B, H, H);
    for (int i = 0; i < B * H; i++)
        a->pooled[i] = tanhf(a->ppre[i]);
    linear_fwd(a->nsplog, a->pooled, PP(a->o.tail[NSPW]), PP(a->o.tail[NSPB]), B, H, 2);
    double nsp_loss = 0;
    int nsp_correct = 0;
    for (int b = 0; b < B; b++) {
        float *z = a->nsplog + 2 * b, *p = a->nspprob + 2 * b;
        if (nsp_logits) nsp_logits[2 * b] = z[0], nsp_logits[2 * b + 1] = z[1];
        float mx = z[0] > z[1] ? z[0] : z[1];
        float e0 = expf(z[0] - mx), e1 = expf(z[1] - mx), s = e0 + e1;
        p[0] = e0 / s, p[1] = e1 / s;
        nsp_loss += -(double)(z[a->nsp[b]] - mx - logf(s));
        nsp_correct += (z[1] > z[0]) == (a->nsp[b] == 1);
    }

    /* MLM head, only at the masked tokens */
    double mlm_loss = 0;
    int mlm_correct = 0;
    if (nm) {
        for (int j = 0; j < nm; j++)
            memcpy(a->tin + (size_t)j * H, x + (size_t)hmask[j] * H, (size_t)H * sizeof(float));
        /* tpre = tin Wt^T + bt, tg = gelu(tpre) */
        LinEpi tr = {.bias = PP(a->o.tail[TRB]), .act = a->tg};
        mm(nm, H, H, a->tin, H, 0, PP(a->o.tail[TRW]), H, 1, a->tpre, H, 0, lin_epi, &tr, T);
        layernorm_fwd(a->t, a->tmean, a->trstd, a->tg, PP(a->o.tail[TLNW]), PP(a->o.tail[TLNB]), nm,
                      H, eps);
        linear_fwd(a->logits, a->t, PP(a->o.tail[DECW]), PP(a->o.tail[MLMBIAS]), nm, H, V);
        if (mlm_logits) memcpy(mlm_logits, a->logits, (size_t)nm * V * sizeof(float));
        double *rl = xmalloc((size_t)nm * sizeof *rl);
        int *rc = xmalloc((size_t)nm * sizeof *rc);
#pragma omp parallel for schedule(dynamic, 4) num_threads(T)
        for (int j = 0; j < nm; j++) {
            float *z = a->logits + (size_t)j * V;
            int arg;
            float mx = vmax(z, (size_t)V, &arg), zl = z[a->mlabel[j]];
            double s = vexp_sum(z, z, mx, (size_t)V); /* z = exp(z - mx) */
            rl[j] = -((double)zl - mx - log(s));
            rc[j] = arg == a->mlabel[j];
            float inv = (float)(1.0 / s);
            for (int i = 0; i < V; i++)
                z[i] *= inv; /* probabilities, for backward */
        }
        for (int j = 0; j < nm; j++) /* in row order */
            mlm_loss += rl[j], mlm_correct += rc[j];
        free(rl);
        free(rc);
    }
    loss->mlm = nm ? (float)(mlm_loss / nm) : 0.0f;
    loss->nsp = (float)(nsp_loss / B);
    loss->total = loss->mlm + loss->nsp;
    loss->masked = nm;
    loss->mlm_correct = mlm_correct;
    loss->nsp_correct = nsp_correct;
}

/* ---- backward ---- */

void bert_backward(Bert *m, float scale) {
    const BertConfig *c = &m->c;
    BertAct *a = m->act;
    int B = a->Bc, S = a->Sc, H = c->hidden_size;
    int V = c->vocab_size, L = c->num_hidden_layers, N = a->ntok, nm = a->nmask, T = nthreads();
    size_t NH = (size_t)N * H;
    float hp = a->drop ? c->hidden_dropout_prob : 0.0f,
          ap = a->drop ? c->attention_probs_dropout_prob : 0.0f;
    float *dx = a->dxl; /* d(top layer output), at its rows */
    memset(dx, 0, (size_t)(a->sub ? a->ntop : N) * H * sizeof *dx);
    const int32_t *hcls = a->sub ? a->topoff : a->off, *hmask = a->sub ? a->mtop : a->mrow;

    /* MLM head */
    if (nm) {
        float g = scale / nm;
#pragma omp parallel for schedule(dynamic, 4) num_threads(T)
        for (int j = 0; j < nm; j++) {
            const float *p = a->logits + (size_t)j * V;
            float *d = a->dlog + (size_t)j * V;
            for (int i = 0; i < V; i++)
                d[i] = p[i] * g;
            d[a->mlabel[j]] -= g;
        }
        linear_bwd(a->dt, GG(a->o.tail[DECW]), GG(a->o.tail[MLMBIAS]), a->dlog, a->t,
                   PP(a->o.tail[DECW]), nm, H, V);
        layernorm_bwd(a->dtmp, GG(a->o.tail[TLNW]), GG(a->o.tail[TLNB]), a->dt, a->tg,
                      PP(a->o.tail[TLNW]), a->tmean, a->trstd, nm, H);
        gelu_bwd(a->dtmp, a->dtmp, a->tpre, (size_t)nm * H);
        linear_bwd(a->dt, GG(a->o.tail[TRW]), GG(a->o.tail[TRB]), a->dtmp, a->tin,
                   PP(a->o.tail[TRW]), nm, H, H);
        for (int j = 0; j < nm;
             j++) { /* rows in order: one position may be listed once per row only */
            float *d = dx + (size_t)hmask[j] * H;
            const float *s = a->dt + (size_t)j * H;
            for (int i = 0; i < H; i++)
                d[i] += s[i];
        }
    }

    /* NSP head */
    {
        float g = scale / B;
        float *dz = a->dtmp; /* B x 2 */
        for (int b = 0; b < B; b++) {
            dz[2 * b] = a->nspprob[2 * b] * g;
            dz[2 * b + 1] = a->nspprob[2 * b + 1] * g;
            dz[2 * b + a->nsp[b]] -= g;
        }
        float *dpool = a->dtmp + 2 * B;
        linear_bwd(dpool, GG(a->o.tail[NSPW]), GG(a->o.tail[NSPB]), dz, a->pooled,
                   PP(a->o.tail[NSPW]), B, H, 2);
        for (int i = 0; i < B * H; i++)
            dpool[i] *= 1.0f - a->pooled[i] * a->pooled[i];
        float *dpin = a->dtmp + 2 * B + (size_t)B * H;
        linear_bwd(dpin, GG(a->o.tail[POOLW]), GG(a->o.tail[POOLB]), dpool, a->pin,
                   PP(a->o.tail[POOLW]), B, H, H);
        for (int b = 0; b < B; b++)
            for (int i = 0; i < H; i++)
                dx[(size_t)hcls[b] * H + i] += dpin[(size_t)b * H + i];
    }

    /* encoder, top down; dx is d(layer output), then d(layer input) */
    for (int l = L - 1; l >= 0; l--) {
        const float *xin = l ? a->x2 + (size_t)(l - 1) * NH : a->x0;
        LayerRows r = {N, NULL, a->off, NULL, a->full, xin};
        if (l == L - 1 && a->sub)
            r = (LayerRows){a->ntop, a->top, a->topoff, a->toppos, a->topfull, a->xr};
        layer_bwd(m, l, dx, xin, &r, hp, ap);
    }

    /* embeddings: x0 = LN(e) */
    if (hp > 0) dropout_apply(dx, dx, a->full, N, H, dropout_site_key(a->dkey, 0), hp);
    float *de = a->dtmp;
    layernorm_bwd(de, GG(a->o.head[ELNW]), GG(a->o.head[ELNB]), dx, a->e, PP(a->o.head[ELNW]),
                  a->emean, a->erstd, N, H);
    float *gte = GG(a->o.head[WTE]), *gpe = GG(a->o.head[WPE]), *gtt = GG(a->o.head[WTT]);
    enum { W = 64 };
    int nc = (H + W - 1) / W;
    /* by column blocks: every row in order, no two threads on one value */
#pragma omp parallel for schedule(static) num_threads(T)
    for (int cb = 0; cb < nc; cb++) {
        int i0 = cb * W, i1 = i0 + W < H ? i0 + W : H;
        for (int n = 0; n < N; n++) {
            const float *g = de + (size_t)n * H;
            int f = a->full[n];
            float *te = gte + (size_t)a->ids[f] * H, *pe = gpe + (size_t)(f % S) * H,
                  *tt = gtt + (size_t)a->seg[f] * H;
            for (int i = i0; i < i1; i++) {
                te[i] += g[i];
                pe[i] += g[i];
                tt[i] += g[i];
            }
        }
    }
}
