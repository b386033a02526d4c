/* succgen.c — applicable-operator lists by key precondition. */
#include "nextstate/core/succgen.h"

#include <stdlib.h>
#include <string.h>

void ns_succgen_init(ns_succgen *g, const ns_task *t) { ns_succgen_init_subset(g, t, NULL); }

void ns_succgen_init_subset(ns_succgen *g, const ns_task *t, const bool *keep)
{
    memset(g, 0, sizeof *g);
    g->task = t;
    int *key_of = ns_xmalloc(sizeof(int) * ((size_t)t->nops + 1));
    int *load = ns_xcalloc((size_t)t->natoms + 1, sizeof(int));
    /* how often each atom is a precondition: prefer rare atoms as keys */
    int *uses = ns_xcalloc((size_t)t->natoms + 1, sizeof(int));
    for (int i = 0; i < t->nops; i++) {
        if (keep && !keep[i]) continue;
        const int *pre = ns_op_pre(t, &t->ops[i]);
        for (int j = 0; j < t->ops[i].npre; j++) uses[pre[j]]++;
    }
    for (int i = 0; i < t->nops; i++) {
        key_of[i] = -2; /* left out */
        if (keep && !keep[i]) continue;
        const ns_op *o = &t->ops[i];
        const int *pre = ns_op_pre(t, o);
        int best = -1;
        for (int j = 0; j < o->npre; j++)
            if (best < 0 || uses[pre[j]] < uses[best] || (uses[pre[j]] == uses[best] && load[pre[j]] < load[best]))
                best = pre[j];
        key_of[i] = best;
        if (best >= 0) load[best]++;
        else g->nfree++;
    }
    g->key_start = ns_xcalloc((size_t)t->natoms + 2, sizeof(int));
    for (int a = 0; a < t->natoms; a++) g->key_start[a + 1] = g->key_start[a] + load[a];
    g->key_ops = ns_xmalloc(sizeof(int) * ((size_t)t->nops + 1));
    g->free_ops = ns_xmalloc(sizeof(int) * ((size_t)g->nfree + 1));
    memset(load, 0, sizeof(int) * ((size_t)t->natoms + 1));
    int nf = 0;
    for (int i = 0; i < t->nops; i++) {
        if (key_of[i] == -2) continue;
        if (key_of[i] < 0) g->free_ops[nf++] = i;
        else g->key_ops[g->key_start[key_of[i]] + load[key_of[i]]++] = i;
    }
    free(key_of);
    free(load);
    free(uses);
}

void ns_succgen_free(ns_succgen *g)
{
    free(g->key_start);
    free(g->key_ops);
    free(g->free_ops);
    memset(g, 0, sizeof *g);
}

static void sort_ints(int *a, int n)
{
    for (int i = 1; i < n; i++) {
        int v = a[i], j = i - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
}

static int cmp_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

int ns_succgen_applicable(const ns_succgen *g, const ns_word *s, int *out)
{
    const ns_task *t = g->task;
    int n = 0;
    for (int i = 0; i < g->nfree; i++)
        if (ns_task_applicable(t, g->free_ops[i], s)) out[n++] = g->free_ops[i];
    for (int w = 0; w < t->nwords; w++) {
        ns_word bits = s[w];
        while (bits) {
            int atom = w * 64 + __builtin_ctzll(bits);
            bits &= bits - 1;
            for (int k = g->key_start[atom]; k < g->key_start[atom + 1]; k++) {
                int op = g->key_ops[k];
                if (ns_task_applicable(t, op, s)) out[n++] = op;
            }
        }
    }
    if (n < 32) sort_ints(out, n);
    else qsort(out, (size_t)n, sizeof(int), cmp_int);
    return n;
}
