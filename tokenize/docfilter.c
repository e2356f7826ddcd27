/* docfilter.c - filterdocs.py's document checks, statistics and reader.
 *
 * Source of the behaviour: TurkuNLP WikiBERT pipeline scripts/filterdocs.py
 * (spyysalo/wiki-bert-pipeline) and its Hungarian copy filtering.py
 * (roberthajdu92/nvidia-bert-wiki-preprocess), specified in section 6 of
 * the pipeline specification. See docfilter.h for the contracts.
 *
 * Every code point is classified once through a 64 Ki-entry table built
 * from uniprop (one byte: the Python predicates the checks need plus
 * membership in the alphabet and upper-case sets); code points above the
 * BMP ask uniprop directly. One pass over a sentence fills the class bytes
 * and the character counts; WORD_RE then runs over the class bytes.
 */
#define _GNU_SOURCE /* memmem */
#include "tokenize/docfilter.h"

#include <stdio.h>
#include <string.h>

#include "common/io.h"
#include "common/uniprop.h"
#include "common/utf8.h"

/* Class bits of one code point. */
enum {
    K_WORD = 1 << 0,    /* re's \w: str.isalnum or '_' */
    K_SPACE = 1 << 1,   /* str.isspace */
    K_UPPER = 1 << 2,   /* str.isupper */
    K_DIGIT = 1 << 3,   /* str.isdigit */
    K_PUNCT = 1 << 4,   /* in string.punctuation */
    K_FOREIGN = 1 << 5, /* FOREIGN_LETTER */
    K_ALPHA = 1 << 6,   /* in the alphabet */
    K_UCLS = 1 << 7,    /* in the upper-case set */
};

#define HU_WORD_CHARS                                                                              \
    "abcdefghijklmnopqrstuvwxyz\xc3\xa1\xc3\xa9\xc3\xad\xc3\xb3\xc3\xb6\xc3\xba\xc3\xbc\xc5\x91"   \
    "\xc5\xb1"
#define ASCII_PUNCT "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

struct DocFilter {
    FilterOpts o;
    int w_len;
    Buf alpha, upper;           /* UTF-8, as the original builds them */
    uint32_t *astral_set;       /* sorted astral members, with ... */
    unsigned char *astral_bits; /* ... their K_ALPHA / K_UCLS bits */
    size_t nastral;
    FilterLangFn lang;
    void *lang_ctx;
    unsigned char cls[0x10000];
};

/* ---- names ---- */

static const char *const check_names[FC_COUNT] = {
    "all",           "avg-len",       "min-sents",   "max-sents",   "min-toks",
    "max-toks",      "no-word-ratio", "punct-ratio", "upper-ratio", "digit-ratio",
    "foreign-ratio", "min-words",     "langdetect",
};
static const char *const result_keys[FC_COUNT] = {
    "pass-all",         "fail-avg-len",     "fail-min-sents",     "fail-max-sents",
    "fail-min-toks",    "fail-max-toks",    "fail-no-word-ratio", "fail-punct-ratio",
    "fail-upper-ratio", "fail-digit-ratio", "fail-foreign-ratio", "fail-min-words",
    "fail-langdetect",
};

const char *filter_check_name(FilterCheck c) {
    return (unsigned)c < FC_COUNT ? check_names[c] : "?";
}

const char *filter_result_key(FilterCheck c) {
    return (unsigned)c < FC_COUNT ? result_keys[c] : "?";
}

int filter_check_find(const char *name) {
    for (int i = 1; i < FC_COUNT; i++)
        if (strcmp(name, check_names[i]) == 0) return i;
    return -1;
}

void filter_opts_default(FilterOpts *o) {
    memset(o, 0, sizeof *o);
    for (int i = 1; i < FC_COUNT; i++)
        o->use[i] = 1;
    o->avg_len = 4;
    o->min_sents = 3;
    o->max_sents = 1000;
    o->min_toks = 20;
    o->max_toks = 10000;
    o->min_words = 30;
    o->no_word_ratio = 0.2;
    o->punct_ratio = 0.075;
    o->upper_ratio = 0.1;
    o->digit_ratio = 0.075;
    o->foreign_ratio = 0.02;
    o->word_chars = HU_WORD_CHARS;
    o->language = "hu";
}

/* ---- building the alphabet ---- */

/* The fixed alphabets of filtering.py for languages whose words are not
 * spelled with a small alphabet: letters (category L*) of these ranges. */
typedef struct Range {
    uint32_t lo, hi;
} Range;
static const Range ja_ranges[] = {
    {0x3040, 0x309F}, {0x30A0, 0x30FF}, {0x4E00, 0x9FAF}, {0x3400, 0x4DBF}};
static const Range ko_ranges[] = {{0xAC00, 0xD7AF}};

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Index of cp in the sorted astral set, or -1. */
static long astral_find(const DocFilter *f, uint32_t cp) {
    size_t lo = 0, hi = f->nastral;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (f->astral_set[mid] < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->nastral && f->astral_set[lo] == cp ? (long)lo : -1;
}

/* Add set bit `bit` to code point cp (the astral list is sorted later). */
static void mark(DocFilter *f, uint32_t cp, unsigned bit) {
    if (cp < 0x10000) {
        f->cls[cp] |= (unsigned char)bit;
        return;
    }
    for (size_t i = 0; i < f->nastral; i++)
        if (f->astral_set[i] == cp) {
            f->astral_bits[i] |= (unsigned char)bit;
            return;
        }
    f->astral_set = xrealloc(f->astral_set, (f->nastral + 1) * sizeof *f->astral_set);
    f->astral_bits = xrealloc(f->astral_bits, f->nastral + 1);
    f->astral_set[f->nastral] = cp;
    f->astral_bits[f->nastral++] = (unsigned char)bit;
}

static unsigned member_bits(const DocFilter *f, uint32_t cp) {
    if (cp < 0x10000) return f->cls[cp] & (K_ALPHA | K_UCLS);
    for (size_t i = 0; i < f->nastral; i++)
        if (f->astral_set[i] == cp) return f->astral_bits[i];
    return 0;
}

/* Class byte from the uniprop bits and the set membership. */
static unsigned char class_of(uint32_t cp, unsigned props, unsigned members) {
    unsigned k = members;
    if (props & UNI_WORD) k |= K_WORD;
    if (props & UNI_SPACE) k |= K_SPACE;
    if (props & UNI_UPPER) k |= K_UPPER;
    if (props & UNI_DIGIT) k |= K_DIGIT;
    if (cp < 0x80 && cp && strchr(ASCII_PUNCT, (int)cp)) k |= K_PUNCT;
    if ((props & UNI_WORD) && !(props & UNI_DECIMAL) && cp != '_' && !members) k |= K_FOREIGN;
    return (unsigned char)k;
}

/* Walk a valid UTF-8 string. */
static uint32_t next_cp(const char *s, size_t n, size_t *i) {
    uint32_t cp;
    size_t k = utf8_decode((const unsigned char *)s + *i, n - *i, &cp);
    if (!k) cp = 0xFFFD, k = 1;
    *i += k;
    return cp;
}

DocFilter *docfilter_create(const FilterOpts *o, Err *err) {
    DocFilter *f = xcalloc(1, sizeof *f);
    f->o = *o;
    const char *lang = o->language ? o->language : "";
    int cjk = strcmp(lang, "ja") == 0 || strcmp(lang, "ko") == 0;
    Buf raw = {0};
    if (cjk) {
        const Range *r = lang[0] == 'j' ? ja_ranges : ko_ranges;
        size_t nr = lang[0] == 'j' ? sizeof ja_ranges / sizeof *r : sizeof ko_ranges / sizeof *r;
        if (o->word_chars_given && o->word_chars && strcmp(o->word_chars, "-") != 0)
            warn("warning: overriding --word-chars for %s", lang);
        for (size_t i = 0; i < nr; i++)
            for (uint32_t cp = r[i].lo; cp <= r[i].hi; cp++)
                if (uni_props(cp) & UNI_ALPHA) utf8_append_cp(&raw, cp);
        buf_puts(&raw, "abcdefghijklmnopqrstuvwxyz");
        f->w_len = 1;
    } else {
        const char *wc = o->word_chars ? o->word_chars : "";
        if (!*wc) {
            warn("warning: --word-chars not given, using [a-z]");
            wc = "abcdefghijklmnopqrstuvwxyz";
        }
        size_t n = strlen(wc);
        if (utf8_valid_prefix(wc, n) != n) {
            err_set(err, "--word-chars: not valid UTF-8");
            buf_free(&raw);
            free(f);
            return NULL;
        }
        buf_append(&raw, wc, n);
        f->w_len = 2;
    }
    /* whitespace is never part of a word */
    int had_space = 0;
    for (size_t i = 0; i < raw.len;) {
        size_t at = i;
        uint32_t cp = next_cp(raw.data, raw.len, &i);
        if (uni_props(cp) & UNI_SPACE)
            had_space = 1;
        else
            buf_append(&f->alpha, raw.data + at, i - at);
    }
    buf_free(&raw);
    if (had_space) warn("warning: discarding space characters from --word-chars");
    if (!f->alpha.data) buf_puts(&f->alpha, "");
    for (size_t i = 0; i < f->alpha.len;)
        mark(f, next_cp(f->alpha.data, f->alpha.len, &i), K_ALPHA);

    /* upper: c.upper() of each alphabet character unless it is already a
     * substring of the alphabet (a one-character form: a member of it) */
    Buf u = {0};
    for (size_t i = 0; i < f->alpha.len;) {
        uint32_t cp = next_cp(f->alpha.data, f->alpha.len, &i);
        buf_clear(&u);
        uni_append_upper(&u, cp);
        size_t k = 0;
        uint32_t first = u.len ? next_cp(u.data, u.len, &k) : 0;
        int present = k == u.len ? (member_bits(f, first) & K_ALPHA) != 0
                                 : memmem(f->alpha.data, f->alpha.len, u.data, u.len) != NULL;
        if (!present && u.len) buf_append(&f->upper, u.data, u.len);
    }
    buf_free(&u);
    if (!f->upper.data) buf_puts(&f->upper, "");
    for (size_t i = 0; i < f->upper.len;)
        mark(f, next_cp(f->upper.data, f->upper.len, &i), K_UCLS);

    /* the class table, and the astral members sorted for lookups */
    for (uint32_t cp = 0; cp < 0x10000; cp++)
        f->cls[cp] = class_of(cp, uni_props(cp), f->cls[cp] & (K_ALPHA | K_UCLS));
    if (f->nastral) {
        uint64_t *pairs = xmalloc(f->nastral * sizeof *pairs);
        for (size_t i = 0; i < f->nastral; i++)
            pairs[i] = (uint64_t)f->astral_set[i] << 8 | f->astral_bits[i];
        qsort(pairs, f->nastral, sizeof *pairs, cmp_u64);
        for (size_t i = 0; i < f->nastral; i++) {
            f->astral_set[i] = (uint32_t)(pairs[i] >> 8);
            f->astral_bits[i] = (unsigned char)pairs[i];
        }
        free(pairs);
    }
    return f;
}

void docfilter_destroy(DocFilter *f) {
    if (!f) return;
    buf_free(&f->alpha);
    buf_free(&f->upper);
    free(f->astral_set);
    free(f->astral_bits);
    free(f);
}

void docfilter_set_lang(DocFilter *f, FilterLangFn fn, void *ctx) {
    f->lang = fn;
    f->lang_ctx = ctx;
}

const char *docfilter_alpha(const DocFilter *f) { return f->alpha.data; }
const char *docfilter_upper(const DocFilter *f) { return f->upper.data; }
int docfilter_word_len(const DocFilter *f) { return f->w_len; }

void filter_scratch_free(FilterScratch *s) {
    free(s->cls);
    s->cls = NULL;
    s->cap = 0;
    buf_free(&s->joined);
}

/* ---- pattern rules ---- */

int pattern_rules_add(PatternRules *r, int kind, const char *re, Err *err) {
    Pattern *p = pattern_create(re, err);
    if (!p) return -1;
    r->pat[kind] = xrealloc(r->pat[kind], (size_t)(r->n[kind] + 1) * sizeof *r->pat[kind]);
    r->pat[kind][r->n[kind]++] = p;
    r->total++;
    return 0;
}

void pattern_rules_free(PatternRules *r) {
    for (int k = 0; k < PR_KINDS; k++) {
        for (int i = 0; i < r->n[k]; i++)
            pattern_destroy(r->pat[k][i]);
        free(r->pat[k]);
    }
    memset(r, 0, sizeof *r);
}

void rule_scratch_free(RuleScratch *s) {
    for (int i = 0; i < s->npd; i++)
        pattern_data_destroy(s->pd[i]);
    free(s->pd);
    buf_free(&s->kept);
    memset(s, 0, sizeof *s);
}

/* Whether any pattern of `kind` matches line[0..n); slot is the index of
 * the kind's first pattern in s->pd. */
static int any_match(const PatternRules *r, RuleScratch *s, int kind, int slot, const char *line,
                     size_t n) {
    for (int i = 0; i < r->n[kind]; i++) {
        const Pattern *p = r->pat[kind][i];
        if (!s->pd[slot + i]) s->pd[slot + i] = pattern_data_create(p);
        int m = pattern_find(p, s->pd[slot + i], line, n, PATTERN_VALID_UTF8, NULL);
        if (m < 0) s->errors++;
        if (m > 0) return 1;
    }
    return 0;
}

RuleVerdict pattern_rules_apply(const PatternRules *r, RuleScratch *s, const char *doc, size_t len,
                                size_t *nsent, size_t *dropped) {
    if (!s->pd) s->pd = xcalloc((size_t)(s->npd = r->total), sizeof *s->pd);
    const int slot_docs = r->n[PR_DROP_LINES], slot_keep = slot_docs + r->n[PR_DROP_DOCS];
    *dropped = 0;
    if (r->n[PR_DROP_LINES]) {
        buf_clear(&s->kept);
        size_t kept = 0;
        for (const char *q = doc, *e = doc + len; q < e;) {
            const char *nl = memchr(q, '\n', (size_t)(e - q));
            size_t n = nl ? (size_t)(nl - q) : (size_t)(e - q);
            if (any_match(r, s, PR_DROP_LINES, 0, q, n)) {
                ++*dropped;
            } else {
                buf_append(&s->kept, q, n);
                buf_putc(&s->kept, '\n');
                kept++;
            }
            q += n + 1;
        }
        *nsent = kept;
        if (!kept) return PR_EMPTIED;
        doc = s->kept.data, len = s->kept.len;
    }
    if (!r->n[PR_DROP_DOCS] && !r->n[PR_KEEP_DOCS]) return PR_KEEP;
    int keep_hit = 0;
    for (const char *q = doc, *e = doc + len; q < e;) {
        const char *nl = memchr(q, '\n', (size_t)(e - q));
        size_t n = nl ? (size_t)(nl - q) : (size_t)(e - q);
        if (any_match(r, s, PR_DROP_DOCS, slot_docs, q, n)) return PR_DROPPED;
        if (!keep_hit && any_match(r, s, PR_KEEP_DOCS, slot_keep, q, n)) keep_hit = 1;
        q += n + 1;
    }
    return r->n[PR_KEEP_DOCS] && !keep_hit ? PR_NOT_KEPT : PR_KEEP;
}

/* ---- measuring ---- */

static unsigned char astral_class(const DocFilter *f, uint32_t cp) {
    long i = f->nastral ? astral_find(f, cp) : -1;
    return class_of(cp, uni_props(cp), i < 0 ? 0 : f->astral_bits[i]);
}

static inline int word_at(const unsigned char *k, size_t n, size_t i) {
    return i < n && (k[i] & K_WORD);
}

/* Python re's \b at position i of k[0..n). */
static inline int boundary(const unsigned char *k, size_t n, size_t i) {
    return (i > 0 && (k[i - 1] & K_WORD)) != word_at(k, n, i);
}

/* End of a WORD_RE match starting at p (where \b holds), or 0: the
 * optional upper-case character is tried first, then the greedy letter
 * run backs off until the closing \b holds. */
static size_t match_at(const unsigned char *k, size_t n, size_t p, size_t w_len) {
    for (int opt = 1; opt >= 0; opt--) {
        if (opt && !(k[p] & K_UCLS)) continue;
        size_t q = p + (size_t)opt, r = q;
        while (r < n && (k[r] & K_ALPHA))
            r++;
        for (size_t e = r; e >= q + w_len; e--)
            if (boundary(k, n, e)) return e;
    }
    return 0;
}

/* Non-overlapping WORD_RE matches in the classified sentence k[0..n). */
static size_t count_matches(const unsigned char *k, size_t n, size_t w_len) {
    size_t count = 0, p = 0;
    while (p < n) {
        if (boundary(k, n, p)) {
            size_t e = match_at(k, n, p, w_len);
            if (e) {
                count++;
                p = e;
                continue;
            }
        }
        p++;
    }
    return count;
}

/* Classify sentence s[0..n) into s->cls and add its character counts to
 * m. Returns the number of code points. */
static size_t classify(const DocFilter *f, FilterScratch *sc, const char *s, size_t n,
                       DocMeasure *m) {
    if (sc->cap < n + 1) {
        size_t cap = sc->cap ? sc->cap : 256;
        while (cap < n + 1)
            cap *= 2;
        sc->cls = xrealloc(sc->cls, cap);
        sc->cap = cap;
    }
    const unsigned char *p = (const unsigned char *)s;
    unsigned char *k = sc->cls;
    size_t i = 0, nc = 0;
    uint64_t upper = 0, digit = 0, punct = 0, foreign = 0, toks = 0;
    int prev_space = 1;
    while (i < n) {
        uint32_t cp = p[i];
        if (cp < 0x80) {
            i++;
        } else {
            size_t l = utf8_decode(p + i, n - i, &cp);
            if (!l) cp = 0xFFFD, l = 1;
            i += l;
        }
        unsigned c = cp < 0x10000 ? f->cls[cp] : astral_class(f, cp);
        k[nc++] = (unsigned char)c;
        upper += (c >> 2) & 1;
        digit += (c >> 3) & 1;
        punct += (c >> 4) & 1;
        foreign += (c >> 5) & 1;
        int sp = (c & K_SPACE) != 0;
        toks += prev_space & !sp;
        prev_space = sp;
    }
    m->chars += nc;
    m->upper += upper;
    m->digit += digit;
    m->punct += punct;
    m->foreign += foreign;
    m->toks += toks;
    return nc;
}

void docfilter_measure(const DocFilter *f, FilterScratch *s, const char *doc, size_t len,
                       DocMeasure *m) {
    memset(m, 0, sizeof *m);
    const char *p = doc, *end = doc + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        size_t nc = classify(f, s, p, n, m);
        size_t w = count_matches(s->cls, nc, (size_t)f->w_len);
        m->words += w;
        m->no_word += w == 0;
        m->sents++;
        p += n + (nl != NULL);
    }
}

size_t docfilter_count_words(const DocFilter *f, FilterScratch *s, const char *sent, size_t n) {
    DocMeasure m = {0};
    size_t nc = classify(f, s, sent, n, &m);
    return count_matches(s->cls, nc, (size_t)f->w_len);
}

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

FilterCheck docfilter_decide(const DocFilter *f, const DocMeasure *m) {
    const FilterOpts *o = &f->o;
    const int *use = o->use;
    if (use[FC_AVG_LEN] && ratio(m->words, m->sents) < (double)o->avg_len) return FC_AVG_LEN;
    if (use[FC_MIN_SENTS] && (double)m->sents < (double)o->min_sents) return FC_MIN_SENTS;
    if (use[FC_MAX_SENTS] && (double)m->sents > (double)o->max_sents) return FC_MAX_SENTS;
    if (use[FC_MIN_TOKS] && (double)m->toks < (double)o->min_toks) return FC_MIN_TOKS;
    if (use[FC_MAX_TOKS] && (double)m->toks > (double)o->max_toks) return FC_MAX_TOKS;
    if (use[FC_NO_WORD_RATIO] && ratio(m->no_word, m->sents) > o->no_word_ratio)
        return FC_NO_WORD_RATIO;
    if (use[FC_PUNCT_RATIO] && ratio(m->punct, m->chars) > o->punct_ratio) return FC_PUNCT_RATIO;
    if (use[FC_UPPER_RATIO] && ratio(m->upper, m->chars) > o->upper_ratio) return FC_UPPER_RATIO;
    if (use[FC_DIGIT_RATIO] && ratio(m->digit, m->chars) > o->digit_ratio) return FC_DIGIT_RATIO;
    if (use[FC_FOREIGN_RATIO] && ratio(m->foreign, m->chars) > o->foreign_ratio)
        return FC_FOREIGN_RATIO;
    if (use[FC_MIN_WORDS] && (double)m->words < (double)o->min_words) return FC_MIN_WORDS;
    return FC_PASS;
}

FilterCheck docfilter_check(const DocFilter *f, FilterScratch *s, int worker, const char *doc,
                            size_t len, DocMeasure *out) {
    DocMeasure m;
    docfilter_measure(f, s, doc, len, &m);
    if (out) *out = m;
    FilterCheck r = docfilter_decide(f, &m);
    if (r != FC_PASS || !f->o.use[FC_LANGDETECT] || !f->lang) return r;
    buf_clear(&s->joined);
    buf_append(&s->joined, doc, len);
    if (s->joined.len && s->joined.data[s->joined.len - 1] == '\n')
        s->joined.data[--s->joined.len] = '\0';
    for (size_t i = 0; i < s->joined.len; i++)
        if (s->joined.data[i] == '\n') s->joined.data[i] = ' ';
    return f->lang(f->lang_ctx, worker, s->joined.data, s->joined.len) ? FC_PASS : FC_LANGDETECT;
}

/* ---- statistics ---- */

void filter_counts_add(FilterCounts *a, const FilterCounts *b) {
    a->docs += b->docs;
    a->output += b->output;
    for (int i = 0; i < FC_COUNT; i++)
        a->result[i] += b->result[i];
}

static void pct(Buf *out, uint64_t v, uint64_t total) {
    char t[64];
    snprintf(t, sizeof t, "%.1f%%", total ? (double)v / (double)total * 100.0 : 0.0);
    buf_puts(out, t);
}

void filter_report(Buf *out, const char *name, const FilterCounts *c) {
    int order[FC_COUNT];
    for (int i = 0; i < FC_COUNT; i++)
        order[i] = i;
    for (int i = 1; i < FC_COUNT; i++) /* insertion sort by key */
        for (int j = i; j > 0 && strcmp(result_keys[order[j - 1]], result_keys[order[j]]) > 0;
             j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    char t[512];
    for (int i = 0; i < FC_COUNT; i++) {
        uint64_t v = c->result[order[i]];
        if (!v) continue;
        snprintf(t, sizeof t, "%s:\t%s\t%llu (", name, result_keys[order[i]],
                 (unsigned long long)v);
        buf_puts(out, t);
        pct(out, v, c->docs);
        buf_puts(out, ")\n");
    }
    snprintf(t, sizeof t, "%s: output %llu/%llu documents (", name, (unsigned long long)c->output,
             (unsigned long long)c->docs);
    buf_puts(out, t);
    pct(out, c->output, c->docs);
    buf_puts(out, ")\n");
}

/* ---- reading ---- */

/* Length of s[0..n) without trailing whitespace (str.rstrip()). */
static size_t rstrip_len(const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    while (n > 0) {
        unsigned c = p[n - 1];
        if (c < 0x80) {
            if (c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F)) {
                n--;
                continue;
            }
            break;
        }
        size_t st = n - 1;
        while (st > 0 && n - st < 4 && (p[st] & 0xC0) == 0x80)
            st--;
        uint32_t cp;
        if (utf8_decode(p + st, n - st, &cp) != n - st || !(uni_props(cp) & UNI_SPACE)) break;
        n = st;
    }
    return n;
}

static void ds_emit(DocSplit *ds) {
    ds->sink(ds->ctx, ds->doc.data, ds->doc.len, ds->nsent, ds->doc_line);
    buf_clear(&ds->doc);
    ds->nsent = 0;
    ds->ndocs++;
}

static size_t ds_max(const DocSplit *ds) { return ds->max_bytes ? ds->max_bytes : io_max_line(); }

/* Stop the input: what (1 a line, 2 a document) starting at `line` is too long. */
static void ds_too_long(DocSplit *ds, int what, uint64_t line) {
    ds->too_long = what;
    ds->too_long_line = line;
    ds->stopped = 1;
    buf_free(&ds->carry); /* give the memory back now */
    buf_free(&ds->doc);
}

/* One complete line (without its terminator). */
static void ds_line(DocSplit *ds, const char *p, size_t n) {
    ds->line++;
    if (n > ds_max(ds)) {
        ds_too_long(ds, 1, ds->line);
        return;
    }
    if (utf8_valid_prefix(p, n) != n) {
        buf_clear(&ds->fix);
        ds->bad_utf8 += utf8_append_repair(&ds->fix, p, n);
        if (!ds->first_bad_line) ds->first_bad_line = ds->line;
        p = ds->fix.data;
        n = ds->fix.len;
    }
    n = rstrip_len(p, n);
    if (ds->lines) {
        if (n > ds_max(ds)) { /* the repair of invalid UTF-8 made it longer */
            ds_too_long(ds, 1, ds->line);
            return;
        }
        ds->doc_line = ds->line;
        buf_append(&ds->doc, p, n);
        buf_putc(&ds->doc, '\n');
        ds->nsent = 1;
        ds_emit(ds);
        return;
    }
    if (n) {
        if (!ds->nsent) ds->doc_line = ds->line;
        if (ds->doc.len + n > ds_max(ds)) { /* its lines and the newlines between them */
            ds_too_long(ds, 2, ds->doc_line);
            return;
        }
        buf_append(&ds->doc, p, n);
        buf_putc(&ds->doc, '\n');
        ds->nsent++;
        return;
    }
    if (ds->nsent) ds_emit(ds);
    if (ds->limit >= 0 && ds->ndocs >= (uint64_t)ds->limit) ds->stopped = 1;
}

int docsplit_feed(DocSplit *ds, const char *p, size_t n) {
    size_t i = 0;
    if (ds->stopped) return 1;
    if (ds->pending_cr && n) {
        ds->pending_cr = 0;
        if (p[0] == '\n') i = 1; /* the '\n' of a "\r\n" cut by the chunk end */
    }
    /* next '\n' and next '\r' at or after i, n if none; rescanned only when
     * passed, so lines ended by only one kind stay linear */
    const char *nl = NULL, *cr = NULL;
    size_t next_nl = 0, next_cr = 0;
    int have_nl = 0, have_cr = 0;
    while (i < n && !ds->stopped) {
        if (!have_nl || next_nl < i) {
            nl = memchr(p + i, '\n', n - i);
            next_nl = nl ? (size_t)(nl - p) : n;
            have_nl = 1;
        }
        if (!have_cr || next_cr < i) {
            cr = memchr(p + i, '\r', n - i);
            next_cr = cr ? (size_t)(cr - p) : n;
            have_cr = 1;
        }
        size_t j = next_nl < next_cr ? next_nl : next_cr;
        if (j == n) {
            if (ds->carry.len + (n - i) > ds_max(ds)) { /* no line end within the limit */
                ds_too_long(ds, 1, ds->line + 1);
                break;
            }
            buf_append(&ds->carry, p + i, n - i);
            break;
        }
        if (ds->carry.len) {
            if (ds->carry.len + (j - i) > ds_max(ds)) {
                ds_too_long(ds, 1, ds->line + 1);
                break;
            }
            buf_append(&ds->carry, p + i, j - i);
            ds_line(ds, ds->carry.data, ds->carry.len);
            buf_clear(&ds->carry);
        } else {
            ds_line(ds, p + i, j - i);
        }
        if (p[j] == '\r') {
            if (j + 1 < n) {
                if (p[j + 1] == '\n') j++;
            } else {
                ds->pending_cr = 1;
            }
        }
        i = j + 1;
    }
    return ds->stopped;
}

void docsplit_finish(DocSplit *ds) {
    if (!ds->stopped) {
        if (ds->carry.len) ds_line(ds, ds->carry.data, ds->carry.len);
        if (!ds->stopped && ds->nsent) ds_emit(ds);
    }
    buf_clear(&ds->carry);
    buf_clear(&ds->doc);
    ds->nsent = 0;
    ds->pending_cr = 0;
    ds->stopped = 0;
    ds->line = 0;
    ds->ndocs = 0;
    ds->first_bad_line = 0;
}

void docsplit_free(DocSplit *ds) {
    buf_free(&ds->carry);
    buf_free(&ds->doc);
    buf_free(&ds->fix);
}
