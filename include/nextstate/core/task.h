/* task.h — the grounded STRIPS task and the exact transition function γ.
 *
 * ns_task_ground() instantiates only what relaxed reachability reaches from
 * the initial state.  Atoms of predicates that no action changes are static:
 * they are kept apart (statics[]) and dropped from operator preconditions.
 * Fluent atoms are sorted by (predicate, argument ids), operators by their
 * printed name "(schema a1 … ak)", so ids are canonical for a problem.
 *
 * A state is a packed bitset of task->nwords 64-bit words over fluent atoms.
 * The task points at the domain and problem it was grounded from; they must
 * outlive it. */
#ifndef NEXTSTATE_TASK_H
#define NEXTSTATE_TASK_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/util/error.h"
#include "nextstate/core/pddl.h"
#include "nextstate/util/util.h"

typedef uint64_t ns_word;

static inline bool ns_bit_get(const ns_word *s, int i) { return (s[i >> 6] >> (i & 63)) & 1u; }
static inline void ns_bit_set(ns_word *s, int i) { s[i >> 6] |= (ns_word)1 << (i & 63); }
static inline void ns_bit_clear(ns_word *s, int i) { s[i >> 6] &= ~((ns_word)1 << (i & 63)); }

typedef struct ns_atom {
    int pred;     /* predicate id in the domain */
    int nargs;
    int args_off; /* object ids at task->atom_args[args_off …] */
} ns_atom;

typedef struct ns_op {
    int schema;   /* action id in the domain */
    int args_off; /* nparams object ids at task->op_args[args_off …] */
    int pre_off, npre;       /* positive fluent preconditions (atom ids) */
    int preneg_off, npreneg; /* negative fluent preconditions */
    int add_off, nadd;
    int del_off, ndel;       /* deletes that are not also added */
    int cost;
} ns_op;

typedef struct ns_task {
    const ns_domain *domain;
    const ns_problem *problem;

    int natoms; /* fluent atoms */
    ns_atom *atoms;
    int nstatics; /* static atoms true in every state (sorted like atoms) */
    ns_atom *statics;
    int *atom_args; /* argument pool of atoms and statics */

    int nops;
    ns_op *ops;
    int *op_args;
    int *lists; /* pool of pre/preneg/add/del atom-id lists */

    int nwords;    /* words per state */
    ns_word *init; /* the initial state */
    int *goal_pos; /* fluent atoms that must hold */
    int ngoal_pos;
    int *goal_neg; /* fluent atoms that must not hold */
    int ngoal_neg;
    /* True when a goal literal can never hold (a positive goal atom that is
     * unreachable or a false static, or a negated true static): the task is
     * then unsolvable. */
    bool goal_impossible;
    bool unit_cost; /* every operator costs 1 */
} ns_task;

/* Grounds problem p of domain d. */
ns_status ns_task_ground(ns_task *t, const ns_domain *d, const ns_problem *p,
                         ns_error *err);

/* Limits on grounding: CPU seconds from the call and bytes of the
 * grounder's data (reached atoms, their indexes, operators), read every few
 * microseconds of work.  Reaching one ends grounding with NS_OUT_OF_TIME /
 * NS_OUT_OF_MEMORY and a message naming the problem. */
typedef struct ns_ground_limits {
    double time_limit;   /* <= 0: none */
    size_t memory_limit; /* 0: none */
} ns_ground_limits;

/* ns_task_ground within lim (NULL: no limits). */
ns_status ns_task_ground_limited(ns_task *t, const ns_domain *d, const ns_problem *p, const ns_ground_limits *lim,
                                 ns_error *err);
void ns_task_free(ns_task *t);

/* A domain and problem read from files and grounded: one struct owning all
 * three (problem.nunknown_init > 0: init atoms of undeclared predicates were
 * ignored; the caller may warn). */
typedef struct ns_loaded_task {
    ns_domain domain;
    ns_problem problem;
    ns_task task;
    double ground_seconds;     /* ns_task_ground alone, wall clock */
    double ground_cpu_seconds; /* the same, CPU time */
} ns_loaded_task;

/* Reads, parses and grounds; on error nothing is left to free. */
ns_status ns_task_load(ns_loaded_task *lt, const char *domain_path, const char *problem_path, ns_error *err);
/* The same, grounding within lim (NULL: no limits). */
ns_status ns_task_load_limited(ns_loaded_task *lt, const char *domain_path, const char *problem_path,
                               const ns_ground_limits *lim, ns_error *err);
void ns_loaded_task_free(ns_loaded_task *lt);

static inline const int *ns_op_pre(const ns_task *t, const ns_op *o) { return t->lists + o->pre_off; }
static inline const int *ns_op_preneg(const ns_task *t, const ns_op *o) { return t->lists + o->preneg_off; }
static inline const int *ns_op_add(const ns_task *t, const ns_op *o) { return t->lists + o->add_off; }
static inline const int *ns_op_del(const ns_task *t, const ns_op *o) { return t->lists + o->del_off; }
static inline const int *ns_op_args(const ns_task *t, const ns_op *o) { return t->op_args + o->args_off; }

/* Is operator op applicable in state s? */
bool ns_task_applicable(const ns_task *t, int op, const ns_word *s);
/* γ(s, op): writes the successor into out (nwords words; may alias s). */
void ns_task_apply(const ns_task *t, int op, const ns_word *s, ns_word *out);
/* Does state s satisfy the goal? */
bool ns_task_is_goal(const ns_task *t, const ns_word *s);

/* Backward relevance analysis (as Fast Downward's translator does): an
 * operator is relevant when it adds an atom that the goal or a relevant
 * operator needs, or deletes an atom that must be false for them.  Irrelevant
 * operators never appear on an optimal plan and never help reach the goal, so
 * searches may skip them.  Fills relevant[nops]; returns how many are. */
int ns_task_relevant_ops(const ns_task *t, bool *relevant);

/* Finds the fluent atom pred(args) or returns -1. */
int ns_task_find_atom(const ns_task *t, int pred, const int *args, int nargs);
/* Is pred(args) a static atom (true in every state)? */
bool ns_task_is_static_true(const ns_task *t, int pred, const int *args, int nargs);
/* Finds the operator schema(args) or returns -1. */
int ns_task_find_op(const ns_task *t, int schema, const int *args, int nargs);

/* Appends "(pred a b)" / "(schema a b)" to b. */
void ns_task_atom_str(const ns_task *t, int atom, ns_buf *b);
void ns_task_static_str(const ns_task *t, int atom, ns_buf *b);
void ns_task_op_str(const ns_task *t, int op, ns_buf *b);

#endif
