/* test_wordfx.c — operator effects as word masks: ns_wordfx_apply gives
 * ns_task_apply's successor and, incrementally, its ns_registry_hash, for
 * every applicable operator along seeded random walks of generated problems
 * of every generator domain; an operator adding and deleting one atom adds
 * it, as ns_task_apply does. */
#include "nextstate/core/gen.h"
#include "nextstate/core/pddl.h"
#include "nextstate/core/state.h"
#include "nextstate/core/task.h"
#include "nextstate/core/wordfx.h"
#include "nextstate/util/util.h"
#include "test.h"

/* Checks every applicable operator of the states of `walks` random walks;
 * returns the successors checked (0 on a mismatch). */
static long check_task(const ns_task *t, uint64_t seed, int walks, int len)
{
    ns_wordfx fx;
    ns_wordfx_init(&fx, t);
    size_t wb = sizeof(ns_word) * ((size_t)t->nwords + 1);
    ns_word *s = ns_xmalloc(wb), *want = ns_xmalloc(wb), *got = ns_xmalloc(wb);
    int *app = ns_xmalloc(sizeof(int) * ((size_t)t->nops + 1));
    ns_rng rng;
    ns_rng_seed(&rng, seed);
    long checked = 0;
    bool ok = true;
    for (int w = 0; w < walks && ok; w++) {
        memcpy(s, t->init, sizeof(ns_word) * (size_t)t->nwords);
        for (int step = 0; step < len && ok; step++) {
            uint64_t hs = ns_registry_hash(s, t->nwords);
            int m = 0;
            for (int op = 0; op < t->nops && ok; op++) {
                if (!ns_task_applicable(t, op, s)) continue;
                app[m++] = op;
                ns_task_apply(t, op, s, want);
                uint64_t h = ns_wordfx_apply(&fx, op, s, hs, got);
                if (memcmp(want, got, sizeof(ns_word) * (size_t)t->nwords) != 0) ok = false;
                if (h != ns_registry_hash(want, t->nwords)) ok = false;
                checked++;
            }
            if (m == 0) break;
            ns_task_apply(t, app[ns_rng_below(&rng, (uint64_t)m)], s, s);
        }
    }
    CHECK(ok);
    CHECK(ns_wordfx_bytes(&fx) > 0);
    free(app);
    free(got);
    free(want);
    free(s);
    ns_wordfx_free(&fx);
    return ok ? checked : 0;
}

static bool ground_text(ns_domain *d, ns_problem *p, ns_task *t, const char *dt, const char *pt)
{
    ns_error e;
    ns_error_clear(&e);
    if (ns_domain_parse(d, dt, "domain", &e) != NS_OK) return false;
    if (ns_problem_parse(p, d, pt, "problem", &e) != NS_OK) {
        ns_domain_free(d);
        return false;
    }
    if (ns_task_ground(t, d, p, &e) != NS_OK) {
        ns_problem_free(p);
        ns_domain_free(d);
        return false;
    }
    return true;
}

static void test_generated_domains(void)
{
    const char *const *doms = ns_gen_domains();
    int ndom = 0;
    for (int i = 0; doms[i]; i++, ndom++) {
        for (uint64_t seed = 1; seed <= 2; seed++) {
            ns_buf b;
            ns_buf_init(&b);
            ns_error e;
            ns_error_clear(&e);
            CHECK(ns_gen_problem(doms[i], NULL, 0, seed, "p", &b, &e) == NS_OK);
            char path[256];
            snprintf(path, sizeof path, "domains/%s/domain.pddl", doms[i]);
            char *dt;
            size_t dn;
            CHECK(ns_read_file(path, &dt, &dn, &e) == NS_OK);
            ns_domain d;
            ns_problem p;
            ns_task t;
            if (ground_text(&d, &p, &t, dt, b.data)) {
                CHECK(check_task(&t, seed * 7919, 10, 40) > 0);
                ns_task_free(&t);
                ns_problem_free(&p);
                ns_domain_free(&d);
            } else {
                CHECK(0);
            }
            free(dt);
            ns_buf_free(&b);
        }
    }
    CHECK(ndom >= 5);
}

/* `both` adds and deletes q (q holds after it). */
static void test_add_and_delete(void)
{
    ns_buf dom;
    ns_buf_init(&dom);
    ns_buf_puts(&dom, "(define (domain d) (:requirements :strips) (:predicates (q)");
    for (int i = 0; i < 70; i++) ns_buf_printf(&dom, " (p%d)", i);
    ns_buf_puts(&dom, ")"
                      " (:action both :parameters () :precondition (and) :effect (and (q) (not (q)) (not (p0))))"
                      " (:action wide :parameters () :precondition (p0) :effect (and (p69) (not (p1)) (not (p68)))))");
    const char *prob = "(define (problem x) (:domain d) (:init (p0) (p1) (p68)) (:goal (and (q) (p69))))";
    ns_domain d;
    ns_problem p;
    ns_task t;
    CHECK(ground_text(&d, &p, &t, dom.data, prob));
    if (t.natoms > 0) {
        CHECK(check_task(&t, 3, 5, 5) > 0);
        ns_task_free(&t);
        ns_problem_free(&p);
        ns_domain_free(&d);
    }
    ns_buf_free(&dom);
}

int main(void)
{
    NS_RUN(test_generated_domains);
    NS_RUN(test_add_and_delete);
    return ns_test_summary("test_wordfx");
}
