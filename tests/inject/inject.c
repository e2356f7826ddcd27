/* inject.c - LD_PRELOAD fault injector for the I/O error tests.
 *
 * Makes fwrite, fflush or fclose fail with ENOSPC ("No space left on
 * device") on every stream whose file name contains "FAILME", as a full
 * disk would. WB_INJECT names the call to break (fwrite|fflush|fclose).
 * With WB_INJECT=fwrite and WB_INJECT_AT=N, the first N fwrite calls on
 * such streams succeed and the later ones fail (a disk that fills up in
 * the middle of a run).
 * WB_INJECT=renameat2 makes renameat2 fail with EINVAL, as on a file
 * system without RENAME_NOREPLACE, so that the fallback (link + unlink)
 * runs.
 * WB_INJECT=pwrite breaks pwrite/pwrite64/write on such file descriptors
 * (libraries that write by descriptor, as HDF5 does) once WB_INJECT_AT
 * (default 1) calls have been made on them: the call that many succeeds,
 * the later ones fail.
 * Programs must then exit non-zero and leave no output file behind.
 * WB_INJECT=sigint instead interrupts the program: the WB_INJECT_AT-th
 * (default first) fwrite on a marked stream is done and then SIGINT is
 * raised, as a Ctrl-C in the middle of writing would.
 * WB_INJECT=H5Lexists or WB_INJECT=H5Dread makes the HDF5 library crash
 * as it can on a damaged file: the WB_INJECT_AT-th (default first) call of
 * that function reads an unmapped address (SIGSEGV) instead of running.
 *
 *   WB_INJECT=fwrite LD_PRELOAD=build/tests/inject.so bin/wiki_dump -o FAILME.jsonl dump.xml
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fd_marked(int fd) {
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = '\0';
    return strstr(path, "FAILME") != NULL;
}

/* WB_INJECT=pwrite and fd is marked and its quota of good calls is used. */
static int fd_fails(int fd) {
    static long calls;
    const char *want = getenv("WB_INJECT");
    if (!want || strcmp(want, "pwrite") != 0 || !fd_marked(fd)) return 0;
    const char *at = getenv("WB_INJECT_AT");
    return ++calls > (at ? atol(at) : 1);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (!real) real = (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
    if (fd_fails(fd)) {
        errno = ENOSPC;
        return -1;
    }
    return real(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) {
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (!real) real = (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
    if (fd_fails(fd)) {
        errno = ENOSPC;
        return -1;
    }
    return real(fd, buf, n, off);
}

ssize_t write(int fd, const void *buf, size_t n) {
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (fd > 2 && fd_fails(fd)) {
        errno = ENOSPC;
        return -1;
    }
    return real(fd, buf, n);
}

static int marked(FILE *fp, const char *call) {
    const char *want = getenv("WB_INJECT");
    if (!want || strcmp(want, call) != 0 || !fp) return 0;
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fileno(fp));
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = '\0';
    return strstr(path, "FAILME") != NULL;
}

size_t fwrite(const void *p, size_t size, size_t n, FILE *fp) {
    static size_t (*real)(const void *, size_t, size_t, FILE *);
    if (!real) real = (size_t(*)(const void *, size_t, size_t, FILE *))dlsym(RTLD_NEXT, "fwrite");
    if (marked(fp, "fwrite")) {
        static long calls;
        const char *at = getenv("WB_INJECT_AT");
        if (at && ++calls <= atol(at)) return real(p, size, n, fp);
        errno = ENOSPC;
        return 0;
    }
    if (marked(fp, "sigint")) {
        static long calls;
        const char *at = getenv("WB_INJECT_AT");
        if (++calls == (at ? atol(at) : 1)) {
            size_t done = real(p, size, n, fp);
            raise(SIGINT);
            return done;
        }
    }
    return real(p, size, n, fp);
}

int fflush(FILE *fp) {
    static int (*real)(FILE *);
    if (!real) real = (int (*)(FILE *))dlsym(RTLD_NEXT, "fflush");
    if (marked(fp, "fflush")) {
        errno = ENOSPC;
        return EOF;
    }
    return real(fp);
}

int fclose(FILE *fp) {
    static int (*real)(FILE *);
    if (!real) real = (int (*)(FILE *))dlsym(RTLD_NEXT, "fclose");
    if (marked(fp, "fclose")) {
        real(fp);
        errno = ENOSPC;
        return EOF;
    }
    return real(fp);
}

/* renameat2, or with WB_INJECT=renameat2 EINVAL (a file system without
 * the flags). */
int renameat2(int olddir, const char *old, int newdir, const char *new, unsigned flags) {
    static int (*real)(int, const char *, int, const char *, unsigned);
    if (!real)
        real =
            (int (*)(int, const char *, int, const char *, unsigned))dlsym(RTLD_NEXT, "renameat2");
    const char *want = getenv("WB_INJECT");
    if (want && strcmp(want, "renameat2") == 0) {
        errno = EINVAL;
        return -1;
    }
    return real(olddir, old, newdir, new, flags);
}

/* ---- HDF5 crashes (hid_t is int64_t, herr_t and htri_t int in HDF5 1.10) ---- */

static void crash_if(const char *fn) {
    static long calls;
    const char *want = getenv("WB_INJECT");
    if (!want || strcmp(want, fn) != 0) return;
    const char *at = getenv("WB_INJECT_AT");
    if (++calls == (at ? atol(at) : 1)) {
        volatile uintptr_t wild = 16; /* unmapped */
        *(volatile int *)wild = 1;
    }
}

/* HDF5's H5Lexists, or with WB_INJECT=H5Lexists a fault at its WB_INJECT_AT-th call. */
int H5Lexists(int64_t loc, const char *name, int64_t lapl) {
    static int (*real)(int64_t, const char *, int64_t);
    if (!real) real = (int (*)(int64_t, const char *, int64_t))dlsym(RTLD_NEXT, "H5Lexists");
    crash_if("H5Lexists");
    return real(loc, name, lapl);
}

/* HDF5's H5Dread, or with WB_INJECT=H5Dread a fault at its WB_INJECT_AT-th call. */
int H5Dread(int64_t dset, int64_t mtype, int64_t mspace, int64_t fspace, int64_t plist, void *buf) {
    static int (*real)(int64_t, int64_t, int64_t, int64_t, int64_t, void *);
    if (!real)
        real = (int (*)(int64_t, int64_t, int64_t, int64_t, int64_t, void *))dlsym(RTLD_NEXT,
                                                                                   "H5Dread");
    crash_if("H5Dread");
    return real(dset, mtype, mspace, fspace, plist, buf);
}
