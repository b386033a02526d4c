/* test_reference.c — reference methods (reference.h) on generated ferry and
 * logistics datasets: lifted STRIPS induction is exact (Hit@1 = 1 under
 * interpolation and extrapolation, no disagreements), identity ranks the
 * current state above a different true successor, and the offsets match a
 * hand computation on a three-transition toy training list. */
#include <stdio.h>
#include <string.h>
#include "nextstate/data/dataset.h"
#include "nextstate/core/gen.h"
#include "nextstate/eval/reference.h"
#include "nextstate/data/split.h"
#include "nextstate/learn/world.h"
#include "test.h"

typedef struct fixture {
    ns_dataset ds;
    const ns_dataset *dp[1];
    bool ok;
} fixture;

static bool build(fixture *f, const char *tmp, const char *domain, const char *domfile, ns_gen_arg *a, int na)
{
    char pdir[400];
    snprintf(pdir, sizeof pdir, "%s/%s", tmp, domain);
    ns_error e;
    ns_mkdir_p(pdir, &e);
    enum { NP = 6 };
    char *paths[NP];
    bool ok = true;
    for (int i = 0; i < NP; i++) {
        ns_buf b;
        ns_buf_init(&b);
        char name[32];
        snprintf(name, sizeof name, "p%d", i);
        ok = ok && ns_gen_problem(domain, a, na, (uint64_t)i + 1, name, &b, &e) == NS_OK;
        paths[i] = malloc(512);
        snprintf(paths[i], 512, "%s/%s.pddl", pdir, name);
        if (ok) ok = ns_write_file_atomic(paths[i], b.data, b.len, &e) == NS_OK;
        ns_buf_free(&b);
    }
    ns_dataset_opts o = {NS_SPACE_OPTIMAL, 0, 8, 7, 0, false, false};
    if (ok) ok = ns_dataset_build(&f->ds, domfile, (const char *const *)paths, NP, &o, &e) == NS_OK;
    if (!ok) printf("  building %s: %s: %s\n", domain, e.file, e.msg);
    for (int i = 0; i < NP; i++) free(paths[i]);
    f->dp[0] = &f->ds;
    f->ok = ok;
    return ok;
}

static bool split(fixture *f, ns_split *sp, ns_protocol p)
{
    ns_split_opts o = {0};
    o.protocol = p;
    o.pool_size = 128;
    o.seed = 1;
    ns_error e;
    if (ns_split_make(sp, f->dp, 1, &o, &e) != NS_OK) {
        printf("  split: %s\n", e.msg);
        return false;
    }
    return true;
}

static bool builtin_inputs(fixture *f, const ns_split *sp, ns_world_inputs *in)
{
    ns_vocab sv, av;
    ns_vocab_init(&sv);
    ns_vocab_init(&av);
    ns_builtin_fit_split(&sv, &av, f->dp, 1, sp);
    ns_error e;
    bool ok = ns_world_inputs_load(in, f->dp, 1, "builtin", "builtin", &sv, &av, &e) == NS_OK;
    if (!ok) printf("  inputs: %s\n", e.msg);
    ns_vocab_free(&sv);
    ns_vocab_free(&av);
    return ok;
}

static fixture FERRY, LOG;

static void run_method(fixture *f, ns_protocol p, ns_ref_method m, ns_eval_result *r, int64_t *disagree)
{
    ns_split sp;
    ns_world_inputs in;
    memset(&in, 0, sizeof in);
    memset(r, 0, sizeof *r);
    if (!split(f, &sp, p)) {
        CHECK(false);
        return;
    }
    CHECK(builtin_inputs(f, &sp, &in));
    ns_ref_model *rm = NULL;
    ns_error e;
    CHECK(ns_ref_fit(&rm, m, &in, &sp.train, &e) == NS_OK);
    if (rm) {
        CHECK(ns_ref_eval(rm, &sp.test, sp.pools, sp.pool_size, 1, r, &e) == NS_OK);
        if (disagree) *disagree = ns_ref_disagreements(rm);
        printf("  %s %s %s: n %lld Hit@1 %.3f Hit@5 %.3f Hit@10 %.3f (worst %.3f %.3f %.3f)\n", f->ds.domain_name,
               ns_protocol_name(p), ns_ref_method_name(m), (long long)r->n, r->hit[0], r->hit[1], r->hit[2],
               r->hit_worst[0], r->hit_worst[1], r->hit_worst[2]);
    }
    ns_ref_free(rm);
    ns_world_inputs_free(&in);
    ns_split_free(&sp);
}

static void test_strips_exact(void)
{
    fixture *fs[2] = {&FERRY, &LOG};
    for (int k = 0; k < 2; k++) {
        if (!fs[k]->ok) {
            CHECK(false);
            continue;
        }
        ns_protocol ps[2] = {NS_PROTO_INTERPOLATION, NS_PROTO_EXTRAPOLATION};
        for (int j = 0; j < 2; j++) {
            ns_eval_result r;
            int64_t dis = -1;
            run_method(fs[k], ps[j], NS_REF_STRIPS, &r, &dis);
            CHECK(r.n > 0);
            CHECK(r.hit[0] == 1.0);
            CHECK(r.hit_worst[0] == 1.0);
            CHECK_EQ_INT(dis, 0);
        }
    }
}

static void test_all_methods_report(void)
{
    fixture *fs[2] = {&FERRY, &LOG};
    for (int k = 0; k < 2; k++) {
        if (!fs[k]->ok) continue;
        ns_protocol ps[2] = {NS_PROTO_INTERPOLATION, NS_PROTO_EXTRAPOLATION};
        for (int j = 0; j < 2; j++)
            for (int m = NS_REF_IDENTITY; m <= NS_REF_OFFSET_SCHEMA; m++) {
                ns_eval_result r;
                run_method(fs[k], ps[j], (ns_ref_method)m, &r, NULL);
                CHECK(r.n > 0);
                CHECK(r.hit[0] <= r.hit[1] && r.hit[1] <= r.hit[2]);
                CHECK(r.hit_worst[1] <= r.hit[1]); /* worst rank ≥ random rank per query */
            }
    }
}

/* A transition whose successor differs from its state: identity puts s
 * first, so the truth is second. */
static void test_identity_pool(void)
{
    if (!FERRY.ok) {
        CHECK(false);
        return;
    }
    ns_split sp;
    if (!split(&FERRY, &sp, NS_PROTO_INTERPOLATION)) return;
    ns_world_inputs in;
    memset(&in, 0, sizeof in);
    CHECK(builtin_inputs(&FERRY, &sp, &in));
    ns_ref_model *rm = NULL;
    ns_error e;
    CHECK(ns_ref_fit(&rm, NS_REF_IDENTITY, &in, &sp.train, &e) == NS_OK);
    int64_t t = sp.test.ref[1];
    const int32_t *tr = ns_dataset_transition(&FERRY.ds, t);
    CHECK(tr[1] != tr[3]);
    int64_t refs[2] = {0, t};
    ns_refs q = {refs, 1};
    int64_t pool[3] = {tr[3], tr[1], -1};
    ns_eval_result r;
    CHECK(ns_ref_eval(rm, &q, pool, 3, 1, &r, &e) == NS_OK);
    CHECK(r.hit[0] == 0 && r.hit_worst[0] == 0);
    CHECK(r.hit[1] == 1 && r.hit_worst[1] == 1);
    CHECK(fabs(r.mrr - 0.5) < 1e-12);
    CHECK(r.mean_pool == 2);
    /* the prediction is E(s) */
    float *v = calloc((size_t)in.state.dim, sizeof(float)), *x = calloc((size_t)in.state.dim, sizeof(float));
    CHECK(ns_ref_predict_embedding(rm, 0, t, v));
    ns_csr_row_dense(&in.state.csr, tr[1], x);
    CHECK(memcmp(v, x, (size_t)in.state.dim * sizeof(float)) == 0);
    free(v);
    free(x);
    ns_ref_free(rm);
    ns_world_inputs_free(&in);
    ns_split_free(&sp);
}

/* Offsets on dense features E(s) = (s, 1) and a hand-picked training list:
 * transitions A and B share their ground action, C has another action of
 * A's schema (when ferry offers one) or any other. */
static void test_offset_toy(void)
{
    if (!FERRY.ok) {
        CHECK(false);
        return;
    }
    const ns_dataset *ds = &FERRY.ds;
    int64_t T = ns_dataset_ntransitions(ds), A = -1, B = -1, C = -1, Q = -1;
#define OPTEXT(t) (ds->problems[ns_dataset_transition(ds, t)[0]].ops[ns_dataset_transition(ds, t)[2]])
    for (int64_t i = 0; i < T && B < 0; i++)
        for (int64_t j = i + 1; j < T; j++)
            if (!strcmp(OPTEXT(i), OPTEXT(j))) {
                A = i, B = j;
                break;
            }
    CHECK(A >= 0 && B >= 0);
    if (B < 0) return;
    char schema[64];
    sscanf(OPTEXT(A), "(%63[^ )]", schema);
    for (int64_t i = 0; i < T && (C < 0 || Q < 0); i++) {
        if (!strcmp(OPTEXT(i), OPTEXT(A))) continue;
        char s2[64];
        sscanf(OPTEXT(i), "(%63[^ )]", s2);
        if (C < 0 && !strcmp(s2, schema)) C = i;
        else if (Q < 0 && strcmp(s2, schema)) Q = i; /* another schema: unseen under both keys */
    }
    CHECK(C >= 0 && Q >= 0);
    if (C < 0 || Q < 0) return;
    int64_t N = ns_dataset_nstates(ds);
    ns_features sf = {0};
    sf.nrows = N;
    sf.dim = 2;
    sf.dense = malloc((size_t)N * 2 * sizeof(float));
    for (int64_t s = 0; s < N; s++) sf.dense[2 * s] = (float)s, sf.dense[2 * s + 1] = 1;
    ns_vocab sv, av;
    ns_vocab_init(&sv);
    ns_vocab_init(&av);
    ns_builtin_fit(&sv, &av, ds, NULL);
    ns_vocab_sort(&av);
    ns_features af;
    ns_builtin_actions(&af, ds, &av);
    ns_world_inputs in;
    ns_error e;
    CHECK(ns_world_inputs_init(&in, FERRY.dp, 1, &sf, &af, &e) == NS_OK);
    int64_t tr_refs[6] = {0, A, 0, B, 0, C};
    ns_refs train = {tr_refs, 3};
#define DISP(t) ((double)ns_dataset_transition(ds, t)[3] - (double)ns_dataset_transition(ds, t)[1])
#define SRC(t) ((double)ns_dataset_transition(ds, t)[1])
    double dA = DISP(A), dB = DISP(B), dC = DISP(C);
    float v[2];
    ns_ref_model *rm = NULL;
    CHECK(ns_ref_fit(&rm, NS_REF_OFFSET_ACTION, &in, &train, &e) == NS_OK);
    CHECK(ns_ref_predict_embedding(rm, 0, A, v));
    CHECK(fabs(v[0] - (SRC(A) + (dA + dB) / 2)) < 1e-3 && v[1] == 1);
    CHECK(ns_ref_predict_embedding(rm, 0, C, v));
    CHECK(fabs(v[0] - (SRC(C) + dC)) < 1e-3 && v[1] == 1);
    CHECK(ns_ref_predict_embedding(rm, 0, Q, v)); /* unseen: the global mean */
    CHECK(fabs(v[0] - (SRC(Q) + (dA + dB + dC) / 3)) < 1e-3 && v[1] == 1);
    ns_ref_free(rm);
    CHECK(ns_ref_fit(&rm, NS_REF_OFFSET_SCHEMA, &in, &train, &e) == NS_OK);
    CHECK(ns_ref_predict_embedding(rm, 0, C, v));
    CHECK(fabs(v[0] - (SRC(C) + (dA + dB + dC) / 3)) < 1e-3);
    CHECK(ns_ref_predict_embedding(rm, 0, Q, v));
    CHECK(fabs(v[0] - (SRC(Q) + (dA + dB + dC) / 3)) < 1e-3);
    ns_ref_free(rm);
    ns_world_inputs_free(&in);
    ns_vocab_free(&sv);
    ns_vocab_free(&av);
}

/* STRIPS predicts exactly the successor's atoms; an unseen schema is a miss. */
static void test_strips_atoms(void)
{
    if (!FERRY.ok) {
        CHECK(false);
        return;
    }
    ns_split sp;
    if (!split(&FERRY, &sp, NS_PROTO_INTERPOLATION)) return;
    ns_world_inputs in;
    memset(&in, 0, sizeof in);
    CHECK(builtin_inputs(&FERRY, &sp, &in));
    ns_ref_model *rm = NULL;
    ns_error e;
    CHECK(ns_ref_fit(&rm, NS_REF_STRIPS, &in, &sp.train, &e) == NS_OK);
    CHECK_EQ_INT(ns_ref_nschemas(rm), 3);
    int64_t t = sp.test.ref[1];
    const int32_t *tr = ns_dataset_transition(&FERRY.ds, t);
    char **atoms;
    int n = ns_ref_predict_atoms(rm, 0, t, &atoms);
    const ns_ds_problem *P = &FERRY.ds.problems[tr[0]];
    const uint64_t *bits = ns_dataset_state(&FERRY.ds, tr[3]);
    int want = 0;
    for (int a = 0; a < P->natoms; a++) want += (int)(bits[a / 64] >> (a % 64) & 1);
    CHECK_EQ_INT(n, want);
    for (int i = 0; i < n; i++) {
        int id = -1;
        for (int a = 0; a < P->natoms; a++)
            if (!strcmp(P->atoms[a], atoms[i])) id = a;
        CHECK(id >= 0 && (bits[id / 64] >> (id % 64) & 1));
    }
    ns_ref_atoms_free(atoms, n);
    ns_ref_free(rm);
    /* an empty training list: every schema unseen, every query a miss */
    ns_refs none = {NULL, 0};
    CHECK(ns_ref_fit(&rm, NS_REF_STRIPS, &in, &none, &e) == NS_OK);
    CHECK_EQ_INT(ns_ref_predict_atoms(rm, 0, t, &atoms), -1);
    ns_eval_result r;
    CHECK(ns_ref_eval(rm, &sp.test, sp.pools, sp.pool_size, 1, &r, &e) == NS_OK);
    CHECK(r.hit[2] == 0 && r.hit_worst[2] == 0 && r.mrr == 0);
    ns_ref_free(rm);
    ns_world_inputs_free(&in);
    ns_split_free(&sp);
}

int main(void)
{
    char tmp[] = "/tmp/ns_reference_XXXXXX";
    if (!mkdtemp(tmp)) return 1;
    ns_gen_arg fa[1] = {{"cars", 3}};
    ns_gen_arg la[1] = {{"packages", 3}};
    build(&FERRY, tmp, "ferry", "domains/ferry/domain.pddl", fa, 1);
    build(&LOG, tmp, "logistics", "domains/logistics/domain.pddl", la, 1);
    NS_RUN(test_strips_exact);
    NS_RUN(test_all_methods_report);
    NS_RUN(test_identity_pool);
    NS_RUN(test_offset_toy);
    NS_RUN(test_strips_atoms);
    if (FERRY.ok) ns_dataset_free(&FERRY.ds);
    if (LOG.ok) ns_dataset_free(&LOG.ds);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd)) printf("  could not remove %s\n", tmp);
    return ns_test_summary("test_reference");
}
