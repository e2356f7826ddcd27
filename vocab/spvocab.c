/* spvocab.c - SentencePiece .vocab to WordPiece vocab.txt (see spvocab.h).
 *
 * Source of the behaviour: sent2wordpiece.py at spyysalo/sent2wordpiece
 * 47ba44e (load_vocab, filter_vocab, convert_vocab, add_special,
 * add_chars), as specified in the pipeline spec, section 8.
 */
#define _GNU_SOURCE /* memrchr */
#include "vocab/spvocab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/uniprop.h"
#include "common/utf8.h"

#define SPM_BOUNDARY "\xe2\x96\x81" /* U+2581 LOWER ONE EIGHTH BLOCK */
#define SPM_BOUNDARY_LEN 3

/* ---- VocabList ---- */

void vocablist_push(VocabList *l, const char *s, size_t n, uint64_t line) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->off = xrealloc(l->off, l->cap * sizeof *l->off);
        l->len = xrealloc(l->len, l->cap * sizeof *l->len);
        l->line = xrealloc(l->line, l->cap * sizeof *l->line);
    }
    l->off[l->n] = l->text.len;
    l->len[l->n] = (uint32_t)n;
    l->line[l->n] = line;
    l->n++;
    buf_append(&l->text, s, n);
    buf_putc(&l->text, '\0');
}

void vocablist_free(VocabList *l) {
    buf_free(&l->text);
    free(l->off);
    free(l->len);
    free(l->line);
    memset(l, 0, sizeof *l);
}

/* ---- parsing ---- */

/* Is s[0..n) a score as sent2wordpiece's regex accepts it: -?[0-9.]+ */
static int score_ok(const char *s, size_t n) {
    size_t i = 0;
    if (i < n && s[i] == '-') i++;
    if (i == n) return 0;
    for (; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) return 0;
    return 1;
}

int spm_vocab_parse(const char *data, size_t len, const char *name, VocabList *pieces,
                    double **scores, Err *err) {
    StrMap seen;
    strmap_init(&seen, len / 16);
    size_t cap = 0;
    double *sc = NULL;
    uint64_t ln = 0;
    size_t p = 0;
    int rc = 0;
    while (p < len) {
        /* one line in Python's universal-newline mode: \n, \r\n or \r ends it */
        size_t s = p;
        while (p < len && data[p] != '\n' && data[p] != '\r')
            p++;
        size_t e = p;
        if (p < len) p += (data[p] == '\r' && p + 1 < len && data[p + 1] == '\n') ? 2 : 1;
        ln++;
        const char *line = data + s;
        size_t n = e - s;
        if (utf8_valid_prefix(line, n) != n) {
            rc = err_set(err, "%s:%llu: invalid UTF-8", name, (unsigned long long)ln);
            break;
        }
        const char *tab = n ? memrchr(line, '\t', n) : NULL;
        if (!tab || !score_ok(tab + 1, (size_t)(line + n - tab - 1))) {
            char shown[UTF8_QUOTE_CAP];
            rc = err_set(err, "%s:%llu: not PIECE<TAB>SCORE (SCORE as -?[0-9.]+): \"%s\"", name,
                         (unsigned long long)ln, utf8_quote(shown, sizeof shown, line, n));
            break;
        }
        size_t plen = (size_t)(tab - line);
        uint64_t *slot = strmap_slot(&seen, line, plen);
        if (*slot) {
            char shown[UTF8_QUOTE_CAP];
            rc = err_set(err, "%s:%llu: duplicate piece \"%s\" (first on line %llu)", name,
                         (unsigned long long)ln, utf8_quote(shown, sizeof shown, line, plen),
                         (unsigned long long)*slot);
            break;
        }
        *slot = ln;
        if (scores) {
            if (pieces->n >= cap) {
                cap = cap ? 2 * cap : 1024;
                sc = xrealloc(sc, cap * sizeof *sc);
            }
            char num[64]; /* score_ok() let only [-0-9.] through */
            size_t sn = (size_t)(line + n - tab - 1);
            if (sn > sizeof num - 1) sn = sizeof num - 1;
            memcpy(num, tab + 1, sn);
            num[sn] = '\0';
            sc[pieces->n] = strtod(num, NULL);
        }
        vocablist_push(pieces, line, plen, ln);
    }
    strmap_free(&seen);
    if (scores) {
        if (rc) free(sc), sc = NULL;
        *scores = sc;
    }
    return rc;
}

/* ---- conversion ---- */

static int is_spm_special(const char *s, size_t n) {
    return (n == 5 && memcmp(s, "<unk>", 5) == 0) || (n == 3 && memcmp(s, "<s>", 3) == 0) ||
           (n == 4 && memcmp(s, "</s>", 4) == 0);
}

/* Python's `not t or t.isspace()` for valid UTF-8 t[0..n). */
static int empty_or_space(const char *t, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t k = utf8_decode((const unsigned char *)t + i, n - i, &cp);
        if (!k || !uni_is(cp, UNI_SPACE)) return 0;
        i += k;
    }
    return 1;
}

static void push_str(VocabList *l, const char *s) { vocablist_push(l, s, strlen(s), 0); }

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Append every character of the tokens from index `from` on (a leading
 * "##" removed) that is not a token yet, in code-point order; with `both`,
 * each one also as a "##" continuation (c, then ##c). */
static void add_chars(VocabList *out, size_t from, int both) {
    StrMap tokens;
    strmap_init(&tokens, 2 * out->n);
    uint32_t *cps = NULL;
    size_t ncp = 0, cap = 0;
    for (size_t i = 0; i < out->n; i++) {
        const char *t = vocablist_at(out, i);
        size_t n = out->len[i];
        *strmap_slot(&tokens, t, n) = 1;
        if (i < from) continue;
        if (n >= 2 && t[0] == '#' && t[1] == '#') t += 2, n -= 2;
        for (size_t j = 0; j < n;) {
            uint32_t cp = 0xFFFD;
            size_t k = utf8_decode((const unsigned char *)t + j, n - j, &cp);
            j += k ? k : 1;
            if (ncp == cap) {
                cap = cap ? 2 * cap : 4096;
                cps = xrealloc(cps, cap * sizeof *cps);
            }
            cps[ncp++] = cp;
        }
    }
    if (ncp) qsort(cps, ncp, sizeof *cps, cmp_u32); /* cps is NULL for no characters */
    Buf c = {0};
    for (size_t i = 0; i < ncp; i++) {
        if (i && cps[i] == cps[i - 1]) continue;
        buf_clear(&c);
        buf_append(&c, "##", 2);
        utf8_append_cp(&c, cps[i]);
        if (!strmap_get(&tokens, c.data + 2, c.len - 2))
            vocablist_push(out, c.data + 2, c.len - 2, 0);
        if (both && !strmap_get(&tokens, c.data, c.len)) vocablist_push(out, c.data, c.len, 0);
    }
    buf_free(&c);
    free(cps);
    strmap_free(&tokens);
}

int vocab_convert(const VocabList *pieces, const VocabConvOpts *o, VocabList *out,
                  VocabConvStats *st, Err *err) {
    memset(st, 0, sizeof *st);
    if (o->unused < 0) return err_set(err, "negative number of [unused] tokens: %d", o->unused);
    st->read = pieces->n;
    char name[32];
    if (!o->no_special) {
        push_str(out, "[PAD]");
        for (int i = 0; i < o->unused; i++) {
            snprintf(name, sizeof name, "[unused%d]", i);
            push_str(out, name);
        }
        push_str(out, "[UNK]");
        push_str(out, "[CLS]");
        push_str(out, "[SEP]");
        push_str(out, "[MASK]");
    }
    size_t nspecial = out->n;
    Buf tok = {0};
    for (size_t i = 0; i < pieces->n; i++) {
        const char *p = vocablist_at(pieces, i);
        size_t n = pieces->len[i];
        if (!o->keep_special && is_spm_special(p, n)) continue;
        st->filtered++;
        buf_clear(&tok);
        if (n >= SPM_BOUNDARY_LEN && memcmp(p, SPM_BOUNDARY, SPM_BOUNDARY_LEN) == 0) {
            buf_append(&tok, p + SPM_BOUNDARY_LEN, n - SPM_BOUNDARY_LEN);
        } else {
            buf_append(&tok, "##", 2);
            buf_append(&tok, p, n);
        }
        if (empty_or_space(tok.data, tok.len)) continue;
        vocablist_push(out, tok.data, tok.len, pieces->line[i]);
    }
    buf_free(&tok);
    st->converted = out->n - nspecial;
    st->extended = out->n;
    if (o->add_chars)
        add_chars(out, o->add_chars == VOCABCONV_CHARS_BOTH ? nspecial : 0,
                  o->add_chars == VOCABCONV_CHARS_BOTH);
    st->with_chars = out->n;

    if (o->size >= 0 && (size_t)o->size < out->n) {
        size_t keep = (size_t)o->size;
        st->dropped = out->n - keep;
        utf8_quote(st->first_dropped, sizeof st->first_dropped, vocablist_at(out, keep),
                   out->len[keep]);
        st->first_dropped_line = out->line[keep];
        out->text.len = out->off[keep];
        out->text.data[out->text.len] = '\0';
        out->n = keep;
    } else if (o->size >= 0) {
        int base = o->no_special ? 0 : o->unused;
        while (out->n < (size_t)o->size) {
            snprintf(name, sizeof name, "[unused%llu]", (unsigned long long)(base + st->padded));
            push_str(out, name);
            st->padded++;
        }
    }
    st->total = out->n;

    StrMap seen;
    strmap_init(&seen, out->n);
    for (size_t i = 0; i < out->n; i++) {
        uint64_t *v = strmap_slot(&seen, vocablist_at(out, i), out->len[i]);
        if (*v && !st->duplicates++)
            utf8_quote(st->first_duplicate, sizeof st->first_duplicate, vocablist_at(out, i),
                       out->len[i]);
        *v = 1;
    }
    strmap_free(&seen);
    return 0;
}
