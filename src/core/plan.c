/* plan.c — IPC plan files, plan validation and plan shortening. */
#include "nextstate/core/plan.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/core/search.h"
#include "nextstate/core/state.h"
#include "nextstate/core/succgen.h"
#include "nextstate/util/sexp.h"

ns_status ns_plan_parse(ns_plan *p, const ns_task *t, const char *text, const char *path, ns_error *err)
{
    memset(p, 0, sizeof *p);
    ns_sexp s;
    ns_status st = ns_sexp_parse(&s, text, path, err);
    if (st != NS_OK) return st;
    const ns_domain *d = t->domain;
    const ns_problem *pr = t->problem;
    size_t cap = 0;
    for (int i = 0; i < s.ntop && st == NS_OK; i++) {
        const ns_sexp_node *n = ns_sexp_node_at(&s, s.top[i]);
        if (!n->is_list) {
            /* tolerate step prefixes such as "0:" and durations "[1]" */
            size_t len = strlen(n->atom);
            if (len > 0 && (n->atom[len - 1] == ':' || n->atom[0] == '[')) continue;
            st = ns_error_set(err, NS_ERR_INPUT, path, n->line, n->col, "expected (action arg …), found '%s'", n->atom);
            break;
        }
        if (n->nkids == 0 || ns_sexp_kid(&s, n, 0)->is_list) {
            st = ns_error_set(err, NS_ERR_INPUT, path, n->line, n->col, "expected (action arg …)");
            break;
        }
        const ns_sexp_node *name = ns_sexp_kid(&s, n, 0);
        int a = ns_domain_find_action(d, name->atom);
        if (a < 0) {
            st = ns_error_set(err, NS_ERR_INPUT, path, name->line, name->col, "unknown action '%s'", name->atom);
            break;
        }
        if (n->nkids - 1 != d->actions[a].nparams) {
            st = ns_error_set(err, NS_ERR_INPUT, path, n->line, n->col, "action '%s' takes %d argument%s, given %d",
                              name->atom, d->actions[a].nparams, d->actions[a].nparams == 1 ? "" : "s", n->nkids - 1);
            break;
        }
        NS_GROW(p->steps, cap, (size_t)p->n + 1);
        ns_plan_step *step = &p->steps[p->n];
        step->schema = a;
        step->nargs = n->nkids - 1;
        step->line = n->line;
        for (int k = 1; k < n->nkids && st == NS_OK; k++) {
            const ns_sexp_node *x = ns_sexp_kid(&s, n, k);
            int o = x->is_list ? -1 : ns_problem_find_object(pr, x->atom);
            if (o < 0)
                st = ns_error_set(err, NS_ERR_INPUT, path, x->line, x->col, "unknown object '%s'",
                                  x->is_list ? "(…)" : x->atom);
            step->args[k - 1] = o;
        }
        if (st == NS_OK) p->n++;
    }
    ns_sexp_free(&s);
    if (st != NS_OK) ns_plan_free(p);
    return st;
}

ns_status ns_plan_read(ns_plan *p, const ns_task *t, const char *path, ns_error *err)
{
    char *text;
    memset(p, 0, sizeof *p);
    ns_status st = ns_read_text_file(path, &text, NULL, err);
    if (st != NS_OK) return st;
    st = ns_plan_parse(p, t, text, path, err);
    free(text);
    return st;
}

void ns_plan_free(ns_plan *p)
{
    free(p->steps);
    memset(p, 0, sizeof *p);
}

long ns_plan_ops_cost(const ns_task *t, const int *ops, int n)
{
    long cost = 0;
    for (int i = 0; i < n; i++) cost += t->ops[ops[i]].cost;
    return cost;
}

void ns_plan_write_ops(const ns_task *t, const int *ops, int n, ns_buf *out)
{
    for (int i = 0; i < n; i++) {
        ns_task_op_str(t, ops[i], out);
        ns_buf_putc(out, '\n');
    }
    ns_buf_printf(out, "; cost = %ld (%s)\n", ns_plan_ops_cost(t, ops, n), t->unit_cost ? "unit cost" : "general cost");
}

/* "(pred a b)" of a lifted literal under the step's arguments. */
static void lit_str(const ns_task *t, const ns_lit *l, const int *args, ns_buf *b)
{
    const ns_domain *d = t->domain;
    ns_buf_puts(b, l->neg ? "(not (" : "(");
    ns_buf_puts(b, l->pred == NS_PRED_EQUAL ? "=" : d->preds[l->pred].name);
    for (int i = 0; i < l->nargs; i++) {
        int o = l->args[i] >= 0 ? l->args[i] : args[NS_TERM_PARAM(l->args[i])];
        ns_buf_putc(b, ' ');
        ns_buf_puts(b, t->problem->objects[o]);
    }
    ns_buf_puts(b, l->neg ? "))" : ")");
}

/* Truth of a ground literal in state s (fluent atoms absent from the task
 * are false in every reachable state). */
static bool lit_holds(const ns_task *t, const ns_lit *l, const int *args, const ns_word *s)
{
    int ga[NS_MAX_ARITY];
    for (int i = 0; i < l->nargs; i++) ga[i] = l->args[i] >= 0 ? l->args[i] : args[NS_TERM_PARAM(l->args[i])];
    bool v;
    if (l->pred == NS_PRED_EQUAL) {
        v = ga[0] == ga[1];
    } else if (ns_task_is_static_true(t, l->pred, ga, l->nargs)) {
        v = true;
    } else {
        int a = ns_task_find_atom(t, l->pred, ga, l->nargs);
        v = a >= 0 && ns_bit_get(s, a);
    }
    return v != l->neg;
}

/* Does the step's parameter typing hold?  Names the first bad argument. */
static bool types_ok(const ns_task *t, const ns_plan_step *st, char *why, size_t n)
{
    const ns_action *a = &t->domain->actions[st->schema];
    for (int i = 0; i < a->nparams; i++) {
        bool ok = false;
        for (int k = 0; k < a->nparam_types[i]; k++)
            ok |= ns_type_is_subtype(t->domain, t->problem->object_types[st->args[i]], a->param_types[i][k]);
        if (!ok) {
            snprintf(why, n, "argument %d ('%s') is not of type '%s'", i + 1, t->problem->objects[st->args[i]],
                     t->domain->types[a->param_types[i][0]].name);
            return false;
        }
    }
    return true;
}

/* Would the step leave state s unchanged?  (Grounding drops such operators.) */
static bool step_is_noop(const ns_task *t, const ns_plan_step *st, const ns_word *s)
{
    const ns_action *a = &t->domain->actions[st->schema];
    for (int i = 0; i < a->neff; i++) {
        ns_lit l = a->eff[i];
        if (l.neg) { /* a delete matters unless the same atom is also added */
            bool readded = false;
            for (int j = 0; j < a->neff; j++) {
                const ns_lit *m = &a->eff[j];
                if (m->neg || m->pred != l.pred) continue;
                bool same = true;
                for (int k = 0; k < l.nargs; k++) {
                    int x = l.args[k] >= 0 ? l.args[k] : st->args[NS_TERM_PARAM(l.args[k])];
                    int y = m->args[k] >= 0 ? m->args[k] : st->args[NS_TERM_PARAM(m->args[k])];
                    same &= x == y;
                }
                readded |= same;
            }
            if (!readded && !lit_holds(t, &l, st->args, s)) return false; /* deletes a true atom */
        } else if (!lit_holds(t, &l, st->args, s)) {
            return false;
        }
    }
    return true;
}

ns_status ns_plan_validate(const ns_task *t, const ns_plan *p, ns_validation *v)
{
    memset(v, 0, sizeof *v);
    v->failed_step = -1;
    v->plan_len = p->n;
    ns_word *s = ns_xmalloc(sizeof(ns_word) * (size_t)t->nwords);
    memcpy(s, t->init, sizeof(ns_word) * (size_t)t->nwords);
    ns_buf b;
    ns_buf_init(&b);
    ns_status result = NS_OK;
    for (int i = 0; i < p->n && result == NS_OK; i++) {
        const ns_plan_step *st = &p->steps[i];
        const ns_action *a = &t->domain->actions[st->schema];
        if (!types_ok(t, st, v->reason, sizeof v->reason)) {
            v->failed_step = i;
            result = NS_INVALID_PLAN;
            break;
        }
        /* applicable iff some precondition clause holds; report the first
         * unmet literal of the first clause */
        int unmet_clause = -1, unmet_lit = -1;
        bool ok = false;
        for (int c = 0; c < a->npre && !ok; c++) {
            const ns_clause *cl = &a->pre[c];
            int bad = -1;
            for (int j = 0; j < cl->n && bad < 0; j++)
                if (!lit_holds(t, &cl->lits[j], st->args, s)) bad = j;
            if (bad < 0) ok = true;
            else if (unmet_clause < 0) {
                unmet_clause = c;
                unmet_lit = bad;
            }
        }
        if (!ok) {
            v->failed_step = i;
            b.len = 0;
            if (unmet_clause >= 0) lit_str(t, &a->pre[unmet_clause].lits[unmet_lit], st->args, &b);
            else ns_buf_puts(&b, "(or) is false");
            snprintf(v->reason, sizeof v->reason, "unmet precondition %s", b.data);
            result = NS_INVALID_PLAN;
            break;
        }
        int op = ns_task_find_op(t, st->schema, st->args, st->nargs);
        if (op < 0 && step_is_noop(t, st, s)) continue; /* dropped at grounding: changes nothing */
        if (op < 0) { /* applicable yet not grounded: grounding is wrong */
            snprintf(v->reason, sizeof v->reason, "step applicable but missing from the grounded task");
            v->failed_step = i;
            result = NS_ERR_INTERNAL;
            break;
        }
        ns_task_apply(t, op, s, s);
        v->cost += t->ops[op].cost;
    }
    if (result == NS_OK) {
        for (int i = 0; i < t->problem->ngoal; i++) {
            const ns_lit *l = &t->problem->goal[i];
            if (!lit_holds(t, l, NULL, s)) {
                b.len = 0;
                lit_str(t, l, NULL, &b);
                snprintf(v->reason, sizeof v->reason, "goal %s does not hold at the end of the plan", b.data);
                result = NS_INVALID_PLAN;
                break;
            }
        }
    }
    v->valid = result == NS_OK;
    free(s);
    ns_buf_free(&b);
    return result;
}

bool ns_plan_ops_valid(const ns_task *t, const int *ops, int n)
{
    ns_word *s = ns_xmalloc(sizeof(ns_word) * (size_t)t->nwords);
    memcpy(s, t->init, sizeof(ns_word) * (size_t)t->nwords);
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        if (ops[i] < 0 || ops[i] >= t->nops || !ns_task_applicable(t, ops[i], s)) ok = false;
        else ns_task_apply(t, ops[i], s, s);
    }
    ok = ok && ns_task_is_goal(t, s);
    free(s);
    return ok;
}

/* Whether the deadline (an ns_cpu_now() value; <= 0: none) has passed. */
static bool past(double deadline) { return deadline > 0 && ns_cpu_now() > deadline; }

/* The same, reading the clock (a system call) only once *work, the
 * successors generated since the last read, reaches 4096: a state with tens
 * of thousands of successors is checked after each expansion, a small one
 * every few thousand. */
static bool past_after(double deadline, long *work)
{
    if (*work < 4096) return false;
    *work = 0;
    return past(deadline);
}

int ns_plan_eliminate(const ns_task *t, int *ops, int n, double deadline)
{
    if (n <= 0) return n;
    const size_t W = (size_t)t->nwords;
    ns_word *pre = ns_xmalloc(2 * W * sizeof *pre), *cur = pre + W; /* the state before step i; a trial */
    bool *gone = ns_xcalloc((size_t)n, sizeof *gone);
    memcpy(pre, t->init, W * sizeof *pre);
    int i = 0;
    while (i < n && !past(deadline)) { /* a clock read per O(n) trial */
        memcpy(cur, pre, W * sizeof *cur);
        gone[i] = true;
        for (int j = i + 1; j < n; j++) {
            if (ns_task_applicable(t, ops[j], cur)) ns_task_apply(t, ops[j], cur, cur);
            else gone[j] = true;
        }
        if (ns_task_is_goal(t, cur)) { /* keep the rest; step i now holds the next kept step */
            int m = 0;
            for (int j = 0; j < n; j++)
                if (!gone[j]) ops[m++] = ops[j];
            n = m;
        } else {
            ns_task_apply(t, ops[i], pre, pre);
            i++;
        }
        memset(gone, 0, (size_t)n * sizeof *gone);
    }
    free(gone);
    free(pre);
    return n;
}

/* ------------------------------------------- plan neighbourhood graph search */

/* How a neighbourhood's growth ended. */
typedef enum reach {
    REACH_DEPTH,  /* every layer up to the depth */
    REACH_CLOSED, /* a layer added no state: every reachable state is in */
    REACH_CUT     /* max_bytes, max_states, max_work or the deadline stopped it */
} reach;

/* The work of expanding a state with na successors, in units of about one
 * successor's CPU time: a state's own share (its successor generator run,
 * its registry and queue entries) measured at ~40 successors' (blocksworld:
 * ~3 us a state, ~0.08 us a successor; childsnack's states have thousands). */
#define STATE_WORK(na) ((long)(na) + 40)

/* Registers the plan's states and, layer by layer, every state within
 * `depth` steps of them, until max_bytes, max_states, max_work (the
 * expansions' STATE_WORK; 0: none) or the deadline; *spent: the work. */
static reach neighbourhood(const ns_task *t, const int *ops, int n, int depth, size_t max_bytes, uint32_t max_states,
                           long max_work, double deadline, ns_registry *r, long *spent)
{
    const size_t W = (size_t)t->nwords;
    ns_succgen g;
    ns_succgen_init(&g, t);
    ns_word *s = ns_xmalloc(2 * W * sizeof *s), *nx = s + W;
    int *app = ns_xmalloc((size_t)(t->nops > 0 ? t->nops : 1) * sizeof *app);
    bool fresh;
    memcpy(s, t->init, W * sizeof *s);
    ns_registry_insert(r, s, &fresh);
    for (int i = 0; i < n; i++) {
        ns_task_apply(t, ops[i], s, s);
        ns_registry_insert(r, s, &fresh);
    }
    uint32_t lo = 0, hi = r->n;
    bool stop = false;
    long work = 0;
    *spent = 0;
    for (int d = 0; d < depth && !stop && lo < hi; d++, lo = hi, hi = r->n)
        for (uint32_t id = lo; id < hi && !stop; id++) {
            memcpy(s, ns_registry_get(r, id), W * sizeof *s); /* the registry may move as it grows */
            int na = ns_succgen_applicable(&g, s, app);
            for (int k = 0; k < na; k++) {
                ns_task_apply(t, app[k], s, nx);
                ns_registry_insert(r, nx, &fresh);
            }
            work += na + 1;
            *spent += STATE_WORK(na);
            stop = ns_registry_bytes(r) > max_bytes || r->n > max_states || (max_work > 0 && *spent >= max_work) ||
                   past_after(deadline, &work);
        }
    free(app);
    free(s);
    ns_succgen_free(&g);
    return stop ? REACH_CUT : lo == hi ? REACH_CLOSED : REACH_DEPTH;
}
/* ---- the cheapest path through a neighbourhood: Dijkstra over its registry */

typedef struct qent {
    long g;
    uint32_t id;
} qent;

typedef struct minheap {
    qent *v;
    size_t n, cap;
} minheap;

static void heap_push(minheap *h, long g, uint32_t id)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 1024;
        h->v = ns_xrealloc(h->v, h->cap * sizeof *h->v);
    }
    size_t i = h->n++;
    for (; i > 0 && h->v[(i - 1) / 2].g > g; i = (i - 1) / 2) h->v[i] = h->v[(i - 1) / 2];
    h->v[i] = (qent){.g = g, .id = id};
}

static qent heap_pop(minheap *h)
{
    qent top = h->v[0], last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && h->v[c + 1].g < h->v[c].g) c++;
        if (h->v[c].g >= last.g) break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n) h->v[i] = last;
    return top;
}

/* The cheapest plan from the initial state (registered first) to a goal
 * state through r's states only (uniform-cost search; successors outside r
 * are left out), written to *plan (allocated) with its length returned;
 * -1 when there is none or max_work (as neighbourhood's; 0: none) or the
 * deadline comes first.  *spent: the work. */
static int cheapest_inside(const ns_task *t, const ns_registry *r, long max_work, double deadline, int **plan,
                           long *spent)
{
    uint32_t N = r->n;
    long *g = ns_xmalloc((size_t)N * sizeof *g);
    uint32_t *parent = ns_xmalloc((size_t)N * sizeof *parent);
    int *via = ns_xmalloc((size_t)N * sizeof *via);
    int *app = ns_xmalloc((size_t)(t->nops > 0 ? t->nops : 1) * sizeof *app);
    ns_word *nx = ns_xmalloc((size_t)t->nwords * sizeof *nx);
    for (uint32_t i = 0; i < N; i++) g[i] = LONG_MAX;
    ns_succgen sg;
    ns_succgen_init(&sg, t);
    minheap q = {0};
    g[0] = 0;
    heap_push(&q, 0, 0);
    uint32_t goal = NS_NO_STATE;
    long work = 0;
    *spent = 0;
    while (q.n && goal == NS_NO_STATE) {
        qent e = heap_pop(&q);
        if (e.g > g[e.id]) continue; /* a stale entry */
        if ((max_work > 0 && *spent >= max_work) || past_after(deadline, &work)) break;
        const ns_word *s = ns_registry_get(r, e.id); /* nothing is inserted: it stays put */
        if (ns_task_is_goal(t, s)) {
            goal = e.id;
            break;
        }
        int na = ns_succgen_applicable(&sg, s, app);
        work += na + 1;
        *spent += STATE_WORK(na);
        for (int k = 0; k < na; k++) {
            ns_task_apply(t, app[k], s, nx);
            uint32_t j = ns_registry_find(r, nx);
            long ng = e.g + t->ops[app[k]].cost;
            if (j == NS_NO_STATE || ng >= g[j]) continue;
            g[j] = ng;
            parent[j] = e.id;
            via[j] = app[k];
            heap_push(&q, ng, j);
        }
    }
    int len = -1;
    if (goal != NS_NO_STATE) {
        len = 0;
        for (uint32_t v = goal; v != 0; v = parent[v]) len++;
        *plan = ns_xmalloc((size_t)(len + 1) * sizeof **plan);
        int i = len;
        for (uint32_t v = goal; v != 0; v = parent[v]) (*plan)[--i] = via[v];
    }
    ns_succgen_free(&sg);
    free(q.v);
    free(nx);
    free(app);
    free(via);
    free(parent);
    free(g);
    return len;
}

/* How far a neighbourhood grew. */
typedef struct grown {
    reach how;       /* REACH_CUT too for a plan left as it is because it is invalid */
    uint32_t states; /* in the neighbourhood */
    long work;       /* of the growth and the search (STATE_WORK) */
} grown;

/* ns_plan_neighbourhood within max_states too.  With max_work > 0 (the
 * budget meant to bind; the deadline a safety cap) the growth gets a fifth of
 * it and the search what the growth left; else a fifth of the time to the
 * deadline goes to the growth. */
static int search_neighbourhood(const ns_task *t, int *ops, int n, int depth, size_t max_bytes, uint32_t max_states,
                                long max_work, double deadline, grown *gr)
{
    *gr = (grown){.how = REACH_CUT};
    if (n <= 0 || depth <= 0 || !ns_plan_ops_valid(t, ops, n)) return n;
    ns_registry r;
    ns_registry_init(&r, t->nwords);
    /* the search costs several times the growth (it expands every state,
       the growth all but the last layer): the growth gets a fifth of the
       budget or of the time left; a neighbourhood cut short still holds the
       plan's states */
    double now = ns_cpu_now(), grow_until = deadline > 0 && max_work <= 0 ? now + 0.2 * (deadline - now) : deadline;
    long grew = 0, searched = 0;
    gr->how = neighbourhood(t, ops, n, depth, max_bytes, max_states, max_work > 0 ? max_work / 5 + 1 : 0, grow_until,
                            &r, &grew);
    gr->states = r.n;
    int *plan = NULL;
    int len = max_work > 0 && grew >= max_work
                  ? -1
                  : cheapest_inside(t, &r, max_work > 0 ? max_work - grew : 0, deadline, &plan, &searched);
    gr->work = grew + searched;
    /* (zero-cost operators could make a cheaper plan longer than ops holds) */
    if (len >= 0 && len <= n && ns_plan_ops_cost(t, plan, len) < ns_plan_ops_cost(t, ops, n)) {
        memcpy(ops, plan, sizeof *ops * (size_t)len);
        n = len;
    }
    free(plan);
    ns_registry_free(&r);
    return n;
}

int ns_plan_neighbourhood(const ns_task *t, int *ops, int n, int depth, size_t max_bytes, double deadline)
{
    grown gr;
    return search_neighbourhood(t, ops, n, depth, max_bytes, UINT32_MAX, 0, deadline, &gr);
}

int ns_plan_shorten(const ns_task *t, int *ops, int n, double deadline, double until, size_t max_bytes, long max_work)
{
    n = ns_plan_eliminate(t, ops, n, deadline);
    if (deadline > 0 && (until <= 0 || until > deadline)) until = deadline;
    if (max_work > 0) until = deadline; /* the budget binds; the deadline is a safety cap */
    double per_state = 0; /* CPU seconds per neighbourhood state (growth and search) at the last depth */
    long used = 0;        /* work of the neighbourhoods so far */
    for (int depth = 1; depth <= 64 && (until <= 0 || ns_cpu_now() < until) && (max_work <= 0 || used < max_work);
         depth *= 2) {
        long before = ns_plan_ops_cost(t, ops, n);
        double now = ns_cpu_now(), cap = UINT32_MAX;
        if (max_work <= 0 && until > 0 && per_state > 0) cap = 0.3 * (until - now) / per_state;
        grown gr; /* capped so that the search, too, ends in the budget or the time left */
        n = search_neighbourhood(t, ops, n, depth, max_bytes, cap < UINT32_MAX ? (uint32_t)cap : UINT32_MAX,
                                 max_work > 0 ? max_work - used : 0, until, &gr);
        per_state = (ns_cpu_now() - now) / (gr.states ? gr.states : 1);
        used += gr.work;
        /* closed: the search saw every reachable state, so the plan is optimal;
           cut with the plan unchanged: a deeper neighbourhood grows the same
           layers in the same order, so only a larger limit could help, and
           less time is left */
        if (gr.how == REACH_CLOSED || (gr.how == REACH_CUT && ns_plan_ops_cost(t, ops, n) >= before)) break;
    }
    return n;
}
