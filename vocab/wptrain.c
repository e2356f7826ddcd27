/* wptrain.c - WordPiece vocabulary training (see wptrain.h).
 *
 * The behaviour is that of huggingface/tokenizers 0.23: WordPieceTrainer
 * (tokenizers/src/models/wordpiece/trainer.rs) runs the BPE trainer
 * (models/bpe/trainer.rs, BpeTrainer::do_train, and bpe/word.rs,
 * Word::merge) with continuing_subword_prefix "##" on words that
 * BertNormalizer and BertPreTokenizer made. Python's
 * BertWordPieceTokenizer.train supplies vocab_size 30000, min_frequency 2
 * and limit_alphabet 1000. Step by step:
 *
 *  1. The special tokens take the first ids.
 *  2. Alphabet: each character counts the count of every word it occurs in,
 *     once per occurrence. With limit_alphabet L, the |A| - L rarest
 *     characters are dropped; the rest take ids in code point order.
 *  3. A word becomes symbols: its first character as is, every later one as
 *     "##c". A character outside the alphabet is dropped (so a word may start
 *     with a "##" symbol); "##c" tokens are added as they are met.
 *  4. Pairs: a pair of adjacent symbols counts its word's count once per
 *     occurrence; per pair the set of words holding it is kept. A max-heap
 *     holds (count, pair, words) entries, a higher count first, then the
 *     smaller (first id, second id).
 *  5. While the vocabulary is smaller than vocab_size: pop the best entry.
 *     If its count is not the pair's current count, push it back with the
 *     current count. Stop if the count is 0 or below min_frequency. Else
 *     the new token is first + second with the second's leading "##"
 *     removed (an existing token is reused and the vocabulary does not
 *     grow), and the pair is merged, left to right without overlap, in the
 *     words of THAT ENTRY. Every pair destroyed or made around a merged
 *     occurrence changes its count by the word's count; each pair made gets
 *     a new entry with its full count and the words where it was made.
 *
 * Two properties of step 5 are kept on purpose, as they change the result:
 * the merged pair's own count is never decreased, and an entry merges only
 * the words it lists, so a pair that gained occurrences after its first
 * entry was pushed is merged in several steps, with other merges between.
 *
 * Where Hugging Face's result depends on hash-map iteration order, which
 * ahash seeds at random in every process (two runs on the same text give
 * different vocab.txt files), an order is fixed here:
 *  - "##c" ids: HF numbers them in the order its word map happens to be
 *    walked; here in code point order (after the alphabet). The ids break
 *    ties between pairs of equal count, so tokens of equal count can come
 *    out in another order, and, rarely, a tie at the last place decides
 *    which token makes it in;
 *  - limit_alphabet ties: HF drops among equally rare characters at random;
 *    here the higher code point goes first;
 *  - two heap entries of the same pair and count: the one pushed first pops
 *    first (HF: whichever its heap layout gives).
 * HF's pair counts are 32-bit (they wrap past 2^31); they are 64-bit here.
 *
 * Nothing depends on the order of the words: merges act on each word alone,
 * counts are sums, and heap keys are (count, pair, push number) with pushes
 * made in a fixed order. The count table's layout, which depends on the
 * number of counting threads, therefore cannot change the output.
 *
 * Counting: batches of about 4 MiB of text per thread; each thread counts
 * its share into a private table, then the private tables are merged into
 * 256 global tables chosen by the top byte of the word's hash, one shard
 * per thread at a time, so the merge runs in parallel without locks.
 */
#include "vocab/wptrain.h"

#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "common/cli.h"
#include "common/hash.h"
#include "common/io.h"
#include "common/tokjson.h"
#include "common/utf8.h"

#define NSHARD 256
#define BATCH_PER_THREAD (4u << 20)
#define CONT_PREFIX "##"

/* ---- word tables ---- */

/* Open addressing, linear probing, load factor <= 1/2; count 0 marks an
 * empty slot. Keys live back to back in `keys`. */
typedef struct WtSlot {
    uint64_t hash, count, off;
    uint32_t len;
} WtSlot;

typedef struct WordTab {
    WtSlot *slot;
    size_t cap, n;
    Buf keys;
} WordTab;

static void wt_grow(WordTab *t) {
    size_t cap = t->cap ? 2 * t->cap : 1024;
    WtSlot *s = xcalloc(cap, sizeof *s);
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slot[i].count) continue;
        size_t j = (size_t)t->slot[i].hash & (cap - 1);
        while (s[j].count)
            j = (j + 1) & (cap - 1);
        s[j] = t->slot[i];
    }
    free(t->slot);
    t->slot = s;
    t->cap = cap;
}

static void wt_add(WordTab *t, const char *w, size_t n, uint64_t h, uint64_t count) {
    if ((t->n + 1) * 2 > t->cap) wt_grow(t);
    size_t j = (size_t)h & (t->cap - 1);
    for (;;) {
        WtSlot *s = &t->slot[j];
        if (!s->count) {
            s->hash = h, s->count = count, s->off = t->keys.len, s->len = (uint32_t)n;
            buf_append(&t->keys, w, n);
            t->n++;
            return;
        }
        if (s->hash == h && s->len == n && memcmp(t->keys.data + s->off, w, n) == 0) {
            s->count += count;
            return;
        }
        j = (j + 1) & (t->cap - 1);
    }
}

static void wt_reset(WordTab *t) {
    if (t->n) memset(t->slot, 0, t->cap * sizeof *t->slot);
    t->n = 0;
    buf_clear(&t->keys);
}

static void wt_free(WordTab *t) {
    free(t->slot);
    buf_free(&t->keys);
    memset(t, 0, sizeof *t);
}

struct WpCounts {
    WordTab shard[NSHARD];
};

WpCounts *wpcounts_create(void) { return xcalloc(1, sizeof(WpCounts)); }

void wpcounts_destroy(WpCounts *c) {
    if (!c) return;
    for (int s = 0; s < NSHARD; s++)
        wt_free(&c->shard[s]);
    free(c);
}

static inline WordTab *shard_of(WpCounts *c, uint64_t h) { return &c->shard[h >> 56]; }

void wpcounts_add(WpCounts *c, const char *w, size_t n, uint64_t count) {
    if (!n || !count || n > UINT32_MAX || utf8_valid_prefix(w, n) != n) return;
    uint64_t h = hash_bytes(w, n);
    wt_add(shard_of(c, h), w, n, h, count);
}

size_t wpcounts_distinct(const WpCounts *c) {
    size_t n = 0;
    for (int s = 0; s < NSHARD; s++)
        n += c->shard[s].n;
    return n;
}

/* Count the pre-tokenizer pieces of text[0..len) into t. */
static size_t count_text(WordTab *t, const WordPiece *basic, WpScratch *sc, const char *text,
                         size_t len) {
    size_t n = wp_basic_pieces(basic, sc, text, len), start = 0;
    for (size_t k = 0; k < n; k++) {
        const char *p = sc->pieces.data + start;
        size_t l = sc->ends[k] - start;
        start = sc->ends[k];
        if (l <= UINT32_MAX) wt_add(t, p, l, hash_bytes(p, l), 1);
    }
    return n;
}

size_t wpcounts_add_text(WpCounts *c, const char *text, size_t len, int norm) {
    WordPiece *basic = wp_create_basic(norm, WP_FLAVOR_HF);
    WpScratch sc = {0};
    WordTab t = {0};
    size_t n = count_text(&t, basic, &sc, text, len);
    for (size_t i = 0; i < t.cap; i++)
        if (t.slot[i].count)
            wt_add(shard_of(c, t.slot[i].hash), t.keys.data + t.slot[i].off, t.slot[i].len,
                   t.slot[i].hash, t.slot[i].count);
    wt_free(&t);
    wp_scratch_free(&sc);
    wp_destroy(basic);
    return n;
}

/* Per-thread counting state. */
typedef struct Counter {
    WpScratch sc;
    WordTab tab;
    uint32_t *idx[NSHARD]; /* slots of tab per global shard */
    size_t nidx[NSHARD], capidx[NSHARD];
    uint64_t words;
} Counter;

static void counter_free(Counter *k) {
    wp_scratch_free(&k->sc);
    wt_free(&k->tab);
    for (int s = 0; s < NSHARD; s++)
        free(k->idx[s]);
}

/* Start of the line holding byte `at` of text[0..len): the byte after the
 * previous '\n' (0 or len at the ends). */
static size_t line_start(const char *text, size_t len, size_t at) {
    if (at == 0 || at >= len) return at >= len ? len : 0;
    const char *nl = memchr(text + at - 1, '\n', len - (at - 1));
    return nl ? (size_t)(nl - text) + 1 : len;
}

/* Count one batch of '\n'-terminated lines on the threads of k[0..nk). */
static void count_batch(WpCounts *c, Counter *k, int nk, const WordPiece *basic, const char *text,
                        size_t len) {
#pragma omp parallel num_threads(nk)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        Counter *me = &k[t];
        size_t lo = line_start(text, len, len / (size_t)nt * (size_t)t);
        size_t hi = t == nt - 1 ? len : line_start(text, len, len / (size_t)nt * (size_t)(t + 1));
        while (lo < hi) {
            const char *nl = memchr(text + lo, '\n', hi - lo);
            size_t e = nl ? (size_t)(nl - text) : hi;
            me->words += count_text(&me->tab, basic, &me->sc, text + lo, e - lo);
            lo = e + 1;
        }
        for (size_t i = 0; i < me->tab.cap; i++) {
            if (!me->tab.slot[i].count) continue;
            unsigned s = (unsigned)(me->tab.slot[i].hash >> 56);
            if (me->nidx[s] == me->capidx[s]) {
                me->capidx[s] = me->capidx[s] ? 2 * me->capidx[s] : 256;
                me->idx[s] = xrealloc(me->idx[s], me->capidx[s] * sizeof *me->idx[s]);
            }
            me->idx[s][me->nidx[s]++] = (uint32_t)i;
        }
#pragma omp barrier
#pragma omp for schedule(dynamic, 4)
        for (int s = 0; s < NSHARD; s++) {
            for (int u = 0; u < nt; u++) {
                const WordTab *lt = &k[u].tab;
                for (size_t j = 0; j < k[u].nidx[s]; j++) {
                    const WtSlot *sl = &lt->slot[k[u].idx[s][j]];
                    wt_add(&c->shard[s], lt->keys.data + sl->off, sl->len, sl->hash, sl->count);
                }
            }
        }
        wt_reset(&me->tab);
        memset(me->nidx, 0, sizeof me->nidx);
    }
}

int wpcounts_read(WpCounts *c, const char *const *inputs, int ninputs, int norm, int threads,
                  WpCountStats *st, Err *err) {
    int nk = threads > 0 ? threads : cli_ncpus();
    WordPiece *basic = wp_create_basic(norm, WP_FLAVOR_HF);
    Counter *k = xcalloc((size_t)nk, sizeof *k);
    Reader rd;
    Buf batch = {0};
    Progress prog;
    int rc = 0;
    size_t target = (size_t)nk * BATCH_PER_THREAD;
    reader_init(&rd, (char **)inputs, ninputs);
    progress_init(&prog, inputs_total_size((char *const *)inputs, ninputs));
    for (;;) {
        const char *line;
        size_t n;
        int r = 1;
        buf_clear(&batch);
        while (batch.len < target && (r = reader_next_line(&rd, &line, &n, err)) == 1) {
            buf_reserve(&batch, n + 1);
            memcpy(batch.data + batch.len, line, n);
            batch.len += n;
            batch.data[batch.len++] = '\n';
            st->lines++;
        }
        if (r < 0) {
            rc = -1;
            break;
        }
        if (batch.len) count_batch(c, k, nk, basic, batch.data, batch.len);
        progress_update(&prog, rd.bytes, rd.bytes, st->lines, "lines");
        if (r == 0) break;
    }
    progress_done(&prog);
    st->bytes += rd.bytes;
    for (int t = 0; t < nk; t++) {
        st->words += k[t].words;
        st->bad_utf8 += k[t].sc.bad_utf8;
        counter_free(&k[t]);
    }
    free(k);
    buf_free(&batch);
    reader_free(&rd);
    wp_destroy(basic);
    return rc;
}

typedef struct WordRef {
    const char *w;
    uint32_t len;
    uint64_t count;
} WordRef;

static int cmp_dump(const void *a, const void *b) {
    const WordRef *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    size_t n = x->len < y->len ? x->len : y->len;
    int d = memcmp(x->w, y->w, n);
    return d ? d : (x->len > y->len) - (x->len < y->len);
}

/* All words of c, in table order. The caller frees the array. */
static WordRef *word_refs(const WpCounts *c, size_t *n) {
    WordRef *r = xmalloc((wpcounts_distinct(c) + 1) * sizeof *r);
    size_t k = 0;
    for (int s = 0; s < NSHARD; s++) {
        const WordTab *t = &c->shard[s];
        for (size_t i = 0; i < t->cap; i++)
            if (t->slot[i].count)
                r[k++] = (WordRef){t->keys.data + t->slot[i].off, t->slot[i].len, t->slot[i].count};
    }
    *n = k;
    return r;
}

void wpcounts_dump(const WpCounts *c, Buf *out) {
    size_t n;
    WordRef *r = word_refs(c, &n);
    if (n) qsort(r, n, sizeof *r, cmp_dump);
    for (size_t i = 0; i < n; i++) {
        char num[32];
        buf_append(out, r[i].w, r[i].len);
        buf_putc(out, '\t');
        buf_append(out, num,
                   (size_t)snprintf(num, sizeof num, "%llu\n", (unsigned long long)r[i].count));
    }
    free(r);
}

/* ---- training ---- */

/* A map from a u64 key (a pair (first << 32 | second), or a code point) to
 * a dense index 0, 1, 2, ... in insertion order. */
typedef struct KeyIdx {
    uint64_t *key; /* UINT64_MAX: empty */
    uint32_t *val;
    size_t cap, n;
} KeyIdx;

static inline size_t key_hash(uint64_t k, size_t cap) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
}

static void ki_grow(KeyIdx *m) {
    size_t cap = m->cap ? 2 * m->cap : 4096;
    uint64_t *key = xmalloc(cap * sizeof *key);
    uint32_t *val = xmalloc(cap * sizeof *val);
    memset(key, 0xff, cap * sizeof *key);
    for (size_t i = 0; i < m->cap; i++) {
        if (m->key[i] == UINT64_MAX) continue;
        size_t j = key_hash(m->key[i], cap);
        while (key[j] != UINT64_MAX)
            j = (j + 1) & (cap - 1);
        key[j] = m->key[i], val[j] = m->val[i];
    }
    free(m->key), free(m->val);
    m->key = key, m->val = val, m->cap = cap;
}

/* Index of key k; a new key gets index m->n (and *added is set). */
static inline uint32_t ki_get(KeyIdx *m, uint64_t k, int *added) {
    if ((m->n + 1) * 2 > m->cap) ki_grow(m);
    size_t j = key_hash(k, m->cap);
    while (m->key[j] != UINT64_MAX) {
        if (m->key[j] == k) {
            *added = 0;
            return m->val[j];
        }
        j = (j + 1) & (m->cap - 1);
    }
    m->key[j] = k;
    m->val[j] = (uint32_t)m->n;
    *added = 1;
    return (uint32_t)m->n++;
}

/* Index of key k, or UINT32_MAX. */
static inline uint32_t ki_find(const KeyIdx *m, uint64_t k) {
    if (!m->cap) return UINT32_MAX;
    size_t j = key_hash(k, m->cap);
    while (m->key[j] != UINT64_MAX) {
        if (m->key[j] == k) return m->val[j];
        j = (j + 1) & (m->cap - 1);
    }
    return UINT32_MAX;
}

static void ki_free(KeyIdx *m) {
    free(m->key), free(m->val);
    memset(m, 0, sizeof *m);
}

/* A heap entry: a pair, the count it had when pushed, and the words to merge
 * it in, pos[0..npos): a slice of the trainer's first pool, or its own
 * allocation. 40 bytes. */
typedef struct Entry {
    uint64_t count;
    uint64_t pair; /* first << 32 | second: compares as (first, second) */
    uint64_t seq;  /* push number, for equal (count, pair) */
    uint32_t *pos;
    uint32_t npos;
    uint32_t pidx; /* index of the pair */
} Entry;

static inline int entry_before(const Entry *a, const Entry *b) {
    if (a->count != b->count) return a->count > b->count;
    if (a->pair != b->pair) return a->pair < b->pair;
    return a->seq < b->seq;
}

typedef struct Heap {
    Entry *e;
    size_t n, cap;
} Heap;

static void heap_down(Heap *h, size_t i) {
    Entry x = h->e[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && entry_before(&h->e[c + 1], &h->e[c])) c++;
        if (!entry_before(&h->e[c], &x)) break;
        h->e[i] = h->e[c];
        i = c;
    }
    h->e[i] = x;
}

static void heap_push(Heap *h, Entry x) {
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 4096;
        h->e = xrealloc(h->e, h->cap * sizeof *h->e);
    }
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!entry_before(&x, &h->e[p])) break;
        h->e[i] = h->e[p];
        i = p;
    }
    h->e[i] = x;
}

static Entry heap_pop(Heap *h) {
    Entry top = h->e[0];
    h->e[0] = h->e[--h->n];
    if (h->n) heap_down(h, 0);
    return top;
}

/* One pair change in one word: delta -1 (destroyed) or +1 (made). */
typedef struct Change {
    uint64_t pair;
    uint32_t w;
    int32_t delta;
} Change;

typedef struct Trainer {
    /* words as symbol ids */
    uint32_t *sym;
    size_t *start;
    uint32_t *len;
    uint64_t *wcount;
    size_t nwords;
    /* pairs: index via `pairs`, then per index */
    KeyIdx pairs;
    uint64_t *pkey;
    int64_t *pcount;
    uint32_t *stamp, *last, *npos; /* per merge step scratch */
    uint32_t **fill;
    size_t pcap;
    /* vocabulary */
    StrMap tokid;
    WpVocab *v;
    Heap heap;
    Change *ch;
    size_t nch, capch;
    uint32_t *pool; /* the word lists of the first heap entries */
    size_t npool;
    uint32_t *made; /* pair indices made in this step */
    size_t nmade, capmade;
    size_t ccap; /* capacity of v->count */
} Trainer;

static void pairs_reserve(Trainer *tr, size_t n) {
    if (n <= tr->pcap) return;
    size_t cap = tr->pcap ? tr->pcap : 4096;
    while (cap < n)
        cap *= 2;
    tr->pkey = xrealloc(tr->pkey, cap * sizeof *tr->pkey);
    tr->pcount = xrealloc(tr->pcount, cap * sizeof *tr->pcount);
    tr->stamp = xrealloc(tr->stamp, cap * sizeof *tr->stamp);
    tr->last = xrealloc(tr->last, cap * sizeof *tr->last);
    tr->npos = xrealloc(tr->npos, cap * sizeof *tr->npos);
    tr->fill = xrealloc(tr->fill, cap * sizeof *tr->fill);
    for (size_t i = tr->pcap; i < cap; i++)
        tr->stamp[i] = 0;
    tr->pcap = cap;
}

/* Index of pair key k, created with count 0 if new. */
static inline uint32_t pair_index(Trainer *tr, uint64_t k) {
    int added;
    uint32_t i = ki_get(&tr->pairs, k, &added);
    if (added) {
        pairs_reserve(tr, (size_t)i + 1);
        tr->pkey[i] = k;
        tr->pcount[i] = 0;
        tr->stamp[i] = 0;
    }
    return i;
}

static inline uint64_t pair_key(uint32_t a, uint32_t b) { return (uint64_t)a << 32 | b; }

/* Append token s[0..n) with its count; returns its id. */
static uint32_t add_token(Trainer *tr, const char *s, size_t n, uint64_t count) {
    uint32_t id = (uint32_t)tr->v->tok.n;
    vocablist_push(&tr->v->tok, s, n, 0);
    if (tr->ccap < tr->v->tok.cap) {
        tr->ccap = tr->v->tok.cap;
        tr->v->count = xrealloc(tr->v->count, tr->ccap * sizeof *tr->v->count);
    }
    tr->v->count[id] = count;
    *strmap_slot(&tr->tokid, s, n) = id;
    return id;
}

static void push_change(Trainer *tr, uint32_t a, uint32_t b, uint32_t w, int32_t delta) {
    if (tr->nch == tr->capch) {
        tr->capch = tr->capch ? 2 * tr->capch : 4096;
        tr->ch = xrealloc(tr->ch, tr->capch * sizeof *tr->ch);
    }
    tr->ch[tr->nch++] = (Change){pair_key(a, b), w, delta};
}

/* Word::merge: replace every non-overlapping (a, b), left to right, by id
 * in word w, recording the pairs destroyed and made next to each. */
static void merge_word(Trainer *tr, uint32_t w, uint32_t a, uint32_t b, uint32_t id) {
    uint32_t *s = tr->sym + tr->start[w];
    uint32_t n = tr->len[w], out = 0, i = 0;
    while (i < n) {
        if (s[i] == a && i + 1 < n && s[i + 1] == b) {
            if (out > 0) {
                push_change(tr, s[out - 1], a, w, -1);
                push_change(tr, s[out - 1], id, w, 1);
            }
            if (i + 2 < n) {
                push_change(tr, b, s[i + 2], w, -1);
                push_change(tr, id, s[i + 2], w, 1);
            }
            s[out++] = id;
            i += 2;
        } else {
            s[out++] = s[i++];
        }
    }
    tr->len[w] = out;
}

typedef struct CharCount {
    uint64_t count, cp;
} CharCount;

static int cmp_rarest(const void *a, const void *b) {
    const CharCount *x = a, *y = b;
    if (x->count != y->count) return x->count < y->count ? -1 : 1;
    return (x->cp < y->cp) - (x->cp > y->cp);
}

/* Is s[0..n) exactly one code point? (*cp set) */
static int one_char(const char *s, size_t n, uint32_t *cp) {
    return n && utf8_decode((const unsigned char *)s, n, cp) == n;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Steps 2 and 3: alphabet, "##" forms, words as symbols. */
static void build_words(Trainer *tr, const WpCounts *c, const WpTrainOpts *o) {
    size_t nw;
    WordRef *wr = word_refs(c, &nw);
    KeyIdx chars = {0};
    uint64_t *ccount = NULL;
    size_t ccap = 0, nsym = 0;
    /* character counts, per occurrence, weighted by the word count */
    for (size_t i = 0; i < nw; i++) {
        const unsigned char *p = (const unsigned char *)wr[i].w;
        for (size_t j = 0; j < wr[i].len;) {
            uint32_t cp;
            size_t l = utf8_decode(p + j, wr[i].len - j, &cp);
            if (!l) break; /* cannot happen: words are valid UTF-8 */
            int added;
            uint32_t k = ki_get(&chars, cp, &added);
            if (added) {
                if (k >= ccap)
                    ccap = ccap ? 2 * ccap : 1024, ccount = xrealloc(ccount, ccap * sizeof *ccount);
                ccount[k] = 0;
            }
            ccount[k] += wr[i].count;
            j += l;
            nsym++;
        }
    }
    /* order characters by (count ascending, code point descending): the
     * first |A| - limit are dropped; the rest go in code point order */
    size_t na = chars.n;
    CharCount *cc = xmalloc((na + 1) * sizeof *cc);
    for (size_t j = 0; j < chars.cap; j++)
        if (chars.key[j] != UINT64_MAX)
            cc[chars.val[j]] = (CharCount){ccount[chars.val[j]], chars.key[j]};
    size_t drop = o->limit_alphabet && na > o->limit_alphabet ? na - o->limit_alphabet : 0;
    size_t nk, ncont_order = 0;
    uint64_t *kept = xmalloc((na + 1) * sizeof *kept), *cont_order = kept;
    if (o->initial) { /* given: the listed characters that occur, in list order */
        cont_order = xmalloc((o->initial->n + 1) * sizeof *cont_order);
        nk = 0;
        for (size_t k = 0; k < o->initial->n; k++) {
            const char *t = vocablist_at(o->initial, k);
            uint32_t cp, len = o->initial->len[k];
            if (one_char(t, len, &cp) && ki_find(&chars, cp) != UINT32_MAX)
                kept[nk++] = cp;
            else if (len > 2 && memcmp(t, CONT_PREFIX, 2) == 0 && one_char(t + 2, len - 2, &cp))
                cont_order[ncont_order++] = cp;
        }
        drop = na - nk;
    } else {
        if (drop) qsort(cc, na, sizeof *cc, cmp_rarest);
        nk = na - drop;
        for (size_t k = 0; k < nk; k++)
            kept[k] = cc[drop + k].cp;
        if (nk) qsort(kept, nk, sizeof *kept, cmp_u64);
        ncont_order = nk;
    }
    tr->v->dropped_chars = drop;
    /* alphabet ids; cont[] marks characters seen after a word's first */
    uint32_t *alpha = xmalloc((na + 1) * sizeof *alpha), *cont = xmalloc((na + 1) * sizeof *cont);
    for (size_t k = 0; k < na; k++)
        alpha[k] = cont[k] = UINT32_MAX;
    for (size_t k = 0; k < nk; k++) {
        unsigned char u[4];
        size_t l = utf8_encode((uint32_t)kept[k], u);
        uint32_t ci = ki_find(&chars, kept[k]);
        uint64_t *have = strmap_get(&tr->tokid, (const char *)u, l);
        alpha[ci] = have ? (uint32_t)*have : add_token(tr, (const char *)u, l, 0);
    }
    tr->v->nalpha = tr->v->tok.n - tr->v->nspecial;
    for (size_t i = 0; i < nw; i++) {
        const unsigned char *p = (const unsigned char *)wr[i].w;
        size_t j = utf8_decode(p, wr[i].len, &(uint32_t){0});
        while (j && j < wr[i].len) {
            uint32_t cp;
            size_t l = utf8_decode(p + j, wr[i].len - j, &cp);
            if (!l) break;
            uint32_t ci = ki_find(&chars, cp);
            if (alpha[ci] != UINT32_MAX && cont[ci] == UINT32_MAX) cont[ci] = 0;
            j += l;
        }
    }
    for (size_t k = 0; k < ncont_order + nk; k++) { /* then any the given order missed */
        uint64_t cp = k < ncont_order ? cont_order[k] : kept[k - ncont_order];
        uint32_t ci = ki_find(&chars, cp);
        if (ci == UINT32_MAX || cont[ci] != 0) continue; /* not seen inside a word, or done */
        char t[8] = CONT_PREFIX;
        size_t l = utf8_encode((uint32_t)cp, (unsigned char *)t + 2) + 2;
        uint64_t *have = strmap_get(&tr->tokid, t, l);
        cont[ci] = have ? (uint32_t)*have : add_token(tr, t, l, 0);
    }
    tr->v->ncont = tr->v->tok.n - tr->v->nspecial - tr->v->nalpha;
    /* words as symbols */
    tr->sym = xmalloc((nsym + 1) * sizeof *tr->sym);
    tr->start = xmalloc((nw + 1) * sizeof *tr->start);
    tr->len = xmalloc((nw + 1) * sizeof *tr->len);
    tr->wcount = xmalloc((nw + 1) * sizeof *tr->wcount);
    size_t at = 0;
    for (size_t i = 0; i < nw; i++) {
        const unsigned char *p = (const unsigned char *)wr[i].w;
        tr->start[i] = at;
        tr->wcount[i] = wr[i].count;
        for (size_t j = 0; j < wr[i].len;) {
            uint32_t cp;
            size_t l = utf8_decode(p + j, wr[i].len - j, &cp);
            if (!l) break;
            uint32_t ci = ki_find(&chars, cp);
            uint32_t id = j == 0 ? alpha[ci] : cont[ci];
            if (id != UINT32_MAX) tr->sym[at++] = id;
            j += l;
        }
        tr->len[i] = (uint32_t)(at - tr->start[i]);
    }
    tr->nwords = nw;
    if (cont_order != kept) free(cont_order);
    free(alpha), free(cont), free(kept), free(cc), free(ccount);
    ki_free(&chars);
    free(wr);
}

/* Does e own its word list (rather than point into the first pool)? */
static inline int entry_owns(const Trainer *tr, const Entry *e) {
    return e->pos < tr->pool || e->pos >= tr->pool + tr->npool;
}

/* Step 4: pair counts, the words of each pair, the first heap. */
static void count_pairs(Trainer *tr) {
    for (size_t w = 0; w < tr->nwords; w++) {
        const uint32_t *s = tr->sym + tr->start[w];
        for (uint32_t i = 0; i + 1 < tr->len[w]; i++) {
            uint32_t p = pair_index(tr, pair_key(s[i], s[i + 1]));
            tr->pcount[p] += (int64_t)tr->wcount[w];
        }
    }
    /* words per pair, each once (stamp: the last word + 1 that counted) */
    size_t np = tr->pairs.n, total = 0;
    for (size_t p = 0; p < np; p++)
        tr->npos[p] = 0, tr->stamp[p] = 0;
    for (size_t w = 0; w < tr->nwords; w++) {
        const uint32_t *s = tr->sym + tr->start[w];
        for (uint32_t i = 0; i + 1 < tr->len[w]; i++) {
            uint32_t p = ki_find(&tr->pairs, pair_key(s[i], s[i + 1]));
            if (tr->stamp[p] != (uint32_t)w + 1)
                tr->stamp[p] = (uint32_t)w + 1, tr->npos[p]++, total++;
        }
    }
    uint32_t *pool = tr->pool = xmalloc((total + 1) * sizeof *pool);
    tr->npool = total + 1;
    size_t at = 0;
    for (size_t p = 0; p < np; p++)
        tr->fill[p] = pool + at, at += tr->npos[p], tr->stamp[p] = 0;
    for (size_t w = 0; w < tr->nwords; w++) {
        const uint32_t *s = tr->sym + tr->start[w];
        for (uint32_t i = 0; i + 1 < tr->len[w]; i++) {
            uint32_t p = ki_find(&tr->pairs, pair_key(s[i], s[i + 1]));
            if (tr->stamp[p] != (uint32_t)w + 1)
                tr->stamp[p] = (uint32_t)w + 1, *tr->fill[p]++ = (uint32_t)w;
        }
    }
    tr->heap.cap = np + 1;
    tr->heap.e = xmalloc(tr->heap.cap * sizeof *tr->heap.e);
    for (size_t p = 0; p < np; p++) {
        if (tr->pcount[p] <= 0) continue;
        tr->heap.e[tr->heap.n++] = (Entry){(uint64_t)tr->pcount[p],   tr->pkey[p], 0,
                                           tr->fill[p] - tr->npos[p], tr->npos[p], (uint32_t)p};
    }
    for (size_t i = tr->heap.n / 2; i-- > 0;)
        heap_down(&tr->heap, i);
    for (size_t p = 0; p < np; p++)
        tr->stamp[p] = 0;
}

/* Apply the changes of one merge step (number `step`, >= 1): update the
 * counts, then push one entry per pair made, with the words it was made in. */
static void apply_changes(Trainer *tr, uint32_t step, uint64_t *seq) {
    tr->nmade = 0;
    for (size_t i = 0; i < tr->nch; i++) {
        const Change *c = &tr->ch[i];
        uint32_t p = pair_index(tr, c->pair);
        tr->pcount[p] += c->delta * (int64_t)tr->wcount[c->w];
        if (c->delta <= 0) continue;
        if (tr->stamp[p] != step) {
            tr->stamp[p] = step, tr->npos[p] = 0, tr->last[p] = UINT32_MAX;
            if (tr->nmade == tr->capmade) {
                tr->capmade = tr->capmade ? 2 * tr->capmade : 1024;
                tr->made = xrealloc(tr->made, tr->capmade * sizeof *tr->made);
            }
            tr->made[tr->nmade++] = p;
        }
        if (tr->last[p] != c->w) tr->last[p] = c->w, tr->npos[p]++;
    }
    for (size_t k = 0; k < tr->nmade; k++) {
        uint32_t p = tr->made[k];
        tr->fill[p] = tr->pcount[p] > 0 ? xmalloc(tr->npos[p] * sizeof(uint32_t)) : NULL;
        tr->last[p] = UINT32_MAX;
    }
    for (size_t i = 0; i < tr->nch; i++) {
        const Change *c = &tr->ch[i];
        if (c->delta <= 0) continue;
        uint32_t p = ki_find(&tr->pairs, c->pair);
        if (tr->fill[p] && tr->last[p] != c->w) tr->last[p] = c->w, *tr->fill[p]++ = c->w;
    }
    for (size_t k = 0; k < tr->nmade; k++) {
        uint32_t p = tr->made[k];
        if (!tr->fill[p]) continue;
        uint32_t *pos = tr->fill[p] - tr->npos[p];
        heap_push(&tr->heap,
                  (Entry){(uint64_t)tr->pcount[p], tr->pkey[p], ++*seq, pos, tr->npos[p], p});
    }
}

static void trainer_free(Trainer *tr) {
    free(tr->sym), free(tr->start), free(tr->len), free(tr->wcount);
    ki_free(&tr->pairs);
    free(tr->pkey), free(tr->pcount), free(tr->stamp), free(tr->last), free(tr->npos),
        free(tr->fill);
    strmap_free(&tr->tokid);
    for (size_t i = 0; i < tr->heap.n; i++)
        if (entry_owns(tr, &tr->heap.e[i])) free(tr->heap.e[i].pos);
    free(tr->pool);
    free(tr->heap.e);
    free(tr->ch);
    free(tr->made);
}

/* "N of M tokens" on the progress line, at most about 6 times a second. */
static void merge_progress(Progress *p, size_t n) {
    if (!progress_due(p, 0)) return;
    char line[128];
    snprintf(line, sizeof line, "%zu of %llu tokens, %.0f s", n, (unsigned long long)p->total,
             p->last - p->start);
    progress_show(p, line);
}

/* wptrain_train; with `release`, c's tables are freed as soon as the words
 * are copied out (c is left empty), which lowers the peak memory. */
static int train(WpCounts *c, int release, const WpTrainOpts *o, WpVocab *v, Err *err) {
    Trainer tr = {0};
    Buf tok = {0};
    char name[32];
    if (o->unused < 0 || o->unused > WPTRAIN_MAX_UNUSED)
        return err_set(err, "the number of [unusedN] tokens must be 0..%d", WPTRAIN_MAX_UNUSED);
    if (!wpcounts_distinct(c)) return err_set(err, "no words in the input");
    memset(v, 0, sizeof *v);
    v->cased = o->cased;
    v->strip_accents = o->strip_accents;
    tr.v = v;
    strmap_init(&tr.tokid, 0);
    /* 1. special tokens */
    add_token(&tr, "[PAD]", 5, 0);
    for (int i = 0; i < o->unused; i++)
        add_token(&tr, name, (size_t)snprintf(name, sizeof name, "[unused%d]", i), 0);
    static const char *const tail[] = {"[UNK]", "[CLS]", "[SEP]", "[MASK]"};
    for (size_t i = 0; i < 4; i++)
        add_token(&tr, tail[i], strlen(tail[i]), 0);
    v->nspecial = v->tok.n;
    /* 2, 3 */
    build_words(&tr, c, o);
    for (int s = 0; release && s < NSHARD; s++)
        wt_free(&c->shard[s]);
    if (v->tok.n > o->vocab_size) {
        err_set(err,
                "vocabulary size %zu is too small: the %zu special tokens and %zu characters (%zu "
                "of them also as ##c) need %zu",
                o->vocab_size, v->nspecial, v->nalpha, v->ncont, v->tok.n);
        trainer_free(&tr);
        wpvocab_free(v);
        return -1;
    }
    /* 4 */
    count_pairs(&tr);
    /* 5 */
    uint64_t seq = 0;
    uint32_t step = 0;
    Progress prog;
    progress_init(&prog, o->vocab_size);
    v->stop = WPT_STOP_SIZE;
    while (v->tok.n < o->vocab_size) {
        if (!tr.heap.n) {
            v->stop = WPT_STOP_NO_PAIRS;
            break;
        }
        Entry top = heap_pop(&tr.heap);
        int64_t cur = tr.pcount[top.pidx];
        if ((int64_t)top.count != cur) {
            top.count = (uint64_t)(cur > 0 ? cur : 0);
            heap_push(&tr.heap, top);
            continue;
        }
        if (top.count < 1 || top.count < o->min_frequency) {
            v->stop = top.count < 1 ? WPT_STOP_NO_PAIRS : WPT_STOP_FREQUENCY;
            heap_push(&tr.heap, top); /* freed with the rest */
            break;
        }
        uint32_t a = (uint32_t)(top.pair >> 32), b = (uint32_t)top.pair;
        const char *sb = vocablist_at(&v->tok, b);
        size_t lb = v->tok.len[b];
        if (lb >= 2 && memcmp(sb, CONT_PREFIX, 2) == 0) sb += 2, lb -= 2;
        buf_clear(&tok);
        buf_append(&tok, vocablist_at(&v->tok, a), v->tok.len[a]);
        buf_append(&tok, sb, lb);
        uint64_t *have = strmap_get(&tr.tokid, tok.data, tok.len);
        uint32_t id = have ? (uint32_t)*have : add_token(&tr, tok.data, tok.len, top.count);
        if (!have) v->nmerged++;
        v->merges++;
        tr.nch = 0;
        for (uint32_t k = 0; k < top.npos; k++)
            merge_word(&tr, top.pos[k], a, b, id);
        if (entry_owns(&tr, &top)) free(top.pos);
        if (++step == 0) step = 1; /* stamps are compared for equality only */
        apply_changes(&tr, step, &seq);
        merge_progress(&prog, v->tok.n);
    }
    progress_done(&prog);
    info(4, "%zu words, %zu pairs, %llu heap pushes, %zu heap entries left", tr.nwords, tr.pairs.n,
         (unsigned long long)seq, tr.heap.n);
    buf_free(&tok);
    trainer_free(&tr);
    return 0;
}

int wptrain_train(const WpCounts *c, const WpTrainOpts *o, WpVocab *v, Err *err) {
    return train((WpCounts *)c, 0, o, v, err);
}

void wpvocab_free(WpVocab *v) {
    vocablist_free(&v->tok);
    free(v->count);
    memset(v, 0, sizeof *v);
}

/* ---- output ---- */

void wpvocab_txt(const WpVocab *v, Buf *out) {
    for (size_t i = 0; i < v->tok.n; i++) {
        buf_append(out, vocablist_at(&v->tok, i), v->tok.len[i]);
        buf_putc(out, '\n');
    }
}

_Static_assert(TOKJSON_MAX_WORD_CHARS == WP_MAX_WORD_CHARS, "tokenizer.json's word limit");

void wpvocab_json(const WpVocab *v, Buf *out) {
    Buf txt = {0};
    Err err;
    wpvocab_txt(v, &txt);
    /* the special tokens come first: [CLS] and [SEP] are there */
    if (tokjson_wordpiece(out, txt.data, txt.len, !v->cased, v->strip_accents, &err))
        warn("%s", err.msg);
    buf_free(&txt);
}

/* ---- all together ---- */

static int write_out(Writer *w, const Buf *b, Err *err) {
    if (writer_write(w, b->data, b->len, err)) {
        writer_abort(w);
        return -1;
    }
    return writer_close(w, err);
}

int wptrain_run(const WpTrainOpts *o, const char *const *inputs, int ninputs,
                const char *vocab_txt_path, const char *tokenizer_json_path, Err *err) {
    Writer wt = {0}, wj = {0};
    int have_t = vocab_txt_path != NULL, have_j = tokenizer_json_path != NULL;
    WpCounts *c = NULL;
    WpCountStats st = {0};
    WpVocab v = {0};
    Buf out = {0};
    int rc = -1;
    double t0 = now_sec(), t1;
    if (have_t && writer_open(&wt, vocab_txt_path, o->force, err)) return -1;
    if (have_j && writer_open(&wj, tokenizer_json_path, o->force, err)) {
        if (have_t) writer_abort(&wt);
        return -1;
    }
    c = wpcounts_create();
    if (wpcounts_read(c, inputs, ninputs, wp_norm(!o->cased, o->strip_accents), o->threads, &st,
                      err))
        goto done;
    t1 = now_sec();
    size_t distinct = wpcounts_distinct(c);
    info(3, "%llu lines, %llu words, %zu distinct, %.1f MB in %.2f s", (unsigned long long)st.lines,
         (unsigned long long)st.words, distinct, (double)st.bytes / 1e6, t1 - t0);
    if (train(c, 1, o, &v, err)) goto done;
    if (have_t) {
        wpvocab_txt(&v, &out);
        have_t = 0;
        if (write_out(&wt, &out, err)) goto done;
    }
    if (have_j) {
        buf_clear(&out);
        wpvocab_json(&v, &out);
        have_j = 0;
        if (write_out(&wj, &out, err)) goto done;
    }
    static const char *const why[] = {"vocabulary size reached", "next pair below --min-frequency",
                                      "no pair left"};
    info(2,
         "%zu tokens (%zu special, %zu characters, %zu ##characters, %zu merged) from %llu words "
         "(%zu distinct), %llu lines; %s; %.1f s",
         v.tok.n, v.nspecial, v.nalpha, v.ncont, v.nmerged, (unsigned long long)st.words, distinct,
         (unsigned long long)st.lines, why[v.stop], now_sec() - t0);
    if (v.tok.n < o->vocab_size)
        warn("the vocabulary has %zu tokens, fewer than the %zu asked for (%s)", v.tok.n,
             o->vocab_size, why[v.stop]);
    if (st.bad_utf8) warn("%llu invalid UTF-8 sequences dropped", (unsigned long long)st.bad_utf8);
    rc = 0;
done:
    if (have_t) writer_abort(&wt);
    if (have_j) writer_abort(&wj);
    wpvocab_free(&v);
    wpcounts_destroy(c);
    buf_free(&out);
    return rc;
}
