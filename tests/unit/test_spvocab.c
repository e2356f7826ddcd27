/* test_spvocab.c - SentencePiece .vocab parsing and WordPiece conversion.
 *
 * The expected lists were worked out from sent2wordpiece.py's rules (spec
 * section 8) and checked once against the script itself on the same input.
 */
#include <stdlib.h>

#include "tests/test.h"
#include "vocab/spvocab.h"

/* Join the list with '\n' after every token into b. */
static void join(const VocabList *l, Buf *b) {
    buf_clear(b);
    for (size_t i = 0; i < l->n; i++) {
        buf_append(b, vocablist_at(l, i), l->len[i]);
        buf_putc(b, '\n');
    }
}

/* Parse `in`, convert with o, and return the joined output in b (or the
 * error message after "ERR "). */
static void convert(const char *in, size_t len, const VocabConvOpts *o, Buf *b,
                    VocabConvStats *st) {
    VocabList p = {0}, out = {0};
    Err err;
    VocabConvStats dummy;
    buf_clear(b);
    if (spm_vocab_parse(in, len, "t.vocab", &p, NULL, &err)) {
        buf_puts(b, "ERR ");
        buf_puts(b, err.msg);
    } else if (vocab_convert(&p, o, &out, st ? st : &dummy, &err)) {
        buf_puts(b, "ERR ");
        buf_puts(b, err.msg);
    } else {
        join(&out, b);
    }
    vocablist_free(&p);
    vocablist_free(&out);
}

#define CONV(in, o, b, st) convert(in, sizeof in - 1, o, b, st)

static void test_parse(void) {
    VocabList p = {0};
    Err err;
    double *sc = NULL;
    const char in[] = "<unk>\t0\r\n<s>\t0\r</s>\t0\n\xe2\x96\x81t\t-0\na\tb\t-12.5\n\t3";
    test_cond("parse ok", spm_vocab_parse(in, sizeof in - 1, "t.vocab", &p, &sc, &err) == 0);
    test_cond("six pieces (\\r\\n, lone \\r and \\n end lines)", p.n == 6);
    if (p.n == 6) {
        test_str_eq("piece 1", vocablist_at(&p, 1), "<s>");
        test_str_eq("piece 2", vocablist_at(&p, 2), "</s>");
        test_str_eq("piece before the last TAB", vocablist_at(&p, 4), "a\tb");
        test_cond("empty piece", p.len[5] == 0);
        test_cond("line numbers", p.line[0] == 1 && p.line[2] == 3 && p.line[5] == 6);
        test_cond("scores", sc && sc[3] == 0 && sc[4] == -12.5 && sc[5] == 3);
    }
    free(sc);
    vocablist_free(&p);

    struct {
        const char *in, *want;
    } bad[] = {
        {"a\t0\nb\t1e-05\n", "t.vocab:2: not PIECE<TAB>SCORE (SCORE as -?[0-9.]+): \"b\t1e-05\""},
        {"a\t0\nb 0\n", "t.vocab:2: not PIECE<TAB>SCORE (SCORE as -?[0-9.]+): \"b 0\""},
        {"a\t0\nb\t-\n", "t.vocab:2: not PIECE<TAB>SCORE (SCORE as -?[0-9.]+): \"b\t-\""},
        {"a\t0\nb\t0 \n", "t.vocab:2: not PIECE<TAB>SCORE (SCORE as -?[0-9.]+): \"b\t0 \""},
        {"a\t0\n\n", "t.vocab:2: not PIECE<TAB>SCORE (SCORE as -?[0-9.]+): \"\""},
        {"a\t0\nb\t1\r\n\ra\t2\n", "t.vocab:3: not PIECE<TAB>SCORE (SCORE as -?[0-9.]+): \"\""},
        {"a\t0\nb\t1\r\na\t2\n", "t.vocab:3: duplicate piece \"a\" (first on line 1)"},
        {"a\t0\n\xff\t1\n", "t.vocab:2: invalid UTF-8"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        VocabList q = {0};
        int rc = spm_vocab_parse(bad[i].in, strlen(bad[i].in), "t.vocab", &q, NULL, &err);
        test_cond("malformed input rejected", rc == -1);
        if (rc == -1) test_str_eq("error names file:line", err.msg, bad[i].want);
        vocablist_free(&q);
    }
    VocabList e = {0};
    test_cond("empty input: no pieces",
              spm_vocab_parse("", 0, "t", &e, NULL, &err) == 0 && e.n == 0);
    vocablist_free(&e);
    test_cond("score '.' accepted (the regex allows it)",
              spm_vocab_parse("a\t.", 3, "t", &e, NULL, &err) == 0);
    vocablist_free(&e);
}

static const char QUIRKS[] = "<unk>\t0\n<s>\t0\n</s>\t0\n"
                             "\xe2\x96\x81\t-1\n"               /* bare boundary: dropped */
                             "\t-2\n"                           /* empty piece: "##" */
                             "\xe2\x96\x81 \t-3\n"              /* boundary + space: dropped */
                             "\xe2\x96\x81\xe3\x80\x80\t-3.5\n" /* boundary + U+3000: dropped */
                             "\xe2\x96\x81##a\t-4\n"
                             "a\t-5\n"
                             "\xe2\x96\x81[PAD]\t-6\n"
                             "\xe2\x96\x81\xe2\x96\x81x\t-7\n" /* one boundary removed */
                             "\xc3\xa9\t-8\n";

static void test_convert(void) {
    Buf b = {0};
    VocabConvOpts o = VOCABCONV_DEFAULTS;
    VocabConvStats st;

    o.no_special = 1;
    CONV(QUIRKS, &o, &b, &st);
    test_str_eq("quirks, -n", b.data, "##\n##a\n##a\n[PAD]\n\xe2\x96\x81x\n##\xc3\xa9\n");
    test_cond("stats", st.read == 12 && st.filtered == 9 && st.converted == 6 && st.total == 6);
    test_cond("duplicate counted", st.duplicates == 1 && strcmp(st.first_duplicate, "##a") == 0);

    o.keep_special = 1;
    CONV(QUIRKS, &o, &b, &st);
    test_cond("-n -k keeps <unk> <s> </s> as continuation tokens",
              strncmp(b.data, "##<unk>\n##<s>\n##</s>\n##\n", 24) == 0 && st.total == 9);

    VocabConvOpts d = VOCABCONV_DEFAULTS;
    CONV(QUIRKS, &d, &b, &st);
    test_cond("defaults: 105 specials + 6", st.total == 111);
    test_cond("defaults: [PAD] first, [unused0] second",
              strncmp(b.data, "[PAD]\n[unused0]\n[unused1]\n", 26) == 0);
    test_cond("defaults: [UNK] [CLS] [SEP] [MASK] after [unused99]",
              strstr(b.data, "\n[unused98]\n[unused99]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n##\n##a\n") !=
                  NULL);
    test_cond("defaults: [PAD] twice counts", st.duplicates == 2);

    VocabConvOpts u = VOCABCONV_DEFAULTS;
    u.unused = 2;
    CONV("\xe2\x96\x81the\t-0\nk\t-1\n", &u, &b, &st);
    test_str_eq("-u 2", b.data,
                "[PAD]\n[unused0]\n[unused1]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\n##k\n");
    u.unused = 0;
    CONV("", &u, &b, &st);
    test_str_eq("-u 0, empty input", b.data, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n");

    VocabConvOpts c = VOCABCONV_DEFAULTS;
    c.unused = 1;
    c.add_chars = 1;
    CONV("\xe2\x96\x81"
         "ab\t-0\n\xc3\xa9\t-1\nb\t-2\n",
         &c, &b, &st);
    test_str_eq("-c: characters in code-point order, those already tokens skipped", b.data,
                "[PAD]\n[unused0]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nab\n##\xc3\xa9\n##b\n"
                "0\nA\nC\nD\nE\nK\nL\nM\nN\nP\nS\nU\n[\n]\na\nb\nd\ne\nn\ns\nu\n\xc3\xa9\n");
    test_cond("-c stats", st.extended == 9 && st.with_chars == 31);

    VocabConvOpts s = VOCABCONV_DEFAULTS;
    s.unused = 1;
    s.size = 8;
    CONV("\xe2\x96\x81the\t-0\nk\t-1\nq\t-2\nz\t-3\n", &s, &b, &st);
    test_str_eq("--size drops the last tokens", b.data,
                "[PAD]\n[unused0]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\n##k\n");
    test_cond("--size drop stats", st.dropped == 2 && st.padded == 0 &&
                                       strcmp(st.first_dropped, "##q") == 0 &&
                                       st.first_dropped_line == 3);
    s.size = 10;
    CONV("\xe2\x96\x81the\t-0\n", &s, &b, &st);
    test_str_eq(
        "--size pads with [unusedK] counting on from -u", b.data,
        "[PAD]\n[unused0]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\n[unused1]\n[unused2]\n[unused3]\n");
    test_cond("--size pad stats", st.padded == 3 && st.dropped == 0 && st.total == 10);
    s.no_special = 1;
    s.size = 2;
    CONV("\xe2\x96\x81the\t-0\n", &s, &b, &st);
    test_str_eq("--size with -n pads from [unused0]", b.data, "the\n[unused0]\n");
    s.size = 0;
    CONV("\xe2\x96\x81the\t-0\n", &s, &b, &st);
    test_cond("--size 0", b.len == 0 && st.dropped == 1);

    VocabConvOpts neg = VOCABCONV_DEFAULTS;
    neg.unused = -1;
    CONV("a\t0\n", &neg, &b, &st);
    test_cond("negative unused rejected", strncmp(b.data, "ERR ", 4) == 0);
    buf_free(&b);
}

/* The size rule of spec 8.2: lines = pieces - 3 - (1 if "▁" present) + 105. */
static void test_size_rule(void) {
    Buf in = {0}, b = {0};
    buf_puts(&in, "<unk>\t0\n<s>\t0\n</s>\t0\n");
    for (int i = 0; i < 500; i++) {
        char line[64];
        snprintf(line, sizeof line, "%sp%d\t-%d\n", i % 3 ? "" : "\xe2\x96\x81", i, i);
        buf_puts(&in, line);
    }
    buf_puts(&in, "\xe2\x96\x81\t-500\n");
    VocabConvOpts o = VOCABCONV_DEFAULTS;
    VocabConvStats st;
    convert(in.data, in.len, &o, &b, &st);
    test_cond("504 pieces with a bare boundary give 504 - 3 - 1 + 105 lines", st.total == 605);
    test_cond("no duplicates", st.duplicates == 0);
    buf_free(&in);
    buf_free(&b);
}

int main(void) {
    test_parse();
    test_convert();
    test_size_rule();
    return test_report();
}
