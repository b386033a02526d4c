/* blas.c — matrix products through cblas, or plain C with NS_NO_BLAS. */
#include "nextstate/util/blas.h"

#ifndef NS_NO_BLAS
#include <cblas.h>
#include <stdlib.h>

void ns_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float *A, int lda,
              const float *B, int ldb, float beta, float *C, int ldc)
{
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k,
                alpha, A, lda, B, ldb, beta, C, ldc);
}

void ns_dgemm(bool trans_a, bool trans_b, int m, int n, int k, double alpha, const double *A, int lda,
              const double *B, int ldb, double beta, double *C, int ldc)
{
    cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k,
                alpha, A, lda, B, ldb, beta, C, ldc);
}

void ns_sgemv(bool trans, int m, int n, float alpha, const float *A, int lda, const float *x, float beta, float *y)
{
    /* op(A) is m×n; cblas takes the stored shape */
    if (trans) cblas_sgemv(CblasRowMajor, CblasTrans, n, m, alpha, A, lda, x, 1, beta, y, 1);
    else cblas_sgemv(CblasRowMajor, CblasNoTrans, m, n, alpha, A, lda, x, 1, beta, y, 1);
}

const char *ns_blas_backend(void) { return "openblas"; }

#else

void ns_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float *A, int lda,
              const float *B, int ldb, float beta, float *C, int ldc)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float s = 0;
            for (int p = 0; p < k; p++) {
                float a = trans_a ? A[p * lda + i] : A[i * lda + p];
                float b = trans_b ? B[j * ldb + p] : B[p * ldb + j];
                s += a * b;
            }
            C[i * ldc + j] = alpha * s + (beta == 0 ? 0 : beta * C[i * ldc + j]);
        }
}

void ns_dgemm(bool trans_a, bool trans_b, int m, int n, int k, double alpha, const double *A, int lda,
              const double *B, int ldb, double beta, double *C, int ldc)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int p = 0; p < k; p++) {
                double a = trans_a ? A[p * lda + i] : A[i * lda + p];
                double b = trans_b ? B[j * ldb + p] : B[p * ldb + j];
                s += a * b;
            }
            C[i * ldc + j] = alpha * s + (beta == 0 ? 0 : beta * C[i * ldc + j]);
        }
}

void ns_sgemv(bool trans, int m, int n, float alpha, const float *A, int lda, const float *x, float beta, float *y)
{
    for (int i = 0; i < m; i++) {
        float s = 0;
        for (int j = 0; j < n; j++) s += (trans ? A[j * lda + i] : A[i * lda + j]) * x[j];
        y[i] = alpha * s + (beta == 0 ? 0 : beta * y[i]);
    }
}

const char *ns_blas_backend(void) { return "plain C"; }

#endif
