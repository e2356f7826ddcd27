/* dedup.h - bounded-memory set of 64-bit content hashes.
 *
 * text_filter --dedup remembers each document (and, with sentences, each
 * sentence) it wrote as the 64-bit hash_bytes() of its bytes, in one
 * fixed-size open-addressing table: memory is set once and never grows.
 * Two different texts share a hash with probability about n^2 / 2^65 for n
 * remembered texts (below 1e-5 for 10^7), and the later one is then
 * dropped as a duplicate.
 *
 * When the table holds 3/4 of its capacity it is full: dedup_add() then
 * refuses new hashes (returns -1) while lookups keep working, so texts
 * remembered so far are still recognised and later new texts pass through
 * unremembered. The result stays deterministic for a given input order.
 *
 *   Dedup d;
 *   dedup_init(&d, 256u << 20);
 *   if (dedup_has(&d, h)) drop(); else dedup_add(&d, h);
 *   dedup_free(&d);
 */
#ifndef WB_DEDUP_H
#define WB_DEDUP_H

#include <stddef.h>
#include <stdint.h>

typedef struct Dedup {
    uint64_t *slots; /* 0 = empty; stored hashes are never 0 */
    size_t mask;     /* capacity - 1, a power of two */
    size_t count, limit;
    int full; /* an insertion was refused */
} Dedup;

/* Smallest table dedup_init accepts, in bytes. */
#define DEDUP_MIN_BYTES 1024

/* Allocate a table of at most `bytes` bytes (rounded down to a power of
 * two slots of 8 bytes; at least DEDUP_MIN_BYTES). Out of memory is fatal
 * (xcalloc). Pair with dedup_free(). */
void dedup_init(Dedup *d, size_t bytes);

/* Nonzero if hash h was added before. */
int dedup_has(const Dedup *d, uint64_t h);

/* Remember h: 1 if added, 0 if it was there, -1 if the table is full. */
int dedup_add(Dedup *d, uint64_t h);

/* Capacity in hashes before the table counts as full. */
size_t dedup_capacity(const Dedup *d);

void dedup_free(Dedup *d);

#endif
