/* succgen.h — successor generator: lists the applicable operators of a state.
 * Built once per task: every operator is filed under one key atom, the
 * positive precondition least likely true (the smallest share of its
 * predicate's atoms true initially; ties: the least used); the operators of
 * a key form a decision tree over their other conditions (as Fast Downward's successor generator): each
 * node tests one atom and has three children — the operators that need it
 * true, those that need it false, and those that do not mention it;
 * operators whose conditions are all tested sit at the node.  When all the
 * operators of a node next need some atom true, the node is a switch over
 * those atoms' id range instead (as FD's switch over a variable's values).
 * A state walks
 * the trees of its true key atoms (and that of the operators with no
 * positive precondition) and reaches only the operators whose conditions it
 * satisfies: nothing inapplicable is checked.  Applicable operators are marked in a
 * bitset over operator ids and read back in ascending order (no sort). */
#ifndef NEXTSTATE_SUCCGEN_H
#define NEXTSTATE_SUCCGEN_H

#include "nextstate/core/task.h"

typedef struct ns_succgen_node {
    int atom;             /* atom tested; -1 at a leaf */
    int on_true, on_false; /* children (-1: none; -(op + 2): a leaf holding op alone) */
    int dont_care;        /* child for operators without the atom (-1: none) */
    int imm_start, nimm;  /* operators fully tested here: imm_ops[imm_start …] */
    /* a switch node (atom -1, sw_len > 0): every operator below needs one
     * atom of [sw_lo, sw_lo + sw_len) true, the child for atom a being
     * sw_child[sw_off + a − sw_lo] (-1: none; -(op + 2): op alone); the walk visits only the
     * children of the state's true atoms in the range */
    int sw_lo, sw_len, sw_off;
} ns_succgen_node;

typedef struct ns_succgen {
    const ns_task *task;
    ns_succgen_node *nodes;
    int nnodes;
    int *key_root;     /* [natoms]: root of the tree of operators keyed on the atom, or -1 */
    ns_word *key_mask; /* [nwords]: atoms with a tree */
    int free_root;     /* tree of operators without a positive precondition, or -1 */
    int *imm_ops;
    int *sw_child;
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
