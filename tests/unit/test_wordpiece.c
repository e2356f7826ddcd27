/* test_wordpiece.c - BERT BasicTokenizer + WordPiece (wordpiece.h).
 *
 * The BasicTokenizer vectors of the pipeline specification (16.1, from
 * running NVIDIA's tokenization.py), one case per cleaning / splitting /
 * folding rule (expected values from Python 3.11's str and unicodedata,
 * which agree with ICU here), vocabulary loading (12.1), the greedy
 * WordPiece matcher on small vocabularies, the shipped bert-base-uncased
 * vocabulary, and one tokenizer shared by several threads.
 */
#include <pthread.h>
#include <stdlib.h>

#include "tests/test.h"
#include "tokenize/wordpiece.h"

static WordPiece *mem_vocab(const char *v, int lower) {
    Err err;
    WordPiece *wp = wp_create_mem(v, strlen(v), "mem", lower ? WP_UNCASED : 0, &err);
    if (!wp) printf("vocab error: %s\n", err.msg);
    return wp;
}

/* Basic tokens of s, space-separated, into a static buffer. */
static const char *basic(WordPiece *wp, const char *s, size_t n) {
    static Buf out;
    WpScratch sc = {0};
    buf_clear(&out);
    wp_basic_tokenize(wp, &sc, s, n, &out);
    wp_scratch_free(&sc);
    return out.data ? out.data : "";
}

/* Full tokenization of s as space-separated token strings. */
static const char *full(WordPiece *wp, const char *s) {
    static Buf out;
    WpScratch sc = {0};
    WpIds ids = {0};
    buf_clear(&out);
    wp_encode(wp, &sc, s, strlen(s), &ids);
    for (size_t k = 0; k < ids.n; k++) {
        if (k) buf_putc(&out, ' ');
        buf_puts(&out, wp_id_token(wp, ids.v[k], NULL));
    }
    wp_ids_free(&ids);
    wp_scratch_free(&sc);
    return out.data ? out.data : "";
}

#define BASIC(wp, in, want) test_str_eq(in, basic(wp, in, strlen(in)), want)

static void test_spec_vectors(void) {
    WordPiece *wp = mem_vocab("[UNK]\n", 1), *cased = mem_vocab("[UNK]\n", 0);
    BASIC(wp,
          "\xc3\x81rv\xc3\xadzt\xc5\xb1r\xc5\x91 t\xc3\xbck\xc3\xb6rf\xc3\xbar\xc3\xb3g\xc3\xa9p.",
          "arvizturo tukorfurogep .");
    BASIC(wp, "Hello, [MASK] world!! [mask] don't", "hello , [MASK] world ! ! [ mask ] don ' t");
    BASIC(wp, "\xc4\xb0stanbul \xce\xa3\xce\x91\xce\xa3 na\xc3\xafve caf\xc3\xa9",
          "istanbul \xcf\x83\xce\xb1\xcf\x82 naive cafe");
    BASIC(wp,
          "a\xe2\x80\xa8"
          "b\xc2\xa0"
          "c\x1f"
          "d",
          "a b cd");
    BASIC(wp, "\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97 ok",
          "\xe4\xb8\xad \xe6\x96\x87 \xe5\xad\x97 ok");
    BASIC(wp, "x\xe2\x80\x8by", "xy");
    BASIC(
        cased,
        "\xc3\x81rv\xc3\xadzt\xc5\xb1r\xc5\x91 t\xc3\xbck\xc3\xb6rf\xc3\xbar\xc3\xb3g\xc3\xa9p.",
        "\xc3\x81rv\xc3\xadzt\xc5\xb1r\xc5\x91 t\xc3\xbck\xc3\xb6rf\xc3\xbar\xc3\xb3g\xc3\xa9p .");
    wp_destroy(wp);
    wp_destroy(cased);
}

static void test_rules(void) {
    WordPiece *wp = mem_vocab("[UNK]\n", 1), *cased = mem_vocab("[UNK]\n", 0);
    /* cleaning: C* deleted (VT, FF, DEL, NEL, soft hyphen, BOM, private
     * use, an unassigned code point, NUL), whitespace -> separator */
    static const char ctl[] = "a\x0b"
                              "b\x0c"
                              "c\x7f"
                              "d\xc2\x85"
                              "e\xc2\xad"
                              "f\xef\xbb\xbf"
                              "g\xee\x80\x80"
                              "h\xf0\xaf\xa8\xa0"
                              "i\0j";
    test_str_eq("control characters deleted", basic(wp, ctl, sizeof ctl - 1), "abcdefghij");
    BASIC(wp,
          "a\tb\rc\nd\xe3\x80\x80"
          "e\xe2\x80\xa9"
          "f\xe2\x80\x83g",
          "a b c d e f g");
    BASIC(wp, "   ", "");
    BASIC(wp, "", "");
    /* invalid UTF-8 is dropped like U+FFFD, and counted */
    {
        WpScratch sc = {0};
        Buf out = {0};
        wp_basic_tokenize(wp, &sc,
                          "a\xff"
                          "b \xef\xbf\xbd \xc3",
                          9, &out);
        test_str_eq("invalid UTF-8 dropped", out.data, "ab");
        test_cond("invalid UTF-8 counted", sc.bad_utf8 == 2);
        buf_free(&out);
        wp_scratch_free(&sc);
    }
    /* ASCII punctuation, all of it, including the symbols */
    BASIC(wp, "$5+3<4=x>y^z|w~v`u", "$ 5 + 3 < 4 = x > y ^ z | w ~ v ` u");
    BASIC(wp, "a_b@c#d", "a _ b @ c # d");
    /* non-ASCII P* split off; S* (euro, times, copyright, degree) kept */
    BASIC(wp,
          "\xc2\xbbidé\xc2\xab \xe2\x80\x9eok\xe2\x80\x9d 1\xe2\x80\x93"
          "2 \xc2\xbfs\xc3\xad?",
          "\xc2\xbb ide \xc2\xab \xe2\x80\x9e ok \xe2\x80\x9d 1 \xe2\x80\x93 2 \xc2\xbf si ?");
    BASIC(wp,
          "5\xe2\x82\xac 3\xc3\x97"
          "4 \xc2\xa9x 20\xc2\xb0"
          "C",
          "5\xe2\x82\xac 3\xc3\x97"
          "4 \xc2\xa9x 20\xc2\xb0"
          "c");
    BASIC(wp,
          "\xef\xbc\x81"
          "a\xe3\x80\x82",
          "\xef\xbc\x81 a \xe3\x80\x82"); /* fullwidth ! and ideographic full stop */
    /* never_split: whole whitespace tokens only, matched before lower-casing */
    BASIC(wp, "[CLS] [SEP] [PAD] [UNK] [MASK]", "[CLS] [SEP] [PAD] [UNK] [MASK]");
    BASIC(wp, "[MASK]. [Mask] x[CLS]", "[ mask ] . [ mask ] x [ cls ]");
    BASIC(cased, "[MASK] [mask]", "[MASK] [ mask ]");
    /* lower-casing: Final_Sigma over the token, special casing, non-Latin */
    BASIC(wp, "\xce\xa3\xce\x91\xce\xa3. \xce\xa3", "\xcf\x83\xce\xb1\xcf\x82 . \xcf\x83");
    BASIC(wp,
          "STRASSE \xc3\x9f \xc5\x81\xc3\x93"
          "D\xc5\xb9 \xc3\x98RE",
          "strasse \xc3\x9f \xc5\x82odz \xc3\xb8re");
    BASIC(wp, "\xd0\x9c\xd0\x9e\xd0\xa1\xd0\x9a\xd0\x92\xd0\x90 \xd0\x99",
          "\xd0\xbc\xd0\xbe\xd1\x81\xd0\xba\xd0\xb2\xd0\xb0 \xd0\xb8");
    /* accents: NFD then Mn dropped; a token of marks only disappears;
     * Hangul syllables decompose into conjoining jamo (kept) */
    BASIC(wp, "o\xcc\x88\xcc\x81 \xcc\x81 x", "o x");
    BASIC(wp, "\xed\x95\x9c", "\xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab");
    BASIC(cased, "Caf\xc3\xa9 \xce\xa3\xce\x91\xce\xa3", "Caf\xc3\xa9 \xce\xa3\xce\x91\xce\xa3");
    /* CJK ideographs become tokens; compatibility ideographs normalise;
     * kana and Hangul are not spaced */
    BASIC(wp,
          "a\xe4\xb8\xad"
          "b\xf0\xa0\x80\x80"
          "c",
          "a \xe4\xb8\xad b \xf0\xa0\x80\x80 c");
    BASIC(wp, "\xef\xa4\x80", "\xe8\xb1\x88");
    BASIC(wp, "\xe3\x81\x93\xe3\x82\x8c\xe3\x82\xab", "\xe3\x81\x93\xe3\x82\x8c\xe3\x82\xab");
    wp_destroy(wp);
    wp_destroy(cased);
}

static void test_wordpiece(void) {
    /* the vocabulary and cases of google-research/bert's tokenization_test */
    WordPiece *wp =
        mem_vocab("[UNK]\n[CLS]\n[SEP]\nwant\n##want\n##ed\nwa\nun\nrunn\n##ing\n,\n", 1);
    test_str_eq("greedy pieces",
                full(wp, "UNwant\xc3\xa9"
                         "d,running"),
                "un ##want ##ed , runn ##ing");
    test_str_eq("unmatchable word is one [UNK]", full(wp, "unwantedX running"), "[UNK] runn ##ing");
    test_str_eq("empty text", full(wp, ""), "");
    test_str_eq("[CLS] is a vocab word", full(wp, "[CLS] x"), "[CLS] [UNK]");
    wp_destroy(wp);

    /* longest match first, and a failure after matched pieces */
    wp = mem_vocab("[UNK]\na\n##b\n##bc\n##bcd\n##e\nab\n", 1);
    test_str_eq("a failing rest discards matched pieces", full(wp, "abcd"), "[UNK]");
    test_str_eq("longest continuation", full(wp, "acbd"), "[UNK]");
    test_str_eq("continuation chain", full(wp, "abe"), "ab ##e");
    wp_destroy(wp);
    wp = mem_vocab("[UNK]\na\n##b\n##bc\n##bcd\n##e\n", 1);
    test_str_eq("## longest", full(wp, "abcd abce abcx"), "a ##bcd a ##bc ##e [UNK]");
    wp_destroy(wp);

    /* 100 code points is the limit (Cyrillic: two bytes each) */
    wp = mem_vocab("[UNK]\n\xd0\xb6\n##\xd0\xb6\n", 1);
    Buf w = {0};
    for (int i = 0; i < 100; i++)
        buf_puts(&w, "\xd0\xb6");
    WpScratch sc = {0};
    WpIds ids = {0};
    wp_encode(wp, &sc, w.data, w.len, &ids);
    test_cond("100 characters are matched", ids.n == 100 && ids.v[0] == 1 && ids.v[99] == 2);
    buf_puts(&w, "\xd0\xb6");
    ids.n = 0;
    wp_encode(wp, &sc, w.data, w.len, &ids);
    test_cond("101 characters are [UNK]", ids.n == 1 && ids.v[0] == 0);
    buf_free(&w);
    wp_destroy(wp);

    /* no [UNK] line: the token is still written, with no real id */
    wp = mem_vocab("a\n", 1);
    test_cond("absent [UNK]", wp_unk_id(wp) == WP_UNK_ABSENT);
    test_str_eq("absent [UNK] text", full(wp, "a b"), "a [UNK]");
    wp_destroy(wp);
    wp_ids_free(&ids);
    wp_scratch_free(&sc);
}

static void test_vocab(void) {
    WordPiece *wp = mem_vocab("[UNK]\r\n  a \t\r\n\rb\n\xc2\xa0"
                              "c\xe2\x80\x83\na\nb",
                              1);
    test_cond("line count (\\r\\n, \\r, blank lines, no final newline)", wp_vocab_size(wp) == 7);
    test_cond("stripped token, last duplicate line wins", wp_token_id(wp, "a", 1) == 5);
    test_cond("b: last line", wp_token_id(wp, "b", 1) == 6);
    test_cond("Unicode whitespace stripped", wp_token_id(wp, "c", 1) == 4);
    test_cond("blank line is the token \"\"", wp_token_id(wp, "", 0) == 2);
    test_str_eq("id to token", wp_id_token(wp, 1, NULL), "a");
    test_cond("out of range id",
              wp_id_token(wp, 7, NULL) == NULL && wp_id_token(wp, -1, NULL) == NULL);
    test_cond("unknown token", wp_token_id(wp, "d", 1) == -1 && wp_token_id(wp, "[UN", 3) == -1);
    test_cond("[UNK] id", wp_unk_id(wp) == 0);
    wp_destroy(wp);
    wp = mem_vocab("", 1);
    test_cond("empty vocab", wp && wp_vocab_size(wp) == 0);
    test_str_eq("empty vocab gives [UNK]", full(wp, "x"), "[UNK]");
    wp_destroy(wp);

    Err err;
    test_cond("invalid UTF-8 rejected", !wp_create_mem("a\nb\xff\n", 5, "v.txt", WP_UNCASED, &err));
    test_str_eq("invalid UTF-8 message", err.msg, "v.txt:2: invalid UTF-8");
    test_cond("missing file", !wp_create("/nonexistent/vocab.txt", WP_UNCASED, &err));
    test_str_eq("missing file message", err.msg,
                "/nonexistent/vocab.txt: No such file or directory");
}

/* ---- the shipped bert-base-uncased vocabulary ---- */

static WordPiece *bert;
static const char *const lines[] = {
    "Hello, [MASK] world!! [mask] don't",
    "\xc3\x81rv\xc3\xadzt\xc5\xb1r\xc5\x91 t\xc3\xbck\xc3\xb6rf\xc3\xbar\xc3\xb3g\xc3\xa9p.",
    "The unaffable Johanson ran 12,345.6 km (about 7,671 mi) \xe2\x80\x94 in 1848!",
    "\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97 ok \xce\xa3\xce\x91\xce\xa3 na\xc3\xafve caf\xc3\xa9",
};

static void test_bert_vocab(void) {
    test_cond("bert-base-uncased size", wp_vocab_size(bert) == 30522);
    test_cond("bert special ids", wp_token_id(bert, "[PAD]", 5) == 0 && wp_unk_id(bert) == 100 &&
                                      wp_token_id(bert, "[CLS]", 5) == 101 &&
                                      wp_token_id(bert, "[MASK]", 6) == 103);
    test_str_eq("bert tokens", full(bert, lines[0]), "hello , [MASK] world ! ! [ mask ] don ' t");
    test_str_eq("bert accents", full(bert, lines[1]),
                "ar ##vi ##z ##tur ##o tu ##kor ##fur ##oge ##p .");
    test_str_eq("bert pieces", full(bert, lines[2]),
                "the una ##ffa ##ble johan ##son ran 12 , 345 . 6 km ( about 7 , 67 ##1 mi ) "
                "\xe2\x80\x94 in 1848 !");
    WpScratch sc = {0};
    WpIds ids = {0};
    wp_encode(bert, &sc, lines[0], strlen(lines[0]), &ids);
    static const int32_t want[] = {7592, 1010, 103,  2088, 999,  999,
                                   1031, 7308, 1033, 2123, 1005, 1056};
    test_cond("bert ids", ids.n == 12 && memcmp(ids.v, want, sizeof want) == 0);
    wp_ids_free(&ids);
    wp_scratch_free(&sc);
}

/* Several threads share one tokenizer and must get the single-thread ids. */
typedef struct Job {
    int ok;
} Job;

static WpIds ref[4];

static void *thread_main(void *arg) {
    Job *j = arg;
    WpScratch sc = {0};
    WpIds ids = {0};
    j->ok = 1;
    for (int round = 0; round < 300; round++) {
        int i = round % 4;
        ids.n = 0;
        wp_encode(bert, &sc, lines[i], strlen(lines[i]), &ids);
        if (ids.n != ref[i].n || memcmp(ids.v, ref[i].v, ids.n * sizeof *ids.v)) j->ok = 0;
    }
    wp_ids_free(&ids);
    wp_scratch_free(&sc);
    return NULL;
}

static void test_threads(void) {
    WpScratch sc = {0};
    for (int i = 0; i < 4; i++)
        wp_encode(bert, &sc, lines[i], strlen(lines[i]), &ref[i]);
    wp_scratch_free(&sc);
    pthread_t th[4];
    Job jobs[4];
    for (int t = 0; t < 4; t++)
        pthread_create(&th[t], NULL, thread_main, &jobs[t]);
    int ok = 1;
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        ok &= jobs[t].ok;
    }
    test_cond("threads sharing one tokenizer agree", ok);
    for (int i = 0; i < 4; i++)
        wp_ids_free(&ref[i]);
}

/* wp_create_basic: tokenization.py's flavour and Hugging Face's
 * BertNormalizer + BertPreTokenizer (expected values from tokenizers 0.23.3's
 * BertNormalizer().normalize_str + BertPreTokenizer().pre_tokenize_str). */
static void test_basic_flavours(void) {
    WordPiece *py = wp_create_basic(WP_UNCASED, WP_FLAVOR_BERT),
              *hf = wp_create_basic(WP_UNCASED, WP_FLAVOR_HF);
    WordPiece *hfc = wp_create_basic(0, WP_FLAVOR_HF);
    test_cond("basic tokenizers have no vocabulary",
              wp_vocab_size(py) == 0 && wp_vocab_size(hf) == 0);
    /* final capital sigma, U+0378 (unassigned), U+2B820 (CJK Ext. E) */
    const char *s = "Hello, [MASK] \xce\x9f\xce\x94\xce\x9f\xce\xa3 caf\xc3\xa9 "
                    "a\xcd\xb8"
                    "b x\xf0\xab\xa0\xa0y";
    BASIC(py, s, "hello , [MASK] \xce\xbf\xce\xb4\xce\xbf\xcf\x82 cafe ab x \xf0\xab\xa0\xa0 y");
    BASIC(hf, s,
          "hello , [ mask ] \xce\xbf\xce\xb4\xce\xbf\xcf\x83 cafe "
          "a\xcd\xb8"
          "b x\xf0\xab\xa0\xa0y");
    BASIC(hfc, s,
          "Hello , [ MASK ] \xce\x9f\xce\x94\xce\x9f\xce\xa3 caf\xc3\xa9 "
          "a\xcd\xb8"
          "b x\xf0\xab\xa0\xa0y");
    BASIC(hf, "\xc4\xb0stanbul \xce\xa3\xce\x91\xce\xa3 na\xc3\xafve x\xe2\x80\x8by",
          "istanbul \xcf\x83\xce\xb1\xcf\x83 naive xy");
    WpScratch sc = {0};
    size_t n = wp_basic_pieces(hf, &sc, "Ab,c  d", 7);
    test_cond("wp_basic_pieces count", n == 4 && sc.nends == 4);
    test_mem_eq("wp_basic_pieces bytes", sc.pieces.data, sc.ends[3], "ab,cd", 5);
    test_cond("wp_basic_pieces ends", sc.ends[0] == 2 && sc.ends[1] == 3 && sc.ends[2] == 4);
    wp_scratch_free(&sc);
    wp_destroy(py), wp_destroy(hf), wp_destroy(hfc);
}

int main(void) {
    test_spec_vectors();
    test_basic_flavours();
    test_rules();
    test_wordpiece();
    test_vocab();
    Err err;
    bert = wp_create(WB_DATADIR "/bert/vocab.txt", WP_UNCASED, &err);
    test_cond("shipped vocab loads", bert != NULL);
    if (bert) {
        test_bert_vocab();
        test_threads();
        wp_destroy(bert);
    }
    return test_report();
}
