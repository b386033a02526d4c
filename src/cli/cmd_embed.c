/* cmd_embed.c — `nextstate embed`: neural text embeddings of a dataset's rendered prompts and actions (or of a
 * list of texts), cached by text.  The work is the library's (embed.h: ns_embed_model_load, ns_text_list_*,
 * ns_embed_cached, ns_embed_write_rows, ns_embed_prompt_stats_dir); this file parses the options and prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "nextstate/encode/bert.h"
#include "nextstate/util/blas.h"
#include "nextstate/encode/embed.h"
#include "nextstate/util/json.h"

#define DEFAULT_MODEL "all-MiniLM-L6-v2"

typedef struct embed_args {
    const char *model, *cache, *out, *domains, *states_out, *actions_out, *texts_out, *import;
    long batch, shuffle, threads; /* shuffle: --shuffle-facts SEED, -1 for the canonical order */
    double save_every;            /* --save-every S: the cache saved while it grows (0: the library's 600 s) */
    bool quiet, json, chunks, truncate;
    ns_prompt_layout layout;
    const char *pos[64];
    int npos;
} embed_args;

/* A model given as a folder, or by name in $NEXTSTATE_MODELS or
 * ~/.cache/nextstate/models (ns_embed_model_dir), encoding on --threads
 * threads, else on OPENBLAS_NUM_THREADS (a CPU budget the caller already
 * set), else on every core. */
static int load_model(const char *name, long threads, ns_bert **m)
{
    ns_error err;
    if (ns_embed_model_load(m, name, &err) != NS_OK) return cli_report(&err);
    const char *e = getenv("OPENBLAS_NUM_THREADS");
    long n = threads > 0 ? threads : e && atol(e) > 0 ? atol(e) : sysconf(_SC_NPROCESSORS_ONLN);
    ns_bert_set_threads(*m, n > 0 && n <= 1024 ? (int)n : 1);
    return 0;
}

static int parse_args(int argc, char **argv, embed_args *a)
{
    memset(a, 0, sizeof *a);
    a->model = DEFAULT_MODEL;
    a->domains = NULL; /* ns_render_find's default */
    a->batch = 32, a->shuffle = -1;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        bool more = i + 1 < argc;
        if (!strcmp(s, "--model") && more) a->model = argv[++i];
        else if (!strcmp(s, "--cache") && more) a->cache = argv[++i];
        else if (!strcmp(s, "-o") && more) a->out = argv[++i];
        else if (!strcmp(s, "--domains") && more) a->domains = argv[++i];
        else if (!strcmp(s, "--states-out") && more) a->states_out = argv[++i];
        else if (!strcmp(s, "--actions-out") && more) a->actions_out = argv[++i];
        else if (!strcmp(s, "--texts-out") && more) a->texts_out = argv[++i];
        else if (!strcmp(s, "--import") && more) a->import = argv[++i];
        else if (!strcmp(s, "--layout") && more) {
            int l = ns_prompt_layout_parse(argv[++i]);
            if (l < 0) return cli_usage("embed", "--layout expects paper or state-first, given '%s'", argv[i]);
            a->layout = (ns_prompt_layout)l;
        } else if (!strcmp(s, "--shuffle-facts") && more) {
            if (!cli_parse_range("embed", "--shuffle-facts", argv[++i], 0, LONG_MAX, &a->shuffle)) return NS_ERR_USAGE;
        } else if (!strcmp(s, "--save-every") && more) {
            if (!cli_parse_min("embed", "--save-every", argv[++i], 0, false, INFINITY, &a->save_every)) return NS_ERR_USAGE;
        } else if (!strcmp(s, "--threads") && more) {
            if (!cli_parse_range("embed", "--threads", argv[++i], 1, 1024, &a->threads)) return NS_ERR_USAGE;
        } else if (!strcmp(s, "--batch") && more) {
            if (!cli_parse_range("embed", "--batch", argv[++i], 1, 4096, &a->batch)) return NS_ERR_USAGE;
        } else if (!strcmp(s, "--quiet")) a->quiet = true;
        else if (!strcmp(s, "--chunks")) a->chunks = true;
        else if (!strcmp(s, "--truncate")) a->truncate = true;
        else if (!strcmp(s, "--json")) a->json = true;
        else if (s[0] == '-' && s[1]) return cli_usage("embed", "unknown option '%s'", s);
        else if (a->npos < 64) a->pos[a->npos++] = s;
        else return cli_usage("embed", "too many arguments");
    }
    if (a->chunks && a->truncate) return cli_usage("embed", "--chunks and --truncate exclude each other");
    if (a->import && a->cache) return cli_usage("embed", "--import DIR is read only; --cache DIR is computed into");
    if (a->texts_out && (a->import || a->cache || a->out || a->states_out || a->actions_out))
        return cli_usage("embed", "--texts-out lists the texts and embeds none: not with --import, --cache, -o, "
                                  "--states-out or --actions-out");
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

static void report(const embed_args *a, const ns_bert *m, const char *what, int64_t n, const ns_embed_run *r,
                   const ns_embed_table *t)
{
    const ns_bert_config *c = ns_bert_config_of(m);
    const int64_t computed = r->computed;
    const double seconds = r->seconds, cpu = r->cpu, rate = seconds > 0 ? computed / seconds : 0;
    if (a->json) {
        printf("{\"model\": ");
        ns_buf b;
        ns_buf_init(&b);
        ns_json_put_str(&b, c->name);
        printf("%s, \"texts\": %lld, \"computed\": %lld, \"cached\": %lld, \"seconds\": %.3f, \"texts_per_second\": %.3f, "
               "\"cpu_seconds\": %.3f, \"dim\": %d, \"max_seq_length\": %d, \"batch\": %ld, \"threads\": %d, \"rows\": %lld}\n",
               b.data, (long long)n, (long long)computed, (long long)(n - computed), seconds, rate, cpu, c->hidden,
               c->max_seq_length, a->batch, ns_bert_threads(m), (long long)t->n);
        ns_buf_free(&b);
    } else {
        printf("embed: %s: %lld texts, %lld computed, %lld from the cache or repeated; %.3f s (%.2f texts/s, "
               "%.3f CPU s); %s, dim %d, max_seq_length %d, batch %ld, %s on %d thread%s\n",
               what, (long long)n, (long long)computed, (long long)(n - computed), seconds, rate, cpu, c->name, c->hidden,
               c->max_seq_length, a->batch, ns_bert_backend(m), ns_bert_threads(m), ns_bert_threads(m) > 1 ? "s" : "");
    }
}

/* The rows of tl's texts from t: of a texts FILE (dataset NULL) to -o, of a
 * dataset to --states-out and --actions-out. */
static int write_outputs(const embed_args *a, const ns_embed_table *t, const ns_text_list *tl, bool dataset)
{
    ns_error err;
    const int64_t ns = tl->nstates, nt = tl->nactions;
    if (!dataset && a->out && ns_embed_write_rows(a->out, t, tl->n, tl->texts, tl->lens, &err) != NS_OK)
        return cli_report(&err);
    if (dataset && a->states_out && ns_embed_write_rows(a->states_out, t, ns, tl->texts, tl->lens, &err) != NS_OK)
        return cli_report(&err);
    if (dataset && a->actions_out &&
        ns_embed_write_rows(a->actions_out, t, nt, tl->texts + ns, tl->lens + ns, &err) != NS_OK)
        return cli_report(&err);
    return 0;
}

/* --texts-out: the texts as an import's index.jsonl, no model; --import: the
 * rows looked up in a table made elsewhere, no model, every text required. */
static int without_model(const embed_args *a, const ns_text_list *tl, const char *what, bool dataset)
{
    ns_error err;
    if (a->texts_out) {
        if (ns_embed_write_texts(a->texts_out, tl->n, tl->texts, tl->lens, &err) != NS_OK) return cli_report(&err);
        if (!a->quiet)
            printf("embed: %s: %lld texts (%lld states, then %lld actions) -> %s\n", what, (long long)tl->n,
                   (long long)tl->nstates, (long long)tl->nactions, a->texts_out);
        return 0;
    }
    ns_embed_table t = {0};
    if (ns_embed_table_load(&t, a->import, &err) != NS_OK) return cli_report(&err);
    int rc = ns_embed_require(&t, a->import, tl->n, tl->texts, tl->lens, &err) != NS_OK ? cli_report(&err)
                                                                                        : write_outputs(a, &t, tl, dataset);
    if (!rc && !a->quiet)
        printf("embed: %s: %lld texts looked up in %s (%lld rows, dim %d)\n", what, (long long)tl->n, a->import,
               (long long)t.n, t.dim);
    ns_embed_table_free(&t);
    return rc;
}

/* Embeds the texts of tl (through the cache), reports, and writes the rows
 * (write_outputs); the cache of a dataset by default in DATASET/embeddings/MODEL. */
static int embed_list(const embed_args *a, const ns_text_list *tl, const char *file, const char *dataset)
{
    char what[1200];
    if (dataset) snprintf(what, sizeof what, "%s (%lld states, %lld actions)", dataset, (long long)tl->nstates,
                          (long long)tl->nactions);
    else snprintf(what, sizeof what, "%s", file);
    if (a->texts_out || a->import) return without_model(a, tl, what, dataset != NULL);
    const char *const *texts = tl->texts;
    const size_t *lens = tl->lens;
    ns_bert *m = NULL;
    int rc = load_model(a->model, a->threads, &m);
    embed_args a2 = *a;
    if (!rc) decide_chunks(&a2, m, tl->n, texts, lens);
    ns_buf cache;
    ns_buf_init(&cache);
    if (a->cache) ns_buf_puts(&cache, a->cache);
    else if (m && dataset)
        ns_buf_printf(&cache, "%s/embeddings/%s%s", dataset, ns_bert_config_of(m)->name, a2.chunks ? "+chunks" : "");
    if (dataset) a2.cache = cache.data;
    ns_embed_table t = {0};
    ns_embed_run run = {0};
    ns_embed_opts o = {.batch = (int)a->batch, .progress = !a->quiet, .chunks = a2.chunks, .save_dir = a2.cache,
                       .save_seconds = a->save_every};
    ns_error err;
    if (!rc && ns_embed_cached(m, a2.cache, tl->n, texts, lens, &o, &t, &run, &err) != NS_OK)
        rc = cli_report(&err);
    if (!rc) {
        if (dataset) {
            size_t k = strlen(what);
            snprintf(what + k, sizeof what - k, " -> %s", cache.data);
        }
        report(a, m, what, tl->n, &run, &t);
        rc = write_outputs(a, &t, tl, dataset != NULL);
    }
    ns_embed_table_free(&t);
    ns_bert_free(m);
    ns_buf_free(&cache);
    return rc;
}

/* `embed texts FILE`: one text a line, as a JSON string or {"text": ...};
 * `embed DATASET_DIR`: every state's prompt and every action's text. */
static int embed_texts(const embed_args *a, bool file)
{
    if (file && a->npos != 2) return cli_usage("embed", "texts expects FILE");
    if (!file && a->npos != 1) return cli_usage("embed", "expects DATASET_DIR, 'texts FILE' or 'tokenize TEXT…'");
    ns_text_list tl;
    ns_error err;
    const uint64_t seed = (uint64_t)a->shuffle, *shuffle = a->shuffle >= 0 ? &seed : NULL;
    if ((file ? ns_text_list_jsonl(&tl, a->pos[1], &err)
              : ns_text_list_dir(&tl, a->pos[0], a->domains, a->layout, shuffle, &err)) != NS_OK)
        return cli_report(&err);
    int rc = embed_list(a, &tl, a->pos[file ? 1 : 0], file ? NULL : a->pos[0]);
    ns_text_list_free(&tl);
    return rc;
}

int cmd_embed(int argc, char **argv)
{
    embed_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc;
    if (a.npos == 0) return cli_usage("embed", "expects DATASET_DIR, 'texts FILE' or 'tokenize TEXT…'");
    bool sub = !strcmp(a.pos[0], "texts") || !strcmp(a.pos[0], "tokenize") || !strcmp(a.pos[0], "stats");
    if (sub && a.shuffle >= 0) return cli_usage("embed", "--shuffle-facts applies to DATASET_DIR, not to '%s'", a.pos[0]);
    if (!strcmp(a.pos[0], "texts")) return embed_texts(&a, true);
    if (!strcmp(a.pos[0], "tokenize")) return cli_embed_tokenize(a.model, a.json, a.npos - 1, a.pos + 1);
    if (!strcmp(a.pos[0], "stats"))
        return cli_embed_stats(a.model, a.domains, a.layout, a.json, a.npos - 1, a.pos + 1);
    return embed_texts(&a, false);
}
