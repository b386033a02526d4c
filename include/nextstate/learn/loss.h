/* loss.h — training losses as forward/backward pairs (see nn.h for the
 * conventions: row-major float32, backward ADDS into gradient buffers, NULL
 * skips a gradient).  Each forward returns the scalar loss and keeps what
 * backward needs in a caller-provided scratch buffer of *_scratch() floats.
 *
 * Backward uses the scratch of the matching forward (and overwrites its
 * temporary part), so call forward, then backward, once each.
 *
 * Cosine similarity everywhere is that of L2-normalised vectors as
 * torch.nn.functional.normalize makes them: u = x / max(‖x‖, 1e-12).
 *
 * The second paper's (EmbedPlan) objective is
 *     L = L_state + λ·L_action,  λ = 2,  τ = 0.07,
 * both terms cross-entropies over cosine similarities divided by τ (the
 * paper's eqs. 27–28 apply sim = cosine, so vectors ARE normalised; the
 * temperature divides the cosine, not a raw dot product). */
#ifndef NEXTSTATE_LOSS_H
#define NEXTSTATE_LOSS_H

#include <stddef.h>
#include <stdint.h>

#define NS_NORM_EPS 1e-12f

/* ---- InfoNCE with in-batch negatives (L_state) ----------------------------
 *   logits[i][j] = cos(pred_i, target_j) / τ          i, j < B
 *   loss = −(1/B) Σ_i log softmax_j(logits[i])[i]
 * i.e. cross-entropy with the diagonal as the labels, mean over the batch;
 * the other B−1 targets of the batch are the negatives of row i.  Gradients
 * flow into both pred and target (the target is itself a trained projection
 * in EmbedPlan). */
size_t ns_infonce_scratch(int B, int D);
/* pred[B×D], target[B×D] → loss; scratch filled for backward. */
float ns_infonce_forward(float *scratch, const float *pred, const float *target, int B, int D, float tau);
/* dpred[B×D] += ∂loss/∂pred · dloss, dtarget[B×D] likewise (either NULL). */
void ns_infonce_backward(float *dpred, float *dtarget, float dloss, float *scratch, int B, int D, float tau);

/* ---- action-disambiguation loss (L_action) --------------------------------
 * Row i holds K candidate predictions pred[i][k] = T(h_s_i, h_{a_k}), of
 * which count[i] ≤ K are valid (the rest is padding, ignored) and index
 * truth[i] < count[i] is the one of the action actually taken:
 *   z[i][k] = cos(pred[i][k], target_i) / τ,   k < count[i]
 *   loss = −(1/N) Σ_i log softmax_k(z[i])[truth[i]]
 * The paper's form: the candidates are the true action and up to K = 50
 * other actions applicable in s_i (count[i] = 1 + their number).
 * count == NULL means every row has K candidates; truth == NULL means
 * truth[i] = i (requires K ≥ N), which is the original code's grid: N = K
 * (11) states each paired with the N sampled actions of the batch,
 * pred[i][j] = T(h_s_i, h_a_j), cross-entropy on the diagonal — see
 * ns_action_grid_forward. */
size_t ns_action_loss_scratch(int N, int K, int D);
/* pred[N×K×D], target[N×D], count[N], truth[N] → loss. */
float ns_action_loss_forward(float *scratch, const float *pred, const float *target, const int32_t *count,
                             const int32_t *truth, int N, int K, int D, float tau);
/* dpred[N×K×D] (padding rows untouched), dtarget[N×D] (either NULL). */
void ns_action_loss_backward(float *dpred, float *dtarget, float dloss, float *scratch, const int32_t *count,
                             const int32_t *truth, int N, int K, int D, float tau);
/* The grid variant: pred[N×N×D] with row i = state i under each of the N
 * actions, label i (same as the general form with K = N, count = truth =
 * NULL). */
float ns_action_grid_forward(float *scratch, const float *pred, const float *target, int N, int D, float tau);
void ns_action_grid_backward(float *dpred, float *dtarget, float dloss, float *scratch, int N, int D,
                             float tau);

/* ---- cosine distance (first paper's LSTM "state" mode) --------------------
 *   loss = mean over the rows i with mask[i] ≠ 0 of 1 − cos(pred_i, target_i)
 * (mask NULL: every row; no row selected → 0).  pred, target: N×D. */
size_t ns_cosine_loss_scratch(int N);
float ns_cosine_loss_forward(float *scratch, const float *pred, const float *target, const uint8_t *mask,
                             int N, int D);
void ns_cosine_loss_backward(float *dpred, float *dtarget, float dloss, const float *scratch,
                             const float *pred, const float *target, const uint8_t *mask, int N, int D);

/* ---- mean squared error (first paper's "delta" mode) -----------------------
 *   loss = Σ_{i: mask[i]≠0} Σ_j (pred_ij − target_ij)² / (rows selected · D)
 * — torch.nn.MSELoss() (mean over all elements) when mask is NULL.  No scratch. */
float ns_mse_forward(const float *pred, const float *target, const uint8_t *mask, int N, int D);
void ns_mse_backward(float *dpred, float *dtarget, float dloss, const float *pred, const float *target,
                     const uint8_t *mask, int N, int D);

/* ---- helpers ------------------------------------------------------------------ */

/* Row-wise L2 normalisation: out[N×D] = x / max(‖x‖, NS_NORM_EPS), norm[N]
 * receives the clamped norms (out may alias x). */
void ns_l2norm_forward(float *out, float *norm, const float *x, int N, int D);
/* dx[N×D] += (du − u·(u·du)) / norm for rows whose ‖x‖ ≥ eps, du / eps
 * otherwise (u = the normalised rows, as forward wrote them). */
void ns_l2norm_backward(float *dx, const float *du, const float *u, const float *norm, int N, int D);

#endif
