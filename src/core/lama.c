/* lama.c — LAMA-first's lazy search over h^FF (or a given evaluator) and h^LM
 * (see lama.h).
 *
 * Per state (registry id): its (parent, operator) link, g (operator costs,
 * for relinking on cheaper paths), an evaluated flag and its accepted
 * landmarks (lmw words).  Entries (parent, operator) live in one array; the
 * open lists are bucket queues by key (FIFO per key) holding entry indices. */
#include "nextstate/core/lama.h"

#include <stdlib.h>
#include <string.h>

#include "nextstate/core/landmarks.h"
#include "nextstate/core/state.h"
#include "nextstate/core/succgen.h"
#include "nextstate/core/succorder.h"

typedef struct fifo {
    uint32_t *a;
    size_t head, n, cap;
} fifo;

/* A bucket queue over integer keys: b[i] holds key base + i, so its size
 * follows the keys' range, not their magnitude (a learned heuristic's keys
 * sit near 10^9); a key below base moves the buckets up by at least nb. */
typedef struct hqueue {
    fifo *b;
    size_t nb, capb;
    size_t min, size, bytes;
    long base;
    long work; /* buckets made, moved and passed over (a learned key's range can be wide) */
} hqueue;

static void hq_push(hqueue *q, int key, uint32_t e)
{
    if (q->nb == 0) q->base = key;
    if (key < q->base) {
        size_t up = (size_t)(q->base - key);
        if (up < q->nb) up = q->nb;
        NS_GROW(q->b, q->capb, q->nb + up);
        memmove(q->b + up, q->b, q->nb * sizeof(fifo));
        memset(q->b, 0, up * sizeof(fifo));
        q->work += (long)(up + q->nb);
        q->nb += up;
        q->min += up;
        q->base -= (long)up;
    }
    size_t k = (size_t)(key - q->base);
    if (k >= q->nb) {
        NS_GROW(q->b, q->capb, k + 1);
        memset(q->b + q->nb, 0, (k + 1 - q->nb) * sizeof(fifo));
        q->work += (long)(k + 1 - q->nb);
        q->nb = k + 1;
    }
    fifo *f = &q->b[k];
    if (f->n == f->cap) {
        size_t old = f->cap;
        NS_GROW(f->a, f->cap, f->n + 1);
        q->bytes += (f->cap - old) * sizeof(uint32_t);
    }
    f->a[f->n++] = e;
    if (q->size == 0 || k < q->min) q->min = k;
    q->size++;
}

/* The first entry of the lowest key; q->size > 0. */
static uint32_t hq_pop(hqueue *q)
{
    size_t min0 = q->min;
    while (q->b[q->min].head == q->b[q->min].n) q->min++;
    q->work += (long)(q->min - min0);
    fifo *f = &q->b[q->min];
    uint32_t e = f->a[f->head++];
    if (f->head == f->n) f->head = f->n = 0;
    q->size--;
    return e;
}

static void hq_free(hqueue *q)
{
    for (size_t i = 0; i < q->nb; i++) free(q->b[i].a);
    free(q->b);
}

typedef struct lnode {
    uint32_t parent;
    int op;
    int g;
    int evaluated;
} lnode;

typedef struct lentry {
    uint32_t parent;
    int op;
} lentry;

typedef struct lama {
    const ns_task *t;
    const ns_search_opts *o;
    ns_search_result *r;
    ns_registry reg;
    ns_succgen sg;
    ns_succorder order; /* successor order (succorder.h) */
    ns_landmarks lms;
    ns_lmcount lmc;
    ns_evaluator own;      /* h^FF, when o->evaluator is not given */
    const ns_evaluator *ev; /* the first heuristic: o->evaluator or &own */
    int unit;              /* ev's keys per unit of cost (progress is counted in units) */
    const ns_evaluator *extra; /* o->extra: a third heuristic with lists 4 and 5, or NULL */
    int xunit;
    int lmw;
    lnode *nodes;
    ns_word *acc; /* lmw words per state */
    size_t ncap;
    lentry *E;
    size_t nE, capE;
    hqueue q[6]; /* ev, ev preferred, lm, lm preferred, extra, extra preferred */
    long prio[6];
    int nq;      /* 4, or 6 with an extra heuristic */
    int *ops, *pff;
    uint32_t *pmark, pstamp;
    ns_word *state, *accbuf;
    double cpu_start;
    long work, next_check, check_every;
    double last_check;
} lama;

static void ensure_nodes(lama *s, uint32_t id)
{
    if (id < s->ncap) return;
    size_t cap = s->ncap ? s->ncap * 2 : 1024;
    while (cap <= id) cap *= 2;
    s->nodes = ns_xrealloc(s->nodes, cap * sizeof(lnode));
    s->acc = ns_xrealloc(s->acc, cap * (size_t)s->lmw * sizeof(ns_word));
    s->ncap = cap;
}

static size_t lama_bytes(const lama *s)
{
    size_t b = ns_registry_bytes(&s->reg) + s->ncap * (sizeof(lnode) + (size_t)s->lmw * sizeof(ns_word)) +
               s->capE * sizeof(lentry) + (s->ev->bytes ? s->ev->bytes(s->ev->ctx) : 0) +
               (size_t)s->t->nops * 2 * sizeof(int); /* successor order */
    for (int i = 0; i < s->nq; i++) b += s->q[i].bytes + s->q[i].capb * sizeof(fifo);
    if (s->extra && s->extra->bytes) b += s->extra->bytes(s->extra->ctx);
    return b;
}

/* Reads the CPU clock every check_every units of work, adapted so that
 * reads are 0.5–4 ms apart (as search.c). */
static bool over_time(lama *s)
{
    if (++s->work < s->next_check) return false;
    double now = ns_cpu_now(), dt = now - s->last_check;
    s->last_check = now;
    if (dt < 5e-4 && s->check_every < (1L << 20)) s->check_every *= 2;
    else if (dt > 4e-3 && s->check_every > 1) s->check_every = s->check_every / 4 > 0 ? s->check_every / 4 : 1;
    s->next_check = s->work + s->check_every;
    return s->o->time_limit > 0 && now - s->cpu_start > s->o->time_limit;
}

static void extract_plan(lama *s, uint32_t goal)
{
    int len = 0;
    for (uint32_t id = goal; s->nodes[id].parent != NS_NO_STATE; id = s->nodes[id].parent) len++;
    s->r->plan = ns_xmalloc((size_t)(len > 0 ? len : 1) * sizeof(int));
    s->r->plan_len = len;
    long cost = 0;
    int k = len;
    for (uint32_t id = goal; s->nodes[id].parent != NS_NO_STATE; id = s->nodes[id].parent) {
        s->r->plan[--k] = s->nodes[id].op;
        cost += s->t->ops[s->nodes[id].op].cost;
    }
    s->r->plan_cost = cost;
}

/* Queues the successors of the evaluated state cur (in s->state) with keys
 * hff, hlm (and hx in lists 4, 5 with an extra heuristic); preferred ones
 * (h^FF's place's: s->pff[0..nff), from its evaluation) also in the odd
 * lists. */
static void queue_successors(lama *s, uint32_t cur, int hff, int hlm, int hx, int nff)
{
    int nops = ns_succgen_applicable(&s->sg, s->state, s->ops);
    ns_succorder_sort(&s->order, s->ops, nops);
    bool pref = s->o->preferred;
    if (pref) {
        s->pstamp++;
        for (int k = 0; k < nff; k++) s->pmark[s->pff[k]] = s->pstamp;
    }
    NS_GROW(s->E, s->capE, s->nE + (size_t)nops);
    for (int k = 0; k < nops; k++) {
        int op = s->ops[k];
        uint32_t e = (uint32_t)s->nE;
        s->E[s->nE++] = (lentry){cur, op};
        hq_push(&s->q[0], hff, e);
        hq_push(&s->q[2], hlm, e);
        if (s->extra) hq_push(&s->q[4], hx, e);
        if (pref && s->pmark[op] == s->pstamp) {
            hq_push(&s->q[1], hff, e);
            hq_push(&s->q[3], hlm, e);
            if (s->extra) hq_push(&s->q[5], hx, e);
        }
    }
    s->r->generated += nops;
}

/* The next new state from the open lists into s->state; its id, or
 * NS_NO_STATE when the lists are exhausted. */
static uint32_t next_state(lama *s)
{
    const ns_task *t = s->t;
    for (;;) {
        int best = -1;
        for (int i = 0; i < s->nq; i++)
            if (s->q[i].size && (best < 0 || s->prio[i] < s->prio[best])) best = i;
        if (best < 0) return NS_NO_STATE;
        s->prio[best]++;
        lentry le = s->E[hq_pop(&s->q[best])];
        ns_task_apply(t, le.op, ns_registry_get(&s->reg, le.parent), s->state);
        int ng = s->nodes[le.parent].g + t->ops[le.op].cost;
        bool is_new;
        uint32_t id = ns_registry_insert(&s->reg, s->state, &is_new);
        ensure_nodes(s, id);
        const ns_word *pacc = s->acc + (size_t)le.parent * (size_t)s->lmw;
        ns_landmarks_progress(&s->lms, pacc, s->state, s->accbuf);
        ns_word *acc = s->acc + (size_t)id * (size_t)s->lmw;
        if (!is_new) { /* accepted on both paths only */
            for (int w = 0; w < s->lmw; w++) acc[w] &= s->accbuf[w];
            if (ng < s->nodes[id].g && s->nodes[id].evaluated == 1) {
                s->nodes[id].parent = le.parent;
                s->nodes[id].op = le.op;
                s->nodes[id].g = ng;
            }
            continue;
        }
        memcpy(acc, s->accbuf, (size_t)s->lmw * sizeof(ns_word));
        s->nodes[id] = (lnode){le.parent, le.op, ng, 0};
        return id;
    }
}

static ns_status run(lama *s)
{
    const ns_task *t = s->t;
    ns_search_result *r = s->r;
    int best_ff = NS_H_INF, best_lm = NS_H_INF, best_x = NS_H_INF;
    uint32_t cur = ns_registry_insert(&s->reg, t->init, NULL);
    ensure_nodes(s, cur);
    s->nodes[cur] = (lnode){NS_NO_STATE, -1, 0, 0};
    ns_landmarks_initial(&s->lms, t->init, s->acc + (size_t)cur * (size_t)s->lmw);
    memcpy(s->state, t->init, (size_t)t->nwords * sizeof(ns_word));
    for (;;) {
        int nff = 0;
        int hff = s->ev->eval(s->ev->ctx, s->state, s->o->preferred ? s->pff : NULL, &nff);
        int hlm = hff == NS_H_INF ? NS_H_INF
                                  : ns_lmcount_eval(&s->lmc, s->acc + (size_t)cur * (size_t)s->lmw, s->state);
        int hx = 0;
        if (s->extra && hlm != NS_H_INF) hx = s->extra->eval(s->extra->ctx, s->state, NULL, NULL);
        r->evaluated++;
        if (r->evaluated == 1) r->init_h = hff;
        s->nodes[cur].evaluated = hff == NS_H_INF || hlm == NS_H_INF || hx == NS_H_INF ? 2 : 1;
        if (s->nodes[cur].evaluated == 1) {
            if (ns_task_is_goal(t, s->state)) {
                r->expanded++;
                extract_plan(s, cur);
                return NS_OK;
            }
            /* progress: a new best landmark count, or a first heuristic value
               lower by a whole unit of cost (a learned heuristic's keys are finer) */
            bool progress = hff / s->unit < best_ff || hlm < best_lm || (s->extra && hx / s->xunit < best_x);
            if (progress && best_ff != NS_H_INF)
                for (int i = 1; i < s->nq; i += 2) s->prio[i] -= 1000;
            if (hff / s->unit < best_ff) best_ff = hff / s->unit;
            if (hlm < best_lm) best_lm = hlm;
            if (s->extra && hx / s->xunit < best_x) best_x = hx / s->xunit;
            r->expanded++;
            queue_successors(s, cur, hff, hlm, hx, nff);
        }
        if (s->o->memory_limit && lama_bytes(s) > s->o->memory_limit) return NS_OUT_OF_MEMORY;
        if (over_time(s)) return NS_OUT_OF_TIME;
        if (s->o->max_evaluated > 0 && r->evaluated >= s->o->max_evaluated) return NS_INCOMPLETE;
        if (s->o->max_work > 0 && s->ev->work && s->ev->work(s->ev->ctx) >= s->o->max_work) return NS_INCOMPLETE;
        cur = next_state(s);
        if (cur == NS_NO_STATE) return NS_UNSOLVABLE;
    }
}

ns_status ns_lama_search(const ns_task *t, const ns_search_opts *o, ns_search_result *r)
{
    memset(r, 0, sizeof *r);
    r->init_h = -1;
    double start = ns_now();
    lama s;
    memset(&s, 0, sizeof s);
    s.t = t;
    s.o = o;
    s.r = r;
    s.cpu_start = ns_cpu_now();
    s.check_every = 1;
    s.last_check = s.cpu_start;
    ns_status st;
    if (t->goal_impossible) {
        st = NS_UNSOLVABLE;
        goto done;
    }
    ns_landmarks_opts lo;
    ns_landmarks_opts_default(&lo);
    lo.time_limit = o->time_limit;
    st = ns_landmarks_build(&s.lms, t, &lo);
    if (st != NS_OK) goto done;
    if (s.lms.unsolvable) {
        ns_landmarks_free(&s.lms);
        st = NS_UNSOLVABLE;
        goto done;
    }
    ns_lmcount_init(&s.lmc, &s.lms);
    s.lmw = s.lms.nwords;
    if (o->evaluator) {
        s.ev = o->evaluator;
    } else {
        ns_evaluator_classical_ties(&s.own, t, NS_H_FF, o->last_supporter);
        s.ev = &s.own;
    }
    s.unit = s.ev->unit > 1 ? s.ev->unit : 1;
    s.extra = o->extra;
    s.xunit = s.extra && s.extra->unit > 1 ? s.extra->unit : 1;
    s.nq = s.extra ? 6 : 4;
    ns_registry_init(&s.reg, t->nwords);
    bool *keep = NULL;
    if (o->prune_irrelevant) {
        keep = ns_xmalloc(sizeof(bool) * ((size_t)t->nops + 1));
        ns_task_relevant_ops(t, keep);
    }
    ns_succgen_init_subset(&s.sg, t, keep);
    free(keep);
    ns_succorder_init(&s.order, t);
    size_t no = (size_t)t->nops + 1;
    s.ops = ns_xmalloc(no * sizeof(int));
    s.pff = ns_xmalloc(no * sizeof(int));
    s.pmark = ns_xcalloc(no, sizeof(uint32_t));
    s.state = ns_xmalloc(((size_t)t->nwords + 1) * sizeof(ns_word));
    s.accbuf = ns_xmalloc(((size_t)s.lmw + 1) * sizeof(ns_word));
    /* the set-up (successor generator and order, h^FF: seconds on millions of
       operators) may have used the time limit: then no search */
    st = o->time_limit > 0 && ns_cpu_now() - s.cpu_start > o->time_limit ? NS_OUT_OF_TIME : run(&s);
    r->work = s.ev->work ? s.ev->work(s.ev->ctx) : 0;
    /* each evaluated state made and its landmarks progressed and counted (a
       pass over them and their greedy-necessary orderings); its successors as
       entries in 4 or 6 open lists, whose buckets count half a step each */
    long per_state = NS_SEARCH_STATE_WORK + t->nwords + 3L * s.lms.n + (s.lms.gn_start ? s.lms.gn_start[s.lms.n] : 0);
    long buckets = 0;
    for (int i = 0; i < s.nq; i++) buckets += s.q[i].work;
    r->total_work = r->work + (s.extra && s.extra->work ? s.extra->work(s.extra->ctx) : 0) + ns_search_setup_work(t) +
                    s.lms.work + r->evaluated * per_state + r->generated * NS_SEARCH_ENTRY_WORK * s.nq / 4 + buckets / 2;
    free(s.ops), free(s.pff), free(s.pmark), free(s.state), free(s.accbuf);
    free(s.nodes), free(s.acc), free(s.E);
    for (int i = 0; i < 6; i++) hq_free(&s.q[i]);
    ns_succgen_free(&s.sg);
    ns_succorder_free(&s.order);
    ns_registry_free(&s.reg);
    ns_evaluator_free(&s.own);
    ns_lmcount_free(&s.lmc);
    ns_landmarks_free(&s.lms);
done:
    r->status = st;
    r->seconds = ns_now() - start;
    return st;
}
