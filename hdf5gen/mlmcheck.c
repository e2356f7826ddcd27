/* mlmcheck.c - the rules of mlmcheck.h over rows read in blocks through
 * h5file.h (so memory does not grow with the file). */
#include "hdf5gen/mlmcheck.h"

#include <stdarg.h>
#include <string.h>

#include "hdf5gen/h5file.h"

static int why_set(char *why, size_t cap, const char *fmt, ...) WB_PRINTF(3, 4);
static int why_set(char *why, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    return -1;
}

int mlmcheck_row(const MlmCheckOpts *o, int L, int P, const int32_t *ids, const int32_t *mask,
                 const int32_t *seg, const int32_t *pos, const int32_t *lab, int32_t nsp,
                 MlmCheckStats *st, char *why, size_t cap) {
    int len = 0;
    while (len < L && mask[len] == 1)
        len++;
    for (int i = len; i < L; i++) {
        if (mask[i] != 0)
            return why_set(why, cap, "input_mask is not ones then zeros (%d at %d)", mask[i], i);
        if (ids[i] != 0)
            return why_set(why, cap, "input_ids not 0 in the padding (%d at %d)", ids[i], i);
        if (seg[i] != 0)
            return why_set(why, cap, "segment_ids not 0 in the padding (%d at %d)", seg[i], i);
    }
    if (len < 2) return why_set(why, cap, "sequence of %d tokens (at least [CLS] and [SEP])", len);
    if (ids[0] != o->cls)
        return why_set(why, cap, "input_ids[0] is %d, not [CLS] (%d)", ids[0], o->cls);
    if (ids[len - 1] != o->sep)
        return why_set(why, cap, "last token is %d, not [SEP] (%d)", ids[len - 1], o->sep);
    int seg0 = 0;
    while (seg0 < len && seg[seg0] == 0)
        seg0++;
    for (int i = seg0; i < len; i++)
        if (seg[i] != 1)
            return why_set(why, cap, "segment_ids not 0...0 1...1 (%d at %d)", seg[i], i);
    int has_b = seg0 < len;
    if (has_b && (seg0 < 2 || ids[seg0 - 1] != o->sep))
        return why_set(why, cap, "segment A does not end with [SEP] (position %d)", seg0 - 1);
    if (nsp != 0 && nsp != 1) return why_set(why, cap, "next_sentence_label %d", nsp);
    if (nsp == 1 && !has_b) return why_set(why, cap, "next_sentence_label 1 without a segment B");
    int k = 0;
    while (k < P && pos[k] != 0)
        k++;
    for (int i = k; i < P; i++) {
        if (pos[i] != 0)
            return why_set(why, cap, "masked_lm_positions: %d after the padding (index %d)", pos[i],
                           i);
        if (lab[i] != 0)
            return why_set(why, cap, "masked_lm_ids not 0 in the padding (%d at %d)", lab[i], i);
    }
    for (int i = 0; i < k; i++) {
        int p = pos[i];
        if (p < 1 || p >= len - 1)
            return why_set(why, cap, "masked position %d outside 1..%d", p, len - 2);
        if (i && p <= pos[i - 1])
            return why_set(why, cap, "masked_lm_positions not increasing (%d then %d)", pos[i - 1],
                           p);
        if (has_b && p == seg0 - 1)
            return why_set(why, cap, "masked position %d is the [SEP] of segment A", p);
    }
    if (o->vocab_size > 0) {
        for (int i = 0; i < len; i++)
            if (ids[i] < 0 || ids[i] >= o->vocab_size)
                return why_set(why, cap, "input_ids: %d at %d outside the vocabulary (%d ids)",
                               ids[i], i, o->vocab_size);
        for (int i = 0; i < k; i++)
            if (lab[i] < 0 || lab[i] >= o->vocab_size)
                return why_set(why, cap, "masked_lm_ids: %d outside the vocabulary (%d ids)",
                               lab[i], o->vocab_size);
    }
    if (st) {
        st->instances++;
        st->tokens += (uint64_t)len;
        st->masked += (uint64_t)k;
        for (int i = 0; i < k; i++) {
            int32_t v = ids[pos[i]];
            if (o->mask >= 0 && v == o->mask)
                st->masked_as_mask++;
            else if (v == lab[i])
                st->masked_kept++;
            else
                st->masked_other++;
        }
        if (o->unk >= 0) { /* the text's tokens: a masked position holds its original in lab */
            for (int i = 0; i < len; i++)
                st->unk += ids[i] == o->unk;
            for (int i = 0; i < k; i++)
                st->unk += (uint64_t)(lab[i] == o->unk) - (uint64_t)(ids[pos[i]] == o->unk);
        }
        st->random_next += nsp == 1;
        st->with_b += has_b;
        int b = (int)((int64_t)(len - 1) * 8 / L);
        st->hist[b > 7 ? 7 : b]++;
        for (int i = 0; i < len; i++)
            st->max_id = ids[i] > st->max_id ? ids[i] : st->max_id;
    }
    if (o->dump) {
        FILE *f = o->dump;
        for (int i = 0; i < len; i++)
            fprintf(f, i ? " %d" : "%d", ids[i]);
        fputc('\t', f);
        for (int i = 0; i < len; i++)
            fputc('0' + seg[i], f);
        fputc('\t', f);
        for (int i = 0; i < k; i++)
            fprintf(f, i ? " %d" : "%d", pos[i]);
        fputc('\t', f);
        for (int i = 0; i < k; i++)
            fprintf(f, i ? " %d" : "%d", lab[i]);
        fprintf(f, "\t%d\n", nsp);
    }
    return 0;
}

static const char *const names[6] = {"input_ids",     "input_mask",
                                     "segment_ids",   "masked_lm_positions",
                                     "masked_lm_ids", "next_sentence_labels"};
static const int nv_size[6] = {4, 1, 1, 4, 4, 1};

int mlmcheck_file(const char *path, const MlmCheckOpts *o, MlmCheckStats *st, Err *err) {
    H5In *in;
    int orc = h5in_open(&in, path, err);
    if (orc) return orc == -2 ? -1 : -2; /* damaged: a violation; not HDF5: unreadable */
    H5Info info[6];
    int rc = 0;
    for (int d = 0; d < 6 && rc == 0; d++) {
        int r = h5in_info(in, names[d], &info[d], err);
        if (r < 0)
            rc = -1;
        else if (r == 0)
            rc = err_set(err, "%s: no dataset %s", path, names[d]);
        else if (!info[d].is_integer)
            rc = err_set(err, "%s: %s is not an integer dataset", path, names[d]);
        else if (info[d].rank != (d == 5 ? 1 : 2))
            rc = err_set(err, "%s: %s has %d dimensions, not %d", path, names[d], info[d].rank,
                         d == 5 ? 1 : 2);
        else if (info[d].elem_size != nv_size[d] || !info[d].is_signed || !info[d].little_endian) {
            if (o->strict)
                rc = err_set(err, "%s: %s is not NVIDIA's type (signed %d-bit little-endian)", path,
                             names[d], 8 * nv_size[d]);
            else {
                warn("%s: %s: %d-byte %s integers, not NVIDIA's signed %d-bit (the reader casts "
                     "them)",
                     path, names[d], info[d].elem_size, info[d].is_signed ? "signed" : "unsigned",
                     8 * nv_size[d]);
                st->warnings++;
            }
        }
    }
    uint64_t N = rc == 0 ? info[0].dims[0] : 0;
    if (rc == 0 && (info[0].dims[1] < 2 || info[0].dims[1] > 1000000 || info[3].dims[1] > 1000000))
        rc = err_set(err, "%s: implausible shape L=%llu P=%llu", path,
                     (unsigned long long)info[0].dims[1],
                     (unsigned long long)info[3].dims[1]); /* before L and P become ints */
    int L = rc == 0 ? (int)info[0].dims[1] : 0, P = rc == 0 ? (int)info[3].dims[1] : 0;
    for (int d = 1; d < 6 && rc == 0; d++) {
        uint64_t w = d < 3 ? (uint64_t)L : d < 5 ? (uint64_t)P : 0;
        if (info[d].dims[0] != N || (d < 5 && info[d].dims[1] != w))
            rc = err_set(err, "%s: %s has shape (%llu, %llu), not (%llu, %llu) like %s", path,
                         names[d], (unsigned long long)info[d].dims[0],
                         (unsigned long long)(d < 5 ? info[d].dims[1] : 0), (unsigned long long)N,
                         (unsigned long long)w, d < 3 ? "input_ids" : "masked_lm_positions");
    }
    if (rc == 0) {
        st->L = L, st->P = P;
        enum { BLOCK = 4096 };
        int32_t *buf[6];
        for (int d = 0; d < 6; d++)
            buf[d] = xmalloc((size_t)BLOCK * (size_t)(d < 3 ? L : d < 5 ? P : 1) * 4 + 4);
        char why[256];
        for (uint64_t r0 = 0; r0 < N && rc == 0; r0 += BLOCK) {
            uint64_t n = N - r0 < BLOCK ? N - r0 : BLOCK;
            for (int d = 0; d < 6 && rc == 0; d++)
                if (h5in_read_rows(in, names[d], r0, n, buf[d], err)) rc = -1;
            for (uint64_t r = 0; r < n && rc == 0; r++) {
                const int32_t *ids = buf[0] + r * (uint64_t)L, *mk = buf[1] + r * (uint64_t)L,
                              *sg = buf[2] + r * (uint64_t)L;
                if (mlmcheck_row(o, L, P, ids, mk, sg, buf[3] + r * (uint64_t)P,
                                 buf[4] + r * (uint64_t)P, buf[5][r], st, why, sizeof why))
                    rc = err_set(err, "%s: instance %llu: %s", path, (unsigned long long)(r0 + r),
                                 why);
            }
        }
        for (int d = 0; d < 6; d++)
            free(buf[d]);
    }
    h5in_close(in);
    return rc;
}
