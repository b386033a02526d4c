/* optim.c — AdamW, linear warm-up, gradient clipping (see optim.h). */
#include "nextstate/learn/optim.h"

#include <math.h>

#include "nextstate/util/fastmath.h"

void ns_adamw_init(ns_adamw *o, double lr, double weight_decay)
{
    o->lr = lr;
    o->beta1 = 0.9;
    o->beta2 = 0.999;
    o->eps = 1e-8;
    o->weight_decay = weight_decay;
    o->t = 0;
}

/* The four arrays do not overlap (restrict), so the loop vectorises with no
 * alias checks (the Makefile compiles this file with -O3 -fno-math-errno:
 * sqrtf becomes one sqrtps).  Every element sees the same float operations
 * in the same order either way: torch's formula, rounded as torch rounds. */
NS_VEC_CLONES void ns_adamw_update(float *restrict param, const float *restrict grad, float *restrict m,
                                   float *restrict v, size_t n, double lr, double beta1, double beta2, double eps,
                                   double wd, int64_t t)
{
    /* Scalars in double, then rounded once, like torch's Python-float
     * arguments to its float32 tensor ops. */
    double bc1 = 1.0 - pow(beta1, (double)t);
    double bc2 = 1.0 - pow(beta2, (double)t);
    float decay = (float)(1.0 - lr * wd);
    float b1 = (float)beta1, c1 = (float)(1.0 - beta1), b2 = (float)beta2, c2 = (float)(1.0 - beta2);
    float step = (float)(-lr / bc1), fe = (float)eps;
    float bc2s = (float)sqrt(bc2);
    for (size_t i = 0; i < n; i++) {
        float g = grad[i];
        float p = param[i] * decay;
        m[i] = m[i] * b1 + g * c1;
        v[i] = v[i] * b2 + c2 * g * g;
        float denom = sqrtf(v[i]) / bc2s + fe;
        param[i] = p + step * (m[i] / denom);
    }
}

void ns_adamw_step(ns_adamw *o, ns_params *p, double lr)
{
    o->t++;
    for (int i = 0; i < p->n; i++) {
        const ns_tensor_info *t = &p->t[i];
        ns_adamw_update(p->data + t->offset, p->grad + t->offset, p->m + t->offset, p->v + t->offset, t->count,
                        lr, o->beta1, o->beta2, o->eps, t->no_decay ? 0.0 : o->weight_decay, o->t);
    }
}

double ns_warmup_factor(int64_t step, int64_t n, double start)
{
    if (n <= 0 || step >= n) return 1.0;
    if (step < 0) step = 0;
    return start + (1.0 - start) * (double)step / (double)n;
}

float ns_clip_grad_norm(ns_params *p, float max_norm)
{
    double s = 0;
    for (int i = 0; i < p->n; i++) {
        const float *g = p->grad + p->t[i].offset;
        for (size_t k = 0; k < p->t[i].count; k++) s += (double)g[k] * g[k];
    }
    double norm = sqrt(s);
    double coef = max_norm / (norm + 1e-6);
    if (coef < 1.0)
        for (int i = 0; i < p->n; i++) {
            float *g = p->grad + p->t[i].offset;
            for (size_t k = 0; k < p->t[i].count; k++) g[k] = (float)(g[k] * coef);
        }
    return (float)norm;
}
