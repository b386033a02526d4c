/* fastmath.h — float exp, erf / erfc, sigmoid and tanh written so that GCC
 * vectorises loops over them (straight-line code: no libm calls, no
 * branches — both sides of a range split are computed and one is
 * selected — and float↔int bit casts through memcpy).  The numerics core
 * (nn.c, lstm.c) uses them for GELU and the LSTM gates.
 *
 * Accuracy against double-precision libm over dense grids (checked by
 * tests/unit/test_fastmath.c):
 *   ns_fast_expf      ≤ 1 ulp for x ∈ [−87, 88]; x is clamped to that range
 *                     (e^−87 ≈ 1.6e−38, e^88 ≈ 1.65e38)
 *   ns_fast_erff      |error| ≤ 1e−7 for every float x (≈ 1.5 ulp of 1)
 *   ns_fast_erfcf     relative error ≤ 1e−6 for x ∈ [0, 4], ≤ 5e−6 up to 9
 *                     (the rounding of x² in e^−x²)
 *   ns_fast_sigmoidf, ns_fast_tanhf   |error| ≤ 1e−7, relative ≤ 2e−7
 *                     (sigmoid for x ≥ −87)
 *
 * erf(u) for |u| < 0.9375 is u·P(u²) (degree 6 in u²); beyond, erfc(u) =
 * t·S(t)·e^−u² with t = 1/(1 + u/2) and S of degree 9 (both fitted by
 * weighted least squares with Lawson reweighting for relative error). */
#ifndef NEXTSTATE_FASTMATH_H
#define NEXTSTATE_FASTMATH_H

#include <stdint.h>
#include <string.h>

/* NS_VEC_CLONES before a function definition compiles it three times on
 * x86-64 with GCC ≥ 12 — for AVX-512 (x86-64-v4), AVX2
 * (x86-64-v3) and the baseline — and picks one at load time from the CPU
 * (an ifunc).  The loops these functions run are elementwise or keep their
 * summation order (ISO C mode contracts no a·b + c into an FMA), so every
 * version computes the same floats (a trained checkpoint's weights are
 * bit-identical across them).  Define NS_NO_CLONES to build the baseline
 * version only. */
#if defined(__x86_64__) && !defined(NS_NO_CLONES) && defined(__has_attribute)
/* Clang (14 at least) emits no plain symbol for a target_clones function
 * defined in one file and called from another, so the link fails: GCC only. */
#if __has_attribute(target_clones) && !defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 12
#define NS_VEC_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
#endif
#ifndef NS_VEC_CLONES
#define NS_VEC_CLONES
#endif
/* For loop bodies called with constant flags from an NS_VEC_CLONES function:
 * inlined into each version, so the flags fold away and the loop vectorises. */
#if defined(__GNUC__)
#define NS_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define NS_ALWAYS_INLINE inline
#endif

static inline float ns_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint32_t ns_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* e^x (Cody–Waite reduction x = n·ln2 + r, |r| ≤ ln2/2, degree-7 Taylor-
 * like polynomial of Cephes' expf, scaled by 2^n through the exponent bits). */
static inline float ns_fast_expf(float x)
{
    x = x < -87.0f ? -87.0f : x;
    x = x > 88.0f ? 88.0f : x;
    /* n = round(x / ln2): adding 1.5·2^23 leaves n in the low mantissa bits */
    float t = x * 1.44269504088896341f + 12582912.0f;
    float n = t - 12582912.0f;
    int32_t ni = (int32_t)(ns_f32_bits(t) - 0x4B400000u);
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    return p * ns_f32_from_bits((uint32_t)(ni + 127) << 23);
}

/* u·P(u²) ≈ erf(u) for |u| < 0.9375 (relative error 5e−10 in exact arithmetic). */
static inline float ns_erf_small_(float u)
{
    /* leading coefficient as float hi + lo, so its rounding does not add
     * an ulp: u·c0 = u·C0_HI + u·C0_LO */
    float z = u * u;
    float q = 8.267443795e-05f;
    q = q * z + -8.118070672e-04f;
    q = q * z + 5.198829378e-03f;
    q = q * z + -2.685849686e-02f;
    q = q * z + 1.128367896e-01f;
    q = q * z + -3.761263264e-01f;
    float corr = -5.921017e-08f + z * q;
    return u * (1.12837922573089600f + corr);
}

/* t·S(t) ≈ e^{u²}·erfc(u) for u ≥ 0.9375, t = 1/(1 + u/2) (relative error
 * 2e−9 in exact arithmetic). */
static inline float ns_erfcx_large_(float u)
{
    float t = 1.0f / (1.0f + 0.5f * u);
    float s = -7.717384902e-02f;
    s = s * t + 2.497851291e-01f;
    s = s * t + -2.463831653e-01f;
    s = s * t + 2.471502714e-02f;
    s = s * t + -2.509560913e-02f;
    s = s * t + 8.690753384e-02f;
    s = s * t + 1.760337654e-01f;
    s = s * t + 2.468450622e-01f;
    s = s * t + 2.820945865e-01f;
    s = s * t + 2.820947923e-01f;
    return t * s;
}

#define NS_ERF_SPLIT 0.9375f

/* erf(x). */
static inline float ns_fast_erff(float x)
{
    float u = x < 0 ? -x : x;
    float small = ns_erf_small_(u);
    float large = 1.0f - ns_erfcx_large_(u) * ns_fast_expf(-u * u);
    float e = u < NS_ERF_SPLIT ? small : large;
    return x < 0 ? -e : e;
}

/* erfc(x) for x ≥ 0 (relative accuracy in the tail). */
static inline float ns_fast_erfcf(float x)
{
    float small = 1.0f - ns_erf_small_(x);
    float large = ns_erfcx_large_(x) * ns_fast_expf(-x * x);
    return x < NS_ERF_SPLIT ? small : large;
}

#define NS_SQRT1_2F 0.70710678118654752440f
#define NS_INV_SQRT_2PIF 0.39894228040143267794f

/* Φ(x) = (1 + erf(x/√2))/2 and φ(x) = e^{−x²/2}/√(2π), sharing e^{−x²/2};
 * in the lower tail Φ comes from erfc directly (relative accuracy).  GELU
 * (nn.c) is x·Φ(x); its AVX-512 kernel repeats these operations lane by
 * lane. */
static NS_ALWAYS_INLINE float ns_fast_gelu_cdf(float x, float *pdf)
{
    float u = (x < 0 ? -x : x) * NS_SQRT1_2F;
    float e = ns_fast_expf(-u * u);
    float small = 0.5f * ns_erf_small_(u);
    float half_erfc = 0.5f * ns_erfcx_large_(u) * e;
    float upper = u < NS_ERF_SPLIT ? 0.5f + small : 1.0f - half_erfc;
    float lower = u < NS_ERF_SPLIT ? 0.5f - small : half_erfc;
    *pdf = NS_INV_SQRT_2PIF * e;
    return x < 0 ? lower : upper;
}

/* 1 / (1 + e^−x). */
static inline float ns_fast_sigmoidf(float x) { return 1.0f / (1.0f + ns_fast_expf(-x)); }

/* tanh(x): Cephes' odd polynomial for |x| < 0.625, else
 * sign(x)·(1 − 2/(e^{2|x|} + 1)) with |x| clamped at 10 (tanh(10) rounds to 1). */
static inline float ns_fast_tanhf(float x)
{
    float a = x < 0 ? -x : x;
    float z = x * x;
    float p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z + -5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z + -3.33332819422e-1f;
    float small = p * z * x + x;
    float ac = a > 10.0f ? 10.0f : a;
    float big = 1.0f - 2.0f / (ns_fast_expf(2.0f * ac) + 1.0f);
    big = x < 0 ? -big : big;
    return a < 0.625f ? small : big;
}

#endif
