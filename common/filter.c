/* filter.c - the run of a -j text filter (filter.h): open, pool, report,
 * close, dying on the first failure.
 */
#include <stdio.h>
#include <unistd.h>

#include "common/filter.h"

#define FILTER_OBUF (1u << 20) /* stdio buffer of the main output */

/* The side output first, then the main one; a failure of the second drops
 * the first. Dies on failure. */
static void open_outputs(const FilterRun *r) {
    if (r->side_output && writer_open(r->side, r->side_output, r->force, r->err))
        die("%s", r->err->msg);
    if (writer_open(r->out, r->output, r->force, r->err)) {
        if (r->side_output) writer_abort(r->side);
        die("%s", r->err->msg);
    }
    r->out->keep_partial = r->keep_partial;
}

/* The side output first, then the main one: a failure of either leaves
 * neither (regular) file behind. Dies on failure. */
static void close_outputs(const FilterRun *r) {
    int side_renamed = 0;
    if (r->side_output) {
        side_renamed = r->side->tmp != NULL;
        if (r->side->fp && writer_close(r->side, r->err)) {
            writer_abort(r->out);
            die("%s", r->err->msg);
        }
    }
    if (writer_close(r->out, r->err)) {
        if (side_renamed) unlink(r->side_output);
        die("%s", r->err->msg);
    }
}

void filter_run(const FilterRun *r) {
    static char obuf[FILTER_OBUF];
    open_outputs(r);
    setvbuf(r->out->fp, obuf, _IOFBF, sizeof obuf);
    progress_init(r->progress, inputs_total_size(r->inputs, r->ninputs));
    double t0 = now_sec();
    int rc = pool_run(r->nthreads, &r->ops, r->ctx);
    progress_done(r->progress);
    if (rc) die("%s", r->err->msg);
    if (r->report) r->report(r->ctx, now_sec() - t0);
    close_outputs(r);
}
