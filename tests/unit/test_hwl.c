/* test_hwl.c — the learned WL heuristic: the ridge fit solves its normal
 * equations, the model file round-trips and refuses what it did not write,
 * the evaluator returns the model's value, and search with it plans. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen_fixture.h"
#include "nextstate/core/plan.h"
#include "nextstate/core/search.h"
#include "nextstate/core/succgen.h"
#include "nextstate/learn/hwl.h"
#include "nextstate/learn/predictor.h"
#include "nextstate/planner/planner.h"
#include "nextstate/util/util.h"
#include "test.h"

#define DOMAIN "domains/blocksworld/domain.pddl"

static char tmpdir[200];

static bool gen_set(const char *sub, int blocks, int n, unsigned seed)
{
    char d[300];
    snprintf(d, sizeof d, "%s/%s", tmpdir, sub);
    ns_gen_arg a = {"blocks", blocks};
    char **p = ns_test_gen_problems(d, "blocksworld", &a, 1, n, seed, false);
    if (!p) return false;
    ns_test_free_paths(p, n);
    return true;
}

static bool load(ns_trajset *s, const char *sub)
{
    char d[512];
    snprintf(d, sizeof d, "%s/%s", tmpdir, sub);
    ns_traj_opts o = {.time_limit = 30};
    ns_error e;
    if (ns_trajset_load(s, DOMAIN, d, &o, &e) != NS_OK) {
        printf("  loading %s: %s\n", d, e.msg);
        ns_trajset_free(s);
        return false;
    }
    return true;
}

/* w·φ(s) + b of state s of trajectory tr, in double. */
static double value(const ns_hwl *h, const ns_traj *tr, const ns_word *s, float *phi)
{
    ns_encoder en;
    ns_error e;
    if (ns_encoder_init(&en, &h->enc, &tr->t, &e) != NS_OK) return NAN;
    ns_encoder_state(&en, s, phi);
    ns_encoder_free(&en);
    double v = h->w[h->dim];
    for (int j = 0; j < h->dim; j++) v += (double)h->w[j] * phi[j];
    return v;
}

/* The fit is the ridge optimum: the gradient of Σ (w·φ + b − y)² + λ‖w‖²
 * vanishes (relative to its scale), and its RMSE is the one reported.
 * Returns whether the features outnumbered the states (the dual solve). */
static bool check_optimum(const ns_trajset *tr, double lambda, int iterations)
{
    ns_hwl_config c;
    ns_hwl_config_init(&c);
    c.lambda = lambda;
    c.iterations = iterations;
    c.rank = 0;
    ns_hwl h;
    ns_error e;
    CHECK(ns_hwl_fit(&h, tr, &c, &e) == NS_OK);
    if (!h.w) return false;
    long rows = 0;
    for (int i = 0; i < tr->n; i++) rows += tr->v[i].nstates;
    CHECK_EQ_INT(h.rows, rows);
    CHECK_EQ_INT(h.problems, tr->n);
    int D = h.dim;
    double *g = calloc((size_t)D + 1, sizeof(double));
    float *phi = calloc((size_t)D, sizeof(float));
    double sq = 0, scale = 0;
    for (int i = 0; i < tr->n; i++) {
        const ns_traj *t = &tr->v[i];
        for (int k = 0; k < t->nstates; k++) {
            double r = value(&h, t, t->states + (size_t)k * (size_t)t->t.nwords, phi) - (t->nstates - 1 - k);
            sq += r * r;
            for (int j = 0; j < D; j++) {
                g[j] += 2 * r * phi[j];
                scale += fabs(2.0 * (t->nstates - 1 - k) * phi[j]);
            }
            g[D] += 2 * r;
        }
    }
    double worst = 0;
    for (int j = 0; j < D; j++) g[j] += 2 * c.lambda * h.w[j];
    for (int j = 0; j <= D; j++) worst = fmax(worst, fabs(g[j]));
    /* float weights: the gradient is zero up to float rounding of w */
    CHECK(worst < 1e-4 * scale / (double)D + 1e-3);
    if (!(worst < 1e-4 * scale / (double)D + 1e-3)) printf("  gradient %g (scale %g)\n", worst, scale / D);
    double rmse;
    CHECK(ns_hwl_rmse(&h, tr, &rmse, &e) == NS_OK);
    CHECK(fabs(rmse - sqrt(sq / (double)rows)) < 1e-4);
    CHECK(fabs(rmse - h.rmse) < 1e-4);
    bool dual = rows < D + 1;
    free(g);
    free(phi);
    ns_hwl_free(&h);
    return dual;
}

static void test_fit_is_ridge_optimum(void)
{
    ns_trajset tr;
    if (!load(&tr, "train")) return;
    /* both solves: more features than states (2 WL iterations) and fewer
       (none: the initial colours only) */
    CHECK(check_optimum(&tr, 0.5, 2));
    CHECK(!check_optimum(&tr, 0.5, 0));
    CHECK(check_optimum(&tr, 1e-3, 2));
    /* a system larger than a Cholesky block (128): the blocked factor (over
       300 states, so primal or dual it has more than 300 unknowns) */
    ns_trajset many;
    if (load(&many, "big")) {
        CHECK(ns_trajset_states(&many) > 300);
        check_optimum(&many, 0.5, 2);
        ns_trajset_free(&many);
    }
    ns_hwl_config c;
    ns_hwl_config_init(&c);
    c.lambda = 0.5;
    ns_hwl h, big;
    ns_error e;
    CHECK(ns_hwl_fit(&h, &tr, &c, &e) == NS_OK);
    /* a small penalty fits the training states closely; a huge one gives
     * (almost) the mean cost-to-go everywhere */
    CHECK(h.rmse < 1.0);
    c.lambda = 1e9;
    CHECK(ns_hwl_fit(&big, &tr, &c, &e) == NS_OK);
    CHECK(big.rmse > h.rmse);
    double norm = 0;
    for (int j = 0; j < big.dim; j++) norm += fabs(big.w[j]);
    CHECK(norm < 1e-3);
    ns_hwl_free(&big);
    ns_hwl_free(&h);
    ns_trajset_free(&tr);
}

/* With the ranking term over every sibling (rank above any branching), the
 * fit is the optimum of Σ (w·φ + b − y)² + μ Σ max(0, 1 − w·(φ(s') −
 * φ(s_{t+1})))² + λ‖w‖², the pairs re-derived here from γ independently
 * of the library's sampling: its gradient vanishes; and a larger μ leaves
 * a smaller ranking loss; with ranking pairs at most half the features and
 * with more (the two ways ns_hwl_fit solves it). */
static void test_rank_is_optimum(void)
{
    ns_trajset tr;
    if (!load(&tr, "train")) return;
    /* 4 WL iterations: pairs at most half the features (the steps by
       low-rank updates of one factorisation); none: more (each step
       factored anew) */
    const int iters[2] = {4, 0};
    bool fewer[2] = {false, false};
    for (int v = 0; v < 2; v++) {
        double hinge[2] = {0, 0};
        const double mus[2] = {0.05, 20.0};
        for (int m = 0; m < 2; m++) {
            ns_hwl_config c;
            ns_hwl_config_init(&c);
            c.iterations = iters[v];
            c.lambda = 0.5;
            c.rank = 1000;
            c.rank_weight = mus[m];
            ns_hwl h;
            ns_error e;
            CHECK(ns_hwl_fit(&h, &tr, &c, &e) == NS_OK);
            if (!h.w) break;
            int D = h.dim;
            double *g = calloc((size_t)D + 1, sizeof(double)), scale = 0;
            float *phi = calloc((size_t)D, sizeof(float)), *nxt = calloc((size_t)D, sizeof(float));
            long pairs = 0, right = 0;
            for (int i = 0; i < tr.n; i++) {
                const ns_traj *t = &tr.v[i];
                const int nw = t->t.nwords;
                ns_succgen sg;
                ns_succgen_init(&sg, &t->t);
                int *ops = calloc((size_t)t->t.nops + 1, sizeof(int));
                ns_word *succ = calloc((size_t)nw, sizeof(ns_word));
                for (int k = 0; k < t->nstates; k++) {
                    const ns_word *s = t->states + (size_t)k * (size_t)nw;
                    double r = value(&h, t, s, phi) - (t->nstates - 1 - k);
                    for (int j = 0; j < D; j++) {
                        g[j] += 2 * r * phi[j];
                        scale += fabs(2.0 * (t->nstates - 1 - k) * phi[j]);
                    }
                    g[D] += 2 * r;
                    if (k + 1 == t->nstates) continue;
                    double vn = value(&h, t, s + nw, nxt);
                    int n = ns_succgen_applicable(&sg, s, ops);
                    for (int q = 0; q < n; q++) {
                        if (ops[q] == t->ops[k]) continue;
                        ns_task_apply(&t->t, ops[q], s, succ);
                        if (!memcmp(succ, s + nw, (size_t)nw * sizeof(ns_word))) continue;
                        double vs = value(&h, t, succ, phi);
                        bool same = true;
                        for (int j = 0; j < D; j++) same = same && phi[j] == nxt[j];
                        if (same) continue;
                        pairs++;
                        right += vs - vn > 0;
                        double viol = 1 - (vs - vn);
                        if (viol <= 0) continue;
                        hinge[m] += viol * viol;
                        for (int j = 0; j < D; j++) g[j] -= 2 * c.rank_weight * viol * (phi[j] - nxt[j]);
                    }
                }
                free(ops);
                free(succ);
                ns_succgen_free(&sg);
            }
            CHECK(pairs > 0 && pairs == h.pairs);
            fewer[v] = 2 * h.pairs <= h.dim + 1;
            CHECK(fabs((double)right / (double)pairs - h.pair_acc) < 1e-9);
            double worst = 0;
            for (int j = 0; j < D; j++) g[j] += 2 * c.lambda * h.w[j];
            for (int j = 0; j <= D; j++) worst = fmax(worst, fabs(g[j]));
            CHECK(worst < 1e-4 * scale / (double)D + 1e-3);
            if (!(worst < 1e-4 * scale / (double)D + 1e-3)) printf("  gradient %g (scale %g)\n", worst, scale / D);
            free(g);
            free(phi);
            free(nxt);
            ns_hwl_free(&h);
        }
        CHECK(hinge[0] > 0 && hinge[1] < hinge[0]);
        if (!(hinge[0] > 0 && hinge[1] < hinge[0]))
            printf("  ranking loss %g (mu %g) vs %g (mu %g)\n", hinge[0], mus[0], hinge[1], mus[1]);
    }
    CHECK(fewer[0] && !fewer[1]);
    ns_trajset_free(&tr);
}

/* learn's choice of algorithm: held-out problems planned by each candidate,
 * the recorded table's best taken (most solved, then 5 % fewer evaluations,
 * else the earlier candidate), kept through the model file and used by
 * plan's default; a budget of one evaluation solves nothing, so the first
 * candidate (LAMA) wins the tie. */
static void test_choice(void)
{
    ns_trajset tr;
    if (!load(&tr, "train")) return;
    char dir[512], tdir[512], dom[] = DOMAIN;
    snprintf(dir, sizeof dir, "%s/choose", tmpdir); /* train's 4-block problems and test's two of 8 blocks */
    snprintf(tdir, sizeof tdir, "%s/train", tmpdir);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "mkdir -p %s && ln -sf %s/*.pddl %s/test/*.pddl %s/", dir, tdir, tmpdir, dir);
    CHECK(system(cmd) == 0);
    ns_error e;
    ns_hwl_config c;
    ns_hwl_config_init(&c);
    ns_choose_opts co;
    ns_choose_opts_default(&co);
    CHECK(co.folds == 2);
    co.problems = 2;
    co.folds = 1; /* the 2 largest only (the two of 8 blocks) */
    ns_hwl h, g;
    CHECK(ns_hwl_learn(&h, &tr, dom, dir, &c, &co, &e) == NS_OK);
    /* every search with 2 WL iterations, then with 4 */
    CHECK(h.choice.n == 2 * NS_PLAN_CHOICES && h.choice.problems == 2 && h.choice.budget == co.budget);
    int best = 0;
    for (int i = 0; i < h.choice.n; i++) {
        CHECK(ns_planner_algo_parse(h.choice.cand[i]) == (int)ns_plan_choices[i % NS_PLAN_CHOICES]);
        CHECK(h.choice.iter[i] == (i < NS_PLAN_CHOICES ? 2 : 4));
        CHECK(h.choice.solved[i] >= 0 && h.choice.solved[i] <= 2);
        CHECK(h.choice.work[i] > h.choice.evaluated[i]); /* every evaluation costs steps */
        if (h.choice.solved[i] > h.choice.solved[best] ||
            (h.choice.solved[i] == h.choice.solved[best] && h.choice.evaluated[i] < 0.95 * (double)h.choice.evaluated[best]))
            best = i; /* 5 % fewer evaluations, else the earlier stays */
    }
    CHECK(h.choice.solved[best] == 2); /* 8-block problems, 100k evaluations */
    CHECK(!strcmp(h.choice.algo, h.choice.cand[best]) && h.enc.wl.iterations == h.choice.iter[best]);
    CHECK((int)ns_plan_heuristic_algo(&h, NS_PLAN_BEAM) == ns_planner_algo_parse(h.choice.algo));
    CHECK(ns_plan_heuristic_algo(&h, NS_PLAN_LAMA_H) == NS_PLAN_LAMA_H);
    /* h^FF's ties: LAMA-first on the held-out problems with the first and the last supporter */
    CHECK(h.choice.ties_solved[0] == 2 && h.choice.ties_solved[1] >= 0 && h.choice.ties_solved[1] <= 2);
    CHECK(h.choice.last_supporter == (h.choice.ties_solved[1] > h.choice.ties_solved[0] ||
                                      (h.choice.ties_solved[1] == h.choice.ties_solved[0] &&
                                       h.choice.ties_evaluated[1] < 0.8 * (double)h.choice.ties_evaluated[0])));
    char path[600];
    snprintf(path, sizeof path, "%s/chosen.model", tmpdir);
    CHECK(ns_hwl_save(&h, path, &e) == NS_OK);
    CHECK(ns_hwl_load(&g, path, &e) == NS_OK);
    CHECK(!strcmp(g.choice.algo, h.choice.algo) && g.choice.n == h.choice.n && g.choice.problems == 2);
    for (int i = 0; i < g.choice.n && i < h.choice.n; i++)
        CHECK(!strcmp(g.choice.cand[i], h.choice.cand[i]) && g.choice.iter[i] == h.choice.iter[i] &&
              g.choice.solved[i] == h.choice.solved[i] && g.choice.evaluated[i] == h.choice.evaluated[i] &&
              g.choice.work[i] == h.choice.work[i]);
    CHECK(g.choice.last_supporter == h.choice.last_supporter);
    for (int k = 0; k < 2; k++)
        CHECK(g.choice.ties_solved[k] == h.choice.ties_solved[k] && g.choice.ties_evaluated[k] == h.choice.ties_evaluated[k]);
    ns_hwl_free(&g);
    h.choice.last_supporter = !h.choice.last_supporter; /* the other value reads back too */
    CHECK(ns_hwl_save(&h, path, &e) == NS_OK && ns_hwl_load(&g, path, &e) == NS_OK);
    CHECK(g.choice.last_supporter == h.choice.last_supporter);
    h.choice.last_supporter = !h.choice.last_supporter;
    ns_hwl_free(&g);
    co.jobs = 3; /* the (problem, search) pairs planned in child processes: the same table and model */
    CHECK(ns_hwl_learn(&g, &tr, dom, dir, &c, &co, &e) == NS_OK);
    CHECK(!strcmp(g.choice.algo, h.choice.algo) && g.choice.n == h.choice.n && g.dim == h.dim);
    for (int i = 0; i < g.choice.n && i < h.choice.n; i++)
        CHECK(g.choice.solved[i] == h.choice.solved[i] && g.choice.evaluated[i] == h.choice.evaluated[i] &&
              g.choice.work[i] == h.choice.work[i]); /* counted, not timed: the same in child processes */
    CHECK(g.dim != h.dim || !memcmp(g.w, h.w, sizeof(float) * (size_t)(h.dim + 1)));
    co.jobs = 1;
    ns_hwl_free(&g);
    /* two folds: the same rows, each adding the second set's counts (2 of the 6 others) to the first's */
    co.folds = 2;
    CHECK(ns_hwl_learn(&g, &tr, dom, dir, &c, &co, &e) == NS_OK);
    CHECK(g.choice.n == h.choice.n && g.choice.problems == 4);
    for (int i = 0; i < g.choice.n && i < h.choice.n; i++) {
        CHECK(!strcmp(g.choice.cand[i], h.choice.cand[i]) && g.choice.iter[i] == h.choice.iter[i]);
        CHECK(g.choice.solved[i] >= h.choice.solved[i] && g.choice.solved[i] <= h.choice.solved[i] + 2);
        CHECK(g.choice.evaluated[i] > h.choice.evaluated[i] && g.choice.work[i] > h.choice.work[i]);
    }
    co.folds = 1;
    ns_hwl_free(&g);
    ns_hwl_free(&h);
    co.budget = 1;
    CHECK(ns_hwl_learn(&h, &tr, dom, dir, &c, &co, &e) == NS_OK);
    for (int i = 0; i < h.choice.n; i++) CHECK(h.choice.solved[i] == 0 && h.choice.evaluated[i] == 2);
    CHECK(!strcmp(h.choice.algo, "lama") && h.enc.wl.iterations == 2);
    ns_hwl_free(&h);
    /* held-out problems with plans: chosen without them, then fitted on all */
    co.problems = 3;
    co.budget = 100000;
    CHECK(ns_hwl_learn(&h, &tr, dom, tdir, &c, &co, &e) == NS_OK);
    CHECK(h.choice.problems == 3 && h.choice.algo[0] && h.rows == ns_trajset_states(&tr) && h.problems == tr.n);
    ns_hwl_free(&h);
    co.problems = 2; /* one iteration count: the config's */
    co.niter = 0;
    c.iterations = 1;
    CHECK(ns_hwl_learn(&h, &tr, dom, dir, &c, &co, &e) == NS_OK);
    CHECK(h.choice.n == NS_PLAN_CHOICES && h.choice.iter[0] == 1 && h.enc.wl.iterations == 1);
    ns_hwl_free(&h);
    co.problems = 0; /* no choice: plan's default is LAMA */
    CHECK(ns_hwl_learn(&h, &tr, dom, dir, &c, &co, &e) == NS_OK);
    CHECK(h.choice.algo[0] == '\0' && h.choice.n == 0 && ns_plan_heuristic_algo(&h, NS_PLAN_BEAM) == NS_PLAN_LAMA);
    ns_hwl_free(&h);
    ns_trajset_free(&tr);
}

static void test_file_roundtrip_and_refusals(void)
{
    ns_trajset tr;
    if (!load(&tr, "train")) return;
    ns_hwl_config c;
    ns_hwl_config_init(&c);
    ns_hwl h, g;
    ns_error e;
    CHECK(ns_hwl_fit(&h, &tr, &c, &e) == NS_OK);
    char path[512], bad[600];
    snprintf(path, sizeof path, "%s/h.model", tmpdir);
    CHECK(ns_hwl_save(&h, path, &e) == NS_OK);
    CHECK(ns_hwl_sniff(path));
    CHECK(ns_hwl_load(&g, path, &e) == NS_OK);
    CHECK_EQ_INT(g.dim, h.dim);
    CHECK(memcmp(g.w, h.w, sizeof(float) * (size_t)(h.dim + 1)) == 0);
    CHECK(fabs(g.lambda - h.lambda) < 1e-12 && g.rows == h.rows && g.problems == h.problems);
    CHECK(h.rank == 4 && g.rank == h.rank && g.pairs == h.pairs && h.pairs > 0);
    CHECK(fabs(g.pair_acc - h.pair_acc) < 1e-12 && fabs(g.rank_weight - h.rank_weight) < 1e-12);
    float *phi = calloc((size_t)h.dim, sizeof(float));
    const ns_traj *t = &tr.v[0];
    CHECK(value(&g, t, t->states, phi) == value(&h, t, t->states, phi));
    free(phi);
    ns_hwl_free(&g);

    /* truncated, one byte flipped, missing: refused with the file's name */
    size_t len;
    char *bytes = NULL;
    CHECK(ns_read_file(path, &bytes, &len, &e) == NS_OK);
    if (!bytes) return;
    snprintf(bad, sizeof bad, "%s/trunc.model", tmpdir);
    CHECK(ns_write_file_atomic(bad, bytes, len / 2, &e) == NS_OK);
    CHECK(ns_hwl_load(&g, bad, &e) == NS_ERR_INPUT);
    CHECK(strstr(e.file, "trunc.model") != NULL);
    ns_hwl_free(&g);
    bytes[len - 3] ^= 0x20;
    snprintf(bad, sizeof bad, "%s/flip.model", tmpdir);
    CHECK(ns_write_file_atomic(bad, bytes, len, &e) == NS_OK);
    CHECK(ns_hwl_load(&g, bad, &e) == NS_ERR_INPUT);
    ns_hwl_free(&g);
    free(bytes);
    snprintf(bad, sizeof bad, "%s/none.model", tmpdir);
    CHECK(ns_hwl_load(&g, bad, &e) != NS_OK);
    CHECK(!ns_hwl_sniff(bad));
    ns_hwl_free(&g);

    /* another params file (an XGBoost predictor) is not a heuristic */
    ns_encoder_spec spec;
    CHECK(ns_encoder_spec_fit_wl(&spec, &tr, 1, true, &e) == NS_OK);
    ns_predictor_config pc;
    ns_predictor_config_init(&pc);
    pc.kind = NS_PREDICTOR_XGB;
    ns_predictor m;
    if (ns_predictor_train(&m, &spec, &tr, NULL, &pc, &e) == NS_OK) {
        snprintf(bad, sizeof bad, "%s/x.model", tmpdir);
        CHECK(ns_predictor_save(&m, bad, &e) == NS_OK);
        CHECK(!ns_hwl_sniff(bad));
        CHECK(ns_hwl_load(&g, bad, &e) == NS_ERR_INPUT);
        ns_hwl_free(&g);
        ns_predictor_free(&m);
    }
    ns_encoder_spec_free(&spec);
    ns_hwl_free(&h);
    ns_trajset_free(&tr);

    /* nothing to fit */
    ns_trajset empty;
    memset(&empty, 0, sizeof empty);
    CHECK(ns_hwl_fit(&h, &empty, &c, &e) == NS_ERR_INPUT);
    ns_hwl_free(&h);
}

/* The evaluator's key is 1000 × (w·φ + b) + 10⁹, rounded, so it keeps the
 * model's order below 0 too; with helpful it prefers h^FF's helpful actions
 * (some, in a state that is not a goal). */
static void test_evaluator_and_plan(void)
{
    ns_trajset tr, te;
    if (!load(&tr, "train")) return;
    if (!load(&te, "test")) {
        ns_trajset_free(&tr);
        return;
    }
    ns_hwl_config c;
    ns_hwl_config_init(&c);
    ns_hwl h;
    ns_error e;
    CHECK(ns_hwl_fit(&h, &tr, &c, &e) == NS_OK);
    float *phi = calloc((size_t)h.dim, sizeof(float));
    for (int i = 0; i < te.n; i++) {
        const ns_traj *t = &te.v[i];
        for (int helpful = 0; helpful < 2; helpful++) {
            ns_evaluator ev;
            CHECK(ns_hwl_evaluator(&ev, &h, &t->t, helpful, &e) == NS_OK);
            int *pref = calloc((size_t)t->t.nops + 1, sizeof(int));
            int npref = 0;
            int key = ev.eval(ev.ctx, t->states, pref, &npref);
            double v = value(&h, t, t->states, phi);
            CHECK(llabs(key - (llround(v * 1000.0) + 1000000000LL)) <= 1);
            float b = h.w[h.dim];
            h.w[h.dim] = b - 1000; /* every value below 0: the key still follows v */
            CHECK(llabs(ev.eval(ev.ctx, t->states, NULL, NULL) - (llround((v - 1000) * 1000.0) + 1000000000LL)) <= 2);
            h.w[h.dim] = b;
            if (helpful) CHECK(npref > 0);
            else CHECK_EQ_INT(npref, 0);
            for (int k = 0; k < npref; k++) CHECK(ns_task_applicable(&t->t, pref[k], t->states));
            free(pref);
            ns_evaluator_free(&ev);
        }
        /* the three searches find valid plans for the larger test problems */
        static const ns_planner_algo algos[] = {NS_PLAN_SEARCH, NS_PLAN_GUIDED, NS_PLAN_LAMA, NS_PLAN_LAMA_H};
        for (int a = 0; a < 4; a++) {
            ns_planner_opts o;
            ns_planner_opts_default(&o);
            o.algo = algos[a];
            o.time_limit = 20;
            ns_planner_result r;
            CHECK(ns_plan_heuristic(&h, &t->t, &o, &r, &e) == NS_OK);
            CHECK(r.status == NS_OK);
            if (r.status == NS_OK) CHECK(ns_plan_ops_valid(&t->t, r.plan, r.plan_len));
            CHECK(r.predictions >= r.expanded && r.expanded > 0);
            if (algos[a] == NS_PLAN_LAMA) { /* LAMA-first with h as a third heuristic, h^FF's helpful actions preferred */
                ns_evaluator ev;
                CHECK(ns_hwl_evaluator(&ev, &h, &t->t, false, &e) == NS_OK);
                ns_search_opts so;
                ns_search_opts_default(&so);
                so.algo = NS_SEARCH_LAMA;
                so.extra = &ev;
                so.preferred = true;
                so.time_limit = 20;
                ns_search_result sr;
                CHECK(ns_search(&t->t, &so, &sr) == NS_OK);
                CHECK(sr.expanded == r.expanded);
                ns_search_result_free(&sr);
                ns_evaluator_free(&ev);
            }
            ns_planner_result_free(&r);
        }
    }
    free(phi);
    ns_hwl_free(&h);
    ns_trajset_free(&tr);
    ns_trajset_free(&te);
}

/* The classical fallback: a learned h that says nothing (every weight 0)
 * leaves GBFS on h alone blind on a 16-block problem, out of time or memory;
 * with a fallback share, LAMA-first plans in the rest of the limit (or after
 * the memory ran out), and the result says so.  Without one, or when the
 * learned search is stopped by an evaluation budget, there is no fallback. */
static void test_fallback(void)
{
    ns_trajset tr;
    if (!load(&tr, "train")) return;
    ns_hwl_config c;
    ns_hwl_config_init(&c);
    ns_hwl h;
    ns_error e;
    CHECK(ns_hwl_fit(&h, &tr, &c, &e) == NS_OK);
    memset(h.w, 0, sizeof(float) * ((size_t)h.dim + 1));
    char prob[300];
    snprintf(prob, sizeof prob, "%s/huge/p0.pddl", tmpdir);
    ns_loaded_task lt;
    CHECK(ns_task_load(&lt, DOMAIN, prob, &e) == NS_OK);
    /* 0: 1 s, no fallback; 1: 1 s, half of it for the fallback; 2: an evaluation budget;
       3: no time limit, 4 MB of search data (the fallback after the learned search's memory) */
    for (int k = 0; k < 4; k++) {
        ns_planner_opts o;
        ns_planner_opts_default(&o);
        o.algo = NS_PLAN_SEARCH;
        o.time_limit = k < 2 ? 1 : 0;
        o.max_evaluated = k == 2 ? 20000 : 0;
        o.memory_limit = k == 3 ? (size_t)4 << 20 : 0;
        o.fallback = k ? 0.5 : 0;
        ns_planner_result r;
        ns_status st = ns_plan_heuristic(&h, &lt.task, &o, &r, &e);
        CHECK(st == (k == 0 ? NS_OUT_OF_TIME : k == 2 ? NS_INCOMPLETE : NS_OK));
        CHECK(r.classical == (k == 1 || k == 3));
        if (st == NS_OK) CHECK(ns_plan_ops_valid(&lt.task, r.plan, r.plan_len));
        CHECK((k >= 2 || r.seconds < 2) && r.expanded > 0 && r.predictions > 0);
        ns_planner_result_free(&r);
    }
    ns_loaded_task_free(&lt);
    ns_hwl_free(&h);
    ns_trajset_free(&tr);
}

/* Satisficing training data: past A*-LM-cut's memory limit GBFS-h^FF's
 * plan is used, and a problem no search solves is skipped and counted;
 * without satisficing both are errors. */
/* s's plans saved (learn --save-plans) and read back (--plans): the same
 * trajectories, raw plans included (DIR/raw); a raw plan that is not valid
 * is an error naming its file. */
static void saved_plans_reload(const ns_trajset *s, const char *problem_dir)
{
    char pd[400], rawf[600];
    snprintf(pd, sizeof pd, "%s/satplans", tmpdir);
    ns_error e;
    CHECK(ns_trajset_save_plans(s, pd, &e) == NS_OK);
    ns_traj_opts po = {.plan_dir = pd};
    ns_trajset r;
    CHECK(ns_trajset_load(&r, DOMAIN, problem_dir, &po, &e) == NS_OK);
    CHECK(r.n == s->n && r.satisficing == s->satisficing && ns_trajset_has_raw(&r));
    for (int i = 0; i < r.n && r.n == s->n; i++) {
        const ns_traj *a = &s->v[i], *b = &r.v[i];
        CHECK(a->nstates == b->nstates && !memcmp(a->ops, b->ops, sizeof(int) * (size_t)(a->nstates - 1)));
        CHECK(a->raw_n == b->raw_n && (!a->raw_ops) == (!b->raw_ops));
        if (a->raw_ops && b->raw_ops) CHECK(!memcmp(a->raw_ops, b->raw_ops, sizeof(int) * (size_t)a->raw_n));
    }
    ns_trajset_free(&r);
    snprintf(rawf, sizeof rawf, "%s/raw/%s.plan", pd, s->v[0].name);
    ns_buf step;
    ns_buf_init(&step);
    ns_plan_write_ops(&s->v[0].t, s->v[0].raw_ops, 1, &step); /* its first step alone: no goal */
    CHECK(ns_write_file_atomic(rawf, step.data, step.len, &e) == NS_OK);
    ns_buf_free(&step);
    CHECK(ns_trajset_load(&r, DOMAIN, problem_dir, &po, &e) == NS_ERR_INPUT && strstr(e.file, "/raw/"));
    ns_trajset_free(&r);
}

static void test_satisficing_trajectories(void)
{
    char d[300], f[400];
    snprintf(d, sizeof d, "%s/sat", tmpdir);
    ns_gen_arg a = {"blocks", 14};
    char **p = ns_test_gen_problems(d, "blocksworld", &a, 1, 1, 500, false);
    CHECK(p != NULL);
    ns_test_free_paths(p, 1);
    snprintf(f, sizeof f, "%s/z-unsolvable.pddl", d);
    const char *u = "(define (problem u) (:domain blocksworld-4ops) (:objects a b) "
                    "(:init (clear a) (clear b) (ontable a) (ontable b) (handempty)) (:goal (and (on a b) (on b a))))";
    ns_error e;
    CHECK(ns_write_file_atomic(f, u, strlen(u), &e) == NS_OK);
    ns_traj_opts o = {.time_limit = 30, .memory_limit = 1 << 20};
    ns_trajset s;
    CHECK(ns_trajset_load(&s, DOMAIN, d, &o, &e) != NS_OK);
    ns_trajset_free(&s);
    o.jobs = 2; /* solved in child processes: the same error, naming the problem */
    ns_error e2;
    CHECK(ns_trajset_load(&s, DOMAIN, d, &o, &e2) == e.code && strstr(e2.msg, e.file) && strstr(e2.msg, e.msg));
    ns_trajset_free(&s);
    o.satisficing = true;
    CHECK(ns_trajset_load(&s, DOMAIN, d, &o, &e) == NS_OK); /* and the same trajectories */
    CHECK(s.n == 1 && s.satisficing == 1 && s.unsolved == 1 && !strcmp(s.unsolved_paths[0], f));
    CHECK(s.n == 1 && ns_plan_ops_valid(&s.v[0].t, s.v[0].ops, s.v[0].nstates - 1));
    ns_trajset_free(&s);
    o.jobs = 0;
    CHECK(ns_trajset_load(&s, DOMAIN, d, &o, &e) == NS_OK);
    CHECK_EQ_INT(s.n, 1);
    CHECK_EQ_INT(s.satisficing, 1);
    CHECK_EQ_INT(s.unsolved, 1);
    CHECK(s.unsolved == 1 && !strcmp(s.unsolved_paths[0], f));
    if (s.n == 1) {
        const ns_traj *t = &s.v[0];
        CHECK(ns_plan_ops_valid(&t->t, t->ops, t->nstates - 1));
        CHECK(ns_task_is_goal(&t->t, t->states + (size_t)(t->nstates - 1) * (size_t)t->t.nwords));
        /* GBFS's plan as found is kept when shortening changed it, and a raw view follows it */
        CHECK(ns_trajset_has_raw(&s) == (t->raw_ops != NULL));
        if (t->raw_ops) {
            CHECK(t->raw_n > t->nstates - 1 && ns_plan_ops_valid(&t->t, t->raw_ops, t->raw_n));
            ns_trajset view;
            ns_trajset_raw_view(&s, &view);
            const ns_traj *r = &view.v[0];
            CHECK(view.n == 1 && view.unsolved == 0 && r->nstates == t->raw_n + 1 && r->ops == t->raw_ops);
            CHECK(r->states != t->states && !memcmp(r->states, t->states, sizeof(ns_word) * (size_t)t->t.nwords));
            CHECK(ns_task_is_goal(&r->t, r->states + (size_t)t->raw_n * (size_t)r->t.nwords));
            ns_trajset_view_free(&view);
            saved_plans_reload(&s, d);
        } else {
            printf("  (the GBFS plan was not shortened: no raw plan to check)\n");
        }
    }
    ns_trajset_free(&s);
}

/* Appends copies of paths[0..n) to s's unsolved list, as ns_trajset_load
 * records problems no search solved. */
static void mark_unsolved(ns_trajset *s, char *const *paths, int n)
{
    s->unsolved_paths = ns_xrealloc(s->unsolved_paths, sizeof(char *) * (size_t)(s->unsolved + n));
    for (int i = 0; i < n; i++) s->unsolved_paths[s->unsolved++] = ns_xstrdup(paths[i]);
}

/* Bootstrapping: training problems no search solved are planned with the
 * learned h; the solved ones join the set as valid trajectories (counted in
 * `added`, gone from the unsolved list), an unsolvable one stays, a missing
 * file is an error; ns_hwl_learn with co.bootstrap learns again on them. */
static void test_bootstrap(void)
{
    ns_trajset tr;
    if (!load(&tr, "train")) return;
    char dom[] = DOMAIN, tdir[512], bad[600], unsolv[600];
    snprintf(tdir, sizeof tdir, "%s/train", tmpdir);
    snprintf(bad, sizeof bad, "%s/no-such-problem.pddl", tmpdir);
    snprintf(unsolv, sizeof unsolv, "%s/sat/z-unsolvable.pddl", tmpdir); /* test_satisficing_trajectories' */
    int n = 0;
    char *dirs[1] = {NULL}, buf[512];
    snprintf(buf, sizeof buf, "%s/test", tmpdir);
    dirs[0] = buf;
    ns_error e;
    char **big = ns_problem_paths(dirs, 1, &n, &e); /* two 8-block problems */
    CHECK(big && n == 2);
    ns_hwl_config c;
    ns_hwl_config_init(&c);
    ns_choose_opts co;
    ns_choose_opts_default(&co);
    co.problems = 0;
    co.bootstrap = 0;
    ns_hwl h;
    CHECK(ns_hwl_learn(&h, &tr, dom, tdir, &c, &co, &e) == NS_OK);
    int n0 = tr.n;
    char *list[] = {big[0], unsolv, big[1]};
    mark_unsolved(&tr, list, 3);
    CHECK(ns_hwl_bootstrap(&h, &tr, 30, 0, &e) == NS_OK);
    CHECK_EQ_INT(tr.added, 2);
    CHECK_EQ_INT(tr.n, n0 + 2);
    CHECK(tr.unsolved == 1 && !strcmp(tr.unsolved_paths[0], unsolv));
    for (int i = n0; i < tr.n; i++) {
        const ns_traj *t = &tr.v[i];
        CHECK(!strcmp(t->path, big[i - n0]) && t->nstates > 1 && ns_plan_ops_valid(&t->t, t->ops, t->nstates - 1));
        CHECK(ns_task_is_goal(&t->t, t->states + (size_t)(t->nstates - 1) * (size_t)t->t.nwords));
        CHECK(strstr(big[i - n0], t->name) != NULL && !strstr(t->name, ".pddl"));
    }
    /* a missing file: its error, and it stays on the list with the rest after it */
    char *missing[] = {bad};
    mark_unsolved(&tr, missing, 1);
    CHECK(ns_hwl_bootstrap(&h, &tr, 30, 0, &e) == NS_ERR_IO && strstr(e.file, "no-such-problem") && tr.unsolved == 2);
    CHECK(!strcmp(tr.unsolved_paths[1], bad) && tr.n == n0 + 2);
    ns_hwl_free(&h);
    ns_trajset_free(&tr);
    /* ns_hwl_learn: bootstrapped, then fitted on every trajectory */
    if (!load(&tr, "train")) return;
    mark_unsolved(&tr, big, 2);
    co.bootstrap = 30;
    CHECK(ns_hwl_learn(&h, &tr, dom, tdir, &c, &co, &e) == NS_OK);
    CHECK(tr.added == 2 && tr.unsolved == 0 && h.problems == tr.n && h.rows == ns_trajset_states(&tr));
    ns_hwl_free(&h);
    ns_trajset_free(&tr);
    ns_test_free_paths(big, n);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ns_test_hwl_%d", (int)getpid());
    if (!gen_set("train", 4, 6, 100) || !gen_set("test", 8, 2, 300) || !gen_set("big", 7, 24, 500) ||
        !gen_set("huge", 16, 1, 700)) {
        printf("FAIL setup: cannot generate problems\n");
        return 1;
    }
    NS_RUN(test_fit_is_ridge_optimum);
    NS_RUN(test_rank_is_optimum);
    NS_RUN(test_choice);
    NS_RUN(test_file_roundtrip_and_refusals);
    NS_RUN(test_evaluator_and_plan);
    NS_RUN(test_fallback);
    NS_RUN(test_satisficing_trajectories);
    NS_RUN(test_bootstrap);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) printf("  could not remove %s\n", tmpdir);
    return ns_test_summary("test_hwl");
}
