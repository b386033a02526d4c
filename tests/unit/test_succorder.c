/* test_succorder.c — the greedy searches' successor order (succorder.h):
 * more preconditions first, then lexicographic by sorted precondition lists,
 * and what it buys on a small childsnack task (issue #16). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/core/heuristic.h"
#include "nextstate/core/pddl.h"
#include "nextstate/core/plan.h"
#include "nextstate/core/search.h"
#include "nextstate/core/succgen.h"
#include "nextstate/core/succorder.h"
#include "nextstate/core/task.h"
#include "nextstate/util/util.h"
#include "test.h"

/* IPC 2023 Learning Track childsnack (the pddl-generators domain). */
static const char *CS_DOMAIN =
    "(define (domain childsnack) (:requirements :typing :negative-preconditions)\n"
    " (:types child bread-portion content-portion sandwich tray place)\n"
    " (:constants kitchen - place)\n"
    " (:predicates (at_kitchen_bread ?b - bread-portion) (at_kitchen_content ?c - content-portion)\n"
    "  (at_kitchen_sandwich ?s - sandwich) (no_gluten_bread ?b - bread-portion)\n"
    "  (no_gluten_content ?c - content-portion) (ontray ?s - sandwich ?t - tray)\n"
    "  (no_gluten_sandwich ?s - sandwich) (allergic_gluten ?c - child) (not_allergic_gluten ?c - child)\n"
    "  (served ?c - child) (waiting ?c - child ?p - place) (at ?t - tray ?p - place) (notexist ?s - sandwich))\n"
    " (:action make_sandwich_no_gluten :parameters (?s - sandwich ?b - bread-portion ?c - content-portion)\n"
    "  :precondition (and (at_kitchen_bread ?b) (at_kitchen_content ?c) (no_gluten_bread ?b)\n"
    "   (no_gluten_content ?c) (notexist ?s))\n"
    "  :effect (and (not (at_kitchen_bread ?b)) (not (at_kitchen_content ?c)) (at_kitchen_sandwich ?s)\n"
    "   (no_gluten_sandwich ?s) (not (notexist ?s))))\n"
    " (:action make_sandwich :parameters (?s - sandwich ?b - bread-portion ?c - content-portion)\n"
    "  :precondition (and (at_kitchen_bread ?b) (at_kitchen_content ?c) (notexist ?s))\n"
    "  :effect (and (not (at_kitchen_bread ?b)) (not (at_kitchen_content ?c)) (at_kitchen_sandwich ?s)\n"
    "   (not (notexist ?s))))\n"
    " (:action put_on_tray :parameters (?s - sandwich ?t - tray)\n"
    "  :precondition (and (at_kitchen_sandwich ?s) (at ?t kitchen))\n"
    "  :effect (and (not (at_kitchen_sandwich ?s)) (ontray ?s ?t)))\n"
    " (:action serve_sandwich_no_gluten :parameters (?s - sandwich ?c - child ?t - tray ?p - place)\n"
    "  :precondition (and (allergic_gluten ?c) (ontray ?s ?t) (waiting ?c ?p) (no_gluten_sandwich ?s) (at ?t ?p))\n"
    "  :effect (and (not (ontray ?s ?t)) (served ?c)))\n"
    " (:action serve_sandwich :parameters (?s - sandwich ?c - child ?t - tray ?p - place)\n"
    "  :precondition (and (not_allergic_gluten ?c) (waiting ?c ?p) (ontray ?s ?t) (at ?t ?p))\n"
    "  :effect (and (not (ontray ?s ?t)) (served ?c)))\n"
    " (:action move_tray :parameters (?t - tray ?p1 ?p2 - place)\n"
    "  :precondition (and (at ?t ?p1) (not (at ?t ?p2)))\n"
    "  :effect (and (not (at ?t ?p1)) (at ?t ?p2))))\n";

/* Four allergic and four other children at two tables, one tray, exactly
 * four gluten-free breads and contents: a gluten-free sandwich served to a
 * child who is not allergic leaves an allergic one unservable, a dead end
 * h^FF does not see (the relaxation serves everyone from one sandwich). */
static const char *CS_PROBLEM =
    "(define (problem cs8) (:domain childsnack)\n"
    " (:objects c1 c2 c3 c4 c5 c6 c7 c8 - child tray1 - tray s1 s2 s3 s4 s5 s6 s7 s8 - sandwich\n"
    "  b1 b2 b3 b4 b5 b6 b7 b8 - bread-portion k1 k2 k3 k4 k5 k6 k7 k8 - content-portion table1 table2 - place)\n"
    " (:init (at tray1 kitchen)\n"
    "  (at_kitchen_bread b1) (at_kitchen_bread b2) (at_kitchen_bread b3) (at_kitchen_bread b4)\n"
    "  (at_kitchen_bread b5) (at_kitchen_bread b6) (at_kitchen_bread b7) (at_kitchen_bread b8)\n"
    "  (at_kitchen_content k1) (at_kitchen_content k2) (at_kitchen_content k3) (at_kitchen_content k4)\n"
    "  (at_kitchen_content k5) (at_kitchen_content k6) (at_kitchen_content k7) (at_kitchen_content k8)\n"
    "  (no_gluten_bread b1) (no_gluten_bread b2) (no_gluten_bread b3) (no_gluten_bread b4)\n"
    "  (no_gluten_content k1) (no_gluten_content k2) (no_gluten_content k3) (no_gluten_content k4)\n"
    "  (allergic_gluten c1) (waiting c1 table1) (allergic_gluten c2) (waiting c2 table2)\n"
    "  (allergic_gluten c3) (waiting c3 table1) (allergic_gluten c4) (waiting c4 table2)\n"
    "  (not_allergic_gluten c5) (waiting c5 table1) (not_allergic_gluten c6) (waiting c6 table2)\n"
    "  (not_allergic_gluten c7) (waiting c7 table1) (not_allergic_gluten c8) (waiting c8 table2)\n"
    "  (notexist s1) (notexist s2) (notexist s3) (notexist s4) (notexist s5) (notexist s6) (notexist s7)\n"
    "  (notexist s8))\n"
    " (:goal (and (served c1) (served c2) (served c3) (served c4) (served c5) (served c6) (served c7)\n"
    "  (served c8))))\n";

typedef struct ctask {
    ns_domain d;
    ns_problem p;
    ns_task t;
} ctask;

static bool cload(ctask *c)
{
    ns_error e;
    bool ok = ns_domain_parse(&c->d, CS_DOMAIN, "childsnack", &e) == NS_OK &&
              ns_problem_parse(&c->p, &c->d, CS_PROBLEM, "cs8", &e) == NS_OK &&
              ns_task_ground(&c->t, &c->d, &c->p, &e) == NS_OK;
    if (!ok) fprintf(stderr, "  load childsnack: %s\n", e.msg);
    return ok;
}

static void cfree(ctask *c)
{
    ns_task_free(&c->t);
    ns_problem_free(&c->p);
    ns_domain_free(&c->d);
}

static int op_named(const ns_task *t, const char *name)
{
    ns_buf b;
    ns_buf_init(&b);
    int found = -1;
    for (int o = 0; o < t->nops && found < 0; o++) {
        b.len = 0;
        ns_task_op_str(t, o, &b);
        if (strcmp(b.data, name) == 0) found = o;
    }
    ns_buf_free(&b);
    return found;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The order is a permutation; neighbours have non-increasing precondition
 * counts and, among equal counts, lexicographically ascending sorted
 * precondition lists (operator id among equal lists). */
static void test_order_is_lexicographic(void)
{
    ctask c;
    if (!cload(&c)) {
        CHECK(0);
        return;
    }
    const ns_task *t = &c.t;
    ns_succorder so;
    ns_succorder_init(&so, t);
    int *seen = calloc((size_t)t->nops, sizeof(int));
    for (int i = 0; i < t->nops; i++) {
        CHECK_EQ_INT(so.rank[so.op[i]], i);
        seen[so.op[i]]++;
    }
    for (int o = 0; o < t->nops; o++) CHECK_EQ_INT(seen[o], 1);
    int bad = 0;
    for (int i = 1; i < t->nops; i++) {
        int x = so.op[i - 1], y = so.op[i];
        int nx = t->ops[x].npre, ny = t->ops[y].npre;
        int *px = malloc(sizeof(int) * (size_t)(nx + 1)), *py = malloc(sizeof(int) * (size_t)(ny + 1));
        memcpy(px, ns_op_pre(t, &t->ops[x]), sizeof(int) * (size_t)nx);
        memcpy(py, ns_op_pre(t, &t->ops[y]), sizeof(int) * (size_t)ny);
        qsort(px, (size_t)nx, sizeof(int), cmp_int);
        qsort(py, (size_t)ny, sizeof(int), cmp_int);
        int c0 = (nx < ny) - (nx > ny);
        for (int k = 0; k < nx && c0 == 0; k++) c0 = (px[k] > py[k]) - (px[k] < py[k]);
        if (c0 == 0) c0 = (x > y) - (x < y);
        bad += c0 >= 0;
        free(px);
        free(py);
    }
    CHECK_EQ_INT(bad, 0);
    free(seen);
    ns_succorder_free(&so);
    cfree(&c);
}

/* Sorting a state's applicable operators: serving an allergic child comes
 * before serving another child from the same sandwich, tray and table
 * (serve_sandwich_no_gluten needs no_gluten_sandwich besides
 * serve_sandwich's conditions; in operator-id order it came after). */
static void test_serve_allergic_first(void)
{
    ctask c;
    if (!cload(&c)) {
        CHECK(0);
        return;
    }
    const ns_task *t = &c.t;
    /* the state after making s1 gluten-free, putting it on the tray and
       carrying it to table1, where c1 (allergic) and c5 wait */
    const char *steps[] = {"(make_sandwich_no_gluten s1 b1 k1)", "(put_on_tray s1 tray1)",
                           "(move_tray tray1 kitchen table1)"};
    ns_word *s = malloc(sizeof(ns_word) * (size_t)t->nwords), *n = malloc(sizeof(ns_word) * (size_t)t->nwords);
    memcpy(s, t->init, sizeof(ns_word) * (size_t)t->nwords);
    for (int i = 0; i < 3; i++) {
        int o = op_named(t, steps[i]);
        CHECK(o >= 0 && ns_task_applicable(t, o, s));
        if (o < 0) goto out;
        ns_task_apply(t, o, s, n);
        memcpy(s, n, sizeof(ns_word) * (size_t)t->nwords);
    }
    ns_succgen g;
    ns_succgen_init(&g, t);
    int *ops = malloc(sizeof(int) * (size_t)t->nops);
    int nops = ns_succgen_applicable(&g, s, ops);
    int serve = op_named(t, "(serve_sandwich s1 c5 tray1 table1)");
    int serve_ng = op_named(t, "(serve_sandwich_no_gluten s1 c1 tray1 table1)");
    CHECK(serve >= 0 && serve_ng >= 0 && serve < serve_ng); /* operator ids: alphabetical */
    ns_succorder so;
    ns_succorder_init(&so, t);
    ns_succorder_sort(&so, ops, nops);
    int at_serve = -1, at_ng = -1;
    for (int k = 0; k < nops; k++) {
        if (ops[k] == serve) at_serve = k;
        if (ops[k] == serve_ng) at_ng = k;
    }
    CHECK(at_serve >= 0 && at_ng >= 0 && at_ng < at_serve);
    for (int k = 1; k < nops; k++) CHECK(so.rank[ops[k - 1]] < so.rank[ops[k]]);
    ns_succorder_free(&so);
    free(ops);
    ns_succgen_free(&g);
out:
    free(s);
    free(n);
    cfree(&c);
}

/* The greedy searches on the eight-child task: with operator-id order they
 * wasted gluten-free sandwiches and expanded 906 (LAMA), 1,427 (lazy) and
 * 1,272 (GBFS) states; in successor order 143, 95 and 68, near Fast
 * Downward's lama-first (165) and lazy_greedy([ff()], preferred=[ff()])
 * (112).  Plans of 39 steps, valid. */
static void test_childsnack_searches(void)
{
    ctask c;
    if (!cload(&c)) {
        CHECK(0);
        return;
    }
    const ns_search_algo algos[] = {NS_SEARCH_LAMA, NS_SEARCH_LAZY, NS_SEARCH_GBFS};
    for (int i = 0; i < 3; i++) {
        ns_search_opts o;
        ns_search_opts_default(&o);
        o.algo = algos[i];
        o.heuristic = NS_H_FF;
        o.time_limit = 20;
        ns_search_result r;
        ns_search(&c.t, &o, &r);
        CHECK_EQ_INT(r.status, NS_OK);
        CHECK(r.status == NS_OK && ns_plan_ops_valid(&c.t, r.plan, r.plan_len));
        CHECK(r.expanded <= 200);
        printf("  %s: plan %d, %ld expanded\n", ns_search_algo_name(algos[i]), r.plan_len, r.expanded);
        ns_search_result_free(&r);
    }
    cfree(&c);
}

int main(void)
{
    NS_RUN(test_order_is_lexicographic);
    NS_RUN(test_serve_allergic_first);
    NS_RUN(test_childsnack_searches);
    return ns_test_summary("test_succorder");
}
