/* io.c - line Reader and atomic Writer; see io.h for the contracts. */
#include "common/io.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/utf8.h"

#define READ_CHUNK (1u << 20)

/* ---- the longest line ---- */

static size_t max_line = IO_MAX_LINE_DEFAULT;

void io_set_max_line(size_t n) { max_line = n ? n : IO_MAX_LINE_DEFAULT; }

size_t io_max_line(void) { return max_line; }

const char *io_size_str(size_t n, char buf[32]) {
    if (n >= (1u << 20) && n % (1u << 20) == 0)
        snprintf(buf, 32, "%zu MiB", n >> 20);
    else if (n >= (1u << 10) && n % (1u << 10) == 0)
        snprintf(buf, 32, "%zu KiB", n >> 10);
    else
        snprintf(buf, 32, "%zu bytes", n);
    return buf;
}

int io_err_too_long(Err *err, const char *name, uint64_t line, const char *what) {
    char sz[32];
    return err_set(err, "%s:%llu: %s longer than %s (--max-line-bytes raises the limit)", name,
                   (unsigned long long)line, what, io_size_str(max_line, sz));
}

/* ---- reader ---- */

int reader_init(Reader *r, char **inputs, int n) {
    static char *stdin_name[] = {"-"};
    memset(r, 0, sizeof *r);
    r->inputs = n ? inputs : stdin_name;
    r->ninputs = n ? n : 1;
    r->cur = -1;
    r->max_line = max_line;
    return 0;
}

int inputs_check(char *const *paths, int n, Err *err) {
    for (int i = 0; i < n; i++)
        if (input_check(paths[i], err)) return -1;
    return 0;
}

int input_check(const char *path, Err *err) {
    if (strcmp(path, "-") == 0) return 0;
    struct stat st;
    if (stat(path, &st) != 0) return err_set(err, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) return err_set(err, "%s: %s", path, strerror(EISDIR));
    if (access(path, R_OK) != 0) return err_set(err, "%s: %s", path, strerror(errno));
    return 0;
}

FILE *xfopen_read(const char *path, Err *err) {
    if (strcmp(path, "-") == 0) return stdin;
    FILE *fp = fopen(path, "rb");
    if (!fp) err_set(err, "%s: %s", path, strerror(errno));
    return fp;
}

/* read_file with limits: at most `max` bytes in all (0: none) and, when
 * text, no line longer than max_line. */
static int read_whole(const char *path, Buf *out, size_t max, const char *what, int text,
                      Err *err) {
    FILE *fp = xfopen_read(path, err);
    if (!fp) return -1;
    char chunk[1 << 16];
    size_t n, total = 0, run = 0; /* run: bytes since the last '\n' */
    uint64_t line = 1;
    int rc = 0;
    while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0) {
        buf_append(out, chunk, n);
        total += n;
        if (max && total > max) {
            char sz[32];
            rc = err_set(err, "%s: larger than %s, too large for %s", path, io_size_str(max, sz),
                         what);
            break;
        }
        if (!text) continue;
        for (const char *p = chunk, *end = chunk + n; p < end;) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            run += (size_t)((nl ? nl : end) - p);
            if (run > max_line) break;
            if (!nl) break;
            run = 0;
            line++;
            p = nl + 1;
        }
        if (run > max_line) {
            rc = io_err_too_long(err, path, line, "line");
            break;
        }
    }
    int bad = !rc && ferror(fp), saved = errno;
    if (fp != stdin) fclose(fp);
    if (bad) return err_set(err, "%s: read error: %s", path, strerror(saved));
    return rc;
}

int read_file(const char *path, Buf *out, Err *err) { return read_whole(path, out, 0, "", 0, err); }

int read_text_file(const char *path, Buf *out, Err *err) {
    return read_whole(path, out, 0, "", 1, err);
}

int read_file_max(const char *path, Buf *out, size_t max, const char *what, Err *err) {
    return read_whole(path, out, max, what, 0, err);
}

uint64_t file_size_of(FILE *fp) {
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode)) return (uint64_t)st.st_size;
    return 0;
}

uint64_t inputs_total_size(char *const *paths, int n) {
    uint64_t total = 0;
    struct stat st;
    for (int i = 0; i < n; i++)
        if (strcmp(paths[i], "-") != 0 && stat(paths[i], &st) == 0 && S_ISREG(st.st_mode))
            total += (uint64_t)st.st_size;
    return total;
}

static void reader_close_cur(Reader *r) {
    if (r->fp && r->fp != stdin) fclose(r->fp);
    r->fp = NULL;
}

/* Read more bytes after the unread tail; returns bytes read, -1 on error. */
static long reader_fill(Reader *r, Err *err) {
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
    }
    if (r->cap - r->end < READ_CHUNK) {
        /* doubling, but never past what the longest line needs: a line
         * longer than max_line is refused once that much is buffered */
        size_t need = r->end + READ_CHUNK, most = r->max_line + 2 * (size_t)READ_CHUNK;
        size_t cap = r->cap ? r->cap : READ_CHUNK;
        while (cap < need)
            cap *= 2;
        if (cap > most && need <= most) cap = most;
        r->buf = xrealloc(r->buf, cap + 1);
        r->cap = cap;
    }
    size_t n = fread(r->buf + r->end, 1, r->cap - r->end, r->fp);
    if (n == 0 && ferror(r->fp))
        return err_set(err, "%s: read error: %s", r->name, strerror(errno));
    if (n == 0) r->eof = 1;
    r->end += n;
    r->bytes += n;
    return (long)n;
}

/* Open the next input and read its first bytes, refusing UTF-16 text;
 * returns 1 if one was opened, 0 at the end, -1 on an error. */
static int reader_advance(Reader *r, Err *err) {
    reader_close_cur(r);
    if (r->cur + 1 >= r->ninputs) return 0;
    r->cur++;
    r->name = r->inputs[r->cur];
    r->line = 0;
    r->eof = 0;
    r->start = r->end = 0;
    r->fp = xfopen_read(r->name, err);
    if (!r->fp) return -1;
    /* the first bytes decide whether this is UTF-8 text at all */
    if (reader_fill(r, err) < 0) return -1;
    if (utf8_refuse_wide(r->name, r->buf, r->end, err)) return -1;
    return 1;
}

int reader_next_line(Reader *r, const char **line, size_t *len, Err *err) {
    if (r->cur < 0) {
        int rc = reader_advance(r, err);
        if (rc <= 0) return rc;
    }
    size_t scan = r->start;
    for (;;) {
        char *nl = scan < r->end ? memchr(r->buf + scan, '\n', r->end - scan) : NULL;
        if (nl) {
            if ((size_t)(nl - (r->buf + r->start)) > r->max_line)
                return io_err_too_long(err, r->name, r->line + 1, "line");
            *line = r->buf + r->start;
            *len = (size_t)(nl - (r->buf + r->start));
            r->start = (size_t)(nl - r->buf) + 1;
            r->line++;
            return 1;
        }
        if (r->end - r->start > r->max_line) /* no '\n' within the limit */
            return io_err_too_long(err, r->name, r->line + 1, "line");
        if (r->eof) {
            if (r->end > r->start) {
                *line = r->buf + r->start;
                *len = r->end - r->start;
                r->buf[r->end] = '\0';
                r->start = r->end;
                r->line++;
                return 1;
            }
            int rc = reader_advance(r, err);
            if (rc <= 0) return rc;
            scan = 0;
            continue;
        }
        size_t seen = r->end - r->start;
        if (reader_fill(r, err) < 0) return -1;
        scan = r->start + seen;
    }
}

void reader_free(Reader *r) {
    reader_close_cur(r);
    free(r->buf);
    memset(r, 0, sizeof *r);
}

/* ---- writer ---- */

/* The temp files to remove on a signal, one slot per open Writer (a
 * program may write its output and a side file such as --rejected). The
 * names are kept in static buffers so the handler needs no allocation. */
enum { MAX_WRITERS = 64 };
static pthread_mutex_t cleanup_lock = PTHREAD_MUTEX_INITIALIZER;
static char cleanup_path[MAX_WRITERS][4096];
static Writer *active_writer[MAX_WRITERS];

/* die() hook: remove the temp files, or, when the program asked to keep
 * completed records, move each to FILE.partial, a name that never looks
 * like a finished output. */
static void cleanup_on_die(void) {
    for (int i = 0; i < MAX_WRITERS; i++) {
        Writer *w = active_writer[i];
        active_writer[i] = NULL;
        if (w && w->keep_partial && w->fp && w->tmp && !ferror(w->fp)) {
            int ok = fflush(w->fp) == 0 && !ferror(w->fp);
            ok = ok && ftell(w->fp) > 0; /* nothing written: nothing to keep */
            ok = (fclose(w->fp) == 0) && ok;
            w->fp = NULL;
            size_t n = strlen(w->path) + 16;
            char *part = xmalloc(n);
            snprintf(part, n, "%s.partial", w->path);
            if (ok && rename(w->tmp, part) == 0) {
                fprintf(stderr, "%s: output up to the error kept in %s\n", progname, part);
                cleanup_path[i][0] = '\0';
            }
            free(part);
        }
        if (cleanup_path[i][0]) unlink(cleanup_path[i]);
        cleanup_path[i][0] = '\0';
    }
}

void writer_unlink_temps(void) {
    for (int i = 0; i < MAX_WRITERS; i++)
        if (cleanup_path[i][0]) unlink(cleanup_path[i]);
}

static void on_signal(int sig) {
    writer_unlink_temps();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void arm_cleanup(Writer *w) {
    pthread_mutex_lock(&cleanup_lock);
    int slot = -1;
    for (int i = 0; i < MAX_WRITERS && slot < 0; i++)
        if (!active_writer[i]) slot = i;
    if (slot < 0) { /* more outputs than slots: no signal cleanup */
        pthread_mutex_unlock(&cleanup_lock);
        return;
    }
    snprintf(cleanup_path[slot], sizeof cleanup_path[slot], "%s", w->tmp);
    active_writer[slot] = w;
    set_die_hook(cleanup_on_die);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGPIPE, &sa, NULL);
    pthread_mutex_unlock(&cleanup_lock);
}

static void disarm_cleanup(Writer *w) {
    pthread_mutex_lock(&cleanup_lock);
    int left = 0;
    for (int i = 0; i < MAX_WRITERS; i++) {
        if (active_writer[i] == w) {
            cleanup_path[i][0] = '\0';
            active_writer[i] = NULL;
        }
        left += active_writer[i] != NULL;
    }
    if (!left) set_die_hook(NULL);
    pthread_mutex_unlock(&cleanup_lock);
}

/* the pid of NAME if it is PREFIX ".tmp." digits, else 0 */
static long temp_pid(const char *name, const char *prefix, size_t plen) {
    if (strncmp(name, prefix, plen) != 0 || strncmp(name + plen, ".tmp.", 5) != 0) return 0;
    const char *d = name + plen + 5;
    long pid = 0;
    if (!*d) return 0;
    for (; *d; d++) {
        if (*d < '0' || *d > '9' || pid > 1L << 40) return 0;
        pid = pid * 10 + (*d - '0');
    }
    return pid;
}

int remove_dead_temps(const char *path) {
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    /* the folder: "." without a slash, "/" for a path right under the root */
    size_t dlen = !slash ? 1 : slash > path ? (size_t)(slash - path) : 1;
    char *dir = xmalloc(dlen + 1);
    memcpy(dir, slash ? path : ".", dlen);
    dir[dlen] = '\0';
    DIR *d = opendir(dir);
    int removed = 0;
    size_t blen = strlen(base);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        long pid = temp_pid(e->d_name, base, blen);
        if (pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to know */
        size_t n = dlen + strlen(e->d_name) + 2;
        char *p = xmalloc(n);
        snprintf(p, n, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) && unlink(p) == 0) {
            info(3, "removed %s, left by process %ld, which no longer runs", p, pid);
            removed++;
        }
        free(p);
    }
    if (d) closedir(d);
    free(dir);
    return removed;
}

int writer_open(Writer *w, const char *path, int force, Err *err) {
    memset(w, 0, sizeof *w);
    if (!path || strcmp(path, "-") == 0) {
        w->fp = stdout;
        return 0;
    }
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) return err_set(err, "%s: is a directory", path);
    if (exists && !S_ISREG(st.st_mode)) {
        /* a device or FIFO (-o /dev/null, -o fifo): write to it directly;
         * renaming a temp file over it would replace it */
        w->fp = fopen(path, "wb");
        if (!w->fp) return err_set(err, "%s: %s", path, strerror(errno));
        w->path = xstrdup(path);
        return 0;
    }
    if (!force && exists) return err_set(err, "%s: already exists (use -f to overwrite)", path);
    remove_dead_temps(path);
    size_t n = strlen(path) + 32;
    w->tmp = xmalloc(n);
    snprintf(w->tmp, n, "%s.tmp.%ld", path, (long)getpid());
    w->fp = fopen(w->tmp, "wb");
    if (!w->fp) {
        err_set(err, "%s: %s", w->tmp, strerror(errno));
        free(w->tmp);
        w->tmp = NULL;
        return -1;
    }
    w->path = xstrdup(path);
    arm_cleanup(w);
    return 0;
}

int writer_open_name(Writer *w, const char *path, int force, Err *err) {
    memset(w, 0, sizeof *w);
    if (!path || strcmp(path, "-") == 0)
        return err_set(err, "this output needs a file name (-o FILE), not standard output");
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) return err_set(err, "%s: is a directory", path);
    if (exists && !S_ISREG(st.st_mode)) return err_set(err, "%s: not a regular file", path);
    if (!force && exists) return err_set(err, "%s: already exists (use -f to overwrite)", path);
    remove_dead_temps(path);
    size_t n = strlen(path) + 32;
    w->tmp = xmalloc(n);
    snprintf(w->tmp, n, "%s.tmp.%ld", path, (long)getpid());
    w->path = xstrdup(path);
    w->named = 1;
    arm_cleanup(w);
    return 0;
}

const char *writer_name(const Writer *w) { return w->path ? w->path : "standard output"; }

int writer_write(Writer *w, const void *p, size_t n, Err *err) {
    if (!n || fwrite(p, 1, n, w->fp) == n) return 0;
    w->keep_partial = 0;
    return err_set(err, "%s: write error: %s", writer_name(w), strerror(errno));
}

int writer_close(Writer *w, Err *err) {
    if (w->named) {
        int bad = rename(w->tmp, w->path) != 0;
        if (bad) {
            err_set(err, "%s: cannot rename %s into place: %s", w->path, w->tmp, strerror(errno));
            unlink(w->tmp);
        }
        disarm_cleanup(w);
        free(w->tmp);
        free(w->path);
        w->tmp = w->path = NULL;
        w->named = 0;
        return bad ? -1 : 0;
    }
    if (!w->fp) return 0;
    int bad = fflush(w->fp) != 0 || ferror(w->fp);
    int saved = errno;
    if (w->fp == stdout) {
        w->fp = NULL;
        if (bad || fclose(stdout) != 0)
            return err_set(err, "%s: write error: %s", writer_name(w),
                           strerror(bad ? saved : errno));
        return 0;
    }
    if (fclose(w->fp) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    w->fp = NULL;
    if (!bad && w->tmp && rename(w->tmp, w->path) != 0) {
        bad = 1;
        saved = errno;
    }
    if (bad) {
        err_set(err, "%s: write error: %s", w->path, strerror(saved));
        if (w->tmp) unlink(w->tmp);
    }
    if (w->tmp) disarm_cleanup(w);
    free(w->tmp);
    free(w->path);
    w->tmp = w->path = NULL;
    return bad ? -1 : 0;
}

void writer_abort(Writer *w) {
    if (w->named) {
        unlink(w->tmp);
        disarm_cleanup(w);
        w->named = 0;
    }
    if (w->fp && w->fp != stdout) {
        fclose(w->fp);
        if (w->tmp) {
            unlink(w->tmp);
            disarm_cleanup(w);
        }
    }
    w->fp = NULL;
    free(w->tmp);
    free(w->path);
    w->tmp = w->path = NULL;
}

int writer_refuse_tty(Writer *w, Err *err) {
    if (w->fp && isatty(fileno(w->fp)))
        return err_set(err, "stdout is a terminal, refusing to write binary output (use -o FILE)");
    return 0;
}

int make_dirs(const char *dir, Err *err) {
    char *p = xstrdup(dir);
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s) continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            err_set(err, "%s: cannot create: %s", p, strerror(errno));
            free(p);
            return -1;
        }
        *s = c;
        if (!c) break;
    }
    free(p);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return err_set(err, "%s: not a directory", dir);
    return 0;
}
