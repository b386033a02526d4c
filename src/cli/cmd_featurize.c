/* cmd_featurize.c — `nextstate featurize DATASET_DIR --kind K …`: the text and
 * literal featurizers (featurize.h) over a dataset's states or actions.
 *
 * OUTDIR receives
 *   states.npy (float32 [N, D]) or states_{indptr,indices,values,shape}.npy
 *     (CSR) — one row per dataset state, in state-id order; or for
 *     --what actions, actions.npy / actions_*.npy — one row per (problem,
 *     operator) pair, problems in order, with action_offsets.npy (i64 [P+1]:
 *     problem p's operator o is row offsets[p] + o) and transition_action.npy
 *     (i64 [T]: the row of each transition's action);
 *   featurizer.json (+ featurizer.svd.npy), the fitted featurizer (--vocab
 *     reads one back);
 *   features.json, last: what was written (kind, source, rows, dim, how it
 *     was fitted) and the bytes + CRC-32 of every file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "nextstate/encode/encoders.h"
#include "nextstate/encode/featurize.h"
#include "nextstate/util/json.h"
#include "nextstate/data/split.h"

#define FEATURES_FORMAT "nextstate-features"

typedef struct fz_args {
    const char *dataset, *out, *fit_on, *vocab, *domains, *what;
    const char *kind_name, *source_name, *context_kind;
    bool fit_all, quiet, onehot_unknown;
    long min_df, svd_dim, svd_iters, svd_max_rows, dim, seed;
} fz_args;

/* One dataset with its renderers (when its texts need them). */
typedef struct fz_data {
    ns_dataset ds;
    bool loaded;
    ns_render_prep **preps;
} fz_data;

static void fz_data_free(fz_data *d)
{
    if (d->preps) ns_feat_renders_free(d->preps, d->ds.nproblems);
    if (d->loaded) ns_dataset_free(&d->ds);
    memset(d, 0, sizeof *d);
}

static int fz_data_load(fz_data *d, const char *dir, const char *domains, bool need_render)
{
    ns_error err;
    memset(d, 0, sizeof *d);
    if (ns_dataset_load(&d->ds, dir, &err) != NS_OK) return cli_report(&err);
    d->loaded = true;
    if (need_render && ns_feat_renders_new(&d->preps, &d->ds, domains, &err) != NS_OK) return cli_report(&err);
    return 0;
}

/* All (problem, operator) pairs of a dataset, problems in order. */
static int64_t *all_actions(const ns_dataset *ds, int64_t *n, int64_t **offsets)
{
    int64_t total = 0;
    *offsets = ns_xmalloc((size_t)(ds->nproblems + 1) * sizeof **offsets);
    for (int p = 0; p < ds->nproblems; p++) {
        (*offsets)[p] = total;
        total += ds->problems[p].nops;
    }
    (*offsets)[ds->nproblems] = total;
    int64_t *pairs = ns_xmalloc((size_t)(2 * total + 2) * sizeof *pairs), k = 0;
    for (int p = 0; p < ds->nproblems; p++)
        for (int o = 0; o < ds->problems[p].nops; o++) {
            pairs[2 * k] = p;
            pairs[2 * k + 1] = o;
            k++;
        }
    *n = total;
    return pairs;
}

/* Appends "name": {"bytes": …, "crc32": …} for a file of dir. */
static int put_file_entry(ns_buf *b, const char *dir, const char *name, bool first)
{
    ns_buf path;
    ns_buf_init(&path);
    ns_buf_printf(&path, "%s/%s", dir, name);
    char *data;
    size_t len;
    ns_error err;
    int rc = 0;
    if (ns_read_file(path.data, &data, &len, &err) != NS_OK) {
        rc = cli_report(&err);
    } else {
        ns_buf_puts(b, first ? "\n    " : ",\n    ");
        ns_json_put_str(b, name);
        ns_buf_printf(b, ": {\"bytes\": %zu, \"crc32\": %u}", len, ns_crc32(0, data, len));
        free(data);
    }
    ns_buf_free(&path);
    return rc;
}

static int parse_args(int argc, char **argv, fz_args *a)
{
    memset(a, 0, sizeof *a);
    a->domains = "domains";
    a->what = "states";
    a->context_kind = "tfidf";
    a->min_df = a->svd_dim = a->svd_iters = a->svd_max_rows = a->dim = -1;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **str = NULL;
        long *num = NULL;
        if (!strcmp(o, "-o") || !strcmp(o, "--output")) str = &a->out;
        else if (!strcmp(o, "--kind")) str = &a->kind_name;
        else if (!strcmp(o, "--fit-on")) str = &a->fit_on;
        else if (!strcmp(o, "--vocab")) str = &a->vocab;
        else if (!strcmp(o, "--what")) str = &a->what;
        else if (!strcmp(o, "--domains")) str = &a->domains;
        else if (!strcmp(o, "--source")) str = &a->source_name;
        else if (!strcmp(o, "--context-kind")) str = &a->context_kind;
        else if (!strcmp(o, "--min-df")) num = &a->min_df;
        else if (!strcmp(o, "--svd-dim")) num = &a->svd_dim;
        else if (!strcmp(o, "--svd-iters")) num = &a->svd_iters;
        else if (!strcmp(o, "--svd-max-rows")) num = &a->svd_max_rows;
        else if (!strcmp(o, "--dim")) num = &a->dim;
        else if (!strcmp(o, "--seed")) num = &a->seed;
        else if (!strcmp(o, "--fit-all")) a->fit_all = true;
        else if (!strcmp(o, "--onehot-unknown")) a->onehot_unknown = true;
        else if (!strcmp(o, "--quiet")) a->quiet = true;
        else if (o[0] == '-' && o[1]) return cli_usage("featurize", "unknown option '%s'", o);
        else if (!a->dataset) a->dataset = o;
        else return cli_usage("featurize", "unexpected argument '%s' (one DATASET_DIR)", o);
        if (str) {
            if (!v) return cli_usage("featurize", "%s expects a value", o);
            *str = v;
            i++;
        } else if (num) {
            if (!cli_parse_long("featurize", o, v, num)) return NS_ERR_USAGE;
            if (*num < 0) return cli_usage("featurize", "%s must not be negative", o);
            i++;
        }
    }
    if (!a->dataset || !a->out || (!a->kind_name && !a->vocab))
        return cli_usage("featurize", "expects DATASET_DIR --kind KIND -o OUTDIR, or --vocab FILE in place of --kind "
                                      "(see nextstate help featurize)");
    if (strcmp(a->what, "states") && strcmp(a->what, "actions"))
        return cli_usage("featurize", "--what expects states or actions");
    if (!!a->fit_on + !!a->vocab + a->fit_all > 1)
        return cli_usage("featurize", "--fit-on, --vocab and --fit-all exclude each other");
    return 0;
}

/* Resolves --kind (+ --context-kind, --source) and the numeric options. */
static int make_opts(const fz_args *a, ns_feat_opts *o)
{
    bool actions = !strcmp(a->what, "actions");
    int kind;
    bool context = !strcmp(a->kind_name, "context");
    if (context) {
        kind = ns_feat_kind_parse(a->context_kind);
        if (kind != NS_FEAT_TFIDF && kind != NS_FEAT_BOW) return cli_usage("featurize", "--context-kind expects tfidf or bow");
    } else if ((kind = ns_feat_kind_parse(a->kind_name)) < 0) {
        return cli_usage("featurize", "unknown --kind '%s' (literals, bow, tfidf, char, random, context, onehot)", a->kind_name);
    }
    ns_feat_opts_init(o, (ns_feat_kind)kind, actions);
    if (context && !actions) o->source = NS_FEAT_SRC_CONTEXT;
    if (a->source_name) {
        int s = ns_feat_source_parse(a->source_name);
        if (s < 0) return cli_usage("featurize", "--source expects prompt, context, literals or action");
        if ((s == NS_FEAT_SRC_ACTION) != actions)
            return cli_usage("featurize", "--source action goes with --what actions (and only it)");
        o->source = (ns_feat_source)s;
    }
    if (a->min_df >= 0) {
        if (a->min_df < 1) return cli_usage("featurize", "--min-df must be at least 1");
        o->min_df = (int)a->min_df;
    }
    if (a->svd_dim >= 0) o->svd_dim = (int)a->svd_dim;
    if (a->svd_iters >= 0) o->svd_iters = (int)a->svd_iters;
    if (a->svd_max_rows >= 0) o->svd_max_rows = a->svd_max_rows;
    if (a->dim >= 0) {
        if (a->dim < 1 || a->dim > (1 << 20)) return cli_usage("featurize", "--dim expects 1..1048576");
        o->random_dim = (int)a->dim;
    }
    if (a->seed >= 0) o->seed = (uint64_t)a->seed;
    o->onehot_unknown = a->onehot_unknown;
    return 0;
}

/* Fits on the training transitions of a split (every dataset it names),
 * through the encoder interface. */
static int fit_on_split(const fz_args *a, const ns_feat_opts *o, fz_data *target, ns_featurizer *f)
{
    ns_split sp;
    ns_error err;
    if (ns_split_load(&sp, a->fit_on, &err) != NS_OK) return cli_report(&err);
    int n = sp.ndatasets, rc = 0;
    fz_data *data = ns_xcalloc((size_t)n, sizeof *data);
    const ns_dataset **dsp = ns_xcalloc((size_t)n, sizeof *dsp);
    for (int d = 0; d < n && !rc; d++) {
        const char *dir = sp.sources[d].dir;
        if (cli_same_dir(dir, a->dataset)) dsp[d] = &target->ds; /* the dataset being featurized */
        else if (!(rc = fz_data_load(&data[d], dir, a->domains, false))) dsp[d] = &data[d].ds;
    }
    if (!rc && ns_split_check(&sp, dsp, n, &err) != NS_OK) rc = cli_report(&err);
    ns_enc e;
    ns_enc_init_text(&e, o);
    e.domains = a->domains;
    if (!rc && (ns_enc_fit(&e, dsp, n, &sp, &err) != NS_OK || ns_enc_take_featurizer(&e, f, &err) != NS_OK))
        rc = cli_report(&err);
    ns_enc_free(&e);
    for (int d = 0; d < n; d++)
        if (dsp[d] == &data[d].ds) fz_data_free(&data[d]);
    free(data);
    free(dsp);
    ns_split_free(&sp);
    return rc;
}

int cmd_featurize(int argc, char **argv)
{
    fz_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc;
    ns_feat_opts o;
    ns_featurizer f;
    ns_error err;
    memset(&f, 0, sizeof f);
    bool have_f = false;
    double t0 = ns_now(), t_fit = 0;
    if (a.vocab) {
        if (ns_featurizer_load(&f, a.vocab, &err) != NS_OK) return cli_report(&err);
        have_f = true;
        o = f.opts;
        if (a.kind_name && ns_feat_kind_parse(a.kind_name) != (int)o.kind && strcmp(a.kind_name, "context")) {
            ns_featurizer_free(&f);
            return cli_usage("featurize", "%s holds a %s featurizer; --kind %s does not match", a.vocab,
                             ns_feat_kind_name(o.kind), a.kind_name);
        }
        bool actions = !strcmp(a.what, "actions");
        if ((o.source == NS_FEAT_SRC_ACTION) != actions) {
            ns_featurizer_free(&f);
            return cli_usage("featurize", "%s was fitted on %s; --what %s does not match", a.vocab,
                             o.source == NS_FEAT_SRC_ACTION ? "actions" : "states", a.what);
        }
    } else if ((rc = make_opts(&a, &o))) {
        return rc;
    }
    bool actions = o.source == NS_FEAT_SRC_ACTION;
    bool render = o.source == NS_FEAT_SRC_PROMPT || o.source == NS_FEAT_SRC_CONTEXT;
    if (!have_f && o.kind != NS_FEAT_RANDOM && !a.fit_on && !a.fit_all)
        return cli_usage("featurize", "--kind %s needs --fit-on SPLIT_DIR (fit on its training data), --vocab FILE, or "
                                      "--fit-all (fit on every state or action of DATASET_DIR, test data included)",
                         a.kind_name);
    fz_data target;
    if ((rc = fz_data_load(&target, a.dataset, a.domains, render))) {
        fz_data_free(&target);
        if (have_f) ns_featurizer_free(&f);
        return rc;
    }
    const ns_dataset *ds = &target.ds;
    int64_t nrows, *pairs = NULL, *offsets = NULL;
    if (actions) pairs = all_actions(ds, &nrows, &offsets);
    else nrows = ns_dataset_nstates(ds);
    ns_feat_ds_ctx ctx;
    ns_feat_docs docs;
    ns_feat_docs_dataset(&docs, &ctx, ds, target.preps, o.source, pairs, nrows);
    const char *fit_desc = a.vocab ? "vocab" : o.kind == NS_FEAT_RANDOM ? "none" : a.fit_on ? "split" : a.fit_all ? "all" : "none";
    if (!have_f) {
        double t = ns_now();
        if (a.fit_on && o.kind != NS_FEAT_RANDOM) {
            rc = fit_on_split(&a, &o, &target, &f);
        } else {
            ns_feat_docs fd = docs;
            if (o.kind == NS_FEAT_RANDOM) fd.n = 0; /* nothing to fit */
            if (ns_featurizer_fit(&f, &o, &fd, &err) != NS_OK) rc = cli_report(&err);
        }
        have_f = !rc;
        t_fit = ns_now() - t;
    }
    const char *what = actions ? "actions" : "states";
    int64_t dim = have_f ? ns_featurizer_dim(&f) : 0, nnz = 0;
    bool sparse = have_f && ns_featurizer_sparse(&f);
    double t_tr = 0, t_wr = 0;
    ns_buf name;
    ns_buf_init(&name);
    if (!rc && ns_mkdir_p(a.out, &err) != NS_OK) rc = cli_report(&err);
    if (!rc) {
        double t = ns_now();
        if (sparse) {
            ns_csr m;
            ns_csr_init(&m, dim);
            if (ns_featurizer_transform_sparse(&f, &docs, &m, &err) != NS_OK) rc = cli_report(&err);
            t_tr = ns_now() - t;
            t = ns_now();
            nnz = m.nnz;
            if (!rc && ns_csr_save(&m, a.out, what, &err) != NS_OK) rc = cli_report(&err);
            ns_csr_free(&m);
        } else {
            ns_array x;
            int64_t shape[2] = {nrows, dim};
            ns_array_init(&x, NS_F32, 2, shape);
            if (ns_featurizer_transform_dense(&f, &docs, x.data, &err) != NS_OK) rc = cli_report(&err);
            t_tr = ns_now() - t;
            t = ns_now();
            ns_buf_printf(&name, "%s/%s.npy", a.out, what);
            if (!rc && ns_npy_write(name.data, &x, NULL, &err) != NS_OK) rc = cli_report(&err);
            ns_array_free(&x);
        }
        if (!rc && actions) {
            ns_array off = {NS_I64, 1, {ds->nproblems + 1}, offsets};
            name.len = 0;
            ns_buf_printf(&name, "%s/action_offsets.npy", a.out);
            if (ns_npy_write(name.data, &off, NULL, &err) != NS_OK) rc = cli_report(&err);
            ns_array ta;
            int64_t tshape[1] = {ns_dataset_ntransitions(ds)};
            ns_array_init(&ta, NS_I64, 1, tshape);
            for (int64_t t2 = 0; t2 < tshape[0]; t2++) {
                const int32_t *tr = ns_dataset_transition(ds, t2);
                ((int64_t *)ta.data)[t2] = offsets[tr[0]] + tr[2];
            }
            name.len = 0;
            ns_buf_printf(&name, "%s/transition_action.npy", a.out);
            if (!rc && ns_npy_write(name.data, &ta, NULL, &err) != NS_OK) rc = cli_report(&err);
            ns_array_free(&ta);
        }
        name.len = 0;
        ns_buf_printf(&name, "%s/featurizer.json", a.out);
        if (!rc && ns_featurizer_save(&f, name.data, &err) != NS_OK) rc = cli_report(&err);
        t_wr = ns_now() - t;
    }
    if (!rc) {
        /* the manifest, last */
        ns_buf b;
        ns_buf_init(&b);
        ns_buf_printf(&b, "{\n  \"format\": \"%s\",\n  \"version\": 1,\n  \"dataset\": ", FEATURES_FORMAT);
        ns_json_put_str(&b, a.dataset);
        ns_buf_printf(&b, ",\n  \"domain\": ");
        ns_json_put_str(&b, ds->domain_name);
        ns_buf_printf(&b, ",\n  \"what\": \"%s\",\n  \"kind\": \"%s\",\n  \"source\": \"%s\",\n  \"rows\": %lld,\n  \"dim\": %lld,\n"
                          "  \"sparse\": %s,\n  \"nnz\": %lld,\n  \"featurizer\": \"featurizer.json\",\n  \"fit\": {\"from\": \"%s\"",
                      what, ns_feat_kind_name(f.opts.kind), ns_feat_source_name(f.opts.source), (long long)nrows,
                      (long long)dim, sparse ? "true" : "false", (long long)(sparse ? nnz : nrows * dim), fit_desc);
        if (a.fit_on || a.vocab) {
            ns_buf_puts(&b, ", \"path\": ");
            ns_json_put_str(&b, a.fit_on ? a.fit_on : a.vocab);
        }
        ns_buf_printf(&b, ", \"documents\": %lld, \"terms\": %lld, \"svd_dim\": %d},\n  \"files\": {", (long long)f.ndocs,
                      (long long)f.nterms, f.svd_dim);
        const char *parts[] = {"indptr", "indices", "values", "shape"};
        bool first = true;
        char fname[64];
        for (int i = 0; i < (sparse ? 4 : 1) && !rc; i++) {
            if (sparse) snprintf(fname, sizeof fname, "%s_%s.npy", what, parts[i]);
            else snprintf(fname, sizeof fname, "%s.npy", what);
            rc = put_file_entry(&b, a.out, fname, first);
            first = false;
        }
        if (!rc && actions) rc = put_file_entry(&b, a.out, "action_offsets.npy", false);
        if (!rc && actions) rc = put_file_entry(&b, a.out, "transition_action.npy", false);
        if (!rc) rc = put_file_entry(&b, a.out, "featurizer.json", false);
        if (!rc && f.svd_dim > 0) rc = put_file_entry(&b, a.out, "featurizer.svd.npy", false);
        ns_buf_printf(&b, "\n  },\n  \"seconds\": {\"fit\": %.3f, \"transform\": %.3f, \"write\": %.3f}\n}\n", t_fit, t_tr, t_wr);
        name.len = 0;
        ns_buf_printf(&name, "%s/features.json", a.out);
        if (!rc && ns_write_file_atomic(name.data, b.data, b.len, &err) != NS_OK) rc = cli_report(&err);
        ns_buf_free(&b);
    }
    if (!rc && !a.quiet) {
        fprintf(stderr, "%s: %s %s (%s) of %lld %s: ", a.out, ns_feat_kind_name(f.opts.kind), sparse ? "sparse" : "dense",
                ns_feat_source_name(f.opts.source), (long long)nrows, what);
        if (sparse) fprintf(stderr, "[%lld x %lld], %lld non-zeros", (long long)nrows, (long long)dim, (long long)nnz);
        else fprintf(stderr, "[%lld x %lld]", (long long)nrows, (long long)dim);
        if (f.svd_dim) fprintf(stderr, " (SVD of %lld terms)", (long long)f.nterms);
        if (f.opts.kind == NS_FEAT_RANDOM) fprintf(stderr, "; nothing to fit");
        else fprintf(stderr, "; fit %s", fit_desc);
        if (!a.vocab && f.opts.kind != NS_FEAT_RANDOM) fprintf(stderr, " on %lld documents in %.2f s", (long long)f.ndocs, t_fit);
        fprintf(stderr, ", transform %.2f s, write %.2f s, total %.2f s\n", t_tr, t_wr, ns_now() - t0);
    }
    ns_buf_free(&name);
    free(pairs);
    free(offsets);
    if (have_f) ns_featurizer_free(&f);
    fz_data_free(&target);
    return rc;
}
