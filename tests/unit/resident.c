/* resident.c - test driver: how much of each file is in the page cache.
 *
 *   build/tests/resident FILE...      one line "RESIDENT PAGES FILE" each
 *   build/tests/resident --probe DIR  exit 0 when DIR's file system drops a
 *                                     clean page on POSIX_FADV_DONTNEED
 *                                     (not tmpfs), else 1
 *
 * The CLI tests check --nocache with it (common/pagecache.h): a file read
 * or written with it is not in the cache afterwards. Exits 2 on a file it
 * cannot map.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/pagecache.h"

static int probe(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/.resident-probe.%ld", dir, (long)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return 2;
    char b[8192];
    memset(b, 'p', sizeof b);
    int ok = write(fd, b, sizeof b) == (ssize_t)sizeof b && fdatasync(fd) == 0 &&
             posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
    close(fd);
    uint64_t r, n;
    ok = ok && pagecache_resident(path, &r, &n) == 0 && r == 0 && n > 0;
    unlink(path);
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--probe") == 0) return probe(argv[2]);
    if (argc < 2) {
        fprintf(stderr, "usage: resident FILE... | resident --probe DIR\n");
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        uint64_t r, n;
        if (pagecache_resident(argv[i], &r, &n)) {
            fprintf(stderr, "resident: %s: cannot map\n", argv[i]);
            return 2;
        }
        printf("%llu %llu %s\n", (unsigned long long)r, (unsigned long long)n, argv[i]);
    }
    return 0;
}
