/* driver.c - a main() for the fuzz targets where libFuzzer is not at hand:
 * it replays files through LLVMFuzzerTestOneInput and, for a given time,
 * feeds it mutations of them.
 *
 *   fuzz_wikitext [-t SECONDS] [-s SEED] [-o DIR] [-m MAXLEN] [-T LIMIT] PATH...
 *
 * PATH is a file or a directory (its files, one level). Every file runs
 * once; a file that crashes ends the run at once. With -t, mutated inputs
 * run until SECONDS have passed: a seeded PRNG (-s, default 1) picks an
 * input from the pool (the files plus 256 slots of earlier mutants) and
 * applies 1 to 8 of: bit flip, random byte, byte insert, byte delete,
 * duplicated run, run from another input (splice), interesting value
 * (0, 0xff, 0x7f, 0x80 ...), markup token ("<", "{{", "]]", "\":", ...),
 * cut. There is no coverage feedback: it is a plain mutation fuzzer.
 *
 * A crash (a sanitizer report, a signal, exit() from inside the target)
 * writes the input to DIR/crash-<hash> (-o, default "."), named on stderr
 * as "fuzz: crash input: PATH"; an input running longer than LIMIT seconds
 * (-T, default 25) is saved as DIR/timeout-<hash> ("fuzz: timeout input:"). The exit status is then
 * non-zero. At the end it prints "NAME: N runs, 0 crashes" on stdout.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* the target linked in (tests/fuzz/fuzz.h) */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Sanitizer runtimes call this back before they end the process; absent
 * (NULL) in a build without sanitizers. */
extern void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

typedef struct Input {
    uint8_t *data;
    size_t len;
} Input;

static const char *outdir = ".";
static const char *progname_ = "fuzz";
/* the input now running, for the crash handlers */
static const uint8_t *cur_data;
static size_t cur_len;
static volatile sig_atomic_t running;

static uint64_t hash64(const uint8_t *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* Async-signal-safe: write the running input to DIR/KIND-<hash>. */
static void save_current(const char *kind) {
    if (!running) return;
    running = 0;
    char path[4096], hex[17];
    uint64_t h = hash64(cur_data, cur_len);
    for (int i = 15; i >= 0; i--, h >>= 4)
        hex[i] = "0123456789abcdef"[h & 15];
    hex[16] = 0;
    size_t n = 0;
    for (const char *parts[] = {outdir, "/", kind, "-", hex, NULL}, **p = parts; *p; p++)
        for (const char *s = *p; *s && n + 1 < sizeof path; s++)
            path[n++] = *s;
    path[n] = 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        size_t off = 0;
        while (off < cur_len) {
            ssize_t w = write(fd, cur_data + off, cur_len - off);
            if (w <= 0) break;
            off += (size_t)w;
        }
        close(fd);
    }
    if (write(2, "fuzz: ", 6) < 0 || write(2, kind, strlen(kind)) < 0 ||
        write(2, " input: ", 8) < 0 || write(2, path, n) < 0 || write(2, "\n", 1) < 0)
        return;
}

static void on_death(void) { save_current("crash"); }

static void on_signal(int sig) {
    save_current("crash");
    signal(sig, SIG_DFL);
    raise(sig);
}

static void on_alarm(int sig) {
    (void)sig;
    save_current("timeout");
    static const char msg[] = "fuzz: an input ran past the time limit (-T)\n";
    if (write(2, msg, sizeof msg - 1) < 0) _exit(70);
    _exit(70);
}

static void on_exit_(void) {
    if (running) {
        static const char msg[] = "fuzz: the target called exit()\n";
        if (write(2, msg, sizeof msg - 1) < 0) _exit(71);
        save_current("crash");
        _exit(71);
    }
}

static unsigned timeout_s = 25;

static void run_one(const uint8_t *data, size_t len) {
    /* an exact-size copy: reads past the end are ASan reports */
    uint8_t *copy = malloc(len ? len : 1);
    if (len) memcpy(copy, data, len);
    cur_data = copy, cur_len = len, running = 1;
    alarm(timeout_s);
    LLVMFuzzerTestOneInput(copy, len);
    alarm(0);
    running = 0;
    free(copy);
}

static int read_input(const char *path, Input *in) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t cap = 4096, n = 0;
    uint8_t *b = malloc(cap);
    size_t k;
    while ((k = fread(b + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) b = realloc(b, cap *= 2);
    }
    fclose(f);
    in->data = b, in->len = n;
    return 0;
}

static Input *pool;
static size_t npool, cappool;

static void add_path(const char *path) {
    struct stat st;
    if (stat(path, &st)) {
        fprintf(stderr, "%s: %s: %s\n", progname_, path, strerror(errno));
        exit(2);
    }
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        char **names = NULL;
        size_t nn = 0;
        while (d && (e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            names = realloc(names, (nn + 1) * sizeof *names);
            names[nn] = malloc(strlen(path) + strlen(e->d_name) + 2);
            sprintf(names[nn++], "%s/%s", path, e->d_name);
        }
        if (d) closedir(d);
        /* sorted: the same order, hence the same mutants, on every machine */
        for (size_t i = 1; i < nn; i++)
            for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
                char *t = names[j];
                names[j] = names[j - 1], names[j - 1] = t;
            }
        for (size_t i = 0; i < nn; i++) {
            struct stat fs;
            if (stat(names[i], &fs) == 0 && S_ISREG(fs.st_mode)) add_path(names[i]);
            free(names[i]);
        }
        free(names);
        return;
    }
    Input in;
    if (read_input(path, &in)) {
        fprintf(stderr, "%s: %s: %s\n", progname_, path, strerror(errno));
        exit(2);
    }
    if (npool == cappool)
        pool = realloc(pool, (cappool = cappool ? 2 * cappool : 64) * sizeof *pool);
    pool[npool++] = in;
}

/* xorshift64* */
static uint64_t rng_state;
static uint64_t rnd(void) {
    rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static const char *const tokens[] = {"<",
                                     ">",
                                     "</",
                                     "/>",
                                     "&amp;",
                                     "&lt;",
                                     "&#",
                                     "&#x",
                                     ";",
                                     "\"",
                                     "'",
                                     "=",
                                     "<page>",
                                     "</page>",
                                     "<text>",
                                     "</text>",
                                     "<title>",
                                     "<revision>",
                                     "<mediawiki>",
                                     "</mediawiki>",
                                     "<siteinfo>",
                                     "<namespace key=\"",
                                     "<![CDATA[",
                                     "]]>",
                                     "<!--",
                                     "-->",
                                     "{{",
                                     "}}",
                                     "[[",
                                     "]]",
                                     "{|",
                                     "|}",
                                     "|-",
                                     "||",
                                     "'''",
                                     "''",
                                     "==",
                                     "<ref>",
                                     "</ref>",
                                     "<math>",
                                     "<nowiki>",
                                     "__TOC__",
                                     "#REDIRECT",
                                     "*",
                                     "#",
                                     ":",
                                     "\n",
                                     "\r\n",
                                     " ",
                                     "\t",
                                     ". ",
                                     "? ",
                                     "! ",
                                     "Dr. ",
                                     "St. ",
                                     "1. ",
                                     "III. ",
                                     "e.g. ",
                                     "\"",
                                     "(",
                                     ")",
                                     "\xc2\xa0",
                                     "\xe2\x80\x9c",
                                     "\xef\xbf\xbd",
                                     "\xed\xa0\x80",
                                     "\xf4\x90\x80\x80",
                                     "\xc0\x80",
                                     "\xe6\x9d\xb1",
                                     "\xcc\x81",
                                     "##",
                                     "[UNK]",
                                     "[MASK]",
                                     "{",
                                     "}",
                                     "[",
                                     "]",
                                     ",",
                                     "\":",
                                     "null",
                                     "true",
                                     "-1",
                                     "1e999",
                                     "2147483648",
                                     "\"vocab_size\": ",
                                     "\"hidden_size\": ",
                                     "\"num_attention_heads\": ",
                                     "\"config\": ",
                                     "\"nparams\": ",
                                     "\"rank_data\": \"",
                                     "\\u0000",
                                     "\\",
                                     "HDF",
                                     "\x89HDF\r\n\x1a\n",
                                     "WBCKPT1",
                                     "WBCKEND"};
static const uint8_t interesting[] = {0,    1,    0x7f, 0x80, 0xff, 0xfe,
                                      0x40, 0x20, 0x0a, 0xc0, 0xe0, 0xf0};

static void insert(Input *m, size_t at, const uint8_t *p, size_t n, size_t maxlen) {
    if (m->len + n > maxlen) return;
    m->data = realloc(m->data, m->len + n + 1);
    memmove(m->data + at + n, m->data + at, m->len - at);
    memcpy(m->data + at, p, n);
    m->len += n;
}

/* Insert at m[at] a copy of a random run of src (at most `most` bytes;
 * src may be m itself). */
static void insert_run(Input *m, size_t at, const Input *src, size_t most, size_t maxlen) {
    if (!src->len) return;
    size_t from = below(src->len), n = 1 + below(src->len - from < most ? src->len - from : most);
    uint8_t *t = malloc(n);
    memcpy(t, src->data + from, n);
    insert(m, at, t, n, maxlen);
    free(t);
}

static void mutate(Input *m, size_t maxlen) {
    int steps = 1 + (int)below(8);
    for (int s = 0; s < steps; s++) {
        size_t at = below(m->len + 1);
        switch (below(10)) {
        case 0: /* bit flip */
            if (m->len) m->data[below(m->len)] ^= (uint8_t)(1u << below(8));
            break;
        case 1: /* random byte */
            if (m->len) m->data[below(m->len)] = (uint8_t)rnd();
            break;
        case 2: { /* insert random bytes */
            uint8_t b[8];
            size_t n = 1 + below(sizeof b);
            for (size_t i = 0; i < n; i++)
                b[i] = (uint8_t)rnd();
            insert(m, at, b, n, maxlen);
            break;
        }
        case 3: { /* delete a run */
            if (!m->len || at == m->len) break;
            size_t n = 1 + below(m->len - at < 64 ? m->len - at : 64);
            memmove(m->data + at, m->data + at + n, m->len - at - n);
            m->len -= n;
            break;
        }
        case 4: /* duplicate a run */
            insert_run(m, at, m, 128, maxlen);
            break;
        case 5: /* splice a run of another input */
            insert_run(m, at, &pool[below(npool)], 256, maxlen);
            break;
        case 6: /* interesting byte */
            if (m->len) m->data[below(m->len)] = interesting[below(sizeof interesting)];
            break;
        case 7:
        case 8: { /* markup token */
            const char *t = tokens[below(sizeof tokens / sizeof *tokens)];
            insert(m, at, (const uint8_t *)t, strlen(t), maxlen);
            break;
        }
        case 9: /* cut */
            if (m->len) m->len = below(m->len + 1);
            break;
        }
    }
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(void) {
    fprintf(stderr, "Usage: %s [-t SECONDS] [-s SEED] [-o DIR] [-m MAXLEN] [-T LIMIT] PATH...\n",
            progname_);
    exit(2);
}

/* Replay the inputs named on the command line, then (with -t) fuzz them;
 * exit 0 when nothing crashed. */
int main(int argc, char **argv) {
    const char *slash = strrchr(argv[0], '/');
    progname_ = slash ? slash + 1 : argv[0];
    double seconds = 0;
    uint64_t seed = 1;
    size_t maxlen = 1 << 20;
    int c;
    while ((c = getopt(argc, argv, "t:s:o:m:T:h")) != -1) {
        switch (c) {
        case 't':
            seconds = atof(optarg);
            break;
        case 's':
            seed = strtoull(optarg, NULL, 10);
            break;
        case 'o':
            outdir = optarg;
            break;
        case 'm':
            maxlen = strtoull(optarg, NULL, 10);
            break;
        case 'T':
            timeout_s = (unsigned)atoi(optarg);
            break;
        default:
            usage();
        }
    }
    if (optind >= argc) usage();
    for (int i = optind; i < argc; i++)
        add_path(argv[i]);
    /* the sanitizers report these signals themselves, then call on_death;
     * abort() (fuzz_fail) they leave alone */
    if (__sanitizer_set_death_callback) {
        __sanitizer_set_death_callback(on_death);
    } else {
        int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
        for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
            signal(sigs[i], on_signal);
    }
    signal(SIGABRT, on_signal);
    signal(SIGALRM, on_alarm);
    atexit(on_exit_);

    unsigned long long runs = 0;
    size_t nseed = npool;
    for (size_t i = 0; i < nseed; i++, runs++)
        run_one(pool[i].data, pool[i].len);
    if (seconds > 0) {
        rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
        Input mutants[256] = {{0}};
        size_t nmut = 0;
        if (npool == 0) add_path("/dev/null"); /* start from the empty input */
        double end = now() + seconds;
        while (now() < end) {
            for (int k = 0; k < 64; k++, runs++) {
                /* a mutant of a file or of an earlier mutant */
                const Input *src = nmut && below(2) ? &mutants[below(nmut)] : &pool[below(npool)];
                Input m = {malloc(src->len + 1), src->len};
                memcpy(m.data, src->data, src->len);
                mutate(&m, maxlen);
                run_one(m.data, m.len);
                size_t slot = nmut < 256 ? nmut++ : below(256);
                free(mutants[slot].data);
                mutants[slot] = m;
            }
        }
        for (size_t i = 0; i < nmut; i++)
            free(mutants[i].data);
    }
    for (size_t i = 0; i < npool; i++)
        free(pool[i].data);
    free(pool);
    printf("%s: %llu runs, 0 crashes\n", progname_, runs);
    return 0;
}
