/* spmodel.h - SentencePiece model files: .model (protobuf) and .vocab.
 *
 * A .model is a serialized sentencepiece.ModelProto (proto2, from
 * sentencepiece_model.proto):
 *
 *   ModelProto      1 pieces (repeated SentencePiece)  2 trainer_spec
 *                   3 normalizer_spec  5 denormalizer_spec
 *   SentencePiece   1 piece (string)  2 score (float)  3 type (enum:
 *                   1 NORMAL, 2 UNKNOWN, 3 CONTROL, 4 USER_DEFINED,
 *                   5 UNUSED, 6 BYTE; 1 is the default and not written)
 *   TrainerSpec     1 input  2 model_prefix  3 model_type (1 UNIGRAM, 2 BPE)
 *                   4 vocab_size  10 character_coverage (float)
 *                   11 input_sentence_size  19 shuffle_input_sentence ...
 *   NormalizerSpec  1 name  2 precompiled_charsmap (bytes)
 *                   3 add_dummy_prefix  4 remove_extra_whitespaces
 *                   5 escape_whitespaces  6 normalization_rule_tsv
 *
 * The wire format is written by hand here. The specs are kept as generic
 * field lists (SpMsg), so a model read from spm_train is written back byte
 * for byte, fields we do not name included; the writer puts fields in
 * field-number order, as the C++ protobuf library does, and leaves out
 * what was never set (proto2 presence: a default is written only when it
 * was set explicitly).
 *
 * The nmt_nfkc normalizer needs precompiled_charsmap, a compiled
 * normalization table (a 4-byte little-endian trie size, a double-array
 * trie over the UTF-8 input, then the NUL-separated replacement strings).
 * spm_train copies it from tables built into the library; here it is
 * generated from ICU by charsmap_nmt_nfkc() (charsmap.h) and passed to
 * spmodel_set_normalizer. A table taken from an existing model works the
 * same way, and the "identity" normalizer needs none. See NOTES-bpe.md.
 *
 *   SpModel m;
 *   spmodel_init(&m);
 *   spmodel_add_piece(&m, "<unk>", 5, 0, SP_UNKNOWN);
 *   spmodel_set_bpe_trainer(&m, "corpus.txt", "bert", 32000, 0.9999f);
 *   charsmap_nmt_nfkc(&charsmap, &err);
 *   spmodel_set_normalizer(&m, "nmt_nfkc", charsmap.data, charsmap.len);
 *   spmodel_write(&m, &buf);  spmodel_write_vocab(&m, &vbuf);
 *   spmodel_free(&m);
 */
#ifndef WB_SPMODEL_H
#define WB_SPMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/common.h"

/* The largest .model the programs read: 256 MiB, ten times a model of a
 * million pieces (about 25 MB); protobuf itself stops at 2 GiB. Bounds the
 * memory a stream without an end (/dev/zero) can take. */
#define SP_MODEL_MAX_BYTES ((size_t)256 << 20)

/* SentencePiece.Type */
enum {
    SP_NORMAL = 1,
    SP_UNKNOWN = 2,
    SP_CONTROL = 3,
    SP_USER_DEFINED = 4,
    SP_UNUSED = 5,
    SP_BYTE = 6
};
/* TrainerSpec.ModelType */
enum { SP_MODEL_UNIGRAM = 1, SP_MODEL_BPE = 2, SP_MODEL_WORD = 3, SP_MODEL_CHAR = 4 };

/* TrainerSpec field numbers used by name. */
enum {
    SPT_INPUT = 1,
    SPT_MODEL_PREFIX = 2,
    SPT_MODEL_TYPE = 3,
    SPT_VOCAB_SIZE = 4,
    SPT_CHARACTER_COVERAGE = 10,
    SPT_INPUT_SENTENCE_SIZE = 11,
    SPT_SHUFFLE_INPUT_SENTENCE = 19,
    SPT_VOCABULARY_OUTPUT_PIECE_SCORE = 32,
    SPT_UNK_ID = 40,
    SPT_BOS_ID = 41,
    SPT_EOS_ID = 42,
    SPT_PAD_ID = 43,
};
/* NormalizerSpec field numbers. */
enum {
    SPN_NAME = 1,
    SPN_PRECOMPILED_CHARSMAP = 2,
    SPN_ADD_DUMMY_PREFIX = 3,
    SPN_REMOVE_EXTRA_WHITESPACES = 4,
    SPN_ESCAPE_WHITESPACES = 5,
    SPN_NORMALIZATION_RULE_TSV = 6,
};

/* Protobuf wire types. */
enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

/* One field as it is on the wire: a varint or fixed value in v, or bytes
 * at data.data + off (len bytes) for PB_LEN. */
typedef struct SpField {
    uint32_t num;
    uint8_t wire;
    uint64_t v;
    size_t off, len;
} SpField;

/* A message as a list of fields in the order read or set. */
typedef struct SpMsg {
    SpField *f;
    size_t n, cap;
    Buf data;
    int present; /* the message itself was read or set */
} SpMsg;

/* Set a varint field (int32, int64, uint, bool, enum), replacing a
 * previous value; a negative int32 is written as 10 bytes, as protobuf
 * does. */
void spmsg_set_varint(SpMsg *m, uint32_t num, int64_t v);
/* Set a float field, replacing a previous value. */
void spmsg_set_float(SpMsg *m, uint32_t num, float v);
/* Set a string/bytes field, replacing a previous value. */
void spmsg_set_bytes(SpMsg *m, uint32_t num, const void *p, size_t n);
/* Append one value to a repeated string/bytes field. */
void spmsg_add_bytes(SpMsg *m, uint32_t num, const void *p, size_t n);
/* The last field numbered num, or NULL. */
const SpField *spmsg_get(const SpMsg *m, uint32_t num);
/* Float value of field num (PB_I32), or dflt when absent. */
float spmsg_get_float(const SpMsg *m, uint32_t num, float dflt);
/* Varint value of field num as int64 (int32 sign restored), or dflt. */
int64_t spmsg_get_int(const SpMsg *m, uint32_t num, int64_t dflt);
/* Free the message's memory and zero it. */
void spmsg_free(SpMsg *m);

typedef struct SpModel {
    /* pieces, in id order */
    Buf text;    /* piece bytes back to back, each followed by a NUL */
    size_t *off; /* piece i starts at text.data + off[i] */
    uint32_t *len;
    float *score;
    int *type; /* SP_* */
    size_t n, cap;
    SpMsg trainer, normalizer, denormalizer;
} SpModel;

/* An empty model (no pieces, no specs). Pair with spmodel_free(). */
void spmodel_init(SpModel *m);
void spmodel_free(SpModel *m);

/* Piece i as a NUL-terminated string (its length is m->len[i]). */
static inline const char *spmodel_piece(const SpModel *m, size_t i) {
    return m->text.data + m->off[i];
}

/* Append piece p[0..n) with its score and type. */
void spmodel_add_piece(SpModel *m, const char *p, size_t n, float score, int type);

/* Fill trainer_spec as spm_train does for `--input=INPUT
 * --model_prefix=PREFIX --vocab_size=N --character_coverage=C
 * --model_type=bpe`: exactly those five fields (input and prefix are
 * skipped when NULL). Further options go through spmsg_set_*. */
void spmodel_set_bpe_trainer(SpModel *m, const char *input, const char *prefix, int vocab_size,
                             float coverage);

/* Fill normalizer_spec with `name` and, when n > 0, the compiled table
 * charsmap[0..n). spm_train writes only these two fields for its default
 * nmt_nfkc (add_dummy_prefix, remove_extra_whitespaces and
 * escape_whitespaces keep their default, true); set them with
 * spmsg_set_varint to write them explicitly. */
void spmodel_set_normalizer(SpModel *m, const char *name, const void *charsmap, size_t n);

/* Serialize the model into out (appended). */
void spmodel_write(const SpModel *m, Buf *out);

/* Parse a serialized ModelProto data[0..len) into m (which must be freshly
 * initialised). Returns 0, or -1 with err naming the byte offset of the
 * problem (truncated field, bad wire type, a piece that is not UTF-8). */
int spmodel_read(SpModel *m, const char *data, size_t len, Err *err);

/* Write the .vocab text spm_train writes beside the model: one line per
 * piece in id order, "PIECE<TAB>SCORE" with the score as C++ streams print
 * a float (%g: "-0", "-1996", "-8.12345", "-1.23457e+06"), or PIECE alone
 * when trainer_spec sets vocabulary_output_piece_score to false. */
void spmodel_write_vocab(const SpModel *m, Buf *out);

#endif
