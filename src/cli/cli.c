/* cli.c — helpers shared by the subcommands. */
#include "cli.h"
#include "nextstate/util/blas.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    return cli_task_load_limited(ct, domain_path, problem_path, NULL);
}

bool cli_limit_left(double *limit, double spent)
{
    if (!(*limit > 0)) return true;
    *limit -= spent;
    return *limit > 0;
}

int cli_task_load_limited(cli_task *ct, const char *domain_path, const char *problem_path, const ns_ground_limits *lim)
{
    ns_error err;
    ns_error_clear(&err);
    if (ns_task_load_limited(ct, domain_path, problem_path, lim, &err) != NS_OK) return cli_report(&err);
    if (ct->problem.nunknown_init)
        fprintf(stderr, "nextstate: warning: %s:%d:%d: predicate '%s' is not declared by the domain; %d init atom%s ignored\n",
                problem_path, ct->problem.unknown_line, ct->problem.unknown_col, ct->problem.unknown_pred,
                ct->problem.nunknown_init, ct->problem.nunknown_init == 1 ? "" : "s");
    return 0;
}

void cli_task_free(cli_task *ct) { ns_loaded_task_free(ct); }

/* s as a whole is a number (strtod's syntax, in range). */
static bool parse_number(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = s ? strtod(s, &end) : 0;
    if (!s || end == s || *end || errno) return false;
    *out = v;
    return true;
}

bool cli_parse_double(const char *cmd, const char *opt, const char *s, double *out)
{
    if (parse_number(s, out)) return true;
    cli_usage(cmd, "%s expects a number, given '%s'", opt, s ? s : "");
    return false;
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

bool cli_parse_min(const char *cmd, const char *opt, const char *s, double lo, bool inclusive, double hi, double *out)
{
    double v;
    if (parse_number(s, &v) && (inclusive ? v >= lo : v > lo) && v < hi) {
        *out = v;
        return true;
    }
    if (isinf(hi)) cli_usage(cmd, "%s expects a number %s %g, given '%s'", opt, inclusive ? "≥" : ">", lo, s ? s : "");
    else cli_usage(cmd, "%s expects a number in %c%g, %g), given '%s'", opt, inclusive ? '[' : '(', lo, hi, s ? s : "");
    return false;
}

bool cli_parse_long(const char *cmd, const char *opt, const char *s, long *out)
{
    if (parse_long(s, out)) return true;
    cli_usage(cmd, "%s expects an integer, given '%s'", opt, s ? s : "");
    return false;
}

bool cli_same_dir(const char *x, const char *y) { return ns_same_path(x, y); }

void cli_blas_threads(char **argv)
{
    /* Planning (no BLAS, or small products only) runs OpenBLAS on one thread.
     * Its pthreads build starts a worker per core when it loads, before main,
     * and each reserves its buffers: idle workers spin (sched_yield) on a short
     * run's CPU time, and under an address-space limit (Lab's, ulimit -v) on a
     * many-core host they loop in mmap for good.  Only OPENBLAS_NUM_THREADS at
     * load time starts none, so the command runs itself again with it set (a
     * few ms).  A value already set is the caller's; under valgrind, which
     * would not follow the exec, or when the exec fails, it goes on as it is. */
    static const char *const no_blas[] = {"solve", "plan", "ground", "validate", "gen"};
    const char *preload = getenv("LD_PRELOAD");
    if (strcmp(ns_blas_backend(), "openblas") || getenv("OPENBLAS_NUM_THREADS") ||
        (preload && strstr(preload, "vgpreload")))
        return;
    for (size_t i = 0; i < sizeof no_blas / sizeof no_blas[0]; i++)
        if (!strcmp(argv[1], no_blas[i]) && setenv("OPENBLAS_NUM_THREADS", "1", 0) == 0) {
            execv("/proc/self/exe", argv);
            return;
        }
}
