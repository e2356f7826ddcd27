/* fuzz_wikitext.c - fuzz target of the wikitext stripper (prep/wikitext.h).
 *
 * The input is the wikitext of one page. It is cleaned by two cleaners:
 * WikiExtractor's defaults, and every option turned the other way (lists
 * kept, headings dropped, no placeholders, leftover counting, extra
 * namespace names). The output must keep wikitext_clean's promise: lines
 * that are non-empty, without leading or trailing white space, valid
 * UTF-8, each ended by '\n'; and wikitext_has_markup runs on each line.
 */
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "tests/fuzz/fuzz.h"
#include "prep/wikitext.h"

static void check_output(const char *what, const Buf *out) {
    if (!out->len) return;
    const char *s = out->data, *e = s + out->len;
    if (s[out->len - 1] != '\n') fuzz_fail("%s: output does not end with a newline", what);
    while (s < e) {
        const char *nl = memchr(s, '\n', (size_t)(e - s));
        size_t n = (size_t)(nl - s);
        if (n == 0) fuzz_fail("%s: empty paragraph", what);
        if (s[0] == ' ' || s[0] == '\t' || s[0] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t' ||
            s[n - 1] == '\r')
            fuzz_fail("%s: paragraph with leading or trailing white space: [%.*s]", what,
                      (int)(n > 300 ? 300 : n), s);
        if (!utf8_valid(s, n)) fuzz_fail("%s: paragraph not valid UTF-8", what);
        (void)wikitext_has_markup(s, n);
        s = nl + 1;
    }
}

/* One input: data as one page's wikitext, cleaned with both option sets.
 * Returns 0; a broken promise aborts (fuzz_fail). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static WikiText *def, *alt;
    static Buf out;
    if (!def) {
        fuzz_quiet("fuzz_wikitext");
        static const char *const ns[] = {"Fájl", "Kép", "Kategória", "Datei", NULL};
        WikiTextOpts o = {.keep_lists = 1,
                          .keep_sections = WIKITEXT_SECTIONS_DROP,
                          .drop_ns = ns,
                          .no_placeholders = 1,
                          .count_leftover = 1,
                          .faithful = 1};
        def = wikitext_create(NULL);
        alt = wikitext_create(&o);
    }
    buf_clear(&out);
    wikitext_clean(def, (const char *)data, size, &out);
    check_output("defaults", &out);
    buf_clear(&out);
    wikitext_clean(alt, (const char *)data, size, &out);
    check_output("other options", &out);
    WikiTextStats st;
    wikitext_get_stats(alt, &st);
    return 0;
}
