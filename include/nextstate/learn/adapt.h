/* adapt.h — encoder adaptation (paper App. M): the world model (world.h)
 * trained jointly with a LoRA adapter (lora.h) of the text encoder its
 * features come from, through the model's own loss (InfoNCE + the action
 * loss, ns_world_batch_loss).
 *
 * Each step draws a batch of training transitions (shuffled once per
 * epoch, seeded).  The texts the batch reads — source and target prompts,
 * the true and the alternative actions' texts — are encoded by the adapted
 * encoder with a tape (ns_bert_forward_lora), standardised as the features
 * were (the frozen embeddings' fit, held fixed), and written into the
 * inputs' rows (ns_world_feed); the loss's gradients w.r.t. those rows flow
 * back through the standardisation, the window mean and the encoder
 * (ns_lora_backward) to the adapter.  AdamW then steps the model (its train
 * options' learning rate, or head_lr) and the adapter (lr), both constant.
 *
 * A text longer than the encoder's window is cut into windows as
 * ns_bert_encode_chunks cuts it (the mean of their embeddings, normalised
 * again); a shorter one is one window, as ns_bert_encode reads it — so the
 * features match those of `embed` / ns_embed_dataset_features.  Memory: a
 * step's tape is kept whole when it fits in tape_mb; otherwise the texts are
 * encoded without one and again, in slices that fit, during backward.
 *
 * After training, only the rows the batches read hold adapted features: the
 * caller re-encodes every text with the adapted encoder (merge the adapter,
 * ns_bert_merge_lora) for evaluation. */
#ifndef NEXTSTATE_ADAPT_H
#define NEXTSTATE_ADAPT_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/encode/bert.h"
#include "nextstate/encode/features.h"
#include "nextstate/learn/lora.h"
#include "nextstate/learn/world.h"

/* The texts behind the inputs' rows: state row r is state[r], action row r
 * is action[r] (the datasets' rows stacked; one row per ground action). */
typedef struct ns_row_texts {
    int64_t nstates, nactions;
    const char *const *state;
    const size_t *state_len;
    const char *const *action;
    const size_t *action_len;
} ns_row_texts;

typedef struct ns_adapt_opts {
    int epochs;          /* passes over the training transitions (2, the paper's) */
    int64_t steps;       /* > 0: exactly this many steps instead */
    int batch;           /* transitions per step (16, the paper's) */
    double lr;           /* the adapter's learning rate (1e-4) */
    double head_lr;      /* the world model's during adaptation (0: its train options' lr) */
    double weight_decay; /* the adapter's AdamW weight decay (0) */
    int tape_mb;         /* memory for one step's tape (1024) */
    uint64_t seed;       /* batch order, action samples */
    bool progress;       /* a progress line on a terminal */
} ns_adapt_opts;
void ns_adapt_opts_init(ns_adapt_opts *o);

typedef struct ns_adapt_stats {
    int64_t steps, texts, windows, tokens; /* steps; texts, windows and tokens encoded with a tape */
    double seconds;
    double first_loss, last_loss; /* mean batch loss of the first and the last epoch */
} ns_adapt_stats;

/* Trains w and l jointly on the training list of sp (inputs in: dense state
 * and action features of the frozen encoder m, standardised by ss / as —
 * dim 0 for none — with one action row per ground action; texts: their
 * texts).  to supplies the loss (tau, action loss) and the model's learning
 * rate and weight decay; its feed is the adaptation's own.  The rows of in
 * the batches read are overwritten with adapted features. */
ns_status ns_adapt_train(ns_world *w, ns_lora *l, const ns_bert *m, ns_world_inputs *in, const ns_feature_std *ss,
                         const ns_feature_std *as, const ns_row_texts *texts, const ns_split *sp,
                         const ns_train_opts *to, const ns_adapt_opts *o, ns_adapt_stats *st, ns_error *err);

/* The feed one adaptation step uses (ns_world_feed: the encoder writes the
 * batch's rows, its backward pass takes their gradients), for tests and
 * callers with a loop of their own: set it as the train options' feed and
 * call ns_world_batch_loss; the adapter's gradients go to l->p.grad.  The
 * arguments are borrowed and must outlive it. */
typedef struct ns_adapt_feed ns_adapt_feed;
ns_adapt_feed *ns_adapt_feed_new(const ns_bert *m, ns_lora *l, ns_world_inputs *in, const ns_feature_std *ss,
                                 const ns_feature_std *as, const ns_row_texts *texts, int tape_mb);
const ns_world_feed *ns_adapt_feed_hook(const ns_adapt_feed *f);
void ns_adapt_feed_free(ns_adapt_feed *f);

#endif
