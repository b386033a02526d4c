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
#include "nextstate/learn/adapt.h"
#include "nextstate/learn/world.h"

struct ns_fit_result;

/* ENCODER ADAPTATION (paper App. M).  With text_encoder set, the state and
 * action features are that model's embeddings ("text:NAME", cached under
 * each dataset as `embed` caches them).  With lora on as well:
 *   1. warm start: the model is trained on the frozen embeddings as without
 *      adaptation (skipped for a cold start);
 *   2. the model and a LoRA adapter of the encoder are trained jointly
 *      (learn/adapt.h, options adapt);
 *   3. refit (the paper's protocol): every text is re-encoded with the
 *      adapted encoder and a fresh model (same seed, same budget as step 1)
 *      is trained on those embeddings, standardised anew; without refit the
 *      jointly trained model is kept (with the frozen standardisation).
 * The checkpoint records the encoder ("encoder": model, fingerprint, lora)
 * and holds the adapter's tensors; `eval` re-encodes with it. */
typedef struct ns_fit_lora {
    bool on;
    ns_lora_config cfg;  /* rank 8, alpha 16, query and value, all layers */
    ns_adapt_opts adapt; /* 2 epochs, batch 16, lr 1e-4 */
    bool warm;           /* train the model on the frozen embeddings first (true) */
    bool refit;          /* a fresh model on the adapted embeddings (true) */
} ns_fit_lora;

typedef struct ns_fit_opts {
    ns_world_config cfg;             /* dims and sparsity are set from the features */
    const char *text_encoder;        /* NULL, or a model (name or folder): features "text:NAME" */
    const char *domains_dir;         /* render templates for text encoders (NULL: ns_render_find's default) */
    ns_fit_lora lora;
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
    ns_train_stats stats;                         /* of the model saved (--lora-head joint: its warm start) */
    char *json;                                   /* the checkpoint's "train" object */
    /* adaptation: stats of the joint stage; seconds of the frozen embeddings, the warm start,
     * the joint stage, the re-encoding and the refit (0 when not run) */
    bool adapted;
    ns_adapt_stats adapt;
    ns_train_stats warm_stats;
    double embed_s, warm_s, adapt_s, reencode_s, refit_s;
} ns_fit_result;
void ns_fit_result_free(ns_fit_result *r);

ns_status ns_world_fit(const char *split_dir, const ns_fit_opts *o, const char *out_path, ns_fit_result *r,
                       ns_error *err);

#endif
