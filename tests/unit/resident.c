/* resident.c - test driver: how much of each file is in the page cache.
 *
 *   build/tests/resident FILE...      one line "RESIDENT PAGES FILE" each
 *   build/tests/resident --probe DIR  exit 0 when DIR's file system drops a
 *                                     clean page on POSIX_FADV_DONTNEED
 *                                     (not tmpfs), else 1 (pagecache_drops)
 *
 * The CLI tests check --nocache with it (common/pagecache.h): a file read
 * or written with it is not in the cache afterwards. Exits 2 on a file it
 * cannot map.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/pagecache.h"

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--probe") == 0) return pagecache_drops(argv[2]) ? 0 : 1;
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
