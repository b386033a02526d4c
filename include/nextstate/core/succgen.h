/* succgen.h — successor generator: lists the applicable operators of a state.
 * Built once per task as a decision tree over precondition atoms (as Fast
 * Downward's): each node tests one atom and has three children — the
 * operators that need it true, those that need it false, and those that do
 * not mention it; operators whose conditions are all tested sit at the node.
 * A state's walk reaches only operators whose conditions it satisfies, so
 * nothing inapplicable is checked.  Applicable operators are marked in a
 * bitset over operator ids and read back in ascending order (no sort). */
#ifndef NEXTSTATE_SUCCGEN_H
#define NEXTSTATE_SUCCGEN_H

#include "nextstate/core/task.h"

typedef struct ns_succgen_node {
    int atom;             /* atom tested; -1 at a leaf */
    int on_true, on_false; /* children (-1: none) */
    int dont_care;        /* child for operators without the atom (-1: none) */
    int imm_start, nimm;  /* operators fully tested here: imm_ops[imm_start …] */
} ns_succgen_node;

typedef struct ns_succgen {
    const ns_task *task;
    ns_succgen_node *nodes; /* nodes[0] is the root (when nnodes > 0) */
    int nnodes;
    int *imm_ops;
    int nkept; /* operators in the tree */
} ns_succgen;

void ns_succgen_init(ns_succgen *g, const ns_task *t);
/* The same over the operators with keep[op] true only (keep may be NULL:
 * all operators). */
void ns_succgen_init_subset(ns_succgen *g, const ns_task *t, const bool *keep);
void ns_succgen_free(ns_succgen *g);
/* Writes the applicable operators of s, in ascending id (= name) order, into
 * out (capacity task->nops) and returns their number. */
int ns_succgen_applicable(const ns_succgen *g, const ns_word *s, int *out);

#endif
