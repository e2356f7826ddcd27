/* common.c - diagnostics, checked allocation, library error reports.
 * See common.h for the display levels and the die()/Err split.
 */
#include "common/common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
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

int err_set(Err *err, const char *fmt, ...) {
    if (!err) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

double now_sec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
