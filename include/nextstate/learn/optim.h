/* optim.h — AdamW exactly as torch.optim.AdamW (1.13 / 2.x single-tensor
 * path: decoupled weight decay, bias-corrected moments, eps added after the
 * square root), a linear learning-rate warm-up as torch's
 * LinearLR(start_factor, 1.0, total_iters), and gradient-norm clipping as
 * torch.nn.utils.clip_grad_norm_. */
#ifndef NEXTSTATE_OPTIM_H
#define NEXTSTATE_OPTIM_H

#include <stddef.h>
#include <stdint.h>
#include "nextstate/learn/params.h"

/* Hyperparameters are doubles, like torch's Python floats: 1 − β2 must be
 * 0.001 exactly as torch computes it, not 1 − (float)0.999. */
typedef struct ns_adamw {
    double lr;           /* base learning rate (the schedule scales it) */
    double beta1, beta2; /* 0.9, 0.999 */
    double eps;          /* 1e-8 */
    double weight_decay; /* 0.01 (torch's AdamW default) */
    int64_t t;           /* steps taken so far */
} ns_adamw;

/* Fills *o with torch's defaults (betas 0.9/0.999, eps 1e-8) and the given
 * learning rate and weight decay; t = 0. */
void ns_adamw_init(ns_adamw *o, double lr, double weight_decay);

/* One AdamW update of n parameters at step t (1-based), as torch does it:
 *   p ← p·(1 − lr·wd);  m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²
 *   p ← p − lr/(1−β1ᵗ) · m / (√v/√(1−β2ᵗ) + eps)
 * param, m, v [n] updated in place; grad [n]; the four must not overlap. */
void ns_adamw_update(float *param, const float *grad, float *m, float *v, size_t n, double lr, double beta1,
                     double beta2, double eps, double wd, int64_t t);

/* o->t += 1, then updates every tensor of p (data from grad, moments m, v)
 * with learning rate lr (e.g. o->lr · ns_warmup_factor(…)); tensors flagged
 * no_decay get weight decay 0. */
void ns_adamw_step(ns_adamw *o, ns_params *p, double lr);

/* torch.optim.lr_scheduler.LinearLR(start_factor=start, end_factor=1,
 * total_iters=n) after `step` scheduler steps (epochs or batches):
 *   start + (1 − start) · min(step, n) / n      (1 when n ≤ 0).
 * The paper: start 0.1, n = 10 epochs. */
double ns_warmup_factor(int64_t step, int64_t n, double start);

/* Scales p->grad so that its global L2 norm is at most max_norm (torch:
 * coefficient max_norm / (norm + 1e-6), applied when < 1); returns the norm
 * before clipping. */
float ns_clip_grad_norm(ns_params *p, float max_norm);

#endif
