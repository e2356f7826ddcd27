/* test_pattern.c - the PCRE2 wrapper: UTF-8 mode, errors with offsets,
 * invalid subjects, and threads sharing one compiled pattern. */
#include "tests/test.h"
#include "common/pattern.h"

#include <pthread.h>

static int find(const Pattern *p, const char *s, unsigned flags) {
    PatternData *d = pattern_data_create(p);
    Err e;
    int r = pattern_find(p, d, s, strlen(s), flags, &e);
    pattern_data_destroy(d);
    return r;
}

static void test_match(void) {
    Err e;
    Pattern *p = pattern_create("^(Forrás|Jegyzetek):", &e);
    test_cond("compiles", p != NULL);
    test_str_eq("source kept", pattern_source(p), "^(Forrás|Jegyzetek):");
    test_cond("match at start", find(p, "Forrás: KSH", 0) == 1);
    test_cond("anchored", find(p, "A Forrás: KSH", 0) == 0);
    test_cond("validated flag", find(p, "Jegyzetek: 1", PATTERN_VALID_UTF8) == 1);
    pattern_destroy(p);
    /* UTF mode: '.' is one code point, \w knows accented letters (UCP) */
    p = pattern_create("^\\w{5}$", &e);
    test_cond("\\w counts code points", find(p, "őszül", 0) == 1 && find(p, "ősz", 0) == 0);
    pattern_destroy(p);
    p = pattern_create("(?i)ÁRVÍZ", &e);
    test_cond("caseless non-ASCII", find(p, "az árvíztűrő", 0) == 1);
    pattern_destroy(p);
}

static void test_errors(void) {
    Err e = {{0}};
    test_cond("unbalanced paren fails", pattern_create("ab(c", &e) == NULL);
    test_cond("message names the offset", strstr(e.msg, "at offset 4") != NULL);
    test_cond("message quotes the pattern", strstr(e.msg, "'ab(c'") != NULL);
    test_cond("invalid UTF-8 in the pattern fails", pattern_create("a\xff", &e) == NULL);
    Pattern *p = pattern_create("b", &e);
    PatternData *d = pattern_data_create(p);
    const char bad[] = "a\xc3(b";
    e.msg[0] = 0;
    test_cond("invalid UTF-8 subject is an error",
              pattern_find(p, d, bad, sizeof bad - 1, 0, &e) == -1);
    test_cond("and says where",
              strstr(e.msg, "invalid UTF-8") != NULL && strstr(e.msg, "byte 2") != NULL);
    const char nul[] = "a\0b";
    test_cond("NUL is an ordinary character", pattern_find(p, d, nul, 3, 0, &e) == 1);
    test_cond("empty subject", pattern_find(p, d, "", 0, 0, &e) == 0);
    pattern_data_destroy(d);
    pattern_destroy(p);
}

static const Pattern *shared;
static void *thread_main(void *arg) {
    PatternData *d = pattern_data_create(shared);
    long hits = 0;
    Err e;
    char line[64];
    for (int i = 0; i < 20000; i++) {
        int n = snprintf(line, sizeof line, "sor %d vége", i);
        hits += pattern_find(shared, d, line, (size_t)n, PATTERN_VALID_UTF8, &e) == 1;
    }
    pattern_data_destroy(d);
    *(long *)arg = hits;
    return NULL;
}

static void test_threads(void) {
    Err e;
    Pattern *p = pattern_create("7\\d* vége$", &e);
    shared = p;
    pthread_t t[4];
    long hits[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, thread_main, &hits[i]);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    /* numbers < 20000 holding a 7 followed only by digits to the end */
    long want = 0;
    char line[64];
    for (int i = 0; i < 20000; i++) {
        snprintf(line, sizeof line, "%d", i);
        want += strchr(line, '7') != NULL;
    }
    test_cond("threads agree with a count by hand",
              hits[0] == want && hits[1] == want && hits[2] == want && hits[3] == want);
    pattern_destroy(p);
}

int main(void) {
    test_match();
    test_errors();
    test_threads();
    return test_report();
}
