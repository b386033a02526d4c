/* test_nn.c — layers of nn.h: every forward/backward against PyTorch
 * (float64 references in tests/fixtures/nn, made by dev/nn_reference.py),
 * finite-difference gradient checks of every gradient, accumulation into
 * gradient buffers, the sparse layer against the dense one, and the two
 * composite blocks (residual MLP, FiLM) at toy and at the paper's sizes. */
#include "nextstate/learn/nn.h"
#include "nextstate/util/fastmath.h"

#include <math.h>
#include <string.h>
#include "nextstate/util/blas.h"
#include "test.h"
#include "nn_check.h"

#define ATOL 2e-6
#define RTOL 1e-5
/* finite differences in float: step, tolerance */
#define FD_H 1e-2f
#define FD_ATOL 2e-3
#define FD_RTOL 1e-2

static float *zeros(size_t n) { return calloc(n ? n : 1, sizeof(float)); }

/* ---- bfloat16 inference ------------------------------------------------------ */

static float from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static void test_bf16_rounding(void)
{
    CHECK_EQ_INT(ns_bf16(1.0f), 0x3f80);
    CHECK_EQ_INT(ns_bf16(-2.0f), 0xc000);
    CHECK_EQ_INT(ns_bf16(1.0f + 0x1p-7f), 0x3f81);          /* exact */
    CHECK_EQ_INT(ns_bf16(1.0f + 0x1p-8f), 0x3f80);          /* tie: to even (down) */
    CHECK_EQ_INT(ns_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);      /* tie: to even (up) */
    CHECK_EQ_INT(ns_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81); /* past the tie: up */
    CHECK_EQ_INT(ns_bf16(INFINITY), 0x7f80);
    CHECK(isnan(from_bf16(ns_bf16(NAN))));
    CHECK(ns_bf16(3.4e38f) == 0x7f80 || from_bf16(ns_bf16(3.4e38f)) > 3e38f);
    for (int i = -50; i <= 50; i++) { /* relative error ≤ 2⁻⁸ (8 significant bits) */
        float x = (float)i * 0.37f + 0.011f;
        CHECK(fabsf(from_bf16(ns_bf16(x)) - x) <= fabsf(x) * 0x1p-8f);
    }
}

/* ns_linear_forward_bf16 on ns_bf16_pack's layout = the float64 sum over
 * bfloat16-rounded inputs and weights (up to float summation): an odd C, a
 * partial output block (OC % 128), several blocks (OC = 300) and, at
 * C = 4201, more input pairs than one rounding pass holds. */
static void test_bf16_linear(void)
{
    const int shapes[5][3] = {{3, 71, 7}, {1, 384, 128}, {2, 4201, 5}, {2, 129, 300}, {1, 1, 1}};
    for (int t = 0; t < 5; t++) {
        int B = shapes[t][0], C = shapes[t][1], OC = shapes[t][2];
        float *x = malloc((size_t)B * C * sizeof(float)), *W = malloc((size_t)OC * C * sizeof(float));
        float *bias = malloc((size_t)OC * sizeof(float)), *got = malloc((size_t)B * OC * sizeof(float));
        float *f32 = malloc((size_t)B * OC * sizeof(float));
        uint16_t *Wb = malloc(ns_bf16_packed_size(C, OC) * sizeof(uint16_t));
        for (int i = 0; i < B * C; i++) x[i] = sinf(0.37f * (float)i + 0.1f);
        for (int i = 0; i < OC * C; i++) W[i] = 0.2f * cosf(0.91f * (float)i);
        for (int o = 0; o < OC; o++) bias[o] = 0.1f * (float)o - 0.3f;
        ns_bf16_pack(Wb, W, C, OC);
        ns_linear_forward_bf16(got, x, Wb, bias, B, C, OC);
        ns_linear_forward(f32, x, W, bias, B, C, OC);
        double worst = 0, worst_f = 0;
        for (int b = 0; b < B; b++)
            for (int o = 0; o < OC; o++) {
                double ref = bias[o], mag = 0;
                for (int c = 0; c < C; c++) {
                    double p = (double)from_bf16(ns_bf16(W[(size_t)o * C + c])) * from_bf16(ns_bf16(x[(size_t)b * C + c]));
                    ref += p, mag += fabs(p);
                }
                worst = fmax(worst, fabs(got[b * OC + o] - ref) / (mag + 1));
                worst_f = fmax(worst_f, fabs(got[b * OC + o] - f32[b * OC + o]) / (mag + 1));
            }
        CHECK(worst < 1e-5);     /* the bfloat16 arithmetic, summed in float */
        CHECK(worst_f < 1e-2);   /* near the float layer … */
        CHECK(worst_f > 1e-6);   /* … but not it: the rounding happened */
        memcpy(f32, got, (size_t)B * OC * sizeof(float)); /* the bf16 result with bias */
        ns_linear_forward_bf16(got, x, Wb, NULL, B, C, OC);
        double nb = 0;
        for (int i = 0; i < B * OC; i++) nb = fmax(nb, fabs(got[i] + bias[i % OC] - f32[i]) / (fabs(f32[i]) + 1));
        if (nb >= 1e-5) printf("  no-bias shape %d: max rel diff %.3g\n", t, nb);
        CHECK(nb < 1e-5); /* without bias: the same sums, bias added once (float rounding apart) */
        free(x), free(W), free(bias), free(got), free(f32), free(Wb);
    }
}

/* ns_linear_forward_i8 = the exact integer arithmetic of nn.h's formula
 * recomputed here from the float weights and inputs (per-row scales, nearest
 * even, 128 + q inputs), bit for bit (whatever kernel the CPU picks: integer
 * sums are exact); near the float layer.  Odd C (a partial quad), a partial
 * and several output blocks, more quads than one quantising pass holds
 * (C = 8201), an all-zero input row; batches the AVX-512 kernels take two
 * rows at a time and AMX sixteen (with rows left over, partial blocks and
 * tiles, a partial last tile of quads, and C too wide for sixteen rows in
 * one pass: two at a time). */
static void test_i8_linear(void)
{
    const int shapes[12][3] = {{3, 71, 7},     {1, 384, 128},  {2, 8201, 5},   {2, 129, 300},
                               {1, 1, 1},      {9, 384, 130},  {4, 2049, 64},  {8, 33, 200},
                               {20, 384, 130}, {16, 71, 200},  {16, 200, 70},  {17, 2049, 64}};
    for (int t = 0; t < 12; t++) {
        int B = shapes[t][0], C = shapes[t][1], OC = shapes[t][2];
        float *x = malloc((size_t)B * C * sizeof(float)), *W = malloc((size_t)OC * C * sizeof(float));
        float *bias = malloc((size_t)OC * sizeof(float)), *got = malloc((size_t)B * OC * sizeof(float));
        float *f32 = malloc((size_t)B * OC * sizeof(float));
        uint8_t *Wq = malloc(ns_i8_packed_size(C, OC));
        for (int i = 0; i < B * C; i++) x[i] = sinf(0.37f * (float)i + 0.1f);
        if (B > 1)
            for (int c = 0; c < C; c++) x[(size_t)(B - 1) * C + c] = 0; /* the last row: zeros */
        for (int i = 0; i < OC * C; i++) W[i] = 0.2f * cosf(0.91f * (float)i);
        for (int o = 0; o < OC; o++) bias[o] = 0.1f * (float)o - 0.3f;
        ns_i8_pack(Wq, W, C, OC);
        ns_linear_forward_i8(got, x, Wq, bias, B, C, OC);
        ns_linear_forward(f32, x, W, bias, B, C, OC);
        int exact = 1;
        double worst_f = 0;
        for (int b = 0; b < B; b++) {
            const float *xb = x + (size_t)b * C;
            float m = 0;
            for (int c = 0; c < C; c++) m = fmaxf(m, fabsf(xb[c]));
            float sx = m / 127.0f, inv = m > 0 ? 127.0f / m : 0.0f;
            for (int o = 0; o < OC; o++) {
                const float *wo = W + (size_t)o * C;
                float wm = 0;
                for (int c = 0; c < C; c++) wm = fmaxf(wm, fabsf(wo[c]));
                float sw = wm > 0 ? wm / 127.0f : 1.0f;
                int64_t acc = 0, mag = 0;
                for (int c = 0; c < C; c++) {
                    long qw = lrintf(wo[c] / sw), qx = lrintf(fmaxf(-127.0f, fminf(127.0f, xb[c] * inv)));
                    acc += qw * qx, mag += labs(qw * qx);
                }
                float ref = (float)acc * (sx * sw) + bias[o];
                if (ref != got[b * OC + o]) exact = 0;
                worst_f = fmax(worst_f, fabs(got[b * OC + o] - f32[b * OC + o]) / ((double)mag * sx * sw + 1));
            }
        }
        CHECK(exact);          /* the integer arithmetic, to the bit */
        CHECK(worst_f < 2e-2); /* near the float layer */
        if (B > 1) CHECK(got[(size_t)(B - 1) * OC] == bias[0]); /* zero row: the bias */
        ns_linear_forward_i8(got, x, Wq, NULL, B, C, OC);
        double nb = 0;
        ns_linear_forward_i8(f32, x, Wq, bias, B, C, OC);
        for (int i = 0; i < B * OC; i++) nb = fmax(nb, fabs(got[i] + bias[i % OC] - f32[i]));
        CHECK(nb < 1e-5);
        free(x), free(W), free(bias), free(got), free(f32), free(Wq);
    }
}

/* ns_i8_table_dots = the exact integer arithmetic of nn.h's formula (the
 * table's rows quantised as ns_i8_pack's weight rows, the query as an input
 * row), bit for bit; near the float scores (mul scaling them); the same
 * order of candidates as the float scores on a fixture whose scores are
 * apart; rows given or not (rows NULL), a width that is not a multiple of 64
 * and one past the query's stack segment (D = 1500), an all-zero row. */
static void test_i8_table(void)
{
    const int dims[4] = {128, 100, 1500, 3};
    for (int t = 0; t < 4; t++) {
        int D = dims[t], N = 37;
        float *X = malloc((size_t)N * D * sizeof(float)), *q = malloc((size_t)D * sizeof(float));
        float *got = malloc((size_t)N * sizeof(float)), *all = malloc((size_t)N * sizeof(float));
        uint8_t *tab = malloc(ns_i8_table_size(N, D));
        for (int i = 0; i < N * D; i++) X[i] = 0.3f * sinf(0.77f * (float)i + 0.2f);
        for (int c = 0; c < D; c++) X[(size_t)5 * D + c] = 0; /* row 5: zeros */
        for (int c = 0; c < D; c++) q[c] = cosf(0.31f * (float)c);
        ns_i8_table_pack(tab, X, N, D);
        int64_t rows[9] = {36, 0, 5, 17, 17, 2, 35, 1, 20};
        ns_i8_table_dots(got, q, 0.5f, tab, N, D, rows, 9);
        ns_i8_table_dots(all, q, 0.5f, tab, N, D, NULL, N);
        float m = 0;
        for (int c = 0; c < D; c++) m = fmaxf(m, fabsf(q[c]));
        float sx = m / 127.0f, inv = 127.0f / m;
        int exact = 1;
        double worst = 0;
        for (int j = 0; j < 9; j++) {
            const float *r = X + (size_t)rows[j] * D;
            float rm = 0;
            for (int c = 0; c < D; c++) rm = fmaxf(rm, fabsf(r[c]));
            float sr = rm > 0 ? rm / 127.0f : 1.0f;
            int64_t acc = 0;
            double f = 0, mag = 0;
            for (int c = 0; c < D; c++) {
                long qr = lrintf(r[c] / sr), qx = lrintf(fmaxf(-127.0f, fminf(127.0f, q[c] * inv)));
                acc += qr * qx;
                f += (double)q[c] * r[c], mag += fabs((double)q[c] * r[c]);
            }
            float ref = (float)acc * (sx * 0.5f * sr);
            if (ref != got[j] || got[j] != all[rows[j]]) exact = 0;
            worst = fmax(worst, fabs(got[j] - 0.5 * f) / (0.5 * mag + 1e-9));
        }
        CHECK(exact);        /* the integer arithmetic, to the bit, with or without rows */
        CHECK(worst < 2e-2); /* near the float scores */
        CHECK(got[2] == 0);  /* the zero row */
        free(X), free(q), free(got), free(all), free(tab);
    }
    /* rankings: candidates whose float scores are apart keep their order */
    enum { D = 128, N = 64 };
    float *X = malloc((size_t)N * D * sizeof(float)), q[D], f[N], g[N];
    for (int c = 0; c < D; c++) q[c] = sinf(0.5f * (float)c + 1.0f);
    for (int j = 0; j < N; j++) /* row j: a mix of q (weight (j - 32)/32) and a fixed other direction */
        for (int c = 0; c < D; c++) X[(size_t)j * D + c] = (float)(j - 32) / 32.0f * q[c] + 0.5f * cosf(1.7f * (float)c);
    uint8_t *tab = malloc(ns_i8_table_size(N, D));
    ns_i8_table_pack(tab, X, N, D);
    ns_i8_table_dots(g, q, 1.0f, tab, N, D, NULL, N);
    ns_dots(f, q, X, N, D);
    int same = 1;
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++)
            if ((f[a] < f[b]) != (g[a] < g[b])) same = 0;
    CHECK(same);
    free(X), free(tab);
}

/* ---- dense linear ------------------------------------------------------------ */

static void test_linear_reference(void)
{
    if (!nn_have("linear")) return;
    const int B = 4, C = 7, OC = 5;
    float *x = nn_f32("linear", "x", NULL), *w = nn_f32("linear", "w", NULL), *b = nn_f32("linear", "b", NULL);
    float *dout = nn_f32("linear", "dout", NULL);
    float *out = zeros(B * OC), *dx = zeros(B * C), *dw = zeros(OC * C), *db = zeros(OC);
    ns_linear_forward(out, x, w, b, B, C, OC);
    ns_linear_backward(dx, dw, db, dout, x, w, B, C, OC);
    nn_cmp_fx("linear", "out", out, B * OC, ATOL, RTOL);
    nn_cmp_fx("linear", "dx", dx, B * C, ATOL, RTOL);
    nn_cmp_fx("linear", "dw", dw, OC * C, ATOL, RTOL);
    nn_cmp_fx("linear", "db", db, OC, ATOL, RTOL);
    /* backward accumulates: a second call doubles every gradient */
    float *dx2 = malloc(B * C * sizeof(float));
    memcpy(dx2, dx, B * C * sizeof(float));
    ns_linear_backward(dx, dw, db, dout, x, w, B, C, OC);
    for (int i = 0; i < B * C; i++) CHECK(fabsf(dx[i] - 2 * dx2[i]) <= 1e-6f * (1 + fabsf(dx[i])));
    /* without bias: out − bias */
    float *out2 = zeros(B * OC);
    ns_linear_forward(out2, x, w, NULL, B, C, OC);
    for (int i = 0; i < B * OC; i++) CHECK(fabsf(out2[i] + b[i % OC] - out[i]) < 1e-5f);
    free(x), free(w), free(b), free(dout), free(out), free(dx), free(dw), free(db), free(dx2), free(out2);
}

/* Batch 1 takes a matrix-vector kernel of its own (nn.c gemv): the float64
 * sums within float rounding, and the same row in a batch of 3 (sgemm) to
 * the same tolerance — rows of C not a multiple of 16, outputs not of 8, with
 * and without bias, and the paper's widths. */
static void test_linear_batch1(void)
{
    const int shapes[6][2] = {{1, 1}, {7, 3}, {16, 8}, {37, 21}, {384, 384}, {256, 128}};
    for (int t = 0; t < 6; t++) {
        int C = shapes[t][0], OC = shapes[t][1];
        float *x = zeros(3 * C), *w = zeros(OC * C), *b = zeros(OC), *one = zeros(OC), *three = zeros(3 * OC);
        nn_fill(x, 3 * C, 11 + t, -1, 1), nn_fill(w, OC * C, 12 + t, -0.5f, 0.5f), nn_fill(b, OC, 13 + t, -1, 1);
        double worst = 0, worst_b = 0;
        for (int nb = 0; nb < 2; nb++) {
            const float *bias = nb ? NULL : b;
            ns_linear_forward(one, x + C, w, bias, 1, C, OC); /* row 1 alone */
            ns_linear_forward(three, x, w, bias, 3, C, OC);
            for (int o = 0; o < OC; o++) {
                double ref = bias ? bias[o] : 0, mag = fabs(ref);
                for (int c = 0; c < C; c++) {
                    ref += (double)w[(size_t)o * C + c] * x[C + c];
                    mag += fabs((double)w[(size_t)o * C + c] * x[C + c]);
                }
                worst = fmax(worst, fabs(one[o] - ref) / (mag + 1e-30));
                worst_b = fmax(worst_b, fabs(one[o] - three[OC + o]) / (mag + 1e-30));
            }
        }
        if (worst > 1e-6 || worst_b > 2e-6) printf("  C %d OC %d: rel error %.3g, against the batch %.3g\n", C, OC, worst, worst_b);
        CHECK(worst <= 1e-6);
        CHECK(worst_b <= 2e-6);
        free(x), free(w), free(b), free(one), free(three);
    }
}

/* ns_gelu_forward = x·ns_fast_gelu_cdf(x) (fastmath.h) evaluated here one
 * input at a time, bit for bit, whichever kernel runs (the AVX-512 one
 * computes each input on its side of erf's split only): a grid through both
 * sides and both signs, the split itself, the tails (e^−u² clamped), zeros,
 * subnormals, infinities; lengths that leave every lane remainder, past one
 * chunk of the kernel; in place too. */
static void test_gelu_bits(void)
{
    enum { N = 1400 };
    float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float)), *z = malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) x[i] = -14.0f + 28.0f * (float)((i * 787) % N) / (float)N; /* shuffled */
    const float special[] = {0.0f, -0.0f, 1.3258252f, -1.3258252f, 1.3258253f, -1.3258253f, 1e-40f, -1e-40f,
                             INFINITY, -INFINITY, 1e30f, -1e30f, 13.9f, -13.9f};
    for (size_t k = 0; k < sizeof special / sizeof *special; k++) x[7 * k + 3] = special[k];
    x[5] = 0.9375f * 1.41421356f, x[6] = -0.9375f * 1.41421356f; /* u at the split */
    const int lens[] = {1, 15, 16, 17, 100, 511, 512, 513, 1025, N};
    int bad = 0;
    for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) {
        int n = lens[k];
        ns_gelu_forward(y, x, (size_t)n);
        for (int i = 0; i < n; i++) {
            float pdf, r = x[i] * ns_fast_gelu_cdf(x[i], &pdf);
            if (memcmp(&r, &y[i], sizeof r) != 0) {
                if (bad++ < 5) printf("  gelu(%.9g) = %.9g, formula %.9g (n %d)\n", x[i], y[i], r, n);
            }
        }
    }
    memcpy(z, x, N * sizeof(float));
    ns_gelu_forward(z, z, N); /* in place */
    CHECK(memcmp(z, y, N * sizeof(float)) == 0);
    CHECK(bad == 0);
    free(x), free(y), free(z);
}

/* ns_layernorm_forward = nn.c's arithmetic recomputed here with plain
 * loops, bit for bit, whichever kernel runs: the mean and the variance each
 * summed in 8 interleaved partial sums (lane k takes x[k], x[k+8], …),
 * combined as ((p0 + p4) + (p1 + p5)) + ((p2 + p6) + (p3 + p7)); then
 * ((x − m)·r)·w + b.  Widths that leave every remainder of 8 and 16, several
 * rows, weight and bias given or not (a bias without a weight is ignored). */
static float ln_sum8_ref(const float *x, float m, int C, bool sq)
{
    float p[8] = {0};
    for (int i = 0; i < C; i++) {
        float d = x[i] - m;
        p[i % 8] += sq ? d * d : x[i];
    }
    return ((p[0] + p[4]) + (p[1] + p[5])) + ((p[2] + p[6]) + (p[3] + p[7]));
}

static void test_layernorm_bits(void)
{
    const int widths[] = {1, 5, 8, 13, 16, 23, 128, 384, 1031};
    int bad = 0;
    for (size_t k = 0; k < sizeof widths / sizeof *widths; k++) {
        int N = 3, C = widths[k];
        float *x = zeros(N * C), *w = zeros(C), *b = zeros(C), *y = zeros(N * C), mean[3], rstd[3];
        nn_fill(x, (size_t)N * C, 40 + k, -2, 3), nn_fill(w, C, 50 + k, 0.5f, 1.5f), nn_fill(b, C, 60 + k, -1, 1);
        for (int mode = 0; mode < 3; mode++) { /* affine, weight only, none */
            const float *wp = mode < 2 ? w : NULL, *bp = mode == 0 ? b : NULL;
            ns_layernorm_forward(y, mean, rstd, x, wp, mode == 2 ? b : bp, N, C, NS_LN_EPS);
            for (int n = 0; n < N; n++) {
                const float *xr = x + n * C;
                float m = ln_sum8_ref(xr, 0, C, false) / (float)C;
                float v = ln_sum8_ref(xr, m, C, true) / (float)C, r = 1.0f / sqrtf(v + NS_LN_EPS);
                bad += memcmp(&m, &mean[n], sizeof m) != 0 || memcmp(&r, &rstd[n], sizeof r) != 0;
                for (int i = 0; i < C; i++) {
                    float t = (xr[i] - m) * r;
                    if (wp) t = t * wp[i];
                    if (wp && bp) t = t + bp[i];
                    if (memcmp(&t, &y[n * C + i], sizeof t) != 0 && bad++ < 5)
                        printf("  layernorm C %d mode %d row %d [%d]: %.9g, plain loops %.9g\n", C, mode, n, i,
                               y[n * C + i], t);
                }
            }
        }
        free(x), free(w), free(b), free(y);
    }
    CHECK(bad == 0);
}

typedef struct lin_ctx {
    float *x, *w, *b, *dout, *out;
    int B, C, OC;
} lin_ctx;

static double lin_obj(void *p)
{
    lin_ctx *c = p;
    ns_linear_forward(c->out, c->x, c->w, c->b, c->B, c->C, c->OC);
    return nn_dot(c->out, c->dout, (size_t)c->B * c->OC);
}

static void test_linear_gradcheck(void)
{
    lin_ctx c = {0};
    c.B = 5, c.C = 9, c.OC = 6;
    c.x = zeros(c.B * c.C), c.w = zeros(c.OC * c.C), c.b = zeros(c.OC), c.dout = zeros(c.B * c.OC);
    c.out = zeros(c.B * c.OC);
    nn_fill(c.x, c.B * c.C, 1, -1, 1), nn_fill(c.w, c.OC * c.C, 2, -0.5f, 0.5f), nn_fill(c.b, c.OC, 3, -1, 1);
    nn_fill(c.dout, c.B * c.OC, 4, -1, 1);
    float *dx = zeros(c.B * c.C), *dw = zeros(c.OC * c.C), *db = zeros(c.OC);
    ns_linear_backward(dx, dw, db, c.dout, c.x, c.w, c.B, c.C, c.OC);
    nn_gradcheck("linear dx", lin_obj, &c, c.x, dx, c.B * c.C, FD_H, FD_ATOL, FD_RTOL);
    nn_gradcheck("linear dw", lin_obj, &c, c.w, dw, c.OC * c.C, FD_H, FD_ATOL, FD_RTOL);
    nn_gradcheck("linear db", lin_obj, &c, c.b, db, c.OC, FD_H, FD_ATOL, FD_RTOL);
    /* NULL gradient pointers are skipped */
    ns_linear_backward(NULL, NULL, db, c.dout, c.x, c.w, c.B, c.C, c.OC);
    free(c.x), free(c.w), free(c.b), free(c.dout), free(c.out), free(dx), free(dw), free(db);
}

/* ---- sparse-input linear ------------------------------------------------------- */

static void test_sparse_reference(void)
{
    if (!nn_have("sparse_linear")) return;
    const int B = 4, C = 9, OC = 5;
    size_t nnz, np;
    int64_t *indptr = nn_i64("sparse_linear", "indptr", &np), *ind64 = nn_i64("sparse_linear", "indices", &nnz);
    int32_t *indices = malloc(nnz * sizeof(int32_t));
    for (size_t i = 0; i < nnz; i++) indices[i] = (int32_t)ind64[i];
    float *values = nn_f32("sparse_linear", "values", NULL), *w = nn_f32("sparse_linear", "w", NULL);
    float *b = nn_f32("sparse_linear", "b", NULL), *dout = nn_f32("sparse_linear", "dout", NULL);
    CHECK_EQ_INT(np, B + 1);
    float *out = zeros(B * OC), *dw = zeros(OC * C), *db = zeros(OC);
    ns_sparse_linear_forward(out, indptr, indices, values, w, b, B, C, OC);
    ns_sparse_linear_backward(dw, db, dout, indptr, indices, values, B, C, OC);
    nn_cmp_fx("sparse_linear", "out", out, B * OC, ATOL, RTOL);
    nn_cmp_fx("sparse_linear", "dw", dw, OC * C, ATOL, RTOL);
    nn_cmp_fx("sparse_linear", "db", db, OC, ATOL, RTOL);
    /* a slice of rows 1..3 (indptr + 1) gives rows 1..3 of the output */
    float *out2 = zeros(2 * OC);
    ns_sparse_linear_forward(out2, indptr + 1, indices, values, w, b, 2, C, OC);
    for (int i = 0; i < 2 * OC; i++) CHECK(out2[i] == out[OC + i]);
    free(indptr), free(ind64), free(indices), free(values), free(w), free(b), free(dout), free(out), free(dw);
    free(db), free(out2);
}

/* Random CSR rows vs the dense layer on the same matrix. */
static void test_sparse_vs_dense(void)
{
    const int B = 7, C = 40, OC = 6;
    int64_t indptr[8] = {0};
    int32_t indices[64];
    float values[64], dense[7 * 40] = {0}, u[64];
    nn_fill(u, 64, 11, 0, 1);
    int nnz = 0;
    for (int b = 0; b < B; b++) {
        int k = b == 3 ? 0 : 1 + (int)(u[b] * 8); /* row 3 empty */
        for (int j = 0; j < k; j++) {
            indices[nnz] = (int32_t)(u[(nnz * 7 + 3) % 64] * C);
            values[nnz] = u[(nnz * 5 + 1) % 64] * 2 - 1;
            dense[b * C + indices[nnz]] += values[nnz];
            nnz++;
        }
        indptr[b + 1] = nnz;
    }
    float w[6 * 40], bias[6], dout[7 * 6];
    nn_fill(w, OC * C, 12, -1, 1), nn_fill(bias, OC, 13, -1, 1), nn_fill(dout, B * OC, 14, -1, 1);
    float o1[42], o2[42], dw1[240] = {0}, dw2[240] = {0}, db1[6] = {0}, db2[6] = {0};
    ns_sparse_linear_forward(o1, indptr, indices, values, w, bias, B, C, OC);
    ns_linear_forward(o2, dense, w, bias, B, C, OC);
    ns_sparse_linear_backward(dw1, db1, dout, indptr, indices, values, B, C, OC);
    ns_linear_backward(NULL, dw2, db2, dout, dense, w, B, C, OC);
    double mo = 0, mw = 0;
    for (int i = 0; i < B * OC; i++) mo = fmax(mo, fabs(o1[i] - o2[i]));
    for (int i = 0; i < OC * C; i++) mw = fmax(mw, fabs(dw1[i] - dw2[i]));
    for (int i = 0; i < OC; i++) CHECK(fabsf(db1[i] - db2[i]) < 1e-5f);
    printf("  sparse vs dense (nnz %d): max|diff| out %.3g, dw %.3g\n", nnz, mo, mw);
    CHECK(mo < 1e-5 && mw < 1e-5);
}

/* ---- LayerNorm ------------------------------------------------------------------------ */

static void test_layernorm_reference(void)
{
    if (!nn_have("layernorm")) return;
    const int N = 4, C = 8;
    float *x = nn_f32("layernorm", "x", NULL), *w = nn_f32("layernorm", "w", NULL);
    float *b = nn_f32("layernorm", "b", NULL), *dout = nn_f32("layernorm", "dout", NULL);
    float *out = zeros(N * C), *dx = zeros(N * C), *dw = zeros(C), *db = zeros(C), mean[4], rstd[4];
    ns_layernorm_forward(out, mean, rstd, x, w, b, N, C, NS_LN_EPS);
    ns_layernorm_backward(dx, dw, db, dout, x, w, mean, rstd, N, C);
    nn_cmp_fx("layernorm", "out", out, N * C, ATOL, RTOL);
    nn_cmp_fx("layernorm", "dx", dx, N * C, ATOL, RTOL);
    nn_cmp_fx("layernorm", "dw", dw, C, ATOL, RTOL);
    nn_cmp_fx("layernorm", "db", db, C, ATOL, RTOL);
    memset(dx, 0, N * C * sizeof(float));
    ns_layernorm_forward(out, mean, rstd, x, NULL, NULL, N, C, NS_LN_EPS);
    ns_layernorm_backward(dx, NULL, NULL, dout, x, NULL, mean, rstd, N, C);
    nn_cmp_fx("layernorm", "out_plain", out, N * C, ATOL, RTOL);
    nn_cmp_fx("layernorm", "dx_plain", dx, N * C, ATOL, RTOL);
    free(x), free(w), free(b), free(dout), free(out), free(dx), free(dw), free(db);
}

typedef struct ln_ctx {
    float *x, *w, *b, *dout, *out, *mean, *rstd;
    int N, C;
} ln_ctx;

static double ln_obj(void *p)
{
    ln_ctx *c = p;
    ns_layernorm_forward(c->out, c->mean, c->rstd, c->x, c->w, c->b, c->N, c->C, NS_LN_EPS);
    return nn_dot(c->out, c->dout, (size_t)c->N * c->C);
}

static void test_layernorm_gradcheck(void)
{
    ln_ctx c = {0};
    c.N = 3, c.C = 16;
    size_t nc = (size_t)c.N * c.C;
    c.x = zeros(nc), c.w = zeros(c.C), c.b = zeros(c.C), c.dout = zeros(nc), c.out = zeros(nc);
    c.mean = zeros(c.N), c.rstd = zeros(c.N);
    nn_fill(c.x, nc, 21, -2, 3), nn_fill(c.w, c.C, 22, 0.5f, 1.5f), nn_fill(c.b, c.C, 23, -1, 1);
    nn_fill(c.dout, nc, 24, -1, 1);
    float *dx = zeros(nc), *dw = zeros(c.C), *db = zeros(c.C);
    ln_obj(&c);
    ns_layernorm_backward(dx, dw, db, c.dout, c.x, c.w, c.mean, c.rstd, c.N, c.C);
    nn_gradcheck("layernorm dx", ln_obj, &c, c.x, dx, nc, FD_H, FD_ATOL, FD_RTOL);
    nn_gradcheck("layernorm dw", ln_obj, &c, c.w, dw, c.C, FD_H, FD_ATOL, FD_RTOL);
    nn_gradcheck("layernorm db", ln_obj, &c, c.b, db, c.C, FD_H, FD_ATOL, FD_RTOL);
    /* the rows are normalised */
    ln_obj(&c);
    float plain[48], m[3], r[3];
    ns_layernorm_forward(plain, m, r, c.x, NULL, NULL, c.N, c.C, NS_LN_EPS);
    for (int n = 0; n < c.N; n++) {
        double s = 0, s2 = 0;
        for (int i = 0; i < c.C; i++) s += plain[n * c.C + i], s2 += plain[n * c.C + i] * plain[n * c.C + i];
        CHECK(fabs(s / c.C) < 1e-6 && fabs(s2 / c.C - 1) < 1e-3);
    }
    free(c.x), free(c.w), free(c.b), free(c.dout), free(c.out), free(c.mean), free(c.rstd), free(dx), free(dw);
    free(db);
}

/* ---- activations ------------------------------------------------------------------------ */

static void test_activations_reference(void)
{
    if (!nn_have("act")) return;
    size_t n;
    float *x = nn_f32("act", "x", &n), *dout = nn_f32("act", "dout", NULL);
    float *out = zeros(n), *dx = zeros(n);
    ns_gelu_forward(out, x, n);
    ns_gelu_backward(dx, dout, x, n);
    nn_cmp_fx("act", "gelu_out", out, n, ATOL, RTOL);
    nn_cmp_fx("act", "gelu_dx", dx, n, ATOL, RTOL);
    memset(dx, 0, n * sizeof(float));
    ns_relu_forward(out, x, n);
    ns_relu_backward(dx, dout, x, n);
    nn_cmp_fx("act", "relu_out", out, n, 0, 0);
    nn_cmp_fx("act", "relu_dx", dx, n, 0, 0);
    /* in place */
    memcpy(out, x, n * sizeof(float));
    ns_gelu_forward(out, out, n);
    nn_cmp_fx("act", "gelu_out", out, n, ATOL, RTOL);
    free(x), free(dout), free(out), free(dx);
}

typedef struct act_ctx {
    float *x, *dout, *out;
    size_t n;
    int relu;
} act_ctx;

static double act_obj(void *p)
{
    act_ctx *c = p;
    if (c->relu) ns_relu_forward(c->out, c->x, c->n);
    else ns_gelu_forward(c->out, c->x, c->n);
    return nn_dot(c->out, c->dout, c->n);
}

static void test_activations_gradcheck(void)
{
    act_ctx c = {0};
    c.n = 64;
    c.x = zeros(c.n), c.dout = zeros(c.n), c.out = zeros(c.n);
    nn_fill(c.x, c.n, 31, -4, 4);
    for (size_t i = 0; i < c.n; i++) /* keep clear of ReLU's kink */
        if (fabsf(c.x[i]) < 0.05f) c.x[i] = 0.3f;
    nn_fill(c.dout, c.n, 32, -1, 1);
    float *dx = zeros(c.n);
    ns_gelu_backward(dx, c.dout, c.x, c.n);
    nn_gradcheck("gelu dx", act_obj, &c, c.x, dx, c.n, FD_H, FD_ATOL, FD_RTOL);
    memset(dx, 0, c.n * sizeof(float));
    c.relu = 1;
    ns_relu_backward(dx, c.dout, c.x, c.n);
    nn_gradcheck("relu dx", act_obj, &c, c.x, dx, c.n, FD_H, FD_ATOL, FD_RTOL);
    free(c.x), free(c.dout), free(c.out), free(dx);
}

/* ---- residual MLP block ------------------------------------------------------------------- */

typedef struct rm_ctx {
    ns_resmlp_dims d;
    int B;
    ns_resmlp_w w;
    float *hs, *ha, *dout, *out, *scratch;
} rm_ctx;

static double rm_obj(void *p)
{
    rm_ctx *c = p;
    ns_resmlp_forward(c->out, c->scratch, c->hs, c->ha, &c->w, c->B, c->d);
    return nn_dot(c->out, c->dout, (size_t)c->B * c->d.out);
}

/* Sizes of the seven parameter tensors in ns_resmlp_w order. */
static void rm_sizes(ns_resmlp_dims d, size_t s[7])
{
    s[0] = (size_t)d.hidden * (d.ds + d.da), s[1] = d.hidden, s[2] = (size_t)d.out * d.hidden, s[3] = d.out;
    s[4] = (size_t)d.out * d.ds, s[5] = d.out, s[6] = d.out;
}

static float **rm_slot(ns_resmlp_w *w, int k)
{
    float **s[7] = {&w->w1, &w->b1, &w->w2, &w->b2, &w->w_res, &w->ln_w, &w->ln_b};
    return s[k];
}

static const char *const rm_names[7] = {"w1", "b1", "w2", "b2", "w_res", "ln_w", "ln_b"};

static void test_resmlp_reference(void)
{
    if (!nn_have("resmlp")) return;
    rm_ctx c = {0};
    c.B = 3, c.d = (ns_resmlp_dims){6, 5, 7, 4};
    size_t sz[7];
    rm_sizes(c.d, sz);
    ns_resmlp_w g = {0};
    for (int k = 0; k < 7; k++) {
        *rm_slot(&c.w, k) = nn_f32("resmlp", rm_names[k], NULL);
        *rm_slot(&g, k) = zeros(sz[k]);
    }
    c.hs = nn_f32("resmlp", "hs", NULL), c.ha = nn_f32("resmlp", "ha", NULL);
    c.dout = nn_f32("resmlp", "dout", NULL);
    c.out = zeros(c.B * c.d.out), c.scratch = zeros(ns_resmlp_scratch(c.B, c.d));
    float *dhs = zeros(c.B * c.d.ds), *dha = zeros(c.B * c.d.da);
    rm_obj(&c);
    ns_resmlp_backward(dhs, dha, &g, c.dout, c.scratch, c.hs, &c.w, c.B, c.d);
    nn_cmp_fx("resmlp", "out", c.out, c.B * c.d.out, ATOL, RTOL);
    nn_cmp_fx("resmlp", "dhs", dhs, c.B * c.d.ds, ATOL, RTOL);
    nn_cmp_fx("resmlp", "dha", dha, c.B * c.d.da, ATOL, RTOL);
    for (int k = 0; k < 7; k++) {
        char name[16];
        snprintf(name, sizeof name, "d%s", rm_names[k]);
        nn_cmp_fx("resmlp", name, *rm_slot(&g, k), sz[k], ATOL, RTOL);
    }
    for (int k = 0; k < 7; k++) free(*rm_slot(&c.w, k)), free(*rm_slot(&g, k));
    free(c.hs), free(c.ha), free(c.dout), free(c.out), free(c.scratch), free(dhs), free(dha);
}

static void resmlp_gradcheck(int B, ns_resmlp_dims d, uint64_t seed, float h)
{
    rm_ctx c = {0};
    c.B = B, c.d = d;
    size_t sz[7];
    rm_sizes(d, sz);
    ns_resmlp_w g = {0};
    for (int k = 0; k < 7; k++) {
        *rm_slot(&c.w, k) = zeros(sz[k]);
        *rm_slot(&g, k) = zeros(sz[k]);
        float bound = k == 5 ? 0.2f : (float)(1.0 / sqrt(k < 2 ? d.ds + d.da : k < 4 ? d.hidden : d.ds));
        nn_fill(*rm_slot(&c.w, k), sz[k], seed + k, -bound, bound);
        if (k == 5)
            for (size_t i = 0; i < sz[k]; i++) c.w.ln_w[i] += 1.0f;
    }
    c.hs = zeros(B * d.ds), c.ha = zeros(B * d.da), c.dout = zeros(B * d.out), c.out = zeros(B * d.out);
    c.scratch = zeros(ns_resmlp_scratch(B, d));
    nn_fill(c.hs, B * d.ds, seed + 10, -1, 1), nn_fill(c.ha, B * d.da, seed + 11, -1, 1);
    nn_fill(c.dout, B * d.out, seed + 12, -1, 1);
    float *dhs = zeros(B * d.ds), *dha = zeros(B * d.da);
    rm_obj(&c);
    ns_resmlp_backward(dhs, dha, &g, c.dout, c.scratch, c.hs, &c.w, B, d);
    char what[64];
    snprintf(what, sizeof what, "resmlp%d dhs", d.ds);
    nn_gradcheck(what, rm_obj, &c, c.hs, dhs, B * d.ds, h, FD_ATOL, FD_RTOL);
    snprintf(what, sizeof what, "resmlp%d dha", d.ds);
    nn_gradcheck(what, rm_obj, &c, c.ha, dha, B * d.da, h, FD_ATOL, FD_RTOL);
    for (int k = 0; k < 7; k++) {
        snprintf(what, sizeof what, "resmlp%d d%s", d.ds, rm_names[k]);
        nn_gradcheck(what, rm_obj, &c, *rm_slot(&c.w, k), *rm_slot(&g, k), sz[k], h, FD_ATOL, FD_RTOL);
    }
    for (int k = 0; k < 7; k++) free(*rm_slot(&c.w, k)), free(*rm_slot(&g, k));
    free(c.hs), free(c.ha), free(c.dout), free(c.out), free(c.scratch), free(dhs), free(dha);
}

static void test_resmlp_gradcheck(void) { resmlp_gradcheck(3, (ns_resmlp_dims){6, 5, 7, 4}, 40, FD_H); }

/* The paper's sizes: [h_s; h_a] 256 → 128 → 128, W_res 128×128. */
static void test_resmlp_gradcheck_paper_dims(void)
{
    resmlp_gradcheck(4, (ns_resmlp_dims){128, 128, 128, 128}, 50, 1e-2f);
}

/* ---- FiLM block ---------------------------------------------------------------------------------- */

typedef struct film_ctx {
    float *h, *A, *b, *ln_w, *ln_b, *dout, *out, *scratch;
    int B, D;
} film_ctx;

static double film_obj(void *p)
{
    film_ctx *c = p;
    ns_film_forward(c->out, c->scratch, c->h, c->A, c->b, c->ln_w, c->ln_b, c->B, c->D);
    return nn_dot(c->out, c->dout, (size_t)c->B * c->D);
}

static void test_film_reference(void)
{
    if (!nn_have("film")) return;
    film_ctx c = {0};
    c.B = 3, c.D = 6;
    size_t nd = (size_t)c.B * c.D;
    c.h = nn_f32("film", "h", NULL), c.A = nn_f32("film", "A", NULL), c.b = nn_f32("film", "b", NULL);
    c.ln_w = nn_f32("film", "ln_w", NULL), c.ln_b = nn_f32("film", "ln_b", NULL);
    c.dout = nn_f32("film", "dout", NULL);
    c.out = zeros(nd), c.scratch = zeros(ns_film_scratch(c.B, c.D));
    float *dh = zeros(nd), *dA = zeros(nd), *db = zeros(nd), *dw = zeros(c.D), *dbl = zeros(c.D);
    film_obj(&c);
    ns_film_backward(dh, dA, db, dw, dbl, c.dout, c.scratch, c.h, c.A, c.ln_w, c.B, c.D);
    nn_cmp_fx("film", "out", c.out, nd, ATOL, RTOL);
    nn_cmp_fx("film", "dh", dh, nd, ATOL, RTOL);
    nn_cmp_fx("film", "dA", dA, nd, ATOL, RTOL);
    nn_cmp_fx("film", "db", db, nd, ATOL, RTOL);
    nn_cmp_fx("film", "dln_w", dw, c.D, ATOL, RTOL);
    nn_cmp_fx("film", "dln_b", dbl, c.D, ATOL, RTOL);
    free(c.h), free(c.A), free(c.b), free(c.ln_w), free(c.ln_b), free(c.dout), free(c.out), free(c.scratch);
    free(dh), free(dA), free(db), free(dw), free(dbl);
}

static void film_gradcheck(int B, int D, bool affine, uint64_t seed)
{
    film_ctx c = {0};
    c.B = B, c.D = D;
    size_t nd = (size_t)B * D;
    c.h = zeros(nd), c.A = zeros(nd), c.b = zeros(nd), c.dout = zeros(nd), c.out = zeros(nd);
    c.scratch = zeros(ns_film_scratch(B, D));
    nn_fill(c.h, nd, seed, -2, 2), nn_fill(c.A, nd, seed + 1, -0.5f, 0.5f), nn_fill(c.b, nd, seed + 2, -1, 1);
    nn_fill(c.dout, nd, seed + 3, -1, 1);
    if (affine) {
        c.ln_w = zeros(D), c.ln_b = zeros(D);
        nn_fill(c.ln_w, D, seed + 4, 0.7f, 1.3f), nn_fill(c.ln_b, D, seed + 5, -0.3f, 0.3f);
    }
    float *dh = zeros(nd), *dA = zeros(nd), *db = zeros(nd), *dw = zeros(D), *dbl = zeros(D);
    film_obj(&c);
    ns_film_backward(dh, dA, db, affine ? dw : NULL, affine ? dbl : NULL, c.dout, c.scratch, c.h, c.A, c.ln_w, B,
                     D);
    char what[64];
    snprintf(what, sizeof what, "film%d dh", D);
    nn_gradcheck(what, film_obj, &c, c.h, dh, nd, FD_H, FD_ATOL, FD_RTOL);
    snprintf(what, sizeof what, "film%d dA", D);
    nn_gradcheck(what, film_obj, &c, c.A, dA, nd, FD_H, FD_ATOL, FD_RTOL);
    snprintf(what, sizeof what, "film%d db", D);
    nn_gradcheck(what, film_obj, &c, c.b, db, nd, FD_H, FD_ATOL, FD_RTOL);
    if (affine) {
        snprintf(what, sizeof what, "film%d dln_w", D);
        nn_gradcheck(what, film_obj, &c, c.ln_w, dw, D, FD_H, FD_ATOL, FD_RTOL);
        snprintf(what, sizeof what, "film%d dln_b", D);
        nn_gradcheck(what, film_obj, &c, c.ln_b, dbl, D, FD_H, FD_ATOL, FD_RTOL);
    }
    free(c.h), free(c.A), free(c.b), free(c.ln_w), free(c.ln_b), free(c.dout), free(c.out), free(c.scratch);
    free(dh), free(dA), free(db), free(dw), free(dbl);
}

static void test_film_gradcheck(void)
{
    film_gradcheck(3, 6, true, 60);
    film_gradcheck(2, 5, false, 70);
    film_gradcheck(4, 192, true, 80); /* the paper's adapter width */
}

int main(void)
{
    printf("blas backend: %s\n", ns_blas_backend());
    NS_RUN(test_bf16_rounding);
    NS_RUN(test_bf16_linear);
    NS_RUN(test_i8_linear);
    NS_RUN(test_i8_table);
    NS_RUN(test_linear_reference);
    NS_RUN(test_linear_gradcheck);
    NS_RUN(test_linear_batch1);
    NS_RUN(test_sparse_reference);
    NS_RUN(test_sparse_vs_dense);
    NS_RUN(test_layernorm_reference);
    NS_RUN(test_layernorm_gradcheck);
    NS_RUN(test_layernorm_bits);
    NS_RUN(test_activations_reference);
    NS_RUN(test_gelu_bits);
    NS_RUN(test_activations_gradcheck);
    NS_RUN(test_resmlp_reference);
    NS_RUN(test_resmlp_gradcheck);
    NS_RUN(test_resmlp_gradcheck_paper_dims);
    NS_RUN(test_film_reference);
    NS_RUN(test_film_gradcheck);
    return ns_test_summary("test_nn");
}
