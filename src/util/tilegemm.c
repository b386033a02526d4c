/* tilegemm.c — float products on AMX bfloat16 tiles, three per term (see tilegemm.h).
 *
 * A tile product (tdpbf16ps) takes 16 rows × 32 bfloat16 inputs of x against
 * 32 inputs × 16 outputs of W into 16 × 16 float sums; W's tile keeps its
 * inputs in pairs: row p holds, for each of the 16 outputs j, the weights of
 * inputs 2p and 2p + 1.  The packing stores, for every 32 outputs and every
 * 32 inputs, four such 1 KB tiles in the order the kernel reads them: wh and
 * wl of outputs 0–15, then of outputs 16–31. */
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

enum { TILE = 512 /* bfloat16 per tile */, BLOCK = 4 * TILE /* one step of 32 inputs × 32 outputs */, CHUNK = 128 };

/* float → bfloat16, rounded to nearest even (NaN stays NaN). */
static uint16_t bf16_round(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static float bf16_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

size_t ns_tilegemm_size(int n, int k)
{
    if (n <= 0 || k <= 0 || n % 32 || k % 32) return 0;
    return (size_t)n * (size_t)k * 2;
}

void ns_tilegemm_pack(uint16_t *dst, const float *W, int n, int k)
{
    const int KB = k / 32;
    for (int nb = 0; nb < n / 32; nb++)
        for (int kb = 0; kb < KB; kb++) {
            uint16_t *blk = dst + ((size_t)nb * KB + kb) * BLOCK;
            for (int half = 0; half < 2; half++) {
                uint16_t *hi = blk + half * 2 * TILE, *lo = hi + TILE;
                for (int j = 0; j < 16; j++) {
                    const float *w = W + (size_t)(nb * 32 + half * 16 + j) * k + kb * 32;
                    for (int i = 0; i < 32; i++) {
                        uint16_t h = bf16_round(w[i]);
                        size_t at = (size_t)(i / 2) * 32 + 2 * j + i % 2;
                        hi[at] = h;
                        lo[at] = bf16_round(w[i] - bf16_float(h));
                    }
                }
            }
        }
}

#ifdef NS_HAVE_AMX
bool ns_tilegemm_usable(void)
{
    return __builtin_cpu_supports("amx-tile") && __builtin_cpu_supports("amx-bf16") &&
           __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw") &&
           syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
}

/* rows [0, R) of x (stride ldx, k inputs) into xh, xl [R16 × k] (rows R … R16 zero). */
__attribute__((target("avx512f,avx512bw,avx512bf16"))) static void split_rows(uint16_t *xh, uint16_t *xl,
                                                                                const float *x, int ldx, int R,
                                                                                int R16, int k)
{
    for (int r = 0; r < R; r++) {
        const float *row = x + (size_t)r * ldx;
        uint16_t *h = xh + (size_t)r * k, *l = xl + (size_t)r * k;
        for (int i = 0; i < k; i += 16) {
            __m512 v = _mm512_loadu_ps(row + i);
            __m256i vh = (__m256i)_mm512_cvtneps_pbh(v);
            __m512 back = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(vh), 16));
            __m256i vl = (__m256i)_mm512_cvtneps_pbh(_mm512_sub_ps(v, back));
            _mm256_storeu_si256((__m256i *)(void *)(h + i), vh);
            _mm256_storeu_si256((__m256i *)(void *)(l + i), vl);
        }
    }
    memset(xh + (size_t)R * k, 0, (size_t)(R16 - R) * k * sizeof *xh);
    memset(xl + (size_t)R * k, 0, (size_t)(R16 - R) * k * sizeof *xl);
}

typedef struct tile_cfg {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tile_cfg;

/* Tiles: 0 and 1 the sums of outputs 0–15 and 16–31 (16 rows), 2 and 3 the
 * rows' xh and xl (16 rows × 32 inputs), 4–7 wh, wl of the two output runs. */
__attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512bf16"))) void ns_tilegemm(
    float *y, int ldy, const float *x, int ldx, int rows, int k, int n, const uint16_t *packed, const float *b)
{
    if (rows <= 0) return;
    tile_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) cfg.rows[t] = 16, cfg.colsb[t] = 64;
    _tile_loadconfig(&cfg);
    const int KB = k / 32;
    const size_t xs = (size_t)k * 2; /* bytes between rows of xh, xl */
    uint16_t *xh = ns_xmalloc((size_t)2 * CHUNK * k * sizeof *xh), *xl = xh + (size_t)CHUNK * k;
    float sums[16][32];
    for (int r0 = 0; r0 < rows; r0 += CHUNK) {
        int R = rows - r0 < CHUNK ? rows - r0 : CHUNK, R16 = (R + 15) & ~15;
        split_rows(xh, xl, x + (size_t)r0 * ldx, ldx, R, R16, k);
        for (int nb = 0; nb < n / 32; nb++) {
            const uint16_t *B = packed + (size_t)nb * KB * BLOCK;
            for (int rb = 0; rb < R16; rb += 16) {
                const uint16_t *ah = xh + (size_t)rb * k, *al = xl + (size_t)rb * k;
                _tile_zero(0);
                _tile_zero(1);
                for (int kb = 0; kb < KB; kb++) {
                    const uint16_t *w = B + (size_t)kb * BLOCK;
                    _tile_loadd(2, ah + kb * 32, xs);
                    _tile_loadd(3, al + kb * 32, xs);
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
                _tile_stored(0, &sums[0][0], sizeof sums[0]);
                _tile_stored(1, &sums[0][16], sizeof sums[0]);
                int valid = R - rb < 16 ? R - rb : 16;
                __m512 b0 = b ? _mm512_loadu_ps(b + nb * 32) : _mm512_setzero_ps();
                __m512 b1 = b ? _mm512_loadu_ps(b + nb * 32 + 16) : _mm512_setzero_ps();
                for (int r = 0; r < valid; r++) {
                    float *o = y + (size_t)(r0 + rb + r) * ldy + nb * 32;
                    _mm512_storeu_ps(o, _mm512_add_ps(_mm512_loadu_ps(sums[r]), b0));
                    _mm512_storeu_ps(o + 16, _mm512_add_ps(_mm512_loadu_ps(sums[r] + 16), b1));
                }
            }
        }
    }
    _tile_release();
    free(xh);
}
#else
bool ns_tilegemm_usable(void) { return false; }

void ns_tilegemm(float *y, int ldy, const float *x, int ldx, int rows, int k, int n, const uint16_t *packed,
                 const float *b)
{
    (void)y, (void)ldy, (void)x, (void)ldx, (void)rows, (void)k, (void)n, (void)packed, (void)b;
    abort(); /* callers ask ns_tilegemm_usable first */
}
#endif
