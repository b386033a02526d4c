/* cmd_encode.c — `nextstate encode`: WL or FSF features of a dataset's
 * states or of plan trajectories, and lifted WL action encodings; the work
 * is ns_encode_run (nextstate/encode/dataset_enc.h), this file parses the
 * options and prints what was done. */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "nextstate/encode/dataset_enc.h"

static void print_note(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "nextstate encode: %s\n", line);
}

int cmd_encode(int argc, char **argv)
{
    ns_encode_opts o;
    ns_encode_opts_init(&o);
    bool wl = false, fsf = false, quiet = false;
    const char *pos[4] = {0};
    int npos = 0;
    bool plans = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
#define NEED_VALUE                                                  \
    do {                                                            \
        if (!v) return cli_usage("encode", "%s expects a value", a); \
        i++;                                                        \
    } while (0)
        if (!strcmp(a, "--plans")) plans = true;
        else if (!strcmp(a, "--encoder")) {
            NEED_VALUE;
            if (!strcmp(v, "wl")) wl = true;
            else if (!strcmp(v, "fsf")) fsf = true;
            else return cli_usage("encode", "--encoder expects wl or fsf");
        } else if (!strcmp(a, "--vocab")) {
            NEED_VALUE;
            o.vocab = v;
        } else if (!strcmp(a, "--fit")) o.fit = true;
        else if (!strcmp(a, "--fit-on")) {
            NEED_VALUE;
            o.fit_on = v;
            o.fit = true;
        } else if (!strcmp(a, "--fit-goals")) o.fit_goals = true;
        else if (!strcmp(a, "--vocab-out")) {
            NEED_VALUE;
            o.vocab_out = v;
        } else if (!strcmp(a, "--key-format")) {
            NEED_VALUE;
            if (!strcmp(v, "flat")) o.key_format = NS_WL_KEYS_FLAT;
            else if (!strcmp(v, "triples")) o.key_format = NS_WL_KEYS_TRIPLES;
            else return cli_usage("encode", "--key-format expects flat or triples");
        } else if (!strcmp(a, "--iterations")) {
            NEED_VALUE;
            if (!cli_parse_long("encode", a, v, &n)) return NS_ERR_USAGE;
            if (n < 0 || n > 16) return cli_usage("encode", "--iterations expects 0..16");
            o.iterations = (int)n;
        } else if (!strcmp(a, "--set")) o.set = true;
        else if (!strcmp(a, "--statics")) {
            NEED_VALUE;
            if (!strcmp(v, "in")) o.statics = true;
            else if (!strcmp(v, "out")) o.statics = false;
            else return cli_usage("encode", "--statics expects in or out");
        } else if (!strcmp(a, "--fsf-config")) {
            NEED_VALUE;
            o.fsf_config = v;
        } else if (!strcmp(a, "--max-objects")) {
            NEED_VALUE;
            if (!cli_parse_long("encode", a, v, &n)) return NS_ERR_USAGE;
            if (n < 1 || n > 1 << 24) return cli_usage("encode", "--max-objects expects a positive integer");
            o.max_objects = (int)n;
        } else if (!strcmp(a, "--fsf-domain")) {
            NEED_VALUE;
            o.fsf_domain = v;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            NEED_VALUE;
            o.out = v;
        } else if (!strcmp(a, "--sparse")) o.sparse = true;
        else if (!strcmp(a, "--goals")) {
            NEED_VALUE;
            o.goals = v;
        } else if (!strcmp(a, "--actions")) {
            NEED_VALUE;
            o.actions = v;
        } else if (!strcmp(a, "--states-out")) {
            NEED_VALUE;
            o.states_out = v;
        } else if (!strcmp(a, "--repeat")) {
            NEED_VALUE;
            if (!cli_parse_long("encode", a, v, &n)) return NS_ERR_USAGE;
            if (n < 1 || n > 1000) return cli_usage("encode", "--repeat expects 1..1000");
            o.repeat = (int)n;
        } else if (!strcmp(a, "--quiet")) quiet = true;
        else if (a[0] == '-' && a[1]) return cli_usage("encode", "unknown option '%s'", a);
        else if (npos < 4) pos[npos++] = a;
        else return cli_usage("encode", "too many arguments");
#undef NEED_VALUE
    }
    if (!wl && !fsf) return cli_usage("encode", "--encoder wl|fsf is required");
    if (!o.out) return cli_usage("encode", "-o OUT is required");
    if (plans ? npos != 3 : npos != 1)
        return cli_usage("encode", plans ? "--plans expects DOMAIN PROBLEMS_DIR PLANS_DIR" : "expects one DATASET_DIR");
    if (wl && !!o.vocab == o.fit) return cli_usage("encode", "WL needs exactly one of --vocab FILE and --fit");
    if (fsf && (o.vocab || o.fit || o.actions))
        return cli_usage("encode", "--vocab, --fit and --actions are WL options");
    if (plans && (o.sparse || o.goals || o.actions || o.fit_on))
        return cli_usage("encode", "--plans writes dense per-problem files (no --sparse, --goals, --actions, --fit-on)");

    o.kind = wl ? NS_ENCODER_WL : NS_ENCODER_FSF; /* WL when both are given, as before */
    if (plans) {
        o.domain = pos[0];
        o.problems_dir = pos[1];
        o.plans_dir = pos[2];
    } else {
        o.dataset = pos[0];
    }
    if (!quiet) o.note = print_note;
    ns_error err;
    ns_error_clear(&err);
    if (ns_encode_run(&o, &err) == NS_OK) return 0;
    if (err.code == NS_ERR_USAGE && !err.file[0]) return cli_usage("encode", "%s", err.msg);
    return cli_report(&err);
}
