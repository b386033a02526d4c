/* embed.c — embedding tables: cache, import format, batch embedding (see embed.h). */
#include "nextstate/encode/embed.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "nextstate/encode/featurize.h"
#include "nextstate/util/json.h"
#include "nextstate/util/npy.h"

uint64_t ns_embed_key(const char *text, size_t len) { return ns_hash_bytes(text, len, NS_EMBED_KEY_SEED); }

void ns_embed_table_init(ns_embed_table *t, int dim)
{
    memset(t, 0, sizeof *t);
    t->dim = dim;
}

void ns_embed_table_free(ns_embed_table *t)
{
    free(t->rows);
    free(t->keys);
    free(t->slot);
    free(t->slot_key);
    memset(t, 0, sizeof *t);
}

int64_t ns_embed_find_key(const ns_embed_table *t, uint64_t key)
{
    if (!t->slot) return -1;
    for (size_t h = (size_t)ns_hash_mix(key) & t->mask;; h = (h + 1) & t->mask) {
        if (t->slot[h] < 0) return -1;
        if (t->slot_key[h] == key) return t->slot[h];
    }
}

const float *ns_embed_get(const ns_embed_table *t, const char *text, size_t len)
{
    int64_t r = ns_embed_find_key(t, ns_embed_key(text, len));
    return r < 0 ? NULL : t->rows + (size_t)r * t->dim;
}

/* Inserts key → row into the hash (no-op when the key is present). */
static void hash_insert(ns_embed_table *t, uint64_t key, int64_t row)
{
    size_t entries = t->nkeys;
    if (!t->slot || 2 * (entries + 1) > t->mask + 1) { /* grow to keep the load ≤ 1/2 */
        size_t cap = t->slot ? 2 * (t->mask + 1) : 64;
        while (cap < 4 * (entries + 1)) cap *= 2;
        int64_t *os = t->slot;
        uint64_t *ok = t->slot_key;
        size_t omask = t->mask;
        t->slot = ns_xmalloc(cap * sizeof *t->slot);
        t->slot_key = ns_xmalloc(cap * sizeof *t->slot_key);
        for (size_t i = 0; i < cap; i++) t->slot[i] = -1;
        t->mask = cap - 1;
        for (size_t i = 0; os && i <= omask; i++)
            if (os[i] >= 0) {
                size_t h = (size_t)ns_hash_mix(ok[i]) & t->mask;
                while (t->slot[h] >= 0) h = (h + 1) & t->mask;
                t->slot[h] = os[i];
                t->slot_key[h] = ok[i];
            }
        free(os);
        free(ok);
    }
    size_t h = (size_t)ns_hash_mix(key) & t->mask;
    while (t->slot[h] >= 0) {
        if (t->slot_key[h] == key) return;
        h = (h + 1) & t->mask;
    }
    t->slot[h] = row;
    t->slot_key[h] = key;
    t->nkeys++;
}

static void reserve_rows(ns_embed_table *t, int64_t need)
{
    if (need <= t->cap) return;
    int64_t cap = t->cap ? t->cap : 64;
    while (cap < need) cap *= 2;
    t->rows = ns_xrealloc(t->rows, (size_t)cap * t->dim * sizeof *t->rows);
    t->keys = ns_xrealloc(t->keys, (size_t)cap * sizeof *t->keys);
    t->cap = cap;
}

int64_t ns_embed_put(ns_embed_table *t, uint64_t key, const float *vec)
{
    int64_t r = ns_embed_find_key(t, key);
    if (r < 0) {
        reserve_rows(t, t->n + 1);
        r = t->n++;
        t->keys[r] = key;
        hash_insert(t, key, r);
    }
    memcpy(t->rows + (size_t)r * t->dim, vec, (size_t)t->dim * sizeof *vec);
    return r;
}

/* ---------------------------------------------------------------- files */

static bool exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

static ns_status load_index_jsonl(ns_embed_table *t, const char *path, ns_error *err)
{
    char *text;
    size_t len;
    ns_status rc = ns_read_file(path, &text, &len, err);
    if (rc != NS_OK) return rc;
    int line = 0;
    for (char *p = text; p < text + len;) {
        char *e = memchr(p, '\n', (size_t)(text + len - p));
        if (!e) e = text + len;
        line++;
        size_t n = (size_t)(e - p);
        if (n && p[n - 1] == '\r') n--;
        if (n == 0) {
            rc = ns_error_set(err, NS_ERR_INPUT, path, line, 1, "empty line (each line is one text)");
            break;
        }
        ns_json j;
        if ((rc = ns_json_parse(&j, p, n, path, err)) != NS_OK) {
            if (err) err->line += line - 1;
            break;
        }
        const char *s = NULL;
        size_t slen = 0;
        int64_t row = line - 1;
        if (j.kind == NS_JSON_STRING) {
            s = j.string;
            slen = j.string_len;
        } else if (j.kind == NS_JSON_OBJECT) {
            const ns_json *tx = ns_json_get(&j, "text");
            if (tx && tx->kind == NS_JSON_STRING) {
                s = tx->string;
                slen = tx->string_len;
            }
            const ns_json *r = ns_json_get(&j, "row");
            if (r && !(r->kind == NS_JSON_NUMBER && r->is_integer)) s = NULL;
            else if (r) row = r->integer;
        }
        if (!s) {
            ns_json_free(&j);
            rc = ns_error_set(err, NS_ERR_INPUT, path, line, 1,
                              "expected a JSON string or {\"text\": string, \"row\": integer}");
            break;
        }
        if (row < 0 || row >= t->n) {
            ns_json_free(&j);
            rc = ns_error_set(err, NS_ERR_INPUT, path, line, 1, "row %" PRId64 " outside 0..%" PRId64
                              " (embeddings.npy has %" PRId64 " rows)", row, t->n - 1, t->n);
            break;
        }
        uint64_t key = ns_embed_key(s, slen);
        if (ns_embed_find_key(t, key) < 0) {
            hash_insert(t, key, row);
            t->keys[row] = key;
        }
        ns_json_free(&j);
        p = e + 1;
    }
    free(text);
    return rc;
}

ns_status ns_embed_table_load(ns_embed_table *t, const char *dir, ns_error *err)
{
    memset(t, 0, sizeof *t);
    char path[1024], ipath[1024], kpath[1024], mpath[1024];
    snprintf(path, sizeof path, "%s/embeddings.npy", dir);
    snprintf(ipath, sizeof ipath, "%s/index.jsonl", dir);
    snprintf(kpath, sizeof kpath, "%s/keys.npy", dir);
    snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
    ns_array e = {0}, k = {0};
    ns_json man = {0};
    uint32_t ecrc = 0, kcrc = 0;
    ns_status rc = ns_npy_read(path, &e, &ecrc, err);
    if (rc != NS_OK) return rc;
    if (e.dtype != NS_F32 || e.ndim != 2 || e.shape[1] <= 0) {
        ns_array_free(&e);
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "expected a float32 array [N, D]");
    }
    t->dim = (int)e.shape[1];
    t->n = t->cap = e.shape[0];
    t->rows = e.data; /* take ownership */
    e.data = NULL;
    t->keys = ns_xcalloc((size_t)t->n + 1, sizeof *t->keys);
    bool have_index = exists(ipath);
    if (have_index) {
        if ((rc = load_index_jsonl(t, ipath, err)) != NS_OK) goto fail;
    } else if (exists(kpath)) {
        if ((rc = ns_npy_read(kpath, &k, &kcrc, err)) != NS_OK) goto fail;
        if (k.dtype != NS_U64 || k.ndim != 1 || k.shape[0] != t->n) {
            rc = ns_error_set(err, NS_ERR_INPUT, kpath, 0, 0,
                              "expected uint64 [%" PRId64 "] (one key per row of embeddings.npy)", t->n);
            goto fail;
        }
        const uint64_t *keys = k.data;
        for (int64_t i = 0; i < t->n; i++) {
            t->keys[i] = keys[i];
            if (ns_embed_find_key(t, keys[i]) < 0) hash_insert(t, keys[i], i);
        }
    } else {
        rc = ns_error_set(err, NS_ERR_INPUT, dir, 0, 0, "no index: expected index.jsonl (text → row) or keys.npy");
        goto fail;
    }
    if (exists(mpath)) {
        if ((rc = ns_json_read(&man, mpath, err)) != NS_OK) goto fail;
        const char *s;
        int64_t v;
        if (ns_json_get_str(&man, "format", &s) && strcmp(s, NS_EMBED_FORMAT) != 0) {
            rc = ns_error_set(err, NS_ERR_INPUT, mpath, 0, 0, "format \"%s\" is not %s", s, NS_EMBED_FORMAT);
            goto fail;
        }
        if ((ns_json_get_int(&man, "count", &v) && v != t->n) || (ns_json_get_int(&man, "dim", &v) && v != t->dim)) {
            rc = ns_error_set(err, NS_ERR_INPUT, mpath, 0, 0,
                              "count/dim disagree with embeddings.npy [%" PRId64 ", %d] (torn write? delete the folder)",
                              t->n, t->dim);
            goto fail;
        }
        const ns_json *crc = ns_json_get(&man, "crc32");
        if (crc && (((ns_json_get_int(crc, "embeddings.npy", &v) && (uint32_t)v != ecrc)) ||
                    (!have_index && ns_json_get_int(crc, "keys.npy", &v) && (uint32_t)v != kcrc))) {
            rc = ns_error_set(err, NS_ERR_INPUT, mpath, 0, 0,
                              "checksum mismatch with the array files (torn write? delete the folder)");
            goto fail;
        }
        if (ns_json_get_str(&man, "model", &s)) snprintf(t->model, sizeof t->model, "%s", s);
        if (ns_json_get_str(&man, "fingerprint", &s)) t->fingerprint = strtoull(s, NULL, 16);
        const ns_json *nz = ns_json_get(&man, "normalized");
        t->normalized = nz && nz->kind == NS_JSON_BOOL && nz->boolean;
    }
    ns_array_free(&k);
    ns_json_free(&man);
    return NS_OK;
fail:
    ns_array_free(&k);
    ns_json_free(&man);
    ns_embed_table_free(t);
    return rc;
}

/* Writes the three files of a cache into dir (an existing folder). */
static ns_status save_files(const ns_embed_table *t, const char *dir, ns_error *err)
{
    char path[1024];
    ns_array e = {0}, k = {0};
    uint32_t ecrc, kcrc;
    e.dtype = NS_F32;
    e.ndim = 2;
    e.shape[0] = t->n;
    e.shape[1] = t->dim;
    e.data = t->rows; /* borrowed: not freed here */
    k.dtype = NS_U64;
    k.ndim = 1;
    k.shape[0] = t->n;
    k.data = t->keys;
    if (!e.data) e.data = (void *)"";
    if (!k.data) k.data = (void *)"";
    snprintf(path, sizeof path, "%s/embeddings.npy", dir);
    ns_status rc = ns_npy_write(path, &e, &ecrc, err);
    if (rc != NS_OK) return rc;
    snprintf(path, sizeof path, "%s/keys.npy", dir);
    if ((rc = ns_npy_write(path, &k, &kcrc, err)) != NS_OK) return rc;
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_printf(&b, "{\"format\": \"%s\", \"version\": %d, \"model\": ", NS_EMBED_FORMAT, NS_EMBED_VERSION);
    ns_json_put_str(&b, t->model);
    ns_buf_printf(&b, ", \"fingerprint\": \"%016" PRIx64 "\", \"dim\": %d, \"count\": %" PRId64
                      ", \"normalized\": %s,\n \"crc32\": {\"embeddings.npy\": %u, \"keys.npy\": %u},\n"
                      " \"key\": \"ns_hash_bytes(utf8, len, seed 0x%llx)\"}\n",
                  t->fingerprint, t->dim, t->n, t->normalized ? "true" : "false", ecrc, kcrc,
                  (unsigned long long)NS_EMBED_KEY_SEED);
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    rc = ns_write_file_atomic(path, b.data, b.len, err);
    ns_buf_free(&b);
    return rc;
}

ns_status ns_embed_table_save(const ns_embed_table *t, const char *dir, ns_error *err)
{
    char *tmp;
    ns_status rc = ns_dir_stage(dir, &tmp, err);
    if (rc != NS_OK) return rc;
    if ((rc = save_files(t, tmp, err)) != NS_OK) {
        ns_dir_discard(tmp);
        return rc;
    }
    return ns_dir_commit(dir, tmp, err);
}

/* ---------------------------------------------------------------- embedding */

ns_status ns_embed_texts(const ns_bert *m, ns_embed_table *t, int64_t n, const char *const *texts,
                         const size_t *lens, const ns_embed_opts *o, int64_t *computed, ns_error *err)
{
    const ns_bert_config *c = ns_bert_config_of(m);
    const bool chunks = o && o->chunks;
    const uint64_t fp = ns_bert_fingerprint(m) ^ (chunks ? NS_EMBED_CHUNKS_SALT : 0);
    char name[160];
    snprintf(name, sizeof name, "%s%s", c->name, chunks ? "+chunks" : "");
    if (computed) *computed = 0;
    if (t->n == 0 && t->fingerprint == 0) {
        t->dim = c->hidden;
        snprintf(t->model, sizeof t->model, "%.*s", (int)sizeof t->model - 1, name);
        t->fingerprint = fp;
        t->normalized = c->normalize;
    }
    if (t->dim != c->hidden || (t->fingerprint && t->fingerprint != fp))
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                            "the embedding cache was made by another model (%s, %d dims, fingerprint %016" PRIx64
                            "), not %s (%d dims, %016" PRIx64 "): use another cache folder",
                            t->model[0] ? t->model : "unknown", t->dim, t->fingerprint, name, c->hidden, fp);
    /* the distinct missing texts */
    ns_status st = NS_OK;
    const char **todo = ns_xmalloc((size_t)(n + 1) * sizeof *todo);
    size_t *todo_len = ns_xmalloc((size_t)(n + 1) * sizeof *todo_len);
    uint64_t *todo_key = ns_xmalloc((size_t)(n + 1) * sizeof *todo_key);
    ns_embed_table seen;
    ns_embed_table_init(&seen, 0);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        size_t len = lens ? lens[i] : strlen(texts[i]);
        uint64_t key = ns_embed_key(texts[i], len);
        if (ns_embed_find_key(t, key) >= 0 || ns_embed_find_key(&seen, key) >= 0) continue;
        hash_insert(&seen, key, k);
        todo[k] = texts[i];
        todo_len[k] = len;
        todo_key[k] = key;
        k++;
    }
    ns_embed_table_free(&seen);
    if (k > 0 && t->n > 0 && t->fingerprint == 0) {
        free(todo);
        free(todo_len);
        free(todo_key);
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                            "%lld texts are missing from an imported embedding table of unknown model; "
                            "refusing to mix in embeddings of %s",
                            (long long)k, c->name);
    }
    if (k > 0) {
        int batch = o && o->batch > 0 ? o->batch : 32;
        /* texts per encoder call: four batches per thread (the threads share a call's batches) */
        int64_t group = (int64_t)batch * 4 * ns_bert_threads(m);
        float *out = ns_xmalloc((size_t)(group < k ? group : k) * c->hidden * sizeof *out);
        ns_progress prog;
        ns_progress_init(&prog, o && o->progress, "embed");
        reserve_rows(t, t->n + k);
        const double every = o && o->save_seconds > 0 ? o->save_seconds : 600;
        double saved = ns_now();
        for (int64_t s = 0; s < k && st == NS_OK; s += group) {
            int b = (int)(k - s < group ? k - s : group);
            if (chunks) ns_bert_encode_chunks(m, b, todo + s, todo_len + s, batch, NULL, out);
            else ns_bert_encode(m, b, todo + s, todo_len + s, batch, NULL, out);
            for (int i = 0; i < b; i++) ns_embed_put(t, todo_key[s + i], out + (size_t)i * c->hidden);
            ns_progress_update(&prog, (long)(s + b), (long)k, "texts");
            if (o && o->save_dir && s + b < k && ns_now() - saved >= every) { /* the last save is the caller's */
                st = ns_embed_table_save(t, o->save_dir, err);
                saved = ns_now();
            }
        }
        ns_progress_done(&prog);
        free(out);
    }
    if (computed && st == NS_OK) *computed = k;
    free(todo);
    free(todo_len);
    free(todo_key);
    return st;
}

int64_t ns_embed_count_over_window(const ns_bert *m, int64_t n, const char *const *texts, const size_t *lens)
{
    const ns_wordpiece *wp = ns_bert_wordpiece(m);
    const size_t K = (size_t)ns_bert_config_of(m)->max_seq_length - 2;
    int32_t *ids = NULL;
    size_t nids = 0, cap = 0;
    int64_t over = 0;
    for (int64_t i = 0; i < n; i++) {
        nids = 0;
        size_t len = lens ? lens[i] : strlen(texts[i]);
        over += ns_wordpiece_tokenize(wp, texts[i], len, K + 1, &ids, &nids, &cap) > K;
    }
    free(ids);
    return over;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The value at fraction q of the sorted copy of x[0 … n). */
static int quantile(const int *x, int64_t n, int64_t num, int64_t den)
{
    if (n == 0) return 0;
    int *c = ns_xmalloc((size_t)n * sizeof *c);
    memcpy(c, x, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, ns_cmp_int);
    int v = c[num == den ? n - 1 : (n * num) / den];
    free(c);
    return v;
}

ns_status ns_embed_prompt_stats(const ns_bert *m, const ns_dataset *ds, ns_render_prep *const *preps,
                                ns_prompt_layout layout, ns_prompt_stats *out, ns_error *err)
{
    memset(out, 0, sizeof *out);
    const ns_wordpiece *wp = ns_bert_wordpiece(m);
    const int L = ns_bert_config_of(m)->max_seq_length, K = L - 2; /* content tokens kept */
    out->max_seq_length = L;
    int32_t *ids = NULL, *enc = ns_xmalloc((size_t)L * sizeof *enc);
    size_t n = 0, cap = 0;
    int64_t N = ns_dataset_nstates(ds);
    int *total = ns_xmalloc((size_t)(N + 1) * sizeof *total), *start = ns_xmalloc((size_t)(N + 1) * sizeof *start),
        *stok = ns_xmalloc((size_t)(N + 1) * sizeof *stok);
    uint64_t *h = ns_xmalloc((size_t)(N + 1) * sizeof *h);
    int64_t over = 0, cut = 0, lost = 0, merged = 0;
    double kept = 0;
    ns_status st = NS_OK;
    ns_buf b;
    ns_buf_init(&b);
    const int32_t *sprob = ds->state_problem.data;
    for (int p = 0; p < ds->nproblems && !st; p++) {
        const ns_ds_problem *pr = &ds->problems[p];
        if (pr->nstates == 0) continue;
        /* the problem's fixed head "… ### CURRENT STATE ###\n" and tail "\n\n### GOAL …" */
        b.len = 0;
        ns_render_prep_prompt_layout_bits(preps[p], ns_dataset_state(ds, pr->state_offset), layout, &b);
        const char *sb = strstr(b.data, "### CURRENT STATE ###\n");
        const char *gl = sb ? strstr(sb, "\n\n###") : NULL; /* the next block's header ends the state */
        if (!sb || !gl) {
            st = ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                              "%s: a prompt without a CURRENT STATE block and a block after it", ds->domain_name);
            break;
        }
        size_t head_len = (size_t)(sb - b.data) + strlen("### CURRENT STATE ###\n"),
               tail_len = b.len - (size_t)(gl - b.data);
        n = 0;
        int head = (int)ns_wordpiece_tokenize(wp, b.data, head_len, 0, &ids, &n, &cap);
        n = 0;
        int tail = (int)ns_wordpiece_tokenize(wp, gl, tail_len, 0, &ids, &n, &cap);
        for (int64_t s = pr->state_offset; s < pr->state_offset + pr->nstates; s++) {
            if (sprob[s] != p) continue;
            b.len = 0;
            ns_render_prep_prompt_layout_bits(preps[p], ns_dataset_state(ds, s), layout, &b);
            n = 0;
            int t = (int)ns_wordpiece_tokenize(wp, b.data, b.len, 0, &ids, &n, &cap);
            total[s] = t + 2;
            start[s] = head + 1; /* 0-based position of the state's first piece after CLS */
            stok[s] = t - head - tail;
            int keep = K - head < 0 ? 0 : K - head > stok[s] ? stok[s] : K - head;
            over += total[s] > L;
            cut += keep < stok[s];
            lost += stok[s] > 0 && keep == 0;
            kept += stok[s] > 0 ? (double)keep / stok[s] : 1.0;
            int len = ns_wordpiece_encode(wp, b.data, b.len, L, enc);
            h[s - pr->state_offset] = ns_hash_bytes(enc, (size_t)len * sizeof *enc, 0x737461747365ULL);
        }
        /* states of this problem whose truncated input another state shares */
        qsort(h, (size_t)pr->nstates, sizeof *h, cmp_u64);
        for (int64_t i = 0; i < pr->nstates; i++)
            merged += (i > 0 && h[i] == h[i - 1]) || (i + 1 < pr->nstates && h[i] == h[i + 1]);
    }
    if (!st) {
        double fN = N ? (double)N : 1;
        out->prompts = N;
        out->min = quantile(total, N, 0, 1);
        out->median = quantile(total, N, 1, 2);
        out->p90 = quantile(total, N, 9, 10);
        out->max = quantile(total, N, 1, 1);
        out->state_start_median = quantile(start, N, 1, 2);
        out->state_tokens_median = quantile(stok, N, 1, 2);
        out->over_max = over / fN;
        out->state_cut = cut / fN;
        out->state_lost = lost / fN;
        out->state_kept_mean = kept / fN;
        out->merged = merged / fN;
    }
    ns_buf_free(&b);
    free(total);
    free(start);
    free(stok);
    free(h);
    free(ids);
    free(enc);
    return st;
}

uint64_t ns_text_shuffle_seed(uint64_t seed, int64_t state) { return ns_hash_mix(seed ^ ns_hash_mix((uint64_t)state + 1)); }

void ns_text_list_dataset(ns_text_list *l, const ns_dataset *ds, ns_render_prep *const *preps, ns_prompt_layout layout)
{
    ns_text_list_dataset_order(l, ds, preps, layout, NULL);
}

void ns_text_list_dataset_order(ns_text_list *l, const ns_dataset *ds, ns_render_prep *const *preps,
                                ns_prompt_layout layout, const uint64_t *shuffle_seed)
{
    memset(l, 0, sizeof *l);
    ns_buf_init(&l->all);
    l->nstates = ns_dataset_nstates(ds);
    for (int i = 0; i < ds->nproblems; i++) l->nactions += ds->problems[i].nops;
    l->n = l->nstates + l->nactions;
    size_t *off = ns_xmalloc((size_t)(l->n + 1) * sizeof *off);
    l->lens = ns_xmalloc((size_t)(l->n + 1) * sizeof *l->lens);
    int64_t n = 0;
    for (int64_t s = 0; s < l->nstates; s++, n++) {
        off[n] = l->all.len;
        const ns_render_prep *pp = preps[((const int32_t *)ds->state_problem.data)[s]];
        if (shuffle_seed)
            ns_render_prep_prompt_shuffled_bits(pp, ns_dataset_state(ds, s), layout,
                                                ns_text_shuffle_seed(*shuffle_seed, s), &l->all);
        else ns_render_prep_prompt_layout_bits(pp, ns_dataset_state(ds, s), layout, &l->all);
        l->lens[n] = l->all.len - off[n];
    }
    for (int i = 0; i < ds->nproblems; i++)
        for (int op = 0; op < ds->problems[i].nops; op++, n++) {
            off[n] = l->all.len;
            ns_buf_puts(&l->all, ds->problems[i].ops[op]);
            l->lens[n] = l->all.len - off[n];
        }
    l->texts = ns_xmalloc((size_t)(l->n + 1) * sizeof *l->texts);
    for (int64_t i = 0; i < l->n; i++) l->texts[i] = l->all.data + off[i];
    free(off);
}

void ns_text_list_free(ns_text_list *l)
{
    free(l->texts);
    free(l->lens);
    ns_buf_free(&l->all);
    memset(l, 0, sizeof *l);
}

ns_status ns_text_list_jsonl(ns_text_list *l, const char *file, ns_error *err)
{
    memset(l, 0, sizeof *l);
    ns_buf_init(&l->all);
    char *data;
    size_t len;
    ns_status st = ns_read_file(file, &data, &len, err);
    if (st != NS_OK) return st;
    size_t *starts = NULL, cap = 0, lcap = 0;
    int line = 0;
    for (char *p = data; p < data + len && !st;) {
        char *e = memchr(p, '\n', (size_t)(data + len - p));
        if (!e) e = data + len;
        line++;
        if (e > p) {
            ns_json j;
            if ((st = ns_json_parse(&j, p, (size_t)(e - p), file, err)) != NS_OK) {
                if (err) err->line = line;
                break;
            }
            const ns_json *s = j.kind == NS_JSON_STRING ? &j : ns_json_get(&j, "text");
            if (!s || s->kind != NS_JSON_STRING) {
                st = ns_error_set(err, NS_ERR_INPUT, file, line, 0, "expected a JSON string or {\"text\": string}");
            } else {
                NS_GROW(starts, cap, (size_t)l->n + 1);
                NS_GROW(l->lens, lcap, (size_t)l->n + 1);
                starts[l->n] = l->all.len;
                l->lens[l->n++] = s->string_len;
                ns_buf_put(&l->all, s->string, s->string_len);
                ns_buf_putc(&l->all, '\0');
            }
            ns_json_free(&j);
        }
        p = e + 1;
    }
    free(data);
    l->texts = ns_xcalloc((size_t)l->n + 1, sizeof *l->texts);
    for (int64_t i = 0; i < l->n; i++) l->texts[i] = l->all.data + starts[i];
    free(starts);
    l->nstates = l->n;
    if (st != NS_OK) ns_text_list_free(l);
    return st;
}

bool ns_embed_model_dir(const char *name, ns_buf *path)
{
    struct stat st;
    if (strchr(name, '/') || (stat(name, &st) == 0 && S_ISDIR(st.st_mode))) {
        ns_buf_puts(path, name);
    } else {
        const char *env = getenv("NEXTSTATE_MODELS"), *home = getenv("HOME");
        if (env && *env) ns_buf_printf(path, "%s/%s", env, name);
        else ns_buf_printf(path, "%s/.cache/nextstate/models/%s", home ? home : ".", name);
    }
    return stat(path->data, &st) == 0 && S_ISDIR(st.st_mode);
}

ns_status ns_embed_cached(const ns_bert *m, const char *cache, int64_t n, const char *const *texts, const size_t *lens,
                          const ns_embed_opts *o, ns_embed_table *t, ns_embed_run *run, ns_error *err)
{
    char mpath[1100];
    snprintf(mpath, sizeof mpath, "%s/embeddings.npy", cache ? cache : "");
    FILE *f = cache ? fopen(mpath, "rb") : NULL;
    ns_status st;
    if (f) {
        fclose(f);
        if ((st = ns_embed_table_load(t, cache, err)) != NS_OK) return st;
    } else {
        ns_embed_table_init(t, ns_bert_dim(m));
    }
    double t0 = ns_now();
    clock_t c0 = clock();
    if ((st = ns_embed_texts(m, t, n, texts, lens, o, &run->computed, err)) != NS_OK) {
        if (cache && err && !err->file[0]) snprintf(err->file, sizeof err->file, "%s", cache); /* which cache */
        return st;
    }
    run->seconds = ns_now() - t0;
    run->cpu = (double)(clock() - c0) / CLOCKS_PER_SEC; /* all threads of the process */
    if (cache && run->computed > 0) return ns_embed_table_save(t, cache, err);
    return NS_OK;
}

ns_status ns_embed_require(const ns_embed_table *t, const char *name, int64_t n, const char *const *texts,
                          const size_t *lens, ns_error *err)
{
    int64_t missing = 0, first = -1;
    for (int64_t i = 0; i < n; i++)
        if (!ns_embed_get(t, texts[i], lens[i]) && missing++ == 0) first = i;
    if (!missing) return NS_OK;
    char cut[64]; /* the first missing text's first bytes, whole UTF-8 characters, on one line */
    size_t k = lens[first] < 60 ? lens[first] : 60;
    while (k > 0 && k < lens[first] && ((unsigned char)texts[first][k] & 0xC0) == 0x80) k--;
    for (size_t i = 0; i < k; i++) cut[i] = texts[first][i] == '\n' ? ' ' : texts[first][i];
    cut[k] = 0;
    return ns_error_set(err, NS_ERR_INPUT, name, 0, 0,
                        "%lld of %lld texts have no embedding (the first, text %lld: \"%s%s\"); "
                        "`embed DATASET --texts-out FILE` lists the texts an import must hold",
                        (long long)missing, (long long)n, (long long)first, cut, k < lens[first] ? "…" : "");
}

ns_status ns_embed_write_rows(const char *path, const ns_embed_table *t, int64_t n, const char *const *texts,
                              const size_t *lens, ns_error *err)
{
    ns_status st = ns_embed_require(t, path, n, texts, lens, err);
    if (st != NS_OK) return st;
    ns_array a;
    int64_t shape[2] = {n, t->dim};
    ns_array_init(&a, NS_F32, 2, shape);
    for (int64_t i = 0; i < n; i++)
        memcpy((float *)a.data + (size_t)i * t->dim, ns_embed_get(t, texts[i], lens[i]), (size_t)t->dim * sizeof(float));
    st = ns_npy_write(path, &a, NULL, err);
    ns_array_free(&a);
    return st;
}

ns_status ns_embed_write_texts(const char *path, int64_t n, const char *const *texts, const size_t *lens, ns_error *err)
{
    ns_buf b;
    ns_buf_init(&b);
    for (int64_t i = 0; i < n; i++) {
        ns_json_put_strn(&b, texts[i], lens[i]);
        ns_buf_puts(&b, "\n");
    }
    ns_status st = ns_write_file_atomic(path, b.data ? b.data : "", b.len, err);
    ns_buf_free(&b);
    return st;
}

void ns_prompt_stats_json(ns_buf *b, const ns_prompt_stats *q, const char *dataset, const char *domain,
                          const char *model, ns_prompt_layout layout)
{
    ns_buf_puts(b, "{\"dataset\": ");
    ns_json_put_str(b, dataset);
    ns_buf_puts(b, ", \"domain\": ");
    ns_json_put_str(b, domain);
    ns_buf_printf(b,
                  ", \"model\": \"%s\", \"layout\": \"%s\", \"max_seq_length\": %d, \"prompts\": %lld, "
                  "\"tokens\": {\"min\": %d, \"median\": %d, \"p90\": %d, \"max\": %d}, \"over_max\": %.6f, "
                  "\"state_start_median\": %d, \"state_tokens_median\": %d, \"state_cut\": %.6f, "
                  "\"state_lost\": %.6f, \"state_kept_mean\": %.6f, \"merged\": %.6f}",
                  model, ns_prompt_layout_name(layout), q->max_seq_length, (long long)q->prompts, q->min, q->median,
                  q->p90, q->max, q->over_max, q->state_start_median, q->state_tokens_median, q->state_cut,
                  q->state_lost, q->state_kept_mean, q->merged);
}

ns_status ns_text_list_dir(ns_text_list *l, const char *dir, const char *domains_dir, ns_prompt_layout layout,
                           const uint64_t *shuffle_seed, ns_error *err)
{
    memset(l, 0, sizeof *l);
    ns_dataset ds;
    ns_status st = ns_dataset_load(&ds, dir, err);
    if (st != NS_OK) return st;
    ns_render_prep **preps = NULL;
    if ((st = ns_feat_renders_new(&preps, &ds, domains_dir, err)) == NS_OK) {
        ns_text_list_dataset_order(l, &ds, preps, layout, shuffle_seed);
        ns_feat_renders_free(preps, ds.nproblems);
    }
    ns_dataset_free(&ds);
    return st;
}

ns_status ns_embed_dataset_features(const ns_bert *m, const ns_dataset *ds, const char *domains_dir,
                                    const char *dataset_dir, bool progress, ns_features *states,
                                    ns_features *actions, ns_text_list *texts, ns_error *err)
{
    ns_render_prep **preps = NULL;
    ns_status st = ns_feat_renders_new(&preps, ds, domains_dir, err);
    if (st != NS_OK) return st;
    ns_text_list tl;
    ns_text_list_dataset(&tl, ds, preps, NS_PROMPT_PAPER);
    ns_feat_renders_free(preps, ds->nproblems);
    const ns_bert_config *c = ns_bert_config_of(m);
    int64_t over = ns_embed_count_over_window(m, tl.n, tl.texts, tl.lens);
    if (over > 0 && progress)
        fprintf(stderr, "%s: %lld of %lld texts exceed %s's window of %d word pieces: chunked\n", ds->domain_name,
                (long long)over, (long long)tl.n, c->name, c->max_seq_length);
    ns_buf cache;
    ns_buf_init(&cache);
    if (dataset_dir) ns_buf_printf(&cache, "%s/embeddings/%s%s", dataset_dir, c->name, over > 0 ? "+chunks" : "");
    ns_embed_opts o = {.batch = 32, .progress = progress, .chunks = over > 0, .save_dir = dataset_dir ? cache.data : NULL};
    ns_embed_table t = {0};
    ns_embed_run run;
    st = ns_embed_cached(m, dataset_dir ? cache.data : NULL, tl.n, tl.texts, tl.lens, &o, &t, &run, err);
    ns_features *side[2] = {states, actions};
    int64_t from[2] = {0, tl.nstates}, count[2] = {tl.nstates, tl.nactions};
    for (int k = 0; k < 2 && st == NS_OK; k++) {
        if (!side[k]) continue;
        ns_features *f = side[k];
        memset(f, 0, sizeof *f);
        f->nrows = count[k];
        f->dim = t.dim;
        f->rows = NS_AROWS_ACTION;
        f->dense = ns_xmalloc((size_t)(count[k] ? count[k] : 1) * t.dim * sizeof(float));
        for (int64_t i = 0; i < count[k]; i++)
            memcpy(f->dense + (size_t)i * t.dim, ns_embed_get(&t, tl.texts[from[k] + i], tl.lens[from[k] + i]),
                   (size_t)t.dim * sizeof(float));
    }
    ns_embed_table_free(&t);
    ns_buf_free(&cache);
    if (st == NS_OK && texts) *texts = tl;
    else ns_text_list_free(&tl);
    return st;
}

ns_status ns_embed_prompt_stats_dir(const ns_bert *m, const char *dir, const char *domains_dir,
                                    ns_prompt_layout layout, ns_prompt_stats *out, ns_buf *domain, ns_error *err)
{
    ns_dataset ds;
    ns_status st = ns_dataset_load(&ds, dir, err);
    if (st != NS_OK) return st;
    ns_render_prep **preps = NULL;
    st = ns_feat_renders_new(&preps, &ds, domains_dir, err);
    if (st == NS_OK) st = ns_embed_prompt_stats(m, &ds, preps, layout, out, err);
    ns_buf_puts(domain, ds.domain_name);
    if (preps) ns_feat_renders_free(preps, ds.nproblems);
    ns_dataset_free(&ds);
    return st;
}

ns_status ns_embed_model_load(ns_bert **m, const char *name, ns_error *err)
{
    ns_buf path;
    ns_buf_init(&path);
    ns_status st;
    if (!ns_embed_model_dir(name, &path))
        st = ns_error_set(err, NS_ERR_IO, NULL, 0, 0,
                          "model folder %s not found (run scripts/fetch_models.sh %s, or give --model DIR)", path.data,
                          name);
    else
        st = ns_bert_load(m, path.data, err);
    ns_buf_free(&path);
    return st;
}
