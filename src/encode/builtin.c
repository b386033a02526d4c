/* builtin.c — vocabularies and the built-in bag-of-literals encoder (see
 * builtin.h). */
#include "nextstate/encode/builtin.h"

#include <stdlib.h>
#include <string.h>

void ns_vocab_init(ns_vocab *v)
{
    memset(v, 0, sizeof *v);
    ns_strmap_init(&v->map);
}

void ns_vocab_free(ns_vocab *v)
{
    for (int i = 0; i < v->n; i++) free(v->terms[i]);
    free(v->terms);
    ns_strmap_free(&v->map);
    memset(v, 0, sizeof *v);
}

int ns_vocab_add(ns_vocab *v, const char *term)
{
    int id = ns_strmap_get(&v->map, term);
    if (id >= 0) return id;
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 64;
        v->terms = ns_xrealloc(v->terms, (size_t)v->cap * sizeof *v->terms);
    }
    v->terms[v->n] = ns_xstrdup(term);
    ns_strmap_put(&v->map, v->terms[v->n], v->n);
    return v->n++;
}

void ns_vocab_sort(ns_vocab *v)
{
    qsort(v->terms, (size_t)v->n, sizeof *v->terms, ns_cmp_str);
    ns_strmap_free(&v->map);
    ns_strmap_init(&v->map);
    for (int i = 0; i < v->n; i++) ns_strmap_put(&v->map, v->terms[i], i);
}

/* Terms of an action text "(schema a b)": "schema", "schema#0=a", …,
 * appended NUL-separated to b; returns their number. */
static int action_terms(const char *op, ns_buf *b)
{
    b->len = 0;
    if (b->data) b->data[0] = 0;
    char schema[256] = "";
    int nt = 0, pos = -1;
    const char *s = op;
    while (*s) {
        while (*s == '(' || *s == ')' || *s == ' ' || *s == '\t') s++;
        if (!*s) break;
        const char *e = s;
        while (*e && *e != '(' && *e != ')' && *e != ' ' && *e != '\t') e++;
        size_t len = (size_t)(e - s);
        if (pos < 0) {
            if (len >= sizeof schema) len = sizeof schema - 1;
            memcpy(schema, s, len);
            schema[len] = 0;
            ns_buf_puts(b, schema);
        } else {
            ns_buf_printf(b, "%s#%d=%.*s", schema, pos, (int)len, s);
        }
        ns_buf_putc(b, 0);
        nt++;
        pos++;
        s = e;
    }
    return nt;
}

void ns_builtin_fit(ns_vocab *sv, ns_vocab *av, const ns_dataset *ds, const bool *mask)
{
    ns_buf b;
    ns_buf_init(&b);
    for (int p = 0; p < ds->nproblems; p++) {
        if (mask && !mask[p]) continue;
        const ns_ds_problem *pr = &ds->problems[p];
        for (int i = 0; i < pr->natoms; i++) ns_vocab_add(sv, pr->atoms[i]);
        for (int i = 0; i < pr->ngoal; i++) {
            ns_buf_printf(&b, "goal %s", pr->goal[i]);
            ns_vocab_add(sv, b.data);
            b.len = 0;
        }
        for (int o = 0; o < pr->nops; o++) {
            int nt = action_terms(pr->ops[o], &b);
            const char *t = b.data;
            for (int k = 0; k < nt; k++, t += strlen(t) + 1) ns_vocab_add(av, t);
        }
    }
    ns_buf_free(&b);
}

void ns_builtin_states(ns_features *f, const ns_dataset *ds, const ns_vocab *v)
{
    memset(f, 0, sizeof *f);
    f->sparse = true;
    f->dim = v->n;
    ns_csr_init(&f->csr, v->n);
    int maxatoms = 1;
    for (int p = 0; p < ds->nproblems; p++)
        if (ds->problems[p].natoms + ds->problems[p].ngoal > maxatoms)
            maxatoms = ds->problems[p].natoms + ds->problems[p].ngoal;
    int *gcol = ns_xmalloc((size_t)maxatoms * sizeof *gcol), ng = 0;
    ns_buf gb;
    ns_buf_init(&gb);
    int *col = ns_xmalloc((size_t)maxatoms * sizeof *col);
    int32_t *cols = ns_xmalloc((size_t)maxatoms * sizeof *cols);
    float *vals = ns_xmalloc((size_t)maxatoms * sizeof *vals);
    int cur = -1;
    const int32_t *sprob = ds->state_problem.data;
    for (int64_t s = 0; s < ns_dataset_nstates(ds); s++) {
        int p = sprob[s];
        const ns_ds_problem *pr = &ds->problems[p];
        if (p != cur) {
            for (int i = 0; i < pr->natoms; i++) col[i] = ns_strmap_get(&v->map, pr->atoms[i]);
            ng = 0;
            for (int i = 0; i < pr->ngoal; i++) {
                gb.len = 0;
                ns_buf_printf(&gb, "goal %s", pr->goal[i]);
                int c = ns_strmap_get(&v->map, gb.data);
                if (c >= 0) gcol[ng++] = c;
            }
            cur = p;
        }
        const uint64_t *bits = ns_dataset_state(ds, s);
        int n = 0;
        for (int w = 0; w < (pr->natoms + 63) / 64; w++) {
            uint64_t x = bits[w];
            while (x) {
                int a = w * 64 + __builtin_ctzll(x);
                x &= x - 1;
                if (a >= pr->natoms) break;
                if (col[a] >= 0) {
                    cols[n] = col[a];
                    vals[n++] = 1.0f;
                }
            }
        }
        for (int i = 0; i < ng; i++) {
            cols[n] = gcol[i];
            vals[n++] = 1.0f;
        }
        ns_csr_add_row(&f->csr, cols, vals, n);
    }
    f->nrows = f->csr.nrows;
    ns_buf_free(&gb);
    free(gcol);
    free(col);
    free(cols);
    free(vals);
}

void ns_builtin_actions(ns_features *f, const ns_dataset *ds, const ns_vocab *v)
{
    memset(f, 0, sizeof *f);
    f->sparse = true;
    f->dim = v->n;
    ns_csr_init(&f->csr, v->n);
    ns_buf b;
    ns_buf_init(&b);
    int32_t cols[64];
    float vals[64];
    for (int p = 0; p < ds->nproblems; p++) {
        const ns_ds_problem *pr = &ds->problems[p];
        for (int o = 0; o < pr->nops; o++) {
            int nt = action_terms(pr->ops[o], &b), n = 0;
            const char *t = b.data;
            for (int k = 0; k < nt && n < 64; k++, t += strlen(t) + 1) {
                int c = ns_strmap_get(&v->map, t);
                if (c >= 0) {
                    cols[n] = c;
                    vals[n++] = 1.0f;
                }
            }
            ns_csr_add_row(&f->csr, cols, vals, n);
        }
    }
    f->nrows = f->csr.nrows;
    ns_buf_free(&b);
}

void ns_builtin_fit_split(ns_vocab *sv, ns_vocab *av, const ns_dataset *const *ds, int nds, const ns_split *sp)
{
    for (int d = 0; d < nds; d++) {
        ns_train_touch t;
        ns_train_touch_init(&t, sp->train.ref, sp->train.n, d, ds[d]);
        ns_builtin_fit(sv, av, ds[d], t.problem);
        ns_train_touch_free(&t);
    }
    ns_vocab_sort(sv);
    ns_vocab_sort(av);
}
