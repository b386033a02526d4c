/* xgb.h — a multi-output gradient-boosted-trees regressor through XGBoost's
 * C API (libxgboost 1.7), for the first paper's progress models:
 * X = [φ(s_t), φ(g)], Y = φ(s_{t+1}) or the delta.
 *
 * Training is squared error with tree_method "hist", one tree per output per
 * round (XGBoost 1.7's only multi-target strategy; the label is an n×nout
 * matrix), and early stopping as XGBoost's Python callback does it: after
 * round r, stop when r − best ≥ early_stop, where best is the first round of
 * lowest validation RMSE.  That RMSE is XGBoost's own "rmse" metric over all
 * n×nout validation entries, i.e. sqrt of the per-output MSE averaged over
 * the outputs.  Predictions use rounds [0, best_round] only.
 *
 * Deterministic: no row or column sampling, so equal data and params give
 * bit-identical models (with nthread 1; more threads may change float
 * summation order).  Silent: verbosity 0, nothing printed.
 *
 * libxgboost is loaded at run time (dlopen of libxgboost.so.0, at the first
 * train or load; never unloaded), so programs that only plan with flat
 * forests (forest.h) neither link it nor pay for loading it; without it
 * these functions fail with NS_ERR_UNSUPPORTED.
 *
 * An ns_xgb is not safe to use from several threads at once. */
#ifndef NEXTSTATE_XGB_H
#define NEXTSTATE_XGB_H

#include <stddef.h>
#include <stdint.h>
#include "nextstate/util/error.h"
#include "nextstate/util/util.h"

typedef struct ns_xgb_params {
    int max_depth;  /* ≥ 1 */
    float eta;      /* learning rate, > 0 */
    int max_rounds; /* ≥ 1 */
    int early_stop; /* rounds without validation improvement before stopping; ≤ 0: never stop early */
    int nthread;    /* ≥ 1 */
    uint64_t seed;  /* passed to XGBoost (as the int64 of the same bits); unused without sampling */
} ns_xgb_params;

/* max_depth 8, eta 0.1, max_rounds 1000, early_stop 10, nthread 1, seed 0. */
void ns_xgb_params_default(ns_xgb_params *p);

struct ns_xgb_api; /* libxgboost's entry points (xgb.c) */

typedef struct ns_xgb {
    void *booster;        /* XGBoost BoosterHandle; NULL when the model is empty */
    struct ns_xgb_api *api; /* set with booster */
    int nfeat, nout;      /* input and output widths */
    int best_round;       /* 0-based; predictions use rounds [0, best_round] */
    int rounds;           /* rounds the booster holds (trained, or in the loaded text) */
    double *val_rmse;     /* [rounds] validation RMSE after each round; NULL without
                             a validation set and after loading */
    double best_val_rmse; /* val_rmse[best_round]; NaN when unknown */
} ns_xgb;

void ns_xgb_init(ns_xgb *m);
/* Frees the booster and history; *m is empty (as after init) afterwards. */
void ns_xgb_free(ns_xgb *m);

/* Trains on X [n×nfeat] and Y [n×nout] (row-major, dense), replacing any
 * model *m held.  Xval [nval×nfeat], Yval [nval×nout] may be NULL with
 * nval 0: then every round is kept and best_round = rounds − 1.  NaN in X
 * means "missing"; ±inf in X and non-finite Y are NS_ERR_INPUT, as are
 * non-positive sizes and out-of-range params.  On failure *m is empty. */
ns_status ns_xgb_train(ns_xgb *m, const float *X, const float *Y, int n, int nfeat, int nout,
                       const float *Xval, const float *Yval, int nval, const ns_xgb_params *p,
                       ns_error *err);

/* out [n×nout] = the model's predictions for X [n×nfeat], using rounds
 * [0, best_round].  n == 0 does nothing. */
ns_status ns_xgb_predict(const ns_xgb *m, const float *X, int n, float *out, ns_error *err);

/* Appends the booster as XGBoost's JSON model text (all m->rounds rounds;
 * best_round is also stored as the attribute "best_iteration") to *out.
 * nfeat, nout and best_round are the caller's to keep alongside. */
ns_status ns_xgb_save_json(const ns_xgb *m, ns_buf *out, ns_error *err);

/* Loads text[0..len) made by ns_xgb_save_json into *m (initialised; any
 * model it held is replaced).  The text must be XGBoost JSON (starting
 * '{"'; other bytes would reach XGBoost's legacy binary reader and are
 * refused; so is nesting deeper than 64, which would overflow XGBoost's
 * recursive reader), and the loaded booster must take nfeat inputs, give nout
 * outputs, hold more than best_round rounds, and agree with its
 * "best_iteration" attribute when it has one: otherwise NS_ERR_INPUT with
 * XGBoost's message, and *m is empty.  The loaded model predicts with one
 * thread.  The text is otherwise trusted to be XGBoost's own output (the
 * caller checksums it): XGBoost does not check every tree's internal
 * consistency. */
ns_status ns_xgb_load_json(ns_xgb *m, const char *text, size_t len, int nfeat, int nout, int best_round,
                           ns_error *err);

#endif
