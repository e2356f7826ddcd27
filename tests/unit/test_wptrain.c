/* test_wptrain.c - WordPiece vocabulary training (wptrain.h).
 *
 * Without arguments: the unit tests (merges worked out by hand on tiny word
 * lists, tie-breaking, min_frequency, limit_alphabet, the special-token
 * layout, exact vocabulary size, errors, counting through the normalizer,
 * the same output for 1 and 4 threads, tokenizer.json's layout).
 *
 * With arguments it is the test driver the CLI tests and the benchmark use
 * until a program wraps wptrain_run():
 *
 *   test_wptrain train [--vocab-size N] [--unused N] [--cased]
 *       [--min-frequency N] [--limit-alphabet N] [--initial VOCAB]
 *       [-j N] [-f] [-q] [-v] -o PREFIX [INPUT...]
 *                                     writes PREFIX.txt and PREFIX.json;
 *                                     --initial: WpTrainOpts.initial from
 *                                     the lines of VOCAB
 *   test_wptrain counts [--cased] [-j N] [INPUT...]   word<TAB>count listing
 *   test_wptrain merges [options of train] [INPUT...]  token<TAB>merge count
 */
#include <getopt.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/test.h"
#include "common/cli.h"
#include "common/io.h"
#include "common/rng.h"
#include "vocab/wptrain.h"

/* ---- driver ---- */

static int driver(int argc, char **argv) {
    static const struct option longopts[] = {{"vocab-size", required_argument, 0, 'S'},
                                             {"unused", required_argument, 0, 'U'},
                                             {"cased", no_argument, 0, 'C'},
                                             {"min-frequency", required_argument, 0, 'M'},
                                             {"limit-alphabet", required_argument, 0, 'L'},
                                             {"threads", required_argument, 0, 'j'},
                                             {"initial", required_argument, 0, 'I'},
                                             CLI_LONGOPTS_COMMON};
    VocabList initial = {0};
    WpTrainOpts o = WPTRAIN_DEFAULTS;
    CliCommon cc;
    const char *mode = argv[1];
    uint64_t x;
    int opt;
    Err err;
    cli_init("test_wptrain");
    cli_common_init(&cc);
    optind = 2;
    while ((opt = getopt_long(argc, argv, ":j:o:fqvV", longopts, NULL)) != -1) {
        switch (opt) {
        case 'S':
            if (cli_parse_u64(optarg, &x) || !x) cli_bad_usage("bad --vocab-size '%s'", optarg);
            o.vocab_size = (size_t)x;
            break;
        case 'U':
            o.unused = (int)cli_parse_int(optarg, "--unused", 0, WPTRAIN_MAX_UNUSED);
            break;
        case 'C':
            o.cased = 1;
            break;
        case 'I': {
            Buf f = {0};
            if (read_file(optarg, &f, &err)) die_code(EXIT_USAGE, "%s", err.msg);
            for (size_t a = 0, b; a < f.len; a = b + 1) {
                for (b = a; b < f.len && f.data[b] != '\n'; b++) {
                }
                vocablist_push(&initial, f.data + a, b - a, 0);
            }
            buf_free(&f);
            o.initial = &initial;
            break;
        }
        case 'M':
            if (cli_parse_u64(optarg, &o.min_frequency))
                cli_bad_usage("bad --min-frequency '%s'", optarg);
            break;
        case 'L':
            if (cli_parse_u64(optarg, &x)) cli_bad_usage("bad --limit-alphabet '%s'", optarg);
            o.limit_alphabet = (size_t)x;
            break;
        default:
            cli_common_opt(&cc, opt, optarg, argv, "");
        }
    }
    o.threads = cc.nthreads;
    o.force = cc.force;
    const char *const *inputs = (const char *const *)argv + optind;
    int ninputs = argc - optind;
    if (strcmp(mode, "counts") == 0) {
        WpCounts *c = wpcounts_create();
        WpCountStats st = {0};
        Buf out = {0};
        if (wpcounts_read(c, inputs, ninputs, wp_norm(!o.cased, -1), o.threads, &st, &err))
            die("%s", err.msg);
        wpcounts_dump(c, &out);
        fwrite(out.data, 1, out.len, stdout);
        buf_free(&out);
        wpcounts_destroy(c);
        return 0;
    }
    if (strcmp(mode, "merges") == 0) {
        WpCounts *c = wpcounts_create();
        WpCountStats st = {0};
        WpVocab v = {0};
        if (wpcounts_read(c, inputs, ninputs, wp_norm(!o.cased, -1), o.threads, &st, &err) ||
            wptrain_train(c, &o, &v, &err))
            die("%s", err.msg);
        for (size_t i = 0; i < v.tok.n; i++)
            printf("%s\t%llu\n", vocablist_at(&v.tok, i), (unsigned long long)v.count[i]);
        info(3, "%zu merge steps made %zu tokens", v.merges, v.nmerged);
        wpvocab_free(&v);
        wpcounts_destroy(c);
        return 0;
    }
    if (strcmp(mode, "train") != 0) cli_bad_usage("unknown mode '%s'", mode);
    if (!cc.output) cli_bad_usage("train needs -o PREFIX");
    size_t n = strlen(cc.output) + 8;
    char *txt = xmalloc(n), *json = xmalloc(n);
    snprintf(txt, n, "%s.txt", cc.output);
    snprintf(json, n, "%s.json", cc.output);
    int rc = wptrain_run(&o, inputs, ninputs, txt, json, &err);
    if (rc) warn("%s", err.msg);
    free(txt), free(json);
    vocablist_free(&initial);
    return rc ? EXIT_DATA : EXIT_OK;
}

/* ---- unit tests ---- */

static WpTrainOpts opts(size_t vocab_size, int unused, uint64_t min_frequency, size_t limit) {
    WpTrainOpts o = WPTRAIN_DEFAULTS;
    o.vocab_size = vocab_size, o.unused = unused, o.min_frequency = min_frequency,
    o.limit_alphabet = limit;
    return o;
}

typedef struct WordCount {
    const char *w;
    uint64_t n;
} WordCount;

/* Train on a word list; the tokens after the special ones, space-separated,
 * into a static buffer ("ERROR: message" on failure). */
static const char *train_words(const WordCount *wc, const WpTrainOpts *o, WpVocab *v) {
    static Buf out;
    Err err;
    WpCounts *c = wpcounts_create();
    for (size_t i = 0; wc[i].w; i++)
        wpcounts_add(c, wc[i].w, strlen(wc[i].w), wc[i].n);
    buf_clear(&out);
    memset(v, 0, sizeof *v);
    if (wptrain_train(c, o, v, &err)) {
        buf_puts(&out, "ERROR: ");
        buf_puts(&out, err.msg);
    } else {
        for (size_t i = v->nspecial; i < v->tok.n; i++) {
            if (i > v->nspecial) buf_putc(&out, ' ');
            buf_puts(&out, vocablist_at(&v->tok, i));
        }
    }
    wpcounts_destroy(c);
    return out.data ? out.data : "";
}

/* test_str_eq evaluates its arguments more than once: train once. */
#define TRAIN_EQ(descr, wc, o, v, want)                                                            \
    do {                                                                                           \
        const char *got_ = train_words(wc, o, v);                                                  \
        test_str_eq(descr, got_, want);                                                            \
    } while (0)

/* Worked by hand (ids: 5 specials, a b c, ##b ##c):
 *   ab a ##b x5, abc a ##b ##c x3, bc b ##c x2
 *   (a,##b) 8 -> ab; makes (ab,##c) 3, leaves (##b,##c) 0
 *   tie at 3: the stale (##b,##c) pops first (smaller pair) and goes back
 *   with 0; (ab,##c) 3 -> abc; (b,##c) 2 -> bc; then only count 0 is left. */
static void test_hand_merges(void) {
    static const WordCount wc[] = {{"ab", 5}, {"abc", 3}, {"bc", 2}, {0, 0}};
    WpVocab v;
    WpTrainOpts o = opts(100, 0, 1, 0);
    TRAIN_EQ("all merges", wc, &o, &v, "a b c ##b ##c ab abc bc");
    test_cond("counts of the merges",
              v.count[10] == 8 && v.count[11] == 3 && v.count[12] == 2 && v.count[9] == 0);
    test_cond("parts",
              v.nspecial == 5 && v.nalpha == 3 && v.ncont == 2 && v.nmerged == 3 && v.merges == 3);
    test_cond("stopped: no pair left", v.stop == WPT_STOP_NO_PAIRS);
    wpvocab_free(&v);
    o = opts(100, 0, 3, 0);
    TRAIN_EQ("min_frequency 3", wc, &o, &v, "a b c ##b ##c ab abc");
    test_cond("stopped: frequency", v.stop == WPT_STOP_FREQUENCY);
    wpvocab_free(&v);
    o = opts(100, 0, 9, 0);
    TRAIN_EQ("min_frequency 9: no merge", wc, &o, &v, "a b c ##b ##c");
    wpvocab_free(&v);
    o = opts(11, 0, 1, 0);
    TRAIN_EQ("vocab_size 11", wc, &o, &v, "a b c ##b ##c ab");
    test_cond("vocab_size 11: exact", v.tok.n == 11 && v.stop == WPT_STOP_SIZE);
    wpvocab_free(&v);
    o = opts(10, 0, 1, 0);
    TRAIN_EQ("vocab_size 10: specials and characters only", wc, &o, &v, "a b c ##b ##c");
    wpvocab_free(&v);
    o = opts(9, 0, 1, 0);
    TRAIN_EQ("vocab_size 9 is too small", wc, &o, &v,
             "ERROR: vocabulary size 9 is too small: the 5 special tokens and 3 characters "
             "(2 of them also as ##c) need 10");
    static const WordCount none[] = {{0, 0}};
    o = opts(100, 0, 1, 0);
    TRAIN_EQ("no words", none, &o, &v, "ERROR: no words in the input");
}

/* Hugging Face's own BPE trainer test corpus (bpe/trainer.rs test_train),
 * here with the "##" prefix, min_frequency 2, worked by hand: the pairs seen
 * twice are (a,##r) (##r,##e) (i,##s); ids a=13 i=18 ##e=34 ##r=40 ##s=41.
 * (13,40) -> ar, which leaves (##r,##e) 0 and makes (ar,##e) 2; then
 * (18,41) -> is; the stale (##r,##e) goes back with 0; (ar,##e) -> are;
 * the best pair left is seen once: stop. */
static void test_hf_corpus(void) {
    static const WordCount wc[] = {{"roses", 1}, {"are", 2},  {"red", 1},   {"voilets", 1},
                                   {"blue", 1},  {"BERT", 1}, {"is", 2},    {"big", 1},
                                   {"and", 1},   {"so", 1},   {"GPT-2", 1}, {0, 0}};
    WpVocab v;
    WpTrainOpts o = opts(1000, 0, 2, 0);
    TRAIN_EQ("HF trainer corpus with ##", wc, &o, &v,
             "- 2 B E G P R T a b d e g i l n o r s t u v "
             "##- ##2 ##E ##P ##R ##T ##d ##e ##g ##i ##l ##n ##o ##r ##s ##t ##u ar is are");
    test_cond("HF trainer corpus: 47 tokens, stopped by frequency",
              v.tok.n == 47 && v.stop == WPT_STOP_FREQUENCY);
    wpvocab_free(&v);
}

/* Ties go to the smaller (first id, second id); a higher count wins first. */
static void test_ties(void) {
    WpVocab v;
    WpTrainOpts o = opts(100, 0, 1, 0);
    static const WordCount t1[] = {{"xy", 2}, {"ab", 2}, {0, 0}};
    TRAIN_EQ("tie: smaller first id", t1, &o, &v, "a b x y ##b ##y ab xy");
    wpvocab_free(&v);
    static const WordCount t2[] = {{"ba", 2}, {"ab", 2}, {0, 0}};
    TRAIN_EQ("tie: a before b", t2, &o, &v, "a b ##a ##b ab ba");
    wpvocab_free(&v);
    static const WordCount t3[] = {{"ac", 2}, {"ab", 2}, {0, 0}};
    TRAIN_EQ("tie: smaller second id", t3, &o, &v, "a b c ##b ##c ab ac");
    wpvocab_free(&v);
    static const WordCount t4[] = {{"xy", 3}, {"ab", 2}, {0, 0}};
    TRAIN_EQ("count before ids", t4, &o, &v, "a b x y ##b ##y xy ab");
    wpvocab_free(&v);
}

/* limit_alphabet: a 10, b 5, c 5, d 1 with limit 2 drops d and, of the tie
 * b/c, the higher code point c. "cab" loses its first character, so its
 * symbols are ##a ##b. Then by hand: (##a,##a) 4 -> ##aa (aaaa becomes
 * a ##aa ##a); at 2: the stale (a,##a) goes back with 0, (a,##aa) -> aaa,
 * (##a,##b) -> ##ab, the stale (##aa,##a) goes back, (aaa,##a) -> aaaa;
 * at 1: (b,##b) -> bb, (bb,##b) -> bbb. With limit 3 c stays and "cab"
 * is c ##a ##b: at 2, (a,##aa) -> aaa, then (c,##a) -> ca (first ids
 * a=5 < c=7), which leaves (##a,##b) at 0, then aaaa and cab; at 1, bb
 * and cc come before bbb and ccc, whose pairs hold the newer ids. All the
 * expected lists here were also checked against tokenizers 0.23.3 (runs
 * where it numbered the ##c tokens in code point order). */
static void test_limit_alphabet(void) {
    static const WordCount wc[] = {{"aaaa", 2}, {"cab", 2}, {"bbb", 1},
                                   {"ccc", 1},  {"d", 1},   {0, 0}};
    WpVocab v;
    WpTrainOpts o = opts(100, 0, 1, 2);
    TRAIN_EQ("limit 2", wc, &o, &v, "a b ##a ##b ##aa aaa ##ab aaaa bb bbb");
    test_cond("two characters dropped", v.dropped_chars == 2);
    wpvocab_free(&v);
    o = opts(100, 0, 2, 2);
    TRAIN_EQ("limit 2, min_frequency 2", wc, &o, &v, "a b ##a ##b ##aa aaa ##ab aaaa");
    wpvocab_free(&v);
    o = opts(100, 0, 1, 3);
    TRAIN_EQ("limit 3 keeps b and c", wc, &o, &v,
             "a b c ##a ##b ##c ##aa aaa ca aaaa cab bb cc bbb ccc");
    test_cond("one character dropped", v.dropped_chars == 1);
    wpvocab_free(&v);
    o = opts(100, 0, 1, 0);
    train_words(wc, &o, &v);
    test_cond("limit 0 keeps all", v.nalpha == 4 && v.dropped_chars == 0);
    wpvocab_free(&v);
}

/* WpTrainOpts.initial fixes the alphabet and the "##c" numbering. */
static void test_initial(void) {
    static const WordCount wc[] = {{"ab", 2}, {"ba", 1}, {0, 0}};
    static const char *const list1[] = {"[PAD]", "b", "a", "##b", "##a", "ab"};
    VocabList init = {0};
    for (size_t i = 0; i < sizeof list1 / sizeof *list1; i++)
        vocablist_push(&init, list1[i], strlen(list1[i]), 0);
    WpVocab v;
    WpTrainOpts o = opts(100, 0, 1, 0);
    o.initial = &init;
    TRAIN_EQ("given order", wc, &o, &v, "b a ##b ##a ab ba");
    wpvocab_free(&v);
    vocablist_free(&init);
    vocablist_push(&init, "a", 1, 0);
    vocablist_push(&init, "##b", 3, 0);
    /* b is not in the alphabet, so neither b nor ##b occurs; ##a follows */
    TRAIN_EQ("unlisted b dropped, unlisted ##a appended", wc, &o, &v, "a ##a");
    test_cond("one character dropped", v.dropped_chars == 1);
    wpvocab_free(&v);
    vocablist_free(&init);
}

static void test_specials(void) {
    static const WordCount wc[] = {{"ab", 2}, {0, 0}};
    WpVocab v;
    WpTrainOpts o = opts(100, 3, 1, 0);
    train_words(wc, &o, &v);
    Buf txt = {0};
    wpvocab_txt(&v, &txt);
    test_str_eq(
        "3 unused", txt.data,
        "[PAD]\n[unused0]\n[unused1]\n[unused2]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nb\n##b\nab\n");
    wpvocab_free(&v);
    o = opts(200, 100, 1, 0);
    train_words(wc, &o, &v);
    test_cond("100 unused: BERT layout", v.nspecial == 105 &&
                                             strcmp(vocablist_at(&v.tok, 0), "[PAD]") == 0 &&
                                             strcmp(vocablist_at(&v.tok, 100), "[unused99]") == 0 &&
                                             strcmp(vocablist_at(&v.tok, 101), "[UNK]") == 0 &&
                                             strcmp(vocablist_at(&v.tok, 104), "[MASK]") == 0 &&
                                             strcmp(vocablist_at(&v.tok, 105), "a") == 0);
    wpvocab_free(&v);
    o = opts(100, -1, 1, 0);
    const char *got = train_words(wc, &o, &v);
    test_cond("negative unused refused", strncmp(got, "ERROR: ", 7) == 0);
    buf_free(&txt);
}

/* The exact tokenizer.json of a tiny vocabulary, as tokenizers 0.23.3 saves
 * a Tokenizer with these parts (tests/cli/wptrain.sh also checks that
 * Tokenizer.from_file(...).to_str(pretty=True) gives our bytes back). */
static void test_json(void) {
    static const WordCount wc[] = {{"\"\\", 2}, {0, 0}};
    WpVocab v;
    WpTrainOpts o = opts(100, 0, 1, 0);
    train_words(wc, &o, &v);
    v.cased = 1;
    Buf js = {0};
    wpvocab_json(&v, &js);
    static const char *const added[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
    Buf want = {0};
    buf_puts(&want, "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n  "
                    "\"added_tokens\": [\n");
    for (int i = 0; i < 5; i++) {
        char item[400];
        snprintf(
            item, sizeof item,
            "    {\n      \"id\": %d,\n      \"content\": \"%s\",\n      \"single_word\": false,\n"
            "      \"lstrip\": false,\n      \"rstrip\": false,\n      \"normalized\": false,\n"
            "      \"special\": true\n    }%s\n",
            i, added[i], i < 4 ? "," : "");
        buf_puts(&want, item);
    }
    buf_puts(
        &want,
        "  ],\n  \"normalizer\": {\n    \"type\": \"BertNormalizer\",\n    \"clean_text\": true,\n"
        "    \"handle_chinese_chars\": true,\n    \"strip_accents\": null,\n    \"lowercase\": "
        "false\n  },\n"
        "  \"pre_tokenizer\": {\n    \"type\": \"BertPreTokenizer\"\n  },\n"
        "  \"post_processor\": {\n    \"type\": \"TemplateProcessing\",\n    \"single\": [\n"
        "      {\n        \"SpecialToken\": {\n          \"id\": \"[CLS]\",\n          "
        "\"type_id\": 0\n        }\n      },\n"
        "      {\n        \"Sequence\": {\n          \"id\": \"A\",\n          \"type_id\": 0\n    "
        "    }\n      },\n"
        "      {\n        \"SpecialToken\": {\n          \"id\": \"[SEP]\",\n          "
        "\"type_id\": 0\n        }\n      }\n"
        "    ],\n    \"pair\": [\n"
        "      {\n        \"SpecialToken\": {\n          \"id\": \"[CLS]\",\n          "
        "\"type_id\": 0\n        }\n      },\n"
        "      {\n        \"Sequence\": {\n          \"id\": \"A\",\n          \"type_id\": 0\n    "
        "    }\n      },\n"
        "      {\n        \"SpecialToken\": {\n          \"id\": \"[SEP]\",\n          "
        "\"type_id\": 0\n        }\n      },\n"
        "      {\n        \"Sequence\": {\n          \"id\": \"B\",\n          \"type_id\": 1\n    "
        "    }\n      },\n"
        "      {\n        \"SpecialToken\": {\n          \"id\": \"[SEP]\",\n          "
        "\"type_id\": 1\n        }\n      }\n"
        "    ],\n    \"special_tokens\": {\n"
        "      \"[CLS]\": {\n        \"id\": \"[CLS]\",\n        \"ids\": [\n          2\n        "
        "],\n"
        "        \"tokens\": [\n          \"[CLS]\"\n        ]\n      },\n"
        "      \"[SEP]\": {\n        \"id\": \"[SEP]\",\n        \"ids\": [\n          3\n        "
        "],\n"
        "        \"tokens\": [\n          \"[SEP]\"\n        ]\n      }\n    }\n  },\n"
        "  \"decoder\": {\n    \"type\": \"WordPiece\",\n    \"prefix\": \"##\",\n    \"cleanup\": "
        "true\n  },\n"
        "  \"model\": {\n    \"type\": \"WordPiece\",\n    \"unk_token\": \"[UNK]\",\n"
        "    \"continuing_subword_prefix\": \"##\",\n    \"max_input_chars_per_word\": 100,\n"
        "    \"vocab\": {\n      \"[PAD]\": 0,\n      \"[UNK]\": 1,\n      \"[CLS]\": 2,\n      "
        "\"[SEP]\": 3,\n"
        "      \"[MASK]\": 4,\n      \"\\\"\": 5,\n      \"\\\\\": 6,\n      \"##\\\\\": 7,\n"
        "      \"\\\"\\\\\": 8\n    }\n  }\n}");
    test_mem_eq("tokenizer.json layout", js.data, js.len, want.data, want.len);
    buf_free(&js), buf_free(&want);
    wpvocab_free(&v);
}

/* Counting goes through BertNormalizer + BertPreTokenizer. */
static void test_counting(void) {
    const char *text =
        "Hello, HELLO h\xc3\xa9llo [MASK]\n\xce\x9f\xce\xa3 \xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad";
    WpCounts *c = wpcounts_create();
    Buf d = {0};
    test_cond("words counted", wpcounts_add_text(c, text, strlen(text), WP_UNCASED) == 11);
    wpcounts_dump(c, &d);
    test_str_eq("uncased counts", d.data,
                "hello\t3\n\xe4\xb8\xad\t2\n,\t1\n[\t1\n]"
                "\t1\nmask\t1\n\xce\xbf\xcf\x83\t1\n\xe6\x96\x87\t1\n");
    test_cond("distinct", wpcounts_distinct(c) == 8);
    wpcounts_destroy(c);
    c = wpcounts_create();
    buf_clear(&d);
    wpcounts_add_text(c, text, strlen(text), 0);
    wpcounts_dump(c, &d);
    test_str_eq("cased counts", d.data,
                "\xe4\xb8\xad\t2\n,\t1\nHELLO\t1\nHello\t1\nMASK\t1\n[\t1\n]\t1\nh\xc3\xa9llo\t1\n"
                "\xce\x9f\xce\xa3\t1\n\xe6\x96\x87\t1\n");
    wpcounts_add(c, "x\xff", 2, 5);
    wpcounts_add(c, "", 0, 5);
    test_cond("invalid or empty words are not added", wpcounts_distinct(c) == 10);
    wpcounts_destroy(c);
    buf_free(&d);
}

/* A pseudo-random corpus: words drawn from a small Zipf-like lexicon with
 * accents, capitals, punctuation and CJK, in lines of 1-30 words. */
static void make_corpus(Buf *out, size_t lines, uint64_t seed) {
    static const char *const lex[] = {"the",
                                      "The",
                                      "of",
                                      "and",
                                      "in",
                                      "to",
                                      "was",
                                      "is",
                                      "for",
                                      "on",
                                      "as",
                                      "with",
                                      "by",
                                      "he",
                                      "at",
                                      "from",
                                      "his",
                                      "an",
                                      "were",
                                      "are",
                                      "which",
                                      "this",
                                      "also",
                                      "be",
                                      "or",
                                      "has",
                                      "had",
                                      "first",
                                      "one",
                                      "their",
                                      "its",
                                      "new",
                                      "after",
                                      "who",
                                      "they",
                                      "two",
                                      "her",
                                      "she",
                                      "been",
                                      "other",
                                      "when",
                                      "time",
                                      "during",
                                      "there",
                                      "into",
                                      "school",
                                      "\xc3\xa9t\xc3\xa9",
                                      "na\xc3\xafve",
                                      "\xc3\x81rv\xc3\xadzt\xc5\xb1r\xc5\x91",
                                      "t\xc3\xbck\xc3\xb6rf\xc3\xbar\xc3\xb3g\xc3\xa9p",
                                      "Berlin",
                                      "BERLIN",
                                      "unaffable",
                                      "Johanson",
                                      "1848",
                                      "12,345.6",
                                      "(about)",
                                      "don't",
                                      "\xe4\xb8\xad\xe6\x96\x87",
                                      "\xce\x9f\xce\x94\xce\x9f\xce\xa3",
                                      "well-known",
                                      "e.g.",
                                      "U.S.",
                                      "rapidly",
                                      "running",
                                      "runner",
                                      "ran",
                                      "unrunnable",
                                      "relocation",
                                      "location",
                                      "locate"};
    size_t nlex = sizeof lex / sizeof *lex;
    Rng r;
    rng_seed(&r, seed);
    for (size_t i = 0; i < lines; i++) {
        size_t n = 1 + rng_below(&r, 30);
        for (size_t k = 0; k < n; k++) {
            /* squaring a uniform index favours the front of the lexicon */
            uint64_t u = rng_below(&r, nlex * nlex);
            size_t j = nlex - 1 - (size_t)(u / nlex) * (size_t)(u % nlex) / nlex;
            if (k) buf_putc(out, ' ');
            buf_puts(out, lex[j % nlex]);
            if (rng_below(&r, 20) == 0) {
                char num[24];
                buf_append(out, num,
                           (size_t)snprintf(num, sizeof num, "%llu",
                                            (unsigned long long)rng_below(&r, 5000)));
            }
        }
        buf_puts(out, i % 50 == 49 ? "\n\n" : ".\n");
    }
}

static int write_file(const char *path, const Buf *b) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int ok = !b->len || fwrite(b->data, 1, b->len, f) == b->len;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* The test's own look at an output (not common/io.h's read_file, which
 * notes the file as an input of this process: outputs never replace it). */
static int read_all(const char *path, Buf *b) {
    buf_clear(b);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char chunk[1 << 16];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_append(b, chunk, n);
    fclose(f);
    return 0;
}

/* Streaming counts on 1 and 4 threads equal one-shot counts, and
 * wptrain_run writes the same bytes for any thread count. */
static void test_threads_and_run(void) {
    char dir[] = "/tmp/test_wptrain.XXXXXX";
    if (!mkdtemp(dir)) {
        test_cond("mkdtemp", 0);
        return;
    }
    char in[256], empty[256], txt1[256], js1[256], txt4[256], js4[256];
    snprintf(in, sizeof in, "%s/in.txt", dir);
    snprintf(empty, sizeof empty, "%s/empty.txt", dir);
    snprintf(txt1, sizeof txt1, "%s/v1.txt", dir), snprintf(js1, sizeof js1, "%s/v1.json", dir);
    snprintf(txt4, sizeof txt4, "%s/v4.txt", dir), snprintf(js4, sizeof js4, "%s/v4.json", dir);
    Buf text = {0}, a = {0}, b = {0};
    make_corpus(&text, 20000, 42);
    buf_puts(&text, "bad \xff utf8\n");
    test_cond("corpus written", write_file(in, &text) == 0 && write_file(empty, &(Buf){0}) == 0);

    WpCounts *one = wpcounts_create(), *c1 = wpcounts_create(), *c4 = wpcounts_create();
    size_t words = wpcounts_add_text(one, text.data, text.len, WP_UNCASED);
    const char *inputs[] = {in};
    WpCountStats s1 = {0}, s4 = {0};
    Err err;
    test_cond("read, 1 thread", wpcounts_read(c1, inputs, 1, WP_UNCASED, 1, &s1, &err) == 0);
    test_cond("read, 4 threads", wpcounts_read(c4, inputs, 1, WP_UNCASED, 4, &s4, &err) == 0);
    test_cond("stats", s1.lines == 20401 && s1.bytes == text.len && s1.words == words &&
                           s1.bad_utf8 == 1 && s4.lines == s1.lines && s4.words == s1.words &&
                           s4.bad_utf8 == 1);
    Buf d0 = {0};
    wpcounts_dump(one, &d0), wpcounts_dump(c1, &a), wpcounts_dump(c4, &b);
    test_cond("counts: 1 thread = one shot",
              a.len == d0.len && memcmp(a.data, d0.data, a.len) == 0);
    test_cond("counts: 4 threads = 1 thread", a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    buf_free(&d0);
    wpcounts_destroy(one), wpcounts_destroy(c1), wpcounts_destroy(c4);

    WpTrainOpts o = opts(400, 100, 2, 1000);
    o.threads = 1;
    test_cond("run, 1 thread", wptrain_run(&o, inputs, 1, txt1, js1, &err) == 0);
    o.threads = 4;
    test_cond("run, 4 threads", wptrain_run(&o, inputs, 1, txt4, js4, &err) == 0);
    read_all(txt1, &a), read_all(txt4, &b);
    size_t lines = 0;
    for (size_t i = 0; i < a.len; i++)
        lines += a.data[i] == '\n';
    test_cond("vocab.txt has exactly vocab_size lines", lines == 400);
    test_cond("vocab.txt: 4 threads = 1 thread",
              a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    read_all(js1, &a), read_all(js4, &b);
    test_cond("tokenizer.json: 4 threads = 1 thread",
              a.len > 0 && a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    test_cond("existing output refused", wptrain_run(&o, inputs, 1, txt1, NULL, &err) == -1 &&
                                             strstr(err.msg, "v1.txt") != NULL);
    o.force = 1;
    o.vocab_size = 300;
    test_cond("force overwrites", wptrain_run(&o, inputs, 1, txt1, NULL, &err) == 0);
    read_all(txt1, &a);
    lines = 0;
    for (size_t i = 0; i < a.len; i++)
        lines += a.data[i] == '\n';
    test_cond("overwritten with 300 lines", lines == 300);
    /* every size from the smallest possible up gives exactly that many lines */
    WpCounts *c = wpcounts_create();
    WpCountStats st = {0};
    wpcounts_read(c, inputs, 1, WP_UNCASED, 2, &st, &err);
    int exact = 1;
    size_t first = 0;
    for (size_t n = 100; n <= 700; n += 7) {
        WpVocab v = {0};
        o = opts(n, 100, 2, 1000);
        int rc = wptrain_train(c, &o, &v, &err);
        if (rc == 0 && !first) first = n;
        if (rc == 0 && v.tok.n != n) exact = 0;
        if (rc != 0 && first) exact = 0;
        wpvocab_free(&v);
    }
    test_cond("sizes: too small, then exact", first > 105 && exact);
    wpcounts_destroy(c);
    /* errors leave nothing behind */
    char txt5[256];
    snprintf(txt5, sizeof txt5, "%s/v5.txt", dir);
    const char *einputs[] = {empty};
    o = opts(400, 100, 2, 1000);
    test_cond("empty corpus is an error", wptrain_run(&o, einputs, 1, txt5, NULL, &err) == -1 &&
                                              strcmp(err.msg, "no words in the input") == 0);
    o.vocab_size = 50;
    test_cond("too small a size is an error", wptrain_run(&o, inputs, 1, txt5, NULL, &err) == -1 &&
                                                  strstr(err.msg, "too small") != NULL);
    char missing[256];
    snprintf(missing, sizeof missing, "%s/missing.txt", dir);
    const char *minputs[] = {missing};
    test_cond("missing input is an error", wptrain_run(&o, minputs, 1, txt5, NULL, &err) == -1 &&
                                               strstr(err.msg, "No such file") != NULL);
    test_cond("no output after errors", access(txt5, F_OK) != 0);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s | grep -c tmp >/dev/null || true; rm -rf %s", dir, dir);
    test_cond("cleanup", system(cmd) == 0);
    buf_free(&text), buf_free(&a), buf_free(&b);
}

int main(int argc, char **argv) {
    if (argc > 1) return driver(argc, argv);
    int saved = display_level;
    display_level = 1; /* no summaries from wptrain_run */
    test_hand_merges();
    test_hf_corpus();
    test_ties();
    test_limit_alphabet();
    test_initial();
    test_specials();
    test_json();
    test_counting();
    test_threads_and_run();
    display_level = saved;
    return test_report();
}
