/* uniprop.c - Unicode character properties from ICU (see uniprop.h).
 *
 * The one file that includes ICU. The BMP table is 64 KiB, built once with
 * pthread_once on the first query (about 2 ms); astral code points are
 * answered by ICU on every call, which is rare in Wikipedia text.
 */
#include "uniprop.h"

#include <pthread.h>
#include <stdio.h>

#include <unicode/uchar.h>
#include <unicode/ustring.h>
#include <unicode/uversion.h>

#include "utf8.h"

static unsigned char bmp[0x10000];
static pthread_once_t bmp_once = PTHREAD_ONCE_INIT;

static unsigned icu_props(UChar32 c)
{
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

static void bmp_build(void)
{
    for (UChar32 c = 0; c < 0x10000; c++) bmp[c] = (unsigned char)icu_props(c);
}

unsigned uni_props(uint32_t cp)
{
    if (cp < 0x10000) {
        pthread_once(&bmp_once, bmp_build);
        return bmp[cp];
    }
    if (cp > 0x10FFFF) return 0;
    return icu_props((UChar32)cp);
}

uint32_t uni_tolower(uint32_t cp) { return (uint32_t)u_tolower((UChar32)cp); }

uint32_t uni_toupper(uint32_t cp) { return (uint32_t)u_toupper((UChar32)cp); }

void uni_append_upper(Buf *out, uint32_t cp)
{
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

const char *uni_icu_version(void)
{
    static char s[U_MAX_VERSION_STRING_LENGTH];
    UVersionInfo v;
    u_getVersion(v);
    u_versionToString(v, s);
    return s;
}
