/* spill.h - anonymous temporary files for the data of a shard that does
 * not need to stay in memory.
 *
 * A Spill is a file created in a directory and unlinked at once (io.h's
 * temp_fd), so it disappears
 * with the process however it ends, and holds only what is written to it.
 * Its pages live in the page cache, which the kernel may write out and drop:
 * they are not the process's memory. Writes and reads are by offset
 * (pwrite/pread) and safe from several threads; spill_append hands out
 * consecutive ranges. The first error is kept and every later call fails
 * too, so callers may check once at the end of a pass; its message names
 * what the data is for and the directory: "out.hdf5: temporary file in
 * DIR: No space left on device".
 *
 *   Spill f;
 *   if (spill_open(&f, "/scratch", "out.hdf5", &err)) ...
 *   uint64_t at = spill_append(&f, buf, n);   // or spill_pwrite at a known offset
 *   spill_pread(&f, out, n, at);
 *   if (spill_failed(&f, &err)) ...
 *   spill_close(&f);
 */
#ifndef WB_SPILL_H
#define WB_SPILL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/common.h"

typedef struct Spill {
    int fd;
    int open; /* 0: zeroed, or closed */
    const char *dir;
    const char *label;    /* what the data is for, in messages (or NULL) */
    pthread_mutex_t lock; /* end and err */
    uint64_t end;         /* bytes handed out by spill_append */
    int err;              /* the first errno, 0 while none */
} Spill;

/* Create an empty temporary file in dir (an existing directory; "" or NULL:
 * the current one); label (or NULL) starts its messages. Both must outlive
 * f. Returns 0, or -1 with err ("out.hdf5: cannot create a temporary file
 * in DIR: Permission denied"). */
int spill_open(Spill *f, const char *dir, const char *label, Err *err);

/* Write n bytes at the end of what spill_append handed out before and
 * return their offset. On an error the offset is still returned and the
 * error kept (spill_failed). */
uint64_t spill_append(Spill *f, const void *p, size_t n);

/* Write n bytes at offset off. Returns 0, or -1 (the error kept). */
int spill_pwrite(Spill *f, const void *p, size_t n, uint64_t off);

/* Read n bytes at offset off into p: all of them, or it is an error (a
 * short read is EIO). Returns 0, or -1 (the error kept; p is then zeroed). */
int spill_pread(Spill *f, void *p, size_t n, uint64_t off);

/* 1 with err set when a call on f failed, else 0. */
int spill_failed(Spill *f, Err *err);

/* Close f (its space is freed). A zeroed or closed Spill is left alone,
 * so this is safe to call twice. */
void spill_close(Spill *f);

/* ---- records by bucket ----
 *
 * Fixed-size records appended to one of k buckets, each bucket buffered
 * (bufsize bytes) and written to a Spill as a block when full: memory holds
 * the buffers and the list of blocks, whatever the number of records. After
 * the last add, each bucket is read back whole, its records in the order
 * added. Not safe from several threads at once (callers lock).
 *
 *   SpillBuckets sb;
 *   spill_buckets_open(&sb, 64, sizeof(Rec), 16 << 10, dir, "out.hdf5", &err);
 *   spill_buckets_add(&sb, key / width, &rec);
 *   for (size_t k = 0; k < 64; k++) spill_buckets_read(&sb, k, &records);
 *   spill_buckets_close(&sb);
 */
typedef struct SpillBlock {
    uint64_t off;
    uint32_t len, bucket;
} SpillBlock;

typedef struct SpillBuckets {
    size_t k, rec, bufsize;
    Buf *buf;        /* per bucket: its records not yet written */
    SpillBlock *blk; /* the blocks written, in order */
    size_t nblk, blkcap;
    size_t *first, *ord; /* the blocks grouped by bucket (at the first read) */
    Spill f;
} SpillBuckets;

/* k buckets of records of rec bytes, buffers of bufsize bytes (a multiple
 * of rec), the blocks in a Spill in dir (spill_open's arguments). Returns
 * 0, or -1 with err set. */
int spill_buckets_open(SpillBuckets *b, size_t k, size_t rec, size_t bufsize, const char *dir,
                       const char *label, Err *err);

/* Append one record to bucket k (< b->k). A write error is kept in b->f. */
void spill_buckets_add(SpillBuckets *b, size_t k, const void *rec);

/* Bucket k's records, in the order added, into out (cleared first); no
 * add after the first read. Returns 0, or -1 on a read error (kept in
 * b->f). */
int spill_buckets_read(SpillBuckets *b, size_t k, Buf *out);

/* Release b and its file. */
void spill_buckets_close(SpillBuckets *b);

/* The n records of `stride` bytes at items, each with a 32-bit bucket
 * number below k at byte offset boff, grouped by bucket (a counting sort,
 * each bucket's in their order): the record numbers in that order, and in
 * *first where each bucket starts in it (k + 1 places). Free both. */
size_t *group_by_bucket(const void *items, size_t n, size_t stride, size_t boff, size_t k,
                        size_t **first);

#endif
