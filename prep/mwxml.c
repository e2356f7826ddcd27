/* mwxml.c - MediaWiki XML export (export-0.x schema) parser on expat.
 *
 * The only file that includes expat.h. One MwXml struct is expat's
 * userData; the start/end/character handlers run a small state machine
 * keyed on element depth:
 *
 *   depth 1  <mediawiki>
 *   depth 2    <siteinfo> ... </siteinfo>      sitename dbname base generator
 *              <page>                           case namespaces/namespace@key
 *   depth 3      <title> <ns> <id> <redirect title=".."/> <revision>
 *   depth 4        <id> <text>                  (inside <revision>)
 *
 * Text arrives in pieces and is appended to per-field Bufs; the page is
 * delivered from the </page> handler. For history dumps with several
 * revisions, the last one wins. Before bytes reach expat they pass through
 * a UTF-8 repair step that never splits a character across chunks, so the
 * parse is identical for any chunking (tests feed byte-at-a-time). A dump
 * whose XML declaration says ISO-8859-1 is converted to UTF-8 first (the
 * parser itself always reads UTF-8); other declared encodings but UTF-8
 * and US-ASCII are refused.
 *
 * Schema reference: https://www.mediawiki.org/xml/export-0.11.xsd
 */
#include "prep/mwxml.h"

#include <expat.h>
#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "common/io.h"
#include "common/utf8.h"

enum Field {
    F_NONE,
    F_TITLE,
    F_NS,
    F_ID,
    F_REVID,
    F_TEXT,
    F_SITENAME,
    F_DBNAME,
    F_BASE,
    F_GENERATOR,
    F_CASE,
    F_NAMESPACE,
};

enum { SNIFF_MAX = 4096, MAX_NAMESPACES = 1 << 16 };

struct MwXml {
    XML_Parser xp;
    MwXmlOpts opts;
    WikiPageFn on_page;
    WikiSiteFn on_site;
    void *ctx;

    int depth;
    int in_siteinfo, in_page, in_revision;
    enum Field field;
    int seen_root; /* first element checked */
    int bad_root;  /* first element was not <mediawiki>/<page> */
    char bad_root_name[64];
    int root_closed;
    int fragment; /* input started with <page>: synthetic root added */
    int sniffing; /* still collecting the first bytes */
    Buf sniff;

    /* page under construction */
    Buf title, text, redirect, num;
    int64_t id, revid, ns;
    int has_title, has_redirect, text_too_large, title_too_large;
    uint64_t page_line;
    const char *bad_num;           /* first element that held no valid number */
    char bad_text[UTF8_QUOTE_CAP]; /* its text, for the message */
    uint64_t bad_line;

    /* siteinfo under construction */
    WikiSiteinfo site;
    Buf sfield;
    int ns_key;
    char *ns_case;

    /* UTF-8 repair across chunk boundaries */
    char carry[4];
    size_t ncarry;
    Buf fix;
    int latin1; /* the XML declaration says ISO-8859-1: bytes become UTF-8 first */
    Buf latin;  /* that conversion's output */

    MwXmlStats stats;
    int64_t prefix_len; /* bytes of synthetic prefix fed to expat */

    /* bounded memory: expat buffers a token (a tag, a comment) until it
     * ends, so the bytes fed since the end of the last event are watched */
    int64_t fed;         /* bytes given to expat */
    int64_t events_end;  /* where the last event (any handler) ended */
    char oversize[160];  /* what was too large, when the parser was stopped for it */
    int64_t oversize_at; /* "markup": where it starts */
};

/* ---- canonical namespace names ---- */

static const struct {
    int key;
    const char *name;
} canonical_ns[] = {
    {-2, "Media"},         {-1, "Special"},  {1, "Talk"},           {2, "User"},
    {3, "User talk"},      {4, "Project"},   {5, "Project talk"},   {6, "File"},
    {7, "File talk"},      {8, "MediaWiki"}, {9, "MediaWiki talk"}, {10, "Template"},
    {11, "Template talk"}, {12, "Help"},     {13, "Help talk"},     {14, "Category"},
    {15, "Category talk"}, {828, "Module"},  {829, "Module talk"},
};

const char *wiki_canonical_ns(int key) {
    for (size_t i = 0; i < sizeof canonical_ns / sizeof canonical_ns[0]; i++)
        if (canonical_ns[i].key == key) return canonical_ns[i].name;
    return NULL;
}

const char *mwxml_expat_version(void) {
    static char v[32];
    XML_Expat_Version ev = XML_ExpatVersionInfo();
    snprintf(v, sizeof v, "%d.%d.%d", ev.major, ev.minor, ev.micro);
    return v;
}

/* ---- helpers ---- */

static const char *attr(const XML_Char **atts, const char *name) {
    for (int i = 0; atts[i]; i += 2)
        if (strcmp(atts[i], name) == 0) return atts[i + 1];
    return NULL;
}

static int parse_i64(const Buf *b, int64_t *out) {
    const char *p = b->data ? b->data : "";
    size_t n = b->len;
    while (n && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
        p++, n--;
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\n' || p[n - 1] == '\t' || p[n - 1] == '\r'))
        n--;
    if (!n) return -1;
    int neg = *p == '-';
    size_t i = neg ? 1 : 0;
    if (i == n) return -1;
    int64_t v = 0;
    for (; i < n; i++) {
        if (p[i] < '0' || p[i] > '9' || v > (INT64_MAX - 9) / 10) return -1;
        v = v * 10 + (p[i] - '0');
    }
    *out = neg ? -v : v;
    return 0;
}

static void page_reset(MwXml *wd) {
    buf_clear(&wd->title);
    buf_clear(&wd->text);
    buf_clear(&wd->redirect);
    wd->id = wd->revid = wd->ns = 0;
    wd->has_title = wd->has_redirect = wd->text_too_large = wd->title_too_large = 0;
    wd->bad_num = NULL;
}

static char *bufdup(const Buf *b) { return xstrdup(b->data ? b->data : ""); }

/* ---- expat handlers ---- */

/* Stop the parser for something too large, `what` (parse reports it). */
static void stop_oversize(MwXml *wd, const char *what) {
    snprintf(wd->oversize, sizeof wd->oversize, "%s", what);
    XML_StopParser(wd->xp, XML_FALSE);
}

/* The error for markup longer than max_markup that starts at XML byte `at`
 * (counted without the synthetic prefix of a fragment). */
static int markup_error(MwXml *wd, int64_t at, Err *err) {
    char sz[32];
    at -= wd->prefix_len;
    return err_set(err,
                   "%s: XML byte %lld: markup (a tag, comment or declaration) longer than %s "
                   "(--max-line-bytes raises the limit)",
                   wd->opts.name, (long long)(at < 0 ? 0 : at),
                   io_size_str(wd->opts.max_markup, sz));
}

/* Every handler first notes where its event ends in the input; a markup
 * event (not text) longer than max_markup stops the parser, as the same
 * markup cut by a chunk end does in parse(), so that chunking never
 * changes the outcome. */
static void mark(MwXml *wd, int markup) {
    int64_t at = (int64_t)XML_GetCurrentByteIndex(wd->xp), n = XML_GetCurrentByteCount(wd->xp);
    wd->events_end = at + n;
    if (markup && n > (int64_t)wd->opts.max_markup && !wd->oversize[0]) {
        wd->oversize_at = at;
        stop_oversize(wd, "markup");
    }
}

/* Markup without a handler of its own (comments, declarations, white
 * space outside the root): its position, and its length when it is markup. */
static void XMLCALL on_default(void *ud, const XML_Char *s, int len) {
    mark(ud, len > 0 && s[0] == '<');
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts) {
    MwXml *wd = ud;
    mark(wd, 1);
    wd->depth++;
    if (!wd->seen_root) {
        wd->seen_root = 1;
        if (strcmp(name, "mediawiki") != 0) {
            wd->bad_root = 1;
            snprintf(wd->bad_root_name, sizeof wd->bad_root_name, "%s", name);
            XML_StopParser(wd->xp, XML_FALSE);
        }
        return;
    }
    if (wd->depth == 2) {
        if (strcmp(name, "page") == 0) {
            wd->in_page = 1;
            page_reset(wd);
            wd->page_line = (uint64_t)XML_GetCurrentLineNumber(wd->xp);
        } else if (strcmp(name, "siteinfo") == 0)
            wd->in_siteinfo = 1;
        return;
    }
    wd->field = F_NONE;
    if (wd->in_page) {
        if (wd->depth == 3) {
            if (strcmp(name, "title") == 0) {
                wd->field = F_TITLE;
                buf_clear(&wd->title);
                wd->has_title = 1;
            } else if (strcmp(name, "ns") == 0 || strcmp(name, "id") == 0) {
                wd->field = name[0] == 'n' ? F_NS : F_ID;
                buf_clear(&wd->num);
            } else if (strcmp(name, "redirect") == 0) {
                const char *t = attr(atts, "title");
                wd->has_redirect = 1;
                buf_clear(&wd->redirect);
                if (t) buf_puts(&wd->redirect, t);
            } else if (strcmp(name, "revision") == 0) {
                wd->in_revision = 1;
                buf_clear(&wd->text);
                wd->text_too_large = 0;
                wd->revid = 0;
            }
        } else if (wd->depth == 4 && wd->in_revision) {
            if (strcmp(name, "text") == 0) {
                wd->field = F_TEXT;
                buf_clear(&wd->text);
            } else if (strcmp(name, "id") == 0) {
                wd->field = F_REVID;
                buf_clear(&wd->num);
            }
        }
    } else if (wd->in_siteinfo) {
        buf_clear(&wd->sfield);
        if (wd->depth == 3) {
            if (strcmp(name, "sitename") == 0)
                wd->field = F_SITENAME;
            else if (strcmp(name, "dbname") == 0)
                wd->field = F_DBNAME;
            else if (strcmp(name, "base") == 0)
                wd->field = F_BASE;
            else if (strcmp(name, "generator") == 0)
                wd->field = F_GENERATOR;
            else if (strcmp(name, "case") == 0)
                wd->field = F_CASE;
        } else if (wd->depth == 4 && strcmp(name, "namespace") == 0) {
            const char *k = attr(atts, "key"), *c = attr(atts, "case");
            wd->field = F_NAMESPACE;
            wd->ns_key = k ? atoi(k) : 0;
            free(wd->ns_case);
            wd->ns_case = xstrdup(c ? c : "first-letter");
        }
    }
}

/* Parse the number of the element just closed into *out. A value that is
 * not a whole number in range (99999999999999999999, 12a) sets *out to 0
 * and marks the page bad; the first such element is kept for the message. */
static void page_number(MwXml *wd, const char *what, int64_t *out) {
    if (parse_i64(&wd->num, out) == 0) return;
    *out = 0;
    if (wd->bad_num) return;
    wd->bad_num = what;
    wd->bad_line = (uint64_t)XML_GetCurrentLineNumber(wd->xp);
    utf8_quote(wd->bad_text, sizeof wd->bad_text, wd->num.data ? wd->num.data : "", wd->num.len);
}

static void deliver_page(MwXml *wd) {
    wd->stats.pages++;
    if (wd->text_too_large || wd->title_too_large) {
        wd->stats.too_large++;
        warn("%s:%llu: page '%.*s' skipped: %s longer than %zu bytes", wd->opts.name,
             (unsigned long long)wd->page_line, (int)(wd->title.len > 200 ? 200 : wd->title.len),
             wd->title.data ? wd->title.data : "", wd->title_too_large ? "title" : "text",
             wd->opts.max_text);
        return;
    }
    if (wd->bad_num) {
        wd->stats.bad_number++;
        warn("%s:%llu: page '%.*s' skipped: %s '%s' is not a whole number in range", wd->opts.name,
             (unsigned long long)wd->bad_line, (int)(wd->title.len > 200 ? 200 : wd->title.len),
             wd->title.data ? wd->title.data : "", wd->bad_num, wd->bad_text);
        return;
    }
    if (!wd->on_page) return;
    WikiPage p = {
        .id = wd->id,
        .revid = wd->revid,
        .ns = wd->ns,
        .title = wd->title.data ? wd->title.data : "",
        .title_len = wd->title.len,
        .redirect = wd->has_redirect ? (wd->redirect.data ? wd->redirect.data : "") : NULL,
        .redirect_len = wd->redirect.len,
        .text = wd->text.data ? wd->text.data : "",
        .text_len = wd->text.len,
        .line = wd->page_line,
    };
    wd->on_page(wd->ctx, &p);
}

static void XMLCALL on_end(void *ud, const XML_Char *name) {
    MwXml *wd = ud;
    mark(wd, 1);
    int d = wd->depth--;
    (void)name;
    if (d == 1) {
        wd->root_closed = 1;
        return;
    }
    if (wd->in_page) {
        if (d == 2) {
            deliver_page(wd);
            wd->in_page = 0;
        } else if (d == 3) {
            if (wd->field == F_NS)
                page_number(wd, "<ns>", &wd->ns);
            else if (wd->field == F_ID)
                page_number(wd, "<id>", &wd->id);
            else if (strcmp(name, "revision") == 0)
                wd->in_revision = 0;
        } else if (d == 4 && wd->field == F_REVID)
            page_number(wd, "revision <id>", &wd->revid);
    } else if (wd->in_siteinfo) {
        if (d == 2) {
            wd->in_siteinfo = 0;
            if (wd->on_site) wd->on_site(wd->ctx, &wd->site);
        } else if (d == 3) {
            char **slot = NULL;
            switch (wd->field) {
            case F_SITENAME:
                slot = &wd->site.sitename;
                break;
            case F_DBNAME:
                slot = &wd->site.dbname;
                break;
            case F_BASE:
                slot = &wd->site.base;
                break;
            case F_GENERATOR:
                slot = &wd->site.generator;
                break;
            case F_CASE:
                slot = &wd->site.casing;
                break;
            default:
                break;
            }
            if (slot) {
                free(*slot);
                *slot = bufdup(&wd->sfield);
            }
        } else if (d == 4 && wd->field == F_NAMESPACE) {
            WikiSiteinfo *s = &wd->site;
            if (s->nns == MAX_NAMESPACES) {
                stop_oversize(wd, "more than 65536 <namespace>s in <siteinfo>");
                return;
            }
            s->ns = xrealloc(s->ns, (size_t)(s->nns + 1) * sizeof *s->ns);
            const char *canon = wiki_canonical_ns(wd->ns_key);
            s->ns[s->nns++] = (WikiNamespace){
                .key = wd->ns_key,
                .name = bufdup(&wd->sfield),
                .canonical = xstrdup(canon ? canon : ""),
                .casing = xstrdup(wd->ns_case ? wd->ns_case : "first-letter"),
            };
        }
    }
    wd->field = F_NONE;
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len) {
    MwXml *wd = ud;
    mark(wd, 0);
    switch (wd->field) {
    case F_NONE:
        return;
    case F_TEXT:
        if (wd->text_too_large) return;
        if (wd->opts.max_text && wd->text.len + (size_t)len > wd->opts.max_text) {
            wd->text_too_large = 1;
            buf_free(&wd->text); /* give the memory back now */
            return;
        }
        buf_append(&wd->text, s, (size_t)len);
        return;
    case F_TITLE: /* the page is skipped; the title's start is kept for the warning */
        if (wd->title_too_large) return;
        if (wd->opts.max_text && wd->title.len + (size_t)len > wd->opts.max_text) {
            wd->title_too_large = 1;
            return;
        }
        buf_append(&wd->title, s, (size_t)len);
        return;
    case F_NS:
    case F_ID:
    case F_REVID:
        if (wd->num.len < 64) buf_append(&wd->num, s, (size_t)len);
        return;
    default:
        if (wd->opts.max_text && wd->sfield.len + (size_t)len > wd->opts.max_text) {
            char what[96];
            snprintf(what, sizeof what,
                     "a <siteinfo> field longer than %zu bytes (--max-page-bytes raises the limit)",
                     wd->opts.max_text);
            stop_oversize(wd, what);
            return;
        }
        buf_append(&wd->sfield, s, (size_t)len);
        return;
    }
}

/* ---- lifecycle ---- */

MwXml *mwxml_create(const MwXmlOpts *opts, WikiPageFn on_page, WikiSiteFn on_site, void *ctx) {
    MwXml *wd = xcalloc(1, sizeof *wd);
    wd->opts = *opts;
    if (!wd->opts.name) wd->opts.name = "-";
    wd->on_page = on_page;
    wd->on_site = on_site;
    wd->ctx = ctx;
    wd->sniffing = 1;
    wd->xp = XML_ParserCreate("UTF-8");
    if (!wd->xp) die("out of memory creating the XML parser");
    XML_SetUserData(wd->xp, wd);
    XML_SetElementHandler(wd->xp, on_start, on_end);
    XML_SetCharacterDataHandler(wd->xp, on_text);
    XML_SetDefaultHandlerExpand(wd->xp, on_default);
    if (!wd->opts.max_markup) wd->opts.max_markup = io_max_line();
    return wd;
}

void mwxml_destroy(MwXml *wd) {
    if (!wd) return;
    XML_ParserFree(wd->xp);
    buf_free(&wd->sniff);
    buf_free(&wd->title);
    buf_free(&wd->text);
    buf_free(&wd->redirect);
    buf_free(&wd->num);
    buf_free(&wd->sfield);
    buf_free(&wd->fix);
    buf_free(&wd->latin);
    WikiSiteinfo *s = &wd->site;
    free(s->sitename), free(s->dbname), free(s->base), free(s->generator), free(s->casing);
    for (int i = 0; i < s->nns; i++)
        free(s->ns[i].name), free(s->ns[i].canonical), free(s->ns[i].casing);
    free(s->ns);
    free(wd->ns_case);
    free(wd);
}

const MwXmlStats *mwxml_stats(const MwXml *wd) { return &wd->stats; }

const WikiSiteinfo *mwxml_siteinfo(const MwXml *wd) { return &wd->site; }

/* ---- feeding ---- */

int mwxml_feed(MwXml *wd, const char *data, size_t len, Err *err);

static int xml_error(MwXml *wd, Err *err) {
    if (!strcmp(wd->oversize, "markup")) return markup_error(wd, wd->oversize_at, err);
    if (wd->oversize[0])
        return err_set(err, "%s: line %lu: %s", wd->opts.name,
                       (unsigned long)XML_GetCurrentLineNumber(wd->xp), wd->oversize);
    if (wd->bad_root)
        return err_set(
            err, "%s: line %lu: not a MediaWiki XML dump (root element <%s>, expected <mediawiki>)",
            wd->opts.name, (unsigned long)XML_GetCurrentLineNumber(wd->xp), wd->bad_root_name);
    long long off = (long long)XML_GetCurrentByteIndex(wd->xp) - wd->prefix_len;
    return err_set(err, "%s: line %lu, column %lu (XML byte %lld): malformed XML: %s",
                   wd->opts.name, (unsigned long)XML_GetCurrentLineNumber(wd->xp),
                   (unsigned long)XML_GetCurrentColumnNumber(wd->xp) + 1, off < 0 ? 0 : off,
                   XML_ErrorString(XML_GetErrorCode(wd->xp)));
}

static int parse(MwXml *wd, const char *data, size_t len, int final, Err *err) {
    while (len > 0 || final) {
        int n = len > (1u << 30) ? (1 << 30) : (int)len;
        int last = final && (size_t)n == len;
        if (XML_Parse(wd->xp, data, n, last) == XML_STATUS_ERROR || wd->bad_root)
            return xml_error(wd, err);
        wd->fed += n;
        if (wd->fed - wd->events_end > (int64_t)wd->opts.max_markup) /* held, unfinished */
            return markup_error(wd, wd->events_end, err);
        data += n;
        len -= (size_t)n;
        if (last) break;
    }
    return 0;
}

/* Feed bytes that end on a character boundary, repairing bad UTF-8. */
static int feed_valid(MwXml *wd, const char *data, size_t len, int final, Err *err) {
    if (utf8_valid_prefix(data, len) == len) return parse(wd, data, len, final, err);
    buf_clear(&wd->fix);
    wd->stats.bad_utf8 += utf8_append_repair(&wd->fix, data, len);
    return parse(wd, wd->fix.data, wd->fix.len, final, err);
}

/* Decide from the first bytes whether the input is a <page> fragment or a
 * normal document (UTF-16 is refused by end_sniff, which sees the first
 * UTF8_SNIFF_BYTES bytes, or all of a shorter input). Returns 1 when
 * decided, 0 if more bytes are needed. */
static int sniff(MwXml *wd) {
    const unsigned char *p = (const unsigned char *)wd->sniff.data;
    size_t n = wd->sniff.len;
    if (n < UTF8_SNIFF_BYTES) return 0;
    size_t i = 0;
    if (n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) i = 3;
    for (;;) {
        while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t'))
            i++;
        if (i >= n) return n >= SNIFF_MAX ? 1 : 0;
        if (p[i] != '<') return 1; /* let expat report it */
        if (i + 1 >= n) return 0;
        if (p[i + 1] == '?' || p[i + 1] == '!') { /* declaration, comment, doctype */
            const char *e = memchr(p + i, '>', n - i);
            if (!e) return n >= SNIFF_MAX ? 1 : 0;
            i = (size_t)((const unsigned char *)e - p) + 1;
            continue;
        }
        if (n - i < 6) return 0;
        if (memcmp(p + i, "<page", 5) == 0 && (p[i + 5] == '>' || p[i + 5] == ' '))
            wd->fragment = 1;
        return 1;
    }
}

/* The encoding named by the XML declaration at the start of p[0..n)
 * (after a UTF-8 byte order mark), into name (cap bytes); "" when there is
 * no declaration or it names none (UTF-8, XML's default). */
static void declared_encoding(const char *p, size_t n, char *name, size_t cap) {
    name[0] = '\0';
    size_t i = n >= 3 && !memcmp(p, "\xef\xbb\xbf", 3) ? 3 : 0;
    if (n - i < 6 || memcmp(p + i, "<?xml", 5)) return;
    const char *end = memchr(p + i, '>', n - i);
    if (!end) return;
    size_t dn = (size_t)(end - (p + i));
    const char *d = p + i;
    for (size_t k = 5; k + 8 < dn; k++) {
        if (memcmp(d + k, "encoding", 8) ||
            (d[k - 1] != ' ' && d[k - 1] != '\t' && d[k - 1] != '\n' && d[k - 1] != '\r'))
            continue;
        size_t j = k + 8;
        while (j < dn && (d[j] == ' ' || d[j] == '\t' || d[j] == '\n' || d[j] == '\r'))
            j++;
        if (j >= dn || d[j] != '=') return;
        j++;
        while (j < dn && (d[j] == ' ' || d[j] == '\t' || d[j] == '\n' || d[j] == '\r'))
            j++;
        if (j >= dn || (d[j] != '"' && d[j] != '\'')) return;
        char q = d[j++];
        size_t v = 0;
        while (j < dn && d[j] != q && v + 1 < cap)
            name[v++] = d[j++];
        name[v] = '\0';
        return;
    }
}

/* Case-insensitive ASCII equality of a and any of the NULL-ended names. */
static int enc_is(const char *a, const char *const *names) {
    for (; *names; names++) {
        size_t k = 0;
        while (a[k] && (*names)[k] && (a[k] | 0x20) == ((*names)[k] | 0x20))
            k++;
        if (!a[k] && !(*names)[k]) return 1;
    }
    return 0;
}

/* The declared encoding: UTF-8 and US-ASCII (a subset) are read as they
 * are, ISO-8859-1 is converted to UTF-8 on the way in (as expat would);
 * any other is refused, naming it and how to convert it. Returns 0, or -1
 * with err. */
static int take_encoding(MwXml *wd, Err *err) {
    char enc[64];
    declared_encoding(wd->sniff.data, wd->sniff.len, enc, sizeof enc);
    static const char *const utf8[] = {"", "UTF-8", "UTF8", "US-ASCII", "ASCII", NULL};
    static const char *const latin1[] = {"ISO-8859-1", "ISO8859-1", "ISO_8859-1", "LATIN1",
                                         "L1",         "LATIN-1",   NULL};
    static const char *const wide[] = {"UTF-16", "UTF-16LE", "UTF-16BE", "UTF16", NULL};
    if (enc_is(enc, utf8) || enc_is(enc, wide)) return 0; /* UTF-16 bytes are refused below */
    if (enc_is(enc, latin1)) {
        wd->latin1 = 1;
        return 0;
    }
    char q[UTF8_QUOTE_CAP];
    utf8_quote(q, sizeof q, enc, strlen(enc));
    return err_set(err,
                   "%s: line 1: the XML declaration says encoding \"%s\"; %s reads UTF-8, "
                   "US-ASCII and ISO-8859-1 (convert it: iconv -f %s -t UTF-8)",
                   wd->opts.name, q, progname, q);
}

/* The first bytes have been looked at: open the synthetic root of a
 * fragment, then parse the bytes collected while sniffing. */
static int end_sniff(MwXml *wd, Err *err) {
    wd->sniffing = 0;
    if (utf8_refuse_wide(wd->opts.name, wd->sniff.data, wd->sniff.len, err)) return -1;
    if (take_encoding(wd, err)) return -1;
    if (wd->fragment) {
        static const char root[] = "<mediawiki>";
        wd->prefix_len = (int64_t)sizeof root - 1;
        if (parse(wd, root, sizeof root - 1, 0, err)) return -1;
    }
    Buf s = wd->sniff;
    wd->sniff = (Buf){0};
    wd->stats.xml_bytes -= s.len; /* counted again by the feed below */
    int r = mwxml_feed(wd, s.data, s.len, err);
    buf_free(&s);
    return r;
}

int mwxml_feed(MwXml *wd, const char *data, size_t len, Err *err) {
    wd->stats.xml_bytes += len;
    if (wd->sniffing) {
        buf_append(&wd->sniff, data, len);
        if (!sniff(wd)) return 0;
        return end_sniff(wd, err);
    }
    if (wd->latin1) { /* one byte, one character: U+0000..U+00FF in UTF-8 */
        buf_clear(&wd->latin);
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)data[i];
            if (c < 0x80) {
                buf_putc(&wd->latin, (char)c);
            } else {
                buf_putc(&wd->latin, (char)(0xC0 | c >> 6));
                buf_putc(&wd->latin, (char)(0x80 | (c & 0x3F)));
            }
        }
        return len ? parse(wd, wd->latin.data, wd->latin.len, 0, err) : 0;
    }
    /* complete a character carried over from the previous chunk (the carry
     * is always the start of a valid sequence). A byte that cannot continue
     * it is not taken: the carry alone is then one ill-formed subpart, as it
     * is when the same bytes arrive in one chunk, so the repair (and the
     * pages) never depend on where the input was cut */
    while (wd->ncarry && len) {
        char t[4];
        size_t k = wd->ncarry + 1;
        memcpy(t, wd->carry, wd->ncarry);
        t[wd->ncarry] = *data;
        uint32_t cp;
        if (utf8_decode((const unsigned char *)t, k, &cp) == k) { /* complete */
            data++, len--;
            wd->ncarry = 0;
            if (feed_valid(wd, t, k, 0, err)) return -1;
        } else if (k < 4 && utf8_boundary(t, k) == 0) { /* still a valid start */
            data++, len--;
            wd->carry[wd->ncarry++] = t[k - 1];
        } else {
            k = wd->ncarry;
            wd->ncarry = 0;
            if (feed_valid(wd, wd->carry, k, 0, err)) return -1;
        }
    }
    if (len == 0) return 0;
    size_t whole = utf8_boundary(data, len);
    if (feed_valid(wd, data, whole, 0, err)) return -1;
    memcpy(wd->carry, data + whole, len - whole);
    wd->ncarry = len - whole;
    return 0;
}

int mwxml_finish(MwXml *wd, Err *err) {
    if (wd->sniffing) {
        wd->sniffing = 0;
        if (wd->sniff.len == 0) return err_set(err, "%s: empty input (no XML data)", wd->opts.name);
        if (end_sniff(wd, err)) return -1;
    }
    if (wd->ncarry) {
        size_t k = wd->ncarry;
        wd->ncarry = 0;
        if (feed_valid(wd, wd->carry, k, 0, err)) return -1;
    }
    if (wd->fragment && wd->depth == 1 && parse(wd, "</mediawiki>", 12, 0, err)) return -1;
    if (!wd->root_closed && wd->seen_root) {
        if (wd->depth == 1)
            return err_set(
                err,
                "%s: line %lu: dump ends without </mediawiki> (truncated?); the %llu pages "
                "before it were complete",
                wd->opts.name, (unsigned long)XML_GetCurrentLineNumber(wd->xp),
                (unsigned long long)wd->stats.pages);
        return err_set(err, "%s: line %lu: unexpected end of XML inside <%s> (truncated dump?)",
                       wd->opts.name, (unsigned long)XML_GetCurrentLineNumber(wd->xp),
                       wd->in_page       ? "page"
                       : wd->in_siteinfo ? "siteinfo"
                                         : "mediawiki");
    }
    return parse(wd, "", 0, 1, err);
}
