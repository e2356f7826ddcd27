/* hash.c - FNV-1a + finalizer, and the open-addressing StrMap of hash.h. */
#include "common/hash.h"

#include <string.h>

#include "common/common.h"

uint64_t hash_bytes(const void *p, size_t n) {
    const unsigned char *s = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0x100000001b3ull;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

/* A zeroed table of cap slots. Written here rather than calloc'ed: calloc
 * hands out untouched pages, the first read of one maps the shared zero
 * page and the first write then replaces it, which in a process with
 * several running threads costs a TLB flush on every other CPU per page. */
static StrMapEntry *new_slots(size_t cap) {
    StrMapEntry *s = xmalloc(cap * sizeof *s);
    memset(s, 0, cap * sizeof *s);
    return s;
}

void strmap_init(StrMap *m, size_t expect) {
    size_t cap = 16;
    while (cap < expect * 2)
        cap *= 2;
    m->slots = new_slots(cap);
    m->cap = cap;
    m->count = 0;
    arena_init(&m->keys, 0);
}

static StrMapEntry *probe(StrMapEntry *slots, size_t cap, uint64_t h, const char *key, size_t len) {
    size_t i = (size_t)h & (cap - 1);
    for (;;) {
        StrMapEntry *e = &slots[i];
        if (!e->key || (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0)) return e;
        i = (i + 1) & (cap - 1);
    }
}

static void grow(StrMap *m) {
    size_t cap = m->cap * 2;
    StrMapEntry *slots = new_slots(cap);
    for (size_t i = 0; i < m->cap; i++) {
        StrMapEntry *e = &m->slots[i];
        if (e->key) *probe(slots, cap, e->hash, e->key, e->len) = *e;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
}

uint64_t *strmap_slot(StrMap *m, const char *key, size_t len) {
    if (len > UINT32_MAX) die("strmap: key of %zu bytes is too long", len);
    if ((m->count + 1) * 2 > m->cap) grow(m);
    uint64_t h = hash_bytes(key, len);
    StrMapEntry *e = probe(m->slots, m->cap, h, key, len);
    if (!e->key) {
        e->key = arena_strndup(&m->keys, key, len);
        e->len = (uint32_t)len;
        e->hash = h;
        e->value = 0;
        m->count++;
    }
    return &e->value;
}

uint64_t *strmap_get(const StrMap *m, const char *key, size_t len) {
    StrMapEntry *e = probe(m->slots, m->cap, hash_bytes(key, len), key, len);
    return e->key ? &e->value : NULL;
}

void strmap_free(StrMap *m) {
    free(m->slots);
    m->slots = NULL;
    m->cap = m->count = 0;
    arena_free(&m->keys);
}
