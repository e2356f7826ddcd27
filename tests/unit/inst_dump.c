/* inst_dump.c - test driver: print the instances of hdf5gen/instances.h as
 * text, one output row per line, for comparisons with the original's HDF5.
 *
 *   make build/tests/inst_dump
 *   build/tests/inst_dump --vocab data/bert/vocab.txt --seq 128 --dupe 5 shard.txt
 *
 * Each line holds five tab-separated fields, exactly the unpadded content
 * of one row of create_pretraining_data.py's HDF5 datasets:
 *   input_ids (space-separated)  segment_ids (a string of 0/1 digits)
 *   masked_lm_positions  masked_lm_ids  next_sentence_label
 * With --tokens the ids of the first and fourth field are written as their
 * vocabulary tokens. --time prints the read and build times (wall clock
 * and process CPU time) on stderr,
 * --stats the counts.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/common.h"
#include "hdf5gen/instances.h"
#include "tokenize/wordpiece.h"

static void usage(FILE *fp) {
    fprintf(fp, "Usage: inst_dump [OPTIONS] FILE...\n"
                "  --vocab FILE     vocabulary (default: the shipped data/bert/vocab.txt)\n"
                "  --seq N          max_seq_length (128)\n"
                "  --max-pred N     max_predictions_per_seq (20)\n"
                "  --mlm-prob P     masked_lm_prob (0.15)\n"
                "  --short-prob P   short_seq_prob (0.1)\n"
                "  --dupe N         dupe_factor (10)\n"
                "  --seed N         random_seed (12345)\n"
                "  --cased          keep case and accents\n"
                "  --whole-word     whole-word masking\n"
                "  --no-mask        no masking\n"
                "  --no-nsp         single segments, no next-sentence pairs\n"
                "  --strict         invalid UTF-8 is an error\n"
                "  -j N             tokenization threads (1)\n"
                "  --tokens         print tokens instead of ids\n"
                "  --time           read/build seconds on stderr\n"
                "  --stats          counts on stderr\n");
}

/* CPU seconds used by the process (all threads). */
static double cpu_sec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void put_tok(const WordPiece *wp, int32_t id, int tokens) {
    if (tokens) {
        size_t n;
        const char *t = wp_id_token(wp, id, &n);
        fwrite(t ? t : "?", 1, t ? n : 1, stdout);
    } else {
        printf("%d", (int)id);
    }
}

int main(int argc, char **argv) {
    progname = "inst_dump";
    InstOpts o;
    inst_opts_default(&o);
    const char *vocab = WB_DATADIR "/bert/vocab.txt";
    int cased = 0, tokens = 0, timing = 0, stats = 0;
    enum {
        O_VOCAB = 256,
        O_SEQ,
        O_PRED,
        O_MLM,
        O_SHORT,
        O_DUPE,
        O_SEED,
        O_CASED,
        O_WWM,
        O_NOMASK,
        O_NONSP,
        O_STRICT,
        O_TOKENS,
        O_TIME,
        O_STATS
    };
    static const struct option longopts[] = {{"vocab", 1, 0, O_VOCAB},
                                             {"seq", 1, 0, O_SEQ},
                                             {"max-pred", 1, 0, O_PRED},
                                             {"mlm-prob", 1, 0, O_MLM},
                                             {"short-prob", 1, 0, O_SHORT},
                                             {"dupe", 1, 0, O_DUPE},
                                             {"seed", 1, 0, O_SEED},
                                             {"cased", 0, 0, O_CASED},
                                             {"whole-word", 0, 0, O_WWM},
                                             {"no-mask", 0, 0, O_NOMASK},
                                             {"no-nsp", 0, 0, O_NONSP},
                                             {"strict", 0, 0, O_STRICT},
                                             {"tokens", 0, 0, O_TOKENS},
                                             {"time", 0, 0, O_TIME},
                                             {"stats", 0, 0, O_STATS},
                                             {"help", 0, 0, 'h'},
                                             {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "j:h", longopts, NULL)) != -1) {
        switch (c) {
        case O_VOCAB:
            vocab = optarg;
            break;
        case O_SEQ:
            o.max_seq_length = atoi(optarg);
            break;
        case O_PRED:
            o.max_predictions = atoi(optarg);
            break;
        case O_MLM:
            o.masked_lm_prob = strtod(optarg, NULL);
            break;
        case O_SHORT:
            o.short_seq_prob = strtod(optarg, NULL);
            break;
        case O_DUPE:
            o.dupe_factor = atoi(optarg);
            break;
        case O_SEED:
            o.seed = strtoull(optarg, NULL, 10);
            break;
        case O_CASED:
            cased = 1;
            break;
        case O_WWM:
            o.whole_word = 1;
            break;
        case O_NOMASK:
            o.no_mask = 1;
            break;
        case O_NONSP:
            o.no_nsp = 1;
            break;
        case O_STRICT:
            o.strict = 1;
            break;
        case O_TOKENS:
            tokens = 1;
            break;
        case O_TIME:
            timing = 1;
            break;
        case O_STATS:
            stats = 1;
            break;
        case 'j':
            o.threads = atoi(optarg);
            break;
        case 'h':
            usage(stdout);
            return EXIT_OK;
        default:
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return EXIT_USAGE;
    }
    Err err;
    WordPiece *wp = wp_create(vocab, cased ? 0 : WP_UNCASED, &err);
    if (!wp) die_code(EXIT_USAGE, "%s", err.msg);
    if (inst_opts_check(&o, &err)) die_code(EXIT_USAGE, "%s", err.msg);
    InstDocs d;
    InstSet s;
    double t0 = now_sec(), c0 = cpu_sec();
    if (inst_docs_read(&d, wp, argv + optind, argc - optind, &o, &err)) die("%s", err.msg);
    double t1 = now_sec(), c1 = cpu_sec();
    if (inst_build(&s, &d, wp, &o, &err)) die("%s", err.msg);
    double t2 = now_sec(), c2 = cpu_sec();
    size_t L = (size_t)o.max_seq_length, P = (size_t)(o.max_predictions ? o.max_predictions : 1);
    int32_t *ids = xmalloc(L * sizeof *ids), *pos = xmalloc(P * sizeof *pos),
            *lab = xmalloc(P * sizeof *lab);
    for (size_t r = 0; r < s.n; r++) {
        InstView v;
        inst_row(&s, r, &v, ids, pos, lab);
        for (size_t i = 0; i < v.len; i++) {
            if (i) putchar(' ');
            put_tok(wp, ids[i], tokens);
        }
        putchar('\t');
        for (size_t i = 0; i < v.len; i++)
            putchar(i < v.seg0 ? '0' : '1');
        putchar('\t');
        for (size_t i = 0; i < v.nmask; i++)
            printf(i ? " %d" : "%d", (int)pos[i]);
        putchar('\t');
        for (size_t i = 0; i < v.nmask; i++) {
            if (i) putchar(' ');
            put_tok(wp, lab[i], tokens);
        }
        printf("\t%d\n", v.next_sentence_label);
    }
    if (timing)
        fprintf(stderr, "inst_dump: read %.3f s, build %.3f s (cpu: read %.3f s, build %.3f s)\n",
                t1 - t0, t2 - t1, c1 - c0, c2 - c1);
    if (stats)
        fprintf(
            stderr,
            "inst_dump: %llu lines, %zu documents, %zu sentences, %zu tokens, %llu invalid UTF-8; "
            "%llu instances, %llu tokens, %llu masked, %llu random next, %llu same-document, %llu "
            "truncated\n",
            (unsigned long long)d.lines, d.ndoc, d.nsent, d.ntok, (unsigned long long)d.bad_utf8,
            (unsigned long long)s.st.instances, (unsigned long long)s.st.tokens,
            (unsigned long long)s.st.masked, (unsigned long long)s.st.random_next,
            (unsigned long long)s.st.same_doc, (unsigned long long)s.st.truncated);
    if (fflush(stdout) || ferror(stdout)) die("write error");
    free(ids), free(pos), free(lab);
    inst_set_free(&s);
    inst_docs_free(&d);
    wp_destroy(wp);
    return EXIT_OK;
}
