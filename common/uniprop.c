/* uniprop.c - Unicode character properties from ICU (see uniprop.h).
 *
 * The one file that includes ICU. The BMP tables (property bits, general
 * category; 64 KiB each) are built once with pthread_once on the first
 * query (a few ms); astral code points are
 * answered by ICU on every call, which is rare in Wikipedia text.
 */
#include "common/uniprop.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <unicode/uchar.h>
#include <unicode/ucasemap.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/uversion.h>

#include "common/utf8.h"

/* BMP answers: the property bits and the general category. */
static unsigned char bmp[0x10000], bmp_gc[0x10000];
static pthread_once_t bmp_once = PTHREAD_ONCE_INIT;

static unsigned icu_props(UChar32 c) {
    unsigned f = 0;
    int8_t cat = u_charType(c);
    int nt = u_getIntPropertyValue(c, UCHAR_NUMERIC_TYPE);
    UCharDirection dir = u_charDirection(c);

    if (U_GET_GC_MASK(c) & U_GC_L_MASK) f |= UNI_ALPHA;
    if (nt == U_NT_DECIMAL) f |= UNI_DECIMAL | UNI_DIGIT | UNI_NUMERIC;
    if (nt == U_NT_DIGIT) f |= UNI_DIGIT | UNI_NUMERIC;
    if (nt == U_NT_NUMERIC) f |= UNI_NUMERIC;
    if (u_hasBinaryProperty(c, UCHAR_UPPERCASE)) f |= UNI_UPPER;
    if (u_hasBinaryProperty(c, UCHAR_LOWERCASE)) f |= UNI_LOWER;
    if (dir == U_WHITE_SPACE_NEUTRAL || dir == U_BLOCK_SEPARATOR || dir == U_SEGMENT_SEPARATOR ||
        cat == U_SPACE_SEPARATOR)
        f |= UNI_SPACE;
    if ((f & (UNI_ALPHA | UNI_NUMERIC)) || c == '_') f |= UNI_WORD;
    return f;
}

static void bmp_build(void) {
    for (UChar32 c = 0; c < 0x10000; c++) {
        bmp[c] = (unsigned char)icu_props(c);
        bmp_gc[c] = (unsigned char)u_charType(c);
    }
}

unsigned uni_props(uint32_t cp) {
    if (cp < 0x10000) {
        pthread_once(&bmp_once, bmp_build);
        return bmp[cp];
    }
    if (cp > 0x10FFFF) return 0;
    return icu_props((UChar32)cp);
}

uint32_t uni_tolower(uint32_t cp) { return (uint32_t)u_tolower((UChar32)cp); }

uint32_t uni_toupper(uint32_t cp) { return (uint32_t)u_toupper((UChar32)cp); }

void uni_append_upper(Buf *out, uint32_t cp) {
    UChar src[2], dst[8];
    int32_t n = 0, m;
    UErrorCode st = U_ZERO_ERROR;
    UBool err = 0;

    U16_APPEND(src, n, 2, (UChar32)cp, err);
    if (err) return;
    m = u_strToUpper(dst, 8, src, n, "", &st);
    if (U_FAILURE(st) || m > 8) {
        utf8_append_cp(out, uni_toupper(cp));
        return;
    }
    for (int32_t i = 0; i < m;) {
        UChar32 c;
        U16_NEXT(dst, i, m, c);
        utf8_append_cp(out, (uint32_t)c);
    }
}

const char *uni_icu_version(void) {
    static char s[U_MAX_VERSION_STRING_LENGTH];
    UVersionInfo v;
    u_getVersion(v);
    u_versionToString(v, s);
    return s;
}

/* ---- general category, lower-casing, NFD ---- */

_Static_assert(UNI_GC_MN == (int)U_NON_SPACING_MARK && UNI_GC_CC == (int)U_CONTROL_CHAR &&
                   UNI_GC_PO == (int)U_OTHER_PUNCTUATION && UNI_GC_PF == (int)U_FINAL_PUNCTUATION &&
                   UNI_GC_CS == (int)U_SURROGATE && UNI_GC_ZS == (int)U_SPACE_SEPARATOR,
               "UNI_GC_* must follow ICU's UCharCategory");

static const UCaseMap *casemap;
static const UNormalizer2 *nfd;
static pthread_once_t icu_once = PTHREAD_ONCE_INIT;

static void icu_open(void) {
    UErrorCode st = U_ZERO_ERROR;
    casemap = ucasemap_open("", 0, &st);
    if (U_FAILURE(st)) casemap = NULL;
    st = U_ZERO_ERROR;
    nfd = unorm2_getNFDInstance(&st);
    if (U_FAILURE(st)) nfd = NULL;
}

unsigned uni_gc(uint32_t cp) {
    if (cp < 0x10000) {
        pthread_once(&bmp_once, bmp_build);
        return bmp_gc[cp];
    }
    if (cp > 0x10FFFF) return UNI_GC_CN;
    return (unsigned)u_charType((UChar32)cp);
}

int uni_append_lower(Buf *out, const char *s, size_t n) {
    pthread_once(&icu_once, icu_open);
    if (!casemap || n > INT32_MAX / 4) return -1;
    size_t cap = n * 3 / 2 + 16;
    for (;;) {
        UErrorCode st = U_ZERO_ERROR;
        buf_reserve(out, cap);
        int32_t m =
            ucasemap_utf8ToLower(casemap, out->data + out->len, (int32_t)cap, s, (int32_t)n, &st);
        if (st == U_BUFFER_OVERFLOW_ERROR && (size_t)m > cap) {
            cap = (size_t)m;
            continue;
        }
        if (U_FAILURE(st)) return -1;
        out->len += (size_t)m;
        out->data[out->len] = '\0';
        return 0;
    }
}

/* UTF-16 scratch: on the stack for short strings, else on the heap. */
enum { NFD_STACK = 512 };

/* unorm2_normalize src[0..len) into dst[0..dcap) (dst may be NULL when
 * dcap is 0); when that is too small, into a new block that replaces
 * *heap (freed after src was read, so src may live in it). Sets *res to
 * the result and returns its length, or -1. */
static int32_t normalize_grow(const UNormalizer2 *n2, const UChar *src, int32_t len, UChar *dst,
                              int32_t dcap, UChar **heap, const UChar **res) {
    UErrorCode st = U_ZERO_ERROR;
    int32_t m = unorm2_normalize(n2, src, len, dst, dcap, &st);
    if (st == U_BUFFER_OVERFLOW_ERROR) {
        UChar *big = xmalloc((size_t)m * sizeof(UChar));
        st = U_ZERO_ERROR;
        m = unorm2_normalize(n2, src, len, big, m, &st);
        free(*heap);
        *heap = big;
        dst = big;
    }
    *res = dst;
    return U_FAILURE(st) ? -1 : m;
}

int uni_append_nfd(Buf *out, const char *s, size_t n) {
    pthread_once(&icu_once, icu_open);
    if (!nfd || n > INT32_MAX / 8) return -1;
    UChar sbuf[2 * NFD_STACK], *src = sbuf, *dst = sbuf + NFD_STACK, *heap = NULL;
    /* UTF-16 never has more units than UTF-8 has bytes; NFD grows a code
     * point to at most 18 (Unicode stability policy caps it), so size by
     * ICU's preflight when the stack is too small. */
    int32_t cap = NFD_STACK, len = 0, m;
    int rc = -1;
    UErrorCode st = U_ZERO_ERROR;
    if (n > NFD_STACK) {
        cap = (int32_t)n;
        heap = xmalloc(2 * (size_t)cap * sizeof(UChar));
        src = heap, dst = heap + cap;
    }
    u_strFromUTF8(src, cap, &len, s, (int32_t)n, &st);
    if (U_FAILURE(st)) goto done;
    const UChar *res;
    m = normalize_grow(nfd, src, len, dst, cap, &heap, &res);
    if (m < 0) goto done;
    int32_t need = 0;
    st = U_ZERO_ERROR;
    u_strToUTF8(NULL, 0, &need, res, m, &st);
    st = U_ZERO_ERROR;
    buf_reserve(out, (size_t)need);
    u_strToUTF8(out->data + out->len, need + 1, NULL, res, m, &st);
    if (U_FAILURE(st)) goto done;
    out->len += (size_t)need;
    out->data[out->len] = '\0';
    rc = 0;
done:
    free(heap);
    return rc;
}

const char *uni_unicode_version(void) {
    static char s[U_MAX_VERSION_STRING_LENGTH];
    UVersionInfo v;
    u_getUnicodeVersion(v);
    u_versionToString(v, s);
    return s;
}

/* ---- NFKC and NFKD of code-point sequences ---- */

#include <unicode/ucpmap.h> /* here, so that this section stands alone */

static const UNormalizer2 *nfkc_n2, *nfkd_n2;
static pthread_once_t nfk_once = PTHREAD_ONCE_INIT;

static const UCPMap *dt_map;

static void nfk_open(void) {
    UErrorCode st = U_ZERO_ERROR;
    dt_map = u_getIntPropertyMap(UCHAR_DECOMPOSITION_TYPE, &st);
    if (U_FAILURE(st)) dt_map = NULL;
    st = U_ZERO_ERROR;
    nfkc_n2 = unorm2_getNFKCInstance(&st);
    if (U_FAILURE(st)) nfkc_n2 = NULL;
    st = U_ZERO_ERROR;
    nfkd_n2 = unorm2_getNFKDInstance(&st);
    if (U_FAILURE(st)) nfkd_n2 = NULL;
}

/* UTF-16 scratch on the stack for short sequences. */
enum { NFK_STACK = 128 };

/* Normalize in[0..n) with n2 into out[0..cap); see uni_nfkc. */
static long nfk_run(const UNormalizer2 *n2, const uint32_t *in, size_t n, uint32_t *out,
                    size_t cap) {
    if (!n2 || n > INT32_MAX / 8) return -1;
    UChar sbuf[2 * NFK_STACK], *src = sbuf, *dst = sbuf + NFK_STACK, *heap = NULL;
    int32_t scap = NFK_STACK, len = 0, m;
    long rc = -1;
    if (2 * n > NFK_STACK) {
        scap = (int32_t)(2 * n);
        heap = xmalloc((size_t)scap * sizeof(UChar));
        src = heap;
    }
    for (size_t i = 0; i < n; i++) {
        if (in[i] > 0x10FFFF || U_IS_SURROGATE(in[i])) goto done;
        U16_APPEND_UNSAFE(src, len, (UChar32)in[i]);
    }
    int32_t dcap = src == sbuf ? NFK_STACK : 0;
    const UChar *res;
    m = normalize_grow(n2, src, len, dcap ? dst : NULL, dcap, &heap, &res);
    if (m < 0) goto done;
    long k = 0;
    for (int32_t i = 0; i < m; k++) {
        UChar32 c;
        U16_NEXT(res, i, m, c);
        if ((size_t)k < cap) out[k] = (uint32_t)c;
    }
    rc = k;
done:
    free(heap);
    return rc;
}

long uni_nfkc(const uint32_t *in, size_t n, uint32_t *out, size_t cap) {
    pthread_once(&nfk_once, nfk_open);
    return nfk_run(nfkc_n2, in, n, out, cap);
}

long uni_nfkd(const uint32_t *in, size_t n, uint32_t *out, size_t cap) {
    pthread_once(&nfk_once, nfk_open);
    return nfk_run(nfkd_n2, in, n, out, cap);
}

int uni_nfkd_cp(uint32_t cp, uint32_t *out, size_t cap) {
    pthread_once(&nfk_once, nfk_open);
    if (!nfkc_n2 || cp > 0x10FFFF) return -1;
    /* getDecomposition is a table lookup that answers "none" without
     * building strings; only code points with a mapping pay for a real
     * NFKD run (which also applies canonical ordering). */
    UChar tmp[32];
    UErrorCode st = U_ZERO_ERROR;
    if (unorm2_getDecomposition(nfkc_n2, (UChar32)cp, tmp, 32, &st) < 0) return 0;
    long k = nfk_run(nfkd_n2, &cp, 1, out, cap);
    return k < 0 || (size_t)k > cap ? -1 : (int)k;
}

uint32_t uni_next_decomposable(uint32_t cp) {
    pthread_once(&nfk_once, nfk_open);
    while (cp <= 0x10FFFF) {
        uint32_t v = U_DT_NONE;
        UChar32 end =
            dt_map ? ucpmap_getRange(dt_map, (UChar32)cp, UCPMAP_RANGE_NORMAL, 0, NULL, NULL, &v)
                   : (UChar32)cp;
        if (!dt_map || v != U_DT_NONE)
            return cp; /* without the map: every code point is a candidate */
        if (end < (UChar32)cp) break;
        cp = (uint32_t)end + 1;
    }
    return 0x110000;
}

/* ---- scripts and ages ---- */

#include <unicode/uscript.h>

_Static_assert((int)USCRIPT_COMMON == UNI_SC_COMMON && (int)USCRIPT_INHERITED == UNI_SC_INHERITED &&
                   (int)USCRIPT_ARABIC == UNI_SC_ARABIC &&
                   (int)USCRIPT_ARMENIAN == UNI_SC_ARMENIAN &&
                   (int)USCRIPT_DEVANAGARI == UNI_SC_DEVANAGARI && (int)USCRIPT_HAN == UNI_SC_HAN &&
                   (int)USCRIPT_HIRAGANA == UNI_SC_HIRAGANA &&
                   (int)USCRIPT_KATAKANA == UNI_SC_KATAKANA && (int)USCRIPT_LATIN == UNI_SC_LATIN &&
                   (int)USCRIPT_UNKNOWN == UNI_SC_UNKNOWN,
               "UNI_SC_* must equal ICU's UScriptCode values");

/* BMP scripts (all codes fit a byte: USCRIPT_CODE_LIMIT is about 200). */
static unsigned char bmp_script[0x10000];
static pthread_once_t script_once = PTHREAD_ONCE_INIT;

static int icu_script(UChar32 c) {
    UErrorCode st = U_ZERO_ERROR;
    UScriptCode s = uscript_getScript(c, &st);
    return U_FAILURE(st) ? UNI_SC_UNKNOWN : (int)s;
}

static void script_build(void) {
    for (UChar32 c = 0; c < 0x10000; c++)
        bmp_script[c] = (unsigned char)icu_script(c);
}

int uni_script(uint32_t cp) {
    if (cp < 0x10000) {
        pthread_once(&script_once, script_build);
        return bmp_script[cp];
    }
    if (cp > 0x10FFFF) return UNI_SC_UNKNOWN;
    return icu_script((UChar32)cp);
}

unsigned uni_age(uint32_t cp) {
    UVersionInfo v;
    if (cp > 0x10FFFF) return 0;
    u_charAge((UChar32)cp, v);
    return (unsigned)v[0] << 8 | v[1];
}
