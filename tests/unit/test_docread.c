/* test_docread.c - documents from the doc, json and text layouts, layout
 * detection, and the handling of broken input. */
#include <unistd.h>

#include "tests/test.h"
#include "tokenize/docread.h"

static char dir[] = "/tmp/test_docread.XXXXXX";

static char *write_file(const char *name, const char *content, size_t n) {
    static char path[8][256];
    static int k;
    char *p = path[k++ % 8];
    snprintf(p, 256, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    fwrite(content, 1, n, f);
    fclose(f);
    return p;
}

/* All documents of `content` as "title|para/para/...;" */
static void read_all(const char *content, DocInFormat fmt, Buf *out, DocReader *keep) {
    char *path = write_file("in", content, strlen(content));
    DocReader dr;
    Doc d = {0};
    Err err;
    docreader_init(&dr, &path, 1, fmt);
    int r;
    while ((r = docreader_next(&dr, &d, &err)) == 1) {
        buf_append(out, d.title.data, d.title.len);
        buf_putc(out, '|');
        for (size_t i = 0; i < d.text.len; i++) buf_putc(out, d.text.data[i] == '\n' ? '/' : d.text.data[i]);
        buf_putc(out, ';');
    }
    test_cond("no read error", r == 0);
    if (keep) *keep = dr;
    docreader_free(&dr);
    doc_free(&d);
}

static void check(const char *name, const char *content, DocInFormat fmt, const char *want) {
    Buf b = {0};
    read_all(content, fmt, &b, NULL);
    test_str_eq(name, b.data ? b.data : "", want);
    buf_free(&b);
}

int main(void) {
    if (!mkdtemp(dir)) return 1;
    int saved = display_level;
    display_level = 0; /* the malformed cases warn */
    const char *doc = "<doc id=\"12\" url=\"https://x/wiki?curid=12\" title=\"Say \"hi\"\">\nSay \"hi\"\n\nP1\nP2 é\n\n</doc>\n"
                      "<doc id=\"13\" url=\"u\" title=\"Empty\">\nEmpty\n\n\n\n</doc>\n";
    check("doc", doc, DOCIN_DOC, "Say \"hi\"|P1/P2 é/;Empty|;");
    check("doc auto", doc, DOCIN_AUTO, "Say \"hi\"|P1/P2 é/;Empty|;");
    const char *json = "{\"id\": \"12\", \"revid\": \"1\", \"url\": \"u\", \"title\": \"T\\u00f6\", \"text\": \"A\\nB \\\"q\\\"\\n\"}\n"
                       "\n{\"id\": 13, \"title\": \"Bad\", \"text\": \"x}\n"
                       "{\"id\": \"14\", \"title\": \"C\", \"text\": \"\"}\n";
    check("json, malformed record skipped", json, DOCIN_AUTO, "Tö|A/B \"q\"/;C|;");
    check("text with CRLF and blank runs", "\n\nA one\r\nA two\n\n\n B one \n", DOCIN_AUTO,
          "|A one/A two/;| B one /;");
    check("lines layout (wiki_strip -F lines)", "Art one P1 P2 \n\nArt two \n\n", DOCIN_TEXT,
          "|Art one P1 P2 /;|Art two /;");
    check("doc without </doc>", "<doc id=\"1\" url=\"u\" title=\"A\">\nA\n\nx\n<doc id=\"2\" url=\"u\" title=\"B\">\nB\n\ny\n",
          DOCIN_DOC, "A|x/;B|y/;");
    check("invalid UTF-8 repaired", "a\xff b\n", DOCIN_TEXT, "|a\xEF\xBF\xBD b/;");
    check("empty input", "", DOCIN_AUTO, "");

    Buf b = {0};
    DocReader kept;
    read_all(json, DOCIN_JSON, &b, &kept);
    test_cond("malformed counted", kept.malformed == 1);
    buf_free(&b);

    DocInFormat f;
    test_cond("format names", docread_parse_format("lines", &f) == 0 && f == DOCIN_TEXT &&
                                  docread_parse_format("doc", &f) == 0 && f == DOCIN_DOC &&
                                  docread_parse_format("xml", &f) == -1);
    display_level = saved;
    char p[300];
    snprintf(p, sizeof p, "%s/in", dir);
    unlink(p);
    rmdir(dir);
    return test_report();
}
