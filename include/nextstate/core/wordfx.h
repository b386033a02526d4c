/* wordfx.h — operator effects as word masks, for the search's hot path.
 *
 * An operator changes few words of a packed state: for each word w it
 * touches, out[w] = (s[w] & keep) | set, keep clearing its deletes and set
 * holding its adds (ns_task_apply's result: deletes that are also added are
 * not deletes).  Applying one is a copy of the state plus one masked update
 * per touched word, and since the registry's hash is a sum over words
 * (ns_word_hash), the successor's hash is the parent's plus, per touched
 * word, the new word's term minus the old one's. */
#ifndef NEXTSTATE_WORDFX_H
#define NEXTSTATE_WORDFX_H

#include <stdint.h>
#include <string.h>
#include "nextstate/core/state.h"
#include "nextstate/core/task.h"

typedef struct ns_wordfx_entry {
    ns_word keep, set;
    int w;
} ns_wordfx_entry;

typedef struct ns_wordfx {
    int nops, nwords;
    int *off;              /* [nops + 1]: op's entries are e[off[op] … off[op+1]) */
    ns_wordfx_entry *e;    /* ascending word within an operator */
} ns_wordfx;

void ns_wordfx_init(ns_wordfx *fx, const ns_task *t);
void ns_wordfx_free(ns_wordfx *fx);
static inline size_t ns_wordfx_bytes(const ns_wordfx *fx)
{
    return sizeof(int) * ((size_t)fx->nops + 1) + sizeof(ns_wordfx_entry) * (size_t)fx->off[fx->nops];
}

/* Writes the successor of s by op to out (out != s) and returns its registry
 * hash, given hs = ns_registry_hash(s). */
static inline uint64_t ns_wordfx_apply(const ns_wordfx *fx, int op, const ns_word *s, uint64_t hs, ns_word *out)
{
    memcpy(out, s, sizeof(ns_word) * (size_t)fx->nwords);
    uint64_t h = hs;
    for (int k = fx->off[op], end = fx->off[op + 1]; k < end; k++) {
        const ns_wordfx_entry *x = &fx->e[k];
        ns_word a = s[x->w], b = (a & x->keep) | x->set;
        out[x->w] = b;
        h += ns_word_hash(x->w, b) - ns_word_hash(x->w, a);
    }
    return h;
}

#endif
