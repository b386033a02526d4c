/* test_encoders.c — the encoder interface (encoders.h): every registered
 * encoder fits on a split's training transitions, encodes every state (and
 * action) of a generated ferry dataset, and round-trips its fit through a
 * file to identical rows; the built-in one gives exactly the rows of
 * ns_builtin_* fitted by ns_builtin_fit_split; imported features come back as
 * written; unknown names, unfitted encoders and a fit of the wrong side are
 * clear errors.  ns_train_touch agrees with a direct count. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "nextstate/core/gen.h"
#include "nextstate/data/dataset.h"
#include "nextstate/data/split.h"
#include "nextstate/encode/builtin.h"
#include "nextstate/encode/encoders.h"
#include "nextstate/util/npy.h"
#include "test.h"

static char tmpdir[256];
static ns_dataset DS;
static bool have_ds;
static const ns_dataset *DSP[1] = {&DS};
static ns_split SP;

static bool build(void)
{
    ns_error e;
    enum { NP = 4 };
    char *paths[NP];
    bool ok = true;
    for (int i = 0; i < NP; i++) {
        ns_buf b;
        ns_buf_init(&b);
        char name[32];
        snprintf(name, sizeof name, "p%d", i);
        ns_gen_arg a[1] = {{"cars", 2 + i % 2}};
        ok = ok && ns_gen_problem("ferry", a, 1, (uint64_t)i + 11, name, &b, &e) == NS_OK;
        paths[i] = malloc(512);
        snprintf(paths[i], 512, "%s/%s.pddl", tmpdir, name);
        if (ok) ok = ns_write_file_atomic(paths[i], b.data, b.len, &e) == NS_OK;
        ns_buf_free(&b);
    }
    ns_dataset_opts o = {NS_SPACE_OPTIMAL, 0, 4, 7, 0, false, false};
    if (ok) ok = ns_dataset_build(&DS, "domains/ferry/domain.pddl", (const char *const *)paths, NP, &o, &e) == NS_OK;
    for (int i = 0; i < NP; i++) free(paths[i]);
    if (!ok) {
        printf("  building the dataset: %s\n", e.msg);
        return false;
    }
    ns_split_opts so = {0};
    so.protocol = NS_PROTO_INTERPOLATION;
    so.pool_size = 16;
    so.seed = 1;
    if (ns_split_make(&SP, DSP, 1, &so, &e) != NS_OK) {
        printf("  split: %s\n", e.msg);
        ns_dataset_free(&DS);
        return false;
    }
    return true;
}

static bool features_equal(const ns_features *a, const ns_features *b)
{
    if (a->nrows != b->nrows || a->dim != b->dim || a->sparse != b->sparse) return false;
    if (!a->sparse) return !memcmp(a->dense, b->dense, (size_t)(a->nrows * a->dim) * sizeof(float));
    if (a->csr.nnz != b->csr.nnz) return false;
    return !memcmp(a->csr.indptr, b->csr.indptr, (size_t)(a->nrows + 1) * sizeof *a->csr.indptr) &&
           !memcmp(a->csr.indices, b->csr.indices, (size_t)a->csr.nnz * sizeof *a->csr.indices) &&
           !memcmp(a->csr.values, b->csr.values, (size_t)a->csr.nnz * sizeof *a->csr.values);
}

static void test_touch(void)
{
    if (!have_ds) return;
    ns_train_touch t;
    ns_train_touch_init(&t, SP.train.ref, SP.train.n, 0, &DS);
    CHECK_EQ_INT(t.ntrans, SP.train.n);
    uint8_t *mark = calloc((size_t)ns_dataset_nstates(&DS), 1);
    for (int64_t i = 0; i < SP.train.n; i++) {
        const int32_t *tr = ns_dataset_transition(&DS, SP.train.ref[2 * i + 1]);
        mark[tr[1]] = mark[tr[3]] = 1;
        CHECK(t.problem[tr[0]]);
    }
    int64_t n = 0;
    for (int64_t s = 0; s < ns_dataset_nstates(&DS); s++) n += mark[s];
    CHECK_EQ_INT(t.nstates, n);
    CHECK(n < ns_dataset_nstates(&DS)); /* the split holds states back */
    for (int64_t i = 0; i < t.nstates; i++) CHECK(mark[t.states[i]] && (i == 0 || t.states[i - 1] < t.states[i]));
    CHECK(t.nactions > 0 && t.nactions <= t.ntrans);
    free(mark);
    ns_train_touch_free(&t);
    /* another dataset index touches nothing */
    ns_train_touch_init(&t, SP.train.ref, SP.train.n, 1, &DS);
    CHECK_EQ_INT(t.ntrans, 0);
    CHECK_EQ_INT(t.nstates, 0);
    ns_train_touch_free(&t);
}

static void test_builtin_same_rows(void)
{
    if (!have_ds) return;
    ns_vocab sv, av;
    ns_vocab_init(&sv);
    ns_vocab_init(&av);
    ns_builtin_fit_split(&sv, &av, DSP, 1, &SP);
    ns_features ref[2];
    ns_builtin_states(&ref[0], &DS, &sv);
    ns_builtin_actions(&ref[1], &DS, &av);
    ns_error e;
    for (int side = 0; side < 2; side++) {
        ns_enc enc;
        CHECK(ns_enc_init(&enc, "builtin", (ns_enc_side)side, &e) == NS_OK);
        CHECK(ns_enc_fit(&enc, DSP, 1, &SP, &e) == NS_OK);
        ns_features f;
        CHECK(ns_enc_encode(&enc, &DS, 0, &f, &e) == NS_OK);
        CHECK(features_equal(&f, &ref[side]));
        ns_features_free(&f);
        ns_enc_free(&enc);
        ns_features_free(&ref[side]);
    }
    ns_vocab_free(&sv);
    ns_vocab_free(&av);
}

/* every fitting type: fit, encode, save, load into a fresh one, same rows */
static void test_round_trips(void)
{
    if (!have_ds) return;
    int n;
    const ns_enc_type *const *types = ns_enc_types(&n);
    CHECK(n >= 9);
    ns_error e;
    for (int i = 0; i < n; i++) {
        if (!types[i]->fits) continue;
        for (int side = 0; side < 2; side++) {
            ns_enc a, b;
            CHECK(ns_enc_init(&a, types[i]->name, (ns_enc_side)side, &e) == NS_OK);
            ns_features f, g;
            CHECK(ns_enc_encode(&a, &DS, 0, &f, &e) == NS_ERR_USAGE); /* not fitted */
            ns_status st = ns_enc_fit(&a, DSP, 1, &SP, &e);
            if (st != NS_OK) printf("  %s side %d: %s\n", types[i]->name, side, e.msg);
            CHECK(st == NS_OK);
            if (st != NS_OK) {
                ns_enc_free(&a);
                continue;
            }
            CHECK(ns_enc_encode(&a, &DS, 0, &f, &e) == NS_OK);
            int64_t *off = ns_action_offsets(&DS);
            int64_t rows = side ? off[DS.nproblems] : ns_dataset_nstates(&DS);
            free(off);
            CHECK_EQ_INT(f.nrows, rows);
            CHECK(f.dim > 0);
            char path[400];
            snprintf(path, sizeof path, "%s/%s-%d.json", tmpdir, types[i]->name, side);
            CHECK(ns_enc_save(&a, path, &e) == NS_OK);
            CHECK(ns_enc_init(&b, types[i]->name, (ns_enc_side)side, &e) == NS_OK);
            CHECK(ns_enc_load(&b, path, &e) == NS_OK);
            CHECK(ns_enc_encode(&b, &DS, 0, &g, &e) == NS_OK);
            CHECK(features_equal(&f, &g));
            ns_features_free(&g);
            ns_enc_free(&b);
            /* a fit of one side is refused for the other */
            CHECK(ns_enc_init(&b, types[i]->name, (ns_enc_side)!side, &e) == NS_OK);
            CHECK(ns_enc_load(&b, path, &e) == NS_ERR_INPUT);
            ns_enc_free(&b);
            ns_features_free(&f);
            ns_enc_free(&a);
        }
    }
}

static void test_npy_and_errors(void)
{
    if (!have_ds) return;
    ns_error e;
    ns_enc enc;
    CHECK(ns_enc_init(&enc, "no-such-encoder", NS_ENC_STATES, &e) == NS_ERR_USAGE);
    CHECK(strstr(e.msg, "builtin") && strstr(e.msg, "tfidf"));
    int64_t N = ns_dataset_nstates(&DS), shape[2] = {N, 3};
    ns_array x;
    ns_array_init(&x, NS_F32, 2, shape);
    for (int64_t i = 0; i < 3 * N; i++) ((float *)x.data)[i] = (float)i * 0.5f;
    char path[400];
    snprintf(path, sizeof path, "%s/x.npy", tmpdir);
    CHECK(ns_npy_write(path, &x, NULL, &e) == NS_OK);
    CHECK(ns_enc_init(&enc, "npy", NS_ENC_STATES, &e) == NS_OK);
    enc.spec = path;
    CHECK(ns_enc_fit(&enc, DSP, 1, &SP, &e) == NS_OK); /* nothing to fit */
    ns_features f;
    CHECK(ns_enc_encode(&enc, &DS, 0, &f, &e) == NS_OK);
    CHECK(f.nrows == N && f.dim == 3 && !f.sparse && !memcmp(f.dense, x.data, (size_t)(3 * N) * sizeof(float)));
    ns_features_free(&f);
    CHECK(ns_enc_encode(&enc, &DS, 1, &f, &e) == NS_ERR_USAGE); /* one spec, no second dataset */
    CHECK(ns_enc_save(&enc, path, &e) == NS_ERR_USAGE);
    ns_enc_free(&enc);
    ns_array_free(&x);
}

/* the neural text encoder with the tiny test model (a 16-piece window): prompts
 * are chunked, so the states of one problem keep distinct rows (truncated
 * to 16 pieces they would all read the same header) */
static void test_embed(void)
{
    if (!have_ds) return;
    ns_error e;
    ns_enc enc;
    CHECK(ns_enc_init(&enc, "embed", NS_ENC_STATES, &e) == NS_OK);
    ns_features f;
    CHECK(ns_enc_encode(&enc, &DS, 0, &f, &e) == NS_ERR_USAGE); /* no model folder */
    enc.spec = "tests/fixtures/bert/tiny-bert";
    ns_status st = ns_enc_encode(&enc, &DS, 0, &f, &e);
    if (st) printf("  embed: %s\n", e.msg);
    CHECK(st == NS_OK);
    if (st == NS_OK) {
        CHECK(f.nrows == ns_dataset_nstates(&DS) && !f.sparse && f.dim > 0);
        const ns_ds_problem *pr = &DS.problems[0];
        int64_t same = 0;
        for (int64_t s = pr->state_offset + 1; s < pr->state_offset + pr->nstates; s++)
            same += ns_features_rows_equal(&f, pr->state_offset, s);
        CHECK(pr->nstates > 2);
        CHECK_EQ_INT(same, 0);
        ns_features_free(&f);
    }
    ns_enc_free(&enc);
    CHECK(ns_enc_init(&enc, "embed", NS_ENC_ACTIONS, &e) == NS_OK);
    enc.spec = "tests/fixtures/bert/tiny-bert";
    CHECK(ns_enc_encode(&enc, &DS, 0, &f, &e) == NS_OK);
    int64_t *off = ns_action_offsets(&DS);
    CHECK_EQ_INT(f.nrows, off[DS.nproblems]);
    free(off);
    ns_features_free(&f);
    enc.spec = "/nonexistent/model";
    CHECK(ns_enc_encode(&enc, &DS, 0, &f, &e) != NS_OK);
    ns_enc_free(&enc);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ns_test_encoders_%d", (int)getpid());
    ns_error e;
    ns_mkdir_p(tmpdir, &e);
    have_ds = build();
    if (!have_ds) printf("FAIL dataset\n");
    NS_RUN(test_touch);
    NS_RUN(test_builtin_same_rows);
    NS_RUN(test_round_trips);
    NS_RUN(test_npy_and_errors);
    NS_RUN(test_embed);
    if (have_ds) {
        ns_split_free(&SP);
        ns_dataset_free(&DS);
    }
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) printf("  could not remove %s\n", tmpdir);
    if (!have_ds) ns_t_fail++;
    return ns_test_summary("test_encoders");
}
