/* trainer.c - the pretraining loop of train_bert_cpu and train_bert (see
 * trainer.h): NVIDIA run_pretraining.py's options and loop over a backend. */
#include "train/trainer.h"

#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "train/ckpt.h"
#include "common/cli.h"
#include "train/data.h"
#include "train/dropout.h"
#include "common/io.h"
#include "common/json.h"
#include "common/tokjson.h"
#include "common/utf8.h"

/* --help's lines for the options only train_bert (GPUs) has */
static void usage_gpu_options(void) {
    printf(
        "  --precision bf16|fp32           bf16: bfloat16 matmuls and activations, fp32\n"
        "                                  master weights and optimizer (default); fp32:\n"
        "                                  float32 throughout (matches train_bert_cpu)\n"
        "  --nccl_id_file FILE             without MPI: rank 0 writes the NCCL id to FILE\n"
        "                                  (on a shared file system), the others read it;\n"
        "                                  rank 0 deletes it once all have joined; an\n"
        "                                  existing FILE that is no id file is never\n"
        "                                  replaced (exit 1)\n"
        "  --rank N, --world_size N, --local_rank N\n"
        "                                  this process's place (default: from torchrun's,\n"
        "                                  mpirun's or srun's environment, the first found;\n"
        "                                  0 of 1); local rank r uses GPU r of the node\n"
        "  --comm_timeout S                a rank that waits S seconds for the others (one\n"
        "                                  failed or stopped) ends with a message, exit 1\n"
        "                                  (default 600; 0: wait forever)\n"
        "  --zero_stage 0|1                1: each rank keeps the optimizer moments of\n"
        "                                  its 1/world share of the weights and updates\n"
        "                                  those (ZeRO stage 1): gradients are reduced to\n"
        "                                  their owner, updated weights broadcast (0)\n"
        "  --attention matmul|fused        matmul (default): scores, probabilities and\n"
        "                                  their gradients through cuBLAS (the faster);\n"
        "                                  fused: attention in tensor-core kernels that\n"
        "                                  keep no sequence x sequence matrix, for less\n"
        "                                  memory (bf16, head size 16, 32 or 64, sequence\n"
        "                                  length a multiple of 16; else matmul)\n"
        "  --profile                       time every kernel and matmul on the GPU (CUDA\n"
        "                                  events; slows the run) and print where each\n"
        "                                  step's time goes, after the first step, at the end\n");
}

static void usage(int gpu) {
    const char *prog = gpu ? "train_bert" : "train_bert_cpu";
    printf("Usage: %s --input_dir DIR --config_file FILE --output_dir DIR [OPTIONS]\n"
           "Pretrain BERT (masked LM + next sentence) on the masked-LM HDF5 files of DIR\n"
           "(hdf5gen's or create_pretraining_data.py's), as NVIDIA's run_pretraining.py\n"
           "does, %s. One JSON line per optimizer step on stdout and in\n"
           "OUTPUT_DIR/log.jsonl; checkpoints and the Hugging Face export there too.\n%s\n"
           "Options (run_pretraining.py's names; dashes work too):\n",
           prog, gpu ? "on NVIDIA GPUs" : "on the CPU",
           gpu ? "One process per GPU: mpirun -np 8, srun, or torchrun --nproc_per_node 8\n"
                 "(data parallel; the gradients are summed with NCCL).\n"
               : "");
    printf("  --input_dir DIR                 the *training* files of DIR (required)\n"
           "  --config_file FILE              bert_config.json (required, but for a Hugging\n"
           "                                  Face --init_checkpoint DIR: DIR/config.json);\n"
           "                                  vocab_size is rounded up to a multiple of 8 as\n"
           "                                  NVIDIA does\n"
           "  --output_dir DIR                checkpoints ckpt_<step>.wbckpt (last 3 kept),\n"
           "                                  log.jsonl (the JSON log, appended, after a\n"
           "                                  {\"run\": ...} line of the command and the\n"
           "                                  resolved config), hf/ at the end (required)\n"
           "  --vocab_file FILE               vocab.txt or a WordPiece tokenizer.json with\n"
           "                                  [PAD], [CLS], [SEP] and [MASK] (dynamic masking\n"
           "                                  takes their ids; without it 101-103); its size\n"
           "                                  (rounded up to a multiple of 8) is the model's\n"
           "                                  vocab_size, said when the config's differs;\n"
           "                                  copied into the export (default:\n"
           "                                  --init_checkpoint DIR's vocab.txt or\n"
           "                                  tokenizer.json)\n"
           "  --train_batch_size N            sequences per optimizer step%s (32)\n"
           "  --gradient_accumulation_steps N micro-batches per step (1): the micro-batch\n"
           "                                  is train_batch_size / N\n"
           "  --learning_rate F               base learning rate (5e-5; NVIDIA's LAMB runs\n"
           "                                  use 6e-3 and 4e-3)\n"
           "  --warmup_proportion F           share of max_steps for warm-up (0.01)\n"
           "  --max_steps N                   optimizer steps of this phase (1000)\n"
           "  --max_seq_length N              files must have this length (0: any)\n"
           "  --max_predictions_per_seq N     masked slots per sequence (80)\n"
           "  --optimizer lamb|adamw          lamb (default: apex FusedLAMB's rule) or adamw\n"
           "  --weight_decay F                0.01 (not on biases and LayerNorm)\n"
           "  --resume_from_checkpoint        continue from the newest complete checkpoint in\n"
           "                                  output_dir (weights, optimizer, step, data); a\n"
           "                                  damaged newer one is named and skipped; when\n"
           "                                  all are damaged: exit 1; other batch options\n"
           "                                  (batch size, accumulation, seed...) than the\n"
           "                                  checkpoint's: exit 1; a checkpoint at or past\n"
           "                                  --max_steps: nothing is trained (a missing\n"
           "                                  export is written from it)\n"
           "  --start_fresh_if_damaged        with --resume_from_checkpoint: when all the\n"
           "                                  checkpoints are damaged, start from step 0\n"
           "  -f, --force                     a run from step 0 (no --resume_from_checkpoint,\n"
           "                                  or --init_checkpoint) into an output_dir holding\n"
           "                                  checkpoints: remove them first (without -f it is\n"
           "                                  refused: the new run's would mix with them;\n"
           "                                  from phase 1, its log.jsonl goes too)\n"
           "  --phase2                        with --resume_from_checkpoint, as NVIDIA's\n"
           "                                  phase 2: a checkpoint of step phase1_end_step\n"
           "                                  gives the weights and LAMB moments, the step\n"
           "                                  count restarts at 0 (new schedule, new data);\n"
           "                                  later ones resume phase 2; checkpoints are\n"
           "                                  named ckpt_<phase1_end_step + step>\n"
           "  --phase1_end_step N             phase 1's last step (7038)\n"
           "  --init_checkpoint FILE          with --resume_from_checkpoint: weights and\n"
           "                                  moments from FILE, step 0, new data (NVIDIA's\n"
           "                                  rule); alone: the weights only. FILE may be a\n"
           "                                  Hugging Face model directory or .safetensors\n"
           "                                  file (BertForPreTraining, BertForMaskedLM or\n"
           "                                  BertModel; missing heads start fresh; an untied\n"
           "                                  MLM decoder is kept)\n"
           "  --num_steps_per_checkpoint N    100\n"
           "  --skip_checkpoint               no checkpoints and no export (benchmarks)\n"
           "  --stop_at_step N                checkpoint and exit after step N (a batch job's\n"
           "                                  time slice; the schedule still runs to max_steps;\n"
           "                                  --resume_from_checkpoint continues exactly)\n"
           "  --log_freq N                    a JSON line every N steps (1)\n"
           "  --seed N                        initial weights, file and row order, dropout,\n"
           "                                  dynamic masking (42)\n"
           "  --no_dynamic_mask               refuse files without masks instead of masking\n"
           "                                  them on the fly\n"
           "  --bin_size N                    length bins of N tokens (LDDL's binning): each\n"
           "                                  batch holds rows of one bin and is cut to its\n"
           "                                  bound, so padding is not computed; changes the\n"
           "                                  batch order, not NVIDIA's reader (0: off)\n"
           "  --export_hf DIR                 where the Hugging Face export goes (output_dir/hf)\n"
           "  --do_lower_case 0|1             how the HDF5 files' text was tokenized (hdf5gen's\n"
           "  --strip_accents 0|1             options), for the export's tokenizer files\n"
           "                                  (defaults: a tokenizer.json --vocab_file's, else\n"
           "                                  --init_checkpoint DIR's tokenizer's, else 1 and\n"
           "                                  as --do_lower_case)\n"
           "  --eval_file FILE                no training: the losses of the model (its\n"
           "                                  --init_checkpoint or newest checkpoint) on the\n"
           "                                  first train_batch_size rows of FILE, in file\n"
           "                                  order, as one batch; one JSON line\n",
           gpu ? " per GPU" : "");
    if (gpu)
        usage_gpu_options();
    else
        printf(
            "  -j, --threads N                 threads (default: the usable CPUs; results do not\n"
            "                                  depend on it)\n");
    printf("      --max-line-bytes N          longest line of the vocabulary or config (64M)\n"
           "  -q, --quiet / -v, --verbose     fewer / more messages\n"
           "  -h, --help, -V, --version\n\n"
           "One run at a time writes into an output_dir: a second one is refused, naming\n"
           "the first one's process.\n"
           "Exit status: 0 ok; 1 a data, checkpoint, device or write error (standard\n"
           "output included), output_dir in use or holding another run's checkpoints, or\n"
           "a loss, gradient or weight that is no longer finite (training diverged); 2 a\n"
           "bad option, a bad or missing config, or a vocabulary that does not fit it.\n");
    exit(0);
}

/* A finite number of an option (cli_parse_double refuses nan and inf),
 * above lo (lo_open) or at least lo, and at most hi. Exits 2 naming the
 * option and the range otherwise. */
static double parse_real(const char *s, const char *what, double lo, int lo_open, double hi) {
    double v = cli_parse_double(s, what);
    if (v < lo || (lo_open && v == lo) || v > hi)
        cli_bad_usage("%s %s: must be a number %s %g and <= %g", what, s, lo_open ? ">" : ">=", lo,
                      hi);
    return v;
}

/* ---- the options: one table, walked by the parse loop ---- */

/* What an option's argument is, and so how it is parsed and stored. */
typedef enum {
    K_STR,   /* const char *: the argument itself */
    K_FLAG,  /* int: value[0], no argument */
    K_INT,   /* int: cli_parse_int in [lo, hi] */
    K_INT64, /* int64_t: cli_parse_int in [lo, hi] */
    K_REAL,  /* double: parse_real, (lo, hi] with lo_open, else [lo, hi] */
    K_SEED,  /* uint64_t: cli_parse_u64 */
    K_ENUM,  /* int: value[k] for the argument word[k] (k = 0, 1) */
} OptArgKind;

/* One option: its spellings, its kind, its field of TrainOpts and its limits. */
typedef struct OptSpec {
    const char *name; /* run_pretraining.py's spelling; messages name the option --name */
    const char *dash; /* the same with dashes, or NULL when it has no underscore */
    OptArgKind kind;
    size_t off;          /* where the value goes: offsetof(TrainOpts, field) */
    double lo, hi;       /* K_INT, K_INT64, K_REAL: the range */
    int lo_open;         /* K_REAL: lo itself is refused */
    int gpu;             /* only train_bert (GPUs) has it */
    const char *word[2]; /* K_ENUM: the two words */
    int value[2];        /* K_ENUM: their values; K_FLAG: value[0] is stored */
} OptSpec;

#define OPT(name_, dash_, kind_, field)                                                            \
    .name = name_, .dash = dash_, .kind = kind_, .off = offsetof(TrainOpts, field)
/* K_ENUM stores through an int: --optimizer's OptKind must be one */
_Static_assert(sizeof(OptKind) == sizeof(int), "OptKind is stored as an int");

/* In --help's order; getopt_long sees each name, then its dash spelling. */
static const OptSpec opt_table[] = {
    {OPT("input_dir", "input-dir", K_STR, input_dir)},
    {OPT("config_file", "config-file", K_STR, config)},
    {OPT("output_dir", "output-dir", K_STR, output_dir)},
    {OPT("vocab_file", "vocab-file", K_STR, vocab)},
    {OPT("train_batch_size", "train-batch-size", K_INT, batch), .lo = 1, .hi = 1 << 24},
    {OPT("gradient_accumulation_steps", "gradient-accumulation-steps", K_INT, accum), .lo = 1,
     .hi = 1 << 24},
    {OPT("learning_rate", "learning-rate", K_REAL, lr), .lo = 0, .hi = FLT_MAX, .lo_open = 1},
    {OPT("warmup_proportion", "warmup-proportion", K_REAL, warmup), .lo = 0, .hi = 1},
    {OPT("max_steps", "max-steps", K_INT, max_steps), .lo = 1, .hi = 1 << 30},
    {OPT("max_seq_length", "max-seq-length", K_INT, max_seq), .lo = 0, .hi = 1 << 20},
    {OPT("max_predictions_per_seq", "max-predictions-per-seq", K_INT, max_pred), .lo = 1,
     .hi = 1 << 16},
    {OPT("optimizer", NULL, K_ENUM, opt), .word = {"lamb", "adamw"},
     .value = {OPT_LAMB, OPT_ADAMW}},
    {OPT("weight_decay", "weight-decay", K_REAL, weight_decay), .lo = 0, .hi = FLT_MAX},
    {OPT("init_checkpoint", "init-checkpoint", K_STR, init_ckpt)},
    {OPT("resume_from_checkpoint", "resume-from-checkpoint", K_FLAG, resume), .value = {1}},
    {OPT("phase2", NULL, K_FLAG, phase2), .value = {1}},
    {OPT("phase1_end_step", "phase1-end-step", K_INT64, phase1_end), .lo = 0, .hi = 1 << 30},
    {OPT("num_steps_per_checkpoint", "num-steps-per-checkpoint", K_INT, ckpt_every), .lo = 1,
     .hi = 1 << 30},
    {OPT("skip_checkpoint", "skip-checkpoint", K_FLAG, skip_ckpt), .value = {1}},
    {OPT("log_freq", "log-freq", K_INT, log_freq), .lo = 1, .hi = 1 << 30},
    {OPT("seed", NULL, K_SEED, seed)},
    {OPT("no_dynamic_mask", "no-dynamic-mask", K_FLAG, dynamic), .value = {0}},
    {OPT("bin_size", "bin-size", K_INT, bin_size), .lo = 0, .hi = 1 << 20},
    {OPT("export_hf", "export-hf", K_STR, export_dir)},
    {OPT("do_lower_case", "do-lower-case", K_INT, lower), .lo = 0, .hi = 1},
    {OPT("strip_accents", "strip-accents", K_INT, strip), .lo = 0, .hi = 1},
    {OPT("stop_at_step", "stop-at-step", K_INT, stop_at), .lo = 1, .hi = 1 << 30},
    {OPT("eval_file", "eval-file", K_STR, eval_file)},
    {OPT("precision", NULL, K_ENUM, bf16), .gpu = 1, .word = {"bf16", "fp32"}, .value = {1, 0}},
    {OPT("nccl_id_file", "nccl-id-file", K_STR, id_file), .gpu = 1},
    {OPT("rank", NULL, K_INT, rank), .lo = 0, .hi = 1 << 20, .gpu = 1},
    {OPT("world_size", "world-size", K_INT, world), .lo = 1, .hi = 1 << 20, .gpu = 1},
    {OPT("local_rank", "local-rank", K_INT, local_rank), .lo = 0, .hi = 1 << 20, .gpu = 1},
    {OPT("zero_stage", "zero-stage", K_INT, zero), .lo = 0, .hi = 1, .gpu = 1},
    {OPT("attention", NULL, K_ENUM, attn_matmul), .gpu = 1, .word = {"fused", "matmul"},
     .value = {0, 1}},
    {OPT("profile", NULL, K_FLAG, profile), .gpu = 1, .value = {1}},
    {OPT("comm_timeout", "comm-timeout", K_INT, comm_timeout), .lo = 0, .hi = 1 << 24, .gpu = 1},
    {OPT("start_fresh_if_damaged", "start-fresh-if-damaged", K_FLAG, fresh_if_damaged),
     .value = {1}},
};
#undef OPT
#define N_OPTS (sizeof opt_table / sizeof *opt_table)
enum { OPT_BASE = 256 }; /* getopt_long's value for opt_table[k]: OPT_BASE + k */

/* getopt_long's table: every spelling of opt_table in its order, then
 * --threads and the shared options; lo has room for 2 N_OPTS + 1 +
 * CLI_NLONGOPTS_COMMON. */
static void long_options(struct option *lo) {
    static const struct option tail[] = {{"threads", 1, 0, 'j'}, CLI_LONGOPTS_COMMON};
    size_t n = 0;
    for (size_t k = 0; k < N_OPTS; k++) {
        int arg = opt_table[k].kind != K_FLAG;
        lo[n++] = (struct option){opt_table[k].name, arg, 0, OPT_BASE + (int)k};
        if (opt_table[k].dash)
            lo[n++] = (struct option){opt_table[k].dash, arg, 0, OPT_BASE + (int)k};
    }
    memcpy(lo + n, tail, sizeof tail);
}

/* Parse arg (NULL for a flag) as sp says into its field of o; exits 2
 * naming the option (--name) when it does not fit. */
static void set_opt(TrainOpts *o, const OptSpec *sp, const char *arg) {
    char what[64];
    snprintf(what, sizeof what, "--%s", sp->name);
    char *dst = (char *)o + sp->off;
    switch (sp->kind) {
    case K_STR:
        *(const char **)dst = arg;
        break;
    case K_FLAG:
        *(int *)dst = sp->value[0];
        break;
    case K_INT:
        *(int *)dst = (int)cli_parse_int(arg, what, (long)sp->lo, (long)sp->hi);
        break;
    case K_INT64:
        *(int64_t *)dst = cli_parse_int(arg, what, (long)sp->lo, (long)sp->hi);
        break;
    case K_REAL:
        *(double *)dst = parse_real(arg, what, sp->lo, sp->lo_open, sp->hi);
        break;
    case K_SEED:
        if (cli_parse_u64(arg, (uint64_t *)dst))
            cli_bad_usage("%s %s: not a non-negative integer", what, arg);
        break;
    case K_ENUM:
        for (int k = 0; k < 2; k++)
            if (!strcmp(arg, sp->word[k])) {
                *(int *)dst = sp->value[k];
                return;
            }
        cli_bad_usage("%s %s: %s or %s", what, arg, sp->word[0], sp->word[1]);
    }
}

/* The checks across options, after parsing; exits 2 with the first broken. */
static void check_opts(const TrainOpts *o) {
    /* --config_file may be left out for --init_checkpoint DIR's config.json (run_setup) */
    if (!o->eval_file && (!o->input_dir || (!o->config && !o->init_ckpt) || !o->output_dir))
        cli_bad_usage("--input_dir, --config_file and --output_dir are required");
    if (o->eval_file &&
        ((!o->config && !o->init_ckpt) || (!o->init_ckpt && !(o->resume && o->output_dir))))
        cli_bad_usage("--eval_file needs --config_file and --init_checkpoint (or "
                      "--resume_from_checkpoint --output_dir)");
    if (o->batch % o->accum)
        cli_bad_usage("--train_batch_size %d is not a multiple of --gradient_accumulation_steps %d",
                      o->batch, o->accum);
    int64_t micro = o->batch / o->accum,
            width = o->max_seq > o->max_pred ? o->max_seq : o->max_pred;
    if (micro * width > INT32_MAX)
        cli_bad_usage("a micro-batch of %" PRId64
                      " rows (--train_batch_size / --gradient_accumulation_steps) of %" PRId64
                      " tokens or masked slots (--max_seq_length, --max_predictions_per_seq): more "
                      "than 2^31 - 1",
                      micro, width);
    if ((o->output_dir && !*o->output_dir) || (o->export_dir && !*o->export_dir))
        cli_bad_usage("--output_dir and --export_hf need a directory name, not ''");
    if (o->fresh_if_damaged && !o->resume)
        cli_bad_usage("--start_fresh_if_damaged goes with --resume_from_checkpoint");
    if (o->phase2 && !o->resume && !o->eval_file)
        cli_bad_usage("--phase2 continues from phase 1's checkpoint: add --resume_from_checkpoint");
    if (o->skip_ckpt && o->stop_at)
        cli_bad_usage(
            "--stop_at_step writes a checkpoint to resume from: not with --skip_checkpoint");
    if ((o->rank >= 0) != (o->world >= 1)) cli_bad_usage("--rank and --world_size go together");
    if (o->rank >= 0 && o->rank >= o->world)
        cli_bad_usage("--rank %d: not below --world_size %d", o->rank, o->world);
}

void train_parse_args(TrainOpts *o, int argc, char **argv, int gpu) {
    *o = (TrainOpts){.batch = 32,
                     .accum = 1,
                     .max_steps = 1000,
                     .max_pred = 80,
                     .ckpt_every = 100,
                     .log_freq = 1,
                     .dynamic = 1,
                     .phase1_end = 7038,
                     .lr = 5e-5,
                     .warmup = 0.01,
                     .weight_decay = 0.01,
                     .seed = 42,
                     .opt = OPT_LAMB,
                     .gpu = gpu,
                     .bf16 = gpu,
                     .attn_matmul = 1, /* on an H200 the faster at every shape measured */
                     .rank = -1,
                     .world = -1,
                     .local_rank = -1,
                     .comm_timeout = 600,
                     .lower = -1,
                     .strip = -1,
                     .argc = argc,
                     .argv = argv};
    struct option lo[2 * N_OPTS + 1 + CLI_NLONGOPTS_COMMON];
    long_options(lo);
    CliCommon cc;
    cli_common_init(&cc);
    int c;
    int li = -1;
    while ((c = getopt_long(argc, argv, ":j:fqvhV", lo, &li)) != -1) {
        if (c >= OPT_BASE && c < OPT_BASE + (int)N_OPTS) {
            const OptSpec *sp = &opt_table[c - OPT_BASE];
            if (!gpu && sp->gpu)
                cli_bad_usage("--%s: only train_bert (GPUs) has this option",
                              li >= 0 ? lo[li].name : "?");
            set_opt(o, sp, optarg);
        } else if (c == 'h') {
            usage(gpu);
        } else {
            if (c == 'j' && gpu) cli_bad_usage("-j: train_bert runs on GPUs");
            cli_common_opt(&cc, c, optarg, argv, gpu ? "GPU trainer" : "CPU reference trainer");
        }
        li = -1;
    }
    o->threads = cc.nthreads;
    o->force = cc.force;
    if (optind < argc) cli_bad_usage("unexpected argument '%s'", argv[optind]);
    check_opts(o);
}

/* ---- the vocabulary ---- */

/* --vocab_file, read once (a FIFO or <(...) gives its bytes only once): the
 * bytes for the export (vocab.txt's; a tokenizer.json's tokens as such),
 * the token count and the special tokens' ids */
typedef struct Vocab {
    Buf text;
    long ntokens;
    int32_t pad, cls, sep, mask;
    int json;         /* it was a tokenizer.json */
    int lower, strip; /* json: its BertNormalizer's lowercase, strip_accents (-1 null) */
} Vocab;

/* Read and check path: UTF-8 text without NUL bytes, one token a line,
 * with [PAD], [CLS], [SEP] and [MASK]; or a tokenizer.json of a WordPiece
 * model (common/tokjson.h) with those tokens. Exits 2 naming the file
 * otherwise. */
static void vocab_read(Vocab *v, const char *path) {
    static const char *const need[4] = {"[PAD]", "[CLS]", "[SEP]", "[MASK]"};
    Err err;
    *v = (Vocab){.pad = -1, .cls = -1, .sep = -1, .mask = -1};
    if (read_text_file(path, &v->text, &err)) die_code(2, "%s", err.msg);
    if (tokjson_is(v->text.data ? v->text.data : "", v->text.len)) {
        TokJson t;
        if (tokjson_read(&t, v->text.data, v->text.len, path, &err)) die_code(2, "%s", err.msg);
        buf_free(&v->text);
        v->text = t.vocab, t.vocab = (Buf){0};
        v->json = 1, v->lower = t.lowercase, v->strip = t.strip_accents;
        tokjson_free(&t);
    }
    const char *s = v->text.data;
    size_t n = v->text.len, good = utf8_valid_prefix(s ? s : "", n);
    const char *nul = n ? memchr(s, 0, n) : NULL;
    if (!n) die_code(2, "%s: empty: a vocabulary has one token a line", path);
    if (nul)
        die_code(2, "%s: byte %zu: a NUL byte: not a vocabulary (one token a line)", path,
                 (size_t)(nul - s));
    if (good < n)
        die_code(2, "%s: byte %zu: not UTF-8: not a vocabulary (one token a line)", path, good);
    int32_t *ids[4] = {&v->pad, &v->cls, &v->sep, &v->mask};
    for (size_t i = 0; i < n; v->ntokens++) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - s) : n, len = end - i;
        if (len && s[i + len - 1] == '\r') len--;
        for (int k = 0; k < 4; k++)
            if (*ids[k] < 0 && len == strlen(need[k]) && !memcmp(s + i, need[k], len) &&
                v->ntokens <= INT32_MAX)
                *ids[k] = (int32_t)v->ntokens;
        i = end + 1;
    }
    char missing[64] = "";
    for (int k = 0; k < 4; k++)
        if (*ids[k] < 0)
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), " %s", need[k]);
    if (*missing)
        die_code(2, "%s: no%s line: a BERT vocabulary has [PAD], [CLS], [SEP] and [MASK]", path,
                 missing);
}

/* ---- a Hugging Face model directory as --init_checkpoint ---- */

/* What the run takes from --init_checkpoint DIR and from a tokenizer.json
 * --vocab_file: the paths (DIR/config.json, DIR's vocabulary) and the
 * tokenizer's normalization for the export. */
typedef struct HfDefaults {
    char config[4096], vocab[4096]; /* DIR/config.json, DIR/vocab.txt or tokenizer.json */
    char tkfile[4096];              /* the file DIR's normalization came from */
    int has_tk;                     /* DIR has a tokenizer: tk is its normalization */
    HfTokenizer tk;
} HfDefaults;

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* --config_file and --vocab_file, when not given, from --init_checkpoint
 * DIR (one info line each); exits 2 when there is no config at all. */
static void hf_defaults(TrainOpts *o, HfDefaults *h, int lead) {
    memset(h, 0, sizeof *h);
    const char *dir = o->init_ckpt && is_dir(o->init_ckpt) ? o->init_ckpt : NULL;
    if (!dir) {
        if (!o->config)
            die_code(2, "--config_file is required (%s is not a directory with a config.json)",
                     o->init_ckpt ? o->init_ckpt : "--init_checkpoint");
        return;
    }
    Err err;
    int r = hf_dir_tokenizer(dir, &h->tk, h->tkfile, sizeof h->tkfile, &err);
    if (r < 0) die_code(2, "%s", err.msg);
    h->has_tk = r;
    if (!o->config) {
        snprintf(h->config, sizeof h->config, "%s/config.json", dir);
        if (access(h->config, F_OK))
            die_code(2, "--config_file is required: %s has no config.json", dir);
        o->config = h->config;
        if (lead) info(2, "config from %s (no --config_file)", h->config);
    }
    if (!o->vocab) {
        static const char *const names[2] = {"vocab.txt", "tokenizer.json"};
        for (int i = 0; i < 2 && !o->vocab; i++) {
            snprintf(h->vocab, sizeof h->vocab, "%s/%s", dir, names[i]);
            if (access(h->vocab, F_OK) == 0) o->vocab = h->vocab;
        }
        if (o->vocab && lead) info(2, "vocabulary from %s (no --vocab_file)", o->vocab);
    }
}

/* The export's normalization: --do_lower_case / --strip_accents where
 * given, else a tokenizer.json --vocab_file's, else --init_checkpoint
 * DIR's tokenizer's, else BertTokenizer's defaults (lower-case, accents as
 * lower-casing). Where the choice differs from such a file's, one line
 * says so. */
static HfTokenizer export_norm(const TrainOpts *o, const Vocab *v, const HfDefaults *h, int lead) {
    HfTokenizer f = {1, -1};
    const char *from = NULL;
    if (v->json)
        f = (HfTokenizer){v->lower, v->strip}, from = o->vocab;
    else if (h->has_tk)
        f = h->tk, from = h->tkfile;
    HfTokenizer tk = {o->lower >= 0 ? o->lower : f.lower, o->strip >= 0 ? o->strip : f.strip};
    /* the files that say otherwise than the export will */
    const struct {
        int has;
        HfTokenizer t;
        const char *file;
    } src[2] = {{v->json, {v->lower, v->strip}, o->vocab}, {h->has_tk, h->tk, h->tkfile}};
    Buf line = {0};
    for (int i = 0; i < 2 && lead; i++) {
        if (!src[i].has || (i == 1 && v->json && !strcmp(src[0].file, src[1].file))) continue;
        int fl = src[i].t.lower, fs = src[i].t.strip < 0 ? fl : src[i].t.strip;
        int el = tk.lower, es = tk.strip < 0 ? tk.lower : tk.strip;
        if (fl == el && fs == es) continue;
        char t[4400];
        snprintf(t, sizeof t, "%s%s has lowercase %s, strip_accents %s", line.len ? "; " : "",
                 src[i].file, fl ? "true" : "false", fs ? "true" : "false");
        buf_puts(&line, t);
    }
    if (line.len)
        info(2, "the export's tokenizer: do_lower_case %d, strip_accents %d (%s); %.*s", tk.lower,
             tk.strip < 0 ? tk.lower : tk.strip,
             o->lower >= 0 || o->strip >= 0 ? "the command line"
             : from                         ? from
                                            : "the default",
             (int)line.len, line.data);
    buf_free(&line);
    return tk;
}

/* keep the newest 3 checkpoints of this phase (and phase 1's last one) */
static void prune(const char *dir, int64_t base, int64_t step, int every) {
    for (int k = 3; k < 6; k++) {
        int64_t s = step - (int64_t)k * every;
        if (s <= 0) break;
        char p[4096];
        snprintf(p, sizeof p, "%s/ckpt_%" PRId64 ".wbckpt", dir, base + s);
        unlink(p);
    }
}

/* the member "key": v of the JSON object in b (", " before all but the
 * first), v with %.*f (or %.*g with g), or null where v is not finite: JSON
 * has no nan or inf */
static void json_num(Buf *b, const char *key, double v, int prec, int g) {
    char t[512];
    const char *sep = b->len && b->data[b->len - 1] == '{' ? "" : ", ";
    if (!isfinite(v))
        snprintf(t, sizeof t, "%s\"%s\": null", sep, key);
    else if (g)
        snprintf(t, sizeof t, "%s\"%s\": %.*g", sep, key, prec, v);
    else
        snprintf(t, sizeof t, "%s\"%s\": %.*f", sep, key, prec, v);
    buf_append(b, t, strlen(t));
}

/* print b as one line of stdout (and of the run's log.jsonl when also is
 * not NULL) and empty it; a line that cannot be written (a full disk, a
 * closed stdout) ends the run: the log is its result as much as the
 * checkpoints are */
static void log_line(Buf *b, FILE *also, const char *also_name) {
    buf_append(b, "}\n", 2);
    if (fwrite(b->data, 1, b->len, stdout) != b->len || fflush(stdout) != 0)
        die("standard output: write error: %s", strerror(errno));
    if (also && (fwrite(b->data, 1, b->len, also) != b->len || fflush(also)))
        die("%s: write error: %s", also_name, strerror(errno));
    buf_clear(b);
}

/* report a checkpoint file that fails its check (one line) */
static void ckpt_skipped(void *arg, const Err *why) {
    if (*(const int *)arg) warn("%s; skipped", why->msg);
}

/* the newest usable checkpoint of o->output_dir into path, each damaged
 * newer one reported; 1 found, 0 none (*ndamaged: damaged ones seen) */
static int newest_ckpt(const TrainOpts *o, int lead, char *path, size_t cap, int *ndamaged) {
    Err err;
    int r = ckpt_latest(o->output_dir, path, cap, ckpt_skipped, &lead, ndamaged, &err);
    if (r < 0) die("%s", err.msg);
    return r;
}

/* the next micro-batch, checked against the model: ids, segments, the
 * sequence length against max_position_embeddings (exits 1 naming the file) */
static void next_batch(Data *d, const Bert *m, BertBatch *b) {
    Err err;
    if (data_next(d, b, &err)) die("%s", err.msg);
    if (bert_batch_check(m, b, &err)) die("%s: %s", data_file(d), err.msg);
}

/* the index of the first value of x[0..n) that is not finite, or n */
static size_t first_nonfinite(const float *x, size_t n) {
    size_t i = 0;
    while (i < n && isfinite(x[i]))
        i++;
    return i;
}

/* v for a message: %g, but nan without a sign */
static const char *num_str(double v, char *buf, size_t n) {
    if (isnan(v)) return "nan";
    snprintf(buf, n, "%g", v);
    return buf;
}

/* a step's statistics must be finite: else the run ends (exit 1) naming
 * the step and the first value that is not (the log never prints nan) */
static void check_stats(const TrainStats *st, int64_t step, float lr, int tty) {
    const struct {
        const char *name;
        double v;
    } vals[] = {{"loss", st->loss},
                {"mlm_loss", st->mlm},
                {"nsp_loss", st->nsp},
                {"grad_norm", st->grad_norm}};
    char b1[32], b2[32];
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++)
        if (!isfinite(vals[i].v)) {
            if (tty) fputc('\n', stderr);
            die("step %" PRId64 ": %s is %s (grad_norm %s, learning rate %g): training diverged; "
                "lower --learning_rate; "
                "the checkpoints before this step are kept",
                step, vals[i].name, num_str(vals[i].v, b1, sizeof b1),
                num_str(st->grad_norm, b2, sizeof b2), lr);
        }
}

/* before a checkpoint: the weights and moments after the step must be
 * finite (a step can overflow them with a finite loss and gradient). Rank
 * 0 holds them (to_host) and checks; every rank learns its verdict (a
 * collective) and ends the run with it, exit 1. */
static void check_state(TrainBackend *be, const Bert *m, const Optim *opt, int64_t step, float lr) {
    static const char *const what[3] = {"a weight", "a first moment", "a second moment"};
    const float *arr[3] = {m->params, opt->m, opt->v};
    /* bad: 0, or 1 + 2 k + (1 for inf, 0 for nan) when arr[k] is not finite */
    int64_t bad = 0, *all = xmalloc((size_t)be->world * sizeof *all);
    for (int k = 0; k < 3 && be->rank == 0 && !bad; k++) {
        size_t i = first_nonfinite(arr[k], m->nparams);
        if (i < m->nparams) bad = 1 + 2 * k + !isnan(arr[k][i]);
    }
    be->allgather_i64(be->ctx, &bad, 1, all);
    bad = all[0];
    free(all);
    if (bad)
        die("step %" PRId64 ": %s is %s after the update (learning rate %g): training diverged; "
            "lower --learning_rate; "
            "the checkpoints before this step are kept",
            step, what[(bad - 1) / 2], (bad - 1) % 2 ? "infinite" : "nan", lr);
}

/* the losses of a checkpoint on the first rows of one file */
static int run_eval(TrainOpts *o, TrainBackend *be, Bert *m, const int32_t special[3], Err *err) {
    char path[4096];
    const char *ck = o->init_ckpt;
    if (!ck) {
        int ndamaged;
        if (!newest_ckpt(o, be->rank == 0, path, sizeof path, &ndamaged))
            die("%s: no %scheckpoint to evaluate", o->output_dir, ndamaged ? "usable " : "");
        ck = path;
    }
    Buf note = {0};
    if (ckpt_init_load(ck, m, &note, err)) die("%s", err->msg);
    if (note.len && be->rank == 0) info(2, "%s: %.*s", ck, (int)note.len, note.data);
    buf_free(&note);
    be->from_host(be->ctx);
    DataOpts eo = {
        NULL,        o->seed,         0,          1,          o->batch,
        o->max_pred, m->c.vocab_size, o->max_seq, o->dynamic, special[0],
        special[1],  special[2],      0,          1,          m->c.max_position_embeddings};
    Data *ed;
    BertBatch b;
    BertLoss l;
    if (data_open_file(&ed, &eo, o->eval_file, err)) die("%s", err->msg);
    next_batch(ed, m, &b);
    be->eval(be->ctx, &b, &l);
    if (be->rank == 0) {
        Buf line = {0};
        buf_append(&line, "{", 1);
        json_num(&line, "eval_loss", l.total, 6, 0);
        json_num(&line, "mlm_loss", l.mlm, 6, 0);
        json_num(&line, "nsp_loss", l.nsp, 6, 0);
        json_num(&line, "mlm_acc", l.masked ? (double)l.mlm_correct / l.masked : 0.0, 4, 0);
        json_num(&line, "nsp_acc", b.B ? (double)l.nsp_correct / b.B : 0.0, 4, 0);
        char t[64];
        snprintf(t, sizeof t, ", \"rows\": %d, \"masked\": %d", b.B, l.masked);
        buf_append(&line, t, strlen(t));
        log_line(&line, NULL, NULL);
        buf_free(&line);
    }
    if (!isfinite(l.total)) die("%s: the loss of %s is %g", o->eval_file, ck, l.total);
    data_close(ed);
    return 0;
}

/* every rank's data position (this rank's is s), for the checkpoint */
static DataState *gather_states(TrainBackend *be, DataState s) {
    DataState *all = xcalloc((size_t)be->world, sizeof *all);
    int64_t mine[3] = {s.epoch, s.file_step, s.row},
            *v = xmalloc((size_t)be->world * 3 * sizeof *v);
    be->allgather_i64(be->ctx, mine, 3, v);
    for (int r = 0; r < be->world; r++)
        all[r] = (DataState){v[3 * r], v[3 * r + 1], v[3 * r + 2]};
    free(v);
    return all;
}

/* ---- the run: train_main's steps ---- */

/* What the steps of one run share. */
typedef struct TrainRun {
    TrainOpts *o;
    BertConfig cfg;
    Vocab vocab;        /* --vocab_file (vocab.text empty without one) */
    HfDefaults hf;      /* what --init_checkpoint DIR gave */
    HfTokenizer tk;     /* the export's normalization */
    int32_t special[3]; /* [CLS], [SEP], [MASK] for dynamic masking: the vocabulary's, or BERT's */
    Bert m;             /* the host model and optimizer: what checkpoints hold */
    Optim opt;
    TrainBackend be;
    Data *data;
    int64_t base; /* checkpoints are named base + step (phase1_end_step in phase 2, as NVIDIA names
                     them) */
    int lead;     /* rank 0: logs, checkpoints, exports */
    TrainStats last; /* the last step's statistics (for the model card) */
    int tty;         /* the progress line on stderr */
    FILE *log;       /* OUTPUT_DIR/log.jsonl, appended (rank 0) */
    char log_path[4096];
    char from[4096];                /* the checkpoint the run continues from ("" at step 0) */
    long vocab_lines, config_vocab; /* a config whose vocab_size the vocabulary overrode */
    char *done_ckpt; /* the checkpoint resumed from when it is at or past --max_steps */
    Err err;
} TrainRun;

/* Setup: the config (vocab_size rounded up to a multiple of 8), the
 * vocabulary, the model with its initial weights, the optimizer and the
 * backend. Exits 2 on a bad config or vocabulary, 1 when the backend fails. */
static void run_setup(TrainRun *r, TrainBackendOpen open) {
    TrainOpts *o = r->o;
    BertConfig *cfg = &r->cfg;
    hf_defaults(o, &r->hf, 1);
    if (bert_config_load(cfg, o->config, &r->err)) die_code(2, "%s", r->err.msg);
    int given_vocab = cfg->vocab_size;
    if (cfg->vocab_size % 8)
        cfg->vocab_size += 8 - cfg->vocab_size % 8; /* run_pretraining.py does this */
    r->special[0] = 101, r->special[1] = 102, r->special[2] = 103;
    r->vocab = (Vocab){.pad = -1};
    if (o->vocab) {
        vocab_read(&r->vocab, o->vocab);
        /* the vocabulary decides the size (said after the backend opens, by
         * rank 0): a config written for another vocabulary would leave
         * embedding rows no token reaches, or too few */
        long lines = r->vocab.ntokens, need = (lines + 7) / 8 * 8;
        if (need != cfg->vocab_size && need <= INT32_MAX) {
            r->vocab_lines = lines, r->config_vocab = given_vocab;
            cfg->vocab_size = (int)need;
        }
        r->special[0] = r->vocab.cls, r->special[1] = r->vocab.sep, r->special[2] = r->vocab.mask;
    }
    r->tk = export_norm(o, &r->vocab, &r->hf, 1);
    if (bert_create(&r->m, cfg, &r->err)) die_code(2, "%s: %s", o->config, r->err.msg);
    bert_set_threads(o->threads); /* the initialisation's threads, the CPU kernels' too */
    double t0 = now_sec();
    bert_init_weights(&r->m, o->seed);
    info(3, "initial weights: %zu parameters in %.2f s on %d threads", r->m.nparams, now_sec() - t0,
         o->threads > 0 ? o->threads : cli_ncpus());
    OptimConfig oc;
    optim_config_default(&oc, o->opt);
    oc.weight_decay = (float)o->weight_decay;
    optim_init(&r->opt, &oc, &r->m);
    if (open(&r->be, &r->m, &r->opt, o, &r->err)) die("%s", r->err.msg);
}

/* Free what run_setup made (the backend first closed). */
static void run_free(TrainRun *r) {
    buf_free(&r->vocab.text);
    r->be.close(r->be.ctx);
    optim_free(&r->opt);
    bert_free(&r->m);
}

/* --init_checkpoint's weights (a wikibert checkpoint's, or a Hugging
 * Face model's with the heads it lacks kept fresh), said in one line. */
static void run_init_weights(TrainRun *r) {
    const char *ck = r->o->init_ckpt;
    Buf note = {0};
    snprintf(r->from, sizeof r->from, "%s", ck);
    if (ckpt_init_load(ck, &r->m, &note, &r->err)) die("%s", r->err.msg);
    if (r->lead)
        info(2, "weights from %s%s%.*s", ck, note.len ? "; " : "", (int)note.len,
             note.data ? note.data : "");
    buf_free(&note);
}

/* The options the order and content of the batches depend on, kept in
 * each checkpoint ("run"): resuming with other values would not continue
 * the uninterrupted run. */
static void run_options(const TrainOpts *o, char *out, size_t cap) {
    snprintf(out, cap,
             "train_batch_size=%d gradient_accumulation_steps=%d seed=%" PRIu64
             " bin_size=%d max_predictions_per_seq=%d dynamic_mask=%d",
             o->batch, o->accum, (uint64_t)o->seed, o->bin_size, o->max_pred, o->dynamic ? 1 : 0);
}

/* Dies when checkpoint ck was written with other run options than this
 * run has, naming the first that differs and both values. A checkpoint
 * without them (older) passes. */
static void check_run_options(const TrainOpts *o, const char *ck, const char *theirs) {
    char mine[256];
    run_options(o, mine, sizeof mine);
    const char *a = theirs, *b = mine;
    while (*a && *b) {
        size_t la = strcspn(a, " "), lb = strcspn(b, " ");
        if (la != lb || memcmp(a, b, la)) {
            size_t ka = strcspn(a, "="), kb = strcspn(b, "=");
            if (ka > la) ka = la;
            if (kb > lb) kb = lb;
            die("%s: written with --%.*s %.*s; this run has --%.*s %.*s (resume with the same, "
                "or train into another --output_dir: the resumed run would not be the "
                "uninterrupted one)",
                ck, (int)ka, a, (int)(la - ka - (ka < la)), a + ka + (ka < la), (int)kb, b,
                (int)(lb - kb - (kb < lb)), b + kb + (kb < lb));
        }
        a += la + (a[la] == ' '), b += lb + (b[lb] == ' ');
    }
}

/* Resume: the checkpoint to continue from (--resume_from_checkpoint: the
 * newest usable one or --init_checkpoint; alone, --init_checkpoint's
 * weights), the data seeked to its position. Returns the optimizer steps
 * of this phase already done. */
static int64_t run_resume(TrainRun *r) {
    TrainOpts *o = r->o;
    int lead = r->lead;
    int64_t step = 0;
    if (o->resume && o->init_ckpt && !ckpt_is_wikibert(o->init_ckpt)) {
        run_init_weights(r); /* no optimizer moments in it: they start at 0 */
    } else if (o->resume) {
        char path[4096];
        const char *ck = o->init_ckpt;
        int ndamaged = 0;
        if (!ck) ck = newest_ckpt(o, lead, path, sizeof path, &ndamaged) ? path : NULL;
        if (!ck) {
            if (o->phase2)
                die("%s: no %scheckpoint of phase 1 to start phase 2 from", o->output_dir,
                    ndamaged ? "usable " : "");
            if (ndamaged && !o->fresh_if_damaged)
                die("%s: no usable checkpoint (%d damaged, named above); move them away, or add "
                    "--start_fresh_if_damaged to start from step 0",
                    o->output_dir, ndamaged);
            if (lead)
                info(2, "no %scheckpoint in %s: starting from step 0", ndamaged ? "usable " : "",
                     o->output_dir);
        } else {
            CkptInfo ci;
            if (ckpt_load(ck, &r->m, &r->opt, &ci, &r->err)) die("%s", r->err.msg);
            snprintf(r->from, sizeof r->from, "%s", ck);
            step = o->init_ckpt ? 0 : ci.step - r->base;
            if (step < 0)
                die("%s: step %" PRId64 " is before --phase1_end_step %" PRId64
                    ": phase 1 has not finished",
                    ck, ci.step, o->phase1_end);
            if (o->init_ckpt || (o->phase2 && step == 0)) {
                r->opt.step =
                    0; /* NVIDIA: the optimizer's step becomes the new phase's 0; moments stay */
                if (lead)
                    info(2, "weights and optimizer moments from %s; %s starts at step 0", ck,
                         o->phase2 ? "phase 2" : "training");
            } else {
                if (ci.nranks != r->be.world)
                    die("%s: written by %d data-parallel ranks; this run has %d (resume with as "
                        "many)",
                        ck, ci.nranks, r->be.world);
                if (ci.run[0]) check_run_options(o, ck, ci.run);
                if (step >= o->max_steps) { /* run_nothing_left says so */
                    free(ci.ranks);
                    r->done_ckpt = xstrdup(ck);
                    return step;
                }
                if (data_seek(r->data, ci.ranks[r->be.rank], &r->err)) die("%s", r->err.msg);
                if (lead)
                    info(2, "resumed from %s at step %" PRId64 "%s", ck, step,
                         o->phase2 ? " of phase 2" : "");
            }
            free(ci.ranks);
        }
    } else if (o->init_ckpt) {
        run_init_weights(r);
    }
    return step;
}

/* One optimizer step's forward and backward passes: --gradient_accumulation_steps
 * micro-batches, the first the one staged in *next when *staged. Returns
 * the rows they held. */
static int64_t run_micro_steps(TrainRun *r, int64_t step, BertBatch *next, int *staged) {
    TrainOpts *o = r->o;
    TrainBackend *be = &r->be;
    int64_t rows = 0;
    be->zero_grad(be->ctx);
    for (int a = 0; a < o->accum; a++) {
        BertBatch b = *next;
        if (!*staged) next_batch(r->data, &r->m, &b);
        *staged = 0;
        rows += b.B;
        be->micro_step(be->ctx, &b, 1.0f / (float)o->accum, 1,
                       dropout_pass_key(o->seed, r->base + step, be->rank * o->accum + a));
    }
    return rows;
}

/* The JSON log's line of a step (line: the scratch buffer). */
static void log_step(TrainRun *r, Buf *line, int64_t step, const TrainStats *st, float lr,
                     double seq_per_s) {
    char head[64];
    snprintf(head, sizeof head, "{\"step\": %" PRId64, step);
    buf_append(line, head, strlen(head));
    json_num(line, "loss", st->loss, 6, 0);
    json_num(line, "mlm_loss", st->mlm, 6, 0);
    json_num(line, "nsp_loss", st->nsp, 6, 0);
    json_num(line, "mlm_acc", st->masked ? (double)st->mlm_correct / st->masked : 0.0, 4, 0);
    json_num(line, "nsp_acc", st->rows ? (double)st->nsp_correct / st->rows : 0.0, 4, 0);
    json_num(line, "lr", lr, 6, 1);
    json_num(line, "grad_norm", st->grad_norm, 5, 1);
    json_num(line, "seq_per_s", seq_per_s, 2, 0);
    log_line(line, r->log, r->log_path);
}

/* Checkpoint: after step, the data at pos; every rank takes part (the
 * collectives), rank 0 writes it and prunes the old ones. */
static void run_checkpoint(TrainRun *r, int64_t step, DataState pos, float lr) {
    TrainBackend *be = &r->be;
    DataState *states = gather_states(be, pos);
    be->to_host(be->ctx); /* on every rank: a collective with ZeRO */
    check_state(be, &r->m, &r->opt, step, lr);
    if (r->lead) {
        char path[4096];
        snprintf(path, sizeof path, "%s/ckpt_%" PRId64 ".wbckpt", r->o->output_dir, r->base + step);
        CkptInfo ci = {r->base + step, states[0], r->o->seed, be->world, states, ""};
        run_options(r->o, ci.run, sizeof ci.run);
        if (ckpt_save(path, &r->m, &r->opt, &ci, &r->err)) die("%s", r->err.msg);
        prune(r->o->output_dir, r->base, step, r->o->ckpt_every);
    }
    free(states);
}

/* The step loop: the optimizer steps after `step` (those done), started at
 * t0, to --max_steps or --stop_at_step. Returns the step it stopped at, or
 * max_steps + 1 when it ran to the end. */
static int64_t run_steps(TrainRun *r, int64_t step, double t0) {
    TrainOpts *o = r->o;
    TrainBackend *be = &r->be;
    double tlast = t0;
    int64_t seqs_since = 0, step0 = step;
    BertBatch next = {0}; /* the next step's first micro-batch, when staged */
    int staged = 0;
    Buf line = {0}; /* the JSON log's line */
    for (step = step + 1; step <= o->max_steps; step++) {
        int64_t rows = run_micro_steps(r, step, &next, &staged);
        float lr = poly_warmup_lr(step, (float)o->lr, (float)o->warmup, o->max_steps);
        be->opt_step(be->ctx, lr);
        int log = step % o->log_freq == 0 || step == o->max_steps;
        int stop = step == o->stop_at && step < o->max_steps;
        /* where the data stands after this step (the checkpoint's position) */
        DataState pos = data_state(r->data);
        if (be->stage && step < o->max_steps && !stop) {
            /* before waiting for the device: the next step's first batch */
            next_batch(r->data, &r->m, &next);
            be->stage(be->ctx, &next);
            staged = 1;
        }
        /* every step (on every rank: a collective with several), so that the
         * first step whose loss or gradient is not finite ends the run
         * before its state reaches a checkpoint or the log */
        TrainStats st;
        be->stats(be->ctx, &st);
        check_stats(&st, step, lr, r->tty);
        r->last = st;
        seqs_since +=
            rows * be->world; /* the other ranks' batches are as large but for a file's last */
        double now = now_sec();
        if (log && r->lead) log_step(r, &line, step, &st, lr, seqs_since / fmax(now - tlast, 1e-9));
        if (log) tlast = now, seqs_since = 0;
        if (r->tty && log) {
            double per = (now - t0) / (double)(step - step0);
            fprintf(stderr, "\rstep %" PRId64 "/%d  loss %.4f  %.2f s/step  ETA %.0f s   ", step,
                    o->max_steps, st.loss, per, per * (o->max_steps - step));
        }
        if (!o->skip_ckpt && (step % o->ckpt_every == 0 || step == o->max_steps || stop))
            run_checkpoint(r, step, pos, lr);
        if (stop) break;
    }
    buf_free(&line);
    return step;
}

/* Append s to b as one shell word (in single quotes where it needs them). */
static void shell_quote(Buf *b, const char *s) {
    if (*s &&
        strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") ==
            strlen(s)) {
        buf_puts(b, s);
        return;
    }
    buf_putc(b, '\'');
    for (; *s; s++)
        if (*s == '\'')
            buf_puts(b, "'\\''");
        else
            buf_putc(b, *s);
    buf_putc(b, '\'');
}

/* the member "key": "v" (v NULL: null) of the JSON object in b, as json_num */
static void json_str(Buf *b, const char *key, const char *v) {
    buf_puts(b, b->len && b->data[b->len - 1] == '{' ? "\"" : ", \"");
    buf_puts(b, key);
    buf_puts(b, "\": ");
    if (v)
        json_append_string(b, v, strlen(v));
    else
        buf_puts(b, "null");
}

/* The run's log: OUTPUT_DIR/log.jsonl, opened for appending (rank 0), so
 * that the output directory tells its whole story without a redirection.
 * Each start adds one line {"run": {...}} first: the command line, the
 * backend, the phase, the step it starts after and the checkpoint it
 * continues from, the options and the resolved config (its vocab_size
 * rounded up); then the step lines, as on stdout. A run resumed from a
 * checkpoint logs again the steps after it: a reader takes each step's
 * last line (report/ does). A last line cut by a kill is ended first. */
static void run_log_open(TrainRun *r, int64_t step) {
    TrainOpts *o = r->o;
    snprintf(r->log_path, sizeof r->log_path, "%s/log.jsonl", o->output_dir);
    r->log = fopen(r->log_path, "a+");
    if (!r->log) die("%s: %s", r->log_path, strerror(errno));
    if (fseek(r->log, -1, SEEK_END) == 0 && fgetc(r->log) != '\n') fputc('\n', r->log);
    Buf b = {0}, cmd = {0}, cfg = {0};
    for (int i = 0; i < o->argc; i++) {
        if (i) buf_putc(&cmd, ' ');
        shell_quote(&cmd, o->argv[i]);
    }
    buf_putc(&cmd, 0);
    char t[64];
    time_t now = time(NULL);
    strftime(t, sizeof t, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    buf_puts(&b, "{\"run\": {");
    json_str(&b, "program", progname);
    json_str(&b, "command", cmd.data);
    json_str(&b, "time", t);
    json_str(&b, "backend", r->be.name);
    json_num(&b, "world_size", r->be.world, 0, 0);
    json_num(&b, "phase", o->phase2 ? 2 : 1, 0, 0);
    if (o->phase2) json_num(&b, "phase1_end_step", (double)o->phase1_end, 0, 0);
    json_num(&b, "start_step", (double)step, 0, 0);
    json_str(&b, "from", *r->from ? r->from : NULL);
    json_str(&b, "input_dir", o->input_dir);
    json_str(&b, "vocab_file", o->vocab);
    json_num(&b, "train_batch_size", o->batch, 0, 0);
    json_num(&b, "gradient_accumulation_steps", o->accum, 0, 0);
    json_num(&b, "learning_rate", o->lr, 9, 1);
    json_num(&b, "warmup_proportion", o->warmup, 9, 1);
    json_num(&b, "max_steps", o->max_steps, 0, 0);
    json_num(&b, "max_seq_length", o->max_seq, 0, 0);
    json_num(&b, "max_predictions_per_seq", o->max_pred, 0, 0);
    json_str(&b, "optimizer", o->opt == OPT_LAMB ? "lamb" : "adamw");
    json_num(&b, "weight_decay", o->weight_decay, 9, 1);
    json_num(&b, "seed", (double)o->seed, 0, 0);
    json_num(&b, "num_steps_per_checkpoint", o->ckpt_every, 0, 0);
    json_num(&b, "log_freq", o->log_freq, 0, 0);
    buf_puts(&b, ", \"config\": ");
    bert_config_json(&r->cfg, &cfg); /* one line of it */
    for (size_t i = 0; i < cfg.len; i++) {
        if (cfg.data[i] != '\n') {
            buf_putc(&b, cfg.data[i]);
            continue;
        }
        while (i + 1 < cfg.len && cfg.data[i + 1] == ' ')
            i++;
        if (i + 1 < cfg.len) buf_putc(&b, ' ');
    }
    buf_putc(&b, '}');
    /* log_line adds the closing brace and writes the line: here to the file only */
    buf_append(&b, "}\n", 2);
    if (fwrite(b.data, 1, b.len, r->log) != b.len || fflush(r->log))
        die("%s: write error: %s", r->log_path, strerror(errno));
    buf_free(&b), buf_free(&cmd), buf_free(&cfg);
}

/* The model card's fill-mask sentence: from the first rows of the first
 * training file (in file order), decoded with the vocabulary; ex and word
 * stay empty (NULL data) when none is found. */
static void fill_mask_example(TrainRun *r, Buf *ex, Buf *word) {
    TrainOpts *o = r->o;
    DataOpts eo = {NULL,          o->seed,           0, 1, 64,
                   o->max_pred,   r->cfg.vocab_size, 0, 1, r->special[0],
                   r->special[1], r->special[2],     0, 1, 0};
    Data *d;
    BertBatch b;
    Err err;
    const char *first = data_file_at(r->data, 0);
    if (!first || data_open_file(&d, &eo, first, &err)) return;
    if (data_next(d, &b, &err) == 0) {
        hf_fill_mask_example(&b, r->vocab.text.data, r->vocab.text.len, ex, word);
        if (ex->len) buf_putc(ex, 0), buf_putc(word, 0);
    }
    data_close(d);
}

/* The Hugging Face export of the model as it is (rank 0), with the model
 * card's last-step losses (nan: not known); returns its directory. */
static const char *run_write_export(TrainRun *r, double loss, double mlm, double nsp) {
    TrainOpts *o = r->o;
    static char hf[4096];
    snprintf(hf, sizeof hf, "%s/hf", o->output_dir);
    const char *edir = o->export_dir ? o->export_dir : hf;
    Buf cmd = {0};
    for (int i = 0; i < o->argc; i++) {
        if (i) buf_putc(&cmd, ' ');
        shell_quote(&cmd, o->argv[i]);
    }
    buf_putc(&cmd, 0);
    Buf ex = {0}, word = {0};
    if (o->vocab) fill_mask_example(r, &ex, &word);
    HfCard card = {progname,     cmd.data,  o->input_dir, data_nfiles(r->data),
                   o->max_steps, o->phase2, loss,         mlm,
                   nsp,          ex.data,   word.data};
    if (export_hf(edir, &r->m, o->vocab ? r->vocab.text.data : NULL, r->vocab.text.len, &r->tk,
                  &card, &r->err))
        die("%s", r->err.msg);
    if (!o->vocab) warn("%s: tokenizer files %s", edir, HF_NO_TOKENIZER);
    buf_free(&cmd), buf_free(&ex), buf_free(&word);
    return edir;
}

/* Export: after the loop stopped at step (started at t0), the closing
 * message and, at the end of the schedule, the Hugging Face export. */
static void run_export(TrainRun *r, int64_t step, double t0) {
    TrainOpts *o = r->o;
    int lead = r->lead;
    if (r->tty) fprintf(stderr, "\r%60s\r", "");
    if (step <= o->max_steps) {
        if (lead)
            info(2,
                 "stopped at step %" PRId64
                 " of %d (--stop_at_step); resume with --resume_from_checkpoint",
                 step, o->max_steps);
    } else if (lead && o->skip_ckpt) {
        info(2, "%d steps, %.1f s; no checkpoint or export (--skip_checkpoint)", o->max_steps,
             now_sec() - t0);
    } else if (lead) {
        const char *edir = run_write_export(r, r->last.loss, r->last.mlm, r->last.nsp);
        info(2, "%d steps, %.1f s; Hugging Face export in %s", o->max_steps, now_sec() - t0, edir);
    }
    if (lead && o->bin_size) {
        int64_t done, full;
        data_tokens(r->data, &done, &full);
        info(2,
             "--bin_size %d: batches held %.1f %% of the token positions of full-length ones (rank "
             "0)",
             o->bin_size, full ? 100.0 * (double)done / (double)full : 100.0);
    }
}

/* Rank 0, before any step: output_dir created and locked (one run at a
 * time), and kept from mixing two runs' checkpoints: a run from step 0
 * (not resuming from output_dir's own checkpoints) into a directory that
 * holds some of the steps it will write (above base: phase 2 writes
 * phase1_end_step + step, so phase 1's stay) would replace those and leave
 * the newer ones, which a later --resume_from_checkpoint would take.
 * Refused without -f; -f removes them (never --init_checkpoint's file).
 * The export directory is checked too, before the hours of training, not
 * after. Exits 1. */
static void claim_output_dir(const TrainOpts *o, int64_t base) {
    Err err;
    if (output_dir_lock(o->output_dir, 0, &err)) die("%s", err.msg);
    int fresh = !o->resume || o->init_ckpt;
    char newest[4096];
    int n = fresh ? ckpt_count(o->output_dir, base, newest, sizeof newest, &err) : 0;
    if (n < 0) die("%s", err.msg);
    if (n && !o->force)
        die("%s: holds %d checkpoint%s of another run (the newest %s): this run starts at step 0 "
            "and its checkpoints would mix with them; add --resume_from_checkpoint to continue "
            "that run, or -f to remove them first",
            o->output_dir, n, n == 1 ? "" : "s", newest);
    if (n) {
        if (ckpt_remove_all(o->output_dir, base, o->init_ckpt, &err) < 0) die("-f: %s", err.msg);
        info(2, "-f: removed %d checkpoint%s of an earlier run from %s", n, n == 1 ? "" : "s",
             o->output_dir);
        if (base == 0) { /* that run's log goes with them (phase 2 keeps phase 1's) */
            char log[4096];
            snprintf(log, sizeof log, "%s/log.jsonl", o->output_dir);
            if (unlink(log) && errno != ENOENT) die("-f: %s: %s", log, strerror(errno));
        }
    }
    if (o->skip_ckpt) return;
    char hf[4096];
    snprintf(hf, sizeof hf, "%s/hf", o->output_dir);
    if (export_hf_check(o->export_dir ? o->export_dir : hf, &err)) die("%s", err.msg);
}

/* A resume from a checkpoint at or past --max_steps (step steps of this
 * phase done): nothing is trained and no checkpoint written; an export
 * written after that checkpoint is left as it is, a missing or older one
 * (a run stopped or failed, a full disk, between its last checkpoint and
 * its export; another run's) is written from the checkpoint, its model
 * card without the last step's losses (they are in log.jsonl). One line
 * says which. */
static void run_nothing_left(TrainRun *r, int64_t step) {
    TrainOpts *o = r->o;
    if (!r->lead) return;
    char hf[4096];
    snprintf(hf, sizeof hf, "%s/hf", o->output_dir);
    const char *edir = o->export_dir ? o->export_dir : hf;
    char model[4096 + 32];
    snprintf(model, sizeof model, "%s/model.safetensors", edir);
    char what[64];
    snprintf(what, sizeof what, "step %" PRId64 "%s >= --max_steps %d", step,
             o->phase2 ? " of phase 2" : "", o->max_steps);
    struct stat ms, cs;
    int current =
        stat(model, &ms) == 0 && stat(r->done_ckpt, &cs) == 0 &&
        (ms.st_mtim.tv_sec > cs.st_mtim.tv_sec ||
         (ms.st_mtim.tv_sec == cs.st_mtim.tv_sec && ms.st_mtim.tv_nsec >= cs.st_mtim.tv_nsec));
    if (current || o->skip_ckpt) {
        info(2, "%s: checkpoint at %s: nothing to train (the export in %s is left as it is)",
             r->done_ckpt, what, edir);
        return;
    }
    int missing = access(model, F_OK) != 0;
    run_write_export(r, NAN, NAN, NAN);
    info(2, "%s: checkpoint at %s: nothing to train; its Hugging Face export, %s, written in %s",
         r->done_ckpt, what, missing ? "missing" : "older than the checkpoint", edir);
}

int train_main(TrainOpts *o, TrainBackendOpen open) {
    TrainRun r = {.o = o};
    run_setup(&r, open);
    if (r.be.rank == 0 && r.vocab_lines) {
        char up[64] = "";
        if (r.vocab_lines != r.cfg.vocab_size)
            snprintf(up, sizeof up, " (%ld rounded up to a multiple of 8)", r.vocab_lines);
        warn("%s has %ld tokens, %s says vocab_size %ld: the model takes the vocabulary's size, "
             "%d%s",
             o->vocab, r.vocab_lines, o->config, r.config_vocab, r.cfg.vocab_size, up);
    }
    if (o->eval_file) {
        run_eval(o, &r.be, &r.m, r.special, &r.err);
        run_free(&r);
        return 0;
    }
    r.lead = r.be.rank == 0;
    DataOpts dopts = {
        o->input_dir, o->seed,          r.be.rank,   r.be.world, o->batch / o->accum,
        o->max_pred,  r.cfg.vocab_size, o->max_seq,  o->dynamic, r.special[0],
        r.special[1], r.special[2],     o->bin_size, 0,          r.cfg.max_position_embeddings};
    if (data_open(&r.data, &dopts, &r.err)) die("%s", r.err.msg);
    r.base = o->phase2 ? o->phase1_end : 0;
    if (r.lead) claim_output_dir(o, r.base);
    int64_t step = run_resume(&r);
    if (r.done_ckpt) {
        run_nothing_left(&r, step);
        free(r.done_ckpt);
        data_close(r.data);
        run_free(&r);
        return 0;
    }
    r.be.from_host(r.be.ctx);
    if (r.lead) info(3, "backend: %s", r.be.name);
    if (r.lead) run_log_open(&r, step);
    r.tty = r.lead && isatty(2) && display_level >= 2;
    double t0 = now_sec();
    step = run_steps(&r, step, t0);
    run_export(&r, step, t0);
    if (r.log && fclose(r.log)) die("%s: write error: %s", r.log_path, strerror(errno));
    data_close(r.data);
    run_free(&r);
    return 0;
}

/* ---- the C backend ---- */

typedef struct CpuCtx {
    Bert *m;
    Optim *opt;
    TrainStats st;
    int micro;
    char name[64];
} CpuCtx;

static void cpu_zero_grad(void *p) {
    CpuCtx *c = p;
    bert_zero_grad(c->m);
    c->st = (TrainStats){0};
    c->micro = 0;
}

static void cpu_micro_step(void *p, const BertBatch *b, float scale, int dropout, uint64_t key) {
    CpuCtx *c = p;
    BertLoss l;
    c->m->dropout = dropout, c->m->dropout_key = key;
    bert_forward(c->m, b, &l, NULL, NULL);
    bert_backward(c->m, scale);
    c->m->dropout = 0;
    c->st.loss += l.total * scale, c->st.mlm += l.mlm * scale, c->st.nsp += l.nsp * scale;
    c->st.masked += l.masked, c->st.mlm_correct += l.mlm_correct,
        c->st.nsp_correct += l.nsp_correct;
    c->st.rows += b->B;
}

static void cpu_opt_step(void *p, float lr) {
    CpuCtx *c = p;
    optim_step(c->opt, c->m, lr);
    c->st.grad_norm = c->opt->last_grad_norm;
}

static void cpu_stats(void *p, TrainStats *s) { *s = ((CpuCtx *)p)->st; }

static void cpu_eval(void *p, const BertBatch *b, BertLoss *l) {
    bert_forward(((CpuCtx *)p)->m, b, l, NULL, NULL);
}

static void cpu_nothing(void *p) { (void)p; }

static void cpu_allgather(void *p, const int64_t *mine, int n, int64_t *all) {
    (void)p;
    memcpy(all, mine, (size_t)n * sizeof *all);
}

static void cpu_close(void *p) { free(p); }

int cpu_backend_open(TrainBackend *be, Bert *m, Optim *opt, const TrainOpts *o, Err *err) {
    (void)err;
    bert_set_threads(o->threads);
    CpuCtx *c = xcalloc(1, sizeof *c);
    c->m = m, c->opt = opt;
    snprintf(c->name, sizeof c->name, "CPU, %d threads", o->threads > 0 ? o->threads : cli_ncpus());
    *be = (TrainBackend){
        c->name,   0,        1,           c,           cpu_zero_grad, cpu_micro_step, cpu_opt_step,
        cpu_stats, cpu_eval, cpu_nothing, cpu_nothing, cpu_allgather, cpu_close,      NULL};
    return 0;
}
