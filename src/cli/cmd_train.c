/* cmd_train.c — `nextstate train SPLIT_DIR -o MODEL`: trains the EmbedPlan
 * world model (world.h) on a split's training list, selecting the epoch
 * with the best dev Hit@5. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "nextstate/eval/fit.h"

#define TRAIN_USAGE "see `nextstate help train`"

static bool want_int(const char *opt, const char *v, long lo, long *out)
{
    return cli_parse_range("train", opt, v, lo, LONG_MAX, out);
}

/* The line before training starts (the model exists). */
static void on_ready(void *ctx, const ns_fit_result *r)
{
    const ns_fit_opts *o = ctx;
    const ns_world_config *c = &r->cfg;
    fprintf(stderr,
            "train: %s over %d dataset%s: %lld train, %lld dev transitions; state features %s (%s, %d), action "
            "features %s (%s, %d, %s rows); %zu parameters\n",
            ns_protocol_name(r->protocol), r->ndatasets, r->ndatasets > 1 ? "s" : "", (long long)r->ntrain,
            (long long)r->ndev, o->state_spec, c->state_sparse ? "sparse" : "dense", c->state_dim, o->action_spec,
            c->action_sparse ? "sparse" : "dense", c->action_dim, ns_action_rows_name(c->action_rows),
            r->params_state + r->params_action + r->params_t);
}

int cmd_train(int argc, char **argv)
{
    ns_fit_opts fo;
    ns_fit_opts_init(&fo);
    ns_world_config *cfg = &fo.cfg;
    ns_train_opts *o = &fo.train;
    const char *split_dir = NULL, *out = NULL;
    bool json = false, quiet = false;
    long hidden = 0;
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        double x;
        bool takes = true;
        if (!strcmp(a, "--json")) json = true, takes = false;
        else if (!strcmp(a, "--quiet")) quiet = true, takes = false;
        else if (a[0] != '-' || !a[1]) {
            if (split_dir) rc = cli_usage("train", "unexpected argument '%s' (%s)", a, TRAIN_USAGE);
            split_dir = a;
            takes = false;
        } else if (!v) rc = cli_usage("train", "%s expects a value", a);
        else if (!strcmp(a, "-o") || !strcmp(a, "--output")) out = v;
        else if (!strcmp(a, "--state-features")) fo.state_spec = v;
        else if (!strcmp(a, "--action-features")) fo.action_spec = v;
        else if (!strcmp(a, "--log")) fo.log_path = v;
        else if (!strcmp(a, "--standardize")) fo.standardize = v; /* checked by the library */
        else if (!strcmp(a, "--model")) {
            int k = ns_world_kind_parse(v);
            if (k < 0) rc = cli_usage("train", "--model expects resmlp or film, given '%s'", v);
            else cfg->kind = (ns_world_kind)k;
        } else if (!strcmp(a, "--layers")) {
            if (!want_int(a, v, 1, &n) || n > NS_WORLD_MAX_LAYERS) rc = cli_usage("train", "--layers expects 1 … %d", NS_WORLD_MAX_LAYERS);
            else cfg->layers = (int)n;
        } else if (!strcmp(a, "--hidden")) {
            if (!want_int(a, v, 1, &hidden)) rc = NS_ERR_USAGE;
        } else if (!strcmp(a, "--out")) {
            if (!want_int(a, v, 1, &n)) rc = NS_ERR_USAGE;
            else cfg->out = (int)n;
        } else if (!strcmp(a, "--t-hidden")) {
            if (!want_int(a, v, 1, &n)) rc = NS_ERR_USAGE;
            else cfg->t_hidden = (int)n;
        } else if (!strcmp(a, "--lr") || !strcmp(a, "--weight-decay") || !strcmp(a, "--tau") ||
                   !strcmp(a, "--action-weight") || !strcmp(a, "--time-limit") || !strcmp(a, "--warmup-start")) {
            if (!cli_parse_double("train", a, v, &x)) rc = NS_ERR_USAGE;
            else if (x < 0 || (x == 0 && (!strcmp(a, "--lr") || !strcmp(a, "--tau"))))
                rc = cli_usage("train", "%s expects a positive number, given '%s'", a, v);
            else if (!strcmp(a, "--lr")) o->lr = x;
            else if (!strcmp(a, "--weight-decay")) o->weight_decay = x;
            else if (!strcmp(a, "--tau")) o->tau = (float)x;
            else if (!strcmp(a, "--action-weight")) o->action_weight = (float)x;
            else if (!strcmp(a, "--time-limit")) o->time_limit = x;
            else o->warmup_start = x;
        } else if (!strcmp(a, "--batch")) {
            if (!want_int(a, v, 1, &n)) rc = NS_ERR_USAGE;
            else o->batch = (int)n;
        } else if (!strcmp(a, "--epochs")) {
            if (!want_int(a, v, 0, &n)) rc = NS_ERR_USAGE;
            else o->epochs = (int)n;
        } else if (!strcmp(a, "--steps") || !strcmp(a, "--min-steps")) {
            if (!want_int(a, v, 1, &n)) rc = NS_ERR_USAGE;
            else if (!strcmp(a, "--steps")) o->steps = n;
            else o->min_steps = n;
        } else if (!strcmp(a, "--warmup")) {
            if (!want_int(a, v, 0, &n)) rc = NS_ERR_USAGE;
            else o->warmup_epochs = (int)n;
        } else if (!strcmp(a, "--seed")) {
            if (!want_int(a, v, 0, &n)) rc = NS_ERR_USAGE;
            else o->seed = (uint64_t)n;
        } else if (!strcmp(a, "--action-k")) {
            if (!want_int(a, v, 0, &n)) rc = NS_ERR_USAGE;
            else o->action_k = (int)n;
        } else if (!strcmp(a, "--action-loss")) {
            if (!strcmp(v, "list")) o->action_grid = false;
            else if (!strcmp(v, "grid")) o->action_grid = true;
            else if (!strcmp(v, "none")) o->action_weight = 0;
            else rc = cli_usage("train", "--action-loss expects list, grid or none, given '%s'", v);
        } else if (!strcmp(a, "--eval-every")) {
            if (!want_int(a, v, 1, &n)) rc = NS_ERR_USAGE;
            else o->eval_every = (int)n;
        } else if (!strcmp(a, "--patience")) {
            if (!want_int(a, v, 0, &n)) rc = NS_ERR_USAGE;
            else o->patience = (int)n;
        } else if (!strcmp(a, "--dev-pool")) {
            if (!want_int(a, v, 2, &n)) rc = NS_ERR_USAGE;
            else o->dev_pool = (int)n;
        } else rc = cli_usage("train", "unknown option '%s' (%s)", a, TRAIN_USAGE);
        if (takes) i++;
    }
    if (rc) return rc;
    if (!split_dir) return cli_usage("train", "expects SPLIT_DIR (%s)", TRAIN_USAGE);
    if (!out) return cli_usage("train", "expects -o MODEL (the checkpoint to write)");
    cfg->state_hidden = cfg->action_hidden = (int)hidden;
    o->progress = !quiet;
    if (!quiet) fo.on_ready = on_ready, fo.ctx = &fo;
    ns_error err;
    ns_fit_result r;
    if (ns_world_fit(split_dir, &fo, out, &r, &err)) return cli_report(&err);
    if (json) printf("%s\n", r.json);
    char best_dev4[32] = "none"; /* no dev check ran (no epochs, or no dev list) */
    if (r.stats.best_dev_hit5 >= 0) snprintf(best_dev4, sizeof best_dev4, "%.4f", r.stats.best_dev_hit5);
    if (!quiet)
        fprintf(stderr, "%s: %d epochs in %.1f s (%.0f samples/s), best dev Hit@5 %s at epoch %d, final loss %.4f\n",
                out, r.stats.epochs_run, r.stats.seconds, r.stats.samples_per_s, best_dev4, r.stats.best_epoch,
                r.stats.last_loss);
    ns_fit_result_free(&r);
    return 0;
}
