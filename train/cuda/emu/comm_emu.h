/* comm_emu.h - the collectives of train/cuda/comm.c between processes on
 * one machine, without NCCL: for the CPU emulation of the CUDA backend
 * (train/cuda/emu/cuda_emu.h, where "GPU memory" is host memory), so that make
 * test runs train_bert_emu as several data-parallel ranks and checks the
 * gradient averaging, the per-rank data, the statistics and the checkpoint
 * positions that NCCL carries on a real machine. comm.c includes it in
 * place of nccl.h when built with -DWB_COMM_EMU; the real build never does.
 *
 * Rendezvous: --nccl_id_file names a file that rank 0 creates (temp file,
 * sized, rename) and every rank maps shared; after the first barrier rank
 * 0 removes the name. The mapping holds a barrier (arrival count and a
 * generation number, C11-style atomics) and one slot per rank. A sum
 * copies each rank's chunk into its slot, waits at the barrier, adds the
 * slots in rank order (so every rank gets the same bits, as NCCL's
 * all-reduce gives), and waits again before the slots are reused; a
 * reduce does the same on its root only (the others' buffers stay as they
 * were, so a rank that read a sum it does not own would be caught). A rank
 * that waits more than EMU_WAIT_S seconds for the others dies with a
 * message (one that died would otherwise hang the rest; comm.c's watchdog,
 * --comm_timeout, is meant to end such a wait long before).
 *
 * comm.c does not run a collective when it is called: it queues it on the
 * emulated device's stream (emu_device_queue, defined by cuda_emu.h in the
 * backend), which runs it when the host waits on that stream, where a
 * GPU's host would block on NCCL's queued kernels.
 */
#ifndef WB_COMM_EMU_H
#define WB_COMM_EMU_H

#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/io.h"

/* cuda_emu.h (the emulated backend): queue fn(arg) on the emulated stream
 * (a cudaStream_t); it runs in order when the host waits on the device */
void emu_device_queue(void *stream, void (*fn)(void *), void *arg);

#define EMU_MAGIC 0x57424d43u /* "WBMC" */
#define EMU_SLOT (1u << 20)   /* bytes per rank per round */
#define EMU_WAIT_S 120

typedef struct EmuShm {
    uint32_t magic;
    int32_t world;
    int32_t arrived;    /* at the barrier now */
    int32_t generation; /* barriers passed */
    char pad[48];
    /* then world slots of EMU_SLOT bytes */
} EmuShm;

typedef struct EmuComm {
    EmuShm *shm;
    size_t bytes;
    int rank, world;
} EmuComm;

static double emu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static char *emu_slot(EmuComm *e, int r) { return (char *)(e->shm + 1) + (size_t)r * EMU_SLOT; }

/* every rank waits here until all have arrived */
static void emu_barrier(EmuComm *e) {
    EmuShm *s = e->shm;
    int32_t gen = __atomic_load_n(&s->generation, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&s->arrived, 1, __ATOMIC_ACQ_REL) == e->world) {
        __atomic_store_n(&s->arrived, 0, __ATOMIC_RELAXED);
        __atomic_add_fetch(&s->generation, 1, __ATOMIC_RELEASE);
        return;
    }
    double t0 = emu_now();
    for (unsigned spins = 0; __atomic_load_n(&s->generation, __ATOMIC_ACQUIRE) == gen; spins++) {
        if (spins < 1000) {
            sched_yield();
            continue;
        }
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
        if ((spins & 1023) == 0 && emu_now() - t0 > EMU_WAIT_S)
            die("emulated collective: rank %d of %d waited %d s for the others", e->rank, e->world,
                EMU_WAIT_S);
    }
}

/* map the file of rank 0 (creating it on rank 0); -1 with err */
static int emu_open(EmuComm *e, int rank, int world, const char *path, Err *err) {
    e->rank = rank, e->world = world;
    e->bytes = sizeof(EmuShm) + (size_t)world * EMU_SLOT;
    int fd = -1;
    if (rank == 0) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
        uint32_t magic = EMU_MAGIC; /* only an earlier run's rendezvous file is replaced */
        if (!output_is_ours(path, &magic, sizeof magic, "a rendezvous file of train_bert", err))
            return -1;
        unlink(path);
        fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || ftruncate(fd, (off_t)e->bytes))
            return err_set(err, "%s: %s", tmp, strerror(errno));
        e->shm = (EmuShm *)mmap(NULL, e->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (e->shm == MAP_FAILED) return err_set(err, "%s: mmap: %s", tmp, strerror(errno));
        e->shm->world = world;
        __atomic_store_n(&e->shm->magic, EMU_MAGIC, __ATOMIC_RELEASE);
        if (rename(tmp, path)) return err_set(err, "%s: %s", path, strerror(errno));
    } else {
        double t0 = emu_now();
        struct stat st;
        while ((fd = open(path, O_RDWR)) < 0 || fstat(fd, &st) || (size_t)st.st_size < e->bytes) {
            if (fd >= 0) close(fd);
            if (emu_now() - t0 > EMU_WAIT_S)
                return err_set(err, "%s: rank 0 did not create it", path);
            struct timespec ts = {0, 10000000};
            nanosleep(&ts, NULL);
        }
        e->shm = (EmuShm *)mmap(NULL, e->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (e->shm == MAP_FAILED) return err_set(err, "%s: mmap: %s", path, strerror(errno));
        if (__atomic_load_n(&e->shm->magic, __ATOMIC_ACQUIRE) != EMU_MAGIC ||
            e->shm->world != world)
            return err_set(err, "%s: not the rendezvous of a %d-rank group", path, world);
    }
    close(fd);
    emu_barrier(e);
    if (rank == 0) unlink(path);
    return 0;
}

#define EMU_SUM(T)                                                                                 \
    static void emu_sum_##T(EmuComm *e, T *x, size_t n) {                                          \
        size_t per = EMU_SLOT / sizeof(T);                                                         \
        for (size_t a = 0; a < n; a += per) {                                                      \
            size_t k = n - a < per ? n - a : per;                                                  \
            memcpy(emu_slot(e, e->rank), x + a, k * sizeof(T));                                    \
            emu_barrier(e);                                                                        \
            for (size_t i = 0; i < k; i++) {                                                       \
                T s = ((const T *)emu_slot(e, 0))[i];                                              \
                for (int r = 1; r < e->world; r++)                                                 \
                    s += ((const T *)emu_slot(e, r))[i];                                           \
                x[a + i] = s;                                                                      \
            }                                                                                      \
            emu_barrier(e);                                                                        \
        }                                                                                          \
    }
EMU_SUM(float)
EMU_SUM(double)

/* rank root's x = the sum over ranks (in rank order); the others' x stay */
static void emu_reduce_float(EmuComm *e, float *x, size_t n, int root) {
    size_t per = EMU_SLOT / sizeof *x;
    for (size_t a = 0; a < n; a += per) {
        size_t k = n - a < per ? n - a : per;
        memcpy(emu_slot(e, e->rank), x + a, k * sizeof *x);
        emu_barrier(e);
        if (e->rank == root)
            for (size_t i = 0; i < k; i++) {
                float s = ((const float *)emu_slot(e, 0))[i];
                for (int r = 1; r < e->world; r++)
                    s += ((const float *)emu_slot(e, r))[i];
                x[a + i] = s;
            }
        emu_barrier(e);
    }
}

/* every rank r's x[start[r] .. + len[r]) to all ranks */
static void emu_broadcast_ranges(EmuComm *e, float *x, const size_t *start, const size_t *len) {
    size_t per = EMU_SLOT / sizeof *x;
    for (int r = 0; r < e->world; r++)
        for (size_t a = 0; a < len[r]; a += per) {
            size_t k = len[r] - a < per ? len[r] - a : per;
            float *p = x + start[r] + a;
            if (e->rank == r) memcpy(emu_slot(e, r), p, k * sizeof *x);
            emu_barrier(e);
            if (e->rank != r) memcpy(p, emu_slot(e, r), k * sizeof *x);
            emu_barrier(e);
        }
}

/* out[r * n + i] = rank r's in[i] */
static void emu_gather_i64(EmuComm *e, const int64_t *in, int64_t *out, size_t n) {
    if (n * sizeof *in > EMU_SLOT)
        die("emulated all-gather: %zu values is more than a slot holds", n);
    memcpy(emu_slot(e, e->rank), in, n * sizeof *in);
    emu_barrier(e);
    for (int r = 0; r < e->world; r++)
        memcpy(out + (size_t)r * n, emu_slot(e, r), n * sizeof *in);
    emu_barrier(e);
}

static void emu_close(EmuComm *e) {
    if (e->shm && e->shm != MAP_FAILED) munmap(e->shm, e->bytes);
    e->shm = NULL;
}

#endif
