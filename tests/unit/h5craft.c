/* h5craft.c - test driver: HDF5 files of given layouts, written with the
 * HDF5 library the project itself links (Debian's libhdf5), so the CLI
 * tests never depend on a Python package's HDF5 version.
 *
 *   make build/tests/h5craft
 *   build/tests/h5craft MODE SRC OUT [ARG...]
 *
 * SRC is a masked-LM file (hdf5gen's); OUT gets its six datasets, each
 * read whole and written again with deflate, in the layout MODE names:
 *
 *   copy [ub N] [v3]    valid variants: a user block of N bytes, superblock
 *                       version 3 (libver latest, as h5py's libver="latest")
 *   empty               0 rows, the same columns, chunks of 128 rows (as
 *                       h5py writes an empty array with compression)
 *   huge                the shapes claim 2^40 rows, no chunk written
 *   soft                input_ids a soft link to /inner/input_ids (a hard
 *                       link in the same file: self-contained)
 *   extstore FILE       input_ids contiguous, its raw data "stored" in FILE
 *                       (H5Pset_external)
 *   elink FILE          input_ids an external link to FILE:/input_ids
 *   softelink FILE      input_ids a soft link to g/ext/input_ids, g a
 *                       group, g/ext an external link to FILE:/
 *   extra FILE          all six datasets in the file, plus a root link
 *                       "extra" that is an external link to FILE:/
 *   vds FILE            input_ids a virtual dataset mapping FILE:/input_ids
 *   vdsunlim FILE       the same with unlimited rows (its extent is found by
 *                       opening FILE)
 *   filter ID NAME      every dataset through filter ID named NAME (a
 *                       pass-through registered here: LZF is 32000)
 *
 * Exit 0, or 1 with a message on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

static const char *const names[6] = {"input_ids",     "input_mask",
                                     "segment_ids",   "masked_lm_positions",
                                     "masked_lm_ids", "next_sentence_labels"};

typedef struct Ds {
    hid_t type; /* the file's type, copied */
    int rank;
    hsize_t dims[2];
    void *data;
} Ds;

static void fail(const char *what) {
    fprintf(stderr, "h5craft: %s failed\n", what);
    exit(1);
}

static void load(const char *src, Ds *ds) {
    hid_t f = H5Fopen(src, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) fail("opening the source");
    for (int i = 0; i < 6; i++) {
        hid_t d = H5Dopen2(f, names[i], H5P_DEFAULT);
        if (d < 0) fail(names[i]);
        hid_t s = H5Dget_space(d);
        ds[i].type = H5Tcopy(H5Dget_type(d));
        ds[i].rank = H5Sget_simple_extent_dims(s, ds[i].dims, NULL);
        hsize_t n = ds[i].dims[0] * (ds[i].rank == 2 ? ds[i].dims[1] : 1);
        ds[i].data = malloc(n * H5Tget_size(ds[i].type) + 1);
        if (H5Dread(d, ds[i].type, H5S_ALL, H5S_ALL, H5P_DEFAULT, ds[i].data) < 0)
            fail("reading the source");
        H5Sclose(s);
        H5Dclose(d);
    }
    H5Fclose(f);
}

/* A pass-through filter registered under any id, so a file can carry a
 * filter the programs do not have (LZF, a plugin's). */
static size_t pass(unsigned flags, size_t ncd, const unsigned cd[], size_t nbytes, size_t *bufsz,
                   void **buf) {
    (void)flags, (void)ncd, (void)cd, (void)bufsz, (void)buf;
    return nbytes;
}

/* Dataset `name` of ds in loc: chunked, with deflate (and filter `fid`
 * when > 0); rows overrides the row count (no data is written then). */
static void put(hid_t loc, const char *name, const Ds *ds, int fid, hsize_t rows) {
    hsize_t dims[2] = {rows ? rows : ds->dims[0], ds->rank == 2 ? ds->dims[1] : 1};
    hid_t s = H5Screate_simple(ds->rank, dims, NULL);
    hid_t p = H5Pcreate(H5P_DATASET_CREATE);
    /* no rows: chunks of 128 rows all the same, as h5py makes them */
    hsize_t c[2] = {dims[0] == 0 ? 128 : dims[0] < 64 ? dims[0] : 64, dims[1]};
    H5Pset_chunk(p, ds->rank, c);
    if (fid > 0) H5Pset_filter(p, (H5Z_filter_t)fid, H5Z_FLAG_MANDATORY, 0, NULL);
    H5Pset_deflate(p, 4);
    hid_t d = H5Dcreate2(loc, name, ds->type, s, H5P_DEFAULT, p, H5P_DEFAULT);
    if (d < 0) fail(name);
    if (!rows && dims[0] && H5Dwrite(d, ds->type, H5S_ALL, H5S_ALL, H5P_DEFAULT, ds->data) < 0)
        fail("writing");
    H5Dclose(d);
    H5Pclose(p);
    H5Sclose(s);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: h5craft MODE SRC OUT [ARG...] (see the header comment)\n");
        return 1;
    }
    const char *mode = argv[1], *src = argv[2], *out = argv[3], *arg = argc > 4 ? argv[4] : NULL;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    Ds ds[6];
    load(src, ds);
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), fapl = H5Pcreate(H5P_FILE_ACCESS);
    int fid = 0;
    if (!strcmp(mode, "copy"))
        for (int i = 4; i < argc; i++) {
            if (!strcmp(argv[i], "ub") && i + 1 < argc)
                H5Pset_userblock(fcpl, (hsize_t)atoll(argv[++i]));
            else if (!strcmp(argv[i], "v3"))
                H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
            else
                fail(argv[i]);
        }
    if (!strcmp(mode, "filter")) {
        if (argc < 6) fail("filter ID NAME: arguments");
        fid = atoi(argv[4]);
        H5Z_class2_t cls = {H5Z_CLASS_T_VERS, (H5Z_filter_t)fid, 1, 1, argv[5], NULL, NULL, pass};
        if (H5Zregister(&cls) < 0) fail("H5Zregister");
    }
    hid_t f = H5Fcreate(out, H5F_ACC_TRUNC, fcpl, fapl);
    if (f < 0) fail("creating the output");
    int first = 0; /* the datasets from here on are written plainly */
    if (!strcmp(mode, "soft")) {
        hid_t g = H5Gcreate2(f, "inner", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        put(g, "input_ids", &ds[0], 0, 0);
        H5Gclose(g);
        H5Lcreate_soft("/inner/input_ids", f, "input_ids", H5P_DEFAULT, H5P_DEFAULT);
        first = 1;
    } else if (!strcmp(mode, "extstore") && arg) {
        hsize_t dims[2] = {ds[0].dims[0], ds[0].dims[1]};
        hid_t s = H5Screate_simple(2, dims, NULL), p = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_external(p, arg, 0, H5F_UNLIMITED);
        hid_t d = H5Dcreate2(f, "input_ids", ds[0].type, s, H5P_DEFAULT, p, H5P_DEFAULT);
        if (d < 0) fail("the external-storage dataset");
        H5Dclose(d), H5Pclose(p), H5Sclose(s);
        first = 1;
    } else if (!strcmp(mode, "elink") && arg) {
        H5Lcreate_external(arg, "/input_ids", f, "input_ids", H5P_DEFAULT, H5P_DEFAULT);
        first = 1;
    } else if (!strcmp(mode, "softelink") && arg) {
        hid_t g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Lcreate_external(arg, "/", g, "ext", H5P_DEFAULT, H5P_DEFAULT);
        H5Gclose(g);
        H5Lcreate_soft("g/ext/input_ids", f, "input_ids", H5P_DEFAULT, H5P_DEFAULT);
        first = 1;
    } else if (!strcmp(mode, "extra") && arg) {
        H5Lcreate_external(arg, "/", f, "extra", H5P_DEFAULT, H5P_DEFAULT);
    } else if ((!strcmp(mode, "vds") || !strcmp(mode, "vdsunlim")) && arg) {
        hsize_t dims[2] = {ds[0].dims[0], ds[0].dims[1]};
        hsize_t maxd[2] = {H5S_UNLIMITED, ds[0].dims[1]};
        int unlim = !strcmp(mode, "vdsunlim"); /* rows as many as the source has */
        hid_t s = H5Screate_simple(2, dims, unlim ? maxd : NULL), p = H5Pcreate(H5P_DATASET_CREATE);
        if (unlim) {
            hsize_t start[2] = {0, 0}, count[2] = {H5S_UNLIMITED, 1}, block[2] = {1, dims[1]};
            H5Sselect_hyperslab(s, H5S_SELECT_SET, start, NULL, count, block);
        }
        if (H5Pset_virtual(p, s, arg, "/input_ids", s) < 0) fail("H5Pset_virtual");
        hid_t d = H5Dcreate2(f, "input_ids", ds[0].type, s, H5P_DEFAULT, p, H5P_DEFAULT);
        if (d < 0) fail("the virtual dataset");
        H5Dclose(d), H5Pclose(p), H5Sclose(s);
        first = 1;
    } else if (strcmp(mode, "copy") && strcmp(mode, "empty") && strcmp(mode, "huge") &&
               strcmp(mode, "filter")) {
        fail(mode);
    }
    int empty = !strcmp(mode, "empty"), huge = !strcmp(mode, "huge");
    for (int i = first; i < 6; i++) {
        Ds e = ds[i];
        if (empty) e.dims[0] = 0;
        put(f, names[i], &e, fid, huge ? (hsize_t)1 << 40 : 0);
    }
    if (H5Fclose(f) < 0) fail("closing the output");
    return 0;
}
