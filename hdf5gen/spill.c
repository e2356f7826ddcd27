/* spill.c - anonymous temporary files and records by bucket in them (see
 * spill.h). */
#include "hdf5gen/spill.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
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

int spill_buckets_open(SpillBuckets *b, size_t k, size_t rec, size_t bufsize, const char *dir,
                       const char *label, Err *err) {
    memset(b, 0, sizeof *b);
    if (spill_open(&b->f, dir, label, err)) return -1;
    b->k = k, b->rec = rec, b->bufsize = bufsize;
    b->buf = xcalloc(k ? k : 1, sizeof *b->buf);
    return 0;
}

/* bucket k's buffer written out as a block */
static void buckets_flush(SpillBuckets *b, size_t k) {
    Buf *x = &b->buf[k];
    if (!x->len) return;
    if (b->nblk == b->blkcap) {
        b->blkcap = b->blkcap ? 2 * b->blkcap : 256;
        b->blk = xrealloc(b->blk, b->blkcap * sizeof *b->blk);
    }
    b->blk[b->nblk++] =
        (SpillBlock){spill_append(&b->f, x->data, x->len), (uint32_t)x->len, (uint32_t)k};
    buf_clear(x);
}

void spill_buckets_add(SpillBuckets *b, size_t k, const void *rec) {
    Buf *x = &b->buf[k];
    if (x->len + b->rec > b->bufsize) buckets_flush(b, k);
    if (!x->cap) buf_reserve(x, b->bufsize);
    buf_append(x, rec, b->rec);
}

int spill_buckets_read(SpillBuckets *b, size_t k, Buf *out) {
    if (!b->ord)
        b->ord = group_by_bucket(b->blk, b->nblk, sizeof *b->blk, offsetof(SpillBlock, bucket),
                                 b->k, &b->first);
    buf_clear(out);
    for (size_t j = b->first[k]; j < b->first[k + 1]; j++) {
        const SpillBlock *x = &b->blk[b->ord[j]];
        buf_reserve(out, x->len);
        if (spill_pread(&b->f, out->data + out->len, x->len, x->off)) return -1;
        out->len += x->len;
    }
    buf_append(out, b->buf[k].data, b->buf[k].len);
    return 0;
}

void spill_buckets_close(SpillBuckets *b) {
    for (size_t k = 0; k < b->k; k++)
        buf_free(&b->buf[k]);
    free(b->buf), free(b->blk), free(b->first), free(b->ord);
    spill_close(&b->f);
    memset(b, 0, sizeof *b);
}

size_t *group_by_bucket(const void *items, size_t n, size_t stride, size_t boff, size_t k,
                        size_t **first) {
    const uint8_t *p = items;
    size_t *f = xcalloc(k + 1, sizeof *f), *ord = xmalloc((n ? n : 1) * sizeof *ord);
    uint32_t b;
    for (size_t i = 0; i < n; i++) {
        memcpy(&b, p + i * stride + boff, 4);
        f[b + 1]++;
    }
    for (size_t i = 0; i < k; i++)
        f[i + 1] += f[i];
    size_t *cur = xmalloc((k + 1) * sizeof *cur);
    memcpy(cur, f, (k + 1) * sizeof *cur);
    for (size_t i = 0; i < n; i++) {
        memcpy(&b, p + i * stride + boff, 4);
        ord[cur[b]++] = i;
    }
    free(cur);
    *first = f;
    return ord;
}
