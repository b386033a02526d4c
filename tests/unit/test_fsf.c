/* test_fsf.c — fixed-size factored encodings: bit-exact agreement with the
 * first paper's golden FSF vectors (shared benchmarks, skipped when absent),
 * the slot rules on a hand-written state, config files and errors. */
#include <dirent.h>
#include <unistd.h>
#include "nextstate/encode/fsf.h"
#include "nextstate/util/npy.h"
#include "nextstate/core/plan.h"
#include "seeda.h"
#include "test.h"

static char tmpdir[256];

static void test_golden_vectors(void)
{
    const char *B = ns_test_benchmarks();
    int total = 0, total_bad = 0, total_goal_bad = 0, errors = 0;
    for (int di = 0; di < 4; di++) {
        char cp[600], dp[600];
        snprintf(cp, sizeof cp, "%s/seedA/encodings/models/%s_fsf_config.json", B, DOMS[di]);
        snprintf(dp, sizeof dp, "%s/seedA/pddl/%s/domain.pddl", B, DOMS[di]);
        ns_fsf_config cfg;
        ns_error e;
        if (ns_fsf_config_load(&cfg, cp, &e) != NS_OK) {
            printf("  %s: %s\n", cp, e.msg);
            errors++;
            continue;
        }
        for (int si = 0; si < 4; si++) {
            char gdir[700];
            snprintf(gdir, sizeof gdir, "%s/seedA/encodings/fsf/%s/%s", B, DOMS[di], SPLITS[si]);
            int n;
            char **stems = list_stems(gdir, ".npy", "_goal", &n);
            if (!n) continue;
            int bad = 0, gbad = 0, nvec = 0;
            float *row = malloc(sizeof(float) * (size_t)ns_fsf_dim(&cfg));
            for (int i = 0; i < n; i++) {
                char pp[900], pl[900], gf[900], gg[900];
                snprintf(pp, sizeof pp, "%s/seedA/pddl/%s/%s/%s.pddl", B, DOMS[di], SPLITS[si], stems[i]);
                snprintf(pl, sizeof pl, "%s/seedA/plans/%s/%s/%s.plan", B, DOMS[di], SPLITS[si], stems[i]);
                snprintf(gf, sizeof gf, "%s/%s.npy", gdir, stems[i]);
                snprintf(gg, sizeof gg, "%s/%s_goal.npy", gdir, stems[i]);
                loaded L;
                ns_array gold = {0}, goal = {0};
                ns_fsf_encoder enc = {0};
                if (!load_traj(&L, dp, pp, pl) || ns_npy_read(gf, &gold, NULL, &e) != NS_OK ||
                    ns_npy_read(gg, &goal, NULL, &e) != NS_OK || ns_fsf_encoder_init(&enc, &cfg, &L.t, &e) != NS_OK) {
                    printf("  %s: %s\n", pp, e.msg);
                    errors++;
                } else if (gold.ndim != 2 || gold.shape[0] != L.nstates || gold.shape[1] != enc.width) {
                    printf("  %s: golden shape mismatch\n", gf);
                    errors++;
                } else {
                    for (int s = 0; s < L.nstates; s++) {
                        ns_fsf_encode(&enc, L.states + (size_t)s * (size_t)L.t.nwords, row);
                        bad += !row_equal(&gold, s, row, enc.width);
                        nvec++;
                    }
                    ns_fsf_encode_goal(&enc, row);
                    gbad += goal.shape[0] != enc.width || !row_equal(&goal, 0, row, enc.width);
                }
                ns_fsf_encoder_free(&enc);
                ns_array_free(&gold);
                ns_array_free(&goal);
                free_traj(&L);
                free(stems[i]);
            }
            free(stems);
            free(row);
            printf("  %-25s %-19s %4d problems %5d vectors: %d mismatching, goal %d\n", DOMS[di], SPLITS[si], n, nvec,
                   bad, gbad);
            total += nvec;
            total_bad += bad;
            total_goal_bad += gbad;
        }
    }
    printf("  FSF golden: %d vectors, %d mismatching, %d goal mismatching, %d errors\n", total, total_bad,
           total_goal_bad, errors);
    CHECK(total > 0);
    CHECK_EQ_INT(total_bad, 0);
    CHECK_EQ_INT(total_goal_bad, 0);
    CHECK_EQ_INT(errors, 0);
}

/* Gripper by hand: object order by bytes, carry writes both slots. */
static void test_gripper_rules(void)
{
    const char *dom =
        "(define (domain gripper-strips) (:predicates (room ?r) (ball ?b) (gripper ?g) (at-robby ?r) (at ?b ?r)"
        " (free ?g) (carry ?o ?g))"
        " (:action pick :parameters (?obj ?room ?gripper) :precondition (and (ball ?obj) (room ?room)"
        " (gripper ?gripper) (at ?obj ?room) (at-robby ?room) (free ?gripper))"
        " :effect (and (carry ?obj ?gripper) (not (at ?obj ?room)) (not (free ?gripper))))"
        " (:action move :parameters (?from ?to) :precondition (and (room ?from) (room ?to) (at-robby ?from))"
        " :effect (and (at-robby ?to) (not (at-robby ?from)))))";
    const char *prob = "(define (problem p) (:domain gripper-strips) (:objects rooma roomb ball10 ball2 left)"
                       " (:init (room rooma) (room roomb) (ball ball10) (ball ball2) (gripper left) (free left)"
                       " (at-robby rooma) (at ball10 rooma) (at ball2 roomb))"
                       " (:goal (and (at ball10 roomb))))";
    ns_domain d;
    ns_problem p;
    ns_task t;
    ns_error e;
    CHECK(ns_domain_parse(&d, dom, "d.pddl", &e) == NS_OK);
    CHECK(ns_problem_parse(&p, &d, prob, "p.pddl", &e) == NS_OK);
    CHECK(ns_task_ground(&t, &d, &p, &e) == NS_OK);
    ns_fsf_config c = {8, NS_FSF_AUTO};
    ns_fsf_encoder enc;
    CHECK(ns_fsf_encoder_init(&enc, &c, &t, &e) == NS_OK);
    CHECK_EQ_INT(enc.domain, NS_FSF_GRIPPER);
    /* slots: ball10 1, ball2 2, left 3, rooma 4, roomb 5 */
    float row[9];
    ns_fsf_encode(&enc, t.init, row);
    float want0[9] = {4, 4, 5, 0, 0, 0, -99, -99, -99};
    CHECK(memcmp(row, want0, sizeof row) == 0);
    int args[3] = {ns_problem_find_object(&p, "ball10"), ns_problem_find_object(&p, "rooma"),
                   ns_problem_find_object(&p, "left")};
    int op = ns_task_find_op(&t, ns_domain_find_action(&d, "pick"), args, 3);
    CHECK(op >= 0);
    ns_word s[4] = {0};
    ns_task_apply(&t, op, t.init, s);
    ns_fsf_encode(&enc, s, row);
    float want1[9] = {4, -3, 5, 1, 0, 0, -99, -99, -99};
    CHECK(memcmp(row, want1, sizeof row) == 0);
    ns_fsf_encode_goal(&enc, row);
    float wantg[9] = {-10, 5, -10, -10, -10, -10, -10, -10, -10};
    CHECK(memcmp(row, wantg, sizeof row) == 0);
    ns_fsf_encoder_free(&enc);
    /* too many objects */
    ns_fsf_config small = {4, NS_FSF_GRIPPER};
    CHECK(ns_fsf_encoder_init(&enc, &small, &t, &e) == NS_ERR_INPUT);
    CHECK(strstr(e.msg, "max_objects 4") != NULL);
    ns_task_free(&t);
    ns_problem_free(&p);
    ns_domain_free(&d);
}

static void test_config(void)
{
    ns_fsf_config c;
    ns_error e;
    const char *ok = "{\"max_objects\": 17}";
    CHECK(ns_fsf_config_parse(&c, ok, strlen(ok), "c.json", &e) == NS_OK);
    CHECK_EQ_INT(c.max_objects, 17);
    CHECK_EQ_INT(c.domain, NS_FSF_AUTO);
    CHECK_EQ_INT(ns_fsf_dim(&c), 18);
    const char *bad[] = {"{\"max_objects\": 17", "{\"max_objects\": -1}", "{}", "[1]",
                         "{\"max_objects\": 3, \"domain\": \"sokoban\"}"};
    for (int i = 0; i < 5; i++) {
        CHECK(ns_fsf_config_parse(&c, bad[i], strlen(bad[i]), "c.json", &e) == NS_ERR_INPUT);
        CHECK(!strcmp(e.file, "c.json"));
    }
    char path[400];
    snprintf(path, sizeof path, "%s/cfg.json", tmpdir);
    ns_fsf_config w = {46, NS_FSF_GRIPPER}, r;
    CHECK(ns_fsf_config_save(&w, path, &e) == NS_OK);
    CHECK(ns_fsf_config_load(&r, path, &e) == NS_OK);
    CHECK(r.max_objects == 46 && r.domain == NS_FSF_GRIPPER);
    CHECK_EQ_INT(ns_fsf_domain_parse("visitall-from-everywhere"), NS_FSF_VISITALL);
    /* a domain without rules */
    ns_domain d;
    ns_problem p;
    ns_task t;
    CHECK(ns_domain_read(&d, "domains/ferry/domain.pddl", &e) == NS_OK);
    CHECK_EQ_INT(ns_fsf_domain_detect(&d), NS_FSF_AUTO);
    const char *prob = "(define (problem f) (:domain ferry) (:objects l0 l1 - location c0 - car)"
                       " (:init (at-ferry l0) (at c0 l0) (empty-ferry)) (:goal (and (at c0 l1))))";
    if (ns_problem_parse(&p, &d, prob, "f.pddl", &e) == NS_OK && ns_task_ground(&t, &d, &p, &e) == NS_OK) {
        ns_fsf_config any = {10, NS_FSF_AUTO};
        ns_fsf_encoder enc;
        CHECK(ns_fsf_encoder_init(&enc, &any, &t, &e) == NS_ERR_UNSUPPORTED);
        ns_task_free(&t);
        ns_problem_free(&p);
    }
    ns_domain_free(&d);
    /* the project's own blocksworld, logistics and visitall domains are recognised */
    const char *own[] = {"domains/logistics/domain.pddl", "domains/visitall/domain.pddl"};
    ns_fsf_domain want[] = {NS_FSF_LOGISTICS, NS_FSF_VISITALL};
    for (int i = 0; i < 2; i++) {
        if (ns_domain_read(&d, own[i], &e) != NS_OK) continue;
        CHECK_EQ_INT(ns_fsf_domain_detect(&d), want[i]);
        ns_domain_free(&d);
    }
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ns_test_fsf_%d", (int)getpid());
    ns_error e;
    ns_mkdir_p(tmpdir, &e);
    NS_RUN(test_config);
    NS_RUN(test_gripper_rules);
    if (ns_test_benchmarks()) NS_RUN(test_golden_vectors);
    else NS_SKIP(test_golden_vectors, "shared benchmarks absent");
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) printf("  could not remove %s\n", tmpdir);
    return ns_test_summary("test_fsf");
}
