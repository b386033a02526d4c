/* test_dataset_enc.c — ns_encode_run (dataset_enc.h), `nextstate encode` as a
 * library call, on a generated ferry dataset saved to disk: a fitted WL
 * vocabulary gives one dense row per state and one goal row per problem, the
 * same rows again as CSR and again from the saved vocabulary; the lifted
 * action rows number the applicable pairs and carry the state-action mark;
 * FSF rows have the configured width; iterations above the vocabulary's are
 * a usage error without a file; notes are said only when asked for.
 * ns_featurize_dataset (featurize.h), `nextstate featurize` as a call: the
 * folder's matrix has a row per state (or action, with the action index
 * files), features.json lists every file, a loaded featurizer gives the
 * same rows.  The embed calls: texts from JSON lines (a bad line named),
 * the model folder found or a clear error, and the cache folder computing
 * each text once. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "gen_fixture.h"
#include "nextstate/data/dataset.h"
#include "nextstate/encode/dataset_enc.h"
#include "nextstate/encode/embed.h"
#include "nextstate/encode/featurize.h"
#include "nextstate/util/csr.h"
#include "nextstate/util/npy.h"
#include "test.h"

static char tmpdir[256], dsdir[300];
static ns_dataset DS;
static bool have_ds;

static bool build(void)
{
    ns_error e;
    enum { NP = 3 };
    ns_gen_arg cars = {"cars", 2};
    char **paths = ns_test_gen_problems(tmpdir, "ferry", &cars, 1, NP, 5, true);
    if (!paths) return false;
    ns_dataset_opts o = {NS_SPACE_OPTIMAL, 0, 4, 7, 0, false, false};
    bool ok = ns_dataset_build(&DS, "domains/ferry/domain.pddl", (const char *const *)paths, NP, &o, &e) == NS_OK;
    snprintf(dsdir, sizeof dsdir, "%s/ds", tmpdir);
    if (ok) ok = ns_dataset_save(&DS, dsdir, &e) == NS_OK;
    ns_test_free_paths(paths, NP);
    if (!ok) printf("  building the dataset: %s\n", e.msg);
    return ok;
}

static int nnotes;
static char last_note[1024];
static void count_note(void *ctx, const char *line)
{
    (void)ctx;
    nnotes++;
    snprintf(last_note, sizeof last_note, "%s", line);
}

static char *path(const char *name)
{
    static char p[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
    return p[k];
}

static bool read_f32(const char *file, ns_array *a)
{
    ns_error e;
    return ns_npy_read(file, a, NULL, &e) == NS_OK && a->dtype == NS_F32;
}

static void test_wl_dense_sparse_vocab(void)
{
    if (!have_ds) return;
    ns_encode_opts o;
    ns_encode_opts_init(&o);
    o.dataset = dsdir;
    o.fit = true;
    o.out = path("wl.npy");
    o.goals = path("goals.npy");
    o.note = count_note;
    nnotes = 0;
    ns_error e;
    CHECK(ns_encode_run(&o, &e) == NS_OK);
    CHECK(nnotes == 3); /* fitted …, N states …, wrote … */
    ns_array x = {0}, g = {0}, y = {0};
    CHECK(read_f32(path("wl.npy"), &x));
    CHECK(read_f32(path("goals.npy"), &g));
    CHECK_EQ_INT(x.ndim, 2);
    CHECK_EQ_INT(x.shape[0], ns_dataset_nstates(&DS));
    CHECK_EQ_INT(g.shape[0], DS.nproblems);
    CHECK_EQ_INT(g.shape[1], x.shape[1]);
    int64_t D = x.shape[1];
    for (int64_t r = 0; r < x.shape[0]; r++) {
        double sum = 0;
        for (int64_t j = 0; j < D; j++) sum += ((float *)x.data)[r * D + j];
        CHECK(sum > 0);
    }
    /* the same rows as CSR, quietly */
    o.out = path("wl_sparse");
    o.goals = NULL;
    o.note = NULL;
    o.vocab_out = path("v2.json");
    nnotes = 0;
    CHECK(ns_encode_run(&o, &e) == NS_OK);
    CHECK(nnotes == 0);
    ns_csr m;
    CHECK(ns_csr_load(&m, tmpdir, "wl_sparse", &e) == NS_OK);
    CHECK_EQ_INT(m.nrows, x.shape[0]);
    float *row = malloc(sizeof(float) * (size_t)D);
    bool same = m.ncols == D;
    for (int64_t r = 0; r < m.nrows && same; r++) {
        ns_csr_row_dense(&m, r, row);
        same = !memcmp(row, (float *)x.data + r * D, sizeof(float) * (size_t)D);
    }
    CHECK(same);
    free(row);
    ns_csr_free(&m);
    /* from the saved vocabulary (OUT.vocab.json): the same matrix */
    ns_encode_opts_init(&o);
    o.dataset = dsdir;
    o.vocab = path("wl.vocab.json");
    o.out = path("wl_again.npy");
    CHECK(ns_encode_run(&o, &e) == NS_OK);
    CHECK(read_f32(path("wl_again.npy"), &y));
    CHECK(y.shape[0] == x.shape[0] && y.shape[1] == D &&
          !memcmp(y.data, x.data, sizeof(float) * (size_t)(D * x.shape[0])));
    /* more iterations than the vocabulary has: a usage error, no file */
    o.iterations = 5;
    CHECK(ns_encode_run(&o, &e) == NS_ERR_USAGE);
    CHECK(e.file[0] == 0);
    CHECK(strstr(e.msg, "--iterations 5 exceeds the vocabulary's 2") != NULL);
    ns_array_free(&x);
    ns_array_free(&g);
    ns_array_free(&y);
}

static void test_actions_and_fsf(void)
{
    if (!have_ds) return;
    ns_encode_opts o;
    ns_encode_opts_init(&o);
    o.dataset = dsdir;
    o.fit = true;
    o.out = path("st");
    o.actions = path("act");
    ns_error e;
    CHECK(ns_encode_run(&o, &e) == NS_OK);
    ns_csr m;
    CHECK(ns_csr_load(&m, tmpdir, "act", &e) == NS_OK);
    CHECK_EQ_INT(m.nrows, DS.applicable_ops.shape[0]);
    ns_csr_free(&m);
    char *rows;
    size_t len;
    CHECK(ns_read_file(path("act.rows.json"), &rows, &len, &e) == NS_OK);
    CHECK(strstr(rows, "state-action") != NULL);
    free(rows);
    /* FSF is not a ferry encoding: the loader's error, not a usage one */
    ns_encode_opts_init(&o);
    o.kind = NS_ENCODER_FSF;
    o.dataset = dsdir;
    o.out = path("fsf.npy");
    o.note = count_note;
    CHECK(ns_encode_run(&o, &e) != NS_OK);
    CHECK(e.code != NS_ERR_USAGE);
    CHECK(strstr(last_note, "FSF max_objects") != NULL);
    o.fsf_domain = "nope";
    CHECK(ns_encode_run(&o, &e) == NS_ERR_USAGE);
    CHECK(strstr(e.msg, "unknown --fsf-domain 'nope'") != NULL);
}

static void test_featurize_dataset(void)
{
    if (!have_ds) return;
    ns_featurize_opts o = {.dataset = dsdir, .out = path("fz"), .domains = "domains", .fit_all = true};
    ns_feat_opts_init(&o.feat, NS_FEAT_LITERALS, false);
    ns_featurize_report r;
    ns_error e;
    CHECK(ns_featurize_dataset(&o, NULL, &r, &e) == NS_OK);
    CHECK_STR(r.what, "states");
    CHECK_STR(r.fit_from, "all");
    CHECK_EQ_INT(r.rows, ns_dataset_nstates(&DS));
    CHECK(r.sparse && r.dim > 0 && r.nnz > 0);
    ns_csr m, m2;
    CHECK(ns_csr_load(&m, path("fz"), "states", &e) == NS_OK);
    CHECK_EQ_INT(m.nrows, r.rows);
    CHECK_EQ_INT(m.nnz, r.nnz);
    char *text;
    size_t len;
    CHECK(ns_read_file(path("fz/features.json"), &text, &len, &e) == NS_OK);
    CHECK(strstr(text, "\"states_indptr.npy\"") && strstr(text, "\"featurizer.json\"") &&
          strstr(text, "\"from\": \"all\""));
    free(text);
    /* the saved featurizer, given to the call: the same rows */
    ns_featurizer f;
    CHECK(ns_featurizer_load(&f, path("fz/featurizer.json"), &e) == NS_OK);
    o.out = path("fz2");
    o.vocab = path("fz/featurizer.json");
    o.fit_all = false;
    CHECK(ns_featurize_dataset(&o, &f, &r, &e) == NS_OK);
    CHECK_STR(r.fit_from, "vocab");
    CHECK(ns_csr_load(&m2, path("fz2"), "states", &e) == NS_OK);
    CHECK(m2.nnz == m.nnz && !memcmp(m2.indices, m.indices, sizeof(int32_t) * (size_t)m.nnz));
    ns_featurizer_free(&f);
    ns_csr_free(&m);
    ns_csr_free(&m2);
    /* actions: one row per (problem, operator), with the index files */
    ns_featurize_opts a = {.dataset = dsdir, .out = path("fza"), .domains = "domains", .fit_all = true};
    ns_feat_opts_init(&a.feat, NS_FEAT_LITERALS, true);
    CHECK(ns_featurize_dataset(&a, NULL, &r, &e) == NS_OK);
    CHECK_STR(r.what, "actions");
    int64_t nops = 0;
    for (int p = 0; p < DS.nproblems; p++) nops += DS.problems[p].nops;
    CHECK_EQ_INT(r.rows, nops);
    ns_array off = {0}, ta = {0};
    CHECK(ns_npy_read(path("fza/action_offsets.npy"), &off, NULL, &e) == NS_OK);
    CHECK_EQ_INT(off.shape[0], DS.nproblems + 1);
    CHECK(ns_npy_read(path("fza/transition_action.npy"), &ta, NULL, &e) == NS_OK);
    CHECK_EQ_INT(ta.shape[0], ns_dataset_ntransitions(&DS));
    ns_array_free(&off);
    ns_array_free(&ta);
    /* a dataset that is not there: the loader's error */
    a.dataset = "/nonexistent";
    CHECK(ns_featurize_dataset(&a, NULL, &r, &e) == NS_ERR_IO);
}

static void test_embed_calls(void)
{
    ns_error e;
    const char *good = "\"hello world\"\n\n{\"text\": \"a ferry\"}\n";
    CHECK(ns_write_file_atomic(path("t.jsonl"), good, strlen(good), &e) == NS_OK);
    ns_text_list tl;
    CHECK(ns_text_list_jsonl(&tl, path("t.jsonl"), &e) == NS_OK);
    CHECK_EQ_INT(tl.n, 2);
    CHECK(tl.n == 2 && !strcmp(tl.texts[1], "a ferry") && tl.lens[0] == 11);
    const char *bad = "\"x\"\n[1]\n";
    CHECK(ns_write_file_atomic(path("b.jsonl"), bad, strlen(bad), &e) == NS_OK);
    ns_text_list tb;
    CHECK(ns_text_list_jsonl(&tb, path("b.jsonl"), &e) == NS_ERR_INPUT);
    CHECK_EQ_INT(e.line, 2);
    ns_bert *m = NULL;
    CHECK(ns_embed_model_load(&m, "/nonexistent/model", &e) == NS_ERR_IO);
    CHECK(e.file[0] == 0 && strstr(e.msg, "scripts/fetch_models.sh") != NULL);
    if (ns_embed_model_load(&m, "tests/fixtures/bert/tiny-bert", &e) != NS_OK) {
        CHECK(!"tiny-bert loads");
        ns_text_list_free(&tl);
        return;
    }
    ns_embed_opts o = {.batch = 4};
    ns_embed_table t = {0}, t2 = {0};
    ns_embed_run r = {0}, r2 = {0};
    CHECK(ns_embed_cached(m, path("cache"), tl.n, tl.texts, tl.lens, &o, &t, &r, &e) == NS_OK);
    CHECK_EQ_INT(r.computed, 2);
    CHECK(ns_embed_cached(m, path("cache"), tl.n, tl.texts, tl.lens, &o, &t2, &r2, &e) == NS_OK);
    CHECK_EQ_INT(r2.computed, 0); /* from the folder */
    CHECK(ns_embed_write_rows(path("rows.npy"), &t2, tl.n, tl.texts, tl.lens, &e) == NS_OK);
    ns_array a = {0};
    CHECK(read_f32(path("rows.npy"), &a));
    CHECK(a.shape[0] == 2 && a.shape[1] == t.dim &&
          !memcmp(a.data, ns_embed_get(&t, tl.texts[0], tl.lens[0]), sizeof(float) * (size_t)t.dim));
    ns_array_free(&a);
    ns_embed_table_free(&t);
    ns_embed_table_free(&t2);
    ns_bert_free(m);
    ns_text_list_free(&tl);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ns_test_dataset_enc_%d", (int)getpid());
    ns_error e;
    ns_mkdir_p(tmpdir, &e);
    have_ds = build();
    if (!have_ds) printf("FAIL dataset\n");
    NS_RUN(test_wl_dense_sparse_vocab);
    NS_RUN(test_actions_and_fsf);
    NS_RUN(test_featurize_dataset);
    NS_RUN(test_embed_calls);
    if (have_ds) ns_dataset_free(&DS);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) printf("  could not remove %s\n", tmpdir);
    if (!have_ds) ns_t_fail++;
    return ns_test_summary("test_dataset_enc");
}
