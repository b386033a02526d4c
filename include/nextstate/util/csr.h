/* csr.h — sparse row matrices (compressed sparse rows), the common format of
 * sparse features: row i holds values[indptr[i] … indptr[i+1]) at columns
 * indices[…], indices ascending within a row.  The sparse linear layer
 * (nn.h) takes these arrays directly; a batch may be a slice of rows. */
#ifndef NEXTSTATE_CSR_H
#define NEXTSTATE_CSR_H

#include <stdint.h>
#include "nextstate/util/error.h"

typedef struct ns_csr {
    int64_t nrows, ncols;
    int64_t *indptr;  /* nrows + 1 */
    int32_t *indices; /* nnz */
    float *values;    /* nnz */
    int64_t nnz, cap; /* cap: allocated entries */
} ns_csr;

void ns_csr_init(ns_csr *m, int64_t ncols);
void ns_csr_free(ns_csr *m);
/* Appends a row given as (column, value) pairs in any order; duplicate
 * columns are summed; zeros are kept out. */
void ns_csr_add_row(ns_csr *m, const int32_t *cols, const float *vals, int n);
/* Writes row i densely into out[ncols] (zero-filled first). */
void ns_csr_row_dense(const ns_csr *m, int64_t i, float *out);
/* Saves as DIR/PREFIX_indptr.npy, _indices.npy, _values.npy (+ shape in
 * _shape.npy as i64 [2]); loads them back with shape checks. */
ns_status ns_csr_save(const ns_csr *m, const char *dir, const char *prefix, ns_error *err);
ns_status ns_csr_load(ns_csr *m, const char *dir, const char *prefix, ns_error *err);

#endif
