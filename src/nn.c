/* nn.c — layers as forward/backward pairs over ns_sgemm (see nn.h).
 * Row reductions (LayerNorm statistics, bias sums) accumulate in double;
 * pointwise functions evaluate in double and round once. */
#include "nextstate/nn.h"

#include <math.h>
#include <string.h>

#include "nextstate/blas.h"

/* ---- dense linear ------------------------------------------------------- */

void ns_linear_forward(float *out, const float *inp, const float *weight, const float *bias, int B, int C,
                       int OC)
{
    if (B <= 0 || OC <= 0) return;
    if (bias)
        for (int b = 0; b < B; b++) memcpy(out + (size_t)b * OC, bias, (size_t)OC * sizeof(float));
    if (C <= 0) {
        if (!bias) memset(out, 0, (size_t)B * OC * sizeof(float));
        return;
    }
    /* out[B×OC] = inp[B×C] · W[OC×C]ᵀ (+ out when it holds the bias) */
    ns_sgemm(false, true, B, OC, C, 1.0f, inp, C, weight, C, bias ? 1.0f : 0.0f, out, OC);
}

void ns_linear_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                        const float *weight, int B, int C, int OC)
{
    if (B <= 0 || OC <= 0) return;
    if (dbias)
        for (int o = 0; o < OC; o++) {
            double s = 0;
            for (int b = 0; b < B; b++) s += dout[(size_t)b * OC + o];
            dbias[o] += (float)s;
        }
    if (C <= 0) return;
    /* dinp[B×C] += dout[B×OC] · W[OC×C] */
    if (dinp) ns_sgemm(false, false, B, C, OC, 1.0f, dout, OC, weight, C, 1.0f, dinp, C);
    /* dW[OC×C] += dout[B×OC]ᵀ · inp[B×C] */
    if (dweight) ns_sgemm(true, false, OC, C, B, 1.0f, dout, OC, inp, C, 1.0f, dweight, C);
}

/* ---- sparse-input linear -------------------------------------------------- */

void ns_sparse_linear_forward(float *out, const int64_t *indptr, const int32_t *indices, const float *values,
                              const float *weight, const float *bias, int B, int C, int OC)
{
    /* Output unit outer: row o of W is read (gathered) for the whole batch. */
    for (int o = 0; o < OC; o++) {
        const float *w = weight + (size_t)o * C;
        float b0 = bias ? bias[o] : 0.0f;
        for (int b = 0; b < B; b++) {
            float s = 0;
            for (int64_t k = indptr[b]; k < indptr[b + 1]; k++) s += values[k] * w[indices[k]];
            out[(size_t)b * OC + o] = s + b0;
        }
    }
}

void ns_sparse_linear_backward(float *dweight, float *dbias, const float *dout, const int64_t *indptr,
                               const int32_t *indices, const float *values, int B, int C, int OC)
{
    for (int o = 0; o < OC; o++) {
        float *dw = dweight ? dweight + (size_t)o * C : NULL;
        double sb = 0;
        for (int b = 0; b < B; b++) {
            float g = dout[(size_t)b * OC + o];
            sb += g;
            if (dw)
                for (int64_t k = indptr[b]; k < indptr[b + 1]; k++) dw[indices[k]] += g * values[k];
        }
        if (dbias) dbias[o] += (float)sb;
    }
}

/* ---- LayerNorm ------------------------------------------------------------ */

void ns_layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                          const float *bias, int N, int C, float eps)
{
    for (int n = 0; n < N; n++) {
        const float *x = inp + (size_t)n * C;
        float *y = out + (size_t)n * C;
        double m = 0, v = 0;
        for (int i = 0; i < C; i++) m += x[i];
        m /= C;
        for (int i = 0; i < C; i++) v += (x[i] - m) * (x[i] - m);
        v /= C;
        double r = 1.0 / sqrt(v + eps);
        for (int i = 0; i < C; i++) {
            double xh = (x[i] - m) * r;
            y[i] = (float)(weight ? xh * weight[i] + (bias ? bias[i] : 0.0f) : xh);
        }
        mean[n] = (float)m;
        rstd[n] = (float)r;
    }
}

void ns_layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                           const float *weight, const float *mean, const float *rstd, int N, int C)
{
    for (int n = 0; n < N; n++) {
        const float *x = inp + (size_t)n * C, *dy = dout + (size_t)n * C;
        double m = mean[n], r = rstd[n];
        /* dx̂ = dy·w;  dx = r · (dx̂ − mean(dx̂) − x̂ · mean(dx̂ · x̂)) */
        double s1 = 0, s2 = 0;
        for (int i = 0; i < C; i++) {
            double xh = (x[i] - m) * r;
            double dxh = weight ? (double)dy[i] * weight[i] : dy[i];
            s1 += dxh;
            s2 += dxh * xh;
            if (weight) {
                if (dweight) dweight[i] += (float)(dy[i] * xh);
                if (dbias) dbias[i] += dy[i];
            }
        }
        s1 /= C;
        s2 /= C;
        if (!dinp) continue;
        float *dx = dinp + (size_t)n * C;
        for (int i = 0; i < C; i++) {
            double xh = (x[i] - m) * r;
            double dxh = weight ? (double)dy[i] * weight[i] : dy[i];
            dx[i] += (float)(r * (dxh - s1 - xh * s2));
        }
    }
}

/* ---- activations ------------------------------------------------------------ */

#define NS_SQRT1_2 0.70710678118654752440
#define NS_INV_SQRT_2PI 0.39894228040143267794

void ns_gelu_forward(float *out, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double x = inp[i];
        out[i] = (float)(0.5 * x * (1.0 + erf(x * NS_SQRT1_2)));
    }
}

void ns_gelu_backward(float *dinp, const float *dout, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double x = inp[i];
        double cdf = 0.5 * (1.0 + erf(x * NS_SQRT1_2));
        double pdf = NS_INV_SQRT_2PI * exp(-0.5 * x * x);
        dinp[i] += (float)(dout[i] * (cdf + x * pdf));
    }
}

void ns_relu_forward(float *out, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = inp[i] > 0 ? inp[i] : 0.0f;
}

void ns_relu_backward(float *dinp, const float *dout, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (inp[i] > 0) dinp[i] += dout[i];
}

/* ---- residual MLP block ------------------------------------------------------ */

/* Scratch layout (floats):
 *   forward cache:  x[B×(DS+DA)]  a1[B×H]  g1[B×H]  z[B×DO]  mean[B]  rstd[B]
 *   backward temps: dz[B×DO]  dg1[B×H]  da1[B×H]  dx[B×(DS+DA)] */
typedef struct resmlp_scr {
    float *x, *a1, *g1, *z, *mean, *rstd, *dz, *dg1, *da1, *dx;
} resmlp_scr;

static resmlp_scr resmlp_carve(float *s, int B, ns_resmlp_dims d)
{
    size_t bx = (size_t)B * (d.ds + d.da), bh = (size_t)B * d.hidden, bo = (size_t)B * d.out;
    resmlp_scr r;
    r.x = s;
    r.a1 = r.x + bx;
    r.g1 = r.a1 + bh;
    r.z = r.g1 + bh;
    r.mean = r.z + bo;
    r.rstd = r.mean + B;
    r.dz = r.rstd + B;
    r.dg1 = r.dz + bo;
    r.da1 = r.dg1 + bh;
    r.dx = r.da1 + bh;
    return r;
}

size_t ns_resmlp_scratch(int B, ns_resmlp_dims d)
{
    return (size_t)B * (2 * (size_t)(d.ds + d.da) + 4 * (size_t)d.hidden + 2 * (size_t)d.out + 2);
}

void ns_resmlp_forward(float *out, float *scratch, const float *hs, const float *ha, const ns_resmlp_w *w,
                       int B, ns_resmlp_dims d)
{
    resmlp_scr s = resmlp_carve(scratch, B, d);
    int dx = d.ds + d.da;
    for (int b = 0; b < B; b++) {
        memcpy(s.x + (size_t)b * dx, hs + (size_t)b * d.ds, (size_t)d.ds * sizeof(float));
        memcpy(s.x + (size_t)b * dx + d.ds, ha + (size_t)b * d.da, (size_t)d.da * sizeof(float));
    }
    ns_linear_forward(s.a1, s.x, w->w1, w->b1, B, dx, d.hidden);        /* a1 = W1·x + b1 */
    ns_gelu_forward(s.g1, s.a1, (size_t)B * d.hidden);                  /* g1 = GELU(a1)  */
    ns_linear_forward(s.z, s.g1, w->w2, w->b2, B, d.hidden, d.out);     /* z = W2·g1 + b2 */
    /* z += h_s · W_resᵀ */
    ns_sgemm(false, true, B, d.out, d.ds, 1.0f, hs, d.ds, w->w_res, d.ds, 1.0f, s.z, d.out);
    ns_layernorm_forward(out, s.mean, s.rstd, s.z, w->ln_w, w->ln_b, B, d.out, NS_LN_EPS);
}

void ns_resmlp_backward(float *dhs, float *dha, const ns_resmlp_w *g, const float *dout, float *scratch,
                        const float *hs, const ns_resmlp_w *w, int B, ns_resmlp_dims d)
{
    resmlp_scr s = resmlp_carve(scratch, B, d);
    int dx = d.ds + d.da;
    size_t bh = (size_t)B * d.hidden;
    memset(s.dz, 0, (size_t)B * d.out * sizeof(float));
    memset(s.dg1, 0, 2 * bh * sizeof(float)); /* dg1 and da1 */
    memset(s.dx, 0, (size_t)B * dx * sizeof(float));
    ns_layernorm_backward(s.dz, g->ln_w, g->ln_b, dout, s.z, w->ln_w, s.mean, s.rstd, B, d.out);
    ns_linear_backward(s.dg1, g->w2, g->b2, s.dz, s.g1, w->w2, B, d.hidden, d.out);
    ns_gelu_backward(s.da1, s.dg1, s.a1, bh);
    bool need_dx = dhs || dha;
    ns_linear_backward(need_dx ? s.dx : NULL, g->w1, g->b1, s.da1, s.x, w->w1, B, dx, d.hidden);
    /* residual: dW_res[DO×DS] += dzᵀ · h_s;  dh_s[B×DS] += dz · W_res */
    if (g->w_res) ns_sgemm(true, false, d.out, d.ds, B, 1.0f, s.dz, d.out, hs, d.ds, 1.0f, g->w_res, d.ds);
    if (dhs) {
        ns_sgemm(false, false, B, d.ds, d.out, 1.0f, s.dz, d.out, w->w_res, d.ds, 1.0f, dhs, d.ds);
        for (int b = 0; b < B; b++)
            for (int i = 0; i < d.ds; i++) dhs[(size_t)b * d.ds + i] += s.dx[(size_t)b * dx + i];
    }
    if (dha)
        for (int b = 0; b < B; b++)
            for (int i = 0; i < d.da; i++) dha[(size_t)b * d.da + i] += s.dx[(size_t)b * dx + d.ds + i];
}

/* ---- FiLM block ----------------------------------------------------------------- */

/* Scratch layout: n[B×D] (LN output)  pre[B×D]  mean[B]  rstd[B]  dpre[B×D]. */
size_t ns_film_scratch(int B, int D) { return (size_t)B * (3 * (size_t)D + 2); }

void ns_film_forward(float *out, float *scratch, const float *h, const float *A, const float *b,
                     const float *ln_w, const float *ln_b, int B, int D)
{
    size_t nd = (size_t)B * D;
    float *n = scratch, *pre = n + nd, *mean = pre + nd, *rstd = mean + B;
    ns_layernorm_forward(n, mean, rstd, h, ln_w, ln_b, B, D, NS_LN_EPS);
    for (size_t i = 0; i < nd; i++) pre[i] = n[i] * (1.0f + A[i]) + b[i];
    ns_gelu_forward(out, pre, nd);
}

void ns_film_backward(float *dh, float *dA, float *db, float *dln_w, float *dln_b, const float *dout,
                      float *scratch, const float *h, const float *A, const float *ln_w, int B, int D)
{
    size_t nd = (size_t)B * D;
    float *n = scratch, *pre = n + nd, *mean = pre + nd, *rstd = mean + B, *dpre = rstd + B;
    memset(dpre, 0, nd * sizeof(float));
    ns_gelu_backward(dpre, dout, pre, nd);
    for (size_t i = 0; i < nd; i++) {
        if (dA) dA[i] += dpre[i] * n[i];
        if (db) db[i] += dpre[i];
        dpre[i] *= 1.0f + A[i]; /* now ∂/∂LN(h) */
    }
    ns_layernorm_backward(dh, dln_w, dln_b, dpre, h, ln_w, mean, rstd, B, D);
}
