/* report.h — the evaluation report of a trained world model in one call
 * (`nextstate eval` only prints it).
 *
 * ns_eval_report loads the checkpoint, opens the split with the recorded
 * features (world_data.h) and scores the test list (or the dev list with
 * pools from the dev stream): the metrics of ns_eval_world; for splits over
 * several datasets each dataset's share on its own (no latency); a pool-size
 * sweep (fresh pools from seed ^ 0x7377656570 "sweep"); Hit@k by the query's
 * cost-to-go and the facts of the misses (breakdown.h); plan-level metrics
 * when the datasets hold sampled plans — on the test list the split's
 * held-out plans, every step: steps outside the test list (plan-variant: on
 * a training plan too) join the list with the pools the split draws for
 * them; and a closed-loop rollout on the list's pools or on fresh ones
 * (seed ^ NS_SEED_ROLLOUT_POOLS).  ns_report_json / ns_report_table write
 * it out. */
#ifndef NEXTSTATE_REPORT_H
#define NEXTSTATE_REPORT_H

#include <stdbool.h>
#include "nextstate/eval/breakdown.h"
#include "nextstate/eval/evaluate.h"

typedef struct ns_report_opts {
    ns_eval_opts eval;                    /* seed, Acc, latency, progress */
    const char *state_spec, *action_spec; /* NULL: as the checkpoint records */
    const char *query_spec;               /* NULL: none; else the query states' features (ns_eval_opts.query_state) */
    const char *domains_dir;              /* render templates of text-encoder features (NULL: ns_render_find's default) */
    bool dev;                             /* the dev list (else test) */
    bool bf16;                            /* bfloat16 heads and T */
    bool int8;                            /* int8 heads and T (ahead of bf16) */
    bool int4;                            /* int4 heads' wide layers, int8 the rest (ahead of int8) */
    const int *sweep;                     /* pool sizes (0: full) … */
    int nsweep;                           /* … how many (0: no sweep) */
    bool rollout;
    int rollout_pool;                     /* 0: the list's pools; else fresh pools of that size */
} ns_report_opts;

void ns_report_opts_init(ns_report_opts *o);

typedef struct ns_report {
    char *split_dir, *model;
    char *state_spec, *action_spec;
    ns_protocol protocol;
    bool dev, bf16, int8, int4;
    ns_world_kind kind;
    ns_action_rows action_rows;
    ns_eval_result r;
    char *query_spec;        /* the query states' features (NULL: the state features) */
    ns_breakdown bd;         /* Hit@k by cost-to-go, the misses' facts (breakdown.h) */
    int ndatasets;
    char **domains;          /* ndatasets names ("" / NULL when unrecorded) */
    ns_eval_result *per;     /* per dataset when ndatasets > 1 (n = 0: none of the list), else NULL */
    int nsweep;
    ns_eval_sweep *sweep;
    bool plans;              /* the datasets hold sampled plans */
    ns_eval_plan_result pr;
    bool rollout;
    ns_eval_rollout_result ro;
} ns_report;

ns_status ns_eval_report(const char *split_dir, const char *model_path, const ns_report_opts *o, ns_report *rep,
                         ns_error *err);
void ns_report_free(ns_report *rep);

/* The report as one JSON object and newline / as text tables. */
void ns_report_json(const ns_report *rep, ns_buf *b);
void ns_report_table(const ns_report *rep, ns_buf *b);

#endif
