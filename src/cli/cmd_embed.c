/* cmd_embed.c — `nextstate embed`: neural text embeddings of a dataset's
 * rendered prompts and actions (or of a list of texts), cached by text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "cli.h"
#include "nextstate/encode/bert.h"
#include "nextstate/util/blas.h"
#include "nextstate/data/dataset.h"
#include "nextstate/encode/embed.h"
#include "nextstate/util/json.h"
#include "nextstate/util/npy.h"
#include "nextstate/encode/featurize.h"
#include "nextstate/data/render.h"

#define DEFAULT_MODEL "all-MiniLM-L6-v2"

typedef struct embed_args {
    const char *model, *cache, *out, *domains, *states_out, *actions_out;
    long batch;
    bool quiet, json, chunks, truncate;
    ns_prompt_layout layout;
    const char *pos[64];
    int npos;
} embed_args;

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A model given as a folder, or by name in $NEXTSTATE_MODELS or
 * ~/.cache/nextstate/models. */
static int load_model(const char *name, ns_bert **m)
{
    ns_buf path;
    ns_buf_init(&path);
    if (strchr(name, '/') || is_dir(name)) {
        ns_buf_puts(&path, name);
    } else {
        const char *env = getenv("NEXTSTATE_MODELS"), *home = getenv("HOME");
        if (env && *env) ns_buf_printf(&path, "%s/%s", env, name);
        else ns_buf_printf(&path, "%s/.cache/nextstate/models/%s", home ? home : ".", name);
    }
    if (!is_dir(path.data)) {
        fprintf(stderr, "nextstate: model folder %s not found (run scripts/fetch_models.sh %s, or give --model DIR)\n",
                path.data, name);
        ns_buf_free(&path);
        return NS_ERR_IO;
    }
    ns_error err;
    int rc = 0;
    if (ns_bert_load(m, path.data, &err) != NS_OK) rc = cli_report(&err);
    ns_buf_free(&path);
    return rc;
}

static int parse_args(int argc, char **argv, embed_args *a)
{
    memset(a, 0, sizeof *a);
    a->model = DEFAULT_MODEL;
    a->domains = "domains";
    a->batch = 32;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        bool more = i + 1 < argc;
        if (!strcmp(s, "--model") && more) a->model = argv[++i];
        else if (!strcmp(s, "--cache") && more) a->cache = argv[++i];
        else if (!strcmp(s, "-o") && more) a->out = argv[++i];
        else if (!strcmp(s, "--domains") && more) a->domains = argv[++i];
        else if (!strcmp(s, "--states-out") && more) a->states_out = argv[++i];
        else if (!strcmp(s, "--actions-out") && more) a->actions_out = argv[++i];
        else if (!strcmp(s, "--layout") && more) {
            int l = ns_prompt_layout_parse(argv[++i]);
            if (l < 0) return cli_usage("embed", "--layout expects paper or state-first, given '%s'", argv[i]);
            a->layout = (ns_prompt_layout)l;
        } else if (!strcmp(s, "--batch") && more) {
            if (!cli_parse_long("embed", "--batch", argv[++i], &a->batch)) return NS_ERR_USAGE;
            if (a->batch < 1 || a->batch > 4096) return cli_usage("embed", "--batch must lie in 1..4096");
        } else if (!strcmp(s, "--quiet")) a->quiet = true;
        else if (!strcmp(s, "--chunks")) a->chunks = true;
        else if (!strcmp(s, "--truncate")) a->truncate = true;
        else if (!strcmp(s, "--json")) a->json = true;
        else if (s[0] == '-' && s[1]) return cli_usage("embed", "unknown option '%s'", s);
        else if (a->npos < 64) a->pos[a->npos++] = s;
        else return cli_usage("embed", "too many arguments");
    }
    if (a->chunks && a->truncate) return cli_usage("embed", "--chunks and --truncate exclude each other");
    return 0;
}

/* No text is cut silently: unless --truncate, texts longer than the model's
 * window turn chunking on (a->chunks), and either way their count goes to
 * stderr. */
static void decide_chunks(embed_args *a, const ns_bert *m, int64_t n, const char *const *texts, const size_t *lens)
{
    int64_t over = ns_embed_count_over_window(m, n, texts, lens);
    if (over == 0) return;
    const ns_bert_config *c = ns_bert_config_of(m);
    if (!a->truncate && !a->chunks) {
        a->chunks = true;
        fprintf(stderr,
                "embed: %lld of %lld texts exceed %s's window of %d word pieces: chunked (the mean of the "
                "windows' embeddings; --truncate keeps only the first window)\n",
                (long long)over, (long long)n, c->name, c->max_seq_length);
    } else if (a->truncate) {
        fprintf(stderr, "embed: %lld of %lld texts exceed %s's window of %d word pieces: truncated (--truncate)\n",
                (long long)over, (long long)n, c->name, c->max_seq_length);
    }
}

/* Embeds texts into the cache folder (when given) or a fresh table. */
static int run_embed(const embed_args *a, ns_bert *m, int64_t n, const char *const *texts, const size_t *lens,
                     ns_embed_table *t, int64_t *computed, double *seconds, double *cpu)
{
    ns_error err;
    char mpath[1100];
    snprintf(mpath, sizeof mpath, "%s/embeddings.npy", a->cache ? a->cache : "");
    FILE *f = a->cache ? fopen(mpath, "rb") : NULL;
    if (f) {
        fclose(f);
        if (ns_embed_table_load(t, a->cache, &err) != NS_OK) return cli_report(&err);
    } else {
        ns_embed_table_init(t, ns_bert_dim(m));
    }
    ns_embed_opts o = {(int)a->batch, !a->quiet, a->chunks};
    double t0 = ns_now();
    clock_t c0 = clock();
    if (ns_embed_texts(m, t, n, texts, lens, &o, computed, &err) != NS_OK) return cli_report(&err);
    *seconds = ns_now() - t0;
    *cpu = (double)(clock() - c0) / CLOCKS_PER_SEC; /* all threads of the process */
    if (a->cache && *computed > 0 && ns_embed_table_save(t, a->cache, &err) != NS_OK) return cli_report(&err);
    return 0;
}

/* Writes the rows of texts, in order, to path as float32 [n, D]. */
static int write_rows(const char *path, const ns_embed_table *t, int64_t n, const char *const *texts,
                      const size_t *lens)
{
    ns_array a;
    int64_t shape[2] = {n, t->dim};
    ns_array_init(&a, NS_F32, 2, shape);
    for (int64_t i = 0; i < n; i++) {
        const float *r = ns_embed_get(t, texts[i], lens[i]);
        memcpy((float *)a.data + (size_t)i * t->dim, r, (size_t)t->dim * sizeof *r);
    }
    ns_error err;
    int rc = 0;
    if (ns_npy_write(path, &a, NULL, &err) != NS_OK) rc = cli_report(&err);
    ns_array_free(&a);
    return rc;
}

static void report(const embed_args *a, const ns_bert *m, const char *what, int64_t n, int64_t computed,
                   double seconds, double cpu, const ns_embed_table *t)
{
    const ns_bert_config *c = ns_bert_config_of(m);
    double rate = seconds > 0 ? computed / seconds : 0;
    if (a->json) {
        printf("{\"model\": ");
        ns_buf b;
        ns_buf_init(&b);
        ns_json_put_str(&b, c->name);
        printf("%s, \"texts\": %lld, \"computed\": %lld, \"cached\": %lld, \"seconds\": %.3f, \"texts_per_second\": %.3f, "
               "\"cpu_seconds\": %.3f, \"dim\": %d, \"max_seq_length\": %d, \"batch\": %ld, \"rows\": %lld}\n",
               b.data, (long long)n, (long long)computed, (long long)(n - computed), seconds, rate, cpu, c->hidden,
               c->max_seq_length, a->batch, (long long)t->n);
        ns_buf_free(&b);
    } else {
        printf("embed: %s: %lld texts, %lld computed, %lld from the cache or repeated; %.3f s (%.2f texts/s, "
               "%.3f CPU s); %s, dim %d, max_seq_length %d, batch %ld, %s\n",
               what, (long long)n, (long long)computed, (long long)(n - computed), seconds, rate, cpu, c->name, c->hidden,
               c->max_seq_length, a->batch, ns_blas_backend());
    }
}

/* `embed texts FILE`: one text a line, as a JSON string or {"text": ...}. */
static int embed_texts_file(const embed_args *a)
{
    if (a->npos != 2) return cli_usage("embed", "texts expects FILE");
    const char *file = a->pos[1];
    char *data;
    size_t len;
    ns_error err;
    if (ns_read_file(file, &data, &len, &err) != NS_OK) return cli_report(&err);
    char **texts = NULL;
    size_t *lens = NULL, cap = 0, lcap = 0;
    int64_t n = 0;
    int line = 0, rc = 0;
    for (char *p = data; p < data + len && !rc;) {
        char *e = memchr(p, '\n', (size_t)(data + len - p));
        if (!e) e = data + len;
        line++;
        if (e > p) {
            ns_json j;
            if (ns_json_parse(&j, p, (size_t)(e - p), file, &err) != NS_OK) {
                err.line = line;
                rc = cli_report(&err);
                break;
            }
            const ns_json *s = j.kind == NS_JSON_STRING ? &j : ns_json_get(&j, "text");
            if (!s || s->kind != NS_JSON_STRING) {
                fprintf(stderr, "nextstate: %s:%d: expected a JSON string or {\"text\": string}\n", file, line);
                rc = NS_ERR_INPUT;
            } else {
                NS_GROW(texts, cap, (size_t)n + 1);
                NS_GROW(lens, lcap, (size_t)n + 1);
                texts[n] = ns_xmalloc(s->string_len + 1);
                memcpy(texts[n], s->string, s->string_len + 1);
                lens[n++] = s->string_len;
            }
            ns_json_free(&j);
        }
        p = e + 1;
    }
    free(data);
    ns_bert *m = NULL;
    if (!rc) rc = load_model(a->model, &m);
    embed_args a2 = *a;
    if (!rc) decide_chunks(&a2, m, n, (const char *const *)texts, lens);
    ns_embed_table t = {0};
    int64_t computed = 0;
    double seconds = 0, cpu = 0;
    if (!rc) rc = run_embed(&a2, m, n, (const char *const *)texts, lens, &t, &computed, &seconds, &cpu);
    if (!rc && a->out) rc = write_rows(a->out, &t, n, (const char *const *)texts, lens);
    if (!rc) report(a, m, file, n, computed, seconds, cpu, &t);
    ns_embed_table_free(&t);
    ns_bert_free(m);
    for (int64_t i = 0; i < n; i++) free(texts[i]);
    free(texts);
    free(lens);
    return rc;
}

/* `embed tokenize TEXT…`: the model-input token ids, one line per text. */
static int embed_tokenize(const embed_args *a)
{
    ns_bert *m = NULL;
    int rc = load_model(a->model, &m);
    if (rc) return rc;
    const ns_bert_config *c = ns_bert_config_of(m);
    int32_t *ids = ns_xmalloc((size_t)c->max_seq_length * sizeof *ids);
    for (int i = 1; i < a->npos; i++) {
        int n = ns_bert_tokenize(m, a->pos[i], strlen(a->pos[i]), ids);
        for (int k = 0; k < n; k++)
            printf(a->json ? "%s%d" : "%s%d", k ? (a->json ? ", " : " ") : (a->json ? "[" : ""), ids[k]);
        if (!a->json) {
            printf("\n ");
            for (int k = 0; k < n; k++) printf(" %s", ns_wordpiece_token(ns_bert_wordpiece(m), ids[k]));
        }
        printf(a->json ? "]\n" : "\n");
    }
    free(ids);
    ns_bert_free(m);
    return 0;
}

/* `embed DATASET_DIR`: every state's prompt and every action's text. */
static int embed_dataset(const embed_args *a)
{
    if (a->npos != 1) return cli_usage("embed", "expects DATASET_DIR, 'texts FILE' or 'tokenize TEXT…'");
    const char *dir = a->pos[0];
    ns_dataset ds;
    ns_error err;
    if (ns_dataset_load(&ds, dir, &err) != NS_OK) return cli_report(&err);
    int rc = 0;
    ns_render_prep **preps = NULL;
    if (ns_feat_renders_new(&preps, &ds, a->domains, &err) != NS_OK) {
        ns_dataset_free(&ds);
        return cli_report(&err);
    }
    ns_text_list tl;
    ns_text_list_dataset(&tl, &ds, preps, a->layout);
    const int64_t n = tl.n, ns = tl.nstates, nt = tl.nactions;
    const char **texts = tl.texts;
    const size_t *lens = tl.lens;
    ns_bert *m = NULL;
    if (!rc) rc = load_model(a->model, &m);
    embed_args a2 = *a;
    if (!rc) decide_chunks(&a2, m, n, texts, lens);
    ns_buf cache;
    ns_buf_init(&cache);
    if (a->cache) ns_buf_puts(&cache, a->cache);
    else if (m)
        ns_buf_printf(&cache, "%s/embeddings/%s%s", dir, ns_bert_config_of(m)->name, a2.chunks ? "+chunks" : "");
    a2.cache = cache.data;
    ns_embed_table t = {0};
    int64_t computed = 0;
    double seconds = 0, cpu = 0;
    if (!rc) rc = run_embed(&a2, m, n, texts, lens, &t, &computed, &seconds, &cpu);
    if (!rc) {
        char what[1200];
        snprintf(what, sizeof what, "%s (%lld states, %lld actions) -> %s", dir, (long long)ns, (long long)nt,
                 cache.data);
        report(a, m, what, n, computed, seconds, cpu, &t);
    }
    /* row-aligned matrices for `nextstate train --state-features/--action-features` */
    if (!rc && a->states_out) rc = write_rows(a->states_out, &t, ns, texts, lens);
    if (!rc && a->actions_out) rc = write_rows(a->actions_out, &t, nt, texts + ns, lens + ns);
    ns_embed_table_free(&t);
    ns_bert_free(m);
    ns_buf_free(&cache);
    ns_text_list_free(&tl);
    ns_feat_renders_free(preps, ds.nproblems);
    ns_dataset_free(&ds);
    return rc;
}

/* `embed stats DATASET_DIR…`: how the model's truncation treats the state
 * prompts (ns_embed_prompt_stats). */
static int embed_stats(const embed_args *a)
{
    if (a->npos < 2) return cli_usage("embed", "stats expects DATASET_DIR…");
    ns_bert *m = NULL;
    int rc = load_model(a->model, &m);
    if (rc) return rc;
    const int L = ns_bert_config_of(m)->max_seq_length;
    if (!a->json)
        printf("%-28s %7s %6s %6s %6s %6s %7s %12s %8s %8s %8s %8s\n", ns_prompt_layout_name(a->layout), "prompts",
               "min", "median", "p90", "max", "> max", "state start", "state", "cut", "lost", "merged");
    for (int di = 1; di < a->npos && !rc; di++) {
        const char *dir = a->pos[di];
        ns_dataset ds;
        ns_error err;
        if (ns_dataset_load(&ds, dir, &err) != NS_OK) {
            rc = cli_report(&err);
            break;
        }
        ns_render_prep **preps = NULL;
        ns_prompt_stats q;
        if (ns_feat_renders_new(&preps, &ds, a->domains, &err) != NS_OK ||
            ns_embed_prompt_stats(m, &ds, preps, a->layout, &q, &err) != NS_OK) {
            rc = cli_report(&err);
        } else if (a->json) {
            ns_buf j;
            ns_buf_init(&j);
            ns_buf_puts(&j, "{\"dataset\": ");
            ns_json_put_str(&j, dir);
            ns_buf_puts(&j, ", \"domain\": ");
            ns_json_put_str(&j, ds.domain_name);
            ns_buf_printf(&j,
                          ", \"model\": \"%s\", \"layout\": \"%s\", \"max_seq_length\": %d, \"prompts\": %lld, "
                          "\"tokens\": {\"min\": %d, \"median\": %d, \"p90\": %d, \"max\": %d}, \"over_max\": %.6f, "
                          "\"state_start_median\": %d, \"state_tokens_median\": %d, \"state_cut\": %.6f, "
                          "\"state_lost\": %.6f, \"state_kept_mean\": %.6f, \"merged\": %.6f}",
                          ns_bert_config_of(m)->name, ns_prompt_layout_name(a->layout), L, (long long)q.prompts, q.min,
                          q.median, q.p90, q.max, q.over_max, q.state_start_median, q.state_tokens_median, q.state_cut,
                          q.state_lost, q.state_kept_mean, q.merged);
            printf("%s\n", j.data);
            ns_buf_free(&j);
        } else {
            printf("%-28s %7lld %6d %6d %6d %6d %6.1f%% %12d %8d %7.1f%% %7.1f%% %7.1f%%\n", ds.domain_name,
                   (long long)q.prompts, q.min, q.median, q.p90, q.max, 100.0 * q.over_max, q.state_start_median,
                   q.state_tokens_median, 100.0 * q.state_cut, 100.0 * q.state_lost, 100.0 * q.merged);
        }
        if (preps) ns_feat_renders_free(preps, ds.nproblems);
        ns_dataset_free(&ds);
    }
    if (!rc && !a->json)
        printf("tokens: word pieces per state prompt with CLS and SEP; > max: prompts beyond max_seq_length %d;\n"
               "state start / state: median position of the CURRENT STATE block's first piece and its length;\n"
               "cut: states whose block truncation shortens; lost: cut entirely; merged: states whose truncated\n"
               "model input equals another state's of the same problem (identical embeddings).\n",
               L);
    ns_bert_free(m);
    return rc;
}

int cmd_embed(int argc, char **argv)
{
    embed_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc;
    if (a.npos == 0) return cli_usage("embed", "expects DATASET_DIR, 'texts FILE' or 'tokenize TEXT…'");
    if (!strcmp(a.pos[0], "texts")) return embed_texts_file(&a);
    if (!strcmp(a.pos[0], "tokenize")) return embed_tokenize(&a);
    if (!strcmp(a.pos[0], "stats")) return embed_stats(&a);
    return embed_dataset(&a);
}
