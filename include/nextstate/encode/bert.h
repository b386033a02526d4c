/* bert.h — frozen BERT-family sentence encoders in C: BERT (all-MiniLM-L6-v2)
 * and MPNet (all-mpnet-base-v2), computed as sentence-transformers does:
 *
 *   text → WordPiece ids, truncated to max_seq_length (CLS … SEP included)
 *        → embeddings: word + position (+ token type 0 for BERT), LayerNorm
 *          (MPNet positions count from pad_token_id + 1)
 *        → L × [ self-attention (MPNet adds a learned bias per head and
 *          relative-position bucket, T5-style: 32 buckets, max distance 128),
 *          output projection, residual, LayerNorm; GELU feed-forward,
 *          residual, LayerNorm ]
 *        → pooling over the sequence's tokens (mean; CLS and max also
 *          supported) → L2 normalisation when the model lists a Normalize
 *          module.
 *
 * A model folder (the layout sentence-transformers and scripts/fetch_models.sh
 * use) holds config.json, model.safetensors, vocab.txt, and optionally
 * tokenizer.json / tokenizer_config.json, sentence_bert_config.json
 * (max_seq_length), modules.json and 1_Pooling/config.json.  Sequences are
 * processed unpadded: the dense layers see all tokens of a batch as one
 * matrix, attention runs per sequence and head.  Every dense product goes
 * through ns_sgemm (OpenBLAS: set OPENBLAS_NUM_THREADS to bound its threads).
 * The model is read-only after loading: several threads may encode with it. */
#ifndef NEXTSTATE_BERT_H
#define NEXTSTATE_BERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nextstate/util/error.h"
#include "nextstate/util/util.h"
#include "nextstate/encode/wordpiece.h"

typedef enum ns_bert_arch { NS_BERT_ARCH_BERT, NS_BERT_ARCH_MPNET } ns_bert_arch;
typedef enum ns_bert_pool { NS_BERT_POOL_MEAN, NS_BERT_POOL_CLS, NS_BERT_POOL_MAX } ns_bert_pool;

typedef struct ns_bert_config {
    ns_bert_arch arch;
    int vocab_size;      /* rows of the word embeddings */
    int hidden, layers, heads, intermediate;
    int max_position;    /* rows of the position embeddings */
    int type_vocab_size; /* BERT only */
    int pad_token_id;
    int relative_buckets; /* MPNet: relative_attention_num_buckets */
    float layer_norm_eps;
    int max_seq_length;  /* tokens kept per text, CLS and SEP included */
    ns_bert_pool pooling;
    bool normalize;
    char name[128];      /* the folder's base name, e.g. "all-MiniLM-L6-v2" */
} ns_bert_config;

typedef struct ns_bert ns_bert;

/* Loads a model folder.  Errors name the file: NS_ERR_IO for a missing
 * config.json / model.safetensors / vocab.txt; NS_ERR_INPUT for a truncated
 * or malformed weight file, a missing tensor or one of the wrong shape, a
 * vocabulary whose size differs from the word-embedding rows ("vocabulary
 * does not match the weights"), a max_seq_length beyond the position table;
 * NS_ERR_UNSUPPORTED for other architectures, activations or pooling modes. */
ns_status ns_bert_load(ns_bert **out, const char *dir, ns_error *err);
void ns_bert_free(ns_bert *m);

const ns_bert_config *ns_bert_config_of(const ns_bert *m);
const ns_wordpiece *ns_bert_wordpiece(const ns_bert *m);
/* Output dimension (= hidden size). */
int ns_bert_dim(const ns_bert *m);
/* 64-bit identity of the model (config, tokenizer files, weight header and
 * sizes): caches of embeddings record it and refuse another model's. */
uint64_t ns_bert_fingerprint(const ns_bert *m);

/* The forward pass runs the layers' four matrix products and attention's
 * two on AMX bf16x3 tiles (tilegemm.h) where the CPU has them (with a tape
 * too: LoRA's backward then takes its products through the frozen
 * matrices on the tiles, lora.c).  ns_bert_load turns them on when the
 * hidden and intermediate sizes are multiples of 32 (whole tiles: every
 * real model; the embeddings ≈ 1e−6 from float's, the same fingerprint);
 * on = true forces them on other sizes (zero-padded), on = false returns to
 * OpenBLAS.  Returns whether the tiles are in use. */
bool ns_bert_set_tiles(ns_bert *m, bool on);
/* Whether the tiles are in use. */
bool ns_bert_tiled(const ns_bert *m);
/* "amx bf16x3" or ns_blas_backend()'s name: what the matrix products run on. */
const char *ns_bert_backend(const ns_bert *m);
/* Threads for ns_bert_encode / _chunks (default 1): with the tiles in use,
 * batches run side by side, the same bits as one thread; without them the
 * batches run one by one and OpenBLAS's own threads share the products. */
void ns_bert_set_threads(ns_bert *m, int threads);
/* The threads an encode call runs on (1 without the tiles). */
int ns_bert_threads(const ns_bert *m);

/* Model input for one text: ids[0..max_seq_length), returns its length. */
int ns_bert_tokenize(const ns_bert *m, const char *text, size_t len, int32_t *ids);

/* Forward pass over n sequences given as token ids (ids[i][0..lens[i]),
 * 1 ≤ lens[i] ≤ max_seq_length; ids < vocab_size).  hidden (optional)
 * receives the last hidden states of all tokens, sequence after sequence
 * ([Σ lens, hidden]); out receives the pooled (and normalised) sentence
 * embeddings [n, hidden]. */
void ns_bert_forward(const ns_bert *m, int n, const int32_t *const *ids, const int *lens, float *hidden, float *out);

/* ---- low-rank adaptation (LoRA) of the attention projections -------------
 * Hu et al. 2021, as PEFT's LoraLayer (no dropout): a frozen projection
 * y = x·Wᵀ + b of target t (query, key, value of the self-attention, or its
 * output dense layer) becomes
 *     y = x·Wᵀ + b + scale · (x·Aᵀ)·Bᵀ,   A [rank × H], B [H × rank],
 * scale = alpha / rank.  With B = 0 (the usual initialisation) the delta is
 * exactly 0 and every output equals the frozen encoder's bit for bit.  The
 * adapter's tensors are owned elsewhere (learn/lora.h); the encoder only
 * reads them through this view. */
typedef enum ns_bert_target { NS_BERT_Q, NS_BERT_K, NS_BERT_V, NS_BERT_O, NS_BERT_NTARGETS } ns_bert_target;

typedef struct ns_bert_lora {
    int rank;
    float scale;
    /* A and B of (layer l, target t) at index l·NS_BERT_NTARGETS + t; NULL
     * for a projection without an adapter */
    const float *const *a;
    const float *const *b;
} ns_bert_lora;

/* What a training forward keeps for the backward pass (learn/lora.h), for
 * n sequences of T tokens in all (stacked as the forward stacks them).
 * Per layer l, in blocks of T rows:
 *   x     [layers + 1][T × H]   input of layer l; x[layers] = last hidden states
 *   qkv   [layers][T × 3H]      query, key, value (adapter included)
 *   ctx   [layers][T × H]       attention output, the output dense layer's input
 *   h1    [layers][T × H]       x + attention output (LayerNorm 1's input)
 *   u     [layers][T × I]       intermediate pre-activation (GELU's input)
 *   h2    [layers][T × H]       LayerNorm 2's input
 *   m1, r1, m2, r2 [layers][T]  the LayerNorms' means and 1/√(var + eps)
 *   xa    [layers][NS_BERT_NTARGETS][T × rank]  x·Aᵀ of each adapted projection
 *   pooled [n × H]              the pooled embedding before normalisation
 * The attention probabilities are not kept: ns_bert_attention_probs
 * recomputes them.  Grown on demand; zero-initialise, free with
 * ns_bert_tape_free. */
typedef struct ns_bert_tape {
    int n, layers, hidden, inter, rank;
    size_t T;
    int *lens; /* [n] */
    float *x, *qkv, *ctx, *h1, *u, *h2, *m1, *r1, *m2, *r2, *xa, *pooled;
    float *blk;
    size_t cap;
    int lens_cap;
} ns_bert_tape;
void ns_bert_tape_free(ns_bert_tape *t);

/* ns_bert_forward with an adapter (lora NULL: none) and, when tape is
 * non-NULL, the activations the backward pass needs.  With lora NULL and
 * tape NULL this is ns_bert_forward. */
void ns_bert_forward_lora(const ns_bert *m, const ns_bert_lora *lora, int n, const int32_t *const *ids,
                          const int *lens, ns_bert_tape *tape, float *hidden, float *out);

/* The attention probabilities of head h for one sequence of L tokens whose
 * query/key/value rows are qkv [L × 3H] (row stride 3H): p [L × L] =
 * row-softmax(q·kᵀ/√dh + MPNet's relative bias), exactly as the forward
 * pass computes them. */
void ns_bert_attention_probs(const ns_bert *m, int L, const float *qkv, int h, float *p);

/* Read-only view of layer l's frozen weights (PyTorch Linear layout
 * W[out × in]; wqkv stacks the query, key and value rows). */
typedef struct ns_bert_layer {
    const float *wqkv, *bqkv, *wo, *bo, *ln1_g, *ln1_b, *w1, *b1, *w2, *b2, *ln2_g, *ln2_b;
} ns_bert_layer;
void ns_bert_layer_weights(const ns_bert *m, int l, ns_bert_layer *out);

/* Folds an adapter into m's weights (W ← W + scale·B·A), for inference at
 * the frozen encoder's speed through every function of this header, and
 * mixes tag (an identity of the adapter's values) into m's fingerprint, so
 * that caches of the frozen model refuse the adapted one.  Call before m is
 * shared between threads. */
void ns_bert_merge_lora(ns_bert *m, const ns_bert_lora *lora, uint64_t tag);

/* Encodes texts[0..n) (lengths lens, or NULL for NUL-terminated strings)
 * into out [n, dim]: tokenizes, sorts by length and runs batches of at most
 * `batch` texts (≤ 0: 32), reporting to prog when non-NULL. */
void ns_bert_encode(const ns_bert *m, int n, const char *const *texts, const size_t *lens, int batch,
                    ns_progress *prog, float *out);
/* The same without truncation: a text longer than max_seq_length − 2 word
 * pieces is cut into consecutive windows of that many pieces (each with CLS
 * and SEP), every window is encoded, and the text's embedding is the mean of
 * its window embeddings (L2-normalised again when the model normalises).  A
 * text that fits in one window gets exactly ns_bert_encode's vector. */
void ns_bert_encode_chunks(const ns_bert *m, int n, const char *const *texts, const size_t *lens, int batch,
                           ns_progress *prog, float *out);

/* The relative-position bucket MPNet uses for key position minus query
 * position rel (exposed for tests). */
int ns_bert_relative_bucket(int rel, int num_buckets, int max_distance);

#endif
