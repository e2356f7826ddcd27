/* bpetrain.c - SentencePiece-compatible BPE training; see bpetrain.h.
 *
 * Source of the behaviour matched: google/sentencepiece (Apache-2.0, read
 * for its rules, no code taken), src/trainer_interface.cc (LoadSentences,
 * SplitIntoWords, IsValidSentencePiece, the character coverage),
 * src/bpe_model_trainer.cc (the merge loop) and src/util.h (the
 * reservoir sampler). vocab/NOTES-bpe.md summarises them.
 *
 * ==== How spm_train picks a merge, and how it is reproduced ====
 *
 * spm_train keeps every bigram symbol it has seen in a hash map (the
 * "cache"), each with a lazily recomputed frequency, and an "active" set:
 * every 100 emitted pieces (and again after a skipped duplicate when the
 * count is still a multiple of 100) the active set becomes the
 * max(1000, 5% of the cache) most frequent bigrams (std::partial_sort); in
 * between, bigrams created by a merge join it. Each step scans the active
 * set for the best symbol: highest frequency, then fewer code points, then
 * the smaller UTF-8 string. A symbol whose string was already emitted is
 * dropped without a merge (its occurrences stay unmerged for good).
 *
 * Here the frequencies are exact at all times (the lazy recomputation in
 * spm_train gives the same numbers whenever it looks at them), all live
 * pairs sit in one indexed max-heap under the same order, and the active
 * set is implied rather than stored: a pair is active if a merge created it
 * in the current window, or if its frequency at the last update (kept as a
 * snapshot the first time it changes in a window) was above the cut. The
 * cut itself comes from a frequency histogram. So a step looks at the heap
 * top and only looks further when the top is not active, which in practice
 * happens only when the corpus runs short of pairs. (sentencepiece 0.2.3
 * dropped the window for a global priority queue; the two agree whenever
 * the window never hides the best pair, which BpeStats.window_skips
 * counts. NOTES-bpe.md lists where releases differ.)
 *
 * What cannot be reproduced exactly: (1) which of several pairs with the
 * frequency at the cut make it into the active set (spm_train's answer
 * depends on std::unordered_map iteration order and the heap inside
 * std::partial_sort); here the ones that sort first by length, string and
 * age win. It can only matter when the best active pair has fallen to the
 * cut frequency; BpeStats.cut_ties_used counts the windows where it did.
 * (2) two different pairs that spell the same string with the same
 * frequency: spm_train takes the one at the lower heap address, here the
 * older one. (3) spm_train keeps at most 65535 characters of a word
 * (positions are 16 bits) and aborts beyond; here words have no limit.
 *
 * Memory: the counting phase holds the distinct words once in a shared
 * table plus a table of at most FLUSH_WORDS words per thread; training
 * holds each distinct word once as 8-byte cells (a symbol and its pair
 * id) and a 16-byte record, and per pair a 104-byte record, an 8-byte map
 * slot, a 12-byte heap entry, its string and the list of words it occurs
 * in: about 390 bytes a distinct word on Wikipedia text (vocab/README.md).
 * It is all freed once the pieces are chosen.
 */
#define _GNU_SOURCE /* qsort_r */
#include "vocab/bpetrain.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/hash.h"
#include "common/io.h"
#include "common/pool.h"
#include "common/uniprop.h"
#include "common/utf8.h"

#define WS_CP 0x2581u  /* "▁": whitespace after escaping */
#define UNK_CP 0x2585u /* "▅": stands for characters outside the alphabet */
#define WS_UTF8 "\xe2\x96\x81"
#define UNK_UTF8 "\xe2\x96\x85"
#define NUM_META 3 /* <unk> <s> </s> */
#define MAX_WORKERS 256
#define BATCH_BYTES (1u << 20)
#define BATCH_RECORDS 8192
#define FLUSH_WORDS (1u << 16) /* a thread's table holds at most this many words */
#define MIN_ACTIVE 1000        /* kMinActiveSymbolsSize */
#define ACTIVE_RATIO 0.05f     /* kTopFrequentRatio */
#define UPDATE_INTERVAL 100    /* kUpdateActiveSymbolsInteval */

/* ---- Scripts and piece validity ---- */

int bpe_script(uint32_t cp) {
    if (cp == 0x30FC) return UNI_SC_HAN; /* KATAKANA-HIRAGANA PROLONGED SOUND MARK */
    /* Unicode 9.0 values that later versions changed */
    if (cp == 0x0589 || cp == 0x061C) return UNI_SC_COMMON;
    if (cp == 0x0953 || cp == 0x0954) return UNI_SC_DEVANAGARI;
    /* scripts of Unicode 9.0 missing from spm_train's table */
    if ((cp >= 0x10980 && cp <= 0x1099F) || (cp >= 0x10B40 && cp <= 0x10B7F) ||
        (cp >= 0x13000 && cp <= 0x1342F) || (cp >= 0x14400 && cp <= 0x1467F))
        return UNI_SC_COMMON;
    unsigned age = uni_age(cp);
    if (age == 0 || age > 0x0900) return UNI_SC_COMMON; /* unassigned in Unicode 9.0 */
    int s = uni_script(cp);
    if (s == UNI_SC_HIRAGANA || s == UNI_SC_KATAKANA) return UNI_SC_HAN;
    if (s == UNI_SC_INHERITED) return BPE_SCRIPT_ANY;
    if (s == UNI_SC_UNKNOWN) return UNI_SC_COMMON;
    return s;
}

/* Script of a character symbol as the validity rules use it. */
static int char_script(uint32_t cp) { return cp == WS_CP ? BPE_SCRIPT_ANY : bpe_script(cp); }

int bpe_valid_piece(const char *s, size_t n, int max_len) {
    int script = BPE_SCRIPT_ANY, nchars = 0;
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t k = utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (k == 0) return 0;
        if (cp == UNK_CP || cp == 0 || cp == '\t' || cp == ' ') return 0;
        if (cp == WS_CP && i > 0) return 0;
        int sc = char_script(cp);
        if (sc != BPE_SCRIPT_ANY) {
            if (script != BPE_SCRIPT_ANY && script != sc) return 0;
            script = sc;
        }
        i += k;
        nchars++;
    }
    return nchars > 0 && nchars <= max_len;
}

/* ---- std::mt19937 and libstdc++'s uniform_int_distribution<uint64_t> ----
 *
 * spm_train's ReservoirSampler (releases up to 0.2.1) draws
 * `std::uniform_int_distribution<uint64>(0, total - 1)` from a std::mt19937
 * seeded with 12345678. The engine is the standard MT19937; the
 * distribution is libstdc++'s: a range that fits in 32 bits is reduced with
 * Lemire's multiply-and-reject method, a larger one is built from two
 * draws. The same sample as Debian's spm_train 0.1.97 (tested); 0.2.3 draws
 * from absl::BitGen instead (NOTES-bpe.md). */

typedef struct Mt {
    uint32_t s[624];
    int i;
} Mt;

static void mt_seed(Mt *m, uint32_t seed) {
    m->s[0] = seed;
    for (int i = 1; i < 624; i++)
        m->s[i] = 1812433253u * (m->s[i - 1] ^ (m->s[i - 1] >> 30)) + (uint32_t)i;
    m->i = 624;
}

static uint32_t mt_next(Mt *m) {
    if (m->i >= 624) {
        for (int k = 0; k < 624; k++) {
            uint32_t y = (m->s[k] & 0x80000000u) | (m->s[(k + 1) % 624] & 0x7FFFFFFFu);
            m->s[k] = m->s[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1) ? 0x9908B0DFu : 0);
        }
        m->i = 0;
    }
    uint32_t y = m->s[m->i++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9D2C5680u;
    y ^= (y << 15) & 0xEFC60000u;
    y ^= y >> 18;
    return y;
}

/* Uniform in [0, hi]. */
static uint64_t mt_uniform(Mt *m, uint64_t hi) {
    if (hi < 0xFFFFFFFFull) {
        uint32_t range = (uint32_t)hi + 1;
        uint64_t prod = (uint64_t)mt_next(m) * range;
        uint32_t low = (uint32_t)prod;
        if (low < range) {
            uint32_t threshold = (uint32_t)(-range) % range;
            while (low < threshold) {
                prod = (uint64_t)mt_next(m) * range;
                low = (uint32_t)prod;
            }
        }
        return prod >> 32;
    }
    if (hi == 0xFFFFFFFFull) return mt_next(m);
    uint64_t tmp, ret;
    do {
        tmp = (1ull << 32) * mt_uniform(m, hi >> 32);
        ret = tmp + mt_next(m);
    } while (ret > hi || ret < tmp);
    return ret;
}

/* ---- Trainer state ---- */

/* Symbol states. A character symbol is always in the cache; a pair is
 * LIVE once created, ERASED when merged or dropped as a duplicate, and
 * DEAD when spm_train would have created it again after a duplicate drop
 * (in the cache, frequency 0 forever). */
enum { ST_CHAR, ST_LIVE, ST_DEAD, ST_ERASED };
enum { SF_WS = 1, SF_UNK = 2, SF_DIRTY = 4, SF_DEFERRED = 8 };

/* The words a pair occurs in (ascending, no repeats; entries may be stale).
 * One word is stored inline. */
typedef struct WList {
    uint32_t n, cap;
    union {
        uint32_t one;
        uint32_t *v;
    };
} WList;

typedef struct Sym {
    int32_t left, right; /* parts of a pair; -1 for characters */
    int64_t freq;        /* occurrences weighted by word counts (exact) */
    int64_t snap;        /* effective freq at the last update, if snap_epoch is current */
    int64_t hreg;        /* frequency the histogram holds for this pair */
    const char *str;     /* UTF-8 (not NUL-terminated) */
    uint64_t pfx;        /* its first 8 bytes, big-endian, zero-padded: a fast first compare */
    uint32_t order;      /* creation order: spm_train's allocation order */
    int32_t heap;        /* index in the heap, -1 if not in it */
    int32_t hbig;        /* index in the big-frequency list, -1 if not in it */
    int32_t born, snap_epoch, active_epoch, tie_epoch;
    int16_t script; /* one script or BPE_SCRIPT_ANY */
    uint16_t nbytes, nchars;
    uint8_t state, flags;
    WList words;
} Sym;

#define HIST_SMALL (1u << 20) /* exact histogram below this frequency */
#define HIST_BLOCK 1024

/* One symbol of a word, and the pair it forms with the next symbol (-1:
 * none, or not a valid piece): kept side by side so that a word is read
 * with as few cache misses as possible. */
typedef struct Cell {
    int32_t sym, pair;
} Cell;

/* A distinct word: how often it occurs, where its cells start, how many
 * there are now (16 bytes). */
typedef struct WordRec {
    uint64_t count;
    uint32_t off, len;
} WordRec;

/* A heap entry: a pair and the frequency it was last filed under (12
 * bytes, packed). */
typedef struct __attribute__((packed)) HeapEnt {
    int64_t key;
    int32_t id;
} HeapEnt;

/* One slot of the pair map: a pair's id (< 0: an empty slot) and the high
 * half of its key's hash; the key itself is the pair's left and right
 * parts, read from the symbol when the tags agree. */
typedef struct PSlot {
    int32_t id;
    uint32_t tag;
} PSlot;

/* Byte blocks for strings that live as long as their owner. */
typedef struct Bytes {
    char *blk;
    size_t left;
    char **blks;
    size_t n;
} Bytes;

/* Word counts: open addressing with linear probing, load at most 1/2.
 * Keys of up to WT_INLINE bytes sit in the slot (one cache line holds two
 * slots), longer ones in the table's byte blocks. */
#define WT_INLINE 12
typedef struct WSlot {
    uint64_t h; /* 0: empty (hashes are never 0) */
    uint64_t count;
    uint32_t len;
    char in[WT_INLINE]; /* the key, or a pointer to it when longer */
} WSlot;

typedef struct WordTable {
    WSlot *s;
    size_t cap, n;
    Bytes keys;
} WordTable;

typedef struct Counter {
    WordTable words;
    Buf norm, cooked;
    Buf pre;  /* the line as BpeOpts.pretok rewrote it */
    Buf held; /* held-out lines, each followed by '\n' */
    uint64_t nwords, nheld;
} Counter;

enum { RM_ALL, RM_FIRST, RM_SAMPLE_IDX, RM_SAMPLE_SEL, RM_SAMPLE_MEM, RM_STORED };

struct BpeTrainer {
    BpeOpts o;
    TextNorm *own_norm;
    uint8_t plain[256]; /* ASCII characters the normalizer leaves alone */
    BpeStats st;
    Err err;

    /* counting: per-thread tables, emptied into `all` when they grow */
    Counter *ctr;
    int nctr;
    WordTable all;
    pthread_mutex_t all_mu;
    Reader rd;
    int mode, stop, counts_void;
    Mt mt;
    /* RM_SAMPLE_*: the sampled line ordinals, 4 bytes each while they fit
     * (res32), 8 once a line number passes 2^32 (res_idx) */
    uint32_t *res32;
    uint64_t *res_idx;
    uint64_t res_n, sel_pos;
    char **res_line; /* RM_SAMPLE_MEM: sampled lines, each [u32 len][bytes] */
    uint64_t stored_pos;
    uint64_t last_progress;

    /* training: words */
    size_t nwords;
    Cell *cells; /* symbols of all words back to back, each with its pair */
    size_t capcells;
    WordRec *words;

    /* training: symbols */
    Sym *syms; /* all symbols, by id (pointers into it die when it grows) */
    size_t nsym, capsym;
    uint32_t nchar_syms, next_order;
    PSlot *pmap; /* pair map: (left << 32 | right) -> sym id */
    size_t pcap, pcount;
    Bytes strs; /* piece strings */

    /* training: selection */
    HeapEnt *heap;
    size_t nheap, capheap;
    uint32_t *hist, *hblock;
    int32_t *big;
    size_t nbig, capbig;
    int32_t *dirty, *deferred;
    size_t ndirty, capdirty, ndeferred, capdeferred;
    uint64_t cache_size, nlive, ndead;
    int32_t epoch;
    int all_active, tie_done;
    int64_t cut_freq;
    uint64_t cut_take, cut_total;

    /* result */
    StrMap emitted;
    Buf pieces; /* piece bytes back to back */
    size_t *poff;
    uint32_t *plen;
    size_t npieces, cappieces;
    uint32_t *req_cp; /* the alphabet, in output order */
    size_t nreq;
    int trained;
};

static inline Sym *S(const BpeTrainer *t, int32_t id) { return &t->syms[id]; }

/* ---- Large tables ---- */

/* Zeroed memory for a table of n bytes; free it with big_free(p, n).
 * Tables of several megabytes are probed at random, so they come straight
 * from mmap, aligned to 2 MiB and offered to the kernel as transparent
 * huge pages (madvise; the kernel may decline), which spares most TLB
 * misses; and they go back to the system when freed, whichever thread
 * freed them. Smaller ones come from calloc. */
#define HUGE_PAGE ((size_t)2 << 20)
#define BIG_MIN (2 * HUGE_PAGE)
static inline size_t big_size(size_t n) { return (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1); }

static void *big_calloc(size_t n) {
    if (n < BIG_MIN) return xcalloc(1, n ? n : 1);
    size_t sz = big_size(n);
    char *p =
        mmap(NULL, sz + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) die("out of memory (%zu bytes)", sz);
    char *a = (char *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (a > p) munmap(p, (size_t)(a - p));
    if (a + sz < p + sz + HUGE_PAGE) munmap(a + sz, (size_t)(p + sz + HUGE_PAGE - (a + sz)));
    madvise(a, sz, MADV_HUGEPAGE);
    return a;
}

static void big_free(void *p, size_t n) {
    if (!p) return;
    if (n < BIG_MIN)
        free(p);
    else
        munmap(p, big_size(n));
}

/* Grow a big_calloc() table of `old` bytes to `n` bytes (the new part
 * zeroed). */
static void *big_realloc(void *p, size_t old, size_t n) {
    void *q = big_calloc(n);
    if (p) memcpy(q, p, old < n ? old : n);
    big_free(p, old);
    return q;
}

/* ---- Byte blocks and word tables ---- */

static char *bytes_alloc(Bytes *b, size_t n) {
    if (b->left < n) {
        size_t sz = n > (1u << 20) ? n : (1u << 20);
        b->blks = xrealloc(b->blks, (b->n + 1) * sizeof *b->blks);
        b->blks[b->n++] = b->blk = xmalloc(sz);
        b->left = sz;
    }
    char *p = b->blk;
    b->blk += n;
    b->left -= n;
    return p;
}

static void bytes_free(Bytes *b) {
    for (size_t i = 0; i < b->n; i++)
        free(b->blks[i]);
    free(b->blks);
    memset(b, 0, sizeof *b);
}

/* A 64-bit hash of s[0..n), never 0. Stable across runs and machines; the
 * order of a table never shows in the output, which is sorted. */
static inline uint64_t whash(const char *s, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)n;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, s, 8);
        h = (h ^ v) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
        s += 8;
        n -= 8;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)(unsigned char)s[i] << (8 * i);
    h = (h ^ v) * 0x94d049bb133111ebull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return h | 1;
}

static inline const char *wt_key(const WSlot *e) {
    if (e->len <= WT_INLINE) return e->in;
    const char *p;
    memcpy(&p, e->in, sizeof p);
    return p;
}

static void wt_init(WordTable *t, size_t expect) {
    memset(t, 0, sizeof *t);
    t->cap = 1024;
    while (t->cap < 2 * expect)
        t->cap *= 2;
    t->s = big_calloc(t->cap * sizeof *t->s);
}

static void wt_free(WordTable *t) {
    big_free(t->s, t->cap * sizeof *t->s);
    bytes_free(&t->keys);
    memset(t, 0, sizeof *t);
}

static void wt_grow(WordTable *t) {
    size_t cap = t->cap * 2;
    WSlot *s = big_calloc(cap * sizeof *s);
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->s[i].h) continue;
        size_t j = t->s[i].h & (cap - 1);
        while (s[j].h)
            j = (j + 1) & (cap - 1);
        s[j] = t->s[i];
    }
    big_free(t->s, t->cap * sizeof *t->s);
    t->s = s;
    t->cap = cap;
}

/* Add `count` to the key k[0..n) with hash h. */
static void wt_add_h(WordTable *t, const char *k, size_t n, uint64_t h, uint64_t count) {
    size_t i = h & (t->cap - 1);
    char pad[WT_INLINE] = {0}; /* a short key as it sits in a slot, zero-padded */
    if (n <= WT_INLINE) memcpy(pad, k, n);
    for (;; i = (i + 1) & (t->cap - 1)) {
        WSlot *e = &t->s[i];
        if (!e->h) break;
        if (e->h == h && e->len == n &&
            (n <= WT_INLINE ? memcmp(e->in, pad, WT_INLINE) == 0 : memcmp(wt_key(e), k, n) == 0)) {
            e->count += count;
            return;
        }
    }
    if ((t->n + 1) * 2 > t->cap) {
        wt_grow(t);
        i = h & (t->cap - 1);
        while (t->s[i].h)
            i = (i + 1) & (t->cap - 1);
    }
    WSlot *e = &t->s[i];
    e->h = h;
    e->count = count;
    e->len = (uint32_t)n;
    if (n <= WT_INLINE) {
        memcpy(e->in, k, n);
    } else {
        char *p = bytes_alloc(&t->keys, n);
        memcpy(p, k, n);
        memcpy(e->in, &p, sizeof p);
    }
    t->n++;
}

static inline void wt_add(WordTable *t, const char *k, size_t n, uint64_t count) {
    wt_add_h(t, k, n, whash(k, n), count);
}

/* Add every count of `from` to `to` and empty `from`. */
static void wt_merge(WordTable *to, WordTable *from) {
    for (size_t j = 0; j < from->cap; j++)
        if (from->s[j].h)
            wt_add_h(to, wt_key(&from->s[j]), from->s[j].len, from->s[j].h, from->s[j].count);
    wt_free(from);
    wt_init(from, 0);
}

BpeTrainer *bpe_create(const BpeOpts *o) {
    BpeTrainer *t = xcalloc(1, sizeof *t);
    t->o = *o;
    if (t->o.nthreads < 1) t->o.nthreads = 1;
    if (t->o.nthreads > MAX_WORKERS) t->o.nthreads = MAX_WORKERS;
    if (!t->o.norm) {
        Err e;
        t->own_norm = textnorm_new(NULL, 0, NULL, &e);
        t->o.norm = t->own_norm;
    }
    for (int b = 0x20; b < 0x7F; b++) {
        char ch = (char)b;
        const char *rep;
        size_t rlen;
        size_t k = textnorm_prefix(t->o.norm, &ch, 1, &rep, &rlen);
        t->plain[b] = k == 1 && rlen == 1 && rep[0] == ch &&
                      !textnorm_key_continues_ascii(t->o.norm, (unsigned char)b);
    }
    t->nctr = t->o.nthreads;
    t->ctr = xcalloc((size_t)t->nctr, sizeof *t->ctr);
    for (int i = 0; i < t->nctr; i++)
        wt_init(&t->ctr[i].words, 0);
    wt_init(&t->all, 0);
    pthread_mutex_init(&t->all_mu, NULL);
    return t;
}

static void wlist_free(WList *l) {
    if (l->cap > 1) free(l->v);
    memset(l, 0, sizeof *l);
}

/* Free the training state (words, symbols, pair map, heap); the pieces
 * stay. */
static void train_free(BpeTrainer *t) {
    big_free(t->cells, t->capcells * sizeof *t->cells);
    big_free(t->words, t->nwords * sizeof *t->words);
    for (size_t i = 0; i < t->nsym; i++)
        wlist_free(&S(t, (int32_t)i)->words);
    free(t->syms);
    big_free(t->pmap, t->pcap * sizeof *t->pmap);
    bytes_free(&t->strs);
    big_free(t->heap, t->capheap * sizeof *t->heap), free(t->hist), free(t->hblock), free(t->big);
    free(t->dirty), free(t->deferred);
    if (t->emitted.slots) strmap_free(&t->emitted);
    t->cells = NULL, t->words = NULL, t->syms = NULL, t->pmap = NULL, t->heap = NULL;
    t->hist = t->hblock = NULL, t->big = NULL, t->dirty = t->deferred = NULL;
    t->capcells = t->nwords = t->nsym = t->capsym = t->pcap = t->pcount = t->capheap = 0;
    t->nheap = t->nbig = t->capbig = t->ndirty = t->capdirty = t->ndeferred = t->capdeferred = 0;
    memset(&t->emitted, 0, sizeof t->emitted);
    malloc_trim(0);
}

void bpe_destroy(BpeTrainer *t) {
    if (!t) return;
    for (int i = 0; i < t->nctr; i++) {
        wt_free(&t->ctr[i].words);
        buf_free(&t->ctr[i].norm);
        buf_free(&t->ctr[i].cooked);
        buf_free(&t->ctr[i].pre);
        buf_free(&t->ctr[i].held);
    }
    free(t->ctr);
    wt_free(&t->all);
    pthread_mutex_destroy(&t->all_mu);
    if (t->own_norm) textnorm_free(t->own_norm);
    free(t->res32);
    free(t->res_idx);
    if (t->res_line) {
        for (uint64_t i = 0; i < t->res_n; i++)
            free(t->res_line[i]);
        free(t->res_line);
    }
    train_free(t);
    buf_free(&t->pieces);
    free(t->poff), free(t->plen), free(t->req_cp);
    free(t);
}

void bpe_held_out(const BpeTrainer *t, Buf *out) {
    for (int i = 0; i < t->nctr; i++)
        buf_append(out, t->ctr[i].held.data, t->ctr[i].held.len);
}

const BpeStats *bpe_stats(const BpeTrainer *t) { return &t->st; }

/* ---- Counting ---- */

/* Replace "<unk>", "<s>" and "</s>" with a TAB, as spm_train's meta-piece
 * matcher does after normalization. Returns s or the rewritten copy. */
static const char *replace_meta(Buf *out, const char *s, size_t n, size_t *outn) {
    if (!memchr(s, '<', n)) {
        *outn = n;
        return s;
    }
    buf_clear(out);
    size_t i = 0;
    while (i < n) {
        if (s[i] == '<') {
            size_t m = 0;
            if (n - i >= 5 && memcmp(s + i, "<unk>", 5) == 0)
                m = 5;
            else if (n - i >= 3 && memcmp(s + i, "<s>", 3) == 0)
                m = 3;
            else if (n - i >= 4 && memcmp(s + i, "</s>", 4) == 0)
                m = 4;
            if (m) {
                buf_putc(out, '\t');
                i += m;
                continue;
            }
        }
        buf_putc(out, s[i++]);
    }
    *outn = out->len;
    return out->data;
}

/* Split normalized text into words (each starts at a U+2581, the first at
 * the start) as SplitIntoWords does, and count them. The slots of a group
 * of words are prefetched before they are counted, so that their cache
 * misses overlap. */
#define WORD_GROUP 32
static void count_words(Counter *c, const char *s, size_t n) {
    const char *end = s + n, *w = s;
    const char *wp[WORD_GROUP];
    size_t wl[WORD_GROUP];
    uint64_t wh[WORD_GROUP];
    while (w < end) {
        int k = 0;
        for (; k < WORD_GROUP && w < end; k++) {
            const char *p = w + 1, *q = end;
            while (p < end) {
                const char *e2 = memchr(p, 0xE2, (size_t)(end - p));
                if (!e2) break;
                if (end - e2 >= 3 && (unsigned char)e2[1] == 0x96 && (unsigned char)e2[2] == 0x81) {
                    q = e2;
                    break;
                }
                p = e2 + 1;
            }
            wp[k] = w;
            wl[k] = (size_t)(q - w);
            wh[k] = whash(w, wl[k]);
            __builtin_prefetch(&c->words.s[wh[k] & (c->words.cap - 1)]);
            w = q;
        }
        for (int i = 0; i < k; i++)
            wt_add_h(&c->words, wp[i], wl[i], wh[i], 1);
        c->nwords += (uint64_t)k;
    }
}

/* textnorm_normalize() with the default switches, faster: a printable ASCII
 * character that the map leaves alone (t->plain) and that no longer key
 * can extend is copied without a trie lookup when the next byte is ASCII
 * too. Everything else goes through textnorm_prefix(), and the whitespace
 * rules are the same: leading and trailing spaces dropped, runs collapsed,
 * a U+2581 in front and for every space. The unit tests hold it to
 * textnorm_normalize() on real text. */
static void normalize(const BpeTrainer *t, const char *s, size_t n, Buf *out) {
    static const char kSpace[] = WS_UTF8;
    const TextNorm *sn = t->o.norm;
    const char *rep;
    size_t rlen;
    while (n > 0) { /* leading whitespace */
        unsigned char b = (unsigned char)s[0];
        if (b == ' ' && t->plain[' '] && (n == 1 || (unsigned char)s[1] < 0x80)) {
            s++, n--;
            continue;
        }
        size_t k = textnorm_prefix(sn, s, n, &rep, &rlen);
        if (!(rlen == 1 && rep[0] == ' ')) break;
        s += k;
        n -= k;
    }
    if (n == 0) return;
    size_t start = out->len;
    buf_reserve(out, 3 * n + 3);
    memcpy(out->data + out->len, kSpace, 3);
    out->len += 3;
    int prev_space = 1;
    while (n > 0) {
        /* a run of plain characters other than the space: copied, except
         * its last one when a non-ASCII byte follows (a key may join them) */
        size_t r = 0;
        while (r < n && t->plain[(unsigned char)s[r]] && s[r] != ' ')
            r++;
        if (r > 0 && r < n && (unsigned char)s[r] >= 0x80) r--;
        if (r > 0) {
            memcpy(out->data + out->len, s, r); /* room: 3 bytes per input byte */
            out->len += r;
            prev_space = 0;
            s += r, n -= r;
            continue;
        }
        if (s[0] == ' ' && t->plain[' '] && (n == 1 || (unsigned char)s[1] < 0x80)) {
            if (!prev_space) {
                memcpy(out->data + out->len, kSpace, 3);
                out->len += 3;
                prev_space = 1;
            }
            s++, n--;
            continue;
        }
        size_t k = textnorm_prefix(sn, s, n, &rep, &rlen);
        if (prev_space)
            while (rlen > 0 && rep[0] == ' ')
                rep++, rlen--;
        if (rlen > 0) {
            buf_reserve(out, 3 * rlen + 3 * n);
            for (size_t i = 0; i < rlen; i++) {
                if (rep[i] == ' ') {
                    memcpy(out->data + out->len, kSpace, 3);
                    out->len += 3;
                } else {
                    out->data[out->len++] = rep[i];
                }
            }
            prev_space = rep[rlen - 1] == ' ';
        }
        s += k;
        n -= k;
    }
    while (out->len - start >= 3 && memcmp(out->data + out->len - 3, kSpace, 3) == 0)
        out->len -= 3;
    out->data[out->len] = '\0';
}

void bpe_normalize(const BpeTrainer *t, const char *s, size_t n, Buf *out) {
    normalize(t, s, n, out);
}

/* Is the line one of the held-out share? A hash of its bytes and the seed
 * decides, so the choice depends on nothing else. */
static int held_back(const BpeTrainer *t, const char *line, size_t len) {
    uint64_t h = hash_bytes(line, len) ^ (t->o.seed * 0x9E3779B97F4A7C15ull);
    h ^= h >> 31, h *= 0xBF58476D1CE4E5B9ull, h ^= h >> 29;
    return (double)(h >> 11) * 0x1.0p-53 < t->o.held_out;
}

/* Count one loadable line; returns 0 when it was held back instead. */
static int count_line(const BpeTrainer *t, Counter *c, const char *line, size_t len) {
    if (t->o.held_out > 0 && held_back(t, line, len)) {
        buf_append(&c->held, line, len);
        buf_putc(&c->held, '\n');
        c->nheld++;
        return 0;
    }
    if (t->o.pretok) {
        buf_clear(&c->pre);
        t->o.pretok(t->o.pretok_ctx, (int)(c - t->ctr), line, len, &c->pre);
        line = c->pre.data ? c->pre.data : "", len = c->pre.len;
    }
    buf_clear(&c->norm);
    normalize(t, line, len, &c->norm);
    if (!c->norm.len) return 1;
    size_t n;
    const char *s = replace_meta(&c->cooked, c->norm.data, c->norm.len, &n);
    count_words(c, s, n);
    return 1;
}

/* The line filters of LoadSentences: 0 = load it, else the reason. */
enum { LF_OK, LF_EMPTY, LF_LONG, LF_RESERVED };
static int line_filter(const BpeTrainer *t, const char *line, size_t len) {
    if (len == 0) return LF_EMPTY;
    if (len > t->o.max_sentence_length) return LF_LONG;
    for (const char *p = line, *end = line + len; (p = memchr(p, 0xE2, (size_t)(end - p))) != NULL;
         p++)
        if (end - p >= 3 && (unsigned char)p[1] == 0x96 && (unsigned char)p[2] == 0x85)
            return LF_RESERVED;
    return LF_OK;
}

static void note_filtered(BpeTrainer *t, int f) {
    if (f == LF_EMPTY)
        t->st.empty++;
    else if (f == LF_LONG)
        t->st.too_long++;
    else
        t->st.reserved++;
}

void bpe_add_line(BpeTrainer *t, const char *line, size_t len) {
    t->st.lines++;
    int f = line_filter(t, line, len);
    if (f != LF_OK) {
        note_filtered(t, f);
        return;
    }
    t->st.loadable++;
    if (count_line(t, &t->ctr[0], line, len))
        t->st.sentences++;
    else
        t->st.held_out++;
}

void bpe_add_word(BpeTrainer *t, const char *word, size_t len, uint64_t count) {
    if (!len || !count) return;
    wt_add(&t->ctr[0].words, word, len, count);
    t->ctr[0].nwords += count;
}

static void batch_add(Batch *b, const char *line, size_t len) {
    uint32_t n = (uint32_t)len;
    buf_append(&b->in, &n, sizeof n);
    buf_append(&b->in, line, len);
    b->nrec++;
}

static void show_reading(BpeTrainer *t) {
    if (t->o.progress && t->st.lines - t->last_progress >= 65536) {
        t->last_progress = t->st.lines;
        t->o.progress(t->o.progress_ctx, "reading", t->st.lines, 0);
    }
}

/* Keep a copy of a line for the in-memory sample. */
static char *line_copy(const char *line, size_t len) {
    char *p = xmalloc(sizeof(uint32_t) + len);
    uint32_t n = (uint32_t)len;
    memcpy(p, &n, sizeof n);
    memcpy(p + sizeof n, line, len);
    return p;
}

/* The sampled ordinals: entry k, and the switch to 8 bytes an entry. */
static inline uint64_t res_get(const BpeTrainer *t, uint64_t k) {
    return t->res32 ? t->res32[k] : t->res_idx[k];
}

static void res_widen(BpeTrainer *t) {
    t->res_idx = xmalloc((size_t)t->res_n * sizeof *t->res_idx);
    for (uint64_t i = 0; i < t->res_n; i++)
        t->res_idx[i] = t->res32[i];
    free(t->res32);
    t->res32 = NULL;
}

/* One loadable line number `ord` arrived: the sampler's decision. Returns
 * 1 if the line goes to counting now. */
static int sample_line(BpeTrainer *t, uint64_t ord, const char *line, size_t len) {
    uint64_t N = t->o.input_sentence_size;
    switch (t->mode) {
    case RM_ALL:
        return 1;
    case RM_FIRST:
        if (ord + 1 >= N) t->stop = 1;
        return 1;
    case RM_SAMPLE_IDX: /* pass 1 draws the sample, pass 2 (RM_SAMPLE_SEL) counts it */
        if (ord < N) return 0;
        if (!t->res32 && !t->res_idx) { /* more lines than N: the reservoir */
            if (N > UINT32_MAX) {
                t->res_idx = xmalloc((size_t)N * sizeof *t->res_idx);
                for (uint64_t i = 0; i < N; i++)
                    t->res_idx[i] = i;
            } else {
                t->res32 = xmalloc((size_t)N * sizeof *t->res32);
                for (uint64_t i = 0; i < N; i++)
                    t->res32[i] = (uint32_t)i;
            }
            t->res_n = N;
        }
        if (ord > UINT32_MAX && t->res32) res_widen(t);
        {
            uint64_t k = mt_uniform(&t->mt, ord);
            if (k < N) {
                if (t->res32)
                    t->res32[k] = (uint32_t)ord;
                else
                    t->res_idx[k] = ord;
            }
        }
        return 0;
    case RM_SAMPLE_SEL:
        if (!t->res_n) return 1; /* no more than N lines: all of them */
        if (t->sel_pos < t->res_n && res_get(t, t->sel_pos) == ord) {
            if (++t->sel_pos == t->res_n) t->stop = 1;
            return 1;
        }
        return 0;
    case RM_SAMPLE_MEM:
        if (ord < N) {
            if (t->res_n == 0 || (t->res_n & (t->res_n - 1)) == 0)
                t->res_line = xrealloc(t->res_line,
                                       (size_t)(t->res_n ? 2 * t->res_n : 1) * sizeof *t->res_line);
            t->res_line[t->res_n++] = line_copy(line, len);
        } else {
            uint64_t k = mt_uniform(&t->mt, ord);
            if (k < N) {
                free(t->res_line[k]);
                t->res_line[k] = line_copy(line, len);
            }
        }
        return 0;
    }
    return 0;
}

static int fill(void *ctx, Batch *b) {
    BpeTrainer *t = ctx;
    if (t->mode == RM_STORED) {
        while (t->stored_pos < t->res_n && b->in.len < BATCH_BYTES && b->nrec < BATCH_RECORDS) {
            const char *p = t->res_line[t->stored_pos++];
            uint32_t n;
            memcpy(&n, p, sizeof n);
            batch_add(b, p + sizeof n, n);
        }
        return b->nrec > 0;
    }
    const char *line;
    size_t len;
    int r = 0;
    int second = t->mode == RM_SAMPLE_SEL; /* lines were counted in pass 1 */
    while (!t->stop && b->in.len < BATCH_BYTES && b->nrec < BATCH_RECORDS &&
           (r = reader_next_line(&t->rd, &line, &len, &t->err)) == 1) {
        int f = line_filter(t, line, len);
        if (!second) {
            t->st.lines++;
            show_reading(t);
            if (f != LF_OK) {
                note_filtered(t, f);
                continue;
            }
        } else if (f != LF_OK) {
            continue;
        }
        /* ordinal among loadable lines (pass 2 counts them again in stored_pos) */
        uint64_t ord = second ? t->stored_pos++ : t->st.loadable++;
        if (sample_line(t, ord, line, len)) batch_add(b, line, len);
    }
    if (r < 0) return -1;
    return b->nrec > 0;
}

static void work(void *ctx, int wid, Batch *b) {
    BpeTrainer *t = ctx;
    Counter *c = &t->ctr[wid];
    const char *p = b->in.data, *end = b->in.data + b->in.len;
    while (p < end) {
        uint32_t n;
        memcpy(&n, p, sizeof n);
        p += sizeof n;
        b->counts[count_line(t, c, p, n) ? 0 : 1]++;
        p += n;
    }
    if (c->words.n > FLUSH_WORDS) {
        pthread_mutex_lock(&t->all_mu);
        wt_merge(&t->all, &c->words);
        pthread_mutex_unlock(&t->all_mu);
    }
}

static int flush(void *ctx, Batch *b) {
    BpeTrainer *t = ctx;
    if (!t->counts_void) t->st.sentences += b->counts[0], t->st.held_out += b->counts[1];
    return 0;
}

static int u32_cmp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int u64_cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void reset_counts(BpeTrainer *t) {
    wt_free(&t->all);
    wt_init(&t->all, 0);
    for (int i = 0; i < t->nctr; i++) {
        wt_free(&t->ctr[i].words);
        wt_init(&t->ctr[i].words, 0);
        t->ctr[i].nwords = 0;
        buf_clear(&t->ctr[i].held);
        t->ctr[i].nheld = 0;
    }
    t->st.sentences = 0;
    t->st.held_out = 0;
}

/* Check that every input can be read, before any reading: -2 with err set
 * for one that cannot (missing, unreadable, a directory). Nothing is opened
 * (a FIFO is opened once, by the reader). *all_regular: every input is a
 * regular file, which can be read twice (the two-pass sample). */
static int check_inputs(char **inputs, int n, int *all_regular, Err *err) {
    *all_regular = n > 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(inputs[i], "-") == 0) {
            *all_regular = 0;
            continue;
        }
        if (input_check(inputs[i], err)) return -2;
        struct stat sb;
        if (stat(inputs[i], &sb) != 0 || !S_ISREG(sb.st_mode)) *all_regular = 0;
    }
    return 0;
}

static int run_pass(BpeTrainer *t, char **inputs, int n) {
    static const PoolOps ops = {fill, work, flush};
    t->stop = 0;
    if (t->mode != RM_STORED) reader_init(&t->rd, inputs, n);
    int rc = pool_run(t->o.nthreads, &ops, t);
    if (t->mode != RM_STORED) reader_free(&t->rd);
    return rc;
}

int bpe_read(BpeTrainer *t, char **inputs, int n, Err *err) {
    int all_regular;
    double t0 = now_sec();
    if (check_inputs(inputs, n, &all_regular, err)) return -2;
    uint64_t N = t->o.input_sentence_size;
    mt_seed(&t->mt, (uint32_t)t->o.seed);
    t->mode = N == 0          ? RM_ALL
              : !t->o.shuffle ? RM_FIRST
              : all_regular   ? RM_SAMPLE_IDX
                              : RM_SAMPLE_MEM;
    /* A sample from regular files: the first pass reads the lines and
     * draws, the second counts the words of the lines kept (all of them if
     * no more than N were loadable). Nothing is counted twice. */
    t->counts_void = t->mode == RM_SAMPLE_IDX;
    if (run_pass(t, inputs, n)) goto fail;
    if (t->mode == RM_SAMPLE_IDX) {
        reset_counts(t);
        if (t->res32)
            qsort(t->res32, (size_t)t->res_n, sizeof *t->res32, u32_cmp);
        else if (t->res_n)
            qsort(t->res_idx, (size_t)t->res_n, sizeof *t->res_idx, u64_cmp);
        t->mode = RM_SAMPLE_SEL;
        t->sel_pos = 0;
        t->stored_pos = 0;
        t->counts_void = 0;
        t->st.sampled = t->res_n > 0;
        if (run_pass(t, inputs, n)) goto fail;
        free(t->res32);
        free(t->res_idx);
        t->res32 = NULL;
        t->res_idx = NULL;
    } else if (t->mode == RM_SAMPLE_MEM) {
        t->st.sampled = t->st.loadable > N;
        t->mode = RM_STORED;
        t->stored_pos = 0;
        if (run_pass(t, inputs, n)) goto fail;
        for (uint64_t i = 0; i < t->res_n; i++)
            free(t->res_line[i]);
        free(t->res_line);
        t->res_line = NULL;
        t->res_n = 0;
    }
    t->st.sec_read += now_sec() - t0;
    return 0;
fail:
    *err = t->err;
    return -1;
}

/* ---- Training: symbols, pair map, piece strings ---- */

static inline int64_t eff(const Sym *s) { return s->state == ST_DEAD ? 0 : s->freq; }

static int32_t sym_new(BpeTrainer *t) {
    if (t->nsym == t->capsym) {
        if (t->capsym >= (size_t)INT32_MAX / 2) die("bpe: more than 2^30 symbols");
        /* realloc: large blocks grow by mremap, without a copy */
        size_t cap = t->capsym ? t->capsym + t->capsym / 2 : 4096;
        t->syms = xrealloc(t->syms, cap * sizeof *t->syms);
        t->capsym = cap;
    }
    int32_t id = (int32_t)t->nsym++;
    Sym *s = S(t, id);
    memset(s, 0, sizeof *s);
    s->left = s->right = -1;
    s->heap = s->hbig = -1;
    s->order = t->next_order++;
    s->born = t->epoch;
    s->snap_epoch = s->active_epoch = s->tie_epoch = -1;
    return id;
}

/* Copy a[0..na) b[0..nb) into the string store. */
static const char *str_store(BpeTrainer *t, const char *a, size_t na, const char *b, size_t nb) {
    char *p = bytes_alloc(&t->strs, na + nb);
    memcpy(p, a, na);
    if (nb) memcpy(p + na, b, nb);
    return p;
}

static uint64_t str_prefix(const char *s, size_t n) {
    uint64_t p = 0;
    for (size_t i = 0; i < 8; i++)
        p = p << 8 | (i < n ? (unsigned char)s[i] : 0);
    return p;
}

static inline uint64_t pkey(int32_t a, int32_t b) {
    return (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
}

/* The 64-bit hash of a pair key: the low bits pick the slot, the high 32
 * are the slot's tag. */
static inline uint64_t phash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

static int32_t pmap_get(const BpeTrainer *t, uint64_t key) {
    if (!t->pcap) return -1;
    uint64_t h = phash(key);
    uint32_t tag = (uint32_t)(h >> 32);
    for (size_t i = (size_t)h & (t->pcap - 1);; i = (i + 1) & (t->pcap - 1)) {
        const PSlot *e = &t->pmap[i];
        if (e->id < 0) return -1;
        if (e->tag == tag) {
            const Sym *s = S(t, e->id);
            if (pkey(s->left, s->right) == key) return e->id;
        }
    }
}

/* Put id under hash h into a map with room for it. */
static void pmap_insert(PSlot *m, size_t cap, uint64_t h, int32_t id) {
    size_t i = (size_t)h & (cap - 1);
    while (m[i].id >= 0)
        i = (i + 1) & (cap - 1);
    m[i].id = id;
    m[i].tag = (uint32_t)(h >> 32);
}

/* The map holds at most 3/4 of its slots: a slot is 8 bytes, so a pair
 * costs 11-21 bytes here. */
static void pmap_put(BpeTrainer *t, uint64_t key, int32_t id) {
    if ((t->pcount + 1) * 4 > t->pcap * 3) {
        size_t oldcap = t->pcap, cap = oldcap ? 2 * oldcap : 1024;
        PSlot *old = t->pmap, *m = big_calloc(cap * sizeof *m);
        for (size_t i = 0; i < cap; i++)
            m[i].id = -1;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].id >= 0) {
                const Sym *s = S(t, old[i].id);
                pmap_insert(m, cap, phash(pkey(s->left, s->right)), old[i].id);
            }
        big_free(old, oldcap * sizeof *old);
        t->pmap = m;
        t->pcap = cap;
    }
    pmap_insert(t->pmap, t->pcap, phash(key), id);
    t->pcount++;
}

static void wlist_push(WList *l, uint32_t w) {
    if (l->n == 0) {
        l->one = w;
        l->n = l->cap = 1;
        return;
    }
    uint32_t last = l->cap == 1 ? l->one : l->v[l->n - 1];
    if (last == w) return;
    if (l->cap == 1) {
        uint32_t *v = xmalloc(4 * sizeof *v);
        v[0] = l->one;
        l->v = v;
        l->cap = 4;
    } else if (l->n == l->cap) {
        l->cap *= 2;
        l->v = xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    l->v[l->n++] = w;
}

/* ---- Training: the heap and the frequency histogram ----
 *
 * The heap holds every live pair not deferred, ordered as spm_train ranks
 * candidates: frequency (descending), code points, UTF-8 bytes, age. Each
 * entry carries the frequency it is filed under. After a merge,
 * fix_dirty() files every rise at once, one pair at a time, so the heap
 * stays consistent while a merge changes many counts; a fall is left for
 * select_best() to notice when the pair reaches the top (the key then
 * overstates the count, never understates it). The histogram counts live
 * pairs per frequency (exactly below HIST_SMALL, in a list above it) so
 * that the frequency at the active-set cut is found without a sort. */

/* Below frequency: fewer code points, then the smaller UTF-8 string, then
 * the older symbol. Negative if a ranks first. */
static inline int rank(const Sym *a, const Sym *b) {
    if (a->nchars != b->nchars) return a->nchars < b->nchars ? -1 : 1;
    if (a->pfx != b->pfx) return a->pfx < b->pfx ? -1 : 1;
    if (a->nbytes > 8 && b->nbytes > 8) {
        size_t n = (a->nbytes < b->nbytes ? a->nbytes : b->nbytes) - 8;
        int c = memcmp(a->str + 8, b->str + 8, n);
        if (c) return c;
    }
    if (a->nbytes != b->nbytes) return a->nbytes < b->nbytes ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* Heap order: the registered key (a frequency), then rank(). */
static inline int better(const BpeTrainer *t, HeapEnt a, HeapEnt b) {
    if (a.key != b.key) return a.key > b.key;
    return rank(S(t, a.id), S(t, b.id)) < 0;
}

static inline void heap_put(BpeTrainer *t, size_t i, HeapEnt e) {
    t->heap[i] = e;
    S(t, e.id)->heap = (int32_t)i;
}

/* A 4-ary heap: half the depth of a binary one. */
#define HEAP_D 4

static void sift_up(BpeTrainer *t, size_t i) {
    HeapEnt e = t->heap[i];
    while (i > 0) {
        size_t p = (i - 1) / HEAP_D;
        if (!better(t, e, t->heap[p])) break;
        heap_put(t, i, t->heap[p]);
        i = p;
    }
    heap_put(t, i, e);
}

static void sift_down(BpeTrainer *t, size_t i) {
    HeapEnt e = t->heap[i];
    for (;;) {
        size_t c = HEAP_D * i + 1;
        if (c >= t->nheap) break;
        size_t end = c + HEAP_D < t->nheap ? c + HEAP_D : t->nheap, best = c;
        for (size_t j = c + 1; j < end; j++)
            if (better(t, t->heap[j], t->heap[best])) best = j;
        if (!better(t, t->heap[best], e)) break;
        heap_put(t, i, t->heap[best]);
        i = best;
    }
    heap_put(t, i, e);
}

static void heap_push(BpeTrainer *t, int32_t id) {
    if (t->nheap == t->capheap) {
        size_t cap = t->capheap ? 2 * t->capheap : 1024;
        t->heap = big_realloc(t->heap, t->capheap * sizeof *t->heap, cap * sizeof *t->heap);
        t->capheap = cap;
    }
    t->heap[t->nheap] = (HeapEnt){eff(S(t, id)), id};
    sift_up(t, t->nheap++);
}

static void heap_remove(BpeTrainer *t, int32_t id) {
    Sym *s = S(t, id);
    size_t i = (size_t)s->heap;
    s->heap = -1;
    if (i == --t->nheap) return;
    HeapEnt moved = t->heap[t->nheap];
    heap_put(t, i, moved);
    sift_up(t, i);
    sift_down(t, (size_t)S(t, moved.id)->heap);
}

static void hist_add(BpeTrainer *t, Sym *s, int32_t id, int64_t f) {
    s->hreg = f;
    if (f < HIST_SMALL) {
        t->hist[f]++;
        t->hblock[f / HIST_BLOCK]++;
        return;
    }
    if (t->nbig == t->capbig) {
        t->capbig = t->capbig ? 2 * t->capbig : 256;
        t->big = xrealloc(t->big, t->capbig * sizeof *t->big);
    }
    s->hbig = (int32_t)t->nbig;
    t->big[t->nbig++] = id;
}

static void hist_del(BpeTrainer *t, Sym *s) {
    int64_t f = s->hreg;
    if (f < HIST_SMALL) {
        t->hist[f]--;
        t->hblock[f / HIST_BLOCK]--;
        return;
    }
    int32_t last = t->big[--t->nbig];
    if ((size_t)s->hbig != t->nbig) {
        t->big[s->hbig] = last;
        S(t, last)->hbig = s->hbig;
    }
    s->hbig = -1;
}

static void mark_dirty(BpeTrainer *t, Sym *s, int32_t id) {
    if (s->flags & SF_DIRTY) return;
    s->flags |= SF_DIRTY;
    if (t->ndirty == t->capdirty) {
        t->capdirty = t->capdirty ? 2 * t->capdirty : 1024;
        t->dirty = xrealloc(t->dirty, t->capdirty * sizeof *t->dirty);
    }
    t->dirty[t->ndirty++] = id;
}

/* Bring the histogram and the heap up to date with the changed pairs. */
static void fix_dirty(BpeTrainer *t) {
    for (size_t k = 0; k < t->ndirty; k++) {
        int32_t id = t->dirty[k];
        Sym *s = S(t, id);
        s->flags &= (uint8_t)~SF_DIRTY;
        if (s->state != ST_LIVE) continue;
        if (s->freq != s->hreg) {
            hist_del(t, s);
            hist_add(t, s, id, s->freq);
        }
        /* a rise is filed at once; a fall waits until the pair reaches the
         * top (select_best), as its key only overstates it meanwhile */
        if (s->heap >= 0) {
            if (s->freq > t->heap[s->heap].key) {
                t->heap[s->heap].key = s->freq;
                sift_up(t, (size_t)s->heap);
            }
        } else if (!(s->flags & SF_DEFERRED)) {
            heap_push(t, id);
        }
    }
    t->ndirty = 0;
}

/* ---- Training: pair bookkeeping (spm_train's GetPairSymbol, AddNewPair,
 * ResetFreq with exact counts) ---- */

static int pair_valid(const BpeTrainer *t, const Sym *a, const Sym *b) {
    if ((a->flags | b->flags) & SF_UNK) return 0;
    if (b->flags & SF_WS) return 0; /* U+2581 only as the first character */
    if ((int)a->nchars + (int)b->nchars > t->o.max_piece_length) return 0;
    return a->script == BPE_SCRIPT_ANY || b->script == BPE_SCRIPT_ANY || a->script == b->script;
}

/* Put a pair that entered the cache into the histogram and the heap (once
 * training is under way; the initial pairs are added in bulk). */
static void cache_enter(BpeTrainer *t, Sym *s, int32_t id, int ready) {
    t->cache_size++;
    if (s->state == ST_LIVE)
        t->nlive++;
    else
        t->ndead++;
    if (!ready) return;
    hist_add(t, s, id, eff(s));
    heap_push(t, id);
}

static void cache_leave(BpeTrainer *t, Sym *s, int32_t id) {
    if (s->heap >= 0) heap_remove(t, id);
    hist_del(t, s);
    t->cache_size--;
    if (s->state == ST_LIVE)
        t->nlive--;
    else
        t->ndead--;
    s->state = ST_ERASED;
    s->flags &= (uint8_t)~SF_DEFERRED;
    wlist_free(&s->words);
}

static int32_t pair_create(BpeTrainer *t, int32_t a, int32_t b, uint64_t key, int ready) {
    int32_t id = sym_new(t);
    Sym *s = S(t, id);
    const Sym *x = S(t, a), *y = S(t, b);
    s->left = a;
    s->right = b;
    s->state = ST_LIVE;
    s->nchars = (uint16_t)(x->nchars + y->nchars);
    s->nbytes = (uint16_t)(x->nbytes + y->nbytes);
    s->str = str_store(t, x->str, x->nbytes, y->str, y->nbytes);
    s->pfx = str_prefix(s->str, s->nbytes);
    s->script = x->script != BPE_SCRIPT_ANY ? x->script : y->script;
    s->flags = x->flags & SF_WS;
    pmap_put(t, key, id);
    cache_enter(t, s, id, ready);
    if (t->cache_size - t->nchar_syms > t->st.pairs) t->st.pairs = t->cache_size - t->nchar_syms;
    return id;
}

static inline void freq_add(BpeTrainer *t, Sym *s, int32_t id, int64_t d, int ready) {
    if (ready && s->state == ST_LIVE) {
        if (s->snap_epoch != t->epoch) {
            s->snap = s->freq;
            s->snap_epoch = t->epoch;
        }
        mark_dirty(t, s, id);
    }
    s->freq += d;
}

/* AddNewPair: the pair a b now occurs in word w (count c). Returns the
 * pair's id, or -1 when a b is not a valid piece. */
static int32_t pair_add(BpeTrainer *t, int32_t a, int32_t b, int64_t c, uint32_t w, int ready) {
    if (!pair_valid(t, S(t, a), S(t, b))) return -1;
    uint64_t key = pkey(a, b);
    int32_t id = pmap_get(t, key);
    if (id < 0) {
        id = pair_create(t, a, b, key, ready);
    } else if (S(t, id)->state == ST_ERASED) {
        /* not reached (a new pair always holds the symbol just merged); kept
         * for completeness: spm_train would start a new symbol */
        Sym *s = S(t, id);
        s->state = ST_LIVE;
        s->freq = 0;
        s->order = t->next_order++;
        s->born = t->epoch;
        cache_enter(t, s, id, ready);
    }
    Sym *s = S(t, id);
    s->active_epoch = t->epoch;
    freq_add(t, s, id, c, ready);
    wlist_push(&s->words, w);
    return id;
}

/* ResetFreq: pair `id` loses an occurrence (count c). A pair dropped as a
 * duplicate comes back into spm_train's cache here, with frequency 0. */
static void pair_reset(BpeTrainer *t, int32_t id, int64_t c) {
    Sym *s = S(t, id);
    if (s->state == ST_ERASED) {
        s->state = ST_DEAD;
        s->order = t->next_order++;
        s->born = t->epoch;
        cache_enter(t, s, id, 1);
    }
    freq_add(t, s, id, -c, 1);
}

/* ---- Training: the active set ---- */

static int64_t freq_at_update(const BpeTrainer *t, const Sym *s) {
    return s->snap_epoch == t->epoch ? s->snap : eff(s);
}

static int i64_desc(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x > y ? -1 : x < y;
}

/* UpdateActiveSymbols: a new window; find the cut frequency. */
static void update_active(BpeTrainer *t) {
    t->epoch++;
    for (size_t k = 0; k < t->ndeferred; k++) {
        int32_t id = t->deferred[k];
        Sym *s = S(t, id);
        if (!(s->flags & SF_DEFERRED)) continue;
        s->flags &= (uint8_t)~SF_DEFERRED;
        if (s->heap < 0 && (s->state == ST_LIVE || s->state == ST_DEAD)) heap_push(t, id);
    }
    t->ndeferred = 0;
    t->tie_done = 0;
    uint64_t nlist = t->nlive + t->ndead;
    int k = (int)((float)t->cache_size * ACTIVE_RATIO);
    uint64_t K = (uint64_t)(k < MIN_ACTIVE ? MIN_ACTIVE : k);
    if (K >= nlist) {
        t->all_active = 1;
        return;
    }
    t->all_active = 0;
    uint64_t nbig = t->nbig;
    if (K <= nbig) {
        int64_t *f = xmalloc(nbig * sizeof *f);
        for (size_t i = 0; i < nbig; i++)
            f[i] = eff(S(t, t->big[i]));
        qsort(f, nbig, sizeof *f, i64_desc);
        t->cut_freq = f[K - 1];
        uint64_t greater = 0, equal = 0;
        for (size_t i = 0; i < nbig; i++)
            greater += f[i] > t->cut_freq, equal += f[i] == t->cut_freq;
        t->cut_take = K - greater;
        t->cut_total = equal;
        free(f);
    } else {
        uint64_t need = K - nbig;
        size_t blk = HIST_SMALL / HIST_BLOCK;
        while (blk > 0 && t->hblock[blk - 1] < need)
            need -= t->hblock[--blk];
        size_t f = blk * HIST_BLOCK - 1;
        while (t->hist[f] < need)
            need -= t->hist[f--];
        t->cut_freq = (int64_t)f;
        t->cut_take = need;
        t->cut_total = t->hist[f];
    }
    if (t->cut_take < t->cut_total) t->st.cut_ties++;
}

/* Rank pairs by length, string and age (the order below frequency). */
static int rank_cmp(const void *a, const void *b, void *ctx) {
    const BpeTrainer *t = ctx;
    return rank(S(t, *(const int32_t *)a), S(t, *(const int32_t *)b));
}

/* Decide which pairs at the cut frequency are in this window's active set:
 * the first cut_take by length, string and age (spm_train's choice is
 * implementation-defined). Done once per window, and only when needed. */
static void compute_ties(BpeTrainer *t) {
    t->tie_done = 1;
    t->st.cut_ties_used++;
    int32_t *v = NULL;
    size_t n = 0, cap = 0;
    for (size_t id = t->nchar_syms; id < t->nsym; id++) {
        Sym *s = S(t, (int32_t)id);
        if ((s->state != ST_LIVE && s->state != ST_DEAD) || s->born == t->epoch) continue;
        if (freq_at_update(t, s) != t->cut_freq) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            v = xrealloc(v, cap * sizeof *v);
        }
        v[n++] = (int32_t)id;
    }
    if (n) qsort_r(v, n, sizeof *v, rank_cmp, t);
    for (size_t i = 0; i < n; i++)
        S(t, v[i])->tie_epoch = i < t->cut_take ? t->epoch : -1;
    free(v);
}

static int is_active(BpeTrainer *t, const Sym *s) {
    if (s->active_epoch == t->epoch) return 1; /* a merge made it in this window */
    if (s->born == t->epoch) return 0;         /* came back after a duplicate drop */
    if (t->all_active) return 1;
    int64_t fa = freq_at_update(t, s);
    if (fa != t->cut_freq) return fa > t->cut_freq;
    if (!t->tie_done) compute_ties(t);
    return s->tie_epoch == t->epoch;
}

/* The best active pair, or -1. Pairs outside the active set that reach the
 * heap top wait (deferred) until the next window. */
static int32_t select_best(BpeTrainer *t) {
    int skipped = 0;
    while (t->nheap) {
        int32_t id = t->heap[0].id;
        Sym *s = S(t, id);
        if (t->heap[0].key != eff(s)) { /* filed under an older, higher count */
            t->heap[0].key = eff(s);
            sift_down(t, 0);
            continue;
        }
        if (is_active(t, s)) {
            t->st.window_skips += skipped;
            return id;
        }
        heap_remove(t, id);
        s->flags |= SF_DEFERRED;
        if (t->ndeferred == t->capdeferred) {
            t->capdeferred = t->capdeferred ? 2 * t->capdeferred : 1024;
            t->deferred = xrealloc(t->deferred, t->capdeferred * sizeof *t->deferred);
        }
        t->deferred[t->ndeferred++] = id;
        skipped = 1;
    }
    return -1;
}

/* Replace every occurrence of pair `best` (left to right, as spm_train's
 * ordered position list does) in the words it occurs in, keeping the
 * neighbouring pairs' counts exact. A word is rewritten in place; its cells
 * carry the pair each symbol forms with the next, so that the pairs that
 * lose an occurrence need no lookup. The words are visited in list order
 * with the next ones prefetched. */
static void merge(BpeTrainer *t, int32_t best) {
    WList wl = S(t, best)->words;
    const uint32_t *wv = wl.cap == 1 ? &wl.one : wl.v;
    enum { AHEAD = 8 }; /* the record of word k + 2 AHEAD, the cells of word k + AHEAD */
    for (uint32_t k = 0; k < wl.n; k++) {
        if (k + 2 * AHEAD < wl.n) __builtin_prefetch(&t->words[wv[k + 2 * AHEAD]]);
        if (k + AHEAD < wl.n) __builtin_prefetch(t->cells + t->words[wv[k + AHEAD]].off);
        uint32_t w = wv[k];
        WordRec *wr = &t->words[w];
        Cell *c = t->cells + wr->off;
        uint32_t n = wr->len, i = 0;
        while (i + 1 < n && c[i].pair != best)
            i++;
        if (i + 1 >= n) continue; /* no longer there */
        int64_t cnt = (int64_t)wr->count;
        uint32_t out = i;
        /* invariant: c[out - 1].pair is the pair of c[out - 1].sym and c[i].sym */
        while (i < n) {
            if (i + 1 < n && c[i].pair == best) {
                int has_next = i + 2 < n;
                int32_t next = has_next ? c[i + 2].sym : -1, next_pair = c[i + 1].pair;
                if (out > 0 && c[out - 1].pair >= 0) pair_reset(t, c[out - 1].pair, cnt);
                if (has_next && next_pair >= 0) pair_reset(t, next_pair, cnt);
                c[out].sym = best;
                if (out > 0) c[out - 1].pair = pair_add(t, c[out - 1].sym, best, cnt, w, 1);
                c[out].pair = has_next ? pair_add(t, best, next, cnt, w, 1) : -1;
                out++;
                i += 2;
            } else {
                c[out++] = c[i++];
            }
        }
        wr->len = out;
    }
}

/* ---- Training: alphabet and words ---- */

typedef struct CharCount {
    uint32_t cp;
    uint64_t n;
} CharCount;

static int charcount_cmp(const void *a, const void *b) {
    const CharCount *x = a, *y = b;
    if (x->n != y->n) return x->n > y->n ? -1 : 1;
    return x->cp < y->cp ? -1 : x->cp > y->cp;
}

typedef struct WordEnt {
    uint64_t count;
    uint64_t pfx; /* first 8 bytes of the key, big-endian, zero-padded */
    const char *key;
    uint32_t len;
} WordEnt;

/* Count descending, then the bytes (std::string's order). */
static inline int word_before(const WordEnt *x, const WordEnt *y) {
    if (x->count != y->count) return x->count > y->count;
    if (x->pfx != y->pfx) return x->pfx < y->pfx;
    if (x->len > 8 && y->len > 8) {
        int c = memcmp(x->key + 8, y->key + 8, (x->len < y->len ? x->len : y->len) - 8);
        if (c) return c < 0;
    }
    return x->len < y->len;
}

/* Sort the words into spm_train's order: quicksort (median of three,
 * smaller side first) with insertion sort for short runs. */
static void sort_words(WordEnt *v, size_t n) {
    while (n > 16) {
        WordEnt *a = &v[0], *b = &v[n / 2], *c = &v[n - 1], tmp;
        if (word_before(b, a)) tmp = *a, *a = *b, *b = tmp;
        if (word_before(c, b)) {
            tmp = *b, *b = *c, *c = tmp;
            if (word_before(b, a)) tmp = *a, *a = *b, *b = tmp;
        }
        WordEnt pivot = *b;
        size_t i = 0, j = n - 1;
        for (;;) {
            while (word_before(&v[i], &pivot))
                i++;
            while (word_before(&pivot, &v[j]))
                j--;
            if (i >= j) break;
            tmp = v[i], v[i] = v[j], v[j] = tmp;
            i++, j--;
        }
        size_t left = j + 1;
        if (left < n - left) {
            sort_words(v, left);
            v += left, n -= left;
        } else {
            sort_words(v + left, n - left);
            n = left;
        }
    }
    for (size_t i = 1; i < n; i++) {
        WordEnt x = v[i];
        size_t j = i;
        while (j > 0 && word_before(&x, &v[j - 1]))
            v[j] = v[j - 1], j--;
        v[j] = x;
    }
}

/* Next code point of s[i..n) (an invalid byte reads as U+FFFD). */
static inline uint32_t next_cp(const char *s, size_t n, size_t *i) {
    if ((unsigned char)s[*i] < 0x80) return (unsigned char)s[(*i)++];
    uint32_t cp;
    size_t k = utf8_decode((const unsigned char *)s + *i, n - *i, &cp);
    if (k == 0) {
        cp = 0xFFFD;
        k = 1;
    }
    *i += k;
    return cp;
}

/* Add the per-thread word tables into the shared one. */
static WordTable *merge_counters(BpeTrainer *t) {
    for (int i = 0; i < t->nctr; i++) {
        wt_merge(&t->all, &t->ctr[i].words);
        t->st.words += t->ctr[i].nwords;
        t->ctr[i].nwords = 0;
    }
    return &t->all;
}

/* Character counts, the alphabet by coverage (the characters taken while
 * the share covered so far, computed as spm_train does in float, is below
 * character_coverage, and, with limit_alphabet, while fewer are taken), and
 * the word list with rare characters replaced by U+2585: words without one
 * point into `words`, the others are counted again in `rare` (a replaced
 * word always holds U+2585, which no other word does, so the two sets never
 * share a word). */
static int build_alphabet(BpeTrainer *t, WordTable *words, WordTable *rare, WordEnt **list,
                          size_t *nlist, Err *err) {
    uint64_t *cc = xcalloc(0x110000, sizeof *cc);
    uint64_t all = 0;
    for (size_t j = 0; j < words->cap; j++) {
        const WSlot *e = &words->s[j];
        if (!e->h) continue;
        const char *k = wt_key(e);
        for (size_t i = 0; i < e->len;) {
            uint32_t cp = next_cp(k, e->len, &i);
            if (cp == 0 || cp == ' ') continue;
            cc[cp] += e->count;
            all += e->count;
        }
    }
    size_t nc = 0;
    for (uint32_t cp = 0; cp < 0x110000; cp++)
        nc += cc[cp] != 0;
    CharCount *v = xmalloc((nc ? nc : 1) * sizeof *v);
    nc = 0;
    for (uint32_t cp = 0; cp < 0x110000; cp++)
        if (cc[cp]) v[nc++] = (CharCount){cp, cc[cp]};
    qsort(v, nc, sizeof *v, charcount_cmp);
    uint8_t *req = xcalloc(0x110000, 1);
    uint64_t acc = 0;
    t->req_cp = xmalloc((nc ? nc : 1) * sizeof *t->req_cp);
    for (size_t i = 0; i < nc; i++) {
        float coverage = (float)(1.0 * (double)acc / (double)all);
        if (coverage >= t->o.character_coverage) break;
        if (t->o.limit_alphabet && t->nreq >= t->o.limit_alphabet) break;
        acc += v[i].n;
        if (v[i].cp == '\t') continue; /* a meta piece's stand-in, never a piece */
        req[v[i].cp] = 1;
        t->req_cp[t->nreq++] = v[i].cp;
    }
    t->st.chars = all;
    t->st.alphabet = t->nreq;
    t->st.coverage = all ? (double)acc / (double)all : 0;
    free(v);
    int rc = 0;
    if (req[UNK_CP]) {
        rc = err_set(err, "the text holds U+2585, which stands for rare characters");
    } else if (!req[WS_CP]) {
        rc = err_set(err,
                     "the word boundary U+2581 is not among the %zu most frequent characters; "
                     "raise the character coverage",
                     t->nreq);
    } else if ((uint64_t)t->o.vocab_size < NUM_META + t->nreq) {
        rc = err_set(
            err,
            "vocabulary size %d is too small for the %d meta pieces and the %zu characters that "
            "cover %g of the text: it must be at least %zu (or lower the character coverage)",
            t->o.vocab_size, NUM_META, t->nreq, (double)t->o.character_coverage,
            NUM_META + t->nreq);
    }
    if (rc) goto done;
    WordEnt *we = xmalloc((words->n ? words->n : 1) * sizeof *we);
    size_t n = 0;
    Buf tmp = {0};
    for (size_t j = 0; j < words->cap; j++) {
        const WSlot *e = &words->s[j];
        if (!e->h) continue;
        const char *k = wt_key(e);
        int has_rare = 0;
        for (size_t i = 0; i < e->len && !has_rare;)
            has_rare = !req[next_cp(k, e->len, &i)];
        if (!has_rare) {
            we[n++] = (WordEnt){.count = e->count, .key = k, .len = e->len};
            continue;
        }
        buf_clear(&tmp);
        for (size_t i = 0; i < e->len;) {
            uint32_t cp = next_cp(k, e->len, &i);
            utf8_append_cp(&tmp, req[cp] ? cp : UNK_CP);
        }
        wt_add(rare, tmp.data, tmp.len, e->count);
    }
    buf_free(&tmp);
    we = xrealloc(we, (n + rare->n + 1) * sizeof *we);
    for (size_t j = 0; j < rare->cap; j++)
        if (rare->s[j].h)
            we[n++] = (WordEnt){
                .count = rare->s[j].count, .key = wt_key(&rare->s[j]), .len = rare->s[j].len};
    *list = we;
    *nlist = n;
done:
    free(req);
    free(cc);
    return rc;
}

/* Lay the words out as symbol-id arrays in spm_train's order (count
 * descending, then bytes) and create the character symbols in order of
 * first appearance. */
static void build_words(BpeTrainer *t, WordEnt *we, size_t nw) {
    for (size_t w = 0; w < nw; w++)
        we[w].pfx = str_prefix(we[w].key, we[w].len);
    sort_words(we, nw);
    t->nwords = nw;
    t->words = big_calloc(nw * sizeof *t->words);
    int32_t *csym = xmalloc(0x110000 * sizeof *csym);
    memset(csym, 0xFF, 0x110000 * sizeof *csym);
    size_t cap = 0, len = 0;
    for (size_t w = 0; w < nw; w++)
        cap += we[w].len; /* at least one byte per character */
    if (cap > UINT32_MAX) die("bpe: the distinct words hold more than 2^32 bytes");
    t->capcells = cap;
    t->cells = big_calloc(cap * sizeof *t->cells);
    for (size_t w = 0; w < nw; w++) {
        t->words[w].off = (uint32_t)len;
        t->words[w].count = we[w].count;
        for (size_t i = 0; i < we[w].len;) {
            size_t at = i;
            uint32_t cp = next_cp(we[w].key, we[w].len, &i);
            if (csym[cp] < 0) {
                int32_t id = sym_new(t);
                Sym *s = S(t, id);
                s->state = ST_CHAR;
                s->nchars = 1;
                s->nbytes = (uint16_t)(i - at);
                s->str = str_store(t, we[w].key + at, i - at, NULL, 0);
                s->pfx = str_prefix(s->str, s->nbytes);
                s->script = (int16_t)char_script(cp);
                s->flags = (uint8_t)((cp == WS_CP ? SF_WS : 0) | (cp == UNK_CP ? SF_UNK : 0));
                csym[cp] = id;
                t->cache_size++;
            }
            t->cells[len++] = (Cell){csym[cp], -1};
        }
        t->words[w].len = (uint32_t)(len - t->words[w].off);
    }
    t->nchar_syms = (uint32_t)t->nsym;
    free(csym);
}

static void emit_piece(BpeTrainer *t, const char *s, size_t n) {
    if (t->npieces == t->cappieces) {
        t->cappieces = t->cappieces ? 2 * t->cappieces : 1024;
        t->poff = xrealloc(t->poff, t->cappieces * sizeof *t->poff);
        t->plen = xrealloc(t->plen, t->cappieces * sizeof *t->plen);
    }
    t->poff[t->npieces] = t->pieces.len;
    t->plen[t->npieces] = (uint32_t)n;
    t->npieces++;
    buf_append(&t->pieces, s, n);
}

int bpe_train(BpeTrainer *t, Err *err) {
    if (t->trained) return err_set(err, "bpe_train: already trained");
    t->trained = 1;
    double t0 = now_sec();
    WordTable *words = merge_counters(t);
    malloc_trim(0); /* the counting threads' freed tables, back to the system */
    if (words->n == 0)
        return err_set(
            err,
            "no text to train on (%llu lines read: %llu empty, %llu too long, %llu with U+2585)",
            (unsigned long long)t->st.lines, (unsigned long long)t->st.empty,
            (unsigned long long)t->st.too_long, (unsigned long long)t->st.reserved);
    WordTable rare;
    wt_init(&rare, 0);
    WordEnt *we = NULL;
    size_t nw = 0;
    if (build_alphabet(t, words, &rare, &we, &nw, err)) {
        wt_free(&rare);
        return -1;
    }
    t->st.distinct_words = nw;
    build_words(t, we, nw);
    free(we);
    wt_free(&rare);
    wt_free(&t->all);
    malloc_trim(0);
    double t1 = now_sec();
    t->st.sec_alphabet = t1 - t0;

    /* every adjacent pair, in spm_train's order (words, then positions) */
    for (size_t w = 0; w < t->nwords; w++) {
        const WordRec *wr = &t->words[w];
        Cell *c = t->cells + wr->off;
        for (uint32_t i = 1; i < wr->len; i++)
            c[i - 1].pair = pair_add(t, c[i - 1].sym, c[i].sym, (int64_t)wr->count, (uint32_t)w, 0);
    }
    /* the word lists grew by doubling: give back what they do not use */
    for (size_t id = t->nchar_syms; id < t->nsym; id++) {
        WList *l = &S(t, (int32_t)id)->words;
        if (l->cap > 1 && l->n < l->cap) {
            l->v = xrealloc(l->v, (size_t)l->n * sizeof *l->v);
            l->cap = l->n;
        }
    }
    t->hist = xcalloc(HIST_SMALL, sizeof *t->hist);
    t->hblock = xcalloc(HIST_SMALL / HIST_BLOCK, sizeof *t->hblock);
    t->capheap = t->nlive ? t->nlive : 1;
    t->heap = big_calloc(t->capheap * sizeof *t->heap);
    for (size_t id = t->nchar_syms; id < t->nsym; id++) {
        Sym *s = S(t, (int32_t)id);
        hist_add(t, s, (int32_t)id, eff(s));
        heap_put(t, t->nheap++, (HeapEnt){eff(s), (int32_t)id});
    }
    for (size_t i = t->nheap / HEAP_D + 1; i-- > 0;)
        sift_down(t, i);

    strmap_init(&t->emitted, 0);
    double t2 = now_sec();
    t->st.sec_pairs = t2 - t1;
    uint64_t nmerges = (uint64_t)t->o.vocab_size - NUM_META - t->nreq;
    while (t->st.merges < nmerges) {
        if (t->st.merges % UPDATE_INTERVAL == 0) {
            update_active(t);
            if (t->o.progress) t->o.progress(t->o.progress_ctx, "merging", t->st.merges, nmerges);
        }
        int32_t best = select_best(t);
        if (best < 0) break;
        Sym *b = S(t, best);
        uint64_t *seen = strmap_slot(&t->emitted, b->str, b->nbytes);
        if (*seen) { /* the same string from other parts: drop it, merge nothing */
            t->st.duplicates++;
            cache_leave(t, b, best);
            continue;
        }
        *seen = 1;
        emit_piece(t, b->str, b->nbytes);
        t->st.merges++;
        merge(t, best);
        cache_leave(t, S(t, best), best); /* merge() may have moved the symbols */
        fix_dirty(t);
    }
    if (t->o.progress) t->o.progress(t->o.progress_ctx, "merging", t->st.merges, nmerges);
    t->st.sec_merges = now_sec() - t2;
    if (t->st.merges < nmerges && t->o.soft_limit)
        t->o.vocab_size = (int)(NUM_META + t->st.merges + t->nreq);
    else if (t->st.merges < nmerges)
        return err_set(err,
                       "vocabulary size %d is too high for this text: it gives at most %llu pieces",
                       t->o.vocab_size, (unsigned long long)(NUM_META + t->st.merges + t->nreq));
    for (size_t i = 0; i < t->nreq; i++) {
        unsigned char u[4];
        emit_piece(t, (const char *)u, utf8_encode(t->req_cp[i], u));
    }
    train_free(t); /* only the pieces are needed from here on */
    return 0;
}

size_t bpe_npieces(const BpeTrainer *t) { return t->npieces; }

int bpe_vocab_size(const BpeTrainer *t) { return t->o.vocab_size; }

const char *bpe_piece(const BpeTrainer *t, size_t i, size_t *len, float *score) {
    if (len) *len = t->plen[i];
    if (score) *score = -(float)i;
    return t->pieces.data + t->poff[i];
}

void bpe_model(const BpeTrainer *t, SpModel *m) {
    spmodel_add_piece(m, "<unk>", 5, 0, SP_UNKNOWN);
    spmodel_add_piece(m, "<s>", 3, 0, SP_CONTROL);
    spmodel_add_piece(m, "</s>", 4, 0, SP_CONTROL);
    for (size_t i = 0; i < t->npieces; i++)
        spmodel_add_piece(m, t->pieces.data + t->poff[i], t->plen[i], -(float)i, SP_NORMAL);
}
