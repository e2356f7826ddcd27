/* spill.c - anonymous temporary files (see spill.h). */
#include "hdf5gen/spill.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/io.h"

static const char *dir_name(const Spill *f) { return f->dir && *f->dir ? f->dir : "."; }

/* "LABEL: " or "" */
static const char *lab(const Spill *f) { return f->label ? f->label : ""; }
static const char *sep(const Spill *f) { return f->label ? ": " : ""; }

int spill_open(Spill *f, const char *dir, const char *label, Err *err) {
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->dir = dir;
    f->label = label;
    const char *d = dir_name(f);
    int fd = temp_fd(d);
    if (fd < 0)
        return err_set(err, "%s%scannot create a temporary file in %s: %s", lab(f), sep(f), d,
                       strerror(errno));
    f->fd = fd;
    f->open = 1;
    pthread_mutex_init(&f->lock, NULL);
    return 0;
}

static void keep_error(Spill *f, int e) {
    pthread_mutex_lock(&f->lock);
    if (!f->err) f->err = e ? e : EIO;
    pthread_mutex_unlock(&f->lock);
}

int spill_pwrite(Spill *f, const void *p, size_t n, uint64_t off) {
    const char *s = p;
    while (n > 0) {
        if (__atomic_load_n(&f->err, __ATOMIC_RELAXED)) return -1;
        ssize_t w = pwrite(f->fd, s, n, (off_t)off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            keep_error(f, w < 0 ? errno : ENOSPC);
            return -1;
        }
        s += w, n -= (size_t)w, off += (uint64_t)w;
    }
    return 0;
}

uint64_t spill_append(Spill *f, const void *p, size_t n) {
    pthread_mutex_lock(&f->lock);
    uint64_t at = f->end;
    f->end += n;
    pthread_mutex_unlock(&f->lock);
    spill_pwrite(f, p, n, at);
    return at;
}

int spill_pread(Spill *f, void *p, size_t n, uint64_t off) {
    char *s = p;
    size_t want = n;
    while (n > 0) {
        if (__atomic_load_n(&f->err, __ATOMIC_RELAXED)) break;
        ssize_t r = pread(f->fd, s, n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            keep_error(f, r < 0 ? errno : EIO); /* the file is shorter than written: EIO */
            break;
        }
        s += r, n -= (size_t)r, off += (uint64_t)r;
    }
    if (n == 0) return 0;
    memset(p, 0, want);
    return -1;
}

int spill_failed(Spill *f, Err *err) {
    pthread_mutex_lock(&f->lock);
    int e = f->err;
    pthread_mutex_unlock(&f->lock);
    if (!e) return 0;
    err_set(err, "%s%stemporary file in %s: %s", lab(f), sep(f), dir_name(f), strerror(e));
    return 1;
}

void spill_close(Spill *f) {
    if (!f->open) return;
    close(f->fd);
    f->fd = -1;
    f->open = 0;
    pthread_mutex_destroy(&f->lock);
}
