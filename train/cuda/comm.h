/* comm.h - the data-parallel group of train_bert: which process this is
 * (rank of world, and its GPU), and collectives over GPU memory.
 *
 * The place comes from the options (--rank/--world_size/--local_rank) or
 * the launcher, all three values from one launcher: torchrun (RANK,
 * WORLD_SIZE, LOCAL_RANK), mpirun (OMPI_COMM_WORLD_*, or PMI_RANK/PMI_SIZE/
 * MPI_LOCALRANKID), srun (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID), in
 * that order, so that torchrun or mpirun inside an sbatch script is
 * believed over the job's own variables; alone it is rank 0 of 1. With
 * more than one process, NCCL carries the collectives; its id travels
 * through MPI when the build has MPI and an MPI launcher or srun started
 * the process, else through a file (--nccl_id_file on a file system all
 * processes see: rank 0 writes it atomically, the others wait for it, and
 * rank 0 deletes it once every rank has joined; a file of another run, by
 * its process count or launcher's job id, is not taken; a file there that
 * is no id file is never replaced: rank 0 stops with an error). Built
 * without NCCL, only world 1 works (and says so).
 * The one file that includes nccl.h and mpi.h.
 */
#ifndef WB_COMM_H
#define WB_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

typedef struct Comm Comm;

/* Find this process's place (arguments -1: from the environment) and, for
 * world > 1, agree on the NCCL id (MPI, after selecting this process's
 * GPU where there is one, or the file). Call comm_connect after selecting
 * the GPU. Returns 0 or -1 with err.
 * timeout_s > 0 (and world > 1) starts the watchdog: a wait for the other
 * ranks (comm_wait_begin .. comm_wait_end; comm.c's own waits are marked)
 * that lasts longer, or an error NCCL reports from its threads, ends the
 * process with a message and exit status 1 (removing open Writers' temp
 * files) instead of hanging it. */
int comm_open(Comm **c, int rank, int world, int local_rank, const char *id_file, int timeout_s,
              Err *err);

/* Around a host wait on work that depends on the other ranks (a stream
 * synchronisation after queued collectives); what names it in the message.
 * No-ops without the watchdog. */
void comm_wait_begin(Comm *c, const char *what);
void comm_wait_end(Comm *c);

/* Create the NCCL communicator on the current GPU (no-op for world 1).
 * Returns 0 or -1 with err. */
int comm_connect(Comm *c, Err *err);

int comm_rank(const Comm *c);
int comm_world(const Comm *c);
int comm_local_rank(const Comm *c);

/* "NCCL 2.28.3 over MPI", "single process", ... */
const char *comm_describe(const Comm *c);

/* In-place sums over all ranks of GPU buffers, queued on stream (a
 * cudaStream_t). A failure is fatal (message, exit 1): a rank that stops
 * would hang the others. */
void comm_allreduce_f32(Comm *c, float *dev, size_t n, void *stream);
void comm_allreduce_f64(Comm *c, double *dev, size_t n, void *stream);

/* Sum over all ranks of dev[0..n) into rank root's dev (in place); the
 * other ranks' dev is left as it was. On stream. */
void comm_reduce_f32(Comm *c, float *dev, size_t n, int root, void *stream);

/* For every rank r: its dev[start[r] .. start[r] + len[r]) to all ranks
 * (world broadcasts in one group). On stream. */
void comm_broadcast_ranges_f32(Comm *c, float *dev, const size_t *start, const size_t *len,
                               void *stream);

/* dev_out[r * n + i] = rank r's dev_in[i] (GPU buffers, on stream). */
void comm_allgather_i64(Comm *c, const int64_t *dev_in, int64_t *dev_out, size_t n, void *stream);

void comm_close(Comm *c);

#endif
