/* test_params.c — parameter blocks: the size table, 64-byte aligned offsets,
 * sticky declaration errors, seeded initialisation (torch's nn.Linear
 * bounds, reproducible, independent per tensor), and checkpoints: exact
 * round trips with and without moments, byte-identical rewrites, the CRC,
 * every truncation, corruption, bad magic / version, and loading into a
 * model whose names or shapes differ (NS_ERR_INPUT naming the tensor and
 * both shapes, the model left untouched). */
#include "nextstate/learn/params.h"
#include "nextstate/util/npy.h"
#include "nextstate/util/util.h"
#include "test.h"

#include <unistd.h>

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
    static char buf[4][160];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

/* A small model: linear 6→4 with bias, LayerNorm 4, a 3-d tensor. */
static void build(ns_params *p, int out)
{
    ns_params_init(p);
    ns_params_add_linear(p, "enc", 6, out, true);
    ns_params_add_layernorm(p, "enc.ln", out);
    int64_t s[3] = {2, 3, 5};
    ns_params_add(p, "cube", 3, s, NS_INIT_UNIFORM, ns_init_bound_xavier(3, 5));
}

static void test_table(void)
{
    ns_params p;
    build(&p, 4);
    ns_error err;
    CHECK(ns_params_alloc(&p, &err) == NS_OK);
    CHECK_EQ_INT(p.n, 5);
    CHECK_STR(p.t[0].name, "enc.weight");
    CHECK_STR(p.t[1].name, "enc.bias");
    CHECK_STR(p.t[2].name, "enc.ln.weight");
    CHECK_STR(p.t[3].name, "enc.ln.bias");
    CHECK_EQ_INT(p.t[0].shape[0], 4);
    CHECK_EQ_INT(p.t[0].shape[1], 6);
    CHECK_EQ_INT(ns_params_count(&p), 24 + 4 + 4 + 4 + 30);
    for (int i = 0; i < p.n; i++) {
        CHECK(p.t[i].offset % 16 == 0);
        if (i) CHECK(p.t[i].offset >= p.t[i - 1].offset + p.t[i - 1].count);
    }
    CHECK(p.total >= ns_params_count(&p));
    CHECK_EQ_INT(ns_params_find(&p, "cube"), 4);
    CHECK_EQ_INT(ns_params_find(&p, "nope"), -1);
    CHECK(ns_params_at(&p, p.grad, "enc.bias") == p.grad + p.t[1].offset);
    CHECK(ns_params_at(&p, p.data, "nope") == NULL);
    /* blocks are zeroed */
    for (size_t i = 0; i < p.total; i++) CHECK(p.data[i] == 0 && p.grad[i] == 0 && p.m[i] == 0 && p.v[i] == 0);
    ns_params_free(&p);
}

static void test_declaration_errors(void)
{
    ns_error err;
    ns_params p;
    ns_params_init(&p);
    int64_t s[1] = {3};
    CHECK(ns_params_add(&p, "a", 1, s, NS_INIT_ZEROS, 0) == 0);
    CHECK(ns_params_add(&p, "a", 1, s, NS_INIT_ZEROS, 0) < 0);
    CHECK(ns_params_add(&p, "b", 1, s, NS_INIT_ZEROS, 0) < 0 || 1); /* later adds still work… */
    CHECK(ns_params_alloc(&p, &err) == NS_ERR_INTERNAL);              /* …but the first error sticks */
    CHECK(strstr(err.msg, "'a' declared twice") != NULL);
    ns_params_free(&p);

    char longname[200];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    ns_params_init(&p);
    CHECK(ns_params_add(&p, longname, 1, s, NS_INIT_ZEROS, 0) < 0);
    CHECK(ns_params_alloc(&p, &err) == NS_ERR_INTERNAL);
    ns_params_free(&p);

    ns_params_init(&p);
    int64_t bad[1] = {-2};
    CHECK(ns_params_add(&p, "neg", 1, bad, NS_INIT_ZEROS, 0) < 0);
    CHECK(ns_params_alloc(&p, &err) == NS_ERR_INTERNAL && strstr(err.msg, "neg"));
    ns_params_free(&p);

    ns_params_init(&p);
    ns_params_add(&p, "a", 1, s, NS_INIT_ZEROS, 0);
    CHECK(ns_params_alloc(&p, &err) == NS_OK);
    CHECK(ns_params_add(&p, "late", 1, s, NS_INIT_ZEROS, 0) < 0);
    CHECK(strstr(p.bad, "late") != NULL);
    ns_params_free(&p);
}

static void test_init(void)
{
    ns_params p, q;
    ns_error err;
    ns_params_init(&p);
    ns_params_add_linear(&p, "big", 400, 300, true);
    ns_params_add_layernorm(&p, "ln", 7);
    CHECK(ns_params_alloc(&p, &err) == NS_OK);
    ns_params_init_values(&p, 13);
    float *w = ns_params_at(&p, p.data, "big.weight"), *b = ns_params_at(&p, p.data, "big.bias");
    double bound = 1.0 / sqrt(400.0), s = 0, s2 = 0, mx = 0;
    size_t n = 300 * 400;
    for (size_t i = 0; i < n; i++) s += w[i], s2 += (double)w[i] * w[i], mx = fmax(mx, fabs(w[i]));
    double mean = s / n, var = s2 / n - mean * mean;
    printf("  U(±1/√400): mean %.2g, var %.4g (expected %.4g), max %.4g ≤ %.4g\n", mean, var,
           bound * bound / 3, mx, bound);
    CHECK(mx <= bound && mx > 0.99 * bound);
    CHECK(fabs(mean) < 3 * bound / sqrt(3.0 * n) * 2);
    CHECK(fabs(var / (bound * bound / 3) - 1) < 0.02);
    for (int i = 0; i < 300; i++) CHECK(fabs(b[i]) <= bound);
    float *lw = ns_params_at(&p, p.data, "ln.weight"), *lb = ns_params_at(&p, p.data, "ln.bias");
    for (int i = 0; i < 7; i++) CHECK(lw[i] == 1.0f && lb[i] == 0.0f);
    CHECK(fabsf(ns_init_bound_xavier(3, 5) - (float)sqrt(6.0 / 8)) < 1e-7f);
    CHECK(fabsf(ns_init_bound_linear(256) - 0.0625f) < 1e-9f);

    /* same seed → same bytes; another seed → other values; a tensor added
     * in front leaves the others' values unchanged */
    ns_params_init(&q);
    int64_t s1[1] = {5};
    ns_params_add(&q, "extra", 1, s1, NS_INIT_UNIFORM, 1.0f);
    ns_params_add_linear(&q, "big", 400, 300, true);
    ns_params_add_layernorm(&q, "ln", 7);
    CHECK(ns_params_alloc(&q, &err) == NS_OK);
    ns_params_init_values(&q, 13);
    CHECK(memcmp(ns_params_at(&q, q.data, "big.weight"), w, n * sizeof(float)) == 0);
    CHECK(memcmp(ns_params_at(&q, q.data, "big.bias"), b, 300 * sizeof(float)) == 0);
    ns_params_init_values(&q, 14);
    CHECK(memcmp(ns_params_at(&q, q.data, "big.weight"), w, n * sizeof(float)) != 0);
    /* init also clears gradients and moments */
    p.grad[3] = 1, p.m[3] = 2, p.v[3] = 3;
    ns_params_init_values(&p, 13);
    CHECK(p.grad[3] == 0 && p.m[3] == 0 && p.v[3] == 0);
    p.grad[5] = 1;
    ns_params_zero_grad(&p);
    CHECK(p.grad[5] == 0);
    ns_params_free(&p);
    ns_params_free(&q);
}

static void fill_state(ns_params *p)
{
    ns_params_init_values(p, 99);
    for (size_t i = 0; i < p->total; i++) p->m[i] = (float)i * 0.5f, p->v[i] = (float)i * 0.25f + 1;
}

static bool same_tensors(const ns_params *a, const ns_params *b, bool moments)
{
    if (a->n != b->n) return false;
    for (int i = 0; i < a->n; i++) {
        size_t bytes = a->t[i].count * sizeof(float);
        if (memcmp(a->data + a->t[i].offset, b->data + b->t[i].offset, bytes)) return false;
        if (moments && (memcmp(a->m + a->t[i].offset, b->m + b->t[i].offset, bytes) ||
                        memcmp(a->v + a->t[i].offset, b->v + b->t[i].offset, bytes)))
            return false;
    }
    return true;
}

static void test_checkpoint_round_trip(void)
{
    ns_params p, q;
    ns_error err;
    build(&p, 4);
    CHECK(ns_params_alloc(&p, &err) == NS_OK);
    fill_state(&p);
    ns_ckpt_opts o = {true, 1234, "{\"model\": \"resmlp\"}"};
    const char *f1 = tmp_path("a.ckpt"), *f2 = tmp_path("b.ckpt"), *f3 = tmp_path("c.ckpt");
    CHECK(ns_params_save(&p, f1, &o, &err) == NS_OK);
    build(&q, 4);
    CHECK(ns_params_alloc(&q, &err) == NS_OK);
    ns_ckpt_info info;
    CHECK(ns_params_load(&q, f1, &info, &err) == NS_OK);
    CHECK(same_tensors(&p, &q, true));
    CHECK(info.moments && info.step == 1234);
    CHECK_STR(info.meta, "{\"model\": \"resmlp\"}");
    ns_ckpt_info_free(&info);
    /* rewriting gives the same bytes; the last 4 bytes are the CRC-32 */
    CHECK(ns_params_save(&q, f2, &o, &err) == NS_OK);
    char *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    CHECK(ns_read_file(f1, &a, &la, &err) == NS_OK && ns_read_file(f2, &b, &lb, &err) == NS_OK);
    CHECK(la == lb && memcmp(a, b, la) == 0);
    CHECK(memcmp(a, NS_CKPT_MAGIC, 8) == 0);
    uint32_t crc = ns_crc32(0, a, la - 4), stored;
    memcpy(&stored, a + la - 4, 4);
    CHECK(crc == stored);
    free(a), free(b);
    /* without moments: m, v come back zero; ns_params_read rebuilds the table */
    CHECK(ns_params_save(&p, f3, NULL, &err) == NS_OK);
    CHECK(ns_params_load(&q, f3, NULL, &err) == NS_OK);
    CHECK(same_tensors(&p, &q, false));
    for (size_t i = 0; i < q.total; i++) CHECK(q.m[i] == 0 && q.v[i] == 0);
    ns_params r;
    CHECK(ns_params_read(&r, f1, &info, &err) == NS_OK);
    CHECK(same_tensors(&p, &r, true));
    CHECK_STR(r.t[4].name, "cube");
    CHECK_EQ_INT(r.t[4].ndim, 3);
    CHECK_EQ_INT(r.t[4].shape[2], 5);
    ns_ckpt_info_free(&info);
    ns_params_free(&r);
    ns_params_free(&p);
    ns_params_free(&q);
}

static void test_checkpoint_mismatch(void)
{
    ns_params p, q;
    ns_error err;
    build(&p, 4);
    CHECK(ns_params_alloc(&p, &err) == NS_OK);
    fill_state(&p);
    const char *f = tmp_path("m.ckpt");
    CHECK(ns_params_save(&p, f, NULL, &err) == NS_OK);

    /* a different output width: first difference is enc.weight [4, 6] vs [5, 6] */
    build(&q, 5);
    CHECK(ns_params_alloc(&q, &err) == NS_OK);
    ns_params_init_values(&q, 1);
    float before = q.data[0];
    CHECK(ns_params_load(&q, f, NULL, &err) == NS_ERR_INPUT);
    printf("  %s\n", err.msg);
    CHECK(strstr(err.msg, "'enc.weight'") && strstr(err.msg, "[4, 6]") && strstr(err.msg, "[5, 6]"));
    CHECK(q.data[0] == before); /* untouched */
    ns_params_free(&q);

    /* a renamed tensor */
    ns_params_init(&q);
    ns_params_add_linear(&q, "dec", 6, 4, true);
    CHECK(ns_params_alloc(&q, &err) == NS_OK);
    CHECK(ns_params_load(&q, f, NULL, &err) == NS_ERR_INPUT);
    printf("  %s\n", err.msg);
    CHECK(strstr(err.msg, "'enc.weight'") && strstr(err.msg, "'dec.weight'"));
    ns_params_free(&q);

    /* one tensor fewer / more */
    ns_params_init(&q);
    ns_params_add_linear(&q, "enc", 6, 4, true);
    ns_params_add_layernorm(&q, "enc.ln", 4);
    CHECK(ns_params_alloc(&q, &err) == NS_OK);
    CHECK(ns_params_load(&q, f, NULL, &err) == NS_ERR_INPUT);
    printf("  %s\n", err.msg);
    CHECK(strstr(err.msg, "'cube'") != NULL);
    ns_params_free(&q);
    build(&q, 4);
    int64_t s[1] = {2};
    ns_params_add(&q, "tail", 1, s, NS_INIT_ZEROS, 0);
    CHECK(ns_params_alloc(&q, &err) == NS_OK);
    CHECK(ns_params_load(&q, f, NULL, &err) == NS_ERR_INPUT);
    printf("  %s\n", err.msg);
    CHECK(strstr(err.msg, "'tail'") != NULL);
    ns_params_free(&q);

    /* a shape with the same element count but another rank */
    ns_params_init(&q);
    ns_params_add_linear(&q, "enc", 6, 4, true);
    ns_params_add_layernorm(&q, "enc.ln", 4);
    int64_t s2[2] = {6, 5};
    ns_params_add(&q, "cube", 2, s2, NS_INIT_ZEROS, 0);
    CHECK(ns_params_alloc(&q, &err) == NS_OK);
    CHECK(ns_params_load(&q, f, NULL, &err) == NS_ERR_INPUT);
    CHECK(strstr(err.msg, "[2, 3, 5]") && strstr(err.msg, "[6, 5]"));
    ns_params_free(&q);
    ns_params_free(&p);
}

static void test_checkpoint_corruption(void)
{
    ns_params p, q;
    ns_error err;
    build(&p, 4);
    CHECK(ns_params_alloc(&p, &err) == NS_OK);
    fill_state(&p);
    ns_ckpt_opts o = {true, 7, "meta"};
    const char *f = tmp_path("x.ckpt"), *g = tmp_path("y.ckpt");
    CHECK(ns_params_save(&p, f, &o, &err) == NS_OK);
    char *img;
    size_t len;
    CHECK(ns_read_file(f, &img, &len, &err) == NS_OK);
    build(&q, 4);
    CHECK(ns_params_alloc(&q, &err) == NS_OK);
    ns_params_init_values(&q, 5);
    float keep = q.data[1];
    /* every truncation fails cleanly and leaves q untouched (every cut in
     * the header and table, then every 13th byte: each write is fsync'ed) */
    int fails = 0, mention = 0, cuts = 0;
    for (size_t cut = 0; cut < len; cut += cut < 200 || cut + 8 > len ? 1 : 13) {
        cuts++;
        CHECK(ns_write_file_atomic(g, img, cut, &err) == NS_OK);
        ns_status st = ns_params_load(&q, g, NULL, &err);
        fails += st == NS_ERR_INPUT;
        mention += strstr(err.msg, "truncated") != NULL || strstr(err.msg, "magic") != NULL;
    }
    printf("  %d truncations: %d rejected, %d say truncated/bad magic; e.g. \"%s\"\n", cuts, fails, mention,
           err.msg);
    CHECK_EQ_INT(fails, cuts);
    CHECK_EQ_INT(mention, cuts);
    CHECK(q.data[1] == keep);
    /* flipped bytes are caught (same sampling) */
    fails = 0, cuts = 0;
    for (size_t i = 0; i < len; i += i < 200 || i + 8 > len ? 1 : 13) {
        cuts++;
        img[i] ^= 0x20;
        CHECK(ns_write_file_atomic(g, img, len, &err) == NS_OK);
        fails += ns_params_load(&q, g, NULL, &err) == NS_ERR_INPUT;
        img[i] ^= 0x20;
    }
    printf("  %d flipped bytes: %d rejected\n", cuts, fails);
    CHECK_EQ_INT(fails, cuts);
    CHECK(q.data[1] == keep);
    /* bad magic, future version, missing file */
    img[0] = 'X';
    CHECK(ns_write_file_atomic(g, img, len, &err) == NS_OK);
    CHECK(ns_params_load(&q, g, NULL, &err) == NS_ERR_INPUT && strstr(err.msg, "magic"));
    img[0] = 'N';
    img[8] = 9;
    CHECK(ns_write_file_atomic(g, img, len, &err) == NS_OK);
    CHECK(ns_params_load(&q, g, NULL, &err) == NS_ERR_INPUT && strstr(err.msg, "version 9"));
    CHECK(ns_params_load(&q, tmp_path("absent.ckpt"), NULL, &err) == NS_ERR_IO);
    /* the intact file still loads */
    CHECK(ns_params_load(&q, f, NULL, &err) == NS_OK && same_tensors(&p, &q, true));
    free(img);
    ns_params_free(&p);
    ns_params_free(&q);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ns_test_params.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    NS_RUN(test_table);
    NS_RUN(test_declaration_errors);
    NS_RUN(test_init);
    NS_RUN(test_checkpoint_round_trip);
    NS_RUN(test_checkpoint_mismatch);
    NS_RUN(test_checkpoint_corruption);
    const char *files[] = {"a.ckpt", "b.ckpt", "c.ckpt", "m.ckpt", "x.ckpt", "y.ckpt"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) unlink(tmp_path(files[i]));
    rmdir(tmpdir);
    return ns_test_summary("test_params");
}
