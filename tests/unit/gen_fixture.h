/* gen_fixture.h — test helpers that write generated problems to a folder,
 * build a small ferry dataset and compare files byte for byte. */
#ifndef NS_TEST_GEN_FIXTURE_H
#define NS_TEST_GEN_FIXTURE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/core/gen.h"
#include "nextstate/data/dataset.h"
#include "nextstate/util/util.h"

/* Writes DIR/p0.pddl … DIR/p{n-1}.pddl for `domain` with seeds seed0 + i;
 * when grow_first, option 0 grows by i % 2 so the sizes vary.  Returns the
 * malloc'ed paths, or NULL (after printing) on error. */
static inline char **ns_test_gen_problems(const char *dir, const char *domain, const ns_gen_arg *args, int nargs,
                                          int n, uint64_t seed0, bool grow_first)
{
    ns_error e;
    if (ns_mkdir_p(dir, &e) != NS_OK) return NULL;
    char **paths = calloc((size_t)n + 1, sizeof(char *));
    ns_gen_arg a[16];
    for (int i = 0; i < n; i++) {
        memcpy(a, args, sizeof(ns_gen_arg) * (size_t)nargs);
        if (grow_first && nargs > 0) a[0].value += i % 2;
        ns_buf b;
        ns_buf_init(&b);
        char name[64];
        snprintf(name, sizeof name, "p%d", i);
        paths[i] = malloc(512);
        snprintf(paths[i], 512, "%s/%s.pddl", dir, name);
        ns_status st = ns_gen_problem(domain, a, nargs, seed0 + (uint64_t)i, name, &b, &e);
        if (st == NS_OK) st = ns_write_file_atomic(paths[i], b.data, b.len, &e);
        ns_buf_free(&b);
        if (st != NS_OK) {
            printf("  generating %s: %s\n", paths[i], e.msg);
            for (int j = 0; j <= i; j++) free(paths[j]);
            free(paths);
            return NULL;
        }
    }
    return paths;
}

static inline void ns_test_free_paths(char **p, int n)
{
    for (int i = 0; p && i < n; i++) free(p[i]);
    free(p);
}

/* Builds *ds (optimal mode, 8 plans, seed 7) from n generated ferry problems
 * of `cars` cars (seeds 3, 4, …) written to DIR/problems; false (after
 * printing) on error. */
static inline bool ns_test_ferry_dataset(ns_dataset *ds, const char *dir, int n, int cars)
{
    char pdir[400];
    snprintf(pdir, sizeof pdir, "%.300s/problems", dir);
    ns_gen_arg a[1] = {{"cars", cars}};
    char **paths = ns_test_gen_problems(pdir, "ferry", a, 1, n, 3, false);
    if (!paths) return false;
    ns_error e;
    ns_dataset_opts o = {NS_SPACE_OPTIMAL, 0, 8, 7, 0, false, false};
    bool ok = ns_dataset_build(ds, "domains/ferry/domain.pddl", (const char *const *)paths, n, &o, &e) == NS_OK;
    if (!ok) printf("  building the dataset: %s: %s\n", e.file, e.msg);
    ns_test_free_paths(paths, n);
    return ok;
}

static inline bool ns_test_files_equal(const char *a, const char *b)
{
    char *x, *y;
    size_t nx, ny;
    ns_error e;
    if (ns_read_file(a, &x, &nx, &e) != NS_OK) return false;
    if (ns_read_file(b, &y, &ny, &e) != NS_OK) {
        free(x);
        return false;
    }
    bool eq = nx == ny && memcmp(x, y, nx) == 0;
    free(x);
    free(y);
    return eq;
}

#endif
