/* shard_split - BERT-format text into balanced training/test shard files.
 *
 *   shard_split [OPTIONS] -o DIR [INPUT...]
 *   sent_split -l en wiki.txt | shard_split --train 256 --test 256 -o sharded/wikicorpus_en
 *   shard_split --layout hu --train 50 -o formatted_text hu.filtered
 *
 * The sharding step of NVIDIA's bertPrep.py (TextSharding.py) and of the
 * HILBERT sharding.py, with their assignment of documents to shards and
 * their file names (shard.h). Inputs are indexed in one pass and copied
 * into the shards in a second, so memory does not grow with the corpus;
 * stdin and pipes are first copied to an unlinked temporary file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/io.h"
#include "shard/shard.h"

#define DEFAULT_SHARDS 256
#define DEFAULT_FRACTION 0.1

static void usage(void) {
    printf("Usage: %s [OPTIONS] -o DIR [INPUT...]\n"
           "Split BERT-format text (one sentence per line, a blank line between documents,\n"
           "as sent_split writes it) into shard files of whole documents, balanced by\n"
           "sentence count with the algorithm and file names of NVIDIA's TextSharding.py\n"
           "(bertPrep.py --action sharding) or of the HILBERT sharding.py. Reads stdin when\n"
           "no INPUT (or -) is given; stdin and pipes are first copied to a temporary file\n"
           "in $TMPDIR (default /tmp), removed at exit. Each shard file holds its documents'\n"
           "sentences one per line, each document followed by an empty line.\n\n"
           "Options:\n"
           "  -L, --layout L        nvidia (default): training and test shards,\n"
           "                          DIR/NAME_training_<i>.txt and DIR/NAME_test_<i>.txt\n"
           "                        hu: training shards only, DIR/NAME_training_<i>.txt\n"
           "                          (sharding.py writes formatted_text/formatted_text_...)\n"
           "  -n, --train N         training shards (default %d; also --num-shards, as\n"
           "                        sharding.py's --num_shards)\n"
           "  -t, --test M          test shards (default %d; 0: none; nvidia only)\n"
           "  -F, --test-fraction F share of sentences meant for the test shards (default\n"
           "                        %g as in bertPrep.py since July 2020; 0.2 before, at the\n"
           "                        commit 4733603 the Hungarian guide uses; nvidia only)\n"
           "      --fit-shards      fewer documents than shards: about four documents a\n"
           "                        shard instead of an error (test shards in proportion,\n"
           "                        one line says how many); enough documents: no change\n"
           "  -N, --name NAME       file name prefix (default wikicorpus_en, bertPrep's\n"
           "                        --dataset for Wikipedia; formatted_text with -L hu)\n"
           "  -o, --output DIR      output directory (required; created). bertPrep writes to\n"
           "                        $BERT_PREP_WORKING_DIR/sharded_training_shards_<N>_test_\n"
           "                        shards_<M>_fraction_<F>/<dataset>/ and its HDF5 step reads\n"
           "                        from there, so use that path to drop in (with N, M, F as\n"
           "                        given to bertPrep, e.g. ..._256_test_shards_256_fraction_0.1)\n"
           "  -f, --force           write into a DIR that is not empty: shards of the same\n"
           "                        names are replaced and NAME_training_/NAME_test_ files\n"
           "                        numbered beyond this run's counts are deleted\n"
           "      --nocache         drop each shard from the page cache once it is on disk\n"
           "                        (the run waits for the disk): for shards the next stage\n"
           "                        reads once, from disk (the workflows pass it)\n"
           "      --max-line-bytes N  longest input line (default 64M)\n"
           "  -q, --quiet           fewer messages; -v, --verbose: a summary line at the end\n"
           "                        (-vv: balancing details)\n"
           "  -h, --help            show this help; -V, --version: show the version\n\n"
           "Documents: nvidia: runs of non-blank lines, one sentence per line. hu: the\n"
           "sharding.py rule: a blank line ends a document, or, after another blank line,\n"
           "is an empty sentence of the next one. Sentences are written without leading and\n"
           "trailing white space. A document never spans two INPUT files.\n\n"
           "Where this differs from the originals (their assignment is kept otherwise):\n"
           "  - sharding.py drops the last document of a file that does not end with a\n"
           "    blank line; here it is kept (so the assignment can differ from theirs);\n"
           "  - when no document fits, the originals grow the nominal shard size by one\n"
           "    per pass, millions of passes with long documents; here it grows at once\n"
           "    to the size they would reach, with the same result;\n"
           "  - documents without sentences (only possible through the library) made\n"
           "    the originals loop forever; here they go to the training shards last;\n"
           "  - fewer documents than shards is an error naming both counts, not an\n"
           "    assertion; --test 0 is allowed (TextSharding.py needs a test shard);\n"
           "  - TextSharding.py splits one-article-per-line text with NLTK Punkt itself;\n"
           "    here the input is already split (sent_split), one sentence per line;\n"
           "  - shards appear only when all are complete (temp files, then rename);\n"
           "    without -f a shard file that appears meanwhile is kept and the run\n"
           "    fails with none of its shards in place; one run at a time writes into\n"
           "    DIR (a second one is refused, naming the first one's process).\n\n"
           "Exit status: 0 ok; 1 an unreadable input, fewer documents than shards, a\n"
           "write error, or DIR in use by another run; 2 a bad option, or DIR not empty\n"
           "without -f.\n\n"
           "Example:\n"
           "  sent_split -l en en.txt | %s -n 256 -t 256 -o sharded/wikicorpus_en\n",
           progname, DEFAULT_SHARDS, DEFAULT_SHARDS, DEFAULT_FRACTION, progname);
}

typedef struct Meter {
    Progress p;
    const char *what;
} Meter;

static void meter_cb(void *ctx, uint64_t bytes, uint64_t items) {
    Meter *m = ctx;
    progress_update(&m->p, bytes, bytes, items, m->what);
}

/* DIR exists and has an entry other than . and .. */
static int dir_has_entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    int any = 0;
    while (!any && (e = readdir(d)) != NULL)
        any = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return any;
}

/* An unlinked temporary file in $TMPDIR (or /tmp) for stdin and pipes. */
static FILE *open_spool(Err *err) {
    const char *dir = tmp_dir_or("/tmp");
    int fd = temp_fd(dir);
    if (fd < 0) {
        err_set(err, "%s: cannot create a temporary file: %s", dir, strerror(errno));
        return NULL;
    }
    FILE *fp = fdopen(fd, "w+b");
    if (!fp) err_set(err, "temporary file: %s", strerror(errno));
    return fp;
}

/* "min/median/max" of c[0..n) into out (median as Python prints it). */
static const char *spread(const uint64_t *c, uint32_t n, char *out, size_t cap) {
    uint64_t *v = xmalloc((n ? n : 1) * sizeof *v);
    memcpy(v, c, n * sizeof *v);
    for (uint32_t i = 1; i < n; i++) /* insertion sort: n is the shard count */
        for (uint32_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t t = v[j];
            v[j] = v[j - 1], v[j - 1] = t;
        }
    uint64_t m2 = n % 2 ? 2 * v[n / 2] : v[n / 2 - 1] + v[n / 2];
    snprintf(out, cap, "%llu/%llu%s/%llu", (unsigned long long)v[0], (unsigned long long)(m2 / 2),
             m2 % 2 ? ".5" : "", (unsigned long long)v[n - 1]);
    free(v);
    return out;
}

/* The options, with the defaults that depend on --layout filled in. */
typedef struct Config {
    CliCommon cc;
    ShardLayout layout;
    long ntrain, ntest;
    double fraction;
    const char *name;
    const char *dir; /* -o */
    int fit;         /* --fit-shards: fewer shards for fewer documents */
    int nocache;     /* --nocache: shard_write's SHARD_NOCACHE */
} Config;

/* Options into cfg, then the layout's defaults and the output directory's
 * checks. Returns 1 when -h printed the help (exit 0), else 0; bad options
 * and an unusable DIR exit 2. */
static int parse_args(int argc, char **argv, Config *cfg) {
    cli_common_init(&cfg->cc);
    cfg->layout = SHARD_NVIDIA;
    cfg->ntrain = DEFAULT_SHARDS, cfg->ntest = -1;
    cfg->fraction = -1;
    cfg->name = NULL;
    static const struct option longopts[] = {{"layout", required_argument, 0, 'L'},
                                             {"train", required_argument, 0, 'n'},
                                             {"num-shards", required_argument, 0, 'n'},
                                             {"test", required_argument, 0, 't'},
                                             {"test-fraction", required_argument, 0, 'F'},
                                             {"name", required_argument, 0, 'N'},
                                             {"fit-shards", no_argument, 0, 'X'},
                                             {"nocache", no_argument, 0, 'C'},
                                             CLI_LONGOPTS_COMMON};
    int c;
    while ((c = getopt_long(argc, argv, ":L:n:t:F:N:o:fqvhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'L':
            if (strcmp(optarg, "nvidia") == 0)
                cfg->layout = SHARD_NVIDIA;
            else if (strcmp(optarg, "hu") == 0)
                cfg->layout = SHARD_HU;
            else
                cli_bad_usage("--layout: expected nvidia or hu, got '%s'", optarg);
            break;
        case 'n':
            cfg->ntrain = cli_parse_int(optarg, "--train", 1, 100000000);
            break;
        case 't':
            cfg->ntest = cli_parse_int(optarg, "--test", 0, 100000000);
            break;
        case 'F':
            cfg->fraction = cli_parse_double(optarg, "--test-fraction");
            if (!(cfg->fraction >= 0 && cfg->fraction <= 1))
                cli_bad_usage("--test-fraction: %s is not in [0, 1]", optarg);
            break;
        case 'N':
            if (!*optarg || strchr(optarg, '/'))
                cli_bad_usage("--name: a file name prefix without '/', got '%s'", optarg);
            cfg->name = optarg;
            break;
        case 'X':
            cfg->fit = 1;
            break;
        case 'C':
            cfg->nocache = 1;
            break;
        case 'h':
            usage();
            return 1;
        default:
            cli_common_opt(&cfg->cc, c, optarg, argv, "");
        }
    }
    if (cfg->layout == SHARD_HU && ((cfg->ntest > 0) || cfg->fraction > 0))
        cli_bad_usage("--layout hu has no test shards (--test and --test-fraction are for nvidia)");
    if (cfg->ntest < 0) cfg->ntest = cfg->layout == SHARD_HU ? 0 : DEFAULT_SHARDS;
    if (cfg->fraction < 0) cfg->fraction = cfg->ntest ? DEFAULT_FRACTION : 0;
    if (!cfg->ntest) cfg->fraction = 0;
    if (!cfg->name) cfg->name = cfg->layout == SHARD_HU ? "formatted_text" : "wikicorpus_en";
    if (!cfg->cc.output || !*cfg->cc.output) cli_bad_usage("no output directory (-o DIR)");
    cfg->dir = cfg->cc.output;
    struct stat dst;
    if (stat(cfg->dir, &dst) == 0) {
        if (!S_ISDIR(dst.st_mode))
            die_code(EXIT_USAGE, "%s: exists and is not a directory", cfg->dir);
        if (!cfg->cc.force && dir_has_entries(cfg->dir))
            die_code(EXIT_USAGE, "%s: exists and is not empty (use -f to replace its shards)",
                     cfg->dir);
    }
    return 0;
}

/* The inputs of one run, open for the second pass: a regular file is
 * read again where it is, stdin and pipes from the spool. */
typedef struct Sources {
    int n;
    ShardInput *inputs;
    FILE **files; /* the regular files kept open (NULL: closed or spooled) */
    FILE *spool;
} Sources;

/* Pass 1: index every input names[0..n) into ix; stdin and pipes are
 * copied to the spool on the way. Dies on a read error. */
static void index_inputs(char **names, int n, ShardIndex *ix, Sources *src) {
    Err err;
    src->n = n;
    src->inputs = xcalloc((size_t)n, sizeof *src->inputs);
    src->files = xcalloc((size_t)n, sizeof *src->files);
    src->spool = NULL;
    Meter m = {.what = "documents"};
    progress_init(&m.p, inputs_total_size(names, n));
    for (int i = 0; i < n; i++) {
        const char *label = strcmp(names[i], "-") ? names[i] : "<stdin>";
        FILE *fp = xfopen_read(names[i], &err);
        if (!fp) die("%s", err.msg);
        struct stat st;
        FILE *copy = NULL;
        src->inputs[i].name = label;
        if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode)) {
            src->inputs[i].fd = fileno(fp);
            off_t at = lseek(src->inputs[i].fd, 0, SEEK_CUR); /* stdin may not start at 0 */
            src->inputs[i].base = at > 0 ? (uint64_t)at : 0;
            src->files[i] = fp;
        } else {
            if (!src->spool && !(src->spool = open_spool(&err))) die("%s", err.msg);
            if (fflush(src->spool) != 0) die("temporary file: write error: %s", strerror(errno));
            src->inputs[i].fd = fileno(src->spool);
            src->inputs[i].base = (uint64_t)ftello(src->spool);
            copy = src->spool;
            info(4, "%s: copied to a temporary file for the second pass", label);
        }
        if (shard_index_read(ix, fp, label, copy, meter_cb, &m, &err)) die("%s", err.msg);
        if (!src->files[i] && fp != stdin) fclose(fp);
    }
    if (src->spool && fflush(src->spool) != 0)
        die("temporary file: write error: %s", strerror(errno));
    progress_done(&m.p);
}

static void sources_close(Sources *src) {
    for (int i = 0; i < src->n; i++)
        if (src->files[i] && src->files[i] != stdin) fclose(src->files[i]);
    if (src->spool) fclose(src->spool);
    free(src->files), free(src->inputs);
}

/* Balance the indexed documents over the shards of cfg into plan (-vv:
 * the details). Dies when they do not fill the shards. */
static void balance(const Config *cfg, const ShardIndex *ix, ShardPlan *plan) {
    Err err;
    ShardSpec spec = {.ntrain = (uint32_t)cfg->ntrain,
                      .ntest = (uint32_t)cfg->ntest,
                      .test_fraction = cfg->fraction};
    if (cfg->fit && shard_fit(&spec, ix->ndocs)) {
        char test[64] = "";
        if (cfg->ntest) snprintf(test, sizeof test, " + %u test", spec.ntest);
        /* said even with -q: the shards are not those asked for */
        info(1, "%zu document%s for %ld shards: %u training%s shard%s instead%s (--fit-shards)",
             ix->ndocs, ix->ndocs == 1 ? "" : "s", cfg->ntrain + cfg->ntest, spec.ntrain, test,
             spec.ntrain + spec.ntest == 1 ? "" : "s",
             ix->ndocs >= 8 ? ", about four documents each" : "");
    }
    if (shard_balance(ix->nsent, ix->ndocs, &spec, plan, &err)) die("%s", err.msg);
    const ShardStats *bs = &plan->st;
    info(4,
         "nominal sentences per shard: training %llu -> %llu, test %llu -> %llu; %llu documents "
         "longer "
         "than that in the first pass; %llu passes (%llu empty ones not run); %llu empty documents",
         (unsigned long long)bs->nominal_train0, (unsigned long long)bs->nominal_train,
         (unsigned long long)bs->nominal_test0, (unsigned long long)bs->nominal_test,
         (unsigned long long)bs->oversize, (unsigned long long)bs->passes,
         (unsigned long long)bs->skipped, (unsigned long long)bs->empty_docs);
}

/* Pass 2: write the shard files into cfg->dir (created). Dies on failure. */
static void write_shards(const Config *cfg, const ShardIndex *ix, const Sources *src,
                         const ShardPlan *plan, ShardWriteStats *ws) {
    Err err;
    if (make_dirs(cfg->dir, &err)) die("%s", err.msg);
    Meter w = {.what = "shards"};
    uint64_t out_total = 0;
    for (size_t i = 0; i < ix->ndocs; i++)
        out_total += shard_doc_len(ix, (uint32_t)i) + 1;
    progress_init(&w.p, out_total);
    int flags = (cfg->cc.force ? SHARD_FORCE : 0) | (cfg->nocache ? SHARD_NOCACHE : 0);
    if (shard_write(ix, src->inputs, plan, cfg->dir, cfg->name, flags, meter_cb, &w, ws, &err))
        die("%s", err.msg);
    progress_done(&w.p);
    if (ws->removed)
        info(2, "%s: removed %llu shard files of an earlier run beyond this run's counts", cfg->dir,
             (unsigned long long)ws->removed);
}

/* The -v summary line. */
static void report(const Config *cfg, const ShardIndex *ix, const ShardPlan *plan,
                   const ShardWriteStats *ws, double secs) {
    char tr[96], te[96] = "";
    spread(plan->nsent, plan->ntrain, tr, sizeof tr);
    if (plan->ntest) {
        char sp[80];
        snprintf(te, sizeof te, ", test %s",
                 spread(plan->nsent + plan->ntrain, plan->ntest, sp, sizeof sp));
    }
    info(3,
         "%zu documents, %llu sentences, %.1f MB -> %u shards in %s (%u training, %u test); "
         "sentences per "
         "shard min/median/max: training %s%s; %.2f s",
         ix->ndocs, (unsigned long long)ix->sentences, (double)ws->bytes / 1e6,
         plan->ntrain + plan->ntest, cfg->dir, plan->ntrain, plan->ntest, tr, te, secs);
}

int main(int argc, char **argv) {
    cli_init(argv[0]);
    Config cfg;
    if (parse_args(argc, argv, &cfg)) return EXIT_OK;
    Err err;
    if (output_dir_lock(cfg.dir, 0, &err)) die("%s", err.msg); /* one run at a time in DIR */
    int nin = argc - optind;
    char *dash[] = {"-"};
    char **names = nin ? argv + optind : dash;
    if (!nin) nin = 1;
    double t0 = now_sec();
    ShardIndex ix;
    shard_index_init(&ix, cfg.layout);
    Sources src;
    index_inputs(names, nin, &ix, &src);
    ShardPlan plan;
    balance(&cfg, &ix, &plan);
    ShardWriteStats ws;
    write_shards(&cfg, &ix, &src, &plan, &ws);
    report(&cfg, &ix, &plan, &ws, now_sec() - t0);
    sources_close(&src);
    shard_plan_free(&plan);
    shard_index_free(&ix);
    return EXIT_OK;
}
