/* trainer.h - the pretraining loop that train_bert_cpu and train_bert
 * share: NVIDIA run_pretraining.py's options, the data order, the
 * PolyWarmUp schedule, gradient accumulation, the JSON log, checkpoints,
 * phases and the Hugging Face export. The arithmetic (forward, backward,
 * optimizer) comes from a backend: the C model of bert.c / optim.c, or the
 * CUDA one. The host model and optimizer (TrainRun.m, .opt) hold what
 * checkpoints save; a device backend copies to and from them.
 *
 *   TrainOpts o; train_parse_args(&o, argc, argv, 0);
 *   return train_main(&o, cpu_backend_open);
 */
#ifndef WB_TRAINER_H
#define WB_TRAINER_H

#include <stdint.h>

#include "train/bert.h"
#include "train/optim.h"

typedef struct TrainOpts {
    const char *input_dir, *config, *output_dir, *vocab, *init_ckpt, *export_dir, *eval_file;
    int batch, accum, max_steps, max_seq, max_pred, ckpt_every, log_freq, resume, phase2, dynamic,
        stop_at;
    int bin_size;         /* --bin_size: length bins of this many tokens (0: off) */
    int skip_ckpt;        /* --skip_checkpoint: no checkpoints, no export (benchmarks) */
    int fresh_if_damaged; /* --start_fresh_if_damaged: resuming, only damaged checkpoints: start at
                             step 0 */
    int force;            /* -f: a run from step 0 removes the checkpoints in output_dir first */
    int64_t phase1_end;
    double lr, warmup, weight_decay;
    uint64_t seed;
    OptKind opt;
    int threads;                 /* CPU threads (0: all cores) */
    int gpu;                     /* the options below are accepted (train_bert) */
    int bf16;                    /* --precision bf16 (default on GPUs) or fp32 */
    const char *id_file;         /* --nccl_id_file: the bootstrap without MPI */
    int rank, world, local_rank; /* -1: from the launcher's environment */
    int zero;                    /* --zero_stage 1: optimizer moments sharded over the ranks */
    int profile;                 /* --profile: time each kernel and matmul shape on the GPU */
    int attn_matmul;  /* --attention matmul (default): scores through cuBLAS, not the fused kernels
                       */
    int comm_timeout; /* --comm_timeout: seconds a rank waits for the others before it gives up (0:
                         forever) */
    int argc;         /* the command line, for the export's model card */
    char **argv;
    int lower, strip; /* --do_lower_case 0|1, --strip_accents 0|1 (-1: not given): how the
                         data's text was tokenized, for the export's tokenizer_config.json */
} TrainOpts;

/* The statistics of one optimizer step, over all ranks. */
typedef struct TrainStats {
    double loss, mlm, nsp; /* means over the micro-batches (and ranks) */
    int64_t masked, mlm_correct, nsp_correct, rows;
    double grad_norm; /* global gradient norm before clipping */
} TrainStats;

typedef struct TrainBackend {
    const char *name; /* for messages: "CPU, 2 threads", "cuda bf16, 8 GPUs" */
    int rank, world;  /* this process among the data-parallel ones */
    void *ctx;
    /* start an optimizer step: gradients and statistics to zero */
    void (*zero_grad)(void *ctx);
    /* forward and backward of a checked micro-batch: gradients += scale *
     * d(loss); dropout (when on) with pass key `key`; adds to the step's
     * statistics */
    void (*micro_step)(void *ctx, const BertBatch *b, float scale, int dropout, uint64_t key);
    /* sum the gradients over the ranks, then the optimizer step at lr */
    void (*opt_step)(void *ctx, float lr);
    /* the statistics of the step just taken (same on every rank) */
    void (*stats)(void *ctx, TrainStats *s);
    /* forward only, no dropout */
    void (*eval)(void *ctx, const BertBatch *b, BertLoss *l);
    /* copy weights and optimizer state device -> host model (before a
     * checkpoint or the export; every rank calls it, rank 0's host model
     * gets the state) and host -> device (after a load) */
    void (*to_host)(void *ctx);
    void (*from_host)(void *ctx);
    /* all[r * n + i] = rank r's mine[i] (every rank gets all) */
    void (*allgather_i64)(void *ctx, const int64_t *mine, int n, int64_t *all);
    void (*close)(void *ctx);
    /* optional (NULL: nothing to gain): take b's host-side share of the
     * next micro_step now (packing, the queued copy to the GPU), while the
     * device still works on the step before; the next micro_step is then
     * called with the same b */
    void (*stage)(void *ctx, const BertBatch *b);
} TrainBackend;

/* Make a backend over host model m and optimizer opt (created and
 * initialised by train_main). Returns 0 or -1 with err. */
typedef int (*TrainBackendOpen)(TrainBackend *be, Bert *m, Optim *opt, const TrainOpts *o,
                                Err *err);

/* Parse the command line into o (defaults: run_pretraining.py's); prints
 * usage and exits on --help, exits 2 on a bad option. gpu: the GPU options
 * are accepted and documented. */
void train_parse_args(TrainOpts *o, int argc, char **argv, int gpu);

/* Run the training (or --eval_file) that o describes. Returns the exit
 * status (errors are reported and exit from inside). */
int train_main(TrainOpts *o, TrainBackendOpen open);

/* The C backend (bert.c, optim.c; OpenMP). */
int cpu_backend_open(TrainBackend *be, Bert *m, Optim *opt, const TrainOpts *o, Err *err);

#endif
