/* test_search_lazy.c — the evaluator interface of ns_search, eager GBFS's
 * preferred operators kept from evaluation, lazy GBFS with preferred
 * operators, and the time limit read by elapsed time (issue #14 D3). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The same from PDDL texts. */
static bool gparse(gtask *g, const char *dom, const char *prob)
{
    ns_error e;
    bool ok = ns_domain_parse(&g->d, dom, "d", &e) == NS_OK && ns_problem_parse(&g->p, &g->d, prob, "p", &e) == NS_OK &&
              ns_task_ground(&g->t, &g->d, &g->p, &e) == NS_OK;
    if (!ok) fprintf(stderr, "  parse: %s\n", e.msg);
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
        ns_evaluator ev = {&c, counting_eval, NULL, NULL, 1, NULL};
        ns_search_result r1 = run(&g.t, NS_SEARCH_GBFS, NS_H_BLIND, &ev, pref);
        CHECK_EQ_INT(r0.status, NS_OK);
        CHECK_EQ_INT(r1.status, NS_OK);
        CHECK_EQ_INT(r0.expanded, r1.expanded);
        CHECK_EQ_INT(r0.evaluated, r1.evaluated);
        CHECK_EQ_INT(r0.plan_len, r1.plan_len);
        for (int i = 0; i < r0.plan_len && i < r1.plan_len; i++) CHECK_EQ_INT(r0.plan[i], r1.plan[i]);
        /* eager search: one evaluation per state, the preferred operators
           from it (kept until the state is expanded) */
        CHECK_EQ_INT(c.calls, r1.evaluated);
        CHECK_EQ_INT(c.pref_calls, pref ? r1.evaluated : 0);
        ns_evaluator_free(&c.inner);
        ns_search_result_free(&r0);
        ns_search_result_free(&r1);
    }
    gfree(&g);
}

/* ---- eager GBFS: preferred operators kept from evaluation ----
 * A preferred_fn hook sees, at every expansion, the state and the helpful
 * actions the search took for it; it compares them with a fresh h^FF
 * evaluation of that state (any stale, shifted or lost list shows), folds
 * both into a trace, and filters them (every one, or every other one). */
typedef struct pcheck {
    ns_heuristic *ff;
    int *fresh;
    int nwords;
    int every; /* keep ops[0], ops[every], … */
    long calls, wrong;
    uint64_t trace;
} pcheck;

static uint64_t fold(uint64_t h, uint64_t x) { return (h ^ x) * 0x100000001b3ull; }

static int pcheck_fn(void *ctx, const ns_word *s, const int *ops, int nops, int *out)
{
    pcheck *c = ctx;
    c->calls++;
    int n = ns_heuristic_eval(c->ff, s) == NS_H_INF ? -1 : ns_heuristic_preferred(c->ff, s, c->fresh);
    bool same = n == nops;
    for (int k = 0; same && k < n; k++) same = c->fresh[k] == ops[k];
    if (!same) c->wrong++;
    for (int w = 0; w < c->nwords; w++) c->trace = fold(c->trace, s[w]);
    int m = 0;
    for (int k = 0; k < nops; k++) {
        c->trace = fold(c->trace, (uint64_t)ops[k]);
        if (k % c->every == 0) out[m++] = ops[k];
    }
    return m;
}

typedef struct prun {
    ns_search_result r;
    pcheck c;
    counting n;
} prun;

/* Eager GBFS-h^FF (through a counting evaluator) with the hook; cache: opts.pref_cache. */
static prun pref_run(const ns_task *t, int every, size_t cache, size_t memory)
{
    prun p;
    memset(&p, 0, sizeof p);
    p.c.ff = ns_heuristic_new(t, NS_H_FF);
    p.c.fresh = ns_xcalloc((size_t)t->nops + 1, sizeof(int));
    p.c.nwords = t->nwords;
    p.c.every = every;
    ns_evaluator_classical(&p.n.inner, t, NS_H_FF);
    ns_evaluator ev = {&p.n, counting_eval, NULL, NULL, 1, NULL};
    ns_search_opts o;
    ns_search_opts_default(&o);
    o.algo = NS_SEARCH_GBFS;
    o.evaluator = &ev;
    o.max_evaluated = 200000; /* a budget, not a clock: the same on every run */
    o.pref_cache = cache;
    o.memory_limit = memory;
    if (every > 0) {
        o.preferred_fn = pcheck_fn;
        o.preferred_ctx = &p.c;
    }
    ns_search(t, &o, &p.r);
    ns_evaluator_free(&p.n.inner);
    ns_heuristic_free(p.c.ff);
    free(p.c.fresh);
    return p;
}

/* Kept preferred operators are the state's own (a fresh evaluation gives the
 * same), and the search — counts, plan, every expansion's state and helpful
 * actions in order — is the one that evaluates each state again at its
 * expansion (pref_cache 0), with the cache full from the start, part way
 * through, or never; with and without a filter; dead ends among the
 * successors (smash makes a goal relaxed-unreachable). */
static void test_pref_kept(void)
{
    static const char *dom =
        "(define (domain smash) (:requirements :strips) (:predicates (intact ?x) (ready ?x) (done ?x) (smashed ?x))"
        " (:action prep :parameters (?x) :precondition (intact ?x) :effect (ready ?x))"
        " (:action finish :parameters (?x) :precondition (and (intact ?x) (ready ?x)) :effect (done ?x))"
        " (:action smash :parameters (?x) :precondition (intact ?x) :effect (and (smashed ?x) (not (intact ?x)))))";
    static const char *prob = "(define (problem p) (:domain smash) (:objects a b c d e f)"
                              " (:init (intact a) (intact b) (intact c) (intact d) (intact e) (intact f))"
                              " (:goal (and (done a) (done b) (done c) (done d) (done e) (done f))))";
    const struct { const char *gen, *dom, *arg; int n; } cases[] = {
        {NULL, NULL, NULL, 0},
        {"blocksworld", "domains/blocksworld/domain.pddl", "blocks", 14},
        {"logistics", "domains/logistics/domain.pddl", "packages", 6},
        {"gripper", "domains/gripper/domain.pddl", "balls", 10},
        {"floortile", "domains/floortile/domain.pddl", "rows", 3},
    };
    int dropped = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gtask g;
        if (cases[i].gen ? !gload(&g, cases[i].gen, cases[i].dom, cases[i].arg, cases[i].n, 7) : !gparse(&g, dom, prob)) {
            CHECK(0);
            continue;
        }
        const ns_task *t = &g.t;
        for (int every = 0; every <= 2; every++) {
            prun ref = pref_run(t, every, 0, 0);
            CHECK(ref.r.status == NS_OK || ref.r.status == NS_INCOMPLETE || ref.r.status == NS_UNSOLVABLE);
            CHECK(ref.r.status != NS_OK || ns_plan_ops_valid(t, ref.r.plan, ref.r.plan_len));
            CHECK_EQ_INT(ref.c.wrong, 0);
            CHECK(every == 0 || ref.c.calls > 0);
            /* re-evaluation at every expansion but the goal's */
            CHECK_EQ_INT(ref.n.pref_calls, ref.r.expanded - (ref.r.status == NS_OK));
            const size_t caches[] = {SIZE_MAX, ((size_t)t->nops + 20) * sizeof(int), sizeof(int)};
            for (int k = 0; k < 3; k++) {
                prun p = pref_run(t, every, caches[k], 0);
                CHECK_EQ_INT(p.r.status, ref.r.status);
                CHECK_EQ_INT(p.r.expanded, ref.r.expanded);
                CHECK_EQ_INT(p.r.generated, ref.r.generated);
                CHECK_EQ_INT(p.r.evaluated, ref.r.evaluated);
                CHECK_EQ_INT(p.r.init_h, ref.r.init_h);
                CHECK_EQ_INT(p.r.plan_len, ref.r.plan_len);
                for (int j = 0; j < p.r.plan_len && j < ref.r.plan_len; j++) CHECK_EQ_INT(p.r.plan[j], ref.r.plan[j]);
                CHECK_EQ_INT(p.c.calls, ref.c.calls);
                CHECK_EQ_INT(p.c.wrong, 0);
                CHECK(p.c.trace == ref.c.trace);
                long reeval = p.n.calls - p.r.evaluated; /* second evaluations at expansion */
                if (k == 0) CHECK_EQ_INT(reeval, 0);
                else if (k == 1) CHECK(reeval > 0 && reeval < ref.n.pref_calls);
                else CHECK_EQ_INT(reeval, ref.n.pref_calls);
                ns_search_result_free(&p.r);
            }
            if (every == 1)
                printf("  %s: %s, %ld expanded, %ld evaluated, %ld hook calls\n", cases[i].gen ? cases[i].gen : "smash",
                       ref.r.status == NS_OK ? "solved" : "stopped", ref.r.expanded, ref.r.evaluated, ref.c.calls);
            ns_search_result_free(&ref.r);
        }
        /* under a memory limit the kept operators are dropped first, then
           the search goes on as the one that keeps none: the same status and
           counts at every limit (some drop part way, some run out) */
        for (size_t kb = 16; kb <= 8192; kb += kb / 4) {
            prun ref = pref_run(t, 2, 0, kb << 10), p = pref_run(t, 2, SIZE_MAX, kb << 10);
            CHECK_EQ_INT(p.r.status, ref.r.status);
            CHECK_EQ_INT(p.r.expanded, ref.r.expanded);
            CHECK_EQ_INT(p.r.evaluated, ref.r.evaluated);
            CHECK_EQ_INT(p.r.plan_len, ref.r.plan_len);
            CHECK(p.c.trace == ref.c.trace);
            CHECK_EQ_INT(p.c.wrong, 0);
            if (p.n.calls > p.r.evaluated && p.r.status == NS_OK) dropped++;
            ns_search_result_free(&ref.r);
            ns_search_result_free(&p.r);
        }
        gfree(&g);
    }
    printf("  %d runs dropped the kept operators at the memory limit and solved\n", dropped);
    CHECK(dropped > 0);
}

/* The kept lists with 4-byte ids (more than 65,536 operators): a chain of
 * 33,000 places walked from o9990 to o9999, whose step operators' names sort
 * last (ids above 65,535); the same search as the one that keeps none. */
static void test_pref_kept_wide(void)
{
    enum { N = 33000 };
    static const char *dom =
        "(define (domain chain) (:requirements :strips) (:predicates (at ?x) (next ?x ?y))"
        " (:action step :parameters (?x ?y) :precondition (and (at ?x) (next ?x ?y)) :effect (and (at ?y) (not (at ?x))))"
        " (:action back :parameters (?x ?y) :precondition (and (at ?y) (next ?x ?y)) :effect (and (at ?x) (not (at ?y)))))";
    size_t cap = (size_t)N * 40 + 256, len = 0;
    char *prob = ns_xmalloc(cap);
    len += (size_t)snprintf(prob + len, cap - len, "(define (problem p) (:domain chain) (:objects");
    for (int i = 0; i < N; i++) len += (size_t)snprintf(prob + len, cap - len, " o%d", i);
    len += (size_t)snprintf(prob + len, cap - len, ") (:init (at o9990)");
    for (int i = 0; i + 1 < N; i++) len += (size_t)snprintf(prob + len, cap - len, " (next o%d o%d)", i, i + 1);
    snprintf(prob + len, cap - len, ") (:goal (at o9999)))");
    gtask g;
    bool ok = gparse(&g, dom, prob);
    free(prob);
    CHECK(ok);
    if (!ok) return;
    CHECK(g.t.nops > 65536);
    prun ref = pref_run(&g.t, 1, 0, 0), p = pref_run(&g.t, 1, SIZE_MAX, 0);
    CHECK_EQ_INT(ref.r.status, NS_OK);
    CHECK_EQ_INT(p.r.status, NS_OK);
    CHECK_EQ_INT(p.r.plan_len, 9);
    CHECK_EQ_INT(p.r.expanded, ref.r.expanded);
    CHECK_EQ_INT(p.r.evaluated, ref.r.evaluated);
    CHECK(p.c.trace == ref.c.trace);
    CHECK_EQ_INT(p.c.wrong, 0);
    CHECK_EQ_INT(ref.c.wrong, 0);
    CHECK_EQ_INT(p.n.calls, p.r.evaluated); /* kept: no second evaluation */
    int wide = 0;
    for (int j = 0; j < p.r.plan_len; j++) wide += p.r.plan[j] > 65535;
    CHECK(wide > 0);
    ns_search_result_free(&ref.r);
    ns_search_result_free(&p.r);
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
            ns_evaluator ev = {&c, counting_eval, NULL, NULL, 1, NULL};
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
    gtask g;
    if (!gparse(&g, dom, prob)) {
        CHECK(0);
        return;
    }
    for (int h = NS_H_BLIND; h <= NS_H_LMCUT; h++) {
        ns_search_result r = run(&g.t, NS_SEARCH_LAZY, (ns_heuristic_kind)h, NULL, true);
        CHECK(r.status == NS_UNSOLVABLE);
        CHECK(r.plan == NULL);
        ns_search_result_free(&r);
    }
    gfree(&g);
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
    NS_RUN(test_pref_kept);
    NS_RUN(test_pref_kept_wide);
    NS_RUN(test_lazy_plans);
    NS_RUN(test_lazy_unsolvable);
    NS_RUN(test_time_limit);
    NS_RUN(test_names);
    return ns_test_summary("test_search_lazy");
}
