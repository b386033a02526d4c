/* plan.h — IPC plan files and plan validation.
 *
 * A plan file holds one `(action arg…)` per line; `;` starts a comment.
 * Validation instantiates each step from its lifted schema, so a step that is
 * not even relaxed-reachable is still diagnosed precisely. */
#ifndef NEXTSTATE_PLAN_H
#define NEXTSTATE_PLAN_H

#include "nextstate/core/task.h"

typedef struct ns_plan_step {
    int schema;
    int nargs;
    int args[NS_MAX_ARITY];
    int line; /* in the plan file */
} ns_plan_step;

typedef struct ns_plan {
    ns_plan_step *steps;
    int n;
} ns_plan;

/* Parses plan text against the task's domain and problem (names resolved;
 * unknown action or object, or wrong arity -> NS_ERR_INPUT at file:line:col). */
ns_status ns_plan_parse(ns_plan *p, const ns_task *t, const char *text,
                        const char *path, ns_error *err);
ns_status ns_plan_read(ns_plan *p, const ns_task *t, const char *path, ns_error *err);
void ns_plan_free(ns_plan *p);

/* Renders operator ids as an IPC plan (with a final "; cost = N" comment). */
void ns_plan_write_ops(const ns_task *t, const int *ops, int n, ns_buf *out);

typedef struct ns_validation {
    bool valid;
    int failed_step;  /* 0-based step that is not applicable; -1 if none */
    int plan_len;
    long cost;
    char reason[512]; /* the unmet precondition or goal, in words */
} ns_validation;

/* Executes the plan from the initial state.  Returns NS_OK when the plan is
 * valid (v->valid), NS_INVALID_PLAN when a step is inapplicable or the goal
 * does not hold at the end (v says which), or another status on error. */
ns_status ns_plan_validate(const ns_task *t, const ns_plan *p, ns_validation *v);

/* Convenience: execute operator ids (already grounded) and check the goal. */
bool ns_plan_ops_valid(const ns_task *t, const int *ops, int n);

/* The summed cost of operator ids ops[0, n). */
long ns_plan_ops_cost(const ns_task *t, const int *ops, int n);

/* Greedy action elimination (Fink & Yang 1992; Nakhost & Müller 2010): for
 * each step from the first, drop it together with every later step that is
 * then inapplicable, and keep the drop when the rest still reaches the goal.
 * ops[0, n) must be a valid plan; the shorter plan is compacted in place and
 * its length returned.  Its cost is never higher (costs are non-negative)
 * and it is valid.  O(n²) applications; with deadline > 0 (an ns_cpu_now()
 * value) it stops there and returns the plan as shortened so far (valid). */
int ns_plan_eliminate(const ns_task *t, int *ops, int n, double deadline);

/* Plan neighbourhood graph search (Nakhost & Müller, ICAPS 2010): the states
 * of the valid plan ops[0..n) and every state within `depth` steps of them
 * (breadth-first from all of them at once, until the registry holds
 * max_bytes or a fifth of the time to the deadline, an ns_cpu_now() value,
 * has passed; 0: none), then the cheapest path from the initial state to a
 * goal state through those states (uniform-cost search over them, until the
 * deadline), written over ops when it is cheaper; returns the length.  The
 * plan is never costlier and stays valid; an invalid plan is left as it is.
 * With a depth at least the task's diameter it is an optimal plan. */
int ns_plan_neighbourhood(const ns_task *t, int *ops, int n, int depth, size_t max_bytes, double deadline);

/* The valid plan ops[0..n) shortened: action elimination (until deadline),
 * then plan neighbourhood graph search at depth 1, 2, 4, ..., 64 within
 * max_bytes of states each; it stops early when a neighbourhood holds every
 * reachable state (the plan is then optimal) or is cut short without
 * improving the plan.  With max_work > 0 the neighbourhoods' growth and
 * search together do at most about max_work work (successors generated
 * plus 40 per expanded state; a fifth of what is left for each growth): the result does not depend on the CPU's
 * speed or load unless the deadline (a safety cap) comes first.  With
 * max_work <= 0 time decides: depths are tried while the CPU clock is before
 * `until` (capped at deadline; both ns_cpu_now() values, <= 0: none), each
 * neighbourhood kept to as many states as the last depth's CPU time per state
 * lets it search in 0.3 of the time left, its growth to a fifth of the time.
 * Returns the new length; the plan is never costlier and stays valid. */
int ns_plan_shorten(const ns_task *t, int *ops, int n, double deadline, double until, size_t max_bytes,
                    long max_work);

#endif
