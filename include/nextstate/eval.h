/* nextstate/eval.h — the eval layer: world-model evaluation (Hit@k, Acc@k, sweeps, plans, rollout) and the reference methods.
 * Includes only layers below it (util, core, data, encode, learn). */
#ifndef NEXTSTATE_LAYER_EVAL_H
#define NEXTSTATE_LAYER_EVAL_H

#include "nextstate/eval/evaluate.h"
#include "nextstate/eval/reference.h"

#endif
