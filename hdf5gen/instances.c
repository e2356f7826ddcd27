/* instances.c - masked-LM / next-sentence instances, draw for draw as
 * NVIDIA's create_pretraining_data.py (DeepLearningExamples 4733603,
 * PyTorch/LanguageModeling/BERT; the same file as Google's
 * google-research/bert create_pretraining_data.py apart from never_split in
 * the tokenizer and the same-document rule noted below). See instances.h
 * for the outline; the comments here name the original's variables.
 *
 * Exactness rests on three things: the same documents (tokenize/wordpiece.h
 * is tokenization.py), the same generator (common/pyrandom.h is CPython's
 * random.Random) and the same sequence of draws, which is:
 *
 *   shuffle(all_documents)
 *   per document, dupe_factor times over:
 *     random() < short_seq_prob [-> randint(2, max_num_tokens)]
 *     per chunk: [randint(1, len(chunk) - 1) if >= 2 sentences]
 *                [random() < 0.5 unless the chunk has 1 sentence]
 *                random next: randint(0, ndocs - 1) up to 10 times until it
 *                             differs, randint(0, len(doc) - 1) for the start
 *                truncate: random() < 0.5 per removed token
 *                mask: shuffle(cand_indexes); per masked token random() < 0.8
 *                      [random() < 0.5 [randint(0, len(vocab_words) - 1)]]
 *   shuffle(instances)
 *
 * Segments A and B are always runs of whole consecutive sentences of one
 * document, so both are ranges of the document tokens; truncation only moves range
 * ends, and an instance is kept as the two ranges.
 *
 * Masking is most of the building work, so it runs in parallel although
 * the draws form one stream: one thread makes every draw in order, but for
 * masking it only draws past the right number of words (without
 * whole-word masking, the draws of create_masked_lm_predictions depend on
 * the candidate count and the drawn values alone), noting each instance's
 * position in the stream and a copy of the generator at the start of each
 * block of INST_BLOCK instances. Each finished block is handed to the
 * other threads, which mask it by replaying the stream from its copy while
 * the draws go on; after the last draw the drawing thread joins them.
 * Drawing past makes the words and tests them, nothing more (the shuffle's
 * words are tempered four at a time and moved nowhere, pyrandom.c), which
 * costs a little less than the masking; so at two threads the drawing and
 * the masking thread stay about even, and the one thread of the draws is
 * not the bound. Whole-word masking (group sizes decide the draws) is done
 * during the draws, and so is all masking on one thread, where the replay
 * would only make every masking draw twice.
 *
 * Unless whole_word is on or the text holds a [CLS] or [SEP] token (then
 * the instance's tokens are copied and scanned), the candidates of an
 * instance are all its positions but the special ones, so masking needs
 * no tokens: only a position that keeps its token reads it (mask_plain).
 *
 * Reading: lines are tokenized in batches on all threads (common/pool.h),
 * each thread remembering the ids of the words (bytes between ASCII
 * blanks) it has seen in a table whose 32-byte entries hold a word of up
 * to 16 bytes and up to two ids themselves, so that most words cost one
 * hash of two 64-bit loads and one cache line.
 */
#include "hdf5gen/instances.h"

#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/hash.h"
#include "common/io.h"
#include "common/mlm.h"
#include "common/pool.h"
#include "common/pyrandom.h"
#include "common/uniprop.h"
#include "common/utf8.h"
#include "hdf5gen/instrec.h"

#define BATCH_BYTES (256u << 10)
#define BATCH_LINES 4096
#define MAX_THREADS 256
#define RANDOM_DOC_TRIES 10       /* the original's `for _ in range(10)` */
#define WORD_CACHE_MAX (1u << 15) /* words a reading thread remembers */
#define WORD_CACHE_LEN 64         /* longer words are not remembered */

void inst_opts_default(InstOpts *o) {
    memset(o, 0, sizeof *o);
    o->max_seq_length = 128;
    o->max_predictions = 20;
    o->masked_lm_prob = 0.15;
    o->short_seq_prob = 0.1;
    o->dupe_factor = 10;
    o->seed = 12345;
}

int inst_opts_check(const InstOpts *o, Err *err) {
    if (o->max_seq_length < 5 || o->max_seq_length > (1 << 24))
        return err_set(err, "max_seq_length %d: must be 5 .. %d", o->max_seq_length, 1 << 24);
    if (o->max_predictions < 0 || o->max_predictions > 65535)
        return err_set(err, "max_predictions_per_seq %d: must be 0 .. 65535", o->max_predictions);
    if (!(o->masked_lm_prob >= 0 && o->masked_lm_prob <= 1))
        return err_set(err, "masked_lm_prob %g: must be in [0, 1]", o->masked_lm_prob);
    if (!(o->short_seq_prob >= 0 && o->short_seq_prob <= 1))
        return err_set(err, "short_seq_prob %g: must be in [0, 1]", o->short_seq_prob);
    if (o->dupe_factor < 0) return err_set(err, "dupe_factor %d: must be >= 0", o->dupe_factor);
    return 0;
}

/* ---- Reading ---- */

/* Batches carry records [u32 input][u64 line][u64 len][bytes]; the result
 * per record is one int32: -1 for a blank line, else the token count n,
 * followed by the n ids. */

typedef struct RecHdr {
    uint32_t input;
    uint64_t line;
    uint64_t len;
} RecHdr;

/* A word in a reading thread's cache (open addressing, linear probing):
 * its bytes, zero-padded, when it has at most 16 (else its hash_bytes and
 * the offset of its bytes in keys), and its ids: in id[] when there are at
 * most two, else from offset id[0] in cids. One entry is 32 bytes, so a
 * lookup reads one cache line. */
typedef struct WordEnt {
    uint64_t k[2];
    uint32_t len; /* 0: a free slot */
    uint32_t n;
    int32_t id[2];
} WordEnt;

/* A reading thread's scratch and its word cache: the ids of each word
 * (bytes between ASCII blanks) it has tokenized. */
typedef struct ReadWorker {
    WpScratch sc;
    WpIds ids;
    WordEnt *tab; /* cap slots, a power of two; NULL until the first line */
    size_t cap, count;
    Buf cids; /* int32 ids of the cached words with more than two */
    Buf keys; /* bytes of the cached words longer than 16 */
    Buf line; /* the line being tokenized, with 16 zero bytes after it */
} ReadWorker;

typedef struct ReadCtx {
    const WordPiece *wp;
    const InstOpts *o;
    char **names;
    Reader rd;
    InstDocs *d;
    ReadWorker *workers;
    Err err;
    uint64_t lines;
    int32_t cls, sep; /* -2: the vocabulary has none */
    Buf tokout;       /* spilled: tokens not yet written */
} ReadCtx;

#define TOKOUT_BYTES (256u << 10) /* spilled tokens are written this many bytes at once */

enum { RC_BAD_UTF8 };

/* Python's `not line.strip()`: every code point is whitespace. Invalid
 * UTF-8 makes a line non-blank (it would not even decode there). */
static int is_blank(const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        if (p[i] < 0x80) {
            unsigned c = p[i];
            if (!(c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F))) return 0;
            i++;
            continue;
        }
        uint32_t cp;
        size_t l = utf8_decode(p + i, n - i, &cp);
        if (!l || !uni_is(cp, UNI_SPACE)) return 0;
        i += l;
    }
    return 1;
}

static void add_record(ReadCtx *c, Batch *b, const char *s, size_t n) {
    RecHdr h = {(uint32_t)(c->rd.cur < 0 ? 0 : c->rd.cur), c->rd.line, n};
    buf_append(&b->in, &h, sizeof h);
    buf_append(&b->in, s, n);
    b->nrec++;
    c->lines++;
}

/* Split one '\n'-terminated line further as Python's universal newlines do:
 * a '\r' before the '\n' belongs to it, every other '\r' ends a line. */
static int fill(void *ctx, Batch *b) {
    ReadCtx *c = ctx;
    const char *line;
    size_t len;
    int r = 0;
    while (b->in.len < BATCH_BYTES && b->nrec < BATCH_LINES &&
           (r = reader_next_line(&c->rd, &line, &len, &c->err)) == 1) {
        if (len && line[len - 1] == '\r') len--;
        const char *cr;
        while ((cr = memchr(line, '\r', len))) {
            add_record(c, b, line, (size_t)(cr - line));
            len -= (size_t)(cr - line) + 1;
            line = cr + 1;
        }
        add_record(c, b, line, len);
    }
    if (c->o->on_read) c->o->on_read(c->o->on_read_arg, c->rd.bytes, c->lines);
    if (r < 0) return -1;
    return b->nrec > 0;
}

/* The key of word s[0..n): its bytes (n <= 16; 16 bytes from s must be
 * readable), else its hash. */
static inline void word_key(const char *s, size_t n, uint64_t k[2]) {
    if (n > 16) {
        k[0] = hash_bytes(s, n), k[1] = 0;
        return;
    }
    uint64_t a, b;
    memcpy(&a, s, 8);
    memcpy(&b, s + 8, 8);
    if (n < 8)
        a &= (1ull << (8 * n)) - 1, b = 0;
    else if (n < 16)
        b &= (1ull << (8 * (n - 8))) - 1;
    k[0] = a, k[1] = b;
}

static inline size_t word_slot(const uint64_t k[2], size_t n, size_t cap) {
    uint64_t h = (k[0] ^ (k[1] * 0x9e3779b97f4a7c15ull + n)) * 0xbf58476d1ce4e5b9ull;
    return (size_t)(h ^ h >> 29) & (cap - 1);
}

/* A zeroed table of cap slots (written, not calloc'ed: see hash.c). */
static WordEnt *word_table(size_t cap) {
    WordEnt *t = aligned_alloc(64, cap * sizeof *t);
    if (!t) die("out of memory");
    memset(t, 0, cap * sizeof *t);
    return t;
}

static void word_grow(ReadWorker *w) {
    size_t cap = w->cap ? 2 * w->cap : 4096;
    WordEnt *t = word_table(cap);
    for (size_t i = 0; i < w->cap; i++) {
        const WordEnt *e = &w->tab[i];
        if (!e->len) continue;
        uint64_t k[2] = {e->k[0], e->len > 16 ? 0 : e->k[1]};
        size_t j = word_slot(k, e->len, cap);
        while (t[j].len)
            j = (j + 1) & (cap - 1);
        t[j] = *e;
    }
    free(w->tab);
    w->tab = t;
    w->cap = cap;
}

/* Append the ids of one word (no ' ' or '\t' in it; 16 bytes from s
 * readable) to w->ids, from the cache when it was seen before. Words with
 * invalid UTF-8 are never cached, so each occurrence is counted in
 * w->sc.bad_utf8. */
static void encode_word(const WordPiece *wp, ReadWorker *w, const char *s, size_t n) {
    if (n > WORD_CACHE_LEN) {
        wp_encode(wp, &w->sc, s, n, &w->ids);
        return;
    }
    uint64_t k[2];
    word_key(s, n, k);
    size_t i = word_slot(k, n, w->cap);
    for (;; i = (i + 1) & (w->cap - 1)) {
        const WordEnt *e = &w->tab[i];
        if (!e->len) break;
        if (e->len != n || e->k[0] != k[0]) continue;
        if (n <= 16 ? e->k[1] != k[1] : memcmp(w->keys.data + e->k[1], s, n) != 0) continue;
        if (w->ids.n + e->n > w->ids.cap) {
            w->ids.cap = 2 * (w->ids.n + e->n) + 256;
            w->ids.v = xrealloc(w->ids.v, w->ids.cap * sizeof *w->ids.v);
        }
        const int32_t *from = e->n <= 2 ? e->id : (const int32_t *)w->cids.data + e->id[0];
        for (uint32_t j = 0; j < e->n; j++)
            w->ids.v[w->ids.n++] = from[j];
        return;
    }
    size_t bad0 = w->sc.bad_utf8, n0 = w->ids.n;
    size_t nid = wp_encode(wp, &w->sc, s, n, &w->ids);
    if (w->sc.bad_utf8 != bad0 || nid > 0xffff || w->count >= WORD_CACHE_MAX) return;
    WordEnt e = {{k[0], k[1]}, (uint32_t)n, (uint32_t)nid, {0, 0}};
    if (n > 16) {
        e.k[1] = w->keys.len;
        buf_append(&w->keys, s, n);
    }
    if (nid <= 2) {
        memcpy(e.id, w->ids.v + n0, nid * sizeof *e.id);
    } else {
        e.id[0] = (int32_t)(w->cids.len / sizeof(int32_t));
        buf_append(&w->cids, w->ids.v + n0, nid * sizeof(int32_t));
    }
    if (2 * (w->count + 1) > w->cap) {
        word_grow(w);
        i = word_slot(k, n, w->cap);
        while (w->tab[i].len)
            i = (i + 1) & (w->cap - 1);
    }
    w->tab[i] = e;
    w->count++;
}

/* wp_encode of one line, appended to w->ids. basic_tokenize ends a token at
 * every ' ' and '\t' and carries nothing across, so the line's ids are
 * those of its blank-separated words one after another; lines repeat few
 * words, and looking a word up costs less than tokenizing it. */
static void encode_line(const WordPiece *wp, ReadWorker *w, const char *line, size_t n) {
    if (!w->tab) word_grow(w);
    buf_clear(&w->line);
    buf_append(&w->line, line, n);
    static const char zeros[16];
    buf_append(&w->line, zeros, sizeof zeros);
    const char *s = w->line.data;
    size_t i = 0;
    for (;;) {
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i == n) return;
        size_t j = i;
        while (j < n && s[j] != ' ' && s[j] != '\t')
            j++;
        encode_word(wp, w, s + i, j - i);
        i = j;
    }
}

static void work(void *ctx, int wid, Batch *b) {
    ReadCtx *c = ctx;
    ReadWorker *w = &c->workers[wid];
    const char *p = b->in.data, *end = b->in.data + b->in.len;
    int need_unk = wp_unk_id(c->wp) == WP_UNK_ABSENT;
    while (p < end && !b->failed) {
        RecHdr h;
        memcpy(&h, p, sizeof h);
        const char *s = p + sizeof h;
        p = s + h.len;
        int32_t n = -1;
        if (is_blank(s, h.len)) {
            buf_append(&b->out, &n, sizeof n);
            continue;
        }
        size_t bad0 = w->sc.bad_utf8;
        w->ids.n = 0;
        encode_line(c->wp, w, s, h.len);
        if (w->sc.bad_utf8 != bad0) {
            b->counts[RC_BAD_UTF8] += w->sc.bad_utf8 - bad0;
            if (c->o->strict) {
                err_set(&b->err, "%s:%llu: invalid UTF-8", c->names[h.input],
                        (unsigned long long)h.line);
                b->failed = 1;
            }
        }
        if (need_unk)
            for (size_t k = 0; k < w->ids.n && !b->failed; k++)
                if (w->ids.v[k] == WP_UNK_ABSENT) {
                    err_set(&b->err, "%s:%llu: the vocabulary has no [UNK] token",
                            c->names[h.input], (unsigned long long)h.line);
                    b->failed = 1;
                }
        if (w->ids.n > INT32_MAX) {
            err_set(&b->err, "%s:%llu: line too long", c->names[h.input],
                    (unsigned long long)h.line);
            b->failed = 1;
        }
        n = (int32_t)w->ids.n;
        buf_append(&b->out, &n, sizeof n);
        buf_append(&b->out, w->ids.v, w->ids.n * sizeof *w->ids.v);
    }
}

static void docs_close_doc(InstDocs *d) {
    if (d->nsent == d->doc[d->ndoc]) return; /* empty documents are dropped */
    if (d->ndoc + 2 > d->doccap) {
        d->doccap = d->doccap ? 2 * d->doccap : 1024;
        d->doc = xrealloc(d->doc, d->doccap * sizeof *d->doc);
    }
    d->doc[++d->ndoc] = d->nsent;
}

/* Note a sentence of n tokens, the last d->ntok took (see InstDocs). */
static void docs_add_sent(InstDocs *d, size_t n) {
    if (d->nsent == d->sentcap) {
        d->sentcap *= 2;
        d->slen = xrealloc(d->slen, d->sentcap);
        d->smark = xrealloc(d->smark, (d->sentcap / 16 + 1) * sizeof *d->smark);
    }
    if (n >= 255) {
        if (d->nlng == d->lngcap) {
            d->lngcap = d->lngcap ? 2 * d->lngcap : 64;
            d->lng = xrealloc(d->lng, d->lngcap * sizeof *d->lng);
        }
        d->lng[d->nlng][0] = (uint32_t)d->nsent;
        d->lng[d->nlng++][1] = (uint32_t)n;
    }
    d->slen[d->nsent++] = (uint8_t)(n < 255 ? n : 255);
    if (d->nsent % 16 == 0) d->smark[d->nsent / 16] = (uint32_t)d->ntok;
}

static int flush(void *ctx, Batch *b) {
    ReadCtx *c = ctx;
    InstDocs *d = c->d;
    if (b->failed) {
        c->err = b->err;
        return -1;
    }
    d->bad_utf8 += b->counts[RC_BAD_UTF8];
    const char *p = b->out.data, *end = b->out.data + b->out.len;
    while (p < end) {
        int32_t n;
        memcpy(&n, p, sizeof n);
        p += sizeof n;
        if (n < 0) {
            docs_close_doc(d);
            continue;
        }
        if (!n) continue; /* a line that tokenizes to nothing: no sentence, no boundary */
        if (d->ntok + (size_t)n > UINT32_MAX) {
            err_set(&c->err, "%s: more than %u tokens in one shard (split it into smaller shards)",
                    c->names[0], UINT32_MAX);
            return -1;
        }
        for (int32_t k = 0; k < n && !d->specials; k++) {
            int32_t id;
            memcpy(&id, p + (size_t)k * sizeof id, sizeof id);
            d->specials = id == c->cls || id == c->sep;
        }
        /* the sentence's tokens, tokbytes each: to the spill's buffer or the arrays */
        uint8_t *dst;
        if (c->o->spill) {
            buf_reserve(&c->tokout, (size_t)n * (size_t)d->tokbytes);
            dst = (uint8_t *)c->tokout.data + c->tokout.len;
            c->tokout.len += (size_t)n * (size_t)d->tokbytes;
        } else {
            if (d->ntok + (size_t)n > d->tokcap) {
                size_t cap = d->tokcap ? d->tokcap : 1 << 16;
                while (cap < d->ntok + (size_t)n)
                    cap *= 2;
                if (d->tok16)
                    d->tok16 = xrealloc(d->tok16, cap * sizeof *d->tok16);
                else
                    d->tok32 = xrealloc(d->tok32, cap * sizeof *d->tok32);
                d->tokcap = cap;
            }
            dst = d->tok16 ? (uint8_t *)(d->tok16 + d->ntok) : (uint8_t *)(d->tok32 + d->ntok);
        }
        for (int32_t k = 0; k < n; k++) {
            int32_t id;
            memcpy(&id, p + (size_t)k * sizeof id, sizeof id);
            put_id(dst, (size_t)k, d->tokbytes, id);
        }
        if (c->o->spill && c->tokout.len >= TOKOUT_BYTES) {
            spill_append(&d->tokf, c->tokout.data, c->tokout.len);
            buf_clear(&c->tokout);
        }
        p += (size_t)n * sizeof(int32_t);
        d->ntok += (size_t)n;
        docs_add_sent(d, (size_t)n);
    }
    return 0;
}

int inst_docs_read(InstDocs *d, const WordPiece *wp, char **paths, int n, const InstOpts *o,
                   Err *err) {
    memset(d, 0, sizeof *d);
    d->sentcap = 4096; /* a multiple of 16 */
    d->slen = xmalloc(d->sentcap);
    d->smark = xcalloc(d->sentcap / 16 + 1, sizeof *d->smark);
    d->doccap = 1024;
    d->doc = xcalloc(d->doccap, sizeof *d->doc);
    /* 16-bit ids where every id fits */
    d->tokbytes = wp_vocab_size(wp) <= 65536 ? 2 : 4;
    if (o->spill) {
        if (spill_open(&d->tokf, o->tmp_dir, o->tmp_label, err)) {
            inst_docs_free(d);
            return -1;
        }
    } else if (d->tokbytes == 2) {
        d->tok16 = xmalloc((size_t)(1 << 16) * sizeof *d->tok16);
    } else {
        d->tok32 = xmalloc((size_t)(1 << 16) * sizeof *d->tok32);
    }
    d->tokcap = 1 << 16;
    static char *stdin_name[] = {"-"};
    ReadCtx c = {.wp = wp, .o = o, .d = d, .names = n ? paths : stdin_name};
    c.cls = wp_token_id(wp, "[CLS]", 5);
    c.sep = wp_token_id(wp, "[SEP]", 5);
    if (c.cls < 0) c.cls = -2; /* never an id */
    if (c.sep < 0) c.sep = -2;
    int nthreads = o->threads < 1 ? 1 : o->threads > MAX_THREADS ? MAX_THREADS : o->threads;
    c.workers = xcalloc((size_t)nthreads, sizeof *c.workers);
    reader_init(&c.rd, paths, n);
    c.rd.nocache = o->nocache;
    PoolOps ops = {fill, work, flush};
    int rc = pool_run(nthreads, &ops, &c);
    if (rc == 0) docs_close_doc(d);
    if (o->spill) {
        if (rc == 0 && c.tokout.len) spill_append(&d->tokf, c.tokout.data, c.tokout.len);
        buf_free(&c.tokout);
        if (rc == 0 && spill_failed(&d->tokf, &c.err)) rc = -1;
    }
    d->lines = c.lines;
    d->bytes = c.rd.bytes;
    reader_free(&c.rd);
    for (int i = 0; i < nthreads; i++) {
        wp_scratch_free(&c.workers[i].sc);
        wp_ids_free(&c.workers[i].ids);
        free(c.workers[i].tab);
        buf_free(&c.workers[i].cids);
        buf_free(&c.workers[i].keys);
        buf_free(&c.workers[i].line);
    }
    free(c.workers);
    if (rc) {
        *err = c.err;
        inst_docs_free(d);
        return -1;
    }
    return 0;
}

void inst_docs_free(InstDocs *d) {
    spill_close(&d->tokf);
    free(d->tok16);
    free(d->tok32);
    free(d->slen);
    free(d->smark);
    free(d->lng);
    free(d->doc);
    memset(d, 0, sizeof *d);
}

/* ---- Building ---- */

/* What masking needs, shared by all threads. */
typedef struct MaskCtx {
    const InstOpts *o;
    const int32_t *vocab_words; /* ids of the distinct tokens, first-occurrence order */
    size_t nvocab_words;
    const uint8_t *cont; /* per id: the token starts with "##" (whole_word) */
    const InstDocs *docs;
    int32_t cls, sep, mask;
    int plain; /* not whole_word, and no sentence token is [CLS] or [SEP]:
                  the candidates are all positions but the special ones */
} MaskCtx;

/* A window of spilled tokens: tokens w0 .. w0 + wn, read together. */
typedef struct TokWin {
    uint8_t *buf; /* TOKWIN tokens of the documents' tokbytes */
    uint64_t w0;
    size_t wn;
} TokWin;

#define TOKWIN 8192 /* tokens a window reads at once (16 KB of 16-bit ids) */

/* One thread's masking scratch, max_seq_length (+ 1) entries each. */
typedef struct Masker {
    TokWin win;   /* spilled documents: the tokens near the last ones read */
    Buf rec;      /* spilled: a block's records being written */
    int32_t *tok; /* the instance being masked */
    int32_t *cand;
    int32_t *group; /* whole_word: group g is cand[group[g] .. group[g + 1]) */
    int32_t *gorder;
    uint8_t *masked; /* position is masked: 1 + its kind (MK_*) */
    uint64_t *bits;  /* mask_plain: the masked positions, as bits */
} Masker;

/* A block waiting for its masking: the generator before the block's first
 * masking draw, and where in the stream each instance's masking starts. */
typedef struct Replay {
    size_t count;
    PyRandom snap;
    uint64_t rpos[INST_BLOCK];
} Replay;

/* A random next segment to read: tokens b .. b + nb of instance idx. */
typedef struct BReq {
    uint32_t b, nb, idx;
} BReq;

/* The random next segments' requests of a spilled set go to buckets by
 * where they lie (bucket k: first token in [k * width, (k + 1) * width)),
 * whatever their number; spill_random_b reads a bucket at a time. */
typedef struct ReqBuckets {
    uint64_t width; /* tokens per bucket */
    SpillBuckets sb;
} ReqBuckets;

typedef struct Builder {
    const InstDocs *docs;
    const InstOpts *o;
    InstSet *s;
    MaskCtx mc;
    Masker m;        /* inline_mask: masking happens during the draws */
    int inline_mask; /* whole_word (group sizes decide the draws) or one thread */
    PyRandom rng;
    size_t *perm; /* all_documents[k] is document perm[k] */
    int max_num_tokens;
    int specials_in_text; /* some sentence token is [CLS] or [SEP] */
    int replay;           /* masking is drawn past and replayed (not whole_word, not no_mask) */
    /* the block being filled */
    Replay *cur;
    uint32_t bmask;                /* its masked positions so far */
    Buf wbytes;                    /* inline_mask: its masks, coded, until the block is done */
    uint32_t woff[INST_BLOCK + 1]; /* inline_mask: each instance's first byte in wbytes */
    /* handing blocks to the masking threads; s->blk (which grows) and
     * rep are read by them under `lock` only */
    pthread_mutex_t lock;
    pthread_cond_t ready;
    Replay **rep;     /* per block, until claimed */
    size_t published; /* blocks done drawing */
    size_t claimed;   /* blocks taken for masking */
    int finished;     /* no more blocks */
    int bad;          /* a replay disagreed with the draws */
    int too_many;     /* too many instances for 32-bit row indices */
    size_t ahead;     /* replay: blocks that may wait for their masking */
    Buf rscratch;     /* replay: the drawing thread's masks of a block it masks */
    int32_t *spec;    /* count_specials' scratch (max_seq_length ids) */
    ReqBuckets rq;    /* spilled: the random next segments to read, under lock */
} Builder;

static void masker_init(Masker *m, size_t L) {
    memset(m, 0, sizeof *m);
    m->tok = xmalloc(L * sizeof *m->tok);
    m->cand = xmalloc(L * sizeof *m->cand);
    m->group = xmalloc((L + 1) * sizeof *m->group);
    m->gorder = xmalloc(L * sizeof *m->gorder);
    m->masked = xcalloc(L, 1);
    m->bits = xcalloc((L + 63) / 64, sizeof *m->bits);
}

static void masker_free(Masker *m) {
    free(m->win.buf);
    buf_free(&m->rec);
    free(m->tok), free(m->cand), free(m->group), free(m->gorder), free(m->masked), free(m->bits);
    memset(m, 0, sizeof *m);
}

/* Start block s->nblk (the next instance is its first). */
static void block_start(Builder *B) {
    InstSet *s = B->s;
    if (s->nblk == s->blkcap) { /* the masking threads may be reading the table */
        size_t cap = s->blkcap ? 2 * s->blkcap : 64;
        pthread_mutex_lock(&B->lock);
        s->blk = xrealloc(s->blk, cap * sizeof *s->blk);
        if (B->replay) B->rep = xrealloc(B->rep, cap * sizeof *B->rep);
        s->blkcap = cap;
        pthread_mutex_unlock(&B->lock);
    }
    s->blk[s->nblk] = (InstBlock){.inst = xmalloc(INST_BLOCK * sizeof(Inst))};
    if (B->replay) {
        B->cur = xmalloc(sizeof *B->cur);
        B->cur->snap = B->rng;
        B->cur->count = 0;
    }
    B->bmask = 0;
    buf_clear(&B->wbytes);
    B->woff[0] = 0;
    s->nblk++;
}

static int replay_next(Builder *B, Masker *m, Buf *scratch, int wait);
static void docs_raw(const InstDocs *d, TokWin *w, uint64_t at, size_t n, uint8_t *out, int seq);

/* ---- Spilled ----
 *
 * A spilled set writes each block, once masked, to s->instf as one record
 * per instance (the records: instrec.h), in the order the blocks are done
 * (any), and frees it. A's tokens are read through the thread's window,
 * and so are B's where B is the actual next segment. A random next
 * segment lies anywhere in the shard: reading each alone would cost a
 * system call per instance (a fifth of the CPU time), so its record
 * leaves B's tokens out and the range is noted (12 bytes); after the
 * draws the ranges are sorted and read in one pass over the token file,
 * each written as a record of its own. */

#define REC_FLUSH (64u << 10)    /* records are written this many bytes at once */
#define SWEEP_BYTES (256u << 10) /* the random segments' pass reads this much at once */

#define RQ_BUF (16u << 10)           /* a bucket's buffer of requests */
#define RQ_WIDTH (UINT64_C(1) << 20) /* tokens a bucket covers, at least */
#define RQ_MAXK 4096                 /* buckets, at most */

/* Buckets for the requests of a token file of ntok tokens, in a
 * temporary file in dir: 0, or -1 with err set. */
static int rq_open(ReqBuckets *q, uint64_t ntok, const char *dir, const char *label, Err *err) {
    q->width = RQ_WIDTH;
    if (ntok / q->width >= RQ_MAXK) q->width = ntok / RQ_MAXK + 1;
    return spill_buckets_open(&q->sb, (size_t)(ntok / q->width) + 1, sizeof(BReq), RQ_BUF, dir,
                              label, err);
}

/* Note n requests (the caller holds the builder's lock). */
static void rq_add(ReqBuckets *q, const BReq *r, size_t n) {
    for (size_t i = 0; i < n; i++)
        spill_buckets_add(&q->sb, (size_t)(r[i].b / q->width), &r[i]);
}

static void block_spill(Builder *B, size_t g, const Inst *inst, const uint32_t *moff,
                        const uint8_t *mbytes, size_t count, Masker *m) {
    const InstDocs *D = B->docs;
    size_t tb = (size_t)D->tokbytes;
    Buf *r = &m->rec;
    buf_clear(r);
    BReq req[INST_BLOCK];
    size_t nreq = 0;
    for (size_t k = 0; k < count; k++) {
        const Inst *in = &inst[k];
        uint32_t idx = (uint32_t)(g * INST_BLOCK + k);
        uint32_t ml = moff ? moff[k + 1] - moff[k] : 0;
        size_t nb = in->has_b ? in->nb : 0;
        if (rec_defers_b(in)) {
            req[nreq++] = (BReq){in->b, (uint32_t)nb, idx};
            nb = 0;
        }
        size_t need = REC_HEAD + ml + (in->na + nb) * tb;
        buf_reserve(r, need);
        uint8_t *p = (uint8_t *)r->data + r->len;
        memcpy(p, &idx, 4);
        memcpy(p + 4, in, sizeof *in);
        memcpy(p + 4 + sizeof *in, &ml, 4);
        p += REC_HEAD;
        if (ml) memcpy(p, mbytes + moff[k], ml);
        p += ml;
        docs_raw(D, &m->win, in->a, in->na, p, 1);
        p += in->na * tb;
        if (nb) docs_raw(D, &m->win, in->b, nb, p, !in->next);
        r->len += need;
        if (r->len >= REC_FLUSH) {
            spill_append(&B->s->instf, r->data, r->len);
            buf_clear(r);
        }
    }
    if (r->len) spill_append(&B->s->instf, r->data, r->len);
    buf_clear(r);
    if (nreq) {
        pthread_mutex_lock(&B->lock);
        rq_add(&B->rq, req, nreq);
        pthread_mutex_unlock(&B->lock);
    }
}

static int breq_cmp(const void *x, const void *y) {
    const BReq *a = x, *b = y;
    return a->b < b->b ? -1 : a->b > b->b ? 1 : (a->idx > b->idx) - (a->idx < b->idx);
}

/* The random next segments noted by block_spill, bucket by bucket (its
 * blocks read back and sorted: the order of their place in the token
 * file, then of the instance), read in windows of SWEEP_BYTES, each read
 * once, and appended to the instance file as records of their own. */
static void spill_random_b(Builder *B) {
    const InstDocs *D = B->docs;
    SpillBuckets *q = &B->rq.sb;
    size_t tb = (size_t)D->tokbytes;
    TokWin w = {xmalloc(SWEEP_BYTES), 0, 0};
    size_t wtok = SWEEP_BYTES / tb;
    Buf out = {0}, all = {0};
    for (size_t k = 0; k < q->k; k++) {
        if (spill_buckets_read(q, k, &all)) break;
        size_t nreq = all.len / sizeof(BReq);
        BReq *req = (BReq *)(void *)all.data;
        if (!nreq) continue;
        qsort(req, nreq, sizeof *req, breq_cmp);
        for (size_t i = 0; i < nreq; i++) {
            const BReq *r = &req[i];
            buf_reserve(&out, BREC_HEAD + r->nb * tb);
            uint8_t *p = (uint8_t *)out.data + out.len;
            uint32_t h[2] = {r->idx | REC_B, r->nb};
            memcpy(p, h, 8);
            if (r->b < w.w0 || r->b + r->nb > w.w0 + w.wn) {
                if (r->nb > wtok / 2) { /* a long segment: read alone */
                    spill_pread((Spill *)&D->tokf, p + 8, r->nb * tb, (uint64_t)r->b * tb);
                    goto next;
                }
                w.w0 = r->b;
                w.wn = D->ntok - r->b < wtok ? (size_t)(D->ntok - r->b) : wtok;
                if (spill_pread((Spill *)&D->tokf, w.buf, w.wn * tb, w.w0 * tb)) w.wn = 0;
            }
            memcpy(p + 8, w.buf + (r->b - w.w0) * tb, r->nb * tb);
        next:
            out.len += BREC_HEAD + r->nb * tb;
            if (out.len >= REC_FLUSH) {
                spill_append(&B->s->instf, out.data, out.len);
                buf_clear(&out);
            }
        }
    }
    if (out.len) spill_append(&B->s->instf, out.data, out.len);
    buf_free(&out), buf_free(&all);
    free(w.buf);
}

/* Finish the last block: its masks get their final arrays (filled here
 * for inline_mask, by the masking threads after this for replay), and it is
 * handed over. */
static void block_end(Builder *B) {
    InstSet *s = B->s;
    InstBlock *bk = &s->blk[s->nblk - 1];
    size_t count = s->n - (s->nblk - 1) * (size_t)INST_BLOCK;
    bk->moff = xcalloc(count + 1, sizeof *bk->moff);
    if (B->s->spilled && !B->replay) { /* masked (or not masked at all): written out now */
        if (B->inline_mask) memcpy(bk->moff, B->woff, (count + 1) * sizeof *bk->moff);
        block_spill(B, s->nblk - 1, bk->inst, bk->moff, (const uint8_t *)B->wbytes.data, count,
                    &B->m);
        free(bk->inst), free(bk->moff);
        *bk = (InstBlock){0};
        return;
    }
    if (B->inline_mask) {
        memcpy(bk->moff, B->woff, (count + 1) * sizeof *bk->moff);
        bk->mbytes = xmalloc(B->wbytes.len ? B->wbytes.len : 1);
        memcpy(bk->mbytes, B->wbytes.data, B->wbytes.len);
    } else if (!B->replay) {
        bk->mbytes = xmalloc(1); /* no masks: every offset 0 */
    }
    if (!B->replay) return;
    pthread_mutex_lock(&B->lock);
    B->rep[s->nblk - 1] = B->cur;
    B->published = s->nblk;
    pthread_cond_signal(&B->ready);
    int behind = B->published - B->claimed > B->ahead;
    pthread_mutex_unlock(&B->lock);
    B->cur = NULL;
    /* the masking threads are behind: the oldest waiting blocks are masked
     * here, so that the waiting ones (and their Replay records) stay few */
    while (behind && replay_next(B, &B->m, &B->rscratch, 0)) {
        pthread_mutex_lock(&B->lock);
        behind = B->published - B->claimed > B->ahead;
        pthread_mutex_unlock(&B->lock);
    }
}

/* Tokens at .. at + n of d, as stored (tokbytes each), into out: from
 * memory, or for spilled documents from the window w (refilled from `at`
 * when the range is outside it) when `seq` (the next ranges read are
 * likely near this one), else with a read of the range alone. */
static void docs_raw(const InstDocs *d, TokWin *w, uint64_t at, size_t n, uint8_t *out, int seq) {
    size_t tb = (size_t)d->tokbytes;
    if (!d->tokf.open) {
        memcpy(out, d->tok16 ? (const uint8_t *)(d->tok16 + at) : (const uint8_t *)(d->tok32 + at),
               n * tb);
        return;
    }
    if (at >= w->w0 && at + n <= w->w0 + w->wn) {
        memcpy(out, w->buf + (at - w->w0) * tb, n * tb);
        return;
    }
    if (!seq || n > TOKWIN / 4) {
        spill_pread((Spill *)&d->tokf, out, n * tb, at * tb);
        return;
    }
    if (!w->buf) w->buf = xmalloc(TOKWIN * tb);
    w->w0 = at;
    w->wn = d->ntok - at < TOKWIN ? (size_t)(d->ntok - at) : TOKWIN;
    if (spill_pread((Spill *)&d->tokf, w->buf, w->wn * tb, at * tb)) w->wn = 0;
    memcpy(out, w->buf, n * tb);
}

/* Widen n ids of tb bytes each at `raw` into t (raw may be t itself). */
static void widen(const uint8_t *raw, int tb, size_t n, int32_t *t) {
    if (tb == 4) {
        if ((const void *)raw != (void *)t) memmove(t, raw, n * 4);
        return;
    }
    for (size_t i = n; i-- > 0;) { /* backwards: raw may be t */
        uint16_t v;
        memcpy(&v, raw + 2 * i, 2);
        t[i] = v;
    }
}

/* Tokens at .. at + n of d into t (w: spilled documents' window). */
static void docs_copy(const InstDocs *d, TokWin *w, size_t at, size_t n, int32_t *t) {
    if (d->tokf.open) {
        docs_raw(d, w, at, n, (uint8_t *)t, 1);
        widen((const uint8_t *)t, d->tokbytes, n, t);
    } else if (d->tok16) {
        const uint16_t *f = d->tok16 + at;
        size_t i = 0;
#if defined(__SSE2__)
        const __m128i zero = _mm_setzero_si128();
        for (; i + 8 <= n; i += 8) {
            __m128i v = _mm_loadu_si128((const __m128i *)(f + i));
            _mm_storeu_si128((__m128i *)(t + i), _mm_unpacklo_epi16(v, zero));
            _mm_storeu_si128((__m128i *)(t + i + 4), _mm_unpackhi_epi16(v, zero));
        }
#endif
        for (; i < n; i++)
            t[i] = f[i];
    } else {
        memcpy(t, d->tok32 + at, n * sizeof *t);
    }
}

/* The unmasked tokens of an instance into t; returns the length. */
static size_t inst_tokens(const InstSet *s, const Inst *in, int32_t *t, TokWin *w) {
    size_t len = inst_len(in);
    t[0] = s->cls;
    docs_copy(s->docs, w, in->a, in->na, t + 1);
    t[in->na + 1] = s->sep;
    if (in->has_b) {
        docs_copy(s->docs, w, in->b, in->nb, t + in->na + 2);
        t[len - 1] = s->sep;
    }
    return len;
}

/* The mask code (instances.h) of the masked position pos, after the one at
 * *prev, of kind `kind` (a random id: id), at *p, which it advances (at
 * most 11 bytes). */
static inline uint8_t *put_mask(uint8_t *p, uint32_t *prev, uint32_t pos, unsigned kind,
                                int32_t id) {
    uint32_t d = pos - *prev - 1;
    *prev = pos;
    *p++ = (uint8_t)((d < 63 ? d : 63) << 2 | kind);
    if (__builtin_expect(d >= 63, 0)) {
        for (d -= 63; d >= 0x80; d >>= 7)
            *p++ = (uint8_t)(d | 0x80);
        *p++ = (uint8_t)d;
    }
    if (kind == MK_RANDOM) {
        uint32_t v = (uint32_t)id;
        for (; v >= 0x80; v >>= 7)
            *p++ = (uint8_t)(v | 0x80);
        *p++ = (uint8_t)v;
    }
    return p;
}

/* One masked token (the body of the original's loop): tok[pos] becomes
 * [MASK] (80 %), stays (10 %) or becomes a random vocabulary word (10 %). */
static void mask_one(const MaskCtx *c, Masker *m, PyRandom *rng, int32_t *tok, int32_t pos) {
    if (pyrandom_random(rng) < 0.8) {
        tok[pos] = c->mask;
        m->masked[pos] = 1 + MK_MASK;
    } else if (pyrandom_random(rng) < 0.5) {
        m->masked[pos] = 1 + MK_KEEP; /* keep the original */
    } else {
        tok[pos] = c->vocab_words[pyrandom_below(rng, c->nvocab_words)];
        m->masked[pos] = 1 + MK_RANDOM;
    }
}

/* create_masked_lm_predictions on tok[0..len) in place (tok is scratch);
 * appends the masks in increasing position to out, coded, and returns
 * their number. */
static size_t mask_instance(const MaskCtx *c, Masker *m, PyRandom *rng, int32_t *tok, size_t len,
                            Buf *out) {
    const InstOpts *o = c->o;
    size_t ncand = 0, ngroup = 0;
    for (size_t i = 0; i < len; i++) {
        if (tok[i] == c->cls || tok[i] == c->sep) continue;
        if (o->whole_word && !(ncand && c->cont[tok[i]])) m->group[ngroup++] = (int32_t)ncand;
        m->cand[ncand++] = (int32_t)i;
    }
    size_t num = mlm_num_to_predict(len, o->masked_lm_prob, o->max_predictions);
    size_t nm = 0;
    if (!o->whole_word) {
        pyrandom_shuffle_i32(rng, m->cand, ncand);
        for (size_t k = 0; k < ncand && nm < num; k++, nm++)
            mask_one(c, m, rng, tok, m->cand[k]);
    } else {
        m->group[ngroup] = (int32_t)ncand;
        for (size_t g = 0; g < ngroup; g++)
            m->gorder[g] = (int32_t)g;
        pyrandom_shuffle_i32(rng, m->gorder, ngroup);
        for (size_t k = 0; k < ngroup && nm < num; k++) {
            int32_t g = m->gorder[k];
            size_t gl = (size_t)(m->group[g + 1] - m->group[g]);
            if (nm + gl > num) continue; /* the whole word would not fit */
            for (int32_t j = m->group[g]; j < m->group[g + 1]; j++, nm++)
                mask_one(c, m, rng, tok, m->cand[j]);
        }
    }
    /* positions in increasing order (the original sorts its records) */
    buf_reserve(out, nm * 11);
    uint8_t *p = (uint8_t *)out->data + out->len;
    uint32_t prev = 0;
    size_t found = 0;
    for (size_t i = 0; found < nm; i++)
        if (m->masked[i]) {
            p = put_mask(p, &prev, (uint32_t)i, m->masked[i] - 1u, tok[i]);
            m->masked[i] = 0;
            found++;
        }
    out->len = (size_t)(p - (uint8_t *)out->data);
    return nm;
}

/* mask_instance for a plain MaskCtx, without the instance's tokens: the
 * candidates are positions 1 .. na and na + 2 .. na + nb + 1 in order, and
 * a kept token is only coded as kept. m->tok holds the random ids by
 * position meanwhile, m->masked the kinds and m->bits the positions, which
 * come out in increasing order. */
static size_t mask_plain(const MaskCtx *c, Masker *m, PyRandom *rng, const Inst *in, size_t num,
                         Buf *out) {
    size_t na = in->na, nb = in->has_b ? in->nb : 0, ncand = na + nb;
    int32_t *cand = m->cand, *val = m->tok;
    for (size_t i = 0; i < na; i++)
        cand[i] = (int32_t)(i + 1);
    for (size_t i = 0; i < nb; i++)
        cand[na + i] = (int32_t)(na + 2 + i);
    pyrandom_shuffle_i32(rng, cand, ncand);
    size_t nm = ncand < num ? ncand : num;
    for (size_t k = 0; k < nm; k++) {
        size_t p = (size_t)cand[k];
        m->bits[p >> 6] |= 1ull << (p & 63);
        if (pyrandom_random(rng) < 0.8) {
            m->masked[p] = MK_MASK;
        } else if (pyrandom_random(rng) < 0.5) {
            m->masked[p] = MK_KEEP; /* the document's token stays */
        } else {
            val[p] = c->vocab_words[pyrandom_below(rng, c->nvocab_words)];
            m->masked[p] = MK_RANDOM;
        }
    }
    buf_reserve(out, nm * 11);
    uint8_t *o = (uint8_t *)out->data + out->len;
    uint32_t prev = 0;
    size_t found = 0;
    for (size_t w = 0; found < nm; w++) {
        uint64_t x = m->bits[w];
        m->bits[w] = 0;
        for (; x; x &= x - 1) {
            size_t p = w * 64 + (size_t)__builtin_ctzll(x);
            o = put_mask(o, &prev, (uint32_t)p, m->masked[p], val[p]);
            m->masked[p] = 0;
            found++;
        }
    }
    out->len = (size_t)(o - (uint8_t *)out->data);
    return nm;
}

/* Mask one instance of s (create_masked_lm_predictions) with rng, num its
 * num_to_predict: the masks appended to out, coded; returns their number. */
static size_t mask_inst(const MaskCtx *c, Masker *m, PyRandom *rng, const InstSet *s,
                        const Inst *in, size_t num, Buf *out) {
    if (c->plain) return mask_plain(c, m, rng, in, num, out);
    size_t len = inst_tokens(s, in, m->tok, &m->win);
    return mask_instance(c, m, rng, m->tok, len, out);
}

/* The draws mask_instance makes without whole_word, for an instance with
 * ncand candidates and num_to_predict num, without the masking: the shuffle
 * and the 80/10/10 choices depend on the counts only. */
static size_t skip_masking(Builder *B, size_t ncand, size_t num) {
    PyRandom *r = &B->rng;
    pyrandom_shuffle_draws(r, ncand);
    size_t nm = ncand < num ? ncand : num;
    for (size_t k = 0; k < nm; k++)
        if (pyrandom_random(r) >= 0.8 && pyrandom_random(r) >= 0.5)
            pyrandom_below(r, B->mc.nvocab_words);
    return nm;
}

static size_t count_specials(Builder *B, uint64_t at, size_t n) {
    size_t k = 0;
    int32_t *t = B->spec;
    docs_copy(B->docs, &B->m.win, at, n, t);
    for (size_t i = 0; i < n; i++)
        k += (t[i] == B->mc.cls) | (t[i] == B->mc.sep);
    return k;
}

/* Record [CLS] A [SEP] B [SEP] (no B and one [SEP] when has_b is 0) and
 * make its masking draws: masked here with inline_mask, else only drawn
 * past (skip_masking) with the generator position kept for the replay. */
static void emit(Builder *B, uint64_t a, size_t na, uint64_t b, size_t nb, int has_b, int next) {
    InstSet *s = B->s;
    const InstOpts *o = B->o;
    size_t len = na + (has_b ? nb + 3 : 2);
    size_t num = o->no_mask ? 0 : mlm_num_to_predict(len, o->masked_lm_prob, o->max_predictions);
    size_t k = s->n % INST_BLOCK;
    if (k == 0) block_start(B);
    Inst *in = &s->blk[s->nblk - 1].inst[k];
    *in = (Inst){.a = (uint32_t)a,
                 .b = (uint32_t)b,
                 .na = (uint32_t)na,
                 .nb = (uint32_t)nb,
                 .has_b = (uint32_t)has_b,
                 .next = (int8_t)next};
    if (o->no_mask) {
    } else if (B->inline_mask) {
        in->nmask = (uint16_t)mask_inst(&B->mc, &B->m, &B->rng, s, in, num, &B->wbytes);
        if (B->wbytes.len > UINT32_MAX) die("out of memory (masks of one block past 4 GB)");
    } else {
        B->cur->rpos[k] = pyrandom_tell(&B->rng);
        B->cur->count = k + 1;
        size_t ncand = len - (has_b ? 3 : 2);
        if (B->specials_in_text)
            ncand -= count_specials(B, a, na) + (has_b ? count_specials(B, b, nb) : 0);
        in->nmask = (uint16_t)skip_masking(B, ncand, num);
    }
    B->bmask += in->nmask;
    B->woff[k + 1] = (uint32_t)B->wbytes.len;
    s->n++;
    if (s->n % INST_BLOCK == 0) block_end(B);
    s->st.instances++;
    s->st.tokens += len;
    s->st.masked += in->nmask;
    s->st.random_next += (uint64_t)next;
}

/* truncate_seq_pair on the ranges [*alo, *ahi) and [*blo, *bhi): trim the
 * longer one (B on ties) at a random end until the total fits. */
static void truncate_pair(Builder *B, size_t *alo, size_t *ahi, size_t *blo, size_t *bhi,
                          size_t max) {
    for (;;) {
        size_t na = *ahi - *alo, nb = *bhi - *blo;
        if (na + nb <= max) return;
        size_t *lo = na > nb ? alo : blo, *hi = na > nb ? ahi : bhi;
        if (pyrandom_random(&B->rng) < 0.5)
            ++*lo;
        else
            --*hi;
        B->s->st.truncated++;
    }
}

/* create_instances_from_document(all_documents, k, ...). */
static void from_document(Builder *B, size_t k) {
    const InstDocs *D = B->docs;
    size_t doc = B->perm[k];
    size_t first = D->doc[doc], ns = D->doc[doc + 1] - first;
    size_t max_num = (size_t)B->max_num_tokens;
    size_t target = max_num;
    if (pyrandom_random(&B->rng) < B->o->short_seq_prob)
        target = (size_t)pyrandom_randint(&B->rng, 2, (int64_t)max_num);

    size_t chunk0 = 0, nchunk = 0, chunk_len = 0;
    for (size_t i = 0; i < ns; i++) {
        if (!nchunk) chunk0 = i;
        nchunk++;
        chunk_len += inst_docs_sent_len(D, first + i);
        if (!(i == ns - 1 || chunk_len >= target)) continue;

        if (B->o->no_nsp) {
            size_t alo = inst_docs_sent(D, first + chunk0),
                   ahi = inst_docs_sent(D, first + chunk0 + nchunk), blo = 0, bhi = 0;
            truncate_pair(B, &alo, &ahi, &blo, &bhi, max_num);
            emit(B, alo, ahi - alo, 0, 0, 0, 0);
            nchunk = chunk_len = 0;
            continue;
        }
        size_t a_end = 1;
        if (nchunk >= 2) a_end = (size_t)pyrandom_randint(&B->rng, 1, (int64_t)nchunk - 1);
        size_t alo = inst_docs_sent(D, first + chunk0),
               ahi = inst_docs_sent(D, first + chunk0 + a_end);
        size_t blo, bhi;
        int next;
        if (nchunk == 1 || pyrandom_random(&B->rng) < 0.5) {
            next = 1;
            long target_b = (long)target - (long)(ahi - alo);
            size_t r = 0, ndoc = D->ndoc;
            for (int t = 0; t < RANDOM_DOC_TRIES; t++) {
                r = (size_t)pyrandom_below(&B->rng, ndoc);
                if (r != k) break;
            }
            if (r == k) { /* NVIDIA's addition: not a random pair after all */
                next = 0;
                B->s->st.same_doc++;
            }
            size_t rdoc = B->perm[r], rfirst = D->doc[rdoc], rns = D->doc[rdoc + 1] - rfirst;
            size_t j = (size_t)pyrandom_below(&B->rng, rns);
            blo = bhi = inst_docs_sent(D, rfirst + j);
            for (; j < rns; j++) { /* whole sentences until target_b, or the document's end */
                bhi += inst_docs_sent_len(D, rfirst + j);
                if ((long)(bhi - blo) >= target_b) break;
            }
            i -= nchunk - a_end; /* put the unused sentences back */
        } else {
            next = 0;
            blo = ahi;
            bhi = inst_docs_sent(D, first + chunk0 + nchunk);
        }
        truncate_pair(B, &alo, &ahi, &blo, &bhi, max_num);
        emit(B, alo, ahi - alo, blo, bhi - blo, 1, next);
        nchunk = chunk_len = 0;
    }
}

/* Mask block g by replaying the stream from its snapshot; its masks go to
 * bk->moff and, coded in `scratch`, to the block's mbytes. */
static void replay_block(Builder *B, size_t g, const InstBlock *bk, const Replay *rp, Masker *m,
                         Buf *scratch) {
    PyRandom r = rp->snap;
    buf_clear(scratch);
    bk->moff[0] = 0;
    for (size_t k = 0; k < rp->count; k++) {
        const Inst *in = &bk->inst[k];
        pyrandom_skip(&r, rp->rpos[k] - pyrandom_tell(&r));
        size_t num = mlm_num_to_predict(inst_len(in), B->o->masked_lm_prob, B->o->max_predictions);
        size_t nm = mask_inst(&B->mc, m, &r, B->s, in, num, scratch);
        bk->moff[k + 1] = (uint32_t)scratch->len;
        if (nm != in->nmask || scratch->len > UINT32_MAX) {
#pragma omp atomic write
            B->bad = 1;
        }
    }
    if (B->s->spilled) {
        block_spill(B, g, bk->inst, bk->moff, (const uint8_t *)scratch->data, rp->count, m);
        free(bk->inst), free(bk->moff);
        pthread_mutex_lock(&B->lock);
        B->s->blk[g] = (InstBlock){0};
        pthread_mutex_unlock(&B->lock);
        return;
    }
    uint8_t *bytes = xmalloc(scratch->len ? scratch->len : 1);
    memcpy(bytes, scratch->data, scratch->len);
    pthread_mutex_lock(&B->lock); /* s->blk may be moved by block_start meanwhile */
    B->s->blk[g].mbytes = bytes;
    pthread_mutex_unlock(&B->lock);
}

/* Claim the oldest published block not yet claimed and mask it; with
 * wait, wait for one until the draws are finished. Returns 0 when there is
 * none (any more). */
static int replay_next(Builder *B, Masker *m, Buf *scratch, int wait) {
    pthread_mutex_lock(&B->lock);
    while (wait && B->claimed >= B->published && !B->finished)
        pthread_cond_wait(&B->ready, &B->lock);
    if (B->claimed >= B->published) {
        pthread_mutex_unlock(&B->lock);
        return 0;
    }
    size_t g = B->claimed++;
    InstBlock bk = B->s->blk[g];
    Replay *rp = B->rep[g];
    B->rep[g] = NULL;
    pthread_mutex_unlock(&B->lock);
    replay_block(B, g, &bk, rp, m, scratch);
    free(rp);
    return 1;
}

/* Mask blocks as they are published until there are no more. */
static void replay_loop(Builder *B) {
    Masker m;
    Buf scratch = {0};
    masker_init(&m, (size_t)B->o->max_seq_length);
    while (replay_next(B, &m, &scratch, 1))
        ;
    masker_free(&m);
    buf_free(&scratch);
}

/* Every draw in the original's order, blocks published as they fill; then
 * the final shuffle of the rows. */
static void draw_all(Builder *B) {
    const InstDocs *docs = B->docs;
    InstSet *s = B->s;
    B->perm = xmalloc((docs->ndoc ? docs->ndoc : 1) * sizeof *B->perm);
    for (size_t k = 0; k < docs->ndoc; k++)
        B->perm[k] = k;
    pyrandom_shuffle(&B->rng, B->perm, docs->ndoc, sizeof *B->perm);

    for (int dup = 0; dup < B->o->dupe_factor && !B->too_many; dup++)
        for (size_t k = 0; k < docs->ndoc && !B->too_many; k++) {
            from_document(B, k);
            /* 32-bit row indices; a document gives fewer than 2^31 instances */
            if (s->n >= UINT32_MAX - (UINT32_C(1) << 31)) B->too_many = 1;
        }
    if (s->n % INST_BLOCK) block_end(B);
    pthread_mutex_lock(&B->lock);
    B->finished = 1;
    pthread_cond_broadcast(&B->ready);
    pthread_mutex_unlock(&B->lock);

    if (B->too_many) return;
    s->order = xmalloc((s->n ? s->n : 1) * sizeof *s->order);
    for (size_t r = 0; r < s->n; r++)
        s->order[r] = (uint32_t)r;
    pyrandom_shuffle(&B->rng, s->order, s->n, sizeof *s->order);
}

static int special_id(const WordPiece *wp, const char *name, int32_t *id, Err *err) {
    *id = wp_token_id(wp, name, strlen(name));
    if (*id < 0) return err_set(err, "the vocabulary has no %s token", name);
    return 0;
}

int inst_build(InstSet *s, const InstDocs *docs, const WordPiece *wp, const InstOpts *o, Err *err) {
    memset(s, 0, sizeof *s);
    if (inst_opts_check(o, err)) return -1;
    Builder B = {.docs = docs, .o = o, .s = s};
    MaskCtx *mc = &B.mc;
    mc->o = o;
    if (special_id(wp, "[CLS]", &mc->cls, err) || special_id(wp, "[SEP]", &mc->sep, err)) return -1;
    if (!o->no_mask && special_id(wp, "[MASK]", &mc->mask, err)) return -1;
    s->docs = docs;
    s->cls = mc->cls;
    s->sep = mc->sep;
    s->mask = mc->mask;
    s->tokbytes = docs->tokbytes ? docs->tokbytes : docs->tok16 ? 2 : 4;
    s->tmp_dir = o->tmp_dir;
    s->tmp_label = o->tmp_label;
    if (o->spill) {
        if (spill_open(&s->instf, o->tmp_dir, o->tmp_label, err)) return -1;
        s->spilled = 1;
        if (rq_open(&B.rq, docs->ntok, o->tmp_dir, o->tmp_label, err)) {
            inst_set_free(s);
            return -1;
        }
    }

    /* vocab_words = list(vocab.keys()): distinct tokens, first occurrence
     * first; a token's id is its last line (load_vocab overwrites). */
    size_t nv = wp_vocab_size(wp);
    uint8_t *seen = xcalloc(nv ? nv : 1, 1);
    int32_t *vocab_words = xmalloc((nv ? nv : 1) * sizeof *vocab_words);
    uint8_t *cont = xcalloc(nv ? nv : 1, 1);
    for (size_t i = 0; i < nv; i++) {
        size_t tl;
        const char *t = wp_id_token(wp, (int32_t)i, &tl);
        int32_t id = wp_token_id(wp, t, tl);
        if (id < 0) id = (int32_t)i; /* a token with a NUL byte: not reachable by text */
        cont[i] = tl >= 2 && t[0] == '#' && t[1] == '#';
        if (!seen[id]) seen[id] = 1, vocab_words[mc->nvocab_words++] = id;
    }
    free(seen);
    mc->vocab_words = vocab_words;
    mc->cont = cont;
    B.specials_in_text = docs->specials; /* noted while reading */
    B.spec = xmalloc((size_t)o->max_seq_length * sizeof *B.spec);
    mc->docs = docs;
    mc->plain = !o->whole_word && !B.specials_in_text;

    B.max_num_tokens = o->max_seq_length - (o->no_nsp ? 2 : 3);
    int threads = o->threads < 1 ? 1 : o->threads > MAX_THREADS ? MAX_THREADS : o->threads;
    /* one thread masks as it draws: drawing past the masking and replaying
     * it would only make every masking draw twice */
    B.inline_mask = !o->no_mask && (o->whole_word || threads == 1);
    B.replay = !o->no_mask && !B.inline_mask;
    if (B.inline_mask || B.replay) masker_init(&B.m, (size_t)o->max_seq_length);
    B.ahead = 2 * (size_t)threads;
    pthread_mutex_init(&B.lock, NULL);
    pthread_cond_init(&B.ready, NULL);
    pyrandom_seed(&B.rng, o->seed);

    if (!B.replay) threads = 1;
        /* one thread draws, then masks too; the others mask from the start */
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
#pragma omp single nowait
        draw_all(&B);
        if (B.replay) replay_loop(&B);
    }

    if (s->spilled && !B.bad && !B.too_many) spill_random_b(&B);
    int rc = 0;
    if (s->spilled && spill_failed(&s->instf, err)) rc = -1;
    if (s->spilled && !rc && spill_failed(&B.rq.sb.f, err)) rc = -1;
    spill_buckets_close(&B.rq.sb);
    if (docs->tokf.open && spill_failed((Spill *)&docs->tokf, err)) rc = -1;
    if (B.bad) rc = err_set(err, "internal error: the masking replay disagrees with the draws");
    if (B.too_many)
        rc = err_set(err, "more than %u instances in one shard (split it into smaller shards)",
                     UINT32_MAX - (UINT32_C(1) << 31));
    pthread_mutex_destroy(&B.lock);
    pthread_cond_destroy(&B.ready);
    free(B.perm), free(B.rep), free(vocab_words), free(cont), free(B.spec);
    buf_free(&B.wbytes);
    buf_free(&B.rscratch);
    masker_free(&B.m);
    if (rc) inst_set_free(s);
    return rc;
}

int inst_generate(const InstOpts *o, const WordPiece *wp, const char *shard_path, InstSet *out,
                  Err *err) {
    InstDocs d;
    char *paths[1] = {(char *)shard_path};
    memset(out, 0, sizeof *out);
    if (inst_opts_check(o, err)) return -1;
    if (inst_docs_read(&d, wp, paths, 1, o, err)) return -1;
    if (inst_build(out, &d, wp, o, err)) {
        inst_docs_free(&d);
        return -1;
    }
    out->own = d;
    out->docs = &out->own;
    return 0;
}

void inst_set_free(InstSet *s) {
    spill_close(&s->instf);
    spill_close(&s->rowf);
    for (size_t g = 0; g < s->nblk; g++)
        free(s->blk[g].inst), free(s->blk[g].moff), free(s->blk[g].mbytes);
    free(s->blk);
    free(s->order);
    inst_docs_free(&s->own);
    memset(s, 0, sizeof *s);
}

void inst_get(const InstSet *s, size_t i, InstView *v, int32_t *input_ids, int32_t *positions,
              int32_t *label_ids) {
    const InstBlock *bk = &s->blk[i / INST_BLOCK];
    size_t k = i % INST_BLOCK;
    const Inst *in = &bk->inst[k];
    v->len = inst_len(in);
    v->seg0 = in->na + 2;
    v->nmask = in->nmask;
    v->next_sentence_label = in->next;
    if (!in->nmask) {
        if (input_ids) inst_tokens(s, in, input_ids, NULL);
        return;
    }
    const uint8_t *p = bk->mbytes + bk->moff[k];
    uint32_t pos = 0;
    if (input_ids) { /* the tokens, then each mask's new id but where it was kept */
        inst_tokens(s, in, input_ids, NULL);
        const uint8_t *q = p;
        for (size_t j = 0; j < in->nmask; j++) {
            uint32_t c = *q++, d = c >> 2;
            if (__builtin_expect(d == 63, 0)) d += get_varint(&q);
            pos += d + 1;
            if ((c & 3) == MK_MASK)
                input_ids[pos] = s->mask;
            else if ((c & 3) == MK_RANDOM)
                input_ids[pos] = (int32_t)get_varint(&q);
        }
    }
    if (!positions && !label_ids) return;
    size_t na = in->na;
    pos = 0;
    for (size_t j = 0; j < in->nmask; j++) {
        uint32_t c = *p++, d = c >> 2;
        if (__builtin_expect(d == 63, 0)) d += get_varint(&p);
        pos += d + 1;
        if ((c & 3) == MK_RANDOM) get_varint(&p);
        if (positions) positions[j] = (int32_t)pos;
        /* masked positions are never [CLS] or a [SEP] of the instance itself */
        if (label_ids)
            label_ids[j] = inst_docs_id(s->docs, pos <= na ? (size_t)in->a + pos - 1
                                                           : (size_t)in->b + pos - na - 2);
    }
}

void inst_row(const InstSet *s, size_t r, InstView *v, int32_t *input_ids, int32_t *positions,
              int32_t *label_ids) {
    inst_get(s, s->order[r], v, input_ids, positions, label_ids);
}
