/* nextstate/planner.h — the planner layer: planning with a learned model (beam decoder, regret search, guided search).
 * Includes only layers below it (util, core, data, encode, learn, eval). */
#ifndef NEXTSTATE_LAYER_PLANNER_H
#define NEXTSTATE_LAYER_PLANNER_H

#include "nextstate/planner/planner.h"

#endif
