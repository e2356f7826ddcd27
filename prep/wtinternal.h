/* wtinternal.h - private to the wikitext module: prep/wikitext.c (state,
 * helpers, namespaces, placeholders, the public API and the pass driver),
 * prep/wtmarkup.c (passes 1-4: preprocess, tables, links) and prep/wttext.c
 * (passes 5-7: bold and italic, HTML, text cleanup and compact). Only those
 * files include it; everyone else uses prep/wikitext.h. The wt_ functions
 * below are shared between those files and are not a public interface. */
#ifndef WB_WTINTERNAL_H
#define WB_WTINTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "prep/wikitext.h"

/* ---- limits ---- */

#define NOPOS ((size_t)-1)
#define TAG_MAX 2048      /* longest tag, attributes included */
#define TAGNAME_MAX 16    /* longest tag name we recognise */
#define MAGIC_MAX 48      /* longest __BEHAVIOUR_SWITCH__ body */
#define TITLE_MAX 512     /* longest link target examined */
#define LINK_DEPTH_MAX 64 /* deepest nesting of [[ ]] honoured */
#define HEAD_LEVELS 16    /* heading levels tracked by compact */
#define ENTITY_MAX 32     /* longest &name; */

/* ---- small types ---- */

typedef struct Brace {
    size_t pos; /* output offset of the first brace of the run */
    size_t count;
} Brace;

typedef struct Link {
    size_t pos;  /* output offset of "[[" */
    size_t pipe; /* output offset of the first '|', 0 = none yet */
} Link;

typedef struct Range {
    size_t a, b;
} Range;

/* Cache of the next occurrence of something at or after `from`: searches
 * made left to right reuse it, which keeps repeated searches linear. */
typedef struct Next {
    size_t from, at, end;
} Next;

/* Set of folded namespace names (open addressing). */
typedef struct NsSet {
    char **key;
    size_t cap, n;
} NsSet;

/* Placeholder classes: hash of the whole element -> class number. */
typedef struct PhSet {
    uint64_t *h;
    uint32_t *id;
    size_t cap, n;
} PhSet;

struct WikiText {
    int keep_lists, sections, no_placeholders, count_leftover, faithful;
    NsSet ns;
    Buf t0, t1; /* ping-pong pass buffers */
    Buf line;   /* current line in the compact stage */
    Buf head[HEAD_LEVELS];
    int has_head[HEAD_LEVELS];
    Brace *br;
    size_t nbr, capbr;
    Link *lk;
    size_t nlk;
    Range *rg;
    size_t nrg, caprg;
    size_t *lines;
    size_t caplines;
    unsigned char *rm; /* per line: removed by the punctuation-line rule */
    size_t caprm;
    PhSet ph[2];        /* 0 = formula, 1 = code */
    uint32_t *phnum[2]; /* class -> number given in output order, 0 = none */
    size_t phcap[2];
    uint32_t phctr[2]; /* placeholders numbered so far */
    WikiTextStats st;
};

/* ---- character helpers ---- */

static inline int is_alpha(unsigned c) { return (c | 32) - 'a' < 26; }
static inline int is_digit(unsigned c) { return c - '0' < 10; }
static inline int is_alnum(unsigned c) { return is_alpha(c) || is_digit(c); }
static inline int lower(unsigned c) { return c - 'A' < 26 ? (int)(c + 32) : (int)c; }
static inline int is_ws(unsigned c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Length of the valid UTF-8 sequence at s, 0 if invalid or truncated. */
static inline size_t u8_valid(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    if (c < 0x80) return 1;
    if (c < 0xC2) return 0;
    if (c < 0xE0) return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c < 0xF0) {
        if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && s[1] < 0xA0) return 0;
        if (c == 0xED && s[1] > 0x9F) return 0;
        return 3;
    }
    if (c > 0xF4 || n < 4) return 0;
    if ((s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80) return 0;
    if (c == 0xF0 && s[1] < 0x90) return 0;
    if (c == 0xF4 && s[1] > 0x8F) return 0;
    return 4;
}

/* A protected character (see "nowiki protection" in wikitext.c) starts at s. */
static inline int is_protected(const unsigned char *s, const unsigned char *e) {
    return s + 3 < e && s[0] == 0xF4 && s[1] == 0x8F && (s[2] == 0xBC || s[2] == 0xBD);
}

/* A tag at s[i] == '<': "<name ...>", "</name>" or "<name .../>". */
typedef struct Tag {
    int close, self;
    char name[TAGNAME_MAX + 1];
    size_t nl;
    size_t gt;  /* offset of '>' */
    size_t end; /* offset past '>' */
} Tag;

/* ---- shared functions (wikitext.c) ----
 * Each keeps the contract of the static function it was; the file that
 * defines it has the details. */

/* The code point at s (valid UTF-8 assumed, as pass 1 leaves it); *len
 * receives its byte length (at least 1, never past e). */
uint32_t wt_u8_dec(const unsigned char *s, const unsigned char *e, size_t *len);

/* Bytes to skip for an invalid sequence at s[0..n) (at least 1): the
 * maximal prefix of a well-formed sequence, as Unicode recommends. */
size_t wt_u8_bad_len(const unsigned char *s, size_t n);

/* 1 if code point c is a word character (Python's \w, approximated outside
 * ASCII), else 0. */
int wt_is_word_cp(uint32_t c);

/* Byte length of the whitespace character (Python's str.isspace) at s,
 * s < e, or 0 if there is none. */
size_t wt_u8_space(const unsigned char *s, const unsigned char *e);

/* 1 if c is a lower-case letter of the scripts the namespace folding knows. */
int wt_is_lower_cp(uint32_t c);

/* 1 if ASCII c is a markup character that <nowiki> must hide from the
 * later passes, else 0. */
int wt_protect_char(unsigned c);

/* Append c (a wt_protect_char character) in its protected form: the four
 * UTF-8 bytes of U+10FF00 + c. */
void wt_put_protected(Buf *b, unsigned c);

/* Collect the range [a, b) of the current buffer for wt_remove_ranges
 * (nothing when a >= b). */
void wt_push_range(WikiText *wt, size_t a, size_t b);

/* Remove the collected ranges (any order, may overlap) from b in one pass
 * and forget them. */
void wt_remove_ranges(WikiText *wt, Buf *b);

/* Exchange the contents of *a and *b. */
void wt_swap_bufs(Buf *a, Buf *b);

/* End of the line containing offset p of b (offset of '\n' or b->len). */
size_t wt_line_end(const Buf *b, size_t p);

/* Empty cache c: the next search scans. */
void wt_next_reset(Next *c);

/* Next byte ch at or after j in s[0..n), NOPOS if none (cached in c for
 * searches that move left to right). */
size_t wt_next_byte(Next *c, const unsigned char *s, size_t n, size_t j, int ch);

/* Next closing tag </name> (nl bytes, lower case; ASCII case-insensitive
 * and blanks allowed) at or after j in s[0..n), NOPOS if none; *end
 * receives the offset past its '>'. Cached in c. */
size_t wt_find_close(Next *c, const unsigned char *s, size_t n, size_t j, const char *name,
                     size_t nl, size_t *end);

/* Parse the tag at s[i] == '<' into t: 1 if it is one, else 0. ws allows
 * blanks after '<' and after the '/' of a closing tag; gt caches the search
 * for '>', which must come within TAG_MAX bytes. */
int wt_parse_tag(const unsigned char *s, size_t n, size_t i, int ws, Next *gt, Tag *t);

/* Add namespace name (UTF-8, NUL-terminated) to ns, folded (trimmed, '_'
 * and blank runs as one space, case-folded); names too long are ignored. */
void wt_ns_add(NsSet *ns, const char *name);

/* 1 if s[0..n), folded as wt_ns_add folds, is in ns, else 0. */
int wt_ns_has(const NsSet *ns, const unsigned char *s, size_t n);

/* 1 if s[0..n) (trailing blanks ignored) is an interlanguage prefix, else 0. */
int wt_is_interlang(const unsigned char *s, size_t n);

/* 1 if s[0..n) ends in a media file extension ("x.jpg"), else 0. */
int wt_is_file_name(const unsigned char *s, size_t n);

/* The placeholder class of the element s[0..n) in p: identical elements
 * share one; a new element gets the next number. */
uint32_t wt_ph_class(PhSet *p, const unsigned char *s, size_t n);

/* Forget p's classes (a new page); keeps its memory. */
void wt_ph_reset(PhSet *p);

/* Append the placeholder marker "\x01<kind><cls>\x02" (kind 'M' formula,
 * 'C' code). */
void wt_put_marker(Buf *b, char kind, uint32_t cls);

/* Append the ghosts of the dropped s[a..e): \x03 for each newline, \x04
 * for each double quote. */
void wt_put_ghosts(Buf *b, const unsigned char *s, size_t a, size_t e);

/* ---- the passes (wtmarkup.c, wttext.c), in the order wikitext_clean
 * runs them; each appends its result for s[0..n) to out (cleared by the
 * caller) ---- */

/* Pass 1 (wtmarkup.c): any bytes in; valid UTF-8 out with comments,
 * extension tags, templates and behaviour switches handled, ghosts and
 * placeholder markers left. */
void wt_pass_pre(WikiText *wt, const unsigned char *s, size_t n, Buf *out);

/* Pass 2 (wtmarkup.c): tables {| ... |} removed (nested). */
void wt_pass_tables(WikiText *wt, const unsigned char *s, size_t n, Buf *out);

/* Pass 3 (wtmarkup.c): external links [url label] -> label. */
void wt_pass_extlinks(const unsigned char *s, size_t n, Buf *out);

/* Pass 4 (wtmarkup.c): internal links -> anchor or target; namespaced,
 * file and interlanguage links dropped. */
void wt_pass_links(WikiText *wt, const unsigned char *s, size_t n, Buf *out);

/* Pass 5 (wttext.c): bold and italic on *cur in place, *tmp as scratch
 * (the contents of the two may be exchanged; the result is in *cur). */
void wt_pass_quotes(Buf **cur, Buf **tmp);

/* Pass 6 (wttext.c): HTML tags and character references; ghosts removed. */
void wt_pass_html(WikiText *wt, const unsigned char *s, size_t n, Buf *out);

/* Pass 7a (wttext.c): << >> -> « », blank runs -> one space, 4+ dots ->
 * "..."; unless wt->faithful, no blank before , . : ) ] » (an ellipsis
 * keeps it) or after ( [ «. out is never longer than s. */
void wt_pass_spaces(const WikiText *wt, const unsigned char *s, size_t n, Buf *out);

/* Pass 7b (wttext.c): WikiExtractor's compact(): the paragraphs of
 * s[0..n) appended to out, headings and placeholders resolved (the
 * caller sizes and zeroes wt->phnum first). */
void wt_compact(WikiText *wt, const unsigned char *s, size_t n, Buf *out);

#endif
