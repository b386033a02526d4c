/* lstm.h — a stacked LSTM with PyTorch nn.LSTM semantics (gates i, f, g, o
 * in that order; weight_ih_l{k} [4H×I_k], weight_hh_l{k} [4H×H], bias_ih_l{k}
 * and bias_hh_l{k} [4H]; I_0 = input size, I_k = H above; no dropout;
 * time-major like batch_first=False):
 *     i = σ(W_ii x + b_ii + W_hi h + b_hi)     f = σ(…f…)
 *     g = tanh(…g…)                            o = σ(…o…)
 *     c′ = f ⊙ c + i ⊙ g                        h′ = o ⊙ tanh(c′)
 * Forward over a whole sequence caches what the hand-written backward
 * through time needs in one caller-provided scratch buffer; ns_lstm_step
 * advances a state by one input for inference (e.g. beam search).
 * Conventions as in nn.h: backward ADDS into gradients, NULL skips one. */
#ifndef NEXTSTATE_LSTM_H
#define NEXTSTATE_LSTM_H

#include <stdbool.h>
#include <stddef.h>
#include "nextstate/learn/params.h"

#define NS_LSTM_MAX_LAYERS 8

typedef struct ns_lstm_dims {
    int layers, input, hidden; /* L ≤ NS_LSTM_MAX_LAYERS, I, H */
} ns_lstm_dims;

/* Per-layer parameter (or gradient) pointers; biases may be NULL
 * (nn.LSTM(bias=False)). */
typedef struct ns_lstm_w {
    float *w_ih[NS_LSTM_MAX_LAYERS]; /* [4H × I_k] */
    float *w_hh[NS_LSTM_MAX_LAYERS]; /* [4H × H]   */
    float *b_ih[NS_LSTM_MAX_LAYERS]; /* [4H]       */
    float *b_hh[NS_LSTM_MAX_LAYERS]; /* [4H]       */
} ns_lstm_w;

/* Declares "<prefix>.weight_ih_l{k}", "<prefix>.weight_hh_l{k}" and, when
 * bias, "<prefix>.bias_ih_l{k}", "<prefix>.bias_hh_l{k}" (torch's
 * state_dict names) with torch's init U(−1/√H, 1/√H).  Returns the first
 * index, −1 on a declaration error (also when layers is out of range). */
int ns_lstm_declare(ns_params *p, const char *prefix, ns_lstm_dims d, bool bias);
/* Points *w into block (p->data for weights, p->grad for gradients) at the
 * tensors ns_lstm_declare made. */
void ns_lstm_bind(ns_lstm_w *w, const ns_params *p, float *block, const char *prefix, ns_lstm_dims d);

/* Floats of scratch for a sequence of T steps with batch B. */
size_t ns_lstm_scratch(ns_lstm_dims d, int T, int B);

/* y[T×B×H] = the top layer's h_t for inputs x[T×B×I], from initial states
 * h0, c0 [L×B×H] (NULL: zeros).  hn, cn [L×B×H] receive the final states
 * (either may be NULL).  Fills scratch for backward. */
void ns_lstm_forward(float *y, float *hn, float *cn, float *scratch, const float *x, const float *h0,
                     const float *c0, const ns_lstm_w *w, ns_lstm_dims d, int T, int B);

/* Backward through time, given dy[T×B×H] and optionally dhn, dcn [L×B×H]
 * (NULL: zero): accumulates dx[T×B×I], dh0, dc0 [L×B×H] and every
 * non-NULL pointer of *g.  scratch is the matching forward's (its
 * temporary part is overwritten); x, h0, c0, w as given to forward. */
void ns_lstm_backward(float *dx, float *dh0, float *dc0, const ns_lstm_w *g, const float *dy, const float *dhn,
                      const float *dcn, float *scratch, const float *x, const float *h0, const float *c0,
                      const ns_lstm_w *w, ns_lstm_dims d, int T, int B);

/* Floats of scratch ns_lstm_step needs for batch B. */
size_t ns_lstm_step_scratch(ns_lstm_dims d, int B);
/* One time step for inference: h, c [L×B×H] are the state, updated in
 * place; x [B×I]; y [B×H] (may be NULL) receives the top layer's new h. */
void ns_lstm_step(float *y, float *h, float *c, float *scratch, const float *x, const ns_lstm_w *w,
                  ns_lstm_dims d, int B);

#endif
