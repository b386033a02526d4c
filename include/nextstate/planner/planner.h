/* planner.h — planning with a learned next-state model (predictor.h): the
 * first paper's neuro-symbolic decoder and searches that go further.
 *
 * Every algorithm moves only along the exact transition function γ: the
 * successors of a state are its applicable operators (ascending id = name
 * order) and the model only ranks them.  A candidate successor s′ of s is
 * scored by ns_predictor_cost(prediction made at s, φ(s′)).
 *
 *   BEAM    the paper's decoder: a beam of `width` paths (3); each step
 *           expands every path, skips successors already on that path, and
 *           keeps the `width` best by (cost summed along the path, plan
 *           text); goal test on expansion; gives up after max_steps steps
 *           (0: max(100, 10 × objects)) or when no candidate is left.  The
 *           LSTM advances along each path on the true encodings.
 *   RESTART beam search with widths width, 4·width, 16·width, … until a plan
 *           is found, the time limit, or a beam holds every candidate.
 *   SEARCH  best-first search over γ with duplicate detection: a child's
 *           key is its parent's key plus its regret — its cost minus the
 *           least cost among its siblings — so the model's first choice is
 *           free and every deviation costs what the model thinks of it
 *           (ties: deeper first, then generation order).  Complete on
 *           finite tasks given time and memory: it follows the model while
 *           the model is right and backtracks to its least regretted
 *           alternatives where it is not.
 *   GUIDED  greedy best-first search with h^FF whose preferred successors
 *           are the model's choice among FF's helpful actions (those of
 *           least cost) rather than all of them: two open lists taken in
 *           alternation, the preferred one boosted on progress (Fast
 *           Downward's scheme, search.h).  The model steers, the heuristic
 *           keeps the search complete; not for recurrent (LSTM) models,
 *           whose state depends on the path.
 *
 * Plans are sequences of operator ids; callers validate them (they are
 * γ-paths that end in a goal state by construction). */
#ifndef NEXTSTATE_PLANNER_H
#define NEXTSTATE_PLANNER_H

#include "nextstate/learn/hwl.h"
#include "nextstate/learn/predictor.h"
#include "nextstate/core/task.h"

/* NS_PLAN_LAMA: a learned heuristic (hwl) in LAMA-first's search, a third
 * heuristic beside h^FF and the landmark count (lama.h); NS_PLAN_LAMA_H: in
 * h^FF's place.  hwl models only. */
typedef enum ns_planner_algo {
    NS_PLAN_BEAM,
    NS_PLAN_RESTART,
    NS_PLAN_SEARCH,
    NS_PLAN_GUIDED,
    NS_PLAN_LAMA,
    NS_PLAN_LAMA_H
} ns_planner_algo;

typedef struct ns_planner_opts {
    ns_planner_algo algo;
    int width;           /* beam width (3) */
    int max_steps;       /* beam step cap; 0: max(100, 10 × objects) */
    double time_limit;   /* CPU seconds; <= 0: none */
    size_t memory_limit; /* bytes of search data (SEARCH, learned heuristics' searches); 0: none */
    long max_evaluated;  /* learned heuristics: stop after this many evaluations
                            (NS_INCOMPLETE); 0: none */
    const ns_predictor *prefer; /* learned heuristics, GUIDED: a next-state model (not
                            recurrent) whose choice among h^FF's helpful actions (the
                            successors nearest its prediction) is preferred; NULL: all */
    bool raw_plan;       /* the search's plan as found; false (default): its redundant
                            steps dropped (ns_plan_eliminate) */
    double fallback;     /* learned heuristics: the share of the time limit kept for the
                            classical planner (LAMA-first, no learned h), which runs when
                            the learned search ends out of time or memory; 0 (the
                            library's default): none; `plan` uses NS_PLAN_FALLBACK */
} ns_planner_opts;

/* `nextstate plan`'s and the Python binding's share of the time for the
 * classical fallback (set, not tuned): a greedy search's time to a plan is
 * heavy-tailed, so a learned search that has found none in 80 % of its time
 * seldom finds one in the rest, while a problem whose states the learned h
 * misjudges may be easy for LAMA-first. */
#define NS_PLAN_FALLBACK 0.2

typedef struct ns_planner_result {
    ns_status status;  /* NS_OK, NS_INCOMPLETE (beam gave up), NS_UNSOLVABLE (search
                          exhausted), NS_OUT_OF_TIME, NS_OUT_OF_MEMORY */
    int *plan;         /* operator ids (owned), NULL without a plan */
    int plan_len;
    long expanded;     /* states whose successors were scored */
    long predictions;  /* model steps */
    double seconds;    /* CPU */
    double model_seconds; /* CPU inside the model and the encoder */
    int width;         /* the beam width that found the plan (BEAM, RESTART) */
    int eliminated;    /* redundant steps dropped from the search's plan */
    bool classical;    /* the plan (or the failure) is the classical fallback's */
    long work;         /* learned heuristics: the searches' work (ns_search_result's total_work; the
                          fallback's included), what the run cost in steps that are the same on every
                          machine; 0 otherwise */
} ns_planner_result;

void ns_planner_opts_default(ns_planner_opts *o);
/* "beam", "restart", "search", "guided", "lama", "lama-h" -> algo; -1 if unknown. */
int ns_planner_algo_parse(const char *name);
const char *ns_planner_algo_name(ns_planner_algo a);

/* Plans for task t with model m (whose encoder must bind to t: errors such as
 * an FSF problem larger than the model's slots come back as NS_ERR_INPUT in
 * err, with r->status set to the same; algo LAMA is NS_ERR_USAGE). */
ns_status ns_plan_learned(const ns_predictor *m, const ns_task *t, const ns_planner_opts *o, ns_planner_result *r,
                          ns_error *err);
/* Plans for task t with the learned heuristic h (hwl.h), handed to ns_search
 * as an evaluator: greedy best-first search on h with h^FF's helpful
 * actions as preferred operators (two open lists, search.h); with algo
 * SEARCH, on h alone (WL-GOOSE's search); with algo LAMA, LAMA-first's lazy
 * search with h beside h^FF and the landmark count, with LAMA_H in h^FF's
 * place (lama.h).  With o->prefer (GUIDED only; otherwise NS_ERR_USAGE), the
 * preferred queue holds only the helpful actions that model o->prefer
 * predicts: a dual-queue search on h with a transition model's preferred
 * successors.
 * predictions counts h's evaluations. */
ns_status ns_plan_heuristic(const ns_hwl *h, const ns_task *t, const ns_planner_opts *o, ns_planner_result *r,
                            ns_error *err);
void ns_planner_result_free(ns_planner_result *r);

/* The algorithm learned heuristic h runs for a requested one: SEARCH,
 * GUIDED, LAMA and LAMA_H as they are; BEAM and RESTART (a next-state
 * model's decoders, and the CLI's default) give h's own choice (h->algo, made
 * by ns_hwl_learn), else LAMA — the best on
 * experiments/ipc23_validate.sh's generated problems, larger than any
 * training problem (coverage 21 of 30 against LAMA_H's 15 and GUIDED's 5). */
ns_planner_algo ns_plan_heuristic_algo(const ns_hwl *h, ns_planner_algo requested);
/* Its name in reports: "hwl" (SEARCH), "hwl+ff-preferred", "hwl+lama", "hwl-in-lama". */
const char *ns_plan_heuristic_name(const ns_hwl *h, ns_planner_algo requested);

/* The searches ns_hwl_learn tries, in order of preference within its margin:
 * LAMA, GUIDED, LAMA_H, SEARCH (GBFS on h alone: the one that solves
 * childsnack's held-out training problems, 8 of 8 against the others' 2–3,
 * and experiments/ipc23_validate.sh's larger generated ones). */
#define NS_PLAN_CHOICES 4
extern const ns_planner_algo ns_plan_choices[NS_PLAN_CHOICES];

/* How `learn` chooses a learned heuristic's algorithm (ns_hwl_learn). */
typedef struct ns_choose_opts {
    int problems;      /* held-out training problems per fold (8; 0: no choice, LAMA) */
    int folds;         /* held-out sets (2): the `problems` largest, then as many spread over
                          the larger half of the rest; each planned by models fitted without
                          it, a candidate's counts summed over them; 1: the largest only */
    int niter;         /* WL iteration counts to try (2: 2 and 4); 0: the config's only */
    int iterations[4];
    long budget;       /* evaluations per problem and candidate (100000) */
    double time_limit; /* CPU seconds per problem and candidate, a guard (30) */
    double bootstrap;  /* CPU seconds per training problem no search solved, planned
                          with the learned h (ns_hwl_bootstrap; `learn --bootstrap`: its
                          solve limit); 0: off (the default, README) */
    size_t bootstrap_memory; /* bytes of search data for those (4 GiB) */
    int jobs;          /* (problem, search) pairs planned at once, each in a child process
                          (ns_forkmap); <= 1: one after another in this process (the default) */
} ns_choose_opts;

void ns_choose_opts_default(ns_choose_opts *o);

/* Fits h on train (ns_hwl_fit) and chooses its WL iterations and search
 * (h->choice): the `problems` training problems with the most objects among
 * the problem files of train_dir (ties: the later name; at most half of the
 * problems) are held out, and with co->folds 2 a second set of as many spread
 * evenly over the larger half of the rest (when the rest has that many); for
 * each set and WL iteration count of co, a model fitted without the set's
 * plans plans it with each of ns_plan_choices within co->budget heuristic
 * evaluations (and co->time_limit CPU seconds, a guard), a candidate's solved
 * counts and evaluations summed over the sets.  The row that solves most wins,
 * then one spending 5 % fewer evaluations (an unsolved problem counts the
 * whole budget); within that margin the earlier row stays.  Then h, with the winner's iterations, is
 * fitted on every trajectory.  The training folder's largest problems are
 * the nearest to the larger problems a learned planner is for, and those no
 * search solved for training serve as well as the others.  Then, with
 * co->bootstrap > 0, the training problems no search solved are planned with
 * h (ns_hwl_bootstrap) and, when some are solved, h is learned again (choice
 * included) with their plans.  Errors: a problem that does not parse, one h
 * cannot encode. */
ns_status ns_hwl_learn(ns_hwl *h, ns_trajset *train, const char *domain_path, const char *train_dir,
                       const ns_hwl_config *c, const ns_choose_opts *co, ns_error *err);

/* Bootstrapping (Arfaee, Zilles & Holte 2011): each training problem no
 * search solved (train->unsolved_paths) planned with h and its chosen search
 * within time_limit CPU seconds and memory_limit bytes (0: none); the solved
 * ones join train as trajectories (ns_trajset_add, counted in train->added)
 * and leave the unsolved list.  Errors other than running out of time or
 * memory or finding no plan (an unreadable problem, one h cannot encode)
 * stop it. */
ns_status ns_hwl_bootstrap(const ns_hwl *h, ns_trajset *train, double time_limit, size_t memory_limit, ns_error *err);

#endif
