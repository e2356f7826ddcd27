/* test_docfmt.c - the article layouts: WikiExtractor doc and json, and the
 * one-article-per-line layout with formatting.py's quirks (spec section 4). */
#include "tests/test.h"
#include "prep/docfmt.h"

static const DocMeta M = {.id = "12", .revid = "34", .url = "https://x.org/wiki?curid=12", .title = "Tö \"q\""};

static void check(const char *name, DocFormat f, const char *paras, const char *want) {
    Buf b = {0};
    docfmt_write(&b, f, &M, paras, strlen(paras));
    test_mem_eq(name, b.data, b.len, want, strlen(want));
    buf_free(&b);
}

int main(void) {
    check("doc", DOC_DOC, "P1\nP2\n",
          "<doc id=\"12\" url=\"https://x.org/wiki?curid=12\" title=\"Tö \"q\"\">\nTö \"q\"\n\nP1\nP2\n\n</doc>\n");
    check("doc empty", DOC_DOC, "",
          "<doc id=\"12\" url=\"https://x.org/wiki?curid=12\" title=\"Tö \"q\"\">\nTö \"q\"\n\n\n\n</doc>\n");
    check("json", DOC_JSON, "P1 é\nP2\n",
          "{\"id\": \"12\", \"revid\": \"34\", \"url\": \"https://x.org/wiki?curid=12\", \"title\": "
          "\"T\\u00f6 \\\"q\\\"\", \"text\": \"P1 \\u00e9\\nP2\"}\n");
    check("json empty", DOC_JSON, "",
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
    test_cond("rstrip keeps non-space", py_rstrip_len("a\xE2\x80\x8B", 4) == 4); /* U+200B is not space */
    DocFormat f;
    test_cond("parse formats", docfmt_parse("lines", &f) == 0 && f == DOC_LINES && docfmt_parse("x", &f) == -1);
    return test_report();
}
