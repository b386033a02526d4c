/* test_dataset.c — dataset build, save/load round trip, determinism, and
 * clear errors on truncated or corrupted files. */
#include <sys/stat.h>
#include <unistd.h>
#include "nextstate/data/dataset.h"
#include "nextstate/core/gen.h"
#include "nextstate/core/plan.h"
#include "gen_fixture.h"
#include "test.h"

static const char *FILES[] = {"manifest.json", "states.npy", "state_problem.npy", "state_g.npy", "state_hstar.npy",
                              "transitions.npy", "transition_optimal.npy", "applicable_offsets.npy",
                              "applicable_ops.npy", "plan_offsets.npy", "plan_transitions.npy", "plan_problem.npy"};
#define NFILES ((int)(sizeof FILES / sizeof FILES[0]))

static char tmpdir[256];

static void test_build_roundtrip_determinism(void)
{
    char pdir[300], d1[300], d2[300];
    snprintf(pdir, sizeof pdir, "%s/problems", tmpdir);
    snprintf(d1, sizeof d1, "%s/ds1", tmpdir);
    snprintf(d2, sizeof d2, "%s/ds2", tmpdir);
    ns_gen_arg fe[] = {{"cars", 3}, {"locations", 3}};
    char **paths = ns_test_gen_problems(pdir, "ferry", fe, 2, 3, 1, false);
    CHECK(paths != NULL);
    if (!paths) return;
    int64_t optimal_edges = -1, optimal_states = -1;
    for (int mode = 0; mode < 3; mode++) { /* optimal, full, optimal + successors */
        ns_dataset_opts o = {mode == 1 ? NS_SPACE_FULL : NS_SPACE_OPTIMAL, 0, 8, 5, 0, false, mode == 2};
        ns_dataset a, b;
        ns_error e;
        CHECK(ns_dataset_build(&a, "domains/ferry/domain.pddl", (const char *const *)paths, 3, &o, &e) == NS_OK);
        CHECK(ns_dataset_save(&a, d1, &e) == NS_OK);
        CHECK(ns_dataset_build(&b, "domains/ferry/domain.pddl", (const char *const *)paths, 3, &o, &e) == NS_OK);
        CHECK(ns_dataset_save(&b, d2, &e) == NS_OK);
        for (int i = 0; i < NFILES; i++) {
            char f1[400], f2[400];
            snprintf(f1, sizeof f1, "%s/%s", d1, FILES[i]);
            snprintf(f2, sizeof f2, "%s/%s", d2, FILES[i]);
            if (!ns_test_files_equal(f1, f2)) printf("  %s differs between two builds\n", FILES[i]);
            CHECK(ns_test_files_equal(f1, f2));
        }
        ns_dataset c;
        ns_status lst = ns_dataset_load(&c, d1, &e);
        if (lst != NS_OK) printf("  load: %s: %s\n", e.file, e.msg);
        CHECK(lst == NS_OK);
        CHECK_EQ_INT(c.nproblems, 3);
        CHECK_EQ_INT(ns_dataset_nstates(&c), ns_dataset_nstates(&a));
        CHECK_EQ_INT(ns_dataset_ntransitions(&c), ns_dataset_ntransitions(&a));
        CHECK(memcmp(c.states.data, a.states.data, sizeof(uint64_t) * (size_t)ns_dataset_nstates(&a) * (size_t)a.words) == 0);
        CHECK_STR(c.problems[1].ops[0], a.problems[1].ops[0]);
        /* every sampled plan is a valid optimal plan of its problem */
        ns_domain d;
        CHECK(ns_domain_read(&d, "domains/ferry/domain.pddl", &e) == NS_OK);
        const int64_t *po = c.plan_offsets.data, *pt = c.plan_transitions.data;
        const int32_t *pp = c.plan_problem.data;
        int checked = 0;
        for (int64_t k = 0; k < c.plan_problem.shape[0]; k++) {
            ns_problem p;
            ns_task t;
            CHECK(ns_problem_read(&p, &d, paths[pp[k]], &e) == NS_OK);
            CHECK(ns_task_ground(&t, &d, &p, &e) == NS_OK);
            int len = (int)(po[k + 1] - po[k]);
            int ops[256];
            for (int j = 0; j < len && j < 256; j++) ops[j] = ns_dataset_transition(&c, pt[po[k] + j])[2];
            CHECK(ns_plan_ops_valid(&t, ops, len));
            CHECK_EQ_INT(len, c.problems[pp[k]].cstar);
            checked++;
            ns_task_free(&t);
            ns_problem_free(&p);
        }
        CHECK(checked > 3);
        /* in optimal mode every transition is optimal; with successors the
         * same optimal edges plus every other applicable transition */
        int64_t nopt = 0;
        for (int64_t t = 0; t < ns_dataset_ntransitions(&c); t++) nopt += ((uint8_t *)c.transition_optimal.data)[t];
        if (mode == 0) {
            CHECK_EQ_INT(nopt, ns_dataset_ntransitions(&c));
            optimal_edges = nopt;
            optimal_states = ns_dataset_nstates(&c);
        }
        if (mode == 2) {
            CHECK_EQ_INT(nopt, optimal_edges);
            const int64_t *ao = c.applicable_offsets.data;
            const int32_t *hs = c.state_hstar.data;
            int64_t kept_applicable = 0, unknown = 0;
            for (int64_t s = 0; s < ns_dataset_nstates(&c); s++) {
                if (hs[s] != NS_HSTAR_UNKNOWN) kept_applicable += ao[s + 1] - ao[s];
                else unknown++;
            }
            CHECK_EQ_INT(ns_dataset_ntransitions(&c), kept_applicable);
            /* the DAG states come first and are the optimal build's; the
             * off-plan successors follow, with h* not computed */
            CHECK(unknown > 0);
            CHECK_EQ_INT(ns_dataset_nstates(&c), optimal_states + unknown);
        }
        ns_domain_free(&d);
        ns_dataset_free(&a);
        ns_dataset_free(&b);
        ns_dataset_free(&c);
    }
    ns_test_free_paths(paths, 3);
}

/* Truncating or flipping a byte of any file gives an error naming it. */
static void test_corruption(void)
{
    char d1[300];
    snprintf(d1, sizeof d1, "%s/ds1", tmpdir);
    for (int i = 0; i < NFILES; i++) {
        char f[400];
        snprintf(f, sizeof f, "%s/%s", d1, FILES[i]);
        char *orig;
        size_t n;
        ns_error e;
        CHECK(ns_read_file(f, &orig, &n, &e) == NS_OK);
        for (int variant = 0; variant < 2; variant++) {
            if (variant == 0) CHECK(ns_write_file_atomic(f, orig, n / 2, &e) == NS_OK); /* truncated */
            else {
                char *bad = malloc(n);
                memcpy(bad, orig, n);
                bad[n - 2] ^= 0x5a; /* corrupted near the end */
                CHECK(ns_write_file_atomic(f, bad, n, &e) == NS_OK);
                free(bad);
            }
            ns_dataset ds;
            ns_status st = ns_dataset_load(&ds, d1, &e);
            if (st == NS_OK) {
                printf("  %s variant %d loaded\n", FILES[i], variant);
                ns_dataset_free(&ds);
            }
            CHECK(st != NS_OK);
            CHECK(strstr(e.file, FILES[i]) != NULL || strstr(e.msg, FILES[i]) != NULL);
        }
        CHECK(ns_write_file_atomic(f, orig, n, &e) == NS_OK);
        free(orig);
    }
    ns_dataset ds;
    ns_error e;
    CHECK(ns_dataset_load(&ds, d1, &e) == NS_OK);
    ns_dataset_free(&ds);
    char missing[300];
    snprintf(missing, sizeof missing, "%s/nope", tmpdir);
    CHECK(ns_dataset_load(&ds, missing, &e) == NS_ERR_IO);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ns_test_dataset_%ld", (long)getpid());
    NS_RUN(test_build_roundtrip_determinism);
    NS_RUN(test_corruption);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) printf("could not remove %s\n", tmpdir);
    return ns_test_summary("test_dataset");
}
