/* fuzz.h - helpers shared by the fuzz targets (tests/fuzz/fuzz_*.c).
 *
 * Each target defines LLVMFuzzerTestOneInput(data, size), the entry point
 * of libFuzzer and of tests/fuzz/driver.c. A target must accept any bytes:
 * it returns 0 whether the library accepted the input or refused it with an
 * error; only a crash, a sanitizer report, a hang or a broken documented
 * guarantee (fuzz_fail) is a finding.
 *
 *   fuzz_quiet("fuzz_wikitext");          // once: no warnings on stderr
 *   if (!utf8_valid(s, n)) fuzz_fail("invalid UTF-8 out");
 *   fuzz_tmp_write(&tmp, data, size);     // for readers that take a path
 */
#ifndef WB_FUZZ_H
#define WB_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"

/* The entry point every target defines: run the library on data[0..size)
 * (any bytes) and return 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Report a broken guarantee and abort, so that the engine keeps the input
 * as a crash. */
#define fuzz_fail(...)                                                                             \
    do {                                                                                           \
        fprintf(stderr, "fuzz: %s:%d: ", __FILE__, __LINE__);                                      \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        abort();                                                                                   \
    } while (0)

/* Name the program and silence the library's warnings (display level 0). */
static inline void fuzz_quiet(const char *name) {
    progname = name;
    display_level = 0;
}

/* 1 when s[0..n) is well-formed UTF-8 (no overlong forms, surrogates or
 * code points above U+10FFFF). */
static inline int utf8_valid(const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s, *e = p + n;
    while (p < e) {
        unsigned c = *p;
        size_t k;
        unsigned lo = 0x80, hi = 0xBF;
        if (c < 0x80) {
            p++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            k = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            k = 2;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;
        } else {
            return 0;
        }
        if ((size_t)(e - p) <= k) return 0;
        if (p[1] < lo || p[1] > hi) return 0;
        for (size_t i = 2; i <= k; i++)
            if ((p[i] & 0xC0) != 0x80) return 0;
        p += k + 1;
    }
    return 1;
}

/* A scratch file that a target rewrites for every input, for library
 * readers that take a path (HDF5, checkpoints, configs). Removed at exit. */
typedef struct FuzzTmp {
    char path[256];
    int ready;
} FuzzTmp;

static FuzzTmp *fuzz_tmp_list_[4];

static inline void fuzz_tmp_cleanup_(void) {
    for (size_t i = 0; i < sizeof fuzz_tmp_list_ / sizeof *fuzz_tmp_list_; i++)
        if (fuzz_tmp_list_[i]) unlink(fuzz_tmp_list_[i]->path);
}

/* Replace the contents of t's file with data[0..n) (the file is created on
 * first use, under $TMPDIR or /tmp, with `suffix` ending its name). Aborts
 * when the file cannot be written: that is no finding about the input. */
static inline void fuzz_tmp_write(FuzzTmp *t, const char *suffix, const uint8_t *data, size_t n) {
    if (!t->ready) {
        const char *dir = getenv("TMPDIR");
        snprintf(t->path, sizeof t->path, "%s/wbfuzz-%ld-XXXXXX%s", dir && *dir ? dir : "/tmp",
                 (long)getpid(), suffix);
        int fd = mkstemps(t->path, (int)strlen(suffix));
        if (fd < 0) {
            perror(t->path);
            exit(3);
        }
        close(fd);
        for (size_t i = 0; i < sizeof fuzz_tmp_list_ / sizeof *fuzz_tmp_list_; i++)
            if (!fuzz_tmp_list_[i]) {
                if (i == 0) atexit(fuzz_tmp_cleanup_);
                fuzz_tmp_list_[i] = t;
                break;
            }
        t->ready = 1;
    }
    FILE *f = fopen(t->path, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f)) {
        perror(t->path);
        exit(3);
    }
}

#endif
