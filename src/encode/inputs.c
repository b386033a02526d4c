/* inputs.c — what the world model reads: stacked feature rows of a split's
 * datasets, feature specs, per-column standardisation and the checkpoint's
 * feature record (see inputs.h). */
#include "nextstate/encode/inputs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nextstate/encode/embed.h"
#include "nextstate/util/json.h"

/* Pair ids of dataset ds's transitions (state-action rows): the position
 * of each transition's operator in its state's applicable list. */
static ns_status transition_pairs(const ns_dataset *ds, int64_t **out, ns_error *err)
{
    int64_t T = ns_dataset_ntransitions(ds);
    const int64_t *off = ds->applicable_offsets.data;
    const int32_t *ops = ds->applicable_ops.data;
    int64_t *tp = ns_xmalloc((size_t)(T ? T : 1) * sizeof *tp);
    for (int64_t t = 0; t < T; t++) {
        const int32_t *tr = ns_dataset_transition(ds, t);
        int64_t k = off[tr[1]];
        while (k < off[tr[1] + 1] && ops[k] != tr[2]) k++;
        if (k == off[tr[1] + 1]) {
            free(tp);
            return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                                "dataset %s: transition %lld's operator %s is not among the applicable operators of "
                                "its state %d, so it has no state-action row",
                                ds->domain_name, (long long)t, ds->problems[tr[0]].ops[tr[2]], tr[1]);
        }
        tp[t] = k;
    }
    *out = tp;
    return NS_OK;
}

ns_status ns_world_inputs_init(ns_world_inputs *in, const ns_dataset *const *ds, int nds, ns_features *state,
                               ns_features *action, ns_error *err)
{
    memset(in, 0, sizeof *in);
    in->nds = nds;
    in->ds = ds;
    in->state = *state;
    in->action = *action;
    in->action_rows = action->rows;
    memset(state, 0, sizeof *state);
    memset(action, 0, sizeof *action);
    const bool pairs = in->action_rows == NS_AROWS_STATE_ACTION;
    in->state_base = ns_xcalloc((size_t)nds + 1, sizeof(int64_t));
    in->action_base = ns_xcalloc((size_t)nds + 1, sizeof(int64_t));
    in->action_offset = ns_xcalloc((size_t)nds, sizeof(int64_t *));
    in->tr_pair = ns_xcalloc((size_t)nds, sizeof(int64_t *));
    int64_t nactions = 0, npairs = 0;
    for (int d = 0; d < nds; d++) {
        in->action_offset[d] = ns_action_offsets(ds[d]);
        in->state_base[d + 1] = in->state_base[d] + ns_dataset_nstates(ds[d]);
        nactions += in->action_offset[d][ds[d]->nproblems];
        npairs += ds[d]->applicable_ops.shape[0];
        in->action_base[d + 1] = pairs ? npairs : nactions;
        if (pairs) {
            ns_status st = transition_pairs(ds[d], &in->tr_pair[d], err);
            if (st) return st;
        }
    }
    if (in->state.nrows != in->state_base[nds])
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                            "state features have %lld rows; the dataset%s %lld states (one row per global state id)",
                            (long long)in->state.nrows, nds > 1 ? "s have" : " has", (long long)in->state_base[nds]);
    if (in->action.nrows != in->action_base[nds]) {
        int64_t other = pairs ? nactions : npairs;
        return ns_error_set(
            err, NS_ERR_INPUT, NULL, 0, 0, "action features have %lld rows; the dataset%s %lld %s%s",
            (long long)in->action.nrows, nds > 1 ? "s have" : " has", (long long)in->action_base[nds],
            pairs ? "(state, applicable action) pairs (state-action rows: row = applicable_offsets[state] + k)"
                  : "ground actions (row = action_offset[problem] + operator)",
            in->action.nrows != other ? ""
            : pairs ? " — the features look like one row per ground action, yet their .rows.json says state-action"
                    : " — the features look like one row per (state, applicable action) pair: such state-dependent "
                      "encodings need the .rows.json sidecar `nextstate encode --actions` writes");
    }
    return NS_OK;
}

void ns_world_inputs_free(ns_world_inputs *in)
{
    ns_features_free(&in->state);
    ns_features_free(&in->action);
    for (int d = 0; d < in->nds && in->action_offset; d++) free(in->action_offset[d]);
    for (int d = 0; d < in->nds && in->tr_pair; d++) free(in->tr_pair[d]);
    free(in->action_offset);
    free(in->tr_pair);
    free(in->state_base);
    free(in->action_base);
    memset(in, 0, sizeof *in);
}

int64_t ns_world_transition_arow(const ns_world_inputs *in, int d, int64_t t)
{
    if (in->action_rows == NS_AROWS_STATE_ACTION) return in->action_base[d] + in->tr_pair[d][t];
    const int32_t *tr = ns_dataset_transition(in->ds[d], t);
    return in->action_base[d] + in->action_offset[d][tr[0]] + tr[2];
}

int64_t ns_world_applicable_arow(const ns_world_inputs *in, int d, int64_t s, int64_t k)
{
    if (in->action_rows == NS_AROWS_STATE_ACTION) return in->action_base[d] + k;
    const ns_dataset *ds = in->ds[d];
    int p = ((const int32_t *)ds->state_problem.data)[s];
    return in->action_base[d] + in->action_offset[d][p] + ((const int32_t *)ds->applicable_ops.data)[k];
}

static ns_status load_side(ns_features *out, const ns_dataset *const *ds, int nds, const char *spec,
                           const ns_vocab *v, bool state, ns_error *err)
{
    ns_features *parts = ns_xcalloc((size_t)nds, sizeof *parts);
    ns_status st = NS_OK;
    if (!strcmp(spec, "builtin")) {
        for (int d = 0; d < nds; d++) {
            if (state) ns_builtin_states(&parts[d], ds[d], v);
            else ns_builtin_actions(&parts[d], ds[d], v);
        }
    } else {
        char *copy = ns_xstrdup(spec), *save = NULL;
        int d = 0;
        for (char *tok = strtok_r(copy, ",", &save); tok && !st; tok = strtok_r(NULL, ",", &save), d++) {
            if (d >= nds) {
                st = ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "%s features: %s names more than %d source%s",
                                  state ? "state" : "action", spec, nds, nds > 1 ? "s" : "");
                break;
            }
            st = ns_features_load(&parts[d], tok, err);
        }
        if (!st && d < nds)
            st = ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0,
                              "%s features: '%s' names %d source%s; the split has %d datasets (one spec each, "
                              "comma-separated)",
                              state ? "state" : "action", spec, d, d == 1 ? "" : "s", nds);
        free(copy);
    }
    if (!st) st = ns_features_stack(out, parts, nds, err);
    for (int d = 0; d < nds; d++) ns_features_free(&parts[d]);
    free(parts);
    return st;
}

bool ns_spec_is_text(const char *spec) { return spec && !strncmp(spec, "text:", 5); }

/* Both sides of every dataset through the text encoder (for the sides whose
 * spec is "text:NAME"), stacked. */
static ns_status text_sides(ns_features *sf, ns_features *af, const ns_dataset *const *ds, int nds,
                            const char *spec, const ns_text_source *tx, ns_error *err)
{
    if (!tx || !tx->model)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "features '%s' need a text encoder (train --text-encoder)",
                            spec);
    const char *name = spec + 5, *base = strrchr(name, '/');
    const char *model = ns_bert_config_of(tx->model)->name;
    base = base && base[1] ? base + 1 : name;
    size_t bl = strlen(base);
    while (bl > 0 && base[bl - 1] == '/') bl--;
    if (bl != strlen(model) || strncmp(base, model, bl) != 0)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "features '%s' name another model than the encoder given (%s)",
                            spec, model);
    ns_features *ps = ns_xcalloc((size_t)nds, sizeof *ps), *pa = ns_xcalloc((size_t)nds, sizeof *pa);
    ns_status st = NS_OK;
    for (int d = 0; d < nds && !st; d++)
        st = ns_embed_dataset_features(tx->model, ds[d], tx->domains_dir,
                                       tx->dataset_dirs ? tx->dataset_dirs[d] : NULL, tx->progress, sf ? &ps[d] : NULL,
                                       af ? &pa[d] : NULL, NULL, err);
    if (!st && sf) st = ns_features_stack(sf, ps, nds, err);
    if (!st && af) st = ns_features_stack(af, pa, nds, err);
    for (int d = 0; d < nds; d++) ns_features_free(&ps[d]), ns_features_free(&pa[d]);
    free(ps);
    free(pa);
    return st;
}

ns_status ns_world_inputs_load(ns_world_inputs *in, const ns_dataset *const *ds, int nds, const char *state_spec,
                               const char *action_spec, const ns_vocab *sv, const ns_vocab *av, ns_error *err)
{
    return ns_world_inputs_load_text(in, ds, nds, state_spec, action_spec, sv, av, NULL, err);
}

ns_status ns_world_inputs_load_text(ns_world_inputs *in, const ns_dataset *const *ds, int nds,
                                    const char *state_spec, const char *action_spec, const ns_vocab *sv,
                                    const ns_vocab *av, const ns_text_source *text, ns_error *err)
{
    memset(in, 0, sizeof *in);
    ns_features sf, af;
    memset(&sf, 0, sizeof sf);
    memset(&af, 0, sizeof af);
    bool ts = ns_spec_is_text(state_spec), ta = ns_spec_is_text(action_spec);
    ns_status st = NS_OK;
    if (ts && ta && strcmp(state_spec, action_spec) != 0)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "state features '%s' and action features '%s' name two "
                            "text encoders; one is supported", state_spec, action_spec);
    if (ts || ta) st = text_sides(ts ? &sf : NULL, ta ? &af : NULL, ds, nds, ts ? state_spec : action_spec, text, err);
    if (!st && !ts) st = load_side(&sf, ds, nds, state_spec, sv, true, err);
    if (!st && !ta) st = load_side(&af, ds, nds, action_spec, av, false, err);
    if (st) {
        ns_features_free(&sf);
        ns_features_free(&af);
        return st;
    }
    st = ns_world_inputs_init(in, ds, nds, &sf, &af, err);
    if (st) ns_world_inputs_free(in);
    return st;
}

static void put_vocab(ns_buf *b, const ns_vocab *v)
{
    ns_buf_putc(b, '[');
    for (int i = 0; v && i < v->n; i++) {
        if (i) ns_buf_puts(b, ", ");
        ns_json_put_str(b, v->terms[i]);
    }
    ns_buf_putc(b, ']');
}

/* ---- standardisation ------------------------------------------------------------ */

void ns_feature_std_free(ns_feature_std *s)
{
    free(s->mean);
    free(s->scale);
    memset(s, 0, sizeof *s);
}

void ns_feature_std_fit(ns_feature_std *s, const ns_features *f, const int64_t *rows, int64_t n)
{
    int D = (int)f->dim;
    s->dim = D;
    s->mean = ns_xcalloc((size_t)D + 1, sizeof(float));
    s->scale = ns_xcalloc((size_t)D + 1, sizeof(float));
    double *sum = ns_xcalloc((size_t)D + 1, sizeof(double)), *sq = ns_xcalloc((size_t)D + 1, sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        const float *x = f->dense + (size_t)rows[i] * D;
        for (int c = 0; c < D; c++) sum[c] += x[c];
    }
    for (int c = 0; c < D; c++) sum[c] /= n > 0 ? (double)n : 1.0;
    for (int64_t i = 0; i < n; i++) { /* two passes: the columns vary by ~1e-3 around large means */
        const float *x = f->dense + (size_t)rows[i] * D;
        for (int c = 0; c < D; c++) sq[c] += ((double)x[c] - sum[c]) * ((double)x[c] - sum[c]);
    }
    for (int c = 0; c < D; c++) {
        double sd = sqrt(sq[c] / (n > 0 ? (double)n : 1.0));
        s->mean[c] = (float)sum[c];
        s->scale[c] = sd < 1e-6 ? 1.0f : (float)(1.0 / sd);
    }
    free(sum);
    free(sq);
}

ns_status ns_feature_std_apply(const ns_feature_std *s, ns_features *f, const char *side, ns_error *err)
{
    if (s->dim == 0) return NS_OK;
    if (f->sparse || f->dim != s->dim)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                            "%s features are %s with %lld columns; the standardisation is for dense features with %d",
                            side, f->sparse ? "sparse" : "dense", (long long)f->dim, s->dim);
    for (int64_t r = 0; r < f->nrows; r++) {
        float *x = f->dense + (size_t)r * s->dim;
        for (int c = 0; c < s->dim; c++) x[c] = (x[c] - s->mean[c]) * s->scale[c];
    }
    return NS_OK;
}

ns_status ns_world_standardize_split(ns_world_inputs *in, const ns_split *sp, bool state, bool action,
                                     ns_feature_std *ss, ns_feature_std *as, ns_error *err)
{
    memset(ss, 0, sizeof *ss);
    memset(as, 0, sizeof *as);
    const ns_features *f[2] = {&in->state, &in->action};
    const char *side[2] = {"state", "action"};
    bool want[2] = {state, action};
    for (int k = 0; k < 2; k++)
        if (want[k] && f[k]->sparse)
            return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0,
                                "standardising needs dense %s features (sparse ones would lose their sparsity)",
                                side[k]);
    int64_t u = 0;
    int64_t *rows = ns_xmalloc((size_t)(2 * sp->train.n + 1) * sizeof *rows);
    for (int k = 0; k < 2; k++) {
        if (!want[k]) continue;
        u = 0;
        for (int d = 0; d < in->nds; d++) {
            ns_train_touch t;
            ns_train_touch_init(&t, sp->train.ref, sp->train.n, d, in->ds[d]);
            int64_t m = 0, *r = rows + u;
            if (k == 0) {
                /* the source and target states of the training transitions, ascending */
                for (int64_t i = 0; i < t.nstates; i++) rows[u++] = in->state_base[d] + t.states[i];
            } else {
                /* their action rows, each once, ascending */
                for (int64_t i = 0; i < t.ntrans; i++) r[m++] = ns_world_transition_arow(in, d, t.trans[i]);
                qsort(r, (size_t)m, sizeof *r, ns_cmp_i64);
                for (int64_t i = 0; i < m; i++)
                    if (u == r - rows || rows[u - 1] != r[i]) rows[u++] = r[i];
            }
            ns_train_touch_free(&t);
        }
        ns_feature_std *st = k == 0 ? ss : as;
        ns_feature_std_fit(st, f[k], rows, u);
        ns_status rc = ns_feature_std_apply(st, k == 0 ? &in->state : &in->action, side[k], err);
        if (rc) {
            free(rows);
            return rc;
        }
    }
    free(rows);
    return NS_OK;
}

ns_status ns_world_standardize_sides(const ns_world_inputs *in, const char *which, bool *state, bool *action,
                                     ns_error *err)
{
    if (!which || !strcmp(which, "auto")) {
        *state = !in->state.sparse;
        *action = !in->action.sparse;
        return NS_OK;
    }
    *state = !strcmp(which, "state") || !strcmp(which, "both");
    *action = !strcmp(which, "action") || !strcmp(which, "both");
    if (!*state && !*action && strcmp(which, "none"))
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0,
                            "--standardize expects auto, state, action, both or none, given '%s'", which);
    return NS_OK;
}

static void put_floats(ns_buf *b, const float *x, int n)
{
    ns_buf_putc(b, '[');
    for (int i = 0; i < n; i++) {
        if (i) ns_buf_puts(b, ", ");
        ns_json_put_num(b, x[i]);
    }
    ns_buf_putc(b, ']');
}

static void put_std(ns_buf *b, const ns_feature_std *s)
{
    if (!s || s->dim == 0) {
        ns_buf_puts(b, "null");
        return;
    }
    ns_buf_puts(b, "{\"mean\": ");
    put_floats(b, s->mean, s->dim);
    ns_buf_puts(b, ", \"scale\": ");
    put_floats(b, s->scale, s->dim);
    ns_buf_putc(b, '}');
}

/* Reads {"mean": [...], "scale": [...]} (or null / absent: dim 0). */
static ns_status get_std(const ns_json *v, ns_feature_std *s, const char *side, ns_error *err)
{
    memset(s, 0, sizeof *s);
    if (!v || v->kind == NS_JSON_NULL) return NS_OK;
    const ns_json *m = v->kind == NS_JSON_OBJECT ? ns_json_get(v, "mean") : NULL;
    const ns_json *c = v->kind == NS_JSON_OBJECT ? ns_json_get(v, "scale") : NULL;
    if (!m || !c || m->kind != NS_JSON_ARRAY || c->kind != NS_JSON_ARRAY || m->n != c->n || m->n == 0)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                            "the checkpoint's %s standardisation is malformed (needs equal-length mean and scale)",
                            side);
    s->dim = m->n;
    s->mean = ns_xmalloc((size_t)s->dim * sizeof(float));
    s->scale = ns_xmalloc((size_t)s->dim * sizeof(float));
    for (int i = 0; i < s->dim; i++) {
        if (m->items[i].kind != NS_JSON_NUMBER || c->items[i].kind != NS_JSON_NUMBER) {
            ns_feature_std_free(s);
            return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "the checkpoint's %s standardisation holds a non-number",
                                side);
        }
        s->mean[i] = (float)m->items[i].number;
        s->scale[i] = (float)c->items[i].number;
    }
    return NS_OK;
}

void ns_world_features_json(ns_buf *b, const char *state_spec, const char *action_spec, const ns_vocab *sv,
                            const ns_vocab *av, const ns_feature_std *ss, const ns_feature_std *as)
{
    ns_buf_puts(b, "{\"state\": ");
    ns_json_put_str(b, state_spec);
    ns_buf_puts(b, ", \"action\": ");
    ns_json_put_str(b, action_spec);
    ns_buf_puts(b, ",\n  \"state_vocab\": ");
    put_vocab(b, !strcmp(state_spec, "builtin") ? sv : NULL);
    ns_buf_puts(b, ",\n  \"action_vocab\": ");
    put_vocab(b, !strcmp(action_spec, "builtin") ? av : NULL);
    ns_buf_puts(b, ",\n  \"standardize\": {\"state\": ");
    put_std(b, ss);
    ns_buf_puts(b, ", \"action\": ");
    put_std(b, as);
    ns_buf_puts(b, "}}");
}

ns_status ns_world_features_parse(const char *meta, char **state_spec, char **action_spec, ns_vocab *sv, ns_vocab *av,
                                  ns_feature_std *ss, ns_feature_std *as, ns_error *err)
{
    *state_spec = *action_spec = NULL;
    ns_vocab_init(sv);
    ns_vocab_init(av);
    if (ss) memset(ss, 0, sizeof *ss);
    if (as) memset(as, 0, sizeof *as);
    ns_json j;
    ns_status st = ns_json_parse(&j, meta, strlen(meta), "checkpoint meta", err);
    if (st) return st;
    const ns_json *f = ns_json_get(&j, "features");
    const char *s = NULL, *a = NULL;
    if (!f || f->kind != NS_JSON_OBJECT || !ns_json_get_str(f, "state", &s) || !ns_json_get_str(f, "action", &a)) {
        ns_json_free(&j);
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "the checkpoint records no feature sources");
    }
    *state_spec = ns_xstrdup(s);
    *action_spec = ns_xstrdup(a);
    const char *keys[2] = {"state_vocab", "action_vocab"};
    ns_vocab *vs[2] = {sv, av};
    for (int k = 0; k < 2; k++) {
        const ns_json *v = ns_json_get(f, keys[k]);
        if (!v || v->kind != NS_JSON_ARRAY) continue;
        for (int i = 0; i < v->n; i++)
            if (v->items[i].kind == NS_JSON_STRING) ns_vocab_add(vs[k], v->items[i].string);
    }
    const ns_json *z = ns_json_get(f, "standardize");
    if (z && z->kind == NS_JSON_OBJECT) {
        if (ss) st = get_std(ns_json_get(z, "state"), ss, "state", err);
        if (!st && as) st = get_std(ns_json_get(z, "action"), as, "action", err);
    }
    ns_json_free(&j);
    return st;
}
