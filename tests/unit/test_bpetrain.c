/* test_bpetrain.c - SentencePiece-compatible BPE training (bpetrain.h).
 *
 * Always: merges on small word sets worked out by hand (and checked once
 * against spm_train 0.2.3 with --normalization_rule_name=identity), the
 * tie rules, repeated characters, the alphabet cut by coverage and the
 * U+2585 stand-in, the piece validity rules (U+2581 only first, one script,
 * digits, length, U+2585), spm_train's script table, errors, the same
 * pieces for 1 and 4 threads and for stdin-like and file input, and the
 * fast normalization against textnorm_normalize() with the identity rule and
 * the built-in nmt_nfkc table. When a Python with sentencepiece is found:
 * the same comparison with the table of a model it trains. Without it that
 * check prints that it did not run and counts nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/test.h"
#include "vocab/bpetrain.h"
#include "vocab/charsmap.h"
#include "common/io.h"
#include "common/rng.h"
#include "vocab/spmodel.h"
#include "vocab/textnorm.h"
#include "common/uniprop.h"

#define WS "\xe2\x96\x81"
#define UNK "\xe2\x96\x85"

typedef struct Word {
    const char *w;
    uint64_t n;
} Word;

/* Train on words (as they are after normalization) with the identity
 * rule; the pieces joined by spaces into out, or the error message. */
static int g_maxlen = 16;

static int train_words(const Word *words, int nw, int vocab, float coverage, Buf *out) {
    BpeOpts o = BPE_OPTS_DEFAULT;
    o.max_piece_length = g_maxlen;
    o.vocab_size = vocab;
    o.character_coverage = coverage;
    BpeTrainer *t = bpe_create(&o);
    for (int i = 0; i < nw; i++)
        bpe_add_word(t, words[i].w, strlen(words[i].w), words[i].n);
    Err err;
    buf_clear(out);
    int rc = bpe_train(t, &err);
    if (rc) {
        buf_puts(out, err.msg);
    } else {
        for (size_t i = 0; i < bpe_npieces(t); i++) {
            size_t len;
            float score;
            const char *p = bpe_piece(t, i, &len, &score);
            if (i) buf_putc(out, ' ');
            buf_append(out, p, len);
            if (score != -(float)i) buf_puts(out, "(bad score)");
        }
    }
    bpe_destroy(t);
    return rc;
}

static void test_merges(void) {
    Buf b = {0};
    /* ab x3, abc x2, bc x1: "ab" and "▁a" tie at 5, "ab" has the smaller
     * bytes; then ▁ab 5, ▁abc 2, then bc and ▁b tie at 1 */
    Word w1[] = {{WS "ab", 3}, {WS "abc", 2}, {WS "bc", 1}};
    test_cond("train", train_words(w1, 3, 12, 1.0f, &b) == 0);
    test_str_eq("merge order, ties by bytes, alphabet by count then code point", b.data,
                "ab " WS "ab " WS "abc bc " WS "bc b " WS " a c");

    /* fewer code points beat smaller bytes: ▁x (2) before ▁ab (3) */
    Word w2[] = {{WS "ab", 2}, {WS "x", 2}};
    test_cond("train", train_words(w2, 2, 10, 1.0f, &b) == 0);
    test_str_eq("fewer code points first", b.data, "ab " WS "x " WS "ab " WS " a b x");

    /* "aa" occurs 3 times in "▁aaaa" (overlaps counted, as in spm_train
     * since 0.1.99); merged left to right: ▁ aa aa */
    Word w3[] = {{WS "aaaa", 1}};
    test_cond("train", train_words(w3, 1, 8, 1.0f, &b) == 0);
    test_str_eq("repeated characters", b.data, "aa " WS "aa " WS "aaaa a " WS);

    /* word counts weigh pairs; the same word added twice adds up */
    Word w4[] = {{WS "xy", 1}, {WS "zq", 2}, {WS "xy", 2}};
    test_cond("train", train_words(w4, 3, 10, 1.0f, &b) == 0);
    test_str_eq("counts add up", b.data, "xy " WS "xy " WS " x y q z");

    /* invalid pairs are never candidates: a1 (Latin + digit), b, (Latin +
     * punctuation); what is left runs out, then pairs of frequency 0 are
     * taken as spm_train does (here "ab" after ▁a took its a) */
    Word w5[] = {{WS "a1", 3}, {WS "ab,", 2}};
    test_cond("train", train_words(w5, 2, 11, 1.0f, &b) == 0);
    test_str_eq("digits and punctuation do not join letters", b.data,
                WS "a " WS "ab ab a " WS " 1 , b");
    test_cond("too many pieces for the text", train_words(w5, 2, 12, 1.0f, &b) == -1);
    test_cond("... says the maximum", strstr(b.data, "at most 11 pieces") != NULL);

    /* --max-piece-length 4: pieces grow by pairs up to 4 characters */
    g_maxlen = 4;
    Word w6[] = {{WS "abcdefghijklmnopqrstuvwxyz", 50}};
    test_cond("train long word", train_words(w6, 1, 3 + 27 + 20, 1.0f, &b) == 0);
    g_maxlen = 16;
    int longest = 0;
    for (char *p = b.data, *e; p && *p; p = e ? e + 1 : NULL) {
        e = strchr(p, ' ');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int chars = 0;
        for (size_t i = 0; i < n; i++)
            chars += ((unsigned char)p[i] & 0xC0) != 0x80;
        if (chars > longest) longest = chars;
    }
    test_cond("the longest piece has max-piece-length characters", longest == 4);
    test_cond("pieces of two first, in byte order",
              strncmp(b.data, "ab cd ef gh ij kl mn op qr st uv wx yz ", 39) == 0);
    buf_free(&b);
}

static void test_alphabet(void) {
    Buf b = {0};
    /* a 50, b 30, c 15, ▁ 8, d 4, e 1: 108 characters. The share covered
     * before each: a 0, b .463, c .741, ▁ .880, d .954, e .991 */
    Word w[] = {{WS "aaaaaaaaaa", 5}, {WS "bbbbbbbbbb", 3}, {"ccccc", 3}, {"dd", 2}, {"e", 1}};
    test_cond("train", train_words(w, 5, 3 + 4 + 1, 0.95f, &b) == 0);
    test_str_eq("coverage 0.95: a b c ▁; d and e become U+2585", b.data, "aa a b c " WS);
    test_cond("train", train_words(w, 5, 3 + 5 + 1, 0.96f, &b) == 0);
    test_str_eq("coverage 0.96: d is in", b.data, "aa a b c " WS " d");
    test_cond("train", train_words(w, 5, 3 + 4, 0.96f, &b) == -1);
    test_cond("vocabulary too small: the minimum is named", strstr(b.data, "at least 8") != NULL);
    test_cond("train", train_words(w, 5, 3 + 6, 1.0f, &b) == 0);
    test_cond("coverage 1: every character", strstr(b.data, " d e") != NULL);

    /* words that become equal after the replacement are counted together:
     * ▁ad and ▁ae give ▁a▅ (count 2) */
    Word w2[] = {{WS "ab", 3}, {WS "ac", 3}, {WS "ad", 1}, {WS "ae", 1}};
    BpeOpts o = BPE_OPTS_DEFAULT;
    o.vocab_size = 3 + 4 + 3;
    o.character_coverage = 0.8f;
    BpeTrainer *t = bpe_create(&o);
    for (int i = 0; i < 4; i++)
        bpe_add_word(t, w2[i].w, strlen(w2[i].w), w2[i].n);
    Err err;
    test_cond("train with replaced characters", bpe_train(t, &err) == 0);
    test_cond("distinct words after replacement", bpe_stats(t)->distinct_words == 3);
    test_cond("alphabet", bpe_stats(t)->alphabet == 4);
    bpe_destroy(t);

    /* no text */
    t = bpe_create(&o);
    bpe_add_line(t, "", 0);
    bpe_add_line(t, "   ", 3);
    test_cond("no text is an error", bpe_train(t, &err) == -1 && strstr(err.msg, "no text"));
    bpe_destroy(t);
    buf_free(&b);
}

static void test_lines(void) {
    BpeOpts o = BPE_OPTS_DEFAULT;
    o.vocab_size = 3 + 6;
    o.max_sentence_length = 20;
    BpeTrainer *t = bpe_create(&o);
    const char *lines[] = {"",       "ab ab",    "a " UNK " b", "abababababababababababab",
                           "  ab  ", "<s>ab</s>"};
    for (int i = 0; i < 6; i++)
        bpe_add_line(t, lines[i], strlen(lines[i]));
    const BpeStats *st = bpe_stats(t);
    test_cond("lines", st->lines == 6);
    test_cond("empty lines skipped", st->empty == 1);
    test_cond("long lines skipped", st->too_long == 1);
    test_cond("lines with U+2585 skipped", st->reserved == 1);
    test_cond("sentences", st->sentences == 3);
    Err err;
    test_cond("train", bpe_train(t, &err) == 0);
    /* words: ▁ab x3 and ▁\tab\t (the meta pieces become a TAB, which is
     * never a piece, so U+2585) */
    test_cond("words", st->words == 4);
    test_cond("alphabet: a b ▁ (not the TAB)", st->alphabet == 3);
    size_t len;
    const char *p = bpe_piece(t, 0, &len, NULL);
    test_mem_eq("first piece", p, len, "ab", 2);
    int tab = 0;
    for (size_t i = 0; i < bpe_npieces(t); i++) {
        p = bpe_piece(t, i, &len, NULL);
        tab |= memchr(p, '\t', len) != NULL || (len == 3 && memcmp(p, UNK, 3) == 0);
    }
    test_cond("no TAB or U+2585 piece", !tab);
    bpe_destroy(t);
}

static void test_validity(void) {
    test_cond("▁ first", bpe_valid_piece(WS "ab", 5, 16));
    test_cond("▁ alone", bpe_valid_piece(WS, 3, 16));
    test_cond("▁ inside", !bpe_valid_piece("a" WS "b", 5, 16));
    test_cond("▁ last", !bpe_valid_piece("ab" WS, 5, 16));
    test_cond("▁▁", !bpe_valid_piece(WS WS, 6, 16));
    test_cond("Latin + Cyrillic", !bpe_valid_piece("a\xd0\xb6", 3, 16));
    test_cond("Cyrillic", bpe_valid_piece("\xd0\xb6\xd0\xb8", 4, 16));
    test_cond("Han", bpe_valid_piece("\xe6\x97\xa5\xe6\x9c\xac", 6, 16));
    test_cond("Han + Hiragana", bpe_valid_piece("\xe6\xbc\xa2\xe3\x81\x8b", 6, 16));
    test_cond("Katakana + U+30FC", bpe_valid_piece("\xe3\x82\xab\xe3\x83\xbc", 6, 16));
    test_cond("Latin + Han", !bpe_valid_piece("a\xe6\x97\xa5", 4, 16));
    test_cond("letter + digit", !bpe_valid_piece("a1", 2, 16));
    test_cond("digits", bpe_valid_piece("12", 2, 16));
    test_cond("digit + punctuation (both Common)", bpe_valid_piece("1,", 2, 16));
    test_cond("letter + punctuation", !bpe_valid_piece("a,", 2, 16));
    test_cond("▁ + digit", bpe_valid_piece(WS "1", 4, 16));
    test_cond("combining mark takes the script before it", bpe_valid_piece("e\xcc\x81t", 4, 16));
    test_cond("combining mark first", bpe_valid_piece("\xcc\x81"
                                                      "a",
                                                      3, 16));
    test_cond("Greek + Latin", !bpe_valid_piece("\xce\xb1"
                                                "a",
                                                3, 16));
    test_cond("16 characters", bpe_valid_piece("abcdefghijklmnop", 16, 16));
    test_cond("17 characters", !bpe_valid_piece("abcdefghijklmnopq", 17, 16));
    test_cond("max length 2", !bpe_valid_piece("abc", 3, 2));
    test_cond("U+2585", !bpe_valid_piece("a" UNK, 4, 16));
    test_cond("TAB", !bpe_valid_piece("a\t", 2, 16));

    /* spm_train's script table: Unicode 9.0, with its own gaps */
    test_cond("Latin", bpe_script('a') == UNI_SC_LATIN);
    test_cond("Hiragana as Han", bpe_script(0x3042) == UNI_SC_HAN);
    test_cond("U+30FC as Han", bpe_script(0x30FC) == UNI_SC_HAN);
    test_cond("Inherited", bpe_script(0x0301) == BPE_SCRIPT_ANY);
    test_cond("U+0589 Common (Armenian since Unicode 12)", bpe_script(0x0589) == UNI_SC_COMMON);
    test_cond("U+0953 Devanagari (Inherited later)", bpe_script(0x0953) == UNI_SC_DEVANAGARI);
    test_cond("Egyptian hieroglyphs missing from the table", bpe_script(0x13000) == UNI_SC_COMMON);
    test_cond("a Unicode 10 Han character is Common", bpe_script(0x9FD6) == UNI_SC_COMMON);
    test_cond("a Unicode 11 script is Common", bpe_script(0x10D00) == UNI_SC_COMMON);
    test_cond("unassigned is Common", bpe_script(0x0378) == UNI_SC_COMMON);
    test_cond("ICU: Adlam (9.0) has its script",
              uni_script(0x1E900) != UNI_SC_COMMON && bpe_script(0x1E900) == uni_script(0x1E900));
    test_cond("uni_age",
              uni_age('a') == 0x0101 && uni_age(0x1E900) == 0x0900 && uni_age(0x0378) == 0);
}

/* ---- real-size input: threads, files, sampling ---- */

static const char *syll[] = {"ka",
                             "le",
                             "mi",
                             "no",
                             "sz",
                             "\xc3\xa1",
                             "\xc5\x91",
                             "gy",
                             "t\xc3\xa9",
                             "ri",
                             "\xd0\xb4\xd0\xb0",
                             "\xe6\x97\xa5",
                             "th",
                             "er",
                             "ing",
                             "qu"};

/* A corpus of n pseudo-random lines (seeded) written to path. */
static int write_corpus(const char *path, int n, uint64_t seed) {
    FILE *fp = fopen(path, "wb");
    if (!fp) return -1;
    Rng r;
    rng_seed(&r, seed);
    for (int i = 0; i < n; i++) {
        int words = 1 + (int)rng_below(&r, 12);
        for (int w = 0; w < words; w++) {
            if (w) fputc(rng_below(&r, 20) ? ' ' : '\t', fp);
            int sy = 1 + (int)rng_below(&r, 4);
            /* Zipf-like: small indexes are frequent */
            for (int k = 0; k < sy; k++)
                fputs(syll[rng_below(&r, 1 + rng_below(&r, 16))], fp);
            if (!rng_below(&r, 9)) fprintf(fp, "%d", (int)rng_below(&r, 3000));
            if (!rng_below(&r, 11)) fputc(",.;:!?"[rng_below(&r, 6)], fp);
        }
        fputc('\n', fp);
    }
    return fclose(fp);
}

static int train_file(const char *path, int threads, uint64_t nsent, int shuffle, Buf *out) {
    BpeOpts o = BPE_OPTS_DEFAULT;
    o.vocab_size = 1200;
    o.nthreads = threads;
    o.input_sentence_size = nsent;
    o.shuffle = shuffle;
    BpeTrainer *t = bpe_create(&o);
    char *in[] = {(char *)path};
    Err err;
    int rc = bpe_read(t, in, 1, &err);
    if (!rc) rc = bpe_train(t, &err);
    buf_clear(out);
    if (!rc) {
        SpModel m;
        spmodel_init(&m);
        bpe_model(t, &m);
        spmodel_write_vocab(&m, out);
        spmodel_free(&m);
        if (nsent) {
            char line[64];
            snprintf(line, sizeof line, "sentences %llu\n",
                     (unsigned long long)bpe_stats(t)->sentences);
            buf_puts(out, line);
        }
    } else {
        printf("  %s\n", err.msg);
    }
    bpe_destroy(t);
    return rc;
}

static void test_threads_and_files(void) {
    char dir[] = "/tmp/test_bpetrain.XXXXXX";
    if (!mkdtemp(dir)) {
        test_cond("mkdtemp", 0);
        return;
    }
    char path[256], cmd[600];
    snprintf(path, sizeof path, "%s/corpus.txt", dir);
    test_cond("write corpus", write_corpus(path, 30000, 7) == 0);
    Buf a = {0}, b = {0}, c = {0};
    test_cond("1 thread", train_file(path, 1, 0, 1, &a) == 0);
    test_cond("4 threads", train_file(path, 4, 0, 1, &b) == 0);
    test_cond("1200 lines in the .vocab", a.len > 0 && a.data[a.len - 1] == '\n');
    test_mem_eq("the same pieces for 1 and 4 threads", a.data, a.len, b.data, b.len);

    /* sampling: the first N lines, or a random N from the file (two
     * passes) and from a pipe (kept in memory): the same sample */
    test_cond("first 5000", train_file(path, 2, 5000, 0, &a) == 0);
    test_cond("5000 sentences", strstr(a.data, "sentences 5000\n") != NULL);
    snprintf(cmd, sizeof cmd, "head -5000 '%s' > '%s/head.txt'", path, dir);
    test_cond("head", system(cmd) == 0);
    snprintf(path, sizeof path, "%s/head.txt", dir);
    test_cond("train on head", train_file(path, 1, 0, 1, &b) == 0);
    test_cond("--no-shuffle takes the first N lines",
              a.len > b.len && memcmp(a.data, b.data, b.len) == 0);
    snprintf(path, sizeof path, "%s/corpus.txt", dir);
    test_cond("sample 5000 of a file", train_file(path, 2, 5000, 1, &a) == 0);
    test_cond("sampled 5000", strstr(a.data, "sentences 5000\n") != NULL);
    test_cond("a sample is not the first lines",
              a.len < b.len || memcmp(a.data, b.data, b.len) != 0);
    snprintf(cmd, sizeof cmd, "mkfifo '%s/fifo' && (cat '%s' > '%s/fifo' &)", dir, path, dir);
    test_cond("fifo", system(cmd) == 0);
    snprintf(path, sizeof path, "%s/fifo", dir);
    test_cond("sample 5000 of a pipe", train_file(path, 2, 5000, 1, &c) == 0);
    test_mem_eq("file and pipe give the same sample", a.data, a.len, c.data, c.len);
    snprintf(path, sizeof path, "%s/corpus.txt", dir);
    test_cond("N above the line count: no sampling", train_file(path, 2, 1000000, 1, &b) == 0);
    test_cond("all 30000 used", strstr(b.data, "sentences 30000\n") != NULL);

    BpeOpts o = BPE_OPTS_DEFAULT;
    BpeTrainer *t = bpe_create(&o);
    char *missing[] = {"/nonexistent/corpus.txt"};
    Err err;
    test_cond("missing input: -2",
              bpe_read(t, missing, 1, &err) == -2 && strstr(err.msg, "No such file"));
    char *adir[] = {dir};
    test_cond("a directory: -2", bpe_read(t, adir, 1, &err) == -2);
    bpe_destroy(t);

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) printf("could not remove %s\n", dir);
    buf_free(&a), buf_free(&b), buf_free(&c);
}

/* ---- the fast normalization equals textnorm_normalize() ---- */

static int compare_norm(const TextNorm *sn, const char *what) {
    BpeOpts o = BPE_OPTS_DEFAULT;
    o.norm = sn;
    BpeTrainer *t = bpe_create(&o);
    static const char *cases[] = {
        "",
        " ",
        "   ",
        "a",
        " a",
        "a ",
        "  hello   world  ",
        "tab\there",
        "cr\r\nlf",
        "\x01\x02x\x7f",
        "e\xcc\x81t\xc3\xa9",
        "A\xcc\x8a",
        "\xef\xbc\xa1\xef\xbc\xa2 full width",
        "\xef\xac\x81nance",
        "x\xe2\x80\x8by",
        "no\xc2\xa0"
        "break",
        "\xe3\x80\x80ideographic",
        "\xff\xfe bad bytes \xc3",
        "(c) 1/2 ... --",
        "<s> x </s>",
        "\xe2\x91\xa0 \xe2\x84\xa2",
        "a \xcc\x81",
        "\xcc\x81\xcc\x81",
        "trailing\xe2\x80\x83",
        "k\xc3\xb6zt\xc3\xa1rsas\xc3\xa1g",
        "\xd0\x9c\xd0\xbe\xd1\x81\xd0\xba\xd0\xb2\xd0\xb0",
    };
    int bad = 0;
    Buf x = {0}, y = {0};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        buf_clear(&x), buf_clear(&y);
        bpe_normalize(t, cases[i], strlen(cases[i]), &x);
        textnorm_normalize(sn, cases[i], strlen(cases[i]), &y);
        if (x.len != y.len || (x.len && memcmp(x.data, y.data, x.len))) {
            printf("  %s: case %zu differs: [%s] vs [%s]\n", what, i, x.data ? x.data : "",
                   y.data ? y.data : "");
            bad++;
        }
    }
    /* random strings over a mixed alphabet */
    static const char *atoms[] = {
        "a",        " ",         "  ",           "\t",       "b",
        "\xc3\xa9", "e\xcc\x81", "\xef\xbc\xa1", "1",        "\xe2\x80\x8b",
        "\x01",     "\xc2\xa0",  "\xe6\x97\xa5", "\xcc\x81", ".",
        "\xff"};
    Rng r;
    rng_seed(&r, 99);
    for (int i = 0; i < 20000; i++) {
        char s[128];
        size_t n = 0;
        int k = (int)rng_below(&r, 12);
        for (int j = 0; j < k; j++) {
            const char *a = atoms[rng_below(&r, 16)];
            size_t l = strlen(a);
            memcpy(s + n, a, l);
            n += l;
        }
        buf_clear(&x), buf_clear(&y);
        bpe_normalize(t, s, n, &x);
        textnorm_normalize(sn, s, n, &y);
        if (x.len != y.len || (x.len && memcmp(x.data, y.data, x.len))) bad++;
    }
    buf_free(&x), buf_free(&y);
    bpe_destroy(t);
    return bad;
}

static void test_normalize(void) {
    Err err;
    TextNorm *id = textnorm_new(NULL, 0, NULL, &err);
    test_cond("identity rule: fast normalization == textnorm_normalize",
              compare_norm(id, "identity") == 0);
    textnorm_free(id);
    Buf table = {0};
    test_cond("built-in nmt_nfkc table", charsmap_nmt_nfkc(&table, &err) == 0);
    TextNorm *nfkc = textnorm_new(table.data, table.len, NULL, &err);
    test_cond("built-in table loads", nfkc != NULL);
    if (nfkc) {
        test_cond("built-in nmt_nfkc: fast normalization == textnorm_normalize",
                  compare_norm(nfkc, "built-in") == 0);
        test_cond("built-in nmt_nfkc leaves letters and digits alone",
                  !textnorm_key_continues_ascii(nfkc, 'a') &&
                      !textnorm_key_continues_ascii(nfkc, '7'));
    }
    textnorm_free(nfkc);
    buf_free(&table);

    char pybuf[1024];
    const char *py = test_find_python("import sentencepiece", pybuf, sizeof pybuf);
    if (!py) {
        printf("test_bpetrain: no Python with the sentencepiece package: the nmt_nfkc "
               "normalization check did not run\n");
        return;
    }
    char dir[] = "/tmp/test_bpetrain.XXXXXX";
    if (!mkdtemp(dir)) return;
    char cmd[2048], path[300];
    snprintf(path, sizeof path, "%s/c.txt", dir);
    write_corpus(path, 2000, 3);
    snprintf(
        cmd, sizeof cmd,
        "cd '%s' && '%s' -c \"import sentencepiece as s; "
        "s.SentencePieceTrainer.Train('--input=c.txt "
        "--model_prefix=m --vocab_size=300 --model_type=bpe --minloglevel=2')\" >/dev/null 2>&1",
        dir, py);
    int rc = system(cmd);
    test_cond("spm_train for an nmt_nfkc table", rc == 0);
    snprintf(path, sizeof path, "%s/m.model", dir);
    Buf data = {0};
    SpModel m;
    spmodel_init(&m);
    if (rc == 0 && read_file(path, &data, &err) == 0 &&
        spmodel_read(&m, data.data, data.len, &err) == 0) {
        const SpField *cf = spmsg_get(&m.normalizer, SPN_PRECOMPILED_CHARSMAP);
        TextNorm *sn =
            cf ? textnorm_new(m.normalizer.data.data + cf->off, cf->len, NULL, &err) : NULL;
        test_cond("nmt_nfkc table loads", sn != NULL);
        if (sn) {
            test_cond("nmt_nfkc: fast normalization == textnorm_normalize",
                      compare_norm(sn, "nmt_nfkc") == 0);
            test_cond("nmt_nfkc leaves 'a' alone and has no ASCII pair keys from it",
                      !textnorm_key_continues_ascii(sn, 'a'));
        }
        textnorm_free(sn);
    } else {
        test_cond("read the model", 0);
    }
    spmodel_free(&m);
    buf_free(&data);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) printf("could not remove %s\n", dir);
}

int main(void) {
    test_merges();
    test_alphabet();
    test_lines();
    test_validity();
    test_threads_and_files();
    test_normalize();
    return test_report();
}
