/* hash.h - string -> uint64 map and the project's one hash function.
 *
 * Open addressing with linear probing, power-of-two capacity, load factor
 * kept at or below 1/2 (the table doubles before it passes that). Keys are
 * copied into the map's own arena, so callers may reuse their buffers.
 * Lookups cost one hash plus, on average, fewer than two probes.
 *
 * The hash is 64-bit FNV-1a over the bytes followed by a murmur3 finalizer
 * (FNV alone mixes the high bits poorly for power-of-two tables).
 *
 *   StrMap m; strmap_init(&m, 0);
 *   *strmap_slot(&m, "word", 4) += 1;        // insert-or-find, count
 *   uint64_t *v = strmap_get(&m, "word", 4); // NULL if absent
 *   strmap_free(&m);
 */
#ifndef WB_HASH_H
#define WB_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"

/* Hash n bytes (stable across runs and machines). */
uint64_t hash_bytes(const void *p, size_t n);

typedef struct StrMapEntry {
    const char *key; /* NUL-terminated copy in the map's arena; NULL = empty */
    uint32_t len;
    uint64_t hash;
    uint64_t value;
} StrMapEntry;

typedef struct StrMap {
    StrMapEntry *slots;
    size_t cap, count;
    Arena keys;
} StrMap;

/* Empty map sized for about `expect` keys (0: a small default). */
void strmap_init(StrMap *m, size_t expect);

/* Pointer to the value for key (inserted with value 0 if absent). The
 * pointer is valid until the next insertion. */
uint64_t *strmap_slot(StrMap *m, const char *key, size_t len);

/* Pointer to the value, or NULL if key is absent. */
uint64_t *strmap_get(const StrMap *m, const char *key, size_t len);

/* Free the table and the keys. */
void strmap_free(StrMap *m);

#endif
