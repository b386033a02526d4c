/* test_report.c — the one-call library runs the CLI only prints:
 * ns_task_load, ns_split_open, ns_world_data_open / _list, ns_world_fit,
 * ns_eval_report and ns_ref_run, each checked against the lower-level calls
 * it replaces. */
#include <string.h>
#include <unistd.h>
#include "gen_fixture.h"
#include "test.h"
#include "nextstate.h"

static char tmpdir[256], data_dir[300], split_dir[300], model[300];
static char **probs;
#define DOMAIN "domains/ferry/domain.pddl"

static void test_task_load(void)
{
    ns_loaded_task lt;
    ns_error e;
    CHECK_EQ_INT(ns_task_load(&lt, DOMAIN, probs[0], &e), NS_OK);
    CHECK(lt.task.natoms > 0 && lt.task.nops > 0 && lt.ground_seconds >= 0);
    CHECK(lt.task.problem == &lt.problem && lt.task.domain == &lt.domain);
    ns_loaded_task_free(&lt);
    CHECK(ns_task_load(&lt, DOMAIN, "/nonexistent/p.pddl", &e) != NS_OK);
    CHECK_STR(e.file, "/nonexistent/p.pddl");
    CHECK(ns_task_load(&lt, "/nonexistent/d.pddl", probs[0], &e) != NS_OK);
    CHECK_STR(e.file, "/nonexistent/d.pddl");
}

static void test_split_open(void)
{
    ns_split_data sd;
    ns_error e;
    CHECK_EQ_INT(ns_split_open(&sd, split_dir, &e), NS_OK);
    CHECK_EQ_INT(sd.ndatasets, 1);
    CHECK(sd.ds[0] == &sd.dss[0] && ns_dataset_ntransitions(sd.ds[0]) > 0);
    CHECK(sd.split.train.n > 0 && sd.split.test.n > 0);
    ns_split_data_free(&sd);
    CHECK(ns_split_open(&sd, "/nonexistent/split", &e) != NS_OK);
    CHECK(sd.ds == NULL && sd.ndatasets == 0);
    ns_split_data_free(&sd); /* nothing left: a second free is harmless */
}

static void test_world_list(void)
{
    ns_world_data wd;
    ns_error e;
    CHECK_EQ_INT(ns_world_data_open(&wd, split_dir, "builtin", "builtin", "none", &e), NS_OK);
    CHECK(wd.sv.n > 0 && wd.av.n > 0 && wd.in.nds == 1);
    ns_world_list l;
    CHECK_EQ_INT(ns_world_data_list(&wd, false, 5, split_dir, &l, &e), NS_OK);
    CHECK(l.refs == &wd.sd.split.test && l.pools == wd.sd.split.pools && l.pool_size == 32);
    ns_world_list_free(&l);
    CHECK_EQ_INT(ns_world_data_list(&wd, true, 5, split_dir, &l, &e), NS_OK);
    const ns_split *sp = &wd.sd.split;
    int64_t *want = ns_split_pools_draw(sp, wd.sd.ds, &sp->dev, 32, 5 ^ NS_SEED_DEV_POOLS);
    CHECK(l.refs == &sp->dev && l.pool_size == 32 && want && l.pools);
    if (want && l.pools) CHECK(!memcmp(want, l.pools, (size_t)sp->dev.n * 32 * sizeof *want));
    free(want);
    ns_world_list_free(&l);
    ns_world_data_free(&wd);
    /* standardising sparse built-in features is refused, and nothing leaks */
    CHECK(ns_world_data_open(&wd, split_dir, "builtin", "builtin", "state", &e) == NS_ERR_USAGE);
}

static void test_fit_report(void)
{
    ns_fit_opts fo;
    ns_fit_opts_init(&fo);
    fo.cfg.state_hidden = fo.cfg.action_hidden = 32;
    fo.train.epochs = 4;
    fo.train.lr = 2e-3;
    fo.train.seed = 3;
    ns_fit_result fr;
    ns_error e;
    CHECK_EQ_INT(ns_world_fit(split_dir, &fo, model, &fr, &e), NS_OK);
    CHECK_EQ_INT(fr.stats.epochs_run, 4);
    CHECK(fr.json && strstr(fr.json, "\"best_epoch\"") && fr.params_state > 0);
    /* the checkpoint holds the train object and the features */
    ns_world w;
    char *meta = NULL;
    CHECK_EQ_INT(ns_world_load(&w, model, &meta, &e), NS_OK);
    CHECK(meta && fr.json && strstr(meta, "\"state_vocab\""));
    /* ... the same train object as `train --json`, less its timings (same seed, same bytes) */
    const char *cut = fr.json ? strstr(fr.json, ", \"seconds\"") : NULL;
    CHECK(cut && meta && strstr(meta, "\"seconds\"") == NULL);
    if (cut && meta) {
        char *head = ns_xstrdup(fr.json);
        head[cut - fr.json] = '\0';
        CHECK(strstr(meta, head) != NULL);
        free(head);
    }
    /* the report's metrics are ns_eval_world's on the same inputs and pools */
    ns_report_opts ro;
    ns_report_opts_init(&ro);
    ro.eval.latency_queries = 0;
    ro.eval.seed = 7;
    ro.rollout = true;
    ns_report rep;
    CHECK_EQ_INT(ns_eval_report(split_dir, model, &ro, &rep, &e), NS_OK);
    ns_world_data wd;
    CHECK_EQ_INT(ns_world_data_open_model(&wd, split_dir, &w, model, meta, NULL, NULL, &e), NS_OK);
    ns_eval_result r;
    const ns_split *sp = &wd.sd.split;
    CHECK_EQ_INT(ns_eval_world(&w, &wd.in, &sp->test, sp->pools, sp->pool_size, &ro.eval, &r, &e), NS_OK);
    CHECK_EQ_INT(rep.r.n, sp->test.n);
    CHECK(rep.r.hit[0] == r.hit[0] && rep.r.hit[1] == r.hit[1] && rep.r.mrr == r.mrr);
    CHECK(rep.plans && rep.rollout && rep.per == NULL);
    ns_buf b;
    ns_buf_init(&b);
    ns_report_json(&rep, &b);
    CHECK(strstr(b.data, "\"rollout\": ") && strstr(b.data, "\"plans\": ") && b.data[b.len - 1] == '\n');
    b.len = 0;
    ns_report_table(&rep, &b);
    CHECK(strstr(b.data, "Hit (random ties)") != NULL);
    ns_buf_free(&b);
    ns_report_free(&rep);
    ns_world_data_free(&wd);
    ns_world_free(&w);
    free(meta);
    ns_fit_result_free(&fr);
    /* a missing model: an error naming it */
    CHECK(ns_eval_report(split_dir, "/nonexistent.ckpt", &ro, &rep, &e) != NS_OK);
    CHECK_STR(e.file, "/nonexistent.ckpt");
}

static void test_ref_run(void)
{
    ns_ref_report rep;
    ns_error e;
    CHECK_EQ_INT(ns_ref_run(split_dir, NS_REF_OFFSET_ACTION, "builtin", false, 2, &rep, &e), NS_OK);
    ns_world_data wd;
    CHECK_EQ_INT(ns_world_data_open(&wd, split_dir, "builtin", "builtin", "none", &e), NS_OK);
    ns_ref_model *m = NULL;
    ns_eval_result r;
    const ns_split *sp = &wd.sd.split;
    CHECK_EQ_INT(ns_ref_fit(&m, NS_REF_OFFSET_ACTION, &wd.in, &sp->train, &e), NS_OK);
    CHECK_EQ_INT(ns_ref_eval(m, &sp->test, sp->pools, sp->pool_size, 2, &r, &e), NS_OK);
    CHECK(rep.r.n == r.n && rep.r.hit[1] == r.hit[1] && rep.r.mrr == r.mrr);
    ns_ref_free(m);
    ns_world_data_free(&wd);
    ns_buf b;
    ns_buf_init(&b);
    ns_ref_report_json(&rep, &b);
    CHECK(strstr(b.data, "\"method\": \"offset-action\"") != NULL);
    ns_buf_free(&b);
    ns_ref_report_free(&rep);
    CHECK(ns_ref_run("/nonexistent", NS_REF_IDENTITY, "builtin", true, 1, &rep, &e) != NS_OK);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ns_test_report_%ld", (long)getpid());
    snprintf(data_dir, sizeof data_dir, "%s/data", tmpdir);
    snprintf(split_dir, sizeof split_dir, "%s/split", tmpdir);
    snprintf(model, sizeof model, "%s/m.ckpt", tmpdir);
    ns_gen_arg fe[] = {{"cars", 3}};
    probs = ns_test_gen_problems(tmpdir, "ferry", fe, 1, 3, 1, false);
    ns_dataset ds;
    ns_split sp;
    ns_error e;
    ns_dataset_opts o = {.mode = NS_SPACE_OPTIMAL, .plans = 4, .seed = 1};
    ns_split_opts so = {.protocol = NS_PROTO_INTERPOLATION, .pool_size = 32, .seed = 1};
    const ns_dataset *dsp[1] = {&ds};
    const char *dirs[1] = {data_dir};
    bool ok = probs && ns_dataset_build(&ds, DOMAIN, (const char *const *)probs, 3, &o, &e) == NS_OK;
    ok = ok && ns_dataset_save(&ds, data_dir, &e) == NS_OK && ns_split_make(&sp, dsp, 1, &so, &e) == NS_OK;
    ok = ok && ns_split_save(&sp, dirs, split_dir, &e) == NS_OK;
    CHECK(ok);
    if (ok) {
        ns_split_free(&sp);
        ns_dataset_free(&ds);
        NS_RUN(test_task_load);
        NS_RUN(test_split_open);
        NS_RUN(test_world_list);
        NS_RUN(test_fit_report);
        NS_RUN(test_ref_run);
    }
    ns_test_free_paths(probs, 3);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd)) printf("could not remove %s\n", tmpdir);
    return ns_test_summary("test_report");
}
