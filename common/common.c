/* common.c - diagnostics, checked allocation, library error reports.
 * See common.h for the display levels and the die()/Err split.
 */
#include "common/common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "common/progress.h"

const char *progname = "wikibert";
int display_level = 2;

static void (*die_hook)(void);
static int died;

void set_die_hook(void (*fn)(void)) { die_hook = fn; }

int dying(void) { return died; }

/* One message as one write: on a terminal it first clears the line a
 * progress meter (ours or another stage's) may have drawn, so messages
 * never land inside one (progress.h). */
static void vreport(const char *fmt, va_list ap) {
    char buf[4096];
    int pre = snprintf(buf, sizeof buf, "%s%s: ", progress_stderr_tty() ? PROGRESS_CLEAR_LINE : "",
                       progname);
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(buf + pre, sizeof buf - (size_t)pre - 1, fmt, aq);
    va_end(aq);
    if (n >= 0 && pre + n < (int)sizeof buf - 1) {
        buf[pre + n] = '\n';
        fwrite(buf, 1, (size_t)(pre + n + 1), stderr);
        return;
    }
    fwrite(buf, 1, (size_t)pre, stderr); /* too long for one write */
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

WB_NORETURN static void vdie(int code, const char *fmt, va_list ap) {
    died = 1;
    if (display_level >= 1) vreport(fmt, ap);
    if (die_hook) {
        void (*fn)(void) = die_hook;
        die_hook = NULL;
        fn();
    }
    exit(code);
}

void die_code(int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vdie(code, fmt, ap);
}

void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vdie(EXIT_DATA, fmt, ap);
}

void warn(const char *fmt, ...) {
    if (display_level < 2) return;
    va_list ap;
    va_start(ap, fmt);
    vreport(fmt, ap);
    va_end(ap);
}

void info(int level, const char *fmt, ...) {
    if (display_level < level) return;
    va_list ap;
    va_start(ap, fmt);
    vreport(fmt, ap);
    va_end(ap);
}

static void oom(size_t n) {
    died = 1;
    fprintf(stderr, "%s: out of memory allocating %zu bytes\n", progname, n);
    if (die_hook) die_hook();
    exit(EXIT_DATA);
}

void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size);
    return p;
}

#define HUGE_PAGE ((size_t)2 << 20)

void *xmalloc_huge(size_t n) {
    void *p;
    if (n < HUGE_PAGE) {
        if (posix_memalign(&p, 64, n ? n : 1)) oom(n);
        return p;
    }
    size_t r = (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    if (posix_memalign(&p, HUGE_PAGE, r)) oom(n);
#ifdef MADV_HUGEPAGE
    /* advice only: where the kernel has no transparent huge pages, or
     * gives them to every mapping anyway, nothing changes */
    madvise(p, r, MADV_HUGEPAGE);
#endif
    return p;
}

void *xcalloc_huge(size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) oom(SIZE_MAX);
    size_t t = n * size;
    void *p = xmalloc_huge(t);
    memset(p, 0, t);
    return p;
}

void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = xmalloc(n);
    memcpy(p, s, n);
    return p;
}

/* Shortest a word is cut to, and the share of a message kept from its
 * start when no word is long enough to cut (the rest comes from its end). */
enum { FIT_MIN_WORD = 24 };

/* Shorten s[0..len) in place to at most max bytes: the longest word (a run
 * without a space: a path, a quoted value) loses its middle to "...",
 * then the next longest, down to FIT_MIN_WORD bytes each; only if that is
 * not enough does the message's own middle go. Cuts fall between UTF-8
 * characters. Returns the new length. */
static size_t fit_in(char *s, size_t len, size_t max) {
    while (len > max) {
        size_t best = 0, blen = 0;
        for (size_t i = 0; i < len;) {
            size_t j = i;
            while (j < len && s[j] != ' ')
                j++;
            if (j - i > blen) best = i, blen = j - i;
            i = j + 1;
        }
        size_t a = 0, b = len, keep = max > 3 ? max - 3 : 0; /* the whole message */
        if (blen > FIT_MIN_WORD + 3) {
            size_t excess = len - max;
            a = best, b = best + blen;
            keep = blen >= excess + 3 + FIT_MIN_WORD ? blen - excess - 3 : FIT_MIN_WORD;
        }
        size_t head = (b - a) == len ? keep / 3 : keep / 2, tail = keep - head;
        size_t h = a + head, t = b - tail;
        while (h > a && ((unsigned char)s[h] & 0xC0) == 0x80)
            h--;
        while (t < b && ((unsigned char)s[t] & 0xC0) == 0x80)
            t++;
        memcpy(s + h, "...", 3);
        memmove(s + h + 3, s + t, len - t);
        len = h + 3 + (len - t);
    }
    return len;
}

size_t vfmt_fit(char *buf, size_t cap, const char *fmt, va_list ap) {
    if (cap == 0) return 0;
    char small[4096], *s = small;
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(small, sizeof small, fmt, aq);
    va_end(aq);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof small) { /* a longer message: format it whole */
        s = malloc((size_t)n + 1);
        if (!s) {
            s = small, n = (int)sizeof small - 1;
        } else {
            va_copy(aq, ap);
            vsnprintf(s, (size_t)n + 1, fmt, aq);
            va_end(aq);
        }
    }
    size_t len = fit_in(s, (size_t)n, cap - 1);
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (s != small) free(s);
    return len;
}

size_t fmt_fit(char *buf, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    size_t n = vfmt_fit(buf, cap, fmt, ap);
    va_end(ap);
    return n;
}

int err_set(Err *err, const char *fmt, ...) {
    if (!err) return -1;
    va_list ap;
    va_start(ap, fmt);
    vfmt_fit(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

double now_sec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
