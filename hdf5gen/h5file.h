/* h5file.h - the HDF5 files of the masked-LM stage, written and read.
 *
 * Writing: NVIDIA's layout (create_pretraining_data.py through h5py): integer
 * datasets in the root group, chunked with h5py's chunk-shape guess, gzip
 * (deflate) level 4, no shuffle, no checksum, no attributes, no timestamps.
 * The chunks are filled by the caller's callback, compressed here (our
 * encoder, deflate.h, or libdeflate; zlib format, what HDF5's deflate
 * filter reads) on several threads, running ahead across the datasets of
 * one call, and handed to HDF5 whole (direct chunk write) in a fixed
 * order, so the file is byte-identical for any thread count.
 *
 * Files appear atomically: they are written as PATH.tmp.<pid>.<n> and
 * renamed by h5out_close; on an error, die() or a signal the temp file is
 * removed (common/io.h, writer_open_name).
 *
 * Reading: the dataset list, each dataset's type, shape, chunking and
 * filters, and rows converted to int32, from self-contained files only, for hdf5_check
 * (mlmcheck.c), the trainers' data reader (train/data.c) and the tests.
 *
 * This is the only file that includes hdf5.h and libdeflate.h. The HDF5
 * library is not thread-safe: every HDF5 call here holds one process-wide
 * lock, so threads may write or read different files at the same time
 * (compression and the fill callbacks run outside the lock).
 *
 *   H5Out *o;
 *   if (h5out_create(&o, "shard_0.hdf5", force, &err)) ...
 *   H5Dataset d[2] = {{"input_ids", 4, 2, rows, 128, fill_ids, ctx},
 *                     {"next_sentence_labels", 1, 1, rows, 1, fill_nsp, ctx}};
 *   if (h5out_write_all(o, d, 2, 4, threads, &err)) { h5out_abort(o); ... }
 *   if (h5out_close(o, &err)) ...           // renames into place
 */
#ifndef WB_H5FILE_H
#define WB_H5FILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

/* Rows [row0, row0 + nrows) of a dataset, row-major, cols elements of
 * elem_size bytes per row (cols == 1 for a 1-D dataset), into buf, which
 * the writer allocated and zeroed. Called from several threads at once
 * with disjoint row ranges; must not fail. */
typedef void (*H5FillFn)(void *arg, uint64_t row0, uint64_t nrows, void *buf);

/* Columns [col0, col0 + ncols) of rows [row0, row0 + nrows) of a rank-2
 * dataset into buf as rows of `width` elements (width >= ncols, the rest
 * left as they are), which the writer allocated and zeroed: one chunk. The
 * same threading contract as H5FillFn. */
typedef void (*H5StripFn)(void *arg, uint64_t row0, uint64_t nrows, uint64_t col0, uint64_t ncols,
                          uint64_t width, void *buf);

typedef struct H5Dataset {
    const char *name;
    int elem_size; /* 1: signed 8-bit (H5T_STD_I8LE), 4: signed 32-bit (H5T_STD_I32LE) */
    int rank;      /* 1 (rows,) or 2 (rows, cols) */
    uint64_t rows;
    uint64_t cols; /* 1 when rank is 1 */
    H5FillFn fill;
    void *arg;
    /* optional, rank 2: each chunk filled alone (a thread then holds one
     * chunk, not a band of chunk-height rows x all columns: h5py's chunks
     * grow taller with the dataset) */
    H5StripFn strip;
} H5Dataset;

typedef struct H5Out H5Out;

/* Start the HDF5 file `path` (a temp file beside it until h5out_close).
 * An existing `path` is an error unless force. Returns 0, or -1 with err
 * ("PATH: already exists (use -f to overwrite)", "PATH: Permission denied"). */
int h5out_create(H5Out **out, const char *path, int force, Err *err);

/* Add dataset d, compressed on up to `threads` threads: `level` 1..12 with
 * libdeflate at that level (the filter parameter records min(level, 9));
 * 0 with the run-length + Huffman encoder of deflate.h (~4x faster, a
 * few per cent larger on token ids), recording 4, NVIDIA's parameter. The
 * parameter is a hint for HDF5's own compressor; readers ignore it. Returns 0, or -1 with err
 * ("PATH: writing input_ids: No space left on device"); the file is then
 * unusable: call h5out_abort. */
int h5out_write(H5Out *o, const H5Dataset *d, int level, int threads, Err *err);

/* Add datasets d[0 .. nd) in this order: the same file as nd calls of
 * h5out_write, but the compression runs ahead across the datasets, so the
 * threads do not wait at each dataset's end. Fill callbacks of a later
 * dataset may run while an earlier one is still being filled or written
 * (each call still gets rows of one dataset only). Returns 0, or -1 with
 * err as h5out_write; the file is then unusable: call h5out_abort. */
int h5out_write_all(H5Out *o, const H5Dataset *d, int nd, int level, int threads, Err *err);

/* Close the file and rename it into place. Returns 0, or -1 with err (the
 * temp file is then removed). Frees o either way. */
int h5out_close(H5Out *o, Err *err);

/* Drop the file: close and remove the temp file. Frees o. */
void h5out_abort(H5Out *o);

/* Compressed bytes written so far (chunk payloads). */
uint64_t h5out_bytes(const H5Out *o);

/* h5py's chunk shape for a dataset of `rank` dims `shape` and element size
 * `elem_size` (h5py's guess_chunk: start from the full shape, 0 counted as
 * 1024; target 16 KiB * 2^log10(MiB of data), clamped to [8 KiB, 1 MiB];
 * halve dims round-robin from axis 0 until under the target or within 50 %
 * of it, and under 1 MiB). Writes rank values to chunk. */
void h5_guess_chunk(int rank, const uint64_t *shape, size_t elem_size, uint64_t *chunk);

/* ---- reading ---- */

typedef struct H5In H5In;

typedef struct H5Info {
    int rank;         /* 0 for a scalar */
    uint64_t dims[4]; /* first min(rank, 4) dimensions */
    int is_integer;   /* integer class */
    int elem_size;    /* bytes per element */
    int is_signed;
    int little_endian;
    int chunked;
    uint64_t chunk[4];
    int deflate_level; /* -1 without the deflate filter */
    int other_filters; /* filters other than deflate (shuffle, fletcher32) */
} H5Info;

/* Open an HDF5 file for reading. Before the library walks it, the
 * superblock is checked against the file's size (end-of-file address, the
 * root group's addresses). Returns 0; -1 with err when it cannot be read
 * as HDF5 ("PATH: not an HDF5 file", "PATH: No such file or directory");
 * -2 with err when it is HDF5 but damaged ("PATH: damaged HDF5 file
 * (truncated: its superblock says 20160 bytes, the file has 2900)") or
 * not self-contained (below).
 *
 * Only the file named is ever read. A file that points elsewhere is
 * refused with "PATH: not a self-contained HDF5 file (WHAT)": here, an
 * external (or user-defined) link in the root group; in h5in_info and
 * h5in_read_rows, before any data is read, a dataset reached through an
 * external link (also behind soft links), stored in external files
 * (H5Pset_external), virtual (mapping other files), or filtered by
 * anything but deflate, shuffle and fletcher32. Filter plugins are never
 * loaded, and an external link fails before its file is opened (a FIFO
 * cannot block the reader).
 *
 * This call and the reading calls below run with a crash guard: should
 * HDF5 itself crash on a damaged file (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGABRT in the thread reading it), the process prints "prog: PATH:
 * damaged HDF5 file (the HDF5 library crashed reading it)", removes its
 * temp outputs (common/io.h) and exits with 1. */
int h5in_open(H5In **in, const char *path, Err *err);

/* Names of the objects in the root group, in HDF5's (alphabetical) order:
 * *names is a NULL-terminated array, free it with free() (one block).
 * Returns the count, or -1 with err. */
int h5in_list(H5In *in, char ***names, Err *err);

/* Describe dataset `name`. Returns 1 and fills info, 0 when there is no
 * such dataset, -1 with err on a read error or a dataset that does not fit
 * the file: dimensions past their maxima, chunks larger than the dataset's
 * fixed extent, integers of other than 1, 2, 4 or 8 bytes, 2^31 or more
 * columns, or more values than the file's bytes can hold ("PATH: dataset
 * input_ids claims 1099511627776 rows of 128 (more than a file of 40960
 * bytes can hold)"), so callers may allocate by the shape. */
int h5in_info(H5In *in, const char *name, H5Info *info, Err *err);

/* Rows [row0, row0 + nrows) of an integer dataset of rank 1 or 2, each
 * value converted to int32 (values outside int32 are an error), into out
 * (nrows * cols values). The dataset is checked as by h5in_info first.
 * Returns 0, or -1 with err ("PATH: input_ids: rows 100..200 of 150",
 * "PATH: input_ids: read error (corrupt chunk?)"). */
int h5in_read_rows(H5In *in, const char *name, uint64_t row0, uint64_t nrows, int32_t *out,
                   Err *err);

/* Close and free. */
void h5in_close(H5In *in);

/* Decompress a zlib stream src[0..n) into dst[0..cap) with libdeflate;
 * the whole stream must decode and fill exactly `want` bytes (checksum
 * checked). Returns 0, or -1 when it is not a valid zlib stream of that
 * size. For checks of compressed chunks (tests, hdf5_check). */
int h5_inflate(const void *src, size_t n, void *dst, size_t want);

/* "HDF5 1.10.8, libdeflate 1.14": the libraries' versions, for --version. */
const char *h5_versions(void);

#endif
