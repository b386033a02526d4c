/* breakdown.h — where a world model's Hit@k comes from: the EmbedPlan
 * paper's analyses of cost-to-go (appendix H asks whether embeddings know
 * the distance to the goal; here, Hit@k by the query state's distance to the
 * goal) and of errors (appendix J: how many facts the top-1 retrieved state
 * differs by from the true next state).
 *
 * From the per-query outcomes of ns_eval_world_queries (evaluate.h):
 *
 * COST TO GO.  A query (s, a, s′) falls in the bucket of h*(s), the optimal
 * plan length from its state to the goal (dataset state_hstar): one bucket
 * per value 0 … NS_CTG_OPEN − 1, one for h* ≥ NS_CTG_OPEN, and "unknown" for
 * h* < 0 (a dead end, or a state outside the explored set).  Per bucket:
 * queries, Hit@1 and Hit@5 (random ties, the draws of the whole list).
 *
 * MISSES.  For each query that is not a Hit@1 (and separately for each that
 * is not a Hit@5, the paper's set), the top-1 candidate ŝ against the truth
 * s′: facts = |L(ŝ) Δ L(s′)|, the symmetric difference of their true fluent
 * literal sets — by bitset when both states belong to one problem, else by
 * the literals' PDDL text ("other problem": under interpolation and the
 * cross-dataset protocols the pool mixes problems).  0 facts: a state with
 * the same literals (a duplicate, or the same text in another problem).
 * Reported: count, how many came from another problem, mean, median and the
 * quartiles (linear interpolation, as numpy's default), and a histogram of
 * facts 0 … NS_MISS_OPEN − 1 and ≥ NS_MISS_OPEN. */
#ifndef NEXTSTATE_EVAL_BREAKDOWN_H
#define NEXTSTATE_EVAL_BREAKDOWN_H

#include <stdint.h>
#include "nextstate/eval/evaluate.h"

#define NS_CTG_OPEN 16  /* cost-to-go buckets 0 … 15, ≥ 16, unknown */
#define NS_MISS_OPEN 10 /* fact-difference bins 0 … 9, ≥ 10 */

typedef struct ns_ctg_bucket {
    int64_t n;
    double hit[2]; /* k = 1, 5 */
} ns_ctg_bucket;

typedef struct ns_miss_stats {
    int64_t n;             /* misses */
    int64_t other_problem; /* top-1 state from another problem than the truth */
    double mean, median, q1, q3; /* facts (NaN when n = 0) */
    int64_t hist[NS_MISS_OPEN + 1];
} ns_miss_stats;

typedef struct ns_breakdown {
    int64_t n;                            /* queries */
    ns_ctg_bucket ctg[NS_CTG_OPEN + 2];   /* [h] for h < NS_CTG_OPEN, [NS_CTG_OPEN] ≥, [NS_CTG_OPEN + 1] unknown */
    ns_miss_stats miss[2];                /* [0] top-1 misses, [1] Hit@5 misses */
} ns_breakdown;

/* q: refs->n outcomes of ns_eval_world_queries on the same inputs and list. */
void ns_breakdown_compute(const ns_world_inputs *in, const ns_refs *refs, const ns_eval_query *q, ns_breakdown *b);

/* The literals in which two states differ, |L(a) Δ L(b)|: states (ids of
 * datasets da, db) by bitset when they share a problem, else by literal text;
 * *other set to whether they do not. */
int64_t ns_breakdown_fact_diff(const ns_dataset *da, int64_t a, const ns_dataset *db, int64_t b, bool *other);

/* {"cost_to_go": [{"h": 0, "h_max": 0, "n", "hit@1", "hit@5"}, …, {"h": 16, "h_max": null, …},
 *                 {"h": null, "h_max": null, …} (unknown)]   — non-empty buckets only,
 *  "misses": {"top1": {"n", "other_problem", "mean", "median", "q1", "q3",
 *                      "hist": [{"facts": 0, "facts_max": 0, "n"}, …, {"facts": 10, "facts_max": null, "n"}]},
 *             "top5": {…}}}  — written as two members (no braces) after a comma by the caller. */
void ns_breakdown_json(const ns_breakdown *b, ns_buf *out);
/* Two readable tables. */
void ns_breakdown_table(const ns_breakdown *b, ns_buf *out);

#endif
