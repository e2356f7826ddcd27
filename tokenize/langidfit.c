/* langidfit.c - builds a langid model file from labelled texts.
 *
 * Training runs one language at a time so that only one language's full
 * n-gram table is in memory:
 *   1. count every gram of the language's texts; keep all letters (order 1)
 *      and the `top` most frequent grams of each higher order (ties broken
 *      by the gram's bytes) with at least `min_count` occurrences; their
 *      union over all languages is the model's vocabulary;
 *   2. count again, now every vocabulary gram in every language, and keep
 *      the (gram, language) counts of at least `min_count` as postings.
 * The file lists languages sorted by code and grams sorted by bytes, so the
 * same texts give a byte-identical file whatever order they came in.
 * With held-out texts the temperature of the confidence is fitted last:
 * the model is loaded from memory and 1/T minimizes the negative
 * log-likelihood of the held-out labels (a convex function of 1/T, so a
 * golden-section search finds it). Model and format: langidmodel.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/hash.h"
#include "tokenize/langidfit.h"
#include "common/utf8.h"

typedef struct Lang {
    char code[LANGID_CODE_MAX + 1];
    Buf train; /* texts as [u32 length][bytes] */
    uint64_t total[LANGID_MAX_ORDER];
} Lang;

typedef struct DevText {
    int lang;
    size_t off, len; /* into dev buffer */
} DevText;

struct LangIdTrainer {
    LangIdTrainOpts o;
    Lang *langs;
    int nlangs;
    Buf dev;
    DevText *devs;
    size_t ndev, devcap;
};

void langid_train_defaults(LangIdTrainOpts *o) {
    o->order = 5;
    o->top = 3000;
    o->min_count = 3;
    for (int i = 0; i < LANGID_MAX_ORDER; i++)
        o->mu[i] = 2000;
}

LangIdTrainer *langid_trainer_create(const LangIdTrainOpts *o) {
    LangIdTrainer *t = xcalloc(1, sizeof *t);
    t->o = *o;
    return t;
}

void langid_trainer_free(LangIdTrainer *t) {
    if (!t) return;
    for (int i = 0; i < t->nlangs; i++)
        buf_free(&t->langs[i].train);
    free(t->langs);
    buf_free(&t->dev);
    free(t->devs);
    free(t);
}

static int lang_index(LangIdTrainer *t, const char *code, size_t len, Err *err) {
    for (int i = 0; i < t->nlangs; i++)
        if (strlen(t->langs[i].code) == len && memcmp(t->langs[i].code, code, len) == 0) return i;
    if (!len || len > LANGID_CODE_MAX)
        return err_set(err, "language code must have 1 to %d bytes", LANGID_CODE_MAX);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)code[i] <= ' ' || code[i] == ':' || code[i] == 0x7f)
            return err_set(err, "language code '%.*s' has a blank or control character", (int)len,
                           code);
    if (t->nlangs == LANGID_MAX_LANGS)
        return err_set(err, "more than %d languages", LANGID_MAX_LANGS);
    t->langs = xrealloc(t->langs, (size_t)(t->nlangs + 1) * sizeof *t->langs);
    Lang *l = &t->langs[t->nlangs];
    memset(l, 0, sizeof *l);
    memcpy(l->code, code, len);
    return t->nlangs++;
}

int langid_trainer_add(LangIdTrainer *t, const char *lang, size_t langlen, const char *text,
                       size_t n, int dev, Err *err) {
    int li = lang_index(t, lang, langlen, err);
    if (li < 0) return -1;
    if (n > UINT32_MAX) return err_set(err, "text longer than 4 GB");
    if (dev) {
        if (t->ndev == t->devcap) {
            t->devcap = t->devcap ? t->devcap * 2 : 1024;
            t->devs = xrealloc(t->devs, t->devcap * sizeof *t->devs);
        }
        t->devs[t->ndev++] = (DevText){li, t->dev.len, n};
        buf_append(&t->dev, text, n);
    } else {
        uint32_t len32 = (uint32_t)n;
        buf_append(&t->langs[li].train, &len32, sizeof len32);
        buf_append(&t->langs[li].train, text, n);
    }
    return 0;
}

/* ---- gram enumeration ---- */

typedef void (*GramFn)(void *ctx, const char *gram, size_t len, int order);

/* Call fn for every feature gram of every text in b (see langidmodel.h). */
static void for_each_gram(const Buf *b, int order, GramFn fn, void *ctx) {
    size_t p = 0;
    while (p < b->len) {
        uint32_t len32;
        memcpy(&len32, b->data + p, sizeof len32);
        p += sizeof len32;
        LangIdCursor c;
        langid_cursor_init(&c, b->data + p, len32);
        p += len32;
        /* last `order` code points, UTF-8 encoded, newest last */
        char enc[LANGID_MAX_ORDER][4];
        size_t enclen[LANGID_MAX_ORDER];
        int fill = 0;
        uint32_t cp;
        while ((cp = langid_next_cp(&c))) {
            if (fill == order) {
                memmove(enc, enc + 1, sizeof enc[0] * (size_t)(order - 1));
                memmove(enclen, enclen + 1, sizeof enclen[0] * (size_t)(order - 1));
                fill--;
            }
            Buf one = {0};
            utf8_append_cp(&one, cp);
            memcpy(enc[fill], one.data, one.len);
            enclen[fill] = one.len;
            buf_free(&one);
            fill++;
            char g[4 * LANGID_MAX_ORDER];
            for (int k = 1; k <= fill; k++) {
                if (k == 1 && cp == ' ') continue;
                size_t gl = 0;
                for (int i = fill - k; i < fill; i++) {
                    memcpy(g + gl, enc[i], enclen[i]);
                    gl += enclen[i];
                }
                fn(ctx, g, gl, k);
            }
        }
    }
}

/* ---- pass 1: per-language top grams ---- */

typedef struct CountCtx {
    StrMap *map;
    uint64_t *total;
} CountCtx;

static void count_gram(void *ctx, const char *gram, size_t len, int order) {
    CountCtx *c = ctx;
    (*strmap_slot(c->map, gram, len))++;
    c->total[order - 1]++;
}

static int utf8_count(const char *s, size_t n) {
    int k = 0;
    for (size_t i = 0; i < n; i++)
        k += ((unsigned char)s[i] & 0xC0) != 0x80;
    return k;
}

static int bytes_cmp(const char *a, size_t al, const char *b, size_t bl) {
    int r = memcmp(a, b, al < bl ? al : bl);
    return r ? r : (al > bl) - (al < bl);
}

static int by_count_then_bytes(const void *x, const void *y) {
    const StrMapEntry *a = *(const StrMapEntry *const *)x, *b = *(const StrMapEntry *const *)y;
    if (a->value != b->value) return a->value > b->value ? -1 : 1;
    return bytes_cmp(a->key, a->len, b->key, b->len);
}

/* Add language l's kept grams to the vocabulary map (value: id + 1). */
static void select_grams(LangIdTrainer *t, Lang *l, StrMap *vocab) {
    StrMap m;
    strmap_init(&m, 1 << 16);
    CountCtx c = {&m, l->total};
    memset(l->total, 0, sizeof l->total);
    for_each_gram(&l->train, t->o.order, count_gram, &c);
    StrMapEntry **byord[LANGID_MAX_ORDER];
    size_t nby[LANGID_MAX_ORDER] = {0};
    for (int o = 0; o < t->o.order; o++)
        byord[o] = xmalloc((m.count + 1) * sizeof *byord[o]);
    for (size_t i = 0; i < m.cap; i++) {
        StrMapEntry *e = &m.slots[i];
        if (!e->key || e->value < (uint64_t)t->o.min_count) continue;
        int o = utf8_count(e->key, e->len) - 1;
        byord[o][nby[o]++] = e;
    }
    for (int o = 0; o < t->o.order; o++) {
        if (nby[o]) qsort(byord[o], nby[o], sizeof *byord[o], by_count_then_bytes);
        size_t keep = o == 0 || nby[o] < (size_t)t->o.top ? nby[o] : (size_t)t->o.top;
        for (size_t i = 0; i < keep; i++) {
            uint64_t *v = strmap_slot(vocab, byord[o][i]->key, byord[o][i]->len);
            if (!*v) *v = vocab->count;
        }
        free(byord[o]);
    }
    strmap_free(&m);
}

/* ---- pass 2: counts of vocabulary grams ---- */

typedef struct VocabCtx {
    const StrMap *vocab;
    uint32_t *counts;
} VocabCtx;

static void count_vocab(void *ctx, const char *gram, size_t len, int order) {
    VocabCtx *c = ctx;
    uint64_t *v = strmap_get(c->vocab, gram, len);
    if (v) c->counts[*v - 1]++;
}

typedef struct Posting {
    uint32_t gram; /* rank in byte order */
    uint16_t lang; /* rank in code order */
    uint32_t count;
} Posting;

static int post_cmp(const void *x, const void *y) {
    const Posting *a = x, *b = y;
    if (a->gram != b->gram) return a->gram < b->gram ? -1 : 1;
    return (a->lang > b->lang) - (a->lang < b->lang);
}

static int entry_bytes_cmp(const void *x, const void *y) {
    const StrMapEntry *a = *(const StrMapEntry *const *)x, *b = *(const StrMapEntry *const *)y;
    return bytes_cmp(a->key, a->len, b->key, b->len);
}

/* Write the model text with temperature `temp` into out. */
static void write_model(const LangIdTrainer *t, const int *ord, StrMapEntry **grams, size_t ngrams,
                        const Posting *post, size_t npost, double temp, Buf *out) {
    char line[256];
    snprintf(line, sizeof line, "%s\t%d\norder\t%d\nmu", LANGID_MAGIC, LANGID_VERSION, t->o.order);
    buf_puts(out, line);
    for (int o = 0; o < t->o.order; o++) {
        snprintf(line, sizeof line, "\t%.17g", t->o.mu[o]);
        buf_puts(out, line);
    }
    snprintf(line, sizeof line, "\ntemp\t%.9g\nlangs\t%d\n", temp, t->nlangs);
    buf_puts(out, line);
    for (int r = 0; r < t->nlangs; r++) {
        const Lang *l = &t->langs[ord[r]];
        buf_puts(out, "lang\t");
        buf_puts(out, l->code);
        for (int o = 0; o < t->o.order; o++) {
            snprintf(line, sizeof line, "\t%llu",
                     (unsigned long long)(l->total[o] ? l->total[o] : 1));
            buf_puts(out, line);
        }
        buf_putc(out, '\n');
    }
    /* grams with no posting left (all counts below min_count) are dropped */
    size_t used = 0;
    for (size_t i = 0; i < npost; i++)
        if (!i || post[i].gram != post[i - 1].gram) used++;
    snprintf(line, sizeof line, "grams\t%zu\n", used);
    buf_puts(out, line);
    for (size_t i = 0; i < npost; i++) {
        if (!i || post[i].gram != post[i - 1].gram) {
            if (i) buf_putc(out, '\n');
            const StrMapEntry *g = grams[post[i].gram];
            for (uint32_t k = 0; k < g->len; k++)
                buf_putc(out, g->key[k] == ' ' ? '_' : g->key[k]);
            buf_putc(out, '\t');
        } else {
            buf_putc(out, ' ');
        }
        snprintf(line, sizeof line, "%u:%u", (unsigned)post[i].lang, (unsigned)post[i].count);
        buf_puts(out, line);
    }
    if (npost) buf_putc(out, '\n');
}

/* ---- temperature ---- */

typedef struct DevScores {
    double *s; /* [n][nlangs], shifted so that the maximum is 0 */
    int *gold;
    size_t n;
    int nlangs;
} DevScores;

static double dev_nll(const DevScores *d, double beta) {
    double nll = 0;
    for (size_t i = 0; i < d->n; i++) {
        const double *s = d->s + i * (size_t)d->nlangs;
        double z = 0;
        for (int l = 0; l < d->nlangs; l++)
            z += exp(beta * s[l]);
        nll += log(z) - beta * s[d->gold[i]];
    }
    return nll;
}

/* Fit T on the dev texts of languages in the model; 1 if there are none. */
static double fit_temperature(const LangIdTrainer *t, const int *rank, const char *model,
                              size_t len) {
    Err err;
    LangId *m = langid_load_mem(model, len, "(model being trained)", &err);
    if (!m) return 1;
    DevScores d = {0};
    d.nlangs = langid_nlangs(m);
    d.s = xmalloc((t->ndev + 1) * (size_t)d.nlangs * sizeof *d.s);
    d.gold = xmalloc((t->ndev + 1) * sizeof *d.gold);
    for (size_t i = 0; i < t->ndev; i++) {
        const DevText *x = &t->devs[i];
        if (!t->langs[x->lang].train.len) continue;
        double *s = d.s + d.n * (size_t)d.nlangs;
        int best = langid_scores(m, t->dev.data + x->off, x->len, s, NULL);
        if (best < 0) continue;
        double mx = s[best];
        for (int l = 0; l < d.nlangs; l++)
            s[l] -= mx;
        d.gold[d.n++] = rank[x->lang];
    }
    double T = 1;
    if (d.n) {
        /* golden-section search for beta = 1/T in [1e-4, 10] */
        const double phi = 0.6180339887498949;
        double a = 1e-4, b = 10;
        double c = b - phi * (b - a), e = a + phi * (b - a);
        double fc = dev_nll(&d, c), fe = dev_nll(&d, e);
        for (int it = 0; it < 80; it++) {
            if (fc < fe) {
                b = e, e = c, fe = fc;
                c = b - phi * (b - a);
                fc = dev_nll(&d, c);
            } else {
                a = c, c = e, fc = fe;
                e = a + phi * (b - a);
                fe = dev_nll(&d, e);
            }
        }
        T = 2 / (a + b);
    }
    free(d.s);
    free(d.gold);
    langid_free(m);
    return T;
}

int langid_trainer_write(LangIdTrainer *t, Buf *out, Err *err) {
    int ntrain = 0;
    for (int i = 0; i < t->nlangs; i++)
        ntrain += t->langs[i].train.len > 0;
    if (!ntrain) return err_set(err, "no training text");
    if (ntrain != t->nlangs) {
        for (int i = 0; i < t->nlangs; i++)
            if (!t->langs[i].train.len)
                return err_set(err, "language '%s' has held-out text but no training text",
                               t->langs[i].code);
    }
    int *ord = xmalloc((size_t)t->nlangs * sizeof *ord),
        *rank = xmalloc((size_t)t->nlangs * sizeof *rank);
    for (int i = 0; i < t->nlangs; i++) { /* insertion sort by code */
        int j = i;
        for (; j > 0 && strcmp(t->langs[ord[j - 1]].code, t->langs[i].code) > 0; j--)
            ord[j] = ord[j - 1];
        ord[j] = i;
    }
    for (int r = 0; r < t->nlangs; r++)
        rank[ord[r]] = r;

    StrMap vocab;
    strmap_init(&vocab, 1 << 16);
    for (int r = 0; r < t->nlangs; r++)
        select_grams(t, &t->langs[ord[r]], &vocab);

    /* gram ranks in byte order; vocab value becomes rank + 1 */
    size_t ng = vocab.count;
    StrMapEntry **grams = xmalloc((ng + 1) * sizeof *grams);
    size_t k = 0;
    for (size_t i = 0; i < vocab.cap; i++)
        if (vocab.slots[i].key) grams[k++] = &vocab.slots[i];
    qsort(grams, ng, sizeof *grams, entry_bytes_cmp);
    for (size_t i = 0; i < ng; i++)
        grams[i]->value = i + 1;

    Posting *post = NULL;
    size_t npost = 0, postcap = 0;
    uint32_t *counts = xmalloc((ng + 1) * sizeof *counts);
    for (int r = 0; r < t->nlangs; r++) {
        memset(counts, 0, (ng + 1) * sizeof *counts);
        VocabCtx c = {&vocab, counts};
        for_each_gram(&t->langs[ord[r]].train, t->o.order, count_vocab, &c);
        for (size_t g = 0; g < ng; g++) {
            if (counts[g] < (uint32_t)t->o.min_count || !counts[g]) continue;
            if (npost == postcap) {
                postcap = postcap ? postcap * 2 : 1 << 16;
                post = xrealloc(post, postcap * sizeof *post);
            }
            post[npost++] = (Posting){(uint32_t)g, (uint16_t)r, counts[g]};
        }
    }
    free(counts);
    if (npost) qsort(post, npost, sizeof *post, post_cmp);

    size_t start = out->len;
    write_model(t, ord, grams, ng, post, npost, 1.0, out);
    if (t->ndev) {
        double T = fit_temperature(t, rank, out->data + start, out->len - start);
        out->len = start;
        write_model(t, ord, grams, ng, post, npost, T, out);
    }
    free(post);
    free(grams);
    strmap_free(&vocab);
    free(ord);
    free(rank);
    return 0;
}
