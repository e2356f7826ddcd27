/* docfmt.c - the document interchange format (see docfmt.h): writing the
 * WikiExtractor doc/json layouts and one-article-per-line, and reading any
 * of them (or plain text) back as documents.
 *
 * The "lines" layout is produced by running the same state machine as
 * formatting.py (spec section 4) over the doc layout of the article, so the
 * quirks carry over byte for byte: the first stored line (the title) is
 * dropped, empty lines are skipped, every other line is rstrip()ped and
 * followed by one space, and a line that merely contains "<doc id=" or
 * "</doc>" opens or closes an article.
 */
#define _GNU_SOURCE /* memmem */
#include "common/docfmt.h"

#include <string.h>

#include "common/json.h"
#include "common/utf8.h"

int docfmt_parse(const char *name, DocFormat *fmt) {
    if (strcmp(name, "doc") == 0)
        *fmt = DOC_DOC;
    else if (strcmp(name, "json") == 0)
        *fmt = DOC_JSON;
    else if (strcmp(name, "lines") == 0)
        *fmt = DOC_LINES;
    else
        return -1;
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
        while (start > 0 && (p[start] & 0xC0) == 0x80 && n - start < 4)
            start--;
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
    if (plen)
        buf_append(out, paras, plen);
    else
        buf_putc(out, '\n');
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
    case DOC_DOC:
        write_doc(out, m, paras, plen);
        break;
    case DOC_LINES:
        write_lines(out, m, paras, plen);
        break;
    case DOC_AUTO:
        break; /* a reading layout only: docfmt_parse never gives it */
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

/* ---- reading ---- */

void docreader_init(DocReader *dr, char **inputs, int n, DocFormat fmt) {
    memset(dr, 0, sizeof *dr);
    reader_init(&dr->rd, inputs, n);
    dr->fmt = fmt;
}

void docreader_free(DocReader *dr) {
    reader_free(&dr->rd);
    buf_free(&dr->held);
}

void doc_free(Doc *d) {
    buf_free(&d->id);
    buf_free(&d->title);
    buf_free(&d->url);
    buf_free(&d->text);
}

int docfmt_parse_input(const char *name, DocFormat *fmt) {
    if (!strcmp(name, "auto"))
        *fmt = DOC_AUTO;
    else if (!strcmp(name, "doc"))
        *fmt = DOC_DOC;
    else if (!strcmp(name, "json"))
        *fmt = DOC_JSON;
    else if (!strcmp(name, "lines") || !strcmp(name, "text"))
        *fmt = DOC_LINES;
    else
        return -1;
    return 0;
}

/* Next line (without "\n" or "\r\n"); 1, 0 at the end, -1 on error. */
static int next_line(DocReader *dr, const char **line, size_t *len, uint64_t *lineno, Err *err) {
    if (dr->pending) {
        dr->pending = 0;
        *line = dr->held.data;
        *len = dr->held.len;
        *lineno = dr->held_line;
        return 1;
    }
    int r = reader_next_line(&dr->rd, line, len, err);
    if (r == 1) {
        if (dr->rd.line == 1 && *len >= 3 && memcmp(*line, "\xef\xbb\xbf", 3) == 0)
            *line += 3, *len -= 3; /* a byte order mark at the start of an input */
        if (*len && (*line)[*len - 1] == '\r') (*len)--;
        *lineno = dr->rd.line;
    }
    return r;
}

static void hold(DocReader *dr, const char *line, size_t len, uint64_t lineno) {
    if (line == dr->held.data) { /* putting back the line just taken */
        dr->pending = 1;
        return;
    }
    buf_clear(&dr->held);
    buf_append(&dr->held, line, len);
    dr->held_line = lineno;
    dr->pending = 1;
}

static int is_blank(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t') return 0;
    return 1;
}

/* Next line that is not blank; 1, 0 at the end, -1 on error. */
static int next_nonblank(DocReader *dr, const char **s, size_t *n, uint64_t *ln, Err *err) {
    int r;
    while ((r = next_line(dr, s, n, ln, err)) == 1 && is_blank(*s, *n)) {
    }
    return r;
}

/* Add paragraph s[0..n) to d; a document growing past the longest line
 * (io.h) is an error (-1, err set), so one document never holds more. The
 * text is measured as held, after the repair of invalid UTF-8 (which may
 * triple a paragraph), with the newlines between paragraphs. */
static int add_para(DocReader *dr, Doc *d, const char *s, size_t n, Err *err) {
    int fits = d->text.len + n <= dr->rd.max_line; /* the raw bytes first */
    if (fits) {
        dr->bad_utf8 += utf8_append_repair(&d->text, s, n);
        fits = d->text.len <= dr->rd.max_line;
    }
    if (!fits) {
        io_err_too_long(err, d->file, d->line,
                        dr->fmt == DOC_DOC ? "document (a <doc> block)"
                                           : "document (lines up to a blank line)");
        buf_free(&d->text);
        return -1;
    }
    buf_putc(&d->text, '\n');
    d->npara++;
    return 0;
}

static void doc_reset(Doc *d, const DocReader *dr, uint64_t line) {
    buf_clear(&d->id);
    buf_clear(&d->title);
    buf_clear(&d->url);
    buf_clear(&d->text);
    d->npara = 0;
    d->line = line;
    d->file = dr->rd.name;
}

/* Copy the attribute value between `key` and `stop` (or the line end). */
static void attr(Buf *out, const char *s, size_t n, const char *key, const char *stop) {
    const char *a = NULL;
    size_t k = strlen(key);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(s + i, key, k)) {
            a = s + i + k;
            break;
        }
    if (!a) return;
    const char *end = s + n, *b = NULL;
    size_t sl = strlen(stop);
    for (const char *p = end - sl; p >= a; p--) /* the last stop: titles may hold quotes */
        if (!memcmp(p, stop, sl)) {
            b = p;
            break;
        }
    if (!b) b = end;
    buf_append(out, a, (size_t)(b - a));
}

static int read_doc(DocReader *dr, Doc *d, Err *err) {
    const char *s;
    size_t n;
    uint64_t ln;
    int r;
    while ((r = next_line(dr, &s, &n, &ln, err)) == 1) {
        if (n >= 5 && !memcmp(s, "<doc ", 5)) break;
        if (!is_blank(s, n)) dr->malformed++;
    }
    if (r <= 0) return r;
    doc_reset(d, dr, ln);
    attr(&d->id, s, n, "id=\"", "\" url=");
    attr(&d->url, s, n, "url=\"", "\" title=");
    attr(&d->title, s, n, "title=\"", "\">");
    int seen_title = 0;
    while ((r = next_line(dr, &s, &n, &ln, err)) == 1) {
        if (n == 6 && !memcmp(s, "</doc>", 6)) return 1;
        if (n >= 5 && !memcmp(s, "<doc ", 5)) { /* the previous one never closed */
            hold(dr, s, n, ln);
            dr->malformed++;
            warn("%s:%llu: <doc> without </doc>", d->file, (unsigned long long)d->line);
            return 1;
        }
        if (!seen_title) {
            seen_title = 1;
            continue;
        }
        if (n && add_para(dr, d, s, n, err)) return -1;
    }
    if (r < 0) return r;
    dr->malformed++;
    warn("%s:%llu: <doc> without </doc> at the end of the input", d->file,
         (unsigned long long)d->line);
    return 1;
}

static int read_json(DocReader *dr, Doc *d, Err *err) {
    const char *s;
    size_t n;
    uint64_t ln;
    int r;
    Buf text = {0};
    while ((r = next_nonblank(dr, &s, &n, &ln, err)) == 1) {
        doc_reset(d, dr, ln);
        buf_clear(&text);
        JsonIter it;
        const char *k, *v;
        size_t kn, vn;
        int jr = json_iter_init(&it, s, n, '{'), have_text = 0;
        while (jr == 0 || jr == 1) {
            if ((jr = json_iter_next(&it, &k, &kn, &v, &vn)) != 1) break;
            Buf *dst = json_key_is(k, kn, "text")    ? &text
                       : json_key_is(k, kn, "title") ? &d->title
                       : json_key_is(k, kn, "url")   ? &d->url
                       : json_key_is(k, kn, "id")    ? &d->id
                                                     : NULL;
            if (!dst) continue;
            if (vn && v[0] == '"') {
                if (json_decode_string(dst, v, vn)) jr = -1;
            } else
                buf_append(dst, v, vn);
            have_text |= dst == &text;
        }
        if (jr < 0 || !have_text) {
            dr->malformed++;
            warn("%s:%llu: malformed JSON record skipped%s%s", dr->rd.name, (unsigned long long)ln,
                 it.error ? ": " : " (no \"text\")", it.error ? it.error : "");
            continue;
        }
        const char *p = text.data ? text.data : "", *end = p + text.len;
        while (p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t m = nl ? (size_t)(nl - p) : (size_t)(end - p);
            if (m && add_para(dr, d, p, m, err)) {
                buf_free(&text);
                return -1;
            }
            p += m + 1;
        }
        buf_free(&text);
        return 1;
    }
    buf_free(&text);
    return r;
}

static int read_text(DocReader *dr, Doc *d, Err *err) {
    const char *s;
    size_t n;
    uint64_t ln;
    int r = next_nonblank(dr, &s, &n, &ln, err);
    if (r <= 0) return r;
    doc_reset(d, dr, ln);
    if (add_para(dr, d, s, n, err)) return -1;
    while ((r = next_line(dr, &s, &n, &ln, err)) == 1 && !is_blank(s, n))
        if (add_para(dr, d, s, n, err)) return -1;
    return r < 0 ? -1 : 1;
}

int docreader_next(DocReader *dr, Doc *d, Err *err) {
    if (dr->fmt == DOC_AUTO) {
        const char *s;
        size_t n;
        uint64_t ln;
        int r = next_nonblank(dr, &s, &n, &ln, err);
        if (r <= 0) return r;
        dr->fmt = n >= 5 && !memcmp(s, "<doc ", 5) ? DOC_DOC : s[0] == '{' ? DOC_JSON : DOC_LINES;
        hold(dr, s, n, ln);
    }
    switch (dr->fmt) {
    case DOC_DOC:
        return read_doc(dr, d, err);
    case DOC_JSON:
        return read_json(dr, d, err);
    default:
        return read_text(dr, d, err);
    }
}
