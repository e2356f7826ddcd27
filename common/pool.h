/* pool.h - ordered parallel batch pipeline.
 *
 * The shape every -j filter uses: the main thread reads records into
 * batches (fill), worker threads transform whole batches (work), and the
 * main thread writes finished batches strictly in input order (flush). The
 * output is therefore byte-identical for every thread count. With
 * nthreads == 1 everything runs inline on the calling thread.
 *
 *   PoolOps ops = {fill, work, flush};
 *   if (pool_run(nthreads, &ops, ctx)) ...   // -1 if fill or flush failed
 *
 * At most 2 * nthreads + 1 batches are alive at once, so memory is bounded
 * by the batch size the caller chooses.
 */
#ifndef WB_POOL_H
#define WB_POOL_H

#include <stdint.h>

#include "common/buf.h"

enum { BATCH_COUNTERS = 16 };

typedef struct Batch {
    uint64_t seq;                    /* 0, 1, 2, ... in input order */
    Buf in;                          /* records, as the caller packs them */
    Buf out;                         /* result, written by work() */
    size_t nrec;                     /* number of records in `in` */
    uint64_t first_line;             /* input line number of the first record */
    uint64_t counts[BATCH_COUNTERS]; /* per-batch statistics for the caller */
    Err err;                         /* work() may fail a batch: set failed and err */
    int failed;
} Batch;

typedef struct PoolOps {
    /* Main thread: fill an emptied batch (in/out cleared, counts zeroed).
     * Return 1 if records were added, 0 at end of input, -1 on error. */
    int (*fill)(void *ctx, Batch *b);
    /* Worker thread `worker` (0..nthreads-1): process b->in into b->out. */
    void (*work)(void *ctx, int worker, Batch *b);
    /* Main thread, in seq order: consume b->out. Return 0, or -1 to stop. */
    int (*flush)(void *ctx, Batch *b);
} PoolOps;

/* Run the pipeline to completion. Returns 0, or -1 as soon as fill or flush
 * returned -1 (after joining the workers; batches after it are dropped). */
int pool_run(int nthreads, const PoolOps *ops, void *ctx);

#endif
