/* test_wl.c — WL features: bit-exact agreement with the first paper's golden
 * vectors (shared benchmarks, skipped when absent), invariance under object
 * renaming and fact order, vocabulary fitting / save / load round trips
 * (both key spellings), clear errors on broken vocabularies, and action
 * encodings. */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include "nextstate/core/gen.h"
#include "nextstate/util/npy.h"
#include "nextstate/core/plan.h"
#include "nextstate/encode/wl.h"
#include "seeda.h"
#include "test.h"

static char tmpdir[256];

/* Compares one split of one domain with the golden vectors; returns the
 * number of mismatching rows (goal rows counted in *goal_bad). */
static int golden_split(const char *B, const char *dom, const char *split, const ns_wl_vocab *v, bool statics,
                        int *nvec, int *nprob, int *goal_bad, int *errors)
{
    char gdir[600], dpath[600];
    snprintf(gdir, sizeof gdir, "%s/seedA/encodings/graphs/%s/%s", B, dom, split);
    snprintf(dpath, sizeof dpath, "%s/seedA/pddl/%s/domain.pddl", B, dom);
    int n;
    char **stems = list_stems(gdir, ".npy", "_goal", &n);
    *nvec = *nprob = *goal_bad = 0;
    int bad = 0, D = ns_wl_vocab_dim(v);
    float *row = malloc(sizeof(float) * (size_t)D);
    for (int i = 0; i < n; i++) {
        char pp[900], pl[900], gf[900], gg[900];
        snprintf(pp, sizeof pp, "%s/seedA/pddl/%s/%s/%s.pddl", B, dom, split, stems[i]);
        snprintf(pl, sizeof pl, "%s/seedA/plans/%s/%s/%s.plan", B, dom, split, stems[i]);
        snprintf(gf, sizeof gf, "%s/%s.npy", gdir, stems[i]);
        snprintf(gg, sizeof gg, "%s/%s_goal.npy", gdir, stems[i]);
        loaded L;
        ns_array gold = {0}, goal = {0};
        ns_error e;
        if (!load_traj(&L, dpath, pp, pl) || ns_npy_read(gf, &gold, NULL, &e) != NS_OK ||
            ns_npy_read(gg, &goal, NULL, &e) != NS_OK) {
            (*errors)++;
            free_traj(&L);
            continue;
        }
        ns_wl_opts o;
        ns_wl_opts_default(&o);
        o.statics = statics;
        ns_wl_encoder enc;
        if (ns_wl_encoder_init(&enc, v, &L.t, &o, &e) != NS_OK) {
            printf("  %s: %s\n", pp, e.msg);
            (*errors)++;
        } else if (gold.ndim != 2 || gold.shape[1] != D || gold.shape[0] != L.nstates) {
            printf("  %s: golden shape %lldx%lld, expected %dx%d\n", gf, (long long)gold.shape[0],
                   (long long)(gold.ndim > 1 ? gold.shape[1] : 0), L.nstates, D);
            (*errors)++;
        } else {
            for (int s = 0; s < L.nstates; s++) {
                ns_wl_features_dense(&enc, L.states + (size_t)s * (size_t)L.t.nwords, row);
                if (!row_equal(&gold, s, row, D)) bad++;
                (*nvec)++;
            }
            ns_wl_goal_features_dense(&enc, row);
            if (goal.shape[0] != D || !row_equal(&goal, 0, row, D)) (*goal_bad)++;
            (*nprob)++;
        }
        ns_wl_encoder_free(&enc);
        ns_array_free(&gold);
        ns_array_free(&goal);
        free_traj(&L);
    }
    free(row);
    free_stems(stems, n);
    return bad;
}

/* ---- golden vectors ---------------------------------------------------- */

static void test_golden_vectors(void)
{
    const char *B = ns_test_benchmarks();
    int total_bad = 0, total_goal_bad = 0, errors = 0, total_vec = 0;
    for (int di = 0; di < 4; di++) {
        char vp[600];
        snprintf(vp, sizeof vp, "%s/seedA/encodings/models/%s_wl.json", B, DOMS[di]);
        ns_wl_vocab v;
        ns_error e;
        if (ns_wl_vocab_load(&v, vp, NS_WL_KEYS_AUTO, &e) != NS_OK) {
            printf("  %s: %s\n", vp, e.msg);
            errors++;
            continue;
        }
        for (int si = 0; si < 4; si++) {
            int nvec, nprob, gbad, nvec2, nprob2, gbad2;
            int bad = golden_split(B, DOMS[di], SPLITS[si], &v, true, &nvec, &nprob, &gbad, &errors);
            if (!nprob) continue;
            /* the same with statics out, for the record (not required to match) */
            int bad_out = golden_split(B, DOMS[di], SPLITS[si], &v, false, &nvec2, &nprob2, &gbad2, &errors);
            printf("  %-25s %-19s %4d problems %5d vectors: %d mismatching, goal %d  (statics out: %d, goal %d)\n",
                   DOMS[di], SPLITS[si], nprob, nvec, bad, gbad, bad_out, gbad2);
            total_bad += bad;
            total_goal_bad += gbad;
            total_vec += nvec;
        }
        ns_wl_vocab_free(&v);
    }
    printf("  WL golden: %d vectors, %d mismatching, %d goal mismatching, %d errors\n", total_vec, total_bad,
           total_goal_bad, errors);
    CHECK(total_vec > 0);
    CHECK_EQ_INT(total_bad, 0);
    CHECK_EQ_INT(total_goal_bad, 0);
    CHECK_EQ_INT(errors, 0);
}

/* Fitting on the paper's training trajectories (problems in file-name order,
 * states along the plans, statics in) gives the paper's vocabulary: same
 * keys, same ids. */
static void test_fit_reproduces_paper_vocab(void)
{
    const char *B = ns_test_benchmarks();
    for (int di = 0; di < 4; di++) {
        char vp[600], dp[600], pdir[600];
        snprintf(vp, sizeof vp, "%s/seedA/encodings/models/%s_wl.json", B, DOMS[di]);
        snprintf(dp, sizeof dp, "%s/seedA/pddl/%s/domain.pddl", B, DOMS[di]);
        snprintf(pdir, sizeof pdir, "%s/seedA/pddl/%s/train", B, DOMS[di]);
        ns_wl_vocab paper, fit;
        ns_error e;
        if (ns_wl_vocab_load(&paper, vp, NS_WL_KEYS_AUTO, &e) != NS_OK) {
            CHECK(0);
            continue;
        }
        ns_domain dom;
        CHECK(ns_domain_read(&dom, dp, &e) == NS_OK);
        ns_wl_vocab_init(&fit, &dom, 2, true);
        ns_wl_fitter f;
        ns_wl_fit_init(&f, &fit);
        int n;
        char **stems = list_stems(pdir, ".pddl", NULL, &n);
        loaded *Ls = calloc((size_t)n, sizeof(loaded));
        ns_wl_encoder *encs = calloc((size_t)n, sizeof(ns_wl_encoder));
        for (int i = 0; i < n; i++) {
            char pp[900], pl[900];
            snprintf(pp, sizeof pp, "%s/%s.pddl", pdir, stems[i]);
            snprintf(pl, sizeof pl, "%s/seedA/plans/%s/train/%s.plan", B, DOMS[di], stems[i]);
            CHECK(load_traj(&Ls[i], dp, pp, pl));
            CHECK(ns_wl_encoder_init(&encs[i], &fit, &Ls[i].t, NULL, &e) == NS_OK);
            for (int s = 0; s < Ls[i].nstates; s++)
                ns_wl_fit_add_state(&f, &encs[i], Ls[i].states + (size_t)s * (size_t)Ls[i].t.nwords);
        }
        CHECK(ns_wl_fit_finish(&f, &e) == NS_OK);
        int same_ids = ns_wl_vocab_equal(&fit, &paper);
        printf("  %-25s fitted %d colours (paper %d): %s\n", DOMS[di], fit.ncolours, paper.ncolours,
               same_ids ? "identical vocabulary" : "DIFFERENT");
        CHECK(same_ids);
        for (int i = 0; i < n; i++) {
            ns_wl_encoder_free(&encs[i]);
            free_traj(&Ls[i]);
        }
        free(encs);
        free(Ls);
        free_stems(stems, n);
        ns_wl_fit_free(&f);
        ns_wl_vocab_free(&fit);
        ns_wl_vocab_free(&paper);
        ns_domain_free(&dom);
    }
}

/* ---- order invariance -------------------------------------------------- */

/* Writes problem p with object i renamed to names[i] (problem objects only),
 * objects declared in order decl[], init facts in order init_order[]. */
static void write_problem(const ns_domain *d, const ns_problem *p, char **names, const int *decl,
                          const int *init_order, ns_buf *b)
{
    ns_buf_printf(b, "(define (problem %s) (:domain %s)\n (:objects", p->name, d->name);
    for (int k = d->nconstants; k < p->nobjects; k++) {
        int i = decl[k - d->nconstants];
        ns_buf_printf(b, " %s - %s", names[i], d->types[p->object_types[i]].name);
    }
    ns_buf_puts(b, ")\n (:init");
    for (int k = 0; k < p->ninit; k++) {
        const ns_ground_atom *a = &p->init[init_order[k]];
        ns_buf_printf(b, " (%s", d->preds[a->pred].name);
        for (int j = 0; j < a->nargs; j++) ns_buf_printf(b, " %s", names[a->args[j]]);
        ns_buf_putc(b, ')');
    }
    ns_buf_puts(b, ")\n (:goal (and");
    for (int k = 0; k < p->ngoal; k++) {
        const ns_lit *l = &p->goal[k];
        ns_buf_printf(b, l->neg ? " (not (%s" : " (%s", l->pred == NS_PRED_EQUAL ? "=" : d->preds[l->pred].name);
        for (int j = 0; j < l->nargs; j++) ns_buf_printf(b, " %s", names[l->args[j]]);
        ns_buf_puts(b, l->neg ? "))" : ")");
    }
    ns_buf_puts(b, ")))\n");
}

static bool rows_same(const int *i1, const float *v1, int n1, const int *i2, const float *v2, int n2)
{
    if (n1 != n2) return false;
    for (int k = 0; k < n1; k++)
        if (i1[k] != i2[k] || v1[k] != v2[k]) return false;
    return true;
}

static void invariance_case(const char *domain, const ns_gen_arg *ga, int nga, uint64_t seed, bool multiset)
{
    char dpath[300], ppath[600], qpath[600];
    snprintf(dpath, sizeof dpath, "domains/%s/domain.pddl", domain);
    snprintf(ppath, sizeof ppath, "%s/%s-orig.pddl", tmpdir, domain);
    snprintf(qpath, sizeof qpath, "%s/%s-renamed.pddl", tmpdir, domain);
    ns_error e;
    ns_buf b;
    ns_buf_init(&b);
    CHECK(ns_gen_problem(domain, ga, nga, seed, "inv", &b, &e) == NS_OK);
    CHECK(ns_write_file_atomic(ppath, b.data, b.len, &e) == NS_OK);
    ns_buf_free(&b);
    loaded A;
    CHECK(load_traj(&A, dpath, ppath, NULL));
    const ns_problem *p = &A.p;
    /* a random permutation of the problem objects' names, a shuffled
     * declaration order and a shuffled init */
    ns_rng r;
    ns_rng_seed(&r, seed * 7 + 1);
    int nc = A.d.nconstants, no = p->nobjects - nc;
    int *perm = malloc(sizeof(int) * (size_t)(no + 1)), *decl = malloc(sizeof(int) * (size_t)(no + 1));
    int *io = malloc(sizeof(int) * (size_t)(p->ninit + 1));
    for (int i = 0; i < no; i++) perm[i] = decl[i] = nc + i;
    for (int i = 0; i < p->ninit; i++) io[i] = i;
    ns_rng_shuffle_int(&r, perm, (size_t)no);
    ns_rng_shuffle_int(&r, decl, (size_t)no);
    ns_rng_shuffle_int(&r, io, (size_t)p->ninit);
    char **names = malloc(sizeof(char *) * (size_t)(p->nobjects + 1));
    for (int i = 0; i < p->nobjects; i++) names[i] = p->objects[i < nc ? i : perm[i - nc]];
    ns_buf_init(&b);
    write_problem(&A.d, p, names, decl, io, &b);
    CHECK(ns_write_file_atomic(qpath, b.data, b.len, &e) == NS_OK);
    ns_buf_free(&b);
    loaded Bt;
    CHECK(load_traj(&Bt, dpath, qpath, NULL));
    int *omap = malloc(sizeof(int) * (size_t)(p->nobjects + 1));
    for (int i = 0; i < p->nobjects; i++) omap[i] = ns_problem_find_object(&Bt.p, names[i]);

    /* a random walk in A, mirrored in B */
    enum { STEPS = 40 };
    int W1 = A.t.nwords, W2 = Bt.t.nwords;
    ns_word *s1 = calloc((size_t)(STEPS + 1) * (size_t)W1, sizeof(ns_word));
    ns_word *s2 = calloc((size_t)(STEPS + 1) * (size_t)W2, sizeof(ns_word));
    int *ops1 = malloc(sizeof(int) * STEPS), *ops2 = malloc(sizeof(int) * STEPS);
    memcpy(s1, A.t.init, sizeof(ns_word) * (size_t)W1);
    memcpy(s2, Bt.t.init, sizeof(ns_word) * (size_t)W2);
    int *app = malloc(sizeof(int) * (size_t)(A.t.nops + 1));
    int len = 0;
    for (; len < STEPS; len++) {
        int na = 0;
        for (int o = 0; o < A.t.nops; o++)
            if (ns_task_applicable(&A.t, o, s1 + (size_t)len * (size_t)W1)) app[na++] = o;
        if (!na) break;
        int op = app[ns_rng_below(&r, (uint64_t)na)];
        const ns_op *o = &A.t.ops[op];
        int args[NS_MAX_ARITY], np = A.d.actions[o->schema].nparams;
        for (int k = 0; k < np; k++) args[k] = omap[ns_op_args(&A.t, o)[k]];
        int op2 = ns_task_find_op(&Bt.t, o->schema, args, np);
        CHECK(op2 >= 0);
        if (op2 < 0) break;
        ops1[len] = op;
        ops2[len] = op2;
        ns_task_apply(&A.t, op, s1 + (size_t)len * (size_t)W1, s1 + (size_t)(len + 1) * (size_t)W1);
        ns_task_apply(&Bt.t, op2, s2 + (size_t)len * (size_t)W2, s2 + (size_t)(len + 1) * (size_t)W2);
    }
    /* vocabulary fitted on A's walk (so every layer has seen colours) */
    ns_wl_vocab v;
    ns_wl_vocab_init(&v, &A.d, 2, multiset);
    ns_wl_fitter f;
    ns_wl_fit_init(&f, &v);
    ns_wl_encoder ea, eb;
    CHECK(ns_wl_encoder_init(&ea, &v, &A.t, NULL, &e) == NS_OK);
    for (int i = 0; i <= len; i += 2) ns_wl_fit_add_state(&f, &ea, s1 + (size_t)i * (size_t)W1);
    ns_wl_fit_add_goal(&f, &ea);
    CHECK(ns_wl_fit_finish(&f, &e) == NS_OK);
    CHECK(ns_wl_encoder_init(&eb, &v, &Bt.t, NULL, &e) == NS_OK);
    int cap = ns_wl_max_nnz(&ea) > ns_wl_max_nnz(&eb) ? ns_wl_max_nnz(&ea) : ns_wl_max_nnz(&eb);
    int acap = 1 + ea.max_arity * (ea.iterations + 1);
    if (acap > cap) cap = acap;
    int *i1 = malloc(sizeof(int) * (size_t)cap), *i2 = malloc(sizeof(int) * (size_t)cap);
    float *v1 = malloc(sizeof(float) * (size_t)cap), *v2 = malloc(sizeof(float) * (size_t)cap);
    int diff = 0, adiff = 0, unseen_states = 0;
    for (int i = 0; i <= len; i++) {
        int n1 = ns_wl_features(&ea, s1 + (size_t)i * (size_t)W1, i1, v1);
        int n2 = ns_wl_features(&eb, s2 + (size_t)i * (size_t)W2, i2, v2);
        diff += !rows_same(i1, v1, n1, i2, v2, n2);
        float total = 0;
        for (int k = 0; k < n1; k++) total += v1[k];
        if (total < 3.0f * (float)(ea.nobj + ea.ngoal)) unseen_states++;
        if (i < len) {
            n1 = ns_wl_action_features(&ea, ops1[i], i1, v1);
            n2 = ns_wl_action_features(&eb, ops2[i], i2, v2);
            adiff += !rows_same(i1, v1, n1, i2, v2, n2);
        }
    }
    int n1 = ns_wl_goal_features(&ea, i1, v1), n2 = ns_wl_goal_features(&eb, i2, v2);
    diff += !rows_same(i1, v1, n1, i2, v2, n2);
    if (diff || adiff) printf("  %s: %d state rows and %d action rows differ after renaming\n", domain, diff, adiff);
    CHECK(len > 5);
    CHECK_EQ_INT(diff, 0);
    CHECK_EQ_INT(adiff, 0);
    CHECK(unseen_states < len); /* most states have seen colours at every layer */
    free(i1);
    free(i2);
    free(v1);
    free(v2);
    ns_wl_encoder_free(&ea);
    ns_wl_encoder_free(&eb);
    ns_wl_fit_free(&f);
    ns_wl_vocab_free(&v);
    free(app);
    free(s1);
    free(s2);
    free(ops1);
    free(ops2);
    free(omap);
    free(names);
    free(perm);
    free(decl);
    free(io);
    free_traj(&Bt);
    free_traj(&A);
}

static void test_order_invariance(void)
{
    for (uint64_t seed = 1; seed <= 4; seed++) {
        bool ms = seed != 3;
        ns_gen_arg gr[] = {{"balls", 5}};
        invariance_case("gripper", gr, 1, seed, ms);
        ns_gen_arg lo[] = {{"cities", 2}, {"size", 2}, {"airplanes", 1}, {"packages", 3}};
        invariance_case("logistics", lo, 4, seed, ms);
        ns_gen_arg bw[] = {{"blocks", 5}};
        invariance_case("blocksworld", bw, 1, seed, ms);
        ns_gen_arg va[] = {{"x", 3}, {"y", 3}};
        invariance_case("visitall", va, 2, seed, ms);
    }
}

/* ---- incremental encoding ------------------------------------------------ */

/* A random applicable successor of s into s (false at a dead end). */
static bool random_step(const ns_task *t, ns_word *s, ns_rng *r)
{
    int na = 0, *app = malloc(sizeof(int) * ((size_t)t->nops + 1));
    for (int o = 0; o < t->nops; o++)
        if (ns_task_applicable(t, o, s)) app[na++] = o;
    if (na) ns_task_apply(t, app[ns_rng_below(r, (uint64_t)na)], s, s);
    free(app);
    return na > 0;
}

/* ns_wl_features and ns_wl_features_dense (incremental from the previous
 * state the encoder encoded) equal the from-scratch features of a fresh
 * encoder state by state, and so do the object colours, on random walks of generated problems:
 * the vocabulary fitted on one walk (statics in or out, set or multiset), the
 * features checked on another (unseen colours included), with jumps back to
 * earlier states (many atoms changed: the from-scratch fallback), goal
 * features and refinements of other states in between.  The work counted:
 * more for each encoding, and for most steps less than a fresh encoder's
 * (its graph built, the state encoded from scratch). */
static void inc_case(const char *domain, const ns_gen_arg *ga, int nga, uint64_t seed, bool statics, bool ms)
{
    char dpath[300], ppath[600];
    snprintf(dpath, sizeof dpath, "domains/%s/domain.pddl", domain);
    snprintf(ppath, sizeof ppath, "%s/%s-inc.pddl", tmpdir, domain);
    ns_error e;
    ns_buf b;
    ns_buf_init(&b);
    CHECK(ns_gen_problem(domain, ga, nga, seed, "inc", &b, &e) == NS_OK);
    CHECK(ns_write_file_atomic(ppath, b.data, b.len, &e) == NS_OK);
    ns_buf_free(&b);
    loaded A;
    CHECK(load_traj(&A, dpath, ppath, NULL));
    const ns_task *t = &A.t;
    size_t W = (size_t)t->nwords;
    ns_wl_vocab v;
    ns_wl_vocab_init(&v, &A.d, 2, ms);
    ns_wl_opts o;
    ns_wl_opts_default(&o);
    o.statics = statics;
    ns_wl_fitter f;
    ns_wl_fit_init(&f, &v);
    ns_wl_encoder fe;
    CHECK(ns_wl_encoder_init(&fe, &v, t, &o, &e) == NS_OK);
    enum { STEPS = 120 };
    ns_word *walk = malloc(sizeof(ns_word) * W * (STEPS + 1));
    memcpy(walk, t->init, sizeof(ns_word) * W);
    ns_rng r;
    ns_rng_seed(&r, seed);
    for (int i = 0; i < 15; i++) {
        ns_wl_fit_add_state(&f, &fe, walk);
        if (!random_step(t, walk, &r)) break;
    }
    CHECK(ns_wl_fit_finish(&f, &e) == NS_OK);
    ns_wl_fit_free(&f);
    ns_wl_encoder_free(&fe);
    ns_wl_encoder inc, ref;
    CHECK(ns_wl_encoder_init(&inc, &v, t, &o, &e) == NS_OK);
    int D = ns_wl_vocab_dim(&v), cap = ns_wl_max_nnz(&inc) + 1, bad = 0, checked = 0, cheaper = 0;
    int *idx = malloc(sizeof(int) * (size_t)cap);
    float *val = malloc(sizeof(float) * (size_t)cap), *dense = malloc(sizeof(float) * ((size_t)D + 1));
    float *dinc = malloc(sizeof(float) * ((size_t)D + 1));
    memcpy(walk, t->init, sizeof(ns_word) * W);
    ns_rng_seed(&r, seed + 100);
    int len = 0;
    for (int step = 0; step < 2 * STEPS && !bad; step++) {
        const ns_word *s = walk + (size_t)len * W;
        if (step % 9 == 8 && len > 0) s = walk + (size_t)ns_rng_below(&r, (uint64_t)len) * W; /* a jump back */
        if (step % 13 == 5) (void)ns_wl_goal_features(&inc, idx, val);                         /* interleaved */
        if (step % 17 == 3) ns_wl_refine(&inc, walk);
        long w0 = inc.work;
        int n = ns_wl_features(&inc, s, idx, val);
        CHECK(ns_wl_encoder_init(&ref, &v, t, &o, &e) == NS_OK); /* fresh: from scratch */
        ns_wl_features_dense(&ref, s, dense);
        /* the work counted: some for every encoding, less for a step than a fresh encoder's */
        bad |= inc.work <= w0 || ref.work <= 0;
        cheaper += inc.work - w0 < ref.work;
        int nz = 0;
        for (int c = 0; c < D; c++) nz += dense[c] != 0.0f;
        bad |= nz != n;
        for (int k = 0; k < n && !bad; k++) bad |= (k && idx[k] <= idx[k - 1]) || dense[idx[k]] != val[k];
        for (int l = 0; l <= 2 && !bad; l++)
            for (int ob = 0; ob < t->problem->nobjects; ob++)
                bad |= ns_wl_object_colour(&inc, ob, l) != ns_wl_object_colour(&ref, ob, l);
        ns_wl_encoder_free(&ref);
        if (step % 5 == 2) { /* the dense row of the same state, and of the next one */
            ns_wl_features_dense(&inc, s, dinc);
            bad |= memcmp(dinc, dense, sizeof(float) * (size_t)D) != 0;
        }
        checked++;
        if (len < STEPS) {
            memcpy(walk + (size_t)(len + 1) * W, walk + (size_t)len * W, sizeof(ns_word) * W);
            if (random_step(t, walk + (size_t)(len + 1) * W, &r)) len++;
        }
    }
    if (bad) printf("  %s seed %llu statics %d multiset %d: incremental != from scratch at state %d\n", domain,
                    (unsigned long long)seed, statics, ms, checked);
    CHECK(!bad);
    CHECK(checked >= STEPS);
    CHECK(cheaper > checked / 2);
    free(idx), free(val), free(dense), free(dinc), free(walk);
    ns_wl_encoder_free(&inc);
    ns_wl_vocab_free(&v);
    free_traj(&A);
}

static void test_incremental_features(void)
{
    for (uint64_t seed = 1; seed <= 3; seed++)
        for (int k = 0; k < 4; k++) {
            bool statics = k & 1, ms = !(k & 2);
            ns_gen_arg gr[] = {{"balls", 6}};
            inc_case("gripper", gr, 1, seed, statics, ms);
            ns_gen_arg lo[] = {{"cities", 3}, {"size", 2}, {"airplanes", 1}, {"packages", 4}};
            inc_case("logistics", lo, 4, seed, statics, ms);
            ns_gen_arg bw[] = {{"blocks", 7}};
            inc_case("blocksworld", bw, 1, seed, statics, ms);
            ns_gen_arg va[] = {{"x", 4}, {"y", 3}};
            inc_case("visitall", va, 2, seed, statics, ms);
        }
}

/* ---- vocabulary files -------------------------------------------------- */

static void fit_small(ns_wl_vocab *v, loaded *L, bool multiset)
{
    ns_error e;
    ns_buf b;
    ns_buf_init(&b);
    ns_gen_arg gr[] = {{"balls", 4}};
    char pp[600];
    snprintf(pp, sizeof pp, "%s/grip.pddl", tmpdir);
    CHECK(ns_gen_problem("gripper", gr, 1, 11, "g", &b, &e) == NS_OK);
    CHECK(ns_write_file_atomic(pp, b.data, b.len, &e) == NS_OK);
    ns_buf_free(&b);
    CHECK(load_traj(L, "domains/gripper/domain.pddl", pp, NULL));
    ns_wl_vocab_init(v, &L->d, 2, multiset);
    ns_wl_fitter f;
    ns_wl_fit_init(&f, v);
    ns_wl_encoder enc;
    CHECK(ns_wl_encoder_init(&enc, v, &L->t, NULL, &e) == NS_OK);
    ns_word *s = malloc(sizeof(ns_word) * (size_t)L->t.nwords);
    memcpy(s, L->t.init, sizeof(ns_word) * (size_t)L->t.nwords);
    ns_rng r;
    ns_rng_seed(&r, 5);
    for (int i = 0; i < 30; i++) {
        ns_wl_fit_add_state(&f, &enc, s);
        int app[4096], na = 0;
        for (int o = 0; o < L->t.nops && na < 4096; o++)
            if (ns_task_applicable(&L->t, o, s)) app[na++] = o;
        if (!na) break;
        ns_task_apply(&L->t, app[ns_rng_below(&r, (uint64_t)na)], s, s);
    }
    free(s);
    CHECK(ns_wl_fit_finish(&f, &e) == NS_OK);
    ns_wl_fit_free(&f);
    ns_wl_encoder_free(&enc);
}

static void test_vocab_roundtrip(void)
{
    for (int ms = 0; ms < 2; ms++) {
        ns_wl_vocab v, w, x;
        loaded L;
        fit_small(&v, &L, ms);
        CHECK(v.ncolours > 20);
        char p1[600], p2[600];
        snprintf(p1, sizeof p1, "%s/vocab-flat.json", tmpdir);
        snprintf(p2, sizeof p2, "%s/vocab-triples.json", tmpdir);
        ns_error e;
        CHECK(ns_wl_vocab_save(&v, p1, NS_WL_KEYS_FLAT, &e) == NS_OK);
        CHECK(ns_wl_vocab_save(&v, p2, NS_WL_KEYS_TRIPLES, &e) == NS_OK);
        CHECK(ns_wl_vocab_load(&w, p1, NS_WL_KEYS_AUTO, &e) == NS_OK);
        CHECK(ns_wl_vocab_load(&x, p2, NS_WL_KEYS_TRIPLES, &e) == NS_OK);
        CHECK(ns_wl_vocab_equal(&v, &w));
        CHECK(ns_wl_vocab_equal(&v, &x));
        CHECK_EQ_INT(w.multiset, ms);
        /* same features from the loaded copy */
        ns_wl_encoder a, c;
        CHECK(ns_wl_encoder_init(&a, &v, &L.t, NULL, &e) == NS_OK);
        CHECK(ns_wl_encoder_init(&c, &x, &L.t, NULL, &e) == NS_OK);
        float *ra = malloc(sizeof(float) * (size_t)v.ncolours), *rc = malloc(sizeof(float) * (size_t)v.ncolours);
        ns_wl_features_dense(&a, L.t.init, ra);
        ns_wl_features_dense(&c, L.t.init, rc);
        CHECK(memcmp(ra, rc, sizeof(float) * (size_t)v.ncolours) == 0);
        /* the sparse row is the dense row's nonzeros, indices ascending */
        int *si = malloc(sizeof(int) * (size_t)ns_wl_max_nnz(&a));
        float *sv = malloc(sizeof(float) * (size_t)ns_wl_max_nnz(&a));
        int nnz = ns_wl_features(&a, L.t.init, si, sv), dense_nnz = 0;
        for (int j = 0; j < v.ncolours; j++) dense_nnz += ra[j] != 0.0f;
        CHECK_EQ_INT(nnz, dense_nnz);
        for (int k = 0; k < nnz; k++) CHECK(ra[si[k]] == sv[k] && (k == 0 || si[k - 1] < si[k]));
        free(si);
        free(sv);
        /* saving again gives the same bytes */
        ns_buf b1, b2;
        ns_buf_init(&b1);
        ns_buf_init(&b2);
        ns_wl_vocab_write(&v, NS_WL_KEYS_FLAT, &b1);
        ns_wl_vocab_write(&x, NS_WL_KEYS_FLAT, &b2);
        CHECK(b1.len == b2.len && memcmp(b1.data, b2.data, b1.len) == 0);
        ns_buf_free(&b1);
        ns_buf_free(&b2);
        free(ra);
        free(rc);
        ns_wl_encoder_free(&a);
        ns_wl_encoder_free(&c);
        ns_wl_vocab_free(&v);
        ns_wl_vocab_free(&w);
        ns_wl_vocab_free(&x);
        free_traj(&L);
    }
    /* the paper's files survive a save/load round trip */
    const char *B = ns_test_benchmarks();
    if (!B) return;
    for (int di = 0; di < 4; di++) {
        char vp[600], out[600];
        snprintf(vp, sizeof vp, "%s/seedA/encodings/models/%s_wl.json", B, DOMS[di]);
        snprintf(out, sizeof out, "%s/paper.json", tmpdir);
        ns_wl_vocab v, w;
        ns_error e;
        CHECK(ns_wl_vocab_load(&v, vp, NS_WL_KEYS_AUTO, &e) == NS_OK);
        CHECK(ns_wl_vocab_save(&v, out, NS_WL_KEYS_TRIPLES, &e) == NS_OK);
        CHECK(ns_wl_vocab_load(&w, out, NS_WL_KEYS_AUTO, &e) == NS_OK);
        CHECK(ns_wl_vocab_equal(&v, &w));
        ns_wl_vocab_free(&v);
        ns_wl_vocab_free(&w);
    }
}

static void expect_error(const char *text, const char *needle)
{
    ns_wl_vocab v;
    ns_error e;
    ns_error_clear(&e);
    ns_status st = ns_wl_vocab_parse(&v, text, strlen(text), "v.json", NS_WL_KEYS_AUTO, &e);
    char msg[1024];
    ns_error_format(&e, msg, sizeof msg);
    if (st != NS_ERR_INPUT || !strstr(msg, needle)) printf("  expected error with '%s', got %d: %s\n", needle, st, msg);
    CHECK(st == NS_ERR_INPUT);
    CHECK(strstr(msg, needle) != NULL);
    CHECK(strstr(msg, "v.json") != NULL);
}

static void test_vocab_errors(void)
{
    ns_wl_vocab v;
    loaded L;
    fit_small(&v, &L, true);
    ns_buf b;
    ns_buf_init(&b);
    ns_wl_vocab_write(&v, NS_WL_KEYS_FLAT, &b);
    /* truncated at several points */
    for (int k = 1; k <= 4; k++) {
        size_t cut = b.len * (size_t)k / 5;
        char *t = malloc(cut + 1);
        memcpy(t, b.data, cut);
        t[cut] = 0;
        ns_wl_vocab w;
        ns_error e;
        ns_status st = ns_wl_vocab_parse(&w, t, cut, "trunc.json", NS_WL_KEYS_AUTO, &e);
        char msg[1024];
        ns_error_format(&e, msg, sizeof msg);
        if (k == 1) printf("  truncated vocabulary: %s\n", msg);
        CHECK(st == NS_ERR_INPUT);
        CHECK(strstr(msg, "trunc.json:") == msg);
        free(t);
    }
    ns_wl_vocab_free(&v);
    free_traj(&L);
    ns_buf_free(&b);
    const char *dom = "\"domain\": {\"name\": \"d\", \"predicates\": [[\"p\", 2]]}";
    char t[1024];
    snprintf(t, sizeof t, "{%s, \"iterations\": 1, \"multiset_hash\": true}", dom);
    expect_error(t, "colour_hash");
    snprintf(t, sizeof t, "{%s, \"iterations\": 2, \"multiset_hash\": true, \"colour_hash\": [{\"0\": 0}, {}]}", dom);
    expect_error(t, "layers");
    snprintf(t, sizeof t,
             "{%s, \"iterations\": 1, \"multiset_hash\": true, \"colour_hash\": [{\"0\": 0, \"10\": 0}, {}]}", dom);
    expect_error(t, "used twice");
    snprintf(t, sizeof t, "{%s, \"iterations\": 1, \"multiset_hash\": true, \"colour_hash\": [{\"0\": 0}, {\"0.x\": 1}]}",
             dom);
    expect_error(t, "malformed");
    snprintf(t, sizeof t, "{%s, \"iterations\": 1, \"multiset_hash\": true, \"colour_hash\": [{\"0\": 0}, {\"5.1.0\": 1}]}",
             dom);
    expect_error(t, "neither");
    snprintf(t, sizeof t,
             "{%s, \"feature_name\": \"kwl2\", \"iterations\": 1, \"multiset_hash\": true, \"colour_hash\": [{}, {}]}",
             dom);
    expect_error(t, "feature_name");
    ns_error e;
    CHECK(ns_wl_vocab_load(&v, "/nonexistent/v.json", NS_WL_KEYS_AUTO, &e) == NS_ERR_IO);
}

/* ---- keys, hashing, actions ------------------------------------------- */

static void test_keys(void)
{
    int key[8];
    int c[] = {3, 1, 3, 1}, l[] = {1, 0, 1, 0};
    int n = ns_wl_make_key(2, true, c, l, 4, 9, key);
    CHECK_EQ_INT(n, 5);
    CHECK(key[0] == 2 && key[1] == 2 && key[2] == 7 && key[3] == 7 && key[4] == 9);
    n = ns_wl_make_key(2, false, c, l, 4, 9, key);
    CHECK_EQ_INT(n, 3);
    CHECK(key[0] == 2 && key[1] == 7 && key[2] == 9);
    /* the paper's gripper file: a room holding two balls and the robot */
    const char *B = ns_test_benchmarks();
    if (!B) return;
    char vp[600];
    snprintf(vp, sizeof vp, "%s/seedA/encodings/models/gripper_wl.json", B);
    ns_wl_vocab v;
    ns_error e;
    CHECK(ns_wl_vocab_load(&v, vp, NS_WL_KEYS_AUTO, &e) == NS_OK);
    CHECK_EQ_INT(ns_wl_vocab_dim(&v), 302);
    CHECK_EQ_INT(v.radix, 2);
    int k5[] = {5, 5, 6, 14, 0};
    CHECK_EQ_INT(ns_wl_vocab_find(&v, 1, k5, 5), 12);
    ns_wl_vocab_free(&v);
}

static void test_action_features(void)
{
    ns_wl_vocab v;
    loaded L;
    fit_small(&v, &L, true);
    ns_error e;
    ns_wl_encoder enc;
    CHECK(ns_wl_encoder_init(&enc, &v, &L.t, NULL, &e) == NS_OK);
    CHECK_EQ_INT(enc.max_arity, 4); /* pick/drop (?r ?obj ?room ?g) */
    CHECK_EQ_INT(ns_wl_action_dim(&enc), 3 + 4 * v.ncolours);
    ns_wl_refine(&enc, L.t.init);
    /* in the initial state every ball is in the first room and both grippers
     * are free: picking any ball with any gripper looks the same */
    int idx[64], idx2[64];
    float val[64], val2[64];
    int first = -1, same = 0, npick = 0;
    for (int o = 0; o < L.t.nops; o++) {
        if (!ns_task_applicable(&L.t, o, L.t.init)) continue;
        if (strcmp(L.d.actions[L.t.ops[o].schema].name, "pick")) continue;
        npick++;
        int n = ns_wl_action_features(&enc, o, first < 0 ? idx : idx2, first < 0 ? val : val2);
        CHECK_EQ_INT(n, 1 + 4 * 3);
        if (first < 0) first = n;
        else same += rows_same(idx, val, first, idx2, val2, n);
    }
    CHECK(npick >= 4);
    CHECK_EQ_INT(same, npick - 1);
    ns_wl_encoder_free(&enc);
    ns_wl_vocab_free(&v);
    free_traj(&L);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ns_test_wl_%d", (int)getpid());
    ns_error e;
    ns_mkdir_p(tmpdir, &e);
    NS_RUN(test_keys);
    NS_RUN(test_vocab_roundtrip);
    NS_RUN(test_vocab_errors);
    NS_RUN(test_order_invariance);
    NS_RUN(test_incremental_features);
    NS_RUN(test_action_features);
    if (ns_test_benchmarks()) {
        NS_RUN(test_golden_vectors);
        NS_RUN(test_fit_reproduces_paper_vocab);
    } else {
        NS_SKIP(test_golden_vectors, "shared benchmarks absent");
        NS_SKIP(test_fit_reproduces_paper_vocab, "shared benchmarks absent");
    }
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) printf("  could not remove %s\n", tmpdir);
    return ns_test_summary("test_wl");
}
