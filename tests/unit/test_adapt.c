/* test_adapt.c — encoder adaptation (learn/adapt.h) on a generated ferry
 * dataset whose prompts the tiny BERT of tests/fixtures/bert encodes (a
 * 16-piece window: every prompt is cut into many windows): the features the
 * adaptation feed writes equal the frozen embeddings while B = 0; the
 * gradients of the world model's loss w.r.t. the adapter (through the
 * heads, the standardisation, the window mean and the encoder) against
 * finite differences, with the step's tape kept whole and recomputed in
 * slices (same gradients); a short joint training lowers the loss. */
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "nextstate/core/gen.h"
#include "nextstate/data/dataset.h"
#include "nextstate/data/split.h"
#include "nextstate/encode/embed.h"
#include "nextstate/encode/featurize.h"
#include "nextstate/eval/evaluate.h"
#include "nextstate/learn/adapt.h"
#include "nextstate/util/json.h"
#include "gen_fixture.h"
#include "test.h"

static char tmpdir[256];
static ns_dataset DS;
static bool have_ds;
static const ns_dataset *DSP[1] = {&DS};

static bool build_ds(void) { return ns_test_ferry_dataset(&DS, tmpdir, 4, 2); }

/* Everything one test needs. */
typedef struct rig {
    ns_bert *m;
    ns_split sp;
    ns_text_list tl;
    ns_row_texts tx;
    ns_world_inputs in;
    ns_feature_std ss, as;
    float *frozen_s; /* the frozen, standardised state rows */
    ns_world w;
    ns_lora l;
} rig;

static bool rig_init(rig *r, float bscale)
{
    memset(r, 0, sizeof *r);
    ns_error e;
    if (ns_bert_load(&r->m, "tests/fixtures/bert/tiny-bert", &e) != NS_OK) return false;
    ns_split_opts so = {0};
    so.protocol = NS_PROTO_INTERPOLATION;
    so.pool_size = 16;
    so.seed = 1;
    if (ns_split_make(&r->sp, DSP, 1, &so, &e) != NS_OK) return false;
    ns_features sf, af;
    if (ns_embed_dataset_features(r->m, &DS, "domains", NULL, false, &sf, &af, &r->tl, &e) != NS_OK) {
        printf("  features: %s\n", e.msg);
        return false;
    }
    r->tx = (ns_row_texts){r->tl.nstates, r->tl.nactions, r->tl.texts, r->tl.lens, r->tl.texts + r->tl.nstates,
                           r->tl.lens + r->tl.nstates};
    if (ns_world_inputs_init(&r->in, DSP, 1, &sf, &af, &e) != NS_OK) return false;
    if (ns_world_standardize_split(&r->in, &r->sp, true, true, &r->ss, &r->as, &e) != NS_OK) return false;
    size_t bytes = (size_t)r->in.state.nrows * r->in.state.dim * sizeof(float);
    r->frozen_s = malloc(bytes);
    memcpy(r->frozen_s, r->in.state.dense, bytes);
    ns_world_config c;
    ns_world_config_init(&c);
    c.state_dim = c.action_dim = ns_bert_dim(r->m);
    c.state_hidden = c.action_hidden = 7;
    c.out = 6;
    c.t_hidden = 5;
    if (ns_world_create(&r->w, &c, 3, &e) != NS_OK) return false;
    ns_lora_config lc = {2, 4, ns_lora_targets_parse("qkvo"), 0};
    if (ns_lora_create(&r->l, ns_bert_config_of(r->m), &lc, 5, &e) != NS_OK) return false;
    ns_rng g;
    ns_rng_seed(&g, 17);
    for (int i = 0; bscale > 0 && i < r->l.p.n; i++)
        if (strstr(r->l.p.t[i].name, ".B"))
            for (size_t k = 0; k < r->l.p.t[i].count; k++)
                r->l.p.data[r->l.p.t[i].offset + k] = bscale * (float)(2 * ns_rng_double(&g) - 1);
    return true;
}

static void rig_free(rig *r)
{
    ns_lora_free(&r->l);
    ns_world_free(&r->w);
    free(r->frozen_s);
    ns_feature_std_free(&r->ss);
    ns_feature_std_free(&r->as);
    ns_world_inputs_free(&r->in);
    ns_text_list_free(&r->tl);
    ns_split_free(&r->sp);
    ns_bert_free(r->m);
}

enum { N = 6 };

static double loss_of(rig *r, ns_world_ws *ws, const ns_train_opts *o, const int64_t *refs, bool backward)
{
    ns_rng rng;
    ns_rng_seed(&rng, 5);
    return ns_world_batch_loss(&r->w, ws, &r->in, refs, N, o, &rng, backward);
}

static void batch_refs(int64_t *refs)
{
    for (int i = 0; i < N; i++) refs[2 * i] = 0, refs[2 * i + 1] = (i * 13 + 2) % ns_dataset_ntransitions(&DS);
}

/* While B = 0 the feed writes the frozen features (up to the float rounding
 * of other batch compositions). */
static void test_feed_frozen(void)
{
    rig r;
    if (!have_ds || !rig_init(&r, 0)) {
        CHECK(false);
        return;
    }
    memset(r.in.state.dense, 0, (size_t)r.in.state.nrows * r.in.state.dim * sizeof(float));
    ns_adapt_feed *f = ns_adapt_feed_new(r.m, &r.l, &r.in, &r.ss, &r.as, &r.tx, 64);
    ns_train_opts o;
    ns_eval_train_opts_init(&o);
    o.feed = ns_adapt_feed_hook(f);
    int64_t refs[2 * N];
    batch_refs(refs);
    ns_world_ws *ws = ns_world_ws_new();
    loss_of(&r, ws, &o, refs, false);
    double md = 0;
    int written = 0;
    for (int64_t s = 0; s < r.in.state.nrows; s++) {
        const float *a = r.in.state.dense + s * r.in.state.dim, *b = r.frozen_s + s * r.in.state.dim;
        if (a[0] == 0 && a[1] == 0) continue; /* not read by the batch */
        written++;
        for (int d = 0; d < r.in.state.dim; d++) md = fmax(md, fabs(a[d] - b[d]));
    }
    int windows = 0;
    size_t pieces = 0;
    for (int64_t s = 0; s < r.tx.nstates; s++) {
        int32_t *ids = NULL;
        size_t n = 0, cap = 0;
        pieces = ns_wordpiece_tokenize(ns_bert_wordpiece(r.m), r.tx.state[s], r.tx.state_len[s], 0, &ids, &n, &cap);
        free(ids);
        windows += (int)((pieces + 13) / 14);
    }
    printf("  %d state rows written (%.1f windows per prompt), max |diff| from the frozen features %.2e\n", written,
           (double)windows / (double)r.tx.nstates, md);
    CHECK(written >= 2 && written <= 2 * N);
    CHECK(windows > 4 * r.tx.nstates);
    CHECK(md < 1e-4);
    ns_world_ws_free(ws);
    ns_adapt_feed_free(f);
    rig_free(&r);
}

typedef struct fd {
    rig *r;
    ns_world_ws *ws;
    ns_train_opts *o;
    int64_t *refs;
} fd;

static double objective(void *p)
{
    fd *c = p;
    return loss_of(c->r, c->ws, c->o, c->refs, false);
}

/* d loss / d adapter against finite differences; the whole tape and the
 * recomputed slices give the same gradients. */
static void test_gradients(void)
{
    rig r;
    if (!have_ds || !rig_init(&r, 1.0f)) {
        CHECK(false);
        return;
    }
    int64_t refs[2 * N];
    batch_refs(refs);
    ns_world_ws *ws = ns_world_ws_new();
    float *g[2];
    for (int k = 0; k < 2; k++) { /* k = 0: one tape; k = 1: a 1 MB tape, recomputed in slices */
        ns_adapt_feed *f = ns_adapt_feed_new(r.m, &r.l, &r.in, &r.ss, &r.as, &r.tx, k ? 1 : 256);
        ns_train_opts o;
        ns_eval_train_opts_init(&o);
        o.tau = 0.5f;
        o.feed = ns_adapt_feed_hook(f);
        ns_params_zero_grad(&r.l.p);
        ns_params_zero_grad(&r.w.p);
        double loss = loss_of(&r, ws, &o, refs, true);
        CHECK(isfinite(loss) && loss > 0);
        g[k] = malloc(r.l.p.total * sizeof(float));
        memcpy(g[k], r.l.p.grad, r.l.p.total * sizeof(float));
        if (k == 0) {
            fd c = {&r, ws, &o, refs};
            int checked = 0, bad = 0;
            double worst = 0;
            ns_rng rng;
            ns_rng_seed(&rng, 3);
            for (int t = 0; t < r.l.p.n; t++) {
                const ns_tensor_info *ti = &r.l.p.t[t];
                for (int j = 0; j < 4; j++) {
                    size_t idx = ti->offset + ns_rng_below(&rng, ti->count);
                    float keep = r.l.p.data[idx];
                    const float h = 1e-2f;
                    r.l.p.data[idx] = keep + h;
                    double lp = objective(&c);
                    r.l.p.data[idx] = keep - h;
                    double lm = objective(&c);
                    r.l.p.data[idx] = keep;
                    double num = (lp - lm) / (2.0 * h), err = fabs(num - g[0][idx]);
                    worst = fmax(worst, err);
                    if (err > 3e-5 + 2e-2 * fabs(num) && bad++ < 4)
                        printf("  %s[%zu]: analytic %.6g, numeric %.6g\n", ti->name, idx - ti->offset, g[0][idx], num);
                    checked++;
                }
            }
            printf("  loss %.4f: %d adapter entries against finite differences, max |diff| %.3g\n", loss, checked,
                   worst);
            CHECK(bad == 0);
        }
        ns_adapt_feed_free(f);
    }
    double md = 0, mx = 0;
    for (size_t i = 0; i < r.l.p.total; i++) md = fmax(md, fabs(g[0][i] - g[1][i])), mx = fmax(mx, fabs(g[0][i]));
    printf("  recomputed slices: max |grad diff| %.2e (max |grad| %.3g)\n", md, mx);
    CHECK(mx > 1e-4);
    CHECK(md <= 1e-5 * fmax(1, mx));
    free(g[0]);
    free(g[1]);
    ns_world_ws_free(ws);
    rig_free(&r);
}

/* A few epochs of joint training lower the loss and move the adapter. */
static void test_train(void)
{
    rig r;
    if (!have_ds || !rig_init(&r, 0)) {
        CHECK(false);
        return;
    }
    ns_train_opts o;
    ns_eval_train_opts_init(&o);
    o.lr = 3e-3;
    ns_adapt_opts ao;
    ns_adapt_opts_init(&ao);
    ao.epochs = 6;
    ao.batch = 16;
    ao.lr = 3e-3;
    ns_adapt_stats st;
    ns_error e;
    CHECK_EQ_INT(ns_adapt_train(&r.w, &r.l, r.m, &r.in, &r.ss, &r.as, &r.tx, &r.sp, &o, &ao, &st, &e), NS_OK);
    double bmax = 0;
    for (int i = 0; i < r.l.p.n; i++)
        if (strstr(r.l.p.t[i].name, ".B"))
            for (size_t k = 0; k < r.l.p.t[i].count; k++) bmax = fmax(bmax, fabs(r.l.p.data[r.l.p.t[i].offset + k]));
    printf("  %lld steps in %.2f s (%lld texts, %lld windows, %lld tokens): loss %.4f → %.4f, max |B| %.3g\n",
           (long long)st.steps, st.seconds, (long long)st.texts, (long long)st.windows, (long long)st.tokens,
           st.first_loss, st.last_loss, bmax);
    CHECK_EQ_INT(st.steps, 6 * ((r.sp.train.n + 15) / 16));
    CHECK(st.last_loss < st.first_loss);
    CHECK(bmax > 1e-3);
    /* a bad configuration is refused */
    ao.batch = 0;
    CHECK_EQ_INT(ns_adapt_train(&r.w, &r.l, r.m, &r.in, &r.ss, &r.as, &r.tx, &r.sp, &o, &ao, &st, &e), NS_ERR_USAGE);
    rig_free(&r);
}

/* The adapter saved with a world checkpoint: loads back with the model;
 * without the "encoder" record its tensors are refused. */
static void test_checkpoint(void)
{
    rig r;
    if (!have_ds || !rig_init(&r, 0.3f)) {
        CHECK(false);
        return;
    }
    char path[400], bad[400];
    snprintf(path, sizeof path, "%s/m.ckpt", tmpdir);
    snprintf(bad, sizeof bad, "%s/bad.ckpt", tmpdir);
    ns_buf enc;
    ns_buf_init(&enc);
    ns_buf_puts(&enc, "{\"model\": \"tiny-bert\", \"lora\": ");
    ns_lora_json(&r.l, &enc);
    ns_buf_puts(&enc, "}");
    ns_error e;
    CHECK_EQ_INT(ns_world_save_with(&r.w, path, NULL, NULL, enc.data, &r.l.p, &e), NS_OK);
    CHECK_EQ_INT(ns_world_save_with(&r.w, bad, NULL, NULL, NULL, &r.l.p, &e), NS_OK);
    ns_world w2;
    char *meta = NULL;
    CHECK_EQ_INT(ns_world_load(&w2, path, &meta, &e), NS_OK);
    CHECK(w2.p.data && memcmp(w2.p.data, r.w.p.data, r.w.p.total * sizeof(float)) == 0);
    ns_json j;
    ns_params file;
    ns_lora back;
    CHECK_EQ_INT(ns_json_parse(&j, meta, strlen(meta), path, &e), NS_OK);
    CHECK_EQ_INT(ns_params_read(&file, path, NULL, &e), NS_OK);
    const ns_json *lj = ns_json_get(ns_json_get(&j, "encoder"), "lora");
    CHECK_EQ_INT(ns_lora_from_ckpt(&back, ns_bert_config_of(r.m), lj, &file, path, &e), NS_OK);
    CHECK(ns_lora_hash(&back) == ns_lora_hash(&r.l));
    ns_lora_free(&back);
    ns_params_free(&file);
    ns_json_free(&j);
    free(meta);
    ns_world_free(&w2);
    CHECK_EQ_INT(ns_world_load(&w2, bad, NULL, &e), NS_ERR_INPUT);
    CHECK(strstr(e.msg, "unexpected tensor 'lora.0.query.A'") != NULL);
    ns_buf_free(&enc);
    rig_free(&r);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ns_test_adapt_%d", (int)getpid());
    ns_error e;
    ns_mkdir_p(tmpdir, &e);
    have_ds = build_ds();
    if (!have_ds) printf("FAIL dataset\n");
    NS_RUN(test_feed_frozen);
    NS_RUN(test_gradients);
    NS_RUN(test_train);
    NS_RUN(test_checkpoint);
    if (have_ds) ns_dataset_free(&DS);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) printf("  could not remove %s\n", tmpdir);
    if (!have_ds) ns_t_fail++;
    return ns_test_summary("test_adapt");
}
