/* nextstate/encode.h — the encode layer: state and action encoders: WL, FSF, text featurizers, word pieces, BERT, embeddings.
 * Includes only layers below it (util, core, data). */
#ifndef NEXTSTATE_LAYER_ENCODE_H
#define NEXTSTATE_LAYER_ENCODE_H

#include "nextstate/encode/bert.h"
#include "nextstate/encode/dataset_enc.h"
#include "nextstate/encode/embed.h"
#include "nextstate/encode/encoder.h"
#include "nextstate/encode/featurize.h"
#include "nextstate/encode/fsf.h"
#include "nextstate/encode/pca.h"
#include "nextstate/encode/wl.h"
#include "nextstate/encode/wordpiece.h"

#endif
