/* sent_split - one sentence per line, for BERT pretraining text.
 *
 *   sent_split [OPTIONS] [FILE...]
 *   wiki_strip -F lines hu.jsonl | sent_split -l hu -o hu.sent.txt
 *
 * Reads documents (wiki_strip's doc, json or lines layout, or plain text
 * with a blank line between documents; common/docfmt.h), splits every
 * paragraph with tokenize/segmenter.h, and writes one sentence per line
 * with a blank line after each document (google-research/bert's input
 * format), or keeps the <doc> framing with -F doc. Documents are split on
 * -j threads in batches and written in input order, so the output is the
 * same for every -j.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "common/cli.h"
#include "common/docfmt.h"
#include "common/filter.h"
#include "common/io.h"
#include "common/pool.h"
#include "tokenize/segmenter.h"
#include "common/uniprop.h"

#define BATCH_BYTES (256u << 10)
#define BATCH_DOCS 1024
#define MAX_WORKERS 1024
#define MAX_ABBREV 64

enum { C_DOCS, C_EMPTY, C_PARAS, C_SENTS };

/* Packed document: this header, then id, url, title (each NUL-ended) and
 * the paragraphs, each ended by '\n'. */
typedef struct DocHdr {
    uint64_t idlen, urllen, titlelen, textlen;
} DocHdr;

typedef struct Worker {
    SentSpans spans;
    Buf sents;
} Worker;

typedef struct State {
    Segmenter *ss;
    int doc_out, keep_paras;
    DocReader dr;
    Doc doc;
    Writer out;
    Err err;
    Worker workers[MAX_WORKERS];
    uint64_t counts[4];
    Progress progress;
} State;

static void usage(void) {
    printf("Usage: %s [OPTIONS] [FILE...]\n"
           "Split documents into sentences: one sentence per line, a blank line after\n"
           "each document. Reads stdin when no file (or -) is given; writes stdout\n"
           "unless -o is given.\n\n"
           "Options:\n"
           "  -l, --lang LANG          hu, en (default) or another code: the rules and\n"
           "                           the word list data/abbrev/LANG.txt; languages\n"
           "                           without their own rules get the generic ones\n"
           "  -I, --input-format FMT   auto (default), doc (<doc> blocks), json\n"
           "                           (WikiExtractor --json), lines or text (one paragraph\n"
           "                           per line, a blank line between documents)\n"
           "  -F, --format FMT         text (default): sentences only\n"
           "                           doc: keep the <doc id url title> framing\n"
           "      --keep-paragraphs    also a blank line between paragraphs\n"
           "      --abbrev FILE        more abbreviations (data/abbrev/README.md format);\n"
           "                           may be repeated\n"
           "  -j, --threads N          worker threads (default: the usable CPUs, %d here)\n"
           "      --nocache            drop each input file from the page cache as it is\n"
           "                           read, for the output to reuse the memory: for a file\n"
           "                           read once (the workflows pass it); output unchanged\n"
           "  -o, --output FILE        write to FILE atomically\n"
           "  -f, --force              overwrite an existing output file\n"
           "      --max-line-bytes N   longest line, and document, held (default 64M)\n"
           "  -q, --quiet              fewer messages; -v, --verbose: summary line at the end\n"
           "  -h, --help               show this help; -V, --version: show the version\n\n"
           "Example:\n"
           "  wiki_dump huwiki.xml.bz2 | wiki_strip -F lines | %s -l hu -o hu.txt\n",
           progname, cli_ncpus(), progname);
}

static void put_field(Buf *b, const Buf *f) {
    buf_append(b, f->data, f->len);
    buf_putc(b, '\0');
}

static int fill(void *ctx, Batch *b) {
    State *st = ctx;
    int r = 0;
    while (b->in.len < BATCH_BYTES && b->nrec < BATCH_DOCS &&
           (r = docreader_next(&st->dr, &st->doc, &st->err)) == 1) {
        Doc *d = &st->doc;
        DocHdr h = {d->id.len, d->url.len, d->title.len, d->text.len};
        buf_append(&b->in, &h, sizeof h);
        put_field(&b->in, &d->id);
        put_field(&b->in, &d->url);
        put_field(&b->in, &d->title);
        buf_append(&b->in, d->text.data, d->text.len);
        b->nrec++;
    }
    progress_update(&st->progress, st->dr.rd.bytes, st->dr.rd.bytes, st->counts[C_DOCS] + b->nrec,
                    "docs");
    if (r < 0) return -1;
    return b->nrec > 0;
}

/* Sentences of the paragraphs text[0..n) into w->sents, one per line. */
static void split_doc(State *st, Worker *w, Batch *b, const char *text, size_t n) {
    const char *p = text, *end = text + n;
    buf_clear(&w->sents);
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        size_t k = segmenter_split(st->ss, p, len, &w->spans);
        b->counts[C_PARAS]++;
        if (k && st->keep_paras && w->sents.len) buf_putc(&w->sents, '\n');
        for (size_t i = 0; i < k; i++) {
            buf_append(&w->sents, p + w->spans.v[i].start, w->spans.v[i].end - w->spans.v[i].start);
            buf_putc(&w->sents, '\n');
        }
        b->counts[C_SENTS] += k;
        p += len + 1;
    }
}

static void work(void *ctx, int wid, Batch *b) {
    State *st = ctx;
    Worker *w = &st->workers[wid];
    const char *p = b->in.data, *end = b->in.data + b->in.len;
    while (p < end) {
        DocHdr h;
        memcpy(&h, p, sizeof h);
        const char *id = p + sizeof h, *url = id + h.idlen + 1, *title = url + h.urllen + 1;
        const char *text = title + h.titlelen + 1;
        p = text + h.textlen;
        b->counts[C_DOCS]++;
        split_doc(st, w, b, text, (size_t)h.textlen);
        if (!w->sents.len) b->counts[C_EMPTY]++;
        if (st->doc_out) {
            DocMeta m = {.id = id, .revid = "", .url = url, .title = title};
            docfmt_write(&b->out, DOC_DOC, &m, w->sents.data, w->sents.len);
        } else if (w->sents.len) {
            buf_append(&b->out, w->sents.data, w->sents.len);
            buf_putc(&b->out, '\n');
        }
    }
}

static int flush(void *ctx, Batch *b) {
    State *st = ctx;
    for (int i = 0; i < 4; i++)
        st->counts[i] += b->counts[i];
    return writer_write(&st->out, b->out.data, b->out.len, &st->err);
}

/* The options: the common ones, the segmenter's, the input format. */
typedef struct Config {
    CliCommon cc;
    SegmenterOpts so;
    DocFormat infmt;
    const char *abbrev[MAX_ABBREV];
    int nabbrev;
    int nocache; /* --nocache */
} Config;

/* Options into cfg and st (the output format). Returns 1 when -h printed
 * the help (exit 0), else 0; bad options exit 2. */
static int parse_args(int argc, char **argv, Config *cfg, State *st) {
    cli_common_init(&cfg->cc);
    cfg->so = (SegmenterOpts){.lang = "en"};
    cfg->infmt = DOC_AUTO;
    cfg->nabbrev = 0;
    enum { O_KEEP = 256, O_ABBREV, O_NOCACHE };
    static const struct option longopts[] = {
        {"lang", required_argument, 0, 'l'},        {"input-format", required_argument, 0, 'I'},
        {"format", required_argument, 0, 'F'},      {"keep-paragraphs", no_argument, 0, O_KEEP},
        {"abbrev", required_argument, 0, O_ABBREV}, {"nocache", no_argument, 0, O_NOCACHE},
        {"threads", required_argument, 0, 'j'},     CLI_LONGOPTS_COMMON};
    int c;
    while ((c = getopt_long(argc, argv, ":l:I:F:j:o:fqvhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'l':
            cfg->so.lang = optarg;
            break;
        case 'I':
            if (docfmt_parse_input(optarg, &cfg->infmt))
                cli_bad_usage("--input-format: expected auto, doc, json, lines or text, got '%s'",
                              optarg);
            break;
        case 'F':
            if (!strcmp(optarg, "doc"))
                st->doc_out = 1;
            else if (!strcmp(optarg, "text"))
                st->doc_out = 0;
            else
                cli_bad_usage("--format: expected text or doc, got '%s'", optarg);
            break;
        case O_KEEP:
            st->keep_paras = 1;
            break;
        case O_ABBREV:
            if (cfg->nabbrev == MAX_ABBREV) cli_bad_usage("at most %d --abbrev files", MAX_ABBREV);
            cfg->abbrev[cfg->nabbrev++] = optarg;
            break;
        case O_NOCACHE:
            cfg->nocache = 1;
            break;
        case 'h':
            usage();
            return 1;
        default: {
            char feat[64];
            snprintf(feat, sizeof feat, "(icu %s)", uni_icu_version());
            cli_common_opt(&cfg->cc, c, optarg, argv, feat);
        }
        }
    }
    cfg->so.extra = cfg->abbrev;
    cfg->so.nextra = cfg->nabbrev;
    return 0;
}

/* The -v summary line. */
static void report(void *ctx, double dt) {
    State *st = ctx;
    double mb = (double)st->dr.rd.bytes / 1e6;
    info(3,
         "%llu documents (%llu without sentences), %llu paragraphs, %llu sentences; "
         "%llu invalid UTF-8 replaced, %llu malformed records skipped; %.1f MB in %.2f s (%.1f "
         "MB/s)",
         (unsigned long long)st->counts[C_DOCS], (unsigned long long)st->counts[C_EMPTY],
         (unsigned long long)st->counts[C_PARAS], (unsigned long long)st->counts[C_SENTS],
         (unsigned long long)st->dr.bad_utf8, (unsigned long long)st->dr.malformed, mb, dt,
         dt > 0 ? mb / dt : 0.0);
}

static void state_free(State *st) {
    docreader_free(&st->dr);
    doc_free(&st->doc);
    segmenter_destroy(st->ss);
    for (int i = 0; i < MAX_WORKERS; i++) {
        sentspans_free(&st->workers[i].spans);
        buf_free(&st->workers[i].sents);
    }
}

int main(int argc, char **argv) {
    cli_init(argv[0]);
    static State st;
    static Config cfg;
    if (parse_args(argc, argv, &cfg, &st)) return EXIT_OK;
    char **inputs = argv + optind;
    int ninputs = argc - optind;
    int code = 0;
    st.ss = segmenter_create(&cfg.so, &code, &st.err);
    if (!st.ss)
        die_code(code == SEGMENTER_EMISSING || code == SEGMENTER_ELANG ? EXIT_USAGE : EXIT_DATA,
                 "%s", st.err.msg);
    docreader_init(&st.dr, inputs, ninputs, cfg.infmt);
    st.dr.rd.nocache = cfg.nocache;
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
