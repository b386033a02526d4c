/* evaluate.c — Hit@k, Acc@k and latency of a world model (see evaluate.h). */
#include "nextstate/evaluate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nextstate/blas.h"
#include "nextstate/json.h"
#include "nextstate/loss.h"
#include "nextstate/nn.h"

void ns_eval_opts_init(ns_eval_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->acc = true;
    o->latency_queries = 200;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int64_t uniq_sort(int64_t *a, int64_t n)
{
    qsort(a, (size_t)n, sizeof *a, cmp_i64);
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

void ns_eval_tally(double *hit, double *worst, int64_t greater, int64_t equal, ns_rng *rng, double *rr)
{
    int64_t rank = greater + (int64_t)ns_rng_below(rng, (uint64_t)equal + 1); /* 0-based */
    int64_t wr = greater + equal + 1;                                         /* 1-based worst */
    static const int ks[3] = {1, 5, 10};
    for (int k = 0; k < 3; k++) {
        if (rank < ks[k]) hit[k] += 1;
        if (wr <= ks[k]) worst[k] += 1;
    }
    if (rr) *rr += 1.0 / (double)(rank + 1);
}

/* The best score of each of n normalised predictions pr [n × O] against pc
 * normalised candidates cand [pc × O] (scratch sc: n × pc). */
static float score_best(const float *pr, int n, const float *cand, int pc, int O, float *sc)
{
    float best = -2;
    if (n == 1) ns_dots(sc, pr, cand, pc, O);
    else ns_sgemm(false, true, n, pc, O, 1.0f, pr, O, cand, O, 0.0f, sc, pc);
    for (size_t i = 0; i < (size_t)n * pc; i++)
        if (sc[i] > best) best = sc[i];
    return best;
}

/* Latency per transition on the first m test queries, candidates' normalised
 * projections cached (see evaluate.h): (a) batch 1 and in batches of
 * NS_EVAL_LAT_BATCH queries; (b) T + scoring at batch 1, with the split T at
 * batch 1, and with the split T over every applicable action of the query
 * state (one expansion of a search), per transition.  Repeated until 0.2 s
 * or 50 passes; the scores feed a volatile sink so nothing is elided. */
static void measure_latency(const ns_world *w, ns_world_ws *ws, const ns_world_inputs *in, const ns_refs *refs,
                            const int64_t *pools, int pool_size, const int64_t *srows, int64_t nsr, const float *HSn,
                            int queries, ns_eval_result *r)
{
    const int O = w->cfg.out, BQ = NS_EVAL_LAT_BATCH;
    int64_t m = refs->n < queries ? refs->n : queries;
    int sd, ad;
    ns_world_tsplit_dims(w, &sd, &ad);
    /* per query (untimed set-up, what a search keeps next to its states and actions): candidates, the
     * applicable actions' projections and split-T parts */
    float *cand = ns_xmalloc((size_t)m * pool_size * O * sizeof(float));
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
            if (pool[j] >= 0)
                memcpy(cand + ((size_t)i * pool_size + (size_t)pc[i]++) * O,
                       HSn + (size_t)find(srows, nsr, in->state_base[q.d] + pool[j]) * O, (size_t)O * sizeof(float));
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
    float *sc = ns_xmalloc((size_t)wide * pool_size * sizeof(float));
    double t[5] = {0};
    int64_t cnt[5] = {0};
    volatile float sink = 0;
    int reps = 0;
    double tstart = ns_now();
    do {
        for (int64_t i = 0; i < m; i++) {
            const float *ci = cand + (size_t)i * pool_size * O;
            double a0 = ns_now();
            /* (a) batch 1: both heads, T, normalise, score */
            ns_world_project(w, ws, &in->state, true, qs + i, 1, xh);
            ns_world_project(w, ws, &in->action, false, qa + i, 1, xa);
            ns_world_transition(w, ws, xh, xa, 1, pr);
            ns_l2norm_forward(pr, nrm, pr, 1, O);
            float b0 = score_best(pr, 1, ci, pc[i], O, sc);
            double a1 = ns_now();
            /* (b) T + scoring, batch 1 */
            ns_world_transition(w, ws, hs + (size_t)i * O, ha + (size_t)i * O, 1, pr);
            ns_l2norm_forward(pr, nrm, pr, 1, O);
            float b1 = score_best(pr, 1, ci, pc[i], O, sc);
            double a2 = ns_now();
            /* (b) split T + scoring, batch 1 */
            ns_world_transition_split(w, ws, ts + (size_t)i * sd, 0, ta + (size_t)i * ad, 0, 1, pr);
            ns_l2norm_forward(pr, nrm, pr, 1, O);
            float b2 = score_best(pr, 1, ci, pc[i], O, sc);
            double a3 = ns_now();
            /* (b) one expansion: split T for every applicable action of the state, scored */
            int na = (int)(app_off[i + 1] - app_off[i]);
            ns_world_transition_split(w, ws, ts + (size_t)i * sd, 0, appt + (size_t)app_off[i] * ad, (size_t)ad, na, pr);
            ns_l2norm_forward(pr, nrm, pr, na, O);
            float b3 = score_best(pr, na, ci, pc[i], O, sc);
            double a4 = ns_now();
            sink += b0 + b1 + b2 + b3;
            t[0] += a1 - a0, t[1] += a2 - a1, t[2] += a3 - a2, t[3] += a4 - a3;
            cnt[0]++, cnt[1]++, cnt[2]++, cnt[3] += na;
        }
        /* (a) in batches: BQ queries' heads and T at once, each scored against its own pool */
        for (int64_t i = 0; i < m; i += BQ) {
            int k = (int)(m - i < BQ ? m - i : BQ);
            double a0 = ns_now();
            ns_world_project(w, ws, &in->state, true, qs + i, k, xh);
            ns_world_project(w, ws, &in->action, false, qa + i, k, xa);
            ns_world_transition(w, ws, xh, xa, k, pr);
            ns_l2norm_forward(pr, nrm, pr, k, O);
            float b = -2;
            for (int j = 0; j < k; j++) {
                float v = score_best(pr + (size_t)j * O, 1, cand + (size_t)(i + j) * pool_size * O, pc[i + j], O, sc);
                if (v > b) b = v;
            }
            t[4] += ns_now() - a0;
            cnt[4] += k;
            sink += b;
        }
        reps++;
    } while (ns_now() - tstart < 0.2 && reps < 50);
    (void)sink;
    r->lat_n = m * reps;
    r->lat_full_us = t[0] / (double)cnt[0] * 1e6;
    r->lat_t_us = t[1] / (double)cnt[1] * 1e6;
    r->lat_split_us = t[2] / (double)cnt[2] * 1e6;
    r->lat_expand_us = t[3] / (double)cnt[3] * 1e6;
    r->lat_expand_actions = (double)cnt[3] / (double)(m * reps);
    r->lat_full_batch_us = t[4] / (double)cnt[4] * 1e6;
    free(cand), free(pc), free(qs), free(qa), free(app_off), free(arows), free(hs), free(ha), free(appa), free(ts);
    free(ta), free(appt), free(pr), free(nrm), free(xh), free(xa), free(sc);
}

static ns_status run(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs, const int64_t *pools,
                     int pool_size, const ns_eval_opts *o, ns_eval_result *r, ns_error *err)
{
    memset(r, 0, sizeof *r);
    ns_status st = ns_world_check_inputs(w, in, err);
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
    ns_ = uniq_sort(srows, ns_);
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
    float *HS = ns_xmalloc((size_t)ns_ * O * sizeof(float)), *HSn = ns_xmalloc((size_t)ns_ * O * sizeof(float));
    float *HA = ns_xmalloc((size_t)(na_ ? na_ : 1) * O * sizeof(float));
    float *norm = ns_xmalloc((size_t)(ns_ > 1024 ? ns_ : 1024) * sizeof(float));
    project_all(w, ws, &in->state, true, srows, ns_, HS);
    project_all(w, ws, &in->action, false, arows, na_, HA);
    ns_l2norm_forward(HSn, norm, HS, (int)ns_, O);
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
            const float *hs = HS + (size_t)find(srows, ns_, q.srow) * O;
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
        ns_l2norm_forward(pred, pnorm, pred, (int)P, O);
        for (int k = 0; k < qn; k++) {
            qinfo q = query(in, refs, q0 + k);
            const float *tp = pred + (size_t)qstart[k] * O;
            const int64_t *pool = pools + (q0 + k) * pool_size;
            float ts = dot(tp, HSn + (size_t)find(srows, ns_, in->state_base[q.d] + pool[0]) * O, O);
            int64_t gt = 0, eq = 0, cnt = 1;
            for (int j = 1; j < pool_size; j++) {
                if (pool[j] < 0) continue;
                cnt++;
                float s = dot(tp, HSn + (size_t)find(srows, ns_, in->state_base[q.d] + pool[j]) * O, O);
                if (s > ts) gt++;
                else if (s == ts) eq++;
            }
            npool += (double)cnt;
            ns_eval_tally(r->hit, r->hit_worst, gt, eq, &rng, &r->mrr);
            if (!o->acc) continue;
            int64_t m = qstart[k + 1] - qstart[k];
            napp += (double)m;
            r->n_acc++;
            const float *tg = HSn + (size_t)find(srows, ns_, q.nrow) * O;
            float as = dot(tp, tg, O);
            gt = eq = 0;
            for (int64_t j = 1; j < m; j++) {
                float s = dot(pred + (size_t)(qstart[k] + j) * O, tg, O);
                if (s > as) gt++;
                else if (s == as) eq++;
            }
            ns_eval_tally(r->acc, r->acc_worst, gt, eq, &rng, NULL);
        }
        ns_progress_update(&pg, (long)(q0 + qn), (long)n, "queries");
    }
    ns_progress_done(&pg);
    for (int k = 0; k < 3; k++) {
        r->hit[k] /= (double)n;
        r->hit_worst[k] /= (double)n;
        if (r->n_acc) r->acc[k] /= (double)r->n_acc, r->acc_worst[k] /= (double)r->n_acc;
    }
    r->mrr /= (double)n;
    r->mean_pool = npool / (double)n;
    r->mean_actions = r->n_acc ? napp / (double)r->n_acc : 0;

    if (o->latency_queries > 0) measure_latency(w, ws, in, refs, pools, pool_size, srows, ns_, HSn, o->latency_queries, r);
    r->seconds = ns_now() - t0;
    free(srows);
    free(arows);
    free(HS);
    free(HSn);
    free(HA);
    free(norm);
    free(phs);
    free(pha);
    free(pred);
    free(pnorm);
    free(qstart);
    ns_world_ws_free(ws);
    return NS_OK;
}

ns_status ns_eval_world(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs, const int64_t *pools,
                        int pool_size, const ns_eval_opts *o, ns_eval_result *r, ns_error *err)
{
    ns_eval_opts d;
    if (!o) ns_eval_opts_init(&d), o = &d;
    if (w->cfg.out > 4096) return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "head output wider than 4096");
    return run(w, in, refs, pools, pool_size, o, r, err);
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
    ns_status st = run(w, in, refs, pools, pool_size, &o, &r, err);
    if (!st) memcpy(hit, r.hit, sizeof r.hit);
    if (!st && mrr) *mrr = r.mrr;
    return st;
}

int64_t *ns_eval_make_pools(const ns_world_inputs *in, const ns_refs *refs, ns_protocol proto, int pool_size,
                            uint64_t seed)
{
    int64_t *pools = ns_xmalloc((size_t)(refs->n ? refs->n : 1) * pool_size * sizeof *pools);
    bool same_problem =
        proto == NS_PROTO_EXTRAPOLATION || proto == NS_PROTO_MULTI_DOMAIN || proto == NS_PROTO_PLAN_VARIANT;
    for (int64_t i = 0; i < refs->n; i++) {
        int d = (int)refs->ref[2 * i];
        int64_t t = refs->ref[2 * i + 1];
        const ns_dataset *ds = in->ds[d];
        const int32_t *tr = ns_dataset_transition(ds, t);
        int64_t lo = 0, hi = ns_dataset_nstates(ds);
        if (same_problem) {
            lo = ds->problems[tr[0]].state_offset;
            hi = lo + ds->problems[tr[0]].nstates;
        }
        ns_rng rng;
        ns_rng_seed(&rng, ns_hash_mix(seed ^ ns_hash_mix((uint64_t)d * 0x9e3779b97f4a7c15ULL + (uint64_t)t)));
        int64_t *row = pools + i * pool_size;
        row[0] = tr[3];
        int k = 1;
        int64_t avail = hi - lo - 1;
        if (avail <= pool_size - 1) {
            for (int64_t s = lo; s < hi; s++)
                if (s != tr[3]) row[k++] = s;
        } else {
            while (k < pool_size) {
                int64_t s = lo + (int64_t)ns_rng_below(&rng, (uint64_t)(hi - lo));
                bool dup = s == tr[3];
                for (int j = 1; j < k && !dup; j++) dup = row[j] == s;
                if (!dup) row[k++] = s;
            }
        }
        for (; k < pool_size; k++) row[k] = -1;
    }
    return pools;
}

void ns_eval_json(const ns_eval_result *r, ns_buf *b)
{
    ns_buf_printf(b, "{\"n\": %lld, \"pool_size\": %d, \"mean_pool\": ", (long long)r->n, r->pool_size);
    ns_json_put_num(b, r->mean_pool);
    static const char *ks[3] = {"1", "5", "10"};
    for (int k = 0; k < 3; k++) {
        ns_buf_printf(b, ", \"hit@%s\": ", ks[k]);
        ns_json_put_num(b, r->hit[k]);
    }
    for (int k = 0; k < 3; k++) {
        ns_buf_printf(b, ", \"hit@%s_worst\": ", ks[k]);
        ns_json_put_num(b, r->hit_worst[k]);
    }
    ns_buf_puts(b, ", \"mrr\": ");
    ns_json_put_num(b, r->mrr);
    ns_buf_printf(b, ", \"n_acc\": %lld", (long long)r->n_acc);
    for (int k = 0; k < 3; k++) {
        ns_buf_printf(b, ", \"acc@%s\": ", ks[k]);
        ns_json_put_num(b, r->acc[k]);
    }
    for (int k = 0; k < 3; k++) {
        ns_buf_printf(b, ", \"acc@%s_worst\": ", ks[k]);
        ns_json_put_num(b, r->acc_worst[k]);
    }
    ns_buf_puts(b, ", \"mean_actions\": ");
    ns_json_put_num(b, r->mean_actions);
    ns_buf_puts(b, ", \"latency_full_us\": ");
    ns_json_put_num(b, r->lat_full_us);
    ns_buf_puts(b, ", \"latency_transition_us\": ");
    ns_json_put_num(b, r->lat_t_us);
    ns_buf_puts(b, ", \"latency_full_batch_us\": ");
    ns_json_put_num(b, r->lat_full_batch_us);
    ns_buf_puts(b, ", \"latency_transition_split_us\": ");
    ns_json_put_num(b, r->lat_split_us);
    ns_buf_puts(b, ", \"latency_expand_us\": ");
    ns_json_put_num(b, r->lat_expand_us);
    ns_buf_puts(b, ", \"latency_expand_actions\": ");
    ns_json_put_num(b, r->lat_expand_actions);
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
