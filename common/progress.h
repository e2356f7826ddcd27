/* progress.h - the progress meter of every program, safe in pipelines.
 *
 * Several stages of a pipe share one stderr, so the meter picks one of
 * three modes when it starts (progress_init):
 *
 *   tty  stderr is a terminal: one line redrawn in place ("\r...\033[K"),
 *        at most ~6 times a second, cleared by progress_done(). Only the
 *        stage that owns the line draws: one whose stdout is not a pipe or
 *        socket, i.e. the last stage of a pipe (it writes -o, a file or the
 *        terminal). Earlier stages stay quiet, so two programs never redraw
 *        the same line ("ETA 0:02\rwiki_strip: ..."); the last stage's
 *        count is the pipeline's output so far. Every message (die, warn,
 *        info) on a terminal starts by clearing the line, so a summary of
 *        an earlier stage never lands inside the drawn line.
 *   log  stderr is not a terminal (a batch job's log file) and -v is given:
 *        a newline-terminated line every 10 seconds from every stage, each
 *        written with one write() so lines of two stages do not mix.
 *   off  otherwise, and always at -q.
 *
 * WIKIBERT_PROGRESS=MODE[:SECONDS] overrides the choice: MODE is auto (the
 * rules above), tty (as if stderr were a terminal; the line-owner rule
 * still holds), log (log lines at the default level too, e.g. for a make
 * run in a batch job without -v everywhere) or off; SECONDS sets the
 * interval (0: every update, which the tests use).
 */
#ifndef WB_PROGRESS_H
#define WB_PROGRESS_H

#include <stdint.h>

enum { PROGRESS_OFF, PROGRESS_TTY, PROGRESS_LOG };

/* What clears a terminal's current line: to the start, then erase it. */
#define PROGRESS_CLEAR_LINE "\r\033[K"

typedef struct Progress {
    double start, last, interval;
    uint64_t total; /* expected units (bytes), 0 if unknown */
    int mode;       /* PROGRESS_OFF, _TTY or _LOG */
    int shown;      /* a tty line was drawn and needs clearing */
} Progress;

/* Start a meter; `total` is the expected amount of input (0: unknown).
 * Chooses the mode (above) from the display level, stderr, stdout and
 * WIKIBERT_PROGRESS. */
void progress_init(Progress *p, uint64_t total);

/* Maybe print "<items> <what>, <MB> MB, <MB/s> MB/s, ETA m:ss (pct%)"
 * (throttled), or with no total the time so far ("m:ss"). `done` is
 * measured against the total given to progress_init (e.g. compressed
 * bytes read) for the ETA and percentage; `bytes` is what the MB and MB/s
 * figures count (e.g. XML bytes). */
void progress_update(Progress *p, uint64_t done, uint64_t bytes, uint64_t items, const char *what);

/* For meters with their own text: 1 when a line is due now (the mode is
 * not off and the interval has passed; `final` forces it), which the
 * caller then passes to progress_show. */
int progress_due(Progress *p, int final);

/* Print "progname: <line>" in the meter's mode (no newline in `line`). */
void progress_show(Progress *p, const char *line);

/* Clear the tty line if one was drawn. Call before the summary line. */
void progress_done(Progress *p);

/* Nonzero when stderr is (or is taken as) a terminal: messages then start
 * by clearing the line another stage may have drawn. */
int progress_stderr_tty(void);

#endif
