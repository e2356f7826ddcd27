/* wikitext.h - wikitext markup to plain-text paragraphs.
 *
 * Turns the raw wikitext of one page (the <text> element of a dump after XML
 * entity decoding) into the paragraphs that WikiExtractor writes by
 * default: templates, tables, references, files, categories and HTML are
 * removed, links are replaced by their anchor text, bold is dropped and
 * italics become double quotes, section headings become "Title." lines in
 * front of the first paragraph of their section, lists are dropped. The
 * default text is WikiExtractor 3.1's, tidied; WikiTextOpts.faithful gives
 * WikiExtractor 3.0.6's bytes.
 * See prep/wikitext.c for the exact rules and the differences from
 * WikiExtractor.
 *
 *   WikiTextOpts o = {0};                 // WikiExtractor defaults
 *   WikiText *wt = wikitext_create(&o);
 *   Buf out = {0};
 *   wikitext_clean(wt, text, len, &out);  // appends "para\npara\n..."
 *   wikitext_destroy(wt);
 *
 * A WikiText holds reusable scratch memory; use one per thread.
 */
#ifndef WB_WIKITEXT_H
#define WB_WIKITEXT_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

/* Values of WikiTextOpts.keep_sections. */
enum {
    WIKITEXT_SECTIONS_DEFAULT = 0, /* WikiExtractor: "Title." before the first
                                      paragraph of a non-empty section */
    WIKITEXT_SECTIONS_DROP = -1,   /* no heading lines at all */
};

typedef struct WikiTextOpts {
    /* 0 = WikiExtractor default: lines starting with * # ; : are dropped.
     * 1 = keep them as paragraphs, without the leading list markers. */
    int keep_lists;
    /* WIKITEXT_SECTIONS_DEFAULT (0, WikiExtractor keeps headings: its
     * Extractor.keepSections is True) or WIKITEXT_SECTIONS_DROP. */
    int keep_sections;
    /* NULL-terminated list of extra namespace names whose [[links]] are
     * dropped with their captions (e.g. "Fájl", "Kép", "Kategória" from the
     * dump's siteinfo); compared case-insensitively, '_' equal to ' '. Always
     * dropped, list or not (NULL): the English names File, Image, Media and
     * Category and a built-in list of the localized File/Image/Category
     * names of the larger Wikipedias. */
    const char *const *drop_ns;
    /* 0 = WikiExtractor default: <math>/<chem>/<ce> become "formula_N" and
     * <code>...</code> becomes "codice_N" (N numbers the page's distinct
     * elements in order). 1 = formulas are dropped and code keeps its text. */
    int no_placeholders;
    /* 1 = count WikiTextStats.leftover_lines (one more scan per paragraph). */
    int count_leftover;
    /* 0 = the tidier default text (see "Default text" in prep/wikitext.c):
     * no blank before , . : ) ] >> or after ( [ << where markup was removed,
     * ':'-indented quotations and poems kept, <br>/<p> separate words.
     * 1 = reproduce the original workflow's WikiExtractor 3.0 text byte for
     * byte (wiki_strip --faithful). */
    int faithful;
} WikiTextOpts;

/* Counters summed over every wikitext_clean() call of one WikiText. */
typedef struct WikiTextStats {
    uint64_t pages;          /* wikitext_clean() calls */
    uint64_t bytes_in;       /* wikitext bytes read */
    uint64_t bytes_out;      /* paragraph bytes written, newlines included */
    uint64_t paragraphs;     /* paragraphs written (headings included) */
    uint64_t invalid_utf8;   /* invalid UTF-8 sequences replaced by U+FFFD */
    uint64_t unbalanced;     /* unclosed or stray {{ }} [[ ]] {| |} repaired */
    uint64_t leftover_lines; /* paragraphs still containing markup-like text:
                                [[ ]] {{ }} {| |} <ref </ /> &name; '' or a
                                leading | (see wikitext_has_markup) */
} WikiTextStats;

typedef struct WikiText WikiText;

/* Create a cleaner. `opts` may be NULL (all defaults); the drop_ns strings
 * are copied. Never returns NULL (allocation failure is fatal). */
WikiText *wikitext_create(const WikiTextOpts *opts);

/* Clean one page: append the article's paragraphs to `out`, each terminated
 * by '\n' (no title line, no <doc> framing). Paragraphs are non-empty, have
 * no leading or trailing whitespace and are valid UTF-8 (invalid input bytes
 * become U+FFFD). Returns 0; never fails: malformed markup is repaired, every
 * scan is bounded and the work is linear in `len`. */
int wikitext_clean(WikiText *wt, const char *text, size_t len, Buf *out);

/* Copy the counters accumulated so far into *st. */
void wikitext_get_stats(const WikiText *wt, WikiTextStats *st);

/* Return 1 when the `len` bytes at `s` (one paragraph, no newline) look
 * like leftover markup by the rule given at WikiTextStats.leftover_lines. */
int wikitext_has_markup(const char *s, size_t len);

/* Free a cleaner; NULL is allowed. */
void wikitext_destroy(WikiText *wt);

#endif
