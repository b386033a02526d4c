/* nextstate/util.h — the util layer: errors, buffers, JSON, NumPy files, CSR, s-expressions, safetensors, BLAS.
 * Includes only layers below it (nothing). */
#ifndef NEXTSTATE_LAYER_UTIL_H
#define NEXTSTATE_LAYER_UTIL_H

#include "nextstate/util/blas.h"
#include "nextstate/util/csr.h"
#include "nextstate/util/error.h"
#include "nextstate/util/fastmath.h"
#include "nextstate/util/json.h"
#include "nextstate/util/npy.h"
#include "nextstate/util/safetensors.h"
#include "nextstate/util/sexp.h"
#include "nextstate/util/util.h"

#endif
