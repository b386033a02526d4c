/* test_search.c — heuristics and search on small inline PDDL tasks, plus the
 * optimal plan lengths of the shared benchmark's training problems. */
#include <dirent.h>

#include "nextstate/core/heuristic.h"
#include "nextstate/core/pddl.h"
#include "nextstate/core/search.h"
#include "nextstate/core/state.h"
#include "nextstate/core/succgen.h"
#include "nextstate/core/task.h"
#include "nextstate/util/util.h"
#include "nextstate/core/gen.h"
#include "nextstate/core/plan.h"
#include "test.h"

/* ---- inline tasks ---- */

static const char *BLOCKS =
    "(define (domain blocks) (:requirements :strips)"
    " (:predicates (on ?x ?y) (ontable ?x) (clear ?x) (handempty) (holding ?x))"
    " (:action pick-up :parameters (?x)"
    "  :precondition (and (clear ?x) (ontable ?x) (handempty))"
    "  :effect (and (not (ontable ?x)) (not (clear ?x)) (not (handempty)) (holding ?x)))"
    " (:action put-down :parameters (?x) :precondition (holding ?x)"
    "  :effect (and (not (holding ?x)) (clear ?x) (handempty) (ontable ?x)))"
    " (:action stack :parameters (?x ?y) :precondition (and (holding ?x) (clear ?y))"
    "  :effect (and (not (holding ?x)) (not (clear ?y)) (clear ?x) (handempty) (on ?x ?y)))"
    " (:action unstack :parameters (?x ?y) :precondition (and (on ?x ?y) (clear ?x) (handempty))"
    "  :effect (and (holding ?x) (clear ?y) (not (clear ?x)) (not (handempty)) (not (on ?x ?y)))))";

static const char *SUSSMAN =
    "(define (problem sussman) (:domain blocks) (:objects a b c)"
    " (:init (clear c) (on c a) (ontable a) (ontable b) (clear b) (handempty))"
    " (:goal (and (on a b) (on b c))))";

static const char *BLOCKS4 = /* invert the tower a/b/c/d */
    "(define (problem tower4) (:domain blocks) (:objects a b c d)"
    " (:init (clear a) (on a b) (on b c) (on c d) (ontable d) (handempty))"
    " (:goal (and (on d c) (on c b) (on b a))))";

static const char *GRIPPER =
    "(define (domain gripper-strips) (:requirements :strips)"
    " (:predicates (room ?r) (ball ?b) (gripper ?g) (at-robby ?r) (at ?b ?r) (free ?g) (carry ?o ?g))"
    " (:action move :parameters (?from ?to)"
    "  :precondition (and (room ?from) (room ?to) (at-robby ?from))"
    "  :effect (and (at-robby ?to) (not (at-robby ?from))))"
    " (:action pick :parameters (?obj ?room ?gripper)"
    "  :precondition (and (ball ?obj) (room ?room) (gripper ?gripper) (at ?obj ?room)"
    "   (at-robby ?room) (free ?gripper))"
    "  :effect (and (carry ?obj ?gripper) (not (at ?obj ?room)) (not (free ?gripper))))"
    " (:action drop :parameters (?obj ?room ?gripper)"
    "  :precondition (and (ball ?obj) (room ?room) (gripper ?gripper) (carry ?obj ?gripper)"
    "   (at-robby ?room))"
    "  :effect (and (at ?obj ?room) (free ?gripper) (not (carry ?obj ?gripper)))))";

static const char *GRIPPER2 =
    "(define (problem g2) (:domain gripper-strips) (:objects ra rb b1 b2 left right)"
    " (:init (room ra) (room rb) (ball b1) (ball b2) (gripper left) (gripper right)"
    "  (at-robby ra) (free left) (free right) (at b1 ra) (at b2 ra))"
    " (:goal (and (at b1 rb) (at b2 rb))))";

static const char *GRIPPER4 =
    "(define (problem g4) (:domain gripper-strips) (:objects ra rb b1 b2 b3 b4 left right)"
    " (:init (room ra) (room rb) (ball b1) (ball b2) (ball b3) (ball b4) (gripper left)"
    "  (gripper right) (at-robby ra) (free left) (free right) (at b1 ra) (at b2 ra)"
    "  (at b3 ra) (at b4 ra))"
    " (:goal (and (at b1 rb) (at b2 rb) (at b3 rb) (at b4 rb))))";

static const char *LOGISTICS =
    "(define (domain logistics) (:requirements :strips :typing)"
    " (:types truck airplane - vehicle package vehicle - physobj"
    "  airport - location location city physobj - object)"
    " (:predicates (in-city ?l - location ?c - city) (at ?o - physobj ?l - location)"
    "  (in ?p - package ?v - vehicle))"
    " (:action load-truck :parameters (?p - package ?t - truck ?l - location)"
    "  :precondition (and (at ?t ?l) (at ?p ?l)) :effect (and (not (at ?p ?l)) (in ?p ?t)))"
    " (:action load-airplane :parameters (?p - package ?a - airplane ?l - airport)"
    "  :precondition (and (at ?p ?l) (at ?a ?l)) :effect (and (not (at ?p ?l)) (in ?p ?a)))"
    " (:action unload-truck :parameters (?p - package ?t - truck ?l - location)"
    "  :precondition (and (at ?t ?l) (in ?p ?t)) :effect (and (not (in ?p ?t)) (at ?p ?l)))"
    " (:action unload-airplane :parameters (?p - package ?a - airplane ?l - airport)"
    "  :precondition (and (in ?p ?a) (at ?a ?l)) :effect (and (not (in ?p ?a)) (at ?p ?l)))"
    " (:action drive :parameters (?t - truck ?from ?to - location ?c - city)"
    "  :precondition (and (at ?t ?from) (in-city ?from ?c) (in-city ?to ?c))"
    "  :effect (and (not (at ?t ?from)) (at ?t ?to)))"
    " (:action fly :parameters (?a - airplane ?from ?to - airport)"
    "  :precondition (at ?a ?from) :effect (and (not (at ?a ?from)) (at ?a ?to))))";

static const char *LOGISTICS1 = /* one package across two cities: 9 steps */
    "(define (problem log1) (:domain logistics)"
    " (:objects c1 c2 - city l1 l2 - location a1 a2 - airport t1 t2 - truck p - airplane"
    "  pk - package)"
    " (:init (in-city l1 c1) (in-city a1 c1) (in-city l2 c2) (in-city a2 c2)"
    "  (at t1 l1) (at t2 a2) (at p a1) (at pk l1))"
    " (:goal (at pk l2)))";

static const char *LOGISTICS2 = /* two packages, crossing directions */
    "(define (problem log2) (:domain logistics)"
    " (:objects c1 c2 - city l1 l2 - location a1 a2 - airport t1 t2 - truck p - airplane"
    "  pk qk - package)"
    " (:init (in-city l1 c1) (in-city a1 c1) (in-city l2 c2) (in-city a2 c2)"
    "  (at t1 a1) (at t2 a2) (at p a1) (at pk l1) (at qk l2))"
    " (:goal (and (at pk l2) (at qk a1))))";

/* h^max = 2, h^add = 4, h^FF = 3, LM-cut = 3 = h*. */
static const char *FORK =
    "(define (domain fork) (:requirements :strips) (:predicates (s) (p) (g1) (g2))"
    " (:action a :parameters () :precondition (s) :effect (p))"
    " (:action b :parameters () :precondition (p) :effect (g1))"
    " (:action c :parameters () :precondition (p) :effect (g2)))";
static const char *FORK_P =
    "(define (problem fork1) (:domain fork) (:init (s)) (:goal (and (g1) (g2))))";

/* Two equally cheap achievers of g: a (from p) and b (from q), both
 * applicable; h^FF's relaxed plan holds the one its ties pick. */
static const char *TWIN =
    "(define (domain twin) (:requirements :strips) (:predicates (p) (q) (g))"
    " (:action a :parameters () :precondition (p) :effect (g))"
    " (:action b :parameters () :precondition (q) :effect (g)))";
static const char *TWIN_P = "(define (problem twin1) (:domain twin) (:init (p) (q)) (:goal (g)))";

/* Zero-cost x: a -> b and y: b -> a beside z: s -> a and w: s -> b (cost 1):
 * ties between equally cheap supporters must not close the cycle a <- y <- b
 * <- x <- a, which would leave the relaxed plan no applicable operator. */
static const char *ZCYCLE =
    "(define (domain zcycle) (:requirements :strips :action-costs) (:predicates (s) (a) (b) (g))"
    " (:functions (total-cost))"
    " (:action x :parameters () :precondition (a) :effect (and (b) (increase (total-cost) 0)))"
    " (:action y :parameters () :precondition (b) :effect (and (a) (increase (total-cost) 0)))"
    " (:action z :parameters () :precondition (s) :effect (and (a) (increase (total-cost) 1)))"
    " (:action w :parameters () :precondition (s) :effect (and (b) (increase (total-cost) 1)))"
    " (:action gg :parameters () :precondition (and (a) (b)) :effect (and (g) (increase (total-cost) 1))))";
static const char *ZCYCLE_P =
    "(define (problem zc1) (:domain zcycle) (:init (s) (= (total-cost) 0)) (:goal (g)) (:metric minimize (total-cost)))";

/* Costs: x (3) then z (1) is optimal (4); y (2) + w (4) = 6; d (10) directly.
 * h^max = h^add = h^FF = LM-cut = 4; BFS takes the one-step plan d. */
static const char *COSTS =
    "(define (domain costs) (:requirements :strips :action-costs)"
    " (:predicates (s) (a) (b) (g)) (:functions (total-cost))"
    " (:action x :parameters () :precondition (s) :effect (and (a) (increase (total-cost) 3)))"
    " (:action y :parameters () :precondition (s) :effect (and (b) (increase (total-cost) 2)))"
    " (:action z :parameters () :precondition (a) :effect (and (g) (increase (total-cost) 1)))"
    " (:action w :parameters () :precondition (b) :effect (and (g) (increase (total-cost) 4)))"
    " (:action d :parameters () :precondition (s) :effect (and (g) (increase (total-cost) 10))))";
static const char *COSTS_P =
    "(define (problem costs1) (:domain costs) (:init (s) (= (total-cost) 0)) (:goal (g))"
    " (:metric minimize (total-cost)))";

/* One token, two uses: relaxed-solvable, really unsolvable. */
static const char *TOKEN =
    "(define (domain token) (:requirements :strips) (:predicates (a) (b) (c) (d))"
    " (:action mb :parameters () :precondition (a) :effect (and (b) (not (a))))"
    " (:action mc :parameters () :precondition (a) :effect (and (c) (not (a)))))";
static const char *TOKEN_P =
    "(define (problem token1) (:domain token) (:init (a)) (:goal (and (b) (c))))";
static const char *TOKEN_IMPOSSIBLE =
    "(define (problem token2) (:domain token) (:init (a)) (:goal (and (b) (d))))";

/* Negative preconditions and a negative goal (ignored by the relaxation). */
static const char *SWITCHES =
    "(define (domain switches) (:requirements :strips :negative-preconditions)"
    " (:constants l1 l2 l3) (:predicates (on ?x) (lamp ?x) (lit))"
    " (:action turn-on :parameters (?x) :precondition (and (lamp ?x) (not (on ?x)))"
    "  :effect (on ?x))"
    " (:action turn-off :parameters (?x) :precondition (and (lamp ?x) (on ?x))"
    "  :effect (not (on ?x)))"
    " (:action light :parameters () :precondition (and (on l1) (on l2) (not (on l3)))"
    "  :effect (lit)))";
static const char *SWITCHES_P =
    "(define (problem sw1) (:domain switches)"
    " (:init (lamp l1) (lamp l2) (lamp l3) (on l3))"
    " (:goal (and (lit) (not (on l1)))))";

typedef struct loaded {
    ns_domain d;
    ns_problem p;
    ns_task t;
    int ok;
} loaded;

static int load(loaded *L, const char *dom, const char *prob)
{
    ns_error err;
    ns_error_clear(&err);
    memset(L, 0, sizeof *L);
    char buf[1024];
    if (ns_domain_parse(&L->d, dom, "domain", &err) != NS_OK) {
        ns_error_format(&err, buf, sizeof buf);
        printf("  domain: %s\n", buf);
        return 0;
    }
    if (ns_problem_parse(&L->p, &L->d, prob, "problem", &err) != NS_OK) {
        ns_error_format(&err, buf, sizeof buf);
        printf("  problem: %s\n", buf);
        ns_domain_free(&L->d);
        return 0;
    }
    if (ns_task_ground(&L->t, &L->d, &L->p, &err) != NS_OK) {
        ns_error_format(&err, buf, sizeof buf);
        printf("  ground: %s\n", buf);
        ns_problem_free(&L->p);
        ns_domain_free(&L->d);
        return 0;
    }
    L->ok = 1;
    return 1;
}

static int load_files(loaded *L, const char *dom, const char *prob)
{
    ns_error err;
    ns_error_clear(&err);
    memset(L, 0, sizeof *L);
    char buf[1024];
    if (ns_domain_read(&L->d, dom, &err) != NS_OK) goto fail0;
    if (ns_problem_read(&L->p, &L->d, prob, &err) != NS_OK) goto fail1;
    if (ns_task_ground(&L->t, &L->d, &L->p, &err) != NS_OK) goto fail2;
    L->ok = 1;
    return 1;
fail2:
    ns_problem_free(&L->p);
fail1:
    ns_domain_free(&L->d);
fail0:
    ns_error_format(&err, buf, sizeof buf);
    printf("  %s\n", buf);
    return 0;
}

static void unload(loaded *L)
{
    if (!L->ok) return;
    ns_task_free(&L->t);
    ns_problem_free(&L->p);
    ns_domain_free(&L->d);
    L->ok = 0;
}

/* Executes the plan step by step; returns its cost or -1 when invalid. */
static long plan_check(const ns_task *t, const int *plan, int n)
{
    ns_word *s = ns_xmalloc(((size_t)t->nwords + 1) * sizeof(ns_word));
    memcpy(s, t->init, (size_t)t->nwords * sizeof(ns_word));
    long cost = 0;
    for (int i = 0; i < n; i++) {
        if (plan[i] < 0 || plan[i] >= t->nops || !ns_task_applicable(t, plan[i], s)) {
            free(s);
            return -1;
        }
        ns_task_apply(t, plan[i], s, s);
        cost += t->ops[plan[i]].cost;
    }
    bool goal = ns_task_is_goal(t, s);
    free(s);
    return goal ? cost : -1;
}

static ns_search_result solve(const ns_task *t, ns_search_algo algo, ns_heuristic_kind h)
{
    ns_search_opts o;
    ns_search_opts_default(&o);
    o.algo = algo;
    o.heuristic = h;
    ns_search_result r;
    ns_search(t, &o, &r);
    return r;
}

static int h_init(const ns_task *t, ns_heuristic_kind k)
{
    ns_heuristic *h = ns_heuristic_new(t, k);
    int v = ns_heuristic_eval(h, t->init);
    ns_heuristic_free(h);
    return v;
}

/* ---- heuristics ---- */

static void test_h_fork(void)
{
    loaded L;
    if (!load(&L, FORK, FORK_P)) {
        CHECK(0);
        return;
    }
    CHECK_EQ_INT(h_init(&L.t, NS_H_BLIND), 1);
    CHECK_EQ_INT(h_init(&L.t, NS_H_MAX), 2);
    CHECK_EQ_INT(h_init(&L.t, NS_H_ADD), 4);
    CHECK_EQ_INT(h_init(&L.t, NS_H_FF), 3);
    CHECK_EQ_INT(h_init(&L.t, NS_H_LMCUT), 3);
    unload(&L);
}

/* h^FF's best supporters' ties: the first or the last achiever reached; the
 * value (1) is the same, the helpful action differs, and h^add does not move. */
static void test_h_last_supporter(void)
{
    loaded L;
    if (!load(&L, TWIN, TWIN_P)) {
        CHECK(0);
        return;
    }
    int helpful[2] = {-1, -1};
    for (int last = 0; last < 2; last++) {
        ns_heuristic *h = ns_heuristic_new(&L.t, NS_H_FF);
        ns_heuristic_set_last_supporter(h, last);
        CHECK_EQ_INT(ns_heuristic_eval(h, L.t.init), 1);
        int ops[4];
        CHECK_EQ_INT(ns_heuristic_preferred(h, L.t.init, ops), 1);
        helpful[last] = ops[0];
        ns_heuristic_free(h);
        ns_heuristic *add = ns_heuristic_new(&L.t, NS_H_ADD);
        ns_heuristic_set_last_supporter(add, last);
        CHECK_EQ_INT(ns_heuristic_eval(add, L.t.init), 1);
        ns_heuristic_free(add);
    }
    CHECK(helpful[0] != helpful[1]);
    unload(&L);
    if (!load(&L, ZCYCLE, ZCYCLE_P)) {
        CHECK(0);
        return;
    }
    for (int last = 0; last < 2; last++) { /* a relaxed plan from s: z or w (or both) applicable in it */
        ns_heuristic *h = ns_heuristic_new(&L.t, NS_H_FF);
        ns_heuristic_set_last_supporter(h, last);
        int v = ns_heuristic_eval(h, L.t.init), ops[8];
        CHECK(v >= 2 && v <= 3);
        CHECK(ns_heuristic_preferred(h, L.t.init, ops) >= 1);
        ns_heuristic_free(h);
    }
    /* LAMA-first solves it either way (z, w, gg) */
    for (int last = 0; last < 2; last++) {
        ns_search_opts o;
        ns_search_opts_default(&o);
        o.algo = NS_SEARCH_LAMA;
        o.last_supporter = last;
        ns_search_result r;
        CHECK(ns_search(&L.t, &o, &r) == NS_OK && r.plan_len >= 3 && ns_plan_ops_valid(&L.t, r.plan, r.plan_len));
        ns_search_result_free(&r);
    }
    unload(&L);
}

static void test_h_costs(void)
{
    loaded L;
    if (!load(&L, COSTS, COSTS_P)) {
        CHECK(0);
        return;
    }
    CHECK(!L.t.unit_cost);
    CHECK_EQ_INT(h_init(&L.t, NS_H_BLIND), 1);
    CHECK_EQ_INT(h_init(&L.t, NS_H_MAX), 4);
    CHECK_EQ_INT(h_init(&L.t, NS_H_ADD), 4);
    CHECK_EQ_INT(h_init(&L.t, NS_H_FF), 4);
    CHECK_EQ_INT(h_init(&L.t, NS_H_LMCUT), 4);
    unload(&L);
}

static void test_h_dead_end(void)
{
    loaded L;
    if (!load(&L, TOKEN, TOKEN_P)) {
        CHECK(0);
        return;
    }
    /* After mb the token is gone: c is unreachable even relaxed. */
    int mb = -1;
    for (int o = 0; o < L.t.nops; o++) {
        ns_buf b;
        ns_buf_init(&b);
        ns_task_op_str(&L.t, o, &b);
        if (strcmp(b.data, "(mb)") == 0) mb = o;
        ns_buf_free(&b);
    }
    CHECK(mb >= 0);
    if (mb >= 0) {
        ns_word *s = ns_xmalloc(((size_t)L.t.nwords + 1) * sizeof(ns_word));
        ns_task_apply(&L.t, mb, L.t.init, s);
        for (int k = NS_H_MAX; k <= NS_H_LMCUT; k++) {
            ns_heuristic *h = ns_heuristic_new(&L.t, (ns_heuristic_kind)k);
            CHECK_EQ_INT(ns_heuristic_eval(h, s), NS_H_INF);
            CHECK(ns_heuristic_eval(h, L.t.init) != NS_H_INF); /* relaxed-solvable */
            CHECK(ns_heuristic_bytes(h) > 0);
            ns_heuristic_free(h);
        }
        free(s);
    }
    unload(&L);
}

/* Every reachable state of a small task: h^max <= LM-cut <= h*, h^max <= h^add,
 * h = 0 at goals for the admissible ones, and NS_H_INF only at real dead ends.
 * h* comes from a backward Dijkstra (costs are small, so a bucket scan). */
static void check_all_states(const char *dom, const char *prob, int max_states)
{
    loaded L;
    if (!load(&L, dom, prob)) {
        CHECK(0);
        return;
    }
    const ns_task *t = &L.t;
    ns_registry reg;
    ns_registry_init(&reg, t->nwords);
    ns_succgen sg;
    ns_succgen_init(&sg, t);
    int *ops = ns_xmalloc(((size_t)t->nops + 1) * sizeof(int));
    ns_word *cur = ns_xmalloc(((size_t)t->nwords + 1) * sizeof(ns_word));
    ns_word *nxt = ns_xmalloc(((size_t)t->nwords + 1) * sizeof(ns_word));
    /* explicit graph as edge list (from, to, cost) */
    size_t ne = 0, cape = 0;
    int *ef = NULL, *et = NULL, *ec = NULL;
    size_t c1 = 0, c2 = 0;
    ns_registry_insert(&reg, t->init, NULL);
    for (uint32_t id = 0; id < reg.n && (int)reg.n <= max_states; id++) {
        memcpy(cur, ns_registry_get(&reg, id), (size_t)t->nwords * sizeof(ns_word));
        int n = ns_succgen_applicable(&sg, cur, ops);
        for (int k = 0; k < n; k++) {
            ns_task_apply(t, ops[k], cur, nxt);
            uint32_t to = ns_registry_insert(&reg, nxt, NULL);
            NS_GROW(ef, cape, ne + 1);
            NS_GROW(et, c1, ne + 1);
            NS_GROW(ec, c2, ne + 1);
            ef[ne] = (int)id;
            et[ne] = (int)to;
            ec[ne] = t->ops[ops[k]].cost;
            ne++;
        }
    }
    CHECK((int)reg.n <= max_states);
    int ns = (int)reg.n;
    /* h* by Bellman-Ford style relaxation (small graphs). */
    long *hs = ns_xmalloc((size_t)ns * sizeof(long));
    const long INF = 1L << 40;
    for (int i = 0; i < ns; i++) hs[i] = ns_task_is_goal(t, ns_registry_get(&reg, (uint32_t)i)) ? 0 : INF;
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t e = 0; e < ne; e++)
            if (hs[et[e]] + ec[e] < hs[ef[e]]) {
                hs[ef[e]] = hs[et[e]] + ec[e];
                changed = 1;
            }
    }
    ns_heuristic *hb = ns_heuristic_new(t, NS_H_BLIND), *hm = ns_heuristic_new(t, NS_H_MAX),
                 *ha = ns_heuristic_new(t, NS_H_ADD), *hf = ns_heuristic_new(t, NS_H_FF),
                 *hl = ns_heuristic_new(t, NS_H_LMCUT);
    int bad_adm = 0, bad_dom = 0, bad_inf = 0, bad_goal = 0, bad_ff = 0;
    for (int i = 0; i < ns; i++) {
        const ns_word *s = ns_registry_get(&reg, (uint32_t)i);
        int b = ns_heuristic_eval(hb, s), m = ns_heuristic_eval(hm, s), a = ns_heuristic_eval(ha, s);
        int f = ns_heuristic_eval(hf, s), l = ns_heuristic_eval(hl, s);
        bool dead = hs[i] >= INF;
        if (!dead && (b > hs[i] || m > hs[i] || l > hs[i])) bad_adm++;
        if (m > l || m > a || (f != NS_H_INF && m > f) || (a == NS_H_INF) != (m == NS_H_INF) ||
            (l == NS_H_INF) != (m == NS_H_INF) || (f == NS_H_INF) != (m == NS_H_INF))
            bad_dom++;
        if (m == NS_H_INF && !dead) bad_inf++;
        if (hs[i] == 0 && (m != 0 || l != 0 || b != 0)) bad_goal++;
        if (f != NS_H_INF && f > a) bad_ff++; /* FF's plan is no costlier than h^add */
    }
    CHECK_EQ_INT(bad_adm, 0);
    CHECK_EQ_INT(bad_dom, 0);
    CHECK_EQ_INT(bad_inf, 0);
    CHECK_EQ_INT(bad_goal, 0);
    CHECK_EQ_INT(bad_ff, 0);
    ns_heuristic_free(hb);
    ns_heuristic_free(hm);
    ns_heuristic_free(ha);
    ns_heuristic_free(hf);
    ns_heuristic_free(hl);
    free(hs);
    free(ef);
    free(et);
    free(ec);
    free(ops);
    free(cur);
    free(nxt);
    ns_succgen_free(&sg);
    ns_registry_free(&reg);
    unload(&L);
}

static void test_h_all_states(void)
{
    check_all_states(BLOCKS, BLOCKS4, 10000);
    check_all_states(GRIPPER, GRIPPER4, 10000);
    check_all_states(LOGISTICS, LOGISTICS2, 100000);
    check_all_states(COSTS, COSTS_P, 100);
    check_all_states(TOKEN, TOKEN_P, 100);
    check_all_states(SWITCHES, SWITCHES_P, 100);
}

/* Random propositional tasks with costs 0..4 (zero-cost operators stress
 * LM-cut's goal plateaus): A* with blind, h^max and LM-cut agree on the
 * optimal cost (or on unsolvability), and every state's heuristic values
 * are admissible. */
static void random_task(ns_rng *rng, ns_buf *dom, ns_buf *prob)
{
    const int na = 4 + (int)ns_rng_below(rng, 6), nops = 4 + (int)ns_rng_below(rng, 12);
    ns_buf_puts(dom, "(define (domain rnd) (:requirements :strips :action-costs) (:predicates");
    for (int i = 0; i < na; i++) ns_buf_printf(dom, " (p%d)", i);
    ns_buf_puts(dom, ") (:functions (total-cost))");
    for (int o = 0; o < nops; o++) {
        ns_buf_printf(dom, " (:action o%d :parameters () :precondition (and", o);
        int npre = (int)ns_rng_below(rng, 3);
        for (int k = 0; k < npre; k++) ns_buf_printf(dom, " (p%d)", (int)ns_rng_below(rng, (uint64_t)na));
        ns_buf_puts(dom, ") :effect (and");
        int nadd = 1 + (int)ns_rng_below(rng, 2), ndel = (int)ns_rng_below(rng, 3);
        for (int k = 0; k < nadd; k++) ns_buf_printf(dom, " (p%d)", (int)ns_rng_below(rng, (uint64_t)na));
        for (int k = 0; k < ndel; k++) ns_buf_printf(dom, " (not (p%d))", (int)ns_rng_below(rng, (uint64_t)na));
        ns_buf_printf(dom, " (increase (total-cost) %d)))", (int)ns_rng_below(rng, 5));
    }
    ns_buf_puts(dom, ")");
    ns_buf_puts(prob, "(define (problem r) (:domain rnd) (:init");
    for (int i = 0; i < na; i++)
        if (ns_rng_below(rng, 3) == 0) ns_buf_printf(prob, " (p%d)", i);
    ns_buf_puts(prob, ") (:goal (and");
    int ng = 1 + (int)ns_rng_below(rng, 3);
    for (int k = 0; k < ng; k++) ns_buf_printf(prob, " (p%d)", (int)ns_rng_below(rng, (uint64_t)na));
    ns_buf_puts(prob, ")) (:metric minimize (total-cost)))");
}

static void test_random_tasks(void)
{
    ns_rng rng;
    ns_rng_seed(&rng, 2024);
    int solved = 0, unsolvable = 0, loaded_n = 0;
    for (int it = 0; it < 300; it++) {
        ns_buf dom, prob;
        ns_buf_init(&dom);
        ns_buf_init(&prob);
        random_task(&rng, &dom, &prob);
        loaded L;
        if (load(&L, dom.data, prob.data)) {
            loaded_n++;
            ns_search_result r0 = solve(&L.t, NS_SEARCH_ASTAR, NS_H_BLIND);
            if (r0.status == NS_OK) {
                solved++;
                CHECK_EQ_INT(plan_check(&L.t, r0.plan, r0.plan_len), r0.plan_cost);
            } else {
                unsolvable++;
                CHECK_EQ_INT(r0.status, NS_UNSOLVABLE);
            }
            for (int h = NS_H_MAX; h <= NS_H_LMCUT; h += NS_H_LMCUT - NS_H_MAX) {
                ns_search_result r = solve(&L.t, NS_SEARCH_ASTAR, (ns_heuristic_kind)h);
                CHECK_EQ_INT(r.status, r0.status);
                if (r.status == NS_OK) {
                    CHECK_EQ_INT(r.plan_cost, r0.plan_cost);
                    CHECK_EQ_INT(plan_check(&L.t, r.plan, r.plan_len), r.plan_cost);
                }
                ns_search_result_free(&r);
            }
            for (int h = NS_H_ADD; h <= NS_H_FF; h++) {
                ns_search_result r = solve(&L.t, NS_SEARCH_GBFS, (ns_heuristic_kind)h);
                CHECK_EQ_INT(r.status, r0.status);
                if (r.status == NS_OK) CHECK_EQ_INT(plan_check(&L.t, r.plan, r.plan_len), r.plan_cost);
                ns_search_result_free(&r);
            }
            ns_search_result_free(&r0);
            unload(&L);
            check_all_states(dom.data, prob.data, 1 << 12);
        }
        ns_buf_free(&dom);
        ns_buf_free(&prob);
    }
    printf("  %d tasks: %d solved, %d unsolvable\n", loaded_n, solved, unsolvable);
    CHECK(loaded_n >= 250);
    CHECK(solved > 50 && unsolvable > 10);
}

static void test_h_names(void)
{
    for (int k = NS_H_BLIND; k <= NS_H_LMCUT; k++)
        CHECK_EQ_INT(ns_heuristic_parse(ns_heuristic_name((ns_heuristic_kind)k)), k);
    CHECK_EQ_INT(ns_heuristic_parse("LMCUT"), NS_H_LMCUT);
    CHECK_EQ_INT(ns_heuristic_parse("nope"), -1);
    for (int a = NS_SEARCH_BFS; a <= NS_SEARCH_GBFS; a++)
        CHECK_EQ_INT(ns_search_algo_parse(ns_search_algo_name((ns_search_algo)a)), a);
    CHECK_EQ_INT(ns_search_algo_parse("dfs"), -1);
}

/* ---- search ---- */

/* BFS, A* with every admissible heuristic: same optimal length, valid plans. */
static void check_optimal(const char *dom, const char *prob, int expect_len)
{
    loaded L;
    if (!load(&L, dom, prob)) {
        CHECK(0);
        return;
    }
    struct { ns_search_algo a; ns_heuristic_kind h; } cfg[] = {
        {NS_SEARCH_BFS, NS_H_BLIND},  {NS_SEARCH_ASTAR, NS_H_BLIND},
        {NS_SEARCH_ASTAR, NS_H_MAX},  {NS_SEARCH_ASTAR, NS_H_LMCUT},
    };
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
        ns_search_result r = solve(&L.t, cfg[i].a, cfg[i].h);
        CHECK_EQ_INT(r.status, NS_OK);
        CHECK_EQ_INT(r.plan_len, expect_len);
        CHECK_EQ_INT(plan_check(&L.t, r.plan, r.plan_len), r.plan_cost);
        CHECK(r.expanded > 0 || expect_len == 0);
        if (cfg[i].a == NS_SEARCH_ASTAR) CHECK(r.init_h >= 0 && r.init_h <= expect_len);
        ns_search_result_free(&r);
    }
    for (int h = NS_H_BLIND; h <= NS_H_LMCUT; h++) {
        ns_search_result r = solve(&L.t, NS_SEARCH_GBFS, (ns_heuristic_kind)h);
        CHECK_EQ_INT(r.status, NS_OK);
        CHECK(r.plan_len >= expect_len);
        CHECK_EQ_INT(plan_check(&L.t, r.plan, r.plan_len), r.plan_cost);
        ns_search_result_free(&r);
    }
    unload(&L);
}

static void test_search_blocks(void)
{
    check_optimal(BLOCKS, SUSSMAN, 6);
    check_optimal(BLOCKS, BLOCKS4, 8);
}

static void test_search_gripper(void)
{
    check_optimal(GRIPPER, GRIPPER2, 5);
    check_optimal(GRIPPER, GRIPPER4, 11);
}

static void test_search_logistics(void)
{
    check_optimal(LOGISTICS, LOGISTICS1, 9);
    check_optimal(LOGISTICS, LOGISTICS2, 16);
}

static void test_search_costs(void)
{
    loaded L;
    if (!load(&L, COSTS, COSTS_P)) {
        CHECK(0);
        return;
    }
    /* BFS minimises steps, not cost. */
    ns_search_result r = solve(&L.t, NS_SEARCH_BFS, NS_H_BLIND);
    CHECK_EQ_INT(r.status, NS_OK);
    CHECK_EQ_INT(r.plan_len, 1);
    CHECK_EQ_INT(r.plan_cost, 10);
    CHECK_EQ_INT(r.init_h, -1);
    ns_search_result_free(&r);
    for (int h = NS_H_BLIND; h <= NS_H_LMCUT; h++) {
        if (h == NS_H_ADD || h == NS_H_FF) continue;
        r = solve(&L.t, NS_SEARCH_ASTAR, (ns_heuristic_kind)h);
        CHECK_EQ_INT(r.status, NS_OK);
        CHECK_EQ_INT(r.plan_len, 2);
        CHECK_EQ_INT(r.plan_cost, 4);
        CHECK_EQ_INT(plan_check(&L.t, r.plan, r.plan_len), 4);
        ns_search_result_free(&r);
    }
    unload(&L);
}

static void test_search_negative(void)
{
    /* turn-on l1, turn-on l2, turn-off l3, light, turn-off l1 */
    check_optimal(SWITCHES, SWITCHES_P, 5);
}

static void test_search_goal_at_init(void)
{
    loaded L;
    if (!load(&L, BLOCKS,
              "(define (problem triv) (:domain blocks) (:objects a b)"
              " (:init (clear a) (on a b) (ontable b) (handempty)) (:goal (on a b)))")) {
        CHECK(0);
        return;
    }
    for (int a = NS_SEARCH_BFS; a <= NS_SEARCH_GBFS; a++) {
        ns_search_result r = solve(&L.t, (ns_search_algo)a, NS_H_LMCUT);
        CHECK_EQ_INT(r.status, NS_OK);
        CHECK_EQ_INT(r.plan_len, 0);
        CHECK_EQ_INT(r.plan_cost, 0);
        ns_search_result_free(&r);
    }
    unload(&L);
}

static void test_search_no_fluents(void)
{
    /* Nothing changes: no fluent atoms, no operators, zero-word states. */
    loaded L;
    if (!load(&L, "(define (domain still) (:requirements :strips) (:predicates (p) (q)))",
              "(define (problem s1) (:domain still) (:init (p)) (:goal (p)))")) {
        CHECK(0);
        return;
    }
    CHECK_EQ_INT(L.t.natoms, 0);
    for (int a = NS_SEARCH_BFS; a <= NS_SEARCH_GBFS; a++)
        for (int h = NS_H_BLIND; h <= NS_H_LMCUT; h++) {
            ns_search_result r = solve(&L.t, (ns_search_algo)a, (ns_heuristic_kind)h);
            CHECK_EQ_INT(r.status, NS_OK);
            CHECK_EQ_INT(r.plan_len, 0);
            ns_search_result_free(&r);
        }
    unload(&L);
}

static void test_search_unsolvable(void)
{
    loaded L;
    if (!load(&L, TOKEN, TOKEN_P)) {
        CHECK(0);
        return;
    }
    CHECK(!L.t.goal_impossible);
    for (int a = NS_SEARCH_BFS; a <= NS_SEARCH_GBFS; a++)
        for (int h = NS_H_BLIND; h <= NS_H_LMCUT; h++) {
            ns_search_result r = solve(&L.t, (ns_search_algo)a, (ns_heuristic_kind)h);
            CHECK_EQ_INT(r.status, NS_UNSOLVABLE);
            CHECK(r.plan == NULL);
            ns_search_result_free(&r);
        }
    unload(&L);
    if (!load(&L, TOKEN, TOKEN_IMPOSSIBLE)) {
        CHECK(0);
        return;
    }
    CHECK(L.t.goal_impossible);
    ns_search_result r = solve(&L.t, NS_SEARCH_ASTAR, NS_H_LMCUT);
    CHECK_EQ_INT(r.status, NS_UNSOLVABLE);
    CHECK_EQ_INT(r.expanded, 0);
    ns_search_result_free(&r);
    unload(&L);
}

/* A gripper task with n balls (big state space for n >= 10). */
static char *gripper_problem(int n)
{
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_puts(&b, "(define (problem gn) (:domain gripper-strips) (:objects ra rb left right");
    for (int i = 0; i < n; i++) ns_buf_printf(&b, " b%d", i);
    ns_buf_puts(&b, ") (:init (room ra) (room rb) (gripper left) (gripper right) (at-robby ra)"
                    " (free left) (free right)");
    for (int i = 0; i < n; i++) ns_buf_printf(&b, " (ball b%d) (at b%d ra)", i, i);
    ns_buf_puts(&b, ") (:goal (and");
    for (int i = 0; i < n; i++) ns_buf_printf(&b, " (at b%d rb)", i);
    ns_buf_puts(&b, ")))");
    return b.data;
}

static void test_search_limits(void)
{
    char *prob = gripper_problem(14);
    loaded L;
    if (!load(&L, GRIPPER, prob)) {
        CHECK(0);
        free(prob);
        return;
    }
    ns_search_opts o;
    ns_search_opts_default(&o);
    ns_search_result r;
    for (int a = NS_SEARCH_BFS; a <= NS_SEARCH_ASTAR; a++) {
        o.algo = (ns_search_algo)a;
        o.heuristic = NS_H_BLIND;
        o.time_limit = 0.0001;
        CHECK_EQ_INT(ns_search(&L.t, &o, &r), NS_OUT_OF_TIME);
        CHECK_EQ_INT(r.status, NS_OUT_OF_TIME);
        CHECK(r.plan == NULL);
        CHECK(r.seconds < 1.0);
        ns_search_result_free(&r);
    }
    o.algo = NS_SEARCH_ASTAR;
    o.heuristic = NS_H_LMCUT;
    o.time_limit = 0;
    o.memory_limit = 4096;
    CHECK_EQ_INT(ns_search(&L.t, &o, &r), NS_OUT_OF_MEMORY);
    ns_search_result_free(&r);
    /* A limit that the search outgrows after a while. */
    o.algo = NS_SEARCH_BFS;
    o.memory_limit = 4u << 20;
    CHECK_EQ_INT(ns_search(&L.t, &o, &r), NS_OUT_OF_MEMORY);
    CHECK(r.expanded > 1000);
    ns_search_result_free(&r);
    unload(&L);
    free(prob);
}

/* A budget of heuristic work (max_work): A*-LM-cut, GBFS-h^FF and LAMA stop
 * incomplete at the same state on every run (the counts are the same twice),
 * after more work the larger the budget; without the budget A* solves it. */
static void test_search_work_budget(void)
{
    char *prob = gripper_problem(8);
    loaded L;
    if (!load(&L, GRIPPER, prob)) {
        CHECK(0);
        free(prob);
        return;
    }
    const ns_search_algo algos[] = {NS_SEARCH_ASTAR, NS_SEARCH_GBFS, NS_SEARCH_LAMA};
    const ns_heuristic_kind hs[] = {NS_H_LMCUT, NS_H_FF, NS_H_FF};
    const long first[] = {50000, 8000, 2000}; /* three budgets each, ×2 apart, under the work of a solution */
    for (int k = 0; k < 3; k++) {
        ns_search_opts o;
        ns_search_opts_default(&o);
        o.algo = algos[k];
        o.heuristic = hs[k];
        long prev = 0;
        for (long budget = first[k]; budget <= 4 * first[k]; budget *= 2) {
            o.max_work = budget;
            ns_search_result a, b;
            CHECK_EQ_INT(ns_search(&L.t, &o, &a), NS_INCOMPLETE);
            CHECK_EQ_INT(ns_search(&L.t, &o, &b), NS_INCOMPLETE);
            CHECK(a.evaluated == b.evaluated && a.expanded == b.expanded && a.generated == b.generated);
            CHECK(a.evaluated > prev);
            prev = a.evaluated;
            /* the whole search's work: counted, so the same twice; beyond the heuristic's, its set-up and a
               state's handling for every state evaluated */
            CHECK(a.total_work == b.total_work && a.work >= budget);
            CHECK(a.total_work >= a.work + ns_search_setup_work(&L.t) + a.evaluated * NS_SEARCH_STATE_WORK);
            ns_search_result_free(&a);
            ns_search_result_free(&b);
        }
    }
    ns_search_opts o;
    ns_search_opts_default(&o);
    ns_search_result r;
    CHECK_EQ_INT(ns_search(&L.t, &o, &r), NS_OK);
    ns_search_result_free(&r);
    unload(&L);
    free(prob);
}

static void test_search_deterministic(void)
{
    char *prob = gripper_problem(5);
    loaded L;
    if (!load(&L, GRIPPER, prob)) {
        CHECK(0);
        free(prob);
        return;
    }
    for (int a = NS_SEARCH_BFS; a <= NS_SEARCH_GBFS; a++) {
        ns_search_result r1 = solve(&L.t, (ns_search_algo)a, NS_H_FF);
        ns_search_result r2 = solve(&L.t, (ns_search_algo)a, NS_H_FF);
        CHECK_EQ_INT(r1.status, NS_OK);
        CHECK_EQ_INT(r1.plan_len, r2.plan_len);
        CHECK(r1.plan_len == r2.plan_len &&
              memcmp(r1.plan, r2.plan, (size_t)r1.plan_len * sizeof(int)) == 0);
        CHECK_EQ_INT(r1.expanded, r2.expanded);
        CHECK_EQ_INT(r1.generated, r2.generated);
        CHECK_EQ_INT(r1.evaluated, r2.evaluated);
        CHECK(plan_check(&L.t, r1.plan, r1.plan_len) >= 0);
        if (a == NS_SEARCH_BFS) CHECK_EQ_INT(r1.plan_len, 15); /* 5 balls: 4·2+3+... */
        ns_search_result_free(&r1);
        ns_search_result_free(&r2);
    }
    unload(&L);
    free(prob);
}

/* ---- shared benchmarks: optimal lengths of the training problems ---- */

static int plan_file_len(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        const char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == ';' || *p == '\n' || *p == '\r' || *p == '\0') continue;
        n++;
    }
    fclose(f);
    return n;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_benchmarks_optimal(void)
{
    const char *root = ns_test_benchmarks();
    char path[2048], dom[2048], plan[2048];
    snprintf(path, sizeof path, "%s/seedA/pddl", root);
    DIR *dd = opendir(path);
    if (!dd) {
        CHECK(0);
        return;
    }
    char *domains[64];
    int nd = 0;
    struct dirent *e;
    while ((e = readdir(dd)) && nd < 64)
        if (e->d_name[0] != '.') domains[nd++] = ns_xstrdup(e->d_name);
    closedir(dd);
    qsort(domains, (size_t)nd, sizeof *domains, cmp_str);
    int nprob = 0, nbfs = 0, bad = 0;
    double t0 = ns_now();
    for (int i = 0; i < nd; i++) {
        snprintf(dom, sizeof dom, "%s/seedA/pddl/%s/domain.pddl", root, domains[i]);
        snprintf(path, sizeof path, "%s/seedA/pddl/%s/train", root, domains[i]);
        DIR *pd = opendir(path);
        if (!pd) continue;
        while ((e = readdir(pd))) {
            size_t len = strlen(e->d_name);
            if (len < 6 || strcmp(e->d_name + len - 5, ".pddl") != 0) continue;
            char prob[sizeof path + 300];
            snprintf(prob, sizeof prob, "%s/%s", path, e->d_name);
            snprintf(plan, sizeof plan, "%s/seedA/plans/%s/train/%.*s.plan", root, domains[i],
                     (int)(len - 5), e->d_name);
            int expect = plan_file_len(plan);
            if (expect < 0) continue;
            loaded L;
            if (!load_files(&L, dom, prob)) {
                printf("  %s: does not load\n", prob);
                bad++;
                continue;
            }
            nprob++;
            ns_search_opts o;
            ns_search_opts_default(&o);
            o.algo = NS_SEARCH_ASTAR;
            o.heuristic = NS_H_LMCUT;
            ns_search_result r;
            ns_search(&L.t, &o, &r);
            if (r.status != NS_OK || r.plan_len != expect ||
                plan_check(&L.t, r.plan, r.plan_len) != r.plan_cost) {
                printf("  %s: astar/lmcut status %d length %d, expected %d\n", prob, r.status,
                       r.plan_len, expect);
                bad++;
            }
            ns_search_result_free(&r);
            /* GBFS with h^FF: a valid plan, no shorter than the optimum. */
            o.algo = NS_SEARCH_GBFS;
            o.heuristic = NS_H_FF;
            ns_search(&L.t, &o, &r);
            if (r.status != NS_OK || r.plan_len < expect ||
                plan_check(&L.t, r.plan, r.plan_len) != r.plan_cost) {
                printf("  %s: gbfs/ff status %d length %d, optimum %d\n", prob, r.status,
                       r.plan_len, expect);
                bad++;
            }
            ns_search_result_free(&r);
            /* BFS where it is quick (its time limit only skips, never fails). */
            o.algo = NS_SEARCH_BFS;
            o.time_limit = 0.5;
            ns_search(&L.t, &o, &r);
            if (r.status == NS_OK) {
                nbfs++;
                if (r.plan_len != expect || plan_check(&L.t, r.plan, r.plan_len) != r.plan_cost) {
                    printf("  %s: bfs length %d, expected %d\n", prob, r.plan_len, expect);
                    bad++;
                }
            } else if (r.status != NS_OUT_OF_TIME) {
                printf("  %s: bfs status %d\n", prob, r.status);
                bad++;
            }
            ns_search_result_free(&r);
            unload(&L);
        }
        closedir(pd);
    }
    for (int i = 0; i < nd; i++) free(domains[i]);
    printf("  %d problems (%d also by BFS) in %.1f s\n", nprob, nbfs, ns_now() - t0);
    CHECK(nprob > 0);
    CHECK_EQ_INT(bad, 0);
}

/* Preferred operators: GBFS-h^FF with helpful actions solves a generated
 * 30-block problem with few expansions (plain GBFS needs >150k and times out
 * at 30 s), and the plan is valid. */
static void test_gbfs_preferred(void)
{
    ns_gen_arg a = {"blocks", 30};
    ns_buf b;
    ns_buf_init(&b);
    ns_error e;
    ns_domain d;
    ns_problem p;
    ns_task t;
    CHECK(ns_gen_problem("blocksworld", &a, 1, 1, "bw30", &b, &e) == NS_OK);
    CHECK(ns_domain_read(&d, "domains/blocksworld/domain.pddl", &e) == NS_OK);
    CHECK(ns_problem_parse(&p, &d, b.data, "bw30", &e) == NS_OK);
    CHECK(ns_task_ground(&t, &d, &p, &e) == NS_OK);
    ns_search_opts o;
    ns_search_opts_default(&o);
    o.algo = NS_SEARCH_GBFS;
    o.heuristic = NS_H_FF;
    o.time_limit = 20;
    ns_search_result r;
    CHECK(ns_search(&t, &o, &r) == NS_OK);
    CHECK(r.expanded < 20000);
    CHECK(r.status == NS_OK && ns_plan_ops_valid(&t, r.plan, r.plan_len));
    printf("  blocksworld-30: plan %d, %ld expanded\n", r.plan_len, r.expanded);
    ns_search_result_free(&r);
    ns_task_free(&t);
    ns_problem_free(&p);
    ns_domain_free(&d);
    ns_buf_free(&b);
}

/* ---- greedy action elimination ---- */

static int op_named(const ns_task *t, const char *name)
{
    ns_buf b;
    ns_buf_init(&b);
    int found = -1;
    for (int i = 0; i < t->nops && found < 0; i++) {
        b.len = 0;
        ns_task_op_str(t, i, &b);
        if (!strcmp(b.data, name)) found = i;
    }
    ns_buf_free(&b);
    return found;
}

static void test_plan_eliminate(void)
{
    loaded L;
    if (!load(&L, BLOCKS, SUSSMAN)) {
        CHECK(0);
        return;
    }
    ns_search_result r = solve(&L.t, NS_SEARCH_ASTAR, NS_H_LMCUT);
    CHECK(r.status == NS_OK && r.plan_len == 6);
    int opt[6], n = r.plan_len;
    memcpy(opt, r.plan, sizeof opt);
    ns_search_result_free(&r);
    /* an optimal plan has nothing to drop */
    int p[16];
    memcpy(p, opt, sizeof opt);
    CHECK(ns_plan_eliminate(&L.t, p, n, 0) == 6 && !memcmp(p, opt, sizeof opt));
    /* a detour before the plan (b picked up and put down again) and one after the goal (a unstacked
       and stacked back): both dropped, the optimal plan left */
    int up = op_named(&L.t, "(pick-up b)"), down = op_named(&L.t, "(put-down b)");
    int off = op_named(&L.t, "(unstack a b)"), on = op_named(&L.t, "(stack a b)");
    CHECK(up >= 0 && down >= 0 && off >= 0 && on >= 0);
    p[0] = up, p[1] = down;
    memcpy(p + 2, opt, sizeof opt);
    p[8] = off, p[9] = on;
    CHECK(plan_check(&L.t, p, 10) == 10);
    int late[10]; /* a deadline already past: the plan as it was */
    memcpy(late, p, sizeof late);
    CHECK(ns_plan_eliminate(&L.t, late, 10, 1e-9) == 10 && !memcmp(late, p, sizeof late));
    int m = ns_plan_eliminate(&L.t, p, 10, 0);
    CHECK(m == 6 && !memcmp(p, opt, sizeof opt));
    CHECK(plan_check(&L.t, p, m) == 6);
    unload(&L);
    /* GBFS plans of larger tasks: still valid, never costlier */
    const char *doms[] = {LOGISTICS, GRIPPER, BLOCKS}, *probs[] = {LOGISTICS2, GRIPPER4, BLOCKS4};
    for (int k = 0; k < 3; k++) {
        if (!load(&L, doms[k], probs[k])) {
            CHECK(0);
            continue;
        }
        ns_search_result g = solve(&L.t, NS_SEARCH_GBFS, NS_H_FF);
        CHECK(g.status == NS_OK);
        long before = plan_check(&L.t, g.plan, g.plan_len);
        int len = ns_plan_eliminate(&L.t, g.plan, g.plan_len, 0);
        long after = plan_check(&L.t, g.plan, len);
        CHECK(before >= 0 && after >= 0 && after <= before && len <= g.plan_len);
        ns_search_result_free(&g);
        unload(&L);
    }
}

/* Plan neighbourhood graph search: on GBFS-h^FF plans (after elimination), a
 * neighbourhood deeper than the task's diameter gives A*-LM-cut's optimal
 * cost; depth 1 and 2 a valid plan never costlier; a past deadline or depth
 * 0 the plan as it was; an invalid plan is left alone.  ns_plan_shorten
 * (elimination, then depth 1, 2, 4, ..., 64) likewise, and with a state
 * budget the same plan whatever the deadline. */
static void test_plan_neighbourhood(void)
{
    const char *doms[] = {LOGISTICS, GRIPPER, BLOCKS}, *probs[] = {LOGISTICS2, GRIPPER4, BLOCKS4};
    const char *names[] = {"logistics 2", "gripper 4", "blocks 4"};
    int shortened = 0;
    for (int k = 0; k < 3; k++) {
        loaded L;
        if (!load(&L, doms[k], probs[k])) {
            CHECK(0);
            continue;
        }
        ns_search_result g = solve(&L.t, NS_SEARCH_GBFS, NS_H_FF), o = solve(&L.t, NS_SEARCH_ASTAR, NS_H_LMCUT);
        CHECK(g.status == NS_OK && o.status == NS_OK);
        int *raw = ns_xmalloc(sizeof(int) * (size_t)(g.plan_len + 1)), rawlen = g.plan_len;
        memcpy(raw, g.plan, sizeof(int) * (size_t)rawlen);
        int n = ns_plan_eliminate(&L.t, g.plan, g.plan_len, 0);
        long before = plan_check(&L.t, g.plan, n), prev = before;
        int *p = ns_xmalloc(sizeof(int) * (size_t)(n + 1));
        memcpy(p, g.plan, sizeof(int) * (size_t)n);
        CHECK(ns_plan_neighbourhood(&L.t, p, n, 0, (size_t)1 << 30, 0) == n && !memcmp(p, g.plan, sizeof(int) * (size_t)n));
        CHECK(ns_plan_neighbourhood(&L.t, p, n, 3, (size_t)1 << 30, 1e-9) == n);
        for (int depth = 1; depth <= 2; depth++) {
            int m = ns_plan_neighbourhood(&L.t, p, n, depth, (size_t)1 << 30, 0);
            long c = plan_check(&L.t, p, m);
            CHECK(c >= 0 && c <= prev && m <= n);
            prev = c;
        }
        memcpy(p, g.plan, sizeof(int) * (size_t)n);
        int m = ns_plan_neighbourhood(&L.t, p, n, 1000, (size_t)1 << 30, 0);
        long c = plan_check(&L.t, p, m);
        printf("  %s: GBFS-h^FF %ld (eliminated), depth 1-2 %ld, deep %ld, A*-LM-cut %ld\n", names[k], before, prev,
               c, ns_plan_ops_cost(&L.t, o.plan, o.plan_len));
        CHECK(c == ns_plan_ops_cost(&L.t, o.plan, o.plan_len));
        shortened += c < before;
        /* ns_plan_shorten on GBFS's raw plan: as it was past a deadline; unbounded, depth 64 reaches the optimum */
        CHECK(ns_plan_shorten(&L.t, raw, rawlen, 1e-9, 1e-9, (size_t)1 << 30, 0) == rawlen);
        /* with a state budget the clock does not decide: the same plan with no
           deadline and with a distant one, for a budget too small for the optimum and one large enough */
        int *b1 = ns_xmalloc(sizeof(int) * (size_t)(rawlen + 1)), *b2 = ns_xmalloc(sizeof(int) * (size_t)(rawlen + 1));
        for (long budget = 40; budget <= 4000000; budget *= 100000) {
            memcpy(b1, raw, sizeof(int) * (size_t)rawlen);
            memcpy(b2, raw, sizeof(int) * (size_t)rawlen);
            int m1 = ns_plan_shorten(&L.t, b1, rawlen, 0, 0, (size_t)1 << 30, budget);
            double far = ns_cpu_now() + 1000;
            int m2 = ns_plan_shorten(&L.t, b2, rawlen, far, far, (size_t)1 << 30, budget);
            CHECK(m1 == m2 && !memcmp(b1, b2, sizeof(int) * (size_t)m1) && plan_check(&L.t, b1, m1) >= 0);
            if (budget > 40) CHECK(plan_check(&L.t, b1, m1) == ns_plan_ops_cost(&L.t, o.plan, o.plan_len));
        }
        free(b1);
        free(b2);
        m = ns_plan_shorten(&L.t, raw, rawlen, 0, 0, (size_t)1 << 30, 0);
        CHECK(plan_check(&L.t, raw, m) == ns_plan_ops_cost(&L.t, o.plan, o.plan_len));
        free(raw);
        /* the goal-reaching plan without its last step: invalid, left as it is */
        memcpy(p, g.plan, sizeof(int) * (size_t)n);
        CHECK(n > 0 && plan_check(&L.t, p, n - 1) < 0);
        CHECK(ns_plan_neighbourhood(&L.t, p, n - 1, 1000, (size_t)1 << 30, 0) == n - 1 &&
              !memcmp(p, g.plan, sizeof(int) * (size_t)(n - 1)));
        free(p);
        ns_search_result_free(&g);
        ns_search_result_free(&o);
        unload(&L);
    }
    CHECK(shortened > 0); /* some GBFS plan is not optimal, so the search has something to do */
}

/* The neighbourhood's path is the cheapest, not the shortest: from y w
 * (cost 6) it finds x z (4), never d (one step, 10); from d it cannot take
 * x z, which is longer than the plan it replaces. */
static void test_plan_neighbourhood_costs(void)
{
    loaded L;
    if (!load(&L, COSTS, COSTS_P)) {
        CHECK(0);
        return;
    }
    int x = op_named(&L.t, "(x)"), y = op_named(&L.t, "(y)"), z = op_named(&L.t, "(z)"), w = op_named(&L.t, "(w)"),
        d = op_named(&L.t, "(d)");
    CHECK(x >= 0 && y >= 0 && z >= 0 && w >= 0 && d >= 0);
    int p[2] = {y, w};
    int m = ns_plan_neighbourhood(&L.t, p, 2, 2, (size_t)1 << 30, 0);
    CHECK_EQ_INT(m, 2);
    CHECK(p[0] == x && p[1] == z);
    int q[1] = {d};
    CHECK_EQ_INT(ns_plan_shorten(&L.t, q, 1, 0, 0, (size_t)1 << 30, 0), 1);
    CHECK(q[0] == d);
    unload(&L);
}

/* The shortening keeps to its time on a task whose states have ~40,000
 * successors each (one `mark` per ordered pair of 200 objects): the clock
 * is read by work done, not once per so many states. */
static void test_shorten_keeps_time(void)
{
    ns_buf dom, prob;
    ns_buf_init(&dom);
    ns_buf_init(&prob);
    ns_buf_puts(&dom, "(define (domain wide) (:requirements :strips) (:predicates (m ?x ?y))"
                      " (:action mark :parameters (?x ?y) :precondition (and) :effect (m ?x ?y)))");
    ns_buf_puts(&prob, "(define (problem w) (:domain wide) (:objects");
    for (int i = 0; i < 200; i++) ns_buf_printf(&prob, " o%d", i);
    ns_buf_puts(&prob, ") (:init) (:goal (and (m o0 o1) (m o1 o2) (m o2 o3))))");
    loaded L;
    if (!load(&L, dom.data, prob.data)) {
        CHECK(0);
    } else {
        int plan[8];
        const char *steps[] = {"(mark o5 o6)", "(mark o0 o1)", "(mark o7 o8)", "(mark o1 o2)", "(mark o2 o3)"};
        for (int k = 0; k < 5; k++) plan[k] = op_named(&L.t, steps[k]);
        CHECK(L.t.nops >= 39000 && plan[0] >= 0 && plan[4] >= 0);
        double t0 = ns_cpu_now();
        int n = ns_plan_shorten(&L.t, plan, 5, 0, t0 + 0.05, (size_t)1 << 30, 0);
        double spent = ns_cpu_now() - t0;
        printf("  %d ground actions: shortened 5 -> %d steps in %.3f s (budget 0.05 s)\n", L.t.nops, n, spent);
        CHECK(n == 3 && spent < 2.0); /* (the clock read once per 64 states: 25 s) */
        unload(&L);
    }
    ns_buf_free(&dom);
    ns_buf_free(&prob);
}

int main(void)
{
    NS_RUN(test_h_fork);
    NS_RUN(test_h_costs);
    NS_RUN(test_h_last_supporter);
    NS_RUN(test_h_dead_end);
    NS_RUN(test_h_all_states);
    NS_RUN(test_h_names);
    NS_RUN(test_random_tasks);
    NS_RUN(test_search_blocks);
    NS_RUN(test_search_gripper);
    NS_RUN(test_search_logistics);
    NS_RUN(test_search_costs);
    NS_RUN(test_search_negative);
    NS_RUN(test_search_goal_at_init);
    NS_RUN(test_search_no_fluents);
    NS_RUN(test_search_unsolvable);
    NS_RUN(test_search_limits);
    NS_RUN(test_search_work_budget);
    NS_RUN(test_search_deterministic);
    NS_RUN(test_gbfs_preferred);
    NS_RUN(test_plan_eliminate);
    NS_RUN(test_plan_neighbourhood);
    NS_RUN(test_plan_neighbourhood_costs);
    NS_RUN(test_shorten_keeps_time);
    if (ns_test_benchmarks())
        NS_RUN(test_benchmarks_optimal);
    else
        NS_SKIP(test_benchmarks_optimal, "no shared benchmarks");
    return ns_test_summary("test_search");
}
