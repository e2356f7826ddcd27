/* fuzz_docfmt.c - fuzz target of the document reader (common/docfmt.h
 * DocReader): the <doc> layout, WikiExtractor's JSON records and plain
 * text, as sent_split reads wiki_strip's output.
 *
 * The input is written to a scratch file and read in each layout (auto,
 * doc, json, lines), once with the default longest line and once with a
 * longest line of 64 bytes, so that the too-long paths run too. Every
 * document's text is valid UTF-8 (invalid bytes are replaced), made of
 * npara paragraphs each ended by '\n', none empty, and never longer than
 * the longest line; a refusal names the input.
 */
#include <stdint.h>
#include <string.h>

#include "common/docfmt.h"
#include "common/io.h"
#include "tests/fuzz/fuzz.h"

static void read_as(const char *path, DocFormat fmt) {
    char *inputs[] = {(char *)path};
    DocReader dr;
    Doc d = {0};
    Err err;
    docreader_init(&dr, inputs, 1, fmt);
    int r;
    while ((r = docreader_next(&dr, &d, &err)) == 1) {
        const char *t = d.text.data ? d.text.data : "";
        if (!utf8_valid(t, d.text.len)) fuzz_fail("layout %d: text not UTF-8", (int)fmt);
        if (d.text.len > io_max_line() + 1)
            fuzz_fail("a document of %zu bytes held, the limit is %zu", d.text.len, io_max_line());
        size_t nl = 0;
        for (size_t i = 0; i < d.text.len; i++)
            if (t[i] == '\n') {
                nl++;
                if (i == 0 || t[i - 1] == '\n') fuzz_fail("an empty paragraph");
            }
        if (nl != d.npara || (d.text.len && t[d.text.len - 1] != '\n'))
            fuzz_fail("%zu paragraphs, %zu line ends", d.npara, nl);
    }
    if (r < 0 && !strstr(err.msg, path)) fuzz_fail("error without the input's name: %s", err.msg);
    docreader_free(&dr);
    doc_free(&d);
}

/* One input: data as a file of documents. Returns 0; a broken promise
 * aborts (fuzz_fail). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static FuzzTmp tmp;
    static int init;
    if (!init) fuzz_quiet("fuzz_docfmt"), init = 1;
    fuzz_tmp_write(&tmp, ".txt", data, size);
    static const DocFormat fmts[] = {DOC_AUTO, DOC_DOC, DOC_JSON, DOC_LINES};
    for (int lim = 0; lim < 2; lim++) {
        io_set_max_line(lim ? 64 : 0);
        for (size_t i = 0; i < sizeof fmts / sizeof *fmts; i++)
            read_as(tmp.path, fmts[i]);
    }
    io_set_max_line(0);
    return 0;
}
