/* docfmt.c - article layouts: WikiExtractor doc/json and one-article-per-line.
 *
 * The "lines" layout is produced by running the same state machine as
 * formatting.py (spec section 4) over the doc layout of the article, so the
 * quirks carry over byte for byte: the first stored line (the title) is
 * dropped, empty lines are skipped, every other line is rstrip()ped and
 * followed by one space, and a line that merely contains "<doc id=" or
 * "</doc>" opens or closes an article.
 */
#define _GNU_SOURCE /* memmem */
#include "prep/docfmt.h"

#include <string.h>

#include "common/json.h"
#include "common/utf8.h"

int docfmt_parse(const char *name, DocFormat *fmt) {
    if (strcmp(name, "doc") == 0) *fmt = DOC_DOC;
    else if (strcmp(name, "json") == 0) *fmt = DOC_JSON;
    else if (strcmp(name, "lines") == 0) *fmt = DOC_LINES;
    else return -1;
    return 0;
}

/* Python's str.isspace() for one code point. */
static int py_isspace(uint32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

size_t py_rstrip_len(const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    while (n > 0) {
        size_t start = n - 1;
        while (start > 0 && (p[start] & 0xC0) == 0x80 && n - start < 4) start--;
        uint32_t cp;
        size_t k = utf8_decode(p + start, n - start, &cp);
        if (k != n - start || !py_isspace(cp)) break;
        n = start;
    }
    return n;
}

static void write_doc(Buf *out, const DocMeta *m, const char *paras, size_t plen) {
    buf_puts(out, "<doc id=\"");
    buf_puts(out, m->id);
    buf_puts(out, "\" url=\"");
    buf_puts(out, m->url);
    buf_puts(out, "\" title=\"");
    buf_puts(out, m->title);
    buf_puts(out, "\">\n");
    buf_puts(out, m->title);
    buf_puts(out, "\n\n");
    if (plen) buf_append(out, paras, plen);
    else buf_putc(out, '\n');
    buf_puts(out, "\n</doc>\n");
}

static int contains(const char *s, size_t n, const char *needle) {
    return memmem(s, n, needle, strlen(needle)) != NULL;
}

/* formatting.py over one article's doc layout. `acc` collects the stored
 * lines already in output form; it is not reset by "<doc id=" (nor is the
 * Python list), only by "</doc>". */
static void write_lines(Buf *out, const DocMeta *m, const char *paras, size_t plen) {
    Buf doc = {0}, acc = {0};
    write_doc(&doc, m, paras, plen);
    int open = 0, nstored = 0;
    const char *p = doc.data, *end = doc.data + doc.len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (contains(p, n, "<doc id=")) {
            open = 1;
        } else if (contains(p, n, "</doc>")) {
            open = 0;
            buf_append(out, acc.data, acc.len);
            buf_puts(out, "\n\n");
            buf_clear(&acc);
            nstored = 0;
        } else if (open) {
            if (nstored++ > 0 && n > 0) { /* the title line is dropped, "" skipped */
                buf_append(&acc, p, py_rstrip_len(p, n));
                buf_putc(&acc, ' ');
            }
        }
        p = nl ? nl + 1 : end;
    }
    buf_free(&doc);
    buf_free(&acc);
}

void docfmt_write(Buf *out, DocFormat fmt, const DocMeta *m, const char *paras, size_t plen) {
    switch (fmt) {
    case DOC_DOC: write_doc(out, m, paras, plen); break;
    case DOC_LINES: write_lines(out, m, paras, plen); break;
    case DOC_JSON: {
        buf_puts(out, "{\"id\": ");
        json_append_string_ascii(out, m->id, strlen(m->id));
        buf_puts(out, ", \"revid\": ");
        json_append_string_ascii(out, m->revid, strlen(m->revid));
        buf_puts(out, ", \"url\": ");
        json_append_string_ascii(out, m->url, strlen(m->url));
        buf_puts(out, ", \"title\": ");
        json_append_string_ascii(out, m->title, strlen(m->title));
        buf_puts(out, ", \"text\": ");
        /* paragraphs joined by "\n": drop the last terminator */
        json_append_string_ascii(out, paras, plen ? plen - 1 : 0);
        buf_puts(out, "}\n");
        break;
    }
    }
}
