/* fuzz_segmenter.c - fuzz target of the sentence splitter
 * (tokenize/segmenter.h).
 *
 * The input is one paragraph. It is split with the English, the Hungarian
 * and the generic rules (word lists from data/abbrev/); the spans must be
 * what segmenter_split promises: in order, non-empty, non-overlapping,
 * inside the text, without white space at either end.
 */
#include <stdint.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "tokenize/segmenter.h"

static int is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static void check_spans(const char *lang, const char *text, size_t len, const SentSpans *sp,
                        size_t n) {
    if (n != sp->n) fuzz_fail("%s: returned %zu sentences, the array holds %zu", lang, n, sp->n);
    size_t prev = 0;
    for (size_t i = 0; i < sp->n; i++) {
        SentSpan s = sp->v[i];
        if (s.start >= s.end || s.end > len || s.start < prev)
            fuzz_fail("%s: span %zu [%zu, %zu) after %zu, text of %zu bytes", lang, i, s.start,
                      s.end, prev, len);
        if (is_space((unsigned char)text[s.start]) || is_space((unsigned char)text[s.end - 1]))
            fuzz_fail("%s: span %zu [%zu, %zu) has white space at an end", lang, i, s.start, s.end);
        prev = s.end;
    }
}

/* One input: data as one paragraph, split by every rule set. Returns 0;
 * a broken promise aborts (fuzz_fail). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const langs[] = {"en", "hu", "de"};
    static Segmenter *ss[3];
    static SentSpans sp;
    if (!ss[0]) {
        fuzz_quiet("fuzz_segmenter");
        for (int i = 0; i < 3; i++) {
            Err err;
            SegmenterOpts o = {.lang = langs[i]};
            if (!(ss[i] = segmenter_create(&o, NULL, &err))) {
                fprintf(stderr, "fuzz_segmenter: %s\n", err.msg);
                exit(3);
            }
        }
    }
    /* a copy of exactly `size` bytes: reads past the end are ASan reports */
    char *text = malloc(size ? size : 1);
    if (size) memcpy(text, data, size);
    for (int i = 0; i < 3; i++) {
        size_t n = segmenter_split(ss[i], text, size, &sp);
        check_spans(langs[i], text, size, &sp, n);
    }
    free(text);
    return 0;
}
