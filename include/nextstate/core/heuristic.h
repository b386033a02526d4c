/* heuristic.h — delete-relaxation heuristics over a grounded task:
 * h^max (admissible), h^add, h^FF (relaxed plan from h^add best supporters),
 * LM-cut (admissible), and blind (0 at goals, min operator cost elsewhere).
 * Negative preconditions and negative goals are ignored by the relaxation,
 * which keeps h^max and LM-cut admissible. */
#ifndef NEXTSTATE_HEURISTIC_H
#define NEXTSTATE_HEURISTIC_H

#include "nextstate/core/task.h"

#define NS_H_INF INT32_MAX

typedef enum ns_heuristic_kind {
    NS_H_BLIND,
    NS_H_MAX,
    NS_H_ADD,
    NS_H_FF,
    NS_H_LMCUT
} ns_heuristic_kind;

typedef struct ns_heuristic ns_heuristic; /* opaque; owns its scratch */

/* Returns NULL-free handle; kind selects the function. */
ns_heuristic *ns_heuristic_new(const ns_task *t, ns_heuristic_kind kind);
void ns_heuristic_free(ns_heuristic *h);
/* h(s), or NS_H_INF when the relaxation proves s a dead end. */
int ns_heuristic_eval(ns_heuristic *h, const ns_word *s);
/* Helpful actions of the state last evaluated with NS_H_FF (s must be that
 * state and its value finite): the relaxed plan's operators that are
 * applicable in s, ascending, written into ops (capacity task->nops).
 * Returns their number; 0 for the other kinds. */
int ns_heuristic_preferred(const ns_heuristic *h, const ns_word *s, int *ops);

/* Bytes of scratch held (for memory limits). */
size_t ns_heuristic_bytes(const ns_heuristic *h);

/* Name <-> kind ("blind", "hmax", "hadd", "ff", "lmcut"); -1 if unknown. */
int ns_heuristic_parse(const char *name);
const char *ns_heuristic_name(ns_heuristic_kind k);

#endif
