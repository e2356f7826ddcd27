/* h5file.c - HDF5 writing (libdeflate-compressed direct chunk writes) and
 * reading for the masked-LM files. The only includer of hdf5.h and
 * libdeflate.h; see h5file.h for the contract.
 *
 * Writing datasets: each chunk grid is walked one row of chunks (a "band":
 * chunk-height rows, all columns) at a time, and the bands of all datasets
 * of one h5out_write_all form one sequence. A band is filled through the
 * caller's callback and all its chunks compressed by whichever thread takes
 * it (the rows in that thread's scratch, the compressed chunks in the band's
 * slot); the threads take bands in sequence order into a ring of 2 x threads
 * slots, running ahead of the writing by up to the ring's size, across
 * dataset ends too. The calling thread creates the datasets, hands each
 * band's compressed chunks to H5Dwrite_chunk in grid order under the HDF5
 * lock and closes the datasets, strictly in sequence order, so the HDF5
 * calls are the same for any thread count; while the band it needs next is
 * not ready it compresses one itself. On one thread there is no ring:
 * each chunk is compressed and written at once. A dataset with a strip
 * callback fills each chunk alone instead of a band (h5py's chunks grow
 * taller with the dataset, so a band grows with it). Edge chunks are
 * stored whole, zero-padded, as HDF5 stores them itself.
 */
#include "hdf5gen/h5file.h"

#include <errno.h>
#include <libdeflate.h>
#include <math.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "hdf5gen/deflate.h"
#include "common/io.h"

static pthread_mutex_t h5_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t h5_once = PTHREAD_ONCE_INIT;

/* Link and dataset access lists whose external-link traversal always
 * fails (set up once by h5_init; every reading call passes one). */
static hid_t lapl_inside = H5P_DEFAULT, dapl_inside = H5P_DEFAULT;

static herr_t refuse_elink(const char *parent_file, const char *parent_group, const char *file,
                           const char *obj, unsigned *flags, hid_t fapl, void *arg) {
    (void)parent_file, (void)parent_group, (void)file, (void)obj, (void)flags, (void)fapl;
    (void)arg;
    return -1;
}

static void h5_init(void) {
    /* No library shutdown at exit: a file whose close failed (disk full)
     * stays registered, and HDF5 1.10's exit-time close of it crashes.
     * Every file this code opens is closed explicitly. */
    H5dont_atexit();
    H5open();
    /* Files are read only from the path named: no filter plugin is ever
     * loaded (HDF5_PLUGIN_PATH, HDF5_PLUGIN_PRELOAD notwithstanding), and
     * the reading calls pass access lists on which an external link fails
     * before its file is opened, so a link the checks below missed cannot
     * open another file (or a FIFO, which would block for ever). */
    H5PLset_loading_state(0);
    lapl_inside = H5Pcreate(H5P_LINK_ACCESS);
    dapl_inside = H5Pcreate(H5P_DATASET_ACCESS);
    H5Pset_elink_cb(lapl_inside, refuse_elink, NULL);
    H5Pset_elink_cb(dapl_inside, refuse_elink, NULL);
}

/* HDF5's automatic error printing (the stack dumps on stderr) is a
 * setting of each thread's error stack: switched off in every thread at
 * its first HDF5 call (our own one-line messages instead). */
static __thread int h5_thread_quiet;

#define LOCK()                                                                                     \
    do {                                                                                           \
        pthread_once(&h5_once, h5_init);                                                           \
        pthread_mutex_lock(&h5_lock);                                                              \
        if (!h5_thread_quiet) {                                                                    \
            H5Eset_auto2(H5E_DEFAULT, NULL, NULL);                                                 \
            h5_thread_quiet = 1;                                                                   \
        }                                                                                          \
    } while (0)
#define UNLOCK() pthread_mutex_unlock(&h5_lock)

/* The innermost HDF5 error message, shortened to the system error when the
 * file driver reports one ("... error message = 'No space left on device'"). */
typedef struct ErrWalk {
    char msg[256];
    int have;
} ErrWalk;

static herr_t err_walk(unsigned n, const H5E_error2_t *e, void *arg) {
    ErrWalk *w = arg;
    if (!w->have && e->desc) {
        const char *p = strstr(e->desc, "error message = '");
        if (p) {
            p += strlen("error message = '");
            const char *q = strchr(p, '\'');
            size_t len = q ? (size_t)(q - p) : strlen(p);
            if (len >= sizeof w->msg) len = sizeof w->msg - 1;
            memcpy(w->msg, p, len);
            w->msg[len] = '\0';
        } else {
            snprintf(w->msg, sizeof w->msg, "%s", e->desc);
        }
        w->have = 1;
    }
    (void)n;
    return 0;
}

/* Called with the lock held, right after a failed HDF5 call. */
static const char *h5_errmsg(ErrWalk *w) {
    w->have = 0;
    w->msg[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, err_walk, w);
    H5Eclear2(H5E_DEFAULT);
    if (!w->have) snprintf(w->msg, sizeof w->msg, "HDF5 error");
    return w->msg;
}

const char *h5_versions(void) {
    static char buf[64];
    unsigned maj = 0, min = 0, rel = 0;
    pthread_once(&h5_once, h5_init);
    H5get_libversion(&maj, &min, &rel);
    snprintf(buf, sizeof buf, "HDF5 %u.%u.%u, libdeflate %s", maj, min, rel,
             LIBDEFLATE_VERSION_STRING);
    return buf;
}

int h5_inflate(const void *src, size_t n, void *dst, size_t want) {
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    if (!d) return -1;
    size_t in_used = 0, out = 0;
    enum libdeflate_result r = libdeflate_zlib_decompress_ex(d, src, n, dst, want, &in_used, &out);
    libdeflate_free_decompressor(d);
    return r == LIBDEFLATE_SUCCESS && in_used == n && out == want ? 0 : -1;
}

/* ---- chunk shape ---- */

void h5_guess_chunk(int rank, const uint64_t *shape, size_t elem_size, uint64_t *chunk) {
    enum { BASE = 16 * 1024, MIN = 8 * 1024, MAX = 1024 * 1024 };
    double c[8];
    double n = 1;
    for (int i = 0; i < rank; i++) {
        c[i] = shape[i] ? (double)shape[i] : 1024;
        n *= c[i];
    }
    double target = BASE * pow(2, log10(n * (double)elem_size / (1024.0 * 1024)));
    if (target > MAX)
        target = MAX;
    else if (target < MIN)
        target = MIN;
    for (int idx = 0;; idx++) {
        double cn = 1;
        for (int i = 0; i < rank; i++)
            cn *= c[i];
        double bytes = cn * (double)elem_size;
        if ((bytes < target || fabs(bytes - target) / target < 0.5) && bytes < MAX) break;
        if (cn == 1) break;
        c[idx % rank] = ceil(c[idx % rank] / 2.0);
    }
    for (int i = 0; i < rank; i++)
        chunk[i] = (uint64_t)c[i];
}

/* ---- writing ---- */

struct H5Out {
    Writer w; /* the temp name and its cleanup */
    hid_t file;
    uint64_t bytes;
};

/* A file access list whose metadata cache stays at MDC_BYTES. The chunk
 * index (version-1 B-trees) is the metadata that grows with a file; the
 * cache counts a node at its size on disk (about 2.6 KB), but in memory a
 * node's keys take about 18 KB, so HDF5's default cache (2 MB, growing to
 * 32 MB) kept 3-4 MB of nodes for a 125 MB file, more for larger ones.
 * Chunks are written in index order, so only each B-tree's rightmost path
 * is in use, and the small cache costs no measurable time. The cache
 * decides when and where metadata is written, so it is fixed here: the
 * same bytes every run and for any thread count. */
#define MDC_BYTES (32u << 10)
static hid_t small_mdc_fapl(void) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5AC_cache_config_t c;
    memset(&c, 0, sizeof c);
    c.version = H5AC__CURR_CACHE_CONFIG_VERSION;
    if (H5Pget_mdc_config(fapl, &c) >= 0) {
        c.set_initial_size = 1;
        c.initial_size = c.min_size = c.max_size = MDC_BYTES;
        c.incr_mode = H5C_incr__off;
        c.flash_incr_mode = H5C_flash_incr__off;
        c.decr_mode = H5C_decr__off;
        H5Pset_mdc_config(fapl, &c);
    }
    return fapl;
}

int h5out_create(H5Out **out, const char *path, int force, Err *err) {
    H5Out *o = xcalloc(1, sizeof *o);
    if (writer_open_name(&o->w, path, force, err)) {
        free(o);
        return -1;
    }
    LOCK();
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    hid_t fapl = small_mdc_fapl();
    o->file = H5Fcreate(o->w.tmp, H5F_ACC_TRUNC, fcpl, fapl);
    H5Pclose(fapl);
    H5Pclose(fcpl);
    if (o->file < 0) {
        ErrWalk ew;
        int e = errno;
        h5_errmsg(&ew);
        UNLOCK();
        /* the driver's message carries errno's text; fall back to errno */
        err_set(err, "%s: cannot create: %s", path, ew.have ? ew.msg : strerror(e));
        writer_abort(&o->w);
        free(o);
        return -1;
    }
    UNLOCK();
    *out = o;
    return 0;
}

uint64_t h5out_bytes(const H5Out *o) { return o->bytes; }

/* One band: its compressed chunks, back to back, and their sizes (a slot of
 * the ring); raw and chunk are a thread's scratch for the uncompressed rows,
 * so the ring holds the compressed bands only. */
typedef struct Band {
    uint8_t *raw; /* chunk-height rows x all columns (zero-padded) */
    size_t rawcap;
    uint8_t *chunk; /* one uncompressed chunk being gathered */
    size_t chunkcap;
    uint8_t *z; /* compressed chunks */
    size_t zcap;
    size_t *zsize; /* per chunk column */
    size_t zsizecap;
} Band;

static void grow(uint8_t **p, size_t *cap, size_t need) {
    if (*cap >= need) return;
    free(*p);
    *p = xmalloc(need);
    *cap = need;
}

/* Copy rows of `w` bytes, `stride` apart in src, to rows of `dw` bytes
 * (w <= dw, the rest zeros) one after another in dst. Strips are narrow
 * (8 columns of a 128-wide row, 2 of 20), so the common widths get copies
 * of a constant size, which the compiler inlines, instead of a call per
 * row. */
static void gather(uint8_t *dst, const uint8_t *src, size_t rows, size_t stride, size_t w,
                   size_t dw) {
#define GATHER_ROWS(W)                                                                             \
    for (size_t r = 0; r < rows; r++)                                                              \
        memcpy(dst + r * (W), src + r * stride, (W));
    if (w == dw && w == 8) {
        GATHER_ROWS(8)
    } else if (w == dw && w == 16) {
        GATHER_ROWS(16)
    } else if (w == dw && w == 32) {
        GATHER_ROWS(32)
    } else {
        for (size_t r = 0; r < rows; r++) {
            memcpy(dst + r * dw, src + r * stride, w);
            if (w < dw) memset(dst + r * dw + w, 0, dw - w);
        }
    }
#undef GATHER_ROWS
}

/* The uncompressed rows of the band at row r0 into the scratch `w`, all
 * columns (nothing with d->strip: each chunk is then filled alone). */
static void band_fill(Band *w, const H5Dataset *d, const uint64_t *chunk, uint64_t r0) {
    if (d->strip && d->rank == 2) return;
    size_t es = (size_t)d->elem_size;
    uint64_t ch = chunk[0], cols = d->rank == 2 ? d->cols : 1;
    uint64_t nrows = d->rows - r0 < ch ? d->rows - r0 : ch;
    size_t rawn = (size_t)(ch * cols * es);
    grow(&w->raw, &w->rawcap, rawn);
    memset(w->raw, 0, rawn);
    d->fill(d->arg, r0, nrows, w->raw);
}

/* The uncompressed bytes of chunk column s of the band at r0 (band_fill
 * first): a pointer into w, chunk[0] x chunk[1] elements. */
static const uint8_t *chunk_bytes(Band *w, const H5Dataset *d, const uint64_t *chunk, uint64_t r0,
                                  uint64_t s) {
    size_t es = (size_t)d->elem_size;
    uint64_t ch = chunk[0], cw = d->rank == 2 ? chunk[1] : 1;
    uint64_t cols = d->rank == 2 ? d->cols : 1, nstrips = (cols + cw - 1) / cw;
    size_t chunkn = (size_t)(ch * cw * es);
    uint64_t c0 = s * cw, ncol = cols - c0 < cw ? cols - c0 : cw;
    if (d->strip && d->rank == 2) { /* the chunk alone */
        uint64_t nrows = d->rows - r0 < ch ? d->rows - r0 : ch;
        grow(&w->chunk, &w->chunkcap, chunkn);
        memset(w->chunk, 0, chunkn);
        d->strip(d->arg, r0, nrows, c0, ncol, cw, w->chunk);
        return w->chunk;
    }
    if (nstrips == 1 && cw == cols) return w->raw;
    /* gather the strip's columns; pad past the last column */
    grow(&w->chunk, &w->chunkcap, chunkn);
    gather(w->chunk, w->raw + c0 * es, (size_t)ch, (size_t)(cols * es), (size_t)(ncol * es),
           (size_t)(cw * es));
    return w->chunk;
}

/* The compression bound of one chunk of d. */
static size_t chunk_bound(const H5Dataset *d, const uint64_t *chunk,
                          struct libdeflate_compressor *c) {
    size_t chunkn = (size_t)(chunk[0] * (d->rank == 2 ? chunk[1] : 1) * (uint64_t)d->elem_size);
    return c ? libdeflate_zlib_compress_bound(c, chunkn) : dfl_bound(chunkn);
}

/* Compress n bytes of src into dst (bound bytes): the compressed size, 0
 * if it does not fit (cannot happen with the bound). */
static size_t chunk_compress(const uint8_t *src, size_t n, uint8_t *dst, size_t bound,
                             struct libdeflate_compressor *c, DflScratch *sc) {
    return c ? libdeflate_zlib_compress(c, src, n, dst, bound)
             : dfl_compress(src, n, dst, bound, sc);
}

/* Fill band `b` (rows r0 ..) in the scratch `w` (or, with d->strip, each
 * chunk alone) and compress its chunks into b. Returns 0, or -1 when a
 * chunk does not compress into the bound (cannot happen with a correct
 * bound). */
static int band_make(Band *b, Band *w, const H5Dataset *d, const uint64_t *chunk, uint64_t r0,
                     struct libdeflate_compressor *c, DflScratch *sc) {
    uint64_t cw = d->rank == 2 ? chunk[1] : 1, cols = d->rank == 2 ? d->cols : 1;
    uint64_t nstrips = (cols + cw - 1) / cw;
    size_t chunkn = (size_t)(chunk[0] * cw * (uint64_t)d->elem_size);
    size_t bound = chunk_bound(d, chunk, c);
    band_fill(w, d, chunk, r0);
    grow(&b->z, &b->zcap, bound * nstrips);
    if (b->zsizecap < nstrips) {
        free(b->zsize);
        b->zsize = xmalloc(nstrips * sizeof *b->zsize);
        b->zsizecap = nstrips;
    }
    size_t zoff = 0;
    for (uint64_t s = 0; s < nstrips; s++) {
        size_t n =
            chunk_compress(chunk_bytes(w, d, chunk, r0, s), chunkn, b->z + zoff, bound, c, sc);
        if (!n) return -1;
        b->zsize[s] = n;
        zoff += n;
    }
    return 0;
}

static void band_free(Band *b) {
    free(b->raw);
    free(b->chunk);
    free(b->z);
    free(b->zsize);
}

/* One dataset's chunk grid. */
typedef struct Grid {
    uint64_t chunk[2]; /* h5py's chunk shape (chunk[1] == 1 for rank 1) */
    uint64_t cols, cw; /* columns, chunk width */
    uint64_t nbands, nstrips;
    uint64_t first; /* its first band's number in the whole sequence */
} Grid;

/* The bands of all datasets as one sequence, compressed by every thread
 * into a ring of slots and written by the calling thread in order. Band k
 * goes to slot k % nslot and may be taken once band k - nslot is written;
 * ready[slot] is the band the slot holds once it is compressed, else -1. */
typedef struct Pipe {
    const H5Dataset *d;
    const Grid *g;
    int nd;
    uint64_t total;
    Band *slot;
    int64_t *ready;
    int nslot;
    struct libdeflate_compressor **comp; /* per thread (NULL: our encoder) */
    DflScratch *scr;                     /* per thread */
    Band *work;                          /* per thread: uncompressed rows */
    pthread_mutex_t mu;
    pthread_cond_t done; /* a band is compressed */
    pthread_cond_t free; /* a band is written, or stop */
    uint64_t next;       /* the next band to take */
    uint64_t written;    /* bands written */
    int stop;            /* an error: take no more */
    int bad;             /* a band did not compress */
} Pipe;

/* The dataset of band k. */
static int pipe_dataset(const Pipe *p, uint64_t k) {
    int i = 0;
    while (i + 1 < p->nd && k >= p->g[i + 1].first)
        i++;
    return i;
}

/* Take the next band if its slot is free (with p->mu held): its number in
 * *k, 1; 0 when there is none to take now. */
static int pipe_take(Pipe *p, uint64_t *k) {
    if (p->stop || p->next >= p->total || p->next >= p->written + (uint64_t)p->nslot) return 0;
    *k = p->next++;
    return 1;
}

/* Compress band k on thread t (p->mu not held), then publish it. */
static void pipe_make(Pipe *p, uint64_t k, int t) {
    int i = pipe_dataset(p, k);
    const Grid *g = &p->g[i];
    Band *b = &p->slot[k % (uint64_t)p->nslot];
    int bad = band_make(b, &p->work[t], &p->d[i], g->chunk, (k - g->first) * g->chunk[0],
                        p->comp[t], &p->scr[t]) != 0;
    pthread_mutex_lock(&p->mu);
    p->ready[k % (uint64_t)p->nslot] = (int64_t)k;
    if (bad) p->bad = 1;
    pthread_cond_broadcast(&p->done);
    pthread_mutex_unlock(&p->mu);
}

/* The other threads: compress bands until none is left or stop. */
static void pipe_worker(Pipe *p, int t) {
    pthread_mutex_lock(&p->mu);
    for (;;) {
        uint64_t k;
        if (pipe_take(p, &k)) {
            pthread_mutex_unlock(&p->mu);
            pipe_make(p, k, t);
            pthread_mutex_lock(&p->mu);
            continue;
        }
        if (p->stop || p->next >= p->total) break;
        pthread_cond_wait(&p->free, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
}

/* Wait until band k is compressed, compressing others meanwhile (thread
 * t). Returns 0, or -1 when a band did not compress. */
static int pipe_wait(Pipe *p, uint64_t k, int t) {
    pthread_mutex_lock(&p->mu);
    while (p->ready[k % (uint64_t)p->nslot] != (int64_t)k && !p->bad) {
        uint64_t j;
        if (pipe_take(p, &j)) {
            pthread_mutex_unlock(&p->mu);
            pipe_make(p, j, t);
            pthread_mutex_lock(&p->mu);
        } else {
            pthread_cond_wait(&p->done, &p->mu);
        }
    }
    int bad = p->bad;
    pthread_mutex_unlock(&p->mu);
    return bad ? -1 : 0;
}

/* Band k is written: its slot is free. */
static void pipe_written(Pipe *p) {
    pthread_mutex_lock(&p->mu);
    p->written++;
    pthread_cond_broadcast(&p->free);
    pthread_mutex_unlock(&p->mu);
}

static void pipe_stop(Pipe *p) {
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->free);
    pthread_mutex_unlock(&p->mu);
}

/* Create dataset d with grid g (the HDF5 lock held). Returns its id, or
 * -1 with err set. */
static hid_t create_dataset(H5Out *o, const H5Dataset *d, const Grid *g, int level, Err *err) {
    ErrWalk ew;
    hsize_t dims[2] = {d->rows, g->cols}, cdims[2] = {g->chunk[0], g->cw};
    hid_t space = H5Screate_simple(d->rank, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, d->rank, cdims);
    /* the filter's parameter, which only HDF5's own compressor would use */
    H5Pset_deflate(dcpl, (unsigned)(level == 0 ? 4 : level > 9 ? 9 : level));
    H5Pset_obj_track_times(dcpl, 0); /* no timestamps: same bytes every run */
    hid_t type = d->elem_size == 4 ? H5T_STD_I32LE : H5T_STD_I8LE;
    hid_t dset = H5Dcreate2(o->file, d->name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
    if (dset < 0) err_set(err, "%s: creating %s: %s", o->w.path, d->name, h5_errmsg(&ew));
    return dset;
}

/* Chunk (r0, c0) of dataset d, zn compressed bytes at z, written (the
 * HDF5 lock held). Returns 0, or -1 with err set. */
static int put_chunk(H5Out *o, hid_t dset, const H5Dataset *d, uint64_t r0, uint64_t c0,
                     const uint8_t *z, size_t zn, Err *err) {
    ErrWalk ew;
    hsize_t off[2] = {r0, c0};
    if (H5Dwrite_chunk(dset, H5P_DEFAULT, 0, off, zn, z) < 0)
        return err_set(err, "%s: writing %s: %s", o->w.path, d->name, h5_errmsg(&ew));
    o->bytes += zn;
    return 0;
}

/* Close dataset d (the HDF5 lock held): rc, or -1 with err set when rc
 * was 0 and the close fails. */
static int close_dataset(H5Out *o, hid_t dset, const H5Dataset *d, int rc, Err *err) {
    ErrWalk ew;
    if (H5Dclose(dset) < 0 && rc == 0)
        rc = err_set(err, "%s: writing %s: %s", o->w.path, d->name, h5_errmsg(&ew));
    return rc;
}

/* The calling thread's part: every band in order, compressing while the
 * band it needs is not ready, creating, writing and closing the datasets
 * in turn. Returns 0, or -1 with err set. */
static int pipe_write(Pipe *p, H5Out *o, int level, Err *err) {
    const char *path = o->w.path;
    hid_t dset = -1;
    int rc = 0;
    for (uint64_t k = 0; k < p->total && rc == 0; k++) {
        int i = pipe_dataset(p, k);
        const H5Dataset *d = &p->d[i];
        const Grid *g = &p->g[i];
        if (pipe_wait(p, k, 0)) {
            rc = err_set(err, "%s: %s: compression failed", path, d->name);
            break;
        }
        LOCK();
        if (k == g->first && (dset = create_dataset(o, d, g, level, err)) < 0) rc = -1;
        const Band *b = &p->slot[k % (uint64_t)p->nslot];
        size_t zoff = 0;
        for (uint64_t s = 0; s < g->nstrips && rc == 0; s++) {
            rc = put_chunk(o, dset, d, (k - g->first) * g->chunk[0], s * g->cw, b->z + zoff,
                           b->zsize[s], err);
            zoff += b->zsize[s];
        }
        if (dset >= 0 && (rc || k + 1 == g->first + g->nbands)) {
            rc = close_dataset(o, dset, d, rc, err);
            dset = -1;
        }
        UNLOCK();
        pipe_written(p);
    }
    pipe_stop(p);
    return rc;
}

/* One thread: each chunk compressed and written at once, in pipe_write's
 * order (the same HDF5 calls, the same file), with no ring of compressed
 * bands: one chunk held, and one band only for a dataset without strip.
 * Returns 0, or -1 with err set. */
static int write_direct(H5Out *o, const H5Dataset *d, const Grid *g, int nd, int level,
                        struct libdeflate_compressor *c, DflScratch *sc, Band *w, Err *err) {
    const char *path = o->w.path;
    int rc = 0;
    uint8_t *z = NULL;
    size_t zcap = 0;
    for (int i = 0; i < nd && rc == 0; i++) {
        size_t chunkn = (size_t)(g[i].chunk[0] * g[i].cw * (uint64_t)d[i].elem_size);
        size_t bound = chunk_bound(&d[i], g[i].chunk, c);
        grow(&z, &zcap, bound);
        LOCK();
        hid_t dset = create_dataset(o, &d[i], &g[i], level, err);
        UNLOCK();
        if (dset < 0) {
            rc = -1;
            break;
        }
        for (uint64_t k = 0; k < g[i].nbands && rc == 0; k++) {
            uint64_t r0 = k * g[i].chunk[0];
            band_fill(w, &d[i], g[i].chunk, r0);
            for (uint64_t s = 0; s < g[i].nstrips && rc == 0; s++) {
                size_t zn = chunk_compress(chunk_bytes(w, &d[i], g[i].chunk, r0, s), chunkn, z,
                                           bound, c, sc);
                if (!zn) {
                    rc = err_set(err, "%s: %s: compression failed", path, d[i].name);
                    break;
                }
                LOCK();
                rc = put_chunk(o, dset, &d[i], r0, s * g[i].cw, z, zn, err);
                UNLOCK();
            }
        }
        LOCK();
        rc = close_dataset(o, dset, &d[i], rc, err);
        UNLOCK();
    }
    free(z);
    return rc;
}

int h5out_write_all(H5Out *o, const H5Dataset *d, int nd, int level, int threads, Err *err) {
    const char *path = o->w.path;
    if (level < 0 || level > 12)
        return err_set(err, "%s: deflate level %d is not in 0..12", path, level);
    for (int i = 0; i < nd; i++) {
        if (d[i].rank != 1 && d[i].rank != 2)
            return err_set(err, "%s: %s: rank %d not supported", path, d[i].name, d[i].rank);
        if (d[i].elem_size != 1 && d[i].elem_size != 4)
            return err_set(err, "%s: %s: element size %d not supported", path, d[i].name,
                           d[i].elem_size);
        if (d[i].rows == 0) return err_set(err, "%s: %s: no rows to write", path, d[i].name);
    }
    Grid *g = xcalloc((size_t)(nd > 0 ? nd : 1), sizeof *g);
    uint64_t total = 0;
    for (int i = 0; i < nd; i++) {
        g[i].cols = d[i].rank == 2 ? d[i].cols : 1;
        uint64_t shape[2] = {d[i].rows, g[i].cols};
        h5_guess_chunk(d[i].rank, shape, (size_t)d[i].elem_size, g[i].chunk);
        if (d[i].rank == 1) g[i].chunk[1] = 1;
        g[i].cw = g[i].chunk[1];
        g[i].nbands = (d[i].rows + g[i].chunk[0] - 1) / g[i].chunk[0];
        g[i].nstrips = (g[i].cols + g[i].cw - 1) / g[i].cw;
        g[i].first = total;
        total += g[i].nbands;
    }
    if (threads < 1) threads = 1;
    if ((uint64_t)threads > total) threads = total ? (int)total : 1;
    Pipe p = {.d = d, .g = g, .nd = nd, .total = total};
    p.nslot = 2 * threads;
    p.slot = xcalloc((size_t)p.nslot, sizeof *p.slot);
    p.ready = xmalloc((size_t)p.nslot * sizeof *p.ready);
    for (int i = 0; i < p.nslot; i++)
        p.ready[i] = -1;
    p.comp = xcalloc((size_t)threads, sizeof *p.comp);
    p.scr = xcalloc((size_t)threads, sizeof *p.scr);
    p.work = xcalloc((size_t)threads, sizeof *p.work);
    for (int t = 0; t < threads && level > 0; t++)
        p.comp[t] = libdeflate_alloc_compressor(level);
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.done, NULL);
    pthread_cond_init(&p.free, NULL);
    int rc = 0;
    if (threads == 1) {
        rc = write_direct(o, d, g, nd, level, p.comp[0], &p.scr[0], &p.work[0], err);
    } else {
#pragma omp parallel num_threads(threads)
        {
            int t = 0;
#ifdef _OPENMP
            t = omp_get_thread_num();
#endif
            if (t == 0)
                rc = pipe_write(&p, o, level, err);
            else
                pipe_worker(&p, t);
        }
    }
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.done);
    pthread_cond_destroy(&p.free);
    for (int t = 0; t < threads; t++) {
        if (p.comp[t]) libdeflate_free_compressor(p.comp[t]);
        dfl_scratch_free(&p.scr[t]);
        band_free(&p.work[t]);
    }
    for (int i = 0; i < p.nslot; i++)
        band_free(&p.slot[i]);
    free(p.comp), free(p.scr), free(p.work), free(p.slot), free(p.ready), free(g);
    return rc;
}

int h5out_write(H5Out *o, const H5Dataset *d, int level, int threads, Err *err) {
    return h5out_write_all(o, d, 1, level, threads, err);
}

int h5out_close(H5Out *o, Err *err) {
    LOCK();
    ErrWalk ew;
    int bad = H5Fclose(o->file) < 0;
    if (bad) err_set(err, "%s: write error: %s", o->w.path, h5_errmsg(&ew));
    /* HDF5 keeps the blocks of a closed file on its free lists for the next
     * one; a run over many files would hold the most any file needed */
    H5garbage_collect();
    UNLOCK();
    int rc = 0;
    if (bad) {
        writer_abort(&o->w);
        rc = -1;
    } else if (writer_close(&o->w, err)) {
        rc = -1;
    }
    free(o);
    return rc;
}

void h5out_abort(H5Out *o) {
    LOCK();
    H5Fclose(o->file);
    H5Eclear2(H5E_DEFAULT);
    UNLOCK();
    writer_abort(&o->w);
    free(o);
}

/* ---- reading: the crash guard ---- */

/* HDF5 1.10 trusts many fields of the file it walks: a damaged file can
 * make it read or copy out of bounds (SIGSEGV in H5Dread's memcpy, in
 * H5Lexists). While a thread reads a file through the calls below, a
 * handler on an alternate stack turns such a signal into one line,
 * "prog: FILE: damaged HDF5 file (the HDF5 library crashed reading it)",
 * removes the temp outputs (writer_unlink_temps) and _exits with 1: after
 * a crash inside the library its locks and heap are in an unknown state,
 * so ending the process is the only safe way on. The handler is installed
 * once and acts only for the thread that holds the HDF5 lock with the
 * guard armed (crash_armed is thread-local); a fault anywhere else goes to
 * the action that was there before. One alternate stack is enough: only
 * the lock holder arms, and it puts its own alternate stack back when it
 * disarms. */
enum { CRASH_STACK = 64 * 1024 };
static char crash_stack[CRASH_STACK];
static const int crash_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NCRASH_SIGS ((int)(sizeof crash_sigs / sizeof crash_sigs[0]))
static struct sigaction crash_old[NCRASH_SIGS];
static pthread_once_t crash_once = PTHREAD_ONCE_INIT;
static const char *volatile crash_path; /* the file being read (the lock holder's) */
static __thread volatile sig_atomic_t crash_armed;
static __thread stack_t crash_prev_stack;

static size_t cat(char *dst, size_t at, size_t cap, const char *s) {
    while (*s && at + 1 < cap)
        dst[at++] = *s++;
    return at;
}

static void on_crash(int sig, siginfo_t *si, void *uc) {
    int i = 0;
    while (i < NCRASH_SIGS && crash_sigs[i] != sig)
        i++;
    if (!crash_armed) { /* not ours: what was there before, then the same signal again */
        if (i < NCRASH_SIGS) sigaction(sig, &crash_old[i], NULL);
        if (si->si_code <= 0) raise(sig); /* sent, not a fault: a fault recurs by itself */
        return;
    }
    static char msg[4096 + 256];
    size_t n = 0;
    n = cat(msg, n, sizeof msg - 1, progname);
    n = cat(msg, n, sizeof msg - 1, ": ");
    n = cat(msg, n, sizeof msg - 1, crash_path ? crash_path : "?");
    n = cat(msg, n, sizeof msg - 1, ": damaged HDF5 file (the HDF5 library crashed reading it)");
    msg[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, msg, n);
    (void)w, (void)uc;
    writer_unlink_temps();
    _exit(EXIT_DATA);
}

static void crash_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NCRASH_SIGS; i++)
        sigaction(crash_sigs[i], &sa, &crash_old[i]);
}

/* With the lock held: guard the HDF5 calls that read `path`. */
static void crash_arm(const char *path) {
    pthread_once(&crash_once, crash_install);
    stack_t ss = {.ss_sp = crash_stack, .ss_size = sizeof crash_stack, .ss_flags = 0};
    if (sigaltstack(&ss, &crash_prev_stack) != 0) crash_prev_stack.ss_flags = SS_DISABLE;
    crash_path = path;
    crash_armed = 1;
}

/* With the lock held, before releasing it. */
static void crash_disarm(void) {
    crash_armed = 0;
    crash_path = NULL;
    sigaltstack(&crash_prev_stack, NULL);
}

/* LOCK / UNLOCK for the calls that read a file. */
#define RLOCK(path)                                                                                \
    do {                                                                                           \
        LOCK();                                                                                    \
        crash_arm(path);                                                                           \
    } while (0)
#define RUNLOCK()                                                                                  \
    do {                                                                                           \
        crash_disarm();                                                                            \
        UNLOCK();                                                                                  \
    } while (0)

/* ---- reading: checks before the library walks the file ---- */

struct H5In {
    hid_t file;
    char *path;
    uint64_t size; /* bytes, when opened */
};

/* The deflate format's largest expansion: a stored byte count of n
 * decompresses to at most about 1032 n bytes (258-byte matches of 2 bits). */
enum { DEFLATE_MAX_RATIO = 1032 };

#define UNDEF_ADDR UINT64_MAX

/* An address of `n` bytes, little-endian; all ones is HDF5's "undefined". */
static uint64_t get_addr(const uint8_t *p, int n) {
    uint64_t v = 0;
    int ones = 1;
    for (int i = n - 1; i >= 0; i--) {
        v = v << 8 | p[i];
        ones &= p[i] == 0xff;
    }
    return ones ? UNDEF_ADDR : v;
}

/* The superblock at the start of the file (or after a user block of 512,
 * 1024, 2048, ... bytes, where HDF5 looks for it) against the file's real
 * size: the end-of-file address, the base address and the addresses of the
 * root group's structures must lie inside the file. Returns 0; -1 with err
 * when there is no HDF5 signature ("PATH: not an HDF5 file"); -2 with err
 * when the superblock is damaged or the file truncated ("PATH: damaged
 * HDF5 file (...)"). Versions HDF5 1.10 does not know are left to it. */
static int superblock_check(const char *path, uint64_t size, Err *err) {
    static const uint8_t sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    int fd = open(path, O_RDONLY);
    if (fd < 0) return err_set(err, "%s: %s", path, strerror(errno));
    uint8_t b[128];
    uint64_t at = 0;
    ssize_t got = 0;
    for (;;) {
        got = at < size ? pread(fd, b, sizeof b, (off_t)at) : 0;
        if (got >= 8 && memcmp(b, sig, 8) == 0) break;
        if (got < 8 || at >= size) {
            close(fd);
            return err_set(err, "%s: not an HDF5 file", path);
        }
        at = at ? 2 * at : 512;
    }
    close(fd);
    int version = b[8], osz, lsz, pos;
    if (version <= 1)
        osz = b[13], lsz = b[14], pos = version == 0 ? 24 : 28;
    else if (version <= 3)
        osz = b[9], lsz = b[10], pos = 12;
    else
        return 0;
    if ((osz != 2 && osz != 4 && osz != 8) || (lsz != 2 && lsz != 4 && lsz != 8)) {
        err_set(err, "%s: damaged HDF5 file (superblock: %d-byte addresses, %d-byte lengths)", path,
                osz, lsz);
        return -2;
    }
    int need = version <= 1 ? pos + 4 * osz + lsz + osz + 8 + 2 * osz : pos + 4 * osz;
    if (got < need) {
        err_set(err, "%s: damaged HDF5 file (truncated in its superblock)", path);
        return -2;
    }
    uint64_t base = get_addr(b + pos, osz), ext = get_addr(b + pos + osz, osz),
             eof = get_addr(b + pos + 2 * osz, osz);
    uint64_t driver = version <= 1 ? get_addr(b + pos + 3 * osz, osz) : UNDEF_ADDR;
    uint64_t root =
        version <= 1 ? get_addr(b + pos + 4 * osz + lsz, osz) : get_addr(b + pos + 3 * osz, osz);
    uint64_t btree = UNDEF_ADDR, heap = UNDEF_ADDR;
    if (version <= 1) {
        const uint8_t *e = b + pos + 4 * osz + lsz + osz; /* cache type, reserved, scratch pad */
        if ((e[0] | e[1] << 8 | e[2] << 16 | (uint32_t)e[3] << 24) ==
            1) /* a symbol table: its B-tree and heap */
            btree = get_addr(e + 8, osz), heap = get_addr(e + 8 + osz, osz);
    }
    /* the end-of-file address counts from the file's start (HDF5 compares
     * it with the file's size); the others from the base address */
    if (eof == UNDEF_ADDR || eof > size) {
        err_set(
            err,
            "%s: damaged HDF5 file (truncated: its superblock says %llu bytes, the file has %llu)",
            path, eof == UNDEF_ADDR ? 0ULL : (unsigned long long)eof, (unsigned long long)size);
        return -2;
    }
    if (base == UNDEF_ADDR || base > eof) {
        err_set(err, "%s: damaged HDF5 file (base address %llu past its end at %llu)", path,
                base == UNDEF_ADDR ? 0ULL : (unsigned long long)base, (unsigned long long)eof);
        return -2;
    }
    eof -= base; /* where the addresses below end */
    const char *what[] = {"the root group's header", "the root group's B-tree",
                          "the root group's name heap",
                          version <= 1 ? "the free-space information" : "the superblock extension",
                          "the driver information"};
    uint64_t addr[] = {root, btree, heap, ext, driver};
    for (int i = 0; i < 5; i++)
        if ((i == 0 && addr[i] == UNDEF_ADDR) || (addr[i] != UNDEF_ADDR && addr[i] >= eof)) {
            err_set(err, "%s: damaged HDF5 file (%s at %s%llu, past the end of its data at %llu)",
                    path, what[i], addr[i] == UNDEF_ADDR ? "an undefined address " : "",
                    addr[i] == UNDEF_ADDR ? 0ULL : (unsigned long long)addr[i],
                    (unsigned long long)eof);
            return -2;
        }
    return 0;
}

/* Filter i of the dataset creation property list p; *level (may be NULL)
 * gets its first parameter (deflate's level), 0 when it has none; fname
 * (may be NULL) the name the file records for it. */
static H5Z_filter_t nth_filter(hid_t p, int i, int *level, char *fname, size_t fcap) {
    unsigned flags, cdv[8], conf;
    size_t ncd = 8;
    char tmp[64];
    if (!fname) fname = tmp, fcap = sizeof tmp;
    fname[0] = '\0';
    H5Z_filter_t f = H5Pget_filter2(p, (unsigned)i, &flags, &ncd, cdv, fcap, fname, &conf);
    fname[fcap - 1] = '\0';
    if (level) *level = ncd ? (int)cdv[0] : 0;
    return f;
}

#define NOT_CONTAINED "not a self-contained HDF5 file"

/* With the lock held: the data of dataset `name` (creation properties p)
 * lies in this file, in a form read without plugins: no external raw-data
 * storage (H5Pset_external: any file, /etc/passwd or a FIFO), no virtual
 * layout (other files' datasets), and no filters but deflate, shuffle and
 * fletcher32. Returns 0, or -1 with err ("PATH: not a self-contained HDF5
 * file (input_ids: its raw data is stored in /etc/passwd)"). */
static int foreign_check(H5In *in, const char *name, hid_t p, Err *err) {
    char other[256] = "";
    int ne = H5Pget_external_count(p);
    if (ne != 0) {
        off_t off;
        hsize_t size;
        if (ne < 0 || H5Pget_external(p, 0, sizeof other, other, &off, &size) < 0)
            snprintf(other, sizeof other, "another file");
        other[sizeof other - 1] = '\0';
        return err_set(err, "%s: " NOT_CONTAINED " (%s: its raw data is stored in %s)", in->path,
                       name, other);
    }
    if (H5Pget_layout(p) == H5D_VIRTUAL) {
        size_t nv = 0;
        if (H5Pget_virtual_count(p, &nv) < 0 || nv == 0 ||
            H5Pget_virtual_filename(p, 0, other, sizeof other) < 0)
            snprintf(other, sizeof other, "other files");
        other[sizeof other - 1] = '\0';
        return err_set(err, "%s: " NOT_CONTAINED " (%s: a virtual dataset mapping %s)", in->path,
                       name, other);
    }
    int nf = H5Pget_nfilters(p);
    for (int i = 0; i < nf; i++) {
        char fname[64];
        H5Z_filter_t f = nth_filter(p, i, NULL, fname, sizeof fname);
        if (f != H5Z_FILTER_DEFLATE && f != H5Z_FILTER_SHUFFLE && f != H5Z_FILTER_FLETCHER32)
            return err_set(err,
                           "%s: " NOT_CONTAINED " (%s: filter %d%s%s%s; only deflate, shuffle "
                           "and fletcher32 are read, no plugins)",
                           in->path, name, (int)f, fname[0] ? " \"" : "", fname,
                           fname[0] ? "\"" : "");
    }
    return 0;
}

/* Link kinds a path may cross, for messages. */
static const char *link_kind(H5L_type_t t) {
    return t == H5L_TYPE_EXTERNAL ? "an external link" : "a user-defined link";
}

/* With the lock held: every link on the path `obj` (absolute, or relative
 * to the root group) is a hard link, or a soft link whose target passes
 * the same check, so opening `obj` reads nothing outside the file. Each
 * prefix is checked before the longer path, so the library only ever
 * traverses links already checked. `name` is the dataset asked for (for
 * messages); depth bounds soft-link chains. A component that does not
 * exist is left to the caller's open. Returns 0, or -1 with err ("PATH:
 * not a self-contained HDF5 file (input_ids: an external link to
 * other.hdf5:/input_ids)"). */
static int links_inside(H5In *in, const char *name, const char *obj, int depth, Err *err) {
    if (depth > 16)
        return err_set(err, "%s: damaged HDF5 file (%s: more than 16 soft links in a chain)",
                       in->path, name);
    size_t n = strlen(obj);
    char *pre = xmalloc(n + 2);
    int rc = 0;
    for (size_t end = 0; end <= n && rc == 0; end++) {
        if (end < n && obj[end] != '/') continue;
        if (end == 0 || obj[end - 1] == '/') continue; /* the root, or "//" */
        memcpy(pre, obj, end);
        pre[end] = '\0';
        H5L_info_t li;
        if (H5Lexists(in->file, pre, lapl_inside) <= 0 ||
            H5Lget_info(in->file, pre, &li, lapl_inside) < 0) {
            H5Eclear2(H5E_DEFAULT);
            break; /* no such link: the open reports it */
        }
        if (li.type == H5L_TYPE_HARD) continue;
        char *val = xmalloc(li.u.val_size + 1);
        if (H5Lget_val(in->file, pre, val, li.u.val_size, lapl_inside) < 0) {
            H5Eclear2(H5E_DEFAULT);
            val[0] = '\0';
        }
        val[li.u.val_size] = '\0';
        if (li.type == H5L_TYPE_SOFT) {
            /* a relative target is relative to the group holding the link */
            const char *slash = strrchr(pre, '/');
            size_t dir = val[0] == '/' || !slash ? 0 : (size_t)(slash - pre) + 1;
            char *target = xmalloc(dir + strlen(val) + 1);
            memcpy(target, pre, dir);
            strcpy(target + dir, val);
            rc = links_inside(in, name, target, depth + 1, err);
            free(target);
        } else {
            const char *file = NULL, *path = NULL;
            unsigned flags;
            if (li.type != H5L_TYPE_EXTERNAL ||
                H5Lunpack_elink_val(val, li.u.val_size, &flags, &file, &path) < 0)
                file = path = NULL;
            H5Eclear2(H5E_DEFAULT);
            if (file)
                rc = err_set(err, "%s: " NOT_CONTAINED " (%s: %s%s%s to %s:%s)", in->path, name,
                             link_kind(li.type), strcmp(pre, name) ? " at " : "",
                             strcmp(pre, name) ? pre : "", file, path);
            else
                rc = err_set(err, "%s: " NOT_CONTAINED " (%s: %s%s%s)", in->path, name,
                             link_kind(li.type), strcmp(pre, name) ? " at " : "",
                             strcmp(pre, name) ? pre : "");
        }
        free(val);
    }
    free(pre);
    return rc;
}

/* With the lock held: the links of the root group, external or
 * user-defined ones refused (H5Literate reads the links without following
 * them). */
typedef struct RootLinks {
    char bad[256];
    H5L_type_t type;
} RootLinks;

static herr_t root_link_cb(hid_t g, const char *name, const H5L_info_t *li, void *arg) {
    RootLinks *r = arg;
    (void)g;
    if (li->type == H5L_TYPE_HARD || li->type == H5L_TYPE_SOFT) return 0;
    snprintf(r->bad, sizeof r->bad, "%s", name);
    r->type = li->type;
    return 1;
}

/* With the lock held: dataset `name` (d, its type t, space s, creation
 * properties p) is consistent and fits the file. Dimensions at most their
 * maxima; integers of 1, 2, 4 or 8 bytes; chunks of the dataset's rank,
 * each dimension 1 .. its fixed maximum (HDF5's own rule when it creates
 * one); columns below 2^31; and no more values than the file's bytes can
 * hold: one byte each without a filter, DEFLATE_MAX_RATIO with deflate
 * (and shuffle or a checksum); other filters, external storage and virtual
 * layouts were refused before (foreign_check, in open_dset). Every chunk of a masked-LM file is
 * stored, so a dataset that claims more is damaged, and reading it would allocate and walk what is
 * not there. Without filters the data is stored raw: a contiguous dataset's storage is all its
 * bytes (or none yet), a chunked one's a whole number of chunks; a record of fewer bytes would make
 * the library copy past the end of what it read. Returns 0, or -1 with err. */
static int dset_check(H5In *in, const char *name, hid_t d, hid_t t, hid_t s, hid_t p, Err *err) {
    const char *path = in->path;
    int rank = H5Sget_simple_extent_ndims(s);
    hsize_t dims[H5S_MAX_RANK], maxd[H5S_MAX_RANK];
    if (rank < 0 || H5Sget_simple_extent_dims(s, dims, maxd) < 0)
        return err_set(err, "%s: damaged HDF5 file (%s: unreadable dataspace)", path, name);
    for (int i = 0; i < rank; i++) {
        if (maxd[i] != H5S_UNLIMITED && dims[i] > maxd[i])
            return err_set(err,
                           "%s: damaged HDF5 file (%s: dimension %d is %llu, its maximum %llu)",
                           path, name, i, (unsigned long long)dims[i], (unsigned long long)maxd[i]);
        if (i > 0 && dims[i] > INT32_MAX)
            return err_set(err, "%s: %s: %llu columns (more than %d)", path, name,
                           (unsigned long long)dims[i], INT32_MAX);
    }
    size_t es = H5Tget_size(t);
    if (H5Tget_class(t) == H5T_INTEGER && es != 1 && es != 2 && es != 4 && es != 8)
        return err_set(err, "%s: damaged HDF5 file (%s: %zu-byte integers)", path, name, es);
    int nf = H5Pget_nfilters(p), deflate = 0;
    for (int i = 0; i < nf; i++)
        if (nth_filter(p, i, NULL, NULL, 0) == H5Z_FILTER_DEFLATE) deflate = 1;
    double nchunks = 1, values = 1, chunk_values = 1;
    for (int i = 0; i < rank; i++)
        values *= (double)dims[i];
    H5D_layout_t layout = H5Pget_layout(p);
    if (layout == H5D_CHUNKED) {
        hsize_t cd[H5S_MAX_RANK];
        int cr = H5Pget_chunk(p, H5S_MAX_RANK, cd);
        if (cr != rank)
            return err_set(err,
                           "%s: damaged HDF5 file (%s: chunks of rank %d in a dataset of rank %d)",
                           path, name, cr, rank);
        for (int i = 0; i < rank; i++) {
            /* a fixed dimension of 0 has no chunks: h5py gives an empty
             * array chunks of its guess all the same */
            if (cd[i] == 0 || (maxd[i] != H5S_UNLIMITED && maxd[i] != 0 && cd[i] > maxd[i]))
                return err_set(err,
                               "%s: damaged HDF5 file (%s: chunk dimension %d is %llu, the "
                               "dataset's at most %llu)",
                               path, name, i, (unsigned long long)cd[i],
                               (unsigned long long)(maxd[i] == H5S_UNLIMITED ? dims[i] : maxd[i]));
            nchunks *= ceil((double)dims[i] / (double)cd[i]);
            chunk_values *= (double)cd[i];
        }
    }
    if (nf == 0 && (layout == H5D_CHUNKED || layout == H5D_CONTIGUOUS)) {
        double stored = (double)H5Dget_storage_size(d),
               unit = (layout == H5D_CHUNKED ? chunk_values : values) * (double)es;
        double units = layout == H5D_CHUNKED ? nchunks : 1;
        if (stored > 0 && (fmod(stored, unit) != 0 || stored > units * unit))
            return err_set(err,
                           "%s: damaged HDF5 file (%s: %.0f bytes stored for %.0f %s of %.0f "
                           "bytes)",
                           path, name, stored, units,
                           layout != H5D_CHUNKED ? "block"
                           : units == 1          ? "chunk"
                                                 : "chunks",
                           unit);
    }
    double bytes = values * (double)es, room = (double)in->size;
    if (bytes > room * (deflate ? DEFLATE_MAX_RATIO : 1)) {
        char shape[128];
        int k = 0;
        for (int i = 1; i < rank && k < (int)sizeof shape - 24; i++)
            k += snprintf(shape + k, sizeof shape - (size_t)k, "%s%llu", i > 1 ? " x " : " of ",
                          (unsigned long long)dims[i]);
        shape[k] = '\0';
        return err_set(
            err, "%s: dataset %s claims %llu rows%s (more than a file of %llu bytes can hold)",
            path, name, (unsigned long long)(rank ? dims[0] : 1), shape,
            (unsigned long long)in->size);
    }
    return 0;
}

int h5in_open(H5In **in, const char *path, Err *err) {
    struct stat st;
    if (stat(path, &st) != 0) return err_set(err, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) return err_set(err, "%s: is a directory", path);
    if (!S_ISREG(st.st_mode)) /* HDF5 seeks: a pipe would be read once, by the probe */
        return err_set(err, "%s: not a regular file (HDF5 files must be seekable)", path);
    if (access(path, R_OK) != 0) return err_set(err, "%s: %s", path, strerror(errno));
    if (input_note(path, err)) return -1; /* never replaced by an output of this run */
    int sb = superblock_check(path, (uint64_t)st.st_size, err);
    if (sb) return sb;
    RLOCK(path);
    ErrWalk ew;
    htri_t is = H5Fis_hdf5(path);
    if (is <= 0) {
        H5Eclear2(H5E_DEFAULT);
        RUNLOCK();
        return err_set(err, "%s: not an HDF5 file", path);
    }
    /* the POSIX driver whatever the environment says (HDF5_DRIVER) */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_sec2(fapl);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    if (f < 0) {
        err_set(err, "%s: cannot open: %s", path, h5_errmsg(&ew));
        RUNLOCK();
        return -1;
    }
    RootLinks rl = {"", H5L_TYPE_HARD};
    hsize_t idx = 0;
    if (H5Literate(f, H5_INDEX_NAME, H5_ITER_INC, &idx, root_link_cb, &rl) > 0) {
        H5In tmp = {f, (char *)path, (uint64_t)st.st_size};
        if (links_inside(&tmp, rl.bad, rl.bad, 0, err) == 0)
            err_set(err, "%s: " NOT_CONTAINED " (%s: %s)", path, rl.bad, link_kind(rl.type));
        H5Fclose(f);
        RUNLOCK();
        return -2;
    }
    H5Eclear2(H5E_DEFAULT);
    RUNLOCK();
    H5In *h = xcalloc(1, sizeof *h);
    h->file = f;
    h->path = xstrdup(path);
    h->size = (uint64_t)st.st_size;
    *in = h;
    return 0;
}

typedef struct NameList {
    char **v;
    size_t n, cap;
} NameList;

static herr_t list_cb(hid_t g, const char *name, const H5L_info_t *li, void *arg) {
    NameList *l = arg;
    if (l->n + 1 >= l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = xstrdup(name);
    (void)g, (void)li;
    return 0;
}

int h5in_list(H5In *in, char ***names, Err *err) {
    NameList l = {0};
    RLOCK(in->path);
    ErrWalk ew;
    hsize_t idx = 0;
    herr_t r = H5Literate(in->file, H5_INDEX_NAME, H5_ITER_INC, &idx, list_cb, &l);
    if (r < 0) err_set(err, "%s: reading the root group: %s", in->path, h5_errmsg(&ew));
    RUNLOCK();
    /* one block: the pointer array, then the strings */
    size_t total = (l.n + 1) * sizeof(char *);
    for (size_t i = 0; i < l.n; i++)
        total += strlen(l.v[i]) + 1;
    char **out = xmalloc(total);
    char *s = (char *)(out + l.n + 1);
    for (size_t i = 0; i < l.n; i++) {
        size_t len = strlen(l.v[i]) + 1;
        memcpy(s, l.v[i], len);
        out[i] = s;
        s += len;
        free(l.v[i]);
    }
    out[l.n] = NULL;
    free(l.v);
    if (r < 0) {
        free(out);
        return -1;
    }
    *names = out;
    return (int)l.n;
}

/* Open dataset `name` with the lock held and check it (dset_check): the
 * dataset (>= 0) with *t, *s, *p its type, dataspace and creation
 * properties (the caller closes all four); -2 when there is no link of
 * that name; -1 with err otherwise. */
static hid_t open_dset(H5In *in, const char *name, hid_t *t, hid_t *s, hid_t *p, Err *err) {
    ErrWalk ew;
    *t = *s = *p = -1;
    htri_t ex = H5Lexists(in->file, name, lapl_inside);
    if (ex == 0) return -2;
    if (ex < 0)
        return err_set(err, "%s: damaged HDF5 file (looking up %s: %s)", in->path, name,
                       h5_errmsg(&ew));
    if (links_inside(in, name, name, 0, err)) return -1;
    hid_t d = H5Dopen2(in->file, name, dapl_inside);
    if (d < 0) return err_set(err, "%s: %s: not a dataset (%s)", in->path, name, h5_errmsg(&ew));
    /* the creation properties first: the dataspace of a virtual dataset
     * with unlimited mappings is found by opening its source files */
    int rc = 0;
    *p = H5Dget_create_plist(d);
    if (*p < 0)
        rc = err_set(err, "%s: damaged HDF5 file (%s: %s)", in->path, name, h5_errmsg(&ew));
    else if (foreign_check(in, name, *p, err))
        rc = -1;
    else if ((*t = H5Dget_type(d)) < 0 || (*s = H5Dget_space(d)) < 0)
        rc = err_set(err, "%s: damaged HDF5 file (%s: %s)", in->path, name, h5_errmsg(&ew));
    else
        rc = dset_check(in, name, d, *t, *s, *p, err);
    if (rc == 0) return d;
    if (*p >= 0) H5Pclose(*p);
    if (*s >= 0) H5Sclose(*s);
    if (*t >= 0) H5Tclose(*t);
    H5Dclose(d);
    *t = *s = *p = -1;
    H5Eclear2(H5E_DEFAULT);
    return -1;
}

int h5in_info(H5In *in, const char *name, H5Info *info, Err *err) {
    memset(info, 0, sizeof *info);
    RLOCK(in->path);
    hid_t t, s, p;
    hid_t d = open_dset(in, name, &t, &s, &p, err);
    if (d < 0) {
        RUNLOCK();
        return d == -2 ? 0 : -1;
    }
    info->is_integer = H5Tget_class(t) == H5T_INTEGER;
    info->elem_size = (int)H5Tget_size(t);
    info->is_signed = info->is_integer && H5Tget_sign(t) == H5T_SGN_2;
    info->little_endian = H5Tget_order(t) == H5T_ORDER_LE;
    int rank = H5Sget_simple_extent_ndims(s);
    hsize_t dims[H5S_MAX_RANK];
    H5Sget_simple_extent_dims(s, dims, NULL);
    info->rank = rank < 0 ? 0 : rank;
    for (int i = 0; i < info->rank && i < 4; i++)
        info->dims[i] = dims[i];
    info->deflate_level = -1;
    if (H5Pget_layout(p) == H5D_CHUNKED) {
        info->chunked = 1;
        hsize_t cd[H5S_MAX_RANK];
        int cr = H5Pget_chunk(p, H5S_MAX_RANK, cd);
        for (int i = 0; i < cr && i < 4; i++)
            info->chunk[i] = cd[i];
    }
    int nf = H5Pget_nfilters(p);
    for (int i = 0; i < nf; i++) {
        int level;
        H5Z_filter_t f = nth_filter(p, i, &level, NULL, 0);
        if (f == H5Z_FILTER_DEFLATE)
            info->deflate_level = level;
        else
            info->other_filters++;
    }
    H5Pclose(p);
    H5Sclose(s);
    H5Tclose(t);
    H5Dclose(d);
    RUNLOCK();
    return 1;
}

int h5in_read_rows(H5In *in, const char *name, uint64_t row0, uint64_t nrows, int32_t *out,
                   Err *err) {
    RLOCK(in->path);
    ErrWalk ew;
    int rc = 0;
    hid_t fs, t, p;
    hid_t d = open_dset(in, name, &t, &fs, &p, err);
    if (d < 0) {
        if (d == -2) err_set(err, "%s: %s: no such dataset", in->path, name);
        RUNLOCK();
        return -1;
    }
    H5Pclose(p);
    hid_t ms = -1;
    int rank = H5Sget_simple_extent_ndims(fs);
    hsize_t dims[H5S_MAX_RANK] = {0};
    H5Sget_simple_extent_dims(fs, dims, NULL);
    if (rank < 1 || rank > 2 || H5Tget_class(t) != H5T_INTEGER) {
        rc = err_set(err, "%s: %s: not a 1-D or 2-D integer dataset", in->path, name);
        goto done;
    }
    if (row0 > dims[0] || nrows > dims[0] - row0) {
        rc = err_set(err, "%s: %s: rows %llu..%llu of %llu", in->path, name,
                     (unsigned long long)row0, (unsigned long long)(row0 + nrows),
                     (unsigned long long)dims[0]);
        goto done;
    }
    if (nrows == 0) goto done;
    hsize_t start[2] = {row0, 0}, count[2] = {nrows, rank == 2 ? dims[1] : 1};
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    ms = H5Screate_simple(rank, count, NULL);
    size_t n = (size_t)(count[0] * count[1]);
    int wide = H5Tget_size(t) > 4 || (H5Tget_size(t) == 4 && H5Tget_sign(t) != H5T_SGN_2);
    if (!wide) {
        if (H5Dread(d, H5T_NATIVE_INT32, ms, fs, H5P_DEFAULT, out) < 0)
            rc = err_set(err, "%s: %s: read error (corrupt chunk?): %s", in->path, name,
                         h5_errmsg(&ew));
    } else { /* read wide, then check the range */
        int64_t *tmp = xmalloc(n * sizeof *tmp);
        if (H5Dread(d, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, tmp) < 0) {
            rc = err_set(err, "%s: %s: read error (corrupt chunk?): %s", in->path, name,
                         h5_errmsg(&ew));
        } else {
            for (size_t i = 0; i < n && rc == 0; i++) {
                if (tmp[i] < INT32_MIN || tmp[i] > INT32_MAX)
                    rc =
                        err_set(err, "%s: %s: row %llu: value %lld does not fit 32 bits", in->path,
                                name, (unsigned long long)(row0 + i / count[1]), (long long)tmp[i]);
                out[i] = (int32_t)tmp[i];
            }
        }
        free(tmp);
    }
done:
    if (ms >= 0) H5Sclose(ms);
    H5Tclose(t);
    H5Sclose(fs);
    H5Dclose(d);
    RUNLOCK();
    return rc;
}

void h5in_close(H5In *in) {
    if (!in) return;
    RLOCK(in->path);
    H5Fclose(in->file);
    RUNLOCK();
    free(in->path);
    free(in);
}
