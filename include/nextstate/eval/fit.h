/* fit.h — a world-model fit in one call: a split directory in, a whole
 * checkpoint out (`nextstate train`).
 *
 * ns_world_fit opens the split (world_data.h), creates the model (config
 * widths from the features), trains it with the best-dev-Hit@5 epoch
 * selection of ns_world_train (dev scorer ns_eval_hits) and writes the
 * checkpoint: parameters, config, the "features" object (specs,
 * vocabularies, standardisation) and the "train" object (options, stats,
 * parameter counts), the JSON that r->json holds too. */
#ifndef NEXTSTATE_FIT_H
#define NEXTSTATE_FIT_H

#include <stdbool.h>
#include "nextstate/learn/world.h"

struct ns_fit_result;

typedef struct ns_fit_opts {
    ns_world_config cfg;             /* dims and sparsity are set from the features */
    ns_train_opts train;             /* on_epoch / ctx are the fit's own when log_path is set */
    const char *state_spec, *action_spec; /* "builtin" */
    const char *standardize;         /* none, state, action, both; NULL: every dense side */
    const char *log_path;            /* one line per epoch (NULL: none) */
    /* called once the model exists, before training (may be NULL): r holds
     * everything but the training stats and json */
    void (*on_ready)(void *ctx, const struct ns_fit_result *r);
    void *ctx;
} ns_fit_opts;

/* ns_world_config_init, ns_eval_train_opts_init, builtin features. */
void ns_fit_opts_init(ns_fit_opts *o);

typedef struct ns_fit_result {
    ns_protocol protocol;
    int ndatasets;
    int64_t ntrain, ndev;
    bool std_state, std_action;                   /* the sides standardised */
    ns_world_config cfg;                          /* as built */
    size_t params_state, params_action, params_t; /* ns_world_counts */
    ns_train_stats stats;
    char *json;                                   /* the checkpoint's "train" object */
} ns_fit_result;
void ns_fit_result_free(ns_fit_result *r);

ns_status ns_world_fit(const char *split_dir, const ns_fit_opts *o, const char *out_path, ns_fit_result *r,
                       ns_error *err);

#endif
