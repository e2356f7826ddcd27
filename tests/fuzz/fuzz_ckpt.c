/* fuzz_ckpt.c - fuzz target of the checkpoint reader (train/ckpt.h
 * ckpt_load).
 *
 * The input is a .wbckpt file of the model FUZZ_CKPT_CONFIG (the seed
 * corpus has checkpoints of it written by train_bert_cpu). It is written to
 * a scratch file and loaded into that model with its LAMB state, then with
 * the weights only. A checkpoint ends with a hash of everything before it,
 * so almost every change of the header would be refused by the hash alone:
 * when the input has the completion marker in its place, it is loaded a
 * second time with the hash made right, which lets changed headers reach
 * the header parser.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "train/bert.h"
#include "train/ckpt.h"
#include "tests/fuzz/fuzz.h"
#include "train/optim.h"

/* The model of the seed checkpoints (tests/fuzz/seeds.sh trains it). */
#define FUZZ_CKPT_CONFIG                                                                           \
    "{\"hidden_size\": 16, \"num_hidden_layers\": 1, \"num_attention_heads\": 2, "                 \
    "\"intermediate_size\": 32, "                                                                  \
    "\"max_position_embeddings\": 32, \"type_vocab_size\": 2, \"vocab_size\": 40, "                \
    "\"hidden_act\": \"gelu\"}"

static Bert model;
static Optim opt;
static FuzzTmp tmp;

static void load(const uint8_t *data, size_t size) {
    fuzz_tmp_write(&tmp, ".wbckpt", data, size);
    for (int with_optim = 1; with_optim >= 0; with_optim--) {
        CkptInfo info;
        Err err;
        if (ckpt_load(tmp.path, &model, with_optim ? &opt : NULL, &info, &err) == 0) {
            if (info.nranks < 1 || !info.ranks)
                fuzz_fail("loaded with %d ranks, array %p", info.nranks, (void *)info.ranks);
            (void)info.ranks[info.nranks - 1].row;
            free(info.ranks);
        } else {
            (void)strlen(err.msg);
        }
    }
}

/* One input: data as a checkpoint file of FUZZ_CKPT_CONFIG's model.
 * Returns 0; a broken promise aborts (fuzz_fail). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!model.params) {
        fuzz_quiet("fuzz_ckpt");
        BertConfig c;
        Err err;
        if (bert_config_parse(&c, FUZZ_CKPT_CONFIG, strlen(FUZZ_CKPT_CONFIG), "fuzz", &err) ||
            bert_create(&model, &c, &err)) {
            fprintf(stderr, "fuzz_ckpt: %s\n", err.msg);
            exit(3);
        }
        OptimConfig oc;
        optim_config_default(&oc, OPT_LAMB);
        optim_init(&opt, &oc, &model);
    }
    load(data, size);
    /* "WBCKEND\0" then the 64-bit FNV-1a hash of all before it */
    if (size >= 28 && !memcmp(data + size - 16, "WBCKEND", 8)) {
        uint8_t *fixed = malloc(size);
        memcpy(fixed, data, size);
        uint64_t h = 0xcbf29ce484222325ull;
        for (size_t i = 0; i < size - 16; i++)
            h = (h ^ fixed[i]) * 0x100000001b3ull;
        if (memcmp(fixed + size - 8, &h, 8)) {
            memcpy(fixed + size - 8, &h, 8);
            load(fixed, size);
        }
        free(fixed);
    }
    return 0;
}
