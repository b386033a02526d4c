/* nn_check.h — shared by the numerics tests (test_nn, test_loss, test_lstm,
 * test_optim): loading the reference tensors dev/nn_reference.py wrote to
 * tests/fixtures/nn/<case>/<name>.npy, comparing with a tolerance
 * atol + rtol·|ref| while printing the largest difference, and central
 * finite-difference gradient checks.  Include after test.h. */
#ifndef NS_NN_CHECK_H
#define NS_NN_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "nextstate/util/npy.h"

#define NN_FIXTURES "tests/fixtures/nn/"
/* Zeroed stand-in for a fixture that failed to load (already reported as a
 * failure): large enough that the test can run on without reading out of
 * bounds. */
#define NN_MISSING_FLOATS 65536

/* True when the fixture folder of case cs exists; otherwise reports a
 * failure (the tests run from the repository root). */
#include <sys/stat.h>
static inline bool nn_have(const char *cs)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, NN_FIXTURES "%s", cs);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return true;
    printf("  missing fixture folder %s (run the tests from the repository root)\n", path);
    ns_t_cur_failed = 1;
    return false;
}

/* Loads a fixture as an ns_array; NULL data (and a failed check) if absent. */
static inline bool nn_load(ns_array *a, const char *cs, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, NN_FIXTURES "%s/%s.npy", cs, name);
    ns_error err;
    if (ns_npy_read(path, a, NULL, &err) != NS_OK) {
        char msg[800];
        ns_error_format(&err, msg, sizeof msg);
        printf("  cannot load %s (tests run from the repository root): %s\n", path, msg);
        memset(a, 0, sizeof *a);
        return false;
    }
    return true;
}

/* Fixture as a malloc'ed float array (from <f4 or <f8); *n its length. */
static inline float *nn_f32(const char *cs, const char *name, size_t *n)
{
    ns_array a;
    if (!nn_load(&a, cs, name)) {
        ns_t_cur_failed = 1;
        if (n) *n = 0;
        return calloc(NN_MISSING_FLOATS, sizeof(float));
    }
    size_t k = (size_t)ns_array_count(&a);
    float *out = malloc((k ? k : 1) * sizeof(float));
    for (size_t i = 0; i < k; i++)
        out[i] = a.dtype == NS_F64 ? (float)((double *)a.data)[i] : ((float *)a.data)[i];
    if (a.dtype != NS_F32 && a.dtype != NS_F64) ns_t_cur_failed = 1;
    if (n) *n = k;
    ns_array_free(&a);
    return out;
}

/* Fixture as a malloc'ed double array. */
static inline double *nn_f64(const char *cs, const char *name, size_t *n)
{
    ns_array a;
    if (!nn_load(&a, cs, name)) {
        ns_t_cur_failed = 1;
        if (n) *n = 0;
        return calloc(NN_MISSING_FLOATS, sizeof(double));
    }
    size_t k = (size_t)ns_array_count(&a);
    double *out = malloc((k ? k : 1) * sizeof(double));
    for (size_t i = 0; i < k; i++)
        out[i] = a.dtype == NS_F64 ? ((double *)a.data)[i] : (double)((float *)a.data)[i];
    if (n) *n = k;
    ns_array_free(&a);
    return out;
}

/* Fixture of integers (<i4 or <i8) as malloc'ed int64. */
static inline int64_t *nn_i64(const char *cs, const char *name, size_t *n)
{
    ns_array a;
    if (!nn_load(&a, cs, name)) {
        ns_t_cur_failed = 1;
        if (n) *n = 0;
        return calloc(NN_MISSING_FLOATS, sizeof(int64_t));
    }
    size_t k = (size_t)ns_array_count(&a);
    int64_t *out = malloc((k ? k : 1) * sizeof(int64_t));
    for (size_t i = 0; i < k; i++)
        out[i] = a.dtype == NS_I64 ? ((int64_t *)a.data)[i] : ((int32_t *)a.data)[i];
    if (n) *n = k;
    ns_array_free(&a);
    return out;
}

/* Compares got[n] with ref[n]: fails when any |got − ref| > atol + rtol·|ref|.
 * Prints the largest absolute difference. Returns it. */
static inline double nn_cmp(const char *what, const float *got, const double *ref, size_t n, size_t nref,
                            double atol, double rtol)
{
    if (n != nref) {
        printf("  %-28s size %zu, reference %zu\n", what, n, nref);
        ns_t_cur_failed = 1;
        return INFINITY;
    }
    double mx = 0;
    size_t at = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - ref[i]);
        if (!(d <= atol + rtol * fabs(ref[i]))) bad++;
        if (!(d <= mx)) {
            mx = d;
            at = i;
        }
    }
    printf("  %-28s max|diff| %.3g (at %zu)%s\n", what, mx, at, bad ? "  FAILS TOLERANCE" : "");
    if (bad) ns_t_cur_failed = 1;
    return mx;
}

/* Compares got with the fixture cs/name (loaded as double). */
static inline double nn_cmp_fx(const char *cs, const char *name, const float *got, size_t n, double atol,
                               double rtol)
{
    size_t nref;
    double *ref = nn_f64(cs, name, &nref);
    char what[128];
    snprintf(what, sizeof what, "%s/%s", cs, name);
    double mx = nn_cmp(what, got, ref, n, nref, atol, rtol);
    free(ref);
    return mx;
}

/* Central finite differences of a scalar objective f(ctx) (evaluated in
 * double) w.r.t. x[0..n) against the analytic gradient g[0..n): every
 * index when n ≤ maxn, else about maxn evenly spread ones.  Fails when
 * |fd − g| > atol + rtol·|fd|; prints the largest errors. */
typedef double (*nn_objective)(void *ctx);

static inline double nn_gradcheck_max(const char *what, nn_objective f, void *ctx, float *x, const float *g,
                                      size_t n, float h, double atol, double rtol, size_t maxn)
{
    size_t stride = n <= maxn ? 1 : n / maxn + 1;
    double mx = 0, mxrel = 0;
    size_t bad = 0, checked = 0;
    for (size_t i = 0; i < n; i += stride) {
        float x0 = x[i];
        x[i] = x0 + h;
        double fp = f(ctx);
        x[i] = x0 - h;
        double fm = f(ctx);
        x[i] = x0;
        double fd = (fp - fm) / ((double)(x0 + h) - (double)(x0 - h));
        double d = fabs(fd - g[i]);
        if (!(d <= atol + rtol * fabs(fd))) {
            if (bad < 3) printf("  %s: index %zu: finite difference %.6g, analytic %.6g\n", what, i, fd, g[i]);
            bad++;
        }
        if (d > mx) mx = d;
        double rel = d / fmax(fabs(fd), 1e-3);
        if (rel > mxrel) mxrel = rel;
        checked++;
    }
    printf("  %-28s gradcheck %zu entries: max|fd−analytic| %.3g, max rel %.3g%s\n", what, checked, mx, mxrel,
           bad ? "  FAILS" : "");
    if (bad) ns_t_cur_failed = 1;
    return mx;
}

/* nn_gradcheck_max with up to 200 entries. */
static inline double nn_gradcheck(const char *what, nn_objective f, void *ctx, float *x, const float *g, size_t n,
                                  float h, double atol, double rtol)
{
    return nn_gradcheck_max(what, f, ctx, x, g, n, h, atol, rtol, 200);
}

/* Σ a[i]·b[i] in double (the objective "sum(out · dout)"). */
static inline double nn_dot(const float *a, const float *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

/* Deterministic pseudo-random floats in [lo, hi) for tests that need no fixture. */
static inline void nn_fill(float *x, size_t n, uint64_t seed, float lo, float hi)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        x[i] = lo + (hi - lo) * (float)((s >> 11) * (1.0 / 9007199254740992.0));
    }
}

#endif
