/* loss.c — InfoNCE, action disambiguation, cosine distance, MSE (see loss.h).
 * Softmax and log-sum-exp are evaluated in double per row. */
#include "nextstate/learn/loss.h"

#include <math.h>
#include <string.h>

#include "nextstate/util/blas.h"

/* ---- L2 normalisation ---------------------------------------------------------- */

void ns_l2norm_forward(float *out, float *norm, const float *x, int N, int D)
{
    for (int n = 0; n < N; n++) {
        const float *xi = x + (size_t)n * D;
        double s = 0;
        for (int j = 0; j < D; j++) s += (double)xi[j] * xi[j];
        double nr = sqrt(s);
        if (nr < NS_NORM_EPS) nr = NS_NORM_EPS;
        float *o = out + (size_t)n * D;
        for (int j = 0; j < D; j++) o[j] = (float)(xi[j] / nr);
        norm[n] = (float)nr;
    }
}

void ns_l2norm_backward(float *dx, const float *du, const float *u, const float *norm, int N, int D)
{
    for (int n = 0; n < N; n++) {
        const float *ui = u + (size_t)n * D, *dui = du + (size_t)n * D;
        float *dxi = dx + (size_t)n * D;
        double inv = 1.0 / norm[n];
        if (norm[n] <= NS_NORM_EPS) { /* clamped: u = x / eps is linear */
            for (int j = 0; j < D; j++) dxi[j] += (float)(dui[j] * inv);
            continue;
        }
        double dot = 0;
        for (int j = 0; j < D; j++) dot += (double)ui[j] * dui[j];
        for (int j = 0; j < D; j++) dxi[j] += (float)((dui[j] - ui[j] * dot) * inv);
    }
}

/* Softmax of row z[n] in place (probabilities); returns log Σ exp z. */
static double softmax_row(float *z, int n)
{
    float mx = z[0];
    for (int k = 1; k < n; k++)
        if (z[k] > mx) mx = z[k];
    double s = 0;
    for (int k = 0; k < n; k++) s += exp((double)z[k] - mx);
    double lse = mx + log(s);
    for (int k = 0; k < n; k++) z[k] = (float)exp((double)z[k] - lse);
    return lse;
}

/* ---- InfoNCE -------------------------------------------------------------------------- */

/* Scratch: pn[B×D] tn[B×D] pnorm[B] tnorm[B] probs[B×B] | dpn[B×D] dtn[B×D] */
size_t ns_infonce_scratch(int B, int D) { return (size_t)B * (4 * (size_t)D + 2 + (size_t)B); }

float ns_infonce_forward(float *scratch, const float *pred, const float *target, int B, int D, float tau)
{
    if (B <= 0) return 0.0f;
    size_t bd = (size_t)B * D;
    float *pn = scratch, *tn = pn + bd, *pnorm = tn + bd, *tnorm = pnorm + B, *probs = tnorm + B;
    ns_l2norm_forward(pn, pnorm, pred, B, D);
    ns_l2norm_forward(tn, tnorm, target, B, D);
    /* logits[B×B] = pn · tnᵀ / τ */
    ns_sgemm(false, true, B, B, D, 1.0f / tau, pn, D, tn, D, 0.0f, probs, B);
    double loss = 0;
    for (int i = 0; i < B; i++) {
        float *row = probs + (size_t)i * B;
        double zi = row[i];
        loss += softmax_row(row, B) - zi;
    }
    return (float)(loss / B);
}

void ns_infonce_backward(float *dpred, float *dtarget, float dloss, float *scratch, int B, int D, float tau)
{
    if (B <= 0) return;
    size_t bd = (size_t)B * D;
    float *pn = scratch, *tn = pn + bd, *pnorm = tn + bd, *tnorm = pnorm + B, *probs = tnorm + B;
    float *dpn = probs + (size_t)B * B, *dtn = dpn + bd;
    /* G = (probs − I) · dloss / B, in place */
    float scale = dloss / (float)B;
    for (int i = 0; i < B; i++) {
        float *row = probs + (size_t)i * B;
        for (int j = 0; j < B; j++) row[j] = (row[j] - (i == j ? 1.0f : 0.0f)) * scale;
    }
    if (dpred) { /* dpn[B×D] = G · tn / τ */
        ns_sgemm(false, false, B, D, B, 1.0f / tau, probs, B, tn, D, 0.0f, dpn, D);
        ns_l2norm_backward(dpred, dpn, pn, pnorm, B, D);
    }
    if (dtarget) { /* dtn[B×D] = Gᵀ · pn / τ */
        ns_sgemm(true, false, B, D, B, 1.0f / tau, probs, B, pn, D, 0.0f, dtn, D);
        ns_l2norm_backward(dtarget, dtn, tn, tnorm, B, D);
    }
}

/* ---- action disambiguation -------------------------------------------------------------- */

/* Scratch: pn[N×K×D] pnorm[N×K] tn[N×D] tnorm[N] probs[N×K] | dpn[N×K×D] dtn[N×D]
 * (rows past count[i] are left unset and never read). */
size_t ns_action_loss_scratch(int N, int K, int D)
{
    size_t nk = (size_t)N * K;
    return 2 * nk * D + 2 * nk + 2 * (size_t)N * D + N;
}

static inline int row_count(const int32_t *count, int i, int K) { return count ? count[i] : K; }
static inline int row_truth(const int32_t *truth, int i) { return truth ? truth[i] : i; }

float ns_action_loss_forward(float *scratch, const float *pred, const float *target, const int32_t *count,
                             const int32_t *truth, int N, int K, int D, float tau)
{
    if (N <= 0) return 0.0f;
    size_t nk = (size_t)N * K, nd = (size_t)N * D;
    float *pn = scratch, *pnorm = pn + nk * D, *tn = pnorm + nk, *tnorm = tn + nd, *probs = tnorm + N;
    ns_l2norm_forward(tn, tnorm, target, N, D);
    double loss = 0;
    for (int i = 0; i < N; i++) {
        int c = row_count(count, i, K);
        size_t r0 = (size_t)i * K;
        ns_l2norm_forward(pn + r0 * D, pnorm + r0, pred + r0 * D, c, D);
        /* z_i[c] = pn_i[c×D] · tn_i / τ */
        float *z = probs + r0;
        ns_sgemv(false, c, D, 1.0f / tau, pn + r0 * D, D, tn + (size_t)i * D, 0.0f, z);
        double zt = z[row_truth(truth, i)];
        loss += softmax_row(z, c) - zt;
    }
    return (float)(loss / N);
}

void ns_action_loss_backward(float *dpred, float *dtarget, float dloss, float *scratch, const int32_t *count,
                             const int32_t *truth, int N, int K, int D, float tau)
{
    if (N <= 0) return;
    size_t nk = (size_t)N * K, nd = (size_t)N * D;
    float *pn = scratch, *pnorm = pn + nk * D, *tn = pnorm + nk, *tnorm = tn + nd, *probs = tnorm + N;
    float *dpn = probs + nk, *dtn = dpn + nk * D;
    float scale = dloss / (float)N;
    for (int i = 0; i < N; i++) {
        int c = row_count(count, i, K), t = row_truth(truth, i);
        size_t r0 = (size_t)i * K;
        float *g = probs + r0; /* g = (p − onehot) · dloss / N, in place */
        for (int k = 0; k < c; k++) g[k] = (g[k] - (k == t ? 1.0f : 0.0f)) * scale;
        const float *tni = tn + (size_t)i * D;
        if (dpred) { /* dpn[i][k] = g[k] · tn_i / τ */
            float *d = dpn + r0 * D;
            for (int k = 0; k < c; k++)
                for (int j = 0; j < D; j++) d[(size_t)k * D + j] = g[k] * tni[j] / tau;
            ns_l2norm_backward(dpred + r0 * D, d, pn + r0 * D, pnorm + r0, c, D);
        }
        if (dtarget) /* dtn_i = pn_i[c×D]ᵀ · g / τ */
            ns_sgemv(true, D, c, 1.0f / tau, pn + r0 * D, D, g, 0.0f, dtn + (size_t)i * D);
    }
    if (dtarget) ns_l2norm_backward(dtarget, dtn, tn, tnorm, N, D);
}

float ns_action_grid_forward(float *scratch, const float *pred, const float *target, int N, int D, float tau)
{
    return ns_action_loss_forward(scratch, pred, target, NULL, NULL, N, N, D, tau);
}

void ns_action_grid_backward(float *dpred, float *dtarget, float dloss, float *scratch, int N, int D, float tau)
{
    ns_action_loss_backward(dpred, dtarget, dloss, scratch, NULL, NULL, N, N, D, tau);
}

/* ---- cosine distance ---------------------------------------------------------------------- */

/* Scratch: nx[N] ny[N] cos[N] (clamped norms and the cosines). */
size_t ns_cosine_loss_scratch(int N) { return 3 * (size_t)N; }

static int selected(const uint8_t *mask, int N)
{
    if (!mask) return N;
    int m = 0;
    for (int i = 0; i < N; i++) m += mask[i] != 0;
    return m;
}

float ns_cosine_loss_forward(float *scratch, const float *pred, const float *target, const uint8_t *mask,
                             int N, int D)
{
    float *nx = scratch, *ny = nx + N, *cs = ny + N;
    int m = selected(mask, N);
    double loss = 0;
    for (int i = 0; i < N; i++) {
        if (mask && !mask[i]) continue;
        const float *x = pred + (size_t)i * D, *y = target + (size_t)i * D;
        double xx = 0, yy = 0, xy = 0;
        for (int j = 0; j < D; j++) {
            xx += (double)x[j] * x[j];
            yy += (double)y[j] * y[j];
            xy += (double)x[j] * y[j];
        }
        double a = fmax(sqrt(xx), NS_NORM_EPS), b = fmax(sqrt(yy), NS_NORM_EPS);
        double c = xy / (a * b);
        nx[i] = (float)a;
        ny[i] = (float)b;
        cs[i] = (float)c;
        loss += 1.0 - c;
    }
    return m ? (float)(loss / m) : 0.0f;
}

void ns_cosine_loss_backward(float *dpred, float *dtarget, float dloss, const float *scratch,
                             const float *pred, const float *target, const uint8_t *mask, int N, int D)
{
    const float *nx = scratch, *ny = nx + N, *cs = ny + N;
    int m = selected(mask, N);
    if (!m) return;
    double s = -(double)dloss / m; /* ∂loss/∂cos_i */
    for (int i = 0; i < N; i++) {
        if (mask && !mask[i]) continue;
        const float *x = pred + (size_t)i * D, *y = target + (size_t)i * D;
        double a = nx[i], b = ny[i], c = cs[i];
        /* ∂c/∂x = y/(ab) − c·x/a²  (the second term vanishes when ‖x‖ is clamped) */
        double cx = a > NS_NORM_EPS ? c / (a * a) : 0.0, cy = b > NS_NORM_EPS ? c / (b * b) : 0.0;
        for (int j = 0; j < D; j++) {
            if (dpred) dpred[(size_t)i * D + j] += (float)(s * (y[j] / (a * b) - cx * x[j]));
            if (dtarget) dtarget[(size_t)i * D + j] += (float)(s * (x[j] / (a * b) - cy * y[j]));
        }
    }
}

/* ---- MSE ---------------------------------------------------------------------------------------- */

float ns_mse_forward(const float *pred, const float *target, const uint8_t *mask, int N, int D)
{
    int m = selected(mask, N);
    if (!m || D <= 0) return 0.0f;
    double s = 0;
    for (int i = 0; i < N; i++) {
        if (mask && !mask[i]) continue;
        for (int j = 0; j < D; j++) {
            double d = (double)pred[(size_t)i * D + j] - target[(size_t)i * D + j];
            s += d * d;
        }
    }
    return (float)(s / ((double)m * D));
}

void ns_mse_backward(float *dpred, float *dtarget, float dloss, const float *pred, const float *target,
                     const uint8_t *mask, int N, int D)
{
    int m = selected(mask, N);
    if (!m || D <= 0) return;
    double s = 2.0 * dloss / ((double)m * D);
    for (int i = 0; i < N; i++) {
        if (mask && !mask[i]) continue;
        for (int j = 0; j < D; j++) {
            size_t k = (size_t)i * D + j;
            float g = (float)(s * ((double)pred[k] - target[k]));
            if (dpred) dpred[k] += g;
            if (dtarget) dtarget[k] -= g;
        }
    }
}
