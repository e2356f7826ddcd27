/* tokjson.c - tokenizer.json for a WordPiece vocabulary (see tokjson.h).
 * The member order and spacing follow tokenizers 0.23's serde output, so
 * that a file saved by Tokenizer.save() and ours compare byte for byte
 * (tests/cli/wptrain.sh does). */
#include "common/tokjson.h"

#include <stdio.h>
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
