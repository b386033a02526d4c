/* space.c — explicit state spaces and optimal-plan DAGs. */
#include "nextstate/data/space.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/core/heuristic.h"
#include "nextstate/core/search.h"
#include "nextstate/core/succgen.h"

#define DEFAULT_CAP 1000000
#define DEFAULT_BLIND 1000000 /* states of optimal mode's first, heuristic-free search */

typedef struct edges {
    int32_t *op;
    uint32_t *dst;
    uint32_t *src;
    int64_t n;
    size_t cap;
} edges;

static void edges_push(edges *e, uint32_t src, int32_t op, uint32_t dst)
{
    if ((size_t)e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 1024;
        e->op = ns_xrealloc(e->op, sizeof(int32_t) * e->cap);
        e->dst = ns_xrealloc(e->dst, sizeof(uint32_t) * e->cap);
        e->src = ns_xrealloc(e->src, sizeof(uint32_t) * e->cap);
    }
    e->src[e->n] = src;
    e->op[e->n] = op;
    e->dst[e->n] = dst;
    e->n++;
}

static void edges_free(edges *e)
{
    free(e->op);
    free(e->dst);
    free(e->src);
    memset(e, 0, sizeof *e);
}

static void grow_i32(int32_t **a, size_t *cap, size_t need)
{
    if (need <= *cap) return;
    size_t c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    *a = ns_xrealloc(*a, sizeof(int32_t) * c);
    *cap = c;
}

/* Edges are pushed grouped by source in increasing source order, so the CSR
 * offsets follow from one pass. */
static void set_csr(ns_space *sp, edges *e)
{
    uint32_t n = sp->states.n;
    sp->edge_start = ns_xcalloc((size_t)n + 1, sizeof(int64_t));
    for (int64_t i = 0; i < e->n; i++) sp->edge_start[e->src[i] + 1]++;
    for (uint32_t s = 0; s < n; s++) sp->edge_start[s + 1] += sp->edge_start[s];
    sp->edge_op = e->op ? e->op : ns_xmalloc(sizeof(int32_t));
    sp->edge_dst = e->dst ? e->dst : ns_xmalloc(sizeof(uint32_t));
    sp->nedges = e->n;
    free(e->src);
    memset(e, 0, sizeof *e);
}

/* h* by backward breadth-first search over the kept transitions. */
static void backward_hstar(ns_space *sp)
{
    uint32_t n = sp->states.n;
    const ns_task *t = sp->task;
    int64_t *rstart = ns_xcalloc((size_t)n + 1, sizeof(int64_t));
    for (int64_t e = 0; e < sp->nedges; e++) rstart[sp->edge_dst[e] + 1]++;
    for (uint32_t s = 0; s < n; s++) rstart[s + 1] += rstart[s];
    uint32_t *rsrc = ns_xmalloc(sizeof(uint32_t) * ((size_t)sp->nedges + 1));
    int64_t *fill = ns_xmalloc(sizeof(int64_t) * ((size_t)n + 1));
    memcpy(fill, rstart, sizeof(int64_t) * n);
    for (uint32_t s = 0; s < n; s++)
        for (int64_t e = sp->edge_start[s]; e < sp->edge_start[s + 1]; e++) rsrc[fill[sp->edge_dst[e]]++] = s;
    uint32_t *queue = ns_xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
    size_t head = 0, tail = 0;
    for (uint32_t s = 0; s < n; s++) {
        sp->hstar[s] = -1;
        if (ns_task_is_goal(t, ns_registry_get(&sp->states, s))) {
            sp->hstar[s] = 0;
            queue[tail++] = s;
        }
    }
    while (head < tail) {
        uint32_t s = queue[head++];
        for (int64_t k = rstart[s]; k < rstart[s + 1]; k++) {
            uint32_t p = rsrc[k];
            if (sp->hstar[p] < 0) {
                sp->hstar[p] = sp->hstar[s] + 1;
                queue[tail++] = p;
            }
        }
    }
    sp->cstar = sp->hstar[0];
    free(rstart);
    free(rsrc);
    free(fill);
    free(queue);
}

static ns_status build_full(ns_space *sp, const ns_task *t, size_t cap)
{
    ns_succgen sg;
    ns_succgen_init(&sg, t);
    int *ops = ns_xmalloc(sizeof(int) * ((size_t)t->nops + 1));
    ns_word *cur = ns_xmalloc(sizeof(ns_word) * (size_t)t->nwords);
    ns_word *next = ns_xmalloc(sizeof(ns_word) * (size_t)t->nwords);
    edges e = {0};
    size_t gcap = 0;
    bool is_new;
    ns_registry_insert(&sp->states, t->init, &is_new);
    grow_i32(&sp->g, &gcap, 1);
    sp->g[0] = 0;
    sp->complete = true;
    for (uint32_t s = 0; s < sp->states.n; s++) {
        if (sp->states.n >= cap) {
            sp->complete = false;
            break;
        }
        memcpy(cur, ns_registry_get(&sp->states, s), sizeof(ns_word) * (size_t)t->nwords);
        int n = ns_succgen_applicable(&sg, cur, ops);
        for (int i = 0; i < n; i++) {
            ns_task_apply(t, ops[i], cur, next);
            uint32_t id = ns_registry_insert(&sp->states, next, &is_new);
            if (is_new) {
                grow_i32(&sp->g, &gcap, (size_t)id + 1);
                sp->g[id] = sp->g[s] + 1;
            }
            edges_push(&e, s, ops[i], id);
        }
    }
    sp->explored = sp->states.n;
    set_csr(sp, &e);
    sp->hstar = ns_xmalloc(sizeof(int32_t) * ((size_t)sp->states.n + 1));
    backward_hstar(sp);
    ns_succgen_free(&sg);
    free(ops);
    free(cur);
    free(next);
    return NS_OK;
}

/* The DAG made of one optimal plan (fallback when the DAG is too large). */
static void plan_only(ns_space *sp, const ns_task *t, const int *plan, int len)
{
    ns_registry_free(&sp->states);
    ns_registry_init(&sp->states, t->nwords);
    ns_word *s = ns_xmalloc(sizeof(ns_word) * (size_t)t->nwords);
    memcpy(s, t->init, sizeof(ns_word) * (size_t)t->nwords);
    edges e = {0};
    bool is_new;
    ns_registry_insert(&sp->states, s, &is_new);
    for (int i = 0; i < len; i++) {
        ns_task_apply(t, plan[i], s, s);
        uint32_t id = ns_registry_insert(&sp->states, s, &is_new);
        edges_push(&e, (uint32_t)i, plan[i], id);
    }
    free(s);
    uint32_t n = sp->states.n;
    free(sp->g);
    sp->g = ns_xmalloc(sizeof(int32_t) * ((size_t)n + 1));
    sp->hstar = ns_xmalloc(sizeof(int32_t) * ((size_t)n + 1));
    for (uint32_t i = 0; i < n; i++) {
        sp->g[i] = (int32_t)i;
        sp->hstar[i] = len - (int32_t)i;
    }
    set_csr(sp, &e);
    sp->cstar = len;
    sp->complete = false;
}

/* The states and edges of a layered breadth-first search from the initial
 * state over sg's operators (ids increase with g; edges grouped by source in
 * increasing order), kept to depths <= C*: only edges g -> g + 1 between
 * states not pruned.  With h (and C* known), a state with g + h > C* is
 * pruned: h admissible, so no state on an optimal path is.  Without h, C*
 * may be unknown (< 0): the first goal generated sets it (the shallowest, as
 * ids increase with g).  Stops early (FWD_LIMIT) past limit states, or
 * (FWD_TIME) past the CPU deadline (<= 0: none). */
typedef struct forward {
    edges e;
    int32_t *pruned; /* per state: pruned, never expanded */
    int cstar;
} forward;
enum { FWD_DONE, FWD_LIMIT, FWD_TIME };

static int forward_search(ns_space *sp, const ns_task *t, const ns_succgen *sg, ns_heuristic *h, forward *f,
                          size_t limit, double deadline)
{
    int *ops = ns_xmalloc(sizeof(int) * ((size_t)t->nops + 1));
    ns_word *cur = ns_xmalloc(sizeof(ns_word) * (size_t)t->nwords);
    ns_word *next = ns_xmalloc(sizeof(ns_word) * (size_t)t->nwords);
    size_t gcap = 0, pcap = 0;
    bool is_new;
    int rc = FWD_DONE;
    ns_registry_insert(&sp->states, t->init, &is_new);
    grow_i32(&sp->g, &gcap, 1);
    grow_i32(&f->pruned, &pcap, 1);
    sp->g[0] = 0;
    f->pruned[0] = 0;
    if (!h && ns_task_is_goal(t, t->init)) f->cstar = 0;
    for (uint32_t s = 0; s < sp->states.n && rc == FWD_DONE; s++) {
        if (f->pruned[s] || (f->cstar >= 0 && sp->g[s] >= f->cstar)) continue;
        memcpy(cur, ns_registry_get(&sp->states, s), sizeof(ns_word) * (size_t)t->nwords);
        int n = ns_succgen_applicable(sg, cur, ops);
        for (int i = 0; i < n; i++) {
            ns_task_apply(t, ops[i], cur, next);
            uint32_t id = ns_registry_insert(&sp->states, next, &is_new);
            if (is_new) {
                grow_i32(&sp->g, &gcap, (size_t)id + 1);
                grow_i32(&f->pruned, &pcap, (size_t)id + 1);
                sp->g[id] = sp->g[s] + 1;
                if (h) {
                    int hv = ns_heuristic_eval(h, next);
                    f->pruned[id] = hv == NS_H_INF || sp->g[id] + hv > f->cstar;
                } else {
                    f->pruned[id] = 0;
                    if (f->cstar < 0 && ns_task_is_goal(t, next)) f->cstar = sp->g[id];
                }
            }
            if (!f->pruned[id] && sp->g[id] == sp->g[s] + 1) edges_push(&f->e, s, ops[i], id);
        }
        if (sp->states.n > limit) rc = FWD_LIMIT;
        else if (deadline > 0 && (s & 1023) == 0 && ns_cpu_now() > deadline) rc = FWD_TIME;
    }
    sp->explored = sp->states.n;
    free(ops);
    free(cur);
    free(next);
    return rc;
}

/* Keeps of f's search the states that reach a goal at depth C* and the edges
 * between them (the optimal-plan DAG), ids in the search's order. */
static void keep_optimal(ns_space *sp, const ns_task *t, forward *f)
{
    int cstar = f->cstar;
    uint32_t n = sp->states.n;
    char *alive = ns_xcalloc((size_t)n + 1, 1);
    for (uint32_t s = 0; s < n; s++)
        if (!f->pruned[s] && sp->g[s] == cstar && ns_task_is_goal(t, ns_registry_get(&sp->states, s))) alive[s] = 1;
    /* edges are grouped by source in increasing id = increasing g: scan backwards */
    for (int64_t k = f->e.n - 1; k >= 0; k--)
        if (alive[f->e.dst[k]]) alive[f->e.src[k]] = 1;
    /* compact */
    uint32_t *newid = ns_xmalloc(sizeof(uint32_t) * ((size_t)n + 1));
    ns_registry dag;
    ns_registry_init(&dag, t->nwords);
    int32_t *g2 = ns_xmalloc(sizeof(int32_t) * ((size_t)n + 1));
    bool is_new;
    for (uint32_t s = 0; s < n; s++) {
        newid[s] = UINT32_MAX;
        if (!alive[s]) continue;
        newid[s] = ns_registry_insert(&dag, ns_registry_get(&sp->states, s), &is_new);
        g2[newid[s]] = sp->g[s];
    }
    edges e2 = {0};
    for (int64_t k = 0; k < f->e.n; k++)
        if (alive[f->e.src[k]] && alive[f->e.dst[k]]) edges_push(&e2, newid[f->e.src[k]], f->e.op[k], newid[f->e.dst[k]]);
    ns_registry_free(&sp->states);
    sp->states = dag;
    free(sp->g);
    sp->g = g2;
    sp->hstar = ns_xmalloc(sizeof(int32_t) * ((size_t)sp->states.n + 1));
    for (uint32_t s = 0; s < sp->states.n; s++) sp->hstar[s] = cstar - sp->g[s];
    set_csr(sp, &e2);
    sp->cstar = cstar;
    sp->complete = true;
    free(alive);
    free(newid);
}

static void forward_free(forward *f)
{
    edges_free(&f->e);
    free(f->pruned);
    memset(f, 0, sizeof *f);
}

/* sp back to its initial state alone, unexplored */
static void space_reset(ns_space *sp, const ns_task *t)
{
    ns_registry_free(&sp->states);
    ns_registry_init(&sp->states, t->nwords);
    free(sp->g);
    sp->g = NULL;
}

/* The space of an unsolvable task: its initial state, h* = -1. */
static void unsolvable(ns_space *sp, const ns_task *t)
{
    space_reset(sp, t);
    bool is_new;
    ns_registry_insert(&sp->states, t->init, &is_new);
    sp->g = ns_xcalloc(1, sizeof(int32_t));
    sp->hstar = ns_xmalloc(sizeof(int32_t));
    sp->hstar[0] = -1;
    sp->cstar = -1;
    sp->complete = true;
    edges e = {0};
    set_csr(sp, &e);
}

static ns_status build_optimal(ns_space *sp, const ns_task *t, const ns_space_opts *o, size_t cap, ns_error *err)
{
    double deadline = o->time_limit > 0 ? ns_cpu_now() + o->time_limit : 0;
    ns_succgen sg; /* irrelevant operators lie on no optimal plan */
    bool *keep = ns_xmalloc(sizeof(bool) * ((size_t)t->nops + 1));
    ns_task_relevant_ops(t, keep);
    ns_succgen_init_subset(&sg, t, keep);
    free(keep);

    /* first without a heuristic: where the states within depth C* are few, a
     * breadth-first search over them is much cheaper than LM-cut's A* and
     * pruning (grid: 40x), and it keeps the same DAG in the same order */
    size_t blind = o->blind_states < 0 ? 0 : o->blind_states ? (size_t)o->blind_states : DEFAULT_BLIND;
    if (blind > cap) blind = cap;
    if (blind > 0) {
        forward f = {.cstar = -1};
        int rc = forward_search(sp, t, &sg, NULL, &f, blind, deadline);
        if (rc == FWD_DONE) {
            if (f.cstar >= 0) keep_optimal(sp, t, &f);
            else unsolvable(sp, t); /* every reachable state seen, no goal */
            forward_free(&f);
            ns_succgen_free(&sg);
            return NS_OK;
        }
        forward_free(&f);
        space_reset(sp, t);
    }

    /* C* from A* with LM-cut, then the breadth-first search pruned by LM-cut */
    ns_search_opts so;
    ns_search_opts_default(&so);
    so.algo = NS_SEARCH_ASTAR;
    so.heuristic = NS_H_LMCUT;
    so.time_limit = deadline > 0 ? deadline - ns_cpu_now() : 0;
    ns_search_result r = {0};
    /* out of time already: no search set up */
    ns_status st = deadline > 0 && so.time_limit <= 0 ? NS_OUT_OF_TIME : ns_search(t, &so, &r);
    if (st == NS_UNSOLVABLE) {
        unsolvable(sp, t);
        ns_search_result_free(&r);
        ns_succgen_free(&sg);
        return NS_OK;
    }
    if (st != NS_OK) {
        ns_search_result_free(&r);
        ns_succgen_free(&sg);
        return ns_error_set(err, st, t->problem->path, 0, 0, "optimal search failed (%s)",
                            st == NS_OUT_OF_TIME ? "out of time" : st == NS_OUT_OF_MEMORY ? "out of memory" : "incomplete");
    }
    ns_heuristic *h = ns_heuristic_new(t, NS_H_LMCUT);
    forward f = {.cstar = r.plan_len};
    bool capped = forward_search(sp, t, &sg, h, &f, cap, 0) == FWD_LIMIT;
    ns_heuristic_free(h);
    ns_succgen_free(&sg);
    if (capped) {
        plan_only(sp, t, r.plan, r.plan_len);
        sp->explored = (int64_t)cap;
    } else {
        keep_optimal(sp, t, &f);
    }
    forward_free(&f);
    ns_search_result_free(&r);
    return NS_OK;
}

ns_status ns_space_build(ns_space *sp, const ns_task *t, const ns_space_opts *o, ns_error *err)
{
    memset(sp, 0, sizeof *sp);
    sp->task = t;
    if (!t->unit_cost)
        return ns_error_set(err, NS_ERR_UNSUPPORTED, t->problem->path, 0, 0,
                            "state spaces are built for unit-cost tasks only");
    ns_registry_init(&sp->states, t->nwords);
    size_t cap = o->max_states ? o->max_states : DEFAULT_CAP;
    ns_status st = o->mode == NS_SPACE_FULL ? build_full(sp, t, cap) : build_optimal(sp, t, o, cap, err);
    if (st != NS_OK) ns_space_free(sp);
    return st;
}

void ns_space_free(ns_space *sp)
{
    ns_registry_free(&sp->states);
    free(sp->edge_start);
    free(sp->edge_op);
    free(sp->edge_dst);
    free(sp->g);
    free(sp->hstar);
    memset(sp, 0, sizeof *sp);
}

bool ns_space_edge_optimal(const ns_space *sp, uint32_t s, int64_t e)
{
    int32_t h = sp->hstar[sp->edge_dst[e]];
    return sp->cstar >= 0 && h >= 0 && sp->g[s] + 1 + h == sp->cstar && sp->g[s] + sp->hstar[s] == sp->cstar;
}

/* counts[s]: optimal plans from s (states on no optimal path: 0). */
static double *path_counts(const ns_space *sp)
{
    uint32_t n = sp->states.n;
    double *c = ns_xcalloc((size_t)n + 1, sizeof(double));
    /* ids increase with g, and optimal edges go from g to g+1 */
    for (uint32_t s = n; s-- > 0;) {
        if (sp->hstar[s] == 0 && sp->g[s] == sp->cstar) {
            c[s] = 1;
            continue;
        }
        for (int64_t e = sp->edge_start[s]; e < sp->edge_start[s + 1]; e++)
            if (ns_space_edge_optimal(sp, s, e)) c[s] += c[sp->edge_dst[e]];
        if (c[s] > 9007199254740992.0) c[s] = 9007199254740992.0;
    }
    return c;
}

double ns_space_count_plans(const ns_space *sp)
{
    if (sp->cstar < 0 || sp->states.n == 0) return 0;
    double *c = path_counts(sp);
    double v = c[0];
    free(c);
    return v;
}

/* Enumerates all plans in edge order (used when there are at most k). */
static void enumerate(const ns_space *sp, const double *c, uint32_t s, int depth, int64_t *path, int64_t *plans,
                      int *n, int k)
{
    if (*n >= k) return;
    if (depth == sp->cstar) {
        memcpy(plans + (size_t)*n * (size_t)sp->cstar, path, sizeof(int64_t) * (size_t)sp->cstar);
        (*n)++;
        return;
    }
    for (int64_t e = sp->edge_start[s]; e < sp->edge_start[s + 1]; e++) {
        if (!ns_space_edge_optimal(sp, s, e) || c[sp->edge_dst[e]] == 0) continue;
        path[depth] = e;
        enumerate(sp, c, sp->edge_dst[e], depth + 1, path, plans, n, k);
    }
}

int ns_space_sample_plans(const ns_space *sp, int k, uint64_t seed, int64_t *plans)
{
    if (sp->cstar < 0 || k <= 0) return 0;
    double *c = path_counts(sp);
    int n = 0;
    int64_t *path = ns_xmalloc(sizeof(int64_t) * ((size_t)sp->cstar + 1));
    if (c[0] <= (double)k) {
        enumerate(sp, c, 0, 0, path, plans, &n, k);
    } else {
        ns_rng rng;
        ns_rng_seed(&rng, seed);
        size_t hcap = 16;
        while (hcap < (size_t)k * 4) hcap *= 2;
        uint64_t *seen = ns_xcalloc(hcap, sizeof(uint64_t));
        for (long tries = 0; n < k && tries < 20L * k; tries++) {
            uint32_t s = 0;
            for (int d = 0; d < sp->cstar; d++) {
                double x = ns_rng_double(&rng) * c[s];
                int64_t pick = -1;
                for (int64_t e = sp->edge_start[s]; e < sp->edge_start[s + 1]; e++) {
                    if (!ns_space_edge_optimal(sp, s, e)) continue;
                    pick = e;
                    x -= c[sp->edge_dst[e]];
                    if (x < 0) break;
                }
                path[d] = pick;
                s = sp->edge_dst[pick];
            }
            uint64_t hv = ns_hash_bytes(path, sizeof(int64_t) * (size_t)sp->cstar, 7) | 1;
            size_t i = (size_t)hv & (hcap - 1);
            bool dup = false;
            while (seen[i]) {
                if (seen[i] == hv) {
                    dup = true; /* a 64-bit hash collision would only drop a plan */
                    break;
                }
                i = (i + 1) & (hcap - 1);
            }
            if (dup) continue;
            seen[i] = hv;
            memcpy(plans + (size_t)n * (size_t)sp->cstar, path, sizeof(int64_t) * (size_t)sp->cstar);
            n++;
        }
        free(seen);
    }
    free(path);
    free(c);
    return n;
}
