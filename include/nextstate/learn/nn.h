/* nn.h — neural-network layers as plain forward/backward pairs (llm.c style).
 *
 * Conventions (every function below follows them):
 *   - Row-major float32 tensors; a batch of B vectors of width C is B×C.
 *   - Linear weights use PyTorch's nn.Linear layout W[out×in], so a
 *     state_dict tensor copies over unchanged.
 *   - X_forward writes its outputs (and whatever backward needs into caller
 *     buffers); X_backward ADDS into the gradient buffers it is given (the
 *     caller zeroes them).  A NULL gradient pointer skips that gradient.
 *   - Matrix products go through ns_sgemm (blas.h).
 *   - No allocation, no state: the caller owns every buffer.
 *
 * Two composite blocks used by the world model's transition network T are
 * built from these primitives (ns_resmlp_*, ns_film_*); they keep what
 * backward needs in one caller-provided scratch buffer whose size (in
 * floats) the matching *_scratch function returns. */
#ifndef NEXTSTATE_NN_H
#define NEXTSTATE_NN_H

#include <stddef.h>
#include <stdint.h>

#include "nextstate/util/error.h"

/* dst1[j] += Σ_r M[r×cols + j] and the same for dst2 (either may be NULL),
 * for j < cols, summed in double over r in order; columns in blocks so that
 * M is read row by row (bias gradients). */
void ns_colsums_add(float *dst1, float *dst2, const float *M, size_t rows, int cols);
/* out[j] = q · C[j·D … j·D + D) for j < n: the scores of n candidate rows
 * against one query.  Summed in 16 interleaved lanes (vectorised), so the
 * rounding differs from a sequential loop's; equal rows give equal scores. */
void ns_dots(float *out, const float *q, const float *C, int n, int D);
/* The same over rows rows[0 … n) of C (a table of cached candidates).
 * Both use an AVX-512 kernel where the CPU has it and D % 16 == 0: its
 * fused multiply-adds round in the last bits unlike the C loop's, the same
 * way for every row. */
void ns_dots_rows(float *out, const float *q, const float *C, const int64_t *rows, int n, int D);

/* ---- dense linear: out = inp · Wᵀ + bias ------------------------------- */

/* out[B×OC] = inp[B×C] · weight[OC×C]ᵀ + bias[OC]   (bias may be NULL).
 * B = 1 takes a matrix-vector kernel (AVX-512 where the CPU has it) instead
 * of ns_sgemm: its sums round unlike sgemm's in the last bits. */
void ns_linear_forward(float *out, const float *inp, const float *weight, const float *bias, int B, int C,
                       int OC);
/* bfloat16 inference: x rounded to nearest even (NaN stays NaN). */
uint16_t ns_bf16(float x);
/* ns_linear_forward with the weights in bfloat16, packed by ns_bf16_pack,
 * and each input row rounded to bfloat16; products accumulated in float.
 * Half the weight bytes of the float layer, for batch-1 inference whose
 * weights would not fit in L2 otherwise.  AVX-512 BF16 (vdpbf16ps) where the
 * CPU has it, else the same arithmetic in C (sums may differ in the last
 * bits between the two). */
void ns_linear_forward_bf16(float *out, const float *inp, const uint16_t *packed, const float *bias, int B, int C,
                            int OC);
/* ns_linear_forward_i8 with packed_i8, else ns_linear_forward_bf16 with
 * packed, ns_linear_forward when both are NULL — the one place inference
 * picks its precision. */
void ns_linear_forward_as(float *out, const float *inp, const float *weight, const uint16_t *packed,
                          const uint8_t *packed_i8, const float *bias, int B, int C, int OC);
/* Packing of weight[OC×C] for it: blocks of NS_BF16_OB outputs, each a run
 * of input pairs (both inputs of a pair next to each other per output),
 * zero-padded; ns_bf16_packed_size elements. */
enum { NS_BF16_OB = 128 };
size_t ns_bf16_packed_size(int C, int OC);
void ns_bf16_pack(uint16_t *dst, const float *weight, int C, int OC);
/* int8 inference: weights quantised per output row (symmetric, scale =
 * max|W[o,:]|/127) by ns_i8_pack, each input row quantised the same way
 * when the layer runs (scale max|x|/127, nearest even, stored as 128 + q);
 * the integer products are summed exactly in int32 and rescaled:
 *   out[o] = (Σ_c (128 + q_x[c])·q_W[o,c] − 128·Σ_c q_W[o,c]) · s_x·s_W[o] + bias[o].
 * A quarter of the float layer's weight bytes; AVX-512 VNNI (vpdpbusd)
 * where the CPU has it — two rows per pass over the weights in a batch, and
 * sixteen with AMX (tdpbusd) where the CPU and Linux grant it — else the
 * same integer sums in C (bit-identical results either way).  The packing (ns_i8_packed_size bytes): the NS_BF16_OB-
 * padded scales (float) and row sums (int32), then blocks of NS_BF16_OB
 * outputs, each a run of input quads (the four inputs of a quad next to
 * each other per output), zero-padded.  dst must be 4-byte aligned. */
size_t ns_i8_packed_size(int C, int OC);
void ns_i8_pack(uint8_t *dst, const float *weight, int C, int OC);
void ns_linear_forward_i8(float *out, const float *inp, const uint8_t *packed, const float *bias, int B, int C,
                          int OC);
/* ns_linear_forward_i8 for one input row x whose largest |x[c]| the caller
 * knows (xmax, exactly: e.g. from ns_layernorm_gelu1), so the layer skips
 * finding it — the same bits. */
void ns_linear_forward_i8_max(float *out, const float *x, float xmax, const uint8_t *packed, const float *bias, int C,
                              int OC);
/* The same choice as ns_linear_forward_as for one row with xmax = max|x[c]|
 * (used by int8 only). */
void ns_linear_forward_as_max(float *out, const float *x, float xmax, const float *weight, const uint16_t *packed,
                              const uint8_t *packed_i8, const float *bias, int C, int OC);
/* int4 inference (issue #17): weights quantised in groups of G inputs per
 * output row (G = NS_I4_GROUP or 32; symmetric: q = nearest(W/s) clamped to
 * [-7, 7], stored as the nibble 8 + q, with the scale s[o,g] of least squared
 * error Σ (W − s·q)² over the group among (max|W[o,group g]|/7)·(1 − k/32),
 * k = 0 … 12 — clipping a group's largest weights when that gives the rest
 * finer steps), each input row
 * quantised as ns_linear_forward_i8 quantises it (int8, scale s_x =
 * max|x|/127, nearest even).  Per group the integer products are summed
 * exactly in int32 (|Σ| ≤ 15·127·G), then scaled and accumulated in float
 * group by group with fused multiply-adds, in group order:
 *   f[o] = fma((float)(Σ_{c∈g} (8 + q_W[o,c])·q_x[c] − 8·Σ_{c∈g} q_x[c]), s[o,g], f[o])   (f = 0, g = 0, 1, …)
 *   out[o] = f[o]·s_x + bias[o].
 * About half the int8 layer's weight bytes (0.5 + 4/G bytes a weight).
 * AVX-512 VNNI (vpdpbusd: the nibbles are the unsigned operand) where the
 * CPU has it, else the same integer sums and float operations in C: the
 * same bits either way.  Batches run row by row.  Packing
 * (ns_i4_packed_size bytes, dst 64-byte aligned for speed, 4-byte at
 * least): a 64-byte header (magic, G, C, OC), then per block of NS_BF16_OB
 * outputs and group g: NS_BF16_OB float scales (zero past OC), then G/8
 * pairs of input quads, 4·NS_BF16_OB bytes each: byte 4·o + k of pair p holds
 * input g·G + 8p + k in its low nibble and g·G + 8p + 4 + k in its high one.
 * Supported: G ∈ {32, 64}, C a multiple of G, C ≤ 8192, OC ≥ 1; otherwise
 * ns_i4_packed_size is 0 and ns_i4_pack, ns_i4_unpack and
 * ns_linear_forward_i4 return NS_ERR_UNSUPPORTED (the last also when the
 * packing's header does not match C and OC) without writing. */
enum { NS_I4_GROUP = 64 };
size_t ns_i4_packed_size(int C, int OC, int G);
ns_status ns_i4_pack(uint8_t *dst, const float *weight, int C, int OC, int G);
/* The packing's weights as q[OC×C] (in [-7, 7]) and scales s[OC × C/G]. */
ns_status ns_i4_unpack(int8_t *q, float *scale, const uint8_t *packed, int C, int OC);
ns_status ns_linear_forward_i4(float *out, const float *inp, const uint8_t *packed, const float *bias, int B, int C,
                               int OC);
/* ns_linear_forward_i4 for one row x with xmax = max|x[c]| known (see
 * ns_linear_forward_i8_max). */
ns_status ns_linear_forward_i4_max(float *out, const float *x, float xmax, const uint8_t *packed, const float *bias,
                                   int C, int OC);
/* int8 candidate tables (scoring cached projections at batch 1): each of n
 * rows of X[n×D] quantised as ns_i8_pack quantises a weight row (symmetric,
 * scale max|x|/127, nearest), its integer sum kept; ns_i8_table_size bytes
 * (dst 4-byte aligned): float scale[n], int32 sum[n], then from a 64-byte
 * boundary the rows, ns_i8_table_row(D) bytes each (zero-padded). */
size_t ns_i8_table_row(int D);
size_t ns_i8_table_size(int n, int D);
void ns_i8_table_pack(uint8_t *dst, const float *X, int n, int D);
/* out[j] ≈ mul · x · X[rows[j]] (rows NULL: j) for j < n, from a table of
 * ntab rows packed by ns_i8_table_pack: x quantised as a layer's input row
 * (ns_linear_forward_i8), the integer products summed exactly, then
 * (Σ − 128·sum[r]) · (s_x·mul · scale[r]) — the same bits from the AVX-512
 * VNNI kernel and the C loop, and the order of the rows' scores does not
 * depend on mul > 0. */
void ns_i8_table_dots(float *out, const float *x, float mul, const uint8_t *tab, int ntab, int D,
                      const int64_t *rows, int n);
/* dinp[B×C] += dout[B×OC] · weight[OC×C];  dweight[OC×C] += doutᵀ · inp[B×C];
 * dbias[OC] += Σ_b dout[b,:].  Any of dinp, dweight, dbias may be NULL. */
void ns_linear_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                        const float *weight, int B, int C, int OC);

/* ---- sparse-input linear: the input is a CSR matrix ----------------------
 * Row b of the input holds values[k] at columns indices[k] for
 * k ∈ [indptr[b], indptr[b+1]) (indptr[B+1]; indices/values indexed by those
 * offsets, so a batch may be a slice of a larger CSR matrix: pass
 * indptr + first_row).  Columns must lie in [0, C); duplicates add up.
 * Same weight layout as the dense layer, so one W serves both inputs. */

/* out[B×OC] = X[B×C] · weight[OC×C]ᵀ + bias[OC]   (bias may be NULL). */
void ns_sparse_linear_forward(float *out, const int64_t *indptr, const int32_t *indices, const float *values,
                              const float *weight, const float *bias, int B, int C, int OC);
/* dweight[OC×C] += doutᵀ · X;  dbias[OC] += Σ_b dout[b,:]  (either may be
 * NULL).  No gradient w.r.t. the (data) input. */
void ns_sparse_linear_backward(float *dweight, float *dbias, const float *dout, const int64_t *indptr,
                               const int32_t *indices, const float *values, int B, int C, int OC);

/* ---- LayerNorm over the last dimension (torch.nn.LayerNorm(C, eps)) ------ */

#define NS_LN_EPS 1e-5f

/* out[N×C] = (inp − μ)/√(σ² + eps) · weight[C] + bias[C], with μ, σ² the
 * mean and biased variance of each row; mean[N] and rstd[N] = 1/√(σ²+eps)
 * are saved for backward.  weight and bias may be NULL (no affine part).
 * μ and σ² are float sums in 8 interleaved partial sums, the same bits from
 * the AVX-512 kernel (where the CPU has it) as from the C loops. */
void ns_layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                          const float *bias, int N, int C, float eps);
/* dinp[N×C] += ∂/∂inp;  dweight[C] += Σ_n dout·x̂;  dbias[C] += Σ_n dout.
 * weight may be NULL (then dweight, dbias must be NULL too or are ignored). */
void ns_layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                           const float *weight, const float *mean, const float *rstd, int N, int C);

/* ---- pointwise activations (n elements; out may alias inp) -------------- */

/* GELU, exact erf form (torch default): out = x/2 · (1 + erf(x/√2)), as
 * x·ns_fast_gelu_cdf(x) (fastmath.h) — to the bit from the AVX-512 kernel
 * too, which evaluates each input on its side of erf's split only. */
void ns_gelu_forward(float *out, const float *inp, size_t n);
/* ns_gelu_forward, returning max|out[i]| (0 for n = 0): the int8 and int4
 * layers' input scale, found in the pass that writes out. */
float ns_gelu_forward_max(float *out, const float *inp, size_t n);
/* One row: out[C] = GELU(LayerNorm(inp)) — ns_layernorm_forward (N = 1)
 * then ns_gelu_forward, to the bit, in one call (the largest |out[c]| kept
 * by GELU's last pass, no pass of its own) — returning max|out[c]|.  out
 * may alias inp. */
float ns_layernorm_gelu1(float *out, const float *inp, const float *weight, const float *bias, int C, float eps);
/* ns_layernorm_gelu1 for two rows of C (k = 0, 1: out[k], inp[k], their own
 * weight[k], bias[k]; max|out[k]| in mx[k]), their LayerNorm statistics —
 * chains of dependent additions — computed side by side (two independent
 * projection heads at batch 1): the bits of two calls.  out[k] may alias
 * inp[k], not the other row. */
void ns_layernorm_gelu2(float *out[2], const float *inp[2], const float *weight[2], const float *bias[2], int C,
                        float eps, float mx[2]);
/* dinp[n] += dout · GELU′(inp). */
void ns_gelu_backward(float *dinp, const float *dout, const float *inp, size_t n);
/* out = max(x, 0). */
void ns_relu_forward(float *out, const float *inp, size_t n);
/* dinp[n] += dout · [inp > 0]. */
void ns_relu_backward(float *dinp, const float *dout, const float *inp, size_t n);

/* ---- residual MLP transition block (EmbedPlan's T, "resmlp") ------------
 *   x   = [h_s ; h_a]                         B×(DS+DA)
 *   out = LN( W2·GELU(W1·x + b1) + b2 + W_res·h_s )   B×DO
 * W1[H×(DS+DA)], b1[H], W2[DO×H], b2[DO], W_res[DO×DS] (no bias), LayerNorm
 * weight/bias [DO].  The paper's code: DS = DA = 128, H = 128, DO = 128. */
typedef struct ns_resmlp_dims {
    int ds, da, hidden, out;
} ns_resmlp_dims;

/* Parameter (or gradient) pointers of one block. */
typedef struct ns_resmlp_w {
    float *w1, *b1, *w2, *b2, *w_res, *ln_w, *ln_b;
    /* forward only: bfloat16 copies of w1, w2, w_res (ns_linear_forward_bf16), or NULL for float */
    const uint16_t *h1, *h2, *h_res;
    /* forward only: int8 copies (ns_linear_forward_i8, ahead of bfloat16), or NULL */
    const uint8_t *q1, *q2, *q_res;
} ns_resmlp_w;

/* Floats of scratch one call with batch B needs (forward cache + backward
 * temporaries). */
size_t ns_resmlp_scratch(int B, ns_resmlp_dims d);
/* out[B×DO] from hs[B×DS], ha[B×DA]; fills scratch for backward. */
void ns_resmlp_forward(float *out, float *scratch, const float *hs, const float *ha, const ns_resmlp_w *w,
                       int B, ns_resmlp_dims d);
/* Accumulates dhs[B×DS], dha[B×DA] (either may be NULL) and every non-NULL
 * pointer of *g, given dout[B×DO] and the scratch of the matching forward
 * (whose backward part it overwrites). */
void ns_resmlp_backward(float *dhs, float *dha, const ns_resmlp_w *g, const float *dout, float *scratch,
                        const float *hs, const ns_resmlp_w *w, int B, ns_resmlp_dims d);

/* ---- FiLM block (EmbedPlan's hypernetwork adapter) -----------------------
 *   out = GELU( LN(h)·(1 + A) + b )     h, A, b, out: B×D
 * A and b are the scale/shift a hypernetwork produced from the action; the
 * LayerNorm's own weight/bias [D] may be NULL (no affine part). */

/* Floats of scratch for batch B, width D. */
size_t ns_film_scratch(int B, int D);
/* out[B×D]; fills scratch for backward. */
void ns_film_forward(float *out, float *scratch, const float *h, const float *A, const float *b,
                     const float *ln_w, const float *ln_b, int B, int D);
/* Accumulates dh, dA, db [B×D] and dln_w, dln_b [D] (any may be NULL),
 * given dout[B×D] and the scratch of the matching forward. */
void ns_film_backward(float *dh, float *dA, float *db, float *dln_w, float *dln_b, const float *dout,
                      float *scratch, const float *h, const float *A, const float *ln_w, int B, int D);

#endif
