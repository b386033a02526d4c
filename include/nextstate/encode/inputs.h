/* inputs.h — what the world model reads: the stacked feature rows of a split's
 * datasets, loaded from specs, standardised on the training split, and
 * recorded in the checkpoint
 * (the conventions — global state ids, action ids, row modes, spec
 * syntax — are in learn/world.h's FEATURES AND IDS and ACTION ROW MODES). */
#ifndef NEXTSTATE_ENCODE_INPUTS_H
#define NEXTSTATE_ENCODE_INPUTS_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/encode/builtin.h"
#include "nextstate/encode/features.h"
#include "nextstate/encode/bert.h"

/* What the model reads: datasets and their stacked feature rows. */
typedef struct ns_world_inputs {
    int nds;
    const ns_dataset *const *ds;
    ns_features state, action;
    ns_action_rows action_rows; /* = action.rows */
    int64_t *state_base;        /* nds + 1: dataset d's states are rows state_base[d] + id */
    int64_t *action_base;       /* nds + 1: dataset d's action rows start at action_base[d] */
    int64_t **action_offset;    /* per dataset, ns_action_offsets */
    int64_t **tr_pair;          /* state-action mode: per dataset, transition -> pair id */
} ns_world_inputs;

/* Takes ownership of the two (stacked) feature sets and checks their row
 * counts against the datasets' states and actions (ground actions or
 * applicable pairs, by action->rows).  The array ds (and the datasets) are
 * borrowed: they must outlive in. */
ns_status ns_world_inputs_init(ns_world_inputs *in, const ns_dataset *const *ds, int nds, ns_features *state,
                               ns_features *action, ns_error *err);
void ns_world_inputs_free(ns_world_inputs *in);
/* The action row (into in->action) of transition t of dataset d. */
int64_t ns_world_transition_arow(const ns_world_inputs *in, int d, int64_t t);
/* The action row of applicable_ops[k] of dataset d applied in its state s
 * (k ∈ [applicable_offsets[s], applicable_offsets[s + 1])). */
int64_t ns_world_applicable_arow(const ns_world_inputs *in, int d, int64_t s, int64_t k);
/* Builds inputs from feature specs: "builtin" (with the vocabularies sv /
 * av) or a comma-separated list of one spec per dataset ("FILE.npy" or
 * "DIR/PREFIX"), stacked. */
ns_status ns_world_inputs_load(ns_world_inputs *in, const ns_dataset *const *ds, int nds, const char *state_spec,
                               const char *action_spec, const ns_vocab *sv, const ns_vocab *av, ns_error *err);
/* TEXT ENCODERS.  A side whose spec is "text:NAME" reads the embeddings that
 * a BERT-family encoder (bert.h) makes of its datasets' texts — every
 * state's paper-layout prompt, every ground action's PDDL text — computed by
 * ns_embed_dataset_features (embed.h): chunked when a text exceeds the
 * window, cached under each dataset's folder when dataset_dirs is given.
 * NAME must be the model's (the folder's base name, or a path ending in
 * it); one spec serves every dataset of the split. */
typedef struct ns_text_source {
    const ns_bert *model;
    const char *domains_dir;           /* render templates (NULL: ns_render_find's default) */
    const char *const *dataset_dirs;   /* nds cache parents, or NULL: no cache (an adapted model) */
    bool progress;
} ns_text_source;
/* Whether spec names a text encoder ("text:…"). */
bool ns_spec_is_text(const char *spec);
/* ns_world_inputs_load, with text for "text:NAME" sides (NULL: such a spec
 * is NS_ERR_USAGE). */
ns_status ns_world_inputs_load_text(ns_world_inputs *in, const ns_dataset *const *ds, int nds,
                                    const char *state_spec, const char *action_spec, const ns_vocab *sv,
                                    const ns_vocab *av, const ns_text_source *text, ns_error *err);
/* Fits the chosen sides of in on the split's training transitions — states:
 * their source and target states; actions: their action rows, each row once
 * — and applies them (ss / as receive the fits; dim 0 for a side not
 * chosen). */
ns_status ns_world_standardize_split(ns_world_inputs *in, const ns_split *sp, bool state, bool action,
                                     ns_feature_std *ss, ns_feature_std *as, ns_error *err);

/* Which sides to standardise for `which`: "state", "action", "both",
 * "none", or NULL / "auto" — the default — every dense side and no sparse
 * one: a frozen text encoder's embeddings (and imported .npy rows) are
 * nearly one vector and need it, a bag of literals or WL counts (CSR) keep
 * their sparsity.  NS_ERR_USAGE for another word. */
ns_status ns_world_standardize_sides(const ns_world_inputs *in, const char *which, bool *state, bool *action,
                                     ns_error *err);

/* The checkpoint's "features" object: {"state": spec, "action": spec,
 * "state_vocab": [terms…], "action_vocab": [terms…], "standardize":
 * {"state": {"mean": […], "scale": […]} | null, "action": … }} (vocabularies
 * only for builtin sides; ss / as may be NULL). */
void ns_world_features_json(ns_buf *b, const char *state_spec, const char *action_spec, const ns_vocab *sv,
                            const ns_vocab *av, const ns_feature_std *ss, const ns_feature_std *as);
/* Reads that object back from a checkpoint's meta text: malloc'ed specs,
 * the vocabularies (initialised here; empty for non-builtin sides) and the
 * standardisations (dim 0 when none; ss / as may be NULL). */
ns_status ns_world_features_parse(const char *meta, char **state_spec, char **action_spec, ns_vocab *sv, ns_vocab *av,
                                  ns_feature_std *ss, ns_feature_std *as, ns_error *err);


#endif
