/* test_space.c — full state spaces against brute force, optimal-plan DAGs
 * against the full space, and sampled plans against validation. */
#include "nextstate/core/gen.h"
#include "nextstate/core/plan.h"
#include "nextstate/core/search.h"
#include "nextstate/data/space.h"
#include "test.h"

typedef struct loaded {
    ns_domain d;
    ns_problem p;
    ns_task t;
} loaded;

static int load_gen(loaded *l, const char *domain, const ns_gen_arg *args, int nargs, uint64_t seed)
{
    char path[256];
    snprintf(path, sizeof path, "domains/%s/domain.pddl", domain);
    ns_error e;
    ns_buf b;
    ns_buf_init(&b);
    if (ns_domain_read(&l->d, path, &e) != NS_OK || ns_gen_problem(domain, args, nargs, seed, "t", &b, &e) != NS_OK ||
        ns_problem_parse(&l->p, &l->d, b.data, "gen", &e) != NS_OK || ns_task_ground(&l->t, &l->d, &l->p, &e) != NS_OK) {
        printf("  load %s: %s\n", domain, e.msg);
        ns_buf_free(&b);
        return -1;
    }
    ns_buf_free(&b);
    return 0;
}

static void unload(loaded *l)
{
    ns_task_free(&l->t);
    ns_problem_free(&l->p);
    ns_domain_free(&l->d);
}

/* A transition as bytes: state words, op, next-state words. */
typedef struct trans_set {
    unsigned char *rows;
    size_t n, cap, width;
} trans_set;

static void ts_add(trans_set *s, const ns_word *a, int op, const ns_word *b, int nwords)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->rows = realloc(s->rows, s->cap * s->width);
    }
    unsigned char *r = s->rows + s->n * s->width;
    memcpy(r, a, sizeof(ns_word) * (size_t)nwords);
    memcpy(r + sizeof(ns_word) * (size_t)nwords, &op, sizeof op);
    memcpy(r + sizeof(ns_word) * (size_t)nwords + sizeof op, b, sizeof(ns_word) * (size_t)nwords);
    s->n++;
}

static size_t cmp_width;
static int cmp_rows(const void *a, const void *b) { return memcmp(a, b, cmp_width); }

/* Brute force: depth-first search over a plain array of visited states,
 * trying every operator with ns_task_applicable (no successor generator). */
static void brute_force(const ns_task *t, trans_set *out, long *nstates)
{
    size_t w = (size_t)t->nwords;
    ns_word *visited = malloc(sizeof(ns_word) * w);
    size_t nv = 1, cap = 1;
    memcpy(visited, t->init, sizeof(ns_word) * w);
    ns_word *next = malloc(sizeof(ns_word) * w);
    for (size_t i = 0; i < nv; i++) {
        for (int op = 0; op < t->nops; op++) {
            if (!ns_task_applicable(t, op, visited + i * w)) continue;
            ns_task_apply(t, op, visited + i * w, next);
            ts_add(out, visited + i * w, op, next, t->nwords);
            bool seen = false;
            for (size_t j = 0; j < nv && !seen; j++) seen = !memcmp(visited + j * w, next, sizeof(ns_word) * w);
            if (!seen) {
                if (nv == cap) {
                    cap *= 2;
                    visited = realloc(visited, sizeof(ns_word) * w * cap);
                }
                memcpy(visited + nv++ * w, next, sizeof(ns_word) * w);
            }
        }
    }
    *nstates = (long)nv;
    free(visited);
    free(next);
}

static void check_full_against_brute_force(const char *domain, const ns_gen_arg *args, int nargs, uint64_t seed)
{
    loaded l;
    if (load_gen(&l, domain, args, nargs, seed)) {
        CHECK(0);
        return;
    }
    ns_space sp;
    ns_space_opts o = {.mode = NS_SPACE_FULL};
    ns_error e;
    CHECK(ns_space_build(&sp, &l.t, &o, &e) == NS_OK);
    CHECK(sp.complete);
    trans_set a = {0}, b = {0};
    a.width = b.width = 2 * sizeof(ns_word) * (size_t)l.t.nwords + sizeof(int);
    for (uint32_t s = 0; s < sp.states.n; s++)
        for (int64_t k = sp.edge_start[s]; k < sp.edge_start[s + 1]; k++)
            ts_add(&a, ns_registry_get(&sp.states, s), sp.edge_op[k], ns_registry_get(&sp.states, sp.edge_dst[k]),
                   l.t.nwords);
    long bn;
    brute_force(&l.t, &b, &bn);
    CHECK_EQ_INT(sp.states.n, bn);
    CHECK_EQ_INT(a.n, b.n);
    cmp_width = a.width;
    qsort(a.rows, a.n, a.width, cmp_rows);
    qsort(b.rows, b.n, b.width, cmp_rows);
    CHECK(a.n == b.n && memcmp(a.rows, b.rows, a.n * a.width) == 0);
    printf("  %s seed %llu: %u states, %lld transitions, C* = %d\n", domain, (unsigned long long)seed, sp.states.n,
           (long long)sp.nedges, sp.cstar);
    /* h* agrees with breadth-first search from the initial state */
    ns_search_opts so;
    ns_search_opts_default(&so);
    so.algo = NS_SEARCH_BFS;
    ns_search_result r;
    ns_search(&l.t, &so, &r);
    CHECK_EQ_INT(r.status == NS_OK ? r.plan_len : -1, sp.cstar);
    ns_search_result_free(&r);
    free(a.rows);
    free(b.rows);
    ns_space_free(&sp);
    unload(&l);
}

static void test_full_space_brute_force(void)
{
    ns_gen_arg bw = {"blocks", 4};
    check_full_against_brute_force("blocksworld", &bw, 1, 1);
    ns_gen_arg gr = {"balls", 3};
    check_full_against_brute_force("gripper", &gr, 1, 2);
    ns_gen_arg fe[] = {{"cars", 3}, {"locations", 3}};
    check_full_against_brute_force("ferry", fe, 2, 3);
    ns_gen_arg lo[] = {{"packages", 2}, {"cities", 2}, {"size", 2}};
    check_full_against_brute_force("logistics", lo, 3, 4);
    ns_gen_arg va[] = {{"x", 3}, {"y", 2}};
    check_full_against_brute_force("visitall", va, 2, 5);
}

/* a and b hold the same states in the same order, with the same g, h* and transitions */
static void check_same_space(const ns_space *a, const ns_space *b, int nwords)
{
    CHECK_EQ_INT(a->states.n, b->states.n);
    CHECK_EQ_INT(a->nedges, b->nedges);
    CHECK_EQ_INT(a->cstar, b->cstar);
    if (a->states.n != b->states.n || a->nedges != b->nedges) return;
    for (uint32_t s = 0; s < a->states.n; s++) {
        CHECK(memcmp(ns_registry_get(&a->states, s), ns_registry_get(&b->states, s), sizeof(ns_word) * (size_t)nwords) == 0);
        CHECK_EQ_INT(a->g[s], b->g[s]);
        CHECK_EQ_INT(a->hstar[s], b->hstar[s]);
    }
    CHECK(memcmp(a->edge_start, b->edge_start, sizeof(int64_t) * ((size_t)a->states.n + 1)) == 0);
    CHECK(memcmp(a->edge_op, b->edge_op, sizeof(int32_t) * (size_t)a->nedges) == 0);
    CHECK(memcmp(a->edge_dst, b->edge_dst, sizeof(uint32_t) * (size_t)a->nedges) == 0);
}

/* Optimal mode keeps exactly the optimal edges of the full space, and every
 * sampled plan is a valid plan of length C*; the heuristic-free search and
 * LM-cut's (forced, or after the former gives up) build the same DAG. */
static void check_dag(const char *domain, const ns_gen_arg *args, int nargs, uint64_t seed)
{
    loaded l;
    if (load_gen(&l, domain, args, nargs, seed)) {
        CHECK(0);
        return;
    }
    ns_space full, dag;
    ns_space_opts of = {.mode = NS_SPACE_FULL}, od = {.mode = NS_SPACE_OPTIMAL};
    ns_error e;
    CHECK(ns_space_build(&full, &l.t, &of, &e) == NS_OK);
    CHECK(ns_space_build(&dag, &l.t, &od, &e) == NS_OK);
    CHECK(dag.complete);
    CHECK_EQ_INT(dag.cstar, full.cstar);
    long opt_edges = 0, opt_states = 0;
    for (uint32_t s = 0; s < full.states.n; s++) {
        if (full.hstar[s] >= 0 && full.g[s] + full.hstar[s] == full.cstar) opt_states++;
        for (int64_t k = full.edge_start[s]; k < full.edge_start[s + 1]; k++) opt_edges += ns_space_edge_optimal(&full, s, k);
    }
    CHECK_EQ_INT(dag.states.n, opt_states);
    CHECK_EQ_INT(dag.nedges, opt_edges);
    CHECK(ns_space_count_plans(&dag) == ns_space_count_plans(&full));
    for (long blind = -1; blind <= 10; blind += 11) { /* LM-cut at once; LM-cut after 10 states */
        ns_space lm;
        ns_space_opts ol = {.mode = NS_SPACE_OPTIMAL, .blind_states = blind};
        CHECK(ns_space_build(&lm, &l.t, &ol, &e) == NS_OK);
        check_same_space(&dag, &lm, l.t.nwords);
        CHECK(dag.explored > lm.explored); /* the pruned search generates fewer states */
        ns_space_free(&lm);
    }
    /* every DAG state is on the full space's optimal paths */
    for (uint32_t s = 0; s < dag.states.n; s++) {
        uint32_t f = ns_registry_find(&full.states, ns_registry_get(&dag.states, s));
        CHECK(f != NS_NO_STATE);
        if (f != NS_NO_STATE) CHECK_EQ_INT(full.hstar[f], dag.hstar[s]);
    }
    int k = 25;
    int64_t *plans = malloc(sizeof(int64_t) * (size_t)(k * (dag.cstar + 1)));
    int *ops = malloc(sizeof(int) * (size_t)(dag.cstar + 1));
    int n = ns_space_sample_plans(&dag, k, 42, plans);
    double total = ns_space_count_plans(&dag);
    CHECK_EQ_INT(n, total < k ? (int)total : k);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < dag.cstar; j++) ops[j] = dag.edge_op[plans[(size_t)i * (size_t)dag.cstar + (size_t)j]];
        CHECK(ns_plan_ops_valid(&l.t, ops, dag.cstar));
        for (int i2 = 0; i2 < i; i2++) /* distinct */
            CHECK(memcmp(plans + (size_t)i * (size_t)dag.cstar, plans + (size_t)i2 * (size_t)dag.cstar,
                         sizeof(int64_t) * (size_t)dag.cstar) != 0);
    }
    /* same seed, same plans */
    int64_t *again = malloc(sizeof(int64_t) * (size_t)(k * (dag.cstar + 1)));
    CHECK_EQ_INT(ns_space_sample_plans(&dag, k, 42, again), n);
    CHECK(memcmp(plans, again, sizeof(int64_t) * (size_t)n * (size_t)dag.cstar) == 0);
    printf("  %s: %u DAG states of %u, %lld optimal edges, %.0f optimal plans\n", domain, dag.states.n, full.states.n,
           (long long)dag.nedges, total);
    free(again);
    free(plans);
    free(ops);
    ns_space_free(&full);
    ns_space_free(&dag);
    unload(&l);
}

static void test_optimal_dag(void)
{
    ns_gen_arg bw = {"blocks", 5};
    check_dag("blocksworld", &bw, 1, 11);
    ns_gen_arg gr = {"balls", 4};
    check_dag("gripper", &gr, 1, 12);
    ns_gen_arg fe[] = {{"cars", 4}, {"locations", 3}};
    check_dag("ferry", fe, 2, 13);
    ns_gen_arg lo[] = {{"packages", 3}};
    check_dag("logistics", lo, 1, 14);
}

/* A cap that stops the DAG exploration falls back to one optimal plan. */
static void test_cap_fallback(void)
{
    loaded l;
    ns_gen_arg fe[] = {{"cars", 6}, {"locations", 3}};
    if (load_gen(&l, "ferry", fe, 2, 5)) {
        CHECK(0);
        return;
    }
    ns_space sp;
    ns_space_opts o = {.mode = NS_SPACE_OPTIMAL, .max_states = 50};
    ns_error e;
    CHECK(ns_space_build(&sp, &l.t, &o, &e) == NS_OK);
    CHECK(!sp.complete);
    CHECK_EQ_INT(sp.states.n, sp.cstar + 1);
    CHECK(ns_space_count_plans(&sp) == 1);
    ns_space_free(&sp);
    ns_space_opts of = {.mode = NS_SPACE_FULL, .max_states = 100};
    CHECK(ns_space_build(&sp, &l.t, &of, &e) == NS_OK);
    CHECK(!sp.complete);
    ns_space_free(&sp);
    unload(&l);
}

int main(void)
{
    NS_RUN(test_full_space_brute_force);
    NS_RUN(test_optimal_dag);
    NS_RUN(test_cap_fallback);
    return ns_test_summary("test_space");
}
