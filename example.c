/* example.c — the library's lifecycle in one file: load a task, expand
 * successors, encode states, build a dataset and a split, train a world
 * model and query it.  Built by `make` as build/example; run as
 *   build/example domains/ferry/domain.pddl [WORK_DIR]
 * (WORK_DIR, default a fresh folder under /tmp, receives the problems,
 * dataset, split and checkpoint). */
#include <stdio.h>
#include <stdlib.h>
#include "nextstate.h"

static int fail(const ns_error *e)
{
    char buf[1024];
    ns_error_format(e, buf, sizeof buf);
    fprintf(stderr, "example: %s\n", buf);
    return 1;
}

int main(int argc, char **argv)
{
    const char *domain = argc > 1 ? argv[1] : "domains/ferry/domain.pddl";
    char tmpl[] = "/tmp/nextstate-example-XXXXXX";
    const char *work = argc > 2 ? argv[2] : mkdtemp(tmpl);
    ns_error err;
    ns_buf b, path;
    ns_buf_init(&b);
    ns_buf_init(&path);

    /* 1. three small ferry problems from the generator, written as PDDL */
    char *problems[3];
    ns_gen_arg cars = {"cars", 3};
    if (!work || ns_mkdir_p(work, &err)) return work ? fail(&err) : 1;
    for (int i = 0; i < 3; i++) {
        b.len = path.len = 0;
        char name[16];
        snprintf(name, sizeof name, "p%d", i + 1);
        if (ns_gen_problem("ferry", &cars, 1, (uint64_t)i + 1, name, &b, &err)) return fail(&err);
        ns_buf_printf(&path, "%s/%s.pddl", work, name);
        if (ns_write_file_atomic(path.data, b.data, b.len, &err)) return fail(&err);
        problems[i] = ns_xstrdup(path.data);
    }

    /* 2. load one task (domain + problem, grounded) and expand its initial state */
    ns_loaded_task lt;
    if (ns_task_load(&lt, domain, problems[0], &err)) return fail(&err);
    const ns_task *t = &lt.task;
    ns_succgen g;
    ns_succgen_init(&g, t);
    int *ops = ns_xmalloc((size_t)t->nops * sizeof *ops);
    int nops = ns_succgen_applicable(&g, t->init, ops);
    printf("task %s: %d atoms, %d operators; %d applicable in the initial state\n", problems[0], t->natoms, t->nops,
           nops);
    ns_word *next = ns_xmalloc((size_t)t->nwords * sizeof *next);
    for (int i = 0; i < nops && i < 2; i++) {
        ns_task_apply(t, ops[i], t->init, next);
        b.len = 0;
        ns_task_op_str(t, ops[i], &b);
        int on = 0;
        for (int a = 0; a < t->natoms; a++) on += ns_bit_get(next, a);
        printf("  %s -> a state with %d true atoms\n", b.data, on);
    }
    free(next);
    free(ops);
    ns_succgen_free(&g);
    ns_loaded_task_free(&lt);

    /* 3. a dataset of the problems' optimal-plan transitions, and its
     *    states encoded as bags of literals (the built-in encoder) */
    ns_dataset ds;
    ns_dataset_opts dopts = {.mode = NS_SPACE_OPTIMAL, .plans = 4, .seed = 1};
    if (ns_dataset_build(&ds, domain, (const char *const *)problems, 3, &dopts, &err)) return fail(&err);
    ns_vocab sv, av;
    ns_vocab_init(&sv);
    ns_vocab_init(&av);
    ns_builtin_fit(&sv, &av, &ds, NULL);
    ns_features f;
    ns_builtin_states(&f, &ds, &sv);
    printf("dataset: %lld states, %lld transitions; bag-of-literals features %lld x %lld\n",
           (long long)ns_dataset_nstates(&ds), (long long)ns_dataset_ntransitions(&ds), (long long)f.nrows,
           (long long)f.dim);
    ns_features_free(&f);
    ns_vocab_free(&sv);
    ns_vocab_free(&av);

    /* 4. saved, split (interpolation, pools of 32) and saved again */
    path.len = 0;
    ns_buf_printf(&path, "%s/data", work);
    char *data_dir = ns_xstrdup(path.data);
    ns_split sp;
    ns_split_opts so = {.protocol = NS_PROTO_INTERPOLATION, .pool_size = 32, .seed = 1};
    const ns_dataset *dsp[1] = {&ds};
    if (ns_dataset_save(&ds, data_dir, &err) || ns_split_make(&sp, dsp, 1, &so, &err)) return fail(&err);
    path.len = 0;
    ns_buf_printf(&path, "%s/split", work);
    char *split_dir = ns_xstrdup(path.data);
    if (ns_split_save(&sp, (const char *const *)&data_dir, split_dir, &err)) return fail(&err);
    printf("split: %lld train, %lld dev, %lld test transitions\n", (long long)sp.train.n, (long long)sp.dev.n,
           (long long)sp.test.n);
    ns_split_free(&sp);
    ns_dataset_free(&ds);

    /* 5. train a small world model (the whole checkpoint written) and query it */
    ns_fit_opts fo;
    ns_fit_opts_init(&fo);
    fo.cfg.state_hidden = fo.cfg.action_hidden = 64;
    fo.train.epochs = 20;
    fo.train.lr = 2e-3;
    fo.train.warmup_epochs = 2;
    fo.train.seed = 1;
    path.len = 0;
    ns_buf_printf(&path, "%s/model.ckpt", work);
    ns_fit_result fr;
    if (ns_world_fit(split_dir, &fo, path.data, &fr, &err)) return fail(&err);
    printf("trained: %d epochs, best epoch %d, final loss %.3f\n", fr.stats.epochs_run, fr.stats.best_epoch,
           fr.stats.last_loss);
    ns_fit_result_free(&fr);
    ns_report_opts ro;
    ns_report_opts_init(&ro);
    ro.eval.latency_queries = 0;
    ns_report rep;
    if (ns_eval_report(split_dir, path.data, &ro, &rep, &err)) return fail(&err);
    printf("test list: %lld queries, Hit@1 %.2f, Hit@5 %.2f (pools of %d)\n", (long long)rep.r.n, rep.r.hit[0],
           rep.r.hit[1], rep.r.pool_size);
    ns_report_free(&rep);

    for (int i = 0; i < 3; i++) free(problems[i]);
    free(data_dir);
    free(split_dir);
    ns_buf_free(&b);
    ns_buf_free(&path);
    return 0;
}
