/* test_gen.c — the problem generators and the shipped domain files.
 *
 * - determinism: same (domain, options, seed) gives the same bytes, other
 *   seeds give other problems;
 * - option validation: unknown domains/options and out-of-range values are
 *   NS_ERR_USAGE;
 * - every generated problem parses against domains/<name>/domain.pddl,
 *   grounds, and small ones are solved by BFS (solvable by construction);
 * - each shipped domain against its reference (ACPBench's, or the IPC 2023
 *   Learning Track's for spanner, miconic, childsnack, transport, sokoban): for
 *   each reference problem (the first 12 by name), both domain files ground to the same task (same
 *   atoms, statics, operators with the same pre/add/del sets, initial state
 *   and goal — our files keep the reference's declaration order, so ids
 *   agree), and, when the reachable space has at most ~200k states, give the
 *   same number of reachable states and the same BFS plan length (or both
 *   prove the problem unsolvable).
 *
 * Environment (for deeper one-off runs): NEXTSTATE_GEN_SPACE_CAP overrides
 * the state cap, NEXTSTATE_GEN_SEEDS the seeds per generator case (4). */
#include <dirent.h>

#include "nextstate/core/gen.h"
#include "nextstate/core/pddl.h"
#include "nextstate/core/search.h"
#include "nextstate/core/state.h"
#include "nextstate/core/succgen.h"
#include "nextstate/core/task.h"
#include "nextstate/util/util.h"
#include "test.h"

#define SPACE_CAP 200000 /* skip problems whose reachable space is larger */

static long env_long(const char *name, long def)
{
    const char *v = getenv(name);
    return v && *v ? atol(v) : def;
}

/* Our domain folder and the benchmark folder of the same domain (under the
 * shared benchmarks folder): ACPBench's, or the IPC 2023 Learning Track's,
 * whose reference problems are in its training/easy folder. */
static const struct {
    const char *ours, *ref, *problems;
} PAIRS[] = {
    {"blocksworld", "acpbench/blocksworld-4ops", ""},
    {"gripper", "acpbench/gripper-strips", ""},
    {"logistics", "acpbench/logistics-strips", ""},
    {"visitall", "acpbench/grid-visit-all", ""},
    {"depot", "acpbench/depots", ""},
    {"ferry", "acpbench/ferry", ""},
    {"floortile", "acpbench/floor-tile", ""},
    {"goldminer", "acpbench/gold-miner-typed", ""},
    {"grid", "acpbench/grid", ""},
    {"rovers", "acpbench/rover", ""},
    {"satellite", "acpbench/satellite", ""},
    {"spanner", "ipc2023-learning/spanner", "/training/easy"},
    {"miconic", "ipc2023-learning/miconic", "/training/easy"},
    {"childsnack", "ipc2023-learning/childsnack", "/training/easy"},
    {"transport", "ipc2023-learning/transport", "/training/easy"},
    {"sokoban", "ipc2023-learning/sokoban", "/training/easy"},
};
#define REF_FILES 12 /* reference problems compared per domain, the first by name */
#define NPAIRS ((int)(sizeof PAIRS / sizeof PAIRS[0]))

static void domain_path(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "domains/%s/domain.pddl", name);
}

static ns_status gen(const char *domain, const ns_gen_arg *args, int nargs, uint64_t seed,
                     ns_buf *out, ns_error *err)
{
    ns_buf_init(out);
    return ns_gen_problem(domain, args, nargs, seed, NULL, out, err);
}

/* The problem text after the header (the header names the seed). */
static const char *body(const ns_buf *b)
{
    const char *p = strstr(b->data, "(:objects");
    return p ? p : b->data;
}

static void test_domains_listed(void)
{
    const char *const *names = ns_gen_domains();
    int n = 0;
    for (; names[n]; n++) {
        const ns_gen_option *o = ns_gen_options(names[n]);
        CHECK(o != NULL);
        if (!o) continue;
        CHECK(o[0].name != NULL);
        for (; o->name; o++) {
            CHECK(o->def >= o->min);
            CHECK(o->help != NULL);
        }
    }
    CHECK_EQ_INT(n, NPAIRS);
    for (int i = 0; i < NPAIRS && i < n; i++) CHECK_STR(names[i], PAIRS[i].ours);
    CHECK(ns_gen_options("nosuchdomain") == NULL);
}

static void test_determinism(void)
{
    const char *const *names = ns_gen_domains();
    for (int d = 0; names[d]; d++) {
        ns_buf a, b;
        ns_error err;
        /* Gripper's default is the IPC layout, which has no random choice. */
        ns_gen_arg scatter = {"scatter", 1};
        int nargs = strcmp(names[d], "gripper") == 0;
        CHECK_EQ_INT(gen(names[d], &scatter, nargs, 42, &a, &err), NS_OK);
        CHECK_EQ_INT(gen(names[d], &scatter, nargs, 42, &b, &err), NS_OK);
        CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
        bool differs = false; /* some other seed gives another problem */
        for (uint64_t s = 1; s <= 5 && !differs; s++) {
            ns_buf c;
            CHECK_EQ_INT(gen(names[d], &scatter, nargs, 42 + s, &c, &err), NS_OK);
            differs = strcmp(body(&a), body(&c)) != 0;
            ns_buf_free(&c);
        }
        if (!differs) printf("  %s: five other seeds gave the same problem\n", names[d]);
        CHECK(differs);
        ns_buf_free(&a);
        ns_buf_free(&b);
    }
    /* The given name is used; options change the problem. */
    ns_buf a;
    ns_error err;
    ns_buf_init(&a);
    ns_gen_arg big = {"blocks", 9};
    CHECK_EQ_INT(ns_gen_problem("blocksworld", &big, 1, 3, "bw-rand-9", &a, &err), NS_OK);
    CHECK(strstr(a.data, "(define (problem bw-rand-9)") != NULL);
    CHECK(strstr(a.data, "block_9") != NULL && strstr(a.data, "block_10") == NULL);
    ns_buf_free(&a);
}

static void expect_usage(const char *domain, const char *opt, int value)
{
    ns_buf b;
    ns_error err;
    ns_error_clear(&err);
    ns_gen_arg a = {opt, value};
    ns_status st = gen(domain, &a, opt ? 1 : 0, 1, &b, &err);
    if (st != NS_ERR_USAGE) printf("  %s %s=%d: status %d\n", domain, opt ? opt : "-", value, (int)st);
    CHECK_EQ_INT(st, NS_ERR_USAGE);
    CHECK_EQ_INT(err.code, NS_ERR_USAGE);
    CHECK(err.msg[0] != '\0');
    ns_buf_free(&b);
}

static void test_option_errors(void)
{
    expect_usage("nosuchdomain", NULL, 0);
    expect_usage("blocksworld", "towers", 3);  /* unknown option */
    expect_usage("blocksworld", "blocks", 0);  /* below minimum */
    expect_usage("blocksworld", "blocks", -5);
    expect_usage("blocksworld", "blocks", 100000000); /* absurdly large */
    expect_usage("gripper", "rooms", 1);
    expect_usage("gripper", "scatter", 2);
    expect_usage("ferry", "locations", 1);
    expect_usage("ferry", "locations", 5000);
    expect_usage("visitall", "goals", 101);
    expect_usage("visitall", "holes", 15); /* 4x4 grid keeps >= 2 cells */
    expect_usage("visitall", "center", 2);
    expect_usage("floortile", "robots", 4); /* more robots than columns */
    expect_usage("depot", "pallets", 2);    /* fewer pallets than places */
    expect_usage("depot", "hoists", 2);
    expect_usage("goldminer", "rows", 1);
    expect_usage("grid", "locks", 25);      /* 5x5: the robot needs a place */
    expect_usage("grid", "goals", 101);
    expect_usage("rovers", "waypoints", 1);
    expect_usage("satellite", "modes", 0);
    expect_usage("spanner", "nuts", 4);       /* more nuts than spanners */
    expect_usage("miconic", "floors", 1);
    expect_usage("miconic", "floors", 5000);
    expect_usage("childsnack", "allergic", 5); /* more allergic than children */
    expect_usage("childsnack", "sandwiches", 3);
    expect_usage("transport", "capacity", 0);
    expect_usage("sokoban", "boxes", 25);      /* 7 x 7: 25 inner cells, one for the robot */
    expect_usage("sokoban", "size", 101);
    expect_usage("sokoban", "walls", 101);
    /* Several options at once, and an error in the second one. */
    ns_buf b;
    ns_error err;
    ns_gen_arg two[2] = {{"x", 3}, {"nosuch", 1}};
    CHECK_EQ_INT(gen("visitall", two, 2, 1, &b, &err), NS_ERR_USAGE);
    ns_buf_free(&b);
    ns_gen_arg ok[2] = {{"x", 3}, {"y", 2}};
    CHECK_EQ_INT(gen("visitall", ok, 2, 1, &b, &err), NS_OK);
    CHECK(strstr(b.data, "loc-x2-y1") != NULL && strstr(b.data, "loc-x3-") == NULL);
    ns_buf_free(&b);
}

/* ---- generated problems parse, ground and (when small) solve ---- */

typedef struct gen_case {
    const char *domain;
    int nargs;
    ns_gen_arg args[6];
    bool solve; /* small enough for BFS */
} gen_case;

static const gen_case CASES[] = {
    {"blocksworld", 0, {{0}}, true},
    {"blocksworld", 1, {{"blocks", 1}}, true},
    {"blocksworld", 1, {{"blocks", 30}}, false},
    {"gripper", 0, {{0}}, true},
    {"gripper", 3, {{"balls", 3}, {"rooms", 3}, {"scatter", 1}}, true},
    {"gripper", 2, {{"robots", 2}, {"balls", 3}}, true},
    {"logistics", 0, {{0}}, true},
    {"logistics", 4, {{"cities", 3}, {"size", 3}, {"airplanes", 2}, {"packages", 2}}, true},
    {"logistics", 2, {{"cities", 1}, {"size", 1}}, true},
    {"visitall", 0, {{0}}, true},
    {"visitall", 4, {{"x", 4}, {"y", 3}, {"holes", 4}, {"goals", 50}}, true},
    {"visitall", 3, {{"x", 1}, {"y", 2}, {"goals", 0}}, true},
    {"visitall", 3, {{"x", 5}, {"y", 5}, {"holes", 23}}, true},
    {"visitall", 3, {{"x", 3}, {"y", 3}, {"center", 1}}, true},
    {"depot", 0, {{0}}, true},
    {"depot", 6, {{"depots", 2}, {"distributors", 1}, {"trucks", 1}, {"pallets", 4}, {"hoists", 4}, {"crates", 3}}, false},
    {"ferry", 0, {{0}}, true},
    {"ferry", 2, {{"locations", 2}, {"cars", 1}}, true},
    {"floortile", 2, {{"rows", 2}, {"columns", 2}}, true},
    {"floortile", 3, {{"rows", 1}, {"columns", 3}, {"robots", 3}}, true},
    {"floortile", 3, {{"rows", 2}, {"columns", 2}, {"robots", 1}}, true},
    {"floortile", 0, {{0}}, false},
    {"goldminer", 0, {{0}}, true},
    {"goldminer", 2, {{"rows", 2}, {"cols", 2}}, true},
    {"goldminer", 2, {{"rows", 4}, {"cols", 5}}, true},
    {"grid", 4, {{"x", 3}, {"y", 3}, {"keys", 2}, {"locks", 3}}, true},
    {"grid", 5, {{"x", 4}, {"y", 3}, {"shapes", 2}, {"keys", 2}, {"locks", 5}}, true},
    {"grid", 6, {{"x", 3}, {"y", 3}, {"shapes", 3}, {"keys", 2}, {"locks", 8}, {"goals", 0}}, true},
    {"grid", 0, {{0}}, false},
    {"rovers", 0, {{0}}, false},
    {"rovers", 5, {{"rovers", 1}, {"waypoints", 3}, {"objectives", 1}, {"cameras", 1}, {"goals", 2}}, true},
    {"satellite", 5, {{"satellites", 1}, {"instruments", 1}, {"modes", 2}, {"targets", 2}, {"observations", 2}}, true},
    {"satellite", 0, {{0}}, false},
    {"spanner", 0, {{0}}, true},
    {"spanner", 3, {{"spanners", 2}, {"nuts", 2}, {"locations", 1}}, true},
    {"spanner", 3, {{"spanners", 40}, {"nuts", 30}, {"locations", 30}}, false},
    {"miconic", 0, {{0}}, true},
    {"miconic", 2, {{"passengers", 1}, {"floors", 2}}, true},
    {"childsnack", 0, {{0}}, true},
    {"childsnack", 5, {{"children", 3}, {"allergic", 3}, {"trays", 1}, {"tables", 2}, {"sandwiches", 3}}, true},
    {"childsnack", 2, {{"children", 3}, {"allergic", 0}}, true},
    {"transport", 0, {{0}}, true},
    {"transport", 5, {{"vehicles", 1}, {"packages", 2}, {"locations", 2}, {"capacity", 1}, {"roads", 5}}, true},
    {"transport", 3, {{"packages", 0}, {"locations", 1}, {"roads", 0}}, true},
    {"sokoban", 0, {{0}}, true},
    {"sokoban", 4, {{"size", 6}, {"boxes", 3}, {"walls", 40}, {"steps", 300}}, true},
    {"sokoban", 3, {{"size", 5}, {"boxes", 8}, {"walls", 100}}, true},
};
#define NCASES ((int)(sizeof CASES / sizeof CASES[0]))

static void print_err(const char *what, const ns_error *err)
{
    char msg[1024];
    ns_error_format(err, msg, sizeof msg);
    printf("  %s: %s\n", what, msg);
}

static void test_generated_parse_and_solve(void)
{
    int solved = 0, parsed = 0;
    for (int c = 0; c < NCASES; c++) {
        const gen_case *gc = &CASES[c];
        char path[256];
        domain_path(gc->domain, path, sizeof path);
        ns_domain dom;
        ns_error err;
        if (ns_domain_read(&dom, path, &err) != NS_OK) {
            print_err(path, &err);
            CHECK(!"shipped domain parses");
            continue;
        }
        uint64_t nseeds = (uint64_t)env_long("NEXTSTATE_GEN_SEEDS", 4);
        for (uint64_t seed = 1; seed <= nseeds; seed++) {
            ns_buf text;
            ns_status st = gen(gc->domain, gc->args, gc->nargs, seed, &text, &err);
            CHECK_EQ_INT(st, NS_OK);
            if (st != NS_OK) {
                print_err(gc->domain, &err);
                ns_buf_free(&text);
                continue;
            }
            ns_problem prob;
            if (ns_problem_parse(&prob, &dom, text.data, "<generated>", &err) != NS_OK) {
                print_err(gc->domain, &err);
                printf("%s", text.data);
                CHECK(!"generated problem parses");
                ns_buf_free(&text);
                continue;
            }
            parsed++;
            ns_task task;
            if (ns_task_ground(&task, &dom, &prob, &err) != NS_OK) {
                print_err(gc->domain, &err);
                CHECK(!"generated problem grounds");
            } else {
                CHECK(!task.goal_impossible);
                if (gc->solve) {
                    ns_search_opts o;
                    ns_search_opts_default(&o);
                    o.algo = NS_SEARCH_BFS;
                    o.time_limit = 60;
                    ns_search_result res;
                    ns_search(&task, &o, &res);
                    if (res.status != NS_OK) {
                        printf("  case %d (%s) seed %llu: search status %d\n%s", c, gc->domain,
                               (unsigned long long)seed, (int)res.status, text.data);
                    }
                    CHECK_EQ_INT(res.status, NS_OK);
                    solved += res.status == NS_OK;
                    ns_search_result_free(&res);
                }
                ns_task_free(&task);
            }
            ns_problem_free(&prob);
            ns_buf_free(&text);
        }
        ns_domain_free(&dom);
    }
    printf("  %d generated problems parsed and grounded, %d solved by BFS\n", parsed, solved);
}

/* ---- shipped domains vs. their ACPBench / IPC 2023 references ---- */

/* Number of states reachable from the initial state, or -1 above cap. */
static long count_reachable(const ns_task *t, long cap)
{
    ns_succgen g;
    ns_succgen_init(&g, t);
    ns_registry reg;
    ns_registry_init(&reg, t->nwords);
    int *ops = ns_xmalloc(sizeof(int) * (size_t)(t->nops > 0 ? t->nops : 1));
    ns_word *s = ns_xmalloc(sizeof(ns_word) * (size_t)(t->nwords > 0 ? t->nwords : 1));
    ns_word *succ = ns_xmalloc(sizeof(ns_word) * (size_t)(t->nwords > 0 ? t->nwords : 1));
    bool is_new;
    ns_registry_insert(&reg, t->init, &is_new);
    long result = 0;
    for (uint32_t next = 0; next < reg.n; next++) { /* ids are handed out in BFS order */
        memcpy(s, ns_registry_get(&reg, next), sizeof(ns_word) * (size_t)t->nwords);
        int n = ns_succgen_applicable(&g, s, ops);
        for (int i = 0; i < n; i++) {
            ns_task_apply(t, ops[i], s, succ);
            ns_registry_insert(&reg, succ, &is_new);
        }
        if ((long)reg.n > cap) {
            result = -1;
            break;
        }
    }
    if (result == 0) result = (long)reg.n;
    free(ops);
    free(s);
    free(succ);
    ns_registry_free(&reg);
    ns_succgen_free(&g);
    return result;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Same id list up to order. */
static bool same_set(const int *a, int na, const int *b, int nb)
{
    if (na != nb) return false;
    int *x = ns_xmalloc(sizeof(int) * (size_t)(na + 1)), *y = ns_xmalloc(sizeof(int) * (size_t)(na + 1));
    memcpy(x, a, sizeof(int) * (size_t)na);
    memcpy(y, b, sizeof(int) * (size_t)na);
    qsort(x, (size_t)na, sizeof(int), cmp_int);
    qsort(y, (size_t)na, sizeof(int), cmp_int);
    bool same = memcmp(x, y, sizeof(int) * (size_t)na) == 0;
    free(x);
    free(y);
    return same;
}

static bool same_atoms(const ns_task *a, const ns_atom *x, const ns_task *b, const ns_atom *y, int n)
{
    for (int i = 0; i < n; i++)
        if (x[i].pred != y[i].pred || x[i].nargs != y[i].nargs ||
            memcmp(a->atom_args + x[i].args_off, b->atom_args + y[i].args_off,
                   sizeof(int) * (size_t)x[i].nargs) != 0)
            return false;
    return true;
}

/* Do two groundings of one problem under two domain files describe the same
 * task, id for id?  Returns NULL or what differs. */
static const char *task_difference(const ns_task *a, const ns_task *b)
{
    if (a->natoms != b->natoms || !same_atoms(a, a->atoms, b, b->atoms, a->natoms)) return "atoms";
    if (a->nstatics != b->nstatics || !same_atoms(a, a->statics, b, b->statics, a->nstatics))
        return "static atoms";
    if (a->nops != b->nops) return "number of operators";
    for (int i = 0; i < a->nops; i++) {
        const ns_op *x = &a->ops[i], *y = &b->ops[i];
        int nparams = a->domain->actions[x->schema].nparams;
        if (x->schema != y->schema || x->cost != y->cost ||
            memcmp(ns_op_args(a, x), ns_op_args(b, y), sizeof(int) * (size_t)nparams) != 0)
            return "operator names";
        if (!same_set(ns_op_pre(a, x), x->npre, ns_op_pre(b, y), y->npre) ||
            !same_set(ns_op_preneg(a, x), x->npreneg, ns_op_preneg(b, y), y->npreneg))
            return "operator preconditions";
        if (!same_set(ns_op_add(a, x), x->nadd, ns_op_add(b, y), y->nadd) ||
            !same_set(ns_op_del(a, x), x->ndel, ns_op_del(b, y), y->ndel))
            return "operator effects";
    }
    if (a->nwords != b->nwords || memcmp(a->init, b->init, sizeof(ns_word) * (size_t)a->nwords) != 0)
        return "initial state";
    if (!same_set(a->goal_pos, a->ngoal_pos, b->goal_pos, b->ngoal_pos) ||
        !same_set(a->goal_neg, a->ngoal_neg, b->goal_neg, b->ngoal_neg) ||
        a->goal_impossible != b->goal_impossible)
        return "goal";
    return NULL;
}

typedef struct side {
    ns_problem prob;
    ns_task task;
    bool ok;
} side;

static bool load_side(side *sd, const ns_domain *dom, const char *path)
{
    ns_error err;
    sd->ok = false;
    if (ns_problem_read(&sd->prob, dom, path, &err) != NS_OK) {
        print_err(dom->path ? dom->path : "domain", &err);
        return false;
    }
    if (ns_task_ground(&sd->task, dom, &sd->prob, &err) != NS_OK) {
        print_err(path, &err);
        ns_problem_free(&sd->prob);
        return false;
    }
    sd->ok = true;
    return true;
}

static void free_side(side *sd)
{
    if (!sd->ok) return;
    ns_task_free(&sd->task);
    ns_problem_free(&sd->prob);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the problem files (not domain.pddl) in dir. */
static int list_problems(const char *dir, char ***out)
{
    DIR *d = opendir(dir);
    char **names = NULL;
    size_t cap = 0;
    int n = 0;
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".pddl") != 0) continue;
        if (strcmp(e->d_name, "domain.pddl") == 0) continue;
        NS_GROW(names, cap, (size_t)n + 1);
        names[n++] = ns_xstrdup(e->d_name);
    }
    closedir(d);
    if (n) qsort(names, (size_t)n, sizeof *names, cmp_str);
    *out = names;
    return n;
}

static void test_acpbench_equivalence(void)
{
    const char *bench = ns_test_benchmarks();
    if (!bench) return;
    int compared = 0, skipped = 0, identical = 0, total = 0;
    long cap = env_long("NEXTSTATE_GEN_SPACE_CAP", SPACE_CAP);
    for (int p = 0; p < NPAIRS; p++) {
        char ours_path[256], ref_path[640], dir[512];
        domain_path(PAIRS[p].ours, ours_path, sizeof ours_path);
        snprintf(ref_path, sizeof ref_path, "%s/%s/domain.pddl", bench, PAIRS[p].ref);
        snprintf(dir, sizeof dir, "%s/%s%s", bench, PAIRS[p].ref, PAIRS[p].problems);
        ns_domain ours, ref;
        ns_error err;
        if (ns_domain_read(&ref, ref_path, &err) != NS_OK) {
            print_err(ref_path, &err);
            CHECK(!"reference domain parses");
            continue;
        }
        if (ns_domain_read(&ours, ours_path, &err) != NS_OK) {
            print_err(ours_path, &err);
            CHECK(!"shipped domain parses");
            ns_domain_free(&ref);
            continue;
        }
        CHECK_STR(ours.name, ref.name);
        CHECK_EQ_INT(ours.npreds, ref.npreds);
        CHECK_EQ_INT(ours.nactions, ref.nactions);
        char **files = NULL;
        int nfiles = list_problems(dir, &files);
        CHECK(nfiles > 0);
        for (int f = 0; f < nfiles; f++) {
            if (f >= REF_FILES) {
                free(files[f]);
                continue;
            }
            char path[1400];
            snprintf(path, sizeof path, "%s/%s", dir, files[f]);
            side a, b;
            bool la = load_side(&a, &ours, path), lb = load_side(&b, &ref, path);
            CHECK(la && lb);
            if (la && lb) {
                total++;
                const char *diff = task_difference(&a.task, &b.task);
                if (diff) printf("  %s %s: grounded tasks differ in %s\n", PAIRS[p].ours, files[f], diff);
                CHECK(diff == NULL);
                identical += diff == NULL;
                long na = count_reachable(&a.task, cap);
                long nb = na < 0 ? -1 : count_reachable(&b.task, cap);
                if (na < 0) {
                    printf("  %-10s %-45s %d atoms %d ops, identical; space > %ld states\n",
                           PAIRS[p].ours, files[f], a.task.natoms, a.task.nops, cap);
                    skipped++;
                } else {
                    CHECK_EQ_INT(na, nb);
                    ns_search_opts o;
                    ns_search_opts_default(&o);
                    o.algo = NS_SEARCH_BFS;
                    ns_search_result ra, rb;
                    ns_search(&a.task, &o, &ra);
                    ns_search(&b.task, &o, &rb);
                    CHECK_EQ_INT(ra.status, rb.status);
                    CHECK_EQ_INT(ra.plan_len, rb.plan_len);
                    CHECK(ra.status == NS_OK || ra.status == NS_UNSOLVABLE);
                    printf("  %-10s %-45s %d atoms %d ops, states %ld/%ld  plan %d/%d%s\n",
                           PAIRS[p].ours, files[f], a.task.natoms, a.task.nops, na,
                           nb, ra.status == NS_OK ? ra.plan_len : -1,
                           rb.status == NS_OK ? rb.plan_len : -1,
                           ra.status == NS_UNSOLVABLE ? " (unsolvable)" : "");
                    compared++;
                    ns_search_result_free(&ra);
                    ns_search_result_free(&rb);
                }
            }
            free_side(&a);
            free_side(&b);
            free(files[f]);
        }
        free(files);
        ns_domain_free(&ours);
        ns_domain_free(&ref);
    }
    printf("  %d benchmark problems: %d ground identically; %d compared by reachable states and"
           " BFS plan length, %d above the %ld-state cap\n",
           total, identical, compared, skipped, cap);
    CHECK(compared > 0);
}

int main(void)
{
    NS_RUN(test_domains_listed);
    NS_RUN(test_determinism);
    NS_RUN(test_option_errors);
    NS_RUN(test_generated_parse_and_solve);
    if (ns_test_benchmarks())
        NS_RUN(test_acpbench_equivalence);
    else
        NS_SKIP(test_acpbench_equivalence, "no shared benchmarks folder");
    return ns_test_summary("test_gen");
}
