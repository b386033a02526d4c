/* world_data.c — a split ready for a world model (world_data.h). */
#include "nextstate/eval/world_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/encode/embed.h"
#include "nextstate/util/json.h"

/* (a zeroed ns_vocab is safe to free: ns_vocab_init allocates, so only the
 * training side calls it; ns_world_features_parse initialises its own) */
static void wd_zero(ns_world_data *wd) { memset(wd, 0, sizeof *wd); }

/* The text source of wd's datasets for text (cache dirs when asked). */
static ns_text_source text_source(const ns_world_data *wd, const ns_bert *model, const ns_world_text *text, bool cache,
                                  const char ***dirs)
{
    ns_text_source ts = {model, text ? text->domains_dir : NULL, NULL,
                         text && text->progress};
    *dirs = NULL;
    if (cache) {
        *dirs = ns_xcalloc((size_t)wd->sd.ndatasets + 1, sizeof **dirs);
        for (int d = 0; d < wd->sd.ndatasets; d++) (*dirs)[d] = wd->sd.split.sources[d].dir;
        ts.dataset_dirs = *dirs;
    }
    return ts;
}

ns_status ns_world_data_open(ns_world_data *wd, const char *split_dir, const char *state_spec, const char *action_spec,
                             const char *standardize, ns_error *err)
{
    return ns_world_data_open_text(wd, split_dir, state_spec, action_spec, standardize, NULL, err);
}

ns_status ns_world_data_open_text(ns_world_data *wd, const char *split_dir, const char *state_spec,
                                  const char *action_spec, const char *standardize, const ns_world_text *text,
                                  ns_error *err)
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
        const char **dirs;
        ns_text_source ts = text_source(wd, text ? text->model : NULL, text, text && text->cache, &dirs);
        st = ns_world_inputs_load_text(&wd->in, wd->sd.ds, sp->ndatasets, state_spec, action_spec, &wd->sv, &wd->av,
                                       &ts, err);
        free(dirs);
    }
    if (st == NS_OK)
        st = ns_world_standardize_sides(&wd->in, standardize, &wd->std_state, &wd->std_action, err);
    if (st == NS_OK)
        st = ns_world_standardize_split(&wd->in, &wd->sd.split, wd->std_state, wd->std_action, &wd->sstd, &wd->astd,
                                        err);
    if (st != NS_OK) ns_world_data_free(wd);
    return st;
}

void ns_world_encoder_json(ns_buf *b, const char *name, uint64_t fingerprint, const ns_lora *l)
{
    ns_buf_puts(b, "{\"model\": ");
    ns_json_put_str(b, name);
    ns_buf_printf(b, ", \"fingerprint\": \"%016llx\", \"lora\": ", (unsigned long long)fingerprint);
    if (l) ns_lora_json(l, b);
    else ns_buf_puts(b, "null");
    ns_buf_puts(b, "}");
}

/* The text encoder a checkpoint records (meta's "encoder"), adapter merged. */
static ns_status load_encoder(ns_bert **out, const char *model_path, const char *meta, bool *adapted, ns_error *err)
{
    *out = NULL;
    *adapted = false;
    ns_json j;
    ns_status st = ns_json_parse(&j, meta, strlen(meta), model_path, err);
    if (st) return st;
    const ns_json *enc = ns_json_get(&j, "encoder"), *lj = enc ? ns_json_get(enc, "lora") : NULL;
    const char *name = NULL, *fp = NULL;
    if (!enc || !ns_json_get_str(enc, "model", &name) || !ns_json_get_str(enc, "fingerprint", &fp))
        st = ns_error_set(err, NS_ERR_INPUT, model_path, 0, 0,
                          "the checkpoint reads text-encoder features but records no encoder (model, fingerprint)");
    ns_bert *m = NULL;
    if (!st) st = ns_embed_model_load(&m, name, err);
    char have[24];
    if (!st) snprintf(have, sizeof have, "%016llx", (unsigned long long)ns_bert_fingerprint(m));
    if (!st && strcmp(have, fp) != 0)
        st = ns_error_set(err, NS_ERR_INPUT, model_path, 0, 0,
                          "the checkpoint's encoder %s had fingerprint %s; the model found under that name has %s "
                          "(other weights or settings)", name, fp, have);
    if (!st && lj && lj->kind == NS_JSON_OBJECT) {
        ns_params file;
        ns_lora l;
        st = ns_params_read(&file, model_path, NULL, err);
        if (!st) {
            st = ns_lora_from_ckpt(&l, ns_bert_config_of(m), lj, &file, model_path, err);
            ns_params_free(&file);
        }
        if (!st) {
            ns_bert_lora v;
            ns_lora_view(&l, &v);
            ns_bert_merge_lora(m, &v, ns_lora_hash(&l));
            ns_lora_free(&l);
            *adapted = true;
        }
    }
    ns_json_free(&j);
    if (st) ns_bert_free(m);
    else *out = m;
    return st;
}

ns_status ns_world_data_open_model(ns_world_data *wd, const char *split_dir, const ns_world *w, const char *model_path,
                                   const char *meta, const char *state_spec, const char *action_spec, ns_error *err)
{
    return ns_world_data_open_model_text(wd, split_dir, w, model_path, meta, state_spec, action_spec, NULL, err);
}

ns_status ns_world_data_open_model_text(ns_world_data *wd, const char *split_dir, const ns_world *w,
                                        const char *model_path, const char *meta, const char *state_spec,
                                        const char *action_spec, const ns_world_text *text, ns_error *err)
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
    bool textual = ns_spec_is_text(wd->state_spec) || ns_spec_is_text(wd->action_spec), adapted = false;
    const ns_bert *model = text ? text->model : NULL;
    if (st == NS_OK && textual && !model) {
        st = load_encoder(&wd->model, model_path, meta, &adapted, err);
        model = wd->model;
    }
    if (st == NS_OK) {
        const char **dirs;
        ns_text_source ts = text_source(wd, model, text, textual && !adapted && (!text || text->cache), &dirs);
        st = ns_world_inputs_load_text(&wd->in, wd->sd.ds, wd->sd.ndatasets, wd->state_spec, wd->action_spec, &wd->sv,
                                       &wd->av, &ts, err);
        free(dirs);
    }
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
    ns_bert_free(wd->model);
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
