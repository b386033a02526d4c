/* dataset_enc.c — `nextstate encode` as one library call (dataset_enc.h):
 * re-grounds a dataset's states (or rebuilds plan trajectories), loads or
 * fits the WL vocabulary / sets up FSF, and writes the feature matrix, goal
 * vectors, lifted WL action rows and state atoms. */
#include "nextstate/encode/dataset_enc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "nextstate/data/dataset.h"
#include "nextstate/data/split.h"
#include "nextstate/data/trajectory.h"
#include "nextstate/encode/features.h"
#include "nextstate/encode/featurize.h"
#include "nextstate/encode/fsf.h"
#include "nextstate/util/csr.h"
#include "nextstate/util/json.h"
#include "nextstate/util/npy.h"
#include "nextstate/util/util.h"

void ns_encode_opts_init(ns_encode_opts *o)
{
    memset(o, 0, sizeof *o);
    o->kind = NS_ENCODER_WL;
    o->iterations = -1;
    o->statics = true;
    o->key_format = NS_WL_KEYS_FLAT;
}

static void note(const ns_encode_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(const ns_encode_opts *o, const char *fmt, ...)
{
    if (!o->note) return;
    char line[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    o->note(o->note_ctx, line);
}

/* The problems and states being encoded: a trajectory set (plans mode) or a
 * dataset's states re-grounded (dataset mode), with each dataset operator's
 * task operator. */
typedef ns_traj item;
typedef struct items {
    ns_trajset ts;
    int **opmap; /* dataset mode: [problem][dataset operator] -> task operator */
    int nopmap;
} items;

static void items_free(items *s)
{
    ns_trajset_free(&s->ts);
    for (int i = 0; i < s->nopmap; i++) free(s->opmap[i]);
    free(s->opmap);
    memset(s, 0, sizeof *s);
}

static bool file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* A path stored in a manifest: as given, else relative to the dataset dir. */
static char *resolve(const char *dir, const char *file)
{
    if (file_exists(file) || file[0] == '/') return ns_xstrdup(file);
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_printf(&b, "%s/%s", dir, file);
    if (file_exists(b.data)) return b.data;
    ns_buf_free(&b);
    return ns_xstrdup(file);
}

static int load_problem(items *s, item *it, ns_error *err)
{
    if (ns_problem_read(&it->p, &s->ts.d, it->path, err) != NS_OK) return -1;
    if (ns_task_ground(&it->t, &s->ts.d, &it->p, err) != NS_OK) {
        ns_problem_free(&it->p);
        return -1;
    }
    return 0;
}

/* Maps texts (the dataset's names) to ids of the task's names. */
static int map_texts(char **texts, int n, const ns_task *t, int nt, void (*str)(const ns_task *, int, ns_buf *),
                     int *map, const char *what, const char *file, ns_error *err)
{
    ns_buf *bufs = ns_xcalloc((size_t)nt + 1, sizeof(ns_buf));
    ns_strmap m;
    ns_strmap_init(&m);
    for (int i = 0; i < nt; i++) {
        ns_buf_init(&bufs[i]);
        str(t, i, &bufs[i]);
        ns_strmap_put(&m, bufs[i].data, i);
    }
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        map[i] = ns_strmap_get(&m, texts[i]);
        if (map[i] < 0) {
            ns_error_set(err, NS_ERR_INPUT, file, 0, 0, "the re-grounded problem lacks the dataset's %s %s", what,
                         texts[i]);
            rc = -1;
        }
    }
    ns_strmap_free(&m);
    for (int i = 0; i < nt; i++) ns_buf_free(&bufs[i]);
    free(bufs);
    return rc;
}

/* Loads every state of a dataset directory, re-grounded. */
static int load_dataset_items(const char *dir, items *s, ns_dataset *ds, ns_error *err)
{
    memset(s, 0, sizeof *s);
    if (ns_dataset_load(ds, dir, err) != NS_OK) return -1;
    char *dpath = resolve(dir, ds->domain_file);
    int rc = 0;
    if (ns_domain_read(&s->ts.d, dpath, err) != NS_OK) rc = -1;
    else s->ts.domain_loaded = true;
    free(dpath);
    s->ts.v = ns_xcalloc((size_t)ds->nproblems + 1, sizeof(item));
    s->opmap = ns_xcalloc((size_t)ds->nproblems + 1, sizeof(int *));
    s->nopmap = ds->nproblems;
    for (int i = 0; i < ds->nproblems && !rc; i++) {
        const ns_ds_problem *pr = &ds->problems[i];
        item *it = &s->ts.v[s->ts.n];
        it->name = ns_xstrdup(pr->name);
        it->path = resolve(dir, pr->file);
        if (load_problem(s, it, err)) {
            free(it->name);
            free(it->path);
            memset(it, 0, sizeof *it);
            rc = -1;
            break;
        }
        s->ts.n++;
        int *amap = ns_xmalloc(sizeof(int) * ((size_t)pr->natoms + 1));
        s->opmap[i] = ns_xmalloc(sizeof(int) * ((size_t)pr->nops + 1));
        if (map_texts(pr->atoms, pr->natoms, &it->t, it->t.natoms, ns_task_atom_str, amap, "atom", it->path, err) ||
            map_texts(pr->ops, pr->nops, &it->t, it->t.nops, ns_task_op_str, s->opmap[i], "operator", it->path, err)) {
            free(amap);
            rc = -1;
            break;
        }
        int W = it->t.nwords;
        it->nstates = (int)pr->nstates;
        it->states = ns_xcalloc((size_t)it->nstates * (size_t)W + 1, sizeof(ns_word));
        for (int k = 0; k < it->nstates; k++) {
            const uint64_t *row = ns_dataset_state(ds, pr->state_offset + k);
            ns_word *dst = it->states + (size_t)k * (size_t)W;
            for (int a = 0; a < pr->natoms; a++)
                if ((row[a >> 6] >> (a & 63)) & 1u) ns_bit_set(dst, amap[a]);
        }
        free(amap);
    }
    return rc;
}


/* Loads the problems of pdir that have a plan in plandir (by file stem),
 * sorted by name, and rebuilds their trajectories s_0..s_T. */
static int load_plan_items(const ns_encode_opts *eo, items *s, ns_error *err)
{
    memset(s, 0, sizeof *s);
    ns_traj_opts o = {.plan_dir = eo->plans_dir};
    if (ns_trajset_load(&s->ts, eo->domain, eo->problems_dir, &o, err) != NS_OK) return -1;
    if (s->ts.skipped)
        note(eo, "%d problem%s of %s without a plan in %s skipped", s->ts.skipped, s->ts.skipped == 1 ? "" : "s",
             eo->problems_dir, eo->plans_dir);
    return 0;
}

static int64_t total_states(const items *s)
{
    int64_t n = 0;
    for (int i = 0; i < s->ts.n; i++) n += s->ts.v[i].nstates;
    return n;
}

static bool is_split_dir(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/split.json", dir);
    return file_exists(p);
}

/* Marks the states (global ids of the dataset in dir) that the training
 * transitions of the split in split_dir visit, source or target. */
static int train_state_mask(const char *split_dir, const char *dir, const ns_dataset *ds, uint8_t **mask,
                            int64_t *nmarked, ns_error *err)
{
    ns_split sp;
    if (ns_split_load(&sp, split_dir, err) != NS_OK) return -1;
    int d = -1;
    for (int i = 0; i < sp.ndatasets && d < 0; i++)
        if (ns_same_path(sp.sources[i].dir, dir)) d = i;
    int rc = 0;
    if (d < 0) {
        ns_error_set(err, NS_ERR_INPUT, split_dir, 0, 0, "the split does not refer to the dataset %s", dir);
        rc = -1;
    } else if (sp.sources[d].nstates != ns_dataset_nstates(ds) ||
               sp.sources[d].ntransitions != ns_dataset_ntransitions(ds)) {
        ns_error_set(err, NS_ERR_INPUT, split_dir, 0, 0,
                     "the split was made for a dataset of %lld states and %lld transitions; %s has %lld and %lld",
                     (long long)sp.sources[d].nstates, (long long)sp.sources[d].ntransitions, dir,
                     (long long)ns_dataset_nstates(ds), (long long)ns_dataset_ntransitions(ds));
        rc = -1;
    } else {
        int64_t *ids, n;
        ns_feat_train_states(sp.train.ref, sp.train.n, d, ds, &ids, &n);
        *mask = ns_xcalloc((size_t)ns_dataset_nstates(ds) + 1, 1);
        for (int64_t i = 0; i < n; i++) (*mask)[ids[i]] = 1;
        *nmarked = n;
        free(ids);
        if (n == 0) {
            ns_error_set(err, NS_ERR_INPUT, split_dir, 0, 0, "the split has no training transitions of %s", dir);
            rc = -1;
        }
    }
    ns_split_free(&sp);
    return rc;
}

/* Writes every state as a JSON line (its true atoms, statics when in). */
static int write_states(const char *path, const items *s, const char *domain_path, bool statics, ns_error *err)
{
    ns_buf b;
    ns_buf_init(&b);
    for (int i = 0; i < s->ts.n; i++) {
        const item *it = &s->ts.v[i];
        for (int k = 0; k < it->nstates; k++) {
            const ns_word *st = it->states + (size_t)k * (size_t)it->t.nwords;
            ns_buf_puts(&b, "{\"domain\": ");
            ns_json_put_str(&b, domain_path);
            ns_buf_puts(&b, ", \"problem\": ");
            ns_json_put_str(&b, it->path);
            ns_buf_printf(&b, ", \"state\": %d, \"atoms\": [", k);
            bool first = true;
            for (int a = 0; a < it->t.natoms; a++) {
                if (!ns_bit_get(st, a)) continue;
                ns_buf_puts(&b, first ? "\"" : ", \"");
                ns_task_atom_str(&it->t, a, &b);
                ns_buf_putc(&b, '"');
                first = false;
            }
            for (int a = 0; statics && a < it->t.nstatics; a++) {
                ns_buf_puts(&b, first ? "\"" : ", \"");
                ns_task_static_str(&it->t, a, &b);
                ns_buf_putc(&b, '"');
                first = false;
            }
            ns_buf_puts(&b, "]}\n");
        }
    }
    ns_status st = ns_write_file_atomic(path, b.data ? b.data : "", b.len, err);
    ns_buf_free(&b);
    return st ? -1 : 0;
}

/* OUT.npy -> OUT.<suffix>.npy */
static char *sibling(const char *out, const char *suffix)
{
    size_t l = strlen(out);
    if (l > 4 && !strcmp(out + l - 4, ".npy")) l -= 4;
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_printf(&b, "%.*s.%s", (int)l, out, suffix);
    return b.data;
}

static int write_f32(const char *path, const float *data, int64_t rows, int64_t cols, bool vector, ns_error *err)
{
    ns_array a;
    int64_t shape[2] = {rows, cols};
    if (vector) ns_array_init(&a, NS_F32, 1, &cols);
    else ns_array_init(&a, NS_F32, 2, shape);
    if (rows > 0 && cols > 0) memcpy(a.data, data, sizeof(float) * (size_t)(rows * cols));
    ns_status st = ns_npy_write(path, &a, NULL, err);
    ns_array_free(&a);
    return st ? -1 : 0;
}

/* OUT names CSR files rather than a dense .npy (see the top comment). */
static bool csr_spec(const char *out, bool sparse)
{
    size_t l = strlen(out);
    return sparse || l < 4 || strcmp(out + l - 4, ".npy");
}

/* Saves m as the CSR files of spec OUT (a trailing ".npy" dropped); *spec
 * receives the spec to give `train` (malloc'ed). */
static int save_csr(const char *out, const ns_csr *m, char **spec, ns_error *err)
{
    size_t l = strlen(out);
    if (l >= 4 && !strcmp(out + l - 4, ".npy")) l -= 4;
    *spec = ns_xmalloc(l + 1);
    memcpy(*spec, out, l);
    (*spec)[l] = 0;
    const char *slash = strrchr(*spec, '/');
    ns_buf dir;
    ns_buf_init(&dir);
    if (slash) ns_buf_printf(&dir, "%.*s", slash == *spec ? 1 : (int)(slash - *spec), *spec);
    else ns_buf_puts(&dir, ".");
    ns_status st = ns_csr_save(m, dir.data, slash ? slash + 1 : *spec, err);
    ns_buf_free(&dir);
    return st ? -1 : 0;
}

/* Encodes all states of s into OUT (dense or CSR); returns 0 or -1. */
static int encode_matrix(const ns_encode_opts *o, const items *s, const ns_encoder_spec *spec, ns_error *err)
{
    int64_t N = total_states(s);
    int D = ns_encoder_spec_dim(spec);
    bool sparse = csr_spec(o->out, o->sparse);
    float *dense = sparse ? NULL : ns_xcalloc((size_t)N * (size_t)D + 1, sizeof(float));
    ns_csr m;
    ns_csr_init(&m, D);
    float *goals = o->goals ? ns_xcalloc((size_t)s->ts.n * (size_t)D + 1, sizeof(float)) : NULL;
    double best = 1e300;
    int rc = 0;
    for (int rep = 0; rep < (o->repeat > 0 ? o->repeat : 1) && !rc; rep++) {
        double secs = 0;
        int64_t row = 0;
        if (sparse) {
            ns_csr_free(&m);
            ns_csr_init(&m, D);
        }
        for (int i = 0; i < s->ts.n && !rc; i++) {
            const item *it = &s->ts.v[i];
            ns_encoder e;
            if (ns_encoder_init(&e, spec, &it->t, err) != NS_OK) {
                rc = -1;
                break;
            }
            int maxnnz = ns_encoder_max_nnz(&e);
            int *idx = ns_xmalloc(sizeof(int) * ((size_t)maxnnz + 1));
            float *val = ns_xmalloc(sizeof(float) * ((size_t)maxnnz + 1));
            float *tmp = ns_xmalloc(sizeof(float) * ((size_t)D + 1));
            double t0 = ns_now();
            for (int k = 0; k < it->nstates; k++, row++) {
                const ns_word *st = it->states + (size_t)k * (size_t)it->t.nwords;
                if (sparse) ns_csr_add_row(&m, idx, val, ns_encoder_sparse(&e, st, idx, val, tmp));
                else ns_encoder_state(&e, st, dense + (size_t)row * (size_t)D);
            }
            secs += ns_now() - t0;
            if (goals) ns_encoder_goal(&e, goals + (size_t)i * (size_t)D);
            free(idx);
            free(val);
            free(tmp);
            ns_encoder_free(&e);
        }
        if (secs < best) best = secs;
    }
    if (!rc)
        note(o, "%lld states, %d features (%s) in %.6f s: %.0f states/s", (long long)N, D,
             ns_encoder_kind_name(spec->kind), best, best > 0 ? (double)N / best : 0.0);
    if (!rc && sparse) {
        char *name = NULL;
        if (save_csr(o->out, &m, &name, err)) rc = -1;
        else
            note(o, "wrote CSR %s_{indptr,indices,values,shape}.npy ([%lld, %d], %lld nonzeros)", name, (long long)N, D,
                 (long long)m.nnz);
        free(name);
    } else if (!rc) {
        if (write_f32(o->out, dense, N, D, false, err)) rc = -1;
        else note(o, "wrote %s [%lld, %d] float32", o->out, (long long)N, D);
    }
    if (!rc && goals && write_f32(o->goals, goals, s->ts.n, D, false, err)) rc = -1;
    free(dense);
    ns_csr_free(&m);
    free(goals);
    return rc;
}

/* Lifted WL action encodings of every (state, applicable action) pair of
 * the dataset, rows in applicable_ops order (the world model's state-action
 * rows): schema one-hot ⊕ the WL colours of each argument object in that
 * state, width S + A·D.  Written as CSR (or dense for a .npy name) with the
 * SPEC.rows.json sidecar that marks the row mode. */
static int encode_actions(const ns_encode_opts *o, const items *s, const ns_dataset *ds, const ns_wl_vocab *v,
                          ns_error *err)
{
    ns_wl_encoder *encs = ns_xcalloc((size_t)s->ts.n + 1, sizeof(ns_wl_encoder));
    ns_wl_opts wo = {o->iterations, o->statics};
    int rc = 0, A = -1, ninit = 0;
    for (int i = 0; i < s->ts.n && !rc; i++, ninit++) {
        if (ns_wl_encoder_init(&encs[i], v, &s->ts.v[i].t, &wo, err) != NS_OK) rc = -1;
        else A = ns_wl_action_dim(&encs[i]);
    }
    if (!rc && A >= 0) {
        const int64_t *off = ds->applicable_offsets.data;
        const int32_t *ops = ds->applicable_ops.data;
        const int32_t *sprob = ds->state_problem.data;
        ns_csr m;
        ns_csr_init(&m, A);
        int cap = 1;
        for (int i = 0; i < s->ts.n; i++)
            if (1 + encs[i].max_arity * (encs[i].iterations + 1) > cap)
                cap = 1 + encs[i].max_arity * (encs[i].iterations + 1);
        int *idx = ns_xmalloc(sizeof(int) * (size_t)cap);
        float *val = ns_xmalloc(sizeof(float) * (size_t)cap);
        double t0 = ns_now();
        for (int64_t st = 0; st < ns_dataset_nstates(ds); st++) {
            int p = sprob[st];
            item *it = &s->ts.v[p];
            if (off[st + 1] > off[st]) {
                int64_t local = st - ds->problems[p].state_offset;
                ns_wl_refine(&encs[p], it->states + (size_t)local * (size_t)it->t.nwords);
            }
            for (int64_t k = off[st]; k < off[st + 1]; k++)
                ns_csr_add_row(&m, idx, val, ns_wl_action_features(&encs[p], s->opmap[p][ops[k]], idx, val));
        }
        double secs = ns_now() - t0;
        char *spec = NULL;
        if (csr_spec(o->actions, o->sparse)) {
            rc = save_csr(o->actions, &m, &spec, err);
        } else {
            spec = ns_xstrdup(o->actions);
            float *dense = ns_xcalloc((size_t)m.nrows * (size_t)A + 1, sizeof(float));
            for (int64_t r = 0; r < m.nrows; r++) ns_csr_row_dense(&m, r, dense + (size_t)r * (size_t)A);
            rc = write_f32(o->actions, dense, m.nrows, A, false, err);
            free(dense);
        }
        if (!rc && ns_features_rows_save(spec, NS_AROWS_STATE_ACTION, m.nrows, err) != NS_OK) rc = -1;
        if (!rc)
            note(o,
                 "%lld (state, applicable action) pairs, %d action features in %.3f s; wrote %s%s "
                 "(%lld nonzeros) and its state-action row mark %s.rows.json",
                 (long long)m.nrows, A, secs, spec, csr_spec(o->actions, o->sparse) ? "_*.npy" : "",
                    (long long)m.nnz, csr_spec(o->actions, o->sparse) ? spec : "(name without .npy)");
        free(spec);
        free(idx);
        free(val);
        ns_csr_free(&m);
    }
    for (int i = 0; i < ninit; i++) ns_wl_encoder_free(&encs[i]);
    free(encs);
    return rc;
}

/* --plans mode: OUTDIR/<problem>.npy [T+1, D] and <problem>_goal.npy [D]. */
static int encode_plans(const ns_encode_opts *o, const items *s, const ns_encoder_spec *spec, ns_error *err)
{
    if (ns_mkdir_p(o->out, err) != NS_OK) return -1;
    int D = ns_encoder_spec_dim(spec), rc = 0;
    double best = 1e300;
    int64_t N = total_states(s);
    float **rows = ns_xcalloc((size_t)s->ts.n + 1, sizeof(float *));
    for (int i = 0; i < s->ts.n; i++) rows[i] = ns_xmalloc(sizeof(float) * ((size_t)s->ts.v[i].nstates + 1) * (size_t)D);
    for (int rep = 0; rep < (o->repeat > 0 ? o->repeat : 1) && !rc; rep++) {
        double secs = 0;
        for (int i = 0; i < s->ts.n && !rc; i++) {
            const item *it = &s->ts.v[i];
            ns_encoder e;
            if (ns_encoder_init(&e, spec, &it->t, err) != NS_OK) {
                rc = -1;
                break;
            }
            double t0 = ns_now();
            for (int k = 0; k < it->nstates; k++)
                ns_encoder_state(&e, it->states + (size_t)k * (size_t)it->t.nwords, rows[i] + (size_t)k * (size_t)D);
            secs += ns_now() - t0;
            ns_encoder_goal(&e, rows[i] + (size_t)it->nstates * (size_t)D);
            ns_encoder_free(&e);
        }
        if (secs < best) best = secs;
    }
    for (int i = 0; i < s->ts.n && !rc; i++) {
        const item *it = &s->ts.v[i];
        char p1[2048], p2[2048];
        snprintf(p1, sizeof p1, "%s/%s.npy", o->out, it->name);
        snprintf(p2, sizeof p2, "%s/%s_goal.npy", o->out, it->name);
        if (write_f32(p1, rows[i], it->nstates, D, false, err) ||
            write_f32(p2, rows[i] + (size_t)it->nstates * (size_t)D, 1, D, true, err))
            rc = -1;
    }
    if (!rc)
        note(o, "%lld states of %d plans, %d features (%s) in %.6f s: %.0f states/s; wrote %s/", (long long)N, s->ts.n,
             D, ns_encoder_kind_name(spec->kind), best, best > 0 ? (double)N / best : 0.0, o->out);
    for (int i = 0; i < s->ts.n; i++) free(rows[i]);
    free(rows);
    return rc;
}

/* What one run holds: the items encoded, those fitted on (--fit-on a
 * dataset), their datasets, and the encoder spec (vocabulary or FSF). */
typedef struct run {
    items s, fit_items;
    ns_dataset ds, fit_ds;
    bool have_ds, have_fit_ds;
    ns_encoder_spec spec;
    char *ds_domain;
} run;

/* Fits the WL vocabulary on the encoded states, on fit_on's training
 * states (a split) or on fit_on's states (a dataset), and saves it. */
static int fit_vocab(const ns_encode_opts *o, run *r, ns_error *err)
{
    const items *src = &r->s;
    uint8_t *mask = NULL;
    int64_t nfit = total_states(&r->s);
    int rc = 0;
    if (o->fit_on && is_split_dir(o->fit_on)) {
        rc = train_state_mask(o->fit_on, o->dataset, &r->ds, &mask, &nfit, err);
    } else if (o->fit_on) {
        r->have_fit_ds = true;
        rc = load_dataset_items(o->fit_on, &r->fit_items, &r->fit_ds, err);
        src = &r->fit_items;
        nfit = total_states(src);
    }
    if (!rc) {
        int L = o->iterations < 0 ? 2 : o->iterations;
        double t0 = ns_now();
        ns_wl_vocab *v = &r->spec.wl;
        if (ns_wl_vocab_fit_trajset(v, &src->ts, mask, L, !o->set, o->statics, o->fit_goals, err) != NS_OK) {
            rc = -1;
        } else {
            r->spec.wl_loaded = true;
            char *vp = o->vocab_out ? ns_xstrdup(o->vocab_out) : sibling(o->out, "vocab.json");
            if (ns_wl_vocab_save(v, vp, o->key_format, err) != NS_OK) {
                rc = -1;
            } else if (o->note) {
                ns_buf b;
                ns_buf_init(&b);
                ns_buf_printf(&b, "fitted %d colours (per layer:", v->ncolours);
                for (int t = 0; t <= v->iterations; t++) ns_buf_printf(&b, " %d", ns_wl_vocab_layer_size(v, t));
                ns_buf_printf(&b, ") on %lld %sstates in %.3f s; wrote %s", (long long)nfit, mask ? "training " : "",
                              ns_now() - t0, vp);
                o->note(o->note_ctx, b.data);
                ns_buf_free(&b);
            }
            free(vp);
        }
    }
    free(mask);
    return rc;
}

static int setup_wl(const ns_encode_opts *o, run *r, ns_error *err)
{
    if (o->vocab) {
        if (ns_wl_vocab_load(&r->spec.wl, o->vocab, NS_WL_KEYS_AUTO, err) != NS_OK) return -1;
        r->spec.wl_loaded = true;
    } else if (fit_vocab(o, r, err)) {
        return -1;
    }
    if (o->iterations > r->spec.wl.iterations) {
        ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "--iterations %d exceeds the vocabulary's %d", o->iterations,
                     r->spec.wl.iterations);
        return -1;
    }
    return 0;
}

static int setup_fsf(const ns_encode_opts *o, run *r, ns_error *err)
{
    ns_fsf_config *fc = &r->spec.fsf;
    if (o->fsf_config && ns_fsf_config_load(fc, o->fsf_config, err) != NS_OK) return -1;
    if (o->max_objects) fc->max_objects = o->max_objects;
    if (!fc->max_objects) {
        fc->max_objects = ns_trajset_max_objects(&r->s.ts);
        note(o, "FSF max_objects %d (the largest problem; fix it with --fsf-config)", fc->max_objects);
    }
    if (o->fsf_domain) {
        fc->domain = ns_fsf_domain_parse(o->fsf_domain);
        if (fc->domain == NS_FSF_AUTO) {
            ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "unknown --fsf-domain '%s'", o->fsf_domain);
            return -1;
        }
    }
    return 0;
}

ns_status ns_encode_run(const ns_encode_opts *o, ns_error *err)
{
    run r;
    memset(&r, 0, sizeof r);
    r.spec.kind = o->kind;
    r.spec.wl_opts.iterations = o->iterations;
    r.spec.wl_opts.statics = o->statics;
    r.spec.fsf.domain = NS_FSF_AUTO;
    const char *domain_path = NULL;
    int rc = 0;
    if (!o->dataset) {
        domain_path = o->domain;
        rc = load_plan_items(o, &r.s, err);
    } else {
        r.have_ds = true;
        rc = load_dataset_items(o->dataset, &r.s, &r.ds, err);
        if (!rc) domain_path = r.ds_domain = resolve(o->dataset, r.ds.domain_file);
    }
    if (!rc) rc = o->kind == NS_ENCODER_WL ? setup_wl(o, &r, err) : setup_fsf(o, &r, err);
    if (!rc && o->states_out) rc = write_states(o->states_out, &r.s, domain_path, o->statics, err);
    if (!rc) rc = o->dataset ? encode_matrix(o, &r.s, &r.spec, err) : encode_plans(o, &r.s, &r.spec, err);
    if (!rc && o->actions) rc = encode_actions(o, &r.s, &r.ds, &r.spec.wl, err);
    ns_encoder_spec_free(&r.spec);
    items_free(&r.s);
    items_free(&r.fit_items);
    if (r.have_ds) ns_dataset_free(&r.ds);
    if (r.have_fit_ds) ns_dataset_free(&r.fit_ds);
    free(r.ds_domain);
    return rc ? err->code : NS_OK;
}
