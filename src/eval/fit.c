/* fit.c — a world-model fit in one call (fit.h). */
#include "nextstate/eval/fit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/eval/evaluate.h"
#include "nextstate/encode/embed.h"
#include "nextstate/encode/featurize.h"
#include "nextstate/eval/world_data.h"
#include "nextstate/util/json.h"

void ns_fit_opts_init(ns_fit_opts *o)
{
    memset(o, 0, sizeof *o);
    ns_world_config_init(&o->cfg);
    ns_eval_train_opts_init(&o->train);
    o->state_spec = o->action_spec = "builtin";
    ns_lora_config_init(&o->lora.cfg);
    ns_adapt_opts_init(&o->lora.adapt);
    o->lora.warm = o->lora.refit = true;
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

/* The "adapt" member of the "train" object. */
static void adapt_json(ns_buf *b, const ns_fit_opts *fo, const ns_fit_result *r, bool timings)
{
    const ns_fit_lora *lo = &fo->lora;
    const ns_adapt_opts *a = &lo->adapt;
    const ns_adapt_stats *st = &r->adapt;
    char tn[8];
    ns_lora_targets_name(lo->cfg.targets, tn);
    ns_buf_printf(b,
                  ", \"adapt\": {\"rank\": %d, \"alpha\": %.9g, \"targets\": \"%s\", \"layers\": %d, \"start\": \"%s\", "
                  "\"refit\": %s, \"epochs\": %d, \"max_steps\": %lld, \"batch\": %d, \"lr\": %.9g, \"head_lr\": %.9g, "
                  "\"weight_decay\": %.9g, \"steps\": %lld, \"texts\": %lld, \"windows\": %lld, \"tokens\": %lld, "
                  "\"first_loss\": %.9g, \"last_loss\": %.9g",
                  lo->cfg.rank, lo->cfg.alpha, tn, lo->cfg.layers, lo->warm ? "warm" : "cold", lo->refit ? "true" : "false",
                  a->epochs, (long long)a->steps, a->batch, a->lr, a->head_lr > 0 ? a->head_lr : fo->train.lr,
                  a->weight_decay, (long long)st->steps, (long long)st->texts, (long long)st->windows,
                  (long long)st->tokens, st->first_loss, st->last_loss);
    if (timings)
        ns_buf_printf(b,
                      ", \"seconds\": {\"embed\": %.3f, \"warm\": %.3f, \"adapt\": %.3f, \"reencode\": %.3f, "
                      "\"refit\": %.3f}",
                      r->embed_s, r->warm_s, r->adapt_s, r->reencode_s, r->refit_s);
    ns_buf_puts(b, "}");
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
    if (fo->text_encoder) {
        ns_buf_puts(b, ", \"text_encoder\": ");
        ns_json_put_str(b, fo->text_encoder);
    }
    if (r->adapted) adapt_json(b, fo, r, timings);
    ns_buf_puts(b, "}");
}

/* The rows' texts of wd's datasets, stacked (lists[d] owned by the caller). */
static ns_status row_texts(const ns_world_data *wd, const char *domains, ns_text_list *lists, ns_row_texts *rt,
                           ns_error *err)
{
    int nds = wd->sd.ndatasets;
    ns_status st = NS_OK;
    int64_t ns = 0, na = 0;
    for (int d = 0; d < nds && !st; d++) {
        ns_render_prep **preps = NULL;
        st = ns_feat_renders_new(&preps, wd->sd.ds[d], domains, err);
        if (st) break;
        ns_text_list_dataset(&lists[d], wd->sd.ds[d], preps, NS_PROMPT_PAPER);
        ns_feat_renders_free(preps, wd->sd.ds[d]->nproblems);
        ns += lists[d].nstates, na += lists[d].nactions;
    }
    if (st) return st;
    const char **s = ns_xmalloc((size_t)(ns + 1) * sizeof *s), **a = ns_xmalloc((size_t)(na + 1) * sizeof *a);
    size_t *sl = ns_xmalloc((size_t)(ns + 1) * sizeof *sl), *al = ns_xmalloc((size_t)(na + 1) * sizeof *al);
    int64_t i = 0, j = 0;
    for (int d = 0; d < nds; d++) {
        for (int64_t k = 0; k < lists[d].nstates; k++, i++) s[i] = lists[d].texts[k], sl[i] = lists[d].lens[k];
        for (int64_t k = lists[d].nstates; k < lists[d].n; k++, j++) a[j] = lists[d].texts[k], al[j] = lists[d].lens[k];
    }
    *rt = (ns_row_texts){ns, na, s, sl, a, al};
    return NS_OK;
}

static void row_texts_free(ns_row_texts *rt)
{
    free((void *)rt->state);
    free((void *)rt->state_len);
    free((void *)rt->action);
    free((void *)rt->action_len);
}

/* What the result says about the data (before training). */
static void describe(ns_fit_result *r, const ns_world_data *wd, const ns_fit_opts *o)
{
    const ns_split *sp = &wd->sd.split;
    r->protocol = sp->protocol;
    r->ndatasets = sp->ndatasets;
    r->ntrain = sp->train.n;
    r->ndev = sp->dev.n;
    r->std_state = wd->std_state;
    r->std_action = wd->std_action;
    r->cfg = o->cfg;
    r->cfg.state_dim = (int)wd->in.state.dim;
    r->cfg.action_dim = (int)wd->in.action.dim;
    r->cfg.state_sparse = wd->in.state.sparse;
    r->cfg.action_sparse = wd->in.action.sparse;
    r->cfg.action_rows = wd->in.action_rows;
}

/* A fresh model on wd's features, trained (the log, when given, gets its epochs). */
static ns_status train_fresh(ns_world *w, const ns_world_config *cfg, const ns_world_data *wd, const ns_fit_opts *o,
                             FILE *logf, ns_train_stats *stats, ns_error *err)
{
    ns_train_opts to = o->train;
    if (logf) to.on_epoch = log_epoch, to.ctx = logf;
    ns_status st = ns_world_create(w, cfg, to.seed, err);
    if (!st) st = ns_world_train(w, &wd->in, &wd->sd.split, &to, stats, err);
    return st;
}

/* Steps 2 and 3 of the adaptation (fit.h): the joint stage on wd, then —
 * with refit — a fresh model *w on the adapted embeddings (wd2, opened
 * here; its model m2 owned by the caller). */
static ns_status adapt(ns_world *w, ns_lora *l, const ns_bert *m, ns_world_data *wd, ns_world_data *wd2, ns_bert **m2,
                       const char *split_dir, const char *spec, const ns_fit_opts *o, ns_fit_result *r, FILE *logf,
                       ns_error *err)
{
    const char *domains = o->domains_dir;
    ns_text_list *lists = ns_xcalloc((size_t)wd->sd.ndatasets, sizeof *lists);
    ns_row_texts rt;
    ns_status st = ns_lora_create(l, ns_bert_config_of(m), &o->lora.cfg, o->train.seed ^ 0x6c6f7261ULL, err);
    if (!st) st = row_texts(wd, domains, lists, &rt, err);
    if (!st) {
        ns_adapt_opts ao = o->lora.adapt;
        ao.progress = ao.progress || o->train.progress;
        ao.seed = o->train.seed; /* batches and action samples follow the run's seed */
        r->adapted = true;
        st = ns_adapt_train(w, l, m, &wd->in, &wd->sstd, &wd->astd, &rt, &wd->sd.split, &o->train, &ao, &r->adapt, err);
        r->adapt_s = r->adapt.seconds;
        row_texts_free(&rt);
    }
    for (int d = 0; d < wd->sd.ndatasets; d++) ns_text_list_free(&lists[d]);
    free(lists);
    if (st || !o->lora.refit) return st;
    double t0 = ns_now();
    st = ns_embed_model_load(m2, o->text_encoder, err);
    if (!st) {
        ns_bert_lora v;
        ns_lora_view(l, &v);
        ns_bert_merge_lora(*m2, &v, ns_lora_hash(l));
        ns_world_text wt = {*m2, o->domains_dir, false, o->train.progress};
        st = ns_world_data_open_text(wd2, split_dir, spec, spec, o->standardize, &wt, err);
    }
    r->reencode_s = ns_now() - t0;
    if (st) return st;
    t0 = ns_now();
    ns_world_free(w);
    st = train_fresh(w, &r->cfg, wd2, o, logf, &r->stats, err);
    r->refit_s = ns_now() - t0;
    return st;
}

ns_status ns_world_fit(const char *split_dir, const ns_fit_opts *o, const char *out_path, ns_fit_result *r,
                       ns_error *err)
{
    memset(r, 0, sizeof *r);
    const ns_fit_lora *lo = &o->lora;
    if (lo->on && !o->text_encoder)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "adapting the encoder (LoRA) needs a text encoder");
    ns_bert *m = NULL, *m2 = NULL;
    ns_buf spec;
    ns_buf_init(&spec);
    ns_status st = NS_OK;
    if (o->text_encoder) {
        st = ns_embed_model_load(&m, o->text_encoder, err);
        ns_buf_printf(&spec, "text:%s", o->text_encoder);
    }
    ns_world_data wd, wd2;
    memset(&wd, 0, sizeof wd);
    memset(&wd2, 0, sizeof wd2);
    double t0 = ns_now();
    ns_world_text wt = {m, o->domains_dir, true, o->train.progress};
    if (!st)
        st = ns_world_data_open_text(&wd, split_dir, m ? spec.data : o->state_spec, m ? spec.data : o->action_spec,
                                     o->standardize, &wt, err);
    r->embed_s = ns_now() - t0;
    if (st) {
        ns_bert_free(m);
        ns_buf_free(&spec);
        return st;
    }
    describe(r, &wd, o);
    ns_world w;
    ns_lora l;
    memset(&w, 0, sizeof w);
    memset(&l, 0, sizeof l);
    ns_buf b, fj, ej;
    ns_buf_init(&b);
    ns_buf_init(&fj);
    ns_buf_init(&ej);
    FILE *logf = NULL;
    if (o->log_path && !(logf = fopen(o->log_path, "w")))
        st = ns_error_set(err, NS_ERR_IO, o->log_path, 0, 0, "cannot write the training log");
    if (!st) st = ns_world_create(&w, &r->cfg, o->train.seed, err);
    if (!st) {
        ns_world_counts(&w, &r->params_state, &r->params_action, &r->params_t);
        if (o->on_ready) o->on_ready(o->ctx, r);
        if (!lo->on || lo->warm) {
            ns_world_free(&w);
            t0 = ns_now();
            st = train_fresh(&w, &r->cfg, &wd, o, logf, &r->stats, err);
            r->warm_s = lo->on ? ns_now() - t0 : 0;
            r->warm_stats = r->stats;
        }
    }
    if (!st && lo->on) st = adapt(&w, &l, m, &wd, &wd2, &m2, split_dir, spec.data, o, r, logf, err);
    const ns_world_data *fin = lo->on && lo->refit ? &wd2 : &wd;
    if (!st) {
        train_json(&b, split_dir, o, r, false);
        ns_world_features_json(&fj, fin->state_spec, fin->action_spec, &fin->sv, &fin->av, &fin->sstd, &fin->astd);
        if (m) ns_world_encoder_json(&ej, o->text_encoder, ns_bert_fingerprint(m), lo->on ? &l : NULL);
        st = ns_world_save_with(&w, out_path, fj.data, b.data, m ? ej.data : NULL, lo->on ? &l.p : NULL, err);
    }
    if (!st) {
        b.len = 0;
        train_json(&b, split_dir, o, r, true);
        r->json = ns_xstrdup(b.data);
    }
    if (logf) fclose(logf);
    ns_buf_free(&b);
    ns_buf_free(&fj);
    ns_buf_free(&ej);
    ns_buf_free(&spec);
    ns_lora_free(&l);
    ns_world_free(&w);
    ns_world_data_free(&wd2);
    ns_world_data_free(&wd);
    ns_bert_free(m2);
    ns_bert_free(m);
    return st;
}
