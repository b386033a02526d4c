/* world.c — the EmbedPlan world model: features, projection heads, the
 * transition T (resmlp / FiLM), the batch loss with its backward pass, the
 * training loop and checkpoints (see world.h). */
#include "nextstate/learn/world.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nextstate/util/blas.h"
#include "nextstate/util/json.h"
#include "nextstate/learn/loss.h"
#include "nextstate/learn/nn.h"
#include "nextstate/util/npy.h"
#include "nextstate/learn/optim.h"

/* ======================================================================
 * model
 * ====================================================================== */

const char *ns_world_kind_name(ns_world_kind k) { return k == NS_WORLD_FILM ? "film" : "resmlp"; }

int ns_world_kind_parse(const char *s)
{
    if (!strcmp(s, "resmlp") || !strcmp(s, "mlp")) return NS_WORLD_RESMLP;
    if (!strcmp(s, "film") || !strcmp(s, "hyper") || !strcmp(s, "hypernetwork")) return NS_WORLD_FILM;
    return -1;
}

void ns_world_config_init(ns_world_config *c)
{
    memset(c, 0, sizeof *c);
    c->kind = NS_WORLD_RESMLP;
    c->layers = 2;
    c->out = 128;
}

#define TP(w, i) ((w)->p.data + (w)->p.t[(w)->t_idx[i]].offset)
#define TG(w, i) ((w)->p.grad + (w)->p.t[(w)->t_idx[i]].offset)
#define PD(w, i) ((w)->p.data + (w)->p.t[i].offset)
#define PG(w, i) ((w)->p.grad + (w)->p.t[i].offset)

static void declare_head(ns_world *w, ns_world_head *h, const char *name, int in, bool sparse, int hidden, int layers,
                         int out)
{
    char pre[64];
    h->in = in;
    h->sparse = sparse;
    h->hidden = hidden;
    h->layers = layers;
    h->out = out;
    int prev = in;
    for (int l = 0; l < layers - 1; l++) {
        snprintf(pre, sizeof pre, "%s.%d", name, l);
        h->lin_w[l] = ns_params_add_linear(&w->p, pre, prev, hidden, true);
        h->lin_b[l] = h->lin_w[l] + 1;
        snprintf(pre, sizeof pre, "%s.%d.ln", name, l);
        h->ln_w[l] = ns_params_add_layernorm(&w->p, pre, hidden);
        h->ln_b[l] = h->ln_w[l] + 1;
        prev = hidden;
    }
    snprintf(pre, sizeof pre, "%s.out", name);
    h->lin_w[layers - 1] = ns_params_add_linear(&w->p, pre, prev, out, true);
    h->lin_b[layers - 1] = h->lin_w[layers - 1] + 1;
}

static int add_t(ns_world *w, int idx)
{
    w->t_idx[w->nt++] = idx;
    return idx;
}

ns_status ns_world_create(ns_world *w, const ns_world_config *c, uint64_t seed, ns_error *err)
{
    memset(w, 0, sizeof *w);
    w->cfg = *c;
    ns_world_config *g = &w->cfg;
    if (g->layers < 1 || g->layers > NS_WORLD_MAX_LAYERS)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "layers must be in [1, %d], given %d", NS_WORLD_MAX_LAYERS,
                            g->layers);
    if (g->state_dim < 1 || g->action_dim < 1 || g->out < 1)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "empty features (state width %d, action width %d)",
                            g->state_dim, g->action_dim);
    if (!g->state_hidden) g->state_hidden = g->state_sparse ? 512 : g->state_dim;
    if (!g->action_hidden) g->action_hidden = g->action_sparse ? 512 : g->action_dim;
    if (!g->t_hidden) g->t_hidden = g->kind == NS_WORLD_FILM ? 192 : 128;
    ns_params_init(&w->p);
    declare_head(w, &w->hs, "ps", g->state_dim, g->state_sparse, g->state_hidden, g->layers, g->out);
    declare_head(w, &w->ha, "pa", g->action_dim, g->action_sparse, g->action_hidden, g->layers, g->out);
    int O = g->out, H = g->t_hidden, i;
    if (g->kind == NS_WORLD_RESMLP) {
        i = ns_params_add_linear(&w->p, "t.w1", 2 * O, H, true);
        add_t(w, i), add_t(w, i + 1);
        i = ns_params_add_linear(&w->p, "t.w2", H, O, true);
        add_t(w, i), add_t(w, i + 1);
        add_t(w, ns_params_add_linear(&w->p, "t.w_res", O, O, false));
        i = ns_params_add_layernorm(&w->p, "t.ln", O);
        add_t(w, i), add_t(w, i + 1);
    } else {
        const char *lin[5] = {"t.z", "t.A", "t.b", "t.in", "t.o"};
        int ins[5] = {O, H, H, O, O}, outs[5] = {H, O, O, O, O};
        for (int k = 0; k < 5; k++) {
            i = ns_params_add_linear(&w->p, lin[k], ins[k], outs[k], true);
            add_t(w, i), add_t(w, i + 1);
        }
        i = ns_params_add_layernorm(&w->p, "t.film_ln", O);
        add_t(w, i), add_t(w, i + 1);
        i = ns_params_add_layernorm(&w->p, "t.ln", O);
        add_t(w, i), add_t(w, i + 1);
    }
    ns_status st = ns_params_alloc(&w->p, err);
    if (st) {
        ns_params_free(&w->p);
        return st;
    }
    ns_params_init_values(&w->p, seed);
    return NS_OK;
}

/* The tensors an inference precision packs: the dense layers of both heads,
 * and W1, W2, W_res of the residual-MLP T; returns their count. */
static int packed_layers(const ns_world *w, int *idx)
{
    int n = 0;
    const ns_world_head *heads[2] = {&w->hs, &w->ha};
    for (int h = 0; h < 2; h++)
        for (int l = heads[h]->sparse ? 1 : 0; l < heads[h]->layers; l++) idx[n++] = heads[h]->lin_w[l];
    if (w->cfg.kind == NS_WORLD_RESMLP) idx[n++] = w->t_idx[0], idx[n++] = w->t_idx[2], idx[n++] = w->t_idx[4];
    return n;
}

/* Packs copies of the packed_layers (int8 or bfloat16) into *blob, their
 * offsets (in elements of esize bytes) into *at, SIZE_MAX for the others. */
static void pack_layers(const ns_world *w, bool i8, void **blob, size_t **at)
{
    int idx[2 * NS_WORLD_MAX_LAYERS + 3], n = packed_layers(w, idx);
    size_t *a = ns_xmalloc((size_t)(w->p.n ? w->p.n : 1) * sizeof *a);
    for (int i = 0; i < w->p.n; i++) a[i] = SIZE_MAX;
    size_t total = 0, esize = i8 ? 1 : sizeof(uint16_t);
    for (int k = 0; k < n; k++) {
        const ns_tensor_info *t = &w->p.t[idx[k]];
        a[idx[k]] = total;
        int C = (int)t->shape[1], OC = (int)t->shape[0];
        size_t sz = i8 ? ns_i8_packed_size(C, OC) : ns_bf16_packed_size(C, OC);
        total += (sz * esize + 63) / 64 * 64 / esize; /* 64-byte runs */
    }
    /* 64-byte aligned, as the runs are: a kernel's 64-byte loads then never straddle two cache lines (from a
     * 16-byte aligned malloc every load of a batch-1 query's weight stream did, a third slower) */
    size_t bytes = ((total ? total : 1) * esize + 63) / 64 * 64;
    uint8_t *b = aligned_alloc(64, bytes);
    if (!b) b = ns_xmalloc(bytes);
    for (int k = 0; k < n; k++) {
        const ns_tensor_info *t = &w->p.t[idx[k]];
        const float *W = w->p.data + t->offset;
        if (i8) ns_i8_pack(b + a[idx[k]], W, (int)t->shape[1], (int)t->shape[0]);
        else ns_bf16_pack((uint16_t *)(void *)b + a[idx[k]], W, (int)t->shape[1], (int)t->shape[0]);
    }
    *blob = b;
    *at = a;
}

void ns_world_set_bf16(ns_world *w, bool on)
{
    free(w->bf16);
    free(w->bf16_at);
    w->bf16 = NULL;
    w->bf16_at = NULL;
    if (!on) return;
    void *b;
    pack_layers(w, false, &b, &w->bf16_at);
    w->bf16 = b;
}

void ns_world_set_int8(ns_world *w, bool on)
{
    free(w->i4); /* int4 models read int8 copies of their other layers */
    free(w->i4_at);
    w->i4 = NULL;
    w->i4_at = NULL;
    free(w->i8);
    free(w->i8_at);
    w->i8 = NULL;
    w->i8_at = NULL;
    if (!on) return;
    void *b;
    pack_layers(w, true, &b, &w->i8_at);
    w->i8 = b;
}

void ns_world_set_int4(ns_world *w, bool on)
{
    free(w->i4);
    free(w->i4_at);
    w->i4 = NULL;
    w->i4_at = NULL;
    ns_world_set_int8(w, on);
    if (!on) return;
    int idx[2 * NS_WORLD_MAX_LAYERS], n = 0;
    const ns_world_head *heads[2] = {&w->hs, &w->ha};
    for (int h = 0; h < 2; h++)
        for (int l = heads[h]->sparse ? 1 : 0; l < heads[h]->layers; l++) {
            const ns_tensor_info *t = &w->p.t[heads[h]->lin_w[l]];
            if (ns_i4_packed_size((int)t->shape[1], (int)t->shape[0], NS_I4_GROUP)) idx[n++] = heads[h]->lin_w[l];
        }
    size_t *a = ns_xmalloc((size_t)(w->p.n ? w->p.n : 1) * sizeof *a), total = 0;
    for (int i = 0; i < w->p.n; i++) a[i] = SIZE_MAX;
    for (int k = 0; k < n; k++) {
        const ns_tensor_info *t = &w->p.t[idx[k]];
        a[idx[k]] = total;
        total += (ns_i4_packed_size((int)t->shape[1], (int)t->shape[0], NS_I4_GROUP) + 63) / 64 * 64;
    }
    uint8_t *b = aligned_alloc(64, total ? total : 64);
    if (!b) b = ns_xmalloc(total ? total : 64);
    for (int k = 0; k < n; k++) {
        const ns_tensor_info *t = &w->p.t[idx[k]];
        /* cannot fail: ns_i4_packed_size accepted the shape */
        (void)ns_i4_pack(b + a[idx[k]], w->p.data + t->offset, (int)t->shape[1], (int)t->shape[0], NS_I4_GROUP);
    }
    w->i4 = b;
    w->i4_at = a;
}

/* Tensor i's packed bfloat16 copy, or NULL (float). */
static const uint16_t *bf16_of(const ns_world *w, int i)
{
    return w->bf16 && w->bf16_at[i] != SIZE_MAX ? w->bf16 + w->bf16_at[i] : NULL;
}

/* Tensor i's packed int8 copy, or NULL. */
static const uint8_t *i8_of(const ns_world *w, int i)
{
    return w->i8 && w->i8_at[i] != SIZE_MAX ? w->i8 + w->i8_at[i] : NULL;
}

/* Tensor i's packed int4 copy, or NULL. */
static const uint8_t *i4_of(const ns_world *w, int i)
{
    return w->i4 && w->i4_at[i] != SIZE_MAX ? w->i4 + w->i4_at[i] : NULL;
}

/* Dense layer l of head h in the model's precision (int4 ahead of the rest). */
static void head_linear(const ns_world *w, const ns_world_head *h, int l, float *out, const float *inp, int B, int C,
                        int OC)
{
    const uint8_t *q4 = i4_of(w, h->lin_w[l]);
    if (q4 && ns_linear_forward_i4(out, inp, q4, PD(w, h->lin_b[l]), B, C, OC) == NS_OK) return;
    ns_linear_forward_as(out, inp, PD(w, h->lin_w[l]), bf16_of(w, h->lin_w[l]), i8_of(w, h->lin_w[l]),
                         PD(w, h->lin_b[l]), B, C, OC);
}

void ns_world_free(ns_world *w)
{
    free(w->i4);
    free(w->i4_at);
    free(w->bf16);
    free(w->bf16_at);
    free(w->i8);
    free(w->i8_at);
    ns_params_free(&w->p);
    memset(w, 0, sizeof *w);
}

static size_t head_count(const ns_world *w, const char *prefix)
{
    size_t s = 0, n = strlen(prefix);
    for (int i = 0; i < w->p.n; i++)
        if (!strncmp(w->p.t[i].name, prefix, n)) s += w->p.t[i].count;
    return s;
}

void ns_world_counts(const ns_world *w, size_t *state_head, size_t *action_head, size_t *trans)
{
    if (state_head) *state_head = head_count(w, "ps.");
    if (action_head) *action_head = head_count(w, "pa.");
    if (trans) *trans = head_count(w, "t.");
}

/* ---- work space ------------------------------------------------------------------ */

typedef struct head_cache {
    int n;
    float *blk;
    size_t blk_cap;
    float *x;                             /* dense gathered input n×in */
    const float *xin;                     /* the dense input read: x, or a single row in place */
    int64_t *ip;                          /* sparse gathered input */
    int32_t *ix;
    float *iv;
    size_t ip_cap, nz_cap;
    float *a[NS_WORLD_MAX_LAYERS], *y[NS_WORLD_MAX_LAYERS], *g[NS_WORLD_MAX_LAYERS];
    float *mean[NS_WORLD_MAX_LAYERS], *rstd[NS_WORLD_MAX_LAYERS];
    float *out, *d1, *d2;
} head_cache;

typedef struct fbuf {
    float *p;
    size_t cap;
} fbuf;

static float *fgrow(fbuf *b, size_t n)
{
    if (n > b->cap) {
        free(b->p);
        b->cap = n + n / 2 + 16;
        b->p = ns_xmalloc(b->cap * sizeof(float));
    }
    return b->p;
}

struct ns_world_ws {
    head_cache hc[2]; /* state head, action head */
    fbuf tscr;        /* T scratch */
    /* batch-loss buffers */
    fbuf hs_p, ha_p, pred, dpred, dhs_p, dha_p, pt, dpt, dtgt, pad, dpad, tgt_a, dtgt_a, dHS, dHA, lscr1, lscr2;
    fbuf dxs, dxa; /* gradients w.r.t. the input rows (ns_world_feed) */
    fbuf one;      /* ns_world_predict1's activations */
    int64_t *i64;
    size_t i64_cap;
    int32_t *i32;
    size_t i32_cap;
};

ns_world_ws *ns_world_ws_new(void) { return ns_xcalloc(1, sizeof(ns_world_ws)); }

void ns_world_ws_free(ns_world_ws *ws)
{
    if (!ws) return;
    for (int k = 0; k < 2; k++) {
        free(ws->hc[k].blk);
        free(ws->hc[k].ip);
        free(ws->hc[k].ix);
        free(ws->hc[k].iv);
    }
    fbuf *bs[] = {&ws->tscr, &ws->hs_p, &ws->ha_p, &ws->pred, &ws->dpred, &ws->dhs_p, &ws->dha_p, &ws->pt,
                  &ws->dpt, &ws->dtgt, &ws->pad, &ws->dpad, &ws->tgt_a, &ws->dtgt_a, &ws->dHS, &ws->dHA,
                  &ws->lscr1, &ws->lscr2, &ws->dxs, &ws->dxa, &ws->one};
    for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++) free(bs[i]->p);
    free(ws->i64);
    free(ws->i32);
    free(ws);
}

/* ---- projection heads ------------------------------------------------------------ */

static void head_forward(const ns_world *w, const ns_world_head *h, head_cache *c, const ns_features *f,
                         const int64_t *rows, int n)
{
    int H = h->hidden, L = h->layers;
    size_t per = (size_t)(L - 1) * (3 * (size_t)H + 2) + (size_t)h->out + 2 * (size_t)(H > h->out ? H : h->out) +
                 (h->sparse ? 0 : (size_t)h->in);
    size_t need = per * (size_t)(n ? n : 1);
    if (need > c->blk_cap) {
        free(c->blk);
        c->blk_cap = need + need / 2;
        c->blk = ns_xmalloc(c->blk_cap * sizeof(float));
    }
    c->n = n;
    float *q = c->blk;
    size_t nh = (size_t)n * H;
    for (int l = 0; l < L - 1; l++) {
        c->a[l] = q, q += nh;
        c->y[l] = q, q += nh;
        c->g[l] = q, q += nh;
        c->mean[l] = q, q += n;
        c->rstd[l] = q, q += n;
    }
    c->out = q, q += (size_t)n * h->out;
    size_t dw = (size_t)n * (H > h->out ? H : h->out);
    c->d1 = q, q += dw;
    c->d2 = q, q += dw;
    c->x = q;
    if (h->sparse) {
        const ns_csr *m = &f->csr;
        int64_t nnz = 0;
        for (int i = 0; i < n; i++) nnz += m->indptr[rows[i] + 1] - m->indptr[rows[i]];
        if ((size_t)n + 1 > c->ip_cap) {
            c->ip_cap = (size_t)n + 1 + n / 2;
            c->ip = ns_xrealloc(c->ip, c->ip_cap * sizeof *c->ip);
        }
        if ((size_t)nnz + 1 > c->nz_cap) {
            c->nz_cap = (size_t)nnz + 1 + (size_t)nnz / 2;
            c->ix = ns_xrealloc(c->ix, c->nz_cap * sizeof *c->ix);
            c->iv = ns_xrealloc(c->iv, c->nz_cap * sizeof *c->iv);
        }
        c->ip[0] = 0;
        for (int i = 0; i < n; i++) {
            int64_t a = m->indptr[rows[i]], b = m->indptr[rows[i] + 1];
            memcpy(c->ix + c->ip[i], m->indices + a, (size_t)(b - a) * sizeof(int32_t));
            memcpy(c->iv + c->ip[i], m->values + a, (size_t)(b - a) * sizeof(float));
            c->ip[i + 1] = c->ip[i] + (b - a);
        }
    } else if (n == 1) { /* a single row is read where it is (a batch-1 query: no copy) */
        c->xin = f->dense + (size_t)rows[0] * h->in;
    } else {
        for (int i = 0; i < n; i++)
            memcpy(c->x + (size_t)i * h->in, f->dense + (size_t)rows[i] * h->in, (size_t)h->in * sizeof(float));
        c->xin = c->x;
    }
    const float *prev = c->xin;
    int pdim = h->in;
    for (int l = 0; l < L; l++) {
        const float *W = PD(w, h->lin_w[l]), *B = PD(w, h->lin_b[l]);
        float *o = l == L - 1 ? c->out : c->a[l];
        int od = l == L - 1 ? h->out : H;
        if (l == 0 && h->sparse)
            ns_sparse_linear_forward(o, c->ip, c->ix, c->iv, W, B, n, h->in, od);
        else
            head_linear(w, h, l, o, prev, n, pdim, od);
        if (l == L - 1) break;
        ns_layernorm_forward(c->y[l], c->mean[l], c->rstd[l], c->a[l], PD(w, h->ln_w[l]), PD(w, h->ln_b[l]), n, H,
                             NS_LN_EPS);
        ns_gelu_forward(c->g[l], c->y[l], nh);
        prev = c->g[l];
        pdim = H;
    }
}

/* Adds the head's parameter gradients for dout[n × out]; dx (optional,
 * dense heads only) receives the gradient w.r.t. the input rows. */
static void head_backward(ns_world *w, const ns_world_head *h, head_cache *c, const float *dout, float *dx)
{
    int n = c->n, H = h->hidden, L = h->layers;
    size_t nh = (size_t)n * H;
    float *d1 = c->d1, *d2 = c->d2;
    for (int l = L - 1; l >= 0; l--) {
        /* dcur: gradient w.r.t. the output of linear layer l */
        const float *dcur = l == L - 1 ? dout : d1;
        float *dW = PG(w, h->lin_w[l]), *dB = PG(w, h->lin_b[l]);
        const float *W = PD(w, h->lin_w[l]);
        int od = l == L - 1 ? h->out : H;
        if (l == 0) {
            if (h->sparse)
                ns_sparse_linear_backward(dW, dB, dcur, c->ip, c->ix, c->iv, n, h->in, od);
            else
                ns_linear_backward(dx, dW, dB, dcur, c->xin, W, n, h->in, od);
            break;
        }
        /* input of layer l is g[l-1]; its gradient into d2 */
        memset(d2, 0, nh * sizeof(float));
        ns_linear_backward(d2, dW, dB, dcur, c->g[l - 1], W, n, H, od);
        /* GELU: d y[l-1] into d1 */
        memset(d1, 0, nh * sizeof(float));
        ns_gelu_backward(d1, d2, c->y[l - 1], nh);
        /* LayerNorm: d a[l-1] into d2, then move to d1 */
        memset(d2, 0, nh * sizeof(float));
        ns_layernorm_backward(d2, PG(w, h->ln_w[l - 1]), PG(w, h->ln_b[l - 1]), d1, c->a[l - 1],
                              PD(w, h->ln_w[l - 1]), c->mean[l - 1], c->rstd[l - 1], n, H);
        float *t = d1;
        d1 = d2;
        d2 = t;
    }
}

void ns_world_project(const ns_world *w, ns_world_ws *ws, const ns_features *f, bool state, const int64_t *rows,
                      int n, float *out)
{
    const ns_world_head *h = state ? &w->hs : &w->ha;
    head_cache *c = &ws->hc[state ? 0 : 1];
    head_forward(w, h, c, f, rows, n);
    memcpy(out, c->out, (size_t)n * h->out * sizeof(float));
}

/* ---- transition T ---------------------------------------------------------------- */

static ns_resmlp_w resmlp_w(const ns_world *w, bool grad)
{
    ns_resmlp_w r;
    float *b = grad ? w->p.grad : w->p.data;
#define T_(k) (b + w->p.t[w->t_idx[k]].offset)
    r.w1 = T_(0), r.b1 = T_(1), r.w2 = T_(2), r.b2 = T_(3), r.w_res = T_(4), r.ln_w = T_(5), r.ln_b = T_(6);
#undef T_
    r.h1 = r.h2 = r.h_res = NULL;
    r.q1 = r.q2 = r.q_res = NULL;
    if (!grad) r.h1 = bf16_of(w, w->t_idx[0]), r.h2 = bf16_of(w, w->t_idx[2]), r.h_res = bf16_of(w, w->t_idx[4]);
    if (!grad) r.q1 = i8_of(w, w->t_idx[0]), r.q2 = i8_of(w, w->t_idx[2]), r.q_res = i8_of(w, w->t_idx[4]);
    return r;
}

/* FiLM scratch per row: zpre, z [H]; A, b, hin, y, o [O]; film scratch [3O+2]; mean, rstd;
 * backward temps: do, dy, dhin, dA, db [O], dz [H]. */
static size_t film_scratch(int n, int O, int H)
{
    return (size_t)n * (2 * (size_t)H + 5 * (size_t)O + ns_film_scratch(1, O) + 2 + 5 * (size_t)O + (size_t)H);
}

typedef struct film_scr {
    float *zpre, *z, *A, *b, *hin, *y, *o, *fs, *mean, *rstd, *dO, *dy, *dhin, *dA, *db, *dz;
} film_scr;

static film_scr film_carve(float *s, int n, int O, int H)
{
    film_scr f;
    size_t nO = (size_t)n * O, nH = (size_t)n * H;
    f.zpre = s, s += nH;
    f.z = s, s += nH;
    f.A = s, s += nO;
    f.b = s, s += nO;
    f.hin = s, s += nO;
    f.y = s, s += nO;
    f.o = s, s += nO;
    f.fs = s, s += ns_film_scratch(n, O);
    f.mean = s, s += n;
    f.rstd = s, s += n;
    f.dO = s, s += nO;
    f.dy = s, s += nO;
    f.dhin = s, s += nO;
    f.dA = s, s += nO;
    f.db = s, s += nO;
    f.dz = s;
    return f;
}

static void t_forward(const ns_world *w, ns_world_ws *ws, const float *hs, const float *ha, int n, float *pred)
{
    int O = w->cfg.out, H = w->cfg.t_hidden;
    if (w->cfg.kind == NS_WORLD_RESMLP) {
        ns_resmlp_dims d = {O, O, H, O};
        float *s = fgrow(&ws->tscr, ns_resmlp_scratch(n ? n : 1, d));
        ns_resmlp_w wt = resmlp_w(w, false);
        ns_resmlp_forward(pred, s, hs, ha, &wt, n, d);
        return;
    }
    film_scr f = film_carve(fgrow(&ws->tscr, film_scratch(n ? n : 1, O, H)), n, O, H);
    size_t nO = (size_t)n * O;
    ns_linear_forward(f.zpre, ha, TP(w, 0), TP(w, 1), n, O, H);
    ns_gelu_forward(f.z, f.zpre, (size_t)n * H);
    ns_linear_forward(f.A, f.z, TP(w, 2), TP(w, 3), n, H, O);
    ns_linear_forward(f.b, f.z, TP(w, 4), TP(w, 5), n, H, O);
    ns_linear_forward(f.hin, hs, TP(w, 6), TP(w, 7), n, O, O);
    ns_film_forward(f.y, f.fs, f.hin, f.A, f.b, TP(w, 10), TP(w, 11), n, O);
    ns_linear_forward(f.o, f.y, TP(w, 8), TP(w, 9), n, O, O);
    for (size_t i = 0; i < nO; i++) f.o[i] += hs[i];
    ns_layernorm_forward(pred, f.mean, f.rstd, f.o, TP(w, 12), TP(w, 13), n, O, NS_LN_EPS);
}

static void t_backward(ns_world *w, ns_world_ws *ws, const float *hs, const float *ha, int n, const float *dpred,
                       float *dhs, float *dha)
{
    int O = w->cfg.out, H = w->cfg.t_hidden;
    if (w->cfg.kind == NS_WORLD_RESMLP) {
        ns_resmlp_dims d = {O, O, H, O};
        ns_resmlp_w wt = resmlp_w(w, false), gt = resmlp_w(w, true);
        ns_resmlp_backward(dhs, dha, &gt, dpred, ws->tscr.p, hs, &wt, n, d);
        return;
    }
    film_scr f = film_carve(ws->tscr.p, n, O, H);
    size_t nO = (size_t)n * O, nH = (size_t)n * H;
    memset(f.dO, 0, 5 * nO * sizeof(float));
    memset(f.dz, 0, nH * sizeof(float));
    ns_layernorm_backward(f.dO, TG(w, 12), TG(w, 13), dpred, f.o, TP(w, 12), f.mean, f.rstd, n, O);
    for (size_t i = 0; i < nO; i++) dhs[i] += f.dO[i];
    ns_linear_backward(f.dy, TG(w, 8), TG(w, 9), f.dO, f.y, TP(w, 8), n, O, O);
    ns_film_backward(f.dhin, f.dA, f.db, TG(w, 10), TG(w, 11), f.dy, f.fs, f.hin, f.A, TP(w, 10), n, O);
    ns_linear_backward(dhs, TG(w, 6), TG(w, 7), f.dhin, hs, TP(w, 6), n, O, O);
    ns_linear_backward(f.dz, TG(w, 2), TG(w, 3), f.dA, f.z, TP(w, 2), n, H, O);
    ns_linear_backward(f.dz, TG(w, 4), TG(w, 5), f.db, f.z, TP(w, 4), n, H, O);
    /* reuse zpre's gradient in place: dzpre = GELU'(zpre)·dz, into dA's space is too small; use a loop */
    for (size_t i = 0; i < nH; i++) {
        float x = f.zpre[i];
        float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
        float pdf = 0.3989422804014327f * expf(-0.5f * x * x);
        f.dz[i] *= cdf + x * pdf;
    }
    ns_linear_backward(dha, TG(w, 0), TG(w, 1), f.dz, ha, TP(w, 0), n, O, H);
}

void ns_world_transition(const ns_world *w, ns_world_ws *ws, const float *hs, const float *ha, int n, float *pred)
{
    t_forward(w, ws, hs, ha, n, pred);
}

/* ---- batch-1 query (see world.h) --------------------------------------------------- */

/* head_linear for one row x with xmax = max|x[c]| known. */
static void head_linear1(const ns_world *w, const ns_world_head *h, int l, float *out, const float *x, float xmax,
                         int C, int OC)
{
    const uint8_t *q4 = i4_of(w, h->lin_w[l]);
    if (q4 && ns_linear_forward_i4_max(out, x, xmax, q4, PD(w, h->lin_b[l]), C, OC) == NS_OK) return;
    ns_linear_forward_as_max(out, x, xmax, PD(w, h->lin_w[l]), bf16_of(w, h->lin_w[l]), i8_of(w, h->lin_w[l]),
                             PD(w, h->lin_b[l]), C, OC);
}

/* head_forward for one dense row x into out (h->out), s scratch of 2·hidden
 * floats: the same operations on the same inputs, so the same bits — each
 * hidden layer's LayerNorm and GELU fused (ns_layernorm_gelu1), its
 * max|·| handed to the next layer. */
static void head1(const ns_world *w, const ns_world_head *h, const float *x, float *out, float *s)
{
    int H = h->hidden, L = h->layers;
    if (L == 1) {
        head_linear(w, h, 0, out, x, 1, h->in, h->out);
        return;
    }
    head_linear(w, h, 0, s, x, 1, h->in, H);
    for (int l = 1; l < L; l++) {
        float m = ns_layernorm_gelu1(s + H, s, PD(w, h->ln_w[l - 1]), PD(w, h->ln_b[l - 1]), H, NS_LN_EPS);
        if (l == L - 1) head_linear1(w, h, l, out, s + H, m, H, h->out);
        else head_linear1(w, h, l, s, s + H, m, H, H);
    }
}

/* head1 for both heads (their layers and hidden widths equal) into os and
 * oa, s scratch of 4·hidden floats, layer by layer: each hidden layer's
 * LayerNorm and GELU for the two rows in one call (ns_layernorm_gelu2, whose
 * statistics — chains of dependent additions — run side by side).  The
 * same operations on the same inputs as head1's, so the same bits. */
static void heads2(const ns_world *w, const float *xs, const float *xa, float *os, float *oa, float *s)
{
    const ns_world_head *h[2] = {&w->hs, &w->ha};
    int H = w->hs.hidden, L = w->hs.layers;
    if (L == 1) {
        head_linear(w, h[0], 0, os, xs, 1, h[0]->in, h[0]->out);
        head_linear(w, h[1], 0, oa, xa, 1, h[1]->in, h[1]->out);
        return;
    }
    float *a[2] = {s, s + H}, *g[2] = {s + 2 * H, s + 3 * H}, *o[2] = {os, oa};
    head_linear(w, h[0], 0, a[0], xs, 1, h[0]->in, H);
    head_linear(w, h[1], 0, a[1], xa, 1, h[1]->in, H);
    for (int l = 1; l < L; l++) {
        const float *in[2] = {a[0], a[1]}, *lw[2], *lb[2];
        float mx[2];
        for (int k = 0; k < 2; k++) lw[k] = PD(w, h[k]->ln_w[l - 1]), lb[k] = PD(w, h[k]->ln_b[l - 1]);
        ns_layernorm_gelu2(g, in, lw, lb, H, NS_LN_EPS, mx);
        for (int k = 0; k < 2; k++) {
            if (l == L - 1) head_linear1(w, h[k], l, o[k], g[k], mx[k], H, h[k]->out);
            else head_linear1(w, h[k], l, a[k], g[k], mx[k], H, H);
        }
    }
}

void ns_world_predict1(const ns_world *w, ns_world_ws *ws, const ns_features *fs, int64_t srow,
                       const ns_features *fa, int64_t arow, float *pred)
{
    int O = w->cfg.out, H = w->hs.hidden > w->ha.hidden ? w->hs.hidden : w->ha.hidden;
    ns_resmlp_dims d = {O, O, w->cfg.t_hidden, O};
    size_t sh = 4 * (size_t)H, st = ns_resmlp_scratch(1, d); /* head1's or heads2's and T's scratch */
    float *h = fgrow(&ws->one, 2 * (size_t)O + (sh > st ? sh : st));
    if (w->hs.sparse || w->ha.sparse || w->cfg.kind != NS_WORLD_RESMLP) {
        ns_world_project(w, ws, fs, true, &srow, 1, h);
        ns_world_project(w, ws, fa, false, &arow, 1, h + O);
        ns_world_transition(w, ws, h, h + O, 1, pred);
        return;
    }
    const float *xs = fs->dense + (size_t)srow * w->hs.in, *xa = fa->dense + (size_t)arow * w->ha.in;
    float *s = h + 2 * O;
    if (w->hs.layers == w->ha.layers && w->hs.hidden == w->ha.hidden) {
        heads2(w, xs, xa, h, h + O, s);
    } else {
        head1(w, &w->hs, xs, h, s);
        head1(w, &w->ha, xa, h + O, s);
    }
    ns_resmlp_w wt = resmlp_w(w, false);
    ns_resmlp_forward(pred, s, h, h + O, &wt, 1, d);
}

/* ---- T split into a state part and an action part (see world.h) ------------------ */

void ns_world_tsplit_dims(const ns_world *w, int *state_dim, int *action_dim)
{
    int O = w->cfg.out, H = w->cfg.t_hidden;
    bool res = w->cfg.kind == NS_WORLD_RESMLP;
    if (state_dim) *state_dim = res ? H + O : 2 * O;
    if (action_dim) *action_dim = res ? H : 2 * O;
}

void ns_world_tstate(const ns_world *w, ns_world_ws *ws, const float *hs, int n, float *out)
{
    int O = w->cfg.out, H = w->cfg.t_hidden, sd;
    ns_world_tsplit_dims(w, &sd, NULL);
    if (n <= 0) return;
    if (w->cfg.kind == NS_WORLD_RESMLP) {
        ns_resmlp_w r = resmlp_w(w, false);
        /* [W1_s·h_s + b1 ; W_res·h_s + b2], W1_s = the first O columns of W1 [H × 2O] */
        for (int i = 0; i < n; i++) {
            memcpy(out + (size_t)i * sd, r.b1, (size_t)H * sizeof(float));
            memcpy(out + (size_t)i * sd + H, r.b2, (size_t)O * sizeof(float));
        }
        ns_sgemm(false, true, n, H, O, 1.0f, hs, O, r.w1, 2 * O, 1.0f, out, sd);
        ns_sgemm(false, true, n, O, O, 1.0f, hs, O, r.w_res, O, 1.0f, out + H, sd);
        return;
    }
    /* [LN_film(W_in·h_s + b_in) ; h_s + b_o] */
    float *s = fgrow(&ws->tscr, (size_t)n * (2 * (size_t)O + 2));
    float *hin = s, *nrm = hin + (size_t)n * O, *mean = nrm + (size_t)n * O, *rstd = mean + n;
    ns_linear_forward(hin, hs, TP(w, 6), TP(w, 7), n, O, O);
    ns_layernorm_forward(nrm, mean, rstd, hin, TP(w, 10), TP(w, 11), n, O, NS_LN_EPS);
    const float *bo = TP(w, 9);
    for (int i = 0; i < n; i++) {
        memcpy(out + (size_t)i * sd, nrm + (size_t)i * O, (size_t)O * sizeof(float));
        for (int j = 0; j < O; j++) out[(size_t)i * sd + O + j] = hs[(size_t)i * O + j] + bo[j];
    }
}

void ns_world_taction(const ns_world *w, ns_world_ws *ws, const float *ha, int n, float *out)
{
    int O = w->cfg.out, H = w->cfg.t_hidden, ad;
    ns_world_tsplit_dims(w, NULL, &ad);
    if (n <= 0) return;
    if (w->cfg.kind == NS_WORLD_RESMLP) {
        ns_resmlp_w r = resmlp_w(w, false);
        /* W1_a·h_a, W1_a = the last O columns of W1 */
        ns_sgemm(false, true, n, H, O, 1.0f, ha, O, r.w1 + O, 2 * O, 0.0f, out, ad);
        return;
    }
    /* [1 + A ; b] of the FiLM adapter */
    float *s = fgrow(&ws->tscr, (size_t)n * (2 * (size_t)H + 2 * (size_t)O));
    float *zpre = s, *z = zpre + (size_t)n * H, *A = z + (size_t)n * H, *b = A + (size_t)n * O;
    ns_linear_forward(zpre, ha, TP(w, 0), TP(w, 1), n, O, H);
    ns_gelu_forward(z, zpre, (size_t)n * H);
    ns_linear_forward(A, z, TP(w, 2), TP(w, 3), n, H, O);
    ns_linear_forward(b, z, TP(w, 4), TP(w, 5), n, H, O);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < O; j++) {
            out[(size_t)i * ad + j] = 1.0f + A[(size_t)i * O + j];
            out[(size_t)i * ad + O + j] = b[(size_t)i * O + j];
        }
}

/* Pairs from which the split T's last linear layer takes one sgemm instead
 * of a matrix-vector product per pair (sgemm packs its operands first: for
 * a handful of rows that costs more than the products). */
enum { SPLIT_GEMM_ROWS = 8 };

void ns_world_transition_split(const ns_world *w, ns_world_ws *ws, const float *ts, size_t ts_stride, const float *ta,
                               size_t ta_stride, int n, float *pred)
{
    int O = w->cfg.out, H = w->cfg.t_hidden;
    if (n <= 0) return;
    bool res = w->cfg.kind == NS_WORLD_RESMLP;
    int K = res ? H : O; /* width of the pointwise stage and of the last linear's input */
    float *s = fgrow(&ws->tscr, (size_t)n * ((size_t)K + 2 * (size_t)O + 2));
    float *g = s, *z = g + (size_t)n * K, *mean = z + (size_t)n * O, *rstd = mean + n, *zg = rstd + n;
    for (int i = 0; i < n; i++) {
        const float *sp = ts + (size_t)i * ts_stride, *ap = ta + (size_t)i * ta_stride;
        float *gi = g + (size_t)i * K;
        if (res)
            for (int j = 0; j < H; j++) gi[j] = sp[j] + ap[j];
        else
            for (int j = 0; j < O; j++) gi[j] = sp[j] * ap[j] + ap[O + j];
        memcpy(z + (size_t)i * O, sp + (res ? H : O), (size_t)O * sizeof(float));
    }
    ns_gelu_forward(g, g, (size_t)n * K);
    /* z += g · W_lastᵀ: W2 [O × H] (resmlp) or W_o [O × O] (film); then T's closing LayerNorm */
    const float *wl = TP(w, res ? 2 : 8), *lw = TP(w, res ? 5 : 12), *lb = TP(w, res ? 6 : 13);
    if (n >= SPLIT_GEMM_ROWS) {
        ns_sgemm(false, true, n, O, K, 1.0f, g, K, wl, K, 1.0f, z, O);
    } else { /* a few pairs (one query, one expansion): matrix-vector products, no sgemm packing */
        for (int i = 0; i < n; i++)
            ns_linear_forward(zg + (size_t)i * O, g + (size_t)i * K, wl, z + (size_t)i * O, 1, K, O);
        z = zg;
    }
    ns_layernorm_forward(pred, mean, rstd, z, lw, lb, n, O, NS_LN_EPS);
}

/* ======================================================================
 * batch loss
 * ====================================================================== */

int ns_train_epochs(const ns_train_opts *o, int64_t nbatch)
{
    if (nbatch < 1) return o->epochs;
    int64_t want = o->steps > 0 ? o->steps : o->min_steps;
    if (want <= 0) return o->epochs;
    int64_t e = (want + nbatch - 1) / nbatch;
    if (o->steps <= 0 && e < o->epochs) e = o->epochs;
    return e > INT_MAX ? INT_MAX : (int)e;
}

void ns_train_opts_init(ns_train_opts *o)
{
    memset(o, 0, sizeof *o);
    o->lr = 4e-5;
    o->weight_decay = 0.01;
    o->beta1 = 0.9;
    o->beta2 = 0.999;
    o->warmup_epochs = 10;
    o->warmup_start = 0.1;
    o->batch = 128;
    o->epochs = 200;
    o->seed = 1;
    o->tau = 0.07f;
    o->action_weight = 2.0f;
    o->action_k = 50;
    o->grid_n = 11;
    o->eval_every = 1;
    o->dev_pool = 128;
}

static int find_i64(const int64_t *a, int n, int64_t x)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int m = (lo + hi) / 2;
        if (a[m] < x) lo = m + 1;
        else if (a[m] > x) hi = m - 1;
        else return m;
    }
    return -1;
}

/* The list action loss's pairs: for each of the n transitions with other
 * applicable actions, the true pair (row i) and up to K other applicable
 * actions of its state (a uniform K-subset by reservoir sampling from rng),
 * appended to pair_s / pair_a from *np on; one padded row per such
 * transition in pad_pair (-1 padding).  Returns the rows' width (the
 * batch's widest), *np / *nrows the pair and row counts. */
static int sample_action_pairs(const ns_world_inputs *in, const int64_t *refs, int n, int K, ns_rng *rng,
                               int32_t *tmp, int32_t *count, int32_t *truth, int32_t *act_rows, int64_t *pad_pair,
                               int64_t *pair_s, int64_t *pair_a, int *np, int *nrows)
{
    int kmax = K + 1, P = *np, na = 0;
    for (int i = 0; i < n; i++) {
        int d = (int)refs[2 * i];
        const ns_dataset *ds = in->ds[d];
        const int32_t *tr = ns_dataset_transition(ds, refs[2 * i + 1]);
        const int64_t *off = ds->applicable_offsets.data;
        const int32_t *ops = ds->applicable_ops.data;
        int m = 0, seen = 0;
        /* tmp: positions in the state's applicable list */
        for (int64_t k = off[tr[1]]; k < off[tr[1] + 1]; k++) {
            if (ops[k] == tr[2]) continue;
            if (m < K) {
                tmp[m++] = (int32_t)(k - off[tr[1]]);
            } else { /* reservoir sampling keeps a uniform K-subset */
                uint64_t r = ns_rng_below(rng, (uint64_t)seen + 1);
                if (r < (uint64_t)K) tmp[r] = (int32_t)(k - off[tr[1]]);
            }
            seen++;
        }
        if (m == 0) continue;
        count[na] = 1 + m;
        truth[na] = 0;
        act_rows[na] = i;
        pad_pair[(size_t)na * kmax] = i;
        for (int j = 0; j < m; j++) {
            pair_s[P] = i;
            pair_a[P] = ns_world_applicable_arow(in, d, tr[1], off[tr[1]] + tmp[j]);
            pad_pair[(size_t)na * kmax + 1 + j] = P++;
        }
        for (int j = 1 + m; j < kmax; j++) pad_pair[(size_t)na * kmax + j] = -1;
        na++;
    }
    /* rows as wide as the batch's widest (the loss ignores padding; states rarely have K + 1 actions) */
    int wide = 1;
    for (int r = 0; r < na; r++)
        if (count[r] > wide) wide = count[r];
    for (int r = 1; r < na && wide < kmax; r++)
        memmove(pad_pair + (size_t)r * wide, pad_pair + (size_t)r * kmax, (size_t)wide * sizeof *pad_pair);
    *np = P;
    *nrows = na;
    return wide;
}

double ns_world_batch_loss(ns_world *w, ns_world_ws *ws, const ns_world_inputs *in, const int64_t *refs, int n,
                           const ns_train_opts *o, ns_rng *rng, bool backward)
{
    if (n <= 0) return 0.0;
    const int O = w->cfg.out;
    const bool use_act = o->action_weight > 0;
    const bool grid = use_act && o->action_grid;
    const int K = o->action_k > 0 ? o->action_k : 0;
    int gn = grid ? (o->grid_n < n ? o->grid_n : n) : 0;
    /* pair capacity */
    size_t pcap = (size_t)n;
    if (use_act && !grid) pcap += (size_t)n * K;
    if (grid) pcap += (size_t)gn * gn;
    /* integer buffers: srows[2n], arow[n], pair_s[pcap], pair_a_row[pcap] (then index), sorted[pcap],
     * pad_pair[n × (K+1) or gn²], count[n], truth[n], arows_i[n] */
    int kmax_cap = grid ? gn : K + 1;
    size_t need64 = 2 * (size_t)n + (size_t)n + 3 * pcap + (size_t)n * kmax_cap;
    if (need64 > ws->i64_cap) {
        ws->i64_cap = need64 + need64 / 2;
        ws->i64 = ns_xrealloc(ws->i64, ws->i64_cap * sizeof(int64_t));
    }
    size_t need32 = 3 * (size_t)n + (size_t)K + 1;
    if (need32 > ws->i32_cap) {
        ws->i32_cap = need32 + need32 / 2;
        ws->i32 = ns_xrealloc(ws->i32, ws->i32_cap * sizeof(int32_t));
    }
    int64_t *srows = ws->i64, *arow = srows + 2 * n, *pair_s = arow + n, *pair_a = pair_s + pcap,
            *uniq = pair_a + pcap, *pad_pair = uniq + pcap;
    int32_t *count = ws->i32, *truth = count + n, *act_rows = truth + n, *tmp = act_rows + n;
    for (int i = 0; i < n; i++) {
        int d = (int)refs[2 * i];
        const ns_dataset *ds = in->ds[d];
        const int32_t *tr = ns_dataset_transition(ds, refs[2 * i + 1]);
        srows[i] = in->state_base[d] + tr[1];
        srows[n + i] = in->state_base[d] + tr[3];
        arow[i] = ns_world_transition_arow(in, d, refs[2 * i + 1]);
        pair_s[i] = i;
        pair_a[i] = arow[i];
    }
    int P = n, na = 0, kmax = 1;
    if (grid) {
        kmax = gn;
        for (int i = 0; i < gn; i++) {
            count[na] = gn;
            truth[na] = i;
            act_rows[na] = i;
            for (int j = 0; j < gn; j++) {
                if (i == j) {
                    pad_pair[(size_t)na * kmax + j] = i;
                } else {
                    pair_s[P] = i;
                    pair_a[P] = arow[j];
                    pad_pair[(size_t)na * kmax + j] = P++;
                }
            }
            na++;
        }
    } else if (use_act) {
        kmax = sample_action_pairs(in, refs, n, K, rng, tmp, count, truth, act_rows, pad_pair, pair_s, pair_a, &P, &na);
    }
    /* unique action rows */
    memcpy(uniq, pair_a, (size_t)P * sizeof(int64_t));
    qsort(uniq, (size_t)P, sizeof(int64_t), ns_cmp_i64);
    int nu = 0;
    for (int k = 0; k < P; k++)
        if (!nu || uniq[nu - 1] != uniq[k]) uniq[nu++] = uniq[k];
    /* heads */
    const ns_world_feed *feed = o->feed;
    if (feed) feed->prepare(feed->ctx, srows, 2 * n, uniq, nu);
    head_forward(w, &w->hs, &ws->hc[0], &in->state, srows, 2 * n);
    head_forward(w, &w->ha, &ws->hc[1], &in->action, uniq, nu);
    const float *HS = ws->hc[0].out, *HA = ws->hc[1].out;
    const float *target = HS + (size_t)n * O;
    float *hs_p = fgrow(&ws->hs_p, (size_t)P * O), *ha_p = fgrow(&ws->ha_p, (size_t)P * O);
    int *aidx = (int *)fgrow(&ws->lscr2, (size_t)P); /* index of each pair's action in uniq */
    for (int k = 0; k < P; k++) {
        memcpy(hs_p + (size_t)k * O, HS + (size_t)pair_s[k] * O, (size_t)O * sizeof(float));
        aidx[k] = find_i64(uniq, nu, pair_a[k]);
        memcpy(ha_p + (size_t)k * O, HA + (size_t)aidx[k] * O, (size_t)O * sizeof(float));
    }
    float *pred = fgrow(&ws->pred, (size_t)P * O);
    t_forward(w, ws, hs_p, ha_p, P, pred);
    /* state loss on the first n pairs */
    float *iscr = fgrow(&ws->lscr1, ns_infonce_scratch(n, O));
    double loss = ns_infonce_forward(iscr, pred, target, n, O, o->tau);
    /* action loss */
    float *pad = NULL, *tgt_a = NULL, *ascr = NULL;
    if (na > 0) {
        pad = fgrow(&ws->pad, (size_t)na * kmax * O);
        tgt_a = fgrow(&ws->tgt_a, (size_t)na * O);
        for (int r = 0; r < na; r++) {
            memcpy(tgt_a + (size_t)r * O, target + (size_t)act_rows[r] * O, (size_t)O * sizeof(float));
            for (int j = 0; j < kmax; j++) {
                int64_t pp = pad_pair[(size_t)r * kmax + j];
                float *dst = pad + ((size_t)r * kmax + j) * O;
                if (pp >= 0) memcpy(dst, pred + (size_t)pp * O, (size_t)O * sizeof(float));
                else memset(dst, 0, (size_t)O * sizeof(float));
            }
        }
        ascr = fgrow(&ws->dpad, ns_action_loss_scratch(na, kmax, O) + (size_t)na * kmax * O + (size_t)na * O);
        loss += o->action_weight *
                ns_action_loss_forward(ascr, pad, tgt_a, count, truth, na, kmax, O, o->tau);
    }
    if (!backward) return loss;
    /* ---- backward ---- */
    float *dpred = fgrow(&ws->dpred, (size_t)P * O);
    memset(dpred, 0, (size_t)P * O * sizeof(float));
    float *dHS = fgrow(&ws->dHS, (size_t)2 * n * O);
    memset(dHS, 0, (size_t)2 * n * O * sizeof(float));
    float *dtarget = dHS + (size_t)n * O;
    ns_infonce_backward(dpred, dtarget, 1.0f, iscr, n, O, o->tau);
    if (na > 0) {
        size_t sa = ns_action_loss_scratch(na, kmax, O);
        float *dpad = ascr + sa, *dtgt_a = dpad + (size_t)na * kmax * O;
        memset(dpad, 0, ((size_t)na * kmax * O + (size_t)na * O) * sizeof(float));
        ns_action_loss_backward(dpad, dtgt_a, o->action_weight, ascr, count, truth, na, kmax, O, o->tau);
        for (int r = 0; r < na; r++) {
            float *dt = dtarget + (size_t)act_rows[r] * O;
            for (int c = 0; c < O; c++) dt[c] += dtgt_a[(size_t)r * O + c];
            for (int j = 0; j < kmax; j++) {
                int64_t pp = pad_pair[(size_t)r * kmax + j];
                if (pp < 0) continue;
                float *dp = dpred + (size_t)pp * O;
                const float *src = dpad + ((size_t)r * kmax + j) * O;
                for (int c = 0; c < O; c++) dp[c] += src[c];
            }
        }
    }
    float *dhs_p = fgrow(&ws->dhs_p, (size_t)P * O), *dha_p = fgrow(&ws->dha_p, (size_t)P * O);
    memset(dhs_p, 0, (size_t)P * O * sizeof(float));
    memset(dha_p, 0, (size_t)P * O * sizeof(float));
    t_backward(w, ws, hs_p, ha_p, P, dpred, dhs_p, dha_p);
    float *dHA = fgrow(&ws->dHA, (size_t)nu * O);
    memset(dHA, 0, (size_t)nu * O * sizeof(float));
    for (int k = 0; k < P; k++) {
        float *ds_ = dHS + (size_t)pair_s[k] * O, *da_ = dHA + (size_t)aidx[k] * O;
        const float *s1 = dhs_p + (size_t)k * O, *s2 = dha_p + (size_t)k * O;
        for (int c = 0; c < O; c++) ds_[c] += s1[c], da_[c] += s2[c];
    }
    float *dxs = NULL, *dxa = NULL;
    if (feed) {
        size_t ss = (size_t)2 * n * w->hs.in, sa = (size_t)nu * w->ha.in;
        dxs = memset(fgrow(&ws->dxs, ss), 0, ss * sizeof(float));
        dxa = memset(fgrow(&ws->dxa, sa), 0, sa * sizeof(float));
    }
    head_backward(w, &w->hs, &ws->hc[0], dHS, dxs);
    head_backward(w, &w->ha, &ws->hc[1], dHA, dxa);
    if (feed) feed->backward(feed->ctx, srows, 2 * n, dxs, uniq, nu, dxa);
    return loss;
}

/* ======================================================================
 * training loop
 * ====================================================================== */

ns_status ns_world_train(ns_world *w, const ns_world_inputs *in, const ns_split *sp, const ns_train_opts *o,
                         ns_train_stats *st, ns_error *err)
{
    memset(st, 0, sizeof *st);
    st->best_dev_hit5 = -1;
    ns_world_set_bf16(w, false);
    ns_world_set_int8(w, false);
    ns_status rc = ns_world_check_inputs(w, in, err);
    if (rc) return rc;
    const ns_refs *tr = &sp->train, *dev = &sp->dev;
    if (tr->n <= 0) return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "the split has no training transitions");
    if (o->batch < 1 || o->epochs < 0) return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "bad batch size or epochs");
    if (dev->n > 0 && !o->dev_score)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "a dev list needs a dev scorer (ns_eval_train_opts_init)");
    ns_rng rng;
    ns_rng_seed(&rng, o->seed ^ 0x7261696e31ULL);
    ns_adamw opt;
    ns_adamw_init(&opt, o->lr, o->weight_decay);
    opt.beta1 = o->beta1;
    opt.beta2 = o->beta2;
    int64_t ntr = tr->n;
    int64_t nbatch = (ntr + o->batch - 1) / o->batch; /* AdamW steps per epoch */
    int epochs = ns_train_epochs(o, nbatch);
    int *order = ns_xmalloc((size_t)ntr * sizeof *order);
    for (int64_t i = 0; i < ntr; i++) order[i] = (int)i;
    int64_t *brefs = ns_xmalloc((size_t)2 * o->batch * sizeof *brefs);
    int64_t *dev_pools = NULL;
    int dev_pool = o->dev_pool > 1 ? o->dev_pool : 128;
    if (dev->n > 0) dev_pools = ns_split_pools_draw(sp, in->ds, dev, dev_pool, o->seed ^ NS_SEED_DEV_POOLS);
    float *best = dev->n > 0 ? ns_xmalloc(w->p.total * sizeof(float)) : NULL;
    ns_world_ws *ws = ns_world_ws_new();
    ns_progress pg;
    ns_progress_init(&pg, o->progress, "train");
    double t0 = ns_now(), train_time = 0, best_mrr = -1;
    int since_best = 0;
    for (int ep = 0; ep < epochs; ep++) {
        double te = ns_now();
        ns_rng_shuffle_int(&rng, order, (size_t)ntr);
        double lr = o->lr * ns_warmup_factor(ep, o->warmup_epochs, o->warmup_start);
        double sum = 0;
        int nb = 0;
        for (int64_t b0 = 0; b0 < ntr && !(o->steps > 0 && st->steps >= o->steps); b0 += o->batch) {
            int bn = (int)(ntr - b0 < o->batch ? ntr - b0 : o->batch);
            for (int i = 0; i < bn; i++) {
                brefs[2 * i] = tr->ref[2 * order[b0 + i]];
                brefs[2 * i + 1] = tr->ref[2 * order[b0 + i] + 1];
            }
            ns_params_zero_grad(&w->p);
            sum += ns_world_batch_loss(w, ws, in, brefs, bn, o, &rng, true);
            ns_adamw_step(&opt, &w->p, lr);
            nb++;
            st->samples += bn;
            st->steps++;
        }
        train_time += ns_now() - te;
        st->last_loss = nb ? sum / nb : 0;
        st->epochs_run = ep + 1;
        double h5 = -1;
        bool last = ep == epochs - 1;
        if (dev->n > 0 && (last || (ep + 1) % (o->eval_every > 0 ? o->eval_every : 1) == 0)) {
            double hit[3], mrr;
            rc = o->dev_score(w, in, dev, dev_pools, dev_pool, o->seed, hit, &mrr, err);
            if (rc) break;
            h5 = hit[1];
            if (h5 > st->best_dev_hit5 || (h5 == st->best_dev_hit5 && mrr > best_mrr)) {
                best_mrr = mrr;
                st->best_dev_hit5 = h5;
                st->best_epoch = ep + 1;
                memcpy(best, w->p.data, w->p.total * sizeof(float));
                since_best = 0;
            } else {
                since_best++;
            }
        }
        char what[160];
        snprintf(what, sizeof what, "epoch %d/%d loss %.4f dev hit@5 %.3f (best %.3f @%d)", ep + 1, epochs,
                 st->last_loss, h5, st->best_dev_hit5, st->best_epoch);
        ns_progress_update(&pg, ep + 1, epochs, what);
        double el = ns_now() - t0;
        if (o->on_epoch && !o->on_epoch(o->ctx, ep + 1, st->last_loss, h5, el)) break;
        if (o->time_limit > 0 && el > o->time_limit) break;
        if (o->patience > 0 && since_best >= o->patience) break;
        /* a perfect dev score cannot improve: stop early only when asked (patience) */
    }
    ns_progress_done(&pg);
    if (!rc && best && st->best_epoch > 0) memcpy(w->p.data, best, w->p.total * sizeof(float));
    st->seconds = ns_now() - t0;
    st->samples_per_s = train_time > 0 ? st->samples / train_time : 0;
    free(best);
    free(order);
    free(brefs);
    free(dev_pools);
    ns_world_ws_free(ws);
    return rc;
}

/* ======================================================================
 * checkpoints
 * ====================================================================== */

static void config_json(const ns_world_config *c, ns_buf *b)
{
    ns_buf_printf(b,
                  "{\"kind\": \"%s\", \"state_dim\": %d, \"action_dim\": %d, \"state_sparse\": %s, "
                  "\"action_sparse\": %s, \"action_rows\": \"%s\", \"layers\": %d, \"state_hidden\": %d, "
                  "\"action_hidden\": %d, \"out\": %d, \"t_hidden\": %d}",
                  ns_world_kind_name(c->kind), c->state_dim, c->action_dim, c->state_sparse ? "true" : "false",
                  c->action_sparse ? "true" : "false", ns_action_rows_name(c->action_rows), c->layers, c->state_hidden,
                  c->action_hidden, c->out, c->t_hidden);
}

ns_status ns_world_save(const ns_world *w, const char *path, const char *features_json, const char *train_json,
                        ns_error *err)
{
    return ns_world_save_with(w, path, features_json, train_json, NULL, NULL, err);
}

ns_status ns_world_save_with(const ns_world *w, const char *path, const char *features_json, const char *train_json,
                             const char *encoder_json, const ns_params *extra, ns_error *err)
{
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_printf(&b, "{\"format\": \"%s\", \"version\": %d,\n \"config\": ", NS_WORLD_FORMAT, NS_WORLD_VERSION);
    config_json(&w->cfg, &b);
    ns_buf_printf(&b, ",\n \"features\": %s,\n \"train\": %s", features_json ? features_json : "null",
                  train_json ? train_json : "null");
    if (encoder_json) ns_buf_printf(&b, ",\n \"encoder\": %s", encoder_json);
    ns_buf_puts(&b, "}\n");
    ns_ckpt_opts co = {.moments = false, .step = 0, .meta = b.data};
    ns_params both = {0};
    ns_status st = NS_OK;
    if (extra && extra->n > 0) st = ns_params_concat(&both, &w->p, extra, err);
    if (!st) st = ns_params_save(extra && extra->n > 0 ? &both : &w->p, path, &co, err);
    if (extra && extra->n > 0 && both.data) ns_params_free(&both);
    ns_buf_free(&b);
    return st;
}

static bool get_bool(const ns_json *o, const char *k, bool *out)
{
    const ns_json *v = ns_json_get(o, k);
    if (!v || v->kind != NS_JSON_BOOL) return false;
    *out = v->boolean;
    return true;
}

/* Does the checkpoint's own tensor table hold name with shape [d0, d1]? */
static bool ckpt_has(const ns_params *file, const char *name, int64_t d0, int64_t d1)
{
    int i = ns_params_find(file, name);
    return i >= 0 && file->t[i].ndim == 2 && file->t[i].shape[0] == d0 && file->t[i].shape[1] == d1;
}

ns_status ns_world_load(ns_world *w, const char *path, char **meta, ns_error *err)
{
    memset(w, 0, sizeof *w);
    if (meta) *meta = NULL;
    ns_params tmp;
    ns_ckpt_info info;
    ns_status st = ns_params_read(&tmp, path, &info, err);
    if (st) return st;
    ns_json j;
    st = ns_json_parse(&j, info.meta, strlen(info.meta), path, err);
    if (st) {
        ns_params_free(&tmp);
        ns_ckpt_info_free(&info);
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "not a world-model checkpoint (meta is not JSON)");
    }
    const char *fmt = NULL;
    const ns_json *c = ns_json_get(&j, "config");
    ns_world_config cfg;
    ns_world_config_init(&cfg);
    int64_t v[7];
    const char *kind = NULL;
    bool ok = ns_json_get_str(&j, "format", &fmt) && !strcmp(fmt, NS_WORLD_FORMAT) && c &&
              ns_json_get_str(c, "kind", &kind) && ns_json_get_int(c, "state_dim", &v[0]) &&
              ns_json_get_int(c, "action_dim", &v[1]) && ns_json_get_int(c, "layers", &v[2]) &&
              ns_json_get_int(c, "state_hidden", &v[3]) && ns_json_get_int(c, "action_hidden", &v[4]) &&
              ns_json_get_int(c, "out", &v[5]) && ns_json_get_int(c, "t_hidden", &v[6]) &&
              get_bool(c, "state_sparse", &cfg.state_sparse) && get_bool(c, "action_sparse", &cfg.action_sparse);
    int64_t ver = 0;
    if (ok && (!ns_json_get_int(&j, "version", &ver) || ver != NS_WORLD_VERSION)) {
        ns_json_free(&j);
        ns_params_free(&tmp);
        ns_ckpt_info_free(&info);
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "world-model checkpoint version %lld, expected %d",
                            (long long)ver, NS_WORLD_VERSION);
    }
    if (!ok || ns_world_kind_parse(kind) < 0) {
        ns_json_free(&j);
        ns_params_free(&tmp);
        ns_ckpt_info_free(&info);
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                            "not a world-model checkpoint (meta lacks format \"%s\" or a complete config)",
                            NS_WORLD_FORMAT);
    }
    /* hard limits first, so no field is truncated to int */
    static const char *const vname[7] = {"state_dim", "action_dim", "layers", "state_hidden",
                                         "action_hidden", "out", "t_hidden"};
    const int64_t vmin[7] = {1, 1, 1, 0, 0, 1, 0};
    const int64_t vmax[7] = {1 << 26, 1 << 26, NS_WORLD_MAX_LAYERS, 1 << 16, 1 << 16, 1 << 16, 1 << 16};
    for (int k = 0; k < 7; k++)
        if (v[k] < vmin[k] || v[k] > vmax[k]) {
            ns_json_free(&j);
            ns_params_free(&tmp);
            ns_ckpt_info_free(&info);
            return ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                                "world-model checkpoint: config.%s is %lld, outside [%lld, %lld]", vname[k],
                                (long long)v[k], (long long)vmin[k], (long long)vmax[k]);
        }
    /* checkpoints written before row modes existed have none: action rows */
    const char *arows = "action";
    if (ns_json_get(c, "action_rows") &&
        (!ns_json_get_str(c, "action_rows", &arows) || ns_action_rows_parse(arows) < 0)) {
        ns_json_free(&j);
        ns_params_free(&tmp);
        ns_ckpt_info_free(&info);
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                            "world-model checkpoint: config.action_rows must be \"action\" or \"state-action\"");
    }
    cfg.action_rows = (ns_action_rows)ns_action_rows_parse(arows);
    cfg.kind = (ns_world_kind)ns_world_kind_parse(kind);
    cfg.state_dim = (int)v[0];
    cfg.action_dim = (int)v[1];
    cfg.layers = (int)v[2];
    cfg.state_hidden = (int)v[3];
    cfg.action_hidden = (int)v[4];
    cfg.out = (int)v[5];
    cfg.t_hidden = (int)v[6];
    /* an encoder's tensors (a LoRA adapter) may follow the model's */
    const ns_json *enc = ns_json_get(&j, "encoder");
    bool more = enc && enc->kind == NS_JSON_OBJECT;
    ns_json_free(&j);
    /* the config must agree with the file's own tensor table before anything
     * is allocated from it (a crafted config cannot ask for more memory than
     * the file's tensors hold) */
    {
        int L = cfg.layers;
        int64_t sh = cfg.state_hidden ? cfg.state_hidden : (cfg.state_sparse ? 512 : cfg.state_dim);
        int64_t ah = cfg.action_hidden ? cfg.action_hidden : (cfg.action_sparse ? 512 : cfg.action_dim);
        int64_t th = cfg.t_hidden ? cfg.t_hidden : (cfg.kind == NS_WORLD_FILM ? 192 : 128);
        char a[64], b[64];
        snprintf(a, sizeof a, "ps.%d.weight", L - 2);
        snprintf(b, sizeof b, "pa.%d.weight", L - 2);
        bool agree = ckpt_has(&tmp, "ps.out.weight", cfg.out, L > 1 ? sh : cfg.state_dim) &&
                     ckpt_has(&tmp, "pa.out.weight", cfg.out, L > 1 ? ah : cfg.action_dim) &&
                     (L == 1 || (ckpt_has(&tmp, "ps.0.weight", sh, cfg.state_dim) &&
                                 ckpt_has(&tmp, "pa.0.weight", ah, cfg.action_dim) && ns_params_find(&tmp, a) >= 0 &&
                                 ns_params_find(&tmp, b) >= 0)) &&
                     (cfg.kind == NS_WORLD_RESMLP ? ckpt_has(&tmp, "t.w1.weight", th, 2 * (int64_t)cfg.out)
                                                  : ckpt_has(&tmp, "t.z.weight", th, cfg.out));
        ns_params_free(&tmp);
        if (!agree) {
            ns_ckpt_info_free(&info);
            return ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                                "world-model checkpoint: its config (%d layers, out %d, state %d→%lld, action "
                                "%d→%lld, t_hidden %lld) does not match its own tensors",
                                L, cfg.out, cfg.state_dim, (long long)sh, cfg.action_dim, (long long)ah,
                                (long long)th);
        }
    }
    st = ns_world_create(w, &cfg, 0, err);
    if (!st) st = more ? ns_params_load_prefix(&w->p, path, NULL, err) : ns_params_load(&w->p, path, NULL, err);
    if (st) {
        ns_world_free(w);
        ns_ckpt_info_free(&info);
        return st;
    }
    if (meta) {
        *meta = info.meta;
        info.meta = NULL;
    }
    ns_ckpt_info_free(&info);
    return NS_OK;
}

ns_status ns_world_check_inputs(const ns_world *w, const ns_world_inputs *in, ns_error *err)
{
    const ns_world_config *c = &w->cfg;
    if (in->action_rows != c->action_rows)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                            "action features have %s rows (%s); the model was trained on %s rows (%s)",
                            ns_action_rows_name(in->action_rows),
                            in->action_rows == NS_AROWS_STATE_ACTION ? "one per (state, applicable action) pair"
                                                                     : "one per ground action",
                            ns_action_rows_name(c->action_rows),
                            c->action_rows == NS_AROWS_STATE_ACTION ? "one per (state, applicable action) pair"
                                                                    : "one per ground action");
    if (in->state.sparse != c->state_sparse || in->state.dim != c->state_dim)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                            "state features are %s with %lld columns; the model expects %s with %d",
                            in->state.sparse ? "sparse" : "dense", (long long)in->state.dim,
                            c->state_sparse ? "sparse" : "dense", c->state_dim);
    if (in->action.sparse != c->action_sparse || in->action.dim != c->action_dim)
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                            "action features are %s with %lld columns; the model expects %s with %d",
                            in->action.sparse ? "sparse" : "dense", (long long)in->action.dim,
                            c->action_sparse ? "sparse" : "dense", c->action_dim);
    return NS_OK;
}
