/* pagecache.c - drop a file read or written once from the page cache
 * behind the program (see pagecache.h). */
#define _GNU_SOURCE /* sync_file_range */
#include "common/pagecache.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef SYNC_FILE_RANGE_WRITE
/* Ask the kernel to write the dirty pages of [from, to) (wait: and wait
 * for them, and for writeback already under way there). */
static void write_range(int fd, uint64_t from, uint64_t to, int wait) {
    unsigned flags = SYNC_FILE_RANGE_WRITE;
    if (wait) flags |= SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WAIT_AFTER;
    (void)sync_file_range(fd, (off_t)from, (off_t)(to - from), flags);
}
#else
static void write_range(int fd, uint64_t from, uint64_t to, int wait) {
    (void)from, (void)to;
    if (wait) (void)fdatasync(fd);
}
#endif

/* Drop [from, to): an output's after waiting for it to be on disk; an
 * input's as far as it is (the kernel skips dirty pages). */
static void drop_range(const PageCache *pc, uint64_t from, uint64_t to) {
    if (to <= from) return;
    if (pc->wait) write_range(pc->fd, from, to, 1);
    (void)posix_fadvise(pc->fd, (off_t)from, (off_t)(to - from), POSIX_FADV_DONTNEED);
}

void pagecache_init(PageCache *pc, int fd, int mode) {
    struct stat st;
    pc->fd = -1;
    pc->wait = mode == PAGECACHE_OUTPUT;
    pc->begin = pc->started = pc->dropped = 0;
    if (mode == PAGECACHE_OFF || fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
    off_t at = lseek(fd, 0, SEEK_CUR); /* stdin may not start at 0 */
    pc->fd = fd;
    pc->begin = pc->started = pc->dropped = at > 0 ? (uint64_t)at : 0;
}

/* The fd's offset: how far the program is. */
static uint64_t offset(const PageCache *pc) {
    off_t at = lseek(pc->fd, 0, SEEK_CUR);
    return at > 0 ? (uint64_t)at : 0;
}

void pagecache_advance(PageCache *pc) {
    if (pc->fd < 0) return;
    uint64_t pos = offset(pc);
    if (pos < pc->started + PAGECACHE_WINDOW) return;
    write_range(pc->fd, pc->started, pos, 0);
    pc->started = pos;
    if (pc->started >= pc->dropped + PAGECACHE_LAG + PAGECACHE_WINDOW) {
        drop_range(pc, pc->dropped, pc->started - PAGECACHE_LAG);
        pc->dropped = pc->started - PAGECACHE_LAG;
    }
}

/* Start the writeback of everything before the fd's offset, without
 * waiting. */
static void kick(PageCache *pc) {
    if (pc->fd < 0) return;
    uint64_t pos = offset(pc);
    if (pos <= pc->started) return;
    write_range(pc->fd, pc->started, pos, 0);
    pc->started = pos;
}

void pagecache_finish(PageCache *pc) {
    if (pc->fd < 0) return;
    drop_range(pc, pc->wait ? pc->dropped : pc->begin, offset(pc));
    pc->fd = -1;
}

void pagecache_hand(PageCache *pc, int fd) {
    if (pc->fd >= 0) {
        int old = pc->fd;
        pagecache_finish(pc);
        close(old);
    }
    pc->fd = -1;
    if (fd < 0) return;
    pagecache_init(pc, fd, PAGECACHE_OUTPUT);
    if (pc->fd < 0) {
        close(fd);
        return;
    }
    pc->begin = pc->started = pc->dropped = 0; /* the whole file */
    (void)lseek(fd, 0, SEEK_END);
    kick(pc);
}

int pagecache_resident(const char *path, uint64_t *resident, uint64_t *pages) {
    *resident = *pages = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return -1;
    }
    if (st.st_size == 0) {
        close(fd);
        return 0;
    }
    size_t len = (size_t)st.st_size, psz = (size_t)sysconf(_SC_PAGESIZE);
    void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return -1;
    size_t n = (len + psz - 1) / psz;
    unsigned char *vec = malloc(n);
    int rc = -1;
    if (vec && mincore(map, len, vec) == 0) {
        for (size_t i = 0; i < n; i++)
            *resident += vec[i] & 1;
        *pages = n;
        rc = 0;
    }
    free(vec);
    munmap(map, len);
    return rc;
}

int pagecache_drops(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/.pagecache-probe.%ld", dir, (long)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return 0;
    char b[8192];
    memset(b, 'p', sizeof b);
    int ok = write(fd, b, sizeof b) == (ssize_t)sizeof b && fdatasync(fd) == 0 &&
             posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
    close(fd);
    uint64_t r, n;
    ok = ok && pagecache_resident(path, &r, &n) == 0 && r == 0 && n > 0;
    unlink(path);
    return ok;
}
