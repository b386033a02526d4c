/* cmd_eval.c — `nextstate eval SPLIT_DIR MODEL`: Hit@k, Acc@k, latency and
 * parameter counts of a trained world model (evaluate.h) on a split's test
 * list (or its dev list with --on dev); plan-level teacher-forced metrics
 * when the datasets hold sampled plans; a pool-size sweep (--pool-sweep)
 * and closed-loop rollout (--rollout). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "nextstate/eval/report.h"

/* "128,512,full" → sizes (0 = full); false (after printing) when bad. */
static bool parse_sweep(const char *v, int **sizes, int *n)
{
    *n = 0;
    *sizes = ns_xmalloc((strlen(v) / 2 + 1) * sizeof **sizes);
    const char *p = v;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 4 && !strncmp(p, "full", 4)) {
            (*sizes)[(*n)++] = 0;
        } else {
            char *end;
            errno = 0;
            long x = strtol(p, &end, 10);
            if (len == 0 || end != p + len || errno || x < 2 || x > 1000000000L) {
                cli_usage("eval", "--pool-sweep expects a comma-separated list of pool sizes ≥ 2 or 'full', given '%s'", v);
                return false;
            }
            (*sizes)[(*n)++] = (int)x;
        }
        if (!e) return true;
        p = e + 1;
    }
}

int cmd_eval(int argc, char **argv)
{
    const char *split_dir = NULL, *model = NULL;
    bool json = false, quiet = false;
    int *sweep = NULL;
    ns_report_opts ro;
    ns_report_opts_init(&ro);
    ns_eval_opts *eo = &ro.eval;
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        if (!strcmp(a, "--json")) json = true;
        else if (!strcmp(a, "--quiet")) quiet = true;
        else if (!strcmp(a, "--no-acc")) eo->acc = false;
        else if (!strcmp(a, "--rollout")) ro.rollout = true;
        else if (!strcmp(a, "--bf16")) ro.bf16 = true;
        else if (!strcmp(a, "--int8")) ro.int8 = true;
        else if (!strcmp(a, "--int4")) ro.int4 = true;
        else if (a[0] != '-' || !a[1]) {
            if (!split_dir) split_dir = a;
            else if (!model) model = a;
            else rc = cli_usage("eval", "unexpected argument '%s'", a);
        } else if (!v) rc = cli_usage("eval", "%s expects a value", a);
        else {
            i++;
            if (!strcmp(a, "--state-features")) ro.state_spec = v;
            else if (!strcmp(a, "--action-features")) ro.action_spec = v;
            else if (!strcmp(a, "--query-features")) ro.query_spec = v;
            else if (!strcmp(a, "--domains")) ro.domains_dir = v;
            else if (!strcmp(a, "--on")) {
                if (strcmp(v, "test") && strcmp(v, "dev")) rc = cli_usage("eval", "--on expects test or dev, given '%s'", v);
                ro.dev = !strcmp(v, "dev");
            } else if (!strcmp(a, "--seed")) {
                if (!cli_parse_range("eval", a, v, 0, LONG_MAX, &n)) rc = NS_ERR_USAGE;
                else eo->seed = (uint64_t)n;
            } else if (!strcmp(a, "--latency")) {
                if (!cli_parse_range("eval", a, v, 0, 1L << 30, &n)) rc = NS_ERR_USAGE;
                else eo->latency_queries = (int)n;
            } else if (!strcmp(a, "--pool-sweep")) {
                free(sweep);
                if (!parse_sweep(v, &sweep, &ro.nsweep)) rc = NS_ERR_USAGE;
            } else if (!strcmp(a, "--rollout-pool")) {
                if (!cli_parse_long("eval", a, v, &n)) rc = NS_ERR_USAGE;
                else if (n < 2 || n > 1000000000L)
                    rc = cli_usage("eval", "--rollout-pool expects a pool size ≥ 2, given '%s'", v);
                else ro.rollout_pool = (int)n, ro.rollout = true;
            } else rc = cli_usage("eval", "unknown option '%s' (see `nextstate help eval`)", a);
        }
    }
    if (!rc && (!split_dir || !model)) rc = cli_usage("eval", "expects SPLIT_DIR MODEL");
    if (rc) {
        free(sweep);
        return rc;
    }
    ro.sweep = sweep;
    eo->progress = !quiet;
    ns_error err;
    ns_report rep;
    if (ns_eval_report(split_dir, model, &ro, &rep, &err)) rc = cli_report(&err);
    free(sweep);
    if (rc) return rc;
    ns_buf b;
    ns_buf_init(&b);
    if (json) ns_report_json(&rep, &b);
    else ns_report_table(&rep, &b);
    fputs(b.data, stdout);
    ns_buf_free(&b);
    ns_report_free(&rep);
    return 0;
}
