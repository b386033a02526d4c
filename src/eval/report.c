/* report.c — the evaluation report of a trained world model (report.h). */
#include "nextstate/eval/report.h"

#include <stdlib.h>
#include <string.h>
#include "nextstate/eval/world_data.h"
#include "nextstate/util/json.h"

#define NS_SEED_SWEEP_POOLS 0x7377656570ULL /* "sweep" */

void ns_report_opts_init(ns_report_opts *o)
{
    memset(o, 0, sizeof *o);
    ns_eval_opts_init(&o->eval);
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
static void held_steps(const ns_dataset *const *ds, const ns_refs *test, const ns_refs *held, ns_refs *ext)
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
static ns_status eval_per_dataset(const ns_world *w, const ns_world_inputs *in, const ns_world_list *l,
                                  const ns_eval_opts *eo, ns_eval_result *per, ns_error *err)
{
    ns_eval_opts o = *eo;
    o.latency_queries = 0;
    o.progress = false;
    const ns_refs *refs = l->refs;
    int psize = l->pool_size;
    int64_t *ref = ns_xmalloc((size_t)(refs->n ? refs->n : 1) * 2 * sizeof *ref);
    int64_t *pl = ns_xmalloc((size_t)(refs->n ? refs->n : 1) * (size_t)psize * sizeof *pl);
    ns_status st = NS_OK;
    for (int d = 0; d < in->nds && !st; d++) {
        int64_t n = 0;
        for (int64_t i = 0; i < refs->n; i++) {
            if (refs->ref[2 * i] != d) continue;
            ref[2 * n] = d, ref[2 * n + 1] = refs->ref[2 * i + 1];
            memcpy(pl + n * psize, l->pools + i * psize, (size_t)psize * sizeof *pl);
            n++;
        }
        memset(&per[d], 0, sizeof per[d]);
        if (n) st = ns_eval_world(w, in, &(ns_refs){ref, n}, pl, psize, &o, &per[d], err);
    }
    free(ref);
    free(pl);
    return st;
}

/* Plan-level metrics: on the test list the split's held-out plans, every step (steps outside the
 * list join it with the pools the split draws for them); on the dev list its complete plans. */
static ns_status eval_plans(const ns_world *w, const ns_world_data *wd, const ns_world_list *l, uint64_t seed,
                            ns_eval_plan_result *pr, ns_error *err)
{
    const ns_split *sp = &wd->sd.split;
    const ns_dataset *const *ds = wd->sd.ds;
    if (l->dev) return ns_eval_plans(w, &wd->in, l->refs, l->pools, l->pool_size, NULL, seed, pr, err);
    int psize = l->pool_size;
    ns_refs held, ext;
    ns_status st = ns_split_test_plans(sp, ds, sp->ndatasets, &held, err);
    if (st != NS_OK) return st;
    held_steps(ds, &sp->test, &held, &ext);
    int64_t *extra = ns_split_pools_for(sp, ds, &(ns_refs){ext.ref + 2 * sp->test.n, ext.n - sp->test.n});
    int64_t *xp = ns_xmalloc((size_t)(ext.n ? ext.n : 1) * (size_t)psize * sizeof *xp);
    memcpy(xp, l->pools, (size_t)sp->test.n * (size_t)psize * sizeof *xp);
    if (extra) memcpy(xp + sp->test.n * psize, extra, (size_t)(ext.n - sp->test.n) * (size_t)psize * sizeof *xp);
    st = ns_eval_plans(w, &wd->in, &ext, xp, psize, &held, seed, pr, err);
    free(extra);
    free(xp);
    free(ext.ref);
    free(held.ref);
    return st;
}

/* Everything after the list is chosen: metrics, per dataset, sweep, plans, rollout. */
static ns_status report_run(const ns_world *w, const ns_world_data *wd, const ns_world_list *l,
                            const ns_report_opts *o, ns_report *rep, ns_error *err)
{
    const ns_split *sp = &wd->sd.split;
    const ns_world_inputs *in = &wd->in;
    uint64_t seed = o->eval.seed;
    ns_eval_query *q = ns_xmalloc((size_t)(l->refs->n ? l->refs->n : 1) * sizeof *q);
    ns_status st = ns_eval_world_queries(w, in, l->refs, l->pools, l->pool_size, &o->eval, &rep->r, q, err);
    if (st == NS_OK) ns_breakdown_compute(in, l->refs, q, &rep->bd);
    free(q);
    if (st == NS_OK && sp->ndatasets > 1) {
        rep->per = ns_xcalloc((size_t)sp->ndatasets, sizeof *rep->per);
        st = eval_per_dataset(w, in, l, &o->eval, rep->per, err);
    }
    /* fresh pools (sweep, rollout) are keyed by --seed like the dev pools */
    if (st == NS_OK && o->nsweep) {
        rep->nsweep = o->nsweep;
        rep->sweep = ns_xcalloc((size_t)o->nsweep, sizeof *rep->sweep);
        st = ns_eval_pool_sweep(w, in, l->refs, sp, o->sweep, o->nsweep, seed ^ NS_SEED_SWEEP_POOLS, seed, rep->sweep,
                                err);
    }
    rep->plans = has_plans(wd->sd.ds, sp->ndatasets);
    if (st == NS_OK && rep->plans) st = eval_plans(w, wd, l, seed, &rep->pr, err);
    if (st == NS_OK && o->rollout) {
        rep->rollout = true;
        int64_t *rpools = NULL;
        if (o->rollout_pool) rpools = ns_split_pools_draw(sp, wd->sd.ds, l->refs, o->rollout_pool,
                                                          seed ^ NS_SEED_ROLLOUT_POOLS);
        st = ns_eval_rollout(w, in, l->refs, o->rollout_pool ? rpools : l->pools,
                             o->rollout_pool ? o->rollout_pool : l->pool_size, seed, &rep->ro, err);
        free(rpools);
    }
    return st;
}

ns_status ns_eval_report(const char *split_dir, const char *model_path, const ns_report_opts *o, ns_report *rep,
                         ns_error *err)
{
    memset(rep, 0, sizeof *rep);
    ns_world w;
    char *meta = NULL;
    ns_status st = ns_world_load(&w, model_path, &meta, err);
    if (st != NS_OK) return st;
    ns_world_data wd;
    ns_world_list l;
    memset(&l, 0, sizeof l);
    ns_world_text wt = {NULL, o->domains_dir, true, o->eval.progress};
    st = ns_world_data_open_model_text(&wd, split_dir, &w, model_path, meta, o->state_spec, o->action_spec, &wt, err);
    /* --query-features: the same split and checkpoint with the query states' features as the state side
     * (standardised as recorded); only its state rows are used */
    ns_world_data qwd;
    bool qopen = false;
    if (st == NS_OK && o->query_spec) {
        st = ns_world_data_open_model_text(&qwd, split_dir, &w, model_path, meta, o->query_spec, o->action_spec, &wt,
                                           err);
        qopen = st == NS_OK;
    }
    free(meta);
    if (st != NS_OK) {
        ns_world_data_free(&wd);
        ns_world_free(&w);
        return st;
    }
    ns_report_opts ro = *o;
    if (qopen) ro.eval.query_state = &qwd.in.state;
    o = &ro;
    ns_world_set_bf16(&w, o->bf16 && !o->int8 && !o->int4);
    if (o->int4) ns_world_set_int4(&w, true);
    else ns_world_set_int8(&w, o->int8);
    const ns_split *sp = &wd.sd.split;
    rep->split_dir = ns_xstrdup(split_dir);
    rep->model = ns_xstrdup(model_path);
    rep->state_spec = ns_xstrdup(wd.state_spec);
    rep->action_spec = ns_xstrdup(wd.action_spec);
    rep->query_spec = qopen ? ns_xstrdup(qwd.state_spec) : NULL;
    rep->protocol = sp->protocol;
    rep->dev = o->dev;
    rep->bf16 = o->bf16 && !o->int8 && !o->int4;
    rep->int8 = o->int8 && !o->int4;
    rep->int4 = o->int4;
    rep->kind = w.cfg.kind;
    rep->action_rows = w.cfg.action_rows;
    rep->ndatasets = sp->ndatasets;
    rep->domains = ns_xcalloc((size_t)sp->ndatasets + 1, sizeof *rep->domains);
    for (int d = 0; d < sp->ndatasets; d++)
        rep->domains[d] = sp->sources[d].domain ? ns_xstrdup(sp->sources[d].domain) : NULL;
    st = ns_world_data_list(&wd, o->dev, o->eval.seed, split_dir, &l, err);
    if (st == NS_OK) st = report_run(&w, &wd, &l, o, rep, err);
    ns_world_list_free(&l);
    if (qopen) ns_world_data_free(&qwd);
    ns_world_data_free(&wd);
    ns_world_free(&w);
    if (st != NS_OK) ns_report_free(rep);
    return st;
}

void ns_report_free(ns_report *rep)
{
    free(rep->split_dir);
    free(rep->model);
    free(rep->state_spec);
    free(rep->action_spec);
    free(rep->query_spec);
    for (int d = 0; rep->domains && d < rep->ndatasets; d++) free(rep->domains[d]);
    free(rep->domains);
    free(rep->per);
    free(rep->sweep);
    ns_eval_rollout_free(&rep->ro);
    memset(rep, 0, sizeof *rep);
}

void ns_report_json(const ns_report *rep, ns_buf *b)
{
    ns_buf_puts(b, "{\"split\": ");
    ns_json_put_str(b, rep->split_dir);
    ns_buf_puts(b, ", \"model\": ");
    ns_json_put_str(b, rep->model);
    ns_buf_printf(b,
                  ", \"protocol\": \"%s\", \"on\": \"%s\", \"kind\": \"%s\", \"action_rows\": \"%s\", "
                  "\"weights\": \"%s\", \"state_features\": ",
                  ns_protocol_name(rep->protocol), rep->dev ? "dev" : "test", ns_world_kind_name(rep->kind),
                  ns_action_rows_name(rep->action_rows),
                  rep->int4 ? "int4" : rep->int8 ? "int8" : rep->bf16 ? "bfloat16" : "float");
    ns_json_put_str(b, rep->state_spec);
    ns_buf_puts(b, ", \"action_features\": ");
    ns_json_put_str(b, rep->action_spec);
    ns_buf_puts(b, ", \"query_features\": ");
    if (rep->query_spec) ns_json_put_str(b, rep->query_spec);
    else ns_buf_puts(b, "null");
    ns_buf_puts(b, ", \"metrics\": ");
    ns_eval_json(&rep->r, b);
    ns_buf_puts(b, ", ");
    ns_breakdown_json(&rep->bd, b);
    if (rep->per) {
        ns_buf_puts(b, ", \"per_dataset\": [");
        for (int d = 0; d < rep->ndatasets; d++) {
            ns_buf_puts(b, d ? ", {\"domain\": " : "{\"domain\": ");
            ns_json_put_str(b, rep->domains[d] ? rep->domains[d] : "");
            ns_buf_puts(b, ", \"metrics\": ");
            if (rep->per[d].n) ns_eval_json(&rep->per[d], b);
            else ns_buf_puts(b, "null"); /* none of the list is in this dataset */
            ns_buf_putc(b, '}');
        }
        ns_buf_putc(b, ']');
    }
    if (rep->nsweep) {
        ns_buf_puts(b, ", \"pool_sweep\": ");
        ns_eval_sweep_json(rep->sweep, rep->nsweep, b);
    }
    if (rep->plans) {
        ns_buf_puts(b, ", \"plans\": ");
        ns_eval_plans_json(&rep->pr, b);
    }
    if (rep->rollout) {
        ns_buf_puts(b, ", \"rollout\": ");
        ns_eval_rollout_json(&rep->ro, b);
    }
    ns_buf_puts(b, "}\n");
}

void ns_report_table(const ns_report *rep, ns_buf *b)
{
    ns_buf_printf(b, "%s on %s (%s, %s list%s)\n", rep->model, rep->split_dir, ns_protocol_name(rep->protocol),
                  rep->dev ? "dev" : "test",
                  rep->int4 ? ", int4 weights" : rep->int8 ? ", int8 weights" : rep->bf16 ? ", bfloat16 weights" : "");
    if (rep->query_spec) ns_buf_printf(b, "query states' features: %s\n", rep->query_spec);
    ns_eval_table(&rep->r, b);
    ns_breakdown_table(&rep->bd, b);
    if (rep->per) {
        ns_buf_printf(b, "per dataset        queries   Hit@1    Hit@5    Hit@10   Hit@5 worst  ceiling@5  chance@5\n");
        for (int d = 0; d < rep->ndatasets; d++) {
            const char *name = rep->domains[d] ? rep->domains[d] : "?";
            const ns_eval_result *p = &rep->per[d];
            if (!p->n) ns_buf_printf(b, "  %-16s       0  —\n", name);
            else
                ns_buf_printf(b, "  %-16s %7lld  %6.2f%%  %6.2f%%  %6.2f%%  %6.2f%%     %6.2f%%   %6.2f%%\n", name,
                              (long long)p->n, 100 * p->hit[0], 100 * p->hit[1], 100 * p->hit[2],
                              100 * p->hit_worst[1], 100 * p->ceil[1], 100 * p->chance[1]);
        }
    }
    if (rep->nsweep) ns_eval_sweep_table(rep->sweep, rep->nsweep, b);
    if (rep->plans) ns_eval_plans_table(&rep->pr, b);
    if (rep->rollout) ns_eval_rollout_table(&rep->ro, b);
}
