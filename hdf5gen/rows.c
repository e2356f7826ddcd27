/* rows.c - a built instance set's output rows: checked against the
 * file's widths (inst_rows_prepare), then read back by column ranges for
 * the HDF5 writer (inst_rows_fill, inst_rows_layout, inst_rows_strip; the
 * contract is in instances.h). A spilled set's records are sorted into
 * output order through temporary files here (the bucket sort below); an
 * in-memory set is read through inst_row.
 */
#include "hdf5gen/instances.h"

#include <stdint.h>
#include <string.h>

#include "hdf5gen/instrec.h"
#include "hdf5gen/spill.h"

/* ---- Output rows ---- */

#define ROW_BUCKET_BYTES (1u << 20) /* a bucket's rows in the row file's format */
#define SCATTER_BYTES (1u << 20)    /* all the buckets' write buffers together */
#define FILL_BYTES (64u << 10)      /* inst_rows_fill reads this many bytes at once */
#define ROW_TOP (UINT32_C(1) << 31)

/* order (output row -> instance) into its inverse in place (instance ->
 * row), following each cycle once; the top bit marks what is done (rows
 * are fewer than 2^31). */
static void invert_order(uint32_t *a, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (a[i] & ROW_TOP) continue;
        uint32_t r = (uint32_t)i, v = a[i];
        while (!(a[v] & ROW_TOP)) {
            uint32_t next = a[v];
            a[v] = r | ROW_TOP;
            r = v, v = next;
        }
    }
    for (size_t i = 0; i < n; i++)
        a[i] &= ~ROW_TOP;
}

/* The stage file holds runs, each of whole records of one bucket: a
 * RUN_HEAD header naming the bucket's run before it (offset, length; a
 * length of 0 for none), then the records. Memory keeps only each
 * bucket's last run and its bytes, so the runs' list costs nothing per
 * run; gather reads a bucket's runs from the last to the first. */
#define RUN_HEAD 16

typedef struct RunRef {
    uint64_t off; /* of the run's header */
    uint64_t len; /* its records' bytes; 0: none */
} RunRef;

typedef struct Rows {
    InstSet *s;
    int L, P, tb, pb;
    size_t R, K;    /* rows per bucket, buckets */
    Spill stage;    /* the records grouped by bucket: u32 row, then the record */
    RunRef *last;   /* per bucket: its last run */
    uint64_t *btot; /* per bucket: its records' bytes in the stage file */
} Rows;

/* Append a run of bucket b: hdr (RUN_HEAD bytes the caller leaves free)
 * is followed by n bytes of records at data, in place (data == hdr +
 * RUN_HEAD: one write) or elsewhere (two consecutive writes; one thread
 * writes the stage file). */
static void add_run(Rows *w, size_t b, uint8_t *hdr, const uint8_t *data, size_t n) {
    uint64_t h[2] = {w->last[b].off, w->last[b].len};
    memcpy(hdr, h, RUN_HEAD);
    uint64_t at;
    if (data == hdr + RUN_HEAD) {
        at = spill_append(&w->stage, hdr, RUN_HEAD + n);
    } else {
        at = spill_append(&w->stage, hdr, RUN_HEAD);
        spill_append(&w->stage, data, n);
    }
    w->last[b] = (RunRef){at, n};
    w->btot[b] += n;
}

/* Read the instance file in order and append each record, behind its
 * output row, to its bucket's buffer (written out when full). */
static void scatter(Rows *w, const uint32_t *inv) {
    InstSet *s = w->s;
    size_t tb = (size_t)w->tb;
    /* each bucket's buffer: a run's header, then bb bytes of records */
    size_t bb = SCATTER_BYTES / w->K;
    if (bb < (4u << 10)) bb = 4u << 10;
    if (bb > (64u << 10)) bb = 64u << 10;
    size_t bs = RUN_HEAD + bb;
    uint8_t *bbuf = xmalloc(w->K * bs), hdr[RUN_HEAD];
    size_t *blen = xcalloc(w->K, sizeof *blen);
    size_t cap = 1u << 20, have = 0;
    uint8_t *in = xmalloc(cap);
    uint64_t at = 0, end = s->instf.end;
    while (at < end || have) {
        size_t want = cap - have;
        if (want > end - at) want = (size_t)(end - at);
        if (want) {
            if (spill_pread(&s->instf, in + have, want, at)) break;
            at += want, have += want;
        }
        size_t p = 0;
        for (;;) {
            size_t n = rec_size(in + p, have - p, tb);
            if (!n || n > have - p) break;
            uint32_t idx, row;
            memcpy(&idx, in + p, 4);
            row = inv[idx & ~REC_B];
            size_t b = row / w->R;
            row |= idx & REC_B;
            memcpy(in + p, &row, 4); /* the stage record starts with the row instead */
            uint8_t *bk = bbuf + b * bs;
            if (blen[b] + n > bb) {
                if (blen[b]) add_run(w, b, bk, bk + RUN_HEAD, blen[b]);
                blen[b] = 0;
            }
            if (n > bb)
                add_run(w, b, hdr, in + p, n);
            else
                memcpy(bk + RUN_HEAD + blen[b], in + p, n), blen[b] += n;
            p += n;
        }
        memmove(in, in + p, have - p);
        have -= p;
        size_t n = rec_size(in, have, tb);
        if (n > cap) { /* a record longer than the buffer */
            cap = n;
            in = xrealloc(in, cap);
        }
        if (!want && have) break; /* a cut record at the end: cannot happen */
    }
    for (size_t b = 0; b < w->K; b++)
        if (blen[b]) add_run(w, b, bbuf + b * bs, bbuf + b * bs + RUN_HEAD, blen[b]);
    free(bbuf), free(blen), free(in);
}

/* The ids section's layout: bands of *H rows, each in strips of *CW
 * columns (inst_rows_layout), else one band of whole rows. */
static void ids_layout(const InstSet *s, uint64_t *H, uint64_t *CW) {
    uint64_t L = (uint64_t)s->row_l;
    if (s->ids_band && s->ids_cw && s->ids_cw < L) {
        *H = s->ids_band, *CW = s->ids_cw;
    } else {
        *H = s->n ? s->n : 1, *CW = L;
    }
}

/* Where row r's columns of the strip that starts at column c0s (sw wide)
 * are in the row file: a band's strips one after another, each its rows'
 * sw columns row after row. */
static uint64_t ids_at(const InstSet *s, uint64_t H, uint64_t r, uint64_t c0s, uint64_t sw) {
    uint64_t L = (uint64_t)s->row_l, b = r / H;
    return s->rowsec[1] + (b * H * L + H * c0s + (r - b * H) * sw) * (uint64_t)s->tokbytes;
}

/* Rows r0 .. r0 + nr of the ids section, whole rows (L ids of tb bytes)
 * in rows, written in the layout; tmp holds nr rows (NULL: whole rows). */
static void ids_write(InstSet *s, const uint8_t *rows, uint64_t r0, size_t nr, uint8_t *tmp) {
    uint64_t H, CW, L = (uint64_t)s->row_l;
    size_t tb = (size_t)s->tokbytes;
    ids_layout(s, &H, &CW);
    for (uint64_t r = r0; r < r0 + nr;) {
        uint64_t b = r / H, re = (b + 1) * H < r0 + nr ? (b + 1) * H : r0 + nr;
        for (uint64_t c0s = 0; c0s < L; c0s += CW) {
            uint64_t sw = L - c0s < CW ? L - c0s : CW;
            const uint8_t *src = rows + (r - r0) * L * tb;
            if (sw != L) {
                for (uint64_t j = r; j < re; j++)
                    memcpy(tmp + (j - r) * sw * tb, rows + ((j - r0) * L + c0s) * tb, sw * tb);
                src = tmp;
            }
            spill_pwrite(&s->rowf, src, (re - r) * sw * tb, ids_at(s, H, r, c0s, sw));
        }
        r = re;
    }
}

/* Columns c0 .. c0 + nc of rows r0 .. r0 + n of input_ids, widened to
 * int32, into out (rows width apart): for each band and strip they touch,
 * its rows read FILL_BYTES at a time. */
static void ids_read(InstSet *s, uint64_t r0, uint64_t n, uint64_t c0, uint64_t nc, size_t width,
                     int32_t *out) {
    uint64_t H, CW, L = (uint64_t)s->row_l;
    size_t tb = (size_t)s->tokbytes;
    ids_layout(s, &H, &CW);
    size_t cap = FILL_BYTES > L * tb ? FILL_BYTES : (size_t)(L * tb);
    uint8_t *tmp = xmalloc(cap);
    for (uint64_t r = r0; r < r0 + n;) {
        uint64_t b = r / H, re = (b + 1) * H < r0 + n ? (b + 1) * H : r0 + n;
        for (uint64_t c0s = c0 / CW * CW; c0s < c0 + nc; c0s += CW) {
            uint64_t sw = L - c0s < CW ? L - c0s : CW;
            uint64_t ca = c0 > c0s ? c0 : c0s, cb = c0 + nc < c0s + sw ? c0 + nc : c0s + sw;
            uint64_t per = cap / (sw * tb);
            for (uint64_t q = r; q < re; q += per) {
                uint64_t k = re - q < per ? re - q : per;
                spill_pread(&s->rowf, tmp, k * sw * tb, ids_at(s, H, q, c0s, sw));
                for (uint64_t j = 0; j < k; j++)
                    widen_to(tmp + (j * sw + (ca - c0s)) * tb, (int)tb, cb - ca,
                             out + (q + j - r0) * width + (ca - c0));
            }
        }
        r = re;
    }
    free(tmp);
}

/* Write each bucket's rows, in order, into the row file's four sections. */
static int gather(Rows *w, const char *path, Err *err) {
    InstSet *s = w->s;
    size_t n = s->n, R = w->R, L = (size_t)w->L, P = (size_t)w->P;
    int tb = w->tb, pb = w->pb;
    uint64_t maxb = 0;
    for (size_t b = 0; b < w->K; b++)
        if (w->btot[b] > maxb) maxb = w->btot[b];
    /* a bucket's records from buf + RUN_HEAD (room for the first run's header) */
    uint8_t *rbuf = xmalloc(RUN_HEAD + maxb), *buf = rbuf + RUN_HEAD;
    size_t *at = xmalloc(R * sizeof *at), *bat = xmalloc(R * sizeof *bat);
    uint64_t H, CW;
    ids_layout(s, &H, &CW);
    uint8_t *hsec = xmalloc(R * 8), *isec = xmalloc(R * L * (size_t)tb),
            *itmp = CW < L ? xmalloc(R * L * (size_t)tb) : NULL; /* ids_write's, by strip */
    uint8_t *psec = xmalloc(R * P * (size_t)pb + 1), *lsec = xmalloc(R * P * (size_t)tb + 1);
    int rc = 0;
    for (size_t b = 0; b < w->K && rc == 0; b++) {
        size_t r0 = b * R, nr = n - r0 < R ? n - r0 : R;
        /* its runs, last first, each read with its header just before
         * its place (over bytes of the run read next) */
        uint64_t got = w->btot[b], left = got;
        for (RunRef r = w->last[b]; r.len && r.len <= left;) {
            left -= r.len;
            if (spill_pread(&w->stage, buf + left - RUN_HEAD, RUN_HEAD + r.len, r.off)) break;
            uint64_t h[2];
            memcpy(h, buf + left - RUN_HEAD, RUN_HEAD);
            r = (RunRef){h[0], h[1]};
        }
        if (spill_failed(&w->stage, err)) {
            rc = -1;
            break;
        }
        if (left) {
            rc = err_set(err, "%s: internal error: the temporary runs do not add up", path);
            break;
        }
        for (size_t j = 0; j < nr; j++)
            at[j] = bat[j] = SIZE_MAX;
        size_t count = 0, nbrec = 0, nbwant = 0;
        for (uint64_t p = 0; p < got;) {
            uint32_t row;
            size_t len = rec_size(buf + p, (size_t)(got - p), (size_t)tb);
            if (!len || len > got - p) break;
            memcpy(&row, buf + p, 4);
            size_t *slot = row & REC_B ? bat : at;
            row &= ~REC_B;
            if (row < r0 || row - r0 >= nr || slot[row - r0] != SIZE_MAX) break;
            slot[row - r0] = (size_t)p;
            if (slot == at) {
                Inst in;
                memcpy(&in, buf + p + 4, sizeof in);
                count++;
                nbwant += (size_t)rec_defers_b(&in);
            } else {
                nbrec++;
            }
            p += len;
        }
        if (count != nr || nbrec != nbwant) {
            rc = err_set(err, "%s: internal error: the temporary rows do not add up", path);
            break;
        }
        memset(isec, 0, nr * L * (size_t)tb);
        memset(psec, 0, nr * P * (size_t)pb);
        memset(lsec, 0, nr * P * (size_t)tb);
        for (size_t j = 0; j < nr && rc == 0; j++) {
            const uint8_t *rec = buf + at[j];
            Inst in;
            uint32_t ml, iidx;
            memcpy(&iidx, rec, 4); /* the row now; the instance is known by the Inst below */
            memcpy(&in, rec + 4, sizeof in);
            memcpy(&ml, rec + 4 + sizeof in, 4);
            const uint8_t *mb = rec + REC_HEAD, *ta = mb + ml;
            size_t na = in.na, nb = in.has_b ? in.nb : 0, len = inst_len(&in);
            if (len > L || in.nmask > P) {
                rc = err_set(err,
                             "%s: instance %u does not fit max_seq_length %d / max_predictions %d",
                             path, (unsigned)s->order[r0 + j], w->L, w->P);
                break;
            }
            /* the row as stored, then each mask's label read and its id put */
            uint8_t *irow = isec + j * L * (size_t)tb;
            const uint8_t *tbk = ta + na * (size_t)tb; /* B's tokens */
            if (rec_defers_b(&in)) {
                uint32_t bn = 0;
                if (bat[j] != SIZE_MAX) memcpy(&bn, buf + bat[j] + 4, 4);
                if (bn != nb) {
                    rc = err_set(err, "%s: internal error: a temporary segment is missing", path);
                    break;
                }
                tbk = buf + bat[j] + BREC_HEAD;
            }
            put_id(irow, 0, tb, s->cls);
            memcpy(irow + (size_t)tb, ta, na * (size_t)tb);
            put_id(irow, na + 1, tb, s->sep);
            if (in.has_b) {
                memcpy(irow + (na + 2) * (size_t)tb, tbk, nb * (size_t)tb);
                put_id(irow, len - 1, tb, s->sep);
            }
            uint8_t *prow = psec + j * P * (size_t)pb, *lrow = lsec + j * P * (size_t)tb;
            const uint8_t *q = mb;
            uint32_t pos = 0;
            for (size_t k = 0; k < in.nmask; k++) {
                uint32_t c = *q++, d = c >> 2;
                if (__builtin_expect(d == 63, 0)) d += get_varint(&q);
                pos += d + 1;
                put_id(lrow, k, tb, get_id(irow, pos, tb));
                put_id(prow, k, pb, (int32_t)pos);
                if ((c & 3) == MK_MASK)
                    put_id(irow, pos, tb, s->mask);
                else if ((c & 3) == MK_RANDOM)
                    put_id(irow, pos, tb, (int32_t)get_varint(&q));
            }
            uint32_t h[2] = {(uint32_t)len | (in.next ? ROW_TOP : 0), (uint32_t)(na + 2)};
            memcpy(hsec + j * 8, h, 8);
        }
        if (rc) break;
        spill_pwrite(&s->rowf, hsec, nr * 8, s->rowsec[0] + r0 * 8);
        ids_write(s, isec, r0, nr, itmp);
        if (P) {
            spill_pwrite(&s->rowf, psec, nr * P * (size_t)pb, s->rowsec[2] + r0 * P * (uint64_t)pb);
            spill_pwrite(&s->rowf, lsec, nr * P * (size_t)tb, s->rowsec[3] + r0 * P * (uint64_t)tb);
        }
        if (spill_failed(&s->rowf, err)) rc = -1;
    }
    free(rbuf), free(at), free(bat), free(hsec), free(isec), free(itmp), free(psec), free(lsec);
    return rc;
}

int inst_rows_prepare(InstSet *s, int L, int P, const char *path, Err *err) {
    s->row_l = L, s->row_p = P;
    if (!s->spilled) {
        for (size_t r = 0; r < s->n; r++) {
            InstView v;
            inst_row(s, r, &v, NULL, NULL, NULL);
            if (v.len > (size_t)L || v.nmask > (size_t)P || v.seg0 > v.len)
                return err_set(
                    err, "%s: instance %u does not fit max_seq_length %d / max_predictions %d",
                    path, (unsigned)s->order[r], L, P);
        }
        return 0;
    }
    Rows w = {.s = s, .L = L, .P = P, .tb = s->tokbytes, .pb = L <= 65536 ? 2 : 4};
    size_t rowb = 8 + (size_t)L * (size_t)w.tb + (size_t)P * (size_t)(w.pb + w.tb);
    w.R = ROW_BUCKET_BYTES / rowb;
    if (w.R < 64) w.R = 64;
    w.K = s->n ? (s->n + w.R - 1) / w.R : 1;
    uint64_t n = s->n;
    s->rowsec[0] = 0;
    s->rowsec[1] = n * 8;
    uint64_t H, CW;
    ids_layout(s, &H, &CW);
    s->rowsec[2] = s->rowsec[1] + (n + H - 1) / H * H * (uint64_t)L * (uint64_t)w.tb;
    s->rowsec[3] = s->rowsec[2] + n * (uint64_t)P * (uint64_t)w.pb;
    if (spill_open(&w.stage, s->tmp_dir, s->tmp_label, err)) return -1;
    if (spill_open(&s->rowf, s->tmp_dir, s->tmp_label, err)) {
        spill_close(&w.stage);
        return -1;
    }
    w.btot = xcalloc(w.K, sizeof *w.btot);
    w.last = xcalloc(w.K, sizeof *w.last);
    /* the instance -> row map in place of the order, and back after */
    invert_order(s->order, s->n);
    scatter(&w, s->order);
    int rc = 0;
    if (spill_failed(&s->instf, err) || spill_failed(&w.stage, err)) rc = -1;
    spill_close(&s->instf); /* its space is free now */
    invert_order(s->order, s->n);
    if (rc == 0) rc = gather(&w, path, err);
    spill_close(&w.stage);
    free(w.last), free(w.btot);
    return rc;
}

/* Columns c0 .. c0 + nc of one row of input_mask (INST_MASK: ones before
 * len) or segment_ids (INST_SEG: ones from seg0 to len) into row, which
 * the caller zero-filled. */
static void shape_cols(int8_t *row, int what, uint64_t len, uint64_t seg0, uint64_t c0,
                       uint64_t nc) {
    uint64_t a = what == INST_SEG ? seg0 : 0, b = len;
    if (a < c0) a = c0;
    if (b > c0 + nc) b = c0 + nc;
    if (a < b) memset(row + (a - c0), 1, b - a);
}

void inst_rows_fill(InstSet *s, int what, uint64_t r0, uint64_t n, size_t width, void *buf) {
    int32_t *o32 = buf;
    int8_t *o8 = buf;
    if (!s->spilled) {
        for (uint64_t r = 0; r < n; r++) {
            InstView v;
            size_t at = (size_t)r * width;
            switch (what) {
            case INST_IDS:
                inst_row(s, r0 + r, &v, o32 + at, NULL, NULL);
                break;
            case INST_POS:
                inst_row(s, r0 + r, &v, NULL, o32 + at, NULL);
                break;
            case INST_LAB:
                inst_row(s, r0 + r, &v, NULL, NULL, o32 + at);
                break;
            default:
                inst_row(s, r0 + r, &v, NULL, NULL, NULL);
                if (what == INST_NSP)
                    o8[r] = (int8_t)v.next_sentence_label;
                else
                    shape_cols(o8 + at, what, v.len, v.seg0, 0, v.len);
            }
        }
        return;
    }
    size_t L = (size_t)s->row_l, P = (size_t)s->row_p, tb = (size_t)s->tokbytes;
    size_t pb = L <= 65536 ? 2 : 4, rowb, sec;
    switch (what) {
    case INST_IDS:
        ids_read(s, r0, n, 0, L, width, o32);
        return;
    case INST_POS:
        rowb = P * pb, sec = 2;
        break;
    case INST_LAB:
        rowb = P * tb, sec = 3;
        break;
    default:
        rowb = 8, sec = 0;
    }
    if (!rowb) return; /* P = 0: the one column of zeros */
    size_t per = FILL_BYTES / rowb ? FILL_BYTES / rowb : 1;
    if (per > n) per = (size_t)n;
    uint8_t *tmp = xmalloc(per * rowb);
    for (uint64_t r = 0; r < n; r += per) {
        size_t k = n - r < per ? (size_t)(n - r) : per;
        spill_pread(&s->rowf, tmp, k * rowb, s->rowsec[sec] + (r0 + r) * rowb);
        for (size_t j = 0; j < k; j++) {
            const uint8_t *q = tmp + j * rowb;
            size_t at = (size_t)(r + j) * width;
            if (sec == 2) {
                widen_to(q, (int)pb, P, o32 + at);
            } else if (sec == 3) {
                widen_to(q, (int)tb, P, o32 + at);
            } else {
                uint32_t h[2];
                memcpy(h, q, 8);
                size_t len = h[0] & ~ROW_TOP, seg0 = h[1];
                if (what == INST_NSP)
                    o8[r + j] = (int8_t)(h[0] >> 31);
                else
                    shape_cols(o8 + at, what, len, seg0, 0, len);
            }
        }
    }
    free(tmp);
}

void inst_rows_layout(InstSet *s, uint64_t band_rows, uint64_t strip_cols) {
    s->ids_band = band_rows, s->ids_cw = strip_cols;
}

void inst_rows_strip(InstSet *s, int what, uint64_t r0, uint64_t n, uint64_t c0, uint64_t nc,
                     size_t width, void *buf) {
    int32_t *o32 = buf;
    int8_t *o8 = buf;
    size_t L = (size_t)s->row_l;
    if (!s->spilled) { /* each row whole, its columns kept */
        int32_t *row = xmalloc((L ? L : 1) * sizeof *row);
        for (uint64_t r = 0; r < n; r++) {
            InstView v;
            memset(row, 0, L * sizeof *row);
            inst_row(s, r0 + r, &v, what == INST_IDS ? row : NULL, NULL, NULL);
            if (what == INST_IDS) {
                memcpy(o32 + r * width, row + c0, nc * sizeof *row);
                continue;
            }
            shape_cols(o8 + r * width, what, v.len, v.seg0, c0, nc);
        }
        free(row);
        return;
    }
    if (what == INST_IDS) {
        ids_read(s, r0, n, c0, nc, width, o32);
        return;
    }
    size_t per = FILL_BYTES / 8;
    uint8_t *tmp = xmalloc(FILL_BYTES);
    for (uint64_t r = 0; r < n; r += per) {
        size_t k = n - r < per ? (size_t)(n - r) : per;
        spill_pread(&s->rowf, tmp, k * 8, s->rowsec[0] + (r0 + r) * 8);
        for (size_t j = 0; j < k; j++) {
            uint32_t h[2];
            memcpy(h, tmp + j * 8, 8);
            shape_cols(o8 + (r + j) * width, what, h[0] & ~ROW_TOP, h[1], c0, nc);
        }
    }
    free(tmp);
}
