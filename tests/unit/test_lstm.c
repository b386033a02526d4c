/* test_lstm.c — the stacked LSTM of lstm.h against torch.nn.LSTM (float64
 * references in tests/fixtures/nn/lstm*: 2 layers with initial states and
 * gradients into h_n, c_n; 1 layer without bias or initial state), finite
 * differences through time for every gradient, single steps against the
 * sequence forward, and parameter declaration with torch's names. */
#include "nextstate/learn/lstm.h"
#include "nextstate/util/blas.h"
#include "test.h"
#include "nn_check.h"

#define ATOL 2e-6
#define RTOL 2e-5
#define FD_H 1e-2f
#define FD_ATOL 2e-3
#define FD_RTOL 1e-2

static float *zeros(size_t n) { return calloc(n ? n : 1, sizeof(float)); }

/* Sizes of the four tensors of layer k. */
static size_t wsize(ns_lstm_dims d, int which, int k)
{
    size_t h4 = 4 * (size_t)d.hidden;
    return which == 0 ? h4 * (k ? d.hidden : d.input) : which == 1 ? h4 * d.hidden : h4;
}

static float **wslot(ns_lstm_w *w, int which, int k)
{
    return which == 0 ? &w->w_ih[k] : which == 1 ? &w->w_hh[k] : which == 2 ? &w->b_ih[k] : &w->b_hh[k];
}

static const char *const wname[4] = {"weight_ih_l%d", "weight_hh_l%d", "bias_ih_l%d", "bias_hh_l%d"};

typedef struct lstm_ctx {
    ns_lstm_dims d;
    int T, B;
    ns_lstm_w w;
    float *x, *h0, *c0, *dy, *dhn, *dcn, *y, *hn, *cn, *scratch;
} lstm_ctx;

static double lstm_obj(void *p)
{
    lstm_ctx *c = p;
    ns_lstm_forward(c->y, c->hn, c->cn, c->scratch, c->x, c->h0, c->c0, &c->w, c->d, c->T, c->B);
    size_t lbh = (size_t)c->d.layers * c->B * c->d.hidden;
    double s = nn_dot(c->y, c->dy, (size_t)c->T * c->B * c->d.hidden);
    if (c->dhn) s += nn_dot(c->hn, c->dhn, lbh);
    if (c->dcn) s += nn_dot(c->cn, c->dcn, lbh);
    return s;
}

static void run_reference(const char *cs, ns_lstm_dims d, int T, int B, bool state, bool bias)
{
    if (!nn_have(cs)) return;
    lstm_ctx c = {0};
    c.d = d, c.T = T, c.B = B;
    ns_lstm_w g = {0};
    char name[64], dname[80];
    for (int k = 0; k < d.layers; k++)
        for (int which = 0; which < (bias ? 4 : 2); which++) {
            snprintf(name, sizeof name, wname[which], k);
            *wslot(&c.w, which, k) = nn_f32(cs, name, NULL);
            *wslot(&g, which, k) = zeros(wsize(d, which, k));
        }
    size_t tbi = (size_t)T * B * d.input, tbh = (size_t)T * B * d.hidden, lbh = (size_t)d.layers * B * d.hidden;
    c.x = nn_f32(cs, "x", NULL), c.dy = nn_f32(cs, "dy", NULL);
    if (state) {
        c.h0 = nn_f32(cs, "h0", NULL), c.c0 = nn_f32(cs, "c0", NULL);
        c.dhn = nn_f32(cs, "dhn", NULL), c.dcn = nn_f32(cs, "dcn", NULL);
    }
    c.y = zeros(tbh), c.hn = zeros(lbh), c.cn = zeros(lbh), c.scratch = zeros(ns_lstm_scratch(d, T, B));
    float *dx = zeros(tbi), *dh0 = zeros(lbh), *dc0 = zeros(lbh);
    lstm_obj(&c);
    ns_lstm_backward(dx, state ? dh0 : NULL, state ? dc0 : NULL, &g, c.dy, c.dhn, c.dcn, c.scratch, c.x, c.h0,
                     c.c0, &c.w, d, T, B);
    nn_cmp_fx(cs, "y", c.y, tbh, ATOL, RTOL);
    nn_cmp_fx(cs, "hn", c.hn, lbh, ATOL, RTOL);
    nn_cmp_fx(cs, "cn", c.cn, lbh, ATOL, RTOL);
    nn_cmp_fx(cs, "dx", dx, tbi, ATOL, RTOL);
    if (state) {
        nn_cmp_fx(cs, "dh0", dh0, lbh, ATOL, RTOL);
        nn_cmp_fx(cs, "dc0", dc0, lbh, ATOL, RTOL);
    }
    for (int k = 0; k < d.layers; k++)
        for (int which = 0; which < (bias ? 4 : 2); which++) {
            snprintf(name, sizeof name, wname[which], k);
            snprintf(dname, sizeof dname, "d%s", name);
            nn_cmp_fx(cs, dname, *wslot(&g, which, k), wsize(d, which, k), ATOL, RTOL);
        }
    for (int k = 0; k < d.layers; k++)
        for (int which = 0; which < 4; which++) free(*wslot(&c.w, which, k)), free(*wslot(&g, which, k));
    free(c.x), free(c.dy), free(c.h0), free(c.c0), free(c.dhn), free(c.dcn), free(c.y), free(c.hn), free(c.cn);
    free(c.scratch), free(dx), free(dh0), free(dc0);
}

static void test_lstm_reference(void) { run_reference("lstm", (ns_lstm_dims){2, 5, 4}, 3, 2, true, true); }

static void test_lstm_reference_plain(void)
{
    run_reference("lstm1", (ns_lstm_dims){1, 3, 5}, 4, 3, false, false);
}

/* Finite differences through time of Σ y·dy + Σ h_n·dh_n + Σ c_n·dc_n. */
static void lstm_gradcheck(ns_lstm_dims d, int T, int B, uint64_t seed, float h, double atol, size_t maxn)
{
    lstm_ctx c = {0};
    c.d = d, c.T = T, c.B = B;
    ns_lstm_w g = {0};
    float bound = 1.0f / sqrtf((float)d.hidden);
    for (int k = 0; k < d.layers; k++)
        for (int which = 0; which < 4; which++) {
            *wslot(&c.w, which, k) = zeros(wsize(d, which, k));
            *wslot(&g, which, k) = zeros(wsize(d, which, k));
            nn_fill(*wslot(&c.w, which, k), wsize(d, which, k), seed + 10 * k + which, -bound, bound);
        }
    size_t tbi = (size_t)T * B * d.input, tbh = (size_t)T * B * d.hidden, lbh = (size_t)d.layers * B * d.hidden;
    c.x = zeros(tbi), c.dy = zeros(tbh), c.h0 = zeros(lbh), c.c0 = zeros(lbh), c.dhn = zeros(lbh);
    c.dcn = zeros(lbh), c.y = zeros(tbh), c.hn = zeros(lbh), c.cn = zeros(lbh);
    c.scratch = zeros(ns_lstm_scratch(d, T, B));
    nn_fill(c.x, tbi, seed + 100, -1, 1), nn_fill(c.dy, tbh, seed + 101, -1, 1);
    nn_fill(c.h0, lbh, seed + 102, -0.5f, 0.5f), nn_fill(c.c0, lbh, seed + 103, -0.5f, 0.5f);
    nn_fill(c.dhn, lbh, seed + 104, -1, 1), nn_fill(c.dcn, lbh, seed + 105, -1, 1);
    float *dx = zeros(tbi), *dh0 = zeros(lbh), *dc0 = zeros(lbh);
    lstm_obj(&c);
    ns_lstm_backward(dx, dh0, dc0, &g, c.dy, c.dhn, c.dcn, c.scratch, c.x, c.h0, c.c0, &c.w, d, T, B);
    char what[64];
    snprintf(what, sizeof what, "lstm H%d dx", d.hidden);
    nn_gradcheck_max(what, lstm_obj, &c, c.x, dx, tbi, h, atol, FD_RTOL, maxn);
    snprintf(what, sizeof what, "lstm H%d dh0", d.hidden);
    nn_gradcheck_max(what, lstm_obj, &c, c.h0, dh0, lbh, h, atol, FD_RTOL, maxn);
    snprintf(what, sizeof what, "lstm H%d dc0", d.hidden);
    nn_gradcheck_max(what, lstm_obj, &c, c.c0, dc0, lbh, h, atol, FD_RTOL, maxn);
    for (int k = 0; k < d.layers; k++)
        for (int which = 0; which < 4; which++) {
            char nm[32];
            snprintf(nm, sizeof nm, wname[which], k);
            snprintf(what, sizeof what, "lstm H%d d%s", d.hidden, nm);
            nn_gradcheck_max(what, lstm_obj, &c, *wslot(&c.w, which, k), *wslot(&g, which, k), wsize(d, which, k),
                             h, atol, FD_RTOL, maxn);
        }
    for (int k = 0; k < d.layers; k++)
        for (int which = 0; which < 4; which++) free(*wslot(&c.w, which, k)), free(*wslot(&g, which, k));
    free(c.x), free(c.dy), free(c.h0), free(c.c0), free(c.dhn), free(c.dcn), free(c.y), free(c.hn), free(c.cn);
    free(c.scratch), free(dx), free(dh0), free(dc0);
}

static void test_lstm_gradcheck(void) { lstm_gradcheck((ns_lstm_dims){2, 4, 3}, 5, 2, 400, FD_H, FD_ATOL, 200); }

static void test_lstm_gradcheck_three_layers(void)
{
    lstm_gradcheck((ns_lstm_dims){3, 2, 5}, 3, 1, 500, FD_H, FD_ATOL, 200);
}

/* The first paper's size: 2 layers, hidden 256 (input kept small; 24
 * spread entries per tensor keep the test quick). */
static void test_lstm_gradcheck_paper_dims(void)
{
    lstm_gradcheck((ns_lstm_dims){2, 24, 256}, 3, 2, 600, 1e-2f, 1e-3, 24);
}

/* ns_lstm_step T times = the sequence forward; declare/bind use torch's names. */
static void test_lstm_step_and_params(void)
{
    ns_lstm_dims d = {2, 3, 4};
    const int T = 5, B = 2;
    ns_params p;
    ns_params_init(&p);
    CHECK(ns_lstm_declare(&p, "lstm", d, true) == 0);
    ns_error err;
    CHECK(ns_params_alloc(&p, &err) == NS_OK);
    CHECK_EQ_INT(p.n, 8);
    CHECK_STR(p.t[0].name, "lstm.weight_ih_l0");
    CHECK_STR(p.t[1].name, "lstm.weight_hh_l0");
    CHECK_STR(p.t[7].name, "lstm.bias_hh_l1");
    CHECK_EQ_INT(p.t[0].shape[0], 16);
    CHECK_EQ_INT(p.t[0].shape[1], 3);
    CHECK_EQ_INT(p.t[4].shape[1], 4);
    ns_params_init_values(&p, 7);
    float bound = 0.5f; /* 1/√4 */
    for (size_t i = 0; i < p.total; i++) CHECK(fabsf(p.data[i]) <= bound);
    ns_lstm_w w, g;
    ns_lstm_bind(&w, &p, p.data, "lstm", d);
    ns_lstm_bind(&g, &p, p.grad, "lstm", d);
    CHECK(w.w_ih[0] == p.data && w.b_hh[1] == ns_params_at(&p, p.data, "lstm.bias_hh_l1"));
    CHECK(g.w_hh[1] == ns_params_at(&p, p.grad, "lstm.weight_hh_l1"));
    float x[5 * 2 * 3], y[5 * 2 * 4], hn[16], cn[16], h0[16], c0[16];
    nn_fill(x, sizeof x / 4, 700, -1, 1), nn_fill(h0, 16, 701, -1, 1), nn_fill(c0, 16, 702, -1, 1);
    float *scratch = zeros(ns_lstm_scratch(d, T, B));
    ns_lstm_forward(y, hn, cn, scratch, x, h0, c0, &w, d, T, B);
    float h[16], c[16], yt[8], *ss = zeros(ns_lstm_step_scratch(d, B));
    memcpy(h, h0, sizeof h), memcpy(c, c0, sizeof c);
    double mx = 0;
    for (int t = 0; t < T; t++) {
        ns_lstm_step(yt, h, c, ss, x + t * B * 3, &w, d, B);
        for (int i = 0; i < B * 4; i++) mx = fmax(mx, fabs(yt[i] - y[t * B * 4 + i]));
    }
    for (int i = 0; i < 16; i++) mx = fmax(mx, fmax(fabs(h[i] - hn[i]), fabs(c[i] - cn[i])));
    printf("  %d single steps vs sequence forward: max|diff| %.3g\n", T, mx);
    CHECK(mx < 1e-6);
    /* an empty sequence: h_n = h_0, c_n = c_0, and their gradients pass through */
    float dh0[16] = {0}, dc0[16] = {0}, dhn[16], dcn[16];
    nn_fill(dhn, 16, 703, -1, 1), nn_fill(dcn, 16, 704, -1, 1);
    ns_lstm_forward(NULL, hn, cn, scratch, x, h0, c0, &w, d, 0, B);
    ns_lstm_backward(NULL, dh0, dc0, &g, NULL, dhn, dcn, scratch, x, h0, c0, &w, d, 0, B);
    CHECK(memcmp(hn, h0, sizeof hn) == 0 && memcmp(cn, c0, sizeof cn) == 0);
    CHECK(memcmp(dh0, dhn, sizeof dh0) == 0 && memcmp(dc0, dcn, sizeof dc0) == 0);
    /* bad dimensions are a sticky declaration error */
    ns_params q;
    ns_params_init(&q);
    CHECK(ns_lstm_declare(&q, "x", (ns_lstm_dims){NS_LSTM_MAX_LAYERS + 1, 3, 4}, true) < 0);
    CHECK(ns_params_alloc(&q, &err) == NS_ERR_INTERNAL);
    ns_params_free(&q);
    free(scratch), free(ss);
    ns_params_free(&p);
}

int main(void)
{
    printf("blas backend: %s\n", ns_blas_backend());
    NS_RUN(test_lstm_reference);
    NS_RUN(test_lstm_reference_plain);
    NS_RUN(test_lstm_gradcheck);
    NS_RUN(test_lstm_gradcheck_three_layers);
    NS_RUN(test_lstm_gradcheck_paper_dims);
    NS_RUN(test_lstm_step_and_params);
    return ns_test_summary("test_lstm");
}
