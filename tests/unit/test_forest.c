/* test_forest.c — the flat tree-ensemble evaluator (forest.h) against
 * libxgboost: models trained here (several outputs, missing inputs, early
 * stopping so only the first rounds count) give bit-identical predictions
 * from ns_forest_predict and ns_xgb_predict; the binary file round-trips
 * exactly (version 2, used in place when read from a file; version 1 of
 * earlier builds still loads), and a flipped byte, a truncation, a foreign
 * file or a backward child is refused.
 * The compact node form (forest.h) and the general one predict the same,
 * and so does the memoised prediction (ns_forest_predict_memo). */
#include "nextstate/learn/forest.h"
#include "nextstate/learn/xgb.h"
#include "test.h"

#include <stdint.h>
#include <unistd.h>
#include "nextstate/util/npy.h"

static void put32(ns_buf *b, uint32_t v)
{
    unsigned char c[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    ns_buf_put(b, c, 4);
}

/* The version-1 file of f (node arrays, CRC-32), as earlier builds wrote it. */
static void save_v1(const ns_forest *f, ns_buf *b)
{
    ns_buf_put(b, "NSFOREST", 8);
    put32(b, 1);
    put32(b, 0);
    uint32_t u;
    put32(b, (uint32_t)f->nfeat), put32(b, (uint32_t)f->nout), put32(b, (uint32_t)f->ntrees), put32(b, (uint32_t)f->nnodes);
    memcpy(&u, &f->base_score, 4), put32(b, u);
    for (int t = 0; t < f->ntrees; t++) put32(b, (uint32_t)f->tree_root[t]);
    for (int t = 0; t < f->ntrees; t++) put32(b, (uint32_t)f->tree_out[t]);
    for (int i = 0; i < f->nnodes; i++) put32(b, (uint32_t)f->feat[i]);
    for (int i = 0; i < f->nnodes; i++) memcpy(&u, &f->value[i], 4), put32(b, u);
    for (int i = 0; i < f->nnodes; i++) put32(b, (uint32_t)f->left[i]);
    for (int i = 0; i < f->nnodes; i++) put32(b, (uint32_t)f->right[i]);
    ns_buf_put(b, f->default_left, (size_t)f->nnodes);
    uint32_t c = ns_crc32(0, b->data + 16, b->len - 16);
    memcpy(b->data + 12, &c, 4); /* little-endian hosts only, as the test's checks */
}

static void fill(float *X, float *Y, int n, int nf, int no, uint64_t seed, double missing)
{
    ns_rng r;
    ns_rng_seed(&r, seed);
    for (int i = 0; i < n; i++) {
        float *x = X + (size_t)i * (size_t)nf;
        for (int j = 0; j < nf; j++) x[j] = ns_rng_double(&r) < missing ? NAN : (float)(ns_rng_double(&r) * 4 - 1);
        for (int k = 0; Y && k < no; k++) {
            float a = isnan(x[k % nf]) ? 0.3f : x[k % nf], b = isnan(x[(k + 1) % nf]) ? -0.2f : x[(k + 1) % nf];
            Y[(size_t)i * (size_t)no + k] = a * b + (a > 0.5f ? 1.0f : 0.0f) + (float)(0.1 * ns_rng_double(&r));
        }
    }
}

static void check_model(int nf, int no, int depth, int rounds, bool with_val, uint64_t seed)
{
    int n = 300, nv = 100, nt = 500;
    float *X = malloc(sizeof(float) * (size_t)n * (size_t)nf), *Y = malloc(sizeof(float) * (size_t)n * (size_t)no);
    float *Xv = malloc(sizeof(float) * (size_t)nv * (size_t)nf), *Yv = malloc(sizeof(float) * (size_t)nv * (size_t)no);
    float *Xt = malloc(sizeof(float) * (size_t)nt * (size_t)nf);
    fill(X, Y, n, nf, no, seed, 0.1);
    fill(Xv, Yv, nv, nf, no, seed + 1, 0.1);
    fill(Xt, NULL, nt, nf, no, seed + 2, 0.2);
    ns_xgb m;
    ns_xgb_init(&m);
    ns_xgb_params p;
    ns_xgb_params_default(&p);
    p.max_depth = depth;
    p.max_rounds = rounds;
    p.early_stop = 5;
    ns_error e = {0};
    ns_status st = ns_xgb_train(&m, X, Y, n, nf, no, with_val ? Xv : NULL, with_val ? Yv : NULL, with_val ? nv : 0,
                                &p, &e);
    CHECK(st == NS_OK);
    if (st != NS_OK) printf("  train: %s\n", e.msg);
    ns_buf js;
    ns_buf_init(&js);
    CHECK(ns_xgb_save_json(&m, &js, &e) == NS_OK);
    ns_forest f;
    st = ns_forest_from_xgb_json(&f, js.data, js.len, nf, no, (m.best_round + 1) * no, &e);
    CHECK(st == NS_OK);
    if (st != NS_OK) printf("  forest: %s\n", e.msg);
    CHECK_EQ_INT(f.ntrees, (m.best_round + 1) * no);
    float *a = malloc(sizeof(float) * (size_t)nt * (size_t)no), *b = malloc(sizeof(float) * (size_t)nt * (size_t)no);
    CHECK(ns_xgb_predict(&m, Xt, nt, a, &e) == NS_OK);
    ns_forest_predict(&f, Xt, nt, b);
    int diff = 0;
    for (int i = 0; i < nt * no; i++) diff += memcmp(&a[i], &b[i], sizeof(float)) != 0;
    CHECK_EQ_INT(diff, 0);
    /* XGBoost's trees take the compact form; the general one agrees */
    CHECK(f.cnodes != NULL && f.nodes == NULL);
    ns_forest general;
    CHECK(ns_forest_from_xgb_json(&general, js.data, js.len, nf, no, (m.best_round + 1) * no, &e) == NS_OK);
    ns_forest_use_general(&general);
    CHECK(general.cnodes == NULL && general.nodes != NULL);
    float *d = malloc(sizeof(float) * (size_t)nt * (size_t)no);
    ns_forest_predict(&general, Xt, nt, d);
    CHECK(memcmp(b, d, sizeof(float) * (size_t)nt * (size_t)no) == 0);
    /* memoised prediction over a walk of inputs, each the last with one or
     * two features changed (NaN too), and over unrelated inputs, in both
     * forms: ns_forest_predict's outputs, bit for bit */
    float *W = malloc(sizeof(float) * (size_t)nt * (size_t)nf);
    memcpy(W, Xt, sizeof(float) * (size_t)nf);
    for (int i = 1; i < nt; i++) {
        float *w = W + (size_t)i * (size_t)nf;
        memcpy(w, w - nf, sizeof(float) * (size_t)nf);
        w[(i * 7) % nf] = Xt[(size_t)i * (size_t)nf + (size_t)((i * 7) % nf)];
        if (i % 3 == 0) w[(i * 5 + 1) % nf] = Xt[(size_t)i * (size_t)nf + (size_t)((i * 5 + 1) % nf)];
    }
    float *wb = malloc(sizeof(float) * (size_t)nt * (size_t)no);
    ns_forest_predict(&f, W, nt, wb);
    for (int form = 0; form < 2; form++) {
        ns_forest *ff = form ? &general : &f;
        for (int pass = 0; pass < 2; pass++) {
            const float *in = pass ? Xt : W, *want = pass ? b : wb;
            ns_forest_memo memo;
            ns_forest_memo_init(&memo);
            int mdiff = 0;
            for (int i = 0; i < nt; i++) {
                ns_forest_predict_memo(ff, &memo, in + (size_t)i * (size_t)nf, d);
                mdiff += memcmp(d, want + (size_t)i * (size_t)no, sizeof(float) * (size_t)no) != 0;
            }
            CHECK_EQ_INT(mdiff, 0);
            ns_forest_memo_free(&memo);
        }
    }
    free(W), free(wb);
    ns_forest_free(&general);
    free(d);
    /* the binary form round-trips bit for bit */
    ns_buf bin;
    ns_buf_init(&bin);
    ns_forest_save(&f, &bin);
    ns_forest g;
    CHECK(ns_forest_load(&g, bin.data, bin.len, "mem", &e) == NS_OK);
    float *c = malloc(sizeof(float) * (size_t)nt * (size_t)no);
    ns_forest_predict(&g, Xt, nt, c);
    CHECK(memcmp(b, c, sizeof(float) * (size_t)nt * (size_t)no) == 0);
    ns_forest_free(&g);
    /* damage is refused */
    bin.data[bin.len / 2] ^= 0x10;
    CHECK(ns_forest_load(&g, bin.data, bin.len, "mem", &e) == NS_ERR_INPUT);
    CHECK(strstr(e.msg, "checksum") != NULL);
    bin.data[bin.len / 2] ^= 0x10;
    CHECK(ns_forest_load(&g, bin.data, bin.len - 1, "mem", &e) == NS_ERR_INPUT);
    CHECK(ns_forest_load(&g, js.data, js.len, "mem", &e) == NS_ERR_INPUT);
    CHECK(strstr(e.msg, "magic") != NULL);
    CHECK(ns_forest_load(&g, bin.data, 3, "mem", &e) == NS_ERR_INPUT);
    /* version 2 (what save writes for XGBoost's trees: compact nodes,
     * CRC-32C): a split whose child is not after it is refused */
    CHECK(bin.len > 16 && !memcmp(bin.data + 8, "\x02\0\0\0", 4));
    {
        size_t nodes = 48 + 8 * (size_t)f.ntrees; /* the first tree's root: a split */
        uint16_t l;
        memcpy(&l, bin.data + nodes + 6, 2);
        uint16_t back = (uint16_t)(l & 0x8000); /* left child 0: the node itself */
        memcpy(bin.data + nodes + 6, &back, 2);
        uint32_t crc = ns_crc32c(0, bin.data + 16, bin.len - 16);
        memcpy(bin.data + 12, &crc, 4);
        CHECK(ns_forest_load(&g, bin.data, bin.len, "mem", &e) == NS_ERR_INPUT);
        CHECK(strstr(e.msg, "bad child") != NULL);
    }
    /* version 1 files (earlier builds) still load, to the same predictions */
    ns_buf v1;
    ns_buf_init(&v1);
    save_v1(&f, &v1);
    CHECK(ns_forest_load(&g, v1.data, v1.len, "mem", &e) == NS_OK);
    ns_forest_predict(&g, Xt, nt, c);
    CHECK(memcmp(b, c, sizeof(float) * (size_t)nt * (size_t)no) == 0);
    ns_forest_free(&g);
    ns_buf_free(&v1);
    /* a file read back is used in place (mapped): the same predictions,
     * memoised too, and the general form built from it agrees */
    char path[256];
    snprintf(path, sizeof path, "/tmp/ns_test_forest_%d.forest", (int)getpid());
    CHECK(ns_forest_write(&f, path, &e) == NS_OK);
    CHECK(ns_forest_read(&g, path, &e) == NS_OK);
    CHECK(g.map.data != NULL && g.feat == NULL);
    ns_forest_predict(&g, Xt, nt, c);
    CHECK(memcmp(b, c, sizeof(float) * (size_t)nt * (size_t)no) == 0);
    {
        ns_forest_memo memo;
        ns_forest_memo_init(&memo);
        int mdiff = 0;
        for (int i = 0; i < nt; i++) {
            ns_forest_predict_memo(&g, &memo, Xt + (size_t)i * (size_t)nf, c);
            mdiff += memcmp(c, b + (size_t)i * (size_t)no, sizeof(float) * (size_t)no) != 0;
        }
        CHECK_EQ_INT(mdiff, 0);
        ns_forest_memo_free(&memo);
    }
    ns_forest_use_general(&g);
    CHECK(g.map.data == NULL && g.cnodes == NULL && g.nodes != NULL);
    ns_forest_predict(&g, Xt, nt, c);
    CHECK(memcmp(b, c, sizeof(float) * (size_t)nt * (size_t)no) == 0);
    ns_forest_free(&g);
    unlink(path);
    ns_buf_free(&bin);
    free(a), free(b), free(c);
    ns_forest_free(&f);
    ns_buf_free(&js);
    ns_xgb_free(&m);
    free(X), free(Y), free(Xv), free(Yv), free(Xt);
}

static void test_bit_identical_small(void) { check_model(4, 2, 3, 20, false, 7); }
static void test_bit_identical_early_stop(void) { check_model(12, 5, 6, 200, true, 11); }
static void test_bit_identical_deep(void) { check_model(30, 3, 8, 60, true, 23); }

/* A crafted binary forest whose node points back at its root is refused. */
static void test_cycle_refused(void)
{
    ns_forest f;
    ns_forest_init(&f);
    f.nfeat = 1, f.nout = 1, f.ntrees = 1, f.nnodes = 3;
    int32_t root = 0, out = 0, feat[3] = {0, 0, -1}, left[3] = {1, 0, -1}, right[3] = {2, 2, -1};
    float value[3] = {0.5f, 0.5f, 1.0f};
    uint8_t dl[3] = {1, 1, 0};
    f.tree_root = &root, f.tree_out = &out, f.feat = feat, f.left = left, f.right = right, f.value = value;
    f.default_left = dl;
    ns_buf b;
    ns_buf_init(&b);
    ns_forest_save(&f, &b);
    ns_forest g;
    ns_error e = {0};
    CHECK(ns_forest_load(&g, b.data, b.len, "mem", &e) == NS_ERR_INPUT);
    CHECK(strstr(e.msg, "bad child") != NULL);
    left[1] = -1, feat[1] = -1;
    ns_buf_free(&b);
    ns_buf_init(&b);
    ns_forest_save(&f, &b);
    CHECK(ns_forest_load(&g, b.data, b.len, "mem", &e) == NS_OK);
    float x = 0.25f, y = 0;
    ns_forest_predict(&g, &x, 1, &y);
    CHECK(y == 0.5f);
    ns_forest_free(&g);
    ns_buf_free(&b);
}

int main(void)
{
    NS_RUN(test_bit_identical_small);
    NS_RUN(test_bit_identical_early_stop);
    NS_RUN(test_bit_identical_deep);
    NS_RUN(test_cycle_refused);
    return ns_test_summary("test_forest");
}
