/* test_docfmt.c - the document interchange format: writing the article
 * layouts (WikiExtractor doc and json, and one article per line with
 * formatting.py's quirks, spec section 4), and reading documents back from
 * the doc, json and text layouts: layout detection and broken input. */
#include <unistd.h>

#include "tests/test.h"
#include "common/docfmt.h"

static const DocMeta M = {
    .id = "12", .revid = "34", .url = "https://x.org/wiki?curid=12", .title = "Tö \"q\""};

static void check(const char *name, DocFormat f, const char *paras, const char *want) {
    Buf b = {0};
    docfmt_write(&b, f, &M, paras, strlen(paras));
    test_mem_eq(name, b.data, b.len, want, strlen(want));
    buf_free(&b);
}

static char dir[] = "/tmp/test_docfmt.XXXXXX";

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
static void read_all(const char *content, DocFormat fmt, Buf *out, DocReader *keep) {
    char *path = write_file("in", content, strlen(content));
    DocReader dr;
    Doc d = {0};
    Err err;
    docreader_init(&dr, &path, 1, fmt);
    int r;
    while ((r = docreader_next(&dr, &d, &err)) == 1) {
        buf_append(out, d.title.data, d.title.len);
        buf_putc(out, '|');
        for (size_t i = 0; i < d.text.len; i++)
            buf_putc(out, d.text.data[i] == '\n' ? '/' : d.text.data[i]);
        buf_putc(out, ';');
    }
    test_cond("no read error", r == 0);
    if (keep) *keep = dr;
    docreader_free(&dr);
    doc_free(&d);
}

static void check_read(const char *name, const char *content, DocFormat fmt, const char *want) {
    Buf b = {0};
    read_all(content, fmt, &b, NULL);
    test_str_eq(name, b.data ? b.data : "", want);
    buf_free(&b);
}

static void test_reading(void) {
    if (!mkdtemp(dir)) {
        test_cond("mkdtemp", 0);
        return;
    }
    int saved = display_level;
    display_level = 0; /* the malformed cases warn */
    const char *doc = "<doc id=\"12\" url=\"https://x/wiki?curid=12\" title=\"Say \"hi\"\">\nSay "
                      "\"hi\"\n\nP1\nP2 é\n\n</doc>\n"
                      "<doc id=\"13\" url=\"u\" title=\"Empty\">\nEmpty\n\n\n\n</doc>\n";
    check_read("doc", doc, DOC_DOC, "Say \"hi\"|P1/P2 é/;Empty|;");
    check_read("doc auto", doc, DOC_AUTO, "Say \"hi\"|P1/P2 é/;Empty|;");
    const char *json = "{\"id\": \"12\", \"revid\": \"1\", \"url\": \"u\", \"title\": "
                       "\"T\\u00f6\", \"text\": \"A\\nB \\\"q\\\"\\n\"}\n"
                       "\n{\"id\": 13, \"title\": \"Bad\", \"text\": \"x}\n"
                       "{\"id\": \"14\", \"title\": \"C\", \"text\": \"\"}\n";
    check_read("json, malformed record skipped", json, DOC_AUTO, "Tö|A/B \"q\"/;C|;");
    check_read("text with CRLF and blank runs", "\n\nA one\r\nA two\n\n\n B one \n", DOC_AUTO,
               "|A one/A two/;| B one /;");
    check_read("lines layout (wiki_strip -F lines)", "Art one P1 P2 \n\nArt two \n\n", DOC_LINES,
               "|Art one P1 P2 /;|Art two /;");
    check_read("doc without </doc>",
               "<doc id=\"1\" url=\"u\" title=\"A\">\nA\n\nx\n<doc id=\"2\" url=\"u\" "
               "title=\"B\">\nB\n\ny\n",
               DOC_DOC, "A|x/;B|y/;");
    check_read("invalid UTF-8 repaired", "a\xff b\n", DOC_LINES, "|a\xEF\xBF\xBD b/;");
    check_read("empty input", "", DOC_AUTO, "");

    Buf b = {0};
    DocReader kept;
    read_all(json, DOC_JSON, &b, &kept);
    test_cond("malformed counted", kept.malformed == 1);
    buf_free(&b);

    /* the longest line bounds a document too: "A one/A two" is 11 bytes */
    io_set_max_line(11);
    check_read("a document at the limit", "A one\nA two\n\nB\n", DOC_LINES, "|A one/A two/;|B/;");
    const char *docs[] = {"A one\nA two\n\nB\n",
                          "<doc id=\"1\" url=\"u\" title=\"A\">\nA\n\n"
                          "A one two three four\nA five six seven\n</doc>\n"};
    const char *what[] = {":1: document (lines up to a blank line) longer than 10 bytes",
                          ":1: document (a <doc> block) longer than 30 bytes"};
    for (int i = 0; i < 2; i++) {
        io_set_max_line(i ? 30 : 10); /* the <doc> line is 30 bytes */
        char *path = write_file("in", docs[i], strlen(docs[i]));
        DocReader dr;
        Doc d = {0};
        Err err;
        docreader_init(&dr, &path, 1, i ? DOC_DOC : DOC_LINES);
        test_cond("a document over the limit: an error", docreader_next(&dr, &d, &err) == -1);
        test_cond(what[i], strstr(err.msg, what[i]) != NULL &&
                               strstr(err.msg, "(--max-line-bytes raises the limit)"));
        docreader_free(&dr);
        doc_free(&d);
    }
    /* measured as held: 8 raw bytes, 4 of them invalid, are 16 after the repair */
    io_set_max_line(10);
    {
        const char *bad = "ab\xff\xff\xff\xff"
                          "cd\n";
        char *path = write_file("in", bad, strlen(bad));
        DocReader dr;
        Doc d = {0};
        Err err;
        docreader_init(&dr, &path, 1, DOC_LINES);
        test_cond("a paragraph the repair of invalid UTF-8 takes over the limit: an error",
                  docreader_next(&dr, &d, &err) == -1 && strstr(err.msg, ":1: document"));
        docreader_free(&dr);
        doc_free(&d);
    }
    io_set_max_line(0);

    DocFormat f;
    test_cond("format names", docfmt_parse_input("lines", &f) == 0 && f == DOC_LINES &&
                                  docfmt_parse_input("doc", &f) == 0 && f == DOC_DOC &&
                                  docfmt_parse_input("xml", &f) == -1);
    display_level = saved;
    char p[300];
    snprintf(p, sizeof p, "%s/in", dir);
    unlink(p);
    rmdir(dir);
}

int main(void) {
    check("doc", DOC_DOC, "P1\nP2\n",
          "<doc id=\"12\" url=\"https://x.org/wiki?curid=12\" title=\"Tö \"q\"\">\nTö "
          "\"q\"\n\nP1\nP2\n\n</doc>\n");
    check("doc empty", DOC_DOC, "",
          "<doc id=\"12\" url=\"https://x.org/wiki?curid=12\" title=\"Tö \"q\"\">\nTö "
          "\"q\"\n\n\n\n</doc>\n");
    check(
        "json", DOC_JSON, "P1 é\nP2\n",
        "{\"id\": \"12\", \"revid\": \"34\", \"url\": \"https://x.org/wiki?curid=12\", \"title\": "
        "\"T\\u00f6 \\\"q\\\"\", \"text\": \"P1 \\u00e9\\nP2\"}\n");
    check(
        "json empty", DOC_JSON, "",
        "{\"id\": \"12\", \"revid\": \"34\", \"url\": \"https://x.org/wiki?curid=12\", \"title\": "
        "\"T\\u00f6 \\\"q\\\"\", \"text\": \"\"}\n");
    check("lines", DOC_LINES, "P1\nP2  \xC2\xA0\xE3\x80\x80\n", "P1 P2 \n\n");
    check("lines empty article", DOC_LINES, "", "\n\n");
    /* a paragraph that merely mentions </doc> closes the article there, and
     * the real </doc> then emits an empty one, as formatting.py does */
    check("lines: stray </doc>", DOC_LINES, "A\nsee </doc> tag\nB\n", "A \n\n\n\n");
    /* a stray "<doc id=" line is not stored */
    check("lines: stray <doc id=", DOC_LINES, "A\nx <doc id=1> y\nB\n", "A B \n\n");

    test_cond("rstrip ascii", py_rstrip_len("ab \t\r\x0b\x0c\x1c", 8) == 2);
    test_cond("rstrip unicode", py_rstrip_len("a\xE2\x80\xAF\xE3\x80\x80\xC2\x85", 9) == 1);
    test_cond("rstrip keeps non-space",
              py_rstrip_len("a\xE2\x80\x8B", 4) == 4); /* U+200B is not space */
    DocFormat f;
    test_cond("parse formats",
              docfmt_parse("lines", &f) == 0 && f == DOC_LINES && docfmt_parse("x", &f) == -1);
    test_reading();
    return test_report();
}
