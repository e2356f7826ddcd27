/* text_filter - keep the documents that look like running text.
 *
 *   text_filter [OPTIONS] [INPUT...]
 *   sent_split --lang hu hu.txt | text_filter -o hu.filtered.txt
 *
 * Reads the BERT layout (one sentence per line, a blank line between
 * documents) and writes the documents that pass filterdocs.py's twelve
 * checks (docfilter.h), with its Hungarian defaults, in the same layout.
 * Statistics in filterdocs.py's form go to stderr. Documents are checked
 * on -j threads in batches and written in input order by one thread,
 * which also does the order-dependent duplicate removal, so the output is
 * the same for every -j.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/cli.h"
#include "common/filter.h"
#include "tokenize/dedup.h"
#include "tokenize/docfilter.h"
#include "common/hash.h"
#include "common/io.h"
#include "tokenize/langid.h"
#include "common/pool.h"
#include "common/uniprop.h"
#include "common/utf8.h"

#define BATCH_BYTES (1u << 20)
#define BATCH_RECORDS 4096
#define READ_CHUNK (256u << 10)
#define MAX_WORKERS 1024
#define DEFAULT_DEDUP_MEMORY (256u << 20)
#define LANG_MAX_CHARS 10000 /* langdetect's max_text_length */

enum DedupMode { DEDUP_NONE, DEDUP_DOCS, DEDUP_SENTENCES };

/* A document in a batch: this header, then `len` bytes of sentences. */
typedef struct RecHdr {
    uint32_t file, nsent;
    uint64_t line, len;
} RecHdr;

/* Results beyond the checks': the pattern rules' verdicts (docfilter.h),
 * which come first and are not inverted by --invert. */
enum { R_EMPTIED = FC_COUNT, R_DROPPED, R_NOT_KEPT, R_COUNT };

/* The verdict on it in the batch output; then, with --drop-lines, the
 * `len` bytes of its remaining `nsent` lines; then (with --dedup
 * sentences) one hash per remaining sentence. */
typedef struct RecOut {
    uint64_t doc_hash, len;
    uint32_t result, nsent, dropped_lines;
} RecOut;

typedef struct State {
    FilterOpts fo;
    DocFilter *df;
    int nthreads, invert, identify;
    int fail_empty; /* --fail-if-none-kept */
    enum DedupMode dedup;
    size_t dedup_memory;
    Dedup seen;
    /* input */
    char **inputs;
    int ninputs, cur;
    FILE *fp;
    int fresh;   /* fp was just opened: its first bytes are checked */
    int nocache; /* --nocache: drop the input from the page cache */
    PageCache pc;
    char *chunk;
    DocSplit ds;
    Batch *filling;
    uint64_t bytes_read, docs_read;
    /* output */
    Writer out, rej;
    FilterCounts *counts; /* one per input */
    uint64_t dup_docs, dup_sents, emptied;
    Err err;
    LangId *lid;
    const char *lang; /* --langdetect LANG */
    FilterScratch scratch[MAX_WORKERS];
    PatternRules rules;
    RuleScratch rule_scratch[MAX_WORKERS];
    uint64_t pat_docs[R_COUNT - FC_COUNT], pat_lines;
    Progress progress;
} State;

static State st;

static void usage(void) {
    printf("Usage: %s [OPTIONS] [INPUT...]\n"
           "Keep the documents of a sentence-per-line text (blank line between documents)\n"
           "that pass the checks of TurkuNLP's filterdocs.py, with the Hungarian workflow's\n"
           "defaults. Reads stdin when no INPUT (or -) is given; writes stdout unless -o.\n\n"
           "Checks, in this order; the first failure rejects the document, ties pass.\n"
           "Each takes the value 'none' to switch it off. N is a whole number >= 0, X a\n"
           "share from 0 to 1:\n"
           "  -a, --avg-len N        min WORD_RE words per sentence (default 4)\n"
           "  -s, --min-sents N      min sentences (3)\n"
           "  -S, --max-sents N      max sentences (1000)\n"
           "  -t, --min-toks N       min whitespace-separated tokens (20)\n"
           "  -T, --max-toks N       max tokens (10000)\n"
           "  -n, --no-word-ratio X  max share of sentences without a word (0.2)\n"
           "  -p, --punct-ratio X    max share of ASCII punctuation characters (0.075)\n"
           "  -u, --upper-ratio X    max share of upper-case characters (0.1)\n"
           "  -d, --digit-ratio X    max share of digit characters (0.075)\n"
           "  -F, --foreign-ratio X  max share of letters outside the alphabet (0.02)\n"
           "  -w, --min-words N      min WORD_RE words (30)\n"
           "  -l, --langdetect LANG  the built-in language identifier must say LANG (hu)\n"
           "                         for the first 10000 characters; off when the model\n"
           "                         has no LANG\n\n"
           "Words and alphabet:\n"
           "  -W, --word-chars S     lower-case alphabet (Hungarian a-z and accented vowels);\n"
           "                         a word is \\b[UPPER]?[S]{2,}\\b with UPPER the upper-case\n"
           "                         forms of S; characters are taken literally\n"
           "      --language CODE    ja and ko use fixed kana/kanji or hangul alphabets and\n"
           "                         one-letter words (default hu)\n"
           "      --langid-model F   language model file (default: data/%s)\n\n"
           "Other options:\n"
           "Patterns (PCRE2 syntax, UTF-8; matched against each line, anywhere unless\n"
           "anchored with ^ or $; (?i) for caseless; each option repeatable, several\n"
           "patterns of one option are alternatives). They apply before the checks and\n"
           "are not inverted by --invert:\n"
           "      --drop-lines RE    remove the lines RE matches (a document left without\n"
           "                         lines is dropped)\n"
           "      --drop-docs RE     drop the documents with a line RE matches\n"
           "      --keep-docs RE     keep only the documents with a line RE matches\n\n"
           "  -i, --invert           write the documents that fail the checks instead\n"
           "  -L, --limit N          stop reading an input after N documents (per input, as\n"
           "                         filterdocs.py)\n"
           "      --fail-if-none-kept  documents in and none kept: exit 1 with the count each\n"
           "                         check rejected, and no output (a workflow's stage)\n"
           "      --rejected FILE    write the documents left out, each after a line\n"
           "                         '# <reason> <input>:<line>' (reason: fail-<check>,\n"
           "                         pass-all with --invert, or duplicate)\n"
           "      --dedup MODE       docs: drop a document identical to one written before;\n"
           "                         sentences: also remove from each written document the\n"
           "                         sentences that earlier written documents had (after\n"
           "                         the checks, which see the whole document; a document\n"
           "                         left without sentences is dropped). Texts are compared\n"
           "                         by 64-bit hashes\n"
           "      --dedup-memory SIZE  hash table size (default 256M = 25M texts; K/M/G);\n"
           "                         when 3/4 full, new texts are no longer remembered and\n"
           "                         a warning says so\n"
           "      --identify         print 'LANG<TAB>CONFIDENCE<TAB>line' for each line; no\n"
           "                         filtering\n"
           "  -j, --threads N        worker threads (default: the usable CPUs, %d here)\n"
           "      --nocache          drop each input file from the page cache as it is read,\n"
           "                         for the output to reuse the memory: for a file read\n"
           "                         once (the workflows pass it); output unchanged\n"
           "  -o, --output FILE      write to FILE atomically\n"
           "  -f, --force            overwrite existing output files\n"
           "      --max-line-bytes N  longest line, and document, held (default 64M)\n"
           "  -q, --quiet            fewer messages; -v, --verbose: more\n"
           "  -h, --help             show this help; -V, --version: show the version\n\n"
           "Lines end at \\n, \\r\\n or \\r; trailing whitespace is removed; invalid UTF-8\n"
           "is replaced by U+FFFD and counted. Statistics go to stderr in filterdocs.py's\n"
           "form (per input, and TOTAL for several). Exit status: 0 ok, 1 data or I/O\n"
           "error, 2 usage error or missing model.\n\n"
           "Example:\n"
           "  %s -j 8 --dedup docs --rejected hu.rejected -o hu.filtered hu.sentences\n",
           progname, LANGID_DEFAULT_FILE, cli_ncpus(), progname);
}

/* ---- option values ---- */

static int is_none(const char *s) { return strcasecmp(s, "none") == 0; }

/* ---- reading: files -> documents -> batches ---- */

static const char *input_name(int i) {
    return strcmp(st.inputs[i], "-") == 0 ? "stdin" : st.inputs[i];
}

static void sink(void *ctx, const char *doc, size_t len, size_t nsent, uint64_t line) {
    Batch *b = ((State *)ctx)->filling;
    RecHdr h = {(uint32_t)st.cur, (uint32_t)nsent, line, len};
    buf_append(&b->in, &h, sizeof h);
    buf_append(&b->in, doc, len);
    b->nrec++;
}

/* Finish the open input: last document, invalid UTF-8 note, close.
 * Returns -1 with st.err set when a line or document was too long. */
static int end_input(void) {
    if (st.ds.first_bad_line)
        warn("%s:%llu: invalid UTF-8 replaced by U+FFFD", input_name(st.cur),
             (unsigned long long)st.ds.first_bad_line);
    docsplit_finish(&st.ds);
    pagecache_finish(&st.pc);
    if (st.fp && st.fp != stdin) fclose(st.fp);
    st.fp = NULL;
    if (st.ds.too_long)
        return io_err_too_long(&st.err, input_name(st.cur), st.ds.too_long_line,
                               st.ds.too_long == 1 ? "line"
                                                   : "document (lines up to a blank line)");
    return 0;
}

static int fill(void *ctx, Batch *b) {
    st.filling = b;
    while (b->in.len < BATCH_BYTES && b->nrec < BATCH_RECORDS) {
        if (!st.fp) {
            if (st.cur + 1 >= st.ninputs) break;
            st.cur++;
            st.fp = xfopen_read(st.inputs[st.cur], &st.err);
            if (!st.fp) return -1;
            st.fresh = 1;
            pagecache_init(&st.pc, fileno(st.fp), st.nocache ? PAGECACHE_INPUT : PAGECACHE_OFF);
        }
        size_t n = fread(st.chunk, 1, READ_CHUNK, st.fp);
        if (n == 0 && ferror(st.fp))
            return err_set(&st.err, "%s: read error: %s", input_name(st.cur), strerror(errno));
        if (st.fresh && utf8_refuse_wide(input_name(st.cur), st.chunk, n, &st.err)) return -1;
        st.fresh = 0;
        st.bytes_read += n;
        pagecache_advance(&st.pc);
        if ((n == 0 || docsplit_feed(&st.ds, st.chunk, n)) && end_input()) return -1;
    }
    st.docs_read += b->nrec;
    progress_update(&st.progress, st.bytes_read, st.bytes_read, st.docs_read,
                    st.identify ? "lines" : "documents");
    return b->nrec > 0;
}

/* ---- checking: one batch on a worker ---- */

/* Check 12: the identifier's best language must be LANG. Text it cannot
 * judge (no letters) fails, as langdetect's exception does. Like
 * langdetect, only the first LANG_MAX_CHARS code points are read. */
static int lang_is(void *ctx, int worker, const char *text, size_t n) {
    LangScore sc;
    size_t cps = 0, i = 0;
    for (; i < n; i++)
        if (((unsigned char)text[i] & 0xC0) != 0x80 && ++cps > LANG_MAX_CHARS) break;
    n = i;
    return langid_identify(st.lid, text, n, &sc) == 0 && strcmp(sc.lang, st.lang) == 0;
}

/* --identify: "LANG<TAB>CONF<TAB>line" for the one-line record. */
static void identify_line(Batch *b, const char *line, size_t len) {
    LangScore sc;
    size_t n = len ? len - 1 : 0; /* without the '\n' */
    langid_identify(st.lid, line, n, &sc);
    char t[96];
    snprintf(t, sizeof t, "%s\t%.3f\t", sc.lang, sc.conf);
    buf_puts(&b->out, t);
    buf_append(&b->out, line, len);
}

static void work(void *ctx, int wid, Batch *b) {
    FilterScratch *s = &st.scratch[wid];
    const char *p = b->in.data, *end = b->in.data + b->in.len;
    while (p < end) {
        RecHdr h;
        memcpy(&h, p, sizeof h);
        const char *doc = p + sizeof h;
        p = doc + h.len;
        if (st.identify) {
            identify_line(b, doc, h.len);
            continue;
        }
        RecOut o = {0, h.len, 0, h.nsent, 0};
        const char *text = doc;
        if (st.rules.total) {
            RuleScratch *rs = &st.rule_scratch[wid];
            size_t nsent = h.nsent, dropped;
            RuleVerdict v = pattern_rules_apply(&st.rules, rs, doc, h.len, &nsent, &dropped);
            o.dropped_lines = (uint32_t)dropped;
            if (st.rules.n[PR_DROP_LINES]) {
                text = rs->kept.data, o.len = rs->kept.len, o.nsent = (uint32_t)nsent;
            }
            if (v != PR_KEEP) o.result = FC_COUNT + (uint32_t)v - PR_EMPTIED;
        }
        if (o.result == FC_PASS) o.result = docfilter_check(st.df, s, wid, text, o.len, NULL);
        if (st.dedup) o.doc_hash = hash_bytes(text, o.len);
        buf_append(&b->out, &o, sizeof o);
        if (st.rules.n[PR_DROP_LINES]) buf_append(&b->out, text, o.len);
        if (st.dedup != DEDUP_SENTENCES) continue;
        for (const char *q = text, *e = text + o.len; q < e;) {
            const char *nl = memchr(q, '\n', (size_t)(e - q));
            uint64_t sh = hash_bytes(q, (size_t)(nl - q));
            buf_append(&b->out, &sh, sizeof sh);
            q = nl + 1;
        }
    }
}

/* ---- writing: in input order ---- */

/* Write n bytes to an output; a short write records the first error,
 * which flush() then reports. */
static void put(Writer *w, const char *p, size_t n) {
    Err e;
    if (writer_write(w, p, n, &e) && !st.err.msg[0]) st.err = e;
}

static void write_rejected(const RecHdr *h, const char *doc, const char *reason) {
    if (!st.rej.fp) return;
    char t[512];
    int n = snprintf(t, sizeof t, "# %s %s:%llu\n", reason, input_name((int)h->file),
                     (unsigned long long)h->line);
    put(&st.rej, t, n < (int)sizeof t ? (size_t)n : sizeof t - 1);
    put(&st.rej, doc, h->len);
    put(&st.rej, "\n", 1);
}

static void note_full(int added) {
    static int warned;
    if (added < 0 && !warned) {
        warned = 1;
        warn("warning: --dedup table full (%zu texts); later texts are not remembered "
             "(raise --dedup-memory)",
             dedup_capacity(&st.seen));
    }
}

static uint64_t hash_at(const char *hashes, size_t i) {
    uint64_t h;
    memcpy(&h, hashes + i * sizeof h, sizeof h);
    return h;
}

/* Write the sentences of doc that no earlier written document had, then
 * remember them all. Returns the number written. */
static size_t write_new_sentences(const char *doc, size_t len, const char *hashes, uint32_t nsent) {
    size_t kept = 0, i = 0;
    for (const char *q = doc, *e = doc + len; q < e; i++) {
        const char *nl = memchr(q, '\n', (size_t)(e - q));
        if (dedup_has(&st.seen, hash_at(hashes, i))) {
            st.dup_sents++;
        } else {
            put(&st.out, q, (size_t)(nl - q) + 1);
            kept++;
        }
        q = nl + 1;
    }
    for (i = 0; i < nsent; i++)
        note_full(dedup_add(&st.seen, hash_at(hashes, i)));
    return kept;
}

static int flush(void *ctx, Batch *b) {
    if (st.identify) {
        put(&st.out, b->out.data, b->out.len);
        return st.err.msg[0] ? -1 : 0;
    }
    const char *p = b->in.data, *end = b->in.data + b->in.len;
    const char *o = b->out.data;
    while (p < end) {
        RecHdr h;
        RecOut r;
        memcpy(&h, p, sizeof h);
        const char *doc = p + sizeof h;
        p = doc + h.len;
        memcpy(&r, o, sizeof r);
        o += sizeof r;
        const char *text = doc;
        if (st.rules.n[PR_DROP_LINES]) text = o, o += r.len;
        const char *hashes = o;
        if (st.dedup == DEDUP_SENTENCES) o += (size_t)r.nsent * sizeof(uint64_t);
        st.pat_lines += r.dropped_lines;
        if (r.result >= FC_COUNT) {
            static const char *const reason[] = {"emptied", "drop-docs", "not-keep-docs"};
            st.pat_docs[r.result - FC_COUNT]++;
            write_rejected(&h, doc, reason[r.result - FC_COUNT]);
            continue;
        }
        FilterCounts *c = &st.counts[h.file];
        c->docs++;
        c->result[r.result]++;
        int keep = (r.result == FC_PASS) != st.invert;
        if (!keep) {
            write_rejected(&h, doc, filter_result_key((FilterCheck)r.result));
            continue;
        }
        if (st.dedup) {
            int added = dedup_add(&st.seen, r.doc_hash);
            if (added == 0) {
                st.dup_docs++;
                write_rejected(&h, doc, "duplicate");
                continue;
            }
            note_full(added);
        }
        if (st.dedup == DEDUP_SENTENCES) {
            if (!write_new_sentences(text, r.len, hashes, r.nsent)) {
                st.emptied++;
                continue;
            }
        } else {
            put(&st.out, text, r.len);
        }
        put(&st.out, "\n", 1);
        c->output++;
    }
    return st.err.msg[0] ? -1 : 0;
}

/* ---- the two outputs ---- */

/* -o and --rejected are both Writers (common/io.h), which remove their
 * temp files on die() and on signals; common/filter.c opens and closes
 * them as a pair. Refused here first: --rejected naming -o's file or
 * stdout. */
static void check_rejected(const char *output, const char *rejected) {
    if (!rejected) return;
    if (output && strcmp(output, rejected) == 0)
        cli_bad_usage("--rejected and -o name the same file");
    if (strcmp(rejected, "-") == 0) cli_bad_usage("--rejected needs a file name");
}

/* ---- report ---- */

static const char *base_name(const char *path) {
    if (strcmp(path, "-") == 0) return "stdin";
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* --fail-if-none-kept: documents came in and none went out, so the text is
 * not what the checks expect (another language, another format), and an
 * empty output would only fail the next stage. Exit 1 naming how many each
 * check rejected, before the output is renamed into place (none is left). */
static void refuse_empty(const FilterCounts *total, uint64_t pat_dropped) {
    if (!st.fail_empty || st.identify || total->output || !(total->docs + pat_dropped)) return;
    Buf why = {0};
    char t[128];
    for (int c = 1; c < FC_COUNT; c++)
        if (total->result[c]) {
            snprintf(t, sizeof t, "%s%s %llu", why.len ? ", " : "", filter_result_key(c),
                     (unsigned long long)total->result[c]);
            buf_puts(&why, t);
        }
    if (pat_dropped) {
        snprintf(t, sizeof t, "%spatterns %llu", why.len ? ", " : "",
                 (unsigned long long)pat_dropped);
        buf_puts(&why, t);
    }
    if (st.dup_docs) {
        snprintf(t, sizeof t, "%sduplicates %llu", why.len ? ", " : "",
                 (unsigned long long)st.dup_docs);
        buf_puts(&why, t);
    }
    die("no document kept of %llu (%s): nothing to write%s",
        (unsigned long long)(total->docs + pat_dropped), why.len ? why.data : "",
        total->result[FC_LANGDETECT] ? "; is --language the text's?" : "");
}

static void report(void *ctx, double secs) {
    FilterCounts total = {0};
    Buf r = {0};
    uint64_t pat_dropped = st.pat_docs[0] + st.pat_docs[1] + st.pat_docs[2];
    if (!st.identify) {
        for (int i = 0; i < st.ninputs; i++)
            filter_counts_add(&total, &st.counts[i]);
        refuse_empty(&total, pat_dropped);
        total = (FilterCounts){0};
    }
    if (display_level < 2) return;
    if (!st.identify) {
        for (int i = 0; i < st.ninputs; i++) {
            filter_report(&r, base_name(st.inputs[i]), &st.counts[i]);
            filter_counts_add(&total, &st.counts[i]);
        }
        if (st.ninputs > 1) filter_report(&r, "TOTAL", &total);
        if (progress_stderr_tty()) fputs(PROGRESS_CLEAR_LINE, stderr); /* another stage's line */
        fputs(r.data, stderr);
    }
    buf_clear(&r);
    char t[256];
    double mb = (double)st.bytes_read / 1e6;
    if (st.identify) {
        snprintf(t, sizeof t, "%llu lines identified", (unsigned long long)st.docs_read);
        buf_puts(&r, t);
    } else {
        uint64_t failed = total.docs - total.result[FC_PASS];
        snprintf(t, sizeof t, "%llu documents in, %llu out, %llu failed the checks",
                 (unsigned long long)(total.docs + pat_dropped), (unsigned long long)total.output,
                 (unsigned long long)failed);
        buf_puts(&r, t);
    }
    if (st.rules.total) {
        snprintf(t, sizeof t,
                 "; patterns dropped %llu lines and %llu documents (%llu left empty, %llu by "
                 "--drop-docs, %llu by --keep-docs)",
                 (unsigned long long)st.pat_lines, (unsigned long long)pat_dropped,
                 (unsigned long long)st.pat_docs[0], (unsigned long long)st.pat_docs[1],
                 (unsigned long long)st.pat_docs[2]);
        buf_puts(&r, t);
    }
    if (st.dedup) {
        snprintf(t, sizeof t, "; %llu duplicate documents dropped",
                 (unsigned long long)st.dup_docs);
        buf_puts(&r, t);
    }
    if (st.dedup == DEDUP_SENTENCES) {
        snprintf(t, sizeof t, ", %llu repeated sentences removed (%llu documents left empty)",
                 (unsigned long long)st.dup_sents, (unsigned long long)st.emptied);
        buf_puts(&r, t);
    }
    uint64_t pat_errors = 0;
    for (int i = 0; i < MAX_WORKERS; i++)
        pat_errors += st.rule_scratch[i].errors;
    if (pat_errors) {
        snprintf(t, sizeof t, "; %llu lines beyond PCRE2's match limits taken as not matching",
                 (unsigned long long)pat_errors);
        buf_puts(&r, t);
    }
    if (st.ds.bad_utf8) {
        snprintf(t, sizeof t, "; %llu invalid UTF-8 sequences replaced",
                 (unsigned long long)st.ds.bad_utf8);
        buf_puts(&r, t);
    }
    snprintf(t, sizeof t, "; %.1f MB in %.2f s (%.1f MB/s)", mb, secs, secs > 0 ? mb / secs : 0.0);
    buf_puts(&r, t);
    info(2, "%s", r.data);
    buf_free(&r);
}

/* Load the model for check 12 or --identify; a missing file is a setup
 * error (exit 2). Check 12 is switched off when the model lacks LANG. */
static void load_langid(const char *model, const char *lang) {
    char path[4096];
    if (!model) model = cli_data_path(LANGID_DEFAULT_FILE, path, sizeof path);
    FILE *fp = fopen(model, "rb");
    if (!fp) die_code(EXIT_USAGE, "language model %s: %s", model, strerror(errno));
    fclose(fp);
    st.lid = langid_load(model, &st.err);
    if (!st.lid) die("%s", st.err.msg);
    if (st.identify) return;
    if (langid_find(st.lid, lang) < 0) {
        warn("the language model %s has no '%s': --langdetect is off", model, lang);
        return; /* no callback: check 12 does not run */
    }
    st.lang = lang;
    docfilter_set_lang(st.df, lang_is, NULL);
}

/* ---- options ---- */

/* The options that are not State's. */
typedef struct Config {
    CliCommon cc;
    const char *rejected, *langdetect, *model;
    int64_t limit;
} Config;

/* One of the checks' options (-a -s -S -t -T -n -p -u -d -F -w) into fo:
 * "none" switches the check off. Returns 1 if c is one of them. */
static int parse_check_opt(FilterOpts *fo, int c, const char *arg) {
    static const struct {
        int opt, check;
        const char *name;
    } checks[] = {
        {'a', FC_AVG_LEN, "--avg-len"},         {'s', FC_MIN_SENTS, "--min-sents"},
        {'S', FC_MAX_SENTS, "--max-sents"},     {'t', FC_MIN_TOKS, "--min-toks"},
        {'T', FC_MAX_TOKS, "--max-toks"},       {'n', FC_NO_WORD_RATIO, "--no-word-ratio"},
        {'p', FC_PUNCT_RATIO, "--punct-ratio"}, {'u', FC_UPPER_RATIO, "--upper-ratio"},
        {'d', FC_DIGIT_RATIO, "--digit-ratio"}, {'F', FC_FOREIGN_RATIO, "--foreign-ratio"},
        {'w', FC_MIN_WORDS, "--min-words"}};
    for (size_t i = 0; i < sizeof checks / sizeof *checks; i++) {
        if (checks[i].opt != c) continue;
        fo->use[checks[i].check] = !is_none(arg);
        if (!fo->use[checks[i].check]) return 1;
        const char *w = checks[i].name;
        switch (c) {
        case 'a':
            fo->avg_len = cli_parse_int(arg, w, 0, LONG_MAX);
            break;
        case 's':
            fo->min_sents = cli_parse_int(arg, w, 0, LONG_MAX);
            break;
        case 'S':
            fo->max_sents = cli_parse_int(arg, w, 0, LONG_MAX);
            break;
        case 't':
            fo->min_toks = cli_parse_int(arg, w, 0, LONG_MAX);
            break;
        case 'T':
            fo->max_toks = cli_parse_int(arg, w, 0, LONG_MAX);
            break;
        case 'w':
            fo->min_words = cli_parse_int(arg, w, 0, LONG_MAX);
            break;
        case 'n':
            fo->no_word_ratio = cli_parse_double_in(arg, w, 0, 1);
            break;
        case 'p':
            fo->punct_ratio = cli_parse_double_in(arg, w, 0, 1);
            break;
        case 'u':
            fo->upper_ratio = cli_parse_double_in(arg, w, 0, 1);
            break;
        case 'd':
            fo->digit_ratio = cli_parse_double_in(arg, w, 0, 1);
            break;
        case 'F':
            fo->foreign_ratio = cli_parse_double_in(arg, w, 0, 1);
            break;
        }
        return 1;
    }
    return 0;
}

/* The long name of option value c in table o. */
static const char *longopts_name(const struct option *o, int c) {
    for (; o->name; o++)
        if (o->val == c) return o->name;
    return "?";
}

/* Options into cfg and st (the checks, --invert, --identify, --dedup).
 * Returns 1 when -h printed the help (exit 0), else 0; bad options exit 2. */
static int parse_args(int argc, char **argv, Config *cfg) {
    filter_opts_default(&st.fo);
    cli_common_init(&cfg->cc);
    st.pc.fd = -1;
    st.dedup_memory = DEFAULT_DEDUP_MEMORY;
    cfg->rejected = NULL, cfg->langdetect = "hu", cfg->model = NULL;
    cfg->limit = -1;
    enum {
        O_LANGUAGE = 256,
        O_MODEL,
        O_IDENTIFY,
        O_REJECTED,
        O_FAIL_EMPTY,
        O_DEDUP,
        O_DEDUP_MEM,
        O_DROP_LINES,
        O_DROP_DOCS,
        O_KEEP_DOCS,
        O_NOCACHE
    };
    static const struct option longopts[] = {{"avg-len", required_argument, 0, 'a'},
                                             {"digit-ratio", required_argument, 0, 'd'},
                                             {"foreign-ratio", required_argument, 0, 'F'},
                                             {"invert", no_argument, 0, 'i'},
                                             {"langdetect", required_argument, 0, 'l'},
                                             {"limit", required_argument, 0, 'L'},
                                             {"language", required_argument, 0, O_LANGUAGE},
                                             {"no-word-ratio", required_argument, 0, 'n'},
                                             {"punct-ratio", required_argument, 0, 'p'},
                                             {"min-sents", required_argument, 0, 's'},
                                             {"max-sents", required_argument, 0, 'S'},
                                             {"min-toks", required_argument, 0, 't'},
                                             {"max-toks", required_argument, 0, 'T'},
                                             {"upper-ratio", required_argument, 0, 'u'},
                                             {"min-words", required_argument, 0, 'w'},
                                             {"word-chars", required_argument, 0, 'W'},
                                             {"langid-model", required_argument, 0, O_MODEL},
                                             {"identify", no_argument, 0, O_IDENTIFY},
                                             {"rejected", required_argument, 0, O_REJECTED},
                                             {"fail-if-none-kept", no_argument, 0, O_FAIL_EMPTY},
                                             {"dedup", required_argument, 0, O_DEDUP},
                                             {"dedup-memory", required_argument, 0, O_DEDUP_MEM},
                                             {"drop-lines", required_argument, 0, O_DROP_LINES},
                                             {"drop-docs", required_argument, 0, O_DROP_DOCS},
                                             {"keep-docs", required_argument, 0, O_KEEP_DOCS},
                                             {"nocache", no_argument, 0, O_NOCACHE},
                                             {"threads", required_argument, 0, 'j'},
                                             CLI_LONGOPTS_COMMON};
    FilterOpts *fo = &st.fo;
    int c;
    while ((c = getopt_long(argc, argv, ":a:d:F:il:L:n:p:s:S:t:T:u:w:W:j:o:fqvhV", longopts,
                            NULL)) != -1) {
        if (parse_check_opt(fo, c, optarg)) continue;
        switch (c) {
        case 'i':
            st.invert = 1;
            break;
        case 'l':
            cfg->langdetect = is_none(optarg) ? NULL : optarg;
            break;
        case 'L':
            cfg->limit = cli_parse_int(optarg, "--limit", 0, LONG_MAX);
            break;
        case O_LANGUAGE:
            fo->language = optarg;
            break;
        case 'W':
            fo->word_chars = optarg;
            fo->word_chars_given = 1;
            break;
        case O_MODEL:
            cfg->model = optarg;
            break;
        case O_IDENTIFY:
            st.identify = 1;
            break;
        case O_FAIL_EMPTY:
            st.fail_empty = 1;
            break;
        case O_NOCACHE:
            st.nocache = 1;
            break;
        case O_REJECTED:
            cfg->rejected = optarg;
            break;
        case O_DEDUP:
            if (strcmp(optarg, "docs") == 0 || strcmp(optarg, "documents") == 0)
                st.dedup = DEDUP_DOCS;
            else if (strcmp(optarg, "sentences") == 0)
                st.dedup = DEDUP_SENTENCES;
            else if (is_none(optarg))
                st.dedup = DEDUP_NONE;
            else
                cli_bad_usage("--dedup: expected docs, sentences or none, got '%s'", optarg);
            break;
        case O_DEDUP_MEM: {
            uint64_t v;
            if (cli_parse_u64(optarg, &v) || v < DEDUP_MIN_BYTES || v > SIZE_MAX / 2)
                cli_bad_usage(
                    "--dedup-memory: expected a size of at least 1K (K/M/G suffixes), got '%s'",
                    optarg);
            st.dedup_memory = (size_t)v;
            break;
        }
        case O_DROP_LINES:
        case O_DROP_DOCS:
        case O_KEEP_DOCS:
            if (pattern_rules_add(&st.rules, c - O_DROP_LINES, optarg, &st.err))
                cli_bad_usage("--%s: %s", longopts_name(longopts, c), st.err.msg);
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
    st.nthreads = cfg->cc.nthreads;
    if (st.identify && st.rules.total) cli_bad_usage("--identify takes no patterns");
    return 0;
}

/* The inputs names[0..n) (stdin when n is 0): "-" at most once (exit 2),
 * and each file readable before any output is opened (exit 1). */
static void set_inputs(char **names, int n) {
    static char *stdin_only[] = {"-"};
    st.inputs = n ? names : stdin_only;
    st.ninputs = n ? n : 1;
    st.cur = -1;
    int nstdin = 0;
    for (int i = 0; i < st.ninputs; i++) {
        if (strcmp(st.inputs[i], "-") == 0) {
            if (++nstdin > 1) cli_bad_usage("stdin (-) given more than once");
            continue;
        }
        if (input_check(st.inputs[i], &st.err)) die("%s", st.err.msg);
    }
}

/* ---- setup and teardown ---- */

/* The filter, the language model, the dedup table and the reading state,
 * from the options. */
static void state_init(const Config *cfg) {
    FilterOpts *fo = &st.fo;
    fo->use[FC_LANGDETECT] = cfg->langdetect != NULL && !st.identify;
    st.df = docfilter_create(fo, &st.err);
    if (!st.df) cli_bad_usage("%s", st.err.msg);
    if (fo->use[FC_LANGDETECT] || st.identify) load_langid(cfg->model, cfg->langdetect);
    if (st.dedup) dedup_init(&st.seen, st.dedup_memory);
    st.counts = xcalloc((size_t)st.ninputs, sizeof *st.counts);
    st.chunk = xmalloc(READ_CHUNK);
    st.ds.limit = cfg->limit;
    st.ds.lines = st.identify;
    st.ds.sink = sink;
    st.ds.ctx = &st;
}

static void state_free(void) {
    docfilter_destroy(st.df);
    if (st.lid) langid_free(st.lid);
    if (st.dedup) dedup_free(&st.seen);
    for (int i = 0; i < MAX_WORKERS; i++) {
        filter_scratch_free(&st.scratch[i]);
        rule_scratch_free(&st.rule_scratch[i]);
    }
    pattern_rules_free(&st.rules);
    docsplit_free(&st.ds);
    free(st.counts);
    free(st.chunk);
}

int main(int argc, char **argv) {
    cli_init(argv[0]);
    static Config cfg;
    if (parse_args(argc, argv, &cfg)) return EXIT_OK;
    set_inputs(argv + optind, argc - optind);
    state_init(&cfg);
    check_rejected(cfg.cc.output, cfg.rejected);
    FilterRun run = {.output = cfg.cc.output,
                     .side_output = cfg.rejected,
                     .force = cfg.cc.force,
                     .inputs = st.inputs,
                     .ninputs = st.ninputs,
                     .nthreads = st.nthreads,
                     .ops = {fill, work, flush},
                     .ctx = &st,
                     .out = &st.out,
                     .side = &st.rej,
                     .progress = &st.progress,
                     .err = &st.err,
                     .report = report};
    filter_run(&run);
    state_free();
    return EXIT_OK;
}
