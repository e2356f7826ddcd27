/* docfmt.h - the document interchange format between the prep and
 * tokenize stages: the layouts wiki_strip writes, and the reader with
 * which sent_split takes any of them back.
 *
 * Writing (docfmt_write), one article at a time:
 *
 *   DOC_DOC    WikiExtractor's default layout:
 *                <doc id="ID" url="URL" title="TITLE">\n TITLE\n \n
 *                paragraph\n ... \n </doc>\n
 *   DOC_JSON   WikiExtractor --json: {"id": "ID", "revid": "REV", "url": ...,
 *              "title": ..., "text": "p1\np2"} as Python's json.dumps writes it
 *   DOC_LINES  one article per line plus a blank line: exactly what
 *              NVIDIA's WikicorpusTextFormatting / the Hungarian
 *              formatting.py make of the DOC_DOC layout (every paragraph
 *              right-stripped and followed by one space, then "\n\n")
 *
 * Reading (DocReader): wiki_strip output in any of those layouts, or plain
 * text, as a stream of documents made of paragraphs:
 *
 *   DOC_DOC      the line after the <doc id url title> header is the title
 *                and not a paragraph; every other non-empty line inside is
 *                one paragraph
 *   DOC_JSON     one record per line; "text" holds the paragraphs
 *                separated by '\n'
 *   DOC_LINES    one paragraph per line, a blank line between documents
 *                (plain text; the lines layout is this with one
 *                space-terminated paragraph per document)
 *   DOC_AUTO     decided from the first non-blank line
 *
 *   DocReader dr; Doc d = {0}; Err err;
 *   docreader_init(&dr, inputs, ninputs, DOC_AUTO);
 *   while ((r = docreader_next(&dr, &d, &err)) == 1) use(d.paras, d.npara);
 *   docreader_free(&dr); doc_free(&d);
 *
 * Paragraphs keep their bytes (no trimming besides the line terminator and
 * a '\r' before it); invalid UTF-8 is replaced by U+FFFD and counted in
 * DocReader.bad_utf8.
 */
#ifndef WB_DOCFMT_H
#define WB_DOCFMT_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/io.h"

/* The layouts. DOC_LINES is also plain text (one paragraph per line, a
 * blank line between documents) when read; DOC_AUTO (reading only) decides
 * from the first non-blank line: "<doc " -> DOC_DOC, '{' -> DOC_JSON,
 * anything else -> DOC_LINES. */
typedef enum DocFormat { DOC_DOC, DOC_JSON, DOC_LINES, DOC_AUTO } DocFormat;

typedef struct DocMeta {
    const char *id, *revid, *url, *title; /* NUL-terminated, UTF-8 */
} DocMeta;

/* Append one article to out. `paras` holds the paragraphs, each ended by
 * '\n' (plen bytes; may be empty). */
void docfmt_write(Buf *out, DocFormat fmt, const DocMeta *m, const char *paras, size_t plen);

/* Parse an output layout: "doc", "json" or "lines"; returns 0 or -1. */
int docfmt_parse(const char *name, DocFormat *fmt);

/* Length of s[0..n) after removing trailing whitespace as Python's
 * str.rstrip() does (Unicode White_Space plus \x1c-\x1f). */
size_t py_rstrip_len(const char *s, size_t n);

/* ---- reading ---- */

typedef struct Doc {
    Buf id, title, url; /* empty for plain text */
    Buf text;           /* paragraphs, each followed by '\n' */
    size_t npara;
    uint64_t line;    /* input line where the document starts */
    const char *file; /* input name */
} Doc;

typedef struct DocReader {
    Reader rd;
    DocFormat fmt;
    int pending; /* a line is held back in `held` */
    Buf held;
    uint64_t held_line;
    uint64_t bad_utf8;  /* invalid sequences replaced */
    uint64_t malformed; /* JSON records or <doc> blocks that were skipped */
} DocReader;

/* Read `n` inputs ("-" = stdin; n == 0 means stdin) in layout `fmt`.
 * Pair with docreader_free(). */
void docreader_init(DocReader *dr, char **inputs, int n, DocFormat fmt);

/* Next document into *d (its buffers are reused). Returns 1, 0 at the end,
 * -1 on an I/O error, or a line or document longer than the reader's
 * max_line (io.h; err names the file and line). Malformed JSON records and
 * unterminated <doc> blocks are skipped with a warning and counted. */
int docreader_next(DocReader *dr, Doc *d, Err *err);

/* Parse an input layout: "auto", "doc", "json", "lines" or "text" (the
 * same as "lines"); returns 0 or -1. */
int docfmt_parse_input(const char *name, DocFormat *fmt);

void docreader_free(DocReader *dr);
void doc_free(Doc *d);

#endif
