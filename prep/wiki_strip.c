/* wiki_strip - wikitext to clean article text.
 *
 *   wiki_strip [OPTIONS] [PAGES.jsonl...]
 *   wiki_dump dump.xml.bz2 | wiki_strip --format lines > articles.txt
 *
 * Reads wiki_dump's JSON Lines (a leading {"siteinfo":...} line supplies the
 * wiki's localized namespace names), cleans each page's wikitext with
 * wikitext.c, and writes WikiExtractor's doc or json layout, or one article
 * per line (docfmt.h). Pages are cleaned on -j threads in batches and
 * written in input order, so the output is the same for every -j.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "common/filter.h"
#include "common/cli.h"
#include "common/docfmt.h"
#include "common/io.h"
#include "common/json.h"
#include "common/pool.h"
#include "prep/wikitext.h"

#define BATCH_BYTES (2u << 20)
#define BATCH_RECORDS 512
#define MAX_WORKERS 1024

enum { C_IN, C_OUT, C_BAD, C_EMPTY };

typedef struct Worker {
    WikiText *wt;
    Buf text, title, url, id, revid, paras;
} Worker;

typedef struct State {
    DocFormat fmt;
    int strict, keep_lists, faithful, nthreads;
    Reader rd;
    Writer out;
    Err err;
    int read_error;
    char **drop_ns; /* NULL-terminated, from siteinfo; NULL = defaults */
    Buf rec;        /* scratch for one record while packing */
    Worker workers[MAX_WORKERS];
    uint64_t counts[4];
    Err first_bad; /* the first malformed record's message */
    Progress progress;
} State;

static void usage(void) {
    printf("Usage: %s [OPTIONS] [PAGES.jsonl...]\n"
           "Turn wiki_dump's JSON Lines into plain article text. Reads stdin when no\n"
           "file (or -) is given; writes stdout unless -o is given.\n\n"
           "Options:\n"
           "  -F, --format FMT   doc (default): WikiExtractor's <doc id url title> layout\n"
           "                     json: WikiExtractor --json records\n"
           "                     lines: one article per line + blank line (NVIDIA/HILBERT\n"
           "                     formatting.py output)\n"
           "  -j, --threads N    worker threads (default: the usable CPUs, %d here)\n"
           "      --lists        keep list items (WikiExtractor --lists)\n"
           "      --faithful     reproduce the original workflow's WikiExtractor 3.0 text\n"
           "                     byte for byte (default: the tidier text of WikiExtractor\n"
           "                     3.1: no blank left before , . : ) where a template was\n"
           "                     removed, ':'-indented quotations and poems kept)\n"
           "  -o, --output FILE  write to FILE atomically\n"
           "  -f, --force        overwrite an existing output file\n"
           "      --strict       exit 1 on the first malformed record (default: skip it;\n"
           "                     exit 1 when no record at all is good)\n"
           "      --max-line-bytes N  longest input line, one page (default 64M)\n"
           "  -q, --quiet        fewer messages; -v, --verbose: summary line at the end\n"
           "  -h, --help         show this help; -V, --version: show the version\n\n"
           "Example:\n"
           "  wiki_dump -j 16 huwiki-latest-pages-articles.xml.bz2 | %s -j 16 -F lines -o hu.txt\n",
           progname, cli_ncpus(), progname);
}

/* ---- siteinfo: which [[Namespace:...]] links are dropped ---- */

static void add_name(char ***list, int *n, const char *name, size_t len) {
    if (!len) return;
    for (int i = 0; i < *n; i++)
        if (strlen((*list)[i]) == len && memcmp((*list)[i], name, len) == 0) return;
    *list = xrealloc(*list, (size_t)(*n + 2) * sizeof **list);
    (*list)[*n] = xmalloc(len + 1);
    memcpy((*list)[*n], name, len);
    (*list)[*n][len] = '\0';
    (*list)[++*n] = NULL;
}

/* Parse {"siteinfo":{... "namespaces":[{"key":6,"name":"Fájl",...}]}} and
 * collect the local and canonical names of the File (6), Category (14) and
 * Media (-2) namespaces. Returns 0 or -1 (err set). */
static int load_siteinfo(State *st, const char *line, size_t len) {
    JsonIter top, site, nsarr, ns;
    const char *k, *v;
    size_t kn, vn;
    char **names = NULL;
    int n = 0;
    add_name(&names, &n, "File", 4);
    add_name(&names, &n, "Image", 5);
    add_name(&names, &n, "Category", 8);
    add_name(&names, &n, "Media", 5);
    if (json_iter_init(&top, line, len, '{') || json_iter_next(&top, &k, &kn, &v, &vn) != 1)
        goto bad;
    if (json_iter_init(&site, v, vn, '{')) goto bad;
    while (json_iter_next(&site, &k, &kn, &v, &vn) == 1) {
        if (!json_key_is(k, kn, "namespaces")) continue;
        if (json_iter_init(&nsarr, v, vn, '[')) goto bad;
        const char *e;
        size_t en;
        while (json_iter_next(&nsarr, &k, &kn, &e, &en) == 1) {
            int64_t key = 0;
            Buf name = {0}, canon = {0};
            if (json_iter_init(&ns, e, en, '{')) goto bad;
            while (json_iter_next(&ns, &k, &kn, &v, &vn) == 1) {
                if (json_key_is(k, kn, "key"))
                    json_to_i64(v, vn, &key);
                else if (json_key_is(k, kn, "name"))
                    json_decode_string(&name, v, vn);
                else if (json_key_is(k, kn, "canonical"))
                    json_decode_string(&canon, v, vn);
            }
            if (key == 6 || key == 14 || key == -2) {
                add_name(&names, &n, name.data, name.len);
                add_name(&names, &n, canon.data, canon.len);
            }
            buf_free(&name);
            buf_free(&canon);
        }
    }
    st->drop_ns = names;
    return 0;
bad:
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return err_set(&st->err, "%s:%llu: malformed siteinfo record", st->rd.name,
                   (unsigned long long)st->rd.line);
}

/* ---- batches: [u64 line][u64 len][bytes] per record ---- */

static int fill(void *ctx, Batch *b) {
    State *st = ctx;
    const char *line;
    size_t len;
    int r = 0;
    while (b->in.len < BATCH_BYTES && b->nrec < BATCH_RECORDS &&
           (r = reader_next_line(&st->rd, &line, &len, &st->err)) == 1) {
        if (st->rd.line == 1 && len >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0)
            line += 3, len -= 3; /* a byte order mark before an input's first record */
        if (len == 0) continue;
        if (len > 12 && memcmp(line, "{\"siteinfo\":", 12) == 0) {
            /* the first one wins: workers may already hold the name list */
            if (!st->drop_ns && load_siteinfo(st, line, len)) return -1;
            continue;
        }
        uint64_t hdr[2] = {st->rd.line, len};
        buf_append(&b->in, hdr, sizeof hdr);
        buf_append(&b->in, line, len);
        b->nrec++;
    }
    progress_update(&st->progress, st->rd.bytes, st->rd.bytes, st->counts[C_IN] + b->nrec, "pages");
    if (r < 0) {
        st->read_error = 1;
        return -1;
    }
    return b->nrec > 0;
}

/* Decode one wiki_dump record into the worker's buffers. */
static const char *parse_record(Worker *w, const char *rec, size_t len, size_t *pos) {
    JsonIter it;
    const char *k, *v;
    size_t kn, vn;
    int have_text = 0, have_title = 0;
    buf_clear(&w->text), buf_clear(&w->title), buf_clear(&w->url);
    buf_clear(&w->id), buf_clear(&w->revid);
    if (json_iter_init(&it, rec, len, '{')) goto syntax;
    int r = 0;
    while ((r = json_iter_next(&it, &k, &kn, &v, &vn)) == 1) {
        if (json_key_is(k, kn, "text")) {
            if (json_decode_string(&w->text, v, vn))
                return *pos = (size_t)(v - rec), "bad \"text\" string";
            have_text = 1;
        } else if (json_key_is(k, kn, "title")) {
            if (json_decode_string(&w->title, v, vn))
                return *pos = (size_t)(v - rec), "bad \"title\" string";
            have_title = 1;
        } else if (json_key_is(k, kn, "url")) {
            json_decode_string(&w->url, v, vn);
        } else if (json_key_is(k, kn, "id") || json_key_is(k, kn, "revid")) {
            Buf *dst = k[0] == 'i' ? &w->id : &w->revid;
            if (vn && v[0] == '"')
                json_decode_string(dst, v, vn);
            else
                buf_append(dst, v, vn);
        }
    }
    if (r < 0) goto syntax;
    if (!have_text || !have_title) return *pos = 0, "record without \"title\" or \"text\"";
    return NULL;
syntax:
    *pos = it.pos;
    return it.error;
}

static void work(void *ctx, int wid, Batch *b) {
    State *st = ctx;
    Worker *w = &st->workers[wid];
    if (!w->wt) {
        WikiTextOpts o = {.keep_lists = st->keep_lists,
                          .drop_ns = (const char *const *)st->drop_ns,
                          .count_leftover = display_level >= 3,
                          .faithful = st->faithful};
        w->wt = wikitext_create(&o);
    }
    const char *p = b->in.data, *end = b->in.data + b->in.len;
    while (p < end) {
        uint64_t hdr[2];
        memcpy(hdr, p, sizeof hdr);
        const char *rec = p + sizeof hdr;
        p = rec + hdr[1];
        b->counts[C_IN]++;
        size_t pos = 0;
        const char *why = parse_record(w, rec, (size_t)hdr[1], &pos);
        if (why) {
            if (!b->counts[C_BAD]++)
                err_set(&b->err, "%s:%llu: malformed record (byte %zu): %s", st->rd.name,
                        (unsigned long long)hdr[0], pos + 1, why);
            continue;
        }
        buf_clear(&w->paras);
        wikitext_clean(w->wt, w->text.data ? w->text.data : "", w->text.len, &w->paras);
        if (!w->paras.len) b->counts[C_EMPTY]++;
        DocMeta m = {.id = w->id.data ? w->id.data : "",
                     .revid = w->revid.data ? w->revid.data : "",
                     .url = w->url.data ? w->url.data : "",
                     .title = w->title.data ? w->title.data : ""};
        docfmt_write(&b->out, st->fmt, &m, w->paras.data, w->paras.len);
        b->counts[C_OUT]++;
    }
}

static int flush(void *ctx, Batch *b) {
    State *st = ctx;
    if (b->counts[C_BAD] && !st->counts[C_BAD]) st->first_bad = b->err;
    for (int i = 0; i < 4; i++)
        st->counts[i] += b->counts[i];
    if (b->counts[C_BAD]) {
        if (st->strict) {
            st->err = b->err;
            return -1;
        }
        warn("%s%s", b->err.msg, b->counts[C_BAD] > 1 ? " (and more in this batch)" : "");
    }
    return writer_write(&st->out, b->out.data, b->out.len, &st->err);
}

/* Options into st (and the common ones into cc). Returns 1 when -h printed
 * the help (exit 0), else 0; bad options exit 2. */
static int parse_args(int argc, char **argv, State *st, CliCommon *cc) {
    cli_common_init(cc);
    enum { O_STRICT = 256, O_LISTS, O_FAITHFUL };
    static const struct option longopts[] = {
        {"format", required_argument, 0, 'F'},    {"threads", required_argument, 0, 'j'},
        {"strict", no_argument, 0, O_STRICT},     {"lists", no_argument, 0, O_LISTS},
        {"faithful", no_argument, 0, O_FAITHFUL}, CLI_LONGOPTS_COMMON};
    int c;
    while ((c = getopt_long(argc, argv, ":F:j:o:fqvhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'F':
            if (docfmt_parse(optarg, &st->fmt))
                cli_bad_usage("--format: expected doc, json or lines, got '%s'", optarg);
            break;
        case O_STRICT:
            st->strict = 1;
            break;
        case O_LISTS:
            st->keep_lists = 1;
            break;
        case O_FAITHFUL:
            st->faithful = 1;
            break;
        case 'h':
            usage();
            return 1;
        default:
            cli_common_opt(cc, c, optarg, argv, "");
        }
    }
    st->nthreads = cc->nthreads;
    return 0;
}

/* After the run: refuse an input with no good record at all, then the -v
 * summary line. */
static void report(void *ctx, double dt) {
    State *st = ctx;
    /* skipping bad records is for the odd broken page, not for an input
     * that is not wiki_dump's output at all */
    if (st->counts[C_IN] && st->counts[C_BAD] == st->counts[C_IN])
        die("%s; none of the %llu records was good", st->first_bad.msg,
            (unsigned long long)st->counts[C_IN]);
    WikiTextStats ws = {0};
    for (int i = 0; i < MAX_WORKERS; i++) {
        if (!st->workers[i].wt) continue;
        WikiTextStats one;
        wikitext_get_stats(st->workers[i].wt, &one);
        ws.paragraphs += one.paragraphs;
        ws.leftover_lines += one.leftover_lines;
        ws.invalid_utf8 += one.invalid_utf8;
    }
    info(3,
         "%llu pages read, %llu written (%llu with no text left); %llu malformed skipped; "
         "%llu paragraphs, %llu with leftover markup; %llu invalid UTF-8 replaced; "
         "%.1f MB in %.2f s (%.1f MB/s)",
         (unsigned long long)st->counts[C_IN], (unsigned long long)st->counts[C_OUT],
         (unsigned long long)st->counts[C_EMPTY], (unsigned long long)st->counts[C_BAD],
         (unsigned long long)ws.paragraphs, (unsigned long long)ws.leftover_lines,
         (unsigned long long)ws.invalid_utf8, (double)st->rd.bytes / 1e6, dt,
         dt > 0 ? (double)st->rd.bytes / 1e6 / dt : 0.0);
}

static void state_free(State *st) {
    reader_free(&st->rd);
    for (int i = 0; i < MAX_WORKERS; i++) {
        Worker *w = &st->workers[i];
        if (w->wt) wikitext_destroy(w->wt);
        buf_free(&w->text), buf_free(&w->title), buf_free(&w->url);
        buf_free(&w->id), buf_free(&w->revid), buf_free(&w->paras);
    }
}

int main(int argc, char **argv) {
    cli_init(argv[0]);
    static State st;
    CliCommon cc;
    if (parse_args(argc, argv, &st, &cc)) return EXIT_OK;
    char **inputs = argv + optind;
    int ninputs = argc - optind;
    /* a missing input is found before the output is created */
    if (inputs_check(inputs, ninputs, &st.err)) die("%s", st.err.msg);
    reader_init(&st.rd, inputs, ninputs);
    FilterRun run = {.output = cc.output,
                     .force = cc.force,
                     .keep_partial = 1,
                     .inputs = inputs,
                     .ninputs = ninputs,
                     .nthreads = st.nthreads,
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
