/* tilegemm.c — float products on AMX bfloat16 tiles, three per term (see tilegemm.h).
 *
 * A tile product (tdpbf16ps) takes 16 rows × 32 bfloat16 inputs of x against
 * 32 inputs × 16 outputs of W into 16 × 16 float sums; W's tile keeps its
 * inputs in pairs: row p holds, for each of the 16 outputs j, the weights of
 * inputs 2p and 2p + 1.  The packing stores, for every 32 outputs and every
 * 32 inputs, four such 1 KB tiles in the order the kernel reads them: wh and
 * wl of outputs 0–15, then of outputs 16–31; outputs and inputs are padded
 * with zeros to multiples of 32. */
#define _DEFAULT_SOURCE /* syscall: Linux hands a process the tile state only when asked */
#include "nextstate/util/tilegemm.h"

#include <stdlib.h>
#include <string.h>

#include "nextstate/util/util.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__) && __GNUC__ >= 12
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#define NS_HAVE_AMX 1
#endif

enum { TILE = 512 /* bfloat16 per tile */, BLOCK = 4 * TILE /* one step of 32 inputs × 32 outputs */, CHUNK = 128,
       STREAM_BYTES = 8 << 20 /* outputs from this size on are streamed (finish) */ };

static int up32(int v) { return (v + 31) & ~31; }

size_t ns_tilegemm_size(int n, int k)
{
    if (n <= 0 || k <= 0) return 0;
    return (size_t)up32(n) * (size_t)up32(k) * 2;
}

#ifdef NS_HAVE_AMX
bool ns_amx_granted(void)
{
    return __builtin_cpu_supports("amx-tile") &&
           syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
}

bool ns_tilegemm_usable(void)
{
    return __builtin_cpu_supports("amx-bf16") && __builtin_cpu_supports("avx512bf16") &&
           __builtin_cpu_supports("avx512bw") && ns_amx_granted();
}

/* The first n of 16 lanes (none for n ≤ 0). */
static inline __mmask16 lanes(int n) { return n >= 16 ? 0xffff : n > 0 ? (__mmask16)((1u << n) - 1u) : 0; }

/* v = hi + lo in bfloat16 (round to nearest even): 16 floats into two runs of 16. */
__attribute__((target("avx512f,avx512bw,avx512bf16"), always_inline)) static inline void split16(__m512 v, __m256i *hi,
                                                                                                   __m256i *lo)
{
    *hi = (__m256i)_mm512_cvtneps_pbh(v);
    __m512 back = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(*hi), 16));
    *lo = (__m256i)_mm512_cvtneps_pbh(_mm512_sub_ps(v, back));
}

/* rows [0, R) of x (stride ldx, its first k inputs) into xh, xl [R16 × kp]
 * (kp = k rounded up to 32; inputs k … kp and rows R … R16 zero). */
__attribute__((target("avx512f,avx512bw,avx512bf16"))) static void split_rows(uint16_t *xh, uint16_t *xl,
                                                                                const float *x, int ldx, int R,
                                                                                int R16, int k, int kp)
{
    for (int r = 0; r < R; r++) {
        const float *row = x + (size_t)r * ldx;
        uint16_t *h = xh + (size_t)r * kp, *l = xl + (size_t)r * kp;
        for (int i = 0; i < kp; i += 16) {
            __m256i vh, vl;
            split16(_mm512_maskz_loadu_ps(lanes(k - i), row + i), &vh, &vl);
            _mm256_storeu_si256((__m256i *)(void *)(h + i), vh);
            _mm256_storeu_si256((__m256i *)(void *)(l + i), vl);
        }
    }
    memset(xh + (size_t)R * kp, 0, (size_t)(R16 - R) * kp * sizeof *xh);
    memset(xl + (size_t)R * kp, 0, (size_t)(R16 - R) * kp * sizeof *xl);
}

/* rows [0, R) of x (stride ldx, its first k inputs) into xh, xl in tile
 * order: the 16 rows × 32 inputs of row run q and input run kb are the 1 KB
 * at ((q · kp/32) + kb) · 512 (rows R … R16 and inputs k … kp zero), so that
 * a tile load reads one contiguous kilobyte. */
__attribute__((target("avx512f,avx512bw,avx512bf16"))) static void split_tiles(uint16_t *xh, uint16_t *xl,
                                                                                 const float *x, int ldx, int R,
                                                                                 int R16, int k, int kp)
{
    const int KB = kp / 32;
    for (int r = 0; r < R16; r++) {
        const float *row = x + (size_t)r * ldx;
        const size_t base = (size_t)(r / 16) * KB * TILE + (size_t)(r % 16) * 32;
        for (int i = 0; i < kp; i += 16) {
            __m256i vh, vl;
            split16(r < R ? _mm512_maskz_loadu_ps(lanes(k - i), row + i) : _mm512_setzero_ps(), &vh, &vl);
            size_t at = base + (size_t)(i / 32) * TILE + (size_t)(i % 32);
            _mm256_storeu_si256((__m256i *)(void *)(xh + at), vh);
            _mm256_storeu_si256((__m256i *)(void *)(xl + at), vl);
        }
    }
}

__attribute__((target("amx-tile"))) static void tiles_on(void)
{
    ns_amx_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) cfg.rows[t] = 16, cfg.colsb[t] = 64;
    _tile_loadconfig(&cfg);
}

/* Where a product's sums go: y = act(alpha · sums + b) (+ y when add).  With
 * stream, whole 64-byte-aligned line pairs are written around the caches (no
 * read for ownership: an output far larger than the caches, written once,
 * read later). */
typedef struct outs {
    float *y;
    int ldy, n;
    const float *b;
    float alpha;
    bool add, stream;
    ns_tile_act act;
} outs;

/* Rows [0, rows) of sums (rows ≤ 32, 32 outputs each) into rows rb … and
 * outputs 32·nb … of o->y. */
__attribute__((target("avx512f"))) static void finish(const outs *o, const float (*sums)[32], int rb, int rows, int nb)
{
    const __mmask16 m0 = lanes(o->n - nb * 32), m1 = lanes(o->n - nb * 32 - 16);
    const __m512 va = _mm512_set1_ps(o->alpha);
    const __m512 b0 = o->b ? _mm512_maskz_loadu_ps(m0, o->b + nb * 32) : _mm512_setzero_ps();
    const __m512 b1 = o->b ? _mm512_maskz_loadu_ps(m1, o->b + nb * 32 + 16) : _mm512_setzero_ps();
    for (int r = 0; r < rows; r++) {
        float *y = o->y + (size_t)(rb + r) * o->ldy + nb * 32;
        __m512 v0 = _mm512_fmadd_ps(_mm512_loadu_ps(sums[r]), va, b0),
               v1 = _mm512_fmadd_ps(_mm512_loadu_ps(sums[r] + 16), va, b1);
        if (o->act) {
            float v[32];
            _mm512_storeu_ps(v, v0);
            _mm512_storeu_ps(v + 16, v1);
            o->act(v, 32);
            v0 = _mm512_loadu_ps(v), v1 = _mm512_loadu_ps(v + 16);
        }
        if (o->add) {
            v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, y));
            v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, y + 16));
        }
        if (o->stream && !o->add && m1 == 0xffff && !((uintptr_t)y & 63)) {
            _mm512_stream_ps(y, v0);
            _mm512_stream_ps(y + 16, v1);
        } else {
            _mm512_mask_storeu_ps(y, m0, v0);
            if (m1) _mm512_mask_storeu_ps(y + 16, m1, v1);
        }
    }
}

/* A block whose sums wait in a buffer for finish (rows 0: none). */
typedef struct pending {
    const float (*sums)[32];
    int rb, rows, nb;
} pending;

static void finish_pending(const outs *o, pending *p)
{
    if (p->rows) finish(o, p->sums, p->rb, p->rows, p->nb);
    p->rows = 0;
}

/* The four sums of a 32 × 32 block (tiles 0–3) take the row runs in tiles 4
 * and 5 against the output runs in tiles 6 and 7. */
__attribute__((target("amx-tile,amx-bf16"), always_inline)) static inline void block_products(void)
{
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
}

/* o's rows [0, R) from the R rows split into xh, xl in tile order
 * (split_tiles; R16 rows, kp inputs) and W packed [np × kp] (np = n rounded
 * up to 32).  Blocks of 32 rows × 32 outputs: tiles 0–3 their four 16 × 16
 * sums, 4 and 5 the two row runs' xh (then xl), 6 and 7 the two output runs'
 * wh (then wl, then wh again) — twelve tile products for ten tile loads, each
 * sum taking xh·wh, xh·wl, xl·wh in that order; a block's outputs are
 * finished while the next block's first products run.  A last block of 16
 * rows takes the same products with tiles 0–1 (sums), 2–3 (xh, xl) and 4–7
 * (wh, wl of both output runs). */
__attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512bf16"))) static void product(
    const outs *o, const uint16_t *xh, const uint16_t *xl, int R, int R16, int kp, const uint16_t *packed)
{
    const int KB = kp / 32;
    float sums[2][32][32];
    int cur = 0; /* the buffer the next block stores into; the other may be pending */
    pending p = {0};
    for (int nb = 0; nb * 32 < o->n; nb++) {
        const uint16_t *B = packed + (size_t)nb * KB * BLOCK;
        int rb = 0;
        for (; rb + 32 <= R16; rb += 32) {
            const uint16_t *ah = xh + (size_t)rb * kp, *al = xl + (size_t)rb * kp, *ah1 = ah + (size_t)KB * TILE,
                           *al1 = al + (size_t)KB * TILE;
            _tile_zero(0);
            _tile_zero(1);
            _tile_zero(2);
            _tile_zero(3);
            for (int kb = 0; kb < KB; kb++) {
                const uint16_t *w = B + (size_t)kb * BLOCK;
                _tile_loadd(4, ah + kb * TILE, 64);
                _tile_loadd(5, ah1 + kb * TILE, 64);
                _tile_loadd(6, w, 64);
                _tile_loadd(7, w + 2 * TILE, 64);
                block_products();
                _tile_loadd(6, w + TILE, 64);
                _tile_loadd(7, w + 3 * TILE, 64);
                block_products();
                _tile_loadd(4, al + kb * TILE, 64);
                _tile_loadd(5, al1 + kb * TILE, 64);
                _tile_loadd(6, w, 64);
                _tile_loadd(7, w + 2 * TILE, 64);
                block_products();
                if (kb == 0) finish_pending(o, &p); /* the previous block's outputs while the tiles work */
            }
            _tile_stored(0, &sums[cur][0][0], sizeof sums[cur][0]);
            _tile_stored(1, &sums[cur][0][16], sizeof sums[cur][0]);
            _tile_stored(2, &sums[cur][16][0], sizeof sums[cur][0]);
            _tile_stored(3, &sums[cur][16][16], sizeof sums[cur][0]);
            p = (pending){(const float(*)[32])sums[cur], rb, R - rb < 32 ? R - rb : 32, nb};
            cur ^= 1;
        }
        if (rb < R16) { /* the last 16 rows */
            const uint16_t *ah = xh + (size_t)rb * kp, *al = xl + (size_t)rb * kp;
            finish_pending(o, &p);
            _tile_zero(0);
            _tile_zero(1);
            for (int kb = 0; kb < KB; kb++) {
                const uint16_t *w = B + (size_t)kb * BLOCK;
                _tile_loadd(2, ah + kb * TILE, 64);
                _tile_loadd(3, al + kb * TILE, 64);
                _tile_loadd(4, w, 64);
                _tile_loadd(5, w + TILE, 64);
                _tile_dpbf16ps(0, 2, 4);
                _tile_dpbf16ps(0, 2, 5);
                _tile_dpbf16ps(0, 3, 4);
                _tile_loadd(6, w + 2 * TILE, 64);
                _tile_loadd(7, w + 3 * TILE, 64);
                _tile_dpbf16ps(1, 2, 6);
                _tile_dpbf16ps(1, 2, 7);
                _tile_dpbf16ps(1, 3, 6);
            }
            _tile_stored(0, &sums[cur][0][0], sizeof sums[cur][0]);
            _tile_stored(1, &sums[cur][0][16], sizeof sums[cur][0]);
            finish(o, (const float(*)[32])sums[cur], rb, R - rb, nb);
        }
    }
    finish_pending(o, &p);
    if (o->stream) _mm_sfence(); /* the streamed lines ordered before the caller's reads of y */
}

__attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512bf16"))) void ns_tilegemm(
    float *y, int ldy, const float *x, int ldx, int rows, int k, int n, const uint16_t *packed, const float *b,
    ns_tile_act act)
{
    if (rows <= 0) return;
    tiles_on();
    const int kp = up32(k);
    outs o = {y, ldy, n, b, 1.0f, false, (size_t)rows * (size_t)n * sizeof *y >= STREAM_BYTES, act};
    uint16_t *xh = ns_xmalloc((size_t)2 * CHUNK * kp * sizeof *xh), *xl = xh + (size_t)CHUNK * kp;
    for (int r0 = 0; r0 < rows; r0 += CHUNK) {
        int R = rows - r0 < CHUNK ? rows - r0 : CHUNK, R16 = (R + 15) & ~15;
        split_tiles(xh, xl, x + (size_t)r0 * ldx, ldx, R, R16, k, kp);
        o.y = y + (size_t)r0 * ldy;
        product(&o, xh, xl, R, R16, kp, packed);
    }
    _tile_release();
    free(xh);
}

/* W's tiles from its split rows wh, wl [np × kp] (W[o][i] at o·kp + i): the
 * tile row p of outputs o … o + 15 and inputs i … i + 31 holds the 32-bit
 * pair (W[o + j][i + 2p], W[o + j][i + 2p + 1]) at column j — a gather of
 * one pair from each of 16 rows. */
__attribute__((target("avx512f"))) static void pack_split(uint16_t *dst, const uint16_t *wh, const uint16_t *wl,
                                                           int np, int kp)
{
    const int KB = kp / 32;
    const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(kp / 2));
    for (int nb = 0; nb < np / 32; nb++)
        for (int kb = 0; kb < KB; kb++) {
            uint32_t *blk = (uint32_t *)(void *)(dst + ((size_t)nb * KB + kb) * BLOCK);
            for (int half = 0; half < 2; half++) {
                size_t base = ((size_t)(nb * 32 + half * 16) * kp + (size_t)kb * 32) / 2; /* in pairs */
                const int *ph = (const int *)(const void *)wh + base, *pl = (const int *)(const void *)wl + base;
                uint32_t *hi = blk + half * TILE, *lo = hi + TILE / 2;
                for (int p = 0; p < 16; p++) {
                    _mm512_storeu_si512(hi + p * 16, _mm512_i32gather_epi32(rows, ph + p, 4));
                    _mm512_storeu_si512(lo + p * 16, _mm512_i32gather_epi32(rows, pl + p, 4));
                }
            }
        }
}

/* W = Bᵀ for B [k × n] (row stride ldb): the tile row p of outputs o … o + 15
 * and inputs i … i + 31 pairs B's rows i + 2p and i + 2p + 1 over columns
 * o … o + 15 (rows from k on are zero). */
__attribute__((target("avx512f,avx512bw,avx512bf16"))) static void pack_rows(uint16_t *dst, const float *B, int ldb,
                                                                               int k, int n, int kp, int np)
{
    const int KB = kp / 32;
    for (int nb = 0; nb < np / 32; nb++)
        for (int kb = 0; kb < KB; kb++) {
            uint32_t *blk = (uint32_t *)(void *)(dst + ((size_t)nb * KB + kb) * BLOCK);
            for (int half = 0; half < 2; half++) {
                int o = nb * 32 + half * 16;
                const __mmask16 m = lanes(n - o);
                uint32_t *hi = blk + half * TILE, *lo = hi + TILE / 2;
                for (int p = 0; p < 16; p++) {
                    __m512i h2[2], l2[2];
                    for (int e = 0; e < 2; e++) {
                        int i = kb * 32 + 2 * p + e;
                        __m256i vh, vl;
                        split16(i < k ? _mm512_maskz_loadu_ps(m, B + (size_t)i * ldb + o) : _mm512_setzero_ps(), &vh,
                                &vl);
                        h2[e] = _mm512_cvtepu16_epi32(vh), l2[e] = _mm512_cvtepu16_epi32(vl);
                    }
                    _mm512_storeu_si512(hi + p * 16, _mm512_or_si512(h2[0], _mm512_slli_epi32(h2[1], 16)));
                    _mm512_storeu_si512(lo + p * 16, _mm512_or_si512(l2[0], _mm512_slli_epi32(l2[1], 16)));
                }
            }
        }
}

/* Rounds to nearest even (subnormal floats read as zero), 32 outputs at a
 * time: their rows split, then gathered into tiles. */
__attribute__((target("avx512f,avx512bw,avx512bf16"))) void ns_tilegemm_pack(uint16_t *dst, const float *W, int n,
                                                                               int k)
{
    const int kp = up32(k);
    uint16_t *wh = ns_xmalloc((size_t)2 * 32 * kp * sizeof *wh), *wl = wh + (size_t)32 * kp;
    const size_t per = (size_t)(kp / 32) * BLOCK; /* the packing of 32 outputs */
    for (int o = 0; o < n; o += 32) {
        split_rows(wh, wl, W + (size_t)o * k, k, n - o < 32 ? n - o : 32, 32, k, kp);
        pack_split(dst + (size_t)(o / 32) * per, wh, wl, 32, kp);
    }
    free(wh);
}

__attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512bf16"))) void ns_tilegemm_nt(
    float *y, int ldy, const float *a, int lda, int m, const float *b, int ldb, int n, int k, float alpha)
{
    if (m <= 0 || n <= 0) return;
    const int kp = up32(k), np = up32(n), m16 = (m + 15) & ~15;
    uint16_t *xh = ns_xmalloc(((size_t)2 * m16 * kp + (size_t)2 * np * kp + (size_t)np * kp * 2) * sizeof *xh);
    uint16_t *xl = xh + (size_t)m16 * kp, *wh = xl + (size_t)m16 * kp, *wl = wh + (size_t)np * kp,
             *P = wl + (size_t)np * kp;
    split_tiles(xh, xl, a, lda, m, m16, k, kp);
    split_rows(wh, wl, b, ldb, n, np, k, kp);
    pack_split(P, wh, wl, np, kp);
    tiles_on();
    const outs o = {y, ldy, n, NULL, alpha, false, false, NULL};
    product(&o, xh, xl, m, m16, kp, P);
    _tile_release();
    free(xh);
}

__attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512bf16"))) void ns_tilegemm_nn(
    float *y, int ldy, const float *a, int lda, int m, const float *b, int ldb, int k, int n, float alpha, bool add)
{
    if (m <= 0 || n <= 0) return;
    const int kp = up32(k), np = up32(n), m16 = (m + 15) & ~15;
    uint16_t *xh = ns_xmalloc(((size_t)2 * m16 * kp + (size_t)np * kp * 2) * sizeof *xh);
    uint16_t *xl = xh + (size_t)m16 * kp, *P = xl + (size_t)m16 * kp;
    split_tiles(xh, xl, a, lda, m, m16, k, kp);
    pack_rows(P, b, ldb, k, n, kp, np);
    tiles_on();
    const outs o = {y, ldy, n, NULL, alpha, add, false, NULL};
    product(&o, xh, xl, m, m16, kp, P);
    _tile_release();
    free(xh);
}
#else
bool ns_amx_granted(void) { return false; }
bool ns_tilegemm_usable(void) { return false; }

void ns_tilegemm(float *y, int ldy, const float *x, int ldx, int rows, int k, int n, const uint16_t *packed,
                 const float *b, ns_tile_act act)
{
    (void)y, (void)ldy, (void)x, (void)ldx, (void)rows, (void)k, (void)n, (void)packed, (void)b, (void)act;
    abort(); /* callers ask ns_tilegemm_usable first */
}

void ns_tilegemm_pack(uint16_t *dst, const float *W, int n, int k)
{
    (void)dst, (void)W, (void)n, (void)k;
    abort();
}

void ns_tilegemm_nt(float *y, int ldy, const float *a, int lda, int m, const float *b, int ldb, int n, int k,
                    float alpha)
{
    (void)y, (void)ldy, (void)a, (void)lda, (void)m, (void)b, (void)ldb, (void)n, (void)k, (void)alpha;
    abort();
}

void ns_tilegemm_nn(float *y, int ldy, const float *a, int lda, int m, const float *b, int ldb, int k, int n,
                    float alpha, bool add)
{
    (void)y, (void)ldy, (void)a, (void)lda, (void)m, (void)b, (void)ldb, (void)k, (void)n, (void)alpha, (void)add;
    abort();
}
#endif
