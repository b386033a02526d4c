/* pca.c — principal component analysis of feature rows (see pca.h). */
#include "nextstate/encode/pca.h"

#include <stdlib.h>
#include <string.h>

#include "nextstate/util/linalg.h"
#include "nextstate/util/util.h"

void ns_pca_init(ns_pca *p) { memset(p, 0, sizeof *p); }

void ns_pca_free(ns_pca *p)
{
    free(p->mean);
    free(p->components);
    free(p->variance);
    free(p->ratio);
    ns_pca_init(p);
}

/* Row i of f densely into out[dim]. */
static void row_dense(const ns_features *f, int64_t i, float *out)
{
    if (f->sparse) ns_csr_row_dense(&f->csr, i, out);
    else memcpy(out, f->dense + (size_t)i * (size_t)f->dim, (size_t)f->dim * sizeof *out);
}

ns_status ns_pca_fit(ns_pca *p, const ns_features *f, int k, uint64_t seed, ns_error *err)
{
    ns_pca_init(p);
    const int64_t n = f->nrows, D = f->dim;
    if (k < 1 || (int64_t)k >= D)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "PCA needs 1 <= components < feature columns (%lld), given %d",
                            (long long)D, k);
    if (n < 2) return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "PCA needs at least 2 rows, given %lld", (long long)n);
    if (n > NS_PCA_MAX_ENTRIES / D)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                            "PCA of %lld rows x %lld columns exceeds %lld dense entries: use fewer rows",
                            (long long)n, (long long)D, (long long)NS_PCA_MAX_ENTRIES);
    double *mean = ns_xcalloc((size_t)D, sizeof *mean);
    float *row = ns_xmalloc((size_t)D * sizeof *row);
    for (int64_t i = 0; i < n; i++) {
        row_dense(f, i, row);
        for (int64_t j = 0; j < D; j++) mean[j] += row[j];
    }
    p->mean = ns_xmalloc((size_t)D * sizeof *p->mean);
    for (int64_t j = 0; j < D; j++) p->mean[j] = (float)(mean[j] / (double)n);
    /* the centred rows as a CSR (every entry stored): ns_truncated_svd's input */
    ns_csr X;
    ns_csr_init(&X, D);
    int32_t *cols = ns_xmalloc((size_t)D * sizeof *cols);
    for (int64_t j = 0; j < D; j++) cols[j] = (int32_t)j;
    double total = 0;
    for (int64_t i = 0; i < n; i++) {
        row_dense(f, i, row);
        for (int64_t j = 0; j < D; j++) {
            row[j] -= p->mean[j];
            total += (double)row[j] * row[j];
        }
        ns_csr_add_row(&X, cols, row, (int)D);
    }
    p->k = k;
    p->dim = D;
    p->nrows = n;
    p->components = ns_xmalloc((size_t)D * (size_t)k * sizeof *p->components);
    float *sv = ns_xmalloc((size_t)k * sizeof *sv);
    ns_truncated_svd(&X, k, 10, 7, seed, p->components, sv);
    p->variance = ns_xmalloc((size_t)k * sizeof *p->variance);
    p->ratio = ns_xmalloc((size_t)k * sizeof *p->ratio);
    p->total_variance = total / (double)n;
    for (int j = 0; j < k; j++) {
        double s2 = (double)sv[j] * sv[j];
        p->variance[j] = s2 / (double)n;
        p->ratio[j] = total > 0 ? s2 / total : 0;
    }
    free(sv);
    free(cols);
    free(row);
    free(mean);
    ns_csr_free(&X);
    return NS_OK;
}

ns_status ns_pca_transform(const ns_pca *p, const ns_features *f, float *out, ns_error *err)
{
    if (f->dim != p->dim)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "features have %lld columns, the PCA was fitted on %lld",
                            (long long)f->dim, (long long)p->dim);
    float *row = ns_xmalloc((size_t)p->dim * sizeof *row);
    for (int64_t i = 0; i < f->nrows; i++) {
        row_dense(f, i, row);
        for (int j = 0; j < p->k; j++) {
            double s = 0;
            for (int64_t c = 0; c < p->dim; c++) s += (double)(row[c] - p->mean[c]) * p->components[c * p->k + j];
            out[(size_t)i * p->k + j] = (float)s;
        }
    }
    free(row);
    return NS_OK;
}
