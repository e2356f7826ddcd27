/* arena.c - bump allocator; see arena.h for the layout. */
#include "common/arena.h"

#include <string.h>

#include "common/common.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define ALIGN 16u

struct ArenaBlock {
    ArenaBlock *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

void arena_init(Arena *a, size_t block_size) {
    a->head = NULL;
    a->block_size = block_size ? block_size : 64u << 10;
    a->total = 0;
}

static ArenaBlock *new_block(Arena *a, size_t min) {
    size_t size = min > a->block_size ? min : a->block_size;
    ArenaBlock *b = xmalloc(sizeof *b + size);
    b->size = size;
    b->used = 0;
    b->next = a->head;
    a->head = b;
    a->total += size;
    POISON(b->data, size);
    return b;
}

void *arena_alloc(Arena *a, size_t n) {
    size_t need = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (need < n) die("arena: allocation of %zu bytes overflows", n);
    ArenaBlock *b = a->head;
    if (!b || b->size - b->used < need) b = new_block(a, need);
    void *p = b->data + b->used;
    b->used += need;
    UNPOISON(p, n);
    return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

ArenaMark arena_mark(Arena *a) {
    ArenaMark m = {a->head, a->head ? a->head->used : 0};
    return m;
}

void arena_release(Arena *a, ArenaMark m) {
    while (a->head && a->head != m.block) {
        ArenaBlock *next = a->head->next;
        a->total -= a->head->size;
        free(a->head);
        a->head = next;
    }
    if (a->head) {
        POISON(a->head->data + m.used, a->head->size - m.used);
        a->head->used = m.used;
    }
}

void arena_reset(Arena *a) {
    ArenaBlock *keep = NULL;
    for (ArenaBlock *b = a->head, *next; b; b = next) {
        next = b->next;
        if (!keep || b->size > keep->size) {
            if (keep) free(keep);
            keep = b;
        } else
            free(b);
    }
    a->head = keep;
    a->total = keep ? keep->size : 0;
    if (keep) {
        keep->next = NULL;
        keep->used = 0;
        POISON(keep->data, keep->size);
    }
}

void arena_free(Arena *a) {
    for (ArenaBlock *b = a->head, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    a->head = NULL;
    a->total = 0;
}
