/* spmodel.c - SentencePiece .model and .vocab files (see spmodel.h).
 *
 * Wire format: protobuf encoding (protobuf.dev/programming-guides/encoding):
 * each field is a varint key (number << 3 | wire type) followed by a varint,
 * 4 or 8 little-endian bytes, or a varint length and that many bytes.
 * Message layout: sentencepiece_model.proto of google/sentencepiece. The
 * .vocab layout: SaveVocab in its trainer_interface.cc, which streams
 * `piece << "\t" << score << "\n"` with default stream formatting.
 */
#include "vocab/spmodel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"

/* ---- wire primitives ---- */

static void put_varint(Buf *b, uint64_t v) {
    unsigned char tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v) tmp[n] |= 0x80;
        n++;
    } while (v);
    buf_append(b, tmp, n);
}

static void put_key(Buf *b, uint32_t num, int wire) {
    put_varint(b, (uint64_t)num << 3 | (uint64_t)wire);
}

static void put_fixed(Buf *b, uint64_t v, int bytes) {
    unsigned char tmp[8];
    for (int i = 0; i < bytes; i++)
        tmp[i] = (unsigned char)(v >> (8 * i));
    buf_append(b, tmp, (size_t)bytes);
}

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_float(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Read a varint at *p (< end). Returns 0 or -1 if truncated or too long. */
static int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v) {
    uint64_t r = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (*p >= end) return -1;
        unsigned c = *(*p)++;
        r |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = r;
            return 0;
        }
    }
    return -1;
}

static uint64_t get_fixed(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* One field at *p: fills f (bytes point into the input through *bytes).
 * Returns 0, or -1 with *why set. */
static int get_field(const unsigned char **p, const unsigned char *end, SpField *f,
                     const unsigned char **bytes, const char **why) {
    uint64_t key, v;
    if (get_varint(p, end, &key)) return *why = "truncated field key", -1;
    f->num = (uint32_t)(key >> 3);
    f->wire = (uint8_t)(key & 7);
    f->v = 0, f->len = 0, *bytes = NULL;
    if (f->num == 0) return *why = "field number 0", -1;
    switch (f->wire) {
    case PB_VARINT:
        if (get_varint(p, end, &f->v)) return *why = "truncated varint", -1;
        return 0;
    case PB_I64:
    case PB_I32: {
        int n = f->wire == PB_I64 ? 8 : 4;
        if (end - *p < n) return *why = "truncated fixed-size value", -1;
        f->v = get_fixed(*p, n);
        *p += n;
        return 0;
    }
    case PB_LEN:
        if (get_varint(p, end, &v) || v > (uint64_t)(end - *p))
            return *why = "truncated length-delimited field", -1;
        f->len = (size_t)v;
        *bytes = *p;
        *p += v;
        return 0;
    default:
        return *why = "unsupported wire type", -1;
    }
}

/* ---- SpMsg ---- */

static SpField *msg_push(SpMsg *m, uint32_t num, int wire) {
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 16;
        m->f = xrealloc(m->f, m->cap * sizeof *m->f);
    }
    SpField *f = &m->f[m->n++];
    memset(f, 0, sizeof *f);
    f->num = num;
    f->wire = (uint8_t)wire;
    m->present = 1;
    return f;
}

static void msg_remove(SpMsg *m, uint32_t num) {
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->f[i].num != num) m->f[k++] = m->f[i];
    m->n = k;
}

void spmsg_set_varint(SpMsg *m, uint32_t num, int64_t v) {
    msg_remove(m, num);
    msg_push(m, num, PB_VARINT)->v = (uint64_t)v;
}

void spmsg_set_float(SpMsg *m, uint32_t num, float v) {
    msg_remove(m, num);
    msg_push(m, num, PB_I32)->v = float_bits(v);
}

void spmsg_add_bytes(SpMsg *m, uint32_t num, const void *p, size_t n) {
    SpField *f = msg_push(m, num, PB_LEN);
    f->off = m->data.len;
    f->len = n;
    buf_append(&m->data, p, n);
}

void spmsg_set_bytes(SpMsg *m, uint32_t num, const void *p, size_t n) {
    msg_remove(m, num);
    spmsg_add_bytes(m, num, p, n);
}

const SpField *spmsg_get(const SpMsg *m, uint32_t num) {
    for (size_t i = m->n; i-- > 0;)
        if (m->f[i].num == num) return &m->f[i];
    return NULL;
}

float spmsg_get_float(const SpMsg *m, uint32_t num, float dflt) {
    const SpField *f = spmsg_get(m, num);
    return f && f->wire == PB_I32 ? bits_float((uint32_t)f->v) : dflt;
}

int64_t spmsg_get_int(const SpMsg *m, uint32_t num, int64_t dflt) {
    const SpField *f = spmsg_get(m, num);
    return f && f->wire == PB_VARINT ? (int64_t)f->v : dflt;
}

void spmsg_free(SpMsg *m) {
    free(m->f);
    buf_free(&m->data);
    memset(m, 0, sizeof *m);
}

/* Fields in number order, repeated fields in their own order (a stable
 * insertion sort: specs have a few dozen fields at most). */
static void msg_write(const SpMsg *m, Buf *out) {
    size_t *ord = xmalloc((m->n + 1) * sizeof *ord);
    for (size_t i = 0; i < m->n; i++) {
        size_t j = i;
        while (j > 0 && m->f[ord[j - 1]].num > m->f[i].num)
            ord[j] = ord[j - 1], j--;
        ord[j] = i;
    }
    for (size_t k = 0; k < m->n; k++) {
        const SpField *f = &m->f[ord[k]];
        put_key(out, f->num, f->wire);
        switch (f->wire) {
        case PB_VARINT:
            put_varint(out, f->v);
            break;
        case PB_I64:
            put_fixed(out, f->v, 8);
            break;
        case PB_I32:
            put_fixed(out, f->v, 4);
            break;
        default:
            put_varint(out, f->len);
            buf_append(out, m->data.data + f->off, f->len);
        }
    }
    free(ord);
}

static int msg_read(SpMsg *m, const unsigned char *p, size_t len, size_t base, Err *err) {
    const unsigned char *start = p, *end = p + len;
    m->present = 1;
    while (p < end) {
        size_t at = base + (size_t)(p - start);
        SpField f;
        const unsigned char *bytes;
        const char *why;
        if (get_field(&p, end, &f, &bytes, &why)) return err_set(err, "byte %zu: %s", at, why);
        if (f.wire == PB_LEN) {
            spmsg_add_bytes(m, f.num, bytes, f.len);
        } else {
            SpField *g = msg_push(m, f.num, f.wire);
            g->v = f.v;
        }
    }
    return 0;
}

/* ---- SpModel ---- */

void spmodel_init(SpModel *m) { memset(m, 0, sizeof *m); }

void spmodel_free(SpModel *m) {
    buf_free(&m->text);
    free(m->off);
    free(m->len);
    free(m->score);
    free(m->type);
    spmsg_free(&m->trainer);
    spmsg_free(&m->normalizer);
    spmsg_free(&m->denormalizer);
    memset(m, 0, sizeof *m);
}

void spmodel_add_piece(SpModel *m, const char *p, size_t n, float score, int type) {
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 1024;
        m->off = xrealloc(m->off, m->cap * sizeof *m->off);
        m->len = xrealloc(m->len, m->cap * sizeof *m->len);
        m->score = xrealloc(m->score, m->cap * sizeof *m->score);
        m->type = xrealloc(m->type, m->cap * sizeof *m->type);
    }
    m->off[m->n] = m->text.len;
    m->len[m->n] = (uint32_t)n;
    m->score[m->n] = score;
    m->type[m->n] = type;
    m->n++;
    buf_append(&m->text, p, n);
    buf_putc(&m->text, '\0');
}

void spmodel_set_bpe_trainer(SpModel *m, const char *input, const char *prefix, int vocab_size,
                             float coverage) {
    if (input) {
        msg_remove(&m->trainer, SPT_INPUT);
        spmsg_add_bytes(&m->trainer, SPT_INPUT, input, strlen(input));
    }
    if (prefix) spmsg_set_bytes(&m->trainer, SPT_MODEL_PREFIX, prefix, strlen(prefix));
    spmsg_set_varint(&m->trainer, SPT_MODEL_TYPE, SP_MODEL_BPE);
    spmsg_set_varint(&m->trainer, SPT_VOCAB_SIZE, vocab_size);
    spmsg_set_float(&m->trainer, SPT_CHARACTER_COVERAGE, coverage);
}

void spmodel_set_normalizer(SpModel *m, const char *name, const void *charsmap, size_t n) {
    spmsg_set_bytes(&m->normalizer, SPN_NAME, name, strlen(name));
    if (n)
        spmsg_set_bytes(&m->normalizer, SPN_PRECOMPILED_CHARSMAP, charsmap, n);
    else
        msg_remove(&m->normalizer, SPN_PRECOMPILED_CHARSMAP);
}

void spmodel_write(const SpModel *m, Buf *out) {
    Buf sub = {0};
    for (size_t i = 0; i < m->n; i++) {
        buf_clear(&sub);
        put_key(&sub, 1, PB_LEN);
        put_varint(&sub, m->len[i]);
        buf_append(&sub, spmodel_piece(m, i), m->len[i]);
        put_key(&sub, 2, PB_I32);
        put_fixed(&sub, float_bits(m->score[i]), 4);
        if (m->type[i] != SP_NORMAL) {
            put_key(&sub, 3, PB_VARINT);
            put_varint(&sub, (uint64_t)(int64_t)m->type[i]);
        }
        put_key(out, 1, PB_LEN);
        put_varint(out, sub.len);
        buf_append(out, sub.data, sub.len);
    }
    const SpMsg *specs[] = {&m->trainer, &m->normalizer, NULL, &m->denormalizer};
    for (int k = 0; k < 4; k++) {
        if (!specs[k] || !specs[k]->present) continue;
        buf_clear(&sub);
        msg_write(specs[k], &sub);
        put_key(out, (uint32_t)k + 2, PB_LEN);
        put_varint(out, sub.len);
        buf_append(out, sub.data, sub.len);
    }
    buf_free(&sub);
}

/* Parse one SentencePiece message into m. */
static int read_piece(SpModel *m, const unsigned char *p, size_t len, size_t base, Err *err) {
    const unsigned char *start = p, *end = p + len, *piece = NULL;
    size_t plen = 0;
    float score = 0;
    int type = SP_NORMAL, have_piece = 0;
    while (p < end) {
        size_t at = base + (size_t)(p - start);
        SpField f;
        const unsigned char *bytes;
        const char *why;
        if (get_field(&p, end, &f, &bytes, &why))
            return err_set(err, "byte %zu: piece %zu: %s", at, m->n, why);
        if (f.num == 1 && f.wire == PB_LEN)
            piece = bytes, plen = f.len, have_piece = 1;
        else if (f.num == 2 && f.wire == PB_I32)
            score = bits_float((uint32_t)f.v);
        else if (f.num == 3 && f.wire == PB_VARINT)
            type = (int)(int64_t)f.v;
        else
            return err_set(err, "byte %zu: piece %zu: unexpected field %u (wire type %u)", at, m->n,
                           f.num, f.wire);
    }
    if (!have_piece) return err_set(err, "byte %zu: piece %zu has no text", base, m->n);
    if (utf8_valid_prefix((const char *)piece, plen) != plen)
        return err_set(err, "byte %zu: piece %zu is not valid UTF-8", base, m->n);
    spmodel_add_piece(m, (const char *)piece, plen, score, type);
    return 0;
}

int spmodel_read(SpModel *m, const char *data, size_t len, Err *err) {
    const unsigned char *start = (const unsigned char *)data, *p = start, *end = start + len;
    while (p < end) {
        size_t at = (size_t)(p - start);
        SpField f;
        const unsigned char *bytes;
        const char *why;
        if (get_field(&p, end, &f, &bytes, &why)) return err_set(err, "byte %zu: %s", at, why);
        if (f.wire != PB_LEN || f.num < 1 || f.num > 5 || f.num == 4)
            return err_set(err, "byte %zu: unexpected field %u (wire type %u) in ModelProto", at,
                           f.num, f.wire);
        size_t base = (size_t)(bytes - start);
        int rc = f.num == 1   ? read_piece(m, bytes, f.len, base, err)
                 : f.num == 2 ? msg_read(&m->trainer, bytes, f.len, base, err)
                 : f.num == 3 ? msg_read(&m->normalizer, bytes, f.len, base, err)
                              : msg_read(&m->denormalizer, bytes, f.len, base, err);
        if (rc) return -1;
    }
    return 0;
}

void spmodel_write_vocab(const SpModel *m, Buf *out) {
    int with_score = spmsg_get_int(&m->trainer, SPT_VOCABULARY_OUTPUT_PIECE_SCORE, 1) != 0;
    char num[64];
    for (size_t i = 0; i < m->n; i++) {
        buf_append(out, spmodel_piece(m, i), m->len[i]);
        if (with_score) {
            snprintf(num, sizeof num, "\t%g", (double)m->score[i]);
            buf_puts(out, num);
        }
        buf_putc(out, '\n');
    }
}
