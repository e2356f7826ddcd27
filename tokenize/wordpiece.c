/* wordpiece.c - BERT's BasicTokenizer + WordpieceTokenizer (see wordpiece.h).
 *
 * The behaviour is that of NVIDIA's DeepLearningExamples
 * PyTorch/LanguageModeling/BERT/tokenization.py (Google's
 * google-research/bert tokenization.py with never_split and
 * max_input_chars_per_word = 100); the rules are restated in the project's
 * pipeline specification, section 12. Python's string primitives
 * (str.split, str.strip, str.lower, unicodedata.category and NFD) come from
 * ICU through uniprop.h. ICU 72 implements Unicode 15.0, while the original
 * ran on Python 3.6 (Unicode 9.0) and current Pythons have 14.0 or 15.x:
 * characters assigned after the Python's version are Cn there (deleted by
 * cleaning) but kept here.
 *
 * Where Hugging Face's BertTokenizer differs, tokenization.py is followed:
 * transformers' public tokenize() cuts special tokens out of words first
 * ("[MASK]." -> [MASK] .; here [ mask ] .), and its BasicTokenizer applies
 * NFC before splitting (no difference found on real text: the accents it
 * composes are stripped again). bench/wp_tokenize.sh measures agreement.
 * The other flavour, WP_FLAVOR_HF (wp_create_basic), follows the Rust
 * BertNormalizer + BertPreTokenizer of huggingface/tokenizers instead, for
 * the WordPiece trainer (vocab/wptrain.c); wordpiece.h lists the four
 * differences.
 *
 * The vocabulary lives in a byte trie whose nodes are numbered in
 * breadth-first order, so the children of a node are consecutive nodes
 * sorted by their edge byte:
 *
 *   node i: base[i] = first child, nkids[i] children, id[i] (-1: no token),
 *           label[j] = the byte on the edge into node j
 *
 * A word-initial piece is matched from the root, a continuation piece from
 * the node reached by "##" (cont). Greedy longest-match-first is one walk
 * down the trie remembering the last node that ends a token on a code point
 * boundary, which is exactly tokenization.py's "try end = n, n-1, ..."
 * loop without rehashing every substring.
 */
#include "tokenize/wordpiece.h"

#include <stdio.h>
#include <string.h>

#include "common/io.h"
#include "common/tokjson.h"
#include "common/uniprop.h"
#include "common/utf8.h"

struct WordPiece {
    int norm; /* WP_LOWER | WP_STRIP_ACCENTS */
    WpFlavor flavor;
    /* trie */
    uint32_t nnodes;
    uint32_t *base;
    uint16_t *nkids;
    int32_t *id;
    uint8_t *label;
    uint32_t root_next[256], cont_next[256]; /* dense first steps; 0 = none */
    uint32_t cont;                           /* node of "##", 0 if absent */
    /* vocab lines */
    size_t nlines;
    size_t *off; /* token of line i at text + off[i] */
    char *text;
    int32_t unk;
    /* a tokenizer.json's settings (vocab.txt: tokenization.py's) */
    int max_chars; /* max_input_chars_per_word */
    int clean;     /* delete control characters (BertNormalizer clean_text) */
    int cjk;       /* spaces around CJK ideographs (handle_chinese_chars) */
};

static const char *const never_split[] = {"[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"};

/* ---- trie construction ---- */

typedef struct BNode {
    int32_t id;
    uint32_t first, next; /* first child, next sibling (0 = none), siblings sorted by label */
    uint32_t parent;
    uint8_t label;
} BNode;

/* The nodes, and a hash of (parent, label) -> node so that finding a child
 * does not walk the sibling list (the root and "##" have hundreds). */
typedef struct Builder {
    BNode *n;
    uint32_t len, cap;
    uint32_t *ht; /* node index, 0 = empty; the root is never a child */
    uint32_t hmask;
} Builder;

static uint32_t child_hash(uint32_t parent, uint8_t label) {
    return (parent * 0x9E3779B1u) ^ (label * 0x85EBCA77u);
}

static void ht_put(Builder *b, uint32_t k) {
    uint32_t h = child_hash(b->n[k].parent, b->n[k].label) & b->hmask;
    while (b->ht[h])
        h = (h + 1) & b->hmask;
    b->ht[h] = k;
}

static uint32_t bnode_new(Builder *b, uint32_t parent, uint8_t label) {
    if (b->len == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 1024;
        b->n = xrealloc(b->n, b->cap * sizeof *b->n);
    }
    b->n[b->len] = (BNode){.id = -1, .label = label, .parent = parent};
    if (2 * b->len >= b->hmask) { /* keep the load under 1/2 */
        free(b->ht);
        b->hmask = b->hmask ? 2 * b->hmask + 1 : 4095;
        b->ht = xcalloc((size_t)b->hmask + 1, sizeof *b->ht);
        for (uint32_t k = 1; k < b->len; k++)
            ht_put(b, k);
    }
    if (b->len) ht_put(b, b->len);
    return b->len++;
}

static void builder_free(Builder *b) {
    free(b->n);
    free(b->ht);
}

static void builder_insert(Builder *b, const char *s, size_t len, int32_t id) {
    uint32_t cur = 0;
    for (size_t i = 0; i < len; i++) {
        uint8_t c = (uint8_t)s[i];
        uint32_t h = child_hash(cur, c) & b->hmask, k;
        while ((k = b->ht[h]) && !(b->n[k].parent == cur && b->n[k].label == c))
            h = (h + 1) & b->hmask;
        if (!k) { /* a new child, linked in label order */
            uint32_t nk = bnode_new(b, cur, c), prev = 0, q = b->n[cur].first;
            while (q && b->n[q].label < c)
                prev = q, q = b->n[q].next;
            b->n[nk].next = q;
            if (prev)
                b->n[prev].next = nk;
            else
                b->n[cur].first = nk;
            k = nk;
        }
        cur = k;
    }
    b->n[cur].id = id; /* a later duplicate line wins, as dict assignment does */
}

/* Renumber breadth-first into the final arrays (children stay sorted). */
static void trie_flatten(WordPiece *wp, Builder *b) {
    uint32_t n = b->len;
    uint32_t *order = xmalloc(n * sizeof *order), *newidx = xmalloc(n * sizeof *newidx);
    wp->nnodes = n;
    wp->base = xcalloc(n, sizeof *wp->base);
    wp->nkids = xcalloc(n, sizeof *wp->nkids);
    wp->id = xmalloc(n * sizeof *wp->id);
    wp->label = xcalloc(n, sizeof *wp->label);
    uint32_t head = 0, tail = 0;
    order[tail++] = 0;
    while (head < tail) {
        uint32_t old = order[head];
        uint32_t ni = head++;
        newidx[old] = ni;
        wp->id[ni] = b->n[old].id;
        wp->label[ni] = b->n[old].label;
        wp->base[ni] = tail;
        for (uint32_t k = b->n[old].first; k; k = b->n[k].next) {
            order[tail++] = k;
            wp->nkids[ni]++;
        }
    }
    free(order);
    free(newidx);
}

static inline uint32_t trie_child(const WordPiece *wp, uint32_t node, uint8_t c) {
    uint32_t lo = wp->base[node], end = lo + wp->nkids[node];
    if (end - lo > 8) { /* lower bound by bisection */
        uint32_t hi = end;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (wp->label[mid] < c)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo < end && wp->label[lo] == c ? lo : 0;
    }
    for (; lo < end; lo++) {
        if (wp->label[lo] == c) return lo;
        if (wp->label[lo] > c) break;
    }
    return 0;
}

/* ---- vocabulary loading ---- */

/* Python str.strip(): drop whitespace code points at both ends. */
static void py_strip(const char **s, size_t *n) {
    const unsigned char *p = (const unsigned char *)*s;
    size_t a = 0, b = *n;
    while (a < b) {
        uint32_t cp;
        size_t l = utf8_decode(p + a, b - a, &cp);
        if (!l || !uni_is(cp, UNI_SPACE)) break;
        a += l;
    }
    while (b > a) {
        size_t k = b - 1;
        while (k > a && (p[k] & 0xC0) == 0x80)
            k--;
        uint32_t cp;
        size_t l = utf8_decode(p + k, b - k, &cp);
        if (l != b - k || !uni_is(cp, UNI_SPACE)) break;
        b = k;
    }
    *s += a;
    *n = b - a;
}

/* The tokenizer of vocab.txt text data[0..len); prefix: the continuation
 * prefix, unk: the unknown token's text (tokenization.py: "##", "[UNK]"). */
static WordPiece *build(const char *data, size_t len, const char *name, int norm,
                        const char *prefix, const char *unk_tok, Err *err) {
    WordPiece *wp = xcalloc(1, sizeof *wp);
    wp->max_chars = WP_MAX_WORD_CHARS, wp->clean = 1, wp->cjk = 1;
    Builder b = {0};
    Buf text = {0};
    size_t cap = 0;
    wp->norm = norm & WP_UNCASED;
    bnode_new(&b, 0, 0);
    for (size_t pos = 0; pos < len;) {
        size_t e = pos;
        while (e < len && data[e] != '\n' && data[e] != '\r')
            e++;
        const char *s = data + pos;
        size_t n = e - pos;
        if (utf8_valid_prefix(s, n) != n) {
            err_set(err, "%s:%zu: invalid UTF-8", name, wp->nlines + 1);
            builder_free(&b);
            buf_free(&text);
            wp_destroy(wp);
            return NULL;
        }
        py_strip(&s, &n);
        if (wp->nlines == cap) {
            cap = cap ? 2 * cap : 4096;
            wp->off = xrealloc(wp->off, cap * sizeof *wp->off);
        }
        wp->off[wp->nlines] = text.len;
        buf_append(&text, s, n);
        buf_putc(&text, '\0');
        builder_insert(&b, s, n, (int32_t)wp->nlines);
        wp->nlines++;
        pos = e;
        if (pos < len) pos += data[pos] == '\r' && pos + 1 < len && data[pos + 1] == '\n' ? 2 : 1;
    }
    if (wp->nlines > (size_t)INT32_MAX - 1) {
        err_set(err, "%s: too many lines", name);
        builder_free(&b);
        buf_free(&text);
        wp_destroy(wp);
        return NULL;
    }
    wp->text = text.data ? text.data : xstrdup("");
    trie_flatten(wp, &b);
    builder_free(&b);
    for (int c = 0; c < 256; c++)
        wp->root_next[c] = trie_child(wp, 0, (uint8_t)c);
    uint32_t h = 0; /* the node of the prefix ("##"), 0 when no token starts with it */
    for (size_t i = 0; prefix[i] && (i == 0 || h); i++)
        h = trie_child(wp, h, (uint8_t)prefix[i]);
    wp->cont = h;
    for (int c = 0; c < 256; c++)
        wp->cont_next[c] = !*prefix ? wp->root_next[c] : h ? trie_child(wp, h, (uint8_t)c) : 0;
    int32_t unk = wp_token_id(wp, unk_tok, strlen(unk_tok));
    wp->unk = unk >= 0 ? unk : WP_UNK_ABSENT;
    return wp;
}

/* The tokenizer of a tokenizer.json text (see wp_create_mem); *t gets the
 * file's settings when t is not NULL. */
static WordPiece *from_json(const char *data, size_t len, const char *name, int norm, TokJson *t,
                            Err *err) {
    TokJson tj;
    if (tokjson_read(&tj, data, len, name, err)) return NULL;
    WordPiece *wp = build(tj.vocab.data, tj.vocab.len, name, norm, tj.prefix, tj.unk, err);
    if (wp)
        wp->max_chars = tj.max_chars, wp->clean = tj.clean_text, wp->cjk = tj.handle_chinese_chars;
    if (t)
        *t = tj;
    else
        tokjson_free(&tj);
    return wp;
}

WordPiece *wp_create_mem(const char *data, size_t len, const char *name, int norm, Err *err) {
    if (tokjson_is(data, len)) return from_json(data, len, name, norm, NULL, err);
    return build(data, len, name, norm, "##", "[UNK]", err);
}

WordPiece *wp_create_basic(int norm, WpFlavor flavor) {
    Err err;
    WordPiece *wp = wp_create_mem("", 0, "(none)", norm, &err);
    wp->flavor = flavor;
    return wp;
}

WordPiece *wp_create(const char *path, int norm, Err *err) {
    Buf data = {0};
    WordPiece *wp = NULL;
    if (read_text_file(path, &data, err) == 0)
        wp = wp_create_mem(data.data ? data.data : "", data.len, path, norm, err);
    buf_free(&data);
    return wp;
}

/* "--do-lower-case 0 (tokenizer.json: lowercase true)" into out, for
 * the switch that differs */
static void differs(Buf *out, const char *opt, int given, const char *key, const char *file) {
    char t[256];
    snprintf(t, sizeof t, "%s%s %d, but %s has %s %s", out->len ? "; " : "", opt, given, file, key,
             given ? "false" : "true");
    buf_puts(out, t);
}

WordPiece *wp_open(const char *path, int lower, int strip, Buf *note, int *norm_out, Err *err) {
    Buf data = {0};
    WordPiece *wp = NULL;
    if (read_text_file(path, &data, err)) goto out; /* --max-line-bytes holds for both formats */
    const char *d = data.data ? data.data : "";
    if (!tokjson_is(d, data.len)) {
        int l = lower < 0 ? 1 : lower;
        wp = build(d, data.len, path, wp_norm(l, strip < 0 ? l : strip), "##", "[UNK]", err);
        goto out;
    }
    TokJson t;
    wp = from_json(d, data.len, path, 0, &t, err);
    if (!wp) goto out;
    int fl = t.lowercase, fs = t.strip_accents < 0 ? t.lowercase : t.strip_accents;
    Buf why = {0};
    if (lower >= 0 && lower != fl) differs(&why, "--do-lower-case", lower, "lowercase", path);
    int l = lower >= 0 ? lower : fl;
    /* strip_accents null follows the lower-casing in use */
    int s = strip >= 0 ? strip : t.strip_accents < 0 ? l : fs;
    if (strip >= 0 && strip != fs) differs(&why, "--strip-accents", strip, "strip_accents", path);
    if (why.len && note) {
        buf_append(note, why.data, why.len);
        buf_puts(note, ": the command line's setting is used");
    }
    buf_free(&why);
    tokjson_free(&t);
    wp->norm = wp_norm(l, s);
out:
    buf_free(&data);
    if (wp && norm_out) *norm_out = wp->norm;
    return wp;
}

void wp_destroy(WordPiece *wp) {
    if (!wp) return;
    free(wp->base), free(wp->nkids), free(wp->id), free(wp->label);
    free(wp->off), free(wp->text);
    free(wp);
}

size_t wp_vocab_size(const WordPiece *wp) { return wp->nlines; }

int32_t wp_unk_id(const WordPiece *wp) { return wp->unk; }

int wp_norm_of(const WordPiece *wp) { return wp->norm; }

const char *wp_id_token(const WordPiece *wp, int32_t id, size_t *len) {
    if (id == WP_UNK_ABSENT) {
        if (len) *len = 5;
        return "[UNK]";
    }
    if (id < 0 || (size_t)id >= wp->nlines) return NULL;
    const char *s = wp->text + wp->off[id];
    if (len) *len = strlen(s);
    return s;
}

int32_t wp_token_id(const WordPiece *wp, const char *s, size_t n) {
    uint32_t node = 0;
    for (size_t i = 0; i < n; i++)
        if (!(node = trie_child(wp, node, (uint8_t)s[i]))) return -1;
    return wp->id[node];
}

/* ---- BasicTokenizer ---- */

/* tokenization.py's _is_chinese_char: the CJK Unified Ideographs blocks
 * (Hugging Face's is_chinese_char starts the last but two at 2B920). */
static inline int is_cjk(uint32_t cp, int hf) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
           (cp >= 0x2B740 && cp <= 0x2B81F) ||
           (cp >= (hf ? 0x2B920u : 0x2B820u) && cp <= 0x2CEAF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
           (cp >= 0x2F800 && cp <= 0x2FA1F);
}

/* _is_punctuation: every ASCII non-alphanumeric printable, or category P*. */
static inline int is_punct(uint32_t cp) {
    if (cp < 128)
        return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
               (cp >= 123 && cp <= 126);
    return uni_gc_is_punct(uni_gc(cp));
}

static void add_piece(WpScratch *sc, const char *p, size_t n) {
    if (sc->nends == sc->cap) {
        sc->cap = sc->cap ? 2 * sc->cap : 256;
        sc->ends = xrealloc(sc->ends, sc->cap * sizeof *sc->ends);
    }
    buf_append(&sc->pieces, p, n);
    sc->ends[sc->nends++] = sc->pieces.len;
}

/* _run_split_on_punc over s[0..n) (valid UTF-8); with drop_mn, code points
 * of category Mn are deleted first (_run_strip_accents' second half). */
static void split_punct(WpScratch *sc, const char *s, size_t n, int drop_mn) {
    size_t run = 0, i = 0;
    Buf *cur = &sc->run; /* holds the current run when Mn were dropped */
    buf_clear(cur);
    int copying = 0; /* the run is being built in cur rather than taken from s */
    while (i < n) {
        uint32_t cp = (uint8_t)s[i];
        size_t l = 1;
        if (cp >= 0x80) l = utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (!l) l = 1, cp = 0xFFFD;
        if (cp >= 0x80 && drop_mn && uni_gc(cp) == UNI_GC_MN) {
            if (!copying) buf_append(cur, s + run, i - run), copying = 1;
            i += l;
            continue;
        }
        if (is_punct(cp)) {
            if (copying) {
                if (cur->len) add_piece(sc, cur->data, cur->len);
                buf_clear(cur);
                copying = 0;
            } else if (i > run) {
                add_piece(sc, s + run, i - run);
            }
            add_piece(sc, s + i, l);
            i += l;
            run = i;
            continue;
        }
        if (copying) buf_append(cur, s + i, l);
        i += l;
    }
    if (copying) {
        if (cur->len) add_piece(sc, cur->data, cur->len);
    } else if (n > run) {
        add_piece(sc, s + run, n - run);
    }
}

/* Lower-case s[0..n) (valid UTF-8) into out as Rust's char::to_lowercase
 * does, one code point at a time: like str.lower() but without the
 * Final_Sigma context, so every capital sigma becomes U+03C3. */
static void lower_per_char(Buf *out, const char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t l = utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (!l) l = 1;
        if (uni_append_lower(out, s + i, l)) buf_append(out, s + i, l);
        i += l;
    }
}

/* Does s[0..n) hold U+03A3 GREEK CAPITAL LETTER SIGMA (CE A3)? */
static int has_capital_sigma(const char *s, size_t n) {
    for (size_t i = 0; i + 1 < n; i++)
        if ((uint8_t)s[i] == 0xCE && (uint8_t)s[i + 1] == 0xA3) return 1;
    return 0;
}

/* One whitespace-delimited token (after cleaning and CJK spacing). */
static void basic_token(const WordPiece *wp, WpScratch *sc, int ascii) {
    char *t = sc->tok.data;
    size_t n = sc->tok.len;
    if (!n) return;
    size_t nnever = wp->flavor == WP_FLAVOR_BERT ? sizeof never_split / sizeof *never_split : 0;
    for (size_t k = 0; k < nnever; k++) {
        if (strlen(never_split[k]) == n && memcmp(never_split[k], t, n) == 0) {
            add_piece(sc, t, n);
            return;
        }
    }
    if (!wp->norm) {
        split_punct(sc, t, n, 0);
        return;
    }
    if (ascii) { /* str.lower() of ASCII is ASCII; NFD and Mn change nothing */
        if (wp->norm & WP_LOWER)
            for (size_t i = 0; i < n; i++)
                if (t[i] >= 'A' && t[i] <= 'Z') t[i] = (char)(t[i] + 32);
        split_punct(sc, t, n, 0);
        return;
    }
    const char *s = t;
    size_t sn = n;
    if (wp->norm & WP_LOWER) {
        buf_clear(&sc->low);
        if (wp->flavor == WP_FLAVOR_HF && has_capital_sigma(t, n))
            lower_per_char(&sc->low, t, n);
        else if (uni_append_lower(&sc->low, t, n))
            buf_append(&sc->low, t, n);
        s = sc->low.data, sn = sc->low.len;
    }
    if (!(wp->norm & WP_STRIP_ACCENTS)) {
        split_punct(sc, s, sn, 0);
        return;
    }
    buf_clear(&sc->nfd);
    if (uni_append_nfd(&sc->nfd, s, sn)) buf_append(&sc->nfd, s, sn);
    split_punct(sc, sc->nfd.data, sc->nfd.len, 1);
}

/* Fill sc->pieces / sc->ends with the basic tokens of text[0..len). */
static void basic_tokenize(const WordPiece *wp, WpScratch *sc, const char *text, size_t len) {
    const unsigned char *p = (const unsigned char *)text;
    int ascii = 1, hf = wp->flavor == WP_FLAVOR_HF;
    buf_clear(&sc->pieces);
    buf_clear(&sc->tok);
    sc->nends = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp = p[i];
        size_t l = 1;
        if (cp < 0x80) {
            if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r') {
                basic_token(wp, sc, ascii);
                buf_clear(&sc->tok), ascii = 1;
            } else if ((cp >= 0x20 && cp != 0x7F) || !wp->clean) {
                buf_putc(&sc->tok, (char)cp);
            } /* else: NUL and other C0 controls are deleted */
            i++;
            continue;
        }
        l = utf8_decode(p + i, len - i, &cp);
        if (!l) { /* dropped, as U+FFFD is */
            sc->bad_utf8++;
            i += utf8_bad_len(p + i, len - i);
            continue;
        }
        unsigned g = uni_gc(cp);
        /* HF: Cc Cf Co (unicode_categories' is_other); tokenization.py: C* */
        int ctrl = hf ? g == UNI_GC_CC || g == UNI_GC_CF || g == UNI_GC_CO : uni_gc_is_c(g);
        if ((cp == 0xFFFD || ctrl) && wp->clean) {
            /* deleted */
        } else if (g == UNI_GC_ZS || uni_is(cp, UNI_SPACE)) {
            basic_token(wp, sc, ascii);
            buf_clear(&sc->tok), ascii = 1;
        } else if (wp->cjk && is_cjk(cp, hf)) {
            basic_token(wp, sc, ascii);
            buf_clear(&sc->tok);
            buf_append(&sc->tok, p + i, l);
            basic_token(wp, sc, 0);
            buf_clear(&sc->tok), ascii = 1;
        } else {
            buf_append(&sc->tok, p + i, l);
            ascii = 0;
        }
        i += l;
    }
    basic_token(wp, sc, ascii);
    buf_clear(&sc->tok);
}

size_t wp_basic_pieces(const WordPiece *wp, WpScratch *sc, const char *text, size_t len) {
    basic_tokenize(wp, sc, text, len);
    return sc->nends;
}

size_t wp_basic_tokenize(const WordPiece *wp, WpScratch *sc, const char *text, size_t len,
                         Buf *out) {
    basic_tokenize(wp, sc, text, len);
    size_t start = 0;
    for (size_t k = 0; k < sc->nends; k++) {
        if (k) buf_putc(out, ' ');
        buf_append(out, sc->pieces.data + start, sc->ends[k] - start);
        start = sc->ends[k];
    }
    return sc->nends;
}

/* ---- WordpieceTokenizer ---- */

static inline void ids_push(WpIds *ids, int32_t id) {
    if (ids->n == ids->cap) {
        ids->cap = ids->cap ? 2 * ids->cap : 256;
        ids->v = xrealloc(ids->v, ids->cap * sizeof *ids->v);
    }
    ids->v[ids->n++] = id;
}

/* Greedy longest-match-first over one basic token s[0..n). */
static void wordpiece(const WordPiece *wp, const char *s, size_t n, WpIds *ids) {
    const uint8_t *p = (const uint8_t *)s;
    size_t chars = 0;
    for (size_t i = 0; i < n; i++)
        chars += (p[i] & 0xC0) != 0x80;
    if (chars > (size_t)wp->max_chars) {
        ids_push(ids, wp->unk);
        return;
    }
    size_t mark = ids->n, start = 0;
    while (start < n) {
        uint32_t node = start ? wp->cont_next[p[start]] : wp->root_next[p[start]];
        size_t best = 0;
        int32_t best_id = -1;
        for (size_t i = start; node;) {
            i++;
            if (wp->id[node] >= 0 && (i == n || (p[i] & 0xC0) != 0x80))
                best = i, best_id = wp->id[node];
            if (i == n) break;
            node = trie_child(wp, node, p[i]);
        }
        if (!best) {
            ids->n = mark;
            ids_push(ids, wp->unk);
            return;
        }
        ids_push(ids, best_id);
        start = best;
    }
}

size_t wp_encode(const WordPiece *wp, WpScratch *sc, const char *text, size_t len, WpIds *ids) {
    size_t before = ids->n, start = 0;
    basic_tokenize(wp, sc, text, len);
    for (size_t k = 0; k < sc->nends; k++) {
        wordpiece(wp, sc->pieces.data + start, sc->ends[k] - start, ids);
        start = sc->ends[k];
    }
    return ids->n - before;
}

void wp_ids_free(WpIds *ids) {
    free(ids->v);
    *ids = (WpIds){0};
}

void wp_scratch_free(WpScratch *sc) {
    buf_free(&sc->tok), buf_free(&sc->low), buf_free(&sc->nfd), buf_free(&sc->run);
    buf_free(&sc->pieces);
    free(sc->ends);
    *sc = (WpScratch){0};
}
