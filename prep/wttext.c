/* wttext.c - passes 5 to 7 of the wikitext cleaner (see wikitext.c for the
 * whole design): bold and italic, HTML tags and character references, text
 * cleanup and WikiExtractor's compact(). Private to the wikitext module
 * (prep/wtinternal.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/common.h"
#include "common/utf8.h"
#include "prep/wtinternal.h"

/* Bytes that stop the plain-text copy loop of passes 6 and 7. */
static const unsigned char p6_special[256] = {['<'] = 1, ['&'] = 1, [3] = 1, [4] = 1};
static const unsigned char p7_special[256] = {
    ['<'] = 1, ['>'] = 1, [' '] = 1, ['\t'] = 1, ['.'] = 1};

/* ---- pass 5: bold and italic ---- */

/* Next occurrence of the string p (length pl >= 1) in s[from..to). */
static size_t find_q(const unsigned char *s, size_t from, size_t to, const char *p, size_t pl) {
    while (from < to && to - from >= pl) {
        const unsigned char *q = memchr(s + from, p[0], to - from - pl + 1);
        if (!q) return NOPOS;
        size_t a = (size_t)(q - s);
        if (!memcmp(s + a + 1, p + 1, pl - 1)) return a;
        from = a + 1;
    }
    return NOPOS;
}

/* P(.*?)P within one line -> \1, or "\1" when quote is set. */
static void sub_pair(const unsigned char *s, size_t n, Buf *out, const char *p, size_t pl,
                     int quote) {
    size_t i = 0, eol = 0;
    buf_reserve(out, n);
    while (i < n) {
        size_t a = find_q(s, i, n, p, pl);
        if (a == NOPOS) break;
        if (a >= eol || eol == 0) {
            const unsigned char *q = memchr(s + a, '\n', n - a);
            eol = q ? (size_t)(q - s) : n;
            q = memchr(s + a, '\x03', eol - a);
            if (q) eol = (size_t)(q - s);
        }
        size_t b = find_q(s, a + pl, eol, p, pl);
        if (b == NOPOS) {
            buf_append(out, s + i, eol - i);
            i = eol;
            continue;
        }
        buf_append(out, s + i, a - i);
        if (quote) buf_putc(out, '"');
        buf_append(out, s + a + pl, b - a - pl);
        if (quote) buf_putc(out, '"');
        i = b + pl;
    }
    if (i < n) buf_append(out, s + i, n - i);
}

/* open([^"]*?)close -> "\1", where open ends and close starts with '"':
 * ''"x"'' (WikiExtractor's italic_quote) and ""x"" (quote_quote). */
static void sub_quoted(const unsigned char *s, size_t n, Buf *out, const char *op, size_t ol,
                       const char *cl, size_t cll) {
    size_t i = 0, from = 0;
    buf_reserve(out, n);
    while (from < n) {
        size_t a = find_q(s, from, n, op, ol);
        if (a == NOPOS) break;
        const unsigned char *q = a + ol < n ? memchr(s + a + ol, '"', n - a - ol) : NULL;
        size_t b = q ? (size_t)(q - s) : NOPOS;
        if (b != NOPOS && memchr(s + a + ol, '\x04', b - a - ol)) b = NOPOS;
        if (b == NOPOS || n - b < cll || memcmp(s + b, cl, cll)) {
            from = a + 1;
            continue;
        }
        buf_append(out, s + i, a - i);
        buf_putc(out, '"');
        buf_append(out, s + a + ol, b - a - ol);
        buf_putc(out, '"');
        i = from = b + cll;
    }
    if (i < n) buf_append(out, s + i, n - i);
}

/* ''' -> nothing, then '' -> ": a run of k quotes leaves k % 3 of them,
 * two becoming a double quote. */
static void sub_runs(const unsigned char *s, size_t n, Buf *out) {
    size_t i = 0;
    buf_reserve(out, n);
    while (i < n) {
        const unsigned char *p = memchr(s + i, '\'', n - i);
        size_t a = p ? (size_t)(p - s) : n;
        buf_append(out, s + i, a - i);
        if (a >= n) break;
        size_t b = a;
        while (b < n && s[b] == '\'')
            b++;
        size_t k = b - a;
        if (k == 1)
            buf_putc(out, '\'');
        else if (k % 3 == 1)
            buf_putc(out, '\'');
        else if (k % 3 == 2)
            buf_putc(out, '"');
        i = b;
    }
}

void wt_pass_quotes(Buf **cur, Buf **tmp) {
    Buf *a = *cur, *b = *tmp;
    const unsigned char *s;
    if (find_q((unsigned char *)a->data, 0, a->len, "''", 2) != NOPOS) {
        buf_clear(b);
        sub_pair((unsigned char *)a->data, a->len, b, "'''''", 5, 0);
        wt_swap_bufs(a, b);
        buf_clear(b);
        sub_pair((unsigned char *)a->data, a->len, b, "'''", 3, 0);
        wt_swap_bufs(a, b);
        buf_clear(b);
        sub_quoted((unsigned char *)a->data, a->len, b, "''\"", 3, "\"''", 3);
        wt_swap_bufs(a, b);
        buf_clear(b);
        sub_pair((unsigned char *)a->data, a->len, b, "''", 2, 1);
        wt_swap_bufs(a, b);
    }
    if (find_q((unsigned char *)a->data, 0, a->len, "\"\"", 2) != NOPOS) {
        buf_clear(b);
        sub_quoted((unsigned char *)a->data, a->len, b, "\"\"", 2, "\"\"", 2);
        wt_swap_bufs(a, b);
    }
    s = (unsigned char *)a->data;
    if (find_q(s, 0, a->len, "''", 2) != NOPOS) {
        buf_clear(b);
        sub_runs(s, a->len, b);
        wt_swap_bufs(a, b);
    }
}

/* ---- pass 6: HTML tags and character references ---- */

enum { H_IGNORE, H_DISCARD, H_CODE };

static const struct {
    const char *name;
    unsigned char kind;
} html_tags[] = {
    {"a", H_IGNORE},           {"abbr", H_IGNORE},        {"b", H_IGNORE},
    {"bdi", H_IGNORE},         {"bdo", H_IGNORE},         {"big", H_IGNORE},
    {"blockquote", H_IGNORE},  {"br", H_IGNORE},          {"center", H_IGNORE},
    {"cite", H_IGNORE},        {"data", H_IGNORE},        {"del", H_IGNORE},
    {"dfn", H_IGNORE},         {"div", H_IGNORE},         {"em", H_IGNORE},
    {"font", H_IGNORE},        {"h1", H_IGNORE},          {"h2", H_IGNORE},
    {"h3", H_IGNORE},          {"h4", H_IGNORE},          {"h5", H_IGNORE},
    {"h6", H_IGNORE},          {"hr", H_IGNORE},          {"i", H_IGNORE},
    {"ins", H_IGNORE},         {"kbd", H_IGNORE},         {"mark", H_IGNORE},
    {"nobr", H_IGNORE},        {"p", H_IGNORE},           {"plaintext", H_IGNORE},
    {"q", H_IGNORE},           {"rb", H_IGNORE},          {"rp", H_IGNORE},
    {"rt", H_IGNORE},          {"rtc", H_IGNORE},         {"ruby", H_IGNORE},
    {"s", H_IGNORE},           {"samp", H_IGNORE},        {"span", H_IGNORE},
    {"strike", H_IGNORE},      {"strong", H_IGNORE},      {"sub", H_IGNORE},
    {"sup", H_IGNORE},         {"time", H_IGNORE},        {"tt", H_IGNORE},
    {"u", H_IGNORE},           {"var", H_IGNORE},         {"wbr", H_IGNORE},
    {"poem", H_IGNORE},        {"onlyinclude", H_IGNORE}, {"nowiki", H_IGNORE},
    {"ref", H_IGNORE},         {"references", H_IGNORE},  {"math", H_IGNORE},
    {"includeonly", H_IGNORE}, {"noinclude", H_IGNORE},   {"code", H_CODE},
    {"table", H_DISCARD},      {"tr", H_DISCARD},         {"td", H_DISCARD},
    {"th", H_DISCARD},         {"caption", H_DISCARD},    {"form", H_DISCARD},
    {"input", H_DISCARD},      {"select", H_DISCARD},     {"option", H_DISCARD},
    {"textarea", H_DISCARD},   {"ul", H_DISCARD},         {"li", H_DISCARD},
    {"ol", H_DISCARD},         {"dl", H_DISCARD},         {"dt", H_DISCARD},
    {"dd", H_DISCARD},         {"menu", H_DISCARD},       {"dir", H_DISCARD},
    {"img", H_DISCARD},        {"small", H_DISCARD},      {"thead", H_DISCARD},
    {"tbody", H_DISCARD},      {"tfoot", H_DISCARD},
};
#define N_HTML (sizeof html_tags / sizeof html_tags[0])

static int html_lookup(const char *name) {
    for (size_t k = 0; k < N_HTML; k++)
        if (html_tags[k].name[0] == name[0] && !strcmp(html_tags[k].name, name)) return (int)k;
    return -1;
}

/* HTML 4 entities (Python's html.entities.name2codepoint, which
 * WikiExtractor's unescape() uses) plus common HTML 5 names; sorted by
 * strcmp for binary search. */
static const struct {
    const char *name;
    uint32_t cp;
} entities[] = {
    {"AElig", 0xC6},     {"Aacute", 0xC1},   {"Acirc", 0xC2},    {"Agrave", 0xC0},
    {"Alpha", 0x391},    {"Aring", 0xC5},    {"Atilde", 0xC3},   {"Auml", 0xC4},
    {"Beta", 0x392},     {"Ccedil", 0xC7},   {"Chi", 0x3A7},     {"Dagger", 0x2021},
    {"Delta", 0x394},    {"ETH", 0xD0},      {"Eacute", 0xC9},   {"Ecirc", 0xCA},
    {"Egrave", 0xC8},    {"Epsilon", 0x395}, {"Eta", 0x397},     {"Euml", 0xCB},
    {"Gamma", 0x393},    {"Iacute", 0xCD},   {"Icirc", 0xCE},    {"Igrave", 0xCC},
    {"Iota", 0x399},     {"Iuml", 0xCF},     {"Kappa", 0x39A},   {"Lambda", 0x39B},
    {"Mu", 0x39C},       {"Ntilde", 0xD1},   {"Nu", 0x39D},      {"OElig", 0x152},
    {"Oacute", 0xD3},    {"Ocirc", 0xD4},    {"Ograve", 0xD2},   {"Omega", 0x3A9},
    {"Omicron", 0x39F},  {"Oslash", 0xD8},   {"Otilde", 0xD5},   {"Ouml", 0xD6},
    {"Phi", 0x3A6},      {"Pi", 0x3A0},      {"Prime", 0x2033},  {"Psi", 0x3A8},
    {"Rho", 0x3A1},      {"Scaron", 0x160},  {"Sigma", 0x3A3},   {"THORN", 0xDE},
    {"Tau", 0x3A4},      {"Theta", 0x398},   {"Uacute", 0xDA},   {"Ucirc", 0xDB},
    {"Ugrave", 0xD9},    {"Upsilon", 0x3A5}, {"Uuml", 0xDC},     {"Xi", 0x39E},
    {"Yacute", 0xDD},    {"Yuml", 0x178},    {"Zeta", 0x396},    {"aacute", 0xE1},
    {"acirc", 0xE2},     {"acute", 0xB4},    {"aelig", 0xE6},    {"agrave", 0xE0},
    {"alefsym", 0x2135}, {"alpha", 0x3B1},   {"amp", 0x26},      {"and", 0x2227},
    {"ang", 0x2220},     {"apos", 0x27},     {"aring", 0xE5},    {"ast", 0x2A},
    {"asymp", 0x2248},   {"atilde", 0xE3},   {"auml", 0xE4},     {"bdquo", 0x201E},
    {"beta", 0x3B2},     {"brvbar", 0xA6},   {"bsol", 0x5C},     {"bull", 0x2022},
    {"cap", 0x2229},     {"ccedil", 0xE7},   {"cedil", 0xB8},    {"cent", 0xA2},
    {"chi", 0x3C7},      {"circ", 0x2C6},    {"clubs", 0x2663},  {"colon", 0x3A},
    {"comma", 0x2C},     {"commat", 0x40},   {"cong", 0x2245},   {"copy", 0xA9},
    {"crarr", 0x21B5},   {"cup", 0x222A},    {"curren", 0xA4},   {"dArr", 0x21D3},
    {"dagger", 0x2020},  {"darr", 0x2193},   {"deg", 0xB0},      {"delta", 0x3B4},
    {"diams", 0x2666},   {"divide", 0xF7},   {"dollar", 0x24},   {"eacute", 0xE9},
    {"ecirc", 0xEA},     {"egrave", 0xE8},   {"empty", 0x2205},  {"emsp", 0x2003},
    {"ensp", 0x2002},    {"epsilon", 0x3B5}, {"equals", 0x3D},   {"equiv", 0x2261},
    {"eta", 0x3B7},      {"eth", 0xF0},      {"euml", 0xEB},     {"euro", 0x20AC},
    {"excl", 0x21},      {"exist", 0x2203},  {"fnof", 0x192},    {"forall", 0x2200},
    {"frac12", 0xBD},    {"frac14", 0xBC},   {"frac34", 0xBE},   {"frasl", 0x2044},
    {"gamma", 0x3B3},    {"ge", 0x2265},     {"grave", 0x60},    {"gt", 0x3E},
    {"hArr", 0x21D4},    {"harr", 0x2194},   {"hearts", 0x2665}, {"hellip", 0x2026},
    {"hyphen", 0x2010},  {"iacute", 0xED},   {"icirc", 0xEE},    {"iexcl", 0xA1},
    {"igrave", 0xEC},    {"image", 0x2111},  {"infin", 0x221E},  {"int", 0x222B},
    {"iota", 0x3B9},     {"iquest", 0xBF},   {"isin", 0x2208},   {"iuml", 0xEF},
    {"kappa", 0x3BA},    {"lArr", 0x21D0},   {"lambda", 0x3BB},  {"lang", 0x2329},
    {"laquo", 0xAB},     {"larr", 0x2190},   {"lbrace", 0x7B},   {"lbrack", 0x5B},
    {"lceil", 0x2308},   {"ldquo", 0x201C},  {"le", 0x2264},     {"lfloor", 0x230A},
    {"lowast", 0x2217},  {"lowbar", 0x5F},   {"loz", 0x25CA},    {"lpar", 0x28},
    {"lrm", 0x200E},     {"lsaquo", 0x2039}, {"lsqb", 0x5B},     {"lsquo", 0x2018},
    {"lt", 0x3C},        {"macr", 0xAF},     {"mdash", 0x2014},  {"micro", 0xB5},
    {"middot", 0xB7},    {"minus", 0x2212},  {"mu", 0x3BC},      {"nabla", 0x2207},
    {"nbsp", 0xA0},      {"ndash", 0x2013},  {"ne", 0x2260},     {"ni", 0x220B},
    {"not", 0xAC},       {"notin", 0x2209},  {"nsub", 0x2284},   {"ntilde", 0xF1},
    {"nu", 0x3BD},       {"num", 0x23},      {"oacute", 0xF3},   {"ocirc", 0xF4},
    {"oelig", 0x153},    {"ograve", 0xF2},   {"oline", 0x203E},  {"omega", 0x3C9},
    {"omicron", 0x3BF},  {"oplus", 0x2295},  {"or", 0x2228},     {"ordf", 0xAA},
    {"ordm", 0xBA},      {"oslash", 0xF8},   {"otilde", 0xF5},   {"otimes", 0x2297},
    {"ouml", 0xF6},      {"para", 0xB6},     {"part", 0x2202},   {"percnt", 0x25},
    {"period", 0x2E},    {"permil", 0x2030}, {"perp", 0x22A5},   {"phi", 0x3C6},
    {"pi", 0x3C0},       {"piv", 0x3D6},     {"plus", 0x2B},     {"plusmn", 0xB1},
    {"pound", 0xA3},     {"prime", 0x2032},  {"prod", 0x220F},   {"prop", 0x221D},
    {"psi", 0x3C8},      {"quest", 0x3F},    {"quot", 0x22},     {"rArr", 0x21D2},
    {"radic", 0x221A},   {"rang", 0x232A},   {"raquo", 0xBB},    {"rarr", 0x2192},
    {"rbrace", 0x7D},    {"rbrack", 0x5D},   {"rceil", 0x2309},  {"rdquo", 0x201D},
    {"real", 0x211C},    {"reg", 0xAE},      {"rfloor", 0x230B}, {"rho", 0x3C1},
    {"rlm", 0x200F},     {"rpar", 0x29},     {"rsaquo", 0x203A}, {"rsqb", 0x5D},
    {"rsquo", 0x2019},   {"sbquo", 0x201A},  {"scaron", 0x161},  {"sdot", 0x22C5},
    {"sect", 0xA7},      {"semi", 0x3B},     {"shy", 0xAD},      {"sigma", 0x3C3},
    {"sigmaf", 0x3C2},   {"sim", 0x223C},    {"sol", 0x2F},      {"spades", 0x2660},
    {"sub", 0x2282},     {"sube", 0x2286},   {"sum", 0x2211},    {"sup", 0x2283},
    {"sup1", 0xB9},      {"sup2", 0xB2},     {"sup3", 0xB3},     {"supe", 0x2287},
    {"szlig", 0xDF},     {"tau", 0x3C4},     {"there4", 0x2234}, {"theta", 0x3B8},
    {"thetasym", 0x3D1}, {"thinsp", 0x2009}, {"thorn", 0xFE},    {"tilde", 0x2DC},
    {"times", 0xD7},     {"trade", 0x2122},  {"uArr", 0x21D1},   {"uacute", 0xFA},
    {"uarr", 0x2191},    {"ucirc", 0xFB},    {"ugrave", 0xF9},   {"uml", 0xA8},
    {"upsih", 0x3D2},    {"upsilon", 0x3C5}, {"uuml", 0xFC},     {"verbar", 0x7C},
    {"vert", 0x7C},      {"weierp", 0x2118}, {"xi", 0x3BE},      {"yacute", 0xFD},
    {"yen", 0xA5},       {"yuml", 0xFF},     {"zeta", 0x3B6},    {"zwj", 0x200D},
    {"zwnj", 0x200C},
};
#define N_ENT (sizeof entities / sizeof entities[0])

static uint32_t entity_lookup(const char *name) {
    size_t lo = 0, hi = N_ENT;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(entities[mid].name, name);
        if (!c) return entities[mid].cp;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* Decode a character reference at s[i] == '&' into out; returns the offset
 * past it, or i when there is none (the '&' is then plain text). */
static size_t put_entity(const unsigned char *s, size_t n, size_t i, Buf *out) {
    size_t j = i + 1;
    uint32_t cp = 0;
    if (j < n && s[j] == '#') {
        j++;
        int hex = j < n && (s[j] == 'x' || s[j] == 'X');
        if (hex) j++;
        size_t d = j;
        uint64_t v = 0;
        while (j < n && j - d < 10 &&
               (hex ? (is_digit(s[j]) || (unsigned)((s[j] | 32) - 'a') < 6) : is_digit(s[j]))) {
            unsigned x =
                is_digit(s[j]) ? (unsigned)(s[j] - '0') : (unsigned)((s[j] | 32) - 'a' + 10);
            v = v * (hex ? 16 : 10) + x;
            j++;
        }
        if (j == d || j >= n || s[j] != ';' || v > 0x10FFFF) return i;
        cp = (uint32_t)v;
        if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
        if ((cp < 32 && cp != '\t' && cp != '\n') || cp == 0x7F) return j + 1;
        utf8_append_cp(out, cp);
        return j + 1;
    }
    char name[ENTITY_MAX + 1];
    size_t k = 0;
    while (j < n && k < ENTITY_MAX && is_alnum(s[j]))
        name[k++] = (char)s[j++];
    if (!k || j >= n || s[j] != ';') return i;
    name[k] = '\0';
    cp = entity_lookup(name);
    if (!cp) return i;
    utf8_append_cp(out, cp);
    return j + 1;
}

typedef struct Discard {
    size_t depth, pos, last;
} Discard;

/* The separator that a line-break tag (<br>, <hr>: a blank) or a block tag
 * (<p>, <center>, <h1>-<h4>: a newline) leaves in the tidy text, 0 for
 * other tags. */
static char tag_separator(const char *name) {
    if (!strcmp(name, "br") || !strcmp(name, "hr")) return ' ';
    if (!strcmp(name, "p") || !strcmp(name, "center")) return '\n';
    if (name[0] == 'h' && name[1] >= '1' && name[1] <= '4' && !name[2]) return '\n';
    return 0;
}

/* Is the last character of b whitespace (an ASCII blank or U+00A0)? */
static int ends_blank(const Buf *b) {
    if (!b->len) return 1;
    const unsigned char *e = (unsigned char *)b->data + b->len;
    return is_ws(e[-1]) || (b->len >= 2 && e[-2] == 0xC2 && e[-1] == 0xA0);
}

void wt_pass_html(WikiText *wt, const unsigned char *s, size_t n, Buf *out) {
    Next gt, code;
    Discard dis[N_HTML];
    Next closes[N_HTML];
    int any = 0;
    wt_next_reset(&gt);
    wt_next_reset(&code);
    memset(dis, 0, sizeof dis);
    for (size_t k = 0; k < N_HTML; k++)
        wt_next_reset(&closes[k]);
    buf_reserve(out, n);
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && !p6_special[s[j]])
            j++;
        buf_append(out, s + i, j - i);
        i = j;
        if (i >= n) break;
        if (s[i] == 3 || s[i] == 4) {
            i++;
            continue;
        }
        if (s[i] == '&') {
            size_t e = put_entity(s, n, i, out);
            if (e == i) {
                buf_putc(out, '&');
                e = i + 1;
            }
            i = e;
            continue;
        }
        Tag t;
        int x = -1;
        if (wt_parse_tag(s, n, i, 1, &gt, &t)) x = html_lookup(t.name);
        if (x < 0) {
            buf_putc(out, '<');
            i++;
            continue;
        }
        int kind = html_tags[x].kind;
        if (kind == H_IGNORE && !wt->faithful) {
            /* a tag between two words separates them */
            char sep = tag_separator(t.name);
            if (sep && !ends_blank(out) && t.end < n && !wt_u8_space(s + t.end, s + n))
                buf_putc(out, sep);
        }
        if (kind == H_CODE && !wt->no_placeholders && !t.close && !t.self) {
            size_t cend, cs = wt_find_close(&code, s, n, t.end, "code", 4, &cend);
            if (cs != NOPOS) {
                wt_put_marker(out, 'C', wt_ph_class(&wt->ph[1], s + i, cend - i));
                i = cend;
                continue;
            }
        }
        if (kind == H_DISCARD && !t.self) {
            Discard *d = &dis[x];
            if (!t.close) {
                if (d->depth) {
                    d->depth++;
                } else {
                    size_t cend;
                    if (wt_find_close(&closes[x], s, n, t.end, t.name, t.nl, &cend) != NOPOS) {
                        d->depth = 1;
                        d->pos = out->len;
                        d->last = NOPOS;
                        any = 1;
                    }
                }
            } else if (d->depth) {
                if (!--d->depth) {
                    out->len = d->pos;
                    out->data[out->len] = '\0';
                    for (size_t k = 0; k < N_HTML; k++) {
                        if (dis[k].depth && dis[k].pos >= out->len) dis[k].depth = 0;
                        if (dis[k].last != NOPOS && dis[k].last > out->len) dis[k].last = out->len;
                    }
                } else {
                    d->last = out->len;
                }
            }
        }
        i = t.end;
    }
    if (any) {
        /* unbalanced nesting: drop up to the last closing tag seen, as
         * WikiExtractor's dropNested does */
        for (size_t k = 0; k < N_HTML; k++)
            if (dis[k].depth && dis[k].last != NOPOS && dis[k].last <= out->len)
                wt_push_range(wt, dis[k].pos, dis[k].last);
        wt_remove_ranges(wt, out);
    }
}

/* ---- pass 7: text cleanup and compact ---- */

/* Does a blank at s[i] (its run already skipped) sit before a closing
 * punctuation mark that takes no blank: , : ) ] or » (also as ">>"), or a
 * single '.' (an ellipsis " ..." keeps its blank)? */
static int closes_tight(const unsigned char *s, size_t n, size_t i) {
    static const unsigned char maybe[256] = {
        [','] = 1, [':'] = 1, [')'] = 1, [']'] = 1, ['.'] = 1, ['>'] = 1, [0xC2] = 1};
    if (i >= n || !maybe[s[i]]) return 0;
    unsigned c = s[i];
    if (c == ',' || c == ':' || c == ')' || c == ']') return 1;
    if (c == '.') return !(i + 1 < n && s[i + 1] == '.');
    if (c == '>') return i + 1 < n && s[i + 1] == '>';
    return c == 0xC2 && i + 1 < n && s[i + 1] == 0xBB;
}

/* Does the output o (start b) end in an opening mark that takes no blank
 * after it: ( [ or «? */
static int opens_tight(const unsigned char *b, const unsigned char *o) {
    if (o == b) return 0;
    if (o[-1] == '(' || o[-1] == '[') return 1;
    return o - b >= 2 && o[-2] == 0xC2 && o[-1] == 0xAB;
}

/* << -> «, >> -> », runs of spaces and tabs -> one space (none next to
 * tight punctuation unless faithful), 4+ dots -> ...
 * The output is never longer than the input. */
void wt_pass_spaces(const WikiText *wt, const unsigned char *s, size_t n, Buf *out) {
    buf_reserve(out, n);
    unsigned char *o = (unsigned char *)out->data + out->len;
    const unsigned char *o0 = (unsigned char *)out->data;
    int tidy = !wt->faithful;
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        if (!p7_special[c]) {
            *o++ = (unsigned char)c;
            i++;
            continue;
        }
        if (c == '<' || c == '>') {
            if (i + 1 < n && s[i + 1] == c) {
                *o++ = 0xC2;
                *o++ = c == '<' ? 0xAB : 0xBB;
                i += 2;
            } else {
                *o++ = (unsigned char)c;
                i++;
            }
        } else if (c == '.') {
            size_t k = i;
            while (k < n && s[k] == '.')
                k++;
            size_t m = k - i >= 4 ? 3 : k - i;
            memset(o, '.', m);
            o += m;
            i = k;
        } else {
            i++;
            while (i < n && (s[i] == ' ' || s[i] == '\t'))
                i++;
            if (!tidy || !(closes_tight(s, n, i) || (o > o0 && opens_tight(o0, o)))) *o++ = ' ';
        }
    }
    out->len = (size_t)(o - (unsigned char *)out->data);
    out->data[out->len] = '\0';
}

/* All characters non-word (Python's \W), markers counting as words. */
static int all_nonword(const unsigned char *s, size_t n) {
    const unsigned char *e = s + n;
    while (s < e) {
        if (*s < 0x80) {
            if (is_alnum(*s) || *s == '_' || *s == 1) return 0;
            s++;
            continue;
        }
        size_t l;
        uint32_t c = wt_u8_dec(s, e, &l);
        if (wt_is_word_cp(c)) return 0;
        s += l;
    }
    return 1;
}

/* Append s[0..n) to b with ",," -> "," then ",." -> "." (WikiExtractor's
 * two str.replace calls) and placeholder markers expanded. */
static void build_line(WikiText *wt, const unsigned char *s, size_t n, Buf *b) {
    size_t i = 0;
    buf_reserve(b, n);
    unsigned char *o = (unsigned char *)b->data + b->len;
    while (i < n) {
        unsigned c = s[i];
        if (c != ',' && c != 1) {
            *o++ = (unsigned char)c;
            i++;
            continue;
        }
        if (c == ',') {
            /* ",," -> ","; then ",." -> "." on the result */
            i += (i + 1 < n && s[i + 1] == ',') ? 2 : 1;
            if (!(i < n && s[i] == '.')) *o++ = ',';
            continue;
        }
        /* marker \x01 kind digits \x02 */
        int which = i + 1 < n && s[i + 1] == 'C';
        size_t k = i + 2;
        uint32_t cls = 0;
        while (k < n && is_digit(s[k]))
            cls = cls * 10 + (uint32_t)(s[k++] - '0');
        i = k + 1;
        if (k >= n || s[k] != '\x02' || cls >= wt->ph[which].n) continue;
        uint32_t *num = &wt->phnum[which][cls];
        if (!*num) *num = wt->phctr[which] + 1;
        wt->phctr[which]++;
        char tmp[32];
        int l = snprintf(tmp, sizeof tmp, "%s_%u", which ? "codice" : "formula", (unsigned)*num);
        b->len = (size_t)(o - (unsigned char *)b->data);
        buf_reserve(b, (size_t)l + (n - i));
        o = (unsigned char *)b->data + b->len;
        memcpy(o, tmp, (size_t)l);
        o += l;
    }
    b->len = (size_t)(o - (unsigned char *)b->data);
    b->data[b->len] = '\0';
}

/* Emit one paragraph: nowiki characters restored, whitespace trimmed. */
static void emit(WikiText *wt, Buf *out, const unsigned char *s, size_t n) {
    const unsigned char *e = s + n;
    size_t l;
    while (s < e && (l = wt_u8_space(s, e)))
        s += l;
    while (e > s) {
        const unsigned char *k = e - 1;
        while (k > s && (*k & 0xC0) == 0x80)
            k--;
        if (!wt_u8_space(k, e)) break;
        e = k;
    }
    if (s == e) return;
    size_t start = out->len;
    while (s < e) {
        const unsigned char *p = memchr(s, 0xF4, (size_t)(e - s));
        if (!p) p = e;
        buf_append(out, s, (size_t)(p - s));
        if (p >= e) break;
        if (is_protected(p, e)) {
            buf_putc(out, (char)(((p[2] & 1) << 6) | (p[3] & 0x3F)));
            s = p + 4;
        } else {
            buf_putc(out, (char)*p);
            s = p + 1;
        }
    }
    if (wt->count_leftover && wikitext_has_markup(out->data + start, out->len - start))
        wt->st.leftover_lines++;
    buf_putc(out, '\n');
    wt->st.paragraphs++;
}

/* WikiExtractor's section regex "(==+)\s*(.*?)\s*\1" matched at the start
 * of the line, plus "= T =" alone on its line; returns the level or 0, with
 * the title in s[*ta..*tb). */
static int match_heading(const unsigned char *s, size_t n, size_t *ta, size_t *tb) {
    static const char eqs[HEAD_LEVELS + 1] = "================";
    const unsigned char *e = s + n;
    size_t r = 0, l;
    while (r < n && s[r] == '=')
        r++;
    if (r == 0) return 0;
    if (r == 1) {
        size_t q = 1, z = n;
        while (q < n && (l = wt_u8_space(s + q, e)))
            q += l;
        while (z > q && (s[z - 1] == ' ' || s[z - 1] == '\t'))
            z--;
        if (z < q + 2 || s[z - 1] != '=') return 0;
        z--;
        while (z > q && (s[z - 1] == ' ' || s[z - 1] == '\t'))
            z--;
        if (z == q || memchr(s + q, '=', z - q)) return 0;
        *ta = q;
        *tb = z;
        return 1;
    }
    if (r > HEAD_LEVELS) r = HEAD_LEVELS;
    for (size_t lev = r; lev >= 2; lev--) {
        /* greedy leading blanks, then the lazy title: it ends at the blank
         * run before the first run of `lev` '=' */
        size_t q = lev;
        while (q < n && (l = wt_u8_space(s + q, e)))
            q += l;
        size_t t = find_q(s, q, n, eqs, lev);
        if (t == NOPOS) continue;
        size_t p = t;
        while (p > q && (s[p - 1] == ' ' || s[p - 1] == '\t'))
            p--;
        *ta = q;
        *tb = p;
        return (int)lev;
    }
    return 0;
}

/* Does a line look like table debris: a header row "! a !! b" or a cell
 * with HTML attributes "| style=... | text" that escaped its table? */
static int table_debris(const unsigned char *s, size_t n) {
    size_t k = 0;
    while (k < n && s[k] == ' ')
        k++;
    if (k >= n) return 0;
    int pipe = memchr(s + k, '|', n - k) != NULL;
    if (s[k] == '!' && (pipe || find_q(s, k, n, "!!", 2) != NOPOS)) return 1;
    if (!pipe) return 0;
    static const char *const attrs[] = {"colspan", "rowspan",     "style",   "class",
                                        "align",   "valign",      "bgcolor", "width",
                                        "scope",   "cellpadding", "border",  NULL};
    for (int a = 0; attrs[a]; a++) {
        size_t l = strlen(attrs[a]);
        size_t m = find_q(s, 0, n, attrs[a], l);
        if (m == NOPOS) continue;
        m += l;
        while (m < n && s[m] == ' ')
            m++;
        if (m < n && s[m] == '=' && memchr(s, '|', n)) return 1;
    }
    return 0;
}

/* Does the line hold only ASCII dots and dashes (or nothing)? */
static int only_dots(const unsigned char *s, size_t n) {
    for (size_t k = 0; k < n; k++)
        if (s[k] != '.' && s[k] != '-') return 0;
    return 1;
}

/* compact()'s line filter plus the table-debris rules: returns 0 for a line
 * that is not a paragraph, else 1 with *skip set to the list markers to cut
 * (keep_lists, or the colons of an indented line unless faithful). */
static int keep_line(const WikiText *wt, const unsigned char *L, size_t n, size_t *skip) {
    unsigned c0 = L[0], cl = L[n - 1];
    size_t k = 0, l;
    *skip = 0;
    if (c0 == ':' && !wt->keep_lists && !wt->faithful) {
        /* an indented line (quotation, poem, formula, reply): its text is
         * a paragraph, a list item nested in the indent is not */
        while (k < n && (L[k] == ':' || L[k] == ' ' || L[k] == '\t'))
            k++;
        if (k == n || L[k] == '*' || L[k] == '#' || L[k] == ';') return 0;
        if (L[k] == '{' || L[k] == '|' || cl == '}' || only_dots(L + k, n - k)) return 0;
        *skip = k;
    } else if (c0 == '*' || c0 == '#' || c0 == ';' || c0 == ':') {
        if (!wt->keep_lists) return 0;
        while (k < n && (L[k] == '*' || L[k] == '#' || L[k] == ';' || L[k] == ':'))
            k++;
        *skip = k;
    } else if (c0 == '{' || c0 == '|' || cl == '}') {
        return 0;
    } else if ((c0 == '(' && cl == ')') || only_dots(L, n)) {
        return 0;
    }
    if (table_debris(L, n)) return 0;
    /* a table row or template parameter line indented by blanks */
    while (k < n && (L[k] == ' ' || L[k] == '\t'))
        k++;
    if (k < n && L[k] == '|') return 0;
    /* whitespace-only lines are not paragraphs */
    const unsigned char *p = L + *skip, *e = L + n;
    while (p < e && (l = wt_u8_space(p, e)))
        p += l;
    return p < e;
}

void wt_compact(WikiText *wt, const unsigned char *s, size_t n, Buf *out) {
    /* line starts */
    size_t nl = 1;
    for (const unsigned char *p = s; (p = memchr(p, '\n', (size_t)(s + n - p))); p++)
        nl++;
    if (nl + 1 > wt->caplines) {
        wt->caplines = nl + 1;
        wt->lines = xrealloc(wt->lines, wt->caplines * sizeof *wt->lines);
    }
    size_t k = 0;
    wt->lines[k++] = 0;
    for (const unsigned char *p = s; (p = memchr(p, '\n', (size_t)(s + n - p))); p++)
        wt->lines[k++] = (size_t)(p - s) + 1;
    wt->lines[k] = n + 1; /* virtual start after the end */
#define LINE_A(x) (wt->lines[x])
#define LINE_B(x) (wt->lines[(x) + 1] - 1)
    /* WikiExtractor's re.sub(r'\n\W+?\n', '\n'): mark removed lines */
    if (nl > wt->caprm) {
        wt->caprm = nl;
        wt->rm = xrealloc(wt->rm, wt->caprm);
    }
    unsigned char *removed = wt->rm;
    memset(removed, 0, nl);
    for (size_t j = 0; j + 1 < nl;) {
        /* attempt at the newline ending line j, examining line j+1 */
        size_t a = LINE_A(j + 1), b = LINE_B(j + 1);
        if (b > a) {
            if (j + 2 < nl && all_nonword(s + a, b - a)) {
                removed[j + 1] = 1;
                j += 2;
            } else {
                j++;
            }
        } else if (j + 3 < nl && all_nonword(s + LINE_A(j + 2), LINE_B(j + 2) - LINE_A(j + 2))) {
            removed[j + 1] = removed[j + 2] = 1;
            j += 3;
        } else {
            j++;
        }
    }
    /* compact */
    int empty_section = 0, pending = 0;
    for (int h = 0; h < HEAD_LEVELS; h++)
        wt->has_head[h] = 0;
    for (size_t j = 0; j < nl; j++) {
        if (removed[j]) continue;
        size_t a = LINE_A(j), b = LINE_B(j);
        if (b == a) continue;
        buf_clear(&wt->line);
        build_line(wt, s + a, b - a, &wt->line);
        const unsigned char *L = (unsigned char *)wt->line.data;
        size_t n2 = wt->line.len;
        if (!n2) continue;
        size_t ta, tb;
        int lev = match_heading(L, n2, &ta, &tb);
        if (lev) {
            if (lev > HEAD_LEVELS) lev = HEAD_LEVELS;
            Buf *hb = &wt->head[lev - 1];
            buf_clear(hb);
            buf_append(hb, L + ta, tb - ta);
            if (hb->len && hb->data[hb->len - 1] != '!' && hb->data[hb->len - 1] != '?')
                buf_putc(hb, '.');
            wt->has_head[lev - 1] = 1;
            for (int h = lev; h < HEAD_LEVELS; h++)
                wt->has_head[h] = 0;
            pending = 1;
            empty_section = 1;
            continue;
        }
        size_t skip;
        if (!keep_line(wt, L, n2, &skip)) continue;
        if (pending) {
            if (wt->sections != WIKITEXT_SECTIONS_DROP)
                for (int h = 0; h < HEAD_LEVELS; h++)
                    if (wt->has_head[h])
                        emit(wt, out, (unsigned char *)wt->head[h].data, wt->head[h].len);
            for (int h = 0; h < HEAD_LEVELS; h++)
                wt->has_head[h] = 0;
            pending = 0;
            empty_section = 0;
            emit(wt, out, L + skip, n2 - skip);
        } else if (!empty_section) {
            emit(wt, out, L + skip, n2 - skip);
        }
    }
#undef LINE_A
#undef LINE_B
}
