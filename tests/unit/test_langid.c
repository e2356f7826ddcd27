/* test_langid.c - language identification: the shipped model on real
 * sentences, "und" for texts without letters, load errors, training
 * determinism, threads sharing a model, and (when the shared data folder
 * is present) accuracy on the held-out Tatoeba Hungarian and English
 * sentences of at least 40 characters.
 *
 * The Wikipedia sentences below are quoted from the samples in tests/data
 * (huwiki-berlin, enwiki-3, enwiki-206, elwikivoyage-17, bgwiki-utf16).
 * huwiki-berlin is also part of the model's training text (the hu
 * minidump), so it is an in-sample check; the others are not.
 */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/hash.h"
#include "common/io.h"
#include "tokenize/langid.h"
#include "tokenize/langidfit.h"
#include "tokenize/langidmodel.h"
#include "tests/test.h"

typedef struct Case {
    const char *lang, *text;
} Case;

static const Case wiki_cases[] = {
    {"hu", "Berlin Németország fővárosa, egyben tartományi rangú városállama (szövetségi "
           "tartománya) és a "
           "Berlin/Brandenburg nagyvárosi régió centruma."},
    {"hu", "3,6 millió lakosával Németország legnépesebb és kiterjedésében is legnagyobb városa, "
           "egyben az "
           "Európai Unió legnépesebb és legnagyobb városa."},
    {"en",
     "In human–computer interaction, computer accessibility (also known as \"Accessible "
     "computing\") "
     "refers to the accessibility of a computer system to all people, regardless of disability or "
     "severity of impairment."},
    {"en", "Alabama () is a state located in the southeastern region of the United States."},
    {"en", "Analysis of variance (ANOVA) is a collection of statistical models used to analyze the "
           "differences among group means and their associated procedures."},
    {"el",
     "Το Κράι Χαμπάροφσκ (ρωσικά: Хаба́ровский край) είναι ομοσπονδιακό υποκείμενο της Ρωσίας, στο "
     "Διαμέρισμα της Άπω Ανατολής."},
    {"el",
     "H Γιακουτία ή Δημοκρατία των Σαχά (ρωσικά: Яку́тия - Респу́блика Саха́) είναι ομοσπονδιακό "
     "υποκείμενο της Ρωσίας"},
    {"bg", "Григорианският календар (понякога наричан и Грегориански календар, „нов стил“) е "
           "съвременният "
           "международно признат светски календар"},
};

/* Sentences written for this test. */
static const Case own_cases[] = {
    {"hu", "A kutya a kertben alszik, mert nagyon meleg van ma délután."},
    {"hu", "Holnap reggel vonattal megyünk Debrecenbe a nagymamához."},
    {"en", "The weather was cold, so we stayed at home and read books all afternoon."},
    {"de", "Der Zug nach München fährt heute wegen Bauarbeiten eine Stunde später ab."},
    {"fr", "Nous avons mangé une soupe délicieuse dans un petit restaurant près de la gare."},
    {"fi", "Huomenna aamulla lähdemme junalla Helsinkiin tapaamaan isoäitiä."},
    {"pl", "Jutro rano pojedziemy pociągiem do Krakowa, żeby odwiedzić babcię."},
    {"ru", "Завтра утром мы поедем на поезде в Москву, чтобы навестить бабушку."},
    {"ja", "明日の朝、私たちは電車で東京の祖母に会いに行きます。"},
};

static char model_path[4096];

static void check_cases(const LangId *m, const Case *cs, size_t n, const char *what) {
    for (size_t i = 0; i < n; i++) {
        LangScore s;
        int rc = langid_identify(m, cs[i].text, strlen(cs[i].text), &s);
        char d[160];
        snprintf(d, sizeof d, "%s %zu (%s): got %s %.3f", what, i, cs[i].lang, rc ? "-1" : s.lang,
                 s.conf);
        test_cond(d, rc == 0 && strcmp(s.lang, cs[i].lang) == 0);
        test_cond("conf of a clear sentence above 0.5 and at most 1",
                  s.conf > 0.5 && s.conf <= 1.0);
    }
}

static void test_shipped(const LangId *m) {
    test_cond("model has at least 50 languages", langid_nlangs(m) >= 50);
    test_cond("model has hu", langid_find(m, "hu") >= 0);
    test_cond("model has en", langid_find(m, "en") >= 0);
    test_cond("langid_find of an unknown code", langid_find(m, "xx") == -1);
    int hu = langid_find(m, "hu");
    test_cond("langid_lang inverts langid_find", hu >= 0 && strcmp(langid_lang(m, hu), "hu") == 0);
    test_cond("langid_lang out of range",
              langid_lang(m, langid_nlangs(m)) == NULL && langid_lang(m, -1) == NULL);
    check_cases(m, wiki_cases, sizeof wiki_cases / sizeof *wiki_cases, "wikipedia sentence");
    check_cases(m, own_cases, sizeof own_cases / sizeof *own_cases, "own sentence");

    static const char *und[] = {"",          "   ",         "12345 678", "3.14 + 2,71 = 5.85 (!!)",
                                "-- ... --", "\xff\xfe\x80"};
    for (size_t i = 0; i < sizeof und / sizeof *und; i++) {
        LangScore s = {"xx", 0.5};
        int rc = langid_identify(m, und[i], strlen(und[i]), &s);
        char d[96];
        snprintf(d, sizeof d, "no letters -> -1 und 0 (case %zu)", i);
        test_cond(d, rc == -1 && strcmp(s.lang, "und") == 0 && s.conf == 0);
    }
    /* a text with a NUL inside is read by length */
    static const char nul[] = "Ez egy magyar mondat\0, amely folytatódik is.";
    LangScore s;
    test_cond("NUL inside the text",
              langid_identify(m, nul, sizeof nul - 1, &s) == 0 && !strcmp(s.lang, "hu"));

    /* confidence: always in [0, 1]; lower for a short ambiguous word than
     * for a long clear sentence */
    static const char *mix[] = {"a",
                                "Tom",
                                "ok",
                                "Hi!",
                                "pizza",
                                "internet",
                                "Nokia Helsinki",
                                "The cat sat on the mat.",
                                "A macska a szőnyegen ült."};
    int in_range = 1;
    for (size_t i = 0; i < sizeof mix / sizeof *mix; i++) {
        if (langid_identify(m, mix[i], strlen(mix[i]), &s) == 0)
            in_range &= s.conf >= 0 && s.conf <= 1;
    }
    test_cond("conf in [0, 1] for short texts", in_range);
    LangScore a, b;
    langid_identify(m, "pizza", 5, &a);
    langid_identify(m, own_cases[0].text, strlen(own_cases[0].text), &b);
    test_cond("one word is less sure than a sentence", a.conf < b.conf);
    test_cond("a sentence is sure", b.conf > 0.99);
}

/* ---- threads share one model ---- */

typedef struct ThreadArg {
    const LangId *m;
    int ok;
} ThreadArg;

static void *thread_main(void *p) {
    ThreadArg *a = p;
    a->ok = 1;
    for (int rep = 0; rep < 200; rep++)
        for (size_t i = 0; i < sizeof own_cases / sizeof *own_cases; i++) {
            LangScore s;
            langid_identify(a->m, own_cases[i].text, strlen(own_cases[i].text), &s);
            a->ok &= strcmp(s.lang, own_cases[i].lang) == 0;
        }
    return NULL;
}

static void test_threads(const LangId *m) {
    pthread_t th[4];
    ThreadArg args[4];
    for (int i = 0; i < 4; i++) {
        args[i].m = m;
        pthread_create(&th[i], NULL, thread_main, &args[i]);
    }
    int ok = 1;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        ok &= args[i].ok;
    }
    test_cond("4 threads sharing one model agree with the expected languages", ok);
}

/* ---- load errors ---- */

static void write_file(const char *path, const char *s) {
    FILE *fp = fopen(path, "wb");
    fputs(s, fp);
    fclose(fp);
}

static void test_errors(void) {
    Err err;
    char dir[] = "/tmp/test_langid.XXXXXX", path[256];
    if (!mkdtemp(dir)) {
        test_cond("mkdtemp", 0);
        return;
    }
    snprintf(path, sizeof path, "%s/none.txt", dir);
    test_cond("missing file -> NULL", langid_load(path, &err) == NULL);
    test_cond("missing file: message names the path", strstr(err.msg, path) != NULL);
    test_cond("missing file: says why", strstr(err.msg, "No such file") != NULL);

    static const struct {
        const char *text, *where, *why;
    } bad[] = {
        {"", ":1:", "empty file"},
        {"hello\t1\n", ":1:", "not a langid model"},
        {"wikibert-langid\t9\n", ":1:", "unsupported version"},
        {"wikibert-langid\t1\norder\t7\n", ":2:", "order must be"},
        {"wikibert-langid\t1\norder\t2\nmu\t1\n", ":3:", "'mu' needs 2 values"},
        {"wikibert-langid\t1\norder\t1\nmu\t1\ntemp\tx\n", ":4:", "bad temp"},
        {"wikibert-langid\t1\norder\t1\nmu\t1\ntemp\t1\nlangs\t1\nlang\ten\t0\n",
         ":6:", "bad gram total"},
        {"wikibert-langid\t1\norder\t1\nmu\t1\ntemp\t1\nlangs\t1\nlang\ten\t5\ngrams\t1\na\t1:3\n",
         ":8:", "bad posting"},
        {"wikibert-langid\t1\norder\t1\nmu\t1\ntemp\t1\nlangs\t1\nlang\ten\t5\ngrams\t2\na\t0:3\n",
         ":9:", "fewer grams"},
        {"wikibert-langid\t1\norder\t1\nmu\t1\ntemp\t1\nlangs\t1\nlang\ten\t5\ngrams\t1\nab\t0:3\n",
         ":8:", "gram longer"},
        {"wikibert-langid\t1\norder\t1\nmu\t1\ntemp\t1\nlangs\t2\nlang\ten\t5\nlang\ten\t5\n",
         ":7:", "duplicate language"},
        {"wikibert-langid\t1\norder\t1\nmu\t1\ntemp\t1\nlangs\t1\nlang\ten\t5\ngrams\t2\na\t0:"
         "3\na\t0:1\n",
         ":9:", "duplicate gram"},
        {"wikibert-langid\t1\norder\t1\nmu\t1\ntemp\t1\nlangs\t1\nlang\ten\t5\ngrams\t1\na\t0:"
         "3\nb\t0:1\n",
         ":9:", "more grams"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(path, sizeof path, "%s/bad%zu.txt", dir, i);
        write_file(path, bad[i].text);
        LangId *m = langid_load(path, &err);
        char want[300], d[1400];
        snprintf(want, sizeof want, "%s%s", path, bad[i].where);
        snprintf(d, sizeof d, "malformed model %zu: want '%s' and '%s', got '%s'", i, want,
                 bad[i].why, err.msg);
        test_cond(d, m == NULL && strstr(err.msg, want) == err.msg && strstr(err.msg, bad[i].why));
        langid_free(m);
        unlink(path);
    }
    /* the smallest valid model */
    snprintf(path, sizeof path, "%s/tiny.txt", dir);
    write_file(path, "# a "
                     "comment\nwikibert-"
                     "langid\t1\norder\t1\nmu\t1\ntemp\t1\nlangs\t2\nlang\taa\t5\nlang\tbb\t5\n"
                     "grams\t2\na\t0:4\nb\t1:4\n");
    LangId *m = langid_load(path, &err);
    test_cond("tiny model loads", m != NULL);
    if (m) {
        LangScore s;
        test_cond("tiny model: aaa -> aa",
                  langid_identify(m, "aaa", 3, &s) == 0 && !strcmp(s.lang, "aa"));
        test_cond("tiny model: bbb -> bb",
                  langid_identify(m, "bbb", 3, &s) == 0 && !strcmp(s.lang, "bb"));
        test_cond("tiny model: unknown letters -> und", langid_identify(m, "xyz", 3, &s) == -1);
        langid_free(m);
    }
    unlink(path);
    rmdir(dir);
}

/* ---- sums ---- */

/* Scores are sums of float weights, and the scorer may add them in another
 * order than the text's only where no addition can round (see "Sums" in
 * langid.c). The oracle here adds them one gram at a time in text order,
 * from weights it derives from the model's counts itself; the scores must
 * be the same bits. Model "fast" keeps every sum exact (it takes the
 * counting path); model "slow" has tiny order-2 weights next to large
 * order-1 ones, so its sums leave the exact range and the text is scored
 * again in order. Four languages and grams seen in all of them make the
 * scorer's dense rows. */
#define SUM_LANGS 4
typedef struct SumGram {
    const char *g;
    unsigned c[SUM_LANGS];
} SumGram;
static const SumGram sum_grams[] = {
    {"a", {5, 3, 9, 1}},  {"b", {2, 7, 4, 6}},  {"c", {1, 1, 8, 3}},
    {"_a", {4, 2, 6, 1}}, {"ab", {3, 5, 2, 7}}, {"ba", {6, 1, 3, 2}},
    {"ca", {2, 0, 5, 0}}, {"b_", {1, 4, 1, 4}}, {"bc", {0, 3, 0, 0}},
};
static const unsigned sum_tot[SUM_LANGS][2] = {{40, 37}, {55, 51}, {61, 60}, {29, 27}};

static void sum_model(Buf *b, double mu2) {
    char t[200];
    buf_clear(b);
    snprintf(t, sizeof t, "wikibert-langid\t1\norder\t2\nmu\t3\t%g\ntemp\t2\nlangs\t%d\n", mu2,
             SUM_LANGS);
    buf_puts(b, t);
    for (int l = 0; l < SUM_LANGS; l++) {
        snprintf(t, sizeof t, "lang\t%c%c\t%u\t%u\n", 'a' + l, 'a' + l, sum_tot[l][0],
                 sum_tot[l][1]);
        buf_puts(b, t);
    }
    snprintf(t, sizeof t, "grams\t%zu\n", sizeof sum_grams / sizeof *sum_grams);
    buf_puts(b, t);
    for (size_t i = 0; i < sizeof sum_grams / sizeof *sum_grams; i++) {
        buf_puts(b, sum_grams[i].g);
        const char *sep = "\t";
        for (int l = 0; l < SUM_LANGS; l++)
            if (sum_grams[i].c[l]) {
                snprintf(t, sizeof t, "%s%d:%u", sep, l, sum_grams[i].c[l]);
                buf_puts(b, t);
                sep = " ";
            }
        buf_puts(b, "\n");
    }
}

/* The scores of text in text order (langidmodel.h's definition). */
static void sum_oracle(const char *text, size_t n, double mu2, double *score) {
    const double mu[2] = {3, mu2};
    size_t nord[2] = {0, 0};
    uint32_t last[2] = {0, 0};
    int fill = 0;
    LangIdCursor c;
    uint32_t cp;
    for (int l = 0; l < SUM_LANGS; l++)
        score[l] = 0;
    langid_cursor_init(&c, text, n);
    while ((cp = langid_next_cp(&c))) {
        last[0] = last[1], last[1] = cp;
        if (fill < 2) fill++;
        for (int k = 1; k <= fill; k++) {
            if (k == 1 && cp == ' ') continue;
            for (size_t i = 0; i < sizeof sum_grams / sizeof *sum_grams; i++) {
                const char *g = sum_grams[i].g;
                if (strlen(g) != (size_t)k) continue;
                int match = 1;
                for (int j = 0; j < k; j++)
                    match &= (uint32_t)(g[j] == '_' ? ' ' : g[j]) == last[2 - k + j];
                if (!match) continue;
                double bg = 0;
                for (int l = 0; l < SUM_LANGS; l++)
                    bg += sum_grams[i].c[l] / (double)sum_tot[l][k - 1];
                bg /= SUM_LANGS;
                for (int l = 0; l < SUM_LANGS; l++)
                    if (sum_grams[i].c[l])
                        score[l] += (float)log1p(sum_grams[i].c[l] / (mu[k - 1] * bg));
                nord[k - 1]++;
            }
        }
    }
    for (int o = 0; o < 2; o++)
        for (int l = 0; l < SUM_LANGS; l++)
            score[l] -= (double)nord[o] * log((double)sum_tot[l][o] + mu[o]);
}

static void test_sums(void) {
    const double mus[2] = {5, 1e12};
    const char *name[2] = {"fast", "slow"};
    Buf model = {0}, text = {0};
    for (int r = 0; r < 300; r++)
        buf_puts(&text, r % 3 ? "abab cab ba, bc! " : "cabbage a b c ");
    const size_t lens[] = {0, 1, 4, 17, 100, text.len};
    for (int v = 0; v < 2; v++) {
        Err err;
        sum_model(&model, mus[v]);
        LangId *m = langid_load_mem(model.data, model.len, name[v], &err);
        test_cond("sums: model loads", m != NULL);
        if (!m) continue;
        for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
            double got[LANGID_MAX_LANGS], want[SUM_LANGS];
            langid_scores(m, text.data, lens[i], got, NULL);
            sum_oracle(text.data, lens[i], mus[v], want);
            char d[120];
            snprintf(d, sizeof d, "sums: %s model, %zu bytes: the text-order scores, bit for bit",
                     name[v], lens[i]);
            test_cond(d, memcmp(got, want, sizeof want) == 0);
        }
        langid_free(m);
    }
    buf_free(&model);
    buf_free(&text);
}

/* ---- training ---- */

static const Case train_set[] = {
    {"hu", "A macska a kertben alszik. Holnap reggel vonattal megyünk a nagymamához."},
    {"hu", "Ez a könyv nagyon érdekes, mert sok szép történet van benne."},
    {"hu", "Magyarország fővárosa Budapest, amely a Duna két partján fekszik."},
    {"en", "The cat is sleeping in the garden. Tomorrow morning we are taking the train."},
    {"en", "This book is very interesting, because there are many nice stories in it."},
    {"en", "The capital of England is London, which lies on both banks of the Thames."},
    {"fi", "Kissa nukkuu puutarhassa. Huomenna aamulla menemme junalla isoäidin luo."},
    {"fi", "Tämä kirja on hyvin mielenkiintoinen, koska siinä on monta kaunista tarinaa."},
};

static void train_into(Buf *out, int reverse, int top) {
    LangIdTrainOpts o;
    langid_train_defaults(&o);
    o.min_count = 1;
    o.top = top;
    LangIdTrainer *t = langid_trainer_create(&o);
    Err err;
    size_t n = sizeof train_set / sizeof *train_set;
    for (size_t k = 0; k < n; k++) {
        const Case *c = &train_set[reverse ? n - 1 - k : k];
        langid_trainer_add(t, c->lang, strlen(c->lang), c->text, strlen(c->text), 0, &err);
    }
    langid_trainer_add(t, "hu", 2, "Szép napunk van ma.", strlen("Szép napunk van ma."), 1, &err);
    langid_trainer_add(t, "en", 2, "We have a nice day today.", strlen("We have a nice day today."),
                       1, &err);
    test_cond("training succeeds", langid_trainer_write(t, out, &err) == 0);
    langid_trainer_free(t);
}

static void test_training(void) {
    Buf a = {0}, b = {0}, c = {0};
    train_into(&a, 0, 3000);
    train_into(&b, 1, 3000);
    train_into(&c, 0, 5);
    test_cond("same texts in another order -> byte-identical model",
              a.len == b.len && a.len > 0 && memcmp(a.data, b.data, a.len) == 0);
    test_cond("another --top -> another model",
              !(a.len == c.len && memcmp(a.data, c.data, a.len) == 0));
    Err err;
    LangId *m = langid_load_mem(a.data, a.len, "trained", &err);
    test_cond("trained model loads", m != NULL);
    if (m) {
        test_cond("languages sorted by code",
                  langid_nlangs(m) == 3 && !strcmp(langid_lang(m, 0), "en") &&
                      !strcmp(langid_lang(m, 1), "fi") && !strcmp(langid_lang(m, 2), "hu"));
        test_cond("temperature fitted (not the default 1)", langid_temperature(m) != 1.0);
        LangScore s;
        test_cond("trained: hu", langid_identify(m, "A kertben van a macska.", 23, &s) == 0 &&
                                     !strcmp(s.lang, "hu"));
        test_cond("trained: en", langid_identify(m, "The cat is in the garden.", 25, &s) == 0 &&
                                     !strcmp(s.lang, "en"));
        test_cond("trained: fi", langid_identify(m, "Kissa on puutarhassa.", 21, &s) == 0 &&
                                     !strcmp(s.lang, "fi"));
        langid_free(m);
    }
    LangIdTrainOpts o;
    langid_train_defaults(&o);
    LangIdTrainer *t = langid_trainer_create(&o);
    test_cond("no training text -> error",
              langid_trainer_write(t, &a, &err) == -1 && strstr(err.msg, "no training"));
    test_cond("bad language code -> error", langid_trainer_add(t, "h u", 3, "x", 1, 0, &err) == -1);
    langid_trainer_free(t);
    buf_free(&a), buf_free(&b), buf_free(&c);

    /* the split: decided by letters only, about 10 % test */
    test_cond("split ignores case and punctuation",
              langid_split_part("Hello, World!", 13) == langid_split_part("hello world", 11));
    int ntest = 0;
    char s[32];
    for (int i = 0; i < 2000; i++) {
        int n = snprintf(s, sizeof s, "sentence %c%c%c", 'a' + i % 26, 'a' + i / 26 % 26,
                         'a' + i / 676);
        ntest += langid_split_part(s, (size_t)n) == 2;
    }
    test_cond("split: 5-15 % test", ntest > 100 && ntest < 300);
}

/* ---- held-out Tatoeba accuracy (needs the shared data) ---- */

typedef struct Acc {
    long n, right;
} Acc;

static size_t nchars(const char *s, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += ((unsigned char)s[i] & 0xC0) != 0x80;
    return k;
}

static void score_one(const LangId *m, StrMap *seen, const char *lang, const char *t, size_t n,
                      Acc *acc) {
    if (nchars(t, n) < 40 || langid_split_part(t, n) != 2) return;
    uint64_t *v = strmap_slot(seen, t, n);
    if ((*v)++) return;
    LangScore s;
    acc->n++;
    acc->right += langid_identify(m, t, n, &s) == 0 && !strcmp(s.lang, lang);
}

static int test_tatoeba(const LangId *m) {
    /* ${WIKIBERT_SHARED:-$TESTS/../../shared}, TESTS as tests/run.sh sets it */
    const char *env = getenv("WIKIBERT_SHARED"), *tests = getenv("TESTS");
    char dir[4096];
    if (env && *env)
        snprintf(dir, sizeof dir, "%s/data/langid/tatoeba-manythings", env);
    else if (tests && *tests)
        snprintf(dir, sizeof dir, "%s/../../shared/data/langid/tatoeba-manythings", tests);
    else
        snprintf(dir, sizeof dir, "%s/../../shared/data/langid/tatoeba-manythings", WB_DATADIR);
    DIR *d = opendir(dir);
    if (!d) {
        printf("skipped: Tatoeba accuracy (no %s)\n", dir);
        return 0;
    }
    Acc hu = {0}, en = {0};
    StrMap seen_hu, seen_en;
    strmap_init(&seen_hu, 0), strmap_init(&seen_en, 0);
    struct dirent *e;
    char **names = NULL;
    int nn = 0;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".txt")) {
            names = realloc(names, (size_t)(nn + 1) * sizeof *names);
            names[nn++] = strdup(e->d_name);
        }
    closedir(d);
    for (int i = 0; i < nn; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        char *in[] = {path};
        Reader r;
        reader_init(&r, in, 1);
        const char *line;
        size_t len;
        Err err;
        int is_hun = !strcmp(names[i], "hun.txt");
        while (reader_next_line(&r, &line, &len, &err) == 1) {
            const char *tab = memchr(line, '\t', len);
            if (!tab) continue;
            const char *t2 = tab + 1, *end = memchr(t2, '\t', len - (size_t)(t2 - line));
            size_t l2 = end ? (size_t)(end - t2) : len - (size_t)(t2 - line);
            if (l2 && t2[l2 - 1] == '\r') l2--;
            score_one(m, &seen_en, "en", line, (size_t)(tab - line), &en);
            if (is_hun) score_one(m, &seen_hu, "hu", t2, l2, &hu);
        }
        reader_free(&r);
        free(names[i]);
    }
    free(names);
    strmap_free(&seen_hu), strmap_free(&seen_en);
    printf("held-out Tatoeba >= 40 chars: hu %ld/%ld (%.2f%%), en %ld/%ld (%.2f%%)\n", hu.right,
           hu.n, hu.n ? 100.0 * hu.right / hu.n : 0.0, en.right, en.n,
           en.n ? 100.0 * en.right / en.n : 0.0);
    test_cond("Tatoeba hu: at least 500 held-out sentences", hu.n >= 500);
    test_cond("Tatoeba en: at least 2000 held-out sentences", en.n >= 2000);
    test_cond("Tatoeba hu accuracy >= 99 %", hu.n && hu.right >= 0.99 * hu.n);
    test_cond("Tatoeba en accuracy >= 99 %", en.n && en.right >= 0.99 * en.n);
    return 1;
}

int main(void) {
    Err err;
    cli_data_path(LANGID_DEFAULT_FILE, model_path, sizeof model_path);
    LangId *m = langid_load(model_path, &err);
    test_cond("shipped model loads", m != NULL);
    if (!m) {
        printf("  %s\n", err.msg);
        return test_report();
    }
    test_shipped(m);
    test_threads(m);
    test_errors();
    test_sums();
    test_training();
    test_tatoeba(m);
    langid_free(m);
    return test_report();
}
