/* json.c - JSON string writer and a non-allocating object/array walker
 * (RFC 8259). See json.h. */
#include "common/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"

/* ---- writing ---- */

/* SWAR tests on 8 bytes at once (Hacker's Delight 6-1): does any byte of v
 * equal c, or fall below c? */
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull
static inline uint64_t has_byte(uint64_t v, unsigned c) {
    uint64_t x = v ^ (ONES * c);
    return (x - ONES) & ~x & HIGHS;
}
static inline uint64_t has_less(uint64_t v, unsigned c) { return (v - ONES * c) & ~v & HIGHS; }

/* Append the JSON escape of one ASCII byte that needs one: '"', '\\' or a
 * control character. */
static void put_escape(Buf *out, unsigned char c) {
    static const char hex[] = "0123456789abcdef";
    switch (c) {
    case '"':
        buf_append(out, "\\\"", 2);
        break;
    case '\\':
        buf_append(out, "\\\\", 2);
        break;
    case '\n':
        buf_append(out, "\\n", 2);
        break;
    case '\t':
        buf_append(out, "\\t", 2);
        break;
    case '\r':
        buf_append(out, "\\r", 2);
        break;
    case '\b':
        buf_append(out, "\\b", 2);
        break;
    case '\f':
        buf_append(out, "\\f", 2);
        break;
    default: {
        char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        buf_append(out, e, 6);
    }
    }
}

void json_append_string_utf8(Buf *out, const char *s, size_t n) {
    size_t i = 0, run = 0;
    buf_reserve(out, n + 2);
    buf_putc(out, '"');
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t v;
            memcpy(&v, s + i, 8);
            /* bytes >= 0x80 are fine here: only controls, '"' and '\\' matter */
            if (!(has_less(v, 0x20) | has_byte(v, '"') | has_byte(v, '\\'))) {
                i += 8;
                continue;
            }
        }
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            i++;
            continue;
        }
        buf_append(out, s + run, i - run);
        put_escape(out, c);
        i++;
        run = i;
    }
    buf_append(out, s + run, n - run);
    buf_putc(out, '"');
}

size_t json_append_string(Buf *out, const char *s, size_t n) {
    if (utf8_valid_prefix(s, n) == n) {
        json_append_string_utf8(out, s, n);
        return 0;
    }
    Buf fixed = {0};
    size_t bad = utf8_append_repair(&fixed, s, n);
    json_append_string_utf8(out, fixed.data, fixed.len);
    buf_free(&fixed);
    return bad;
}

static void put_u16(Buf *out, uint32_t u) {
    static const char hex[] = "0123456789abcdef";
    char e[6] = {'\\',       'u', hex[(u >> 12) & 15], hex[(u >> 8) & 15], hex[(u >> 4) & 15],
                 hex[u & 15]};
    buf_append(out, e, 6);
}

void json_append_string_ascii(Buf *out, const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, run = 0;
    buf_reserve(out, n + 2);
    buf_putc(out, '"');
    while (i < n) {
        unsigned c = p[i];
        if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
            i++;
            continue;
        }
        buf_append(out, s + run, i - run);
        if (c < 0x80) {
            put_escape(out, (unsigned char)c);
            i++;
        } else {
            uint32_t cp;
            size_t k = utf8_decode(p + i, n - i, &cp);
            if (!k) {
                cp = 0xFFFD;
                k = utf8_bad_len(p + i, n - i);
            }
            if (cp >= 0x10000) {
                cp -= 0x10000;
                put_u16(out, 0xD800 + (cp >> 10));
                put_u16(out, 0xDC00 + (cp & 0x3FF));
            } else
                put_u16(out, cp);
            i += k;
        }
        run = i;
    }
    buf_append(out, s + run, n - run);
    buf_putc(out, '"');
}

/* ---- reading ---- */

static const char *skip_ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

static int fail(JsonIter *it, const char *at, const char *msg) {
    it->error = msg;
    it->pos = (size_t)(at - it->base);
    return -1;
}

/* End of the string starting at p (p points at '"'); NULL if unterminated. */
static const char *string_end(const char *p, const char *end) {
    p++;
    for (;;) {
        const char *q = memchr(p, '"', (size_t)(end - p));
        if (!q) return NULL;
        /* count backslashes before the quote */
        const char *b = q;
        while (b > p && b[-1] == '\\')
            b--;
        if (((q - b) & 1) == 0) return q + 1;
        p = q + 1;
    }
}

/* End of the value starting at p, or NULL with it->error set. Nested
 * containers are matched with a depth counter (strings skipped). */
static const char *value_end(JsonIter *it, const char *p, const char *end) {
    if (p >= end) return fail(it, p, "value expected"), NULL;
    if (*p == '"') {
        const char *q = string_end(p, end);
        if (!q) fail(it, p, "unterminated string");
        return q;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        const char *q = p;
        while (q < end) {
            char c = *q;
            if (c == '"') {
                const char *r = string_end(q, end);
                if (!r) return fail(it, q, "unterminated string"), NULL;
                q = r;
                continue;
            }
            if (c == '{' || c == '[')
                depth++;
            else if (c == '}' || c == ']') {
                if (--depth == 0) return q + 1;
            }
            q++;
        }
        return fail(it, p, "unterminated object or array"), NULL;
    }
    const char *q = p;
    while (q < end && (unsigned char)*q > ' ' && *q != ',' && *q != '}' && *q != ']')
        q++;
    if (q == p) return fail(it, p, "value expected"), NULL;
    return q;
}

int json_iter_init(JsonIter *it, const char *text, size_t n, char kind) {
    memset(it, 0, sizeof *it);
    it->base = text;
    it->end = text + n;
    it->kind = kind;
    const char *p = text;
    if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) p += 3; /* a byte order mark (RFC 8259 8.1) */
    p = skip_ws(p, it->end);
    if (p >= it->end || *p != kind)
        return fail(it, p, kind == '{' ? "JSON object expected" : "JSON array expected");
    it->p = p + 1;
    return 0;
}

int json_iter_next(JsonIter *it, const char **key, size_t *klen, const char **val, size_t *vlen) {
    if (it->error) return -1;
    char close = it->kind == '{' ? '}' : ']';
    const char *p = skip_ws(it->p, it->end);
    if (p < it->end && *p == close && it->count == 0) goto closing;
    if (it->count > 0) {
        if (p < it->end && *p == close) goto closing;
        if (p >= it->end || *p != ',') return fail(it, p, "',' or closing bracket expected");
        p = skip_ws(p + 1, it->end);
    }
    if (it->kind == '{') {
        if (p >= it->end || *p != '"') return fail(it, p, "object key expected");
        const char *q = string_end(p, it->end);
        if (!q) return fail(it, p, "unterminated key");
        *key = p + 1;
        *klen = (size_t)(q - p - 2);
        p = skip_ws(q, it->end);
        if (p >= it->end || *p != ':') return fail(it, p, "':' expected");
        p = skip_ws(p + 1, it->end);
    } else {
        *key = NULL;
        *klen = 0;
    }
    const char *q = value_end(it, p, it->end);
    if (!q) return -1;
    *val = p;
    *vlen = (size_t)(q - p);
    it->p = q;
    it->count++;
    return 1;
closing:
    p = skip_ws(p + 1, it->end);
    if (p != it->end) return fail(it, p, "trailing characters after JSON value");
    it->p = p;
    return 0;
}

static int hex4(const char *p, uint32_t *out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

int json_decode_string(Buf *out, const char *raw, size_t n) {
    if (n < 2 || raw[0] != '"' || raw[n - 1] != '"') return -1;
    const char *p = raw + 1, *end = raw + n - 1;
    buf_reserve(out, n);
    while (p < end) {
        const char *bs = memchr(p, '\\', (size_t)(end - p));
        if (!bs) {
            buf_append(out, p, (size_t)(end - p));
            break;
        }
        buf_append(out, p, (size_t)(bs - p));
        if (bs + 1 >= end) return -1;
        char c = bs[1];
        p = bs + 2;
        switch (c) {
        case '"':
            buf_putc(out, '"');
            break;
        case '\\':
            buf_putc(out, '\\');
            break;
        case '/':
            buf_putc(out, '/');
            break;
        case 'n':
            buf_putc(out, '\n');
            break;
        case 't':
            buf_putc(out, '\t');
            break;
        case 'r':
            buf_putc(out, '\r');
            break;
        case 'b':
            buf_putc(out, '\b');
            break;
        case 'f':
            buf_putc(out, '\f');
            break;
        case 'u': {
            uint32_t cp;
            if (end - p < 4 || hex4(p, &cp)) return -1;
            p += 4;
            if (cp >= 0xD800 && cp < 0xDC00) {
                uint32_t lo;
                if (end - p >= 6 && p[0] == '\\' && p[1] == 'u' && hex4(p + 2, &lo) == 0 &&
                    lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                } else
                    cp = 0xFFFD;
            } else if (cp >= 0xDC00 && cp < 0xE000)
                cp = 0xFFFD;
            utf8_append_cp(out, cp);
            break;
        }
        default:
            return -1;
        }
    }
    return 0;
}

int json_to_i64(const char *raw, size_t n, int64_t *out) {
    int quoted = n >= 2 && raw[0] == '"' && raw[n - 1] == '"';
    if (quoted) {
        raw++;
        n -= 2;
    }
    if (n == 0) return -1;
    size_t i = 0;
    int neg = 0;
    if (raw[0] == '-') {
        neg = 1;
        i = 1;
        if (n == 1) return -1;
    }
    if (!quoted && n - i > 1 && raw[i] == '0') return -1; /* JSON has no leading zeros */
    int64_t v = 0;
    for (; i < n; i++) {
        if (raw[i] < '0' || raw[i] > '9') return -1;
        if (v > (INT64_MAX - 9) / 10) return -1;
        v = v * 10 + (raw[i] - '0');
    }
    *out = neg ? -v : v;
    return 0;
}

int json_key_is(const char *key, size_t klen, const char *name) {
    if (!memchr(key, '\\', klen)) return strlen(name) == klen && memcmp(key, name, klen) == 0;
    Buf d = {0}; /* escapes: compare the decoded key ("hidden\u005fsize") */
    int same = json_decode_string(&d, key - 1, klen + 2) == 0 && d.len == strlen(name) &&
               memcmp(d.data, name, d.len) == 0;
    buf_free(&d);
    return same;
}

int json_number(const char *raw, size_t n, double *out) {
    size_t i = 0;
    if (i < n && raw[i] == '-') i++;
    if (i >= n || raw[i] < '0' || raw[i] > '9') return -1; /* NaN, Infinity, +1, .5 */
    if (raw[i] == '0')
        i++; /* no leading zeros, no hex */
    else
        while (i < n && raw[i] >= '0' && raw[i] <= '9')
            i++;
    if (i < n && raw[i] == '.') {
        size_t d = ++i;
        while (i < n && raw[i] >= '0' && raw[i] <= '9')
            i++;
        if (i == d) return -1; /* 1. */
    }
    if (i < n && (raw[i] == 'e' || raw[i] == 'E')) {
        i++;
        if (i < n && (raw[i] == '+' || raw[i] == '-')) i++;
        size_t d = i;
        while (i < n && raw[i] >= '0' && raw[i] <= '9')
            i++;
        if (i == d) return -1;
    }
    if (i != n || n > 63) return -1;
    char buf[64];
    memcpy(buf, raw, n);
    buf[n] = '\0';
    *out = strtod(buf, NULL);
    return isfinite(*out) ? 0 : -1;
}

size_t json_line(const char *text, size_t pos) {
    size_t line = 1;
    for (size_t i = 0; i < pos; i++)
        line += text[i] == '\n';
    return line;
}
