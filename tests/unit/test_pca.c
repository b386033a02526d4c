/* test_pca.c — principal components of feature rows (pca.h):
 * - rows spread along one direction: the first component is that direction
 *   (up to the fixed sign rule), it explains nearly all variance, and the
 *   coordinates have the mean zero and the variance the fit reports;
 * - an exactly planar cloud: two components explain everything, a third
 *   none; the coordinates reproduce pairwise distances;
 * - the same rows as CSR and dense give the same coordinates;
 * - errors: k ≥ D, k < 1, fewer than 2 rows, a transform of other widths. */
#include "test.h"

#include "nextstate/encode/pca.h"
#include "nextstate/util/util.h"

static ns_features dense_rows(int64_t n, int64_t d, const float *x)
{
    ns_features f;
    memset(&f, 0, sizeof f);
    f.nrows = n;
    f.dim = d;
    f.dense = ns_xmalloc((size_t)(n * d) * sizeof(float));
    memcpy(f.dense, x, (size_t)(n * d) * sizeof(float));
    return f;
}

static void test_line(void)
{
    enum { N = 200, D = 5 };
    const float dir[D] = {0.6f, 0.0f, 0.8f, 0.0f, 0.0f}; /* unit */
    float *x = ns_xmalloc(N * D * sizeof *x);
    ns_rng r;
    ns_rng_seed(&r, 7);
    for (int i = 0; i < N; i++) {
        float t = (float)(10 * (ns_rng_double(&r) - 0.5));
        for (int j = 0; j < D; j++) x[i * D + j] = 3.0f + t * dir[j] + (float)(0.01 * (ns_rng_double(&r) - 0.5));
    }
    ns_features f = dense_rows(N, D, x);
    ns_pca p;
    ns_error err;
    CHECK_EQ_INT(ns_pca_fit(&p, &f, 2, 1, &err), NS_OK);
    CHECK(p.k == 2 && p.dim == D && p.nrows == N);
    /* sign rule: largest-magnitude entry (0.8 on column 2) positive */
    for (int j = 0; j < D; j++) CHECK(fabsf(p.components[j * 2] - dir[j]) < 1e-3f);
    CHECK(p.ratio[0] > 0.999 && p.ratio[1] < 1e-3);
    CHECK(fabs(p.mean[0] - 3.0) < 0.5);
    float *c = ns_xmalloc(N * 2 * sizeof *c);
    CHECK_EQ_INT(ns_pca_transform(&p, &f, c, &err), NS_OK);
    double m = 0, v = 0;
    for (int i = 0; i < N; i++) m += c[i * 2];
    m /= N;
    for (int i = 0; i < N; i++) v += (c[i * 2] - m) * (c[i * 2] - m);
    v /= N;
    CHECK(fabs(m) < 1e-4);
    CHECK(fabs(v - p.variance[0]) < 1e-3 * p.variance[0]);
    free(c);
    ns_pca_free(&p);
    ns_features_free(&f);
    free(x);
}

static void test_plane_and_sparse(void)
{
    enum { N = 40, D = 6 };
    float *x = ns_xcalloc(N * D, sizeof *x);
    ns_rng r;
    ns_rng_seed(&r, 3);
    for (int i = 0; i < N; i++) { /* columns 1 and 4 only: a plane through 0, mostly zeros (sparse) */
        x[i * D + 1] = (float)(4 * ns_rng_double(&r));
        x[i * D + 4] = (float)(2 * ns_rng_double(&r) - 1);
    }
    ns_features f = dense_rows(N, D, x);
    ns_features s;
    memset(&s, 0, sizeof s);
    s.sparse = true;
    s.nrows = N;
    s.dim = D;
    ns_csr_init(&s.csr, D);
    for (int i = 0; i < N; i++) {
        int32_t cols[2] = {1, 4};
        float vals[2] = {x[i * D + 1], x[i * D + 4]};
        ns_csr_add_row(&s.csr, cols, vals, 2);
    }
    ns_pca p, q;
    ns_error err;
    CHECK_EQ_INT(ns_pca_fit(&p, &f, 3, 1, &err), NS_OK);
    CHECK_EQ_INT(ns_pca_fit(&q, &s, 3, 1, &err), NS_OK);
    CHECK(fabs(p.ratio[0] + p.ratio[1] - 1) < 1e-5 && p.ratio[2] < 1e-6);
    float *a = ns_xmalloc(N * 3 * sizeof *a), *b = ns_xmalloc(N * 3 * sizeof *b);
    CHECK_EQ_INT(ns_pca_transform(&p, &f, a, &err), NS_OK);
    CHECK_EQ_INT(ns_pca_transform(&q, &s, b, &err), NS_OK);
    for (int i = 0; i < N * 3; i++) CHECK(fabsf(a[i] - b[i]) < 1e-4f);
    /* in-plane distances are kept by the first two coordinates */
    for (int i = 1; i < N; i++) {
        double d0 = 0, d1 = 0;
        for (int j = 0; j < D; j++) d0 += (x[i * D + j] - x[j]) * (x[i * D + j] - x[j]);
        for (int j = 0; j < 2; j++) d1 += (a[i * 3 + j] - a[j]) * (a[i * 3 + j] - a[j]);
        CHECK(fabs(d0 - d1) < 1e-3 * (1 + d0));
    }
    free(a);
    free(b);
    ns_pca_free(&p);
    ns_pca_free(&q);
    ns_features_free(&f);
    ns_features_free(&s);
    free(x);
}

static void test_errors(void)
{
    float x[6] = {1, 2, 3, 4, 5, 6};
    ns_features f = dense_rows(2, 3, x), one = dense_rows(1, 3, x), wide = dense_rows(1, 6, x);
    ns_pca p;
    ns_error err;
    CHECK_EQ_INT(ns_pca_fit(&p, &f, 3, 1, &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "components") != NULL);
    CHECK_EQ_INT(ns_pca_fit(&p, &f, 0, 1, &err), NS_ERR_INPUT);
    CHECK_EQ_INT(ns_pca_fit(&p, &one, 1, 1, &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "2 rows") != NULL);
    CHECK_EQ_INT(ns_pca_fit(&p, &f, 1, 1, &err), NS_OK);
    float out[6];
    CHECK_EQ_INT(ns_pca_transform(&p, &wide, out, &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "columns") != NULL);
    ns_pca_free(&p);
    ns_features_free(&f);
    ns_features_free(&one);
    ns_features_free(&wide);
}

int main(void)
{
    NS_RUN(test_line);
    NS_RUN(test_plane_and_sparse);
    NS_RUN(test_errors);
    return ns_test_summary("test_pca");
}
