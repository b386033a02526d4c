/* test_int4.c — int4 inference (nn.h ns_i4_*, world.h ns_world_set_int4):
 * the packing round trip, the layer against a scalar recomputation of nn.h's
 * formula (exact integer sums per group, then the same float operations:
 * equal bits), unsupported shapes refused without writing, and the world
 * model's batch-1 query with int4 heads near the float one and equal to its
 * own three-call form. */
#include "nextstate/learn/nn.h"
#include "nextstate/learn/world.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "test.h"
#include "world_check.h"

static uint8_t *pack(const float *W, int C, int OC, int G)
{
    size_t n = ns_i4_packed_size(C, OC, G);
    uint8_t *p = aligned_alloc(64, (n + 63) / 64 * 64);
    if (p && ns_i4_pack(p, W, C, OC, G) != NS_OK) {
        free(p);
        return NULL;
    }
    return p;
}

/* n values in (-a, a), a fixed pseudo-random sequence per seed f */
static void fill(float *W, int n, float a, float f)
{
    uint32_t r = (uint32_t)(f * 1e6f) | 1u;
    for (int i = 0; i < n; i++) {
        r = r * 1664525u + 1013904223u;
        W[i] = a * ((float)(r >> 8) / 8388608.0f - 1.0f);
    }
}

/* ns_i4_unpack(ns_i4_pack(W)) = the quantisation of nn.h recomputed here
 * (per group of a row: the scale of least squared error among
 * (max/7)·(1 − k/32), k = 0 … 12; q nearest, clamped to ±7), no worse than
 * max/7's; a group of zeros has scale 1 and zero weights. */
static void test_i4_roundtrip(void)
{
    const int shapes[4][3] = {{384, 130, 64}, {64, 1, 64}, {128, 300, 32}, {96, 17, 32}};
    for (int t = 0; t < 4; t++) {
        int C = shapes[t][0], OC = shapes[t][1], G = shapes[t][2], ng = C / G;
        float *W = malloc((size_t)C * OC * sizeof(float)), *s = malloc((size_t)OC * ng * sizeof(float));
        int8_t *q = malloc((size_t)C * OC);
        fill(W, C * OC, 0.2f, 0.77f);
        for (int c = 0; c < G; c++) W[c] = 0; /* row 0, group 0: zeros */
        CHECK(ns_i4_packed_size(C, OC, G) > 0);
        CHECK(ns_i4_packed_size(C, OC, G) < ns_i8_packed_size(C, OC)); /* fewer bytes than int8 */
        uint8_t *p = pack(W, C, OC, G);
        CHECK(p != NULL);
        if (!p) continue;
        CHECK(ns_i4_unpack(q, s, p, C, OC) == NS_OK);
        int exact = 1, near = 1;
        for (int o = 0; o < OC; o++)
            for (int g = 0; g < ng; g++) {
                const float *w = W + (size_t)o * C + g * G;
                float m = 0;
                for (int c = 0; c < G; c++) m = fmaxf(m, fabsf(w[c]));
                float sc = m > 0 ? m / 7.0f : 1.0f;
                double best_e = -1, e_max = 0;
                for (int k = 0; k <= 12 && m > 0; k++) {
                    float sk = m / 7.0f * (1.0f - (float)k / 32.0f);
                    double e = 0;
                    for (int c = 0; c < G; c++) {
                        long v = lrintf(w[c] / sk);
                        v = v > 7 ? 7 : v < -7 ? -7 : v;
                        e += ((double)w[c] - (double)sk * (double)v) * ((double)w[c] - (double)sk * (double)v);
                    }
                    if (k == 0) e_max = e;
                    if (best_e < 0 || e < best_e) sc = sk, best_e = e;
                }
                if (s[(size_t)o * ng + g] != sc) exact = 0;
                double e = 0;
                for (int c = 0; c < G; c++) {
                    long v = lrintf(w[c] / sc);
                    v = v > 7 ? 7 : v < -7 ? -7 : v;
                    if (q[(size_t)o * C + g * G + c] != v) exact = 0;
                    double d = (double)w[c] - (double)sc * (double)q[(size_t)o * C + g * G + c];
                    e += d * d;
                    if (fabs(d) > 7.5 * sc) near = 0; /* clipped at most to ±7 steps plus half a step */
                }
                if (e > e_max * (1 + 1e-12)) near = 0;
            }
        CHECK(exact);
        CHECK(near);
        CHECK(s[0] == 1.0f && q[0] == 0 && q[G - 1] == 0);
        free(W), free(s), free(q), free(p);
    }
}

/* ns_linear_forward_i4 = nn.h's formula recomputed here from the unpacked
 * weights and the input rows quantised as the int8 layer quantises them,
 * bit for bit (exact group sums, then fmaf in group order, ·s_x, + bias),
 * whichever kernel the CPU takes; near the float layer.  One and several
 * output blocks, a partial block, both group sizes, a batch with an
 * all-zero row, with and without a bias. */
static void test_i4_linear(void)
{
    const int shapes[6][4] = {{1, 384, 384, 64}, {3, 384, 130, 64}, {2, 128, 300, 32},
                              {1, 64, 1, 64},    {4, 256, 128, 32}, {1, 8192, 20, 64}};
    for (int t = 0; t < 6; t++) {
        int B = shapes[t][0], C = shapes[t][1], OC = shapes[t][2], G = shapes[t][3], ng = C / G;
        float *x = malloc((size_t)B * C * sizeof(float)), *W = malloc((size_t)OC * C * sizeof(float));
        float *bias = malloc((size_t)OC * sizeof(float)), *got = malloc((size_t)B * OC * sizeof(float));
        float *f32 = malloc((size_t)B * OC * sizeof(float)), *s = malloc((size_t)OC * ng * sizeof(float));
        int8_t *q = malloc((size_t)OC * C), *xq = malloc((size_t)C);
        fill(x, B * C, 1.0f, 0.37f);
        if (B > 1)
            for (int c = 0; c < C; c++) x[(size_t)(B - 1) * C + c] = 0;
        fill(W, OC * C, 0.1f, 0.91f);
        for (int o = 0; o < OC; o++) bias[o] = 0.1f * (float)o - 0.3f;
        uint8_t *p = pack(W, C, OC, G);
        CHECK(p != NULL);
        if (!p) continue;
        CHECK(ns_i4_unpack(q, s, p, C, OC) == NS_OK);
        for (int nb = 0; nb < 2; nb++) {
            const float *bb = nb ? NULL : bias;
            CHECK(ns_linear_forward_i4(got, x, p, bb, B, C, OC) == NS_OK);
            ns_linear_forward(f32, x, W, bb, B, C, OC);
            int exact = 1;
            double err = 0, ref2 = 0;
            for (int b = 0; b < B; b++) {
                const float *xb = x + (size_t)b * C;
                float m = 0;
                for (int c = 0; c < C; c++) m = fmaxf(m, fabsf(xb[c]));
                float inv = m > 0 ? 127.0f / m : 0.0f;
                for (int c = 0; c < C; c++) xq[c] = (int8_t)lrintf(fmaxf(-127.0f, fminf(127.0f, xb[c] * inv)));
                for (int o = 0; o < OC; o++) {
                    float f = 0;
                    for (int g = 0; g < ng; g++) {
                        int32_t acc = 0;
                        for (int c = g * G; c < (g + 1) * G; c++) acc += q[(size_t)o * C + c] * xq[c];
                        f = fmaf((float)acc, s[(size_t)o * ng + g], f);
                    }
                    float v = f * (m / 127.0f);
                    if (bb) v = v + bb[o];
                    if (v != got[(size_t)b * OC + o]) exact = 0;
                    double d = got[(size_t)b * OC + o] - f32[(size_t)b * OC + o];
                    err += d * d, ref2 += (double)f32[(size_t)b * OC + o] * f32[(size_t)b * OC + o];
                }
            }
            CHECK(exact);                         /* the integer arithmetic, to the bit */
            /* near the float layer: int4 weights, ~7 % RMS relative error of the products (without the bias;
             * over enough outputs) */
            if (!bb && B * OC >= 32) CHECK(sqrt(err / (ref2 + 1e-30)) < 0.1);
            if (B > 1) CHECK(got[(size_t)(B - 1) * OC] == (bb ? bb[0] : 0.0f)); /* zero row */
        }
        free(x), free(W), free(bias), free(got), free(f32), free(s), free(q), free(xq), free(p);
    }
}

/* Unsupported shapes and group sizes: no packing (size 0, an error), and a
 * layer called with a packing of another shape refuses without writing. */
static void test_i4_unsupported(void)
{
    CHECK(ns_i4_packed_size(383, 10, 64) == 0); /* C not a multiple of the group */
    CHECK(ns_i4_packed_size(100, 10, 32) == 0);
    CHECK(ns_i4_packed_size(384, 10, 48) == 0); /* group size */
    CHECK(ns_i4_packed_size(384, 10, 0) == 0);
    CHECK(ns_i4_packed_size(0, 10, 64) == 0);
    CHECK(ns_i4_packed_size(64, 0, 64) == 0);
    CHECK(ns_i4_packed_size(8256, 4, 64) == 0); /* wider than one quantising pass */
    float W[383 * 2], x[384], out[4] = {7, 7, 7, 7};
    for (int i = 0; i < 383 * 2; i++) W[i] = 0.01f * (float)i;
    for (int i = 0; i < 384; i++) x[i] = 1;
    uint8_t buf[64] = {0};
    CHECK(ns_i4_pack(buf, W, 383, 2, 64) == NS_ERR_UNSUPPORTED);
    CHECK(ns_i4_pack(buf, W, 64, 2, 16) == NS_ERR_UNSUPPORTED);
    CHECK(ns_linear_forward_i4(out, x, buf, NULL, 1, 64, 2) == NS_ERR_UNSUPPORTED); /* no header */
    uint8_t *p = pack(W, 128, 2, 64);
    CHECK(p != NULL);
    if (p) {
        CHECK(ns_linear_forward_i4(out, x, p, NULL, 1, 128, 2) == NS_OK);
        float keep[4] = {7, 7, 7, 7};
        memcpy(out, keep, sizeof out);
        CHECK(ns_linear_forward_i4(out, x, p, NULL, 1, 64, 2) == NS_ERR_UNSUPPORTED);  /* other C */
        CHECK(ns_linear_forward_i4(out, x, p, NULL, 1, 128, 3) == NS_ERR_UNSUPPORTED); /* other OC */
        int8_t q[256];
        float s[4];
        CHECK(ns_i4_unpack(q, s, p, 128, 3) == NS_ERR_UNSUPPORTED);
        CHECK(memcmp(out, keep, sizeof out) == 0); /* untouched */
        free(p);
    }
}

/* The world model with int4 heads (384-d inputs: every head layer int4, T
 * int8): ns_world_predict1 = project + project + transition to the bit;
 * near the float prediction (LayerNorm'ed output, entries of order 1:
 * cosine ≥ 0.95, max error < 0.5); different from the int8 one; off again:
 * float exactly.  At widths that are not multiples of the group (100-d) no
 * layer is int4: the int8 model's bits. */
static void test_i4_world(void)
{
    ns_world_config c;
    ns_world_config_init(&c);
    c.state_dim = 384, c.action_dim = 384, c.out = 128;
    ns_world w;
    ns_error e;
    CHECK(ns_world_create(&w, &c, 5, &e) == NS_OK);
    enum { NS_ = 5, NA = 3, O = 128 };
    ns_features fs, fa;
    world_dense(&fs, NS_, 384, 0.61f, 1.0f, 0.1f);
    world_dense(&fa, NA, 384, 0.43f, 1.0f, 0.1f);
    ns_world_ws *ws = ns_world_ws_new();
    float ref[NS_ * NA][O], q4[NS_ * NA][O], q8[NS_ * NA][O], back[O];
    for (int mode = 0; mode < 3; mode++) {
        if (mode == 1) ns_world_set_int8(&w, true);
        if (mode == 2) ns_world_set_int4(&w, true);
        CHECK((w.i4 != NULL) == (mode == 2));
        CHECK(world_predict1_same(&w, ws, &fs, NS_, &fa, NA, mode == 0 ? ref[0] : mode == 1 ? q8[0] : q4[0]));
    }
    double worst_cos = 1, worst = 0;
    for (int i = 0; i < NS_ * NA; i++) {
        double d = 0, n1 = 0, n2 = 0;
        for (int j = 0; j < O; j++)
            d += (double)ref[i][j] * q4[i][j], n1 += (double)ref[i][j] * ref[i][j], n2 += (double)q4[i][j] * q4[i][j],
                worst = fmax(worst, fabs(ref[i][j] - q4[i][j]));
        worst_cos = fmin(worst_cos, d / sqrt(n1 * n2));
    }
    CHECK(worst_cos > 0.95);
    CHECK(worst < 0.5);
    CHECK(memcmp(q4, q8, sizeof q4) != 0); /* the int4 layers ran */
    ns_world_set_int4(&w, false);
    CHECK(w.i4 == NULL && w.i8 == NULL);
    int64_t s0 = 0, a0 = 0;
    ns_world_predict1(&w, ws, &fs, s0, &fa, a0, back);
    CHECK(memcmp(back, ref[0], sizeof back) == 0);
    ns_world_set_int4(&w, true); /* freed by ns_world_free */
    ns_world_set_int4(&w, true); /* again: replaces the copies, no leak */
    ns_world_free(&w);
    ns_features_free(&fs);
    ns_features_free(&fa);

    /* 100-d inputs and hidden: no int4 layer, the int8 model exactly */
    c.state_dim = 100, c.action_dim = 100, c.out = 32;
    CHECK(ns_world_create(&w, &c, 5, &e) == NS_OK);
    world_dense(&fs, 2, 100, 0.3f, 1.0f, 0.1f);
    world_dense(&fa, 2, 100, 0.7f, 1.0f, 0.1f);
    float p8[O], p4[O];
    ns_world_set_int8(&w, true);
    ns_world_predict1(&w, ws, &fs, 1, &fa, 1, p8);
    ns_world_set_int4(&w, true);
    CHECK(w.i8 != NULL);
    ns_world_predict1(&w, ws, &fs, 1, &fa, 1, p4);
    CHECK(memcmp(p8, p4, 32 * sizeof(float)) == 0);
    ns_world_free(&w);
    ns_features_free(&fs);
    ns_features_free(&fa);
    ns_world_ws_free(ws);
}

int main(void)
{
    NS_RUN(test_i4_roundtrip);
    NS_RUN(test_i4_linear);
    NS_RUN(test_i4_unsupported);
    NS_RUN(test_i4_world);
    return ns_test_summary("test_int4");
}
