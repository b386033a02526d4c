/* world_data.c — a split ready for a world model (world_data.h). */
#include "nextstate/eval/world_data.h"

#include <stdlib.h>
#include <string.h>

/* (a zeroed ns_vocab is safe to free: ns_vocab_init allocates, so only the
 * training side calls it; ns_world_features_parse initialises its own) */
static void wd_zero(ns_world_data *wd) { memset(wd, 0, sizeof *wd); }

ns_status ns_world_data_open(ns_world_data *wd, const char *split_dir, const char *state_spec, const char *action_spec,
                             const char *standardize, ns_error *err)
{
    wd_zero(wd);
    ns_vocab_init(&wd->sv);
    ns_vocab_init(&wd->av);
    wd->state_spec = ns_xstrdup(state_spec);
    wd->action_spec = ns_xstrdup(action_spec);
    ns_status st = ns_split_open(&wd->sd, split_dir, err);
    if (st == NS_OK) {
        const ns_split *sp = &wd->sd.split;
        ns_builtin_fit_split(&wd->sv, &wd->av, wd->sd.ds, sp->ndatasets, sp);
        st = ns_world_inputs_load(&wd->in, wd->sd.ds, sp->ndatasets, state_spec, action_spec, &wd->sv, &wd->av, err);
    }
    if (st == NS_OK)
        st = ns_world_standardize_sides(&wd->in, standardize, &wd->std_state, &wd->std_action, err);
    if (st == NS_OK)
        st = ns_world_standardize_split(&wd->in, &wd->sd.split, wd->std_state, wd->std_action, &wd->sstd, &wd->astd,
                                        err);
    if (st != NS_OK) ns_world_data_free(wd);
    return st;
}

ns_status ns_world_data_open_model(ns_world_data *wd, const char *split_dir, const ns_world *w, const char *model_path,
                                   const char *meta, const char *state_spec, const char *action_spec, ns_error *err)
{
    wd_zero(wd);
    ns_status st = ns_world_features_parse(meta, &wd->state_spec, &wd->action_spec, &wd->sv, &wd->av, &wd->sstd,
                                           &wd->astd, err);
    if (st == NS_OK && state_spec) free(wd->state_spec), wd->state_spec = ns_xstrdup(state_spec);
    if (st == NS_OK && action_spec) free(wd->action_spec), wd->action_spec = ns_xstrdup(action_spec);
    if (st == NS_OK) st = ns_split_open(&wd->sd, split_dir, err);
    /* (built-in actions for a model of state-action rows: the row-mode check below names that) */
    if (st == NS_OK && ((!strcmp(wd->state_spec, "builtin") && wd->sv.n == 0) ||
                        (!strcmp(wd->action_spec, "builtin") && wd->av.n == 0 &&
                         w->cfg.action_rows == NS_AROWS_ACTION)))
        st = ns_error_set(err, NS_ERR_INPUT, model_path, 0, 0, "the checkpoint records no built-in vocabulary");
    if (st == NS_OK)
        st = ns_world_inputs_load(&wd->in, wd->sd.ds, wd->sd.ndatasets, wd->state_spec, wd->action_spec, &wd->sv,
                                  &wd->av, err);
    if (st == NS_OK) st = ns_world_check_inputs(w, &wd->in, err);
    /* the training split's standardisation, as recorded */
    if (st == NS_OK) st = ns_feature_std_apply(&wd->sstd, &wd->in.state, "state", err);
    if (st == NS_OK) st = ns_feature_std_apply(&wd->astd, &wd->in.action, "action", err);
    if (st != NS_OK) ns_world_data_free(wd);
    return st;
}

void ns_world_data_free(ns_world_data *wd)
{
    ns_world_inputs_free(&wd->in);
    ns_vocab_free(&wd->sv);
    ns_vocab_free(&wd->av);
    ns_feature_std_free(&wd->sstd);
    ns_feature_std_free(&wd->astd);
    free(wd->state_spec);
    free(wd->action_spec);
    ns_split_data_free(&wd->sd);
    wd_zero(wd);
}

ns_status ns_world_data_list(const ns_world_data *wd, bool dev, uint64_t seed, const char *split_dir,
                             ns_world_list *l, ns_error *err)
{
    const ns_split *sp = &wd->sd.split;
    memset(l, 0, sizeof *l);
    l->dev = dev;
    l->refs = &sp->test;
    l->pools = sp->pools;
    l->pool_size = sp->pool_size;
    if (dev) {
        l->refs = &sp->dev;
        l->pool_size = sp->pool_size > 1 ? sp->pool_size : 128;
        l->owned = ns_split_pools_draw(sp, wd->sd.ds, l->refs, l->pool_size, seed ^ NS_SEED_DEV_POOLS);
        l->pools = l->owned;
    }
    if (l->pool_size < 1 || (!l->pools && l->refs->n > 0))
        return ns_error_set(err, NS_ERR_INPUT, split_dir, 0, 0,
                            "the split has no candidate pools (made with --pool-size 0)");
    return NS_OK;
}

void ns_world_list_free(ns_world_list *l)
{
    free(l->owned);
    memset(l, 0, sizeof *l);
}
