/* test_bert.c — the C sentence encoders against sentence-transformers:
 * tiny random-weight BERT and MPNet models (tests/fixtures/bert, written by
 * dev/bert_fixture.py) within 1e-5, MPNet's relative-position buckets, batch
 * independence; weight-file and vocabulary errors; the embedding cache and
 * the import format; chunked encoding of long texts; the real all-MiniLM-L6-v2 / all-mpnet-base-v2 when
 * scripts/fetch_models.sh has fetched them (skipped otherwise). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "nextstate/encode/bert.h"
#include "nextstate/util/tilegemm.h"
#include "nextstate/util/blas.h"
#include "nextstate/encode/embed.h"
#include "nextstate/util/json.h"
#include "nextstate/util/npy.h"
#include "nextstate/util/safetensors.h"
#include "test.h"

#define FIX "tests/fixtures/bert/"

static ns_bert *load(const char *dir)
{
    ns_bert *m = NULL;
    ns_error err;
    if (ns_bert_load(&m, dir, &err) != NS_OK) {
        char b[1024];
        ns_error_format(&err, b, sizeof b);
        printf("  load %s: %s\n", dir, b);
    }
    return m;
}

/* Loading must fail with code and a message containing `want`. */
static void expect_load_error(const char *dir, ns_status code, const char *want)
{
    ns_bert *m = NULL;
    ns_error err;
    ns_error_clear(&err);
    ns_status rc = ns_bert_load(&m, dir, &err);
    char b[1024];
    ns_error_format(&err, b, sizeof b);
    if (rc != code || !strstr(b, want)) printf("  expected %d \"%s\", got %d \"%s\"\n", code, want, rc, b);
    CHECK_EQ_INT(rc, code);
    CHECK(strstr(b, want) != NULL);
    CHECK(m == NULL);
}

/* A tiny model and its reference file (NULL on a failed check). */
static ns_bert *open_case(const char *name, ns_json *j)
{
    char dir[256], ref[256];
    snprintf(dir, sizeof dir, FIX "%s", name);
    snprintf(ref, sizeof ref, FIX "%s.ref.json", name);
    ns_bert *m = load(dir);
    ns_error err;
    ns_status st = ns_json_read(j, ref, &err);
    CHECK(m != NULL);
    CHECK_EQ_INT(st, NS_OK);
    if (m && st == NS_OK && j->kind == NS_JSON_OBJECT) return m;
    if (st == NS_OK) ns_json_free(j);
    ns_bert_free(m);
    return NULL;
}

/* Full pipeline on every reference case; hidden states of case 0. */
static void check_tiny(const char *name)
{
    ns_json j;
    ns_bert *m = open_case(name, &j);
    if (!m) return;
    const ns_json *cases = ns_json_get(&j, "cases"), *hidden = ns_json_get(&j, "hidden");
    int H = ns_bert_dim(m), n = cases->n;
    int64_t ms;
    CHECK(ns_json_get_int(&j, "max_seq_length", &ms));
    CHECK_EQ_INT(ns_bert_config_of(m)->max_seq_length, ms);
    const char **texts = malloc((size_t)n * sizeof *texts);
    size_t *lens = malloc((size_t)n * sizeof *lens);
    for (int i = 0; i < n; i++) {
        const ns_json *t = ns_json_get(&cases->items[i], "text");
        texts[i] = t->string;
        lens[i] = t->string_len;
    }
    float *out = malloc((size_t)n * H * sizeof *out), *out1 = malloc((size_t)n * H * sizeof *out1);
    ns_bert_encode(m, n, texts, lens, 5, NULL, out);
    double maxd = 0;
    for (int i = 0; i < n; i++) {
        const ns_json *e = ns_json_get(&cases->items[i], "embedding");
        CHECK_EQ_INT(e->n, H);
        for (int d = 0; d < H && d < e->n; d++) maxd = fmax(maxd, fabs(out[(size_t)i * H + d] - e->items[d].number));
    }
    printf("  %s: embeddings of %d texts, max |diff| %.2e\n", name, n, maxd);
    CHECK(maxd <= 1e-5);
    /* batch size does not matter */
    ns_bert_encode(m, n, texts, lens, 1, NULL, out1);
    double bd = 0;
    for (size_t k = 0; k < (size_t)n * H; k++) bd = fmax(bd, fabs(out[k] - out1[k]));
    CHECK(bd <= 1e-6);
    /* hidden states of case 0 */
    int32_t ids[512];
    int L = ns_bert_tokenize(m, texts[0], lens[0], ids);
    CHECK_EQ_INT(L, hidden->n);
    float *hs = malloc((size_t)L * H * sizeof *hs);
    const int32_t *idp = ids;
    ns_bert_forward(m, 1, &idp, &L, hs, out1);
    double hd = 0;
    for (int p = 0; p < L && p < hidden->n; p++)
        for (int d = 0; d < H; d++) hd = fmax(hd, fabs(hs[(size_t)p * H + d] - hidden->items[p].items[d].number));
    printf("  %s: hidden states of %d tokens, max |diff| %.2e\n", name, L, hd);
    CHECK(hd <= 1e-5);
    /* relative-position buckets, -600..600 */
    const ns_json *bk = ns_json_get(&j, "buckets");
    int64_t from = 0;
    CHECK(ns_json_get_int(&j, "buckets_from", &from));
    int bad = 0;
    for (int i = 0; bk && i < bk->n; i++) bad += ns_bert_relative_bucket((int)from + i, 32, 128) != bk->items[i].integer;
    CHECK(bk && bk->n == 1201);
    CHECK_EQ_INT(bad, 0);
    free(hs);
    free(out);
    free(out1);
    free(texts);
    free(lens);
    ns_json_free(&j);
    ns_bert_free(m);
}

static void test_tiny_bert(void) { check_tiny("tiny-bert"); }
static void test_tiny_mpnet(void) { check_tiny("tiny-mpnet"); }

static void test_half_floats(void)
{
    CHECK(ns_f16_to_f32(0x3C00) == 1.0f);
    CHECK(ns_f16_to_f32(0xC000) == -2.0f);
    CHECK(ns_f16_to_f32(0x0001) == ldexpf(1.0f, -24));
    CHECK(ns_f16_to_f32(0x7BFF) == 65504.0f);
    CHECK(isinf(ns_f16_to_f32(0x7C00)));
    CHECK(ns_bf16_to_f32(0x3F80) == 1.0f);
    CHECK(ns_bf16_to_f32(0xC040) == -3.0f);
    /* an F16 tensor read as float32 */
    char dir[] = "/tmp/ns_test_st_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/h.safetensors", dir);
    const char *hdr = "{\"x\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}}";
    ns_buf b;
    ns_buf_init(&b);
    uint64_t hl = strlen(hdr);
    for (int i = 0; i < 8; i++) ns_buf_putc(&b, (char)((hl >> (8 * i)) & 0xFF));
    ns_buf_puts(&b, hdr);
    const unsigned char data[4] = {0x00, 0x3C, 0x00, 0xC0};
    ns_buf_put(&b, data, 4);
    ns_error err;
    CHECK_EQ_INT(ns_write_file_atomic(path, b.data, b.len, &err), NS_OK);
    ns_safetensors st;
    CHECK_EQ_INT(ns_st_open(&st, path, &err), NS_OK);
    float v[2] = {0, 0};
    int64_t shape[1] = {2};
    CHECK_EQ_INT(ns_st_read_f32(&st, "x", 1, shape, v, &err), NS_OK);
    CHECK(v[0] == 1.0f && v[1] == -2.0f);
    ns_st_close(&st);
    ns_buf_free(&b);
    remove(path);
    rmdir(dir);
}

/* A scratch copy of tiny-bert that the error tests corrupt. */
static const char *const tiny_files[] = {"config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json",
                                         "special_tokens_map.json", "sentence_bert_config.json", "modules.json",
                                         "1_Pooling/config.json"};
#define NTINY ((int)(sizeof tiny_files / sizeof *tiny_files))

static void copy_tiny(const char *dir)
{
    char src[512], dst[512], sub[512];
    snprintf(sub, sizeof sub, "%s/1_Pooling", dir);
    ns_error err;
    CHECK_EQ_INT(ns_mkdir_p(sub, &err), NS_OK);
    for (int i = 0; i < NTINY; i++) {
        snprintf(src, sizeof src, FIX "tiny-bert/%s", tiny_files[i]);
        snprintf(dst, sizeof dst, "%s/%s", dir, tiny_files[i]);
        char *d;
        size_t n;
        CHECK_EQ_INT(ns_read_file(src, &d, &n, &err), NS_OK);
        CHECK_EQ_INT(ns_write_file_atomic(dst, d, n, &err), NS_OK);
        free(d);
    }
}

static void remove_tiny(const char *dir)
{
    char p[512];
    for (int i = 0; i < NTINY; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, tiny_files[i]);
        remove(p);
    }
    snprintf(p, sizeof p, "%s/1_Pooling", dir);
    rmdir(p);
    rmdir(dir);
}

static void write_bytes(const char *dir, const char *file, const char *data, size_t n)
{
    char p[512];
    ns_error err;
    snprintf(p, sizeof p, "%s/%s", dir, file);
    CHECK_EQ_INT(ns_write_file_atomic(p, data, n, &err), NS_OK);
}

static char *find_bytes(char *hay, size_t n, const char *needle, size_t m)
{
    for (size_t i = 0; i + m <= n; i++)
        if (!memcmp(hay + i, needle, m)) return hay + i;
    return NULL;
}

static void test_weight_errors(void)
{
    char dir[] = "/tmp/ns_test_bert_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    copy_tiny(dir);
    ns_bert *m = load(dir);
    CHECK(m != NULL); /* the copy is sound */
    ns_bert_free(m);
    char *w;
    size_t wl;
    ns_error err;
    CHECK_EQ_INT(ns_read_file(FIX "tiny-bert/model.safetensors", &w, &wl, &err), NS_OK);
    uint64_t hl = 0;
    for (int i = 7; i >= 0; i--) hl = hl << 8 | (unsigned char)w[i];

    /* missing weight file */
    char p[512];
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    remove(p);
    expect_load_error(dir, NS_ERR_IO, "model.safetensors");
    /* truncated: a download cut short, then one cut inside the header length */
    write_bytes(dir, "model.safetensors", w, wl - 100);
    expect_load_error(dir, NS_ERR_INPUT, "truncated safetensors file: tensor");
    write_bytes(dir, "model.safetensors", w, 5);
    expect_load_error(dir, NS_ERR_INPUT, "truncated");
    write_bytes(dir, "model.safetensors", w, 8 + hl / 2);
    expect_load_error(dir, NS_ERR_INPUT, "the header claims");
    /* bad header JSON */
    char *c = malloc(wl);
    memcpy(c, w, wl);
    c[8] = '#';
    write_bytes(dir, "model.safetensors", c, wl);
    expect_load_error(dir, NS_ERR_INPUT, "bad safetensors header JSON");
    /* missing tensor: rename one entry in place (same length) */
    memcpy(c, w, wl);
    char *hit = find_bytes(c + 8, hl, "encoder.layer.1.output.dense.bias", 33);
    CHECK(hit != NULL);
    if (hit) hit[32] = 'z';
    write_bytes(dir, "model.safetensors", c, wl);
    expect_load_error(dir, NS_ERR_INPUT, "missing tensor \"encoder.layer.1.output.dense.bias\"");
    /* wrong shape: the same bytes declared [8, 16] instead of [16, 8] */
    memcpy(c, w, wl);
    hit = find_bytes(c + 8, hl, "\"encoder.layer.0.intermediate.dense.weight\"", 43);
    CHECK(hit != NULL);
    char *sh = hit ? find_bytes(hit, (size_t)(c + 8 + hl - hit), "[16,8]", 6) : NULL;
    CHECK(sh != NULL);
    if (sh) memcpy(sh, "[8,16]", 6);
    write_bytes(dir, "model.safetensors", c, wl);
    expect_load_error(dir, NS_ERR_INPUT, "has shape [8, 16], expected [16, 8]");
    /* offsets that do not match the shape */
    memcpy(c, w, wl);
    sh = find_bytes(c + 8, hl, "\"shape\":[8]", 11);
    CHECK(sh != NULL);
    if (sh) sh[9] = '9';
    write_bytes(dir, "model.safetensors", c, wl);
    expect_load_error(dir, NS_ERR_INPUT, "needs 36 bytes but data_offsets span 32");
    write_bytes(dir, "model.safetensors", w, wl);

    /* vocabulary that does not match the weights */
    char *v;
    size_t vl;
    CHECK_EQ_INT(ns_read_file(FIX "tiny-bert/vocab.txt", &v, &vl, &err), NS_OK);
    size_t cut = vl - 1;
    while (cut > 0 && v[cut - 1] != '\n') cut--; /* drop the last line */
    write_bytes(dir, "vocab.txt", v, cut);
    expect_load_error(dir, NS_ERR_INPUT, "vocabulary does not match the weights");
    char *more = malloc(vl + 8);
    memcpy(more, v, vl);
    memcpy(more + vl, "extra\n", 6);
    write_bytes(dir, "vocab.txt", more, vl + 6);
    expect_load_error(dir, NS_ERR_INPUT, "vocabulary does not match the weights");
    remove(p); /* missing vocab.txt */
    snprintf(p, sizeof p, "%s/vocab.txt", dir);
    remove(p);
    write_bytes(dir, "model.safetensors", w, wl);
    expect_load_error(dir, NS_ERR_IO, "vocab.txt");
    write_bytes(dir, "vocab.txt", v, vl);
    /* config problems */
    write_bytes(dir, "config.json", "{\"model_type\": \"gpt2\"}", 22);
    expect_load_error(dir, NS_ERR_UNSUPPORTED, "model_type \"gpt2\"");
    snprintf(p, sizeof p, "%s/config.json", dir);
    remove(p);
    expect_load_error(dir, NS_ERR_IO, "config.json");
    free(more);
    free(v);
    free(c);
    free(w);
    remove_tiny(dir);
}

static double max_diff(const float *a, const float *b, int n)
{
    double d = 0;
    for (int i = 0; i < n; i++) d = fmax(d, fabs((double)a[i] - b[i]));
    return d;
}

/* Chunked encoding (tiny-bert reads 16 pieces: windows of 14): a text that
 * fits is encoded exactly as with truncation; a longer one is the mean of
 * its windows' embeddings, normalised — so two texts that differ only past
 * the first window, identical under truncation, differ; an embedding table
 * made with chunks is another encoder's. */
static void test_chunks(void)
{
    ns_bert *m = load(FIX "tiny-bert");
    CHECK(m != NULL);
    if (!m) return;
    const int H = ns_bert_dim(m), L = ns_bert_config_of(m)->max_seq_length;
    CHECK_EQ_INT(L, 16);
    const char *texts[] = {"hello world",
                           "the car is at location l0 and the ferry is empty and the car is at location l1 and "
                           "the ferry is at l0 hello world",
                           "the car is at location l0 and the ferry is empty and the car is at location l1 and "
                           "the ferry is at l1 cafe cafe"};
    float a[3 * 64], b[3 * 64];
    CHECK(H <= 64);
    ns_bert_encode(m, 3, texts, NULL, 2, NULL, a);
    ns_bert_encode_chunks(m, 3, texts, NULL, 2, NULL, b);
    /* equal up to the summation order BLAS picks for a row's place in the batch (bit-equal on some CPUs) */
    CHECK(max_diff(a, b, H) <= 1e-6);         /* one window: the same vector */
    CHECK(max_diff(a + H, a + 2 * H, H) <= 1e-6); /* truncation merges texts 1 and 2 */
    printf("  texts 1 and 2: max |diff| %.2e truncated, %.2e in chunks\n", max_diff(a + H, a + 2 * H, H),
           max_diff(b + H, b + 2 * H, H));
    CHECK(max_diff(b + H, b + 2 * H, H) > 1e-3);
    /* text 1 by hand: windows of 14 pieces, each [CLS] … [SEP], mean, L2 */
    const ns_wordpiece *wp = ns_bert_wordpiece(m);
    int32_t *pieces = NULL;
    size_t n = 0, cap = 0;
    ns_wordpiece_tokenize(wp, texts[1], strlen(texts[1]), 0, &pieces, &n, &cap);
    int nw = (int)((n + 13) / 14);
    CHECK(nw >= 2);
    float want[64] = {0}, one[64];
    int32_t win[16];
    for (int k = 0; k < nw; k++) {
        int len = (int)(n - (size_t)k * 14 < 14 ? n - (size_t)k * 14 : 14);
        win[0] = ns_wordpiece_cls_id(wp);
        memcpy(win + 1, pieces + (size_t)k * 14, (size_t)len * sizeof *win);
        win[len + 1] = ns_wordpiece_sep_id(wp);
        const int32_t *ids[1] = {win};
        int lens[1] = {len + 2};
        ns_bert_forward(m, 1, ids, lens, NULL, one);
        for (int d = 0; d < H; d++) want[d] += one[d] / (float)nw;
    }
    double nn = 0, diff = 0;
    for (int d = 0; d < H; d++) nn += (double)want[d] * want[d];
    for (int d = 0; d < H; d++) diff = fmax(diff, fabs(want[d] / sqrt(nn) - b[H + d]));
    printf("  %d windows of text 1: max |diff| %.3g against the windows' mean by hand\n", nw, diff);
    CHECK(diff <= 1e-6);
    free(pieces);
    /* the table knows the encoder: a truncating cache refuses chunked rows */
    ns_embed_table t;
    ns_embed_table_init(&t, H);
    ns_embed_opts o = {.batch = 2}, oc = {.batch = 2, .chunks = true};
    int64_t computed;
    ns_error err;
    CHECK_EQ_INT(ns_embed_texts(m, &t, 1, texts, NULL, &o, &computed, &err), NS_OK);
    CHECK_EQ_INT(ns_embed_texts(m, &t, 3, texts, NULL, &oc, &computed, &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "tiny-bert+chunks") != NULL);
    ns_embed_table_free(&t);
    ns_embed_table_init(&t, H);
    CHECK_EQ_INT(ns_embed_texts(m, &t, 3, texts, NULL, &oc, &computed, &err), NS_OK);
    CHECK_STR(t.model, "tiny-bert+chunks");
    const float *r = ns_embed_get(&t, texts[2], strlen(texts[2]));
    CHECK(r && !memcmp(r, b + 2 * H, (size_t)H * sizeof(float)));
    ns_embed_table_free(&t);
    ns_bert_free(m);
}

static void test_cache_reuse(void)
{
    ns_bert *m = load(FIX "tiny-bert"), *other = load(FIX "tiny-mpnet");
    CHECK(m && other);
    if (!m || !other) return;
    const char *texts[] = {"hello world", "the car is at location l0", "hello world", "cafe", "(board c1 l1)"};
    ns_embed_table t;
    ns_embed_table_init(&t, ns_bert_dim(m));
    ns_embed_opts o = {.batch = 2};
    int64_t computed = -1;
    ns_error err;
    CHECK_EQ_INT(ns_embed_texts(m, &t, 5, texts, NULL, &o, &computed, &err), NS_OK);
    CHECK_EQ_INT(computed, 4); /* the repeated text once */
    CHECK_EQ_INT(t.n, 4);
    char dir[] = "/tmp/ns_test_cache_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    CHECK_EQ_INT(ns_embed_table_save(&t, dir, &err), NS_OK);
    ns_embed_table u;
    CHECK_EQ_INT(ns_embed_table_load(&u, dir, &err), NS_OK);
    CHECK_EQ_INT(u.n, 4);
    CHECK_EQ_INT(u.dim, ns_bert_dim(m));
    CHECK(u.fingerprint == ns_bert_fingerprint(m));
    CHECK_STR(u.model, "tiny-bert");
    /* second run: everything from the cache, one new text computed */
    const char *more[] = {"hello world", "cafe", "a new text"};
    CHECK_EQ_INT(ns_embed_texts(m, &u, 3, more, NULL, &o, &computed, &err), NS_OK);
    CHECK_EQ_INT(computed, 1);
    CHECK_EQ_INT(u.n, 5);
    float direct[8 * 5];
    ns_bert_encode(m, 5, texts, NULL, 8, NULL, direct);
    for (int i = 0; i < 5; i++) {
        const float *r = ns_embed_get(&u, texts[i], strlen(texts[i]));
        CHECK(r != NULL);
        double d = 0;
        for (int k = 0; r && k < 8; k++) d = fmax(d, fabs(r[k] - direct[i * 8 + k]));
        CHECK(d <= 1e-6);
    }
    CHECK(ns_embed_get(&u, "never seen", 10) == NULL);
    /* a cache of another model is refused */
    CHECK_EQ_INT(ns_embed_texts(other, &u, 1, more, NULL, &o, &computed, &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "another model") != NULL);
    /* a torn cache (manifest from another write) is refused */
    CHECK_EQ_INT(ns_embed_table_save(&u, dir, &err), NS_OK);
    char p[256];
    snprintf(p, sizeof p, "%s/keys.npy", dir);
    ns_array k;
    CHECK_EQ_INT(ns_npy_read(p, &k, NULL, &err), NS_OK);
    ((uint64_t *)k.data)[0] ^= 1;
    CHECK_EQ_INT(ns_npy_write(p, &k, NULL, &err), NS_OK);
    ns_array_free(&k);
    ns_embed_table x;
    CHECK_EQ_INT(ns_embed_table_load(&x, dir, &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "checksum") != NULL);
    remove(p);
    snprintf(p, sizeof p, "%s/embeddings.npy", dir);
    remove(p);
    snprintf(p, sizeof p, "%s/manifest.json", dir);
    remove(p);
    rmdir(dir);
    ns_embed_table_free(&t);
    ns_embed_table_free(&u);
    ns_bert_free(m);
    ns_bert_free(other);
}

/* Embeddings made elsewhere: embeddings.npy + index.jsonl. */
static void test_import(void)
{
    char dir[] = "/tmp/ns_test_import_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    ns_array a;
    int64_t shape[2] = {3, 8};
    ns_array_init(&a, NS_F32, 2, shape);
    for (int i = 0; i < 24; i++) ((float *)a.data)[i] = (float)i;
    char p[256], ip[256];
    ns_error err;
    snprintf(p, sizeof p, "%s/embeddings.npy", dir);
    CHECK_EQ_INT(ns_npy_write(p, &a, NULL, &err), NS_OK);
    ns_array_free(&a);
    snprintf(ip, sizeof ip, "%s/index.jsonl", dir);
    const char *idx = "\"first text\"\n{\"text\": \"Caf\\u00e9 \\n two lines\", \"row\": 2}\n{\"row\": 1, \"text\": \"middle\"}\n"
                      "{\"text\": \"middle\", \"row\": 0}\n";  /* a repeated text: its first row wins */
    CHECK_EQ_INT(ns_write_file_atomic(ip, idx, strlen(idx), &err), NS_OK);
    ns_embed_table t;
    CHECK_EQ_INT(ns_embed_table_load(&t, dir, &err), NS_OK);
    CHECK_EQ_INT(t.n, 3);
    CHECK_EQ_INT(t.dim, 8);
    const float *r = ns_embed_get(&t, "first text", 10);
    CHECK(r && r[0] == 0.0f);
    const char *cafe = "Caf\xc3\xa9 \n two lines";
    r = ns_embed_get(&t, cafe, strlen(cafe));
    CHECK(r && r[0] == 16.0f);
    r = ns_embed_get(&t, "middle", 6);
    CHECK(r && r[3] == 11.0f);
    CHECK(ns_embed_get(&t, "Middle", 6) == NULL);
    /* usable as a cache for lookups; never extended with another model's rows */
    ns_bert *m = load(FIX "tiny-bert");
    const char *have[] = {"middle", "first text"}, *missing[] = {"middle", "not there"};
    int64_t computed = -1;
    ns_embed_opts o = {.batch = 4};
    CHECK_EQ_INT(ns_embed_texts(m, &t, 2, have, NULL, &o, &computed, &err), NS_OK);
    CHECK_EQ_INT(computed, 0);
    CHECK_EQ_INT(ns_embed_texts(m, &t, 2, missing, NULL, &o, &computed, &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "imported") != NULL);
    CHECK_EQ_INT(t.n, 3);
    ns_bert_free(m);
    ns_embed_table_free(&t);
    /* a row outside the array, a malformed line, no index at all */
    const char *bad = "\"a\"\n{\"text\": \"b\", \"row\": 3}\n";
    CHECK_EQ_INT(ns_write_file_atomic(ip, bad, strlen(bad), &err), NS_OK);
    CHECK_EQ_INT(ns_embed_table_load(&t, dir, &err), NS_ERR_INPUT);
    CHECK_EQ_INT(err.line, 2);
    CHECK(strstr(err.msg, "row 3 outside 0..2") != NULL);
    const char *bad2 = "\"a\"\n42\n";
    CHECK_EQ_INT(ns_write_file_atomic(ip, bad2, strlen(bad2), &err), NS_OK);
    CHECK_EQ_INT(ns_embed_table_load(&t, dir, &err), NS_ERR_INPUT);
    CHECK_EQ_INT(err.line, 2);
    remove(ip);
    CHECK_EQ_INT(ns_embed_table_load(&t, dir, &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "index.jsonl") != NULL);
    remove(p);
    CHECK_EQ_INT(ns_embed_table_load(&t, dir, &err), NS_ERR_IO);
    rmdir(dir);
}

static const char *models_dir(char *buf, size_t n)
{
    const char *env = getenv("NEXTSTATE_MODELS"), *home = getenv("HOME");
    if (env && *env) snprintf(buf, n, "%s", env);
    else snprintf(buf, n, "%s/.cache/nextstate/models", home ? home : ".");
    return buf;
}

static bool have_model(const char *name)
{
    char md[512], p[1024];
    snprintf(p, sizeof p, "%s/%s/model.safetensors", models_dir(md, sizeof md), name);
    return access(p, R_OK) == 0;
}

/* The real model on real_texts.jsonl: cosine ≥ 0.9999 to sentence-transformers. */
static void check_real(const char *name)
{
    char md[512], dir[1024], ref[256];
    snprintf(dir, sizeof dir, "%s/%s", models_dir(md, sizeof md), name);
    snprintf(ref, sizeof ref, FIX "%s.npy", name);
    ns_bert *m = load(dir);
    ns_array want;
    ns_error err;
    CHECK(m != NULL);
    CHECK_EQ_INT(ns_npy_read(ref, &want, NULL, &err), NS_OK);
    char *data;
    size_t len;
    CHECK_EQ_INT(ns_read_file(FIX "real_texts.jsonl", &data, &len, &err), NS_OK);
    if (!m) return;
    char *texts[64];
    int n = 0;
    for (char *p = data; *p && n < 64;) {
        char *e = strchr(p, '\n');
        ns_json j;
        CHECK_EQ_INT(ns_json_parse(&j, p, (size_t)(e - p), "texts", &err), NS_OK);
        texts[n++] = strdup(j.string);
        ns_json_free(&j);
        p = e + 1;
    }
    int D = ns_bert_dim(m);
    CHECK_EQ_INT(want.shape[0], n);
    CHECK_EQ_INT(want.shape[1], D);
    float *out = malloc((size_t)n * D * sizeof *out);
    ns_bert_encode(m, n, (const char *const *)texts, NULL, 8, NULL, out);
    double mincos = 1, maxd = 0;
    for (int i = 0; i < n && want.shape[0] == n; i++) {
        const float *a = out + (size_t)i * D, *b = (const float *)want.data + (size_t)i * D;
        double ab = 0, aa = 0, bb = 0;
        for (int d = 0; d < D; d++) {
            ab += (double)a[d] * b[d];
            aa += (double)a[d] * a[d];
            bb += (double)b[d] * b[d];
            maxd = fmax(maxd, fabs(a[d] - b[d]));
        }
        mincos = fmin(mincos, ab / sqrt(aa * bb));
    }
    printf("  %s: %d texts, min cosine %.8f, max |diff| %.2e\n", name, n, mincos, maxd);
    CHECK(mincos >= 0.9999);
    CHECK(maxd <= 1e-4);
    for (int i = 0; i < n; i++) free(texts[i]);
    free(out);
    free(data);
    ns_array_free(&want);
    ns_bert_free(m);
}

static void test_real_minilm(void) { check_real("all-MiniLM-L6-v2"); }
static void test_real_mpnet(void) { check_real("all-mpnet-base-v2"); }

/* The tiles (bert.h: ns_bert_set_tiles) on the tiny models, forced (their
 * sizes are not whole tiles, so ns_bert_load leaves them off): near the
 * OpenBLAS embeddings, and the same bits on 1 and 3 threads, batches of 2
 * (the cases 40 times over: the threads all get batches). */
static void check_tiles(const char *name)
{
    ns_json j;
    ns_bert *m = open_case(name, &j);
    if (!m) return;
    CHECK_STR(ns_bert_backend(m), ns_blas_backend()); /* 8 hidden: not whole tiles */
    const ns_json *cases = ns_json_get(&j, "cases");
    int H = ns_bert_dim(m), n = 40 * cases->n; /* the cases 40 times: enough batches for every thread */
    const char **texts = malloc((size_t)n * sizeof *texts);
    for (int i = 0; i < n; i++) texts[i] = ns_json_get(&cases->items[i % cases->n], "text")->string;
    float *blas = malloc((size_t)n * H * sizeof *blas), *one = malloc((size_t)n * H * sizeof *one),
          *three = malloc((size_t)n * H * sizeof *three);
    ns_bert_encode(m, n, texts, NULL, 2, NULL, blas);
    CHECK(ns_bert_set_tiles(m, true));
    CHECK_STR(ns_bert_backend(m), "amx bf16x3");
    ns_bert_encode(m, n, texts, NULL, 2, NULL, one);
    ns_bert_set_threads(m, 3);
    CHECK_EQ_INT(ns_bert_threads(m), 3);
    ns_bert_encode(m, n, texts, NULL, 2, NULL, three);
    CHECK(memcmp(one, three, (size_t)n * H * sizeof *one) == 0);
    double d = 0;
    for (size_t k = 0; k < (size_t)n * H; k++) d = fmax(d, fabs(one[k] - blas[k]));
    printf("  %s: tiles against OpenBLAS, max |diff| %.2e over %d texts\n", name, d, cases->n);
    CHECK(d > 0 && d <= 1e-4);
    CHECK(!ns_bert_set_tiles(m, false));
    CHECK_EQ_INT(ns_bert_threads(m), 1); /* without the tiles: one thread, OpenBLAS's own */
    free(texts), free(blas), free(one), free(three);
    ns_json_free(&j);
    ns_bert_free(m);
}

static void test_tiles_threads(void)
{
    check_tiles("tiny-bert");
    check_tiles("tiny-mpnet");
}

int main(void)
{
    NS_RUN(test_tiny_bert);
    NS_RUN(test_tiny_mpnet);
    NS_RUN(test_half_floats);
    NS_RUN(test_weight_errors);
    NS_RUN(test_chunks);
    NS_RUN(test_cache_reuse);
    NS_RUN(test_import);
    if (ns_tilegemm_usable()) NS_RUN(test_tiles_threads);
    else NS_SKIP(test_tiles_threads, "no AMX bfloat16 on this CPU (or no tile state from the kernel)");
    /* the real models take ~1 TFLOP: too slow for the plain-C products (make NOBLAS=1) */
    bool fast = strcmp(ns_blas_backend(), "plain C") != 0;
    if (!fast) NS_SKIP(test_real_minilm, "plain-C matrix products (NOBLAS=1) are too slow for the real models");
    else if (have_model("all-MiniLM-L6-v2")) NS_RUN(test_real_minilm);
    else NS_SKIP(test_real_minilm, "all-MiniLM-L6-v2 not fetched (scripts/fetch_models.sh)");
    if (!fast) NS_SKIP(test_real_mpnet, "plain-C matrix products (NOBLAS=1) are too slow for the real models");
    else if (have_model("all-mpnet-base-v2")) NS_RUN(test_real_mpnet);
    else NS_SKIP(test_real_mpnet, "all-mpnet-base-v2 not fetched (scripts/fetch_models.sh --all)");
    return ns_test_summary("test_bert");
}
