/* predictor.c — LSTM and XGBoost next-state models (see predictor.h). */
#include "nextstate/learn/predictor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/util/json.h"
#include "nextstate/learn/loss.h"
#include "nextstate/learn/nn.h"
#include "nextstate/learn/optim.h"
#include "nextstate/util/npy.h"
#include "nextstate/util/util.h"

#define PREDICTOR_FORMAT "nextstate-predictor"
#define CKPT_VERSION 2 /* LSTM models: a params checkpoint (XGB ones up to version 2) */
#define XGB_VERSION 3  /* XGB models: their own container, the forest used in place */
#define XGB_MAGIC "NSPREDXG"
#define XGB_HEADER 32u /* magic, u32 version, u32 meta bytes, u64 forest offset, u64 forest bytes */
#define XGB_ALIGN 64u  /* the forest's offset in the file */

void ns_predictor_config_init(ns_predictor_config *c)
{
    memset(c, 0, sizeof *c);
    c->kind = NS_PREDICTOR_LSTM;
    c->mode = NS_PREDICT_STATE;
    c->layers = 2;
    c->hidden = 256;
    c->lr = 1e-2;
    c->epochs = 500;
    c->batch = 32;
    ns_xgb_params_default(&c->xgb);
    c->seed = 13;
}

int ns_predictor_kind_parse(const char *name)
{
    if (!strcmp(name, "lstm")) return NS_PREDICTOR_LSTM;
    if (!strcmp(name, "xgb")) return NS_PREDICTOR_XGB;
    return -1;
}

int ns_predictor_mode_parse(const char *name)
{
    if (!strcmp(name, "state")) return NS_PREDICT_STATE;
    if (!strcmp(name, "delta")) return NS_PREDICT_DELTA;
    return -1;
}

const char *ns_predictor_kind_name(ns_predictor_kind k) { return k == NS_PREDICTOR_LSTM ? "lstm" : "xgb"; }
const char *ns_predictor_mode_name(ns_predictor_mode m) { return m == NS_PREDICT_STATE ? "state" : "delta"; }

/* ---- encoded trajectories -------------------------------------------------- */

typedef struct seqs {
    int n, D;
    int *soff;   /* trajectory i: states soff[i] .. soff[i+1] (rows of phi) */
    float *phi;  /* [states × D] */
    float *goal; /* [n × D] */
    long rows;   /* transitions */
} seqs;

static void seqs_free(seqs *q)
{
    free(q->soff);
    free(q->phi);
    free(q->goal);
    memset(q, 0, sizeof *q);
}

static ns_status seqs_encode(seqs *q, const ns_encoder_spec *spec, const ns_trajset *s, ns_error *err)
{
    memset(q, 0, sizeof *q);
    q->n = s->n;
    q->D = ns_encoder_spec_dim(spec);
    q->soff = ns_xcalloc((size_t)s->n + 1, sizeof(int));
    for (int i = 0; i < s->n; i++) q->soff[i + 1] = q->soff[i] + s->v[i].nstates;
    q->phi = ns_xcalloc((size_t)q->soff[s->n] * (size_t)q->D + 1, sizeof(float));
    q->goal = ns_xcalloc((size_t)s->n * (size_t)q->D + 1, sizeof(float));
    q->rows = q->soff[s->n] - s->n;
    for (int i = 0; i < s->n; i++) {
        const ns_traj *it = &s->v[i];
        ns_encoder e;
        ns_status st = ns_encoder_init(&e, spec, &it->t, err);
        if (st != NS_OK) {
            seqs_free(q);
            return st;
        }
        for (int k = 0; k < it->nstates; k++)
            ns_encoder_state(&e, it->states + (size_t)k * (size_t)it->t.nwords,
                             q->phi + (size_t)(q->soff[i] + k) * (size_t)q->D);
        ns_encoder_goal(&e, q->goal + (size_t)i * (size_t)q->D);
        ns_encoder_free(&e);
    }
    return NS_OK;
}

/* Input row [φ(s_t), φ(g)] and target of step t of trajectory i. */
static void seqs_row(const seqs *q, ns_predictor_mode mode, int i, int t, float *x, float *y)
{
    size_t D = (size_t)q->D;
    const float *cur = q->phi + (size_t)(q->soff[i] + t) * D;
    if (x) {
        memcpy(x, cur, D * sizeof(float));
        memcpy(x + D, q->goal + (size_t)i * D, D * sizeof(float));
    }
    if (y) {
        const float *nxt = cur + D;
        for (size_t j = 0; j < D; j++) y[j] = mode == NS_PREDICT_STATE ? nxt[j] : nxt[j] - cur[j];
    }
}

/* ---- LSTM ---------------------------------------------------------------------- */

static void declare_lstm(ns_params *p, ns_predictor_mode mode, ns_lstm_dims d, int D)
{
    ns_lstm_declare(p, "lstm", d, true);
    if (mode == NS_PREDICT_STATE) {
        ns_params_add_linear(p, "head.0", d.hidden, d.hidden, true);
        ns_params_add_layernorm(p, "head.1", d.hidden);
        ns_params_add_linear(p, "head.3", d.hidden, D, true);
    } else {
        ns_params_add_linear(p, "head", d.hidden, D, true);
    }
}

static void bind_lstm(ns_predictor *m)
{
    ns_params *p = &m->params;
    ns_lstm_bind(&m->w, p, p->data, "lstm", m->dims);
    if (m->mode == NS_PREDICT_STATE) {
        m->head1_w = ns_params_at(p, p->data, "head.0.weight");
        m->head1_b = ns_params_at(p, p->data, "head.0.bias");
        m->ln_w = ns_params_at(p, p->data, "head.1.weight");
        m->ln_b = ns_params_at(p, p->data, "head.1.bias");
        m->out_w = ns_params_at(p, p->data, "head.3.weight");
        m->out_b = ns_params_at(p, p->data, "head.3.bias");
    } else {
        m->out_w = ns_params_at(p, p->data, "head.weight");
        m->out_b = ns_params_at(p, p->data, "head.bias");
    }
}

/* Buffers of one padded batch of trajectories. */
typedef struct batch {
    int T, B, cap_T, cap_B;
    float *x, *tgt, *y, *z1, *mean, *rstd, *ln, *r, *pred, *scratch;
    float *dpred, *dr, *dln, *dz1, *dy, *closs;
    uint8_t *mask;
} batch;

static void batch_free(batch *b)
{
    free(b->x), free(b->tgt), free(b->y), free(b->z1), free(b->mean), free(b->rstd), free(b->ln), free(b->r);
    free(b->pred), free(b->scratch), free(b->dpred), free(b->dr), free(b->dln), free(b->dz1), free(b->dy);
    free(b->closs), free(b->mask);
    memset(b, 0, sizeof *b);
}

static void batch_fill(batch *b, const ns_predictor *m, const seqs *q, const int *ids, int B)
{
    int T = 1;
    for (int k = 0; k < B; k++) {
        int len = q->soff[ids[k] + 1] - q->soff[ids[k]] - 1;
        if (len > T) T = len;
    }
    size_t H = (size_t)m->dims.hidden, D = (size_t)m->dim, N = (size_t)T * (size_t)B;
    if (T > b->cap_T || B > b->cap_B) {
        int ct = T > b->cap_T ? T : b->cap_T, cb = B > b->cap_B ? B : b->cap_B;
        batch_free(b);
        b->cap_T = ct;
        b->cap_B = cb;
        size_t cn = (size_t)ct * (size_t)cb;
        b->x = ns_xcalloc(cn * 2 * D + 1, sizeof(float));
        b->tgt = ns_xcalloc(cn * D + 1, sizeof(float));
        b->pred = ns_xcalloc(cn * D + 1, sizeof(float));
        b->dpred = ns_xcalloc(cn * D + 1, sizeof(float));
        b->y = ns_xcalloc(cn * H, sizeof(float));
        b->z1 = ns_xcalloc(cn * H, sizeof(float));
        b->ln = ns_xcalloc(cn * H, sizeof(float));
        b->r = ns_xcalloc(cn * H, sizeof(float));
        b->dr = ns_xcalloc(cn * H, sizeof(float));
        b->dln = ns_xcalloc(cn * H, sizeof(float));
        b->dz1 = ns_xcalloc(cn * H, sizeof(float));
        b->dy = ns_xcalloc(cn * H, sizeof(float));
        b->mean = ns_xcalloc(cn, sizeof(float));
        b->rstd = ns_xcalloc(cn, sizeof(float));
        b->mask = ns_xcalloc(cn, sizeof(uint8_t));
        b->closs = ns_xcalloc(ns_cosine_loss_scratch((int)cn), sizeof(float));
        b->scratch = ns_xcalloc(ns_lstm_scratch(m->dims, ct, cb), sizeof(float));
    }
    b->T = T;
    b->B = B;
    memset(b->x, 0, N * 2 * D * sizeof(float));
    memset(b->tgt, 0, N * D * sizeof(float));
    memset(b->mask, 0, N);
    for (int k = 0; k < B; k++) {
        int len = q->soff[ids[k] + 1] - q->soff[ids[k]] - 1;
        for (int t = 0; t < len; t++) {
            size_t row = (size_t)t * (size_t)B + (size_t)k;
            seqs_row(q, m->mode, ids[k], t, b->x + row * 2 * D, b->tgt + row * D);
            b->mask[row] = 1;
        }
    }
}

static int batch_rows(const batch *b)
{
    int n = 0;
    for (int i = 0; i < b->T * b->B; i++) n += b->mask[i];
    return n;
}

/* Forward of the filled batch; returns the mean loss over masked rows. */
static float batch_forward(batch *b, const ns_predictor *m)
{
    int N = b->T * b->B, H = m->dims.hidden, D = m->dim;
    ns_lstm_forward(b->y, NULL, NULL, b->scratch, b->x, NULL, NULL, &m->w, m->dims, b->T, b->B);
    if (m->mode == NS_PREDICT_STATE) {
        ns_linear_forward(b->z1, b->y, m->head1_w, m->head1_b, N, H, H);
        ns_layernorm_forward(b->ln, b->mean, b->rstd, b->z1, m->ln_w, m->ln_b, N, H, NS_LN_EPS);
        ns_relu_forward(b->r, b->ln, (size_t)N * (size_t)H);
        ns_linear_forward(b->pred, b->r, m->out_w, m->out_b, N, H, D);
        return ns_cosine_loss_forward(b->closs, b->pred, b->tgt, b->mask, N, D);
    }
    ns_linear_forward(b->pred, b->y, m->out_w, m->out_b, N, H, D);
    return ns_mse_forward(b->pred, b->tgt, b->mask, N, D);
}

/* Backward of the last forward; gradients accumulate into m->params.grad. */
static void batch_backward(batch *b, ns_predictor *m)
{
    int N = b->T * b->B, H = m->dims.hidden, D = m->dim;
    ns_params *p = &m->params;
    size_t NH = (size_t)N * (size_t)H;
    memset(b->dpred, 0, (size_t)N * (size_t)D * sizeof(float));
    memset(b->dy, 0, NH * sizeof(float));
    if (m->mode == NS_PREDICT_STATE) {
        ns_cosine_loss_backward(b->dpred, NULL, 1.0f, b->closs, b->pred, b->tgt, b->mask, N, D);
        memset(b->dr, 0, NH * sizeof(float));
        memset(b->dln, 0, NH * sizeof(float));
        memset(b->dz1, 0, NH * sizeof(float));
        ns_linear_backward(b->dr, ns_params_at(p, p->grad, "head.3.weight"), ns_params_at(p, p->grad, "head.3.bias"),
                           b->dpred, b->r, m->out_w, N, H, D);
        ns_relu_backward(b->dln, b->dr, b->ln, NH);
        ns_layernorm_backward(b->dz1, ns_params_at(p, p->grad, "head.1.weight"),
                              ns_params_at(p, p->grad, "head.1.bias"), b->dln, b->z1, m->ln_w, b->mean, b->rstd, N,
                              H);
        ns_linear_backward(b->dy, ns_params_at(p, p->grad, "head.0.weight"), ns_params_at(p, p->grad, "head.0.bias"),
                           b->dz1, b->y, m->head1_w, N, H, H);
    } else {
        ns_mse_backward(b->dpred, NULL, 1.0f, b->pred, b->tgt, b->mask, N, D);
        ns_linear_backward(b->dy, ns_params_at(p, p->grad, "head.weight"), ns_params_at(p, p->grad, "head.bias"),
                           b->dpred, b->y, m->out_w, N, H, D);
    }
    ns_lstm_w g;
    ns_lstm_bind(&g, p, p->grad, "lstm", m->dims);
    ns_lstm_backward(NULL, NULL, NULL, &g, b->dy, NULL, NULL, b->scratch, b->x, NULL, NULL, &m->w, m->dims, b->T,
                     b->B);
}

/* Mean loss over every transition of q (batches of `bs` trajectories). */
static double lstm_loss(const ns_predictor *m, const seqs *q, int bs, batch *b)
{
    double sum = 0.0;
    long rows = 0;
    int ids[256];
    if (bs > 256) bs = 256;
    for (int i = 0; i < q->n; i += bs) {
        int B = q->n - i < bs ? q->n - i : bs;
        for (int k = 0; k < B; k++) ids[k] = i + k;
        batch_fill(b, m, q, ids, B);
        int r = batch_rows(b);
        if (!r) continue;
        sum += (double)batch_forward(b, m) * r;
        rows += r;
    }
    return rows ? sum / (double)rows : 0.0;
}

static ns_status lstm_train(ns_predictor *m, const seqs *tr, const seqs *va, const ns_predictor_config *c,
                            ns_error *err)
{
    m->dims = (ns_lstm_dims){c->layers, 2 * m->dim, c->hidden};
    ns_params_init(&m->params);
    declare_lstm(&m->params, m->mode, m->dims, m->dim);
    ns_status st = ns_params_alloc(&m->params, err);
    if (st != NS_OK) return st;
    ns_params_init_values(&m->params, c->seed);
    bind_lstm(m);
    ns_adamw opt;
    ns_adamw_init(&opt, c->lr, 0.0);
    ns_rng rng;
    ns_rng_seed(&rng, c->seed ^ 0x5eedULL);
    int bs = c->batch < 1 ? 1 : c->batch > 256 ? 256 : c->batch;
    int *order = ns_xcalloc((size_t)tr->n + 1, sizeof(int));
    for (int i = 0; i < tr->n; i++) order[i] = i;
    size_t total = m->params.total;
    float *best = ns_xcalloc(total + 1, sizeof(float));
    memcpy(best, m->params.data, total * sizeof(float));
    m->best_val = INFINITY;
    m->best_epoch = 0;
    batch b;
    memset(&b, 0, sizeof b);
    ns_progress pr;
    ns_progress_init(&pr, c->progress, "train");
    char what[96];
    for (int ep = 1; ep <= c->epochs; ep++) {
        ns_rng_shuffle_int(&rng, order, (size_t)tr->n);
        for (int i = 0; i < tr->n; i += bs) {
            int B = tr->n - i < bs ? tr->n - i : bs;
            batch_fill(&b, m, tr, order + i, B);
            if (!batch_rows(&b)) continue;
            ns_params_zero_grad(&m->params);
            batch_forward(&b, m);
            batch_backward(&b, m);
            ns_adamw_step(&opt, &m->params, c->lr);
        }
        double v = va && va->rows ? lstm_loss(m, va, bs, &b) : lstm_loss(m, tr, bs, &b);
        if (isfinite(v) && v < m->best_val) {
            m->best_val = v;
            m->best_epoch = ep;
            memcpy(best, m->params.data, total * sizeof(float));
        }
        snprintf(what, sizeof what, "epoch %d/%d, %s loss %.4f (best %.4f @%d)", ep, c->epochs,
                 va && va->rows ? "val" : "train", v, m->best_val, m->best_epoch);
        ns_progress_update(&pr, ep, c->epochs, what);
    }
    ns_progress_done(&pr);
    memcpy(m->params.data, best, total * sizeof(float));
    free(best);
    free(order);
    batch_free(&b);
    if (!va || !va->rows) m->best_val = NAN;
    return NS_OK;
}

/* ---- XGB ----------------------------------------------------------------------- */

static void xgb_rows(const seqs *q, ns_predictor_mode mode, float **X, float **Y)
{
    size_t D = (size_t)q->D;
    *X = ns_xcalloc((size_t)q->rows * 2 * D + 1, sizeof(float));
    *Y = ns_xcalloc((size_t)q->rows * D + 1, sizeof(float));
    long r = 0;
    for (int i = 0; i < q->n; i++)
        for (int t = 0; t < q->soff[i + 1] - q->soff[i] - 1; t++, r++)
            seqs_row(q, mode, i, t, *X + (size_t)r * 2 * D, *Y + (size_t)r * D);
}

static ns_status xgb_train(ns_predictor *m, const seqs *tr, const seqs *va, const ns_predictor_config *c,
                           ns_error *err)
{
    float *X, *Y, *Xv = NULL, *Yv = NULL;
    xgb_rows(tr, m->mode, &X, &Y);
    bool val = va && va->rows;
    if (val) xgb_rows(va, m->mode, &Xv, &Yv);
    ns_xgb_params p = c->xgb;
    p.seed = c->seed;
    ns_xgb_init(&m->xgb);
    ns_status st = ns_xgb_train(&m->xgb, X, Y, (int)tr->rows, 2 * m->dim, m->dim, Xv, Yv, val ? (int)va->rows : 0,
                                &p, err);
    free(X), free(Y), free(Xv), free(Yv);
    if (st == NS_OK) {
        ns_buf js;
        ns_buf_init(&js);
        st = ns_xgb_save_json(&m->xgb, &js, err);
        if (st == NS_OK)
            st = ns_forest_from_xgb_json(&m->forest, js.data, js.len, 2 * m->dim, m->dim,
                                         (m->xgb.best_round + 1) * m->dim, err);
        ns_buf_free(&js);
    }
    if (st == NS_OK) {
        m->best_epoch = m->xgb.best_round + 1;
        /* XGBoost's validation RMSE is over all rows × outputs: its square is the MSE */
        m->best_val = val ? m->xgb.best_val_rmse * m->xgb.best_val_rmse : NAN;
    }
    return st;
}

/* ---- training, files ------------------------------------------------------------- */

ns_status ns_predictor_train(ns_predictor *m, ns_encoder_spec *enc, const ns_trajset *train, const ns_trajset *val,
                             const ns_predictor_config *c, ns_error *err)
{
    memset(m, 0, sizeof *m);
    m->enc = *enc;
    memset(enc, 0, sizeof *enc);
    m->kind = c->kind;
    m->mode = c->mode;
    m->dim = ns_encoder_spec_dim(&m->enc);
    ns_xgb_init(&m->xgb);
    ns_params_init(&m->params);
    if (m->dim < 1) {
        ns_predictor_free(m);
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "the encoder has no features");
    }
    if (c->kind == NS_PREDICTOR_LSTM && (c->layers < 1 || c->layers > NS_LSTM_MAX_LAYERS || c->hidden < 1 ||
                                         c->epochs < 1 || !(c->lr > 0))) {
        ns_predictor_free(m);
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "LSTM needs 1..%d layers, hidden ≥ 1, epochs ≥ 1, lr > 0",
                            NS_LSTM_MAX_LAYERS);
    }
    double t0 = ns_now();
    seqs tr, va;
    memset(&va, 0, sizeof va);
    ns_status st = seqs_encode(&tr, &m->enc, train, err);
    if (st == NS_OK && val) st = seqs_encode(&va, &m->enc, val, err);
    if (st == NS_OK && tr.rows == 0)
        st = ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "the training trajectories have no transition");
    if (st == NS_OK) {
        m->train_rows = tr.rows;
        m->val_rows = va.rows;
        st = c->kind == NS_PREDICTOR_LSTM ? lstm_train(m, &tr, val ? &va : NULL, c, err)
                                          : xgb_train(m, &tr, val ? &va : NULL, c, err);
    }
    seqs_free(&tr);
    seqs_free(&va);
    m->train_seconds = ns_now() - t0;
    if (st != NS_OK) {
        ns_predictor_free(m);
        return st;
    }
    return NS_OK;
}

void ns_predictor_free(ns_predictor *m)
{
    ns_encoder_spec_free(&m->enc);
    ns_params_free(&m->params);
    ns_xgb_free(&m->xgb);
    ns_forest_free(&m->forest);
    memset(m, 0, sizeof *m);
}

long ns_predictor_size(const ns_predictor *m)
{
    if (m->kind == NS_PREDICTOR_LSTM) return (long)ns_params_count(&m->params);
    return (long)m->xgb.rounds;
}

/* An XGB model file (predictor.h): header, description, the forest at a
 * 64-byte boundary, CRC-32C of everything before it. */
static ns_status save_xgb(const char *path, const ns_buf *meta, const ns_buf *forest, ns_error *err)
{
    ns_buf b;
    ns_buf_init(&b);
    size_t off = (XGB_HEADER + meta->len + XGB_ALIGN - 1) / XGB_ALIGN * XGB_ALIGN;
    ns_buf_put(&b, XGB_MAGIC, 8);
    ns_buf_put_le(&b, XGB_VERSION, 4);
    ns_buf_put_le(&b, meta->len, 4);
    ns_buf_put_le(&b, off, 8);
    ns_buf_put_le(&b, forest->len, 8);
    ns_buf_put(&b, meta->data, meta->len);
    static const char zeros[XGB_ALIGN] = {0};
    ns_buf_put(&b, zeros, off - b.len);
    ns_buf_put(&b, forest->data, forest->len);
    ns_buf_put(&b, zeros, (4 - b.len % 4) % 4);
    ns_buf_put_le(&b, ns_crc32c(0, b.data, b.len), 4);
    ns_status st = ns_write_file_atomic(path, b.data, b.len, err);
    ns_buf_free(&b);
    return st;
}

ns_status ns_predictor_save(const ns_predictor *m, const char *path, ns_error *err)
{
    bool xgb = m->kind == NS_PREDICTOR_XGB;
    ns_buf meta;
    ns_buf_init(&meta);
    ns_buf_printf(&meta, "{\"format\": \"%s\", \"version\": %d, \"model\": \"%s\", \"mode\": \"%s\", \"dim\": %d",
                  PREDICTOR_FORMAT, xgb ? XGB_VERSION : CKPT_VERSION, ns_predictor_kind_name(m->kind),
                  ns_predictor_mode_name(m->mode), m->dim);
    if (!xgb) ns_buf_printf(&meta, ", \"layers\": %d, \"hidden\": %d", m->dims.layers, m->dims.hidden);
    ns_buf_puts(&meta, ", \"encoder\": ");
    ns_encoder_spec_write(&m->enc, &meta);
    ns_status st = NS_OK;
    ns_buf fb;
    ns_buf_init(&fb);
    if (xgb) {
        ns_forest_save(&m->forest, &fb);
        ns_buf_printf(&meta, ", \"xgb\": {\"best_round\": %d, \"rounds\": %d, \"forest_bytes\": %zu}",
                      m->xgb.best_round, m->xgb.rounds, fb.len);
    }
    ns_buf_printf(&meta, ", \"train\": {\"best_epoch\": %d, \"best_val\": ", m->best_epoch);
    ns_json_put_num(&meta, m->best_val);
    ns_buf_printf(&meta, ", \"rows\": %ld, \"val_rows\": %ld}}", m->train_rows, m->val_rows);
    if (xgb) {
        st = save_xgb(path, &meta, &fb, err);
    } else {
        ns_ckpt_opts o = {false, m->best_epoch, meta.data};
        st = ns_params_save(&m->params, path, &o, err);
    }
    ns_buf_free(&fb);
    ns_buf_free(&meta);
    return st;
}

/* The description's fields every version has (format, version in [lo, hi],
 * model, mode, dim, encoder, train) into m; *ver its version. */
static ns_status parse_meta(ns_predictor *m, const ns_json *j, const char *path, int64_t lo, int64_t hi,
                            int64_t *ver, ns_error *err)
{
    const char *fmt = NULL, *kind = NULL, *mode = NULL;
    int64_t dim = 0;
    if (j->kind != NS_JSON_OBJECT || !ns_json_get_str(j, "format", &fmt) || strcmp(fmt, PREDICTOR_FORMAT) ||
        !ns_json_get_int(j, "version", ver) || *ver < lo || *ver > hi || !ns_json_get_str(j, "model", &kind) ||
        ns_predictor_kind_parse(kind) < 0 || !ns_json_get_str(j, "mode", &mode) || ns_predictor_mode_parse(mode) < 0 ||
        !ns_json_get_int(j, "dim", &dim) || dim < 1 || dim > (1 << 24))
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                            "not a nextstate predictor of version %d..%d (format, model, mode or dim missing)",
                            (int)lo, (int)hi);
    m->kind = (ns_predictor_kind)ns_predictor_kind_parse(kind);
    m->mode = (ns_predictor_mode)ns_predictor_mode_parse(mode);
    m->dim = (int)dim;
    ns_status st = ns_encoder_spec_parse(&m->enc, ns_json_get(j, "encoder"), path, err);
    if (st != NS_OK) return st;
    if (ns_encoder_spec_dim(&m->enc) != m->dim)
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "the model has dimension %d but its encoder %d", m->dim,
                            ns_encoder_spec_dim(&m->enc));
    const ns_json *tj = ns_json_get(j, "train");
    int64_t be = 0;
    if (tj && ns_json_get_int(tj, "best_epoch", &be)) m->best_epoch = (int)be;
    const ns_json *bv = tj ? ns_json_get(tj, "best_val") : NULL;
    m->best_val = bv && bv->kind == NS_JSON_NUMBER ? bv->number : NAN;
    return NS_OK;
}

/* An XGB predictor's forest dimensions against its description. */
static ns_status check_forest(const ns_predictor *m, int64_t br, const char *path, ns_error *err)
{
    if (m->forest.nfeat != 2 * m->dim || m->forest.nout != m->dim || m->forest.ntrees != (int)(br + 1) * m->dim)
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                            "XGB predictor: the forest has %d inputs, %d outputs, %d trees; expected %d, %d, %d",
                            m->forest.nfeat, m->forest.nout, m->forest.ntrees, 2 * m->dim, m->dim,
                            (int)(br + 1) * m->dim);
    return NS_OK;
}

/* Prefixes err's message with "XGB predictor: " (an input error). */
static ns_status xgb_input_error(ns_error *err, const char *path)
{
    if (err) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        if (strncmp(msg, "XGB predictor: ", 15) != 0) ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "XGB predictor: %s", msg);
        else err->code = NS_ERR_INPUT;
    }
    return NS_ERR_INPUT;
}

/* Version 3 (an XGB model in its own container), from the file's bytes in
 * map (taken over: the forest keeps it mapped and uses it in place). */
static ns_status load_xgb_file(ns_predictor *m, ns_filemap *map, const char *path, ns_error *err)
{
    const unsigned char *p = map->data;
    size_t len = map->len;
    ns_json j;
    memset(&j, 0, sizeof j);
    ns_status st = NS_OK;
    if (len < XGB_HEADER + 4) {
        st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "truncated XGB predictor file (%zu bytes)", len);
        goto out;
    }
    uint64_t ver = ns_get_le(p + 8, 4), mlen = ns_get_le(p + 12, 4), off = ns_get_le(p + 16, 8), flen = ns_get_le(p + 24, 8);
    if (ver != XGB_VERSION) {
        st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "XGB predictor file version %llu (this build reads %d)",
                          (unsigned long long)ver, XGB_VERSION);
        goto out;
    }
    uint32_t want = (uint32_t)ns_get_le(p + len - 4, 4), got = ns_crc32c(0, p, len - 4);
    if (want != got) {
        st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                          "XGB predictor checksum mismatch (stored %08x, computed %08x): corrupt or truncated file",
                          want, got);
        goto out;
    }
    if (mlen > len - 4 - XGB_HEADER || off < XGB_HEADER + mlen || off > len - 4 || flen > len - 4 - off) {
        st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "XGB predictor: sections outside the file");
        goto out;
    }
    st = ns_json_parse(&j, (const char *)p + XGB_HEADER, (size_t)mlen, path, err);
    if (st != NS_OK) {
        st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "not a nextstate predictor (its description is not JSON)");
        goto out;
    }
    int64_t v = 0, br = 0, rounds = 0, fbytes = 0;
    if ((st = parse_meta(m, &j, path, XGB_VERSION, XGB_VERSION, &v, err)) != NS_OK) goto out;
    const ns_json *xj = ns_json_get(&j, "xgb");
    if (m->kind != NS_PREDICTOR_XGB || !xj || !ns_json_get_int(xj, "best_round", &br) || br < 0 || br >= (1 << 24) ||
        !ns_json_get_int(xj, "rounds", &rounds) || rounds <= br || !ns_json_get_int(xj, "forest_bytes", &fbytes) ||
        fbytes < 0 || (uint64_t)fbytes != flen) {
        st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "XGB predictor: best_round, rounds or forest_bytes missing");
        goto out;
    }
    /* the file's CRC covers the forest's bytes */
    st = ns_forest_adopt(&m->forest, map, (size_t)off, (size_t)flen, path, err);
    if (st == NS_OK) st = check_forest(m, br, path, err);
    if (st == NS_OK) {
        m->xgb.nfeat = 2 * m->dim;
        m->xgb.nout = m->dim;
        m->xgb.best_round = (int)br;
        m->xgb.rounds = (int)rounds;
    } else {
        st = xgb_input_error(err, path);
    }
out:
    ns_filemap_free(map); /* a no-op once the forest took it */
    ns_json_free(&j);
    if (st != NS_OK) ns_predictor_free(m);
    return st;
}

ns_status ns_predictor_load(ns_predictor *m, const char *path, ns_error *err)
{
    memset(m, 0, sizeof *m);
    ns_params_init(&m->params);
    ns_xgb_init(&m->xgb);
    ns_filemap map;
    ns_status st = ns_filemap_open(&map, path, err);
    if (st != NS_OK) return st;
    if (map.len >= 8 && memcmp(map.data, XGB_MAGIC, 8) == 0) return load_xgb_file(m, &map, path, err);
    ns_filemap_free(&map);
    /* versions 1 and 2 (and LSTM models): a params checkpoint */
    ns_params raw;
    ns_ckpt_info info;
    st = ns_params_read(&raw, path, &info, err);
    if (st != NS_OK) return st;
    size_t file_count = ns_params_count(&raw); /* the file's own tensor table */
    ns_json j;
    st = ns_json_parse(&j, info.meta, strlen(info.meta), path, err);
    if (st != NS_OK) {
        ns_params_free(&raw);
        ns_ckpt_info_free(&info);
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "not a nextstate predictor (its description is not JSON)");
    }
    int64_t ver = 0, layers = 0, hidden = 0;
    if ((st = parse_meta(m, &j, path, 1, CKPT_VERSION, &ver, err)) != NS_OK) goto out;
    if (m->kind == NS_PREDICTOR_LSTM) {
        if (!ns_json_get_int(&j, "layers", &layers) || layers < 1 || layers > NS_LSTM_MAX_LAYERS ||
            !ns_json_get_int(&j, "hidden", &hidden) || hidden < 1 || hidden > (1 << 16)) {
            st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "LSTM predictor: layers or hidden missing");
            goto out;
        }
        m->dims = (ns_lstm_dims){(int)layers, 2 * m->dim, (int)hidden};
        declare_lstm(&m->params, m->mode, m->dims, m->dim);
        if (ns_params_count(&m->params) != file_count) { /* before allocating from the description */
            st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                              "LSTM predictor: its description (%d layers, hidden %d, dim %d) needs %zu parameters "
                              "but the file's tensors hold %zu",
                              m->dims.layers, m->dims.hidden, m->dim, ns_params_count(&m->params), file_count);
            goto out;
        }
        st = ns_params_alloc(&m->params, err);
        if (st == NS_OK) st = ns_params_load(&m->params, path, NULL, err);
        if (st == NS_OK) bind_lstm(m);
    } else {
        const ns_json *xj = ns_json_get(&j, "xgb");
        const ns_json *xm = xj ? ns_json_get(xj, "model") : NULL;
        int64_t br = 0, rounds = 0, fbytes = 0;
        if (!xj || !ns_json_get_int(xj, "best_round", &br) || br < 0 || br >= (1 << 24)) {
            st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "XGB predictor: \"xgb\" best_round missing");
            goto out;
        }
        if (ver == 1) { /* XGBoost's JSON model: checked by libxgboost, then flattened */
            if (!xm || xm->kind != NS_JSON_STRING) {
                st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "XGB predictor: \"xgb\" model missing");
                goto out;
            }
            st = ns_xgb_load_json(&m->xgb, xm->string, xm->string_len, 2 * m->dim, m->dim, (int)br, err);
            if (st == NS_OK)
                st = ns_forest_from_xgb_json(&m->forest, xm->string, xm->string_len, 2 * m->dim, m->dim,
                                             (int)(br + 1) * m->dim, err);
            ns_xgb_free(&m->xgb); /* predictions use the forest */
        } else {
            float *w = ns_params_at(&raw, raw.data, "forest");
            int ti = ns_params_find(&raw, "forest");
            if (!ns_json_get_int(xj, "rounds", &rounds) || rounds <= br || !ns_json_get_int(xj, "forest_bytes", &fbytes) ||
                !w || ti < 0 || fbytes < 0 || (uint64_t)fbytes > (uint64_t)raw.t[ti].count * 4) {
                st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "XGB predictor: rounds or the forest missing");
                goto out;
            }
            /* the checkpoint's CRC (ns_params_read) covers these bytes */
            st = ns_forest_load_checked(&m->forest, w, (size_t)fbytes, path, err);
            if (st == NS_OK) st = check_forest(m, br, path, err);
        }
        if (st != NS_OK) st = xgb_input_error(err, path);
        if (st == NS_OK) {
            m->xgb.nfeat = 2 * m->dim;
            m->xgb.nout = m->dim;
            m->xgb.best_round = (int)br;
            if (ver == 1) ns_json_get_int(xj, "rounds", &rounds);
            m->xgb.rounds = rounds > br ? (int)rounds : (int)br + 1;
        }
    }
out:
    ns_params_free(&raw);
    ns_json_free(&j);
    ns_ckpt_info_free(&info);
    if (st != NS_OK) {
        ns_predictor_free(m);
    }
    return st;
}

/* ---- inference ---------------------------------------------------------------------- */

struct ns_predictor_ws {
    float *x, *h, *c, *y, *z1, *ln, *out, *scratch;
    ns_forest_memo memo; /* XGBoost: the trees' leaves for the last input */
};

size_t ns_predictor_rstate_floats(const ns_predictor *m)
{
    return m->kind == NS_PREDICTOR_LSTM ? 2 * (size_t)m->dims.layers * (size_t)m->dims.hidden : 0;
}

ns_predictor_ws *ns_predictor_ws_new(const ns_predictor *m)
{
    ns_predictor_ws *ws = ns_xcalloc(1, sizeof *ws);
    size_t D = (size_t)m->dim, H = m->kind == NS_PREDICTOR_LSTM ? (size_t)m->dims.hidden : 1;
    size_t LH = m->kind == NS_PREDICTOR_LSTM ? (size_t)m->dims.layers * H : 1;
    ws->x = ns_xcalloc(2 * D, sizeof(float));
    ws->out = ns_xcalloc(D, sizeof(float));
    ws->h = ns_xcalloc(LH, sizeof(float));
    ws->c = ns_xcalloc(LH, sizeof(float));
    ws->y = ns_xcalloc(H, sizeof(float));
    ws->z1 = ns_xcalloc(H, sizeof(float));
    ws->ln = ns_xcalloc(H, sizeof(float));
    ws->scratch = m->kind == NS_PREDICTOR_LSTM ? ns_xcalloc(ns_lstm_step_scratch(m->dims, 1), sizeof(float)) : NULL;
    return ws;
}

void ns_predictor_ws_free(ns_predictor_ws *ws)
{
    if (!ws) return;
    free(ws->x), free(ws->h), free(ws->c), free(ws->y), free(ws->z1), free(ws->ln), free(ws->out);
    free(ws->scratch);
    ns_forest_memo_free(&ws->memo);
    free(ws);
}

ns_status ns_predictor_step(const ns_predictor *m, ns_predictor_ws *ws, const float *phi_s, const float *phi_g,
                            const float *rin, float *rout, float *next, ns_error *err)
{
    size_t D = (size_t)m->dim;
    memcpy(ws->x, phi_s, D * sizeof(float));
    memcpy(ws->x + D, phi_g, D * sizeof(float));
    if (m->kind == NS_PREDICTOR_LSTM) {
        int H = m->dims.hidden;
        size_t LH = (size_t)m->dims.layers * (size_t)H;
        if (rin) {
            memcpy(ws->h, rin, LH * sizeof(float));
            memcpy(ws->c, rin + LH, LH * sizeof(float));
        } else {
            memset(ws->h, 0, LH * sizeof(float));
            memset(ws->c, 0, LH * sizeof(float));
        }
        ns_lstm_step(ws->y, ws->h, ws->c, ws->scratch, ws->x, &m->w, m->dims, 1);
        if (rout) {
            memcpy(rout, ws->h, LH * sizeof(float));
            memcpy(rout + LH, ws->c, LH * sizeof(float));
        }
        if (m->mode == NS_PREDICT_STATE) {
            float mean, rstd;
            ns_linear_forward(ws->z1, ws->y, m->head1_w, m->head1_b, 1, H, H);
            ns_layernorm_forward(ws->ln, &mean, &rstd, ws->z1, m->ln_w, m->ln_b, 1, H, NS_LN_EPS);
            ns_relu_forward(ws->ln, ws->ln, (size_t)H);
            ns_linear_forward(ws->out, ws->ln, m->out_w, m->out_b, 1, H, (int)D);
        } else {
            ns_linear_forward(ws->out, ws->y, m->out_w, m->out_b, 1, H, (int)D);
        }
    } else {
        for (size_t j = 0; j < 2 * D; j++)
            if (isinf(ws->x[j]))
                return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "xgb: prediction inputs contain an infinity");
        ns_forest_predict_memo(&m->forest, &ws->memo, ws->x, ws->out);
    }
    for (size_t j = 0; j < D; j++) next[j] = m->mode == NS_PREDICT_STATE ? ws->out[j] : phi_s[j] + ws->out[j];
    return NS_OK;
}

float ns_predictor_cost(const ns_predictor *m, const float *next, const float *cand)
{
    size_t D = (size_t)m->dim;
    double a = 0, b = 0, ab = 0;
    if (m->mode == NS_PREDICT_DELTA) {
        for (size_t j = 0; j < D; j++) {
            double d = (double)cand[j] - (double)next[j];
            a += d * d;
        }
        return (float)sqrt(a);
    }
    for (size_t j = 0; j < D; j++) {
        a += (double)next[j] * next[j];
        b += (double)cand[j] * cand[j];
        ab += (double)next[j] * cand[j];
    }
    if (a == 0 || b == 0) return 1.0f;
    return (float)(1.0 - ab / sqrt(a * b));
}

ns_status ns_predictor_loss(const ns_predictor *m, const ns_trajset *s, double *loss, ns_error *err)
{
    seqs q;
    ns_status st = seqs_encode(&q, &m->enc, s, err);
    if (st != NS_OK) return st;
    *loss = 0.0;
    if (m->kind == NS_PREDICTOR_LSTM) {
        batch b;
        memset(&b, 0, sizeof b);
        *loss = lstm_loss(m, &q, 32, &b);
        batch_free(&b);
    } else if (q.rows) {
        float *X, *Y;
        xgb_rows(&q, m->mode, &X, &Y);
        float *P = ns_xcalloc((size_t)q.rows * (size_t)q.D + 1, sizeof(float));
        ns_forest_predict(&m->forest, X, (int)q.rows, P);
        *loss = ns_mse_forward(P, Y, NULL, (int)q.rows, q.D);
        free(X), free(Y), free(P);
    }
    seqs_free(&q);
    return st;
}

ns_status ns_predictor_loss_grad(ns_predictor *m, const ns_trajset *s, double *loss, ns_error *err)
{
    if (m->kind != NS_PREDICTOR_LSTM)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "gradients exist for the LSTM predictor only");
    if (s->n < 1 || s->n > 256)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "gradients over 1..256 trajectories (one batch)");
    seqs q;
    ns_status st = seqs_encode(&q, &m->enc, s, err);
    if (st != NS_OK) return st;
    int *ids = ns_xcalloc((size_t)q.n, sizeof(int));
    for (int i = 0; i < q.n; i++) ids[i] = i;
    batch b;
    memset(&b, 0, sizeof b);
    batch_fill(&b, m, &q, ids, q.n);
    ns_params_zero_grad(&m->params);
    *loss = batch_forward(&b, m);
    batch_backward(&b, m);
    batch_free(&b);
    free(ids);
    seqs_free(&q);
    return NS_OK;
}
