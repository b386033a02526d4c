/* nextstate/eval.h — the eval layer: world-model evaluation (Hit@k, Acc@k, sweeps, plans, rollout), the
 * one-call fit / report / reference runs and the split-to-inputs preamble they share.
 * Includes only layers below it (util, core, data, encode, learn). */
#ifndef NEXTSTATE_LAYER_EVAL_H
#define NEXTSTATE_LAYER_EVAL_H

#include "nextstate/eval/evaluate.h"
#include "nextstate/eval/breakdown.h"
#include "nextstate/eval/reference.h"
#include "nextstate/eval/world_data.h"
#include "nextstate/eval/fit.h"
#include "nextstate/eval/report.h"

#endif
