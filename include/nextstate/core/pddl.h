/* pddl.h — the lifted task: PDDL domain and problem files.
 *
 * Supported: :strips :typing :negative-preconditions :equality, constants,
 * type hierarchies (with `either` parameter types), conjunctive and
 * disjunctive (`or`) preconditions over literals, conjunctive effects of
 * literals, `:action-costs` with `(increase (total-cost) N)` effects.  Names
 * are case-insensitive and stored lower-cased.  Errors carry file:line:col.
 *
 * Ids are dense: types, predicates and actions index their arrays.  Objects
 * are numbered constants first (the domain's, in declaration order), then the
 * problem's objects in declaration order; a problem therefore carries the full
 * object table.  In an action, a term t >= 0 is an object id and t < 0 is the
 * parameter NS_TERM_PARAM(t). */
#ifndef NEXTSTATE_PDDL_H
#define NEXTSTATE_PDDL_H

#include <stdbool.h>
#include "nextstate/util/error.h"
#include "nextstate/util/util.h"

#define NS_PRED_EQUAL (-1) /* the built-in `=` predicate */
#define NS_TERM_PARAM(t) (-(t)-1)
#define NS_PARAM_TERM(i) (-(i)-1)
#define NS_MAX_ARITY 16

typedef struct ns_type {
    char *name;
    int parent; /* -1 for `object` (type 0), the root */
} ns_type;

typedef struct ns_pred {
    char *name;
    int arity;
    int *arg_types; /* arity entries: the declared type of each argument */
} ns_pred;

/* A literal: pred (or NS_PRED_EQUAL) applied to terms, possibly negated. */
typedef struct ns_lit {
    int pred;
    bool neg;
    int nargs;
    int args[NS_MAX_ARITY];
} ns_lit;

typedef struct ns_clause { /* a conjunction of literals */
    ns_lit *lits;
    int n;
} ns_clause;

typedef struct ns_action {
    char *name;
    int nparams;
    char **param_names; /* without '?' */
    /* param_types[i] lists the allowed types of parameter i (several with
     * `either`); nparam_types[i] counts them. */
    int **param_types;
    int *nparam_types;
    ns_clause *pre; /* disjunctive normal form: pre[0] ∨ pre[1] ∨ … */
    int npre;       /* ≥ 1; one empty clause for "no precondition" */
    ns_lit *eff;    /* add (neg = false) and delete (neg = true) effects */
    int neff;
    int cost; /* from (increase (total-cost) N); 1 when absent */
} ns_action;

typedef struct ns_domain {
    char *name;
    char *path; /* the file it was read from */
    ns_type *types;
    int ntypes;
    ns_pred *preds;
    int npreds;
    char **constants;
    int *constant_types;
    int nconstants;
    ns_action *actions;
    int nactions;
    bool action_costs;
} ns_domain;

typedef struct ns_ground_atom { /* an atom over object ids */
    int pred;
    int nargs;
    int args[NS_MAX_ARITY];
} ns_ground_atom;

typedef struct ns_problem {
    char *name;
    char *domain_name;
    char *path;
    char **objects; /* constants first, then the problem's objects */
    int *object_types;
    int nobjects;
    ns_strmap object_index; /* name -> object id */
    ns_ground_atom *init;
    int ninit;
    ns_lit *goal; /* a conjunction of ground literals (args are object ids) */
    int ngoal;
    /* Init atoms of predicates the domain does not declare are skipped (no
     * action or goal can refer to them); their number and the first one's
     * position, for a warning. */
    int nunknown_init;
    int unknown_line, unknown_col;
    char unknown_pred[64];
} ns_problem;

/* Parses a domain from text; path names the source in error messages. */
ns_status ns_domain_parse(ns_domain *d, const char *text, const char *path,
                          ns_error *err);
ns_status ns_domain_read(ns_domain *d, const char *path, ns_error *err);
void ns_domain_free(ns_domain *d);

/* Parses a problem of domain d. */
ns_status ns_problem_parse(ns_problem *p, const ns_domain *d, const char *text,
                           const char *path, ns_error *err);
ns_status ns_problem_read(ns_problem *p, const ns_domain *d, const char *path,
                          ns_error *err);
void ns_problem_free(ns_problem *p);

/* Lookups by (lower-case) name; -1 when absent. */
int ns_domain_find_type(const ns_domain *d, const char *name);
int ns_domain_find_pred(const ns_domain *d, const char *name);
int ns_domain_find_action(const ns_domain *d, const char *name);
int ns_problem_find_object(const ns_problem *p, const char *name);

/* True when type `sub` is `super` or one of its descendants. */
bool ns_type_is_subtype(const ns_domain *d, int sub, int super);

#endif
