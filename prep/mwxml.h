/* mwxml.h - streaming MediaWiki XML export parser (expat underneath).
 *
 * Feed decompressed XML in chunks of any size; every complete <page> is
 * handed to a callback, and the <siteinfo> once, before the first page.
 * Memory is bounded by the largest page kept (pages whose text or title is
 * longer than max_text are skipped and counted, their text is never
 * accumulated) and by max_markup: a tag, comment or other piece of markup
 * not closed within that many bytes, which expat would buffer whole, is an
 * error, and so is a <siteinfo> field longer than max_text.
 *
 * Input bytes that are not valid UTF-8 are replaced by U+FFFD before the
 * XML parser sees them (counted in MwXmlStats.bad_utf8), so one broken
 * byte cannot stop a 20 GB dump. UTF-16 input and XML that is not a
 * MediaWiki export are rejected with a clear error. A stream that starts
 * directly with <page> (one stream cut out of a multistream dump) is
 * accepted as a fragment.
 *
 *   MwXml *wd = mwxml_create(&opts, on_page, on_siteinfo, ctx);
 *   while (more) if (mwxml_feed(wd, data, n, &err)) ...
 *   if (mwxml_finish(wd, &err)) ...   // checks the dump ended properly
 *   mwxml_destroy(wd);
 */
#ifndef WB_MWXML_H
#define WB_MWXML_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

typedef struct MwXml MwXml;

typedef struct WikiNamespace {
    int key;
    char *name;      /* local name, "" for the main namespace */
    char *canonical; /* MediaWiki canonical (English) name, "" if none */
    char *casing;    /* "first-letter" or "case-sensitive" */
} WikiNamespace;

typedef struct WikiSiteinfo {
    char *sitename, *dbname, *base, *generator, *casing;
    WikiNamespace *ns;
    int nns;
} WikiSiteinfo;

typedef struct WikiPage {
    int64_t id, revid, ns;
    const char *title;
    size_t title_len;
    const char *redirect; /* NULL if the page is not a redirect */
    size_t redirect_len;
    const char *text; /* wikitext of the last revision */
    size_t text_len;
    uint64_t line; /* XML line of <page>, for messages */
} WikiPage;

typedef struct MwXmlStats {
    uint64_t pages;      /* complete <page> elements seen */
    uint64_t too_large;  /* skipped: text or title longer than max_text */
    uint64_t bad_utf8;   /* invalid UTF-8 sequences replaced */
    uint64_t bad_number; /* skipped: an <id>, <ns> or revision <id> that is
                          * not a whole number in range (warned) */
    uint64_t xml_bytes;  /* decompressed bytes fed */
} MwXmlStats;

typedef struct MwXmlOpts {
    const char *name;  /* input name for messages */
    size_t max_text;   /* pages with longer text are skipped; 0 = no limit */
    size_t max_markup; /* longest markup token (a tag with its attributes,
                        * a comment); 0: io_max_line() (--max-line-bytes) */
} MwXmlOpts;

typedef void (*WikiPageFn)(void *ctx, const WikiPage *page);
typedef void (*WikiSiteFn)(void *ctx, const WikiSiteinfo *site);

/* Create a parser. Callbacks may be NULL. Pair with mwxml_destroy(). */
MwXml *mwxml_create(const MwXmlOpts *opts, WikiPageFn on_page, WikiSiteFn on_site, void *ctx);

/* Parse the next chunk. Returns 0, or -1 with err set to one line naming
 * the input, XML line:column and decompressed byte offset. Pages complete
 * before the error have already been delivered. */
int mwxml_feed(MwXml *wd, const char *data, size_t len, Err *err);

/* Signal the end of input. Returns -1 (err set) if the XML is incomplete:
 * empty input, unclosed elements, missing </mediawiki>. */
int mwxml_finish(MwXml *wd, Err *err);

/* Counters so far. */
const MwXmlStats *mwxml_stats(const MwXml *wd);

/* Parsed siteinfo (all fields NULL/0 until </siteinfo> was seen). */
const WikiSiteinfo *mwxml_siteinfo(const MwXml *wd);

/* Free the parser and everything it owns. */
void mwxml_destroy(MwXml *wd);

/* MediaWiki's canonical name for a namespace number ("File" for 6), or
 * NULL if it has none. Canonical names are valid on every wiki. */
const char *wiki_canonical_ns(int key);

/* Expat version string, for --version. */
const char *mwxml_expat_version(void);

#endif
