/* encoder.c — WL or FSF state encoders behind one interface. */
#include "nextstate/encode/encoder.h"

#include <stdlib.h>
#include <string.h>

int ns_encoder_kind_parse(const char *name)
{
    if (!strcmp(name, "wl")) return NS_ENCODER_WL;
    if (!strcmp(name, "fsf")) return NS_ENCODER_FSF;
    return -1;
}

const char *ns_encoder_kind_name(ns_encoder_kind k) { return k == NS_ENCODER_WL ? "wl" : "fsf"; }

ns_status ns_wl_vocab_fit_trajset(ns_wl_vocab *v, const ns_trajset *s, const uint8_t *mask, int iterations,
                                  bool multiset, bool statics, bool with_goals, ns_error *err)
{
    ns_wl_vocab_init(v, &s->d, iterations, multiset);
    ns_wl_fitter f;
    ns_wl_fit_init(&f, v);
    ns_wl_opts o = {iterations, statics};
    ns_status st = NS_OK;
    int64_t row = 0;
    for (int i = 0; i < s->n && st == NS_OK; i++) {
        const ns_traj *it = &s->v[i];
        ns_wl_encoder e;
        st = ns_wl_encoder_init(&e, v, &it->t, &o, err);
        if (st != NS_OK) break;
        for (int k = 0; k < it->nstates; k++, row++)
            if (!mask || mask[row]) ns_wl_fit_add_state(&f, &e, it->states + (size_t)k * (size_t)it->t.nwords);
        if (with_goals) ns_wl_fit_add_goal(&f, &e);
        ns_wl_encoder_free(&e);
    }
    if (st == NS_OK) st = ns_wl_fit_finish(&f, err);
    ns_wl_fit_free(&f);
    return st;
}

ns_status ns_encoder_spec_fit_wl(ns_encoder_spec *e, const ns_trajset *s, int iterations, bool statics,
                                 ns_error *err)
{
    memset(e, 0, sizeof *e);
    e->kind = NS_ENCODER_WL;
    e->wl_opts.iterations = iterations;
    e->wl_opts.statics = statics;
    e->wl_loaded = true;
    ns_status st = ns_wl_vocab_fit_trajset(&e->wl, s, NULL, iterations, true, statics, false, err);
    if (st != NS_OK) ns_encoder_spec_free(e);
    return st;
}

ns_status ns_encoder_spec_fsf(ns_encoder_spec *e, const ns_trajset *s, int max_objects, ns_error *err)
{
    memset(e, 0, sizeof *e);
    e->kind = NS_ENCODER_FSF;
    e->fsf.domain = ns_fsf_domain_detect(&s->d);
    if (e->fsf.domain == NS_FSF_AUTO)
        return ns_error_set(err, NS_ERR_UNSUPPORTED, s->d.path, 0, 0,
                            "FSF: domain '%s' is not blocks, gripper, logistics or visitall", s->d.name);
    e->fsf.max_objects = max_objects > 0 ? max_objects : ns_trajset_max_objects(s);
    return NS_OK;
}

void ns_encoder_spec_free(ns_encoder_spec *e)
{
    if (e->wl_loaded) ns_wl_vocab_free(&e->wl);
    memset(e, 0, sizeof *e);
}

int ns_encoder_spec_dim(const ns_encoder_spec *e)
{
    return e->kind == NS_ENCODER_WL ? ns_wl_vocab_dim(&e->wl) : ns_fsf_dim(&e->fsf);
}

void ns_encoder_spec_write(const ns_encoder_spec *e, ns_buf *b)
{
    if (e->kind == NS_ENCODER_FSF) {
        ns_buf_printf(b, "{\"kind\": \"fsf\", \"max_objects\": %d, \"domain\": \"%s\"}", e->fsf.max_objects,
                      ns_fsf_domain_name(e->fsf.domain));
        return;
    }
    ns_buf v;
    ns_buf_init(&v);
    ns_wl_vocab_write(&e->wl, NS_WL_KEYS_FLAT, &v);
    ns_buf_printf(b, "{\"kind\": \"wl\", \"iterations\": %d, \"statics\": %s, \"vocab\": ", e->wl_opts.iterations,
                  e->wl_opts.statics ? "true" : "false");
    ns_json_put_strn(b, v.data ? v.data : "", v.len);
    ns_buf_puts(b, "}");
    ns_buf_free(&v);
}

ns_status ns_encoder_spec_parse(ns_encoder_spec *e, const ns_json *j, const char *path, ns_error *err)
{
    memset(e, 0, sizeof *e);
    const char *kind = NULL;
    if (!j || j->kind != NS_JSON_OBJECT || !ns_json_get_str(j, "kind", &kind) || ns_encoder_kind_parse(kind) < 0)
        return ns_error_set(err, NS_ERR_INPUT, path, j ? j->line : 0, j ? j->col : 0,
                            "encoder: expected an object with \"kind\": \"wl\" or \"fsf\"");
    e->kind = (ns_encoder_kind)ns_encoder_kind_parse(kind);
    if (e->kind == NS_ENCODER_FSF) {
        int64_t m = 0;
        const char *dn = NULL;
        if (!ns_json_get_int(j, "max_objects", &m) || m < 1 || m > (1 << 24) || !ns_json_get_str(j, "domain", &dn) ||
            ns_fsf_domain_parse(dn) == NS_FSF_AUTO)
            return ns_error_set(err, NS_ERR_INPUT, path, j->line, j->col,
                                "encoder: FSF needs \"max_objects\" ≥ 1 and a known \"domain\"");
        e->fsf.max_objects = (int)m;
        e->fsf.domain = ns_fsf_domain_parse(dn);
        return NS_OK;
    }
    int64_t it = 0;
    const ns_json *st = ns_json_get(j, "statics");
    const ns_json *voc = ns_json_get(j, "vocab");
    if (!ns_json_get_int(j, "iterations", &it) || it < 0 || it > 64 || !st || st->kind != NS_JSON_BOOL || !voc ||
        voc->kind != NS_JSON_STRING)
        return ns_error_set(err, NS_ERR_INPUT, path, j->line, j->col,
                            "encoder: WL needs \"iterations\", \"statics\" and a \"vocab\" string");
    e->wl_opts.iterations = (int)it;
    e->wl_opts.statics = st->boolean;
    ns_status s = ns_wl_vocab_parse(&e->wl, voc->string, voc->string_len, path, NS_WL_KEYS_FLAT, err);
    if (s != NS_OK) return s;
    e->wl_loaded = true;
    if (e->wl.iterations < e->wl_opts.iterations) {
        ns_encoder_spec_free(e);
        return ns_error_set(err, NS_ERR_INPUT, path, j->line, j->col,
                            "encoder: %d iterations but the vocabulary has %d", (int)it, e->wl.iterations);
    }
    return NS_OK;
}

ns_status ns_encoder_init(ns_encoder *e, const ns_encoder_spec *spec, const ns_task *t, ns_error *err)
{
    memset(e, 0, sizeof *e);
    ns_status st = spec->kind == NS_ENCODER_WL ? ns_wl_encoder_init(&e->wl, &spec->wl, t, &spec->wl_opts, err)
                                               : ns_fsf_encoder_init(&e->fsf, &spec->fsf, t, err);
    if (st != NS_OK) return st;
    e->spec = spec;
    e->dim = ns_encoder_spec_dim(spec);
    return NS_OK;
}

void ns_encoder_free(ns_encoder *e)
{
    if (!e->spec) return;
    if (e->spec->kind == NS_ENCODER_WL) ns_wl_encoder_free(&e->wl);
    else ns_fsf_encoder_free(&e->fsf);
    e->spec = NULL;
}

void ns_encoder_state(ns_encoder *e, const ns_word *s, float *out)
{
    if (e->spec->kind == NS_ENCODER_WL) ns_wl_features_dense(&e->wl, s, out);
    else ns_fsf_encode(&e->fsf, s, out);
}

void ns_encoder_goal(ns_encoder *e, float *out)
{
    if (e->spec->kind == NS_ENCODER_WL) ns_wl_goal_features_dense(&e->wl, out);
    else ns_fsf_encode_goal(&e->fsf, out);
}

int ns_encoder_sparse(ns_encoder *e, const ns_word *s, int *idx, float *val, float *scratch)
{
    if (e->spec->kind == NS_ENCODER_WL) return s ? ns_wl_features(&e->wl, s, idx, val) : ns_wl_goal_features(&e->wl, idx, val);
    if (s) ns_fsf_encode(&e->fsf, s, scratch);
    else ns_fsf_encode_goal(&e->fsf, scratch);
    int n = 0;
    for (int j = 0; j < e->dim; j++)
        if (scratch[j] != 0.0f) {
            idx[n] = j;
            val[n++] = scratch[j];
        }
    return n;
}

int ns_encoder_max_nnz(const ns_encoder *e) { return e->spec->kind == NS_ENCODER_WL ? ns_wl_max_nnz(&e->wl) : e->dim; }
