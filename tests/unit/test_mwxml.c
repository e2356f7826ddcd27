/* test_mwxml.c - the XML page parser: fields, siteinfo, fragments,
 * errors, and identical results for every chunking (byte-at-a-time, prime
 * sizes, whole), as expat's own tests do. */
#include "tests/test.h"
#include "common/buf.h"
#include "prep/mwxml.h"

static const char DUMP[] =
    "<mediawiki xmlns=\"http://www.mediawiki.org/xml/export-0.10/\" version=\"0.10\" "
    "xml:lang=\"hu\">\n"
    "  <siteinfo>\n    <sitename>Wikipédia</sitename>\n    <dbname>huwiki</dbname>\n"
    "    <base>https://hu.wikipedia.org/wiki/Kezd%C5%91lap</base>\n"
    "    <generator>MediaWiki 1.42</generator>\n    <case>first-letter</case>\n"
    "    <namespaces>\n      <namespace key=\"0\" case=\"first-letter\" />\n"
    "      <namespace key=\"6\" case=\"first-letter\">Fájl</namespace>\n"
    "      <namespace key=\"14\" case=\"first-letter\">Kategória</namespace>\n    </namespaces>\n"
    "  </siteinfo>\n"
    "  <page>\n    <title>Árvíztűrő tükörfúrógép</title>\n    <ns>0</ns>\n    <id>42</id>\n"
    "    <revision>\n      <id>1001</id>\n      "
    "<contributor><username>X</username><id>77</id></contributor>\n"
    "      <text bytes=\"30\" xml:space=\"preserve\">'''Á''' &lt;ref&gt;x&lt;/ref&gt; &amp;nbsp; "
    "[[Fájl:a.jpg]]\nsor2</text>\n"
    "    </revision>\n  </page>\n"
    "  <page>\n    <title>Átirányítás</title>\n    <ns>0</ns>\n    <id>43</id>\n"
    "    <redirect title=\"Cél &quot;oldal&quot;\" />\n"
    "    <revision><id>5</id><text>#ÁTIRÁNYÍTÁS [[Cél]]</text></revision>\n  </page>\n"
    "  <page>\n    <title>Vita:Valami</title>\n    <ns>1</ns>\n    <id>44</id>\n"
    "    <revision><id>6</id><text>old</text></revision>\n"
    "    <revision><id>7</id><text /></revision>\n  </page>\n"
    "</mediawiki>\n";

typedef struct Collect {
    Buf log;
    int sites;
} Collect;

static void on_page(void *ctx, const WikiPage *p) {
    Collect *c = ctx;
    char t[128];
    snprintf(t, sizeof t, "[%lld/%lld/ns%lld/line%llu]", (long long)p->id, (long long)p->revid,
             (long long)p->ns, (unsigned long long)p->line);
    buf_puts(&c->log, t);
    buf_append(&c->log, p->title, p->title_len);
    buf_putc(&c->log, '|');
    if (p->redirect) {
        buf_puts(&c->log, "R=");
        buf_append(&c->log, p->redirect, p->redirect_len);
        buf_putc(&c->log, '|');
    }
    buf_append(&c->log, p->text, p->text_len);
    buf_putc(&c->log, '\n');
}

static void on_site(void *ctx, const WikiSiteinfo *s) {
    Collect *c = ctx;
    c->sites++;
    buf_puts(&c->log, "SITE ");
    buf_puts(&c->log, s->dbname ? s->dbname : "?");
    buf_putc(&c->log, ' ');
    buf_puts(&c->log, s->base ? s->base : "?");
    for (int i = 0; i < s->nns; i++) {
        char t[160];
        snprintf(t, sizeof t, " %d=%s/%s", s->ns[i].key, s->ns[i].name, s->ns[i].canonical);
        buf_puts(&c->log, t);
    }
    buf_putc(&c->log, '\n');
}

/* Parse `xml` in chunks of `chunk` bytes (0 = whole); returns the log and
 * the status of the run in *rc (0 ok, -1 error with msg in err). */
static size_t max_markup; /* MwXmlOpts.max_markup of parse_chunked (0: the default) */

static Buf parse_chunked(const char *xml, size_t n, size_t chunk, int *rc, Err *err) {
    Collect c = {0};
    MwXmlOpts o = {.name = "t.xml", .max_text = 1000, .max_markup = max_markup};
    MwXml *wd = mwxml_create(&o, on_page, on_site, &c);
    *rc = 0;
    size_t step = chunk ? chunk : n;
    for (size_t i = 0; i < n && *rc == 0; i += step)
        *rc = mwxml_feed(wd, xml + i, i + step > n ? n - i : step, err);
    if (*rc == 0) *rc = mwxml_finish(wd, err);
    char t[64];
    snprintf(t, sizeof t, "bad_utf8=%llu\n", (unsigned long long)mwxml_stats(wd)->bad_utf8);
    buf_puts(&c.log, t);
    mwxml_destroy(wd);
    return c.log;
}

static void test_fields(void) {
    int rc;
    Err err = {{0}};
    Buf whole = parse_chunked(DUMP, sizeof DUMP - 1, 0, &rc, &err);
    test_cond("whole parse ok", rc == 0);
    const char *want = "SITE huwiki https://hu.wikipedia.org/wiki/Kezd%C5%91lap 0=/ 6=Fájl/File "
                       "14=Kategória/Category\n"
                       "[42/1001/ns0/line14]Árvíztűrő tükörfúrógép|'''Á''' <ref>x</ref> &nbsp; "
                       "[[Fájl:a.jpg]]\nsor2\n"
                       "[43/5/ns0/line25]Átirányítás|R=Cél \"oldal\"|#ÁTIRÁNYÍTÁS [[Cél]]\n"
                       "[44/7/ns1/line32]Vita:Valami|\n"
                       "bad_utf8=0\n";
    test_str_eq("pages, siteinfo, last revision wins", whole.data, want);
    static const size_t chunks[] = {1, 2, 3, 7, 13, 64, 101, 4093};
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        Buf b = parse_chunked(DUMP, sizeof DUMP - 1, chunks[i], &rc, &err);
        char name[64];
        snprintf(name, sizeof name, "chunk size %zu gives the same pages", chunks[i]);
        test_cond(name, rc == 0);
        test_mem_eq(name, b.data, b.len, whole.data, whole.len);
        buf_free(&b);
    }
    buf_free(&whole);
}

static void test_bad_utf8_chunked(void) {
    /* a broken sequence and a valid 4-byte one straddling every chunk edge */
    const char xml[] =
        "<mediawiki><page><title>T</title><ns>0</ns><id>1</id><revision><id>2</id>"
        "<text>x\xF0\x9F\x98\x80y\xE2\x82z\xC3\xA9</text></revision></page></mediawiki>";
    int rc;
    Err err;
    Buf whole = parse_chunked(xml, sizeof xml - 1, 0, &rc, &err);
    test_cond("bad utf8 whole ok", rc == 0);
    test_str_eq("bad utf8 replaced", whole.data,
                "[1/2/ns0/line1]T|x\xF0\x9F\x98\x80y\xEF\xBF\xBDz\xC3\xA9\nbad_utf8=1\n");
    for (size_t c = 1; c < 9; c++) {
        Buf b = parse_chunked(xml, sizeof xml - 1, c, &rc, &err);
        test_mem_eq("bad utf8 chunked identical", b.data, b.len, whole.data, whole.len);
        buf_free(&b);
    }
    buf_free(&whole);
}

static void test_fragment(void) {
    const char xml[] =
        "  <page>\n<title>F</title><ns>0</ns><id>9</id><revision><id>3</id><text>frag</text>"
        "</revision></page>\n<page><title>G</title><ns>0</ns><id>10</id><revision><id>4</id>"
        "<text>g</text></revision></page>\n";
    for (size_t c = 0; c < 4; c++) {
        int rc;
        Err err;
        Buf b = parse_chunked(xml, sizeof xml - 1, c, &rc, &err);
        test_cond("fragment parses", rc == 0);
        test_str_eq("fragment pages", b.data,
                    "[9/3/ns0/line1]F|frag\n[10/4/ns0/line3]G|g\nbad_utf8=0\n");
        buf_free(&b);
    }
}

static void expect_error(const char *name, const char *xml, const char *want_prefix, size_t chunk) {
    int rc;
    Err err = {{0}};
    Buf b = parse_chunked(xml, strlen(xml), chunk, &rc, &err);
    test_cond(name, rc == -1);
    int match = strncmp(err.msg, want_prefix, strlen(want_prefix)) == 0;
    test_cond(name, match);
    if (!match) printf("  got [%s]\n  want prefix [%s]\n", err.msg, want_prefix);
    buf_free(&b);
}

static void test_errors(void) {
    for (size_t c = 0; c < 3; c++) {
        expect_error("empty", "", "t.xml: empty input", c);
        expect_error("not mediawiki", "<?xml version=\"1.0\"?>\n<rss><x/></rss>",
                     "t.xml: line 2: not a MediaWiki XML dump (root element <rss>", c);
        expect_error("mismatched", "<mediawiki>\n<page><title>a</titel></page></mediawiki>",
                     "t.xml: line 2, column 17 (XML byte 28): malformed XML: mismatched tag", c);
        expect_error("truncated in page", "<mediawiki><page><title>a</title>",
                     "t.xml: line 1: unexpected end of XML inside <page>", c);
        expect_error("no footer", "<mediawiki><page><title>a</title></page>\n",
                     "t.xml: line 2: dump ends without </mediawiki> (truncated?); the 1 pages", c);
        expect_error("utf16", "\xFF\xFE<\0m\0", "t.xml: UTF-16 text (convert it to UTF-8", c);
    }
}

static void test_too_large(void) {
    Buf xml = {0};
    buf_puts(&xml,
             "<mediawiki><page><title>Big</title><ns>0</ns><id>1</id><revision><id>1</id><text>");
    for (int i = 0; i < 2000; i++)
        buf_putc(&xml, 'a');
    buf_puts(&xml, "</text></revision></page><page><title>S</title><ns>0</ns><id>2</id><revision>"
                   "<id>2</id><text>s</text></revision></page></mediawiki>");
    int rc;
    Err err;
    int saved = display_level;
    display_level = 0;
    Buf b = parse_chunked(xml.data, xml.len, 100, &rc, &err);
    display_level = saved;
    test_cond("too large: run ok", rc == 0);
    test_str_eq("too large page skipped, next kept", b.data, "[2/2/ns0/line1]S|s\nbad_utf8=0\n");
    buf_free(&b);
    buf_free(&xml);
}

/* The declared encoding: ISO-8859-1 bytes become their characters in
 * UTF-8 (for any chunking); an encoding not read is refused by name. */
static void test_encoding(void) {
    const char xml[] = "<?xml version=\"1.0\" encoding=\"iso-8859-1\"?>\n"
                       "<mediawiki><page><title>Caf\xe9</title><ns>0</ns><id>1</id><revision>"
                       "<id>2</id><text>Zo\xeb \xff\xb5</text></revision></page></mediawiki>";
    for (size_t c = 0; c < 9; c++) {
        int rc;
        Err err;
        Buf b = parse_chunked(xml, sizeof xml - 1, c, &rc, &err);
        test_cond("ISO-8859-1 declared: parses", rc == 0);
        test_str_eq("... as its characters", b.data,
                    "[1/2/ns0/line2]Caf\xc3\xa9|Zo\xc3\xab \xc3\xbf\xc2\xb5\nbad_utf8=0\n");
        buf_free(&b);
    }
    for (size_t c = 0; c < 3; c++)
        expect_error("windows-1252 declared: refused",
                     "<?xml version='1.0' encoding='windows-1252'?><mediawiki></mediawiki>",
                     "t.xml: line 1: the XML declaration says encoding \"windows-1252\"", c);
}

/* Bounded memory: markup longer than max_markup (which expat would hold
 * whole) is an error for every chunking, text of any length is not; a
 * title longer than max_text skips its page; a <siteinfo> field longer
 * than max_text is an error. */
static void test_limits(void) {
    static const size_t chunks[] = {0, 1, 7, 64};
    max_markup = 89;
    int rc;
    Err err;
    for (size_t i = 0; i < sizeof chunks / sizeof *chunks; i++) {
        Buf b = parse_chunked(DUMP, sizeof DUMP - 1, chunks[i], &rc, &err);
        test_cond("the sample dump, max_markup 89: its root tag (90 bytes) is too long",
                  rc == -1 && strstr(err.msg, "t.xml: XML byte 0: markup"));
        buf_free(&b);
    }
    max_markup = 120;
    Buf whole = parse_chunked(DUMP, sizeof DUMP - 1, 0, &rc, &err);
    test_cond("the sample dump, max_markup 120", rc == 0);
    Buf text = {0}, comment = {0}, attr = {0}, space = {0};
    buf_puts(&text,
             "<mediawiki><page><title>T</title><ns>0</ns><id>1</id><revision><id>2</id><text>");
    for (int k = 0; k < 900; k++)
        buf_putc(&text, k % 50 ? 'a' : '\n');
    buf_puts(&text, "</text></revision></page></mediawiki>");
    buf_puts(&comment, "<mediawiki><!--");
    buf_puts(&attr, "<mediawiki><page a=\"");
    buf_puts(&space, "<?xml version=\"1.0\"?>");
    for (int k = 0; k < 500; k++)
        buf_putc(&comment, 'c'), buf_putc(&attr, 'a'), buf_putc(&space, ' ');
    buf_puts(&attr, "\"></page></mediawiki>");
    buf_puts(&space, "<mediawiki></mediawiki>");
    for (size_t i = 0; i < sizeof chunks / sizeof *chunks; i++) {
        char name[96];
        Buf b = parse_chunked(DUMP, sizeof DUMP - 1, chunks[i], &rc, &err);
        snprintf(name, sizeof name, "chunks of %zu: the sample dump's pages", chunks[i]);
        test_cond(name, rc == 0 && b.len == whole.len && !memcmp(b.data, whole.data, b.len));
        buf_free(&b);
        b = parse_chunked(text.data, text.len, chunks[i], &rc, &err);
        snprintf(name, sizeof name, "chunks of %zu: 900 bytes of text pass", chunks[i]);
        test_cond(name, rc == 0 && b.len > 900);
        buf_free(&b);
        b = parse_chunked(space.data, space.len, chunks[i], &rc, &err);
        snprintf(name, sizeof name, "chunks of %zu: 500 spaces in the prolog pass", chunks[i]);
        test_cond(name, rc == 0);
        buf_free(&b);
        b = parse_chunked(comment.data, comment.len, chunks[i], &rc, &err);
        snprintf(name, sizeof name, "chunks of %zu: a comment never closed", chunks[i]);
        test_cond(name, rc == -1);
        test_str_eq(name, err.msg,
                    "t.xml: XML byte 11: markup (a tag, comment or declaration) longer than 120 "
                    "bytes (--max-line-bytes raises the limit)");
        buf_free(&b);
        b = parse_chunked(attr.data, attr.len, chunks[i], &rc, &err);
        snprintf(name, sizeof name, "chunks of %zu: a closed tag of 500 bytes", chunks[i]);
        test_cond(name, rc == -1 && strstr(err.msg, "XML byte 11: markup"));
        buf_free(&b);
    }
    max_markup = 0;
    buf_free(&whole), buf_free(&text), buf_free(&comment), buf_free(&attr), buf_free(&space);

    Buf xml = {0};
    buf_puts(&xml, "<mediawiki><page><title>");
    for (int k = 0; k < 1500; k++)
        buf_putc(&xml, 't');
    buf_puts(&xml, "</title><ns>0</ns><id>1</id><revision><id>1</id><text>x</text></revision>"
                   "</page><page><title>S</title><ns>0</ns><id>2</id><revision><id>2</id>"
                   "<text>s</text></revision></page></mediawiki>");
    int saved = display_level;
    display_level = 0;
    for (size_t i = 0; i < sizeof chunks / sizeof *chunks; i++) {
        Buf b = parse_chunked(xml.data, xml.len, chunks[i], &rc, &err);
        test_cond("a title longer than max_text: its page skipped", rc == 0);
        test_str_eq("... the next kept", b.data, "[2/2/ns0/line1]S|s\nbad_utf8=0\n");
        buf_free(&b);
    }
    display_level = saved;
    buf_clear(&xml);
    buf_puts(&xml, "<mediawiki><siteinfo><sitename>");
    for (int k = 0; k < 1500; k++)
        buf_putc(&xml, 's');
    buf_puts(&xml, "</sitename></siteinfo></mediawiki>");
    expect_error("a <siteinfo> field longer than max_text", xml.data,
                 "t.xml: line 1: a <siteinfo> field longer than 1000 bytes (--max-page-bytes "
                 "raises the limit)",
                 7);
    buf_free(&xml);
}

int main(void) {
    test_limits();
    test_fields();
    test_bad_utf8_chunked();
    test_fragment();
    test_errors();
    test_encoding();
    test_too_large();
    return test_report();
}
