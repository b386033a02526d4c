/* tilegemm.c — the AMX bf16x3 products (tilegemm.h) against OpenBLAS's
 * sgemm (ns_sgemm), side by side on the shapes of MiniLM's and MPNet's
 * layers (4,096 token rows: a batch of 16 prompts of 256 pieces) and of one
 * attention head (256 tokens): the median CPU time of REPEAT runs each,
 * their ratio, and the largest difference of an output relative to the
 * row's largest |output| (the tiles' rounding against float's).  Outputs of
 * 8 MiB and more are streamed past the caches by the tiles (tilegemm.c), as
 * in the encoder's layers.  Exits 77
 * where the CPU has no AMX bfloat16.
 *   tilegemm [REPEAT (5)]                  (OPENBLAS_NUM_THREADS=1 for one core each side) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "nextstate/util/blas.h"
#include "nextstate/util/tilegemm.h"
#include "nextstate/util/util.h"
#include "bench_time.h"

static void fill(float *x, size_t n, float a, unsigned seed)
{
    unsigned r = seed * 2654435761u | 1u;
    for (size_t i = 0; i < n; i++) {
        r = r * 1664525u + 1013904223u;
        x[i] = a * ((float)(r >> 8) / 8388608.0f - 1.0f);
    }
}

enum { LINEAR, SCORES, VALUES };

/* One shape: y[m × n] from a[m × k] and b (W [n × k] for LINEAR and SCORES, [k × n] for VALUES). */
static void run(const char *what, int kind, int m, int k, int n, int repeat, double *ratio_log, int *count)
{
    float *a = malloc((size_t)m * k * sizeof *a), *b = malloc((size_t)n * k * sizeof *b);
    /* outputs at cache lines, as bert.c allocates its activations (the tiles stream large ones) */
    float *ys = ns_xaligned((size_t)m * n * sizeof *ys), *yt = ns_xaligned((size_t)m * n * sizeof *yt);
    uint16_t *P = kind == LINEAR ? malloc(ns_tilegemm_size(n, k) * sizeof *P) : NULL;
    double *ts = malloc((size_t)repeat * sizeof *ts), *tt = malloc((size_t)repeat * sizeof *tt);
    fill(a, (size_t)m * k, 1.0f, 1), fill(b, (size_t)n * k, 0.1f, 2);
    if (P) ns_tilegemm_pack(P, b, n, k);
    for (int r = 0; r < repeat; r++) {
        double t0 = bench_cpu_now();
        if (kind == VALUES) ns_sgemm(false, false, m, n, k, 1.0f, a, k, b, n, 0.0f, ys, n);
        else ns_sgemm(false, true, m, n, k, 1.0f, a, k, b, k, 0.0f, ys, n);
        double t1 = bench_cpu_now();
        if (kind == LINEAR) ns_tilegemm(yt, n, a, k, m, k, n, P, NULL, NULL);
        else if (kind == SCORES) ns_tilegemm_nt(yt, n, a, k, m, b, k, n, k, 1.0f);
        else ns_tilegemm_nn(yt, n, a, k, m, b, n, k, n, 1.0f, false);
        double t2 = bench_cpu_now();
        ts[r] = t1 - t0, tt[r] = t2 - t1;
    }
    double s = bench_median(ts, repeat), t = bench_median(tt, repeat), worst = 0, flop = 2.0 * m * n * k;
    for (int i = 0; i < m; i++) {
        double big = 1e-30;
        for (int j = 0; j < n; j++) big = fmax(big, fabs(ys[(size_t)i * n + j]));
        for (int j = 0; j < n; j++) worst = fmax(worst, fabs(yt[(size_t)i * n + j] - ys[(size_t)i * n + j]) / big);
    }
    printf("%-22s %5d × %5d × %5d  %9.3f %9.3f  %7.1f %7.1f  %6.2fx  %.1e\n", what, m, k, n, 1e3 * s, 1e3 * t,
           flop / s * 1e-9, flop / t * 1e-9, s / t, worst);
    *ratio_log += log(s / t);
    ++*count;
    free(a), free(b), free(ys), free(yt), free(P), free(ts), free(tt);
}

int main(int argc, char **argv)
{
    int repeat = argc > 1 ? atoi(argv[1]) : 5;
    if (repeat < 1) repeat = 1;
    if (!ns_tilegemm_usable()) {
        printf("tilegemm: no AMX bfloat16 on this CPU (or no tile state from the kernel): skipped\n");
        return 77;
    }
    printf("%-22s %-21s  %9s %9s  %7s %7s  %7s  %s\n", "product", "m × k × n", "sgemm ms", "tiles ms", "GFLOP/s",
           "tiles", "ratio", "max rel. diff");
    double lr = 0;
    int c = 0;
    const int rows = 4096;
    run("MiniLM q,k,v", LINEAR, rows, 384, 1152, repeat, &lr, &c);
    run("MiniLM output", LINEAR, rows, 384, 384, repeat, &lr, &c);
    run("MiniLM FFN up", LINEAR, rows, 384, 1536, repeat, &lr, &c);
    run("MiniLM FFN down", LINEAR, rows, 1536, 384, repeat, &lr, &c);
    run("MPNet q,k,v", LINEAR, rows, 768, 2304, repeat, &lr, &c);
    run("MPNet FFN up", LINEAR, rows, 768, 3072, repeat, &lr, &c);
    run("MPNet FFN down", LINEAR, rows, 3072, 768, repeat, &lr, &c);
    run("MiniLM head scores", SCORES, 256, 32, 256, repeat * 20, &lr, &c);
    run("MiniLM head context", VALUES, 256, 256, 32, repeat * 20, &lr, &c);
    run("MPNet head scores", SCORES, 256, 64, 256, repeat * 20, &lr, &c);
    run("MPNet head context", VALUES, 256, 256, 64, repeat * 20, &lr, &c);
    printf("geometric mean of the CPU-time ratios (sgemm / tiles) over %d products: %.2fx (OpenBLAS: %s)\n", c,
           exp(lr / c), ns_blas_backend());
    return 0;
}
