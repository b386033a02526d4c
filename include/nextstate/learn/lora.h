/* lora.h — a LoRA adapter of a BERT-family text encoder (encode/bert.h) and
 * the encoder's backward pass to it (paper App. M: adapting the encoder).
 *
 * ADAPTER.  For each adapted layer l and projection t (query, key, value of
 * the self-attention, or its output dense layer; PEFT's default for BERT is
 * query and value), two tensors
 *     lora.<l>.<query|key|value|output>.A  [rank × H]   U(−1/√H, 1/√H), seeded
 *     lora.<l>.<query|key|value|output>.B  [H × rank]   0
 * (PEFT's init: Kaiming-uniform A with a = √5, zero B), scale alpha / rank,
 * on the top `layers` encoder layers (all by default).  B = 0 makes the
 * adapted encoder equal the frozen one bit for bit (bert.h).  The tensors are
 * one ns_params block (params.h), so AdamW (optim.h) and checkpoints take
 * them as they take a world model's.
 *
 * BACKWARD.  ns_lora_backward takes the tape of a training forward
 * (ns_bert_forward_lora with a tape) and the gradient w.r.t. its n pooled
 * (normalised) sentence embeddings, and adds the gradients of every A and B
 * into p.grad:
 *   L2 normalisation → pooling (mean, CLS or max) → per layer, top down:
 *   LayerNorm 2 → FFN (W2, GELU, W1; residual) → LayerNorm 1 → output dense
 *   (+ its adapter) → attention (probabilities recomputed; softmax, q·kᵀ/√dh)
 *   → query/key/value (+ adapters) → the layer's input, down to the lowest
 *   adapted layer.  The frozen weights get no gradient.  Matrix products go
 *   through ns_sgemm; LayerNorm and GELU use nn.h's backward passes. */
#ifndef NEXTSTATE_LORA_H
#define NEXTSTATE_LORA_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/encode/bert.h"
#include "nextstate/learn/params.h"
#include "nextstate/util/error.h"
#include "nextstate/util/json.h"
#include "nextstate/util/util.h"

/* Bit t of a target mask: projection t (ns_bert_target) is adapted. */
#define NS_LORA_QV ((1u << NS_BERT_Q) | (1u << NS_BERT_V))

typedef struct ns_lora_config {
    int rank;         /* r (8) */
    float alpha;      /* scale = alpha / r (16) */
    unsigned targets; /* NS_LORA_QV */
    int layers;       /* adapt the top `layers` encoder layers (0: all) */
} ns_lora_config;
void ns_lora_config_init(ns_lora_config *c);

typedef struct ns_lora {
    ns_lora_config cfg;
    int enc_layers, hidden, first; /* the encoder's layers and width; lowest adapted layer */
    float scale;
    ns_params p;
    /* [enc_layers × NS_BERT_NTARGETS]: A, B of (l, t) in p.data and p.grad, NULL where none */
    const float **a, **b;
    float **ga, **gb;
} ns_lora;

/* Declares and initialises (A seeded, B = 0) an adapter for encoders of
 * config c.  NS_ERR_USAGE for a rank outside 1 … hidden, no target, or more
 * layers than the encoder has. */
ns_status ns_lora_create(ns_lora *l, const ns_bert_config *c, const ns_lora_config *cfg, uint64_t seed,
                         ns_error *err);
void ns_lora_free(ns_lora *l);
/* The encoder's view of the adapter's current values (borrows l). */
void ns_lora_view(const ns_lora *l, ns_bert_lora *v);
/* Hash of the adapter's values (ns_bert_merge_lora's tag). */
uint64_t ns_lora_hash(const ns_lora *l);

/* "q", "k", "v", "o" letters in any order (e.g. "qv", "qkvo") → a target
 * mask; 0 for anything else.  ns_lora_targets_name writes the letters. */
unsigned ns_lora_targets_parse(const char *s);
void ns_lora_targets_name(unsigned targets, char out[8]);

/* Adds into l->p.grad the gradients of every adapter tensor for dout
 * [tape->n × H], the gradient w.r.t. the sentence embeddings the forward
 * of tape returned (m and the adapter values must be those of that forward). */
void ns_lora_backward(ns_lora *l, const ns_bert *m, const ns_bert_tape *tape, const float *dout);

/* ---- checkpoints: the adapter beside a model's own tensors ----------------
 * ns_lora_json writes {"rank", "alpha", "targets", "layers", "first"}: the
 * "lora" member of a checkpoint's "encoder" object; ns_lora_from_ckpt
 * rebuilds the adapter from that object and the lora.* tensors of a
 * checkpoint's tensor table (ns_params_read), checking names and shapes. */
void ns_lora_json(const ns_lora *l, ns_buf *b);
ns_status ns_lora_from_ckpt(ns_lora *l, const ns_bert_config *c, const ns_json *lora_json, const ns_params *file,
                            const char *path, ns_error *err);

#endif
