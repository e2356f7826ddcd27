/* docread.h - read documents from any layout the prep stage writes.
 *
 * The tokenize stage accepts wiki_strip output in each of its layouts, or
 * plain text, and turns it into a stream of documents made of paragraphs:
 *
 *   DOCIN_DOC    WikiExtractor <doc id url title> ... </doc>: the line after
 *                the header is the title and is not a paragraph; every other
 *                non-empty line inside is one paragraph
 *   DOCIN_JSON   one WikiExtractor --json record per line; "text" holds the
 *                paragraphs separated by '\n'
 *   DOCIN_TEXT   one paragraph per line, a blank line between documents.
 *                wiki_strip --format lines is this layout with one
 *                (space-terminated) paragraph per document
 *   DOCIN_AUTO   decided from the first non-blank line: "<doc " -> DOC,
 *                '{' -> JSON, anything else -> TEXT
 *
 *   DocReader dr; Doc d = {0}; Err err;
 *   docreader_init(&dr, inputs, ninputs, DOCIN_AUTO);
 *   while ((r = docreader_next(&dr, &d, &err)) == 1) use(d.paras, d.npara);
 *   docreader_free(&dr); doc_free(&d);
 *
 * Paragraphs keep their bytes (no trimming besides the line terminator and
 * a '\r' before it); invalid UTF-8 is replaced by U+FFFD and counted in
 * DocReader.bad_utf8.
 */
#ifndef WB_DOCREAD_H
#define WB_DOCREAD_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/io.h"

typedef enum DocInFormat { DOCIN_AUTO, DOCIN_DOC, DOCIN_JSON, DOCIN_TEXT } DocInFormat;

typedef struct Doc {
    Buf id, title, url; /* empty for plain text */
    Buf text;           /* paragraphs, each followed by '\n' */
    size_t npara;
    uint64_t line;      /* input line where the document starts */
    const char *file;   /* input name */
} Doc;

typedef struct DocReader {
    Reader rd;
    DocInFormat fmt;
    int pending;        /* a line is held back in `held` */
    Buf held;
    uint64_t held_line;
    uint64_t bad_utf8;  /* invalid sequences replaced */
    uint64_t malformed; /* JSON records or <doc> blocks that were skipped */
} DocReader;

/* Read `n` inputs ("-" = stdin; n == 0 means stdin) in layout `fmt`.
 * Pair with docreader_free(). */
void docreader_init(DocReader *dr, char **inputs, int n, DocInFormat fmt);

/* Next document into *d (its buffers are reused). Returns 1, 0 at the end,
 * -1 on an I/O error (err names the file). Malformed JSON records and
 * unterminated <doc> blocks are skipped with a warning and counted. */
int docreader_next(DocReader *dr, Doc *d, Err *err);

/* Parse "auto", "doc", "json", "lines" or "text"; returns 0 or -1. */
int docread_parse_format(const char *name, DocInFormat *fmt);

void docreader_free(DocReader *dr);
void doc_free(Doc *d);

#endif
