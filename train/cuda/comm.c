/* comm.c - the data-parallel group: launcher environment, NCCL and MPI
 * (see comm.h). WB_HAVE_NCCL and WB_HAVE_MPI come from the build's test
 * compiles. WB_COMM_EMU (the tests' CPU emulation of the backend only)
 * replaces NCCL by train/cuda/emu/comm_emu.h's shared-memory collectives between
 * processes, met through --nccl_id_file.
 *
 * The place, the watchdog and the public functions are common; what moves
 * the data is one transport, chosen when building: the emulation
 * (WB_COMM_EMU), else NCCL (WB_HAVE_NCCL; its id shared through MPI where
 * the build has MPI, else a file), else none (one process only). Each has
 * a section below defining the same static functions (declared, with
 * their contracts, before the common part); the public functions call
 * them once. */
#include "train/cuda/comm.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/io.h"

#if defined(WB_COMM_EMU)
#define COMM_EMU
#define TR_TIMES_WAITS 1 /* the watchdog's clock runs only while it waits for the others */
#include "train/cuda/emu/comm_emu.h"
#elif defined(WB_HAVE_NCCL)
#define COMM_NCCL
#include <nccl.h>
#ifdef WB_HAVE_MPI
#include <mpi.h>
#endif
#else
#define COMM_NONE
#endif
#ifndef TR_TIMES_WAITS
#define TR_TIMES_WAITS 0 /* the watchdog's clock runs from comm_wait_begin */
#endif

struct Comm {
    int rank, world, local_rank, mpi;
    const char *launcher; /* whose variables gave the place, or NULL */
    const char *id_file;
    char desc[160];
    /* the watchdog: a thread that ends the process when a wait for the
     * other ranks lasts timeout_s, or NCCL reports an error */
    int timeout_s;
    pthread_t watch;
    atomic_int watching, stop, connected;
    atomic_int in_wait;      /* between comm_wait_begin and comm_wait_end */
    atomic_llong wait_since; /* ms on the monotonic clock; 0: not waiting */
    _Atomic(const char *) wait_what;
#if defined(COMM_EMU)
    EmuComm emu;
#elif defined(COMM_NCCL)
    ncclUniqueId id;
    ncclComm_t nccl;
#endif
};

/* The launchers whose variables give a place, in the order they are
 * believed: a launcher started inside another one's job (torchrun or
 * mpirun inside an sbatch script, whose SLURM_PROCID is 0 in every
 * process) sets its own variables on top, so the innermost comes first.
 * All three of one launcher's variables are taken together. */
static const struct Launcher {
    const char *name, *rank, *size, *local;
    int mpi; /* its processes can bootstrap MPI */
} LAUNCHERS[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", 0},
    {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", 1},
    {"MPICH (PMI)", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", 1},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", 1},
};

/* variable name as an int, or -1 when unset or not a number */
static int env_int(const char *name) {
    const char *v = getenv(name);
    if (!v || !*v) return -1;
    char *end;
    long x = strtol(v, &end, 10);
    return *end || x < 0 || x > 1 << 30 ? -1 : (int)x;
}

static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- the transport's functions ---- */

/* world > 1, the place known and the watchdog started: meet the other
 * ranks (rank 0's NCCL id, or the emulation's shared file; l: the
 * launcher that gave the place, or NULL) and describe the group in
 * c->desc. 0, or -1 with err. */
static int tr_join(Comm *c, const struct Launcher *l, Err *err);
/* world > 1, on this process's GPU: the communicator. 0, or -1 with err. */
static int tr_connect(Comm *c, Err *err);
/* for the watchdog: an error the transport's own threads report, written
 * into buf (n bytes) and returned, or NULL */
static const char *tr_fault(Comm *c, char *buf, size_t n);
/* the collectives of comm.h, for world > 1 (and n > 0 where the public
 * function says so); a failure is fatal */
static void tr_allreduce_f32(Comm *c, float *dev, size_t n, void *stream);
static void tr_allreduce_f64(Comm *c, double *dev, size_t n, void *stream);
static void tr_reduce_f32(Comm *c, float *dev, size_t n, int root, void *stream);
static void tr_broadcast_ranges_f32(Comm *c, float *dev, const size_t *start, const size_t *len,
                                    void *stream);
static void tr_allgather_i64(Comm *c, const int64_t *dev_in, int64_t *dev_out, size_t n,
                             void *stream);
/* what tr_join and tr_connect opened (also after a failure of either, or
 * when they never ran) */
static void tr_close(Comm *c);

/* ---- the watchdog ---- */

static void *watchdog(void *arg) {
    Comm *c = arg;
    while (!atomic_load(&c->stop)) {
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
        char buf[160];
        const char *why = tr_fault(c, buf, sizeof buf);
        long long t0 = atomic_load(&c->wait_since);
        if (!why && t0 && now_ms() - t0 > c->timeout_s * 1000LL) {
            snprintf(buf, sizeof buf,
                     "waited %d s for %s: another rank has failed or stopped (if it is only slow: "
                     "--comm_timeout)",
                     c->timeout_s, atomic_load(&c->wait_what));
            why = buf;
        }
        if (why) { /* the main thread is stuck in a wait: end here, without exit()'s handlers */
            fprintf(stderr, "%s: rank %d of %d: %s\n", progname, c->rank, c->world, why);
            writer_unlink_temps();
            _exit(EXIT_DATA);
        }
    }
    return NULL;
}

/* the watchdog's clock: started (what names the wait) and stopped */
static void watch_clock(Comm *c, const char *what) {
    if (!atomic_load(&c->watching)) return;
    atomic_store(&c->wait_what, what);
    atomic_store(&c->wait_since, now_ms());
}
static void watch_clock_stop(Comm *c) { atomic_store(&c->wait_since, 0); }

/* The clock runs from here (NCCL: the host cannot tell the GPU's own work
 * from a wait for the other ranks, so a step's computing counts too), or,
 * with TR_TIMES_WAITS (the emulation, whose device is the host's thread),
 * only while a collective queued before waits for the other ranks. */
void comm_wait_begin(Comm *c, const char *what) {
    if (!c || !atomic_load(&c->watching)) return;
    atomic_store(&c->wait_what, what);
    atomic_store(&c->in_wait, 1);
    if (!TR_TIMES_WAITS) watch_clock(c, what);
}

void comm_wait_end(Comm *c) {
    if (!c) return;
    atomic_store(&c->in_wait, 0);
    watch_clock_stop(c);
}

/* start the watchdog (world > 1, timeout_s > 0) */
static void watch_start(Comm *c) {
    if (c->world == 1 || c->timeout_s <= 0) return;
    if (pthread_create(&c->watch, NULL, watchdog, c) == 0) atomic_store(&c->watching, 1);
}

/* ---- transport: the emulation (WB_COMM_EMU: comm_emu.h) ---- */
#if defined(COMM_EMU)

/* An emulated collective is queued on its stream (emu_device_queue) as
 * NCCL queues one on the GPU; the emulated device runs it, and waits for
 * the other ranks, when the host waits on the stream: under the watchdog
 * only where the backend waits between comm_wait_begin and comm_wait_end,
 * as on a GPU, its clock running while the collective runs (not while the
 * emulated device computes, which takes the host's time here). */
enum { EMU_SUM_F32, EMU_SUM_F64, EMU_REDUCE_F32, EMU_BCAST_F32, EMU_GATHER_I64 };
typedef struct EmuColl {
    Comm *c;
    int op, root;
    void *dev, *out;
    size_t n;
    size_t *start, *len; /* EMU_BCAST_F32: copies of the world ranges */
} EmuColl;

static void emu_coll_run(void *p) {
    EmuColl *x = p;
    EmuComm *e = &x->c->emu;
    int watched = atomic_load(&x->c->in_wait);
    if (watched) watch_clock(x->c, atomic_load(&x->c->wait_what));
    switch (x->op) {
    case EMU_SUM_F32:
        emu_sum_float(e, x->dev, x->n);
        break;
    case EMU_SUM_F64:
        emu_sum_double(e, x->dev, x->n);
        break;
    case EMU_REDUCE_F32:
        emu_reduce_float(e, x->dev, x->n, x->root);
        break;
    case EMU_BCAST_F32:
        emu_broadcast_ranges(e, x->dev, x->start, x->len);
        break;
    case EMU_GATHER_I64:
        emu_gather_i64(e, x->dev, x->out, x->n);
        break;
    }
    if (watched) watch_clock_stop(x->c);
    free(x->start), free(x->len), free(x);
}

static void emu_coll_queue(Comm *c, void *stream, EmuColl x) {
    EmuColl *p = xmalloc(sizeof *p);
    *p = x;
    p->c = c;
    emu_device_queue(stream, emu_coll_run, p);
}

static int tr_join(Comm *c, const struct Launcher *l, Err *err) {
    if (!c->id_file)
        return err_set(err, "%d processes: the emulated collectives need --nccl_id_file", c->world);
    watch_clock(c, "the other ranks to join");
    if (emu_open(&c->emu, c->rank, c->world, c->id_file, err)) return -1;
    watch_clock_stop(c);
    atomic_store(&c->connected, 1);
    snprintf(c->desc, sizeof c->desc, "emulated collectives (shared memory), %d processes%s%s",
             c->world, c->launcher ? ", placed by " : "", c->launcher ? c->launcher : "");
    return 0;
}

static int tr_connect(Comm *c, Err *err) {
    (void)c, (void)err;
    return 0;
}

static const char *tr_fault(Comm *c, char *buf, size_t n) {
    (void)c, (void)buf, (void)n;
    return NULL;
}

static void tr_allreduce_f32(Comm *c, float *dev, size_t n, void *stream) {
    emu_coll_queue(c, stream, (EmuColl){.op = EMU_SUM_F32, .dev = dev, .n = n});
}

static void tr_allreduce_f64(Comm *c, double *dev, size_t n, void *stream) {
    emu_coll_queue(c, stream, (EmuColl){.op = EMU_SUM_F64, .dev = dev, .n = n});
}

static void tr_reduce_f32(Comm *c, float *dev, size_t n, int root, void *stream) {
    emu_coll_queue(c, stream, (EmuColl){.op = EMU_REDUCE_F32, .dev = dev, .n = n, .root = root});
}

static void tr_broadcast_ranges_f32(Comm *c, float *dev, const size_t *start, const size_t *len,
                                    void *stream) {
    size_t bytes = (size_t)c->world * sizeof *start;
    EmuColl x = {.op = EMU_BCAST_F32, .dev = dev, .start = xmalloc(bytes), .len = xmalloc(bytes)};
    memcpy(x.start, start, bytes), memcpy(x.len, len, bytes);
    emu_coll_queue(c, stream, x);
}

static void tr_allgather_i64(Comm *c, const int64_t *dev_in, int64_t *dev_out, size_t n,
                             void *stream) {
    emu_coll_queue(c, stream,
                   (EmuColl){.op = EMU_GATHER_I64, .dev = (void *)dev_in, .out = dev_out, .n = n});
}

static void tr_close(Comm *c) { emu_close(&c->emu); }

#endif

/* ---- MPI (with NCCL, WB_HAVE_MPI) ---- */

/* rank 0's NCCL id to the others, when an MPI launcher or srun placed the
 * process and no --nccl_id_file is given (c->mpi) */
#if defined(COMM_NCCL) && defined(WB_HAVE_MPI)
enum { MPI_BUILT = 1 };

/* MPI_Init (unless done) and MPI_Bcast of c->id from rank 0; 0, or -1 with
 * err (MPI's place is not the launcher's) */
static int mpi_share_id(Comm *c, Err *err) {
    /* a CUDA-aware MPI opens a context on the current GPU: make it this
     * process's first (when there is one; backend.cu checks it after) */
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) == cudaSuccess && c->local_rank < ndev)
        cudaSetDevice(c->local_rank);
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS) return err_set(err, "MPI_Init failed");
    int r, w;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &w);
    if (w != c->world || r != c->rank)
        return err_set(err, "MPI says rank %d of %d, %s %d of %d", r, w, c->launcher, c->rank,
                       c->world);
    comm_wait_begin(c, "rank 0's NCCL id (MPI_Bcast)");
    MPI_Bcast(&c->id, sizeof c->id, MPI_BYTE, 0, MPI_COMM_WORLD);
    comm_wait_end(c);
    return 0;
}

/* MPI_Finalize where the id was to travel through MPI (c->mpi) */
static void mpi_close(Comm *c) {
    if (c->mpi) MPI_Finalize();
}
#elif defined(COMM_NCCL)
enum { MPI_BUILT = 0 };
/* never called: c->mpi stays 0 */
static int mpi_share_id(Comm *c, Err *err) { return err_set(err, "built without MPI"); }
static void mpi_close(Comm *c) { (void)c; }
#endif

/* ---- transport: NCCL (WB_HAVE_NCCL), its id through MPI or a file ---- */
#if defined(COMM_NCCL)

/* The id file: magic, world size, the launcher's job id (when there is
 * one), the NCCL id. A file left by an earlier run of another size or job
 * is not taken: the others wait for rank 0 to replace it. */
typedef struct IdRecord {
    char magic[8];
    int32_t world, pad;
    char job[112];
    ncclUniqueId id;
} IdRecord;

/* the launcher's job id, or "" (started by hand): Slurm's job id alone
 * inside a Slurm job (ranks may come from several srun calls, each a step
 * and a PMIx namespace of its own), else torchrun's rendezvous id, else
 * mpirun's PMIx namespace */
static void job_token(char *out, size_t n) {
    const char *v = getenv("SLURM_JOB_ID");
    if (v && *v) {
        snprintf(out, n, "slurm %s", v);
        return;
    }
    v = getenv("TORCHELASTIC_RUN_ID");
    if (!v || !*v) v = getenv("PMIX_NAMESPACE");
    snprintf(out, n, "%s", v ? v : "");
}

/* Rank 0, before it makes an id: may it write path? Only a process that
 * can train writes it (without a GPU the run ends here, and a file there
 * stays as it was); an earlier run's id file (its magic) is removed before
 * anyone takes it; any other file is not this program's to replace. 0, or
 * -1 with err. */
static int id_file_claim(const char *path, Err *err) {
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0)
        return err_set(err, "no CUDA device (%s); train_bert_cpu trains on the CPU",
                       e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    if (!output_is_ours(path, "WBNCCLID", 8, "an NCCL id file of train_bert", err)) return -1;
    unlink(path);
    return 0;
}

/* rank 0 writes the record to path (temp file + rename); the others wait
 * for one of this group, as long as the watchdog lets them */
static int id_by_file(Comm *c, const char *path, Err *err) {
    IdRecord rec, want;
    memset(&want, 0, sizeof want);
    memcpy(want.magic, "WBNCCLID", 8);
    want.world = c->world;
    job_token(want.job, sizeof want.job);
    if (c->rank == 0) {
        want.id = c->id;
        Writer w;
        if (writer_open(&w, path, 1, err)) return -1;
        if (fwrite(&want, sizeof want, 1, w.fp) != 1) {
            writer_abort(&w);
            return err_set(err, "%s: write error", path);
        }
        return writer_close(&w, err);
    }
    int stale = 0;
    comm_wait_begin(c, "rank 0's NCCL id in the file");
    for (;;) {
        FILE *f = fopen(path, "rb");
        if (f) {
            int ok = fread(&rec, sizeof rec, 1, f) == 1;
            fclose(f);
            if (ok && !memcmp(rec.magic, want.magic, 8) && rec.world == want.world &&
                !strncmp(rec.job, want.job, sizeof rec.job)) {
                c->id = rec.id;
                comm_wait_end(c);
                return 0;
            }
            if (ok && !stale++)
                info(2,
                     "%s: written by another run (%d processes, job '%.*s'; this one: %d, '%s'): "
                     "waiting for rank 0 "
                     "to replace it",
                     path, rec.world, (int)sizeof rec.job, rec.job, want.world, want.job);
        }
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
    }
}

static int tr_join(Comm *c, const struct Launcher *l, Err *err) {
    const char *id_file = c->id_file;
    c->mpi = MPI_BUILT && c->launcher && l->mpi && !id_file;
    if (!c->mpi && !id_file)
        return err_set(
            err,
            "%d processes and no MPI to share the NCCL id: give --nccl_id_file on a file system "
            "every process sees",
            c->world);
    if (c->rank == 0 && !c->mpi && id_file_claim(id_file, err)) return -1;
    if (c->rank == 0) {
        ncclResult_t r = ncclGetUniqueId(&c->id);
        if (r != ncclSuccess) return err_set(err, "ncclGetUniqueId: %s", ncclGetErrorString(r));
    }
    if (c->mpi && mpi_share_id(c, err)) return -1;
    if (!c->mpi && id_by_file(c, id_file, err)) return -1;
    int v = 0;
    ncclGetVersion(&v);
    snprintf(c->desc, sizeof c->desc, "NCCL %d.%d.%d, id via %s, %d processes%s%s", v / 10000,
             v / 100 % 100, v % 100, c->mpi ? "MPI" : "file", c->world,
             c->launcher ? ", placed by " : "", c->launcher ? c->launcher : "");
    info(3, "rank %d of %d (local rank %d): %s", c->rank, c->world, c->local_rank, c->desc);
    return 0;
}

static int tr_connect(Comm *c, Err *err) {
    comm_wait_begin(c, "the other ranks to join (ncclCommInitRank)");
    ncclResult_t r = ncclCommInitRank(&c->nccl, c->world, c->id, c->rank);
    comm_wait_end(c);
    if (r != ncclSuccess)
        return err_set(
            err, "ncclCommInitRank (rank %d of %d): %s%s", c->rank, c->world, ncclGetErrorString(r),
            c->mpi || c->rank == 0 ? "" : " (is the id file an earlier run's? rank 0 replaces it)");
    atomic_store(&c->connected, 1);
    /* every rank has joined, so every rank has read the id: a later run
     * with the same --nccl_id_file cannot read this one's */
    if (!c->mpi && c->rank == 0) unlink(c->id_file);
    return 0;
}

static const char *tr_fault(Comm *c, char *buf, size_t n) {
    ncclResult_t st = ncclSuccess;
    if (atomic_load(&c->connected) && ncclCommGetAsyncError(c->nccl, &st) == ncclSuccess &&
        st != ncclSuccess && st != ncclInProgress) {
        snprintf(buf, n, "NCCL: %s (another rank failed?)", ncclGetErrorString(st));
        return buf;
    }
    return NULL;
}

/* a failed NCCL call ends the process */
static void check(ncclResult_t r, const char *what, const Comm *c) {
    if (r != ncclSuccess)
        die("%s (rank %d of %d): %s", what, c->rank, c->world, ncclGetErrorString(r));
}

static void tr_allreduce_f32(Comm *c, float *dev, size_t n, void *stream) {
    check(ncclAllReduce(dev, dev, n, ncclFloat32, ncclSum, c->nccl, (cudaStream_t)stream),
          "ncclAllReduce", c);
}

static void tr_allreduce_f64(Comm *c, double *dev, size_t n, void *stream) {
    check(ncclAllReduce(dev, dev, n, ncclFloat64, ncclSum, c->nccl, (cudaStream_t)stream),
          "ncclAllReduce", c);
}

static void tr_reduce_f32(Comm *c, float *dev, size_t n, int root, void *stream) {
    check(ncclReduce(dev, dev, n, ncclFloat32, ncclSum, root, c->nccl, (cudaStream_t)stream),
          "ncclReduce", c);
}

static void tr_broadcast_ranges_f32(Comm *c, float *dev, const size_t *start, const size_t *len,
                                    void *stream) {
    check(ncclGroupStart(), "ncclGroupStart", c);
    for (int r = 0; r < c->world; r++)
        if (len[r])
            check(ncclBroadcast(dev + start[r], dev + start[r], len[r], ncclFloat32, r, c->nccl,
                                (cudaStream_t)stream),
                  "ncclBroadcast", c);
    check(ncclGroupEnd(), "ncclGroupEnd", c);
}

static void tr_allgather_i64(Comm *c, const int64_t *dev_in, int64_t *dev_out, size_t n,
                             void *stream) {
    check(ncclAllGather(dev_in, dev_out, n, ncclInt64, c->nccl, (cudaStream_t)stream),
          "ncclAllGather", c);
}

static void tr_close(Comm *c) {
    if (c->nccl) ncclCommDestroy(c->nccl);
    mpi_close(c);
}

#endif

/* ---- transport: none (built without NCCL: one process only) ---- */
#if defined(COMM_NONE)

static int tr_join(Comm *c, const struct Launcher *l, Err *err) {
    return err_set(
        err,
        "%d processes, but train_bert was built without NCCL (the build found no nccl.h/libnccl)",
        c->world);
}

static int tr_connect(Comm *c, Err *err) { return err_set(err, "built without NCCL"); }

static const char *tr_fault(Comm *c, char *buf, size_t n) { return NULL; }

/* never reached (world 1) */
static void tr_allreduce_f32(Comm *c, float *dev, size_t n, void *stream) {}
static void tr_allreduce_f64(Comm *c, double *dev, size_t n, void *stream) {}
static void tr_reduce_f32(Comm *c, float *dev, size_t n, int root, void *stream) {}
static void tr_broadcast_ranges_f32(Comm *c, float *dev, const size_t *start, const size_t *len,
                                    void *stream) {}
static void tr_allgather_i64(Comm *c, const int64_t *dev_in, int64_t *dev_out, size_t n,
                             void *stream) {}
static void tr_close(Comm *c) {}

#endif

/* ---- the public functions ---- */

int comm_open(Comm **out, int rank, int world, int local_rank, const char *id_file, int timeout_s,
              Err *err) {
    Comm *c = xcalloc(1, sizeof *c);
    *out = c;
    c->id_file = id_file;
    c->timeout_s = timeout_s;
    const struct Launcher *l = NULL;
    for (size_t i = 0; i < sizeof LAUNCHERS / sizeof *LAUNCHERS && !l; i++)
        if (env_int(LAUNCHERS[i].rank) >= 0 && env_int(LAUNCHERS[i].size) >= 1) l = &LAUNCHERS[i];
    c->rank = rank >= 0 ? rank : l ? env_int(l->rank) : -1;
    c->world = world >= 1 ? world : l ? env_int(l->size) : -1;
    c->local_rank = local_rank >= 0 ? local_rank : l ? env_int(l->local) : -1;
    c->launcher = l && (rank < 0 || world < 1) ? l->name : NULL;
    if (c->world < 1 || c->rank < 0) c->rank = 0, c->world = 1;
    if (c->local_rank < 0) c->local_rank = c->world == 1 ? 0 : c->rank; /* one node */
    if (c->rank >= c->world)
        return err_set(err, "rank %d of %d: %s", c->rank, c->world,
                       c->launcher ? "the launcher's variables disagree"
                                   : "--rank must be below --world_size");
    if (c->world == 1) {
        snprintf(c->desc, sizeof c->desc, "single process");
        return 0;
    }
    watch_start(c);
    return tr_join(c, l, err);
}

int comm_connect(Comm *c, Err *err) {
    if (c->world == 1) return 0;
    return tr_connect(c, err);
}

int comm_rank(const Comm *c) { return c->rank; }
int comm_world(const Comm *c) { return c->world; }
int comm_local_rank(const Comm *c) { return c->local_rank; }
const char *comm_describe(const Comm *c) { return c->desc; }

void comm_allreduce_f32(Comm *c, float *dev, size_t n, void *stream) {
    if (c->world == 1 || n == 0) return;
    tr_allreduce_f32(c, dev, n, stream);
}

void comm_allreduce_f64(Comm *c, double *dev, size_t n, void *stream) {
    if (c->world == 1 || n == 0) return;
    tr_allreduce_f64(c, dev, n, stream);
}

void comm_reduce_f32(Comm *c, float *dev, size_t n, int root, void *stream) {
    if (c->world == 1 || n == 0) return;
    tr_reduce_f32(c, dev, n, root, stream);
}

void comm_broadcast_ranges_f32(Comm *c, float *dev, const size_t *start, const size_t *len,
                               void *stream) {
    if (c->world == 1) return;
    tr_broadcast_ranges_f32(c, dev, start, len, stream);
}

void comm_allgather_i64(Comm *c, const int64_t *dev_in, int64_t *dev_out, size_t n, void *stream) {
    if (c->world == 1) return; /* the caller copies its own */
    tr_allgather_i64(c, dev_in, dev_out, n, stream);
}

void comm_close(Comm *c) {
    if (!c) return;
    if (atomic_load(&c->watching)) {
        atomic_store(&c->stop, 1);
        pthread_join(c->watch, NULL);
    }
    tr_close(c);
    free(c);
}
