/* params.h — a model's parameters as one block: named tensors carved from a
 * single float allocation by a size table, with matching gradient and
 * optimizer-moment blocks (same offsets), seeded initialisation, and
 * checkpoints.
 *
 * Use: declare every tensor (ns_params_add / _add_linear / _add_layernorm),
 * then ns_params_alloc, then ns_params_init_values(seed) or a checkpoint
 * load; get pointers with ns_params_at(p, p->data, name) (or p->grad, p->m,
 * p->v for the same tensor's gradient and moments).  Declaration errors
 * (bad shape, duplicate or over-long name, adding after alloc) are sticky
 * and reported by ns_params_alloc.
 *
 * Checkpoint file (all integers little-endian):
 *   "NSPARAMS"  magic, 8 bytes
 *   u32 version (NS_CKPT_VERSION)   u32 flags (bit 0: moments m, v follow)
 *   u32 tensor count                u32 meta length
 *   i64 step                        u64 float count (Σ tensor sizes)
 *   meta bytes (free text, e.g. the model's JSON configuration)
 *   per tensor: u16 name length, name bytes, u8 ndim, i64 shape[ndim]
 *   f32 data of every tensor in table order, packed (no padding)
 *   [f32 m, then f32 v, same order, when flag bit 0]
 *   u32 CRC-32 (IEEE) of every byte before it
 * Files are written atomically (temp file + rename). */
#ifndef NEXTSTATE_PARAMS_H
#define NEXTSTATE_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nextstate/util/error.h"

#define NS_PARAM_NAME_MAX 96
#define NS_PARAM_MAX_DIMS 4
#define NS_CKPT_MAGIC "NSPARAMS"
#define NS_CKPT_VERSION 1u

typedef enum ns_init_kind {
    NS_INIT_ZEROS,
    NS_INIT_ONES,
    NS_INIT_UNIFORM /* U(−bound, bound) */
} ns_init_kind;

typedef struct ns_tensor_info {
    char name[NS_PARAM_NAME_MAX];
    int ndim;
    int64_t shape[NS_PARAM_MAX_DIMS];
    size_t offset; /* in floats, into data / grad / m / v; a multiple of 16 */
    size_t count;  /* product of the shape */
    ns_init_kind init;
    float bound;
    bool no_decay; /* AdamW skips weight decay for this tensor */
} ns_tensor_info;

typedef struct ns_params {
    int n, cap;
    ns_tensor_info *t;
    size_t total;                 /* floats per block, tensors 64-byte aligned */
    float *data, *grad, *m, *v;   /* one allocation each; NULL before alloc */
    char bad[256];                /* first declaration error, "" if none */
} ns_params;

/* Empty table. */
void ns_params_init(ns_params *p);
void ns_params_free(ns_params *p);

/* Declares a tensor; returns its index (−1 after a declaration error). */
int ns_params_add(ns_params *p, const char *name, int ndim, const int64_t *shape, ns_init_kind init,
                  float bound);
/* torch.nn.Linear(in, out): "<prefix>.weight" [out×in] and, when bias,
 * "<prefix>.bias" [out], both U(−1/√in, 1/√in) (torch's default
 * Kaiming-uniform with a = √5).  Returns the weight's index. */
int ns_params_add_linear(ns_params *p, const char *prefix, int in, int out, bool bias);
/* torch.nn.LayerNorm(dim): "<prefix>.weight" = 1, "<prefix>.bias" = 0. */
int ns_params_add_layernorm(ns_params *p, const char *prefix, int dim);
/* Bounds for NS_INIT_UNIFORM: 1/√fan_in (torch Linear default) and
 * Xavier/Glorot √(6/(fan_in + fan_out)). */
float ns_init_bound_linear(int fan_in);
float ns_init_bound_xavier(int fan_in, int fan_out);

/* Allocates data, grad, m and v (zeroed); reports a declaration error as
 * NS_ERR_INTERNAL. */
ns_status ns_params_alloc(ns_params *p, ns_error *err);
/* Fills data from each tensor's init rule; tensor i draws from an ns_rng
 * seeded with hash(name, seed), so adding a tensor leaves the others'
 * values unchanged.  Zeroes grad, m, v. */
void ns_params_init_values(ns_params *p, uint64_t seed);
void ns_params_zero_grad(ns_params *p);

/* Index of the tensor called name, or −1. */
int ns_params_find(const ns_params *p, const char *name);
/* block + offset of tensor name (block is p->data, p->grad, p->m or p->v),
 * NULL when no such tensor. */
float *ns_params_at(const ns_params *p, float *block, const char *name);
/* Number of parameters (Σ counts, without alignment padding). */
size_t ns_params_count(const ns_params *p);

/* ---- checkpoints ----------------------------------------------------------- */

typedef struct ns_ckpt_opts {
    bool moments;     /* also store the AdamW moments m, v */
    int64_t step;     /* optimizer step (or epoch) to record */
    const char *meta; /* free text stored verbatim (NULL: none) */
} ns_ckpt_opts;

typedef struct ns_ckpt_info {
    bool moments;
    int64_t step;
    char *meta; /* malloc'ed, NUL-terminated ("" when none); free() it */
} ns_ckpt_info;

/* Writes p (allocated) to path atomically; o may be NULL (no moments,
 * step 0, no meta). */
ns_status ns_params_save(const ns_params *p, const char *path, const ns_ckpt_opts *o, ns_error *err);
/* Loads a checkpoint into an allocated p whose table must equal the file's:
 * same tensor names in the same order with the same shapes, else
 * NS_ERR_INPUT naming the tensor and both shapes.  Moments are loaded when
 * present (else m, v are zeroed).  A bad magic, version, truncation or CRC
 * mismatch is NS_ERR_INPUT too; p is unchanged on any error.  info may be
 * NULL. */
ns_status ns_params_load(ns_params *p, const char *path, ns_ckpt_info *info, ns_error *err);
/* ns_params_load for a file whose table starts with p's and holds more
 * tensors after it (another part of the model saved alongside, e.g. an
 * encoder's adapter, read with ns_params_read): those are left alone. */
ns_status ns_params_load_prefix(ns_params *p, const char *path, ns_ckpt_info *info, ns_error *err);
/* A new allocated table holding a's tensors, then b's (names must differ),
 * with their values and moments: for saving two parts in one file. */
ns_status ns_params_concat(ns_params *out, const ns_params *a, const ns_params *b, ns_error *err);
/* Builds a fresh table from the file (p uninitialised on entry), allocates
 * and loads it — for tools that inspect a checkpoint. */
ns_status ns_params_read(ns_params *p, const char *path, ns_ckpt_info *info, ns_error *err);
void ns_ckpt_info_free(ns_ckpt_info *info);

#endif
