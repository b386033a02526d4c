/* cmd_split.c — `nextstate split PROTOCOL DATASET… -o DIR` and
 * `nextstate split sizes ROOT`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "nextstate/util/json.h"
#include "nextstate/data/split.h"

static int split_sizes(int argc, char **argv)
{
    const char *root = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = true;
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage("split", "unknown option '%s'", argv[i]);
        else if (!root) root = argv[i];
        else return cli_usage("split", "sizes takes one ROOT folder");
    }
    if (!root) return cli_usage("split", "sizes expects ROOT (with train, validation, test-interpolation, test-extrapolation)");
    char **names[4];
    int n[4];
    ns_error err;
    if (ns_size_split_read(root, names, n, &err) != NS_OK) return cli_report(&err);
    ns_buf b;
    ns_buf_init(&b);
    if (json) {
        ns_buf_puts(&b, "{\"root\": ");
        ns_json_put_str(&b, root);
        for (int k = 0; k < 4; k++) {
            ns_buf_printf(&b, ",\n \"%s\": [", ns_size_split_name(k));
            for (int i = 0; i < n[k]; i++) {
                if (i) ns_buf_puts(&b, ", ");
                ns_json_put_str(&b, names[k][i]);
            }
            ns_buf_putc(&b, ']');
        }
        ns_buf_printf(&b, ",\n \"counts\": {\"train\": %d, \"validation\": %d, \"test-interpolation\": %d, "
                          "\"test-extrapolation\": %d}}\n",
                      n[0], n[1], n[2], n[3]);
    } else {
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < n[k]; i++) ns_buf_printf(&b, "%s\t%s\n", ns_size_split_name(k), names[k][i]);
    }
    if (b.len) fputs(b.data, stdout);
    fprintf(stderr, "%s: %d train, %d validation, %d test-interpolation, %d test-extrapolation problems\n", root, n[0],
            n[1], n[2], n[3]);
    ns_buf_free(&b);
    ns_size_split_free(names, n);
    return 0;
}

int cmd_split(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "sizes")) return split_sizes(argc - 1, argv + 1);
    ns_split_opts o = {0};
    o.pool_size = 128;
    const char *out = NULL, *proto = NULL;
    const char **dirs = ns_xcalloc((size_t)argc + 1, sizeof(char *));
    int ndirs = 0, rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        double x;
        if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!v) rc = cli_usage("split", "%s expects a directory", a);
            out = v;
            i++;
        } else if (!strcmp(a, "--test-frac")) {
            if (!cli_parse_double("split", a, v, &x)) rc = NS_ERR_USAGE;
            else if (!(x > 0 && x < 1)) rc = cli_usage("split", "--test-frac expects a number in (0, 1), given '%s'", v);
            o.test_frac = x;
            i++;
        } else if (!strcmp(a, "--dev-frac")) {
            if (!cli_parse_double("split", a, v, &x)) rc = NS_ERR_USAGE;
            else if (!(x >= 0 && x < 1)) rc = cli_usage("split", "--dev-frac expects a number in [0, 1), given '%s'", v);
            o.dev_frac = x == 0 ? -1 : x; /* 0 on the command line: no dev list */
            i++;
        } else if (!strcmp(a, "--pool-size")) {
            if (!cli_parse_long("split", a, v, &n)) rc = NS_ERR_USAGE;
            else if (n < 0 || n > 1000000) rc = cli_usage("split", "--pool-size expects 0 … 1000000, given '%s'", v);
            o.pool_size = (int)n;
            i++;
        } else if (!strcmp(a, "--seed")) {
            if (!cli_parse_long("split", a, v, &n)) rc = NS_ERR_USAGE;
            else if (n < 0) rc = cli_usage("split", "--seed expects a non-negative integer");
            o.seed = (uint64_t)n;
            i++;
        } else if (!strcmp(a, "--with-replacement")) {
            o.with_replacement = true;
        } else if (a[0] == '-' && a[1]) {
            rc = cli_usage("split", "unknown option '%s'", a);
        } else if (!proto) {
            proto = a;
        } else {
            dirs[ndirs++] = a;
        }
    }
    int p = proto ? ns_protocol_parse(proto) : -1;
    if (!rc && !proto) rc = cli_usage("split", "expects PROTOCOL DATASET_DIR… -o DIR, or sizes ROOT");
    if (!rc && p < 0)
        rc = cli_usage("split", "unknown protocol '%s' (interpolation, plan-variant, extrapolation, multi-domain, "
                                "cross-domain, leave-one-out)",
                       proto);
    if (!rc && (ndirs == 0 || !out)) rc = cli_usage("split", "expects PROTOCOL DATASET_DIR… -o DIR");
    if (rc) {
        free(dirs);
        return rc;
    }
    o.protocol = (ns_protocol)p;
    ns_dataset *ds = ns_xcalloc((size_t)ndirs, sizeof(ns_dataset));
    const ns_dataset **dsp = ns_xcalloc((size_t)ndirs, sizeof(ns_dataset *));
    ns_error err;
    int loaded = 0;
    double t0 = ns_now();
    for (; loaded < ndirs && !rc; loaded++) {
        if (ns_dataset_load(&ds[loaded], dirs[loaded], &err) != NS_OK) {
            rc = cli_report(&err);
            break;
        }
        dsp[loaded] = &ds[loaded];
    }
    double t1 = ns_now();
    ns_split sp;
    if (!rc) {
        ns_status st = ns_split_make(&sp, dsp, ndirs, &o, &err);
        if (st == NS_ERR_INPUT && !err.file[0] && ndirs == 1) snprintf(err.file, sizeof err.file, "%s", dirs[0]);
        if (st == NS_OK) {
            double t2 = ns_now();
            st = ns_split_save(&sp, dirs, out, &err);
            if (st == NS_OK) {
                int64_t nshort = 0;
                for (int64_t i = 0; sp.pool_size > 0 && i < sp.test.n; i++)
                    nshort += sp.pools[(size_t)i * (size_t)sp.pool_size + (size_t)sp.pool_size - 1] < 0;
                fprintf(stderr, "%s: %s over %d dataset%s: %lld train, %lld dev, %lld test transitions; ", out,
                        ns_protocol_name(sp.protocol), ndirs, ndirs == 1 ? "" : "s", (long long)sp.train.n,
                        (long long)sp.dev.n, (long long)sp.test.n);
                if (sp.pool_size > 0)
                    fprintf(stderr, "pools of %d%s (%lld short)", sp.pool_size,
                            sp.with_replacement ? " with replacement" : "", (long long)nshort);
                else
                    fprintf(stderr, "no pools");
                fprintf(stderr, "; seed %llu; %.2f s (+%.2f s loading, %.2f s writing)\n", (unsigned long long)sp.seed,
                        t2 - t1, t1 - t0, ns_now() - t2);
            }
            ns_split_free(&sp);
        }
        if (st != NS_OK) rc = cli_report(&err);
    }
    for (int i = 0; i < loaded; i++) ns_dataset_free(&ds[i]);
    free(ds);
    free(dsp);
    free(dirs);
    return rc;
}
