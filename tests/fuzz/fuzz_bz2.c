/* fuzz_bz2.c - fuzz target of the bzip2 readers: the fast decoder of one
 * stream (prep/bzdec.h bzdec_stream) and the parallel decoder of a whole
 * file (prep/bz2par.h).
 *
 * The input is a .bz2 file. bzdec_stream decodes its first stream; what it
 * accepts must be exactly what libbz2 makes of the same bytes (bzdec.h:
 * output is accepted only when every CRC matches, so both give the same
 * bytes), and it may not claim more input than there is. Then bz2par, with
 * two decode threads, reads the whole input from a scratch file: pieces
 * are never empty, and its end is either clean (0) or an error naming the
 * input ("name: byte N: ...").
 */
#include <bzlib.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "prep/bz2par.h"
#include "prep/bzdec.h"
#include "tests/fuzz/fuzz.h"

/* libbz2's output for the first stream of in[0..n) into *out (cap grows);
 * returns 0 when the stream ended cleanly, -1 otherwise. */
static int libbz2_stream(const uint8_t *in, size_t n, unsigned char **out, size_t *len,
                         size_t *cap) {
    bz_stream s;
    memset(&s, 0, sizeof s);
    if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK) return -1;
    s.next_in = (char *)in;
    s.avail_in = n > UINT32_MAX ? UINT32_MAX : (unsigned)n;
    *len = 0;
    int rc;
    do {
        if (*cap - *len < 65536) {
            *cap = *cap ? *cap * 2 : 1 << 20;
            *out = realloc(*out, *cap);
        }
        s.next_out = (char *)*out + *len;
        s.avail_out = (unsigned)(*cap - *len);
        rc = BZ2_bzDecompress(&s);
        *len = (size_t)((unsigned char *)s.next_out - *out);
        if (*len > (64u << 20)) rc = BZ_MEM_ERROR; /* no finding: just too big to compare */
    } while (rc == BZ_OK && (s.avail_in || !s.avail_out));
    BZ2_bzDecompressEnd(&s);
    return rc == BZ_STREAM_END ? 0 : -1;
}

/* One input: data as a .bz2 file. Returns 0; a broken promise aborts. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static BzDec dec;
    static FuzzTmp tmp;
    static unsigned char *out, *ref;
    static size_t outcap, refcap;
    static int init;
    if (!init) fuzz_quiet("fuzz_bz2"), init = 1;

    size_t outlen = 0, used = 0;
    if (bzdec_stream(&dec, data, size, &out, &outlen, &outcap, &used) == 0) {
        if (used > size) fuzz_fail("bzdec_stream used %zu of %zu bytes", used, size);
        size_t reflen = 0;
        if (libbz2_stream(data, used, &ref, &reflen, &refcap) == 0 &&
            (reflen != outlen || (outlen && memcmp(ref, out, outlen))))
            fuzz_fail("bzdec_stream gave %zu bytes, libbz2 %zu other ones", outlen, reflen);
    }

    fuzz_tmp_write(&tmp, ".bz2", data, size);
    int fd = open(tmp.path, O_RDONLY);
    if (fd < 0) return 0;
    Bz2ParOpts o = {.nthreads = 2, .name = "fuzz.bz2"};
    Err err;
    Bz2Par *b = bz2par_open(fd, &o, &err);
    if (b) {
        const char *p;
        size_t n;
        int r;
        while ((r = bz2par_next(b, &p, &n, &err)) > 0)
            if (n == 0) fuzz_fail("bz2par_next gave an empty piece");
        if (r < 0 && strncmp(err.msg, "fuzz.bz2: ", 10))
            fuzz_fail("bz2par error without the input's name: %s", err.msg);
        bz2par_close(b);
    }
    close(fd);
    return 0;
}
