/* test_fastmath.c — fastmath.h's float exp, erf, erfc, sigmoid and tanh
 * against double-precision libm over dense grids (the accuracy fastmath.h
 * states), special values, and the layers built on them: GELU forward and
 * backward (nn.c, vectorised) against double GELU over a dense grid,
 * float-accumulated LayerNorm against a double LayerNorm on wide rows with a
 * large common offset, and the sparse layer against plain loops (bit for
 * bit, both layouts, every tile and block remainder). */
#include "nextstate/util/fastmath.h"
#include "nextstate/learn/nn.h"
#include "test.h"
#include "nn_check.h"

#include <float.h>

/* ulp of the float nearest r */
static double ulp_at(double r)
{
    float f = (float)fabs(r);
    return (double)nextafterf(f, INFINITY) - (double)f;
}

static void test_exp(void)
{
    double mu = 0, at = 0;
    for (double x = -87.0; x <= 88.0; x += 3.1e-5) {
        float xf = (float)x;
        double r = exp((double)xf), d = fabs(ns_fast_expf(xf) - r) / ulp_at(r);
        if (d > mu) mu = d, at = xf;
    }
    printf("  expf on [-87, 88]: max error %.2f ulp (x = %g)\n", mu, at);
    CHECK(mu <= 2.0);
    CHECK(ns_fast_expf(0.0f) == 1.0f);
    CHECK(isnan(ns_fast_expf(NAN)));
    CHECK(ns_fast_expf(-1000.0f) >= 0.0f && ns_fast_expf(-1000.0f) < 2e-38f); /* clamped at e^−87 */
    CHECK(ns_fast_expf(1000.0f) > 1e38f && isfinite(ns_fast_expf(1000.0f)));  /* clamped at e^88 */
}

static void test_erf(void)
{
    double mx = 0, at = 0;
    for (double x = -10.0; x <= 10.0; x += 1.01e-5) {
        float xf = (float)x;
        double d = fabs(ns_fast_erff(xf) - erf((double)xf));
        if (d > mx) mx = d, at = xf;
    }
    /* every float exponent down to the smallest normals: erf(x) ≈ 2x/√π */
    double mrel = 0;
    for (float x = FLT_MIN; x < 0.5f; x *= 1.37f) {
        double r = erf((double)x);
        mrel = fmax(mrel, fabs(ns_fast_erff(x) - r) / r);
        mrel = fmax(mrel, fabs(ns_fast_erff(-x) + r) / r);
    }
    printf("  erff on [-10, 10]: max |error| %.3g (x = %g); tiny |x|: max relative error %.3g\n", mx, at, mrel);
    CHECK(mx <= 1e-7);
    CHECK(mrel <= 2e-7);
    CHECK(ns_fast_erff(0.0f) == 0.0f);
    CHECK(ns_fast_erff(INFINITY) == 1.0f && ns_fast_erff(-INFINITY) == -1.0f);
    CHECK(ns_fast_erff(1e30f) == 1.0f && ns_fast_erff(-1e30f) == -1.0f);
    CHECK(isnan(ns_fast_erff(NAN)));
    /* odd */
    for (float x = 0.01f; x < 6; x += 0.37f) CHECK(ns_fast_erff(-x) == -ns_fast_erff(x));
}

static void test_erfc(void)
{
    double m4 = 0, m9 = 0;
    for (double x = 0; x <= 9.0; x += 1.3e-5) {
        float xf = (float)x;
        double r = erfc((double)xf), d = fabs(ns_fast_erfcf(xf) - r) / r;
        if (x <= 4) m4 = fmax(m4, d);
        m9 = fmax(m9, d);
    }
    printf("  erfcf: max relative error %.3g on [0, 4], %.3g on [0, 9]\n", m4, m9);
    CHECK(m4 <= 1e-6);
    CHECK(m9 <= 5e-6);
}

static void test_sigmoid_tanh(void)
{
    double sa = 0, sr = 0, ta = 0, tr = 0;
    for (double x = -87.0; x <= 88.0; x += 1.7e-5) {
        float xf = (float)x;
        double s = 1.0 / (1.0 + exp(-(double)xf)), t = tanh((double)xf);
        double ds = fabs(ns_fast_sigmoidf(xf) - s), dt = fabs(ns_fast_tanhf(xf) - t);
        sa = fmax(sa, ds), sr = fmax(sr, ds / s), ta = fmax(ta, dt);
        if (t != 0) tr = fmax(tr, dt / fabs(t));
    }
    printf("  sigmoid: max |error| %.3g, relative %.3g; tanh: max |error| %.3g, relative %.3g\n", sa, sr, ta, tr);
    CHECK(sa <= 2e-7 && sr <= 1e-6);
    CHECK(ta <= 2e-7 && tr <= 1e-6);
    CHECK(ns_fast_tanhf(0.0f) == 0.0f && ns_fast_sigmoidf(0.0f) == 0.5f);
    CHECK(ns_fast_tanhf(INFINITY) == 1.0f && ns_fast_tanhf(-INFINITY) == -1.0f);
    CHECK(ns_fast_sigmoidf(INFINITY) == 1.0f && ns_fast_sigmoidf(-INFINITY) < 1e-37f);
    CHECK(isnan(ns_fast_tanhf(NAN)) && isnan(ns_fast_sigmoidf(NAN)));
    for (float x = 0.003f; x < 12; x += 0.173f) CHECK(ns_fast_tanhf(-x) == -ns_fast_tanhf(x));
}

/* GELU and its derivative through nn.c (the vectorised loops) against double. */
static void test_gelu_grid(void)
{
    size_t n = 2000001;
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float)), *d = calloc(n, sizeof(float));
    float *one = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) x[i] = (float)(-12.0 + 20.0 * (double)i / (double)(n - 1)), one[i] = 1.0f;
    ns_gelu_forward(y, x, n);
    ns_gelu_backward(d, one, x, n);
    double fa = 0, fr = 0, ba = 0;
    for (size_t i = 0; i < n; i++) {
        double v = x[i], cdf = 0.5 * erfc(-v / sqrt(2.0)), pdf = exp(-0.5 * v * v) / sqrt(2.0 * 3.14159265358979323846);
        double g = v * cdf, dg = cdf + v * pdf;
        double e = fabs(y[i] - g);
        fa = fmax(fa, e);
        /* relative, scaled: e^{−x²/2} carries the rounding of x²/2 (≈ x²·2^−24) */
        if (v != 0) fr = fmax(fr, e / fabs(g) / fmax(1.0, v * v));
        ba = fmax(ba, fabs(d[i] - dg));
    }
    printf("  GELU on [-12, 8]: forward max |error| %.3g, max relative error / max(1, x²) %.3g; "
           "derivative max |error| %.3g\n", fa, fr, ba);
    CHECK(fa <= 1e-6);  /* ≤ ~1 ulp of |x| ≤ 12 */
    CHECK(fr <= 5e-7);  /* relative accuracy down the lower tail too (Φ = ½ − ½erf(u) cancels to ×4 near x = −1.3) */
    CHECK(ba <= 3e-7);
    free(x), free(y), free(d), free(one);
}

/* Float-accumulated LayerNorm on wide rows with a large common offset vs double. */
static void test_layernorm_wide(void)
{
    const int N = 6, C = 1031;
    float *x = malloc(sizeof(float) * N * C), *w = malloc(sizeof(float) * C), *b = malloc(sizeof(float) * C);
    float *dy = malloc(sizeof(float) * N * C), *y = malloc(sizeof(float) * N * C), *dx = calloc((size_t)N * C, 4);
    float *dw = calloc(C, 4), *db = calloc(C, 4), mean[6], rstd[6];
    nn_fill(x, (size_t)N * C, 71, -1, 1), nn_fill(w, C, 72, 0.5f, 1.5f), nn_fill(b, C, 73, -1, 1);
    nn_fill(dy, (size_t)N * C, 74, -1, 1);
    for (int n = 0; n < N; n++)
        for (int i = 0; i < C; i++) x[n * C + i] = x[n * C + i] * (float)(n + 1) + 50.0f * (float)n;
    ns_layernorm_forward(y, mean, rstd, x, w, b, N, C, NS_LN_EPS);
    ns_layernorm_backward(dx, dw, db, dy, x, w, mean, rstd, N, C);
    double ey = 0, edx = 0, edw = 0;
    double *rdw = calloc(C, sizeof(double));
    for (int n = 0; n < N; n++) {
        const float *xr = x + n * C, *dr = dy + n * C;
        double m = 0, v = 0, s1 = 0, s2 = 0;
        for (int i = 0; i < C; i++) m += xr[i];
        m /= C;
        for (int i = 0; i < C; i++) v += (xr[i] - m) * (xr[i] - m);
        v /= C;
        double r = 1.0 / sqrt(v + (double)NS_LN_EPS);
        for (int i = 0; i < C; i++) {
            double xh = (xr[i] - m) * r;
            ey = fmax(ey, fabs(y[n * C + i] - (xh * w[i] + b[i])));
            s1 += (double)dr[i] * w[i], s2 += (double)dr[i] * w[i] * xh;
            rdw[i] += dr[i] * xh;
        }
        s1 /= C, s2 /= C;
        for (int i = 0; i < C; i++) {
            double xh = (xr[i] - m) * r;
            edx = fmax(edx, fabs(dx[n * C + i] - r * ((double)dr[i] * w[i] - s1 - xh * s2)) / r);
        }
    }
    for (int i = 0; i < C; i++) edw = fmax(edw, fabs(dw[i] - rdw[i]));
    printf("  LayerNorm C = %d, offsets up to 250: max |error| out %.3g, dx·σ %.3g, dw %.3g\n", C, ey, edx, edw);
    CHECK(ey <= 2e-5 && edx <= 2e-5 && edw <= 2e-5);
    free(x), free(w), free(b), free(dy), free(y), free(dx), free(dw), free(db), free(rdw);
}

/* The sparse layer (transposed tiles for small C and batches, row blocks
 * for large C or single rows) equals the plain loops bit for bit, at every tile and block remainder. */
static void sparse_vs_plain(int C)
{
    const int B = 9;
    int64_t indptr[10] = {0};
    int32_t indices[128];
    float values[128], u[256];
    nn_fill(u, 256, 81, 0, 1);
    int nnz = 0;
    for (int b = 0; b < B; b++) {
        int k = b == 4 ? 0 : 1 + (int)(u[b] * 12);
        for (int j = 0; j < k; j++, nnz++) {
            indices[nnz] = (int32_t)(u[(nnz * 7 + 3) % 256] * C);
            values[nnz] = u[(nnz * 5 + 1) % 256] * 2 - 1;
        }
        indptr[b + 1] = nnz;
    }
    indices[3] = indices[2]; /* a duplicate column in one row */
    indices[5] = C - 1;
    int bad = 0;
    for (int OC = 1; OC <= 75; OC += OC < 12 ? 1 : 7) {
        float *w = malloc(sizeof(float) * OC * C), *bias = malloc(sizeof(float) * OC);
        float *dout = malloc(sizeof(float) * B * OC), *o1 = malloc(sizeof(float) * B * OC);
        float *o2 = malloc(sizeof(float) * B * OC), *dw1 = malloc(sizeof(float) * OC * C);
        float *dw2 = malloc(sizeof(float) * OC * C), *db1 = calloc(OC, 4), *db2 = calloc(OC, 4);
        nn_fill(w, (size_t)OC * C, 82, -1, 1), nn_fill(bias, OC, 83, -1, 1), nn_fill(dout, (size_t)B * OC, 84, -1, 1);
        nn_fill(dw1, (size_t)OC * C, 85, -1, 1); /* backward adds to what is there */
        memcpy(dw2, dw1, sizeof(float) * OC * C);
        ns_sparse_linear_forward(o1, indptr, indices, values, w, bias, B, C, OC);
        ns_sparse_linear_backward(dw1, db1, dout, indptr, indices, values, B, C, OC);
        for (int o = 0; o < OC; o++) {
            double sb = 0;
            for (int b = 0; b < B; b++) {
                float s = 0, g = dout[b * OC + o];
                for (int64_t k = indptr[b]; k < indptr[b + 1]; k++) {
                    s += values[k] * w[(size_t)o * C + indices[k]];
                    dw2[(size_t)o * C + indices[k]] += g * values[k];
                }
                o2[b * OC + o] = s + bias[o];
                sb += g;
            }
            db2[o] += (float)sb;
        }
        bad += memcmp(o1, o2, sizeof(float) * B * OC) != 0;
        /* a batch below SP_TB takes the row-block scheme for every C: row by row, same bits */
        for (int b = 0; b < B; b++) {
            int64_t ip[2] = {0, indptr[b + 1] - indptr[b]};
            ns_sparse_linear_forward(o1, ip, indices + indptr[b], values + indptr[b], w, bias, 1, C, OC);
            bad += memcmp(o1, o2 + b * OC, sizeof(float) * OC) != 0;
        }
        bad += memcmp(dw1, dw2, sizeof(float) * OC * C) != 0;
        bad += memcmp(db1, db2, sizeof(float) * OC) != 0;
        free(w), free(bias), free(dout), free(o1), free(o2), free(dw1), free(dw2), free(db1), free(db2);
    }
    printf("  sparse layer, C = %d, OC = 1..75: %d mismatches with the plain loops\n", C, bad);
    CHECK(bad == 0);
}

static void test_sparse_layouts(void)
{
    sparse_vs_plain(61);  /* transposed tiles */
    sparse_vs_plain(512); /* the largest C for tiles */
    sparse_vs_plain(700); /* row blocks */
}

/* ns_dots against a double-precision sum, at every lane remainder (and
 * past two blocks of eight rows, with rows left over); ns_dots_rows against
 * ns_dots, bit for bit, each row listed both inside a block of eight and
 * among the rows left over (the kernel's two reductions agree). */
static void test_dots(void)
{
    enum { N = 21, DM = 400 };
    float *q = malloc(sizeof(float) * DM), *c = malloc(sizeof(float) * N * DM), out[N];
    nn_fill(q, DM, 91, -1, 1), nn_fill(c, (size_t)N * DM, 92, -1, 1);
    double worst = 0;
    int dims[] = {1, 15, 16, 17, 31, 128, 384, 385, 400};
    for (size_t k = 0; k < sizeof dims / sizeof *dims; k++) {
        int D = dims[k];
        ns_dots(out, q, c, N, D);
        for (int j = 0; j < N; j++) {
            double ref = 0, mag = 0;
            for (int d = 0; d < D; d++) ref += (double)q[d] * c[j * D + d], mag += fabs((double)q[d] * c[j * D + d]);
            worst = fmax(worst, fabs(out[j] - ref) / (mag + 1e-30));
        }
    }
    printf("  dots: max |error| / Σ|terms| = %.3g\n", worst);
    CHECK(worst < 1e-6);
    /* through a row list (repeats allowed): the same scores as the rows in place, bit for bit */
    enum { NR = 2 * N + 7 };
    int64_t rows[NR];
    for (int j = 0; j < NR; j++) rows[j] = (int64_t)((j * 13 + 4) % N);
    for (size_t k = 0; k < sizeof dims / sizeof *dims; k++) {
        int D = dims[k];
        float got[NR];
        ns_dots(out, q, c, N, D);
        ns_dots_rows(got, q, c, rows, NR, D);
        for (int j = 0; j < NR; j++) CHECK(memcmp(&got[j], &out[rows[j]], sizeof(float)) == 0);
    }
    free(q), free(c);
}

int main(void)
{
    NS_RUN(test_dots);
    NS_RUN(test_exp);
    NS_RUN(test_erf);
    NS_RUN(test_erfc);
    NS_RUN(test_sigmoid_tanh);
    NS_RUN(test_gelu_grid);
    NS_RUN(test_layernorm_wide);
    NS_RUN(test_sparse_layouts);
    return ns_test_summary("test_fastmath");
}
