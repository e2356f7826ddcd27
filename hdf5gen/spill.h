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

#endif
