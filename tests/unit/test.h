/* test.h — a tiny unit-test harness: each tests/unit/test_X.c is one program
 * whose main() calls NS_RUN(fn) per test and returns ns_test_summary().
 * Output: "ok NAME" / "FAIL NAME: file:line: expr" and a closing
 * "NAME: N passed, N failed" line that tests/run.sh adds up. */
#ifndef NS_TEST_H
#define NS_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ns_t_pass, ns_t_fail, ns_t_cur_failed;

#define CHECK(expr)                                                           \
    do {                                                                      \
        if (!(expr)) {                                                        \
            if (!ns_t_cur_failed) printf("\n");                               \
            printf("  %s:%d: check failed: %s\n", __FILE__, __LINE__, #expr); \
            ns_t_cur_failed = 1;                                              \
        }                                                                     \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                       \
    do {                                                                         \
        long long ns_a_ = (long long)(a), ns_b_ = (long long)(b);                \
        if (ns_a_ != ns_b_) {                                                    \
            printf("  %s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, \
                   #a, #b, ns_a_, ns_b_);                                        \
            ns_t_cur_failed = 1;                                                 \
        }                                                                        \
    } while (0)

#define CHECK_STR(a, b)                                                            \
    do {                                                                           \
        const char *ns_a_ = (a), *ns_b_ = (b);                                     \
        if (!ns_a_ || !ns_b_ || strcmp(ns_a_, ns_b_) != 0) {                       \
            printf("  %s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
                   #a, #b, ns_a_ ? ns_a_ : "(null)", ns_b_ ? ns_b_ : "(null)");    \
            ns_t_cur_failed = 1;                                                   \
        }                                                                          \
    } while (0)

#define NS_RUN(fn)                                  \
    do {                                            \
        ns_t_cur_failed = 0;                        \
        fn();                                       \
        if (ns_t_cur_failed) {                      \
            ns_t_fail++;                            \
            printf("FAIL %s\n", #fn);               \
        } else {                                    \
            ns_t_pass++;                            \
            printf("ok %s\n", #fn);                 \
        }                                           \
        fflush(stdout);                             \
    } while (0)

/* Prints "SKIP reason" and counts nothing; use when shared data is absent. */
#define NS_SKIP(fn, reason) printf("skip %s: %s\n", #fn, reason)

static inline int ns_test_summary(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, ns_t_pass, ns_t_fail);
    return ns_t_fail ? 1 : 0;
}

/* Path of the shared benchmarks folder, or NULL when absent
 * (NEXTSTATE_BENCHMARKS overrides ../shared/benchmarks). */
#include <sys/stat.h>
static inline const char *ns_test_benchmarks(void)
{
    const char *p = getenv("NEXTSTATE_BENCHMARKS");
    if (!p) p = "../shared/benchmarks";
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode) ? p : NULL;
}

#endif
