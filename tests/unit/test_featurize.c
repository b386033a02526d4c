/* test_featurize.c — text and literal featurizers:
 * - agreement with scikit-learn's TfidfVectorizer / CountVectorizer
 *   (tests/fixtures/featurize, made by dev/featurize_reference.py): same
 *   terms in the same column order, idf and every row value within 1e-6;
 * - the vocabulary comes from training documents only;
 * - determinism, save/load round trips, clear errors on truncated or
 *   altered featurizer files;
 * - random vectors depend on the text alone;
 * - truncated SVD: singular values and reconstruction error against an
 *   exact eigendecomposition (cyclic Jacobi, written here), orthonormal
 *   basis, rank-deficient and full-width cases, sparse and dense paths;
 * - literals, one-hot, and documents drawn from a dataset and a split. */
#include <unistd.h>
#include "nextstate/encode/featurize.h"
#include "nextstate/core/gen.h"
#include "nextstate/util/json.h"
#include "nextstate/data/split.h"
#include "test.h"

#define FIX "tests/fixtures/featurize/"
static char tmpdir[256];

/* ---- helpers -------------------------------------------------------------------- */

typedef struct strlist {
    const char **s;
    int64_t n;
} strlist;

static strlist json_strings(const ns_json *a)
{
    strlist l = {calloc((size_t)a->n + 1, sizeof(char *)), a->n};
    for (int i = 0; i < a->n; i++) l.s[i] = a->items[i].string;
    return l;
}

/* Fits on texts with opts; CHECKs success. */
static bool fit(ns_featurizer *f, const ns_feat_opts *o, const char *const *texts, int64_t n)
{
    ns_feat_docs d;
    ns_feat_docs_strings(&d, texts, n);
    ns_error e;
    ns_status st = ns_featurizer_fit(f, o, &d, &e);
    if (st) printf("  fit: %s\n", e.msg);
    CHECK(st == NS_OK);
    return st == NS_OK;
}

static void sparse_rows(const ns_featurizer *f, const char *const *texts, int64_t n, ns_csr *out)
{
    ns_feat_docs d;
    ns_feat_docs_strings(&d, texts, n);
    ns_error e;
    ns_csr_init(out, ns_featurizer_nsparse(f));
    CHECK(ns_featurizer_transform_sparse(f, &d, out, &e) == NS_OK);
}

/* Max |difference| between rows of m and reference rows [[col, value], …];
 * a structural difference (other columns) counts as infinity. */
static double compare_rows(const ns_csr *m, const ns_json *rows)
{
    if (!rows || rows->kind != NS_JSON_ARRAY || rows->n != m->nrows) return INFINITY;
    double maxd = 0;
    for (int i = 0; i < rows->n; i++) {
        const ns_json *r = &rows->items[i];
        if (r->n != m->indptr[i + 1] - m->indptr[i]) {
            printf("  row %d: %d reference entries, %lld here\n", i, r->n, (long long)(m->indptr[i + 1] - m->indptr[i]));
            return INFINITY;
        }
        for (int k = 0; k < r->n; k++) {
            int64_t p = m->indptr[i] + k;
            if (r->items[k].items[0].integer != m->indices[p]) return INFINITY;
            double d = fabs(r->items[k].items[1].number - m->values[p]);
            if (d > maxd) maxd = d;
        }
    }
    return maxd;
}

/* Checks one scikit-learn configuration of a fixture. */
static void check_config(const ns_json *fx, const char *name)
{
    const ns_json *cfg = ns_json_get(ns_json_get(fx, "configs"), name);
    CHECK(cfg != NULL);
    if (!cfg) return;
    const ns_json *params = ns_json_get(cfg, "params");
    int64_t min_df = 1;
    ns_json_get_int(params, "min_df", &min_df);
    ns_feat_kind kind = !strncmp(name, "tfidf", 5) ? NS_FEAT_TFIDF : !strncmp(name, "char", 4) ? NS_FEAT_CHAR : NS_FEAT_BOW;
    ns_feat_opts o;
    ns_feat_opts_init(&o, kind, false);
    o.min_df = (int)min_df;
    o.svd_dim = 0;
    strlist train = json_strings(ns_json_get(fx, "train")), test = json_strings(ns_json_get(fx, "test"));
    ns_featurizer f;
    if (fit(&f, &o, train.s, train.n)) {
        const ns_json *terms = ns_json_get(cfg, "terms");
        CHECK_EQ_INT(f.nterms, terms->n);
        int term_bad = 0;
        for (int j = 0; j < terms->n && j < f.nterms; j++)
            if (terms->items[j].string_len != (size_t)f.term_len[j] ||
                memcmp(terms->items[j].string, f.arena + f.term_off[j], (size_t)f.term_len[j]))
                term_bad++;
        CHECK_EQ_INT(term_bad, 0);
        double idf_d = 0;
        const ns_json *idf = ns_json_get(cfg, "idf");
        if (idf && idf->kind == NS_JSON_ARRAY) {
            CHECK(f.idf != NULL);
            for (int j = 0; j < idf->n && f.idf && j < f.nterms; j++) idf_d = fmax(idf_d, fabs(idf->items[j].number - f.idf[j]));
        }
        ns_csr a, b;
        sparse_rows(&f, train.s, train.n, &a);
        sparse_rows(&f, test.s, test.n, &b);
        const ns_json *tr = ns_json_get(cfg, "train");
        double dtr = tr && tr->kind == NS_JSON_ARRAY ? compare_rows(&a, tr) : 0, dte = compare_rows(&b, ns_json_get(cfg, "test"));
        printf("  %-10s %4lld terms: max |diff| idf %.2e, train rows %.2e, test rows %.2e\n", name, (long long)f.nterms, idf_d,
               dtr, dte);
        CHECK(idf_d <= 1e-6);
        CHECK(dtr <= 1e-6);
        CHECK(dte <= 1e-6);
        ns_csr_free(&a);
        ns_csr_free(&b);
        ns_featurizer_free(&f);
    }
    free(train.s);
    free(test.s);
}

/* ---- scikit-learn agreement ---------------------------------------------------------- */

static void test_sklearn_basic(void)
{
    ns_json fx;
    ns_error e;
    CHECK(ns_json_read(&fx, FIX "basic.json", &e) == NS_OK);
    const char *names[] = {"tfidf_df1", "tfidf_df2", "char_df1", "char_df2", "bow"};
    for (int i = 0; i < 5; i++) check_config(&fx, names[i]);
    ns_json_free(&fx);
}

static void test_sklearn_ferry(void)
{
    ns_json fx;
    ns_error e;
    CHECK(ns_json_read(&fx, FIX "ferry.json", &e) == NS_OK);
    check_config(&fx, "tfidf_df2");
    ns_json_free(&fx);
}

/* ---- vocabulary from training data only ------------------------------------------------ */

static void test_train_only_vocabulary(void)
{
    const char *train[] = {"car c0 is at l0", "car c1 is at l1", "the ferry is at l0"};
    const char *test[] = {"zebra zebra zebra", "car zebra"};
    for (int kind = 0; kind < 3; kind++) {
        ns_feat_opts o;
        ns_feat_opts_init(&o, kind == 0 ? NS_FEAT_BOW : kind == 1 ? NS_FEAT_TFIDF : NS_FEAT_CHAR, false);
        o.min_df = 1;
        ns_featurizer f;
        if (!fit(&f, &o, train, 3)) continue;
        CHECK(ns_featurizer_find(&f, "zebra", 5) < 0);
        CHECK(ns_featurizer_find(&f, "zeb", 3) < 0);
        if (kind < 2) CHECK(ns_featurizer_find(&f, "car", 3) >= 0);
        ns_csr m;
        sparse_rows(&f, test, 2, &m);
        CHECK_EQ_INT(m.indptr[1], 0); /* nothing of a test-only text survives */
        if (kind < 2) {
            CHECK_EQ_INT(m.indptr[2] - m.indptr[1], 1); /* "car" only */
            CHECK_EQ_INT(m.indices[m.indptr[1]], ns_featurizer_find(&f, "car", 3));
        }
        ns_csr_free(&m);
        ns_featurizer_free(&f);
    }
    /* min_df 2 drops terms in one document; nothing left is an error */
    ns_feat_opts o;
    ns_feat_opts_init(&o, NS_FEAT_TFIDF, false);
    ns_featurizer f;
    if (fit(&f, &o, train, 3)) {
        CHECK(ns_featurizer_find(&f, "c0", 2) < 0);
        CHECK(ns_featurizer_find(&f, "is at", 5) >= 0);
        ns_featurizer_free(&f);
    }
    const char *lonely[] = {"alpha", "beta"};
    ns_feat_docs d;
    ns_feat_docs_strings(&d, lonely, 2);
    ns_error e;
    CHECK(ns_featurizer_fit(&f, &o, &d, &e) == NS_ERR_INPUT);
    CHECK(strstr(e.msg, "empty vocabulary") != NULL);
}

/* ---- literals and one-hot ---------------------------------------------------------------- */

static void test_literals(void)
{
    const char *train[] = {"(at c0 l0) (on c1) (at c0 l0)", "(at-ferry l1)  (empty-ferry)", "(board c1 l1)", "plain words"};
    ns_feat_opts o;
    ns_feat_opts_init(&o, NS_FEAT_LITERALS, false);
    CHECK(o.source == NS_FEAT_SRC_LITERALS && o.binary);
    ns_featurizer f;
    if (!fit(&f, &o, train, 4)) return;
    CHECK_EQ_INT(f.nterms, 7);
    const char *order[] = {"(at c0 l0)", "(at-ferry l1)", "(board c1 l1)", "(empty-ferry)", "(on c1)", "plain", "words"};
    for (int j = 0; j < 7; j++) CHECK_EQ_INT(ns_featurizer_find(&f, order[j], strlen(order[j])), j);
    const char *test[] = {"(on c1) (at c0 l0) (at c0 l0)", "(board c1 l1)", "(at c9 l9)"};
    ns_csr m;
    sparse_rows(&f, test, 3, &m);
    CHECK_EQ_INT(m.indptr[1], 2);
    CHECK(m.indices[0] == 0 && m.values[0] == 1.0f && m.indices[1] == 4 && m.values[1] == 1.0f);
    CHECK_EQ_INT(m.indptr[2] - m.indptr[1], 1); /* an action is one token */
    CHECK_EQ_INT(m.indices[m.indptr[1]], 2);
    CHECK_EQ_INT(m.indptr[3] - m.indptr[2], 0);
    ns_csr_free(&m);
    ns_featurizer_free(&f);
}

static void test_onehot(void)
{
    const char *train[] = {"(at c0 l0) (on c1)", "(at c0 l1)", "(at c0 l0) (on c1)"};
    const char *test[] = {"(at c0 l1)", "(at c5 l5)", "(at c0 l0) (on c1)"};
    for (int unk = 0; unk < 2; unk++) {
        ns_feat_opts o;
        ns_feat_opts_init(&o, NS_FEAT_ONEHOT, false);
        o.onehot_unknown = unk;
        ns_featurizer f;
        if (!fit(&f, &o, train, 3)) continue;
        CHECK_EQ_INT(f.nterms, 2);
        CHECK_EQ_INT(ns_featurizer_nsparse(&f), 2 + unk);
        CHECK_EQ_INT(ns_featurizer_dim(&f), 2 + unk);
        ns_csr m;
        sparse_rows(&f, test, 3, &m);
        CHECK_EQ_INT(m.indptr[1], 1);
        CHECK_EQ_INT(m.indices[0], 1);
        CHECK_EQ_INT(m.indptr[2] - m.indptr[1], unk); /* unseen: zero row or the reserved column */
        if (unk) CHECK_EQ_INT(m.indices[1], 2);
        CHECK_EQ_INT(m.indices[m.indptr[2]], 0);
        float dense[9];
        ns_feat_docs d;
        ns_feat_docs_strings(&d, test, 3);
        ns_error e;
        CHECK(ns_featurizer_transform_dense(&f, &d, dense, &e) == NS_OK);
        CHECK(dense[1] == 1.0f && dense[0] == 0.0f);
        ns_csr_free(&m);
        ns_featurizer_free(&f);
    }
}

/* ---- random vectors ------------------------------------------------------------------------ */

static void test_random_stable(void)
{
    ns_feat_opts o;
    ns_feat_opts_init(&o, NS_FEAT_RANDOM, false);
    o.seed = 42;
    ns_featurizer f, g, h;
    const char *a[] = {"state one", "state two", "state three"};
    const char *b[] = {"state three", "something else", "state one"};
    CHECK(fit(&f, &o, a, 3));
    CHECK(fit(&g, &o, NULL, 0));
    o.seed = 43;
    CHECK(fit(&h, &o, NULL, 0));
    CHECK_EQ_INT(ns_featurizer_dim(&f), 512);
    CHECK(!ns_featurizer_sparse(&f));
    float *x = malloc(3 * 512 * sizeof(float)), *y = malloc(3 * 512 * sizeof(float)), *z = malloc(3 * 512 * sizeof(float));
    ns_feat_docs da, db;
    ns_feat_docs_strings(&da, a, 3);
    ns_feat_docs_strings(&db, b, 3);
    ns_error e;
    CHECK(ns_featurizer_transform_dense(&f, &da, x, &e) == NS_OK);
    CHECK(ns_featurizer_transform_dense(&g, &db, y, &e) == NS_OK);
    CHECK(ns_featurizer_transform_dense(&h, &da, z, &e) == NS_OK);
    CHECK(memcmp(x, y + 2 * 512, 512 * sizeof(float)) == 0);     /* "state one" */
    CHECK(memcmp(x + 2 * 512, y, 512 * sizeof(float)) == 0);     /* "state three" */
    CHECK(memcmp(x, x + 512, 512 * sizeof(float)) != 0);         /* other texts differ */
    CHECK(memcmp(x, z, 512 * sizeof(float)) != 0);               /* other seed differs */
    ns_csr m;
    ns_csr_init(&m, 1);
    CHECK(ns_featurizer_transform_sparse(&f, &da, &m, &e) == NS_ERR_USAGE);
    ns_csr_free(&m);
    /* N(0, 1) entries */
    enum { N = 200 };
    char **texts = malloc(N * sizeof(char *));
    for (int i = 0; i < N; i++) {
        texts[i] = malloc(32);
        snprintf(texts[i], 32, "text %d", i);
    }
    float *big = malloc((size_t)N * 512 * sizeof(float));
    ns_feat_docs dn;
    ns_feat_docs_strings(&dn, (const char *const *)texts, N);
    CHECK(ns_featurizer_transform_dense(&f, &dn, big, &e) == NS_OK);
    double s = 0, s2 = 0;
    for (int i = 0; i < N * 512; i++) {
        s += big[i];
        s2 += (double)big[i] * big[i];
    }
    double mean = s / (N * 512), var = s2 / (N * 512) - mean * mean;
    printf("  mean %.4f, variance %.4f over %d entries\n", mean, var, N * 512);
    CHECK(fabs(mean) < 0.01 && fabs(var - 1) < 0.02);
    for (int i = 0; i < N; i++) free(texts[i]);
    free(texts);
    free(big);
    free(x);
    free(y);
    free(z);
    ns_featurizer_free(&f);
    ns_featurizer_free(&g);
    ns_featurizer_free(&h);
}

/* ---- exact reference: cyclic Jacobi on a symmetric matrix --------------------------------- */

/* Eigenvalues of symmetric A [n × n] (destroyed) into w[n], descending;
 * eigenvectors as columns of Vec [n × n]. */
static void jacobi_eig(double *A, int n, double *w, double *Vec)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) Vec[i * n + j] = i == j;
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) off += A[p * n + q] * A[p * n + q];
        if (off < 1e-26) break;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                double apq = A[p * n + q];
                if (fabs(apq) < 1e-300) continue;
                double theta = (A[q * n + q] - A[p * n + p]) / (2 * apq);
                double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < n; k++) {
                    double akp = A[k * n + p], akq = A[k * n + q];
                    A[k * n + p] = c * akp - s * akq;
                    A[k * n + q] = s * akp + c * akq;
                }
                for (int k = 0; k < n; k++) {
                    double apk = A[p * n + k], aqk = A[q * n + k];
                    A[p * n + k] = c * apk - s * aqk;
                    A[q * n + k] = s * apk + c * aqk;
                }
                for (int k = 0; k < n; k++) {
                    double vkp = Vec[k * n + p], vkq = Vec[k * n + q];
                    Vec[k * n + p] = c * vkp - s * vkq;
                    Vec[k * n + q] = s * vkp + c * vkq;
                }
            }
    }
    for (int i = 0; i < n; i++) w[i] = A[i * n + i];
    for (int i = 0; i < n; i++) { /* sort descending */
        int k = i;
        for (int j = i + 1; j < n; j++)
            if (w[j] > w[k]) k = j;
        double t = w[i];
        w[i] = w[k];
        w[k] = t;
        for (int r = 0; r < n; r++) {
            t = Vec[r * n + i];
            Vec[r * n + i] = Vec[r * n + k];
            Vec[r * n + k] = t;
        }
    }
}

typedef struct svd_report {
    double sv_rel, sv_abs, resid_ratio, ortho;
} svd_report;

/* Runs ns_truncated_svd on X and compares with the exact spectrum: the
 * largest relative singular-value error over the first `ncheck` values,
 * the residual ‖X − X C Cᵀ‖² over the optimal one, and max |CᵀC − I|. */
static svd_report check_svd(const ns_csr *X, int k, int iters, int ncheck, uint64_t seed)
{
    int V = (int)X->ncols, n = (int)X->nrows;
    double *Xd = calloc((size_t)n * V, sizeof(double)), *G = calloc((size_t)V * V, sizeof(double));
    double *w = malloc((size_t)V * sizeof(double)), *Vec = malloc((size_t)V * V * sizeof(double));
    float *row = malloc((size_t)V * sizeof(float));
    for (int i = 0; i < n; i++) {
        ns_csr_row_dense(X, i, row);
        for (int j = 0; j < V; j++) Xd[(size_t)i * V + j] = row[j];
    }
    for (int i = 0; i < n; i++)
        for (int a = 0; a < V; a++) {
            double xa = Xd[(size_t)i * V + a];
            if (xa == 0) continue;
            for (int b = 0; b < V; b++) G[(size_t)a * V + b] += xa * Xd[(size_t)i * V + b];
        }
    jacobi_eig(G, V, w, Vec);
    float *C = malloc((size_t)V * k * sizeof(float)), *sv = malloc((size_t)k * sizeof(float));
    ns_truncated_svd(X, k, 10, iters, seed, C, sv);
    svd_report r = {0, 0, 0, 0};
    /* relative error on the singular values of at least 5% of σ₁, absolute
     * error (in units of σ₁) on all: small ones carry float rounding of
     * order σ₁·sqrt(ε_float) when they come from a float XᵀX (the exact
     * path, taken when k + oversample ≥ 3/4 of the columns) */
    double s1 = sqrt(w[0] > 0 ? w[0] : 0);
    for (int j = 0; j < ncheck; j++) {
        double exact = sqrt(w[j] > 0 ? w[j] : 0);
        if (exact >= 0.05 * s1) r.sv_rel = fmax(r.sv_rel, fabs(sv[j] - exact) / exact);
        r.sv_abs = fmax(r.sv_abs, fabs(sv[j] - exact) / s1);
    }
    double opt = 0, total = 0;
    for (int j = 0; j < V; j++) total += w[j] > 0 ? w[j] : 0;
    for (int j = k; j < V; j++) opt += w[j] > 0 ? w[j] : 0;
    /* residual: ‖X‖² − ‖X C‖² holds for orthonormal C; compute directly */
    double resid = 0;
    double *xc = malloc((size_t)k * sizeof(double));
    for (int i = 0; i < n; i++) {
        const double *x = Xd + (size_t)i * V;
        for (int c = 0; c < k; c++) {
            double s = 0;
            for (int j = 0; j < V; j++) s += x[j] * C[(size_t)j * k + c];
            xc[c] = s;
        }
        for (int j = 0; j < V; j++) {
            double s = 0;
            for (int c = 0; c < k; c++) s += xc[c] * C[(size_t)j * k + c];
            double d = x[j] - s;
            resid += d * d;
        }
    }
    /* over the optimum plus a floor of float rounding on ‖X‖² (the optimum
     * may be 0) */
    r.resid_ratio = resid / (opt + 1e-7 * total);
    for (int a = 0; a < k; a++)
        for (int b = 0; b < k; b++) {
            double s = 0;
            for (int j = 0; j < V; j++) s += (double)C[(size_t)j * k + a] * C[(size_t)j * k + b];
            r.ortho = fmax(r.ortho, fabs(s - (a == b)));
        }
    printf("  %dx%d k=%d: singular values rel. err %.2e (abs. %.2e σ1), residual %.6g vs optimal %.6g (ratio %.6f), "
           "|CtC-I| %.2e\n", n, V, k, r.sv_rel, r.sv_abs, resid, opt, r.resid_ratio, r.ortho);
    free(xc);
    free(Xd);
    free(G);
    free(w);
    free(Vec);
    free(row);
    free(C);
    free(sv);
    return r;
}

/* A sparse random matrix with decaying column scales (a spectrum that decays). */
static void random_matrix(ns_csr *X, int n, int V, double density, uint64_t seed)
{
    ns_rng r;
    ns_rng_seed(&r, seed);
    ns_csr_init(X, V);
    int32_t *c = malloc((size_t)V * sizeof *c);
    float *v = malloc((size_t)V * sizeof *v);
    for (int i = 0; i < n; i++) {
        int m = 0;
        for (int j = 0; j < V; j++)
            if (ns_rng_double(&r) < density) {
                c[m] = j;
                v[m++] = (float)((ns_rng_double(&r) - 0.3) * exp(-j / 40.0));
            }
        ns_csr_add_row(X, c, v, m);
    }
    free(c);
    free(v);
}

static void tfidf_rows_ferry(ns_csr *X, ns_featurizer *f, ns_json *fx)
{
    ns_error e;
    CHECK(ns_json_read(fx, FIX "ferry.json", &e) == NS_OK);
    strlist train = json_strings(ns_json_get(fx, "train"));
    ns_feat_opts o;
    ns_feat_opts_init(&o, NS_FEAT_TFIDF, false);
    o.svd_dim = 0;
    fit(f, &o, train.s, train.n);
    sparse_rows(f, train.s, train.n, X);
    free(train.s);
}

static void test_svd_exact(void)
{
    ns_json fx;
    ns_featurizer f;
    ns_csr X;
    tfidf_rows_ferry(&X, &f, &fx);
    const ns_json *svd = ns_json_get(&fx, "svd");
    /* the fixture's corpus: k = 8 as in dev/featurize_reference.py */
    svd_report r = check_svd(&X, 8, 5, 8, 1);
    CHECK(r.sv_rel < 1e-4 && r.sv_abs < 1e-3 && r.resid_ratio < 1.0001 && r.ortho < 1e-5);
    /* rank deficient (rank 28 < k = 60): the basis stays orthonormal */
    r = check_svd(&X, 60, 5, 28, 2);
    CHECK(r.sv_rel < 1e-3 && r.sv_abs < 1e-3 && r.resid_ratio < 1.0001 && r.ortho < 1e-5);
    /* k + oversample >= columns: the whole space */
    r = check_svd(&X, 90, 2, 28, 3);
    CHECK(r.sv_rel < 1e-3 && r.sv_abs < 1e-3 && r.resid_ratio < 1.0001 && r.ortho < 1e-5);
    /* numpy's exact singular values and scikit-learn's explained variance */
    ns_feat_opts o;
    ns_feat_opts_init(&o, NS_FEAT_TFIDF, false);
    o.svd_dim = 8;
    strlist train = json_strings(ns_json_get(&fx, "train"));
    ns_featurizer g;
    if (fit(&g, &o, train.s, train.n)) {
        CHECK_EQ_INT(g.svd_dim, 8);
        CHECK(!ns_featurizer_sparse(&g));
        const ns_json *ex = ns_json_get(svd, "exact_singular_values"), *evr = ns_json_get(svd, "sklearn_explained_variance_ratio");
        double dsv = 0, devr = 0;
        for (int j = 0; j < 8; j++) {
            dsv = fmax(dsv, fabs(g.singular_values[j] - ex->items[j].number) / ex->items[j].number);
            devr = fmax(devr, fabs(g.explained_variance_ratio[j] - evr->items[j].number));
        }
        printf("  vs numpy: singular values rel. err %.2e; vs scikit-learn: explained variance ratio max diff %.2e\n", dsv, devr);
        CHECK(dsv < 1e-4);
        CHECK(devr < 1e-4);
        ns_featurizer_free(&g);
    }
    free(train.s);
    ns_csr_free(&X);
    ns_featurizer_free(&f);
    ns_json_free(&fx);
}

static void test_svd_random_matrices(void)
{
    ns_csr X;
    random_matrix(&X, 600, 250, 0.05, 11); /* sparse products */
    svd_report r = check_svd(&X, 30, 5, 30, 5);
    CHECK(r.sv_rel < 2e-3 && r.sv_abs < 1e-3 && r.resid_ratio < 1.001 && r.ortho < 1e-5);
    ns_csr_free(&X);
    random_matrix(&X, 300, 200, 0.4, 12); /* dense chunks through ns_sgemm */
    r = check_svd(&X, 20, 5, 20, 6);
    CHECK(r.sv_rel < 2e-3 && r.sv_abs < 1e-3 && r.resid_ratio < 1.001 && r.ortho < 1e-5);
    ns_csr_free(&X);
    /* rank 25 < k = 40 on the randomized path (l = 50 < 3/4 of 300 columns):
     * dependent directions are replaced and the basis stays orthonormal */
    random_matrix(&X, 25, 300, 0.3, 13);
    r = check_svd(&X, 40, 5, 25, 7);
    CHECK(r.sv_rel < 1e-3 && r.sv_abs < 1e-3 && r.resid_ratio < 1.0001 && r.ortho < 1e-5);
    ns_csr_free(&X);
}

/* ---- determinism, files ------------------------------------------------------------------------ */

static bool same_output(const ns_featurizer *a, const ns_featurizer *b, const char *const *texts, int64_t n)
{
    int64_t dim = ns_featurizer_dim(a);
    if (dim != ns_featurizer_dim(b)) return false;
    float *x = calloc((size_t)(n * dim), sizeof(float)), *y = calloc((size_t)(n * dim), sizeof(float));
    ns_feat_docs d;
    ns_feat_docs_strings(&d, texts, n);
    ns_error e;
    bool ok = ns_featurizer_transform_dense(a, &d, x, &e) == NS_OK && ns_featurizer_transform_dense(b, &d, y, &e) == NS_OK &&
              memcmp(x, y, (size_t)(n * dim) * sizeof(float)) == 0;
    free(x);
    free(y);
    return ok;
}

static void test_determinism_and_files(void)
{
    ns_json fx;
    ns_error e;
    CHECK(ns_json_read(&fx, FIX "ferry.json", &e) == NS_OK);
    strlist train = json_strings(ns_json_get(&fx, "train")), test = json_strings(ns_json_get(&fx, "test"));
    ns_feat_kind kinds[] = {NS_FEAT_TFIDF, NS_FEAT_CHAR, NS_FEAT_BOW, NS_FEAT_LITERALS, NS_FEAT_ONEHOT, NS_FEAT_RANDOM};
    for (int ki = 0; ki < 6; ki++) {
        ns_feat_opts o;
        ns_feat_opts_init(&o, kinds[ki], false);
        if (kinds[ki] == NS_FEAT_TFIDF || kinds[ki] == NS_FEAT_CHAR) o.svd_dim = 8;
        o.onehot_unknown = true;
        o.seed = 99;
        ns_featurizer a, b, c;
        if (!fit(&a, &o, train.s, train.n) || !fit(&b, &o, train.s, train.n)) continue;
        CHECK(same_output(&a, &b, test.s, test.n));
        if (a.svd_dim) CHECK(memcmp(a.components, b.components, (size_t)(a.svd_dim * ns_featurizer_nsparse(&a)) * 4) == 0);
        char path[400];
        snprintf(path, sizeof path, "%s/f_%s.json", tmpdir, ns_feat_kind_name(kinds[ki]));
        CHECK(ns_featurizer_save(&a, path, &e) == NS_OK);
        ns_status st = ns_featurizer_load(&c, path, &e);
        if (st) printf("  load %s: %s\n", path, e.msg);
        CHECK(st == NS_OK);
        if (!st) {
            CHECK(c.opts.kind == a.opts.kind && c.opts.source == a.opts.source && c.opts.seed == 99);
            CHECK_EQ_INT(c.nterms, a.nterms);
            CHECK_EQ_INT(c.svd_dim, a.svd_dim);
            CHECK(same_output(&a, &c, test.s, test.n));
            CHECK(same_output(&a, &c, train.s, train.n));
            ns_featurizer_free(&c);
        }
        ns_featurizer_free(&a);
        ns_featurizer_free(&b);
    }
    free(train.s);
    free(test.s);
    ns_json_free(&fx);
}

static void rewrite(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fwrite(data, 1, len, f);
    fclose(f);
}

static void test_damaged_files(void)
{
    ns_json fx;
    ns_error e;
    CHECK(ns_json_read(&fx, FIX "ferry.json", &e) == NS_OK);
    strlist train = json_strings(ns_json_get(&fx, "train"));
    ns_feat_opts o;
    ns_feat_opts_init(&o, NS_FEAT_TFIDF, false);
    o.svd_dim = 8;
    ns_featurizer a, b;
    char path[400], npy[400];
    snprintf(path, sizeof path, "%s/damaged.json", tmpdir);
    snprintf(npy, sizeof npy, "%s/damaged.svd.npy", tmpdir);
    if (fit(&a, &o, train.s, train.n)) {
        CHECK(ns_featurizer_save(&a, path, &e) == NS_OK);
        char *json, *arr;
        size_t jl, al;
        CHECK(ns_read_file(path, &json, &jl, &e) == NS_OK);
        CHECK(ns_read_file(npy, &arr, &al, &e) == NS_OK);
        /* truncated JSON */
        rewrite(path, json, jl / 2);
        CHECK(ns_featurizer_load(&b, path, &e) == NS_ERR_INPUT);
        printf("  truncated: %s: %s\n", e.file, e.msg);
        CHECK(strstr(e.msg, "truncated") != NULL && strstr(e.file, "damaged.json") != NULL);
        CHECK(b.table == NULL);
        /* an altered term */
        char *alt = malloc(jl + 1);
        memcpy(alt, json, jl);
        char *t = strstr(alt, "\"ferry\"");
        CHECK(t != NULL);
        if (t) t[1] = 'b';
        rewrite(path, alt, jl);
        CHECK(ns_featurizer_load(&b, path, &e) == NS_ERR_INPUT);
        printf("  altered: %s\n", e.msg);
        CHECK(strstr(e.msg, "checksum") != NULL);
        free(alt);
        /* truncated / damaged SVD basis */
        rewrite(path, json, jl);
        rewrite(npy, arr, al - 8);
        CHECK(ns_featurizer_load(&b, path, &e) == NS_ERR_INPUT);
        printf("  truncated basis: %s: %s\n", e.file, e.msg);
        CHECK(strstr(e.file, "damaged.svd.npy") != NULL);
        arr[al - 1] ^= 0x55;
        rewrite(npy, arr, al);
        CHECK(ns_featurizer_load(&b, path, &e) == NS_ERR_INPUT);
        CHECK(strstr(e.msg, "checksum") != NULL);
        arr[al - 1] ^= 0x55;
        rewrite(npy, arr, al);
        CHECK(ns_featurizer_load(&b, path, &e) == NS_OK);
        ns_featurizer_free(&b);
        /* another format, a missing file */
        const char *other = "{\"format\": \"something-else\", \"version\": 1}";
        rewrite(path, other, strlen(other));
        CHECK(ns_featurizer_load(&b, path, &e) == NS_ERR_INPUT);
        CHECK(strstr(e.msg, "format") != NULL);
        snprintf(path, sizeof path, "%s/missing.json", tmpdir);
        CHECK(ns_featurizer_load(&b, path, &e) == NS_ERR_IO);
        free(json);
        free(arr);
        ns_featurizer_free(&a);
    }
    free(train.s);
    ns_json_free(&fx);
}

/* ---- datasets ----------------------------------------------------------------------------------- */

static void test_dataset_documents(void)
{
    char pdir[300], paths[2][400];
    snprintf(pdir, sizeof pdir, "%s/problems", tmpdir);
    ns_error e;
    CHECK(ns_mkdir_p(pdir, &e) == NS_OK);
    ns_gen_arg fe[] = {{"cars", 2}, {"locations", 3}};
    const char *pp[2];
    for (int i = 0; i < 2; i++) {
        ns_buf b;
        ns_buf_init(&b);
        char name[32];
        snprintf(name, sizeof name, "p%d", i);
        CHECK(ns_gen_problem("ferry", fe, 2, (uint64_t)i + 1, name, &b, &e) == NS_OK);
        snprintf(paths[i], sizeof paths[i], "%s/%s.pddl", pdir, name);
        CHECK(ns_write_file_atomic(paths[i], b.data, b.len, &e) == NS_OK);
        ns_buf_free(&b);
        pp[i] = paths[i];
    }
    ns_dataset ds;
    ns_dataset_opts dopt = {NS_SPACE_FULL, 0, 2, 1, 0, false, false};
    if (ns_dataset_build(&ds, "domains/ferry/domain.pddl", pp, 2, &dopt, &e) != NS_OK) {
        printf("  build: %s\n", e.msg);
        CHECK(0);
        return;
    }
    ns_render_prep **preps;
    CHECK(ns_feat_renders_new(&preps, &ds, "domains", &e) == NS_OK);
    ns_split sp;
    const ns_dataset *dsp = &ds;
    ns_split_opts so = {NS_PROTO_INTERPOLATION, 0.3, 0, 0, false, 5};
    CHECK(ns_split_make(&sp, &dsp, 1, &so, &e) == NS_OK);
    int64_t *ids, n, *pairs, na;
    ns_feat_train_states(sp.train.ref, sp.train.n, 0, &ds, &ids, &n);
    ns_feat_train_actions(sp.train.ref, sp.train.n, 0, &ds, &pairs, &na);
    /* states: sorted, distinct, covering s and s′ of every training transition */
    int bad = 0;
    for (int64_t i = 1; i < n; i++) bad += ids[i] <= ids[i - 1];
    for (int64_t r = 0; r < sp.train.n; r++) {
        const int32_t *t = ns_dataset_transition(&ds, sp.train.ref[2 * r + 1]);
        bool f1 = false, f3 = false;
        for (int64_t i = 0; i < n; i++) f1 |= ids[i] == t[1], f3 |= ids[i] == t[3];
        bad += !f1 + !f3;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(n > 0 && n <= ns_dataset_nstates(&ds));
    for (int64_t i = 0; i < na; i++)
        for (int64_t j = 0; j < i; j++) bad += pairs[2 * i] == pairs[2 * j] && pairs[2 * i + 1] == pairs[2 * j + 1];
    CHECK_EQ_INT(bad, 0);
    /* texts: prompt, context-only, literals, action */
    ns_buf b, ref;
    ns_buf_init(&b);
    ns_buf_init(&ref);
    ns_feat_state_text(&ds, preps, NS_FEAT_SRC_PROMPT, 0, &b);
    ns_render_prep_prompt_bits(preps[0], ns_dataset_state(&ds, 0), &ref);
    CHECK_STR(b.data, ref.data);
    b.len = 0;
    ns_feat_state_text(&ds, preps, NS_FEAT_SRC_CONTEXT, 0, &b);
    CHECK(strstr(b.data, "### CURRENT STATE ###\n\n\n### GOAL DESCRIPTION ###") != NULL);
    b.len = 0;
    ns_feat_state_text(&ds, NULL, NS_FEAT_SRC_LITERALS, 0, &b);
    CHECK(b.data[0] == '(' && strstr(b.data, "(at-ferry ") != NULL);
    /* fit tfidf on the training prompts, featurize every state */
    ns_feat_ds_ctx ctx;
    ns_feat_docs docs;
    ns_feat_docs_dataset(&docs, &ctx, &ds, preps, NS_FEAT_SRC_PROMPT, ids, n);
    ns_feat_opts o;
    ns_feat_opts_init(&o, NS_FEAT_TFIDF, false);
    ns_featurizer f;
    CHECK(ns_featurizer_fit(&f, &o, &docs, &e) == NS_OK);
    CHECK(ns_featurizer_find(&f, "ferry", 5) >= 0);
    ns_feat_ds_ctx all_ctx;
    ns_feat_docs all;
    ns_feat_docs_dataset(&all, &all_ctx, &ds, preps, NS_FEAT_SRC_PROMPT, NULL, ns_dataset_nstates(&ds));
    ns_csr m;
    ns_csr_init(&m, ns_featurizer_nsparse(&f));
    CHECK(ns_featurizer_transform_sparse(&f, &all, &m, &e) == NS_OK);
    CHECK_EQ_INT(m.nrows, ns_dataset_nstates(&ds));
    ns_csr_free(&m);
    ns_featurizer_free(&f);
    /* context-only: the states of one problem share their row */
    ns_feat_opts_init(&o, NS_FEAT_TFIDF, false);
    o.source = NS_FEAT_SRC_CONTEXT;
    o.min_df = 1;
    ns_feat_docs_dataset(&docs, &ctx, &ds, preps, NS_FEAT_SRC_CONTEXT, ids, n);
    CHECK(ns_featurizer_fit(&f, &o, &docs, &e) == NS_OK);
    ns_feat_docs_dataset(&all, &all_ctx, &ds, preps, NS_FEAT_SRC_CONTEXT, NULL, ns_dataset_nstates(&ds));
    ns_csr_init(&m, ns_featurizer_nsparse(&f));
    CHECK(ns_featurizer_transform_sparse(&f, &all, &m, &e) == NS_OK);
    int64_t s1 = ds.problems[0].nstates - 1;
    CHECK(m.indptr[1] - m.indptr[0] == m.indptr[s1 + 1] - m.indptr[s1]);
    CHECK(memcmp(m.values, m.values + m.indptr[s1], (size_t)(m.indptr[1] * 4)) == 0);
    ns_csr_free(&m);
    ns_featurizer_free(&f);
    /* actions: literals, distinct texts; fit on two datasets' worth via concat */
    ns_feat_opts_init(&o, NS_FEAT_LITERALS, true);
    CHECK(o.source == NS_FEAT_SRC_ACTION && o.distinct);
    ns_feat_ds_ctx actx;
    ns_feat_docs adocs, parts[2], cat;
    ns_feat_docs_dataset(&adocs, &actx, &ds, NULL, NS_FEAT_SRC_ACTION, pairs, na);
    parts[0] = parts[1] = adocs;
    ns_feat_concat_ctx cc;
    ns_feat_docs_concat(&cat, &cc, parts, 2);
    CHECK(ns_featurizer_fit(&f, &o, &cat, &e) == NS_OK);
    CHECK(f.ndocs <= na); /* repeated texts counted once */
    CHECK(ns_featurizer_find(&f, ds.problems[pairs[0]].ops[pairs[1]], strlen(ds.problems[pairs[0]].ops[pairs[1]])) >= 0);
    ns_feat_docs_concat_free(&cc);
    ns_featurizer_free(&f);
    ns_buf_free(&b);
    ns_buf_free(&ref);
    free(ids);
    free(pairs);
    ns_split_free(&sp);
    ns_feat_renders_free(preps, ds.nproblems);
    ns_dataset_free(&ds);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ns_test_featurize_%ld", (long)getpid());
    ns_error e;
    ns_mkdir_p(tmpdir, &e);
    NS_RUN(test_sklearn_basic);
    NS_RUN(test_sklearn_ferry);
    NS_RUN(test_train_only_vocabulary);
    NS_RUN(test_literals);
    NS_RUN(test_onehot);
    NS_RUN(test_random_stable);
    NS_RUN(test_svd_exact);
    NS_RUN(test_svd_random_matrices);
    NS_RUN(test_determinism_and_files);
    NS_RUN(test_damaged_files);
    NS_RUN(test_dataset_documents);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) printf("could not remove %s\n", tmpdir);
    return ns_test_summary("test_featurize");
}
