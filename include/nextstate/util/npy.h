/* npy.h — NumPy .npy arrays (format 1.0, C order, little-endian) so that
 * numpy.load reads every array nextstate writes, and nextstate reads back
 * arrays made by NumPy.  Reads validate the magic, the header, the dtype and
 * that the file holds exactly shape × itemsize bytes. */
#ifndef NEXTSTATE_NPY_H
#define NEXTSTATE_NPY_H

#include <stddef.h>
#include <stdint.h>
#include "nextstate/util/error.h"
#include "nextstate/util/util.h"

typedef enum ns_dtype {
    NS_U8,  /* '|u1' */
    NS_I32, /* '<i4' */
    NS_I64, /* '<i8' */
    NS_U64, /* '<u8' */
    NS_F32, /* '<f4' */
    NS_F64  /* '<f8' */
} ns_dtype;

#define NS_NPY_MAX_DIMS 4

typedef struct ns_array {
    ns_dtype dtype;
    int ndim;
    int64_t shape[NS_NPY_MAX_DIMS];
    void *data; /* owned; shape product × itemsize bytes */
} ns_array;

size_t ns_dtype_size(ns_dtype t);
/* Number of elements (product of the shape; 1 for ndim 0). */
int64_t ns_array_count(const ns_array *a);
/* Allocates a zeroed array (ndim ≤ 4). */
void ns_array_init(ns_array *a, ns_dtype t, int ndim, const int64_t *shape);
void ns_array_free(ns_array *a);

/* Serialises a into out (header + data). */
void ns_npy_encode(const ns_array *a, ns_buf *out);
/* Parses a .npy image; path names it in errors. */
ns_status ns_npy_decode(ns_array *a, const void *data, size_t len, const char *path, ns_error *err);
/* Writes a atomically; *crc (if non-NULL) receives the CRC-32 of the file. */
ns_status ns_npy_write(const char *path, const ns_array *a, uint32_t *crc, ns_error *err);
/* Reads path; *crc (if non-NULL) receives the CRC-32 of the file's bytes. */
ns_status ns_npy_read(const char *path, ns_array *a, uint32_t *crc, ns_error *err);

/* A directory of arrays listed in a JSON "files" object that records each
 * file's byte size and CRC-32 (datasets, splits). */
typedef struct ns_npy_entry {
    const char *file; /* name inside the directory */
    ns_array *a;
} ns_npy_entry;
/* Writes every entry into dir, then appends `"files": {…}` (no trailing
 * comma) to json. */
ns_status ns_npy_write_listed(const char *dir, const ns_npy_entry *e, int n, ns_buf *json, ns_error *err);
/* Reads every entry from dir and checks its size and CRC-32 against
 * `files` (the JSON object written above; listing names the JSON file in
 * errors).  A missing, truncated or corrupted file is NS_ERR_INPUT/IO naming
 * it.  On error, arrays read so far stay in the entries (caller frees). */
struct ns_json;
ns_status ns_npy_read_listed(const char *dir, const struct ns_json *files, const char *listing, ns_npy_entry *e, int n,
                             ns_error *err);

/* CRC-32 (IEEE, as zlib's crc32): pass 0 to start, the previous value to continue. */
uint32_t ns_crc32(uint32_t crc, const void *data, size_t len);
/* CRC-32C (Castagnoli, as iSCSI's and ext4's), the same way: with the SSE4.2
 * instruction where the CPU has it (several GB/s), else from a table;
 * ns_crc32c_portable always takes the table (tests compare the two). */
uint32_t ns_crc32c(uint32_t crc, const void *data, size_t len);
uint32_t ns_crc32c_portable(uint32_t crc, const void *data, size_t len);

#endif
