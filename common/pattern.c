/* pattern.c - PCRE2 behind the Pattern interface (pattern.h).
 *
 * The 8-bit library in UTF mode. JIT compilation is tried once per pattern
 * (PCRE2_JIT_COMPLETE); pcre2_match() then runs the JIT code by itself and
 * the interpreter when there is none. The JIT uses its default 32 KiB
 * stack, enough for line-sized subjects; a pattern that needs more fails
 * that line with PCRE2_ERROR_JIT_STACKLIMIT, reported as -1 like the
 * interpreter's match limit.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "common/pattern.h"

#include <pcre2.h>
#include <stdio.h>
#include <string.h>

struct Pattern {
    pcre2_code *code;
    char *source;
    int jit;
};

struct PatternData {
    pcre2_match_data *md;
};

/* PCRE2's text for error code `rc`. */
static void pcre_message(int rc, char *out, size_t cap) {
    if (pcre2_get_error_message(rc, (PCRE2_UCHAR *)out, cap) < 0)
        snprintf(out, cap, "error %d", rc);
}

Pattern *pattern_create(const char *re, Err *err) {
    int rc;
    PCRE2_SIZE off;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP,
                                     &rc, &off, NULL);
    if (!code) {
        char msg[256];
        pcre_message(rc, msg, sizeof msg);
        err_set(err, "bad pattern '%s': %s at offset %zu", re, msg, (size_t)off);
        return NULL;
    }
    Pattern *p = xcalloc(1, sizeof *p);
    p->code = code;
    p->source = xstrdup(re);
    p->jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
    return p;
}

void pattern_destroy(Pattern *p) {
    if (!p) return;
    pcre2_code_free(p->code);
    free(p->source);
    free(p);
}

const char *pattern_source(const Pattern *p) { return p->source; }

int pattern_jit(const Pattern *p) { return p->jit; }

PatternData *pattern_data_create(const Pattern *p) {
    PatternData *d = xcalloc(1, sizeof *d);
    d->md = pcre2_match_data_create_from_pattern(p->code, NULL);
    if (!d->md) die("out of memory allocating PCRE2 match data");
    return d;
}

void pattern_data_destroy(PatternData *d) {
    if (!d) return;
    pcre2_match_data_free(d->md);
    free(d);
}

int pattern_find(const Pattern *p, PatternData *d, const char *s, size_t n, unsigned flags,
                 Err *err) {
    uint32_t opts = (flags & PATTERN_VALID_UTF8) ? PCRE2_NO_UTF_CHECK : 0;
    int rc = pcre2_match(p->code, (PCRE2_SPTR)(n ? s : ""), n, 0, opts, d->md, NULL);
    if (rc >= 0) return 1;
    if (rc == PCRE2_ERROR_NOMATCH) return 0;
    char msg[256];
    pcre_message(rc, msg, sizeof msg);
    if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21)
        return err_set(err, "invalid UTF-8: %s", msg);
    return err_set(err, "pattern '%s': %s", p->source, msg);
}
