/* train_bert_cpu.c - BERT pretraining on the CPU: NVIDIA run_pretraining.py's
 * loop and options over train/bert.c, optim.c, data.c and ckpt.c. */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bert.h"
#include "ckpt.h"
#include "cli.h"
#include "data.h"
#include "io.h"
#include "optim.h"

static void usage(void) {
    printf("Usage: train_bert_cpu --input_dir DIR --config_file FILE --output_dir DIR [OPTIONS]\n"
           "Pretrain BERT (masked LM + next sentence) on the masked-LM HDF5 files of DIR\n"
           "(hdf5gen's or create_pretraining_data.py's), as NVIDIA's run_pretraining.py\n"
           "does, on the CPU. One JSON line per optimizer step on stdout; checkpoints\n"
           "and the Hugging Face export in the output directory.\n\n"
           "Options (run_pretraining.py's names; dashes work too):\n"
           "  --input_dir DIR                 the *training* files of DIR (required)\n"
           "  --config_file FILE              bert_config.json (required); vocab_size is\n"
           "                                  rounded up to a multiple of 8 as NVIDIA does\n"
           "  --output_dir DIR                checkpoints ckpt_<step>.wbckpt (last 3 kept),\n"
           "                                  hf/ at the end (required)\n"
           "  --vocab_file FILE               vocab.txt: must fit the config's vocab_size;\n"
           "                                  copied into the export\n"
           "  --train_batch_size N            sequences per optimizer step (32)\n"
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
           "  --init_checkpoint FILE          start from these weights (fresh optimizer and\n"
           "                                  step count: phase 2 after phase 1)\n"
           "  --resume_from_checkpoint        continue from the newest complete checkpoint in\n"
           "                                  output_dir (weights, optimizer, step, data)\n"
           "  --phase2                        with --init_checkpoint: say so in the log\n"
           "  --phase1_end_step N             (accepted for run_pretraining.py scripts)\n"
           "  --num_steps_per_checkpoint N    100\n"
           "  --stop_at_step N                checkpoint and exit after step N (a batch job's\n"
           "                                  time slice; the schedule still runs to max_steps;\n"
           "                                  --resume_from_checkpoint continues exactly)\n"
           "  --log_freq N                    a JSON line every N steps (1)\n"
           "  --seed N                        initial weights, file and row order, dynamic\n"
           "                                  masking (42)\n"
           "  --no_dynamic_mask               refuse files without masks instead of masking\n"
           "                                  them on the fly\n"
           "  --export_hf DIR                 where the Hugging Face export goes (output_dir/hf)\n"
           "  --eval_file FILE                no training: the losses of the model (its\n"
           "                                  --init_checkpoint or newest checkpoint) on the\n"
           "                                  first train_batch_size rows of FILE, in file\n"
           "                                  order, as one batch; one JSON line\n"
           "  -j, --threads N                 threads (default: all cores; results do not\n"
           "                                  depend on it)\n"
           "  -q, --quiet / -v, --verbose     fewer / more messages\n"
           "  -h, --help, -V, --version\n\n"
           "Exit status: 0 ok; 1 a data, checkpoint or write error; 2 a bad option, a bad\n"
           "or missing config, or a vocabulary that does not fit it.\n");
    exit(0);
}

typedef struct Opts {
    const char *input_dir, *config, *output_dir, *vocab, *init_ckpt, *export_dir, *eval_file;
    int batch, accum, max_steps, max_seq, max_pred, ckpt_every, log_freq, resume, phase2, dynamic, threads, stop_at;
    double lr, warmup, weight_decay;
    uint64_t seed;
    OptKind opt;
} Opts;

enum {
    O_INPUT = 256, O_CONFIG, O_OUTPUT, O_VOCAB, O_BATCH, O_ACCUM, O_LR, O_WARMUP, O_STEPS, O_SEQ, O_PRED, O_OPT,
    O_WD, O_INIT, O_RESUME, O_PHASE2, O_P1END, O_CKPT, O_LOG, O_SEED, O_NODYN, O_EXPORT, O_STOP, O_EVAL
};

static long count_lines(const char *path, Err *err) {
    Buf b = {0};
    if (read_file(path, &b, err)) return -1;
    long n = 0;
    for (size_t i = 0; i < b.len; i++) n += b.data[i] == '\n';
    if (b.len && b.data[b.len - 1] != '\n') n++;
    buf_free(&b);
    return n;
}

/* keep the newest 3 checkpoints */
static void prune(const char *dir, int64_t step, int every) {
    for (int k = 3; k < 6; k++) {
        int64_t s = step - (int64_t)k * every;
        if (s <= 0) break;
        char p[4096];
        snprintf(p, sizeof p, "%s/ckpt_%" PRId64 ".wbckpt", dir, s);
        unlink(p);
    }
}

int main(int argc, char **argv) {
    cli_init(argv[0]);
    Opts o = {.batch = 32, .accum = 1, .max_steps = 1000, .max_pred = 80, .ckpt_every = 100, .log_freq = 1,
              .dynamic = 1, .lr = 5e-5, .warmup = 0.01, .weight_decay = 0.01, .seed = 42, .opt = OPT_LAMB};
    static const struct option lo[] = {
        {"input_dir", 1, 0, O_INPUT}, {"input-dir", 1, 0, O_INPUT}, {"config_file", 1, 0, O_CONFIG},
        {"config-file", 1, 0, O_CONFIG}, {"output_dir", 1, 0, O_OUTPUT}, {"output-dir", 1, 0, O_OUTPUT},
        {"vocab_file", 1, 0, O_VOCAB}, {"vocab-file", 1, 0, O_VOCAB}, {"train_batch_size", 1, 0, O_BATCH},
        {"train-batch-size", 1, 0, O_BATCH}, {"gradient_accumulation_steps", 1, 0, O_ACCUM},
        {"gradient-accumulation-steps", 1, 0, O_ACCUM}, {"learning_rate", 1, 0, O_LR}, {"learning-rate", 1, 0, O_LR},
        {"warmup_proportion", 1, 0, O_WARMUP}, {"warmup-proportion", 1, 0, O_WARMUP}, {"max_steps", 1, 0, O_STEPS},
        {"max-steps", 1, 0, O_STEPS}, {"max_seq_length", 1, 0, O_SEQ}, {"max-seq-length", 1, 0, O_SEQ},
        {"max_predictions_per_seq", 1, 0, O_PRED}, {"max-predictions-per-seq", 1, 0, O_PRED},
        {"optimizer", 1, 0, O_OPT}, {"weight_decay", 1, 0, O_WD}, {"weight-decay", 1, 0, O_WD},
        {"init_checkpoint", 1, 0, O_INIT}, {"init-checkpoint", 1, 0, O_INIT},
        {"resume_from_checkpoint", 0, 0, O_RESUME}, {"resume-from-checkpoint", 0, 0, O_RESUME},
        {"phase2", 0, 0, O_PHASE2}, {"phase1_end_step", 1, 0, O_P1END}, {"phase1-end-step", 1, 0, O_P1END},
        {"num_steps_per_checkpoint", 1, 0, O_CKPT}, {"num-steps-per-checkpoint", 1, 0, O_CKPT},
        {"log_freq", 1, 0, O_LOG}, {"log-freq", 1, 0, O_LOG}, {"seed", 1, 0, O_SEED},
        {"no_dynamic_mask", 0, 0, O_NODYN}, {"no-dynamic-mask", 0, 0, O_NODYN}, {"export_hf", 1, 0, O_EXPORT},
        {"export-hf", 1, 0, O_EXPORT}, {"stop_at_step", 1, 0, O_STOP}, {"eval_file", 1, 0, O_EVAL}, {"eval-file", 1, 0, O_EVAL}, {"stop-at-step", 1, 0, O_STOP},
        {"threads", 1, 0, 'j'}, CLI_LONGOPTS_COMMON};
    CliCommon cc;
    cli_common_init(&cc);
    int c;
    while ((c = getopt_long(argc, argv, ":j:qvhV", lo, NULL)) != -1) {
        switch (c) {
        case O_INPUT: o.input_dir = optarg; break;
        case O_CONFIG: o.config = optarg; break;
        case O_OUTPUT: o.output_dir = optarg; break;
        case O_VOCAB: o.vocab = optarg; break;
        case O_BATCH: o.batch = (int)cli_parse_int(optarg, "--train_batch_size", 1, 1 << 24); break;
        case O_ACCUM: o.accum = (int)cli_parse_int(optarg, "--gradient_accumulation_steps", 1, 1 << 24); break;
        case O_LR: o.lr = cli_parse_double(optarg, "--learning_rate"); break;
        case O_WARMUP: o.warmup = cli_parse_double(optarg, "--warmup_proportion"); break;
        case O_STEPS: o.max_steps = (int)cli_parse_int(optarg, "--max_steps", 1, 1 << 30); break;
        case O_SEQ: o.max_seq = (int)cli_parse_int(optarg, "--max_seq_length", 0, 1 << 20); break;
        case O_PRED: o.max_pred = (int)cli_parse_int(optarg, "--max_predictions_per_seq", 1, 1 << 16); break;
        case O_OPT:
            if (!strcmp(optarg, "lamb")) o.opt = OPT_LAMB;
            else if (!strcmp(optarg, "adamw")) o.opt = OPT_ADAMW;
            else cli_bad_usage("--optimizer %s: lamb or adamw", optarg);
            break;
        case O_WD: o.weight_decay = cli_parse_double(optarg, "--weight_decay"); break;
        case O_INIT: o.init_ckpt = optarg; break;
        case O_RESUME: o.resume = 1; break;
        case O_PHASE2: o.phase2 = 1; break;
        case O_P1END: (void)cli_parse_int(optarg, "--phase1_end_step", 0, 1 << 30); break;
        case O_CKPT: o.ckpt_every = (int)cli_parse_int(optarg, "--num_steps_per_checkpoint", 1, 1 << 30); break;
        case O_LOG: o.log_freq = (int)cli_parse_int(optarg, "--log_freq", 1, 1 << 30); break;
        case O_SEED: {
            uint64_t s;
            if (cli_parse_u64(optarg, &s)) cli_bad_usage("--seed %s: not a non-negative integer", optarg);
            o.seed = s;
            break;
        }
        case O_NODYN: o.dynamic = 0; break;
        case O_EXPORT: o.export_dir = optarg; break;
        case O_EVAL: o.eval_file = optarg; break;
        case O_STOP: o.stop_at = (int)cli_parse_int(optarg, "--stop_at_step", 1, 1 << 30); break;
        case 'h': usage(); break;
        default: cli_common_opt(&cc, c, optarg, argv, "CPU reference trainer"); break;
        }
    }
    if (optind < argc) cli_bad_usage("unexpected argument '%s'", argv[optind]);
    if (!o.eval_file && (!o.input_dir || !o.config || !o.output_dir))
        cli_bad_usage("--input_dir, --config_file and --output_dir are required");
    if (o.eval_file && (!o.config || (!o.init_ckpt && !(o.resume && o.output_dir))))
        cli_bad_usage("--eval_file needs --config_file and --init_checkpoint (or --resume_from_checkpoint --output_dir)");
    if (o.batch % o.accum)
        cli_bad_usage("--train_batch_size %d is not a multiple of --gradient_accumulation_steps %d", o.batch, o.accum);
    if (!(o.warmup >= 0 && o.warmup <= 1)) cli_bad_usage("--warmup_proportion %g: must be in [0, 1]", o.warmup);
    if (o.resume && o.init_ckpt) cli_bad_usage("--resume_from_checkpoint and --init_checkpoint exclude each other");
    bert_set_threads(cc.nthreads);

    Err err;
    BertConfig cfg;
    if (bert_config_load(&cfg, o.config, &err)) die_code(2, "%s", err.msg);
    int given_vocab = cfg.vocab_size;
    if (cfg.vocab_size % 8) cfg.vocab_size += 8 - cfg.vocab_size % 8; /* run_pretraining.py does this */
    if (o.vocab) {
        long lines = count_lines(o.vocab, &err);
        if (lines < 0) die_code(2, "%s", err.msg);
        if (lines > cfg.vocab_size)
            die_code(2, "%s: %ld tokens, but %s says vocab_size %d (the model needs at least %ld; %ld is a multiple of 8)",
                     o.vocab, lines, o.config, given_vocab, lines, (lines + 7) / 8 * 8);
    }
    Bert m;
    if (bert_create(&m, &cfg, &err)) die_code(2, "%s: %s", o.config, err.msg);
    bert_init_weights(&m, o.seed);
    OptimConfig oc;
    optim_config_default(&oc, o.opt);
    oc.weight_decay = (float)o.weight_decay;
    Optim opt;
    optim_init(&opt, &oc, &m);

    if (o.eval_file) {
        char path[4096];
        const char *ck = o.init_ckpt;
        if (!ck) {
            int r = ckpt_latest(o.output_dir, path, sizeof path, &err);
            if (r <= 0) die("%s", r < 0 ? err.msg : "no checkpoint to evaluate");
            ck = path;
        }
        if (ckpt_load(ck, &m, NULL, NULL, &err)) die("%s", err.msg);
        DataOpts eo = {NULL, o.seed, 0, 1, o.batch, o.max_pred, cfg.vocab_size, o.max_seq, o.dynamic, 101, 102, 103};
        Data *ed;
        BertBatch b;
        BertLoss l;
        if (data_open_file(&ed, &eo, o.eval_file, &err) || data_next(ed, &b, &err)) die("%s", err.msg);
        bert_forward(&m, &b, &l, NULL, NULL);
        printf("{\"eval_loss\": %.6f, \"mlm_loss\": %.6f, \"nsp_loss\": %.6f, \"rows\": %d, \"masked\": %d}\n", l.total,
               l.mlm, l.nsp, b.B, l.masked);
        data_close(ed);
        optim_free(&opt);
        bert_free(&m);
        return 0;
    }

    DataOpts dopts = {o.input_dir, o.seed, 0, 1, o.batch / o.accum, o.max_pred, cfg.vocab_size, o.max_seq, o.dynamic,
                      101, 102, 103};
    Data *data;
    if (data_open(&data, &dopts, &err)) die("%s", err.msg);
    if (make_dirs(o.output_dir, &err)) die("%s", err.msg);

    int64_t step = 0;
    if (o.resume) {
        char path[4096];
        int r = ckpt_latest(o.output_dir, path, sizeof path, &err);
        if (r < 0) die("%s", err.msg);
        if (r == 0) info(2, "no checkpoint in %s: starting from step 0", o.output_dir);
        else {
            CkptInfo ci;
            if (ckpt_load(path, &m, &opt, &ci, &err) || data_seek(data, ci.data, &err)) die("%s", err.msg);
            step = ci.step;
            info(2, "resumed from %s at step %" PRId64, path, step);
        }
    } else if (o.init_ckpt) {
        if (ckpt_load(o.init_ckpt, &m, NULL, NULL, &err)) die("%s", err.msg);
        info(2, "weights from %s%s", o.init_ckpt, o.phase2 ? " (phase 2)" : "");
    }

    int tty = isatty(2) && display_level >= 2;
    double t0 = now_sec(), tlast = t0;
    int64_t seqs_since = 0;
    for (step = step + 1; step <= o.max_steps; step++) {
        bert_zero_grad(&m);
        double tot = 0, mlm = 0, nsp = 0;
        int64_t masked = 0, correct = 0, nspc = 0, rows = 0;
        for (int a = 0; a < o.accum; a++) {
            BertBatch b;
            if (data_next(data, &b, &err)) die("%s", err.msg);
            BertLoss l;
            bert_forward(&m, &b, &l, NULL, NULL);
            bert_backward(&m, 1.0f / (float)o.accum);
            tot += l.total / o.accum, mlm += l.mlm / o.accum, nsp += l.nsp / o.accum;
            masked += l.masked, correct += l.mlm_correct, nspc += l.nsp_correct, rows += b.B;
        }
        float lr = poly_warmup_lr(step, (float)o.lr, (float)o.warmup, o.max_steps);
        optim_step(&opt, &m, lr);
        seqs_since += rows;
        double now = now_sec();
        if (step % o.log_freq == 0 || step == o.max_steps) {
            printf("{\"step\": %" PRId64 ", \"loss\": %.6f, \"mlm_loss\": %.6f, \"nsp_loss\": %.6f, \"mlm_acc\": %.4f, "
                   "\"nsp_acc\": %.4f, \"lr\": %.6g, \"grad_norm\": %.5g, \"seq_per_s\": %.2f}\n",
                   step, tot, mlm, nsp, masked ? (double)correct / masked : 0.0, rows ? (double)nspc / rows : 0.0, lr,
                   opt.last_grad_norm, seqs_since / fmax(now - tlast, 1e-9));
            fflush(stdout);
            tlast = now;
            seqs_since = 0;
        }
        if (tty) {
            double per = (now - t0) / (double)step;
            fprintf(stderr, "\rstep %" PRId64 "/%d  loss %.4f  %.1f s/step  ETA %.0f s   ", step, o.max_steps, tot,
                    per, per * (o.max_steps - step));
        }
        int stop = step == o.stop_at && step < o.max_steps;
        if (step % o.ckpt_every == 0 || step == o.max_steps || stop) {
            char path[4096];
            snprintf(path, sizeof path, "%s/ckpt_%" PRId64 ".wbckpt", o.output_dir, step);
            CkptInfo ci = {step, data_state(data), o.seed};
            if (ckpt_save(path, &m, &opt, &ci, &err)) die("%s", err.msg);
            prune(o.output_dir, step, o.ckpt_every);
        }
        if (stop) break;
    }
    if (tty) fprintf(stderr, "\r%60s\r", "");
    if (step <= o.max_steps) {
        info(2, "stopped at step %" PRId64 " of %d (--stop_at_step); resume with --resume_from_checkpoint", step,
             o.max_steps);
    } else {
        char hf[4096];
        snprintf(hf, sizeof hf, "%s/hf", o.output_dir);
        const char *edir = o.export_dir ? o.export_dir : hf;
        if (export_hf(edir, &m, o.vocab, &err)) die("%s", err.msg);
        info(2, "%d steps, %.1f s; Hugging Face export in %s", o.max_steps, now_sec() - t0, edir);
    }
    data_close(data);
    optim_free(&opt);
    bert_free(&m);
    return 0;
}
