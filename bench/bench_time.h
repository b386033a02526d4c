/* bench_time.h — the timing helpers of the C benchmarks: the process's CPU
 * clock and the median of a sample (sorted in place). */
#ifndef NEXTSTATE_BENCH_TIME_H
#define NEXTSTATE_BENCH_TIME_H

#include <stdlib.h>
#include <time.h>

static inline double bench_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int bench_cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), bench_cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
