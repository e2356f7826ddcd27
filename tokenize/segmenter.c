/* segmenter.c - sentence boundaries by language rules and word lists.
 *
 * One pass over the bytes of a paragraph. Only the sentence-final marks
 * ". ! ? …" are looked at closely; everything else costs one table lookup
 * per byte. At a mark the splitter gathers the run of marks ("?!", "...",
 * the spaced ellipsis ". . ."), the closing quotes and brackets after it,
 * and requires white space after that: a mark inside a token (1.5, e.g.,
 * www.example.com, jane@example.com) never ends a sentence. Then it looks
 * at the token before the mark (W) and the word after the white space (N):
 *
 *   N starts lower-case, or with a symbol       no boundary (English: see
 *                                               below)
 *   W is an abbreviation from the word list     none, unless the entry is
 *                                               =end ("etc.", "stb.") and N
 *                                               is upper-case
 *   W is one letter (initial "E.", "J.")        no boundary (English "I"
 *                                               after a lower-case word is
 *                                               the pronoun)
 *   W is an acronym with dots (U.S., Ph.D.)     boundary only before a
 *                                               listed sentence starter
 *   W is a number                               language rules, below
 *   W is a Roman numeral (Hungarian)            no boundary ("XIV. Lajos")
 *   otherwise                                   boundary before an upper-
 *                                               case letter, digit or quote
 *
 * Numbers: Hungarian writes ordinals and dates with a period ("1848.
 * március 15-én", "a 2. fejezet", "2002. IV. 25."), so a number followed by
 * a digit, a Roman numeral, a month name, a dash, or one preceded by an
 * article (=det: "a 2. Magyar Hadsereg") or opening the sentence (list
 * items) is not a boundary. English ends a sentence after a number unless
 * it opens the sentence ("1. The first item"); the generic rules treat
 * short integers as ordinals (German "am 3. Oktober").
 *
 * English informal text (forums, reviews, e-mail) often starts a sentence
 * in lower case: "too bad. too many bugs", "did it work? is it worth it".
 * There a lower-case N follows a boundary after a single period when W is
 * an ordinary word (not listed, not an initial, acronym, number or Roman
 * numeral, no inner period), and after "?" or "!" when W is a lower-case
 * word ("Yahoo! and", "n! is" stay whole); never after an ellipsis or when
 * quotes or brackets close or open around the gap ("Why?" she asked). A
 * smiley after the final mark (". :)") stays with its sentence.
 *
 * Two more rules come from the English "Golden Rules" of the
 * pragmatic_segmenter project (MIT, github.com/diasks2/pragmatic_segmenter):
 * a paragraph that opens with a list marker ("1.", "2)", "a.", "•") is cut
 * before the following markers of the same kind, and "word. . . . Next" is a
 * period followed by an ellipsis that opens the next sentence.
 */
#include "tokenize/segmenter.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/hash.h"
#include "common/io.h"
#include "common/uniprop.h"
#include "common/utf8.h"

/* Word-list flags, stored as the StrMap value. */
enum {
    W_ABBR = 1 << 0,  /* listed with its final period */
    W_END = 1 << 1,   /* the abbreviation often ends a sentence */
    W_NUM = 1 << 2,   /* an abbreviation only before a number ("No. 5") */
    W_MONTH = 1 << 3, /* a month name or its abbreviation */
    W_START = 1 << 4, /* a frequent first word of a sentence */
    W_DET = 1 << 5,   /* an article: a number after it is an ordinal */
};

#define MAX_WORD 64  /* longer words are never looked up */
#define MAX_BACK 256 /* how far back the token before a mark may start */
#define MAX_PAREN_SCAN 4096
#define MAX_FORCED 256 /* list-item cuts per paragraph */

struct Segmenter {
    SentLang lang;
    StrMap words; /* lower-cased word (abbreviations without the period) -> flags */
};

/* ---- characters ---- */

/* Bytes that may start a sentence-final mark: . ! ? and the first byte of
 * U+2026 (…). */
static const unsigned char is_mark_byte[256] = {['.'] = 1, ['!'] = 1, ['?'] = 1, [0xE2] = 1};

/* Decode the code point at s[i] (i < n); invalid bytes read as U+FFFD of
 * length 1, so every byte sequence can be walked. */
static inline uint32_t cp_at(const unsigned char *s, size_t n, size_t i, size_t *k) {
    if (s[i] < 0x80) {
        *k = 1;
        return s[i];
    }
    uint32_t cp;
    size_t m = utf8_decode(s + i, n - i, &cp);
    if (!m) {
        *k = 1;
        return 0xFFFD;
    }
    *k = m;
    return cp;
}

/* Start of the code point that ends just before s[i] (i > 0). */
static inline size_t cp_start_before(const unsigned char *s, size_t i) {
    size_t j = i - 1;
    while (j > 0 && i - j < 4 && (s[j] & 0xC0) == 0x80)
        j--;
    return j;
}

#define IS_DIGIT(b) ((unsigned)((b) - '0') < 10u)
#define IS_LOWER(b) ((unsigned)((b) - 'a') < 26u)

static inline int is_space_cp(uint32_t c) {
    if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D);
    return uni_is(c, UNI_SPACE);
}

static inline int is_alnum_cp(uint32_t c) {
    if (c < 0x80) return (c | 0x20) - 'a' < 26 || c - '0' < 10;
    return uni_is(c, UNI_ALPHA | UNI_DIGIT);
}

/* Quotes and brackets that close what the sentence opened; they stay with
 * the sentence when they follow its final mark. */
static int is_closer(uint32_t c) {
    switch (c) {
    case '"':
    case '\'':
    case ')':
    case ']':
    case '}':
    case 0x2019:
    case 0x201D:
    case 0x00BB:
    case 0x00AB:
    case 0x203A:
    case 0x2039:
        return 1;
    }
    return 0;
}

/* Quotes and brackets that may come before the first word of a sentence. */
static int is_opener(uint32_t c) {
    switch (c) {
    case '"':
    case '\'':
    case '(':
    case '[':
    case '{':
    case 0x00BF:
    case 0x00A1:
    case 0x2018:
    case 0x201A:
    case 0x201C:
    case 0x201E:
    case 0x00AB:
    case 0x00BB:
    case 0x2039:
    case 0x203A:
        return 1;
    }
    return 0;
}

static int is_dash(uint32_t c) { return c == '-' || (c >= 0x2012 && c <= 0x2015); }

static int is_bullet(uint32_t c) {
    return c == 0x2022 || c == 0x2023 || c == 0x2043 || c == 0x25E6 || c == 0x25AA || c == 0x25CF ||
           c == 0x25B8;
}

static size_t skip_space(const unsigned char *s, size_t n, size_t i) {
    while (i < n) {
        if (s[i] == ' ') {
            i++;
            continue;
        }
        size_t k;
        if (!is_space_cp(cp_at(s, n, i, &k))) break;
        i += k;
    }
    return i;
}

/* End of s[from..i) without trailing white space. */
static size_t trim_end(const unsigned char *s, size_t from, size_t i) {
    while (i > from) {
        size_t j = cp_start_before(s, i);
        if (j < from) break;
        size_t k;
        if (!is_space_cp(cp_at(s, i, j, &k))) break;
        i = j;
    }
    return i;
}

/* Lower-case s[0..n) into out[MAX_WORD]; returns the length, 0 if too long. */
static size_t fold(const unsigned char *s, size_t n, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t k;
        uint32_t c = cp_at(s, n, i, &k);
        i += k;
        if (c < 0x80) {
            if (o + 1 > MAX_WORD) return 0;
            out[o++] = (char)(c - 'A' < 26 ? c | 0x20 : c);
            continue;
        }
        c = uni_tolower(c);
        if (o + 4 > MAX_WORD) return 0;
        o += utf8_encode(c, (unsigned char *)out + o);
    }
    return o;
}

static unsigned lookup(const Segmenter *ss, const unsigned char *s, size_t n) {
    char key[MAX_WORD];
    size_t k = n ? fold(s, n, key) : 0;
    if (!k) return 0;
    const uint64_t *v = strmap_get(&ss->words, key, k);
    return v ? (unsigned)*v : 0;
}

/* ---- word lists ---- */

int segmenter_add(Segmenter *ss, const char *line, size_t len, Err *err) {
    const unsigned char *s = (const unsigned char *)line;
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i == len || s[i] == '#') return 0;
    size_t w0 = i;
    while (i < len && s[i] != ' ' && s[i] != '\t')
        i++;
    size_t w1 = i;
    unsigned flags = 0;
    if (w1 - w0 > 1 && s[w1 - 1] == '.') flags |= W_ABBR, w1--;
    while (i < len) {
        while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
            i++;
        if (i == len || s[i] == '#') break;
        size_t f0 = i;
        while (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            i++;
        const char *f = line + f0;
        size_t fn = i - f0;
#define FLAG_IS(lit) (fn == sizeof lit - 1 && !memcmp(f, lit, fn))
        if (FLAG_IS("=end"))
            flags |= W_END;
        else if (FLAG_IS("=num"))
            flags |= W_NUM;
        else if (FLAG_IS("=month"))
            flags |= W_MONTH;
        else if (FLAG_IS("=start"))
            flags |= W_START;
        else if (FLAG_IS("=det"))
            flags |= W_DET;
        else {
            char q[UTF8_QUOTE_CAP];
            return err_set(err, "unknown flag '%s' (expected =end, =num, =month, =start or =det)",
                           utf8_quote(q, sizeof q, f, fn)),
                   SEGMENTER_EBAD;
        }
#undef FLAG_IS
    }
    if ((flags & (W_END | W_NUM)) && !(flags & W_ABBR)) {
        char q[UTF8_QUOTE_CAP];
        return err_set(err, "'%s': =end and =num are for abbreviations, which end in '.'",
                       utf8_quote(q, sizeof q, line + w0, w1 - w0)),
               SEGMENTER_EBAD;
    }
    char key[MAX_WORD];
    size_t k = fold(s + w0, w1 - w0, key);
    if (!k) return err_set(err, "word longer than %d bytes", MAX_WORD - 1), SEGMENTER_EBAD;
    *strmap_slot(&ss->words, key, k) |= flags;
    return 0;
}

int segmenter_load(Segmenter *ss, const char *path, Err *err) {
    if (input_note(path, err)) return SEGMENTER_EBAD; /* an output of this run's name */
    FILE *fp = fopen(path, "rb");
    if (!fp) return err_set(err, "%s: %s", path, strerror(errno)), SEGMENTER_EMISSING;
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(fp);
        return err_set(err, "%s: %s", path, strerror(EISDIR)), SEGMENTER_EMISSING;
    }
    char line[1024];
    unsigned lineno = 0;
    int rc = 0;
    while (fgets(line, sizeof line, fp)) { /* word lists are short lines of text */
        lineno++;
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            n--;
        Err e;
        if (segmenter_add(ss, line, n, &e)) {
            rc = (err_set(err, "%s:%u: %s", path, lineno, e.msg), SEGMENTER_EBAD);
            break;
        }
    }
    if (!rc && ferror(fp))
        rc = (err_set(err, "%s: read error: %s", path, strerror(errno)), SEGMENTER_EMISSING);
    fclose(fp);
    return rc;
}

static int valid_lang(const char *l) {
    size_t n = strlen(l);
    if (n == 0 || n > 15) return 0;
    for (size_t i = 0; i < n; i++)
        if (!(IS_LOWER(l[i] | 0x20) || IS_DIGIT(l[i]) || l[i] == '_' || l[i] == '-')) return 0;
    return 1;
}

static int load_data(Segmenter *ss, const SegmenterOpts *o, const char *file, int required,
                     Err *err) {
    char rel[64], path[4096];
    snprintf(rel, sizeof rel, "abbrev/%s.txt", file);
    if (o->data_dir)
        snprintf(path, sizeof path, "%s/%s", o->data_dir, rel);
    else
        cli_data_path(rel, path, sizeof path);
    if (!required && access(path, F_OK) != 0) return 0;
    return segmenter_load(ss, path, err);
}

Segmenter *segmenter_create(const SegmenterOpts *o, int *code, Err *err) {
    SegmenterOpts none = {0};
    if (!o) o = &none;
    const char *lang = o->lang ? o->lang : "en";
    int rc = 0;
    Segmenter *ss = xcalloc(1, sizeof *ss);
    strmap_init(&ss->words, 1024);
    ss->lang = !strcmp(lang, "hu") ? SENT_HU : !strcmp(lang, "en") ? SENT_EN : SENT_GENERIC;
    if (!valid_lang(lang)) rc = (err_set(err, "bad language code '%s'", lang), SEGMENTER_ELANG);
    if (!rc) rc = load_data(ss, o, "generic", 1, err);
    if (!rc && strcmp(lang, "generic")) rc = load_data(ss, o, lang, ss->lang != SENT_GENERIC, err);
    for (int i = 0; !rc && i < o->nextra; i++)
        rc = segmenter_load(ss, o->extra[i], err);
    if (code) *code = rc;
    if (rc) {
        segmenter_destroy(ss);
        return NULL;
    }
    return ss;
}

void segmenter_destroy(Segmenter *ss) {
    if (!ss) return;
    strmap_free(&ss->words);
    free(ss);
}

SentLang segmenter_lang(const Segmenter *ss) { return ss->lang; }

void sentspans_free(SentSpans *sp) {
    free(sp->v);
    sp->v = NULL;
    sp->n = sp->cap = 0;
}

/* ---- the token before a mark ---- */

enum { T_OTHER, T_WORD, T_LETTER, T_NUMBER, T_ROMAN, T_ACRONYM };

typedef struct Tok {
    size_t start;  /* first byte of the whitespace-delimited token */
    size_t w0, w1; /* the token without leading punctuation (W) */
    int kind;
} Tok;

/* A Roman numeral below 400 written with I V X L C ("CD", "MD" are read as
 * words: quntoken's "Ott a CD. Hallod?"). */
static int is_roman(const unsigned char *s, size_t n) {
    static const char *const h[] = {"", "C", "CC", "CCC"};
    static const char *const t[] = {"", "X", "XX", "XXX", "XL", "L", "LX", "LXX", "LXXX", "XC"};
    static const char *const u[] = {"", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"};
    if (n == 0 || n > 9) return 0;
    size_t i = 0;
    const char *const *tabs[3] = {h, t, u};
    int sizes[3] = {4, 10, 10};
    for (int d = 0; d < 3; d++) {
        size_t best = 0;
        for (int k = 1; k < sizes[d]; k++) {
            size_t m = strlen(tabs[d][k]);
            if (m > best && i + m <= n && !memcmp(s + i, tabs[d][k], m)) best = m;
        }
        i += best;
    }
    return i == n;
}

static int classify(const unsigned char *s, size_t w0, size_t w1) {
    if (w0 == w1) return T_OTHER;
    size_t k;
    uint32_t c = cp_at(s, w1, w0, &k);
    if (w0 + k == w1 && uni_is(c, UNI_ALPHA)) return T_LETTER;
    if (c - '0' < 10) {
        for (size_t i = w0; i < w1; i++)
            if (!(IS_DIGIT(s[i]) || s[i] == '.' || s[i] == ',' || s[i] == '/' || s[i] == ':' ||
                  s[i] == '-'))
                return T_WORD;
        return IS_DIGIT(s[w1 - 1]) ? T_NUMBER : T_OTHER;
    }
    /* acronym: two or more one- or two-letter parts joined by '.' */
    int parts = 0, plen = 0, alpha_only = 1;
    for (size_t i = w0; i < w1; i += k) {
        c = cp_at(s, w1, i, &k);
        if (c == '.') {
            if (plen == 0 || plen > 2) alpha_only = 0;
            parts++, plen = 0;
        } else if (uni_is(c, UNI_ALPHA)) {
            plen++;
        } else {
            alpha_only = 0;
        }
    }
    if (alpha_only && parts >= 1 && plen >= 1 && plen <= 2) return T_ACRONYM;
    size_t j = cp_start_before(s, w1);
    c = cp_at(s, w1, j, &k);
    if (!is_alnum_cp(c)) return T_OTHER;
    if (is_roman(s + w0, w1 - w0)) return T_ROMAN;
    return T_WORD;
}

/* The token that ends at `end` (the mark), at most MAX_BACK bytes long. */
static void token_before(const unsigned char *s, size_t from, size_t end, Tok *t) {
    size_t i = end;
    while (i > from && end - i < MAX_BACK) {
        size_t j = cp_start_before(s, i), k;
        if (j < from || is_space_cp(cp_at(s, end, j, &k))) break;
        i = j;
    }
    t->start = i;
    int symbol = 0;   /* a sign other than a quote or bracket: "°C", "$5" */
    while (i < end) { /* leading quotes, brackets, bullets, currency signs */
        size_t k;
        uint32_t c = cp_at(s, end, i, &k);
        if (is_alnum_cp(c)) break;
        symbol |= !is_opener(c) && !is_bullet(c);
        i += k;
    }
    t->w0 = i;
    t->w1 = end;
    t->kind = classify(s, t->w0, t->w1);
    if (t->kind == T_LETTER && symbol) t->kind = T_WORD; /* a unit, not an initial */
}

/* The word before the token starting at `start`: [*a, *b), alphanumerics
 * only. Returns 0 if there is none within the sentence. */
static int word_before(const unsigned char *s, size_t sent, size_t start, size_t *a, size_t *b) {
    size_t i = start, k;
    while (i > sent) {
        size_t j = cp_start_before(s, i);
        if (!is_space_cp(cp_at(s, start, j, &k))) break;
        i = j;
    }
    while (i > sent) { /* trailing punctuation of that word: "Mekka," */
        size_t j = cp_start_before(s, i);
        uint32_t c = cp_at(s, start, j, &k);
        if (is_alnum_cp(c) || is_space_cp(c)) break;
        i = j;
    }
    *b = i;
    while (i > sent) {
        size_t j = cp_start_before(s, i);
        if (!is_alnum_cp(cp_at(s, start, j, &k))) break;
        i = j;
    }
    *a = i;
    return *a < *b;
}

/* Only non-alphanumerics between the sentence start and i. */
static int at_sentence_start(const unsigned char *s, size_t sent, size_t i) {
    for (size_t j = sent, k; j < i; j += k)
        if (is_alnum_cp(cp_at(s, i, j, &k))) return 0;
    return 1;
}

/* A bracket opened inside the sentence is still open at i. One that opens
 * the sentence does not count: "(See below.)" is a sentence of its own. */
static int inside_brackets(const unsigned char *s, size_t sent, size_t i) {
    size_t from = i - sent > MAX_PAREN_SCAN ? i - MAX_PAREN_SCAN : sent;
    int depth = 0, first_open = 0;
    for (size_t j = from; j < i; j++) {
        if (s[j] == '(' || s[j] == '[') {
            if (depth++ == 0) first_open = at_sentence_start(s, sent, j);
        } else if ((s[j] == ')' || s[j] == ']') && depth > 0) {
            depth--;
        }
    }
    return depth > 1 || (depth == 1 && !first_open);
}

/* ---- the word after a mark ---- */

enum { N_LOWER, N_UPPER, N_DIGIT, N_DASH, N_OTHER };

typedef struct Next {
    int cls;
    int opened;          /* an opening quote or bracket came first */
    int dash_then_lower; /* N_DASH followed by a lower-case word */
    size_t w0, w1;       /* the letters of the first word (may be empty) */
    int roman_dot;       /* the word is a Roman numeral followed by '.' */
} Next;

static void next_word(const unsigned char *s, size_t n, size_t i, Next *nx) {
    size_t k;
    uint32_t c = 0;
    memset(nx, 0, sizeof *nx);
    while (i < n && is_opener(c = cp_at(s, n, i, &k)))
        i += k, nx->opened = 1;
    if (i >= n) {
        nx->cls = N_OTHER;
        return;
    }
    c = cp_at(s, n, i, &k);
    if (c - '0' < 10 || (c >= 0x80 && uni_is(c, UNI_DIGIT))) {
        nx->cls = N_DIGIT;
        return;
    }
    if (is_dash(c)) {
        nx->cls = N_DASH;
        size_t j = skip_space(s, n, i + k);
        if (j < n) {
            uint32_t d = cp_at(s, n, j, &k);
            nx->dash_then_lower = uni_is(d, UNI_LOWER);
        }
        return;
    }
    unsigned p = uni_props(c);
    if (!(p & UNI_ALPHA)) {
        nx->cls = N_OTHER;
        return;
    }
    /* caseless scripts (CJK, Arabic, Hebrew) may start a sentence */
    nx->cls = (p & UNI_LOWER) ? N_LOWER : N_UPPER;
    nx->w0 = i;
    while (i < n && uni_is(c = cp_at(s, n, i, &k), UNI_ALPHA))
        i += k;
    nx->w1 = i;
    nx->roman_dot = i < n && s[i] == '.' && is_roman(s + nx->w0, nx->w1 - nx->w0);
}

/* End of the emoticon (":)", ";-)", ":D", "=(", "^_^", "<3", "xD") that
 * starts at s[i] and is followed by white space or the end, else 0. */
static size_t emoticon_end(const unsigned char *s, size_t n, size_t i) {
    size_t j = i;
    if (j + 1 < n && (s[j] == ':' || s[j] == ';' || s[j] == '=')) {
        j++;
        if (s[j] == '-' || s[j] == '^') j++;
        size_t m = j;
        while (j < n && strchr(")(DPp/|][O3*", s[j]) && s[j])
            j++;
        if (j == m) return 0;
    } else if (j + 2 < n && s[j] == '^' && s[j + 1] == '_' && s[j + 2] == '^') {
        j += 3;
    } else if (j + 1 < n && ((s[j] == '^' && s[j + 1] == '^') || (s[j] == '<' && s[j + 1] == '3') ||
                             ((s[j] | 0x20) == 'x' && s[j + 1] == 'D'))) {
        j += 2;
    } else {
        return 0;
    }
    size_t k;
    return j == n || is_space_cp(cp_at(s, n, j, &k)) ? j : 0;
}

/* English: the next "word" at s[i] starts with a symbol. An amount
 * ("$5", "£3") is read as a number and a separator line ("***", "____",
 * "=====") as a capital, so they open a sentence as a digit or an
 * upper-case word would ("cost rose. $5 is"). */
static void en_symbol_start(const unsigned char *s, size_t n, size_t i, Next *nx) {
    size_t k;
    uint32_t c = cp_at(s, n, i, &k);
    if (c == '$' || c == 0xA3 || c == 0x20AC || c == 0xA5) {
        if (i + k < n && IS_DIGIT(s[i + k])) nx->cls = N_DIGIT;
        return;
    }
    if (c == '*' || c == '_' || c == '=' || c == '+' || c == '~' || c == '#') {
        size_t j = i;
        while (j < n && s[j] == s[i])
            j++;
        if (j - i >= 3) nx->cls = N_UPPER;
    }
}

/* ---- decisions ---- */

/* Hungarian: is the number token t (a period after it) an ordinal or part
 * of a date rather than the end of a sentence? */
static int hu_number_continues(const Segmenter *ss, const unsigned char *s, size_t sent,
                               const Tok *t, const Next *nx) {
    if (nx->cls == N_DIGIT || nx->cls == N_DASH || nx->roman_dot) return 1;
    if (lookup(ss, s + nx->w0, nx->w1 - nx->w0) & W_MONTH) return 1;
    if (at_sentence_start(s, sent, t->w0)) return 1;
    size_t a, b;
    if (word_before(s, sent, t->start, &a, &b) && (lookup(ss, s + a, b - a) & W_DET)) return 1;
    return 0;
}

/* A single '.' after token t: does a sentence end here? The next word is
 * upper-case, a digit, a dash or comes after an opening quote. */
static int period_ends(const Segmenter *ss, const unsigned char *s, size_t sent, const Tok *t,
                       const Next *nx) {
    if (nx->cls == N_DASH && ss->lang == SENT_HU && t->kind == T_NUMBER) return 0;
    unsigned f = lookup(ss, s + t->w0, t->w1 - t->w0);
    if (f & W_ABBR) {
        if (f & W_NUM) {
            if (nx->cls == N_DIGIT) return 0;
        } else if (f & W_END) {
            return nx->cls != N_DIGIT;
        } else {
            return 0;
        }
    }
    switch (t->kind) {
    case T_LETTER:
        if (ss->lang == SENT_EN && t->w1 - t->w0 == 1 && s[t->w0] == 'I') {
            size_t a, b, k;
            if (word_before(s, sent, t->start, &a, &b) && uni_is(cp_at(s, b, a, &k), UNI_LOWER))
                return 1;
        }
        return 0;
    case T_ACRONYM:
        if (nx->cls != N_UPPER) return 0;
        return (lookup(ss, s + nx->w0, nx->w1 - nx->w0) & W_START) != 0;
    case T_ROMAN:
        return ss->lang != SENT_HU;
    case T_NUMBER:
        if (at_sentence_start(s, sent, t->w0)) return 0;
        if (ss->lang == SENT_HU) return !hu_number_continues(ss, s, sent, t, nx);
        if (ss->lang == SENT_GENERIC) {
            size_t digits = 0;
            for (size_t i = t->w0; i < t->w1; i++) {
                if (!IS_DIGIT(s[i])) return 1; /* a decimal, a date: ends */
                digits++;
            }
            return digits > 3 && nx->cls != N_DIGIT;
        }
        return 1;
    default:
        return 1;
    }
}

/* English: does a sentence end at the marks starting at m0 although the
 * next word starts in lower case? Informal text often starts sentences so
 * ("too bad. too many bugs", "did it work? is it worth it"). The caller has
 * ruled out closing quotes or brackets after the marks ("Why?" she asked),
 * an opening one before the word, and ellipses. After '?' or '!' the word
 * before must be a word of two or more letters, in lower case ("kidding?
 * why") or all capitals ("WOW! great"), or the marks a run ("Oops??? that");
 * "Yahoo! and", "Got Milk? ads", "B=0? test", "n! is" and "5! is" do not
 * end a sentence. After a single period the token before
 * must be a word that is not a listed abbreviation, initial, acronym, number
 * or Roman numeral, nor hold a period itself ("e.g. this", "J. smith",
 * "U.S. and", "pro-U.S. stance", "error; 2. the claim", "World War II.
 * the" stay whole), and the period must be attached
 * to it (" . is" is debris of removed markup). */
static int en_lower_ends(const Segmenter *ss, const unsigned char *s, size_t sent, size_t m0,
                         int question, int attached) {
    Tok t;
    size_t a, b, k;
    token_before(s, sent, m0, &t);
    if (question) {
        a = t.w0, b = t.w1;
        if (a == b && (attached || !word_before(s, sent, m0, &a, &b))) return 0;
        uint32_t c = cp_at(s, b, a, &k);
        if (a + k >= b || !uni_is(c, UNI_ALPHA)) return 0;
        if (uni_is(c, UNI_LOWER) || question > 1) return 1; /* "kidding? why", "BEST!!! and" */
        for (size_t i = a; i < b; i += k) /* all capitals: "WOW! grey", not "Yahoo! and" */
            if (!uni_is(cp_at(s, b, i, &k), UNI_UPPER)) return 0;
        return 1;
    }
    if (!attached || t.w0 == t.w1) return 0;
    if (t.kind != T_WORD && t.kind != T_OTHER) return 0;
    if (memchr(s + t.w0, '.', t.w1 - t.w0)) return 0; /* "pro-U.S.", "w/r.t." */
    return !(lookup(ss, s + t.w0, t.w1 - t.w0) & W_ABBR);
}

/* ---- list items ---- */

/* Cuts before the list markers that follow a paragraph-opening marker:
 * "1. a 2. b", "1) a 2) b", "a. x b. y", "• x • y". Returns the number of
 * cut offsets written to cut[] (ascending). */
static size_t list_cuts(const unsigned char *s, size_t n, size_t p, size_t *cut) {
    size_t nc = 0, k;
    if (p >= n) return 0;
    uint32_t c = cp_at(s, n, p, &k);
    if (is_bullet(c)) {
        for (size_t i = p + k; i + k <= n && nc < MAX_FORCED; i++)
            if (!memcmp(s + i, s + p, k) && is_space_cp(s[i - 1])) cut[nc++] = i;
        return nc;
    }
    /* marker: 1-2 digits or one lower-case ASCII letter, then ".)", ")" or "." and a space */
    size_t i = p;
    unsigned value = 0;
    int letter = 0;
    if (IS_LOWER(s[i])) {
        value = s[i++];
        letter = 1;
    } else {
        while (i < n && i - p < 3 && IS_DIGIT(s[i]))
            value = value * 10 + (s[i++] - '0');
        if (i == p || i - p > 2) return 0;
    }
    char suffix[3];
    size_t sl = 0;
    if (i + 1 < n && s[i] == '.' && s[i + 1] == ')')
        sl = 2;
    else if (i < n && (s[i] == ')' || s[i] == '.'))
        sl = 1;
    if (!sl || i + sl >= n || s[i + sl] != ' ') return 0;
    memcpy(suffix, s + i, sl);
    size_t from = i + sl;
    for (;;) {
        char want[8];
        size_t wl;
        value++;
        if (letter) {
            if (value > 'z') break;
            want[0] = (char)value, wl = 1;
        } else {
            wl = (size_t)snprintf(want, sizeof want - 2, "%u", value);
        }
        memcpy(want + wl, suffix, sl);
        wl += sl;
        size_t j = from, found = 0;
        for (; j + wl < n; j++) {
            if (s[j] == want[0] && !memcmp(s + j, want, wl) && is_space_cp(s[j - 1]) &&
                s[j + wl] == ' ' && j + wl + 1 < n && !(IS_LOWER(s[j + wl + 1]))) {
                found = 1;
                break;
            }
        }
        if (!found || nc == MAX_FORCED) break;
        cut[nc++] = j;
        from = j + wl;
    }
    return nc;
}

/* ---- the splitter ---- */

typedef struct Cutter {
    const unsigned char *s;
    SentSpans *out;
    size_t sent; /* start of the open sentence */
} Cutter;

/* End the open sentence at `end` and open the next one at `next`. */
static void cut_at(Cutter *c, size_t end, size_t next) {
    end = trim_end(c->s, c->sent, end);
    if (end > c->sent) {
        SentSpans *o = c->out;
        if (o->n == o->cap) {
            o->cap = o->cap ? o->cap * 2 : 16;
            o->v = xrealloc(o->v, o->cap * sizeof *o->v);
        }
        o->v[o->n++] = (SentSpan){c->sent, end};
    }
    c->sent = next;
}

size_t segmenter_split(const Segmenter *ss, const char *text, size_t len, SentSpans *out) {
    const unsigned char *s = (const unsigned char *)text;
    Cutter c = {s, out, 0};
    out->n = 0;
    c.sent = skip_space(s, len, 0);
    size_t forced[MAX_FORCED], nforced = list_cuts(s, len, c.sent, forced), fi = 0;
    size_t i = c.sent;
    while (i < len) {
        if (!is_mark_byte[s[i]]) {
            i++;
            continue;
        }
        if (s[i] == 0xE2 && !(i + 2 < len && s[i + 1] == 0x80 && s[i + 2] == 0xA6)) {
            i++;
            continue;
        }
        while (fi < nforced && forced[fi] <= i) {
            if (forced[fi] > c.sent) cut_at(&c, forced[fi], forced[fi]);
            fi++;
        }
        /* the run of marks */
        size_t m0 = i, r = i, k;
        int ndots = 0, nq = 0, nell = 0;
        while (r < len) {
            if (s[r] == '.')
                ndots++, r++;
            else if (s[r] == '!' || s[r] == '?')
                nq++, r++;
            else if (s[r] == 0xE2 && r + 2 < len && s[r + 1] == 0x80 && s[r + 2] == 0xA6)
                nell++, r += 3;
            else
                break;
        }
        int attached = m0 > 0 && !is_space_cp(cp_at(s, len, cp_start_before(s, m0), &k));
        int spaced = 0; /* ". . ." : further dots each after one space (or
                           line break: '\n' inside a paragraph is white space) */
        if (ndots == 1 && !nq && !nell) {
            while (r + 1 < len && (s[r] == ' ' || s[r] == '\n') && s[r + 1] == '.' &&
                   (r + 2 == len || s[r + 2] == ' ' || s[r + 2] == '\n' || s[r + 2] == '.' ||
                    is_closer(cp_at(s, len, r + 2, &k))))
                spaced++, r += 2;
        }
        size_t e = r;
        int closed_paren = 0;
        while (e < len) {
            uint32_t cc = cp_at(s, len, e, &k);
            if (!is_closer(cc)) break;
            closed_paren |= cc == ')' || cc == ']';
            e += k;
        }
        i = e;
        if (e < len && !is_space_cp(cp_at(s, len, e, &k))) continue; /* inside a token */
        /* Hungarian tokenizers read a period standing alone before more
         * dots as the end of its sentence and the dots as the next one:
         * "A kutya ugat . . ." -> "A kutya ugat ." + ". ." (not before a
         * lower-case word, as everywhere) */
        int hu_lone = spaced && !attached && ss->lang == SENT_HU;
        int closers = e > r;
        size_t nstart = skip_space(s, len, e);
        if (ss->lang == SENT_EN && nstart < len) { /* "Nice. :) Next": the smiley ends it */
            size_t em = emoticon_end(s, len, nstart);
            if (em) e = em, nstart = skip_space(s, len, em);
        }
        if (nstart >= len) {
            if (hu_lone) cut_at(&c, m0 + 1, skip_space(s, len, m0 + 1));
            break;
        }
        Next nx;
        next_word(s, len, nstart, &nx);
        if (nx.cls == N_OTHER && ss->lang == SENT_EN && !nx.opened)
            en_symbol_start(s, len, nstart, &nx);
        if (nx.cls == N_LOWER && ss->lang == SENT_EN && !nx.opened && !closers && !spaced &&
            !nell && (nq || ndots == 1)) {
            if (en_lower_ends(ss, s, c.sent, m0, nq, attached)) cut_at(&c, e, nstart);
            continue;
        }
        if (nx.cls == N_LOWER || nx.cls == N_OTHER || (nx.cls == N_DASH && nx.dash_then_lower))
            continue;
        if (closed_paren && inside_brackets(s, c.sent, m0)) continue;
        if (hu_lone) {
            cut_at(&c, m0 + 1, skip_space(s, len, m0 + 1));
            continue;
        }
        if (spaced) {
            if (ndots + spaced < 4) continue; /* ". . ." inside a sentence */
            if (attached)
                cut_at(&c, m0 + 1, skip_space(s, len, m0 + 1)); /* "word. . . . Next" */
            else
                cut_at(&c, e, nstart);
            continue;
        }
        if ((ndots > 1 || nell) && !nq && m0 > 0 && (s[m0 - 1] == '[' || s[m0 - 1] == '('))
            continue; /* "[...]": an omission, not an ending */
        if (nq || ndots > 1 || nell) {
            cut_at(&c, e, nstart);
            continue;
        }
        Tok t;
        token_before(s, c.sent, m0, &t);
        if (period_ends(ss, s, c.sent, &t, &nx)) cut_at(&c, e, nstart);
    }
    while (fi < nforced) {
        if (forced[fi] > c.sent) cut_at(&c, forced[fi], forced[fi]);
        fi++;
    }
    cut_at(&c, len, len);
    return out->n;
}
