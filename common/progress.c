/* progress.c - the pipeline-safe progress meter (progress.h). */
#include "common/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"

#define TTY_INTERVAL 0.166 /* about 6 redraws a second */
#define LOG_INTERVAL 10.0  /* seconds between log lines */

enum { ENV_AUTO, ENV_TTY, ENV_LOG, ENV_OFF };

/* WIKIBERT_PROGRESS: the mode into *mode, the interval (or -1) returned. */
static double env_setting(int *mode) {
    const char *s = getenv("WIKIBERT_PROGRESS");
    *mode = ENV_AUTO;
    if (!s || !*s) return -1;
    static const char *const names[] = {"auto", "tty", "log", "off"};
    size_t n = strcspn(s, ":");
    for (int i = 0; i < 4; i++)
        if (strlen(names[i]) == n && strncmp(s, names[i], n) == 0) *mode = i;
    if (!s[n]) return -1;
    char *end;
    double v = strtod(s + n + 1, &end);
    return end != s + n + 1 && v >= 0 ? v : -1;
}

int progress_stderr_tty(void) {
    static int cached = -1;
    if (cached < 0) {
        int mode;
        env_setting(&mode);
        cached = mode == ENV_TTY || (mode == ENV_AUTO && isatty(2));
    }
    return cached;
}

/* stdout feeds another process: a later stage owns the terminal line. */
static int stdout_is_pipe(void) {
    struct stat sb;
    return fstat(1, &sb) == 0 && (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode));
}

void progress_init(Progress *p, uint64_t total) {
    memset(p, 0, sizeof *p);
    p->start = p->last = now_sec();
    p->total = total;
    int env;
    double interval = env_setting(&env);
    if (env == ENV_OFF || display_level < 2)
        p->mode = PROGRESS_OFF;
    else if (env != ENV_LOG && progress_stderr_tty())
        p->mode = stdout_is_pipe() ? PROGRESS_OFF : PROGRESS_TTY;
    else if (env == ENV_LOG || display_level >= 3)
        p->mode = PROGRESS_LOG;
    p->interval = interval >= 0 ? interval : p->mode == PROGRESS_TTY ? TTY_INTERVAL : LOG_INTERVAL;
}

int progress_due(Progress *p, int final) {
    if (p->mode == PROGRESS_OFF) return 0;
    double t = now_sec();
    if (!final && t - p->last < p->interval) return 0;
    p->last = t;
    return 1;
}

void progress_show(Progress *p, const char *line) {
    char buf[512];
    int tty = p->mode == PROGRESS_TTY;
    int n = snprintf(buf, sizeof buf, "%s%s: %s%s", tty ? "\r" : "", progname, line,
                     tty ? " \033[K" : "\n");
    if (n >= (int)sizeof buf) n = (int)sizeof buf - 1;
    fwrite(buf, 1, (size_t)n, stderr); /* one write: lines of two stages never mix */
    fflush(stderr);
    p->shown = tty;
}

/* m:ss of a number of seconds into out. */
static void fmt_time(char *out, size_t cap, double secs) {
    snprintf(out, cap, "%d:%02d", (int)(secs / 60), (int)secs % 60);
}

void progress_update(Progress *p, uint64_t done, uint64_t bytes, uint64_t items, const char *what) {
    if (!progress_due(p, 0)) return;
    double el = p->last - p->start;
    double mb = (double)bytes / 1e6;
    char line[400], t[32];
    int n = snprintf(line, sizeof line, "%llu %s, %.1f MB, %.1f MB/s", (unsigned long long)items,
                     what, mb, el > 0 ? mb / el : 0);
    if (p->total && done > 0 && done <= p->total) {
        fmt_time(t, sizeof t, el * (double)(p->total - done) / (double)done);
        snprintf(line + n, sizeof line - (size_t)n, ", ETA %s (%.0f%%)", t,
                 100.0 * (double)done / (double)p->total);
    } else {
        fmt_time(t, sizeof t, el);
        snprintf(line + n, sizeof line - (size_t)n, ", %s", t);
    }
    progress_show(p, line);
}

void progress_done(Progress *p) {
    if (p->shown && p->mode == PROGRESS_TTY) {
        fputs(PROGRESS_CLEAR_LINE, stderr);
        fflush(stderr);
    }
    p->shown = 0;
}
