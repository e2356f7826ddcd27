/* wiki_dump - MediaWiki XML dump (.xml.bz2, multistream or not, or .xml)
 * to JSON Lines, one page per line.
 *
 *   wiki_dump [OPTIONS] [DUMP]          DUMP: .xml.bz2, .xml, or - (stdin)
 *   wiki_dump huwiki-latest-pages-articles-multistream.xml.bz2 -o pages.jsonl
 *
 * Output: a first line {"siteinfo":{...}} with the wiki's name, URL base and
 * namespace table (wiki_strip reads it for the localized namespace names),
 * then one object per page: id, revid, title, ns, url (WikiExtractor's
 * "<base>?curid=<id>"), redirect (only for redirects), text (raw wikitext).
 * Decompression runs on -j threads (see bz2par.h); parsing and output are
 * sequential, so the output is the same for every -j.
 */
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prep/bz2par.h"
#include "common/buf.h"
#include "common/cli.h"
#include "common/io.h"
#include "common/json.h"
#include "prep/mwxml.h"

#define MAX_NS_FILTER 64
#define MAX_MARKUP_DEFAULT ((size_t)1 << 20) /* a dump's tags are under 1 KiB */

typedef struct Config {
    const char *input, *output, *index;
    int force, nthreads, keep_redirects, no_siteinfo, strict, all_ns;
    const char *ns_arg;
    uint64_t max_text;
} Config;

typedef struct State {
    Config *cfg;
    Writer out;
    Buf line;
    char *urlbase; /* siteinfo base up to its last '/', JSON-escaped */
    int64_t ns_keep[MAX_NS_FILTER];
    int nns_keep;
    char *ns_names[MAX_NS_FILTER]; /* names in --ns, resolved at siteinfo */
    int nns_names;
    int site_seen;
    uint64_t kept, skip_redirect, skip_ns, out_bytes;
    Progress progress;
} State;

static void usage(void) {
    printf("Usage: %s [OPTIONS] [DUMP]\n"
           "Read a MediaWiki XML dump and write its pages as JSON Lines.\n"
           "DUMP is .xml.bz2 (single-stream or multistream), plain .xml, or - for stdin\n"
           "(the default). Output goes to stdout unless -o is given.\n\n"
           "Options:\n"
           "  -o, --output FILE     write to FILE atomically (FILE.tmp.PID, then rename)\n"
           "  -f, --force           overwrite an existing output file\n"
           "  -j, --threads N       decompression threads (default: the usable CPUs, %d here)\n"
           "      --index FILE      multistream index (...-multistream-index.txt.bz2)\n"
           "      --ns LIST         namespaces to keep, numbers or names, comma-separated\n"
           "                        (default: 0, the articles); 'all' keeps every page\n"
           "      --keep-redirects  keep redirect pages (default: dropped)\n"
           "      --max-page-bytes N  skip pages whose wikitext is longer (default 32M)\n"
           "      --no-siteinfo     do not write the leading {\"siteinfo\":...} line\n"
           "      --strict          exit 1 on the first skipped or repaired page\n"
           "      --max-line-bytes N  longest XML markup: a tag, a comment (default 1M)\n"
           "  -q, --quiet           fewer messages (repeatable)\n"
           "  -v, --verbose         summary line at the end, and progress lines\n"
           "                        every 10 s when stderr is not a terminal\n"
           "  -h, --help            show this help\n"
           "  -V, --version         show version and libraries\n\n"
           "Output lines: {\"id\":12,\"revid\":34,\"title\":\"...\",\"ns\":0,\n"
           "  \"url\":\"https://en.wikipedia.org/wiki?curid=12\",\"text\":\"...\"}\n"
           "  (\"redirect\":\"Target\" is added for redirect pages).\n\n"
           "Example:\n"
           "  %s -j 16 enwiki-latest-pages-articles-multistream.xml.bz2 | wiki_strip > text.txt\n",
           progname, cli_ncpus(), progname);
}

/* ---- output ---- */

static void write_line(State *st) {
    buf_putc(&st->line, '\n');
    Err err;
    if (writer_write(&st->out, st->line.data, st->line.len, &err)) die("%s", err.msg);
    st->out_bytes += st->line.len;
    buf_clear(&st->line);
}

static void key(Buf *b, const char *k) {
    buf_putc(b, b->len ? ',' : '{');
    buf_putc(b, '"');
    buf_puts(b, k);
    buf_puts(b, "\":");
}

static void key_str(Buf *b, const char *k, const char *v) {
    key(b, k);
    json_append_string(b, v ? v : "", v ? strlen(v) : 0);
}

static void key_int(Buf *b, const char *k, int64_t v) {
    char t[32];
    key(b, k);
    snprintf(t, sizeof t, "%lld", (long long)v);
    buf_puts(b, t);
}

static void on_site(void *ctx, const WikiSiteinfo *site) {
    State *st = ctx;
    st->site_seen = 1;
    if (site->base) {
        const char *slash = strrchr(site->base, '/');
        size_t n = slash ? (size_t)(slash - site->base) : strlen(site->base);
        Buf u = {0}; /* kept JSON-escaped, without the quotes */
        json_append_string(&u, site->base, n);
        free(st->urlbase);
        st->urlbase = xmalloc(u.len - 1);
        memcpy(st->urlbase, u.data + 1, u.len - 2);
        st->urlbase[u.len - 2] = '\0';
        buf_free(&u);
    }
    for (int i = 0; i < st->nns_names; i++) {
        int found = 0;
        for (int k = 0; k < site->nns; k++) {
            if (strcasecmp(site->ns[k].name, st->ns_names[i]) == 0 ||
                strcasecmp(site->ns[k].canonical, st->ns_names[i]) == 0) {
                if (st->nns_keep < MAX_NS_FILTER) st->ns_keep[st->nns_keep++] = site->ns[k].key;
                found = 1;
            }
        }
        if (!found)
            die_code(EXIT_USAGE, "--ns: no namespace named '%s' in this dump", st->ns_names[i]);
    }
    if (st->cfg->no_siteinfo) return;
    Buf *b = &st->line;
    buf_puts(b, "{\"siteinfo\":");
    Buf inner = {0};
    key_str(&inner, "sitename", site->sitename);
    key_str(&inner, "dbname", site->dbname);
    key_str(&inner, "base", site->base);
    key_str(&inner, "generator", site->generator);
    key_str(&inner, "case", site->casing);
    key(&inner, "namespaces");
    buf_putc(&inner, '[');
    for (int i = 0; i < site->nns; i++) {
        Buf ns = {0};
        key_int(&ns, "key", site->ns[i].key);
        key_str(&ns, "name", site->ns[i].name);
        key_str(&ns, "canonical", site->ns[i].canonical);
        key_str(&ns, "case", site->ns[i].casing);
        buf_putc(&ns, '}');
        if (i) buf_putc(&inner, ',');
        buf_append(&inner, ns.data, ns.len);
        buf_free(&ns);
    }
    buf_puts(&inner, "]}");
    buf_append(b, inner.data, inner.len);
    buf_free(&inner);
    buf_putc(b, '}');
    write_line(st);
}

static int ns_wanted(const State *st, int64_t ns) {
    if (st->cfg->all_ns) return 1;
    for (int i = 0; i < st->nns_keep; i++)
        if (st->ns_keep[i] == ns) return 1;
    return 0;
}

static void on_page(void *ctx, const WikiPage *p) {
    State *st = ctx;
    if (p->redirect && !st->cfg->keep_redirects) {
        st->skip_redirect++;
        return;
    }
    if (!ns_wanted(st, p->ns)) {
        st->skip_ns++;
        return;
    }
    Buf *b = &st->line;
    key_int(b, "id", p->id);
    key_int(b, "revid", p->revid);
    key(b, "title");
    json_append_string_utf8(b, p->title, p->title_len);
    key_int(b, "ns", p->ns);
    key(b, "url");
    buf_putc(b, '"');
    if (st->urlbase) {
        char t[32];
        buf_append(b, st->urlbase, strlen(st->urlbase));
        snprintf(t, sizeof t, "?curid=%lld", (long long)p->id);
        buf_puts(b, t);
    }
    buf_putc(b, '"');
    if (p->redirect) {
        key(b, "redirect");
        json_append_string(b, p->redirect, p->redirect_len);
    }
    key(b, "text");
    json_append_string_utf8(b, p->text, p->text_len); /* mwxml.c repaired it */
    buf_putc(b, '}');
    write_line(st);
    st->kept++;
}

/* ---- input ---- */

static void parse_ns_list(State *st, const char *arg) {
    if (strcmp(arg, "all") == 0) {
        st->cfg->all_ns = 1;
        return;
    }
    char *copy = xstrdup(arg), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        errno = 0;
        long v = strtol(t, &end, 10);
        if (*t && *end == '\0') {
            if (errno || v < INT32_MIN || v > INT32_MAX)
                cli_bad_usage("--ns: namespace number '%s' is out of range", t);
            if (st->nns_keep >= MAX_NS_FILTER) cli_bad_usage("--ns: too many namespaces");
            st->ns_keep[st->nns_keep++] = v;
        } else {
            if (st->nns_names >= MAX_NS_FILTER) cli_bad_usage("--ns: too many namespaces");
            st->ns_names[st->nns_names++] = xstrdup(t);
        }
    }
    free(copy);
}

static void progress(State *st, uint64_t pos, const MwXml *wd) {
    progress_update(&st->progress, pos, mwxml_stats(wd)->xml_bytes, mwxml_stats(wd)->pages,
                    "pages");
}

static ssize_t read_full(int fd, char *p, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* For bz2 on a pipe: the sniffed bytes cannot be pushed back, so a thread
 * copies them and the rest of the input into a new pipe for the decoder. */
typedef struct Relay {
    int in, out;
    const char *head;
    size_t nhead;
} Relay;

static void *relay_main(void *arg) {
    Relay *r = arg;
    static char buf[1 << 16];
    sigset_t set; /* a reader that stopped early gives EPIPE here, not a signal */
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    if (write(r->out, r->head, r->nhead) == (ssize_t)r->nhead) {
        for (;;) {
            ssize_t n = read(r->in, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            if (write(r->out, buf, (size_t)n) != n) break;
        }
    }
    close(r->out);
    return NULL;
}

/* What the first bytes head[0..n) of an input are, when they are not what
 * wiki_dump reads (bzip2 or XML): another compressor's magic ("gzip",
 * "xz", "zstd", "7z", "zip"), or NULL. */
static const char *other_compression(const unsigned char *head, size_t n) {
    static const struct {
        const char *name;
        size_t len;
        const char *magic;
    } kinds[] = {{"gzip", 2, "\x1f\x8b"},
                 {"xz", 6,
                  "\xfd"
                  "7zXZ\0"},
                 {"zstd", 4, "\x28\xb5\x2f\xfd"},
                 {"7z", 6, "7z\xbc\xaf\x27\x1c"},
                 {"zip", 4, "PK\x03\x04"}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (n >= kinds[i].len && memcmp(head, kinds[i].magic, kinds[i].len) == 0)
            return kinds[i].name;
    return NULL;
}

/* Whether head[0..n) starts like XML: '<' after an optional UTF-8 byte
 * order mark and white space. */
static int looks_like_xml(const unsigned char *head, size_t n) {
    size_t i = n >= 3 && memcmp(head, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
    while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
        i++;
    return i < n && head[i] == '<';
}

/* The input's kind from its first bytes: 0 bzip2 or XML, go on; -1 with
 * err for data wiki_dump cannot read, named by what it is ("d.xml.bz2:
 * gzip data, not bzip2 or XML (decompress it first: gzip -dc d.xml.bz2 |
 * wiki_dump)"),
 * and for a name ending in .bz2 that holds neither bzip2 nor XML. Plain
 * XML named .bz2 is read, with a warning. */
static int sniff(const char *name, const unsigned char *head, size_t n, Err *err) {
    if (n >= 3 && memcmp(head, "BZh", 3) == 0) return 0;
    const char *kind = other_compression(head, n);
    static const char *const tool[][2] = {{"gzip", "gzip -dc"},
                                          {"xz", "xz -dc"},
                                          {"zstd", "zstd -dc"},
                                          {"7z", "7z x -so"},
                                          {"zip", "unzip -p"}};
    if (kind) {
        const char *cmd = "";
        for (size_t i = 0; i < sizeof tool / sizeof tool[0]; i++)
            if (!strcmp(tool[i][0], kind)) cmd = tool[i][1];
        int in = strcmp(name, "-") != 0;
        return err_set(err, "%s: %s data, not bzip2 or XML (decompress it first: %s%s%s | %s)",
                       name, kind, cmd, in ? " " : "", in ? name : "", progname);
    }
    size_t len = strlen(name);
    int bz2_name = len >= 4 && !strcmp(name + len - 4, ".bz2");
    if (bz2_name && looks_like_xml(head, n))
        warn("%s: plain XML, not bzip2 (read as XML)", name);
    else if (bz2_name)
        return err_set(err, "%s: not bzip2 data (no \"BZh\" signature) and not XML", name);
    return 0;
}

/* Decode and parse; returns 0 or -1 with err. */
static int run(State *st, MwXml *wd, Err *err) {
    const Config *cfg = st->cfg;
    const char *name = cfg->input;
    int fd = 0;
    if (strcmp(name, "-") != 0) {
        fd = open(name, O_RDONLY);
        if (fd < 0) return err_set(err, "%s: %s", name, strerror(errno));
    }
    struct stat sb;
    uint64_t total = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0;
    progress_init(&st->progress, total);

    /* Look at the first bytes to tell bz2 from XML. */
    char head[8];
    ssize_t nh = read_full(fd, head, sizeof head);
    if (nh < 0) return err_set(err, "%s: read error: %s", name, strerror(errno));
    if (sniff(name, (const unsigned char *)head, (size_t)nh, err)) return -1;
    pthread_t relay_tid;
    int relay = 0;
    Relay rl;
    int rc = 0;
    if (nh >= 3 && memcmp(head, "BZh", 3) == 0) {
        int bzfd = fd;
        if (lseek(fd, 0, SEEK_SET) != 0) { /* a pipe: put the 3 bytes back */
            int pfd[2];
            if (pipe(pfd)) return err_set(err, "pipe: %s", strerror(errno));
            rl = (Relay){.in = fd, .out = pfd[1], .head = head, .nhead = (size_t)nh};
            if (pthread_create(&relay_tid, NULL, relay_main, &rl)) die("cannot create thread");
            relay = 1;
            bzfd = pfd[0];
        }
        Bz2ParOpts bo = {.nthreads = cfg->nthreads, .index_path = cfg->index, .name = name};
        Bz2Par *bz = bz2par_open(bzfd, &bo, err);
        if (!bz) return -1;
        const char *data;
        size_t len;
        int r;
        while ((r = bz2par_next(bz, &data, &len, err)) == 1) {
            if (mwxml_feed(wd, data, len, err)) {
                r = -1;
                break;
            }
            progress(st, bz2par_compressed_pos(bz), wd);
        }
        if (r == 0 && bz2par_trailing_garbage(bz))
            warn("%s: %llu bytes of trailing garbage after the last bz2 stream ignored", name,
                 (unsigned long long)bz2par_trailing_garbage(bz));
        bz2par_close(bz);
        if (relay) {
            close(bzfd); /* unblocks the relay if it is still writing */
            pthread_join(relay_tid, NULL);
        }
        rc = r < 0 ? -1 : mwxml_finish(wd, err);
    } else {
        if (cfg->index) warn("%s: not bz2 data, --index ignored", name);
        if (nh && mwxml_feed(wd, head, (size_t)nh, err)) return -1;
        static char buf[1 << 20];
        uint64_t pos = (uint64_t)nh;
        for (;;) {
            ssize_t r = read(fd, buf, sizeof buf);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) return err_set(err, "%s: read error: %s", name, strerror(errno));
            if (r == 0) break;
            if (mwxml_feed(wd, buf, (size_t)r, err)) return -1;
            pos += (uint64_t)r;
            progress(st, pos, wd);
        }
        rc = mwxml_finish(wd, err);
    }
    if (fd != 0) close(fd);
    return rc;
}

/* Options into cfg and st (the namespaces). Returns 1 when -h printed the
 * help (exit 0), else 0; bad options exit 2. */
static int parse_args(int argc, char **argv, Config *cfg, State *st) {
    CliCommon cc;
    cli_common_init(&cc);
    enum { O_INDEX = 256, O_NS, O_KEEPRED, O_NOSITE, O_STRICT, O_MAXPAGE };
    static const struct option longopts[] = {{"threads", required_argument, 0, 'j'},
                                             {"index", required_argument, 0, O_INDEX},
                                             {"ns", required_argument, 0, O_NS},
                                             {"keep-redirects", no_argument, 0, O_KEEPRED},
                                             {"no-siteinfo", no_argument, 0, O_NOSITE},
                                             {"strict", no_argument, 0, O_STRICT},
                                             {"max-page-bytes", required_argument, 0, O_MAXPAGE},
                                             CLI_LONGOPTS_COMMON};
    int c;
    const char *ns_arg = "0";
    while ((c = getopt_long(argc, argv, ":o:fj:qvhV", longopts, NULL)) != -1) {
        switch (c) {
        case O_INDEX:
            cfg->index = optarg;
            break;
        case O_NS:
            ns_arg = optarg;
            break;
        case O_KEEPRED:
            cfg->keep_redirects = 1;
            break;
        case O_NOSITE:
            cfg->no_siteinfo = 1;
            break;
        case O_STRICT:
            cfg->strict = 1;
            break;
        case O_MAXPAGE:
            if (cli_parse_u64(optarg, &cfg->max_text))
                cli_bad_usage("--max-page-bytes: bad size '%s'", optarg);
            break;
        case 'h':
            usage();
            return 1;
        default: {
            char f[96];
            snprintf(f, sizeof f, "(expat %s, libbz2 %s)", mwxml_expat_version(),
                     bz2par_lib_version());
            cli_common_opt(&cc, c, optarg, argv, f);
        }
        }
    }
    cfg->output = cc.output;
    cfg->force = cc.force;
    cfg->nthreads = cc.nthreads;
    if (optind < argc) cfg->input = argv[optind++];
    if (optind < argc) cli_bad_usage("only one DUMP may be given (got '%s' too)", argv[optind]);
    parse_ns_list(st, ns_arg);
    return 0;
}

/* Check the inputs, then open the output (a missing input is found before
 * the output is created); exits on an error. */
static void open_output(const Config *cfg, State *st) {
    Err err = {{0}};
    if (input_check(cfg->input, &err) || (cfg->index && input_check(cfg->index, &err)))
        die("%s", err.msg);
    if (writer_open(&st->out, cfg->output, cfg->force, &err)) die_code(EXIT_DATA, "%s", err.msg);
    st->out.keep_partial = 1;
    static char obuf[1 << 20];
    setvbuf(st->out.fp, obuf, _IOFBF, sizeof obuf);
    struct stat ost;
    if (fstat(fileno(st->out.fp), &ost) == 0 && S_ISFIFO(ost.st_mode))
        (void)fcntl(fileno(st->out.fp), F_SETPIPE_SZ, 1 << 20); /* fewer switches in a pipe */
}

/* After the run (rc, err): the namespace-name, UTF-8 and --strict checks,
 * the summary; returns rc, or -1 with err set when --strict fails it. */
static int finish(const Config *cfg, const State *st, const MwXmlStats *ws, int rc, double dt,
                  Err *err) {
    if (rc == 0 && st->nns_names && !st->site_seen)
        die_code(EXIT_USAGE, "--ns: namespace names need a <siteinfo> in the dump; use numbers");
    if (ws->bad_utf8)
        warn("%s: %llu invalid UTF-8 sequences replaced by U+FFFD", cfg->input,
             (unsigned long long)ws->bad_utf8);
    if (rc == 0 && cfg->strict && (ws->bad_utf8 || ws->too_large || ws->bad_number))
        rc = err_set(
            err,
            "%s: --strict: %llu pages too large, %llu with a bad <id> or <ns>, %llu invalid "
            "UTF-8 sequences",
            cfg->input, (unsigned long long)ws->too_large, (unsigned long long)ws->bad_number,
            (unsigned long long)ws->bad_utf8);
    info(3,
         "%llu pages read, %llu kept; skipped: %llu redirect, %llu namespace, %llu too-large, "
         "%llu bad-number; "
         "%llu invalid UTF-8 replaced; %.1f MB XML in %.2f s (%.1f MB/s)",
         (unsigned long long)ws->pages, (unsigned long long)st->kept,
         (unsigned long long)st->skip_redirect, (unsigned long long)st->skip_ns,
         (unsigned long long)ws->too_large, (unsigned long long)ws->bad_number,
         (unsigned long long)ws->bad_utf8, (double)ws->xml_bytes / 1e6, dt,
         dt > 0 ? (double)ws->xml_bytes / 1e6 / dt : 0.0);
    return rc;
}

int main(int argc, char **argv) {
    cli_init(argv[0]);
    /* the longest markup token: expat buffers one whole and parses it again
     * with every chunk, so its limit is far below a text line's */
    io_set_max_line(MAX_MARKUP_DEFAULT);
    Config cfg = {.input = "-", .max_text = 32u << 20};
    State st = {.cfg = &cfg};
    if (parse_args(argc, argv, &cfg, &st)) return EXIT_OK;
    open_output(&cfg, &st);

    Err err = {{0}};
    double t0 = now_sec();
    MwXmlOpts wo = {.name = cfg.input, .max_text = cfg.max_text};
    MwXml *wd = mwxml_create(&wo, on_page, on_site, &st);
    int rc = run(&st, wd, &err);
    progress_done(&st.progress);
    rc = finish(&cfg, &st, mwxml_stats(wd), rc, now_sec() - t0, &err);
    mwxml_destroy(wd);
    if (rc) die("%s", err.msg);
    if (writer_close(&st.out, &err)) die("%s", err.msg);
    buf_free(&st.line);
    free(st.urlbase);
    for (int i = 0; i < st.nns_names; i++)
        free(st.ns_names[i]);
    return EXIT_OK;
}
