/* features.c — feature rows and files, row modes, the training split's
 * touched states and actions (see features.h). */
#include "nextstate/encode/features.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nextstate/util/json.h"
#include "nextstate/util/npy.h"

void ns_features_free(ns_features *f)
{
    if (!f) return;
    free(f->dense);
    if (f->sparse) ns_csr_free(&f->csr);
    memset(f, 0, sizeof *f);
}

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

const char *ns_action_rows_name(ns_action_rows m) { return m == NS_AROWS_STATE_ACTION ? "state-action" : "action"; }

int ns_action_rows_parse(const char *s)
{
    if (!strcmp(s, "action")) return NS_AROWS_ACTION;
    if (!strcmp(s, "state-action")) return NS_AROWS_STATE_ACTION;
    return -1;
}

#define ROWS_FORMAT "nextstate-feature-rows"

static ns_status load_csr(ns_features *f, const char *spec, ns_error *err);

/* SPEC.rows.json, SPEC without a trailing ".npy" (malloc'ed). */
static char *rows_path(const char *spec)
{
    size_t n = strlen(spec);
    if (ends_with(spec, ".npy")) n -= 4;
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_printf(&b, "%.*s.rows.json", (int)n, spec);
    return b.data;
}

ns_status ns_features_rows_save(const char *spec, ns_action_rows m, int64_t nrows, ns_error *err)
{
    char *path = rows_path(spec);
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_printf(&b, "{\"format\": \"%s\", \"version\": 1, \"rows\": \"%s\", \"count\": %lld}\n", ROWS_FORMAT,
                  ns_action_rows_name(m), (long long)nrows);
    ns_status st = ns_write_file_atomic(path, b.data, b.len, err);
    ns_buf_free(&b);
    free(path);
    return st;
}

/* Reads the row mode of spec's sidecar into f->rows (action mode without one). */
static ns_status load_rows_sidecar(ns_features *f, const char *spec, ns_error *err)
{
    char *path = rows_path(spec);
    struct stat sb;
    f->rows = NS_AROWS_ACTION;
    if (stat(path, &sb) != 0) {
        free(path);
        return NS_OK;
    }
    ns_json j;
    ns_status st = ns_json_read(&j, path, err);
    if (st) {
        free(path);
        return st;
    }
    const char *fmt = NULL, *rows = NULL;
    int64_t count = -1;
    if (!ns_json_get_str(&j, "format", &fmt) || strcmp(fmt, ROWS_FORMAT) || !ns_json_get_str(&j, "rows", &rows) ||
        ns_action_rows_parse(rows) < 0 || !ns_json_get_int(&j, "count", &count))
        st = ns_error_set(
            err, NS_ERR_INPUT, path, 0, 0,
            "not a feature-rows file (expected {\"format\": \"%s\", \"rows\": \"action\"|\"state-action\", "
            "\"count\": N})",
            ROWS_FORMAT);
    else if (count != f->nrows)
        st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "says %lld rows; the features beside it (%s) have %lld",
                          (long long)count, spec, (long long)f->nrows);
    else f->rows = (ns_action_rows)ns_action_rows_parse(rows);
    ns_json_free(&j);
    free(path);
    return st;
}

ns_status ns_features_load(ns_features *f, const char *spec, ns_error *err)
{
    ns_status st = NS_OK;
    memset(f, 0, sizeof *f);
    if (ends_with(spec, ".npy")) {
        ns_array a;
        st = ns_npy_read(spec, &a, NULL, err);
        if (st) return st;
        if (a.dtype != NS_F32 || a.ndim != 2) {
            int nd = a.ndim;
            bool f32 = a.dtype == NS_F32;
            ns_array_free(&a);
            return ns_error_set(err, NS_ERR_INPUT, spec, 0, 0,
                                "dense features must be float32 [rows, dim] (got %d dimension%s%s)", nd,
                                nd == 1 ? "" : "s", f32 ? "" : ", not float32");
        }
        f->nrows = a.shape[0];
        f->dim = a.shape[1];
        f->dense = a.data;
    } else {
        st = load_csr(f, spec, err);
    }
    if (!st) st = load_rows_sidecar(f, spec, err);
    if (st) ns_features_free(f);
    return st;
}

static ns_status load_csr(ns_features *f, const char *spec, ns_error *err)
{
    const char *slash = strrchr(spec, '/');
    char dir[4096];
    const char *prefix = spec;
    if (slash) {
        size_t n = (size_t)(slash - spec);
        if (n >= sizeof dir) return ns_error_set(err, NS_ERR_USAGE, spec, 0, 0, "path too long");
        memcpy(dir, spec, n);
        dir[n] = 0;
        if (!n) strcpy(dir, "/");
        prefix = slash + 1;
    } else {
        strcpy(dir, ".");
    }
    ns_status st = ns_csr_load(&f->csr, dir, prefix, err);
    if (st) {
        memset(f, 0, sizeof *f);
        return st;
    }
    f->sparse = true;
    f->nrows = f->csr.nrows;
    f->dim = f->csr.ncols;
    return NS_OK;
}

bool ns_features_rows_equal(const ns_features *f, int64_t a, int64_t b)
{
    if (a == b) return true;
    if (!f->sparse) {
        size_t D = (size_t)f->dim;
        return memcmp(f->dense + (size_t)a * D, f->dense + (size_t)b * D, D * sizeof(float)) == 0;
    }
    const ns_csr *m = &f->csr;
    int64_t na = m->indptr[a + 1] - m->indptr[a], nb = m->indptr[b + 1] - m->indptr[b];
    if (na != nb) return false;
    if (na == 0) return true;
    size_t n = (size_t)na;
    return memcmp(m->indices + m->indptr[a], m->indices + m->indptr[b], n * sizeof(int32_t)) == 0 &&
           memcmp(m->values + m->indptr[a], m->values + m->indptr[b], n * sizeof(float)) == 0;
}

ns_status ns_features_stack(ns_features *out, ns_features *a, int n, ns_error *err)
{
    memset(out, 0, sizeof *out);
    if (n == 1) {
        *out = a[0];
        memset(&a[0], 0, sizeof a[0]);
        return NS_OK;
    }
    for (int i = 1; i < n; i++)
        if (a[i].sparse != a[0].sparse || a[i].dim != a[0].dim || a[i].rows != a[0].rows) {
            return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                                "features of dataset %d (%s, width %lld, %s rows) differ from dataset 0's (%s, width "
                                "%lld, %s rows)",
                                i, a[i].sparse ? "sparse" : "dense", (long long)a[i].dim,
                                ns_action_rows_name(a[i].rows), a[0].sparse ? "sparse" : "dense", (long long)a[0].dim,
                                ns_action_rows_name(a[0].rows));
        }
    out->sparse = a[0].sparse;
    out->dim = a[0].dim;
    out->rows = a[0].rows;
    if (!out->sparse) {
        int64_t rows = 0;
        for (int i = 0; i < n; i++) rows += a[i].nrows;
        out->dense = ns_xmalloc((size_t)(rows ? rows : 1) * (size_t)out->dim * sizeof(float));
        int64_t r = 0;
        for (int i = 0; i < n; i++) {
            memcpy(out->dense + (size_t)r * out->dim, a[i].dense, (size_t)a[i].nrows * out->dim * sizeof(float));
            r += a[i].nrows;
        }
        out->nrows = rows;
    } else {
        ns_csr_init(&out->csr, out->dim);
        for (int i = 0; i < n; i++) {
            const ns_csr *c = &a[i].csr;
            for (int64_t r = 0; r < c->nrows; r++)
                ns_csr_add_row(&out->csr, c->indices + c->indptr[r], c->values + c->indptr[r],
                               (int)(c->indptr[r + 1] - c->indptr[r]));
        }
        out->nrows = out->csr.nrows;
    }
    for (int i = 0; i < n; i++) ns_features_free(&a[i]);
    return NS_OK;
}

int64_t *ns_action_offsets(const ns_dataset *ds)
{
    int64_t *o = ns_xmalloc((size_t)(ds->nproblems + 1) * sizeof *o);
    o[0] = 0;
    for (int p = 0; p < ds->nproblems; p++) o[p + 1] = o[p] + ds->problems[p].nops;
    return o;
}


/* ---- what the training split touches ---------------------------------------- */

void ns_train_touch_init(ns_train_touch *t, const int64_t *refs, int64_t nrefs, int d, const ns_dataset *ds)
{
    memset(t, 0, sizeof *t);
    int64_t N = ns_dataset_nstates(ds);
    int64_t *off = ns_action_offsets(ds);
    t->nproblems = ds->nproblems;
    t->problem = ns_xcalloc((size_t)ds->nproblems + 1, sizeof(bool));
    uint8_t *smark = ns_xcalloc((size_t)N + 1, 1), *amark = ns_xcalloc((size_t)off[ds->nproblems] + 1, 1);
    t->trans = ns_xmalloc((size_t)(nrefs ? nrefs : 1) * sizeof *t->trans);
    t->actions = ns_xmalloc((size_t)(2 * nrefs + 1) * sizeof *t->actions);
    for (int64_t r = 0; r < nrefs; r++) {
        if (refs[2 * r] != d) continue;
        const int32_t *tr = ns_dataset_transition(ds, refs[2 * r + 1]);
        t->trans[t->ntrans++] = refs[2 * r + 1];
        t->problem[tr[0]] = true;
        smark[tr[1]] = smark[tr[3]] = 1;
        int64_t key = off[tr[0]] + tr[2];
        if (amark[key]) continue;
        amark[key] = 1;
        t->actions[2 * t->nactions] = tr[0];
        t->actions[2 * t->nactions + 1] = tr[2];
        t->nactions++;
    }
    for (int64_t s = 0; s < N; s++) t->nstates += smark[s];
    t->states = ns_xmalloc((size_t)(t->nstates ? t->nstates : 1) * sizeof *t->states);
    int64_t m = 0;
    for (int64_t s = 0; s < N; s++)
        if (smark[s]) t->states[m++] = s;
    free(smark);
    free(amark);
    free(off);
}

void ns_train_touch_free(ns_train_touch *t)
{
    free(t->trans);
    free(t->states);
    free(t->actions);
    free(t->problem);
    memset(t, 0, sizeof *t);
}
