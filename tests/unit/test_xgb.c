/* test_xgb.c — the XGBoost multi-output regressor of xgb.h: learns a
 * two-output function, early stopping at the argmin of the validation RMSE
 * (recomputed here from predictions), JSON save → load → bit-identical
 * predictions, truncated or foreign model text refused, deterministic
 * training, and bad sizes or parameters refused. */
#include "nextstate/learn/xgb.h"
#include "test.h"

#include <stdint.h>

#define NF 3
#define NO 2

typedef struct data {
    int n;
    float *X, *Y; /* [n×NF], [n×NO] */
} data;

/* y0 = x0 + x1 (+ noise·u), y1 = [x2 > 0.5], x uniform in [0, 1). */
static data make(int n, uint64_t seed, double noise)
{
    data d = {n, malloc((size_t)n * NF * sizeof(float)), malloc((size_t)n * NO * sizeof(float))};
    ns_rng r;
    ns_rng_seed(&r, seed);
    for (int i = 0; i < n; i++) {
        float *x = d.X + (size_t)i * NF, *y = d.Y + (size_t)i * NO;
        for (int j = 0; j < NF; j++) x[j] = (float)ns_rng_double(&r);
        y[0] = x[0] + x[1] + (float)(noise * (ns_rng_double(&r) - 0.5));
        y[1] = x[2] > 0.5f ? 1.0f : 0.0f;
    }
    return d;
}

static void drop(data *d) { free(d->X), free(d->Y); }

/* RMSE of output k (k < 0: over all n×NO entries, as XGBoost's metric). */
static double rmse(const float *pred, const float *y, int n, int k)
{
    double s = 0;
    int cnt = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < NO; j++)
            if (k < 0 || j == k) {
                double e = (double)pred[(size_t)i * NO + j] - (double)y[(size_t)i * NO + j];
                s += e * e, cnt++;
            }
    return sqrt(s / cnt);
}

static float *predict_all(const ns_xgb *m, const data *d)
{
    float *out = malloc((size_t)d->n * NO * sizeof(float));
    ns_error err = {0};
    if (ns_xgb_predict(m, d->X, d->n, out, &err) != NS_OK) {
        printf("  predict: %s\n", err.msg);
        memset(out, 0, (size_t)d->n * NO * sizeof(float));
        ns_t_cur_failed = 1;
    }
    return out;
}

static ns_status train(ns_xgb *m, const data *tr, const data *va, const ns_xgb_params *p)
{
    ns_error err = {0};
    ns_status st = ns_xgb_train(m, tr->X, tr->Y, tr->n, NF, NO, va ? va->X : NULL, va ? va->Y : NULL,
                                va ? va->n : 0, p, &err);
    if (st != NS_OK) printf("  train: %s\n", err.msg);
    return st;
}

static void test_learns_two_outputs(void)
{
    data tr = make(600, 1, 0), va = make(150, 2, 0), te = make(300, 3, 0);
    ns_xgb_params p;
    ns_xgb_params_default(&p);
    ns_xgb m;
    ns_xgb_init(&m);
    CHECK(train(&m, &tr, &va, &p) == NS_OK);
    CHECK_EQ_INT(m.nfeat, NF);
    CHECK_EQ_INT(m.nout, NO);
    CHECK(m.rounds >= 1 && m.rounds <= p.max_rounds);
    CHECK(m.best_round >= 0 && m.best_round < m.rounds);
    CHECK(m.val_rmse && m.best_val_rmse == m.val_rmse[m.best_round]);
    float *pred = predict_all(&m, &te);
    double r0 = rmse(pred, te.Y, te.n, 0), r1 = rmse(pred, te.Y, te.n, 1);
    /* A constant predictor scores ~0.41 and ~0.5. */
    CHECK(r0 < 0.05);
    CHECK(r1 < 0.1);
    if (ns_t_cur_failed) printf("  held-out RMSE %.4f %.4f after %d rounds (best %d)\n", r0, r1, m.rounds, m.best_round);
    free(pred);
    ns_xgb_free(&m);
    CHECK(m.booster == NULL && m.val_rmse == NULL);
    drop(&tr), drop(&va), drop(&te);
}

/* Noisy targets and few rows: validation error falls, then rises as the
 * trees fit the noise. */
static void test_early_stopping(void)
{
    data tr = make(120, 4, 1.0), va = make(80, 5, 1.0);
    ns_xgb_params p;
    ns_xgb_params_default(&p);
    ns_xgb m;
    ns_xgb_init(&m);
    CHECK(train(&m, &tr, &va, &p) == NS_OK);
    CHECK(m.rounds < p.max_rounds);
    CHECK_EQ_INT(m.rounds, m.best_round + p.early_stop + 1);
    CHECK(m.best_round > 0);
    if (m.val_rmse) {
        for (int r = 0; r < m.rounds; r++) CHECK(r < m.best_round ? m.val_rmse[r] > m.best_val_rmse : m.val_rmse[r] >= m.best_val_rmse);
        /* The recorded curve is the RMSE of the predictions of rounds
         * [0, r] over all validation entries, and its first argmin is
         * best_round. */
        int argmin = -1;
        double best = INFINITY;
        for (int r = 0; r < m.rounds; r++) {
            ns_xgb at = m;
            at.best_round = r;
            float *pred = predict_all(&at, &va);
            double e = rmse(pred, va.Y, va.n, -1);
            free(pred);
            CHECK(fabs(e - m.val_rmse[r]) <= 1e-6 * m.val_rmse[r]);
            if (e < best) best = e, argmin = r;
        }
        CHECK_EQ_INT(argmin, m.best_round);
    }
    ns_xgb_free(&m);

    /* Without a validation set: every round is kept. */
    p.max_rounds = 7;
    CHECK(train(&m, &tr, NULL, &p) == NS_OK);
    CHECK_EQ_INT(m.rounds, 7);
    CHECK_EQ_INT(m.best_round, 6);
    CHECK(m.val_rmse == NULL && isnan(m.best_val_rmse));
    ns_xgb_free(&m);
    drop(&tr), drop(&va);
}

/* A model that stopped early (best_round < rounds − 1), saved and loaded,
 * predicts bit-identically, and from its best round, not its last. */
static void test_save_load(void)
{
    data tr = make(120, 4, 1.0), va = make(80, 5, 1.0), te = make(100, 6, 0);
    ns_xgb_params p;
    ns_xgb_params_default(&p);
    ns_xgb m, l;
    ns_xgb_init(&m), ns_xgb_init(&l);
    ns_error err = {0};
    CHECK(train(&m, &tr, &va, &p) == NS_OK);
    CHECK(m.best_round < m.rounds - 1);
    ns_buf text, again;
    ns_buf_init(&text), ns_buf_init(&again);
    CHECK(ns_xgb_save_json(&m, &text, &err) == NS_OK);
    CHECK(text.len > 2 && text.data[0] == '{');
    CHECK(ns_xgb_load_json(&l, text.data, text.len, NF, NO, m.best_round, &err) == NS_OK);
    if (err.msg[0]) printf("  load: %s\n", err.msg);
    CHECK_EQ_INT(l.rounds, m.rounds);
    CHECK_EQ_INT(l.best_round, m.best_round);
    CHECK(l.val_rmse == NULL);
    float *a = predict_all(&m, &te), *b = predict_all(&l, &te);
    CHECK(memcmp(a, b, (size_t)te.n * NO * sizeof(float)) == 0);
    ns_xgb last = m;
    last.best_round = m.rounds - 1;
    float *c = predict_all(&last, &te);
    CHECK(memcmp(a, c, (size_t)te.n * NO * sizeof(float)) != 0);
    /* Saving the loaded model gives the same text. */
    CHECK(ns_xgb_save_json(&l, &again, &err) == NS_OK);
    CHECK(again.len == text.len && memcmp(again.data, text.data, text.len) == 0);
    free(a), free(b), free(c);
    ns_buf_free(&text), ns_buf_free(&again);
    ns_xgb_free(&m), ns_xgb_free(&l);
    drop(&tr), drop(&va), drop(&te);
}

static void expect_load_error(const char *text, size_t len, int nfeat, int nout, int best, const char *what)
{
    ns_xgb m;
    ns_xgb_init(&m);
    ns_error err = {0};
    ns_status st = ns_xgb_load_json(&m, text, len, nfeat, nout, best, &err);
    if (st != NS_ERR_INPUT || !err.msg[0] || m.booster) {
        printf("  %s: status %d, message '%s'\n", what, (int)st, err.msg);
        ns_t_cur_failed = 1;
    }
    ns_xgb_free(&m);
}

static void test_load_bad_text(void)
{
    data tr = make(60, 7, 0);
    ns_xgb_params p;
    ns_xgb_params_default(&p);
    p.max_rounds = 3;
    ns_xgb m;
    ns_xgb_init(&m);
    ns_error err = {0};
    CHECK(train(&m, &tr, NULL, &p) == NS_OK);
    ns_buf text;
    ns_buf_init(&text);
    CHECK(ns_xgb_save_json(&m, &text, &err) == NS_OK);
    char what[64];
    for (int k = 0; k < 20; k++) {
        size_t len = text.len * (size_t)k / 20;
        snprintf(what, sizeof what, "truncated to %zu of %zu", len, text.len);
        expect_load_error(text.data, len, NF, NO, 2, what);
    }
    expect_load_error(text.data, text.len - 1, NF, NO, 2, "last byte cut");
    /* The text itself is fine; the caller's dimensions are not. */
    expect_load_error(text.data, text.len, NF + 1, NO, 2, "wrong nfeat");
    expect_load_error(text.data, text.len, NF, NO + 1, 2, "wrong nout");
    expect_load_error(text.data, text.len, NF, 1, 2, "one output");
    expect_load_error(text.data, text.len, NF, NO, 3, "best round past the end");
    expect_load_error(text.data, text.len, NF, NO, 1, "best round not the saved one");
    expect_load_error(text.data, text.len, NF, NO, -1, "negative best round");
    expect_load_error(text.data, text.len, 0, NO, 2, "no features");
    static const char *const garbage[] = {
        "", "hello world", "{", "{\"", "{}", "{\"a\":1}", "{\"learner\":{}}", "[1,2,3]", "null",
        "{Lgarbage that would go to the UBJSON reader", " {\"learner\":{}}",
        "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10 binary-looking bytes",
    };
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++)
        expect_load_error(garbage[i], strlen(garbage[i]), NF, NO, 0, garbage[i]);
    expect_load_error(NULL, 0, NF, NO, 0, "NULL");
    /* Deep nesting (XGBoost's reader would recurse off the stack). */
    size_t deep_len = 5 + 200000;
    char *deep = malloc(deep_len);
    memcpy(deep, "{\"a\":", 5);
    memset(deep + 5, '[', deep_len - 5);
    expect_load_error(deep, deep_len, NF, NO, 0, "200000 nested arrays");
    free(deep);
    /* Corrupt one byte in the middle (a quote becomes a letter). */
    char *bad = malloc(text.len);
    memcpy(bad, text.data, text.len);
    char *q = memchr(bad + text.len / 2, '"', text.len / 2);
    if (q) *q = 'x';
    CHECK(q != NULL);
    expect_load_error(bad, text.len, NF, NO, 2, "corrupted quote");
    free(bad);
    /* A failed load empties a model that held one. */
    CHECK(ns_xgb_load_json(&m, "{}", 2, NF, NO, 0, &err) == NS_ERR_INPUT);
    CHECK(m.booster == NULL);
    float out[NO];
    CHECK(ns_xgb_predict(&m, tr.X, 1, out, &err) == NS_ERR_INPUT);
    ns_buf_free(&text);
    ns_xgb_free(&m);
    drop(&tr);
}

static void test_deterministic(void)
{
    data tr = make(300, 8, 0.2), va = make(100, 9, 0.2), te = make(100, 10, 0);
    ns_xgb_params p;
    ns_xgb_params_default(&p);
    p.max_rounds = 60;
    p.seed = 13;
    ns_xgb a, b;
    ns_xgb_init(&a), ns_xgb_init(&b);
    CHECK(train(&a, &tr, &va, &p) == NS_OK);
    CHECK(train(&b, &tr, &va, &p) == NS_OK);
    CHECK_EQ_INT(a.rounds, b.rounds);
    CHECK_EQ_INT(a.best_round, b.best_round);
    float *pa = predict_all(&a, &te), *pb = predict_all(&b, &te);
    CHECK(memcmp(pa, pb, (size_t)te.n * NO * sizeof(float)) == 0);
    ns_buf ta, tb;
    ns_buf_init(&ta), ns_buf_init(&tb);
    ns_error err = {0};
    CHECK(ns_xgb_save_json(&a, &ta, &err) == NS_OK && ns_xgb_save_json(&b, &tb, &err) == NS_OK);
    CHECK(ta.len == tb.len && memcmp(ta.data, tb.data, ta.len) == 0);
    /* A seed of 2^64 − 1 is accepted (XGBoost holds the same bits as −1). */
    p.seed = UINT64_MAX;
    p.max_rounds = 2;
    CHECK(train(&b, &tr, NULL, &p) == NS_OK);
    free(pa), free(pb);
    ns_buf_free(&ta), ns_buf_free(&tb);
    ns_xgb_free(&a), ns_xgb_free(&b);
    drop(&tr), drop(&va), drop(&te);
}

static void expect_train_error(const data *tr, int n, int nfeat, int nout, const float *Xv, const float *Yv, int nval,
                               const ns_xgb_params *p, const char *what)
{
    ns_xgb m;
    ns_xgb_init(&m);
    ns_error err = {0};
    ns_status st = ns_xgb_train(&m, tr->X, tr->Y, n, nfeat, nout, Xv, Yv, nval, p, &err);
    if (st != NS_ERR_INPUT || !err.msg[0] || m.booster) {
        printf("  %s: status %d, message '%s'\n", what, (int)st, err.msg);
        ns_t_cur_failed = 1;
    }
    ns_xgb_free(&m);
}

static void test_bad_input(void)
{
    data tr = make(20, 11, 0);
    ns_xgb_params p, q;
    ns_xgb_params_default(&p);
    expect_train_error(&tr, 0, NF, NO, NULL, NULL, 0, &p, "n 0");
    expect_train_error(&tr, 20, 0, NO, NULL, NULL, 0, &p, "nfeat 0");
    expect_train_error(&tr, 20, NF, 0, NULL, NULL, 0, &p, "nout 0");
    expect_train_error(&tr, -1, NF, NO, NULL, NULL, 0, &p, "n -1");
    expect_train_error(&tr, 20, NF, NO, NULL, NULL, -1, &p, "nval -1");
    expect_train_error(&tr, 20, NF, NO, NULL, NULL, 5, &p, "nval 5 without data");
    expect_train_error(&tr, 20, NF, NO, NULL, NULL, 0, NULL, "no params");
    q = p, q.max_depth = 0;
    expect_train_error(&tr, 20, NF, NO, NULL, NULL, 0, &q, "max_depth 0");
    q = p, q.eta = 0;
    expect_train_error(&tr, 20, NF, NO, NULL, NULL, 0, &q, "eta 0");
    q = p, q.eta = NAN;
    expect_train_error(&tr, 20, NF, NO, NULL, NULL, 0, &q, "eta NaN");
    q = p, q.max_rounds = 0;
    expect_train_error(&tr, 20, NF, NO, NULL, NULL, 0, &q, "max_rounds 0");
    q = p, q.nthread = 0;
    expect_train_error(&tr, 20, NF, NO, NULL, NULL, 0, &q, "nthread 0");
    tr.Y[5] = NAN;
    expect_train_error(&tr, 20, NF, NO, NULL, NULL, 0, &p, "NaN target");
    tr.Y[5] = 0;
    tr.X[7] = INFINITY;
    expect_train_error(&tr, 20, NF, NO, NULL, NULL, 0, &p, "infinite input");
    tr.X[7] = 0.5f;

    /* Prediction: empty model, NULL input, n 0 is a no-op. */
    ns_xgb m;
    ns_xgb_init(&m);
    ns_error err = {0};
    float out[NO * 20];
    CHECK(ns_xgb_predict(&m, tr.X, 1, out, &err) == NS_ERR_INPUT);
    q = p, q.max_rounds = 2;
    CHECK(train(&m, &tr, NULL, &q) == NS_OK);
    CHECK(ns_xgb_predict(&m, NULL, 1, out, &err) == NS_ERR_INPUT);
    CHECK(ns_xgb_predict(&m, tr.X, -1, out, &err) == NS_ERR_INPUT);
    CHECK(ns_xgb_predict(&m, tr.X, 0, out, &err) == NS_OK);
    tr.X[0] = -INFINITY;
    CHECK(ns_xgb_predict(&m, tr.X, 20, out, &err) == NS_ERR_INPUT);
    /* NaN inputs are missing values, not errors. */
    tr.X[0] = NAN;
    CHECK(ns_xgb_predict(&m, tr.X, 20, out, &err) == NS_OK);
    ns_buf b;
    ns_buf_init(&b);
    ns_xgb_free(&m);
    CHECK(ns_xgb_save_json(&m, &b, &err) == NS_ERR_INPUT);
    ns_buf_free(&b);
    drop(&tr);
}

int main(void)
{
    NS_RUN(test_learns_two_outputs);
    NS_RUN(test_early_stopping);
    NS_RUN(test_save_load);
    NS_RUN(test_load_bad_text);
    NS_RUN(test_deterministic);
    NS_RUN(test_bad_input);
    return ns_test_summary("xgb");
}
