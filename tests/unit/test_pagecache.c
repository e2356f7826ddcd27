/* test_pagecache.c - --nocache: files read or written once leave the page
 * cache behind the program (common/pagecache.h), with the bytes unchanged.
 *
 * The files go to a directory made in the current one (the build's disk):
 * a file system that keeps pages on POSIX_FADV_DONTNEED (tmpfs) cannot
 * show a drop, and the checks of residency then say they did not run. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/io.h"
#include "common/pagecache.h"
#include "tests/test.h"

#define MB ((size_t)1 << 20)
#define FILE_MB 56 /* more than PAGECACHE_WINDOW + PAGECACHE_LAG */

static char dir[] = "wbpcXXXXXX";

/* Line i of the test file: 1 MB lines with their number in front. */
static void fill_line(char *line, size_t i) {
    memset(line, 'a' + (int)(i % 26), MB - 1);
    snprintf(line, 32, "%zu ", i);
    line[strlen(line)] = ' ';
    line[MB - 1] = '\n';
}

/* Resident pages of path (-1 when mincore fails). */
static int64_t resident(const char *path) {
    uint64_t r, n;
    return pagecache_resident(path, &r, &n) ? -1 : (int64_t)r;
}

/* Write FILE_MB lines to path through a FILE, with or without dropping;
 * returns the pages resident after the last line, before the finish. */
static int64_t write_file(const char *path, int on) {
    FILE *fp = fopen(path, "wb");
    test_cond("open for writing", fp != NULL);
    if (!fp) return -1;
    PageCache pc;
    pagecache_init(&pc, fileno(fp), on ? PAGECACHE_OUTPUT : PAGECACHE_OFF);
    test_cond("on for a regular file when asked", (pc.fd >= 0) == on);
    char *line = malloc(MB);
    int64_t mid = -1;
    for (size_t i = 0; i < FILE_MB; i++) {
        fill_line(line, i);
        fwrite(line, 1, MB, fp);
        fflush(fp);
        pagecache_advance(&pc);
        if (i == FILE_MB - 1) mid = resident(path);
    }
    pagecache_finish(&pc);
    test_cond("written", fclose(fp) == 0);
    free(line);
    return mid;
}

static void test_write(int drops) {
    char path[64];
    snprintf(path, sizeof path, "%s/w.txt", dir);
    uint64_t r, n;
    int64_t mid = write_file(path, 1);
    test_cond("mincore", pagecache_resident(path, &r, &n) == 0);
    test_cond("every page counted", n == FILE_MB * MB / (uint64_t)sysconf(_SC_PAGESIZE));
    if (drops) {
        /* at the end, what lies more than a lag and a window behind is
         * gone (FILE_MB is more than that) */
        uint64_t most = (PAGECACHE_LAG + PAGECACHE_WINDOW) / (uint64_t)sysconf(_SC_PAGESIZE);
        test_cond("dropped behind the writer", mid >= 0 && (uint64_t)mid <= most);
        test_cond("nothing left when finished", r == 0);
    }
    /* the bytes are those written */
    FILE *fp = fopen(path, "rb");
    char *line = malloc(MB), *got = malloc(MB);
    int same = fp != NULL;
    for (size_t i = 0; same && i < FILE_MB; i++) {
        fill_line(line, i);
        same = fread(got, 1, MB, fp) == MB && memcmp(got, line, MB) == 0;
    }
    same = same && fgetc(fp) == EOF;
    test_cond("the file holds what was written", same);
    if (fp) fclose(fp);
    free(line), free(got);
    unlink(path);

    /* off: the kernel's default, the pages stay (the file is new and dirty) */
    write_file(path, 0);
    if (drops) test_cond("off: kept", resident(path) > (int64_t)(n / 2));
    unlink(path);
}

/* Read path's FILE_MB lines through a Reader; returns whether every line
 * came back as written, and *mid the pages resident at the last line. */
static int read_file_lines(char *path, int nocache, int64_t *mid) {
    char *paths[] = {path}, *want = malloc(MB);
    Reader rd;
    reader_init(&rd, paths, 1);
    rd.nocache = nocache;
    const char *line;
    size_t len, lines = 0;
    int same = 1;
    Err err;
    while (reader_next_line(&rd, &line, &len, &err) == 1) {
        fill_line(want, lines);
        same = same && len == MB - 1 && memcmp(line, want, len) == 0;
        if (++lines == FILE_MB) *mid = resident(path);
    }
    reader_free(&rd);
    free(want);
    return same && lines == FILE_MB;
}

/* A Reader with nocache: every line comes back, and the file leaves the
 * cache; without, it stays. */
static void test_read(int drops) {
    char path[64];
    snprintf(path, sizeof path, "%s/r.txt", dir);
    write_file(path, 0);
    /* on disk, as an input the kernel has written: a reader never waits
     * for the writeback of what is still dirty, and that stays cached */
    int fd = open(path, O_RDONLY);
    test_cond("synced", fd >= 0 && fdatasync(fd) == 0);
    if (fd >= 0) close(fd);
    uint64_t r, n;
    test_cond("mincore", pagecache_resident(path, &r, &n) == 0);
    for (int on = 1; on >= 0; on--) {
        int64_t mid = -1;
        int same = read_file_lines(path, on, &mid);
        test_cond(on ? "nocache: every line read" : "every line read", same);
        if (!drops) continue;
        if (on) {
            /* the reader's buffer is up to two chunks ahead of its lines */
            uint64_t most =
                (PAGECACHE_LAG + PAGECACHE_WINDOW + 2 * MB) / (uint64_t)sysconf(_SC_PAGESIZE);
            test_cond("dropped behind the reader", mid >= 0 && (uint64_t)mid <= most);
            test_cond("read: nothing left", resident(path) == 0);
        } else {
            test_cond("off: read into the cache", resident(path) > (int64_t)(n / 2));
        }
    }
    /* an input still dirty: read all the same, without waiting for it */
    write_file(path, 0);
    int64_t mid = -1;
    test_cond("a dirty input: every line read", read_file_lines(path, 1, &mid));
    unlink(path);
}

/* A pipe, and a file without asking, stay off. */
static void test_off(void) {
    int p[2];
    test_cond("pipe", pipe(p) == 0);
    PageCache pc;
    pagecache_init(&pc, p[0], PAGECACHE_INPUT);
    test_cond("a pipe is left alone", pc.fd == -1);
    pagecache_advance(&pc); /* no-ops */
    pagecache_finish(&pc);
    close(p[0]), close(p[1]);
    pagecache_init(&pc, -1, PAGECACHE_OUTPUT);
    test_cond("no descriptor", pc.fd == -1);
    uint64_t r = 1, n = 1;
    char path[64];
    snprintf(path, sizeof path, "%s/empty", dir);
    FILE *fp = fopen(path, "wb");
    if (fp) fclose(fp);
    test_cond("an empty file: 0 of 0", pagecache_resident(path, &r, &n) == 0 && r == 0 && n == 0);
    unlink(path);
    test_cond("a missing file", pagecache_resident(path, &r, &n) == -1);
}

int main(void) {
    test_cond("mkdtemp", mkdtemp(dir) != NULL);
    int drops = pagecache_drops(dir);
    if (!drops)
        printf("test_pagecache: the file system here keeps pages on POSIX_FADV_DONTNEED "
               "(tmpfs?): the residency checks not run\n");
    test_write(drops);
    test_read(drops);
    test_off();
    rmdir(dir);
    return test_report();
}
