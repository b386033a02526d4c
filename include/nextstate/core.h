/* nextstate/core.h — the core layer: PDDL, grounded STRIPS tasks, states, successor generation, heuristics, search, plans, generators.
 * Includes only layers below it (util). */
#ifndef NEXTSTATE_LAYER_CORE_H
#define NEXTSTATE_LAYER_CORE_H

#include "nextstate/core/gen.h"
#include "nextstate/core/heuristic.h"
#include "nextstate/core/pddl.h"
#include "nextstate/core/plan.h"
#include "nextstate/core/search.h"
#include "nextstate/core/state.h"
#include "nextstate/core/succgen.h"
#include "nextstate/core/succorder.h"
#include "nextstate/core/task.h"

#endif
