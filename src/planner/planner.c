/* planner.c — beam decoding and model-guided search over γ (see planner.h). */
#include "nextstate/planner/planner.h"
#include "nextstate/core/plan.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "nextstate/core/search.h"
#include "nextstate/core/state.h"
#include "nextstate/core/succgen.h"
#include "nextstate/util/forkmap.h"
#include "nextstate/util/util.h"

void ns_planner_opts_default(ns_planner_opts *o)
{
    memset(o, 0, sizeof *o);
    o->algo = NS_PLAN_BEAM;
    o->width = 3;
}

int ns_planner_algo_parse(const char *name)
{
    if (!strcmp(name, "beam")) return NS_PLAN_BEAM;
    if (!strcmp(name, "restart")) return NS_PLAN_RESTART;
    if (!strcmp(name, "search")) return NS_PLAN_SEARCH;
    if (!strcmp(name, "guided")) return NS_PLAN_GUIDED;
    if (!strcmp(name, "lama")) return NS_PLAN_LAMA;
    if (!strcmp(name, "lama-h")) return NS_PLAN_LAMA_H;
    return -1;
}

const char *ns_planner_algo_name(ns_planner_algo a)
{
    static const char *const names[] = {"beam", "restart", "search", "guided", "lama", "lama-h"};
    return names[a];
}

void ns_planner_result_free(ns_planner_result *r)
{
    free(r->plan);
    r->plan = NULL;
}

/* A node of a path tree: the state reached by op from parent. */
typedef struct node {
    int parent, op, depth;
    uint32_t sid;
    double key;
    long rs; /* offset of the recurrent state after this node's step, -1 before */
} node;

typedef struct ctx {
    const ns_predictor *m;
    const ns_task *t;
    ns_planner_result *r;
    ns_succgen sg;
    ns_registry reg;
    ns_encoder enc;
    ns_predictor_ws *ws;
    size_t D, RS;
    float *phi_g, *phi, *next, *phic;
    int *apps;
    ns_word *succ;
    node *nodes;
    size_t nnodes, ncap;
    float *rs;
    size_t rs_n, rs_cap;
    double t0, deadline;
    int *pa, *pb; /* path scratch [depth cap] */
    uint32_t *layer_mark; /* diverse beams: state id -> stamp of the last layer that took it */
    size_t mark_cap;
    uint32_t stamp;
    size_t pcap;
} ctx;

static long push_node(ctx *c, node n)
{
    NS_GROW(c->nodes, c->ncap, c->nnodes + 1);
    c->nodes[c->nnodes] = n;
    return (long)c->nnodes++;
}

/* A context for model m on task t, reporting into r; ctx_close frees it. */
static ns_status ctx_open(ctx *c, const ns_predictor *m, const ns_task *t, ns_planner_result *r, ns_error *err)
{
    memset(c, 0, sizeof *c);
    c->m = m;
    c->t = t;
    c->r = r;
    ns_status st = ns_encoder_init(&c->enc, &m->enc, t, err);
    if (st != NS_OK) return st;
    c->D = (size_t)m->dim;
    c->RS = ns_predictor_rstate_floats(m);
    c->ws = ns_predictor_ws_new(m);
    c->phi_g = ns_xcalloc(c->D, sizeof(float));
    c->phi = ns_xcalloc(c->D, sizeof(float));
    c->phic = ns_xcalloc(c->D, sizeof(float));
    c->next = ns_xcalloc(c->D, sizeof(float));
    c->apps = ns_xcalloc((size_t)t->nops + 1, sizeof(int));
    c->succ = ns_xcalloc((size_t)t->nwords + 1, sizeof(ns_word));
    ns_encoder_goal(&c->enc, c->phi_g);
    ns_succgen_init(&c->sg, t);
    ns_registry_init(&c->reg, t->nwords);
    return NS_OK;
}

static void ctx_close(ctx *c)
{
    free(c->phi_g), free(c->phi), free(c->phic), free(c->next), free(c->apps), free(c->succ);
    free(c->nodes), free(c->rs), free(c->pa), free(c->pb), free(c->layer_mark);
    ns_predictor_ws_free(c->ws);
    ns_succgen_free(&c->sg);
    ns_registry_free(&c->reg);
    ns_encoder_free(&c->enc);
}

static bool timed_out(const ctx *c) { return c->deadline > 0 && ns_cpu_now() > c->deadline; }

/* Runs the model at node ni: φ(s) into c->phi, the prediction into c->next,
 * and the node's recurrent state stored. */
static ns_status predict_at(ctx *c, long ni, ns_error *err)
{
    node *n = &c->nodes[ni];
    double t0 = ns_cpu_now();
    ns_encoder_state(&c->enc, ns_registry_get(&c->reg, n->sid), c->phi);
    const float *rin = NULL;
    float *rout = NULL;
    if (c->RS) {
        NS_GROW(c->rs, c->rs_cap, c->rs_n + c->RS);
        rout = c->rs + c->rs_n;
        rin = n->parent >= 0 ? c->rs + c->nodes[n->parent].rs : NULL; /* rs may have moved */
        c->nodes[ni].rs = (long)c->rs_n;
        c->rs_n += c->RS;
    }
    ns_status st = ns_predictor_step(c->m, c->ws, c->phi, c->phi_g, rin, rout, c->next, err);
    c->r->predictions++;
    c->r->model_seconds += ns_cpu_now() - t0;
    return st;
}

/* Cost of successor state s against the current prediction (the caller
 * counts the time: the CPU clock is a system call). */
static float score_untimed(ctx *c, const ns_word *s)
{
    ns_encoder_state(&c->enc, s, c->phic);
    return ns_predictor_cost(c->m, c->next, c->phic);
}

static float score(ctx *c, const ns_word *s)
{
    double t0 = ns_cpu_now();
    float v = score_untimed(c, s);
    c->r->model_seconds += ns_cpu_now() - t0;
    return v;
}

static void extract_plan(ctx *c, long ni)
{
    int len = c->nodes[ni].depth;
    c->r->plan = ns_xcalloc((size_t)len + 1, sizeof(int));
    c->r->plan_len = len;
    for (long k = ni; c->nodes[k].parent >= 0; k = c->nodes[k].parent) c->r->plan[c->nodes[k].depth - 1] = c->nodes[k].op;
}

static bool on_path(const ctx *c, long ni, uint32_t sid)
{
    for (long k = ni; k >= 0; k = c->nodes[k].parent)
        if (c->nodes[k].sid == sid) return true;
    return false;
}

/* ---- beam ------------------------------------------------------------------------ */

typedef struct cand {
    long parent;
    int op;
    uint32_t sid;
    double key;
} cand;

/* Operators from the root to node ni (then op), into buf; returns the length. */
static int path_ops(ctx *c, long ni, int op, int *buf)
{
    int len = c->nodes[ni].depth + 1;
    buf[len - 1] = op;
    for (long k = ni; c->nodes[k].parent >= 0; k = c->nodes[k].parent) buf[c->nodes[k].depth - 1] = c->nodes[k].op;
    return len;
}

/* (key, plan) order: the plan compared operator by operator (id order is
 * name order). */
static int cand_cmp(ctx *c, const cand *a, const cand *b)
{
    if (a->key < b->key) return -1;
    if (a->key > b->key) return 1;
    int la = path_ops(c, a->parent, a->op, c->pa), lb = path_ops(c, b->parent, b->op, c->pb);
    for (int i = 0; i < la && i < lb; i++)
        if (c->pa[i] != c->pb[i]) return c->pa[i] < c->pb[i] ? -1 : 1;
    return la < lb ? -1 : la > lb;
}

static void cand_sort(ctx *c, cand *v, cand *tmp, size_t n)
{
    if (n < 2) return;
    size_t h = n / 2;
    cand_sort(c, v, tmp, h);
    cand_sort(c, v + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = cand_cmp(c, &v[j], &v[i]) < 0 ? v[j++] : v[i++];
    while (i < h) tmp[k++] = v[i++];
    while (j < n) tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof(cand));
}

/* One beam search of width W.  NS_OK with a plan, NS_INCOMPLETE when the
 * step cap is hit or no candidate is left (*dropped tells whether some step
 * had to drop candidates), NS_OUT_OF_TIME.  diverse (restarts): a state
 * enters a layer once (its best path), and a goal is taken as soon as it is
 * generated. */
static ns_status beam(ctx *c, int W, int max_steps, bool diverse, bool *dropped, ns_error *err)
{
    *dropped = false;
    c->nnodes = 0;
    c->rs_n = 0;
    size_t W_ = (size_t)W;
    long *bm = ns_xcalloc(W_, sizeof(long));
    size_t nb = 1;
    bm[0] = push_node(c, (node){-1, -1, 0, 0, 0.0, -1});
    cand *cv = NULL, *tmp = NULL;
    size_t ccap = 0, tcap = 0;
    ns_status st = NS_INCOMPLETE;
    for (int step = 0;; step++) {
        bool done = false;
        for (size_t i = 0; i < nb && !done; i++)
            if (ns_task_is_goal(c->t, ns_registry_get(&c->reg, c->nodes[bm[i]].sid))) {
                extract_plan(c, bm[i]);
                st = NS_OK;
                done = true;
            }
        if (done || step >= max_steps) break;
        if (timed_out(c)) {
            st = NS_OUT_OF_TIME;
            break;
        }
        size_t nc = 0;
        for (size_t i = 0; i < nb; i++) {
            long ni = bm[i];
            if (timed_out(c)) {
                st = NS_OUT_OF_TIME;
                break;
            }
            st = predict_at(c, ni, err);
            if (st != NS_OK) break;
            st = NS_INCOMPLETE;
            c->r->expanded++;
            const ns_word *s = ns_registry_get(&c->reg, c->nodes[ni].sid);
            int na = ns_succgen_applicable(&c->sg, s, c->apps);
            for (int k = 0; k < na; k++) {
                ns_task_apply(c->t, c->apps[k], ns_registry_get(&c->reg, c->nodes[ni].sid), c->succ);
                bool fresh;
                uint32_t sid = ns_registry_insert(&c->reg, c->succ, &fresh);
                if (!fresh && on_path(c, ni, sid)) continue;
                float v = score(c, c->succ);
                NS_GROW(cv, ccap, nc + 1);
                cv[nc++] = (cand){ni, c->apps[k], sid, c->nodes[ni].key + (double)v};
            }
        }
        if (st != NS_INCOMPLETE) break;
        if (nc == 0) break;
        if (c->pcap < (size_t)step + 2) {
            c->pcap = 2 * ((size_t)step + 2);
            c->pa = ns_xrealloc(c->pa, c->pcap * sizeof(int));
            c->pb = ns_xrealloc(c->pb, c->pcap * sizeof(int));
        }
        NS_GROW(tmp, tcap, nc);
        cand_sort(c, cv, tmp, nc);
        if (diverse) {
            /* the first (best) path to each state only */
            size_t k = 0, old = c->mark_cap;
            NS_GROW(c->layer_mark, c->mark_cap, (size_t)c->reg.n);
            memset(c->layer_mark + old, 0, (c->mark_cap - old) * sizeof(uint32_t));
            uint32_t stamp = ++c->stamp;
            for (size_t i = 0; i < nc; i++) {
                if (c->layer_mark[cv[i].sid] == stamp) continue;
                c->layer_mark[cv[i].sid] = stamp;
                cv[k++] = cv[i];
            }
            nc = k;
            for (size_t i = 0; i < nc; i++)
                if (ns_task_is_goal(c->t, ns_registry_get(&c->reg, cv[i].sid))) {
                    cv[0] = cv[i];
                    nc = 1;
                    break;
                }
        }
        if (nc > W_) *dropped = true;
        nb = nc < W_ ? nc : W_;
        for (size_t i = 0; i < nb; i++) {
            const node *p = &c->nodes[cv[i].parent];
            bm[i] = push_node(c, (node){(int)cv[i].parent, cv[i].op, p->depth + 1, cv[i].sid, cv[i].key, -1});
        }
    }
    free(bm);
    free(cv);
    free(tmp);
    return st;
}

/* ---- best-first search on regret --------------------------------------------------- */

typedef struct hitem {
    double key;
    int depth;
    long seq, node;
} hitem;

static bool h_less(const hitem *a, const hitem *b)
{
    if (a->key != b->key) return a->key < b->key;
    if (a->depth != b->depth) return a->depth > b->depth;
    return a->seq < b->seq;
}

typedef struct heap {
    hitem *v;
    size_t n, cap;
} heap;

static void heap_push(heap *h, hitem x)
{
    NS_GROW(h->v, h->cap, h->n + 1);
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!h_less(&x, &h->v[p])) break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = x;
}

static hitem heap_pop(heap *h)
{
    hitem top = h->v[0], x = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const hitem *best = &x;
        if (l < h->n && h_less(&h->v[l], best)) m = l, best = &h->v[l];
        if (r < h->n && h_less(&h->v[r], best)) m = r;
        if (m == i) break;
        h->v[i] = h->v[m];
        i = m;
    }
    if (h->n) h->v[i] = x;
    return top;
}

static ns_status search(ctx *c, size_t memory_limit, ns_error *err)
{
    heap h = {0};
    long seq = 0;
    bool fresh;
    uint32_t root = ns_registry_insert(&c->reg, c->t->init, &fresh);
    heap_push(&h, (hitem){0.0, 0, seq++, push_node(c, (node){-1, -1, 0, root, 0.0, -1})});
    float *costs = ns_xcalloc((size_t)c->t->nops + 1, sizeof(float));
    uint32_t *sids = ns_xcalloc((size_t)c->t->nops + 1, sizeof(uint32_t));
    ns_status st = NS_UNSOLVABLE;
    while (h.n) {
        hitem it = heap_pop(&h);
        long ni = it.node;
        if (ns_task_is_goal(c->t, ns_registry_get(&c->reg, c->nodes[ni].sid))) {
            extract_plan(c, ni);
            st = NS_OK;
            break;
        }
        if ((c->r->expanded & 63) == 0 && timed_out(c)) {
            st = NS_OUT_OF_TIME;
            break;
        }
        if (memory_limit && ns_registry_bytes(&c->reg) + c->ncap * sizeof(node) + h.cap * sizeof(hitem) +
                                    c->rs_cap * sizeof(float) > memory_limit) {
            st = NS_OUT_OF_MEMORY;
            break;
        }
        st = predict_at(c, ni, err);
        if (st != NS_OK) break;
        st = NS_UNSOLVABLE;
        c->r->expanded++;
        int na = ns_succgen_applicable(&c->sg, ns_registry_get(&c->reg, c->nodes[ni].sid), c->apps);
        int nk = 0;
        float best = INFINITY;
        for (int k = 0; k < na; k++) {
            ns_task_apply(c->t, c->apps[k], ns_registry_get(&c->reg, c->nodes[ni].sid), c->succ);
            uint32_t sid = ns_registry_insert(&c->reg, c->succ, &fresh);
            if (!fresh) continue;
            costs[nk] = score(c, c->succ);
            if (costs[nk] < best) best = costs[nk];
            sids[nk] = sid;
            c->apps[nk++] = c->apps[k];
        }
        double key = c->nodes[ni].key;
        int depth = c->nodes[ni].depth + 1;
        for (int k = 0; k < nk; k++) {
            double ck = key + (double)(costs[k] - best);
            long child = push_node(c, (node){(int)ni, c->apps[k], depth, sids[k], ck, -1});
            heap_push(&h, (hitem){ck, depth, seq++, child});
        }
    }
    free(h.v);
    free(costs);
    free(sids);
    return st;
}

/* ---- GBFS with the model's preferred successors ------------------------------------ */

typedef struct guide {
    ctx *c;
    ns_error *err;
    ns_status st;
    float *costs;
} guide;

static int model_preferred(void *vg, const ns_word *s, const int *ops, int nops, int *out)
{
    guide *g = vg;
    ctx *c = g->c;
    if (g->st != NS_OK || nops == 0) return 0;
    if (nops == 1) { /* the one candidate is the best: no prediction needed (a
                        model's cost is never NaN: its inputs and leaves are finite) */
        c->r->expanded++;
        out[0] = ops[0];
        return 1;
    }
    double t0 = ns_cpu_now(); /* once for the prediction and the scores (successors included) */
    ns_encoder_state(&c->enc, s, c->phi);
    g->st = ns_predictor_step(c->m, c->ws, c->phi, c->phi_g, NULL, NULL, c->next, g->err);
    c->r->predictions++;
    c->r->expanded++;
    if (g->st != NS_OK) {
        c->r->model_seconds += ns_cpu_now() - t0;
        return 0;
    }
    float best = INFINITY;
    for (int k = 0; k < nops; k++) {
        ns_task_apply(c->t, ops[k], s, c->succ);
        g->costs[k] = score_untimed(c, c->succ);
        if (g->costs[k] < best) best = g->costs[k];
    }
    c->r->model_seconds += ns_cpu_now() - t0;
    int n = 0;
    for (int k = 0; k < nops; k++)
        if (g->costs[k] <= best + 1e-6f) out[n++] = ops[k];
    return n;
}

/* Hooks model c's choice among the preferred operators into so (g is its state). */
static ns_status guide_open(guide *g, ctx *c, ns_search_opts *so, ns_error *err)
{
    if (c->RS)
        return ns_error_set(err, NS_ERR_UNSUPPORTED, NULL, 0, 0,
                            "guided search needs a model without recurrent state (XGBoost), not an LSTM");
    *g = (guide){c, err, NS_OK, ns_xcalloc((size_t)c->t->nops + 1, sizeof(float))};
    so->preferred = true;
    so->preferred_fn = model_preferred;
    so->preferred_ctx = g;
    return NS_OK;
}

static ns_status guided(ctx *c, const ns_planner_opts *o, ns_error *err)
{
    ns_search_opts so;
    ns_search_opts_default(&so);
    so.algo = NS_SEARCH_GBFS;
    so.heuristic = NS_H_FF;
    guide g;
    ns_status st = guide_open(&g, c, &so, err);
    if (st != NS_OK) return st;
    if (o->time_limit > 0) { /* what is left of the limit; never 0, which would mean none */
        so.time_limit = o->time_limit - (ns_cpu_now() - c->t0);
        if (so.time_limit < 1e-3) so.time_limit = 1e-3;
    }
    so.memory_limit = o->memory_limit;
    ns_search_result sr;
    st = ns_search(c->t, &so, &sr);
    free(g.costs);
    if (g.st != NS_OK) st = g.st;
    else if (st == NS_OK) {
        c->r->plan = ns_xcalloc((size_t)sr.plan_len + 1, sizeof(int));
        memcpy(c->r->plan, sr.plan, sizeof(int) * (size_t)sr.plan_len);
        c->r->plan_len = sr.plan_len;
    }
    ns_search_result_free(&sr);
    return st;
}

/* ---- entry ----------------------------------------------------------------------------- */

static int count_objects(const ns_task *t) { return t->problem ? t->problem->nobjects : 0; }

/* A found plan without its redundant steps (within the time limit, counted
 * from t0), unless the caller wants it raw. */
static void finish_plan(const ns_task *t, const ns_planner_opts *o, double t0, ns_planner_result *r)
{
    if (r->status != NS_OK || !r->plan || o->raw_plan) return;
    double limit = o->time_limit > 0 ? t0 + o->time_limit : 0, now = ns_cpu_now();
    /* plan neighbourhood graph search for a quarter of the search's time (at least 0.05 s) */
    int n = ns_plan_shorten(t, r->plan, r->plan_len, limit, now + fmax(0.05, 0.25 * (now - t0)), (size_t)256 << 20, 0);
    r->eliminated = r->plan_len - n;
    r->plan_len = n;
}

ns_status ns_plan_learned(const ns_predictor *m, const ns_task *t, const ns_planner_opts *o, ns_planner_result *r,
                          ns_error *err)
{
    memset(r, 0, sizeof *r);
    if (o->algo == NS_PLAN_LAMA || o->algo == NS_PLAN_LAMA_H) {
        ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "algo lama needs a learned heuristic (learn --model hwl)");
        return r->status = NS_ERR_USAGE;
    }
    double t0 = ns_cpu_now();
    ctx c;
    ns_status st = ctx_open(&c, m, t, r, err);
    if (st != NS_OK) {
        r->status = st;
        return st;
    }
    c.t0 = t0;
    c.deadline = o->time_limit > 0 ? t0 + o->time_limit : 0;
    int max_steps = o->max_steps > 0 ? o->max_steps : 10 * count_objects(t);
    if (o->max_steps <= 0 && max_steps < 100) max_steps = 100;
    int W = o->width > 0 ? o->width : 3;
    bool dropped;
    bool fresh;
    if (o->algo == NS_PLAN_SEARCH) {
        st = search(&c, o->memory_limit, err);
    } else if (o->algo == NS_PLAN_GUIDED) {
        st = guided(&c, o, err);
    } else {
        ns_registry_insert(&c.reg, t->init, &fresh);
        for (;;) {
            st = beam(&c, W, max_steps, o->algo == NS_PLAN_RESTART, &dropped, err);
            r->width = W;
            if (o->algo == NS_PLAN_BEAM || st != NS_INCOMPLETE || !dropped || W > (1 << 24) / 4) break;
            W *= 4;
        }
    }
    ctx_close(&c);
    r->status = st;
    finish_plan(t, o, t0, r);
    r->seconds = ns_cpu_now() - t0;
    return st;
}

/* ---- a learned heuristic through the evaluator slot ------------------------------------ */

/* The classical fallback after a learned search *sr that ran out of time or
 * memory: LAMA-first (h^FF's ties broken as `last` says) in the time left of
 * o's limit (counted from t0) and the same memory limit; *sr becomes its
 * result and its expansions are added to r's. */
static ns_status classical(const ns_task *t, const ns_planner_opts *o, double t0, bool last, ns_planner_result *r,
                           ns_search_result *sr)
{
    r->classical = true;
    ns_search_result_free(sr);
    ns_search_opts so;
    ns_search_opts_default(&so);
    so.algo = NS_SEARCH_LAMA;
    so.last_supporter = last;
    so.memory_limit = o->memory_limit;
    if (o->time_limit > 0) {
        so.time_limit = t0 + o->time_limit - ns_cpu_now();
        if (so.time_limit <= 0) return NS_OUT_OF_TIME; /* no time left to set a search up */
    }
    ns_status st = ns_search(t, &so, sr);
    r->expanded += sr->expanded;
    return st;
}

ns_status ns_plan_heuristic(const ns_hwl *h, const ns_task *t, const ns_planner_opts *o, ns_planner_result *r,
                            ns_error *err)
{
    memset(r, 0, sizeof *r);
    double t0 = ns_cpu_now();
    ns_planner_algo algo = ns_plan_heuristic_algo(h, o->algo);
    if (o->prefer && algo != NS_PLAN_GUIDED) {
        ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "a preferring model works with algo guided only, not %s",
                     ns_planner_algo_name(algo));
        return r->status = NS_ERR_USAGE;
    }
    /* SEARCH: h alone (WL-GOOSE); LAMA: h beside LAMA's h^FF, whose helpful
       actions are preferred (so h's evaluator need not compute h^FF again);
       otherwise h with h^FF's helpful actions as preferred operators */
    bool helpful = algo != NS_PLAN_SEARCH && algo != NS_PLAN_LAMA;
    ns_evaluator ev;
    ns_status st = ns_hwl_evaluator(&ev, h, t, helpful, err);
    if (st != NS_OK) {
        r->status = st;
        return st;
    }
    ns_search_opts so;
    ns_search_opts_default(&so);
    bool lama = algo == NS_PLAN_LAMA || algo == NS_PLAN_LAMA_H;
    so.algo = lama ? NS_SEARCH_LAMA : NS_SEARCH_GBFS;
    if (algo == NS_PLAN_LAMA) so.extra = &ev;
    else so.evaluator = &ev;
    so.preferred = algo != NS_PLAN_SEARCH; /* lama: h^FF's helpful actions, from its own h^FF */
    so.last_supporter = h->choice.last_supporter;
    bool fallback = o->fallback > 0 && o->fallback < 1;
    so.time_limit = o->time_limit > 0 && fallback ? (1 - o->fallback) * o->time_limit : o->time_limit;
    so.memory_limit = o->memory_limit;
    so.max_evaluated = o->max_evaluated;
    ctx c; /* the preferring model's */
    guide g = {0};
    if (o->prefer && (st = ctx_open(&c, o->prefer, t, r, err)) == NS_OK && (st = guide_open(&g, &c, &so, err)) != NS_OK)
        ctx_close(&c);
    if (st != NS_OK) {
        ns_evaluator_free(&ev);
        return r->status = st;
    }
    ns_search_result sr;
    st = ns_search(t, &so, &sr);
    if (o->prefer) {
        free(g.costs);
        ctx_close(&c);
        if (g.st != NS_OK) st = g.st;
    }
    r->expanded = sr.expanded; /* the learned search's */
    r->predictions = sr.evaluated;
    r->work = sr.total_work;
    if (fallback && (st == NS_OUT_OF_TIME || st == NS_OUT_OF_MEMORY)) {
        st = classical(t, o, t0, h->choice.last_supporter, r, &sr);
        r->work += sr.total_work;
    }
    if (st == NS_OK) {
        r->plan = ns_xcalloc((size_t)sr.plan_len + 1, sizeof(int));
        memcpy(r->plan, sr.plan, sizeof(int) * (size_t)sr.plan_len);
        r->plan_len = sr.plan_len;
    }
    ns_search_result_free(&sr);
    ns_evaluator_free(&ev);
    r->status = st;
    finish_plan(t, o, t0, r);
    r->seconds = ns_cpu_now() - t0;
    return st;
}

ns_planner_algo ns_plan_heuristic_algo(const ns_hwl *h, ns_planner_algo requested)
{
    if (requested != NS_PLAN_BEAM && requested != NS_PLAN_RESTART) return requested;
    int a = h && h->choice.algo[0] ? ns_planner_algo_parse(h->choice.algo) : -1;
    return a == NS_PLAN_SEARCH || a == NS_PLAN_GUIDED || a == NS_PLAN_LAMA || a == NS_PLAN_LAMA_H ? (ns_planner_algo)a
                                                                                                  : NS_PLAN_LAMA;
}

const ns_planner_algo ns_plan_choices[NS_PLAN_CHOICES] = {NS_PLAN_LAMA, NS_PLAN_GUIDED, NS_PLAN_LAMA_H, NS_PLAN_SEARCH};

/* Whether a candidate beats the best so far: more problems solved, or as
 * many with at least NS_PLAN_CHOICE_MARGIN fewer evaluations.  Within the
 * margin the earlier candidate stays: evaluations do not count what one
 * costs (WL-4 features cost more than WL-2), and on a few held-out problems
 * a difference of a few per cent is noise.  Not the work (the table's
 * `work`, what each search cost): an evaluation of GBFS on h alone costs
 * 6-24x less than one of LAMA's, but on problems as small as the held-out
 * ones that does not say which costs less on larger ones — ranked by work,
 * the IPC 2023 choices moved in four domains and solved as many testing
 * problems or fewer (ferry +2, blocksworld -3, transport -1; docs/ipc23.md,
 * stop 43). */
#define NS_PLAN_CHOICE_MARGIN 0.05
static bool beats(int solved, long spent, int best_solved, long best_spent)
{
    return solved > best_solved ||
           (solved == best_solved && (double)spent < (1.0 - NS_PLAN_CHOICE_MARGIN) * (double)best_spent);
}

const char *ns_plan_heuristic_name(const ns_hwl *h, ns_planner_algo requested)
{
    switch (ns_plan_heuristic_algo(h, requested)) {
    case NS_PLAN_SEARCH: return "hwl";
    case NS_PLAN_GUIDED: return "hwl+ff-preferred";
    case NS_PLAN_LAMA_H: return "hwl-in-lama";
    default: return "hwl+lama";
    }
}

void ns_choose_opts_default(ns_choose_opts *o)
{
    o->niter = 2;
    o->iterations[0] = 2;
    o->iterations[1] = 4;
    o->problems = 8;
    o->folds = 2;
    o->budget = 100000;
    o->time_limit = 30;
    o->bootstrap = 0;
    o->bootstrap_memory = (size_t)4096 << 20;
    o->jobs = 1;
}

typedef struct sized_path {
    int objects, index;
} sized_path;

static int by_size_desc(const void *a, const void *b)
{
    const sized_path *x = a, *y = b;
    if (x->objects != y->objects) return x->objects < y->objects ? 1 : -1;
    return x->index < y->index ? 1 : x->index > y->index ? -1 : 0;
}

/* Whether path's file name is stem + ".pddl" (a trajectory's name). */
static bool same_stem(const char *stem, const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strlen(stem);
    return !strncmp(b, stem, n) && !strcmp(b + n, ".pddl");
}

typedef struct tries {
    const ns_hwl *fit;
    const ns_loaded_task *tasks;
    int n;
    const ns_choose_opts *co;
} tries;

/* ns_forkmap's job j: task j % n planned under ns_plan_choices[j / n]; out:
 * status, evaluations, work, then the error message. */
static void try_one(void *ctx, int j, ns_buf *out)
{
    const tries *c = ctx;
    ns_planner_opts o;
    ns_planner_opts_default(&o);
    o.algo = ns_plan_choices[j / c->n];
    o.max_evaluated = c->co->budget;
    o.time_limit = c->co->time_limit;
    ns_planner_result r;
    ns_error err = {0};
    long v[3];
    v[0] = ns_plan_heuristic(c->fit, &c->tasks[j % c->n].task, &o, &r, &err);
    v[1] = r.predictions;
    v[2] = r.work;
    ns_planner_result_free(&r);
    ns_buf_put(out, v, sizeof v);
    char msg[sizeof err.msg + sizeof err.file + 32];
    ns_error_format(&err, msg, sizeof msg);
    ns_buf_put(out, msg, strlen(msg) + 1);
}

/* Plans the tasks of tasks[0..n) with fit under each of ns_plan_choices (within co's
 * budget and time limit, co->jobs at once) and adds the counts to t's rows q0, q0 + 1,
 * … (one per search, tried with `iterations` WL iterations; made when t has none). */
static ns_status try_searches(const ns_hwl *fit, int iterations, const ns_loaded_task *tasks, int n,
                              const ns_choose_opts *co, ns_hwl_choice *t, int q0, ns_error *err)
{
    int m = NS_PLAN_CHOICES < NS_HWL_MAX_CAND - q0 ? NS_PLAN_CHOICES : NS_HWL_MAX_CAND - q0;
    if (m <= 0 || n <= 0) return NS_OK;
    tries c = {.fit = fit, .tasks = tasks, .n = n, .co = co};
    ns_buf *out = ns_xcalloc((size_t)(m * n), sizeof *out);
    bool *ok = ns_xcalloc((size_t)(m * n), sizeof *ok);
    ns_forkmap(m * n, co->jobs, try_one, &c, out, ok);
    ns_status st = NS_OK;
    for (int q = t->n; q < q0 + m; q++, t->n++) {
        snprintf(t->cand[q], sizeof t->cand[q], "%s", ns_planner_algo_name(ns_plan_choices[q - q0]));
        t->iter[q] = iterations;
    }
    for (int j = 0; j < m * n && st == NS_OK; j++) {
        long v[3] = {NS_OUT_OF_MEMORY, 0, 0}; /* a child that died: unsolved, as one out of memory */
        if (ok[j] && out[j].len > sizeof v) memcpy(v, out[j].data, sizeof v);
        if (v[0] == NS_ERR_INPUT || v[0] == NS_ERR_USAGE)
            st = ns_error_set(err, (ns_status)v[0], NULL, 0, 0, "%s", out[j].data + sizeof v);
        t->solved[q0 + j / n] += v[0] == NS_OK;
        t->time_capped += v[0] == NS_OUT_OF_TIME;
        t->evaluated[q0 + j / n] += v[0] == NS_OK ? v[1] : co->budget;
        t->work[q0 + j / n] += v[2];
    }
    for (int j = 0; j < m * n; j++) ns_buf_free(&out[j]);
    free(out);
    free(ok);
    return st;
}

/* ns_forkmap's job j for choose_ties: LAMA-first on task j % n, h^FF's ties
 * to the last supporter when j >= n; out: status, evaluations. */
static void try_ties(void *ctx, int j, ns_buf *out)
{
    const tries *c = ctx;
    ns_search_opts so;
    ns_search_opts_default(&so);
    so.algo = NS_SEARCH_LAMA;
    so.last_supporter = j >= c->n;
    so.max_evaluated = c->co->budget;
    so.time_limit = c->co->time_limit;
    ns_search_result r;
    long v[2];
    v[0] = ns_search(&c->tasks[j % c->n].task, &so, &r);
    v[1] = r.evaluated;
    ns_search_result_free(&r);
    ns_buf_put(out, v, sizeof v);
}

/* h^FF's best supporters' ties for the held-out tasks lt[0..k) (k >= 1): LAMA-first
 * with the first and with the last supporter (within co's budget and time limit);
 * the last is kept when it solves more, or as many in at least NS_PLAN_TIES_MARGIN
 * fewer evaluations.  Sets t->last_supporter and the counts. */
#define NS_PLAN_TIES_MARGIN 0.2
static void choose_ties(const ns_loaded_task *lt, int k, const ns_choose_opts *co, ns_hwl_choice *t)
{
    tries c = {.tasks = lt, .n = k, .co = co};
    ns_buf *out = ns_xcalloc((size_t)(2 * k), sizeof *out);
    bool *ok = ns_xcalloc((size_t)(2 * k), sizeof *ok);
    ns_forkmap(2 * k, co->jobs, try_ties, &c, out, ok);
    for (int j = 0; j < 2 * k; j++) {
        long v[2] = {NS_OUT_OF_MEMORY, 0}; /* a child that died: unsolved */
        if (ok[j] && out[j].len >= sizeof v) memcpy(v, out[j].data, sizeof v);
        t->ties_solved[j / k] += v[0] == NS_OK;
        t->time_capped += v[0] == NS_OUT_OF_TIME;
        t->ties_evaluated[j / k] += v[0] == NS_OK ? v[1] : co->budget;
        ns_buf_free(&out[j]);
    }
    free(out);
    free(ok);
    t->last_supporter = t->ties_solved[1] > t->ties_solved[0] ||
                        (t->ties_solved[1] == t->ties_solved[0] &&
                         (double)t->ties_evaluated[1] < (1.0 - NS_PLAN_TIES_MARGIN) * (double)t->ties_evaluated[0]);
}

/* One held-out set, problem_paths[idx[0..k)] (loaded: lt[0..k)): for each WL iteration count, a
 * model fitted on the other trajectories plans the set with each search; the
 * counts are added to table's rows (v · NS_PLAN_CHOICES + search). */
static ns_status try_fold(const ns_trajset *train, char *const *problem_paths, const int *idx, const ns_loaded_task *lt,
                          int k, const ns_hwl_config *c, const ns_choose_opts *co, ns_hwl_choice *table, ns_error *err)
{
    ns_status st = NS_OK;
    /* fitted without the held-out problems' trajectories */
    ns_trajset rest = *train;
    rest.v = ns_xcalloc((size_t)train->n + 1, sizeof(ns_traj));
    rest.cap = train->n + 1;
    rest.n = 0;
    for (int i = 0; i < train->n && st == NS_OK; i++) {
        bool held = false;
        for (int j = 0; j < k && !held; j++) held = same_stem(train->v[i].name, problem_paths[idx[j]]);
        if (!held) rest.v[rest.n++] = train->v[i];
    }
    int niter = co->niter > 4 ? 4 : co->niter > 0 ? co->niter : 1; /* co->iterations holds 4 */
    for (int v = 0; v < niter && st == NS_OK; v++) {
        ns_hwl_config ci = *c;
        if (co->niter > 0) ci.iterations = co->iterations[v];
        ns_hwl chooser;
        if ((st = ns_hwl_fit(&chooser, &rest, &ci, err)) != NS_OK) break;
        chooser.choice.last_supporter = table->last_supporter; /* its searches' h^FF */
        st = try_searches(&chooser, ci.iterations, lt, k, co, table, v * NS_PLAN_CHOICES, err);
        ns_hwl_free(&chooser);
    }
    free(rest.v);
    return st;
}

/* The held-out problems of ns_hwl_learn, the same for every set of training
 * plans it learns from: fold f is paths[idx[f·k …]], loaded in lt[f·k …]; ties:
 * h^FF's ties chosen on all of them (choose_ties), the rest of the table empty. */
typedef struct heldout {
    int k, folds;
    int *idx;
    ns_loaded_task *lt;
    ns_hwl_choice ties;
} heldout;

static void heldout_free(heldout *ho, int loaded)
{
    for (int i = 0; i < loaded; i++) ns_loaded_task_free(&ho->lt[i]);
    free(ho->lt);
    free(ho->idx);
    memset(ho, 0, sizeof *ho);
}

/* Picks, loads and chooses h^FF's ties on the held-out problems among
 * paths[0..n): k = min(co->problems, n / 2) per fold (at most half, so the
 * chooser has plans to learn from); ho->k == 0 when co makes no choice. */
static ns_status heldout_open(heldout *ho, const char *domain_path, char *const *paths, int n,
                              const ns_choose_opts *co, ns_error *err)
{
    memset(ho, 0, sizeof *ho);
    int k = co && co->problems > 0 ? (co->problems < n / 2 ? co->problems : n / 2) : 0;
    if (k == 0) return NS_OK;
    /* the problems by size, most objects first */
    sized_path *sz = ns_xcalloc((size_t)n, sizeof *sz);
    ns_domain d;
    ns_status st = ns_domain_read(&d, domain_path, err);
    bool dom_ok = st == NS_OK;
    for (int i = 0; i < n && st == NS_OK; i++) {
        ns_problem p;
        if ((st = ns_problem_read(&p, &d, paths[i], err)) != NS_OK) break;
        sz[i] = (sized_path){p.nobjects, i};
        ns_problem_free(&p);
    }
    if (dom_ok) ns_domain_free(&d);
    if (st != NS_OK) {
        free(sz);
        return st;
    }
    qsort(sz, (size_t)n, sizeof *sz, by_size_desc);
    /* fold 1: the k largest; fold 2 (co->folds 2): k spread evenly over the larger
       half of the rest, when the rest has at least k — a candidate that does well
       on the largest alone may have been lucky in the model those were held out of */
    int span = (n - k) / 2 > k ? (n - k) / 2 : k, folds = co->folds > 1 && k + span <= n ? 2 : 1;
    ho->k = k;
    ho->folds = folds;
    ho->idx = ns_xcalloc((size_t)(k * folds), sizeof *ho->idx);
    for (int f = 0; f < folds; f++)
        for (int i = 0; i < k; i++) ho->idx[f * k + i] = sz[f == 0 ? i : k + (int)((long)i * span / k)].index;
    free(sz);
    ho->lt = ns_xcalloc((size_t)(k * folds), sizeof *ho->lt);
    for (int i = 0; i < k * folds; i++)
        if ((st = ns_task_load(&ho->lt[i], domain_path, paths[ho->idx[i]], err)) != NS_OK) {
            heldout_free(ho, i);
            return st;
        }
    choose_ties(ho->lt, k * folds, co, &ho->ties); /* first: the searches below use them */
    return NS_OK;
}

/* Fits h on train and chooses its WL iterations and search on ho's folds
 * (plain ns_hwl_fit when ho holds none). */
static ns_status learn_among(ns_hwl *h, const ns_trajset *train, char *const *problem_paths, const heldout *ho,
                             const ns_hwl_config *c, const ns_choose_opts *co, ns_error *err)
{
    if (ho->k == 0) return ns_hwl_fit(h, train, c, err);
    ns_status st = NS_OK;
    ns_hwl_choice table = ho->ties;
    for (int f = 0; f < ho->folds && st == NS_OK; f++)
        st = try_fold(train, problem_paths, ho->idx + f * ho->k, ho->lt + f * ho->k, ho->k, c, co, &table, err);
    int best = 0; /* the first row unless a later one beats it */
    for (int q = 1; q < table.n; q++)
        if (beats(table.solved[q], table.evaluated[q], table.solved[best], table.evaluated[best])) best = q;
    if (st == NS_OK) { /* the winner's iteration count fitted on every trajectory */
        ns_hwl_config cf = *c;
        cf.iterations = table.iter[best];
        st = ns_hwl_fit(h, train, &cf, err);
    }
    if (st == NS_OK) {
        table.problems = ho->k * ho->folds;
        table.budget = co->budget;
        memcpy(table.algo, table.cand[best], sizeof table.algo);
        h->choice = table;
    }
    return st;
}

/* The row of h's choice table that won: its search on its WL iterations; -1 without a choice. */
static int chosen_row(const ns_hwl *h)
{
    for (int q = 0; q < h->choice.n; q++)
        if (!strcmp(h->choice.cand[q], h->choice.algo) && h->choice.iter[q] == h->enc.wl.iterations) return q;
    return -1;
}

/* learn_among on train; the result replaces *h (*taken) when its chosen row
 * beats h's, or when no choice is made. */
static ns_status take_if_better(ns_hwl *h, const ns_trajset *train, char *const *paths, const heldout *ho,
                                const ns_hwl_config *c, const ns_choose_opts *co, bool *taken, ns_error *err)
{
    ns_hwl g;
    *taken = false;
    ns_status st = learn_among(&g, train, paths, ho, c, co, err);
    if (st != NS_OK) return st;
    int a = chosen_row(&g), b = chosen_row(h);
    if (a < 0 || b < 0 || beats(g.choice.solved[a], g.choice.evaluated[a], h->choice.solved[b], h->choice.evaluated[b])) {
        ns_hwl_free(h);
        *h = g;
        *taken = true;
    } else {
        ns_hwl_free(&g);
    }
    return NS_OK;
}

ns_status ns_hwl_learn(ns_hwl *h, ns_trajset *train, const char *domain_path, const char *train_dir,
                       const ns_hwl_config *c, const ns_choose_opts *co, ns_error *err)
{
    int n = 0;
    char *dirs[1] = {(char *)train_dir};
    char **paths = ns_problem_paths(dirs, 1, &n, err);
    if (!paths) return NS_ERR_IO;
    heldout ho;
    ns_status st = heldout_open(&ho, domain_path, paths, n, co, err);
    bool choose = ho.k > 0, raw = false, has_raw = ns_trajset_has_raw(train), fitted = false;
    if (st == NS_OK) fitted = (st = learn_among(h, train, paths, &ho, c, co, err)) == NS_OK;
    if (st == NS_OK && choose && has_raw) { /* GBFS's plans as found, chosen on the same problems */
        ns_trajset view;
        ns_trajset_raw_view(train, &view);
        st = take_if_better(h, &view, paths, &ho, c, co, &raw, err);
        ns_trajset_view_free(&view);
    }
    const char *plans = !has_raw ? "" : raw ? "raw" : "shortened";
    if (st == NS_OK && choose) snprintf(h->choice.plans, sizeof h->choice.plans, "%s", plans);
    if (st == NS_OK && co && co->bootstrap > 0 && train->unsolved > 0) {
        int before = train->added;
        st = ns_hwl_bootstrap(h, train, co->bootstrap, co->bootstrap_memory, err);
        if (st == NS_OK && train->added > before) { /* learned again with the new plans, kept when it does better */
            ns_trajset view;
            if (raw) ns_trajset_raw_view(train, &view);
            bool boot;
            st = take_if_better(h, raw ? &view : train, paths, &ho, c, co, &boot, err);
            if (boot && choose) snprintf(h->choice.plans, sizeof h->choice.plans, "%s%sbootstrap", plans, *plans ? "+" : "");
            if (raw) ns_trajset_view_free(&view);
        }
    }
    if (st != NS_OK && fitted) ns_hwl_free(h);
    heldout_free(&ho, ho.k * ho.folds);
    for (int i = 0; i < n; i++) free(paths[i]);
    free(paths);
    return st;
}

typedef struct boot_ctx {
    const ns_hwl *h;
    ns_planner_opts o;
    ns_error *err;
} boot_ctx;

/* ns_traj_planner: h's plan with its chosen search. */
static ns_status boot_plan(void *ctx, const ns_task *t, int **ops, int *n)
{
    boot_ctx *c = ctx;
    ns_planner_result r;
    ns_status st = ns_plan_heuristic(c->h, t, &c->o, &r, c->err);
    *ops = NULL;
    *n = 0;
    if (st == NS_OK) {
        *ops = r.plan;
        *n = r.plan_len;
        r.plan = NULL;
    }
    ns_planner_result_free(&r);
    return st;
}

ns_status ns_hwl_bootstrap(const ns_hwl *h, ns_trajset *train, double time_limit, size_t memory_limit, ns_error *err)
{
    boot_ctx c = {.h = h, .err = err};
    ns_planner_opts_default(&c.o);
    c.o.time_limit = time_limit;
    c.o.memory_limit = memory_limit;
    int left = 0;
    ns_status st = NS_OK;
    for (int i = 0; i < train->unsolved; i++) {
        char *path = train->unsolved_paths[i];
        if (st == NS_OK) {
            ns_status s = ns_trajset_add(train, path, boot_plan, &c, err);
            if (s == NS_OK) {
                free(path);
                continue;
            }
            if (s != NS_OUT_OF_TIME && s != NS_OUT_OF_MEMORY && s != NS_UNSOLVABLE && s != NS_INCOMPLETE) st = s;
        }
        train->unsolved_paths[left++] = path;
    }
    train->unsolved = left;
    return st;
}
