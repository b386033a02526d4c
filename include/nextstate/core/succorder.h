/* succorder.h — the order in which greedy searches (GBFS, lazy, LAMA)
 * generate and queue a state's successors, which decides their ties: their
 * open lists are FIFO among equal keys, and with h^FF large plateaus of
 * equal keys are common.
 *
 * The order: operators with more positive fluent preconditions first; among
 * equally many, their sorted precondition atom ids compared
 * lexicographically (Fast Downward generates successors from a decision tree
 * over operators sorted that way, by variable); then operator ids.  A more
 * specific operator thus comes before one whose conditions are a subset of
 * its own.  Before issue #16 successors came in operator-id order, i.e.
 * alphabetically by name, which on childsnack put serve_sandwich(s, c, t, p)
 * before serve_sandwich_no_gluten(s, c', t, p) (which also needs
 * no_gluten_sandwich(s)): the searches first fed gluten-free sandwiches to
 * children who are not allergic, a dead end h^FF does not see (its
 * relaxation serves every allergic child from one gluten-free sandwich), and
 * LAMA solved 5 of 25 IPC 2023 training problems (p50–p98, 5 s) where Fast
 * Downward's lama-first solves 18; in this order 16 or 17 (one finishes at
 * the limit), mostly in about FD's expansions; GBFS 8 -> 15, lazy 9 -> 15.
 * Plain FD order (fewest conditions first when one list is a prefix of another) did as well on childsnack but cost expansions in
 * ferry, satellite and rovers (it sails before debarking).
 *
 * The order is a permutation of operator ids computed once per task; sorting
 * a state's applicable operators by it costs O(n log n). */
#ifndef NEXTSTATE_SUCCORDER_H
#define NEXTSTATE_SUCCORDER_H

#include "nextstate/core/task.h"

typedef struct ns_succorder {
    int *rank; /* op -> position in the order */
    int *op;   /* position -> op */
} ns_succorder;

void ns_succorder_init(ns_succorder *so, const ns_task *t);
void ns_succorder_free(ns_succorder *so);
/* Reorders ops[0..n) (distinct operator ids) into successor order. */
void ns_succorder_sort(const ns_succorder *so, int *ops, int n);

#endif
