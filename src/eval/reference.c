/* reference.c — identity, offset and lifted STRIPS reference methods (see
 * reference.h). */
#include "nextstate/eval/reference.h"
#include "nextstate/eval/world_data.h"
#include "nextstate/util/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- text helpers ---------------------------------------------------------------- */

/* Splits "(name a b)" into tokens (name first); returns the count; toks
 * point into buf (a modified copy). */
static int tokens(const char *text, char *buf, size_t cap, char **toks, int maxt)
{
    snprintf(buf, cap, "%s", text);
    int n = 0;
    char *p = buf;
    while (*p && n < maxt) {
        while (*p == '(' || *p == ')' || *p == ' ' || *p == '\t') *p++ = 0;
        if (!*p) break;
        toks[n++] = p;
        while (*p && *p != '(' && *p != ')' && *p != ' ' && *p != '\t') p++;
    }
    return n;
}

enum { MAXT = 64, TXT = 1024 };

/* "(pred a b)" with tokens replaced: from[i] → to[i]; into out. */
static void rewrite(const char *atom, char *const *from, char *const *to, int nfrom, ns_buf *out)
{
    char buf[TXT];
    char *t[MAXT];
    int n = tokens(atom, buf, sizeof buf, t, MAXT);
    ns_buf_putc(out, '(');
    for (int i = 0; i < n; i++) {
        const char *x = t[i];
        if (i > 0)
            for (int k = 0; k < nfrom; k++)
                if (!strcmp(x, from[k])) {
                    x = to[k];
                    break;
                }
        if (i) ns_buf_putc(out, ' ');
        ns_buf_puts(out, x);
    }
    ns_buf_putc(out, ')');
}

/* ---- model ------------------------------------------------------------------------ */

typedef struct strips_schema {
    char *key;
    int nadd, ndel;
    char **add, **del; /* lifted, sorted */
} strips_schema;

struct ns_ref_model {
    ns_ref_method method;
    const ns_world_inputs *in;
    int64_t dim;
    /* offsets: keys → mean displacement rows */
    ns_strmap keymap;
    char **keys;
    int nkeys;
    size_t keycap;
    double *mean; /* nkeys × dim */
    double *global; /* dim */
    /* strips */
    strips_schema *sch;
    int nsch;
    size_t schcap;
    int64_t disagree;
    ns_strmap **atom_ids; /* per dataset, per problem: normalised atom text → id */
    char ***atom_norm;    /* the keys of those maps */
    char ****ctx;         /* per dataset, per problem: sorted statics + "goal " literals */
    int **nctx;
};

int ns_ref_method_parse(const char *name)
{
    static const char *names[] = {"identity", "offset-action", "offset-schema", "strips"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, names[i])) return i;
    return -1;
}

const char *ns_ref_method_name(ns_ref_method m)
{
    static const char *names[] = {"identity", "offset-action", "offset-schema", "strips"};
    return (unsigned)m < 4 ? names[m] : "?";
}

ns_ref_method ns_ref_model_method(const ns_ref_model *m) { return m->method; }
int ns_ref_nschemas(const ns_ref_model *m) { return m->nsch; }
int64_t ns_ref_disagreements(const ns_ref_model *m) { return m->disagree; }

/* The key of an action: "domain\t(text)" or "domain\tschema". */
static void action_key(const ns_dataset *ds, int p, int op, bool schema, ns_buf *b)
{
    ns_buf_puts(b, ds->domain_name ? ds->domain_name : "");
    ns_buf_putc(b, '\t');
    const char *text = ds->problems[p].ops[op];
    if (!schema) {
        ns_buf_puts(b, text);
        return;
    }
    char buf[TXT];
    char *t[MAXT];
    if (tokens(text, buf, sizeof buf, t, MAXT) > 0) ns_buf_puts(b, t[0]);
}

static int key_id(ns_ref_model *m, const char *key, bool add)
{
    int k = ns_strmap_get(&m->keymap, key);
    if (k >= 0 || !add) return k;
    NS_GROW(m->keys, m->keycap, (size_t)m->nkeys + 1);
    m->keys[m->nkeys] = ns_xstrdup(key);
    ns_strmap_put(&m->keymap, m->keys[m->nkeys], m->nkeys);
    return m->nkeys++;
}

/* acc[dim] += scale × E(row) */
static void add_row(const ns_features *f, int64_t row, double scale, double *acc)
{
    if (!f->sparse) {
        const float *x = f->dense + row * f->dim;
        for (int64_t j = 0; j < f->dim; j++) acc[j] += scale * x[j];
        return;
    }
    for (int64_t k = f->csr.indptr[row]; k < f->csr.indptr[row + 1]; k++)
        acc[f->csr.indices[k]] += scale * f->csr.values[k];
}

static double dot_row(const ns_features *f, int64_t row, const double *v, double *norm2)
{
    double s = 0, n2 = 0;
    if (!f->sparse) {
        const float *x = f->dense + row * f->dim;
        for (int64_t j = 0; j < f->dim; j++) s += v[j] * x[j], n2 += (double)x[j] * x[j];
    } else {
        for (int64_t k = f->csr.indptr[row]; k < f->csr.indptr[row + 1]; k++) {
            double x = f->csr.values[k];
            s += v[f->csr.indices[k]] * x;
            n2 += x * x;
        }
    }
    *norm2 = n2;
    return s;
}

/* Atom texts of state s (global id) of ds: the fluent atoms whose bit is set. */
static int state_atoms(const ns_dataset *ds, int p, int64_t s, const char **out)
{
    const uint64_t *bits = ns_dataset_state(ds, s);
    int n = 0;
    for (int a = 0; a < ds->problems[p].natoms; a++)
        if (bits[a / 64] >> (a % 64) & 1) out[n++] = ds->problems[p].atoms[a];
    return n;
}

static bool has_bit(const uint64_t *bits, int a) { return bits[a / 64] >> (a % 64) & 1; }

/* Lifted add and delete lists of transition row tr of ds (sorted, malloc'ed). */
static void lifted_effects(const ns_dataset *ds, const int32_t *tr, char ***add, int *nadd, char ***del, int *ndel,
                           char *schema, size_t schema_cap)
{
    const ns_ds_problem *P = &ds->problems[tr[0]];
    char buf[TXT];
    char *t[MAXT];
    int n = tokens(P->ops[tr[2]], buf, sizeof buf, t, MAXT);
    snprintf(schema, schema_cap, "%s\t%s", ds->domain_name ? ds->domain_name : "", n ? t[0] : "");
    char *from[MAXT], *to[MAXT];
    char names[MAXT][16];
    int nf = 0;
    for (int i = 1; i < n; i++) {
        bool dup = false;
        for (int k = 0; k < nf; k++) dup = dup || !strcmp(from[k], t[i]);
        if (dup) continue; /* a repeated object lifts to its first position */
        snprintf(names[nf], sizeof names[nf], "?p%d", i);
        from[nf] = t[i];
        to[nf] = names[nf];
        nf++;
    }
    const uint64_t *a = ns_dataset_state(ds, tr[1]), *b = ns_dataset_state(ds, tr[3]);
    *add = ns_xmalloc((size_t)(P->natoms + 1) * sizeof **add);
    *del = ns_xmalloc((size_t)(P->natoms + 1) * sizeof **del);
    *nadd = *ndel = 0;
    for (int x = 0; x < P->natoms; x++) {
        bool in_a = has_bit(a, x), in_b = has_bit(b, x);
        if (in_a == in_b) continue;
        ns_buf o;
        ns_buf_init(&o);
        rewrite(P->atoms[x], from, to, nf, &o);
        if (in_b) (*add)[(*nadd)++] = o.data;
        else (*del)[(*ndel)++] = o.data;
    }
    qsort(*add, (size_t)*nadd, sizeof **add, ns_cmp_str);
    qsort(*del, (size_t)*ndel, sizeof **del, ns_cmp_str);
}

void ns_ref_atoms_free(char **atoms, int n)
{
    if (!atoms) return;
    for (int i = 0; i < n; i++) free(atoms[i]);
    free(atoms);
}

static bool same_list(char **a, int na, char **b, int nb)
{
    if (na != nb) return false;
    for (int i = 0; i < na; i++)
        if (strcmp(a[i], b[i])) return false;
    return true;
}

static void fit_strips(ns_ref_model *m, const ns_refs *train)
{
    for (int64_t i = 0; i < train->n; i++) {
        const ns_dataset *ds = m->in->ds[train->ref[2 * i]];
        const int32_t *tr = ns_dataset_transition(ds, train->ref[2 * i + 1]);
        char key[TXT];
        char **add, **del;
        int nadd, ndel;
        lifted_effects(ds, tr, &add, &nadd, &del, &ndel, key, sizeof key);
        int k = key_id(m, key, false);
        if (k < 0) {
            k = key_id(m, key, true);
            NS_GROW(m->sch, m->schcap, (size_t)m->nsch + 1);
            strips_schema *s = &m->sch[m->nsch++];
            s->key = m->keys[k];
            s->add = add, s->nadd = nadd, s->del = del, s->ndel = ndel;
            continue;
        }
        const strips_schema *s = &m->sch[k];
        if (!same_list(s->add, s->nadd, add, nadd) || !same_list(s->del, s->ndel, del, ndel)) m->disagree++;
        ns_ref_atoms_free(add, nadd);
        ns_ref_atoms_free(del, ndel);
    }
}

static void fit_offset(ns_ref_model *m, const ns_refs *train, bool schema)
{
    const ns_world_inputs *in = m->in;
    int64_t D = m->dim;
    m->global = ns_xcalloc((size_t)D, sizeof(double));
    int64_t *count = NULL;
    size_t ccap = 0, mcap = 0;
    double *disp = ns_xmalloc((size_t)D * sizeof(double));
    ns_buf b;
    ns_buf_init(&b);
    for (int64_t i = 0; i < train->n; i++) {
        int d = (int)train->ref[2 * i];
        const int32_t *tr = ns_dataset_transition(in->ds[d], train->ref[2 * i + 1]);
        b.len = 0;
        action_key(in->ds[d], tr[0], tr[2], schema, &b);
        ns_buf_putc(&b, 0);
        int k = key_id(m, b.data, true);
        if ((size_t)m->nkeys * (size_t)D > mcap) {
            size_t old = mcap;
            NS_GROW(m->mean, mcap, (size_t)m->nkeys * (size_t)D);
            memset(m->mean + old, 0, (mcap - old) * sizeof(double));
        }
        if ((size_t)m->nkeys > ccap) {
            size_t old = ccap;
            NS_GROW(count, ccap, (size_t)m->nkeys);
            memset(count + old, 0, (ccap - old) * sizeof *count);
        }
        memset(disp, 0, (size_t)D * sizeof(double));
        add_row(&in->state, in->state_base[d] + tr[3], 1, disp);
        add_row(&in->state, in->state_base[d] + tr[1], -1, disp);
        double *row = m->mean + (size_t)k * D;
        for (int64_t j = 0; j < D; j++) row[j] += disp[j], m->global[j] += disp[j];
        count[k]++;
    }
    for (int k = 0; k < m->nkeys; k++)
        for (int64_t j = 0; j < D; j++) m->mean[(size_t)k * D + j] /= (double)count[k];
    if (train->n)
        for (int64_t j = 0; j < D; j++) m->global[j] /= (double)train->n;
    ns_buf_free(&b);
    free(disp);
    free(count);
}

void ns_ref_free(ns_ref_model *m)
{
    if (!m) return;
    for (int k = 0; k < m->nkeys; k++) free(m->keys[k]);
    free(m->keys);
    ns_strmap_free(&m->keymap);
    free(m->mean);
    free(m->global);
    for (int s = 0; s < m->nsch; s++) {
        ns_ref_atoms_free(m->sch[s].add, m->sch[s].nadd);
        ns_ref_atoms_free(m->sch[s].del, m->sch[s].ndel);
    }
    free(m->sch);
    if (m->atom_ids) {
        for (int d = 0; d < m->in->nds; d++) {
            const ns_dataset *ds = m->in->ds[d];
            for (int p = 0; p < ds->nproblems; p++) ns_strmap_free(&m->atom_ids[d][p]);
            int total = 0;
            for (int p = 0; p < ds->nproblems; p++) total += ds->problems[p].natoms;
            ns_ref_atoms_free(m->atom_norm[d], total);
            free(m->atom_ids[d]);
            for (int p = 0; p < ds->nproblems; p++) ns_ref_atoms_free(m->ctx[d][p], m->nctx[d][p]);
            free(m->ctx[d]);
            free(m->nctx[d]);
        }
        free(m->atom_ids);
        free(m->atom_norm);
        free(m->ctx);
        free(m->nctx);
    }
    free(m);
}

/* Per problem: normalised atom text → atom id. */
static void build_atom_maps(ns_ref_model *m)
{
    const ns_world_inputs *in = m->in;
    m->atom_ids = ns_xcalloc((size_t)in->nds, sizeof *m->atom_ids);
    m->atom_norm = ns_xcalloc((size_t)in->nds, sizeof *m->atom_norm);
    m->ctx = ns_xcalloc((size_t)in->nds, sizeof *m->ctx);
    m->nctx = ns_xcalloc((size_t)in->nds, sizeof *m->nctx);
    for (int d = 0; d < in->nds; d++) {
        const ns_dataset *ds = in->ds[d];
        int total = 0;
        for (int p = 0; p < ds->nproblems; p++) total += ds->problems[p].natoms;
        m->atom_ids[d] = ns_xcalloc((size_t)(ds->nproblems ? ds->nproblems : 1), sizeof **m->atom_ids);
        m->atom_norm[d] = ns_xcalloc((size_t)(total ? total : 1), sizeof **m->atom_norm);
        int at = 0;
        m->ctx[d] = ns_xcalloc((size_t)(ds->nproblems ? ds->nproblems : 1), sizeof **m->ctx);
        m->nctx[d] = ns_xcalloc((size_t)(ds->nproblems ? ds->nproblems : 1), sizeof **m->nctx);
        for (int p = 0; p < ds->nproblems; p++) {
            const ns_ds_problem *P = &ds->problems[p];
            char **c = ns_xmalloc((size_t)(P->nstatics + P->ngoal + 1) * sizeof *c);
            int nc = 0;
            for (int k = 0; k < P->nstatics + P->ngoal; k++) {
                ns_buf o;
                ns_buf_init(&o);
                if (k >= P->nstatics) ns_buf_puts(&o, "goal ");
                ns_buf_puts(&o, k < P->nstatics ? P->statics[k] : P->goal[k - P->nstatics]);
                c[nc++] = o.data;
            }
            qsort(c, (size_t)nc, sizeof *c, ns_cmp_str);
            m->ctx[d][p] = c;
            m->nctx[d][p] = nc;
            ns_strmap_init(&m->atom_ids[d][p]);
            for (int a = 0; a < ds->problems[p].natoms; a++) {
                ns_buf o;
                ns_buf_init(&o);
                rewrite(ds->problems[p].atoms[a], NULL, NULL, 0, &o);
                m->atom_norm[d][at] = o.data;
                ns_strmap_put(&m->atom_ids[d][p], o.data, a);
                at++;
            }
        }
    }
}

ns_status ns_ref_fit(ns_ref_model **out, ns_ref_method method, const ns_world_inputs *in, const ns_refs *train,
                     ns_error *err)
{
    *out = NULL;
    if ((unsigned)method > NS_REF_STRIPS) return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "unknown reference method");
    for (int64_t i = 0; i < train->n; i++) {
        int64_t d = train->ref[2 * i], t = train->ref[2 * i + 1];
        if (d < 0 || d >= in->nds || t < 0 || t >= ns_dataset_ntransitions(in->ds[d]))
            return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "training reference %lld out of range", (long long)i);
    }
    ns_ref_model *m = ns_xcalloc(1, sizeof *m);
    m->method = method;
    m->in = in;
    m->dim = in->state.dim;
    ns_strmap_init(&m->keymap);
    if (method == NS_REF_OFFSET_ACTION || method == NS_REF_OFFSET_SCHEMA)
        fit_offset(m, train, method == NS_REF_OFFSET_SCHEMA);
    else if (method == NS_REF_STRIPS) {
        fit_strips(m, train);
        build_atom_maps(m);
    }
    *out = m;
    return NS_OK;
}

/* Prediction in double precision. */
static bool predict_vec(const ns_ref_model *m, int d, int64_t t, double *out)
{
    const ns_world_inputs *in = m->in;
    if (m->method == NS_REF_STRIPS) return false;
    const int32_t *tr = ns_dataset_transition(in->ds[d], t);
    memset(out, 0, (size_t)m->dim * sizeof(double));
    add_row(&in->state, in->state_base[d] + tr[1], 1, out);
    if (m->method == NS_REF_IDENTITY) return true;
    ns_buf b;
    ns_buf_init(&b);
    action_key(in->ds[d], tr[0], tr[2], m->method == NS_REF_OFFSET_SCHEMA, &b);
    ns_buf_putc(&b, 0);
    int k = ns_strmap_get(&m->keymap, b.data);
    ns_buf_free(&b);
    const double *disp = k >= 0 ? m->mean + (size_t)k * m->dim : m->global;
    if (disp)
        for (int64_t j = 0; j < m->dim; j++) out[j] += disp[j];
    return true;
}

bool ns_ref_predict_embedding(const ns_ref_model *m, int d, int64_t t, float *out)
{
    if (m->method == NS_REF_STRIPS) return false;
    double *v = ns_xmalloc((size_t)(m->dim ? m->dim : 1) * sizeof(double));
    predict_vec(m, d, t, v);
    for (int64_t j = 0; j < m->dim; j++) out[j] = (float)v[j];
    free(v);
    return true;
}

int ns_ref_predict_atoms(const ns_ref_model *m, int d, int64_t t, char ***atoms)
{
    *atoms = NULL;
    if (m->method != NS_REF_STRIPS) return -1;
    const ns_dataset *ds = m->in->ds[d];
    const int32_t *tr = ns_dataset_transition(ds, t);
    const ns_ds_problem *P = &ds->problems[tr[0]];
    char buf[TXT], key[TXT];
    char *tk[MAXT];
    int n = tokens(P->ops[tr[2]], buf, sizeof buf, tk, MAXT);
    snprintf(key, sizeof key, "%s\t%s", ds->domain_name ? ds->domain_name : "", n ? tk[0] : "");
    int k = ns_strmap_get(&m->keymap, key);
    if (k < 0) return -1;
    const strips_schema *s = &m->sch[k];
    /* ?p<i> → o_i */
    char *from[MAXT], *to[MAXT];
    char names[MAXT][16];
    int nf = 0;
    for (int i = 1; i < n; i++) {
        snprintf(names[nf], sizeof names[nf], "?p%d", i);
        from[nf] = names[nf];
        to[nf] = tk[i];
        nf++;
    }
    const char **cur = ns_xmalloc((size_t)(P->natoms + 1) * sizeof *cur);
    int nc = state_atoms(ds, tr[0], tr[1], cur);
    char **res = ns_xmalloc((size_t)(nc + s->nadd + 1) * sizeof *res);
    int nr = 0;
    char **dels = ns_xmalloc((size_t)(s->ndel + 1) * sizeof *dels);
    for (int i = 0; i < s->ndel; i++) {
        ns_buf o;
        ns_buf_init(&o);
        rewrite(s->del[i], from, to, nf, &o);
        dels[i] = o.data;
    }
    qsort(dels, (size_t)s->ndel, sizeof *dels, ns_cmp_str);
    for (int i = 0; i < nc; i++) {
        ns_buf o;
        ns_buf_init(&o);
        rewrite(cur[i], NULL, NULL, 0, &o);
        if (bsearch(&o.data, dels, (size_t)s->ndel, sizeof *dels, ns_cmp_str)) ns_buf_free(&o);
        else res[nr++] = o.data;
    }
    for (int i = 0; i < s->nadd; i++) {
        ns_buf o;
        ns_buf_init(&o);
        rewrite(s->add[i], from, to, nf, &o);
        res[nr++] = o.data;
    }
    qsort(res, (size_t)nr, sizeof *res, ns_cmp_str);
    int u = 0; /* an added atom that already held appears once */
    for (int i = 0; i < nr; i++) {
        if (u && !strcmp(res[u - 1], res[i])) free(res[i]);
        else res[u++] = res[i];
    }
    ns_ref_atoms_free(dels, s->ndel);
    free(cur);
    *atoms = res;
    return u;
}

/* ---- evaluation ------------------------------------------------------------------- */

/* |A ∩ B| and |A ∪ B| of two sorted string lists. */
static void context_overlap(char **a, int na, char **b, int nb, int *inter, int *uni)
{
    int i = 0, j = 0, c = 0;
    while (i < na && j < nb) {
        int k = strcmp(a[i], b[j]);
        if (!k) c++, i++, j++;
        else if (k < 0) i++;
        else j++;
    }
    *inter = c;
    *uni = na + nb - c;
}

static int popcount64(uint64_t x) { return __builtin_popcountll(x); }

ns_status ns_ref_eval(const ns_ref_model *m, const ns_refs *refs, const int64_t *pools, int pool_size,
                      uint64_t seed, ns_eval_result *r, ns_error *err)
{
    memset(r, 0, sizeof *r);
    double t0 = ns_now();
    const ns_world_inputs *in = m->in;
    int64_t n = refs->n;
    r->n = n;
    r->pool_size = pool_size;
    if (n == 0) return NS_OK;
    if (!pools || pool_size < 1) return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "no candidate pools to rank");
    for (int64_t i = 0; i < n; i++) {
        int64_t d = refs->ref[2 * i], t = refs->ref[2 * i + 1];
        if (d < 0 || d >= in->nds || t < 0 || t >= ns_dataset_ntransitions(in->ds[d]))
            return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "test reference %lld out of range", (long long)i);
        for (int j = 0; j < pool_size; j++)
            if (pools[i * pool_size + j] >= ns_dataset_nstates(in->ds[d]))
                return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "pool %lld names state %lld out of range",
                                    (long long)i, (long long)pools[i * pool_size + j]);
    }
    ns_rng rng;
    ns_rng_seed(&rng, seed ^ 0x6576616cULL); /* evaluate.c's stream */
    double *v = ns_xmalloc((size_t)(m->dim ? m->dim : 1) * sizeof(double));
    double *score = ns_xmalloc((size_t)pool_size * sizeof(double));
    uint64_t *pbits = NULL;
    int *pextra = NULL, *pstamp = NULL, *pcount = NULL;
    int maxw = 1, maxp = 1;
    for (int d = 0; d < in->nds; d++) {
        if (in->ds[d]->words > maxw) maxw = in->ds[d]->words;
        if (in->ds[d]->nproblems > maxp) maxp = in->ds[d]->nproblems;
    }
    int *cint = NULL, *cuni = NULL;
    if (m->method == NS_REF_STRIPS) {
        cint = ns_xmalloc((size_t)maxp * sizeof *cint);
        cuni = ns_xmalloc((size_t)maxp * sizeof *cuni);
        pbits = ns_xmalloc((size_t)maxp * maxw * sizeof *pbits);
        pextra = ns_xmalloc((size_t)maxp * sizeof *pextra);
        pcount = ns_xmalloc((size_t)maxp * sizeof *pcount);
        pstamp = ns_xmalloc((size_t)maxp * sizeof *pstamp);
    }
    const int32_t *sp_ = NULL;
    double npool = 0;
    for (int64_t i = 0; i < n; i++) {
        int d = (int)refs->ref[2 * i];
        const ns_dataset *ds = in->ds[d];
        const int64_t *pool = pools + i * pool_size;
        int cnt = 0;
        for (int j = 0; j < pool_size; j++) cnt += pool[j] >= 0;
        npool += cnt;
        if (m->method == NS_REF_STRIPS) {
            char **atoms;
            int na = ns_ref_predict_atoms(m, d, refs->ref[2 * i + 1], &atoms);
            if (na < 0) continue; /* no prediction: a miss */
            sp_ = ds->state_problem.data;
            for (int p = 0; p < ds->nproblems; p++) pstamp[p] = 0;
            for (int j = 0; j < pool_size; j++) {
                if (pool[j] < 0) continue;
                int p = sp_[pool[j]];
                uint64_t *pb = pbits + (size_t)p * maxw;
                if (!pstamp[p]) { /* the prediction in problem p's atom ids */
                    pstamp[p] = 1;
                    memset(pb, 0, (size_t)maxw * sizeof *pb);
                    pextra[p] = 0;
                    pcount[p] = 0;
                    int q = ((const int32_t *)ds->transitions.data)[4 * refs->ref[2 * i + 1]];
                    context_overlap(m->ctx[d][q], m->nctx[d][q], m->ctx[d][p], m->nctx[d][p], &cint[p], &cuni[p]);
                    for (int a = 0; a < na; a++) {
                        int id = ns_strmap_get(&m->atom_ids[d][p], atoms[a]);
                        if (id < 0) pextra[p]++;
                        else if (!has_bit(pb, id)) pb[id / 64] |= 1ULL << (id % 64), pcount[p]++;
                    }
                }
                const uint64_t *cb = ns_dataset_state(ds, pool[j]);
                int64_t inter = cint[p], uni = pextra[p] + cuni[p];
                for (int w = 0; w < ds->words; w++) inter += popcount64(pb[w] & cb[w]), uni += popcount64(pb[w] | cb[w]);
                score[j] = uni ? (double)inter / (double)uni : 1.0;
            }
            ns_ref_atoms_free(atoms, na);
        } else {
            predict_vec(m, d, refs->ref[2 * i + 1], v);
            double vn = 0;
            for (int64_t k = 0; k < m->dim; k++) vn += v[k] * v[k];
            vn = sqrt(vn);
            for (int j = 0; j < pool_size; j++) {
                if (pool[j] < 0) continue;
                double c2, s = dot_row(&in->state, in->state_base[d] + pool[j], v, &c2);
                score[j] = vn > 0 && c2 > 0 ? s / (vn * sqrt(c2)) : 0;
            }
        }
        int64_t gt = 0, eq = 0;
        for (int j = 1; j < pool_size; j++) {
            if (pool[j] < 0) continue;
            if (score[j] > score[0]) gt++;
            else if (score[j] == score[0]) eq++;
        }
        ns_eval_tally(r->hit, r->hit_worst, gt, eq, &rng, &r->mrr);
    }
    for (int k = 0; k < 3; k++) r->hit[k] /= (double)n, r->hit_worst[k] /= (double)n;
    r->mrr /= (double)n;
    r->mean_pool = npool / (double)n;
    free(v);
    free(score);
    free(pbits);
    free(pextra);
    free(pcount);
    free(pstamp);
    free(cint);
    free(cuni);
    r->seconds = ns_now() - t0;
    return NS_OK;
}

/* ---- one run ---- */

ns_status ns_ref_run(const char *split_dir, ns_ref_method m, const char *state_spec, bool dev, uint64_t seed,
                     ns_ref_report *rep, ns_error *err)
{
    memset(rep, 0, sizeof *rep);
    ns_world_data wd;
    ns_status st = ns_world_data_open(&wd, split_dir, state_spec, "builtin", "none", err);
    if (st != NS_OK) return st;
    ns_world_list l;
    ns_ref_model *model = NULL;
    st = ns_world_data_list(&wd, dev, seed, split_dir, &l, err);
    if (st == NS_OK) st = ns_ref_fit(&model, m, &wd.in, &wd.sd.split.train, err);
    if (st == NS_OK) st = ns_ref_eval(model, l.refs, l.pools, l.pool_size, seed, &rep->r, err);
    if (st == NS_OK) {
        rep->split_dir = ns_xstrdup(split_dir);
        rep->state_spec = ns_xstrdup(state_spec);
        rep->method = m;
        rep->protocol = wd.sd.split.protocol;
        rep->dev = dev;
        rep->nschemas = ns_ref_nschemas(model);
        rep->disagreements = ns_ref_disagreements(model);
    }
    ns_ref_free(model);
    ns_world_list_free(&l);
    ns_world_data_free(&wd);
    return st;
}

void ns_ref_report_free(ns_ref_report *rep)
{
    free(rep->split_dir);
    free(rep->state_spec);
    memset(rep, 0, sizeof *rep);
}

void ns_ref_report_json(const ns_ref_report *rep, ns_buf *b)
{
    bool strips = rep->method == NS_REF_STRIPS;
    ns_buf_puts(b, "{\"split\": ");
    ns_json_put_str(b, rep->split_dir);
    ns_buf_printf(b, ", \"method\": \"%s\", \"protocol\": \"%s\", \"on\": \"%s\", \"state_features\": ",
                  ns_ref_method_name(rep->method), ns_protocol_name(rep->protocol), rep->dev ? "dev" : "test");
    if (strips) ns_buf_puts(b, "null");
    else ns_json_put_str(b, rep->state_spec);
    if (strips)
        ns_buf_printf(b, ", \"schemas\": %d, \"disagreements\": %lld", rep->nschemas, (long long)rep->disagreements);
    ns_buf_puts(b, ", \"metrics\": ");
    ns_eval_json(&rep->r, b);
    ns_buf_puts(b, "}\n");
}

void ns_ref_report_table(const ns_ref_report *rep, ns_buf *b)
{
    ns_buf_printf(b, "reference %s on %s (%s, %s list)\n", ns_ref_method_name(rep->method), rep->split_dir,
                  ns_protocol_name(rep->protocol), rep->dev ? "dev" : "test");
    if (rep->method == NS_REF_STRIPS)
        ns_buf_printf(b, "schemas            %d induced, %lld disagreeing observations\n", rep->nschemas,
                      (long long)rep->disagreements);
    ns_eval_table(&rep->r, b);
}
