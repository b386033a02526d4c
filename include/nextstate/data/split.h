/* split.h — evaluation splits of both papers and candidate pools.
 *
 * A split refers to transitions of one or more datasets by (dataset index,
 * transition id) pairs and holds train / dev / test lists.  The dev list is
 * always carved from training data, for model selection (the EmbedPlan code
 * selected on the test set; we do not).
 *
 * EmbedPlan protocols (paper appendix A):
 *   interpolation  transitions of one dataset split uniformly, test_frac to test
 *   plan-variant   per problem, its sampled optimal plans are split; train = the
 *                  transitions of training plans, test = the transitions of held-out
 *                  plans that lie on no training plan; problems with fewer than two
 *                  distinct plans are left out
 *   extrapolation  problems split; all transitions of a problem go to one side
 *   multi-domain   the extrapolation split of every dataset, pooled
 *   cross-domain   train on dataset 0, test on every transition of dataset 1
 *   leave-one-out  train on every dataset but the last, test on the last
 * Dev: extrapolation-like protocols hold out training problems for dev (when
 * there are at least three training problems, else dev_frac of the training
 * transitions); the others hold out dev_frac of the training transitions.
 *
 * Candidate pools: for each test transition (s, a, s′), pool_size states with
 * the true successor s′ first, then distinct distractors drawn with the seed:
 *   interpolation, cross-domain, leave-one-out: uniform over the test dataset's
 *     states, truth excluded, without replacement (with_replacement: as the
 *     original code did, duplicates allowed, truth still excluded);
 *   extrapolation, multi-domain: uniform over the states of the same problem;
 *   plan-variant: successors along alternative optimal plans — states of the same
 *     problem at the same depth g(s′) on the optimal-plan DAG (g + h* = C*) —
 *     then, when those run out, other states of the same problem.
 * When fewer distinct candidates exist than pool_size - 1, the pool is shorter
 * and the rest of the row is -1.  pool_size 0 means no pools (evaluate against
 * every observed state instead).  with_replacement applies to the uniform
 * pools (every protocol but plan-variant, which rejects it).
 *
 * Sizes: test and dev counts are round(frac × n), kept within [1, n-1] so
 * neither side is empty.  Problems without transitions take no part in
 * problem-level splits; the problem split of dataset d under multi-domain is
 * the extrapolation split of d alone with the same seed.  Every random choice
 * comes from the seed: the split from one stream per dataset, each pool from
 * a stream keyed by (seed, dataset, transition), so a test transition's pool
 * does not depend on which other transitions are in the test set.  Lists are
 * sorted by (dataset, transition); pools follow the test list's order. */
#ifndef NEXTSTATE_SPLIT_H
#define NEXTSTATE_SPLIT_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/data/dataset.h"

typedef enum ns_protocol {
    NS_PROTO_INTERPOLATION,
    NS_PROTO_PLAN_VARIANT,
    NS_PROTO_EXTRAPOLATION,
    NS_PROTO_MULTI_DOMAIN,
    NS_PROTO_CROSS_DOMAIN,
    NS_PROTO_LEAVE_ONE_OUT
} ns_protocol;

typedef struct ns_split_opts {
    ns_protocol protocol;
    double test_frac; /* 0: 0.2; else in (0, 1); unused by cross-domain and leave-one-out */
    double dev_frac;  /* 0: 0.1; negative: no dev list; else < 1 */
    int pool_size;    /* 0: no pools; the papers use 128 */
    bool with_replacement;
    uint64_t seed;
} ns_split_opts;

/* A list of (dataset, transition) references: ref[2*i], ref[2*i+1]. */
typedef struct ns_refs {
    int64_t *ref;
    int64_t n;
} ns_refs;

/* What a split records about each dataset it refers to. */
typedef struct ns_split_source {
    char *dir;    /* as given to ns_split_save / read by ns_split_load; NULL after ns_split_make */
    char *domain; /* the dataset's domain name */
    int64_t nproblems, nstates, ntransitions;
} ns_split_source;

typedef struct ns_split {
    ns_protocol protocol;
    uint64_t seed;
    double test_frac, dev_frac; /* as used: defaults resolved, dev_frac < 0 when there is no dev list */
    bool with_replacement;
    int ndatasets;
    ns_split_source *sources; /* ndatasets entries */
    ns_refs train, dev, test;
    int pool_size;
    int64_t *pools; /* test.n × pool_size state ids of the test transition's dataset; truth first; -1 padding */
} ns_split;

/* Builds a split over datasets ds[0 … n).  Single-dataset protocols need
 * n == 1, cross-domain n == 2, leave-one-out and multi-domain n ≥ 2. */
ns_status ns_split_make(ns_split *sp, const ns_dataset *const *ds, int n, const ns_split_opts *o, ns_error *err);
void ns_split_free(ns_split *sp);

/* Writes split.json + train.npy, dev.npy, test.npy (i64 [n, 2]) and
 * pools.npy (i64 [ntest, pool_size]) into dir (created if missing), arrays
 * first, split.json last, each atomically.  dataset_dirs (ndatasets entries,
 * recorded as given; NULL: the sources' dirs) are recorded. */
ns_status ns_split_save(const ns_split *sp, const char *const *dataset_dirs, const char *dir, ns_error *err);
/* Reads a split back (checksums, shapes and id ranges checked). */
ns_status ns_split_load(ns_split *sp, const char *dir, ns_error *err);
/* Checks that a split fits datasets ds[0 … n): same count, domains and sizes,
 * and every pool's first entry is its test transition's next state. */
ns_status ns_split_check(const ns_split *sp, const ns_dataset *const *ds, int n, ns_error *err);

/* A split read from disk with the datasets it refers to, loaded (in its
 * order) and checked against it: one struct owning both. */
typedef struct ns_split_data {
    ns_split split;
    int ndatasets;          /* = split.ndatasets once opened */
    ns_dataset *dss;        /* the datasets */
    const ns_dataset **ds;  /* &dss[0 … ndatasets) */
} ns_split_data;

/* ns_split_load + ns_dataset_load of each source + ns_split_check; on error
 * nothing is left to free. */
ns_status ns_split_open(ns_split_data *sd, const char *dir, ns_error *err);
void ns_split_data_free(ns_split_data *sd);

/* The plans a split holds out, as (dataset, plan id) pairs: under
 * plan-variant the distinct sampled plans it held out of each problem
 * (recomputed from the datasets and the split's seed, so a split on disk
 * needs no extra file) — steps of them that also lie on a training plan are
 * not in the test list; under the other protocols the sampled plans whose
 * every transition is in the test list.  out->ref is malloc'ed. */
ns_status ns_split_test_plans(const ns_split *sp, const ns_dataset *const *ds, int n, ns_refs *out, ns_error *err);
/* The pools the split draws for any transitions (refs->n × pool_size, malloc'ed; NULL when pool_size
 * is 0 or refs is empty): the same rows as the stored pools for test transitions — each pool comes
 * from a stream keyed by (seed, dataset, transition). */
int64_t *ns_split_pools_for(const ns_split *sp, const ns_dataset *const *ds, const ns_refs *refs);
/* Pools of pool_size drawn by the split's rules (protocol, replacement, plan-variant's same-depth
 * groups) from streams keyed by (seed, dataset, transition): the dev list's, a rollout's — so they
 * are as hard as the test pools.  NULL when pool_size ≤ 0 or refs is empty. */
/* Seed offsets of the pool streams drawn from a split (xor'ed into the run's
 * seed): dev pools (training's dev check, eval's dev-list pools), rollout pools. */
#define NS_SEED_DEV_POOLS 0x646576ULL    /* "dev" */
#define NS_SEED_ROLLOUT_POOLS 0x726f6c6cULL /* "roll" */

int64_t *ns_split_pools_draw(const ns_split *sp, const ns_dataset *const *ds, const ns_refs *refs, int pool_size,
                             uint64_t seed);

/* "interpolation", "plan-variant", … <-> protocol; -1 when unknown. */
int ns_protocol_parse(const char *name);
const char *ns_protocol_name(ns_protocol p);

/* The first paper's size splits: the problem files of ROOT/{train,
 * validation,test-interpolation,test-extrapolation}, each sorted by name.
 * names[k] receives a malloc'ed array of n[k] malloc'ed paths. */
ns_status ns_size_split_read(const char *root, char **names[4], int n[4], ns_error *err);
void ns_size_split_free(char **names[4], int n[4]);
/* "train", "validation", "test-interpolation", "test-extrapolation" for k = 0 … 3. */
const char *ns_size_split_name(int k);

#endif
