/* test_predictor.c — expert trajectories, WL/FSF encoders behind one
 * interface, the LSTM and XGBoost next-state predictors (gradients, training,
 * files) and planning with them (beam, restarts, regret search). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen_fixture.h"
#include "nextstate/core/plan.h"
#include "nextstate/planner/planner.h"
#include "nextstate/learn/predictor.h"
#include "nextstate/util/util.h"
#include "test.h"

#define DOMAIN "domains/blocksworld/domain.pddl"

static char tmpdir[256];

static void make_tmp(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ns_test_predictor_%d", (int)getpid());
}

/* Small blocksworld problems: train (3–4 blocks), test (6 blocks). */
static bool gen_sets(void)
{
    char d[512];
    ns_gen_arg a = {"blocks", 3};
    snprintf(d, sizeof d, "%s/train", tmpdir);
    char **p = ns_test_gen_problems(d, "blocksworld", &a, 1, 8, 100, true);
    if (!p) return false;
    ns_test_free_paths(p, 8);
    snprintf(d, sizeof d, "%s/val", tmpdir);
    a.value = 4;
    p = ns_test_gen_problems(d, "blocksworld", &a, 1, 3, 200, false);
    if (!p) return false;
    ns_test_free_paths(p, 3);
    snprintf(d, sizeof d, "%s/test", tmpdir);
    a.value = 6;
    p = ns_test_gen_problems(d, "blocksworld", &a, 1, 3, 300, false);
    if (!p) return false;
    ns_test_free_paths(p, 3);
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

/* The train, val and test sets (false, with nothing left loaded, on failure). */
static bool load_sets(ns_trajset *tr, ns_trajset *va, ns_trajset *te)
{
    if (!load(tr, "train")) return false;
    if (!load(va, "val")) {
        ns_trajset_free(tr);
        return false;
    }
    if (!load(te, "test")) {
        ns_trajset_free(tr);
        ns_trajset_free(va);
        return false;
    }
    return true;
}

static void free_sets(ns_trajset *tr, ns_trajset *va, ns_trajset *te)
{
    ns_trajset_free(tr);
    ns_trajset_free(va);
    ns_trajset_free(te);
}

static void test_trajectories(void)
{
    ns_trajset s;
    CHECK(load(&s, "train"));
    if (!s.n) return;
    CHECK_EQ_INT(s.n, 8);
    CHECK(strcmp(s.v[0].name, "p0") == 0 && strcmp(s.v[7].name, "p7") == 0);
    for (int i = 0; i < s.n; i++) {
        const ns_traj *t = &s.v[i];
        CHECK(t->nstates >= 1);
        CHECK(ns_plan_ops_valid(&t->t, t->ops, t->nstates - 1));
        CHECK(ns_task_is_goal(&t->t, t->states + (size_t)(t->nstates - 1) * (size_t)t->t.nwords));
    }
    ns_trajset_free(&s);

    /* a plan folder with a wrong plan: located error */
    char pd[512], pf[600];
    snprintf(pd, sizeof pd, "%s/badplans", tmpdir);
    ns_error e;
    CHECK(ns_mkdir_p(pd, &e) == NS_OK);
    snprintf(pf, sizeof pf, "%s/p0.plan", pd);
    const char *bad = "(pick-up b1)\n(pick-up b2)\n";
    CHECK(ns_write_file_atomic(pf, bad, strlen(bad), &e) == NS_OK);
    char d[512];
    snprintf(d, sizeof d, "%s/train", tmpdir);
    ns_traj_opts o = {.plan_dir = pd};
    ns_status st = ns_trajset_load(&s, DOMAIN, d, &o, &e);
    CHECK(st == NS_ERR_INPUT);
    CHECK(strstr(e.file, "p0.plan") != NULL);
    ns_trajset_free(&s);
    /* an empty plan folder: nothing to learn from */
    snprintf(pd, sizeof pd, "%s/noplans", tmpdir);
    CHECK(ns_mkdir_p(pd, &e) == NS_OK);
    o.plan_dir = pd;
    CHECK(ns_trajset_load(&s, DOMAIN, d, &o, &e) == NS_ERR_INPUT);
    ns_trajset_free(&s);
}

static void test_encoder_spec_roundtrip(void)
{
    ns_trajset s;
    if (!load(&s, "train")) return;
    ns_error e;
    for (int kind = 0; kind < 2; kind++) {
        ns_encoder_spec a, b;
        ns_status st = kind ? ns_encoder_spec_fsf(&a, &s, 0, &e) : ns_encoder_spec_fit_wl(&a, &s, 2, true, &e);
        CHECK(st == NS_OK);
        if (st != NS_OK) continue;
        ns_buf t;
        ns_buf_init(&t);
        ns_encoder_spec_write(&a, &t);
        ns_json j;
        CHECK(ns_json_parse(&j, t.data, t.len, "spec", &e) == NS_OK);
        CHECK(ns_encoder_spec_parse(&b, &j, "spec", &e) == NS_OK);
        CHECK_EQ_INT(ns_encoder_spec_dim(&a), ns_encoder_spec_dim(&b));
        /* both encode the last state of every trajectory alike */
        int D = ns_encoder_spec_dim(&a);
        float *x = calloc((size_t)D, sizeof(float)), *y = calloc((size_t)D, sizeof(float));
        for (int i = 0; i < s.n; i++) {
            ns_encoder ea, eb;
            CHECK(ns_encoder_init(&ea, &a, &s.v[i].t, &e) == NS_OK);
            CHECK(ns_encoder_init(&eb, &b, &s.v[i].t, &e) == NS_OK);
            const ns_word *last = s.v[i].states + (size_t)(s.v[i].nstates - 1) * (size_t)s.v[i].t.nwords;
            ns_encoder_state(&ea, last, x);
            ns_encoder_state(&eb, last, y);
            CHECK(memcmp(x, y, sizeof(float) * (size_t)D) == 0);
            ns_encoder_goal(&ea, x);
            ns_encoder_goal(&eb, y);
            CHECK(memcmp(x, y, sizeof(float) * (size_t)D) == 0);
            ns_encoder_free(&ea);
            ns_encoder_free(&eb);
        }
        free(x);
        free(y);
        ns_json_free(&j);
        ns_buf_free(&t);
        ns_encoder_spec_free(&a);
        ns_encoder_spec_free(&b);
    }
    /* FSF cannot encode a problem with more objects than its slots */
    ns_trajset big;
    if (load(&big, "test")) {
        ns_encoder_spec f;
        CHECK(ns_encoder_spec_fsf(&f, &s, 0, &e) == NS_OK);
        ns_encoder en;
        CHECK(ns_encoder_init(&en, &f, &big.v[0].t, &e) == NS_ERR_INPUT);
        ns_encoder_spec_free(&f);
        ns_trajset_free(&big);
    }
    ns_trajset_free(&s);
}

/* Finite differences of the predictor's training loss (LSTM, both modes)
 * through the head and the LSTM: central differences of ns_predictor_loss
 * against the analytic gradient of ns_predictor_loss_grad, for entries of
 * every tensor. */
static void grad_check(ns_predictor_mode mode)
{
    ns_trajset tr;
    if (!load(&tr, "val")) return;
    ns_error e;
    ns_encoder_spec spec;
    CHECK(ns_encoder_spec_fit_wl(&spec, &tr, 1, true, &e) == NS_OK);
    ns_predictor_config c;
    ns_predictor_config_init(&c);
    c.mode = mode;
    c.hidden = 6;
    c.epochs = 3;
    c.lr = 1e-2;
    ns_predictor m;
    CHECK(ns_predictor_train(&m, &spec, &tr, NULL, &c, &e) == NS_OK);
    double loss;
    CHECK(ns_predictor_loss_grad(&m, &tr, &loss, &e) == NS_OK);
    double worst = 0;
    int checked = 0, skipped = 0;
    for (int ti = 0; ti < m.params.n; ti++) {
        const ns_tensor_info *t = &m.params.t[ti];
        for (size_t k = 0; k < t->count; k += 1 + t->count / 5) {
            float *w = m.params.data + t->offset + k;
            float g = m.params.grad[t->offset + k], keep = *w;
            double nums[2];
            for (int q = 0; q < 2; q++) {
                double h = q ? 5e-3 : 1e-2, lp, lm;
                *w = keep + (float)h;
                ns_predictor_loss(&m, &tr, &lp, &e);
                *w = keep - (float)h;
                ns_predictor_loss(&m, &tr, &lm, &e);
                *w = keep;
                nums[q] = (lp - lm) / (2 * h);
            }
            /* a ReLU kink inside the interval makes the difference quotient
             * depend on the step: such entries prove nothing either way */
            if (fabs(nums[0] - nums[1]) > 0.05 * fmax(fabs(nums[0]), 1e-3)) {
                skipped++;
                continue;
            }
            double num = nums[1];
            double rel = fabs(num - g) / fmax(1e-3, fabs(num) + fabs(g));
            if (rel > worst) worst = rel;
            if (rel > 2e-2) printf("    %s[%zu]: numeric %.6g analytic %.6g\n", t->name, k, num, (double)g);
            checked++;
        }
    }
    printf("  %s mode: %d gradient entries (%d skipped at kinks), worst relative difference %.2e\n",
           ns_predictor_mode_name(mode), checked, skipped, worst);
    CHECK(checked > 40);
    CHECK(worst < 2e-2);
    ns_predictor_free(&m);
    ns_trajset_free(&tr);
}

static void test_grad_state(void) { grad_check(NS_PREDICT_STATE); }
static void test_grad_delta(void) { grad_check(NS_PREDICT_DELTA); }

static void test_lstm_learns_and_plans(ns_predictor_mode mode)
{
    ns_trajset tr, va, te;
    if (!load_sets(&tr, &va, &te)) return;
    ns_error e;
    ns_encoder_spec spec;
    CHECK(ns_encoder_spec_fit_wl(&spec, &tr, 2, true, &e) == NS_OK);
    ns_predictor_config c;
    ns_predictor_config_init(&c);
    c.mode = mode;
    c.hidden = 32;
    c.epochs = 60;
    c.seed = 7;
    ns_predictor m;
    CHECK(ns_predictor_train(&m, &spec, &tr, &va, &c, &e) == NS_OK);
    double trained;
    CHECK(ns_predictor_loss(&m, &va, &trained, &e) == NS_OK);
    CHECK(fabs(trained - m.best_val) < 1e-6);
    CHECK(m.best_epoch >= 1 && m.best_epoch <= c.epochs);

    /* an untrained reference: one epoch at a negligible learning rate
     * (0 epochs is a usage error) */
    ns_encoder_spec spec2;
    CHECK(ns_encoder_spec_fit_wl(&spec2, &tr, 2, true, &e) == NS_OK);
    ns_predictor_config c0 = c;
    c0.epochs = 1;
    c0.lr = 1e-9;
    ns_predictor m0;
    CHECK(ns_predictor_train(&m0, &spec2, &tr, &va, &c0, &e) == NS_OK);
    printf("  %s mode: validation loss untrained %.4f, trained %.4f (epoch %d)\n",
           ns_predictor_mode_name(mode), m0.best_val, m.best_val, m.best_epoch);
    CHECK(m.best_val < 0.5 * m0.best_val);

    /* save → load gives the same predictions */
    char path[512];
    snprintf(path, sizeof path, "%s/m.model", tmpdir);
    CHECK(ns_predictor_save(&m, path, &e) == NS_OK);
    ns_predictor l;
    CHECK(ns_predictor_load(&l, path, &e) == NS_OK);
    double again;
    CHECK(ns_predictor_loss(&l, &va, &again, &e) == NS_OK);
    CHECK(again == trained);

    /* planning: beam and search plans are valid; search (complete) solves all */
    int beam_solved = 0;
    for (int i = 0; i < te.n; i++) {
        for (int algo = 0; algo < 3; algo++) {
            ns_planner_opts o;
            ns_planner_opts_default(&o);
            o.algo = (ns_planner_algo)algo;
            o.time_limit = 20;
            ns_planner_result r;
            ns_status st = ns_plan_learned(&l, &te.v[i].t, &o, &r, &e);
            if (st != NS_OK && algo != NS_PLAN_BEAM)
                printf("  problem %d, %s: status %d after %.2f s, %ld expanded\n", i,
                       ns_planner_algo_name(o.algo), (int)st, r.seconds, r.expanded);
            if (st == NS_OK) CHECK(ns_plan_ops_valid(&te.v[i].t, r.plan, r.plan_len));
            else CHECK(st == NS_INCOMPLETE);
            if (algo == NS_PLAN_SEARCH || algo == NS_PLAN_RESTART) CHECK(st == NS_OK);
            if (algo == NS_PLAN_BEAM && st == NS_OK) beam_solved++;
            ns_planner_result_free(&r);
        }
    }
    printf("  %s mode: beam solved %d/%d 6-block problems\n", ns_predictor_mode_name(mode), beam_solved, te.n);

    /* guided search needs a model without recurrent state */
    {
        ns_planner_opts o;
        ns_planner_opts_default(&o);
        o.algo = NS_PLAN_GUIDED;
        ns_planner_result r;
        CHECK(ns_plan_learned(&l, &te.v[0].t, &o, &r, &e) == NS_ERR_UNSUPPORTED);
        ns_planner_result_free(&r);
    }

    /* truncated and corrupted model files are input errors */
    char *buf;
    size_t n;
    CHECK(ns_read_file(path, &buf, &n, &e) == NS_OK);
    char bad[600];
    snprintf(bad, sizeof bad, "%s/bad.model", tmpdir);
    size_t cuts[3] = {n / 2, n - 1, 10};
    for (int k = 0; k < 3; k++) {
        CHECK(ns_write_file_atomic(bad, buf, cuts[k], &e) == NS_OK);
        ns_predictor x;
        CHECK(ns_predictor_load(&x, bad, &e) == NS_ERR_INPUT);
    }
    buf[n / 3] ^= 0x55;
    CHECK(ns_write_file_atomic(bad, buf, n, &e) == NS_OK);
    ns_predictor x;
    CHECK(ns_predictor_load(&x, bad, &e) == NS_ERR_INPUT);
    free(buf);
    ns_predictor_free(&l);
    ns_predictor_free(&m);
    ns_predictor_free(&m0);
    free_sets(&tr, &va, &te);
}

static void test_lstm_state(void) { test_lstm_learns_and_plans(NS_PREDICT_STATE); }
static void test_lstm_delta(void) { test_lstm_learns_and_plans(NS_PREDICT_DELTA); }

static void test_xgb_plans(void)
{
    ns_trajset tr, va, te;
    if (!load_sets(&tr, &va, &te)) return;
    ns_error e;
    ns_encoder_spec spec;
    CHECK(ns_encoder_spec_fit_wl(&spec, &tr, 2, true, &e) == NS_OK);
    ns_predictor_config c;
    ns_predictor_config_init(&c);
    c.kind = NS_PREDICTOR_XGB;
    c.mode = NS_PREDICT_DELTA;
    c.xgb.max_rounds = 60;
    ns_predictor m;
    CHECK(ns_predictor_train(&m, &spec, &tr, &va, &c, &e) == NS_OK);
    CHECK(m.best_epoch >= 1 && m.best_epoch <= 60);
    char path[512];
    snprintf(path, sizeof path, "%s/x.model", tmpdir);
    CHECK(ns_predictor_save(&m, path, &e) == NS_OK);
    ns_predictor l;
    CHECK(ns_predictor_load(&l, path, &e) == NS_OK);
    double a, b;
    CHECK(ns_predictor_loss(&m, &va, &a, &e) == NS_OK);
    CHECK(ns_predictor_loss(&l, &va, &b, &e) == NS_OK);
    CHECK(a == b);
    /* the kept validation loss is XGBoost's own validation RMSE squared */
    CHECK(fabs(a - m.best_val) <= 1e-6 + 1e-4 * a);
    /* the file is version 3 (its own container); a flipped byte or a cut is refused */
    {
        char *buf;
        size_t n;
        CHECK(ns_read_file(path, &buf, &n, &e) == NS_OK);
        CHECK(n > 16 && !memcmp(buf, "NSPREDXG", 8) && buf[8] == 3);
        char bad[600];
        snprintf(bad, sizeof bad, "%s/xbad.model", tmpdir);
        size_t cuts[4] = {n / 2, n - 1, 40, 10};
        for (int k = 0; k < 4; k++) {
            CHECK(ns_write_file_atomic(bad, buf, cuts[k], &e) == NS_OK);
            ns_predictor x;
            CHECK(ns_predictor_load(&x, bad, &e) == NS_ERR_INPUT);
        }
        for (size_t at = 9; at < n; at += n / 7) {
            buf[at] ^= 0x21;
            CHECK(ns_write_file_atomic(bad, buf, n, &e) == NS_OK);
            ns_predictor x;
            CHECK(ns_predictor_load(&x, bad, &e) == NS_ERR_INPUT);
            buf[at] ^= 0x21;
        }
        free(buf);
    }
    /* version 2 files (a params checkpoint holding the forest, earlier
     * builds) still load, to the same predictions */
    {
        ns_buf meta, fb;
        ns_buf_init(&meta);
        ns_buf_init(&fb);
        ns_forest_save(&m.forest, &fb);
        ns_buf_printf(&meta, "{\"format\": \"nextstate-predictor\", \"version\": 2, \"model\": \"xgb\", "
                             "\"mode\": \"delta\", \"dim\": %d, \"encoder\": ", m.dim);
        ns_encoder_spec_write(&m.enc, &meta);
        ns_buf_printf(&meta, ", \"xgb\": {\"best_round\": %d, \"rounds\": %d, \"forest_bytes\": %zu}}",
                      m.xgb.best_round, m.xgb.rounds, fb.len);
        ns_params fp;
        ns_params_init(&fp);
        int64_t words = (int64_t)((fb.len + 3) / 4);
        ns_params_add(&fp, "forest", 1, &words, NS_INIT_ZEROS, 0);
        CHECK(ns_params_alloc(&fp, &e) == NS_OK);
        float *w = ns_params_at(&fp, fp.data, "forest");
        memset(w, 0, (size_t)words * 4);
        memcpy(w, fb.data, fb.len);
        char old[600];
        snprintf(old, sizeof old, "%s/v2.model", tmpdir);
        ns_ckpt_opts o = {false, 1, meta.data};
        CHECK(ns_params_save(&fp, old, &o, &e) == NS_OK);
        ns_params_free(&fp);
        ns_predictor v2;
        CHECK(ns_predictor_load(&v2, old, &e) == NS_OK);
        double c2;
        CHECK(ns_predictor_loss(&v2, &va, &c2, &e) == NS_OK);
        CHECK(c2 == a);
        ns_predictor_free(&v2);
        ns_buf_free(&meta);
        ns_buf_free(&fb);
    }
    for (int i = 0; i < te.n; i++) {
        for (int algo = NS_PLAN_SEARCH; algo <= NS_PLAN_GUIDED; algo++) {
            ns_planner_opts o;
            ns_planner_opts_default(&o);
            o.algo = (ns_planner_algo)algo;
            o.time_limit = 20;
            ns_planner_result r;
            CHECK(ns_plan_learned(&l, &te.v[i].t, &o, &r, &e) == NS_OK);
            if (r.plan) CHECK(ns_plan_ops_valid(&te.v[i].t, r.plan, r.plan_len));
            CHECK(r.predictions > 0);
            ns_planner_result_free(&r);
        }
    }
    /* the model's choice among h's helpful actions (--prefer): a dual-queue search on a learned h */
    ns_hwl_config hc;
    ns_hwl_config_init(&hc);
    ns_hwl h;
    CHECK(ns_hwl_fit(&h, &tr, &hc, &e) == NS_OK);
    for (int i = 0; i < te.n; i++) {
        ns_planner_opts o;
        ns_planner_opts_default(&o);
        o.algo = NS_PLAN_GUIDED;
        o.time_limit = 20;
        o.prefer = &l;
        ns_planner_result r;
        CHECK(ns_plan_heuristic(&h, &te.v[i].t, &o, &r, &e) == NS_OK);
        if (r.plan) CHECK(ns_plan_ops_valid(&te.v[i].t, r.plan, r.plan_len));
        CHECK(r.model_seconds > 0); /* the model was asked */
        ns_planner_result_free(&r);
        o.algo = NS_PLAN_LAMA; /* LAMA's queues take no model */
        CHECK(ns_plan_heuristic(&h, &te.v[i].t, &o, &r, &e) == NS_ERR_USAGE && r.plan == NULL);
    }
    ns_hwl_free(&h);
    ns_predictor_free(&l);
    ns_predictor_free(&m);
    free_sets(&tr, &va, &te);
}

int main(void)
{
    make_tmp();
    if (!gen_sets()) {
        printf("cannot write fixtures under %s\n", tmpdir);
        return 1;
    }
    NS_RUN(test_trajectories);
    NS_RUN(test_encoder_spec_roundtrip);
    NS_RUN(test_grad_state);
    NS_RUN(test_grad_delta);
    NS_RUN(test_lstm_state);
    NS_RUN(test_lstm_delta);
    NS_RUN(test_xgb_plans);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) printf("  could not remove %s\n", tmpdir);
    return ns_test_summary("test_predictor");
}
