/* cmd_reference.c — `nextstate reference SPLIT_DIR --method M`: the
 * non-learned reference methods (reference.h) on a split's test list (or
 * its dev list with --on dev), with the Hit@k fields of `nextstate eval`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "nextstate/eval/evaluate.h"
#include "nextstate/util/json.h"
#include "nextstate/eval/reference.h"
#include "nextstate/data/split.h"
#include "nextstate/learn/world.h"

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
    ns_split sp;
    memset(&sp, 0, sizeof sp);
    ns_dataset *dss = NULL;
    const ns_dataset **ds = NULL;
    int loaded = 0;
    ns_world_inputs in;
    memset(&in, 0, sizeof in);
    ns_vocab sv, av;
    ns_vocab_init(&sv);
    ns_vocab_init(&av);
    ns_ref_model *m = NULL;
    int64_t *pools = NULL;
    ns_buf b;
    ns_buf_init(&b);
    if (ns_split_load(&sp, split_dir, &err)) goto fail;
    if (cli_split_datasets(&sp, &dss, &ds, &loaded, &err)) goto fail;
    ns_builtin_fit_split(&sv, &av, ds, sp.ndatasets, &sp);
    if (ns_world_inputs_load(&in, ds, sp.ndatasets, sspec, "builtin", &sv, &av, &err)) goto fail;
    const ns_refs *refs = &sp.test;
    const int64_t *pl = sp.pools;
    int psize = sp.pool_size;
    if (!strcmp(on, "dev")) {
        refs = &sp.dev;
        psize = sp.pool_size > 1 ? sp.pool_size : 128;
        pools = ns_split_pools_draw(&sp, ds, refs, psize, seed ^ NS_SEED_DEV_POOLS);
        pl = pools;
    }
    if (psize < 1 || (!pl && refs->n > 0)) {
        ns_error_set(&err, NS_ERR_INPUT, split_dir, 0, 0, "the split has no candidate pools (made with --pool-size 0)");
        goto fail;
    }
    if (ns_ref_fit(&m, (ns_ref_method)ns_ref_method_parse(method), &in, &sp.train, &err)) goto fail;
    ns_eval_result r;
    if (ns_ref_eval(m, refs, pl, psize, seed, &r, &err)) goto fail;
    bool strips = ns_ref_model_method(m) == NS_REF_STRIPS;
    if (json) {
        ns_buf_puts(&b, "{\"split\": ");
        ns_json_put_str(&b, split_dir);
        ns_buf_printf(&b, ", \"method\": \"%s\", \"protocol\": \"%s\", \"on\": \"%s\", \"state_features\": ", method,
                      ns_protocol_name(sp.protocol), on);
        if (strips) ns_buf_puts(&b, "null");
        else ns_json_put_str(&b, sspec);
        if (strips)
            ns_buf_printf(&b, ", \"schemas\": %d, \"disagreements\": %lld", ns_ref_nschemas(m),
                          (long long)ns_ref_disagreements(m));
        ns_buf_puts(&b, ", \"metrics\": ");
        ns_eval_json(&r, &b);
        ns_buf_puts(&b, "}\n");
    } else {
        ns_buf_printf(&b, "reference %s on %s (%s, %s list)\n", method, split_dir, ns_protocol_name(sp.protocol), on);
        if (strips)
            ns_buf_printf(&b, "schemas            %d induced, %lld disagreeing observations\n", ns_ref_nschemas(m),
                          (long long)ns_ref_disagreements(m));
        ns_eval_table(&r, &b);
    }
    fputs(b.data, stdout);
    goto done;
fail:
    rc = cli_report(&err);
done:
    ns_buf_free(&b);
    ns_ref_free(m);
    free(pools);
    ns_world_inputs_free(&in);
    cli_split_datasets_free(dss, ds, loaded);
    ns_split_free(&sp);
    ns_vocab_free(&sv);
    ns_vocab_free(&av);
    return rc;
}
