/* gpu.h - train_bert's CUDA backend (backend.cu) for the trainer loop
 * of trainer.h.
 *
 * The model of bert.c on one GPU per process: cuBLAS matmuls (pedantic
 * float32 in --precision fp32; bfloat16 inputs with float32 accumulation
 * and float32 master weights, gradients and optimizer state in bf16),
 * fused kernels for embeddings + LayerNorm, QKV bias + head layout, the
 * attention (tensor-core tiles, no S x S matrix stored; or cuBLAS and a
 * masked softmax + dropout kernel), bias + dropout + residual + LayerNorm, bias +
 * GELU, the MLM head at the masked tokens only, cross-entropy with its
 * gradient, and LAMB / AdamW; every reduction in a fixed order, so a run
 * repeats bit for bit. Dropout masks are dropout.h's, the same as the CPU's.
 * With several processes the gradients are summed with NCCL (comm.h), layer
 * by layer while the last micro-batch's backward pass goes on.
 */
#ifndef WB_GPU_H
#define WB_GPU_H

#ifdef __cplusplus
extern "C" {
#endif

#include "train/trainer.h"

/* The backend over host model m and optimizer opt: joins the process group
 * (o->rank, o->world, o->local_rank, o->id_file or the launcher's
 * environment), selects GPU local_rank, copies the model there. Returns 0,
 * or -1 with err (no CUDA device, NCCL missing, ...). */
int gpu_backend_open(TrainBackend *be, Bert *m, Optim *opt, const TrainOpts *o, Err *err);

/* Test hook: copy the device gradients into m->grads (after micro-steps,
 * before the optimizer step). */
void gpu_backend_grads_to_host(void *ctx);

#ifdef __cplusplus
}
#endif

#endif
