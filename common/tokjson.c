/* tokjson.c - tokenizer.json for a WordPiece vocabulary (see tokjson.h).
 * The member order and spacing follow tokenizers 0.23's serde output, so
 * that a file saved by Tokenizer.save() and ours compare byte for byte
 * (tests/cli/wptrain.sh does). */
#include "common/tokjson.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

/* One vocabulary line: the token s[0..n). */
typedef struct Tok {
    const char *s;
    size_t n;
} Tok;

/* The tokens of vocab.txt text, in id order (free the array). */
static Tok *split_lines(const char *v, size_t len, size_t *ntok) {
    size_t n = 0, cap = 0;
    Tok *t = NULL;
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(v + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - v) : len, l = end - i;
        if (l && v[i + l - 1] == '\r') l--;
        if (n == cap) t = xrealloc(t, (cap = cap ? 2 * cap : 1024) * sizeof *t);
        t[n++] = (Tok){v + i, l};
        i = end + 1;
    }
    *ntok = n;
    return t;
}

static int tok_is(const Tok *t, const char *s) {
    return t->n == strlen(s) && memcmp(t->s, s, t->n) == 0;
}

/* [PAD] [UNK] [CLS] [SEP] [MASK] or [unusedN]: an added token */
static int is_special(const Tok *t) {
    static const char *const names[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (tok_is(t, names[k])) return 1;
    if (t->n < 9 || memcmp(t->s, "[unused", 7) || t->s[t->n - 1] != ']') return 0;
    for (size_t i = 7; i < t->n - 1; i++)
        if (t->s[i] < '0' || t->s[i] > '9') return 0;
    return 1;
}

static void put_num(Buf *out, size_t x) {
    char num[32];
    buf_append(out, num, (size_t)snprintf(num, sizeof num, "%zu", x));
}

/* The post-processor's template items, each "id:type_id"; an id in
 * brackets is a special token, else a sequence (A or B). */
static void put_template(Buf *out, const char *const *items, int n) {
    buf_puts(out, "[\n");
    for (int i = 0; i < n; i++) {
        const char *it = items[i];
        int special = it[0] == '[';
        buf_puts(out, "      {\n        \"");
        buf_puts(out, special ? "SpecialToken" : "Sequence");
        buf_puts(out, "\": {\n          \"id\": ");
        const char *colon = strchr(it, ':');
        json_append_string_utf8(out, it, (size_t)(colon - it));
        buf_puts(out, ",\n          \"type_id\": ");
        buf_puts(out, colon + 1);
        buf_puts(out, "\n        }\n      }");
        buf_puts(out, i + 1 < n ? ",\n" : "\n");
    }
    buf_puts(out, "    ]");
}

/* The post-processor's special_tokens map: names[i] has id ids[i]. */
static void put_special_map(Buf *out, const char *const *names, const size_t *ids, int n) {
    buf_puts(out, "{\n");
    for (int i = 0; i < n; i++) {
        size_t l = strlen(names[i]);
        buf_puts(out, "      ");
        json_append_string_utf8(out, names[i], l);
        buf_puts(out, ": {\n        \"id\": ");
        json_append_string_utf8(out, names[i], l);
        buf_puts(out, ",\n        \"ids\": [\n          ");
        put_num(out, ids[i]);
        buf_puts(out, "\n        ],\n        \"tokens\": [\n          ");
        json_append_string_utf8(out, names[i], l);
        buf_puts(out, "\n        ]\n      }");
        buf_puts(out, i + 1 < n ? ",\n" : "\n");
    }
    buf_puts(out, "    }");
}

int tokjson_wordpiece(Buf *out, const char *vocab, size_t len, int lower, int strip_accents,
                      Err *err) {
    static const char *const single[] = {"[CLS]:0", "A:0", "[SEP]:0"};
    static const char *const pair[] = {"[CLS]:0", "A:0", "[SEP]:0", "B:1", "[SEP]:1"};
    static const char *const cls_sep[] = {"[CLS]", "[SEP]"};
    size_t n, ids[2] = {0, 0}, last = 0;
    Tok *t = split_lines(vocab, len, &n);
    int found[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 2; k++)
            if (!found[k] && tok_is(&t[i], cls_sep[k])) found[k] = 1, ids[k] = i;
        if (is_special(&t[i])) last = i;
    }
    if (!found[0] || !found[1]) {
        free(t);
        return err_set(err, "the vocabulary has no %s line (tokenizer.json needs its id)",
                       found[0] ? "[SEP]" : "[CLS]");
    }
    buf_puts(out, "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n"
                  "  \"added_tokens\": [\n");
    for (size_t i = 0; i < n; i++) {
        if (!is_special(&t[i])) continue;
        buf_puts(out, "    {\n      \"id\": ");
        put_num(out, i);
        buf_puts(out, ",\n      \"content\": ");
        json_append_string_utf8(out, t[i].s, t[i].n);
        buf_puts(
            out,
            ",\n      \"single_word\": false,\n      \"lstrip\": false,\n      \"rstrip\": false,\n"
            "      \"normalized\": false,\n      \"special\": true\n    }");
        buf_puts(out, i < last ? ",\n" : "\n");
    }
    buf_puts(
        out,
        "  ],\n  \"normalizer\": {\n    \"type\": \"BertNormalizer\",\n    \"clean_text\": true,\n"
        "    \"handle_chinese_chars\": true,\n    \"strip_accents\": ");
    buf_puts(out, strip_accents < 0 ? "null" : strip_accents ? "true" : "false");
    buf_puts(out, ",\n    \"lowercase\": ");
    buf_puts(out, lower ? "true" : "false");
    buf_puts(out,
             "\n  },\n  \"pre_tokenizer\": {\n    \"type\": \"BertPreTokenizer\"\n  },\n"
             "  \"post_processor\": {\n    \"type\": \"TemplateProcessing\",\n    \"single\": ");
    put_template(out, single, 3);
    buf_puts(out, ",\n    \"pair\": ");
    put_template(out, pair, 5);
    buf_puts(out, ",\n    \"special_tokens\": ");
    put_special_map(out, cls_sep, ids, 2);
    buf_puts(out,
             "\n  },\n  \"decoder\": {\n    \"type\": \"WordPiece\",\n    \"prefix\": \"##\",\n"
             "    \"cleanup\": true\n  },\n  \"model\": {\n    \"type\": \"WordPiece\",\n"
             "    \"unk_token\": \"[UNK]\",\n    \"continuing_subword_prefix\": \"##\",\n"
             "    \"max_input_chars_per_word\": ");
    put_num(out, TOKJSON_MAX_WORD_CHARS);
    buf_puts(out, ",\n    \"vocab\": {\n");
    for (size_t i = 0; i < n; i++) {
        buf_puts(out, "      ");
        json_append_string_utf8(out, t[i].s, t[i].n);
        buf_puts(out, ": ");
        put_num(out, i);
        buf_puts(out, i + 1 < n ? ",\n" : "\n");
    }
    buf_puts(out, "    }\n  }\n}");
    free(t);
    return 0;
}

/* ---- reading ---- */

int tokjson_is(const char *data, size_t len) {
    size_t i = 0;
    if (len >= 3 && !memcmp(data, "\xEF\xBB\xBF", 3)) i = 3;
    while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
        i++;
    if (i >= len || data[i] != '{') return 0;
    int close = 0;
    for (i++; i < len; i++) {
        if (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') continue;
        if (close || data[i] != '}') return !close && data[i] == '"';
        close = 1; /* "{}": then only whitespace */
    }
    return close;
}

/* One token of the file: its id and its decoded text in a pool. */
typedef struct IdTok {
    int64_t id;
    size_t off, n;
} IdTok;

/* What the reader carries: the file for offsets, the tokens found. */
typedef struct Reader {
    const char *data, *name;
    Err *err;
    Buf pool; /* decoded token texts */
    IdTok *tok;
    size_t ntok, cap;
} Reader;

/* Report a JSON syntax error of iterator it (walking a span inside the file). */
static int syntax(Reader *r, const JsonIter *it) {
    return err_set(r->err, "%s: byte %zu: %s", r->name, (size_t)(it->base - r->data) + it->pos,
                   it->error);
}

/* The raw value of member key of the object span v[0..n), or NULL. */
static const char *member(Reader *r, const char *v, size_t n, const char *key, size_t *vn,
                          int *bad) {
    JsonIter it;
    const char *k, *val;
    size_t kn;
    *bad = 0;
    if (json_iter_init(&it, v, n, '{')) return *bad = syntax(r, &it), NULL;
    int rc;
    while ((rc = json_iter_next(&it, &k, &kn, &val, vn)) == 1)
        if (json_key_is(k, kn, key)) return val;
    if (rc < 0) *bad = syntax(r, &it);
    return NULL;
}

static int is_lit(const char *v, size_t n, const char *lit) {
    return v && n == strlen(lit) && !memcmp(v, lit, n);
}

/* A boolean member: 1 or 0 into *x; absent: dflt; null: -1 when nullable.
 * Returns 0 or -1 with the error set. */
static int get_bool(Reader *r, const char *obj, size_t on, const char *what, const char *key,
                    int dflt, int nullable, int *x) {
    size_t vn;
    int bad;
    const char *v = member(r, obj, on, key, &vn, &bad);
    if (bad) return -1;
    if (!v)
        *x = dflt;
    else if (is_lit(v, vn, "true"))
        *x = 1;
    else if (is_lit(v, vn, "false"))
        *x = 0;
    else if (nullable && is_lit(v, vn, "null"))
        *x = -1;
    else
        return err_set(r->err, "%s: %s.%s: true or false expected, not %.*s", r->name, what, key,
                       (int)(vn > 40 ? 40 : vn), v);
    return 0;
}

/* A string member into out (cap bytes with the NUL); absent: dflt. */
static int get_str(Reader *r, const char *obj, size_t on, const char *what, const char *key,
                   const char *dflt, char *out, size_t cap) {
    size_t vn;
    int bad;
    const char *v = member(r, obj, on, key, &vn, &bad);
    if (bad) return -1;
    if (!v) {
        snprintf(out, cap, "%s", dflt);
        return 0;
    }
    Buf s = {0};
    int rc = 0;
    if (!vn || v[0] != '"' || json_decode_string(&s, v, vn))
        rc = err_set(r->err, "%s: %s.%s: a string expected", r->name, what, key);
    else if (s.len + 1 > cap || memchr(s.data, 0, s.len))
        rc = err_set(r->err, "%s: %s.%s: longer than %zu bytes", r->name, what, key, cap - 1);
    else
        snprintf(out, cap, "%.*s", (int)s.len, s.data);
    buf_free(&s);
    return rc;
}

/* The "type" of the object member key: into type (empty when the member
 * is null); *obj / *on the object. Returns 0, 1 when absent, -1 error. */
static int get_typed(Reader *r, const char *top, size_t tn, const char *key, char *type, size_t cap,
                     const char **obj, size_t *on) {
    int bad;
    *obj = member(r, top, tn, key, on, &bad);
    if (bad) return -1;
    if (!*obj) return 1;
    *type = 0;
    if (is_lit(*obj, *on, "null")) return 0;
    if (get_str(r, *obj, *on, key, "type", "", type, cap)) return -1;
    if (!*type) return err_set(r->err, "%s: %s has no type", r->name, key);
    return 0;
}

static void add_tok(Reader *r, int64_t id, size_t off, size_t n) {
    if (r->ntok == r->cap)
        r->tok = xrealloc(r->tok, (r->cap = r->cap ? 2 * r->cap : 4096) * sizeof *r->tok);
    r->tok[r->ntok++] = (IdTok){id, off, n};
}

/* model.vocab: {"token": id, ...} */
static int read_vocab(Reader *r, const char *v, size_t vn) {
    JsonIter it;
    const char *k, *val;
    size_t kn, valn;
    int rc;
    if (json_iter_init(&it, v, vn, '{')) return syntax(r, &it);
    while ((rc = json_iter_next(&it, &k, &kn, &val, &valn)) == 1) {
        int64_t id;
        size_t off = r->pool.len;
        if (json_decode_string(&r->pool, k - 1, kn + 2))
            return err_set(r->err, "%s: byte %zu: a malformed token in model.vocab", r->name,
                           (size_t)(k - r->data));
        if ((valn && val[0] == '"') || json_to_i64(val, valn, &id) || id < 0 || id >= INT32_MAX)
            return err_set(r->err,
                           "%s: model.vocab: token \"%.*s\": id %.*s is not a whole number "
                           "in [0, 2^31 - 1)",
                           r->name, (int)(r->pool.len - off > 60 ? 60 : r->pool.len - off),
                           r->pool.data + off, (int)(valn > 20 ? 20 : valn), val);
        add_tok(r, id, off, r->pool.len - off);
    }
    return rc < 0 ? syntax(r, &it) : 0;
}

/* added_tokens: [{"id": N, "content": "...", ...}, ...] */
static int read_added(Reader *r, const char *v, size_t vn) {
    JsonIter it;
    const char *k, *val;
    size_t kn, valn;
    int rc;
    if (is_lit(v, vn, "null")) return 0;
    if (json_iter_init(&it, v, vn, '[')) return syntax(r, &it);
    while ((rc = json_iter_next(&it, &k, &kn, &val, &valn)) == 1) {
        size_t idn, cn;
        int bad;
        int64_t id;
        const char *idv = member(r, val, valn, "id", &idn, &bad);
        if (bad) return -1;
        const char *cv = member(r, val, valn, "content", &cn, &bad);
        if (bad) return -1;
        size_t off = r->pool.len;
        if (!idv || !cv || json_to_i64(idv, idn, &id) || id < 0 || id >= INT32_MAX ||
            cv[0] != '"' || json_decode_string(&r->pool, cv, cn))
            return err_set(r->err,
                           "%s: byte %zu: an added token without a whole-number id and a "
                           "content string",
                           r->name, (size_t)(val - r->data));
        add_tok(r, id, off, r->pool.len - off);
    }
    return rc < 0 ? syntax(r, &it) : 0;
}

static int by_id(const void *a, const void *b) {
    int64_t x = ((const IdTok *)a)->id, y = ((const IdTok *)b)->id;
    return x < y ? -1 : x > y;
}

/* The tokens, sorted by id, into t->vocab: ids 0..n-1 each once (an added
 * token may repeat a vocabulary entry of the same id and text). */
static int join_vocab(Reader *r, TokJson *t) {
    qsort(r->tok, r->ntok, sizeof *r->tok, by_id);
    for (size_t i = 0; i < r->ntok; i++) {
        const IdTok *a = &r->tok[i];
        const char *s = r->pool.data + a->off;
        if (i && a->id == r->tok[i - 1].id) {
            const IdTok *p = &r->tok[i - 1];
            if (p->n == a->n && !memcmp(r->pool.data + p->off, s, a->n)) continue;
            return err_set(r->err, "%s: id %lld is given to two tokens, \"%.*s\" and \"%.*s\"",
                           r->name, (long long)a->id, (int)(p->n > 60 ? 60 : p->n),
                           r->pool.data + p->off, (int)(a->n > 60 ? 60 : a->n), s);
        }
        if (a->id != (int64_t)t->ntokens)
            return err_set(r->err,
                           "%s: no token has id %zu (the ids must be 0 .. N-1, each used once)",
                           r->name, t->ntokens);
        if (memchr(s, '\n', a->n) || memchr(s, '\r', a->n) || memchr(s, 0, a->n) || !a->n)
            return err_set(r->err,
                           "%s: token %lld is empty or holds a line break or NUL: not a vocab.txt "
                           "line",
                           r->name, (long long)a->id);
        buf_append(&t->vocab, s, a->n);
        buf_putc(&t->vocab, '\n');
        t->ntokens++;
    }
    if (!t->ntokens) return err_set(r->err, "%s: model.vocab is empty", r->name);
    return 0;
}

/* The pieces of the file besides the vocabulary: model settings,
 * normalizer, pre-tokenizer; then the vocabulary. */
static int read_all(Reader *r, TokJson *t, const char *data, size_t len) {
    char type[64];
    const char *obj, *v;
    size_t on, vn;
    int bad, rc;
    JsonIter top;
    if (json_iter_init(&top, data, len, '{')) return syntax(r, &top);
    {
        const char *k;
        size_t kn;
        while ((rc = json_iter_next(&top, &k, &kn, &v, &vn)) == 1) {
        }
        if (rc < 0) return syntax(r, &top);
    }
    rc = get_typed(r, data, len, "model", type, sizeof type, &obj, &on);
    if (rc < 0) return -1;
    if (rc || !*type)
        return err_set(r->err, "%s: no model: not a tokenizer.json of Hugging Face's tokenizers",
                       r->name);
    if (strcmp(type, "WordPiece"))
        return err_set(r->err,
                       "%s: model type %s: only WordPiece models (BERT's tokenizer) are read, "
                       "not BPE, Unigram or WordLevel",
                       r->name, type);
    if (get_str(r, obj, on, "model", "unk_token", "[UNK]", t->unk, sizeof t->unk) ||
        get_str(r, obj, on, "model", "continuing_subword_prefix", "##", t->prefix,
                sizeof t->prefix))
        return -1;
    v = member(r, obj, on, "max_input_chars_per_word", &vn, &bad);
    if (bad) return -1;
    int64_t mc = TOKJSON_MAX_WORD_CHARS;
    if (v && (json_to_i64(v, vn, &mc) || mc < 1 || mc > INT32_MAX || v[0] == '"'))
        return err_set(r->err,
                       "%s: model.max_input_chars_per_word: a positive whole number "
                       "expected",
                       r->name);
    t->max_chars = (int)mc;
    v = member(r, obj, on, "vocab", &vn, &bad);
    if (bad) return -1;
    if (!v) return err_set(r->err, "%s: the WordPiece model has no vocab", r->name);
    if (read_vocab(r, v, vn)) return -1;
    v = member(r, data, len, "added_tokens", &vn, &bad);
    if (bad || (v && read_added(r, v, vn))) return -1;
    /* the normalizer: BertNormalizer's switches; null normalizes nothing */
    t->clean_text = t->handle_chinese_chars = t->lowercase = 1, t->strip_accents = -1;
    rc = get_typed(r, data, len, "normalizer", type, sizeof type, &obj, &on);
    if (rc < 0) return -1;
    if (rc == 1 || !*type) {
        t->clean_text = t->handle_chinese_chars = t->lowercase = t->strip_accents = 0;
    } else if (strcmp(type, "BertNormalizer")) {
        return err_set(r->err,
                       "%s: normalizer %s: only BertNormalizer (or none) is read; BERT's "
                       "tokenizer cannot apply another",
                       r->name, type);
    } else if (get_bool(r, obj, on, "normalizer", "clean_text", 1, 0, &t->clean_text) ||
               get_bool(r, obj, on, "normalizer", "handle_chinese_chars", 1, 0,
                        &t->handle_chinese_chars) ||
               get_bool(r, obj, on, "normalizer", "lowercase", 1, 0, &t->lowercase) ||
               get_bool(r, obj, on, "normalizer", "strip_accents", -1, 1, &t->strip_accents)) {
        return -1;
    }
    rc = get_typed(r, data, len, "pre_tokenizer", type, sizeof type, &obj, &on);
    if (rc < 0) return -1;
    if (rc == 1 || strcmp(type, "BertPreTokenizer"))
        return err_set(r->err,
                       "%s: pre_tokenizer %s: only BertPreTokenizer (BERT's split at whitespace "
                       "and punctuation) is read",
                       r->name, rc == 1 || !*type ? "null" : type);
    return join_vocab(r, t);
}

int tokjson_read(TokJson *t, const char *data, size_t len, const char *name, Err *err) {
    memset(t, 0, sizeof *t);
    Reader r = {.data = data, .name = name, .err = err};
    size_t skip = len >= 3 && !memcmp(data, "\xEF\xBB\xBF", 3) ? 3 : 0;
    int rc = read_all(&r, t, data + skip, len - skip);
    buf_free(&r.pool);
    free(r.tok);
    if (rc) tokjson_free(t);
    return rc;
}

void tokjson_free(TokJson *t) {
    buf_free(&t->vocab);
    memset(t, 0, sizeof *t);
}
