/* segmenter.h - rule-based sentence boundaries for one paragraph of text.
 *
 * A Segmenter holds the language rules and the word lists of
 * data/abbrev/<lang>.txt (abbreviations, month names, sentence starters,
 * see data/abbrev/README.md). It is read-only once created, so any number
 * of threads may split with one shared object.
 *
 *   Err err; SentSpans sp = {0};
 *   SegmenterOpts o = {.lang = "hu"};
 *   Segmenter *ss = segmenter_create(&o, &err);    // NULL: err says why
 *   segmenter_split(ss, text, len, &sp);
 *   for (size_t i = 0; i < sp.n; i++) use(text + sp.v[i].start, sp.v[i].end - sp.v[i].start);
 *   sentspans_free(&sp); segmenter_destroy(ss);
 *
 * Sentences are byte ranges of the input: nothing is rewritten, leading and
 * trailing white space of each sentence is left out, and closing quotes or
 * brackets after the final punctuation stay with the sentence.
 */
#ifndef WB_SEGMENTER_H
#define WB_SEGMENTER_H

#include <stddef.h>

#include "common/common.h"

/* Rule sets. Hungarian and English have their own number, Roman numeral
 * and initial rules; every other language gets the generic ones. */
typedef enum SentLang { SENT_GENERIC, SENT_EN, SENT_HU } SentLang;

typedef struct SegmenterOpts {
    const char *lang;         /* "hu", "en", other code; NULL = "en" */
    const char *const *extra; /* further word-list files (--abbrev) */
    int nextra;
    const char *data_dir; /* directory holding abbrev/; NULL = cli_data_path */
} SegmenterOpts;

typedef struct SentSpan {
    size_t start, end; /* byte offsets: text[start..end) */
} SentSpan;

typedef struct SentSpans {
    SentSpan *v;
    size_t n, cap;
} SentSpans;

typedef struct Segmenter Segmenter;

/* Error codes of segmenter_create besides 0. */
enum { SEGMENTER_EBAD = -1, SEGMENTER_EMISSING = -2, SEGMENTER_ELANG = -3 };

/* Build a splitter: language rules for o->lang plus the word lists
 * abbrev/generic.txt, abbrev/<lang>.txt (required for hu and en, optional
 * for other languages) and every o->extra file. Returns NULL with err set
 * ("path: No such file or directory", "path:12: unknown flag '=x'");
 * *code (if not NULL) gets SEGMENTER_EMISSING when a file could not be
 * opened, SEGMENTER_ELANG for a language code that is not [A-Za-z0-9_-]{1,15},
 * SEGMENTER_EBAD for malformed content.
 * Pair with segmenter_destroy(). */
Segmenter *segmenter_create(const SegmenterOpts *o, int *code, Err *err);

void segmenter_destroy(Segmenter *ss);

/* Add the entries of one word-list file (see data/abbrev/README.md).
 * Returns 0, SEGMENTER_EMISSING or SEGMENTER_EBAD with err set. Not thread
 * safe: call before sharing the splitter. */
int segmenter_load(Segmenter *ss, const char *path, Err *err);

/* Add one word-list line ("dr.", "stb. =end", "január =month"). Returns 0
 * or SEGMENTER_EBAD with err set. Not thread safe, as segmenter_load. */
int segmenter_add(Segmenter *ss, const char *line, size_t len, Err *err);

/* The rule set in use. */
SentLang segmenter_lang(const Segmenter *ss);

/* Split text[0..len) (one paragraph, UTF-8; '\n' inside counts as white
 * space) into sentences. The spans replace the contents of *out (its
 * memory is reused) and are returned in order, non-empty and
 * non-overlapping. Returns the number of sentences. Reentrant: the
 * splitter is only read. Invalid UTF-8 is tolerated (treated as symbols). */
size_t segmenter_split(const Segmenter *ss, const char *text, size_t len, SentSpans *out);

/* Release the span array. */
void sentspans_free(SentSpans *sp);

#endif
