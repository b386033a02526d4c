/* tilegemm.h — float matrix products y = x·Wᵀ + b on AMX bfloat16 tiles,
 * three tile products per term ("bf16x3").
 *
 * Both operands are split into two bfloat16 parts, x = xh + xl and
 * w = wh + wl (xh = x rounded to nearest even, xl = x − xh rounded), and
 * x·w is taken as xh·wh + xh·wl + xl·wh with float32 sums.  A term's
 * relative error is at most ≈ 3·2⁻¹⁸ ≈ 1.1e−5 (the dropped xl·wl and the
 * rounding of xl and wl) against float's 2⁻²⁴: about five significant
 * digits, where a plain bfloat16 product keeps between two and three.
 * tests/unit/test_tilegemm.c checks the bound against a double product.
 *
 * The weights are packed once (ns_tilegemm_pack: 2 × 2 bytes per weight,
 * the size of the float matrix, n and k padded to multiples of 32 with
 * zeros).  The CPU needs AMX
 * (amx-tile, amx-bf16) and AVX-512 BF16, and Linux must grant the tile
 * state (ns_tilegemm_usable asks; builds without GCC ≥ 12 on x86-64 Linux
 * always say no). */
#ifndef NEXTSTATE_TILEGEMM_H
#define NEXTSTATE_TILEGEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether the CPU has AMX tiles and Linux granted this process their state
 * (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA: a system call, no
 * state kept here).  The int8 layers (nn.c) ask it too. */
bool ns_amx_granted(void);

/* A tile configuration (palette 1) as _tile_loadconfig reads it. */
typedef struct ns_amx_cfg {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} ns_amx_cfg;

/* Whether ns_tilegemm can run here: ns_amx_granted and bfloat16 tiles. */
bool ns_tilegemm_usable(void);

/* Elements (uint16_t) of W [n × k]'s packing (0 for an empty W). */
size_t ns_tilegemm_size(int n, int k);

/* Packs W [n × k] (row-major, PyTorch Linear's layout) into dst
 * (ns_tilegemm_size(n, k) elements).  Only where ns_tilegemm_usable(). */
void ns_tilegemm_pack(uint16_t *dst, const float *W, int n, int k);

/* An activation applied in place to v[0, n) (elementwise). */
typedef void (*ns_tile_act)(float *v, int n);

/* y[rows × n] (row stride ldy) = act(x[rows × k] (row stride ldx) · Wᵀ + b)
 * (b may be NULL; act NULL: none, else applied to runs of 32 outputs of a
 * row as they are written, 32 lanes even where n ends inside the run), W
 * packed by ns_tilegemm_pack.  Only where ns_tilegemm_usable() said yes. */
void ns_tilegemm(float *y, int ldy, const float *x, int ldx, int rows, int k, int n, const uint16_t *packed,
                 const float *b, ns_tile_act act);

/* Products of two activations (attention), any sizes (zero-padded to
 * multiples of 32 inside), the same bf16x3 arithmetic; only where
 * ns_tilegemm_usable() said yes.  Row strides lda, ldb, ldy; y's columns
 * from n on are not touched.
 *   _nt: y[m × n] = alpha · a[m × k] · b[n × k]ᵀ   (scores q·kᵀ)
 *   _nn: y[m × n] = alpha · a[m × k] · b[k × n] (+ y when add)
 *        (probabilities · values; gradients back through a layer's W) */
void ns_tilegemm_nt(float *y, int ldy, const float *a, int lda, int m, const float *b, int ldb, int n, int k,
                    float alpha);
void ns_tilegemm_nn(float *y, int ldy, const float *a, int lda, int m, const float *b, int ldb, int k, int n,
                    float alpha, bool add);

#endif
