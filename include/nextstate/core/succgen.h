/* succgen.h — successor generator: lists the applicable operators of a state.
 * Built once per task: every operator is filed under one of its positive
 * preconditions (the one whose atom is least often used as a key), so a
 * state's scan touches only operators keyed on its true atoms; the rest of
 * each candidate's preconditions are checked bit by bit. */
#ifndef NEXTSTATE_SUCCGEN_H
#define NEXTSTATE_SUCCGEN_H

#include "nextstate/core/task.h"

typedef struct ns_succgen {
    const ns_task *task;
    int *key_start; /* natoms+1 offsets into key_ops */
    int *key_ops;   /* operators grouped by key atom */
    int *free_ops;  /* operators with no positive precondition */
    int nfree;
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
