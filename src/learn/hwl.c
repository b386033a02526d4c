/* hwl.c — the learned WL heuristic: ridge regression of h* on WL features,
 * its model file, and its evaluator for search (hwl.h). */
#include "nextstate/learn/hwl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/learn/params.h"
#include "nextstate/util/json.h"

#define HWL_FORMAT "nextstate-hwl"
#define HWL_VERSION 1
#define HWL_SCALE 1000.0 /* evaluator keys: thousandths of a step */

void ns_hwl_config_init(ns_hwl_config *c)
{
    c->iterations = 2;
    c->statics = true;
    c->lambda = 1.0;
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

/* Solves A x = b in place (A symmetric positive definite, lower triangle
 * used) by Cholesky; false when A is not positive definite. */
static bool cholesky_solve(double *a, double *b, int n)
{
    for (int j = 0; j < n; j++) {
        double *rj = a + (size_t)j * (size_t)n;
        double d = rj[j];
        for (int k = 0; k < j; k++) d -= rj[k] * rj[k];
        if (!(d > 0)) return false;
        rj[j] = sqrt(d);
        for (int i = j + 1; i < n; i++) {
            double *ri = a + (size_t)i * (size_t)n;
            double v = ri[j];
            for (int k = 0; k < j; k++) v -= ri[k] * rj[k];
            ri[j] = v / rj[j];
        }
    }
    for (int i = 0; i < n; i++) { /* L y = b */
        const double *ri = a + (size_t)i * (size_t)n;
        double v = b[i];
        for (int k = 0; k < i; k++) v -= ri[k] * b[k];
        b[i] = v / ri[i];
    }
    for (int i = n - 1; i >= 0; i--) { /* Lᵀ x = y */
        double v = b[i];
        for (int k = i + 1; k < n; k++) v -= a[(size_t)k * (size_t)n + (size_t)i] * b[k];
        b[i] = v / a[(size_t)i * (size_t)n + (size_t)i];
    }
    return true;
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

static double sparse_dot(const sparse_rows *r, long a, long b)
{
    double v = 0;
    long i = r->ptr[a], j = r->ptr[b];
    while (i < r->ptr[a + 1] && j < r->ptr[b + 1]) {
        if (r->idx[i] < r->idx[j]) i++;
        else if (r->idx[i] > r->idx[j]) j++;
        else v += (double)r->val[i++] * r->val[j++];
    }
    return v;
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
    for (long i = 0; i < N; i++)
        for (long j = 0; j <= i; j++) k[(size_t)i * (size_t)N + (size_t)j] = sparse_dot(r, i, j);
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

/* Ridge regression in the primal: the normal equations of [φ, 1], (D+1)²
 * memory.  w has room for dim + 1. */
static ns_status solve_primal(const ns_hwl *h, const ns_trajset *train, double lambda, float *w, long *rows,
                              ns_error *err)
{
    normal_eq q = {h->dim + 1, NULL, NULL, NULL, 0};
    q.a = ns_xcalloc((size_t)q.n * (size_t)q.n, sizeof(double));
    q.b = ns_xcalloc((size_t)q.n, sizeof(double));
    q.nz = ns_xcalloc((size_t)q.n, sizeof(int));
    float *phi = ns_xcalloc((size_t)h->dim + 1, sizeof(float));
    ns_status st = each_state(&h->enc, train, phi, accumulate, &q, err);
    if (st == NS_OK) {
        /* λ on the weights; a tiny ridge on the bias keeps A definite when
           λ = 0 and a feature is constant */
        for (int j = 0; j < q.n; j++) q.a[(size_t)j * (size_t)q.n + (size_t)j] += j < h->dim ? lambda : 1e-9;
        if (!cholesky_solve(q.a, q.b, q.n))
            st = ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                              "the normal equations are singular (give the ridge penalty a positive value)");
    }
    if (st == NS_OK)
        for (int j = 0; j < q.n; j++) w[j] = (float)q.b[j];
    *rows = q.rows;
    free(phi);
    free(q.a);
    free(q.b);
    free(q.nz);
    return st;
}

/* The largest system solved exactly: min(D + 1, N)² doubles. */
#define HWL_MAX_SYSTEM 16384

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
    bool dual = c->lambda > 0 && N < (long)h->dim + 1;
    long n = dual ? N : (long)h->dim + 1;
    if (n > HWL_MAX_SYSTEM) {
        st = ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                          "%ld training states and %d WL features: a ridge system of %ld unknowns is more than %d "
                          "(fewer training problems or WL iterations)",
                          N, h->dim, n, HWL_MAX_SYSTEM);
        ns_hwl_free(h);
        return st;
    }
    h->w = ns_xcalloc((size_t)h->dim + 1, sizeof(float));
    if (dual) {
        sparse_rows r = {0};
        r.dim = h->dim;
        float *phi = ns_xcalloc((size_t)h->dim + 1, sizeof(float));
        st = each_state(&h->enc, train, phi, keep_row, &r, err);
        if (st == NS_OK && !solve_dual(&r, c->lambda, h->w))
            st = ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "the ridge system is singular");
        h->rows = r.n;
        free(phi);
        free(r.ptr);
        free(r.idx);
        free(r.val);
        free(r.y);
    } else {
        st = solve_primal(h, train, c->lambda, h->w, &h->rows, err);
    }
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
    ns_buf_puts(&meta, "}}");
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
} hwl_eval;

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
    v *= HWL_SCALE;
    return v <= 0 ? 0 : v >= (double)(NS_H_INF - 1) ? NS_H_INF - 1 : (int)lround(v);
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
    e->ctx = x;
    e->eval = hwl_eval_fn;
    e->bytes = hwl_eval_bytes;
    e->free = hwl_eval_free;
    e->unit = (int)HWL_SCALE;
    return NS_OK;
}
