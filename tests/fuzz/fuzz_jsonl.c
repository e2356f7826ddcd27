/* fuzz_jsonl.c - fuzz target of the JSON Lines reader (common/json.h): the
 * iterator that wiki_strip, sent_split and the HDF5/trainer configs walk
 * records with, and the string decoder.
 *
 * The input is JSON Lines. Every line is walked as an object and as an
 * array, nested values too (to a depth of 64); every key and string value
 * is decoded. A walk never hands out a span outside its text; an error
 * has a message and a position inside the text. A string that decodes is
 * written again (json_append_string, and the ensure_ascii form when it is
 * valid UTF-8) and must decode back to the same bytes; integers parse or
 * not without harm.
 */
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "common/json.h"
#include "tests/fuzz/fuzz.h"

static Buf dec, enc, back;

static void check_string(const char *raw, size_t n) {
    buf_clear(&dec);
    if (json_decode_string(&dec, raw, n)) return;
    buf_clear(&enc);
    if (utf8_valid(dec.data ? dec.data : "", dec.len)) {
        json_append_string_ascii(&enc, dec.data ? dec.data : "", dec.len);
        buf_clear(&back);
        if (json_decode_string(&back, enc.data, enc.len) || back.len != dec.len ||
            memcmp(back.data, dec.data ? dec.data : "", dec.len))
            fuzz_fail("a string written with \\u escapes does not decode back");
        buf_clear(&enc);
        json_append_string(&enc, dec.data ? dec.data : "", dec.len);
        buf_clear(&back);
        if (json_decode_string(&back, enc.data, enc.len) || back.len != dec.len ||
            memcmp(back.data, dec.data ? dec.data : "", dec.len))
            fuzz_fail("a string written again does not decode back");
    }
}

static void walk(const char *text, size_t n, char kind, int depth) {
    JsonIter it;
    const char *k, *v;
    size_t kn, vn;
    if (json_iter_init(&it, text, n, kind)) {
        if (!it.error || it.pos > n) fuzz_fail("init error without message or position");
        return;
    }
    int r;
    while ((r = json_iter_next(&it, &k, &kn, &v, &vn)) == 1) {
        if (v < text || v + vn > text + n) fuzz_fail("a value outside its text");
        if (k) {
            if (k < text || k + kn > text + n) fuzz_fail("a key outside its text");
            if (kn >= 1) {
                /* the raw key without quotes: decode it with them */
                if (k > text && k[-1] == '"' && k + kn < text + n && k[kn] == '"')
                    check_string(k - 1, kn + 2);
            }
        }
        if (!vn) continue;
        if (v[0] == '"') {
            check_string(v, vn);
        } else if ((v[0] == '{' || v[0] == '[') && depth < 64) {
            walk(v, vn, v[0], depth + 1);
        } else {
            int64_t x;
            (void)json_to_i64(v, vn, &x);
        }
    }
    if (r < 0 && (!it.error || it.pos > n)) fuzz_fail("an error without message or position");
}

/* One input: data as JSON Lines. Returns 0; a broken promise aborts. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int init;
    if (!init) fuzz_quiet("fuzz_jsonl"), init = 1;
    char *copy = malloc(size ? size : 1); /* exactly size bytes, for ASan */
    if (size) memcpy(copy, data, size);
    const char *p = copy, *end = copy + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        walk(p, n, '{', 0);
        walk(p, n, '[', 0);
        p += n + 1;
    }
    free(copy);
    return 0;
}
