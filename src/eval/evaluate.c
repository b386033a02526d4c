/* evaluate.c — Hit@k, Acc@k and latency of a world model (see evaluate.h). */
#include "nextstate/eval/evaluate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nextstate/util/blas.h"
#include "nextstate/util/json.h"
#include "nextstate/learn/loss.h"
#include "nextstate/learn/nn.h"

void ns_eval_opts_init(ns_eval_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->acc = true;
    o->latency_queries = 200;
}

static int64_t uniq_sort(int64_t *a, int64_t n)
{
    qsort(a, (size_t)n, sizeof *a, ns_cmp_i64);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (!k || a[k - 1] != a[i]) a[k++] = a[i];
    return k;
}

static int64_t find(const int64_t *a, int64_t n, int64_t x)
{
    int64_t lo = 0, hi = n - 1;
    while (lo <= hi) {
        int64_t m = (lo + hi) / 2;
        if (a[m] < x) lo = m + 1;
        else if (a[m] > x) hi = m - 1;
        else return m;
    }
    return -1;
}

static float dot(const float *a, const float *b, int n)
{
    float s;
    ns_dots(&s, a, b, 1, n);
    return s;
}

/* Projects rows[0 … n) through a head in chunks; out n × O. */
static void project_all(const ns_world *w, ns_world_ws *ws, const ns_features *f, bool state, const int64_t *rows,
                        int64_t n, float *out)
{
    const int CH = 1024;
    for (int64_t i = 0; i < n; i += CH) {
        int m = (int)(n - i < CH ? n - i : CH);
        ns_world_project(w, ws, f, state, rows + i, m, out + (size_t)i * w->cfg.out);
    }
}

typedef struct qinfo {
    int d;
    const int32_t *tr;
    int64_t srow, nrow, arow;
} qinfo;

static qinfo query(const ns_world_inputs *in, const ns_refs *refs, int64_t i)
{
    qinfo q;
    q.d = (int)refs->ref[2 * i];
    q.tr = ns_dataset_transition(in->ds[q.d], refs->ref[2 * i + 1]);
    q.srow = in->state_base[q.d] + q.tr[1];
    q.nrow = in->state_base[q.d] + q.tr[3];
    q.arow = ns_world_transition_arow(in, q.d, refs->ref[2 * i + 1]);
    return q;
}

/* ns_eval_tally, also returning the hits as bits: 1 << k random, 8 << k worst. */
static unsigned tally_bits(double *hit, double *worst, int64_t greater, int64_t equal, ns_rng *rng, double *rr)
{
    int64_t rank = greater + (int64_t)ns_rng_below(rng, (uint64_t)equal + 1); /* 0-based */
    int64_t wr = greater + equal + 1;                                         /* 1-based worst */
    static const int ks[3] = {1, 5, 10};
    unsigned bits = 0;
    for (int k = 0; k < 3; k++) {
        if (rank < ks[k]) hit[k] += 1, bits |= 1u << k;
        if (wr <= ks[k]) worst[k] += 1, bits |= 8u << k;
    }
    if (rr) *rr += 1.0 / (double)(rank + 1);
    return bits;
}

void ns_eval_tally(double *hit, double *worst, int64_t greater, int64_t equal, ns_rng *rng, double *rr)
{
    (void)tally_bits(hit, worst, greater, equal, rng, rr);
}

/* Raw and normalised projections π_s(E(row)) of a set of state rows. */
typedef struct stab {
    int64_t *rows, n; /* sorted, distinct */
    int O;
    float *raw, *nrm;
    uint8_t *q8; /* int8 models: the normalised rows as an int8 table (nn.h ns_i8_table_pack), else NULL */
} stab;

/* Takes rows (malloc'ed, n entries, duplicates allowed). */
static void stab_init_f(stab *t, const ns_world *w, ns_world_ws *ws, const ns_features *f, int64_t *rows, int64_t n);

static void stab_init(stab *t, const ns_world *w, ns_world_ws *ws, const ns_world_inputs *in, int64_t *rows,
                      int64_t n)
{
    stab_init_f(t, w, ws, &in->state, rows, n);
}

/* The same over the rows of features f (in place of the inputs' state features). */
static void stab_init_f(stab *t, const ns_world *w, ns_world_ws *ws, const ns_features *f, int64_t *rows, int64_t n)
{
    t->O = w->cfg.out;
    t->rows = rows;
    t->n = uniq_sort(rows, n);
    size_t m = (size_t)(t->n > 1024 ? t->n : 1024);
    t->raw = ns_xmalloc(m * (size_t)t->O * sizeof(float));
    t->nrm = ns_xmalloc(m * (size_t)t->O * sizeof(float));
    float *norm = ns_xmalloc(m * sizeof(float));
    project_all(w, ws, f, true, rows, t->n, t->raw);
    ns_l2norm_forward(t->nrm, norm, t->raw, (int)t->n, t->O);
    free(norm);
    t->q8 = NULL;
    if (w->i8) {
        size_t bytes = (ns_i8_table_size((int)t->n, t->O) + 63) / 64 * 64; /* rows on cache lines */
        t->q8 = aligned_alloc(64, bytes);
        if (!t->q8) t->q8 = ns_xmalloc(bytes);
        ns_i8_table_pack(t->q8, t->nrm, (int)t->n, t->O);
    }
}

static void stab_free(stab *t)
{
    free(t->rows);
    free(t->raw);
    free(t->nrm);
    free(t->q8);
}

static const float *stab_nrm(const stab *t, int64_t row) { return t->nrm + (size_t)find(t->rows, t->n, row) * t->O; }
static const float *stab_raw(const stab *t, int64_t row) { return t->raw + (size_t)find(t->rows, t->n, row) * t->O; }

/* The score of candidate row `row` for prediction p: the dot product of the
 * normalised p with its normalised projection; with an int8 table, p as
 * the transition gave it and mul = 1/|p| (ns_i8_table_dots; the same order
 * of candidates whatever mul). */
static float cand_score(const stab *t, const float *p, float mul, int64_t row)
{
    int64_t k = find(t->rows, t->n, row);
    if (!t->q8) return dot(p, t->nrm + (size_t)k * t->O, t->O);
    float s;
    ns_i8_table_dots(&s, p, mul, t->q8, (int)t->n, t->O, &k, 1);
    return s;
}

typedef struct rank_r {
    int64_t gt, eq, cnt; /* candidates above / tying the truth; candidates */
    int64_t best_row;    /* top-1 candidate (global row) */
    float best;          /* its score */
} rank_r;

/* Ranks the prediction p (normalised, or with mul: see cand_score) in a
 * pool of dataset rows base + id (truth first, −1 padding).  The top-1 candidate's ties are broken
 * uniformly with tie (NULL: the first). */
static rank_r rank_pool(const stab *t, const float *p, float mul, int64_t base, const int64_t *pool, int pool_size,
                        ns_rng *tie)
{
    rank_r r;
    float ts = cand_score(t, p, mul, base + pool[0]);
    r.gt = r.eq = 0;
    r.cnt = 1;
    r.best = ts;
    r.best_row = base + pool[0];
    uint64_t nbest = 1;
    for (int j = 1; j < pool_size; j++) {
        if (pool[j] < 0) continue;
        r.cnt++;
        float s = cand_score(t, p, mul, base + pool[j]);
        if (s > ts) r.gt++;
        else if (s == ts) r.eq++;
        if (s > r.best) r.best = s, r.best_row = base + pool[j], nbest = 1;
        else if (s == r.best && tie && ns_rng_below(tie, ++nbest) == 0) r.best_row = base + pool[j];
    }
    return r;
}

/* The best score of each of n normalised predictions pr [n × O] against the
 * pc normalised candidates tab[rows[j]] (rows of a table [· × O]; scratch sc: pc). */
static float score_best(const float *pr, int n, const float *tab, const int64_t *rows, int pc, int O, float *sc)
{
    float best = -2;
    for (int i = 0; i < n; i++) {
        ns_dots_rows(sc, pr + (size_t)i * O, tab, rows, pc, O);
        for (int j = 0; j < pc; j++)
            if (sc[j] > best) best = sc[j];
    }
    return best;
}

/* 1/|p| for p[O] (|p| clamped at NS_NORM_EPS, as ns_l2norm_forward): eight
 * partial sums in double, not one chain of O additions. */
static float inv_norm(const float *p, int O)
{
    double a[8] = {0};
    int i = 0;
    for (; i + 8 <= O; i += 8)
        for (int k = 0; k < 8; k++) a[k] += (double)p[i + k] * p[i + k];
    for (; i < O; i++) a[i & 7] += (double)p[i] * p[i];
    double nr = sqrt(((a[0] + a[4]) + (a[1] + a[5])) + ((a[2] + a[6]) + (a[3] + a[7])));
    return (float)(1.0 / (nr < NS_NORM_EPS ? NS_NORM_EPS : nr));
}

/* score_best against an int8 table (stab.q8): prediction j of n [n × O], as
 * T gave it, scored by ns_i8_table_dots with mul = 1/|p| (cosines) against
 * the pc[j] candidates at cand + j·pool_size when each has its own pool
 * (own), else all n against the first pool. */
static float score_best_i8(const float *pr, int n, bool own, const stab *t, const int64_t *cand, const int *pc,
                           int pool_size, float *sc)
{
    float best = -2;
    for (int j = 0; j < n; j++) {
        const float *p = pr + (size_t)j * t->O;
        int q = own ? j : 0;
        ns_i8_table_dots(sc, p, inv_norm(p, t->O), t->q8, (int)t->n, t->O, cand + (size_t)q * pool_size, pc[q]);
        for (int c = 0; c < pc[q]; c++)
            if (sc[c] > best) best = sc[c];
    }
    return best;
}

/* Latency per transition on the first m test queries, candidates' normalised
 * projections cached (see evaluate.h): (a) batch 1 and in batches of
 * NS_EVAL_LAT_BATCH queries; (b) T + scoring at batch 1, with the split T at
 * batch 1, and with the split T over every applicable action of the query
 * state (one expansion of a search), per transition.  Each repeated until
 * 0.1 s or 50 passes; the scores feed a volatile sink so nothing is elided. */
static void measure_latency(const ns_world *w, ns_world_ws *ws, const ns_world_inputs *in, const ns_refs *refs,
                            const int64_t *pools, int pool_size, const stab *tab, int queries, ns_eval_result *r)
{
    const int O = w->cfg.out, BQ = NS_EVAL_LAT_BATCH;
    int64_t m = refs->n < queries ? refs->n : queries;
    int sd, ad;
    ns_world_tsplit_dims(w, &sd, &ad);
    /* per query (untimed set-up, what a search keeps next to its states and actions): its candidates as
     * rows of the table of cached normalised projections (one row per state, as a search holds them), the
     * applicable actions' projections and split-T parts */
    int64_t *cand = ns_xmalloc((size_t)m * pool_size * sizeof *cand);
    int *pc = ns_xmalloc((size_t)m * sizeof *pc);
    int64_t *qs = ns_xmalloc((size_t)m * sizeof *qs), *qa = ns_xmalloc((size_t)m * sizeof *qa);
    int64_t *app_off = ns_xmalloc((size_t)(m + 1) * sizeof *app_off);
    app_off[0] = 0;
    for (int64_t i = 0; i < m; i++) {
        qinfo q = query(in, refs, i);
        qs[i] = q.srow, qa[i] = q.arow;
        const int64_t *pool = pools + i * pool_size;
        pc[i] = 0;
        for (int j = 0; j < pool_size; j++)
            if (pool[j] >= 0) cand[(size_t)i * pool_size + (size_t)pc[i]++] = find(tab->rows, tab->n, in->state_base[q.d] + pool[j]);
        const int64_t *off = in->ds[q.d]->applicable_offsets.data;
        int64_t napp = off[q.tr[1] + 1] - off[q.tr[1]];
        app_off[i + 1] = app_off[i] + (napp > 0 ? napp : 1);
    }
    int64_t A = app_off[m];
    int64_t *arows = ns_xmalloc((size_t)A * sizeof *arows);
    int maxapp = 1;
    for (int64_t i = 0; i < m; i++) {
        qinfo q = query(in, refs, i);
        const int64_t *off = in->ds[q.d]->applicable_offsets.data;
        int64_t k0 = off[q.tr[1]], napp = off[q.tr[1] + 1] - k0;
        if (napp <= 0) arows[app_off[i]] = q.arow;
        for (int64_t k = 0; k < napp; k++) arows[app_off[i] + k] = ns_world_applicable_arow(in, q.d, q.tr[1], k0 + k);
        if (app_off[i + 1] - app_off[i] > maxapp) maxapp = (int)(app_off[i + 1] - app_off[i]);
    }
    float *hs = ns_xmalloc((size_t)m * O * sizeof(float)), *ha = ns_xmalloc((size_t)m * O * sizeof(float));
    float *appa = ns_xmalloc((size_t)A * O * sizeof(float));
    float *ts = ns_xmalloc((size_t)m * sd * sizeof(float)), *ta = ns_xmalloc((size_t)m * ad * sizeof(float));
    float *appt = ns_xmalloc((size_t)A * ad * sizeof(float));
    for (int64_t i = 0; i < m; i += BQ) {
        int k = (int)(m - i < BQ ? m - i : BQ);
        ns_world_project(w, ws, &in->state, true, qs + i, k, hs + (size_t)i * O);
        ns_world_project(w, ws, &in->action, false, qa + i, k, ha + (size_t)i * O);
    }
    for (int64_t i = 0; i < A; i += BQ) {
        int k = (int)(A - i < BQ ? A - i : BQ);
        ns_world_project(w, ws, &in->action, false, arows + i, k, appa + (size_t)i * O);
    }
    ns_world_tstate(w, ws, hs, (int)m, ts);
    ns_world_taction(w, ws, ha, (int)m, ta);
    ns_world_taction(w, ws, appa, (int)A, appt);
    int wide = BQ > maxapp ? BQ : maxapp;
    float *pr = ns_xmalloc((size_t)wide * O * sizeof(float)), *nrm = ns_xmalloc((size_t)wide * sizeof(float));
    float *xh = ns_xmalloc((size_t)BQ * O * sizeof(float)), *xa = ns_xmalloc((size_t)BQ * O * sizeof(float));
    float *sc = ns_xmalloc((size_t)pool_size * sizeof(float));
    /* each measurement in a loop of its own (a search repeats one of them, so its weights and candidates stay
     * as warm as that workload keeps them): g = 0 (a) batch 1, 1 (b) T, 2 (b) split T, 3 (b) expansion,
     * 4 (a) in batches of BQ */
    double t[5] = {0}, best[5] = {0};
    int64_t cnt[5] = {0};
    volatile float sink = 0;
    int reps[5] = {0};
    for (int g = 0; g < 5; g++) {
        double tstart = ns_now();
        do {
            int64_t step = g == 4 ? BQ : 1, c0 = cnt[g];
            double t0 = t[g];
            for (int64_t i = 0; i < m; i += step) {
                const int64_t *ci = cand + (size_t)i * pool_size;
                int k = (int)(m - i < step ? m - i : step), na = (int)(app_off[i + 1] - app_off[i]);
                float b = -2;
                double a0 = ns_now();
                if (g == 0) { /* (a) batch 1: both heads and T in one call, score */
                    ns_world_predict1(w, ws, &in->state, qs[i], &in->action, qa[i], pr);
                } else if (g == 4) { /* (a) in batches: both heads, T, score */
                    ns_world_project(w, ws, &in->state, true, qs + i, k, xh);
                    ns_world_project(w, ws, &in->action, false, qa + i, k, xa);
                    ns_world_transition(w, ws, xh, xa, k, pr);
                } else if (g == 1) { /* (b) T on cached projections */
                    ns_world_transition(w, ws, hs + (size_t)i * O, ha + (size_t)i * O, 1, pr);
                } else if (g == 2) { /* (b) split T on cached parts */
                    ns_world_transition_split(w, ws, ts + (size_t)i * sd, 0, ta + (size_t)i * ad, 0, 1, pr);
                } else { /* (b) one expansion: split T for every applicable action of the state */
                    k = na;
                    ns_world_transition_split(w, ws, ts + (size_t)i * sd, 0, appt + (size_t)app_off[i] * ad,
                                              (size_t)ad, na, pr);
                }
                if (tab->q8) { /* int8 tables: the predictions as T gave them, scaled by 1/|p| */
                    b = score_best_i8(pr, k, g == 4, tab, ci, pc + i, pool_size, sc);
                } else {
                    ns_l2norm_forward(pr, nrm, pr, k, O);
                    if (g == 4) /* each query against its own pool */
                        for (int j = 0; j < k; j++) {
                            float v = score_best(pr + (size_t)j * O, 1, tab->nrm, ci + (size_t)j * pool_size, pc[i + j],
                                                 O, sc);
                            if (v > b) b = v;
                        }
                    else
                        b = score_best(pr, k, tab->nrm, ci, pc[i], O, sc);
                }
                t[g] += ns_now() - a0;
                cnt[g] += k;
                sink += b;
            }
            double pass = (t[g] - t0) / (double)(cnt[g] - c0);
            if (!reps[g]++ || pass < best[g]) best[g] = pass;
        } while (ns_now() - tstart < 0.1 && reps[g] < 50);
    }
    (void)sink;
    r->lat_n = m * reps[0];
    r->lat_full_us = t[0] / (double)cnt[0] * 1e6;
    r->lat_t_us = t[1] / (double)cnt[1] * 1e6;
    r->lat_split_us = t[2] / (double)cnt[2] * 1e6;
    r->lat_expand_us = t[3] / (double)cnt[3] * 1e6;
    r->lat_expand_actions = (double)cnt[3] / (double)(m * reps[3]);
    r->lat_full_batch_us = t[4] / (double)cnt[4] * 1e6;
    r->lat_full_best_us = best[0] * 1e6;
    r->lat_full_batch_best_us = best[4] * 1e6;
    free(cand), free(pc), free(qs), free(qa), free(app_off), free(arows), free(hs), free(ha), free(appa), free(ts);
    free(ta), free(appt), free(pr), free(nrm), free(xh), free(xa), free(sc);
}

/* Adds the query's ceiling terms (see ns_eval_result) for its pool
 * (rows base + id, truth first, −1 padding). */
static void tally_ceiling(ns_eval_result *r, const ns_features *f, int64_t base, const int64_t *pool, int pool_size)
{
    static const int ks[3] = {1, 5, 10};
    int64_t t = 0;
    for (int j = 1; j < pool_size; j++)
        if (pool[j] >= 0 && ns_features_rows_equal(f, base + pool[0], base + pool[j])) t++;
    if (t) r->twin_queries += 1;
    for (int k = 0; k < 3; k++) {
        r->ceil[k] += ks[k] >= t + 1 ? 1.0 : (double)ks[k] / (double)(t + 1);
        r->ceil_worst[k] += ks[k] >= t + 1 ? 1.0 : 0.0;
    }
}

/* Adds a query's chance terms (see ns_eval_result) for a pool of cnt candidates. */
static void tally_chance(double chance[3], int64_t cnt)
{
    static const int ks[3] = {1, 5, 10};
    for (int k = 0; k < 3; k++) chance[k] += cnt <= ks[k] ? 1.0 : (double)ks[k] / (double)cnt;
}

/* The best-scoring candidate other than the truth (pool[0]) for the
 * prediction p of query i (with mul, as rank_pool), ties broken uniformly by a generator of its own seeded
 * from seed and i (the Hit@k draws stay as they are); −1 when the pool holds no other. */
static int64_t best_other(const stab *t, const float *p, float mul, int64_t base, const int64_t *pool, int pool_size,
                          uint64_t seed, int64_t i)
{
    ns_rng r, *rng = &r;
    ns_rng_seed(rng, ns_hash_mix(seed ^ 0x746f7031ULL /* "top1" */) ^ (uint64_t)i);
    int64_t row = -1;
    float best = 0;
    uint64_t nbest = 0;
    for (int j = 1; j < pool_size; j++) {
        if (pool[j] < 0) continue;
        float sc = cand_score(t, p, mul, base + pool[j]);
        if (row < 0 || sc > best) best = sc, row = base + pool[j], nbest = 1;
        else if (sc == best && ns_rng_below(rng, ++nbest) == 0) row = base + pool[j];
    }
    return row;
}

/* Query-state features (ns_eval_opts.query_state) must match the state features' rows and width. */
static ns_status check_query_features(const ns_features *qf, const ns_features *f, ns_error *err)
{
    if (qf->nrows == f->nrows && qf->dim == f->dim) return NS_OK;
    return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                        "query state features have %lld rows x %lld columns, the state features %lld x %lld",
                        (long long)qf->nrows, (long long)qf->dim, (long long)f->nrows, (long long)f->dim);
}

/* The projections of the list's query states from the features qf (another rendering of the same states). */
static void query_table(stab *t, const ns_world *w, ns_world_ws *ws, const ns_features *qf,
                        const ns_world_inputs *in, const ns_refs *refs)
{
    int64_t *rows = ns_xmalloc((size_t)(refs->n ? refs->n : 1) * sizeof *rows);
    for (int64_t i = 0; i < refs->n; i++) rows[i] = query(in, refs, i).srow;
    stab_init_f(t, w, ws, qf, rows, refs->n);
}

/* Tallies Acc@k of one query: the true action's normalised prediction tp,
 * the other m − 1 applicable actions' after it, against the target's
 * normalised projection tg. */
static void tally_acc(ns_eval_result *r, const float *tg, const float *tp, int64_t m, int O, ns_rng *rng)
{
    float as = dot(tp, tg, O);
    int64_t gt = 0, eq = 0;
    for (int64_t j = 1; j < m; j++) {
        float s = dot(tp + (size_t)j * O, tg, O);
        if (s > as) gt++;
        else if (s == as) eq++;
    }
    ns_eval_tally(r->acc, r->acc_worst, gt, eq, rng, NULL);
}

/* qhit (NULL or refs->n entries) receives each query's Hit bits (tally_bits);
 * qout (NULL or refs->n entries) the bits and the top-1 candidate of each miss. */
static ns_status run(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs, const int64_t *pools,
                     int pool_size, const ns_eval_opts *o, ns_eval_result *r, uint8_t *qhit, ns_eval_query *qout,
                     ns_error *err)
{
    memset(r, 0, sizeof *r);
    const ns_features *qf = o->query_state;
    ns_status st = ns_world_check_inputs(w, in, err);
    if (!st && qf) st = check_query_features(qf, &in->state, err);
    if (st) return st;
    double t0 = ns_now();
    const int O = w->cfg.out;
    int64_t n = refs->n;
    r->n = n;
    r->pool_size = pool_size;
    ns_world_counts(w, &r->params_state, &r->params_action, &r->params_t);
    r->params_total = r->params_state + r->params_action + r->params_t;
    if (n == 0) return NS_OK;
    if (!pools || pool_size < 1) return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "no candidate pools to rank");
    /* needed state rows */
    int64_t cap = n * (2 + (int64_t)pool_size);
    int64_t *srows = ns_xmalloc((size_t)cap * sizeof *srows);
    int64_t ns_ = 0, na_ = 0;
    int64_t acap = 0;
    for (int64_t i = 0; i < n; i++) {
        qinfo q = query(in, refs, i);
        srows[ns_++] = q.srow;
        srows[ns_++] = q.nrow;
        for (int j = 0; j < pool_size; j++) {
            int64_t c = pools[i * pool_size + j];
            if (c >= 0) srows[ns_++] = in->state_base[q.d] + c;
        }
        const int64_t *off = in->ds[q.d]->applicable_offsets.data;
        acap += 1 + (o->acc ? off[q.tr[1] + 1] - off[q.tr[1]] : 0);
    }
    int64_t *arows = ns_xmalloc((size_t)acap * sizeof *arows);
    for (int64_t i = 0; i < n; i++) {
        qinfo q = query(in, refs, i);
        arows[na_++] = q.arow;
        if (!o->acc) continue;
        const int64_t *off = in->ds[q.d]->applicable_offsets.data;
        for (int64_t k = off[q.tr[1]]; k < off[q.tr[1] + 1]; k++)
            arows[na_++] = ns_world_applicable_arow(in, q.d, q.tr[1], k);
    }
    na_ = uniq_sort(arows, na_);
    ns_world_ws *ws = ns_world_ws_new();
    stab tab, qtab;
    stab_init(&tab, w, ws, in, srows, ns_);
    if (qf) query_table(&qtab, w, ws, qf, in, refs);
    float *HA = ns_xmalloc((size_t)(na_ ? na_ : 1) * O * sizeof(float));
    project_all(w, ws, &in->action, false, arows, na_, HA);
    /* queries in chunks: pair list = truth pair, then the other applicable actions */
    const int QC = 256;
    int64_t pcap = 0;
    int64_t maxapp = 0;
    for (int64_t i = 0; i < n; i++) {
        qinfo q = query(in, refs, i);
        const int64_t *off = in->ds[q.d]->applicable_offsets.data;
        int64_t m = off[q.tr[1] + 1] - off[q.tr[1]];
        if (m > maxapp) maxapp = m;
    }
    pcap = (int64_t)QC * (1 + (o->acc ? maxapp : 0));
    float *phs = ns_xmalloc((size_t)pcap * O * sizeof(float)), *pha = ns_xmalloc((size_t)pcap * O * sizeof(float));
    float *pred = ns_xmalloc((size_t)pcap * O * sizeof(float));
    float *pnorm = ns_xmalloc((size_t)pcap * sizeof(float));
    /* int8 tables score the predictions as T gives them (scaled by 1/|p|), as the latency loop does */
    float *praw = tab.q8 ? ns_xmalloc((size_t)pcap * O * sizeof(float)) : NULL;
    int64_t *qstart = ns_xmalloc((size_t)(QC + 1) * sizeof *qstart);
    ns_rng rng;
    ns_rng_seed(&rng, o->seed ^ 0x6576616cULL);
    ns_progress pg;
    ns_progress_init(&pg, o->progress, "eval");
    double npool = 0, napp = 0;
    for (int64_t q0 = 0; q0 < n; q0 += QC) {
        int qn = (int)(n - q0 < QC ? n - q0 : QC);
        int64_t P = 0;
        for (int k = 0; k < qn; k++) {
            qinfo q = query(in, refs, q0 + k);
            qstart[k] = P;
            const float *hs = stab_raw(qf ? &qtab : &tab, q.srow);
            memcpy(phs + (size_t)P * O, hs, (size_t)O * sizeof(float));
            memcpy(pha + (size_t)P * O, HA + (size_t)find(arows, na_, q.arow) * O, (size_t)O * sizeof(float));
            P++;
            if (!o->acc) continue;
            const int64_t *off = in->ds[q.d]->applicable_offsets.data;
            const int32_t *ops = in->ds[q.d]->applicable_ops.data;
            for (int64_t a = off[q.tr[1]]; a < off[q.tr[1] + 1]; a++) {
                if (ops[a] == q.tr[2]) continue;
                int64_t arow = ns_world_applicable_arow(in, q.d, q.tr[1], a);
                memcpy(phs + (size_t)P * O, hs, (size_t)O * sizeof(float));
                memcpy(pha + (size_t)P * O, HA + (size_t)find(arows, na_, arow) * O, (size_t)O * sizeof(float));
                P++;
            }
        }
        qstart[qn] = P;
        ns_world_transition(w, ws, phs, pha, (int)P, pred);
        if (praw) memcpy(praw, pred, (size_t)P * O * sizeof(float));
        ns_l2norm_forward(pred, pnorm, pred, (int)P, O);
        for (int k = 0; k < qn; k++) {
            qinfo q = query(in, refs, q0 + k);
            const float *tp = pred + (size_t)qstart[k] * O;
            const float *sp = praw ? praw + (size_t)qstart[k] * O : tp; /* what the candidates score */
            float mul = praw ? 1.0f / pnorm[qstart[k]] : 1.0f;
            const int64_t *pool = pools + (q0 + k) * pool_size;
            rank_r rr = rank_pool(&tab, sp, mul, in->state_base[q.d], pool, pool_size, NULL);
            npool += (double)rr.cnt;
            tally_chance(r->chance, rr.cnt);
            unsigned bits = tally_bits(r->hit, r->hit_worst, rr.gt, rr.eq, &rng, &r->mrr);
            tally_ceiling(r, &in->state, in->state_base[q.d], pool, pool_size);
            if (qhit) qhit[q0 + k] = (uint8_t)bits;
            if (qout) qout[q0 + k] = (ns_eval_query){(uint8_t)bits, bits & 1u ? -1 : best_other(&tab, sp, mul, in->state_base[q.d],
                                                                                                   pool, pool_size, o->seed, q0 + k)};
            if (!o->acc) continue;
            int64_t m = qstart[k + 1] - qstart[k];
            napp += (double)m;
            r->n_acc++;
            tally_acc(r, stab_nrm(&tab, q.nrow), tp, m, O, &rng);
        }
        ns_progress_update(&pg, (long)(q0 + qn), (long)n, "queries");
    }
    ns_progress_done(&pg);
    r->twin_queries /= (double)n;
    for (int k = 0; k < 3; k++) {
        r->hit[k] /= (double)n;
        r->hit_worst[k] /= (double)n;
        r->ceil[k] /= (double)n;
        r->ceil_worst[k] /= (double)n;
        r->chance[k] /= (double)n;
        if (r->n_acc) r->acc[k] /= (double)r->n_acc, r->acc_worst[k] /= (double)r->n_acc;
    }
    r->mrr /= (double)n;
    r->mean_pool = npool / (double)n;
    r->mean_actions = r->n_acc ? napp / (double)r->n_acc : 0;

    if (o->latency_queries > 0) measure_latency(w, ws, in, refs, pools, pool_size, &tab, o->latency_queries, r);
    r->seconds = ns_now() - t0;
    stab_free(&tab);
    if (qf) stab_free(&qtab);
    free(arows);
    free(HA);
    free(phs);
    free(pha);
    free(pred);
    free(pnorm);
    free(praw);
    free(qstart);
    ns_world_ws_free(ws);
    return NS_OK;
}

ns_status ns_eval_world(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs, const int64_t *pools,
                        int pool_size, const ns_eval_opts *o, ns_eval_result *r, ns_error *err)
{
    ns_eval_opts d;
    if (!o) ns_eval_opts_init(&d), o = &d;
    return run(w, in, refs, pools, pool_size, o, r, NULL, NULL, err);
}

ns_status ns_eval_world_queries(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs,
                                const int64_t *pools, int pool_size, const ns_eval_opts *o, ns_eval_result *r,
                                ns_eval_query *q, ns_error *err)
{
    ns_eval_opts d;
    if (!o) ns_eval_opts_init(&d), o = &d;
    return run(w, in, refs, pools, pool_size, o, r, NULL, q, err);
}

ns_status ns_eval_hits(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs, const int64_t *pools,
                       int pool_size, uint64_t seed, double hit[3], double *mrr, ns_error *err)
{
    ns_eval_opts o;
    ns_eval_opts_init(&o);
    o.seed = seed;
    o.acc = false;
    o.latency_queries = 0;
    ns_eval_result r;
    ns_status st = run(w, in, refs, pools, pool_size, &o, &r, NULL, NULL, err);
    if (!st) memcpy(hit, r.hit, sizeof r.hit);
    if (!st && mrr) *mrr = r.mrr;
    return st;
}

void ns_eval_train_opts_init(ns_train_opts *o)
{
    ns_train_opts_init(o);
    o->dev_score = ns_eval_hits;
}

/* `, "NAME@1": v[0], "NAME@5": v[1]…` for the first n of k = 1, 5, 10, with
 * SUFFIX after the k ("", "_worst", "_ceiling"…). */
static void put_at_k(ns_buf *b, const char *name, const char *suffix, const double *v, int n)
{
    static const char *ks[3] = {"1", "5", "10"};
    for (int k = 0; k < n; k++) {
        ns_buf_printf(b, ", \"%s@%s%s\": ", name, ks[k], suffix);
        ns_json_put_num(b, v[k]);
    }
}

void ns_eval_json(const ns_eval_result *r, ns_buf *b)
{
    ns_buf_printf(b, "{\"n\": %lld, \"pool_size\": %d, \"mean_pool\": ", (long long)r->n, r->pool_size);
    ns_json_put_num(b, r->mean_pool);
    put_at_k(b, "hit", "", r->hit, 3);
    put_at_k(b, "hit", "_worst", r->hit_worst, 3);
    ns_buf_puts(b, ", \"mrr\": ");
    ns_json_put_num(b, r->mrr);
    put_at_k(b, "hit", "_ceiling", r->ceil, 3);
    put_at_k(b, "hit", "_worst_ceiling", r->ceil_worst, 3);
    put_at_k(b, "chance", "", r->chance, 3);
    ns_buf_puts(b, ", \"twin_queries\": ");
    ns_json_put_num(b, r->twin_queries);
    ns_buf_printf(b, ", \"n_acc\": %lld", (long long)r->n_acc);
    put_at_k(b, "acc", "", r->acc, 3);
    put_at_k(b, "acc", "_worst", r->acc_worst, 3);
    const struct {
        const char *key;
        double v;
    } nums[] = {{"mean_actions", r->mean_actions},
                {"latency_full_us", r->lat_full_us},
                {"latency_transition_us", r->lat_t_us},
                {"latency_full_batch_us", r->lat_full_batch_us},
                {"latency_full_best_us", r->lat_full_best_us},
                {"latency_full_batch_best_us", r->lat_full_batch_best_us},
                {"latency_transition_split_us", r->lat_split_us},
                {"latency_expand_us", r->lat_expand_us},
                {"latency_expand_actions", r->lat_expand_actions}};
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
        ns_buf_printf(b, ", \"%s\": ", nums[i].key);
        ns_json_put_num(b, nums[i].v);
    }
    ns_buf_printf(b,
                  ", \"latency_queries\": %lld, \"params\": {\"state_head\": %zu, \"action_head\": %zu, "
                  "\"transition\": %zu, \"total\": %zu}, \"seconds\": ",
                  (long long)r->lat_n, r->params_state, r->params_action, r->params_t, r->params_total);
    ns_json_put_num(b, r->seconds);
    ns_buf_putc(b, '}');
}

void ns_eval_table(const ns_eval_result *r, ns_buf *b)
{
    ns_buf_printf(b, "queries            %lld (pools of %d, mean %.1f candidates)\n", (long long)r->n, r->pool_size,
                  r->mean_pool);
    ns_buf_printf(b, "                   @1       @5       @10\n");
    ns_buf_printf(b, "Hit (random ties)  %6.2f%%  %6.2f%%  %6.2f%%\n", 100 * r->hit[0], 100 * r->hit[1],
                  100 * r->hit[2]);
    ns_buf_printf(b, "Hit (worst ties)   %6.2f%%  %6.2f%%  %6.2f%%\n", 100 * r->hit_worst[0], 100 * r->hit_worst[1],
                  100 * r->hit_worst[2]);
    ns_buf_printf(b, "chance             %6.2f%%  %6.2f%%  %6.2f%%   (a ranking that ignores the model)\n",
                  100 * r->chance[0], 100 * r->chance[1], 100 * r->chance[2]);
    if (r->twin_queries > 0)
        ns_buf_printf(b, "Hit ceiling        %6.2f%%  %6.2f%%  %6.2f%%   (%.1f%% of pools hold a feature twin of the truth)\n",
                      100 * r->ceil[0], 100 * r->ceil[1], 100 * r->ceil[2], 100 * r->twin_queries);
    if (r->n_acc)
        ns_buf_printf(b, "Acc (random ties)  %6.2f%%  %6.2f%%  %6.2f%%   (%.1f applicable actions per state)\n",
                      100 * r->acc[0], 100 * r->acc[1], 100 * r->acc[2], r->mean_actions);
    ns_buf_printf(b, "MRR                %.4f\n", r->mrr);
    if (r->lat_n)
    {
        ns_buf_printf(b, "latency            (a) full %.1f us   (b) T + scoring %.1f us   (%lld timed queries)\n",
                      r->lat_full_us, r->lat_t_us, (long long)r->lat_n);
        ns_buf_printf(b, "                   (a) in batches of %d %.1f us   (b) split T %.1f us, over a state's %.1f "
                      "applicable actions %.2f us  (per transition)\n",
                      NS_EVAL_LAT_BATCH, r->lat_full_batch_us, r->lat_split_us, r->lat_expand_actions, r->lat_expand_us);
    }
    ns_buf_printf(b, "parameters         state head %zu, action head %zu, T %zu, total %zu\n", r->params_state,
                  r->params_action, r->params_t, r->params_total);
}

/* ---- pool-size sweep ---------------------------------------------------------------- */

static bool same_problem_pools(ns_protocol proto)
{
    return proto == NS_PROTO_EXTRAPOLATION || proto == NS_PROTO_MULTI_DOMAIN || proto == NS_PROTO_PLAN_VARIANT;
}

/* The full candidate range of query i as global rows [*lo, *hi). */
static void full_range(const ns_world_inputs *in, const ns_refs *refs, int64_t i, bool same_problem, int64_t *lo,
                       int64_t *hi)
{
    int d = (int)refs->ref[2 * i];
    const ns_dataset *ds = in->ds[d];
    *lo = in->state_base[d];
    *hi = *lo + ns_dataset_nstates(ds);
    if (same_problem) {
        const ns_ds_problem *p = &ds->problems[ns_dataset_transition(ds, refs->ref[2 * i + 1])[0]];
        *lo = in->state_base[d] + p->state_offset;
        *hi = *lo + p->nstates;
    }
}

/* Hit@k and MRR against every candidate the protocol allows (evaluate.h). */
static ns_status run_full(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs, ns_protocol proto,
                          uint64_t seed, ns_eval_sweep *r, ns_error *err)
{
    memset(r, 0, sizeof *r);
    r->n = refs->n;
    ns_status st = ns_world_check_inputs(w, in, err);
    if (st || refs->n == 0) return st;
    const int O = w->cfg.out;
    const bool sp = same_problem_pools(proto);
    /* every state of the datasets the list refers to, projected once */
    bool *used = ns_xcalloc((size_t)in->nds, sizeof *used);
    int64_t nrows = 0, maxrange = 1;
    for (int64_t i = 0; i < refs->n; i++) {
        int d = (int)refs->ref[2 * i];
        if (!used[d]) used[d] = true, nrows += ns_dataset_nstates(in->ds[d]);
        int64_t lo, hi;
        full_range(in, refs, i, sp, &lo, &hi);
        if (hi - lo > maxrange) maxrange = hi - lo;
    }
    int64_t *rows = ns_xmalloc((size_t)nrows * sizeof *rows), k = 0;
    for (int d = 0; d < in->nds; d++)
        for (int64_t s = 0; used[d] && s < ns_dataset_nstates(in->ds[d]); s++) rows[k++] = in->state_base[d] + s;
    free(used);
    ns_world_ws *ws = ns_world_ws_new();
    stab tab;
    stab_init(&tab, w, ws, in, rows, nrows);
    const int QC = 64;
    float *phs = ns_xmalloc((size_t)QC * O * sizeof(float)), *pha = ns_xmalloc((size_t)QC * O * sizeof(float));
    float *pred = ns_xmalloc((size_t)QC * O * sizeof(float)), pnorm[64];
    float *S = ns_xmalloc((size_t)QC * (size_t)maxrange * sizeof(float));
    int64_t arow[64], lo[64], hi[64], nrow[64];
    ns_rng rng;
    ns_rng_seed(&rng, seed ^ 0x6576616cULL);
    double npool = 0;
    for (int64_t q0 = 0; q0 < refs->n; q0 += QC) {
        int qn = (int)(refs->n - q0 < QC ? refs->n - q0 : QC);
        for (int j = 0; j < qn; j++) {
            qinfo q = query(in, refs, q0 + j);
            memcpy(phs + (size_t)j * O, stab_raw(&tab, q.srow), (size_t)O * sizeof(float));
            arow[j] = q.arow;
            nrow[j] = q.nrow;
            full_range(in, refs, q0 + j, sp, &lo[j], &hi[j]);
        }
        ns_world_project(w, ws, &in->action, false, arow, qn, pha);
        ns_world_transition(w, ws, phs, pha, qn, pred);
        ns_l2norm_forward(pred, pnorm, pred, qn, O);
        /* groups of consecutive queries with one candidate range: one product each */
        for (int g0 = 0, g1; g0 < qn; g0 = g1) {
            for (g1 = g0 + 1; g1 < qn && lo[g1] == lo[g0] && hi[g1] == hi[g0];) g1++;
            int m = (int)(hi[g0] - lo[g0]);
            ns_sgemm(false, true, g1 - g0, m, O, 1.0f, pred + (size_t)g0 * O, O, stab_nrm(&tab, lo[g0]), O, 0.0f, S, m);
            for (int j = g0; j < g1; j++) {
                const float *row = S + (size_t)(j - g0) * m;
                int64_t tc = nrow[j] - lo[g0], gt = 0, eq = 0;
                float ts = row[tc];
                for (int c = 0; c < m; c++) {
                    if (c == tc) continue;
                    if (row[c] > ts) gt++;
                    else if (row[c] == ts) eq++;
                }
                npool += m;
                ns_eval_tally(r->hit, r->hit_worst, gt, eq, &rng, &r->mrr);
            }
        }
    }
    for (int j = 0; j < 3; j++) r->hit[j] /= (double)refs->n, r->hit_worst[j] /= (double)refs->n;
    r->mrr /= (double)refs->n;
    r->mean_pool = npool / (double)refs->n;
    stab_free(&tab);
    free(phs);
    free(pha);
    free(pred);
    free(S);
    ns_world_ws_free(ws);
    return NS_OK;
}

ns_status ns_eval_pool_sweep(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs, const ns_split *sp,
                             const int *sizes, int nsizes, uint64_t pool_seed, uint64_t seed, ns_eval_sweep *out,
                             ns_error *err)
{
    ns_protocol proto = sp->protocol;
    /* the widest candidate set: larger pools hold every candidate, as this size does */
    int64_t widest = 1;
    for (int64_t i = 0; i < refs->n; i++) {
        int64_t lo, hi;
        full_range(in, refs, i, same_problem_pools(proto), &lo, &hi);
        if (hi - lo > widest) widest = hi - lo;
    }
    for (int s = 0; s < nsizes; s++) {
        if (sizes[s] < 0) return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "pool size %d: expected ≥ 1 (0: full)", sizes[s]);
        ns_status st;
        if (sizes[s] == 0) {
            st = run_full(w, in, refs, proto, seed, &out[s], err);
        } else {
            int n = (int)(sizes[s] < widest ? sizes[s] : widest);
            int64_t *pools = ns_split_pools_draw(sp, in->ds, refs, n, pool_seed);
            ns_eval_opts o;
            ns_eval_opts_init(&o);
            o.seed = seed;
            o.acc = false;
            o.latency_queries = 0;
            ns_eval_result r;
            st = run(w, in, refs, pools, n, &o, &r, NULL, NULL, err);
            free(pools);
            memset(&out[s], 0, sizeof out[s]);
            out[s].n = r.n;
            out[s].mean_pool = r.mean_pool;
            memcpy(out[s].hit, r.hit, sizeof r.hit);
            memcpy(out[s].hit_worst, r.hit_worst, sizeof r.hit_worst);
            out[s].mrr = r.mrr;
        }
        out[s].pool = sizes[s];
        if (st) return st;
    }
    return NS_OK;
}

static void put_nums(ns_buf *b, const double *v, int n)
{
    ns_buf_putc(b, '[');
    for (int i = 0; i < n; i++) {
        if (i) ns_buf_puts(b, ", ");
        ns_json_put_num(b, v[i]);
    }
    ns_buf_putc(b, ']');
}

void ns_eval_sweep_json(const ns_eval_sweep *s, int n, ns_buf *b)
{
    ns_buf_putc(b, '[');
    for (int i = 0; i < n; i++) {
        if (i) ns_buf_puts(b, ", ");
        if (s[i].pool) ns_buf_printf(b, "{\"pool\": %d", s[i].pool);
        else ns_buf_puts(b, "{\"pool\": \"full\"");
        ns_buf_printf(b, ", \"n\": %lld, \"mean_pool\": ", (long long)s[i].n);
        ns_json_put_num(b, s[i].mean_pool);
        ns_buf_puts(b, ", \"hit\": ");
        put_nums(b, s[i].hit, 3);
        ns_buf_puts(b, ", \"hit_worst\": ");
        put_nums(b, s[i].hit_worst, 3);
        ns_buf_puts(b, ", \"mrr\": ");
        ns_json_put_num(b, s[i].mrr);
        ns_buf_putc(b, '}');
    }
    ns_buf_putc(b, ']');
}

void ns_eval_sweep_table(const ns_eval_sweep *s, int n, ns_buf *b)
{
    ns_buf_puts(b, "pool-size sweep    pool   mean pool   Hit@1    Hit@5    Hit@10   (worst ties @1/@5/@10)      MRR\n");
    for (int i = 0; i < n; i++) {
        char name[32];
        if (s[i].pool) snprintf(name, sizeof name, "%d", s[i].pool);
        else snprintf(name, sizeof name, "full");
        ns_buf_printf(b, "                   %-6s %9.1f  %6.2f%%  %6.2f%%  %6.2f%%   (%6.2f%% %6.2f%% %6.2f%%)  %.4f\n",
                      name, s[i].mean_pool, 100 * s[i].hit[0], 100 * s[i].hit[1], 100 * s[i].hit[2],
                      100 * s[i].hit_worst[0], 100 * s[i].hit_worst[1], 100 * s[i].hit_worst[2], s[i].mrr);
    }
}

/* ---- plan runs ------------------------------------------------------------------------ */

/* (dataset, transition) → index of its first occurrence in a list. */
typedef struct reftrip {
    int64_t d, t, i;
} reftrip;

static int cmp_trip(const void *a, const void *b)
{
    const reftrip *x = a, *y = b;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static int64_t first_ref(const reftrip *a, int64_t n, int64_t d, int64_t t)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t m = (lo + hi) / 2;
        if (a[m].d < d || (a[m].d == d && a[m].t < t)) lo = m + 1;
        else hi = m;
    }
    return lo < n && a[lo].d == d && a[lo].t == t ? a[lo].i : -1;
}

/* Runs of plan steps in a list: run r is steps off[r] … off[r+1], step k's
 * transition is the list entry src[k] (first occurrence). */
typedef struct plan_runs {
    int64_t n, nsteps, *off, *src;
} plan_runs;

typedef struct run_key {
    int d;
    int64_t len, order;
    const int64_t *tr; /* into the dataset's plan_transitions */
} run_key;

static int cmp_run(const void *a, const void *b)
{
    const run_key *x = a, *y = b;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    for (int64_t k = 0; k < x->len; k++)
        if (x->tr[k] != y->tr[k]) return x->tr[k] < y->tr[k] ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_order(const void *a, const void *b)
{
    const run_key *x = a, *y = b;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* whole: the plans wholly in the list, one run each; else the maximal runs
 * of in-list steps of every plan, each distinct transition sequence once
 * (its first occurrence, in dataset and plan order). */
static int cmp_pair(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* only (NULL: every plan): the (dataset, plan) pairs to consider. */
static void find_runs(const ns_world_inputs *in, const ns_refs *refs, bool whole, const ns_refs *only, plan_runs *R)
{
    int64_t *sel = NULL;
    if (only) {
        sel = ns_xmalloc((size_t)(only->n ? only->n : 1) * 2 * sizeof *sel);
        if (only->n) memcpy(sel, only->ref, (size_t)only->n * 2 * sizeof *sel);
        qsort(sel, (size_t)only->n, 2 * sizeof *sel, cmp_pair);
    }
    reftrip *tr = ns_xmalloc((size_t)(refs->n ? refs->n : 1) * sizeof *tr);
    for (int64_t i = 0; i < refs->n; i++) tr[i] = (reftrip){refs->ref[2 * i], refs->ref[2 * i + 1], i};
    qsort(tr, (size_t)refs->n, sizeof *tr, cmp_trip);
    int64_t nk = 0, cap = 16;
    run_key *keys = ns_xmalloc((size_t)cap * sizeof *keys);
    for (int d = 0; d < in->nds; d++) {
        const ns_dataset *ds = in->ds[d];
        int64_t K = ds->plan_problem.shape[0];
        const int64_t *po = ds->plan_offsets.data, *pt = ds->plan_transitions.data;
        for (int64_t p = 0; p < K; p++) {
            int64_t key[2] = {d, p};
            if (sel && !bsearch(key, sel, (size_t)only->n, 2 * sizeof *sel, cmp_pair)) continue;
            int64_t a = po[p], e = po[p + 1];
            for (int64_t k = a; k < e;) {
                int64_t j = k;
                while (j < e && first_ref(tr, refs->n, d, pt[j]) >= 0) j++;
                if (whole && (j < e || e == a)) break; /* a step outside the list: not whole */
                if (j > k) {
                    if (nk == cap) cap *= 2, keys = ns_xrealloc(keys, (size_t)cap * sizeof *keys);
                    keys[nk] = (run_key){d, j - k, nk, pt + k};
                    nk++;
                }
                k = j + 1;
            }
        }
    }
    int64_t kept = nk;
    if (!whole && nk > 1) {
        qsort(keys, (size_t)nk, sizeof *keys, cmp_run);
        kept = 1;
        for (int64_t i = 1; i < nk; i++) {
            run_key x = keys[i], y = keys[kept - 1];
            x.order = y.order = 0;
            if (cmp_run(&x, &y)) keys[kept++] = keys[i];
        }
        qsort(keys, (size_t)kept, sizeof *keys, cmp_order);
    }
    R->n = kept;
    R->off = ns_xmalloc((size_t)(kept + 1) * sizeof *R->off);
    R->off[0] = 0;
    for (int64_t r = 0; r < kept; r++) R->off[r + 1] = R->off[r] + keys[r].len;
    R->nsteps = R->off[kept];
    R->src = ns_xmalloc((size_t)(R->nsteps ? R->nsteps : 1) * sizeof *R->src);
    for (int64_t r = 0; r < kept; r++)
        for (int64_t k = 0; k < keys[r].len; k++) R->src[R->off[r] + k] = first_ref(tr, refs->n, keys[r].d, keys[r].tr[k]);
    free(keys);
    free(tr);
    free(sel);
}

static void plan_runs_free(plan_runs *R)
{
    free(R->off);
    free(R->src);
}

/* ---- plan-level metrics --------------------------------------------------------------- */

ns_status ns_eval_plans(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs, const int64_t *pools,
                        int pool_size, const ns_refs *plans, uint64_t seed, ns_eval_plan_result *r, ns_error *err)
{
    memset(r, 0, sizeof *r);
    r->mean_len = r->plan_mean = r->exact = NAN;
    for (int k = 0; k < 2; k++) r->hit[k] = r->hit_worst[k] = NAN;
    ns_status st = ns_world_check_inputs(w, in, err);
    if (st) return st;
    plan_runs R;
    find_runs(in, refs, true, plans, &R);
    r->n = R.n;
    r->steps = R.nsteps;
    if (R.n == 0) {
        plan_runs_free(&R);
        return NS_OK;
    }
    if (!pools || pool_size < 1) {
        plan_runs_free(&R);
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "no candidate pools to rank");
    }
    /* the steps as a list with their transitions' pools, scored as ns_eval_world scores */
    ns_refs steps = {ns_xmalloc((size_t)R.nsteps * 2 * sizeof(int64_t)), R.nsteps};
    int64_t *sp = ns_xmalloc((size_t)R.nsteps * pool_size * sizeof *sp);
    for (int64_t k = 0; k < R.nsteps; k++) {
        steps.ref[2 * k] = refs->ref[2 * R.src[k]];
        steps.ref[2 * k + 1] = refs->ref[2 * R.src[k] + 1];
        memcpy(sp + k * pool_size, pools + R.src[k] * pool_size, (size_t)pool_size * sizeof *sp);
    }
    uint8_t *qh = ns_xmalloc((size_t)R.nsteps);
    ns_eval_opts o;
    ns_eval_opts_init(&o);
    o.seed = seed;
    o.acc = false;
    o.latency_queries = 0;
    ns_eval_result er;
    st = run(w, in, &steps, sp, pool_size, &o, &er, qh, NULL, err);
    if (!st) {
        r->hit[0] = er.hit[0], r->hit[1] = er.hit[1];
        r->hit_worst[0] = er.hit_worst[0], r->hit_worst[1] = er.hit_worst[1];
        r->mean_len = (double)R.nsteps / (double)R.n;
        double pm = 0, ex = 0;
        for (int64_t p = 0; p < R.n; p++) {
            int64_t h = 0, len = R.off[p + 1] - R.off[p];
            for (int64_t k = R.off[p]; k < R.off[p + 1]; k++) h += (qh[k] >> 1) & 1; /* random-tie Hit@5 */
            pm += (double)h / (double)len;
            ex += h == len;
        }
        r->plan_mean = pm / (double)R.n;
        r->exact = ex / (double)R.n;
    }
    free(qh);
    free(sp);
    free(steps.ref);
    plan_runs_free(&R);
    return st;
}

void ns_eval_plans_json(const ns_eval_plan_result *r, ns_buf *b)
{
    ns_buf_printf(b, "{\"n\": %lld, \"steps\": %lld, \"mean_len\": ", (long long)r->n, (long long)r->steps);
    ns_json_put_num(b, r->mean_len);
    put_at_k(b, "hit", "", r->hit, 2);
    put_at_k(b, "hit", "_worst", r->hit_worst, 2);
    ns_buf_puts(b, ", \"plan_mean_hit@5\": ");
    ns_json_put_num(b, r->plan_mean);
    ns_buf_puts(b, ", \"exact_hit@5\": ");
    ns_json_put_num(b, r->exact);
    ns_buf_putc(b, '}');
}

void ns_eval_plans_table(const ns_eval_plan_result *r, ns_buf *b)
{
    if (!r->n) {
        ns_buf_puts(b, "plans (teacher)    none wholly in the list\n");
        return;
    }
    ns_buf_printf(b,
                  "plans (teacher)    %lld plans, %lld steps (mean length %.2f): per-step Hit@1 %.2f%%, Hit@5 "
                  "%.2f%%; plan mean Hit@5 %.2f%%; exact Hit@5 %.2f%%\n",
                  (long long)r->n, (long long)r->steps, r->mean_len, 100 * r->hit[0], 100 * r->hit[1],
                  100 * r->plan_mean, 100 * r->exact);
}

/* ---- closed-loop rollout -------------------------------------------------------------- */

void ns_eval_rollout_free(ns_eval_rollout_result *r)
{
    free(r->depth);
    r->depth = NULL;
}

static void depth_add(ns_eval_rollout_depth *to, const ns_eval_rollout_depth *x)
{
    to->n += x->n;
    to->drift += x->drift;
    for (int g = 0; g < NS_ROLL_REGIMES; g++) to->hit[g][0] += x->hit[g][0], to->hit[g][1] += x->hit[g][1];
}

/* sums → means (NaN when empty) */
static void depth_mean(ns_eval_rollout_depth *x)
{
    double n = x->n ? (double)x->n : NAN;
    x->drift /= n;
    for (int g = 0; g < NS_ROLL_REGIMES; g++) x->hit[g][0] /= n, x->hit[g][1] /= n;
}

static double ratio(double a, double b) { return b > 0 ? a / b : NAN; }

ns_status ns_eval_rollout(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs, const int64_t *pools,
                          int pool_size, uint64_t seed, ns_eval_rollout_result *r, ns_error *err)
{
    memset(r, 0, sizeof *r);
    r->pool_size = pool_size;
    r->mean_len = NAN;
    r->retention[0] = r->retention[1] = r->retention_deep[0] = r->retention_deep[1] = NAN;
    ns_status st = ns_world_check_inputs(w, in, err);
    if (st) return st;
    plan_runs R;
    find_runs(in, refs, false, NULL, &R);
    r->runs = R.n;
    r->steps = R.nsteps;
    int64_t maxlen = 0;
    for (int64_t i = 0; i < R.n; i++)
        if (R.off[i + 1] - R.off[i] > maxlen) maxlen = R.off[i + 1] - R.off[i];
    r->depths = (int)maxlen;
    r->depth = ns_xcalloc((size_t)(maxlen ? maxlen : 1), sizeof *r->depth);
    if (R.n && (!pools || pool_size < 1)) {
        plan_runs_free(&R);
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "no candidate pools to rank");
    }
    const int O = w->cfg.out;
    const int64_t n = R.n;
    /* states: every step's source and pool (the snapped inputs are pool members) */
    int64_t *rows = ns_xmalloc((size_t)(R.nsteps ? R.nsteps : 1) * (1 + (size_t)pool_size) * sizeof *rows), nr = 0;
    int64_t *arow = ns_xmalloc((size_t)(R.nsteps ? R.nsteps : 1) * sizeof *arow);
    for (int64_t k = 0; k < R.nsteps; k++) {
        qinfo q = query(in, refs, R.src[k]);
        rows[nr++] = q.srow;
        const int64_t *pool = pools + R.src[k] * pool_size;
        for (int j = 0; j < pool_size; j++)
            if (pool[j] >= 0) rows[nr++] = in->state_base[q.d] + pool[j];
        /* state-action rows: the true (s_d, a_d) pair's row — the action encoding sees the true state */
        arow[k] = q.arow;
    }
    ns_world_ws *ws = ns_world_ws_new();
    stab tab;
    stab_init(&tab, w, ws, in, rows, nr);
    size_t vsz = (size_t)(n ? n : 1) * O * sizeof(float);
    float *HA = ns_xmalloc((size_t)(R.nsteps ? R.nsteps : 1) * O * sizeof(float));
    project_all(w, ws, &in->action, false, arow, R.nsteps, HA);
    float *X[NS_ROLL_REGIMES], *P[NS_ROLL_REGIMES], *PN[NS_ROLL_REGIMES];
    for (int g = 0; g < NS_ROLL_REGIMES; g++) X[g] = ns_xmalloc(vsz), P[g] = ns_xmalloc(vsz), PN[g] = ns_xmalloc(vsz);
    float *xb = ns_xmalloc(vsz), *ab = ns_xmalloc(vsz), *pnorm = ns_xmalloc((size_t)(n ? n : 1) * sizeof(float));
    int64_t *act = ns_xmalloc((size_t)(n ? n : 1) * sizeof *act);
    for (int64_t i = 0; i < n; i++)
        for (int g = 0; g < NS_ROLL_REGIMES; g++)
            memcpy(X[g] + (size_t)i * O, stab_raw(&tab, query(in, refs, R.src[R.off[i]]).srow), (size_t)O * sizeof(float));
    for (int64_t d = 1; d <= maxlen; d++) {
        int64_t na = 0;
        for (int64_t i = 0; i < n; i++)
            if (R.off[i + 1] - R.off[i] >= d) act[na++] = i;
        for (int g = 0; g < NS_ROLL_REGIMES; g++) {
            for (int64_t a = 0; a < na; a++) {
                memcpy(xb + (size_t)a * O, X[g] + (size_t)act[a] * O, (size_t)O * sizeof(float));
                memcpy(ab + (size_t)a * O, HA + (size_t)(R.off[act[a]] + d - 1) * O, (size_t)O * sizeof(float));
            }
            for (int64_t a0 = 0; a0 < na; a0 += 1024) {
                int m = (int)(na - a0 < 1024 ? na - a0 : 1024);
                ns_world_transition(w, ws, xb + (size_t)a0 * O, ab + (size_t)a0 * O, m, P[g] + (size_t)a0 * O);
            }
            ns_l2norm_forward(PN[g], pnorm, P[g], (int)na, O);
        }
        ns_eval_rollout_depth *dr = &r->depth[d - 1];
        for (int64_t a = 0; a < na; a++) {
            int64_t i = act[a], k = R.off[i] + d - 1;
            qinfo q = query(in, refs, R.src[k]);
            const int64_t *pool = pools + R.src[k] * pool_size;
            uint64_t key = ns_hash_mix(seed ^ ns_hash_mix((uint64_t)i * 0x9e3779b97f4a7c15ULL + (uint64_t)d));
            ns_rng tie0, snap;
            ns_rng_seed(&tie0, key ^ 0x726f6c6cULL);
            ns_rng_seed(&snap, key ^ 0x736e6170ULL);
            bool more = R.off[i] + d < R.off[i + 1];
            for (int g = 0; g < NS_ROLL_REGIMES; g++) {
                ns_rng tie = tie0; /* the same draws in every regime: equal ranks, equal hits */
                rank_r rr = rank_pool(&tab, PN[g] + (size_t)a * O, 1.0f, in->state_base[q.d], pool, pool_size,
                                      g == NS_ROLL_SNAPPED ? &snap : NULL);
                double h[3] = {0}, hw[3] = {0};
                ns_eval_tally(h, hw, rr.gt, rr.eq, &tie, NULL);
                dr->hit[g][0] += h[0];
                dr->hit[g][1] += h[1];
                if (g == NS_ROLL_UNSNAPPED) dr->drift += rr.best;
                if (!more) continue;
                float *x = X[g] + (size_t)i * O;
                if (g == NS_ROLL_TEACHER)
                    memcpy(x, stab_raw(&tab, query(in, refs, R.src[k + 1]).srow), (size_t)O * sizeof(float));
                else if (g == NS_ROLL_SNAPPED)
                    memcpy(x, stab_raw(&tab, rr.best_row), (size_t)O * sizeof(float));
                else
                    memcpy(x, P[g] + (size_t)a * O, (size_t)O * sizeof(float));
            }
            dr->n++;
        }
    }
    for (int64_t d = 0; d < maxlen; d++) {
        depth_add(&r->all, &r->depth[d]);
        if (d > 0) depth_add(&r->deep, &r->depth[d]);
        depth_mean(&r->depth[d]);
    }
    depth_mean(&r->all);
    depth_mean(&r->deep);
    if (n) r->mean_len = (double)R.nsteps / (double)n;
    for (int g = 0; g < 2; g++) {
        r->retention[g] = ratio(r->all.hit[1 + g][0], r->all.hit[NS_ROLL_TEACHER][0]);
        r->retention_deep[g] = ratio(r->deep.hit[1 + g][0], r->deep.hit[NS_ROLL_TEACHER][0]);
    }
    stab_free(&tab);
    free(arow);
    free(HA);
    for (int g = 0; g < NS_ROLL_REGIMES; g++) free(X[g]), free(P[g]), free(PN[g]);
    free(xb);
    free(ab);
    free(pnorm);
    free(act);
    ns_world_ws_free(ws);
    plan_runs_free(&R);
    return NS_OK;
}

static const char *const REGIME[NS_ROLL_REGIMES] = {"teacher", "snapped", "unsnapped"};

static void depth_json(const ns_eval_rollout_depth *x, ns_buf *b)
{
    ns_buf_printf(b, "\"n\": %lld", (long long)x->n);
    for (int g = 0; g < NS_ROLL_REGIMES; g++) {
        ns_buf_printf(b, ", \"%s\": ", REGIME[g]);
        put_nums(b, x->hit[g], 2);
    }
    ns_buf_puts(b, ", \"drift\": ");
    ns_json_put_num(b, x->drift);
}

void ns_eval_rollout_json(const ns_eval_rollout_result *r, ns_buf *b)
{
    ns_buf_printf(b, "{\"pool_size\": %d, \"runs\": %lld, \"steps\": %lld, \"mean_len\": ", r->pool_size,
                  (long long)r->runs, (long long)r->steps);
    ns_json_put_num(b, r->mean_len);
    ns_buf_puts(b, ", \"regimes\": [\"teacher\", \"snapped\", \"unsnapped\"], \"hits\": [\"hit@1\", \"hit@5\"], "
                   "\"depths\": [");
    for (int d = 0; d < r->depths; d++) {
        ns_buf_printf(b, "%s{\"depth\": %d, ", d ? ", " : "", d + 1);
        depth_json(&r->depth[d], b);
        ns_buf_putc(b, '}');
    }
    ns_buf_puts(b, "], \"all\": {");
    depth_json(&r->all, b);
    ns_buf_puts(b, "}, \"deep\": {");
    depth_json(&r->deep, b);
    ns_buf_puts(b, "}, \"retention\": {\"snapped\": ");
    ns_json_put_num(b, r->retention[0]);
    ns_buf_puts(b, ", \"unsnapped\": ");
    ns_json_put_num(b, r->retention[1]);
    ns_buf_puts(b, ", \"snapped_deep\": ");
    ns_json_put_num(b, r->retention_deep[0]);
    ns_buf_puts(b, ", \"unsnapped_deep\": ");
    ns_json_put_num(b, r->retention_deep[1]);
    ns_buf_puts(b, "}}");
}

static void depth_row(const char *name, const ns_eval_rollout_depth *x, ns_buf *b)
{
    if (!x->n) {
        ns_buf_printf(b, "  %-8s %6d\n", name, 0);
        return;
    }
    ns_buf_printf(b, "  %-8s %6lld", name, (long long)x->n);
    for (int g = 0; g < NS_ROLL_REGIMES; g++) ns_buf_printf(b, "  %6.2f%% %6.2f%%", 100 * x->hit[g][0], 100 * x->hit[g][1]);
    ns_buf_printf(b, "  %6.3f\n", x->drift);
}

void ns_eval_rollout_table(const ns_eval_rollout_result *r, ns_buf *b)
{
    char pool[32];
    if (r->pool_size) snprintf(pool, sizeof pool, "%d", r->pool_size);
    else snprintf(pool, sizeof pool, "-");
    ns_buf_printf(b, "rollout            %lld trajectories, %lld steps (mean length %.2f), pools of %s\n",
                  (long long)r->runs, (long long)r->steps, r->runs ? r->mean_len : 0.0, pool);
    ns_buf_puts(b, "  depth         n   teacher @1/@5     snapped @1/@5   unsnapped @1/@5   drift\n");
    for (int d = 0; d < r->depths; d++) {
        char name[16];
        snprintf(name, sizeof name, "%d", d + 1);
        depth_row(name, &r->depth[d], b);
    }
    depth_row("all", &r->all, b);
    depth_row("2+", &r->deep, b);
    ns_buf_printf(b, "  retention (Hit@1 ÷ teacher): snapped %.3f, unsnapped %.3f; from depth 2: %.3f, %.3f\n",
                  r->retention[0], r->retention[1], r->retention_deep[0], r->retention_deep[1]);
}
