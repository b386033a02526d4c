/* heuristic.c — delete-relaxation heuristics: blind, h^max, h^add, h^FF and
 * LM-cut.
 *
 * The relaxed task is built once: propositions are the task's fluent atoms
 * plus two artificial ones, PRE (true in every state; the precondition of
 * operators that have none) and GOAL (added by an artificial zero-cost goal
 * operator whose preconditions are the positive goal atoms).  Negative
 * preconditions and goals are dropped.  Relaxed operators keep one
 * unsatisfied-precondition counter each, shared by all their add effects
 * (Fast Downward's unary operators would split them per effect; the result
 * is the same).  Add effects that are also preconditions are dropped: they
 * cannot help in the relaxation.
 *
 * Explorations are generalised Dijkstra runs driven by a radix heap, a
 * monotone integer priority queue: every pushed key is at least the last
 * popped key, which holds for h^max, h^add and LM-cut's incremental h^max
 * updates because costs are non-negative.
 *
 * LM-cut follows Helmert & Domshlak (2009) as implemented in Fast Downward
 * (lm_cut_landmarks.cc): full h^max exploration recording each operator's
 * supporter (the precondition that was popped last, i.e. a maximal one);
 * then, while h^max(GOAL) > 0: mark the goal zone (GOAL and everything
 * reached backwards through zero-cost achievers' supporters), explore
 * forwards from the state through supporter edges without entering the goal
 * zone, collect the operators crossing into it (the cut), subtract the
 * cut's minimum cost from each of them, add it to h, and repair h^max
 * incrementally.
 *
 * All scratch is allocated in ns_heuristic_new; evaluation never allocates
 * except when a radix-heap bucket first grows beyond its earlier size. */
#include "nextstate/core/heuristic.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define INF_COST INT32_MAX

enum { UNREACHED = 0, REACHED = 1, GOAL_ZONE = 2, BEFORE_GOAL_ZONE = 3, POPPED = 4 };

/* ---- radix heap: (uint32 key, int32 value) pairs, monotone pops ---- */
typedef struct rheap {
    uint64_t *b[33]; /* entries packed as key << 32 | value */
    size_t n[33], cap[33];
    uint32_t last;
    size_t size;
} rheap;

static inline int rh_bucket(uint32_t key, uint32_t last)
{
    return key == last ? 0 : 32 - __builtin_clz(key ^ last);
}

static inline void rh_put(rheap *q, int bi, uint64_t e)
{
    if (q->n[bi] == q->cap[bi]) NS_GROW(q->b[bi], q->cap[bi], q->n[bi] + 1);
    q->b[bi][q->n[bi]++] = e;
}

static inline void rh_push(rheap *q, uint32_t key, int value)
{
    rh_put(q, rh_bucket(key, q->last), (uint64_t)key << 32 | (uint32_t)value);
    q->size++;
}

static inline void rh_clear(rheap *q)
{
    for (int i = 0; i < 33; i++) q->n[i] = 0;
    q->size = 0;
    q->last = 0;
}

/* Pops a minimal entry; q->size > 0. */
static inline void rh_pop(rheap *q, uint32_t *key, int *value)
{
    if (q->n[0] == 0) {
        int i = 1;
        while (q->n[i] == 0) i++;
        uint64_t *a = q->b[i];
        size_t m = q->n[i];
        uint32_t mn = UINT32_MAX;
        for (size_t j = 0; j < m; j++) {
            uint32_t k = (uint32_t)(a[j] >> 32);
            if (k < mn) mn = k;
        }
        q->last = mn;
        q->n[i] = 0;
        for (size_t j = 0; j < m; j++) rh_put(q, rh_bucket((uint32_t)(a[j] >> 32), mn), a[j]);
    }
    uint64_t e = q->b[0][--q->n[0]];
    q->size--;
    *key = (uint32_t)(e >> 32);
    *value = (int)(uint32_t)e;
}

static size_t rh_bytes(const rheap *q)
{
    size_t s = 0;
    for (int i = 0; i < 33; i++) s += q->cap[i] * sizeof(uint64_t);
    return s;
}

static void rh_free(rheap *q)
{
    for (int i = 0; i < 33; i++) free(q->b[i]);
}

/* ---- the heuristic ---- */
struct ns_heuristic {
    const ns_task *task;
    ns_heuristic_kind kind;
    int min_cost; /* blind: cheapest operator (INF_COST if none) */

    /* relaxed task (props: atoms, PRE, GOAL; ops: task ops, goal op) */
    int np, no, pre_prop, goal_prop, goal_op;
    int *pre_start, *pre;         /* op -> preconditions */
    int *eff_start, *eff;         /* op -> add effects */
    int *base_cost;               /* op -> cost */
    int *precof_start, *precof;   /* prop -> ops having it as precondition */
    int *effof_start, *effof;     /* prop -> ops adding it */

    /* scratch */
    int *pcost;      /* prop -> h^max / h^add cost */
    uint8_t *pstat;  /* prop -> UNREACHED / REACHED / zones */
    int *psupp;      /* prop -> best supporter op (h^add / h^FF) or -1 */
    int *unsat;      /* op -> unsatisfied preconditions */
    int64_t *oacc;   /* op -> accumulated precondition cost (h^add) */
    int *ocost;      /* op -> current (reduced) cost (LM-cut) */
    int *osupp;      /* op -> supporter prop or -1 (LM-cut) */
    int *osuppcost;  /* op -> supporter's cost (LM-cut) */
    int *stack;      /* np + no + total precondition entries */
    int *cut;        /* no entries */
    uint32_t *omark; /* op -> stamp (h^FF) */
    int *rplan;      /* h^FF: the last relaxed plan's task operators (no of them at most) */
    int nrplan;
    uint32_t stamp;
    bool last_supporter; /* ties between best supporters: the last reached wins */
    long work;           /* steps of the explorations so far (ns_heuristic_work) */
    rheap q;
    size_t static_bytes;
};

/* Sorts and deduplicates a[0..n); returns the new length. */
static int sort_unique(int *a, int n)
{
    qsort(a, (size_t)n, sizeof *a, ns_cmp_int);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || a[m - 1] != a[i]) a[m++] = a[i];
    return m;
}

/* Builds prop -> op CSR index from op -> prop CSR lists. */
static void invert(int np, int no, const int *start, const int *list, int **out_start,
                   int **out_list)
{
    int *os = ns_xcalloc((size_t)np + 1, sizeof(int));
    for (int o = 0; o < no; o++)
        for (int k = start[o]; k < start[o + 1]; k++) os[list[k] + 1]++;
    for (int p = 0; p < np; p++) os[p + 1] += os[p];
    int *ol = ns_xmalloc(((size_t)os[np] + 1) * sizeof(int));
    int *fill = ns_xmalloc(((size_t)np + 1) * sizeof(int));
    memcpy(fill, os, (size_t)np * sizeof(int));
    for (int o = 0; o < no; o++)
        for (int k = start[o]; k < start[o + 1]; k++) ol[fill[list[k]]++] = o;
    free(fill);
    *out_start = os;
    *out_list = ol;
}

static void build_relaxed(ns_heuristic *h)
{
    const ns_task *t = h->task;
    const int na = t->natoms;
    h->pre_prop = na;
    h->goal_prop = na + 1;
    h->np = na + 2;
    h->goal_op = t->nops;
    h->no = t->nops + 1;

    size_t npre = 0, neff = 0;
    for (int o = 0; o < t->nops; o++) {
        npre += (size_t)(t->ops[o].npre > 0 ? t->ops[o].npre : 1);
        neff += (size_t)t->ops[o].nadd;
    }
    npre += (size_t)(t->ngoal_pos > 0 ? t->ngoal_pos : 1);
    neff += 1;
    h->pre_start = ns_xmalloc(((size_t)h->no + 1) * sizeof(int));
    h->eff_start = ns_xmalloc(((size_t)h->no + 1) * sizeof(int));
    h->pre = ns_xmalloc(npre * sizeof(int));
    h->eff = ns_xmalloc(neff * sizeof(int));
    h->base_cost = ns_xmalloc((size_t)h->no * sizeof(int));

    int np_ = 0, ne_ = 0;
    for (int o = 0; o < h->no; o++) {
        h->pre_start[o] = np_;
        h->eff_start[o] = ne_;
        int *pre = h->pre + np_;
        int n;
        if (o < t->nops) {
            const ns_op *op = &t->ops[o];
            memcpy(pre, ns_op_pre(t, op), (size_t)op->npre * sizeof(int));
            n = op->npre;
        } else {
            memcpy(pre, t->goal_pos, (size_t)t->ngoal_pos * sizeof(int));
            n = t->ngoal_pos;
        }
        n = n > 0 ? sort_unique(pre, n) : 0;
        if (n == 0) pre[n++] = h->pre_prop;
        np_ += n;

        int *eff = h->eff + ne_;
        int m = 0;
        if (o < t->nops) {
            const ns_op *op = &t->ops[o];
            const int *add = ns_op_add(t, op);
            for (int k = 0; k < op->nadd; k++) {
                bool in_pre = false;
                for (int j = 0; j < n && !in_pre; j++) in_pre = pre[j] == add[k];
                if (!in_pre) eff[m++] = add[k];
            }
            m = m > 0 ? sort_unique(eff, m) : 0;
            h->base_cost[o] = op->cost;
        } else {
            eff[m++] = h->goal_prop;
            h->base_cost[o] = 0;
        }
        ne_ += m;
    }
    h->pre_start[h->no] = np_;
    h->eff_start[h->no] = ne_;
    invert(h->np, h->no, h->pre_start, h->pre, &h->precof_start, &h->precof);
    invert(h->np, h->no, h->eff_start, h->eff, &h->effof_start, &h->effof);
}

ns_heuristic *ns_heuristic_new(const ns_task *t, ns_heuristic_kind kind)
{
    ns_heuristic *h = ns_xcalloc(1, sizeof *h);
    h->task = t;
    h->kind = kind;
    h->min_cost = INF_COST;
    for (int o = 0; o < t->nops; o++)
        if (t->ops[o].cost < h->min_cost) h->min_cost = t->ops[o].cost;
    if (kind == NS_H_BLIND) return h;

    build_relaxed(h);
    size_t np = (size_t)h->np, no = (size_t)h->no;
    h->pcost = ns_xmalloc(np * sizeof(int));
    h->pstat = ns_xmalloc(np);
    h->psupp = ns_xmalloc(np * sizeof(int));
    h->unsat = ns_xmalloc(no * sizeof(int));
    h->oacc = ns_xmalloc(no * sizeof(int64_t));
    /* h^FF pushes every precondition of every relaxed-plan operator; the
     * other users push each proposition at most once. */
    size_t nstack = np + no + (size_t)h->pre_start[no];
    h->stack = ns_xmalloc(nstack * sizeof(int));
    h->static_bytes = sizeof *h + (no + 1) * 2 * sizeof(int) + no * sizeof(int) +
                      ((size_t)h->pre_start[no] + (size_t)h->eff_start[no]) * 2 * sizeof(int) +
                      (np + 1) * 2 * sizeof(int) + np * (2 * sizeof(int) + 1) +
                      no * (sizeof(int) + sizeof(int64_t)) + nstack * sizeof(int);
    if (kind == NS_H_LMCUT) {
        h->ocost = ns_xmalloc(no * sizeof(int));
        h->osupp = ns_xmalloc(no * sizeof(int));
        h->osuppcost = ns_xmalloc(no * sizeof(int));
        h->cut = ns_xmalloc(no * sizeof(int));
        h->static_bytes += no * 4 * sizeof(int);
    }
    if (kind == NS_H_FF) {
        h->omark = ns_xcalloc(no, sizeof(uint32_t));
        h->rplan = ns_xmalloc(no * sizeof(int));
        h->static_bytes += no * (sizeof(uint32_t) + sizeof(int));
    }
    /* Pre-size the queue so that evaluation rarely allocates. */
    for (int i = 0; i < 33; i++) NS_GROW(h->q.b[i], h->q.cap[i], 64);
    return h;
}

void ns_heuristic_free(ns_heuristic *h)
{
    if (!h) return;
    free(h->pre_start);
    free(h->pre);
    free(h->eff_start);
    free(h->eff);
    free(h->base_cost);
    free(h->precof_start);
    free(h->precof);
    free(h->effof_start);
    free(h->effof);
    free(h->pcost);
    free(h->pstat);
    free(h->psupp);
    free(h->unsat);
    free(h->oacc);
    free(h->ocost);
    free(h->osupp);
    free(h->osuppcost);
    free(h->stack);
    free(h->cut);
    free(h->omark);
    free(h->rplan);
    rh_free(&h->q);
    free(h);
}

long ns_heuristic_work(const ns_heuristic *h) { return h->work; }

size_t ns_heuristic_bytes(const ns_heuristic *h)
{
    return h->kind == NS_H_BLIND ? sizeof *h : h->static_bytes + rh_bytes(&h->q);
}

static inline int sat_add(int64_t a, int64_t b)
{
    int64_t s = a + b;
    return s >= INF_COST ? INF_COST - 1 : (int)s;
}

/* Resets costs, statuses and counters; queues the state's atoms and PRE. */
static void explore_init(ns_heuristic *h, const ns_word *s)
{
    const int na = h->task->natoms;
    h->work += h->np + h->no;
    for (int p = 0; p < h->np; p++) h->pcost[p] = INF_COST;
    memset(h->pstat, UNREACHED, (size_t)h->np);
    for (int o = 0; o < h->no; o++) h->unsat[o] = h->pre_start[o + 1] - h->pre_start[o];
    rh_clear(&h->q);
    const int nw = h->task->nwords;
    for (int w = 0; w < nw; w++) {
        ns_word bits = s[w];
        while (bits) {
            int p = w * 64 + __builtin_ctzll(bits);
            bits &= bits - 1;
            if (p >= na) break;
            h->pcost[p] = 0;
            h->pstat[p] = REACHED;
            rh_push(&h->q, 0, p);
        }
    }
    h->pcost[h->pre_prop] = 0;
    h->pstat[h->pre_prop] = REACHED;
    rh_push(&h->q, 0, h->pre_prop);
}

/* h^max (additive = false) or h^add (additive = true), with best supporters
 * in psupp.  Stops as soon as GOAL is reached. */
static int explore_maxadd(ns_heuristic *h, const ns_word *s, bool additive)
{
    explore_init(h, s);
    for (int p = 0; p < h->np; p++) h->psupp[p] = -1;
    if (additive) memset(h->oacc, 0, (size_t)h->no * sizeof(int64_t));
    const int *precof_start = h->precof_start, *precof = h->precof;
    const int *eff_start = h->eff_start, *eff = h->eff;
    int *pcost = h->pcost, *unsat = h->unsat, *psupp = h->psupp;
    int64_t *oacc = h->oacc;
    const bool last = h->last_supporter;
    rheap *q = &h->q;
    long work = 0; /* added to h->work on the way out (a local: no store per atom) */
    while (q->size) {
        uint32_t key;
        int p;
        rh_pop(q, &key, &p);
        if ((uint32_t)pcost[p] < key) continue;
        if (p == h->goal_prop) {
            h->work += work;
            return pcost[p];
        }
        work += 1 + precof_start[p + 1] - precof_start[p];
        if (last) h->pstat[p] = POPPED; /* only the last-supporter ties read it */
        for (int k = precof_start[p]; k < precof_start[p + 1]; k++) {
            int o = precof[k];
            if (additive) oacc[o] += key;
            if (--unsat[o] != 0) continue;
            int c = sat_add(additive ? oacc[o] : (int64_t)key, h->base_cost[o]);
            for (int j = eff_start[o]; j < eff_start[o + 1]; j++) {
                int e = eff[j];
                if (c < pcost[e]) {
                    pcost[e] = c;
                    psupp[e] = o;
                    rh_push(q, (uint32_t)c, e);
                } else if (last && c == pcost[e] && h->pstat[e] != POPPED) {
                    /* not once e is popped: a zero-cost operator's tie could
                       then close a cycle of supporters (e's own consumers) */
                    psupp[e] = o;
                }
            }
        }
    }
    h->work += work;
    return NS_H_INF;
}

static int eval_ff(ns_heuristic *h, const ns_word *s)
{
    h->nrplan = 0;
    if (explore_maxadd(h, s, true) == NS_H_INF) return NS_H_INF;
    if (++h->stamp == 0) {
        memset(h->omark, 0, (size_t)h->no * sizeof(uint32_t));
        h->stamp = 1;
    }
    const uint32_t stamp = h->stamp;
    int *stack = h->stack, sp = 0;
    int64_t total = 0;
    h->omark[h->goal_op] = stamp;
    for (int k = h->pre_start[h->goal_op]; k < h->pre_start[h->goal_op + 1]; k++)
        stack[sp++] = h->pre[k];
    while (sp) {
        int p = stack[--sp];
        int o = h->psupp[p];
        if (o < 0 || h->omark[o] == stamp) continue; /* true in s, or done */
        h->omark[o] = stamp;
        if (o < h->task->nops) h->rplan[h->nrplan++] = o;
        total += h->base_cost[o];
        for (int k = h->pre_start[o]; k < h->pre_start[o + 1]; k++) stack[sp++] = h->pre[k];
    }
    return total >= INF_COST ? INF_COST - 1 : (int)total;
}

int ns_heuristic_preferred(const ns_heuristic *h, const ns_word *s, int *ops)
{
    if (h->kind != NS_H_FF || h->stamp == 0) return 0;
    /* the relaxed plan's operators (relaxed ops 0 … nops-1 are the task's),
       not a scan over all operators: the applicable ones, sorted */
    int n = 0;
    for (int k = 0; k < h->nrplan; k++)
        if (ns_task_applicable(h->task, h->rplan[k], s)) ops[n++] = h->rplan[k];
    ns_sort_int(ops, n); /* a handful: insertion sort, no qsort call per evaluation */
    return n;
}

/* ---- LM-cut ---- */
static inline void lm_enqueue(ns_heuristic *h, int p, int cost)
{
    if (h->pstat[p] == UNREACHED || h->pcost[p] > cost) {
        h->pstat[p] = REACHED;
        h->pcost[p] = cost;
        rh_push(&h->q, (uint32_t)cost, p);
    }
}

static void lm_first_exploration(ns_heuristic *h, const ns_word *s)
{
    explore_init(h, s);
    for (int o = 0; o < h->no; o++) {
        h->osupp[o] = -1;
        h->osuppcost[o] = INF_COST;
    }
    rheap *q = &h->q;
    long work = 0;
    while (q->size) {
        uint32_t key;
        int p;
        rh_pop(q, &key, &p);
        int pc = h->pcost[p];
        if ((uint32_t)pc < key) continue;
        work += 1 + h->precof_start[p + 1] - h->precof_start[p];
        for (int k = h->precof_start[p]; k < h->precof_start[p + 1]; k++) {
            int o = h->precof[k];
            if (--h->unsat[o] != 0) continue;
            h->osupp[o] = p;
            h->osuppcost[o] = pc;
            int tc = sat_add(pc, h->ocost[o]);
            for (int j = h->eff_start[o]; j < h->eff_start[o + 1]; j++) lm_enqueue(h, h->eff[j], tc);
        }
    }
    h->work += work;
}

static void lm_update_supporter(ns_heuristic *h, int o)
{
    int sp = h->osupp[o];
    for (int k = h->pre_start[o]; k < h->pre_start[o + 1]; k++) {
        int p = h->pre[k];
        if (h->pcost[p] > h->pcost[sp]) sp = p;
    }
    h->osupp[o] = sp;
    h->osuppcost[o] = h->pcost[sp];
}

static void lm_incremental(ns_heuristic *h, const int *cut, int ncut)
{
    rheap *q = &h->q;
    rh_clear(q);
    for (int i = 0; i < ncut; i++) {
        int o = cut[i];
        int tc = sat_add(h->osuppcost[o], h->ocost[o]);
        for (int j = h->eff_start[o]; j < h->eff_start[o + 1]; j++) lm_enqueue(h, h->eff[j], tc);
    }
    long work = 0;
    while (q->size) {
        uint32_t key;
        int p;
        rh_pop(q, &key, &p);
        int pc = h->pcost[p];
        if ((uint32_t)pc < key) continue;
        work += 1 + h->precof_start[p + 1] - h->precof_start[p];
        for (int k = h->precof_start[p]; k < h->precof_start[p + 1]; k++) {
            int o = h->precof[k];
            if (h->osupp[o] != p) continue;
            int old = h->osuppcost[o];
            if (old <= pc) continue;
            lm_update_supporter(h, o);
            int now = h->osuppcost[o];
            if (now != old) {
                int tc = sat_add(now, h->ocost[o]);
                for (int j = h->eff_start[o]; j < h->eff_start[o + 1]; j++)
                    lm_enqueue(h, h->eff[j], tc);
            }
        }
    }
    h->work += work;
}

/* Marks p and, through zero-cost achievers' supporters, its plateau. */
static void lm_mark_goal_plateau(ns_heuristic *h, int p)
{
    int *stack = h->stack, sp = 0;
    if (p >= 0 && h->pstat[p] != GOAL_ZONE) {
        h->pstat[p] = GOAL_ZONE;
        stack[sp++] = p;
    }
    while (sp) {
        int x = stack[--sp];
        for (int k = h->effof_start[x]; k < h->effof_start[x + 1]; k++) {
            int o = h->effof[k];
            if (h->ocost[o] != 0) continue;
            int y = h->osupp[o];
            if (y >= 0 && h->pstat[y] != GOAL_ZONE) {
                h->pstat[y] = GOAL_ZONE;
                stack[sp++] = y;
            }
        }
    }
}

static int lm_second_exploration(ns_heuristic *h, const ns_word *s)
{
    const int na = h->task->natoms, nw = h->task->nwords;
    int *stack = h->stack, sp = 0, ncut = 0;
    for (int w = 0; w < nw; w++) {
        ns_word bits = s[w];
        while (bits) {
            int p = w * 64 + __builtin_ctzll(bits);
            bits &= bits - 1;
            if (p >= na) break;
            h->pstat[p] = BEFORE_GOAL_ZONE;
            stack[sp++] = p;
        }
    }
    h->pstat[h->pre_prop] = BEFORE_GOAL_ZONE;
    stack[sp++] = h->pre_prop;
    long work = 0;
    while (sp) {
        int p = stack[--sp];
        work += 1 + h->precof_start[p + 1] - h->precof_start[p];
        for (int k = h->precof_start[p]; k < h->precof_start[p + 1]; k++) {
            int o = h->precof[k];
            if (h->osupp[o] != p) continue;
            bool to_goal = false;
            for (int j = h->eff_start[o]; j < h->eff_start[o + 1]; j++)
                if (h->pstat[h->eff[j]] == GOAL_ZONE) {
                    to_goal = true;
                    break;
                }
            if (to_goal) {
                h->cut[ncut++] = o;
                continue;
            }
            for (int j = h->eff_start[o]; j < h->eff_start[o + 1]; j++) {
                int e = h->eff[j];
                if (h->pstat[e] != BEFORE_GOAL_ZONE) {
                    h->pstat[e] = BEFORE_GOAL_ZONE;
                    stack[sp++] = e;
                }
            }
        }
    }
    h->work += work;
    return ncut;
}

static int eval_lmcut(ns_heuristic *h, const ns_word *s)
{
    memcpy(h->ocost, h->base_cost, (size_t)h->no * sizeof(int));
    lm_first_exploration(h, s);
    const int g = h->goal_prop;
    if (h->pstat[g] == UNREACHED) return NS_H_INF;
    int64_t total = 0;
    while (h->pcost[g] != 0) {
        lm_mark_goal_plateau(h, g);
        int ncut = lm_second_exploration(h, s);
        if (ncut == 0) break; /* cannot happen for a correct h^max */
        int cut_cost = INF_COST;
        for (int i = 0; i < ncut; i++)
            if (h->ocost[h->cut[i]] < cut_cost) cut_cost = h->ocost[h->cut[i]];
        if (cut_cost <= 0) break; /* ditto */
        for (int i = 0; i < ncut; i++) h->ocost[h->cut[i]] -= cut_cost;
        total += cut_cost;
        lm_incremental(h, h->cut, ncut);
        h->work += h->np;
        for (int p = 0; p < h->np; p++)
            if (h->pstat[p] >= GOAL_ZONE) h->pstat[p] = REACHED;
    }
    return total >= INF_COST ? INF_COST - 1 : (int)total;
}

int ns_heuristic_eval(ns_heuristic *h, const ns_word *s)
{
    switch (h->kind) {
    case NS_H_BLIND:
        if (ns_task_is_goal(h->task, s)) return 0;
        return h->min_cost == INF_COST ? NS_H_INF : h->min_cost;
    case NS_H_MAX:
        return explore_maxadd(h, s, false);
    case NS_H_ADD:
        return explore_maxadd(h, s, true);
    case NS_H_FF:
        return eval_ff(h, s);
    case NS_H_LMCUT:
        return eval_lmcut(h, s);
    }
    return 0;
}

static const char *const h_names[] = {"blind", "hmax", "hadd", "ff", "lmcut"};

int ns_heuristic_parse(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < 5; i++)
        if (ns_streq_ci(name, h_names[i])) return i;
    if (ns_streq_ci(name, "hff")) return NS_H_FF;
    if (ns_streq_ci(name, "lm-cut")) return NS_H_LMCUT;
    return -1;
}

const char *ns_heuristic_name(ns_heuristic_kind k)
{
    return (unsigned)k < 5 ? h_names[k] : "?";
}

/* ---- the classical heuristics as evaluators ---- */
static int classical_eval(void *ctx, const ns_word *s, int *pref, int *npref)
{
    ns_heuristic *h = ctx;
    int v = ns_heuristic_eval(h, s);
    if (pref) *npref = v != NS_H_INF ? ns_heuristic_preferred(h, s, pref) : 0;
    return v;
}

static size_t classical_bytes(const void *ctx) { return ns_heuristic_bytes(ctx); }

static long classical_work(const void *ctx) { return ns_heuristic_work(ctx); }

static void classical_free(void *ctx) { ns_heuristic_free(ctx); }

void ns_heuristic_set_last_supporter(ns_heuristic *h, bool last) { h->last_supporter = last; }

void ns_evaluator_classical(ns_evaluator *e, const ns_task *t, ns_heuristic_kind kind)
{
    ns_evaluator_classical_ties(e, t, kind, false);
}

void ns_evaluator_classical_ties(ns_evaluator *e, const ns_task *t, ns_heuristic_kind kind, bool last_supporter)
{
    ns_heuristic *h = ns_heuristic_new(t, kind);
    ns_heuristic_set_last_supporter(h, last_supporter);
    memset(e, 0, sizeof *e);
    e->ctx = h;
    e->eval = classical_eval;
    e->bytes = classical_bytes;
    e->work = classical_work;
    e->free = classical_free;
}

void ns_evaluator_free(ns_evaluator *e)
{
    if (e->free && e->ctx) e->free(e->ctx);
    memset(e, 0, sizeof *e);
}
