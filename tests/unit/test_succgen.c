/* test_succgen.c — the decision-tree successor generator lists exactly the
 * operators that ns_task_applicable accepts, in ascending id order, on random
 * reachable states (seeded random walks) of generated problems of every
 * generator domain and of the shared benchmark's acpbench problems (when the
 * folder is there), for the full operator set and for the relevant subset. */
#include <dirent.h>

#include "nextstate/core/gen.h"
#include "nextstate/core/pddl.h"
#include "nextstate/core/succgen.h"
#include "nextstate/core/task.h"
#include "nextstate/util/util.h"
#include "test.h"

#define ACP "/work/shared/benchmarks/acpbench"

static uint64_t rng_next(uint64_t *x)
{
    *x += 0x9e3779b97f4a7c15ULL;
    uint64_t z = *x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Compares both generators along `walks` random walks of `len` steps;
 * returns the number of states checked (0 on a mismatch). */
static long compare_on_task(const ns_task *t, const bool *keep, uint64_t seed, int walks, int len)
{
    ns_succgen g;
    ns_succgen_init_subset(&g, t, keep);
    int *got = ns_xmalloc(sizeof(int) * ((size_t)t->nops + 1));
    int *want = ns_xmalloc(sizeof(int) * ((size_t)t->nops + 1));
    ns_word *s = ns_xmalloc(sizeof(ns_word) * ((size_t)t->nwords + 1));
    long checked = 0;
    bool ok = true;
    for (int w = 0; w < walks && ok; w++) {
        memcpy(s, t->init, sizeof(ns_word) * (size_t)t->nwords);
        for (int step = 0; step < len && ok; step++) {
            int n = ns_succgen_applicable(&g, s, got);
            int m = 0;
            for (int op = 0; op < t->nops; op++)
                if ((!keep || keep[op]) && ns_task_applicable(t, op, s)) want[m++] = op;
            CHECK_EQ_INT(n, m);
            if (n != m) ok = false;
            for (int i = 0; ok && i < n; i++)
                if (got[i] != want[i]) {
                    CHECK_EQ_INT(got[i], want[i]);
                    ok = false;
                }
            checked++;
            if (m == 0) break;
            ns_task_apply(t, want[rng_next(&seed) % (uint64_t)m], s, s);
        }
    }
    free(s);
    free(want);
    free(got);
    ns_succgen_free(&g);
    return ok ? checked : 0;
}

static long compare_both(const ns_task *t, uint64_t seed)
{
    long a = compare_on_task(t, NULL, seed, 20, 60);
    bool *keep = ns_xmalloc((size_t)t->nops + 1);
    ns_task_relevant_ops(t, keep);
    long b = compare_on_task(t, keep, seed + 1, 10, 60);
    free(keep);
    return a && b ? a + b : 0;
}

static bool ground(ns_domain *d, ns_problem *p, ns_task *t, const char *dom_text, const char *dom_path,
                   const char *prob_text, const char *prob_path)
{
    ns_error e;
    ns_error_clear(&e);
    ns_status st = dom_text ? ns_domain_parse(d, dom_text, "domain", &e) : ns_domain_read(d, dom_path, &e);
    if (st != NS_OK) {
        printf("  %s: %s\n", dom_path, e.msg);
        return false;
    }
    st = prob_text ? ns_problem_parse(p, d, prob_text, "problem", &e) : ns_problem_read(p, d, prob_path, &e);
    if (st != NS_OK) {
        printf("  %s: %s\n", prob_path, e.msg);
        ns_domain_free(d);
        return false;
    }
    if (ns_task_ground(t, d, p, &e) != NS_OK) {
        printf("  grounding %s: %s\n", prob_path, e.msg);
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
        for (uint64_t seed = 1; seed <= 3; seed++) {
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
            if (ground(&d, &p, &t, dt, path, b.data, doms[i])) {
                long n = compare_both(&t, seed * 7919);
                CHECK(n > 0);
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

static void test_acpbench_domains(void)
{
    DIR *top = opendir(ACP);
    if (!top) {
        printf("skip acpbench (no %s)\n", ACP);
        return;
    }
    struct dirent *de;
    int ndom = 0;
    while ((de = readdir(top))) {
        if (de->d_name[0] == '.') continue;
        char dir[512], dom[700];
        snprintf(dir, sizeof dir, "%s/%s", ACP, de->d_name);
        snprintf(dom, sizeof dom, "%s/domain.pddl", dir);
        DIR *sub = opendir(dir);
        if (!sub) continue;
        /* the first two problems in name order */
        char *names[64];
        int nn = 0;
        struct dirent *pe;
        while ((pe = readdir(sub)) && nn < 64) {
            size_t L = strlen(pe->d_name);
            if (L > 5 && strcmp(pe->d_name + L - 5, ".pddl") == 0 && strcmp(pe->d_name, "domain.pddl") != 0)
                names[nn++] = ns_xstrdup(pe->d_name);
        }
        closedir(sub);
        for (int i = 0; i < nn; i++)
            for (int j = i + 1; j < nn; j++)
                if (strcmp(names[j], names[i]) < 0) {
                    char *x = names[i];
                    names[i] = names[j];
                    names[j] = x;
                }
        for (int i = 0; i < nn && i < 2; i++) {
            char prob[1300];
            snprintf(prob, sizeof prob, "%s/%s", dir, names[i]);
            ns_domain d;
            ns_problem p;
            ns_task t;
            if (ground(&d, &p, &t, NULL, dom, NULL, prob)) {
                CHECK(compare_both(&t, 17 + (uint64_t)i) > 0);
                ns_task_free(&t);
                ns_problem_free(&p);
                ns_domain_free(&d);
            } else {
                CHECK(0);
            }
        }
        for (int i = 0; i < nn; i++) free(names[i]);
        ndom++;
    }
    closedir(top);
    CHECK(ndom >= 1);
}

/* An operator with both a positive and a negative precondition on one atom
 * never applies; one with no precondition always does. */
static void test_contradiction_and_free(void)
{
    const char *dom =
        "(define (domain d) (:requirements :strips :negative-preconditions)"
        " (:predicates (p) (q))"
        " (:action never :parameters () :precondition (and (p) (not (p))) :effect (q))"
        " (:action always :parameters () :precondition (and) :effect (p))"
        " (:action flip :parameters () :precondition (and (not (q))) :effect (q))"
        " (:action back :parameters () :precondition (q) :effect (and (not (q)) (not (p)))))";
    const char *prob = "(define (problem x) (:domain d) (:init) (:goal (and (q))))";
    ns_domain d;
    ns_problem p;
    ns_task t;
    if (!ground(&d, &p, &t, dom, "inline", prob, "inline")) {
        printf("  (inline task did not ground)\n");
        CHECK(0);
        return;
    }
    CHECK(compare_on_task(&t, NULL, 5, 10, 20) > 0);
    ns_task_free(&t);
    ns_problem_free(&p);
    ns_domain_free(&d);
}

int main(void)
{
    NS_RUN(test_generated_domains);
    NS_RUN(test_acpbench_domains);
    NS_RUN(test_contradiction_and_free);
    return ns_test_summary("test_succgen");
}
