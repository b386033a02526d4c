/* landmarks.c — RHW-style landmark generation and the landmark-count
 * heuristic (see landmarks.h).
 *
 * The builder keeps the relaxed task as two atom -> operator indexes
 * (operators having the atom as a positive precondition, operators adding
 * it) and one precondition counter per operator.  Each landmark false
 * initially gets one exploration from the initial state with its achievers
 * excluded; its reached set is kept (one bitset per landmark) for the
 * natural orderings, computed once all landmarks are known. */
#include "nextstate/core/landmarks.h"

#include <stdlib.h>
#include <string.h>

#include "nextstate/core/heuristic.h"

#define MAX_DISJ 4 /* atoms in a disjunctive landmark (as Fast Downward's RHW) */

typedef struct builder {
    const ns_task *t;
    const ns_landmarks_opts *o;
    double cpu_start;
    int *precof_start, *precof; /* atom -> ops with it as positive precondition */
    int *addof_start, *addof;   /* atom -> ops adding it */
    int *cnt;                   /* op -> preconditions not reached yet */
    uint32_t *excl, *omark;     /* op -> stamps */
    uint32_t *amark;            /* atom -> stamp */
    int *acount;                /* atom -> first achievers needing it */
    uint32_t stamp;
    uint8_t *reach;
    int *queue;
    int *simple_of; /* atom -> simple landmark, or -1 */
    int *in_lm;     /* atom -> some landmark containing it, or -1 */
    uint8_t *is_goal;
    /* the growing graph */
    ns_landmark *lm;
    size_t nlm, caplm;
    int *atoms;
    size_t natoms, capatoms;
    int *first;
    size_t nfirst, capfirst;
    ns_lm_order *ord;
    size_t nord, capord;
    ns_word *reach_sets; /* landmark -> reached atoms (t->nwords words), for processed ones */
    size_t capreach;
    int *fa; /* scratch: first achievers of the landmark being processed */
    bool unsolvable;
    long work; /* the explorations' (ns_landmarks' work) */
} builder;

/* CSR index atom -> ops from the ops' lists (pre when pre, else add). */
static void index_ops(const ns_task *t, bool pre, int **start, int **list)
{
    int *s = ns_xcalloc((size_t)t->natoms + 2, sizeof(int));
    for (int o = 0; o < t->nops; o++) {
        const ns_op *op = &t->ops[o];
        const int *a = pre ? ns_op_pre(t, op) : ns_op_add(t, op);
        int n = pre ? op->npre : op->nadd;
        for (int k = 0; k < n; k++) s[a[k] + 1]++;
    }
    for (int i = 0; i < t->natoms; i++) s[i + 1] += s[i];
    int *l = ns_xmalloc(((size_t)s[t->natoms] + 1) * sizeof(int));
    int *fill = ns_xmalloc(((size_t)t->natoms + 1) * sizeof(int));
    memcpy(fill, s, (size_t)t->natoms * sizeof(int));
    for (int o = 0; o < t->nops; o++) {
        const ns_op *op = &t->ops[o];
        const int *a = pre ? ns_op_pre(t, op) : ns_op_add(t, op);
        int n = pre ? op->npre : op->nadd;
        for (int k = 0; k < n; k++) l[fill[a[k]]++] = o;
    }
    free(fill);
    *start = s;
    *list = l;
}

static void builder_init(builder *b, const ns_task *t, const ns_landmarks_opts *o)
{
    memset(b, 0, sizeof *b);
    b->t = t;
    b->o = o;
    b->cpu_start = ns_cpu_now();
    index_ops(t, true, &b->precof_start, &b->precof);
    index_ops(t, false, &b->addof_start, &b->addof);
    size_t na = (size_t)t->natoms + 1, no = (size_t)t->nops + 1;
    b->cnt = ns_xmalloc(no * sizeof(int));
    b->excl = ns_xcalloc(no, sizeof(uint32_t));
    b->omark = ns_xcalloc(no, sizeof(uint32_t));
    b->amark = ns_xcalloc(na, sizeof(uint32_t));
    b->acount = ns_xcalloc(na, sizeof(int));
    b->reach = ns_xmalloc(na);
    b->queue = ns_xmalloc(na * sizeof(int));
    b->simple_of = ns_xmalloc(na * sizeof(int));
    b->in_lm = ns_xmalloc(na * sizeof(int));
    memset(b->simple_of, 0xff, na * sizeof(int));
    memset(b->in_lm, 0xff, na * sizeof(int));
    b->is_goal = ns_xcalloc(na, 1);
    for (int k = 0; k < t->ngoal_pos; k++) b->is_goal[t->goal_pos[k]] = 1;
    b->fa = ns_xmalloc(no * sizeof(int));
}

static void builder_free(builder *b)
{
    free(b->precof_start), free(b->precof), free(b->addof_start), free(b->addof);
    free(b->cnt), free(b->excl), free(b->omark), free(b->amark), free(b->acount);
    free(b->reach), free(b->queue), free(b->simple_of), free(b->in_lm), free(b->is_goal);
    free(b->lm), free(b->atoms), free(b->first), free(b->ord), free(b->reach_sets), free(b->fa);
}

/* Adds the landmark atoms[0..n) (not present yet); returns its id. */
static int add_landmark(builder *b, const int *atoms, int n)
{
    NS_GROW(b->lm, b->caplm, b->nlm + 1);
    NS_GROW(b->atoms, b->capatoms, b->natoms + (size_t)n);
    int id = (int)b->nlm++;
    ns_landmark *l = &b->lm[id];
    memset(l, 0, sizeof *l);
    l->atom_off = (int)b->natoms;
    l->natoms = n;
    for (int k = 0; k < n; k++) {
        int a = atoms[k];
        b->atoms[b->natoms++] = a;
        if (ns_bit_get(b->t->init, a)) l->init_true = true;
        if (b->in_lm[a] < 0) b->in_lm[a] = id;
    }
    if (n == 1) {
        b->simple_of[atoms[0]] = id;
        l->goal = b->is_goal[atoms[0]];
    }
    return id;
}

static void add_order(builder *b, int from, int to, ns_lm_order_kind kind)
{
    NS_GROW(b->ord, b->capord, b->nord + 1);
    b->ord[b->nord++] = (ns_lm_order){from, to, kind};
}

static inline void fire(builder *b, int o, int *qn)
{
    const ns_op *op = &b->t->ops[o];
    const int *add = ns_op_add(b->t, op);
    for (int k = 0; k < op->nadd; k++)
        if (!b->reach[add[k]]) {
            b->reach[add[k]] = 1;
            b->queue[(*qn)++] = add[k];
        }
}

/* Relaxed exploration from the initial state never applying an operator
 * that adds an atom of landmark id; leaves reach[] and cnt[] (cnt[o] == 0:
 * o's preconditions are reached). */
static void explore_without(builder *b, int id)
{
    const ns_task *t = b->t;
    const ns_landmark *l = &b->lm[id];
    b->stamp++;
    for (int k = 0; k < l->natoms; k++) {
        int a = b->atoms[l->atom_off + k];
        for (int j = b->addof_start[a]; j < b->addof_start[a + 1]; j++) b->excl[b->addof[j]] = b->stamp;
    }
    memset(b->reach, 0, (size_t)t->natoms);
    int qn = 0;
    for (int a = 0; a < t->natoms; a++)
        if (ns_bit_get(t->init, a)) {
            b->reach[a] = 1;
            b->queue[qn++] = a;
        }
    for (int o = 0; o < t->nops; o++) {
        b->cnt[o] = t->ops[o].npre;
        if (b->cnt[o] == 0 && b->excl[o] != b->stamp) fire(b, o, &qn);
    }
    long work = 3L * t->natoms + t->nops; /* the resets and scans; the reached atoms' operators below */
    for (int qh = 0; qh < qn; qh++) {
        int a = b->queue[qh];
        work += 1 + b->precof_start[a + 1] - b->precof_start[a];
        for (int j = b->precof_start[a]; j < b->precof_start[a + 1]; j++) {
            int o = b->precof[j];
            if (--b->cnt[o] == 0 && b->excl[o] != b->stamp) fire(b, o, &qn);
        }
    }
    b->work += work;
}

/* The possible first achievers of landmark id after explore_without(id),
 * into b->fa; returns their number. */
static int first_achievers(builder *b, int id)
{
    const ns_landmark *l = &b->lm[id];
    int n = 0;
    b->stamp++;
    for (int k = 0; k < l->natoms; k++) {
        int a = b->atoms[l->atom_off + k];
        for (int j = b->addof_start[a]; j < b->addof_start[a + 1]; j++) {
            int o = b->addof[j];
            if (b->cnt[o] == 0 && b->omark[o] != b->stamp) {
                b->omark[o] = b->stamp;
                b->fa[n++] = o;
            }
        }
    }
    return n;
}

/* Does op's precondition list hold atom p before position k? */
static bool pre_repeats(const int *pre, int k, int p)
{
    for (int j = 0; j < k; j++)
        if (pre[j] == p) return true;
    return false;
}

/* Preconditions shared by all first achievers fa[0..nfa): simple
 * landmarks ordered greedy-necessarily before id. */
static void shared_preconditions(builder *b, int id, int nfa)
{
    const ns_task *t = b->t;
    b->stamp++;
    for (int i = 0; i < nfa; i++) {
        const ns_op *op = &t->ops[b->fa[i]];
        const int *pre = ns_op_pre(t, op);
        for (int k = 0; k < op->npre; k++) {
            int p = pre[k];
            if (b->amark[p] != b->stamp) b->acount[p] = 0, b->amark[p] = b->stamp;
            if (!pre_repeats(pre, k, p)) b->acount[p]++;
        }
    }
    const ns_op *op0 = &t->ops[b->fa[0]];
    const int *pre0 = ns_op_pre(t, op0);
    for (int k = 0; k < op0->npre; k++) {
        int p = pre0[k];
        if (b->acount[p] != nfa) continue;
        b->acount[p] = 0; /* once */
        int j = b->simple_of[p] >= 0 ? b->simple_of[p] : add_landmark(b, &p, 1);
        add_order(b, j, id, NS_LM_GREEDY_NECESSARY);
    }
}

static bool same_set(const builder *b, int id, const int *atoms, int n)
{
    const ns_landmark *l = &b->lm[id];
    if (l->natoms != n) return false;
    for (int k = 0; k < n; k++)
        if (b->atoms[l->atom_off + k] != atoms[k]) return false;
    return true;
}

/* The preconditions of predicate P of all first achievers fa[0..nfa), into
 * D (sorted); returns their number, or 0 when an achiever has none of P or
 * there are more than MAX_DISJ. */
static int disjunction_of(const builder *b, int P, int nfa, int *D)
{
    const ns_task *t = b->t;
    int nd = 0;
    for (int i = 0; i < nfa; i++) {
        const ns_op *op = &t->ops[b->fa[i]];
        const int *pre = ns_op_pre(t, op);
        bool found = false;
        for (int m = 0; m < op->npre; m++) {
            int a = pre[m];
            if (t->atoms[a].pred != P) continue;
            found = true;
            bool in = false;
            for (int d = 0; d < nd && !in; d++) in = D[d] == a;
            if (in) continue;
            if (nd == MAX_DISJ) return 0;
            D[nd++] = a;
        }
        if (!found) return 0;
    }
    qsort(D, (size_t)nd, sizeof(int), ns_cmp_int);
    return nd;
}

/* For each predicate every first achiever of id has a precondition of: the
 * disjunction of those preconditions, a landmark greedy-necessarily before
 * id (when it has 2..MAX_DISJ atoms, none true initially, none in another
 * landmark). */
static void disjunctive_preconditions(builder *b, int id, int nfa)
{
    const ns_task *t = b->t;
    const ns_op *op0 = &t->ops[b->fa[0]];
    const int *pre0 = ns_op_pre(t, op0);
    for (int k = 0; k < op0->npre; k++) {
        int P = t->atoms[pre0[k]].pred;
        bool dup = false;
        for (int j = 0; j < k && !dup; j++) dup = t->atoms[pre0[j]].pred == P;
        if (dup) continue;
        int D[MAX_DISJ];
        int nd = disjunction_of(b, P, nfa, D);
        if (nd < 2) continue;
        bool clean = true;
        for (int d = 0; d < nd && clean; d++) clean = !ns_bit_get(t->init, D[d]);
        if (!clean) continue;
        int j = b->in_lm[D[0]];
        if (j < 0 || !same_set(b, j, D, nd)) {
            for (int d = 0; d < nd && clean; d++) clean = b->in_lm[D[d]] < 0;
            if (!clean) continue;
            j = add_landmark(b, D, nd);
        }
        add_order(b, j, id, NS_LM_GREEDY_NECESSARY);
    }
}

/* Backchaining from the goal atoms. */
static ns_status generate(builder *b)
{
    const ns_task *t = b->t;
    const int nw = t->nwords;
    for (int k = 0; k < t->ngoal_pos; k++) {
        int a = t->goal_pos[k];
        if (b->simple_of[a] < 0) add_landmark(b, &a, 1);
    }
    for (size_t i = 0; i < b->nlm; i++) {
        int id = (int)i;
        if (b->lm[i].init_true) continue;
        if (b->o->time_limit > 0 && ns_cpu_now() - b->cpu_start > b->o->time_limit) return NS_OUT_OF_TIME;
        explore_without(b, id);
        NS_GROW(b->reach_sets, b->capreach, (i + 1) * (size_t)nw);
        ns_word *R = b->reach_sets + i * (size_t)nw;
        memset(R, 0, (size_t)nw * sizeof(ns_word));
        for (int a = 0; a < t->natoms; a++)
            if (b->reach[a]) ns_bit_set(R, a);
        int nfa = first_achievers(b, id);
        NS_GROW(b->first, b->capfirst, b->nfirst + (size_t)nfa);
        b->lm[i].first_off = (int)b->nfirst;
        b->lm[i].nfirst = nfa;
        memcpy(b->first + b->nfirst, b->fa, (size_t)nfa * sizeof(int));
        b->nfirst += (size_t)nfa;
        if (nfa == 0) {
            b->unsolvable = true;
            continue;
        }
        shared_preconditions(b, id, nfa);
        if (b->o->disjunctive) disjunctive_preconditions(b, id, nfa);
    }
    return NS_OK;
}

/* from -> to (natural) when to's atoms are all unreached without from's
 * achievers, unless an ordering from -> to exists. */
static void natural_orders(builder *b)
{
    const int n = (int)b->nlm, nw = b->t->nwords;
    size_t nord0 = b->nord;
    int *seen = ns_xmalloc(((size_t)n + 1) * sizeof(int));
    int *start = ns_xcalloc((size_t)n + 2, sizeof(int));
    int *from_of = ns_xmalloc((nord0 + 1) * sizeof(int));
    for (size_t e = 0; e < nord0; e++) start[b->ord[e].to + 1]++;
    for (int i = 0; i < n; i++) start[i + 1] += start[i];
    int *fill = ns_xmalloc(((size_t)n + 1) * sizeof(int));
    memcpy(fill, start, (size_t)n * sizeof(int));
    for (size_t e = 0; e < nord0; e++) from_of[fill[b->ord[e].to]++] = b->ord[e].from;
    memset(seen, 0xff, ((size_t)n + 1) * sizeof(int));
    for (int to = 0; to < n; to++) {
        const ns_landmark *lt = &b->lm[to];
        if (lt->init_true) continue;
        for (int e = start[to]; e < start[to + 1]; e++) seen[from_of[e]] = to;
        for (int from = 0; from < n; from++) {
            if (from == to || b->lm[from].init_true || seen[from] == to) continue;
            const ns_word *R = b->reach_sets + (size_t)from * (size_t)nw;
            bool unreached = true;
            for (int k = 0; k < lt->natoms && unreached; k++) unreached = !ns_bit_get(R, b->atoms[lt->atom_off + k]);
            if (unreached) add_order(b, from, to, NS_LM_NATURAL);
            lt = &b->lm[to];
        }
    }
    free(seen), free(start), free(from_of), free(fill);
}

/* Kahn's algorithm over the orderings with keep[e]; writes the order into
 * topo and returns how many landmarks it placed (all: no cycle). */
static int topo_sort(int n, const ns_lm_order *ord, int nord, const uint8_t *keep, int *topo)
{
    int *indeg = ns_xcalloc((size_t)n + 1, sizeof(int));
    int *start = ns_xcalloc((size_t)n + 2, sizeof(int));
    int *succ = ns_xmalloc(((size_t)nord + 1) * sizeof(int));
    for (int e = 0; e < nord; e++)
        if (keep[e]) start[ord[e].from + 1]++, indeg[ord[e].to]++;
    for (int i = 0; i < n; i++) start[i + 1] += start[i];
    int *fill = ns_xmalloc(((size_t)n + 1) * sizeof(int));
    memcpy(fill, start, (size_t)n * sizeof(int));
    for (int e = 0; e < nord; e++)
        if (keep[e]) succ[fill[ord[e].from]++] = ord[e].to;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (indeg[i] == 0) topo[m++] = i;
    for (int h = 0; h < m; h++) {
        int v = topo[h];
        for (int e = start[v]; e < start[v + 1]; e++)
            if (--indeg[succ[e]] == 0) topo[m++] = succ[e];
    }
    free(indeg), free(start), free(succ), free(fill);
    return m;
}

/* Drops orderings until they are acyclic: first the natural ones among
 * landmarks left unplaced by the topological sort, then all among them. */
static void break_cycles(int n, const ns_lm_order *ord, int nord, uint8_t *keep, int *topo)
{
    uint8_t *placed = ns_xmalloc((size_t)n + 1);
    for (int round = 0; round < 2; round++) {
        int m = topo_sort(n, ord, nord, keep, topo);
        if (m == n) break;
        memset(placed, 0, (size_t)n + 1);
        for (int k = 0; k < m; k++) placed[topo[k]] = 1;
        for (int e = 0; e < nord; e++)
            if (!placed[ord[e].from] && !placed[ord[e].to] && (round == 1 || ord[e].kind == NS_LM_NATURAL)) keep[e] = 0;
    }
    topo_sort(n, ord, nord, keep, topo);
    free(placed);
}

/* CSR landmark -> predecessors over the kept orderings (of kind `kind`
 * only when only_gn). */
static void pred_index(ns_landmarks *g, bool only_gn, int **start, int **list)
{
    int n = g->n;
    int *s = ns_xcalloc((size_t)n + 2, sizeof(int));
    for (int e = 0; e < g->norders; e++)
        if (!only_gn || g->orders[e].kind == NS_LM_GREEDY_NECESSARY) s[g->orders[e].to + 1]++;
    for (int i = 0; i < n; i++) s[i + 1] += s[i];
    int *l = ns_xmalloc(((size_t)s[n] + 1) * sizeof(int));
    int *fill = ns_xmalloc(((size_t)n + 1) * sizeof(int));
    memcpy(fill, s, (size_t)n * sizeof(int));
    for (int e = 0; e < g->norders; e++)
        if (!only_gn || g->orders[e].kind == NS_LM_GREEDY_NECESSARY) l[fill[g->orders[e].to]++] = g->orders[e].from;
    free(fill);
    *start = s;
    *list = l;
}

static void atom_index(ns_landmarks *g)
{
    const int na = g->task->natoms;
    int *s = ns_xcalloc((size_t)na + 2, sizeof(int));
    for (int i = 0; i < g->n; i++)
        for (int k = 0; k < g->lm[i].natoms; k++) s[g->lm_atoms[g->lm[i].atom_off + k] + 1]++;
    for (int a = 0; a < na; a++) s[a + 1] += s[a];
    int *l = ns_xmalloc(((size_t)s[na] + 1) * sizeof(int));
    int *fill = ns_xmalloc(((size_t)na + 1) * sizeof(int));
    memcpy(fill, s, (size_t)na * sizeof(int));
    for (int i = 0; i < g->n; i++)
        for (int k = 0; k < g->lm[i].natoms; k++) l[fill[g->lm_atoms[g->lm[i].atom_off + k]]++] = i;
    free(fill);
    g->atom_lm_start = s;
    g->atom_lm = l;
}

void ns_landmarks_opts_default(ns_landmarks_opts *o)
{
    o->disjunctive = true;
    o->natural_orders = true;
    o->time_limit = 0;
}

ns_status ns_landmarks_build(ns_landmarks *g, const ns_task *t, const ns_landmarks_opts *o)
{
    ns_landmarks_opts def;
    if (!o) {
        ns_landmarks_opts_default(&def);
        o = &def;
    }
    memset(g, 0, sizeof *g);
    builder b;
    builder_init(&b, t, o);
    ns_status st = generate(&b);
    if (st != NS_OK) {
        builder_free(&b);
        return st;
    }
    if (o->natural_orders) natural_orders(&b);
    g->task = t;
    g->n = (int)b.nlm;
    g->unsolvable = b.unsolvable;
    g->work = b.work;
    uint8_t *keep = ns_xmalloc(b.nord + 1);
    memset(keep, 1, b.nord + 1);
    g->topo = ns_xmalloc(((size_t)g->n + 1) * sizeof(int));
    break_cycles(g->n, b.ord, (int)b.nord, keep, g->topo);
    g->orders = ns_xmalloc((b.nord + 1) * sizeof(ns_lm_order));
    for (size_t e = 0; e < b.nord; e++)
        if (keep[e]) g->orders[g->norders++] = b.ord[e];
    free(keep);
    g->lm = b.lm, b.lm = NULL;
    g->lm_atoms = b.atoms, b.atoms = NULL;
    g->first_ach = b.first, b.first = NULL;
    if (!g->lm) g->lm = ns_xmalloc(sizeof(ns_landmark));
    if (!g->lm_atoms) g->lm_atoms = ns_xmalloc(sizeof(int));
    if (!g->first_ach) g->first_ach = ns_xmalloc(sizeof(int));
    builder_free(&b);
    pred_index(g, false, &g->pred_start, &g->pred);
    pred_index(g, true, &g->gn_start, &g->gn);
    atom_index(g);
    g->nwords = (g->n + 63) / 64 > 0 ? (g->n + 63) / 64 : 1;
    return NS_OK;
}

void ns_landmarks_free(ns_landmarks *g)
{
    free(g->lm), free(g->lm_atoms), free(g->first_ach), free(g->orders);
    free(g->pred_start), free(g->pred), free(g->gn_start), free(g->gn), free(g->topo);
    free(g->atom_lm_start), free(g->atom_lm);
    memset(g, 0, sizeof *g);
}

bool ns_landmark_holds(const ns_landmarks *g, int i, const ns_word *s)
{
    const ns_landmark *l = &g->lm[i];
    for (int k = 0; k < l->natoms; k++)
        if (ns_bit_get(s, g->lm_atoms[l->atom_off + k])) return true;
    return false;
}

void ns_landmark_str(const ns_landmarks *g, int i, ns_buf *b)
{
    const ns_landmark *l = &g->lm[i];
    if (l->natoms > 1) ns_buf_puts(b, "(or");
    for (int k = 0; k < l->natoms; k++) {
        if (l->natoms > 1) ns_buf_putc(b, ' ');
        ns_task_atom_str(g->task, g->lm_atoms[l->atom_off + k], b);
    }
    if (l->natoms > 1) ns_buf_putc(b, ')');
}

int ns_landmarks_find(const ns_landmarks *g, const int *atoms, int n)
{
    if (n <= 0) return -1;
    int a0 = atoms[0];
    if (a0 < 0 || a0 >= g->task->natoms) return -1;
    for (int j = g->atom_lm_start[a0]; j < g->atom_lm_start[a0 + 1]; j++) {
        const ns_landmark *l = &g->lm[g->atom_lm[j]];
        if (l->natoms != n) continue;
        bool all = true;
        for (int k = 0; k < n && all; k++) {
            bool in = false;
            for (int m = 0; m < n && !in; m++) in = g->lm_atoms[l->atom_off + m] == atoms[k];
            all = in;
        }
        if (all) return g->atom_lm[j];
    }
    return -1;
}

void ns_landmarks_progress(const ns_landmarks *g, const ns_word *parent_acc, const ns_word *s, ns_word *child_acc)
{
    if (child_acc != parent_acc) memcpy(child_acc, parent_acc, (size_t)g->nwords * sizeof(ns_word));
    for (int k = 0; k < g->n; k++) {
        int i = g->topo[k];
        if (ns_bit_get(child_acc, i) || !ns_landmark_holds(g, i, s)) continue;
        bool ok = true;
        for (int e = g->pred_start[i]; e < g->pred_start[i + 1] && ok; e++) ok = ns_bit_get(child_acc, g->pred[e]);
        if (ok) ns_bit_set(child_acc, i);
    }
}

void ns_landmarks_initial(const ns_landmarks *g, const ns_word *s, ns_word *acc)
{
    memset(acc, 0, (size_t)g->nwords * sizeof(ns_word));
    ns_landmarks_progress(g, acc, s, acc);
}

void ns_lmcount_init(ns_lmcount *h, const ns_landmarks *g)
{
    h->g = g;
    h->future = ns_xcalloc((size_t)g->n + 1, 1);
}

void ns_lmcount_free(ns_lmcount *h)
{
    free(h->future);
    h->future = NULL;
}

int ns_lmcount_eval(ns_lmcount *h, const ns_word *acc, const ns_word *s)
{
    const ns_landmarks *g = h->g;
    memset(h->future, 0, (size_t)g->n + 1);
    if (g->unsolvable) return NS_H_INF;
    if (ns_task_is_goal(g->task, s)) return 0;
    int count = 0;
    for (int i = 0; i < g->n; i++)
        if (!ns_bit_get(acc, i)) h->future[i] = 1, count++;
    for (int i = 0; i < g->n; i++) {
        if (ns_bit_get(acc, i)) continue;
        for (int e = g->gn_start[i]; e < g->gn_start[i + 1]; e++) {
            int p = g->gn[e];
            if (!h->future[p] && !ns_landmark_holds(g, p, s)) h->future[p] = 1, count++;
        }
    }
    for (int i = 0; i < g->n; i++)
        if (g->lm[i].goal && !h->future[i] && !ns_landmark_holds(g, i, s)) h->future[i] = 1, count++;
    return count > 0 ? count : 1; /* a non-goal state (e.g. a negative goal violated) */
}
