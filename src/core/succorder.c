/* succorder.c — successor order of the greedy searches (see succorder.h). */
#include "nextstate/core/succorder.h"

#include <stdlib.h>
#include <string.h>
#include "nextstate/util/util.h"

/* qsort has no context argument in C11: the keys being compared. */
typedef struct opkey {
    int op;
    int n;
    const int *pre; /* sorted */
} opkey;

/* More preconditions first; then the sorted lists lexicographically; then
 * operator ids. */
static int cmp_key(const void *a, const void *b)
{
    const opkey *x = a, *y = b;
    if (x->n != y->n) return x->n > y->n ? -1 : 1;
    for (int i = 0; i < x->n; i++)
        if (x->pre[i] != y->pre[i]) return x->pre[i] < y->pre[i] ? -1 : 1;
    return (x->op > y->op) - (x->op < y->op);
}

void ns_succorder_init(ns_succorder *so, const ns_task *t)
{
    const int no = t->nops;
    so->rank = ns_xmalloc(((size_t)no + 1) * sizeof(int));
    so->op = ns_xmalloc(((size_t)no + 1) * sizeof(int));
    size_t total = 0;
    for (int o = 0; o < no; o++) total += (size_t)t->ops[o].npre;
    int *pool = ns_xmalloc((total + 1) * sizeof(int));
    opkey *keys = ns_xmalloc(((size_t)no + 1) * sizeof(opkey));
    size_t off = 0;
    for (int o = 0; o < no; o++) {
        const ns_op *op = &t->ops[o];
        memcpy(pool + off, ns_op_pre(t, op), (size_t)op->npre * sizeof(int));
        ns_sort_int(pool + off, op->npre);
        keys[o] = (opkey){o, op->npre, pool + off};
        off += (size_t)op->npre;
    }
    qsort(keys, (size_t)no, sizeof(opkey), cmp_key);
    for (int i = 0; i < no; i++) {
        so->op[i] = keys[i].op;
        so->rank[keys[i].op] = i;
    }
    free(keys);
    free(pool);
}

void ns_succorder_free(ns_succorder *so)
{
    free(so->rank);
    free(so->op);
    memset(so, 0, sizeof *so);
}

void ns_succorder_sort(const ns_succorder *so, int *ops, int n)
{
    for (int i = 0; i < n; i++) ops[i] = so->rank[ops[i]];
    ns_sort_int(ops, n);
    for (int i = 0; i < n; i++) ops[i] = so->op[ops[i]];
}
