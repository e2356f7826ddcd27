/* fuzz_safetensors.c - fuzz target of the safetensors reader
 * (train/ckpt.h ckpt_init_load, what --init_checkpoint FILE.safetensors
 * reads).
 *
 * The input is a .safetensors file (an 8-byte header length, a JSON header
 * of tensors with dtype, shape and data offsets, then the data), written
 * to a scratch file and loaded into the model FUZZ_ST_CONFIG, the tiny
 * BERT of fuzz_ckpt.c whose Hugging Face export the seeds hold. A refusal
 * has a message; what loads has a note of text (no NUL byte).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "train/bert.h"
#include "train/ckpt.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_ST_CONFIG                                                                             \
    "{\"hidden_size\": 16, \"num_hidden_layers\": 1, \"num_attention_heads\": 2, "                 \
    "\"intermediate_size\": 32, "                                                                  \
    "\"max_position_embeddings\": 32, \"type_vocab_size\": 2, \"vocab_size\": 40, "                \
    "\"hidden_act\": \"gelu\"}"

/* One input: data as a .safetensors file. Returns 0; a broken promise
 * aborts (fuzz_fail). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static Bert model;
    static FuzzTmp tmp;
    if (!model.params) {
        fuzz_quiet("fuzz_safetensors");
        BertConfig c;
        Err err;
        if (bert_config_parse(&c, FUZZ_ST_CONFIG, strlen(FUZZ_ST_CONFIG), "fuzz", &err) ||
            bert_create(&model, &c, &err)) {
            fprintf(stderr, "fuzz_safetensors: %s\n", err.msg);
            exit(3);
        }
    }
    fuzz_tmp_write(&tmp, ".safetensors", data, size);
    Buf note = {0};
    Err err = {{0}};
    if (ckpt_init_load(tmp.path, &model, &note, &err)) {
        if (!err.msg[0]) fuzz_fail("refused without a message");
    } else if (note.len && memchr(note.data, '\0', note.len)) {
        fuzz_fail("a note with a NUL byte");
    }
    buf_free(&note);
    return 0;
}
