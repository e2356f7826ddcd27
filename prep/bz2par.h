/* bz2par.h - parallel, ordered bz2 decompression.
 *
 * Decodes a .bz2 file or pipe (single-stream or Wikimedia-style multistream)
 * with a pool of worker threads and hands the output back in the original
 * order, byte-identical for every thread count. See bz2par.c for the
 * algorithm (bit-level block scan, re-framing of each block as a standalone
 * stream, optional multistream index). Each piece is decoded by the fast
 * decoder in bzdec.c; what it declines (damaged or unusual data) is decoded
 * by libbz2, which also words the errors. WIKIBERT_BZ2=libbz2 in the
 * environment makes libbz2 decode everything (for comparison).
 *
 *   Bz2ParOpts o = {.nthreads = 4, .index_path = NULL, .name = path};
 *   Err err;
 *   Bz2Par *b = bz2par_open(fd, &o, &err);
 *   if (!b) die("%s", err.msg);
 *   const char *p; size_t n; int r;
 *   while ((r = bz2par_next(b, &p, &n, &err)) > 0) consume(p, n);
 *   bz2par_close(b);
 *   if (r < 0) die("%s", err.msg);
 */
#ifndef WB_BZ2PAR_H
#define WB_BZ2PAR_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

typedef struct Bz2Par Bz2Par;

typedef struct Bz2ParOpts {
    int nthreads;           /* decode worker threads, >= 1 (values < 1 mean 1) */
    const char *index_path; /* optional Wikimedia multistream index (.txt or
                               .txt.bz2, lines "offset:pageid:title"), or NULL */
    const char *name;       /* input name for error messages ("-" for stdin);
                               NULL means "-" */
    /* Testing hooks, leave zeroed: compressed-file bit offsets at which the
     * block scanner pretends to see a block magic (test_fake_block) or an
     * end-of-stream magic (test_fake_eos), to exercise the recovery from
     * false-positive magics inside compressed data. Sorted ascending. */
    const uint64_t *test_fake_block;
    size_t n_test_fake_block;
    const uint64_t *test_fake_eos;
    size_t n_test_fake_eos;
} Bz2ParOpts;

/* Start decoding the bz2 data readable from fd (a file, or a pipe/stdin: the
 * input is only ever read sequentially). Starts one reader/scanner thread and
 * opts->nthreads decode threads. The caller keeps ownership of fd and closes
 * it after bz2par_close(). With opts->index_path the index is opened and its
 * first offset read here (so a missing or malformed index fails early); the
 * rest of it is read lazily while decoding.
 * Returns the decoder (free with bz2par_close), or NULL with err filled. */
Bz2Par *bz2par_open(int fd, const Bz2ParOpts *opts, Err *err);

/* Next piece of decompressed output, in original order. Sets *data and *len to
 * memory owned by the decoder, valid until the next bz2par_next() or
 * bz2par_close(). Pieces are never empty.
 * Returns 1 with data, 0 at clean end of input (and again on later calls),
 * -1 on error with err filled (one line: "name: byte N: what", N being the
 * compressed byte offset of the bad block or of the point where the data
 * stops making sense). All output before the bad block has been returned
 * before -1 is; later calls return -1 again with the same message. */
int bz2par_next(Bz2Par *b, const char **data, size_t *len, Err *err);

/* Compressed bytes behind the output returned so far (the end offset of the
 * last piece returned), for progress against the file size. Call from the
 * thread that calls bz2par_next(). */
uint64_t bz2par_compressed_pos(const Bz2Par *b);

/* Bytes of non-bz2 data found after the last complete stream and ignored
 * (bzip2 ignores such "trailing garbage" with a warning; the caller may warn
 * when this is non-zero once bz2par_next() has returned 0). */
uint64_t bz2par_trailing_garbage(const Bz2Par *b);

/* Stop the threads, join them and free everything. Safe at any point: after
 * the end, after an error, or after an early stop by the caller. NULL is a
 * no-op. Does not close the fd given to bz2par_open(). */
void bz2par_close(Bz2Par *b);

/* Version of the libbz2 in use ("1.0.8, 13-Jul-2019"). */
const char *bz2par_lib_version(void);

#endif
