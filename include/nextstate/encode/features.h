/* features.h — feature rows (dense .npy or CSR triple), their files and row modes,
 * per-column standardisation, and which states / actions a split's
 * training transitions touch
 * (the conventions — global state ids, action ids, row modes, spec
 * syntax — are in learn/world.h's FEATURES AND IDS and ACTION ROW MODES). */
#ifndef NEXTSTATE_ENCODE_FEATURES_H
#define NEXTSTATE_ENCODE_FEATURES_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/util/csr.h"
#include "nextstate/data/dataset.h"
#include "nextstate/data/split.h"
#include "nextstate/util/error.h"

/* What an action feature row stands for (see ACTION ROW MODES above). */
typedef enum ns_action_rows { NS_AROWS_ACTION, NS_AROWS_STATE_ACTION } ns_action_rows;
const char *ns_action_rows_name(ns_action_rows m); /* "action", "state-action" */
int ns_action_rows_parse(const char *s);           /* -1 when unknown */

typedef struct ns_features {
    int64_t nrows, dim;
    bool sparse;
    float *dense;        /* nrows × dim when !sparse */
    ns_csr csr;          /* when sparse */
    ns_action_rows rows; /* from the SPEC.rows.json sidecar; NS_AROWS_ACTION without one */
} ns_features;

void ns_features_free(ns_features *f);
/* Loads "FILE.npy" (dense float32 [N, D]) or "DIR/PREFIX" (CSR triple with
 * _shape.npy), and the row mode of its sidecar when there is one (its count
 * must equal the rows). */
ns_status ns_features_load(ns_features *f, const char *spec, ns_error *err);
/* Writes the sidecar SPEC.rows.json that marks features as mode m with
 * nrows rows. */
ns_status ns_features_rows_save(const char *spec, ns_action_rows m, int64_t nrows, ns_error *err);
/* Stacks a[0 … n) row-wise (equal widths, kinds and row modes); the inputs
 * are freed. */
ns_status ns_features_stack(ns_features *out, ns_features *a, int n, ns_error *err);
/* Whether rows a and b hold the same features (bitwise; sparse rows by
 * their stored entries) — two such states are indistinguishable to every
 * model fed f. */
bool ns_features_rows_equal(const ns_features *f, int64_t a, int64_t b);

/* action_offset[p] = Σ_{q<p} problems[q].nops for p ≤ nproblems
 * (nproblems + 1 entries, malloc'ed); the last entry is the action count. */
int64_t *ns_action_offsets(const ns_dataset *ds);

/* Per-column standardisation of dense features, x ↦ (x − mean) · scale with
 * scale = 1 / std (1 where std < 1e-6), fitted on training rows: for
 * features whose rows are nearly one vector — a frozen text encoder's
 * pooled embeddings of templated prompts (cosine ≈ 0.99 between states) —
 * so the differences between states reach the first layer at unit scale.
 * dim 0: none. */
typedef struct ns_feature_std {
    int dim;
    float *mean, *scale;
} ns_feature_std;
void ns_feature_std_free(ns_feature_std *s);
/* Fits on rows[0 … n) of the dense features f. */
void ns_feature_std_fit(ns_feature_std *s, const ns_features *f, const int64_t *rows, int64_t n);
/* Applies s to every row of f in place (dense, s->dim columns; NS_ERR_INPUT
 * naming `side` otherwise); dim 0 leaves f alone. */
ns_status ns_feature_std_apply(const ns_feature_std *s, ns_features *f, const char *side, ns_error *err);

/* What a split's training transitions touch in one of its datasets — the
 * one place that says it (vocabularies, featurizer fits and standardisation
 * are all fitted on exactly this).  For dataset index d (ds = the split's
 * dataset d): its training transitions in split order, the states they
 * touch (sources and targets, ascending), the problems they come from
 * (mask) and the ground actions they apply ((problem, operator) pairs in
 * first-seen order). */
typedef struct ns_train_touch {
    int64_t ntrans, nstates, nactions;
    int64_t *trans;   /* ntrans transition ids of dataset d */
    int64_t *states;  /* nstates state ids, ascending */
    int64_t *actions; /* 2 × nactions: problem, operator */
    int nproblems;
    bool *problem; /* nproblems: has a training transition */
} ns_train_touch;
void ns_train_touch_init(ns_train_touch *t, const int64_t *refs, int64_t nrefs, int d, const ns_dataset *ds);
void ns_train_touch_free(ns_train_touch *t);

#endif
