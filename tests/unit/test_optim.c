/* test_optim.c — AdamW and the linear warm-up against torch.optim.AdamW +
 * lr_scheduler.LinearLR (float32 trajectories in tests/fixtures/nn/adamw),
 * decoupled weight decay and the no_decay flag, a convergence sanity check,
 * and gradient-norm clipping. */
#include "nextstate/learn/optim.h"
#include "test.h"
#include "nn_check.h"

static void test_adamw_vs_torch(void)
{
    if (!nn_have("adamw")) return;
    size_t n, ng, nt, nl;
    float *p0 = nn_f32("adamw", "p0", &n), *grads = nn_f32("adamw", "grads", &ng);
    double *traj = nn_f64("adamw", "traj", &nt), *lrs = nn_f64("adamw", "lrs", &nl);
    int steps = (int)nl;
    CHECK(n == 10 && ng == n * steps && nt == ng);
    ns_params p;
    ns_params_init(&p);
    int64_t shape[1] = {(int64_t)n};
    ns_params_add(&p, "p", 1, shape, NS_INIT_ZEROS, 0);
    ns_error err;
    CHECK(ns_params_alloc(&p, &err) == NS_OK);
    memcpy(p.data, p0, n * sizeof(float));
    ns_adamw o;
    ns_adamw_init(&o, 0.01, 0.05);
    float *mine = calloc(nt, sizeof(float));
    double lr_diff = 0;
    for (int s = 0; s < steps; s++) {
        double lr = o.lr * ns_warmup_factor(s, 4, 0.1);
        lr_diff = fmax(lr_diff, fabs(lr - lrs[s]));
        memcpy(p.grad, grads + s * n, n * sizeof(float));
        ns_adamw_step(&o, &p, lr);
        memcpy(mine + s * n, p.data, n * sizeof(float));
    }
    printf("  learning rates vs LinearLR: max|diff| %.3g\n", lr_diff);
    CHECK(lr_diff < 1e-15);
    CHECK_EQ_INT(o.t, steps);
    nn_cmp("adamw trajectory (float32)", mine, traj, nt, nt, 1e-6, 1e-6);
    nn_cmp_fx("adamw", "m", p.m, n, 1e-7, 1e-6);
    nn_cmp_fx("adamw", "v", p.v, n, 1e-9, 1e-6);
    free(p0), free(grads), free(traj), free(lrs), free(mine);
    ns_params_free(&p);
}

static void test_warmup(void)
{
    if (!nn_have("adamw")) return;
    size_t n;
    double *ref = nn_f64("adamw", "warmup10", &n);
    float got[15];
    for (int e = 0; e < 15 && e < (int)n; e++) got[e] = (float)ns_warmup_factor(e, 10, 0.1);
    nn_cmp("warm-up 0.1→1 over 10 epochs", got, ref, 15, n, 1e-7, 1e-6);
    double lr_gap = 0;
    for (int e = 0; e < 15 && e < (int)n; e++) lr_gap = fmax(lr_gap, fabs(ns_warmup_factor(e, 10, 0.1) - ref[e]));
    printf("  warm-up factor in double: max|diff| %.3g\n", lr_gap);
    CHECK(lr_gap < 1e-15);
    CHECK(ns_warmup_factor(0, 10, 0.1) == 0.1);
    CHECK(ns_warmup_factor(10, 10, 0.1) == 1.0);
    CHECK(ns_warmup_factor(99, 10, 0.1) == 1.0);
    CHECK(ns_warmup_factor(3, 0, 0.1) == 1.0);
    free(ref);
}

/* Weight decay is decoupled (applied to the weights, not the gradient), and
 * tensors flagged no_decay skip it. */
static void test_weight_decay(void)
{
    ns_params p;
    ns_params_init(&p);
    int64_t s[1] = {4};
    ns_params_add(&p, "w", 1, s, NS_INIT_ONES, 0);
    int b = ns_params_add(&p, "b", 1, s, NS_INIT_ONES, 0);
    ns_error err;
    CHECK(ns_params_alloc(&p, &err) == NS_OK);
    ns_params_init_values(&p, 1);
    p.t[b].no_decay = true;
    ns_adamw o;
    ns_adamw_init(&o, 0.1, 0.5);
    ns_adamw_step(&o, &p, o.lr); /* zero gradients: only the decay moves w */
    float *w = ns_params_at(&p, p.data, "w"), *bb = ns_params_at(&p, p.data, "b");
    for (int i = 0; i < 4; i++) {
        CHECK(fabsf(w[i] - 0.95f) < 1e-7f);
        CHECK(bb[i] == 1.0f);
    }
    /* the first step moves each weight by ≈ lr·sign(g) whatever |g| */
    float g[4] = {1e-3f, -5.0f, 200.0f, -0.25f}, x[4] = {0}, m[4] = {0}, v[4] = {0};
    ns_adamw_update(x, g, m, v, 4, 0.01, 0.9, 0.999, 1e-8, 0.0, 1);
    for (int i = 0; i < 4; i++) CHECK(fabsf(x[i] + 0.01f * (g[i] > 0 ? 1 : -1)) < 1e-6f);
    ns_params_free(&p);
}

/* AdamW with warm-up minimises a badly scaled quadratic. */
static void test_adamw_converges(void)
{
    ns_params p;
    ns_params_init(&p);
    int64_t s[1] = {8};
    ns_params_add(&p, "x", 1, s, NS_INIT_UNIFORM, 3.0f);
    ns_error err;
    CHECK(ns_params_alloc(&p, &err) == NS_OK);
    ns_params_init_values(&p, 42);
    ns_adamw o;
    ns_adamw_init(&o, 0.05, 0.0);
    double f0 = 0, f = 0;
    for (int it = 0; it < 800; it++) {
        f = 0;
        for (int i = 0; i < 8; i++) {
            double sc = pow(10.0, i % 4 - 1), d = p.data[i] - 1.0;
            f += sc * d * d;
            p.grad[i] = (float)(2 * sc * d);
        }
        if (it == 0) f0 = f;
        ns_adamw_step(&o, &p, o.lr * ns_warmup_factor(it, 50, 0.1));
    }
    printf("  quadratic: f %.3g → %.3g\n", f0, f);
    CHECK(f < 1e-3 * f0);
    ns_params_free(&p);
}

static void test_clip_grad_norm(void)
{
    ns_params p;
    ns_params_init(&p);
    int64_t s1[1] = {2}, s2[2] = {1, 1};
    ns_params_add(&p, "a", 1, s1, NS_INIT_ZEROS, 0);
    ns_params_add(&p, "b", 2, s2, NS_INIT_ZEROS, 0);
    ns_error err;
    CHECK(ns_params_alloc(&p, &err) == NS_OK);
    float *a = ns_params_at(&p, p.grad, "a"), *b = ns_params_at(&p, p.grad, "b");
    a[0] = 3, a[1] = 0, b[0] = 4; /* norm 5 */
    float n = ns_clip_grad_norm(&p, 10.0f);
    CHECK(fabsf(n - 5.0f) < 1e-6f && a[0] == 3.0f && b[0] == 4.0f);
    n = ns_clip_grad_norm(&p, 1.0f);
    CHECK(fabsf(n - 5.0f) < 1e-6f);
    CHECK(fabsf(a[0] - 0.6f) < 1e-6f && fabsf(b[0] - 0.8f) < 1e-6f);
    ns_params_free(&p);
}

int main(void)
{
    NS_RUN(test_adamw_vs_torch);
    NS_RUN(test_warmup);
    NS_RUN(test_weight_decay);
    NS_RUN(test_adamw_converges);
    NS_RUN(test_clip_grad_norm);
    return ns_test_summary("test_optim");
}
