/* cmd_embed_stats.c — how a model reads the prompts: `nextstate embed stats DATASET_DIR…` (its truncation of the
 * state prompts; embed.h: ns_embed_prompt_stats_dir) and `embed tokenize TEXT…` (its token ids); cmd_embed.c
 * hands them the parsed options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "nextstate/encode/bert.h"
#include "nextstate/encode/embed.h"

/* `embed stats DATASET_DIR…`: how the model's truncation treats the state
 * prompts (ns_embed_prompt_stats). */
int cli_embed_stats(const char *model, const char *domains, ns_prompt_layout layout, bool json, int ndirs,
                    const char *const *dirs)
{
    if (ndirs < 1) return cli_usage("embed", "stats expects DATASET_DIR…");
    ns_bert *m = NULL;
    ns_error err;
    if (ns_embed_model_load(&m, model, &err) != NS_OK) return cli_report(&err);
    int rc = 0;
    const int L = ns_bert_config_of(m)->max_seq_length;
    bool header = false; /* printed with the first row: an error before it comes alone */
    for (int di = 0; di < ndirs && !rc; di++) {
        const char *dir = dirs[di];
        ns_prompt_stats q;
        ns_buf dom, j;
        ns_buf_init(&dom);
        ns_buf_init(&j);
        if (ns_embed_prompt_stats_dir(m, dir, domains, layout, &q, &dom, &err) != NS_OK) {
            rc = cli_report(&err);
        } else if (json) {
            ns_prompt_stats_json(&j, &q, dir, dom.data, ns_bert_config_of(m)->name, layout);
            printf("%s\n", j.data);
        } else {
            if (!header)
                printf("%-28s %7s %6s %6s %6s %6s %7s %12s %8s %8s %8s %8s\n", ns_prompt_layout_name(layout),
                       "prompts", "min", "median", "p90", "max", "> max", "state start", "state", "cut", "lost",
                       "merged");
            header = true;
            printf("%-28s %7lld %6d %6d %6d %6d %6.1f%% %12d %8d %7.1f%% %7.1f%% %7.1f%%\n", dom.data,
                   (long long)q.prompts, q.min, q.median, q.p90, q.max, 100.0 * q.over_max, q.state_start_median,
                   q.state_tokens_median, 100.0 * q.state_cut, 100.0 * q.state_lost, 100.0 * q.merged);
        }
        ns_buf_free(&dom);
        ns_buf_free(&j);
    }
    if (!rc && !json)
        printf("tokens: word pieces per state prompt with CLS and SEP; > max: prompts beyond max_seq_length %d;\n"
               "state start / state: median position of the CURRENT STATE block's first piece and its length;\n"
               "cut: states whose block truncation shortens; lost: cut entirely; merged: states whose truncated\n"
               "model input equals another state's of the same problem (identical embeddings).\n",
               L);
    ns_bert_free(m);
    return rc;
}

/* `embed tokenize TEXT…`: the model-input token ids, one line per text (with
 * the word pieces under them unless json). */
int cli_embed_tokenize(const char *model, bool json, int ntexts, const char *const *texts)
{
    ns_bert *m = NULL;
    ns_error err;
    if (ns_embed_model_load(&m, model, &err) != NS_OK) return cli_report(&err);
    const ns_bert_config *c = ns_bert_config_of(m);
    int32_t *ids = ns_xmalloc((size_t)c->max_seq_length * sizeof *ids);
    for (int i = 0; i < ntexts; i++) {
        int n = ns_bert_tokenize(m, texts[i], strlen(texts[i]), ids);
        for (int k = 0; k < n; k++) printf("%s%d", k ? (json ? ", " : " ") : (json ? "[" : ""), ids[k]);
        if (!json) {
            printf("\n ");
            for (int k = 0; k < n; k++) printf(" %s", ns_wordpiece_token(ns_bert_wordpiece(m), ids[k]));
        }
        printf(json ? "]\n" : "\n");
    }
    free(ids);
    ns_bert_free(m);
    return 0;
}
