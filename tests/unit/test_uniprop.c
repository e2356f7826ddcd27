/* test_uniprop.c - the ICU-backed character properties match Python's str
 * predicates (the semantics filterdocs.py is defined by); expected values
 * were read from Python 3.11 (str.isalpha, isdecimal, isdigit, isnumeric,
 * isupper, islower, isspace, upper). */
#include "tests/test.h"
#include "common/uniprop.h"

static const struct {
    uint32_t cp;
    unsigned props; /* expected bits, UNI_WORD excluded */
    const char *upper;
} cases[] = {
    {0x41, UNI_ALPHA | UNI_UPPER, "A"},
    {0x61, UNI_ALPHA | UNI_LOWER, "A"},
    {0xC9, UNI_ALPHA | UNI_UPPER, "\xc3\x89"},
    {0x151, UNI_ALPHA | UNI_LOWER, "\xc5\x90"},
    {0xDF, UNI_ALPHA | UNI_LOWER, "SS"},
    {0x5F, 0, "_"},
    {0x35, UNI_DECIMAL | UNI_DIGIT | UNI_NUMERIC, "5"},
    {0xB2, UNI_DIGIT | UNI_NUMERIC, "\xc2\xb2"},
    {0xBD, UNI_NUMERIC, "\xc2\xbd"},
    {0x216B, UNI_NUMERIC | UNI_UPPER, "\xe2\x85\xab"},
    {0x663, UNI_DECIMAL | UNI_DIGIT | UNI_NUMERIC, "\xd9\xa3"},
    {0x20, UNI_SPACE, " "},
    {0x1C, UNI_SPACE, "\x1c"},
    {0x85, UNI_SPACE, "\xc2\x85"},
    {0xA0, UNI_SPACE, "\xc2\xa0"},
    {0x2028, UNI_SPACE, "\xe2\x80\xa8"},
    {0x3000, UNI_SPACE, "\xe3\x80\x80"},
    {0x1C5, UNI_ALPHA, "\xc7\x84"},
    {0xAA, UNI_ALPHA | UNI_LOWER, "\xc2\xaa"},
    {0x2D, 0, "-"},
    {0x4E2D, UNI_ALPHA, "\xe4\xb8\xad"},
    {0x1D400, UNI_ALPHA | UNI_UPPER, "\xf0\x9d\x90\x80"},
    {0x1F600, 0, "\xf0\x9f\x98\x80"},
};

int main(void) {
    char name[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t cp = cases[i].cp;
        unsigned want = cases[i].props;
        if ((want & (UNI_ALPHA | UNI_NUMERIC)) || cp == '_') want |= UNI_WORD;
        snprintf(name, sizeof name, "props of U+%04X", (unsigned)cp);
        test_cond(name, uni_props(cp) == want);
        if (uni_props(cp) != want) printf("  got %#x want %#x\n", uni_props(cp), want);
        Buf b = {0};
        uni_append_upper(&b, cp);
        snprintf(name, sizeof name, "upper of U+%04X", (unsigned)cp);
        test_mem_eq(name, b.data, b.len, cases[i].upper, strlen(cases[i].upper));
        buf_free(&b);
    }
    test_cond("out of range", uni_props(0x110000) == 0);
    test_cond("tolower", uni_tolower(0x150) == 0x151 && uni_tolower('x') == 'x');
    test_cond("toupper simple", uni_toupper(0xDF) == 0xDF && uni_toupper(0x151) == 0x150);
    test_cond("icu version", uni_icu_version()[0] >= '1');
    return test_report();
}
