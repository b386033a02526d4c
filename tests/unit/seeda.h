/* seeda.h — helpers shared by the tests that read the first paper's seedA
 * benchmarks (test_wl.c, test_fsf.c): problem listings, state trajectories
 * rebuilt from plans, and golden-row comparison. */
#ifndef NS_TEST_SEEDA_H
#define NS_TEST_SEEDA_H

#include <dirent.h>
#include <math.h>
#include "nextstate/util/npy.h"
#include "nextstate/core/plan.h"
#include "test.h"

static const char *DOMS[] = {"blocks", "gripper", "logistics", "visitall-from-everywhere"};
static const char *SPLITS[] = {"train", "validation", "test-interpolation", "test-extrapolation"};

typedef struct loaded {
    ns_domain d;
    ns_problem p;
    ns_task t;
    int nstates;
    ns_word *states; /* nstates × t.nwords */
} loaded;

static inline int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Problem names (file stems) of dir whose files end in ext, sorted. */
static inline char **list_stems(const char *dir, const char *ext, const char *not_suffix, int *n)
{
    *n = 0;
    DIR *dp = opendir(dir);
    if (!dp) return NULL;
    char **names = NULL;
    int cap = 0;
    struct dirent *de;
    size_t le = strlen(ext);
    while ((de = readdir(dp))) {
        size_t l = strlen(de->d_name);
        if (l <= le || strcmp(de->d_name + l - le, ext) != 0) continue;
        char stem[512];
        snprintf(stem, sizeof stem, "%.*s", (int)(l - le), de->d_name);
        if (not_suffix) {
            size_t ls = strlen(not_suffix), lt = strlen(stem);
            if (lt >= ls && !strcmp(stem + lt - ls, not_suffix)) continue;
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            names = realloc(names, sizeof(char *) * (size_t)cap);
        }
        names[(*n)++] = strdup(stem);
    }
    closedir(dp);
    qsort(names, (size_t)*n, sizeof(char *), cmp_str);
    return names;
}

static inline void free_stems(char **s, int n)
{
    for (int i = 0; i < n; i++) free(s[i]);
    free(s);
}

/* Loads domain + problem and rebuilds s_0..s_T from the plan (plan may be NULL). */
static inline bool load_traj(loaded *L, const char *dom_path, const char *prob_path, const char *plan_path)
{
    ns_error e;
    memset(L, 0, sizeof *L);
    if (ns_domain_read(&L->d, dom_path, &e) != NS_OK) {
        printf("  %s: %s\n", dom_path, e.msg);
        return false;
    }
    if (ns_problem_read(&L->p, &L->d, prob_path, &e) != NS_OK || ns_task_ground(&L->t, &L->d, &L->p, &e) != NS_OK) {
        printf("  %s: %s\n", prob_path, e.msg);
        return false;
    }
    ns_plan plan = {0};
    if (plan_path && ns_plan_read(&plan, &L->t, plan_path, &e) != NS_OK) {
        printf("  %s: %s\n", plan_path, e.msg);
        return false;
    }
    int W = L->t.nwords;
    L->nstates = plan.n + 1;
    L->states = calloc((size_t)L->nstates * (size_t)W, sizeof(ns_word));
    memcpy(L->states, L->t.init, sizeof(ns_word) * (size_t)W);
    bool ok = true;
    for (int i = 0; i < plan.n && ok; i++) {
        const ns_plan_step *st = &plan.steps[i];
        int op = ns_task_find_op(&L->t, st->schema, st->args, st->nargs);
        if (op < 0 || !ns_task_applicable(&L->t, op, L->states + (size_t)i * (size_t)W)) {
            printf("  %s: step %d not applicable\n", plan_path, i + 1);
            ok = false;
            break;
        }
        ns_task_apply(&L->t, op, L->states + (size_t)i * (size_t)W, L->states + (size_t)(i + 1) * (size_t)W);
    }
    ns_plan_free(&plan);
    return ok;
}

static inline void free_traj(loaded *L)
{
    free(L->states);
    ns_task_free(&L->t);
    ns_problem_free(&L->p);
    ns_domain_free(&L->d);
}

static inline double elem(const ns_array *a, int64_t i)
{
    switch (a->dtype) {
    case NS_F32: return ((const float *)a->data)[i];
    case NS_F64: return ((const double *)a->data)[i];
    case NS_I64: return (double)((const int64_t *)a->data)[i];
    case NS_I32: return ((const int32_t *)a->data)[i];
    default: return NAN;
    }
}

static inline bool row_equal(const ns_array *a, int64_t row, const float *x, int d)
{
    for (int j = 0; j < d; j++)
        if ((float)elem(a, row * d + j) != x[j] || elem(a, row * d + j) != (double)x[j]) return false;
    return true;
}

#endif
