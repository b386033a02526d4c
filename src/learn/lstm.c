/* lstm.c — stacked LSTM forward, backward through time, single steps (see lstm.h).
 * Gate nonlinearities are fastmath.h's float sigmoid and tanh (vectorised:
 * the Makefile compiles this file with -O3); bias gradients are column sums
 * accumulated in double.
 *
 * Scratch layout (floats), per layer k = 0…L−1, then temporaries:
 *   gates_k[T×B×4H]  post-activation i, f, g, o of every step
 *   c_k[T×B×H]  h_k[T×B×H]  tanh(c)_k[T×B×H]
 *   dG[T×B×4H]  dH_a[T×B×H]  dH_b[T×B×H]  dh[B×H]  dc[B×H] */
#include "nextstate/learn/lstm.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "nextstate/util/blas.h"
#include "nextstate/learn/nn.h"
#include "nextstate/util/fastmath.h"

static const char *const names[4] = {"weight_ih_l%d", "weight_hh_l%d", "bias_ih_l%d", "bias_hh_l%d"};

static void tensor_name(char *out, size_t n, const char *prefix, int which, int layer)
{
    char suffix[32];
    snprintf(suffix, sizeof suffix, names[which], layer);
    snprintf(out, n, "%s%s%s", prefix, prefix[0] ? "." : "", suffix);
}

int ns_lstm_declare(ns_params *p, const char *prefix, ns_lstm_dims d, bool bias)
{
    char name[NS_PARAM_NAME_MAX + 32];
    if (d.layers < 1 || d.layers > NS_LSTM_MAX_LAYERS || d.input < 0 || d.hidden < 1) {
        int64_t bad = -1;
        return ns_params_add(p, prefix[0] ? prefix : "lstm", 1, &bad, NS_INIT_ZEROS, 0.0f);
    }
    float bound = ns_init_bound_linear(d.hidden);
    int first = -1;
    for (int k = 0; k < d.layers; k++)
        for (int which = 0; which < (bias ? 4 : 2); which++) {
            int64_t shape[2] = {4 * (int64_t)d.hidden, which == 1 ? d.hidden : k == 0 ? d.input : d.hidden};
            tensor_name(name, sizeof name, prefix, which, k);
            int idx = ns_params_add(p, name, which < 2 ? 2 : 1, shape, NS_INIT_UNIFORM, bound);
            if (idx < 0) return -1;
            if (first < 0) first = idx;
        }
    return first;
}

void ns_lstm_bind(ns_lstm_w *w, const ns_params *p, float *block, const char *prefix, ns_lstm_dims d)
{
    char name[NS_PARAM_NAME_MAX + 32];
    memset(w, 0, sizeof *w);
    for (int k = 0; k < d.layers && k < NS_LSTM_MAX_LAYERS; k++) {
        float **slot[4] = {&w->w_ih[k], &w->w_hh[k], &w->b_ih[k], &w->b_hh[k]};
        for (int which = 0; which < 4; which++) {
            tensor_name(name, sizeof name, prefix, which, k);
            *slot[which] = ns_params_at(p, block, name);
        }
    }
}

size_t ns_lstm_scratch(ns_lstm_dims d, int T, int B)
{
    size_t tbh = (size_t)T * B * d.hidden;
    return (size_t)d.layers * 7 * tbh + 6 * tbh + 2 * (size_t)B * d.hidden;
}

typedef struct lstm_scr {
    float *gates[NS_LSTM_MAX_LAYERS], *c[NS_LSTM_MAX_LAYERS], *h[NS_LSTM_MAX_LAYERS], *tc[NS_LSTM_MAX_LAYERS];
    float *dG, *dHa, *dHb, *dh, *dc;
} lstm_scr;

static lstm_scr carve(float *s, ns_lstm_dims d, int T, int B)
{
    size_t tbh = (size_t)T * B * d.hidden;
    lstm_scr r;
    for (int k = 0; k < d.layers; k++) {
        r.gates[k] = s;
        r.c[k] = s + 4 * tbh;
        r.h[k] = r.c[k] + tbh;
        r.tc[k] = r.h[k] + tbh;
        s = r.tc[k] + tbh;
    }
    r.dG = s;
    r.dHa = r.dG + 4 * tbh;
    r.dHb = r.dHa + tbh;
    r.dh = r.dHb + tbh;
    r.dc = r.dh + (size_t)B * d.hidden;
    return r;
}

/* G[rows×4H] = bias_ih + bias_hh broadcast (or 0); returns the sgemm beta. */
static float fill_bias(float *G, const float *bi, const float *bh, size_t rows, int H4)
{
    if ((!bi && !bh) || rows == 0) return bi || bh ? 1.0f : 0.0f;
    if (bi && bh)
        for (int j = 0; j < H4; j++) G[j] = bi[j] + bh[j];
    else memcpy(G, bi ? bi : bh, (size_t)H4 * sizeof(float));
    for (size_t r = 1; r < rows; r++) memcpy(G + r * H4, G, (size_t)H4 * sizeof(float));
    return 1.0f;
}

/* One batch row of cell(): the gates gi, gf, gg, go [H each] in place, c,
 * tc (when has_tc), h [H] from cp[H] (zeros when !has_cp).  No two arrays
 * overlap.  The flags are constants at every call, so each version is a
 * straight vectorisable loop. */
static NS_ALWAYS_INLINE void cell_row(float *restrict gi, float *restrict gf, float *restrict gg, float *restrict go,
                            float *restrict c, float *restrict tc, float *restrict h, const float *restrict cp,
                            bool has_cp, bool has_tc, int H)
{
    for (int j = 0; j < H; j++) {
        float i = ns_fast_sigmoidf(gi[j]), f = ns_fast_sigmoidf(gf[j]);
        float g = ns_fast_tanhf(gg[j]), o = ns_fast_sigmoidf(go[j]);
        float cv = has_cp ? f * cp[j] + i * g : i * g;
        float t = ns_fast_tanhf(cv);
        gi[j] = i;
        gf[j] = f;
        gg[j] = g;
        go[j] = o;
        c[j] = cv;
        if (has_tc) tc[j] = t;
        h[j] = o * t;
    }
}

/* Gate nonlinearities and the cell update of one step, in place on G[B×4H]
 * (pre-activations in, activations out); cprev may be NULL (zeros), tc too
 * (not kept); cprev must not overlap c. */
NS_VEC_CLONES static void cell(float *G, float *c, float *tc, float *h, const float *cprev, int B, int H)
{
    for (int b = 0; b < B; b++) {
        float *g = G + (size_t)b * 4 * H;
        size_t o = (size_t)b * H;
        float *gi = g, *gf = g + H, *gg = g + 2 * H, *go = g + 3 * H;
        if (cprev && tc) cell_row(gi, gf, gg, go, c + o, tc + o, h + o, cprev + o, true, true, H);
        else if (tc) cell_row(gi, gf, gg, go, c + o, tc + o, h + o, NULL, false, true, H);
        else if (cprev) cell_row(gi, gf, gg, go, c + o, NULL, h + o, cprev + o, true, false, H);
        else cell_row(gi, gf, gg, go, c + o, NULL, h + o, NULL, false, false, H);
    }
}

void ns_lstm_forward(float *y, float *hn, float *cn, float *scratch, const float *x, const float *h0,
                     const float *c0, const ns_lstm_w *w, ns_lstm_dims d, int T, int B)
{
    int H = d.hidden, H4 = 4 * d.hidden;
    size_t bh = (size_t)B * H;
    lstm_scr s = carve(scratch, d, T, B);
    for (int k = 0; k < d.layers; k++) {
        const float *in = k == 0 ? x : s.h[k - 1];
        int In = k == 0 ? d.input : H;
        /* input contributions of all steps at once: G = in[TB×In] · W_ihᵀ + b */
        float beta = fill_bias(s.gates[k], w->b_ih[k], w->b_hh[k], (size_t)T * B, H4);
        if (T > 0 && B > 0 && In > 0)
            ns_sgemm(false, true, T * B, H4, In, 1.0f, in, In, w->w_ih[k], In, beta, s.gates[k], H4);
        else if (beta == 0.0f)
            memset(s.gates[k], 0, (size_t)T * B * H4 * sizeof(float));
        for (int t = 0; t < T; t++) {
            const float *hp = t ? s.h[k] + (t - 1) * bh : (h0 ? h0 + k * bh : NULL);
            const float *cp = t ? s.c[k] + (t - 1) * bh : (c0 ? c0 + k * bh : NULL);
            float *G = s.gates[k] + (size_t)t * B * H4;
            if (hp) ns_sgemm(false, true, B, H4, H, 1.0f, hp, H, w->w_hh[k], H, 1.0f, G, H4);
            cell(G, s.c[k] + t * bh, s.tc[k] + t * bh, s.h[k] + t * bh, cp, B, H);
        }
        for (int which = 0; which < 2; which++) {
            float *dst = which ? cn : hn;
            const float *init = which ? c0 : h0;
            if (!dst) continue;
            if (T > 0) memcpy(dst + k * bh, (which ? s.c[k] : s.h[k]) + (T - 1) * bh, bh * sizeof(float));
            else if (init) memcpy(dst + k * bh, init + k * bh, bh * sizeof(float));
            else memset(dst + k * bh, 0, bh * sizeof(float));
        }
    }
    if (y && T > 0) memcpy(y, s.h[d.layers - 1], (size_t)T * bh * sizeof(float));
}

/* Gate gradients of one batch row at one step: db[4H] from the gates gb[4H],
 * tanh(c) tc[H], the incoming dH[H] + dh[H] and the cell gradient dc[H]
 * (updated to the previous step's), cp[H] the previous cell (zeros when
 * !has_cp).  No two arrays overlap. */
static NS_ALWAYS_INLINE void gate_grads(float *restrict db, float *restrict dc, const float *restrict gb,
                              const float *restrict tc, const float *restrict dH, const float *restrict dh,
                              const float *restrict cp, bool has_cp, int H)
{
    for (int j = 0; j < H; j++) {
        float gi = gb[j], gf = gb[H + j], gg = gb[2 * H + j], go = gb[3 * H + j];
        float dhv = dH[j] + dh[j];
        float dcv = dc[j] + dhv * go * (1.0f - tc[j] * tc[j]);
        float cpv = has_cp ? cp[j] : 0.0f;
        db[j] = dcv * gg * gi * (1.0f - gi);
        db[H + j] = dcv * cpv * gf * (1.0f - gf);
        db[2 * H + j] = dcv * gi * (1.0f - gg * gg);
        db[3 * H + j] = dhv * tc[j] * go * (1.0f - go);
        dc[j] = dcv * gf;
    }
}

/* gate_grads for every batch row of one step (cp NULL: zeros). */
NS_VEC_CLONES static void step_grads(float *dG, float *dc, const float *G, const float *tc, const float *dH,
                                     const float *dh, const float *cp, int B, int H)
{
    size_t H4 = 4 * (size_t)H;
    for (int b = 0; b < B; b++) {
        size_t q = (size_t)b * H;
        if (cp) gate_grads(dG + b * H4, dc + q, G + b * H4, tc + q, dH + q, dh + q, cp + q, true, H);
        else gate_grads(dG + b * H4, dc + q, G + b * H4, tc + q, dH + q, dh + q, NULL, false, H);
    }
}

void ns_lstm_backward(float *dx, float *dh0, float *dc0, const ns_lstm_w *g, const float *dy, const float *dhn,
                      const float *dcn, float *scratch, const float *x, const float *h0, const float *c0,
                      const ns_lstm_w *w, ns_lstm_dims d, int T, int B)
{
    int H = d.hidden, H4 = 4 * d.hidden;
    size_t bh = (size_t)B * H, tb = (size_t)T * B;
    lstm_scr s = carve(scratch, d, T, B);
    float *dHcur = s.dHa, *dHbelow = s.dHb;
    if (T > 0) memcpy(dHcur, dy, tb * H * sizeof(float));
    for (int k = d.layers - 1; k >= 0; k--) {
        const float *in = k == 0 ? x : s.h[k - 1];
        int In = k == 0 ? d.input : H;
        if (dhn) memcpy(s.dh, dhn + k * bh, bh * sizeof(float));
        else memset(s.dh, 0, bh * sizeof(float));
        if (dcn) memcpy(s.dc, dcn + k * bh, bh * sizeof(float));
        else memset(s.dc, 0, bh * sizeof(float));
        for (int t = T - 1; t >= 0; t--) {
            const float *G = s.gates[k] + (size_t)t * B * H4;
            const float *tc = s.tc[k] + t * bh, *dH = dHcur + t * bh;
            const float *cp = t ? s.c[k] + (t - 1) * bh : (c0 ? c0 + k * bh : NULL);
            float *dG = s.dG + (size_t)t * B * H4;
            step_grads(dG, s.dc, G, tc, dH, s.dh, cp, B, H);
            /* dh_{t−1}[B×H] = dG_t[B×4H] · W_hh[4H×H] */
            ns_sgemm(false, false, B, H, H4, 1.0f, dG, H4, w->w_hh[k], H, 0.0f, s.dh, H);
        }
        if (dh0)
            for (size_t q = 0; q < bh; q++) dh0[k * bh + q] += s.dh[q];
        if (dc0)
            for (size_t q = 0; q < bh; q++) dc0[k * bh + q] += s.dc[q];
        if (T == 0) continue; /* h_n = h_0: the gradient passed straight through */
        if (g->w_hh[k]) { /* dW_hh[4H×H] += Σ_t dG_tᵀ · h_{t−1} */
            if (T > 1)
                ns_sgemm(true, false, H4, H, (T - 1) * B, 1.0f, s.dG + (size_t)B * H4, H4, s.h[k], H, 1.0f,
                         g->w_hh[k], H);
            if (h0) ns_sgemm(true, false, H4, H, B, 1.0f, s.dG, H4, h0 + k * bh, H, 1.0f, g->w_hh[k], H);
        }
        if (g->w_ih[k] && In > 0) /* dW_ih[4H×In] += dGᵀ · in */
            ns_sgemm(true, false, H4, In, T * B, 1.0f, s.dG, H4, in, In, 1.0f, g->w_ih[k], In);
        ns_colsums_add(g->b_ih[k], g->b_hh[k], s.dG, tb, H4);
        /* gradient into this layer's input sequence: dG[TB×4H] · W_ih[4H×In] */
        if (k > 0) {
            ns_sgemm(false, false, T * B, H, H4, 1.0f, s.dG, H4, w->w_ih[k], H, 0.0f, dHbelow, H);
            float *tmp = dHcur;
            dHcur = dHbelow;
            dHbelow = tmp;
        } else if (dx && In > 0) {
            ns_sgemm(false, false, T * B, In, H4, 1.0f, s.dG, H4, w->w_ih[0], In, 1.0f, dx, In);
        }
    }
}

size_t ns_lstm_step_scratch(ns_lstm_dims d, int B) { return (size_t)B * 5 * d.hidden; }

void ns_lstm_step(float *y, float *h, float *c, float *scratch, const float *x, const ns_lstm_w *w,
                  ns_lstm_dims d, int B)
{
    int H = d.hidden, H4 = 4 * d.hidden;
    size_t bh = (size_t)B * H;
    float *G = scratch, *cprev = scratch + 4 * bh; /* the cell state before the step (cell() needs it apart) */
    for (int k = 0; k < d.layers; k++) {
        const float *in = k == 0 ? x : h + (k - 1) * bh; /* layer below, already advanced */
        int In = k == 0 ? d.input : H;
        float beta = fill_bias(G, w->b_ih[k], w->b_hh[k], (size_t)B, H4);
        if (In > 0) ns_sgemm(false, true, B, H4, In, 1.0f, in, In, w->w_ih[k], In, beta, G, H4);
        else if (beta == 0.0f) memset(G, 0, bh * 4 * sizeof(float));
        ns_sgemm(false, true, B, H4, H, 1.0f, h + k * bh, H, w->w_hh[k], H, 1.0f, G, H4);
        memcpy(cprev, c + k * bh, bh * sizeof(float));
        cell(G, c + k * bh, NULL, h + k * bh, cprev, B, H);
    }
    if (y) memcpy(y, h + (d.layers - 1) * bh, bh * sizeof(float));
}
