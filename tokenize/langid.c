/* langid.c - language identification with character n-gram naive Bayes.
 *
 * Loads the model file written by langid_train (format and model in
 * langidmodel.h) into one open-addressing table keyed by a 64-bit hash of
 * each gram's code points; every slot points at a run of (language,
 * weight) postings, and the grams seen in many languages also at a dense
 * row of weights. Identification walks the normalized text once, hashing
 * the 1..order grams ending at each code point incrementally, looks them
 * up in batches, adds postings into a per-call score array on the stack
 * and counts the dense grams' hits (their rows are added once, count times
 * row, where that provably gives the same bits: "Sums" under scoring),
 * then subtracts the per-language length term. Nothing is written after
 * loading, so threads may share a model.
 *
 *   LangId *m = langid_load("data/langid/model.txt", &err);
 *   langid_identify(m, "Ez egy magyar mondat.", 21, &s);   // s.lang "hu"
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/io.h"
#include "tokenize/langid.h"
#include "tokenize/langidmodel.h"
#include "common/uniprop.h"
#include "common/utf8.h"

typedef struct Posting {
    float w; /* log(1 + c / (mu bg)) */
    uint32_t lang;
} Posting;

typedef struct Slot {
    uint64_t key;   /* gram hash; 0 = empty */
    uint32_t start; /* first posting, or the row when dense */
    uint16_t len;   /* postings */
    uint8_t order;  /* code points in the gram */
    uint8_t dense;  /* weights in rows[start * stride ...] */
} Slot;

/* A gram seen in at least stride / DENSE_DIV languages keeps its weights as
 * a dense row of `stride` floats (0 for the languages it is not seen in)
 * besides its postings: most grams of a text are such common ones, and a
 * row is added with vector instructions, where postings scatter one by one.
 * Adding 0.0 leaves a score unchanged (scores start at +0.0 and weights are
 * positive), so both give the same sums, bit for bit. */
#define DENSE_DIV 4
#define ROW_LANES 16 /* stride is a multiple: a row is whole cache lines */
#define ROW_ALIGN 64 /* bytes; rows start on a cache line */

struct LangId {
    int nlangs, order;
    char (*codes)[LANGID_CODE_MAX + 1];
    double mu[LANGID_MAX_ORDER], temp;
    double *pen; /* [order][nlangs]: log(N_L,o + mu_o) */
    Slot *slots;
    size_t cap;    /* power of two */
    Posting *post; /* (language, weight) runs, one per gram */
    size_t npost;
    size_t stride;      /* nlangs rounded up to ROW_LANES */
    float *rows;        /* dense rows, ROW_ALIGN-aligned inside rows_mem */
    void *rows_mem;     /* what to free */
    size_t nrows;       /* dense rows */
    double exact_below; /* 2^(lowbit + 52): see "Sums" under scoring */
    int avx2;           /* the CPU has AVX2: add rows 4 lanes at a time */
};

/* ---- normalization ---- */

/* Non-letter code points that still belong to a word: combining marks
 * (the vowel signs of Indic scripts, Hebrew and Arabic points, ...), which
 * ICU does not count as alphabetic. Punctuation inside these blocks (dandas,
 * Arabic comma, ...) stays a boundary. Soft hyphen and zero-width (non)
 * joiners are handled by the caller (dropped). */
static int is_mark(uint32_t cp) {
    if (cp < 0x300) return 0;
    if (cp <= 0x36F) return 1;
    if (cp >= 0x483 && cp <= 0x489) return 1;
    if (cp >= 0x591 && cp <= 0x5C7) return cp != 0x5BE && cp != 0x5C0 && cp != 0x5C3 && cp != 0x5C6;
    if (cp >= 0x610 && cp <= 0x61A) return 1;
    if (cp >= 0x64B && cp <= 0x65F) return 1;
    if (cp == 0x670) return 1;
    if (cp >= 0x6D6 && cp <= 0x6ED) return cp != 0x6DD && cp != 0x6DE && cp != 0x6E9;
    if (cp >= 0x900 && cp <= 0xDFF) return cp != 0x964 && cp != 0x965 && cp != 0x970 && cp != 0xDF4;
    if (cp >= 0xE31 && cp <= 0xE4E) return cp != 0xE3F;
    if (cp >= 0xEB1 && cp <= 0xECD) return 1;
    if (cp >= 0xF18 && cp <= 0xFBC) return 1;
    if (cp >= 0x102B && cp <= 0x109D) return cp < 0x1040 || cp > 0x104F;
    if (cp >= 0x17B4 && cp <= 0x17D3) return 1;
    if (cp >= 0x1AB0 && cp <= 0x1AFF) return 1;
    if (cp >= 0x1DC0 && cp <= 0x1DFF) return 1;
    if (cp >= 0x20D0 && cp <= 0x20FF) return 1;
    if (cp == 0x3099 || cp == 0x309A) return 1;
    if (cp >= 0xFE20 && cp <= 0xFE2F) return 1;
    return 0;
}

void langid_cursor_init(LangIdCursor *c, const char *text, size_t n) {
    c->s = (const unsigned char *)text;
    c->n = n;
    c->pos = 0;
    c->state = 0;
    c->letters = 0;
}

uint32_t langid_next_cp(LangIdCursor *c) {
    if (c->state == 0) {
        c->state = 2;
        return ' ';
    }
    while (c->pos < c->n) {
        uint32_t cp;
        unsigned char b = c->s[c->pos];
        int letter;
        if (b < 0x80) {
            cp = b;
            c->pos++;
            if (cp >= 'A' && cp <= 'Z') cp += 'a' - 'A';
            letter = cp >= 'a' && cp <= 'z';
        } else {
            size_t k = utf8_decode(c->s + c->pos, c->n - c->pos, &cp);
            if (!k) {
                c->pos += utf8_bad_len(c->s + c->pos, c->n - c->pos);
                letter = 0;
            } else {
                c->pos += k;
                if (cp == 0xAD || (cp >= 0x200B && cp <= 0x200D)) continue;
                if (uni_is(cp, UNI_ALPHA)) {
                    letter = 1;
                    cp = uni_tolower(cp);
                } else {
                    /* a mark right after a boundary starts no word */
                    letter = c->state == 1 && is_mark(cp);
                }
            }
        }
        if (letter) {
            c->state = 1;
            c->letters++;
            return cp;
        }
        if (c->state == 1) {
            c->state = 2;
            return ' ';
        }
    }
    if (c->state == 1) {
        c->state = 3;
        return ' ';
    }
    c->state = 3;
    return 0;
}

int langid_split_part(const char *text, size_t n) {
    LangIdCursor c;
    uint64_t h = 0xcbf29ce484222325ull;
    uint32_t cp;
    langid_cursor_init(&c, text, n);
    while ((cp = langid_next_cp(&c)))
        if (cp != ' ') {
            h ^= cp;
            h *= 0x100000001b3ull;
        }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    unsigned r = (unsigned)(h % 20);
    return r == 0 ? 1 : r <= 2 ? 2 : 0;
}

/* ---- gram hashing ---- */

/* A gram's key is FNV-1a over its code points, oldest first, then a
 * finalizer that mixes the high bits down (the table index is the low
 * bits). Scoring runs the FNV-1a part incrementally (langid_scores). */
#define FNV_BASIS 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

/* The finalizer; never 0 (0 marks an empty slot). */
static inline uint64_t hash_final(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h ? h : 1;
}

/* Key of the gram cp[0..k). */
static inline uint64_t gram_hash(const uint32_t *cp, int k) {
    uint64_t h = FNV_BASIS;
    for (int i = 0; i < k; i++)
        h = (h ^ cp[i]) * FNV_PRIME;
    return hash_final(h);
}

static inline const Slot *find_slot(const LangId *m, uint64_t key) {
    size_t i = (size_t)key & (m->cap - 1);
    for (;;) {
        const Slot *s = &m->slots[i];
        if (s->key == key) return s;
        if (!s->key) return NULL;
        i = (i + 1) & (m->cap - 1);
    }
}

/* ---- loading ---- */

typedef struct Parser {
    const char *p, *end, *name;
    const char *line;
    size_t len;
    uint64_t lineno;
    Err *err;
} Parser;

/* Next non-comment line into ps->line/len. Returns 1, or 0 at the end. */
static int next_line(Parser *ps) {
    while (ps->p < ps->end) {
        const char *nl = memchr(ps->p, '\n', (size_t)(ps->end - ps->p));
        const char *e = nl ? nl : ps->end;
        ps->line = ps->p;
        ps->len = (size_t)(e - ps->p);
        ps->p = nl ? nl + 1 : ps->end;
        ps->lineno++;
        if (ps->len && ps->line[ps->len - 1] == '\r') ps->len--;
        if (ps->len && ps->line[0] == '#') continue;
        return 1;
    }
    return 0;
}

/* At the end of the data: report the line that is missing. */
static int bad_eof(Parser *ps, const char *what) {
    ps->lineno++;
    return err_set(ps->err, "%s:%llu: malformed langid model: %s", ps->name,
                   (unsigned long long)ps->lineno, what);
}

static int bad(Parser *ps, const char *what) {
    return err_set(ps->err, "%s:%llu: malformed langid model: %s", ps->name,
                   (unsigned long long)ps->lineno, what);
}

/* Split the current line at TABs into at most `max` fields. */
static int split_tabs(Parser *ps, const char **f, size_t *fl, int max) {
    int k = 0;
    const char *s = ps->line, *e = ps->line + ps->len;
    while (k < max) {
        const char *t = memchr(s, '\t', (size_t)(e - s));
        f[k] = s;
        fl[k] = (size_t)((t ? t : e) - s);
        k++;
        if (!t) break;
        s = t + 1;
    }
    return k;
}

static int field_is(const char *f, size_t fl, const char *word) {
    return fl == strlen(word) && memcmp(f, word, fl) == 0;
}

/* Parse a decimal number field. Returns 0 or -1. */
static int parse_u64(const char *f, size_t fl, uint64_t *out) {
    uint64_t v = 0;
    if (!fl || fl > 19) return -1;
    for (size_t i = 0; i < fl; i++) {
        if (f[i] < '0' || f[i] > '9') return -1;
        v = v * 10 + (uint64_t)(f[i] - '0');
    }
    *out = v;
    return 0;
}

static int parse_double(const char *f, size_t fl, double *out) {
    char tmp[64];
    char *e;
    if (!fl || fl >= sizeof tmp) return -1;
    memcpy(tmp, f, fl);
    tmp[fl] = 0;
    errno = 0;
    *out = strtod(tmp, &e);
    if (*e || errno || !isfinite(*out)) return -1;
    return 0;
}

/* Expect the line `word<TAB>value...` with exactly `nvals` values. */
static int header(Parser *ps, const char *word, const char **f, size_t *fl, int nvals) {
    if (!next_line(ps)) return bad_eof(ps, "unexpected end of file");
    int k = split_tabs(ps, f, fl, nvals + 2);
    if (!field_is(f[0], fl[0], word)) {
        char what[96];
        snprintf(what, sizeof what, "expected a '%s' line", word);
        return bad(ps, what);
    }
    if (k != nvals + 1) {
        char what[96];
        snprintf(what, sizeof what, "'%s' needs %d value%s", word, nvals, nvals == 1 ? "" : "s");
        return bad(ps, what);
    }
    return 0;
}

typedef struct RawPost {
    uint16_t lang;
    uint32_t count;
} RawPost;

static int parse_model(LangId *m, Parser *ps) {
    const char *f[LANGID_MAX_ORDER + 3];
    size_t fl[LANGID_MAX_ORDER + 3];
    uint64_t v;
    double *ntot = NULL;
    RawPost *raw = NULL;
    size_t rawcap = 0;
    int rc = -1;

    if (!next_line(ps)) return bad_eof(ps, "empty file");
    if (split_tabs(ps, f, fl, 3) != 2 || !field_is(f[0], fl[0], LANGID_MAGIC))
        return bad(ps, "not a langid model (first line must be '" LANGID_MAGIC "<TAB>version')");
    if (parse_u64(f[1], fl[1], &v) || v != LANGID_VERSION) return bad(ps, "unsupported version");

    if (header(ps, "order", f, fl, 1)) return -1;
    if (parse_u64(f[1], fl[1], &v) || v < 1 || v > LANGID_MAX_ORDER)
        return bad(ps, "order must be 1..5");
    m->order = (int)v;
    if (header(ps, "mu", f, fl, m->order)) return -1;
    for (int o = 0; o < m->order; o++)
        if (parse_double(f[o + 1], fl[o + 1], &m->mu[o]) || m->mu[o] <= 0)
            return bad(ps, "bad mu value");
    if (header(ps, "temp", f, fl, 1)) return -1;
    if (parse_double(f[1], fl[1], &m->temp) || m->temp <= 0) return bad(ps, "bad temp value");
    if (header(ps, "langs", f, fl, 1)) return -1;
    if (parse_u64(f[1], fl[1], &v) || v < 1 || v > LANGID_MAX_LANGS)
        return bad(ps, "bad language count");
    m->nlangs = (int)v;
    m->codes = xcalloc((size_t)m->nlangs, sizeof *m->codes);
    m->pen = xcalloc((size_t)m->nlangs * (size_t)m->order, sizeof *m->pen);
    ntot = xcalloc((size_t)m->nlangs * (size_t)m->order, sizeof *ntot);
    for (int l = 0; l < m->nlangs; l++) {
        if (header(ps, "lang", f, fl, m->order + 1)) goto done;
        if (!fl[1] || fl[1] > LANGID_CODE_MAX || memchr(f[1], ' ', fl[1])) {
            bad(ps, "bad language code");
            goto done;
        }
        memcpy(m->codes[l], f[1], fl[1]);
        for (int k = 0; k < l; k++)
            if (strcmp(m->codes[k], m->codes[l]) == 0) {
                bad(ps, "duplicate language code");
                goto done;
            }
        for (int o = 0; o < m->order; o++) {
            if (parse_u64(f[o + 2], fl[o + 2], &v) || v == 0) {
                bad(ps, "bad gram total");
                goto done;
            }
            ntot[o * m->nlangs + l] = (double)v;
            m->pen[o * m->nlangs + l] = log((double)v + m->mu[o]);
        }
    }
    if (header(ps, "grams", f, fl, 1)) goto done;
    if (parse_u64(f[1], fl[1], &v) || v > (1u << 26)) {
        bad(ps, "bad gram count");
        goto done;
    }
    size_t ngrams = (size_t)v;
    m->cap = 16;
    while (m->cap < ngrams * 2)
        m->cap *= 2;
    m->slots = xcalloc(m->cap, sizeof *m->slots);
    size_t postcap = ngrams * 4 + 16;
    m->post = xmalloc(postcap * sizeof *m->post);
    for (size_t g = 0; g < ngrams; g++) {
        if (!next_line(ps)) {
            bad_eof(ps, "fewer grams than announced");
            goto done;
        }
        const char *tab = memchr(ps->line, '\t', ps->len);
        if (!tab || tab == ps->line) {
            bad(ps, "gram line needs '<gram><TAB><lang>:<count>...'");
            goto done;
        }
        /* the gram: UTF-8, '_' for the boundary */
        uint32_t cps[LANGID_MAX_ORDER];
        int k = 0;
        const unsigned char *s = (const unsigned char *)ps->line, *se = (const unsigned char *)tab;
        while (s < se) {
            uint32_t cp;
            size_t cl = utf8_decode(s, (size_t)(se - s), &cp);
            if (!cl || k == m->order) {
                bad(ps, cl ? "gram longer than the order" : "gram is not valid UTF-8");
                goto done;
            }
            cps[k++] = cp == '_' ? ' ' : cp;
            s += cl;
        }
        uint64_t key = gram_hash(cps, k);
        size_t i = (size_t)key & (m->cap - 1);
        while (m->slots[i].key && m->slots[i].key != key)
            i = (i + 1) & (m->cap - 1);
        if (m->slots[i].key) {
            bad(ps, "duplicate gram");
            goto done;
        }
        /* postings "idx:count" separated by single spaces */
        size_t nraw = 0;
        const char *p = tab + 1, *e = ps->line + ps->len;
        while (p < e) {
            const char *sp = memchr(p, ' ', (size_t)(e - p));
            const char *fe = sp ? sp : e;
            const char *colon = memchr(p, ':', (size_t)(fe - p));
            uint64_t li, cnt;
            if (!colon || parse_u64(p, (size_t)(colon - p), &li) ||
                parse_u64(colon + 1, (size_t)(fe - colon - 1), &cnt) || li >= (uint64_t)m->nlangs ||
                cnt == 0 || cnt > UINT32_MAX || (nraw && li <= raw[nraw - 1].lang)) {
                bad(ps, "bad posting (want increasing <lang index>:<count>)");
                goto done;
            }
            if (nraw == rawcap) {
                rawcap = rawcap ? rawcap * 2 : 64;
                raw = xrealloc(raw, rawcap * sizeof *raw);
            }
            raw[nraw].lang = (uint16_t)li;
            raw[nraw].count = (uint32_t)cnt;
            nraw++;
            p = sp ? sp + 1 : e;
        }
        if (!nraw) {
            bad(ps, "gram without postings");
            goto done;
        }
        /* weights: log(1 + c / (mu bg)), bg = mean relative frequency */
        int o = k - 1;
        double bg = 0;
        for (size_t j = 0; j < nraw; j++)
            bg += raw[j].count / ntot[o * m->nlangs + raw[j].lang];
        bg /= m->nlangs;
        if (m->npost + nraw > postcap) {
            while (m->npost + nraw > postcap)
                postcap *= 2;
            m->post = xrealloc(m->post, postcap * sizeof *m->post);
        }
        Slot *sl = &m->slots[i];
        sl->key = key;
        sl->start = (uint32_t)m->npost;
        sl->len = (uint16_t)nraw;
        sl->order = (uint8_t)k;
        for (size_t j = 0; j < nraw; j++) {
            m->post[m->npost].lang = raw[j].lang;
            m->post[m->npost].w = (float)log1p(raw[j].count / (m->mu[o] * bg));
            m->npost++;
        }
    }
    if (next_line(ps)) {
        bad(ps, "more grams than announced");
        goto done;
    }
    rc = 0;
done:
    free(ntot);
    free(raw);
    return rc;
}

/* Give every gram with at least stride / DENSE_DIV postings a dense row. */
static void build_rows(LangId *m) {
    size_t nrows = 0, row = 0;
    size_t min_len = m->stride / DENSE_DIV;
    for (size_t i = 0; i < m->cap; i++)
        nrows += m->slots[i].key && m->slots[i].len >= min_len;
    m->nrows = nrows;
    if (!nrows) return;
    m->rows_mem = xcalloc(nrows * m->stride + ROW_ALIGN / sizeof(float), sizeof(float));
    m->rows = (float *)(((uintptr_t)m->rows_mem + ROW_ALIGN - 1) & ~(uintptr_t)(ROW_ALIGN - 1));
    for (size_t i = 0; i < m->cap; i++) {
        Slot *sl = &m->slots[i];
        if (!sl->key || sl->len < min_len) continue;
        float *r = m->rows + row * m->stride;
        for (unsigned j = 0; j < sl->len; j++)
            r[m->post[sl->start + j].lang] = m->post[sl->start + j].w;
        sl->start = (uint32_t)row++;
        sl->dense = 1;
    }
}

/* 2^(lowbit + 52), lowbit the exponent of the lowest set bit over all
 * weights (see "Sums" under scoring), or 0 when that underflows. */
static double exact_bound(const LangId *m) {
    int lowbit = INT_MAX;
    for (size_t i = 0; i < m->npost; i++) {
        uint32_t bits;
        memcpy(&bits, &m->post[i].w, sizeof bits);
        uint32_t e = (bits >> 23) & 0xff, mant = bits & 0x7fffff;
        if (!bits) continue; /* adding 0 is exact */
        if (e) mant |= 1u << 23;
        int b = (e ? (int)e : 1) - 150 + __builtin_ctz(mant);
        if (b < lowbit) lowbit = b;
    }
    return lowbit == INT_MAX ? 0 : ldexp(1.0, lowbit + 52);
}

LangId *langid_load_mem(const char *data, size_t n, const char *name, Err *err) {
    LangId *m = xcalloc(1, sizeof *m);
    Parser ps = {.p = data, .end = data + n, .name = name, .err = err};
    if (parse_model(m, &ps)) {
        langid_free(m);
        return NULL;
    }
    m->stride = ((size_t)m->nlangs + ROW_LANES - 1) / ROW_LANES * ROW_LANES;
    build_rows(m);
    m->exact_below = exact_bound(m);
#if defined(__x86_64__) && defined(__GNUC__)
    m->avx2 = __builtin_cpu_supports("avx2");
#endif
    return m;
}

LangId *langid_load(const char *path, Err *err) {
    Buf b = {0};
    LangId *m = NULL;
    if (read_text_file(path, &b, err) == 0)
        m = langid_load_mem(b.data ? b.data : "", b.len, path, err);
    buf_free(&b);
    return m;
}

void langid_free(LangId *m) {
    if (!m) return;
    free(m->codes);
    free(m->pen);
    free(m->slots);
    free(m->post);
    free(m->rows_mem);
    free(m);
}

int langid_nlangs(const LangId *m) { return m->nlangs; }

const char *langid_lang(const LangId *m, int i) {
    return i >= 0 && i < m->nlangs ? m->codes[i] : NULL;
}

int langid_find(const LangId *m, const char *code) {
    for (int i = 0; i < m->nlangs; i++)
        if (strcmp(m->codes[i], code) == 0) return i;
    return -1;
}

double langid_temperature(const LangId *m) { return m->temp; }

/* ---- scoring ---- */

/* Grams are looked up in batches: first every slot of the batch is
 * prefetched, then the found sparse grams' postings, then the weights are
 * added. The table is far bigger than the caches, and the batches let the
 * memory loads overlap instead of waiting for one miss after another.
 *
 * Sums. A score is a sum of float weights in double precision, and the
 * reference order is text order, one gram at a time. Every weight is a
 * multiple of 2^lowbit (the lowest set bit over all weights, found at
 * load time), and so is every partial sum; all weights are positive, so
 * while a score stays below 2^(lowbit + 53) every partial sum, in any
 * order and grouping, is exactly representable: no addition rounds, and
 * any order gives the same bits. Scoring therefore first counts the hits
 * of each dense gram and adds count * row once at the end (the product,
 * below the score and a multiple of 2^lowbit too, is exact as well). The
 * frequent grams of a text repeat, so this adds far fewer rows.
 * If some score ends at or above 2^(lowbit + 52) (a huge text, or a model
 * with tiny weights) the text is scored again in text order. */
#define BATCH 32
#define COUNT_ROWS 4096      /* dense rows counted (more are added as hit) */
#define COUNT_MAX (1u << 26) /* longest text counted, so counts cannot wrap */

typedef struct Acc {
    const LangId *m;
    double *score; /* stride entries, ROW_ALIGN-aligned */
    size_t nord[LANGID_MAX_ORDER];
    uint64_t key[BATCH];
    int n;
    uint32_t *count;   /* hits per dense row, or NULL: add rows as hit */
    uint16_t *touched; /* the rows whose count is not 0 */
    int ntouched;
} Acc;

typedef double v2d __attribute__((vector_size(16)));
typedef float v2f __attribute__((vector_size(8)));

/* score[0..stride) += times * row[0..stride), each float widened to
 * double. The vector width only changes how many lanes go at once. */
static inline void add_row2(double *restrict score, const float *restrict row, size_t stride,
                            double times) {
    v2d t = {times, times};
    for (size_t l = 0; l < stride; l += 2) {
        v2f w;
        memcpy(&w, row + l, sizeof w);
        *(v2d *)(score + l) += t * __builtin_convertvector(w, v2d);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_AVX2_PATH 1
#include <immintrin.h>
__attribute__((target("avx2"))) static inline void
add_row4(double *restrict score, const float *restrict row, size_t stride, double times) {
    __m256d t = _mm256_set1_pd(times);
    for (size_t l = 0; l < stride; l += 4) {
        __m256d w = _mm256_mul_pd(t, _mm256_cvtps_pd(_mm_load_ps(row + l)));
        _mm256_store_pd(score + l, _mm256_add_pd(_mm256_load_pd(score + l), w));
    }
}
#else
#define add_row4 add_row2
#endif

static inline __attribute__((always_inline)) void add_row(const Acc *a, uint32_t r, double times,
                                                          int wide) {
    const LangId *m = a->m;
    if (wide)
        add_row4(a->score, m->rows + (size_t)r * m->stride, m->stride, times);
    else
        add_row2(a->score, m->rows + (size_t)r * m->stride, m->stride, times);
}

/* Probe the batch, then add (or count) the weights of the grams found. */
static inline __attribute__((always_inline)) void acc_step(Acc *a, int wide) {
    const LangId *m = a->m;
    const Slot *found[BATCH];
    int nf = 0;
    for (int i = 0; i < a->n; i++) {
        const Slot *s = find_slot(m, a->key[i]);
        if (!s) continue;
        found[nf++] = s;
        if (!s->dense) __builtin_prefetch(m->post + s->start);
    }
    for (int i = 0; i < nf; i++) {
        const Slot *s = found[i];
        a->nord[s->order - 1]++;
        if (s->dense) {
            if (a->count && s->start < COUNT_ROWS) {
                if (a->count[s->start]++ == 0) a->touched[a->ntouched++] = (uint16_t)s->start;
            } else {
                add_row(a, s->start, 1.0, wide);
            }
            continue;
        }
        const Posting *p = m->post + s->start;
        for (unsigned j = 0; j < s->len; j++)
            a->score[p[j].lang] += p[j].w;
    }
    a->n = 0;
}

/* Add the counted rows. */
static inline __attribute__((always_inline)) void acc_rows(Acc *a, int wide) {
    for (int i = 0; i < a->ntouched; i++)
        add_row(a, a->touched[i], (double)a->count[a->touched[i]], wide);
}

#ifdef HAVE_AVX2_PATH
__attribute__((target("avx2"))) static void acc_step_avx2(Acc *a) { acc_step(a, 1); }
__attribute__((target("avx2"))) static void acc_rows_avx2(Acc *a) { acc_rows(a, 1); }
#endif

static void acc_step_base(Acc *a) { acc_step(a, 0); }
static void acc_rows_base(Acc *a) { acc_rows(a, 0); }

static void acc_flush(Acc *a) {
#ifdef HAVE_AVX2_PATH
    if (a->m->avx2) {
        acc_step_avx2(a);
        return;
    }
#endif
    acc_step_base(a);
}

static void acc_finish(Acc *a) {
    acc_flush(a);
    if (!a->count) return;
#ifdef HAVE_AVX2_PATH
    if (a->m->avx2) {
        acc_rows_avx2(a);
        return;
    }
#endif
    acc_rows_base(a);
}

/* The weight sums of text[0..n) into acc[0..stride) and the grams found
 * per order into nord; dense rows counted when `count` is not NULL. */
static void score_text(const LangId *m, const char *text, size_t n, double *acc, size_t *nord,
                       uint32_t *count, uint16_t *touched) {
    LangIdCursor c;
    uint32_t cp;
    Acc a = {.m = m, .score = acc, .count = count, .touched = touched};
    memset(acc, 0, m->stride * sizeof *acc);
    if (count) memset(count, 0, (m->nrows < COUNT_ROWS ? m->nrows : COUNT_ROWS) * sizeof *count);
    langid_cursor_init(&c, text, n);
    /* run[k-1]: the FNV-1a state of the newest k code points, oldest
     * first, so that hash_final(run[k-1]) == gram_hash() of that gram */
    uint64_t run[LANGID_MAX_ORDER];
    int fill = 0, order = m->order;
    while ((cp = langid_next_cp(&c))) {
        if (fill < order) fill++;
        for (int k = fill - 1; k > 0; k--)
            run[k] = (run[k - 1] ^ cp) * FNV_PRIME;
        run[0] = (FNV_BASIS ^ cp) * FNV_PRIME;
        /* grams ending at cp, shortest first */
        for (int k = cp == ' ' ? 2 : 1; k <= fill; k++) {
            uint64_t key = hash_final(run[k - 1]);
            __builtin_prefetch(&m->slots[(size_t)key & (m->cap - 1)]);
            a.key[a.n++] = key;
        }
        if (a.n > BATCH - LANGID_MAX_ORDER) acc_flush(&a);
    }
    acc_finish(&a);
    memcpy(nord, a.nord, sizeof a.nord);
}

int langid_scores(const LangId *m, const char *text, size_t n, double *score, size_t *ngrams) {
    _Alignas(ROW_ALIGN) double acc[LANGID_MAX_LANGS];
    uint32_t count[COUNT_ROWS];
    uint16_t touched[COUNT_ROWS];
    size_t nord[LANGID_MAX_ORDER], total = 0;
    int have = 0, exact = 0, order = m->order;
    if (m->nrows && n < COUNT_MAX) {
        score_text(m, text, n, acc, nord, count, touched);
        exact = 1;
        for (int l = 0; l < m->nlangs; l++)
            exact &= acc[l] < m->exact_below;
    }
    if (!exact) score_text(m, text, n, acc, nord, NULL, NULL);
    for (int l = 0; l < m->nlangs; l++)
        score[l] = acc[l];
    for (int o = 0; o < order; o++) {
        if (!nord[o]) continue;
        have = 1;
        total += nord[o];
        const double *pen = m->pen + (size_t)o * m->nlangs;
        for (int l = 0; l < m->nlangs; l++)
            score[l] -= (double)nord[o] * pen[l];
    }
    if (ngrams) *ngrams = total;
    if (!have) {
        for (int l = 0; l < m->nlangs; l++)
            score[l] = 0;
        return -1;
    }
    int best = 0;
    for (int l = 1; l < m->nlangs; l++)
        if (score[l] > score[best]) best = l;
    return best;
}

int langid_identify(const LangId *m, const char *text, size_t n, LangScore *out) {
    double score[LANGID_MAX_LANGS];
    int best = langid_scores(m, text, n, score, NULL);
    if (best < 0) {
        out->lang = "und";
        out->conf = 0;
        return -1;
    }
    double z = 0;
    for (int l = 0; l < m->nlangs; l++)
        z += exp((score[l] - score[best]) / m->temp);
    out->lang = m->codes[best];
    out->conf = 1.0 / z;
    return 0;
}
