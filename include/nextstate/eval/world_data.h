/* world_data.h — a split ready for a world model: the one preamble of
 * training, evaluation and the reference methods.
 *
 *   split dir → ns_split_open (split + its datasets, checked)
 *             → vocabularies (fitted on the split's training problems, or as
 *               a checkpoint records them)
 *             → inputs (ns_world_inputs_load: "builtin" or feature files)
 *             → standardisation (fitted on training rows, or as recorded)
 *
 * and the list a run scores (ns_world_data_list): the test list with the
 * split's stored pools, or the dev list with pools drawn by the split's
 * rules from the dev stream (seed ^ NS_SEED_DEV_POOLS), as the training
 * loop's dev check draws them. */
#ifndef NEXTSTATE_WORLD_DATA_H
#define NEXTSTATE_WORLD_DATA_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/data/split.h"
#include "nextstate/learn/lora.h"
#include "nextstate/learn/world.h"

/* A text encoder for the "text:NAME" feature specs (encode/inputs.h). */
typedef struct ns_world_text {
    const ns_bert *model;    /* the encoder (for a checkpoint: NULL, the one it records is loaded) */
    const char *domains_dir; /* render templates (NULL: ns_render_find's default) */
    bool cache;              /* cache a frozen model's embeddings under each dataset (embed's cache) */
    bool progress;
} ns_world_text;

typedef struct ns_world_data {
    ns_split_data sd;
    ns_bert *model; /* a checkpoint's text encoder, adapter merged (ns_world_data_open_model), else NULL */
    char *state_spec, *action_spec; /* as used */
    ns_vocab sv, av;                /* built-in vocabularies (empty for feature files) */
    ns_feature_std sstd, astd;      /* dim 0: not standardised */
    ns_world_inputs in;
    bool std_state, std_action;     /* the sides standardised */
} ns_world_data;

/* For training (and the reference methods): opens the split, fits the
 * built-in vocabularies on its training problems, loads the inputs and
 * standardises the sides standardize names ("none", "state", "action",
 * "both"; NULL or "auto": every dense side, ns_world_standardize_sides) on
 * the training transitions.  On error
 * nothing is left to free. */
ns_status ns_world_data_open(ns_world_data *wd, const char *split_dir, const char *state_spec, const char *action_spec,
                             const char *standardize, ns_error *err);
/* The same with a text encoder for "text:NAME" specs (text may be NULL). */
ns_status ns_world_data_open_text(ns_world_data *wd, const char *split_dir, const char *state_spec,
                                  const char *action_spec, const char *standardize, const ns_world_text *text,
                                  ns_error *err);

/* For a trained model w whose checkpoint meta text is meta (model_path names
 * it in errors): vocabularies, specs and standardisation as recorded (a
 * non-NULL spec overrides the recorded one), inputs checked against w. */
ns_status ns_world_data_open_model(ns_world_data *wd, const char *split_dir, const ns_world *w, const char *model_path,
                                   const char *meta, const char *state_spec, const char *action_spec, ns_error *err);
/* The same for a checkpoint whose features come from a text encoder: the
 * model its "encoder" record names is loaded (ns_embed_model_load) and must
 * have the recorded fingerprint; its LoRA adapter, when the record has one,
 * is read from the checkpoint's tensors and merged (ns_bert_merge_lora); the
 * embeddings of every text are then computed (cached only without an
 * adapter).  text supplies the templates and progress (may be NULL). */
ns_status ns_world_data_open_model_text(ns_world_data *wd, const char *split_dir, const ns_world *w,
                                        const char *model_path, const char *meta, const char *state_spec,
                                        const char *action_spec, const ns_world_text *text, ns_error *err);

/* The checkpoint's "encoder" record of a text encoder (frozen: its
 * fingerprint before any merge) and its adapter l (NULL: none):
 * {"model": NAME, "fingerprint": "16 hex digits", "lora": {…} | null}. */
void ns_world_encoder_json(ns_buf *b, const char *name, uint64_t fingerprint, const ns_lora *l);
void ns_world_data_free(ns_world_data *wd);

/* The list a run scores, with its pools. */
typedef struct ns_world_list {
    bool dev;              /* the dev list (else the test list) */
    const ns_refs *refs;
    const int64_t *pools;  /* refs->n × pool_size */
    int pool_size;
    int64_t *owned;        /* drawn pools (dev), freed by ns_world_list_free */
} ns_world_list;

/* dev: the dev list, pools of the split's pool size (128 when it has none)
 * drawn from seed ^ NS_SEED_DEV_POOLS; else the test list and its stored
 * pools.  NS_ERR_INPUT (naming split_dir) when the split has no pools. */
ns_status ns_world_data_list(const ns_world_data *wd, bool dev, uint64_t seed, const char *split_dir,
                             ns_world_list *l, ns_error *err);
void ns_world_list_free(ns_world_list *l);

#endif
