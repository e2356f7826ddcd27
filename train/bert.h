/* bert.h - BERT for pretraining (masked LM + next sentence), forward and
 * backward in plain C: the reference the GPU trainer must match.
 *
 * The model is NVIDIA's run_pretraining.py / Hugging Face's
 * BertForPreTraining: word + position + token-type embeddings and a
 * LayerNorm; N post-LN encoder layers (multi-head self-attention with the
 * padding mask as NVIDIA adds it, (1 - mask) * -10000 on the scores; GELU
 * feed-forward, erf form); the MLM head (dense, GELU, LayerNorm, decoder
 * tied to the word embeddings, or a matrix of its own with
 * tie_word_embeddings false, plus an output bias) evaluated only at the
 * masked positions; the NSP head (tanh pooler on [CLS], two-way
 * classifier). Losses as NVIDIA's criterion: cross-entropy over the masked
 * tokens (mean) plus cross-entropy of the next-sentence label (mean over
 * the batch).
 *
 * Parameters are one float array in Hugging Face's state-dict order
 * (bert_tensor() names them, for checkpoints and safetensors); gradients
 * have the same layout. Every result is computed in a fixed order, so the
 * output does not depend on the OpenMP thread count. Work that reaches no
 * loss is skipped: the padding after each row's last token, and the top
 * layer's rows other than [CLS] and the masked tokens (its keys and values
 * still cover every token).
 *
 *   BertConfig c; bert_config_load(&c, "bert_config.json", &err);
 *   Bert m; bert_create(&m, &c); bert_init_weights(&m, seed);
 *   m.dropout = 1; m.dropout_key = dropout_pass_key(seed, step, micro);
 *   BertLoss l; bert_forward(&m, &batch, &l); bert_backward(&m, 1.0f);
 *   ... optimizer on m.params / m.grads ...; bert_free(&m);
 */
#ifndef WB_BERT_H
#define WB_BERT_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/common.h"

typedef struct BertConfig {
    int vocab_size; /* rows of the word embedding (and MLM classes) */
    int hidden_size;
    int num_hidden_layers;
    int num_attention_heads;
    int intermediate_size;
    int max_position_embeddings;
    int type_vocab_size;
    float layer_norm_eps;                                    /* 1e-12 */
    float initializer_range;                                 /* 0.02 */
    float hidden_dropout_prob, attention_probs_dropout_prob; /* applied when Bert.dropout is on */
    int untied; /* tie_word_embeddings false: the MLM decoder is a tensor of its own
                   (cls.predictions.decoder.weight, vocab_size x hidden_size); 0 (the
                   default, BERT's): the decoder is the word embeddings */
} BertConfig;

/* Read a Google/NVIDIA/Hugging Face bert_config.json. Unknown keys are
 * ignored; hidden_act must be "gelu" (the erf form); tie_word_embeddings
 * (true by default) false unties the MLM decoder. Returns 0, or -1 with
 * err naming the file and the problem (missing key, bad value, malformed
 * JSON with its byte offset). */
int bert_config_load(BertConfig *c, const char *path, Err *err);

/* The same from a JSON text in memory (name is used in messages). */
int bert_config_parse(BertConfig *c, const char *json, size_t n, const char *name, Err *err);

/* Append c as Hugging Face's config.json for BertForPreTraining (which
 * bert_config_parse reads back). */
void bert_config_json(const BertConfig *c, Buf *out);

/* The largest model bert_create makes: layers, and parameters in all (2^34:
 * 64 GiB per float32 array; weights, gradients and two moments are four). */
#define BERT_MAX_LAYERS 4096
#define BERT_MAX_PARAMS ((int64_t)1 << 34)

/* Check a config: every size positive, heads divide hidden_size, each
 * tensor below 2^31 floats, at most BERT_MAX_LAYERS layers and
 * BERT_MAX_PARAMS parameters, dropout probabilities in [0, 1),
 * layer_norm_eps positive. Returns 0 or -1 with err naming the field. */
int bert_config_check(const BertConfig *c, Err *err);

/* One parameter tensor: its Hugging Face name, shape and place. */
typedef struct BertTensor {
    char name[80];
    int rank;
    int64_t shape[2];
    size_t off, n;
    int decay; /* 1: weight decay applies (not a bias, not LayerNorm) */
} BertTensor;

/* A micro-batch as NVIDIA's pretraining_dataset hands it over: B rows of
 * S tokens; masked_lm_positions / masked_lm_ids have M slots per row, the
 * used ones first (a position 0 ends them, as in the HDF5 files). */
typedef struct BertBatch {
    int B, S, M;
    const int32_t *input_ids, *segment_ids, *input_mask; /* B x S */
    const int32_t *masked_lm_positions, *masked_lm_ids;  /* B x M */
    const int32_t *next_sentence_labels;                 /* B */
} BertBatch;

typedef struct BertLoss {
    float total, mlm, nsp;
    int masked;      /* masked tokens in the batch */
    int mlm_correct; /* of those, predicted right (argmax) */
    int nsp_correct;
} BertLoss;

typedef struct BertAct BertAct; /* activations kept for backward (bert.c) */

typedef struct Bert {
    BertConfig c;
    float *params, *grads; /* nparams each; grads accumulate until bert_zero_grad */
    size_t nparams;
    BertTensor *tensors;
    int ntensors;
    BertAct *act;
    int dropout;          /* training mode: apply the config's dropout (0 after bert_create) */
    uint64_t dropout_key; /* the masks of the next forward (dropout.h's dropout_pass_key) */
    int keep_padding;     /* compute the padding after each row's last token too (tests:
                             the same bits as skipping it) */
    int keep_top;         /* compute the top layer at every token, not only at the rows
                             the heads read (tests: the same results to rounding) */
} Bert;

/* Allocate the parameters (zero) and gradients of config c (checked by
 * bert_config_check first). Returns 0 or -1 with err set. */
int bert_create(Bert *m, const BertConfig *c, Err *err);

/* Free everything; m is zeroed. */
void bert_free(Bert *m);

/* Hugging Face's initialisation from a seed: weights N(0, initializer_range)
 * (embeddings too; not truncated), biases 0, LayerNorm weight 1 and bias 0.
 * Each value is a function of (seed, tensor name, index) alone, filled on
 * bert_set_threads' threads: the same bytes for any thread count. */
void bert_init_weights(Bert *m, uint64_t seed);

/* Tensor i (0 <= i < m->ntensors), or the one named name (NULL if none). */
const BertTensor *bert_tensor(const Bert *m, int i);
const BertTensor *bert_tensor_named(const Bert *m, const char *name);

/* Check a batch against the config: ids inside the vocabulary, segment ids
 * inside type_vocab_size, S <= max_position_embeddings, masked positions
 * inside the sequence, labels 0/1. Returns 0 or -1 with err naming the row. */
int bert_batch_check(const Bert *m, const BertBatch *b, Err *err);

/* Forward pass on a checked batch: losses and accuracy in *loss; the
 * activations are kept for bert_backward. With m->dropout set, the
 * config's dropout applies (masks from m->dropout_key, see dropout.h). Optional outputs (may be
 * NULL): mlm_logits (masked x vocab_size, the masked tokens in row order) and nsp_logits (B x 2).
 */
void bert_forward(Bert *m, const BertBatch *b, BertLoss *loss, float *mlm_logits,
                  float *nsp_logits);

/* Backward pass of the last forward: grads += scale * d(total loss)/d(params)
 * (scale = 1 / accumulation steps for gradient accumulation). */
void bert_backward(Bert *m, float scale);

/* Threads for the kernels and bert_init_weights of every model in the
 * process (0: all cores). Results do not depend on it. */
void bert_set_threads(int n);

/* Set every gradient to 0. */
void bert_zero_grad(Bert *m);

#endif
