/* blas.h — the one wrapper for dense matrix products (row-major), over
 * OpenBLAS's cblas_sgemm, with a plain-C fallback when built with NOBLAS=1
 * (make NOBLAS=1).  Every dense layer calls these. */
#ifndef NEXTSTATE_BLAS_H
#define NEXTSTATE_BLAS_H

#include <stdbool.h>

/* C[m×n] = alpha · op(A) · op(B) + beta · C, where op(A) is m×k (A stored
 * k×m when trans_a), op(B) is k×n (B stored n×k when trans_b); lda, ldb, ldc
 * are the row strides of A, B, C as stored. */
void ns_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float *A, int lda,
              const float *B, int ldb, float beta, float *C, int ldc);

/* The same in double (the learned heuristic's normal equations). */
void ns_dgemm(bool trans_a, bool trans_b, int m, int n, int k, double alpha, const double *A, int lda,
              const double *B, int ldb, double beta, double *C, int ldc);

/* y[m] = alpha · op(A) · x + beta · y, op(A) m×n (A stored n×m when trans). */
void ns_sgemv(bool trans, int m, int n, float alpha, const float *A, int lda, const float *x, float beta,
              float *y);

/* Name of the backend in use ("openblas" or "plain C"). */
const char *ns_blas_backend(void);

#endif
