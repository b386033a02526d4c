/* cmd_featurize_pca.c — `nextstate featurize pca SPEC… -o COORDS.npy`: the
 * principal components of feature rows (pca.h), fitted on the rows of every
 * SPEC stacked in order (equal widths), and each row's coordinates written
 * as float32 [N, K] — the EmbedPlan paper's PCA of state embeddings by domain
 * (appendix F.1) when each SPEC is one domain's embeddings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "nextstate/encode/pca.h"
#include "nextstate/util/json.h"
#include "nextstate/util/npy.h"

#define MAX_SPECS 256

int cli_featurize_pca(int argc, char **argv)
{
    const char *out = NULL, *specs[MAX_SPECS];
    int nspecs = 0;
    long k = 2, seed = 1;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--json")) json = true;
        else if (o[0] == '-' && o[1]) {
            if (!v) return cli_usage("featurize", "pca: %s expects a value", o);
            i++;
            if (!strcmp(o, "-o") || !strcmp(o, "--output")) out = v;
            else if (!strcmp(o, "--components")) {
                if (!cli_parse_range("featurize", o, v, 1, 64, &k)) return NS_ERR_USAGE;
            } else if (!strcmp(o, "--seed")) {
                if (!cli_parse_range("featurize", o, v, 0, LONG_MAX, &seed)) return NS_ERR_USAGE;
            } else return cli_usage("featurize", "pca: unknown option '%s'", o);
        } else if (nspecs == MAX_SPECS) return cli_usage("featurize", "pca: more than %d feature specs", MAX_SPECS);
        else specs[nspecs++] = o;
    }
    if (!nspecs) return cli_usage("featurize", "pca expects SPEC… (feature .npy files or CSR prefixes)");
    if (!out) return cli_usage("featurize", "pca needs -o COORDS.npy");
    ns_error err;
    ns_features *parts = ns_xcalloc((size_t)nspecs, sizeof *parts);
    int64_t *rows = ns_xmalloc((size_t)nspecs * sizeof *rows);
    for (int s = 0; s < nspecs; s++) {
        if (ns_features_load(&parts[s], specs[s], &err) != NS_OK) {
            for (int t = 0; t < s; t++) ns_features_free(&parts[t]);
            free(parts);
            free(rows);
            return cli_report(&err);
        }
        rows[s] = parts[s].nrows;
    }
    ns_features all;
    memset(&all, 0, sizeof all);
    int rc = 0;
    for (int s = 1; s < nspecs && !rc; s++)
        if (parts[s].dim != parts[0].dim || parts[s].sparse != parts[0].sparse)
            rc = cli_usage("featurize", "pca: %s has %lld %s columns, %s has %lld %s ones (the specs must share one space)",
                           specs[s], (long long)parts[s].dim, parts[s].sparse ? "sparse" : "dense", specs[0],
                           (long long)parts[0].dim, parts[0].sparse ? "sparse" : "dense");
    if (!rc && ns_features_stack(&all, parts, nspecs, &err) != NS_OK) rc = cli_report(&err);
    for (int s = 0; s < nspecs; s++) ns_features_free(&parts[s]);
    free(parts);
    ns_pca p;
    ns_pca_init(&p);
    if (!rc && ns_pca_fit(&p, &all, (int)k, (uint64_t)seed, &err) != NS_OK) rc = cli_report(&err);
    if (!rc) {
        ns_array a;
        int64_t shape[2] = {all.nrows, k};
        ns_array_init(&a, NS_F32, 2, shape);
        if (ns_pca_transform(&p, &all, a.data, &err) != NS_OK || ns_npy_write(out, &a, NULL, &err) != NS_OK)
            rc = cli_report(&err);
        ns_array_free(&a);
    }
    if (!rc) {
        ns_buf b;
        ns_buf_init(&b);
        if (json) {
            ns_buf_puts(&b, "{\"out\": ");
            ns_json_put_str(&b, out);
            ns_buf_printf(&b, ", \"rows\": %lld, \"dim\": %lld, \"components\": %ld, \"seed\": %ld, \"specs\": [",
                          (long long)all.nrows, (long long)all.dim, k, seed);
            for (int s = 0; s < nspecs; s++) {
                ns_buf_puts(&b, s ? ", {\"spec\": " : "{\"spec\": ");
                ns_json_put_str(&b, specs[s]);
                ns_buf_printf(&b, ", \"rows\": %lld}", (long long)rows[s]);
            }
            ns_buf_puts(&b, "], \"variance_ratio\": [");
            for (int j = 0; j < p.k; j++) {
                if (j) ns_buf_puts(&b, ", ");
                ns_json_put_num(&b, p.ratio[j]);
            }
            ns_buf_puts(&b, "], \"total_variance\": ");
            ns_json_put_num(&b, p.total_variance);
            ns_buf_puts(&b, "}\n");
        } else {
            ns_buf_printf(&b, "pca: %lld rows x %lld columns from %d spec%s -> %s; %ld components explain", (long long)all.nrows,
                          (long long)all.dim, nspecs, nspecs == 1 ? "" : "s", out, k);
            for (int j = 0; j < p.k; j++) ns_buf_printf(&b, " %.2f%%", 100 * p.ratio[j]);
            ns_buf_puts(&b, " of the variance\n");
        }
        fputs(b.data, stdout);
        ns_buf_free(&b);
    }
    ns_pca_free(&p);
    ns_features_free(&all);
    free(rows);
    return rc;
}
