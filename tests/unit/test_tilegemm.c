/* test_tilegemm.c — the bf16x3 tile product (tilegemm.h) against a double
 * product: every output within 3·2⁻¹⁸ of Σ|x·w| plus the float sums' share
 * (3k products, 3k·2⁻²⁴), for row counts that leave partial row tiles and chunks (1, 15, 37,
 * 200), input strides wider than k, widths of 32 to 1,536 inputs, with and
 * without bias, sizes off the multiples of 32 (8, 16, 72: zero-padded); and
 * clearly more accurate than a single bfloat16 product (which the bound
 * would fail).
 * The activation products (_nt, _nn) on sizes off the multiples of 32, and
 * _nn adding onto y.  Outputs large enough to be streamed past the caches.
 * The products skip on CPUs without AMX. */
#include "nextstate/util/tilegemm.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/util/util.h"
#include "test.h"

static void fill(float *x, size_t n, float a, uint32_t seed)
{
    uint32_t r = seed * 2654435761u | 1u;
    for (size_t i = 0; i < n; i++) {
        r = r * 1664525u + 1013904223u;
        x[i] = a * ((float)(r >> 8) / 8388608.0f - 1.0f);
    }
}

static float bf16_trunc(float f) /* a single bfloat16 rounding (to nearest even) */
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* max over outputs of |y − exact| / (Σ|x w| + tiny), and the same for one bfloat16 product */
static void run(int rows, int k, int n, int ldx, bool bias, double *err3, double *err1)
{
    float *x = malloc((size_t)rows * ldx * sizeof *x), *W = malloc((size_t)n * k * sizeof *W);
    float *b = malloc((size_t)n * sizeof *b), *y = malloc((size_t)rows * (n + 3) * sizeof *y);
    uint16_t *P = malloc(ns_tilegemm_size(n, k) * sizeof *P);
    fill(x, (size_t)rows * ldx, 3.0f, (uint32_t)(rows * 7 + k));
    fill(W, (size_t)n * k, 0.2f, (uint32_t)(n * 13 + k));
    fill(b, (size_t)n, 1.0f, 99);
    ns_tilegemm_pack(P, W, n, k);
    for (size_t i = 0; i < (size_t)rows * (n + 3); i++) y[i] = NAN; /* columns n … n + 2: must stay untouched */
    ns_tilegemm(y, n + 3, x, ldx, rows, k, n, P, bias ? b : NULL, NULL);
    *err3 = *err1 = 0;
    for (int r = 0; r < rows; r++) {
        for (int o = 0; o < n; o++) {
            double exact = bias ? b[o] : 0, mag = 1e-30, one = bias ? b[o] : 0;
            for (int i = 0; i < k; i++) {
                double t = (double)x[(size_t)r * ldx + i] * W[(size_t)o * k + i];
                exact += t, mag += fabs(t);
                one += (double)bf16_trunc(x[(size_t)r * ldx + i]) * bf16_trunc(W[(size_t)o * k + i]);
            }
            double e = fabs(y[(size_t)r * (n + 3) + o] - exact) / mag;
            *err3 = e > *err3 || isnan(e) ? e : *err3;
            *err1 = fmax(*err1, fabs(one - exact) / mag);
        }
        for (int o = n; o < n + 3; o++) CHECK(isnan(y[(size_t)r * (n + 3) + o]));
    }
    free(x), free(W), free(b), free(y), free(P);
}

static void test_tilegemm_accuracy(void)
{
    static const int R[] = {1, 15, 37, 200}, K[][2] = {{8, 8}, {32, 32}, {96, 100}, {384, 384}, {1536, 1536}},
                     N[] = {16, 32, 72, 384};
    for (size_t ri = 0; ri < sizeof R / sizeof *R; ri++)
        for (size_t ki = 0; ki < sizeof K / sizeof *K; ki++)
            for (size_t ni = 0; ni < sizeof N / sizeof *N; ni++) {
                if (K[ki][0] == 1536 && (R[ri] > 37 || N[ni] > 64)) continue; /* the double reference's time */
                double e3, e1;
                run(R[ri], K[ki][0], N[ni], K[ki][1], (ri + ni) % 2 == 0, &e3, &e1);
                /* 3·2⁻¹⁸ per term, plus float sums of 3k products */
                double bound = 3.0 * ldexp(1.0, -18) + 3.0 * K[ki][0] * ldexp(1.0, -24);
                if (!(e3 <= bound)) printf("  rows %d k %d n %d: error %.3g > %.3g\n", R[ri], K[ki][0], N[ni], e3, bound);
                CHECK(e3 <= bound);
                CHECK(e1 > 4 * e3); /* a single bfloat16 product is far coarser: the split is in use */
            }
}

/* _nt and _nn on shapes off the multiples of 32 (attention: L keys, dh
 * dimensions), strides wider than the rows, columns from n on untouched. */
static void test_tilegemm_activations(void)
{
    static const int S[][3] = {{1, 1, 1}, {37, 45, 32}, {45, 45, 64}, {16, 300, 20}, {129, 33, 96}};
    for (size_t si = 0; si < sizeof S / sizeof *S; si++)
        for (int nn = 0; nn < 2; nn++) {
            int m = S[si][0], n = S[si][1], k = S[si][2];
            if (nn) n = S[si][2], k = S[si][1]; /* _nn: (L × L)·(L × dh) */
            int lda = k + 5, ldb = (nn ? n : k) + 3, ldy = n + 2, brows = nn ? k : n;
            float *a = malloc((size_t)m * lda * sizeof *a), *b = malloc((size_t)brows * ldb * sizeof *b);
            float *y = malloc((size_t)m * ldy * sizeof *y);
            fill(a, (size_t)m * lda, 2.0f, (uint32_t)(m + 3 * n + nn));
            fill(b, (size_t)brows * ldb, 0.5f, (uint32_t)(7 * k + n + nn));
            for (size_t i = 0; i < (size_t)m * ldy; i++) y[i] = NAN;
            const float alpha = nn ? 0.5f : 0.125f;
            if (nn) ns_tilegemm_nn(y, ldy, a, lda, m, b, ldb, k, n, alpha, false);
            else ns_tilegemm_nt(y, ldy, a, lda, m, b, ldb, n, k, alpha);
            double worst = 0;
            for (int r = 0; r < m; r++) {
                for (int o = 0; o < n; o++) {
                    double exact = 0, mag = 1e-30;
                    for (int i = 0; i < k; i++) {
                        double t = (double)a[(size_t)r * lda + i] * (nn ? b[(size_t)i * ldb + o] : b[(size_t)o * ldb + i]);
                        exact += t, mag += fabs(t);
                    }
                    double e = fabs(y[(size_t)r * ldy + o] - alpha * exact) / (alpha * mag);
                    worst = e > worst || isnan(e) ? e : worst;
                }
                for (int o = n; o < ldy; o++) CHECK(isnan(y[(size_t)r * ldy + o]));
            }
            double bound = 3.0 * ldexp(1.0, -18) + 3.0 * k * ldexp(1.0, -24);
            if (!(worst <= bound)) printf("  %s m %d n %d k %d: error %.3g > %.3g\n", nn ? "nn" : "nt", m, n, k, worst, bound);
            CHECK(worst <= bound);
            if (nn) { /* add: the same product onto y gives twice it, to the bit (both sums round alike) */
                float *y2 = malloc((size_t)m * ldy * sizeof *y2);
                memcpy(y2, y, (size_t)m * ldy * sizeof *y2);
                ns_tilegemm_nn(y2, ldy, a, lda, m, b, ldb, k, n, alpha, true);
                for (int r = 0; r < m; r++) {
                    for (int o = 0; o < n; o++) CHECK(y2[(size_t)r * ldy + o] == 2.0f * y[(size_t)r * ldy + o]);
                    for (int o = n; o < ldy; o++) CHECK(isnan(y2[(size_t)r * ldy + o]));
                }
                free(y2);
            }
            free(a), free(b), free(y);
        }
}

/* An output of 8 MiB and more is streamed past the caches (whole aligned
 * line pairs): into a cache-line-aligned y it must equal, bit for bit, the
 * same product into a y one float off (no streaming), leave the columns past
 * n alone, and keep the accuracy bound (sampled rows). */
static void test_tilegemm_stream(void)
{
    const int rows = 2050, k = 40, n = 1040, ldy = 1056; /* 8.3 MiB; the last 16 outputs of each row not streamed */
    float *x = malloc((size_t)rows * k * sizeof *x), *W = malloc((size_t)n * k * sizeof *W);
    float *b = malloc((size_t)n * sizeof *b);
    float *ya = ns_xaligned((size_t)rows * ldy * sizeof *ya), *raw = malloc(((size_t)rows * ldy + 1) * sizeof *raw);
    float *yu = raw + 1;
    uint16_t *P = malloc(ns_tilegemm_size(n, k) * sizeof *P);
    fill(x, (size_t)rows * k, 2.0f, 5), fill(W, (size_t)n * k, 0.3f, 6), fill(b, (size_t)n, 1.0f, 7);
    ns_tilegemm_pack(P, W, n, k);
    for (size_t i = 0; i < (size_t)rows * ldy; i++) ya[i] = yu[i] = NAN;
    ns_tilegemm(ya, ldy, x, k, rows, k, n, P, b, NULL);
    ns_tilegemm(yu, ldy, x, k, rows, k, n, P, b, NULL);
    CHECK(!memcmp(ya, yu, (size_t)rows * ldy * sizeof *ya) || rows == 0);
    double worst = 0;
    for (int r = 0; r < rows; r++) {
        for (int o = n; o < ldy; o++) CHECK(isnan(ya[(size_t)r * ldy + o]));
        if (r % 41 && r != rows - 1) continue;
        for (int o = 0; o < n; o++) {
            double exact = b[o], mag = 1e-30;
            for (int i = 0; i < k; i++) {
                double t = (double)x[(size_t)r * k + i] * W[(size_t)o * k + i];
                exact += t, mag += fabs(t);
            }
            double e = fabs(ya[(size_t)r * ldy + o] - exact) / mag;
            worst = e > worst || isnan(e) ? e : worst;
        }
    }
    CHECK(worst <= 3.0 * ldexp(1.0, -18) + 3.0 * k * ldexp(1.0, -24));
    free(x), free(W), free(b), free(ya), free(raw), free(P);
}

static void test_tilegemm_shapes(void)
{
    CHECK(ns_tilegemm_size(32, 32) == 2048);
    CHECK(ns_tilegemm_size(384, 1536) == (size_t)384 * 1536 * 2);
    CHECK(ns_tilegemm_size(48, 32) == (size_t)64 * 32 * 2);
    CHECK(ns_tilegemm_size(8, 40) == (size_t)32 * 64 * 2);
    CHECK(ns_tilegemm_size(0, 32) == 0);
    CHECK(ns_tilegemm_size(-32, 32) == 0);
}

int main(void)
{
    NS_RUN(test_tilegemm_shapes);
    if (ns_tilegemm_usable()) {
        NS_RUN(test_tilegemm_accuracy);
        NS_RUN(test_tilegemm_activations);
        NS_RUN(test_tilegemm_stream);
    } else {
        NS_SKIP(test_tilegemm_accuracy, "no AMX bfloat16 on this CPU (or no tile state from the kernel)");
        NS_SKIP(test_tilegemm_activations, "no AMX bfloat16 on this CPU (or no tile state from the kernel)");
        NS_SKIP(test_tilegemm_stream, "no AMX bfloat16 on this CPU (or no tile state from the kernel)");
    }
    return ns_test_summary("test_tilegemm");
}
