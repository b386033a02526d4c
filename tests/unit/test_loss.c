/* test_loss.c — losses of loss.h against PyTorch (float64 references in
 * tests/fixtures/nn) and by finite differences: InfoNCE with in-batch
 * negatives, the action-disambiguation loss (per-row candidate counts,
 * padding ignored, the grid variant), cosine distance and MSE with and
 * without a row mask; limits (perfect / uniform predictions, zero vectors)
 * and the paper's sizes (B = 128, K = 50, D = 128). */
#include "nextstate/learn/loss.h"
#include "nextstate/util/blas.h"
#include "test.h"
#include "nn_check.h"

#define ATOL 2e-6
#define RTOL 2e-5
#define TAU 0.07f
#define FD_H 3e-3f
#define FD_ATOL 2e-3
#define FD_RTOL 2e-2

static float *zeros(size_t n) { return calloc(n ? n : 1, sizeof(float)); }

static double ref_scalar(const char *cs, const char *name)
{
    size_t n;
    double *r = nn_f64(cs, name, &n);
    double v = r[0];
    free(r);
    return v;
}

static void cmp_loss(const char *what, float got, double ref)
{
    printf("  %-28s loss %.7g, reference %.7g, |diff| %.3g\n", what, got, ref, fabs(got - ref));
    CHECK(fabs(got - ref) <= 1e-5 + 1e-5 * fabs(ref));
}

/* ---- InfoNCE ------------------------------------------------------------------ */

typedef struct inf_ctx {
    float *pred, *target, *scratch;
    int B, D;
} inf_ctx;

static double inf_obj(void *p)
{
    inf_ctx *c = p;
    return ns_infonce_forward(c->scratch, c->pred, c->target, c->B, c->D, TAU);
}

static void test_infonce_reference(void)
{
    if (!nn_have("infonce")) return;
    inf_ctx c = {0};
    c.B = 6, c.D = 5;
    size_t n = (size_t)c.B * c.D;
    c.pred = nn_f32("infonce", "pred", NULL), c.target = nn_f32("infonce", "target", NULL);
    c.scratch = zeros(ns_infonce_scratch(c.B, c.D));
    float *dp = zeros(n), *dt = zeros(n);
    float loss = ns_infonce_forward(c.scratch, c.pred, c.target, c.B, c.D, TAU);
    ns_infonce_backward(dp, dt, 1.0f, c.scratch, c.B, c.D, TAU);
    cmp_loss("infonce", loss, ref_scalar("infonce", "loss"));
    nn_cmp_fx("infonce", "dpred", dp, n, ATOL, RTOL);
    nn_cmp_fx("infonce", "dtarget", dt, n, ATOL, RTOL);
    /* finite differences of the loss itself */
    inf_obj(&c);
    nn_gradcheck("infonce dpred", inf_obj, &c, c.pred, dp, n, FD_H, FD_ATOL, FD_RTOL);
    nn_gradcheck("infonce dtarget", inf_obj, &c, c.target, dt, n, FD_H, FD_ATOL, FD_RTOL);
    /* dloss scales the gradients, NULL skips one */
    float *dp2 = zeros(n);
    inf_obj(&c);
    ns_infonce_backward(dp2, NULL, 0.5f, c.scratch, c.B, c.D, TAU);
    for (size_t i = 0; i < n; i++) CHECK(fabsf(dp2[i] - 0.5f * dp[i]) <= 1e-6f);
    free(c.pred), free(c.target), free(c.scratch), free(dp), free(dt), free(dp2);
}

static void test_infonce_limits(void)
{
    const int B = 4, D = 3;
    float pred[12], target[12], scratch[256];
    CHECK(ns_infonce_scratch(B, D) <= 256);
    /* orthogonal one-hot pairs, prediction = 5 × target: logits 1/τ on the
     * diagonal, 0 elsewhere */
    memset(pred, 0, sizeof pred), memset(target, 0, sizeof target);
    for (int i = 0; i < 3; i++) target[i * D + i] = 1, pred[i * D + i] = 5;
    target[3 * D + 0] = 1, target[3 * D + 1] = 1, pred[3 * D + 0] = 2, pred[3 * D + 1] = 2;
    float loss = ns_infonce_forward(scratch, pred, target, 3, D, TAU);
    double want = log(1 + 2 * exp(-1.0 / TAU));
    printf("  aligned one-hots: loss %.3g (expected %.3g)\n", loss, want);
    CHECK(fabs(loss - want) < 1e-6);
    /* every prediction identical: loss = log B */
    for (int i = 0; i < B * D; i++) pred[i] = 1.0f, target[i] = (float)(i % D + 1);
    loss = ns_infonce_forward(scratch, pred, target, B, D, TAU);
    CHECK(fabs(loss - log(B)) < 1e-5);
    /* a zero vector gives finite values and gradients */
    memset(pred, 0, D * sizeof(float));
    loss = ns_infonce_forward(scratch, pred, target, B, D, TAU);
    float dp[12] = {0}, dt[12] = {0};
    ns_infonce_backward(dp, dt, 1.0f, scratch, B, D, TAU);
    CHECK(isfinite(loss));
    for (int i = 0; i < B * D; i++) CHECK(isfinite(dp[i]) && isfinite(dt[i]));
}

/* The paper's batch: B = 128, D = 128. */
static void test_infonce_paper_dims(void)
{
    inf_ctx c = {0};
    c.B = 128, c.D = 128;
    size_t n = (size_t)c.B * c.D;
    c.pred = zeros(n), c.target = zeros(n), c.scratch = zeros(ns_infonce_scratch(c.B, c.D));
    nn_fill(c.pred, n, 101, -1, 1), nn_fill(c.target, n, 102, -1, 1);
    for (size_t i = 0; i < n; i++) c.pred[i] += 0.5f * c.target[i];
    float *dp = zeros(n), *dt = zeros(n);
    float loss = ns_infonce_forward(c.scratch, c.pred, c.target, c.B, c.D, TAU);
    ns_infonce_backward(dp, dt, 1.0f, c.scratch, c.B, c.D, TAU);
    printf("  B=128 D=128 loss %.4f (log B = %.4f)\n", loss, log(128.0));
    /* per-entry gradients are ~1/B smaller here: tighter absolute tolerance */
    nn_gradcheck("infonce128 dpred", inf_obj, &c, c.pred, dp, n, 1e-2f, 2e-4, 2e-2);
    nn_gradcheck("infonce128 dtarget", inf_obj, &c, c.target, dt, n, 1e-2f, 2e-4, 2e-2);
    free(c.pred), free(c.target), free(c.scratch), free(dp), free(dt);
}

/* ---- action disambiguation ---------------------------------------------------------------- */

typedef struct act_ctx {
    float *pred, *target, *scratch;
    int32_t *count, *truth;
    int N, K, D;
} act_ctx;

static double act_obj(void *p)
{
    act_ctx *c = p;
    return ns_action_loss_forward(c->scratch, c->pred, c->target, c->count, c->truth, c->N, c->K, c->D, TAU);
}

static void test_action_reference(void)
{
    if (!nn_have("action")) return;
    act_ctx c = {0};
    c.N = 4, c.K = 5, c.D = 6;
    size_t np = (size_t)c.N * c.K * c.D, nt = (size_t)c.N * c.D;
    c.pred = nn_f32("action", "pred", NULL), c.target = nn_f32("action", "target", NULL);
    int64_t *cnt = nn_i64("action", "count", NULL), *tru = nn_i64("action", "truth", NULL);
    int32_t count[4], truth[4];
    for (int i = 0; i < 4; i++) count[i] = (int32_t)cnt[i], truth[i] = (int32_t)tru[i];
    c.count = count, c.truth = truth;
    c.scratch = zeros(ns_action_loss_scratch(c.N, c.K, c.D));
    float *dp = zeros(np), *dt = zeros(nt);
    float loss = act_obj(&c);
    ns_action_loss_backward(dp, dt, 1.0f, c.scratch, count, truth, c.N, c.K, c.D, TAU);
    cmp_loss("action", loss, ref_scalar("action", "loss"));
    nn_cmp_fx("action", "dpred", dp, np, ATOL, RTOL);
    nn_cmp_fx("action", "dtarget", dt, nt, ATOL, RTOL);
    /* padding (1e30 in the fixture) is never touched: its gradient stays 0 */
    for (int i = 0; i < c.N; i++)
        for (int k = count[i]; k < c.K; k++)
            for (int j = 0; j < c.D; j++) CHECK(dp[((size_t)i * c.K + k) * c.D + j] == 0.0f);
    /* finite differences over the valid candidates (padding set to 0 first) */
    for (int i = 0; i < c.N; i++)
        for (int k = count[i]; k < c.K; k++) memset(c.pred + ((size_t)i * c.K + k) * c.D, 0, c.D * sizeof(float));
    nn_gradcheck("action dpred", act_obj, &c, c.pred, dp, np, FD_H, FD_ATOL, FD_RTOL);
    nn_gradcheck("action dtarget", act_obj, &c, c.target, dt, nt, FD_H, FD_ATOL, FD_RTOL);
    /* a row with a single candidate contributes 0 loss and 0 gradient */
    CHECK(count[2] == 1);
    for (int j = 0; j < c.D; j++) CHECK(fabsf(dp[(size_t)2 * c.K * c.D + j]) < 1e-7f);
    free(cnt), free(tru), free(c.pred), free(c.target), free(c.scratch), free(dp), free(dt);
}

static void test_action_grid_reference(void)
{
    if (!nn_have("action_grid")) return;
    act_ctx c = {0};
    c.N = 3, c.K = 3, c.D = 6;
    size_t np = (size_t)c.N * c.N * c.D, nt = (size_t)c.N * c.D;
    c.pred = nn_f32("action_grid", "pred", NULL), c.target = nn_f32("action_grid", "target", NULL);
    c.scratch = zeros(ns_action_loss_scratch(c.N, c.N, c.D));
    float *dp = zeros(np), *dt = zeros(nt);
    float loss = ns_action_grid_forward(c.scratch, c.pred, c.target, c.N, c.D, TAU);
    ns_action_grid_backward(dp, dt, 1.0f, c.scratch, c.N, c.D, TAU);
    cmp_loss("action_grid", loss, ref_scalar("action_grid", "loss"));
    nn_cmp_fx("action_grid", "dpred", dp, np, ATOL, RTOL);
    nn_cmp_fx("action_grid", "dtarget", dt, nt, ATOL, RTOL);
    /* = the general form with K = N, counts N, truth i */
    int32_t count[3] = {3, 3, 3}, truth[3] = {0, 1, 2};
    float l2 = ns_action_loss_forward(c.scratch, c.pred, c.target, count, truth, 3, 3, c.D, TAU);
    CHECK(l2 == loss);
    nn_gradcheck("action_grid dpred", act_obj, &c, c.pred, dp, np, FD_H, FD_ATOL, FD_RTOL);
    nn_gradcheck("action_grid dtarget", act_obj, &c, c.target, dt, nt, FD_H, FD_ATOL, FD_RTOL);
    free(c.pred), free(c.target), free(c.scratch), free(dp), free(dt);
}

/* The paper's form at its size: up to K = 50 alternatives + the true action. */
static void test_action_paper_dims(void)
{
    act_ctx c = {0};
    c.N = 3, c.K = 51, c.D = 128;
    size_t np = (size_t)c.N * c.K * c.D, nt = (size_t)c.N * c.D;
    int32_t count[3] = {51, 17, 2}, truth[3] = {50, 3, 1};
    c.count = count, c.truth = truth;
    c.pred = zeros(np), c.target = zeros(nt), c.scratch = zeros(ns_action_loss_scratch(c.N, c.K, c.D));
    nn_fill(c.pred, np, 201, -1, 1), nn_fill(c.target, nt, 202, -1, 1);
    float *dp = zeros(np), *dt = zeros(nt);
    float loss = act_obj(&c);
    ns_action_loss_backward(dp, dt, 1.0f, c.scratch, count, truth, c.N, c.K, c.D, TAU);
    printf("  N=3 K=51 D=128 loss %.4f\n", loss);
    CHECK(isfinite(loss));
    nn_gradcheck("action51 dpred", act_obj, &c, c.pred, dp, np, 1e-2f, 2e-4, 2e-2);
    nn_gradcheck("action51 dtarget", act_obj, &c, c.target, dt, nt, 1e-2f, 2e-4, 2e-2);
    free(c.pred), free(c.target), free(c.scratch), free(dp), free(dt);
}

/* ---- cosine distance and MSE --------------------------------------------------------------- */

typedef struct cm_ctx {
    float *pred, *target, *scratch;
    const uint8_t *mask;
    int N, D, mse;
} cm_ctx;

static double cm_obj(void *p)
{
    cm_ctx *c = p;
    if (c->mse) return ns_mse_forward(c->pred, c->target, c->mask, c->N, c->D);
    return ns_cosine_loss_forward(c->scratch, c->pred, c->target, c->mask, c->N, c->D);
}

static void test_cosine_mse_reference(void)
{
    if (!nn_have("cosine_mse")) return;
    cm_ctx c = {0};
    c.N = 5, c.D = 4;
    size_t n = (size_t)c.N * c.D;
    c.pred = nn_f32("cosine_mse", "pred", NULL), c.target = nn_f32("cosine_mse", "target", NULL);
    int64_t *m64 = nn_i64("cosine_mse", "mask", NULL);
    uint8_t mask[5];
    for (int i = 0; i < 5; i++) mask[i] = (uint8_t)m64[i];
    c.scratch = zeros(ns_cosine_loss_scratch(c.N));
    for (int masked = 0; masked < 2; masked++) {
        const char *tag = masked ? "_masked" : "";
        c.mask = masked ? mask : NULL;
        for (int mse = 0; mse < 2; mse++) {
            c.mse = mse;
            float *dp = zeros(n), *dt = zeros(n);
            float loss = (float)cm_obj(&c);
            if (mse) ns_mse_backward(dp, dt, 1.0f, c.pred, c.target, c.mask, c.N, c.D);
            else ns_cosine_loss_backward(dp, dt, 1.0f, c.scratch, c.pred, c.target, c.mask, c.N, c.D);
            char name[64], what[64];
            snprintf(name, sizeof name, "%s_loss%s", mse ? "mse" : "cos", tag);
            cmp_loss(name, loss, ref_scalar("cosine_mse", name));
            snprintf(name, sizeof name, "%s_dpred%s", mse ? "mse" : "cos", tag);
            nn_cmp_fx("cosine_mse", name, dp, n, ATOL, RTOL);
            snprintf(name, sizeof name, "%s_dtarget%s", mse ? "mse" : "cos", tag);
            nn_cmp_fx("cosine_mse", name, dt, n, ATOL, RTOL);
            snprintf(what, sizeof what, "%s%s dpred", mse ? "mse" : "cosine", tag);
            nn_gradcheck(what, cm_obj, &c, c.pred, dp, n, FD_H, FD_ATOL, FD_RTOL);
            snprintf(what, sizeof what, "%s%s dtarget", mse ? "mse" : "cosine", tag);
            nn_gradcheck(what, cm_obj, &c, c.target, dt, n, FD_H, FD_ATOL, FD_RTOL);
            free(dp), free(dt);
        }
    }
    /* nothing selected: loss 0, no gradient */
    uint8_t none[5] = {0};
    float dp[20] = {0};
    CHECK(ns_cosine_loss_forward(c.scratch, c.pred, c.target, none, c.N, c.D) == 0.0f);
    ns_cosine_loss_backward(dp, NULL, 1.0f, c.scratch, c.pred, c.target, none, c.N, c.D);
    CHECK(ns_mse_forward(c.pred, c.target, none, c.N, c.D) == 0.0f);
    for (int i = 0; i < 20; i++) CHECK(dp[i] == 0.0f);
    free(m64), free(c.pred), free(c.target), free(c.scratch);
}

/* ---- L2 normalisation ------------------------------------------------------------------------ */

typedef struct l2_ctx {
    float *x, *u, *norm, *du;
    int N, D;
} l2_ctx;

static double l2_obj(void *p)
{
    l2_ctx *c = p;
    ns_l2norm_forward(c->u, c->norm, c->x, c->N, c->D);
    return nn_dot(c->u, c->du, (size_t)c->N * c->D);
}

static void test_l2norm(void)
{
    l2_ctx c = {0};
    c.N = 4, c.D = 7;
    size_t n = (size_t)c.N * c.D;
    c.x = zeros(n), c.u = zeros(n), c.norm = zeros(c.N), c.du = zeros(n);
    nn_fill(c.x, n, 301, -1, 1), nn_fill(c.du, n, 302, -1, 1);
    float *dx = zeros(n);
    l2_obj(&c);
    for (int i = 0; i < c.N; i++) {
        double s = 0;
        for (int j = 0; j < c.D; j++) s += c.u[i * c.D + j] * c.u[i * c.D + j];
        CHECK(fabs(s - 1) < 1e-6);
    }
    ns_l2norm_backward(dx, c.du, c.u, c.norm, c.N, c.D);
    nn_gradcheck("l2norm dx", l2_obj, &c, c.x, dx, n, 1e-3f, FD_ATOL, FD_RTOL);
    /* in place, and a zero row stays zero with the clamp */
    memset(c.x, 0, c.D * sizeof(float));
    ns_l2norm_forward(c.x, c.norm, c.x, c.N, c.D);
    CHECK(c.norm[0] == NS_NORM_EPS && c.x[0] == 0.0f);
    free(c.x), free(c.u), free(c.norm), free(c.du), free(dx);
}

int main(void)
{
    printf("blas backend: %s\n", ns_blas_backend());
    NS_RUN(test_infonce_reference);
    NS_RUN(test_infonce_limits);
    NS_RUN(test_infonce_paper_dims);
    NS_RUN(test_action_reference);
    NS_RUN(test_action_grid_reference);
    NS_RUN(test_action_paper_dims);
    NS_RUN(test_cosine_mse_reference);
    NS_RUN(test_l2norm);
    return ns_test_summary("test_loss");
}
