/* test_search_lazy.c — the evaluator interface of ns_search, lazy GBFS with
 * preferred operators, and the time limit read by elapsed time (issue #14 D3). */
#include <stdio.h>
#include <stdlib.h>
#include "nextstate/core/gen.h"
#include "nextstate/core/heuristic.h"
#include "nextstate/core/pddl.h"
#include "nextstate/core/plan.h"
#include "nextstate/core/search.h"
#include "nextstate/core/task.h"
#include "nextstate/util/util.h"
#include "test.h"

typedef struct gtask {
    ns_domain d;
    ns_problem p;
    ns_task t;
} gtask;

static bool gload(gtask *g, const char *gen, const char *dom, const char *arg, int n, unsigned seed)
{
    ns_gen_arg a = {arg, n};
    ns_buf b;
    ns_buf_init(&b);
    ns_error e;
    bool ok = ns_gen_problem(gen, &a, 1, seed, "p", &b, &e) == NS_OK && ns_domain_read(&g->d, dom, &e) == NS_OK &&
              ns_problem_parse(&g->p, &g->d, b.data, "p", &e) == NS_OK && ns_task_ground(&g->t, &g->d, &g->p, &e) == NS_OK;
    ns_buf_free(&b);
    if (!ok) fprintf(stderr, "  load %s: %s\n", gen, e.msg);
    return ok;
}

static void gfree(gtask *g)
{
    ns_task_free(&g->t);
    ns_problem_free(&g->p);
    ns_domain_free(&g->d);
}

/* A wrapper evaluator around h^FF that counts calls and preferred requests. */
typedef struct counting {
    ns_evaluator inner;
    long calls, pref_calls;
} counting;

static int counting_eval(void *ctx, const ns_word *s, int *pref, int *npref)
{
    counting *c = ctx;
    c->calls++;
    if (pref) c->pref_calls++;
    return c->inner.eval(c->inner.ctx, s, pref, npref);
}

static ns_search_result run(const ns_task *t, ns_search_algo a, ns_heuristic_kind h, const ns_evaluator *ev,
                            bool pref)
{
    ns_search_opts o;
    ns_search_opts_default(&o);
    o.algo = a;
    o.heuristic = h;
    o.evaluator = ev;
    o.preferred = pref;
    o.time_limit = 60;
    ns_search_result r;
    ns_search(t, &o, &r);
    return r;
}

/* GBFS through a user evaluator expands exactly as with the built-in kind. */
static void test_evaluator_same_search(void)
{
    gtask g;
    if (!gload(&g, "blocksworld", "domains/blocksworld/domain.pddl", "blocks", 12, 3)) {
        CHECK(0);
        return;
    }
    for (int pref = 0; pref <= 1; pref++) {
        ns_search_result r0 = run(&g.t, NS_SEARCH_GBFS, NS_H_FF, NULL, pref);
        counting c = {{0}, 0, 0};
        ns_evaluator_classical(&c.inner, &g.t, NS_H_FF);
        ns_evaluator ev = {&c, counting_eval, NULL, NULL, 1};
        ns_search_result r1 = run(&g.t, NS_SEARCH_GBFS, NS_H_BLIND, &ev, pref);
        CHECK_EQ_INT(r0.status, NS_OK);
        CHECK_EQ_INT(r1.status, NS_OK);
        CHECK_EQ_INT(r0.expanded, r1.expanded);
        CHECK_EQ_INT(r0.evaluated, r1.evaluated);
        CHECK_EQ_INT(r0.plan_len, r1.plan_len);
        for (int i = 0; i < r0.plan_len && i < r1.plan_len; i++) CHECK_EQ_INT(r0.plan[i], r1.plan[i]);
        /* eager search asks for preferred operators once per expansion (a
           re-evaluation of the expanded state) */
        CHECK_EQ_INT(c.calls, r1.evaluated + c.pref_calls);
        CHECK_EQ_INT(c.pref_calls, pref ? r1.expanded - 1 : 0);
        ns_evaluator_free(&c.inner);
        ns_search_result_free(&r0);
        ns_search_result_free(&r1);
    }
    gfree(&g);
}

/* Lazy GBFS: valid plans on three domains, one evaluation per state (h and
 * preferred operators from the same call), deterministic. */
static void test_lazy_plans(void)
{
    const struct { const char *gen, *dom, *arg; int n; } cases[] = {
        {"blocksworld", "domains/blocksworld/domain.pddl", "blocks", 12},
        {"gripper", "domains/gripper/domain.pddl", "balls", 12},
        {"logistics", "domains/logistics/domain.pddl", "packages", 6},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gtask g;
        if (!gload(&g, cases[i].gen, cases[i].dom, cases[i].arg, cases[i].n, 5)) {
            CHECK(0);
            continue;
        }
        for (int pref = 0; pref <= 1; pref++) {
            counting c = {{0}, 0, 0};
            ns_evaluator_classical(&c.inner, &g.t, NS_H_FF);
            ns_evaluator ev = {&c, counting_eval, NULL, NULL, 1};
            ns_search_result r = run(&g.t, NS_SEARCH_LAZY, NS_H_FF, &ev, pref);
            CHECK_EQ_INT(r.status, NS_OK);
            CHECK(r.status == NS_OK && ns_plan_ops_valid(&g.t, r.plan, r.plan_len));
            CHECK_EQ_INT(c.calls, r.evaluated); /* never a second evaluation */
            CHECK_EQ_INT(c.pref_calls, pref ? r.evaluated : 0);
            CHECK(r.expanded <= r.evaluated);
            CHECK(r.init_h > 0);
            ns_search_result r2 = run(&g.t, NS_SEARCH_LAZY, NS_H_FF, NULL, pref);
            CHECK_EQ_INT(r2.expanded, r.expanded);
            CHECK_EQ_INT(r2.plan_len, r.plan_len);
            printf("  %s lazy%s: plan %d, %ld expanded, %ld evaluated\n", cases[i].gen, pref ? "+pref" : "",
                   r.plan_len, r.expanded, r.evaluated);
            ns_search_result_free(&r);
            ns_search_result_free(&r2);
            ns_evaluator_free(&c.inner);
        }
        gfree(&g);
    }
}

/* An unsolvable task: lazy search exhausts and says so. */
static void test_lazy_unsolvable(void)
{
    const char *dom = "(define (domain u) (:predicates (a) (b) (g)) (:action x :parameters () :precondition (a) "
                      ":effect (and (b) (not (a)))) (:action y :parameters () :precondition (and (a) (b)) :effect (g)))";
    const char *prob = "(define (problem p) (:domain u) (:init (a)) (:goal (g)))";
    ns_domain d;
    ns_problem p;
    ns_task t;
    ns_error e;
    CHECK(ns_domain_parse(&d, dom, "u", &e) == NS_OK);
    CHECK(ns_problem_parse(&p, &d, prob, "p", &e) == NS_OK);
    CHECK(ns_task_ground(&t, &d, &p, &e) == NS_OK);
    for (int h = NS_H_BLIND; h <= NS_H_LMCUT; h++) {
        ns_search_result r = run(&t, NS_SEARCH_LAZY, (ns_heuristic_kind)h, NULL, true);
        CHECK(r.status == NS_UNSOLVABLE);
        CHECK(r.plan == NULL);
        ns_search_result_free(&r);
    }
    ns_task_free(&t);
    ns_problem_free(&p);
    ns_domain_free(&d);
}

/* The time limit is checked by elapsed time: A* with LM-cut on 100 blocks
 * (tens of ms per evaluation) stops well within 4× a 0.5 s limit. */
static void test_time_limit(void)
{
    gtask g;
    if (!gload(&g, "blocksworld", "domains/blocksworld/domain.pddl", "blocks", 100, 1)) {
        CHECK(0);
        return;
    }
    ns_search_opts o;
    ns_search_opts_default(&o);
    o.algo = NS_SEARCH_ASTAR;
    o.heuristic = NS_H_LMCUT;
    o.time_limit = 0.5;
    double c0 = ns_cpu_now();
    ns_search_result r;
    ns_search(&g.t, &o, &r);
    double cpu = ns_cpu_now() - c0;
    CHECK_EQ_INT(r.status, NS_OUT_OF_TIME);
    CHECK(cpu < 4 * o.time_limit);
    printf("  astar lmcut bw100, limit 0.5 s: %.3f s CPU, %ld expanded\n", cpu, r.expanded);
    ns_search_result_free(&r);
    gfree(&g);
}

static void test_names(void)
{
    CHECK_EQ_INT(ns_search_algo_parse("lazy"), NS_SEARCH_LAZY);
    CHECK_STR(ns_search_algo_name(NS_SEARCH_LAZY), "lazy");
}

int main(void)
{
    NS_RUN(test_evaluator_same_search);
    NS_RUN(test_lazy_plans);
    NS_RUN(test_lazy_unsolvable);
    NS_RUN(test_time_limit);
    NS_RUN(test_names);
    return ns_test_summary("test_search_lazy");
}
