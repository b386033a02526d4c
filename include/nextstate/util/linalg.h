/* linalg.h — linear algebra on CSR rows (BLAS underneath, blas.h): the
 * product X · P and a randomized truncated SVD (the featurizers' reduction,
 * featurize.h). */
#ifndef NEXTSTATE_UTIL_LINALG_H
#define NEXTSTATE_UTIL_LINALG_H

#include <stdint.h>
#include "nextstate/util/csr.h"

/* out[nrows × l] = X · P, P [ncols × l] (row-major): densified chunks and
 * sgemm when at least 1 in 16 entries is set, a sparse loop otherwise. */
void ns_csr_matmul_dense(const ns_csr *X, const float *P, int l, float *out);

/* Randomized truncated SVD of the rows of X (nrows × ncols): the top k right
 * singular vectors as components[ncols × k] and singular values sv[k],
 * descending.  Needs k < ncols; l = min(k + oversample, ncols) columns,
 * iters power iterations, seeded; exact (XᵀX eigendecomposition) when l is
 * at least 3/4 of ncols.  Deterministic for a seed (and BLAS thread count).
 * Exposed for tests and other encoders. */
void ns_truncated_svd(const ns_csr *X, int k, int oversample, int iters, uint64_t seed, float *components, float *sv);

#endif
