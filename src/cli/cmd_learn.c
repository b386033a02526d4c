/* cmd_learn.c — `nextstate learn`: train a next-state predictor (LSTM or XGBoost on WL or FSF encodings) or a
 * learned heuristic (ridge regression of h* on WL features) on expert trajectories. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "nextstate/learn/hwl.h"
#include "nextstate/learn/predictor.h"
#include "nextstate/planner/planner.h"

/* What solving the training problems gave, on stderr. */
static void say_solved(const ns_trajset *tr, bool json, double solve_limit)
{
    if (!json && (tr->unsolved || tr->satisficing))
        fprintf(stderr, "learn: %d training problems solved by no search in the limits (skipped), %d by GBFS-h^FF "
                        "(not optimal; shortened by plan neighbourhood search)\n", tr->unsolved, tr->satisficing);
    if (tr->time_capped)
        fprintf(stderr, "learn: warning: on %d training problems a search stopped at --solve-time-limit (%g s) before "
                        "its --solve-work budget: their plans, and the model, may differ on another machine\n",
                tr->time_capped, solve_limit);
}

int cmd_learn(int argc, char **argv)
{
    const char *pos[2] = {0}, *out = NULL, *plans = NULL, *save_plans = NULL, *val_dir = NULL, *val_plans = NULL;
    int npos = 0, enc = NS_ENCODER_WL, iterations = 2, jobs = -1; /* -1: ns_traj_jobs */
    long maxobj = 0;
    bool statics = true, json = false, quiet = false, optimal_only = false;
    double solve_limit = 60, solve_memory = 4096;
    long solve_work = NS_TRAJ_SOLVE_WORK;
    ns_predictor_config c;
    ns_predictor_config_init(&c);
    bool hwl = true; /* the default: the best learned planner we have (README) */
    ns_hwl_config hc;
    ns_hwl_config_init(&hc);
    ns_choose_opts co;
    ns_choose_opts_default(&co);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        if (!strcmp(a, "--json")) json = true;
        else if (!strcmp(a, "--quiet")) quiet = true;
        else if (!strcmp(a, "--optimal-only")) optimal_only = true;
        else if (!strcmp(a, "--bootstrap")) co.bootstrap = 1;
        else if (!v && a[0] == '-' && a[1]) return cli_usage("learn", "%s expects a value", a);
        else if (!strcmp(a, "-o")) out = argv[++i];
        else if (!strcmp(a, "--plans")) plans = argv[++i];
        else if (!strcmp(a, "--save-plans")) save_plans = argv[++i];
        else if (!strcmp(a, "--val")) val_dir = argv[++i];
        else if (!strcmp(a, "--val-plans")) val_plans = argv[++i];
        else if (!strcmp(a, "--encoder")) {
            if ((enc = ns_encoder_kind_parse(v)) < 0) return cli_usage("learn", "--encoder expects wl or fsf");
            i++;
        } else if (!strcmp(a, "--model")) {
            int k = ns_predictor_kind_parse(v);
            hwl = !strcmp(v, "hwl");
            if (k < 0 && !hwl) return cli_usage("learn", "--model expects lstm, xgb or hwl");
            if (!hwl) c.kind = (ns_predictor_kind)k;
            i++;
        } else if (!strcmp(a, "--rank-weight")) {
            if (!cli_parse_min("learn", a, v, 0, true, INFINITY, &hc.rank_weight)) return NS_ERR_USAGE;
            i++;
        } else if (!strcmp(a, "--lambda")) {
            if (!cli_parse_min("learn", a, v, 0, true, INFINITY, &hc.lambda)) return NS_ERR_USAGE;
            i++;
        } else if (!strcmp(a, "--mode")) {
            int k = ns_predictor_mode_parse(v);
            if (k < 0) return cli_usage("learn", "--mode expects state or delta");
            c.mode = (ns_predictor_mode)k;
            i++;
        } else if (!strcmp(a, "--statics")) {
            if (strcmp(v, "in") && strcmp(v, "out")) return cli_usage("learn", "--statics expects in or out");
            statics = !strcmp(v, "in");
            i++;
        } else if (!strcmp(a, "--lr")) {
            if (!cli_parse_min("learn", a, v, 0, false, INFINITY, &c.lr)) return NS_ERR_USAGE;
            i++;
        } else if (!strcmp(a, "--solve-work")) {
            if (!cli_parse_range("learn", a, v, 0, LONG_MAX, &solve_work)) return NS_ERR_USAGE;
            i++;
        } else if (!strcmp(a, "--solve-time-limit") || !strcmp(a, "--solve-memory-limit")) {
            double *dst = !strcmp(a, "--solve-time-limit") ? &solve_limit : &solve_memory;
            if (!cli_parse_min("learn", a, v, 0, false, INFINITY, dst)) return NS_ERR_USAGE;
            i++;
        } else if (!strcmp(a, "--seed") || !strcmp(a, "--epochs") || !strcmp(a, "--hidden") ||
                   !strcmp(a, "--layers") || !strcmp(a, "--batch") || !strcmp(a, "--iterations") ||
                   !strcmp(a, "--max-objects") || !strcmp(a, "--rounds") || !strcmp(a, "--depth") ||
                   !strcmp(a, "--threads") || !strcmp(a, "--rank") || !strcmp(a, "--choose") ||
                   !strcmp(a, "--choose-budget") || !strcmp(a, "--jobs")) {
            if (!cli_parse_range("learn", a, v, 0, 1L << 30, &n)) return NS_ERR_USAGE;
            if (!strcmp(a, "--seed")) c.seed = (uint64_t)n;
            else if (!strcmp(a, "--epochs")) c.epochs = (int)n;
            else if (!strcmp(a, "--hidden")) c.hidden = (int)n;
            else if (!strcmp(a, "--layers")) c.layers = (int)n;
            else if (!strcmp(a, "--batch")) c.batch = (int)n;
            else if (!strcmp(a, "--iterations")) iterations = (int)n, co.niter = 0; /* no choice of iterations */
            else if (!strcmp(a, "--max-objects")) maxobj = n;
            else if (!strcmp(a, "--rank")) hc.rank = (int)n;
            else if (!strcmp(a, "--choose")) co.problems = (int)n;
            else if (!strcmp(a, "--choose-budget")) co.budget = n;
            else if (!strcmp(a, "--jobs")) jobs = (int)n;
            else if (!strcmp(a, "--rounds")) c.xgb.max_rounds = (int)n;
            else if (!strcmp(a, "--depth")) c.xgb.max_depth = (int)n;
            else c.xgb.nthread = (int)n;
            i++;
        } else if (a[0] == '-' && a[1]) return cli_usage("learn", "unknown option '%s'", a);
        else if (npos < 2) pos[npos++] = a;
        else return cli_usage("learn", "too many arguments");
    }
    if (npos != 2 || !out) return cli_usage("learn", "expects DOMAIN TRAIN_PROBLEMS_DIR -o MODEL");
    if (val_plans && !val_dir) return cli_usage("learn", "--val-plans needs --val");
    if (hwl && enc != NS_ENCODER_WL)
        return cli_usage("learn", "the learned heuristic (hwl, the default) reads WL features; FSF needs --model lstm or xgb");
    c.progress = !quiet && isatty(2);

    ns_error err;
    ns_trajset tr, va = {0};
    ns_traj_opts to = {.plan_dir = plans, .time_limit = solve_limit, .max_work = solve_work,
                       .satisficing = !optimal_only, .memory_limit = (size_t)(solve_memory * 1048576.0)};
    to.jobs = jobs >= 0 ? jobs : ns_traj_jobs(&to);
    int rc = 0;
    if (ns_trajset_load(&tr, pos[0], pos[1], &to, &err) != NS_OK) {
        ns_trajset_free(&tr);
        return cli_report(&err);
    }
    if (val_dir) {
        ns_traj_opts vo = to;
        vo.plan_dir = val_plans;
        if (ns_trajset_load(&va, pos[0], val_dir, &vo, &err) != NS_OK) rc = cli_report(&err);
    }
    if (!rc && !quiet) say_solved(&tr, json, solve_limit);
    if (hwl) {
        if (!rc) {
            hc.iterations = iterations;
            hc.statics = statics;
            hc.seed = c.seed;
            co.bootstrap = optimal_only || co.bootstrap == 0 ? 0 : solve_limit; /* (--bootstrap) */
            co.bootstrap_memory = to.memory_limit;
            co.jobs = to.jobs;
            rc = cli_learn_hwl(&tr, &va, pos[0], pos[1], &hc, &co, out, json, quiet);
        } /* (with the plans bootstrapping found) */
        if (!rc && save_plans && ns_trajset_save_plans(&tr, save_plans, &err) != NS_OK) rc = cli_report(&err);
        ns_trajset_free(&tr);
        ns_trajset_free(&va);
        return rc;
    }
    ns_encoder_spec spec = {0};
    if (!rc && maxobj <= 0 && enc == NS_ENCODER_FSF) { /* slots for every training and validation problem */
        maxobj = ns_trajset_max_objects(&tr);
        if (val_dir && ns_trajset_max_objects(&va) > maxobj) maxobj = ns_trajset_max_objects(&va);
    }
    if (!rc) {
        ns_status st = enc == NS_ENCODER_WL ? ns_encoder_spec_fit_wl(&spec, &tr, iterations, statics, &err)
                                            : ns_encoder_spec_fsf(&spec, &tr, (int)maxobj, &err);
        if (st != NS_OK) rc = cli_report(&err);
    }
    ns_predictor m = {0};
    if (!rc && save_plans && ns_trajset_save_plans(&tr, save_plans, &err) != NS_OK) rc = cli_report(&err);
    if (!rc) {
        if (ns_predictor_train(&m, &spec, &tr, val_dir ? &va : NULL, &c, &err) != NS_OK) rc = cli_report(&err);
        else if (ns_predictor_save(&m, out, &err) != NS_OK) rc = cli_report(&err);
    }
    if (!rc) cli_learn_report(&m, &tr, &va, &c, out, json, quiet);
    ns_predictor_free(&m);
    ns_encoder_spec_free(&spec);
    ns_trajset_free(&tr);
    ns_trajset_free(&va);
    return rc;
}
