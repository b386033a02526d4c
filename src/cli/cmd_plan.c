/* cmd_plan.c — `nextstate plan`: plan with a learned next-state model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "nextstate/util/json.h"
#include "nextstate/core/plan.h"
#include "nextstate/planner/planner.h"
#include "nextstate/data/trajectory.h"

static char *stem_of(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    char *s = ns_xstrdup(b);
    size_t l = strlen(s);
    if (l > 5 && !strcmp(s + l - 5, ".pddl")) s[l - 5] = '\0';
    return s;
}

/* What `plan` plans with: a next-state predictor or a learned heuristic. */
typedef struct plan_model {
    bool hwl;
    ns_predictor p;
    ns_hwl h;
    ns_predictor prefer; /* with --prefer: the next-state model choosing h's preferred successors */
} plan_model;

/* Where `plan` puts its plans and how it reports. */
typedef struct plan_out {
    const char *plan_file, *plan_dir;
    bool json;
} plan_out;

/* One line of the report: a JSON object, or a line on stderr. */
static void report_problem(const char *prob, const plan_out *out, const char *algo, ns_status st,
                           const ns_planner_result *r, int nobjects)
{
    if (out->json) {
        ns_buf j;
        ns_buf_init(&j);
        ns_buf_puts(&j, "{\"problem\": ");
        ns_json_put_str(&j, prob);
        ns_buf_printf(&j,
                      ", \"algo\": \"%s\", \"solved\": %s, \"status\": \"%s\", \"plan_length\": %d, "
                      "\"objects\": %d, \"width\": %d, \"expanded\": %ld, \"predictions\": %ld, "
                      "\"eliminated\": %d, \"classical\": %s, \"work\": %ld, \"seconds\": %.6f, \"model_seconds\": %.6f}\n",
                      algo, st == NS_OK ? "true" : "false", ns_status_name(st),
                      st == NS_OK ? r->plan_len : -1, nobjects, r->width, r->expanded, r->predictions, r->eliminated,
                      r->classical ? "true" : "false", r->work, r->seconds, r->model_seconds);
        fputs(j.data, stdout);
        fflush(stdout);
        ns_buf_free(&j);
    } else {
        fprintf(stderr, "%s: %s", prob, ns_status_name(st));
        if (r->classical) fprintf(stderr, " (classical fallback)");
        if (st == NS_OK) fprintf(stderr, ", plan length %d (%d redundant steps dropped)", r->plan_len, r->eliminated);
        fprintf(stderr, "; %ld expanded, %.3f s (model %.3f s)\n", r->expanded, r->seconds, r->model_seconds);
    }
}

/* Writes a plan where out says (a file, a folder, or stdout). */
static int write_plan(const ns_task *t, const char *prob, const ns_planner_result *r, const plan_out *out)
{
    int rc = 0;
    ns_error err;
    ns_buf plan, path;
    ns_buf_init(&plan);
    ns_buf_init(&path);
    ns_plan_write_ops(t, r->plan, r->plan_len, &plan);
    const char *dest = out->plan_file;
    if (out->plan_dir) {
        char *stem = stem_of(prob);
        ns_buf_printf(&path, "%s/%s.plan", out->plan_dir, stem);
        free(stem);
        dest = path.data;
    }
    if (dest) {
        if (ns_write_file_atomic(dest, plan.data, plan.len, &err) != NS_OK) rc = cli_report(&err);
    } else if (!out->json) {
        fputs(plan.data, stdout);
    }
    ns_buf_free(&plan);
    ns_buf_free(&path);
    return rc;
}

/* Grounds and plans one problem; the time limit covers both (alone: the
 * whole process, as a competition counts it).  *st is the
 * outcome (a grounding that runs out of time or memory counts as one);
 * returns 0, or the exit code of an error that ends the run. */
static int plan_problem(const plan_model *m, const char *domain, const char *prob, const ns_planner_opts *o,
                        const plan_out *out, bool alone, ns_status *st)
{
    const char *algo = o->prefer ? "hwl+model-preferred"
                       : m->hwl  ? ns_plan_heuristic_name(&m->h, o->algo)
                                 : ns_planner_algo_name(o->algo);
    ns_ground_limits lim = {o->time_limit, o->memory_limit};
    cli_task ct;
    ns_planner_result r;
    memset(&r, 0, sizeof r);
    int lrc = cli_task_load_limited(&ct, domain, prob, &lim);
    *st = (ns_status)lrc;
    if (lrc == NS_OUT_OF_TIME || lrc == NS_OUT_OF_MEMORY) { /* reported; unsolved, and the run goes on */
        if (!alone) report_problem(prob, out, algo, *st, &r, 0);
        return alone ? lrc : 0;
    }
    if (lrc) return lrc;
    ns_error err;
    ns_error_clear(&err);
    ns_planner_opts po = *o;
    /* one problem: from the process's start, the model's loading included */
    *st = !cli_limit_left(&po.time_limit, alone ? ns_cpu_now() : ct.ground_cpu_seconds) ? NS_OUT_OF_TIME
          : m->hwl ? ns_plan_heuristic(&m->h, &ct.task, &po, &r, &err)
                   : ns_plan_learned(&m->p, &ct.task, &po, &r, &err);
    if (*st == NS_OK && !ns_plan_ops_valid(&ct.task, r.plan, r.plan_len)) {
        ns_error_set(&err, NS_ERR_INTERNAL, prob, 0, 0, "the learned planner returned an invalid plan");
        *st = NS_ERR_INTERNAL;
    }
    int rc = 0;
    if (*st != NS_OK && *st != NS_INCOMPLETE && *st != NS_UNSOLVABLE && *st != NS_OUT_OF_TIME &&
        *st != NS_OUT_OF_MEMORY) {
        /* the model cannot read this problem (e.g. FSF slots): report, count as unsolved */
        int e = cli_report(&err);
        if (alone) rc = e;
    }
    if (*st == NS_OK) rc = write_plan(&ct.task, prob, &r, out);
    report_problem(prob, out, algo, *st, &r, ct.problem.nobjects);
    ns_planner_result_free(&r);
    cli_task_free(&ct);
    return rc;
}

int cmd_plan(int argc, char **argv)
{
    const char *model = NULL, *prefer = NULL, *plan_file = NULL, *plan_dir = NULL, *pos0 = NULL;
    char **probs = NULL;
    int nprobs = 0;
    bool json = false;
    ns_planner_opts o;
    ns_planner_opts_default(&o);
    o.fallback = NS_PLAN_FALLBACK;
    char **rest = ns_xcalloc((size_t)argc + 1, sizeof(char *));
    int nrest = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        if (!strcmp(a, "--json")) json = true;
        else if (!strcmp(a, "--raw-plan")) o.raw_plan = true;
        else if (!v && a[0] == '-' && a[1]) {
            free(rest);
            return cli_usage("plan", "%s expects a value", a);
        } else if (!strcmp(a, "--model")) model = argv[++i];
        else if (!strcmp(a, "--prefer")) prefer = argv[++i];
        else if (!strcmp(a, "--plan-file")) plan_file = argv[++i];
        else if (!strcmp(a, "--plan-dir")) plan_dir = argv[++i];
        else if (!strcmp(a, "--algo")) {
            int k = ns_planner_algo_parse(v);
            if (k < 0) {
                free(rest);
                return cli_usage("plan", "--algo expects beam, restart, search, guided, lama or lama-h");
            }
            o.algo = (ns_planner_algo)k;
            i++;
        } else if (!strcmp(a, "--time-limit") || !strcmp(a, "--fallback") || !strcmp(a, "--memory-limit")) {
            double mb = 0; /* --memory-limit (> 0); the time limit and the fallback share ([0, 1)) go into o */
            bool limit = !strcmp(a, "--time-limit"), share = !strcmp(a, "--fallback");
            if (!(limit   ? cli_parse_double("plan", a, v, &o.time_limit)
                  : share ? cli_parse_min("plan", a, v, 0, true, 1, &o.fallback)
                          : cli_parse_min("plan", a, v, 0, false, INFINITY, &mb))) {
                free(rest);
                return NS_ERR_USAGE;
            }
            if (mb > 0) o.memory_limit = (size_t)(mb * 1024.0 * 1024.0);
            i++;
        } else if (!strcmp(a, "--width") || !strcmp(a, "--max-steps")) {
            if (!cli_parse_range("plan", a, v, 1, 1L << 24, &n)) {
                free(rest);
                return NS_ERR_USAGE;
            }
            if (!strcmp(a, "--width")) o.width = (int)n;
            else o.max_steps = (int)n;
            i++;
        } else if (a[0] == '-' && a[1]) {
            free(rest);
            return cli_usage("plan", "unknown option '%s'", a);
        } else if (!pos0) pos0 = a;
        else rest[nrest++] = argv[i];
    }
    if (!model || !pos0 || nrest < 1) {
        free(rest);
        return cli_usage("plan", "expects --model MODEL DOMAIN PROBLEM|FOLDER…");
    }
    ns_error err;
    probs = ns_problem_paths(rest, nrest, &nprobs, &err);
    free(rest);
    if (!probs) return cli_report(&err);
    if (plan_file && nprobs != 1) {
        for (int i = 0; i < nprobs; i++) free(probs[i]);
        free(probs);
        return cli_usage("plan", "--plan-file takes one problem (use --plan-dir for several)");
    }
    plan_model m;
    memset(&m, 0, sizeof m);
    m.hwl = ns_hwl_sniff(model);
    int rc = 0;
    if ((m.hwl ? ns_hwl_load(&m.h, model, &err) : ns_predictor_load(&m.p, model, &err)) != NS_OK ||
        (prefer && ns_predictor_load(&m.prefer, prefer, &err) != NS_OK)) {
        rc = cli_report(&err);
        if (m.hwl) ns_hwl_free(&m.h);
        else ns_predictor_free(&m.p);
        for (int i = 0; i < nprobs; i++) free(probs[i]);
        free(probs);
        return rc;
    }
    if (prefer) {
        if (!m.hwl) rc = cli_usage("plan", "--prefer needs a learned heuristic as --model (learn --model hwl)");
        o.prefer = &m.prefer;
        if (o.algo == NS_PLAN_BEAM) o.algo = NS_PLAN_GUIDED; /* not chosen: the one search it works with */
    }
    if (!rc && plan_dir && ns_mkdir_p(plan_dir, &err) != NS_OK) rc = cli_report(&err);
    const plan_out out = {plan_file, plan_dir, json};
    int solved = 0;
    for (int i = 0; i < nprobs && !rc; i++) {
        ns_status st;
        rc = plan_problem(&m, pos0, probs[i], &o, &out, nprobs == 1, &st);
        solved += st == NS_OK;
        if (nprobs == 1 && !rc) rc = st == NS_OK ? 0 : (int)st;
    }
    if (nprobs > 1 && !json) fprintf(stderr, "plan: %d/%d solved\n", solved, nprobs);
    if (m.hwl) ns_hwl_free(&m.h);
    else ns_predictor_free(&m.p);
    if (prefer) ns_predictor_free(&m.prefer);
    for (int i = 0; i < nprobs; i++) free(probs[i]);
    free(probs);
    return rc;
}
