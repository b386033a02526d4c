/* fuzz_pddl.c — libFuzzer target: a domain and a problem (the input split at
 * its first NUL byte, or the whole input as both) → parse → ground →
 * successors of the initial state and of one successor. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/core/pddl.h"
#include "nextstate/core/succgen.h"
#include "nextstate/core/task.h"
#include "nextstate/util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16) return 0;
    const uint8_t *cut = memchr(data, 0, size);
    size_t dn = cut ? (size_t)(cut - data) : size;
    char *dom = ns_xmalloc(dn + 1);
    memcpy(dom, data, dn);
    dom[dn] = 0;
    size_t pn = cut ? size - dn - 1 : size;
    char *prob = ns_xmalloc(pn + 1);
    memcpy(prob, cut ? cut + 1 : data, pn);
    prob[pn] = 0;
    if (memchr(prob, 0, pn)) pn = strlen(prob);
    ns_domain d;
    ns_problem p;
    ns_task t;
    ns_error e;
    if (ns_domain_parse(&d, dom, "d.pddl", &e) == NS_OK) {
        if (ns_problem_parse(&p, &d, prob, "p.pddl", &e) == NS_OK) {
            /* grounding blow-ups end at the limits (as `solve --time-limit` does) */
            const ns_ground_limits lim = {.time_limit = 0.05, .memory_limit = (size_t)64 << 20};
            if (ns_task_ground_limited(&t, &d, &p, &lim, &e) == NS_OK) {
                if (t.nops < 5000) {
                    ns_succgen g;
                    ns_succgen_init(&g, &t);
                    int *ops = ns_xmalloc(sizeof(int) * (size_t)(t.nops + 1));
                    ns_word *next = ns_xcalloc((size_t)t.nwords + 1, sizeof(ns_word));
                    int n = ns_succgen_applicable(&g, t.init, ops);
                    for (int i = 0; i < n; i++) {
                        if (!ns_task_applicable(&t, ops[i], t.init)) abort(); /* generator and task disagree */
                        ns_task_apply(&t, ops[i], t.init, next);
                        (void)ns_task_is_goal(&t, next);
                    }
                    if (n > 0) {
                        ns_task_apply(&t, ops[0], t.init, next);
                        int m = ns_succgen_applicable(&g, next, ops);
                        for (int i = 0; i < m; i++)
                            if (!ns_task_applicable(&t, ops[i], next)) abort();
                    }
                    free(next);
                    free(ops);
                    ns_succgen_free(&g);
                }
                ns_task_free(&t);
            }
            ns_problem_free(&p);
        }
        ns_domain_free(&d);
    }
    free(dom);
    free(prob);
    return 0;
}
