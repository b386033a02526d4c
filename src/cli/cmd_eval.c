/* cmd_eval.c — `nextstate eval SPLIT_DIR MODEL`: Hit@k, Acc@k, latency and
 * parameter counts of a trained world model (evaluate.h) on a split's test
 * list (or its dev list with --on dev); plan-level teacher-forced metrics
 * when the datasets hold sampled plans; a pool-size sweep (--pool-sweep)
 * and closed-loop rollout (--rollout). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "nextstate/eval/evaluate.h"
#include "nextstate/util/json.h"
#include "nextstate/data/split.h"
#include "nextstate/learn/world.h"

/* "128,512,full" → sizes (0 = full); false (after printing) when bad. */
static bool parse_sweep(const char *v, int **sizes, int *n)
{
    *n = 0;
    *sizes = ns_xmalloc((strlen(v) / 2 + 1) * sizeof **sizes);
    const char *p = v;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 4 && !strncmp(p, "full", 4)) {
            (*sizes)[(*n)++] = 0;
        } else {
            char *end;
            errno = 0;
            long x = strtol(p, &end, 10);
            if (len == 0 || end != p + len || errno || x < 2 || x > 1000000000L) {
                cli_usage("eval", "--pool-sweep expects a comma-separated list of pool sizes ≥ 2 or 'full', given '%s'", v);
                return false;
            }
            (*sizes)[(*n)++] = (int)x;
        }
        if (!e) return true;
        p = e + 1;
    }
}

static bool has_plans(const ns_dataset *const *ds, int n)
{
    for (int d = 0; d < n; d++)
        if (ds[d]->plan_problem.shape[0] > 0) return true;
    return false;
}

static int cmp_pair(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* ext = test (sorted) followed by the distinct steps of the plans in held
 * that are not in it. */
static void held_steps(const ns_dataset **ds, const ns_refs *test, const ns_refs *held, ns_refs *ext)
{
    int64_t cap = test->n + 16;
    ext->ref = ns_xmalloc((size_t)cap * 2 * sizeof *ext->ref);
    if (test->n) memcpy(ext->ref, test->ref, (size_t)test->n * 2 * sizeof *ext->ref);
    ext->n = test->n;
    for (int64_t i = 0; i < held->n; i++) {
        int d = (int)held->ref[2 * i];
        int64_t k = held->ref[2 * i + 1];
        const int64_t *po = ds[d]->plan_offsets.data, *pt = ds[d]->plan_transitions.data;
        for (int64_t j = po[k]; j < po[k + 1]; j++) {
            int64_t key[2] = {d, pt[j]};
            if (test->n && bsearch(key, test->ref, (size_t)test->n, sizeof key, cmp_pair)) continue;
            bool dup = false;
            for (int64_t x = test->n; x < ext->n && !dup; x++) dup = ext->ref[2 * x] == d && ext->ref[2 * x + 1] == pt[j];
            if (dup) continue;
            if (ext->n == cap) cap *= 2, ext->ref = ns_xrealloc(ext->ref, (size_t)cap * 2 * sizeof *ext->ref);
            ext->ref[2 * ext->n] = d, ext->ref[2 * ext->n + 1] = pt[j];
            ext->n++;
        }
    }
}

/* Each dataset's share of the list (refs with their pools) evaluated on its own, into per[d] (n = 0
 * where the list has none of it); no latency.  For splits over several datasets (cross-domain,
 * leave-one-out, multi-domain): the per-domain numbers of the papers' tables from one run. */
static ns_status eval_per_dataset(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs,
                                  const int64_t *pools, int psize, const ns_eval_opts *eo, ns_eval_result *per,
                                  ns_error *err)
{
    ns_eval_opts o = *eo;
    o.latency_queries = 0;
    o.progress = false;
    int64_t *ref = ns_xmalloc((size_t)(refs->n ? refs->n : 1) * 2 * sizeof *ref);
    int64_t *pl = ns_xmalloc((size_t)(refs->n ? refs->n : 1) * (size_t)psize * sizeof *pl);
    ns_status st = NS_OK;
    for (int d = 0; d < in->nds && !st; d++) {
        int64_t n = 0;
        for (int64_t i = 0; i < refs->n; i++) {
            if (refs->ref[2 * i] != d) continue;
            ref[2 * n] = d, ref[2 * n + 1] = refs->ref[2 * i + 1];
            memcpy(pl + n * psize, pools + i * psize, (size_t)psize * sizeof *pl);
            n++;
        }
        memset(&per[d], 0, sizeof per[d]);
        if (n) st = ns_eval_world(w, in, &(ns_refs){ref, n}, pl, psize, &o, &per[d], err);
    }
    free(ref);
    free(pl);
    return st;
}

int cmd_eval(int argc, char **argv)
{
    const char *split_dir = NULL, *model = NULL, *sspec = NULL, *aspec = NULL, *on = "test";
    bool json = false, quiet = false, rollout = false, bf16 = false;
    int *sweep = NULL, nsweep = 0, rollout_pool = 0;
    ns_eval_opts eo;
    ns_eval_opts_init(&eo);
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        if (!strcmp(a, "--json")) json = true;
        else if (!strcmp(a, "--quiet")) quiet = true;
        else if (!strcmp(a, "--no-acc")) eo.acc = false;
        else if (!strcmp(a, "--rollout")) rollout = true;
        else if (!strcmp(a, "--bf16")) bf16 = true;
        else if (a[0] != '-' || !a[1]) {
            if (!split_dir) split_dir = a;
            else if (!model) model = a;
            else rc = cli_usage("eval", "unexpected argument '%s'", a);
        } else if (!v) rc = cli_usage("eval", "%s expects a value", a);
        else {
            i++;
            if (!strcmp(a, "--state-features")) sspec = v;
            else if (!strcmp(a, "--action-features")) aspec = v;
            else if (!strcmp(a, "--on")) {
                if (strcmp(v, "test") && strcmp(v, "dev")) rc = cli_usage("eval", "--on expects test or dev, given '%s'", v);
                on = v;
            } else if (!strcmp(a, "--seed")) {
                if (!cli_parse_range("eval", a, v, 0, LONG_MAX, &n)) rc = NS_ERR_USAGE;
                else eo.seed = (uint64_t)n;
            } else if (!strcmp(a, "--latency")) {
                if (!cli_parse_range("eval", a, v, 0, 1L << 30, &n)) rc = NS_ERR_USAGE;
                else eo.latency_queries = (int)n;
            } else if (!strcmp(a, "--pool-sweep")) {
                free(sweep);
                if (!parse_sweep(v, &sweep, &nsweep)) rc = NS_ERR_USAGE;
            } else if (!strcmp(a, "--rollout-pool")) {
                if (!cli_parse_long("eval", a, v, &n)) rc = NS_ERR_USAGE;
                else if (n < 2 || n > 1000000000L)
                    rc = cli_usage("eval", "--rollout-pool expects a pool size ≥ 2, given '%s'", v);
                else rollout_pool = (int)n, rollout = true;
            } else rc = cli_usage("eval", "unknown option '%s' (see `nextstate help eval`)", a);
        }
    }
    if (!rc && (!split_dir || !model)) rc = cli_usage("eval", "expects SPLIT_DIR MODEL");
    if (rc) {
        free(sweep);
        return rc;
    }
    ns_error err;
    ns_world w;
    char *meta = NULL, *ms = NULL, *ma = NULL;
    if (ns_world_load(&w, model, &meta, &err)) {
        free(sweep);
        return cli_report(&err);
    }
    ns_vocab sv, av;
    ns_feature_std sstd, astd;
    if (ns_world_features_parse(meta, &ms, &ma, &sv, &av, &sstd, &astd, &err)) {
        free(ms);
        free(ma);
        ns_vocab_free(&sv);
        ns_vocab_free(&av);
        free(meta);
        free(sweep);
        ns_world_free(&w);
        return cli_report(&err);
    }
    if (!sspec) sspec = ms;
    if (!aspec) aspec = ma;
    ns_world_set_bf16(&w, bf16);
    ns_split sp;
    memset(&sp, 0, sizeof sp);
    ns_dataset *dss = NULL;
    const ns_dataset **ds = NULL;
    int loaded = 0;
    ns_world_inputs in;
    memset(&in, 0, sizeof in);
    int64_t *pools = NULL, *rpools = NULL;
    ns_eval_sweep *sw = NULL;
    ns_eval_result *per = NULL; /* per dataset, when the split has several */
    ns_eval_plan_result pr;
    ns_eval_rollout_result ro;
    memset(&ro, 0, sizeof ro);
    bool plans = false;
    ns_buf b;
    ns_buf_init(&b);
    if (ns_split_load(&sp, split_dir, &err)) goto fail;
    if (cli_split_datasets(&sp, &dss, &ds, &loaded, &err)) goto fail;
    /* (built-in actions for a model of state-action rows: the row-mode check below names that) */
    if ((!strcmp(sspec, "builtin") && sv.n == 0) ||
        (!strcmp(aspec, "builtin") && av.n == 0 && w.cfg.action_rows == NS_AROWS_ACTION)) {
        ns_error_set(&err, NS_ERR_INPUT, model, 0, 0, "the checkpoint records no built-in vocabulary");
        goto fail;
    }
    if (ns_world_inputs_load(&in, ds, sp.ndatasets, sspec, aspec, &sv, &av, &err)) goto fail;
    if (ns_world_check_inputs(&w, &in, &err)) goto fail;
    /* the training split's standardisation, as recorded */
    if (ns_feature_std_apply(&sstd, &in.state, "state", &err) ||
        ns_feature_std_apply(&astd, &in.action, "action", &err))
        goto fail;
    const ns_refs *refs = &sp.test;
    const int64_t *pl = sp.pools;
    int psize = sp.pool_size;
    if (!strcmp(on, "dev")) {
        refs = &sp.dev;
        psize = sp.pool_size > 1 ? sp.pool_size : 128;
        pools = ns_split_pools_draw(&sp, ds, refs, psize, eo.seed ^ NS_SEED_DEV_POOLS);
        pl = pools;
    }
    if (psize < 1 || (!pl && refs->n > 0)) {
        ns_error_set(&err, NS_ERR_INPUT, split_dir, 0, 0, "the split has no candidate pools (made with --pool-size 0)");
        goto fail;
    }
    eo.progress = !quiet;
    ns_eval_result r;
    if (ns_eval_world(&w, &in, refs, pl, psize, &eo, &r, &err)) goto fail;
    if (sp.ndatasets > 1) {
        per = ns_xcalloc((size_t)sp.ndatasets, sizeof *per);
        if (eval_per_dataset(&w, &in, refs, pl, psize, &eo, per, &err)) goto fail;
    }
    /* fresh pools (sweep, rollout) are keyed by --seed like the dev pools */
    if (nsweep) {
        sw = ns_xcalloc((size_t)nsweep, sizeof *sw);
        if (ns_eval_pool_sweep(&w, &in, refs, &sp, sweep, nsweep, eo.seed ^ 0x7377656570ULL, eo.seed, sw, &err))
            goto fail;
    }
    plans = has_plans(ds, sp.ndatasets);
    if (plans && refs == &sp.test) {
        /* the split's held-out plans, every step: steps outside the test list (plan-variant: on a
         * training plan too) join the list with the pools the split draws for them */
        ns_refs held, ext;
        if (ns_split_test_plans(&sp, ds, sp.ndatasets, &held, &err)) goto fail;
        int64_t *xp = NULL;
        held_steps(ds, &sp.test, &held, &ext);
        int64_t *extra_pools = ns_split_pools_for(&sp, ds, &(ns_refs){ext.ref + 2 * sp.test.n, ext.n - sp.test.n});
        xp = ns_xmalloc((size_t)(ext.n ? ext.n : 1) * (size_t)psize * sizeof *xp);
        memcpy(xp, pl, (size_t)sp.test.n * (size_t)psize * sizeof *xp);
        if (extra_pools)
            memcpy(xp + sp.test.n * psize, extra_pools, (size_t)(ext.n - sp.test.n) * (size_t)psize * sizeof *xp);
        ns_status st = ns_eval_plans(&w, &in, &ext, xp, psize, &held, eo.seed, &pr, &err);
        free(extra_pools);
        free(xp);
        free(ext.ref);
        free(held.ref);
        if (st) goto fail;
    } else if (plans && ns_eval_plans(&w, &in, refs, pl, psize, NULL, eo.seed, &pr, &err))
        goto fail;
    if (rollout) {
        const int64_t *rp = pl;
        int rs = psize;
        if (rollout_pool) {
            rpools = ns_split_pools_draw(&sp, ds, refs, rollout_pool, eo.seed ^ NS_SEED_ROLLOUT_POOLS);
            rp = rpools;
            rs = rollout_pool;
        }
        if (ns_eval_rollout(&w, &in, refs, rp, rs, eo.seed, &ro, &err)) goto fail;
    }
    if (json) {
        ns_buf_puts(&b, "{\"split\": ");
        ns_json_put_str(&b, split_dir);
        ns_buf_puts(&b, ", \"model\": ");
        ns_json_put_str(&b, model);
        ns_buf_printf(&b,
                      ", \"protocol\": \"%s\", \"on\": \"%s\", \"kind\": \"%s\", \"action_rows\": \"%s\", "
                      "\"weights\": \"%s\", \"state_features\": ",
                      ns_protocol_name(sp.protocol), on, ns_world_kind_name(w.cfg.kind),
                      ns_action_rows_name(w.cfg.action_rows), bf16 ? "bfloat16" : "float");
        ns_json_put_str(&b, sspec);
        ns_buf_puts(&b, ", \"action_features\": ");
        ns_json_put_str(&b, aspec);
        ns_buf_puts(&b, ", \"metrics\": ");
        ns_eval_json(&r, &b);
        if (per) {
            ns_buf_puts(&b, ", \"per_dataset\": [");
            for (int d = 0; d < sp.ndatasets; d++) {
                ns_buf_puts(&b, d ? ", {\"domain\": " : "{\"domain\": ");
                ns_json_put_str(&b, sp.sources[d].domain ? sp.sources[d].domain : "");
                ns_buf_puts(&b, ", \"metrics\": ");
                if (per[d].n) ns_eval_json(&per[d], &b);
                else ns_buf_puts(&b, "null"); /* none of the list is in this dataset */
                ns_buf_putc(&b, '}');
            }
            ns_buf_putc(&b, ']');
        }
        if (nsweep) {
            ns_buf_puts(&b, ", \"pool_sweep\": ");
            ns_eval_sweep_json(sw, nsweep, &b);
        }
        if (plans) {
            ns_buf_puts(&b, ", \"plans\": ");
            ns_eval_plans_json(&pr, &b);
        }
        if (rollout) {
            ns_buf_puts(&b, ", \"rollout\": ");
            ns_eval_rollout_json(&ro, &b);
        }
        ns_buf_puts(&b, "}\n");
    } else {
        ns_buf_printf(&b, "%s on %s (%s, %s list%s)\n", model, split_dir, ns_protocol_name(sp.protocol), on,
                      bf16 ? ", bfloat16 weights" : "");
        ns_eval_table(&r, &b);
        if (per) {
            ns_buf_printf(&b, "per dataset        queries   Hit@1    Hit@5    Hit@10   Hit@5 worst  ceiling@5\n");
            for (int d = 0; d < sp.ndatasets; d++) {
                const char *name = sp.sources[d].domain ? sp.sources[d].domain : "?";
                if (!per[d].n) ns_buf_printf(&b, "  %-16s       0  —\n", name);
                else
                    ns_buf_printf(&b, "  %-16s %7lld  %6.2f%%  %6.2f%%  %6.2f%%  %6.2f%%     %6.2f%%\n", name,
                                  (long long)per[d].n, 100 * per[d].hit[0], 100 * per[d].hit[1], 100 * per[d].hit[2],
                                  100 * per[d].hit_worst[1], 100 * per[d].ceil[1]);
            }
        }
        if (nsweep) ns_eval_sweep_table(sw, nsweep, &b);
        if (plans) ns_eval_plans_table(&pr, &b);
        if (rollout) ns_eval_rollout_table(&ro, &b);
    }
    fputs(b.data, stdout);
    goto done;
fail:
    rc = cli_report(&err);
done:
    ns_buf_free(&b);
    free(pools);
    free(rpools);
    free(sw);
    free(per);
    free(sweep);
    ns_eval_rollout_free(&ro);
    ns_world_inputs_free(&in);
    cli_split_datasets_free(dss, ds, loaded);
    ns_split_free(&sp);
    ns_vocab_free(&sv);
    ns_vocab_free(&av);
    ns_feature_std_free(&sstd);
    ns_feature_std_free(&astd);
    free(ms);
    free(ma);
    free(meta);
    ns_world_free(&w);
    return rc;
}
