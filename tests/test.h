/* test.h - minimal unit-test helpers (one header, no framework).
 *
 * Each tests/unit/test_<module>.c is its own program: it calls test_cond()
 * for every assertion and ends main() with `return test_report();`, which
 * prints "test_<module>: N passed, N failed" and returns non-zero on any
 * failure. tests/run.sh adds the counts of all suites together.
 */
#ifndef WB_TEST_H
#define WB_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_passed_, test_failed_;

#define test_cond(descr, cond)                                                                     \
    do {                                                                                           \
        if (cond) {                                                                                \
            test_passed_++;                                                                        \
        } else {                                                                                   \
            test_failed_++;                                                                        \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, descr);                                 \
        }                                                                                          \
    } while (0)

/* Compare two byte ranges; on mismatch print both (truncated). */
#define test_mem_eq(descr, a, alen, b, blen)                                                       \
    do {                                                                                           \
        size_t la_ = (alen), lb_ = (blen);                                                         \
        int ok_ = la_ == lb_ && memcmp((a), (b), la_) == 0;                                        \
        test_cond(descr, ok_);                                                                     \
        if (!ok_)                                                                                  \
            printf("  got  (%zu) [%.*s]\n  want (%zu) [%.*s]\n", la_,                              \
                   (int)(la_ > 400 ? 400 : la_), (const char *)(a), lb_,                           \
                   (int)(lb_ > 400 ? 400 : lb_), (const char *)(b));                               \
    } while (0)

#define test_str_eq(descr, a, b) test_mem_eq(descr, a, strlen(a), b, strlen(b))

static inline int test_report_(const char *name) {
    printf("%s: %d passed, %d failed\n", name, test_passed_, test_failed_);
    return test_failed_ ? 1 : 0;
}
#define test_report() test_report_(__FILE__)

/* A Python that runs the statement `check` (e.g. "import sentencepiece"):
 * $WIKIBERT_SPM_PYTHON, $WIKIBERT_PYTHON, python3, /usr/bin/python3 (Debian's
 * packages) or the benchmark venv ($BENCH_TMP, default /tmp/wikibert-bench,
 * venv3/bin/python). Returns buf holding its name, or NULL when none does;
 * the checks that need it then print that they did not run and count
 * nothing. */
static inline const char *test_find_python(const char *check, char *buf, size_t cap) {
    const char *bt = getenv("BENCH_TMP");
    char venv[512];
    snprintf(venv, sizeof venv, "%s/venv3/bin/python", bt ? bt : "/tmp/wikibert-bench");
    const char *cands[] = {getenv("WIKIBERT_SPM_PYTHON"), getenv("WIKIBERT_PYTHON"), "python3",
                           "/usr/bin/python3", venv};
    for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) {
        if (!cands[i] || !*cands[i]) continue;
        snprintf(buf, cap, "'%s' -c '%s' >/dev/null 2>&1", cands[i], check);
        if (system(buf) == 0) {
            snprintf(buf, cap, "%s", cands[i]);
            return buf;
        }
    }
    return NULL;
}

#endif
