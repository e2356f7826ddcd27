/* cli.h - shared command-line helpers (and, through progress.h, the
 * progress meter every program uses).
 *
 * Every program: cli_init(argv[0]) first; getopt_long with the common
 * options (-o -f -q -v -h -V -j --seed); numbers through cli_parse_u64,
 * which takes K/M/G suffixes and rejects overflow and junk; a bad flag goes
 * through cli_bad_usage (one line plus a hint, exit 2).
 */
#ifndef WB_CLI_H
#define WB_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "common/progress.h"

/* Set progname from argv[0] (basename), after stdio_init() (io.h: fds
 * 0-2 always open, stdout checked at exit). The first call of every main. */
void cli_init(const char *argv0);

/* Parse a non-negative integer with optional K/M/G (x1024) suffix. Returns 0
 * and sets *out, or -1 if the text is not such a number or overflows. */
int cli_parse_u64(const char *s, uint64_t *out);

/* Parse a finite decimal number (strtod, without nan, inf and hex forms)
 * for option `what`; dies with exit 2 naming the option. */
double cli_parse_double(const char *s, const char *what);

/* cli_parse_double for a value in [lo, hi] (a ratio: 0, 1); dies with exit
 * 2 naming the option. */
double cli_parse_double_in(const char *s, const char *what, double lo, double hi);

/* Parse an int option in [lo, hi]; dies with exit 2 naming the option. */
long cli_parse_int(const char *s, const char *what, long lo, long hi);

/* Print "prog: message" and "Try 'prog --help'." to stderr and exit 2. */
WB_NORETURN void cli_bad_usage(const char *fmt, ...) WB_PRINTF(1, 2);

/* Print "prog VERSION (features)" to stdout and exit 0. */
WB_NORETURN void cli_version(const char *features);

/* Path of data file `rel` (e.g. "abbrev/hu.txt") written into out[cap]:
 * under $WIKIBERT_DATA when set, else, found from the program's own path
 * (/proc/self/exe) as <exe dir>/../share/wikibert (an installed tree) or
 * <exe dir>/../data (a checkout), so a moved tree still works, else the
 * build-time DATADIR. Returns out. The file may not exist; callers open it and report
 * the path on failure (exit 2). */
const char *cli_data_path(const char *rel, char *out, size_t cap);

/* The options every filter shares. */
typedef struct CliCommon {
    int nthreads;       /* -j N (default: cli_ncpus()) */
    int force;          /* -f */
    const char *output; /* -o FILE; NULL = stdout */
} CliCommon;

/* getopt_long's value for --max-line-bytes N: the longest line of a text
 * input (common/io.h io_set_max_line; K/M/G suffixes). Every program reads
 * some text (its input, a vocabulary, a config), so every one has it. */
#define CLI_OPT_MAX_LINE 0x7001

/* The long forms of the shared options, to end a program's option table
 * (programs with -j list {"threads", required_argument, 0, 'j'} too); one
 * option a line, which clang-format would run together. CLI_NLONGOPTS_COMMON
 * entries, the terminating {0} included. */
// clang-format off
#define CLI_LONGOPTS_COMMON                                      \
    {"output", required_argument, 0, 'o'},                      \
    {"force", no_argument, 0, 'f'},                             \
    {"quiet", no_argument, 0, 'q'},                             \
    {"verbose", no_argument, 0, 'v'},                           \
    {"help", no_argument, 0, 'h'},                              \
    {"version", no_argument, 0, 'V'},                           \
    {"max-line-bytes", required_argument, 0, CLI_OPT_MAX_LINE}, \
    {0, 0, 0, 0}
// clang-format on
#define CLI_NLONGOPTS_COMMON 8

/* Defaults: all cores, no -f, stdout. */
void cli_common_init(CliCommon *c);

/* Handle getopt_long's result `opt` when it is one of the shared options
 * -j -o -f -q -v -V --max-line-bytes or a getopt error (':' a missing
 * value, anything else an unknown option). A program's switch handles its own options and -h and
 * sends the rest here from `default:`. -V prints the version with
 * `features` and exits 0; errors exit 2. */
void cli_common_opt(CliCommon *c, int opt, const char *arg, char **argv, const char *features);

/* The CPUs this process may use (at least 1): its affinity mask (taskset,
 * Slurm) capped by its cgroup CPU quota (containers); see common/cpus.h.
 * The default for -j. */
int cli_ncpus(void);

#endif
