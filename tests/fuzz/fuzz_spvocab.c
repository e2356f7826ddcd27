/* fuzz_spvocab.c - fuzz target of the SentencePiece .vocab reader and its
 * conversion to BERT's vocab.txt (vocab/spvocab.h, what vocab_convert runs).
 *
 * The input is a .vocab file ("PIECE<TAB>SCORE" lines). What
 * spm_vocab_parse accepts is valid UTF-8, one score per piece, no piece
 * twice; it is converted with the defaults and with every character added
 * in both forms, and to an exact size: the list has `size` tokens then,
 * the stats add up, and no token holds a newline (one token a line).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "vocab/spvocab.h"

static void convert(const VocabList *pieces, VocabConvOpts o) {
    VocabList out = {0};
    VocabConvStats st;
    Err err;
    if (vocab_convert(pieces, &o, &out, &st, &err)) {
        (void)strlen(err.msg);
        return;
    }
    if (st.total != out.n) fuzz_fail("stats say %zu tokens, the list has %zu", st.total, out.n);
    if (o.size >= 0 && out.n != (size_t)o.size)
        fuzz_fail("--size %lld gave %zu tokens", (long long)o.size, out.n);
    for (size_t i = 0; i < out.n; i++)
        if (memchr(vocablist_at(&out, i), '\n', out.len[i]))
            fuzz_fail("token %zu holds a newline", i);
    vocablist_free(&out);
}

/* One input: data as a .vocab file. Returns 0; a broken promise aborts. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int init;
    if (!init) fuzz_quiet("fuzz_spvocab"), init = 1;
    VocabList pieces = {0};
    double *scores = NULL;
    Err err;
    if (spm_vocab_parse((const char *)data, size, "fuzz.vocab", &pieces, &scores, &err)) {
        if (strncmp(err.msg, "fuzz.vocab:", 11)) fuzz_fail("error without file:line: %s", err.msg);
        vocablist_free(&pieces);
        free(scores);
        return 0;
    }
    for (size_t i = 0; i < pieces.n; i++) {
        if (!utf8_valid(vocablist_at(&pieces, i), pieces.len[i]))
            fuzz_fail("piece %zu is not UTF-8", i);
        if (scores[i] != scores[i]) fuzz_fail("piece %zu: score NaN", i);
    }
    VocabConvOpts o = VOCABCONV_DEFAULTS;
    convert(&pieces, o);
    o.add_chars = VOCABCONV_CHARS_BOTH;
    o.unused = 3;
    o.size = 50;
    convert(&pieces, o);
    vocablist_free(&pieces);
    free(scores);
    return 0;
}
