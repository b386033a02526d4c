/* cmd_gen.c — `nextstate gen`: random problems for the shipped domains. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "nextstate/core/gen.h"

static void list_domains(void)
{
    for (const char *const *d = ns_gen_domains(); *d; d++) {
        printf("%s\n", *d);
        for (const ns_gen_option *o = ns_gen_options(*d); o && o->name; o++)
            printf("  --%-14s %s (default %d, at least %d)\n", o->name, o->help, o->def, o->min);
    }
}

int cmd_gen(int argc, char **argv)
{
    const char *domain = NULL, *out = NULL, *name = NULL;
    long seed = -1;
    ns_gen_arg args[32];
    int nargs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--list")) {
            list_domains();
            return 0;
        } else if (!strcmp(a, "--seed")) {
            if (!cli_parse_range("gen", a, v, 0, LONG_MAX, &seed)) return NS_ERR_USAGE;
            i++;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!v) return cli_usage("gen", "%s expects a file name", a);
            out = v;
            i++;
        } else if (!strcmp(a, "--problem-name")) {
            if (!v) return cli_usage("gen", "--problem-name expects a name");
            name = v;
            i++;
        } else if (!strncmp(a, "--", 2) && a[2]) {
            long val;
            if (!cli_parse_long("gen", a, v, &val)) return NS_ERR_USAGE;
            if (nargs == 32) return cli_usage("gen", "too many options");
            args[nargs].name = a + 2;
            args[nargs++].value = (int)val;
            i++;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage("gen", "unknown option '%s'", a);
        } else if (!domain) {
            domain = a;
        } else {
            return cli_usage("gen", "too many arguments");
        }
    }
    if (!domain) return cli_usage("gen", "expects a DOMAIN (see 'nextstate gen --list')");
    if (seed < 0) return cli_usage("gen", "expects --seed S");
    char defname[128];
    if (!name) {
        snprintf(defname, sizeof defname, "%s-s%ld", domain, seed);
        name = defname;
    }
    ns_buf b;
    ns_buf_init(&b);
    ns_error err;
    ns_status st = ns_gen_problem(domain, args, nargs, (uint64_t)seed, name, &b, &err);
    int rc = 0;
    if (st != NS_OK) rc = cli_report(&err);
    else if (out) {
        if (ns_write_file_atomic(out, b.data, b.len, &err) != NS_OK) rc = cli_report(&err);
    } else fputs(b.data, stdout);
    ns_buf_free(&b);
    return rc;
}
