/* task.c — grounding by relaxed reachability, and the transition function.
 *
 * Grounding is a semi-naive fixpoint over a queue of reached atoms (static
 * init atoms, fluent init atoms, then every add effect of a newly grounded
 * operator).  When atom a is dequeued, each (action, precondition clause)
 * whose positive literal matches a is joined with the atoms dequeued before
 * a, so every binding is found exactly when its last precondition atom is
 * processed.  Types, equality and negative static literals are checked on
 * the complete binding; negative fluent preconditions are kept as operator
 * preconditions (the relaxation ignores them). */
#include "nextstate/core/task.h"

#include <stdlib.h>
#include <string.h>

/* ---- grounding state -------------------------------------------------- */

typedef struct rule {
    int action, clause;
    const ns_lit *pos[64]; /* positive literals over non-equality predicates */
    int npos;
} rule;

typedef struct grounder {
    const ns_domain *d;
    const ns_problem *p;
    bool *pred_fluent;
    bool *obj_of_type; /* [type * nobjects + obj] */
    ns_tupleset atoms; /* [pred, args…] of every reached atom (static or fluent) */
    int *queue_pred;   /* pred of atom i, for convenience */
    size_t qcap;
    ns_tupleset index_keys; /* (pred, pos, obj) and (pred, -1, -1) -> list id */
    int **lists;            /* atom ids in increasing order */
    int *list_len, *list_cap;
    size_t nlists_cap;
    ns_tupleset ops; /* [action, clause, args…] */
    rule *rules;
    int nrules;
    int **rules_of_pred; /* rule indices by predicate of one of their positive literals */
    int *nrules_of_pred;
    ns_error *err;
    /* limits (ns_ground_limits): the CPU clock and the grounder's bytes are
     * read every `check_every` units of work (joins and emitted bindings);
     * stop != NS_OK ends the fixpoint and unwinds every join */
    const ns_ground_limits *lim;
    double cpu_start;
    long work, next_check;
    ns_status stop;
} grounder;

#define GROUND_CHECK_EVERY 4096 /* units of work between clock reads: a few microseconds each */

static size_t tupleset_bytes(const ns_tupleset *s)
{
    return s->pool_cap * sizeof(int) + s->off_cap * sizeof(size_t) + (s->table ? (s->mask + 1) * sizeof(int) : 0);
}

/* The grounder's data in bytes (reached atoms, their index lists, operators). */
static size_t grounder_bytes(const grounder *g)
{
    size_t b = tupleset_bytes(&g->atoms) + tupleset_bytes(&g->index_keys) + tupleset_bytes(&g->ops);
    b += g->qcap * sizeof(int) + g->nlists_cap * (sizeof(int *) + 2 * sizeof(int));
    for (int i = 0; i < g->index_keys.n; i++) b += (size_t)g->list_cap[i] * sizeof(int);
    return b;
}

/* Counts one unit of work; every GROUND_CHECK_EVERY units checks the limits.
 * Returns true when grounding must stop (g->stop set, g->err filled). */
static bool over_limit(grounder *g)
{
    if (g->stop) return true;
    if (!g->lim || ++g->work < g->next_check) return false;
    g->next_check = g->work + GROUND_CHECK_EVERY;
    double cpu = ns_cpu_now() - g->cpu_start;
    if (g->lim->time_limit > 0 && cpu > g->lim->time_limit) {
        g->stop = ns_error_set(g->err, NS_OUT_OF_TIME, g->p->path, 0, 0,
                               "grounding reached the time limit (%g s CPU) with %d atoms and %d operators reached",
                               g->lim->time_limit, g->atoms.n, g->ops.n);
        return true;
    }
    size_t bytes = g->lim->memory_limit ? grounder_bytes(g) : 0;
    if (g->lim->memory_limit && bytes > g->lim->memory_limit) {
        g->stop = ns_error_set(g->err, NS_OUT_OF_MEMORY, g->p->path, 0, 0,
                               "grounding reached the memory limit (%.0f MiB) with %d atoms and %d operators reached",
                               (double)g->lim->memory_limit / 1048576.0, g->atoms.n, g->ops.n);
        return true;
    }
    return false;
}

static bool atom_is_static_true(const grounder *g, const int *key, int len)
{
    int id = ns_tupleset_find(&g->atoms, key, len);
    return id >= 0 && !g->pred_fluent[key[0]];
}

static void list_push(grounder *g, const int *key, int atom)
{
    bool is_new;
    int l = ns_tupleset_insert(&g->index_keys, key, 3, &is_new);
    if (is_new) {
        if ((size_t)l >= g->nlists_cap) {
            size_t cap = g->nlists_cap ? g->nlists_cap * 2 : 64;
            g->lists = ns_xrealloc(g->lists, sizeof(int *) * cap);
            g->list_len = ns_xrealloc(g->list_len, sizeof(int) * cap);
            g->list_cap = ns_xrealloc(g->list_cap, sizeof(int) * cap);
            g->nlists_cap = cap;
        }
        g->lists[l] = NULL;
        g->list_len[l] = g->list_cap[l] = 0;
    }
    if (g->list_len[l] == g->list_cap[l]) {
        g->list_cap[l] = g->list_cap[l] ? g->list_cap[l] * 2 : 4;
        g->lists[l] = ns_xrealloc(g->lists[l], sizeof(int) * (size_t)g->list_cap[l]);
    }
    g->lists[l][g->list_len[l]++] = atom;
}

/* Adds atom key = [pred, args…] to the reached set (and its indexes). */
static void reach(grounder *g, const int *key, int len)
{
    bool is_new;
    int id = ns_tupleset_insert(&g->atoms, key, len, &is_new);
    if (!is_new) return;
    NS_GROW(g->queue_pred, g->qcap, (size_t)id + 1);
    g->queue_pred[id] = key[0];
    int k[3] = {key[0], -1, -1};
    list_push(g, k, id);
    for (int i = 1; i < len; i++) {
        k[1] = i - 1;
        k[2] = key[i];
        list_push(g, k, id);
    }
}

/* A binding under construction. */
typedef struct binding {
    int val[NS_MAX_ARITY]; /* object id or -1 */
} binding;

static bool type_ok(const grounder *g, const ns_action *a, int param, int obj)
{
    for (int i = 0; i < a->nparam_types[param]; i++)
        if (g->obj_of_type[(size_t)a->param_types[param][i] * (size_t)g->p->nobjects + (size_t)obj]) return true;
    return false;
}

static int term_value(const binding *b, int t) { return t >= 0 ? t : b->val[NS_TERM_PARAM(t)]; }

/* Unifies literal l with reached atom id; extends b; records newly bound
 * parameters in bound[] so they can be undone.  Returns false on clash. */
static bool unify(const grounder *g, const ns_action *a, const ns_lit *l, int atom, binding *b, int *bound, int *nbound)
{
    int len;
    const int *key = ns_tupleset_get(&g->atoms, atom, &len);
    for (int i = 0; i < l->nargs; i++) {
        int t = l->args[i], o = key[1 + i];
        if (t >= 0) {
            if (t != o) return false;
            continue;
        }
        int v = NS_TERM_PARAM(t);
        if (b->val[v] >= 0) {
            if (b->val[v] != o) return false;
            continue;
        }
        if (!type_ok(g, a, v, o)) return false;
        b->val[v] = o;
        bound[(*nbound)++] = v;
    }
    return true;
}

static void emit_op(grounder *g, const rule *r, binding *b);

/* Binds the parameters not fixed by positive literals, over their types. */
static void enumerate_free(grounder *g, const rule *r, binding *b, int param)
{
    const ns_action *a = &g->d->actions[r->action];
    while (param < a->nparams && b->val[param] >= 0) param++;
    if (param == a->nparams) {
        emit_op(g, r, b);
        return;
    }
    for (int o = 0; o < g->p->nobjects && !g->stop; o++) {
        if (!type_ok(g, a, param, o)) continue;
        b->val[param] = o;
        enumerate_free(g, r, b, param + 1);
    }
    b->val[param] = -1;
}

/* Joins the positive literals not yet matched (done[i] false) against atoms
 * with id <= limit. */
static void join(grounder *g, const rule *r, binding *b, bool *done, int left, int limit)
{
    if (over_limit(g)) return;
    if (left == 0) {
        enumerate_free(g, r, b, 0);
        return;
    }
    const ns_action *a = &g->d->actions[r->action];
    /* choose the literal with the shortest candidate list */
    int best = -1, best_list = -1, best_len = 0;
    for (int i = 0; i < r->npos; i++) {
        if (done[i]) continue;
        const ns_lit *l = r->pos[i];
        int key[3] = {l->pred, -1, -1};
        int list = ns_tupleset_find(&g->index_keys, key, 3);
        int len = list >= 0 ? g->list_len[list] : 0;
        for (int j = 0; j < l->nargs && list >= 0; j++) {
            int v = term_value(b, l->args[j]);
            if (v < 0) continue;
            int k2[3] = {l->pred, j, v};
            int lj = ns_tupleset_find(&g->index_keys, k2, 3);
            int lenj = lj >= 0 ? g->list_len[lj] : 0;
            if (lenj < len) {
                list = lj;
                len = lenj;
            }
        }
        if (best < 0 || len < best_len || list < 0) {
            best = i;
            best_list = list;
            best_len = len;
        }
        if (list < 0) break;
    }
    if (best_list < 0) return; /* no atom can match */
    done[best] = true;
    /* the list may be reallocated by atoms reached below: index it afresh */
    for (int k = 0; k < best_len && g->lists[best_list][k] <= limit && !g->stop; k++) {
        int bound[NS_MAX_ARITY], nbound = 0;
        if (unify(g, a, r->pos[best], g->lists[best_list][k], b, bound, &nbound))
            join(g, r, b, done, left - 1, limit);
        for (int i = 0; i < nbound; i++) b->val[bound[i]] = -1;
    }
    done[best] = false;
}

/* Checks the non-positive literals of the clause on a complete binding. */
static bool check_rest(const grounder *g, const rule *r, const binding *b)
{
    const ns_clause *cl = &g->d->actions[r->action].pre[r->clause];
    for (int i = 0; i < cl->n; i++) {
        const ns_lit *l = &cl->lits[i];
        if (l->pred == NS_PRED_EQUAL) {
            bool eq = term_value(b, l->args[0]) == term_value(b, l->args[1]);
            if (eq == l->neg) return false;
            continue;
        }
        if (!l->neg || g->pred_fluent[l->pred]) continue;
        int key[NS_MAX_ARITY + 1] = {l->pred};
        for (int j = 0; j < l->nargs; j++) key[1 + j] = term_value(b, l->args[j]);
        if (atom_is_static_true(g, key, l->nargs + 1)) return false;
    }
    return true;
}

static void emit_op(grounder *g, const rule *r, binding *b)
{
    if (over_limit(g) || !check_rest(g, r, b)) return;
    const ns_action *a = &g->d->actions[r->action];
    int key[NS_MAX_ARITY + 2] = {r->action, r->clause};
    for (int i = 0; i < a->nparams; i++) key[2 + i] = b->val[i];
    bool is_new;
    ns_tupleset_insert(&g->ops, key, a->nparams + 2, &is_new);
    if (!is_new) return;
    for (int i = 0; i < a->neff; i++) {
        const ns_lit *l = &a->eff[i];
        if (l->neg) continue;
        int ak[NS_MAX_ARITY + 1] = {l->pred};
        for (int j = 0; j < l->nargs; j++) ak[1 + j] = term_value(b, l->args[j]);
        reach(g, ak, l->nargs + 1);
    }
}

static ns_status build_rules(grounder *g)
{
    const ns_domain *d = g->d;
    g->rules_of_pred = ns_xcalloc((size_t)d->npreds + 1, sizeof(int *));
    g->nrules_of_pred = ns_xcalloc((size_t)d->npreds + 1, sizeof(int));
    size_t cap = 0;
    for (int ai = 0; ai < d->nactions; ai++) {
        const ns_action *a = &d->actions[ai];
        for (int ci = 0; ci < a->npre; ci++) {
            NS_GROW(g->rules, cap, (size_t)g->nrules + 1);
            rule *r = &g->rules[g->nrules];
            memset(r, 0, sizeof *r);
            r->action = ai;
            r->clause = ci;
            const ns_clause *cl = &a->pre[ci];
            for (int i = 0; i < cl->n; i++) {
                const ns_lit *l = &cl->lits[i];
                if (l->neg || l->pred == NS_PRED_EQUAL) continue;
                if (r->npos == 64)
                    return ns_error_set(g->err, NS_ERR_UNSUPPORTED, d->path, 0, 0,
                                        "action '%s' has more than 64 positive preconditions", a->name);
                r->pos[r->npos++] = l;
            }
            g->nrules++;
        }
    }
    for (int ri = 0; ri < g->nrules; ri++) {
        const rule *r = &g->rules[ri];
        for (int i = 0; i < r->npos; i++) {
            int p = r->pos[i]->pred;
            bool seen = false;
            for (int j = 0; j < i; j++) seen |= r->pos[j]->pred == p;
            if (seen) continue;
            g->rules_of_pred[p] = ns_xrealloc(g->rules_of_pred[p], sizeof(int) * (size_t)(g->nrules_of_pred[p] + 1));
            g->rules_of_pred[p][g->nrules_of_pred[p]++] = ri;
        }
    }
    return NS_OK;
}

static void run_fixpoint(grounder *g)
{
    binding b;
    bool done[64];
    /* rules without positive literals fire once */
    for (int ri = 0; ri < g->nrules; ri++) {
        if (g->rules[ri].npos > 0) continue;
        for (int i = 0; i < NS_MAX_ARITY; i++) b.val[i] = -1;
        enumerate_free(g, &g->rules[ri], &b, 0);
    }
    for (int atom = 0; atom < g->atoms.n && !g->stop; atom++) {
        int pred = g->queue_pred[atom];
        for (int k = 0; k < g->nrules_of_pred[pred]; k++) {
            const rule *r = &g->rules[g->rules_of_pred[pred][k]];
            const ns_action *a = &g->d->actions[r->action];
            for (int i = 0; i < r->npos; i++) {
                if (r->pos[i]->pred != pred) continue;
                for (int j = 0; j < NS_MAX_ARITY; j++) b.val[j] = -1;
                int bound[NS_MAX_ARITY], nbound = 0;
                if (!unify(g, a, r->pos[i], atom, &b, bound, &nbound)) continue;
                memset(done, 0, sizeof done);
                done[i] = true;
                join(g, r, &b, done, r->npos - 1, atom);
            }
        }
    }
}

static void grounder_free(grounder *g)
{
    free(g->pred_fluent);
    free(g->obj_of_type);
    ns_tupleset_free(&g->atoms);
    free(g->queue_pred);
    for (int i = 0; i < g->index_keys.n; i++) free(g->lists[i]);
    ns_tupleset_free(&g->index_keys);
    free(g->lists);
    free(g->list_len);
    free(g->list_cap);
    ns_tupleset_free(&g->ops);
    free(g->rules);
    for (int i = 0; g->rules_of_pred && i <= g->d->npreds; i++) free(g->rules_of_pred[i]);
    free(g->rules_of_pred);
    free(g->nrules_of_pred);
}

/* ---- building the task ------------------------------------------------ */

static int cmp_atom_keys(const int *a, int la, const int *b, int lb)
{
    int n = la < lb ? la : lb;
    for (int i = 0; i < n; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return la - lb;
}

typedef struct keyref {
    const int *key;
    int len;
    int id;
} keyref;

static int cmp_keyref(const void *x, const void *y)
{
    const keyref *a = x, *b = y;
    return cmp_atom_keys(a->key, a->len, b->key, b->len);
}

/* Sorted atom table from the reached atoms whose predicates have the given
 * fluency; fills map[reached id] = new id. */
static int collect_atoms(ns_task *t, const grounder *g, bool fluent, ns_atom **out, int *map, ns_buf *args)
{
    keyref *refs = ns_xmalloc(sizeof(keyref) * ((size_t)g->atoms.n + 1));
    int n = 0;
    for (int i = 0; i < g->atoms.n; i++) {
        int len;
        const int *k = ns_tupleset_get(&g->atoms, i, &len);
        if (g->pred_fluent[k[0]] != fluent) continue;
        refs[n].key = k;
        refs[n].len = len;
        refs[n].id = i;
        n++;
    }
    qsort(refs, (size_t)n, sizeof *refs, cmp_keyref);
    *out = ns_xmalloc(sizeof(ns_atom) * ((size_t)n + 1));
    for (int i = 0; i < n; i++) {
        (*out)[i].pred = refs[i].key[0];
        (*out)[i].nargs = refs[i].len - 1;
        (*out)[i].args_off = (int)(args->len / sizeof(int));
        ns_buf_put(args, refs[i].key + 1, sizeof(int) * (size_t)(refs[i].len - 1));
        map[refs[i].id] = i;
    }
    free(refs);
    (void)t;
    return n;
}

static void sort_unique(int *a, int *n)
{
    /* insertion sort: lists are short */
    for (int i = 1; i < *n; i++) {
        int v = a[i], j = i - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
    int m = 0;
    for (int i = 0; i < *n; i++)
        if (m == 0 || a[m - 1] != a[i]) a[m++] = a[i];
    *n = m;
}

typedef struct intvec {
    int *v;
    size_t n, cap;
} intvec;

static void iv_push(intvec *v, int x)
{
    NS_GROW(v->v, v->cap, v->n + 1);
    v->v[v->n++] = x;
}

/* Reached-atom id of literal l under args (fluent atoms only), or -1. */
static int lit_atom(const grounder *g, const ns_lit *l, const int *args, const int *fmap)
{
    int key[NS_MAX_ARITY + 1] = {l->pred};
    for (int j = 0; j < l->nargs; j++) key[1 + j] = l->args[j] >= 0 ? l->args[j] : args[NS_TERM_PARAM(l->args[j])];
    int id = ns_tupleset_find(&g->atoms, key, l->nargs + 1);
    return id >= 0 ? fmap[id] : -1;
}

/* rank[i] = the place of names[i] among the n names in strcmp order, plus 1 (0 sorts first). */
static int *name_ranks(const char *(*name_of)(const ns_task *, int), const ns_task *t, int n)
{
    ns_named *v = ns_xmalloc(sizeof(ns_named) * ((size_t)n + 1));
    for (int i = 0; i < n; i++) v[i] = (ns_named){name_of(t, i), i};
    qsort(v, (size_t)n, sizeof *v, ns_cmp_named);
    int *rank = ns_xmalloc(sizeof(int) * ((size_t)n + 1));
    for (int i = 0; i < n; i++) rank[v[i].id] = i + 1;
    free(v);
    return rank;
}

static const char *schema_name(const ns_task *t, int i) { return t->domain->actions[i].name; }
static const char *object_name(const ns_task *t, int i) { return t->problem->objects[i]; }

/* t's operators in canonical order — by action name, then by argument names
 * position by position (strcmp each; for PDDL names the order of the printed
 * names); ties, one name with several disjuncts, keep grounding order — or
 * NULL when the limits stopped it.  Least significant key first, a stable
 * counting sort per argument position and one by action: linear in the
 * operators, where sorting their printed names took ~10 s and 800 MB on
 * 19 M operators. */
static ns_op *sort_ops(const ns_task *t, grounder *g)
{
    int n = t->nops, nobj = t->problem->nobjects, nact = t->domain->nactions, maxar = 0;
    for (int i = 0; i < nact; i++)
        if (t->domain->actions[i].nparams > maxar) maxar = t->domain->actions[i].nparams;
    int *obj_rank = name_ranks(object_name, t, nobj), *act_rank = name_ranks(schema_name, t, nact);
    int nkeys = (nobj > nact ? nobj : nact) + 1;
    int *order = ns_xmalloc(sizeof(int) * ((size_t)n + 1)), *next = ns_xmalloc(sizeof(int) * ((size_t)n + 1));
    int *key = ns_xmalloc(sizeof(int) * ((size_t)n + 1)), *count = ns_xmalloc(sizeof(int) * ((size_t)nkeys + 1));
    for (int i = 0; i < n; i++) order[i] = i;
    for (int pos = maxar - 1; pos >= -1 && !g->stop; pos--) { /* argument pos; -1: the action */
        memset(count, 0, sizeof(int) * ((size_t)nkeys + 1));
        for (int i = 0; i < n && !over_limit(g); i++) {
            const ns_op *o = &t->ops[order[i]];
            int ar = t->domain->actions[o->schema].nparams;
            key[i] = pos < 0 ? act_rank[o->schema] : pos < ar ? obj_rank[t->op_args[o->args_off + pos]] : 0;
            count[key[i] + 1]++;
        }
        if (g->stop) break;
        for (int k = 0; k < nkeys; k++) count[k + 1] += count[k];
        for (int i = 0; i < n; i++) next[count[key[i]]++] = order[i];
        int *swap = order;
        order = next;
        next = swap;
    }
    ns_op *sorted = NULL;
    if (!g->stop) {
        sorted = ns_xmalloc(sizeof(ns_op) * ((size_t)n + 1));
        for (int i = 0; i < n; i++) sorted[i] = t->ops[order[i]];
    }
    free(count);
    free(key);
    free(next);
    free(order);
    free(act_rank);
    free(obj_rank);
    return sorted;
}

/* The task's operators from the grounder's, in canonical order (sort_ops); false when the
 * limits stopped it (g->stop set; t's arrays are freed by ns_task_free). */
static bool build_ops(ns_task *t, grounder *g, const int *fmap)
{
    int nops = g->ops.n;
    ns_op *ops = ns_xmalloc(sizeof(ns_op) * ((size_t)nops + 1));
    intvec lists = {0}, opargs = {0};
    int maxlits = 1;
    for (int i = 0; i < g->d->nactions; i++)
        for (int j = 0; j < g->d->actions[i].npre; j++)
            if (g->d->actions[i].pre[j].n + g->d->actions[i].neff > maxlits)
                maxlits = g->d->actions[i].pre[j].n + g->d->actions[i].neff;
    int *tmp[4];
    for (int i = 0; i < 4; i++) tmp[i] = ns_xmalloc(sizeof(int) * (size_t)maxlits);
    int kept = 0;
    for (int i = 0; i < nops && !over_limit(g); i++) {
        int len;
        const int *key = ns_tupleset_get(&g->ops, i, &len);
        const ns_action *a = &g->d->actions[key[0]];
        const ns_clause *cl = &a->pre[key[1]];
        const int *args = key + 2;
        ns_op *o = &ops[kept];
        o->schema = key[0];
        o->cost = a->cost;
        int npre = 0, nneg = 0, nadd = 0, ndel = 0;
        for (int j = 0; j < cl->n; j++) {
            const ns_lit *l = &cl->lits[j];
            if (l->pred == NS_PRED_EQUAL || !g->pred_fluent[l->pred]) continue;
            int id = lit_atom(g, l, args, fmap);
            if (!l->neg) tmp[0][npre++] = id; /* reachable by construction */
            if (l->neg && id >= 0) tmp[1][nneg++] = id;
        }
        for (int j = 0; j < a->neff; j++) {
            const ns_lit *l = &a->eff[j];
            int id = lit_atom(g, l, args, fmap);
            if (!l->neg) tmp[2][nadd++] = id;
            if (l->neg && id >= 0) tmp[3][ndel++] = id;
        }
        sort_unique(tmp[0], &npre);
        sort_unique(tmp[1], &nneg);
        sort_unique(tmp[2], &nadd);
        sort_unique(tmp[3], &ndel);
        int m = 0; /* deletes that are also added do not happen (add wins) */
        for (int j = 0; j < ndel; j++) {
            bool added = false;
            for (int k = 0; k < nadd; k++) added |= tmp[2][k] == tmp[3][j];
            if (!added) tmp[3][m++] = tmp[3][j];
        }
        ndel = m;
        /* an operator that deletes nothing and adds only what it requires
         * never changes a state: drop it, as Fast Downward does */
        bool noop = ndel == 0;
        for (int j = 0; j < nadd && noop; j++) {
            bool required = false;
            for (int k = 0; k < npre; k++) required |= tmp[0][k] == tmp[2][j];
            noop = required;
        }
        if (noop) continue;
        kept++;
        o->args_off = (int)opargs.n;
        for (int j = 0; j < a->nparams; j++) iv_push(&opargs, args[j]);
        o->pre_off = (int)lists.n;
        o->npre = npre;
        for (int j = 0; j < npre; j++) iv_push(&lists, tmp[0][j]);
        o->preneg_off = (int)lists.n;
        o->npreneg = nneg;
        for (int j = 0; j < nneg; j++) iv_push(&lists, tmp[1][j]);
        o->add_off = (int)lists.n;
        o->nadd = nadd;
        for (int j = 0; j < nadd; j++) iv_push(&lists, tmp[2][j]);
        o->del_off = (int)lists.n;
        o->ndel = ndel;
        for (int j = 0; j < ndel; j++) iv_push(&lists, tmp[3][j]);
    }
    for (int i = 0; i < 4; i++) free(tmp[i]);
    nops = kept;
    t->nops = nops;
    t->ops = ops;
    t->lists = lists.v ? lists.v : ns_xmalloc(sizeof(int));
    t->op_args = opargs.v ? opargs.v : ns_xmalloc(sizeof(int));
    if (g->stop) return false;
    ns_op *sorted = sort_ops(t, g);
    if (!sorted) return false;
    free(t->ops);
    t->ops = sorted;
    return true;
}

ns_status ns_task_ground(ns_task *t, const ns_domain *d, const ns_problem *p, ns_error *err)
{
    return ns_task_ground_limited(t, d, p, NULL, err);
}

ns_status ns_task_ground_limited(ns_task *t, const ns_domain *d, const ns_problem *p, const ns_ground_limits *lim,
                                 ns_error *err)
{
    memset(t, 0, sizeof *t);
    t->domain = d;
    t->problem = p;
    grounder g;
    memset(&g, 0, sizeof g);
    g.d = d;
    g.p = p;
    g.err = err;
    if (lim && (lim->time_limit > 0 || lim->memory_limit > 0)) {
        g.lim = lim;
        g.cpu_start = ns_cpu_now();
        g.next_check = 1; /* the first unit of work reads the clock */
    }
    g.pred_fluent = ns_xcalloc((size_t)d->npreds + 1, sizeof(bool));
    for (int i = 0; i < d->nactions; i++)
        for (int j = 0; j < d->actions[i].neff; j++) g.pred_fluent[d->actions[i].eff[j].pred] = true;
    g.obj_of_type = ns_xcalloc((size_t)d->ntypes * (size_t)p->nobjects + 1, sizeof(bool));
    for (int ty = 0; ty < d->ntypes; ty++)
        for (int o = 0; o < p->nobjects; o++)
            g.obj_of_type[(size_t)ty * (size_t)p->nobjects + (size_t)o] = ns_type_is_subtype(d, p->object_types[o], ty);
    ns_tupleset_init(&g.atoms);
    ns_tupleset_init(&g.index_keys);
    ns_tupleset_init(&g.ops);
    ns_status st = build_rules(&g);
    if (st != NS_OK) {
        grounder_free(&g);
        return st;
    }
    for (int i = 0; i < p->ninit; i++) {
        int key[NS_MAX_ARITY + 1] = {p->init[i].pred};
        memcpy(key + 1, p->init[i].args, sizeof(int) * (size_t)p->init[i].nargs);
        reach(&g, key, p->init[i].nargs + 1);
    }
    run_fixpoint(&g);
    if (g.stop) {
        grounder_free(&g);
        return g.stop;
    }

    int *fmap = ns_xmalloc(sizeof(int) * ((size_t)g.atoms.n + 1));
    int *smap = ns_xmalloc(sizeof(int) * ((size_t)g.atoms.n + 1));
    for (int i = 0; i < g.atoms.n; i++) fmap[i] = smap[i] = -1;
    ns_buf args;
    ns_buf_init(&args);
    t->natoms = collect_atoms(t, &g, true, &t->atoms, fmap, &args);
    t->nstatics = collect_atoms(t, &g, false, &t->statics, smap, &args);
    /* statics' args_off are relative to the same pool: they follow fluents */
    t->atom_args = ns_xmalloc(args.len + sizeof(int));
    memcpy(t->atom_args, args.data, args.len);
    ns_buf_free(&args);
    t->nwords = (t->natoms + 63) / 64;
    if (t->nwords == 0) t->nwords = 1;
    if (!build_ops(t, &g, fmap)) {
        free(fmap);
        free(smap);
        ns_task_free(t);
        ns_status stop = g.stop;
        grounder_free(&g);
        return stop;
    }

    t->init = ns_xcalloc((size_t)t->nwords, sizeof(ns_word));
    for (int i = 0; i < p->ninit; i++) {
        if (!g.pred_fluent[p->init[i].pred]) continue;
        int key[NS_MAX_ARITY + 1] = {p->init[i].pred};
        memcpy(key + 1, p->init[i].args, sizeof(int) * (size_t)p->init[i].nargs);
        ns_bit_set(t->init, fmap[ns_tupleset_find(&g.atoms, key, p->init[i].nargs + 1)]);
    }
    t->goal_pos = ns_xmalloc(sizeof(int) * ((size_t)p->ngoal + 1));
    t->goal_neg = ns_xmalloc(sizeof(int) * ((size_t)p->ngoal + 1));
    for (int i = 0; i < p->ngoal; i++) {
        const ns_lit *l = &p->goal[i];
        if (l->pred == NS_PRED_EQUAL) {
            if ((l->args[0] == l->args[1]) == l->neg) t->goal_impossible = true;
            continue;
        }
        int key[NS_MAX_ARITY + 1] = {l->pred};
        memcpy(key + 1, l->args, sizeof(int) * (size_t)l->nargs);
        int rid = ns_tupleset_find(&g.atoms, key, l->nargs + 1);
        if (!g.pred_fluent[l->pred]) {
            if ((rid >= 0) == l->neg) t->goal_impossible = true;
        } else if (!l->neg) {
            if (rid < 0) t->goal_impossible = true;
            else t->goal_pos[t->ngoal_pos++] = fmap[rid];
        } else if (rid >= 0) {
            t->goal_neg[t->ngoal_neg++] = fmap[rid];
        }
    }
    sort_unique(t->goal_pos, &t->ngoal_pos);
    sort_unique(t->goal_neg, &t->ngoal_neg);
    t->unit_cost = true;
    for (int i = 0; i < t->nops; i++) t->unit_cost &= t->ops[i].cost == 1;
    free(fmap);
    free(smap);
    grounder_free(&g);
    return NS_OK;
}

void ns_task_free(ns_task *t)
{
    free(t->atoms);
    free(t->statics);
    free(t->atom_args);
    free(t->ops);
    free(t->op_args);
    free(t->lists);
    free(t->init);
    free(t->goal_pos);
    free(t->goal_neg);
    memset(t, 0, sizeof *t);
}

/* ---- transition function ---------------------------------------------- */

bool ns_task_applicable(const ns_task *t, int op, const ns_word *s)
{
    const ns_op *o = &t->ops[op];
    const int *pre = ns_op_pre(t, o), *neg = ns_op_preneg(t, o);
    for (int i = 0; i < o->npre; i++)
        if (!ns_bit_get(s, pre[i])) return false;
    for (int i = 0; i < o->npreneg; i++)
        if (ns_bit_get(s, neg[i])) return false;
    return true;
}

void ns_task_apply(const ns_task *t, int op, const ns_word *s, ns_word *out)
{
    const ns_op *o = &t->ops[op];
    if (out != s) memcpy(out, s, sizeof(ns_word) * (size_t)t->nwords);
    const int *del = ns_op_del(t, o), *add = ns_op_add(t, o);
    for (int i = 0; i < o->ndel; i++) ns_bit_clear(out, del[i]);
    for (int i = 0; i < o->nadd; i++) ns_bit_set(out, add[i]);
}

bool ns_task_is_goal(const ns_task *t, const ns_word *s)
{
    if (t->goal_impossible) return false;
    for (int i = 0; i < t->ngoal_pos; i++)
        if (!ns_bit_get(s, t->goal_pos[i])) return false;
    for (int i = 0; i < t->ngoal_neg; i++)
        if (ns_bit_get(s, t->goal_neg[i])) return false;
    return true;
}

/* ---- relevance --------------------------------------------------------- */

int ns_task_relevant_ops(const ns_task *t, bool *relevant)
{
    /* need[a]: bit 1 = a must be made true, bit 2 = a must be made false;
     * bit 4 marks atoms that hold initially and that no operator deletes:
     * they hold in every reachable state and need no achiever (Fast
     * Downward's translator drops such variables as constant). */
    unsigned char *need = ns_xcalloc((size_t)t->natoms + 1, 1);
    for (int a = 0; a < t->natoms; a++)
        if (ns_bit_get(t->init, a)) need[a] = 4;
    for (int i = 0; i < t->nops; i++)
        for (int k = 0; k < t->ops[i].ndel; k++) need[ns_op_del(t, &t->ops[i])[k]] &= (unsigned char)~4;
    for (int a = 0; a < t->natoms; a++)
        if (need[a] & 4) need[a] = 4 | 1; /* "needed" already satisfied: never seeds relevance */
    for (int i = 0; i < t->ngoal_pos; i++) need[t->goal_pos[i]] |= 1;
    for (int i = 0; i < t->ngoal_neg; i++) need[t->goal_neg[i]] |= 2;
    memset(relevant, 0, sizeof(bool) * (size_t)t->nops);
    int count = 0;
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < t->nops; i++) {
            if (relevant[i]) continue;
            const ns_op *o = &t->ops[i];
            bool r = false;
            for (int k = 0; k < o->nadd && !r; k++) r = (need[ns_op_add(t, o)[k]] & 5) == 1;
            for (int k = 0; k < o->ndel && !r; k++) r = need[ns_op_del(t, o)[k]] & 2;
            if (!r) continue;
            relevant[i] = true;
            count++;
            changed = true;
            for (int k = 0; k < o->npre; k++) need[ns_op_pre(t, o)[k]] |= 1;
            for (int k = 0; k < o->npreneg; k++) need[ns_op_preneg(t, o)[k]] |= 2;
        }
    }
    free(need);
    return count;
}

/* ---- lookups and printing --------------------------------------------- */

static int cmp_atom_to_key(const ns_task *t, const ns_atom *a, int pred, const int *args, int nargs)
{
    if (a->pred != pred) return a->pred < pred ? -1 : 1;
    return cmp_atom_keys(t->atom_args + a->args_off, a->nargs, args, nargs);
}

static int bsearch_atom(const ns_task *t, const ns_atom *atoms, int n, int pred, const int *args, int nargs)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = cmp_atom_to_key(t, &atoms[mid], pred, args, nargs);
        if (c == 0) return mid;
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

int ns_task_find_atom(const ns_task *t, int pred, const int *args, int nargs)
{
    return bsearch_atom(t, t->atoms, t->natoms, pred, args, nargs);
}

bool ns_task_is_static_true(const ns_task *t, int pred, const int *args, int nargs)
{
    return bsearch_atom(t, t->statics, t->nstatics, pred, args, nargs) >= 0;
}

/* The canonical order's comparison (sort_ops) of operator o with (schema, args). */
static int cmp_op_key(const ns_task *t, const ns_op *o, int schema, const int *args, int nargs)
{
    int c = o->schema == schema ? 0 : strcmp(t->domain->actions[o->schema].name, t->domain->actions[schema].name);
    const int *oa = ns_op_args(t, o);
    for (int i = 0; i < nargs && c == 0; i++)
        if (oa[i] != args[i]) c = strcmp(t->problem->objects[oa[i]], t->problem->objects[args[i]]);
    return c;
}

int ns_task_find_op(const ns_task *t, int schema, const int *args, int nargs)
{
    if (schema < 0 || schema >= t->domain->nactions || nargs != t->domain->actions[schema].nparams) return -1;
    int lo = 0, hi = t->nops; /* the first operator not below the key */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (cmp_op_key(t, &t->ops[mid], schema, args, nargs) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < t->nops && cmp_op_key(t, &t->ops[lo], schema, args, nargs) == 0 ? lo : -1;
}

static void put_atom(const ns_task *t, const ns_atom *a, ns_buf *b)
{
    ns_buf_putc(b, '(');
    ns_buf_puts(b, t->domain->preds[a->pred].name);
    for (int i = 0; i < a->nargs; i++) {
        ns_buf_putc(b, ' ');
        ns_buf_puts(b, t->problem->objects[t->atom_args[a->args_off + i]]);
    }
    ns_buf_putc(b, ')');
}

void ns_task_atom_str(const ns_task *t, int atom, ns_buf *b) { put_atom(t, &t->atoms[atom], b); }
void ns_task_static_str(const ns_task *t, int atom, ns_buf *b) { put_atom(t, &t->statics[atom], b); }

void ns_task_op_str(const ns_task *t, int op, ns_buf *b)
{
    const ns_op *o = &t->ops[op];
    const ns_action *a = &t->domain->actions[o->schema];
    ns_buf_putc(b, '(');
    ns_buf_puts(b, a->name);
    for (int i = 0; i < a->nparams; i++) {
        ns_buf_putc(b, ' ');
        ns_buf_puts(b, t->problem->objects[t->op_args[o->args_off + i]]);
    }
    ns_buf_putc(b, ')');
}

ns_status ns_task_load(ns_loaded_task *lt, const char *domain_path, const char *problem_path, ns_error *err)
{
    return ns_task_load_limited(lt, domain_path, problem_path, NULL, err);
}

ns_status ns_task_load_limited(ns_loaded_task *lt, const char *domain_path, const char *problem_path,
                               const ns_ground_limits *lim, ns_error *err)
{
    memset(lt, 0, sizeof *lt);
    ns_status st = ns_domain_read(&lt->domain, domain_path, err);
    if (st != NS_OK) return st;
    st = ns_problem_read(&lt->problem, &lt->domain, problem_path, err);
    if (st != NS_OK) {
        ns_domain_free(&lt->domain);
        return st;
    }
    double t0 = ns_now(), c0 = ns_cpu_now();
    st = ns_task_ground_limited(&lt->task, &lt->domain, &lt->problem, lim, err);
    if (st != NS_OK) {
        ns_problem_free(&lt->problem);
        ns_domain_free(&lt->domain);
        return st;
    }
    lt->ground_seconds = ns_now() - t0;
    lt->ground_cpu_seconds = ns_cpu_now() - c0;
    return NS_OK;
}

void ns_loaded_task_free(ns_loaded_task *lt)
{
    ns_task_free(&lt->task);
    ns_problem_free(&lt->problem);
    ns_domain_free(&lt->domain);
}
