/* hdf5gen - shard text into NVIDIA's masked-LM HDF5 files.
 *
 *   hdf5gen --vocab vocab.txt -o shard_0.hdf5 shard_0.txt
 *   hdf5gen --vocab vocab.txt --dupe-factor 5 -j 16 -o hdf5/ sharded/
 *   hdf5gen --vocab vocab.txt --prep-root $BERT_PREP_WORKING_DIR sharded/wikicorpus_en
 *
 * create_pretraining_data.py with its driver (bertPrep create_hdf5_files):
 * every input shard gives one HDF5 file whose datasets equal the
 * original's for the same shard, vocabulary and seed (instances.h,
 * mlmfile.h). Shards run in parallel (-j), or one subset per process under
 * a batch system (--shard-index/--shard-count, or MPI's rank and size).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cli.h"
#include "hdf5gen/h5file.h"
#include "hdf5gen/instances.h"
#include "common/io.h"
#include "hdf5gen/mlmfile.h"
#include "tokenize/wordpiece.h"

static void usage(void) {
    printf(
        "Usage: %s --vocab FILE [OPTIONS] -o OUT SHARD...\n"
        "Turn BERT-format shards (one sentence per line, a blank line between documents,\n"
        "as shard_split writes them) into masked-LM + next-sentence HDF5 files, one per\n"
        "shard, with the six datasets of NVIDIA's create_pretraining_data.py (input_ids,\n"
        "input_mask, segment_ids, masked_lm_positions, masked_lm_ids,\n"
        "next_sentence_labels; gzip level 4). By default the data equals what the original\n"
        "(DeepLearningExamples 4733603) writes for the same shard, vocabulary and seed.\n\n"
        "Options (the original's underscore spellings work too, e.g. --max_seq_length):\n"
        "  --vocab FILE                  WordPiece vocab.txt, or Hugging Face's\n"
        "                                tokenizer.json of a WordPiece model, whose\n"
        "                                normalization is then the default (required;\n"
        "                                --vocab-file)\n"
        "  --max-seq-length N            tokens per instance (default 128)\n"
        "  --max-predictions-per-seq N   masked positions per instance (default 20)\n"
        "  --masked-lm-prob P            share of tokens masked (default 0.15)\n"
        "  --short-seq-prob P            share of shorter instances (default 0.1)\n"
        "  --dupe-factor N               passes over the documents (default 10, the\n"
        "                                original's; bertPrep and the Hungarian scripts pass 5)\n"
        "  --random-seed N               seed; every shard uses the same (default 12345)\n"
        "  --do-lower-case [0|1]         1 (default; a tokenizer.json: its lowercase):\n"
        "                                lower-case; 0: keep case (the\n"
        "                                original lower-cases anyway)\n"
        "  --strip-accents 0|1           1: drop accents (NFD, then the Mn marks); 0: keep\n"
        "                                them, where accented letters are letters of their\n"
        "                                own (default: as --do-lower-case, as BertTokenizer's\n"
        "                                strip_accents=None)\n"
        "  --whole-word-mask             mask whole words (a word and its ## pieces)\n"
        "  --no-mask                     no masking: plain sequences, masked_lm_* all 0\n"
        "                                (for dynamic masking in the trainer)\n"
        "  --nsp 0|1                     0: one segment per instance, label 0 (MLM only)\n"
        "  -o, --output OUT              a file for one SHARD; a directory (created) for\n"
        "                                several, or when OUT ends in '/': SHARD.txt gives\n"
        "                                OUT/SHARD.hdf5\n"
        "  -P, --prep-root DIR           write into bertPrep's directory instead:\n"
        "                                DIR/hdf5_lower_case_<d>[_strip_accents_<a>]_\n"
        "                                seq_len_<L>_max_pred_<P>_masked_lm_prob_<p>_\n"
        "                                random_seed_<s>_dupe_factor_<f>/\n"
        "                                <dataset>/ (dataset: --dataset, or the shard names'\n"
        "                                part before _training_/_test_)\n"
        "  --dataset NAME                the last directory with --prep-root\n"
        "  --input-file PATH             the original's single input: a file, or a directory\n"
        "                                whose *.txt files (sorted by name) are read as one\n"
        "                                stream into the one output file -o\n"
        "  --shard-index I --shard-count N\n"
        "                                process only the shards k with k %% N == I (one job of\n"
        "                                a batch array); under mpirun the MPI rank and size\n"
        "                                are used when these are not given\n"
        "  --skip-existing               leave shards whose output exists (finished files\n"
        "                                only ever appear whole) and do the rest\n"
        "  --deflate-level N             0 (default): our run-length + Huffman deflate\n"
        "                                encoder, ~4x faster than libdeflate at level 4, files\n"
        "                                ~7 %% larger; 1..12: libdeflate at that level (4 =\n"
        "                                NVIDIA's). Any gzip reader reads both; the filter\n"
        "                                records level 4 (NVIDIA's) for 0, else min(N, 9)\n"
        "  -j, --threads N               threads (default: the usable CPUs): shards run in\n"
        "                                parallel, and one shard's reading, masking and\n"
        "                                compression use the rest\n"
        "      --in-memory               hold each shard's tokens and instances in memory,\n"
        "                                not in temporary files: no copies through the\n"
        "                                page cache (faster), about 1.2 bytes per byte of\n"
        "                                each shard being made\n"
        "      --tmp-dir DIR             where a shard's tokens and instances wait for the\n"
        "                                write, in files deleted at once (default: $TMPDIR,\n"
        "                                else the output's directory; at most about 9\n"
        "                                times the text of each shard being made, 2.6\n"
        "                                times its HDF5 file)\n"
        "      --memory SIZE             run only as many shards at once as fit in SIZE\n"
        "                                (K/M/G; default: half the memory of the machine or\n"
        "                                of the cgroup), by the estimate below; the threads\n"
        "                                left go to each shard's own work. A shard bigger\n"
        "                                than SIZE still runs, alone\n"
        "      --nocache                 drop each shard from the page cache as it is read,\n"
        "                                and each HDF5 file once it is on disk, for the next\n"
        "                                files to reuse the memory (the workflows pass it)\n"
        "  -f, --force                   replace existing output files (without it, an\n"
        "                                output that appears while the shard is made is\n"
        "                                kept and the shard fails)\n"
        "      --max-line-bytes N        longest line of a shard or the vocabulary (64M)\n"
        "  -q, --quiet / -v, --verbose   fewer / more messages (-v: a line per shard with\n"
        "                                its read / build / write times)\n"
        "  -h, --help, -V, --version\n\n"
        "Shards that fail (unreadable, no documents) are reported and the others are\n"
        "still written. Memory: a shard's tokens and instances wait in temporary files\n"
        "(--tmp-dir), so a shard being made holds about 0.1 + 0.02 x dupe_factor bytes\n"
        "per input byte (the row order, sentence lengths) and ~6 MB of buffers, plus\n"
        "~20 MB fixed.\n"
        "One run at a time writes into an output directory: a second one is refused,\n"
        "naming the first one's process (the parts of one --shard-count job share it).\n"
        "Exit status: 0 ok; 1 a shard failed or a write error (no partial file is left),\n"
        "or the output directory in use by another run; 2 a bad option, an unreadable\n"
        "vocabulary or one without [CLS]/[SEP]/[MASK], an existing output without -f,\n"
        "or an output that is one of the inputs.\n",
        progname);
}

enum {
    O_VOCAB = 256,
    O_SEQ,
    O_PRED,
    O_MLM,
    O_SHORT,
    O_DUPE,
    O_SEED,
    O_LOWER,
    O_STRIP,
    O_WWM,
    O_NOMASK,
    O_NSP,
    O_DATASET,
    O_INPUT,
    O_OUTFILE,
    O_SHIDX,
    O_SHCNT,
    O_SKIP,
    O_BERTMODEL,
    O_LEVEL,
    O_STRICT,
    O_MEMORY,
    O_TMPDIR,
    O_INMEM,
    O_NOCACHE
};

static const struct option longopts[] = {
    {"vocab", 1, 0, O_VOCAB},
    {"vocab-file", 1, 0, O_VOCAB},
    {"vocab_file", 1, 0, O_VOCAB},
    {"max-seq-length", 1, 0, O_SEQ},
    {"max_seq_length", 1, 0, O_SEQ},
    {"max-predictions-per-seq", 1, 0, O_PRED},
    {"max_predictions_per_seq", 1, 0, O_PRED},
    {"masked-lm-prob", 1, 0, O_MLM},
    {"masked_lm_prob", 1, 0, O_MLM},
    {"short-seq-prob", 1, 0, O_SHORT},
    {"short_seq_prob", 1, 0, O_SHORT},
    {"dupe-factor", 1, 0, O_DUPE},
    {"dupe_factor", 1, 0, O_DUPE},
    {"random-seed", 1, 0, O_SEED},
    {"random_seed", 1, 0, O_SEED},
    {"seed", 1, 0, O_SEED},
    {"do-lower-case", 2, 0, O_LOWER},
    {"do_lower_case", 2, 0, O_LOWER},
    {"strip-accents", 1, 0, O_STRIP},
    {"strip_accents", 1, 0, O_STRIP},
    {"whole-word-mask", 0, 0, O_WWM},
    {"do_whole_word_mask", 0, 0, O_WWM},
    {"no-mask", 0, 0, O_NOMASK},
    {"nsp", 1, 0, O_NSP},
    {"prep-root", 1, 0, 'P'},
    {"dataset", 1, 0, O_DATASET},
    {"input-file", 1, 0, O_INPUT},
    {"input_file", 1, 0, O_INPUT},
    {"output-file", 1, 0, 'o'},
    {"output_file", 1, 0, 'o'},
    {"bert_model", 1, 0, O_BERTMODEL},
    {"bert-model", 1, 0, O_BERTMODEL},
    {"shard-index", 1, 0, O_SHIDX},
    {"shard-count", 1, 0, O_SHCNT},
    {"skip-existing", 0, 0, O_SKIP},
    {"deflate-level", 1, 0, O_LEVEL},
    {"strict", 0, 0, O_STRICT},
    {"memory", 1, 0, O_MEMORY},
    {"tmp-dir", 1, 0, O_TMPDIR},
    {"in-memory", 0, 0, O_INMEM},
    {"nocache", 0, 0, O_NOCACHE},
    {"threads", 1, 0, 'j'},
    CLI_LONGOPTS_COMMON,
};

/* Python's str() of a float: the shortest repr that reads back the same,
 * with ".0" on integral values (0.15, 0.1, 1.0, 1e-05). */
static void py_float_str(double v, char *out, size_t cap) {
    for (int p = 1; p <= 17; p++) {
        snprintf(out, cap, "%.*g", p, v);
        if (strtod(out, NULL) == v) break;
    }
    if (!strpbrk(out, ".eni")) strncat(out, ".0", cap - strlen(out) - 1);
}

/* One unit of work: the inputs read as one stream, and the output file. */
typedef struct Job {
    char **inputs;
    int ninputs;
    char *output;
    const char *label; /* for messages: the first input */
    int active;        /* this process writes it (not another batch job's, not skipped) */
    /* results */
    int failed;
    Err err;
    uint64_t bytes, lines, docs, instances, tokens, masked, random_next, hdf5_bytes;
    double seconds, t_read, t_build; /* whole job; reading, building (the rest is writing) */
} Job;

typedef struct Run {
    const WordPiece *wp;
    const char *tmp_dir; /* --tmp-dir, or NULL */
    int in_memory;       /* --in-memory: nothing in temporary files */
    InstOpts io;
    MlmFileOpts fo;
    Job *jobs;
    int njobs;
    atomic_int next;
    int threads_per_job;
    /* progress over all jobs */
    pthread_mutex_t plock;
    Progress prog;
    atomic_uint_fast64_t read_bytes;
    atomic_int done_jobs;
} Run;

typedef struct ReadCb {
    Run *run;
    uint64_t last;
} ReadCb;

static void on_read(void *arg, uint64_t bytes, uint64_t lines) {
    ReadCb *cb = arg;
    Run *r = cb->run;
    uint64_t total = atomic_fetch_add(&r->read_bytes, bytes - cb->last) + (bytes - cb->last);
    cb->last = bytes;
    if (pthread_mutex_trylock(&r->plock) == 0) {
        progress_update(&r->prog, total, total, (uint64_t)atomic_load(&r->done_jobs),
                        "shards done");
        pthread_mutex_unlock(&r->plock);
    }
    (void)lines;
}

static void run_job(Run *r, Job *j) {
    double t0 = now_sec();
    InstOpts io = r->io;
    io.threads = r->threads_per_job;
    ReadCb cb = {r, 0};
    io.on_read = on_read;
    io.on_read_arg = &cb;
    /* the tokens and instances go to temporary files: --tmp-dir, $TMPDIR,
     * else beside the output, which has room for more than they take */
    char *outdir = path_dir(j->output);
    io.spill = !r->in_memory;
    io.tmp_label = j->output;
    io.tmp_dir = r->tmp_dir ? r->tmp_dir : tmp_dir_or(outdir);
    InstDocs d = {0};
    InstSet s = {0};
    if (inst_docs_read(&d, r->wp, j->inputs, j->ninputs, &io, &j->err)) goto fail;
    j->t_read = now_sec() - t0;
    j->bytes = d.bytes;
    j->lines = d.lines;
    j->docs = d.ndoc;
    if (d.ndoc == 0) {
        err_set(&j->err, "%s: no documents (an empty shard gives no instances; nothing written)",
                j->label);
        goto fail;
    }
    if (inst_build(&s, &d, r->wp, &io, &j->err)) goto fail;
    if (io.spill) { /* the spilled instances carry their tokens */
        inst_docs_free(&d);
        s.docs = NULL;
    }
    j->t_build = now_sec() - t0 - j->t_read;
    if (s.n == 0) {
        err_set(&j->err, "%s: no instances (nothing written)", j->label);
        goto fail;
    }
    MlmFileOpts fo = r->fo;
    fo.threads = r->threads_per_job;
    if (mlmfile_write(&s, &fo, j->output, &j->hdf5_bytes, &j->err)) goto fail;
    j->instances = s.st.instances;
    j->tokens = s.st.tokens;
    j->masked = s.st.masked;
    j->random_next = s.st.random_next;
    inst_set_free(&s);
    inst_docs_free(&d);
    free(outdir);
    j->seconds = now_sec() - t0;
    info(3,
         "%s: %llu documents, %llu instances, %.1f MB -> %s (%.1f MB), %.2f s (read %.2f, build "
         "%.2f, write %.2f)",
         j->label, (unsigned long long)j->docs, (unsigned long long)j->instances, j->bytes / 1e6,
         j->output, j->hdf5_bytes / 1e6, j->seconds, j->t_read, j->t_build,
         j->seconds - j->t_read - j->t_build);
    atomic_fetch_add(&r->done_jobs, 1);
    return;
fail:
    j->failed = 1;
    inst_docs_free(&d);
    inst_set_free(&s);
    free(outdir);
    atomic_fetch_add(&r->done_jobs, 1);
}

static void *worker(void *arg) {
    Run *r = arg;
    PageCache behind = {.fd = -1};
    for (;;) {
        int k = atomic_fetch_add(&r->next, 1);
        if (k >= r->njobs) break;
        if (!r->jobs[k].active) continue;
        run_job(r, &r->jobs[k]);
        /* --nocache: the HDF5 file leaves the page cache once this worker
         * has written its next one */
        if (r->io.nocache && !r->jobs[k].failed)
            pagecache_hand(&behind, open(r->jobs[k].output, O_RDONLY));
    }
    pagecache_hand(&behind, -1);
    return NULL;
}

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular *.txt files of dir, sorted, appended to (*v, *n). */
static int list_txt(const char *dir, char ***v, int *n, Err *err) {
    DIR *d = opendir(dir);
    if (!d) return err_set(err, "%s: %s", dir, strerror(errno));
    struct dirent *e;
    int first = *n;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".txt") != 0) continue;
        size_t pn = strlen(dir) + len + 2;
        char *p = xmalloc(pn);
        snprintf(p, pn, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(p);
            continue;
        }
        *v = xrealloc(*v, (size_t)(*n + 1) * sizeof **v);
        (*v)[(*n)++] = p;
    }
    closedir(d);
    if (*n > first) qsort(*v + first, (size_t)(*n - first), sizeof **v, cmp_str);
    return 0;
}

static const char *base_name(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* OUTDIR/BASE with .txt replaced by .hdf5 (or .hdf5 appended). */
static char *out_name(const char *dir, const char *input) {
    const char *b = base_name(input);
    size_t len = strlen(b);
    if (len > 4 && strcmp(b + len - 4, ".txt") == 0) len -= 4;
    size_t n = strlen(dir) + len + 8;
    char *p = xmalloc(n);
    snprintf(p, n, "%s/%.*s.hdf5", dir, (int)len, b);
    return p;
}

/* The dataset name bertPrep uses: the shard name before _training_ / _test_. */
static char *dataset_of(const char *input) {
    const char *b = base_name(input);
    const char *t = strstr(b, "_training_");
    if (!t) t = strstr(b, "_test_");
    if (!t) return NULL;
    char *s = xmalloc((size_t)(t - b) + 1);
    memcpy(s, b, (size_t)(t - b));
    s[t - b] = '\0';
    return s;
}

/* MPI rank and size from the launchers' environment (Open MPI, MPICH/Intel
 * MPI/PMI, MVAPICH). Returns 1 when found. */
static int mpi_env(long *rank, long *size) {
    static const char *pairs[][2] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                     {"PMI_RANK", "PMI_SIZE"},
                                     {"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"}};
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        const char *r = getenv(pairs[i][0]), *s = getenv(pairs[i][1]);
        if (r && s && *r && *s) {
            char *e1, *e2;
            *rank = strtol(r, &e1, 10);
            *size = strtol(s, &e2, 10);
            if (!*e1 && !*e2 && *size >= 1 && *rank >= 0 && *rank < *size) return 1;
        }
    }
    return 0;
}

/* ---- options ---- */

typedef struct Config {
    CliCommon cc;
    InstOpts io;
    const char *vocab, *prep_root, *dataset, *input_file;
    int lower, strip, skip_existing, level; /* strip: --strip-accents, -1: as lower */
    uint64_t memory;                        /* --memory, 0: the default */
    const char *tmp_dir;                    /* --tmp-dir, NULL: the default */
    int in_memory;                          /* --in-memory */
    long shard_index, shard_count;          /* -1: all shards (no batch system) */
    char **shards;                          /* the SHARD arguments */
    int nshards;
} Config;

/* --random-seed: the original takes abs() of a negative seed (Python's
 * seeding). */
static uint64_t parse_seed(const char *arg) {
    long long v;
    char *e;
    errno = 0;
    v = strtoll(arg, &e, 10);
    if (errno || e == arg || *e) cli_bad_usage("--random-seed: '%s' is not an integer", arg);
    return v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
}

/* The options that go together or exclude each other, and the batch part
 * from MPI's environment when --shard-index is not given. Exits 2. */
static void check_args(Config *cfg) {
    Err err;
    if (!cfg->vocab) cli_bad_usage("--vocab FILE is required (the WordPiece vocab.txt)");
    if (inst_opts_check(&cfg->io, &err)) cli_bad_usage("%s", err.msg);
    if ((cfg->shard_index >= 0) != (cfg->shard_count >= 0))
        cli_bad_usage("--shard-index and --shard-count go together");
    if (cfg->shard_index >= 0 && cfg->shard_index >= cfg->shard_count)
        cli_bad_usage("--shard-index %ld is not below --shard-count %ld", cfg->shard_index,
                      cfg->shard_count);
    if (cfg->shard_index < 0 && mpi_env(&cfg->shard_index, &cfg->shard_count))
        info(3, "MPI rank %ld of %ld", cfg->shard_index, cfg->shard_count);
    if (cfg->tmp_dir && !is_dir(cfg->tmp_dir))
        cli_bad_usage("--tmp-dir %s: not a directory", cfg->tmp_dir);
    if (cfg->prep_root && cfg->cc.output) cli_bad_usage("-o and --prep-root exclude each other");
    if (!cfg->prep_root && !cfg->cc.output)
        cli_bad_usage("no output: give -o OUT or --prep-root DIR");
    if (cfg->input_file && cfg->nshards)
        cli_bad_usage("--input-file and SHARD arguments exclude each other");
    if (!cfg->input_file && !cfg->nshards) cli_bad_usage("no input shards");
}

/* Options into cfg, checked. Returns 1 when -h printed the help (exit 0),
 * else 0; bad options exit 2. */
static int parse_args(int argc, char **argv, Config *cfg) {
    cli_common_init(&cfg->cc);
    inst_opts_default(&cfg->io);
    InstOpts *io = &cfg->io;
    cfg->vocab = cfg->prep_root = cfg->dataset = cfg->input_file = NULL;
    cfg->lower = -1, cfg->strip = -1, cfg->skip_existing = 0, cfg->level = 0;
    cfg->shard_index = -1, cfg->shard_count = -1;
    cfg->memory = 0;
    cfg->tmp_dir = NULL;
    cfg->in_memory = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:P:j:fqvhV", longopts, NULL)) != -1) {
        switch (c) {
        case O_VOCAB:
            cfg->vocab = optarg;
            break;
        case O_SEQ:
            io->max_seq_length = (int)cli_parse_int(optarg, "--max-seq-length", 5, 1000000);
            break;
        case O_PRED:
            io->max_predictions = (int)cli_parse_int(optarg, "--max-predictions-per-seq", 0, 65535);
            break;
        case O_MLM:
            io->masked_lm_prob = cli_parse_double(optarg, "--masked-lm-prob");
            break;
        case O_SHORT:
            io->short_seq_prob = cli_parse_double(optarg, "--short-seq-prob");
            break;
        case O_DUPE:
            io->dupe_factor = (int)cli_parse_int(optarg, "--dupe-factor", 1, 1000000);
            break;
        case O_SEED:
            io->seed = parse_seed(optarg);
            break;
        case O_LOWER:
            if (!optarg && optind < argc &&
                (!strcmp(argv[optind], "0") || !strcmp(argv[optind], "1")))
                optarg = argv[optind++]; /* "--do_lower_case 1", as bertPrep writes it */
            cfg->lower = optarg ? (int)cli_parse_int(optarg, "--do-lower-case", 0, 1) : 1;
            break;
        case O_STRIP:
            cfg->strip = (int)cli_parse_int(optarg, "--strip-accents", 0, 1);
            break;
        case O_WWM:
            io->whole_word = 1;
            break;
        case O_NOMASK:
            io->no_mask = 1;
            break;
        case O_NSP:
            io->no_nsp = !cli_parse_int(optarg, "--nsp", 0, 1);
            break;
        case 'P':
            cfg->prep_root = optarg;
            break;
        case O_DATASET:
            if (!*optarg || strchr(optarg, '/'))
                cli_bad_usage("--dataset: a name without '/', got '%s'", optarg);
            cfg->dataset = optarg;
            break;
        case O_INPUT:
            cfg->input_file = optarg;
            break;
        case O_BERTMODEL:
            break; /* the original's unused --bert_model */
        case O_SHIDX:
            cfg->shard_index = cli_parse_int(optarg, "--shard-index", 0, 100000000);
            break;
        case O_SHCNT:
            cfg->shard_count = cli_parse_int(optarg, "--shard-count", 1, 100000000);
            break;
        case O_SKIP:
            cfg->skip_existing = 1;
            break;
        case O_LEVEL:
            cfg->level = (int)cli_parse_int(optarg, "--deflate-level", 0, 12);
            break;
        case O_STRICT:
            io->strict = 1;
            break;
        case O_INMEM:
            cfg->in_memory = 1;
            break;
        case O_NOCACHE:
            io->nocache = 1;
            break;
        case O_TMPDIR:
            cfg->tmp_dir = optarg;
            break;
        case O_MEMORY:
            if (cli_parse_u64(optarg, &cfg->memory) || cfg->memory < (1u << 20))
                cli_bad_usage("--memory: expected a size of at least 1M (K/M/G suffixes), got '%s'",
                              optarg);
            break;
        case 'h':
            usage();
            return 1;
        default:
            cli_common_opt(&cfg->cc, c, optarg, argv, h5_versions());
        }
    }
    cfg->shards = argv + optind;
    cfg->nshards = argc - optind;
    check_args(cfg);
    return 0;
}

/* ---- the plan: inputs, outputs, jobs ---- */

typedef struct Plan {
    char **inputs; /* owned */
    int ninputs;
    char *outdir; /* NULL: one output file */
    Job *jobs;
    int njobs;
    int nactive, skipped, mine; /* this process's share */
} Plan;

/* The input files: --input-file, or the SHARD arguments, a directory
 * standing for its *.txt files. Exits 2 on a directory without any. */
static void collect_inputs(const Config *cfg, Plan *p) {
    Err err;
    if (cfg->input_file) {
        if (is_dir(cfg->input_file)) {
            if (list_txt(cfg->input_file, &p->inputs, &p->ninputs, &err))
                die_code(EXIT_USAGE, "%s", err.msg);
            if (!p->ninputs)
                die_code(EXIT_USAGE, "%s: no *.txt files in this directory", cfg->input_file);
        } else {
            p->inputs = xmalloc(sizeof *p->inputs);
            p->inputs[p->ninputs++] = xstrdup(cfg->input_file);
        }
        return;
    }
    for (int i = 0; i < cfg->nshards; i++) {
        const char *a = cfg->shards[i];
        if (is_dir(a)) {
            int before = p->ninputs;
            if (list_txt(a, &p->inputs, &p->ninputs, &err)) die_code(EXIT_USAGE, "%s", err.msg);
            if (p->ninputs == before)
                die_code(EXIT_USAGE, "%s: no *.txt files in this directory", a);
        } else {
            p->inputs = xrealloc(p->inputs, (size_t)(p->ninputs + 1) * sizeof *p->inputs);
            p->inputs[p->ninputs++] = xstrdup(a);
        }
    }
}

/* Where the outputs go: bertPrep's directory under --prep-root, the -o
 * directory, or the one -o file. Sets p->outdir (NULL for one file) and
 * returns 1 when all inputs go to one file. Exits 2 on a mismatch. */
static int plan_outputs(const Config *cfg, Plan *p) {
    const InstOpts *io = &cfg->io;
    const char *out = cfg->cc.output;
    int one_output = cfg->input_file != NULL;
    if (cfg->prep_root) {
        if (cfg->input_file) cli_bad_usage("--input-file writes one file: give -o FILE");
        char *ds = cfg->dataset ? xstrdup(cfg->dataset) : dataset_of(p->inputs[0]);
        if (!ds)
            cli_bad_usage("--prep-root: cannot tell the dataset from '%s'; give --dataset NAME",
                          p->inputs[0]);
        char pr[64];
        py_float_str(io->masked_lm_prob, pr, sizeof pr);
        /* the accent choice is named only where it differs from the case one */
        char acc[32] = "";
        if (cfg->strip >= 0 && cfg->strip != cfg->lower)
            snprintf(acc, sizeof acc, "_strip_accents_%d", cfg->strip);
        size_t n = strlen(cfg->prep_root) + strlen(ds) + 256;
        p->outdir = xmalloc(n);
        snprintf(p->outdir, n,
                 "%s/"
                 "hdf5_lower_case_%d%s_seq_len_%d_max_pred_%d_masked_lm_prob_%s_random_seed_%llu_"
                 "dupe_factor_%d/%s",
                 cfg->prep_root, cfg->lower, acc, io->max_seq_length, io->max_predictions, pr,
                 (unsigned long long)io->seed, io->dupe_factor, ds);
        free(ds);
        return one_output;
    }
    size_t ol = strlen(out);
    int dir_out = is_dir(out) || (ol && out[ol - 1] == '/') || p->ninputs > 1;
    if (one_output && dir_out && !(ol && out[ol - 1] == '/') && !is_dir(out)) dir_out = 0;
    if (one_output && dir_out)
        cli_bad_usage("--input-file writes one file, but -o %s is a directory", out);
    if (!strcmp(out, "-")) cli_bad_usage("HDF5 output needs a file name, not standard output");
    if (!dir_out) return 1;
    p->outdir = xstrdup(out);
    while (strlen(p->outdir) > 1 && p->outdir[strlen(p->outdir) - 1] == '/')
        p->outdir[strlen(p->outdir) - 1] = '\0';
    return one_output;
}

/* One job for the one output, or one per input in p->outdir (two inputs
 * that would write the same file exit 2). */
static void make_jobs(const Config *cfg, Plan *p, int one_output) {
    p->jobs = xcalloc((size_t)p->ninputs, sizeof *p->jobs);
    if (one_output) {
        p->jobs[0].inputs = p->inputs;
        p->jobs[0].ninputs = p->ninputs;
        p->jobs[0].label = p->inputs[0];
        p->jobs[0].output = xstrdup(cfg->cc.output);
        p->njobs = 1;
        return;
    }
    for (int i = 0; i < p->ninputs; i++) {
        Job *j = &p->jobs[p->njobs];
        j->inputs = &p->inputs[i];
        j->ninputs = 1;
        j->label = p->inputs[i];
        j->output = out_name(p->outdir, p->inputs[i]);
        for (int k = 0; k < p->njobs; k++)
            if (!strcmp(p->jobs[k].output, j->output))
                cli_bad_usage("%s and %s would both write %s", p->jobs[k].label, p->inputs[i],
                              j->output);
        p->njobs++;
    }
}

/* This process's share under a batch system; existing outputs refused up
 * front (exit 2), replaced with -f, or skipped. */
static void select_jobs(const Config *cfg, Plan *p) {
    for (int i = 0; i < p->njobs; i++) {
        if (cfg->shard_count > 0 && i % cfg->shard_count != cfg->shard_index) continue;
        p->mine++;
        struct stat st;
        Err err;
        if (output_not_input(p->jobs[i].output, &err)) die_code(EXIT_USAGE, "%s", err.msg);
        if (stat(p->jobs[i].output, &st) == 0) {
            if (cfg->skip_existing) {
                p->skipped++;
                continue;
            }
            if (!cfg->cc.force)
                die_code(EXIT_USAGE, "%s: already exists (use -f to overwrite, or --skip-existing)",
                         p->jobs[i].output);
        }
        p->jobs[i].active = 1;
        p->nactive++;
    }
}

/* The whole plan from the options. */
static void plan_make(const Config *cfg, Plan *p) {
    *p = (Plan){0};
    collect_inputs(cfg, p);
    Err err;
    for (int i = 0; i < p->ninputs; i++) /* no output may replace one of them */
        if (input_note(p->inputs[i], &err)) die("%s", err.msg);
    int one_output = plan_outputs(cfg, p);
    make_jobs(cfg, p, one_output);
    select_jobs(cfg, p);
}

static void plan_free(Plan *p) {
    for (int i = 0; i < p->njobs; i++)
        free(p->jobs[i].output);
    free(p->jobs);
    for (int i = 0; i < p->ninputs; i++)
        free(p->inputs[i]);
    free(p->inputs);
    free(p->outdir);
}

/* ---- running ---- */

/* The vocabulary (vocab.txt or tokenizer.json), with the special tokens
 * the instances need (exit 2 when it is unreadable or lacks one);
 * cfg->lower and cfg->strip become the normalization in use (a
 * tokenizer.json's unless given, a difference said). */
static WordPiece *load_vocab(Config *cfg) {
    Err err;
    Buf note = {0};
    int norm;
    WordPiece *wp = wp_open(cfg->vocab, cfg->lower, cfg->strip, &note, &norm, &err);
    if (!wp) die_code(EXIT_USAGE, "%s", err.msg);
    if (note.len) warn("%.*s", (int)note.len, note.data);
    buf_free(&note);
    cfg->lower = !!(norm & WP_LOWER), cfg->strip = !!(norm & WP_STRIP_ACCENTS);
    static const char *need[] = {"[CLS]", "[SEP]", "[MASK]"};
    for (int i = 0; i < 3; i++)
        if ((i < 2 || !cfg->io.no_mask) && wp_token_id(wp, need[i], strlen(need[i])) < 0)
            die_code(EXIT_USAGE, "%s: the vocabulary has no %s token", cfg->vocab, need[i]);
    return wp;
}

/* The memory this process may use: the machine's, or its cgroup's limit
 * where lower (v2 memory.max, v1 memory.limit_in_bytes, as a container
 * sees its own at the top of /sys/fs/cgroup). */
static uint64_t usable_memory(void) {
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    uint64_t m = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : UINT64_C(4) << 30;
    static const char *limits[] = {"/sys/fs/cgroup/memory.max",
                                   "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
        FILE *fp = fopen(limits[i], "r");
        unsigned long long v;
        if (!fp) continue;
        if (fscanf(fp, "%llu", &v) == 1 && v > 0 && v < m) m = v;
        fclose(fp);
    }
    return m;
}

/* The memory one shard of `bytes` input bytes takes (see the usage text):
 * its tokens and instances are in temporary files, so what stays is its
 * sentence lengths while reading (0.03 byte per input byte), per
 * dupe_factor pass the row order and the random next segments to read
 * (up to 0.02), and buffers that grow slowly with the shard (the write's
 * bands, the sort's buckets): measured 0.17 bytes per byte at 128/20 and
 * 0.2 at 512/80 (dupe 5, two shards of 10 MB against two of 40), and
 * 6 MB. With --in-memory the tokens (2 bytes per ~4.4 bytes of text) and
 * sentence index, about 0.5 byte per input byte, and per dupe_factor pass
 * the instances with their masks and the write's buffers, up to 0.16
 * (measured on 40 MB: 1.2 at 128/20, 1.07 at 512/80, dupe 5), and 4 MB. */
static uint64_t shard_memory(uint64_t bytes, const InstOpts *io, int in_memory) {
    if (in_memory)
        return (uint64_t)((double)bytes * (0.5 + 0.16 * io->dupe_factor)) + (UINT64_C(4) << 20);
    return (uint64_t)((double)bytes * (0.1 + 0.02 * io->dupe_factor)) + (UINT64_C(6) << 20);
}

/* How many shards run at once: as many as threads and shards allow, and as
 * the largest shard's estimate fits in the memory budget (at least one). */
static int parallel_shards(const Config *cfg, const Plan *p) {
    int nthreads = cfg->cc.nthreads;
    int n = nthreads < p->nactive ? nthreads : p->nactive;
    if (n < 1) n = 1;
    uint64_t budget = cfg->memory ? cfg->memory : usable_memory() / 2, largest = 0;
    for (int i = 0; i < p->njobs; i++)
        if (p->jobs[i].active) {
            uint64_t m = shard_memory(inputs_total_size(p->jobs[i].inputs, p->jobs[i].ninputs),
                                      &cfg->io, cfg->in_memory);
            if (m > largest) largest = m;
        }
    uint64_t fit = largest ? budget / largest : (uint64_t)n;
    if (fit < 1) fit = 1;
    if ((uint64_t)n > fit) {
        info(3, "%d shard%s at once (not %d): each needs up to %.0f MB of the %.0f MB (--memory)",
             (int)fit, fit == 1 ? "" : "s", n, largest / 1e6, budget / 1e6);
        n = (int)fit;
    }
    return n;
}

/* Run the active jobs of p on cfg->cc.nthreads threads: several shards at
 * once (as many as parallel_shards allows), the threads left over shared by
 * each shard's own work. Returns the wall time in seconds; each job records
 * its own result. */
static double run_jobs(const Config *cfg, Plan *p, const WordPiece *wp) {
    Err err;
    const InstOpts *io = &cfg->io;
    /* one run at a time in the output directory; the parts of one batch
     * job (--shard-count) share it, each writing its own files */
    if (p->outdir && p->nactive && output_dir_lock(p->outdir, cfg->shard_count > 0, &err))
        die("%s", err.msg);
    Run r = {0};
    r.wp = wp;
    r.tmp_dir = cfg->tmp_dir;
    r.in_memory = cfg->in_memory;
    r.io = *io;
    r.fo = (MlmFileOpts){io->max_seq_length, io->max_predictions, cfg->level, 1, cfg->cc.force};
    r.jobs = p->jobs;
    r.njobs = p->njobs;
    pthread_mutex_init(&r.plock, NULL);
    uint64_t total_in = 0;
    for (int i = 0; i < p->njobs; i++)
        if (p->jobs[i].active) total_in += inputs_total_size(p->jobs[i].inputs, p->jobs[i].ninputs);
    progress_init(&r.prog, total_in);
    int nthreads = cfg->cc.nthreads;
    int nworkers = parallel_shards(cfg, p);
    r.threads_per_job = nthreads / nworkers;
    if (r.threads_per_job < 1) r.threads_per_job = 1;
    double t0 = now_sec();
    if (nworkers == 1) {
        worker(&r);
    } else {
        pthread_t *th = xmalloc((size_t)nworkers * sizeof *th);
        for (int i = 0; i < nworkers; i++)
            if (pthread_create(&th[i], NULL, worker, &r)) die("cannot start a thread");
        for (int i = 0; i < nworkers; i++)
            pthread_join(th[i], NULL);
        free(th);
    }
    progress_done(&r.prog);
    return now_sec() - t0;
}

/* Each failed job's message, then the summary lines. Returns the number
 * of failed jobs. */
static int report(const Config *cfg, const Plan *p, double secs) {
    int failed = 0;
    uint64_t bytes = 0, insts = 0, tokens = 0, masked = 0, rnext = 0, hbytes = 0, docs = 0;
    for (int i = 0; i < p->njobs; i++) {
        const Job *j = &p->jobs[i];
        if (!j->active) continue;
        if (j->failed) {
            failed++;
            fprintf(stderr, "%s: %s\n", progname, j->err.msg);
            continue;
        }
        bytes += j->bytes, insts += j->instances, tokens += j->tokens, masked += j->masked;
        rnext += j->random_next, hbytes += j->hdf5_bytes, docs += j->docs;
        /* a random next sentence comes from another document of the shard:
         * with one, every pair is the actual next (NSP learns nothing) */
        if (j->docs < 2 && !cfg->io.no_nsp)
            warn("%s: 1 document: no random next sentence (NVIDIA's rule draws it from another "
                 "document of the shard), so next-sentence prediction learns nothing; give a "
                 "shard more documents (fewer shards)",
                 j->label);
    }
    char where[96] = "";
    if (cfg->shard_count > 0)
        snprintf(where, sizeof where, " (batch part %ld of %ld: %d of %d shards)", cfg->shard_index,
                 cfg->shard_count, p->mine, p->njobs);
    int nactive = p->nactive;
    info(2,
         "%d shard%s written%s, %llu documents, %.1f MB text -> %llu instances (%llu tokens, %.1f "
         "%% masked, "
         "%.1f %% random next), %.1f MB HDF5%s%s in %.2f s (%.2f MB/s, %.0f instances/s)",
         nactive - failed, nactive - failed == 1 ? "" : "s", where, (unsigned long long)docs,
         bytes / 1e6, (unsigned long long)insts, (unsigned long long)tokens,
         tokens ? 100.0 * masked / tokens : 0.0, insts ? 100.0 * rnext / insts : 0.0, hbytes / 1e6,
         p->outdir ? " in " : "", p->outdir ? p->outdir : "", secs,
         secs > 0 ? bytes / 1e6 / secs : 0.0, secs > 0 ? insts / secs : 0.0);
    if (p->skipped)
        info(2, "%d shard%s skipped: output exists", p->skipped, p->skipped == 1 ? "" : "s");
    if (failed) info(1, "%d of %d shard%s failed", failed, nactive, nactive == 1 ? "" : "s");
    return failed;
}

/* glibc's malloc raises its mmap threshold up to 32 MB each time a
 * mmapped block is freed, so after the first shard's big buffers (the
 * write's bands, growing token and row arrays) every later one comes from
 * the heap, which a run over hundreds of shards fragments: the peak grew
 * with the number of shards made (92 MB against 49 for two of the same
 * size). A fixed threshold keeps blocks of 256 KiB and more in their own
 * mappings, returned to the system when freed; the trim threshold
 * likewise gives the heap's free top back. */
static void malloc_setup(void) {
    mallopt(M_MMAP_THRESHOLD, 256 << 10);
    mallopt(M_TRIM_THRESHOLD, 1 << 20);
}

int main(int argc, char **argv) {
    malloc_setup();
    cli_init(argv[0]);
    Config cfg;
    if (parse_args(argc, argv, &cfg)) return EXIT_OK;
    WordPiece *wp = load_vocab(&cfg);
    Plan plan;
    plan_make(&cfg, &plan);
    double secs = run_jobs(&cfg, &plan, wp);
    int failed = report(&cfg, &plan, secs);
    wp_destroy(wp);
    plan_free(&plan);
    return failed ? EXIT_DATA : EXIT_OK;
}
