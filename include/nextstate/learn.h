/* nextstate/learn.h — the learn layer: numerics (layers, losses, AdamW, parameters), LSTM, XGBoost, progress models, the world model,
 * LoRA adapters of the text encoder and their joint training (encoder adaptation).
 * Includes only layers below it (util, core, data, encode). */
#ifndef NEXTSTATE_LAYER_LEARN_H
#define NEXTSTATE_LAYER_LEARN_H

#include "nextstate/learn/adapt.h"
#include "nextstate/learn/loss.h"
#include "nextstate/learn/lora.h"
#include "nextstate/learn/forest.h"
#include "nextstate/learn/lstm.h"
#include "nextstate/learn/nn.h"
#include "nextstate/learn/optim.h"
#include "nextstate/learn/params.h"
#include "nextstate/learn/predictor.h"
#include "nextstate/learn/world.h"
#include "nextstate/learn/xgb.h"

#endif
