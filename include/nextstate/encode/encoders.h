/* encoders.h — one interface for the encoders the world model reads:
 * fit on a split's training data (or nothing to fit), give every state (and,
 * for an encoder with an action side, every ground action) of a dataset a
 * feature row, dense or sparse, and save / load what was fitted.
 *
 * An encoder type is a table row (ns_enc_type: a name and its functions);
 * ns_enc_find looks one up by name, so a new encoder is one file with its
 * functions plus one row in the registry (encoders.c).  Rows follow the
 * project-wide conventions of encode/features.h: states by global state id,
 * actions by global action id (action_offset[problem] + operator).
 *
 * Registered here: "builtin" (bag of literals, vocabularies of
 * encode/builtin.h), the text featurizers "literals", "bow", "tfidf",
 * "char", "random", "context", "onehot" (encode/featurize.h, their default
 * options), "npy" (imported features: a FILE.npy or DIR/PREFIX spec, one
 * per dataset; nothing to fit) and "embed" (a frozen BERT-family model,
 * spec = its folder: paper-layout prompts / action texts, chunked when
 * beyond the window; nothing to fit, no cache — `nextstate embed` keeps
 * one).  Not yet behind it (they have their own drivers): WL and FSF
 * (encode/encoder.h, `nextstate encode`) and lifted WL actions
 * (state-action rows). */
#ifndef NEXTSTATE_ENCODE_ENCODERS_H
#define NEXTSTATE_ENCODE_ENCODERS_H

#include <stdbool.h>
#include "nextstate/data/dataset.h"
#include "nextstate/data/split.h"
#include "nextstate/encode/features.h"
#include "nextstate/encode/featurize.h"
#include "nextstate/util/error.h"

typedef struct ns_enc ns_enc;

/* The side an encoder fits and encodes. */
typedef enum ns_enc_side { NS_ENC_STATES, NS_ENC_ACTIONS } ns_enc_side;

typedef struct ns_enc_type {
    const char *name;
    const char *summary;
    bool has_actions; /* encodes actions as well as states */
    bool fits;        /* needs ns_enc_fit (or ns_enc_load) before encoding */
    /* fit on the training transitions of sp over its datasets ds[0 … nds) */
    ns_status (*fit)(ns_enc *e, const ns_dataset *const *ds, int nds, const ns_split *sp, ns_error *err);
    /* rows of every state / action of ds (dataset index d of the split) */
    ns_status (*encode)(ns_enc *e, const ns_dataset *ds, int d, ns_features *out, ns_error *err);
    ns_status (*save)(const ns_enc *e, const char *path, ns_error *err);
    ns_status (*load)(ns_enc *e, const char *path, ns_error *err);
    void (*free)(ns_enc *e);
} ns_enc_type;

/* An encoder instance: its type, the side, and its fitted state (owned). */
struct ns_enc {
    const ns_enc_type *type;
    ns_enc_side side;
    const char *domains; /* templates folder for prompt texts (borrowed; NULL: ns_render_find's default) */
    const char *spec;    /* npy: the comma-separated feature specs; embed: the model folder (borrowed) */
    bool fitted;
    void *impl;
};

/* The registry: *n receives the number of types. */
const ns_enc_type *const *ns_enc_types(int *n);
/* The type named name, or NULL. */
const ns_enc_type *ns_enc_find(const char *name);

/* An encoder of the named type for one side; NS_ERR_USAGE naming the known
 * types when the name is unknown, or for actions of a states-only type. */
ns_status ns_enc_init(ns_enc *e, const char *name, ns_enc_side side, ns_error *err);
void ns_enc_free(ns_enc *e);
/* A text featurizer of the options o (any kind and side o names: the
 * featurize command's options beyond a type's defaults). */
void ns_enc_init_text(ns_enc *e, const ns_feat_opts *o);
/* Moves a fitted text encoder's featurizer into *out (the encoder is left
 * unfitted); NS_ERR_USAGE for another type or before a fit. */
ns_status ns_enc_take_featurizer(ns_enc *e, ns_featurizer *out, ns_error *err);
/* Fits (a no-op for types that fit nothing). */
ns_status ns_enc_fit(ns_enc *e, const ns_dataset *const *ds, int nds, const ns_split *sp, ns_error *err);
/* Rows of every state (or action) of ds; NS_ERR_USAGE before a fit. */
ns_status ns_enc_encode(ns_enc *e, const ns_dataset *ds, int d, ns_features *out, ns_error *err);
/* What was fitted, to a file (NS_ERR_USAGE for a type with nothing to save). */
ns_status ns_enc_save(const ns_enc *e, const char *path, ns_error *err);
ns_status ns_enc_load(ns_enc *e, const char *path, ns_error *err);

#endif
