/* test_forkmap.c — jobs in child processes: the same bytes as in-process, in
 * the jobs' order, whatever the number of children; outputs larger than a
 * pipe's buffer from several children at once; a child that dies is reported,
 * the others are not disturbed; each child has its own CPU clock. */
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "nextstate/util/forkmap.h"
#include "nextstate/util/util.h"
#include "test.h"

/* Job i: i * 10,000 + 1 bytes of a pattern of i (up to 400 kB: past a pipe's 64 kB). */
static void pattern(void *ctx, int i, ns_buf *out)
{
    (void)ctx;
    for (int k = 0; k < i * 10000 + 1; k++) ns_buf_putc(out, (char)('a' + (i * 7 + k) % 26));
}

static bool is_pattern(const ns_buf *b, int i)
{
    if (b->len != (size_t)i * 10000 + 1) return false;
    for (size_t k = 0; k < b->len; k++)
        if (b->data[k] != (char)('a' + ((size_t)i * 7 + k) % 26)) return false;
    return true;
}

static void test_same_as_in_process(void)
{
    enum { N = 40 };
    for (int jobs = 0; jobs <= 5; jobs += 1) {
        ns_buf out[N];
        bool ok[N];
        ns_forkmap(N, jobs, pattern, NULL, out, ok);
        int good = 0;
        for (int i = 0; i < N; i++) {
            good += ok[i] && is_pattern(&out[i], i);
            ns_buf_free(&out[i]);
        }
        CHECK_EQ_INT(good, N);
    }
}

/* Job 3 kills itself after writing a little; the others write their index. */
static void dies(void *ctx, int i, ns_buf *out)
{
    int *parent = ctx;
    ns_buf_printf(out, "%d", i);
    if (i == 3 && getpid() != *parent) raise(SIGKILL);
}

static void test_child_dies(void)
{
    enum { N = 8 };
    int parent = (int)getpid();
    ns_buf out[N];
    bool ok[N];
    ns_forkmap(N, 3, dies, &parent, out, ok);
    for (int i = 0; i < N; i++) {
        char want[8];
        snprintf(want, sizeof want, "%d", i);
        CHECK(ok[i] == (i != 3));
        if (i != 3) CHECK(out[i].len == strlen(want) && !memcmp(out[i].data, want, out[i].len));
        ns_buf_free(&out[i]);
    }
}

/* Job i: spends about 0.05 s of CPU, then reports ns_cpu_now (the child's own clock). */
static void clock_job(void *ctx, int i, ns_buf *out)
{
    (void)ctx;
    (void)i;
    double t0 = ns_cpu_now(), now = t0;
    while (now - t0 < 0.05) now = ns_cpu_now(); /* reading the clock spends CPU */
    ns_buf_put(out, &now, sizeof now);
}

static void test_own_clock(void)
{
    enum { N = 6 };
    for (double t0 = ns_cpu_now(); ns_cpu_now() - t0 < 0.3;) {
    } /* 0.3 s of CPU first: a child's clock must not start from the parent's */
    ns_buf out[N];
    bool ok[N];
    ns_forkmap(N, 2, clock_job, NULL, out, ok);
    for (int i = 0; i < N; i++) {
        double t = 1e9;
        if (ok[i] && out[i].len == sizeof t) memcpy(&t, out[i].data, sizeof t);
        CHECK(t < 0.25); /* the child's 0.05 s and its start, not the parent's 0.3 s */
        ns_buf_free(&out[i]);
    }
    int cpus = ns_forkmap_jobs(0);
    CHECK(cpus >= 1 && ns_forkmap_jobs(1) == cpus); /* memory for every CPU */
    CHECK(ns_forkmap_jobs((size_t)1 << 62) == 1);    /* more than any machine holds: one */
}

int main(void)
{
    NS_RUN(test_same_as_in_process);
    NS_RUN(test_child_dies);
    NS_RUN(test_own_clock);
    return ns_test_summary("test_forkmap");
}
