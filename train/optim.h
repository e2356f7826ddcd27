/* optim.h - the optimizers and the learning-rate schedule of BERT
 * pretraining.
 *
 * LAMB as NVIDIA's run_pretraining.py uses it (apex FusedLAMB): gradients
 * divided by max(global norm / max_grad_norm, 1); Adam moments with bias
 * correction; update = m^ / (sqrt(v^) + eps) + wd * w (decoupled weight
 * decay, 0 for biases and LayerNorm); the step is lr * ||w|| / ||update||
 * per tensor for tensors with weight decay (lr where a norm is 0), plain
 * lr for the others. AdamW as torch.optim.AdamW after
 * torch.nn.utils.clip_grad_norm_(max_grad_norm). The schedule is NVIDIA's
 * PolyWarmUpScheduler: with progress = step / total_steps (step counted
 * from 1), lr = base * progress / warmup during warm-up, else
 * base * (1 - progress) ^ 0.5.
 *
 * Norms are summed in fixed chunks in a fixed order, so a step gives the
 * same bits for any thread count. The gradient buffer is used for the
 * update (apex does the same) and holds garbage afterwards: zero it before
 * the next accumulation.
 */
#ifndef WB_OPTIM_H
#define WB_OPTIM_H

#include <stdint.h>

#include "train/bert.h"

typedef enum { OPT_LAMB, OPT_ADAMW } OptKind;

typedef struct OptimConfig {
    OptKind kind;
    float weight_decay;  /* 0.01 */
    float beta1, beta2;  /* 0.9, 0.999 */
    float eps;           /* 1e-6 */
    float max_grad_norm; /* 1.0; 0: no clipping */
} OptimConfig;

typedef struct Optim {
    OptimConfig c;
    float *m, *v; /* first and second moments, nparams each */
    size_t n;
    int64_t step;          /* steps taken */
    double last_grad_norm; /* global gradient norm before clipping, of the last step */
} Optim;

/* NVIDIA's defaults for kind (above). */
void optim_config_default(OptimConfig *c, OptKind kind);

/* Moments for model m (zeroed). */
void optim_init(Optim *o, const OptimConfig *c, const Bert *m);
void optim_free(Optim *o);

/* One step with learning rate lr on m->params from m->grads (see the
 * file comment); o->step is incremented first (bias correction uses it). */
void optim_step(Optim *o, Bert *m, float lr);

/* PolyWarmUpScheduler's learning rate at optimizer step `step` (1-based). */
float poly_warmup_lr(int64_t step, float base_lr, float warmup, int64_t total_steps);

#endif
