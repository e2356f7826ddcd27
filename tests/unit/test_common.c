/* test_common.c - common/: UTF-8 repair, JSON write/walk, number parsing,
 * the ordered pool (same output for every thread count), the line reader
 * across chunk-sized lines, the atomic writer, and a filter's run
 * (filter_run: main and side output, report). */
#include <sys/stat.h>
#include <unistd.h>

#include "tests/test.h"
#include "common/buf.h"
#include "common/cli.h"
#include "common/filter.h"
#include "common/io.h"
#include "common/json.h"
#include "common/pool.h"
#include "common/utf8.h"

static void test_utf8(void) {
    Buf b = {0};
    size_t bad =
        utf8_append_repair(&b, "a\xC3\xA9\xE2\x82z\xED\xA0\x80\xF4\x90\x80\x80\xC0\xAF", 16);
    test_str_eq("repair maximal subparts", b.data,
                "a\xC3\xA9\xEF\xBF\xBDz\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
                "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    test_cond("repair count", bad == 10);
    test_cond("valid prefix", utf8_valid_prefix("ab\xC3\xA9\xFF", 5) == 4);
    test_cond("boundary drops incomplete tail", utf8_boundary("ab\xE2\x82", 4) == 2);
    test_cond("boundary keeps complete", utf8_boundary("ab\xE2\x82\xAC", 5) == 5);
    test_cond("boundary keeps ascii", utf8_boundary("abc", 3) == 3);
    buf_free(&b);
}

static void test_wide(void) {
    static const char le[] = "<\0m\0e\0d\0i\0a\0w\0i\0k\0i\0>\0\n\0", be[] = "\0<\0p\0a\0g\0e\0>";
    static const char u32[] = "a\0\0\0b\0\0\0c\0\0\0\n\0\0\0";
    test_cond("UTF-16 BOM", !strcmp(utf8_wide_encoding("\xFF\xFE"
                                                       "a\0",
                                                       4),
                                    "UTF-16"));
    test_cond("UTF-16 BOM (big-endian)", !strcmp(utf8_wide_encoding("\xFE\xFF\0a", 4), "UTF-16"));
    test_cond("UTF-32 BOM", !strcmp(utf8_wide_encoding("\xFF\xFE\0\0a\0\0\0", 8), "UTF-32"));
    test_cond("UTF-16LE without BOM", !strcmp(utf8_wide_encoding(le, sizeof le - 1), "UTF-16"));
    test_cond("UTF-16BE without BOM", !strcmp(utf8_wide_encoding(be, sizeof be - 1), "UTF-16"));
    test_cond("UTF-32LE without BOM", !strcmp(utf8_wide_encoding(u32, sizeof u32 - 1), "UTF-32"));
    test_cond("UTF-8", utf8_wide_encoding("Alma \xC3\xA9s k\xC3\xB6rte.\n", 17) == NULL);
    test_cond("UTF-8 with BOM", utf8_wide_encoding("\xEF\xBB\xBF"
                                                   "abc",
                                                   6) == NULL);
    test_cond("one NUL in UTF-8 text", utf8_wide_encoding("ab\0defgh", 9) == NULL);
    test_cond("empty", utf8_wide_encoding("", 0) == NULL);
    Err e;
    test_cond("refusal message",
              utf8_refuse_wide("x.txt", le, sizeof le - 1, &e) == -1 &&
                  !strcmp(e.msg, "x.txt: UTF-16 text (convert it to UTF-8, e.g. iconv -f "
                                 "UTF-16 -t UTF-8)"));
    test_cond("UTF-8 passes", utf8_refuse_wide("x.txt", "abc", 3, &e) == 0);
}

static void test_quote(void) {
    char q[UTF8_QUOTE_CAP];
    test_cond("printable as is", !strcmp(utf8_quote(q, sizeof q, "izé. =x", 8), "izé. =x"));
    test_cond("ESC, CR and backslash escaped, tab kept",
              !strcmp(utf8_quote(q, sizeof q, "\033[2J\r\tb\\", 8), "\\x1B[2J\\x0D\tb\\\\"));
    test_cond("invalid UTF-8 and C1 escaped",
              !strcmp(utf8_quote(q, sizeof q, "\xFF\xC2\x9B", 3), "\\xFF\\xC2\\x9B"));
    char big[200];
    memset(big, 'a', sizeof big);
    utf8_quote(q, sizeof q, big, sizeof big);
    test_cond("long text cut with ...", strlen(q) < sizeof q && !strcmp(q + strlen(q) - 3, "..."));
    char tiny[8];
    test_cond("cut never splits an escape",
              !strcmp(utf8_quote(tiny, sizeof tiny, "\x01\x02", 2), "\\x01..."));
    test_cond("cut on a character boundary",
              !strcmp(utf8_quote(tiny, sizeof tiny, "ab\xC3\xA9\xC3\xA9", 6), "ab\xC3\xA9..."));
}

static void test_json(void) {
    Buf b = {0};
    json_append_string(&b, "a\"b\\c\n\x01\xC3\xA9\xFF", 10);
    test_str_eq("json escape", b.data, "\"a\\\"b\\\\c\\n\\u0001\xC3\xA9\xEF\xBF\xBD\"");
    buf_clear(&b);
    json_append_string_ascii(&b, "\xC3\xA9\xF0\x9F\x98\x80\x7F\"", 8);
    test_str_eq("json ensure_ascii like Python", b.data, "\"\\u00e9\\ud83d\\ude00\\u007f\\\"\"");

    const char *rec = " {\"id\":12, \"t\":\"x\\\"}\", \"n\":{\"a\":[1,{\"b\":\"]\"}]}, "
                      "\"u\":\"\\u00e9\\ud83d\\ude00\\/\"} ";
    JsonIter it;
    const char *k, *v;
    size_t kn, vn;
    test_cond("iter init", json_iter_init(&it, rec, strlen(rec), '{') == 0);
    int n = 0;
    int64_t id = 0;
    Buf t = {0}, u = {0};
    while (json_iter_next(&it, &k, &kn, &v, &vn) == 1) {
        n++;
        if (json_key_is(k, kn, "id")) json_to_i64(v, vn, &id);
        if (json_key_is(k, kn, "t")) json_decode_string(&t, v, vn);
        if (json_key_is(k, kn, "u")) json_decode_string(&u, v, vn);
        if (json_key_is(k, kn, "n"))
            test_mem_eq("nested span", v, vn, "{\"a\":[1,{\"b\":\"]\"}]}", 19);
    }
    test_cond("members", n == 4 && !it.error);
    test_cond("int", id == 12);
    test_str_eq("string with escaped quote", t.data, "x\"}");
    test_str_eq("unicode escapes", u.data, "\xC3\xA9\xF0\x9F\x98\x80/");
    const char *bad[] = {"{\"a\":1", "{\"a\" 1}", "{\"a\":1} x", "[1,2]", "{\"a\":\"x}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int r = json_iter_init(&it, bad[i], strlen(bad[i]), '{');
        if (r == 0)
            while ((r = json_iter_next(&it, &k, &kn, &v, &vn)) == 1) {
            }
        test_cond("malformed JSON detected", r == -1 && it.error);
    }
    /* keys with escapes, a byte order mark, numbers as RFC 8259 has them */
    const char *esc = "\xef\xbb\xbf{\"hidden\\u005fsize\": 32, \"\\ud83d\\ude00\": 1}";
    int found = 0, emoji = 0;
    test_cond("a byte order mark before the object",
              json_iter_init(&it, esc, strlen(esc), '{') == 0);
    while (json_iter_next(&it, &k, &kn, &v, &vn) == 1) {
        found += json_key_is(k, kn, "hidden_size");
        emoji += json_key_is(k, kn, "\xF0\x9F\x98\x80");
    }
    test_cond("\\u005f in a key is _", found == 1 && !it.error);
    test_cond("a surrogate pair in a key is one character", emoji == 1);
    const char *good_num[] = {"0", "-0", "32", "-1.5", "3.2e1", "1E-3", "0.25"};
    const double want_num[] = {0, 0, 32, -1.5, 32, 0.001, 0.25};
    for (size_t i = 0; i < sizeof good_num / sizeof good_num[0]; i++) {
        double x = -99;
        test_cond("a JSON number",
                  json_number(good_num[i], strlen(good_num[i]), &x) == 0 && x == want_num[i]);
    }
    const char *bad_num[] = {"NaN", "nan",  "Infinity", "-Infinity", "032",   "+1", ".5",
                             "1.",  "0x10", "1e",       "--1",       "1e400", "",   "-"};
    for (size_t i = 0; i < sizeof bad_num / sizeof bad_num[0]; i++) {
        double x;
        test_cond("not a JSON number", json_number(bad_num[i], strlen(bad_num[i]), &x) == -1);
    }
    test_cond("leading zeros are no JSON integer", json_to_i64("012", 3, &id) == -1);
    test_cond("... but a quoted id may have them", json_to_i64("\"012\"", 5, &id) == 0 && id == 12);
    test_cond("json_line", json_line("a\nb\nc", 0) == 1 && json_line("a\nb\nc", 4) == 3);
    buf_free(&b), buf_free(&t), buf_free(&u);
}

static void test_numbers(void) {
    uint64_t v;
    test_cond("plain", cli_parse_u64("123", &v) == 0 && v == 123);
    test_cond("K", cli_parse_u64("4K", &v) == 0 && v == 4096);
    test_cond("M", cli_parse_u64("32M", &v) == 0 && v == 32u << 20);
    test_cond("G", cli_parse_u64("2G", &v) == 0 && v == 2ull << 30);
    test_cond("junk", cli_parse_u64("12x", &v) == -1);
    test_cond("empty", cli_parse_u64("", &v) == -1);
    test_cond("overflow", cli_parse_u64("99999999999999999999", &v) == -1);
    test_cond("overflow by suffix", cli_parse_u64("17179869184G", &v) == -1);
}

/* ---- pool: batches of integers, squared, concatenated in order ---- */
typedef struct PoolCtx {
    int next, limit;
    Buf out;
} PoolCtx;

static int pfill(void *ctx, Batch *b) {
    PoolCtx *c = ctx;
    for (int i = 0; i < 7 && c->next < c->limit; i++, c->next++) {
        buf_append(&b->in, &c->next, sizeof c->next);
        b->nrec++;
    }
    return b->nrec > 0;
}

static void pwork(void *ctx, int worker, Batch *b) {
    (void)ctx;
    (void)worker;
    for (size_t i = 0; i < b->nrec; i++) {
        int x;
        memcpy(&x, b->in.data + i * sizeof x, sizeof x);
        if (x % 5 == 0) usleep(50); /* uneven work to shuffle finishing order */
        char t[32];
        snprintf(t, sizeof t, "%d,", x * x);
        buf_puts(&b->out, t);
        b->counts[0]++;
    }
}

static int pflush(void *ctx, Batch *b) {
    PoolCtx *c = ctx;
    buf_append(&c->out, b->out.data, b->out.len);
    return 0;
}

static void test_pool(void) {
    PoolOps ops = {pfill, pwork, pflush};
    PoolCtx ref = {.limit = 500};
    test_cond("pool inline", pool_run(1, &ops, &ref) == 0);
    for (int nt = 2; nt <= 8; nt *= 2) {
        PoolCtx c = {.limit = 500};
        test_cond("pool threads", pool_run(nt, &ops, &c) == 0);
        test_mem_eq("pool output identical for every thread count", c.out.data, c.out.len,
                    ref.out.data, ref.out.len);
        buf_free(&c.out);
    }
    test_cond("pool result", strncmp(ref.out.data, "0,1,4,9,16,", 11) == 0);
    buf_free(&ref.out);
}

static void test_reader_writer(void) {
    char dir[] = "/tmp/wbtestXXXXXX";
    test_cond("mkdtemp", mkdtemp(dir) != NULL);
    char path[256], path2[256];
    snprintf(path, sizeof path, "%s/a.txt", dir);
    snprintf(path2, sizeof path2, "%s/b.txt", dir);
    Writer w;
    Err err;
    test_cond("writer open", writer_open(&w, path, 0, &err) == 0);
    test_cond("temp name", access(path, F_OK) != 0);
    /* a 3 MB line (longer than the reader's 1 MB chunk), an empty line, a
     * line with a NUL, and a last line without '\n' */
    for (int i = 0; i < 3 << 20; i++)
        fputc('a' + i % 26, w.fp);
    fputs("\n\nx", w.fp);
    fputc(0, w.fp);
    fputs("y\nlast", w.fp);
    test_cond("writer close", writer_close(&w, &err) == 0);
    test_cond("renamed into place", access(path, F_OK) == 0);
    test_cond("refuse overwrite",
              writer_open(&w, path, 0, &err) == -1 && strstr(err.msg, "already exists"));
    FILE *f = fopen(path2, "w");
    fputs("second\n", f);
    fclose(f);

    char *inputs[] = {path, path2};
    Reader r;
    reader_init(&r, inputs, 2);
    const char *line;
    size_t len;
    int n = 0;
    size_t lens[8];
    while (n < 8 && reader_next_line(&r, &line, &len, &err) == 1)
        lens[n++] = len;
    test_cond("line count", n == 5);
    test_cond("long line", n > 0 && lens[0] == 3u << 20);
    test_cond("empty line", n > 1 && lens[1] == 0);
    test_cond("NUL kept", n > 2 && lens[2] == 3);
    test_cond("last line without newline", n > 3 && lens[3] == 4);
    test_cond("second file", n > 4 && lens[4] == 6 && r.line == 1);
    reader_free(&r);

    char *missing[] = {dir};
    char nope[300];
    snprintf(nope, sizeof nope, "%s/nope", dir);
    missing[0] = nope;
    reader_init(&r, missing, 1);
    test_cond("missing input",
              reader_next_line(&r, &line, &len, &err) == -1 && strstr(err.msg, "No such file"));
    reader_free(&r);

    test_cond("input_check: a file", input_check(path, &err) == 0);
    test_cond("input_check: stdin", input_check("-", &err) == 0);
    test_cond("input_check: missing",
              input_check(nope, &err) == -1 && strstr(err.msg, "/nope: No such file"));
    test_cond("input_check: a directory",
              input_check(dir, &err) == -1 && strstr(err.msg, "Is a directory"));
    /* a FIFO without a writer: an open() would wait for one */
    char fifo[300];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    test_cond("mkfifo", mkfifo(fifo, 0600) == 0);
    test_cond("input_check: a FIFO passes without being opened", input_check(fifo, &err) == 0);
    unlink(fifo);

    /* a file this process never read (one it read is never replaced) */
    char path3[256];
    snprintf(path3, sizeof path3, "%s/c.txt", dir);
    f = fopen(path3, "w");
    fputs("second\n", f);
    fclose(f);
    test_cond("abort open", writer_open(&w, path3, 1, &err) == 0);
    if (w.fp) fputs("partial", w.fp);
    writer_abort(&w);
    f = fopen(path3, "r");
    char buf[16] = {0};
    test_cond("abort keeps old file",
              f && fgets(buf, sizeof buf, f) && strcmp(buf, "second\n") == 0);
    if (f) fclose(f);
    unlink(path);
    unlink(path2);
    unlink(path3);
    rmdir(dir);
}

/* A filter over the numbers 0..FR_N-1: work squares them, flush writes
 * "n\n" to the main output and every tenth to the side output. */
#define FR_N 1000
typedef struct FrState {
    int next, reported;
    uint64_t flushed;
    Writer out, side;
    Progress progress;
    Err err;
} FrState;

static int fr_fill(void *ctx, Batch *b) {
    FrState *st = ctx;
    while (st->next < FR_N && b->nrec < 7) {
        buf_append(&b->in, &st->next, sizeof st->next);
        st->next++, b->nrec++;
    }
    return b->nrec > 0;
}

static void fr_work(void *ctx, int worker, Batch *b) {
    for (size_t i = 0; i < b->nrec; i++) {
        int v;
        memcpy(&v, b->in.data + i * sizeof v, sizeof v);
        char t[32];
        snprintf(t, sizeof t, "%d\n", v * v);
        buf_puts(&b->out, t);
    }
}

static int fr_flush(void *ctx, Batch *b) {
    FrState *st = ctx;
    st->flushed += b->nrec;
    if (b->seq % 10 == 0 && writer_write(&st->side, b->out.data, b->out.len, &st->err)) return -1;
    return writer_write(&st->out, b->out.data, b->out.len, &st->err);
}

static void fr_report(void *ctx, double secs) {
    FrState *st = ctx;
    st->reported = st->flushed == FR_N && secs >= 0 && st->out.fp != NULL;
}

static void test_filter_run(void) {
    char dir[] = "/tmp/wbtestXXXXXX";
    test_cond("mkdtemp", mkdtemp(dir) != NULL);
    char out[256], side[256];
    Buf want = {0};
    for (int v = 0; v < FR_N; v++) {
        char t[32];
        snprintf(t, sizeof t, "%d\n", v * v);
        buf_puts(&want, t);
    }
    for (int threads = 1; threads <= 4; threads += 3) {
        static FrState st;
        memset(&st, 0, sizeof st);
        snprintf(out, sizeof out, "%s/out%d.txt", dir, threads);
        snprintf(side, sizeof side, "%s/side%d.txt", dir, threads);
        FilterRun r = {.output = out,
                       .side_output = side,
                       .nthreads = threads,
                       .ops = {fr_fill, fr_work, fr_flush},
                       .ctx = &st,
                       .out = &st.out,
                       .side = &st.side,
                       .progress = &st.progress,
                       .err = &st.err,
                       .report = fr_report};
        filter_run(&r);
        test_cond("report called with the output open, after every record", st.reported);
        FILE *f = fopen(out, "rb");
        test_cond("output in place", f != NULL);
        char got[8192];
        size_t n = f ? fread(got, 1, sizeof got, f) : 0;
        if (f) fclose(f);
        test_mem_eq("output in input order for every -j", got, n, want.data, want.len);
        test_cond("side output in place", access(side, F_OK) == 0);
        unlink(out), unlink(side);
    }
    rmdir(dir);
    buf_free(&want);
}

/* fmt_fit and err_set: a long message keeps its end (the reason), cut in
 * the middle of its longest word, never inside a UTF-8 character. */
static void test_fit(void) {
    char path[700], b[64];
    memset(path, 'a', sizeof path - 1);
    path[sizeof path - 1] = '\0';
    path[300] = 'Z';
    Err e;
    err_set(&e, "%s: No such file or directory", path);
    size_t n = strlen(e.msg);
    test_cond("err_set: a 700-byte path fits msg", n == sizeof e.msg - 1);
    test_cond("... the reason kept", strstr(e.msg, "aaa: No such file or directory") && n >= 30 &&
                                         !strcmp(e.msg + n - 25, "No such file or directory"));
    test_cond("... the path's middle cut with ...", strstr(e.msg, "a...a") && !strchr(e.msg, 'Z'));
    test_cond("fmt_fit: short messages untouched",
              fmt_fit(b, sizeof b, "%s: %d", "x.txt", 7) == 8 && !strcmp(b, "x.txt: 7"));
    fmt_fit(b, sizeof b, "%s and %s: %s", "/short", path, "Permission denied");
    test_cond("fmt_fit: the longest word is cut, the short one kept",
              strlen(b) == sizeof b - 1 && !strncmp(b, "/short and aaa", 14) && strstr(b, "...") &&
                  strstr(b, ": Permission denied"));
    char u[400] = "";
    for (int i = 0; i < 150; i++)
        strcat(u, "\xc3\xa9"); /* é */
    fmt_fit(b, sizeof b, "%s: gone", u);
    test_cond("fmt_fit: a UTF-8 word cut between characters",
              utf8_valid_prefix(b, strlen(b)) == strlen(b) && strstr(b, "...") &&
                  strstr(b, ": gone"));
    char words[600] = "";
    for (int i = 0; i < 100; i++)
        strcat(words, "word ");
    fmt_fit(b, sizeof b, "%sreason", words);
    test_cond("fmt_fit: no long word: the middle of the message goes, the end stays",
              strlen(b) == sizeof b - 1 && strstr(b, "...") &&
                  !strcmp(b + strlen(b) - 6, "reason"));
}

/* The longest line (--max-line-bytes): a line at the limit passes, one
 * byte more is an error naming file and line, whatever the reads, and the
 * buffer never grows past the limit and two read chunks. */
static void test_line_limit(void) {
    char sz[32];
    test_str_eq("size 64 MiB", io_size_str((size_t)64 << 20, sz), "64 MiB");
    test_str_eq("size 512 KiB", io_size_str(512 << 10, sz), "512 KiB");
    test_str_eq("size 1000 bytes", io_size_str(1000, sz), "1000 bytes");
    test_cond("the default", io_max_line() == IO_MAX_LINE_DEFAULT);

    char dir[] = "/tmp/wbtestXXXXXX";
    test_cond("mkdtemp", mkdtemp(dir) != NULL);
    char ok[256], bad[256], last[256], huge[256];
    snprintf(ok, sizeof ok, "%s/ok.txt", dir);
    snprintf(bad, sizeof bad, "%s/bad.txt", dir);
    snprintf(last, sizeof last, "%s/last.txt", dir);
    snprintf(huge, sizeof huge, "%s/huge.txt", dir);
    FILE *f = fopen(ok, "w");
    for (int i = 0; i < 1000; i++)
        fputc('a', f);
    fputs("\nb\n", f);
    fclose(f);
    f = fopen(bad, "w");
    fputs("first\n", f);
    for (int i = 0; i < 1001; i++)
        fputc('a', f);
    fputs("\n", f);
    fclose(f);
    f = fopen(last, "w"); /* a last line without '\n', one byte too long */
    for (int i = 0; i < 1001; i++)
        fputc('a', f);
    fclose(f);
    f = fopen(huge, "w"); /* 10 MB, no newline */
    for (int i = 0; i < 10 << 20; i++)
        fputc('z', f);
    fclose(f);

    io_set_max_line(1000);
    Err err;
    const char *line;
    size_t len;
    Reader r;
    char *in_ok[] = {ok}, *in_bad[] = {bad}, *in_last[] = {last}, *in_huge[] = {huge};
    reader_init(&r, in_ok, 1);
    test_cond("a line of exactly the limit",
              reader_next_line(&r, &line, &len, &err) == 1 && len == 1000);
    test_cond("... then the next", reader_next_line(&r, &line, &len, &err) == 1 && len == 1);
    reader_free(&r);
    char want[512];
    reader_init(&r, in_bad, 1);
    test_cond("a first line", reader_next_line(&r, &line, &len, &err) == 1);
    test_cond("one byte over the limit: an error", reader_next_line(&r, &line, &len, &err) == -1);
    snprintf(want, sizeof want,
             "%s:2: line longer than 1000 bytes (--max-line-bytes raises the limit)", bad);
    test_str_eq("... naming the file, the line and the option", err.msg, want);
    reader_free(&r);
    reader_init(&r, in_last, 1);
    test_cond("a last line without '\\n' over the limit",
              reader_next_line(&r, &line, &len, &err) == -1 && strstr(err.msg, ":1: line longer"));
    reader_free(&r);
    io_set_max_line(1 << 20);
    reader_init(&r, in_huge, 1);
    test_cond("10 MB without a newline, limit 1 MiB: an error",
              reader_next_line(&r, &line, &len, &err) == -1 && strstr(err.msg, "1 MiB"));
    test_cond("... after buffering no more than the limit and two read chunks",
              r.cap <= (3u << 20)); /* the read chunk is 1 MiB */
    reader_free(&r);

    Buf b = {0};
    test_cond("read_text_file: lines within the limit", read_text_file(ok, &b, &err) == 0);
    test_cond("... whole", b.len == 1003);
    buf_clear(&b);
    io_set_max_line(1000);
    test_cond("read_text_file: a line over the limit",
              read_text_file(bad, &b, &err) == -1 && strstr(err.msg, "bad.txt:2: line longer"));
    buf_clear(&b);
    io_set_max_line(1 << 20);
    test_cond("read_text_file: 10 MB without a newline",
              read_text_file(huge, &b, &err) == -1 && strstr(err.msg, "huge.txt:1: line longer"));
    test_cond("... stops reading near the limit", b.len < (2u << 20));
    buf_clear(&b);
    test_cond("read_file_max: over the maximum",
              read_file_max(huge, &b, 1 << 20, "a test", &err) == -1 &&
                  strstr(err.msg, "huge.txt: larger than 1 MiB, too large for a test"));
    test_cond("... stops reading near it", b.len < (2u << 20));
    buf_clear(&b);
    test_cond("read_file_max: within", read_file_max(ok, &b, 1003, "a test", &err) == 0);
    buf_free(&b);
    io_set_max_line(0);
    test_cond("0 restores the default", io_max_line() == IO_MAX_LINE_DEFAULT);
    unlink(ok), unlink(bad), unlink(last), unlink(huge);
    rmdir(dir);
}

int main(void) {
    test_utf8();
    test_wide();
    test_quote();
    test_json();
    test_numbers();
    test_pool();
    test_reader_writer();
    test_filter_run();
    test_fit();
    /* last: the files it reads are noted as inputs, and their inode numbers,
     * once freed, may come back for test_reader_writer's outputs */
    test_line_limit();
    return test_report();
}
