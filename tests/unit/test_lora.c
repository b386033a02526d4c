/* test_lora.c — LoRA adapters of the C text encoders (learn/lora.h,
 * encode/bert.h): with B = 0 the adapted encoder equals the frozen one bit
 * for bit (training forward, tape or not, and the merged weights); merged
 * and unmerged adapters agree; the backward pass through the encoder against
 * central finite differences (tiny BERT and MPNet, every projection, a top
 * layer only, mean / CLS / max pooling with and without normalisation) and
 * against PyTorch's gradients (tests/fixtures/lora, dev/lora_reference.py);
 * the adapter's checkpoint record. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "nextstate/encode/bert.h"
#include "nextstate/learn/lora.h"
#include "nextstate/util/json.h"
#include "test.h"
#include "nextstate/util/tilegemm.h"
#include "nn_check.h"

#define FIX "tests/fixtures/bert/"

static ns_bert *load(const char *dir)
{
    ns_bert *m = NULL;
    ns_error err;
    if (ns_bert_load(&m, dir, &err) != NS_OK) {
        char b[1024];
        ns_error_format(&err, b, sizeof b);
        printf("  load %s: %s\n", dir, b);
        ns_t_cur_failed = 1;
    }
    return m;
}

static bool make(ns_lora *l, const ns_bert *m, int rank, float alpha, const char *targets, int layers, uint64_t seed)
{
    ns_lora_config c = {rank, alpha, ns_lora_targets_parse(targets), layers};
    ns_error err;
    ns_status st = ns_lora_create(l, ns_bert_config_of(m), &c, seed, &err);
    CHECK_EQ_INT(st, NS_OK);
    return st == NS_OK;
}

/* Token ids of a few texts, one after the other. */
typedef struct seqs {
    int n;
    int32_t ids[8][64];
    int lens[8];
    const int32_t *p[8];
} seqs;

static void tokenize(seqs *s, const ns_bert *m)
{
    static const char *texts[] = {"Hello, World! The car is at location l0.", "quiz", "",
                                  "the ferry is at location 1 and car 0 is on the ferry", "unaffable"};
    s->n = 5;
    for (int i = 0; i < s->n; i++) {
        s->lens[i] = ns_bert_tokenize(m, texts[i], strlen(texts[i]), s->ids[i]);
        s->p[i] = s->ids[i];
    }
}

static void fill_b(ns_lora *l, uint64_t seed, float scale)
{
    size_t nt = (size_t)l->enc_layers * NS_BERT_NTARGETS;
    for (size_t k = 0; k < nt; k++)
        if (l->b[k]) nn_fill((float *)l->b[k], (size_t)l->hidden * l->cfg.rank, seed + k, -scale, scale);
}

/* With B = 0: the training forward (with and without tape) and the merged
 * model give the frozen encoder's bytes; the fingerprint changes. */
static void zero_delta(const char *name)
{
    char dir[256];
    snprintf(dir, sizeof dir, FIX "%s", name);
    ns_bert *m = load(dir), *mm = load(dir);
    ns_lora l;
    if (!m || !mm || !make(&l, m, 4, 8, "qkvo", 0, 3)) goto done;
    seqs s;
    tokenize(&s, m);
    int H = ns_bert_dim(m), T = 0;
    for (int i = 0; i < s.n; i++) T += s.lens[i];
    float *o0 = calloc((size_t)s.n * H, 4), *o1 = calloc((size_t)s.n * H, 4), *o2 = calloc((size_t)s.n * H, 4);
    float *h0 = calloc((size_t)T * H, 4), *h1 = calloc((size_t)T * H, 4), *o3 = calloc((size_t)s.n * H, 4);
    ns_bert_lora v;
    ns_lora_view(&l, &v);
    ns_bert_tape tape = {0};
    ns_bert_forward(m, s.n, s.p, s.lens, h0, o0);
    ns_bert_forward_lora(m, &v, s.n, s.p, s.lens, NULL, NULL, o1);
    ns_bert_forward_lora(m, &v, s.n, s.p, s.lens, &tape, h1, o2);
    uint64_t fp = ns_bert_fingerprint(mm);
    ns_bert_merge_lora(mm, &v, ns_lora_hash(&l));
    ns_bert_forward(mm, s.n, s.p, s.lens, NULL, o3);
    size_t bytes = (size_t)s.n * H * 4;
    CHECK(memcmp(o0, o1, bytes) == 0);
    CHECK(memcmp(o0, o2, bytes) == 0);
    CHECK(memcmp(o0, o3, bytes) == 0);
    CHECK(memcmp(h0, h1, (size_t)T * H * 4) == 0);
    CHECK(ns_bert_fingerprint(mm) != fp);
    /* A is not zero: a non-zero B changes the output */
    fill_b(&l, 9, 0.3f);
    ns_bert_forward_lora(m, &v, s.n, s.p, s.lens, NULL, NULL, o1);
    CHECK(memcmp(o0, o1, bytes) != 0);
    printf("  %s: B = 0 gives the frozen encoder's %d embeddings and %d hidden states bit for bit\n", name, s.n, T);
    ns_bert_tape_free(&tape);
    free(o0), free(o1), free(o2), free(o3), free(h0), free(h1);
    ns_lora_free(&l);
done:
    ns_bert_free(m);
    ns_bert_free(mm);
}

static void test_zero_delta_bert(void) { zero_delta("tiny-bert"); }
static void test_zero_delta_mpnet(void) { zero_delta("tiny-mpnet"); }

/* Merged weights and the unmerged adapter agree (float rounding aside). */
static void test_merge(void)
{
    ns_bert *m = load(FIX "tiny-mpnet"), *mm = load(FIX "tiny-mpnet");
    ns_lora l;
    if (!m || !mm || !make(&l, m, 2, 4, "qkvo", 0, 5)) goto done;
    fill_b(&l, 11, 0.5f);
    seqs s;
    tokenize(&s, m);
    int H = ns_bert_dim(m);
    float *a = calloc((size_t)s.n * H, 4), *b = calloc((size_t)s.n * H, 4), *f = calloc((size_t)s.n * H, 4);
    ns_bert_lora v;
    ns_lora_view(&l, &v);
    ns_bert_forward_lora(m, &v, s.n, s.p, s.lens, NULL, NULL, a);
    ns_bert_merge_lora(mm, &v, ns_lora_hash(&l));
    ns_bert_forward(mm, s.n, s.p, s.lens, NULL, b);
    ns_bert_forward(m, s.n, s.p, s.lens, NULL, f);
    double d = 0, moved = 0;
    for (int k = 0; k < s.n * H; k++) d = fmax(d, fabs(a[k] - b[k])), moved = fmax(moved, fabs(a[k] - f[k]));
    printf("  merged vs unmerged max|diff| %.2e (the adapter moves the embeddings by up to %.3f)\n", d, moved);
    CHECK(d < 1e-5);
    CHECK(moved > 1e-2);
    free(a), free(b), free(f);
    ns_lora_free(&l);
done:
    ns_bert_free(m);
    ns_bert_free(mm);
}

/* ---- finite differences ------------------------------------------------- */

typedef struct fd_ctx {
    const ns_bert *m;
    ns_lora *l;
    const seqs *s;
    const float *g;
    float *out;
} fd_ctx;

static double objective(void *p)
{
    fd_ctx *c = p;
    ns_bert_lora v;
    ns_lora_view(c->l, &v);
    ns_bert_forward_lora(c->m, &v, c->s->n, c->s->p, c->s->lens, NULL, NULL, c->out);
    return nn_dot(c->out, c->g, (size_t)c->s->n * ns_bert_dim(c->m));
}

static void gradcheck(const char *dir, const char *targets, int layers, const char *what)
{
    ns_bert *m = load(dir);
    ns_lora l;
    if (!m || !make(&l, m, 3, 6, targets, layers, 21)) {
        ns_bert_free(m);
        return;
    }
    fill_b(&l, 31, 0.5f);
    seqs s;
    tokenize(&s, m);
    int H = ns_bert_dim(m);
    float *g = malloc((size_t)s.n * H * 4), *out = malloc((size_t)s.n * H * 4);
    nn_fill(g, (size_t)s.n * H, 41, -1, 1);
    ns_bert_lora v;
    ns_lora_view(&l, &v);
    ns_bert_tape tape = {0};
    ns_bert_forward_lora(m, &v, s.n, s.p, s.lens, &tape, NULL, out);
    ns_params_zero_grad(&l.p);
    ns_lora_backward(&l, m, &tape, g);
    fd_ctx c = {m, &l, &s, g, out};
    /* every tensor, every entry (the tiny models have a few hundred) */
    double worst = 0;
    for (int i = 0; i < l.p.n; i++) {
        char label[128];
        snprintf(label, sizeof label, "%s %s", what, l.p.t[i].name);
        float *x = l.p.data + l.p.t[i].offset, *gr = l.p.grad + l.p.t[i].offset;
        worst = fmax(worst, nn_gradcheck_max(label, objective, &c, x, gr, l.p.t[i].count, 2e-3f, 2e-3, 2e-2, 1000));
    }
    /* the frozen layers below the adapted ones are not differentiated: their
     * adapters do not exist */
    if (layers) CHECK_EQ_INT(l.p.n, 2 * layers * (int)strlen(targets));
    printf("  %s: %d tensors, worst |fd − analytic| %.2e\n", what, l.p.n, worst);
    ns_bert_tape_free(&tape);
    free(g), free(out);
    ns_lora_free(&l);
    ns_bert_free(m);
}

static void test_gradcheck_bert(void) { gradcheck(FIX "tiny-bert", "qkvo", 0, "bert qkvo"); }
static void test_gradcheck_mpnet(void) { gradcheck(FIX "tiny-mpnet", "qkvo", 0, "mpnet qkvo"); }
static void test_gradcheck_top_layer(void) { gradcheck(FIX "tiny-bert", "qv", 1, "bert qv top layer"); }

/* A copy of tiny-bert whose pooling is mode (mean / cls / max) and which
 * normalises or not. */
static bool variant(char *dir, size_t cap, const char *mode, bool normalize)
{
    char tmpl[] = "/tmp/ns_lora_XXXXXX";
    if (!mkdtemp(tmpl)) return false;
    snprintf(dir, cap, "%s", tmpl);
    const char *files[] = {"config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json",
                           "special_tokens_map.json", "sentence_bert_config.json"};
    char path[512], cmd[1024];
    for (int i = 0; i < 6; i++) {
        snprintf(cmd, sizeof cmd, "cp " FIX "tiny-bert/%s %s/", files[i], dir);
        if (system(cmd) != 0) return false;
    }
    snprintf(path, sizeof path, "%s/1_Pooling", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p %s", path);
    if (system(cmd) != 0) return false;
    snprintf(path, sizeof path, "%s/1_Pooling/config.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) return false;
    fprintf(f, "{\"word_embedding_dimension\": 8, \"pooling_mode_cls_token\": %s, \"pooling_mode_mean_tokens\": %s, "
               "\"pooling_mode_max_tokens\": %s}\n",
            !strcmp(mode, "cls") ? "true" : "false", !strcmp(mode, "mean") ? "true" : "false",
            !strcmp(mode, "max") ? "true" : "false");
    fclose(f);
    snprintf(path, sizeof path, "%s/modules.json", dir);
    f = fopen(path, "w");
    if (!f) return false;
    fprintf(f, "[{\"idx\": 0, \"path\": \"\", \"type\": \"sentence_transformers.models.Transformer\"},"
               " {\"idx\": 1, \"path\": \"1_Pooling\", \"type\": \"sentence_transformers.models.Pooling\"}%s]\n",
            normalize ? ", {\"idx\": 2, \"path\": \"2_Normalize\", \"type\": \"sentence_transformers.models.Normalize\"}"
                      : "");
    fclose(f);
    return true;
}

static void test_gradcheck_pooling(void)
{
    const char *modes[] = {"cls", "max", "mean"};
    for (int k = 0; k < 3; k++) {
        char dir[256], cmd[300], what[64];
        bool norm = k != 2;
        CHECK(variant(dir, sizeof dir, modes[k], norm));
        snprintf(what, sizeof what, "bert %s pooling%s", modes[k], norm ? "" : ", not normalised");
        ns_bert *m = load(dir);
        if (m) {
            const ns_bert_config *c = ns_bert_config_of(m);
            CHECK_EQ_INT(c->pooling, k == 0 ? NS_BERT_POOL_CLS : k == 1 ? NS_BERT_POOL_MAX : NS_BERT_POOL_MEAN);
            CHECK_EQ_INT(c->normalize, norm);
            ns_bert_free(m);
            gradcheck(dir, "qkvo", 0, what);
        }
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        CHECK(system(cmd) == 0);
    }
}

/* ---- PyTorch ------------------------------------------------------------ */

/* tiles: the encoder's products on the AMX tiles (forced: the tiny models
 * are not whole tiles), forward and LoRA's backward through the frozen
 * matrices; bf16x3's rounding (≈ 1e−5 of a term) then bounds the match. */
static void against_torch(const char *name, bool tiles)
{
    char dir[256], cs[64];
    snprintf(dir, sizeof dir, FIX "%s", name);
    snprintf(cs, sizeof cs, "../lora/%s", name); /* nn_check.h reads tests/fixtures/nn/<case> */
    ns_bert *m = load(dir);
    ns_lora l;
    if (m && tiles) CHECK(ns_bert_set_tiles(m, true));
    if (!m || !make(&l, m, 3, 6, "qkvo", 0, 1)) {
        ns_bert_free(m);
        return;
    }
    size_t nids, nlens, np, nd;
    int64_t *ids = nn_i64(cs, "ids", &nids), *lens64 = nn_i64(cs, "lens", &nlens);
    float *params = nn_f32(cs, "params", &np), *dout = nn_f32(cs, "dout", &nd);
    int n = (int)nlens, H = ns_bert_dim(m), lens[8];
    int32_t buf[8][64];
    const int32_t *p[8];
    size_t at = 0;
    CHECK(n >= 1 && n <= 8);
    for (int i = 0; i < n && i < 8; i++) {
        lens[i] = (int)lens64[i];
        CHECK(lens[i] >= 1 && lens[i] <= 64 && at + lens[i] <= nids);
        for (int k = 0; k < lens[i] && at < nids; k++) buf[i][k] = (int32_t)ids[at++];
        p[i] = buf[i];
    }
    /* the fixture's parameters, packed in table order */
    CHECK_EQ_INT(np, ns_params_count(&l.p));
    at = 0;
    for (int i = 0; i < l.p.n && at + l.p.t[i].count <= np; i++) {
        memcpy(l.p.data + l.p.t[i].offset, params + at, l.p.t[i].count * 4);
        at += l.p.t[i].count;
    }
    float *out = calloc((size_t)n * H, 4), *frozen = calloc((size_t)n * H, 4), *grad = calloc(np + 1, 4);
    ns_bert_lora v;
    ns_lora_view(&l, &v);
    ns_bert_tape tape = {0};
    ns_bert_forward(m, n, p, lens, NULL, frozen);
    ns_bert_forward_lora(m, &v, n, p, lens, &tape, NULL, out);
    ns_params_zero_grad(&l.p);
    ns_lora_backward(&l, m, &tape, dout);
    at = 0;
    for (int i = 0; i < l.p.n && at + l.p.t[i].count <= np; i++) {
        memcpy(grad + at, l.p.grad + l.p.t[i].offset, l.p.t[i].count * 4);
        at += l.p.t[i].count;
    }
    const double f = tiles ? 20 : 1;
    nn_cmp_fx(cs, "frozen", frozen, (size_t)n * H, 2e-6 * f, 0);
    nn_cmp_fx(cs, "out", out, (size_t)n * H, 2e-6 * f, 0);
    nn_cmp_fx(cs, "grad", grad, np, 2e-5 * f, 1e-4 * f);
    ns_bert_tape_free(&tape);
    free(ids), free(lens64), free(params), free(dout), free(out), free(frozen), free(grad);
    ns_lora_free(&l);
    ns_bert_free(m);
}

static void test_torch_bert(void) { against_torch("tiny-bert", false); }
static void test_torch_mpnet(void) { against_torch("tiny-mpnet", false); }
static void test_torch_tiles(void)
{
    against_torch("tiny-bert", true);
    against_torch("tiny-mpnet", true);
}

/* ---- the checkpoint record and errors ----------------------------------- */

static void test_ckpt(void)
{
    ns_bert *m = load(FIX "tiny-bert");
    ns_lora l, back;
    if (!m || !make(&l, m, 2, 5, "kv", 1, 8)) {
        ns_bert_free(m);
        return;
    }
    fill_b(&l, 3, 0.2f);
    ns_buf b;
    ns_buf_init(&b);
    ns_lora_json(&l, &b);
    CHECK_STR(b.data, "{\"rank\": 2, \"alpha\": 5, \"targets\": \"kv\", \"layers\": 1, \"first\": 1}");
    char path[] = "/tmp/ns_lora_ckpt_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    ns_error err;
    CHECK_EQ_INT(ns_params_save(&l.p, path, NULL, &err), NS_OK);
    ns_params file;
    ns_json j;
    CHECK_EQ_INT(ns_params_read(&file, path, NULL, &err), NS_OK);
    CHECK_EQ_INT(ns_json_parse(&j, b.data, b.len, "lora", &err), NS_OK);
    CHECK_EQ_INT(ns_lora_from_ckpt(&back, ns_bert_config_of(m), &j, &file, path, &err), NS_OK);
    CHECK_EQ_INT(back.p.total, l.p.total);
    CHECK(back.p.data && memcmp(back.p.data, l.p.data, l.p.total * 4) == 0);
    CHECK(ns_lora_hash(&back) == ns_lora_hash(&l));
    ns_lora_free(&back);
    /* a record asking for another rank does not match the tensors */
    ns_json j2;
    const char *bad = "{\"rank\": 3, \"alpha\": 5, \"targets\": \"kv\", \"layers\": 1}";
    CHECK_EQ_INT(ns_json_parse(&j2, bad, strlen(bad), "lora", &err), NS_OK);
    CHECK_EQ_INT(ns_lora_from_ckpt(&back, ns_bert_config_of(m), &j2, &file, path, &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "lora.1.key.A") != NULL);
    ns_json_free(&j2);
    const char *bad2 = "{\"rank\": 2, \"alpha\": 5, \"targets\": \"kx\", \"layers\": 1}";
    CHECK_EQ_INT(ns_json_parse(&j2, bad2, strlen(bad2), "lora", &err), NS_OK);
    CHECK_EQ_INT(ns_lora_from_ckpt(&back, ns_bert_config_of(m), &j2, &file, path, &err), NS_ERR_INPUT);
    ns_json_free(&j2);
    ns_json_free(&j);
    ns_params_free(&file);
    unlink(path);
    ns_buf_free(&b);
    ns_lora_free(&l);
    ns_bert_free(m);
}

static void test_config_errors(void)
{
    ns_bert *m = load(FIX "tiny-bert");
    if (!m) return;
    const ns_bert_config *c = ns_bert_config_of(m);
    ns_lora l;
    ns_error err;
    ns_lora_config bad[] = {{0, 1, NS_LORA_QV, 0}, {9, 1, NS_LORA_QV, 0}, {2, 1, 0, 0}, {2, 1, NS_LORA_QV, 3},
                            {2, 0, NS_LORA_QV, 0}};
    for (int k = 0; k < 5; k++) CHECK_EQ_INT(ns_lora_create(&l, c, &bad[k], 1, &err), NS_ERR_USAGE);
    CHECK_EQ_INT(ns_lora_targets_parse("qv"), NS_LORA_QV);
    CHECK_EQ_INT(ns_lora_targets_parse("oq"), (1u << NS_BERT_O) | (1u << NS_BERT_Q));
    CHECK_EQ_INT(ns_lora_targets_parse("qx"), 0);
    CHECK_EQ_INT(ns_lora_targets_parse(""), 0);
    char tn[8];
    ns_lora_targets_name(0xf, tn);
    CHECK_STR(tn, "qkvo");
    /* defaults: rank 8, alpha 16, query and value, every layer; A seeded, B zero */
    ns_lora_config d;
    ns_lora_config_init(&d);
    d.rank = 4;
    ns_lora a, a2, a3;
    CHECK_EQ_INT(ns_lora_create(&a, c, &d, 7, &err), NS_OK);
    CHECK_EQ_INT(ns_lora_create(&a2, c, &d, 7, &err), NS_OK);
    CHECK_EQ_INT(ns_lora_create(&a3, c, &d, 8, &err), NS_OK);
    CHECK_EQ_INT(a.p.n, 2 * 2 * c->layers);
    CHECK(ns_lora_hash(&a) == ns_lora_hash(&a2));
    CHECK(ns_lora_hash(&a) != ns_lora_hash(&a3));
    bool bzero = true, anz = false;
    float bound = 1.0f / sqrtf((float)c->hidden);
    for (int i = 0; i < c->layers * NS_BERT_NTARGETS; i++) {
        for (int k = 0; a.b[i] && k < c->hidden * 4; k++) bzero &= a.b[i][k] == 0.0f;
        for (int k = 0; a.a[i] && k < c->hidden * 4; k++) {
            anz |= a.a[i][k] != 0.0f;
            CHECK(fabsf(a.a[i][k]) <= bound);
        }
    }
    CHECK(bzero && anz);
    CHECK(a.a[NS_BERT_Q] && a.a[NS_BERT_V] && !a.a[NS_BERT_K] && !a.a[NS_BERT_O]);
    ns_lora_free(&a);
    ns_lora_free(&a2);
    ns_lora_free(&a3);
    ns_bert_free(m);
}

int main(void)
{
    NS_RUN(test_zero_delta_bert);
    NS_RUN(test_zero_delta_mpnet);
    NS_RUN(test_merge);
    NS_RUN(test_gradcheck_bert);
    NS_RUN(test_gradcheck_mpnet);
    NS_RUN(test_gradcheck_top_layer);
    NS_RUN(test_gradcheck_pooling);
    NS_RUN(test_torch_bert);
    NS_RUN(test_torch_mpnet);
    if (ns_tilegemm_usable()) NS_RUN(test_torch_tiles);
    else NS_SKIP(test_torch_tiles, "no AMX bfloat16 on this CPU (or no tile state from the kernel)");
    NS_RUN(test_ckpt);
    NS_RUN(test_config_errors);
    return ns_test_summary("test_lora");
}
