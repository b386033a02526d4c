/* hwl.h — a learned heuristic: h(s) = w · φ(s) + b, φ(s) the WL features
 * of the state's ILG (which holds the goal, so φ reads (state, goal)),
 * fitted by ridge regression on the cost-to-go h* of the states along the
 * training problems' optimal plans (WL-GOOSE's linear model, "Return to
 * Tradition", ICAPS 2024).  Search asks it through the evaluator interface
 * of core/heuristic.h, so it needs no search of its own.
 *
 * Fitting: rows are (φ(s_t), T − t) for every state s_t of every training
 * trajectory (unit cost; the plan's operator costs when the task has
 * them); w and b minimise Σ (w·φ + b − y)² + λ‖w‖² (b is not penalised),
 * solved exactly (Cholesky of the normal equations, in double).
 *
 * Model file: a params checkpoint (params.h: magic, version, CRC) whose meta
 * is {"format": "nextstate-hwl", "version": 1, "dim", "lambda", "encoder":
 * {…}, "train": {"rows", "problems", "rmse"[, "rank", "rank_weight", "pairs",
 * "pair_accuracy"]}[, "planner": {"algo", "problems", "budget", "candidates":
 * [{"algo", "iterations", "solved", "evaluated"}…]}]} and whose one tensor "w"
 * [dim + 1] holds w then b. */
#ifndef NEXTSTATE_HWL_H
#define NEXTSTATE_HWL_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/core/heuristic.h"
#include "nextstate/data/trajectory.h"
#include "nextstate/encode/encoder.h"

typedef struct ns_hwl_config {
    int iterations; /* WL iterations (2) */
    bool statics;   /* static atoms in the graph (true) */
    double lambda;  /* ridge penalty (1.0) */
    /* Ranking term (0: off): for each non-goal state s_t of a training plan,
       up to `rank` of its other successors s' (sampled with `seed`; those
       whose φ equals φ(s_{t+1}) left out) each add
       rank_weight · max(0, 1 − (h(s') − h(s_{t+1})))² to the loss — the
       plan's step should look at least one step better than its siblings
       (ranking-based learned heuristics: Chen, Trevizan & Thiébaux, ICAPS
       2024).  Solved exactly by the active-set Newton method of the L2 SVM
       (Chapelle 2007) on the primal normal equations, so it is left out
       (ns_hwl.rank 0) above 8,192 unknowns (D + 1).  Default 4: on held-out
       training problems (the largest of IPC 2023's training sets) it turned
       childsnack's GBFS on h from 2 of 5 solved to 4 of 5 at 40 expansions
       each, and cut sokoban's and spanner's LAMA expansions on most
       held-out problems. */
    int rank;
    double rank_weight; /* (1.0) */
    uint64_t seed;      /* sibling sampling (1) */
} ns_hwl_config;

void ns_hwl_config_init(ns_hwl_config *c);

#define NS_HWL_MAX_CAND 12 /* rows of a model's choice table */

/* The search and WL iterations chosen for a learned heuristic on held-out
 * training problems: the winner's search name ("" when no choice was made)
 * and a row per candidate tried (search, WL iterations, problems solved,
 * evaluations spent, an unsolved problem counting the whole budget, and the
 * work spent: ns_planner_result's, an unsolved problem's up to where it
 * stopped). */
typedef struct ns_hwl_choice {
    char algo[16];
    char plans[32]; /* which training plans won (ns_hwl_learn): "shortened", "raw", "+bootstrap"; "" */
    int problems; /* held-out problems */
    long budget;  /* evaluations per problem and candidate */
    int n;        /* rows */
    char cand[NS_HWL_MAX_CAND][16];
    int iter[NS_HWL_MAX_CAND];
    int solved[NS_HWL_MAX_CAND];
    long evaluated[NS_HWL_MAX_CAND];
    /* h^FF's best supporters' ties, for every search that uses h^FF (its
       helpful actions, LAMA's h^FF, the classical fallback): the last
       achiever (ns_heuristic_set_last_supporter) when LAMA-first did better
       with it on the held-out problems; ties_solved/ties_evaluated: LAMA-first's
       counts there with the first [0] and the last [1] */
    bool last_supporter;
    int ties_solved[2];
    long ties_evaluated[2];
    int time_capped; /* the runs of this table (searches and ties) that the time limit, not the budget,
                        stopped: a choice that may differ on another machine when > 0 */
    long work[NS_HWL_MAX_CAND]; /* what each row cost in counted steps, reported (0: older files) */
} ns_hwl_choice;

typedef struct ns_hwl {
    ns_encoder_spec enc; /* owned */
    int dim;             /* D */
    float *w;            /* [D + 1]: weights, then the bias */
    double lambda;
    long rows;           /* training states */
    int problems;        /* training problems */
    double rmse;         /* training root mean squared error of h */
    int rank;            /* the ranking siblings used (0: plain ridge) */
    double rank_weight;
    long pairs;          /* ranking pairs used */
    double pair_acc;     /* share of them ordered right by h (h(s') > h(s_{t+1})) */
    ns_hwl_choice choice; /* the search chosen for it when it was learned (planner.h, ns_hwl_learn) */
} ns_hwl;

/* Fits the WL vocabulary and the weights on train (every state of every
 * trajectory).  NS_ERR_INPUT when train has no state. */
ns_status ns_hwl_fit(ns_hwl *h, const ns_trajset *train, const ns_hwl_config *c, ns_error *err);
ns_status ns_hwl_save(const ns_hwl *h, const char *path, ns_error *err);
/* Appends one line (no newline) saying what h's choice table holds: the
 * search, WL iterations and h^FF's ties chosen, and every candidate's counts. */
void ns_hwl_choice_str(const ns_hwl *h, ns_buf *b);
/* Loads what ns_hwl_save wrote: a bad magic, version, checksum, format or
 * dimension is NS_ERR_INPUT naming the file. */
ns_status ns_hwl_load(ns_hwl *h, const char *path, ns_error *err);
void ns_hwl_free(ns_hwl *h);
/* True when path is a learned-heuristic file (its description says so);
 * reads at most its first 4 kB. */
bool ns_hwl_sniff(const char *path);

/* w·φ + b for the features phi [dim] of a state (ns_encoder_state with
 * h->enc), unclamped. */
double ns_hwl_predict(const ns_hwl *h, const float *phi);

/* Root mean squared error of h against h* on the states of s. */
ns_status ns_hwl_rmse(const ns_hwl *h, const ns_trajset *s, double *rmse, ns_error *err);

/* h as an evaluator for search over task t (h borrowed; it and t must
 * outlive e): h(s) = w·φ(s) + b in thousandths of a step plus 10^9 (integer
 * keys ≥ 0 that keep the model's order, negative values included), NS_H_INF
 * never.  With helpful, the preferred operators are h^FF's helpful actions
 * (one h^FF evaluation per state).  Errors: the problem cannot be encoded
 * (another domain). */
ns_status ns_hwl_evaluator(ns_evaluator *e, const ns_hwl *h, const ns_task *t, bool helpful, ns_error *err);

#endif
