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
           "  - shards appear only when all are complete (temp files, then rename).\n\n"
           "Exit status: 0 ok; 1 an unreadable input, fewer documents than shards, or a\n"
           "write error; 2 a bad option, or DIR not empty without -f.\n\n"
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
    while (!any && (e = readdir(d)) != NULL) any = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return any;
}

/* An unlinked temporary file in $TMPDIR (or /tmp) for stdin and pipes. */
static FILE *open_spool(Err *err) {
    const char *tmp = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/shard_split.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        err_set(err, "%s: cannot create a temporary file: %s", path, strerror(errno));
        return NULL;
    }
    unlink(path);
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

int main(int argc, char **argv) {
    cli_init(argv[0]);
    CliCommon cc;
    cli_common_init(&cc);
    ShardLayout layout = SHARD_NVIDIA;
    long ntrain = DEFAULT_SHARDS, ntest = -1;
    double fraction = -1;
    const char *name = NULL;
    static const struct option longopts[] = {
        {"layout", required_argument, 0, 'L'},        {"train", required_argument, 0, 'n'},
        {"num-shards", required_argument, 0, 'n'},    {"test", required_argument, 0, 't'},
        {"test-fraction", required_argument, 0, 'F'}, {"name", required_argument, 0, 'N'},
        CLI_LONGOPTS_COMMON};
    int c;
    while ((c = getopt_long(argc, argv, ":L:n:t:F:N:o:fqvhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'L':
            if (strcmp(optarg, "nvidia") == 0) layout = SHARD_NVIDIA;
            else if (strcmp(optarg, "hu") == 0) layout = SHARD_HU;
            else cli_bad_usage("--layout: expected nvidia or hu, got '%s'", optarg);
            break;
        case 'n': ntrain = cli_parse_int(optarg, "--train", 1, 100000000); break;
        case 't': ntest = cli_parse_int(optarg, "--test", 0, 100000000); break;
        case 'F':
            fraction = cli_parse_double(optarg, "--test-fraction");
            if (!(fraction >= 0 && fraction <= 1)) cli_bad_usage("--test-fraction: %s is not in [0, 1]", optarg);
            break;
        case 'N':
            if (!*optarg || strchr(optarg, '/')) cli_bad_usage("--name: a file name prefix without '/', got '%s'", optarg);
            name = optarg;
            break;
        case 'h': usage(); return EXIT_OK;
        default: cli_common_opt(&cc, c, optarg, argv, "");
        }
    }
    if (layout == SHARD_HU && ((ntest > 0) || fraction > 0))
        cli_bad_usage("--layout hu has no test shards (--test and --test-fraction are for nvidia)");
    if (ntest < 0) ntest = layout == SHARD_HU ? 0 : DEFAULT_SHARDS;
    if (fraction < 0) fraction = ntest ? DEFAULT_FRACTION : 0;
    if (!ntest) fraction = 0;
    if (!name) name = layout == SHARD_HU ? "formatted_text" : "wikicorpus_en";
    if (!cc.output || !*cc.output) cli_bad_usage("no output directory (-o DIR)");
    const char *dir = cc.output;
    struct stat dst;
    if (stat(dir, &dst) == 0) {
        if (!S_ISDIR(dst.st_mode)) die_code(EXIT_USAGE, "%s: exists and is not a directory", dir);
        if (!cc.force && dir_has_entries(dir))
            die_code(EXIT_USAGE, "%s: exists and is not empty (use -f to replace its shards)", dir);
    }

    /* pass 1: index every input; stdin and pipes go through the spool */
    int nin = argc - optind;
    char *dash[] = {"-"};
    char **names = nin ? argv + optind : dash;
    if (!nin) nin = 1;
    double t0 = now_sec();
    Err err;
    ShardIndex ix;
    shard_index_init(&ix, layout);
    ShardInput *inputs = xcalloc((size_t)nin, sizeof *inputs);
    FILE **files = xcalloc((size_t)nin, sizeof *files);
    FILE *spool = NULL;
    Meter m = {.what = "documents"};
    progress_init(&m.p, inputs_total_size(names, nin));
    for (int i = 0; i < nin; i++) {
        const char *label = strcmp(names[i], "-") ? names[i] : "<stdin>";
        FILE *fp = xfopen_read(names[i], &err);
        if (!fp) die("%s", err.msg);
        struct stat st;
        FILE *copy = NULL;
        inputs[i].name = label;
        if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode)) {
            inputs[i].fd = fileno(fp);
            off_t at = lseek(inputs[i].fd, 0, SEEK_CUR); /* stdin may not start at 0 */
            inputs[i].base = at > 0 ? (uint64_t)at : 0;
            files[i] = fp;
        } else {
            if (!spool && !(spool = open_spool(&err))) die("%s", err.msg);
            if (fflush(spool) != 0) die("temporary file: write error: %s", strerror(errno));
            inputs[i].fd = fileno(spool);
            inputs[i].base = (uint64_t)ftello(spool);
            copy = spool;
            info(4, "%s: copied to a temporary file for the second pass", label);
        }
        if (shard_index_read(&ix, fp, label, copy, meter_cb, &m, &err)) die("%s", err.msg);
        if (!files[i] && fp != stdin) fclose(fp);
    }
    if (spool && fflush(spool) != 0) die("temporary file: write error: %s", strerror(errno));
    progress_done(&m.p);

    /* balance */
    ShardSpec spec = {.ntrain = (uint32_t)ntrain, .ntest = (uint32_t)ntest, .test_fraction = fraction};
    ShardPlan plan;
    if (shard_balance(ix.nsent, ix.ndocs, &spec, &plan, &err)) die("%s", err.msg);
    const ShardStats *bs = &plan.st;
    info(4, "nominal sentences per shard: training %llu -> %llu, test %llu -> %llu; %llu documents longer "
            "than that in the first pass; %llu passes (%llu empty ones not run); %llu empty documents",
         (unsigned long long)bs->nominal_train0, (unsigned long long)bs->nominal_train,
         (unsigned long long)bs->nominal_test0, (unsigned long long)bs->nominal_test,
         (unsigned long long)bs->oversize, (unsigned long long)bs->passes, (unsigned long long)bs->skipped,
         (unsigned long long)bs->empty_docs);

    /* pass 2: write */
    if (make_dirs(dir, &err)) die("%s", err.msg);
    Meter w = {.what = "shards"};
    uint64_t out_total = 0;
    for (size_t i = 0; i < ix.ndocs; i++) out_total += (ix.len[i] & ~SHARD_LEN_STRIP) + 1;
    progress_init(&w.p, out_total);
    ShardWriteStats ws;
    if (shard_write(&ix, inputs, &plan, dir, name, cc.force, meter_cb, &w, &ws, &err)) die("%s", err.msg);
    progress_done(&w.p);
    if (ws.removed) info(2, "%s: removed %llu shard files of an earlier run beyond this run's counts", dir,
                         (unsigned long long)ws.removed);

    char tr[96], te[96] = "";
    spread(plan.nsent, plan.ntrain, tr, sizeof tr);
    if (plan.ntest) {
        char sp[80];
        snprintf(te, sizeof te, ", test %s", spread(plan.nsent + plan.ntrain, plan.ntest, sp, sizeof sp));
    }
    info(3, "%zu documents, %llu sentences, %.1f MB -> %u shards in %s (%u training, %u test); sentences per "
            "shard min/median/max: training %s%s; %.2f s",
         ix.ndocs, (unsigned long long)ix.sentences, (double)ws.bytes / 1e6, plan.ntrain + plan.ntest, dir,
         plan.ntrain, plan.ntest, tr, te, now_sec() - t0);

    for (int i = 0; i < nin; i++)
        if (files[i] && files[i] != stdin) fclose(files[i]);
    if (spool) fclose(spool);
    free(files), free(inputs);
    shard_plan_free(&plan);
    shard_index_free(&ix);
    return EXIT_OK;
}
