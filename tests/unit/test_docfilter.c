/* test_docfilter.c - filterdocs.py's checks on real Wikipedia sentences,
 * WORD_RE and FOREIGN_LETTER corner cases, the reader (universal newlines,
 * stripping, limits, chunk boundaries), the statistics format and the
 * dedup table.
 *
 * Expected values were worked out by hand and cross-checked once against
 * filterdocs.py (Python 3.11 re) on the same strings. The documents of
 * tests/data/filter/checks.txt are sentences of the huwiki "Berlin" and
 * enwiki samples in tests/data, grouped so that each fails one check under
 * the Hungarian defaults.
 */
#include <stdio.h>

#include "tests/test.h"
#include "tokenize/dedup.h"
#include "tokenize/docfilter.h"

#define CHECKS_FILE "tests/data/filter/checks.txt"

static FilterScratch scratch;

static DocFilter *make(FilterOpts *o) {
    Err err;
    DocFilter *f = docfilter_create(o, &err);
    if (!f) printf("docfilter_create: %s\n", err.msg);
    return f;
}

static DocFilter *hungarian(void) {
    FilterOpts o;
    filter_opts_default(&o);
    return make(&o);
}

static size_t words(DocFilter *f, const char *s) {
    return docfilter_count_words(f, &scratch, s, strlen(s));
}

/* ---- WORD_RE ---- */

static void test_word_re(void) {
    DocFilter *f = hungarian();
    test_str_eq("hu upper set", docfilter_upper(f), "ABCDEFGHIJKLMNOPQRSTUVWXYZÁÉÍÓÖÚÜŐŰ");
    test_cond("hu word length 2", docfilter_word_len(f) == 2);
    test_cond("Budapest matches", words(f, "Budapest") == 1);
    test_cond("kft2: no boundary after kft", words(f, "kft2") == 0);
    test_cond("naïve: ï is a word char outside the alphabet", words(f, "naïve") == 0);
    test_cond("ABC: one capital only", words(f, "ABC") == 0);
    test_cond("Ab: capital plus one letter is too short", words(f, "Ab") == 0);
    test_cond("Az: two letters with a capital do not match", words(f, "Az") == 0);
    test_cond("accented capitals", words(f, "Éva és Ödön") == 3);
    test_cond("underscore is a word char", words(f, "foo_bar") == 0);
    test_cond("hyphen is a boundary", words(f, "foo-bar") == 2);
    test_cond("digits then hyphen: 2008-ban", words(f, "Az épületet 2008-ban lebontották.") == 3);
    test_cond("NBSP separates", words(f, "ab\xc2\xa0"
                                         "cd") == 2);
    test_cond("İ (dotted capital) is no member", words(f, "İstanbul") == 0);
    test_cond("empty", words(f, "") == 0);
    test_cond("real sentence",
              words(f,
                    "Berlin Németország fővárosa, egyben tartományi rangú városállama "
                    "(szövetségi tartománya) és a Berlin/Brandenburg nagyvárosi régió centruma.") ==
                  15);
    docfilter_destroy(f);

    /* non-word characters in the alphabet: the letter run backs off to a boundary */
    FilterOpts o;
    filter_opts_default(&o);
    o.word_chars = "a.";
    f = make(&o);
    test_str_eq("a. upper", docfilter_upper(f), "A");
    test_cond("a.a. -> a.a", words(f, "a.a.") == 1);
    test_cond("..a: no boundary before the first dot", words(f, "..a") == 0);
    test_cond("a.a.a b.a. -> a.a.a and .a", words(f, "a.a.a b.a.") == 2);
    test_cond("ab.a -> .a", words(f, "ab.a") == 1);
    docfilter_destroy(f);

    /* full upper-casing: ß -> SS, which is not in the alphabet */
    o.word_chars = "\xc3\x9f";
    f = make(&o);
    test_str_eq("ß upper is SS", docfilter_upper(f), "SS");
    test_cond("ßß matches", words(f, "\xc3\x9f\xc3\x9f SS") == 1);
    test_cond("SSßß: S then S is not a letter of the alphabet",
              words(f, "SS\xc3\x9f\xc3\x9f") == 0);
    docfilter_destroy(f);

    o.word_chars = "aA";
    f = make(&o);
    test_str_eq("upper forms already in the alphabet are left out", docfilter_upper(f), "");
    test_cond("aAa matches without an upper set", words(f, "aAa") == 1);
    docfilter_destroy(f);

    o.word_chars = "\xc5\x89"; /* ŉ -> ʼN, two characters */
    f = make(&o);
    test_str_eq("ŉ upper is ʼN", docfilter_upper(f), "\xca\xbcN");
    docfilter_destroy(f);

    o.word_chars = "\xf0\x9d\x90\x9a\xf0\x9d\x90\x9b"; /* mathematical bold a, b */
    f = make(&o);
    test_cond("astral alphabet",
              words(f, "\xf0\x9d\x90\x9a\xf0\x9d\x90\x9b\xf0\x9d\x90\x9a \xf0\x9d\x90\x9a") == 1);
    docfilter_destroy(f);

    o.word_chars = "a b\tc";
    f = make(&o);
    test_str_eq("whitespace removed from the alphabet", docfilter_alpha(f), "abc");
    docfilter_destroy(f);

    o.word_chars = "";
    f = make(&o);
    test_str_eq("empty word chars: a-z", docfilter_alpha(f), "abcdefghijklmnopqrstuvwxyz");
    docfilter_destroy(f);

    o.word_chars = "ab\xff";
    Err err;
    test_cond("invalid UTF-8 word chars refused", docfilter_create(&o, &err) == NULL);

    filter_opts_default(&o);
    o.language = "ja";
    f = make(&o);
    test_cond("ja: one-letter words", docfilter_word_len(f) == 1);
    test_str_eq("ja: upper is A-Z", docfilter_upper(f), "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
    test_cond("ja: kana and kanji run is one word; Tokyo, ist, x",
              words(f, "東京は日本の首都です。Tokyo ist x") == 4);
    test_cond("ja: alphabet has the kana and kanji letters",
              strlen(docfilter_alpha(f)) > 27000 * 3);
    docfilter_destroy(f);
    o.language = "ko";
    f = make(&o);
    test_cond("ko: hangul words", words(f, "서울은 한국의 수도") == 3);
    docfilter_destroy(f);
}

/* ---- character counts ---- */

static void measure(DocFilter *f, const char *doc, DocMeasure *m) {
    docfilter_measure(f, &scratch, doc, strlen(doc), m);
}

static void test_counts(void) {
    DocFilter *f = hungarian();
    DocMeasure m;
    /* ² ½ Ⅻ Ж у к ä ß ç 𝐀 are foreign; 1 2 3 ٣ 𝟙 (Nd) and _ are not */
    measure(f, "²½Ⅻ Жук 123 _ äß ç ٣ 𝟙 𝐀\n", &m);
    test_cond("foreign letters", m.foreign == 10);
    test_cond("isdigit: ² 1 2 3 ٣ 𝟙", m.digit == 6);
    test_cond("isupper: Ⅻ Ж 𝐀", m.upper == 3);
    test_cond("chars are code points", m.chars == 24);
    test_cond("tokens", m.toks == 9);
    test_cond("no words", m.words == 0 && m.no_word == 1 && m.sents == 1);
    measure(f,
            "a\xc2\xa0"
            "b\xe3\x80\x80"
            "c\xe2\x80\xa8"
            "d\x1c"
            "e\n",
            &m);
    test_cond("Unicode whitespace splits tokens", m.toks == 5);
    measure(f, "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ \xc2\xab\xc2\xbb\xe2\x80\xa6\n", &m);
    test_cond("ASCII punctuation only", m.punct == 32);
    docfilter_destroy(f);
}

/* ---- the checks on real documents ---- */

typedef struct Docs {
    char *doc[32];
    size_t len[32], nsent[32];
    uint64_t line[32];
    int n;
} Docs;

static void collect(void *ctx, const char *doc, size_t len, size_t nsent, uint64_t line) {
    Docs *d = ctx;
    if (d->n >= 32) return;
    d->doc[d->n] = xmalloc(len + 1);
    memcpy(d->doc[d->n], doc, len);
    d->doc[d->n][len] = '\0';
    d->len[d->n] = len;
    d->nsent[d->n] = nsent;
    d->line[d->n] = line;
    d->n++;
}

static void docs_free(Docs *d) {
    for (int i = 0; i < d->n; i++)
        free(d->doc[i]);
    d->n = 0;
}

static int load_checks(Docs *d) {
    FILE *fp = fopen(CHECKS_FILE, "rb");
    test_cond("test data " CHECKS_FILE " present (run from the repository root)", fp != NULL);
    if (!fp) return -1;
    DocSplit ds = {.limit = -1, .sink = collect, .ctx = d};
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, fp)) > 0)
        docsplit_feed(&ds, buf, n);
    fclose(fp);
    docsplit_finish(&ds);
    docsplit_free(&ds);
    return 0;
}

static int lang_calls;
static char lang_text[2048];

static int fake_lang(void *ctx, int worker, const char *text, size_t n) {
    lang_calls++;
    snprintf(lang_text, sizeof lang_text, "%.*s", (int)n, text);
    return *(int *)ctx;
}

static FilterCheck check_with(FilterOpts *o, const Docs *d, int i) {
    DocFilter *f = make(o);
    FilterCheck r = docfilter_check(f, &scratch, 0, d->doc[i], d->len[i], NULL);
    docfilter_destroy(f);
    return r;
}

static void test_checks(void) {
    Docs d = {0};
    if (load_checks(&d)) return;
    static const struct {
        FilterCheck want;
        DocMeasure m; /* sents words no_word toks chars punct upper digit foreign */
    } expect[] = {
        {FC_PASS, {4, 55, 0, 63, 433, 13, 10, 0, 0}},
        {FC_AVG_LEN, {4, 5, 0, 7, 56, 4, 4, 0, 0}}, /* headings: 5 words / 4 */
        {FC_MIN_SENTS, {2, 20, 0, 21, 198, 5, 3, 0, 0}},
        {FC_MIN_TOKS, {3, 14, 0, 19, 113, 4, 4, 1, 0}},        /* 8 + 7 + 4 tokens */
        {FC_NO_WORD_RATIO, {5, 40, 2, 50, 371, 11, 10, 4, 0}}, /* "II." and "I." */
        {FC_PUNCT_RATIO, {3, 53, 0, 62, 463, 80, 22, 0, 0}},
        {FC_UPPER_RATIO, {3, 36, 0, 46, 299, 15, 59, 0, 0}}, /* CFB, CERH, ISCII ... */
        {FC_DIGIT_RATIO, {3, 37, 0, 51, 324, 12, 6, 41, 0}},
        {FC_FOREIGN_RATIO, {3, 17, 0, 27, 198, 5, 9, 0, 6}}, /* five ß and one ä */
        {FC_MIN_WORDS, {3, 26, 0, 33, 209, 3, 5, 0, 0}},
    };
    int n = (int)(sizeof expect / sizeof *expect);
    test_cond("ten documents in checks.txt", d.n == n);
    test_cond("document line numbers",
              d.n == n && d.line[0] == 1 && d.line[1] == 6 && d.line[2] == 11);
    DocFilter *f = hungarian(); /* no language callback: check 12 is off */
    for (int i = 0; i < n && i < d.n; i++) {
        DocMeasure m;
        FilterCheck r = docfilter_check(f, &scratch, 0, d.doc[i], d.len[i], &m);
        char what[96];
        snprintf(what, sizeof what, "document %d: %s", i + 1, filter_result_key(expect[i].want));
        test_cond(what, r == expect[i].want);
        snprintf(what, sizeof what, "document %d: measures", i + 1);
        test_cond(what, memcmp(&m, &expect[i].m, sizeof m) == 0);
        if (memcmp(&m, &expect[i].m, sizeof m) != 0)
            printf("  got sents %llu words %llu no_word %llu toks %llu chars %llu punct %llu upper "
                   "%llu "
                   "digit %llu foreign %llu\n",
                   (unsigned long long)m.sents, (unsigned long long)m.words,
                   (unsigned long long)m.no_word, (unsigned long long)m.toks,
                   (unsigned long long)m.chars, (unsigned long long)m.punct,
                   (unsigned long long)m.upper, (unsigned long long)m.digit,
                   (unsigned long long)m.foreign);
    }
    docfilter_destroy(f);
    if (d.n != n) {
        docs_free(&d);
        return;
    }

    /* every threshold: a tie passes, one step stricter fails that check */
    FilterOpts o;
#define TIE(doc, field, tie, strict, check)                                                        \
    do {                                                                                           \
        filter_opts_default(&o);                                                                   \
        o.use[FC_LANGDETECT] = 0;                                                                  \
        o.use[FC_MIN_WORDS] = o.use[FC_NO_WORD_RATIO] = doc == 0;                                  \
        o.field = tie;                                                                             \
        test_cond(#field " tie passes", check_with(&o, &d, doc) == FC_PASS);                       \
        o.field = strict;                                                                          \
        test_cond(#field " stricter fails", check_with(&o, &d, doc) == check);                     \
    } while (0)
    TIE(4, avg_len, 8, 9, FC_AVG_LEN); /* 40 words / 5 sentences */
    TIE(0, min_sents, 4, 5, FC_MIN_SENTS);
    TIE(0, max_sents, 4, 3, FC_MAX_SENTS);
    TIE(0, min_toks, 63, 64, FC_MIN_TOKS);
    TIE(0, max_toks, 63, 62, FC_MAX_TOKS);
    TIE(0, punct_ratio, 13.0 / 433, 0.03, FC_PUNCT_RATIO);
    TIE(0, upper_ratio, 10.0 / 433, 0.023, FC_UPPER_RATIO);
    TIE(7, digit_ratio, 41.0 / 324, 0.12, FC_DIGIT_RATIO);
    TIE(8, foreign_ratio, 6.0 / 198, 0.03, FC_FOREIGN_RATIO);
    TIE(0, min_words, 55, 56, FC_MIN_WORDS);
    filter_opts_default(&o);
    o.no_word_ratio = 0.4; /* 2 / 5 */
    test_cond("no_word_ratio tie passes", check_with(&o, &d, 4) == FC_PASS);
    o.no_word_ratio = 0.39;
    test_cond("no_word_ratio stricter fails", check_with(&o, &d, 4) == FC_NO_WORD_RATIO);

    /* the first failure wins; a switched-off check lets the next one speak */
    filter_opts_default(&o);
    o.min_sents = 5;
    test_cond("avg-len before min-sents", check_with(&o, &d, 1) == FC_AVG_LEN);
    o.use[FC_AVG_LEN] = 0;
    test_cond("avg-len off: min-sents", check_with(&o, &d, 1) == FC_MIN_SENTS);
    o.use[FC_MIN_SENTS] = 0;
    test_cond("then min-toks", check_with(&o, &d, 1) == FC_MIN_TOKS);
    filter_opts_default(&o);
    o.use[FC_FOREIGN_RATIO] = 0;
    test_cond("foreign off: min-words", check_with(&o, &d, 8) == FC_MIN_WORDS);
    for (int i = 1; i < FC_COUNT; i++)
        o.use[i] = 0;
    int all_pass = 1;
    for (int i = 0; i < d.n; i++)
        all_pass &= check_with(&o, &d, i) == FC_PASS;
    test_cond("all checks off: everything passes", all_pass);

    /* check 12 runs last, on the sentences joined by spaces */
    filter_opts_default(&o);
    f = make(&o);
    int verdict = 0;
    docfilter_set_lang(f, fake_lang, &verdict);
    lang_calls = 0;
    test_cond("language rejected",
              docfilter_check(f, &scratch, 0, d.doc[0], d.len[0], NULL) == FC_LANGDETECT);
    test_cond("joined text",
              strncmp(lang_text,
                      "Berlin a világ minden tájáról vonzza a művészeket és a kulturális "
                      "területen dolgozókat. A folyó kelet-nyugati",
                      strlen("Berlin a világ minden tájáról vonzza a művészeket és a kulturális "
                             "területen dolgozókat. A folyó kelet-nyugati")) == 0 &&
                  lang_text[strlen(lang_text) - 1] == '.');
    verdict = 1;
    test_cond("language accepted",
              docfilter_check(f, &scratch, 0, d.doc[0], d.len[0], NULL) == FC_PASS);
    test_cond("no identification for documents that failed earlier",
              docfilter_check(f, &scratch, 0, d.doc[1], d.len[1], NULL) == FC_AVG_LEN &&
                  lang_calls == 2);
    docfilter_destroy(f);
    docs_free(&d);
}

/* ---- reading ---- */

/* Feed `in` in chunks of `step` bytes (0: whole); documents as "s1|s2;". */
static void split(const char *in, size_t n, size_t step, int64_t limit, int lines, Buf *out,
                  uint64_t *bad) {
    Docs d = {0};
    DocSplit ds = {.limit = limit, .lines = lines, .sink = collect, .ctx = &d};
    if (!step) step = n ? n : 1;
    for (size_t i = 0; i < n; i += step)
        docsplit_feed(&ds, in + i, i + step <= n ? step : n - i);
    docsplit_finish(&ds);
    buf_clear(out);
    for (int i = 0; i < d.n; i++) {
        for (size_t k = 0; k < d.len[i]; k++)
            buf_putc(out, d.doc[i][k] == '\n' ? '|' : d.doc[i][k]);
        buf_putc(out, ';');
    }
    if (bad) *bad = ds.bad_utf8;
    docs_free(&d);
    docsplit_free(&ds);
}

static void test_reader(void) {
    Buf out = {0}, ref = {0};
    uint64_t bad;
#define SPLIT(in, want)                                                                            \
    do {                                                                                           \
        split(in, sizeof in - 1, 0, -1, 0, &out, NULL);                                            \
        test_str_eq(#in, out.data ? out.data : "", want);                                          \
    } while (0)
    SPLIT("a\r\nb\rc\n\rd\n", "a|b|c|;d|;");
    SPLIT("a\r\r\nb", "a|;b|;");
    SPLIT("x \t\ny\xe3\x80\x80\xc2\xa0\n\xe3\x80\x80\nz\x0c\x1c\n", "x|y|;z|;");
    SPLIT("  lead\n", "  lead|;");
    SPLIT("\n\n\na\n\n\nb\n\n", "a|;b|;");
    SPLIT("a\xe2\x80\xa8"
          "b\n",
          "a\xe2\x80\xa8"
          "b|;"); /* U+2028 is not a line end when reading files */
    SPLIT("a\0b\n", "a\0b|;");
    SPLIT("", "");
    SPLIT("no newline at the end", "no newline at the end|;");

    split("ab\xff"
          "cd\n\xc3\n",
          8, 0, -1, 0, &out, &bad);
    test_str_eq("invalid UTF-8 replaced", out.data,
                "ab\xef\xbf\xbd"
                "cd|\xef\xbf\xbd|;");
    test_cond("invalid UTF-8 counted", bad == 2);

    const char *lim = "a\n\nb\n\nc\n\nd\n";
    split(lim, strlen(lim), 0, 2, 0, &out, NULL);
    test_str_eq("limit 2", out.data, "a|;b|;");
    split(lim, strlen(lim), 1, 2, 0, &out, NULL);
    test_str_eq("limit 2, byte by byte", out.data, "a|;b|;");
    split(lim, strlen(lim), 0, 0, 0, &out, NULL);
    test_str_eq("limit 0: stops at the first blank line", out.data, "a|;");
    split("\na\n", 3, 0, 0, 0, &out, NULL);
    test_str_eq("limit 0, blank first line: nothing", out.data ? out.data : "", "");
    split("a\nb", 3, 0, 0, 0, &out, NULL);
    test_str_eq("limit 0 without blank lines: the whole input", out.data, "a|b|;");
    split("a\n \nb\n", 6, 0, -1, 1, &out, NULL);
    test_str_eq("lines mode", out.data, "a|;|;b|;");

    /* the same documents for any chunking */
    const char *tricky = "Els\xc5\x91 mondat.\r\nM\xc3\xa1sodik\r\r\n\xe2\x80\x83\r\n"
                         "T\xc3\xb6r\xc3\xa9s \xf0\x9d\x90\x80\r\n\rutols\xc3\xb3 \xff\xfe sor  \r";
    size_t tn = strlen(tricky);
    split(tricky, tn, 0, -1, 0, &ref, NULL);
    test_str_eq(
        "tricky whole", ref.data,
        "Els\xc5\x91 mondat.|M\xc3\xa1sodik|;T\xc3\xb6r\xc3\xa9s \xf0\x9d\x90\x80|;utols\xc3\xb3 "
        "\xef\xbf\xbd\xef\xbf\xbd sor|;");
    static const size_t steps[] = {1, 2, 3, 5, 7, 13, 31};
    int same = 1;
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        split(tricky, tn, steps[i], -1, 0, &out, NULL);
        same &= out.len == ref.len && memcmp(out.data, ref.data, ref.len) == 0;
    }
    test_cond("tricky: same documents for chunks of 1, 2, 3, 5, 7, 13, 31 bytes", same);

    FILE *fp = fopen(CHECKS_FILE, "rb");
    if (fp) {
        static char file[16384];
        size_t fn = fread(file, 1, sizeof file, fp);
        fclose(fp);
        split(file, fn, 0, -1, 0, &ref, NULL);
        same = 1;
        for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
            split(file, fn, steps[i], -1, 0, &out, NULL);
            same &= out.len == ref.len && memcmp(out.data, ref.data, ref.len) == 0;
        }
        test_cond("checks.txt: same documents for every chunk size", same && ref.len > 2800);
    }
    buf_free(&out);
    buf_free(&ref);
}

/* A line or a document longer than max_bytes stops the input with
 * too_long and its line, for any chunking; what came before is kept. */
static void test_too_long(void) {
    static const size_t steps[] = {0, 1, 3, 7, 64};
    char line[200];
    memset(line, 'x', sizeof line);
    Buf in = {0};
    buf_puts(&in, "ok\n\n");
    buf_append(&in, line, 100); /* at the limit */
    buf_puts(&in, "\n\n");
    buf_append(&in, line, 101); /* one byte over, line 5 */
    buf_puts(&in, "\nnot reached\n");
    Buf docs = {0};
    for (int k = 0; k < 10; k++)
        buf_puts(&docs, "ten bytes\n"); /* a document of 100 bytes from line 3 */
    Buf in2 = {0};
    buf_puts(&in2, "a\n\n");
    buf_append(&in2, docs.data, docs.len);
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        Docs d = {0};
        DocSplit ds = {.limit = -1, .max_bytes = 100, .sink = collect, .ctx = &d};
        size_t step = steps[i] ? steps[i] : in.len;
        int stopped = 0;
        for (size_t j = 0; j < in.len && !stopped; j += step)
            stopped = docsplit_feed(&ds, in.data + j, j + step <= in.len ? step : in.len - j);
        docsplit_finish(&ds);
        test_cond("a line over max_bytes stops the input", stopped && ds.too_long == 1);
        test_cond("... at its line", ds.too_long_line == 5);
        test_cond("... the documents before it delivered, the one at the limit too",
                  d.n == 2 && d.len[1] == 101);
        docs_free(&d);
        docsplit_free(&ds);

        DocSplit ds2 = {.limit = -1, .max_bytes = 98, .sink = collect, .ctx = &d};
        step = steps[i] ? steps[i] : in2.len;
        for (size_t j = 0; j < in2.len; j += step)
            docsplit_feed(&ds2, in2.data + j, j + step <= in2.len ? step : in2.len - j);
        docsplit_finish(&ds2);
        test_cond("a document over max_bytes: too_long 2, its first line",
                  ds2.too_long == 2 && ds2.too_long_line == 3);
        test_cond("... not delivered, the one before it is", d.n == 1 && d.len[0] == 2);
        docs_free(&d);
        docsplit_free(&ds2);
    }
    buf_free(&in);
    buf_free(&in2);
    buf_free(&docs);
}

/* ---- statistics ---- */

static void test_stats(void) {
    FilterCounts c = {0}, t = {0};
    c.docs = 3;
    c.output = 1;
    c.result[FC_PASS] = 1;
    c.result[FC_MIN_SENTS] = 2;
    Buf b = {0};
    filter_report(&b, "hu.txt", &c);
    test_str_eq("report", b.data,
                "hu.txt:\tfail-min-sents\t2 (66.7%)\nhu.txt:\tpass-all\t1 (33.3%)\n"
                "hu.txt: output 1/3 documents (33.3%)\n");
    buf_clear(&b);
    filter_report(&b, "empty", &t);
    test_str_eq("report without documents", b.data, "empty: output 0/0 documents (0.0%)\n");
    filter_counts_add(&t, &c);
    filter_counts_add(&t, &c);
    t.result[FC_AVG_LEN] = 2;
    t.docs += 2;
    buf_clear(&b);
    filter_report(&b, "TOTAL", &t);
    test_str_eq("keys sorted", b.data,
                "TOTAL:\tfail-avg-len\t2 (25.0%)\nTOTAL:\tfail-min-sents\t4 "
                "(50.0%)\nTOTAL:\tpass-all\t2 (25.0%)\n"
                "TOTAL: output 2/8 documents (25.0%)\n");
    c.docs = 8;
    c.result[FC_MIN_SENTS] = 7;
    buf_clear(&b);
    filter_report(&b, "r", &c);
    test_cond("one decimal, Python rounding (87.5)", strstr(b.data, "7 (87.5%)") != NULL);
    buf_free(&b);
    test_cond("check names", filter_check_find("foreign-ratio") == FC_FOREIGN_RATIO &&
                                 filter_check_find("nope") < 0 &&
                                 strcmp(filter_result_key(FC_LANGDETECT), "fail-langdetect") == 0);
}

/* ---- dedup table ---- */

static void test_dedup(void) {
    Dedup d;
    dedup_init(&d, 1); /* the minimum: 128 slots, 96 usable */
    test_cond("capacity", dedup_capacity(&d) == 96);
    int ok = 1;
    for (uint64_t i = 0; i < 96; i++)
        ok &= dedup_add(&d, i * 0x9E3779B97F4A7C15ull) == 1;
    test_cond("96 added (hash 0 included)", ok);
    test_cond("present", dedup_has(&d, 0) && dedup_has(&d, 95 * 0x9E3779B97F4A7C15ull));
    test_cond("re-adding reports present", dedup_add(&d, 5 * 0x9E3779B97F4A7C15ull) == 0);
    test_cond("full: refused", dedup_add(&d, 12345) == -1 && d.full);
    test_cond("refused hash not remembered", !dedup_has(&d, 12345));
    test_cond("old hashes still found when full", dedup_has(&d, 7 * 0x9E3779B97F4A7C15ull));
    dedup_free(&d);
    dedup_init(&d, 1u << 20);
    test_cond("1 MiB: 131072 slots", d.mask + 1 == 131072);
    dedup_free(&d);
}

int main(void) {
    test_word_re();
    test_counts();
    test_checks();
    test_reader();
    test_too_long();
    test_stats();
    test_dedup();
    filter_scratch_free(&scratch);
    return test_report();
}
