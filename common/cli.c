/* cli.c - option parsing helpers. */
#include "common/cli.h"

#include "common/cpus.h"
#include "common/io.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cli_init(const char *argv0) {
    stdio_init();
    const char *slash = strrchr(argv0, '/');
    progname = slash ? slash + 1 : argv0;
}

int cli_parse_u64(const char *s, uint64_t *out) {
    if (!s || *s < '0' || *s > '9') return -1;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    unsigned shift = 0;
    if (*s == 'K' || *s == 'k')
        shift = 10;
    else if (*s == 'M' || *s == 'm')
        shift = 20;
    else if (*s == 'G' || *s == 'g')
        shift = 30;
    if (shift) {
        if (v > (UINT64_MAX >> shift)) return -1;
        v <<= shift;
        s++;
        if (*s == 'i' || *s == 'B') s++;
    }
    if (*s) return -1;
    *out = v;
    return 0;
}

double cli_parse_double(const char *s, const char *what) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* strtod also takes "nan", "inf" and hex floats: only finite decimals */
    if (errno || end == s || *end || !isfinite(v) || strpbrk(s, "xX"))
        cli_bad_usage("%s: not a number: '%s'", what, s);
    return v;
}

double cli_parse_double_in(const char *s, const char *what, double lo, double hi) {
    double v = cli_parse_double(s, what);
    if (v < lo || v > hi) cli_bad_usage("%s: '%s' is out of range [%g, %g]", what, s, lo, hi);
    return v;
}

long cli_parse_int(const char *s, const char *what, long lo, long hi) {
    uint64_t v;
    int neg = s[0] == '-';
    if (cli_parse_u64(neg ? s + 1 : s, &v) || v > (uint64_t)INT64_MAX)
        cli_bad_usage("%s: not a whole number: '%s'", what, s);
    long x = neg ? -(long)v : (long)v;
    if (x < lo || x > hi) cli_bad_usage("%s: '%s' is out of range [%ld, %ld]", what, s, lo, hi);
    return x;
}

void cli_bad_usage(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", progname);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fprintf(stderr, "Try '%s --help' for more information.\n", progname);
    exit(EXIT_USAGE);
}

void cli_version(const char *features) {
    printf("%s %s%s%s\n", progname, WB_VERSION, features && *features ? " " : "",
           features ? features : "");
    exit(EXIT_OK);
}

void cli_common_init(CliCommon *c) {
    c->nthreads = cli_ncpus();
    c->force = 0;
    c->output = NULL;
}

void cli_common_opt(CliCommon *c, int opt, const char *arg, char **argv, const char *features) {
    switch (opt) {
    case 'j':
        c->nthreads = (int)cli_parse_int(arg, "-j", 1, 1024);
        return;
    case 'o':
        c->output = arg;
        return;
    case 'f':
        c->force = 1;
        return;
    case 'q':
        display_level--;
        return;
    case 'v':
        display_level++;
        return;
    case CLI_OPT_MAX_LINE: {
        uint64_t v;
        if (cli_parse_u64(arg, &v) || v < 1 || v > ((uint64_t)1 << 40))
            cli_bad_usage("--max-line-bytes: expected a size from 1 to 1024G (K, M, G suffixes), "
                          "got '%s'",
                          arg);
        io_set_max_line((size_t)v);
        return;
    }
    case 'V':
        cli_version(features ? features : "");
    case ':':
        cli_bad_usage("option '%s' needs a value", argv[optind - 1]);
    default:
        cli_bad_usage("unknown option '%s'", argv[optind - 1]);
    }
}

int cli_ncpus(void) { return cpus_available(); }

#ifndef WB_DATADIR
#define WB_DATADIR "data"
#endif

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *cli_data_path(const char *rel, char *out, size_t cap) {
    /* beside the program: an installed tree (PREFIX/bin, PREFIX/share/wikibert)
     * or a checkout (bin/, data/), wherever either was moved */
    static const char *const beside[] = {"share/wikibert", "data"};
    const char *env = getenv("WIKIBERT_DATA");
    char exe[4096], dir[4096 + 32];

    if (env && *env) {
        snprintf(out, cap, "%s/%s", env, rel);
        return out;
    }
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = NULL;
    if (n > 0) {
        exe[n] = 0;
        slash = strrchr(exe, '/'); /* exe: the program's directory */
        if (slash) *slash = 0;
        slash = slash ? strrchr(exe, '/') : NULL; /* exe: the directory above */
        if (slash) *slash = 0;
    }
    for (size_t i = 0; slash && i < sizeof beside / sizeof *beside; i++) {
        snprintf(dir, sizeof dir, "%s/%s", exe, beside[i]);
        if (is_dir(dir)) {
            snprintf(out, cap, "%s/%s", dir, rel);
            return out;
        }
    }
    snprintf(out, cap, "%s/%s", WB_DATADIR, rel);
    return out;
}
