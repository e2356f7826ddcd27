/* bzdec.h - fast decoder for one bzip2 stream (the fast path of bz2par).
 *
 * bz2par cuts a .bz2 file into standalone streams (whole streams of a
 * multistream dump, or single blocks re-framed as streams) and decodes them
 * on worker threads. This decoder does that decoding about twice as fast as
 * libbz2's BZ2_bzDecompress: table-driven Huffman decoding instead of a
 * bit-at-a-time state machine, an inverse BWT walked in many segments at
 * once (independent chains of cache misses overlap), and a
 * slicing-by-8 CRC. It is strict: anything unusual (a randomised block, a
 * malformed table, a CRC mismatch, truncation) makes it return -1 without
 * explanation, and bz2par then decodes the same bytes with libbz2, which
 * either succeeds or produces the diagnostic. Output is only ever accepted
 * when every block CRC and the stream CRC match, so both paths give the
 * same bytes.
 *
 *   BzDec d = {0};
 *   size_t used;
 *   if (bzdec_stream(&d, in, len, &out, &outlen, &outcap, &used) < 0) fallback();
 *   bzdec_free(&d);
 */
#ifndef WB_BZDEC_H
#define WB_BZDEC_H

#include <stddef.h>
#include <stdint.h>

/* One piece of the inverse-BWT walk: its first row, first pool chunk,
 * length in bytes and the segment that follows it. */
typedef struct WalkSeg {
    uint32_t row, first, len, next;
} WalkSeg;

/* Per-thread decoder state: the block arrays (about 5 bytes per block
 * byte), reused between calls. */
typedef struct BzDec {
    uint32_t *tt;        /* symbols, then successor links */
    unsigned char *pool; /* walk output, in WALK_CHUNK-byte chunks */
    uint32_t *link;      /* next chunk of the same segment */
    WalkSeg *seg;
    uint32_t *srow; /* (row, segment) pairs sorted by row */
    size_t tt_cap, nchunks;
} BzDec;

/* Decode the one bzip2 stream at in[0..len) ("BZh" + level, blocks, end of
 * stream), appending its output to the growable buffer (*out, *outlen,
 * *outcap; grown with xrealloc). On success returns 0 and sets *used to the
 * bytes of `in` the stream took (through its final padding bits). On any
 * failure returns -1 and leaves *outlen as it was. */
int bzdec_stream(BzDec *d, const unsigned char *in, size_t len, unsigned char **out, size_t *outlen,
                 size_t *outcap, size_t *used);

/* The bzip2 CRC-32 (polynomial 0x04c11db7, MSB first) of p[0..n), continuing
 * from crc (start with 0xffffffff; the final value is the complement). */
uint32_t bzdec_crc_update(uint32_t crc, const unsigned char *p, size_t n);

void bzdec_free(BzDec *d);

#endif
