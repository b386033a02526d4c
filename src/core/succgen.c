/* succgen.c — applicable-operator lists from decision trees over atoms, one per key atom.
 *
 * Each operator's conditions (positive and negative fluent preconditions) are
 * sorted by atom id.  Building a node for a set of operators, each with a
 * cursor into its conditions: operators whose cursor is at the end are
 * immediate; otherwise the node tests the smallest atom a among the cursors'
 * next conditions, and the operators whose next condition is on a go to the
 * true or false child (cursor advanced), the rest to the don't-care child.
 * Every node advances at least one cursor, so the tree has at most
 * (total conditions + 1) nodes.  Building is iterative (explicit work list);
 * so is the walk, so deep trees need no deep C stack. */
#include "nextstate/core/succgen.h"

#include <stdlib.h>
#include <string.h>

typedef struct cond {
    int atom;
    int pos; /* 1: must hold, 0: must not hold */
} cond;

typedef struct build_job {
    int node;       /* node to fill */
    int start, len; /* the job's operators: work[start … start+len) */
} build_job;

static int cmp_cond(const void *x, const void *y)
{
    const cond *a = x, *b = y;
    if (a->atom != b->atom) return (a->atom > b->atom) - (a->atom < b->atom);
    return (a->pos > b->pos) - (a->pos < b->pos);
}

void ns_succgen_init(ns_succgen *g, const ns_task *t) { ns_succgen_init_subset(g, t, NULL); }

typedef struct builder {
    const cond *conds;
    const int *cstart, *ncnd;
    int *cur, *tmp;
    ns_succgen_node *nodes;
    size_t capn;
    int nnodes;
    int *imm;
    size_t capi;
    int nimm;
    build_job *jobs;
    size_t capj;
    int njobs;
    int *sw;
    size_t caps;
    int nsw;
} builder;

static int new_node(builder *b)
{
    NS_GROW(b->nodes, b->capn, (size_t)b->nnodes + 1);
    b->nodes[b->nnodes] = (ns_succgen_node){-1, -1, -1, -1, 0, 0, 0, 0, 0};
    return b->nnodes++;
}

/* Builds the tree of ops[0 … len) (ascending ids; reordered in place);
 * returns its root. */
static int build_tree(builder *b, int *ops, int len)
{
    int root = new_node(b);
    NS_GROW(b->jobs, b->capj, (size_t)b->njobs + 1);
    b->jobs[b->njobs++] = (build_job){root, 0, len};
    const cond *conds = b->conds;
    const int *cstart = b->cstart, *ncnd = b->ncnd;
    int *cur = b->cur, *tmp = b->tmp;
    while (b->njobs > 0) {
        build_job j = b->jobs[--b->njobs];
        int *o = ops + j.start;
        /* immediate operators first (kept ascending), then the smallest next atom */
        int nim = 0, atom = -1, ntrue = 0, nfalse = 0;
        for (int q = 0; q < j.len; q++) {
            int op = o[q];
            if (cur[op] == ncnd[op]) nim++;
            else {
                int a = conds[cstart[op] + cur[op]].atom;
                if (atom < 0 || a < atom) atom = a;
            }
        }
        for (int q = 0; q < j.len; q++) {
            int op = o[q];
            if (cur[op] == ncnd[op]) continue;
            const cond *c = &conds[cstart[op] + cur[op]];
            if (c->atom == atom) {
                if (c->pos) ntrue++;
                else nfalse++;
            }
        }
        int ndc = j.len - nim - ntrue - nfalse;
        /* all remaining operators next need an atom true: a switch node
         * over those atoms, when their id range is not much wider than
         * their number */
        int sw_lo = -1, sw_hi = -1, nnext = 0;
        bool all_pos = nim < j.len;
        for (int q = 0; q < j.len && all_pos; q++) {
            int op = o[q];
            if (cur[op] == ncnd[op]) continue;
            const cond *c = &conds[cstart[op] + cur[op]];
            if (!c->pos) all_pos = false;
            if (sw_lo < 0 || c->atom < sw_lo) sw_lo = c->atom;
            if (c->atom > sw_hi) sw_hi = c->atom;
            nnext++;
        }
        if (all_pos && ndc > 0 && (sw_hi - sw_lo + 1) <= 4 * nnext + 64) {
            /* immediate first, then the others grouped by next atom (stable) */
            int len = sw_hi - sw_lo + 1;
            int *cnt = ns_xcalloc((size_t)len + 1, sizeof(int));
            for (int q = 0; q < j.len; q++) {
                int op = o[q];
                if (cur[op] != ncnd[op]) cnt[conds[cstart[op] + cur[op]].atom - sw_lo + 1]++;
            }
            for (int a = 0; a < len; a++) cnt[a + 1] += cnt[a];
            int *pos = ns_xmalloc(sizeof(int) * ((size_t)len + 1));
            memcpy(pos, cnt, sizeof(int) * ((size_t)len + 1));
            int o_im = 0;
            for (int q = 0; q < j.len; q++) {
                int op = o[q];
                if (cur[op] == ncnd[op]) tmp[o_im++] = op;
                else {
                    int a = conds[cstart[op] + cur[op]].atom - sw_lo;
                    cur[op]++;
                    tmp[nim + pos[a]++] = op;
                }
            }
            memcpy(o, tmp, sizeof(int) * (size_t)j.len);
            NS_GROW(b->imm, b->capi, (size_t)b->nimm + (size_t)nim + 1);
            b->nodes[j.node].imm_start = b->nimm;
            b->nodes[j.node].nimm = nim;
            memcpy(b->imm + b->nimm, o, sizeof(int) * (size_t)nim);
            b->nimm += nim;
            b->nodes[j.node].atom = -1;
            b->nodes[j.node].sw_lo = sw_lo;
            b->nodes[j.node].sw_len = len;
            NS_GROW(b->sw, b->caps, (size_t)b->nsw + (size_t)len + 1);
            int off = b->nsw;
            b->nodes[j.node].sw_off = off;
            b->nsw += len;
            for (int a = 0; a < len; a++) {
                int n_a = cnt[a + 1] - cnt[a];
                b->sw[off + a] = -1;
                if (n_a == 0) continue;
                int child = new_node(b);
                b->sw[off + a] = child;
                NS_GROW(b->jobs, b->capj, (size_t)b->njobs + 1);
                b->jobs[b->njobs++] = (build_job){child, j.start + nim + cnt[a], n_a};
            }
            free(pos);
            free(cnt);
            continue;
        }
        /* partition stably: immediate | true | false | don't care */
        int o_im = 0, o_t = nim, o_f = nim + ntrue, o_d = nim + ntrue + nfalse;
        for (int q = 0; q < j.len; q++) {
            int op = o[q];
            if (cur[op] == ncnd[op]) {
                tmp[o_im++] = op;
                continue;
            }
            const cond *c = &conds[cstart[op] + cur[op]];
            if (c->atom == atom) {
                cur[op]++;
                tmp[c->pos ? o_t++ : o_f++] = op;
            } else {
                tmp[o_d++] = op;
            }
        }
        memcpy(o, tmp, sizeof(int) * (size_t)j.len);
        NS_GROW(b->imm, b->capi, (size_t)b->nimm + (size_t)nim + 1);
        b->nodes[j.node].imm_start = b->nimm;
        b->nodes[j.node].nimm = nim;
        memcpy(b->imm + b->nimm, o, sizeof(int) * (size_t)nim);
        b->nimm += nim;
        b->nodes[j.node].atom = atom;
        int parts[3][2] = {{nim, ntrue}, {nim + ntrue, nfalse}, {nim + ntrue + nfalse, ndc}};
        for (int p = 0; p < 3; p++) {
            if (parts[p][1] == 0) continue;
            int child = new_node(b);
            if (p == 0) b->nodes[j.node].on_true = child;
            else if (p == 1) b->nodes[j.node].on_false = child;
            else b->nodes[j.node].dont_care = child;
            NS_GROW(b->jobs, b->capj, (size_t)b->njobs + 1);
            b->jobs[b->njobs++] = (build_job){child, j.start + parts[p][0], parts[p][1]};
        }
    }
    return root;
}

/* -(op + 2) when child is a leaf holding one operator alone, else child */
static int leaf_op(const builder *b, int child)
{
    if (child < 0) return child;
    const ns_succgen_node *c = &b->nodes[child];
    if (c->atom >= 0 || c->sw_len > 0 || c->dont_care >= 0 || c->nimm != 1) return child;
    return -(b->imm[c->imm_start] + 2);
}

void ns_succgen_init_subset(ns_succgen *g, const ns_task *t, const bool *keep)
{
    memset(g, 0, sizeof *g);
    g->task = t;
    /* key atoms: a positive precondition per operator, the one least likely
     * true (below), then the least used, then the least loaded so far: a
     * state walks the trees of its true keys, so keys rarely true mean few
     * walks (grid: at-robot(x), not open(y), keys a move) */
    int *key_of = ns_xmalloc(sizeof(int) * ((size_t)t->nops + 1));
    int *load = ns_xcalloc((size_t)t->natoms + 1, sizeof(int));
    int *uses = ns_xcalloc((size_t)t->natoms + 1, sizeof(int));
    for (int i = 0; i < t->nops; i++) {
        if (keep && !keep[i]) continue;
        const int *pre = ns_op_pre(t, &t->ops[i]);
        for (int j = 0; j < t->ops[i].npre; j++) uses[pre[j]]++;
    }
    /* how often an atom is likely true: the share of its predicate's atoms
     * that hold initially (at-robot(x): one cell of all; open(x): most) */
    int npred = 0;
    for (int a = 0; a < t->natoms; a++)
        if (t->atoms[a].pred >= npred) npred = t->atoms[a].pred + 1;
    long *pred_true = ns_xcalloc((size_t)npred + 1, sizeof(long)), *pred_all = ns_xcalloc((size_t)npred + 1, sizeof(long));
    for (int a = 0; a < t->natoms; a++) {
        pred_all[t->atoms[a].pred]++;
        pred_true[t->atoms[a].pred] += ns_bit_get(t->init, a);
    }
    /* conditions of every kept operator but its key, sorted by atom */
    int *cstart = ns_xmalloc(sizeof(int) * ((size_t)t->nops + 1));
    size_t ncond = 0;
    for (int i = 0; i < t->nops; i++)
        if (!keep || keep[i]) ncond += (size_t)t->ops[i].npre + (size_t)t->ops[i].npreneg;
    cond *conds = ns_xmalloc(sizeof(cond) * (ncond + 1));
    int *ncnd = ns_xcalloc((size_t)t->nops + 1, sizeof(int));
    size_t k = 0;
    int nkept = 0;
    for (int i = 0; i < t->nops; i++) {
        cstart[i] = (int)k;
        key_of[i] = -2;
        if (keep && !keep[i]) continue;
        const ns_op *o = &t->ops[i];
        const int *pre = ns_op_pre(t, o), *neg = ns_op_preneg(t, o);
        int best = -1;
        for (int j = 0; j < o->npre; j++) {
            int a = pre[j];
            if (best >= 0) {
                int pa = t->atoms[a].pred, pb = t->atoms[best].pred;
                long x = pred_true[pa] * pred_all[pb], y = pred_true[pb] * pred_all[pa];
                if (x != y ? x > y : uses[a] != uses[best] ? uses[a] > uses[best] : load[a] >= load[best]) continue;
            }
            best = a;
        }
        key_of[i] = best;
        if (best >= 0) load[best]++;
        size_t k0 = k;
        for (int j = 0; j < o->npre; j++)
            if (pre[j] != best) conds[k++] = (cond){pre[j], 1};
        for (int j = 0; j < o->npreneg; j++) conds[k++] = (cond){neg[j], 0};
        qsort(conds + k0, k - k0, sizeof(cond), cmp_cond);
        /* drop repeated conditions (an atom listed twice with one sign) */
        size_t w = k0;
        for (size_t r = k0; r < k; r++)
            if (w == k0 || conds[r].atom != conds[w - 1].atom || conds[r].pos != conds[w - 1].pos) conds[w++] = conds[r];
        k = w;
        ncnd[i] = (int)(k - k0);
        nkept++;
    }
    g->nkept = nkept;
    /* operators grouped by key (ascending ids within a group); free ones last */
    int *start = ns_xcalloc((size_t)t->natoms + 2, sizeof(int));
    for (int a = 0; a < t->natoms; a++) start[a + 1] = start[a] + load[a];
    int *work = ns_xmalloc(sizeof(int) * ((size_t)nkept + 1));
    int nfree = 0, nkeyed = start[t->natoms];
    memset(load, 0, sizeof(int) * ((size_t)t->natoms + 1));
    for (int i = 0; i < t->nops; i++) {
        if (key_of[i] == -2) continue;
        if (key_of[i] < 0) work[nkeyed + nfree++] = i;
        else work[start[key_of[i]] + load[key_of[i]]++] = i;
    }
    builder b = {0};
    b.conds = conds;
    b.cstart = cstart;
    b.ncnd = ncnd;
    b.cur = ns_xcalloc((size_t)t->nops + 1, sizeof(int));
    b.tmp = ns_xmalloc(sizeof(int) * ((size_t)nkept + 1));
    g->key_root = ns_xmalloc(sizeof(int) * ((size_t)t->natoms + 1));
    g->key_mask = ns_xcalloc((size_t)t->nwords + 1, sizeof(ns_word));
    for (int a = 0; a < t->natoms; a++) {
        g->key_root[a] = -1;
        if (load[a] == 0) continue;
        g->key_root[a] = build_tree(&b, work + start[a], load[a]);
        ns_bit_set(g->key_mask, a);
    }
    g->free_root = nfree > 0 ? build_tree(&b, work + nkeyed, nfree) : -1;
    /* a true, false or switch child that is a leaf with one operator and
     * nothing below becomes -(op + 2): the walk marks it without a visit */
    for (int n = 0; n < b.nnodes; n++) {
        ns_succgen_node *nd = &b.nodes[n];
        nd->on_true = leaf_op(&b, nd->on_true);
        nd->on_false = leaf_op(&b, nd->on_false);
        for (int a = 0; a < nd->sw_len; a++) b.sw[nd->sw_off + a] = leaf_op(&b, b.sw[nd->sw_off + a]);
    }
    g->nodes = b.nodes ? b.nodes : ns_xmalloc(sizeof(ns_succgen_node));
    g->nnodes = b.nnodes;
    g->imm_ops = b.imm ? b.imm : ns_xmalloc(sizeof(int));
    g->sw_child = b.sw ? b.sw : ns_xmalloc(sizeof(int));
    free(b.jobs);
    free(b.tmp);
    free(b.cur);
    free(work);
    free(start);
    free(ncnd);
    free(conds);
    free(cstart);
    free(uses);
    free(load);
    free(pred_true);
    free(pred_all);
    free(key_of);
}

void ns_succgen_free(ns_succgen *g)
{
    free(g->nodes);
    free(g->imm_ops);
    free(g->key_root);
    free(g->sw_child);
    free(g->key_mask);
    memset(g, 0, sizeof *g);
}

#define STACK_MARK_WORDS 2048 /* operator bitsets up to 131072 ops live on the C stack */
#define STACK_WALK 256

typedef struct walk {
    uint64_t *mark;
    int lo, hi, nmarked;
    int *stack;
    size_t cap;
    int *stack_local;
} walk;

static inline void mark_op(walk *k, int op)
{
    int w = op >> 6;
    if (k->nmarked == 0) {
        k->mark[w] = 0;
        k->lo = k->hi = w;
    }
    /* first touch of words outside [lo, hi]: clear the gap */
    while (w < k->lo) k->mark[--k->lo] = 0;
    while (w > k->hi) k->mark[++k->hi] = 0;
    k->mark[w] |= (uint64_t)1 << (op & 63);
    k->nmarked++;
}

/* Marks the operators of the tree at root whose conditions s satisfies. */
static inline void push(walk *k, int *sp, int node)
{
    if ((size_t)*sp == k->cap) {
        size_t ncap = k->cap * 2;
        int *ns = ns_xmalloc(sizeof(int) * ncap);
        memcpy(ns, k->stack, sizeof(int) * (size_t)*sp);
        if (k->stack != k->stack_local) free(k->stack);
        k->stack = ns;
        k->cap = ncap;
    }
    k->stack[(*sp)++] = node;
}

static void walk_tree(walk *k, const ns_succgen *g, int node, const ns_word *s)
{
    const ns_succgen_node *nodes = g->nodes;
    const int *imm = g->imm_ops;
    int sp = 0;
    for (;;) {
        /* walk down: push the branch taken, continue along don't-care */
        while (node >= 0) {
            const ns_succgen_node *nd = &nodes[node];
            for (int q = 0; q < nd->nimm; q++) mark_op(k, imm[nd->imm_start + q]);
            if (nd->atom >= 0) {
                int branch = ns_bit_get(s, nd->atom) ? nd->on_true : nd->on_false;
                if (branch >= 0) push(k, &sp, branch);
                else if (branch < -1) mark_op(k, -branch - 2);
            } else if (nd->sw_len > 0) {
                /* the true atoms of the range that have a child */
                const int *child = g->sw_child + nd->sw_off - nd->sw_lo;
                int lo = nd->sw_lo, end = nd->sw_lo + nd->sw_len;
                for (int w = lo >> 6; w <= (end - 1) >> 6; w++) {
                    ns_word bits = s[w];
                    if (w == lo >> 6) bits &= ~(ns_word)0 << (lo & 63);
                    if (w == (end - 1) >> 6 && (end & 63)) bits &= ~(~(ns_word)0 << (end & 63));
                    while (bits) {
                        int a = w * 64 + __builtin_ctzll(bits);
                        bits &= bits - 1;
                        if (child[a] >= 0) push(k, &sp, child[a]);
                        else if (child[a] < -1) mark_op(k, -child[a] - 2);
                    }
                }
            }
            node = nd->dont_care;
        }
        if (sp == 0) break;
        node = k->stack[--sp];
    }
}

int ns_succgen_applicable(const ns_succgen *g, const ns_word *s, int *out)
{
    const ns_task *t = g->task;
    if (g->nnodes == 0) return 0;
    const int nmw = (t->nops + 63) / 64;
    uint64_t mark_local[STACK_MARK_WORDS];
    int stack_local[STACK_WALK];
    walk k = {nmw <= STACK_MARK_WORDS ? mark_local : ns_xmalloc(sizeof(uint64_t) * (size_t)nmw), 0, -1, 0,
              stack_local, STACK_WALK, stack_local};
    if (g->free_root >= 0) walk_tree(&k, g, g->free_root, s);
    for (int w = 0; w < t->nwords; w++) {
        ns_word bits = s[w] & g->key_mask[w];
        while (bits) {
            int atom = w * 64 + __builtin_ctzll(bits);
            bits &= bits - 1;
            walk_tree(&k, g, g->key_root[atom], s);
        }
    }
    int n = 0;
    if (k.nmarked > 0)
        for (int w = k.lo; w <= k.hi; w++) {
            uint64_t bits = k.mark[w];
            while (bits) {
                out[n++] = w * 64 + __builtin_ctzll(bits);
                bits &= bits - 1;
            }
        }
    if (k.stack != stack_local) free(k.stack);
    if (k.mark != mark_local) free(k.mark);
    return n;
}
