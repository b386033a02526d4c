/* split.c — evaluation splits (EmbedPlan's six protocols, the first paper's
 * size splits) and candidate pools.
 *
 * A split is computed as one side mark per transition of every dataset
 * (none / train / dev / test); the reference lists are read off those marks in
 * (dataset, transition) order.  Pools are drawn per test transition from a
 * stream keyed by (seed, dataset, transition) in O(pool) time: rejection
 * against a small hash set while candidates are plentiful, a partial
 * Fisher–Yates over the enumerated remainder when they are scarce. */
#include "nextstate/data/split.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/util/json.h"

#define NS_SPLIT_FORMAT "nextstate-split"
#define NS_SPLIT_VERSION 2 /* 2: split.json sealed (crc32); 1 still read */

enum { SIDE_NONE, SIDE_TRAIN, SIDE_DEV, SIDE_TEST };

#define TAG_SPLIT 0x73706c6974ULL /* "split" */
#define TAG_POOL 0x706f6f6cULL    /* "pool" */

/* ---- names ------------------------------------------------------------ */

static const char *const PROTO_NAMES[] = {"interpolation", "plan-variant",  "extrapolation",
                                          "multi-domain",  "cross-domain", "leave-one-out"};
#define NPROTO ((int)(sizeof PROTO_NAMES / sizeof PROTO_NAMES[0]))

int ns_protocol_parse(const char *name)
{
    static const struct {
        const char *alias;
        int proto;
    } aliases[] = {{"interp", NS_PROTO_INTERPOLATION}, {"plan", NS_PROTO_PLAN_VARIANT},
                   {"extrap", NS_PROTO_EXTRAPOLATION}, {"multi", NS_PROTO_MULTI_DOMAIN},
                   {"cross", NS_PROTO_CROSS_DOMAIN},   {"loo", NS_PROTO_LEAVE_ONE_OUT}};
    if (!name) return -1;
    for (int i = 0; i < NPROTO; i++)
        if (!strcmp(name, PROTO_NAMES[i])) return i;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(name, aliases[i].alias)) return aliases[i].proto;
    return -1;
}

const char *ns_protocol_name(ns_protocol p) { return (unsigned)p < (unsigned)NPROTO ? PROTO_NAMES[p] : "unknown"; }

/* ---- randomness ------------------------------------------------------- */

static uint64_t stream_seed(uint64_t seed, uint64_t tag, uint64_t a, uint64_t b)
{
    uint64_t h = ns_hash_mix(seed + tag * 0x9e3779b97f4a7c15ULL);
    h = ns_hash_mix(h ^ (a + 1) * 0xbf58476d1ce4e5b9ULL);
    return ns_hash_mix(h ^ (b + 1) * 0x94d049bb133111ebULL);
}

/* Uniform in [0, n) without bias; for n < 2^32 by a multiply (Lemire's
 * method) instead of ns_rng_below's two divisions — pools draw ~10^8 of these. */
static uint64_t below(ns_rng *r, uint64_t n)
{
    if (n > UINT32_MAX) return ns_rng_below(r, n);
    uint64_t m = (ns_rng_next(r) >> 32) * n;
    uint32_t l = (uint32_t)m;
    if (l < (uint32_t)n) {
        uint32_t t = (uint32_t)(0u - (uint32_t)n) % (uint32_t)n;
        while (l < t) {
            m = (ns_rng_next(r) >> 32) * n;
            l = (uint32_t)m;
        }
    }
    return m >> 32;
}

static void shuffle_i64(ns_rng *r, int64_t *a, int64_t n)
{
    for (int64_t i = n; i > 1; i--) {
        int64_t j = (int64_t)below(r, (uint64_t)i);
        int64_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/* round(f × n) kept within [1, n-1]; 0 when n < 2. */
static int64_t frac_count(double f, int64_t n)
{
    if (n < 2) return 0;
    int64_t k = llround(f * (double)n);
    return k < 1 ? 1 : k > n - 1 ? n - 1 : k;
}

static int64_t dev_count(double dev_frac, int64_t n) { return dev_frac < 0 ? 0 : frac_count(dev_frac, n); }

/* ---- side marks --------------------------------------------------------- */

typedef struct sides {
    int n;
    uint8_t **s;  /* s[d][t] */
    int64_t *len; /* transitions of dataset d */
} sides;

static void sides_init(sides *sd, const ns_dataset *const *ds, int n)
{
    sd->n = n;
    sd->s = ns_xcalloc((size_t)n, sizeof(uint8_t *));
    sd->len = ns_xcalloc((size_t)n, sizeof(int64_t));
    for (int d = 0; d < n; d++) {
        sd->len[d] = ns_dataset_ntransitions(ds[d]);
        sd->s[d] = ns_xcalloc((size_t)sd->len[d] + 1, 1);
    }
}

static void sides_free(sides *sd)
{
    for (int d = 0; d < sd->n; d++) free(sd->s[d]);
    free(sd->s);
    free(sd->len);
}

static int64_t sides_count(const sides *sd, uint8_t side)
{
    int64_t c = 0;
    for (int d = 0; d < sd->n; d++)
        for (int64_t t = 0; t < sd->len[d]; t++) c += sd->s[d][t] == side;
    return c;
}

/* Moves `count` of the transitions marked `from` (those of dataset `only`,
 * or of every dataset when only < 0) to `to`, each subset equally likely
 * (selection sampling: one pass, no extra memory). */
static void carve(sides *sd, int only, uint8_t from, uint8_t to, int64_t count, ns_rng *r)
{
    int64_t left = 0;
    for (int d = 0; d < sd->n; d++)
        if (only < 0 || d == only)
            for (int64_t t = 0; t < sd->len[d]; t++) left += sd->s[d][t] == from;
    for (int d = 0; d < sd->n && count > 0; d++) {
        if (only >= 0 && d != only) continue;
        for (int64_t t = 0; t < sd->len[d] && count > 0; t++) {
            if (sd->s[d][t] != from) continue;
            if ((int64_t)below(r, (uint64_t)left) < count) {
                sd->s[d][t] = to;
                count--;
            }
            left--;
        }
    }
}

static int64_t dataset_count(const sides *sd, int d, uint8_t side)
{
    int64_t c = 0;
    for (int64_t t = 0; t < sd->len[d]; t++) c += sd->s[d][t] == side;
    return c;
}

/* ---- protocols ---------------------------------------------------------- */

static ns_status split_interpolation(sides *sd, const ns_split *sp, ns_error *err)
{
    int64_t T = sd->len[0];
    if (T < 2)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "interpolation needs at least two transitions; the dataset has %lld",
                            (long long)T);
    ns_rng r;
    ns_rng_seed(&r, stream_seed(sp->seed, TAG_SPLIT, 0, 0));
    memset(sd->s[0], SIDE_TRAIN, (size_t)T);
    int64_t ntest = frac_count(sp->test_frac, T);
    carve(sd, 0, SIDE_TRAIN, SIDE_TEST, ntest, &r);
    carve(sd, 0, SIDE_TRAIN, SIDE_DEV, dev_count(sp->dev_frac, T - ntest), &r);
    return NS_OK;
}

/* The extrapolation split of dataset d alone (its own stream). */
static ns_status split_extrapolation(sides *sd, int d, const ns_dataset *ds, const ns_split *sp, ns_error *err)
{
    int P = ds->nproblems;
    int64_t T = sd->len[d];
    int64_t *ntr = ns_xcalloc((size_t)P + 1, sizeof(int64_t));
    for (int64_t t = 0; t < T; t++) ntr[ns_dataset_transition(ds, t)[0]]++;
    int *elig = ns_xmalloc(sizeof(int) * ((size_t)P + 1));
    int E = 0;
    for (int p = 0; p < P; p++)
        if (ntr[p] > 0) elig[E++] = p;
    free(ntr);
    if (E < 2) {
        free(elig);
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                            "%s needs at least two problems with transitions; dataset %d (%s) has %d",
                            ns_protocol_name(sp->protocol), d, ds->domain_name, E);
    }
    ns_rng r;
    ns_rng_seed(&r, stream_seed(sp->seed, TAG_SPLIT, (uint64_t)d, 0));
    ns_rng_shuffle_int(&r, elig, (size_t)E);
    uint8_t *pside = ns_xcalloc((size_t)P + 1, 1);
    int ntest = (int)frac_count(sp->test_frac, E), ntrain = E - ntest;
    int ndev_problems = sp->dev_frac >= 0 && ntrain >= 3 ? (int)frac_count(sp->dev_frac, ntrain) : 0;
    for (int i = 0; i < E; i++)
        pside[elig[i]] = i < ntest ? SIDE_TEST : i < ntest + ndev_problems ? SIDE_DEV : SIDE_TRAIN;
    for (int64_t t = 0; t < T; t++) sd->s[d][t] = pside[ns_dataset_transition(ds, t)[0]];
    if (sp->dev_frac >= 0 && ntrain < 3)
        carve(sd, d, SIDE_TRAIN, SIDE_DEV, dev_count(sp->dev_frac, dataset_count(sd, d, SIDE_TRAIN)), &r);
    free(pside);
    free(elig);
    return NS_OK;
}

typedef struct plan_key {
    int32_t problem;
    uint64_t hash;
    int64_t plan;
} plan_key;

static int cmp_plan_key(const void *a, const void *b)
{
    const plan_key *x = a, *y = b;
    if (x->problem != y->problem) return x->problem < y->problem ? -1 : 1;
    if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
    return (x->plan > y->plan) - (x->plan < y->plan);
}

/* Marks train / test transitions (plans held out per problem) and carves
 * dev; held (NULL: not wanted) receives the held-out distinct plans as
 * (0, plan id) pairs, in problem order. */
static ns_status split_plan_variant(sides *sd, const ns_dataset *ds, const ns_split *sp, ns_refs *held, ns_error *err)
{
    int64_t K = ds->plan_problem.shape[0], T = sd->len[0];
    const int64_t *po = ds->plan_offsets.data, *pt = ds->plan_transitions.data;
    const int32_t *pp = ds->plan_problem.data;
    int P = ds->nproblems;
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = po[k]; j < po[k + 1]; j++)
            if (pt[j] < 0 || pt[j] >= T || ns_dataset_transition(ds, pt[j])[0] != pp[k])
                return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                                    "plan %lld of the dataset refers to a transition of another problem", (long long)k);
    /* distinct plans: sort by (problem, hash of the sequence), compare equal hashes */
    plan_key *keys = ns_xmalloc(sizeof(plan_key) * ((size_t)K + 1));
    for (int64_t k = 0; k < K; k++)
        keys[k] = (plan_key){pp[k], ns_hash_bytes(pt + po[k], sizeof(int64_t) * (size_t)(po[k + 1] - po[k]), 0), k};
    qsort(keys, (size_t)K, sizeof(plan_key), cmp_plan_key);
    uint8_t *dup = ns_xcalloc((size_t)K + 1, 1);
    for (int64_t i = 1; i < K; i++)
        for (int64_t j = i - 1; j >= 0 && keys[j].problem == keys[i].problem && keys[j].hash == keys[i].hash; j--) {
            int64_t a = keys[i].plan, b = keys[j].plan;
            if (!dup[b] && po[a + 1] - po[a] == po[b + 1] - po[b] &&
                !memcmp(pt + po[a], pt + po[b], sizeof(int64_t) * (size_t)(po[a + 1] - po[a]))) {
                dup[a] = 1;
                break;
            }
        }
    free(keys);
    /* distinct plans grouped by problem, in plan order */
    int64_t *start = ns_xcalloc((size_t)P + 2, sizeof(int64_t));
    for (int64_t k = 0; k < K; k++)
        if (!dup[k]) start[pp[k] + 1]++;
    for (int p = 0; p < P; p++) start[p + 1] += start[p];
    int64_t *plans = ns_xmalloc(sizeof(int64_t) * ((size_t)start[P] + 1)), *fill = ns_xmalloc(sizeof(int64_t) * ((size_t)P + 1));
    memcpy(fill, start, sizeof(int64_t) * (size_t)P);
    for (int64_t k = 0; k < K; k++)
        if (!dup[k]) plans[fill[pp[k]]++] = k;
    free(fill);
    free(dup);
    ns_rng r;
    ns_rng_seed(&r, stream_seed(sp->seed, TAG_SPLIT, 0, 0));
    uint8_t *s = sd->s[0];
    int used = 0;
    for (int p = 0; p < P; p++) {
        int64_t *pl = plans + start[p], k = start[p + 1] - start[p];
        if (k < 2) continue;
        used++;
        shuffle_i64(&r, pl, k);
        int64_t ntest = frac_count(sp->test_frac, k);
        if (held)
            for (int64_t i = 0; i < ntest; i++) {
                held->ref = ns_xrealloc(held->ref, sizeof(int64_t) * 2 * ((size_t)held->n + 1));
                held->ref[2 * held->n] = 0, held->ref[2 * held->n + 1] = pl[i];
                held->n++;
            }
        for (int64_t i = ntest; i < k; i++)
            for (int64_t j = po[pl[i]]; j < po[pl[i] + 1]; j++) s[pt[j]] = SIDE_TRAIN;
        for (int64_t i = 0; i < ntest; i++)
            for (int64_t j = po[pl[i]]; j < po[pl[i] + 1]; j++)
                if (s[pt[j]] != SIDE_TRAIN) s[pt[j]] = SIDE_TEST;
    }
    free(plans);
    free(start);
    if (!used)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                            "plan-variant needs a problem with two distinct sampled optimal plans; dataset (%s) has none "
                            "(build it with --plans 2 or more)",
                            ds->domain_name);
    carve(sd, 0, SIDE_TRAIN, SIDE_DEV, dev_count(sp->dev_frac, dataset_count(sd, 0, SIDE_TRAIN)), &r);
    return NS_OK;
}

/* cross-domain and leave-one-out: the last dataset is the test set. */
static ns_status split_transfer(sides *sd, const ns_dataset *const *ds, const ns_split *sp, ns_error *err)
{
    int n = sd->n;
    for (int d = 0; d < n; d++) {
        if (sd->len[d] == 0)
            return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "%s: dataset %d (%s) has no transitions",
                                ns_protocol_name(sp->protocol), d, ds[d]->domain_name);
        memset(sd->s[d], d == n - 1 ? SIDE_TEST : SIDE_TRAIN, (size_t)sd->len[d]);
    }
    ns_rng r;
    ns_rng_seed(&r, stream_seed(sp->seed, TAG_SPLIT, 0, 0));
    carve(sd, -1, SIDE_TRAIN, SIDE_DEV, dev_count(sp->dev_frac, sides_count(sd, SIDE_TRAIN)), &r);
    return NS_OK;
}

/* ---- candidate pools ---------------------------------------------------- */

/* Open-addressing set of state ids, cleared in O(1) by a generation stamp. */
typedef struct seen_set {
    int64_t *key;
    uint32_t *stamp;
    uint32_t cur;
    size_t mask;
} seen_set;

static void seen_init(seen_set *S, int pool_size)
{
    size_t cap = 16;
    while (cap < 4 * (size_t)pool_size + 4) cap *= 2;
    S->key = ns_xmalloc(sizeof(int64_t) * cap);
    S->stamp = ns_xcalloc(cap, sizeof(uint32_t));
    S->cur = 0;
    S->mask = cap - 1;
}

static void seen_free(seen_set *S)
{
    free(S->key);
    free(S->stamp);
}

static void seen_clear(seen_set *S)
{
    if (++S->cur == 0) {
        memset(S->stamp, 0, sizeof(uint32_t) * (S->mask + 1));
        S->cur = 1;
    }
}

static bool seen_has(const seen_set *S, int64_t v)
{
    for (size_t i = ns_hash_mix((uint64_t)v) & S->mask;; i = (i + 1) & S->mask) {
        if (S->stamp[i] != S->cur) return false;
        if (S->key[i] == v) return true;
    }
}

/* Inserts v; false when it was there already. */
static bool seen_insert(seen_set *S, int64_t v)
{
    for (size_t i = ns_hash_mix((uint64_t)v) & S->mask;; i = (i + 1) & S->mask) {
        if (S->stamp[i] != S->cur) {
            S->stamp[i] = S->cur;
            S->key[i] = v;
            return true;
        }
        if (S->key[i] == v) return false;
    }
}

typedef struct pooler {
    int P;
    uint64_t seed;
    seen_set seen;
    int64_t *scratch; /* 2P + 2 */
    /* plan-variant: states on the optimal-plan DAG sorted by (problem, g, id) */
    int32_t *dag;
    int64_t *dag_start; /* per problem, nproblems + 1 */
} pooler;

/* Appends to out up to k values chosen uniformly without replacement among
 * v(pos) for pos in [lo, hi) — v(pos) = map[pos], or pos without a map —
 * skipping values in S (nexcl of which lie in the range); inserts them in S.
 * Returns how many it appended.  O(k + nexcl) expected time. */
static int draw_distinct(ns_rng *r, seen_set *S, const int32_t *map, int64_t lo, int64_t hi, int64_t nexcl, int k,
                         int64_t *out, int64_t *scratch, int64_t scratch_cap)
{
    int64_t avail = hi - lo - nexcl;
    if (avail <= 0 || k <= 0) return 0;
    if (avail <= 2 * (int64_t)k) { /* scarce: enumerate (hi - lo ≤ 2k + nexcl) and pick */
        int64_t m = 0;
        for (int64_t pos = lo; pos < hi && m < scratch_cap; pos++) {
            int64_t v = map ? map[pos] : pos;
            if (!seen_has(S, v)) scratch[m++] = v;
        }
        int take = m < k ? (int)m : k;
        for (int i = 0; i < take; i++) {
            int64_t j = i + (int64_t)below(r, (uint64_t)(m - i));
            int64_t t = scratch[i];
            scratch[i] = scratch[j];
            scratch[j] = t;
            out[i] = scratch[i];
            seen_insert(S, out[i]);
        }
        return take;
    }
    int got = 0; /* plentiful: rejection, ≤ 2 tries per draw on average */
    while (got < k) {
        int64_t pos = lo + (int64_t)below(r, (uint64_t)(hi - lo));
        int64_t v = map ? map[pos] : pos;
        if (seen_insert(S, v)) out[got++] = v;
    }
    return got;
}

/* k draws with replacement from [lo, hi) without the truth. */
static int draw_with_replacement(ns_rng *r, int64_t lo, int64_t hi, int64_t truth, int k, int64_t *out)
{
    if (hi - lo < 2) return 0;
    for (int i = 0; i < k; i++) {
        int64_t v;
        do v = lo + (int64_t)below(r, (uint64_t)(hi - lo));
        while (v == truth);
        out[i] = v;
    }
    return k;
}

static bool on_dag(const ns_dataset *ds, int64_t s)
{
    const int32_t *g = ds->state_g.data, *h = ds->state_hstar.data, *sp = ds->state_problem.data;
    int32_t cstar = ds->problems[sp[s]].cstar;
    return cstar >= 0 && h[s] >= 0 && (int64_t)g[s] + h[s] == cstar;
}

typedef struct dag_key {
    int32_t problem, g, id;
} dag_key;

static int cmp_dag_key(const void *a, const void *b)
{
    const dag_key *x = a, *y = b;
    if (x->problem != y->problem) return x->problem < y->problem ? -1 : 1;
    if (x->g != y->g) return x->g < y->g ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static void build_dag_index(pooler *pl, const ns_dataset *ds)
{
    int64_t N = ns_dataset_nstates(ds), n = 0;
    const int32_t *g = ds->state_g.data, *sp = ds->state_problem.data;
    pl->dag = ns_xmalloc(sizeof(int32_t) * ((size_t)N + 1));
    pl->dag_start = ns_xcalloc((size_t)ds->nproblems + 2, sizeof(int64_t));
    bool sorted = true;
    for (int64_t s = 0; s < N; s++) {
        if (!on_dag(ds, s)) continue;
        if (n > 0) {
            int32_t q = pl->dag[n - 1];
            if (sp[q] > sp[s] || (sp[q] == sp[s] && g[q] > g[s])) sorted = false;
        }
        pl->dag[n++] = (int32_t)s;
        pl->dag_start[sp[s] + 1]++;
    }
    if (!sorted) { /* states are numbered by increasing g; sort anyway if not */
        dag_key *k = ns_xmalloc(sizeof(dag_key) * ((size_t)n + 1));
        for (int64_t i = 0; i < n; i++) k[i] = (dag_key){sp[pl->dag[i]], g[pl->dag[i]], pl->dag[i]};
        qsort(k, (size_t)n, sizeof(dag_key), cmp_dag_key);
        for (int64_t i = 0; i < n; i++) pl->dag[i] = k[i].id;
        free(k);
    }
    for (int p = 0; p < ds->nproblems; p++) pl->dag_start[p + 1] += pl->dag_start[p];
}

/* The slice [*a, *b) of pl->dag holding problem p's DAG states at depth d. */
static void dag_group(const pooler *pl, const ns_dataset *ds, int p, int32_t d, int64_t *a, int64_t *b)
{
    const int32_t *g = ds->state_g.data;
    int64_t lo = pl->dag_start[p], hi = pl->dag_start[p + 1];
    while (lo < hi) { /* first with g >= d */
        int64_t mid = lo + (hi - lo) / 2;
        if (g[pl->dag[mid]] < d) lo = mid + 1;
        else hi = mid;
    }
    *a = lo;
    hi = pl->dag_start[p + 1];
    while (lo < hi) { /* first with g > d */
        int64_t mid = lo + (hi - lo) / 2;
        if (g[pl->dag[mid]] <= d) lo = mid + 1;
        else hi = mid;
    }
    *b = lo;
}

/* Fills row (P entries) for test transition t of dataset d. */
static void pool_row(pooler *pl, const ns_split *sp, const ns_dataset *ds, int d, int64_t t, int64_t *row)
{
    const int32_t *tr = ns_dataset_transition(ds, t);
    int64_t truth = tr[3];
    int P = pl->P, need = P - 1, got = 0;
    row[0] = truth;
    for (int j = 1; j < P; j++) row[j] = -1;
    if (need <= 0) return;
    ns_rng r;
    ns_rng_seed(&r, stream_seed(pl->seed, TAG_POOL, (uint64_t)d, (uint64_t)t));
    seen_clear(&pl->seen);
    seen_insert(&pl->seen, truth);
    const ns_ds_problem *pr = &ds->problems[tr[0]];
    int64_t lo = pr->state_offset, hi = pr->state_offset + pr->nstates, cap = 2 * (int64_t)P + 2;
    switch (sp->protocol) {
    case NS_PROTO_INTERPOLATION:
    case NS_PROTO_CROSS_DOMAIN:
    case NS_PROTO_LEAVE_ONE_OUT:
        lo = 0;
        hi = ns_dataset_nstates(ds);
        /* fall through */
    case NS_PROTO_EXTRAPOLATION:
    case NS_PROTO_MULTI_DOMAIN:
        if (sp->with_replacement) draw_with_replacement(&r, lo, hi, truth, need, row + 1);
        else draw_distinct(&r, &pl->seen, NULL, lo, hi, 1, need, row + 1, pl->scratch, cap);
        break;
    case NS_PROTO_PLAN_VARIANT: {
        int64_t a, b;
        dag_group(pl, ds, tr[0], ((const int32_t *)ds->state_g.data)[truth], &a, &b);
        got = draw_distinct(&r, &pl->seen, pl->dag, a, b, on_dag(ds, truth) ? 1 : 0, need, row + 1, pl->scratch, cap);
        /* the group is used up: every value in the set lies in the problem */
        if (got < need)
            draw_distinct(&r, &pl->seen, NULL, lo, hi, got + 1, need - got, row + 1 + got, pl->scratch, cap);
        break;
    }
    }
}

int64_t *ns_split_pools_for(const ns_split *sp, const ns_dataset *const *ds, const ns_refs *refs)
{
    return ns_split_pools_draw(sp, ds, refs, sp->pool_size, sp->seed);
}

int64_t *ns_split_pools_draw(const ns_split *sp, const ns_dataset *const *ds, const ns_refs *refs, int P,
                             uint64_t seed)
{
    if (P <= 0 || refs->n == 0) return NULL;
    pooler pl = {0};
    pl.P = P;
    pl.seed = seed;
    seen_init(&pl.seen, P);
    pl.scratch = ns_xmalloc(sizeof(int64_t) * (2 * (size_t)P + 2));
    if (sp->protocol == NS_PROTO_PLAN_VARIANT) build_dag_index(&pl, ds[0]);
    int64_t *pools = ns_xmalloc(sizeof(int64_t) * (size_t)refs->n * (size_t)P);
    for (int64_t i = 0; i < refs->n; i++) {
        int d = (int)refs->ref[2 * i];
        pool_row(&pl, sp, ds[d], d, refs->ref[2 * i + 1], pools + (size_t)i * (size_t)P);
    }
    seen_free(&pl.seen);
    free(pl.scratch);
    free(pl.dag);
    free(pl.dag_start);
    return pools;
}

static void make_pools(ns_split *sp, const ns_dataset *const *ds) { sp->pools = ns_split_pools_for(sp, ds, &sp->test); }

static int cmp_ref(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

ns_status ns_split_test_plans(const ns_split *sp, const ns_dataset *const *ds, int n, ns_refs *out, ns_error *err)
{
    out->ref = NULL;
    out->n = 0;
    if (n != sp->ndatasets)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "the split has %d datasets, %d given", sp->ndatasets, n);
    if (sp->protocol == NS_PROTO_PLAN_VARIANT) {
        /* the split again, from its seed: the same shuffles give the same held-out plans */
        sides sd;
        sides_init(&sd, ds, 1);
        ns_status st = split_plan_variant(&sd, ds[0], sp, out, err);
        sides_free(&sd);
        if (st) {
            free(out->ref);
            out->ref = NULL, out->n = 0;
        }
        return st;
    }
    for (int d = 0; d < n; d++) {
        const ns_dataset *x = ds[d];
        const int64_t *po = x->plan_offsets.data, *pt = x->plan_transitions.data;
        for (int64_t k = 0; k < x->plan_problem.shape[0]; k++) {
            bool all = po[k + 1] > po[k];
            for (int64_t j = po[k]; j < po[k + 1] && all; j++) {
                int64_t key[2] = {d, pt[j]};
                all = sp->test.n > 0 && bsearch(key, sp->test.ref, (size_t)sp->test.n, 2 * sizeof(int64_t), cmp_ref) != NULL;
            }
            if (!all) continue;
            out->ref = ns_xrealloc(out->ref, sizeof(int64_t) * 2 * ((size_t)out->n + 1));
            out->ref[2 * out->n] = d, out->ref[2 * out->n + 1] = k;
            out->n++;
        }
    }
    return NS_OK;
}

/* ---- make ----------------------------------------------------------------- */

static void refs_collect(ns_refs *out, const sides *sd, uint8_t side)
{
    int64_t n = sides_count(sd, side), i = 0;
    out->n = n;
    out->ref = ns_xmalloc(sizeof(int64_t) * 2 * ((size_t)n + 1));
    for (int d = 0; d < sd->n; d++)
        for (int64_t t = 0; t < sd->len[d]; t++)
            if (sd->s[d][t] == side) {
                out->ref[2 * i] = d;
                out->ref[2 * i + 1] = t;
                i++;
            }
}

/* Problem ranges must agree with state_problem (pools rely on both). */
static ns_status check_dataset(const ns_dataset *ds, int d, ns_error *err)
{
    const int32_t *sp = ds->state_problem.data;
    for (int p = 0; p < ds->nproblems; p++) {
        const ns_ds_problem *pr = &ds->problems[p];
        for (int64_t s = pr->state_offset; s < pr->state_offset + pr->nstates; s++)
            if (s >= ns_dataset_nstates(ds) || sp[s] != p)
                return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                                    "dataset %d (%s): the state range of problem %d disagrees with state_problem", d,
                                    ds->domain_name, p);
    }
    if (ns_dataset_nstates(ds) > INT32_MAX)
        return ns_error_set(err, NS_ERR_UNSUPPORTED, NULL, 0, 0, "dataset %d has more than 2^31 states", d);
    return NS_OK;
}

ns_status ns_split_make(ns_split *sp, const ns_dataset *const *ds, int n, const ns_split_opts *o, ns_error *err)
{
    memset(sp, 0, sizeof *sp);
    if ((unsigned)o->protocol >= (unsigned)NPROTO)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "unknown protocol %d", (int)o->protocol);
    const char *name = ns_protocol_name(o->protocol);
    int want_min = 1, want_max = 1;
    if (o->protocol == NS_PROTO_CROSS_DOMAIN) want_min = want_max = 2;
    if (o->protocol == NS_PROTO_MULTI_DOMAIN || o->protocol == NS_PROTO_LEAVE_ONE_OUT) {
        want_min = 2;
        want_max = 1 << 20;
    }
    if (n < want_min || n > want_max)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "%s takes %s dataset%s, got %d", name,
                            want_min == want_max ? (want_min == 1 ? "one" : "two") : "two or more",
                            want_max == 1 ? "" : "s", n);
    double test_frac = o->test_frac == 0 ? 0.2 : o->test_frac, dev_frac = o->dev_frac == 0 ? 0.1 : o->dev_frac;
    if (!(test_frac > 0 && test_frac < 1))
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "test fraction must lie in (0, 1), got %g", test_frac);
    if (!(dev_frac < 1)) return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "dev fraction must be below 1, got %g", dev_frac);
    if (o->pool_size < 0) return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "pool size must be 0 or more");
    if (o->seed > (uint64_t)INT64_MAX) /* split.json keeps it as a JSON integer */
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "seed must be below 2^63");
    if (o->with_replacement && o->protocol == NS_PROTO_PLAN_VARIANT)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "plan-variant pools are drawn without replacement");
    for (int d = 0; d < n; d++) {
        ns_status st = check_dataset(ds[d], d, err);
        if (st != NS_OK) return st;
    }
    sp->protocol = o->protocol;
    sp->seed = o->seed;
    sp->test_frac = test_frac;
    sp->dev_frac = dev_frac < 0 ? -1 : dev_frac;
    sp->with_replacement = o->with_replacement;
    sp->pool_size = o->pool_size;
    sp->ndatasets = n;
    sides sd;
    sides_init(&sd, ds, n);
    ns_status st = NS_OK;
    switch (o->protocol) {
    case NS_PROTO_INTERPOLATION: st = split_interpolation(&sd, sp, err); break;
    case NS_PROTO_PLAN_VARIANT: st = split_plan_variant(&sd, ds[0], sp, NULL, err); break;
    case NS_PROTO_EXTRAPOLATION:
    case NS_PROTO_MULTI_DOMAIN:
        for (int d = 0; d < n && st == NS_OK; d++) st = split_extrapolation(&sd, d, ds[d], sp, err);
        break;
    case NS_PROTO_CROSS_DOMAIN:
    case NS_PROTO_LEAVE_ONE_OUT: st = split_transfer(&sd, ds, sp, err); break;
    }
    if (st == NS_OK) {
        sp->sources = ns_xcalloc((size_t)n, sizeof(ns_split_source));
        for (int d = 0; d < n; d++)
            sp->sources[d] = (ns_split_source){NULL, ns_xstrdup(ds[d]->domain_name), ds[d]->nproblems,
                                               ns_dataset_nstates(ds[d]), ns_dataset_ntransitions(ds[d])};
        refs_collect(&sp->train, &sd, SIDE_TRAIN);
        refs_collect(&sp->dev, &sd, SIDE_DEV);
        refs_collect(&sp->test, &sd, SIDE_TEST);
        make_pools(sp, ds);
    }
    sides_free(&sd);
    if (st != NS_OK) ns_split_free(sp);
    return st;
}

void ns_split_free(ns_split *sp)
{
    for (int d = 0; sp->sources && d < sp->ndatasets; d++) {
        free(sp->sources[d].dir);
        free(sp->sources[d].domain);
    }
    free(sp->sources);
    free(sp->train.ref);
    free(sp->dev.ref);
    free(sp->test.ref);
    free(sp->pools);
    memset(sp, 0, sizeof *sp);
}

/* ---- save ---------------------------------------------------------------- */

#define NFILES 4
static const char *const FILES[NFILES] = {"train.npy", "dev.npy", "test.npy", "pools.npy"};

/* Array views of the split's lists (no copies). */
static void split_arrays(const ns_split *sp, ns_array a[NFILES])
{
    const ns_refs *r[3] = {&sp->train, &sp->dev, &sp->test};
    for (int i = 0; i < 3; i++) a[i] = (ns_array){NS_I64, 2, {r[i]->n, 2, 0, 0}, r[i]->ref};
    a[3] = (ns_array){NS_I64, 2, {sp->test.n, sp->pool_size, 0, 0}, sp->pools};
}

static int64_t short_pools(const ns_split *sp)
{
    int64_t c = 0;
    for (int64_t i = 0; sp->pool_size > 0 && i < sp->test.n; i++)
        c += sp->pools[(size_t)i * (size_t)sp->pool_size + (size_t)sp->pool_size - 1] < 0;
    return c;
}

/* Writes into dir, a fresh folder. */
static ns_status save_into(const ns_split *sp, const char *const *dataset_dirs, const char *dir, ns_error *err)
{
    ns_status st = NS_OK;
    ns_array arrays[NFILES];
    split_arrays(sp, arrays);
    ns_npy_entry entries[NFILES];
    for (int i = 0; i < NFILES; i++) entries[i] = (ns_npy_entry){FILES[i], &arrays[i]};
    ns_buf files;
    ns_buf_init(&files);
    if ((st = ns_npy_write_listed(dir, entries, NFILES, &files, err)) != NS_OK) {
        ns_buf_free(&files);
        return st;
    }
    size_t plen = strlen(dir) + 64;
    char *path = ns_xmalloc(plen);
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_printf(&b, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"protocol\": \"%s\",\n  \"seed\": %llu,\n",
                  NS_SPLIT_FORMAT, NS_SPLIT_VERSION, ns_protocol_name(sp->protocol), (unsigned long long)sp->seed);
    ns_buf_puts(&b, "  \"options\": {\"test_frac\": ");
    ns_json_put_num(&b, sp->test_frac);
    ns_buf_puts(&b, ", \"dev_frac\": ");
    ns_json_put_num(&b, sp->dev_frac);
    ns_buf_printf(&b, ", \"pool_size\": %d, \"with_replacement\": %s},\n  \"datasets\": [", sp->pool_size,
                  sp->with_replacement ? "true" : "false");
    const ns_refs *lists[3] = {&sp->train, &sp->dev, &sp->test};
    for (int d = 0; d < sp->ndatasets; d++) {
        const ns_split_source *s = &sp->sources[d];
        const char *ddir = dataset_dirs ? dataset_dirs[d] : s->dir;
        ns_buf_puts(&b, d ? ",\n    {\"dir\": " : "\n    {\"dir\": ");
        ns_json_put_str(&b, ddir ? ddir : "");
        ns_buf_puts(&b, ", \"domain\": ");
        ns_json_put_str(&b, s->domain ? s->domain : "");
        ns_buf_printf(&b, ", \"problems\": %lld, \"states\": %lld, \"transitions\": %lld", (long long)s->nproblems,
                      (long long)s->nstates, (long long)s->ntransitions);
        static const char *const lname[3] = {"train", "dev", "test"};
        for (int l = 0; l < 3; l++) {
            int64_t c = 0;
            for (int64_t i = 0; i < lists[l]->n; i++) c += lists[l]->ref[2 * i] == d;
            ns_buf_printf(&b, ", \"%s\": %lld", lname[l], (long long)c);
        }
        ns_buf_putc(&b, '}');
    }
    ns_buf_printf(&b, "\n  ],\n  \"counts\": {\"train\": %lld, \"dev\": %lld, \"test\": %lld, \"short_pools\": %lld},\n",
                  (long long)sp->train.n, (long long)sp->dev.n, (long long)sp->test.n, (long long)short_pools(sp));
    ns_buf_puts(&b, "  ");
    ns_buf_puts(&b, files.data);
    ns_buf_puts(&b, "\n}\n");
    ns_buf_free(&files);
    ns_json_seal(&b);
    snprintf(path, plen, "%s/split.json", dir);
    st = ns_write_file_atomic(path, b.data, b.len, err);
    ns_buf_free(&b);
    free(path);
    return st;
}

/* Built beside the destination and swapped in whole, so a failure (or a
 * kill) never costs the previous output. */
ns_status ns_split_save(const ns_split *sp, const char *const *dataset_dirs, const char *dir, ns_error *err)
{
    char *tmp;
    ns_status st = ns_dir_stage(dir, &tmp, err);
    if (st != NS_OK) return st;
    st = save_into(sp, dataset_dirs, tmp, err);
    if (st != NS_OK) {
        ns_dir_discard(tmp);
        return st;
    }
    return ns_dir_commit(dir, tmp, err);
}

/* ---- load ---------------------------------------------------------------- */

static ns_status bad(ns_error *err, const char *file, const char *what)
{
    return ns_error_set(err, NS_ERR_INPUT, file, 0, 0, "not a valid split: %s", what);
}

static bool get_num(const ns_json *obj, const char *key, double *out)
{
    const ns_json *m = ns_json_get(obj, key);
    if (!m || m->kind != NS_JSON_NUMBER) return false;
    *out = m->number;
    return true;
}

static ns_status load_meta(ns_split *sp, const ns_json *m, const char *file, bool sealed, int64_t counts[3],
                           ns_error *err)
{
    const char *s;
    int64_t v;
    if (m->kind != NS_JSON_OBJECT || !ns_json_get_str(m, "format", &s) || strcmp(s, NS_SPLIT_FORMAT))
        return ns_error_set(err, NS_ERR_INPUT, file, 0, 0, "not a nextstate split (format is not '%s')", NS_SPLIT_FORMAT);
    ns_status vst = ns_json_check_version(m, file, sealed, NS_SPLIT_VERSION, "split", err);
    if (vst) return vst;
    int proto = ns_json_get_str(m, "protocol", &s) ? ns_protocol_parse(s) : -1;
    if (proto < 0) return bad(err, file, "unknown or missing 'protocol'");
    sp->protocol = (ns_protocol)proto;
    if (!ns_json_get_int(m, "seed", &v)) return bad(err, file, "missing 'seed'");
    sp->seed = (uint64_t)v;
    const ns_json *o = ns_json_get(m, "options"), *wr = o ? ns_json_get(o, "with_replacement") : NULL;
    if (!o || !get_num(o, "test_frac", &sp->test_frac) || !get_num(o, "dev_frac", &sp->dev_frac) ||
        !ns_json_get_int(o, "pool_size", &v) || v < 0 || v > INT32_MAX || !wr || wr->kind != NS_JSON_BOOL)
        return bad(err, file, "bad 'options'");
    sp->pool_size = (int)v;
    sp->with_replacement = wr->boolean;
    const ns_json *ds = ns_json_get(m, "datasets");
    if (!ds || ds->kind != NS_JSON_ARRAY || ds->n < 1) return bad(err, file, "bad 'datasets'");
    sp->sources = ns_xcalloc((size_t)ds->n, sizeof(ns_split_source));
    sp->ndatasets = ds->n;
    for (int d = 0; d < ds->n; d++) {
        const ns_json *e = &ds->items[d];
        ns_split_source *src = &sp->sources[d];
        const char *dir, *dom;
        if (e->kind != NS_JSON_OBJECT || !ns_json_get_str(e, "dir", &dir) || !ns_json_get_str(e, "domain", &dom) ||
            !ns_json_get_int(e, "problems", &src->nproblems) || !ns_json_get_int(e, "states", &src->nstates) ||
            !ns_json_get_int(e, "transitions", &src->ntransitions) || src->nstates < 0 || src->ntransitions < 0)
            return bad(err, file, "bad entry in 'datasets'");
        src->dir = ns_xstrdup(dir);
        src->domain = ns_xstrdup(dom);
    }
    const ns_json *c = ns_json_get(m, "counts");
    if (!c || !ns_json_get_int(c, "train", &counts[0]) || !ns_json_get_int(c, "dev", &counts[1]) ||
        !ns_json_get_int(c, "test", &counts[2]))
        return bad(err, file, "bad 'counts'");
    return NS_OK;
}

/* Range checks of the lists and pools; file names the offending array. */
static ns_status check_values(const ns_split *sp, const char *dir, ns_error *err)
{
    char file[1024];
    const ns_refs *lists[3] = {&sp->train, &sp->dev, &sp->test};
    for (int l = 0; l < 3; l++)
        for (int64_t i = 0; i < lists[l]->n; i++) {
            int64_t d = lists[l]->ref[2 * i], t = lists[l]->ref[2 * i + 1];
            if (d < 0 || d >= sp->ndatasets || t < 0 || t >= sp->sources[d].ntransitions) {
                snprintf(file, sizeof file, "%s/%s", dir, FILES[l]);
                return ns_error_set(err, NS_ERR_INPUT, file, 0, 0,
                                    "row %lld refers to dataset %lld, transition %lld: out of range", (long long)i,
                                    (long long)d, (long long)t);
            }
        }
    int P = sp->pool_size;
    for (int64_t i = 0; P > 0 && i < sp->test.n; i++) {
        const int64_t *row = sp->pools + (size_t)i * (size_t)P;
        int64_t N = sp->sources[sp->test.ref[2 * i]].nstates;
        bool ok = row[0] >= 0 && row[0] < N;
        for (int j = 1; j < P && ok; j++) ok = row[j] < N && (row[j] >= 0 ? row[j - 1] >= 0 : row[j] == -1);
        if (!ok) {
            snprintf(file, sizeof file, "%s/%s", dir, FILES[3]);
            return ns_error_set(err, NS_ERR_INPUT, file, 0, 0, "pool %lld holds a state id out of range", (long long)i);
        }
    }
    return NS_OK;
}

ns_status ns_split_load(ns_split *sp, const char *dir, ns_error *err)
{
    memset(sp, 0, sizeof *sp);
    size_t plen = strlen(dir) + 64;
    char *path = ns_xmalloc(plen), *fp = ns_xmalloc(plen);
    snprintf(path, plen, "%s/split.json", dir);
    ns_json m;
    int64_t counts[3] = {0, 0, 0};
    bool sealed;
    ns_status st = ns_json_read_sealed(&m, path, &sealed, err);
    if (st != NS_OK) {
        free(path);
        free(fp);
        return st;
    }
    st = load_meta(sp, &m, path, sealed, counts, err);
    ns_refs *lists[3] = {&sp->train, &sp->dev, &sp->test};
    ns_array arrays[NFILES];
    memset(arrays, 0, sizeof arrays);
    ns_npy_entry entries[NFILES];
    for (int i = 0; i < NFILES; i++) entries[i] = (ns_npy_entry){FILES[i], &arrays[i]};
    if (st == NS_OK) st = ns_npy_read_listed(dir, ns_json_get(&m, "files"), path, entries, NFILES, err);
    for (int i = 0; i < NFILES && st == NS_OK; i++) {
        const ns_array *a = &arrays[i];
        int64_t rows = i < 3 ? counts[i] : counts[2], cols = i < 3 ? 2 : sp->pool_size;
        snprintf(fp, plen, "%s/%s", dir, FILES[i]);
        if (a->dtype != NS_I64 || a->ndim != 2 || a->shape[0] != rows || a->shape[1] != cols)
            st = ns_error_set(err, NS_ERR_INPUT, fp, 0, 0, "expected i64 [%lld, %lld] as split.json says", (long long)rows,
                              (long long)cols);
    }
    for (int i = 0; i < NFILES; i++) { /* hand the arrays over, or free them */
        if (st == NS_OK && i < 3) {
            lists[i]->ref = arrays[i].data;
            lists[i]->n = counts[i];
        } else if (st == NS_OK && i == 3 && counts[2] > 0 && sp->pool_size > 0) {
            sp->pools = arrays[i].data;
        } else {
            ns_array_free(&arrays[i]);
        }
    }
    ns_json_free(&m);
    if (st == NS_OK) st = check_values(sp, dir, err);
    free(path);
    free(fp);
    if (st != NS_OK) ns_split_free(sp);
    return st;
}

ns_status ns_split_check(const ns_split *sp, const ns_dataset *const *ds, int n, ns_error *err)
{
    if (n != sp->ndatasets)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "the split refers to %d dataset%s, %d given", sp->ndatasets,
                            sp->ndatasets == 1 ? "" : "s", n);
    for (int d = 0; d < n; d++) {
        const ns_split_source *s = &sp->sources[d];
        if ((s->domain && strcmp(s->domain, ds[d]->domain_name)) || s->nproblems != ds[d]->nproblems ||
            s->nstates != ns_dataset_nstates(ds[d]) || s->ntransitions != ns_dataset_ntransitions(ds[d]))
            return ns_error_set(err, NS_ERR_INPUT, s->dir, 0, 0,
                                "dataset %d does not match the split (split: %s, %lld problems, %lld states, %lld "
                                "transitions; dataset: %s, %d, %lld, %lld)",
                                d, s->domain ? s->domain : "?", (long long)s->nproblems, (long long)s->nstates,
                                (long long)s->ntransitions, ds[d]->domain_name, ds[d]->nproblems,
                                (long long)ns_dataset_nstates(ds[d]), (long long)ns_dataset_ntransitions(ds[d]));
    }
    const ns_refs *lists[3] = {&sp->train, &sp->dev, &sp->test};
    for (int l = 0; l < 3; l++)
        for (int64_t i = 0; i < lists[l]->n; i++) {
            int64_t d = lists[l]->ref[2 * i], t = lists[l]->ref[2 * i + 1];
            if (d < 0 || d >= n || t < 0 || t >= ns_dataset_ntransitions(ds[d]))
                return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "split %s row %lld is out of range",
                                    FILES[l], (long long)i);
        }
    for (int64_t i = 0; sp->pool_size > 0 && i < sp->test.n; i++) {
        const ns_dataset *d = ds[sp->test.ref[2 * i]];
        if (sp->pools[(size_t)i * (size_t)sp->pool_size] != ns_dataset_transition(d, sp->test.ref[2 * i + 1])[3])
            return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                                "pool %lld does not start with its test transition's next state: the split was made "
                                "for other data",
                                (long long)i);
    }
    return NS_OK;
}

/* ---- the first paper's size splits ---------------------------------------- */

static const char *const SIZE_NAMES[4] = {"train", "validation", "test-interpolation", "test-extrapolation"};

const char *ns_size_split_name(int k) { return k >= 0 && k < 4 ? SIZE_NAMES[k] : "unknown"; }

void ns_size_split_free(char **names[4], int n[4])
{
    for (int k = 0; k < 4; k++) {
        for (int i = 0; names[k] && i < n[k]; i++) free(names[k][i]);
        free(names[k]);
        names[k] = NULL;
        n[k] = 0;
    }
}

ns_status ns_size_split_read(const char *root, char **names[4], int n[4], ns_error *err)
{
    for (int k = 0; k < 4; k++) {
        names[k] = NULL;
        n[k] = 0;
    }
    for (int k = 0; k < 4; k++) {
        ns_buf dir;
        ns_buf_init(&dir);
        ns_buf_printf(&dir, "%s/%s", root, SIZE_NAMES[k]);
        DIR *dp = opendir(dir.data);
        if (!dp) {
            ns_status st = ns_error_set(err, NS_ERR_IO, dir.data, 0, 0, "cannot open the %s folder of a size split",
                                        SIZE_NAMES[k]);
            ns_buf_free(&dir);
            ns_size_split_free(names, n);
            return st;
        }
        size_t cap = 0;
        struct dirent *e;
        while ((e = readdir(dp))) {
            size_t len = strlen(e->d_name);
            if (len < 6 || strcmp(e->d_name + len - 5, ".pddl") || !strcmp(e->d_name, "domain.pddl")) continue;
            NS_GROW(names[k], cap, (size_t)n[k] + 1);
            ns_buf p;
            ns_buf_init(&p);
            ns_buf_printf(&p, "%s/%s", dir.data, e->d_name);
            names[k][n[k]++] = p.data;
        }
        closedir(dp);
        ns_buf_free(&dir);
        if (n[k] > 1) qsort(names[k], (size_t)n[k], sizeof(char *), ns_cmp_str);
    }
    return NS_OK;
}

ns_status ns_split_open(ns_split_data *sd, const char *dir, ns_error *err)
{
    memset(sd, 0, sizeof *sd);
    ns_status st = ns_split_load(&sd->split, dir, err);
    if (st != NS_OK) return st;
    int n = sd->split.ndatasets;
    sd->dss = ns_xcalloc((size_t)n + 1, sizeof *sd->dss);
    sd->ds = ns_xcalloc((size_t)n + 1, sizeof *sd->ds);
    for (; sd->ndatasets < n && st == NS_OK; sd->ndatasets++) {
        st = ns_dataset_load(&sd->dss[sd->ndatasets], sd->split.sources[sd->ndatasets].dir, err);
        if (st != NS_OK) break;
        sd->ds[sd->ndatasets] = &sd->dss[sd->ndatasets];
    }
    if (st == NS_OK) st = ns_split_check(&sd->split, sd->ds, n, err);
    if (st != NS_OK) ns_split_data_free(sd);
    return st;
}

void ns_split_data_free(ns_split_data *sd)
{
    for (int d = 0; d < sd->ndatasets; d++) ns_dataset_free(&sd->dss[d]);
    free(sd->dss);
    free(sd->ds);
    ns_split_free(&sd->split);
    memset(sd, 0, sizeof *sd);
}
