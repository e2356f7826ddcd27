/* common.h - diagnostics, exit codes, checked allocation.
 *
 * Every program sets `progname` (cli_init does it) and reports through
 * die()/warn()/info(), which print "progname: message" on stderr and honour
 * the display level moved by -q/-v:
 *   0 silent, 1 errors, 2 warnings and summary (default), 3 progress, 4 debug.
 * Library code never calls die(): it returns -1 and fills an Err (below) so
 * that tests and fuzzers can drive it; the thin mains turn that into die().
 */
#ifndef WB_COMMON_H
#define WB_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define WB_VERSION "0.1.0"

enum {
    EXIT_OK = 0,    /* success */
    EXIT_DATA = 1,  /* runtime or data error */
    EXIT_USAGE = 2, /* bad command line */
};

extern const char *progname;
extern int display_level;

#if defined(__GNUC__)
#define WB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define WB_NORETURN __attribute__((noreturn))
#else
#define WB_PRINTF(a, b)
#define WB_NORETURN
#endif

/* Print "progname: message" and exit with EXIT_DATA. Runs the registered
 * cleanup first (removal of a partial -o file). */
WB_NORETURN void die(const char *fmt, ...) WB_PRINTF(1, 2);
/* Same as die() but with an explicit exit code. */
WB_NORETURN void die_code(int code, const char *fmt, ...) WB_PRINTF(2, 3);
/* Print "progname: message" at display level >= 2. */
void warn(const char *fmt, ...) WB_PRINTF(1, 2);
/* Print "progname: message" at display level >= `level`. */
void info(int level, const char *fmt, ...) WB_PRINTF(2, 3);

/* 1 once die(), die_code() or an out-of-memory exit has begun: the check
 * of stdout at exit (io.h, stdio_init) then adds no second message. */
int dying(void);

/* Register one function that die() calls before exiting (the atomic writer
 * uses it to remove its temp file). Passing NULL clears it. */
void set_die_hook(void (*fn)(void));

/* CHECK(cond, fmt, ...): die with file:line and the failed expression. For
 * internal invariants, not for data errors. */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) die("%s:%d: check failed: %s", __FILE__, __LINE__, #cond);                    \
    } while (0)

/* Checked allocation: out-of-memory is fatal and names the size. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* Checked allocation for large arrays that live long and are read in
 * strides (a model's weights, activations, packing buffers): from 2 MiB
 * up, aligned to 2 MiB and advised for the kernel's transparent huge
 * pages, so products over them miss the TLB less; below, aligned to 64
 * bytes (a cache line, an AVX load). Release with free(). xcalloc_huge
 * zeroes the whole array at once. */
void *xmalloc_huge(size_t n);
void *xcalloc_huge(size_t n, size_t size);

/* Library error report: a message plus where in the input it happened. */
typedef struct Err {
    char msg[512];
} Err;

/* Format into err->msg; returns -1 so callers can `return err_set(...)`.
 * A message too long for msg is shortened as fmt_fit does: it keeps its
 * end, the reason. */
int err_set(Err *err, const char *fmt, ...) WB_PRINTF(2, 3);

/* snprintf into buf[0..cap) for messages: one too long for buf keeps its
 * start and its end (the reason) and is shortened in the middle of its
 * longest words (paths) with "...", as little as needed, never inside a
 * UTF-8 character ("/very/long/...path/x.hdf5: No such file or
 * directory"). Returns the length written. */
size_t fmt_fit(char *buf, size_t cap, const char *fmt, ...) WB_PRINTF(3, 4);
size_t vfmt_fit(char *buf, size_t cap, const char *fmt, va_list ap);

/* Monotonic wall clock in seconds. */
double now_sec(void);

#endif
