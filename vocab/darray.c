/* darray.c - Darts-clone compatible double-array trie builder (darray.h).
 *
 * Two passes:
 *
 *   1. Automaton. The keys, sorted bytewise, are added one at a time to a
 *      trie whose only unfinished part is the path of the last key. When a
 *      key leaves that path at depth p, the path's nodes deeper than p can
 *      get no more children: each is looked up in a register of finished
 *      states by its transitions (label, target) and replaced by an equal
 *      one when there is one (Daciuk, Mihov, Watson & Watson, "Incremental
 *      construction of minimal acyclic finite-state automata", 2000). The
 *      end of a key is a transition on label 0 whose target is the value,
 *      as in the array, so equal values are part of state equality.
 *
 *   2. Layout. States are placed depth-first from the root, children in
 *      label order. A state gets a base B such that B ^ label is a free
 *      unit for each of its labels and no other state has base B (a unit
 *      then has one possible parent: base = unit ^ label). A state reached
 *      again through another parent reuses its base when the XOR distance
 *      can be encoded. Candidate bases come from a list of the free units
 *      of the last WINDOW blocks (older blocks are closed for good, which
 *      bounds the search); when none fits, a new 256-unit block is added.
 *      Because a base and base ^ c lie in the same block for every byte c,
 *      an array of whole blocks keeps every lookup in range.
 */
#include "vocab/darray.h"

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

enum {
    BLOCK = 256,
    WINDOW = 16, /* open blocks searched for a base */
    F_USED = 1,  /* unit holds a node or a value */
    F_BASE = 2,  /* unit index is some state's base */
};
#define VALUE_BIT 0x80000000u
#define HAS_LEAF_BIT 0x100u
#define MAX_UNITS (1u << 29)

/* ---- pass 1: minimal automaton ---- */

typedef struct {
    uint8_t *label;   /* all finished states' transitions, back to back */
    uint32_t *target; /* state id, or the value for label 0 */
    size_t nt, tcap;
    uint32_t *first, *count; /* per state */
    size_t ns, scap;
    uint32_t *reg; /* open-addressing register of state ids + 1; 0 = empty */
    size_t rcap;
} Automaton;

/* One node on the path of the last key: its transitions so far; the last
 * one's target is pending while the node below it is open. */
typedef struct {
    uint8_t *label;
    uint32_t *target;
    size_t n, cap;
} OpenNode;

static uint64_t trans_hash(const uint8_t *lab, const uint32_t *tgt, size_t n) {
    uint64_t h = hash_bytes(lab, n);
    return h ^ (hash_bytes(tgt, n * sizeof *tgt) * 0x9E3779B97F4A7C15ull);
}

static int state_equal(const Automaton *a, uint32_t s, const uint8_t *lab, const uint32_t *tgt,
                       size_t n) {
    if (a->count[s] != n) return 0;
    return n == 0 || (memcmp(a->label + a->first[s], lab, n) == 0 &&
                      memcmp(a->target + a->first[s], tgt, n * sizeof *tgt) == 0);
}

static void reg_grow(Automaton *a) {
    size_t ncap = a->rcap ? a->rcap * 2 : 1024;
    uint32_t *nr = xcalloc(ncap, sizeof *nr);
    for (size_t i = 0; i < a->rcap; i++) {
        uint32_t id = a->reg[i];
        if (!id) continue;
        uint32_t s = id - 1;
        size_t j =
            trans_hash(a->label + a->first[s], a->target + a->first[s], a->count[s]) & (ncap - 1);
        while (nr[j])
            j = (j + 1) & (ncap - 1);
        nr[j] = id;
    }
    free(a->reg);
    a->reg = nr;
    a->rcap = ncap;
}

/* The id of the finished state with transitions lab/tgt[0..n): an equal
 * registered one, or a new one. */
static uint32_t state_register(Automaton *a, const uint8_t *lab, const uint32_t *tgt, size_t n) {
    if (2 * (a->ns + 1) > a->rcap) reg_grow(a);
    size_t j = trans_hash(lab, tgt, n) & (a->rcap - 1);
    for (; a->reg[j]; j = (j + 1) & (a->rcap - 1))
        if (state_equal(a, a->reg[j] - 1, lab, tgt, n)) return a->reg[j] - 1;
    if (a->nt + n > a->tcap || !a->label) {
        do
            a->tcap = a->tcap ? a->tcap * 2 : 4096;
        while (a->nt + n > a->tcap);
        a->label = xrealloc(a->label, a->tcap);
        a->target = xrealloc(a->target, a->tcap * sizeof *a->target);
    }
    if (a->ns == a->scap) {
        a->scap = a->scap ? a->scap * 2 : 1024;
        a->first = xrealloc(a->first, a->scap * sizeof *a->first);
        a->count = xrealloc(a->count, a->scap * sizeof *a->count);
    }
    if (n) {
        memcpy(a->label + a->nt, lab, n);
        memcpy(a->target + a->nt, tgt, n * sizeof *tgt);
    }
    uint32_t s = (uint32_t)a->ns++;
    a->first[s] = (uint32_t)a->nt;
    a->count[s] = (uint32_t)n;
    a->nt += n;
    a->reg[j] = s + 1;
    return s;
}

static void open_add(OpenNode *o, uint8_t label, uint32_t target) {
    if (o->n == o->cap) {
        o->cap = o->cap ? o->cap * 2 : 4;
        o->label = xrealloc(o->label, o->cap);
        o->target = xrealloc(o->target, o->cap * sizeof *o->target);
    }
    o->label[o->n] = label;
    o->target[o->n++] = target;
}

/* Finish the open nodes at depths > depth, deepest first. */
static void path_close(Automaton *a, OpenNode *path, size_t *top, size_t depth) {
    while (*top > depth) {
        OpenNode *o = &path[*top];
        uint32_t s = state_register(a, o->label, o->target, o->n);
        o->n = 0;
        (*top)--;
        path[*top].target[path[*top].n - 1] = s;
    }
}

/* A key to sort: bytes, length, input index (the tie-break). */
typedef struct {
    const char *k;
    size_t len, i;
} SortKey;

static int bytes_cmp(const char *a, size_t la, const char *b, size_t lb) {
    int c = memcmp(a, b, la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

static int sortkey_cmp(const void *x, const void *y) {
    const SortKey *a = x, *b = y;
    int c = bytes_cmp(a->k, a->len, b->k, b->len);
    return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* Build the automaton of the keys; returns the root state, or -1 with err. */
static int64_t automaton_build(Automaton *a, size_t n, const char *const *keys, const size_t *lens,
                               const int32_t *values, Err *err) {
    SortKey *idx = xmalloc((n ? n : 1) * sizeof *idx);
    size_t maxlen = 0;
    int sorted = 1;
    for (size_t i = 0; i < n; i++) {
        idx[i] = (SortKey){keys[i], lens[i], i};
        if (lens[i] == 0) {
            free(idx);
            return err_set(err, "key %zu is empty", i);
        }
        if (memchr(keys[i], 0, lens[i])) {
            free(idx);
            return err_set(err, "key %zu holds a NUL byte", i);
        }
        if (values[i] < 0) {
            free(idx);
            return err_set(err, "key %zu has the negative value %d", i, (int)values[i]);
        }
        if (lens[i] > maxlen) maxlen = lens[i];
    }
    for (size_t i = 1; i < n && sorted; i++)
        sorted = bytes_cmp(keys[i - 1], lens[i - 1], keys[i], lens[i]) < 0;
    if (!sorted) qsort(idx, n, sizeof *idx, sortkey_cmp);

    OpenNode *path = xcalloc(maxlen + 1, sizeof *path);
    size_t top = 0, prev_len = 0;
    const char *prev = NULL;
    int64_t rc = 0;
    for (size_t r = 0; r < n; r++) {
        size_t i = idx[r].i, len = lens[i];
        const unsigned char *k = (const unsigned char *)keys[i];
        size_t p = 0;
        if (prev) {
            size_t m = len < prev_len ? len : prev_len;
            while (p < m && (unsigned char)prev[p] == k[p])
                p++;
            if (p == len && p == prev_len) {
                rc = err_set(err, "key %zu is repeated", i);
                goto done;
            }
        }
        path_close(a, path, &top, p);
        for (size_t d = p; d < len; d++) {
            open_add(&path[d], k[d], 0);
            top = d + 1;
        }
        open_add(&path[len], 0, (uint32_t)values[i]);
        top = len;
        prev = keys[i], prev_len = len;
    }
    path_close(a, path, &top, 0);
    rc = state_register(a, path[0].label, path[0].target, path[0].n);
done:
    for (size_t d = 0; d <= maxlen; d++)
        free(path[d].label), free(path[d].target);
    free(path);
    free(idx);
    return rc;
}

static void automaton_free(Automaton *a) {
    free(a->label), free(a->target), free(a->first), free(a->count), free(a->reg);
}

/* ---- pass 2: layout ---- */

typedef struct {
    uint32_t *units;
    uint8_t *flags;
    uint32_t *next, *prev; /* circular list of free units in open blocks */
    int64_t head;          /* -1: empty */
    size_t n, cap;
    size_t first_open; /* first block still searched */
} Layout;

static int encodable(uint32_t rel) {
    return rel < (1u << 21) || ((rel & 0xFF) == 0 && rel < MAX_UNITS);
}

static void set_offset(uint32_t *u, uint32_t rel) {
    *u &= VALUE_BIT | HAS_LEAF_BIT | 0xFF;
    *u |= rel < (1u << 21) ? rel << 10 : (rel << 2) | (1u << 9);
}

static void free_unlink(Layout *L, uint32_t id) {
    if (L->next[id] == id) {
        L->head = -1;
    } else {
        L->next[L->prev[id]] = L->next[id];
        L->prev[L->next[id]] = L->prev[id];
        if (L->head == id) L->head = L->next[id];
    }
}

static void add_block(Layout *L) {
    if (L->n + BLOCK > L->cap) {
        L->cap = L->cap ? L->cap * 2 : 4 * BLOCK;
        L->units = xrealloc(L->units, L->cap * sizeof *L->units);
        L->flags = xrealloc(L->flags, L->cap);
        L->next = xrealloc(L->next, L->cap * sizeof *L->next);
        L->prev = xrealloc(L->prev, L->cap * sizeof *L->prev);
    }
    size_t b = L->n;
    memset(L->units + b, 0, BLOCK * sizeof *L->units);
    memset(L->flags + b, 0, BLOCK);
    for (size_t i = b; i < b + BLOCK; i++) {
        uint32_t id = (uint32_t)i;
        if (L->head < 0) {
            L->head = id;
            L->next[id] = L->prev[id] = id;
        } else {
            uint32_t h = (uint32_t)L->head, t = L->prev[h];
            L->next[t] = id, L->prev[id] = t;
            L->next[id] = h, L->prev[h] = id;
        }
    }
    L->n += BLOCK;
    if (L->n / BLOCK - L->first_open > WINDOW) {
        size_t c = L->first_open++ * BLOCK;
        for (size_t i = c; i < c + BLOCK; i++)
            if (!(L->flags[i] & F_USED)) free_unlink(L, (uint32_t)i);
    }
}

static void reserve(Layout *L, uint32_t id) {
    while (id >= L->n)
        add_block(L);
    L->flags[id] |= F_USED;
    free_unlink(L, id);
}

/* A base for a state with labels lab[0..k) (ascending) whose parent unit
 * is dic; may add a block. */
static uint32_t find_base(Layout *L, const uint8_t *lab, size_t k, uint32_t dic) {
    if (L->head >= 0) {
        uint32_t f = (uint32_t)L->head;
        do {
            uint32_t b = f ^ lab[0];
            if (!(L->flags[b] & F_BASE) && encodable(b ^ dic)) {
                size_t j = 1;
                while (j < k && !(L->flags[b ^ lab[j]] & F_USED))
                    j++;
                if (j == k) return b;
            }
            f = L->next[f];
        } while (f != (uint32_t)L->head);
    }
    /* a fresh block; the low byte of dic keeps the distance encodable even
     * beyond 2^21 units */
    uint32_t b = (uint32_t)L->n | (dic & 0xFF);
    add_block(L);
    return b;
}

static void layout_free(Layout *L) { free(L->units), free(L->flags), free(L->next), free(L->prev); }

int darray_build(DArray *da, size_t n, const char *const *keys, const size_t *lens,
                 const int32_t *values, Err *err) {
    memset(da, 0, sizeof *da);
    Automaton a = {0};
    Layout L = {.head = -1};
    int rc = -1;
    int64_t root = automaton_build(&a, n, keys, lens, values, err);
    if (root < 0) goto done;

    add_block(&L);
    reserve(&L, 0);
    L.flags[0] |= F_BASE; /* a base of 0 would make the root a child for label 0 */
    uint32_t *base = xcalloc(a.ns, sizeof *base); /* 0: not placed */
    /* depth-first stack of (state, parent unit) */
    size_t scap = 1024, sp = 0;
    uint32_t(*stack)[2] = xmalloc(scap * sizeof *stack);
    if (a.count[root] == 0) {
        set_offset(&L.units[0], 1); /* no keys: every lookup fails at once */
    } else {
        stack[sp][0] = (uint32_t)root, stack[sp++][1] = 0;
    }
    while (sp > 0) {
        sp--;
        uint32_t s = stack[sp][0], dic = stack[sp][1];
        const uint8_t *lab = a.label + a.first[s];
        const uint32_t *tgt = a.target + a.first[s];
        size_t k = a.count[s];
        if (lab[0] == 0) L.units[dic] |= HAS_LEAF_BIT;
        if (base[s] && encodable(base[s] ^ dic)) {
            set_offset(&L.units[dic], base[s] ^ dic);
            continue;
        }
        uint32_t b = find_base(&L, lab, k, dic);
        if (L.n > MAX_UNITS) {
            err_set(err, "double array: more than 2^29 units");
            free(base), free(stack);
            goto done;
        }
        set_offset(&L.units[dic], b ^ dic);
        L.flags[b] |= F_BASE;
        base[s] = b;
        for (size_t j = 0; j < k; j++) {
            uint32_t id = b ^ lab[j];
            reserve(&L, id);
            L.units[id] = lab[j] ? lab[j] : (tgt[j] | VALUE_BIT);
        }
        if (sp + k > scap) {
            while (sp + k > scap)
                scap *= 2;
            stack = xrealloc(stack, scap * sizeof *stack);
        }
        for (size_t j = k; j-- > 0;) {
            if (!lab[j]) continue;
            stack[sp][0] = tgt[j], stack[sp++][1] = b ^ lab[j];
        }
    }
    free(base), free(stack);
    for (size_t i = 0; i < L.n; i++)
        if (!(L.flags[i] & F_USED)) L.units[i] = VALUE_BIT;
    da->units = L.units;
    da->n = L.n;
    L.units = NULL;
    rc = 0;
done:
    layout_free(&L);
    automaton_free(&a);
    return rc;
}

void darray_free(DArray *da) {
    free(da->units);
    memset(da, 0, sizeof *da);
}

size_t darray_prefixes(const uint32_t *units, size_t nunits, const char *s, size_t n,
                       int32_t *values, size_t *lens, size_t max) {
    size_t found = 0;
    if (!units || nunits == 0) return 0;
    size_t pos = (units[0] >> 10) << ((units[0] & (1u << 9)) >> 6);
    for (size_t i = 0; i < n; i++) {
        uint32_t c = (unsigned char)s[i];
        pos ^= c;
        if (pos >= nunits) break;
        uint32_t u = units[pos];
        if ((u & (VALUE_BIT | 0xFF)) != c) break;
        pos ^= (u >> 10) << ((u & (1u << 9)) >> 6);
        if (u & HAS_LEAF_BIT) {
            if (pos >= nunits) break;
            if (found < max) {
                values[found] = (int32_t)(units[pos] & ~VALUE_BIT);
                lens[found] = i + 1;
            }
            found++;
        }
    }
    return found;
}
