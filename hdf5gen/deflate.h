/* deflate.h - a fast zlib-format (RFC 1950/1951) encoder for integer arrays.
 *
 * The masked-LM datasets are token ids (high-entropy low bytes, zero high
 * bytes), 0/1 masks and zero padding: general LZ77 match search finds
 * little in them beyond runs. This encoder does exactly that: one dynamic
 * Huffman block per call whose only matches are byte runs (distance 1, the
 * scheme of zlib's Z_RLE strategy), so a pass to tokenize and count, the
 * code construction, and a pass to emit bits. Any inflate reads the result
 * (zlib, libdeflate, HDF5's deflate filter).
 *
 *   size_t cap = dfl_bound(n);
 *   size_t z = dfl_compress(src, n, dst, cap, &scratch);  // 0: did not fit
 */
#ifndef WB_DEFLATE_H
#define WB_DEFLATE_H

#include <stddef.h>
#include <stdint.h>

/* Per-thread working memory, grown as needed; zero-initialise, free with
 * dfl_scratch_free. */
typedef struct DflScratch {
    uint32_t *tok; /* positions of the runs found in pass 1 */
    size_t cap;
} DflScratch;

/* Output size that dfl_compress never exceeds for n input bytes. */
size_t dfl_bound(size_t n);

/* Compress src[0..n) (n < 4 GiB) into dst as a zlib stream (header, one or more
 * dynamic-Huffman blocks, Adler-32). Returns the compressed size, or 0 if
 * cap is below what was needed (cap >= dfl_bound(n) always suffices).
 * Deterministic: the same input gives the same bytes. */
size_t dfl_compress(const void *src, size_t n, void *dst, size_t cap, DflScratch *sc);

/* Release the scratch memory. */
void dfl_scratch_free(DflScratch *sc);

/* Adler-32 of buf[0..n) continuing from `adler` (start with 1). */
uint32_t dfl_adler32(uint32_t adler, const void *buf, size_t n);

#endif
