/* test_pddl.c — the PDDL reader, the grounder, γ and plan validation. */
#include <dirent.h>
#include "nextstate/core/plan.h"
#include "nextstate/core/succgen.h"
#include "nextstate/core/task.h"
#include "test.h"

static const char *BW_DOMAIN =
    "; blocksworld with 4 operators\n"
    "(define (domain BW)\n"
    " (:requirements :strips :typing)\n"
    " (:types block)\n"
    " (:predicates (on ?x - block ?y - block) (ontable ?x - block) (clear ?x - block)\n"
    "              (handempty) (holding ?x - block))\n"
    " (:action pick-up :parameters (?x - block)\n"
    "  :precondition (and (clear ?x) (ontable ?x) (handempty))\n"
    "  :effect (and (not (ontable ?x)) (not (clear ?x)) (not (handempty)) (holding ?x)))\n"
    " (:action put-down :parameters (?x - block)\n"
    "  :precondition (holding ?x)\n"
    "  :effect (and (not (holding ?x)) (clear ?x) (handempty) (ontable ?x)))\n"
    " (:action stack :parameters (?x - block ?y - block)\n"
    "  :precondition (and (holding ?x) (clear ?y))\n"
    "  :effect (and (not (holding ?x)) (not (clear ?y)) (clear ?x) (handempty) (on ?x ?y)))\n"
    " (:action unstack :parameters (?x - block ?y - block)\n"
    "  :precondition (and (on ?x ?y) (clear ?x) (handempty))\n"
    "  :effect (and (holding ?x) (clear ?y) (not (clear ?x)) (not (handempty)) (not (on ?x ?y)))))\n";

static const char *BW_PROBLEM =
    "(define (problem p3) (:domain bw)\n"
    " (:objects A B C - block)\n"
    " (:init (clear a) (clear b) (clear c) (ontable a) (ontable b) (ontable c) (handempty))\n"
    " (:goal (and (on a b) (on b c))))\n";

typedef struct loaded {
    ns_domain d;
    ns_problem p;
    ns_task t;
} loaded;

static int load(loaded *l, const char *dom, const char *prob)
{
    ns_error e;
    if (ns_domain_parse(&l->d, dom, "d.pddl", &e) != NS_OK) {
        printf("  domain: %s:%d:%d %s\n", e.file, e.line, e.col, e.msg);
        return -1;
    }
    if (ns_problem_parse(&l->p, &l->d, prob, "p.pddl", &e) != NS_OK) {
        printf("  problem: %s:%d:%d %s\n", e.file, e.line, e.col, e.msg);
        ns_domain_free(&l->d);
        return -1;
    }
    if (ns_task_ground(&l->t, &l->d, &l->p, &e) != NS_OK) {
        printf("  ground: %s\n", e.msg);
        ns_problem_free(&l->p);
        ns_domain_free(&l->d);
        return -1;
    }
    return 0;
}

static void unload(loaded *l)
{
    ns_task_free(&l->t);
    ns_problem_free(&l->p);
    ns_domain_free(&l->d);
}

/* Number of states reachable from init (plain BFS with a linear-probe set of
 * states kept as byte strings; independent of the registry module). */
static long count_reachable(const ns_task *t, long cap)
{
    size_t w = (size_t)t->nwords;
    size_t tcap = 1 << 16;
    while ((long)tcap < cap * 2) tcap <<= 1;
    ns_word *tab = calloc(tcap * w, sizeof(ns_word));
    char *used = calloc(tcap, 1);
    ns_word *queue = malloc(sizeof(ns_word) * w * (size_t)cap);
    long head = 0, tail = 0;
    ns_succgen g;
    ns_succgen_init(&g, t);
    int *ops = malloc(sizeof(int) * ((size_t)t->nops + 1));
    ns_word *next = malloc(sizeof(ns_word) * w);
#define INSERT(s)                                                                       \
    do {                                                                                \
        size_t h = (size_t)ns_hash_bytes((s), w * sizeof(ns_word), 1) & (tcap - 1);     \
        while (used[h] && memcmp(tab + h * w, (s), w * sizeof(ns_word))) h = (h + 1) & (tcap - 1); \
        if (!used[h]) {                                                                 \
            used[h] = 1;                                                                \
            memcpy(tab + h * w, (s), w * sizeof(ns_word));                              \
            if (tail < cap) memcpy(queue + (size_t)tail * w, (s), w * sizeof(ns_word)); \
            tail++;                                                                     \
        }                                                                               \
    } while (0)
    INSERT(t->init);
    while (head < tail && tail <= cap) {
        const ns_word *s = queue + (size_t)head++ * w;
        int n = ns_succgen_applicable(&g, s, ops);
        for (int i = 0; i < n; i++) {
            ns_task_apply(t, ops[i], s, next);
            INSERT(next);
        }
    }
#undef INSERT
    free(tab);
    free(used);
    free(queue);
    free(ops);
    free(next);
    ns_succgen_free(&g);
    return tail > cap ? -1 : tail;
}

static void test_blocksworld_ground(void)
{
    loaded l;
    CHECK(load(&l, BW_DOMAIN, BW_PROBLEM) == 0);
    const ns_task *t = &l.t;
    CHECK_EQ_INT(l.p.nobjects, 3);
    CHECK_STR(l.p.objects[0], "a"); /* names are lower-cased */
    CHECK_EQ_INT(t->natoms, 9 + 3 + 3 + 1 + 3); /* on(x,x) is relaxed-reachable */
    /* on(x,x) needs holding x and clear x together: relaxed-reachable */
    CHECK_EQ_INT(t->nops, 3 + 3 + 9 + 9);
    CHECK_EQ_INT(t->nstatics, 0);
    CHECK_EQ_INT(count_reachable(t, 100000), 22); /* 3 blocks: 13 table states + 9 holding */
    ns_buf b;
    ns_buf_init(&b);
    ns_task_op_str(t, 0, &b);
    CHECK_STR(b.data, "(pick-up a)"); /* sorted by name */
    ns_buf_free(&b);
    unload(&l);
}

static void test_transition_and_validate(void)
{
    loaded l;
    CHECK(load(&l, BW_DOMAIN, BW_PROBLEM) == 0);
    ns_plan p;
    ns_error e;
    CHECK(ns_plan_parse(&p, &l.t, "(pick-up b)\n(stack b c)\n(pick-up a)\n(stack a b)\n; cost = 4\n", "plan", &e) ==
          NS_OK);
    ns_validation v;
    CHECK(ns_plan_validate(&l.t, &p, &v) == NS_OK);
    CHECK(v.valid);
    CHECK_EQ_INT(v.cost, 4);
    ns_plan_free(&p);
    /* second step inapplicable: names the unmet precondition */
    CHECK(ns_plan_parse(&p, &l.t, "(pick-up b)\n(stack a c)\n", "plan", &e) == NS_OK);
    CHECK(ns_plan_validate(&l.t, &p, &v) == NS_INVALID_PLAN);
    CHECK_EQ_INT(v.failed_step, 1);
    CHECK(strstr(v.reason, "(holding a)") != NULL);
    ns_plan_free(&p);
    /* goal not reached */
    CHECK(ns_plan_parse(&p, &l.t, "(pick-up b)\n(stack b c)\n", "plan", &e) == NS_OK);
    CHECK(ns_plan_validate(&l.t, &p, &v) == NS_INVALID_PLAN);
    CHECK_EQ_INT(v.failed_step, -1);
    CHECK(strstr(v.reason, "(on a b)") != NULL);
    ns_plan_free(&p);
    /* unknown names and arity */
    CHECK(ns_plan_parse(&p, &l.t, "(pick-up z)\n", "plan", &e) == NS_ERR_INPUT);
    CHECK(strstr(e.msg, "unknown object 'z'") != NULL);
    CHECK(ns_plan_parse(&p, &l.t, "(fly a)\n", "plan", &e) == NS_ERR_INPUT);
    CHECK(ns_plan_parse(&p, &l.t, "\n(stack a)\n", "plan", &e) == NS_ERR_INPUT);
    CHECK_EQ_INT(e.line, 2);
    unload(&l);
}

static const char *NEG_DOMAIN =
    "(define (domain toggles) (:requirements :strips :typing :negative-preconditions :equality)\n"
    " (:types switch) (:constants master - switch)\n"
    " (:predicates (on ?s - switch) (linked ?a ?b - switch))\n"
    " (:action turn-on :parameters (?s - switch) :precondition (not (on ?s)) :effect (on ?s))\n"
    " (:action chain :parameters (?a ?b - switch)\n"
    "   :precondition (and (on ?a) (linked ?a ?b) (not (= ?a ?b)) (not (on ?b)))\n"
    "   :effect (and (on ?b) (not (on ?a))))\n"
    " (:action either :parameters (?a - switch)\n"
    "   :precondition (or (on master) (linked ?a ?a)) :effect (not (on ?a))))\n";

static void test_negative_equality_constants_or(void)
{
    loaded l;
    CHECK(load(&l, NEG_DOMAIN,
               "(define (problem t) (:domain toggles) (:objects s1 s2 - switch)\n"
               " (:init (linked s1 s2) (linked s2 s2) (linked master s1))\n"
               " (:goal (and (on s2) (not (on s1)))))") == 0);
    const ns_task *t = &l.t;
    CHECK_EQ_INT(l.p.nobjects, 3); /* master, s1, s2 */
    CHECK_EQ_INT(t->natoms, 3);
    CHECK_EQ_INT(t->nstatics, 3);
    /* chain: (master s1), (s1 s2); (s2 s2) is excluded by (not (= a b)) */
    int chains = 0, eithers = 0;
    for (int i = 0; i < t->nops; i++) {
        chains += !strcmp(l.d.actions[t->ops[i].schema].name, "chain");
        eithers += !strcmp(l.d.actions[t->ops[i].schema].name, "either");
    }
    CHECK_EQ_INT(chains, 2);
    CHECK_EQ_INT(eithers, 3 + 1); /* clause 1 for every switch, clause 2 for s2 */
    CHECK_EQ_INT(t->ngoal_pos, 1);
    CHECK_EQ_INT(t->ngoal_neg, 1);
    CHECK(!ns_task_is_goal(t, t->init));
    unload(&l);
}

/* Relevance: an operator that only changes atoms no goal needs, or only
 * re-achieves an initially true atom nothing deletes, is irrelevant. */
static void test_relevance(void)
{
    loaded l;
    int rc = load(&l,
               "(define (domain r) (:requirements :strips)\n"
               " (:constants a b) (:predicates (at ?x) (link ?x ?y) (lamp) (done) (sent))\n"
               " (:action go :parameters (?x ?y) :precondition (and (at ?x) (link ?x ?y)) :effect (and (at ?y) (not (at ?x))))\n"
               " (:action toggle :parameters () :precondition (at a) :effect (lamp))\n"
               " (:action send :parameters () :precondition (at a) :effect (sent))\n"
               " (:action finish :parameters () :precondition (at b) :effect (done)))\n",
               "(define (problem p) (:domain r)\n"
               " (:init (at a) (link a b) (link b a) (sent)) (:goal (and (done) (sent))))");
    CHECK(rc == 0);
    if (rc) return;
    bool rel[64];
    int n = ns_task_relevant_ops(&l.t, rel);
    CHECK_EQ_INT(l.t.nops, 5);
    CHECK_EQ_INT(n, 3); /* go a b, go b a, finish; not toggle (lamp), not send (sent persists) */
    for (int i = 0; i < l.t.nops; i++) {
        const char *name = l.d.actions[l.t.ops[i].schema].name;
        CHECK(rel[i] == (!strcmp(name, "go") || !strcmp(name, "finish")));
    }
    unload(&l);
}

/* Operators that never change a state (move r r) are dropped; a plan that
 * uses one still validates. */
static void test_noop_operators(void)
{
    loaded l;
    int rc = load(&l,
                  "(define (domain m) (:requirements :strips) (:predicates (at ?x))\n"
                  " (:action move :parameters (?from ?to) :precondition (at ?from)\n"
                  "   :effect (and (at ?to) (not (at ?from)))))\n",
                  "(define (problem p) (:domain m) (:objects r1 r2) (:init (at r1)) (:goal (at r2)))");
    CHECK(rc == 0);
    if (rc) return;
    CHECK_EQ_INT(l.t.nops, 2); /* (move r1 r2), (move r2 r1) */
    ns_plan p;
    ns_error e;
    ns_validation v;
    CHECK(ns_plan_parse(&p, &l.t, "(move r1 r1)\n(move r1 r2)\n", "plan", &e) == NS_OK);
    CHECK(ns_plan_validate(&l.t, &p, &v) == NS_OK);
    ns_plan_free(&p);
    CHECK(ns_plan_parse(&p, &l.t, "(move r2 r2)\n", "plan", &e) == NS_OK);
    CHECK(ns_plan_validate(&l.t, &p, &v) == NS_INVALID_PLAN);
    CHECK(strstr(v.reason, "(at r2)") != NULL);
    ns_plan_free(&p);
    unload(&l);
}

/* Malformed input: each case must fail with the given status at line:col. */
static void test_malformed(void)
{
    struct {
        const char *dom, *prob;
        ns_status code;
        int line, col;
        const char *needle;
    } cases[] = {
        {"(define (domain d) (:predicates (p))", NULL, NS_ERR_INPUT, 1, 1, "never closed"},
        {"(define (domain d)) )", NULL, NS_ERR_INPUT, 1, 21, "unexpected ')'"},
        {"", NULL, NS_ERR_INPUT, 1, 1, "empty file"},
        {"(define (domain d) (:predicates (p ?x - thing)))", NULL, NS_ERR_INPUT, 1, 41, "undefined type 'thing'"},
        {"(define (domain d) (:predicates (p ?x))\n (:action a :parameters (?x) :precondition (q ?x) :effect (p ?x)))",
         NULL, NS_ERR_INPUT, 2, 45, "undefined predicate 'q'"},
        {"(define (domain d) (:predicates (p ?x))\n (:action a :parameters (?x) :precondition (p ?x ?x) :effect (p ?x)))",
         NULL, NS_ERR_INPUT, 2, 44, "takes 1 argument, given 2"},
        {"(define (domain d) (:predicates (p ?x))\n (:action a :parameters (?x) :precondition (p ?y) :effect (p ?x)))",
         NULL, NS_ERR_INPUT, 2, 47, "undefined variable '?y'"},
        {"(define (domain d) (:predicates (p ?x))\n (:action a :parameters (?x) :effect (forall (?y) (p ?y))))", NULL,
         NS_ERR_UNSUPPORTED, 2, 38, "not supported"},
        {"(define (domain d) (:requirements :fluents))", NULL, NS_ERR_UNSUPPORTED, 1, 35, "requirement"},
        {"(define (domain d) (:predicates (p ?x)))", "(define (problem q) (:domain d) (:objects a)\n (:init (p b)) (:goal (p a)))",
         NS_ERR_INPUT, 2, 12, "undefined object 'b'"},
        {"(define (domain d) (:predicates (p ?x)))", "(define (problem q) (:domain d) (:objects a - blob) (:init) (:goal (p a)))",
         NS_ERR_INPUT, 1, 47, "undefined type 'blob'"},
        {"(define (domain d) (:predicates (p ?x)))", "(define (problem q) (:domain d) (:objects a) (:init (p a a)) (:goal (p a)))",
         NS_ERR_INPUT, 1, 53, "takes 1 argument"},
        {"(define (domain d) (:predicates (p ?x)))", "(define (problem q) (:domain d) (:objects a) (:init (p a)))",
         NS_ERR_INPUT, 1, 1, "no (:goal"},
        {"(define (domain d) (:predicates (p ?x)))", "(define (problem q) (:domain d) (:objects a) (:init (p a)) (:goal (p a))",
         NS_ERR_INPUT, 1, 1, "never closed"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ns_domain d;
        ns_error e;
        ns_error_clear(&e);
        ns_status st = ns_domain_parse(&d, cases[i].dom, "d.pddl", &e);
        if (cases[i].prob) {
            CHECK(st == NS_OK);
            if (st != NS_OK) continue;
            ns_problem p;
            st = ns_problem_parse(&p, &d, cases[i].prob, "p.pddl", &e);
            if (st == NS_OK) ns_problem_free(&p);
            ns_domain_free(&d);
        } else if (st == NS_OK) {
            ns_domain_free(&d);
        }
        if (st != cases[i].code || e.line != cases[i].line || e.col != cases[i].col || !strstr(e.msg, cases[i].needle))
            printf("  case %zu: got %d at %d:%d '%s'\n", i, (int)st, e.line, e.col, e.msg);
        CHECK(st == cases[i].code);
        CHECK_EQ_INT(e.line, cases[i].line);
        CHECK_EQ_INT(e.col, cases[i].col);
        CHECK(strstr(e.msg, cases[i].needle) != NULL);
    }
}

/* Every truncation of a valid domain fails cleanly (no crash, no success
 * with a partial file unless the cut falls after the closing parenthesis). */
static void test_truncations(void)
{
    size_t n = (size_t)(strrchr(BW_DOMAIN, ')') - BW_DOMAIN); /* cuts before the last ')' */
    char *buf = malloc(n + 1);
    int ok = 0;
    for (size_t k = 0; k < n; k++) {
        memcpy(buf, BW_DOMAIN, k);
        buf[k] = '\0';
        ns_domain d;
        ns_error e;
        if (ns_domain_parse(&d, buf, "cut.pddl", &e) == NS_OK) {
            ok++;
            ns_domain_free(&d);
        } else {
            CHECK(e.code == NS_ERR_INPUT);
        }
    }
    CHECK_EQ_INT(ok, 0);
    free(buf);
}

/* Parses and grounds every problem of every benchmark domain. */
static void test_benchmarks_ground(void)
{
    const char *root = ns_test_benchmarks();
    char path[1024], dpath[1024];
    int problems = 0, failures = 0;
    const char *sets[] = {"acpbench", "seedA/pddl"};
    for (int s = 0; s < 2; s++) {
        snprintf(path, sizeof path, "%s/%s", root, sets[s]);
        DIR *dir = opendir(path);
        CHECK(dir != NULL);
        if (!dir) continue;
        struct dirent *de;
        while ((de = readdir(dir))) {
            if (de->d_name[0] == '.') continue;
            snprintf(dpath, sizeof dpath, "%s/%s/%s/domain.pddl", root, sets[s], de->d_name);
            ns_domain d;
            ns_error e;
            if (ns_domain_read(&d, dpath, &e) != NS_OK) {
                printf("  %s:%d:%d: %s\n", e.file, e.line, e.col, e.msg);
                failures++;
                continue;
            }
            const char *subs[] = {"", "train", "validation", "test-interpolation", "test-extrapolation"};
            for (int k = 0; k < 5; k++) {
                char sub[1024];
                snprintf(sub, sizeof sub, "%s/%s/%s/%s", root, sets[s], de->d_name, subs[k]);
                DIR *pd = opendir(sub);
                if (!pd) continue;
                struct dirent *pe;
                while ((pe = readdir(pd))) {
                    size_t len = strlen(pe->d_name);
                    if (len < 5 || strcmp(pe->d_name + len - 5, ".pddl") || !strcmp(pe->d_name, "domain.pddl")) continue;
                    char pp[2048];
                    snprintf(pp, sizeof pp, "%s/%s", sub, pe->d_name);
                    ns_problem p;
                    ns_task t;
                    if (ns_problem_read(&p, &d, pp, &e) != NS_OK) {
                        printf("  %s:%d:%d: %s\n", e.file, e.line, e.col, e.msg);
                        failures++;
                        continue;
                    }
                    if (ns_task_ground(&t, &d, &p, &e) != NS_OK) {
                        printf("  %s: %s\n", pp, e.msg);
                        failures++;
                    } else {
                        problems++;
                        ns_task_free(&t);
                    }
                    ns_problem_free(&p);
                }
                closedir(pd);
            }
            ns_domain_free(&d);
        }
        closedir(dir);
    }
    printf("  grounded %d benchmark problems, %d failures\n", problems, failures);
    CHECK(problems >= 694);
    CHECK_EQ_INT(failures, 0);
}

int main(void)
{
    NS_RUN(test_blocksworld_ground);
    NS_RUN(test_transition_and_validate);
    NS_RUN(test_negative_equality_constants_or);
    NS_RUN(test_relevance);
    NS_RUN(test_noop_operators);
    NS_RUN(test_malformed);
    NS_RUN(test_truncations);
    if (ns_test_benchmarks()) NS_RUN(test_benchmarks_ground);
    else NS_SKIP(test_benchmarks_ground, "../shared/benchmarks absent");
    return ns_test_summary("test_pddl");
}
