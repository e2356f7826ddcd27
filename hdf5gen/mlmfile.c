/* mlmfile.c - fill callbacks from an InstSet into the six padded datasets
 * (see mlmfile.h); the HDF5 side is h5file.c. */
#include "hdf5gen/mlmfile.h"

#include <string.h>

#include "hdf5gen/h5file.h"

typedef struct Ctx {
    InstSet *s;
    int what;
} Ctx;

static void fill(void *arg, uint64_t r0, uint64_t n, void *buf) {
    const Ctx *c = arg;
    size_t width = c->what == INST_NSP ? 1
                   : c->what == INST_POS || c->what == INST_LAB
                       ? (size_t)(c->s->row_p ? c->s->row_p : 1)
                       : (size_t)c->s->row_l;
    inst_rows_fill(c->s, c->what, r0, n, width, buf);
}

static void strip(void *arg, uint64_t r0, uint64_t n, uint64_t c0, uint64_t nc, uint64_t width,
                  void *buf) {
    const Ctx *c = arg;
    inst_rows_strip(c->s, c->what, r0, n, c0, nc, (size_t)width, buf);
}

int mlmfile_write(InstSet *s, const MlmFileOpts *o, const char *path, uint64_t *bytes, Err *err) {
    if (s->n == 0) return err_set(err, "%s: no instances to write", path);
    /* a dataset of width 0 (P = 0) still has one column of zeros: h5py cannot chunk width 0 */
    uint64_t L = (uint64_t)o->max_seq_length,
             P = o->max_predictions ? (uint64_t)o->max_predictions : 1;
    /* spilled: the L-wide datasets are written a chunk at a time (h5py's
     * chunks grow taller with the rows; a band of them, all columns, would
     * grow the memory with the shard), input_ids kept by chunk in the row
     * file */
    H5StripFn by_chunk = s->spilled ? strip : NULL;
    if (s->spilled) {
        uint64_t shape[2] = {s->n, L}, ch[2];
        h5_guess_chunk(2, shape, 4, ch); /* input_ids' chunks, as the writer will cut them */
        inst_rows_layout(s, ch[0], ch[1]);
    }
    if (inst_rows_prepare(s, o->max_seq_length, o->max_predictions, path, err)) return -1;
    Ctx c[6];
    for (int i = 0; i < 6; i++)
        c[i] = (Ctx){s, i};
    H5Dataset d[6] = {
        {"input_ids", 4, 2, s->n, L, fill, &c[INST_IDS], by_chunk},
        {"input_mask", 1, 2, s->n, L, fill, &c[INST_MASK], by_chunk},
        {"segment_ids", 1, 2, s->n, L, fill, &c[INST_SEG], by_chunk},
        {"masked_lm_positions", 4, 2, s->n, P, fill, &c[INST_POS], NULL},
        {"masked_lm_ids", 4, 2, s->n, P, fill, &c[INST_LAB], NULL},
        {"next_sentence_labels", 1, 1, s->n, 1, fill, &c[INST_NSP], NULL},
    };
    H5Out *h;
    if (h5out_create(&h, path, o->force, err)) return -1;
    if (h5out_write_all(h, d, 6, o->level, o->threads, err) ||
        (s->spilled && spill_failed(&s->rowf, err))) {
        h5out_abort(h);
        return -1;
    }
    uint64_t b = h5out_bytes(h);
    if (h5out_close(h, err)) return -1;
    if (bytes) *bytes = b;
    return 0;
}
