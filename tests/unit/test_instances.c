/* test_instances.c - masked-LM / next-sentence instance generation.
 *
 * Exact vectors: the pipeline specification's 16.2 example and 16.4
 * num_to_predict values, and two more outputs of NVIDIA's
 * create_pretraining_data.py (DeepLearningExamples 4733603, run under
 * CPython 3.11 and read back from its HDF5 file): one with \r\n and lone \r
 * line ends, blank lines made of other whitespace, a line that tokenizes to
 * nothing, duplicate vocabulary lines, keep-original and random-word
 * replacements; one with a single document (NVIDIA's same-document rule).
 * Then the reading rules, errors, and the invariants of every instance of a
 * generated corpus in each mode (default, whole-word, no-mask, no-nsp),
 * determinism and independence of the thread count; the same rows from a
 * set spilled to temporary files as from one held in memory.
 */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/test.h"
#include "hdf5gen/instances.h"
#include "common/buf.h"
#include "common/mlm.h"
#include "common/rng.h"
#include "tokenize/wordpiece.h"

/* All tokens of d as int32 ids (malloc'ed). */
static int32_t *docs_ids(const InstDocs *d) {
    int32_t *v = malloc((d->ntok ? d->ntok : 1) * sizeof *v);
    for (size_t i = 0; i < d->ntok; i++)
        v[i] = inst_docs_id(d, i);
    return v;
}

static char dir[] = "/tmp/test_instances.XXXXXX";

/* Write data to dir/name; returns the path (static buffer per call slot). */
static const char *put(const char *name, const char *data, size_t len) {
    static char paths[8][600];
    static int slot;
    char *p = paths[slot++ % 8];
    snprintf(p, 600, "%s/%s", dir, name);
    FILE *fp = fopen(p, "wb");
    if (!fp || fwrite(data, 1, len, fp) != len || fclose(fp)) {
        printf("cannot write %s\n", p);
        exit(1);
    }
    return p;
}

/* A row of s with its contents (inst_row into buffers of this struct). */
typedef struct Row {
    size_t len, seg0, nmask;
    int next_sentence_label;
    int32_t input_ids[4096], positions[4096], label_ids[4096];
} Row;

static void get_row(const InstSet *s, size_t r, Row *w) {
    InstView v;
    inst_row(s, r, &v, w->input_ids, w->positions, w->label_ids);
    w->len = v.len, w->seg0 = v.seg0, w->nmask = v.nmask,
    w->next_sentence_label = v.next_sentence_label;
}

/* The rows of s in inst_dump's text format. */
static void format_rows(const InstSet *s, Buf *out) {
    char num[16];
    static Row v;
    for (size_t r = 0; r < s->n; r++) {
        get_row(s, r, &v);
        for (size_t i = 0; i < v.len; i++) {
            int n = snprintf(num, sizeof num, i ? " %d" : "%d", (int)v.input_ids[i]);
            buf_append(out, num, (size_t)n);
        }
        buf_putc(out, '\t');
        for (size_t i = 0; i < v.len; i++)
            buf_putc(out, i < v.seg0 ? '0' : '1');
        buf_putc(out, '\t');
        for (size_t i = 0; i < v.nmask; i++) {
            int n = snprintf(num, sizeof num, i ? " %d" : "%d", (int)v.positions[i]);
            buf_append(out, num, (size_t)n);
        }
        buf_putc(out, '\t');
        for (size_t i = 0; i < v.nmask; i++) {
            int n = snprintf(num, sizeof num, i ? " %d" : "%d", (int)v.label_ids[i]);
            buf_append(out, num, (size_t)n);
        }
        int n = snprintf(num, sizeof num, "\t%d\n", v.next_sentence_label);
        buf_append(out, num, (size_t)n);
    }
}

/* Generate from `text` with vocabulary `vocab` and compare with `want`. */
static void check_vector(const char *name, const char *vocab, const char *text, size_t textlen,
                         const InstOpts *o, const char *want) {
    Err err;
    WordPiece *wp = wp_create_mem(vocab, strlen(vocab), "vocab", WP_UNCASED, &err);
    InstSet s;
    Buf got = {0};
    int rc = wp ? inst_generate(o, wp, put("vector.txt", text, textlen), &s, &err) : -1;
    test_cond(name, rc == 0);
    if (rc == 0) {
        format_rows(&s, &got);
        test_mem_eq(name, got.data, got.len, want, strlen(want));
        inst_set_free(&s);
    } else {
        printf("  %s\n", err.msg);
    }
    buf_free(&got);
    wp_destroy(wp);
}

static const char spec_vocab[] =
    "[PAD]\n[unused0]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\ncat\nsat\non\nmat\na\ndog\nran\nfast\n.\n,"
    "\nit\nwas\n"
    "happy\n##s\n##ing\nbird\nsang\nsong\nsun\nis\nhot\ntoday\nwe\ngo\nhome\n";

static const char spec_text[] =
    "The cat sat on the mat.\nIt was happy.\nThe dog ran fast.\nA bird sang a song.\n\n"
    "The sun is hot today.\nWe go home.\nDogs ran, cats sat.\n\nSinging birds.\n";

/* Specification 16.2: the rows of its table (ids, segments, positions,
 * label ids, next_sentence_label), unpadded. */
static const char spec_rows[] =
    "3 5 22 20 15 4 12 13 14 15 11 22 23 5 24 4\t0000001111111111\t1 13\t2 11\t1\n"
    "3 2 22 20 5 4 31 15 12 20 5 16 7 20 8 4\t0000001111111111\t4 10\t15 13\t1\n"
    "3 6 5 5 9 6 10 15 4 6 25 26 27 28 15 4\t0000000001111111\t2 3\t7 8\t1\n"
    "3 17 18 19 15 4 12 13 14 5 11 22 5 11 24 4\t0000001111111111\t9 12\t15 23\t0\n"
    "3 25 26 27 28 5 29 5 4 20 13 16 7 20 8 4\t0000000001111111\t5 7\t15 30\t0\n"
    "3 17 18 19 15 4 12 13 14 15 11 5 23 11 5 4\t0000001111111111\t11 14\t22 24\t0\n"
    "3 6 7 8 9 5 5 15 4 2 22 20 15 4\t00000000011111\t5 6\t6 10\t1\n"
    "3 6 5 26 17 28 15 4 30 31 15 12 20 13 16 4\t0000000011111111\t2 4\t25 27\t0\n";

/* The original, --max_seq_length 14 --dupe_factor 3 --max_predictions_per_seq
 * 5 --masked_lm_prob 0.5 --short_seq_prob 0.3 --random_seed 99, on
 * v2_text with the spec vocabulary plus a second "the" (line 32) and "cat"
 * (line 33). */
static const char v2_text[] =
    "The cat sat on the mat.\r\nIt was happy.\r\nThe dog ran fast!\r\n \t\r\n"
    "A bird sang a song.\rThe sun is hot today.\r\xe2\x80\x8b\rWe go home.\n\xc2\xa0\n"
    "Dogs ran, cats sat.\nSinging birds.\nThe cat is a dog\n";
static const char v2_rows[] =
    "3 32 5 5 14 2 4 5 30 26 5 4\t000000011111\t2 3 7 9 10\t12 13 29 31 15\t1\n"
    "3 5 13 16 5 5 8 15 4 17 18 5 5 4\t00000000011111\t1 4 5 11 12\t20 33 20 19 15\t1\n"
    "3 17 5 5 15 4 32 5 5 2 2 4\t000000111111\t2 3 7 8 9\t18 19 12 13 14\t0\n"
    "3 2 22 20 5 4 32 33 5 9 5 10 15 4\t00000011111111\t4 7 8 9 10\t15 33 8 9 32\t1\n"
    "3 32 33 5 5 12 4 17 5 5 15 4\t000000011111\t1 3 4 8 9\t32 26 11 18 19\t1\n"
    "3 5 22 23 5 5 11 4 8 9 32 10 15 4\t00000000111111\t1 4 5 6 11\t11 11 24 15 10\t1\n"
    "3 5 33 8 5 5 5 4 11 22 23 11 24 4\t00000000111111\t1 4 5 6 12\t32 9 32 10 24\t1\n"
    "3 5 18 19 15 4 5 5 5 15 4\t00000011111\t1 6 7 8 9\t17 29 30 31 15\t1\n"
    "3 5 13 5 33 20 5 15 4 5 5 31 15 4\t00000000011111\t1 3 6 9 10\t20 16 8 29 30\t1\n"
    "3 17 4 5 15 4 32 5 26 5 28 15 4\t0000001111111\t1 2 3 7 9\t17 18 19 25 27\t1\n"
    "3 13 16 33 5 20 15 4 32 12 13 5 5 4\t00000000111111\t4 5 10 11 12\t20 8 13 14 2\t1\n"
    "3 5 5 26 27 28 5 4 5 28 31 15 4\t0000000011111\t1 2 6 8 9\t32 25 15 29 30\t0\n"
    "3 5 5 31 5 4 5 33 8 9 32 10 27 4\t00000011111111\t1 2 4 6 12\t29 30 15 32 15\t1\n"
    "3 5 22 5 11 24 15 4 15 32 26 5 14 4\t00000000111111\t1 3 9 10 11\t11 23 32 12 13\t1\n"
    "3 32 25 5 5 28 15 4 5 5 5 15 4\t0000000011111\t3 4 8 9 10\t26 27 29 30 31\t0\n"
    "3 11 22 23 11 24 15 4 5 5 27 28 5 4\t00000000111111\t2 4 8 9 12\t22 11 25 26 15\t0\n"
    "3 32 5 13 5 5 4 5 16 33 20 5 15 4\t00000001111111\t2 4 5 7 11\t12 14 2 13 8\t1\n"
    "3 5 22 20 5 4 32 5 26 11 12 4\t000000111111\t1 4 7 9 10\t2 15 33 11 12\t0\n"
    "3 5 10 8 9 32 10 4 32 25 5 5 5 4\t00000000111111\t1 2 10 11 12\t32 33 26 27 28\t1\n"
    "3 5 22 20 5 4 5 33 26 5 12 4\t000000111111\t1 4 6 9 10\t2 15 32 11 12\t0\n"
    "3 33 8 5 32 5 5 4 5 33 26 11 12 4\t00000000111111\t1 3 5 6 8\t33 9 10 15 32\t1\n";

/* The original, --max_seq_length 12 --dupe_factor 2 --max_predictions_per_seq
 * 2 --random_seed 5, spec vocabulary, one document: every random B comes
 * from the same document and is labelled 0. */
static const char v3_text[] =
    "The cat sat on the mat.\nIt was happy.\nThe dog ran fast.\nA bird sang a song.\n";
static const char v3_rows[] = "3 6 12 13 14 15 4 12 13 14 5 4\t000000011111\t9 10\t14 15\t0\n"
                              "3 6 12 13 14 15 4 23 11 5 5 4\t000000011111\t9 10\t24 15\t0\n"
                              "3 6 7 8 9 5 4 17 18 19 15 4\t000000011111\t3 5\t8 6\t0\n"
                              "3 7 8 9 19 10 4 17 5 19 15 4\t000000011111\t4 8\t6 18\t0\n"
                              "3 22 23 11 24 15 4 22 23 11 5 4\t000000011111\t4 10\t24 24\t0\n";

static void test_vectors(void) {
    InstOpts o;
    inst_opts_default(&o);
    o.max_seq_length = 16, o.dupe_factor = 2, o.max_predictions = 3;
    check_vector("spec 16.2", spec_vocab, spec_text, strlen(spec_text), &o, spec_rows);
    o.threads = 3;
    check_vector("spec 16.2, 3 threads", spec_vocab, spec_text, strlen(spec_text), &o, spec_rows);

    char v2_vocab[sizeof spec_vocab + 16];
    snprintf(v2_vocab, sizeof v2_vocab, "%sthe\ncat\n", spec_vocab);
    inst_opts_default(&o);
    o.max_seq_length = 14, o.dupe_factor = 3, o.max_predictions = 5;
    o.masked_lm_prob = 0.5, o.short_seq_prob = 0.3, o.seed = 99;
    check_vector("original: universal newlines, duplicate vocab lines", v2_vocab, v2_text,
                 strlen(v2_text), &o, v2_rows);

    inst_opts_default(&o);
    o.max_seq_length = 12, o.dupe_factor = 2, o.max_predictions = 2, o.seed = 5;
    check_vector("original: one document", spec_vocab, v3_text, strlen(v3_text), &o, v3_rows);

    /* 16.4 */
    test_cond("num_to_predict 10 -> 2", mlm_num_to_predict(10, 0.15, 20) == 2);
    test_cond("num_to_predict 20 -> 3", mlm_num_to_predict(20, 0.15, 20) == 3);
    test_cond("num_to_predict 30 -> 4 (tie to even)", mlm_num_to_predict(30, 0.15, 20) == 4);
    test_cond("num_to_predict 50 -> 8", mlm_num_to_predict(50, 0.15, 20) == 8);
    test_cond("num_to_predict 70 -> 10 (tie)", mlm_num_to_predict(70, 0.15, 20) == 10);
    test_cond("num_to_predict 128 -> 19", mlm_num_to_predict(128, 0.15, 20) == 19);
    test_cond("num_to_predict 133 -> 20", mlm_num_to_predict(133, 0.15, 80) == 20);
    test_cond("num_to_predict 512 -> 77 (P 80)", mlm_num_to_predict(512, 0.15, 80) == 77);
    test_cond("num_to_predict capped by P", mlm_num_to_predict(512, 0.15, 20) == 20);
    test_cond("num_to_predict at least 1",
              mlm_num_to_predict(3, 0.15, 20) == 1 && mlm_num_to_predict(9, 0, 20) == 1);
    test_cond("num_to_predict P 0", mlm_num_to_predict(100, 0.15, 0) == 0);
}

/* ---- reading ---- */

static int read_docs(const char *vocab, const char *text, size_t len, int strict, InstDocs *d,
                     Err *err) {
    WordPiece *wp = wp_create_mem(vocab, strlen(vocab), "vocab", WP_UNCASED, err);
    if (!wp) return -1;
    InstOpts o;
    inst_opts_default(&o);
    o.strict = strict;
    char *paths[1] = {(char *)put("read.txt", text, len)};
    int rc = inst_docs_read(d, wp, paths, 1, &o, err);
    wp_destroy(wp);
    return rc;
}

static size_t doc_sents(const InstDocs *d, size_t k) { return d->doc[k + 1] - d->doc[k]; }

/* The sentence index (1.25 bytes a sentence, lengths of 255 tokens and
 * more kept apart) against the lengths written: every sentence's length
 * and first token, across the every-16th marks, and at the end. */
static void test_sentence_index(void) {
    static const int lens[] = {1,  254, 255, 256, 3,   600, 7,  254, 255, 1,  2,  3,  4,
                               5,  6,   7,   8,   900, 9,   10, 11,  12,  13, 14, 15, 16,
                               17, 18,  19,  20,  21,  22,  23, 24,  25,  26, 27, 28, 29,
                               30, 31,  32,  33,  300, 1,   1,  1,   1,   1,  1};
    size_t ns = sizeof lens / sizeof *lens, total = 0;
    Buf text = {0};
    for (size_t i = 0; i < ns; i++) {
        for (int k = 0; k < lens[i]; k++)
            buf_append(&text, k ? " cat" : "cat", k ? 4 : 3);
        buf_append(&text, i % 7 == 6 ? "\n\n" : "\n", i % 7 == 6 ? 2 : 1);
    }
    InstDocs d;
    Err err;
    test_cond("index: read", read_docs(spec_vocab, text.data, text.len, 0, &d, &err) == 0);
    test_cond("index: every sentence", d.nsent == ns && d.ndoc == (ns + 6) / 7);
    int ok = d.nsent == ns;
    for (size_t i = 0; ok && i < ns; i++) {
        ok = inst_docs_sent(&d, i) == total && inst_docs_sent_len(&d, i) == (size_t)lens[i];
        total += (size_t)lens[i];
    }
    test_cond("index: each sentence's first token and length", ok);
    test_cond("index: the end is the token count",
              ok && inst_docs_sent(&d, ns) == total && d.ntok == total);
    test_cond("index: 6 sentences of 255 tokens or more kept apart", d.nlng == 6);
    inst_docs_free(&d);
    buf_free(&text);
}

static void test_reading(void) {
    InstDocs d;
    Err err;
    /* blank lines of all kinds; a ZWSP-only line is neither sentence nor
     * boundary; a line with only [unknown] chars gives one [UNK] sentence */
    static const char t1[] =
        "\n\n the cat \r\n\xe2\x80\x8b\nit was\r\r  \t\x0b\x1c\n\xe3\x80\x80\ndog\xc2\xa0\n"
        "\xc2\xa0\xe2\x80\xa8\n\n\n\x01\x02\n \nsun\rhot\n$$$\n";
    test_cond("read t1", read_docs(spec_vocab, t1, sizeof t1 - 1, 0, &d, &err) == 0);
    test_cond("t1: 3 documents", d.ndoc == 3);
    if (d.ndoc == 3) {
        test_cond("t1: sentences per document 2 1 3",
                  doc_sents(&d, 0) == 2 && doc_sents(&d, 1) == 1 && doc_sents(&d, 2) == 3);
        test_cond("t1: 'the cat' = 6 7", inst_docs_sent(&d, 1) == 2 && inst_docs_id(&d, 0) == 6 &&
                                             inst_docs_id(&d, 1) == 7);
        test_cond("t1: last sentence '$$$' = 3 x [UNK]",
                  inst_docs_id(&d, d.ntok - 1) == 2 && inst_docs_sent_len(&d, d.nsent - 1) == 3 &&
                      inst_docs_sent(&d, d.nsent) - inst_docs_sent(&d, d.nsent - 1) == 3);
    }
    test_cond("t1: line count (\\r\\n, \\r, \\n)", d.lines == 17);
    inst_docs_free(&d);

    /* two files are one stream: the document goes on */
    WordPiece *wp = wp_create_mem(spec_vocab, strlen(spec_vocab), "vocab", WP_UNCASED, &err);
    InstOpts o;
    inst_opts_default(&o);
    char *two[2] = {(char *)put("a.txt", "the cat\n\ndog", 12),
                    (char *)put("b.txt", "sun\n\nhot\n", 9)};
    test_cond("read two files", inst_docs_read(&d, wp, two, 2, &o, &err) == 0);
    test_cond("two files: 3 documents, the second spans both",
              d.ndoc == 3 && doc_sents(&d, 1) == 2);
    inst_docs_free(&d);

    char *missing[1] = {"/nonexistent/shard.txt"};
    test_cond("missing file fails", inst_docs_read(&d, wp, missing, 1, &o, &err) == -1);
    test_str_eq("missing file message", err.msg,
                "/nonexistent/shard.txt: No such file or directory");

    /* invalid UTF-8: dropped and counted, or an error with --strict */
    static const char bad[] = "the cat\nsat\non \xff mat\n";
    test_cond("invalid UTF-8 read", read_docs(spec_vocab, bad, sizeof bad - 1, 0, &d, &err) == 0);
    test_cond("invalid UTF-8 counted, rest kept", d.bad_utf8 == 1 && d.nsent == 3 && d.ntok == 5);
    inst_docs_free(&d);
    test_cond("invalid UTF-8 strict fails",
              read_docs(spec_vocab, bad, sizeof bad - 1, 1, &d, &err) == -1);
    test_cond("strict message names file:line",
              strstr(err.msg, "read.txt:3: invalid UTF-8") != NULL);

    /* no [UNK] in the vocabulary while the text needs one */
    static const char nounk[] = "[PAD]\n[CLS]\n[SEP]\n[MASK]\nthe\ncat\n";
    test_cond("no [UNK], not needed",
              read_docs(nounk, "the cat\n", 8, 0, &d, &err) == 0 && d.ntok == 2);
    inst_docs_free(&d);
    test_cond("no [UNK], needed", read_docs(nounk, "the cat\nthe dog\n", 16, 0, &d, &err) == -1);
    test_cond("no [UNK] message",
              strstr(err.msg, "read.txt:2: the vocabulary has no [UNK] token") != NULL);

    /* empty input, and build errors */
    test_cond("empty input",
              read_docs(spec_vocab, "", 0, 0, &d, &err) == 0 && d.ndoc == 0 && d.nsent == 0);
    InstSet s;
    test_cond("no documents: no instances", inst_build(&s, &d, wp, &o, &err) == 0 && s.n == 0);
    inst_set_free(&s);
    inst_docs_free(&d);
    WordPiece *nocls = wp_create_mem(nounk, 6, "vocab", WP_UNCASED, &err); /* "[PAD]\n" only */
    test_cond("vocabulary without [CLS]", inst_build(&s, &d, nocls, &o, &err) == -1);
    test_str_eq("without [CLS] message", err.msg, "the vocabulary has no [CLS] token");
    wp_destroy(nocls);
    o.max_seq_length = 4;
    test_cond("max_seq_length 4 rejected",
              inst_opts_check(&o, &err) == -1 && strstr(err.msg, "max_seq_length"));
    inst_opts_default(&o);
    o.masked_lm_prob = 1.5;
    test_cond("masked_lm_prob 1.5 rejected", inst_opts_check(&o, &err) == -1);
    inst_opts_default(&o);
    test_cond("defaults valid", inst_opts_check(&o, &err) == 0);
    test_cond("defaults are the original's",
              o.max_seq_length == 128 && o.max_predictions == 20 && o.masked_lm_prob == 0.15 &&
                  o.short_seq_prob == 0.1 && o.dupe_factor == 10 && o.seed == 12345);
    wp_destroy(wp);
}

/* The reading threads' word cache: words of 1 .. 80 bytes (the key kinds
 * change at 8, 16 and 64 bytes), words of one, two and more pieces, words
 * equal in their first 8 or 16 bytes, NUL and invalid bytes, each seen
 * many times and thousands of them (the table grows): every line's ids
 * equal wp_encode's on the line, with 1 and 2 threads. */
static void test_word_cache(void) {
    Buf vocab = {0}, text = {0};
    buf_puts(&vocab, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nab\ncd\n##ab\n##cd\n##x\n");
    for (int i = 0; i < 200; i++) {
        char w[16];
        snprintf(w, sizeof w, "v%d\n", i);
        buf_puts(&vocab, w);
    }
    Rng r;
    rng_seed(&r, 11);
    Buf line = {0};
    for (int l = 0; l < 6000; l++) {
        buf_clear(&line);
        int nw = 1 + (int)rng_below(&r, 12);
        for (int w = 0; w < nw; w++) {
            char word[96];
            int len = 0, kind = (int)rng_below(&r, 6);
            if (kind == 0) { /* a vocabulary word and pieces */
                len = snprintf(word, sizeof word, "v%d", (int)rng_below(&r, 200));
                for (int p = (int)rng_below(&r, 4); p > 0; p--)
                    len += snprintf(word + len, sizeof word - (size_t)len, "%s",
                                    rng_below(&r, 2) ? "ab" : "x");
            } else if (kind == 1) { /* 8, 16 or 64 bytes and one more, alike at the start */
                static const int at[] = {8, 9, 16, 17, 64, 65};
                len = at[rng_below(&r, 6)];
                for (int i = 0; i < len - 1; i++)
                    word[i] = "ab"[i % 2];
                word[len - 1] = "xbd"[rng_below(&r, 3)]; /* ##x, ##ab, or [UNK] */
            } else if (kind == 2) { /* any length up to 80, few letters: many repeats */
                len = 1 + (int)rng_below(&r, 80);
                for (int i = 0; i < len; i++)
                    word[i] = "abcd"[rng_below(&r, i < 12 ? 4 : 1)];
            } else if (kind == 3) { /* thousands of distinct words */
                len = snprintf(word, sizeof word, "ab%dcd", (int)rng_below(&r, 5000));
            } else if (kind == 4) { /* a NUL, or an invalid byte */
                len = snprintf(word, sizeof word, "ab%c%d", rng_below(&r, 2) ? '\0' : '\xff',
                               (int)rng_below(&r, 20));
            } else {
                len = snprintf(word, sizeof word, "cd,ab");
            }
            if (w) buf_putc(&line, rng_below(&r, 3) ? ' ' : '\t');
            buf_append(&line, word, (size_t)len);
        }
        buf_append(&text, line.data, line.len);
        buf_putc(&text, '\n');
    }
    /* the expected ids: wp_encode of every line, one after another */
    Err err;
    WordPiece *wp = wp_create_mem(vocab.data, vocab.len, "vocab", WP_UNCASED, &err);
    WpScratch sc = {0};
    WpIds want = {0};
    const char *p = text.data, *end = text.data + text.len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        wp_encode(wp, &sc, p, (size_t)(nl - p), &want);
        p = nl + 1;
    }
    char *paths[1] = {(char *)put("cache.txt", text.data, text.len)};
    for (int t = 1; t <= 2; t++) {
        InstOpts o;
        inst_opts_default(&o);
        o.threads = t;
        InstDocs d;
        int ok = inst_docs_read(&d, wp, paths, 1, &o, &err) == 0;
        int32_t *ids = ok ? docs_ids(&d) : NULL;
        ok = ok && d.ntok == want.n && !memcmp(ids, want.v, want.n * sizeof *want.v);
        free(ids);
        test_cond(t == 1 ? "word cache: the ids of wp_encode" : "word cache, 2 threads: the same",
                  ok);
        if (ok) inst_docs_free(&d);
    }
    wp_scratch_free(&sc);
    wp_ids_free(&want);
    wp_destroy(wp);
    buf_free(&line);
    buf_free(&vocab);
    buf_free(&text);
}

/* ---- invariants on a generated corpus ---- */

#define NWORDS 300

/* Vocabulary: specials, w0..w299, ##ed ##ing ##ly. */
static void make_vocab(Buf *v) {
    buf_puts(v, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n");
    for (int i = 0; i < NWORDS; i++) {
        char w[16];
        snprintf(w, sizeof w, "w%d\n", i);
        buf_puts(v, w);
    }
    buf_puts(v, "##ed\n##ing\n##ly\n");
}

/* ndoc documents of 1..12 sentences of 1..40 words (one in 50 sentences
 * has 150), words with a suffix piece one time in four. */
static void make_corpus(Buf *t, int ndoc, uint64_t seed) {
    Rng r;
    rng_seed(&r, seed);
    static const char *suf[] = {"ed", "ing", "ly"};
    for (int d = 0; d < ndoc; d++) {
        int ns = 1 + (int)rng_below(&r, 12);
        for (int s = 0; s < ns; s++) {
            int nw = rng_below(&r, 50) == 0 ? 150 : 1 + (int)rng_below(&r, 40);
            for (int w = 0; w < nw; w++) {
                char word[24];
                int k = (int)rng_below(&r, NWORDS);
                snprintf(word, sizeof word, "%sW%d%s", w ? " " : "", k,
                         rng_below(&r, 4) ? "" : suf[rng_below(&r, 3)]);
                buf_puts(t, word);
            }
            buf_puts(t, ".\n");
        }
        buf_putc(t, '\n');
    }
}

/* Does needle[0..nn) occur in hay[0..nh) as a run? */
static int occurs(const int32_t *hay, size_t nh, const int32_t *needle, size_t nn) {
    const char *h = (const char *)hay, *end = h + nh * 4;
    while (h < end) {
        const char *f = memmem(h, (size_t)(end - h), needle, nn * 4);
        if (!f) return 0;
        if ((f - (const char *)hay) % 4 == 0) return 1;
        h = f + 1;
    }
    return 0;
}

typedef struct Tally {
    size_t rows, bad_shape, bad_pos, bad_count, not_in_docs, bad_wwm;
    size_t masked, as_mask, kept, random, next, short_rows;
} Tally;

static void check_set(const InstSet *s, const InstDocs *d, const WordPiece *wp, const InstOpts *o,
                      Tally *t) {
    int32_t cls = wp_token_id(wp, "[CLS]", 5), sep = wp_token_id(wp, "[SEP]", 5),
            msk = wp_token_id(wp, "[MASK]", 6);
    size_t L = (size_t)o->max_seq_length;
    int32_t *orig = malloc(L * sizeof *orig), *ids = docs_ids(d);
    memset(t, 0, sizeof *t);
    static Row v;
    for (size_t r = 0; r < s->n; r++) {
        get_row(s, r, &v);
        t->rows++;
        int shape = v.len <= L && v.input_ids[0] == cls && v.input_ids[v.len - 1] == sep &&
                    v.seg0 >= 3 && v.input_ids[v.seg0 - 1] == sep;
        if (o->no_nsp)
            shape &= v.seg0 == v.len && v.next_sentence_label == 0;
        else
            shape &= v.len - v.seg0 >= 2;
        t->bad_shape += !shape;
        if (!shape) continue;
        t->next += v.next_sentence_label == 1;
        t->short_rows += v.len < L - 10;
        memcpy(orig, v.input_ids, v.len * sizeof *orig);
        int pos_ok = 1;
        for (size_t k = 0; k < v.nmask; k++) {
            size_t p = (size_t)v.positions[k];
            pos_ok &= p > 0 && p < v.len - 1 && p != v.seg0 - 1 &&
                      (k == 0 || v.positions[k - 1] < v.positions[k]);
            if (!pos_ok) break;
            orig[p] = v.label_ids[k];
            t->masked++;
            if (v.input_ids[p] == msk)
                t->as_mask++;
            else if (v.input_ids[p] == v.label_ids[k])
                t->kept++;
            else
                t->random++;
        }
        t->bad_pos += !pos_ok;
        if (!pos_ok) continue;
        size_t want =
            o->no_mask ? 0 : mlm_num_to_predict(v.len, o->masked_lm_prob, o->max_predictions);
        t->bad_count += o->whole_word ? v.nmask > want : v.nmask != want;
        /* A and B, unmasked, are runs of the documents' tokens */
        int in_docs = occurs(ids, d->ntok, orig + 1, v.seg0 - 2);
        if (!o->no_nsp) in_docs &= occurs(ids, d->ntok, orig + v.seg0, v.len - v.seg0 - 1);
        t->not_in_docs += !in_docs;
        if (o->whole_word) { /* a masked piece's word is masked whole */
            int ok = 1;
            for (size_t k = 0; k < v.nmask; k++) {
                size_t p = (size_t)v.positions[k];
                size_t tl;
                const char *tok = wp_id_token(wp, orig[p], &tl);
                if (tl > 2 && tok[0] == '#' && tok[1] == '#') {
                    size_t q = p - 1;
                    while (q > 0 && (orig[q] == sep || orig[q] == cls))
                        q--;
                    int found = 0;
                    for (size_t m = 0; m < v.nmask; m++)
                        found |= (size_t)v.positions[m] == q;
                    ok &= q == 0 || found;
                }
            }
            t->bad_wwm += !ok;
        }
    }
    free(orig), free(ids);
}

static void test_invariants(void) {
    Buf vocab = {0}, text = {0};
    make_vocab(&vocab);
    make_corpus(&text, 400, 1);
    Err err;
    WordPiece *wp = wp_create_mem(vocab.data, vocab.len, "vocab", WP_UNCASED, &err);
    char *paths[1] = {(char *)put("corpus.txt", text.data, text.len)};
    InstOpts o;
    inst_opts_default(&o);
    o.dupe_factor = 2;
    InstDocs d, d3;
    test_cond("read corpus", inst_docs_read(&d, wp, paths, 1, &o, &err) == 0 && d.ndoc == 400);
    test_cond("corpus has pieces", d.ntok > 50000 && wp_token_id(wp, "##ing", 5) >= 0);
    o.threads = 3;
    test_cond("read corpus, 3 threads", inst_docs_read(&d3, wp, paths, 1, &o, &err) == 0);
    test_cond("3 threads: same documents",
              d3.ntok == d.ntok && d3.nsent == d.nsent && d3.ndoc == d.ndoc &&
                  (d.tok16 ? !memcmp(d3.tok16, d.tok16, d.ntok * 2)
                           : !memcmp(d3.tok32, d.tok32, d.ntok * 4)) &&
                  !memcmp(d3.slen, d.slen, d.nsent) &&
                  !memcmp(d3.smark, d.smark, (d.nsent / 16 + 1) * sizeof *d.smark) &&
                  d3.nlng == d.nlng && !memcmp(d3.lng, d.lng, d.nlng * sizeof *d.lng) &&
                  !memcmp(d3.doc, d.doc, (d.ndoc + 1) * sizeof *d.doc));
    inst_docs_free(&d3);
    o.threads = 1;

    static const struct {
        const char *name;
        int seq, wwm, nomask, nonsp;
    } modes[] = {{"default 128", 128, 0, 0, 0}, {"default 512", 512, 0, 0, 0},
                 {"whole-word", 128, 1, 0, 0},  {"no-mask", 128, 0, 1, 0},
                 {"no-nsp", 128, 0, 0, 1},      {"no-nsp no-mask", 64, 0, 1, 1}};
    char name[128];
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        o.max_seq_length = modes[m].seq;
        o.max_predictions = modes[m].seq == 512 ? 80 : 20;
        o.whole_word = modes[m].wwm, o.no_mask = modes[m].nomask, o.no_nsp = modes[m].nonsp;
        InstSet s, s2;
        Tally t;
        int rc = inst_build(&s, &d, wp, &o, &err);
        snprintf(name, sizeof name, "%s: build", modes[m].name);
        test_cond(name, rc == 0 && s.n > 1000);
        if (rc) continue;
        check_set(&s, &d, wp, &o, &t);
#define MODE_COND(what, cond)                                                                      \
    snprintf(name, sizeof name, "%s: %s", modes[m].name, what);                                    \
    test_cond(name, cond)
        MODE_COND("[CLS] A [SEP] B [SEP] shape, lengths", t.bad_shape == 0);
        MODE_COND("positions increasing, never on [CLS]/[SEP]", t.bad_pos == 0);
        MODE_COND("number of masked tokens", t.bad_count == 0);
        MODE_COND("unmasked segments are runs of the documents", t.not_in_docs == 0);
        MODE_COND("short rows occur (short_seq_prob)", t.short_rows > 0);
        if (!o.no_mask) {
            MODE_COND("about 80% [MASK]",
                      t.as_mask > t.masked * 75 / 100 && t.as_mask < t.masked * 85 / 100);
            MODE_COND("about 10% kept",
                      t.kept > t.masked * 7 / 100 && t.kept < t.masked * 13 / 100);
            MODE_COND("about 10% random words",
                      t.random > t.masked * 7 / 100 && t.random < t.masked * 13 / 100);
        } else {
            MODE_COND("nothing masked", t.masked == 0 && s.st.masked == 0);
        }
        if (!o.no_nsp) {
            /* half of the chunks of two or more sentences, all of one sentence */
            MODE_COND("random next: 45-75%",
                      t.next > t.rows * 45 / 100 && t.next < t.rows * 75 / 100);
        } else {
            MODE_COND("no random next", t.next == 0 && s.st.random_next == 0);
            uint64_t used = 0;
            for (size_t i = 0; i < s.n; i++) {
                InstView v;
                inst_get(&s, i, &v, NULL, NULL, NULL);
                used += v.len - 2;
            }
            MODE_COND("every sentence used once per pass", used + s.st.truncated == 2 * d.ntok);
        }
        if (o.whole_word) MODE_COND("whole words masked together", t.bad_wwm == 0);
        uint64_t ntok = 0, nmask = 0;
        for (size_t i = 0; i < s.n; i++) {
            InstView v;
            inst_get(&s, i, &v, NULL, NULL, NULL);
            ntok += v.len, nmask += v.nmask;
        }
        MODE_COND("stats", s.st.instances == s.n && s.st.tokens == ntok && s.st.masked == nmask);
        Buf rows = {0}, rows2 = {0};
        format_rows(&s, &rows);
        int rc2 = inst_build(&s2, &d, wp, &o, &err);
        if (rc2 == 0) format_rows(&s2, &rows2);
        MODE_COND("same seed, same instances",
                  rc2 == 0 && s2.n == s.n && rows.len == rows2.len &&
                      !memcmp(rows.data, rows2.data, rows.len) &&
                      !memcmp(s2.order, s.order, s.n * sizeof *s.order));
        inst_set_free(&s2);
        o.threads = 4;
        buf_clear(&rows2);
        rc2 = inst_build(&s2, &d, wp, &o, &err);
        if (rc2 == 0) format_rows(&s2, &rows2);
        MODE_COND("4 threads, same instances",
                  rc2 == 0 && rows.len == rows2.len && !memcmp(rows.data, rows2.data, rows.len));
        inst_set_free(&s2);
        o.threads = 1;
        o.seed = 54321;
        buf_clear(&rows2);
        rc2 = inst_build(&s2, &d, wp, &o, &err);
        if (rc2 == 0) format_rows(&s2, &rows2);
        MODE_COND("other seed, other instances",
                  rc2 == 0 &&
                      (rows.len != rows2.len || memcmp(rows.data, rows2.data, rows.len) != 0));
        inst_set_free(&s2);
        buf_free(&rows), buf_free(&rows2);
        o.seed = 12345;
        inst_set_free(&s);
    }

    /* whole-word masking differs from per-piece masking */
    InstSet a, b;
    o.max_seq_length = 128, o.whole_word = 0, o.no_mask = 0, o.no_nsp = 0;
    inst_build(&a, &d, wp, &o, &err);
    o.whole_word = 1;
    inst_build(&b, &d, wp, &o, &err);
    int differ = a.n != b.n;
    for (size_t i = 0; i < a.n && !differ; i++) {
        InstView va, vb;
        int32_t pa[128], pb[128];
        inst_get(&a, i, &va, NULL, pa, NULL);
        inst_get(&b, i, &vb, NULL, pb, NULL);
        differ = va.nmask != vb.nmask || memcmp(pa, pb, va.nmask * sizeof *pa);
    }
    test_cond("whole-word masking changes the masks", differ);
    inst_set_free(&a);
    inst_set_free(&b);
    inst_docs_free(&d);

    /* random words come from the vocabulary's distinct tokens, with the id
     * of their last line: a duplicated "w7" (first line 12) never shows up
     * as 12 */
    buf_puts(&vocab, "w7\n");
    WordPiece *dup = wp_create_mem(vocab.data, vocab.len, "vocab", WP_UNCASED, &err);
    int32_t w7 = wp_token_id(dup, "w7", 2);
    inst_opts_default(&o);
    o.masked_lm_prob = 1, o.max_predictions = 128, o.dupe_factor = 3;
    InstSet s;
    int rc = inst_docs_read(&d, dup, paths, 1, &o, &err) || inst_build(&s, &d, dup, &o, &err);
    test_cond("duplicate vocab line: build", rc == 0 && w7 == NWORDS + 8);
    size_t first_line = 0, last_line = 0, randoms = 0;
    static Row v;
    for (size_t r = 0; r < s.n && rc == 0; r++) {
        get_row(&s, r, &v);
        for (size_t k = 0; k < v.nmask; k++) {
            int32_t id = v.input_ids[v.positions[k]];
            if (id == 4 || id == v.label_ids[k]) continue;
            randoms++;
            first_line += id == 12;
            last_line += id == w7;
        }
    }
    test_cond("random words: the duplicate's last line only",
              randoms > 10000 && first_line == 0 && last_line > 0);
    if (rc == 0) inst_set_free(&s);
    inst_docs_free(&d);
    wp_destroy(dup);

    /* one document: random B from the same document, label 0 */
    buf_clear(&text);
    make_corpus(&text, 1, 7);
    paths[0] = (char *)put("one.txt", text.data, text.len);
    inst_opts_default(&o);
    o.max_seq_length = 32, o.dupe_factor = 5;
    rc = inst_docs_read(&d, wp, paths, 1, &o, &err) || inst_build(&s, &d, wp, &o, &err);
    test_cond("one document: build", rc == 0 && d.ndoc == 1 && s.n > 5);
    if (rc == 0) {
        size_t ones = 0;
        for (size_t i = 0; i < s.n; i++) {
            InstView vw;
            inst_get(&s, i, &vw, NULL, NULL, NULL);
            ones += vw.next_sentence_label != 0;
        }
        test_cond("one document: every label 0, same-document pairs counted",
                  ones == 0 && s.st.random_next == 0 && s.st.same_doc > 0);
        inst_set_free(&s);
    }
    inst_docs_free(&d);

    wp_destroy(wp);
    buf_free(&vocab);
    buf_free(&text);
}

/* Rows r0 .. r0 + n of dataset `what` of s, padded, into a fresh buffer. */
static void *rows_of(InstSet *s, int what, uint64_t r0, uint64_t n, size_t width, size_t es) {
    void *b = calloc(n * width * es + 1, 1);
    inst_rows_fill(s, what, r0, n, width, b);
    return b;
}

/* A spilled set (tokens and instances in temporary files, rows put in order
 * through them) gives the rows of the set held in memory, in every mode, for
 * any thread count, in reads of any size, and so do its chunks read alone
 * (input_ids kept by chunk or by row); a missing temporary directory is an
 * error naming it. */
static void test_spilled(void) {
    Buf vocab = {0}, text = {0};
    make_vocab(&vocab);
    make_corpus(&text, 300, 7);
    Buf t2 = {0}; /* the text with [CLS] and [SEP] in it: masking then reads the tokens */
    buf_append(&t2, text.data, text.len);
    buf_puts(&t2, "W1 [CLS] W2 [SEP] W3\nW4 W5\n\nW6 W7\n");
    Err err;
    WordPiece *wp = wp_create_mem(vocab.data, vocab.len, "vocab", WP_UNCASED, &err);
    char *paths[2] = {(char *)put("spill1.txt", text.data, text.len),
                      (char *)put("spill2.txt", t2.data, t2.len)};
    static const struct {
        const char *name;
        int seq, pred, wwm, nomask, nonsp, text;
    } modes[] = {{"default 128", 128, 20, 0, 0, 0, 0},
                 {"default 512", 512, 80, 0, 0, 0, 0},
                 {"whole-word", 128, 20, 1, 0, 0, 0},
                 {"no-mask", 128, 20, 0, 1, 0, 0},
                 {"no-nsp", 128, 20, 0, 0, 1, 0},
                 {"no predictions", 64, 0, 0, 0, 0, 0},
                 {"[CLS]/[SEP] in text", 128, 20, 0, 0, 0, 1}};
    char name[160];
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
        for (int threads = 1; threads <= 3; threads += 2) {
            InstOpts o;
            inst_opts_default(&o);
            o.dupe_factor = 2, o.threads = threads;
            o.max_seq_length = modes[m].seq, o.max_predictions = modes[m].pred;
            o.whole_word = modes[m].wwm, o.no_mask = modes[m].nomask, o.no_nsp = modes[m].nonsp;
            InstDocs d, ds;
            InstSet s, ss;
            char **in = paths + modes[m].text;
            int rc = inst_docs_read(&d, wp, in, 1, &o, &err) || inst_build(&s, &d, wp, &o, &err);
            o.spill = 1, o.tmp_dir = dir;
            rc |= inst_docs_read(&ds, wp, in, 1, &o, &err) || inst_build(&ss, &ds, wp, &o, &err);
            snprintf(name, sizeof name, "spilled, %s, %d thread%s: built", modes[m].name, threads,
                     threads > 1 ? "s" : "");
            test_cond(name, rc == 0 && ss.spilled && ss.n == s.n && s.n > 500 && !ds.tok16 &&
                                !ds.tok32 && ds.specials == modes[m].text);
            if (rc) continue;
            inst_docs_free(&ds); /* the spilled records carry their tokens */
            ss.docs = NULL;
            int P = modes[m].pred;
            /* with 3 threads, input_ids kept by chunks of 97 rows x 24 columns
             * (a narrower last strip at 128 and 512, bands cut by the reads) */
            if (threads == 3) inst_rows_layout(&ss, 97, 24);
            rc = inst_rows_prepare(&s, modes[m].seq, P, "mem", &err) ||
                 inst_rows_prepare(&ss, modes[m].seq, P, "spill", &err);
            size_t L = (size_t)modes[m].seq, W = P ? (size_t)P : 1;
            size_t width[6] = {L, L, L, W, W, 1}, es[6] = {4, 1, 1, 4, 4, 1};
            int same = rc == 0;
            for (int what = 0; what < 6 && same; what++)
                for (uint64_t r0 = 0; r0 < s.n; r0 += 777) {
                    uint64_t n = s.n - r0 < 777 ? s.n - r0 : 777;
                    void *a = rows_of(&s, what, r0, n, width[what], es[what]);
                    void *b = rows_of(&ss, what, r0, n, width[what], es[what]);
                    same &= !memcmp(a, b, n * width[what] * es[what]);
                    free(a), free(b);
                }
            snprintf(name, sizeof name, "spilled, %s, %d thread%s: the same rows", modes[m].name,
                     threads, threads > 1 ? "s" : "");
            test_cond(name, same && !spill_failed(&ss.rowf, &err));
            /* a chunk's columns alone (inst_rows_strip), both kinds of set:
             * those columns of the rows */
            static const uint64_t c0s[] = {0, 5, 24, 100};
            for (int what = INST_IDS; what <= INST_SEG && same; what++)
                for (uint64_t r0 = 0; r0 < s.n; r0 += 389)
                    for (size_t k = 0; k < 4; k++) {
                        uint64_t n = s.n - r0 < 389 ? s.n - r0 : 389, c0 = c0s[k];
                        if (c0 >= L) continue;
                        uint64_t nc = L - c0 < 30 ? L - c0 : 30, w = nc + 2;
                        void *full = rows_of(&s, what, r0, n, L, es[what]);
                        void *a = calloc(n * w * es[what] + 1, 1),
                             *b = calloc(n * w * es[what] + 1, 1);
                        inst_rows_strip(&s, what, r0, n, c0, nc, w, a);
                        inst_rows_strip(&ss, what, r0, n, c0, nc, w, b);
                        same &= !memcmp(a, b, n * w * es[what]);
                        for (uint64_t r = 0; r < n && same; r++)
                            same &= !memcmp((char *)a + r * w * es[what],
                                            (char *)full + (r * L + c0) * es[what], nc * es[what]);
                        free(full), free(a), free(b);
                    }
            snprintf(name, sizeof name, "spilled, %s, %d thread%s: chunks read alone, the same",
                     modes[m].name, threads, threads > 1 ? "s" : "");
            test_cond(name, same && !spill_failed(&ss.rowf, &err));
            inst_set_free(&s), inst_set_free(&ss), inst_docs_free(&d);
        }
    InstOpts o;
    inst_opts_default(&o);
    o.spill = 1, o.tmp_dir = "/nonexistent-dir", o.tmp_label = "x.hdf5";
    InstDocs d;
    test_cond("spilled: a missing temporary directory is an error naming it",
              inst_docs_read(&d, wp, paths, 1, &o, &err) == -1 &&
                  strstr(err.msg, "x.hdf5: cannot create a temporary file in /nonexistent-dir"));
    wp_destroy(wp);
    buf_free(&vocab), buf_free(&text), buf_free(&t2);
}

int main(void) {
    if (!mkdtemp(dir)) {
        printf("test_instances: cannot create %s\n", dir);
        return 1;
    }
    test_vectors();
    test_reading();
    test_sentence_index();
    test_word_cache();
    test_invariants();
    test_spilled();
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) printf("test_instances: could not remove %s\n", dir);
    return test_report();
}
