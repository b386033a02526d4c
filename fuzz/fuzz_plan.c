/* fuzz_plan.c — libFuzzer target: plan files against a fixed blocksworld
 * task: parse and validate. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/core/pddl.h"
#include "nextstate/core/plan.h"
#include "nextstate/core/task.h"
#include "nextstate/util/util.h"

static const char DOM[] =
    "(define (domain bw) (:requirements :strips)"
    " (:predicates (clear ?x) (ontable ?x) (handempty) (holding ?x) (on ?x ?y))"
    " (:action pick-up :parameters (?x) :precondition (and (clear ?x) (ontable ?x) (handempty))"
    "  :effect (and (not (ontable ?x)) (not (clear ?x)) (not (handempty)) (holding ?x)))"
    " (:action put-down :parameters (?x) :precondition (holding ?x)"
    "  :effect (and (not (holding ?x)) (clear ?x) (handempty) (ontable ?x)))"
    " (:action stack :parameters (?x ?y) :precondition (and (holding ?x) (clear ?y))"
    "  :effect (and (not (holding ?x)) (not (clear ?y)) (clear ?x) (handempty) (on ?x ?y)))"
    " (:action unstack :parameters (?x ?y) :precondition (and (on ?x ?y) (clear ?x) (handempty))"
    "  :effect (and (holding ?x) (clear ?y) (not (clear ?x)) (not (handempty)) (not (on ?x ?y)))))";
static const char PROB[] = "(define (problem p) (:domain bw) (:objects a b c)"
                           " (:init (clear a) (clear b) (clear c) (ontable a) (ontable b) (ontable c) (handempty))"
                           " (:goal (and (on a b) (on b c))))";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ns_domain d;
    static ns_problem p;
    static ns_task t;
    static int ready;
    ns_error e;
    if (!ready) {
        if (ns_domain_parse(&d, DOM, "bw", &e) || ns_problem_parse(&p, &d, PROB, "p", &e) ||
            ns_task_ground(&t, &d, &p, &e))
            abort();
        ready = 1;
    }
    if (size > 1 << 16) return 0;
    char *text = ns_xmalloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    ns_plan plan;
    if (ns_plan_parse(&plan, &t, text, "plan", &e) == NS_OK) {
        ns_validation v;
        (void)ns_plan_validate(&t, &plan, &v);
        ns_plan_free(&plan);
    }
    free(text);
    return 0;
}
