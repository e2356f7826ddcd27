/* dedup.c - fixed-size hash set for duplicate removal; see dedup.h.
 *
 * Linear probing over a power-of-two table indexed by the low bits of the
 * hash (hash_bytes() ends with a murmur3 finalizer, so those bits are well
 * mixed). At the 3/4 load limit an unsuccessful lookup costs about 8.5
 * probes on average (Knuth's estimate (1 + 1/(1-a)^2) / 2).
 */
#include "tokenize/dedup.h"

#include "common/common.h"

static inline uint64_t stored(uint64_t h) { return h ? h : 1; }

void dedup_init(Dedup *d, size_t bytes) {
    size_t slots = DEDUP_MIN_BYTES / sizeof(uint64_t);
    while (slots * 2 * sizeof(uint64_t) <= bytes)
        slots *= 2;
    d->slots = xcalloc(slots, sizeof(uint64_t));
    d->mask = slots - 1;
    d->count = 0;
    d->limit = slots / 4 * 3;
    d->full = 0;
}

int dedup_has(const Dedup *d, uint64_t h) {
    h = stored(h);
    for (size_t i = (size_t)h & d->mask;; i = (i + 1) & d->mask) {
        if (d->slots[i] == h) return 1;
        if (!d->slots[i]) return 0;
    }
}

int dedup_add(Dedup *d, uint64_t h) {
    h = stored(h);
    size_t i = (size_t)h & d->mask;
    for (; d->slots[i]; i = (i + 1) & d->mask)
        if (d->slots[i] == h) return 0;
    if (d->count >= d->limit) {
        d->full = 1;
        return -1;
    }
    d->slots[i] = h;
    d->count++;
    return 1;
}

size_t dedup_capacity(const Dedup *d) { return d->limit; }

void dedup_free(Dedup *d) {
    free(d->slots);
    d->slots = NULL;
    d->mask = d->count = d->limit = 0;
}
