/* nn.c — layers as forward/backward pairs over ns_sgemm (see nn.h).
 * Bias gradients (column sums over the batch) accumulate in double, row by
 * row; LayerNorm statistics accumulate in float in 8 interleaved partial
 * sums (vectorised; C ≤ a few thousand keeps them well inside the fixtures'
 * tolerance); GELU evaluates in float with fastmath.h's erf and exp.  The
 * Makefile compiles this file with -O3 so that GCC vectorises these loops. */
#include "nextstate/learn/nn.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "nextstate/util/blas.h"
#include "nextstate/util/fastmath.h"
#include "nextstate/util/tilegemm.h" /* ns_amx_granted, ns_amx_cfg */

/* Hand-written AVX-512 kernels (bfloat16 matrix-vector, candidate scoring),
 * chosen at run time where the CPU has the instructions; C otherwise.
 * (__builtin_cpu_supports needs no __builtin_cpu_init outside constructors:
 * libgcc's runs first.) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define NS_HAVE_X86_KERNELS 1
#if defined(__linux__) && __GNUC__ >= 12
#define NS_HAVE_AMX 1
#endif
#endif

void ns_colsums_add(float *dst1, float *dst2, const float *M, size_t rows, int cols)
{
    enum { BLK = 128 };
    double acc[BLK];
    if (!dst1 && !dst2) return;
    for (int j0 = 0; j0 < cols; j0 += BLK) {
        int w = cols - j0 < BLK ? cols - j0 : BLK;
        for (int j = 0; j < w; j++) acc[j] = 0.0;
        for (size_t r = 0; r < rows; r++) {
            const float *row = M + r * (size_t)cols + j0;
            for (int j = 0; j < w; j++) acc[j] += row[j];
        }
        for (int j = 0; j < w; j++) {
            if (dst1) dst1[j0 + j] += (float)acc[j];
            if (dst2) dst2[j0 + j] += (float)acc[j];
        }
    }
}

/* ---- dense linear ------------------------------------------------------- */

static void gemv(float *out, const float *x, const float *W, const float *bias, int C, int OC);

void ns_linear_forward(float *out, const float *inp, const float *weight, const float *bias, int B, int C,
                       int OC)
{
    if (B <= 0 || OC <= 0) return;
    if (B == 1 && C > 0) { /* one row: a matrix-vector product (BLAS's sgemm pays its packing for every call) */
        gemv(out, inp, weight, bias, C, OC);
        return;
    }
    if (bias)
        for (int b = 0; b < B; b++) memcpy(out + (size_t)b * OC, bias, (size_t)OC * sizeof(float));
    if (C <= 0) {
        if (!bias) memset(out, 0, (size_t)B * OC * sizeof(float));
        return;
    }
    /* out[B×OC] = inp[B×C] · W[OC×C]ᵀ (+ out when it holds the bias) */
    ns_sgemm(false, true, B, OC, C, 1.0f, inp, C, weight, C, bias ? 1.0f : 0.0f, out, OC);
}

uint16_t ns_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);                                            /* nearest, ties to even */
    return (uint16_t)(u >> 16);
}

static float bf16_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Packed layout (nn.h): block ob of NS_BF16_OB outputs, input pair c2 at
 * dst[(ob·C2 + c2)·2·OB + 2·o + k] = W[ob·OB + o, 2·c2 + k], zero outside W. */
enum { OB = NS_BF16_OB, XSEG = 2048 /* input pairs rounded per pass (stack) */ };

size_t ns_bf16_packed_size(int C, int OC)
{
    size_t nb = (size_t)(OC + OB - 1) / OB, c2 = (size_t)(C + 1) / 2;
    return nb * c2 * 2 * OB;
}

void ns_bf16_pack(uint16_t *dst, const float *W, int C, int OC)
{
    int nb = (OC + OB - 1) / OB, C2 = (C + 1) / 2;
    for (int ob = 0; ob < nb; ob++)
        for (int c2 = 0; c2 < C2; c2++) {
            uint16_t *d = dst + ((size_t)ob * C2 + c2) * 2 * OB;
            for (int o = 0; o < OB; o++)
                for (int k = 0; k < 2; k++) {
                    int oo = ob * OB + o, c = 2 * c2 + k;
                    d[2 * o + k] = oo < OC && c < C ? ns_bf16(W[(size_t)oo * C + c]) : 0;
                }
        }
}

/* out[ob·OB + o] += Σ_{c2 < n2} P[c2] · xp[c2] for every output of every
 * block, P the pairs [c0 … c0 + n2) of the packing (C2 pairs per block) and
 * xp the input pairs (low half: even input). */
static void bf16_pairs_c(float *out, const uint16_t *P, const uint32_t *xp, int C2, int c0, int n2, int OC)
{
    for (int ob = 0; ob * OB < OC; ob++) {
        int w = OC - ob * OB < OB ? OC - ob * OB : OB;
        for (int c2 = 0; c2 < n2; c2++) {
            const uint16_t *p = P + ((size_t)ob * C2 + c0 + c2) * 2 * OB;
            float x0 = bf16_f32((uint16_t)(xp[c2] & 0xffffu)), x1 = bf16_f32((uint16_t)(xp[c2] >> 16));
            for (int o = 0; o < w; o++) out[ob * OB + o] += bf16_f32(p[2 * o]) * x0 + bf16_f32(p[2 * o + 1]) * x1;
        }
    }
}

#ifdef NS_HAVE_X86_KERNELS
/* The first n of 16 lanes (none for n ≤ 0). */
static inline __mmask16 lanes16(int n) { return n >= 16 ? 0xffff : n > 0 ? (__mmask16)((1u << n) - 1u) : 0; }

/* The same with vdpbf16ps: eight 16-output accumulators per block (no
 * horizontal sums), one broadcast pair per step, the block's weights read
 * in order. */
__attribute__((target("avx512f,avx512bw,avx512bf16"))) static void bf16_pairs_avx512(float *out, const uint16_t *P,
                                                                                      const uint32_t *xp, int C2,
                                                                                      int c0, int n2, int OC)
{
    for (int ob = 0; ob * OB < OC; ob++) {
        int w = OC - ob * OB < OB ? OC - ob * OB : OB;
        float *o = out + ob * OB;
        __m512 a[OB / 16];
        for (int v = 0; v < OB / 16; v++) a[v] = _mm512_maskz_loadu_ps(lanes16(w - 16 * v), o + 16 * v);
        const uint16_t *p = P + ((size_t)ob * C2 + c0) * 2 * OB;
        for (int c2 = 0; c2 < n2; c2++, p += 2 * OB) {
            __m512bh x = (__m512bh)_mm512_set1_epi32((int)xp[c2]);
            for (int v = 0; v < OB / 16; v++)
                a[v] = _mm512_dpbf16_ps(a[v], (__m512bh)_mm512_loadu_si512(p + 32 * v), x);
        }
        for (int v = 0; v < OB / 16; v++) _mm512_mask_storeu_ps(o + 16 * v, lanes16(w - 16 * v), a[v]);
    }
}
#endif

/* xp[k] = the pair (x[2k], x[2k+1]) in bfloat16 for k < n2 (x holds nx
 * inputs; a missing odd one is 0). */
static void round_pairs_c(uint32_t *xp, const float *x, int nx, int n2)
{
    for (int k = 0; k < n2; k++) {
        uint32_t hi = 2 * k + 1 < nx ? ns_bf16(x[2 * k + 1]) : 0;
        xp[k] = (uint32_t)ns_bf16(x[2 * k]) | hi << 16;
    }
}

#ifdef NS_HAVE_X86_KERNELS
/* The same with vcvtne2ps2bf16 (nearest even, as ns_bf16), 32 inputs a step. */
__attribute__((target("avx512f,avx512bw,avx512bf16"))) static void round_pairs_avx512(uint32_t *xp, const float *x,
                                                                                       int nx, int n2)
{
    int k = 0;
    for (; 2 * k + 32 <= nx && k + 16 <= n2; k += 16) {
        __m512bh v = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + 2 * k + 16), _mm512_loadu_ps(x + 2 * k));
        _mm512_storeu_si512(xp + k, (__m512i)v);
    }
    round_pairs_c(xp + k, x + 2 * k, nx - 2 * k, n2 - k);
}
#endif

void ns_linear_forward_bf16(float *out, const float *inp, const uint16_t *packed, const float *bias, int B, int C,
                            int OC)
{
    if (B <= 0 || OC <= 0) return;
    void (*pairs)(float *, const uint16_t *, const uint32_t *, int, int, int, int) = bf16_pairs_c;
    void (*round)(uint32_t *, const float *, int, int) = round_pairs_c;
#ifdef NS_HAVE_X86_KERNELS
    if (__builtin_cpu_supports("avx512bf16")) pairs = bf16_pairs_avx512, round = round_pairs_avx512;
#endif
    int C2 = (C + 1) / 2;
    uint32_t xp[XSEG];
    for (int b = 0; b < B; b++) {
        float *o = out + (size_t)b * OC;
        const float *x = inp + (size_t)b * C;
        if (bias) memcpy(o, bias, (size_t)OC * sizeof(float));
        else memset(o, 0, (size_t)OC * sizeof(float));
        for (int c0 = 0; c0 < C2; c0 += XSEG) {
            int n2 = C2 - c0 < XSEG ? C2 - c0 : XSEG;
            round(xp, x + 2 * c0, C - 2 * c0, n2);
            pairs(o, packed, xp, C2, c0, n2, OC);
        }
    }
}

/* ---- int8 inference ------------------------------------------------------
 * Packed blob (nn.h): float scale[NB·OB]; int32 qsum[NB·OB]; then block ob
 * of OB outputs, input quad c4 at q[(ob·C4 + c4)·4·OB + 4·o + k] =
 * round(W[ob·OB + o, 4·c4 + k] / scale), zero outside W.  Products are
 * summed exactly in int32, so the AVX-512 VNNI kernel and the C loop agree
 * to the bit; the float epilogue is shared. */
enum { QSEG = 2048 /* input quads quantised per pass (stack) */ };

static size_t i8_head_bytes(int OC) { return (size_t)((OC + OB - 1) / OB) * OB * (sizeof(float) + sizeof(int32_t)); }

size_t ns_i8_packed_size(int C, int OC)
{
    size_t nb = (size_t)(OC + OB - 1) / OB, c4 = (size_t)(C + 3) / 4;
    return i8_head_bytes(OC) + nb * c4 * 4 * OB;
}

void ns_i8_pack(uint8_t *dst, const float *W, int C, int OC)
{
    int nb = (OC + OB - 1) / OB, C4 = (C + 3) / 4;
    float *scale = (float *)(void *)dst;
    int32_t *qsum = (int32_t *)(void *)(dst + (size_t)nb * OB * sizeof(float));
    int8_t *q = (int8_t *)(dst + i8_head_bytes(OC));
    for (int o = 0; o < nb * OB; o++) {
        float m = 0;
        for (int c = 0; o < OC && c < C; c++) {
            float a = fabsf(W[(size_t)o * C + c]);
            if (a > m) m = a;
        }
        scale[o] = m > 0 ? m / 127.0f : 1.0f;
        qsum[o] = 0;
    }
    for (int ob = 0; ob < nb; ob++)
        for (int c4 = 0; c4 < C4; c4++) {
            int8_t *d = q + ((size_t)ob * C4 + c4) * 4 * OB;
            for (int o = 0; o < OB; o++)
                for (int k = 0; k < 4; k++) {
                    int oo = ob * OB + o, c = 4 * c4 + k;
                    long v = oo < OC && c < C ? lrintf(W[(size_t)oo * C + c] / scale[oo]) : 0;
                    v = v > 127 ? 127 : v < -127 ? -127 : v;
                    d[4 * o + k] = (int8_t)v;
                    qsum[oo] += (int32_t)v;
                }
        }
}

/* max |x[i]| over n inputs. */
static float absmax(const float *x, int n)
{
    float m = 0;
    for (int i = 0; i < n; i++) {
        float a = fabsf(x[i]);
        m = a > m ? a : m;
    }
    return m;
}

/* b[i] = 128 + round(x[i]·inv) (nearest even, clamped to ±127) for
 * i ∈ [i0, n); 128 (zero) for i ∈ [n, end). */
static void quantise_quads_tail(uint8_t *b, const float *x, int i0, int n, int end, float inv)
{
    for (int i = i0; i < n; i++) {
        float y = x[i] * inv;
        y = y > 127.0f ? 127.0f : y < -127.0f ? -127.0f : y;
        float r = (y + 12582912.0f) - 12582912.0f; /* 1.5·2²³: rounds to nearest even */
        b[i] = (uint8_t)(128 + (int)r);
    }
    for (int i = n > i0 ? n : i0; i < end; i++) b[i] = 128;
}

/* xq[k] = the quad x[4k … 4k+3] as bytes 128 + round(x·inv), for k < n4
 * (x holds nx inputs; missing ones are 128, i.e. 0). */
static void quantise_quads(uint32_t *xq, const float *x, int nx, int n4, float inv)
{
    int n = nx < 4 * n4 ? nx : 4 * n4;
    quantise_quads_tail((uint8_t *)xq, x, 0, n, 4 * n4, inv);
}

/* acc[0 … OB) += Σ_{c4 < n4} P[c4] · xq[c4] for one block (P its quads from
 * the segment's first). */
static void i8_quads_c(int32_t *acc, const int8_t *P, const uint32_t *xq, int n4)
{
    for (int c4 = 0; c4 < n4; c4++, P += 4 * OB) {
        const uint8_t *x = (const uint8_t *)(xq + c4);
        for (int o = 0; o < OB; o++)
            acc[o] += x[0] * P[4 * o] + x[1] * P[4 * o + 1] + x[2] * P[4 * o + 2] + x[3] * P[4 * o + 3];
    }
}

/* The layer's output from the exact sums acc[0 … w) of block ob (nn.h):
 * (acc − 128·qsum)·(sx·scale) (+ bias). */
static void i8_epilogue(float *o, const int32_t *acc, const float *scale, const int32_t *qsum, const float *bias,
                        float sx, int ob, int w)
{
    for (int j = 0; j < w; j++) {
        int oo = ob * OB + j;
        float v = (float)(acc[j] - 128 * qsum[oo]) * (sx * scale[oo]);
        o[oo] = bias ? v + bias[oo] : v;
    }
}

/* One input row, its n4 quads quantised in xq: every block's sums from
 * zero over all of them, then the epilogue (q: the packing's quads). */
static void i8_row_c(float *o, const int8_t *q, const uint32_t *xq, int n4, const float *scale, const int32_t *qsum,
                     const float *bias, float sx, int OC)
{
    for (int ob = 0; ob * OB < OC; ob++) {
        int32_t acc[OB] = {0};
        i8_quads_c(acc, q + (size_t)ob * n4 * 4 * OB, xq, n4);
        i8_epilogue(o, acc, scale, qsum, bias, sx, ob, OC - ob * OB < OB ? OC - ob * OB : OB);
    }
}

#ifdef NS_HAVE_X86_KERNELS
/* acc += the dot products of the unsigned bytes of x with the signed bytes at
 * p (vpdpbusd), in place: GCC 12 copies every accumulator of a loop of
 * _mm512_dpbusd_epi32 through another register each step (the loop's
 * instructions tripled), inline assembly keeps them where they are. */
#define NS_DPBUSD(acc, x, p) \
    __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(x), "m"(*(const __m512i *)(const void *)(p)))

/* The same with vpdpbusd: two sets of eight 16-output accumulators (even
 * and odd quads: sixteen independent chains), one broadcast quad a step;
 * integer sums, so the order does not matter. */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void i8_quads_avx512(int32_t *acc, const int8_t *P,
                                                                                  const uint32_t *xq, int n4)
{
    __m512i a[OB / 16], b[OB / 16];
    for (int v = 0; v < OB / 16; v++) a[v] = _mm512_loadu_si512(acc + 16 * v), b[v] = _mm512_setzero_si512();
    int c4 = 0;
    for (; c4 + 2 <= n4; c4 += 2, P += 8 * OB) {
        __m512i x0 = _mm512_set1_epi32((int)xq[c4]), x1 = _mm512_set1_epi32((int)xq[c4 + 1]);
        for (int v = 0; v < OB / 16; v++) {
            NS_DPBUSD(a[v], x0, P + 64 * v);
            NS_DPBUSD(b[v], x1, P + 4 * OB + 64 * v);
        }
    }
    if (c4 < n4) {
        __m512i x0 = _mm512_set1_epi32((int)xq[c4]);
        for (int v = 0; v < OB / 16; v++) NS_DPBUSD(a[v], x0, P + 64 * v);
    }
    for (int v = 0; v < OB / 16; v++) _mm512_storeu_si512(acc + 16 * v, _mm512_add_epi32(a[v], b[v]));
}

/* The epilogue of i8_row_avx512 for 16 outputs from oo: the same float
 * operations as i8_epilogue, lane by lane. */
__attribute__((target("avx512f"))) static inline void i8_out16(float *o, __m512i acc, const float *scale,
                                                               const int32_t *qsum, const float *bias, __m512 vs,
                                                               int oo, int OC)
{
    __mmask16 k = lanes16(OC - oo);
    __m512i s = _mm512_sub_epi32(acc, _mm512_slli_epi32(_mm512_loadu_si512(qsum + oo), 7));
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(vs, _mm512_loadu_ps(scale + oo)));
    if (bias) f = _mm512_add_ps(f, _mm512_maskz_loadu_ps(k, bias + oo));
    _mm512_mask_storeu_ps(o + oo, k, f);
}

/* i8_row_c with vpdpbusd: per block the sums stay in registers from the
 * first quad to the last (no zeroed array, no store and reload), and the
 * epilogue runs 16 outputs a step — the same float operations lane by lane,
 * so the same bits.  The GEMV a batch-1 query runs: its speed is the rate at
 * which the block's weights stream in from L2. */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void i8_row_avx512(float *o, const int8_t *q,
                                                                                const uint32_t *xq, int n4,
                                                                                const float *scale,
                                                                                const int32_t *qsum,
                                                                                const float *bias, float sx, int OC)
{
    const __m512 vs = _mm512_set1_ps(sx);
    for (int ob = 0; ob * OB < OC; ob++) {
        const int8_t *P = q + (size_t)ob * n4 * 4 * OB;
        __m512i a[OB / 16], b[OB / 16];
        for (int v = 0; v < OB / 16; v++) a[v] = b[v] = _mm512_setzero_si512();
        int c4 = 0;
        for (; c4 + 2 <= n4; c4 += 2, P += 8 * OB) {
            __m512i x0 = _mm512_set1_epi32((int)xq[c4]), x1 = _mm512_set1_epi32((int)xq[c4 + 1]);
            for (int v = 0; v < OB / 16; v++) {
                NS_DPBUSD(a[v], x0, P + 64 * v);
                NS_DPBUSD(b[v], x1, P + 4 * OB + 64 * v);
            }
        }
        if (c4 < n4) {
            __m512i x0 = _mm512_set1_epi32((int)xq[c4]);
            for (int v = 0; v < OB / 16; v++) NS_DPBUSD(a[v], x0, P + 64 * v);
        }
        for (int v = 0; v < OB / 16; v++) /* scale and qsum are padded to whole blocks; bias is not */
            i8_out16(o, _mm512_add_epi32(a[v], b[v]), scale, qsum, bias, vs, ob * OB + 16 * v, OC);
    }
}

/* I8_ROWS = 2 input rows at once (their quads at xq and xq + n4, outputs at
 * o and o + ldo, scales sx[0], sx[1]): each 64-byte run of weights loaded
 * once feeds a vpdpbusd per row, so a batch streams the weights once per two
 * rows instead of once per row.  (Intrinsics, not NS_DPBUSD: with the
 * inline assembly GCC 12 keeps these accumulators in memory; the copies it
 * adds instead cost less than the spills.)  Integer sums and the same
 * epilogue: the bits of row by row. */
enum { I8_ROWS = 2 };
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void i8_rows_avx512(float *o, size_t ldo,
                                                                                 const int8_t *q,
                                                                                 const uint32_t *xq, int n4,
                                                                                 const float *scale,
                                                                                 const int32_t *qsum,
                                                                                 const float *bias,
                                                                                 const float *sx, int OC)
{
    const __m512 s0 = _mm512_set1_ps(sx[0]), s1 = _mm512_set1_ps(sx[1]);
    for (int ob = 0; ob * OB < OC; ob++) {
        const int8_t *P = q + (size_t)ob * n4 * 4 * OB;
        __m512i a[OB / 16], b[OB / 16];
        for (int v = 0; v < OB / 16; v++) a[v] = b[v] = _mm512_setzero_si512();
        for (int c4 = 0; c4 < n4; c4++, P += 4 * OB) {
            __m512i x0 = _mm512_set1_epi32((int)xq[c4]), x1 = _mm512_set1_epi32((int)xq[n4 + c4]);
            for (int v = 0; v < OB / 16; v++) {
                __m512i wv = _mm512_loadu_si512(P + 64 * v);
                a[v] = _mm512_dpbusd_epi32(a[v], x0, wv);
                b[v] = _mm512_dpbusd_epi32(b[v], x1, wv);
            }
        }
        for (int v = 0; v < OB / 16; v++) {
            i8_out16(o, a[v], scale, qsum, bias, s0, ob * OB + 16 * v, OC);
            i8_out16(o + ldo, b[v], scale, qsum, bias, s1, ob * OB + 16 * v, OC);
        }
    }
}

#ifdef NS_HAVE_AMX
/* AMX for int8 batches: a tile multiply (tdpbusd) takes 16 rows × 64
 * inputs (as unsigned bytes, the quantised rows) against 64 inputs × 16
 * outputs (signed bytes) into 16 × 16 int32 sums — vpdpbusd's arithmetic,
 * 16 rows a step.  The packing's quads are the tiles' layout already: the
 * weight tile of outputs o … o + 15 and quads k … k + 15 is 16 rows of 64
 * bytes, 4·OB bytes apart.  The tile state is asked of Linux at every call
 * (ns_amx_granted, tilegemm.h: a system call, once per layer and batch). */
enum { AMX_ROWS = 16, AMX_K = 16 /* quads a tile step */, AMX_GROUP = 64 /* outputs: four sum tiles */ };

static bool amx_usable(void)
{
    return __builtin_cpu_supports("amx-int8") && __builtin_cpu_supports("avx512vnni") && ns_amx_granted();
}

/* The tile configuration (ns_amx_cfg, palette 1): tiles 0-3 the sums of four
 * runs of 16 outputs (R rows), 4 and 5 the rows' quads (R × 16 quads), 6 and
 * 7 the weights (16 quads × 16 outputs).  Tiles are not renamed: a tile load
 * waits for the multiplies still reading the tile, so loads alternate between
 * two tiles of each operand.
 * One step of 16 quads: A (tile 4 or 5) loaded from x, its products with the
 * four weight tiles of 16 outputs at P (alternating tiles 6 and 7) added to
 * sums 0-3. */
#define AMX_STEP(A, x, xs, P, ws)                                                                                      \
    do {                                                                                                               \
        _tile_loadd(A, x, xs);                                                                                         \
        _tile_loadd(6, P, ws);                                                                                         \
        _tile_dpbusd(0, A, 6);                                                                                         \
        _tile_loadd(7, (P) + 64, ws);                                                                                  \
        _tile_dpbusd(1, A, 7);                                                                                         \
        _tile_loadd(6, (P) + 128, ws);                                                                                 \
        _tile_dpbusd(2, A, 6);                                                                                         \
        _tile_loadd(7, (P) + 192, ws);                                                                                 \
        _tile_dpbusd(3, A, 7);                                                                                         \
    } while (0)

/* R ≤ 16 rows (their quads at xq + r·xn, zero bytes from quad n4 up to the
 * next multiple of 16; outputs at o + r·ldo; scales sx[r]): every 64
 * outputs' sums in four tiles, then i8_row_avx512's epilogue — integer sums,
 * so the bits of row by row.  The weights' last partial step of quads is
 * copied into a zero-padded tile (the packing has no quads past n4). */
__attribute__((target("amx-tile,amx-int8,avx512f,avx512bw"))) static void i8_rows_amx(
    float *o, size_t ldo, const int8_t *q, const uint32_t *xq, size_t xn, int R, int n4, const float *scale,
    const int32_t *qsum, const float *bias, const float *sx, int OC)
{
    int t = n4 % AMX_K, nk = n4 - t;
    ns_amx_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int i = 0; i < 6; i++) cfg.rows[i] = (uint8_t)R, cfg.colsb[i] = 64;
    cfg.rows[6] = cfg.rows[7] = AMX_K, cfg.colsb[6] = cfg.colsb[7] = 64;
    _tile_loadconfig(&cfg);
    const size_t xs = xn * 4, ws = 4 * OB; /* strides of the rows' quads and of the weights' quads */
    int32_t sums[AMX_ROWS][AMX_GROUP];
    int8_t tail[AMX_K][4 * AMX_GROUP]; /* the last t quads of four weight tiles, zero-padded to 16 */
    memset(tail, 0, sizeof tail);
    for (int g = 0; g * AMX_GROUP < OC; g++) {
        /* outputs g·64 …: block g / 2, its half g % 2 */
        const int8_t *P = q + (size_t)(g / 2) * n4 * 4 * OB + (g % 2) * 4 * AMX_GROUP;
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
        int k = 0;
        for (; k + 2 * AMX_K <= nk; k += 2 * AMX_K) {
            AMX_STEP(4, xq + k, xs, P + (size_t)k * ws, ws);
            AMX_STEP(5, xq + k + AMX_K, xs, P + (size_t)(k + AMX_K) * ws, ws);
        }
        if (k < nk) AMX_STEP(4, xq + k, xs, P + (size_t)k * ws, ws);
        if (t) {
            for (int i = 0; i < t; i++) memcpy(tail[i], P + (size_t)(nk + i) * ws, sizeof tail[i]);
            AMX_STEP(5, xq + nk, xs, &tail[0][0], sizeof tail[0]);
        }
        _tile_stored(0, &sums[0][0], sizeof sums[0]);
        _tile_stored(1, &sums[0][16], sizeof sums[0]);
        _tile_stored(2, &sums[0][32], sizeof sums[0]);
        _tile_stored(3, &sums[0][48], sizeof sums[0]);
        for (int r = 0; r < R; r++)
            for (int v = 0; v < AMX_GROUP / 16; v++)
                i8_out16(o + (size_t)r * ldo, _mm512_loadu_si512(&sums[r][16 * v]), scale, qsum, bias,
                         _mm512_set1_ps(sx[r]), g * AMX_GROUP + 16 * v, OC);
    }
    _tile_release();
}
#endif

/* max |x[i]| (exact: the order does not matter, NaNs aside). */
__attribute__((target("avx512f"))) static float absmax_avx512(const float *x, int n)
{
    __m512 m = _mm512_setzero_ps(), m1 = m, m2 = m, m3 = m; /* four chains: vmaxps' latency, not one per vector */
    int i = 0;
    for (; i + 64 <= n; i += 64) {
        m = _mm512_max_ps(m, _mm512_abs_ps(_mm512_loadu_ps(x + i)));
        m1 = _mm512_max_ps(m1, _mm512_abs_ps(_mm512_loadu_ps(x + i + 16)));
        m2 = _mm512_max_ps(m2, _mm512_abs_ps(_mm512_loadu_ps(x + i + 32)));
        m3 = _mm512_max_ps(m3, _mm512_abs_ps(_mm512_loadu_ps(x + i + 48)));
    }
    for (; i + 16 <= n; i += 16) m = _mm512_max_ps(m, _mm512_abs_ps(_mm512_loadu_ps(x + i)));
    if (i < n) m = _mm512_max_ps(m, _mm512_abs_ps(_mm512_maskz_loadu_ps(lanes16(n - i), x + i)));
    return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m, m1), _mm512_max_ps(m2, m3)));
}

/* quantise_quads, 16 inputs a step: the same operations lane by lane
 * (multiply, clamp, add and subtract 1.5·2²³), so the same bytes. */
__attribute__((target("avx512f,avx512bw"))) static void quantise_avx512(uint32_t *xq, const float *x, int nx, int n4,
                                                                        float inv)
{
    const __m512 vi = _mm512_set1_ps(inv), hi = _mm512_set1_ps(127.0f), lo = _mm512_set1_ps(-127.0f),
                 mg = _mm512_set1_ps(12582912.0f);
    const __m512i off = _mm512_set1_epi32(128);
    int n = nx < 4 * n4 ? nx : 4 * n4, i = 0;
    uint8_t *b = (uint8_t *)xq;
    for (; i + 16 <= n; i += 16) {
        __m512 y = _mm512_mul_ps(_mm512_loadu_ps(x + i), vi);
        y = _mm512_max_ps(_mm512_min_ps(y, hi), lo);
        __m512 r = _mm512_sub_ps(_mm512_add_ps(y, mg), mg);
        _mm_storeu_si128((__m128i *)(void *)(b + i), _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(r), off)));
    }
    quantise_quads_tail(b, x, i, n, 4 * n4, inv);
}
#endif

/* The int8 layer's kernels for this CPU. */
typedef struct i8_kernels {
    void (*quads)(int32_t *, const int8_t *, const uint32_t *, int);
    void (*row)(float *, const int8_t *, const uint32_t *, int, const float *, const int32_t *, const float *, float,
                int);
    void (*quant)(uint32_t *, const float *, int, int, float);
    float (*amax)(const float *, int);
} i8_kernels;

static i8_kernels i8_pick(void)
{
    i8_kernels k = {i8_quads_c, i8_row_c, quantise_quads, absmax};
#ifdef NS_HAVE_X86_KERNELS
    if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw"))
        k = (i8_kernels){i8_quads_avx512, i8_row_avx512, quantise_avx512, absmax_avx512};
#endif
    return k;
}

/* One input row x of C with m = max|x[c]| (0 when C = 0) into o[OC]: quantised
 * once (xq, QSEG quads) and each block's sums in one pass, else a segment of
 * QSEG quads at a time. */
static void i8_row1(float *o, const float *x, float m, const uint8_t *packed, const float *bias, int C, int OC,
                    const i8_kernels *k, uint32_t *xq)
{
    int nb = (OC + OB - 1) / OB, C4 = (C + 3) / 4;
    const float *scale = (const float *)(const void *)packed;
    const int32_t *qsum = (const int32_t *)(const void *)(packed + (size_t)nb * OB * sizeof(float));
    const int8_t *q = (const int8_t *)(packed + i8_head_bytes(OC));
    float sx = m / 127.0f, inv = m > 0 ? 127.0f / m : 0.0f;
    if (C4 <= QSEG) {
        k->quant(xq, x, C, C4, inv);
        k->row(o, q, xq, C4, scale, qsum, bias, sx, OC);
        return;
    }
    for (int ob = 0; ob < nb; ob++) {
        int32_t acc[OB] = {0};
        for (int c0 = 0; c0 < C4; c0 += QSEG) {
            int n4 = C4 - c0 < QSEG ? C4 - c0 : QSEG;
            k->quant(xq, x + 4 * (size_t)c0, C - 4 * c0, n4, inv);
            k->quads(acc, q + ((size_t)ob * C4 + c0) * 4 * OB, xq, n4);
        }
        i8_epilogue(o, acc, scale, qsum, bias, sx, ob, OC - ob * OB < OB ? OC - ob * OB : OB);
    }
}

void ns_linear_forward_i8(float *out, const float *inp, const uint8_t *packed, const float *bias, int B, int C,
                          int OC)
{
    if (B <= 0 || OC <= 0) return;
    i8_kernels k = i8_pick();
    uint32_t xq[QSEG];
    int b = 0;
#ifdef NS_HAVE_X86_KERNELS
    /* a batch: several rows per pass over the weights, quantised together into xq (rows C4 quads apart) */
    int nb = (OC + OB - 1) / OB, C4 = (C + 3) / 4;
    const float *scale = (const float *)(const void *)packed;
    const int32_t *qsum = (const int32_t *)(const void *)(packed + (size_t)nb * OB * sizeof(float));
    const int8_t *q = (const int8_t *)(packed + i8_head_bytes(OC));
    float sx[16];
    int rows = 1;
    size_t xn = (size_t)C4; /* quads from one row to the next in xq */
#ifdef NS_HAVE_AMX
    size_t xn16 = (size_t)(C4 + AMX_K - 1) / AMX_K * AMX_K; /* AMX: whole steps of quads, zeros past the row */
    if (B >= AMX_ROWS && AMX_ROWS * xn16 <= QSEG && amx_usable()) rows = AMX_ROWS, xn = xn16;
#endif
    if (rows == 1 && k.row == i8_row_avx512 && I8_ROWS * C4 <= QSEG) rows = I8_ROWS;
    for (; rows > 1 && b + rows <= B; b += rows) {
        for (int r = 0; r < rows; r++) {
            const float *x = inp + (size_t)(b + r) * C;
            float m = C > 0 ? k.amax(x, C) : 0.0f;
            sx[r] = m / 127.0f;
            k.quant(xq + r * xn, x, C, C4, m > 0 ? 127.0f / m : 0.0f);
            memset(xq + r * xn + C4, 0, (xn - (size_t)C4) * sizeof *xq);
        }
#ifdef NS_HAVE_AMX
        if (rows == AMX_ROWS) {
            i8_rows_amx(out + (size_t)b * OC, (size_t)OC, q, xq, xn, rows, C4, scale, qsum, bias, sx, OC);
            continue;
        }
#endif
        i8_rows_avx512(out + (size_t)b * OC, (size_t)OC, q, xq, C4, scale, qsum, bias, sx, OC);
    }
#endif
    for (; b < B; b++) {
        const float *x = inp + (size_t)b * C;
        i8_row1(out + (size_t)b * OC, x, C > 0 ? k.amax(x, C) : 0.0f, packed, bias, C, OC, &k, xq);
    }
}

void ns_linear_forward_i8_max(float *out, const float *x, float xmax, const uint8_t *packed, const float *bias, int C,
                              int OC)
{
    if (OC <= 0) return;
    i8_kernels k = i8_pick();
    uint32_t xq[QSEG];
    i8_row1(out, x, C > 0 ? xmax : 0.0f, packed, bias, C, OC, &k, xq);
}

/* ---- int4 inference (nn.h) ---------------------------------------------- */
enum { I4_HEAD = 64, I4_MAGIC = 0x3449534e /* "NSI4" */, I4_MAXC = 4 * QSEG };

static bool i4_shape_ok(int C, int OC, int G)
{
    return (G == 32 || G == 64) && C > 0 && C % G == 0 && C <= I4_MAXC && OC > 0;
}

/* bytes of one block's group: OB scales, then G/8 pairs of quads */
static size_t i4_chunk(int G) { return (size_t)OB * sizeof(float) + (size_t)(G / 8) * 4 * OB; }

size_t ns_i4_packed_size(int C, int OC, int G)
{
    if (!i4_shape_ok(C, OC, G)) return 0;
    return I4_HEAD + (size_t)((OC + OB - 1) / OB) * (size_t)(C / G) * i4_chunk(G);
}

/* q = nearest(w/s) clamped to [-7, 7]. */
static long i4_q(float w, float s)
{
    long v = lrintf(w / s);
    return v > 7 ? 7 : v < -7 ? -7 : v;
}

/* A group's scale: of s_k = (max|w|/7)·(1 − k/32), k = 0 … 12, the one with
 * the least Σ (w − s·q)² (the first on ties; clipping the largest weights
 * to give the rest finer steps); 1 for a group of zeros. */
static float i4_scale(const float *w, int G)
{
    float m = 0;
    for (int c = 0; c < G; c++) m = fmaxf(m, fabsf(w[c]));
    if (!(m > 0)) return 1.0f;
    float best = m / 7.0f;
    double best_e = -1;
    for (int k = 0; k <= 12; k++) {
        float sk = m / 7.0f * (1.0f - (float)k / 32.0f);
        double e = 0;
        for (int c = 0; c < G; c++) {
            double d = (double)w[c] - (double)sk * (double)i4_q(w[c], sk);
            e += d * d;
        }
        if (best_e < 0 || e < best_e) best = sk, best_e = e;
    }
    return best;
}

ns_status ns_i4_pack(uint8_t *dst, const float *W, int C, int OC, int G)
{
    if (!i4_shape_ok(C, OC, G)) return NS_ERR_UNSUPPORTED;
    int nb = (OC + OB - 1) / OB, ng = C / G;
    int32_t hd[I4_HEAD / 4] = {I4_MAGIC, G, C, OC};
    memcpy(dst, hd, sizeof hd);
    for (int ob = 0; ob < nb; ob++)
        for (int g = 0; g < ng; g++) {
            uint8_t *ch = dst + I4_HEAD + ((size_t)ob * ng + g) * i4_chunk(G), *P = ch + OB * sizeof(float);
            float sc[OB];
            for (int o = 0; o < OB; o++) {
                int oo = ob * OB + o;
                sc[o] = oo < OC ? i4_scale(W + (size_t)oo * C + g * G, G) : 0.0f;
                for (int p = 0; p < G / 8; p++)
                    for (int k = 0; k < 4; k++) {
                        int nib[2];
                        for (int h = 0; h < 2; h++) {
                            int c = g * G + 8 * p + 4 * h + k;
                            nib[h] = 8 + (int)(oo < OC ? i4_q(W[(size_t)oo * C + c], sc[o]) : 0);
                        }
                        P[(size_t)p * 4 * OB + 4 * o + k] = (uint8_t)(nib[0] | nib[1] << 4);
                    }
            }
            memcpy(ch, sc, sizeof sc);
        }
    return NS_OK;
}

/* The packing's G if its header matches C and OC, else 0. */
static int i4_group(const uint8_t *packed, int C, int OC)
{
    int32_t hd[4];
    memcpy(hd, packed, sizeof hd);
    return hd[0] == I4_MAGIC && hd[2] == C && hd[3] == OC && i4_shape_ok(C, OC, hd[1]) ? hd[1] : 0;
}

ns_status ns_i4_unpack(int8_t *q, float *scale, const uint8_t *packed, int C, int OC)
{
    int G = i4_group(packed, C, OC);
    if (!G) return NS_ERR_UNSUPPORTED;
    int ng = C / G;
    for (int oo = 0; oo < OC; oo++)
        for (int g = 0; g < ng; g++) {
            const uint8_t *ch = packed + I4_HEAD + ((size_t)(oo / OB) * ng + g) * i4_chunk(G);
            const uint8_t *P = ch + OB * sizeof(float);
            int o = oo % OB;
            memcpy(scale + (size_t)oo * ng + g, ch + (size_t)o * sizeof(float), sizeof(float));
            for (int p = 0; p < G / 8; p++)
                for (int k = 0; k < 4; k++) {
                    uint8_t b = P[(size_t)p * 4 * OB + 4 * o + k];
                    q[(size_t)oo * C + g * G + 8 * p + k] = (int8_t)((b & 15) - 8);
                    q[(size_t)oo * C + g * G + 8 * p + 4 + k] = (int8_t)((b >> 4) - 8);
                }
        }
    return NS_OK;
}

/* The output of one row from f (the groups' sums, scaled and accumulated). */
static inline float i4_out(float f, float sx, const float *bias, int oo)
{
    float v = f * sx;
    return bias ? v + bias[oo] : v;
}

/* One input row, x its quantised inputs (signed), xs8[g] = 8·Σ_{c∈g} x[c]:
 * nn.h's formula, output by output. */
static void i4_row_c(float *o, const uint8_t *packed, const int8_t *x, const int32_t *xs8, float sx,
                     const float *bias, int C, int OC, int G)
{
    int ng = C / G;
    for (int oo = 0; oo < OC; oo++) {
        float f = 0;
        for (int g = 0; g < ng; g++) {
            const uint8_t *ch = packed + I4_HEAD + ((size_t)(oo / OB) * ng + g) * i4_chunk(G);
            const uint8_t *P = ch + OB * sizeof(float) + 4 * (oo % OB);
            const int8_t *xg = x + g * G;
            int32_t acc = 0;
            for (int p = 0; p < G / 8; p++, P += 4 * OB, xg += 8)
                for (int k = 0; k < 4; k++) acc += (P[k] & 15) * xg[k] + (P[k] >> 4) * xg[4 + k];
            float s;
            memcpy(&s, ch + (size_t)(oo % OB) * sizeof(float), sizeof s);
            f = fmaf((float)(acc - xs8[g]), s, f);
        }
        o[oo] = i4_out(f, sx, bias, oo);
    }
}

#ifdef NS_HAVE_X86_KERNELS
/* i4_row_c with vpdpbusd, a block of OB outputs at a time: per group the
 * low nibbles (masked) against the pair's first quad and the high nibbles
 * (masked in place: 16× their value) against its second, in separate
 * accumulators; then Σ = lo + (hi >> 4) − 8·Σx exactly (hi is a multiple of
 * 16), converted and fused-multiply-added into the block's float sums in
 * group order — i4_row_c's operations lane by lane. */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void i4_row_avx512(float *o, const uint8_t *packed,
                                                                                const int8_t *x, const int32_t *xs8,
                                                                                float sx, const float *bias, int C,
                                                                                int OC, int G)
{
    const int ng = C / G, np = G / 8;
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const uint32_t *xw = (const uint32_t *)(const void *)x;
    const __m512 vs = _mm512_set1_ps(sx);
    for (int ob = 0; ob * OB < OC; ob++) {
        const uint8_t *ch = packed + I4_HEAD + (size_t)ob * ng * i4_chunk(G);
        __m512 f[OB / 16];
        for (int v = 0; v < OB / 16; v++) f[v] = _mm512_setzero_ps();
        for (int g = 0; g < ng; g++, ch += i4_chunk(G)) {
            const uint8_t *P = ch + OB * sizeof(float);
            const uint32_t *xg = xw + g * (G / 4);
            __m512i a[OB / 16], b[OB / 16];
            for (int v = 0; v < OB / 16; v++) a[v] = b[v] = _mm512_setzero_si512();
            for (int p = 0; p < np; p++, P += 4 * OB) {
                __m512i x0 = _mm512_set1_epi32((int)xg[2 * p]), x1 = _mm512_set1_epi32((int)xg[2 * p + 1]);
#pragma GCC unroll 8
                for (int v = 0; v < OB / 16; v++) {
                    __m512i w = _mm512_loadu_si512(P + 64 * v);
                    __m512i lo = _mm512_and_si512(w, m4), hi = _mm512_andnot_si512(m4, w);
                    __asm__("vpdpbusd %2, %1, %0" : "+v"(a[v]) : "v"(lo), "v"(x0));
                    __asm__("vpdpbusd %2, %1, %0" : "+v"(b[v]) : "v"(hi), "v"(x1));
                }
            }
            const __m512i corr = _mm512_set1_epi32(xs8[g]);
            const float *sc = (const float *)(const void *)ch;
#pragma GCC unroll 8
            for (int v = 0; v < OB / 16; v++) {
                __m512i s = _mm512_sub_epi32(_mm512_add_epi32(a[v], _mm512_srai_epi32(b[v], 4)), corr);
                f[v] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_loadu_ps(sc + 16 * v), f[v]);
            }
        }
        for (int v = 0; v < OB / 16 && ob * OB + 16 * v < OC; v++) {
            int oo = ob * OB + 16 * v;
            __mmask16 k = lanes16(OC - oo);
            __m512 r = _mm512_mul_ps(f[v], vs);
            if (bias) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(k, bias + oo));
            _mm512_mask_storeu_ps(o + oo, k, r);
        }
    }
}
#endif

/* The quantised row's bytes 128 + q turned into q (signed) in place, and
 * xs8[g] = 8·Σ_{c∈g} q[c] for each group of G. */
static void i4_signed_sums(uint32_t *xq, int32_t *xs8, int C, int G)
{
    uint8_t *u = (uint8_t *)xq;
    for (int g = 0; g < C / G; g++) {
        int32_t s = 0;
        for (int c = g * G; c < (g + 1) * G; c++) s += u[c];
        xs8[g] = 8 * (s - 128 * G);
    }
    for (int c = 0; c < C; c++) u[c] ^= 0x80; /* 128 + q → q (two's complement) */
}

#ifdef NS_HAVE_X86_KERNELS
/* The same, 32 bytes a step (vpsadbw sums; G is a multiple of 32). */
__attribute__((target("avx2"))) static void i4_signed_sums_avx512(uint32_t *xq, int32_t *xs8, int C, int G)
{
    uint8_t *u = (uint8_t *)xq;
    const __m256i flip = _mm256_set1_epi8((char)0x80), zero = _mm256_setzero_si256();
    for (int g = 0; g < C / G; g++) {
        __m256i acc = zero;
        for (int c = g * G; c < (g + 1) * G; c += 32) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(u + c));
            acc = _mm256_add_epi64(acc, _mm256_sad_epu8(v, zero));
            _mm256_storeu_si256((__m256i *)(void *)(u + c), _mm256_xor_si256(v, flip));
        }
        __m128i h = _mm_add_epi64(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
        int32_t s = (int32_t)(_mm_cvtsi128_si64(h) + _mm_extract_epi64(h, 1));
        xs8[g] = 8 * (s - 128 * G);
    }
}
#endif

/* The int4 layer's kernels for this CPU. */
typedef struct i4_kernels {
    void (*row)(float *, const uint8_t *, const int8_t *, const int32_t *, float, const float *, int, int, int);
    void (*quant)(uint32_t *, const float *, int, int, float);
    float (*amax)(const float *, int);
    void (*sums)(uint32_t *, int32_t *, int, int);
} i4_kernels;

static i4_kernels i4_pick(void)
{
    i4_kernels k = {i4_row_c, quantise_quads, absmax, i4_signed_sums};
#ifdef NS_HAVE_X86_KERNELS
    if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw"))
        k = (i4_kernels){i4_row_avx512, quantise_avx512, absmax_avx512, i4_signed_sums_avx512};
#endif
    return k;
}

/* One input row x with m = max|x[c]| into o (the packing's G checked). */
static void i4_row1(float *o, const float *x, float m, const uint8_t *packed, const float *bias, int C, int OC, int G,
                    const i4_kernels *k)
{
    uint32_t xq[QSEG];
    int32_t xs8[I4_MAXC / 32];
    k->quant(xq, x, C, C / 4, m > 0 ? 127.0f / m : 0.0f); /* 128 + q bytes, as the int8 layer's */
    k->sums(xq, xs8, C, G);
    k->row(o, packed, (const int8_t *)(const void *)xq, xs8, m / 127.0f, bias, C, OC, G);
}

ns_status ns_linear_forward_i4(float *out, const float *inp, const uint8_t *packed, const float *bias, int B, int C,
                               int OC)
{
    int G = i4_group(packed, C, OC);
    if (!G) return NS_ERR_UNSUPPORTED;
    i4_kernels k = i4_pick();
    for (int b = 0; b < B; b++) {
        const float *x = inp + (size_t)b * C;
        i4_row1(out + (size_t)b * OC, x, k.amax(x, C), packed, bias, C, OC, G, &k);
    }
    return NS_OK;
}

ns_status ns_linear_forward_i4_max(float *out, const float *x, float xmax, const uint8_t *packed, const float *bias,
                                   int C, int OC)
{
    int G = i4_group(packed, C, OC);
    if (!G) return NS_ERR_UNSUPPORTED;
    i4_kernels k = i4_pick();
    i4_row1(out, x, xmax, packed, bias, C, OC, G, &k);
    return NS_OK;
}

void ns_linear_forward_as(float *out, const float *inp, const float *weight, const uint16_t *packed,
                          const uint8_t *packed_i8, const float *bias, int B, int C, int OC)
{
    if (packed_i8) ns_linear_forward_i8(out, inp, packed_i8, bias, B, C, OC);
    else if (packed) ns_linear_forward_bf16(out, inp, packed, bias, B, C, OC);
    else ns_linear_forward(out, inp, weight, bias, B, C, OC);
}

void ns_linear_forward_as_max(float *out, const float *x, float xmax, const float *weight, const uint16_t *packed,
                              const uint8_t *packed_i8, const float *bias, int C, int OC)
{
    if (packed_i8) ns_linear_forward_i8_max(out, x, xmax, packed_i8, bias, C, OC);
    else ns_linear_forward_as(out, x, weight, packed, NULL, bias, 1, C, OC);
}

/* ---- int8 candidate tables -------------------------------------------------
 * Packed (nn.h): float scale[n]; int32 rsum[n]; from the next 64-byte
 * boundary n rows of ns_i8_table_row(D) bytes. */
static size_t i8_table_head(int n) { return ((size_t)n * (sizeof(float) + sizeof(int32_t)) + 63) / 64 * 64; }

size_t ns_i8_table_row(int D) { return ((size_t)(D > 0 ? D : 1) + 63) / 64 * 64; }

size_t ns_i8_table_size(int n, int D) { return i8_table_head(n) + (size_t)n * ns_i8_table_row(D); }

void ns_i8_table_pack(uint8_t *dst, const float *X, int n, int D)
{
    size_t rb = ns_i8_table_row(D);
    float *scale = (float *)(void *)dst;
    int32_t *rsum = (int32_t *)(void *)(dst + (size_t)n * sizeof(float));
    int8_t *q = (int8_t *)(dst + i8_table_head(n));
    memset(q, 0, (size_t)n * rb);
    for (int r = 0; r < n; r++) {
        const float *x = X + (size_t)r * D;
        float m = 0;
        for (int c = 0; c < D; c++) m = fabsf(x[c]) > m ? fabsf(x[c]) : m;
        scale[r] = m > 0 ? m / 127.0f : 1.0f;
        rsum[r] = 0;
        for (int c = 0; c < D; c++) { /* ns_i8_pack's rounding */
            long v = lrintf(x[c] / scale[r]);
            v = v > 127 ? 127 : v < -127 ? -127 : v;
            q[(size_t)r * rb + (size_t)c] = (int8_t)v;
            rsum[r] += (int32_t)v;
        }
    }
}

/* The score of row r from its exact sum acc (ns_i8_table_dots). */
static inline float i8_table_score(int32_t acc, const float *scale, const int32_t *rsum, int64_t r, float sxm)
{
    return (float)(acc - 128 * rsum[r]) * (sxm * scale[r]);
}

static void i8_table_dots_c(float *out, const uint8_t *xb, const int8_t *q, size_t rb, const float *scale,
                            const int32_t *rsum, float sxm, const int64_t *rows, int n)
{
    for (int j = 0; j < n; j++) {
        int64_t r = rows ? rows[j] : j;
        const int8_t *t = q + (size_t)r * rb;
        int32_t acc = 0;
        for (size_t c = 0; c < rb; c++) acc += (int32_t)xb[c] * t[c];
        out[j] = i8_table_score(acc, scale, rsum, r, sxm);
    }
}

#ifdef NS_HAVE_X86_KERNELS
/* The sums of the 16 lanes of each of a[0 … 16), in order (integer adds:
 * any order gives the same sums): pairs interleaved, then quads, then the
 * four 128-bit quarters folded. */
__attribute__((target("avx512f"))) static inline __m512i hsum16x16_epi32(const __m512i *a)
{
    __m512i t[8], u[4];
    for (int i = 0; i < 8; i++)
        t[i] = _mm512_add_epi32(_mm512_unpacklo_epi32(a[2 * i], a[2 * i + 1]), _mm512_unpackhi_epi32(a[2 * i], a[2 * i + 1]));
    for (int i = 0; i < 4; i++)
        u[i] = _mm512_add_epi32(_mm512_unpacklo_epi64(t[2 * i], t[2 * i + 1]), _mm512_unpackhi_epi64(t[2 * i], t[2 * i + 1]));
    __m512i s01 = _mm512_add_epi32(_mm512_shuffle_i32x4(u[0], u[1], 0x44), _mm512_shuffle_i32x4(u[0], u[1], 0xee));
    __m512i s23 = _mm512_add_epi32(_mm512_shuffle_i32x4(u[2], u[3], 0x44), _mm512_shuffle_i32x4(u[2], u[3], 0xee));
    return _mm512_add_epi32(_mm512_shuffle_i32x4(s01, s23, 0x88), _mm512_shuffle_i32x4(s01, s23, 0xdd));
}

/* i8_table_dots_c with vpdpbusd: a row's 64-byte runs against the query's,
 * sixteen rows at a time (their loads in flight together, their sums
 * reduced together by one transposed tree), the rows left over one at a
 * time; integer sums, so the same bits. */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void i8_table_dots_avx512(
    float *out, const uint8_t *xb, const int8_t *q, size_t rb, const float *scale, const int32_t *rsum, float sxm,
    const int64_t *rows, int n)
{
    enum { R = 16, MAXV = 8 };
    int nv = (int)(rb / 64);
    if (nv > MAXV) {
        i8_table_dots_c(out, xb, q, rb, scale, rsum, sxm, rows, n);
        return;
    }
    __m512i x[MAXV];
    for (int v = 0; v < nv; v++) x[v] = _mm512_loadu_si512(xb + 64 * v);
    int j = 0;
    for (; j + R <= n; j += R) {
        __m512i a[R];
        int64_t r[R];
        int32_t rk[R];
        float sk[R];
        for (int k = 0; k < R; k++) r[k] = rows ? rows[j + k] : j + k, a[k] = _mm512_setzero_si512();
        for (int v = 0; v < nv; v++)
            for (int k = 0; k < R; k++)
                a[k] = _mm512_dpbusd_epi32(a[k], x[v], _mm512_loadu_si512(q + (size_t)r[k] * rb + 64 * v));
        /* i8_table_score lane by lane: the same float operations */
        for (int k = 0; k < R; k++) rk[k] = rsum[r[k]], sk[k] = scale[r[k]]; /* (gathers measured slower) */
        __m512i sums = hsum16x16_epi32(a), rs = _mm512_loadu_si512(rk);
        __m512 sc = _mm512_mul_ps(_mm512_set1_ps(sxm), _mm512_loadu_ps(sk));
        _mm512_storeu_ps(out + j, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(sums, _mm512_slli_epi32(rs, 7))), sc));
    }
    for (; j < n; j++) {
        int64_t r = rows ? rows[j] : j;
        __m512i a = _mm512_setzero_si512();
        for (int v = 0; v < nv; v++) a = _mm512_dpbusd_epi32(a, x[v], _mm512_loadu_si512(q + (size_t)r * rb + 64 * v));
        out[j] = i8_table_score(_mm512_reduce_add_epi32(a), scale, rsum, r, sxm);
    }
}
#endif

void ns_i8_table_dots(float *out, const float *x, float mul, const uint8_t *tab, int ntab, int D, const int64_t *rows,
                      int n)
{
    if (n <= 0) return;
    size_t rb = ns_i8_table_row(D);
    const float *scale = (const float *)(const void *)tab;
    const int32_t *rsum = (const int32_t *)(const void *)(tab + (size_t)ntab * sizeof(float));
    const int8_t *q = (const int8_t *)(tab + i8_table_head(ntab));
    enum { MAXB = 1024 };
    uint32_t xq[MAXB / 4];
    float (*amax)(const float *, int) = absmax;
    void (*quant)(uint32_t *, const float *, int, int, float) = quantise_quads;
    void (*dots)(float *, const uint8_t *, const int8_t *, size_t, const float *, const int32_t *, float,
                 const int64_t *, int) = i8_table_dots_c;
#ifdef NS_HAVE_X86_KERNELS
    if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw"))
        amax = absmax_avx512, quant = quantise_avx512, dots = i8_table_dots_avx512;
#endif
    float m = D > 0 ? amax(x, D) : 0.0f, sxm = m / 127.0f * mul;
    if (rb <= MAXB) { /* the query's bytes (128 + round(x·127/m), as a layer's input row), 128 past D */
        quant(xq, x, D, (int)(rb / 4), m > 0 ? 127.0f / m : 0.0f);
        dots(out, (const uint8_t *)xq, q, rb, scale, rsum, sxm, rows, n);
        return;
    }
    /* wider rows (no allocation here): the query's bytes a segment at a time, again for every row */
    uint8_t *xb = (uint8_t *)xq;
    for (int j = 0; j < n; j++) {
        int64_t r = rows ? rows[j] : j;
        int32_t acc = 0;
        for (size_t c0 = 0; c0 < rb; c0 += MAXB) {
            int w = rb - c0 < MAXB ? (int)(rb - c0) : MAXB, nx = D - (int)c0 < w ? D - (int)c0 : w;
            quantise_quads_tail(xb, x + c0, 0, nx, w, m > 0 ? 127.0f / m : 0.0f);
            const int8_t *t = q + (size_t)r * rb + c0;
            for (int c = 0; c < w; c++) acc += (int32_t)xb[c] * t[c];
        }
        out[j] = i8_table_score(acc, scale, rsum, r, sxm);
    }
}

void ns_linear_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                        const float *weight, int B, int C, int OC)
{
    if (B <= 0 || OC <= 0) return;
    if (dbias) ns_colsums_add(dbias, NULL, dout, (size_t)B, OC);
    if (C <= 0) return;
    /* dinp[B×C] += dout[B×OC] · W[OC×C] */
    if (dinp) ns_sgemm(false, false, B, C, OC, 1.0f, dout, OC, weight, C, 1.0f, dinp, C);
    /* dW[OC×C] += dout[B×OC]ᵀ · inp[B×C] */
    if (dweight) ns_sgemm(true, false, OC, C, B, 1.0f, dout, OC, inp, C, 1.0f, dweight, C);
}

/* ---- sparse-input linear -------------------------------------------------- */

/* Two schemes, chosen by C; both keep, for every output and every dW
 * entry, the summation order of the plain loops (k within b within o:
 * out = (0 + v₀w₀ + v₁w₁ + …) + bias, dW = dW + g·v₀ + …), so results do not
 * depend on the scheme or the blocking (test_fastmath checks bit equality).
 *   C ≤ SP_TC: W (or dW) is copied transposed, SP_TO output units at a
 *     time, into a tile T[C×SP_TO] on the stack; each non-zero then adds
 *     v·T[column] to SP_TO sums at once (vectorised).  The forward pass
 *     takes this scheme only for batches of SP_TB rows or more: below, the
 *     copy of all of W would cost more than the rows it serves (batch-1
 *     inference).
 *   larger C (or a small forward batch): output units in blocks of SP_OB; the rows of W of one block
 *     are gathered together (independent sums, one index and value load
 *     per non-zero for the block). */
enum { SP_TO = 32, SP_TC = 512, SP_OB = 8, SP_TB = 8 };

/* acc[0..SP_TO) += v·t[0..SP_TO) (restrict: no alias check, one vector loop). */
static NS_ALWAYS_INLINE void sp_axpy(float *restrict acc, const float *restrict t, float v)
{
    for (int j = 0; j < SP_TO; j++) acc[j] += v * t[j];
}

/* acc[0..SP_TO) += g[0..SP_TO)·v. */
static NS_ALWAYS_INLINE void sp_axpy_g(float *restrict acc, const float *restrict g, float v)
{
    for (int j = 0; j < SP_TO; j++) acc[j] += g[j] * v;
}

static NS_ALWAYS_INLINE float dot_l16(const float *q, const float *c, int D)
{
    enum { L = 16 };
    int D16 = D - D % L;
    float acc[L] = {0};
    for (int d = 0; d < D16; d += L)
        for (int l = 0; l < L; l++) acc[l] += q[d + l] * c[d + l];
    for (int w = L / 2; w > 0; w /= 2) /* a tree, not a chain of L dependent adds */
        for (int l = 0; l < w; l++) acc[l] += acc[l + w];
    float s = acc[0];
    for (int d = D16; d < D; d++) s += q[d] * c[d];
    return s;
}

/* C + j·D, or C + rows[j]·D with a row list */
#define DOT_ROW(C, rows, j, D) ((C) + (size_t)((rows) ? (rows)[j] : (int64_t)(j)) * (size_t)(D))

NS_VEC_CLONES static void dots_c(float *out, const float *q, const float *C, const int64_t *rows, int n, int D)
{
    for (int j = 0; j < n; j++) out[j] = dot_l16(q, DOT_ROW(C, rows, j, D), D);
}

#ifdef NS_HAVE_X86_KERNELS
/* The sums of the 16 lanes of each of a[0 … 8), in order: lane i + i+8,
 * then + i+4, + i+2, + i+1 — the tree of _mm512_reduce_add_ps and of
 * dot_l16, so a row's sum has the same bits whichever of them takes it. */
__attribute__((target("avx512f"))) static inline __m256 hsum8x16(const __m512 *a)
{
    __m512 b[4], c[2];
    for (int i = 0; i < 4; i++) /* rows 2i, 2i+1: 8 lanes each */
        b[i] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0x44),
                             _mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0xee));
    for (int i = 0; i < 2; i++) /* rows 4i … 4i+3: 4 lanes each, one per quarter */
        c[i] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], 0x88),
                             _mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], 0xdd));
    /* quarter q: rows q (lanes 0, 1) and q + 4 (lanes 2, 3), two partial sums each */
    __m512 d = _mm512_add_ps(_mm512_shuffle_ps(c[0], c[1], 0x44), _mm512_shuffle_ps(c[0], c[1], 0xee));
    __m512 e = _mm512_add_ps(d, _mm512_permute_ps(d, 0xb1));
    const __m512i idx = _mm512_setr_epi32(0, 4, 8, 12, 2, 6, 10, 14, 0, 0, 0, 0, 0, 0, 0, 0);
    return _mm512_castps512_ps256(_mm512_permutexvar_ps(idx, e));
}

/* D % 16 == 0: one 16-lane accumulator per row, eight rows at a time (their
 * loads overlap) reduced together by one transposed tree (hsum8x16), the
 * rows left over one at a time by the same tree — every row by the same
 * sequence of operations, so equal rows still score equally.  (Software
 * prefetches of the rows a block or two ahead made it slower here: the
 * eight rows' loads in flight already keep the L2 busy.) */
__attribute__((target("avx512f"))) static void dots_avx512(float *out, const float *q, const float *C,
                                                          const int64_t *rows, int n, int D)
{
    enum { R = 8, AHEAD = 2 * R };
    int j = 0;
    for (; j + R <= n; j += R) {
        const float *c[R];
        for (int r = 0; r < R; r++) c[r] = DOT_ROW(C, rows, j + r, D);
        __m512 a[R];
        for (int r = 0; r < R; r++) a[r] = _mm512_setzero_ps();
        for (int d = 0; d < D; d += 16) {
            __m512 x = _mm512_loadu_ps(q + d);
            for (int r = 0; r < R; r++) a[r] = _mm512_fmadd_ps(x, _mm512_loadu_ps(c[r] + d), a[r]);
        }
        _mm256_storeu_ps(out + j, hsum8x16(a));
    }
    for (; j < n; j++) {
        const float *c0 = DOT_ROW(C, rows, j, D);
        __m512 a0 = _mm512_setzero_ps();
        for (int d = 0; d < D; d += 16) a0 = _mm512_fmadd_ps(_mm512_loadu_ps(q + d), _mm512_loadu_ps(c0 + d), a0);
        out[j] = _mm512_reduce_add_ps(a0);
    }
}
#endif

/* out[o] = W[o, :] · x (+ bias[o]) for o < OC: ns_linear_forward at batch 1.
 * C: dot_l16 per row.  AVX-512: eight rows at a time, each a 16-lane
 * fused multiply-add chain over the row (the tail masked), the eight reduced
 * together by one transposed tree; the weights stream through once. */
static void gemv_c(float *out, const float *x, const float *W, const float *bias, int C, int OC)
{
    for (int o = 0; o < OC; o++) {
        float s = dot_l16(W + (size_t)o * C, x, C);
        out[o] = bias ? s + bias[o] : s;
    }
}

#ifdef NS_HAVE_X86_KERNELS
__attribute__((target("avx512f"))) static void gemv_avx512(float *out, const float *x, const float *W,
                                                          const float *bias, int C, int OC)
{
    int o = 0, C16 = C - C % 16;
    __mmask16 tail = lanes16(C - C16);
    for (; o + 8 <= OC; o += 8) {
        const float *w = W + (size_t)o * C;
        __m512 a[8];
        for (int r = 0; r < 8; r++) a[r] = _mm512_setzero_ps();
        int d = 0;
        for (; d < C16; d += 16) {
            __m512 xv = _mm512_loadu_ps(x + d);
            for (int r = 0; r < 8; r++) a[r] = _mm512_fmadd_ps(_mm512_loadu_ps(w + (size_t)r * C + d), xv, a[r]);
        }
        if (tail) {
            __m512 xv = _mm512_maskz_loadu_ps(tail, x + d);
            for (int r = 0; r < 8; r++)
                a[r] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, w + (size_t)r * C + d), xv, a[r]);
        }
        __m256 s = hsum8x16(a);
        if (bias) s = _mm256_add_ps(s, _mm256_loadu_ps(bias + o));
        _mm256_storeu_ps(out + o, s);
    }
    for (; o < OC; o++) {
        const float *w = W + (size_t)o * C;
        __m512 a = _mm512_setzero_ps();
        int d = 0;
        for (; d < C16; d += 16) a = _mm512_fmadd_ps(_mm512_loadu_ps(w + d), _mm512_loadu_ps(x + d), a);
        if (tail) a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, w + d), _mm512_maskz_loadu_ps(tail, x + d), a);
        float v = _mm512_reduce_add_ps(a);
        out[o] = bias ? v + bias[o] : v;
    }
}
#endif

static void gemv(float *out, const float *x, const float *W, const float *bias, int C, int OC)
{
#ifdef NS_HAVE_X86_KERNELS
    if (__builtin_cpu_supports("avx512f")) {
        gemv_avx512(out, x, W, bias, C, OC);
        return;
    }
#endif
    gemv_c(out, x, W, bias, C, OC);
}

static void dots(float *out, const float *q, const float *C, const int64_t *rows, int n, int D)
{
#ifdef NS_HAVE_X86_KERNELS
    if (D % 16 == 0 && __builtin_cpu_supports("avx512f")) {
        dots_avx512(out, q, C, rows, n, D);
        return;
    }
#endif
    dots_c(out, q, C, rows, n, D);
}

void ns_dots(float *out, const float *q, const float *C, int n, int D) { dots(out, q, C, NULL, n, D); }

void ns_dots_rows(float *out, const float *q, const float *C, const int64_t *rows, int n, int D)
{
    dots(out, q, C, rows, n, D);
}

NS_VEC_CLONES void ns_sparse_linear_forward(float *out, const int64_t *indptr, const int32_t *indices,
                                            const float *values, const float *weight, const float *bias, int B,
                                            int C, int OC)
{
    if (C <= SP_TC && B >= SP_TB) {
        float T[SP_TC * SP_TO];
        for (int o0 = 0; o0 < OC; o0 += SP_TO) {
            int w = OC - o0 < SP_TO ? OC - o0 : SP_TO;
            for (int c = 0; c < C; c++)
                for (int j = 0; j < SP_TO; j++) T[c * SP_TO + j] = j < w ? weight[(size_t)(o0 + j) * C + c] : 0.0f;
            for (int b = 0; b < B; b++) {
                float acc[SP_TO] = {0};
                for (int64_t k = indptr[b]; k < indptr[b + 1]; k++)
                    sp_axpy(acc, T + (size_t)indices[k] * SP_TO, values[k]);
                float *o = out + (size_t)b * OC + o0;
                for (int j = 0; j < w; j++) o[j] = acc[j] + (bias ? bias[o0 + j] : 0.0f);
            }
        }
        return;
    }
    int o0 = 0;
    for (; o0 + SP_OB <= OC; o0 += SP_OB) {
        const float *w = weight + (size_t)o0 * C;
        for (int b = 0; b < B; b++) {
            float s[SP_OB] = {0};
            for (int64_t k = indptr[b]; k < indptr[b + 1]; k++) {
                float v = values[k];
                const float *wc = w + indices[k];
                for (int j = 0; j < SP_OB; j++) s[j] += v * wc[(size_t)j * C];
            }
            float *o = out + (size_t)b * OC + o0;
            for (int j = 0; j < SP_OB; j++) o[j] = s[j] + (bias ? bias[o0 + j] : 0.0f);
        }
    }
    for (; o0 < OC; o0++) {
        const float *w = weight + (size_t)o0 * C;
        float b0 = bias ? bias[o0] : 0.0f;
        for (int b = 0; b < B; b++) {
            float s = 0;
            for (int64_t k = indptr[b]; k < indptr[b + 1]; k++) s += values[k] * w[indices[k]];
            out[(size_t)b * OC + o0] = s + b0;
        }
    }
}

NS_VEC_CLONES void ns_sparse_linear_backward(float *dweight, float *dbias, const float *dout, const int64_t *indptr,
                                             const int32_t *indices, const float *values, int B, int C, int OC)
{
    if (dbias && B > 0 && OC > 0) ns_colsums_add(dbias, NULL, dout, (size_t)B, OC);
    if (!dweight) return;
    if (C <= SP_TC) {
        float T[SP_TC * SP_TO];
        for (int o0 = 0; o0 < OC; o0 += SP_TO) {
            int w = OC - o0 < SP_TO ? OC - o0 : SP_TO;
            for (int c = 0; c < C; c++)
                for (int j = 0; j < SP_TO; j++) T[c * SP_TO + j] = j < w ? dweight[(size_t)(o0 + j) * C + c] : 0.0f;
            for (int b = 0; b < B; b++) {
                float g[SP_TO];
                for (int j = 0; j < SP_TO; j++) g[j] = j < w ? dout[(size_t)b * OC + o0 + j] : 0.0f;
                for (int64_t k = indptr[b]; k < indptr[b + 1]; k++)
                    sp_axpy_g(T + (size_t)indices[k] * SP_TO, g, values[k]);
            }
            for (int j = 0; j < w; j++)
                for (int c = 0; c < C; c++) dweight[(size_t)(o0 + j) * C + c] = T[c * SP_TO + j];
        }
        return;
    }
    int o0 = 0;
    for (; o0 + SP_OB <= OC; o0 += SP_OB) {
        float *dw = dweight + (size_t)o0 * C;
        for (int b = 0; b < B; b++) {
            float g[SP_OB];
            for (int j = 0; j < SP_OB; j++) g[j] = dout[(size_t)b * OC + o0 + j];
            for (int64_t k = indptr[b]; k < indptr[b + 1]; k++) {
                float v = values[k];
                float *dc = dw + indices[k];
                for (int j = 0; j < SP_OB; j++) dc[(size_t)j * C] += g[j] * v;
            }
        }
    }
    for (; o0 < OC; o0++) {
        float *dw = dweight + (size_t)o0 * C;
        for (int b = 0; b < B; b++) {
            float g = dout[(size_t)b * OC + o0];
            for (int64_t k = indptr[b]; k < indptr[b + 1]; k++) dw[indices[k]] += g * values[k];
        }
    }
}

/* ---- LayerNorm ------------------------------------------------------------ */

/* Σ x[i] and Σ x[i]·y[i] (y may be NULL: Σ x[i]) in float, 8 interleaved
 * partial sums. */
static NS_ALWAYS_INLINE float sum8(const float *x, int n)
{
    float acc[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) acc[k] += x[i + k];
    for (; i < n; i++) acc[i & 7] += x[i];
    return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

/* Σ (x[i] − m)² in float, 8 interleaved partial sums. */
static NS_ALWAYS_INLINE float sqdev8(const float *x, float m, int n)
{
    float acc[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) {
            float d = x[i + k] - m;
            acc[k] += d * d;
        }
    for (; i < n; i++) {
        float d = x[i] - m;
        acc[i & 7] += d * d;
    }
    return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

NS_VEC_CLONES static void layernorm_c(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                                      const float *bias, int N, int C, float eps)
{
    for (int n = 0; n < N; n++) {
        const float *x = inp + (size_t)n * C;
        float *y = out + (size_t)n * C;
        float m = C > 0 ? sum8(x, C) / (float)C : 0.0f;
        float v = C > 0 ? sqdev8(x, m, C) / (float)C : 0.0f;
        float r = 1.0f / sqrtf(v + eps);
        if (weight && bias)
            for (int i = 0; i < C; i++) y[i] = (x[i] - m) * r * weight[i] + bias[i];
        else if (weight)
            for (int i = 0; i < C; i++) y[i] = (x[i] - m) * r * weight[i];
        else
            for (int i = 0; i < C; i++) y[i] = (x[i] - m) * r;
        mean[n] = m;
        rstd[n] = r;
    }
}

#ifdef NS_HAVE_X86_KERNELS
/* ((a0 + a4) + (a1 + a5)) + ((a2 + a6) + (a3 + a7)): sum8's last step. */
__attribute__((target("avx512f,avx512vl"))) static inline float combine8(__m256 a)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1)); /* a_k + a_{k+4} */
    __m128 t = _mm_add_ps(s, _mm_shuffle_ps(s, s, 0xb1));                           /* s0 + s1, …, s2 + s3 */
    return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehl_ps(t, t)));
}

/* A row's mean m and 1/√(σ² + eps) r: sum8 and sqdev8 as eight-lane chains
 * (layernorm_avx512's statistics). */
__attribute__((target("avx512f,avx512vl"))) static inline void ln_stats_avx512(const float *x, int C, float eps,
                                                                              float *mean, float *rstd)
{
    int C8 = C - C % 8;
    __mmask8 t8 = (__mmask8)((1u << (C - C8)) - 1u);
    __m256 acc = _mm256_setzero_ps();
    for (int i = 0; i < C8; i += 8) acc = _mm256_add_ps(acc, _mm256_loadu_ps(x + i));
    if (t8) acc = _mm256_mask_add_ps(acc, t8, acc, _mm256_maskz_loadu_ps(t8, x + C8));
    float m = C > 0 ? combine8(acc) / (float)C : 0.0f;
    __m256 vm = _mm256_set1_ps(m);
    acc = _mm256_setzero_ps();
    for (int i = 0; i < C8; i += 8) {
        __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + i), vm);
        acc = _mm256_add_ps(acc, _mm256_mul_ps(d, d));
    }
    if (t8) {
        __m256 d = _mm256_sub_ps(_mm256_maskz_loadu_ps(t8, x + C8), vm);
        acc = _mm256_mask_add_ps(acc, t8, acc, _mm256_mul_ps(d, d));
    }
    float v = C > 0 ? combine8(acc) / (float)C : 0.0f;
    *mean = m;
    *rstd = 1.0f / sqrtf(v + eps);
}

/* ln_stats_avx512 for two rows x and z of C at once: their chains
 * interleaved (each row's additions in its own order, so the same bits), two
 * rows in the latency of one — C/8 dependent additions per statistic. */
__attribute__((target("avx512f,avx512vl"))) static inline void ln_stats2_avx512(const float *x, const float *z, int C,
                                                                               float eps, float *mean, float *rstd)
{
    int C8 = C - C % 8;
    __mmask8 t8 = (__mmask8)((1u << (C - C8)) - 1u);
    __m256 ax = _mm256_setzero_ps(), az = ax;
    for (int i = 0; i < C8; i += 8) {
        ax = _mm256_add_ps(ax, _mm256_loadu_ps(x + i));
        az = _mm256_add_ps(az, _mm256_loadu_ps(z + i));
    }
    if (t8) {
        ax = _mm256_mask_add_ps(ax, t8, ax, _mm256_maskz_loadu_ps(t8, x + C8));
        az = _mm256_mask_add_ps(az, t8, az, _mm256_maskz_loadu_ps(t8, z + C8));
    }
    float mx = C > 0 ? combine8(ax) / (float)C : 0.0f, mz = C > 0 ? combine8(az) / (float)C : 0.0f;
    __m256 vx = _mm256_set1_ps(mx), vz = _mm256_set1_ps(mz);
    ax = az = _mm256_setzero_ps();
    for (int i = 0; i < C8; i += 8) {
        __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + i), vx), e = _mm256_sub_ps(_mm256_loadu_ps(z + i), vz);
        ax = _mm256_add_ps(ax, _mm256_mul_ps(d, d));
        az = _mm256_add_ps(az, _mm256_mul_ps(e, e));
    }
    if (t8) {
        __m256 d = _mm256_sub_ps(_mm256_maskz_loadu_ps(t8, x + C8), vx);
        __m256 e = _mm256_sub_ps(_mm256_maskz_loadu_ps(t8, z + C8), vz);
        ax = _mm256_mask_add_ps(ax, t8, ax, _mm256_mul_ps(d, d));
        az = _mm256_mask_add_ps(az, t8, az, _mm256_mul_ps(e, e));
    }
    float v = C > 0 ? combine8(ax) / (float)C : 0.0f, w = C > 0 ? combine8(az) / (float)C : 0.0f;
    mean[0] = mx, mean[1] = mz;
    rstd[0] = 1.0f / sqrtf(v + eps), rstd[1] = 1.0f / sqrtf(w + eps);
}

/* layernorm_c with sum8 and sqdev8 as eight-lane chains (their partial sums
 * are the lanes: the same additions in the same order), the rows
 * normalised 16 at a time — the same bits.  A row's statistics are two
 * chains of C/8 dependent additions; GCC's vectorised clone of the C loops
 * shuffles each partial sum through a scalar and the stack instead. */
__attribute__((target("avx512f,avx512vl"))) static void layernorm_avx512(float *out, float *mean, float *rstd,
                                                                        const float *inp, const float *weight,
                                                                        const float *bias, int N, int C, float eps)
{
    for (int n = 0; n < N; n++) {
        const float *x = inp + (size_t)n * C;
        float *y = out + (size_t)n * C;
        float m, r;
        ln_stats_avx512(x, C, eps, &m, &r);
        __m512 m16 = _mm512_set1_ps(m), r16 = _mm512_set1_ps(r);
        for (int i = 0; i < C; i += 16) { /* (x − m)·r (·w + b): bias only with a weight, as layernorm_c */
            __mmask16 k = lanes16(C - i);
            __m512 t = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), m16), r16);
            if (weight) {
                t = _mm512_mul_ps(t, _mm512_maskz_loadu_ps(k, weight + i));
                if (bias) t = _mm512_add_ps(t, _mm512_maskz_loadu_ps(k, bias + i));
            }
            _mm512_mask_storeu_ps(y + i, k, t);
        }
        mean[n] = m;
        rstd[n] = r;
    }
}
#endif

void ns_layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                          const float *bias, int N, int C, float eps)
{
#ifdef NS_HAVE_X86_KERNELS
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) {
        layernorm_avx512(out, mean, rstd, inp, weight, bias, N, C, eps);
        return;
    }
#endif
    layernorm_c(out, mean, rstd, inp, weight, bias, N, C, eps);
}

/* s1 = Σ dx̂, s2 = Σ dx̂·x̂ over one row, dx̂ = dy·w (dy when w is NULL; the
 * flag is a constant at each call so both versions vectorise). */
static NS_ALWAYS_INLINE void ln_sums(const float *x, const float *dy, const float *w, bool affine, float m, float r,
                                    int C, float *s1, float *s2)
{
    float a1[8] = {0}, a2[8] = {0};
    int i = 0;
    for (; i + 8 <= C; i += 8)
        for (int k = 0; k < 8; k++) {
            float xh = (x[i + k] - m) * r, dxh = affine ? dy[i + k] * w[i + k] : dy[i + k];
            a1[k] += dxh;
            a2[k] += dxh * xh;
        }
    for (; i < C; i++) {
        float xh = (x[i] - m) * r, dxh = affine ? dy[i] * w[i] : dy[i];
        a1[i & 7] += dxh;
        a2[i & 7] += dxh * xh;
    }
    *s1 = ((a1[0] + a1[4]) + (a1[1] + a1[5])) + ((a1[2] + a1[6]) + (a1[3] + a1[7]));
    *s2 = ((a2[0] + a2[4]) + (a2[1] + a2[5])) + ((a2[2] + a2[6]) + (a2[3] + a2[7]));
}

NS_VEC_CLONES void ns_layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                           const float *weight, const float *mean, const float *rstd, int N, int C)
{
    if (!weight) dweight = dbias = NULL;
    for (int n = 0; n < N; n++) {
        const float *x = inp + (size_t)n * C, *dy = dout + (size_t)n * C;
        float m = mean[n], r = rstd[n], s1, s2;
        /* dx̂ = dy·w;  dx = r · (dx̂ − mean(dx̂) − x̂ · mean(dx̂ · x̂)) */
        if (weight) ln_sums(x, dy, weight, true, m, r, C, &s1, &s2);
        else ln_sums(x, dy, NULL, false, m, r, C, &s1, &s2);
        s1 /= (float)C;
        s2 /= (float)C;
        if (dweight)
            for (int j = 0; j < C; j++) dweight[j] += dy[j] * ((x[j] - m) * r);
        if (dbias)
            for (int j = 0; j < C; j++) dbias[j] += dy[j];
        if (!dinp) continue;
        float *dx = dinp + (size_t)n * C;
        if (weight)
            for (int j = 0; j < C; j++) dx[j] += r * (dy[j] * weight[j] - s1 - (x[j] - m) * r * s2);
        else
            for (int j = 0; j < C; j++) dx[j] += r * (dy[j] - s1 - (x[j] - m) * r * s2);
    }
}

/* ---- activations ------------------------------------------------------------ */

#define gelu_cdf ns_fast_gelu_cdf

NS_VEC_CLONES static void gelu_c(float *out, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float x = inp[i], pdf;
        out[i] = x * gelu_cdf(x, &pdf);
    }
}

#ifdef NS_HAVE_X86_KERNELS
/* fastmath.h's functions lane by lane: the same float operations in the same
 * order (no fused multiply-adds), so the same bits. */
__attribute__((target("avx512f,avx512dq"))) static inline __m512 expf_avx512(__m512 x)
{
    x = _mm512_max_ps(_mm512_set1_ps(-87.0f), x); /* x < −87 ? −87 : x, a NaN kept (vmaxps returns its second) */
    x = _mm512_min_ps(_mm512_set1_ps(88.0f), x);
    __m512 t = _mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)), _mm512_set1_ps(12582912.0f));
    __m512 n = _mm512_sub_ps(t, _mm512_set1_ps(12582912.0f));
    __m512i ni = _mm512_sub_epi32(_mm512_castps_si512(t), _mm512_set1_epi32(0x4B400000));
    __m512 r = _mm512_sub_ps(x, _mm512_mul_ps(n, _mm512_set1_ps(0.693359375f)));
    r = _mm512_sub_ps(r, _mm512_mul_ps(n, _mm512_set1_ps(-2.12194440e-4f)));
    static const float c[5] = {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f,
                               5.0000001201e-1f};
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    for (int k = 0; k < 5; k++) p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(c[k]));
    p = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(p, _mm512_mul_ps(r, r)), r), _mm512_set1_ps(1.0f));
    __m512i sc = _mm512_slli_epi32(_mm512_add_epi32(ni, _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(sc));
}

__attribute__((target("avx512f"))) static inline __m512 erf_small_avx512(__m512 u)
{
    static const float c[5] = {-8.118070672e-04f, 5.198829378e-03f, -2.685849686e-02f, 1.128367896e-01f,
                               -3.761263264e-01f};
    __m512 z = _mm512_mul_ps(u, u), q = _mm512_set1_ps(8.267443795e-05f);
    for (int k = 0; k < 5; k++) q = _mm512_add_ps(_mm512_mul_ps(q, z), _mm512_set1_ps(c[k]));
    __m512 corr = _mm512_add_ps(_mm512_set1_ps(-5.921017e-08f), _mm512_mul_ps(z, q));
    return _mm512_mul_ps(u, _mm512_add_ps(_mm512_set1_ps(1.12837922573089600f), corr));
}

__attribute__((target("avx512f"))) static inline __m512 erfcx_large_avx512(__m512 u)
{
    static const float c[9] = {2.497851291e-01f,  -2.463831653e-01f, 2.471502714e-02f,
                               -2.509560913e-02f, 8.690753384e-02f,  1.760337654e-01f,
                               2.468450622e-01f,  2.820945865e-01f,  2.820947923e-01f};
    __m512 t = _mm512_div_ps(_mm512_set1_ps(1.0f),
                             _mm512_add_ps(_mm512_set1_ps(1.0f), _mm512_mul_ps(_mm512_set1_ps(0.5f), u)));
    __m512 s = _mm512_set1_ps(-7.717384902e-02f);
    for (int k = 0; k < 9; k++) s = _mm512_add_ps(_mm512_mul_ps(s, t), _mm512_set1_ps(c[k]));
    return _mm512_mul_ps(t, s);
}

/* The first pass of gelu_avx512 on 16 lanes x (live of them): u = |x|/√2
 * compressed to its side of erf's split (us at *ns or ul at *nl), the side
 * mask kept. */
__attribute__((target("avx512f,avx512dq"))) static inline void gelu_sort16(__m512 x, __mmask16 live, float *us,
                                                                          float *ul, int *ns, int *nl, __mmask16 *ms)
{
    __m512 u = _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(NS_SQRT1_2F));
    __mmask16 sm = _mm512_mask_cmp_ps_mask(live, u, _mm512_set1_ps(NS_ERF_SPLIT), _CMP_LT_OQ);
    *ms = sm;
    _mm512_storeu_ps(us + *ns, _mm512_maskz_compress_ps(sm, u));
    _mm512_storeu_ps(ul + *nl, _mm512_maskz_compress_ps(live & (__mmask16)~sm, u));
    *ns += __builtin_popcount(sm);
    *nl += __builtin_popcount(live & (__mmask16)~sm);
}

/* gelu_c, each input through its side of the split only: a chunk's inputs
 * are sorted into the two sides (compressed), each side computed 16 at a time,
 * and the results put back in place (expanded) — the formula's bits, at half
 * the work of evaluating both sides of every lane.  Compressed and expanded
 * in registers, whole vectors stored and loaded (each store's tail is
 * overwritten by the next): about 5 % faster than vcompressps / vexpandps
 * on memory here, 384 inputs in ≈ 0.29 µs.  With ln (one row of n, its
 * statistics m16, r16): the input is layernorm_avx512's output of inp,
 * written to out chunk by chunk first.  (Normalising and sorting in one loop
 * instead was ≈ 10 ns slower a 384-wide row: LayerNorm's statistics and
 * GELU's arithmetic bound these passes, not their loads.)  The last pass
 * keeps max|out| in four chains, returned: the next int8 or int4 layer's
 * input scale, without a pass of its own. */
__attribute__((target("avx512f,avx512dq,avx512vl"))) static NS_ALWAYS_INLINE float gelu_core_avx512(
    float *out, const float *inp, size_t n, bool ln, __m512 m16, __m512 r16, const float *weight, const float *bias)
{
    enum { CH = 512 };
    float us[CH + 16], ul[CH + 16];
    __mmask16 ms[CH / 16];
    const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
    const __m512i sign = _mm512_set1_epi32((int)0x80000000u);
    __m512 mx = _mm512_setzero_ps(), mx1 = mx, mx2 = mx, mx3 = mx;
    for (size_t i0 = 0; i0 < n; i0 += CH) {
        int m = n - i0 < CH ? (int)(n - i0) : CH, ns = 0, nl = 0;
        const float *x = ln ? out + i0 : inp + i0;
        for (int j = 0; ln && j < m; j += 16) { /* (x − m)·r (·w + b), as layernorm_avx512 */
            __mmask16 live = lanes16(m - j);
            __m512 xv = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(live, inp + i0 + j), m16), r16);
            if (weight) {
                xv = _mm512_mul_ps(xv, _mm512_maskz_loadu_ps(live, weight + i0 + j));
                if (bias) xv = _mm512_add_ps(xv, _mm512_maskz_loadu_ps(live, bias + i0 + j));
            }
            _mm512_mask_storeu_ps(out + i0 + j, live, xv);
        }
        for (int j = 0; j < m; j += 16) { /* u = |x|/√2, each to its side */
            __mmask16 live = lanes16(m - j);
            gelu_sort16(_mm512_maskz_loadu_ps(live, x + j), live, us, ul, &ns, &nl, &ms[j / 16]);
        }
        _mm512_storeu_ps(us + ns, _mm512_setzero_ps()); /* each side's last vector: zeros past its inputs */
        _mm512_storeu_ps(ul + nl, _mm512_setzero_ps());
        for (int j = 0; j < ns; j += 16) /* ½·erf(u) */
            _mm512_storeu_ps(us + j, _mm512_mul_ps(half, erf_small_avx512(_mm512_loadu_ps(us + j))));
        for (int j = 0; j < nl; j += 16) { /* ½·erfc(u) = ½·erfcx(u)·e^{−u²} */
            __m512 u = _mm512_loadu_ps(ul + j);
            __m512 e = expf_avx512(_mm512_mul_ps(_mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(u), sign)), u));
            _mm512_storeu_ps(ul + j, _mm512_mul_ps(_mm512_mul_ps(half, erfcx_large_avx512(u)), e));
        }
        ns = nl = 0;
        for (int j = 0; j < m; j += 16) { /* Φ by the sign of x, then x·Φ */
            __mmask16 live = lanes16(m - j), sm = ms[j / 16], lg = live & (__mmask16)~sm;
            __m512 xv = _mm512_maskz_loadu_ps(live, x + j);
            __m512 sv = _mm512_maskz_expand_ps(sm, _mm512_loadu_ps(us + ns)), lv = _mm512_maskz_expand_ps(lg, _mm512_loadu_ps(ul + nl));
            ns += __builtin_popcount(sm);
            nl += __builtin_popcount(lg);
            __m512 upper = _mm512_mask_blend_ps(sm, _mm512_sub_ps(one, lv), _mm512_add_ps(half, sv));
            __m512 lower = _mm512_mask_blend_ps(sm, lv, _mm512_sub_ps(half, sv));
            __mmask16 neg = _mm512_cmp_ps_mask(xv, _mm512_setzero_ps(), _CMP_LT_OQ);
            __m512 g = _mm512_mul_ps(xv, _mm512_mask_blend_ps(neg, upper, lower));
            _mm512_mask_storeu_ps(out + i0 + j, live, g);
            __m512 t = mx3; /* four chains, rotated (register renames): vmaxps' latency off the loop's path */
            mx3 = mx2, mx2 = mx1, mx1 = mx;
            mx = _mm512_max_ps(t, _mm512_abs_ps(g)); /* dead lanes of g are 0 */
        }
    }
    return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(mx, mx1), _mm512_max_ps(mx2, mx3)));
}

__attribute__((target("avx512f,avx512dq,avx512vl"))) static void gelu_avx512(float *out, const float *inp, size_t n)
{
    __m512 z = _mm512_setzero_ps();
    (void)gelu_core_avx512(out, inp, n, false, z, z, NULL, NULL);
}

__attribute__((target("avx512f,avx512dq,avx512vl"))) static float gelu_max_avx512(float *out, const float *inp,
                                                                                 size_t n)
{
    __m512 z = _mm512_setzero_ps();
    float mx = gelu_core_avx512(out, inp, n, false, z, z, NULL, NULL);
    _mm256_zeroupper(); /* the caller runs SSE code next (GCC leaves this out of a tail call here) */
    return mx;
}

__attribute__((target("avx512f,avx512dq,avx512vl"))) static float ln_gelu_avx512(float *out, const float *inp,
                                                                                const float *weight,
                                                                                const float *bias, int C, float eps)
{
    float m, r;
    ln_stats_avx512(inp, C, eps, &m, &r);
    float mx = gelu_core_avx512(out, inp, (size_t)C, true, _mm512_set1_ps(m), _mm512_set1_ps(r), weight, bias);
    _mm256_zeroupper(); /* as gelu_max_avx512 */
    return mx;
}
#endif

#ifdef NS_HAVE_X86_KERNELS
static bool gelu_avx512_usable(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vl");
}
#endif

void ns_gelu_forward(float *out, const float *inp, size_t n)
{
#ifdef NS_HAVE_X86_KERNELS
    if (gelu_avx512_usable()) {
        gelu_avx512(out, inp, n);
        return;
    }
#endif
    gelu_c(out, inp, n);
}

#ifdef NS_HAVE_X86_KERNELS
__attribute__((target("avx512f,avx512dq,avx512vl"))) static void ln_gelu2_avx512(float *out[2], const float *inp[2],
                                                                                const float *weight[2],
                                                                                const float *bias[2], int C,
                                                                                float eps, float mx[2])
{
    float m[2], r[2];
    ln_stats2_avx512(inp[0], inp[1], C, eps, m, r);
    for (int k = 0; k < 2; k++)
        mx[k] = gelu_core_avx512(out[k], inp[k], (size_t)C, true, _mm512_set1_ps(m[k]), _mm512_set1_ps(r[k]),
                                 weight[k], bias[k]);
    _mm256_zeroupper(); /* as gelu_max_avx512 */
}
#endif

/* layernorm_c's row and gelu_c's formula in one loop (the same operations on
 * each element, so the same bits), and the largest |out|. */
NS_VEC_CLONES static float ln_gelu_c(float *out, const float *x, const float *weight, const float *bias, int C,
                                     float eps)
{
    float m = C > 0 ? sum8(x, C) / (float)C : 0.0f;
    float v = C > 0 ? sqdev8(x, m, C) / (float)C : 0.0f;
    float r = 1.0f / sqrtf(v + eps), mx = 0;
    for (int i = 0; i < C; i++) {
        float y = (x[i] - m) * r, pdf;
        if (weight) {
            y = y * weight[i];
            if (bias) y = y + bias[i];
        }
        float g = y * gelu_cdf(y, &pdf), a = fabsf(g);
        out[i] = g;
        mx = a > mx ? a : mx;
    }
    return mx;
}

float ns_layernorm_gelu1(float *out, const float *inp, const float *weight, const float *bias, int C, float eps)
{
#ifdef NS_HAVE_X86_KERNELS
    if (gelu_avx512_usable()) return ln_gelu_avx512(out, inp, weight, bias, C, eps);
#endif
    return ln_gelu_c(out, inp, weight, bias, C, eps);
}

void ns_layernorm_gelu2(float *out[2], const float *inp[2], const float *weight[2], const float *bias[2], int C,
                        float eps, float mx[2])
{
#ifdef NS_HAVE_X86_KERNELS
    if (gelu_avx512_usable()) {
        ln_gelu2_avx512(out, inp, weight, bias, C, eps, mx);
        return;
    }
#endif
    for (int k = 0; k < 2; k++) mx[k] = ln_gelu_c(out[k], inp[k], weight[k], bias[k], C, eps);
}

/* gelu_c and the largest |out|. */
NS_VEC_CLONES static float gelu_max_c(float *out, const float *inp, size_t n)
{
    float mx = 0;
    for (size_t i = 0; i < n; i++) {
        float x = inp[i], pdf, g = x * gelu_cdf(x, &pdf), a = fabsf(g);
        out[i] = g;
        mx = a > mx ? a : mx;
    }
    return mx;
}

float ns_gelu_forward_max(float *out, const float *inp, size_t n)
{
#ifdef NS_HAVE_X86_KERNELS
    if (gelu_avx512_usable()) return gelu_max_avx512(out, inp, n);
#endif
    return gelu_max_c(out, inp, n);
}

NS_VEC_CLONES void ns_gelu_backward(float *dinp, const float *dout, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float x = inp[i], pdf;
        float cdf = gelu_cdf(x, &pdf);
        dinp[i] += dout[i] * (cdf + x * pdf);
    }
}

void ns_relu_forward(float *out, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = inp[i] > 0 ? inp[i] : 0.0f;
}

void ns_relu_backward(float *dinp, const float *dout, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float g = dout[i];
        dinp[i] += inp[i] > 0 ? g : 0.0f;
    }
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
    if (B == 1 && w->q1 && w->q2 && w->q_res) { /* one int8 row: the calls below, inputs' max|·| found once each */
        memcpy(s.x, hs, (size_t)d.ds * sizeof(float));
        memcpy(s.x + d.ds, ha, (size_t)d.da * sizeof(float));
        i8_kernels k = i8_pick();
        float ms = d.ds > 0 ? k.amax(hs, d.ds) : 0.0f, ma = d.da > 0 ? k.amax(ha, d.da) : 0.0f;
        ns_linear_forward_i8_max(s.a1, s.x, ms > ma ? ms : ma, w->q1, w->b1, dx, d.hidden);
        float mg = ns_gelu_forward_max(s.g1, s.a1, (size_t)d.hidden);
        ns_linear_forward_i8_max(s.z, s.g1, mg, w->q2, w->b2, d.hidden, d.out);
        ns_linear_forward_i8_max(s.dz, hs, ms, w->q_res, NULL, d.ds, d.out);
        for (int i = 0; i < d.out; i++) s.z[i] += s.dz[i];
        ns_layernorm_forward(out, s.mean, s.rstd, s.z, w->ln_w, w->ln_b, 1, d.out, NS_LN_EPS);
        return;
    }
    for (int b = 0; b < B; b++) {
        memcpy(s.x + (size_t)b * dx, hs + (size_t)b * d.ds, (size_t)d.ds * sizeof(float));
        memcpy(s.x + (size_t)b * dx + d.ds, ha + (size_t)b * d.da, (size_t)d.da * sizeof(float));
    }
    ns_linear_forward_as(s.a1, s.x, w->w1, w->h1, w->q1, w->b1, B, dx, d.hidden);    /* a1 = W1·x + b1 */
    ns_gelu_forward(s.g1, s.a1, (size_t)B * d.hidden);                              /* g1 = GELU(a1)  */
    ns_linear_forward_as(s.z, s.g1, w->w2, w->h2, w->q2, w->b2, B, d.hidden, d.out); /* z = W2·g1 + b2 */
    /* z += h_s · W_resᵀ (the bfloat16 or int8 product, or a single row's, through dz, which backward clears
     * first) */
    if (w->h_res || w->q_res || B == 1) {
        size_t bo = (size_t)B * d.out;
        ns_linear_forward_as(s.dz, hs, w->w_res, w->h_res, w->q_res, NULL, B, d.ds, d.out);
        for (size_t i = 0; i < bo; i++) s.z[i] += s.dz[i];
    } else {
        ns_sgemm(false, true, B, d.out, d.ds, 1.0f, hs, d.ds, w->w_res, d.ds, 1.0f, s.z, d.out);
    }
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
