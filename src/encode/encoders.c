/* encoders.c — the encoder registry and the encoders behind it: the
 * built-in bag of literals, the text featurizers and imported features
 * (see encoders.h). */
#include "nextstate/encode/encoders.h"

#include <stdlib.h>
#include <string.h>

#include "nextstate/encode/builtin.h"
#include "nextstate/encode/embed.h"
#include "nextstate/encode/featurize.h"
#include "nextstate/util/json.h"

/* ---- built-in bag of literals -------------------------------------------------- */

#define BUILTIN_FORMAT "nextstate-builtin-vocab"

static ns_status builtin_fit(ns_enc *e, const ns_dataset *const *ds, int nds, const ns_split *sp, ns_error *err)
{
    (void)err;
    ns_vocab other;
    ns_vocab_init(&other);
    ns_vocab *v = e->impl;
    if (e->side == NS_ENC_STATES) ns_builtin_fit_split(v, &other, ds, nds, sp);
    else ns_builtin_fit_split(&other, v, ds, nds, sp);
    ns_vocab_free(&other);
    return NS_OK;
}

static ns_status builtin_encode(ns_enc *e, const ns_dataset *ds, int d, ns_features *out, ns_error *err)
{
    (void)d, (void)err;
    if (e->side == NS_ENC_STATES) ns_builtin_states(out, ds, e->impl);
    else ns_builtin_actions(out, ds, e->impl);
    return NS_OK;
}

static ns_status builtin_save(const ns_enc *e, const char *path, ns_error *err)
{
    const ns_vocab *v = e->impl;
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_printf(&b, "{\"format\": \"%s\", \"side\": \"%s\", \"terms\": [", BUILTIN_FORMAT,
                  e->side == NS_ENC_STATES ? "states" : "actions");
    for (int i = 0; i < v->n; i++) {
        if (i) ns_buf_puts(&b, ", ");
        ns_json_put_str(&b, v->terms[i]);
    }
    ns_buf_puts(&b, "]}\n");
    ns_status st = ns_write_file_atomic(path, b.data, b.len, err);
    ns_buf_free(&b);
    return st;
}

static ns_status builtin_load(ns_enc *e, const char *path, ns_error *err)
{
    char *text;
    size_t len;
    ns_status st = ns_read_file(path, &text, &len, err);
    if (st) return st;
    ns_json j;
    st = ns_json_parse(&j, text, len, path, err);
    free(text);
    if (st) return st;
    const char *fmt = NULL, *side = NULL;
    const ns_json *terms = ns_json_get(&j, "terms");
    const char *want = e->side == NS_ENC_STATES ? "states" : "actions";
    if (!ns_json_get_str(&j, "format", &fmt) || strcmp(fmt, BUILTIN_FORMAT) || !terms || terms->kind != NS_JSON_ARRAY)
        st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "not a %s file (format, terms)", BUILTIN_FORMAT);
    else if (!ns_json_get_str(&j, "side", &side) || strcmp(side, want))
        st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "a vocabulary of %s, not of %s", side ? side : "no side",
                          want);
    ns_vocab *v = e->impl;
    for (int i = 0; !st && i < terms->n; i++) {
        if (terms->items[i].kind != NS_JSON_STRING)
            st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "term %d is not a string", i);
        else if (ns_vocab_add(v, terms->items[i].string) != i)
            st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "term %d repeats an earlier one", i);
    }
    ns_json_free(&j);
    return st;
}

static void builtin_free(ns_enc *e)
{
    ns_vocab_free(e->impl);
    free(e->impl);
}

/* ---- text featurizers ---------------------------------------------------------- */

typedef struct text_enc {
    ns_feat_opts opts;
    ns_featurizer f;
    bool have;
} text_enc;

static bool needs_render(ns_feat_source s) { return s == NS_FEAT_SRC_PROMPT || s == NS_FEAT_SRC_CONTEXT; }

static ns_status text_fit(ns_enc *e, const ns_dataset *const *ds, int nds, const ns_split *sp, ns_error *err)
{
    text_enc *t = e->impl;
    ns_feat_docs *parts = ns_xcalloc((size_t)nds + 1, sizeof *parts);
    ns_feat_ds_ctx *ctx = ns_xcalloc((size_t)nds + 1, sizeof *ctx);
    ns_train_touch *touch = ns_xcalloc((size_t)nds + 1, sizeof *touch);
    ns_render_prep ***preps = ns_xcalloc((size_t)nds + 1, sizeof *preps);
    ns_status st = NS_OK;
    for (int d = 0; d < nds && !st; d++) {
        if (needs_render(t->opts.source)) st = ns_feat_renders_new(&preps[d], ds[d], e->domains, err);
        if (st) break;
        ns_train_touch_init(&touch[d], sp->train.ref, sp->train.n, d, ds[d]);
        bool actions = t->opts.source == NS_FEAT_SRC_ACTION;
        ns_feat_docs_dataset(&parts[d], &ctx[d], ds[d], preps[d], t->opts.source,
                             actions ? touch[d].actions : touch[d].states,
                             actions ? touch[d].nactions : touch[d].nstates);
        if (t->opts.kind == NS_FEAT_RANDOM) parts[d].n = 0; /* nothing to fit */
    }
    if (!st) {
        ns_feat_docs all;
        ns_feat_concat_ctx cc;
        ns_feat_docs_concat(&all, &cc, parts, nds);
        st = ns_featurizer_fit(&t->f, &t->opts, &all, err);
        t->have = st == NS_OK;
        ns_feat_docs_concat_free(&cc);
    }
    for (int d = 0; d < nds; d++) {
        ns_train_touch_free(&touch[d]);
        if (preps[d]) ns_feat_renders_free(preps[d], ds[d]->nproblems);
    }
    free(parts);
    free(ctx);
    free(touch);
    free(preps);
    return st;
}

static ns_status text_encode(ns_enc *e, const ns_dataset *ds, int d, ns_features *out, ns_error *err)
{
    (void)d;
    text_enc *t = e->impl;
    const ns_feat_source src = t->f.opts.source;
    ns_render_prep **preps = NULL;
    ns_status st = needs_render(src) ? ns_feat_renders_new(&preps, ds, e->domains, err) : NS_OK;
    if (st) return st;
    int64_t n, *pairs = NULL;
    if (src == NS_FEAT_SRC_ACTION) pairs = ns_feat_all_actions(ds, &n);
    else n = ns_dataset_nstates(ds);
    ns_feat_ds_ctx ctx;
    ns_feat_docs docs;
    ns_feat_docs_dataset(&docs, &ctx, ds, preps, src, pairs, n);
    memset(out, 0, sizeof *out);
    out->dim = ns_featurizer_dim(&t->f);
    out->nrows = n;
    out->sparse = ns_featurizer_sparse(&t->f);
    if (out->sparse) {
        ns_csr_init(&out->csr, out->dim);
        st = ns_featurizer_transform_sparse(&t->f, &docs, &out->csr, err);
    } else {
        out->dense = ns_xmalloc((size_t)(n * out->dim + 1) * sizeof(float));
        st = ns_featurizer_transform_dense(&t->f, &docs, out->dense, err);
    }
    if (st) ns_features_free(out);
    free(pairs);
    if (preps) ns_feat_renders_free(preps, ds->nproblems);
    return st;
}

static ns_status text_save(const ns_enc *e, const char *path, ns_error *err)
{
    return ns_featurizer_save(&((const text_enc *)e->impl)->f, path, err);
}

static ns_status text_load(ns_enc *e, const char *path, ns_error *err)
{
    text_enc *t = e->impl;
    ns_status st = ns_featurizer_load(&t->f, path, err);
    if (st) return st;
    t->have = true;
    bool actions = t->f.opts.source == NS_FEAT_SRC_ACTION;
    if (actions != (e->side == NS_ENC_ACTIONS))
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "a featurizer of %s, asked for %s",
                            actions ? "actions" : "states", e->side == NS_ENC_ACTIONS ? "actions" : "states");
    return NS_OK;
}

static void text_free(ns_enc *e)
{
    text_enc *t = e->impl;
    if (t->have) ns_featurizer_free(&t->f);
    free(t);
}

/* ---- imported features (.npy or CSR triple) ------------------------------------ */

static ns_status npy_encode(ns_enc *e, const ns_dataset *ds, int d, ns_features *out, ns_error *err)
{
    (void)ds;
    if (!e->spec)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "npy encoder: no feature spec (FILE.npy or DIR/PREFIX)");
    char *copy = ns_xstrdup(e->spec), *save = NULL, *tok = strtok_r(copy, ",", &save);
    for (int k = 0; tok && k < d; k++) tok = strtok_r(NULL, ",", &save);
    ns_status st = tok ? ns_features_load(out, tok, err)
                       : ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "npy encoder: '%s' names no source for dataset %d",
                                      e->spec, d);
    free(copy);
    return st;
}

/* ---- neural text encoder (a BERT-family model folder) ----------------------------- */

/* Every state's EmbedPlan prompt (or every action's text) of ds, embedded by
 * the model in e->spec; prompts beyond the window are chunked (the mean of
 * the windows' embeddings), never truncated. */
static ns_status embed_encode(ns_enc *e, const ns_dataset *ds, int d, ns_features *out, ns_error *err)
{
    (void)d;
    if (!e->spec) return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "embed encoder: no model folder");
    ns_bert *m = NULL;
    ns_status st = ns_bert_load(&m, e->spec, err);
    if (st) return st;
    ns_render_prep **preps = NULL;
    if ((st = ns_feat_renders_new(&preps, ds, e->domains, err))) {
        ns_bert_free(m);
        return st;
    }
    ns_text_list tl;
    ns_text_list_dataset(&tl, ds, preps, NS_PROMPT_PAPER);
    const bool actions = e->side == NS_ENC_ACTIONS;
    const int64_t n = actions ? tl.nactions : tl.nstates;
    const char *const *texts = tl.texts + (actions ? tl.nstates : 0);
    const size_t *lens = tl.lens + (actions ? tl.nstates : 0);
    ns_embed_opts o = {.batch = 32, .chunks = ns_embed_count_over_window(m, n, texts, lens) > 0};
    ns_embed_table t;
    ns_embed_table_init(&t, ns_bert_dim(m));
    st = ns_embed_texts(m, &t, n, texts, lens, &o, NULL, err);
    if (!st) {
        memset(out, 0, sizeof *out);
        out->nrows = n;
        out->dim = t.dim;
        out->dense = ns_xmalloc((size_t)(n * t.dim + 1) * sizeof(float));
        for (int64_t i = 0; i < n; i++)
            memcpy(out->dense + i * t.dim, ns_embed_get(&t, texts[i], lens[i]), (size_t)t.dim * sizeof(float));
    }
    ns_embed_table_free(&t);
    ns_text_list_free(&tl);
    ns_feat_renders_free(preps, ds->nproblems);
    ns_bert_free(m);
    return st;
}

/* ---- the registry ------------------------------------------------------------- */

#define TEXT_ROW(nm, what) {nm, what, true, true, text_fit, text_encode, text_save, text_load, text_free}

static const ns_enc_type BUILTIN = {"builtin", "bag of literals (states) / schema + argument one-hots (actions)",
                                    true, true, builtin_fit, builtin_encode, builtin_save, builtin_load,
                                    builtin_free};
static const ns_enc_type TEXT[] = {
    TEXT_ROW("literals", "binary bag of the true literals"),
    TEXT_ROW("bow", "bag of words of the prompt"),
    TEXT_ROW("tfidf", "TF-IDF of prompt word 1-2-grams (SVD to 1024)"),
    TEXT_ROW("char", "TF-IDF of prompt character 3-5-grams (SVD to 1024)"),
    TEXT_ROW("random", "a seeded random vector per distinct text"),
    TEXT_ROW("context", "TF-IDF of the prompt without its CURRENT STATE block"),
    TEXT_ROW("onehot", "one column per distinct literal set"),
};
static const ns_enc_type NPY = {"npy", "imported features: FILE.npy or DIR/PREFIX per dataset", true, false, NULL,
                                npy_encode, NULL, NULL, NULL};

static const ns_enc_type EMBED = {"embed", "frozen neural text encoder (model folder): prompts / action texts",
                                  true, false, NULL, embed_encode, NULL, NULL, NULL};

static const ns_enc_type *const TYPES[] = {&BUILTIN, &TEXT[0], &TEXT[1], &TEXT[2], &TEXT[3],
                                           &TEXT[4], &TEXT[5], &TEXT[6], &NPY, &EMBED};

const ns_enc_type *const *ns_enc_types(int *n)
{
    *n = (int)(sizeof TYPES / sizeof TYPES[0]);
    return TYPES;
}

const ns_enc_type *ns_enc_find(const char *name)
{
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++)
        if (!strcmp(TYPES[i]->name, name)) return TYPES[i];
    return NULL;
}

ns_status ns_enc_init(ns_enc *e, const char *name, ns_enc_side side, ns_error *err)
{
    memset(e, 0, sizeof *e);
    const ns_enc_type *t = ns_enc_find(name);
    if (!t) {
        ns_buf b;
        ns_buf_init(&b);
        for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++) ns_buf_printf(&b, "%s%s", i ? ", " : "", TYPES[i]->name);
        ns_status st = ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "unknown encoder '%s' (%s)", name, b.data);
        ns_buf_free(&b);
        return st;
    }
    if (side == NS_ENC_ACTIONS && !t->has_actions)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "encoder '%s' has no action side", name);
    e->type = t;
    e->side = side;
    e->domains = NULL;
    e->fitted = !t->fits;
    if (t == &BUILTIN) {
        ns_vocab *v = ns_xmalloc(sizeof *v);
        ns_vocab_init(v);
        e->impl = v;
    } else if (t->fit == text_fit) {
        text_enc *x = ns_xcalloc(1, sizeof *x);
        const char *kind = strcmp(name, "context") ? name : "tfidf";
        bool actions = side == NS_ENC_ACTIONS;
        ns_feat_opts_init(&x->opts, (ns_feat_kind)ns_feat_kind_parse(kind), actions);
        if (!strcmp(name, "context") && !actions) x->opts.source = NS_FEAT_SRC_CONTEXT;
        e->impl = x;
    }
    return NS_OK;
}

void ns_enc_init_text(ns_enc *e, const ns_feat_opts *o)
{
    memset(e, 0, sizeof *e);
    e->type = &TEXT[0]; /* every text row shares the functions; the options decide */
    for (size_t i = 0; i < sizeof TEXT / sizeof TEXT[0]; i++)
        if (!strcmp(TEXT[i].name, ns_feat_kind_name(o->kind))) e->type = &TEXT[i];
    e->side = o->source == NS_FEAT_SRC_ACTION ? NS_ENC_ACTIONS : NS_ENC_STATES;
    e->domains = NULL;
    text_enc *x = ns_xcalloc(1, sizeof *x);
    x->opts = *o;
    e->impl = x;
}

ns_status ns_enc_take_featurizer(ns_enc *e, ns_featurizer *out, ns_error *err)
{
    if (!e->type || e->type->fit != text_fit)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "encoder '%s' is not a text featurizer",
                            e->type ? e->type->name : "(none)");
    text_enc *t = e->impl;
    if (!t->have) return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "encoder '%s' is not fitted", e->type->name);
    *out = t->f;
    memset(&t->f, 0, sizeof t->f);
    t->have = false;
    e->fitted = false;
    return NS_OK;
}

void ns_enc_free(ns_enc *e)
{
    if (e->type && e->type->free) e->type->free(e);
    memset(e, 0, sizeof *e);
}

ns_status ns_enc_fit(ns_enc *e, const ns_dataset *const *ds, int nds, const ns_split *sp, ns_error *err)
{
    if (!e->type->fit) return NS_OK;
    ns_status st = e->type->fit(e, ds, nds, sp, err);
    e->fitted = st == NS_OK;
    return st;
}

ns_status ns_enc_encode(ns_enc *e, const ns_dataset *ds, int d, ns_features *out, ns_error *err)
{
    if (!e->fitted)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "encoder '%s' is not fitted (fit it or load a fit)",
                            e->type->name);
    return e->type->encode(e, ds, d, out, err);
}

ns_status ns_enc_save(const ns_enc *e, const char *path, ns_error *err)
{
    if (!e->type->save)
        return ns_error_set(err, NS_ERR_USAGE, path, 0, 0, "encoder '%s' fits nothing to save", e->type->name);
    if (!e->fitted) return ns_error_set(err, NS_ERR_USAGE, path, 0, 0, "encoder '%s' is not fitted", e->type->name);
    return e->type->save(e, path, err);
}

ns_status ns_enc_load(ns_enc *e, const char *path, ns_error *err)
{
    if (!e->type->load)
        return ns_error_set(err, NS_ERR_USAGE, path, 0, 0, "encoder '%s' has nothing to load", e->type->name);
    ns_status st = e->type->load(e, path, err);
    e->fitted = st == NS_OK;
    return st;
}
