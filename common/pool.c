/* pool.c - ordered parallel batch pipeline on pthreads; see pool.h.
 *
 * Slots cycle FREE -> FILLED (main) -> WORKING -> DONE (worker) -> FREE
 * (main, after flush). One mutex guards all slot states; `work_cv` wakes
 * workers when a batch is filled or at shutdown, `done_cv` wakes the main
 * thread when a batch is done. The main thread flushes the batch with the
 * lowest seq as soon as it is DONE, so order never depends on timing.
 */
#include "common/pool.h"

#include <pthread.h>
#include <string.h>

enum SlotState { S_FREE, S_FILLED, S_WORKING, S_DONE };

typedef struct Pool {
    const PoolOps *ops;
    void *ctx;
    Batch *slots;
    enum SlotState *state;
    int nslots;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    int stop;
    uint64_t next_work; /* lowest seq not yet taken by a worker */
} Pool;

typedef struct WorkerArg {
    Pool *pool;
    int id;
} WorkerArg;

static void batch_reset(Batch *b, uint64_t seq) {
    buf_clear(&b->in);
    buf_clear(&b->out);
    b->nrec = 0;
    b->first_line = 0;
    memset(b->counts, 0, sizeof b->counts);
    b->failed = 0;
    b->err.msg[0] = '\0';
    b->seq = seq;
}

static void *worker_main(void *arg) {
    WorkerArg *wa = arg;
    Pool *p = wa->pool;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        int pick = -1;
        for (int i = 0; i < p->nslots; i++)
            if (p->state[i] == S_FILLED && p->slots[i].seq == p->next_work) pick = i;
        if (pick < 0) {
            if (p->stop) break;
            pthread_cond_wait(&p->work_cv, &p->mu);
            continue;
        }
        p->state[pick] = S_WORKING;
        p->next_work++;
        pthread_cond_broadcast(&p->work_cv); /* the next batch may be ready too */
        pthread_mutex_unlock(&p->mu);
        p->ops->work(p->ctx, wa->id, &p->slots[pick]);
        pthread_mutex_lock(&p->mu);
        p->state[pick] = S_DONE;
        pthread_cond_signal(&p->done_cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static int run_inline(const PoolOps *ops, void *ctx) {
    Batch b;
    memset(&b, 0, sizeof b);
    int rc = 0;
    for (uint64_t seq = 0;; seq++) {
        batch_reset(&b, seq);
        int f = ops->fill(ctx, &b);
        if (f < 0) rc = -1;
        if (f <= 0) break;
        ops->work(ctx, 0, &b);
        if (ops->flush(ctx, &b)) {
            rc = -1;
            break;
        }
    }
    buf_free(&b.in);
    buf_free(&b.out);
    return rc;
}

int pool_run(int nthreads, const PoolOps *ops, void *ctx) {
    if (nthreads <= 1) return run_inline(ops, ctx);
    Pool p;
    memset(&p, 0, sizeof p);
    p.ops = ops;
    p.ctx = ctx;
    p.nslots = 2 * nthreads + 1;
    p.slots = xcalloc((size_t)p.nslots, sizeof *p.slots);
    p.state = xcalloc((size_t)p.nslots, sizeof *p.state);
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.work_cv, NULL);
    pthread_cond_init(&p.done_cv, NULL);
    pthread_t *tids = xcalloc((size_t)nthreads, sizeof *tids);
    WorkerArg *args = xcalloc((size_t)nthreads, sizeof *args);
    for (int i = 0; i < nthreads; i++) {
        args[i] = (WorkerArg){&p, i};
        if (pthread_create(&tids[i], NULL, worker_main, &args[i])) die("cannot create thread");
    }

    uint64_t next_fill = 0, next_flush = 0;
    int eof = 0, rc = 0;
    pthread_mutex_lock(&p.mu);
    while (!(eof && next_flush == next_fill)) {
        /* flush everything that is done, in order */
        int progressed = 0;
        for (int i = 0; i < p.nslots; i++) {
            if (p.state[i] == S_DONE && p.slots[i].seq == next_flush) {
                pthread_mutex_unlock(&p.mu);
                int f = ops->flush(ctx, &p.slots[i]);
                pthread_mutex_lock(&p.mu);
                p.state[i] = S_FREE;
                next_flush++;
                progressed = 1;
                if (f) {
                    rc = -1;
                    goto out;
                }
                i = -1; /* rescan for the next seq */
            }
        }
        /* fill free slots */
        if (!eof) {
            for (int i = 0; i < p.nslots && !eof; i++) {
                if (p.state[i] != S_FREE) continue;
                batch_reset(&p.slots[i], next_fill);
                pthread_mutex_unlock(&p.mu);
                int f = ops->fill(ctx, &p.slots[i]);
                pthread_mutex_lock(&p.mu);
                if (f < 0) {
                    rc = -1;
                    goto out;
                }
                if (f == 0) {
                    eof = 1;
                    break;
                }
                p.state[i] = S_FILLED;
                next_fill++;
                progressed = 1;
                pthread_cond_broadcast(&p.work_cv);
            }
        }
        if (!progressed && !(eof && next_flush == next_fill)) pthread_cond_wait(&p.done_cv, &p.mu);
    }
out:
    p.stop = 1;
    pthread_cond_broadcast(&p.work_cv);
    pthread_mutex_unlock(&p.mu);
    for (int i = 0; i < nthreads; i++)
        pthread_join(tids[i], NULL);
    for (int i = 0; i < p.nslots; i++) {
        buf_free(&p.slots[i].in);
        buf_free(&p.slots[i].out);
    }
    free(p.slots);
    free(p.state);
    free(tids);
    free(args);
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.work_cv);
    pthread_cond_destroy(&p.done_cv);
    return rc;
}
