/* pca.h — principal component analysis of feature rows (features.h): the
 * EmbedPlan paper's embedding geometry plot (appendix F.1, "PCA of frozen
 * state embeddings, coloured by domain").
 *
 * The rows (dense, or CSR densified) are centred on their column mean and
 * the top k right singular vectors of the centred matrix Xc (n × D) are the
 * components (ns_truncated_svd, linalg.h: exact XᵀX eigendecomposition when
 * D is small, else randomized with the given seed; each component's
 * largest-magnitude entry positive).  variance[j] = σ_j² / n and
 * ratio[j] = σ_j² / ‖Xc‖²_F (the fraction of the total variance a component
 * explains).  Coordinates of a row x are (x − mean) · components.  The
 * centred matrix is held densely: n · D ≤ NS_PCA_MAX_ENTRIES. */
#ifndef NEXTSTATE_ENCODE_PCA_H
#define NEXTSTATE_ENCODE_PCA_H

#include <stdint.h>
#include "nextstate/encode/features.h"
#include "nextstate/util/error.h"

#define NS_PCA_MAX_ENTRIES ((int64_t)1 << 28) /* 1 GiB of float32 */

typedef struct ns_pca {
    int k;
    int64_t dim, nrows;   /* D; rows fitted on */
    float *mean;          /* D */
    float *components;    /* D × k, row-major */
    double *variance;     /* k */
    double *ratio;        /* k */
    double total_variance; /* ‖Xc‖²_F / n */
} ns_pca;

void ns_pca_init(ns_pca *p);
void ns_pca_free(ns_pca *p);

/* Fits k components on every row of f.  NS_ERR_INPUT when k < 1, k ≥ D,
 * fewer than 2 rows, or more than NS_PCA_MAX_ENTRIES entries. */
ns_status ns_pca_fit(ns_pca *p, const ns_features *f, int k, uint64_t seed, ns_error *err);

/* out[f->nrows × k] = (rows of f − mean) · components; f must have p->dim
 * columns (NS_ERR_INPUT otherwise). */
ns_status ns_pca_transform(const ns_pca *p, const ns_features *f, float *out, ns_error *err);

#endif
