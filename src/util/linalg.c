/* linalg.c — linear algebra on CSR rows: X · P, and the randomized
 * truncated SVD (see linalg.h). */
#include "nextstate/util/linalg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nextstate/util/blas.h"
#include "nextstate/util/util.h"

/* Rows per dense chunk so that a chunk holds about 8M floats. */
static int64_t dense_chunk(int64_t ncols)
{
    int64_t c = ((int64_t)8 << 20) / (ncols ? ncols : 1);
    return c < 16 ? 16 : c > 1024 ? 1024 : c;
}

/* Dense pays off when at least 1 in 16 entries is set (sgemm is far faster
 * per multiply than a scalar loop). */
static bool use_dense(const ns_csr *X) { return X->nrows && X->nnz * 16 >= X->nrows * X->ncols; }

static void densify(const ns_csr *X, int64_t r0, int64_t c, float *D)
{
    memset(D, 0, (size_t)(c * X->ncols) * sizeof *D);
    for (int64_t i = 0; i < c; i++)
        for (int64_t p = X->indptr[r0 + i]; p < X->indptr[r0 + i + 1]; p++) D[i * X->ncols + X->indices[p]] = X->values[p];
}

/* out[nrows × l] = X · P, P [ncols × l]. */
void ns_csr_matmul_dense(const ns_csr *X, const float *P, int l, float *out)
{
    if (use_dense(X)) {
        int64_t ch = dense_chunk(X->ncols);
        float *D = ns_xmalloc((size_t)(ch * X->ncols) * sizeof *D);
        for (int64_t r0 = 0; r0 < X->nrows; r0 += ch) {
            int64_t c = X->nrows - r0 < ch ? X->nrows - r0 : ch;
            densify(X, r0, c, D);
            ns_sgemm(false, false, (int)c, l, (int)X->ncols, 1.0f, D, (int)X->ncols, P, l, 0.0f, out + r0 * l, l);
        }
        free(D);
        return;
    }
    for (int64_t i = 0; i < X->nrows; i++) {
        float *y = out + i * l;
        memset(y, 0, (size_t)l * sizeof *y);
        for (int64_t p = X->indptr[i]; p < X->indptr[i + 1]; p++) {
            const float v = X->values[p], *q = P + (int64_t)X->indices[p] * l;
            for (int j = 0; j < l; j++) y[j] += v * q[j];
        }
    }
}

/* ---- randomized truncated SVD -------------------------------------------------------- */

/* Z[ncols × l] = Xᵀ X P (P [ncols × l]), row chunk by row chunk. */
static void gram_apply(const ns_csr *X, const float *P, int l, float *Z)
{
    int64_t V = X->ncols;
    memset(Z, 0, (size_t)(V * l) * sizeof *Z);
    bool dense = use_dense(X);
    int64_t ch = dense ? dense_chunk(V) : 512;
    float *Y = ns_xmalloc((size_t)(ch * l) * sizeof *Y);
    float *D = dense ? ns_xmalloc((size_t)(ch * V) * sizeof *D) : NULL;
    for (int64_t r0 = 0; r0 < X->nrows; r0 += ch) {
        int64_t c = X->nrows - r0 < ch ? X->nrows - r0 : ch;
        if (dense) {
            densify(X, r0, c, D);
            ns_sgemm(false, false, (int)c, l, (int)V, 1.0f, D, (int)V, P, l, 0.0f, Y, l);
            ns_sgemm(true, false, (int)V, l, (int)c, 1.0f, D, (int)V, Y, l, 1.0f, Z, l);
            continue;
        }
        for (int64_t i = 0; i < c; i++) {
            float *y = Y + i * l;
            memset(y, 0, (size_t)l * sizeof *y);
            for (int64_t p = X->indptr[r0 + i]; p < X->indptr[r0 + i + 1]; p++) {
                const float v = X->values[p], *q = P + (int64_t)X->indices[p] * l;
                for (int j = 0; j < l; j++) y[j] += v * q[j];
            }
        }
        for (int64_t i = 0; i < c; i++) {
            const float *y = Y + i * l;
            for (int64_t p = X->indptr[r0 + i]; p < X->indptr[r0 + i + 1]; p++) {
                const float v = X->values[p];
                float *z = Z + (int64_t)X->indices[p] * l;
                for (int j = 0; j < l; j++) z[j] += v * y[j];
            }
        }
    }
    free(Y);
    free(D);
}

static double gauss(ns_rng *r)
{
    double u1 = (double)((ns_rng_next(r) >> 11) + 1) * 0x1p-53;
    double u2 = (double)(ns_rng_next(r) >> 11) * 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925286766559 * u2);
}

/* Projects v[V] (double) off the first ncols columns of Q [V × l] (float),
 * computing all coefficients in one pass and subtracting in a second. */
static void project_off_prev(const float *Q, int64_t V, int l, int ncols, double *v, double *coef)
{
    if (!ncols) return;
    memset(coef, 0, (size_t)ncols * sizeof *coef);
    for (int64_t r = 0; r < V; r++) {
        const float *q = Q + r * l;
        double x = v[r];
        for (int c = 0; c < ncols; c++) coef[c] += q[c] * x;
    }
    for (int64_t r = 0; r < V; r++) {
        const float *q = Q + r * l;
        double s = 0;
        for (int c = 0; c < ncols; c++) s += q[c] * coef[c];
        v[r] -= s;
    }
}

static double dnorm(const double *v, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += v[i] * v[i];
    return sqrt(s);
}

/* Modified Gram–Schmidt of v off the c columns of blk (double, V each). */
static void mgs_block(const double *blk, int c, int64_t V, double *v)
{
    for (int c2 = 0; c2 < c; c2++) {
        const double *u = blk + (int64_t)c2 * V;
        double d = 0;
        for (int64_t r = 0; r < V; r++) d += u[r] * v[r];
        for (int64_t r = 0; r < V; r++) v[r] -= d * u[r];
    }
}

/* Orthonormalises the l columns of Q [V × l] (row-major; l <= V) in place:
 * block classical Gram–Schmidt with re-orthogonalisation (BCGS2) through
 * ns_sgemm, then, column by column in double, modified Gram–Schmidt inside
 * the block, repeated with an explicit projection off the earlier blocks
 * until a round keeps at least half of the norm ("twice is enough").  A
 * column that vanishes (dependent on the earlier ones) is replaced by a
 * random vector, so the result is always an orthonormal basis. */
static void orthonormalize(float *Q, int64_t V, int l, ns_rng *rng)
{
    enum { B = 32 };
    double *blk = ns_xmalloc((size_t)(B * V) * sizeof *blk);
    float *R = ns_xmalloc((size_t)l * B * sizeof *R);
    double *coef = ns_xmalloc((size_t)l * sizeof *coef);
    double orig[B];
    for (int j0 = 0; j0 < l; j0 += B) {
        int b = l - j0 < B ? l - j0 : B;
        for (int c = 0; c < b; c++) orig[c] = 0;
        for (int64_t r = 0; r < V; r++) {
            const float *q = Q + r * l + j0;
            for (int c = 0; c < b; c++) orig[c] += (double)q[c] * q[c];
        }
        for (int c = 0; c < b; c++) orig[c] = sqrt(orig[c]);
        for (int pass = 0; pass < 2 && j0 > 0; pass++) {
            ns_sgemm(true, false, j0, b, (int)V, 1.0f, Q, l, Q + j0, l, 0.0f, R, b);
            ns_sgemm(false, false, (int)V, b, j0, -1.0f, Q, l, R, b, 1.0f, Q + j0, l);
        }
        for (int64_t r = 0; r < V; r++)
            for (int c = 0; c < b; c++) blk[c * V + r] = Q[r * l + j0 + c];
        for (int c = 0; c < b; c++) {
            double *v = blk + c * V, before = orig[c], after;
            mgs_block(blk, c, V, v);
            after = dnorm(v, V);
            for (int round = 0; round < 16 && !(after > 0 && after >= 0.5 * before); round++) {
                if (!(after > 1e-30 * (orig[c] > 1 ? orig[c] : 1)) || round >= 8) {
                    for (int64_t r = 0; r < V; r++) v[r] = gauss(rng); /* dependent: start afresh */
                    after = dnorm(v, V);
                }
                before = after;
                project_off_prev(Q, V, l, j0, v, coef);
                mgs_block(blk, c, V, v);
                after = dnorm(v, V);
            }
            for (int64_t r = 0; r < V; r++) v[r] /= after;
        }
        for (int64_t r = 0; r < V; r++)
            for (int c = 0; c < b; c++) Q[r * l + j0 + c] = (float)blk[c * V + r];
    }
    free(blk);
    free(R);
    free(coef);
}

/* Symmetric eigenproblem (Householder tridiagonalisation + implicit QL, as
 * EISPACK tred2/tql2 via JAMA): A [n × n] (row-major, symmetric) is
 * overwritten; on return d[n] holds the eigenvalues ascending and row i of
 * A the eigenvector of d[i].  JAMA's V[i][j] is stored at A[j][i] (A is
 * symmetric, so it starts equal): every inner loop then runs along a row. */
static void sym_eig(double *A, int n, double *d)
{
    double *e = ns_xcalloc((size_t)n, sizeof *e);
#define V_(i, j) A[(size_t)(j) * n + (i)]
    for (int j = 0; j < n; j++) d[j] = V_(n - 1, j);
    for (int i = n - 1; i > 0; i--) {
        double scale = 0, h = 0;
        for (int k = 0; k < i; k++) scale += fabs(d[k]);
        if (scale == 0.0) {
            e[i] = d[i - 1];
            for (int j = 0; j < i; j++) {
                d[j] = V_(i - 1, j);
                V_(i, j) = 0;
                V_(j, i) = 0;
            }
        } else {
            for (int k = 0; k < i; k++) {
                d[k] /= scale;
                h += d[k] * d[k];
            }
            double f = d[i - 1], g = sqrt(h);
            if (f > 0) g = -g;
            e[i] = scale * g;
            h -= f * g;
            d[i - 1] = f - g;
            for (int j = 0; j < i; j++) e[j] = 0;
            for (int j = 0; j < i; j++) {
                f = d[j];
                V_(j, i) = f;
                g = e[j] + V_(j, j) * f;
                for (int k = j + 1; k <= i - 1; k++) {
                    g += V_(k, j) * d[k];
                    e[k] += V_(k, j) * f;
                }
                e[j] = g;
            }
            f = 0;
            for (int j = 0; j < i; j++) {
                e[j] /= h;
                f += e[j] * d[j];
            }
            double hh = f / (h + h);
            for (int j = 0; j < i; j++) e[j] -= hh * d[j];
            for (int j = 0; j < i; j++) {
                f = d[j];
                g = e[j];
                for (int k = j; k <= i - 1; k++) V_(k, j) -= (f * e[k] + g * d[k]);
                d[j] = V_(i - 1, j);
                V_(i, j) = 0;
            }
        }
        d[i] = h;
    }
    for (int i = 0; i < n - 1; i++) {
        V_(n - 1, i) = V_(i, i);
        V_(i, i) = 1.0;
        double h = d[i + 1];
        if (h != 0.0) {
            for (int k = 0; k <= i; k++) d[k] = V_(k, i + 1) / h;
            for (int j = 0; j <= i; j++) {
                double g = 0;
                for (int k = 0; k <= i; k++) g += V_(k, i + 1) * V_(k, j);
                for (int k = 0; k <= i; k++) V_(k, j) -= g * d[k];
            }
        }
        for (int k = 0; k <= i; k++) V_(k, i + 1) = 0.0;
    }
    for (int j = 0; j < n; j++) {
        d[j] = V_(n - 1, j);
        V_(n - 1, j) = 0.0;
    }
    V_(n - 1, n - 1) = 1.0;
    e[0] = 0.0;
#undef V_
    double *Z = A; /* row i = JAMA's column i */
    for (int i = 1; i < n; i++) e[i - 1] = e[i];
    e[n - 1] = 0.0;
    double f = 0, tst1 = 0, eps = 0x1p-52;
    for (int l = 0; l < n; l++) {
        double t = fabs(d[l]) + fabs(e[l]);
        if (t > tst1) tst1 = t;
        int m = l;
        while (m < n) {
            if (fabs(e[m]) <= eps * tst1) break;
            m++;
        }
        if (m >= n) m = n - 1;
        if (m > l) {
            int iter = 0;
            do {
                if (++iter > 60) break; /* never seen; guards against a stall */
                double g = d[l], p = (d[l + 1] - g) / (2.0 * e[l]), r = hypot(p, 1.0);
                if (p < 0) r = -r;
                d[l] = e[l] / (p + r);
                d[l + 1] = e[l] * (p + r);
                double dl1 = d[l + 1], h = g - d[l];
                for (int i = l + 2; i < n; i++) d[i] -= h;
                f += h;
                p = d[m];
                double c = 1, c2 = 1, c3 = 1, el1 = e[l + 1], s = 0, s2 = 0;
                for (int i = m - 1; i >= l; i--) {
                    c3 = c2;
                    c2 = c;
                    s2 = s;
                    g = c * e[i];
                    h = c * p;
                    r = hypot(p, e[i]);
                    e[i + 1] = s * r;
                    s = e[i] / r;
                    c = p / r;
                    p = c * d[i] - s * g;
                    d[i + 1] = h + s * (c * g + s * d[i]);
                    double *zi = Z + (size_t)i * n, *zi1 = Z + (size_t)(i + 1) * n;
                    for (int k = 0; k < n; k++) {
                        double hk = zi1[k];
                        zi1[k] = s * zi[k] + c * hk;
                        zi[k] = c * zi[k] - s * hk;
                    }
                }
                p = -s * s2 * c3 * el1 * e[l] / dl1;
                e[l] = s * p;
                d[l] = c * p;
            } while (fabs(e[l]) > eps * tst1);
        }
        d[l] += f;
        e[l] = 0.0;
    }
    free(e);
    /* sort ascending (selection sort; n is at most a few thousand) */
    for (int i = 0; i < n - 1; i++) {
        int k = i;
        for (int j = i + 1; j < n; j++)
            if (d[j] < d[k]) k = j;
        if (k != i) {
            double t = d[i];
            d[i] = d[k];
            d[k] = t;
            for (int j = 0; j < n; j++) {
                t = Z[(size_t)i * n + j];
                Z[(size_t)i * n + j] = Z[(size_t)k * n + j];
                Z[(size_t)k * n + j] = t;
            }
        }
    }
}

/* Z[V × V] = XᵀX, one ns_sgemm per chunk of densified rows. */
static void gram_exact(const ns_csr *X, float *Z)
{
    int64_t V = X->ncols, ch = dense_chunk(V);
    memset(Z, 0, (size_t)(V * V) * sizeof *Z);
    float *D = ns_xmalloc((size_t)(ch * V) * sizeof *D);
    for (int64_t r0 = 0; r0 < X->nrows; r0 += ch) {
        int64_t c = X->nrows - r0 < ch ? X->nrows - r0 : ch;
        densify(X, r0, c, D);
        ns_sgemm(true, false, (int)V, (int)V, (int)c, 1.0f, D, (int)V, D, (int)V, 1.0f, Z, (int)V);
    }
    free(D);
}

void ns_truncated_svd(const ns_csr *X, int k, int oversample, int iters, uint64_t seed, float *components, float *sv)
{
    int64_t V = X->ncols;
    int l = (int64_t)k + oversample < V ? k + oversample : (int)V;
    ns_rng rng;
    ns_rng_seed(&rng, seed ^ 0x737664ULL /* "svd" */);
    /* When the subspace would cover most of the space anyway, the exact
     * eigendecomposition of XᵀX is both cheaper and better: P = I. */
    bool exact = (double)l >= 0.75 * (double)V;
    if (exact) l = (int)V;
    float *P = ns_xcalloc((size_t)(V * l), sizeof *P), *Z = ns_xmalloc((size_t)(V * l) * sizeof *Z);
    if (exact) {
        for (int64_t i = 0; i < V; i++) P[i * l + i] = 1.0f;
    } else {
        for (int64_t i = 0; i < V * l; i++) P[i] = (float)gauss(&rng);
        orthonormalize(P, V, l, &rng);
    }
    /* iters + 1 multiplications by XᵀX: the subspace of scikit-learn's
     * randomized_svd(n_iter=iters), whose basis spans (XᵀX)^(iters+1) Ω */
    for (int it = 0; it <= iters && !exact; it++) {
        gram_apply(X, P, l, Z);
        float *t = P;
        P = Z;
        Z = t;
        orthonormalize(P, V, l, &rng);
    }
    /* Rayleigh–Ritz: H = Pᵀ XᵀX P (XᵀX itself when exact) */
    float *H = ns_xmalloc((size_t)l * l * sizeof *H);
    if (exact) {
        gram_exact(X, H);
    } else {
        gram_apply(X, P, l, Z);
        ns_sgemm(true, false, l, l, (int)V, 1.0f, P, l, Z, l, 0.0f, H, l);
    }
    double *A = ns_xmalloc((size_t)l * l * sizeof *A);
    double *d = ns_xmalloc((size_t)l * sizeof *d);
    for (int i = 0; i < l; i++)
        for (int j = 0; j < l; j++) A[(size_t)i * l + j] = 0.5 * ((double)H[(size_t)i * l + j] + H[(size_t)j * l + i]);
    sym_eig(A, l, d);
    const double *vecs = A;
    /* W [l × k]: the eigenvectors of the k largest eigenvalues */
    float *W = ns_xmalloc((size_t)l * k * sizeof *W);
    for (int j = 0; j < k; j++) {
        int src = l - 1 - j;
        for (int i = 0; i < l; i++) W[(size_t)i * k + j] = (float)vecs[(size_t)src * l + i];
        sv[j] = (float)sqrt(d[src] > 0 ? d[src] : 0);
    }
    ns_sgemm(false, false, (int)V, k, l, 1.0f, P, l, W, k, 0.0f, components, k);
    /* deterministic signs: each component's largest-magnitude entry positive */
    for (int j = 0; j < k; j++) {
        int64_t best = 0;
        for (int64_t t = 1; t < V; t++)
            if (fabsf(components[t * k + j]) > fabsf(components[best * k + j])) best = t;
        if (components[best * k + j] < 0)
            for (int64_t t = 0; t < V; t++) components[t * k + j] = -components[t * k + j];
    }
    free(P);
    free(Z);
    free(H);
    free(A);
    free(d);
    free(W);
}
