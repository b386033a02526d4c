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
/* h^add / h^FF: among a fact's equally cheap achievers, the best supporter
 * is the first one the exploration reaches (last false, the default) or the
 * last (last true).  h^add's value is the same; h^FF's relaxed plan, hence
 * its value and its helpful actions, differ.  Nothing favours either in
 * general, and which one guides a greedy search better depends on the
 * domain, by up to 100x in expansions: on IPC 2023 sokoban problems LAMA-first
 * needs far fewer with last, on blocksworld far more (`learn` picks it per
 * domain on held-out training problems, planner.h). */
void ns_heuristic_set_last_supporter(ns_heuristic *h, bool last);
void ns_heuristic_free(ns_heuristic *h);
/* h(s), or NS_H_INF when the relaxation proves s a dead end. */
int ns_heuristic_eval(ns_heuristic *h, const ns_word *s);
/* Helpful actions of the state last evaluated with NS_H_FF (s must be that
 * state and its value finite): the relaxed plan's operators that are
 * applicable in s, ascending, written into ops (capacity task->nops).
 * Returns their number; 0 for the other kinds. */
int ns_heuristic_preferred(const ns_heuristic *h, const ns_word *s, int *ops);

/* ---- evaluator interface: what a search asks of a heuristic ----
 * A heuristic object for ns_search: eval returns h(s) (NS_H_INF for a dead
 * end) and, when pref is not NULL, writes the preferred (helpful) operators
 * of s from the SAME evaluation into pref (ascending, capacity task->nops)
 * and their number into *npref (0 when it has none).  Both must depend on s
 * alone, not on earlier calls: eager GBFS keeps the preferred operators from
 * a state's evaluation at generation and uses them when it expands the
 * state (search.c).  bytes (may be NULL) reports scratch for memory limits;
 * free (may be NULL) releases ctx.  Learned heuristics implement the same
 * three functions. */
typedef struct ns_evaluator {
    void *ctx;
    int (*eval)(void *ctx, const ns_word *s, int *pref, int *npref);
    size_t (*bytes)(const void *ctx);
    void (*free)(void *ctx);
    int unit; /* keys per unit of cost (a learned heuristic's finer keys); 0 or 1: 1 */
    /* The evaluations' work so far, in steps whose count does not depend on
       the CPU (ns_heuristic_work); NULL: not counted (ns_search_opts' max_work
       then does not apply). */
    long (*work)(const void *ctx);
} ns_evaluator;

/* The classical heuristic `kind` as an evaluator (h^FF gives its helpful
 * actions as preferred operators; the others none). */
void ns_evaluator_classical(ns_evaluator *e, const ns_task *t, ns_heuristic_kind kind);
/* The same with the best supporters' tie-breaking of ns_heuristic_set_last_supporter. */
void ns_evaluator_classical_ties(ns_evaluator *e, const ns_task *t, ns_heuristic_kind kind, bool last_supporter);
/* Calls e->free(e->ctx) if set and clears e. */
void ns_evaluator_free(ns_evaluator *e);

/* Bytes of scratch held (for memory limits). */
size_t ns_heuristic_bytes(const ns_heuristic *h);

/* The work of every evaluation so far: the relaxed explorations' steps (an
 * atom taken from the queue or stack, with the operators it is a
 * precondition of, and each pass's reset of atoms and operators).  Roughly
 * proportional to CPU time, but the same on every machine: a budget of work
 * (ns_search_opts' max_work) gives a search that stops at the same point
 * everywhere. */
long ns_heuristic_work(const ns_heuristic *h);

/* Name <-> kind ("blind", "hmax", "hadd", "ff", "lmcut"); -1 if unknown. */
int ns_heuristic_parse(const char *name);
const char *ns_heuristic_name(ns_heuristic_kind k);

#endif
