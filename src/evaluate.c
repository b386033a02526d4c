/* evaluate.c — Hit@k, Acc@k and latency of a world model (see evaluate.h). */
#include "nextstate/evaluate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nextstate/json.h"
#include "nextstate/loss.h"

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
    float s = 0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
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

    /* latency, batch 1, cached normalised candidate projections */
    if (o->latency_queries > 0) {
        int64_t m = n < o->latency_queries ? n : o->latency_queries;
        float *cand = ns_xmalloc((size_t)pool_size * O * sizeof(float));
        float hs[4096], ha[4096], pr[4096], scores[1024], nrm;
        (void)scores;
        double tf = 0, tt = 0;
        volatile float sink = 0;
        int reps = 0;
        double tstart = ns_now();
        do {
            for (int64_t i = 0; i < m; i++) {
                qinfo q = query(in, refs, i);
                const int64_t *pool = pools + i * pool_size;
                int pc = 0;
                for (int j = 0; j < pool_size; j++)
                    if (pool[j] >= 0)
                        memcpy(cand + (size_t)pc++ * O,
                               HSn + (size_t)find(srows, ns_, in->state_base[q.d] + pool[j]) * O,
                               (size_t)O * sizeof(float));
                /* (a) full */
                double a0 = ns_now();
                ns_world_project(w, ws, &in->state, true, &q.srow, 1, hs);
                ns_world_project(w, ws, &in->action, false, &q.arow, 1, ha);
                ns_world_transition(w, ws, hs, ha, 1, pr);
                ns_l2norm_forward(pr, &nrm, pr, 1, O);
                float best = -2;
                for (int j = 0; j < pc; j++) {
                    float s = dot(pr, cand + (size_t)j * O, O);
                    if (s > best) best = s;
                }
                double a1 = ns_now();
                /* (b) T + scoring */
                ns_world_transition(w, ws, hs, ha, 1, pr);
                ns_l2norm_forward(pr, &nrm, pr, 1, O);
                float best2 = -2;
                for (int j = 0; j < pc; j++) {
                    float s = dot(pr, cand + (size_t)j * O, O);
                    if (s > best2) best2 = s;
                }
                double a2 = ns_now();
                sink += best + best2;
                tf += a1 - a0;
                tt += a2 - a1;
            }
            reps++;
        } while (ns_now() - tstart < 0.2 && reps < 50);
        (void)sink;
        r->lat_n = m * reps;
        r->lat_full_us = tf / (double)r->lat_n * 1e6;
        r->lat_t_us = tt / (double)r->lat_n * 1e6;
        free(cand);
    }
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
        ns_buf_printf(b, "latency            (a) full %.1f us   (b) T + scoring %.1f us   (%lld timed queries)\n",
                      r->lat_full_us, r->lat_t_us, (long long)r->lat_n);
    ns_buf_printf(b, "parameters         state head %zu, action head %zu, T %zu, total %zu\n", r->params_state,
                  r->params_action, r->params_t, r->params_total);
}
