/* cmd_solve.c — `nextstate solve`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "nextstate/util/json.h"
#include "nextstate/core/plan.h"
#include "nextstate/core/search.h"

int cmd_solve(int argc, char **argv)
{
    const char *pos[2] = {0}, *plan_file = NULL;
    int npos = 0;
    bool json = false, eliminate = false;
    ns_search_opts o;
    ns_search_opts_default(&o);
    int heur = -1;
    o.algo = NS_SEARCH_ASTAR;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--search")) {
            int k = v ? ns_search_algo_parse(v) : -1;
            if (k < 0) return cli_usage("solve", "--search expects bfs, astar, gbfs, lazy or lama");
            o.algo = (ns_search_algo)k;
            i++;
        } else if (!strcmp(a, "--heuristic")) {
            heur = v ? ns_heuristic_parse(v) : -1;
            if (heur < 0) return cli_usage("solve", "--heuristic expects blind, hmax, hadd, ff or lmcut");
            i++;
        } else if (!strcmp(a, "--time-limit")) {
            if (!cli_parse_double("solve", a, v, &o.time_limit)) return NS_ERR_USAGE;
            i++;
        } else if (!strcmp(a, "--memory-limit")) {
            double mb;
            if (!cli_parse_min("solve", a, v, 0, false, INFINITY, &mb)) return NS_ERR_USAGE;
            o.memory_limit = (size_t)(mb * 1024.0 * 1024.0);
            i++;
        } else if (!strcmp(a, "--no-preferred")) {
            o.preferred = false;
        } else if (!strcmp(a, "--eliminate")) {
            eliminate = true;
        } else if (!strcmp(a, "--plan-file")) {
            if (!v) return cli_usage("solve", "--plan-file expects a file name");
            plan_file = v;
            i++;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage("solve", "unknown option '%s'", a);
        } else if (npos < 2) {
            pos[npos++] = a;
        } else {
            return cli_usage("solve", "too many arguments");
        }
    }
    if (npos != 2) return cli_usage("solve", "expects DOMAIN and PROBLEM");
    o.heuristic = heur >= 0 ? (ns_heuristic_kind)heur : (o.algo >= NS_SEARCH_GBFS ? NS_H_FF : NS_H_LMCUT);

    /* the limits cover grounding and search together */
    ns_ground_limits lim = {o.time_limit, o.memory_limit};
    cli_task ct;
    int rc = cli_task_load_limited(&ct, pos[0], pos[1], &lim);
    if (rc) return rc;
    ns_search_result r; /* the limit counts from the process's start, as Fast Downward's */
    if (cli_limit_left(&o.time_limit, ns_cpu_now())) {
        ns_search(&ct.task, &o, &r);
    } else {
        memset(&r, 0, sizeof r);
        r.status = NS_OUT_OF_TIME;
        r.init_h = -1;
    }
    if (r.status == NS_OK && eliminate) { /* the plan without its redundant steps, within the limit */
        r.plan_len = ns_plan_eliminate(&ct.task, r.plan, r.plan_len, lim.time_limit > 0 ? lim.time_limit : 0);
        r.plan_cost = ns_plan_ops_cost(&ct.task, r.plan, r.plan_len);
    }
    if (r.status == NS_OK) {
        ns_buf plan;
        ns_buf_init(&plan);
        ns_plan_write_ops(&ct.task, r.plan, r.plan_len, &plan);
        if (plan_file) {
            ns_error err;
            if (ns_write_file_atomic(plan_file, plan.data, plan.len, &err) != NS_OK) rc = cli_report(&err);
        } else if (!json) {
            fputs(plan.data, stdout);
        }
        ns_buf_free(&plan);
    }
    if (json) {
        ns_buf j;
        ns_buf_init(&j);
        ns_buf_printf(&j, "{\"domain\": ");
        ns_json_put_str(&j, pos[0]);
        ns_buf_printf(&j, ", \"problem\": ");
        ns_json_put_str(&j, pos[1]);
        ns_buf_printf(&j,
                      ", \"search\": \"%s\", \"heuristic\": \"%s\", \"solved\": %s, \"status\": \"%s\", "
                      "\"plan_length\": %d, \"plan_cost\": %ld, \"expanded\": %ld, \"generated\": %ld, "
                      "\"evaluated\": %ld, \"work\": %ld, \"initial_h\": %d, \"atoms\": %d, \"operators\": %d, "
                      "\"ground_seconds\": %.6f, \"seconds\": %.6f}\n",
                      ns_search_algo_name(o.algo), o.algo == NS_SEARCH_BFS ? "none" : o.algo == NS_SEARCH_LAMA ? "ff+lmcount" : ns_heuristic_name(o.heuristic),
                      r.status == NS_OK ? "true" : "false", ns_status_name(r.status), r.status == NS_OK ? r.plan_len : -1,
                      r.status == NS_OK ? r.plan_cost : -1, r.expanded, r.generated, r.evaluated, r.work,
                      r.init_h, ct.task.natoms, ct.task.nops, ct.ground_seconds, r.seconds);
        fputs(j.data, stdout);
        ns_buf_free(&j);
    } else {
        fprintf(stderr, "%s: %s", pos[1], ns_status_name(r.status));
        if (r.status == NS_OK) fprintf(stderr, ", plan length %d, cost %ld", r.plan_len, r.plan_cost);
        fprintf(stderr, "; %ld expanded, %ld generated, %.3f s search, %.3f s grounding\n", r.expanded,
                r.generated, r.seconds, ct.ground_seconds);
    }
    if (!rc) rc = (int)r.status;
    ns_search_result_free(&r);
    cli_task_free(&ct);
    return rc;
}
