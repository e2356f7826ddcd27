/* wp_tokenize - BERT WordPiece tokenization, one output line per input line.
 *
 *   wp_tokenize [--vocab FILE] [--do-lower-case 0|1] [--strip-accents 0|1] [--ids]
 *               [-j N] [-o FILE] [FILE...]
 *   sent_split -l en wiki.txt | wp_tokenize --ids > wiki.ids
 *
 * Writes the WordPiece tokens (or with --ids their vocabulary ids) of each
 * input line separated by single spaces; an empty line stays empty, so
 * document boundaries survive. Tokenization is tokenization.py's
 * BertTokenizer (tokenize/wordpiece.h). Lines are tokenized on -j threads
 * in batches and written in input order: the output is the same for any -j.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/cli.h"
#include "common/filter.h"
#include "common/io.h"
#include "common/pool.h"
#include "common/uniprop.h"
#include "tokenize/wordpiece.h"

#define BATCH_BYTES (256u << 10)
#define BATCH_LINES 4096
#define MAX_WORKERS 1024
#define DEFAULT_VOCAB "bert/vocab.txt"

enum { C_LINES, C_TOKENS, C_UNK, C_BAD };

typedef struct Worker {
    WpScratch sc;
    WpIds ids;
} Worker;

typedef struct State {
    WordPiece *wp;
    int ids;
    Reader rd;
    Writer out;
    Err err;
    Worker workers[MAX_WORKERS];
    uint64_t counts[4];
    Progress progress;
} State;

static void usage(void) {
    char vocab[4096];
    printf("Usage: %s [OPTIONS] [FILE...]\n"
           "Tokenize text into BERT WordPieces, as tokenization.py's BertTokenizer does:\n"
           "each input line gives one output line of tokens separated by single spaces\n"
           "(an empty line stays empty). Reads stdin when no FILE (or -) is given; writes\n"
           "stdout unless -o is given. Invalid UTF-8 is dropped and counted.\n\n"
           "Options:\n"
           "      --vocab FILE   WordPiece vocabulary, one token per line, id = line number,\n"
           "                     with an [UNK] line (default: %s), or Hugging Face's\n"
           "                     tokenizer.json of a WordPiece model (its normalization\n"
           "                     is the default then)\n"
           "      --do-lower-case 0|1\n"
           "                     1 (default; a tokenizer.json: its lowercase): lower-case;\n"
           "                     0: keep case\n"
           "      --strip-accents 0|1\n"
           "                     1: drop accents (NFD, then marks of category Mn); 0: keep\n"
           "                     them (default: as --do-lower-case, as BertTokenizer's\n"
           "                     strip_accents=None); kör and kor stay apart only with 0\n"
           "      --cased        keep case and accents (--do-lower-case 0)\n"
           "      --ids          write vocabulary ids instead of tokens\n"
           "  -j, --threads N    worker threads (default: the usable CPUs, %d here)\n"
           "  -o, --output FILE  write to FILE atomically\n"
           "  -f, --force        overwrite an existing output file\n"
           "      --max-line-bytes N  longest line of input or vocabulary (64M)\n"
           "  -q, --quiet        fewer messages; -v, --verbose: summary line at the end\n"
           "  -h, --help         show this help; -V, --version: show the version\n\n"
           "Example:\n"
           "  sent_split -l en wiki.txt | %s --ids -o wiki.ids\n",
           progname, cli_data_path(DEFAULT_VOCAB, vocab, sizeof vocab), cli_ncpus(), progname);
}

/* ---- batches: [u64 len][bytes] per line ---- */

static int fill(void *ctx, Batch *b) {
    State *st = ctx;
    const char *line;
    size_t len;
    int r = 0;
    while (b->in.len < BATCH_BYTES && b->nrec < BATCH_LINES &&
           (r = reader_next_line(&st->rd, &line, &len, &st->err)) == 1) {
        uint64_t n = len;
        buf_append(&b->in, &n, sizeof n);
        buf_append(&b->in, line, len);
        b->nrec++;
    }
    progress_update(&st->progress, st->rd.bytes, st->rd.bytes, st->counts[C_LINES] + b->nrec,
                    "lines");
    if (r < 0) return -1;
    return b->nrec > 0;
}

static void work(void *ctx, int wid, Batch *b) {
    State *st = ctx;
    Worker *w = &st->workers[wid];
    int32_t unk = wp_unk_id(st->wp);
    const char *p = b->in.data, *end = b->in.data + b->in.len;
    size_t bad0 = w->sc.bad_utf8;
    while (p < end) {
        uint64_t n;
        memcpy(&n, p, sizeof n);
        const char *line = p + sizeof n;
        p = line + n;
        w->ids.n = 0;
        wp_encode(st->wp, &w->sc, line, (size_t)n, &w->ids);
        for (size_t k = 0; k < w->ids.n; k++) {
            int32_t id = w->ids.v[k];
            if (k) buf_putc(&b->out, ' ');
            if (id == unk) b->counts[C_UNK]++;
            if (!st->ids) {
                size_t tl;
                const char *t = wp_id_token(st->wp, id, &tl);
                buf_append(&b->out, t, tl);
            } else {
                char num[16];
                int m = snprintf(num, sizeof num, "%d", (int)id);
                buf_append(&b->out, num, (size_t)m);
            }
        }
        buf_putc(&b->out, '\n');
        b->counts[C_LINES]++;
        b->counts[C_TOKENS] += w->ids.n;
    }
    b->counts[C_BAD] += w->sc.bad_utf8 - bad0;
}

static int flush(void *ctx, Batch *b) {
    State *st = ctx;
    for (int i = 0; i < 4; i++)
        st->counts[i] += b->counts[i];
    return writer_write(&st->out, b->out.data, b->out.len, &st->err);
}

/* The options besides the common ones. */
typedef struct Config {
    CliCommon cc;
    const char *vocab; /* --vocab, or the default under data/ */
    int lower, strip;  /* --do-lower-case; --strip-accents (-1: not given) */
    char vocab_default[4096];
} Config;

/* Options into cfg and st (--ids). Returns 1 when -h printed the help
 * (exit 0), else 0; bad options exit 2. */
static int parse_args(int argc, char **argv, Config *cfg, State *st) {
    cli_common_init(&cfg->cc);
    cfg->vocab = NULL;
    cfg->lower = -1, cfg->strip = -1;
    enum { O_VOCAB = 256, O_CASED, O_IDS, O_LOWER, O_STRIP };
    static const struct option longopts[] = {{"vocab", required_argument, 0, O_VOCAB},
                                             {"cased", no_argument, 0, O_CASED},
                                             {"do-lower-case", required_argument, 0, O_LOWER},
                                             {"do_lower_case", required_argument, 0, O_LOWER},
                                             {"strip-accents", required_argument, 0, O_STRIP},
                                             {"strip_accents", required_argument, 0, O_STRIP},
                                             {"ids", no_argument, 0, O_IDS},
                                             {"threads", required_argument, 0, 'j'},
                                             CLI_LONGOPTS_COMMON};
    int c, cased = 0;
    while ((c = getopt_long(argc, argv, ":j:o:fqvhV", longopts, NULL)) != -1) {
        switch (c) {
        case O_VOCAB:
            cfg->vocab = optarg;
            break;
        case O_CASED:
            cfg->lower = 0, cased = 1;
            break;
        case O_LOWER:
            cfg->lower = (int)cli_parse_int(optarg, "--do-lower-case", 0, 1);
            break;
        case O_STRIP:
            cfg->strip = (int)cli_parse_int(optarg, "--strip-accents", 0, 1);
            break;
        case O_IDS:
            st->ids = 1;
            break;
        case 'h':
            usage();
            return 1;
        default: {
            char f[64];
            snprintf(f, sizeof f, "(icu %s, unicode %s)", uni_icu_version(), uni_unicode_version());
            cli_common_opt(&cfg->cc, c, optarg, argv, f);
        }
        }
    }
    if (cased && cfg->strip < 0) cfg->strip = 0;
    if (!cfg->vocab)
        cfg->vocab = cli_data_path(DEFAULT_VOCAB, cfg->vocab_default, sizeof cfg->vocab_default);
    return 0;
}

/* Load the vocabulary (vocab.txt or tokenizer.json) into st->wp with the
 * normalization of --do-lower-case and --strip-accents (-1: not given):
 * a missing file or one without [UNK] exits 2, an unreadable one 1. */
static void load_vocab(State *st, const char *vocab, int lower, int strip) {
    Buf note = {0};
    st->wp = wp_open(vocab, lower, strip, &note, NULL, &st->err);
    if (!st->wp) die_code(access(vocab, R_OK) ? EXIT_USAGE : EXIT_DATA, "%s", st->err.msg);
    if (note.len) warn("%.*s", (int)note.len, note.data);
    buf_free(&note);
    /* without [UNK] every unknown word would have no token and no id */
    if (!wp_vocab_size(st->wp)) die_code(EXIT_USAGE, "%s: empty vocabulary (--vocab)", vocab);
    if (wp_unk_id(st->wp) == WP_UNK_ABSENT)
        die_code(EXIT_USAGE, "%s: the vocabulary has no [UNK] line (--vocab)", vocab);
}

/* The -v summary line. */
static void report(void *ctx, double dt) {
    State *st = ctx;
    info(3,
         "%llu lines, %llu tokens, %llu [UNK]; %llu invalid UTF-8 replaced; %.1f MB in %.2f s "
         "(%.1f MB/s)",
         (unsigned long long)st->counts[C_LINES], (unsigned long long)st->counts[C_TOKENS],
         (unsigned long long)st->counts[C_UNK], (unsigned long long)st->counts[C_BAD],
         (double)st->rd.bytes / 1e6, dt, dt > 0 ? (double)st->rd.bytes / 1e6 / dt : 0.0);
}

static void state_free(State *st) {
    reader_free(&st->rd);
    for (int i = 0; i < MAX_WORKERS; i++) {
        wp_scratch_free(&st->workers[i].sc);
        wp_ids_free(&st->workers[i].ids);
    }
    wp_destroy(st->wp);
}

int main(int argc, char **argv) {
    cli_init(argv[0]);
    static State st;
    static Config cfg;
    if (parse_args(argc, argv, &cfg, &st)) return EXIT_OK;
    char **inputs = argv + optind;
    int ninputs = argc - optind;
    load_vocab(&st, cfg.vocab, cfg.lower, cfg.strip);
    reader_init(&st.rd, inputs, ninputs);
    FilterRun run = {.output = cfg.cc.output,
                     .force = cfg.cc.force,
                     .inputs = inputs,
                     .ninputs = ninputs,
                     .nthreads = cfg.cc.nthreads,
                     .ops = {fill, work, flush},
                     .ctx = &st,
                     .out = &st.out,
                     .progress = &st.progress,
                     .err = &st.err,
                     .report = report};
    filter_run(&run);
    state_free(&st);
    return EXIT_OK;
}
