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

const char cli_train_usage[] =
"nextstate train SPLIT_DIR -o MODEL [--state-features builtin|SPEC[,SPEC…]] [--action-features builtin|SPEC…]\n"
"                [--model resmlp|film] [--layers 2] [--hidden H] [--out 128] [--t-hidden N]\n"
"                [--lr 4e-5] [--weight-decay 0.01] [--warmup 10] [--warmup-start 0.1] [--batch 128]\n"
"                [--epochs 200 | --steps N] [--min-steps N] [--seed S] [--tau 0.07] [--action-weight 2] [--action-loss list|grid|none]\n"
"                [--action-k 50] [--eval-every 1] [--dev-pool 128] [--patience N] [--time-limit S]\n"
"                [--standardize auto|state|action|both|none] [--log FILE] [--json] [--quiet]\n"
"                [--text-encoder MODEL [--domains DIR] [--lora R [--lora-alpha 2R] [--lora-targets qv]\n"
"                 [--lora-layers K] [--lora-start warm|cold] [--lora-head refit|joint] [--lora-epochs 2 |\n"
"                 --lora-steps N] [--lora-batch 16] [--lora-lr 1e-4] [--lora-head-lr X] [--lora-weight-decay 0]\n"
"                 [--lora-tape-mb 1024]]]\n"
"  Features: builtin (bag of atom literals / action schema + argument one-hots, vocabulary fitted on the\n"
"  training problems), FILE.npy (float32 [rows, D]) or DIR/PREFIX (CSR saved by ns_csr_save); rows are\n"
"  global state ids, or global action ids = action_offset[problem] + operator — or, for action features\n"
"  with a SPEC.rows.json saying \"state-action\" (`nextstate encode --actions`), one row per (state,\n"
"  applicable action) pair = the dataset's applicable_ops index, so the encoding may depend on the\n"
"  state.  The checkpoint records the mode.  One spec per dataset of\n"
"  the split, comma-separated.  --hidden: head block width (default D dense, 512 sparse).\n"
"  --standardize: z-score dense features per column with the mean and standard deviation of the\n"
"  training transitions' states (and/or action rows), kept in the checkpoint for eval — for frozen\n"
"  text embeddings, whose rows are nearly one vector (cosine ~0.99 between states).  Default auto:\n"
"  every dense side (embeddings, .npy rows), never a sparse one (builtin, CSR).\n"
"  --steps N: exactly N AdamW steps, however small the split (the epochs follow from it); --min-steps N:\n"
"  at least N steps (more epochs on a small split).  Warmup, --eval-every and --patience count epochs.\n"
"  The epoch with the best dev Hit@5 is kept (never the test list).  --json prints the run's summary.\n"
"  --text-encoder MODEL: the features are MODEL's embeddings of the state prompts and action texts (as\n"
"  `nextstate embed` makes them, cached in DATASET/embeddings/MODEL; chunked when a text exceeds the\n"
"  window).  --lora R adapts MODEL (paper App. M): LoRA adapters of rank R (scale alpha/R) on the\n"
"  attention projections (--lora-targets: letters of q, k, v, o; --lora-layers: the top K layers, default\n"
"  all), trained with the model through its loss for --lora-epochs passes of --lora-batch transitions\n"
"  (warm: after training the model on the frozen embeddings; cold: from the start); --lora-head refit then\n"
"  trains a fresh model on the adapted embeddings with the same options (the paper's protocol), joint\n"
"  keeps the jointly trained one.  The checkpoint holds the adapter; eval re-encodes with it.";

static bool want_int(const char *opt, const char *v, long lo, long *out)
{
    return cli_parse_range("train", opt, v, lo, LONG_MAX, out);
}

/* A --lora… or --text-encoder option (1: not one of them; else 0 or an error). */
static int lora_opt(const char *a, const char *v, ns_fit_opts *fo, bool *alpha_set)
{
    ns_fit_lora *lo = &fo->lora;
    ns_adapt_opts *ad = &lo->adapt;
    long n;
    double x;
    if (!strcmp(a, "--text-encoder")) fo->text_encoder = v;
    else if (!strcmp(a, "--domains")) fo->domains_dir = v;
    else if (!strcmp(a, "--lora-start") && (!strcmp(v, "warm") || !strcmp(v, "cold"))) lo->warm = !strcmp(v, "warm");
    else if (!strcmp(a, "--lora-head") && (!strcmp(v, "refit") || !strcmp(v, "joint"))) lo->refit = !strcmp(v, "refit");
    else if (!strcmp(a, "--lora-start") || !strcmp(a, "--lora-head"))
        return cli_usage("train", "%s expects %s, given '%s'", a, a[7] == 's' ? "warm or cold" : "refit or joint", v);
    else if (!strcmp(a, "--lora-targets")) {
        if (!(lo->cfg.targets = ns_lora_targets_parse(v)))
            return cli_usage("train", "--lora-targets expects letters of q, k, v, o (e.g. qv), given '%s'", v);
    } else if (!strcmp(a, "--lora") || !strcmp(a, "--lora-layers") || !strcmp(a, "--lora-epochs") ||
               !strcmp(a, "--lora-steps") || !strcmp(a, "--lora-batch") || !strcmp(a, "--lora-tape-mb")) {
        bool zero = !strcmp(a, "--lora-layers") || !strcmp(a, "--lora-epochs");
        if (!cli_parse_range("train", a, v, zero ? 0 : 1, INT_MAX, &n)) return NS_ERR_USAGE;
        if (!strcmp(a, "--lora")) lo->on = true, lo->cfg.rank = (int)n;
        else if (!strcmp(a, "--lora-layers")) lo->cfg.layers = (int)n;
        else if (!strcmp(a, "--lora-epochs")) ad->epochs = (int)n;
        else if (!strcmp(a, "--lora-steps")) ad->steps = n;
        else if (!strcmp(a, "--lora-batch")) ad->batch = (int)n;
        else ad->tape_mb = (int)n;
    } else if (!strcmp(a, "--lora-alpha") || !strcmp(a, "--lora-lr") || !strcmp(a, "--lora-head-lr") ||
               !strcmp(a, "--lora-weight-decay")) {
        if (!cli_parse_double("train", a, v, &x)) return NS_ERR_USAGE;
        if (x < 0 || (x == 0 && strcmp(a, "--lora-weight-decay") != 0))
            return cli_usage("train", "%s expects a positive number, given '%s'", a, v);
        if (!strcmp(a, "--lora-alpha")) lo->cfg.alpha = (float)x, *alpha_set = true;
        else if (!strcmp(a, "--lora-lr")) ad->lr = x;
        else if (!strcmp(a, "--lora-head-lr")) ad->head_lr = x;
        else ad->weight_decay = x;
    } else return 1;
    return 0;
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
    int rc = 0, lr;
    bool alpha_set = false;
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
        else if ((lr = lora_opt(a, v, &fo, &alpha_set)) != 1) rc = lr;
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
    if (fo.lora.on && !fo.text_encoder) return cli_usage("train", "--lora needs --text-encoder MODEL");
    if (!alpha_set) fo.lora.cfg.alpha = 2.0f * (float)fo.lora.cfg.rank;
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
    if (!quiet && r.adapted)
        fprintf(stderr, "%s: adapted %s (LoRA rank %d): %lld joint steps in %.1f s (%lld tokens), loss %.4f → %.4f; "
                "re-encoding %.1f s, refit %.1f s\n", out, fo.text_encoder, fo.lora.cfg.rank,
                (long long)r.adapt.steps, r.adapt_s, (long long)r.adapt.tokens, r.adapt.first_loss,
                r.adapt.last_loss, r.reencode_s, r.refit_s);
    ns_fit_result_free(&r);
    return 0;
}
