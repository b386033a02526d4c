/* lama.h — LAMA-first's search (Richter & Westphal 2010; Fast Downward's
 * --alias lama-first): lazy greedy best-first search over two heuristics,
 * h^FF and the landmark count h^LM (landmarks.h), with h^FF's helpful
 * actions as preferred operators (as Fast Downward's alias: landmark_sum
 * with pref=false; h^LM's own preferred operators cost LAMA-first every
 * blocksworld problem of 40 blocks in ipc23_validate, where without them it
 * solves them in about a second).  Four open lists — h^FF, h^FF
 * preferred-only, h^LM, h^LM preferred-only (successors preferred by h^FF)
 * — hold (parent, operator) entries keyed by the parent's value; they are
 * taken round-robin by lowest priority (a taken list's priority rises by
 * one), and every new best value of either heuristic lowers the preferred
 * lists' priorities by 1000.  A successor is generated
 * and evaluated only when taken; known states are skipped (no reopening; a
 * cheaper path only relinks).  The accepted landmarks are stored per state:
 * a new state inherits its parent's and adds those it reaches; reaching a
 * known state again keeps only the landmarks accepted on both paths.
 * Successors in Fast Downward's successor order (succorder.h):
 * deterministic. */
#ifndef NEXTSTATE_LAMA_H
#define NEXTSTATE_LAMA_H

#include "nextstate/core/search.h"

/* Runs the search (o->time_limit, o->memory_limit, o->prune_irrelevant,
 * o->preferred are honoured; o->heuristic is not used).  With o->extra a
 * third heuristic keys two more lists (its own and its preferred-only,
 * preferred by h^FF's place or h^LM), taken in the same round robin.  With o->evaluator
 * (e.g. a learned heuristic) that evaluator takes h^FF's place: its values
 * key the first two lists and its preferred operators join h^LM's; a new best
 * value counts as progress when it is lower by a whole unit (e->unit keys).
 * Fills r like ns_search (init_h: the first heuristic's value of the initial
 * state). */
ns_status ns_lama_search(const ns_task *t, const ns_search_opts *o, ns_search_result *r);

#endif
