/* nextstate/data.h — the data layer: state spaces, datasets on disk, natural-language renderings, splits and pools, trajectories.
 * Includes only layers below it (util, core). */
#ifndef NEXTSTATE_LAYER_DATA_H
#define NEXTSTATE_LAYER_DATA_H

#include "nextstate/data/dataset.h"
#include "nextstate/data/render.h"
#include "nextstate/data/space.h"
#include "nextstate/data/split.h"
#include "nextstate/data/trajectory.h"

#endif
