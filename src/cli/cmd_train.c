/* cmd_train.c — `nextstate train SPLIT_DIR -o MODEL`: trains the EmbedPlan
 * world model (world.h) on a split's training list, selecting the epoch
 * with the best dev Hit@5. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "nextstate/util/json.h"
#include "nextstate/data/split.h"
#include "nextstate/learn/world.h"
#include "nextstate/eval/evaluate.h"

#define TRAIN_USAGE "see `nextstate help train`"

static bool want_int(const char *opt, const char *v, long lo, long *out)
{
    return cli_parse_range("train", opt, v, lo, LONG_MAX, out);
}

static bool log_epoch(void *ctx, int epoch, double loss, double dev_hit5, double seconds)
{
    FILE *f = ctx;
    if (f) fprintf(f, "epoch %d loss %.5f dev_hit@5 %.4f time %.2fs\n", epoch, loss, dev_hit5, seconds);
    return true;
}

int cmd_train(int argc, char **argv)
{
    ns_world_config cfg;
    ns_world_config_init(&cfg);
    ns_train_opts o;
    ns_eval_train_opts_init(&o);
    const char *split_dir = NULL, *out = NULL, *sspec = "builtin", *aspec = "builtin", *log = NULL;
    const char *std = NULL; /* --standardize; NULL: the library's default (dense sides, ns_world_standardize_sides) */
    bool std_state = false, std_action = false;
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
        else if (!strcmp(a, "--state-features")) sspec = v;
        else if (!strcmp(a, "--action-features")) aspec = v;
        else if (!strcmp(a, "--log")) log = v;
        else if (!strcmp(a, "--standardize")) std = v;
        else if (!strcmp(a, "--model")) {
            int k = ns_world_kind_parse(v);
            if (k < 0) rc = cli_usage("train", "--model expects resmlp or film, given '%s'", v);
            else cfg.kind = (ns_world_kind)k;
        } else if (!strcmp(a, "--layers")) {
            if (!want_int(a, v, 1, &n) || n > NS_WORLD_MAX_LAYERS) rc = cli_usage("train", "--layers expects 1 … %d", NS_WORLD_MAX_LAYERS);
            else cfg.layers = (int)n;
        } else if (!strcmp(a, "--hidden")) {
            if (!want_int(a, v, 1, &hidden)) rc = NS_ERR_USAGE;
        } else if (!strcmp(a, "--out")) {
            if (!want_int(a, v, 1, &n)) rc = NS_ERR_USAGE;
            else cfg.out = (int)n;
        } else if (!strcmp(a, "--t-hidden")) {
            if (!want_int(a, v, 1, &n)) rc = NS_ERR_USAGE;
            else cfg.t_hidden = (int)n;
        } else if (!strcmp(a, "--lr") || !strcmp(a, "--weight-decay") || !strcmp(a, "--tau") ||
                   !strcmp(a, "--action-weight") || !strcmp(a, "--time-limit") || !strcmp(a, "--warmup-start")) {
            if (!cli_parse_double("train", a, v, &x)) rc = NS_ERR_USAGE;
            else if (x < 0 || (x == 0 && (!strcmp(a, "--lr") || !strcmp(a, "--tau"))))
                rc = cli_usage("train", "%s expects a positive number, given '%s'", a, v);
            else if (!strcmp(a, "--lr")) o.lr = x;
            else if (!strcmp(a, "--weight-decay")) o.weight_decay = x;
            else if (!strcmp(a, "--tau")) o.tau = (float)x;
            else if (!strcmp(a, "--action-weight")) o.action_weight = (float)x;
            else if (!strcmp(a, "--time-limit")) o.time_limit = x;
            else o.warmup_start = x;
        } else if (!strcmp(a, "--batch")) {
            if (!want_int(a, v, 1, &n)) rc = NS_ERR_USAGE;
            else o.batch = (int)n;
        } else if (!strcmp(a, "--epochs")) {
            if (!want_int(a, v, 0, &n)) rc = NS_ERR_USAGE;
            else o.epochs = (int)n;
        } else if (!strcmp(a, "--warmup")) {
            if (!want_int(a, v, 0, &n)) rc = NS_ERR_USAGE;
            else o.warmup_epochs = (int)n;
        } else if (!strcmp(a, "--seed")) {
            if (!want_int(a, v, 0, &n)) rc = NS_ERR_USAGE;
            else o.seed = (uint64_t)n;
        } else if (!strcmp(a, "--action-k")) {
            if (!want_int(a, v, 0, &n)) rc = NS_ERR_USAGE;
            else o.action_k = (int)n;
        } else if (!strcmp(a, "--action-loss")) {
            if (!strcmp(v, "list")) o.action_grid = false;
            else if (!strcmp(v, "grid")) o.action_grid = true;
            else if (!strcmp(v, "none")) o.action_weight = 0;
            else rc = cli_usage("train", "--action-loss expects list, grid or none, given '%s'", v);
        } else if (!strcmp(a, "--eval-every")) {
            if (!want_int(a, v, 1, &n)) rc = NS_ERR_USAGE;
            else o.eval_every = (int)n;
        } else if (!strcmp(a, "--patience")) {
            if (!want_int(a, v, 0, &n)) rc = NS_ERR_USAGE;
            else o.patience = (int)n;
        } else if (!strcmp(a, "--dev-pool")) {
            if (!want_int(a, v, 2, &n)) rc = NS_ERR_USAGE;
            else o.dev_pool = (int)n;
        } else rc = cli_usage("train", "unknown option '%s' (%s)", a, TRAIN_USAGE);
        if (takes) i++;
    }
    if (rc) return rc;
    if (!split_dir) return cli_usage("train", "expects SPLIT_DIR (%s)", TRAIN_USAGE);
    if (!out) return cli_usage("train", "expects -o MODEL (the checkpoint to write)");
    cfg.state_hidden = cfg.action_hidden = (int)hidden;

    ns_error err;
    ns_split sp;
    if (ns_split_load(&sp, split_dir, &err)) return cli_report(&err);
    ns_dataset *dss = NULL;
    const ns_dataset **ds = NULL;
    int loaded = 0;
    ns_world_inputs in;
    memset(&in, 0, sizeof in);
    ns_vocab sv, av;
    ns_vocab_init(&sv);
    ns_vocab_init(&av);
    ns_feature_std sstd = {0}, astd = {0};
    ns_world w;
    memset(&w, 0, sizeof w);
    ns_buf b, fj;
    ns_buf_init(&b);
    ns_buf_init(&fj);
    FILE *logf = NULL;
    if (cli_split_datasets(&sp, &dss, &ds, &loaded, &err)) goto fail;
    ns_builtin_fit_split(&sv, &av, ds, sp.ndatasets, &sp);
    if (ns_world_inputs_load(&in, ds, sp.ndatasets, sspec, aspec, &sv, &av, &err)) goto fail;
    if (ns_world_standardize_sides(&in, std, &std_state, &std_action, &err) ||
        ns_world_standardize_split(&in, &sp, std_state, std_action, &sstd, &astd, &err))
        goto fail;
    cfg.state_dim = (int)in.state.dim;
    cfg.action_dim = (int)in.action.dim;
    cfg.state_sparse = in.state.sparse;
    cfg.action_sparse = in.action.sparse;
    cfg.action_rows = in.action_rows;
    if (ns_world_create(&w, &cfg, o.seed, &err)) goto fail;
    if (log && !(logf = fopen(log, "w"))) {
        ns_error_set(&err, NS_ERR_IO, log, 0, 0, "cannot write the training log");
        goto fail;
    }
    o.progress = !quiet;
    o.on_epoch = log_epoch;
    o.ctx = logf;
    ns_train_stats st;
    size_t cs, ca, ct;
    ns_world_counts(&w, &cs, &ca, &ct);
    if (!quiet)
        fprintf(stderr,
                "train: %s over %d dataset%s: %lld train, %lld dev transitions; state features %s (%s, %d), action "
                "features %s (%s, %d, %s rows); %zu parameters\n",
                ns_protocol_name(sp.protocol), sp.ndatasets, sp.ndatasets > 1 ? "s" : "", (long long)sp.train.n,
                (long long)sp.dev.n, sspec, cfg.state_sparse ? "sparse" : "dense", cfg.state_dim, aspec,
                cfg.action_sparse ? "sparse" : "dense", cfg.action_dim, ns_action_rows_name(cfg.action_rows),
                cs + ca + ct);
    if (ns_world_train(&w, &in, &sp, &o, &st, &err)) goto fail;
    char best_dev[32] = "null", best_dev4[32] = "none"; /* no dev check ran (no epochs, or no dev list) */
    if (st.best_dev_hit5 >= 0) {
        snprintf(best_dev, sizeof best_dev, "%.9g", st.best_dev_hit5);
        snprintf(best_dev4, sizeof best_dev4, "%.4f", st.best_dev_hit5);
    }
    ns_buf_puts(&b, "{\"split\": ");
    ns_json_put_str(&b, split_dir);
    ns_buf_printf(&b,
                  ", \"protocol\": \"%s\", \"action_rows\": \"%s\", \"standardize\": \"%s\", \"train\": %lld, "
                  "\"dev\": %lld, \"lr\": %.9g, \"weight_decay\": %.9g, "
                  "\"beta1\": %.9g, \"beta2\": %.9g, \"warmup_epochs\": %d, \"warmup_start\": %.9g, \"batch\": %d, "
                  "\"epochs\": %d, \"epochs_run\": %d, \"seed\": %llu, \"tau\": %.9g, \"action_weight\": %.9g, "
                  "\"action_loss\": \"%s\", \"action_k\": %d, \"best_epoch\": %d, \"best_dev_hit@5\": %s, "
                  "\"last_loss\": %.9g, \"steps\": %lld, \"samples\": %lld, \"seconds\": %.3f, "
                  "\"samples_per_s\": %.1f, \"params\": {\"state_head\": %zu, \"action_head\": %zu, "
                  "\"transition\": %zu, \"total\": %zu}}",
                  ns_protocol_name(sp.protocol), ns_action_rows_name(cfg.action_rows),
                  std_state ? (std_action ? "both" : "state") : std_action ? "action" : "none", (long long)sp.train.n,
                  (long long)sp.dev.n, o.lr, o.weight_decay,
                  o.beta1, o.beta2, o.warmup_epochs, o.warmup_start, o.batch, o.epochs, st.epochs_run,
                  (unsigned long long)o.seed, o.tau, o.action_weight,
                  o.action_weight <= 0 ? "none" : o.action_grid ? "grid" : "list", o.action_k, st.best_epoch,
                  best_dev, st.last_loss, (long long)st.steps, (long long)st.samples, st.seconds,
                  st.samples_per_s, cs, ca, ct, cs + ca + ct);
    ns_world_features_json(&fj, sspec, aspec, &sv, &av, &sstd, &astd);
    if (ns_world_save(&w, out, fj.data, b.data, &err)) goto fail;
    if (json) printf("%s\n", b.data);
    if (!quiet)
        fprintf(stderr, "%s: %d epochs in %.1f s (%.0f samples/s), best dev Hit@5 %s at epoch %d, final loss %.4f\n",
                out, st.epochs_run, st.seconds, st.samples_per_s, best_dev4, st.best_epoch, st.last_loss);
    goto done;
fail:
    rc = cli_report(&err);
done:
    if (logf) fclose(logf);
    ns_buf_free(&b);
    ns_buf_free(&fj);
    ns_world_free(&w);
    ns_world_inputs_free(&in);
    ns_vocab_free(&sv);
    ns_vocab_free(&av);
    ns_feature_std_free(&sstd);
    ns_feature_std_free(&astd);
    cli_split_datasets_free(dss, ds, loaded);
    ns_split_free(&sp);
    return rc;
}
