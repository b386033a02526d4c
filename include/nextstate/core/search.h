/* search.h — classical search over a grounded task:
 * breadth-first search (optimal for unit cost), A* (optimal with an
 * admissible heuristic), greedy best-first search (satisficing).
 * Duplicate detection through the state registry; ties broken
 * deterministically (FIFO among equal keys), so two runs give the same plan.
 * BFS and A* generate successors in operator-id order; GBFS, lazy search and
 * LAMA in a fixed order modelled on Fast Downward's (succorder.h: more
 * preconditions first), which decides their ties. */
#ifndef NEXTSTATE_SEARCH_H
#define NEXTSTATE_SEARCH_H

#include <stddef.h>
#include "nextstate/core/heuristic.h"
#include "nextstate/core/task.h"

/* NS_SEARCH_LAZY: greedy best-first search with deferred evaluation (Fast
 * Downward's lazy_greedy([h], preferred=[h]), LAMA's search): open entries
 * are (parent, operator) pairs keyed by the parent's h; a successor is
 * generated and evaluated only when taken; with preferred operators, those
 * reached by one also enter a second list, taken in alternation and boosted
 * by 1000 on every new best h.  h and the preferred operators come from one
 * evaluation. */
/* NS_SEARCH_LAMA: LAMA-first, lazy GBFS over h^FF and the landmark count
 * h^LM with four open lists (lama.h); `heuristic` is not used; an
 * `evaluator` takes h^FF's place. */
typedef enum ns_search_algo { NS_SEARCH_BFS, NS_SEARCH_ASTAR, NS_SEARCH_GBFS, NS_SEARCH_LAZY, NS_SEARCH_LAMA } ns_search_algo;

typedef struct ns_search_opts {
    ns_search_algo algo;
    ns_heuristic_kind heuristic; /* ignored by BFS, and when evaluator is set */
    /* A heuristic object (heuristic.h) used instead of `heuristic` when not
       NULL (borrowed: the caller frees it); e.g. a learned heuristic. */
    const ns_evaluator *evaluator;
    /* LAMA only: a further heuristic (borrowed) with an open list and a
       preferred-only list of its own beside h^FF's and h^LM's; its new best
       values count as progress; NULL: none. */
    const ns_evaluator *extra;
    double time_limit;           /* CPU seconds of the search; <= 0: none */
    long max_evaluated;          /* stop with NS_INCOMPLETE once this many heuristic
                                    evaluations are made (checked before each
                                    expansion); 0: none — a budget that, unlike
                                    time, gives the same result on every run */
    long max_work;               /* the same for the heuristic's work (ns_evaluator's
                                    work; not counted by evaluators without it):
                                    a budget that, like max_evaluated, does not
                                    depend on the CPU, but that tracks its time
                                    across tasks of different sizes; 0: none */
    size_t memory_limit;         /* bytes of search data; 0: none */
    bool prune_irrelevant;       /* skip operators irrelevant to the goal
                                    (ns_task_relevant_ops); default true */
    bool preferred;              /* GBFS with h^FF (or an evaluator; LAZY with any
                                    evaluator giving preferred operators): successors reached by helpful
                                    actions also enter a second open list, taken
                                    in alternation and boosted by 1000 on every
                                    new best h (Fast Downward's preferred
                                    operators); default true */
    /* GBFS/LAZY with preferred operators: a filter on FF's helpful actions (e.g. a
       learned model's choice among them).  Given state s and its helpful
       actions ops[0..nops) (ascending, nops ≥ 1), writes the preferred ones
       (a subsequence, ascending; out may alias ops) and returns their
       number.  NULL: every helpful action is preferred. */
    int (*preferred_fn)(void *ctx, const ns_word *s, const int *ops, int nops, int *out);
    void *preferred_ctx;
    /* Eager GBFS with preferred operators: bytes for keeping every evaluated
       state's preferred operators from the evaluation that computed its h,
       so that its expansion needs no second evaluation (search.c).  States
       evaluated once it is full are evaluated again at expansion — the same
       search, the evaluator being a function of the state — and the memory
       limit counts what is kept.  0: keep none; default SIZE_MAX (no cap of
       its own). */
    size_t pref_cache;
    /* h^FF built by the search itself (heuristic ff, LAMA's): best supporters'
       ties to the last achiever reached (ns_heuristic_set_last_supporter);
       default false */
    bool last_supporter;
} ns_search_opts;

typedef struct ns_search_result {
    ns_status status; /* NS_OK, NS_UNSOLVABLE, NS_INCOMPLETE, NS_OUT_OF_TIME, NS_OUT_OF_MEMORY */
    int *plan;        /* operator ids (owned; NULL when no plan) */
    int plan_len;
    long plan_cost;
    long expanded, generated, evaluated;
    long work;  /* the heuristic's work (ns_evaluator's work; 0 when not counted) */
    /* The whole search's work in the same units: every evaluator's (LAMA's
       extra one too), the landmark count's, and the search's own handling of
       states (NS_SEARCH_STATE_WORK and a step per word for each state made,
       NS_SEARCH_ENTRY_WORK for each lazy open-list entry) and its set-up
       (ns_search_setup_work; LAMA's landmark graph).  Roughly
       proportional to CPU time, but the same on every machine: what one
       search costs against another (the learned planner's choice table
       reports it, planner.c). */
    long total_work;
    int init_h; /* heuristic value of the initial state (-1 for BFS) */
    double seconds;
} ns_search_result;

#define NS_SEARCH_STATE_WORK 60 /* a state's successor generation, hashing, registry and open-list entry */
#define NS_SEARCH_ENTRY_WORK 10 /* a lazy search's (parent, operator) entry in its open lists */
#define NS_SEARCH_SETUP_WORK 4  /* per atom and operator and their every precondition and effect */

/* The work of setting a search up on t (its successor generator and order,
 * the relaxed task of its heuristics): NS_SEARCH_SETUP_WORK per atom,
 * operator, precondition and effect; part of ns_search_result's total_work. */
long ns_search_setup_work(const ns_task *t);

void ns_search_opts_default(ns_search_opts *o);
/* Runs the search; the returned status is also stored in r->status. */
ns_status ns_search(const ns_task *t, const ns_search_opts *o, ns_search_result *r);
void ns_search_result_free(ns_search_result *r);

/* "bfs", "astar", "gbfs", "lazy", "lama" -> algo; -1 if unknown. */
int ns_search_algo_parse(const char *name);
const char *ns_search_algo_name(ns_search_algo a);

#endif
