/* encoder.h — one state encoder φ of either relational kind, as the first
 * paper's progress models use it: WL features (wl.h) or fixed-size factored
 * vectors (fsf.h), dense, for states and for the goal.
 *
 * An ns_encoder_spec is the fitted, task-independent part (the WL vocabulary
 * and options, or the FSF configuration); it serialises to a JSON object so a
 * model file carries its encoder.  An ns_encoder binds a spec to one grounded
 * task. */
#ifndef NEXTSTATE_ENCODER_H
#define NEXTSTATE_ENCODER_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/util/error.h"
#include "nextstate/encode/fsf.h"
#include "nextstate/util/json.h"
#include "nextstate/data/trajectory.h"
#include "nextstate/encode/wl.h"

typedef enum ns_encoder_kind { NS_ENCODER_WL, NS_ENCODER_FSF } ns_encoder_kind;

typedef struct ns_encoder_spec {
    ns_encoder_kind kind;
    ns_wl_vocab wl;      /* WL: the vocabulary (owned) */
    bool wl_loaded;
    ns_wl_opts wl_opts;  /* WL: iterations, statics in/out */
    ns_fsf_config fsf;   /* FSF: width and slot rules */
} ns_encoder_spec;

/* "wl" / "fsf" -> kind; -1 when unknown. */
int ns_encoder_kind_parse(const char *name);
const char *ns_encoder_kind_name(ns_encoder_kind k);

/* Fits vocabulary v (initialised here for s's domain) on the states of the
 * trajectories of s — problems in order, states along the plans (WLPlan's
 * order) — keeping state number r (counted over all trajectories) only when
 * mask is NULL or mask[r] is set; with_goals adds each problem's goal graph
 * after its states. */
ns_status ns_wl_vocab_fit_trajset(ns_wl_vocab *v, const ns_trajset *s, const uint8_t *mask, int iterations,
                                  bool multiset, bool statics, bool with_goals, ns_error *err);
/* A WL spec fitted on every state of s (ns_wl_vocab_fit_trajset with
 * multiset hashing, no goals).  The spec owns the vocabulary. */
ns_status ns_encoder_spec_fit_wl(ns_encoder_spec *e, const ns_trajset *s, int iterations, bool statics,
                                 ns_error *err);
/* FSF spec for s's domain (detected from its predicates); width from
 * max_objects, or — when max_objects ≤ 0 — the largest problem of s. */
ns_status ns_encoder_spec_fsf(ns_encoder_spec *e, const ns_trajset *s, int max_objects, ns_error *err);
void ns_encoder_spec_free(ns_encoder_spec *e);
/* Feature dimension D. */
int ns_encoder_spec_dim(const ns_encoder_spec *e);

/* Appends the spec as a JSON object. */
void ns_encoder_spec_write(const ns_encoder_spec *e, ns_buf *b);
/* Reads what ns_encoder_spec_write wrote (path names the file in errors). */
ns_status ns_encoder_spec_parse(ns_encoder_spec *e, const ns_json *j, const char *path, ns_error *err);

typedef struct ns_encoder {
    const ns_encoder_spec *spec;
    ns_wl_encoder wl;
    ns_fsf_encoder fsf;
    int dim;
} ns_encoder;

/* Binds spec to task t (errors as ns_wl_encoder_init / ns_fsf_encoder_init:
 * e.g. an FSF problem with more objects than slots). */
ns_status ns_encoder_init(ns_encoder *e, const ns_encoder_spec *spec, const ns_task *t, ns_error *err);
void ns_encoder_free(ns_encoder *e);
/* φ(s), dim floats. */
void ns_encoder_state(ns_encoder *e, const ns_word *s, float *out);
/* φ(g), dim floats. */
void ns_encoder_goal(ns_encoder *e, float *out);
/* The nonzero entries of φ(s) — of φ(g) when s is NULL — as a sparse row:
 * columns into idx, values into val (room for ns_encoder_max_nnz(e) each),
 * ascending; scratch holds dim floats (FSF rows are computed dense first).
 * Returns the count. */
int ns_encoder_sparse(ns_encoder *e, const ns_word *s, int *idx, float *val, float *scratch);
/* The most nonzero entries a row of e can have. */
int ns_encoder_max_nnz(const ns_encoder *e);

#endif
