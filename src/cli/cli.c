/* cli.c — helpers shared by the subcommands. */
#include "cli.h"
#include "nextstate/data/split.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cli_report(const ns_error *e)
{
    char buf[1024];
    ns_error_format(e, buf, sizeof buf);
    fprintf(stderr, "nextstate: %s\n", buf);
    return e->code ? (int)e->code : NS_ERR_INTERNAL;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "nextstate %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see 'nextstate help %s')\n", cmd);
    va_end(ap);
    return NS_ERR_USAGE;
}

int cli_task_load(cli_task *ct, const char *domain_path, const char *problem_path)
{
    memset(ct, 0, sizeof *ct);
    ns_error err;
    ns_error_clear(&err);
    if (ns_domain_read(&ct->domain, domain_path, &err) != NS_OK) return cli_report(&err);
    if (ns_problem_read(&ct->problem, &ct->domain, problem_path, &err) != NS_OK) {
        ns_domain_free(&ct->domain);
        return cli_report(&err);
    }
    if (ct->problem.nunknown_init)
        fprintf(stderr, "nextstate: warning: %s:%d:%d: predicate '%s' is not declared by the domain; %d init atom%s ignored\n",
                problem_path, ct->problem.unknown_line, ct->problem.unknown_col, ct->problem.unknown_pred,
                ct->problem.nunknown_init, ct->problem.nunknown_init == 1 ? "" : "s");
    double t0 = ns_now();
    if (ns_task_ground(&ct->task, &ct->domain, &ct->problem, &err) != NS_OK) {
        ns_problem_free(&ct->problem);
        ns_domain_free(&ct->domain);
        return cli_report(&err);
    }
    ct->ground_seconds = ns_now() - t0;
    return 0;
}

void cli_task_free(cli_task *ct)
{
    ns_task_free(&ct->task);
    ns_problem_free(&ct->problem);
    ns_domain_free(&ct->domain);
}

bool cli_parse_double(const char *cmd, const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = s ? strtod(s, &end) : 0;
    if (!s || end == s || *end || errno) {
        cli_usage(cmd, "%s expects a number, given '%s'", opt, s ? s : "");
        return false;
    }
    *out = v;
    return true;
}

/* s as a whole decimal long. */
static bool parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || end == s || *end || errno) return false;
    *out = v;
    return true;
}

bool cli_parse_range(const char *cmd, const char *opt, const char *s, long lo, long hi, long *out)
{
    long v;
    if (parse_long(s, &v) && v >= lo && v <= hi) {
        *out = v;
        return true;
    }
    if (hi == LONG_MAX) cli_usage(cmd, "%s expects an integer ≥ %ld, given '%s'", opt, lo, s ? s : "");
    else cli_usage(cmd, "%s expects an integer in [%ld, %ld], given '%s'", opt, lo, hi, s ? s : "");
    return false;
}

bool cli_parse_long(const char *cmd, const char *opt, const char *s, long *out)
{
    if (parse_long(s, out)) return true;
    cli_usage(cmd, "%s expects an integer, given '%s'", opt, s ? s : "");
    return false;
}

ns_status cli_split_datasets(const ns_split *sp, ns_dataset **dss, const ns_dataset ***ds, int *loaded, ns_error *err)
{
    *dss = ns_xcalloc((size_t)sp->ndatasets + 1, sizeof **dss);
    *ds = ns_xcalloc((size_t)sp->ndatasets + 1, sizeof **ds);
    for (*loaded = 0; *loaded < sp->ndatasets; (*loaded)++) {
        ns_status st = ns_dataset_load(&(*dss)[*loaded], sp->sources[*loaded].dir, err);
        if (st != NS_OK) return st;
        (*ds)[*loaded] = &(*dss)[*loaded];
    }
    return ns_split_check(sp, *ds, sp->ndatasets, err);
}

void cli_split_datasets_free(ns_dataset *dss, const ns_dataset **ds, int loaded)
{
    for (int d = 0; d < loaded; d++) ns_dataset_free(&dss[d]);
    free(dss);
    free(ds);
}

bool cli_same_dir(const char *x, const char *y)
{
    if (!strcmp(x, y)) return true;
    struct stat sx, sy;
    return stat(x, &sx) == 0 && stat(y, &sy) == 0 && sx.st_dev == sy.st_dev && sx.st_ino == sy.st_ino;
}
