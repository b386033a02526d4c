/* cmd_reference.c — `nextstate reference SPLIT_DIR --method M`: the
 * non-learned reference methods (reference.h) on a split's test list (or
 * its dev list with --on dev), with the Hit@k fields of `nextstate eval`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "nextstate/eval/reference.h"

int cmd_reference(int argc, char **argv)
{
    const char *split_dir = NULL, *sspec = "builtin", *on = "test", *method = NULL;
    bool json = false;
    uint64_t seed = 1;
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        if (!strcmp(a, "--json")) json = true;
        else if (!strcmp(a, "--quiet")) {
        } else if (a[0] != '-' || !a[1]) {
            if (!split_dir) split_dir = a;
            else rc = cli_usage("reference", "unexpected argument '%s'", a);
        } else if (!v) rc = cli_usage("reference", "%s expects a value", a);
        else {
            i++;
            if (!strcmp(a, "--method")) {
                if (ns_ref_method_parse(v) < 0)
                    rc = cli_usage("reference", "--method expects identity, offset-action, offset-schema or strips, given '%s'", v);
                method = v;
            } else if (!strcmp(a, "--state-features")) sspec = v;
            else if (!strcmp(a, "--on")) {
                if (strcmp(v, "test") && strcmp(v, "dev"))
                    rc = cli_usage("reference", "--on expects test or dev, given '%s'", v);
                on = v;
            } else if (!strcmp(a, "--seed")) {
                if (!cli_parse_range("reference", a, v, 0, LONG_MAX, &n)) rc = NS_ERR_USAGE;
                else seed = (uint64_t)n;
            } else rc = cli_usage("reference", "unknown option '%s' (see `nextstate help reference`)", a);
        }
    }
    if (rc) return rc;
    if (!split_dir) return cli_usage("reference", "expects SPLIT_DIR");
    if (!method) return cli_usage("reference", "expects --method identity|offset-action|offset-schema|strips");
    ns_error err;
    ns_ref_report rep;
    if (ns_ref_run(split_dir, (ns_ref_method)ns_ref_method_parse(method), sspec, !strcmp(on, "dev"), seed, &rep, &err))
        return cli_report(&err);
    ns_buf b;
    ns_buf_init(&b);
    if (json) ns_ref_report_json(&rep, &b);
    else ns_ref_report_table(&rep, &b);
    fputs(b.data, stdout);
    ns_buf_free(&b);
    ns_ref_report_free(&rep);
    return 0;
}
