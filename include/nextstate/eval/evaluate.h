/* evaluate.h — retrieval metrics of a world model (world.h) on a split.
 *
 * Hit@k (k = 1, 5, 10): for each test transition (s, a, s′) and its pool
 * (truth first, −1 padding), candidates c are scored by
 * cos(ĥ(s′), π_s(E(c))).  Two tie rules:
 *   random  rank = #{c : score > truth} + U{0 … #{other c : score = truth}}
 *           (seeded), hit when rank < k
 *   worst   rank = #{c : score ≥ truth} (the truth included; the original
 *           code's rule), hit when rank ≤ k
 * A pool may hold the truth's state id again (pools drawn with replacement
 * exclude it, but other states may share its features): those copies tie.
 * Acc@k: among the predictions T(h_s, h_a′) of every action a′ applicable in
 * s (dataset applicable_ops), the true action's prediction is among the k
 * closest (cosine) to π_s(E(s′)) — random and worst ties as above.
 * Latency per transition with cached candidate projections (normalised
 * π_s(E(c)), one row per state in a table; each pool scored through its
 * row indices):  (a) full = π_s(E(s)) + π_a(E(a)) + T + 128-way
 * scoring; (b) T + scoring only, one query at a time (batch 1), mean over
 * up to latency_queries test transitions.  Also, per transition: (a) in
 * batches of NS_EVAL_LAT_BATCH queries (heads and T as matrix products, as a
 * search that batches its queries runs them); (b) with T split into its
 * state-only and action-only parts cached next to the projections
 * (ns_world_tstate / ns_world_taction), at batch 1 and over every
 * applicable action of the query state at once (one search expansion: the
 * state's part reused, m predictions scored against the 128 candidates).
 * Each measurement runs in a loop of its own (a search repeats one of them).
 * (a) at batch 1 is one ns_world_predict1 call.
 * INT8 AND INT4 MODELS (ns_world_set_int8, _int4) score candidates from an int8 table: the
 * normalised projections quantised per row (nn.h ns_i8_table_pack), the
 * prediction as T gives it quantised as a layer's input row, exact integer
 * sums, scaled by 1/|ĥ| (ns_i8_table_dots) — for Hit@k, MRR, the top-1
 * candidate and the latency alike (Acc@k, the full pool of the sweep and the
 * rollout's inputs stay float; the rollout ranks its normalised predictions
 * against the same table).  A quarter of the bytes of the float table, so
 * a batch-1 query's candidates are 16 KB of gathered rows.
 *
 * POOL-SIZE SWEEP (ns_eval_pool_sweep; paper appendix B.4).  For each size
 * N, fresh pools for the list drawn by the split's rules
 * (ns_split_pools_draw with the given pool seed; N larger than every query's
 * candidate set is clamped, which leaves the pools unchanged: they hold every
 * candidate then), ranked as above without Acc or latency — so N = the
 * split's pool size with the same draw is exactly ns_eval_world on those
 * pools.  N = 0 stands for the FULL pool: every candidate the protocol
 * allows, without sampling — every state of the query's dataset for
 * interpolation, cross-domain and leave-one-out, every state of the query's
 * problem for extrapolation, multi-domain and plan-variant (the truth once;
 * other states with the truth's features tie).  The normalised projections
 * of those states are computed once and the scores come from one matrix
 * product per group of queries sharing a candidate range.
 *
 * PLAN-LEVEL, TEACHER-FORCED (ns_eval_plans; appendix D.7).  The sampled
 * optimal plans of the list's datasets (dataset plan arrays) whose every
 * transition is in the list (`nextstate eval` on the test list: the split's
 * held-out plans, ns_split_test_plans — under plan-variant every step of
 * them, those on a training plan too, with the pools the split draws for
 * them); each step is scored as above with the pool of
 * its transition's first occurrence in the list, the true state as input.
 *   steps          Σ plan lengths; mean_len = steps / plans
 *   hit[k]         per-step Hit@1, Hit@5 over all steps (random ties; steps
 *                  tallied plan by plan in order, seeded as ns_eval_world)
 *   plan_mean      mean over plans of the plan's per-step Hit@5
 *   exact          fraction of plans whose every step is a Hit@5
 * so exact ≤ plan_mean ≤ 1; with no such plan every metric is NaN (null in
 * JSON).
 *
 * CLOSED-LOOP ROLLOUT (ns_eval_rollout; section 4.1, appendix D.8).
 * Trajectories are the maximal runs of consecutive steps of a sampled plan
 * whose transitions are all in the list (length ≥ 1; runs with the same
 * transition sequence counted once).  Step d of a run (depth d, 1-based)
 * predicts ĥ_d = T(x_d, π_a(E(a_d))) and ranks it in the step transition's
 * pool (first occurrence in the list).  Regimes differ only in x_d for d ≥ 2
 * (x_1 = π_s(E(s_1)) in all three):
 *   teacher    x_d = π_s(E(s_d)), the true state
 *   snapped    x_d = π_s(E(ŝ)), ŝ the top-1 candidate retrieved at step d − 1
 *              by this regime (right or wrong; ties broken at random, seeded)
 *   unsnapped  x_d = ĥ_{d−1} of this regime, the raw (unnormalised) latent
 * so the regimes coincide at depth 1 (they share the tie-breaking draws).
 * Reported per depth and aggregated over all steps and over depth ≥ 2:
 * n (steps), Hit@1 and Hit@5 per regime (random ties); retention = snapped ÷
 * teacher and unsnapped ÷ teacher Hit@1 (NaN when teacher is 0); drift = mean
 * over steps of max_c cos(ĥ_d(unsnapped), π_s(E(c))) over the step's pool.
 * The action input is always the true action's row; with state-action rows
 * that is the true (s_d, a_d) pair's row, i.e. the action encoding still sees
 * the true state — closed-loop only in the state input. */
#ifndef NEXTSTATE_EVALUATE_H
#define NEXTSTATE_EVALUATE_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/data/split.h"
#include "nextstate/util/util.h"
#include "nextstate/learn/world.h"

#define NS_EVAL_LAT_BATCH 64

typedef struct ns_eval_opts {
    uint64_t seed;       /* random tie-breaking */
    bool acc;            /* compute Acc@k (true) */
    int latency_queries; /* 0: no latency measurement; default 200 */
    bool progress;
    /* NULL: the query state's input is its row of the inputs' state
     * features, as every candidate's.  Else the query state's input (π_s of
     * the s of each (s, a, s′)) comes from these features — same rows and
     * width, standardised alike — while the candidates keep the inputs'
     * features: e.g. the same states rendered with their facts in another
     * order (paper appendix N).  Latency measurements ignore it. */
    const struct ns_features *query_state;
} ns_eval_opts;

void ns_eval_opts_init(ns_eval_opts *o);

typedef struct ns_eval_result {
    int64_t n;                  /* queries */
    int pool_size;              /* widest pool */
    double mean_pool;           /* mean candidates per query */
    double hit[3], hit_worst[3]; /* k = 1, 5, 10 */
    double mrr;                 /* mean reciprocal rank (random ties) */
    /* The best any model fed these features can do: a candidate whose state
     * features equal the truth's (a feature twin) always ties with it, so
     * with t twins a perfect ranking still hits @k with probability
     * min(1, k/(t+1)) (random ties) or iff t+1 ≤ k (worst case). */
    double ceil[3], ceil_worst[3];
    /* What a ranking that ignores the prediction gets: the mean over
     * queries of min(1, k / candidates) — the floor the Hit@k digits are
     * read against (pools shorter than pool_size raise it). */
    double chance[3];
    double twin_queries;        /* fraction of queries whose pool holds a twin */
    int64_t n_acc;              /* queries with ≥ 1 applicable action */
    double acc[3], acc_worst[3];
    double mean_actions;        /* applicable actions per query */
    double lat_full_us, lat_t_us; /* (a), (b) at batch 1; 0 when not measured */
    double lat_full_batch_us;     /* (a) in batches of NS_EVAL_LAT_BATCH queries, per transition */
    double lat_split_us;          /* (b) with the split T (world.h), batch 1 */
    double lat_expand_us;         /* (b) split T over every applicable action of the query state, per transition */
    double lat_expand_actions;    /* mean applicable actions per timed state */
    /* (a) at batch 1 and in batches over the fastest pass over the queries (each measurement repeats its
     * pass up to 50 times): what a core of its own gives, where a shared core's other tenants raise the mean */
    double lat_full_best_us, lat_full_batch_best_us;
    int64_t lat_n;
    size_t params_state, params_action, params_t, params_total;
    double seconds;
} ns_eval_result;

/* Evaluates w on refs (as (dataset, transition) pairs) with their pools
 * (refs->n × pool_size state ids of each transition's dataset). */
ns_status ns_eval_world(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs, const int64_t *pools,
                        int pool_size, const ns_eval_opts *o, ns_eval_result *r, ns_error *err);

/* One query's outcome (ns_eval_world_queries): its Hit bits (bit k of
 * 1, 5, 10 = 0, 1, 2 under random ties; 8 << k worst case) and, when it is
 * not a Hit@1 (random ties), the top-1 candidate — the best-scoring pool
 * state other than the truth, ties broken at random by a generator seeded
 * from the seed and the query's index (so the Hit@k digits are those of
 * ns_eval_world) — as a
 * global state row (state_base[d] + id); −1 for a Hit@1 or a pool of the
 * truth alone. */
typedef struct ns_eval_query {
    uint8_t bits;
    int64_t top_row;
} ns_eval_query;

/* ns_eval_world that also fills q[0 … refs->n) (breakdown.h reads it). */
ns_status ns_eval_world_queries(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs,
                                const int64_t *pools, int pool_size, const ns_eval_opts *o, ns_eval_result *r,
                                ns_eval_query *q, ns_error *err);

/* Only Hit@k and the mean reciprocal rank (mrr may be NULL; no Acc, no
 * latency) — the training loop's dev check. */
ns_status ns_eval_hits(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs, const int64_t *pools,
                       int pool_size, uint64_t seed, double hit[3], double *mrr, ns_error *err);

/* ns_train_opts_init with ns_eval_hits as the dev scorer: the options every
 * caller of ns_world_train starts from. */
void ns_eval_train_opts_init(ns_train_opts *o);

/* The result as a JSON object (no trailing newline). */
void ns_eval_json(const ns_eval_result *r, ns_buf *b);

/* ---- pool-size sweep ---- */
typedef struct ns_eval_sweep {
    int pool;                    /* N as requested; 0: full */
    int64_t n;                   /* queries */
    double mean_pool;            /* mean candidates per query */
    double hit[3], hit_worst[3]; /* k = 1, 5, 10 */
    double mrr;
} ns_eval_sweep;

/* One row per size in sizes[0 … nsizes) (0: full) into out[]; pools drawn
 * with pool_seed, ties broken with seed. */
ns_status ns_eval_pool_sweep(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs, const ns_split *sp,
                             const int *sizes, int nsizes, uint64_t pool_seed, uint64_t seed, ns_eval_sweep *out,
                             ns_error *err);
/* [{"pool": N | "full", "n", "mean_pool", "hit": [3], "hit_worst": [3], "mrr"}, …] and a table. */
void ns_eval_sweep_json(const ns_eval_sweep *s, int n, ns_buf *b);
void ns_eval_sweep_table(const ns_eval_sweep *s, int n, ns_buf *b);

/* ---- plan-level (teacher-forced) ---- */
typedef struct ns_eval_plan_result {
    int64_t n, steps;            /* plans wholly in the list; their steps */
    double mean_len;
    double hit[2], hit_worst[2]; /* per step, k = 1, 5 */
    double plan_mean;            /* mean over plans of per-step Hit@5 */
    double exact;                /* plans with Hit@5 at every step */
} ns_eval_plan_result;

/* refs with their pools (refs->n × pool_size, as ns_eval_world); plans
 * (NULL: every sampled plan) restricts the plans considered to these
 * (dataset, plan id) pairs — e.g. a split's held-out plans
 * (ns_split_test_plans), with refs extended by their steps outside the test
 * list and the pools the split draws for them (ns_split_pools_for). */
ns_status ns_eval_plans(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs, const int64_t *pools,
                        int pool_size, const ns_refs *plans, uint64_t seed, ns_eval_plan_result *r, ns_error *err);
/* {"n", "steps", "mean_len", "hit@1", "hit@5", "hit@1_worst", "hit@5_worst", "plan_mean_hit@5",
 * "exact_hit@5"} (null metrics when n = 0) and a table. */
void ns_eval_plans_json(const ns_eval_plan_result *r, ns_buf *b);
void ns_eval_plans_table(const ns_eval_plan_result *r, ns_buf *b);

/* ---- closed-loop rollout ---- */
enum { NS_ROLL_TEACHER, NS_ROLL_SNAPPED, NS_ROLL_UNSNAPPED, NS_ROLL_REGIMES };

typedef struct ns_eval_rollout_depth {
    int64_t n;                      /* steps (= runs reaching this depth, for a depth row) */
    double hit[NS_ROLL_REGIMES][2]; /* k = 1, 5 */
    double drift;                   /* mean max cosine of the unsnapped prediction to its pool */
} ns_eval_rollout_depth;

typedef struct ns_eval_rollout_result {
    int64_t runs, steps;
    double mean_len;
    int pool_size;                /* the pools' width (as given) */
    int depths;                   /* longest run */
    ns_eval_rollout_depth *depth; /* depths entries: depth d at [d − 1] (malloc'ed) */
    ns_eval_rollout_depth all, deep; /* every step; steps at depth ≥ 2 */
    double retention[2], retention_deep[2]; /* snapped, unsnapped ÷ teacher Hit@1 (all; deep) */
} ns_eval_rollout_result;

void ns_eval_rollout_free(ns_eval_rollout_result *r);
/* refs with their pools (refs->n × pool_size: the split's, or fresh ones from
 * ns_split_pools_draw). */
ns_status ns_eval_rollout(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs, const int64_t *pools,
                          int pool_size, uint64_t seed, ns_eval_rollout_result *r, ns_error *err);
/* {"pool_size", "runs", "steps", "mean_len", "regimes": ["teacher", "snapped", "unsnapped"],
 *  "depths": [{"depth", "n", "teacher": [h1, h5], "snapped": […], "unsnapped": […], "drift"}, …],
 *  "all": {…}, "deep": {…}, "retention": {"snapped", "unsnapped", "snapped_deep", "unsnapped_deep"}}
 * and a table by depth. */
void ns_eval_rollout_json(const ns_eval_rollout_result *r, ns_buf *b);
void ns_eval_rollout_table(const ns_eval_rollout_result *r, ns_buf *b);

/* The rank rule shared by every method: with `greater` candidates scoring
 * above the truth and `equal` tying it, the random rank is greater +
 * U{0 … equal} (0-based; a hit at k when < k) and the worst-case rank is
 * greater + equal + 1 (a hit when ≤ k).  Adds to hit[0..2] / worst[0..2] for
 * k = 1, 5, 10 and, when rr is non-NULL, the reciprocal random rank. */
void ns_eval_tally(double *hit, double *worst, int64_t greater, int64_t equal, ns_rng *rng, double *rr);
/* A readable table. */
void ns_eval_table(const ns_eval_result *r, ns_buf *b);

#endif
