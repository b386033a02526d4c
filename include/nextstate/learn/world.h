/* world.h — the EmbedPlan world model: an action-conditioned latent
 * transition trained by contrastive retrieval (second paper, §3).
 *
 *   h_s = π_s(E(s)),  h_a = π_a(E(a)),  ĥ(s′) = T(h_s, h_a),
 *   target = π_s(E(s′))  (the state head is shared by source and target)
 *
 * E is a frozen encoder computed elsewhere (features, below); only the
 * projection heads π_s, π_a and the transition T are trained — unless E is a
 * text encoder adapted alongside (LoRA, learn/adapt.h: its features are
 * written per batch through an ns_world_feed).
 *
 * PROJECTION HEAD (π_s and π_a alike): (L − 1) blocks of
 * [Linear in→H, LayerNorm(H), GELU], then Linear H→out (out = 128).  The
 * first block reads the features; for dense features of width D the block
 * width H defaults to D (the paper's "Linear D→D"), for sparse (CSR)
 * features it defaults to 512 and the first Linear is the sparse layer
 * D_in→H (nn.h).  L = 1 is a single Linear in→out.
 *
 * TRANSITION T:
 *   resmlp  LN( W2·GELU(W1·[h_s; h_a] + b1) + b2 + W_res·h_s )
 *           W1 (2·out)→t_hidden (128), W2 t_hidden→out, W_res out×out, no bias
 *   film    hypernetwork: the action generates FiLM parameters for the state,
 *             z = GELU(Wz·h_a + bz)                  (adapter, t_hidden = 192)
 *             A = WA·z + bA,  b = Wb·z + bb          (out each)
 *             y = GELU( LN(W_in·h_s + b_in)·(1 + A) + b )
 *             ĥ = LN( W_o·y + b_o + h_s )
 *
 * LOSS (ns_world_train): InfoNCE between ĥ and the targets of the batch
 * (in-batch negatives, τ = 0.07) + λ (= 2) × the action-disambiguation loss:
 * for each transition, the predictions of the true action and of up to K
 * (= 50) other actions applicable in s (the dataset's applicable_ops,
 * a seeded sample when there are more) compete for the target s′ (loss.h).
 * The original code's 11×11 grid variant is the option action_grid.
 * AdamW (lr 4e-5, wd 0.01, betas 0.9/0.999) with a linear warm-up of the
 * learning rate 0.1 → 1 over the first 10 epochs; batch 128; LayerNorm and
 * bias tensors are decayed too (torch's AdamW over model.parameters()).
 * Model selection: the epoch with the best Hit@5 on the split's DEV list,
 * ties broken by the dev mean reciprocal rank (dev pools drawn by the
 * split's rules, ns_split_pools_draw, as hard as its test pools); never the
 * test list.
 *
 * FEATURES AND IDS (project-wide convention).  State features: one row per
 * dataset state, row = the dataset's global state id.  Action features: one
 * row per ground action, row = global action id
 *     action_id(problem p, operator o) = action_offset[p] + o,
 *     action_offset[p] = Σ_{q < p} problems[q].nops   (dataset order),
 * see ns_action_offsets.  When a split spans several datasets the model sees
 * their rows stacked in dataset order (ns_world_inputs: state_base,
 * action_base).
 *
 * ACTION ROW MODES.  The action rows above ("action" mode) give one vector
 * per ground action whatever the state — the built-in encoder and text
 * embeddings.  An encoding that depends on the state (the lifted WL action
 * encoding: schema one-hot ⊕ WL colours of each argument object in s,
 * `nextstate encode --actions`) has one row per (state, applicable action)
 * pair instead ("state-action" mode):
 *     pair_id(s, a) = k  where applicable_ops[k] = a, k ∈ [applicable_offsets[s],
 *                                                       applicable_offsets[s + 1])
 * i.e. rows follow the dataset's applicable_ops array, so every transition and
 * every applicable pair the action loss and Acc@k need has its row (with or
 * without `data build --successors`).  A features file says which mode it is
 * in a sidecar SPEC.rows.json ({"format": "nextstate-feature-rows", "rows":
 * "state-action", "count": N}; SPEC without ".npy"); without one it is in
 * action mode.  The checkpoint records the mode; features of the other mode
 * are an error.
 *
 * Either kind of features is dense float32 .npy [rows, D] or a CSR triple
 * saved by ns_csr_save: DIR/PREFIX_indptr.npy, _indices.npy, _values.npy,
 * _shape.npy, named by the spec "DIR/PREFIX".
 *
 * BUILT-IN ENCODER ("builtin", the default): states = binary bag of
 * literals over the TEXT of their fluent atoms ("(at c0 l0)") plus one
 * column per goal literal of their problem ("goal (at c0 l1)", the prompt's
 * GOAL block), so problems that share atom text share columns and an unseen
 * problem maps its atoms by text; actions = one-hot of the schema name plus one column per
 * "schema#position=object" (e.g. "(board c1 l1)" → board, board#0=c1,
 * board#1=l1).  The vocabularies are fitted on the problems that have
 * training transitions (terms in byte order) and stored in the checkpoint,
 * so evaluation rebuilds identical columns; terms absent from the
 * vocabulary get no column.
 *
 * CHECKPOINTS are params.h files whose meta text is the JSON configuration
 * {"format": "nextstate-world", "version": 1, "config": {…}, "features":
 * {…, builtin vocabularies}, "train": {…}}.  Loading checks the format,
 * the tensor table and that the features given have the widths the model
 * was trained on. */
#ifndef NEXTSTATE_WORLD_H
#define NEXTSTATE_WORLD_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/util/csr.h"
#include "nextstate/encode/inputs.h"
#include "nextstate/data/dataset.h"
#include "nextstate/util/error.h"
#include "nextstate/learn/params.h"
#include "nextstate/data/split.h"
#include "nextstate/util/util.h"

#define NS_WORLD_FORMAT "nextstate-world"
#define NS_WORLD_VERSION 1
#define NS_WORLD_MAX_LAYERS 8

/* ---- features: encode/features.h, encode/builtin.h, encode/inputs.h ---------- */

/* ---- model ---------------------------------------------------------------------- */

typedef enum ns_world_kind { NS_WORLD_RESMLP, NS_WORLD_FILM } ns_world_kind;

typedef struct ns_world_config {
    ns_world_kind kind;
    int state_dim, action_dim; /* feature widths */
    bool state_sparse, action_sparse;
    ns_action_rows action_rows;      /* what an action row stands for */
    int layers;                      /* L (1 … NS_WORLD_MAX_LAYERS); 2 */
    int state_hidden, action_hidden; /* block widths; 0: D dense, 512 sparse */
    int out;                         /* 128 */
    int t_hidden;                    /* 0: 128 (resmlp), 192 (film) */
} ns_world_config;

/* Defaults: resmlp, L = 2, out 128, widths 0 (resolved at create). */
void ns_world_config_init(ns_world_config *c);

typedef struct ns_world_head {
    int in, hidden, out, layers;
    bool sparse;
    int lin_w[NS_WORLD_MAX_LAYERS], lin_b[NS_WORLD_MAX_LAYERS]; /* tensor indices; the last is the out layer */
    int ln_w[NS_WORLD_MAX_LAYERS], ln_b[NS_WORLD_MAX_LAYERS];
} ns_world_head;

typedef struct ns_world {
    ns_world_config cfg;
    ns_params p;
    ns_world_head hs, ha;
    int t_idx[16]; /* T's tensors (kind-specific order) */
    int nt;
    uint16_t *bf16;   /* NULL, or packed bfloat16 weights (nn.h ns_bf16_pack): see ns_world_set_bf16 */
    size_t *bf16_at;  /* per tensor: its packing's offset into bf16, SIZE_MAX for none */
    uint8_t *i8;      /* NULL, or packed int8 weights (nn.h ns_i8_pack): see ns_world_set_int8 */
    size_t *i8_at;    /* per tensor: its packing's byte offset into i8, SIZE_MAX for none */
    uint8_t *i4;      /* NULL, or packed int4 weights (nn.h ns_i4_pack): see ns_world_set_int4 */
    size_t *i4_at;    /* per tensor: its packing's byte offset into i4, SIZE_MAX for none */
} ns_world;

/* Declares, allocates and initialises (seeded, torch's default inits). */
ns_status ns_world_create(ns_world *w, const ns_world_config *c, uint64_t seed, ns_error *err);
void ns_world_free(ns_world *w);
/* Inference in bfloat16 (on) or float (off, the default): with it on, the
 * dense layers of both projection heads and of the residual-MLP T read a
 * bfloat16 copy of their weights taken now (nn.h ns_linear_forward_bf16) —
 * half the bytes, so a batch-1 query's weights fit in a core's L2.  Sparse
 * first layers, the FiLM T and the split T (ns_world_tstate …) stay float.
 * Training turns it off; changing p.data afterwards needs a fresh call. */
void ns_world_set_bf16(ns_world *w, bool on);
/* Inference with int8 weights (on): the same layers as ns_world_set_bf16
 * read an int8 copy (per-row scales, nn.h ns_linear_forward_i8) — a quarter
 * of the float bytes, so a batch-1 query's weights (≈ 0.5 MB at 384-d
 * inputs) stay in L2 beside the candidates.  Takes precedence over
 * bfloat16 where both are set; training turns it off.  Drops int4 copies
 * (ns_world_set_int4). */
void ns_world_set_int8(ns_world *w, bool on);
/* Inference with int4 weights (on): ns_world_set_int8, and the dense layers
 * of both projection heads whose input width is a multiple of NS_I4_GROUP
 * read an int4 copy (groups of NS_I4_GROUP inputs, nn.h
 * ns_linear_forward_i4) — about half their int8 bytes; T, candidate tables
 * and other layers stay int8.  Off (or training) drops both copies. */
void ns_world_set_int4(ns_world *w, bool on);
/* Parameter counts of π_s, π_a and T. */
void ns_world_counts(const ns_world *w, size_t *state_head, size_t *action_head, size_t *trans);

/* Forward work space (grown on demand; one per thread). */
typedef struct ns_world_ws ns_world_ws;
ns_world_ws *ns_world_ws_new(void);
void ns_world_ws_free(ns_world_ws *ws);

/* out[n × out] = π_s(E(rows)) (state = true) or π_a(E(rows)), rows into the
 * inputs' stacked feature matrix. */
void ns_world_project(const ns_world *w, ns_world_ws *ws, const ns_features *f, bool state, const int64_t *rows,
                      int n, float *out);
/* pred[n × out] = T(hs[n × out], ha[n × out]). */
void ns_world_transition(const ns_world *w, ns_world_ws *ws, const float *hs, const float *ha, int n, float *pred);

/* BATCH-1 QUERY: pred[out] = T(π_s(E(srow)), π_a(E(arow))) for one state row
 * of fs and one action row of fa (rows of the inputs' stacked feature
 * matrices) — what ns_world_project twice and ns_world_transition compute,
 * to the bit, in whichever precision the model is set to (float, bfloat16,
 * int8, int4).  For dense heads and the residual-MLP T it runs the heads' layers
 * itself (the feature rows read in place, activations in the work space,
 * no batch bookkeeping) and T through ns_resmlp_forward at B = 1, reading
 * the weights in the order they are packed; other models: those three calls.  (Software prefetches of the next layer's
 * weights during a LayerNorm and GELU measured slower here, and so did
 * running those in the shadow of the next layer's weight stream.) */
void ns_world_predict1(const ns_world *w, ns_world_ws *ws, const ns_features *fs, int64_t srow,
                       const ns_features *fa, int64_t arow, float *pred);

/* T SPLIT FOR SEARCH.  T's first stage is linear in h_s and in h_a apart, so
 * everything that depends on one side only can be computed once per state
 * and once per action and cached next to their projections — what a search
 * does, which applies T to one state and each of its applicable actions, and
 * to one action in many states.  Per (state, action) pair only the rest is
 * left:
 *   resmlp  state part  [W1_s·h_s + b1 ; W_res·h_s + b2]   (t_hidden + out)
 *           action part W1_a·h_a                           (t_hidden)
 *           ĥ = LN(W2·GELU(state₁ + action) + state₂)       W1 = [W1_s W1_a]
 *   film    state part  [LN(W_in·h_s + b_in) ; h_s + b_o]   (2·out)
 *           action part [1 + A ; b] of the adapter           (2·out)
 *           ĥ = LN(W_o·GELU(state₁ ⊙ action₁ + action₂) + state₂)
 * which is T exactly (up to float rounding), a quarter of its multiply-adds
 * for the paper's resmlp sizes. */
void ns_world_tsplit_dims(const ns_world *w, int *state_dim, int *action_dim);
/* out[n × state_dim] / out[n × action_dim] of hs / ha [n × out]. */
void ns_world_tstate(const ns_world *w, ns_world_ws *ws, const float *hs, int n, float *out);
void ns_world_taction(const ns_world *w, ns_world_ws *ws, const float *ha, int n, float *out);
/* pred[n × out] for the pairs (ts + i·ts_stride, ta + i·ta_stride), i < n;
 * a stride of 0 reuses one row for every pair (one state, many actions). */
void ns_world_transition_split(const ns_world *w, ns_world_ws *ws, const float *ts, size_t ts_stride, const float *ta,
                               size_t ta_stride, int n, float *pred);

/* ---- training --------------------------------------------------------------------- */

/* Hit@1/5/10 and the mean reciprocal rank of w on refs with their pools (refs->n
 * × pool_size) — the dev check that selects the best epoch.  A hook, so that
 * the training loop (learn/) does not depend on the evaluation layer (eval/),
 * whose ns_eval_hits is the one to pass (ns_eval_train_opts_init sets it). */
typedef ns_status (*ns_world_scorer)(const ns_world *w, const ns_world_inputs *in, const ns_refs *refs,
                                     const int64_t *pools, int pool_size, uint64_t seed, double hit[3], double *mrr,
                                     ns_error *err);

/* FEATURES IN THE LOOP.  When a batch's features come from an encoder that
 * is trained alongside the model (a LoRA-adapted text encoder, learn/adapt.h),
 * ns_world_batch_loss calls the feed: prepare before the heads read any row,
 * with the state rows (2n: the sources, then the targets) and the distinct
 * action rows the batch reads, so that it writes their current features into
 * the inputs' dense rows; backward after the heads' backward pass, with the
 * gradients of the loss w.r.t. those rows as read (dstate [2n × state_dim],
 * daction [na × action_dim], same order; a state listed twice gets one
 * gradient per listing).  Dense features only. */
typedef struct ns_world_feed {
    void (*prepare)(void *ctx, const int64_t *srows, int ns, const int64_t *arows, int na);
    void (*backward)(void *ctx, const int64_t *srows, int ns, const float *dstate, const int64_t *arows, int na,
                     const float *daction);
    void *ctx;
} ns_world_feed;

typedef struct ns_train_opts {
    double lr;            /* 4e-5 */
    double weight_decay;  /* 0.01 */
    double beta1, beta2;  /* 0.9, 0.999 */
    int warmup_epochs;    /* 10 */
    double warmup_start;  /* 0.1 */
    int batch;            /* 128 */
    int epochs;           /* 200 */
    /* A step budget instead of an epoch count, for splits of any size:
     * steps > 0 trains exactly that many AdamW steps (the epochs follow from
     * the batches per epoch; the last one may be cut short); else min_steps
     * > 0 raises `epochs` until at least that many steps run.  Both 0 (the
     * default): `epochs` alone. */
    int64_t steps, min_steps;
    uint64_t seed;        /* batches, action samples, dev pools, tie-breaks */
    float tau;            /* 0.07 */
    float action_weight;  /* 2 (0: no action loss) */
    int action_k;         /* 50 other applicable actions at most */
    bool action_grid;     /* the code's 11×11 grid instead */
    int grid_n;           /* 11 */
    int eval_every;       /* dev evaluation every N epochs (1) */
    int dev_pool;         /* dev pool size (128) */
    double time_limit;    /* wall seconds for training (0: none) */
    int patience;         /* stop after N dev evaluations without improvement (0: never) */
    bool progress;        /* progress line on a terminal */
    ns_world_scorer dev_score; /* required when the split has a dev list */
    /* called after each epoch (may be NULL); returning false stops training */
    bool (*on_epoch)(void *ctx, int epoch, double loss, double dev_hit5, double seconds);
    void *ctx;
    const ns_world_feed *feed; /* NULL: the features are fixed (ns_world_batch_loss) */
} ns_train_opts;

void ns_train_opts_init(ns_train_opts *o);

/* The epochs training runs with nbatch AdamW steps per epoch (steps,
 * min_steps and epochs of o; see ns_train_opts). */
int ns_train_epochs(const ns_train_opts *o, int64_t nbatch);

typedef struct ns_train_stats {
    int epochs_run, best_epoch; /* best_epoch 1-based; 0: no dev list (last epoch kept) */
    double best_dev_hit5;       /* −1 without dev */
    double last_loss, seconds, samples_per_s;
    int64_t steps, samples;
} ns_train_stats;

/* Trains w on the train refs of split sp (datasets and features in in),
 * selecting the best dev Hit@5 epoch (weights restored to it at the end). */
ns_status ns_world_train(ns_world *w, const ns_world_inputs *in, const ns_split *sp, const ns_train_opts *o,
                         ns_train_stats *st, ns_error *err);

/* One batch's loss and gradients (added into w->p.grad): transitions
 * refs[0 … n) as (dataset, transition) pairs.  For tests (finite
 * differences) and the training loop; rng samples the action candidates. */
double ns_world_batch_loss(ns_world *w, ns_world_ws *ws, const ns_world_inputs *in, const int64_t *refs, int n,
                           const ns_train_opts *o, ns_rng *rng, bool backward);

/* ---- checkpoints ------------------------------------------------------------------ */

/* Saves parameters with meta = {"format", "version", "config", "features":
 * features_json (a JSON object text or NULL), "train": train_json}. */
ns_status ns_world_save(const ns_world *w, const char *path, const char *features_json, const char *train_json,
                        ns_error *err);
/* ns_world_save with the text encoder the features come from: meta gains
 * "encoder": encoder_json (an object, e.g. {"model", "fingerprint",
 * "lora"}), and the tensors of extra (its adapter; names unlike the model's)
 * follow the model's in the file.  ns_world_load accepts such tensors after
 * its own when the meta has an "encoder" object (read them with
 * ns_params_read). */
ns_status ns_world_save_with(const ns_world *w, const char *path, const char *features_json, const char *train_json,
                             const char *encoder_json, const ns_params *extra, ns_error *err);
/* Loads a checkpoint: builds the model from its config and loads the
 * weights.  *meta (if non-NULL) receives the meta text (free it). */
ns_status ns_world_load(ns_world *w, const char *path, char **meta, ns_error *err);
/* Checks that features fit the model (kinds, widths and the action row
 * mode), naming the side. */
ns_status ns_world_check_inputs(const ns_world *w, const ns_world_inputs *in, ns_error *err);

const char *ns_world_kind_name(ns_world_kind k);
int ns_world_kind_parse(const char *s);

#endif
