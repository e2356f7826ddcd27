/* filter.h - the run of a -j text filter: outputs open, pool, report, close.
 *
 * wiki_strip, sent_split, wp_tokenize and text_filter end the same way:
 * open the output (stdout or an atomic -o FILE) with a 1 MiB stdio buffer,
 * start the progress meter over the inputs' total size, run the ordered
 * batch pipeline (common/pool.h), stop the meter, die on a failed fill or
 * flush, print the program's summary, and close the output (renaming it
 * into place). This is that tail, once. The program keeps what is its
 * own: option parsing, the State its fill/work/flush share, and the
 * summary line (the report callback).
 *
 *   static State st;                       // holds out, progress and err
 *   FilterRun r = {.output = cc.output, .force = cc.force,
 *                  .inputs = argv + optind, .ninputs = argc - optind,
 *                  .nthreads = cc.nthreads, .ops = {fill, work, flush}, .ctx = &st,
 *                  .out = &st.out, .progress = &st.progress, .err = &st.err,
 *                  .report = report};
 *   filter_run(&r);                        // returns only on success
 *
 * fill() updates *progress; fill() and flush() write through *out and set
 * *err before returning -1. An optional side output (text_filter's
 * --rejected) is opened before and closed before the main output, so that
 * a failure of either leaves neither regular file behind.
 */
#ifndef WB_FILTER_H
#define WB_FILTER_H

#include "common/cli.h"
#include "common/io.h"
#include "common/pool.h"

typedef struct FilterRun {
    const char *output;      /* -o FILE; NULL or "-": stdout */
    const char *side_output; /* a second file (NULL: none); never stdout */
    int force;               /* -f: replace existing output files */
    int keep_partial;        /* on a data error keep OUTPUT.partial (io.h) */
    char **inputs;           /* the inputs, for the meter's total size */
    int ninputs;             /* 0: stdin */
    int nthreads;            /* -j */
    PoolOps ops;             /* fill, work, flush */
    void *ctx;               /* passed to ops and report */
    Writer *out;             /* the main output: opened and closed here */
    Writer *side;            /* the side output (with side_output) */
    Progress *progress;      /* the meter fill() updates */
    Err *err;                /* where ops, opens and closes leave errors */
    /* After a successful run, with the outputs still open: print the
     * summary (secs: the pool's wall time). May die() (the outputs are
     * then removed, as for any die). NULL: no summary. */
    void (*report)(void *ctx, double secs);
} FilterRun;

/* Open the outputs, run the pool over r->inputs, report, close. Returns
 * only on success; on any failure it dies with *r->err's message (exit 1)
 * and the Writers remove their temp files. One run at a time (the main
 * output's stdio buffer is static); runs one after another are fine. */
void filter_run(const FilterRun *r);

#endif
