/* space.h — explicit state spaces of unit-cost tasks: the full reachable
 * space (breadth-first, up to a cap) or the optimal-plan DAG, with exact goal
 * distances h*, distances from the initial state g, and every transition
 * between kept states.
 *
 * Full mode: every state reachable from the initial state, each expanded, all
 * its transitions kept; h* by backward breadth-first search.  When the cap
 * stops the exploration, `complete` is false and h* is measured on the
 * explored part only (an upper bound; -1 where no goal was reached).
 *
 * Optimal mode: only the states and transitions on optimal plans — the DAG
 * of edges s→s′ with g(s) + 1 + h*(s′) = C*.  First a layered breadth-first
 * search without a heuristic, up to `blind_states` states: the first goal
 * layer is C*.  When the states within depth C* are more, C* comes from A*
 * with LM-cut, and the layered search prunes every state with
 * g + h^LM-cut > C* (admissible, so no optimal path is lost).  Either way a
 * backward pass keeps the states that reach a goal at depth C*; both give
 * the same DAG, states in the same order (an alive state is first generated
 * by an alive parent).  When the pruned exploration exceeds the cap, the DAG
 * is the optimal plan A* found and `complete` is false.
 *
 * State 0 is the initial state; states are numbered by increasing g. */
#ifndef NEXTSTATE_SPACE_H
#define NEXTSTATE_SPACE_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/core/state.h"
#include "nextstate/core/task.h"

typedef enum ns_space_mode { NS_SPACE_FULL, NS_SPACE_OPTIMAL } ns_space_mode;

typedef struct ns_space_opts {
    ns_space_mode mode;
    size_t max_states; /* cap on explored states; 0 = 1,000,000 */
    double time_limit; /* CPU seconds for optimal mode's heuristic-free search and A* together; <= 0: none */
    long blind_states; /* optimal mode's heuristic-free search stops past this many states;
                          0: 1,000,000 (at most the cap), < 0: none (A* with LM-cut at once) */
} ns_space_opts;

typedef struct ns_space {
    const ns_task *task;
    ns_registry states;   /* the kept states, ids 0 … n-1 */
    int64_t *edge_start;  /* n+1 offsets: transitions of state s at [edge_start[s], edge_start[s+1]) */
    int32_t *edge_op;     /* operator of each transition (ascending within a state) */
    uint32_t *edge_dst;   /* successor state id */
    int64_t nedges;
    int32_t *g;           /* distance from the initial state */
    int32_t *hstar;       /* goal distance; -1 when no goal is reachable (dead end) */
    bool complete;        /* false when the cap cut the exploration */
    int32_t cstar;        /* optimal plan length, -1 when unsolvable */
    int64_t explored;     /* states generated during exploration (optimal mode: before pruning) */
} ns_space;

/* Explores task t.  Non-unit-cost tasks are NS_ERR_UNSUPPORTED. */
ns_status ns_space_build(ns_space *sp, const ns_task *t, const ns_space_opts *o, ns_error *err);
void ns_space_free(ns_space *sp);
static inline uint32_t ns_space_nstates(const ns_space *sp) { return sp->states.n; }

/* Is transition e on an optimal plan (g(s) + 1 + h*(s′) = C*)? */
bool ns_space_edge_optimal(const ns_space *sp, uint32_t s, int64_t e);

/* Draws up to k distinct optimal plans uniformly at random (a random walk on
 * the DAG weighted by path counts), seeded.  Each plan is written as
 * C* transition ids (indices into edge_op/edge_dst) into plans[i * C* …];
 * returns the number drawn (fewer than k when the DAG has fewer plans).
 * plans must hold k * C* entries.  Needs cstar >= 0. */
int ns_space_sample_plans(const ns_space *sp, int k, uint64_t seed, int64_t *plans);
/* Number of distinct optimal plans in the kept DAG (saturates at 2^53). */
double ns_space_count_plans(const ns_space *sp);

#endif
