/* xgb.c — multi-output XGBoost regressor through the C API (see xgb.h). */
#include "nextstate/learn/xgb.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xgboost/c_api.h>

/* The C API functions used here, resolved from libxgboost at run time
 * (c_api.h gives their types). */
struct ns_xgb_api {
    void *lib;
    const char *(*GetLastError)(void);
    int (*DMatrixCreateFromMat_omp)(const float *, bst_ulong, bst_ulong, float, DMatrixHandle *, int);
    int (*DMatrixSetInfoFromInterface)(DMatrixHandle, const char *, const char *);
    int (*DMatrixFree)(DMatrixHandle);
    int (*BoosterCreate)(const DMatrixHandle[], bst_ulong, BoosterHandle *);
    int (*BoosterFree)(BoosterHandle);
    int (*BoosterSetParam)(BoosterHandle, const char *, const char *);
    int (*BoosterUpdateOneIter)(BoosterHandle, int, DMatrixHandle);
    int (*BoosterEvalOneIter)(BoosterHandle, int, DMatrixHandle[], const char *[], bst_ulong, const char **);
    int (*BoosterSetAttr)(BoosterHandle, const char *, const char *);
    int (*BoosterGetAttr)(BoosterHandle, const char *, const char **, int *);
    int (*BoosterPredictFromDMatrix)(BoosterHandle, DMatrixHandle, const char *, const bst_ulong **, bst_ulong *,
                                     const float **);
    int (*BoosterSaveModelToBuffer)(BoosterHandle, const char *, bst_ulong *, const char **);
    int (*BoosterLoadModelFromBuffer)(BoosterHandle, const void *, bst_ulong);
    int (*BoosterGetNumFeature)(BoosterHandle, bst_ulong *);
    int (*BoosterBoostedRounds)(BoosterHandle, int *);
};

static void api_close(struct ns_xgb_api *a)
{
    if (!a) return;
    if (a->lib) dlclose(a->lib); /* RTLD_NODELETE: the library stays loaded */
    free(a);
}

/* dlopens libxgboost and resolves its functions into a fresh *out. */
static ns_status api_open(struct ns_xgb_api **out, ns_error *err)
{
    static const char *const names[] = {"libxgboost.so.0", "libxgboost.so"};
    *out = NULL;
    struct ns_xgb_api *a = ns_xcalloc(1, sizeof *a);
    const char *why = "";
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !a->lib; i++) {
        a->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!a->lib && i == 0) {
            const char *e = dlerror();
            why = e ? e : "";
        }
    }
    if (!a->lib) {
        free(a);
        return ns_error_set(err, NS_ERR_UNSUPPORTED, NULL, 0, 0, "xgb: libxgboost cannot be loaded (%.300s)", why);
    }
    struct {
        const char *name;
        void *slot; /* the address of a function pointer field */
    } fns[] = {
        {"XGBGetLastError", &a->GetLastError},
        {"XGDMatrixCreateFromMat_omp", &a->DMatrixCreateFromMat_omp},
        {"XGDMatrixSetInfoFromInterface", &a->DMatrixSetInfoFromInterface},
        {"XGDMatrixFree", &a->DMatrixFree},
        {"XGBoosterCreate", &a->BoosterCreate},
        {"XGBoosterFree", &a->BoosterFree},
        {"XGBoosterSetParam", &a->BoosterSetParam},
        {"XGBoosterUpdateOneIter", &a->BoosterUpdateOneIter},
        {"XGBoosterEvalOneIter", &a->BoosterEvalOneIter},
        {"XGBoosterSetAttr", &a->BoosterSetAttr},
        {"XGBoosterGetAttr", &a->BoosterGetAttr},
        {"XGBoosterPredictFromDMatrix", &a->BoosterPredictFromDMatrix},
        {"XGBoosterSaveModelToBuffer", &a->BoosterSaveModelToBuffer},
        {"XGBoosterLoadModelFromBuffer", &a->BoosterLoadModelFromBuffer},
        {"XGBoosterGetNumFeature", &a->BoosterGetNumFeature},
        {"XGBoosterBoostedRounds", &a->BoosterBoostedRounds},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        void *f = dlsym(a->lib, fns[i].name);
        if (!f) {
            api_close(a);
            return ns_error_set(err, NS_ERR_UNSUPPORTED, NULL, 0, 0, "xgb: libxgboost lacks %s (version 1.7 needed)",
                                fns[i].name);
        }
        memcpy(fns[i].slot, &f, sizeof f); /* POSIX: a function's address as a data pointer */
    }
    *out = a;
    return NS_OK;
}

void ns_xgb_params_default(ns_xgb_params *p)
{
    p->max_depth = 8;
    p->eta = 0.1f;
    p->max_rounds = 1000;
    p->early_stop = 10;
    p->nthread = 1;
    p->seed = 0;
}

void ns_xgb_init(ns_xgb *m)
{
    memset(m, 0, sizeof *m);
    m->best_val_rmse = NAN;
}

void ns_xgb_free(ns_xgb *m)
{
    if (m->booster) m->api->BoosterFree(m->booster);
    api_close(m->api);
    free(m->val_rmse);
    ns_xgb_init(m);
}

/* Fills err with code and "xgboost: WHAT: <first line of XGBoost's last
 * error, without its [hh:mm:ss] stamp>" (the rest is a stack trace). */
static ns_status xgb_fail(const struct ns_xgb_api *A, ns_error *err, ns_status code, const char *what)
{
    const char *e = A->GetLastError();
    if (!e) e = "";
    if (e[0] == '[') {
        const char *close = strchr(e, ']');
        if (close && close - e <= 16) e = close + 1;
    }
    while (*e == ' ') e++;
    int line = (int)strcspn(e, "\r\n");
    if (line > 400) line = 400;
    return ns_error_set(err, code, NULL, 0, 0, "xgboost: %s: %.*s", what, line, line ? e : "(no message)");
}

static ns_status set_param(const struct ns_xgb_api *A, BoosterHandle b, const char *name, const char *value,
                           ns_status code, ns_error *err)
{
    if (A->BoosterSetParam(b, name, value) == 0) return NS_OK;
    char what[96];
    snprintf(what, sizeof what, "setting %s=%s", name, value);
    return xgb_fail(A, err, code, what);
}

/* A dense float matrix; the labels (when Y) as an n×nout array interface,
 * so that XGBoost 1.7 trains nout targets. */
static ns_status make_dmatrix(const struct ns_xgb_api *A, DMatrixHandle *out, const float *X, const float *Y, int n,
                              int nfeat, int nout, int nthread, ns_error *err)
{
    *out = NULL;
    if (A->DMatrixCreateFromMat_omp(X, (bst_ulong)n, (bst_ulong)nfeat, NAN, out, nthread) != 0) {
        *out = NULL;
        return xgb_fail(A, err, NS_ERR_INTERNAL, "creating a matrix");
    }
    if (!Y) return NS_OK;
    char iface[192];
    snprintf(iface, sizeof iface,
             "{\"data\":[%" PRIuPTR ",true],\"shape\":[%d,%d],\"typestr\":\"<f4\",\"version\":3}",
             (uintptr_t)Y, n, nout);
    if (A->DMatrixSetInfoFromInterface(*out, "label", iface) != 0) {
        ns_status st = xgb_fail(A, err, NS_ERR_INTERNAL, "setting the labels");
        A->DMatrixFree(*out);
        *out = NULL;
        return st;
    }
    return NS_OK;
}

/* Checks that X has no infinities and (when finite_only) no NaN either. */
static bool all_ok(const float *a, size_t count, bool finite_only)
{
    for (size_t i = 0; i < count; i++)
        if (isinf(a[i]) || (finite_only && isnan(a[i]))) return false;
    return true;
}

static ns_status check_params(const ns_xgb_params *p, ns_error *err)
{
    if (!p) return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: no parameters");
    if (p->max_depth < 1 || p->max_depth > 64)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: max_depth %d is not in [1, 64]", p->max_depth);
    if (!(p->eta > 0.0f) || !isfinite(p->eta))
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: learning rate %g is not positive", (double)p->eta);
    if (p->max_rounds < 1)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: max_rounds %d is not positive", p->max_rounds);
    if (p->nthread < 1)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: nthread %d is not positive", p->nthread);
    return NS_OK;
}

static ns_status check_data(const float *X, const float *Y, int n, int nfeat, int nout, const char *which,
                            ns_error *err)
{
    if (!X || !Y)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: %s data missing (%d rows)", which, n);
    if (!all_ok(X, (size_t)n * (size_t)nfeat, false))
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: %s inputs contain an infinity", which);
    if (!all_ok(Y, (size_t)n * (size_t)nout, true))
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: %s targets are not all finite", which);
    return NS_OK;
}

/* The value after "val-rmse:" in XGBoosterEvalOneIter's "[r]\tval-rmse:x". */
static bool parse_rmse(const char *s, double *out)
{
    const char *k = s ? strstr(s, "val-rmse:") : NULL;
    if (!k) return false;
    k += strlen("val-rmse:");
    char *end;
    double v = strtod(k, &end);
    if (end == k || !(v >= 0.0) || isinf(v)) return false;
    *out = v;
    return true;
}

ns_status ns_xgb_train(ns_xgb *m, const float *X, const float *Y, int n, int nfeat, int nout,
                       const float *Xval, const float *Yval, int nval, const ns_xgb_params *p,
                       ns_error *err)
{
    ns_xgb_free(m);
    if (n < 1 || nfeat < 1 || nout < 1)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                            "xgb: training needs rows, features and outputs (got n=%d, nfeat=%d, nout=%d)", n,
                            nfeat, nout);
    if (nval < 0) return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: negative validation size %d", nval);
    ns_status st = check_params(p, err);
    if (st == NS_OK) st = check_data(X, Y, n, nfeat, nout, "training", err);
    if (st == NS_OK && nval > 0) st = check_data(Xval, Yval, nval, nfeat, nout, "validation", err);
    if (st != NS_OK) return st;
    struct ns_xgb_api *A;
    if ((st = api_open(&A, err)) != NS_OK) return st;

    DMatrixHandle dm[2] = {NULL, NULL};
    BoosterHandle b = NULL;
    double *hist = nval > 0 ? ns_xmalloc((size_t)p->max_rounds * sizeof *hist) : NULL;
    if ((st = make_dmatrix(A, &dm[0], X, Y, n, nfeat, nout, p->nthread, err)) != NS_OK) goto done;
    if (nval > 0 && (st = make_dmatrix(A, &dm[1], Xval, Yval, nval, nfeat, nout, p->nthread, err)) != NS_OK)
        goto done;
    if (A->BoosterCreate(dm, nval > 0 ? 2 : 1, &b) != 0) {
        b = NULL;
        st = xgb_fail(A, err, NS_ERR_INTERNAL, "creating the booster");
        goto done;
    }
    /* XGBoost keeps its seed as a signed 64-bit integer: pass the same bits. */
    int64_t seed = p->seed > (uint64_t)INT64_MAX ? -(int64_t)(UINT64_MAX - p->seed) - 1 : (int64_t)p->seed;
    char depth[16], eta[32], nthread[16], seedtxt[32];
    snprintf(depth, sizeof depth, "%d", p->max_depth);
    snprintf(eta, sizeof eta, "%.9g", (double)p->eta);
    snprintf(nthread, sizeof nthread, "%d", p->nthread);
    snprintf(seedtxt, sizeof seedtxt, "%" PRId64, seed);
    const char *kv[][2] = {
        {"verbosity", "0"},       {"objective", "reg:squarederror"}, {"tree_method", "hist"},
        {"max_depth", depth},     {"eta", eta},                      {"nthread", nthread},
        {"seed", seedtxt},        {"eval_metric", "rmse"},
    };
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
        if ((st = set_param(A, b, kv[i][0], kv[i][1], NS_ERR_INTERNAL, err)) != NS_OK) goto done;

    int best = -1, rounds = 0;
    double best_rmse = NAN;
    const char *names[1] = {"val"};
    for (int it = 0; it < p->max_rounds; it++) {
        if (A->BoosterUpdateOneIter(b, it, dm[0]) != 0) {
            st = xgb_fail(A, err, NS_ERR_INTERNAL, "boosting a round");
            goto done;
        }
        rounds = it + 1;
        if (nval == 0) {
            best = it;
            continue;
        }
        const char *res = NULL;
        if (A->BoosterEvalOneIter(b, it, &dm[1], names, 1, &res) != 0) {
            st = xgb_fail(A, err, NS_ERR_INTERNAL, "evaluating a round");
            goto done;
        }
        double r;
        if (!parse_rmse(res, &r)) {
            st = ns_error_set(err, NS_ERR_INTERNAL, NULL, 0, 0, "xgb: cannot read the validation RMSE in '%.80s'",
                              res ? res : "");
            goto done;
        }
        hist[it] = r;
        if (best < 0 || r < best_rmse) {
            best = it;
            best_rmse = r;
        } else if (p->early_stop > 0 && it - best >= p->early_stop) {
            break;
        }
    }

    char attr[40];
    snprintf(attr, sizeof attr, "%d", best);
    if (A->BoosterSetAttr(b, "best_iteration", attr) != 0) {
        st = xgb_fail(A, err, NS_ERR_INTERNAL, "setting best_iteration");
        goto done;
    }
    if (nval > 0) {
        snprintf(attr, sizeof attr, "%.17g", best_rmse);
        if (A->BoosterSetAttr(b, "best_score", attr) != 0) {
            st = xgb_fail(A, err, NS_ERR_INTERNAL, "setting best_score");
            goto done;
        }
    }
    m->booster = b;
    b = NULL;
    m->nfeat = nfeat;
    m->nout = nout;
    m->best_round = best;
    m->rounds = rounds;
    m->val_rmse = hist;
    hist = NULL;
    m->best_val_rmse = best_rmse;
done:
    if (b) A->BoosterFree(b);
    if (dm[0]) A->DMatrixFree(dm[0]);
    if (dm[1]) A->DMatrixFree(dm[1]);
    if (m->booster) m->api = A; /* the booster's library */
    else api_close(A);
    free(hist);
    return st;
}

/* Predicts rows of X into out [n×nout] with rounds [0, best_round]. */
static ns_status predict(const struct ns_xgb_api *A, BoosterHandle b, const float *X, int n, int nfeat, int nout,
                         int best_round, float *out, ns_status code, ns_error *err)
{
    DMatrixHandle d;
    ns_status st = make_dmatrix(A, &d, X, NULL, n, nfeat, nout, 1, err);
    if (st != NS_OK) return st;
    char cfg[160];
    snprintf(cfg, sizeof cfg,
             "{\"type\":0,\"training\":false,\"iteration_begin\":0,\"iteration_end\":%d,\"strict_shape\":false}",
             best_round + 1);
    const bst_ulong *shape = NULL;
    bst_ulong dim = 0;
    const float *res = NULL;
    if (A->BoosterPredictFromDMatrix(b, d, cfg, &shape, &dim, &res) != 0) {
        st = xgb_fail(A, err, code, "predicting");
    } else {
        bool ok = (dim == 2 && shape[0] == (bst_ulong)n && shape[1] == (bst_ulong)nout) ||
                  (dim == 1 && nout == 1 && shape[0] == (bst_ulong)n);
        if (!ok)
            st = ns_error_set(err, code, NULL, 0, 0,
                              "xgb: the model gives predictions of shape [%llu%s%llu], expected [%d, %d]",
                              (unsigned long long)(dim ? shape[0] : 0), dim > 1 ? ", " : "",
                              dim > 1 ? (unsigned long long)shape[1] : 0ULL, n, nout);
        else
            memcpy(out, res, (size_t)n * (size_t)nout * sizeof *out);
    }
    A->DMatrixFree(d);
    return st;
}

ns_status ns_xgb_predict(const ns_xgb *m, const float *X, int n, float *out, ns_error *err)
{
    if (!m->booster) return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: predicting with an empty model");
    if (n < 0) return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: negative number of rows %d", n);
    if (n == 0) return NS_OK;
    if (!X || !out) return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: prediction inputs or outputs missing");
    if (!all_ok(X, (size_t)n * (size_t)m->nfeat, false))
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: prediction inputs contain an infinity");
    return predict(m->api, m->booster, X, n, m->nfeat, m->nout, m->best_round, out, NS_ERR_INTERNAL, err);
}

ns_status ns_xgb_save_json(const ns_xgb *m, ns_buf *out, ns_error *err)
{
    if (!m->booster) return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: saving an empty model");
    const struct ns_xgb_api *A = m->api;
    bst_ulong len = 0;
    const char *text = NULL;
    if (A->BoosterSaveModelToBuffer(m->booster, "{\"format\":\"json\"}", &len, &text) != 0)
        return xgb_fail(A, err, NS_ERR_INTERNAL, "saving the model");
    ns_buf_put(out, text, (size_t)len);
    return NS_OK;
}

/* XGBoost's JSON reader recurses per nesting level, so deeply nested
 * garbage would overflow the stack: the deepest nesting of text outside
 * strings (a model nests about six deep). */
static int json_depth(const char *text, size_t len)
{
    int depth = 0, deepest = 0;
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\') i++;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            if (++depth > deepest) deepest = depth;
        } else if (c == '}' || c == ']') {
            depth--;
        }
    }
    return deepest;
}

#define MAX_JSON_DEPTH 64

ns_status ns_xgb_load_json(ns_xgb *m, const char *text, size_t len, int nfeat, int nout, int best_round,
                           ns_error *err)
{
    ns_xgb_free(m);
    if (nfeat < 1 || nout < 1 || best_round < 0)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: bad model dimensions (nfeat=%d, nout=%d, best_round=%d)",
                            nfeat, nout, best_round);
    /* XGBoost reads '{"' as JSON, '{' + letter as UBJSON and anything else
     * with its legacy binary reader: only let JSON through. */
    if (!text || len < 2 || text[0] != '{' || text[1] != '"')
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: the model text is not XGBoost JSON (it does not start with '{\"')");
    if (json_depth(text, len) > MAX_JSON_DEPTH)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                            "xgb: the model text nests deeper than %d levels: not an XGBoost model", MAX_JSON_DEPTH);
    struct ns_xgb_api *A;
    ns_status st = api_open(&A, err);
    if (st != NS_OK) return st;
    BoosterHandle b = NULL;
    if (A->BoosterCreate(NULL, 0, &b) != 0) {
        b = NULL;
        st = xgb_fail(A, err, NS_ERR_INTERNAL, "creating the booster");
        goto done;
    }
    if (A->BoosterLoadModelFromBuffer(b, text, (bst_ulong)len) != 0) {
        st = xgb_fail(A, err, NS_ERR_INPUT, "reading the model");
        goto done;
    }
    if ((st = set_param(A, b, "verbosity", "0", NS_ERR_INTERNAL, err)) != NS_OK) goto done;
    if ((st = set_param(A, b, "nthread", "1", NS_ERR_INTERNAL, err)) != NS_OK) goto done;
    bst_ulong nf = 0;
    int rounds = 0;
    if (A->BoosterGetNumFeature(b, &nf) != 0) {
        st = xgb_fail(A, err, NS_ERR_INPUT, "reading the model's number of features");
        goto done;
    }
    if (nf != (bst_ulong)nfeat) {
        st = ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: the model takes %llu features, expected %d",
                          (unsigned long long)nf, nfeat);
        goto done;
    }
    if (A->BoosterBoostedRounds(b, &rounds) != 0) {
        st = xgb_fail(A, err, NS_ERR_INPUT, "reading the model's number of rounds");
        goto done;
    }
    if (best_round >= rounds) {
        st = ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: best round %d but the model holds %d rounds",
                          best_round, rounds);
        goto done;
    }
    const char *attr = NULL;
    int have_attr = 0;
    if (A->BoosterGetAttr(b, "best_iteration", &attr, &have_attr) != 0) {
        st = xgb_fail(A, err, NS_ERR_INPUT, "reading the model's attributes");
        goto done;
    }
    if (have_attr && attr) {
        char *end;
        long v = strtol(attr, &end, 10);
        if (end == attr || *end || v != best_round) {
            st = ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                              "xgb: best round %d but the model's best_iteration is '%.40s'", best_round, attr);
            goto done;
        }
    }
    /* The output width: predict one row of missing values. */
    float *probe_x = ns_xmalloc((size_t)nfeat * sizeof *probe_x), *probe_y = ns_xmalloc((size_t)nout * sizeof *probe_y);
    for (int j = 0; j < nfeat; j++) probe_x[j] = NAN;
    st = predict(A, b, probe_x, 1, nfeat, nout, best_round, probe_y, NS_ERR_INPUT, err);
    free(probe_x);
    free(probe_y);
    if (st != NS_OK) goto done;
    m->booster = b;
    m->api = A;
    b = NULL;
    A = NULL;
    m->nfeat = nfeat;
    m->nout = nout;
    m->best_round = best_round;
    m->rounds = rounds;
done:
    if (b) A->BoosterFree(b);
    api_close(A);
    return st;
}
