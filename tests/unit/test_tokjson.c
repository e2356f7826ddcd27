/* test_tokjson.c - tokenizer.json read back (common/tokjson.h) and a
 * WordPiece tokenizer made from one (tokenize/wordpiece.h).
 *
 * The writer's file read back gives the vocabulary and the normalization
 * it was written with; a file as tokenizers writes one (members in another
 * order, the vocabulary map unsorted, added tokens after the vocabulary, a
 * BOM) reads the same; every refusal names what the file has (BPE,
 * Unigram, WordLevel, another normalizer or pre-tokenizer, ids with a gap
 * or given twice, a token with a line break, broken JSON with its byte
 * offset). A tokenizer made from a tokenizer.json honours its unk_token,
 * continuing_subword_prefix, max_input_chars_per_word, clean_text and
 * handle_chinese_chars, and wp_open() takes its lower-casing and accents
 * unless the command line gives others (and says so).
 */
#include <unistd.h>

#include "common/tokjson.h"
#include "tests/test.h"
#include "tokenize/wordpiece.h"

static const char VOCAB[] = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nkor\nkör\n##s\nhello\n,\n!\n";

/* t read from text, 0 or -1 with the message in err */
static int rd(TokJson *t, const char *text, Err *err) {
    return tokjson_read(t, text, strlen(text), "tj", err);
}

/* a minimal WordPiece tokenizer.json around the given members */
static const char *file_with(const char *model, const char *norm, const char *pre) {
    static char b[4096];
    snprintf(b, sizeof b,
             "{\"version\": \"1.0\", \"added_tokens\": [], \"normalizer\": %s, \"pre_tokenizer\": "
             "%s, \"model\": %s}",
             norm, pre, model);
    return b;
}

#define WP_MODEL(extra, vocab) "{\"type\": \"WordPiece\"" extra ", \"vocab\": " vocab "}"
#define BERT_NORM                                                                                  \
    "{\"type\": \"BertNormalizer\", \"clean_text\": true, \"handle_chinese_chars\": true, "        \
    "\"strip_accents\": null, \"lowercase\": true}"
#define BERT_PRE "{\"type\": \"BertPreTokenizer\"}"

static void test_round_trip(void) {
    Err err;
    for (int lower = 0; lower <= 1; lower++)
        for (int strip = -1; strip <= 1; strip++) {
            Buf js = {0};
            TokJson t;
            test_cond("writer",
                      tokjson_wordpiece(&js, VOCAB, strlen(VOCAB), lower, strip, &err) == 0);
            test_cond("tokjson_is: the writer's file", tokjson_is(js.data, js.len));
            int rc = tokjson_read(&t, js.data, js.len, "tj", &err);
            test_cond("read back", rc == 0);
            if (rc) {
                printf("  %s\n", err.msg);
                buf_free(&js);
                continue;
            }
            test_mem_eq("... the vocabulary is vocab.txt's", t.vocab.data, t.vocab.len, VOCAB,
                        strlen(VOCAB));
            test_cond("... 11 tokens", t.ntokens == 11);
            test_cond("... lowercase", t.lowercase == lower);
            test_cond("... strip_accents (null: -1)", t.strip_accents == strip);
            test_cond("... clean_text, handle_chinese_chars",
                      t.clean_text && t.handle_chinese_chars);
            test_cond("... ## [UNK] 100",
                      !strcmp(t.prefix, "##") && !strcmp(t.unk, "[UNK]") && t.max_chars == 100);
            tokjson_free(&t);
            buf_free(&js);
        }
}

static void test_tokenizers_layout(void) {
    Err err;
    TokJson t;
    /* members in another order, the vocabulary map unsorted, [MASK] only
     * in added_tokens (after the model's ids), a BOM */
    const char *f =
        "\xEF\xBB\xBF{\n  \"model\": {\"vocab\": {\"b\": 2, \"a\": 1, \"[UNK]\": 0, "
        "\"##c\": 3}, \"max_input_chars_per_word\": 7, \"type\": \"WordPiece\", "
        "\"unk_token\": \"[UNK]\", \"continuing_subword_prefix\": \"@@\"},\n"
        "  \"added_tokens\": [{\"id\": 0, \"content\": \"[UNK]\", \"special\": true}, "
        "{\"id\": 4, \"content\": \"[MASK]\", \"special\": true}],\n"
        "  \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"},\n"
        "  \"normalizer\": {\"lowercase\": false, \"strip_accents\": true, \"type\": "
        "\"BertNormalizer\", \"clean_text\": false, \"handle_chinese_chars\": false}\n}";
    test_cond("tokjson_is with a BOM", tokjson_is(f, strlen(f)));
    int rc = rd(&t, f, &err);
    test_cond("tokenizers' member order reads", rc == 0);
    if (rc) {
        printf("  %s\n", err.msg);
        return;
    }
    test_str_eq("... tokens in id order, the added one after", t.vocab.data,
                "[UNK]\na\nb\n##c\n[MASK]\n");
    test_cond("... switches", !t.lowercase && t.strip_accents == 1 && !t.clean_text &&
                                  !t.handle_chinese_chars && t.max_chars == 7 &&
                                  !strcmp(t.prefix, "@@"));
    tokjson_free(&t);
    test_cond("a normalizer of null",
              rd(&t, file_with(WP_MODEL("", "{\"a\": 0}"), "null", BERT_PRE), &err) == 0 &&
                  !t.lowercase && !t.strip_accents && !t.clean_text && !t.handle_chinese_chars);
    tokjson_free(&t);
    test_cond("vocab.txt is not JSON", !tokjson_is(VOCAB, strlen(VOCAB)));
    test_cond("a vocab.txt whose first token is {", !tokjson_is("{\n}x\n", 5));
}

/* the read of text fails with a message matching want (a substring) */
static void refused(const char *what, const char *text, const char *want) {
    Err err;
    TokJson t;
    int rc = rd(&t, text, &err);
    test_cond(what, rc == -1 && strstr(err.msg, want));
    if (rc == 0 || !strstr(err.msg, want))
        printf("  got: %s\n  want: %s\n", rc ? err.msg : "(read)", want);
    if (!rc) tokjson_free(&t);
}

static void test_refusals(void) {
    refused("BPE",
            file_with("{\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}", BERT_NORM, BERT_PRE),
            "tj: model type BPE: only WordPiece models (BERT's tokenizer) are read");
    refused("Unigram", file_with("{\"type\": \"Unigram\", \"vocab\": []}", "null", BERT_PRE),
            "tj: model type Unigram: only WordPiece");
    refused("WordLevel", file_with("{\"type\": \"WordLevel\", \"vocab\": {}}", BERT_NORM, BERT_PRE),
            "tj: model type WordLevel: only WordPiece");
    refused("no model", "{\"version\": \"1.0\"}", "tj: no model");
    refused("another normalizer",
            file_with(WP_MODEL("", "{\"a\": 0}"), "{\"type\": \"Sequence\", \"normalizers\": []}",
                      BERT_PRE),
            "tj: normalizer Sequence: only BertNormalizer");
    refused("another pre-tokenizer",
            file_with(WP_MODEL("", "{\"a\": 0}"), BERT_NORM, "{\"type\": \"Whitespace\"}"),
            "tj: pre_tokenizer Whitespace: only BertPreTokenizer");
    refused("no pre-tokenizer", file_with(WP_MODEL("", "{\"a\": 0}"), BERT_NORM, "null"),
            "tj: pre_tokenizer null");
    refused("an id gap", file_with(WP_MODEL("", "{\"a\": 0, \"b\": 2}"), BERT_NORM, BERT_PRE),
            "tj: no token has id 1");
    refused("an id twice", file_with(WP_MODEL("", "{\"a\": 0, \"b\": 0}"), BERT_NORM, BERT_PRE),
            "tj: id 0 is given to two tokens");
    refused("a line break", file_with(WP_MODEL("", "{\"a\\nb\": 0}"), BERT_NORM, BERT_PRE),
            "tj: token 0 is empty or holds a line break");
    refused("a negative id", file_with(WP_MODEL("", "{\"a\": -1}"), BERT_NORM, BERT_PRE),
            "id -1 is not a whole number");
    refused("broken JSON, with its byte", "{\"model\": {\"type\" \"WordPiece\"}}",
            "tj: byte 18: ':' expected");
    refused("a boolean that is not",
            file_with(WP_MODEL("", "{\"a\": 0}"),
                      "{\"type\": \"BertNormalizer\", \"lowercase\": 1}", BERT_PRE),
            "tj: normalizer.lowercase: true or false expected");
}

/* the tokens of s, space-separated */
static const char *toks(WordPiece *wp, const char *s) {
    static Buf out;
    WpScratch sc = {0};
    WpIds ids = {0};
    buf_clear(&out);
    wp_encode(wp, &sc, s, strlen(s), &ids);
    for (size_t k = 0; k < ids.n; k++) {
        if (k) buf_putc(&out, ' ');
        buf_puts(&out, wp_id_token(wp, ids.v[k], NULL));
    }
    buf_putc(&out, 0);
    wp_ids_free(&ids);
    wp_scratch_free(&sc);
    return out.data;
}

static void test_tokenizer(void) {
    Err err;
    /* another prefix and unknown token, words of at most 5 characters */
    const char *f =
        file_with(WP_MODEL(", \"unk_token\": \"<unk>\", \"continuing_subword_prefix\": \"@@\", "
                           "\"max_input_chars_per_word\": 5",
                           "{\"<unk>\": 0, \"kor\": 1, \"@@s\": 2, \"##s\": 3, \"東\": 4, "
                           "\"a\x01\": 5, \"東京\": 6}"),
                  BERT_NORM, BERT_PRE);
    WordPiece *wp = wp_create_mem(f, strlen(f), "tj", WP_UNCASED, &err);
    test_cond("a tokenizer from tokenizer.json", wp != NULL);
    if (!wp) {
        printf("  %s\n", err.msg);
        return;
    }
    test_str_eq("continuing_subword_prefix @@, unk_token <unk>", toks(wp, "Kors xyz"),
                "kor @@s <unk>");
    test_str_eq("max_input_chars_per_word 5", toks(wp, "korsss korss"), "<unk> kor @@s @@s");
    test_str_eq("handle_chinese_chars: spaces around 東 and 京", toks(wp, "東京"), "東 <unk>");
    test_str_eq("clean_text: the control character deleted", toks(wp, "a\x01"), "<unk>");
    wp_destroy(wp);
    f = file_with(WP_MODEL("", "{\"[UNK]\": 0, \"東京\": 1, \"a\x01\": 2}"),
                  "{\"type\": \"BertNormalizer\", \"clean_text\": false, \"handle_chinese_chars\": "
                  "false}",
                  BERT_PRE);
    wp = wp_create_mem(f, strlen(f), "tj", WP_UNCASED, &err);
    test_cond("clean_text and handle_chinese_chars false", wp != NULL);
    if (wp) {
        test_str_eq("... 東京 one word", toks(wp, "東京"), "東京");
        test_str_eq("... the control character kept", toks(wp, "a\x01"), "a\x01");
        wp_destroy(wp);
    }
}

static void test_open(void) {
    Err err;
    char path[] = "/tmp/test_tokjson_XXXXXX";
    int fd = mkstemp(path);
    Buf js = {0};
    tokjson_wordpiece(&js, VOCAB, strlen(VOCAB), 1, 0, &err); /* lower-cased, accents kept */
    FILE *f = fdopen(fd, "wb");
    fwrite(js.data, 1, js.len, f);
    fclose(f);
    buf_free(&js);
    Buf note = {0};
    int norm = -1;
    WordPiece *wp = wp_open(path, -1, -1, &note, &norm, &err);
    test_cond("wp_open: the file's normalization", wp && norm == WP_LOWER && !note.len);
    if (wp) test_str_eq("... Kör stays kör", toks(wp, "Kör, Kors!"), "kör , kor ##s !");
    wp_destroy(wp);
    wp = wp_open(path, 0, 1, &note, &norm, &err);
    test_cond("wp_open: the command line's, said", wp && norm == WP_STRIP_ACCENTS);
    test_cond(
        "... in one line",
        note.len && strstr(note.data, "--do-lower-case 0, but ") &&
            strstr(note.data, "has lowercase true; --strip-accents 1, but") &&
            strstr(note.data, "has strip_accents false: the command line's setting is used") &&
            !memchr(note.data, '\n', note.len));
    if (wp) test_str_eq("... Kör becomes [UNK] (cased, stripped: Kor)", toks(wp, "Kör"), "[UNK]");
    wp_destroy(wp);
    buf_free(&note);
    unlink(path);
}

int main(void) {
    test_round_trip();
    test_tokenizers_layout();
    test_refusals();
    test_tokenizer();
    test_open();
    return test_report();
}
