/* reference.h — non-learned reference methods of the second paper
 * (appendix L), evaluated with the world model's retrieval protocol: the
 * split's candidate pools, Hit@1/5/10 with random (seeded) and worst-case
 * tie-breaking and the mean reciprocal rank, reported in an ns_eval_result
 * (evaluate.h; no Acc@k, latency or parameters: those fields stay 0).
 *
 * Embedding methods work in the space of the inputs' STATE features E
 * (in->state: the built-in bag of literals, or any feature file) and rank
 * each pool by cosine to the prediction (a zero vector scores 0):
 *   identity       ŝ′ = E(s)
 *   offset-action  ŝ′ = E(s) + mean over training transitions with the same
 *                  ground action text ("(board c0 l0)") of E(s′) − E(s)
 *   offset-schema  the same keyed by the action schema ("board")
 *                  Keys are per domain (domain name + text); an unseen key
 *                  falls back to the global mean training displacement.
 * Symbolic oracle:
 *   strips         lifted STRIPS induction.  For each training transition
 *                  (s, a, s′), a = (schema o1 … on): add = s′∖s, del = s∖s′ as
 *                  atom texts, every argument oi of an atom replaced by ?p<i>
 *                  (the first position when an object repeats).  The first
 *                  observation per (domain, schema) is kept; every later one
 *                  whose lifted add or delete set differs counts as one
 *                  disagreement.  Prediction: (s ∖ del) ∪ add with ?p<i> → oi;
 *                  a candidate c scores the Jaccard similarity |P∩C| / |P∪C|
 *                  of the atom-text sets, each set extended with its problem's
 *                  context (static atoms and "goal <literal>" entries, the
 *                  prompt's problem and GOAL text), so 1 exactly when the
 *                  fluents, statics and goal all agree: a state of another
 *                  problem with the same fluent atoms is a different state
 *                  (interpolation pools draw from every problem).  Ties use the same random and
 *                  worst rules as every other method: a candidate with the
 *                  same score as the truth (e.g. a second copy of the truth's
 *                  atom set) counts against it under the worst rule.  An
 *                  unseen schema gives no prediction: the query is a miss at
 *                  every k and adds 0 to the reciprocal rank. */
#ifndef NEXTSTATE_REFERENCE_H
#define NEXTSTATE_REFERENCE_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/eval/evaluate.h"
#include "nextstate/data/split.h"
#include "nextstate/learn/world.h"

typedef enum ns_ref_method {
    NS_REF_IDENTITY,
    NS_REF_OFFSET_ACTION,
    NS_REF_OFFSET_SCHEMA,
    NS_REF_STRIPS
} ns_ref_method;

/* "identity", "offset-action", "offset-schema", "strips" <-> method; -1 when unknown. */
int ns_ref_method_parse(const char *name);
const char *ns_ref_method_name(ns_ref_method m);

/* A fitted reference method (opaque). */
typedef struct ns_ref_model ns_ref_model;

/* Fits method m on the transitions train (as (dataset, transition) pairs of
 * in->ds).  The inputs are borrowed and must outlive the model.  *out is
 * NULL on failure. */
ns_status ns_ref_fit(ns_ref_model **out, ns_ref_method m, const ns_world_inputs *in, const ns_refs *train,
                     ns_error *err);
void ns_ref_free(ns_ref_model *m);
ns_ref_method ns_ref_model_method(const ns_ref_model *m);

/* strips: schemas induced, and later observations that disagree with the
 * first one of their schema (0 for the other methods). */
int ns_ref_nschemas(const ns_ref_model *m);
int64_t ns_ref_disagreements(const ns_ref_model *m);

/* Embedding methods: the prediction for transition t of dataset d into
 * out[in->state.dim].  false for strips. */
bool ns_ref_predict_embedding(const ns_ref_model *m, int d, int64_t t, float *out);
/* strips: the predicted atom texts of transition t of dataset d, sorted
 * (malloc'ed array of malloc'ed strings in *atoms); the count, or −1 when
 * the schema is unseen (or m is not strips). */
int ns_ref_predict_atoms(const ns_ref_model *m, int d, int64_t t, char ***atoms);
void ns_ref_atoms_free(char **atoms, int n);

/* Hit@k (random and worst ties, seeded as ns_eval_world) and MRR of the
 * method on refs with their pools (refs->n × pool_size state ids of each
 * transition's dataset, truth first, −1 padding). */
ns_status ns_ref_eval(const ns_ref_model *m, const ns_refs *refs, const int64_t *pools, int pool_size,
                      uint64_t seed, ns_eval_result *r, ns_error *err);

/* ---- one run (`nextstate reference` only prints it) ---- */

/* Method m fitted on a split's training list (state features state_spec,
 * built-in actions; vocabularies fitted on the training problems) and
 * evaluated on its test list, or its dev list with pools from the dev
 * stream (seed ^ NS_SEED_DEV_POOLS), ties broken with seed. */
typedef struct ns_ref_report {
    char *split_dir, *state_spec;
    ns_ref_method method;
    ns_protocol protocol;
    bool dev;
    int nschemas;          /* strips */
    int64_t disagreements; /* strips */
    ns_eval_result r;
} ns_ref_report;

ns_status ns_ref_run(const char *split_dir, ns_ref_method m, const char *state_spec, bool dev, uint64_t seed,
                     ns_ref_report *rep, ns_error *err);
void ns_ref_report_free(ns_ref_report *rep);
/* As one JSON object and newline / as a text table. */
void ns_ref_report_json(const ns_ref_report *rep, ns_buf *b);
void ns_ref_report_table(const ns_ref_report *rep, ns_buf *b);

#endif
