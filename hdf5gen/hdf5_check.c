/* hdf5_check - validate masked-LM HDF5 files and print their statistics.
 *
 *   hdf5_check --vocab vocab.txt hdf5/shard_0.hdf5 hdf5/shard_1.hdf5
 *   hdf5_check --dump shard_0.hdf5 > rows.txt
 *
 * Reads each file as NVIDIA's pretraining_dataset does and checks the
 * rules of mlmcheck.h; prints one summary per file and a total.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/cli.h"
#include "hdf5gen/mlmcheck.h"
#include "hdf5gen/h5file.h"
#include "tokenize/wordpiece.h"

static void usage(void) {
    printf("Usage: %s [OPTIONS] FILE...\n"
           "Check masked-LM HDF5 files (hdf5gen's, NVIDIA create_pretraining_data.py's) the\n"
           "way NVIDIA's run_pretraining.py reads them: the six datasets, their types and\n"
           "shapes, and every instance: [CLS]/[SEP] placement, input_mask and padding,\n"
           "segment ids, next-sentence label, masked positions (increasing, inside the\n"
           "sequence, zeros after them) and their ids, ids inside the vocabulary.\n"
           "Prints per file: instances, tokens, masked share (and what the masked positions\n"
           "hold), next-sentence balance (a warning when the random-next share is 20 points\n"
           "or more from 50 %%: a shard of one document has none), the share of [UNK] in\n"
           "the text (a warning above 1 %%: the vocabulary does not cover it), a histogram\n"
           "of sequence lengths.\n\n"
           "Options:\n"
           "  --vocab FILE   vocab.txt (or tokenizer.json): ids must be below its size;\n"
           "                 [CLS]/[SEP]/[MASK]/[UNK] ids from it (default: BERT's "
           "101/102/103/100, no range check)\n"
           "  --cls N, --sep N, --mask N, --unk N   the special ids without a vocabulary\n"
           "  --strict       other integer types than NVIDIA's are errors, not warnings\n"
           "  --dump         print every row on stdout, tab-separated: input_ids,\n"
           "                 segment_ids as 0/1 digits, masked_lm_positions, masked_lm_ids,\n"
           "                 next_sentence_label (unpadded)\n"
           "      --max-line-bytes N  longest line of --vocab (default 64M)\n"
           "  -q, --quiet    only errors; -v: also the histogram\n"
           "  -h, --help, -V, --version\n\n"
           "Exit status: 0 every file valid; 1 a violation (the message names the file and\n"
           "the instance; the other files are still checked), a file that is not\n"
           "self-contained (data in other files, external links, virtual datasets, filters\n"
           "but deflate/shuffle/fletcher32: never followed), or a damaged HDF5 file (its\n"
           "superblock or a dataset's shape does not fit the file's size, a chunk does not\n"
           "decompress; should the HDF5 library crash on one, the run ends there with\n"
           "\"FILE: damaged HDF5 file (the HDF5 library crashed reading it)\"); 2 a bad\n"
           "option, a missing or unreadable file, or a file that is not HDF5.\n",
           progname);
}

/* The [UNK] share above which a file's text is said to be badly covered by
 * its vocabulary (a vocabulary that fits its text stays far below it). */
#define UNK_WARN_SHARE 0.01

/* How far from one half the random-next share may be before a file is
 * said to teach next-sentence prediction little: create_pretraining_data.py
 * draws 50 % (NVIDIA's files: 49-56 %), so 20 points off, and beyond 3
 * standard deviations of the instance count (small files vary). */
#define NSP_WARN_POINTS 20.0

/* Warn when file's random-next share is far from 50 % (a file without
 * segment B, hdf5gen --nsp 0, has no next-sentence task). */
static void check_nsp(const char *file, const MlmCheckStats *s) {
    if (!s->instances || !s->with_b) return;
    double n = (double)s->instances, share = 100.0 * (double)s->random_next / n;
    double off = fabs(share - 50.0), sigma = 50.0 / sqrt(n);
    if (off <= NSP_WARN_POINTS || off <= 3 * sigma) return;
    warn("%s: random next %.1f %% of %llu instances, far from 50 %%: %s", file, share,
         (unsigned long long)s->instances,
         share < 50 ? "next-sentence prediction learns little (a shard of one document gives no "
                      "random next sentence: give each shard more documents)"
                    : "the next-sentence labels lean to random (a chunk of one sentence always "
                      "takes a random next one)");
}

/* One line of statistics for a file (or the total); unk: [UNK]'s id, or -1
 * (then no [UNK] share is printed). */
static void print_stats(const char *what, const MlmCheckStats *s, int32_t unk, int hist) {
    double t = s->tokens ? (double)s->tokens : 1, m = s->masked ? (double)s->masked : 1,
           n = s->instances ? (double)s->instances : 1;
    printf("%s: %llu instances, L %d, P %d, %llu tokens (%.1f per instance), %.2f %% masked "
           "([MASK] %.1f %%, kept %.1f %%, other %.1f %%), random next %.1f %%, with segment B "
           "%.1f %%, max id %d%s",
           what, (unsigned long long)s->instances, s->L, s->P, (unsigned long long)s->tokens,
           s->tokens / n, 100.0 * s->masked / t, 100.0 * s->masked_as_mask / m,
           100.0 * s->masked_kept / m, 100.0 * s->masked_other / m, 100.0 * s->random_next / n,
           100.0 * s->with_b / n, s->max_id, unk < 0 ? "\n" : "");
    if (unk >= 0) printf(", [UNK] %.2f %%\n", 100.0 * s->unk / t);
    if (hist && s->L) {
        printf("  length:");
        for (int b = 0; b < 8; b++)
            printf(" <=%d: %llu", (b + 1) * s->L / 8, (unsigned long long)s->hist[b]);
        printf("\n");
    }
}

/* The first failed write's errno (the reason a write error names). */
static int out_errno;

static void flush_out(void) {
    if (fflush(stdout) != 0 && !out_errno) out_errno = errno ? errno : EIO;
}

int main(int argc, char **argv) {
    cli_init(argv[0]);
    CliCommon cc;
    cli_common_init(&cc);
    MlmCheckOpts o = {0, 101, 102, 103, 100, 0, NULL};
    const char *vocab = NULL;
    int dump = 0;
    enum { O_VOCAB = 256, O_STRICT, O_DUMP, O_CLS, O_SEP, O_MASK, O_UNK };
    static const struct option longopts[] = {{"vocab", 1, 0, O_VOCAB}, {"strict", 0, 0, O_STRICT},
                                             {"dump", 0, 0, O_DUMP},   {"cls", 1, 0, O_CLS},
                                             {"sep", 1, 0, O_SEP},     {"mask", 1, 0, O_MASK},
                                             {"unk", 1, 0, O_UNK},     CLI_LONGOPTS_COMMON};
    int c;
    while ((c = getopt_long(argc, argv, ":qvhV", longopts, NULL)) != -1) {
        switch (c) {
        case O_VOCAB:
            vocab = optarg;
            break;
        case O_STRICT:
            o.strict = 1;
            break;
        case O_DUMP:
            dump = 1;
            break;
        case O_CLS:
            o.cls = (int32_t)cli_parse_int(optarg, "--cls", 0, INT32_MAX);
            break;
        case O_SEP:
            o.sep = (int32_t)cli_parse_int(optarg, "--sep", 0, INT32_MAX);
            break;
        case O_UNK:
            o.unk = (int32_t)cli_parse_int(optarg, "--unk", 0, INT32_MAX);
            break;
        case O_MASK:
            o.mask = (int32_t)cli_parse_int(optarg, "--mask", 0, INT32_MAX);
            break;
        case 'h':
            usage();
            return EXIT_OK;
        default:
            cli_common_opt(&cc, c, optarg, argv, h5_versions());
        }
    }
    if (optind >= argc) cli_bad_usage("no input files");
    Err err;
    if (vocab) {
        WordPiece *wp = wp_create(vocab, WP_UNCASED, &err);
        if (!wp) die_code(EXIT_USAGE, "%s", err.msg);
        o.vocab_size = (int32_t)wp_vocab_size(wp);
        o.cls = wp_token_id(wp, "[CLS]", 5);
        o.sep = wp_token_id(wp, "[SEP]", 5);
        o.mask = wp_token_id(wp, "[MASK]", 6);
        o.unk = wp_unk_id(wp) == WP_UNK_ABSENT ? -1 : wp_unk_id(wp);
        wp_destroy(wp);
        if (o.cls < 0 || o.sep < 0)
            die_code(EXIT_USAGE, "%s: the vocabulary has no %s token", vocab,
                     o.cls < 0 ? "[CLS]" : "[SEP]");
    }
    if (dump) o.dump = stdout;
    MlmCheckStats total = {0};
    int bad = 0, unreadable = 0, nfiles = argc - optind;
    for (int i = optind; i < argc; i++) {
        MlmCheckStats st = {0};
        int rc = mlmcheck_file(argv[i], &o, &st, &err);
        if (rc) {
            fprintf(stderr, "%s: %s\n", progname, err.msg);
            if (rc == -2)
                unreadable++;
            else
                bad++;
            continue;
        }
        if (!dump && display_level >= 2) print_stats(argv[i], &st, o.unk, display_level >= 3);
        if (o.unk >= 0 && st.tokens && (double)st.unk > UNK_WARN_SHARE * (double)st.tokens)
            warn("%s: [UNK] is %.2f %% of the tokens (above %.0f %%): the vocabulary does not "
                 "cover this text well",
                 argv[i], 100.0 * (double)st.unk / (double)st.tokens, 100 * UNK_WARN_SHARE);
        check_nsp(argv[i], &st);
        flush_out(); /* kept should the HDF5 library crash on a later file */
        total.instances += st.instances, total.tokens += st.tokens, total.masked += st.masked;
        total.unk += st.unk;
        total.masked_as_mask += st.masked_as_mask, total.masked_kept += st.masked_kept;
        total.masked_other += st.masked_other, total.random_next += st.random_next,
            total.with_b += st.with_b;
        for (int b = 0; b < 8; b++)
            total.hist[b] += st.hist[b];
        total.max_id = st.max_id > total.max_id ? st.max_id : total.max_id;
        total.L = st.L, total.P = st.P;
    }
    if (!dump && display_level >= 2 && nfiles > 1) print_stats("total", &total, o.unk, 0);
    if (bad || unreadable)
        info(1, "%d of %d file%s invalid%s", bad + unreadable, nfiles, nfiles == 1 ? "" : "s",
             unreadable ? " or unreadable" : "");
    else
        info(3, "%d file%s valid", nfiles, nfiles == 1 ? "" : "s");
    flush_out();
    if (ferror(stdout) || out_errno)
        die("standard output: write error: %s", strerror(out_errno ? out_errno : EIO));
    return unreadable ? EXIT_USAGE : bad ? EXIT_DATA : EXIT_OK;
}
