/* pddl.c — PDDL domain and problem reader (typed STRIPS with negative
 * preconditions, equality, disjunctive preconditions and action costs). */
#include "nextstate/core/pddl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/util/sexp.h"

#define MAX_DNF_CLAUSES 4096

typedef struct ctx {
    const ns_sexp *s;
    const char *path;
    ns_error *err;
} ctx;

typedef const ns_sexp_node node;

static ns_status fail(const ctx *c, node *n, ns_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static ns_status fail(const ctx *c, node *n, ns_status code, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ns_error_set(c->err, code, c->path, n ? n->line : 0, n ? n->col : 0, "%s", msg);
}
#define BAD(n, ...) fail(c, (n), NS_ERR_INPUT, __VA_ARGS__)
#define UNSUPPORTED(n, ...) fail(c, (n), NS_ERR_UNSUPPORTED, __VA_ARGS__)
#define TRY(expr)                        \
    do {                                 \
        ns_status st_ = (expr);          \
        if (st_ != NS_OK) return st_;    \
    } while (0)

static node *kid(const ctx *c, node *n, int k) { return ns_sexp_kid(c->s, n, k); }

static bool is_atom(node *n) { return !n->is_list; }

/* ---- lookups ---------------------------------------------------------- */

int ns_domain_find_type(const ns_domain *d, const char *name)
{
    for (int i = 0; i < d->ntypes; i++)
        if (strcmp(d->types[i].name, name) == 0) return i;
    return -1;
}

int ns_domain_find_pred(const ns_domain *d, const char *name)
{
    for (int i = 0; i < d->npreds; i++)
        if (strcmp(d->preds[i].name, name) == 0) return i;
    return -1;
}

int ns_domain_find_action(const ns_domain *d, const char *name)
{
    for (int i = 0; i < d->nactions; i++)
        if (strcmp(d->actions[i].name, name) == 0) return i;
    return -1;
}

static int find_constant(const ns_domain *d, const char *name)
{
    for (int i = 0; i < d->nconstants; i++)
        if (strcmp(d->constants[i], name) == 0) return i;
    return -1;
}

int ns_problem_find_object(const ns_problem *p, const char *name)
{
    return ns_strmap_get(&p->object_index, name);
}

bool ns_type_is_subtype(const ns_domain *d, int sub, int super)
{
    for (int t = sub, guard = 0; t >= 0 && guard <= d->ntypes; t = d->types[t].parent, guard++)
        if (t == super) return true;
    return false;
}

/* ---- typed lists ------------------------------------------------------ */

/* One entry of a typed list "a b - t c": the name node and its type node
 * (NULL = object). */
typedef struct typed_item {
    node *name;
    node *type;
} typed_item;

/* Reads the typed list in kids [from, n) of list l. */
static ns_status typed_list(const ctx *c, node *l, int from, typed_item **out, int *nout)
{
    typed_item *items = NULL;
    size_t cap = 0;
    int n = 0, untyped_from = 0;
    for (int k = from; k < l->nkids; k++) {
        node *x = kid(c, l, k);
        if (ns_sexp_is(x, "-")) {
            if (k + 1 >= l->nkids) {
                free(items);
                return BAD(x, "'-' must be followed by a type");
            }
            if (n == untyped_from) {
                free(items);
                return BAD(x, "'-' with no names before it");
            }
            node *t = kid(c, l, ++k);
            for (int i = untyped_from; i < n; i++) items[i].type = t;
            untyped_from = n;
            continue;
        }
        if (!is_atom(x)) {
            free(items);
            return BAD(x, "expected a name, found a list");
        }
        NS_GROW(items, cap, (size_t)n + 1);
        items[n].name = x;
        items[n].type = NULL;
        n++;
    }
    *out = items;
    *nout = n;
    return NS_OK;
}

/* Resolves a type node (atom or (either …)) into a list of type ids. */
static ns_status resolve_types(const ctx *c, const ns_domain *d, node *t, int **types, int *ntypes)
{
    if (!t) {
        *types = ns_xmalloc(sizeof(int));
        (*types)[0] = 0;
        *ntypes = 1;
        return NS_OK;
    }
    if (is_atom(t)) {
        int id = ns_domain_find_type(d, t->atom);
        if (id < 0) return BAD(t, "undefined type '%s'", t->atom);
        *types = ns_xmalloc(sizeof(int));
        (*types)[0] = id;
        *ntypes = 1;
        return NS_OK;
    }
    if (t->nkids < 2 || !ns_sexp_is(kid(c, t, 0), "either")) return BAD(t, "expected a type or (either …)");
    *types = ns_xmalloc(sizeof(int) * (size_t)(t->nkids - 1));
    *ntypes = t->nkids - 1;
    for (int k = 1; k < t->nkids; k++) {
        node *x = kid(c, t, k);
        int id = is_atom(x) ? ns_domain_find_type(d, x->atom) : -1;
        if (id < 0) {
            free(*types);
            *types = NULL;
            return BAD(x, "undefined type '%s'", is_atom(x) ? x->atom : "(…)");
        }
        (*types)[k - 1] = id;
    }
    return NS_OK;
}

/* A single type for objects and constants. */
static ns_status resolve_one_type(const ctx *c, const ns_domain *d, node *t, int *type)
{
    int *ts, n;
    TRY(resolve_types(c, d, t, &ts, &n));
    *type = ts[0];
    free(ts);
    if (n != 1) return UNSUPPORTED(t, "(either …) is not supported for objects");
    return NS_OK;
}

/* ---- domain ----------------------------------------------------------- */

static int add_type(ns_domain *d, const char *name, int parent, size_t *cap)
{
    NS_GROW(d->types, *cap, (size_t)d->ntypes + 1);
    d->types[d->ntypes].name = ns_xstrdup(name);
    d->types[d->ntypes].parent = parent;
    return d->ntypes++;
}

static ns_status parse_types(const ctx *c, ns_domain *d, node *sec, size_t *cap)
{
    typed_item *it;
    int n;
    TRY(typed_list(c, sec, 1, &it, &n));
    ns_status st = NS_OK;
    /* declare all names first, then parents (which may be declared later) */
    for (int i = 0; i < n && st == NS_OK; i++) {
        if (ns_sexp_is(it[i].name, "object")) continue;
        if (ns_domain_find_type(d, it[i].name->atom) >= 0) continue;
        add_type(d, it[i].name->atom, 0, cap);
    }
    for (int i = 0; i < n && st == NS_OK; i++) {
        node *t = it[i].type;
        if (ns_sexp_is(it[i].name, "object")) {
            if (t && !ns_sexp_is(t, "object")) st = BAD(it[i].name, "type 'object' cannot have a parent");
            continue;
        }
        int parent = 0;
        if (t) {
            if (!is_atom(t)) {
                st = UNSUPPORTED(t, "(either …) as a supertype is not supported");
                break;
            }
            parent = ns_domain_find_type(d, t->atom);
            if (parent < 0) parent = add_type(d, t->atom, 0, cap); /* implicit supertype */
        }
        int self = ns_domain_find_type(d, it[i].name->atom);
        if (ns_type_is_subtype(d, parent, self)) {
            st = BAD(it[i].name, "type '%s' is its own ancestor", it[i].name->atom);
            break;
        }
        d->types[self].parent = parent;
    }
    free(it);
    return st;
}

static ns_status parse_constants(const ctx *c, ns_domain *d, node *sec)
{
    typed_item *it;
    int n;
    TRY(typed_list(c, sec, 1, &it, &n));
    ns_status st = NS_OK;
    for (int i = 0; i < n; i++) {
        int type;
        if ((st = resolve_one_type(c, d, it[i].type, &type)) != NS_OK) break;
        if (find_constant(d, it[i].name->atom) >= 0) {
            st = BAD(it[i].name, "constant '%s' declared twice", it[i].name->atom);
            break;
        }
        d->constants = ns_xrealloc(d->constants, sizeof(char *) * (size_t)(d->nconstants + 1));
        d->constant_types = ns_xrealloc(d->constant_types, sizeof(int) * (size_t)(d->nconstants + 1));
        d->constants[d->nconstants] = ns_xstrdup(it[i].name->atom);
        d->constant_types[d->nconstants++] = type;
    }
    free(it);
    return st;
}

static ns_status parse_predicates(const ctx *c, ns_domain *d, node *sec)
{
    for (int k = 1; k < sec->nkids; k++) {
        node *p = kid(c, sec, k);
        if (!p->is_list || p->nkids == 0 || !is_atom(kid(c, p, 0)))
            return BAD(p, "expected a predicate declaration (name ?arg …)");
        const char *name = kid(c, p, 0)->atom;
        if (ns_domain_find_pred(d, name) >= 0) return BAD(p, "predicate '%s' declared twice", name);
        if (strcmp(name, "=") == 0) return BAD(p, "'=' is built in and cannot be declared");
        typed_item *it;
        int n;
        TRY(typed_list(c, p, 1, &it, &n));
        if (n > NS_MAX_ARITY) {
            free(it);
            return UNSUPPORTED(p, "predicate '%s' has more than %d arguments", name, NS_MAX_ARITY);
        }
        ns_pred pr = {ns_xstrdup(name), n, ns_xmalloc(sizeof(int) * (size_t)(n ? n : 1))};
        d->preds = ns_xrealloc(d->preds, sizeof(ns_pred) * (size_t)(d->npreds + 1));
        d->preds[d->npreds++] = pr;
        for (int i = 0; i < n; i++) {
            if (it[i].name->atom[0] != '?') {
                ns_status bad = BAD(it[i].name, "predicate arguments must be variables (?x), found '%s'", it[i].name->atom);
                free(it);
                return bad;
            }
            int *ts, nt;
            ns_status st = resolve_types(c, d, it[i].type, &ts, &nt);
            if (st != NS_OK) {
                free(it);
                return st;
            }
            pr.arg_types[i] = ts[0]; /* (either …) on predicates: first type, for documentation only */
            free(ts);
        }
        free(it);
    }
    return NS_OK;
}

/* ---- formulas --------------------------------------------------------- */

typedef struct scope { /* variables in scope: an action's parameters */
    char **names;
    int n;
} scope;

/* Resolves a term to an object/constant id (>= 0) or a parameter term (< 0). */
static ns_status resolve_term(const ctx *c, const ns_domain *d, const ns_problem *p, const scope *sc,
                              node *x, int *out)
{
    if (!is_atom(x)) return BAD(x, "expected a term, found a list");
    if (x->atom[0] == '?') {
        for (int i = 0; sc && i < sc->n; i++)
            if (strcmp(sc->names[i], x->atom + 1) == 0) {
                *out = NS_PARAM_TERM(i);
                return NS_OK;
            }
        return BAD(x, "undefined variable '%s'", x->atom);
    }
    int id = p ? ns_problem_find_object(p, x->atom) : find_constant(d, x->atom);
    if (id < 0) return BAD(x, "undefined %s '%s'", p ? "object" : "constant", x->atom);
    *out = id;
    return NS_OK;
}

/* Reads an atomic formula (pred t1 … tk) or (= t1 t2) into *l. */
static ns_status parse_atomic(const ctx *c, const ns_domain *d, const ns_problem *p, const scope *sc,
                              node *f, ns_lit *l)
{
    if (!f->is_list || f->nkids == 0 || !is_atom(kid(c, f, 0)))
        return BAD(f, "expected an atom (predicate arg …)");
    const char *name = kid(c, f, 0)->atom;
    memset(l, 0, sizeof *l);
    if (strcmp(name, "=") == 0) {
        l->pred = NS_PRED_EQUAL;
        if (f->nkids != 3) return BAD(f, "'=' takes 2 arguments, given %d", f->nkids - 1);
    } else {
        l->pred = ns_domain_find_pred(d, name);
        if (l->pred < 0) return BAD(kid(c, f, 0), "undefined predicate '%s'", name);
        if (f->nkids - 1 != d->preds[l->pred].arity)
            return BAD(f, "predicate '%s' takes %d argument%s, given %d", name, d->preds[l->pred].arity,
                       d->preds[l->pred].arity == 1 ? "" : "s", f->nkids - 1);
    }
    l->nargs = f->nkids - 1;
    for (int k = 1; k < f->nkids; k++) TRY(resolve_term(c, d, p, sc, kid(c, f, k), &l->args[k - 1]));
    return NS_OK;
}

/* A formula in disjunctive normal form. */
typedef struct dnf {
    ns_clause *cl;
    int n;
} dnf;

static void dnf_free(dnf *f)
{
    for (int i = 0; i < f->n; i++) free(f->cl[i].lits);
    free(f->cl);
    f->cl = NULL;
    f->n = 0;
}

static ns_clause clause_concat(const ns_clause *a, const ns_clause *b)
{
    ns_clause r = {ns_xmalloc(sizeof(ns_lit) * (size_t)(a->n + b->n + 1)), a->n + b->n};
    if (a->n) memcpy(r.lits, a->lits, sizeof(ns_lit) * (size_t)a->n);
    if (b->n) memcpy(r.lits + a->n, b->lits, sizeof(ns_lit) * (size_t)b->n);
    return r;
}

/* Goal description -> DNF.  allow_or = false rejects disjunction. */
static ns_status parse_gd(const ctx *c, const ns_domain *d, const ns_problem *p, const scope *sc, node *f,
                          bool allow_or, dnf *out)
{
    out->cl = NULL;
    out->n = 0;
    if (!f->is_list) return BAD(f, "expected a formula, found '%s'", f->atom);
    if (f->nkids == 0) { /* () = true */
        out->cl = ns_xcalloc(1, sizeof(ns_clause));
        out->n = 1;
        return NS_OK;
    }
    node *head = kid(c, f, 0);
    if (!is_atom(head)) return BAD(head, "expected a predicate or connective");
    if (strcmp(head->atom, "and") == 0) {
        out->cl = ns_xcalloc(1, sizeof(ns_clause));
        out->n = 1;
        for (int k = 1; k < f->nkids; k++) {
            dnf sub;
            ns_status st = parse_gd(c, d, p, sc, kid(c, f, k), allow_or, &sub);
            if (st == NS_OK && (long)out->n * sub.n > MAX_DNF_CLAUSES)
                st = UNSUPPORTED(f, "precondition too large in disjunctive normal form");
            if (st != NS_OK) {
                dnf_free(out);
                dnf_free(&sub);
                return st;
            }
            dnf prod = {ns_xmalloc(sizeof(ns_clause) * (size_t)(out->n * sub.n)), 0};
            for (int i = 0; i < out->n; i++)
                for (int j = 0; j < sub.n; j++) prod.cl[prod.n++] = clause_concat(&out->cl[i], &sub.cl[j]);
            dnf_free(out);
            dnf_free(&sub);
            *out = prod;
        }
        return NS_OK;
    }
    if (strcmp(head->atom, "or") == 0) {
        if (!allow_or) return UNSUPPORTED(f, "disjunction is not supported here");
        for (int k = 1; k < f->nkids; k++) {
            dnf sub;
            ns_status st = parse_gd(c, d, p, sc, kid(c, f, k), allow_or, &sub);
            if (st == NS_OK && out->n + sub.n > MAX_DNF_CLAUSES)
                st = UNSUPPORTED(f, "precondition too large in disjunctive normal form");
            if (st != NS_OK) {
                dnf_free(out);
                dnf_free(&sub);
                return st;
            }
            out->cl = ns_xrealloc(out->cl, sizeof(ns_clause) * (size_t)(out->n + sub.n + 1));
            memcpy(out->cl + out->n, sub.cl, sizeof(ns_clause) * (size_t)sub.n);
            out->n += sub.n;
            free(sub.cl);
        }
        return NS_OK; /* (or) with no disjuncts is false: zero clauses */
    }
    if (strcmp(head->atom, "not") == 0) {
        if (f->nkids != 2) return BAD(f, "'not' takes one formula");
        node *a = kid(c, f, 1);
        if (a->is_list && a->nkids > 0 && is_atom(kid(c, a, 0))) {
            const char *h = kid(c, a, 0)->atom;
            if (!strcmp(h, "and") || !strcmp(h, "or") || !strcmp(h, "not") || !strcmp(h, "imply") ||
                !strcmp(h, "forall") || !strcmp(h, "exists"))
                return UNSUPPORTED(a, "negation of a compound formula is not supported");
        }
        ns_lit l;
        TRY(parse_atomic(c, d, p, sc, a, &l));
        l.neg = true;
        out->cl = ns_xcalloc(1, sizeof(ns_clause));
        out->cl[0].lits = ns_xmalloc(sizeof(ns_lit));
        out->cl[0].lits[0] = l;
        out->cl[0].n = 1;
        out->n = 1;
        return NS_OK;
    }
    if (!strcmp(head->atom, "imply") || !strcmp(head->atom, "forall") || !strcmp(head->atom, "exists") ||
        !strcmp(head->atom, "when") || !strcmp(head->atom, "preference"))
        return UNSUPPORTED(f, "'%s' is not supported (typed STRIPS with negation, equality and 'or' only)",
                           head->atom);
    ns_lit l;
    TRY(parse_atomic(c, d, p, sc, f, &l));
    out->cl = ns_xcalloc(1, sizeof(ns_clause));
    out->cl[0].lits = ns_xmalloc(sizeof(ns_lit));
    out->cl[0].lits[0] = l;
    out->cl[0].n = 1;
    out->n = 1;
    return NS_OK;
}

/* Effect: conjunction of literals and (increase (total-cost) N). */
static ns_status parse_effect(const ctx *c, const ns_domain *d, const scope *sc, node *f, ns_action *a, size_t *cap)
{
    if (!f->is_list) return BAD(f, "expected an effect, found '%s'", f->atom);
    if (f->nkids == 0) return NS_OK;
    node *head = kid(c, f, 0);
    if (!is_atom(head)) return BAD(head, "expected a predicate or 'and'");
    if (strcmp(head->atom, "and") == 0) {
        for (int k = 1; k < f->nkids; k++) TRY(parse_effect(c, d, sc, kid(c, f, k), a, cap));
        return NS_OK;
    }
    if (strcmp(head->atom, "increase") == 0) {
        if (f->nkids != 3 || !kid(c, f, 1)->is_list || kid(c, f, 1)->nkids != 1 ||
            !ns_sexp_is(kid(c, kid(c, f, 1), 0), "total-cost"))
            return UNSUPPORTED(f, "only (increase (total-cost) N) is supported");
        node *v = kid(c, f, 2);
        char *end;
        long cost = is_atom(v) ? strtol(v->atom, &end, 10) : -1;
        if (!is_atom(v) || *end || cost < 0 || cost > 1000000)
            return UNSUPPORTED(v, "action cost must be a non-negative integer constant");
        a->cost = (int)cost;
        return NS_OK;
    }
    if (!strcmp(head->atom, "forall") || !strcmp(head->atom, "when") || !strcmp(head->atom, "or") ||
        !strcmp(head->atom, "decrease") || !strcmp(head->atom, "assign"))
        return UNSUPPORTED(f, "'%s' effects are not supported", head->atom);
    ns_lit l;
    if (strcmp(head->atom, "not") == 0) {
        if (f->nkids != 2) return BAD(f, "'not' takes one atom");
        TRY(parse_atomic(c, d, NULL, sc, kid(c, f, 1), &l));
        l.neg = true;
    } else {
        TRY(parse_atomic(c, d, NULL, sc, f, &l));
    }
    if (l.pred == NS_PRED_EQUAL) return BAD(f, "'=' cannot be an effect");
    NS_GROW(a->eff, *cap, (size_t)a->neff + 1);
    a->eff[a->neff++] = l;
    return NS_OK;
}

static void action_free(ns_action *a)
{
    free(a->name);
    for (int i = 0; i < a->nparams; i++) {
        free(a->param_names[i]);
        free(a->param_types[i]);
    }
    free(a->param_names);
    free(a->param_types);
    free(a->nparam_types);
    for (int i = 0; i < a->npre; i++) free(a->pre[i].lits);
    free(a->pre);
    free(a->eff);
    memset(a, 0, sizeof *a);
}

static ns_status parse_action(const ctx *c, ns_domain *d, node *sec)
{
    if (sec->nkids < 2 || !is_atom(kid(c, sec, 1))) return BAD(sec, "expected (:action NAME …)");
    const char *name = kid(c, sec, 1)->atom;
    if (ns_domain_find_action(d, name) >= 0) return BAD(kid(c, sec, 1), "action '%s' declared twice", name);
    ns_action a = {0};
    a.name = ns_xstrdup(name);
    a.cost = 1;
    node *params = NULL, *pre = NULL, *eff = NULL;
    ns_status st = NS_OK;
    for (int k = 2; k < sec->nkids && st == NS_OK; k += 2) {
        node *key = kid(c, sec, k);
        if (!is_atom(key) || key->atom[0] != ':') {
            st = BAD(key, "expected :parameters, :precondition or :effect");
            break;
        }
        if (k + 1 >= sec->nkids) {
            st = BAD(key, "'%s' has no value", key->atom);
            break;
        }
        node *val = kid(c, sec, k + 1);
        if (!strcmp(key->atom, ":parameters")) params = val;
        else if (!strcmp(key->atom, ":precondition")) pre = val;
        else if (!strcmp(key->atom, ":effect")) eff = val;
        else st = UNSUPPORTED(key, "unknown action field '%s'", key->atom);
    }
    if (st == NS_OK && params) {
        if (!params->is_list) st = BAD(params, ":parameters must be a list");
        typed_item *it = NULL;
        int n = 0;
        if (st == NS_OK) st = typed_list(c, params, 0, &it, &n);
        if (st == NS_OK && n > NS_MAX_ARITY) st = UNSUPPORTED(params, "more than %d parameters", NS_MAX_ARITY);
        if (st == NS_OK) {
            a.param_names = ns_xcalloc((size_t)n + 1, sizeof(char *));
            a.param_types = ns_xcalloc((size_t)n + 1, sizeof(int *));
            a.nparam_types = ns_xcalloc((size_t)n + 1, sizeof(int));
        }
        for (int i = 0; i < n && st == NS_OK; i++) {
            node *x = it[i].name;
            if (x->atom[0] != '?' || !x->atom[1]) {
                st = BAD(x, "parameters must be variables (?x), found '%s'", x->atom);
                break;
            }
            for (int j = 0; j < i; j++)
                if (!strcmp(a.param_names[j], x->atom + 1)) st = BAD(x, "parameter '%s' declared twice", x->atom);
            if (st != NS_OK) break;
            st = resolve_types(c, d, it[i].type, &a.param_types[i], &a.nparam_types[i]);
            if (st != NS_OK) break;
            a.param_names[i] = ns_xstrdup(x->atom + 1);
            a.nparams = i + 1;
        }
        free(it);
    }
    scope sc = {a.param_names, a.nparams};
    if (st == NS_OK) {
        dnf f = {0};
        if (pre) {
            st = parse_gd(c, d, NULL, &sc, pre, true, &f);
        } else {
            f.cl = ns_xcalloc(1, sizeof(ns_clause));
            f.n = 1;
        }
        a.pre = f.cl;
        a.npre = f.n;
    }
    size_t effcap = 0;
    if (st == NS_OK && eff) st = parse_effect(c, d, &sc, eff, &a, &effcap);
    if (st != NS_OK) {
        action_free(&a);
        return st;
    }
    d->actions = ns_xrealloc(d->actions, sizeof(ns_action) * (size_t)(d->nactions + 1));
    d->actions[d->nactions++] = a;
    return NS_OK;
}

/* Checks the (define (KIND NAME) …) frame; returns the define node. */
static ns_status parse_frame(const ctx *c, const char *kind, node **def, const char **name)
{
    const ns_sexp *s = c->s;
    if (s->ntop == 0) return ns_error_set(c->err, NS_ERR_INPUT, c->path, 1, 1, "empty file: expected (define (%s …) …)", kind);
    node *d = ns_sexp_node_at(s, s->top[0]);
    if (s->ntop > 1) return BAD(ns_sexp_node_at(s, s->top[1]), "unexpected text after the (define …) form");
    if (!d->is_list || d->nkids < 2 || !ns_sexp_is(kid(c, d, 0), "define"))
        return BAD(d, "expected (define (%s NAME) …)", kind);
    node *h = kid(c, d, 1);
    if (!h->is_list || h->nkids != 2 || !ns_sexp_is(kid(c, h, 0), kind) || !is_atom(kid(c, h, 1)))
        return BAD(h, "expected (%s NAME)", kind);
    *def = d;
    *name = kid(c, h, 1)->atom;
    return NS_OK;
}

static ns_status domain_body(const ctx *c, ns_domain *d, node *def)
{
    size_t type_cap = 0;
    add_type(d, "object", -1, &type_cap);
    /* Fixed section order as PDDL prescribes is not enforced; but types must
     * come before their uses, so sections are read in two passes. */
    static const char *const order[] = {":requirements", ":types", ":constants", ":predicates", ":functions", ":action"};
    for (int pass = 0; pass < 6; pass++) {
        for (int k = 2; k < def->nkids; k++) {
            node *sec = kid(c, def, k);
            if (!sec->is_list || sec->nkids == 0 || !is_atom(kid(c, sec, 0)))
                return BAD(sec, "expected a domain section such as (:predicates …)");
            const char *key = kid(c, sec, 0)->atom;
            if (pass == 0) { /* validate names once */
                bool known = false;
                for (int i = 0; i < 6; i++) known |= !strcmp(key, order[i]);
                if (!known) {
                    if (!strcmp(key, ":derived") || !strcmp(key, ":durative-action") || !strcmp(key, ":constraints"))
                        return UNSUPPORTED(sec, "'%s' is not supported", key);
                    return BAD(sec, "unknown domain section '%s'", key);
                }
                if (!strcmp(key, ":requirements")) {
                    for (int r = 1; r < sec->nkids; r++) {
                        node *x = kid(c, sec, r);
                        static const char *const ok[] = {":strips", ":typing", ":negative-preconditions", ":equality",
                                                         ":disjunctive-preconditions", ":action-costs", ":adl"};
                        bool fine = false;
                        for (int i = 0; i < 7; i++) fine |= ns_sexp_is(x, ok[i]);
                        if (!fine)
                            return UNSUPPORTED(x, "requirement '%s' is not supported", is_atom(x) ? x->atom : "(…)");
                        if (ns_sexp_is(x, ":action-costs")) d->action_costs = true;
                    }
                }
                continue;
            }
            if (strcmp(key, order[pass]) != 0) continue;
            if (pass == 1) TRY(parse_types(c, d, sec, &type_cap));
            else if (pass == 2) TRY(parse_constants(c, d, sec));
            else if (pass == 3) TRY(parse_predicates(c, d, sec));
            else if (pass == 5) TRY(parse_action(c, d, sec));
            /* :functions: only (total-cost) matters, through action costs */
        }
    }
    return NS_OK;
}

ns_status ns_domain_parse(ns_domain *d, const char *text, const char *path, ns_error *err)
{
    memset(d, 0, sizeof *d);
    ns_sexp s;
    TRY(ns_sexp_parse(&s, text, path, err));
    ctx c = {&s, path, err};
    node *def;
    const char *name;
    ns_status st = parse_frame(&c, "domain", &def, &name);
    if (st == NS_OK) {
        d->name = ns_xstrdup(name);
        d->path = ns_xstrdup(path ? path : "");
        st = domain_body(&c, d, def);
    }
    ns_sexp_free(&s);
    if (st != NS_OK) ns_domain_free(d);
    return st;
}

ns_status ns_domain_read(ns_domain *d, const char *path, ns_error *err)
{
    char *text;
    memset(d, 0, sizeof *d);
    TRY(ns_read_text_file(path, &text, NULL, err));
    ns_status st = ns_domain_parse(d, text, path, err);
    free(text);
    return st;
}

void ns_domain_free(ns_domain *d)
{
    free(d->name);
    free(d->path);
    for (int i = 0; i < d->ntypes; i++) free(d->types[i].name);
    free(d->types);
    for (int i = 0; i < d->npreds; i++) {
        free(d->preds[i].name);
        free(d->preds[i].arg_types);
    }
    free(d->preds);
    for (int i = 0; i < d->nconstants; i++) free(d->constants[i]);
    free(d->constants);
    free(d->constant_types);
    for (int i = 0; i < d->nactions; i++) action_free(&d->actions[i]);
    free(d->actions);
    memset(d, 0, sizeof *d);
}

/* ---- problem ---------------------------------------------------------- */

static void add_object(ns_problem *p, const char *name, int type, size_t *cap)
{
    NS_GROW(p->objects, *cap, (size_t)p->nobjects + 1);
    p->object_types = ns_xrealloc(p->object_types, sizeof(int) * *cap);
    p->objects[p->nobjects] = ns_xstrdup(name);
    p->object_types[p->nobjects] = type;
    ns_strmap_put(&p->object_index, p->objects[p->nobjects], p->nobjects);
    p->nobjects++;
}

static ns_status problem_body(const ctx *c, ns_problem *p, const ns_domain *d, node *def)
{
    size_t obj_cap = 0, init_cap = 0;
    for (int i = 0; i < d->nconstants; i++) add_object(p, d->constants[i], d->constant_types[i], &obj_cap);
    node *init = NULL, *goal = NULL;
    for (int k = 2; k < def->nkids; k++) {
        node *sec = kid(c, def, k);
        if (!sec->is_list || sec->nkids == 0 || !is_atom(kid(c, sec, 0)))
            return BAD(sec, "expected a problem section such as (:init …)");
        const char *key = kid(c, sec, 0)->atom;
        if (!strcmp(key, ":domain")) {
            if (sec->nkids != 2 || !is_atom(kid(c, sec, 1))) return BAD(sec, "expected (:domain NAME)");
            if (p->domain_name) return BAD(sec, "a second (:domain …) section");
            if (d->name && strcmp(kid(c, sec, 1)->atom, d->name) != 0)
                return BAD(kid(c, sec, 1), "the problem is for domain '%s', but the domain file defines '%s'",
                           kid(c, sec, 1)->atom, d->name);
            p->domain_name = ns_xstrdup(kid(c, sec, 1)->atom);
        } else if (!strcmp(key, ":objects")) {
            typed_item *it;
            int n;
            TRY(typed_list(c, sec, 1, &it, &n));
            for (int i = 0; i < n; i++) {
                int type;
                ns_status st = resolve_one_type(c, d, it[i].type, &type);
                int prev = ns_problem_find_object(p, it[i].name->atom);
                if (st == NS_OK && prev >= 0 && (prev >= d->nconstants || p->object_types[prev] != type))
                    st = BAD(it[i].name, "object '%s' declared twice", it[i].name->atom);
                if (st != NS_OK) {
                    free(it);
                    return st;
                }
                if (prev < 0) add_object(p, it[i].name->atom, type, &obj_cap);
            }
            free(it);
        } else if (!strcmp(key, ":init")) {
            init = sec;
        } else if (!strcmp(key, ":goal")) {
            if (sec->nkids != 2) return BAD(sec, "expected (:goal FORMULA)");
            goal = kid(c, sec, 1);
        } else if (strcmp(key, ":requirements") && strcmp(key, ":metric")) {
            return BAD(sec, "unknown problem section '%s'", key);
        }
    }
    if (!p->domain_name) return BAD(def, "the problem has no (:domain NAME) section");
    if (!init) return BAD(def, "the problem has no (:init …) section");
    if (!goal) return BAD(def, "the problem has no (:goal …) section");
    for (int k = 1; k < init->nkids; k++) {
        node *f = kid(c, init, k);
        if (f->is_list && f->nkids > 0 && ns_sexp_is(kid(c, f, 0), "=") && f->nkids == 3 && kid(c, f, 1)->is_list)
            continue; /* numeric fluent initialisation, e.g. (= (total-cost) 0) */
        if (f->is_list && f->nkids > 0 && ns_sexp_is(kid(c, f, 0), "not")) continue; /* closed world */
        if (f->is_list && f->nkids > 0 && is_atom(kid(c, f, 0)) && strcmp(kid(c, f, 0)->atom, "=") &&
            ns_domain_find_pred(d, kid(c, f, 0)->atom) < 0) {
            if (p->nunknown_init++ == 0) {
                p->unknown_line = f->line;
                p->unknown_col = f->col;
                snprintf(p->unknown_pred, sizeof p->unknown_pred, "%s", kid(c, f, 0)->atom);
            }
            continue;
        }
        ns_lit l;
        TRY(parse_atomic(c, d, p, NULL, f, &l));
        if (l.pred == NS_PRED_EQUAL) return BAD(f, "'=' cannot appear in the initial state");
        NS_GROW(p->init, init_cap, (size_t)p->ninit + 1);
        ns_ground_atom *a = &p->init[p->ninit++];
        a->pred = l.pred;
        a->nargs = l.nargs;
        memcpy(a->args, l.args, sizeof a->args);
    }
    dnf g;
    TRY(parse_gd(c, d, p, NULL, goal, false, &g));
    if (g.n != 1) { /* cannot happen without 'or', kept for safety */
        dnf_free(&g);
        return UNSUPPORTED(goal, "disjunctive goals are not supported");
    }
    p->goal = g.cl[0].lits;
    p->ngoal = g.cl[0].n;
    free(g.cl);
    return NS_OK;
}

ns_status ns_problem_parse(ns_problem *p, const ns_domain *d, const char *text, const char *path, ns_error *err)
{
    memset(p, 0, sizeof *p);
    ns_strmap_init(&p->object_index);
    ns_sexp s;
    ns_status st = ns_sexp_parse(&s, text, path, err);
    if (st != NS_OK) {
        ns_problem_free(p);
        return st;
    }
    ctx c = {&s, path, err};
    node *def;
    const char *name;
    st = parse_frame(&c, "problem", &def, &name);
    if (st == NS_OK) {
        p->name = ns_xstrdup(name);
        p->path = ns_xstrdup(path ? path : "");
        st = problem_body(&c, p, d, def);
    }
    ns_sexp_free(&s);
    if (st != NS_OK) ns_problem_free(p);
    return st;
}

ns_status ns_problem_read(ns_problem *p, const ns_domain *d, const char *path, ns_error *err)
{
    char *text;
    memset(p, 0, sizeof *p);
    TRY(ns_read_text_file(path, &text, NULL, err));
    ns_status st = ns_problem_parse(p, d, text, path, err);
    free(text);
    return st;
}

void ns_problem_free(ns_problem *p)
{
    free(p->name);
    free(p->domain_name);
    free(p->path);
    for (int i = 0; i < p->nobjects; i++) free(p->objects[i]);
    free(p->objects);
    free(p->object_types);
    free(p->init);
    free(p->goal);
    if (p->object_index.keys) ns_strmap_free(&p->object_index);
    memset(p, 0, sizeof *p);
}
