/* test_spmodel.c - SentencePiece .model writer/reader and .vocab writer.
 *
 * Always: hand-checked wire bytes, write -> read -> write round trips, the
 * .vocab number format, malformed input. When a Python with the
 * sentencepiece package is found (WIKIBERT_SPM_PYTHON, WIKIBERT_PYTHON,
 * python3, /usr/bin/python3 or the
 * bench venv) and run.sh's BIN/TESTS are set: spm_train's BPE model on text
 * from our prep stage is compared field by field with what we write from
 * its pieces, and SentencePiece itself loads and encodes with our model.
 * Without them those checks print that they did not run and count nothing.
 */
#define _GNU_SOURCE /* memmem */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/test.h"
#include "common/io.h"
#include "vocab/spmodel.h"

static void build_small(SpModel *m) {
    spmodel_init(m);
    spmodel_add_piece(m, "<unk>", 5, 0, SP_UNKNOWN);
    spmodel_add_piece(m, "<s>", 3, 0, SP_CONTROL);
    spmodel_add_piece(m, "</s>", 4, 0, SP_CONTROL);
    spmodel_add_piece(m, "\xe2\x96\x81t", 4, -0.0f, SP_NORMAL);
    spmodel_add_piece(m,
                      "\xe2\x96\x81"
                      "a",
                      4, -1, SP_NORMAL);
    spmodel_set_bpe_trainer(m, "all.sent", "m", 2000, 0.9999f);
    spmodel_set_normalizer(m, "nmt_nfkc", "\x01\x02", 2);
}

static void test_wire(void) {
    SpModel m;
    build_small(&m);
    Buf b = {0};
    spmodel_write(&m, &b);
    /* bytes as spm_train 0.2.3 wrote them for the same pieces and options */
    static const char want[] = "\x0a\x0e\x0a\x05<unk>\x15\x00\x00\x00\x00\x18\x02"
                               "\x0a\x0c\x0a\x03<s>\x15\x00\x00\x00\x00\x18\x03"
                               "\x0a\x0d\x0a\x04</s>\x15\x00\x00\x00\x00\x18\x03"
                               "\x0a\x0b\x0a\x04\xe2\x96\x81t\x15\x00\x00\x00\x80"
                               "\x0a\x0b\x0a\x04\xe2\x96\x81"
                               "a\x15\x00\x00\x80\xbf"
                               "\x12\x17\x0a\x08"
                               "all.sent\x12\x01m\x18\x02\x20\xd0\x0f\x55\x72\xf9\x7f\x3f"
                               "\x1a\x0e\x0a\x08nmt_nfkc\x12\x02\x01\x02";
    test_mem_eq("wire bytes of a small BPE model", b.data, b.len, want, sizeof want - 1);

    SpModel r;
    spmodel_init(&r);
    Err err;
    test_cond("read back", spmodel_read(&r, b.data, b.len, &err) == 0);
    test_cond("pieces", r.n == 5 && strcmp(spmodel_piece(&r, 4), "\xe2\x96\x81"
                                                                 "a") == 0);
    test_cond("types",
              r.type[0] == SP_UNKNOWN && r.type[1] == SP_CONTROL && r.type[3] == SP_NORMAL);
    test_cond("scores (with -0)", r.score[4] == -1 && r.score[3] == 0 && signbit(r.score[3]));
    test_cond("model_type", spmsg_get_int(&r.trainer, SPT_MODEL_TYPE, 0) == SP_MODEL_BPE);
    test_cond("vocab_size", spmsg_get_int(&r.trainer, SPT_VOCAB_SIZE, 0) == 2000);
    test_cond("character_coverage",
              spmsg_get_float(&r.trainer, SPT_CHARACTER_COVERAGE, 0) == 0.9999f);
    test_cond("unset field gives the default", spmsg_get_int(&r.trainer, SPT_PAD_ID, -7) == -7);
    const SpField *name = spmsg_get(&r.normalizer, SPN_NAME);
    test_cond("normalizer name",
              name && name->len == 8 &&
                  memcmp(r.normalizer.data.data + name->off, "nmt_nfkc", 8) == 0);
    test_cond("no denormalizer", !r.denormalizer.present);
    Buf b2 = {0};
    spmodel_write(&r, &b2);
    test_mem_eq("write(read(x)) == x", b2.data, b2.len, b.data, b.len);

    /* optional fields: negative int32, bools, a repeated string, explicit defaults */
    spmsg_set_varint(&r.trainer, SPT_PAD_ID, -1);
    spmsg_set_varint(&r.normalizer, SPN_ADD_DUMMY_PREFIX, 1);
    spmsg_add_bytes(&r.trainer, 30, "[CLS]", 5);
    spmsg_add_bytes(&r.trainer, 30, "[SEP]", 5);
    spmsg_set_varint(&r.trainer, SPT_VOCAB_SIZE, 32000);
    buf_clear(&b2);
    spmodel_write(&r, &b2);
    SpModel r2;
    spmodel_init(&r2);
    test_cond("read extended", spmodel_read(&r2, b2.data, b2.len, &err) == 0);
    test_cond("pad_id -1 survives", spmsg_get_int(&r2.trainer, SPT_PAD_ID, 0) == -1);
    test_cond("vocab_size replaced", spmsg_get_int(&r2.trainer, SPT_VOCAB_SIZE, 0) == 32000);
    int ncontrol = 0;
    for (size_t i = 0; i < r2.trainer.n; i++)
        ncontrol += r2.trainer.f[i].num == 30;
    test_cond("repeated field kept twice", ncontrol == 2);
    const char *pad =
        memmem(b2.data, b2.len, "\xd8\x02\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12);
    test_cond("negative int32 as a 10-byte varint", pad != NULL);
    const char *cs = memmem(b2.data, b2.len, "\xf2\x01\x05[CLS]\xf2\x01\x05[SEP]", 16);
    test_cond("repeated strings in order, fields in number order",
              cs != NULL && pad != NULL && cs < pad);
    Buf b3 = {0};
    spmodel_write(&r2, &b3);
    test_mem_eq("round trip with optional fields", b3.data, b3.len, b2.data, b2.len);

    /* malformed input */
    for (size_t cut = 1; cut < b.len; cut += 7) {
        SpModel t;
        spmodel_init(&t);
        int rc = spmodel_read(&t, b.data, cut, &err);
        spmodel_free(&t);
        if (rc == 0) {
            /* a cut between two top-level fields is a valid, shorter model */
            test_cond("cut on a field boundary",
                      cut == 16 || cut == 30 || cut == 45 || cut == 58 || cut == 71 || cut == 96);
        } else {
            test_cond("truncated model: error names a byte", strncmp(err.msg, "byte ", 5) == 0);
        }
    }
    SpModel t;
    spmodel_init(&t);
    test_cond("wire type 3 rejected", spmodel_read(&t, "\x0b", 1, &err) == -1);
    spmodel_free(&t);
    spmodel_init(&t);
    test_cond("bad UTF-8 piece rejected",
              spmodel_read(&t, "\x0a\x08\x0a\x01\xff\x15\0\0\0\0", 10, &err) == -1 &&
                  strstr(err.msg, "not valid UTF-8"));
    spmodel_free(&t);

    buf_free(&b), buf_free(&b2), buf_free(&b3);
    spmodel_free(&m), spmodel_free(&r), spmodel_free(&r2);
}

static void test_vocab(void) {
    SpModel m;
    build_small(&m);
    spmodel_add_piece(&m, "x", 1, -1996, SP_NORMAL);
    spmodel_add_piece(&m, "y", 1, -8.123456f, SP_NORMAL);
    spmodel_add_piece(&m, "z", 1, -1234567, SP_NORMAL);
    Buf b = {0};
    spmodel_write_vocab(&m, &b);
    test_str_eq(".vocab lines", b.data,
                "<unk>\t0\n<s>\t0\n</s>\t0\n\xe2\x96\x81t\t-0\n\xe2\x96\x81"
                "a\t-1\nx\t-1996\ny\t-8.12346\nz\t-1.23457e+06\n");
    spmsg_set_varint(&m.trainer, SPT_VOCABULARY_OUTPUT_PIECE_SCORE, 0);
    buf_clear(&b);
    spmodel_write_vocab(&m, &b);
    test_cond("vocabulary_output_piece_score=false: pieces only",
              strncmp(b.data, "<unk>\n<s>\n</s>\n", 15) == 0);
    buf_free(&b);
    spmodel_free(&m);
}

/* ---- against SentencePiece itself ---- */

/* Append the file at path to b (read_file, its message dropped). */
static int slurp(const char *path, Buf *b) {
    Err e;
    return read_file(path, b, &e);
}

static int spit(const char *path, const Buf *b) {
    FILE *fp = fopen(path, "wb");
    if (!fp) return -1;
    size_t n = fwrite(b->data, 1, b->len, fp);
    return (fclose(fp) || n != b->len) ? -1 : 0;
}

static void test_against_spm(void) {
    char pybuf[1024];
    const char *py = test_find_python("import sentencepiece", pybuf, sizeof pybuf);
    const char *bin = getenv("BIN"), *tests = getenv("TESTS");
    if (!py || !bin || !tests) {
        printf("test_spmodel: %s: the checks against SentencePiece did not run\n",
               !py ? "no Python with the sentencepiece package"
                   : "BIN/TESTS not set (run through tests/run.sh)");
        return;
    }
    char dir[] = "/tmp/test_spmodel.XXXXXX";
    if (!mkdtemp(dir)) {
        test_cond("mkdtemp", 0);
        return;
    }
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "set -e; cd %s; "
             "'%s/wiki_dump' '%s/data/huwiki-berlin.xml.bz2' | '%s/wiki_strip' -F lines | "
             "'%s/sent_split' -j1 -l hu > c.txt; "
             "'%s/wiki_dump' '%s/data/enwiki-206.xml.bz2' | '%s/wiki_strip' -F lines | "
             "'%s/sent_split' -j1 -l en >> c.txt; "
             "'%s' -c \"import sentencepiece as s; s.SentencePieceTrainer.Train('--input=c.txt "
             "--model_prefix=ref "
             "--vocab_size=2000 --character_coverage=0.9999 --model_type=bpe --minloglevel=2')\" "
             "2>/dev/null",
             dir, bin, tests, bin, bin, bin, tests, bin, bin, py);
    int rc = system(cmd);
    test_cond("spm_train on our prep output", rc == 0);
    char path[600];
    Buf ref = {0}, refvocab = {0}, ours = {0}, vocab = {0};
    snprintf(path, sizeof path, "%s/ref.model", dir);
    slurp(path, &ref);
    snprintf(path, sizeof path, "%s/ref.vocab", dir);
    slurp(path, &refvocab);
    SpModel r, w;
    spmodel_init(&r);
    spmodel_init(&w);
    Err err;
    test_cond("read spm_train's model",
              ref.len > 0 && spmodel_read(&r, ref.data, ref.len, &err) == 0);
    test_cond("2000 pieces", r.n == 2000);
    if (r.n == 2000) {
        test_cond("<unk> <s> </s> first", strcmp(spmodel_piece(&r, 0), "<unk>") == 0 &&
                                              r.type[0] == SP_UNKNOWN && r.type[1] == SP_CONTROL &&
                                              r.type[2] == SP_CONTROL);
        int scores_ok = 1;
        for (size_t i = 3; i < r.n; i++)
            scores_ok &= r.score[i] == -(float)(i - 3) && r.type[i] == SP_NORMAL;
        test_cond("BPE scores -0, -1, -2, ... in id order", scores_ok);
    }
    test_cond("trainer: BPE", spmsg_get_int(&r.trainer, SPT_MODEL_TYPE, 0) == SP_MODEL_BPE);
    test_cond("trainer: vocab_size", spmsg_get_int(&r.trainer, SPT_VOCAB_SIZE, 0) == 2000);
    test_cond("trainer: coverage",
              spmsg_get_float(&r.trainer, SPT_CHARACTER_COVERAGE, 0) == 0.9999f);
    const SpField *cm = spmsg_get(&r.normalizer, SPN_PRECOMPILED_CHARSMAP);
    test_cond("normalizer: a precompiled charsmap", cm && cm->len > 1000);

    /* our writer, from the pieces and the charsmap only */
    for (size_t i = 0; i < r.n; i++)
        spmodel_add_piece(&w, spmodel_piece(&r, i), r.len[i], r.score[i], r.type[i]);
    spmodel_set_bpe_trainer(&w, "c.txt", "ref", 2000, 0.9999f);
    spmodel_set_normalizer(&w, "nmt_nfkc", cm ? r.normalizer.data.data + cm->off : "",
                           cm ? cm->len : 0);
    spmodel_write(&w, &ours);
    size_t diff = 0;
    while (diff < ours.len && diff < ref.len && ours.data[diff] == ref.data[diff])
        diff++;
    test_cond("our .model is spm_train's byte for byte", ours.len == ref.len && diff == ref.len);
    if (diff != ref.len || ours.len != ref.len)
        printf("  first difference at byte %zu (ours %zu bytes, spm_train's %zu)\n", diff, ours.len,
               ref.len);
    spmodel_write_vocab(&w, &vocab);
    test_mem_eq("our .vocab is spm_train's", vocab.data, vocab.len, refvocab.data, refvocab.len);

    /* SentencePiece loads ours and encodes like its own; and an identity
     * normalizer model written from scratch works */
    snprintf(path, sizeof path, "%s/ours.model", dir);
    spit(path, &ours);
    SpModel id;
    spmodel_init(&id);
    spmodel_add_piece(&id, "<unk>", 5, 0, SP_UNKNOWN);
    spmodel_add_piece(&id, "<s>", 3, 0, SP_CONTROL);
    spmodel_add_piece(&id, "</s>", 4, 0, SP_CONTROL);
    const char *ps[] = {"\xe2\x96\x81h",
                        "el",
                        "\xe2\x96\x81hel",
                        "lo",
                        "\xe2\x96\x81hello",
                        "\xe2\x96\x81",
                        "h",
                        "e",
                        "l",
                        "o",
                        "w",
                        "r",
                        "d"};
    for (int i = 0; i < 13; i++)
        spmodel_add_piece(&id, ps[i], strlen(ps[i]), -(float)i, SP_NORMAL);
    spmodel_set_bpe_trainer(&id, NULL, NULL, 16, 1.0f);
    spmodel_set_normalizer(&id, "identity", NULL, 0);
    Buf idb = {0};
    spmodel_write(&id, &idb);
    snprintf(path, sizeof path, "%s/id.model", dir);
    spit(path, &idb);
    snprintf(cmd, sizeof cmd,
             "cd %s && '%s' -c \"\n"
             "import sentencepiece as s\n"
             "a = s.SentencePieceProcessor(model_file='ref.model'); b = "
             "s.SentencePieceProcessor(model_file='ours.model')\n"
             "lines = open('c.txt', encoding='utf-8').read().split(chr(10))[:3000]\n"
             "assert b.get_piece_size() == 2000\n"
             "assert a.encode(lines) == b.encode(lines)\n"
             "assert b.decode(b.encode(lines[5])) == ' '.join(lines[5].split())\n"
             "i = s.SentencePieceProcessor(model_file='id.model')\n"
             "assert i.encode('hello world', out_type=str) == ['\\u2581hello', '\\u2581', 'w', "
             "'o', 'r', 'l', 'd'], i.encode('hello world', out_type=str)\n"
             "\" >/dev/null",
             dir, py);
    test_cond("SentencePiece encodes 3000 lines with our model as with its own; identity model",
              system(cmd) == 0);
    snprintf(cmd, sizeof cmd, "test \"$('%s/vocab_convert' %s/ref.vocab | wc -l)\" -eq %d", bin,
             dir, 2000 - 3 - 1 + 105);
    test_cond("vocab_convert: 2000 pieces give 2101 lines", system(cmd) == 0);

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) printf("could not remove %s\n", dir);
    buf_free(&ref), buf_free(&refvocab), buf_free(&ours), buf_free(&vocab), buf_free(&idb);
    spmodel_free(&r), spmodel_free(&w), spmodel_free(&id);
}

int main(void) {
    test_wire();
    test_vocab();
    test_against_spm();
    return test_report();
}
