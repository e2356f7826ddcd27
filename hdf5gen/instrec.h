/* instrec.h - what instances.c (building) and rows.c (the output rows)
 * share: token ids stored 2 or 4 bytes each, the mask code's kinds and
 * varints (instances.h), and the records of a spilled shard's instances.
 *
 * A spilled set writes each block, once masked, to InstSet.instf as one
 * record per instance, everything its output row needs:
 *
 *   u32 instance index | Inst | u32 mask bytes m | m mask bytes | A's
 *   tokens | B's tokens (tokbytes each)
 *
 * and a random next segment's tokens as a record of their own,
 *
 *   u32 instance index | 2^31 | u32 n | n tokens,
 *
 * which the row pass (rows.c) joins to its instance. Internal to
 * hdf5gen/: included by instances.c and rows.c only.
 */
#ifndef WB_INSTREC_H
#define WB_INSTREC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hdf5gen/instances.h"

/* What became of a masked token (the mask code's kinds, instances.h). */
enum { MK_MASK, MK_KEEP, MK_RANDOM };

/* Id i of ids stored tb (2 or 4) bytes each at p: put and get. */
static inline void put_id(uint8_t *p, size_t i, int tb, int32_t v) {
    if (tb == 2) {
        uint16_t x = (uint16_t)v;
        memcpy(p + 2 * i, &x, 2);
    } else {
        memcpy(p + 4 * i, &v, 4);
    }
}

static inline int32_t get_id(const uint8_t *p, size_t i, int tb) {
    if (tb == 2) {
        uint16_t x;
        memcpy(&x, p + 2 * i, 2);
        return x;
    }
    int32_t v;
    memcpy(&v, p + 4 * i, 4);
    return v;
}

/* Widen n ids of tb bytes each at `raw` into t (no overlap). */
static inline void widen_to(const uint8_t *restrict raw, int tb, size_t n, int32_t *restrict t) {
    if (tb == 4) {
        memcpy(t, raw, n * 4);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint16_t v;
        memcpy(&v, raw + 2 * i, 2);
        t[i] = v;
    }
}

/* A varint of the mask code (instances.h) at *pp; *pp moves past it. */
static inline uint32_t get_varint(const uint8_t **pp) {
    const uint8_t *p = *pp;
    uint32_t v = 0;
    for (int sh = 0;; sh += 7) {
        uint8_t b = *p++;
        v |= (uint32_t)(b & 0x7f) << sh;
        if (!(b & 0x80)) break;
    }
    *pp = p;
    return v;
}

/* An instance's tokens: [CLS] A [SEP], and B [SEP] when it has B. */
static inline size_t inst_len(const Inst *in) {
    return in->na + 2 + (in->has_b ? (size_t)in->nb + 1 : 0);
}

#define REC_HEAD (4 + sizeof(Inst) + 4)
#define BREC_HEAD 8
#define REC_B (UINT32_C(1) << 31) /* a random segment's record */

/* B's tokens are in a record of their own. */
static inline int rec_defers_b(const Inst *in) { return in->has_b && in->next; }

/* The size of the record at h, of which `avail` bytes are at hand; 0 when
 * fewer than its header. */
static inline size_t rec_size(const uint8_t *h, size_t avail, size_t tb) {
    uint32_t idx;
    if (avail < BREC_HEAD) return 0;
    memcpy(&idx, h, 4);
    if (idx & REC_B) {
        uint32_t n;
        memcpy(&n, h + 4, 4);
        return BREC_HEAD + n * tb;
    }
    if (avail < REC_HEAD) return 0;
    Inst in;
    uint32_t ml;
    memcpy(&in, h + 4, sizeof in);
    memcpy(&ml, h + 4 + sizeof in, 4);
    return REC_HEAD + ml + (in.na + (in.has_b && !rec_defers_b(&in) ? (size_t)in.nb : 0)) * tb;
}

#endif
