/* safetensors.h — reading (and writing) .safetensors weight files:
 *
 *   u64 little-endian N | N bytes of JSON header | data
 *
 * The header maps tensor names to {"dtype", "shape", "data_offsets": [b, e]}
 * (offsets relative to the start of the data) plus an optional
 * "__metadata__" object of strings.  Opening maps the file read-only and
 * validates everything before any tensor is used: the header length against
 * the file size, the JSON, every entry's dtype, shape and offsets, that
 * e − b = elements × item size, and that every tensor lies inside the file —
 * a truncated download fails here, naming the file, the tensor and the byte
 * counts.  Tensors are read by name with the shape the caller expects and
 * converted to float32 (from F32, F16 or BF16). */
#ifndef NEXTSTATE_SAFETENSORS_H
#define NEXTSTATE_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>
#include "nextstate/util/error.h"

#define NS_ST_MAX_DIMS 8

typedef enum ns_st_dtype {
    NS_ST_F32, NS_ST_F16, NS_ST_BF16, NS_ST_F64,
    NS_ST_I64, NS_ST_I32, NS_ST_I16, NS_ST_I8, NS_ST_U8, NS_ST_BOOL
} ns_st_dtype;

typedef struct ns_st_tensor {
    char *name;
    ns_st_dtype dtype;
    int ndim;
    int64_t shape[NS_ST_MAX_DIMS];
    size_t begin, end; /* byte range within the data section */
} ns_st_tensor;

typedef struct ns_safetensors {
    char *path;
    const unsigned char *map; /* the whole file, mapped */
    size_t size;
    size_t data_start;        /* 8 + header length */
    int n;
    ns_st_tensor *tensors;    /* in header order */
} ns_safetensors;

/* Opens and validates path.  Errors: NS_ERR_IO (missing / unreadable),
 * NS_ERR_INPUT (too short, header length beyond the file, malformed JSON,
 * bad entry, unknown dtype, size/shape mismatch, data past the end). */
ns_status ns_st_open(ns_safetensors *st, const char *path, ns_error *err);
void ns_st_close(ns_safetensors *st);

/* The tensor named name, or NULL. */
const ns_st_tensor *ns_st_find(const ns_safetensors *st, const char *name);

/* Copies tensor `name` as float32 into out (room for the product of shape).
 * The tensor must have exactly shape[0..ndim) (NS_ERR_INPUT: "tensor X has
 * shape [a, b], expected [c, d]") and a float dtype; a missing tensor is
 * NS_ERR_INPUT naming it and the file. */
ns_status ns_st_read_f32(const ns_safetensors *st, const char *name, int ndim, const int64_t *shape, float *out,
                         ns_error *err);

/* Item size in bytes and the header spelling ("F32", …) of a dtype. */
size_t ns_st_dtype_size(ns_st_dtype t);
const char *ns_st_dtype_name(ns_st_dtype t);

/* Writes a safetensors file of float32 tensors names[i] with shapes
 * shapes[i][0..ndims[i]) and data[i] (atomically).  For fixtures and tests. */
ns_status ns_st_write_f32(const char *path, int n, const char *const *names, const int *ndims,
                          const int64_t *const *shapes, const float *const *data, ns_error *err);

/* float16 / bfloat16 bit patterns to float. */
float ns_f16_to_f32(uint16_t h);
float ns_bf16_to_f32(uint16_t h);

#endif
