/* cmd_data.c — `nextstate data build | info | export | plans` (export and
 * plans: cmd_data_export.c). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "nextstate/data/dataset.h"
#include "nextstate/util/json.h"

/* Expands a folder into its .pddl files (except domain.pddl), sorted. */
static void add_problem_arg(const char *arg, char ***list, int *n, size_t *cap)
{
    struct stat st;
    if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
        DIR *d = opendir(arg);
        if (!d) return;
        int first = *n;
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t len = strlen(e->d_name);
            if (len < 5 || strcmp(e->d_name + len - 5, ".pddl") || !strcmp(e->d_name, "domain.pddl")) continue;
            NS_GROW(*list, *cap, (size_t)*n + 1);
            ns_buf b;
            ns_buf_init(&b);
            ns_buf_printf(&b, "%s/%s", arg, e->d_name);
            (*list)[(*n)++] = b.data;
        }
        closedir(d);
        qsort(*list + first, (size_t)(*n - first), sizeof(char *), ns_cmp_str);
        return;
    }
    NS_GROW(*list, *cap, (size_t)*n + 1);
    (*list)[(*n)++] = ns_xstrdup(arg);
}

static int data_build(int argc, char **argv)
{
    const char *domain = NULL, *out = NULL;
    char **problems = NULL;
    int nproblems = 0;
    size_t cap = 0;
    ns_dataset_opts o = {NS_SPACE_OPTIMAL, 0, 0, 0, 0, true, false};
    o.plans = 16;
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        double x;
        if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!v) rc = cli_usage("data", "%s expects a directory", a);
            out = v;
            i++;
        } else if (!strcmp(a, "--mode")) {
            if (v && !strcmp(v, "optimal")) o.mode = NS_SPACE_OPTIMAL;
            else if (v && !strcmp(v, "full")) o.mode = NS_SPACE_FULL;
            else rc = cli_usage("data", "--mode expects optimal or full");
            i++;
        } else if (!strcmp(a, "--max-states")) {
            if (!cli_parse_range("data", a, v, 1, LONG_MAX, &n)) rc = NS_ERR_USAGE;
            o.max_states = (size_t)n;
            i++;
        } else if (!strcmp(a, "--plans")) {
            if (!cli_parse_range("data", a, v, 0, 1000000, &n)) rc = NS_ERR_USAGE;
            o.plans = (int)n;
            i++;
        } else if (!strcmp(a, "--seed")) {
            if (!cli_parse_range("data", a, v, 0, LONG_MAX, &n)) rc = NS_ERR_USAGE;
            o.seed = (uint64_t)n;
            i++;
        } else if (!strcmp(a, "--time-limit")) {
            if (!cli_parse_double("data", a, v, &x)) rc = NS_ERR_USAGE;
            o.time_limit = x;
            i++;
        } else if (!strcmp(a, "--successors")) {
            o.successors = true;
        } else if (!strcmp(a, "--quiet")) {
            o.progress = false;
        } else if (a[0] == '-' && a[1]) {
            rc = cli_usage("data", "unknown option '%s'", a);
        } else if (!domain) {
            domain = a;
        } else {
            add_problem_arg(a, &problems, &nproblems, &cap);
        }
    }
    if (!rc && (!domain || nproblems == 0 || !out))
        rc = cli_usage("data", "build expects DOMAIN PROBLEM… -o DIR");
    if (!rc) {
        ns_dataset ds;
        ns_error err;
        double t0 = ns_now();
        ns_status st = ns_dataset_build(&ds, domain, (const char *const *)problems, nproblems, &o, &err);
        if (st == NS_OK) st = ns_dataset_save(&ds, out, &err);
        if (st != NS_OK) {
            rc = cli_report(&err);
        } else {
            for (int i = 0; i < ds.nskipped; i++)
                fprintf(stderr, "nextstate: warning: %s left out: %s\n", ds.skipped[i], ds.skipped_reason[i]);
            fprintf(stderr, "%s: %d problems, %lld states, %lld transitions, %lld plans in %.2f s\n", out, ds.nproblems,
                    (long long)ns_dataset_nstates(&ds), (long long)ns_dataset_ntransitions(&ds),
                    (long long)ds.plan_problem.shape[0], ns_now() - t0);
            ns_dataset_free(&ds);
        }
    }
    for (int i = 0; i < nproblems; i++) free(problems[i]);
    free(problems);
    return rc;
}

static int data_info(int argc, char **argv)
{
    const char *dir = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = true;
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage("data", "unknown option '%s'", argv[i]);
        else if (!dir) dir = argv[i];
        else return cli_usage("data", "too many arguments");
    }
    if (!dir) return cli_usage("data", "info expects DIR");
    ns_dataset ds;
    ns_error err;
    if (ns_dataset_load(&ds, dir, &err) != NS_OK) return cli_report(&err);
    const uint8_t *opt = ds.transition_optimal.data;
    const int32_t *tr = ds.transitions.data;
    int64_t *ntr = calloc((size_t)ds.nproblems + 1, sizeof(int64_t)), *nopt = calloc((size_t)ds.nproblems + 1, sizeof(int64_t));
    int64_t *nplans = calloc((size_t)ds.nproblems + 1, sizeof(int64_t));
    for (int64_t t = 0; t < ns_dataset_ntransitions(&ds); t++) {
        ntr[tr[4 * t]]++;
        nopt[tr[4 * t]] += opt[t];
    }
    for (int64_t k = 0; k < ds.plan_problem.shape[0]; k++) nplans[((int32_t *)ds.plan_problem.data)[k]]++;
    ns_buf b;
    ns_buf_init(&b);
    if (json) {
        ns_buf_puts(&b, "{\"domain\": ");
        ns_json_put_str(&b, ds.domain_name);
        ns_buf_printf(&b, ", \"mode\": \"%s\", \"problems\": %d, \"states\": %lld, \"transitions\": %lld, \"plans\": %lld, \"per_problem\": [",
                      ds.mode == NS_SPACE_FULL ? "full" : "optimal", ds.nproblems, (long long)ns_dataset_nstates(&ds),
                      (long long)ns_dataset_ntransitions(&ds), (long long)ds.plan_problem.shape[0]);
        for (int i = 0; i < ds.nproblems; i++) {
            const ns_ds_problem *p = &ds.problems[i];
            ns_buf_puts(&b, i ? ", {\"name\": " : "{\"name\": ");
            ns_json_put_str(&b, p->name);
            ns_buf_printf(&b, ", \"objects\": %d, \"atoms\": %d, \"operators\": %d, \"states\": %lld, \"transitions\": %lld, "
                              "\"optimal_transitions\": %lld, \"cstar\": %d, \"complete\": %s, \"optimal_plans\": ",
                          p->nobjects, p->natoms, p->nops, (long long)p->nstates, (long long)ntr[i], (long long)nopt[i],
                          p->cstar, p->complete ? "true" : "false");
            ns_json_put_num(&b, p->optimal_plans);
            ns_buf_printf(&b, ", \"sampled_plans\": %lld}", (long long)nplans[i]);
        }
        ns_buf_puts(&b, "]}\n");
    } else {
        ns_buf_printf(&b, "dataset %s: domain %s, mode %s\n%d problems, %lld states, %lld transitions, %lld sampled plans\n\n",
                      dir, ds.domain_name, ds.mode == NS_SPACE_FULL ? "full" : "optimal", ds.nproblems,
                      (long long)ns_dataset_nstates(&ds), (long long)ns_dataset_ntransitions(&ds),
                      (long long)ds.plan_problem.shape[0]);
        for (int i = 0; i < ds.nskipped; i++) ns_buf_printf(&b, "left out: %s (%s)\n", ds.skipped[i], ds.skipped_reason[i]);
        if (ds.nskipped) ns_buf_putc(&b, '\n');
        ns_buf_printf(&b, "%-32s %7s %6s %9s %10s %10s %5s %12s %6s\n", "problem", "objects", "atoms", "operators", "states",
                      "transitions", "C*", "opt. plans", "full");
        for (int i = 0; i < ds.nproblems; i++) {
            const ns_ds_problem *p = &ds.problems[i];
            ns_buf_printf(&b, "%-32.32s %7d %6d %9d %10lld %10lld %5d %12.4g %6s\n", p->name, p->nobjects, p->natoms, p->nops,
                          (long long)p->nstates, (long long)ntr[i], p->cstar, p->optimal_plans, p->complete ? "yes" : "capped");
        }
    }
    fputs(b.data, stdout);
    ns_buf_free(&b);
    free(ntr);
    free(nopt);
    free(nplans);
    ns_dataset_free(&ds);
    return 0;
}

int cmd_data(int argc, char **argv)
{
    if (argc < 2) return cli_usage("data", "expects build, info or export");
    if (!strcmp(argv[1], "build")) return data_build(argc - 1, argv + 1);
    if (!strcmp(argv[1], "info")) return data_info(argc - 1, argv + 1);
    if (!strcmp(argv[1], "export")) return cli_data_export(argc - 1, argv + 1);
    if (!strcmp(argv[1], "plans")) return cli_data_plans(argc - 1, argv + 1);
    return cli_usage("data", "unknown subcommand '%s' (build, info, export, plans)", argv[1]);
}
