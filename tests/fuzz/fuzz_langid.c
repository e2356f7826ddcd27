/* fuzz_langid.c - fuzz target of the language model reader
 * (tokenize/langidmodel.h langid_load_mem), the model text_filter --langid-model
 * and langid_train --eval read.
 *
 * The input is a model file (data/langid/model.txt's format). A model that
 * loads has languages with codes; it identifies a fixed text and the input
 * itself: the answer is one of its languages, or "und" when it has
 * nothing to go on, with a confidence in [0, 1] (0 for "und").
 */
#include <stdint.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "tokenize/langid.h"
#include "tokenize/langidmodel.h"

static void identify(const LangId *m, const char *text, size_t n) {
    LangScore sc;
    int r = langid_identify(m, text, n, &sc);
    if (!sc.lang) fuzz_fail("no language");
    if (r < 0) {
        if (strcmp(sc.lang, "und") || sc.conf != 0) fuzz_fail("-1 with %s %g", sc.lang, sc.conf);
        return;
    }
    if (!(sc.conf >= 0 && sc.conf <= 1)) fuzz_fail("confidence %g", sc.conf);
    if (langid_find(m, sc.lang) < 0) fuzz_fail("'%s' is not a language of the model", sc.lang);
}

/* One input: data as a language model file. Returns 0; a broken promise
 * aborts (fuzz_fail). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int init;
    if (!init) fuzz_quiet("fuzz_langid"), init = 1;
    Err err;
    LangId *m = langid_load_mem((const char *)data, size, "fuzz.txt", &err);
    if (!m) {
        (void)strlen(err.msg);
        return 0;
    }
    int n = langid_nlangs(m);
    if (n < 1) fuzz_fail("a model with %d languages", n);
    for (int i = 0; i < n; i++)
        if (!langid_lang(m, i) || !*langid_lang(m, i)) fuzz_fail("language %d has no code", i);
    static const char fixed[] = "Ez egy magyar mondat. This is an English sentence. Καλημέρα.";
    identify(m, fixed, sizeof fixed - 1);
    if (utf8_valid((const char *)data, size)) identify(m, (const char *)data, size);
    langid_free(m);
    return 0;
}
