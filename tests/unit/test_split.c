/* test_split.c — the six EmbedPlan protocols, candidate pools, determinism,
 * save/load with corruption checks, and the first paper's size splits. */
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>
#include "nextstate/data/dataset.h"
#include "nextstate/core/gen.h"
#include "nextstate/data/split.h"
#include "gen_fixture.h"
#include "test.h"

static char tmpdir[256];

/* Datasets shared by the tests (built once in main). */
enum { FERRY, BLOCKS, GRIPPER, FERRY_FULL, SMALL3, NODATA, NDS };
static ns_dataset DS[NDS];
static char DIRS[NDS][300];

static bool build(int which, const char *domain, const ns_gen_arg *args, int nargs, int nprob, ns_space_mode mode,
                  int plans)
{
    char pdir[400], dpath[300];
    snprintf(pdir, sizeof pdir, "%s/problems_%d", tmpdir, which);
    snprintf(dpath, sizeof dpath, "domains/%s/domain.pddl", domain);
    snprintf(DIRS[which], sizeof DIRS[which], "%s/ds_%d", tmpdir, which);
    ns_error e;
    char **paths = ns_test_gen_problems(pdir, domain, args, nargs, nprob, 11, true);
    bool ok = paths != NULL;
    ns_dataset_opts o = {mode, 0, plans, 7, 0, false, false};
    if (ok) ok = ns_dataset_build(&DS[which], dpath, (const char *const *)paths, nprob, &o, &e) == NS_OK;
    if (ok) ok = ns_dataset_save(&DS[which], DIRS[which], &e) == NS_OK;
    if (!ok) printf("  building %s: %s: %s\n", domain, e.file, e.msg);
    ns_test_free_paths(paths, nprob);
    return ok;
}

/* ---- helpers ------------------------------------------------------------- */

/* Side of every transition (0 none, 1 train, 2 dev, 3 test); counts a
 * transition listed twice in *dups. */
static uint8_t **mark_sides(const ns_split *sp, const ns_dataset *const *ds, int n, int *dups)
{
    uint8_t **m = calloc((size_t)n, sizeof(uint8_t *));
    for (int d = 0; d < n; d++) m[d] = calloc((size_t)ns_dataset_ntransitions(ds[d]) + 1, 1);
    const ns_refs *lists[3] = {&sp->train, &sp->dev, &sp->test};
    *dups = 0;
    for (int l = 0; l < 3; l++)
        for (int64_t i = 0; i < lists[l]->n; i++) {
            int64_t d = lists[l]->ref[2 * i], t = lists[l]->ref[2 * i + 1];
            if (d < 0 || d >= n || t < 0 || t >= ns_dataset_ntransitions(ds[d])) {
                (*dups)++;
                continue;
            }
            if (m[d][t]) (*dups)++;
            m[d][t] = (uint8_t)(l + 1);
        }
    return m;
}

static void free_sides(uint8_t **m, int n)
{
    for (int d = 0; d < n; d++) free(m[d]);
    free(m);
}

static bool sorted_refs(const ns_refs *r)
{
    for (int64_t i = 1; i < r->n; i++) {
        int64_t a = r->ref[2 * i - 2], b = r->ref[2 * i - 1], c = r->ref[2 * i], d = r->ref[2 * i + 1];
        if (a > c || (a == c && b >= d)) return false;
    }
    return true;
}

static int pool_len(const ns_split *sp, int64_t i)
{
    const int64_t *row = sp->pools + (size_t)i * (size_t)sp->pool_size;
    int len = 0;
    while (len < sp->pool_size && row[len] >= 0) len++;
    return len;
}

/* Truth first and only once, -1 padding only at the end, no duplicates
 * (unless with replacement), every candidate in the dataset (scope 0) or in
 * the truth's problem (scope 1), and as many as exist up to pool_size. */
static void check_pools(const ns_split *sp, const ns_dataset *const *ds, int scope)
{
    int P = sp->pool_size, bad = 0;
    for (int64_t i = 0; i < sp->test.n && bad < 5; i++) {
        const ns_dataset *D = ds[sp->test.ref[2 * i]];
        const int32_t *tr = ns_dataset_transition(D, sp->test.ref[2 * i + 1]);
        const int64_t *row = sp->pools + (size_t)i * (size_t)P;
        const int32_t *spb = D->state_problem.data;
        int len = pool_len(sp, i);
        bool ok = row[0] == tr[3];
        for (int j = len; j < P; j++) ok = ok && row[j] == -1;
        for (int j = 1; j < len; j++) {
            ok = ok && row[j] != tr[3] && row[j] < ns_dataset_nstates(D);
            if (scope == 1) ok = ok && spb[row[j]] == tr[0];
            if (!sp->with_replacement)
                for (int k = 1; k < j; k++) ok = ok && row[k] != row[j];
        }
        int64_t avail = scope == 0 ? ns_dataset_nstates(D) - 1 : D->problems[tr[0]].nstates - 1;
        int64_t want = sp->with_replacement ? (avail > 0 ? P : 1) : 1 + (avail < P - 1 ? avail : P - 1);
        ok = ok && len == want;
        if (!ok) {
            printf("  pool %lld bad (len %d, want %lld)\n", (long long)i, len, (long long)want);
            bad++;
        }
    }
    CHECK(bad == 0);
}

static bool on_dag(const ns_dataset *D, int64_t s)
{
    const int32_t *g = D->state_g.data, *h = D->state_hstar.data, *sp = D->state_problem.data;
    int32_t c = D->problems[sp[s]].cstar;
    return c >= 0 && h[s] >= 0 && g[s] + h[s] == c;
}


static const char *FILES[] = {"split.json", "train.npy", "dev.npy", "test.npy", "pools.npy"};
#define NFILES 5

static ns_status make1(ns_split *sp, int which, ns_protocol p, int pool, uint64_t seed, ns_error *e)
{
    const ns_dataset *d[1] = {&DS[which]};
    ns_split_opts o = {p, 0, 0, pool, false, seed};
    return ns_split_make(sp, d, 1, &o, e);
}

/* ---- tests ---------------------------------------------------------------- */

static void test_names(void)
{
    for (int p = 0; p < 6; p++) CHECK_EQ_INT(ns_protocol_parse(ns_protocol_name((ns_protocol)p)), p);
    CHECK_EQ_INT(ns_protocol_parse("loo"), NS_PROTO_LEAVE_ONE_OUT);
    CHECK_EQ_INT(ns_protocol_parse("plan"), NS_PROTO_PLAN_VARIANT);
    CHECK_EQ_INT(ns_protocol_parse("nope"), -1);
    CHECK_STR(ns_protocol_name(NS_PROTO_CROSS_DOMAIN), "cross-domain");
}

/* (3) disjoint, covering, ~80/20, sorted; pools uniform over the dataset. */
static void test_interpolation(void)
{
    for (int which = 0; which < 2; which++) {
        const ns_dataset *ds[1] = {&DS[which == 0 ? FERRY : FERRY_FULL]};
        ns_split sp;
        ns_error e;
        ns_split_opts o = {NS_PROTO_INTERPOLATION, 0, 0, 128, false, 5};
        if (ns_split_make(&sp, ds, 1, &o, &e) != NS_OK) {
            printf("  %s\n", e.msg);
            CHECK(0);
            continue;
        }
        int64_t T = ns_dataset_ntransitions(ds[0]);
        int dups;
        uint8_t **m = mark_sides(&sp, ds, 1, &dups);
        CHECK_EQ_INT(dups, 0);
        int64_t none = 0;
        for (int64_t t = 0; t < T; t++) none += m[0][t] == 0;
        CHECK_EQ_INT(none, 0);
        CHECK_EQ_INT(sp.train.n + sp.dev.n + sp.test.n, T);
        CHECK_EQ_INT(sp.test.n, llround(0.2 * (double)T));
        CHECK_EQ_INT(sp.dev.n, llround(0.1 * (double)(T - sp.test.n)));
        CHECK(sorted_refs(&sp.train) && sorted_refs(&sp.dev) && sorted_refs(&sp.test));
        /* key property: some problem has transitions on both sides */
        bool both = false;
        for (int p = 0; p < ds[0]->nproblems && !both; p++) {
            bool tr = false, te = false;
            for (int64_t t = 0; t < T; t++)
                if (ns_dataset_transition(ds[0], t)[0] == p) tr |= m[0][t] == 1, te |= m[0][t] == 3;
            both = tr && te;
        }
        CHECK(both);
        free_sides(m, 1);
        CHECK_EQ_INT(sp.pool_size, 128);
        check_pools(&sp, ds, 0);
        /* a transition's pool does not depend on the rest of the test set */
        ns_split other;
        ns_split_opts o2 = o;
        o2.test_frac = 0.35;
        CHECK(ns_split_make(&other, ds, 1, &o2, &e) == NS_OK);
        int64_t common = 0, same = 0;
        for (int64_t i = 0, j = 0; i < sp.test.n && j < other.test.n;) {
            int64_t a = sp.test.ref[2 * i + 1], b = other.test.ref[2 * j + 1];
            if (a < b) i++;
            else if (b < a) j++;
            else {
                common++;
                same += !memcmp(sp.pools + 128 * i, other.pools + 128 * j, 128 * sizeof(int64_t));
                i++, j++;
            }
        }
        CHECK(common > 0 && same == common);
        ns_split_free(&other);
        ns_split_free(&sp);
        /* with replacement: full rows, truth still excluded */
        o.with_replacement = true;
        o.pool_size = 300;
        CHECK(ns_split_make(&sp, ds, 1, &o, &e) == NS_OK);
        check_pools(&sp, ds, 0);
        ns_split_free(&sp);
        /* small pools take the plentiful (rejection) path, large ones the scarce path */
        for (int pool = 1; pool <= 400; pool = pool * 3 + 1) {
            o.with_replacement = false;
            o.pool_size = pool;
            CHECK(ns_split_make(&sp, ds, 1, &o, &e) == NS_OK);
            check_pools(&sp, ds, 0);
            ns_split_free(&sp);
        }
    }
}

/* (2) plan-variant: test transitions lie on held-out plans and never in train. */
static void test_plan_variant(void)
{
    int whiches[2] = {FERRY, FERRY_FULL};
    for (int w = 0; w < 2; w++) {
        const ns_dataset *D = &DS[whiches[w]];
        const ns_dataset *ds[1] = {D};
        int64_t K = D->plan_problem.shape[0], T = ns_dataset_ntransitions(D);
        const int64_t *po = D->plan_offsets.data, *pt = D->plan_transitions.data;
        for (int pool = 8; pool <= 128; pool *= 16) {
            ns_split sp;
            ns_error e;
            if (make1(&sp, whiches[w], NS_PROTO_PLAN_VARIANT, pool, 9, &e) != NS_OK) {
                printf("  %s\n", e.msg);
                CHECK(0);
                continue;
            }
            CHECK(sp.test.n > 0 && sp.train.n > 0);
            int dups;
            uint8_t **m = mark_sides(&sp, ds, 1, &dups);
            CHECK_EQ_INT(dups, 0);
            /* a plan fully inside train ∪ dev is a training plan; their union is train ∪ dev */
            uint8_t *on_plan = calloc((size_t)T + 1, 1), *covered = calloc((size_t)T + 1, 1);
            for (int64_t k = 0; k < K; k++) {
                bool inside = true;
                for (int64_t j = po[k]; j < po[k + 1]; j++) {
                    on_plan[pt[j]] = 1;
                    inside = inside && (m[0][pt[j]] == 1 || m[0][pt[j]] == 2);
                }
                if (inside)
                    for (int64_t j = po[k]; j < po[k + 1]; j++) covered[pt[j]] = 1;
            }
            int64_t bad_test = 0, bad_train = 0;
            for (int64_t t = 0; t < T; t++) {
                if (m[0][t] == 3 && !on_plan[t]) bad_test++;
                if ((m[0][t] == 1 || m[0][t] == 2) != (covered[t] == 1)) bad_train++;
            }
            CHECK_EQ_INT(bad_test, 0);
            CHECK_EQ_INT(bad_train, 0);
            free(on_plan);
            free(covered);
            free_sides(m, 1);
            /* pools: same-depth DAG states of the problem first, then the rest of it */
            int bad = 0;
            int64_t rows_group_only = 0, rows_fallback = 0;
            for (int64_t i = 0; i < sp.test.n && bad < 5; i++) {
                const int32_t *tr = ns_dataset_transition(D, sp.test.ref[2 * i + 1]);
                const int64_t *row = sp.pools + (size_t)i * (size_t)pool;
                const int32_t *g = D->state_g.data;
                const ns_ds_problem *pr = &D->problems[tr[0]];
                int64_t G = 0;
                for (int64_t s = pr->state_offset; s < pr->state_offset + pr->nstates; s++)
                    G += s != tr[3] && on_dag(D, s) && g[s] == g[tr[3]];
                int len = pool_len(&sp, i);
                int64_t ingroup = G < pool - 1 ? G : pool - 1;
                bool ok = row[0] == tr[3];
                for (int j = 1; j < len; j++) {
                    bool grp = on_dag(D, row[j]) && g[row[j]] == g[tr[3]];
                    ok = ok && (j <= ingroup ? grp : !grp);
                }
                if (G >= pool - 1) rows_group_only++;
                else rows_fallback++;
                if (!ok) {
                    printf("  plan-variant pool %lld: group %lld, len %d\n", (long long)i, (long long)G, len);
                    bad++;
                }
            }
            CHECK(bad == 0);
            if (getenv("NS_TEST_VERBOSE"))
                printf("  plan-variant w%d pool %d: %lld rows inside the group, %lld with fallback\n", w, pool,
                       (long long)rows_group_only, (long long)rows_fallback);
            if (pool == 8) CHECK(rows_group_only > 0);
            CHECK(rows_fallback > 0);
            check_pools(&sp, ds, 1);
            /* the held-out plans, recomputed from the seed: every test transition lies on one, and
             * every step of one is in a list (test, or train / dev where a training plan shares it:
             * a held-out plan may be a new sequence of seen steps) */
            ns_refs held;
            CHECK(ns_split_test_plans(&sp, ds, 1, &held, &e) == NS_OK);
            CHECK(held.n > 0);
            uint8_t *on_held = calloc((size_t)T + 1, 1);
            int64_t unlisted = 0;
            m = mark_sides(&sp, ds, 1, &dups);
            for (int64_t i = 0; i < held.n; i++) {
                int64_t k = held.ref[2 * i + 1];
                for (int64_t j = po[k]; j < po[k + 1]; j++) {
                    on_held[pt[j]] = 1;
                    unlisted += m[0][pt[j]] == 0; /* a step in no list: a wrong plan id */
                }
            }
            int64_t off_held = 0;
            for (int64_t i = 0; i < sp.test.n; i++) off_held += !on_held[sp.test.ref[2 * i + 1]];
            CHECK_EQ_INT(off_held, 0);
            CHECK_EQ_INT(unlisted, 0);
            free_sides(m, 1);
            free(on_held);
            free(held.ref);
            /* the pools the split draws for any transition: the stored ones for its test list */
            int64_t *again = ns_split_pools_for(&sp, ds, &sp.test);
            CHECK(again && !memcmp(again, sp.pools, sizeof(int64_t) * (size_t)sp.test.n * (size_t)pool));
            free(again);
            /* … and for the dev list with another size and seed: by the same rules (same-depth group
             * first), other draws */
            if (sp.dev.n > 0) {
                const int P2 = 6;
                int64_t *dv = ns_split_pools_draw(&sp, ds, &sp.dev, P2, 99);
                int64_t grouped = 0, bad_dev = 0;
                const int32_t *g = D->state_g.data;
                for (int64_t i = 0; i < sp.dev.n; i++) {
                    const int32_t *tr = ns_dataset_transition(D, sp.dev.ref[2 * i + 1]);
                    const int64_t *row = dv + (size_t)i * P2;
                    const ns_ds_problem *pr = &D->problems[tr[0]];
                    int64_t G = 0;
                    for (int64_t st = pr->state_offset; st < pr->state_offset + pr->nstates; st++)
                        G += st != tr[3] && on_dag(D, st) && g[st] == g[tr[3]];
                    bad_dev += row[0] != tr[3];
                    if (G < P2 - 1) continue;
                    grouped++;
                    for (int j = 1; j < P2; j++) bad_dev += !(on_dag(D, row[j]) && g[row[j]] == g[tr[3]]);
                }
                CHECK_EQ_INT(bad_dev, 0);
                if (pool == 8) CHECK(grouped > 0);
                int64_t *dv2 = ns_split_pools_draw(&sp, ds, &sp.dev, P2, 100);
                CHECK(memcmp(dv, dv2, sizeof(int64_t) * (size_t)sp.dev.n * P2) != 0);
                free(dv), free(dv2);
            }
            ns_split_free(&sp);
        }
    }
    /* problems with a single distinct plan take no part */
    ns_split sp;
    ns_error e;
    CHECK(make1(&sp, FERRY, NS_PROTO_PLAN_VARIANT, 0, 1, &e) == NS_OK);
    int64_t *nplans = calloc((size_t)DS[FERRY].nproblems, sizeof(int64_t));
    for (int64_t k = 0; k < DS[FERRY].plan_problem.shape[0]; k++) nplans[((int32_t *)DS[FERRY].plan_problem.data)[k]]++;
    const ns_refs *lists[3] = {&sp.train, &sp.dev, &sp.test};
    for (int l = 0; l < 3; l++)
        for (int64_t i = 0; i < lists[l]->n; i++) CHECK(nplans[ns_dataset_transition(&DS[FERRY], lists[l]->ref[2 * i + 1])[0]] >= 2);
    CHECK(sp.pools == NULL && sp.pool_size == 0);
    free(nplans);
    ns_split_free(&sp);
    /* no plans at all: a clear error; with replacement is refused */
    CHECK(make1(&sp, NODATA, NS_PROTO_PLAN_VARIANT, 16, 1, &e) == NS_ERR_INPUT);
    CHECK(strstr(e.msg, "--plans") != NULL);
    const ns_dataset *ds[1] = {&DS[FERRY]};
    ns_split_opts o = {NS_PROTO_PLAN_VARIANT, 0, 0, 16, true, 1};
    CHECK(ns_split_make(&sp, ds, 1, &o, &e) == NS_ERR_USAGE);
}

/* Each problem's transitions all on one side (train and dev count as one
 * when merge_dev); returns false when mixed. */
static bool problem_sides(const ns_split *sp, const ns_dataset *const *ds, int n, int d, uint8_t *pside, bool merge_dev)
{
    int dups;
    uint8_t **m = mark_sides(sp, ds, n, &dups);
    bool ok = dups == 0;
    memset(pside, 0, (size_t)ds[d]->nproblems);
    for (int64_t t = 0; t < ns_dataset_ntransitions(ds[d]); t++) {
        int p = ns_dataset_transition(ds[d], t)[0];
        uint8_t s = merge_dev && m[d][t] == 2 ? 1 : m[d][t];
        if (!s) ok = false;
        if (pside[p] && pside[p] != s) ok = false;
        pside[p] = s;
    }
    free_sides(m, n);
    return ok;
}

/* (1) extrapolation: problems never straddle train/dev/test; pools per problem. */
static void test_extrapolation(void)
{
    int whiches[3] = {FERRY, BLOCKS, SMALL3};
    for (int w = 0; w < 3; w++) {
        const ns_dataset *ds[1] = {&DS[whiches[w]]};
        for (uint64_t seed = 1; seed <= 4; seed++) {
            ns_split sp;
            ns_error e;
            if (make1(&sp, whiches[w], NS_PROTO_EXTRAPOLATION, 16 + 56 * (int)seed, seed, &e) != NS_OK) {
                printf("  %s\n", e.msg);
                CHECK(0);
                continue;
            }
            uint8_t pside[64];
            bool small = whiches[w] == SMALL3; /* two training problems: dev from their transitions */
            CHECK(problem_sides(&sp, ds, 1, 0, pside, small));
            int np = ds[0]->nproblems, cnt[4] = {0, 0, 0, 0};
            for (int p = 0; p < np; p++) cnt[pside[p]]++;
            int E = np - cnt[0]; /* problems with transitions */
            CHECK_EQ_INT(cnt[3], llround(0.2 * E) < 1 ? 1 : llround(0.2 * E));
            if (!small) CHECK_EQ_INT(cnt[2], 1);                            /* dev: held-out training problems */
            else CHECK(E - cnt[3] == 2 && cnt[2] == 0 && sp.dev.n > 0); /* dev: training transitions */
            CHECK(sorted_refs(&sp.test));
            check_pools(&sp, ds, 1);
            ns_split_free(&sp);
        }
    }
    /* one problem is not enough */
    ns_split sp;
    ns_error e;
    CHECK(make1(&sp, NODATA, NS_PROTO_EXTRAPOLATION, 16, 1, &e) == NS_ERR_INPUT);
    CHECK(strstr(e.msg, "two problems") != NULL);
}

/* (6) multi-domain, cross-domain, leave-one-out over ferry, blocksworld, gripper. */
static void test_multi_dataset(void)
{
    const ns_dataset *ds[3] = {&DS[FERRY], &DS[BLOCKS], &DS[GRIPPER]};
    ns_split sp, one;
    ns_error e;
    ns_split_opts o = {NS_PROTO_MULTI_DOMAIN, 0, 0, 64, false, 3};
    CHECK(ns_split_make(&sp, ds, 3, &o, &e) == NS_OK);
    for (int d = 0; d < 3; d++) {
        uint8_t pside[64];
        CHECK(problem_sides(&sp, ds, 3, d, pside, false));
        int cnt[4] = {0, 0, 0, 0};
        for (int p = 0; p < ds[d]->nproblems; p++) cnt[pside[p]]++;
        CHECK(cnt[3] >= 1 && cnt[1] >= 1);
    }
    check_pools(&sp, ds, 1);
    /* dataset 0's part is its extrapolation split with the same seed */
    CHECK(make1(&one, FERRY, NS_PROTO_EXTRAPOLATION, 64, 3, &e) == NS_OK);
    int64_t n0 = 0;
    for (int64_t i = 0; i < sp.test.n; i++) n0 += sp.test.ref[2 * i] == 0;
    CHECK_EQ_INT(n0, one.test.n);
    CHECK(n0 == one.test.n && !memcmp(sp.test.ref, one.test.ref, sizeof(int64_t) * 2 * (size_t)n0));
    CHECK(!memcmp(sp.pools, one.pools, sizeof(int64_t) * 64 * (size_t)n0));
    ns_split_free(&one);
    ns_split_free(&sp);

    o.protocol = NS_PROTO_CROSS_DOMAIN;
    CHECK(ns_split_make(&sp, ds, 3, &o, &e) == NS_ERR_USAGE);
    CHECK(ns_split_make(&sp, ds, 2, &o, &e) == NS_OK);
    CHECK_EQ_INT(sp.test.n, ns_dataset_ntransitions(ds[1]));
    CHECK_EQ_INT(sp.train.n + sp.dev.n, ns_dataset_ntransitions(ds[0]));
    for (int64_t i = 0; i < sp.test.n; i++) CHECK(sp.test.ref[2 * i] == 1);
    for (int64_t i = 0; i < sp.train.n; i++) CHECK(sp.train.ref[2 * i] == 0);
    CHECK_EQ_INT(sp.dev.n, llround(0.1 * (double)ns_dataset_ntransitions(ds[0])));
    check_pools(&sp, ds, 0);
    ns_split_free(&sp);

    o.protocol = NS_PROTO_LEAVE_ONE_OUT;
    CHECK(ns_split_make(&sp, ds, 3, &o, &e) == NS_OK);
    int dups;
    uint8_t **m = mark_sides(&sp, ds, 3, &dups);
    CHECK_EQ_INT(dups, 0);
    for (int d = 0; d < 3; d++)
        for (int64_t t = 0; t < ns_dataset_ntransitions(ds[d]); t++)
            CHECK(d == 2 ? m[d][t] == 3 : (m[d][t] == 1 || m[d][t] == 2));
    free_sides(m, 3);
    for (int64_t i = 0; i < sp.test.n; i++) CHECK(sp.test.ref[2 * i] == 2);
    check_pools(&sp, ds, 0);
    ns_split_free(&sp);

    o.protocol = NS_PROTO_INTERPOLATION;
    CHECK(ns_split_make(&sp, ds, 2, &o, &e) == NS_ERR_USAGE);
    o.protocol = NS_PROTO_LEAVE_ONE_OUT;
    CHECK(ns_split_make(&sp, ds, 1, &o, &e) == NS_ERR_USAGE);
    /* bad options */
    o.protocol = NS_PROTO_INTERPOLATION;
    o.test_frac = 1.5;
    CHECK(ns_split_make(&sp, ds, 1, &o, &e) == NS_ERR_USAGE);
    o.test_frac = 0;
    o.pool_size = -1;
    CHECK(ns_split_make(&sp, ds, 1, &o, &e) == NS_ERR_USAGE);
    /* no dev list */
    o.pool_size = 4;
    o.dev_frac = -1;
    CHECK(ns_split_make(&sp, ds, 1, &o, &e) == NS_OK);
    CHECK_EQ_INT(sp.dev.n, 0);
    CHECK(sp.dev_frac < 0);
    ns_split_free(&sp);
}

/* (5) same seed, same bytes; another seed, other bytes; load round trip. */
static void test_determinism_roundtrip(void)
{
    const ns_dataset *ds[3] = {&DS[FERRY], &DS[BLOCKS], &DS[GRIPPER]};
    const char *dirs[3] = {DIRS[FERRY], DIRS[BLOCKS], DIRS[GRIPPER]};
    for (int p = 0; p < 6; p++) {
        int n = p == NS_PROTO_MULTI_DOMAIN || p == NS_PROTO_LEAVE_ONE_OUT ? 3 : p == NS_PROTO_CROSS_DOMAIN ? 2 : 1;
        char d[3][400];
        for (int k = 0; k < 3; k++) {
            snprintf(d[k], sizeof d[k], "%s/split_%d_%d", tmpdir, p, k);
            ns_split sp;
            ns_error e;
            ns_split_opts o = {(ns_protocol)p, 0, 0, 32, false, k == 2 ? 2 : 1};
            CHECK(ns_split_make(&sp, ds, n, &o, &e) == NS_OK);
            if (ns_split_save(&sp, dirs, d[k], &e) != NS_OK) printf("  save: %s: %s\n", e.file, e.msg);
            if (k == 0) {
                ns_split back;
                if (ns_split_load(&back, d[k], &e) != NS_OK) printf("  load: %s: %s\n", e.file, e.msg);
                else {
                    CHECK(back.protocol == sp.protocol && back.seed == sp.seed && back.ndatasets == n);
                    CHECK(back.pool_size == 32 && back.test_frac == sp.test_frac && back.dev_frac == sp.dev_frac);
                    CHECK(back.train.n == sp.train.n && back.dev.n == sp.dev.n && back.test.n == sp.test.n);
                    CHECK(!memcmp(back.train.ref, sp.train.ref, sizeof(int64_t) * 2 * (size_t)sp.train.n));
                    CHECK(!memcmp(back.test.ref, sp.test.ref, sizeof(int64_t) * 2 * (size_t)sp.test.n));
                    CHECK(!memcmp(back.pools, sp.pools, sizeof(int64_t) * 32 * (size_t)sp.test.n));
                    CHECK_STR(back.sources[n - 1].dir, dirs[n - 1]);
                    CHECK_STR(back.sources[0].domain, "ferry");
                    CHECK(ns_split_check(&back, ds, n, &e) == NS_OK);
                    /* against other data: refused */
                    const ns_dataset *other[3] = {&DS[GRIPPER], &DS[FERRY], &DS[BLOCKS]};
                    CHECK(ns_split_check(&back, other, n, &e) == NS_ERR_INPUT);
                    ns_split_free(&back);
                }
            }
            ns_split_free(&sp);
        }
        int same = 0, differ = 0;
        for (int i = 0; i < NFILES; i++) {
            char a[500], b[500], c[500];
            snprintf(a, sizeof a, "%s/%s", d[0], FILES[i]);
            snprintf(b, sizeof b, "%s/%s", d[1], FILES[i]);
            snprintf(c, sizeof c, "%s/%s", d[2], FILES[i]);
            same += ns_test_files_equal(a, b);
            differ += !ns_test_files_equal(a, c);
        }
        if (same != NFILES) printf("  %s: only %d of %d files identical\n", ns_protocol_name((ns_protocol)p), same, NFILES);
        CHECK_EQ_INT(same, NFILES);
        CHECK(differ >= 2); /* split.json (seed) and at least the pools */
    }
}

/* (7) truncated or corrupted files give an error naming the file. */
static void test_corruption(void)
{
    char d[400];
    snprintf(d, sizeof d, "%s/split_%d_0", tmpdir, NS_PROTO_INTERPOLATION);
    for (int i = 0; i < NFILES; i++) {
        char f[500];
        snprintf(f, sizeof f, "%s/%s", d, FILES[i]);
        char *orig;
        size_t n;
        ns_error e;
        CHECK(ns_read_file(f, &orig, &n, &e) == NS_OK);
        for (int variant = 0; variant < 3; variant++) {
            if (variant == 0) CHECK(ns_write_file_atomic(f, orig, n / 2, &e) == NS_OK);
            else {
                char *bad = malloc(n);
                memcpy(bad, orig, n);
                bad[variant == 1 ? n - 2 : n - 9] ^= 0x5a;
                CHECK(ns_write_file_atomic(f, bad, n, &e) == NS_OK);
                free(bad);
            }
            ns_split sp;
            ns_status st = ns_split_load(&sp, d, &e);
            if (st == NS_OK) {
                printf("  %s variant %d loaded\n", FILES[i], variant);
                ns_split_free(&sp);
            }
            CHECK(st != NS_OK);
            if (!strstr(e.file, FILES[i]) && !strstr(e.msg, FILES[i])) printf("  %s: %s: %s\n", FILES[i], e.file, e.msg);
            CHECK(strstr(e.file, FILES[i]) != NULL || strstr(e.msg, FILES[i]) != NULL);
        }
        CHECK(ns_write_file_atomic(f, orig, n, &e) == NS_OK);
        free(orig);
    }
    ns_split sp;
    ns_error e;
    CHECK(ns_split_load(&sp, d, &e) == NS_OK);
    ns_split_free(&sp);
    char missing[500];
    snprintf(missing, sizeof missing, "%s/nope", tmpdir);
    CHECK(ns_split_load(&sp, missing, &e) == NS_ERR_IO);
    CHECK(ns_split_load(&sp, DIRS[FERRY], &e) != NS_OK); /* a dataset is not a split */
}

/* (8) the first paper's Blocksworld size split: 9/3/3/20. */
static void test_size_splits(void)
{
    const char *bench = ns_test_benchmarks();
    char root[600];
    snprintf(root, sizeof root, "%s/seedA/pddl/blocks", bench);
    char **names[4];
    int n[4];
    ns_error e;
    CHECK(ns_size_split_read(root, names, n, &e) == NS_OK);
    CHECK(n[0] == 9 && n[1] == 3 && n[2] == 3 && n[3] == 20);
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < n[k]; i++) {
            CHECK(strstr(names[k][i], ns_size_split_name(k)) != NULL);
            CHECK(strstr(names[k][i], ".pddl") != NULL);
            if (i) CHECK(strcmp(names[k][i - 1], names[k][i]) < 0);
        }
    CHECK(n[0] > 0 && strstr(names[0][0], "probBLOCKS-4-0.pddl") != NULL);
    ns_size_split_free(names, n);
    CHECK(names[0] == NULL && n[3] == 0);
    snprintf(root, sizeof root, "%s/seedA/pddl", bench);
    CHECK(ns_size_split_read(root, names, n, &e) == NS_ERR_IO);
    CHECK(strstr(e.file, "train") != NULL);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ns_test_split_%ld", (long)getpid());
    ns_gen_arg fe[] = {{"cars", 3}, {"locations", 3}};
    ns_gen_arg bw[] = {{"blocks", 4}};
    ns_gen_arg gr[] = {{"balls", 3}};
    ns_gen_arg fe1[] = {{"cars", 1}, {"locations", 2}};
    bool ok = build(FERRY, "ferry", fe, 2, 6, NS_SPACE_OPTIMAL, 16) && build(BLOCKS, "blocksworld", bw, 1, 5, NS_SPACE_OPTIMAL, 8) &&
              build(GRIPPER, "gripper", gr, 1, 4, NS_SPACE_OPTIMAL, 8) && build(FERRY_FULL, "ferry", fe, 2, 3, NS_SPACE_FULL, 16) &&
              build(SMALL3, "ferry", fe, 2, 3, NS_SPACE_OPTIMAL, 4) && build(NODATA, "ferry", fe1, 2, 1, NS_SPACE_OPTIMAL, 0);
    CHECK(ok);
    if (ok) {
        NS_RUN(test_names);
        NS_RUN(test_interpolation);
        NS_RUN(test_plan_variant);
        NS_RUN(test_extrapolation);
        NS_RUN(test_multi_dataset);
        NS_RUN(test_determinism_roundtrip);
        NS_RUN(test_corruption);
    } else {
        ns_t_fail++;
    }
    if (ns_test_benchmarks()) NS_RUN(test_size_splits);
    else NS_SKIP(test_size_splits, "benchmarks absent");
    for (int i = 0; i < NDS; i++) ns_dataset_free(&DS[i]);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) printf("could not remove %s\n", tmpdir);
    return ns_test_summary("test_split");
}
