/* cmd_data_export.c — `nextstate data export` (one JSON line per
 * transition) and `nextstate data plans` (IPC plan files). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "nextstate/data/dataset.h"
#include "nextstate/data/render.h"
#include "nextstate/encode/featurize.h"
#include "nextstate/util/json.h"

/* Literal form of a state: its true atoms joined by spaces. */
static void put_literals(ns_buf *b, const ns_dataset *ds, int64_t s)
{
    const ns_ds_problem *p = &ds->problems[((int32_t *)ds->state_problem.data)[s]];
    const uint64_t *w = ns_dataset_state(ds, s);
    ns_buf tmp;
    ns_buf_init(&tmp);
    for (int a = 0; a < p->natoms; a++)
        if ((w[a >> 6] >> (a & 63)) & 1) {
            if (tmp.len) ns_buf_putc(&tmp, ' ');
            ns_buf_puts(&tmp, p->atoms[a]);
        }
    ns_json_put_str(b, tmp.data);
    ns_buf_free(&tmp);
}

static void put_prompt(ns_buf *b, ns_buf *tmp, const ns_dataset *ds, ns_render_prep *const *preps, int64_t s)
{
    tmp->len = 0;
    ns_render_prep_prompt_bits(preps[((int32_t *)ds->state_problem.data)[s]], ns_dataset_state(ds, s), tmp);
    ns_json_put_str(b, tmp->data);
}

int cli_data_export(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL, *domains_dir = NULL;
    bool text = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--text")) text = true;
        else if (!strcmp(argv[i], "--domains") && i + 1 < argc) domains_dir = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage("data", "unknown option '%s'", argv[i]);
        else if (!dir) dir = argv[i];
        else return cli_usage("data", "too many arguments");
    }
    if (!dir) return cli_usage("data", "export expects DIR [-o FILE.jsonl] [--text [--domains DIR]]");
    ns_dataset ds;
    ns_error err;
    if (ns_dataset_load(&ds, dir, &err) != NS_OK) return cli_report(&err);
    ns_render_prep **preps = NULL;
    if (text && ns_feat_renders_new(&preps, &ds, domains_dir, &err) != NS_OK) {
        ns_dataset_free(&ds);
        return cli_report(&err);
    }
    ns_buf b, tmp;
    ns_buf_init(&b);
    ns_buf_init(&tmp);
    const int32_t *hs = ds.state_hstar.data;
    const uint8_t *opt = ds.transition_optimal.data;
    for (int64_t t = 0; t < ns_dataset_ntransitions(&ds); t++) {
        const int32_t *r = ns_dataset_transition(&ds, t);
        const ns_ds_problem *p = &ds.problems[r[0]];
        ns_buf_printf(&b, "{\"transition\": %lld, \"problem\": ", (long long)t);
        ns_json_put_str(&b, p->name);
        ns_buf_printf(&b, ", \"state\": %d, \"next_state\": %d, \"action\": ", r[1], r[3]);
        ns_json_put_str(&b, p->ops[r[2]]);
        ns_buf_puts(&b, ", \"state_literals\": ");
        put_literals(&b, &ds, r[1]);
        ns_buf_puts(&b, ", \"next_state_literals\": ");
        put_literals(&b, &ds, r[3]);
        if (preps) {
            ns_buf_puts(&b, ", \"state_text\": ");
            put_prompt(&b, &tmp, &ds, preps, r[1]);
            ns_buf_puts(&b, ", \"next_state_text\": ");
            put_prompt(&b, &tmp, &ds, preps, r[3]);
        }
        ns_buf_printf(&b, ", \"hstar\": %d, \"next_hstar\": %d, \"optimal\": %s}\n", hs[r[1]], hs[r[3]],
                      opt[t] ? "true" : "false");
    }
    ns_feat_renders_free(preps, ds.nproblems);
    ns_buf_free(&tmp);
    int rc = 0;
    if (out) {
        if (ns_write_file_atomic(out, b.data, b.len, &err) != NS_OK) rc = cli_report(&err);
    } else {
        fputs(b.data, stdout);
    }
    ns_buf_free(&b);
    ns_dataset_free(&ds);
    return rc;
}

/* Writes the dataset's sampled optimal plans as IPC plan files
 * OUTDIR/<problem>-<k>.plan. */
int cli_data_plans(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage("data", "unknown option '%s'", argv[i]);
        else if (!dir) dir = argv[i];
        else return cli_usage("data", "too many arguments");
    }
    if (!dir || !out) return cli_usage("data", "plans expects DIR -o OUTDIR");
    ns_dataset ds;
    ns_error err;
    if (ns_dataset_load(&ds, dir, &err) != NS_OK) return cli_report(&err);
    int rc = ns_mkdir_p(out, &err) == NS_OK ? 0 : cli_report(&err);
    const int64_t *po = ds.plan_offsets.data, *pt = ds.plan_transitions.data;
    const int32_t *pp = ds.plan_problem.data;
    int *count = ns_xcalloc((size_t)ds.nproblems + 1, sizeof(int));
    ns_buf b, path;
    ns_buf_init(&b);
    ns_buf_init(&path);
    for (int64_t k = 0; k < ds.plan_problem.shape[0] && !rc; k++) {
        const ns_ds_problem *p = &ds.problems[pp[k]];
        b.len = path.len = 0;
        for (int64_t j = po[k]; j < po[k + 1]; j++) ns_buf_printf(&b, "%s\n", p->ops[ns_dataset_transition(&ds, pt[j])[2]]);
        ns_buf_printf(&b, "; cost = %lld (unit cost)\n", (long long)(po[k + 1] - po[k]));
        ns_buf_printf(&path, "%s/%s-%d.plan", out, p->name, count[pp[k]]++);
        if (ns_write_file_atomic(path.data, b.data, b.len, &err) != NS_OK) rc = cli_report(&err);
    }
    if (!rc) fprintf(stderr, "%lld plans written to %s\n", (long long)ds.plan_problem.shape[0], out);
    ns_buf_free(&b);
    ns_buf_free(&path);
    free(count);
    ns_dataset_free(&ds);
    return rc;
}
