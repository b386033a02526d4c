/* wordfx.c — operator effects as word masks (see wordfx.h). */
#include "nextstate/core/wordfx.h"

#include <stdlib.h>

/* Adds atom a's bit to the entry of its word (entries ascend by word; the
 * operator's entries so far are e[from … *n)). */
static void add_bit(ns_wordfx_entry *e, int from, int *n, int a, bool on)
{
    int w = a >> 6, k = from;
    while (k < *n && e[k].w < w) k++;
    if (k == *n || e[k].w != w) {
        memmove(e + k + 1, e + k, sizeof *e * (size_t)(*n - k));
        e[k] = (ns_wordfx_entry){~(ns_word)0, 0, w};
        (*n)++;
    }
    ns_word bit = (ns_word)1 << (a & 63);
    if (on) {
        e[k].set |= bit;
        e[k].keep |= bit;
    } else if (!(e[k].set & bit)) {
        e[k].keep &= ~bit;
    }
}

void ns_wordfx_init(ns_wordfx *fx, const ns_task *t)
{
    fx->nops = t->nops;
    fx->nwords = t->nwords;
    fx->off = ns_xmalloc(sizeof(int) * ((size_t)t->nops + 1));
    size_t total = 0;
    for (int i = 0; i < t->nops; i++) total += (size_t)t->ops[i].nadd + (size_t)t->ops[i].ndel;
    fx->e = ns_xmalloc(sizeof(ns_wordfx_entry) * (total + 1));
    int n = 0;
    for (int i = 0; i < t->nops; i++) {
        const ns_op *o = &t->ops[i];
        const int *add = ns_op_add(t, o), *del = ns_op_del(t, o);
        fx->off[i] = n;
        /* adds first, so that a delete of an added atom is no delete */
        for (int k = 0; k < o->nadd; k++) add_bit(fx->e, fx->off[i], &n, add[k], true);
        for (int k = 0; k < o->ndel; k++) add_bit(fx->e, fx->off[i], &n, del[k], false);
    }
    fx->off[t->nops] = n;
}

void ns_wordfx_free(ns_wordfx *fx)
{
    free(fx->off);
    free(fx->e);
    memset(fx, 0, sizeof *fx);
}
