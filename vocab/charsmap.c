/* charsmap.c - SentencePiece's nmt_nfkc normalization table (charsmap.h).
 *
 * The rules follow SentencePiece's normalizer builder (src/builder.cc,
 * Builder::BuildNmtNFKCMap and CompileCharsMap; Apache-2.0, read, not
 * copied), with the Unicode data of the linked ICU:
 *
 *   1. single characters: every code point 1..U+10FFFF except surrogates
 *      and noncharacters whose NFKC differs from itself maps to its NFKC;
 *   2. sequences: for each distinct NFKD of one code point that is two or
 *      more characters long and that NFKC changes (it composes, as
 *      e + U+0301 -> é), every sequence spelling it with characters whose
 *      NFKD is that one character (e: e, ｅ, ⓔ, 𝐞, ...) maps to the NFKC,
 *      unless it already is the NFKC;
 *   3. redundant rules go: a rule of n characters is kept only when the
 *      kept rules of fewer characters, applied longest-first from the
 *      left, give a different result;
 *   4. the nmt rules override: TAB LF FF CR, U+061C, U+1680, U+200B,
 *      U+200C, U+200E, U+200F, U+2028, U+2029, U+2581, U+FEFF and U+FFFD become
 *      ' '; U+0001-U+0008, U+000B, U+000E-U+001F, U+007F, U+008F and
 *      U+009F are deleted; FULLWIDTH TILDE (U+FF5E) keeps no rule; then
 *      step 3 runs again;
 *   5. the rules are compiled: the distinct replacements, sorted by code
 *      points, as UTF-8 strings each ending in NUL; the keys in UTF-8 into
 *      a double array (darray.c) whose values are the replacements'
 *      offsets; the blob is the trie's byte size (4 bytes, little endian),
 *      the units (little endian), the strings.
 *
 * Step 2 dominates the table: a Hangul syllable's three jamo can each be
 * written in up to three ways, so about 206,000 of the ~225,000 rules are
 * jamo triples; the double array shares their common tails.
 *
 * Speed: only the ~17,000 code points with a decomposition mapping are
 * visited (uni_next_decomposable walks ICU's ranges of the property);
 * every other code point is its own NFKC and NFKD and yields no rule.
 * Building the whole table takes about 0.15 s on one core.
 */
#include "vocab/charsmap.h"

#include <stdlib.h>
#include <string.h>

#include "vocab/darray.h"
#include "common/uniprop.h"
#include "common/utf8.h"

/* SentencePiece's Normalizer::kMaxTrieResultsSize: a key may have at most
 * this many rules that are prefixes of it (the builder checks < 32). */
enum { MAX_PREFIX_RULES = 32 };
/* Longest NFKD or NFKC of one code point (U+FDFA: 18). */
enum { MAX_NORM = 32 };

/* ---- the map: code-point sequence -> code-point sequence ---- */

/* One rule: key and value are runs of CMap.cp. */
typedef struct {
    uint32_t koff, klen, voff, vlen;
} Rule;

/* A hash slot: rule index + 1 (0: empty) and the upper bits of its hash. */
typedef struct {
    uint32_t r1, tag;
} Slot;

typedef struct {
    uint32_t *cp; /* keys and values back to back */
    size_t ncp, cpcap;
    Rule *r;
    uint8_t *alive; /* erased rules stay in the table, dead */
    size_t n, cap;
    Slot *slot;
    size_t scap;
} CMap;

/* A multiplicative hash of a short code-point sequence (keys are 1 to 18
 * code points; some ten million lookups build one table). */
static uint64_t seq_hash(const uint32_t *s, size_t n) {
    uint64_t h = n * 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31; /* the low bits, which pick the slot, must see the high ones */
    h *= 0x94D049BB133111EBull;
    return h ^ (h >> 29);
}

static int seq_eq(const uint32_t *a, size_t na, const uint32_t *b, size_t nb) {
    if (na != nb) return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

static int seq_cmp(const uint32_t *a, size_t na, const uint32_t *b, size_t nb) {
    size_t m = na < nb ? na : nb;
    for (size_t i = 0; i < m; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return (na > nb) - (na < nb);
}

static const uint32_t *rkey(const CMap *m, size_t e) { return m->cp + m->r[e].koff; }
static const uint32_t *rval(const CMap *m, size_t e) { return m->cp + m->r[e].voff; }

static uint32_t cm_push(CMap *m, const uint32_t *s, size_t n) {
    if (m->ncp + n > m->cpcap) {
        while (m->ncp + n > m->cpcap)
            m->cpcap = m->cpcap ? m->cpcap * 2 : 1 << 16;
        m->cp = xrealloc(m->cp, m->cpcap * sizeof *m->cp);
    }
    if (n) memcpy(m->cp + m->ncp, s, n * sizeof *s);
    m->ncp += n;
    return (uint32_t)(m->ncp - n);
}

static void cm_rehash(CMap *m) {
    size_t ncap = m->scap ? m->scap * 2 : 1 << 16;
    Slot *ns = xcalloc(ncap, sizeof *ns);
    for (size_t i = 0; i < m->n; i++) {
        uint64_t h = seq_hash(rkey(m, i), m->r[i].klen);
        size_t j = h & (ncap - 1);
        while (ns[j].r1)
            j = (j + 1) & (ncap - 1);
        ns[j] = (Slot){(uint32_t)i + 1, (uint32_t)(h >> 32)};
    }
    free(m->slot);
    m->slot = ns;
    m->scap = ncap;
}

/* The slot of key k[0..n): holding its rule, or the empty one to use
 * (*h gets the key's hash). The table must not be empty. */
static size_t cm_find_h(const CMap *m, const uint32_t *k, size_t n, uint64_t *h) {
    *h = seq_hash(k, n);
    uint32_t tag = (uint32_t)(*h >> 32);
    size_t j = *h & (m->scap - 1);
    for (; m->slot[j].r1; j = (j + 1) & (m->scap - 1)) {
        uint32_t e = m->slot[j].r1 - 1;
        if (m->slot[j].tag == tag && seq_eq(rkey(m, e), m->r[e].klen, k, n)) break;
    }
    return j;
}

/* The rule (alive or not) for key k[0..n), or -1. */
static long cm_lookup(const CMap *m, const uint32_t *k, size_t n) {
    uint64_t h;
    if (!m->scap) return -1;
    return (long)m->slot[cm_find_h(m, k, n, &h)].r1 - 1;
}

/* The alive rule for key k[0..n), or -1. */
static long cm_get(const CMap *m, const uint32_t *k, size_t n) {
    long e = cm_lookup(m, k, n);
    return e >= 0 && m->alive[e] ? e : -1;
}

/* Map key k[0..kn) to v[0..vn), replacing an earlier rule for it. */
static void cm_set(CMap *m, const uint32_t *k, size_t kn, const uint32_t *v, size_t vn) {
    if (2 * (m->n + 1) > m->scap) cm_rehash(m);
    uint64_t h;
    size_t j = cm_find_h(m, k, kn, &h);
    uint32_t e;
    if (m->slot[j].r1) {
        e = m->slot[j].r1 - 1;
    } else {
        if (m->n == m->cap) {
            m->cap = m->cap ? m->cap * 2 : 1 << 14;
            m->r = xrealloc(m->r, m->cap * sizeof *m->r);
            m->alive = xrealloc(m->alive, m->cap);
        }
        e = (uint32_t)m->n++;
        m->r[e].koff = cm_push(m, k, kn);
        m->r[e].klen = (uint32_t)kn;
        m->slot[j] = (Slot){e + 1, (uint32_t)(h >> 32)};
    }
    m->r[e].voff = cm_push(m, v, vn);
    m->r[e].vlen = (uint32_t)vn;
    m->alive[e] = 1;
}

static void cm_erase(CMap *m, const uint32_t *k, size_t kn) {
    long e = cm_get(m, k, kn);
    if (e >= 0) m->alive[e] = 0;
}

static void cm_free(CMap *m) { free(m->cp), free(m->r), free(m->alive), free(m->slot); }

/* ---- building the NFKC rules (steps 1 and 2) ---- */

static int is_unicode_char(uint32_t c) {
    return c < 0xD800 ||
           (c > 0xDFFF && c <= 0x10FFFF && (c & 0xFFFE) != 0xFFFE && !(c >= 0xFDD0 && c <= 0xFDEF));
}

/* For each character x that is the whole NFKD of some other characters:
 * those others, in code-point order (x itself is always a spelling of x
 * too): alt[start[i]..start[i+1]) for x = key[i]. */
typedef struct {
    uint32_t *key, *start, *alt;
    size_t nkey;
} Spellings;

typedef struct {
    uint32_t x, cp;
} Pair;

static int pair_cmp(const void *a, const void *b) {
    const Pair *p = a, *q = b;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    return (p->cp > q->cp) - (p->cp < q->cp);
}

/* The other spellings of x: *n of them at the returned pointer. */
static const uint32_t *spellings_of(const Spellings *sp, uint32_t x, size_t *n) {
    size_t lo = 0, hi = sp->nkey;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (sp->key[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < sp->nkey && sp->key[lo] == x) {
        *n = sp->start[lo + 1] - sp->start[lo];
        return sp->alt + sp->start[lo];
    }
    *n = 0;
    return NULL;
}

/* Steps 1 and 2: put the NFKC rules into map. Returns 0, or -1 with err
 * set when ICU fails. */
static int nfkc_rules(CMap *map, Err *err) {
    Pair *pairs = NULL;
    size_t npairs = 0, pcap = 0;
    CMap seqs = {0}; /* the distinct multi-character NFKD strings, as keys */
    Spellings sp = {0};
    uint32_t d[MAX_NORM], c[MAX_NORM];
    int rc = -1;

    for (uint32_t cp = uni_next_decomposable(1); cp <= 0x10FFFF;
         cp = uni_next_decomposable(cp + 1)) {
        if (!is_unicode_char(cp)) continue;
        int k = uni_nfkd_cp(cp, d, MAX_NORM);
        if (k == 0) continue; /* NFKD = NFKC = cp */
        if (k < 0) {
            err_set(err, "NFKD of U+%04X failed", (unsigned)cp);
            goto done;
        }
        long kc = uni_nfkc(&cp, 1, c, MAX_NORM);
        if (kc < 0 || kc > MAX_NORM) {
            err_set(err, "NFKC of U+%04X failed", (unsigned)cp);
            goto done;
        }
        if (!seq_eq(c, (size_t)kc, &cp, 1)) cm_set(map, &cp, 1, c, (size_t)kc);
        if (k == 1) {
            if (npairs == pcap) {
                pcap = pcap ? pcap * 2 : 4096;
                pairs = xrealloc(pairs, pcap * sizeof *pairs);
            }
            pairs[npairs++] = (Pair){d[0], cp};
        } else if (cm_get(&seqs, d, (size_t)k) < 0) {
            cm_set(&seqs, d, (size_t)k, NULL, 0);
        }
    }

    /* group the singleton decompositions by target */
    if (npairs) qsort(pairs, npairs, sizeof *pairs, pair_cmp);
    sp.key = xmalloc((npairs + 1) * sizeof *sp.key);
    sp.start = xmalloc((npairs + 2) * sizeof *sp.start);
    sp.alt = xmalloc((npairs + 1) * sizeof *sp.alt);
    for (size_t i = 0; i < npairs; i++) {
        if (i == 0 || pairs[i].x != pairs[i - 1].x) {
            sp.key[sp.nkey] = pairs[i].x;
            sp.start[sp.nkey++] = (uint32_t)i;
        }
        sp.alt[i] = pairs[i].cp;
    }
    sp.start[sp.nkey] = (uint32_t)npairs;

    /* each composing NFKD string, spelled every possible way */
    for (size_t s = 0; s < seqs.n; s++) {
        const uint32_t *nfkd = rkey(&seqs, s);
        size_t len = seqs.r[s].klen;
        long kc = uni_nfkc(nfkd, len, c, MAX_NORM);
        if (kc < 0 || kc > MAX_NORM) {
            err_set(err, "NFKC of a %zu-character sequence failed", len);
            goto done;
        }
        if (seq_eq(c, (size_t)kc, nfkd, len)) continue;
        /* odometer over the spellings: choice j of position i is nfkd[i]
         * itself (j = 0) or its (j-1)-th other spelling */
        size_t pick[MAX_NORM] = {0}, nalt[MAX_NORM];
        const uint32_t *alts[MAX_NORM];
        for (size_t i = 0; i < len; i++)
            alts[i] = spellings_of(&sp, nfkd[i], &nalt[i]);
        for (;;) {
            uint32_t key[MAX_NORM];
            for (size_t i = 0; i < len; i++)
                key[i] = pick[i] ? alts[i][pick[i] - 1] : nfkd[i];
            if (!seq_eq(key, len, c, (size_t)kc)) cm_set(map, key, len, c, (size_t)kc);
            size_t i = len;
            while (i > 0 && pick[i - 1] == nalt[i - 1])
                pick[--i] = 0;
            if (i == 0) break;
            pick[i - 1]++;
        }
    }
    rc = 0;
done:
    free(sp.key), free(sp.start), free(sp.alt);
    free(pairs);
    cm_free(&seqs);
    return rc;
}

/* ---- step 3: dropping redundant rules ---- */

/* Apply the rules e with ok[e] set and at most maxlen characters to
 * s[0..n), longest match first, as the builder's Normalize does, into out
 * (room for n * MAX_NORM). Returns the output length. */
static size_t apply_rules(const CMap *m, const uint8_t *ok, const uint32_t *s, size_t n,
                          size_t maxlen, uint32_t *out) {
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t len = n - i < maxlen ? n - i : maxlen;
        long e = -1;
        for (; len > 0; len--) {
            long r = cm_lookup(m, s + i, len);
            if (r >= 0 && ok[r]) {
                e = r;
                break;
            }
        }
        if (e < 0) {
            out[o++] = s[i++];
        } else {
            memcpy(out + o, rval(m, e), m->r[e].vlen * sizeof *out);
            o += m->r[e].vlen;
            i += len;
        }
    }
    return o;
}

/* Keep a rule only when the shorter kept rules do not already give its
 * result; then check that the kept rules reproduce every old one. */
static int remove_redundant(CMap *m, Err *err) {
    size_t maxlen = 0;
    for (size_t e = 0; e < m->n; e++)
        if (m->alive[e] && m->r[e].klen > maxlen) maxlen = m->r[e].klen;
    uint8_t *keep = xcalloc(m->n ? m->n : 1, 1);
    uint32_t *out = xmalloc((maxlen + 1) * MAX_NORM * sizeof *out);
    size_t *bylen = xcalloc(maxlen + 2, sizeof *bylen),
           *order = xmalloc((m->n + 1) * sizeof *order);
    /* entries grouped by key length, in entry order */
    for (size_t e = 0; e < m->n; e++)
        if (m->alive[e]) bylen[m->r[e].klen + 1]++;
    for (size_t l = 1; l <= maxlen + 1; l++)
        bylen[l] += bylen[l - 1];
    for (size_t e = 0; e < m->n; e++)
        if (m->alive[e]) order[bylen[m->r[e].klen]++] = e;
    /* bylen[l] is now the end of length l's group, which starts at bylen[l-1] */
    int rc = 0;
    for (size_t r = 0; r < (maxlen ? bylen[1] : 0); r++)
        keep[order[r]] = 1;
    for (size_t l = 2; l <= maxlen; l++) {
        for (size_t r = bylen[l - 1]; r < bylen[l]; r++) {
            size_t e = order[r];
            size_t o = apply_rules(m, keep, rkey(m, e), l, l - 1, out);
            if (!seq_eq(out, o, rval(m, e), m->r[e].vlen)) keep[e] = 1;
        }
    }
    for (size_t r = 0; r < (maxlen ? bylen[maxlen] : 0) && rc == 0; r++) {
        size_t e = order[r];
        size_t o = apply_rules(m, keep, rkey(m, e), m->r[e].klen, maxlen, out);
        if (!seq_eq(out, o, rval(m, e), m->r[e].vlen))
            rc = err_set(err, "the reduced rules do not reproduce the rule for U+%04X...",
                         (unsigned)rkey(m, e)[0]);
    }
    if (rc == 0) memcpy(m->alive, keep, m->n);
    free(keep), free(out), free(bylen), free(order);
    return rc;
}

/* ---- step 4: the nmt rules ---- */

static void nmt_rules(CMap *m) {
    /* U+061C ARABIC LETTER MARK joined U+200E and U+200F in 0.2.3 (its
     * table has the rule; older releases keep the character) */
    static const uint32_t to_space[] = {0x0009, 0x000A, 0x000C, 0x000D, 0x1680,
                                        0x200B, 0x200E, 0x200F, 0x2028, 0x2029,
                                        0x2581, 0xFEFF, 0xFFFD, 0x200C, 0x061C};
    static const uint32_t space = 0x20;
    for (size_t i = 0; i < sizeof to_space / sizeof *to_space; i++)
        cm_set(m, &to_space[i], 1, &space, 1);
    for (uint32_t c = 0x01; c <= 0x1F; c++)
        if (c != 0x09 && c != 0x0A && c != 0x0C && c != 0x0D) cm_set(m, &c, 1, NULL, 0);
    static const uint32_t deleted[] = {0x7F, 0x8F, 0x9F};
    for (size_t i = 0; i < 3; i++)
        cm_set(m, &deleted[i], 1, NULL, 0);
    static const uint32_t tilde = 0xFF5E;
    cm_erase(m, &tilde, 1);
}

/* ---- step 5: compiling ---- */

/* Entries are sorted by their keys (or values) through a 64-bit prefix,
 * the first three code points plus one, 21 bits each (0 = no code point,
 * so a shorter sequence sorts first); runs with equal prefixes, where
 * sequences are longer than three, are finished by a full comparison. */
typedef struct {
    uint64_t k;
    uint32_t e;
} SortItem;

static uint64_t seq_prefix(const uint32_t *s, size_t n) {
    uint64_t k = 0;
    for (size_t i = 0; i < 3; i++)
        k = k << 21 | (i < n ? s[i] + 1 : 0);
    return k;
}

static void radix_sort(SortItem *a, size_t n) {
    SortItem *tmp = xmalloc((n ? n : 1) * sizeof *tmp), *src = a, *dst = tmp;
    for (int shift = 0; shift < 64; shift += 8) {
        size_t cnt[257] = {0};
        for (size_t i = 0; i < n; i++)
            cnt[(src[i].k >> shift & 0xFF) + 1]++;
        if (cnt[(src[0].k >> shift & 0xFF) + 1] == n) continue; /* one digit value: nothing moves */
        for (int d = 0; d < 256; d++)
            cnt[d + 1] += cnt[d];
        for (size_t i = 0; i < n; i++)
            dst[cnt[src[i].k >> shift & 0xFF]++] = src[i];
        SortItem *t = src;
        src = dst, dst = t;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
    free(tmp);
}

/* Sort the entries it[0..n) by key (by_value 0) or value (1). */
static void sort_entries(const CMap *m, SortItem *it, size_t n, int by_value) {
#define SEQ(e) (by_value ? rval(m, e) : rkey(m, e))
#define LEN(e) (by_value ? m->r[e].vlen : m->r[e].klen)
    for (size_t i = 0; i < n; i++)
        it[i].k = seq_prefix(SEQ(it[i].e), LEN(it[i].e));
    if (n) radix_sort(it, n);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && it[j].k == it[i].k; j++) {
        }
        /* insertion sort of the run by the whole sequence (stable) */
        for (size_t a = i + 1; a < j; a++) {
            SortItem x = it[a];
            size_t b = a;
            while (b > i && seq_cmp(SEQ(it[b - 1].e), LEN(it[b - 1].e), SEQ(x.e), LEN(x.e)) > 0) {
                it[b] = it[b - 1];
                b--;
            }
            it[b] = x;
        }
    }
#undef SEQ
#undef LEN
}

static void put_le32(Buf *b, uint32_t v) {
    char p[4] = {(char)(v & 0xFF), (char)(v >> 8 & 0xFF), (char)(v >> 16 & 0xFF), (char)(v >> 24)};
    buf_append(b, p, 4);
}

static int compile(const CMap *m, Buf *blob, Err *err) {
    size_t n = 0;
    for (size_t e = 0; e < m->n; e++)
        n += m->alive[e];
    if (n == 0) return err_set(err, "empty character map");
    SortItem *ent = xmalloc(n * sizeof *ent);
    uint32_t *strpos = xmalloc(m->n * sizeof *strpos);
    size_t k = 0;
    for (size_t e = 0; e < m->n; e++)
        if (m->alive[e]) ent[k++].e = (uint32_t)e;

    /* replacement strings: distinct values in code-point order */
    Buf strs = {0};
    sort_entries(m, ent, n, 1);
    for (size_t i = 0; i < n; i++) {
        uint32_t e = ent[i].e, p = i ? ent[i - 1].e : 0;
        if (i > 0 && seq_eq(rval(m, p), m->r[p].vlen, rval(m, e), m->r[e].vlen)) {
            strpos[e] = strpos[p];
            continue;
        }
        strpos[e] = (uint32_t)strs.len;
        for (size_t j = 0; j < m->r[e].vlen; j++)
            utf8_append_cp(&strs, rval(m, e)[j]);
        buf_putc(&strs, '\0');
    }

    /* keys in UTF-8, in code-point (= byte) order */
    sort_entries(m, ent, n, 0);
    Buf kb = {0};
    size_t *koff = xmalloc(n * sizeof *koff), *klen = xmalloc(n * sizeof *klen);
    int32_t *val = xmalloc(n * sizeof *val);
    for (size_t i = 0; i < n; i++) {
        uint32_t e = ent[i].e;
        koff[i] = kb.len;
        for (size_t j = 0; j < m->r[e].klen; j++)
            utf8_append_cp(&kb, rkey(m, e)[j]);
        klen[i] = kb.len - koff[i];
        val[i] = (int32_t)strpos[e];
    }
    const char **keys = xmalloc(n * sizeof *keys);
    for (size_t i = 0; i < n; i++)
        keys[i] = kb.data + koff[i];

    DArray da;
    int rc = darray_build(&da, n, keys, klen, val, err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (darray_prefixes(da.units, da.n, keys[i], klen[i], NULL, NULL, 0) >= MAX_PREFIX_RULES)
            rc = err_set(err, "a rule has %d or more rules that are prefixes of it",
                         MAX_PREFIX_RULES);
    if (rc == 0) {
        put_le32(blob, (uint32_t)(da.n * 4));
        buf_reserve(blob, da.n * 4 + strs.len);
        for (size_t i = 0; i < da.n; i++)
            put_le32(blob, da.units[i]);
        buf_append(blob, strs.data, strs.len);
        darray_free(&da);
    }
    free(ent), free(strpos), free(koff), free(klen), free(val), free(keys);
    buf_free(&strs), buf_free(&kb);
    return rc;
}

int charsmap_nmt_nfkc(Buf *blob, Err *err) {
    CMap m = {0};
    int rc = nfkc_rules(&m, err);
    if (rc == 0) rc = remove_redundant(&m, err);
    if (rc == 0) {
        nmt_rules(&m);
        rc = remove_redundant(&m, err);
    }
    if (rc == 0) rc = compile(&m, blob, err);
    cm_free(&m);
    return rc;
}
