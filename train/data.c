/* data.c - training batches from masked-LM HDF5 files (see data.h).
 *
 * While batches come from one file, a thread reads and checks the file
 * that comes next (the next in this epoch's order, or the first of the
 * next epoch's), so that moving to it does not stall the trainer; the
 * reading is a function of the options and the position only, so the
 * batches are the same bytes either way. */
#include "train/data.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "hdf5gen/h5file.h"
#include "common/mlm.h"
#include "common/pyrandom.h"
#include "common/rng.h"

/* a file read and checked, with its visiting order */
typedef struct Loaded {
    int64_t epoch, step; /* its position (-1: nothing loaded) */
    const char *file;
    int64_t rows;
    int L, P;
    int32_t *ids, *mask, *seg, *mpos, *mids, *nsp;
    int dynamic;     /* this file gets masked here */
    int64_t *order;  /* row visiting order (with length bins: batch by batch) */
    int64_t *bstart; /* length bins: batch i is order[bstart[i] .. bstart[i + 1]) */
    int *blen;       /* ... cut to blen[i] tokens */
    int64_t nb;      /* ... of nb batches */
} Loaded;

/* the reading of the next file on its thread */
typedef struct Prefetch {
    const DataOpts *o;
    int in_order;
    Loaded f; /* f.epoch, f.step, f.file: what to read */
    int rc;
    Err err;
    pthread_t th;
    int running;
} Prefetch;

struct Data {
    DataOpts o;
    char **sorted; /* the training files, sorted */
    int nfiles;
    int *perm; /* this epoch's shuffle of sorted */
    int64_t perm_epoch;
    DataState at; /* next batch */
    Loaded cur;   /* the file batches come from */
    Prefetch next;
    int in_order; /* data_open_file: rows in file order */
    int64_t tok_done, tok_full;
    /* the batch handed out */
    int32_t *b_ids, *b_mask, *b_seg, *b_mpos, *b_mids, *b_nsp;
    size_t bcap;
};

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void loaded_free(Loaded *f) {
    free(f->ids), free(f->mask), free(f->seg), free(f->mpos), free(f->mids), free(f->nsp),
        free(f->order);
    free(f->bstart), free(f->blen);
    *f = (Loaded){.epoch = -1, .step = -1};
}

static void shuffle_files(Data *d, int64_t epoch) {
    if (d->perm_epoch == epoch) return;
    PyRandom r;
    pyrandom_seed(&r, d->o.seed + (uint64_t)epoch); /* random.Random(seed + epoch).shuffle(files) */
    for (int i = 0; i < d->nfiles; i++)
        d->perm[i] = i;
    pyrandom_shuffle(&r, d->perm, (size_t)d->nfiles, sizeof *d->perm);
    d->perm_epoch = epoch;
}

static const char *file_at(Data *d, int64_t epoch, int64_t f) {
    shuffle_files(d, epoch);
    int64_t F = d->nfiles, W = d->o.world, r = d->o.rank;
    int64_t k = W > F ? (f * W + r + (W % F) * f) % F : (f * W + r) % F;
    return d->sorted[d->perm[k]];
}

/* One dataset of the file into a new int32 array; shape checked against
 * rows (and cols when > 0; *cols set when 0). */
static int read_ds(H5In *in, const char *path, const char *name, int rank, int64_t *rows, int *cols,
                   int32_t **out, Err *err) {
    H5Info info;
    int r = h5in_info(in, name, &info, err);
    if (r < 0) return -1;
    if (r == 0) return err_set(err, "%s: no dataset %s", path, name);
    if (!info.is_integer) return err_set(err, "%s: %s: not an integer dataset", path, name);
    if (info.rank != rank)
        return err_set(err, "%s: %s: %d dimension%s expected, not %d", path, name, rank,
                       rank == 1 ? "" : "s", info.rank);
    if (*rows >= 0 && (int64_t)info.dims[0] != *rows)
        return err_set(err, "%s: %s: %llu rows, input_ids has %lld", path, name,
                       (unsigned long long)info.dims[0], (long long)*rows);
    *rows = (int64_t)info.dims[0];
    int c = rank == 2 ? (int)info.dims[1] : 1;
    if (rank == 2 && *cols > 0 && c != *cols)
        return err_set(err, "%s: %s: %d columns, expected %d", path, name, c, *cols);
    if (rank == 2) *cols = c;
    *out = xmalloc((size_t)(*rows ? *rows : 1) * (size_t)c * sizeof **out);
    if (*rows && h5in_read_rows(in, name, 0, (uint64_t)*rows, *out, err)) return -1;
    return 0;
}

/* one past row r's last token or masked position */
static int row_length(const Loaded *d, int64_t r) {
    int n = 0;
    for (int j = d->L - 1; j >= 0; j--)
        if (d->mask[r * d->L + j]) {
            n = j + 1;
            break;
        }
    for (int k = 0; k < d->P && d->mpos[r * d->P + k]; k++)
        if (d->mpos[r * d->P + k] + 1 > n) n = d->mpos[r * d->P + k] + 1;
    return n;
}

/* close bin `bin`'s queue (q, n rows) as batch d->nb: its rows go to
 * o2[*k ..], its length is the bin's bound */
static void close_bin(Loaded *d, int bin_size, int bin, const int64_t *q, int *n, int64_t *o2,
                      int64_t *k) {
    int len = (bin + 1) * bin_size;
    d->bstart[d->nb] = *k;
    d->blen[d->nb++] = len > d->L ? d->L : len < 2 ? 2 : len;
    memcpy(o2 + *k, q, (size_t)*n * sizeof *o2);
    *k += *n, *n = 0;
}

/* the length-bin schedule of the loaded file (data.h): order rearranged
 * batch by batch, bstart / blen / nb */
static void make_bins(Loaded *d, const DataOpts *o) {
    int N = o->bin_size, MB = o->micro_batch, nbins = (d->L + N - 1) / N;
    int64_t *q = xmalloc((size_t)nbins * MB * sizeof *q),
            *o2 = xmalloc((size_t)d->rows * sizeof *o2), k = 0;
    int *qn = xcalloc((size_t)nbins, sizeof *qn);
    d->bstart = xmalloc(((size_t)d->rows + 1) * sizeof *d->bstart);
    d->blen = xmalloc((size_t)d->rows * sizeof *d->blen);
    d->nb = 0;
    for (int64_t i = 0; i < d->rows; i++) {
        int64_t r = d->order[i];
        int len = row_length(d, r), bin = len > 0 ? (len - 1) / N : 0;
        q[(size_t)bin * MB + qn[bin]++] = r;
        if (qn[bin] == MB) close_bin(d, N, bin, q + (size_t)bin * MB, &qn[bin], o2, &k);
    }
    for (int bin = 0; bin < nbins; bin++)
        if (qn[bin]) close_bin(d, N, bin, q + (size_t)bin * MB, &qn[bin], o2, &k);
    d->bstart[d->nb] = k;
    free(d->order), free(q), free(qn);
    d->order = o2;
}

/* Read and check file f->file (position f->epoch, f->step) into f, with
 * its visiting order: a function of o and the position alone, run on the
 * prefetch thread or the caller's. Returns 0, or -1 with err and f freed. */
static int read_file(const DataOpts *o, int in_order, Loaded *f, Err *err) {
    const char *path = f->file;
    int64_t epoch = f->epoch, step = f->step;
    H5In *in;
    if (h5in_open(&in, path, err)) goto fail;
    int64_t rows = -1;
    int L = 0, L2 = 0, L3 = 0, P = 0, P2 = 0, one = 0;
    int rc = read_ds(in, path, "input_ids", 2, &rows, &L, &f->ids, err);
    if (!rc) L2 = L, rc = read_ds(in, path, "input_mask", 2, &rows, &L2, &f->mask, err);
    if (!rc) L3 = L, rc = read_ds(in, path, "segment_ids", 2, &rows, &L3, &f->seg, err);
    if (!rc) rc = read_ds(in, path, "masked_lm_positions", 2, &rows, &P, &f->mpos, err);
    if (!rc) P2 = P, rc = read_ds(in, path, "masked_lm_ids", 2, &rows, &P2, &f->mids, err);
    if (!rc) rc = read_ds(in, path, "next_sentence_labels", 1, &rows, &one, &f->nsp, err);
    h5in_close(in);
    if (!rc && rows == 0) rc = err_set(err, "%s: no instances", path);
    if (!rc && o->max_seq_length && L != o->max_seq_length)
        rc = err_set(err, "%s: sequences of %d tokens, --max_seq_length is %d", path, L,
                     o->max_seq_length);
    if (!rc && o->max_positions > 0 && L > o->max_positions)
        rc = err_set(
            err, "%s: sequences of %d tokens, more than the config's max_position_embeddings %d",
            path, L, o->max_positions);
    if (rc) goto fail;
    int any_mask = 0;
    int64_t *seen = xcalloc((size_t)L, sizeof *seen); /* row + 1 where a position was listed */
    for (int64_t i = 0; i < rows && !rc; i++) {
        for (int j = 0; j < L; j++) {
            int32_t id = f->ids[i * L + j], s = f->seg[i * L + j];
            if (id < 0 || id >= o->vocab_size)
                rc = err_set(err,
                             "%s: instance %lld: input id %d outside the model's vocabulary (%d)",
                             path, (long long)i, id, o->vocab_size);
            else if (s < 0 || s > 1)
                rc = err_set(err, "%s: instance %lld: segment id %d", path, (long long)i, s);
            if (rc) break;
        }
        if (rc) break;
        for (int k = 0; k < P; k++) {
            int32_t p = f->mpos[i * P + k], id = f->mids[i * P + k];
            if (p == 0) break;
            any_mask = 1;
            if (p < 0 || p >= L) {
                rc = err_set(err, "%s: instance %lld: masked position %d outside the sequence",
                             path, (long long)i, p);
                break;
            }
            if (seen[p] == i + 1) {
                rc = err_set(err, "%s: instance %lld: masked position %d listed twice", path,
                             (long long)i, p);
                break;
            }
            seen[p] = i + 1;
            if (id < 0 || id >= o->vocab_size) {
                rc = err_set(err, "%s: instance %lld: masked label %d outside the vocabulary (%d)",
                             path, (long long)i, id, o->vocab_size);
                break;
            }
        }
        if (!rc && f->nsp[i] != 0 && f->nsp[i] != 1)
            rc = err_set(err, "%s: instance %lld: next_sentence_label %d", path, (long long)i,
                         f->nsp[i]);
    }
    free(seen);
    if (!rc && !any_mask && !o->dynamic_mask)
        rc = err_set(err,
                     "%s: no masked positions (an unmasked file, hdf5gen --no-mask) and dynamic "
                     "masking is off",
                     path);
    if (rc) goto fail;
    f->rows = rows;
    f->L = L;
    f->P = P;
    f->dynamic = !any_mask;
    /* the row order: a seeded Fisher-Yates */
    Rng r;
    rng_seed(&r,
             o->seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(epoch + 1)) ^ ((uint64_t)step << 32));
    f->order = xmalloc((size_t)rows * sizeof *f->order);
    for (int64_t i = 0; i < rows; i++)
        f->order[i] = i;
    for (int64_t i = rows - 1; i > 0 && !in_order; i--) {
        int64_t j = (int64_t)rng_below(&r, (uint64_t)i + 1), t = f->order[i];
        f->order[i] = f->order[j];
        f->order[j] = t;
    }
    if (o->bin_size > 0 && !in_order) make_bins(f, o);
    return 0;
fail:
    loaded_free(f);
    return -1;
}

static void *prefetch_main(void *arg) {
    Prefetch *p = arg;
    p->rc = read_file(p->o, p->in_order, &p->f, &p->err);
    return NULL;
}

/* wait for the prefetch thread, if one runs */
static void prefetch_join(Data *d) {
    if (!d->next.running) return;
    pthread_join(d->next.th, NULL);
    d->next.running = 0;
}

/* start reading the file after position (epoch, step) on the prefetch
 * thread (not with o.no_prefetch, nor where a thread cannot be started:
 * load reads it then) */
static void prefetch_start(Data *d, int64_t epoch, int64_t step) {
    Prefetch *p = &d->next;
    loaded_free(&p->f);
    if (d->o.no_prefetch) return;
    if (++step >= d->nfiles) step = 0, epoch++;
    p->f.epoch = epoch, p->f.step = step, p->f.file = file_at(d, epoch, step);
    p->o = &d->o, p->in_order = d->in_order, p->rc = 0;
    if (pthread_create(&p->th, NULL, prefetch_main, p) == 0)
        p->running = 1;
    else
        p->f.epoch = p->f.step = -1;
}

/* make position (epoch, step)'s file the current one: the prefetched one
 * if that is it, else read here; then prefetch the one after */
static int load(Data *d, int64_t epoch, int64_t step, Err *err) {
    if (d->cur.epoch == epoch && d->cur.step == step) return 0;
    prefetch_join(d);
    loaded_free(&d->cur);
    Prefetch *p = &d->next;
    if (p->f.epoch == epoch && p->f.step == step) {
        if (p->rc) { /* read_file left p->f empty */
            *err = p->err;
            return -1;
        }
        d->cur = p->f;
        p->f = (Loaded){.epoch = -1, .step = -1};
    } else {
        d->cur = (Loaded){.epoch = epoch, .step = step, .file = file_at(d, epoch, step)};
        if (read_file(&d->o, d->in_order, &d->cur, err)) return -1;
    }
    prefetch_start(d, epoch, step);
    return 0;
}

static Data *data_new(const DataOpts *o) {
    Data *d = xcalloc(1, sizeof *d);
    d->o = *o;
    if (d->o.world < 1) d->o.world = 1;
    d->perm_epoch = -1;
    d->cur = d->next.f = (Loaded){.epoch = -1, .step = -1};
    return d;
}

/* Load the first file of a new d into *out (freeing d on failure). */
static int first_file(Data *d, Data **out, Err *err) {
    if (load(d, 0, 0, err)) {
        data_close(d);
        return -1;
    }
    *out = d;
    return 0;
}

int data_open(Data **out, const DataOpts *o, Err *err) {
    *out = NULL;
    DIR *dir = opendir(o->dir);
    if (!dir) return err_set(err, "%s: %s", o->dir, strerror(errno));
    Data *d = data_new(o);
    int cap = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (!strstr(e->d_name, "training")) continue;
        size_t n = strlen(o->dir) + strlen(e->d_name) + 2;
        char *p = xmalloc(n);
        snprintf(p, n, "%s/%s", o->dir, e->d_name);
        struct stat st;
        if (stat(p, &st) || !S_ISREG(st.st_mode)) {
            free(p);
            continue;
        }
        if (d->nfiles == cap)
            d->sorted = xrealloc(d->sorted, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *d->sorted);
        d->sorted[d->nfiles++] = p;
    }
    closedir(dir);
    if (!d->nfiles) {
        data_close(d);
        return err_set(err,
                       "%s: no file with 'training' in its name (NVIDIA's reader takes only those)",
                       o->dir);
    }
    qsort(d->sorted, (size_t)d->nfiles, sizeof *d->sorted, cmp_str);
    d->perm = xmalloc((size_t)d->nfiles * sizeof *d->perm);
    return first_file(d, out, err);
}

int data_open_file(Data **out, const DataOpts *o, const char *path, Err *err) {
    *out = NULL;
    Data *d = data_new(o);
    d->o.world = 1, d->o.rank = 0;
    d->in_order = 1;
    d->nfiles = 1;
    d->sorted = xmalloc(sizeof *d->sorted);
    d->sorted[0] = xstrdup(path);
    d->perm = xmalloc(sizeof *d->perm);
    return first_file(d, out, err);
}

static void reserve_batch(Data *d, int B, int L, int P) {
    size_t need = (size_t)B * (size_t)(L > P ? L : P);
    if (need <= d->bcap) return;
    free(d->b_ids), free(d->b_mask), free(d->b_seg), free(d->b_mpos), free(d->b_mids),
        free(d->b_nsp);
    d->b_ids = xmalloc(need * 4), d->b_mask = xmalloc(need * 4), d->b_seg = xmalloc(need * 4);
    d->b_mpos = xmalloc(need * 4), d->b_mids = xmalloc(need * 4), d->b_nsp = xmalloc(need * 4);
    d->bcap = need;
}

static void dynamic_mask(const Data *d, int64_t row, int32_t *ids, const int32_t *mask, int L,
                         int32_t *pos, int32_t *lab, int P) {
    Rng r;
    rng_seed(&r, d->o.seed * 1000003u + (uint64_t)d->cur.epoch * 7919u +
                     (uint64_t)d->cur.step * 104729u + (uint64_t)row);
    int cand[4096], nc = 0, len = 0;
    for (int j = 0; j < L; j++) {
        if (!mask[j]) continue;
        len++;
        if (ids[j] != d->o.cls && ids[j] != d->o.sep && nc < 4096) cand[nc++] = j;
    }
    int num = (int)mlm_num_to_predict((size_t)len, 0.15, P);
    if (num > nc) num = nc;
    for (int k = 0; k < num; k++) { /* partial Fisher-Yates */
        int j = k + (int)rng_below(&r, (uint64_t)(nc - k)), t = cand[k];
        cand[k] = cand[j];
        cand[j] = t;
    }
    /* sorted positions */
    for (int a = 1; a < num; a++)
        for (int b = a; b > 0 && cand[b - 1] > cand[b]; b--) {
            int t = cand[b];
            cand[b] = cand[b - 1];
            cand[b - 1] = t;
        }
    for (int k = 0; k < P; k++)
        pos[k] = lab[k] = 0;
    for (int k = 0; k < num; k++) {
        int p = cand[k];
        pos[k] = p;
        lab[k] = ids[p];
        double u = rng_double(&r);
        if (u < 0.8)
            ids[p] = d->o.mask_id;
        else if (u < 0.9)
            ids[p] = (int32_t)rng_below(&r, (uint64_t)d->o.vocab_size);
    }
}

int data_next(Data *d, BertBatch *b, Err *err) {
    if (d->at.row >= d->cur.rows && d->cur.epoch == d->at.epoch && d->cur.step == d->at.file_step) {
        d->at.row = 0;
        if (++d->at.file_step >= d->nfiles) d->at.file_step = 0, d->at.epoch++;
    }
    if (load(d, d->at.epoch, d->at.file_step, err)) return -1;
    const Loaded *c = &d->cur;
    int L = c->L, S = L, P = d->o.max_predictions > 0 ? d->o.max_predictions : c->P;
    int64_t n = c->rows - d->at.row;
    int B = n < d->o.micro_batch ? (int)n : d->o.micro_batch;
    if (c->bstart) { /* the length-bin batch that starts here */
        int64_t lo = 0, hi = c->nb;
        while (lo < hi) {
            int64_t mid = (lo + hi) / 2;
            if (c->bstart[mid] < d->at.row)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo >= c->nb || c->bstart[lo] != d->at.row)
            return err_set(err,
                           "%s: row %lld is not where a batch of --bin_size %d starts (resume with "
                           "the options "
                           "of the run that wrote the checkpoint)",
                           c->file, (long long)d->at.row, d->o.bin_size);
        B = (int)(c->bstart[lo + 1] - c->bstart[lo]), S = c->blen[lo];
    }
    reserve_batch(d, B, L, P);
    for (int i = 0; i < B; i++) {
        int64_t r = c->order[d->at.row + i];
        memcpy(d->b_ids + (size_t)i * S, c->ids + r * L, (size_t)S * 4);
        memcpy(d->b_mask + (size_t)i * S, c->mask + r * L, (size_t)S * 4);
        memcpy(d->b_seg + (size_t)i * S, c->seg + r * L, (size_t)S * 4);
        d->b_nsp[i] = c->nsp[r];
        int32_t *pos = d->b_mpos + (size_t)i * P, *lab = d->b_mids + (size_t)i * P;
        if (c->dynamic) {
            dynamic_mask(d, r, d->b_ids + (size_t)i * S, d->b_mask + (size_t)i * S, S, pos, lab, P);
            continue;
        }
        for (int k = 0; k < P;
             k++) { /* run_pretraining.py's max_predictions_per_seq cuts the file's list */
            pos[k] = k < c->P ? c->mpos[r * c->P + k] : 0;
            lab[k] = k < c->P ? c->mids[r * c->P + k] : 0;
        }
    }
    d->at.row += B;
    d->tok_done += (int64_t)B * S, d->tok_full += (int64_t)B * L;
    *b = (BertBatch){B, S, P, d->b_ids, d->b_seg, d->b_mask, d->b_mpos, d->b_mids, d->b_nsp};
    return 0;
}

void data_tokens(const Data *d, int64_t *computed, int64_t *full) {
    *computed = d->tok_done, *full = d->tok_full;
}

DataState data_state(const Data *d) { return d->at; }

int data_seek(Data *d, DataState s, Err *err) {
    if (s.epoch < 0 || s.file_step < 0 || s.file_step >= d->nfiles || s.row < 0)
        return err_set(err, "data position %lld/%lld/%lld outside the %d files", (long long)s.epoch,
                       (long long)s.file_step, (long long)s.row, d->nfiles);
    d->at = s;
    return load(d, s.epoch, s.file_step, err);
}

const char *data_file(const Data *d) { return d->cur.file; }
int data_nfiles(const Data *d) { return d->nfiles; }
const char *data_file_at(const Data *d, int i) {
    return i >= 0 && i < d->nfiles ? d->sorted[i] : NULL;
}

void data_close(Data *d) {
    if (!d) return;
    prefetch_join(d);
    loaded_free(&d->cur), loaded_free(&d->next.f);
    for (int i = 0; i < d->nfiles; i++)
        free(d->sorted[i]);
    free(d->sorted), free(d->perm);
    free(d->b_ids), free(d->b_mask), free(d->b_seg), free(d->b_mpos), free(d->b_mids),
        free(d->b_nsp);
    free(d);
}
