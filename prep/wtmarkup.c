/* wtmarkup.c - passes 1 to 4 of the wikitext cleaner (see wikitext.c for
 * the whole design): preprocess (comments, extension tags, templates,
 * behaviour switches, LanguageConverter), tables, external links and
 * internal links. Private to the wikitext module (prep/wtinternal.h). */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/common.h"
#include "common/utf8.h"
#include "prep/wtinternal.h"

/* ---- pass 1: preprocess ---- */

enum { X_DROP, X_MATH, X_NOWIKI, X_TAGONLY };

static const struct {
    const char *name;
    unsigned char kind;
} ext_tags[] = {
    {"ref", X_DROP},
    {"references", X_DROP},
    {"gallery", X_DROP},
    {"timeline", X_DROP},
    {"imagemap", X_DROP},
    {"pre", X_DROP},
    {"source", X_DROP},
    {"syntaxhighlight", X_DROP},
    {"score", X_DROP},
    {"graph", X_DROP},
    {"templatedata", X_DROP},
    {"mapframe", X_DROP},
    {"maplink", X_DROP},
    {"inputbox", X_DROP},
    {"categorytree", X_DROP},
    {"noinclude", X_DROP},
    {"includeonly", X_DROP},
    {"templatestyles", X_DROP},
    {"indicator", X_DROP},
    {"hiero", X_DROP},
    {"charinsert", X_DROP},
    {"section", X_DROP},
    {"dynamicpagelist", X_DROP},
    {"rss", X_DROP},
    {"math", X_MATH},
    {"chem", X_MATH},
    {"ce", X_MATH},
    {"nowiki", X_NOWIKI},
    {"onlyinclude", X_TAGONLY},
    {"poem", X_TAGONLY},
};
#define N_EXT (sizeof ext_tags / sizeof ext_tags[0])

static int ext_lookup(const char *name) {
    for (size_t k = 0; k < N_EXT; k++)
        if (ext_tags[k].name[0] == name[0] && !strcmp(ext_tags[k].name, name)) return (int)k;
    return -1;
}

static const char *const magic_words[] = {"NOTOC",
                                          "FORCETOC",
                                          "TOC",
                                          "NEWSECTIONLINK",
                                          "NONEWSECTIONLINK",
                                          "NOGALLERY",
                                          "HIDDENCAT",
                                          "NOCONTENTCONVERT",
                                          "NOCC",
                                          "NOTITLECONVERT",
                                          "NOTC",
                                          "START",
                                          "END",
                                          "INDEX",
                                          "NOINDEX",
                                          "STATICREDIRECT",
                                          "DISAMBIG",
                                          "NOEDITSECTION",
                                          "EXPECTUNUSEDCATEGORY",
                                          "EXPECTUNUSEDTEMPLATE",
                                          "NOGLOBAL",
                                          "ARCHIVEDTALK",
                                          "NOTALK",
                                          "KEIN_INHALTSVERZEICHNIS",
                                          "INHALTSVERZEICHNIS",
                                          "NINCSTARTALOM",
                                          "SANSSOMMAIRE",
                                          "GEENINHOUD",
                                          "SENZAINDICE",
                                          "BEZSPISU",
                                          NULL};

/* Length of a behaviour switch "__WORD__" at s[i] (s[i], s[i+1] == '_'),
 * 0 if none: a known English word, or an upper-case word with non-ASCII
 * letters (localized switches such as __БЕЗ_ОГЛАВЛЕНИЯ__). */
static size_t magic_len(const unsigned char *s, size_t n, size_t i) {
    size_t j = i + 2, lim = i + 2 + MAGIC_MAX;
    int nonascii = 0;
    if (lim > n) lim = n;
    while (j < lim && !(s[j] == '_' && j + 1 < n && s[j + 1] == '_')) {
        unsigned c = s[j];
        if (c >= 0x80)
            nonascii = 1;
        else if (!(c - 'A' < 26u || c == '_'))
            return 0;
        j++;
    }
    if (j >= lim || j == i + 2) return 0;
    size_t l = j - i - 2;
    if (nonascii) {
        const unsigned char *e = s + j;
        for (const unsigned char *p = s + i + 2; p < e;) {
            size_t cl;
            uint32_t c = wt_u8_dec(p, e, &cl);
            if (c >= 0x80 && (!wt_is_word_cp(c) || wt_is_lower_cp(c))) return 0;
            p += cl;
        }
        return l + 4;
    }
    for (int k = 0; magic_words[k]; k++)
        if (strlen(magic_words[k]) == l && !memcmp(magic_words[k], s + i + 2, l)) return l + 4;
    return 0;
}

/* Copy s[a..b) to out as pass 1 does with plain text: invalid UTF-8 becomes
 * U+FFFD, control characters other than tab and newline are dropped. */
static void put_valid(WikiText *wt, Buf *out, const unsigned char *s, size_t a, size_t b) {
    while (a < b) {
        size_t j = a;
        while (j < b) {
            unsigned c = s[j];
            size_t l = c < 0x80 ? (c >= 0x20 || c == '\t' || c == '\n') && c != 0x7F
                                : u8_valid(s + j, b - j);
            if (!l) break;
            j += l;
        }
        buf_append(out, s + a, j - a);
        a = j;
        if (a >= b) break;
        if (s[a] < 0x80) {
            a++;
        } else {
            wt->st.invalid_utf8++;
            buf_append(out, "\xEF\xBF\xBD", 3);
            a += wt_u8_bad_len(s + a, b - a);
        }
    }
}

/* Copy nowiki content s[a..b) with markup characters protected; character
 * references stay as they are for pass 6. */
static void put_nowiki(WikiText *wt, Buf *out, const unsigned char *s, size_t a, size_t b) {
    for (size_t i = a; i < b;) {
        size_t j = i;
        while (j < b && !wt_protect_char(s[j]) && s[j] != '&')
            j++;
        put_valid(wt, out, s, i, j);
        i = j;
        if (i >= b) break;
        if (s[i] == '&') {
            size_t k = i + 1;
            if (k < b && s[k] == '#') k++;
            while (k < b && k - i < ENTITY_MAX && is_alnum(s[k]))
                k++;
            if (k < b && s[k] == ';') {
                buf_append(out, s + i, k + 1 - i);
                i = k + 1;
            } else {
                buf_putc(out, '&');
                i++;
            }
            continue;
        }
        wt_put_protected(out, s[i]);
        i++;
    }
}

/* Bytes that stop the plain-text copy loop of each pass. */
static const unsigned char p1_special[256] = {
    [0] = 1,  [1] = 1,  [2] = 1,  [3] = 1,    [4] = 1,   [5] = 1,   [6] = 1,   [7] = 1,   [8] = 1,
    [11] = 1, [12] = 1, [13] = 1, [14] = 1,   [15] = 1,  [16] = 1,  [17] = 1,  [18] = 1,  [19] = 1,
    [20] = 1, [21] = 1, [22] = 1, [23] = 1,   [24] = 1,  [25] = 1,  [26] = 1,  [27] = 1,  [28] = 1,
    [29] = 1, [30] = 1, [31] = 1, [0x7F] = 1, ['<'] = 1, ['{'] = 1, ['}'] = 1, ['_'] = 1,
};
static const unsigned char p4_special[256] = {['['] = 1, [']'] = 1, ['|'] = 1, ['\n'] = 1};

/* LanguageConverter markup "-{...}-" at s[i] == '{' (s[i-1] == '-'): emit
 * what MediaWiki shows (the text, or the first variant of
 * "zh-hans:A;zh-hant:B", nothing for hidden/title rules) in place of the
 * '-' already in out. Returns the offset past "}-", or 0 if it is not one. */
static size_t lang_convert(WikiText *wt, const unsigned char *s, size_t n, size_t i, Next *cb,
                           Buf *out) {
    size_t c = wt_next_byte(cb, s, n, i + 1, '}');
    if (c == NOPOS || c + 1 >= n || s[c + 1] != '-' || c - i > TAG_MAX) return 0;
    size_t a = i + 1, b = c;
    for (size_t k = a; k < b; k++)
        if (s[k] == '{' || s[k] == '<' || s[k] == '\n') return 0;
    size_t f = a;
    while (f < b && f - a < 8 && (is_alpha(s[f]) || s[f] == ';' || s[f] == '+' || s[f] == '-'))
        f++;
    if (f < b && f > a && s[f] == '|') {
        for (size_t k = a; k < f; k++)
            if (s[k] == 'H' || s[k] == 'T' || s[k] == '-') {
                out->len--;
                out->data[out->len] = '\0';
                return c + 2;
            }
        a = f + 1;
    }
    size_t v = a;
    while (v < b && s[v] == ' ')
        v++;
    size_t w = v;
    while (w < b && ((unsigned)(s[w] - 'a') < 26u || s[w] == '-'))
        w++;
    if (w - v >= 2 && w - v <= 20) {
        size_t k = w;
        while (k < b && s[k] == ' ')
            k++;
        if (k < b && s[k] == ':') {
            a = k + 1;
            const unsigned char *semi = memchr(s + a, ';', b - a);
            if (semi) b = (size_t)(semi - s);
        }
    }
    out->len--;
    put_valid(wt, out, s, a, b);
    return c + 2;
}

static void brace_push(WikiText *wt, size_t pos, size_t count) {
    if (wt->nbr == wt->capbr) {
        wt->capbr = wt->capbr ? wt->capbr * 2 : 64;
        wt->br = xrealloc(wt->br, wt->capbr * sizeof *wt->br);
    }
    wt->br[wt->nbr].pos = pos;
    wt->br[wt->nbr].count = count;
    wt->nbr++;
}

/* If b[0..n) (a template's body) is "formatnum:" and a plain number,
 * ASCII case-insensitive and blanks allowed, return the number's length
 * with its offset in *at; else 0. The number stays as written: grouping it
 * as MediaWiki does needs the wiki's language (1,000 in English is 1 000
 * in Hungarian, where 1,000 means one). */
static size_t formatnum_arg(const unsigned char *b, size_t n, size_t *at) {
    static const char kw[] = "formatnum:";
    size_t i = 0, k;
    while (i < n && (b[i] == ' ' || b[i] == '\t'))
        i++;
    for (k = 0; kw[k]; k++, i++)
        if (i >= n || lower(b[i]) != kw[k]) return 0;
    while (i < n && (b[i] == ' ' || b[i] == '\t'))
        i++;
    size_t a = i;
    if (i < n && (b[i] == '-' || b[i] == '+')) i++;
    if (i >= n || !is_digit(b[i])) return 0;
    while (i < n && (is_digit(b[i]) || b[i] == '.' || b[i] == ','))
        i++;
    size_t e = i;
    while (i < n && (b[i] == ' ' || b[i] == '\t'))
        i++;
    if (i != n) return 0;
    *at = a;
    return e - a;
}

void wt_pass_pre(WikiText *wt, const unsigned char *s, size_t n, Buf *out) {
    Next gt, cbrace, close[N_EXT];
    wt_next_reset(&gt);
    wt_next_reset(&cbrace);
    for (size_t k = 0; k < N_EXT; k++)
        wt_next_reset(&close[k]);
    wt->nbr = 0;
    buf_reserve(out, n + 64);
    size_t i = 0;
    while (i < n) {
        /* copy the plain run, validating UTF-8 */
        size_t j = i;
        while (j < n) {
            unsigned c = s[j];
            if (c < 0x80) {
                if (p1_special[c]) break;
                j++;
            } else {
                size_t l = u8_valid(s + j, n - j);
                if (!l) break;
                j += l;
            }
        }
        if (j > i) buf_append(out, s + i, j - i);
        i = j;
        if (i >= n) break;
        unsigned c = s[i];
        if (c >= 0x80) {
            wt->st.invalid_utf8++;
            buf_append(out, "\xEF\xBF\xBD", 3);
            i += wt_u8_bad_len(s + i, n - i);
        } else if (c == '\r') {
            if (i + 1 >= n || s[i + 1] != '\n') buf_putc(out, '\n');
            i++;
        } else if (c < 32 || c == 0x7F) {
            i++;
        } else if (c == '_') {
            size_t l = i + 1 < n && s[i + 1] == '_' ? magic_len(s, n, i) : 0;
            if (l) {
                i += l;
            } else {
                buf_putc(out, '_');
                i++;
            }
        } else if (c == '{') {
            size_t k = i;
            while (k < n && s[k] == '{')
                k++;
            if (k - i == 1 && i && s[i - 1] == '-' && out->len && out->data[out->len - 1] == '-') {
                size_t e = lang_convert(wt, s, n, i, &cbrace, out);
                if (e) {
                    i = e;
                    continue;
                }
            }
            if (k - i >= 2) brace_push(wt, out->len, k - i);
            buf_append(out, s + i, k - i);
            i = k;
        } else if (c == '}') {
            size_t k = i;
            while (k < n && s[k] == '}')
                k++;
            size_t m = k - i;
            int orphan = 0;
            while (m >= 2 && wt->nbr) {
                Brace *t = &wt->br[wt->nbr - 1];
                size_t use = (t->count >= 3 && m >= 3) ? 3 : 2;
                /* {{formatnum:1234}} shows its number (not faithful) */
                size_t body = t->pos + t->count, at = 0, num = 0;
                if (use == 2 && !wt->faithful)
                    num = formatnum_arg((unsigned char *)out->data + body, out->len - body, &at);
                t->count -= use;
                m -= use;
                if (t->count < 2) {
                    /* a lone brace left over ("{{{a}}" or "{{{{a}}}}") goes
                     * too, with one lone closing brace */
                    orphan = t->count == 1;
                    t->count = 0;
                    wt->nbr--;
                }
                out->len = t->pos + t->count;
                if (num) {
                    memmove(out->data + out->len, out->data + body + at, num);
                    out->len += num;
                }
            }
            if (m >= 2) {
                wt->st.unbalanced++;
                m = 0;
            }
            if (m && !orphan) buf_putc(out, '}');
            out->data[out->len] = '\0';
            i = k;
        } else { /* '<' */
            if (n - i >= 4 && s[i + 1] == '!' && s[i + 2] == '-' && s[i + 3] == '-') {
                const unsigned char *e = memmem(s + i + 4, n - i - 4, "-->", 3);
                size_t end = e ? (size_t)(e - s) + 3 : n;
                wt_put_ghosts(out, s, i, end);
                i = end;
                continue;
            }
            Tag t;
            int x = -1;
            if (wt_parse_tag(s, n, i, 0, &gt, &t)) x = ext_lookup(t.name);
            if (x < 0) {
                buf_putc(out, '<');
                i++;
                continue;
            }
            int kind = ext_tags[x].kind;
            if (t.close || t.self || kind == X_TAGONLY) {
                i = t.end;
                continue;
            }
            size_t cend, cs = wt_find_close(&close[x], s, n, t.end, t.name, t.nl, &cend);
            if (cs == NOPOS) {
                i = t.end; /* unclosed: drop the opening tag only */
                continue;
            }
            if (kind == X_MATH) {
                if (!wt->no_placeholders)
                    wt_put_marker(out, 'M', wt_ph_class(&wt->ph[0], s + i, cend - i));
            } else if (kind == X_NOWIKI) {
                put_nowiki(wt, out, s, t.end, cs);
            }
            if (kind != X_NOWIKI) wt_put_ghosts(out, s, i, cend);
            i = cend;
        }
    }
    /* unclosed templates: drop from the braces to the end of their line */
    for (size_t k = 0; k < wt->nbr; k++) {
        size_t p = wt->br[k].pos;
        if (wt->nrg && p < wt->rg[wt->nrg - 1].b) continue;
        wt_push_range(wt, p, wt_line_end(out, p));
        wt->st.unbalanced++;
    }
    wt->nbr = 0;
    wt_remove_ranges(wt, out);
}

/* ---- pass 2: tables ---- */

/* Remove table rows from b[from..): lines whose first non-blank character
 * is '|' or '!' or that start with "{|"; other lines stay. */
static void filter_table_lines(Buf *b, size_t from) {
    size_t r = from, w = from;
    int first = 1;
    while (r < b->len) {
        size_t e = wt_line_end(b, r);
        size_t k = r;
        while (k < e && (b->data[k] == ' ' || b->data[k] == '\t' || b->data[k] == ':'))
            k++;
        int drop = first || (k < e && (b->data[k] == '|' || b->data[k] == '!' ||
                                       (b->data[k] == '{' && k + 1 < e && b->data[k + 1] == '|')));
        size_t stop = e < b->len ? e + 1 : e;
        if (!drop) {
            memmove(b->data + w, b->data + r, stop - r);
            w += stop - r;
        } else if (first && e < b->len) {
            b->data[w++] = '\n';
        }
        first = 0;
        r = stop;
    }
    b->len = w;
    b->data[w] = '\0';
}

void wt_pass_tables(WikiText *wt, const unsigned char *s, size_t n, Buf *out) {
    size_t depth = 0, start = 0, i = 0;
    buf_reserve(out, n);
    while (i < n) {
        const unsigned char *p = memchr(s + i, '|', n - i);
        size_t j = p ? (size_t)(p - s) : n;
        if (j > i && j < n && s[j - 1] == '{') {
            /* "{|": open */
            buf_append(out, s + i, j - 1 - i);
            if (!depth++) start = out->len;
            buf_append(out, "{|", 2);
            i = j + 1;
            continue;
        }
        if (j + 1 < n && s[j + 1] == '}' && depth) {
            buf_append(out, s + i, j - i);
            if (!--depth) {
                out->len = start;
                out->data[start] = '\0';
            }
            i = j + 2;
            continue;
        }
        size_t stop = j < n ? j + 1 : n;
        buf_append(out, s + i, stop - i);
        i = stop;
    }
    if (depth) {
        wt->st.unbalanced++;
        filter_table_lines(out, start);
    }
}

/* ---- pass 3: external links ---- */

static const char *const url_protocols[] = {
    "bitcoin:", "ftp://",       "ftps://", "geo:",    "git://", "gopher://", "http://", "https://",
    "irc://",   "ircs://",      "magnet:", "mailto:", "mms://", "news:",     "nntp://", "redis://",
    "sftp://",  "sip:",         "sips:",   "sms:",    "ssh://", "svn://",    "tel:",    "telnet://",
    "urn:",     "worldwind://", "xmpp:",   "//",      NULL};

static size_t match_protocol(const unsigned char *s, size_t n, size_t i) {
    static size_t len[sizeof url_protocols / sizeof url_protocols[0]];
    unsigned c0 = (unsigned)lower(s[i]);
    if (!is_alpha(c0) && c0 != '/') return 0;
    for (int k = 0; url_protocols[k]; k++) {
        const char *p = url_protocols[k];
        if ((unsigned char)p[0] != c0) continue;
        size_t l = len[k] ? len[k] : (len[k] = strlen(p)), m = 1;
        if (n - i < l) continue;
        while (m < l && lower(s[i + m]) == p[m])
            m++;
        if (m == l) return l;
    }
    return 0;
}

/* Length of a URL character at s (WikiExtractor's EXT_LINK_URL_CLASS:
 * anything but brackets, <>", controls and whitespace), 0 if none. */
static size_t url_char(const unsigned char *s, const unsigned char *e) {
    unsigned c = *s;
    if (c <= 0x20 || c == 0x7F || c == '[' || c == ']' || c == '<' || c == '>' || c == '"')
        return 0;
    if (c < 0x80) return 1;
    if (wt_u8_space(s, e)) return 0;
    size_t l;
    wt_u8_dec(s, e, &l);
    return l;
}

/* WikiExtractor's EXT_IMAGE_REGEX: an image URL used as link label. */
static int is_image_url(const unsigned char *s, size_t n) {
    size_t k = 0;
    if (n > 7 && !strncasecmp((const char *)s, "http://", 7))
        k = 7;
    else if (n > 8 && !strncasecmp((const char *)s, "https://", 8))
        k = 8;
    else
        return 0;
    const unsigned char *e = s + n;
    int slash = 0;
    for (size_t j = k; j < n; j++) {
        if (s[j] <= 0x20 || s[j] == '[' || s[j] == ']' || s[j] == '<' || s[j] == '>' || s[j] == '"')
            return 0;
        if (s[j] >= 0x80 && wt_u8_space(s + j, e)) return 0;
        if (s[j] == '/') slash = 1;
    }
    if (!slash) return 0;
    static const char *const ext[] = {".gif", ".png", ".jpg", ".jpeg", NULL};
    for (int x = 0; ext[x]; x++) {
        size_t l = strlen(ext[x]);
        if (n - k > l && !strncasecmp((const char *)s + n - l, ext[x], l)) return 1;
    }
    return 0;
}

void wt_pass_extlinks(const unsigned char *s, size_t n, Buf *out) {
    Next close, nl;
    wt_next_reset(&close);
    wt_next_reset(&nl);
    const unsigned char *e = s + n;
    size_t i = 0;
    buf_reserve(out, n);
    while (i < n) {
        const unsigned char *p = memchr(s + i, '[', n - i);
        size_t j = p ? (size_t)(p - s) : n;
        buf_append(out, s + i, j - i);
        i = j;
        if (i >= n) break;
        size_t pl = i + 1 < n ? match_protocol(s, n, i + 1) : 0;
        size_t u = i + 1 + pl, l;
        while (pl && u < n && (l = url_char(s + u, e)))
            u += l;
        if (!pl || u == i + 1 + pl) {
            buf_putc(out, '[');
            i++;
            continue;
        }
        /* \s* (newlines included), then the label: up to the first ']' on
         * the same line (controls other than tab and newline are gone) */
        size_t a = u;
        while (a < n && (l = wt_u8_space(s + a, e)))
            a += l;
        size_t b = wt_next_byte(&close, s, n, a, ']');
        size_t z = wt_next_byte(&nl, s, n, a, '\n');
        if (b == NOPOS || (z != NOPOS && z < b)) {
            buf_putc(out, '[');
            i++;
            continue;
        }
        if (!is_image_url(s + a, b - a)) buf_append(out, s + a, b - a);
        i = b + 1;
    }
}

/* ---- pass 4: internal links ---- */

/* Decide the fate of a link whose text sits at out[pos+2 .. end): returns
 * 1 to drop it (namespaced), 0 to keep; *colon is set for "[[:...". */
static int link_dropped(const WikiText *wt, const unsigned char *t, size_t n, int *colon) {
    size_t a = 0;
    *colon = 0;
    if (n > TITLE_MAX) n = TITLE_MAX;
    while (a < n && (t[a] == ' ' || t[a] == '_' || t[a] == '\t'))
        a++;
    if (a < n && t[a] == ':') {
        *colon = 1;
        a++;
    }
    const unsigned char *c = memchr(t + a, ':', n - a);
    if (!c) return 0;
    size_t pl = (size_t)(c - t) - a;
    if (wt_ns_has(&wt->ns, t + a, pl)) return !*colon;
    if (*colon) return 0;
    if (wt_is_interlang(t + a, pl)) return 1;
    if (pl && pl <= 40 && !memchr(t + a, ' ', pl) && wt_is_file_name(t, n)) return 1;
    return 0;
}

/* Unclosed "[[" at out[pos]: dropped, with the rest of its line when it
 * targets a dropped namespace. */
static void link_abandon(WikiText *wt, Buf *out, const Link *lk) {
    size_t tend = lk->pipe ? lk->pipe : out->len;
    int colon;
    wt->st.unbalanced++;
    if (link_dropped(wt, (unsigned char *)out->data + lk->pos + 2, tend - lk->pos - 2, &colon)) {
        size_t e = wt_line_end(out, lk->pos);
        memmove(out->data + lk->pos, out->data + e, out->len - e);
        out->len -= e - lk->pos;
    } else {
        memmove(out->data + lk->pos, out->data + lk->pos + 2, out->len - lk->pos - 2);
        out->len -= 2;
    }
    out->data[out->len] = '\0';
}

static void link_close(WikiText *wt, Buf *out, const Link *lk) {
    size_t tstart = lk->pos + 2, tend = lk->pipe ? lk->pipe : out->len;
    unsigned char *d = (unsigned char *)out->data;
    int colon;
    if (link_dropped(wt, d + tstart, tend - tstart, &colon)) {
        out->len = lk->pos;
        out->data[out->len] = '\0';
        return;
    }
    size_t a, b;
    if (lk->pipe) {
        const unsigned char *e = d + out->len;
        a = lk->pipe + 1;
        b = out->len;
        size_t l;
        while (a < b && (l = wt_u8_space(d + a, e)))
            a += l;
        while (b > a) {
            size_t k = b - 1;
            while (k > a && (d[k] & 0xC0) == 0x80)
                k--;
            if (!wt_u8_space(d + k, e)) break;
            b = k;
        }
    } else {
        a = tstart;
        b = out->len;
        if (colon) {
            while (a < b && d[a] != ':')
                a++;
            a++;
        }
    }
    memmove(d + lk->pos, d + a, b - a);
    out->len = lk->pos + (b - a);
    out->data[out->len] = '\0';
}

void wt_pass_links(WikiText *wt, const unsigned char *s, size_t n, Buf *out) {
    Next open, close;
    wt_next_reset(&open);
    wt_next_reset(&close);
    if (!wt->lk) wt->lk = xmalloc(LINK_DEPTH_MAX * sizeof *wt->lk);
    size_t i = 0;
    wt->nlk = 0;
    buf_reserve(out, n);
    while (i < n) {
        size_t j = i;
        if (!wt->nlk) {
            /* outside links only brackets matter */
            size_t p = wt_next_byte(&open, s, n, i, '['), q = wt_next_byte(&close, s, n, i, ']');
            j = p < q ? p : q;
            if (j == NOPOS) j = n;
        } else {
            while (j < n && !p4_special[s[j]])
                j++;
        }
        buf_append(out, s + i, j - i);
        i = j;
        if (i >= n) break;
        unsigned c = s[i];
        if (c == '[') {
            size_t k = i;
            while (k < n && s[k] == '[')
                k++;
            if (k - i < 2) {
                buf_putc(out, '[');
                i = k;
                continue;
            }
            if (k - i == 3) buf_putc(out, '['); /* "[[[x]]]" shows "[x]" */
            if (wt->nlk < LINK_DEPTH_MAX) {
                wt->lk[wt->nlk].pos = out->len;
                wt->lk[wt->nlk].pipe = 0;
                wt->nlk++;
                buf_append(out, "[[", 2);
            } else {
                wt->st.unbalanced++;
            }
            i = k;
        } else if (c == ']') {
            if (i + 1 < n && s[i + 1] == ']') {
                if (wt->nlk)
                    link_close(wt, out, &wt->lk[--wt->nlk]);
                else
                    wt->st.unbalanced++;
                i += 2;
            } else {
                buf_putc(out, ']');
                i++;
            }
        } else if (c == '|') {
            if (wt->nlk && !wt->lk[wt->nlk - 1].pipe) wt->lk[wt->nlk - 1].pipe = out->len;
            buf_putc(out, '|');
            i++;
        } else { /* '\n' */
            /* a target cannot span lines; no link spans a blank line */
            while (wt->nlk && !wt->lk[wt->nlk - 1].pipe)
                link_abandon(wt, out, &wt->lk[--wt->nlk]);
            size_t k = i + 1;
            while (k < n && (s[k] == ' ' || s[k] == '\t'))
                k++;
            if (k >= n || s[k] == '\n')
                while (wt->nlk)
                    link_abandon(wt, out, &wt->lk[--wt->nlk]);
            buf_putc(out, '\n');
            i++;
        }
    }
    while (wt->nlk)
        link_abandon(wt, out, &wt->lk[--wt->nlk]);
}
