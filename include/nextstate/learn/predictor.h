/* predictor.h — the first paper's next-state models: from the encoding of the
 * current state and the goal, predict the encoding of the next state on an
 * expert trajectory (state mode) or its change (delta mode).
 *
 * Inputs per step: x_t = [φ(s_t), φ(g)] (2D floats, φ an ns_encoder).
 *   LSTM  2 layers × 256 over a whole trajectory (inputs s_0…s_{T−1},
 *         targets s_1…s_T).  State mode: head Linear(H→H) → LayerNorm → ReLU
 *         → Linear(H→D), loss 1 − cosine.  Delta mode: Linear(H→D) predicting
 *         φ(s_{t+1}) − φ(s_t), MSE.  Adam (AdamW with weight decay 0), lr
 *         1e-2, 500 epochs, batch 32 trajectories (padded, masked); the
 *         parameters of the epoch with the least validation loss are kept.
 *   XGB   one multi-output gradient-boosted regressor (xgb.h) on the rows
 *         (x_t, φ(s_{t+1}) or the delta), squared error, depth 8, eta 0.1, up
 *         to 1000 rounds, early stopping after 10 rounds on validation.
 *
 * The predicted next encoding is the output (state mode) or φ(s_t) + output
 * (delta mode); ns_predictor_cost scores a candidate successor against it
 * (cosine distance in state mode, L2 distance in delta mode) as the paper's
 * decoder does.
 *
 * Model file of an LSTM: a params checkpoint (params.h: magic, version, CRC)
 * whose meta text is a JSON object {"format": "nextstate-predictor",
 * "version": 2, "model", "mode", "dim", "layers", "hidden", "encoder": {…},
 * "train": {…}}; its tensors are the checkpoint's tensors.
 * Model file of an XGB model (version 3), little endian: "NSPREDXG" (8
 * bytes), u32 version (3), u32 description bytes M, u64 forest offset (a
 * multiple of 64), u64 forest bytes, the description (the JSON object above
 * with "version": 3 and "xgb": {"best_round", "rounds", "forest_bytes"}),
 * zero padding, the flat forest of forest.h (rounds [0, best_round], its
 * binary version 2), zero padding to 4 bytes, then u32 CRC-32C of every
 * byte before it.  Loading maps the file and uses the forest's nodes in
 * place: no per-node parsing, no XGBoost JSON, no libxgboost.  Earlier
 * files still load: version 2 (a params checkpoint whose tensor "forest"
 * holds the forest's bytes) and version 1 (XGBoost's JSON model text in
 * "xgb": {"model"}: the forest is built from the JSON).
 * Inference (ns_predictor_step, ns_predictor_loss) evaluates the forest,
 * bit-identical to libxgboost's predictions (tests/unit/test_forest.c). */
#ifndef NEXTSTATE_PREDICTOR_H
#define NEXTSTATE_PREDICTOR_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/encode/encoder.h"
#include "nextstate/learn/forest.h"
#include "nextstate/learn/lstm.h"
#include "nextstate/learn/params.h"
#include "nextstate/data/trajectory.h"
#include "nextstate/learn/xgb.h"

typedef enum ns_predictor_kind { NS_PREDICTOR_LSTM, NS_PREDICTOR_XGB } ns_predictor_kind;
typedef enum ns_predictor_mode { NS_PREDICT_STATE, NS_PREDICT_DELTA } ns_predictor_mode;

typedef struct ns_predictor_config {
    ns_predictor_kind kind;
    ns_predictor_mode mode;
    int layers, hidden;   /* LSTM: 2, 256 */
    double lr;            /* LSTM: 1e-2 */
    int epochs, batch;    /* LSTM: 500, 32 */
    ns_xgb_params xgb;    /* XGB: xgb.h defaults */
    uint64_t seed;        /* initialisation and batch order (LSTM); XGB's seed */
    bool progress;        /* show progress on a terminal */
} ns_predictor_config;

void ns_predictor_config_init(ns_predictor_config *c);
/* "lstm" / "xgb", "state" / "delta" -> enum value; -1 when unknown. */
int ns_predictor_kind_parse(const char *name);
int ns_predictor_mode_parse(const char *name);
const char *ns_predictor_kind_name(ns_predictor_kind k);
const char *ns_predictor_mode_name(ns_predictor_mode m);

typedef struct ns_predictor {
    ns_predictor_kind kind;
    ns_predictor_mode mode;
    ns_encoder_spec enc; /* owned */
    int dim;             /* D */
    /* LSTM */
    ns_lstm_dims dims;
    ns_params params;
    ns_lstm_w w;
    float *head1_w, *head1_b, *ln_w, *ln_b, *out_w, *out_b; /* head1/ln: state mode only */
    /* XGB */
    ns_xgb xgb;       /* the booster after training only (rounds, best_round always set) */
    ns_forest forest; /* the trees predictions use */
    /* training record */
    int best_epoch;     /* LSTM: epoch kept (1-based); XGB: rounds kept */
    double best_val;    /* validation loss kept (NaN without validation data) */
    double train_seconds;
    long train_rows, val_rows;
} ns_predictor;

/* Trains a predictor on the trajectories of train (validation on val, which
 * may be NULL: then the last epoch / every round is kept).  Takes ownership
 * of *enc (fitted by the caller, e.g. on train) in every case. */
ns_status ns_predictor_train(ns_predictor *m, ns_encoder_spec *enc, const ns_trajset *train, const ns_trajset *val,
                             const ns_predictor_config *c, ns_error *err);
ns_status ns_predictor_save(const ns_predictor *m, const char *path, ns_error *err);
/* Loads a model file; a wrong magic, truncation, checksum or inconsistent
 * description is NS_ERR_INPUT naming the file. */
ns_status ns_predictor_load(ns_predictor *m, const char *path, ns_error *err);
void ns_predictor_free(ns_predictor *m);
/* Parameters (LSTM) or trees (XGB) of the model. */
long ns_predictor_size(const ns_predictor *m);

/* Inference.  A recurrent state (LSTM h and c, 2·L·H floats; none for XGB)
 * is carried along a path: ns_predictor_rstate_floats tells its size (0 for
 * XGB); the initial one is zeros. */
size_t ns_predictor_rstate_floats(const ns_predictor *m);

typedef struct ns_predictor_ws ns_predictor_ws; /* scratch for one thread */
ns_predictor_ws *ns_predictor_ws_new(const ns_predictor *m);
void ns_predictor_ws_free(ns_predictor_ws *ws);

/* One step: from φ(s) and φ(g) (D floats each) and the recurrent state rin
 * (NULL or ignored for XGB), writes the predicted next encoding next[D] and
 * the new recurrent state rout (may alias rin). */
ns_status ns_predictor_step(const ns_predictor *m, ns_predictor_ws *ws, const float *phi_s, const float *phi_g,
                            const float *rin, float *rout, float *next, ns_error *err);
/* Decoder cost of candidate encoding cand against the prediction next:
 * 1 − cos (state mode; 1 when either vector is zero) or ‖cand − next‖₂. */
float ns_predictor_cost(const ns_predictor *m, const float *next, const float *cand);

/* Mean validation loss of the model on the trajectories of s (the training
 * loss: 1 − cos or MSE; for XGB the MSE). */
ns_status ns_predictor_loss(const ns_predictor *m, const ns_trajset *s, double *loss, ns_error *err);

/* LSTM only: the loss over all trajectories of s taken as one padded batch
 * (1..256 of them) and its gradient in m->params.grad — what one training
 * step computes; for gradient checks. */
ns_status ns_predictor_loss_grad(ns_predictor *m, const ns_trajset *s, double *loss, ns_error *err);

#endif
