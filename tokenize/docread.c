/* docread.c - documents from WikiExtractor doc/json layouts or plain text;
 * see docread.h for the layouts. */
#include "tokenize/docread.h"

#include <string.h>

#include "common/json.h"
#include "common/utf8.h"

void docreader_init(DocReader *dr, char **inputs, int n, DocInFormat fmt) {
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

int docread_parse_format(const char *name, DocInFormat *fmt) {
    if (!strcmp(name, "auto")) *fmt = DOCIN_AUTO;
    else if (!strcmp(name, "doc")) *fmt = DOCIN_DOC;
    else if (!strcmp(name, "json")) *fmt = DOCIN_JSON;
    else if (!strcmp(name, "lines") || !strcmp(name, "text")) *fmt = DOCIN_TEXT;
    else return -1;
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
    while ((r = next_line(dr, s, n, ln, err)) == 1 && is_blank(*s, *n)) {}
    return r;
}

static void add_para(DocReader *dr, Doc *d, const char *s, size_t n) {
    dr->bad_utf8 += utf8_append_repair(&d->text, s, n);
    buf_putc(&d->text, '\n');
    d->npara++;
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
        if (n) add_para(dr, d, s, n);
    }
    if (r < 0) return r;
    dr->malformed++;
    warn("%s:%llu: <doc> without </doc> at the end of the input", d->file, (unsigned long long)d->line);
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
            if (m) add_para(dr, d, p, m);
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
    add_para(dr, d, s, n);
    while ((r = next_line(dr, &s, &n, &ln, err)) == 1 && !is_blank(s, n)) add_para(dr, d, s, n);
    return r < 0 ? -1 : 1;
}

int docreader_next(DocReader *dr, Doc *d, Err *err) {
    if (dr->fmt == DOCIN_AUTO) {
        const char *s;
        size_t n;
        uint64_t ln;
        int r = next_nonblank(dr, &s, &n, &ln, err);
        if (r <= 0) return r;
        dr->fmt = n >= 5 && !memcmp(s, "<doc ", 5) ? DOCIN_DOC : s[0] == '{' ? DOCIN_JSON : DOCIN_TEXT;
        hold(dr, s, n, ln);
    }
    switch (dr->fmt) {
    case DOCIN_DOC: return read_doc(dr, d, err);
    case DOCIN_JSON: return read_json(dr, d, err);
    default: return read_text(dr, d, err);
    }
}
