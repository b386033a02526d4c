/* hwl.c — the learned WL heuristic: ridge regression of h* on WL features,
 * its model file, and its evaluator for search (hwl.h). */
#include "nextstate/learn/hwl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/core/succgen.h"
#include "nextstate/learn/params.h"
#include "nextstate/util/blas.h"
#include "nextstate/util/json.h"

#define HWL_FORMAT "nextstate-hwl"
#define HWL_VERSION 1
#define HWL_SCALE 1000.0 /* evaluator keys: thousandths of a step */
#define HWL_KEY_ZERO 1e9 /* the key of h = 0: keys keep h's order down to h = -10^6 steps */

void ns_hwl_config_init(ns_hwl_config *c)
{
    c->iterations = 2;
    c->statics = true;
    c->lambda = 1.0;
    c->rank = 4;
    c->rank_weight = 1.0;
    c->seed = 1;
}

void ns_hwl_free(ns_hwl *h)
{
    ns_encoder_spec_free(&h->enc);
    free(h->w);
    memset(h, 0, sizeof *h);
}

/* Calls fn(ctx, φ(s_t), cost-to-go of s_t) for every state of every
 * trajectory of s; phi has room for D floats. */
static ns_status each_state(const ns_encoder_spec *spec, const ns_trajset *s, float *phi,
                            void (*fn)(void *, const float *, double), void *ctx, ns_error *err)
{
    for (int i = 0; i < s->n; i++) {
        const ns_traj *tr = &s->v[i];
        ns_encoder e;
        ns_status st = ns_encoder_init(&e, spec, &tr->t, err);
        if (st != NS_OK) return st;
        double togo = 0;
        for (int k = 0; k < tr->nstates - 1; k++) togo += tr->t.ops[tr->ops[k]].cost;
        for (int k = 0; k < tr->nstates; k++) {
            ns_encoder_state(&e, tr->states + (size_t)k * (size_t)tr->t.nwords, phi);
            fn(ctx, phi, togo);
            if (k < tr->nstates - 1) togo -= tr->t.ops[tr->ops[k]].cost;
        }
        ns_encoder_free(&e);
    }
    return NS_OK;
}

/* The normal equations of the augmented rows [φ, 1]: A (lower triangle,
 * (D+1)²) and b. */
typedef struct normal_eq {
    int n; /* D + 1 */
    double *a, *b;
    int *nz; /* scratch: the nonzero positions of a row */
    long rows;
} normal_eq;

static void accumulate(void *ctx, const float *phi, double y)
{
    normal_eq *q = ctx;
    int D = q->n - 1, m = 0;
    for (int j = 0; j < D; j++)
        if (phi[j] != 0) q->nz[m++] = j;
    q->nz[m++] = D; /* the bias column */
    for (int x = 0; x < m; x++) {
        int r = q->nz[x];
        double vr = r == D ? 1.0 : phi[r];
        q->b[r] += vr * y;
        for (int z = 0; z <= x; z++) {
            int c = q->nz[z];
            q->a[(size_t)r * (size_t)q->n + (size_t)c] += vr * (c == D ? 1.0 : phi[c]);
        }
    }
    q->rows++;
}

/* Columns k0..k1 of the m rows z (leading dimension ld) solved against the
 * diagonal block L[k0:k1, k0:k1] of l: z[j] ← (z[j] − Σ_{k0≤k<j} z[k] L[j][k]) / L[j][j]. */
static void block_solve(const double *l, double *z, long m, int k0, int k1, size_t ld)
{
    for (long r = 0; r < m; r++) {
        double *zr = z + (size_t)r * ld;
        for (int j = k0; j < k1; j++) {
            const double *lj = l + (size_t)j * ld;
            double v = zr[j];
            for (int k = k0; k < j; k++) v -= zr[k] * lj[k];
            zr[j] = v / lj[j];
        }
    }
}

/* Factors the lower triangle of A (n×n, row-major) in place into L with
 * A = L Lᵀ, blocked: each diagonal block unblocked, the panel below it by
 * substitution, the trailing matrix updated by one product through BLAS
 * (most of the O(n³/3) work).  False when A is not positive definite. */
#define CHOL_BLOCK 128
static bool cholesky_factor(double *a, int n)
{
    size_t ld = (size_t)n;
    for (int k0 = 0; k0 < n; k0 += CHOL_BLOCK) {
        int nb = n - k0 < CHOL_BLOCK ? n - k0 : CHOL_BLOCK, k1 = k0 + nb;
        for (int j = k0; j < k1; j++) { /* the diagonal block */
            double *rj = a + (size_t)j * ld;
            double d = rj[j];
            for (int k = k0; k < j; k++) d -= rj[k] * rj[k];
            if (!(d > 0)) return false;
            rj[j] = sqrt(d);
            for (int i = j + 1; i < k1; i++) {
                double *ri = a + (size_t)i * ld;
                double v = ri[j];
                for (int k = k0; k < j; k++) v -= ri[k] * rj[k];
                ri[j] = v / rj[j];
            }
        }
        block_solve(a, a + (size_t)k1 * ld, n - k1, k0, k1, ld); /* the panel L[k1:, k0:k1] */
        if (k1 < n) /* A[k1:, k1:] −= P Pᵀ (the upper triangle is written too, and never read) */
            ns_dgemm(false, true, n - k1, n - k1, nb, -1.0, a + (size_t)k1 * ld + k0, n, a + (size_t)k1 * ld + k0,
                     n, 1.0, a + (size_t)k1 * ld + k1, n);
    }
    return true;
}

/* y ← L⁻¹ y and y ← L⁻ᵀ y for the lower triangle L (n×n, row-major). */
static void forward_sub(const double *a, double *y, int n)
{
    for (int i = 0; i < n; i++) {
        const double *ri = a + (size_t)i * (size_t)n;
        double v = y[i];
        for (int k = 0; k < i; k++) v -= ri[k] * y[k];
        y[i] = v / ri[i];
    }
}

static void back_sub(const double *a, double *y, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        double v = y[i];
        for (int k = i + 1; k < n; k++) v -= a[(size_t)k * (size_t)n + (size_t)i] * y[k];
        y[i] = v / a[(size_t)i * (size_t)n + (size_t)i];
    }
}

/* Solves A x = b in place (A symmetric positive definite, lower triangle
 * used) by Cholesky; false when A is not positive definite. */
static bool cholesky_solve(double *a, double *b, int n)
{
    if (!cholesky_factor(a, n)) return false;
    forward_sub(a, b, n);
    back_sub(a, b, n);
    return true;
}

/* Z ← Z L⁻ᵀ for the m rows of Z (m×n, row-major): each row z becomes the
 * solution of L x = z, blocked as cholesky_factor (the trailing columns
 * updated by one product per block). */
static void rows_forward_sub(const double *l, double *z, long m, int n)
{
    size_t ld = (size_t)n;
    for (int k0 = 0; k0 < n; k0 += CHOL_BLOCK) {
        int nb = n - k0 < CHOL_BLOCK ? n - k0 : CHOL_BLOCK, k1 = k0 + nb;
        block_solve(l, z, m, k0, k1, ld);
        if (k1 < n) /* Z[:, k1:] −= Z[:, k0:k1] L[k1:, k0:k1]ᵀ */
            ns_dgemm(false, true, (int)m, n - k1, nb, -1.0, z + k0, n, l + (size_t)k1 * ld + k0, n, 1.0, z + k1, n);
    }
}

double ns_hwl_predict(const ns_hwl *h, const float *phi)
{
    double v = h->w[h->dim];
    for (int j = 0; j < h->dim; j++)
        if (phi[j] != 0) v += (double)h->w[j] * phi[j];
    return v;
}

typedef struct sq_err {
    const ns_hwl *h;
    double sum;
    long n;
} sq_err;

static void add_sq_err(void *ctx, const float *phi, double y)
{
    sq_err *s = ctx;
    double d = ns_hwl_predict(s->h, phi) - y;
    s->sum += d * d;
    s->n++;
}

ns_status ns_hwl_rmse(const ns_hwl *h, const ns_trajset *s, double *rmse, ns_error *err)
{
    sq_err acc = {h, 0, 0};
    float *phi = ns_xcalloc((size_t)h->dim + 1, sizeof(float));
    ns_status st = each_state(&h->enc, s, phi, add_sq_err, &acc, err);
    free(phi);
    *rmse = acc.n ? sqrt(acc.sum / (double)acc.n) : NAN;
    return st;
}

/* The training rows kept sparse (for the dual solve): row r's nonzero
 * feature ids idx[ptr[r] … ptr[r+1]) ascending, their values, and y[r]. */
typedef struct sparse_rows {
    long n, cap, nnz, nnz_cap;
    long *ptr;
    int *idx;
    float *val;
    double *y;
    int dim;
} sparse_rows;

static void keep_row(void *ctx, const float *phi, double y)
{
    sparse_rows *r = ctx;
    if (r->n + 1 >= r->cap) {
        r->cap = r->cap ? 2 * r->cap : 256;
        r->ptr = ns_xrealloc(r->ptr, (size_t)(r->cap + 1) * sizeof(long));
        r->y = ns_xrealloc(r->y, (size_t)r->cap * sizeof(double));
    }
    if (r->n == 0) r->ptr[0] = 0;
    for (int j = 0; j < r->dim; j++) {
        if (phi[j] == 0) continue;
        if (r->nnz == r->nnz_cap) {
            r->nnz_cap = r->nnz_cap ? 2 * r->nnz_cap : 4096;
            r->idx = ns_xrealloc(r->idx, (size_t)r->nnz_cap * sizeof(int));
            r->val = ns_xrealloc(r->val, (size_t)r->nnz_cap * sizeof(float));
        }
        r->idx[r->nnz] = j;
        r->val[r->nnz++] = phi[j];
    }
    r->y[r->n++] = y;
    r->ptr[r->n] = r->nnz;
}

static void sparse_rows_free(sparse_rows *r)
{
    free(r->ptr);
    free(r->idx);
    free(r->val);
    free(r->y);
}

/* The lower triangle of K = X Xᵀ (N×N, row-major) for the rows of r: row i
 * scattered into a dense vector, each earlier row gathered against it
 * (the same products, summed in the same order, as merging the two rows,
 * without the merge's branches). */
static void gram_lower(const sparse_rows *r, double *k)
{
    long N = r->n;
    double *d = ns_xcalloc((size_t)r->dim, sizeof(double));
    for (long i = 0; i < N; i++) {
        for (long q = r->ptr[i]; q < r->ptr[i + 1]; q++) d[r->idx[q]] = r->val[q];
        for (long j = 0; j <= i; j++) {
            double v = 0;
            for (long q = r->ptr[j]; q < r->ptr[j + 1]; q++) v += d[r->idx[q]] * r->val[q];
            k[(size_t)i * (size_t)N + (size_t)j] = v;
        }
        for (long q = r->ptr[i]; q < r->ptr[i + 1]; q++) d[r->idx[q]] = 0;
    }
    free(d);
}

/* Ridge regression with the bias unpenalised in the dual (N rows, K = X Xᵀ):
 * with centred rows and targets, (H K H + λI) α = y − ȳ gives Σα = 0, so
 * w = Xᵀα and b = ȳ − w·x̄.  N² memory instead of D²: the choice when the
 * features outnumber the states.  w has room for dim + 1. */
static bool solve_dual(const sparse_rows *r, double lambda, float *w)
{
    long N = r->n;
    double *k = ns_xcalloc((size_t)N * (size_t)N, sizeof(double));
    double *mean = ns_xcalloc((size_t)N, sizeof(double));
    double all = 0, ybar = 0;
    gram_lower(r, k);
    for (long i = 0; i < N; i++) {
        for (long j = 0; j < N; j++) mean[i] += i >= j ? k[(size_t)i * (size_t)N + (size_t)j] : k[(size_t)j * (size_t)N + (size_t)i];
        mean[i] /= (double)N;
        all += mean[i] / (double)N;
        ybar += r->y[i] / (double)N;
    }
    double *alpha = ns_xcalloc((size_t)N, sizeof(double));
    for (long i = 0; i < N; i++) {
        alpha[i] = r->y[i] - ybar;
        for (long j = 0; j <= i; j++) k[(size_t)i * (size_t)N + (size_t)j] += all - mean[i] - mean[j] + (i == j ? lambda : 0);
    }
    bool ok = cholesky_solve(k, alpha, (int)N);
    if (ok) {
        double *wd = ns_xcalloc((size_t)r->dim, sizeof(double)), *xbar = ns_xcalloc((size_t)r->dim, sizeof(double));
        for (long i = 0; i < N; i++)
            for (long q = r->ptr[i]; q < r->ptr[i + 1]; q++) {
                wd[r->idx[q]] += alpha[i] * r->val[q];
                xbar[r->idx[q]] += r->val[q] / (double)N;
            }
        double b = ybar;
        for (int j = 0; j < r->dim; j++) {
            w[j] = (float)wd[j];
            b -= wd[j] * xbar[j];
        }
        w[r->dim] = (float)b;
        free(wd);
        free(xbar);
    }
    free(alpha);
    free(mean);
    free(k);
    return ok;
}

/* Ranking pairs (hwl.h, ns_hwl_config.rank): for each non-goal state s_t
 * of every trajectory, up to k successors s' other than s_{t+1}, in an
 * order shuffled with rng, whose φ differs from φ(s_{t+1}); each kept as
 * the sparse row φ(s') − φ(s_{t+1}) with margin 1. */
static ns_status collect_pairs(const ns_encoder_spec *spec, const ns_trajset *s, int k, uint64_t seed,
                               sparse_rows *pairs, ns_error *err)
{
    ns_rng rng;
    ns_rng_seed(&rng, seed);
    int D = pairs->dim;
    float *next = ns_xcalloc((size_t)D + 1, sizeof(float)), *phi = ns_xcalloc((size_t)D + 1, sizeof(float));
    ns_status st = NS_OK;
    for (int i = 0; i < s->n && st == NS_OK; i++) {
        const ns_traj *tr = &s->v[i];
        const int nw = tr->t.nwords;
        ns_encoder e;
        if ((st = ns_encoder_init(&e, spec, &tr->t, err)) != NS_OK) break;
        ns_succgen g;
        ns_succgen_init(&g, &tr->t);
        int *ops = ns_xcalloc((size_t)tr->t.nops + 1, sizeof(int));
        ns_word *succ = ns_xcalloc((size_t)nw, sizeof(ns_word));
        for (int t = 0; t + 1 < tr->nstates; t++) {
            const ns_word *cur = tr->states + (size_t)t * (size_t)nw, *nxt = cur + nw;
            ns_encoder_state(&e, nxt, next);
            int n = ns_succgen_applicable(&g, cur, ops);
            ns_rng_shuffle_int(&rng, ops, (size_t)n);
            for (int j = 0, taken = 0; j < n && taken < k; j++) {
                if (ops[j] == tr->ops[t]) continue;
                ns_task_apply(&tr->t, ops[j], cur, succ);
                if (!memcmp(succ, nxt, (size_t)nw * sizeof(ns_word))) continue;
                ns_encoder_state(&e, succ, phi);
                bool same = true;
                for (int d = 0; d < D; d++) {
                    phi[d] -= next[d];
                    same = same && phi[d] == 0;
                }
                if (same) continue; /* WL cannot tell them apart */
                keep_row(pairs, phi, 1.0);
                taken++;
            }
        }
        free(ops);
        free(succ);
        ns_succgen_free(&g);
        ns_encoder_free(&e);
    }
    free(next);
    free(phi);
    return st;
}

/* Adds weight · x xᵀ (lower triangle) and weight · y · x to q for sparse
 * row r of p. */
static void add_sparse_row(normal_eq *q, const sparse_rows *p, long r, double weight)
{
    for (long a = p->ptr[r]; a < p->ptr[r + 1]; a++) {
        int i = p->idx[a];
        double vi = weight * p->val[a];
        q->b[i] += vi * p->y[r];
        for (long c = p->ptr[r]; c <= a; c++) q->a[(size_t)i * (size_t)q->n + (size_t)p->idx[c]] += vi * p->val[c];
    }
}

static double row_dot(const sparse_rows *p, long r, const float *w)
{
    double v = 0;
    for (long a = p->ptr[r]; a < p->ptr[r + 1]; a++) v += (double)w[p->idx[a]] * p->val[a];
    return v;
}

/* The squared-hinge ranking term's active set for w: the pairs w orders
 * less than their margin apart; true when it changed. */
static bool update_active(const sparse_rows *pairs, const float *w, bool *active)
{
    bool changed = false;
    for (long r = 0; r < pairs->n; r++) {
        bool v = row_dot(pairs, r, w) < pairs->y[r];
        changed = changed || v != active[r];
        active[r] = v;
    }
    return changed;
}

#define HWL_NEWTON_STEPS 30
static ns_status singular(ns_error *err)
{
    return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                        "the normal equations are singular (give the ridge penalty a positive value)");
}

/* The active-set Newton steps with every step's system A + Σ_active μ x xᵀ
 * assembled and factored anew: A = q->a, b = q->b (left as they are). */
static ns_status newton_direct(const normal_eq *q, const sparse_rows *pairs, double mu, bool *active, float *w,
                               ns_error *err)
{
    size_t nn = (size_t)q->n * (size_t)q->n;
    normal_eq sys = *q;
    sys.a = ns_xmalloc(nn * sizeof(double));
    sys.b = ns_xmalloc((size_t)q->n * sizeof(double));
    ns_status st = NS_OK;
    for (int it = 0; it < HWL_NEWTON_STEPS; it++) {
        memcpy(sys.a, q->a, nn * sizeof(double));
        memcpy(sys.b, q->b, (size_t)q->n * sizeof(double));
        for (long r = 0; r < pairs->n; r++)
            if (active[r]) add_sparse_row(&sys, pairs, r, mu);
        if (!cholesky_solve(sys.a, sys.b, sys.n)) {
            st = singular(err);
            break;
        }
        for (int j = 0; j < q->n; j++) w[j] = (float)sys.b[j];
        if (!update_active(pairs, w, active)) break;
    }
    free(sys.a);
    free(sys.b);
    return st;
}

/* The same steps with A factored once, for pairs at most half the unknowns: with
 * A = L Lᵀ and z_r = L⁻¹ √μ x_r, a step's system is L (I + Σ_S z_r z_rᵀ) Lᵀ,
 * solved by Woodbury's identity through the pairs' Gram matrix Zᵀ Z (made
 * once; a step factors its |S|×|S| part).  O(n³/3 + P n²) once and
 * O(|S|³/3 + n²) a step, where the direct steps take O(n³/3) each.
 * Destroys q->a (L) and q->b. */
static ns_status newton_low_rank(normal_eq *q, const sparse_rows *pairs, double mu, bool *active, float *w,
                                 ns_error *err)
{
    int n = q->n;
    long P = pairs->n;
    if (!cholesky_factor(q->a, n)) return singular(err);
    double *z = ns_xcalloc((size_t)P * (size_t)n, sizeof(double)), sm = sqrt(mu);
    for (long r = 0; r < P; r++)
        for (long a = pairs->ptr[r]; a < pairs->ptr[r + 1]; a++)
            z[(size_t)r * (size_t)n + (size_t)pairs->idx[a]] = sm * pairs->val[a];
    rows_forward_sub(q->a, z, P, n);
    double *g = ns_xmalloc((size_t)P * (size_t)P * sizeof(double));
    ns_dgemm(false, true, (int)P, (int)P, n, 1.0, z, n, z, n, 0.0, g, (int)P);
    forward_sub(q->a, q->b, n); /* c0 = L⁻¹ b */
    double *c = ns_xmalloc((size_t)n * sizeof(double)), *m = ns_xmalloc((size_t)P * (size_t)P * sizeof(double));
    double *u = ns_xmalloc((size_t)P * sizeof(double));
    long *S = ns_xmalloc((size_t)P * sizeof(long));
    for (int it = 0; it < HWL_NEWTON_STEPS; it++) {
        long k = 0;
        for (long r = 0; r < P; r++)
            if (active[r]) S[k++] = r;
        /* c = L⁻¹ (b + Σ_S μ y_r x_r) = c0 + Σ_S √μ y_r z_r */
        memcpy(c, q->b, (size_t)n * sizeof(double));
        for (long i = 0; i < k; i++) {
            const double *zr = z + (size_t)S[i] * (size_t)n, f = sm * pairs->y[S[i]];
            for (int j = 0; j < n; j++) c[j] += f * zr[j];
        }
        /* (I + Z_S Z_Sᵀ)⁻¹ c = c − Z_S (I + G_SS)⁻¹ Z_Sᵀ c */
        for (long i = 0; i < k; i++) {
            const double *zr = z + (size_t)S[i] * (size_t)n;
            double v = 0;
            for (int j = 0; j < n; j++) v += zr[j] * c[j];
            u[i] = v;
            for (long t = 0; t <= i; t++) m[i * k + t] = g[S[i] * P + S[t]] + (t == i);
        }
        if (k > 0 && !cholesky_solve(m, u, (int)k)) { /* I + G_SS is definite: only NaNs get here */
            free(z), free(g), free(c), free(m), free(u), free(S);
            return singular(err);
        }
        for (long i = 0; i < k; i++) {
            const double *zr = z + (size_t)S[i] * (size_t)n;
            for (int j = 0; j < n; j++) c[j] -= u[i] * zr[j];
        }
        back_sub(q->a, c, n);
        for (int j = 0; j < n; j++) w[j] = (float)c[j];
        if (!update_active(pairs, w, active)) break;
    }
    free(z), free(g), free(c), free(m), free(u), free(S);
    return NS_OK;
}

/* Ridge regression in the primal: the normal equations of [φ, 1], (D+1)²
 * memory; with pairs (may be NULL), the squared-hinge ranking term by
 * active-set Newton steps: solve with the pairs violated by the last w
 * (all at first) until that set stops changing (at most 30 solves) —
 * by low-rank updates of one factorisation when the pairs are at most half
 * the unknowns (then its memory, at most 2 (D+1)², is no more than the
 * direct steps').  w has room for dim + 1. */
static ns_status solve_primal(const ns_hwl *h, const ns_trajset *train, double lambda, const sparse_rows *pairs,
                              double rank_weight, float *w, long *rows, ns_error *err)
{
    normal_eq q = {h->dim + 1, NULL, NULL, NULL, 0};
    q.a = ns_xcalloc((size_t)q.n * (size_t)q.n, sizeof(double));
    q.b = ns_xcalloc((size_t)q.n, sizeof(double));
    q.nz = ns_xcalloc((size_t)q.n, sizeof(int));
    float *phi = ns_xcalloc((size_t)h->dim + 1, sizeof(float));
    ns_status st = each_state(&h->enc, train, phi, accumulate, &q, err);
    /* λ on the weights; a tiny ridge on the bias keeps A definite when λ = 0
       and a feature is constant */
    for (int j = 0; j < q.n && st == NS_OK; j++) q.a[(size_t)j * (size_t)q.n + (size_t)j] += j < h->dim ? lambda : 1e-9;
    long np = pairs ? pairs->n : 0;
    bool *active = ns_xcalloc((size_t)np + 1, sizeof(bool));
    for (long r = 0; r < np; r++) active[r] = true;
    if (st == NS_OK && np == 0) {
        if (!cholesky_solve(q.a, q.b, q.n)) st = singular(err);
        for (int j = 0; j < q.n && st == NS_OK; j++) w[j] = (float)q.b[j];
    } else if (st == NS_OK) {
        st = 2 * np <= q.n ? newton_low_rank(&q, pairs, rank_weight, active, w, err)
                      : newton_direct(&q, pairs, rank_weight, active, w, err);
    }
    *rows = q.rows;
    free(active);
    free(phi);
    free(q.a);
    free(q.b);
    free(q.nz);
    return st;
}

/* The largest system solved exactly: min(D + 1, N)² doubles. */
#define HWL_MAX_SYSTEM 16384
/* The most unknowns (D + 1) the ranking term's primal solves take: a few
 * seconds of Cholesky each (sokoban's 6,451: 31 s for the whole fit, at
 * stop 36, before the low-rank steps), 2 (D+1)² doubles of memory. */
#define HWL_RANK_MAX_DIM 8192

ns_status ns_hwl_fit(ns_hwl *h, const ns_trajset *train, const ns_hwl_config *c, ns_error *err)
{
    memset(h, 0, sizeof *h);
    long N = ns_trajset_states(train);
    if (N < 1) return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "no training state");
    if (!(c->lambda >= 0)) return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "the ridge penalty must be ≥ 0");
    ns_status st = ns_encoder_spec_fit_wl(&h->enc, train, c->iterations, c->statics, err);
    if (st != NS_OK) return st;
    h->dim = ns_encoder_spec_dim(&h->enc);
    h->lambda = c->lambda;
    h->problems = train->n;
    if (c->rank < 0 || !(c->rank_weight >= 0)) {
        ns_hwl_free(h);
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "the ranking siblings and weight must be ≥ 0");
    }
    /* the ranking term needs the primal system; above HWL_RANK_MAX_DIM features it is left out (h->rank 0) */
    int rank = h->dim + 1 <= HWL_RANK_MAX_DIM ? c->rank : 0;
    bool dual = rank == 0 && c->lambda > 0 && N < (long)h->dim + 1;
    long n = dual ? N : (long)h->dim + 1;
    if (n > HWL_MAX_SYSTEM) {
        st = ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                          "%ld training states and %d WL features: a %s system of %ld unknowns is more than %d "
                          "(fewer training problems or WL iterations%s)",
                          N, h->dim, rank ? "ranking" : "ridge", n, HWL_MAX_SYSTEM,
                          rank ? ", or no ranking term" : "");
        ns_hwl_free(h);
        return st;
    }
    h->w = ns_xcalloc((size_t)h->dim + 1, sizeof(float));
    h->rank = rank;
    h->rank_weight = rank ? c->rank_weight : 0;
    sparse_rows pairs = {0};
    pairs.dim = h->dim;
    if (dual) {
        sparse_rows r = {0};
        r.dim = h->dim;
        float *phi = ns_xcalloc((size_t)h->dim + 1, sizeof(float));
        st = each_state(&h->enc, train, phi, keep_row, &r, err);
        if (st == NS_OK && !solve_dual(&r, c->lambda, h->w))
            st = ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "the ridge system is singular");
        h->rows = r.n;
        free(phi);
        sparse_rows_free(&r);
    } else {
        if (rank) st = collect_pairs(&h->enc, train, rank, c->seed, &pairs, err);
        if (st == NS_OK) st = solve_primal(h, train, c->lambda, rank ? &pairs : NULL, c->rank_weight, h->w, &h->rows, err);
    }
    h->pairs = pairs.n;
    long right = 0;
    for (long r = 0; r < pairs.n; r++) right += row_dot(&pairs, r, h->w) > 0;
    h->pair_acc = pairs.n ? (double)right / (double)pairs.n : NAN;
    sparse_rows_free(&pairs);
    if (st == NS_OK) st = ns_hwl_rmse(h, train, &h->rmse, err);
    if (st != NS_OK) ns_hwl_free(h);
    return st;
}

ns_status ns_hwl_save(const ns_hwl *h, const char *path, ns_error *err)
{
    ns_buf meta;
    ns_buf_init(&meta);
    ns_buf_printf(&meta, "{\"format\": \"%s\", \"version\": %d, \"dim\": %d, \"lambda\": ", HWL_FORMAT, HWL_VERSION,
                  h->dim);
    ns_json_put_num(&meta, h->lambda);
    ns_buf_puts(&meta, ", \"encoder\": ");
    ns_encoder_spec_write(&h->enc, &meta);
    ns_buf_printf(&meta, ", \"train\": {\"rows\": %ld, \"problems\": %d, \"rmse\": ", h->rows, h->problems);
    ns_json_put_num(&meta, h->rmse);
    if (h->rank) {
        ns_buf_printf(&meta, ", \"rank\": %d, \"rank_weight\": ", h->rank);
        ns_json_put_num(&meta, h->rank_weight);
        ns_buf_printf(&meta, ", \"pairs\": %ld, \"pair_accuracy\": ", h->pairs);
        ns_json_put_num(&meta, h->pair_acc);
    }
    ns_buf_puts(&meta, "}");
    if (h->choice.algo[0]) {
        ns_buf_puts(&meta, ", \"planner\": {\"algo\": ");
        ns_json_put_str(&meta, h->choice.algo);
        ns_buf_printf(&meta, ", \"problems\": %d, \"budget\": %ld, \"training_plans\": ", h->choice.problems,
                      h->choice.budget);
        ns_json_put_str(&meta, h->choice.plans);
        ns_buf_printf(&meta, ", \"ff_supporter\": \"%s\", \"ties_first\": [%d, %ld], \"ties_last\": [%d, %ld]",
                      h->choice.last_supporter ? "last" : "first", h->choice.ties_solved[0], h->choice.ties_evaluated[0],
                      h->choice.ties_solved[1], h->choice.ties_evaluated[1]);
        ns_buf_printf(&meta, ", \"time_capped\": %d", h->choice.time_capped);
        ns_buf_puts(&meta, ", \"candidates\": [");
        for (int i = 0; i < h->choice.n; i++) {
            ns_buf_puts(&meta, i ? ", {\"algo\": " : "{\"algo\": ");
            ns_json_put_str(&meta, h->choice.cand[i]);
            ns_buf_printf(&meta, ", \"iterations\": %d, \"solved\": %d, \"evaluated\": %ld, \"work\": %ld}",
                          h->choice.iter[i], h->choice.solved[i], h->choice.evaluated[i], h->choice.work[i]);
        }
        ns_buf_puts(&meta, "]}");
    }
    ns_buf_puts(&meta, "}");
    ns_params p;
    ns_params_init(&p);
    int64_t n = h->dim + 1;
    ns_params_add(&p, "w", 1, &n, NS_INIT_ZEROS, 0);
    ns_status st = ns_params_alloc(&p, err);
    if (st == NS_OK) {
        memcpy(ns_params_at(&p, p.data, "w"), h->w, (size_t)n * sizeof(float));
        ns_ckpt_opts o = {false, 0, meta.data};
        st = ns_params_save(&p, path, &o, err);
    }
    ns_params_free(&p);
    ns_buf_free(&meta);
    return st;
}

bool ns_hwl_sniff(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char buf[4097];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *key = "\"format\": \"" HWL_FORMAT "\"";
    size_t kl = strlen(key);
    for (size_t i = 0; i + kl <= n; i++) /* the meta may follow NUL bytes of the header */
        if (!memcmp(buf + i, key, kl)) return true;
    return false;
}

ns_status ns_hwl_load(ns_hwl *h, const char *path, ns_error *err)
{
    memset(h, 0, sizeof *h);
    ns_params raw;
    ns_ckpt_info info;
    ns_status st = ns_params_read(&raw, path, &info, err);
    if (st != NS_OK) return st;
    ns_json j;
    memset(&j, 0, sizeof j);
    const char *fmt = NULL;
    int64_t ver = 0, dim = 0;
    if (ns_json_parse(&j, info.meta, strlen(info.meta), path, err) != NS_OK || j.kind != NS_JSON_OBJECT ||
        !ns_json_get_str(&j, "format", &fmt) || strcmp(fmt, HWL_FORMAT) || !ns_json_get_int(&j, "version", &ver) ||
        ver != HWL_VERSION || !ns_json_get_int(&j, "dim", &dim) || dim < 1 || dim > (1 << 24)) {
        st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "not a nextstate learned heuristic of version %d",
                          HWL_VERSION);
        goto out;
    }
    h->dim = (int)dim;
    if ((st = ns_encoder_spec_parse(&h->enc, ns_json_get(&j, "encoder"), path, err)) != NS_OK) goto out;
    if (h->enc.kind != NS_ENCODER_WL || ns_encoder_spec_dim(&h->enc) != h->dim) {
        st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "the heuristic has dimension %d but its WL encoder %d",
                          h->dim, ns_encoder_spec_dim(&h->enc));
        goto out;
    }
    const float *w = raw.n == 1 ? ns_params_at(&raw, raw.data, "w") : NULL;
    if (!w || ns_params_count(&raw) != (size_t)h->dim + 1) {
        st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "expected one tensor \"w\" of %d floats", h->dim + 1);
        goto out;
    }
    h->w = ns_xmalloc(((size_t)h->dim + 1) * sizeof(float));
    memcpy(h->w, w, ((size_t)h->dim + 1) * sizeof(float));
    const ns_json *num = ns_json_get(&j, "lambda");
    h->lambda = num && num->kind == NS_JSON_NUMBER ? num->number : NAN;
    const ns_json *tj = ns_json_get(&j, "train");
    int64_t v;
    if (tj && ns_json_get_int(tj, "rows", &v)) h->rows = (long)v;
    if (tj && ns_json_get_int(tj, "problems", &v)) h->problems = (int)v;
    num = tj ? ns_json_get(tj, "rmse") : NULL;
    h->rmse = num && num->kind == NS_JSON_NUMBER ? num->number : NAN;
    if (tj && ns_json_get_int(tj, "rank", &v) && v > 0 && v < (1 << 20)) {
        h->rank = (int)v;
        num = ns_json_get(tj, "rank_weight");
        h->rank_weight = num && num->kind == NS_JSON_NUMBER ? num->number : NAN;
        if (ns_json_get_int(tj, "pairs", &v)) h->pairs = (long)v;
        num = ns_json_get(tj, "pair_accuracy");
        h->pair_acc = num && num->kind == NS_JSON_NUMBER ? num->number : NAN;
    }
    const ns_json *pj = ns_json_get(&j, "planner");
    const char *name;
    if (pj && ns_json_get_str(pj, "algo", &name)) {
        if (strlen(name) >= sizeof h->choice.algo) {
            st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "the planner's algorithm name is too long");
            goto out;
        }
        strcpy(h->choice.algo, name);
        if (ns_json_get_int(pj, "problems", &v)) h->choice.problems = (int)v;
        if (ns_json_get_int(pj, "budget", &v)) h->choice.budget = (long)v;
        if (ns_json_get_int(pj, "time_capped", &v)) h->choice.time_capped = (int)v;
        if (ns_json_get_str(pj, "training_plans", &name) && strlen(name) < sizeof h->choice.plans)
            strcpy(h->choice.plans, name);
        if (ns_json_get_str(pj, "ff_supporter", &name)) { /* absent (older files): the first */
            if (strcmp(name, "first") && strcmp(name, "last")) {
                st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "unknown ff_supporter \"%s\" (first or last)", name);
                goto out;
            }
            h->choice.last_supporter = !strcmp(name, "last");
        }
        for (int k = 0; k < 2; k++) {
            const ns_json *tj = ns_json_get(pj, k ? "ties_last" : "ties_first");
            if (tj && tj->kind == NS_JSON_ARRAY && tj->n == 2 && tj->items[0].kind == NS_JSON_NUMBER &&
                tj->items[1].kind == NS_JSON_NUMBER) {
                h->choice.ties_solved[k] = (int)tj->items[0].number;
                h->choice.ties_evaluated[k] = (long)tj->items[1].number;
            }
        }
        const ns_json *cj = ns_json_get(pj, "candidates");
        for (int i = 0; cj && cj->kind == NS_JSON_ARRAY && i < (int)cj->n && h->choice.n < NS_HWL_MAX_CAND; i++) {
            const ns_json *x = &cj->items[i];
            if (!ns_json_get_str(x, "algo", &name) || strlen(name) >= sizeof h->choice.cand[0]) continue;
            int k = h->choice.n++;
            strcpy(h->choice.cand[k], name);
            if (ns_json_get_int(x, "iterations", &v)) h->choice.iter[k] = (int)v;
            if (ns_json_get_int(x, "solved", &v)) h->choice.solved[k] = (int)v;
            if (ns_json_get_int(x, "evaluated", &v)) h->choice.evaluated[k] = (long)v;
            if (ns_json_get_int(x, "work", &v)) h->choice.work[k] = (long)v; /* absent (older files): 0 */
        }
    }
out:
    if (st != NS_OK) ns_hwl_free(h);
    ns_json_free(&j);
    ns_params_free(&raw);
    ns_ckpt_info_free(&info);
    return st;
}

/* ---------------------------------------------------------------- evaluator */

typedef struct hwl_eval {
    const ns_hwl *h;
    ns_encoder enc;
    int *idx;         /* a sparse row of φ(s): only its nonzeros are read, */
    float *val, *phi; /* so an evaluation costs O(nnz), not O(dim) */
    ns_heuristic *ff; /* helpful actions (NULL: none) */
    long work;        /* the dot products' (the encoder and h^FF count their own) */
} hwl_eval;

void ns_hwl_choice_str(const ns_hwl *h, ns_buf *b)
{
    const ns_hwl_choice *c = &h->choice;
    ns_buf_printf(b,
                  "plans with --algo %s on %d WL iterations and h^FF's ties to the %s supporter, chosen on %d held-out "
                  "training problems (LAMA-first, solved and evaluations: first %d, %ld; last %d, %ld; then solved, "
                  "evaluations and millions of steps of work, within %ld evaluations each):",
                  c->algo, h->enc.wl.iterations, c->last_supporter ? "last" : "first", c->problems, c->ties_solved[0],
                  c->ties_evaluated[0], c->ties_solved[1], c->ties_evaluated[1], c->budget);
    for (int i = 0; i < c->n; i++)
        ns_buf_printf(b, "%s %s/wl%d %d, %ld, %.1f", i ? ";" : "", c->cand[i], c->iter[i], c->solved[i], c->evaluated[i],
                      (double)c->work[i] / 1e6);
    if (c->time_capped)
        ns_buf_printf(b, " (warning: the time limit, not the budget, stopped %d of these runs: the choice may differ "
                         "on another machine)", c->time_capped);
}

static int hwl_eval_fn(void *ctx, const ns_word *s, int *pref, int *npref)
{
    hwl_eval *x = ctx;
    if (pref) *npref = 0;
    if (x->ff) { /* h^FF's helpful actions; its dead ends (relaxed-unreachable goal) are dead */
        if (ns_heuristic_eval(x->ff, s) == NS_H_INF) return NS_H_INF;
        if (pref) *npref = ns_heuristic_preferred(x->ff, s, pref);
    }
    int nnz = ns_encoder_sparse(&x->enc, s, x->idx, x->val, x->phi);
    double v = x->h->w[x->h->dim];
    for (int k = 0; k < nnz; k++) v += (double)x->h->w[x->idx[k]] * x->val[k];
    x->work += 1 + nnz;
    /* not clamped at 0: on problems larger than the training ones w·φ + b
       goes below 0, and ties there made GBFS breadth-first (spanner) */
    v = v * HWL_SCALE + HWL_KEY_ZERO;
    return v <= 0 ? 0 : v >= (double)(NS_H_INF - 1) ? NS_H_INF - 1 : (int)lround(v);
}

/* The evaluations' work: the WL encodings', the dot products' and h^FF's
 * (ns_evaluator's work). */
static long hwl_eval_work(const void *ctx)
{
    const hwl_eval *x = ctx;
    return x->work + (x->enc.spec->kind == NS_ENCODER_WL ? x->enc.wl.work : 0) + (x->ff ? ns_heuristic_work(x->ff) : 0);
}

static size_t hwl_eval_bytes(const void *ctx)
{
    const hwl_eval *x = ctx;
    size_t row = (size_t)ns_encoder_max_nnz(&x->enc) * (sizeof(int) + sizeof(float));
    return (size_t)x->h->dim * sizeof(float) + row + (x->ff ? ns_heuristic_bytes(x->ff) : 0);
}

static void hwl_eval_free(void *ctx)
{
    hwl_eval *x = ctx;
    ns_encoder_free(&x->enc);
    free(x->idx);
    free(x->val);
    free(x->phi);
    if (x->ff) ns_heuristic_free(x->ff);
    free(x);
}

ns_status ns_hwl_evaluator(ns_evaluator *e, const ns_hwl *h, const ns_task *t, bool helpful, ns_error *err)
{
    memset(e, 0, sizeof *e);
    hwl_eval *x = ns_xcalloc(1, sizeof *x);
    x->h = h;
    ns_status st = ns_encoder_init(&x->enc, &h->enc, t, err);
    if (st != NS_OK) {
        free(x);
        return st;
    }
    size_t nnz = (size_t)ns_encoder_max_nnz(&x->enc) + 1;
    x->idx = ns_xcalloc(nnz, sizeof(int));
    x->val = ns_xcalloc(nnz, sizeof(float));
    x->phi = ns_xcalloc((size_t)h->dim + 1, sizeof(float));
    x->ff = helpful ? ns_heuristic_new(t, NS_H_FF) : NULL;
    if (x->ff) ns_heuristic_set_last_supporter(x->ff, h->choice.last_supporter);
    e->ctx = x;
    e->eval = hwl_eval_fn;
    e->bytes = hwl_eval_bytes;
    e->free = hwl_eval_free;
    e->work = hwl_eval_work;
    e->unit = (int)HWL_SCALE;
    return NS_OK;
}
