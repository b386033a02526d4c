/* test_render.c — natural-language renderings (render.h):
 * - the exact prompt of a small ferry problem with the shipped template;
 * - the same prompt with its state clauses shuffled (seeded; same clause set);
 * - ", and" joining for 0/1/2/3 clauses, context-only, literal form, bitsets;
 * - counts (singular/plural, "A and B", "A, B, and C", unary static keys);
 * - negative goal literals (default and `not:` forms), NAME/ARITY templates;
 * - errors: missing predicate template (names the predicate), malformed
 *   template lines (path:line:col), bad atom ids, ambiguous/absent templates;
 * - every shipped domain's predicates have templates;
 * - with ../shared/benchmarks: every ACPBench problem of the 11 domains and
 *   every seedA problem renders its initial state with no '{' left and no
 *   empty clause. */
#include "test.h"

#include <dirent.h>
#include <unistd.h>

#include "nextstate/core/pddl.h"
#include "nextstate/data/render.h"
#include "nextstate/core/task.h"

/* ------------------------------------------------------------ the fixture */

/* A ferry problem by names: cars c0 c1 c2, locations l0 l1; atom ids in the
 * order the grounder produces them. */
static const char *const F_OBJ[] = {"c0", "c1", "c2", "l0", "l1"};
static const char *const F_TYP[] = {"car", "car", "car", "location", "location"};
static const char *const F_ATOMS[] = {
    "(at c0 l0)",    "(at c0 l1)",    "(at c1 l0)",    "(at c1 l1)", "(at c2 l0)", "(at c2 l1)",
    "(at-ferry l0)", "(at-ferry l1)", "(empty-ferry)", "(on c0)",    "(on c1)",    "(on c2)"};
static const char *const F_STAT[] = {"(not-eq l0 l1)", "(not-eq l1 l0)"};
static const char *const F_GOAL[] = {"(at c0 l1)", "(at c1 l1)", "(at c2 l0)"};

static ns_render_problem ferry_problem(void)
{
    return (ns_render_problem){5, F_OBJ, F_TYP, 12, F_ATOMS, 2, F_STAT, 3, F_GOAL};
}

static const char FERRY_DESC[] =
    "This is a ferry domain, where the task is to transport cars from their start to their "
    "goal locations using a ferry. Each location is accessible by ferry from each other "
    "location, cars can be boarded onto and debarked from the ferry, and the ferry carries at "
    "most one car at a time.";

static ns_render *load_shipped(const char *domain)
{
    ns_render *r = NULL;
    ns_error err;
    ns_error_clear(&err);
    if (ns_render_find(&r, "domains", domain, &err) != NS_OK) {
        char msg[1024];
        ns_error_format(&err, msg, sizeof msg);
        printf("  find %s: %s\n", domain, msg);
    }
    return r;
}

/* A small inline template (exact texts independent of the shipped files). */
static const char MINI[] =
    "# mini ferry\n"
    "domains: ferry, ferry-b\n"
    "description: Ferry.\n"
    "count: car = {n} car|{n} cars\n"
    "count: location = {n} location|{n} locations\n"
    "atom: at = Car {0} is at location {1}\n"
    "atom: at-ferry = The ferry is at {0}\n"
    "atom: empty-ferry = The ferry is empty\n"
    "atom: on = Car {0} is on the ferry\n"
    "atom: not-eq = {0} and {1} are different locations\n";

static ns_render *parse_ok(const char *text)
{
    ns_render *r = NULL;
    ns_error err;
    ns_error_clear(&err);
    if (ns_render_parse(&r, text, "mini.txt", &err) != NS_OK) {
        char msg[1024];
        ns_error_format(&err, msg, sizeof msg);
        printf("  parse: %s\n", msg);
    }
    return r;
}

/* ------------------------------------------------------------------ tests */

static void test_ferry_prompt_exact(void)
{
    ns_render *r = load_shipped("ferry");
    CHECK(r != NULL);
    if (!r) return;
    CHECK(ns_render_applies_to(r, "FERRY"));
    ns_render_problem p = ferry_problem();
    int s[] = {0, 3, 5, 6, 8};
    ns_buf b;
    ns_buf_init(&b);
    ns_error err;
    CHECK_EQ_INT(ns_render_prompt(r, &p, s, 5, &b, &err), NS_OK);
    char want[4096];
    snprintf(want, sizeof want,
             "### PROBLEM DESCRIPTION ###\n%s There are 3 cars and 2 locations.\n\n"
             "### CURRENT STATE ###\n"
             "Car c0 is at location l0, Car c1 is at location l1, Car c2 is at location l1, "
             "The ferry is at l0, and The ferry is empty\n\n"
             "### GOAL DESCRIPTION ###\n"
             "Car c0 is at location l1, Car c1 is at location l1, and Car c2 is at location l0",
             FERRY_DESC);
    CHECK_STR(b.data, want);

    /* the prepared path gives the same bytes, and its pieces */
    ns_render_prep *pp;
    CHECK_EQ_INT(ns_render_prep_new(&pp, r, &p, &err), NS_OK);
    ns_buf c;
    ns_buf_init(&c);
    CHECK_EQ_INT(ns_render_prep_prompt(pp, s, 5, &c, &err), NS_OK);
    CHECK_STR(c.data, want);
    CHECK_STR(ns_render_prep_clause(pp, 10), "Car c1 is on the ferry");
    CHECK_STR(ns_render_prep_static_clause(pp, 1), "l1 and l0 are different locations");
    CHECK_EQ_INT(ns_render_prep_natoms(pp), 12);
    /* the layouts: paper = the prompt above; state-first = the same blocks, the state block first */
    uint64_t bits[1] = {(1u << 0) | (1u << 3) | (1u << 5) | (1u << 6) | (1u << 8)};
    c.len = 0;
    ns_render_prep_prompt_layout_bits(pp, bits, NS_PROMPT_PAPER, &c);
    CHECK_STR(c.data, want);
    c.len = 0;
    ns_render_prep_prompt_layout_bits(pp, bits, NS_PROMPT_STATE_FIRST, &c);
    snprintf(want, sizeof want,
             "### CURRENT STATE ###\n"
             "Car c0 is at location l0, Car c1 is at location l1, Car c2 is at location l1, "
             "The ferry is at l0, and The ferry is empty\n\n"
             "### PROBLEM DESCRIPTION ###\n%s There are 3 cars and 2 locations.\n\n"
             "### GOAL DESCRIPTION ###\n"
             "Car c0 is at location l1, Car c1 is at location l1, and Car c2 is at location l0",
             FERRY_DESC);
    CHECK_STR(c.data, want);
    CHECK_EQ_INT(ns_prompt_layout_parse("state-first"), NS_PROMPT_STATE_FIRST);
    CHECK_EQ_INT(ns_prompt_layout_parse("paper"), NS_PROMPT_PAPER);
    CHECK_EQ_INT(ns_prompt_layout_parse("goal-first"), -1);
    CHECK_STR(ns_prompt_layout_name(NS_PROMPT_STATE_FIRST), "state-first");
    ns_render_prep_free(pp);
    ns_buf_free(&c);
    ns_buf_free(&b);
    ns_render_free(r);
}

/* Shuffled clause order (appendix N): the same head and tail bytes, the same
 * clauses as a set joined "A, B, …, and Z", deterministic per seed, the
 * canonical order for some seeds and another for most (5 clauses: 120
 * orders), both layouts. */
static void test_shuffled_order(void)
{
    ns_render *r = load_shipped("ferry");
    CHECK(r != NULL);
    if (!r) return;
    ns_render_problem p = ferry_problem();
    ns_render_prep *pp;
    ns_error err;
    CHECK_EQ_INT(ns_render_prep_new(&pp, r, &p, &err), NS_OK);
    const char *cl[5] = {"Car c0 is at location l0", "Car c1 is at location l1", "Car c2 is at location l1",
                         "The ferry is at l0", "The ferry is empty"};
    uint64_t bits[1] = {(1u << 0) | (1u << 3) | (1u << 5) | (1u << 6) | (1u << 8)};
    ns_buf canon, b, again;
    ns_buf_init(&canon), ns_buf_init(&b), ns_buf_init(&again);
    for (int lay = 0; lay < 2; lay++) {
        canon.len = 0;
        ns_render_prep_prompt_layout_bits(pp, bits, (ns_prompt_layout)lay, &canon);
        const char *hdr = "### CURRENT STATE ###\n";
        const char *cs = strstr(canon.data, hdr) + strlen(hdr);
        size_t head = (size_t)(cs - canon.data), tail = strlen(strstr(cs, "\n\n"));
        int differ = 0;
        for (uint64_t seed = 0; seed < 20; seed++) {
            b.len = 0, again.len = 0;
            ns_render_prep_prompt_shuffled_bits(pp, bits, (ns_prompt_layout)lay, seed, &b);
            ns_render_prep_prompt_shuffled_bits(pp, bits, (ns_prompt_layout)lay, seed, &again);
            CHECK_STR(b.data, again.data);
            CHECK_EQ_INT(b.len, canon.len); /* same clauses, same separators */
            CHECK(!strncmp(b.data, canon.data, head));
            CHECK_STR(b.data + b.len - tail, canon.data + canon.len - tail);
            /* the state block: 5 clauses, each once, ", and " before the last */
            char block[512];
            size_t bl = b.len - head - tail;
            CHECK(bl < sizeof block);
            memcpy(block, b.data + head, bl);
            block[bl] = 0;
            int seen[5] = {0};
            char *q = block;
            for (int i = 0; i < 5; i++) {
                const char *sep = i == 4 ? "" : i == 3 ? ", and " : ", ";
                int hit = -1;
                for (int c = 0; c < 5; c++) {
                    size_t n = strlen(cl[c]);
                    if (!strncmp(q, cl[c], n) && !strncmp(q + n, sep, strlen(sep))) hit = c;
                }
                CHECK(hit >= 0);
                if (hit < 0) break;
                seen[hit]++;
                q += strlen(cl[hit]) + strlen(sep);
            }
            for (int c = 0; c < 5; c++) CHECK_EQ_INT(seen[c], 1);
            differ += strcmp(b.data, canon.data) != 0;
        }
        CHECK(differ >= 15);
    }
    ns_buf_free(&canon), ns_buf_free(&b), ns_buf_free(&again);
    ns_render_prep_free(pp);
    ns_render_free(r);
}

static void test_join(void)
{
    ns_render *r = parse_ok(MINI);
    CHECK(r != NULL);
    if (!r) return;
    ns_render_problem p = ferry_problem();
    ns_render_prep *pp;
    ns_error err;
    CHECK_EQ_INT(ns_render_prep_new(&pp, r, &p, &err), NS_OK);
    struct { int ids[3], n; const char *want; } cases[] = {
        {{0}, 0, ""},
        {{9}, 1, "Car c0 is on the ferry"},
        {{2, 7}, 2, "Car c1 is at location l0, and The ferry is at l1"},
        {{1, 2, 8}, 3, "Car c0 is at location l1, Car c1 is at location l0, and The ferry is empty"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ns_buf b;
        ns_buf_init(&b);
        CHECK_EQ_INT(ns_render_prep_state(pp, cases[i].ids, cases[i].n, &b, &err), NS_OK);
        CHECK_STR(b.data, cases[i].want);
        ns_buf_free(&b);
        /* one-shot version */
        ns_buf_init(&b);
        CHECK_EQ_INT(ns_render_state_clauses(r, &p, cases[i].ids, cases[i].n, &b, &err), NS_OK);
        CHECK_STR(b.data, cases[i].want);
        ns_buf_free(&b);
    }
    ns_render_prep_free(pp);
    ns_render_free(r);
}

static void test_context_only(void)
{
    ns_render *r = parse_ok(MINI);
    CHECK(r != NULL);
    if (!r) return;
    ns_render_problem p = ferry_problem();
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_puts(&b, "X"); /* output is appended */
    ns_error err;
    CHECK_EQ_INT(ns_render_context_only(r, &p, &b, &err), NS_OK);
    CHECK_STR(b.data, "X### PROBLEM DESCRIPTION ###\nFerry. There are 3 cars and 2 locations.\n\n"
                      "### CURRENT STATE ###\n\n\n### GOAL DESCRIPTION ###\n"
                      "Car c0 is at location l1, Car c1 is at location l1, and Car c2 is at "
                      "location l0");
    /* = the prompt of the empty state */
    ns_buf e;
    ns_buf_init(&e);
    ns_buf_puts(&e, "X");
    CHECK_EQ_INT(ns_render_prompt(r, &p, NULL, 0, &e, &err), NS_OK);
    CHECK_STR(e.data, b.data);
    ns_buf_free(&e);
    ns_buf_free(&b);
    ns_render_free(r);
}

static void test_literals(void)
{
    ns_render_problem p = ferry_problem();
    int s[] = {0, 3, 6, 8, 11};
    ns_buf b;
    ns_buf_init(&b);
    ns_error err;
    CHECK_EQ_INT(ns_render_literals(&p, s, 5, &b, &err), NS_OK);
    CHECK_STR(b.data, "(at c0 l0) (at c1 l1) (at-ferry l0) (empty-ferry) (on c2)");
    b.len = 0;
    b.data[0] = '\0';
    CHECK_EQ_INT(ns_render_literals(&p, s, 0, &b, &err), NS_OK);
    CHECK_STR(b.data, "");
    int bad[] = {0, 12};
    CHECK_EQ_INT(ns_render_literals(&p, bad, 2, &b, &err), NS_ERR_INPUT);
    CHECK_STR(b.data, "");
    ns_buf_free(&b);
}

static void test_bits_and_ids(void)
{
    ns_render *r = parse_ok(MINI);
    CHECK(r != NULL);
    if (!r) return;
    ns_render_problem p = ferry_problem();
    ns_render_prep *pp;
    ns_error err;
    CHECK_EQ_INT(ns_render_prep_new(&pp, r, &p, &err), NS_OK);
    uint64_t bits[1] = {(1u << 1) | (1u << 4) | (1u << 10) | (1u << 7) | ((uint64_t)1 << 40)};
    int ids[12];
    int n = ns_render_true_atoms(bits, 12, ids);
    CHECK_EQ_INT(n, 4); /* bit 40 is beyond natoms */
    ns_buf a, b;
    ns_buf_init(&a);
    ns_buf_init(&b);
    CHECK_EQ_INT(ns_render_prep_prompt(pp, ids, n, &a, &err), NS_OK);
    ns_render_prep_prompt_bits(pp, bits, &b);
    CHECK_STR(a.data, b.data);
    CHECK(strstr(a.data, "Car c1 is on the ferry\n\n###") != NULL);
    a.len = 0;
    ns_render_prep_state_bits(pp, bits, &a);
    CHECK_STR(a.data, "Car c0 is at location l1, Car c2 is at location l0, The ferry is at "
                      "l1, and Car c1 is on the ferry");
    /* bad ids: out of range, not ascending, duplicate; nothing appended */
    a.len = 0;
    a.data[0] = '\0';
    int bad1[] = {3, 12}, bad2[] = {5, 2}, bad3[] = {2, 2}, bad4[] = {-1};
    CHECK_EQ_INT(ns_render_prep_prompt(pp, bad1, 2, &a, &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "out of range") != NULL);
    CHECK_EQ_INT(ns_render_prep_prompt(pp, bad2, 2, &a, &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "ascending") != NULL);
    CHECK_EQ_INT(ns_render_prep_state(pp, bad3, 2, &a, &err), NS_ERR_INPUT);
    CHECK_EQ_INT(ns_render_prep_state(pp, bad4, 1, &a, &err), NS_ERR_INPUT);
    CHECK_EQ_INT((long long)a.len, 0);
    ns_buf_free(&a);
    ns_buf_free(&b);
    ns_render_prep_free(pp);
    ns_render_free(r);
}

static void test_counts(void)
{
    ns_error err;
    ns_render *r = parse_ok(MINI);
    CHECK(r != NULL);
    if (!r) return;
    /* one car, one location: singular, "There is" */
    static const char *const o1[] = {"c0", "l0"}, *const t1[] = {"car", "location"};
    static const char *const a1[] = {"(at c0 l0)"};
    ns_render_problem p1 = {2, o1, t1, 1, a1, 0, NULL, 0, NULL};
    ns_render_prep *pp;
    CHECK_EQ_INT(ns_render_prep_new(&pp, r, &p1, &err), NS_OK);
    CHECK_STR(ns_render_prep_problem_text(pp), "Ferry. There is 1 car and 1 location.");
    CHECK_STR(ns_render_prep_goal_text(pp), "");
    ns_render_prep_free(pp);
    /* only locations: the car count is left out */
    static const char *const t2[] = {"location", "location"};
    ns_render_problem p2 = {2, o1, t2, 0, NULL, 0, NULL, 0, NULL};
    CHECK_EQ_INT(ns_render_prep_new(&pp, r, &p2, &err), NS_OK);
    CHECK_STR(ns_render_prep_problem_text(pp), "Ferry. There are 2 locations.");
    ns_render_prep_free(pp);
    /* no counted object at all: no sentence */
    static const char *const t3[] = {"object", "object"};
    ns_render_problem p3 = {2, o1, t3, 0, NULL, 0, NULL, 0, NULL};
    CHECK_EQ_INT(ns_render_prep_new(&pp, r, &p3, &err), NS_OK);
    CHECK_STR(ns_render_prep_problem_text(pp), "Ferry.");
    ns_render_prep_free(pp);
    ns_render_free(r);

    /* three kinds, keyed by unary static predicates (untyped, seedA-style),
     * an object counted once even when both its type and a static match */
    r = parse_ok("domains: g\ndescription: G.\n"
                 "count: room = {n} room|{n} rooms\ncount: ball = {n} ball|{n} balls\n"
                 "count: gripper = one gripper|{n} grippers\n"
                 "atom: room = {0} is a room\natom: ball = {0} is a ball\n"
                 "atom: gripper = {0} is a gripper\natom: at = Ball {0} is in {1}\n");
    CHECK(r != NULL);
    if (!r) return;
    static const char *const o4[] = {"ra", "rb", "b1", "b2", "b3", "left"};
    static const char *const t4[] = {"room", "object", "object", "object", "object", "object"};
    static const char *const a4[] = {"(at b1 ra)"};
    static const char *const s4[] = {"(room ra)", "(room rb)", "(ball b1)", "(ball b2)",
                                     "(ball b3)", "(gripper left)"};
    ns_render_problem p4 = {6, o4, t4, 1, a4, 6, s4, 0, NULL};
    CHECK_EQ_INT(ns_render_prep_new(&pp, r, &p4, &err), NS_OK);
    CHECK_STR(ns_render_prep_problem_text(pp), "G. There are 2 rooms, 3 balls, and one gripper.");
    CHECK_STR(ns_render_prep_static_clause(pp, 5), "left is a gripper");
    ns_render_prep_free(pp);
    ns_render_free(r);
}

static void test_goal_negative(void)
{
    ns_error err;
    ns_render *r = parse_ok(MINI);
    CHECK(r != NULL);
    if (!r) return;
    static const char *const g[] = {"(at c0 l1)", "(not (on c2))", "( not(at-ferry l0) )",
                                    "(not (not-eq l0 l1))"};
    ns_render_problem p = ferry_problem();
    p.goal = g;
    p.ngoal = 4;
    ns_render_prep *pp;
    CHECK_EQ_INT(ns_render_prep_new(&pp, r, &p, &err), NS_OK);
    CHECK_STR(ns_render_prep_goal_text(pp),
              "Car c0 is at location l1, It is not the case that car c2 is on the ferry, It is "
              "not the case that the ferry is at l0, and It is not the case that l0 and l1 are "
              "different locations");
    ns_render_prep_free(pp);
    ns_render_free(r);
    /* a `not:` template wins */
    char text[2048];
    snprintf(text, sizeof text, "%snot: on = Car {0} is not on the ferry\n", MINI);
    r = parse_ok(text);
    CHECK(r != NULL);
    if (!r) return;
    p.ngoal = 2;
    CHECK_EQ_INT(ns_render_prep_new(&pp, r, &p, &err), NS_OK);
    CHECK_STR(ns_render_prep_goal_text(pp), "Car c0 is at location l1, and Car c2 is not on the ferry");
    ns_render_prep_free(pp);
    /* one goal literal: just its clause */
    p.ngoal = 1;
    CHECK_EQ_INT(ns_render_prep_new(&pp, r, &p, &err), NS_OK);
    CHECK_STR(ns_render_prep_goal_text(pp), "Car c0 is at location l1");
    ns_render_prep_free(pp);
    ns_render_free(r);
}

static void test_arity_qualified(void)
{
    ns_render *r = parse_ok("domains: gripper-strips\ndescription: G.\n"
                            "atom: at-robby/2 = Robot {0} is at room {1}\n"
                            "atom: at-robby/1 = The robot is at room {0}\n"
                            "atom: free = Gripper {0} is free\n"
                            "atom: free/2 = Gripper {1} of robot {0} is free\n");
    CHECK(r != NULL);
    if (!r) return;
    CHECK(ns_render_covers(r, "at-robby", 1));
    CHECK(ns_render_covers(r, "AT-ROBBY", 2));
    CHECK(!ns_render_covers(r, "at-robby", 3));
    CHECK(ns_render_covers(r, "free", 1));
    CHECK(!ns_render_covers(r, "free", 0)); /* {0} needs an argument */
    CHECK(!ns_render_covers(r, "carry", 2));
    static const char *const o[] = {"r", "a", "g"}, *const t[] = {"object", "object", "object"};
    static const char *const a[] = {"(at-robby a)", "(at-robby r a)", "(free g)", "(free r g)"};
    ns_render_problem p = {3, o, t, 4, a, 0, NULL, 0, NULL};
    ns_render_prep *pp;
    ns_error err;
    CHECK_EQ_INT(ns_render_prep_new(&pp, r, &p, &err), NS_OK);
    CHECK_STR(ns_render_prep_clause(pp, 0), "The robot is at room a");
    CHECK_STR(ns_render_prep_clause(pp, 1), "Robot r is at room a");
    CHECK_STR(ns_render_prep_clause(pp, 2), "Gripper g is free");
    CHECK_STR(ns_render_prep_clause(pp, 3), "Gripper g of robot r is free");
    ns_render_prep_free(pp);
    /* no template for arity 3 */
    static const char *const a2[] = {"(at-robby r a g)"};
    ns_render_problem p2 = {3, o, t, 1, a2, 0, NULL, 0, NULL};
    CHECK_EQ_INT(ns_render_prep_new(&pp, r, &p2, &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "'at-robby' with 3 arguments") != NULL);
    ns_render_free(r);
}

static void test_missing_template(void)
{
    /* MINI without `on`: preparing a problem that uses it fails and names it,
     * whether the atom is fluent, static or a goal literal */
    const char *text = "domains: ferry\ndescription: F.\n"
                       "atom: at = Car {0} is at location {1}\n"
                       "atom: at-ferry = The ferry is at {0}\n"
                       "atom: empty-ferry = The ferry is empty\n"
                       "atom: not-eq = {0} and {1} are different locations\n";
    ns_render *r = parse_ok(text);
    CHECK(r != NULL);
    if (!r) return;
    ns_render_problem p = ferry_problem();
    ns_render_prep *pp = (ns_render_prep *)1;
    ns_error err;
    ns_error_clear(&err);
    CHECK_EQ_INT(ns_render_prep_new(&pp, r, &p, &err), NS_ERR_INPUT);
    CHECK(pp == NULL);
    CHECK(strstr(err.msg, "predicate 'on'") != NULL);
    CHECK(strstr(err.msg, "(on c0)") != NULL);
    CHECK_STR(err.file, "mini.txt");
    ns_buf b;
    ns_buf_init(&b);
    int s[] = {0};
    CHECK_EQ_INT(ns_render_prompt(r, &p, s, 1, &b, &err), NS_ERR_INPUT);
    CHECK_STR(b.data, "");
    ns_buf_free(&b);
    /* a static predicate without template */
    static const char *const st[] = {"(road l0 l1)"};
    ns_render_problem q = {5, F_OBJ, F_TYP, 6, F_ATOMS, 1, st, 0, NULL};
    CHECK_EQ_INT(ns_render_prep_new(&pp, r, &q, &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "predicate 'road'") != NULL);
    /* a goal literal without template */
    static const char *const g[] = {"(not (on c1))"};
    ns_render_problem q2 = {5, F_OBJ, F_TYP, 6, F_ATOMS, 0, NULL, 1, g};
    CHECK_EQ_INT(ns_render_prep_new(&pp, r, &q2, &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "predicate 'on'") != NULL);
    /* a placeholder beyond the atom's arguments */
    static const char *const a3[] = {"(at c0)"};
    ns_render_problem q3 = {5, F_OBJ, F_TYP, 1, a3, 0, NULL, 0, NULL};
    CHECK_EQ_INT(ns_render_prep_new(&pp, r, &q3, &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "{1}") != NULL);
    /* malformed atom texts */
    static const char *const bad[] = {"at c0 l0", "(at c0 l0", "(at c0 l0) x", "()", "(not (on c0))"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ns_render_problem q4 = {5, F_OBJ, F_TYP, 1, &bad[i], 0, NULL, 0, NULL};
        CHECK_EQ_INT(ns_render_prep_new(&pp, r, &q4, &err), NS_ERR_INPUT);
        CHECK(strstr(err.msg, "malformed") != NULL);
    }
    ns_render_free(r);
}

static void test_malformed_lines(void)
{
    struct { const char *text; int line, col; const char *msg; } cases[] = {
        {"domains: x\ndescription: D\nfoo: bar\n", 3, 1, "unknown directive 'foo:'"},
        {"domains: x\ndescription: D\natom at = A\n", 3, 5, "expected a directive"},
        {"domains: x\ndescription: D\natom: at A {0}\n", 3, 10, "expected '='"},
        {"domains: x\ndescription: D\natom: = A\n", 3, 7, "expected a name"},
        {"domains: x\ndescription: D\natom: at =   \n", 3, 11, "expected a text"},
        {"domains: x\ndescription: D\n  atom: at = Car {0 is at {1}\n", 3, 18, "malformed placeholder"},
        {"domains: x\ndescription: D\natom: at = Car {x}\n", 3, 16, "malformed placeholder"},
        {"domains: x\ndescription: D\natom: at = Car } here\n", 3, 16, "unmatched '}'"},
        {"domains: x\ndescription: D\natom: at/2 = {0} at {2}\n", 3, 21, "{2} with arity 2"},
        {"domains: x\ndescription: D\natom: at/x = A\n", 3, 10, "expected an arity"},
        {"domains: x\ndescription: D\natom: at = A\natom: AT = B\n", 4, 7, "duplicate atom template for 'at' (first on line 3)"},
        {"domains: x\ndescription: D\ncount: car = {n} car\n", 3, 21, "missing '|'"},
        {"domains: x\ndescription: D\ncount: car = a|b|c\n", 3, 17, "second '|'"},
        {"domains: x\ndescription: D\ncount: car = |cars\n", 3, 14, "empty singular"},
        {"domains: x\ndescription: D\ncount: car = {0} car|{n} cars\n", 3, 14, "only {n}"},
        {"domains: x\ndescription: D\ncount: car/2 = a|b\n", 3, 11, "only allowed on atom"},
        {"domains: x\ndescription: D\ncount: car = a|b\ncount: car = c|d\n", 4, 8, "duplicate count"},
        {"domains: x\ndescription: a {0} b\n", 2, 16, "not allowed"},
        {"domains:   # nothing\ndescription: D\n", 1, 9, "at least one name"},
        {"domains: x\r\ndescription:\r\n", 2, 13, "empty description"},
        {"description: D\natom: at = A\n", 0, 0, "missing 'domains:'"},
        {"domains: x\n", 0, 0, "missing 'description:'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ns_render *r = (ns_render *)1;
        ns_error err;
        ns_error_clear(&err);
        ns_status st = ns_render_parse(&r, cases[i].text, "t.txt", &err);
        if (st != NS_ERR_INPUT || err.line != cases[i].line || err.col != cases[i].col ||
            !strstr(err.msg, cases[i].msg) || r != NULL) {
            char msg[1024];
            ns_error_format(&err, msg, sizeof msg);
            printf("  case %zu: status %d, got \"%s\", want %d:%d \"%s\"\n", i, (int)st, msg,
                   cases[i].line, cases[i].col, cases[i].msg);
            ns_t_cur_failed = 1;
        }
        CHECK_STR(err.file, "t.txt");
    }
    /* comments, escapes, repeated lines, CRLF */
    ns_render *r = parse_ok("# c\r\n  domains: a,b  # tail\r\ndomains: c\ndescription: One \\# two#three\n"
                            "description: More.\natom: p = P \\#{0} # x\n\n");
    CHECK(r != NULL);
    if (!r) return;
    CHECK(ns_render_applies_to(r, "a") && ns_render_applies_to(r, "B") && ns_render_applies_to(r, "c"));
    CHECK(!ns_render_applies_to(r, "d"));
    static const char *const o[] = {"x"}, *const t[] = {"object"}, *const a[] = {"(p x)"};
    ns_render_problem p = {1, o, t, 1, a, 0, NULL, 0, NULL};
    ns_render_prep *pp;
    ns_error err;
    CHECK_EQ_INT(ns_render_prep_new(&pp, r, &p, &err), NS_OK);
    CHECK_STR(ns_render_prep_problem_text(pp), "One # two#three More.");
    CHECK_STR(ns_render_prep_clause(pp, 0), "P #x");
    ns_render_prep_free(pp);
    ns_render_free(r);
    /* missing file */
    ns_error_clear(&err);
    CHECK_EQ_INT(ns_render_load(&r, "tests/no/such/render.txt", &err), NS_ERR_IO);
    CHECK(r == NULL);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void test_find(void)
{
    ns_error err;
    ns_render *r;
    /* absent name */
    CHECK_EQ_INT(ns_render_find(&r, "domains", "no-such-domain", &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "no-such-domain") != NULL);
    /* the seedA logistics template sits next to the typed one */
    r = load_shipped("logistics");
    CHECK(r && strstr(ns_render_path(r), "logistics/render-seedA.txt"));
    ns_render_free(r);
    r = load_shipped("Logistics-Strips");
    CHECK(r && strstr(ns_render_path(r), "logistics/render.txt"));
    ns_render_free(r);
    /* ambiguity and a broken template are errors */
    char dir[] = "/tmp/ns_render_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(!"mkdtemp");
        return;
    }
    char a[512], b[512], fa[600], fb[600];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    mkdir(a, 0700);
    mkdir(b, 0700);
    snprintf(fa, sizeof fa, "%s/render.txt", a);
    snprintf(fb, sizeof fb, "%s/render-x.txt", b);
    write_text(fa, "domains: d1 d2\ndescription: A.\n");
    write_text(fb, "domains: d2\ndescription: B.\n");
    CHECK_EQ_INT(ns_render_find(&r, dir, "d1", &err), NS_OK);
    CHECK(r && strcmp(ns_render_path(r), fa) == 0);
    ns_render_free(r);
    CHECK_EQ_INT(ns_render_find(&r, dir, "d2", &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "also listed") != NULL);
    write_text(fb, "domains: d3\ndescription: B.\nbogus line\n");
    CHECK_EQ_INT(ns_render_find(&r, dir, "d1", &err), NS_ERR_INPUT);
    CHECK_STR(err.file, fb);
    CHECK_EQ_INT(err.line, 3);
    unlink(fa);
    unlink(fb);
    rmdir(a);
    rmdir(b);
    rmdir(dir);
}

/* Every predicate of every shipped domain has a template. */
static void test_shipped_domains_covered(void)
{
    static const char *const names[] = {"blocksworld", "depot", "ferry", "floortile", "goldminer", "grid",
                                        "gripper", "logistics", "rovers", "satellite", "visitall"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[256];
        snprintf(path, sizeof path, "domains/%s/domain.pddl", names[i]);
        ns_domain d;
        ns_error err;
        if (ns_domain_read(&d, path, &err) != NS_OK) {
            printf("  cannot read %s: %s\n", path, err.msg);
            ns_t_cur_failed = 1;
            continue;
        }
        ns_render *r = load_shipped(d.name);
        CHECK(r != NULL);
        for (int k = 0; r && k < d.npreds; k++)
            if (!ns_render_covers(r, d.preds[k].name, d.preds[k].arity)) {
                printf("  %s: no template for %s/%d\n", names[i], d.preds[k].name, d.preds[k].arity);
                ns_t_cur_failed = 1;
            }
        ns_render_free(r);
        ns_domain_free(&d);
    }
}

/* ------------------------------------------------------------- benchmarks */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted *.pddl files of dir other than domain.pddl (malloc'ed paths). */
static int list_problems(const char *dir, char ***out)
{
    DIR *d = opendir(dir);
    *out = NULL;
    if (!d) return 0;
    int n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".pddl") != 0 || strcmp(e->d_name, "domain.pddl") == 0)
            continue;
        if (n == cap) *out = realloc(*out, sizeof **out * (size_t)(cap = cap ? 2 * cap : 16));
        size_t m = strlen(dir) + l + 2;
        (*out)[n] = malloc(m);
        snprintf((*out)[n++], m, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (n) qsort(*out, (size_t)n, sizeof **out, cmp_str);
    return n;
}

/* Renders the initial state of every problem in dirs[] against domain_path;
 * returns the number rendered, -1 after a failure (reported). */
static int render_all(const char *domain_path, const char *const *dirs, int ndirs, int *nclauses)
{
    ns_domain d;
    ns_error err;
    if (ns_domain_read(&d, domain_path, &err) != NS_OK) {
        printf("  %s: %s\n", domain_path, err.msg);
        return -1;
    }
    ns_render *r = load_shipped(d.name);
    if (!r) {
        ns_domain_free(&d);
        return -1;
    }
    int done = 0, bad = 0;
    for (int k = 0; k < d.npreds; k++)
        if (!ns_render_covers(r, d.preds[k].name, d.preds[k].arity)) {
            printf("  %s: no template for %s/%d\n", domain_path, d.preds[k].name, d.preds[k].arity);
            bad = 1;
        }
    for (int di = 0; di < ndirs && !bad; di++) {
        char **files;
        int nf = list_problems(dirs[di], &files);
        for (int fi = 0; fi < nf; fi++) {
            ns_problem p;
            ns_task t;
            char msg[1024];
            if (!bad && ns_problem_read(&p, &d, files[fi], &err) != NS_OK) {
                ns_error_format(&err, msg, sizeof msg);
                printf("  %s\n", msg);
                bad = 1;
            } else if (!bad) {
                if (ns_task_ground(&t, &d, &p, &err) != NS_OK) {
                    ns_error_format(&err, msg, sizeof msg);
                    printf("  %s: %s\n", files[fi], msg);
                    bad = 1;
                } else {
                    ns_render_names nm;
                    ns_render_names_from_task(&nm, &t);
                    ns_render_prep *pp;
                    if (ns_render_prep_new(&pp, r, &nm.p, &err) != NS_OK) {
                        ns_error_format(&err, msg, sizeof msg);
                        printf("  %s: %s\n", files[fi], msg);
                        bad = 1;
                    } else {
                        for (int a = 0; a < t.natoms && !bad; a++) {
                            const char *c = ns_render_prep_clause(pp, a);
                            if (!c[0] || strchr(c, '{') || strchr(c, '}')) {
                                printf("  %s: bad clause for %s: \"%s\"\n", files[fi], nm.p.atoms[a], c);
                                bad = 1;
                            }
                        }
                        for (int a = 0; a < t.nstatics && !bad; a++)
                            if (!ns_render_prep_static_clause(pp, a)[0]) bad = 1;
                        ns_buf b;
                        ns_buf_init(&b);
                        ns_render_prep_prompt_bits(pp, t.init, &b);
                        int *ids = malloc(sizeof *ids * (size_t)(t.natoms + 1));
                        int n = ns_render_true_atoms(t.init, t.natoms, ids);
                        *nclauses += n;
                        ns_buf c;
                        ns_buf_init(&c);
                        if (ns_render_prep_prompt(pp, ids, n, &c, &err) != NS_OK || strcmp(b.data, c.data) != 0)
                            bad = 1;
                        if (strchr(b.data, '{') || strchr(b.data, '}') || strstr(b.data, ", ,") ||
                            strstr(b.data, ", and \n") || strncmp(b.data, "### PROBLEM DESCRIPTION ###\n", 28) != 0 ||
                            !strstr(b.data, "\n\n### CURRENT STATE ###\n") ||
                            !strstr(b.data, "\n\n### GOAL DESCRIPTION ###\n") ||
                            !strstr(ns_render_prep_problem_text(pp), "There ") ||
                            (p.ngoal > 0 && !ns_render_prep_goal_text(pp)[0])) {
                            printf("  %s: suspicious prompt:\n%s\n", files[fi], b.data);
                            bad = 1;
                        }
                        free(ids);
                        ns_buf_free(&c);
                        ns_buf_free(&b);
                        ns_render_prep_free(pp);
                        done++;
                    }
                    ns_render_names_free(&nm);
                    ns_task_free(&t);
                }
                ns_problem_free(&p);
            }
            free(files[fi]);
        }
        free(files);
    }
    ns_render_free(r);
    ns_domain_free(&d);
    return bad ? -1 : done;
}

static void test_benchmarks_acpbench(void)
{
    const char *bench = ns_test_benchmarks();
    static const char *const doms[] = {"blocksworld-4ops", "depots", "ferry", "floor-tile",
                                       "gold-miner-typed", "grid", "grid-visit-all", "gripper-strips",
                                       "logistics-strips", "rover", "satellite"};
    int total = 0, clauses = 0;
    for (size_t i = 0; i < sizeof doms / sizeof *doms; i++) {
        char dir[512], dom[600];
        snprintf(dir, sizeof dir, "%s/acpbench/%s", bench, doms[i]);
        snprintf(dom, sizeof dom, "%s/domain.pddl", dir);
        const char *dirs[] = {dir};
        int n = render_all(dom, dirs, 1, &clauses);
        CHECK(n > 0);
        if (n > 0) total += n;
    }
    printf("  (%d ACPBench problems rendered, %d state clauses)\n", total, clauses);
}

static void test_benchmarks_seedA(void)
{
    const char *bench = ns_test_benchmarks();
    static const char *const doms[] = {"blocks", "gripper", "logistics", "visitall-from-everywhere"};
    static const char *const splits[] = {"train", "validation", "test-interpolation", "test-extrapolation"};
    int total = 0, clauses = 0;
    for (size_t i = 0; i < sizeof doms / sizeof *doms; i++) {
        char dirs[4][512], dom[600];
        const char *dp[4];
        for (int s = 0; s < 4; s++) {
            snprintf(dirs[s], sizeof dirs[s], "%s/seedA/pddl/%s/%s", bench, doms[i], splits[s]);
            dp[s] = dirs[s];
        }
        snprintf(dom, sizeof dom, "%s/seedA/pddl/%s/domain.pddl", bench, doms[i]);
        int n = render_all(dom, dp, 4, &clauses);
        CHECK(n > 0);
        if (n > 0) total += n;
    }
    printf("  (%d seedA problems rendered, %d state clauses)\n", total, clauses);
}

int main(void)
{
    NS_RUN(test_ferry_prompt_exact);
    NS_RUN(test_shuffled_order);
    NS_RUN(test_join);
    NS_RUN(test_context_only);
    NS_RUN(test_literals);
    NS_RUN(test_bits_and_ids);
    NS_RUN(test_counts);
    NS_RUN(test_goal_negative);
    NS_RUN(test_arity_qualified);
    NS_RUN(test_missing_template);
    NS_RUN(test_malformed_lines);
    NS_RUN(test_find);
    NS_RUN(test_shipped_domains_covered);
    if (ns_test_benchmarks()) {
        NS_RUN(test_benchmarks_acpbench);
        NS_RUN(test_benchmarks_seedA);
    } else {
        NS_SKIP(test_benchmarks_acpbench, "no ../shared/benchmarks");
        NS_SKIP(test_benchmarks_seedA, "no ../shared/benchmarks");
    }
    return ns_test_summary("test_render");
}
