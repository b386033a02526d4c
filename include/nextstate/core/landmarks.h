/* landmarks.h — fact landmarks of a grounded task and the landmark-count
 * heuristic h^LM (LAMA: Richter & Westphal 2010).
 *
 * Generation (ns_landmarks_build), in the spirit of RHW (Richter, Helmert &
 * Westphal 2008), backchaining from the goal: every positive goal atom is a
 * landmark; for a landmark L false in the initial state, a relaxed
 * exploration from the initial state that never applies an operator adding
 * an atom of L gives L's possible first achievers (its achievers whose
 * preconditions that exploration reaches — every real first achiever is one);
 * then
 *   - every precondition shared by all possible first achievers is a
 *     landmark, ordered greedy-necessarily before L (true in the state right
 *     before L first becomes true);
 *   - for a predicate every possible first achiever has a precondition of,
 *     the disjunction of those preconditions (2–4 atoms, none true initially
 *     and none already in a landmark) is a disjunctive landmark, ordered
 *     greedy-necessarily before L;
 * and so on for the new landmarks.  Natural orderings L → L' are added when
 * L' is not reached by L's exploration (L' cannot become true before L).
 * Cycles among the orderings are broken (natural ones first).  A landmark
 * with no possible first achiever proves the task unsolvable.
 * Negative preconditions and goals are ignored (a relaxation: the landmarks
 * stay landmarks).
 *
 * h^LM is path-dependent: the accepted landmarks are a bitset per search
 * node (ns_landmarks_initial, ns_landmarks_progress): a landmark is accepted
 * when it is true in the node's state and all its ordering predecessors are
 * accepted; it stays accepted in the node's descendants.  h = the landmarks
 * not accepted + those accepted but required again (false in s and either a
 * goal atom or greedy-necessarily ordered before a landmark not accepted);
 * 0 in goal states (and only there: a false goal atom is always counted).
 * Preferred operators: the applicable operators adding an atom of a simple
 * landmark not accepted or required again (if none, of such a disjunctive
 * landmark). */
#ifndef NEXTSTATE_LANDMARKS_H
#define NEXTSTATE_LANDMARKS_H

#include <stdbool.h>
#include "nextstate/core/task.h"

typedef enum ns_lm_order_kind { NS_LM_GREEDY_NECESSARY, NS_LM_NATURAL } ns_lm_order_kind;

typedef struct ns_landmark {
    int atom_off, natoms;  /* the disjunction of atoms lm_atoms[atom_off …] (natoms 1: a fact) */
    int first_off, nfirst; /* possible first achievers first_ach[first_off …] (0 when true initially) */
    bool goal;             /* a positive goal atom */
    bool init_true;        /* true in the initial state */
} ns_landmark;

typedef struct ns_lm_order {
    int from, to; /* landmark ids: `from` before `to` */
    ns_lm_order_kind kind;
} ns_lm_order;

typedef struct ns_landmarks {
    const ns_task *task;
    int n;                     /* landmarks */
    ns_landmark *lm;
    int *lm_atoms;
    int *first_ach;
    int norders;
    ns_lm_order *orders;       /* kept after cycle breaking */
    int *pred_start, *pred;    /* landmark -> ids ordered before it (all kinds) */
    int *gn_start, *gn;        /* landmark -> greedy-necessary predecessors */
    int *topo;                 /* landmark ids, predecessors first */
    int *atom_lm_start, *atom_lm; /* atom -> landmarks containing it */
    int nwords;                /* 64-bit words of an accepted-landmarks bitset */
    bool unsolvable;           /* a landmark has no possible first achiever */
    long work;                 /* the build's relaxed explorations' steps (ns_heuristic_work's units) */
} ns_landmarks;

typedef struct ns_landmarks_opts {
    bool disjunctive;    /* default true */
    bool natural_orders; /* default true */
    double time_limit;   /* CPU seconds; <= 0: none */
} ns_landmarks_opts;

void ns_landmarks_opts_default(ns_landmarks_opts *o);
/* Builds the landmark graph of t (o NULL: defaults); NS_OK, or
 * NS_OUT_OF_TIME (nothing left to free). */
ns_status ns_landmarks_build(ns_landmarks *g, const ns_task *t, const ns_landmarks_opts *o);
void ns_landmarks_free(ns_landmarks *g);

/* Does state s satisfy landmark i (one of its atoms true)? */
bool ns_landmark_holds(const ns_landmarks *g, int i, const ns_word *s);
/* Appends "(at a b)" or "(or (at a b) (at a c))" to b. */
void ns_landmark_str(const ns_landmarks *g, int i, ns_buf *b);
/* The landmark made of exactly atoms[0..n) (any order), or -1. */
int ns_landmarks_find(const ns_landmarks *g, const int *atoms, int n);

/* Accepted landmarks of the initial state s into acc (g->nwords words). */
void ns_landmarks_initial(const ns_landmarks *g, const ns_word *s, ns_word *acc);
/* Accepted landmarks of a child with state s whose parent's are parent_acc
 * (child_acc may alias parent_acc). */
void ns_landmarks_progress(const ns_landmarks *g, const ns_word *parent_acc, const ns_word *s, ns_word *child_acc);

/* ---- the landmark-count heuristic (owns its scratch) ---- */
typedef struct ns_lmcount {
    const ns_landmarks *g;
    uint8_t *future; /* landmark -> not accepted or required again (last evaluation) */
} ns_lmcount;

void ns_lmcount_init(ns_lmcount *h, const ns_landmarks *g);
void ns_lmcount_free(ns_lmcount *h);
/* h^LM(s) with accepted landmarks acc; NS_H_INF when g is unsolvable. */
int ns_lmcount_eval(ns_lmcount *h, const ns_word *acc, const ns_word *s);

#endif
