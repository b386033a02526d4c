/* succgen.c — applicable-operator lists from a decision tree over atoms.
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

void ns_succgen_init_subset(ns_succgen *g, const ns_task *t, const bool *keep)
{
    memset(g, 0, sizeof *g);
    g->task = t;
    /* conditions of every kept operator, sorted by atom */
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
        if (keep && !keep[i]) continue;
        const ns_op *o = &t->ops[i];
        const int *pre = ns_op_pre(t, o), *neg = ns_op_preneg(t, o);
        size_t k0 = k;
        for (int j = 0; j < o->npre; j++) conds[k++] = (cond){pre[j], 1};
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
    /* work: operator ids (ascending within every job) and their cursors */
    int *work = ns_xmalloc(sizeof(int) * ((size_t)nkept + 1));
    int *cur = ns_xcalloc((size_t)t->nops + 1, sizeof(int));
    int *tmp = ns_xmalloc(sizeof(int) * ((size_t)nkept + 1));
    int n = 0;
    for (int i = 0; i < t->nops; i++)
        if (!keep || keep[i]) work[n++] = i;
    size_t capn = 0, capi = 0, capj = 0;
    ns_succgen_node *nodes = NULL;
    int *imm = NULL;
    int nnodes = 0, nimm = 0;
    build_job *jobs = NULL;
    int njobs = 0;
    if (nkept > 0) {
        NS_GROW(nodes, capn, 1);
        nodes[nnodes++] = (ns_succgen_node){-1, -1, -1, -1, 0, 0};
        NS_GROW(jobs, capj, 1);
        jobs[njobs++] = (build_job){0, 0, nkept};
    }
    while (njobs > 0) {
        build_job j = jobs[--njobs];
        int *ops = work + j.start;
        /* immediate operators first (kept ascending), then the smallest next atom */
        int nim = 0, atom = -1;
        for (int q = 0; q < j.len; q++) {
            int op = ops[q];
            if (cur[op] == ncnd[op]) nim++;
            else {
                int a = conds[cstart[op] + cur[op]].atom;
                if (atom < 0 || a < atom) atom = a;
            }
        }
        /* partition in place, stably: immediate | true | false | don't care */
        int ntrue = 0, nfalse = 0, ndc = 0;
        for (int q = 0; q < j.len; q++) {
            int op = ops[q];
            if (cur[op] == ncnd[op]) continue;
            const cond *c = &conds[cstart[op] + cur[op]];
            if (c->atom == atom && c->pos) ntrue++;
            else if (c->atom == atom) nfalse++;
            else ndc++;
        }
        int o_im = 0, o_t = nim, o_f = nim + ntrue, o_d = nim + ntrue + nfalse;
        for (int q = 0; q < j.len; q++) {
            int op = ops[q];
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
        memcpy(ops, tmp, sizeof(int) * (size_t)j.len);
        NS_GROW(imm, capi, (size_t)nimm + (size_t)nim + 1);
        nodes[j.node].imm_start = nimm;
        nodes[j.node].nimm = nim;
        memcpy(imm + nimm, ops, sizeof(int) * (size_t)nim);
        nimm += nim;
        nodes[j.node].atom = atom;
        int parts[3][2] = {{nim, ntrue}, {nim + ntrue, nfalse}, {nim + ntrue + nfalse, ndc}};
        for (int p = 0; p < 3; p++) {
            if (parts[p][1] == 0) continue;
            NS_GROW(nodes, capn, (size_t)nnodes + 1);
            int child = nnodes++;
            nodes[child] = (ns_succgen_node){-1, -1, -1, -1, 0, 0};
            if (p == 0) nodes[j.node].on_true = child;
            else if (p == 1) nodes[j.node].on_false = child;
            else nodes[j.node].dont_care = child;
            NS_GROW(jobs, capj, (size_t)njobs + 1);
            jobs[njobs++] = (build_job){child, j.start + parts[p][0], parts[p][1]};
        }
    }
    g->nodes = nodes;
    g->nnodes = nnodes;
    g->imm_ops = imm ? imm : ns_xmalloc(sizeof(int));
    free(jobs);
    free(tmp);
    free(cur);
    free(work);
    free(ncnd);
    free(conds);
    free(cstart);
}

void ns_succgen_free(ns_succgen *g)
{
    free(g->nodes);
    free(g->imm_ops);
    memset(g, 0, sizeof *g);
}

#define STACK_MARK_WORDS 2048  /* operator bitsets up to 131072 ops live on the C stack */
#define STACK_WALK 256

int ns_succgen_applicable(const ns_succgen *g, const ns_word *s, int *out)
{
    const ns_task *t = g->task;
    if (g->nnodes == 0) return 0;
    const int nmw = (t->nops + 63) / 64;
    uint64_t mark_local[STACK_MARK_WORDS];
    uint64_t *mark = nmw <= STACK_MARK_WORDS ? mark_local : ns_xmalloc(sizeof(uint64_t) * (size_t)nmw);
    int stack_local[STACK_WALK];
    int *stack = stack_local;
    size_t cap = STACK_WALK;
    int sp = 0, lo = nmw, hi = -1, nmarked = 0;
    const ns_succgen_node *nodes = g->nodes;
    const int *imm = g->imm_ops;
    int node = 0;
    for (;;) {
        /* walk down: push the branch taken, continue along don't-care */
        while (node >= 0) {
            const ns_succgen_node *nd = &nodes[node];
            for (int q = 0; q < nd->nimm; q++) {
                int op = imm[nd->imm_start + q];
                int w = op >> 6;
                if (nmarked == 0 || w < lo || w > hi) {
                    /* first touch of words outside [lo, hi]: clear the gap */
                    if (nmarked == 0) {
                        mark[w] = 0;
                        lo = hi = w;
                    }
                    while (w < lo) mark[--lo] = 0;
                    while (w > hi) mark[++hi] = 0;
                }
                mark[w] |= (uint64_t)1 << (op & 63);
                nmarked++;
            }
            if (nd->atom >= 0) {
                int branch = ns_bit_get(s, nd->atom) ? nd->on_true : nd->on_false;
                if (branch >= 0) {
                    if ((size_t)sp == cap) {
                        size_t ncap = cap * 2;
                        int *ns = ns_xmalloc(sizeof(int) * ncap);
                        memcpy(ns, stack, sizeof(int) * (size_t)sp);
                        if (stack != stack_local) free(stack);
                        stack = ns;
                        cap = ncap;
                    }
                    stack[sp++] = branch;
                }
            }
            node = nd->dont_care;
        }
        if (sp == 0) break;
        node = stack[--sp];
    }
    int n = 0;
    if (nmarked > 0)
        for (int w = lo; w <= hi; w++) {
            uint64_t bits = mark[w];
            while (bits) {
                out[n++] = w * 64 + __builtin_ctzll(bits);
                bits &= bits - 1;
            }
        }
    if (stack != stack_local) free(stack);
    if (mark != mark_local) free(mark);
    return n;
}
