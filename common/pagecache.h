/* pagecache.h - keep the page cache from growing with a file that is read
 * or written once, front to back (--nocache).
 *
 * A workflow's stages each read the file the stage before wrote and write
 * one of about the same size. By default the kernel keeps both in its page
 * cache, so the cache grows by every file written until memory runs out
 * and it has to evict; on a VM whose host takes back the memory the guest
 * frees, each page the cache grows into costs a fault on the host too (10
 * microseconds a page, most of a light stage's time at enwiki's sizes).
 * Dropping an input's pages behind the reader, once the program holds
 * their bytes, lets the output reuse that memory: the cache stays as large
 * as one intermediate file instead of all of them, and nothing is read
 * twice from disk when no one else reads the input. Dropping an output's
 * pages once they are on disk does the same for a file the next stage
 * reads from disk.
 *
 * The file is handled in windows of PAGECACHE_WINDOW bytes: as the
 * program's position passes a window, the kernel is asked to start writing
 * that window's dirty pages (dirty pages cannot be dropped), and a window
 * PAGECACHE_LAG bytes behind is dropped (sync_file_range(2),
 * posix_fadvise(2) POSIX_FADV_DONTNEED). An output's windows are waited
 * for first, so that all of it leaves the cache. An input's are not: the
 * stage before may have written it a moment ago, and a reader never waits
 * for the disk on its account; what is still dirty stays cached (the
 * kernel writes it within 30 s), and what the kernel wrote meanwhile is
 * dropped at the end. Only regular files take part; a pipe, a terminal or
 * a device is left alone. It changes no byte read or written, only where
 * the pages are kept.
 *
 *   PageCache pc;
 *   pagecache_init(&pc, fileno(fp), nocache ? PAGECACHE_INPUT : 0);
 *   ... after each read, or each fflush of an output:
 *   pagecache_advance(&pc);
 *   pagecache_finish(&pc);   // done with the file, before fclose
 */
#ifndef WB_PAGECACHE_H
#define WB_PAGECACHE_H

#include <stdint.h>

#define PAGECACHE_WINDOW ((uint64_t)8 << 20)
#define PAGECACHE_LAG ((uint64_t)32 << 20)

/* pagecache_init's modes. */
enum {
    PAGECACHE_OFF = 0,
    PAGECACHE_INPUT = 1, /* a file read: drop what is on disk, never wait */
    PAGECACHE_OUTPUT = 2 /* a file written: wait for its writeback, drop all */
};

typedef struct PageCache {
    int fd;           /* -1: off */
    int wait;         /* PAGECACHE_OUTPUT */
    uint64_t begin;   /* the fd's offset at pagecache_init */
    uint64_t started; /* writeback asked for [begin, started) */
    uint64_t dropped; /* [begin, dropped) dropped (an input's: what was clean) */
} PageCache;

/* Prepare to drop fd's pages as the program moves through it from its
 * current offset: mode PAGECACHE_INPUT or PAGECACHE_OUTPUT, and fd a
 * regular file; else (PAGECACHE_OFF, a pipe) pc stays off and the calls
 * below do nothing. The fd is borrowed, not closed. */
void pagecache_init(PageCache *pc, int fd, int mode);

/* The program is done with the bytes of the file before the fd's offset
 * (read into its own memory, or written and flushed: fflush a FILE
 * first): start writing what of them is dirty, a window at a time, and
 * drop the windows more than PAGECACHE_LAG behind (an output's after
 * waiting for their writeback). Errors of the kernel's calls are ignored:
 * the pages then stay cached, as without --nocache. */
void pagecache_advance(PageCache *pc);

/* Hand over an output file just written and flushed, fd a descriptor of
 * its own (owned by pc from now on; -1: none): the file handed over
 * before is waited for, dropped and closed, then fd's writeback starts
 * and it waits in pc until the next call, so that a program writing one
 * file after another never waits for the disk between them. Start with
 * pc {.fd = -1}; end with pagecache_hand(pc, -1). */
void pagecache_hand(PageCache *pc, int fd);

/* Done with the file: drop everything before the fd's offset, an
 * output's after waiting for its writeback, an input's as far as it is
 * on disk (from its beginning, for the windows that were dirty when
 * passed); pc is off afterwards. */
void pagecache_finish(PageCache *pc);

/* The pages of the file at path that are in the page cache and their
 * total (mincore(2) on a mapping of it), for tests. Returns 0, or
 * -1 when the file cannot be opened or mapped (an empty file: 0 of 0). */
int pagecache_resident(const char *path, uint64_t *resident, uint64_t *pages);

/* Whether the file system of dir drops a clean page on
 * POSIX_FADV_DONTNEED (tmpfs keeps it: --nocache changes nothing there),
 * found with a small file written, synced, dropped, counted and removed.
 * Returns 1 or 0 (0 too when no file can be made in dir). For tests. */
int pagecache_drops(const char *dir);

#endif
