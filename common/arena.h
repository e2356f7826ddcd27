/* arena.h - bump allocator for per-record scratch memory.
 *
 * Why: filters parse one document at a time into many small pieces that all
 * die together. An arena hands them out by bumping a pointer and frees them
 * all at once with arena_reset(), so per-record loops never call malloc.
 *
 * Layout: a singly linked list of blocks; the newest block is the head.
 *
 *   head -> [Block | used ......... | free     ]
 *           [Block | used ...................... ] -> NULL (older)
 *
 * Every allocation is 16-byte aligned. A request larger than the block size
 * gets a block of its own. arena_reset() keeps the first (largest) block and
 * frees the rest, so a steady workload reaches a fixed footprint. Under
 * AddressSanitizer the unused tail of each block is poisoned, so reading
 * past an allocation is reported.
 */
#ifndef WB_ARENA_H
#define WB_ARENA_H

#include <stddef.h>

typedef struct ArenaBlock ArenaBlock;

typedef struct Arena {
    ArenaBlock *head;
    size_t block_size; /* default size of new blocks */
    size_t total;      /* bytes held in all blocks */
} Arena;

typedef struct ArenaMark {
    ArenaBlock *block;
    size_t used;
} ArenaMark;

/* Start an empty arena whose blocks are at least block_size bytes (0: 64 KiB). */
void arena_init(Arena *a, size_t block_size);

/* n bytes, 16-byte aligned, uninitialised; valid until reset/free. */
void *arena_alloc(Arena *a, size_t n);

/* Copy s[0..n) and NUL-terminate it in the arena. */
char *arena_strndup(Arena *a, const char *s, size_t n);

/* Remember the current position; arena_release() frees everything allocated
 * after it (blocks added since are freed too). */
ArenaMark arena_mark(Arena *a);
void arena_release(Arena *a, ArenaMark m);

/* Free every allocation; keep one block for reuse. */
void arena_reset(Arena *a);

/* Free all memory. The arena may be reused after arena_init(). */
void arena_free(Arena *a);

#endif
