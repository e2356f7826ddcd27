/* io.c - line Reader and atomic Writer; see io.h for the contracts. */
#define _GNU_SOURCE /* renameat2 */
#include "common/io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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
    r->pc.fd = -1;
    return 0;
}

int inputs_check(char *const *paths, int n, Err *err) {
    for (int i = 0; i < n; i++)
        if (input_check(paths[i], err)) return -1;
    return 0;
}

int input_check(const char *path, Err *err) {
    if (strcmp(path, "-") == 0) return input_note(path, err);
    struct stat st;
    if (stat(path, &st) != 0) return err_set(err, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) return err_set(err, "%s: %s", path, strerror(EISDIR));
    if (access(path, R_OK) != 0) return err_set(err, "%s: %s", path, strerror(errno));
    return input_note(path, err);
}

FILE *xfopen_read(const char *path, Err *err) {
    if (input_note(path, err)) return NULL;
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
    if (r->fp) pagecache_finish(&r->pc);
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
    pagecache_advance(&r->pc);
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
    pagecache_init(&r->pc, fileno(r->fp), r->nocache ? PAGECACHE_INPUT : PAGECACHE_OFF);
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
static int stdout_is_output; /* a Writer on stdout was opened */

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

static const int caught_signals[4] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

void signals_catch(void (*handler)(int), struct sigaction *old) {
    struct sigaction sa, prev;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 4; i++) {
        sigaction(caught_signals[i], NULL, &prev);
        if (old) old[i] = prev;
        /* ignored when inherited (nohup's SIGHUP, SIGINT in a script's
         * background job): the caller wants it ignored, so it stays so */
        if (prev.sa_handler == SIG_IGN) continue;
        sigaction(caught_signals[i], &sa, NULL);
    }
}

void signals_restore(const struct sigaction *old) {
    for (int i = 0; i < 4; i++)
        sigaction(caught_signals[i], &old[i], NULL);
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
    signals_catch(on_signal, NULL);
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

char *path_dir(const char *path) {
    const char *slash = strrchr(path, '/');
    size_t n = !slash ? 1 : slash > path ? (size_t)(slash - path) : 1;
    char *dir = xmalloc(n + 1);
    memcpy(dir, slash ? path : ".", n);
    dir[n] = '\0';
    return dir;
}

int temp_fd(const char *dir) {
    int fd = -1, fallback = 1;
#ifdef O_TMPFILE
    fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    fallback = fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL);
#endif
    if (!fallback) return fd;
    size_t n = strlen(dir) + strlen(progname) + 16;
    char *name = xmalloc(n);
    snprintf(name, n, "%s/.%s.XXXXXX", dir, progname);
    fd = mkostemp(name, O_CLOEXEC);
    if (fd >= 0) unlink(name);
    int e = errno;
    free(name);
    errno = e;
    return fd;
}

const char *tmp_dir_or(const char *fallback) {
    const char *t = getenv("TMPDIR");
    return t && *t ? t : fallback;
}

int remove_dead_temps(const char *path) {
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char *dir = path_dir(path);
    DIR *d = opendir(dir);
    int removed = 0;
    size_t blen = strlen(base);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        long pid = temp_pid(e->d_name, base, blen);
        if (pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to know */
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
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

/* ---- outputs against inputs and against each other ---- */

/* The regular files this run reads (input_note), by device and inode. */
typedef struct Noted {
    dev_t dev;
    ino_t ino;
    char *name;
} Noted;
static pthread_mutex_t noted_lock = PTHREAD_MUTEX_INITIALIZER;
static Noted *noted;
static size_t nnoted, noted_cap;

static int same_file(const struct stat *a, const struct stat *b) {
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* 1 with the input's name in name[cap] when st is a noted input, else 0 */
static int noted_input(const struct stat *st, char *name, size_t cap) {
    int found = 0;
    pthread_mutex_lock(&noted_lock);
    for (size_t i = 0; i < nnoted && !found; i++)
        if (noted[i].dev == st->st_dev && noted[i].ino == st->st_ino) {
            snprintf(name, cap, "%s", noted[i].name);
            found = 1;
        }
    pthread_mutex_unlock(&noted_lock);
    return found;
}

static int is_input_err(const char *out, const char *in, Err *err) {
    int std = !strcmp(in, "standard input");
    return err_set(err,
                   "%s: the same file as %s%s: an output never replaces an input (-f does not "
                   "change that)",
                   out, std ? "" : "the input ", in);
}

int input_note(const char *path, Err *err) {
    struct stat st, o;
    int is_stdin = strcmp(path, "-") == 0;
    if ((is_stdin ? fstat(0, &st) : stat(path, &st)) != 0 || !S_ISREG(st.st_mode)) return 0;
    const char *name = is_stdin ? "standard input" : path;
    char out[4096] = "";
    pthread_mutex_lock(&cleanup_lock);
    for (int i = 0; i < MAX_WRITERS && !*out; i++) {
        Writer *w = active_writer[i];
        if (w && w->path && stat(w->path, &o) == 0 && same_file(&o, &st))
            snprintf(out, sizeof out, "%s", w->path);
    }
    pthread_mutex_unlock(&cleanup_lock);
    if (!*out && stdout_is_output && fstat(1, &o) == 0 && S_ISREG(o.st_mode) && same_file(&o, &st))
        snprintf(out, sizeof out, "standard output");
    if (*out) return is_input_err(out, name, err);
    char have[8];
    if (noted_input(&st, have, sizeof have)) return 0;
    pthread_mutex_lock(&noted_lock);
    if (nnoted == noted_cap) {
        noted_cap = noted_cap ? 2 * noted_cap : 16;
        noted = xrealloc(noted, noted_cap * sizeof *noted);
    }
    noted[nnoted++] = (Noted){st.st_dev, st.st_ino, xstrdup(name)};
    pthread_mutex_unlock(&noted_lock);
    return 0;
}

int output_not_input(const char *path, Err *err) {
    struct stat st;
    char in[4096];
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && noted_input(&st, in, sizeof in))
        return is_input_err(path, in, err);
    return 0;
}

int output_name_check(const char *path, const char *what, Err *err) {
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!*path) return err_set(err, "%s '': an empty name, not a file name", what);
    if (!*base)
        return err_set(err, "%s %s: a directory (it ends with '/'), not a file name", what, path);
    if (!strcmp(base, ".") || !strcmp(base, ".."))
        return err_set(err, "%s %s: a directory, not a file name", what, path);
    return 0;
}

/* path's canonical name for comparing outputs: its folder resolved
 * (realpath: "./a", "d/../a" and a symbolic link to the folder are one),
 * then its last component (a rename replaces that entry, link or not).
 * Owned by the caller. */
static char *output_key(const char *path) {
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char *dir = path_dir(path);
    char *real = realpath(dir, NULL);
    free(dir);
    if (!real) return xstrdup(path);
    size_t n = strlen(real) + strlen(base) + 2;
    char *k = xmalloc(n);
    snprintf(k, n, "%s/%s", strcmp(real, "/") ? real : "", base);
    free(real);
    return k;
}

static int same_output_err(const char *a, const char *b, Err *err) {
    if (!strcmp(a, b))
        return err_set(err,
                       "%s: named twice as an output: two outputs of this run would write one "
                       "file",
                       a);
    return err_set(err,
                   "%s: the same file as the output %s: two outputs of this run would write "
                   "one file",
                   a, b);
}

int outputs_check(const char *const *paths, int n, Err *err) {
    char **keys = xcalloc((size_t)(n > 0 ? n : 1), sizeof *keys);
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        if (!paths[i] || !strcmp(paths[i], "-")) continue;
        if (output_name_check(paths[i], "output", err) || output_not_input(paths[i], err)) {
            rc = -1;
            break;
        }
        keys[i] = output_key(paths[i]);
        for (int j = 0; j < i && !rc; j++)
            if (keys[j] && !strcmp(keys[i], keys[j])) rc = same_output_err(paths[i], paths[j], err);
    }
    for (int i = 0; i < n; i++)
        free(keys[i]);
    free(keys);
    return rc;
}

/* Set w->key and refuse a name another open Writer writes. */
static int claim_name(Writer *w, const char *path, Err *err) {
    w->key = output_key(path);
    char other[4096] = "";
    pthread_mutex_lock(&cleanup_lock);
    for (int i = 0; i < MAX_WRITERS && !*other; i++) {
        Writer *o = active_writer[i];
        if (o && o != w && o->key && !strcmp(o->key, w->key))
            snprintf(other, sizeof other, "%s", o->path);
    }
    pthread_mutex_unlock(&cleanup_lock);
    if (!*other) return 0;
    free(w->key);
    w->key = NULL;
    return same_output_err(path, other, err);
}

/* The checks on what is at an output's name (st from stat, exists its
 * result): an input is never replaced; without force nothing is, not even
 * a symbolic link that leads nowhere. */
static int check_existing(const char *path, const struct stat *st, int exists, int force,
                          Err *err) {
    char in[4096];
    if (exists && S_ISREG(st->st_mode) && noted_input(st, in, sizeof in))
        return is_input_err(path, in, err);
    if (force) return 0;
    if (exists) return err_set(err, "%s: already exists (use -f to overwrite)", path);
    struct stat lst;
    if (lstat(path, &lst) == 0) {
        errno = 0;
        int loop = stat(path, &lst) != 0 && errno == ELOOP;
        return err_set(err, "%s: already exists (%s; use -f to replace it)", path,
                       loop ? "a symbolic link loop" : "a symbolic link to a missing file");
    }
    return 0;
}

static int appeared_err(const char *path, Err *err) {
    return err_set(err,
                   "%s: created by another process while this run wrote it: that file is kept "
                   "and this output dropped (use -f to overwrite)",
                   path);
}

int rename_output(const char *tmp, const char *path, int force, Err *err) {
    if (force) {
        if (rename(tmp, path) == 0) return 0;
        return err_set(err, "%s: cannot rename %s into place: %s", path, tmp, strerror(errno));
    }
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0) return 0;
    if (errno == EEXIST) return appeared_err(path, err);
    if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
        return err_set(err, "%s: cannot rename %s into place: %s", path, tmp, strerror(errno));
    /* a file system without RENAME_NOREPLACE: link(2) never replaces either */
    if (link(tmp, path) == 0) {
        unlink(tmp);
        return 0;
    }
    if (errno == EEXIST) return appeared_err(path, err);
    if (errno != EPERM && errno != EOPNOTSUPP && errno != ENOSYS)
        return err_set(err, "%s: cannot link %s into place: %s", path, tmp, strerror(errno));
    /* nor hard links (FAT, some FUSE file systems): a last look, then rename */
    struct stat st;
    if (lstat(path, &st) == 0) return appeared_err(path, err);
    if (rename(tmp, path) == 0) return 0;
    return err_set(err, "%s: cannot rename %s into place: %s", path, tmp, strerror(errno));
}

/* ---- the writer itself ---- */

int writer_open(Writer *w, const char *path, int force, Err *err) {
    memset(w, 0, sizeof *w);
    w->force = force;
    if (!path || strcmp(path, "-") == 0) {
        struct stat so;
        char in[4096];
        if (fstat(1, &so) == 0 && S_ISREG(so.st_mode) && noted_input(&so, in, sizeof in))
            return is_input_err("standard output", in, err);
        w->fp = stdout;
        stdout_is_output = 1;
        return 0;
    }
    if (output_name_check(path, "output", err)) return -1;
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
    if (check_existing(path, &st, exists, force, err) || claim_name(w, path, err)) return -1;
    remove_dead_temps(path);
    size_t n = strlen(path) + 32;
    w->tmp = xmalloc(n);
    snprintf(w->tmp, n, "%s.tmp.%ld", path, (long)getpid());
    w->fp = fopen(w->tmp, "wb");
    if (!w->fp) {
        err_set(err, "%s: %s", w->tmp, strerror(errno));
        free(w->tmp);
        free(w->key);
        w->tmp = w->key = NULL;
        return -1;
    }
    w->path = xstrdup(path);
    arm_cleanup(w);
    return 0;
}

int writer_open_name(Writer *w, const char *path, int force, Err *err) {
    memset(w, 0, sizeof *w);
    w->force = force;
    if (!path || strcmp(path, "-") == 0)
        return err_set(err, "this output needs a file name (-o FILE), not standard output");
    if (output_name_check(path, "output", err)) return -1;
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) return err_set(err, "%s: is a directory", path);
    if (exists && !S_ISREG(st.st_mode)) return err_set(err, "%s: not a regular file", path);
    if (check_existing(path, &st, exists, force, err) || claim_name(w, path, err)) return -1;
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

/* The last step of a temp-file output: tmp into place unless the name is
 * now an input's, or (without force) taken. Returns 0, or -1 with err. */
static int writer_install(Writer *w, Err *err) {
    if (output_not_input(w->path, err)) return -1;
    return rename_output(w->tmp, w->path, w->force, err);
}

/* Free a closed Writer's names. */
static void writer_forget(Writer *w) {
    free(w->tmp);
    free(w->path);
    free(w->key);
    w->tmp = w->path = w->key = NULL;
}

int writer_close(Writer *w, Err *err) {
    if (w->named) {
        int bad = writer_install(w, err) != 0;
        if (bad) unlink(w->tmp);
        disarm_cleanup(w);
        writer_forget(w);
        w->named = 0;
        return bad ? -1 : 0;
    }
    if (!w->fp) return 0;
    int bad = fflush(w->fp) != 0 || ferror(w->fp);
    int saved = errno;
    if (w->fp == stdout) {
        /* closed by stdio_init's check at exit, which reports its error */
        w->fp = NULL;
        if (bad) return err_set(err, "%s: write error: %s", writer_name(w), strerror(saved));
        return 0;
    }
    if (fclose(w->fp) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    w->fp = NULL;
    if (bad) err_set(err, "%s: write error: %s", w->path, strerror(saved));
    if (!bad && w->tmp && writer_install(w, err)) bad = 1;
    if (bad && w->tmp) unlink(w->tmp);
    if (w->tmp) disarm_cleanup(w);
    writer_forget(w);
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
    writer_forget(w);
}

int writer_refuse_tty(Writer *w, Err *err) {
    if (w->fp && isatty(fileno(w->fp)))
        return err_set(err, "stdout is a terminal, refusing to write binary output (use -o FILE)");
    return 0;
}

/* ---- output directories ---- */

/* The process holding a flock(2) lock on the file st describes, from
 * /proc/locks ("1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"), or 0. */
static long flock_holder(const struct stat *st) {
    FILE *f = fopen("/proc/locks", "r");
    if (!f) return 0;
    char line[256];
    long pid = 0;
    while (!pid && fgets(line, sizeof line, f)) {
        char kind[16];
        long p;
        unsigned maj, min;
        unsigned long long ino;
        if (sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%llu", kind, &p, &maj, &min, &ino) == 5 &&
            !strcmp(kind, "FLOCK") && maj == major(st->st_dev) && min == minor(st->st_dev) &&
            ino == (unsigned long long)st->st_ino && p > 0)
            pid = p;
    }
    fclose(f);
    return pid;
}

static char *created_dir; /* the output directory this run created */

/* at exit: a failed run (die) leaves no directory it created and left
 * empty (rmdir removes only an empty one) */
static void remove_created_dir(void) {
    if (created_dir && dying()) rmdir(created_dir);
}

int output_dir_lock(const char *dir, int shared, Err *err) {
    struct stat st;
    int created = stat(dir, &st) != 0 && errno == ENOENT;
    if (make_dirs(dir, err)) return -1;
    if (created && !created_dir) {
        created_dir = xstrdup(dir);
        atexit(remove_created_dir);
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return err_set(err, "%s: %s", dir, strerror(errno));
    if (flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0)
        return 0; /* fd stays open: the lock lasts until the process ends */
    int e = errno;
    long pid = 0;
    if (e == EWOULDBLOCK && fstat(fd, &st) == 0) pid = flock_holder(&st);
    close(fd);
    if (e == EWOULDBLOCK) {
        char who[64] = "another process";
        if (pid > 0) snprintf(who, sizeof who, "process %ld", pid);
        return err_set(err,
                       "%s: in use by another run (%s, still running): wait for it to end, or "
                       "write elsewhere",
                       dir, who);
    }
    info(3, "%s: cannot lock it (%s): a second run writing into it would not be refused", dir,
         strerror(e));
    return 0;
}

int output_is_ours(const char *path, const void *magic, size_t n, const char *what, Err *err) {
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) return 1;
        err_set(err, "%s: %s", path, strerror(errno));
        return 0;
    }
    char head[64];
    FILE *f = S_ISREG(st.st_mode) && n <= sizeof head ? fopen(path, "rb") : NULL;
    int ours = f && fread(head, 1, n, f) == n && !memcmp(head, magic, n);
    if (f) fclose(f);
    if (!ours)
        err_set(err,
                "%s: exists and is not %s: refusing to replace it (remove it, or name another "
                "file)",
                path, what);
    return ours;
}

/* ---- the standard streams ---- */

/* at exit: stdout flushed and closed, its errors reported (exit status 1) */
static void stdout_check(void) {
    errno = 0;
    int bad = fflush(stdout) != 0;
    int e = errno;
    bad = ferror(stdout) || bad;
    if (fclose(stdout) != 0 && !bad) bad = 1, e = errno;
    if (!bad || dying()) return; /* a failing run has said why already */
    fprintf(stderr, "%s: standard output: write error%s%s\n", progname, e ? ": " : "",
            e ? strerror(e) : "");
    _exit(EXIT_DATA);
}

void stdio_init(void) {
    static int done;
    static char obuf[1 << 16];
    if (done++) return;
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        /* the lowest free number is fd itself */
        int nfd = open("/dev/null", fd == 1 ? O_RDONLY : O_WRONLY);
        if (nfd >= 0 && nfd != fd) {
            dup2(nfd, fd);
            close(nfd);
        }
    }
    /* a buffer that holds any --help whole: a write error then happens in
     * stdout_check's flush, which knows its reason (stdio keeps only that
     * there was one) */
    if (!isatty(1)) setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    atexit(stdout_check);
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
