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
 *     was fitted) and the bytes + CRC-32 of every file.
 * The work is ns_featurize_dataset (featurize.h); this file parses the
 * options and prints the summary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "nextstate/encode/featurize.h"

typedef struct fz_args {
    const char *dataset, *out, *fit_on, *vocab, *domains, *what;
    const char *kind_name, *source_name, *context_kind;
    bool fit_all, quiet, onehot_unknown;
    long min_df, svd_dim, svd_iters, svd_max_rows, dim, seed;
} fz_args;

static int parse_args(int argc, char **argv, fz_args *a)
{
    memset(a, 0, sizeof *a);
    a->domains = NULL; /* ns_render_find's default */
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

/* The summary line on stderr. */
static void print_summary(const fz_args *a, const ns_featurize_report *r, double t0)
{
    fprintf(stderr, "%s: %s %s (%s) of %lld %s: ", a->out, ns_feat_kind_name(r->kind), r->sparse ? "sparse" : "dense",
            ns_feat_source_name(r->source), (long long)r->rows, r->what);
    if (r->sparse) fprintf(stderr, "[%lld x %lld], %lld non-zeros", (long long)r->rows, (long long)r->dim, (long long)r->nnz);
    else fprintf(stderr, "[%lld x %lld]", (long long)r->rows, (long long)r->dim);
    if (r->svd_dim) fprintf(stderr, " (SVD of %lld terms)", (long long)r->nterms);
    if (r->kind == NS_FEAT_RANDOM) fprintf(stderr, "; nothing to fit");
    else fprintf(stderr, "; fit %s", r->fit_from);
    if (!a->vocab && r->kind != NS_FEAT_RANDOM)
        fprintf(stderr, " on %lld documents in %.2f s", (long long)r->ndocs, r->fit_seconds);
    fprintf(stderr, ", transform %.2f s, write %.2f s, total %.2f s\n", r->transform_seconds, r->write_seconds,
            ns_now() - t0);
}

/* --vocab FILE: the featurizer, which must agree with --kind and --what. */
static int load_vocab(const fz_args *a, ns_featurizer *f)
{
    ns_error err;
    if (ns_featurizer_load(f, a->vocab, &err) != NS_OK) return cli_report(&err);
    const ns_feat_opts *o = &f->opts;
    int rc = 0;
    if (a->kind_name && ns_feat_kind_parse(a->kind_name) != (int)o->kind && strcmp(a->kind_name, "context"))
        rc = cli_usage("featurize", "%s holds a %s featurizer; --kind %s does not match", a->vocab,
                       ns_feat_kind_name(o->kind), a->kind_name);
    else if ((o->source == NS_FEAT_SRC_ACTION) != !strcmp(a->what, "actions"))
        rc = cli_usage("featurize", "%s was fitted on %s; --what %s does not match", a->vocab,
                       o->source == NS_FEAT_SRC_ACTION ? "actions" : "states", a->what);
    if (rc) ns_featurizer_free(f);
    return rc;
}

int cmd_featurize(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "pca")) return cli_featurize_pca(argc - 1, argv + 1);
    fz_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc;
    double t0 = ns_now();
    ns_featurize_opts o = {.dataset = a.dataset, .out = a.out, .domains = a.domains, .fit_on = a.fit_on,
                           .vocab = a.vocab, .fit_all = a.fit_all};
    ns_featurizer f;
    memset(&f, 0, sizeof f);
    if (a.vocab) {
        if ((rc = load_vocab(&a, &f))) return rc;
        o.feat = f.opts;
    } else if ((rc = make_opts(&a, &o.feat))) {
        return rc;
    } else if (o.feat.kind != NS_FEAT_RANDOM && !a.fit_on && !a.fit_all) {
        return cli_usage("featurize", "--kind %s needs --fit-on SPLIT_DIR (fit on its training data), --vocab FILE, or "
                                      "--fit-all (fit on every state or action of DATASET_DIR, test data included)",
                         a.kind_name);
    }
    ns_featurize_report r;
    ns_error err;
    if (ns_featurize_dataset(&o, a.vocab ? &f : NULL, &r, &err) != NS_OK) rc = cli_report(&err);
    else if (!a.quiet) print_summary(&a, &r, t0);
    if (a.vocab) ns_featurizer_free(&f);
    return rc;
}
