/* fit.c — a world-model fit in one call (fit.h). */
#include "nextstate/eval/fit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/eval/evaluate.h"
#include "nextstate/eval/world_data.h"
#include "nextstate/util/json.h"

void ns_fit_opts_init(ns_fit_opts *o)
{
    memset(o, 0, sizeof *o);
    ns_world_config_init(&o->cfg);
    ns_eval_train_opts_init(&o->train);
    o->state_spec = o->action_spec = "builtin";
}

void ns_fit_result_free(ns_fit_result *r)
{
    free(r->json);
    memset(r, 0, sizeof *r);
}

static bool log_epoch(void *ctx, int epoch, double loss, double dev_hit5, double seconds)
{
    fprintf(ctx, "epoch %d loss %.5f dev_hit@5 %.4f time %.2fs\n", epoch, loss, dev_hit5, seconds);
    return true;
}

/* The "train" object: with timings for `train --json`, without them in the
 * checkpoint (same seed, same bytes). */
static void train_json(ns_buf *b, const char *split_dir, const ns_fit_opts *fo, const ns_fit_result *r,
                       bool timings)
{
    const ns_train_opts *o = &fo->train;
    const ns_train_stats *st = &r->stats;
    char best_dev[32] = "null"; /* no dev check ran (no epochs, or no dev list) */
    if (st->best_dev_hit5 >= 0) snprintf(best_dev, sizeof best_dev, "%.9g", st->best_dev_hit5);
    size_t cs = r->params_state, ca = r->params_action, ct = r->params_t;
    ns_buf_puts(b, "{\"split\": ");
    ns_json_put_str(b, split_dir);
    ns_buf_printf(b,
                  ", \"protocol\": \"%s\", \"action_rows\": \"%s\", \"standardize\": \"%s\", \"train\": %lld, "
                  "\"dev\": %lld, \"lr\": %.9g, \"weight_decay\": %.9g, "
                  "\"beta1\": %.9g, \"beta2\": %.9g, \"warmup_epochs\": %d, \"warmup_start\": %.9g, \"batch\": %d, "
                  "\"epochs\": %d, \"max_steps\": %lld, \"min_steps\": %lld, \"epochs_run\": %d, \"seed\": %llu, \"tau\": %.9g, \"action_weight\": %.9g, "
                  "\"action_loss\": \"%s\", \"action_k\": %d, \"best_epoch\": %d, \"best_dev_hit@5\": %s, "
                  "\"last_loss\": %.9g, \"steps\": %lld, \"samples\": %lld, "
                  "\"params\": {\"state_head\": %zu, \"action_head\": %zu, \"transition\": %zu, \"total\": %zu}",
                  ns_protocol_name(r->protocol), ns_action_rows_name(r->cfg.action_rows),
                  r->std_state ? (r->std_action ? "both" : "state") : r->std_action ? "action" : "none",
                  (long long)r->ntrain, (long long)r->ndev, o->lr, o->weight_decay, o->beta1, o->beta2,
                  o->warmup_epochs, o->warmup_start, o->batch, o->epochs, (long long)o->steps, (long long)o->min_steps, st->epochs_run, (unsigned long long)o->seed,
                  o->tau, o->action_weight, o->action_weight <= 0 ? "none" : o->action_grid ? "grid" : "list",
                  o->action_k, st->best_epoch, best_dev, st->last_loss, (long long)st->steps, (long long)st->samples,
                  cs, ca, ct, cs + ca + ct);
    if (timings) ns_buf_printf(b, ", \"seconds\": %.3f, \"samples_per_s\": %.1f", st->seconds, st->samples_per_s);
    ns_buf_puts(b, "}");
}

ns_status ns_world_fit(const char *split_dir, const ns_fit_opts *o, const char *out_path, ns_fit_result *r,
                       ns_error *err)
{
    memset(r, 0, sizeof *r);
    ns_world_data wd;
    ns_status st = ns_world_data_open(&wd, split_dir, o->state_spec, o->action_spec, o->standardize, err);
    if (st != NS_OK) return st;
    const ns_split *sp = &wd.sd.split;
    r->protocol = sp->protocol;
    r->ndatasets = sp->ndatasets;
    r->ntrain = sp->train.n;
    r->ndev = sp->dev.n;
    r->std_state = wd.std_state;
    r->std_action = wd.std_action;
    r->cfg = o->cfg;
    r->cfg.state_dim = (int)wd.in.state.dim;
    r->cfg.action_dim = (int)wd.in.action.dim;
    r->cfg.state_sparse = wd.in.state.sparse;
    r->cfg.action_sparse = wd.in.action.sparse;
    r->cfg.action_rows = wd.in.action_rows;
    ns_world w;
    memset(&w, 0, sizeof w);
    ns_buf b, fj;
    ns_buf_init(&b);
    ns_buf_init(&fj);
    FILE *logf = NULL;
    ns_train_opts to = o->train;
    st = ns_world_create(&w, &r->cfg, to.seed, err);
    if (st == NS_OK && o->log_path && !(logf = fopen(o->log_path, "w")))
        st = ns_error_set(err, NS_ERR_IO, o->log_path, 0, 0, "cannot write the training log");
    if (st == NS_OK) {
        if (logf) to.on_epoch = log_epoch, to.ctx = logf;
        ns_world_counts(&w, &r->params_state, &r->params_action, &r->params_t);
        if (o->on_ready) o->on_ready(o->ctx, r);
        st = ns_world_train(&w, &wd.in, sp, &to, &r->stats, err);
    }
    if (st == NS_OK) {
        train_json(&b, split_dir, o, r, false);
        ns_world_features_json(&fj, wd.state_spec, wd.action_spec, &wd.sv, &wd.av, &wd.sstd, &wd.astd);
        st = ns_world_save(&w, out_path, fj.data, b.data, err);
    }
    if (st == NS_OK) {
        b.len = 0;
        train_json(&b, split_dir, o, r, true);
        r->json = ns_xstrdup(b.data);
    }
    if (logf) fclose(logf);
    ns_buf_free(&b);
    ns_buf_free(&fj);
    ns_world_free(&w);
    ns_world_data_free(&wd);
    return st;
}
