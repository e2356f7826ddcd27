/* fuzz_spmodel.c - fuzz target of the SentencePiece .model reader
 * (vocab/spmodel.h spmodel_read) and of the normalizer it carries
 * (vocab/textnorm.h).
 *
 * The input is a .model file (a protobuf ModelProto). A model that
 * spmodel_read accepts has UTF-8 pieces; written again (spmodel_write) it
 * must read back to the same pieces, scores and types; its .vocab text is
 * written. When it carries a precompiled_charsmap (the double array and
 * replacement strings vocab_normalize and vocab_train --normalizer-model
 * take from it), the normalizer is built from it and normalizes a fixed
 * text and the input itself.
 */
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "tests/fuzz/fuzz.h"
#include "vocab/spmodel.h"
#include "vocab/textnorm.h"

static void check_same(const SpModel *a, const SpModel *b) {
    if (a->n != b->n) fuzz_fail("%zu pieces read back as %zu", a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        if (a->len[i] != b->len[i] || memcmp(spmodel_piece(a, i), spmodel_piece(b, i), a->len[i]))
            fuzz_fail("piece %zu changed when written and read back", i);
        if (a->type[i] != b->type[i] || memcmp(&a->score[i], &b->score[i], sizeof(float)))
            fuzz_fail("piece %zu: score or type changed when written and read back", i);
    }
}

/* One input: data as a .model file. Returns 0; a broken promise aborts. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int init;
    if (!init) fuzz_quiet("fuzz_spmodel"), init = 1;
    SpModel m, back;
    spmodel_init(&m);
    spmodel_init(&back);
    Err err;
    Buf out = {0}, text = {0};
    if (spmodel_read(&m, (const char *)data, size, &err)) {
        (void)strlen(err.msg);
        goto done;
    }
    for (size_t i = 0; i < m.n; i++)
        if (!utf8_valid(spmodel_piece(&m, i), m.len[i])) fuzz_fail("piece %zu is not UTF-8", i);
    spmodel_write(&m, &out);
    if (spmodel_read(&back, out.data ? out.data : "", out.len, &err))
        fuzz_fail("an accepted model, written again, is refused: %s", err.msg);
    check_same(&m, &back);
    buf_clear(&out);
    spmodel_write_vocab(&m, &out);

    const SpField *cm = spmsg_get(&m.normalizer, SPN_PRECOMPILED_CHARSMAP);
    if (cm && cm->len) {
        TextNormOpts o = {1, 1, 1};
        TextNorm *sn = textnorm_new(m.normalizer.data.data + cm->off, cm->len, &o, &err);
        if (sn) {
            static const char fixed[] = "  Ａｂｃ　ﾃｽﾄ x\xc2\xa0y \xe2\x80\x8b end ";
            textnorm_normalize(sn, fixed, sizeof fixed - 1, &text);
            buf_clear(&text);
            textnorm_normalize(sn, (const char *)data, size, &text);
            textnorm_free(sn);
        } else {
            (void)strlen(err.msg);
        }
    }
done:
    buf_free(&out), buf_free(&text);
    spmodel_free(&m);
    spmodel_free(&back);
    return 0;
}
