/* shard.c - corpus index, TextSharding's balancing, atomic shard output.
 *
 * See shard.h for the contracts and for where this differs from the
 * originals. The balancing follows NVIDIA DeepLearningExamples
 * PyTorch/LanguageModeling/BERT/data/TextSharding.py @4733603 (the same
 * algorithm in every later version up to its removal in 2022, and in the
 * HILBERT sharding.py without the test shards); spec section 9.1 walks
 * through it. Its data structures are replaced so that a pass costs
 * O(shards log shards) instead of O(documents):
 *
 *   - the originals' buckets "sentence count -> article ids" become one
 *     array of ids sorted by (count, id) (a stable radix sort), cut into one
 *     slice per distinct count; taking "the last id of bucket L" pops the
 *     end of a slice;
 *   - "lower want until bucket[want] is non-empty" (a walk over every
 *     smaller count) becomes a predecessor query in a bitmap of non-empty
 *     slices with one summary level per 64x (BitTree below);
 *   - shard sentence counts are kept up to date instead of being recounted
 *     over all assigned articles after every pass (what PR #1063 of the
 *     upstream repository also did).
 */
#include "shard/shard.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/io.h"
#include "common/utf8.h"

#define READ_CHUNK (4u << 20)
#define COPY_CHUNK (1u << 20)

/* ---- Python white space ---- */

/* str.isspace() is true for U+0009..000D, U+001C..0020, U+0085, U+00A0,
 * U+1680, U+2000..200A, U+2028, U+2029, U+202F, U+205F and U+3000 (stable
 * since Unicode 6.3 dropped U+180E; test_shard checks the list against
 * the ICU-backed uniprop table). */
static int ascii_space(unsigned c) {
    return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
}

static int space3(unsigned a, unsigned b, unsigned c) {
    if (a == 0xE2 && b == 0x80)
        return (c >= 0x80 && c <= 0x8A) || c == 0xA8 || c == 0xA9 || c == 0xAF;
    return (a == 0xE1 && b == 0x9A && c == 0x80) || (a == 0xE2 && b == 0x81 && c == 0x9F) ||
           (a == 0xE3 && b == 0x80 && c == 0x80);
}

/* Byte length of the white-space character at the start of s, or 0. */
static size_t space_head(const unsigned char *s, size_t n) {
    if (!n) return 0;
    if (s[0] < 0x80) return ascii_space(s[0]);
    if (n >= 2 && s[0] == 0xC2 && (s[1] == 0x85 || s[1] == 0xA0)) return 2;
    if (n >= 3 && space3(s[0], s[1], s[2])) return 3;
    return 0;
}

/* Byte length of the white-space character that ends s[0..n), or 0. */
static size_t space_tail(const unsigned char *s, size_t n) {
    if (!n) return 0;
    unsigned c = s[n - 1];
    if (c < 0x80) return ascii_space(c);
    if (n >= 2 && s[n - 2] == 0xC2 && (c == 0x85 || c == 0xA0)) return 2;
    if (n >= 3 && space3(s[n - 3], s[n - 2], c)) return 3;
    return 0;
}

void shard_strip(const char **s, size_t *n) {
    const unsigned char *p = (const unsigned char *)*s;
    size_t m = *n, k;
    while ((k = space_head(p, m)) > 0)
        p += k, m -= k;
    while ((k = space_tail(p, m)) > 0)
        m -= k;
    *s = (const char *)p;
    *n = m;
}

/* ---- index ---- */

void shard_index_init(ShardIndex *ix, ShardLayout layout) {
    memset(ix, 0, sizeof *ix);
    ix->layout = layout;
}

void shard_index_free(ShardIndex *ix) {
    free(ix->off_lo), free(ix->highs), free(ix->len), free(ix->nsent), free(ix->longs);
    free(ix->input_end);
    memset(ix, 0, sizeof *ix);
}

/* How many of the n elements at a (stride bytes apart, each starting with
 * a uint32_t key, keys ascending) have a key <= v. */
static size_t count_at_most(const void *a, size_t n, size_t stride, uint64_t v) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t key;
        memcpy(&key, (const char *)a + mid * stride, sizeof key);
        if (key <= v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

uint64_t shard_doc_off(const ShardIndex *ix, uint32_t id) {
    size_t k = count_at_most(ix->highs, ix->nhigh, sizeof *ix->highs, id);
    uint64_t h = k ? ix->highs[k - 1].hi : 0;
    return h << 32 | ix->off_lo[id];
}

uint64_t shard_doc_len(const ShardIndex *ix, uint32_t id) {
    uint32_t v = ix->len[id] & ~SHARD_LEN_STRIP;
    if (v != SHARD_LEN_LONG) return v;
    /* the long list is in id order and holds this id */
    return ix->longs[count_at_most(ix->longs, ix->nlong, sizeof *ix->longs, id) - 1].len;
}

int shard_doc_strip(const ShardIndex *ix, uint32_t id) {
    return (ix->len[id] & SHARD_LEN_STRIP) != 0;
}

uint32_t shard_doc_input(const ShardIndex *ix, uint32_t id) {
    /* the first input that ended after document id */
    return (uint32_t)count_at_most(ix->input_end, ix->ninputs, sizeof *ix->input_end, id);
}

/* Append the pending document to the arrays. */
static int index_finish(ShardIndex *ix, const char *name, Err *err) {
    ix->open = 0;
    ix->has_text = 0;
    if (ix->ndocs >= UINT32_MAX)
        return err_set(err, "%s:%llu: more than %u documents", name,
                       (unsigned long long)ix->cur_line, UINT32_MAX - 1);
    if (ix->ndocs == ix->cap) {
        ix->cap = ix->cap ? ix->cap * 2 : 1024;
        ix->off_lo = xrealloc(ix->off_lo, ix->cap * sizeof *ix->off_lo);
        ix->len = xrealloc(ix->len, ix->cap * sizeof *ix->len);
        ix->nsent = xrealloc(ix->nsent, ix->cap * sizeof *ix->nsent);
    }
    size_t i = ix->ndocs++;
    uint64_t len = ix->cur_end - ix->cur_off;
    if (len >= SHARD_LEN_LONG) {
        if (ix->nlong == ix->caplong) {
            ix->caplong = ix->caplong ? ix->caplong * 2 : 16;
            ix->longs = xrealloc(ix->longs, ix->caplong * sizeof *ix->longs);
        }
        ix->longs[ix->nlong++] = (ShardLongDoc){(uint32_t)i, len};
        len = SHARD_LEN_LONG;
    }
    uint32_t hi = (uint32_t)(ix->cur_off >> 32), prev = ix->nhigh ? ix->highs[ix->nhigh - 1].hi : 0;
    if (hi != prev) {
        if (ix->nhigh == ix->caphigh) {
            ix->caphigh = ix->caphigh ? ix->caphigh * 2 : 16;
            ix->highs = xrealloc(ix->highs, ix->caphigh * sizeof *ix->highs);
        }
        ix->highs[ix->nhigh++] = (ShardHigh){(uint32_t)i, hi};
    }
    ix->off_lo[i] = (uint32_t)ix->cur_off;
    ix->len[i] = (uint32_t)len | (ix->cur_strip ? SHARD_LEN_STRIP : 0);
    ix->nsent[i] = (uint32_t)ix->cur_nsent;
    ix->sentences += ix->cur_nsent;
    return 0;
}

int shard_index_line(ShardIndex *ix, const char *s, size_t n, int has_nl, const char *name,
                     Err *err) {
    const unsigned char *u = (const unsigned char *)s;
    uint64_t at = ix->pos;
    ix->pos += n + (has_nl ? 1 : 0);
    ix->line++;
    ix->lines++;
    int blank, clean;
    if (n == 0) {
        blank = 1, clean = has_nl;
    } else if (!space_head(u, n) && !space_tail(u, n)) {
        blank = 0, clean = has_nl;
    } else {
        const char *p = s;
        size_t m = n;
        shard_strip(&p, &m);
        blank = m == 0, clean = 0;
    }
    /* nvidia: blank lines only separate; hu: a blank line ends a pending
     * block, or else is the block's first (empty) sentence */
    if (blank && (ix->open || ix->layout == SHARD_NVIDIA))
        return ix->open ? index_finish(ix, name, err) : 0;
    if (!ix->open) {
        ix->open = 1;
        ix->has_text = 0;
        ix->cur_off = at;
        ix->cur_line = ix->line;
        ix->cur_nsent = 0;
        ix->cur_strip = 0;
    }
    if (ix->cur_nsent == UINT32_MAX)
        return err_set(
            err, "%s:%llu: the document that starts at line %llu has more than %u sentences", name,
            (unsigned long long)ix->line, (unsigned long long)ix->cur_line, UINT32_MAX);
    ix->cur_nsent++;
    ix->cur_end = ix->pos;
    ix->cur_strip |= !clean;
    ix->has_text |= !blank;
    return 0;
}

int shard_index_end_input(ShardIndex *ix, const char *name, Err *err) {
    int rc = 0;
    /* hu: a block of nothing but blank lines at the end is dropped (the
     * original drops every block pending at the end) */
    if (ix->open && (ix->layout == SHARD_NVIDIA || ix->has_text)) rc = index_finish(ix, name, err);
    ix->open = 0;
    ix->has_text = 0;
    ix->pos = 0;
    ix->line = 0;
    ix->input_end = xrealloc(ix->input_end, (ix->ninputs + 1) * sizeof *ix->input_end);
    ix->input_end[ix->ninputs++] = (uint32_t)ix->ndocs;
    return rc;
}

int shard_index_read(ShardIndex *ix, FILE *in, const char *name, FILE *copy,
                     ShardProgressFn progress, void *ctx, Err *err) {
    size_t cap = READ_CHUNK, have = 0;
    char *buf = xmalloc(cap);
    int rc = 0, first = 1;
    for (;;) {
        size_t got = fread(buf + have, 1, cap - have, in);
        if (first && utf8_refuse_wide(name, buf, got, err)) {
            rc = -1;
            goto done;
        }
        first = 0;
        if (got == 0) {
            if (ferror(in)) {
                rc = err_set(err, "%s: read error: %s", name, strerror(errno));
                goto done;
            }
            if (have > io_max_line())
                rc = io_err_too_long(err, name, ix->line + 1, "line");
            else if (have && shard_index_line(ix, buf, have, 0, name, err))
                rc = -1;
            break;
        }
        if (copy && fwrite(buf + have, 1, got, copy) != got) {
            rc = err_set(err, "temporary copy of %s: write error: %s", name, strerror(errno));
            goto done;
        }
        ix->bytes += got;
        char *p = buf, *end = buf + have + got, *nl;
        while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
            if ((size_t)(nl - p) > io_max_line()) {
                rc = io_err_too_long(err, name, ix->line + 1, "line");
                goto done;
            }
            if (shard_index_line(ix, p, (size_t)(nl - p), 1, name, err)) {
                rc = -1;
                goto done;
            }
            p = nl + 1;
        }
        have = (size_t)(end - p);
        memmove(buf, p, have);
        if (have > io_max_line()) { /* no '\n' within the longest line */
            rc = io_err_too_long(err, name, ix->line + 1, "line");
            goto done;
        }
        if (have == cap) { /* one line longer than the buffer: at most the longest line more */
            cap = cap < io_max_line() ? cap * 2 : cap + READ_CHUNK;
            if (cap > io_max_line() + READ_CHUNK) cap = io_max_line() + READ_CHUNK;
            buf = xrealloc(buf, cap);
        }
        if (progress) progress(ctx, ix->bytes, ix->ndocs);
    }
    if (!rc && shard_index_end_input(ix, name, err)) rc = -1;
done:
    free(buf);
    return rc;
}

/* ---- BitTree: predecessor / successor over a fixed set of slots ----
 *
 * Level 0 has one bit per slot (set = slice non-empty); each bit of level
 * l+1 says whether word i of level l is non-zero. A query climbs while the
 * current word has no candidate and descends along the highest (lowest)
 * set bits: O(levels), at most 6 for 2^32 slots. */
enum { BT_MAXLEV = 7 };
typedef struct BitTree {
    uint64_t *w[BT_MAXLEV];
    size_t nbits[BT_MAXLEV];
    int levels;
} BitTree;

static void bt_init(BitTree *t, size_t n) {
    memset(t, 0, sizeof *t);
    size_t bits = n ? n : 1;
    for (;;) {
        size_t words = (bits + 63) / 64;
        t->nbits[t->levels] = bits;
        t->w[t->levels++] = xcalloc(words, sizeof(uint64_t));
        if (words == 1) break;
        bits = words;
    }
}

static void bt_free(BitTree *t) {
    for (int l = 0; l < t->levels; l++)
        free(t->w[l]);
}

static void bt_set(BitTree *t, size_t i) {
    for (int l = 0; l < t->levels; l++, i >>= 6)
        t->w[l][i >> 6] |= UINT64_C(1) << (i & 63);
}

static void bt_clear(BitTree *t, size_t i) {
    for (int l = 0; l < t->levels; l++, i >>= 6) {
        t->w[l][i >> 6] &= ~(UINT64_C(1) << (i & 63));
        if (t->w[l][i >> 6]) break;
    }
}

/* Largest set slot <= i, or -1. */
static int64_t bt_pred(const BitTree *t, int64_t i) {
    if (i < 0) return -1;
    int l = 0;
    uint64_t idx = (uint64_t)i;
    for (;;) {
        unsigned b = (unsigned)(idx & 63);
        uint64_t word = t->w[l][idx >> 6] & (b == 63 ? ~UINT64_C(0) : (UINT64_C(1) << (b + 1)) - 1);
        if (word) {
            idx = (idx & ~UINT64_C(63)) | (uint64_t)(63 - __builtin_clzll(word));
            break;
        }
        if ((idx >> 6) == 0 || l + 1 == t->levels) return -1;
        idx = (idx >> 6) - 1;
        l++;
    }
    while (l > 0) {
        l--;
        idx = idx * 64 + (uint64_t)(63 - __builtin_clzll(t->w[l][idx]));
    }
    return (int64_t)idx;
}

/* Smallest set slot >= i, or -1. */
static int64_t bt_succ(const BitTree *t, uint64_t i) {
    if (i >= t->nbits[0]) return -1;
    int l = 0;
    uint64_t idx = i;
    for (;;) {
        uint64_t word = t->w[l][idx >> 6] & (~UINT64_C(0) << (idx & 63));
        if (word) {
            idx = (idx & ~UINT64_C(63)) | (uint64_t)__builtin_ctzll(word);
            break;
        }
        idx = (idx >> 6) + 1;
        if (l + 1 == t->levels || idx >= t->nbits[l + 1]) return -1;
        l++;
    }
    while (l > 0) {
        l--;
        idx = idx * 64 + (uint64_t)__builtin_ctzll(t->w[l][idx]);
    }
    return (int64_t)idx;
}

/* ---- balance ---- */

#define NONE UINT32_MAX /* no id: document ids are below UINT32_MAX (index_finish) */

typedef struct Balancer {
    const uint32_t *nsent;
    uint32_t *order;  /* ids sorted by (nsent, id) */
    uint32_t *lenv;   /* distinct sentence counts, ascending */
    uint64_t *bstart; /* slice k of order: [bstart[k], bend[k]) */
    uint64_t *bend;
    size_t ndistinct;
    BitTree nonempty; /* slices that still hold ids */
    uint32_t *next;   /* per id: the id given to the same shard after it, or NONE */
    uint32_t *head;   /* per shard: its first and last ids, or NONE */
    uint32_t *tail;
    size_t nseq;       /* ids given out */
    uint64_t *counts;  /* sentences per shard */
    uint64_t *scratch; /* for medians */
} Balancer;

/* Pop the highest id of slice k and give it to shard s. */
static uint32_t take(Balancer *b, int64_t k, uint32_t s) {
    uint32_t id = b->order[--b->bend[k]];
    if (b->bend[k] == b->bstart[k]) bt_clear(&b->nonempty, (size_t)k);
    b->next[id] = NONE;
    if (b->head[s] == NONE)
        b->head[s] = id;
    else
        b->next[b->tail[s]] = id;
    b->tail[s] = id;
    b->nseq++;
    b->counts[s] += b->nsent[id];
    return id;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Twice Python's statistics.median of c[0..n) (exact for x.5 medians). */
static uint64_t median2(const uint64_t *c, size_t n, uint64_t *scratch) {
    if (!n) return 0;
    memcpy(scratch, c, n * sizeof *c);
    qsort(scratch, n, sizeof *scratch, cmp_u64);
    return n % 2 ? 2 * scratch[n / 2] : scratch[n / 2 - 1] + scratch[n / 2];
}

/* Index of the largest distinct count <= v, or -1. */
static int64_t slice_at_most(const Balancer *b, uint64_t v) {
    return (int64_t)count_at_most(b->lenv, b->ndistinct, sizeof *b->lenv, v) - 1;
}

/* Stable sort of the ids 0..n-1 by nsent (LSD radix, 16-bit digits). */
static void sort_by_count(const uint32_t *nsent, size_t n, uint32_t maxlen, uint32_t *out) {
    uint32_t *tmp = xmalloc((n ? n : 1) * sizeof *tmp);
    uint64_t *cnt = xmalloc(65537 * sizeof *cnt);
    for (size_t i = 0; i < n; i++)
        tmp[i] = (uint32_t)i;
    uint32_t *src = tmp, *dst = out;
    for (int shift = 0; shift < 32; shift += 16) {
        if (shift && (maxlen >> shift) == 0) break;
        memset(cnt, 0, 65537 * sizeof *cnt);
        for (size_t i = 0; i < n; i++)
            cnt[((nsent[src[i]] >> shift) & 0xFFFF) + 1]++;
        for (int d = 0; d < 65536; d++)
            cnt[d + 1] += cnt[d];
        for (size_t i = 0; i < n; i++)
            dst[cnt[(nsent[src[i]] >> shift) & 0xFFFF]++] = src[i];
        uint32_t *t = src;
        src = dst, dst = t;
    }
    if (src != out) memcpy(out, src, n * sizeof *out);
    free(tmp);
    free(cnt);
}

void shard_plan_free(ShardPlan *plan) {
    free(plan->first), free(plan->ids), free(plan->nsent);
    memset(plan, 0, sizeof *plan);
}

int shard_fit(ShardSpec *spec, size_t n) {
    if (n >= (uint64_t)spec->ntrain + spec->ntest) return 0;
    size_t nshards = n / 4 ? n / 4 : 1;
    uint32_t ntest = 0, ntrain;
    if (spec->ntest) {
        double t = (double)nshards * spec->test_fraction + 0.5;
        ntest = t < 1 ? 1 : t > spec->ntest ? spec->ntest : (uint32_t)t;
    }
    ntrain = nshards > ntest ? (uint32_t)(nshards - ntest) : 1;
    if (ntrain > spec->ntrain) ntrain = spec->ntrain;
    spec->ntrain = ntrain, spec->ntest = ntest;
    return 1;
}

int shard_balance(const uint32_t *nsent, size_t n, const ShardSpec *spec, ShardPlan *plan,
                  Err *err) {
    memset(plan, 0, sizeof *plan);
    uint64_t nshards = (uint64_t)spec->ntrain + spec->ntest;
    if (spec->ntrain < 1) return err_set(err, "there must be at least one training shard");
    if (nshards > UINT32_MAX)
        return err_set(err, "too many shards (%llu)", (unsigned long long)nshards);
    if (!(spec->test_fraction >= 0 && spec->test_fraction <= 1))
        return err_set(err, "the test fraction must be in [0, 1], not %g", spec->test_fraction);
    if (n < nshards)
        return err_set(
            err,
            "%zu documents for %llu shards (%u training + %u test): each shard needs at least one "
            "document",
            n, (unsigned long long)nshards, spec->ntrain, spec->ntest);
    uint32_t S = (uint32_t)nshards, ntrain = spec->ntrain;
    ShardStats *st = &plan->st;
    uint32_t maxlen = 0;
    size_t nzero = 0;
    for (size_t i = 0; i < n; i++) {
        st->total += nsent[i];
        if (nsent[i] > maxlen) maxlen = nsent[i];
        nzero += nsent[i] == 0;
    }
    /* Python: int((1 - f) * total) // ntrain, with float arithmetic */
    double f = spec->ntest ? spec->test_fraction : 0.0;
    uint64_t ntrain_sent = (uint64_t)((1.0 - f) * (double)st->total);
    if (ntrain_sent > st->total) ntrain_sent = st->total;
    uint64_t nom_train = ntrain_sent / ntrain;
    uint64_t nom_test = spec->ntest ? (st->total - ntrain_sent) / spec->ntest : 0;
    st->nominal_train0 = nom_train;
    st->nominal_test0 = nom_test;

    Balancer b = {.nsent = nsent};
    b.order = xmalloc((n ? n : 1) * sizeof *b.order);
    sort_by_count(nsent, n, maxlen, b.order);
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++)
        distinct += !i || nsent[b.order[i]] != nsent[b.order[i - 1]];
    b.lenv = xmalloc((distinct ? distinct : 1) * sizeof *b.lenv);
    b.bstart = xmalloc((distinct ? distinct : 1) * sizeof *b.bstart);
    b.bend = xmalloc((distinct ? distinct : 1) * sizeof *b.bend);
    for (size_t i = 0; i < n; i++) {
        uint32_t L = nsent[b.order[i]];
        if (!b.ndistinct || b.lenv[b.ndistinct - 1] != L) {
            b.lenv[b.ndistinct] = L;
            b.bstart[b.ndistinct++] = i;
        }
        b.bend[b.ndistinct - 1] = i + 1;
    }
    bt_init(&b.nonempty, b.ndistinct);
    for (size_t k = 0; k < b.ndistinct; k++)
        bt_set(&b.nonempty, k);
    b.next = xmalloc((n ? n : 1) * sizeof *b.next);
    b.head = xmalloc(S * sizeof *b.head);
    b.tail = xmalloc(S * sizeof *b.tail);
    for (uint32_t s = 0; s < S; s++)
        b.head[s] = b.tail[s] = NONE;
    b.counts = xcalloc(S, sizeof *b.counts);
    b.scratch = xmalloc(S * sizeof *b.scratch);
    uint64_t *train_counts = b.counts, *test_counts = b.counts + ntrain;
    size_t first_nonzero = (b.ndistinct && b.lenv[0] == 0) ? 1 : 0;

    /* first pass: every shard gets the longest remaining document (the
     * highest id among equals); a longer one than the nominal size raises
     * that kind's nominal size */
    size_t left_nonzero = n - nzero;
    for (uint32_t s = 0; s < S; s++) {
        int64_t k = bt_pred(&b.nonempty, (int64_t)b.ndistinct - 1);
        uint32_t id = take(&b, k, s);
        if (nsent[id]) left_nonzero--;
        uint64_t *nom = s < ntrain ? &nom_train : &nom_test;
        if (nsent[id] > *nom) {
            *nom = nsent[id];
            st->oversize++;
        }
    }
    uint64_t med2_train = median2(train_counts, ntrain, b.scratch);
    uint64_t med2_test = median2(test_counts, spec->ntest, b.scratch);

    /* then passes: each shard at or below its kind's median (as of the end
     * of the previous pass) gets the longest remaining document that fits
     * its room to the nominal size; when the number of documents left was
     * the same over the last (up to) 4 passes, nominal_train grows by 1 */
    uint64_t hist[4];
    int nhist = 0;
    while (left_nonzero > 0) {
        size_t placed = 0;
        for (uint32_t s = 0; s < S; s++) {
            int train = s < ntrain;
            uint64_t nom = train ? nom_train : nom_test;
            if (b.counts[s] >= nom) continue;
            int64_t k = bt_pred(&b.nonempty, slice_at_most(&b, nom - b.counts[s]));
            if (k < 0 || b.lenv[k] == 0) continue;
            if (2 * b.counts[s] > (train ? med2_train : med2_test)) continue;
            take(&b, k, s);
            placed++;
            left_nonzero--;
        }
        st->passes++;
        uint64_t left = n - b.nseq;
        if (nhist == 4) memmove(hist, hist + 1, 3 * sizeof *hist), nhist--;
        hist[nhist++] = left;
        int same = 1;
        for (int i = 1; i < nhist; i++)
            same &= hist[i] == hist[i - 1];
        if (same) {
            nom_train++;
            if (!placed && left_nonzero > 0) {
                /* nothing moves until nominal_train reaches the smallest
                 * document plus the smallest training count (that shard
                 * is at or below the median): run those passes at once */
                uint64_t minc = train_counts[0];
                for (uint32_t s = 1; s < ntrain; s++)
                    if (train_counts[s] < minc) minc = train_counts[s];
                uint64_t need = b.lenv[bt_succ(&b.nonempty, first_nonzero)] + minc;
                if (nom_train < need) {
                    uint64_t skip = need - nom_train;
                    nom_train = need;
                    st->passes += skip;
                    st->skipped += skip;
                    for (uint64_t i = 0; i < skip && i < 4; i++) {
                        if (nhist == 4) memmove(hist, hist + 1, 3 * sizeof *hist), nhist--;
                        hist[nhist++] = left;
                    }
                }
            }
        }
        med2_train = median2(train_counts, ntrain, b.scratch);
        med2_test = median2(test_counts, spec->ntest, b.scratch);
    }
    /* documents without sentences: dealt to the training shards in turn */
    if (first_nonzero) {
        uint32_t s = 0;
        while (b.bend[0] > b.bstart[0]) {
            take(&b, 0, s);
            s = (s + 1) % ntrain;
            st->empty_docs++;
        }
    }
    st->nominal_train = nom_train;
    st->nominal_test = nom_test;

    /* the plan: assignments grouped by shard, in assignment order */
    plan->ntrain = ntrain;
    plan->ntest = spec->ntest;
    /* every id has been given out, so order's room holds the plan's ids:
     * each shard's list in turn */
    plan->first = xcalloc((size_t)S + 1, sizeof *plan->first);
    plan->ids = b.order;
    plan->nsent = xmalloc(S * sizeof *plan->nsent);
    memcpy(plan->nsent, b.counts, S * sizeof *plan->nsent);
    size_t at = 0;
    for (uint32_t s = 0; s < S; s++) {
        for (uint32_t id = b.head[s]; id != NONE; id = b.next[id])
            plan->ids[at++] = id;
        plan->first[s + 1] = at;
    }

    free(b.lenv), free(b.bstart), free(b.bend);
    bt_free(&b.nonempty);
    free(b.next), free(b.head), free(b.tail), free(b.counts), free(b.scratch);
    return 0;
}

/* ---- write ---- */

const char *shard_file_name(const ShardPlan *plan, uint32_t s, const char *name, char *out,
                            size_t cap) {
    if (s < plan->ntrain)
        snprintf(out, cap, "%s_training_%u.txt", name, s);
    else
        snprintf(out, cap, "%s_test_%u.txt", name, s - plan->ntrain);
    return out;
}

/* The temp files of the shard_write in progress, for the signal handler
 * and the die() hook. Entries [0, temp_n) are complete strings. */
static char **temp_paths;
static volatile sig_atomic_t temp_n;
static struct sigaction saved_sa[4];

static void remove_temps(void) {
    for (sig_atomic_t i = 0; i < temp_n; i++)
        unlink(temp_paths[i]);
}

static void on_signal(int sig) {
    remove_temps();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void arm_cleanup(char **paths) {
    temp_paths = paths;
    temp_n = 0;
    set_die_hook(remove_temps);
    signals_catch(on_signal, saved_sa); /* a signal inherited as ignored stays so */
}

static void disarm_cleanup(void) {
    signals_restore(saved_sa);
    set_die_hook(NULL);
    temp_n = 0;
    temp_paths = NULL;
}

/* pread exactly n bytes; -1 with err on an error or a short file. */
static int read_at(const ShardInput *in, uint64_t off, char *dst, size_t n, Err *err) {
    while (n > 0) {
        ssize_t got = pread(in->fd, dst, n, (off_t)(in->base + off));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return err_set(err, "%s: read error: %s", in->name, strerror(errno));
        if (got == 0)
            return err_set(err, "%s: changed while being sharded (ends before offset %llu)",
                           in->name, (unsigned long long)off);
        dst += got, off += (uint64_t)got, n -= (size_t)got;
    }
    return 0;
}

/* Write document id to fp (the shard `out`, for messages): its lines,
 * stripped when flagged, and an empty line. Adds the bytes to *bytes. */
static int write_doc(const ShardIndex *ix, const ShardInput *inputs, uint32_t id, FILE *fp,
                     const char *out, char *chunk, Buf *doc, uint64_t *bytes, Err *err) {
    const ShardInput *in = &inputs[shard_doc_input(ix, id)];
    uint64_t off = shard_doc_off(ix, id), len = shard_doc_len(ix, id);
    int bad = 0;
    if (!shard_doc_strip(ix, id)) {
        for (uint64_t done = 0; done < len && !bad;) {
            size_t n = len - done < COPY_CHUNK ? (size_t)(len - done) : COPY_CHUNK;
            if (read_at(in, off + done, chunk, n, err)) return -1;
            bad = fwrite(chunk, 1, n, fp) != n;
            done += n;
        }
        *bytes += len;
    } else {
        /* line by line, COPY_CHUNK at a time: a document may be long, but
         * no line is longer than pass 1 took (io_max_line) */
        buf_clear(doc);
        for (uint64_t done = 0; done < len && !bad;) {
            size_t n = len - done < COPY_CHUNK ? (size_t)(len - done) : COPY_CHUNK;
            buf_reserve(doc, n);
            if (read_at(in, off + done, doc->data + doc->len, n, err)) return -1;
            doc->len += n;
            done += n;
            const char *p = doc->data, *end = doc->data + doc->len;
            while (p < end && !bad) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                if (!nl && done < len) break; /* the rest of this line comes next */
                const char *s = p;
                size_t m = (size_t)((nl ? nl : end) - p);
                shard_strip(&s, &m);
                bad = fwrite(s, 1, m, fp) != m || putc('\n', fp) == EOF;
                *bytes += m + 1;
                p = nl ? nl + 1 : end;
            }
            doc->len = (size_t)(end - p);
            memmove(doc->data, p, doc->len);
        }
    }
    bad = bad || putc('\n', fp) == EOF;
    *bytes += 1;
    if (bad) return err_set(err, "%s: write error: %s", out, strerror(errno));
    return 0;
}

/* Parse "<digits>.txt" (canonical decimal) at s; returns the number or -1. */
static int64_t shard_number(const char *s) {
    if (!(*s >= '0' && *s <= '9') || (s[0] == '0' && s[1] >= '0' && s[1] <= '9')) return -1;
    int64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > 9999999999LL) return -1;
        v = v * 10 + (*s - '0');
    }
    return strcmp(s, ".txt") == 0 ? v : -1;
}

/* Delete files in dir named as shards of `name` beyond the plan's counts. */
static int remove_stale_shards(const ShardPlan *plan, const char *dir, const char *name,
                               uint64_t *removed, Err *err) {
    DIR *d = opendir(dir);
    if (!d) return err_set(err, "%s: %s", dir, strerror(errno));
    size_t nl = strlen(name);
    struct dirent *e;
    Buf path = {0};
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        const char *fn = e->d_name;
        if (strncmp(fn, name, nl) != 0) continue;
        int64_t i = -1, limit = 0;
        if (strncmp(fn + nl, "_training_", 10) == 0)
            i = shard_number(fn + nl + 10), limit = plan->ntrain;
        else if (strncmp(fn + nl, "_test_", 6) == 0)
            i = shard_number(fn + nl + 6), limit = plan->ntest;
        if (i < limit) continue;
        buf_clear(&path);
        buf_puts(&path, dir);
        buf_putc(&path, '/');
        buf_puts(&path, fn);
        if (output_not_input(path.data, err)) {
            rc = -1;
            break;
        }
        if (unlink(path.data) != 0) {
            rc = err_set(err, "%s: cannot remove: %s", path.data, strerror(errno));
            break;
        }
        (*removed)++;
    }
    closedir(d);
    buf_free(&path);
    return rc;
}

int shard_write(const ShardIndex *ix, const ShardInput *inputs, const ShardPlan *plan,
                const char *dir, const char *name, int flags, ShardProgressFn progress, void *ctx,
                ShardWriteStats *ws, Err *err) {
    int force = flags & SHARD_FORCE;
    PageCache behind = {.fd = -1};
    uint32_t S = plan->ntrain + plan->ntest;
    memset(ws, 0, sizeof *ws);
    char **final = xcalloc(S, sizeof *final), **temp = xcalloc(S, sizeof *temp);
    char fname[4096];
    size_t extra = strlen(dir) + 64;
    for (uint32_t s = 0; s < S; s++) {
        shard_file_name(plan, s, name, fname, sizeof fname);
        size_t cap = strlen(fname) + extra;
        final[s] = xmalloc(cap);
        temp[s] = xmalloc(cap);
        snprintf(final[s], cap, "%s/%s", dir, fname);
        snprintf(temp[s], cap, "%s.tmp.%ld", final[s], (long)getpid());
        remove_dead_temps(final[s]);
    }
    char *chunk = xmalloc(COPY_CHUNK);
    Buf doc = {0};
    int rc = 0;
    for (uint32_t s = 0; s < S && !rc; s++)
        rc = output_not_input(final[s], err); /* an input named as a shard */
    arm_cleanup(temp);
    for (uint32_t s = 0; s < S && !rc; s++) {
        temp_n = (sig_atomic_t)(s + 1);
        FILE *fp = fopen(temp[s], "wb");
        if (!fp) {
            rc = err_set(err, "%s: %s", temp[s], strerror(errno));
            break;
        }
        PageCache pc;
        pagecache_init(&pc, fileno(fp), flags & SHARD_NOCACHE ? PAGECACHE_OUTPUT : PAGECACHE_OFF);
        uint64_t flushed = ws->bytes;
        for (uint64_t j = plan->first[s]; j < plan->first[s + 1] && !rc; j++) {
            rc = write_doc(ix, inputs, plan->ids[j], fp, final[s], chunk, &doc, &ws->bytes, err);
            if (pc.fd >= 0 && ws->bytes - flushed >= PAGECACHE_WINDOW && fflush(fp) == 0) {
                pagecache_advance(&pc);
                flushed = ws->bytes;
            }
        }
        int bad = fflush(fp) != 0 || ferror(fp);
        int saved = errno;
        /* dropped once the next shard is written (dup: -1 when no
         * descriptor is left, and the shard stays cached) */
        if (pc.fd >= 0 && !bad && !rc) pagecache_hand(&behind, dup(pc.fd));
        if (fclose(fp) != 0 && !bad) bad = 1, saved = errno;
        if (bad && !rc) rc = err_set(err, "%s: write error: %s", final[s], strerror(saved));
        if (progress) progress(ctx, ws->bytes, s + 1);
    }
    pagecache_hand(&behind, -1);
    /* all or none: without force a shard that appeared meanwhile is kept
     * (rename_output), and the shards placed before it go back to their
     * temp names, to be removed with the others */
    uint32_t placed = 0;
    while (!rc && placed < S) {
        if (rename_output(temp[placed], final[placed], force, err))
            rc = -1;
        else
            placed++;
    }
    if (rc)
        for (uint32_t s = 0; s < placed; s++)
            rename(final[s], temp[s]);
    if (rc) remove_temps();
    disarm_cleanup();
    if (!rc && force) rc = remove_stale_shards(plan, dir, name, &ws->removed, err);
    for (uint32_t s = 0; s < S; s++)
        free(final[s]), free(temp[s]);
    free(final), free(temp), free(chunk);
    buf_free(&doc);
    return rc;
}
