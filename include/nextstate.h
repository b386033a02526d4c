/* nextstate.h — the whole library, layer by layer (each includes only the
 * ones above it in this list). */
#ifndef NEXTSTATE_H
#define NEXTSTATE_H

#include "nextstate/util.h"
#include "nextstate/core.h"
#include "nextstate/data.h"
#include "nextstate/encode.h"
#include "nextstate/learn.h"
#include "nextstate/eval.h"
#include "nextstate/planner.h"

#endif
