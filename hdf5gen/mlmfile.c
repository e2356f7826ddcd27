/* mlmfile.c - fill callbacks from an InstSet into the six padded datasets
 * (see mlmfile.h); the HDF5 side is h5file.c. */
#include "hdf5gen/mlmfile.h"

#include <string.h>

#include "hdf5gen/h5file.h"

typedef struct Ctx {
    const InstSet *s;
    uint64_t L, P;
} Ctx;

static void fill_ids(void *arg, uint64_t r0, uint64_t n, void *buf) {
    const Ctx *c = arg;
    int32_t *out = buf;
    for (uint64_t r = 0; r < n; r++) {
        InstView v;
        inst_row(c->s, r0 + r, &v, out + r * c->L, NULL, NULL);
    }
}

static void fill_mask(void *arg, uint64_t r0, uint64_t n, void *buf) {
    const Ctx *c = arg;
    int8_t *out = buf;
    for (uint64_t r = 0; r < n; r++) {
        InstView v;
        inst_row(c->s, r0 + r, &v, NULL, NULL, NULL);
        memset(out + r * c->L, 1, v.len);
    }
}

static void fill_seg(void *arg, uint64_t r0, uint64_t n, void *buf) {
    const Ctx *c = arg;
    int8_t *out = buf;
    for (uint64_t r = 0; r < n; r++) {
        InstView v;
        inst_row(c->s, r0 + r, &v, NULL, NULL, NULL);
        memset(out + r * c->L + v.seg0, 1, v.len - v.seg0);
    }
}

static void fill_pos(void *arg, uint64_t r0, uint64_t n, void *buf) {
    const Ctx *c = arg;
    int32_t *out = buf;
    for (uint64_t r = 0; r < n; r++) {
        InstView v;
        inst_row(c->s, r0 + r, &v, NULL, out + r * c->P, NULL);
    }
}

static void fill_lab(void *arg, uint64_t r0, uint64_t n, void *buf) {
    const Ctx *c = arg;
    int32_t *out = buf;
    for (uint64_t r = 0; r < n; r++) {
        InstView v;
        inst_row(c->s, r0 + r, &v, NULL, NULL, out + r * c->P);
    }
}

static void fill_nsp(void *arg, uint64_t r0, uint64_t n, void *buf) {
    const Ctx *c = arg;
    int8_t *out = buf;
    for (uint64_t r = 0; r < n; r++) {
        InstView v;
        inst_row(c->s, r0 + r, &v, NULL, NULL, NULL);
        out[r] = (int8_t)v.next_sentence_label;
    }
}

int mlmfile_write(const InstSet *s, const MlmFileOpts *o, const char *path, uint64_t *bytes,
                  Err *err) {
    if (s->n == 0) return err_set(err, "%s: no instances to write", path);
    Ctx c = {s, (uint64_t)o->max_seq_length, (uint64_t)o->max_predictions};
    for (size_t r = 0; r < s->n; r++) { /* the padding arithmetic relies on these */
        InstView v;
        inst_row(s, r, &v, NULL, NULL, NULL);
        if (v.len > c.L || v.nmask > c.P || v.seg0 > v.len)
            return err_set(err,
                           "%s: instance %u does not fit max_seq_length %d / max_predictions %d",
                           path, (unsigned)s->order[r], o->max_seq_length, o->max_predictions);
    }
    /* a dataset of width 0 (P = 0) still has one column of zeros: h5py cannot chunk width 0 */
    uint64_t P = c.P ? c.P : 1;
    H5Dataset d[6] = {
        {"input_ids", 4, 2, s->n, c.L, fill_ids, &c},
        {"input_mask", 1, 2, s->n, c.L, fill_mask, &c},
        {"segment_ids", 1, 2, s->n, c.L, fill_seg, &c},
        {"masked_lm_positions", 4, 2, s->n, P, fill_pos, &c},
        {"masked_lm_ids", 4, 2, s->n, P, fill_lab, &c},
        {"next_sentence_labels", 1, 1, s->n, 1, fill_nsp, &c},
    };
    c.P = P;
    H5Out *h;
    if (h5out_create(&h, path, o->force, err)) return -1;
    if (h5out_write_all(h, d, 6, o->level, o->threads, err)) {
        h5out_abort(h);
        return -1;
    }
    uint64_t b = h5out_bytes(h);
    if (h5out_close(h, err)) return -1;
    if (bytes) *bytes = b;
    return 0;
}
