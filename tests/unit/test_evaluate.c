/* test_evaluate.c — the evaluations beyond per-transition Hit@k (evaluate.h):
 * a pool-size sweep row with the split's size and the same draw is exactly
 * ns_eval_world on those pools, sizes past every candidate set equal the full
 * pool, and the full pool never scores better than a pool it contains;
 * plan-level teacher-forced per-step Hit equals the per-transition Hit of the
 * plans' steps, with exact ≤ plan mean ≤ 1; the three rollout regimes
 * coincide at depth 1 and the runs of a list that holds every transition are
 * the plans; and a hand-built case — chosen plans over a dataset copy, a
 * model whose every score ties — where every count is known; per-query
 * outcomes (ns_eval_world_queries) leave the metrics unchanged and their
 * misses' top-1 states lie in the pools; the cost-to-go buckets and the
 * miss histograms add up; the fact difference of ferry's actions (board /
 * debark 3, sail 2) by bitset and by text; query-state features. */
#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include "gen_fixture.h"
#include "nextstate/data/dataset.h"
#include "nextstate/eval/breakdown.h"
#include "nextstate/eval/evaluate.h"
#include "nextstate/data/split.h"
#include "nextstate/learn/world.h"
#include "test.h"

static char tmpdir[256];
static ns_dataset DS;
static const ns_dataset *DSP[1] = {&DS};
static bool ready;
static ns_split SP;
static ns_world W;
static ns_world_inputs IN;
static ns_vocab SV, AV;
static ns_refs ALL; /* every transition of DS */

static bool setup(void)
{
    char pdir[400];
    snprintf(pdir, sizeof pdir, "%s/problems", tmpdir);
    ns_gen_arg a[1] = {{"cars", 3}};
    enum { NP = 6 };
    char **paths = ns_test_gen_problems(pdir, "ferry", a, 1, NP, 11, true);
    if (!paths) return false;
    ns_dataset_opts o = {NS_SPACE_OPTIMAL, 0, 8, 7, 0, false, false};
    ns_error e;
    bool ok = ns_dataset_build(&DS, "domains/ferry/domain.pddl", (const char *const *)paths, NP, &o, &e) == NS_OK;
    ns_test_free_paths(paths, NP);
    if (!ok) return printf("  dataset: %s\n", e.msg), false;
    ns_split_opts so = {0};
    so.protocol = NS_PROTO_INTERPOLATION;
    so.pool_size = 128;
    so.seed = 1;
    if (ns_split_make(&SP, DSP, 1, &so, &e) != NS_OK) return printf("  split: %s\n", e.msg), false;
    ns_vocab_init(&SV);
    ns_vocab_init(&AV);
    ns_builtin_fit_split(&SV, &AV, DSP, 1, &SP);
    if (ns_world_inputs_load(&IN, DSP, 1, "builtin", "builtin", &SV, &AV, &e) != NS_OK) return false;
    ns_world_config c;
    ns_world_config_init(&c);
    c.state_dim = (int)IN.state.dim;
    c.action_dim = (int)IN.action.dim;
    c.state_sparse = c.action_sparse = true;
    c.state_hidden = c.action_hidden = 64;
    if (ns_world_create(&W, &c, 1, &e) != NS_OK) return false;
    ns_train_opts to;
    ns_eval_train_opts_init(&to);
    to.lr = 2e-3;
    to.epochs = 2; /* a partly trained model: hits neither all 0 nor all 1 */
    to.warmup_epochs = 2;
    to.batch = 64;
    to.eval_every = 4;
    ns_train_stats st;
    if (ns_world_train(&W, &IN, &SP, &to, &st, &e) != NS_OK) return printf("  train: %s\n", e.msg), false;
    ALL.n = ns_dataset_ntransitions(&DS);
    ALL.ref = malloc((size_t)ALL.n * 2 * sizeof(int64_t));
    for (int64_t t = 0; t < ALL.n; t++) ALL.ref[2 * t] = 0, ALL.ref[2 * t + 1] = t;
    printf("  %lld states, %lld transitions, %lld plans\n", (long long)ns_dataset_nstates(&DS), (long long)ALL.n,
           (long long)DS.plan_problem.shape[0]);
    return true;
}

static ns_eval_opts plain_opts(uint64_t seed)
{
    ns_eval_opts o;
    ns_eval_opts_init(&o);
    o.seed = seed;
    o.acc = false;
    o.latency_queries = 0;
    return o;
}

/* ---- pool-size sweep ----------------------------------------------------------------- */

static void test_sweep_reproduces_eval(void)
{
    if (!ready) return;
    ns_protocol protos[2] = {NS_PROTO_INTERPOLATION, NS_PROTO_EXTRAPOLATION};
    for (int p = 0; p < 2; p++) {
        ns_split v = SP; /* the split's rules under protocol p */
        v.protocol = protos[p];
        int64_t *pools = ns_split_pools_draw(&v, DSP, &SP.test, SP.pool_size, 77);
        ns_eval_opts o = plain_opts(5);
        ns_eval_result r;
        ns_error e;
        CHECK(ns_eval_world(&W, &IN, &SP.test, pools, SP.pool_size, &o, &r, &e) == NS_OK);
        int sizes[4] = {SP.pool_size, 0, 1000000, 16};
        ns_eval_sweep s[4];
        CHECK(ns_eval_pool_sweep(&W, &IN, &SP.test, &v, sizes, 4, 77, 5, s, &e) == NS_OK);
        printf("  %s: hit@5 %.3f (pool %.1f), full %.3f (pool %.1f), 16: %.3f\n", ns_protocol_name(protos[p]), s[0].hit[1],
               s[0].mean_pool, s[1].hit[1], s[1].mean_pool, s[3].hit[1]);
        /* N = the split's size, same draw: exactly the ordinary evaluation */
        CHECK(s[0].pool == SP.pool_size && s[0].n == r.n && s[0].mean_pool == r.mean_pool);
        for (int k = 0; k < 3; k++) CHECK(s[0].hit[k] == r.hit[k] && s[0].hit_worst[k] == r.hit_worst[k]);
        CHECK(s[0].mrr == r.mrr);
        /* a pool wider than every candidate set holds them all: the full pool's candidates */
        CHECK(s[1].pool == 0 && s[2].pool == 1000000);
        CHECK(s[1].mean_pool == s[2].mean_pool);
        for (int k = 0; k < 3; k++) CHECK(s[1].hit_worst[k] == s[2].hit_worst[k]);
        /* the full pool contains the 128-pool: it cannot score better (worst ties: no draw) */
        for (int k = 0; k < 3; k++) CHECK(s[1].hit_worst[k] <= s[0].hit_worst[k]);
        CHECK(s[1].mean_pool >= s[0].mean_pool && s[3].mean_pool <= 16);
        /* the test needs a model that ranks: neither chance nor perfect */
        CHECK(s[0].hit[1] > 0.2 && s[1].hit_worst[0] < 1);
        free(pools);
    }
    /* the full pool of interpolation is the dataset, of extrapolation the problem */
    int sizes[1] = {0};
    ns_eval_sweep a, b;
    ns_error e;
    ns_split pv = SP;
    pv.protocol = NS_PROTO_PLAN_VARIANT;
    CHECK(ns_eval_pool_sweep(&W, &IN, &ALL, &SP, sizes, 1, 1, 1, &a, &e) == NS_OK);
    CHECK(ns_eval_pool_sweep(&W, &IN, &ALL, &pv, sizes, 1, 1, 1, &b, &e) == NS_OK);
    double want = 0;
    for (int64_t t = 0; t < ALL.n; t++) want += (double)DS.problems[ns_dataset_transition(&DS, t)[0]].nstates;
    CHECK(a.mean_pool == (double)ns_dataset_nstates(&DS));
    CHECK(fabs(b.mean_pool - want / (double)ALL.n) < 1e-9);
}

/* ---- plan-level ------------------------------------------------------------------------ */

static void test_plans_teacher_forced(void)
{
    if (!ready) return;
    int64_t *pools = ns_split_pools_draw(&SP, DSP, &ALL, 64, 3);
    ns_eval_plan_result r;
    ns_error e;
    CHECK(ns_eval_plans(&W, &IN, &ALL, pools, 64, NULL, 9, &r, &e) == NS_OK);
    /* every transition listed: every plan is whole */
    int64_t K = DS.plan_problem.shape[0];
    const int64_t *po = DS.plan_offsets.data, *pt = DS.plan_transitions.data;
    CHECK_EQ_INT(r.n, K);
    CHECK_EQ_INT(r.steps, po[K]);
    CHECK(fabs(r.mean_len - (double)po[K] / (double)K) < 1e-12);
    /* per-step Hit (worst ties: no draw) = each transition's own Hit, step by step */
    double h1 = 0, h5 = 0;
    ns_eval_opts o = plain_opts(1);
    for (int64_t j = 0; j < po[K]; j++) {
        int64_t ref[2] = {0, pt[j]};
        ns_refs one = {ref, 1};
        ns_eval_result q;
        CHECK(ns_eval_world(&W, &IN, &one, pools + pt[j] * 64, 64, &o, &q, &e) == NS_OK);
        h1 += q.hit_worst[0];
        h5 += q.hit_worst[1];
    }
    printf("  %lld plans, %lld steps: Hit@1 %.3f (worst %.3f), Hit@5 %.3f, plan mean %.3f, exact %.3f\n",
           (long long)r.n, (long long)r.steps, r.hit[0], r.hit_worst[0], r.hit[1], r.plan_mean, r.exact);
    CHECK(r.hit_worst[0] == h1 / (double)po[K]);
    CHECK(r.hit_worst[1] == h5 / (double)po[K]);
    CHECK(r.exact <= r.plan_mean && r.plan_mean <= 1 && r.exact >= 0);
    CHECK(r.hit_worst[0] <= r.hit[0] + 1e-12 && r.hit[0] <= r.hit[1]);
    /* the test list of an interpolation split holds few whole plans; none is a clean 0 */
    ns_refs none = {ALL.ref, 0};
    CHECK(ns_eval_plans(&W, &IN, &none, pools, 64, NULL, 9, &r, &e) == NS_OK);
    CHECK(r.n == 0 && r.steps == 0 && isnan(r.exact) && isnan(r.hit[1]));
    ns_buf b;
    ns_buf_init(&b);
    ns_eval_plans_json(&r, &b);
    CHECK(strstr(b.data, "\"exact_hit@5\": null") && !strstr(b.data, "nan"));
    ns_buf_free(&b);
    free(pools);
}

/* ---- rollout ---------------------------------------------------------------------------- */

static void test_rollout_depth_one(void)
{
    if (!ready) return;
    int64_t *pools = ns_split_pools_draw(&SP, DSP, &ALL, 100, 4);
    ns_eval_rollout_result r;
    ns_error e;
    CHECK(ns_eval_rollout(&W, &IN, &ALL, pools, 100, 2, &r, &e) == NS_OK);
    /* every transition listed: the runs are the (distinct) plans */
    int64_t K = DS.plan_problem.shape[0];
    const int64_t *po = DS.plan_offsets.data;
    CHECK_EQ_INT(r.runs, K);
    CHECK_EQ_INT(r.steps, po[K]);
    for (int d = 1; d <= r.depths; d++) {
        int64_t want = 0;
        for (int64_t p = 0; p < K; p++) want += po[p + 1] - po[p] >= d;
        CHECK_EQ_INT(r.depth[d - 1].n, want);
    }
    CHECK(r.depths >= 3);
    /* depth 1: no feedback yet, the regimes coincide */
    for (int k = 0; k < 2; k++) {
        CHECK(r.depth[0].hit[NS_ROLL_SNAPPED][k] == r.depth[0].hit[NS_ROLL_TEACHER][k]);
        CHECK(r.depth[0].hit[NS_ROLL_UNSNAPPED][k] == r.depth[0].hit[NS_ROLL_TEACHER][k]);
    }
    printf("  %lld runs; depth 1 Hit@1 %.3f; from depth 2 teacher %.3f snapped %.3f unsnapped %.3f; drift %.3f → %.3f\n",
           (long long)r.runs, r.depth[0].hit[0][0], r.deep.hit[0][0], r.deep.hit[1][0], r.deep.hit[2][0],
           r.depth[0].drift, r.deep.drift);
    /* aggregates are the depth rows weighted by n */
    double s = 0;
    for (int d = 0; d < r.depths; d++) s += r.depth[d].hit[NS_ROLL_SNAPPED][0] * (double)r.depth[d].n;
    CHECK(fabs(s / (double)r.all.n - r.all.hit[NS_ROLL_SNAPPED][0]) < 1e-12);
    CHECK(r.all.n == r.steps && r.deep.n == r.steps - r.depth[0].n);
    CHECK(r.depth[0].drift > 0 && r.depth[0].drift <= 1.0001);
    /* deterministic */
    ns_eval_rollout_result r2;
    CHECK(ns_eval_rollout(&W, &IN, &ALL, pools, 100, 2, &r2, &e) == NS_OK);
    CHECK(!memcmp(&r.all, &r2.all, sizeof r.all) && !memcmp(&r.deep, &r2.deep, sizeof r.deep));
    ns_eval_rollout_free(&r2);
    ns_eval_rollout_free(&r);
    free(pools);
}

/* ---- a hand-built case ------------------------------------------------------------------- */

static void test_hand_built(void)
{
    if (!ready) return;
    /* DS with five chosen "plans" over transitions 0 … 11 (ids, not real plans) */
    static int64_t off[6] = {0, 4, 8, 13, 14, 16};
    static int64_t tr[16] = {0, 1, 2, 3, /* P0 */ 0, 1, 2, 3, /* P1 = P0 */ 4, 5, 6, 7, 8, /* P2 */ 9, /* P3 */
                             10, 11 /* P4 */};
    static int32_t prob[5] = {0, 0, 0, 0, 0};
    ns_dataset D2 = DS; /* shallow: shares DS's buffers, never freed */
    D2.plan_offsets.data = off, D2.plan_offsets.shape[0] = 6;
    D2.plan_transitions.data = tr, D2.plan_transitions.shape[0] = 16;
    D2.plan_problem.data = prob, D2.plan_problem.shape[0] = 5;
    const ns_dataset *d2[1] = {&D2};
    ns_world_inputs in;
    ns_error e;
    CHECK(ns_world_inputs_load(&in, d2, 1, "builtin", "builtin", &SV, &AV, &e) == NS_OK);
    /* the list: 0 … 5, 7, 8, 9 and one transition on no plan (20); not 6, 10, 11 */
    int64_t ref[20];
    int64_t ids[10] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 20};
    for (int i = 0; i < 10; i++) ref[2 * i] = 0, ref[2 * i + 1] = ids[i];
    ns_refs L = {ref, 10};
    /* a model whose every output is 0: every score ties */
    ns_world z;
    CHECK(ns_world_create(&z, &W.cfg, 1, &e) == NS_OK);
    memset(z.p.data, 0, z.p.total * sizeof(float));
    int64_t *pools = ns_split_pools_draw(&SP, d2, &L, 4, 1);
    ns_eval_plan_result p;
    CHECK(ns_eval_plans(&z, &in, &L, pools, 4, NULL, 1, &p, &e) == NS_OK);
    /* whole plans: P0, P1 (4 steps each), P3 (1 step) */
    CHECK_EQ_INT(p.n, 3);
    CHECK_EQ_INT(p.steps, 9);
    CHECK(p.mean_len == 3.0);
    /* 4 tying candidates: worst rank 4 — never a Hit@1, always a Hit@5; any draw is a Hit@5 */
    CHECK(p.hit_worst[0] == 0 && p.hit_worst[1] == 1 && p.hit[1] == 1);
    CHECK(p.plan_mean == 1 && p.exact == 1);
    ns_eval_rollout_result r;
    CHECK(ns_eval_rollout(&z, &in, &L, pools, 4, 1, &r, &e) == NS_OK);
    /* runs: 0-1-2-3 (P1 repeats it), 4-5, 7-8, 9 */
    CHECK_EQ_INT(r.runs, 4);
    CHECK_EQ_INT(r.steps, 9);
    CHECK_EQ_INT(r.depths, 4);
    CHECK(r.depths == 4 && r.depth[0].n == 4 && r.depth[1].n == 3 && r.depth[2].n == 1 && r.depth[3].n == 1);
    CHECK(r.deep.n == 5 && r.all.n == 9 && r.mean_len == 9.0 / 4.0);
    for (int g = 0; g < NS_ROLL_REGIMES; g++) CHECK(r.all.hit[g][1] == 1);
    CHECK(r.all.drift == 0); /* a zero prediction has cosine 0 to everything */
    ns_eval_rollout_free(&r);
    /* pool sweep of the tying model: pools of 4 are never worst-case Hit@1, always Hit@5;
     * the full pool (the dataset, > 10 states) never a worst-case Hit@10 */
    int sizes[2] = {4, 0};
    ns_eval_sweep s[2];
    CHECK(ns_eval_pool_sweep(&z, &in, &L, &SP, sizes, 2, 1, 1, s, &e) == NS_OK);
    CHECK(s[0].mean_pool == 4 && s[0].hit_worst[0] == 0 && s[0].hit_worst[1] == 1 && s[0].hit[1] == 1);
    CHECK(ns_dataset_nstates(&DS) > 10 && s[1].hit_worst[2] == 0);
    CHECK(s[1].mean_pool == (double)ns_dataset_nstates(&DS));
    /* the list without any plan: no plans, no runs, nothing divided by zero */
    ns_refs one = {ref + 18, 1};
    CHECK(ns_eval_plans(&z, &in, &one, pools + 9 * 4, 4, NULL, 1, &p, &e) == NS_OK && p.n == 0);
    CHECK(ns_eval_rollout(&z, &in, &one, pools + 9 * 4, 4, 1, &r, &e) == NS_OK && r.runs == 0 && r.depths == 0);
    CHECK(isnan(r.retention[0]) && r.all.n == 0);
    ns_buf b;
    ns_buf_init(&b);
    ns_eval_rollout_json(&r, &b);
    CHECK(strstr(b.data, "\"depths\": []") && !strstr(b.data, "nan"));
    ns_buf_free(&b);
    ns_eval_rollout_free(&r);
    free(pools);
    ns_world_free(&z);
    ns_world_inputs_free(&in);
}

/* ---- the feature-twin ceiling -------------------------------------------------------- */

static void test_ceiling(void)
{
    if (!ready) return;
    ns_eval_opts o = plain_opts(3);
    ns_eval_result r;
    ns_error e;
    /* literal features tell ferry states apart: no twins, ceiling 1 */
    CHECK(ns_eval_world(&W, &IN, &SP.test, SP.pools, SP.pool_size, &o, &r, &e) == NS_OK);
    CHECK(r.twin_queries == 0 && r.ceil[0] == 1 && r.ceil_worst[0] == 1 && r.ceil[2] == 1);
    /* 2-d dense features id mod 3: every pool's truth has twins */
    ns_world_inputs in;
    CHECK(ns_world_inputs_load(&in, DSP, 1, "builtin", "builtin", &SV, &AV, &e) == NS_OK);
    int64_t ns = ns_dataset_nstates(&DS);
    ns_features_free(&in.state);
    memset(&in.state, 0, sizeof in.state);
    in.state.nrows = ns, in.state.dim = 2;
    in.state.dense = malloc((size_t)ns * 2 * sizeof(float));
    for (int64_t i = 0; i < ns; i++) in.state.dense[2 * i] = (float)(i % 3), in.state.dense[2 * i + 1] = 1;
    CHECK(ns_features_rows_equal(&in.state, 0, 3) && !ns_features_rows_equal(&in.state, 0, 1));
    ns_world_config c = W.cfg;
    c.state_dim = 2, c.state_sparse = false;
    ns_world m;
    CHECK(ns_world_create(&m, &c, 1, &e) == NS_OK);
    CHECK(ns_eval_world(&m, &in, &SP.test, SP.pools, SP.pool_size, &o, &r, &e) == NS_OK);
    double want[3] = {0}, want_worst[3] = {0}, twins = 0;
    const int ks[3] = {1, 5, 10};
    for (int64_t i = 0; i < SP.test.n; i++) {
        const int64_t *pool = SP.pools + i * SP.pool_size;
        int64_t t = 0;
        for (int j = 1; j < SP.pool_size; j++) t += pool[j] >= 0 && pool[j] % 3 == pool[0] % 3;
        twins += t > 0;
        for (int k = 0; k < 3; k++) {
            want[k] += t + 1 <= ks[k] ? 1 : (double)ks[k] / (double)(t + 1);
            want_worst[k] += t + 1 <= ks[k];
        }
    }
    CHECK(twins > 0 && fabs(r.twin_queries - twins / (double)SP.test.n) < 1e-12);
    for (int k = 0; k < 3; k++) {
        CHECK(fabs(r.ceil[k] - want[k] / (double)SP.test.n) < 1e-12);
        CHECK(fabs(r.ceil_worst[k] - want_worst[k] / (double)SP.test.n) < 1e-12);
        CHECK(r.hit_worst[k] <= r.ceil_worst[k]); /* no ranking beats it */
    }
    CHECK(r.ceil[0] < 0.5); /* pools of 128 over three feature classes */
    ns_buf b;
    ns_buf_init(&b);
    ns_eval_json(&r, &b);
    CHECK(strstr(b.data, "\"hit@5_ceiling\": ") && strstr(b.data, "\"twin_queries\": "));
    ns_buf_free(&b);
    ns_world_free(&m);
    ns_world_inputs_free(&in);
}

/* ---- chance: a ranking that ignores the model ---------------------------------------- */

static void test_chance(void)
{
    if (!ready) return;
    ns_eval_opts o = plain_opts(3);
    ns_eval_result r;
    ns_error e;
    CHECK(ns_eval_world(&W, &IN, &SP.test, SP.pools, SP.pool_size, &o, &r, &e) == NS_OK);
    double want[3] = {0}, mean = 0;
    const int ks[3] = {1, 5, 10};
    for (int64_t i = 0; i < SP.test.n; i++) {
        const int64_t *pool = SP.pools + i * SP.pool_size;
        int64_t m = 0;
        for (int j = 0; j < SP.pool_size; j++) m += pool[j] >= 0;
        mean += (double)m;
        for (int k = 0; k < 3; k++) want[k] += m <= ks[k] ? 1 : (double)ks[k] / (double)m;
    }
    CHECK(fabs(r.mean_pool - mean / (double)SP.test.n) < 1e-9);
    for (int k = 0; k < 3; k++) CHECK(fabs(r.chance[k] - want[k] / (double)SP.test.n) < 1e-12);
    CHECK(r.chance[0] > 0 && r.chance[0] < r.chance[1] && r.chance[1] < r.chance[2] && r.chance[2] <= 1);
    ns_buf b;
    ns_buf_init(&b);
    ns_eval_json(&r, &b);
    CHECK(strstr(b.data, "\"chance@5\": "));
    ns_buf_free(&b);
    ns_buf_init(&b);
    ns_eval_table(&r, &b);
    CHECK(strstr(b.data, "chance "));
    ns_buf_free(&b);
}

/* ---- per-query outcomes, cost-to-go and misses (breakdown.h) --------------------------- */

static int64_t facts_of_action(const char *op)
{
    return !strncmp(op, "(sail", 5) ? 2 : 3; /* sail: at-ferry moves; board / debark: at, on, empty-ferry */
}

static void test_breakdown(void)
{
    if (!ready) return;
    const int P = 16;
    int64_t *pools = ns_split_pools_draw(&SP, DSP, &ALL, P, 5);
    ns_eval_opts o = plain_opts(9);
    ns_eval_result r1, r2;
    ns_error e;
    int64_t n = ALL.n;
    ns_eval_query *q = malloc((size_t)n * sizeof *q);
    CHECK(ns_eval_world(&W, &IN, &ALL, pools, P, &o, &r1, &e) == NS_OK);
    CHECK(ns_eval_world_queries(&W, &IN, &ALL, pools, P, &o, &r2, q, &e) == NS_OK);
    CHECK(r1.hit[0] == r2.hit[0] && r1.hit[1] == r2.hit[1] && r1.mrr == r2.mrr);
    int64_t h1 = 0, h5 = 0, misses = 0;
    for (int64_t i = 0; i < n; i++) {
        h1 += q[i].bits & 1u, h5 += (q[i].bits >> 1) & 1u;
        if (q[i].top_row < 0) continue;
        misses++;
        bool in_pool = false;
        for (int j = 1; j < P; j++) in_pool |= pools[i * P + j] >= 0 && pools[i * P + j] == q[i].top_row;
        CHECK(in_pool); /* state_base 0: rows are state ids */
    }
    CHECK(h1 == llround(r1.hit[0] * (double)n) && h5 == llround(r1.hit[1] * (double)n));
    CHECK(misses == n - h1 && misses > 0 && h1 > 0);
    ns_breakdown b;
    ns_breakdown_compute(&IN, &ALL, q, &b);
    int64_t tot = 0;
    double th1 = 0;
    for (int h = 0; h < NS_CTG_OPEN + 2; h++) tot += b.ctg[h].n, th1 += b.ctg[h].hit[0] * (double)b.ctg[h].n;
    CHECK(tot == n && llround(th1) == h1);
    int64_t want[NS_CTG_OPEN + 2] = {0};
    for (int64_t i = 0; i < n; i++) {
        int32_t hs = ((const int32_t *)DS.state_hstar.data)[ns_dataset_transition(&DS, i)[1]];
        want[hs < 0 ? NS_CTG_OPEN + 1 : hs >= NS_CTG_OPEN ? NS_CTG_OPEN : hs]++;
    }
    for (int h = 0; h < NS_CTG_OPEN + 2; h++) CHECK_EQ_INT(b.ctg[h].n, want[h]);
    CHECK(want[1] > 0 && want[NS_CTG_OPEN + 1] == 0); /* optimal DAG: every state has h* */
    CHECK_EQ_INT(b.miss[0].n, misses);
    CHECK_EQ_INT(b.miss[1].n, n - h5);
    CHECK(b.miss[0].other_problem <= b.miss[0].n);
    for (int k = 0; k < 2; k++) {
        int64_t hs = 0;
        for (int f = 0; f <= NS_MISS_OPEN; f++) hs += b.miss[k].hist[f];
        CHECK_EQ_INT(hs, b.miss[k].n);
        CHECK(b.miss[k].q1 <= b.miss[k].median && b.miss[k].median <= b.miss[k].q3);
    }
    /* hand-made outcomes: every query a miss whose top-1 is its own state s — facts = the action's effect size */
    int64_t hist_want[NS_MISS_OPEN + 1] = {0};
    for (int64_t i = 0; i < n; i++) {
        const int32_t *tr = ns_dataset_transition(&DS, i);
        const ns_ds_problem *pr = &DS.problems[tr[0]];
        q[i].bits = 0;
        q[i].top_row = tr[1];
        hist_want[facts_of_action(pr->ops[tr[2]])]++;
    }
    ns_breakdown_compute(&IN, &ALL, q, &b);
    CHECK_EQ_INT(b.miss[0].n, n);
    CHECK_EQ_INT(b.miss[1].n, n);
    for (int f = 0; f <= NS_MISS_OPEN; f++) CHECK_EQ_INT(b.miss[0].hist[f], hist_want[f]);
    CHECK(hist_want[2] > 0 && hist_want[3] > 0);
    CHECK(b.miss[0].median == 2 || b.miss[0].median == 2.5 || b.miss[0].median == 3);
    for (int h = 0; h < NS_CTG_OPEN + 2; h++) CHECK(b.ctg[h].n == 0 || b.ctg[h].hit[1] == 0);
    ns_buf j;
    ns_buf_init(&j);
    ns_buf_putc(&j, '{');
    ns_breakdown_json(&b, &j);
    ns_buf_putc(&j, '}');
    CHECK(strstr(j.data, "\"cost_to_go\": [{\"h\": ") && strstr(j.data, "\"misses\": {\"top1\": {\"n\": "));
    CHECK(strstr(j.data, "{\"facts\": 10, \"facts_max\": null, \"n\": 0}") && !strstr(j.data, "nan"));
    ns_buf_free(&j);
    /* the fact difference by text (another dataset object: the "other problem" path) equals the bitset one */
    ns_dataset D2 = DS; /* shallow */
    for (int64_t t = 0; t < n; t += 7) {
        const int32_t *tr = ns_dataset_transition(&DS, t);
        bool other;
        int64_t a = ns_breakdown_fact_diff(&DS, tr[1], &DS, tr[3], &other);
        CHECK(!other);
        CHECK_EQ_INT(a, facts_of_action(DS.problems[tr[0]].ops[tr[2]]));
        CHECK_EQ_INT(ns_breakdown_fact_diff(&DS, tr[1], &D2, tr[3], &other), a);
        CHECK(other);
        CHECK_EQ_INT(ns_breakdown_fact_diff(&DS, tr[1], &D2, tr[1], &other), 0);
    }
    free(q);
    free(pools);
}

/* Query-state features: the same features give the same numbers; rows of other states change them; another
 * width is an error. */
static void test_query_features(void)
{
    if (!ready) return;
    const int P = 16;
    int64_t *pools = ns_split_pools_draw(&SP, DSP, &ALL, P, 5);
    ns_eval_opts o = plain_opts(9);
    ns_eval_result r1, r2;
    ns_error e;
    CHECK(ns_eval_world(&W, &IN, &ALL, pools, P, &o, &r1, &e) == NS_OK);
    o.query_state = &IN.state;
    CHECK(ns_eval_world(&W, &IN, &ALL, pools, P, &o, &r2, &e) == NS_OK);
    CHECK(r1.hit[0] == r2.hit[0] && r1.mrr == r2.mrr);
    /* every query state's input replaced by the first state's row */
    const ns_csr *c = &IN.state.csr;
    CHECK(IN.state.sparse);
    ns_features f;
    memset(&f, 0, sizeof f);
    f.sparse = true;
    f.nrows = IN.state.nrows;
    f.dim = IN.state.dim;
    ns_csr_init(&f.csr, c->ncols);
    for (int64_t i = 0; i < c->nrows; i++)
        ns_csr_add_row(&f.csr, c->indices + c->indptr[0], c->values + c->indptr[0], (int)(c->indptr[1] - c->indptr[0]));
    o.query_state = &f;
    CHECK(ns_eval_world(&W, &IN, &ALL, pools, P, &o, &r2, &e) == NS_OK);
    CHECK(r2.mrr < r1.mrr); /* the model no longer sees where it is */
    f.dim++;
    CHECK(ns_eval_world(&W, &IN, &ALL, pools, P, &o, &r2, &e) == NS_ERR_INPUT);
    CHECK(strstr(e.msg, "query state features") != NULL);
    ns_features_free(&f);
    free(pools);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ns_test_evaluate_%d", (int)getpid());
    ns_error e;
    ns_mkdir_p(tmpdir, &e);
    ready = setup();
    if (!ready) printf("FAIL setup\n");
    NS_RUN(test_sweep_reproduces_eval);
    NS_RUN(test_plans_teacher_forced);
    NS_RUN(test_rollout_depth_one);
    NS_RUN(test_hand_built);
    NS_RUN(test_ceiling);
    NS_RUN(test_chance);
    NS_RUN(test_breakdown);
    NS_RUN(test_query_features);
    if (ready) {
        free(ALL.ref);
        ns_world_free(&W);
        ns_world_inputs_free(&IN);
        ns_vocab_free(&SV);
        ns_vocab_free(&AV);
        ns_split_free(&SP);
        ns_dataset_free(&DS);
    }
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) printf("  could not remove %s\n", tmpdir);
    if (!ready) ns_t_fail++;
    return ns_test_summary("test_evaluate");
}
