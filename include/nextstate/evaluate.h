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
 * π_s(E(c)) of its pool):  (a) full = π_s(E(s)) + π_a(E(a)) + T + 128-way
 * scoring; (b) T + scoring only, one query at a time (batch 1), mean over
 * up to latency_queries test transitions.  Also, per transition: (a) in
 * batches of NS_EVAL_LAT_BATCH queries (heads and T as matrix products, as a
 * search that batches its queries runs them); (b) with T split into its
 * state-only and action-only parts cached next to the projections
 * (ns_world_tstate / ns_world_taction), at batch 1 and over every
 * applicable action of the query state at once (one search expansion: the
 * state's part reused, m predictions scored against the 128 candidates as
 * one product). */
#ifndef NEXTSTATE_EVALUATE_H
#define NEXTSTATE_EVALUATE_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/split.h"
#include "nextstate/util.h"
#include "nextstate/world.h"

#define NS_EVAL_LAT_BATCH 64

typedef struct ns_eval_opts {
    uint64_t seed;       /* random tie-breaking */
    bool acc;            /* compute Acc@k (true) */
    int latency_queries; /* 0: no latency measurement; default 200 */
    bool progress;
} ns_eval_opts;

void ns_eval_opts_init(ns_eval_opts *o);

typedef struct ns_eval_result {
    int64_t n;                  /* queries */
    int pool_size;              /* widest pool */
    double mean_pool;           /* mean candidates per query */
    double hit[3], hit_worst[3]; /* k = 1, 5, 10 */
    double mrr;                 /* mean reciprocal rank (random ties) */
    int64_t n_acc;              /* queries with ≥ 1 applicable action */
    double acc[3], acc_worst[3];
    double mean_actions;        /* applicable actions per query */
    double lat_full_us, lat_t_us; /* (a), (b) at batch 1; 0 when not measured */
    double lat_full_batch_us;     /* (a) in batches of NS_EVAL_LAT_BATCH queries, per transition */
    double lat_split_us;          /* (b) with the split T (world.h), batch 1 */
    double lat_expand_us;         /* (b) split T over every applicable action of the query state, per transition */
    double lat_expand_actions;    /* mean applicable actions per timed state */
    int64_t lat_n;
    size_t params_state, params_action, params_t, params_total;
    double seconds;
} ns_eval_result;

/* Evaluates w on refs (as (dataset, transition) pairs) with their pools
 * (refs->n × pool_size state ids of each transition's dataset). */
ns_status ns_eval_world(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs, const int64_t *pools,
                        int pool_size, const ns_eval_opts *o, ns_eval_result *r, ns_error *err);

/* Only Hit@k and the mean reciprocal rank (mrr may be NULL; no Acc, no
 * latency) — the training loop's dev check. */
ns_status ns_eval_hits(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs, const int64_t *pools,
                       int pool_size, uint64_t seed, double hit[3], double *mrr, ns_error *err);

/* Pools for a list without stored pools (the dev list), drawn as the
 * protocol draws test pools: same-problem states for extrapolation,
 * multi-domain and plan-variant, else uniform over the dataset's states;
 * truth first, distinct distractors, −1 padding.  malloc'ed n × pool_size. */
int64_t *ns_eval_make_pools(const ns_world_inputs *in, const ns_refs *refs, ns_protocol proto, int pool_size,
                            uint64_t seed);

/* The result as a JSON object (no trailing newline). */
void ns_eval_json(const ns_eval_result *r, ns_buf *b);

/* The rank rule shared by every method: with `greater` candidates scoring
 * above the truth and `equal` tying it, the random rank is greater +
 * U{0 … equal} (0-based; a hit at k when < k) and the worst-case rank is
 * greater + equal + 1 (a hit when ≤ k).  Adds to hit[0..2] / worst[0..2] for
 * k = 1, 5, 10 and, when rr is non-NULL, the reciprocal random rank. */
void ns_eval_tally(double *hit, double *worst, int64_t greater, int64_t equal, ns_rng *rng, double *rr);
/* A readable table. */
void ns_eval_table(const ns_eval_result *r, ns_buf *b);

#endif
