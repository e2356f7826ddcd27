/* fuzz_mwxml.c - fuzz target of the XML dump reader (prep/mwxml.h).
 *
 * The input is the decompressed XML of a dump (or of a fragment of one).
 * It is parsed twice: fed whole, and fed in chunks of 1 to 64 bytes (the
 * size taken from the input's length), each time with a small max_text so
 * that the skip of long pages runs too. Every byte of every delivered page
 * and of the siteinfo is read (ASan checks the bounds), and the two runs
 * must agree: the same result, the same pages in the same order, the same
 * counters (bad_utf8 only when the input was read to its end), as the reader
 * promises for any chunking. FUZZ_NO_DIFF=1 in the environment turns the
 * comparison off (only the whole feed runs), to look past a known difference
 * for crashes.
 */
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "tests/fuzz/fuzz.h"
#include "prep/mwxml.h"

typedef struct Seen {
    Buf log; /* what the callbacks were given, in order */
} Seen;

static void log_bytes(Buf *b, const char *s, size_t n) {
    char t[32];
    snprintf(t, sizeof t, "%zu:", n);
    buf_puts(b, t);
    if (n) buf_append(b, s, n);
    buf_putc(b, '|');
}

static void on_page(void *ctx, const WikiPage *p) {
    Seen *s = ctx;
    char t[96];
    snprintf(t, sizeof t, "P%lld/%lld/%lld/%llu ", (long long)p->id, (long long)p->revid,
             (long long)p->ns, (unsigned long long)p->line);
    buf_puts(&s->log, t);
    log_bytes(&s->log, p->title, p->title_len);
    if (p->redirect) log_bytes(&s->log, p->redirect, p->redirect_len);
    log_bytes(&s->log, p->text, p->text_len);
    buf_putc(&s->log, '\n');
}

static void log_str(Buf *b, const char *s) {
    if (s)
        log_bytes(b, s, strlen(s));
    else
        buf_puts(b, "-|");
}

static void on_site(void *ctx, const WikiSiteinfo *si) {
    Seen *s = ctx;
    buf_puts(&s->log, "S ");
    log_str(&s->log, si->sitename), log_str(&s->log, si->dbname), log_str(&s->log, si->base);
    log_str(&s->log, si->generator), log_str(&s->log, si->casing);
    for (int i = 0; i < si->nns; i++) {
        char t[32];
        snprintf(t, sizeof t, "%d=", si->ns[i].key);
        buf_puts(&s->log, t);
        log_str(&s->log, si->ns[i].name), log_str(&s->log, si->ns[i].canonical),
            log_str(&s->log, si->ns[i].casing);
    }
    buf_putc(&s->log, '\n');
}

/* Parse data in chunks of `chunk` bytes (0: whole); the log gets the
 * callbacks' arguments, the result and the counters. */
static void parse(const uint8_t *data, size_t size, size_t chunk, Seen *s) {
    MwXmlOpts o = {.name = "fuzz.xml", .max_text = 4096};
    MwXml *wd = mwxml_create(&o, on_page, on_site, s);
    Err err;
    int rc = 0;
    size_t step = chunk ? chunk : size;
    for (size_t i = 0; i < size && rc == 0; i += step)
        rc = mwxml_feed(wd, (const char *)data + i, i + step > size ? size - i : step, &err);
    if (rc == 0) rc = mwxml_finish(wd, &err);
    if (rc) (void)strlen(err.msg); /* the message is a terminated string */
    const MwXmlStats *st = mwxml_stats(wd);
    const WikiSiteinfo *si = mwxml_siteinfo(wd);
    char t[160];
    /* after an error, bad_utf8 counts what was fed, which depends on the chunks */
    snprintf(t, sizeof t, "rc=%d pages=%llu too_large=%llu bad_utf8=%lld ns=%d\n", rc,
             (unsigned long long)st->pages, (unsigned long long)st->too_large,
             rc ? -1 : (long long)st->bad_utf8, si ? si->nns : -1);
    buf_puts(&s->log, t);
    mwxml_destroy(wd);
}

/* One input: data as dump XML, parsed whole and in chunks. Returns 0; a
 * broken promise aborts (fuzz_fail). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int init;
    if (!init) fuzz_quiet("fuzz_mwxml"), init = 1;
    static int compare =
        -1; /* FUZZ_NO_DIFF=1: only the whole feed (a known difference awaits its fix) */
    if (compare < 0) compare = !(getenv("FUZZ_NO_DIFF") && atoi(getenv("FUZZ_NO_DIFF")));
    Seen whole = {0}, chunked = {0};
    parse(data, size, 0, &whole);
    if (compare) parse(data, size, 1 + size % 64, &chunked);
    if (compare && (whole.log.len != chunked.log.len ||
                    memcmp(whole.log.data, chunked.log.data, whole.log.len)))
        fuzz_fail("fed whole and in chunks of %zu bytes, the reader gives different "
                  "results:\n%.*s\n---\n%.*s",
                  1 + size % 64, (int)(whole.log.len > 2000 ? 2000 : whole.log.len), whole.log.data,
                  (int)(chunked.log.len > 2000 ? 2000 : chunked.log.len), chunked.log.data);
    buf_free(&whole.log), buf_free(&chunked.log);
    return 0;
}
