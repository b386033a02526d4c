/* test_csr.c — sparse rows: building (any order, duplicates summed, zeros
 * dropped), densifying, .npy round trips that scipy reads, conversions of
 * i64 / f64 inputs, and clear errors for inconsistent files. */
#include <unistd.h>
#include "nextstate/util/csr.h"
#include "nextstate/util/npy.h"
#include "nextstate/util/util.h"
#include "test.h"

static char tmpdir[256];

static void test_add_rows(void)
{
    ns_csr m;
    ns_csr_init(&m, 10);
    int32_t c0[] = {5, 1, 5, 3, 9};
    float v0[] = {1.0f, 2.0f, 0.5f, 0.0f, -1.0f};
    ns_csr_add_row(&m, c0, v0, 5); /* 1:2, 5:1.5, 9:-1 (3 is zero) */
    ns_csr_add_row(&m, NULL, NULL, 0);
    int32_t c2[] = {2, 2};
    float v2[] = {1.0f, -1.0f};
    ns_csr_add_row(&m, c2, v2, 2); /* sums to zero: an empty row */
    int32_t c3[] = {0, 4, 7};
    float v3[] = {1, 2, 3};
    ns_csr_add_row(&m, c3, v3, 3);
    CHECK_EQ_INT(m.nrows, 4);
    CHECK_EQ_INT(m.nnz, 6);
    int64_t want_ptr[] = {0, 3, 3, 3, 6};
    for (int i = 0; i < 5; i++) CHECK_EQ_INT(m.indptr[i], want_ptr[i]);
    int32_t want_idx[] = {1, 5, 9, 0, 4, 7};
    float want_val[] = {2, 1.5f, -1, 1, 2, 3};
    for (int i = 0; i < 6; i++) {
        CHECK_EQ_INT(m.indices[i], want_idx[i]);
        CHECK(m.values[i] == want_val[i]);
    }
    float d[10];
    ns_csr_row_dense(&m, 0, d);
    CHECK(d[1] == 2 && d[5] == 1.5f && d[9] == -1 && d[0] == 0 && d[3] == 0);
    ns_csr_row_dense(&m, 1, d);
    for (int i = 0; i < 10; i++) CHECK(d[i] == 0);
    ns_csr_free(&m);
}

/* Long rows in random order with duplicates (the heap-sort path) against a
 * dense accumulation. */
static void test_long_rows(void)
{
    ns_rng r;
    ns_rng_seed(&r, 7);
    ns_csr m;
    ns_csr_init(&m, 300);
    enum { ROWS = 200 };
    float *dense = calloc(ROWS * 300, sizeof(float));
    for (int i = 0; i < ROWS; i++) {
        int n = (int)ns_rng_below(&r, 400);
        int32_t *c = malloc((size_t)(n + 1) * sizeof *c);
        float *v = malloc((size_t)(n + 1) * sizeof *v);
        for (int k = 0; k < n; k++) {
            c[k] = (int32_t)ns_rng_below(&r, 300);
            v[k] = (float)(int)ns_rng_below(&r, 7) - 3.0f; /* integers: sums are exact */
            dense[i * 300 + c[k]] += v[k];
        }
        ns_csr_add_row(&m, c, v, n);
        free(c);
        free(v);
    }
    CHECK_EQ_INT(m.nrows, ROWS);
    float row[300];
    int bad = 0;
    for (int i = 0; i < ROWS; i++) {
        for (int64_t p = m.indptr[i]; p < m.indptr[i + 1]; p++) {
            if (p > m.indptr[i] && m.indices[p] <= m.indices[p - 1]) bad++;
            if (m.values[p] == 0) bad++;
        }
        ns_csr_row_dense(&m, i, row);
        for (int j = 0; j < 300; j++)
            if (row[j] != dense[i * 300 + j]) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    free(dense);
    ns_csr_free(&m);
}

static void test_save_load(void)
{
    ns_csr m;
    ns_csr_init(&m, 6);
    for (int i = 0; i < 37; i++) {
        int32_t c[3] = {i % 6, (i * 5) % 6, (i + 2) % 6};
        float v[3] = {(float)i, 0.25f, -1.5f};
        ns_csr_add_row(&m, c, v, i % 4 == 0 ? 0 : 3);
    }
    ns_error e;
    CHECK(ns_csr_save(&m, tmpdir, "x", &e) == NS_OK);
    ns_csr b;
    ns_status st = ns_csr_load(&b, tmpdir, "x", &e);
    if (st) printf("  load: %s: %s\n", e.file, e.msg);
    CHECK(st == NS_OK);
    CHECK_EQ_INT(b.nrows, m.nrows);
    CHECK_EQ_INT(b.ncols, 6);
    CHECK_EQ_INT(b.nnz, m.nnz);
    CHECK(memcmp(b.indptr, m.indptr, (size_t)(m.nrows + 1) * sizeof *m.indptr) == 0);
    CHECK(memcmp(b.indices, m.indices, (size_t)m.nnz * sizeof *m.indices) == 0);
    CHECK(memcmp(b.values, m.values, (size_t)m.nnz * sizeof *m.values) == 0);
    /* rows can be appended to a loaded matrix */
    for (int i = 0; i < 50; i++) {
        int32_t c[2] = {5, 0};
        float v[2] = {1, 2};
        ns_csr_add_row(&b, c, v, 2);
    }
    CHECK_EQ_INT(b.nrows, m.nrows + 50);
    CHECK_EQ_INT(b.indptr[b.nrows], m.nnz + 100);
    CHECK_EQ_INT(b.indices[b.nnz - 2], 0);
    ns_csr_free(&b);
    /* shapes as numpy sees them */
    char path[400];
    ns_array a;
    snprintf(path, sizeof path, "%s/x_shape.npy", tmpdir);
    CHECK(ns_npy_read(path, &a, NULL, &e) == NS_OK);
    CHECK(a.dtype == NS_I64 && a.ndim == 1 && a.shape[0] == 2);
    CHECK(((int64_t *)a.data)[0] == 37 && ((int64_t *)a.data)[1] == 6);
    ns_array_free(&a);
    ns_csr_free(&m);
}

static void write_arr(const char *name, ns_dtype t, int64_t n, const void *data)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s.npy", tmpdir, name);
    ns_array a;
    int64_t shape[1] = {n};
    ns_array_init(&a, t, 1, shape);
    memcpy(a.data, data, (size_t)n * ns_dtype_size(t));
    ns_error e;
    CHECK(ns_npy_write(path, &a, NULL, &e) == NS_OK);
    ns_array_free(&a);
}

/* scipy-style files: int64 indices and float64 values are converted. */
static void test_load_conversions(void)
{
    int64_t shape[2] = {2, 4}, ptr[3] = {0, 2, 3}, idx[3] = {1, 3, 0};
    double val[3] = {0.5, -2.0, 3.25};
    write_arr("y_shape", NS_I64, 2, shape);
    write_arr("y_indptr", NS_I64, 3, ptr);
    write_arr("y_indices", NS_I64, 3, idx);
    write_arr("y_values", NS_F64, 3, val);
    ns_csr m;
    ns_error e;
    CHECK(ns_csr_load(&m, tmpdir, "y", &e) == NS_OK);
    CHECK(m.nrows == 2 && m.ncols == 4 && m.nnz == 3);
    CHECK(m.indices[1] == 3 && m.values[1] == -2.0f && m.values[2] == 3.25f);
    ns_csr_free(&m);
}

static void expect_error(const char *prefix, const char *needle)
{
    ns_csr m;
    ns_error e;
    ns_status st = ns_csr_load(&m, tmpdir, prefix, &e);
    CHECK(st != NS_OK);
    if (st != NS_OK && !strstr(e.msg, needle)) printf("  %s: unexpected message: %s: %s\n", prefix, e.file, e.msg);
    if (st != NS_OK) CHECK(strstr(e.msg, needle) != NULL);
    CHECK(m.indptr == NULL && m.nrows == 0);
}

static void test_load_errors(void)
{
    int64_t shape[2] = {2, 4}, ptr[3] = {0, 2, 3}, bad_ptr[3] = {0, 3, 2}, short_ptr[2] = {0, 2};
    int32_t idx[3] = {1, 3, 0}, unsorted[3] = {3, 1, 0}, out_of_range[3] = {1, 4, 0};
    float val[3] = {1, 2, 3};
    /* missing file */
    expect_error("nothing", "");
    /* indptr decreasing */
    write_arr("a_shape", NS_I64, 2, shape);
    write_arr("a_indptr", NS_I64, 3, bad_ptr);
    write_arr("a_indices", NS_I32, 3, idx);
    write_arr("a_values", NS_F32, 3, val);
    expect_error("a", "decreases");
    /* indptr length disagrees with the shape */
    write_arr("b_shape", NS_I64, 2, shape);
    write_arr("b_indptr", NS_I64, 2, short_ptr);
    write_arr("b_indices", NS_I32, 3, idx);
    write_arr("b_values", NS_F32, 3, val);
    expect_error("b", "rows");
    /* columns not ascending, out of range */
    write_arr("c_shape", NS_I64, 2, shape);
    write_arr("c_indptr", NS_I64, 3, ptr);
    write_arr("c_indices", NS_I32, 3, unsorted);
    write_arr("c_values", NS_F32, 3, val);
    expect_error("c", "ascending");
    write_arr("c_indices", NS_I32, 3, out_of_range);
    expect_error("c", "outside");
    /* values of the wrong length, wrong dtype */
    write_arr("c_indices", NS_I32, 3, idx);
    write_arr("c_values", NS_F32, 2, val);
    expect_error("c", "entries");
    write_arr("c_values", NS_I32, 3, idx);
    expect_error("c", "float32");
    /* truncated file */
    write_arr("c_values", NS_F32, 3, val);
    char path[400];
    snprintf(path, sizeof path, "%s/c_values.npy", tmpdir);
    CHECK(truncate(path, 100) == 0);
    ns_csr m;
    ns_error e;
    CHECK(ns_csr_load(&m, tmpdir, "c", &e) == NS_ERR_INPUT);
    CHECK(strstr(e.file, "c_values.npy") != NULL);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ns_test_csr_%ld", (long)getpid());
    ns_error e;
    ns_mkdir_p(tmpdir, &e);
    NS_RUN(test_add_rows);
    NS_RUN(test_long_rows);
    NS_RUN(test_save_load);
    NS_RUN(test_load_conversions);
    NS_RUN(test_load_errors);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) printf("could not remove %s\n", tmpdir);
    return ns_test_summary("test_csr");
}
