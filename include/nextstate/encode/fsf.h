/* fsf.h — fixed-size factored (FSF) state encodings, the first paper's
 * non-relational baseline, for blocksworld, gripper, logistics and visitall.
 *
 * A row has width max_objects + 1.  Slot 0 is global; the problem's objects
 * take slots 1..n in lexicographic (byte) order of their names, so "ball10"
 * comes before "ball2".  Slots past the problem's objects hold -99 (unused);
 * object slots no atom speaks about hold 0, and so does slot 0.  The true
 * atoms then write slots (the domain's rules, slot(o) = o's slot number):
 *   blocks     on(x,y): V[x] = slot(y);  holding(x): V[x] = -1;  ontable(x): V[x] = 0
 *   gripper    at-robby(r): V[0] = slot(r);  at(b,r): V[b] = slot(r);
 *              carry(b,g): V[b] = -slot(g) and V[g] = slot(b)  (a free gripper stays 0)
 *   logistics  at(o,l): V[o] = slot(l);  in(p,v): V[p] = -slot(v)
 *   visitall   at-robot(c): V[0] = slot(c);  visited(c): V[c] = 1
 * Other predicates write nothing.  The goal row starts with -10 in every
 * slot ("don't care", unused slots included) and applies the same rules to
 * the positive goal atoms. */
#ifndef NEXTSTATE_FSF_H
#define NEXTSTATE_FSF_H

#include "nextstate/util/error.h"
#include "nextstate/core/pddl.h"
#include "nextstate/core/task.h"
#include "nextstate/util/util.h"

#define NS_FSF_UNUSED (-99.0f)      /* slot past the problem's objects */
#define NS_FSF_GOAL_DEFAULT (-10.0f) /* goal slot that no goal atom sets */

typedef enum ns_fsf_domain {
    NS_FSF_AUTO, /* detect from the domain's predicates */
    NS_FSF_BLOCKS,
    NS_FSF_GRIPPER,
    NS_FSF_LOGISTICS,
    NS_FSF_VISITALL
} ns_fsf_domain;

typedef struct ns_fsf_config {
    int max_objects;      /* row width is max_objects + 1 */
    ns_fsf_domain domain; /* which slot rules */
} ns_fsf_config;

/* Reads the paper's config JSON ({"max_objects": N}, optionally
 * "domain": "blocks" | "gripper" | "logistics" | "visitall"). */
ns_status ns_fsf_config_load(ns_fsf_config *c, const char *path, ns_error *err);
ns_status ns_fsf_config_parse(ns_fsf_config *c, const char *text, size_t len, const char *path, ns_error *err);
/* Writes c as JSON (the domain too unless AUTO). */
ns_status ns_fsf_config_save(const ns_fsf_config *c, const char *path, ns_error *err);

/* "blocks", "gripper", "logistics", "visitall" or "auto". */
const char *ns_fsf_domain_name(ns_fsf_domain d);
/* Parses a name as above (also "blocksworld", "visitall-from-everywhere",
 * "grid-visit-all", "gripper-strips"); NS_FSF_AUTO when unknown. */
ns_fsf_domain ns_fsf_domain_parse(const char *name);
/* Recognises a domain by its predicates: blocks (on/2, ontable/1,
 * holding/1), gripper (at-robby/1, carry/2, at/2), logistics (at/2, in/2),
 * visitall (at-robot/1, visited/1); NS_FSF_AUTO when none fits. */
ns_fsf_domain ns_fsf_domain_detect(const ns_domain *d);

static inline int ns_fsf_dim(const ns_fsf_config *c) { return c->max_objects + 1; }

/* Per-task encoder: object slots and each fluent atom's slot writes,
 * precomputed; encoding a state allocates nothing. */
typedef struct ns_fsf_encoder {
    const ns_task *task;
    ns_fsf_domain domain;
    int width;
    int *slot;      /* task object id -> slot (1-based) */
    int *rule_off;  /* fluent atom a writes rule_slot/val[rule_off[a] .. rule_off[a+1]) */
    int *rule_slot;
    float *rule_val;
    float *base;    /* the row before fluent atoms (defaults + static atoms) */
    float *goal;    /* the goal row */
} ns_fsf_encoder;

/* Binds a config to a task.  NS_ERR_INPUT when the problem has more objects
 * than max_objects; NS_ERR_UNSUPPORTED when the domain is not one of the four
 * (and the config does not name it). */
ns_status ns_fsf_encoder_init(ns_fsf_encoder *e, const ns_fsf_config *c, const ns_task *t, ns_error *err);
void ns_fsf_encoder_free(ns_fsf_encoder *e);
/* Writes the row of state s (width floats). */
void ns_fsf_encode(const ns_fsf_encoder *e, const ns_word *s, float *out);
/* Writes the goal row (width floats). */
void ns_fsf_encode_goal(const ns_fsf_encoder *e, float *out);
/* Slot of a task object (1-based). */
static inline int ns_fsf_slot(const ns_fsf_encoder *e, int obj) { return e->slot[obj]; }

#endif
