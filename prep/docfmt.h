/* docfmt.h - writing cleaned articles in the layouts downstream tools read.
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
 */
#ifndef WB_DOCFMT_H
#define WB_DOCFMT_H

#include <stddef.h>

#include "common/buf.h"

typedef enum DocFormat { DOC_DOC, DOC_JSON, DOC_LINES } DocFormat;

typedef struct DocMeta {
    const char *id, *revid, *url, *title; /* NUL-terminated, UTF-8 */
} DocMeta;

/* Append one article to out. `paras` holds the paragraphs, each ended by
 * '\n' (plen bytes; may be empty). */
void docfmt_write(Buf *out, DocFormat fmt, const DocMeta *m, const char *paras, size_t plen);

/* Parse "doc", "json" or "lines"; returns 0 or -1. */
int docfmt_parse(const char *name, DocFormat *fmt);

/* Length of s[0..n) after removing trailing whitespace as Python's
 * str.rstrip() does (Unicode White_Space plus \x1c-\x1f). */
size_t py_rstrip_len(const char *s, size_t n);

#endif
