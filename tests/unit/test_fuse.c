/* test_fuse.c — the batch-1 fused elementwise passes (nn.h) against the
 * unfused calls they replace, to the bit: ns_layernorm_gelu1 and
 * ns_layernorm_gelu2 = ns_layernorm_forward (one row) then ns_gelu_forward,
 * ns_gelu_forward_max = ns_gelu_forward, each returning max|out|; the int8
 * and int4 layers given that max (ns_linear_forward_i8_max, _i4_max,
 * ns_linear_forward_as_max) = the layers finding it themselves.  Widths
 * that leave vector tails (1, 7, 16, 33, 384; 600 > the GELU kernel's
 * 512-input chunk), inputs on both sides of erf's split, in place too.  And
 * ns_world_predict1, whose heads run through them, = project + project +
 * transition in every precision, for heads of equal shape (side by side),
 * of different hidden widths (one after the other), three layers and one. */
#include "nextstate/learn/nn.h"
#include "nextstate/learn/world.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "test.h"
#include "world_check.h"

static const int widths[] = {1, 7, 16, 33, 384, 600};
enum { NW = sizeof widths / sizeof widths[0], MAXW = 600 };

/* n values in (-a, a) + c, a fixed pseudo-random sequence per seed */
static void fill(float *x, int n, float a, float c, uint32_t seed)
{
    uint32_t r = seed * 2654435761u | 1u;
    for (int i = 0; i < n; i++) {
        r = r * 1664525u + 1013904223u;
        x[i] = c + a * ((float)(r >> 8) / 8388608.0f - 1.0f);
    }
}

static float absmax_ref(const float *x, int n)
{
    float m = 0;
    for (int i = 0; i < n; i++) m = fabsf(x[i]) > m ? fabsf(x[i]) : m;
    return m;
}

static int same_bits(const float *a, const float *b, int n) { return memcmp(a, b, (size_t)n * sizeof(float)) == 0; }

/* ns_layernorm_forward + ns_gelu_forward of one row into ref */
static void ln_gelu_ref(float *ref, const float *x, const float *w, const float *b, int C)
{
    float y[MAXW], mean, rstd;
    ns_layernorm_forward(y, &mean, &rstd, x, w, b, 1, C, NS_LN_EPS);
    ns_gelu_forward(ref, y, (size_t)C);
}

/* affine: 0 none, 1 weight only, 2 weight and bias (LayerNorm's cases) */
static void test_ln_gelu1(void)
{
    float x[MAXW], w[MAXW], b[MAXW], ref[MAXW], got[MAXW];
    for (int t = 0; t < NW; t++)
        for (int affine = 0; affine < 3; affine++) {
            int C = widths[t];
            fill(x, C, 4.0f, 0.3f, (uint32_t)(C + 17 * affine));
            fill(w, C, 1.5f, 0.5f, (uint32_t)C + 5u); /* |y| up to ≈ 5: both sides of erf's split */
            fill(b, C, 0.5f, 0.0f, (uint32_t)C + 9u);
            const float *wp = affine ? w : NULL, *bp = affine == 2 ? b : NULL;
            ln_gelu_ref(ref, x, wp, bp, C);
            float m = ns_layernorm_gelu1(got, x, wp, bp, C, NS_LN_EPS);
            CHECK(same_bits(ref, got, C));
            CHECK(m == absmax_ref(ref, C));
            /* in place */
            memcpy(got, x, (size_t)C * sizeof(float));
            m = ns_layernorm_gelu1(got, got, wp, bp, C, NS_LN_EPS);
            CHECK(same_bits(ref, got, C));
            CHECK(m == absmax_ref(ref, C));
        }
}

static void test_ln_gelu2(void)
{
    float x[MAXW], z[MAXW], w0[MAXW], b0[MAXW], w1[MAXW], b1[MAXW];
    float r0[MAXW], r1[MAXW], g0[MAXW], g1[MAXW];
    for (int t = 0; t < NW; t++) {
        int C = widths[t];
        fill(x, C, 3.0f, 0.2f, (uint32_t)C + 1u);
        fill(z, C, 6.0f, -1.0f, (uint32_t)C + 2u); /* another scale: the rows' statistics differ */
        fill(w0, C, 1.0f, 1.0f, (uint32_t)C + 3u);
        fill(b0, C, 0.3f, 0.0f, (uint32_t)C + 4u);
        fill(w1, C, 2.0f, 0.0f, (uint32_t)C + 5u);
        fill(b1, C, 0.3f, 0.1f, (uint32_t)C + 6u);
        ln_gelu_ref(r0, x, w0, b0, C);
        ln_gelu_ref(r1, z, w1, b1, C);
        float *out[2] = {g0, g1}, mx[2] = {-1, -1};
        const float *in[2] = {x, z}, *wt[2] = {w0, w1}, *bs[2] = {b0, b1};
        ns_layernorm_gelu2(out, in, wt, bs, C, NS_LN_EPS, mx);
        CHECK(same_bits(r0, g0, C));
        CHECK(same_bits(r1, g1, C));
        CHECK(mx[0] == absmax_ref(r0, C));
        CHECK(mx[1] == absmax_ref(r1, C));
        /* no affine part on one row, in place on both */
        ln_gelu_ref(r1, z, NULL, NULL, C);
        memcpy(g0, x, (size_t)C * sizeof(float));
        memcpy(g1, z, (size_t)C * sizeof(float));
        const float *in2[2] = {g0, g1}, *wt2[2] = {w0, NULL}, *bs2[2] = {b0, NULL};
        ns_layernorm_gelu2(out, in2, wt2, bs2, C, NS_LN_EPS, mx);
        CHECK(same_bits(r0, g0, C));
        CHECK(same_bits(r1, g1, C));
        CHECK(mx[1] == absmax_ref(r1, C));
    }
}

static void test_gelu_max(void)
{
    float x[MAXW], ref[MAXW], got[MAXW];
    for (int t = 0; t < NW; t++) {
        int C = widths[t];
        fill(x, C, 8.0f, -0.5f, (uint32_t)C + 11u);
        ns_gelu_forward(ref, x, (size_t)C);
        float m = ns_gelu_forward_max(got, x, (size_t)C);
        CHECK(same_bits(ref, got, C));
        CHECK(m == absmax_ref(ref, C));
    }
    CHECK(ns_gelu_forward_max(got, x, 0) == 0.0f);
}

/* a layer of W[OC×C] packed for int8 and (C a multiple of 64) int4: the
 * known-max forms = the plain ones at batch 1 */
static void test_linear_max(void)
{
    const int ocs[] = {1, 130};
    float x[MAXW], *W = malloc((size_t)MAXW * 130 * sizeof(float)), bias[130], ref[130], got[130];
    for (int t = 0; t < NW; t++)
        for (int u = 0; u < 2; u++) {
            int C = widths[t], OC = ocs[u];
            fill(W, C * OC, 0.2f, 0.0f, (uint32_t)(C * OC));
            fill(bias, OC, 0.1f, 0.0f, 3u);
            fill(x, C, 2.0f, 0.1f, (uint32_t)C + 7u);
            float m = absmax_ref(x, C);
            uint8_t *p8 = aligned_alloc(64, (ns_i8_packed_size(C, OC) + 63) / 64 * 64);
            ns_i8_pack(p8, W, C, OC);
            ns_linear_forward_i8(ref, x, p8, bias, 1, C, OC);
            memset(got, 0xff, sizeof got);
            ns_linear_forward_i8_max(got, x, m, p8, bias, C, OC);
            CHECK(same_bits(ref, got, OC));
            /* and = the row in a batch of two (with AVX-512 VNNI a kernel of its own, not the batch-1 path) */
            float x2[2 * MAXW], ref2[2 * 130];
            memcpy(x2, x, (size_t)C * sizeof(float));
            memcpy(x2 + C, x, (size_t)C * sizeof(float));
            ns_linear_forward_i8(ref2, x2, p8, bias, 2, C, OC);
            CHECK(same_bits(ref2, got, OC));
            memset(got, 0xff, sizeof got);
            ns_linear_forward_as_max(got, x, m, W, NULL, p8, bias, C, OC);
            CHECK(same_bits(ref, got, OC));
            ns_linear_forward(ref, x, W, bias, 1, C, OC); /* no packing: the float layer, max ignored */
            ns_linear_forward_as_max(got, x, m, W, NULL, NULL, bias, C, OC);
            CHECK(same_bits(ref, got, OC));
            free(p8);
            size_t n4 = ns_i4_packed_size(C, OC, NS_I4_GROUP);
            CHECK((n4 > 0) == (C % NS_I4_GROUP == 0));
            if (!n4) continue;
            uint8_t *p4 = aligned_alloc(64, (n4 + 63) / 64 * 64);
            CHECK(ns_i4_pack(p4, W, C, OC, NS_I4_GROUP) == NS_OK);
            CHECK(ns_linear_forward_i4(ref, x, p4, bias, 1, C, OC) == NS_OK);
            memset(got, 0xff, sizeof got);
            CHECK(ns_linear_forward_i4_max(got, x, m, p4, bias, C, OC) == NS_OK);
            CHECK(same_bits(ref, got, OC));
            CHECK(ns_linear_forward_i4_max(got, x, m, p4, bias, C + 64, OC) == NS_ERR_UNSUPPORTED); /* header */
            free(p4);
        }
    free(W);
}

/* A chain as world.c's batch-1 heads run it: GELU(LN(·)), then the int8 and
 * int4 layers on the returned max, equal to the unfused chain. */
static void test_chain(void)
{
    enum { C = 384, OC = 128 };
    float x[C], w[C], b[C], g[C], ref_g[C], ref[OC], got[OC], bias[OC];
    float *W = malloc((size_t)C * OC * sizeof(float));
    fill(W, C * OC, 0.1f, 0.0f, 21u);
    fill(bias, OC, 0.1f, 0.0f, 22u);
    fill(x, C, 5.0f, 1.0f, 23u);
    fill(w, C, 1.0f, 1.0f, 24u);
    fill(b, C, 0.2f, 0.0f, 25u);
    uint8_t *p8 = aligned_alloc(64, (ns_i8_packed_size(C, OC) + 63) / 64 * 64);
    uint8_t *p4 = aligned_alloc(64, (ns_i4_packed_size(C, OC, NS_I4_GROUP) + 63) / 64 * 64);
    ns_i8_pack(p8, W, C, OC);
    CHECK(ns_i4_pack(p4, W, C, OC, NS_I4_GROUP) == NS_OK);
    ln_gelu_ref(ref_g, x, w, b, C);
    float m = ns_layernorm_gelu1(g, x, w, b, C, NS_LN_EPS);
    ns_linear_forward_i8(ref, ref_g, p8, bias, 1, C, OC);
    ns_linear_forward_i8_max(got, g, m, p8, bias, C, OC);
    CHECK(same_bits(ref, got, OC));
    CHECK(ns_linear_forward_i4(ref, ref_g, p4, bias, 1, C, OC) == NS_OK);
    CHECK(ns_linear_forward_i4_max(got, g, m, p4, bias, C, OC) == NS_OK);
    CHECK(same_bits(ref, got, OC));
    free(p8);
    free(p4);
    free(W);
}

static void test_predict1_shapes(void)
{
    /* state hidden, action hidden, layers */
    const int shapes[4][3] = {{128, 128, 2}, {192, 128, 2}, {128, 128, 3}, {128, 128, 1}};
    enum { NS_ = 3, NA = 2, D = 128, O = 64 };
    ns_features fs, fa;
    world_dense(&fs, NS_, D, 0.61f, 2.0f, 0.3f);
    world_dense(&fa, NA, D, 0.43f, 2.0f, 0.3f);
    ns_world_ws *ws = ns_world_ws_new();
    for (int t = 0; t < 4; t++) {
        ns_world_config c;
        ns_world_config_init(&c);
        c.state_dim = c.action_dim = D, c.out = O;
        c.state_hidden = shapes[t][0], c.action_hidden = shapes[t][1], c.layers = shapes[t][2];
        ns_world w;
        ns_error e;
        CHECK(ns_world_create(&w, &c, 3, &e) == NS_OK);
        for (int mode = 0; mode < 4; mode++) { /* float, bfloat16, int8, int4 */
            ns_world_set_bf16(&w, mode == 1);
            ns_world_set_int8(&w, mode == 2);
            if (mode == 3) ns_world_set_int4(&w, true);
            int same = world_predict1_same(&w, ws, &fs, NS_, &fa, NA, NULL);
            if (!same) printf("  shape %d mode %d differs\n", t, mode);
            CHECK(same);
        }
        ns_world_free(&w);
    }
    ns_world_ws_free(ws);
    ns_features_free(&fs);
    ns_features_free(&fa);
}

int main(void)
{
    NS_RUN(test_ln_gelu1);
    NS_RUN(test_ln_gelu2);
    NS_RUN(test_gelu_max);
    NS_RUN(test_linear_max);
    NS_RUN(test_chain);
    NS_RUN(test_predict1_shapes);
    return ns_test_summary("test_fuse");
}
