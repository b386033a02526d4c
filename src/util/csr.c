/* csr.c — sparse row matrices: building row by row, densifying rows, and
 * NumPy files (PREFIX_indptr.npy i64 [nrows+1], PREFIX_indices.npy i32
 * [nnz], PREFIX_values.npy f32 [nnz], PREFIX_shape.npy i64 [2]) that
 * scipy.sparse.csr_array((values, indices, indptr), shape) reads directly.
 *
 * A column outside [0, ncols) passed to ns_csr_add_row is a caller bug: the
 * process aborts with a message (as ns_xmalloc does on exhaustion).
 * Loading accepts indices as i32 or i64 and values as f32 or f64 (what
 * scipy / NumPy users tend to write) and converts them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/util/csr.h"
#include "nextstate/util/npy.h"
#include "nextstate/util/util.h"

void ns_csr_init(ns_csr *m, int64_t ncols)
{
    memset(m, 0, sizeof *m);
    m->ncols = ncols;
    m->indptr = ns_xcalloc(1, sizeof *m->indptr);
}

void ns_csr_free(ns_csr *m)
{
    free(m->indptr);
    free(m->indices);
    free(m->values);
    memset(m, 0, sizeof *m);
}

static int64_t ptr_cap(int64_t nrows)
{
    int64_t pc = 1;
    while (pc < nrows + 1) pc *= 2;
    return pc;
}

/* Room for the row pointer of one more row and need more entries. */
static void reserve(ns_csr *m, int64_t need)
{
    if (m->nnz + need > m->cap) {
        int64_t c = m->cap ? m->cap : 64;
        while (c < m->nnz + need) c *= 2;
        m->indices = ns_xrealloc(m->indices, (size_t)c * sizeof *m->indices);
        m->values = ns_xrealloc(m->values, (size_t)c * sizeof *m->values);
        m->cap = c;
    }
    /* indptr's capacity is implicit: the next power of two at or above
     * nrows + 1 (ns_csr_init and ns_csr_load keep it so). */
    int64_t pc = ptr_cap(m->nrows);
    if (m->nrows + 2 > pc) m->indptr = ns_xrealloc(m->indptr, (size_t)(pc * 2) * sizeof *m->indptr);
}

/* Sorts idx/val (n entries) by idx: insertion sort for short runs, else a
 * heap sort (in place, no allocation, O(n log n)). */
static void sift(int32_t *idx, float *val, int64_t root, int64_t n)
{
    for (;;) {
        int64_t c = 2 * root + 1;
        if (c >= n) return;
        if (c + 1 < n && idx[c + 1] > idx[c]) c++;
        if (idx[root] >= idx[c]) return;
        int32_t ti = idx[root];
        idx[root] = idx[c];
        idx[c] = ti;
        float tv = val[root];
        val[root] = val[c];
        val[c] = tv;
        root = c;
    }
}

static void sort_pairs(int32_t *idx, float *val, int64_t n)
{
    if (n <= 32) {
        for (int64_t i = 1; i < n; i++) {
            int32_t ci = idx[i];
            float cv = val[i];
            int64_t j = i;
            while (j > 0 && idx[j - 1] > ci) {
                idx[j] = idx[j - 1];
                val[j] = val[j - 1];
                j--;
            }
            idx[j] = ci;
            val[j] = cv;
        }
        return;
    }
    for (int64_t i = n / 2 - 1; i >= 0; i--) sift(idx, val, i, n);
    for (int64_t e = n - 1; e > 0; e--) {
        int32_t ti = idx[0];
        idx[0] = idx[e];
        idx[e] = ti;
        float tv = val[0];
        val[0] = val[e];
        val[e] = tv;
        sift(idx, val, 0, e);
    }
}

void ns_csr_add_row(ns_csr *m, const int32_t *cols, const float *vals, int n)
{
    if (n < 0) n = 0;
    reserve(m, n);
    int32_t *idx = m->indices + m->nnz;
    float *val = m->values + m->nnz;
    bool sorted = true;
    for (int i = 0; i < n; i++) {
        if (cols[i] < 0 || cols[i] >= m->ncols) {
            fprintf(stderr, "nextstate: internal error: ns_csr_add_row: column %d outside [0, %lld)\n", (int)cols[i],
                    (long long)m->ncols);
            abort();
        }
        if (i && cols[i] <= cols[i - 1]) sorted = false;
    }
    if (n) {
        memcpy(idx, cols, (size_t)n * sizeof *idx);
        memcpy(val, vals, (size_t)n * sizeof *val);
    }
    if (!sorted) sort_pairs(idx, val, n);
    /* merge duplicates, drop zeros */
    int64_t k = 0;
    for (int64_t i = 0; i < n;) {
        int32_t c = idx[i];
        float s = val[i++];
        while (i < n && idx[i] == c) s += val[i++];
        if (s != 0.0f) {
            idx[k] = c;
            val[k] = s;
            k++;
        }
    }
    m->nnz += k;
    m->nrows++;
    m->indptr[m->nrows] = m->nnz;
}

void ns_csr_row_dense(const ns_csr *m, int64_t i, float *out)
{
    memset(out, 0, (size_t)m->ncols * sizeof *out);
    for (int64_t p = m->indptr[i]; p < m->indptr[i + 1]; p++) out[m->indices[p]] += m->values[p];
}

/* ---- files --------------------------------------------------------------- */

static void part_path(ns_buf *b, const char *dir, const char *prefix, const char *part)
{
    b->len = 0;
    ns_buf_printf(b, "%s/%s_%s.npy", dir, prefix, part);
}

ns_status ns_csr_save(const ns_csr *m, const char *dir, const char *prefix, ns_error *err)
{
    ns_status st = ns_mkdir_p(dir, err);
    if (st) return st;
    int64_t shape_data[2] = {m->nrows, m->ncols};
    ns_array parts[4] = {
        {NS_I64, 1, {m->nrows + 1}, m->indptr},
        {NS_I32, 1, {m->nnz}, m->indices},
        {NS_F32, 1, {m->nnz}, m->values},
        {NS_I64, 1, {2}, shape_data},
    };
    static const char *const names[4] = {"indptr", "indices", "values", "shape"};
    ns_buf path;
    ns_buf_init(&path);
    for (int i = 0; i < 4 && !st; i++) {
        part_path(&path, dir, prefix, names[i]);
        st = ns_npy_write(path.data, &parts[i], NULL, err);
    }
    ns_buf_free(&path);
    return st;
}

/* Reads a 1-d array of one of the allowed dtypes into a fresh buffer of
 * dtype want (converted).  len receives its length. */
static ns_status read_vec(const char *path, ns_dtype want, ns_dtype alt, void **out, int64_t *len, ns_error *err)
{
    ns_array a;
    ns_status st = ns_npy_read(path, &a, NULL, err);
    if (st) return st;
    if (a.ndim != 1 || (a.dtype != want && a.dtype != alt)) {
        ns_array_free(&a);
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "expected a 1-d array of %s", want == NS_I64 ? "int64"
                                                                                        : want == NS_I32 ? "int32 or int64"
                                                                                                         : "float32 or float64");
    }
    int64_t n = a.shape[0];
    *len = n;
    if (a.dtype == want) {
        *out = a.data;
        a.data = NULL;
    } else if (want == NS_I32) {
        int32_t *d = ns_xmalloc((size_t)(n ? n : 1) * sizeof *d);
        const int64_t *s = a.data;
        for (int64_t i = 0; i < n; i++) {
            if (s[i] < INT32_MIN || s[i] > INT32_MAX) {
                free(d);
                ns_array_free(&a);
                return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "column index %lld at entry %lld does not fit in 32 bits",
                                    (long long)s[i], (long long)i);
            }
            d[i] = (int32_t)s[i];
        }
        *out = d;
    } else { /* f64 -> f32 */
        float *d = ns_xmalloc((size_t)(n ? n : 1) * sizeof *d);
        const double *s = a.data;
        for (int64_t i = 0; i < n; i++) d[i] = (float)s[i];
        *out = d;
    }
    ns_array_free(&a);
    return NS_OK;
}

ns_status ns_csr_load(ns_csr *m, const char *dir, const char *prefix, ns_error *err)
{
    memset(m, 0, sizeof *m);
    ns_buf path;
    ns_buf_init(&path);
    void *shape = NULL, *indptr = NULL, *indices = NULL, *values = NULL;
    int64_t nshape = 0, nptr = 0, nidx = 0, nval = 0;
    ns_status st;
    part_path(&path, dir, prefix, "shape");
    if ((st = read_vec(path.data, NS_I64, NS_I64, &shape, &nshape, err))) goto fail;
    const int64_t *sh = shape;
    if (nshape != 2 || sh[0] < 0 || sh[1] < 0 || sh[1] > (int64_t)INT32_MAX + 1) {
        st = ns_error_set(err, NS_ERR_INPUT, path.data, 0, 0, "expected [nrows, ncols] (two non-negative int64)");
        goto fail;
    }
    part_path(&path, dir, prefix, "indptr");
    if ((st = read_vec(path.data, NS_I64, NS_I64, &indptr, &nptr, err))) goto fail;
    const int64_t *ip = indptr;
    if (nptr != sh[0] + 1) {
        st = ns_error_set(err, NS_ERR_INPUT, path.data, 0, 0, "has %lld entries; the shape file says %lld rows (expected %lld)",
                          (long long)nptr, (long long)sh[0], (long long)(sh[0] + 1));
        goto fail;
    }
    if (ip[0] != 0) {
        st = ns_error_set(err, NS_ERR_INPUT, path.data, 0, 0, "first entry is %lld, not 0", (long long)ip[0]);
        goto fail;
    }
    for (int64_t i = 0; i < sh[0]; i++)
        if (ip[i + 1] < ip[i]) {
            st = ns_error_set(err, NS_ERR_INPUT, path.data, 0, 0, "decreases at row %lld", (long long)i);
            goto fail;
        }
    part_path(&path, dir, prefix, "indices");
    if ((st = read_vec(path.data, NS_I32, NS_I64, &indices, &nidx, err))) goto fail;
    if (nidx != ip[sh[0]]) {
        st = ns_error_set(err, NS_ERR_INPUT, path.data, 0, 0, "has %lld entries; indptr ends at %lld", (long long)nidx,
                          (long long)ip[sh[0]]);
        goto fail;
    }
    const int32_t *ix = indices;
    for (int64_t i = 0; i < sh[0]; i++)
        for (int64_t p = ip[i]; p < ip[i + 1]; p++) {
            if (ix[p] < 0 || ix[p] >= sh[1]) {
                st = ns_error_set(err, NS_ERR_INPUT, path.data, 0, 0, "row %lld: column %d outside [0, %lld)", (long long)i,
                                  (int)ix[p], (long long)sh[1]);
                goto fail;
            }
            if (p > ip[i] && ix[p] <= ix[p - 1]) {
                st = ns_error_set(err, NS_ERR_INPUT, path.data, 0, 0, "row %lld: columns not strictly ascending", (long long)i);
                goto fail;
            }
        }
    part_path(&path, dir, prefix, "values");
    if ((st = read_vec(path.data, NS_F32, NS_F64, &values, &nval, err))) goto fail;
    if (nval != nidx) {
        st = ns_error_set(err, NS_ERR_INPUT, path.data, 0, 0, "has %lld entries; the indices file has %lld", (long long)nval,
                          (long long)nidx);
        goto fail;
    }
    m->nrows = sh[0];
    m->ncols = sh[1];
    m->indptr = ns_xrealloc(indptr, (size_t)ptr_cap(sh[0]) * sizeof *m->indptr);
    m->indices = indices;
    m->values = values;
    m->nnz = m->cap = nidx;
    free(shape);
    ns_buf_free(&path);
    return NS_OK;
fail:
    free(shape);
    free(indptr);
    free(indices);
    free(values);
    ns_buf_free(&path);
    memset(m, 0, sizeof *m);
    return st;
}
