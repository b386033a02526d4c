/* lora.c — LoRA adapters of BERT-family encoders and the encoder's backward
 * pass (lora.h). */
#include "nextstate/learn/lora.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/learn/nn.h"
#include "nextstate/util/tilegemm.h"
#include "nextstate/util/blas.h"

static const char *const TNAME[NS_BERT_NTARGETS] = {"query", "key", "value", "output"};
static const char TLETTER[NS_BERT_NTARGETS] = {'q', 'k', 'v', 'o'};

void ns_lora_config_init(ns_lora_config *c)
{
    c->rank = 8;
    c->alpha = 16;
    c->targets = NS_LORA_QV;
    c->layers = 0;
}

unsigned ns_lora_targets_parse(const char *s)
{
    unsigned m = 0;
    for (; s && *s; s++) {
        const char *at = memchr(TLETTER, *s, NS_BERT_NTARGETS);
        if (!at) return 0;
        m |= 1u << (at - TLETTER);
    }
    return m;
}

void ns_lora_targets_name(unsigned targets, char out[8])
{
    int k = 0;
    for (int t = 0; t < NS_BERT_NTARGETS; t++)
        if (targets & (1u << t)) out[k++] = TLETTER[t];
    out[k] = 0;
}

/* Points the per-(layer, target) arrays into p.data and p.grad. */
static void bind(ns_lora *l)
{
    size_t nt = (size_t)l->enc_layers * NS_BERT_NTARGETS;
    for (size_t i = 0; i < nt; i++) l->a[i] = l->b[i] = l->ga[i] = l->gb[i] = NULL;
    for (int i = 0; i < l->p.n; i++) {
        int layer, t = 0;
        char what[16], ab = 0;
        if (sscanf(l->p.t[i].name, "lora.%d.%15[a-z].%c", &layer, what, &ab) != 3) continue;
        while (t < NS_BERT_NTARGETS && strcmp(TNAME[t], what) != 0) t++;
        size_t k = (size_t)layer * NS_BERT_NTARGETS + t;
        if (ab == 'A') l->a[k] = l->p.data + l->p.t[i].offset, l->ga[k] = l->p.grad + l->p.t[i].offset;
        else l->b[k] = l->p.data + l->p.t[i].offset, l->gb[k] = l->p.grad + l->p.t[i].offset;
    }
}

/* The table of cfg for encoders of c (no values). */
static ns_status declare(ns_lora *l, const ns_bert_config *c, const ns_lora_config *cfg, ns_error *err)
{
    memset(l, 0, sizeof *l);
    ns_params_init(&l->p);
    if (cfg->rank < 1 || cfg->rank > c->hidden)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "LoRA rank %d outside 1 … %d (the encoder's width)",
                            cfg->rank, c->hidden);
    if (!cfg->targets || cfg->targets >= (1u << NS_BERT_NTARGETS))
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "LoRA needs targets among q, k, v, o");
    if (cfg->layers < 0 || cfg->layers > c->layers)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "LoRA on %d layers, but %s has %d", cfg->layers,
                            c->name, c->layers);
    if (!(cfg->alpha > 0) || !isfinite(cfg->alpha))
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "LoRA alpha must be positive");
    l->cfg = *cfg;
    l->enc_layers = c->layers;
    l->hidden = c->hidden;
    l->first = cfg->layers ? c->layers - cfg->layers : 0;
    l->scale = cfg->alpha / (float)cfg->rank;
    for (int layer = l->first; layer < c->layers; layer++)
        for (int t = 0; t < NS_BERT_NTARGETS; t++) {
            if (!(cfg->targets & (1u << t))) continue;
            char name[64];
            int64_t sa[2] = {cfg->rank, c->hidden}, sb[2] = {c->hidden, cfg->rank};
            snprintf(name, sizeof name, "lora.%d.%s.A", layer, TNAME[t]);
            ns_params_add(&l->p, name, 2, sa, NS_INIT_UNIFORM, ns_init_bound_linear(c->hidden));
            snprintf(name, sizeof name, "lora.%d.%s.B", layer, TNAME[t]);
            ns_params_add(&l->p, name, 2, sb, NS_INIT_ZEROS, 0);
        }
    ns_status st = ns_params_alloc(&l->p, err);
    if (st) return st;
    size_t nt = (size_t)c->layers * NS_BERT_NTARGETS;
    l->a = ns_xcalloc(nt, sizeof *l->a);
    l->b = ns_xcalloc(nt, sizeof *l->b);
    l->ga = ns_xcalloc(nt, sizeof *l->ga);
    l->gb = ns_xcalloc(nt, sizeof *l->gb);
    bind(l);
    return NS_OK;
}

ns_status ns_lora_create(ns_lora *l, const ns_bert_config *c, const ns_lora_config *cfg, uint64_t seed, ns_error *err)
{
    ns_status st = declare(l, c, cfg, err);
    if (st) {
        ns_lora_free(l);
        return st;
    }
    ns_params_init_values(&l->p, seed);
    return NS_OK;
}

void ns_lora_free(ns_lora *l)
{
    ns_params_free(&l->p);
    free(l->a);
    free(l->b);
    free(l->ga);
    free(l->gb);
    memset(l, 0, sizeof *l);
}

void ns_lora_view(const ns_lora *l, ns_bert_lora *v)
{
    v->rank = l->cfg.rank;
    v->scale = l->scale;
    v->a = (const float *const *)l->a;
    v->b = (const float *const *)l->b;
}

uint64_t ns_lora_hash(const ns_lora *l)
{
    int32_t head[4] = {l->cfg.rank, (int32_t)l->cfg.targets, l->first, l->enc_layers};
    uint64_t h = ns_hash_bytes(head, sizeof head, 0x6c6f7261ULL);
    h = ns_hash_bytes(&l->scale, sizeof l->scale, h);
    return ns_hash_bytes(l->p.data, l->p.total * sizeof(float), h);
}

/* ---------------------------------------------------------------- backward */

/* One adapted projection y = x·Wᵀ + b + s·(x·Aᵀ)·Bᵀ with x [T × H] (row
 * stride ldx), xa = x·Aᵀ [T × r] from the forward, dy [T × H] (stride ldy):
 *   dB += s · dyᵀ·xa;  dA += (s · dy·B)ᵀ · x;  dx += (s · dy·B) · A  (dx may be NULL). */
static void adapter_backward(const ns_lora *l, int k, const float *x, int ldx, const float *xa, const float *dy,
                             int ldy, float *dx, int T, float *dxa)
{
    int H = l->hidden, r = l->cfg.rank;
    float s = l->scale;
    ns_sgemm(true, false, H, r, T, s, dy, ldy, xa, r, 1.0f, l->gb[k], r);
    ns_sgemm(false, false, T, r, H, s, dy, ldy, l->b[k], r, 0.0f, dxa, r);
    ns_sgemm(true, false, r, H, T, 1.0f, dxa, r, x, ldx, 1.0f, l->ga[k], H);
    if (dx) ns_sgemm(false, false, T, H, r, 1.0f, dxa, r, l->a[k], H, 1.0f, dx, ldx);
}

/* dx [T × in] += dy [T × out] · W [out × in]: back through a frozen matrix,
 * on the tiles when the encoder's forward ran on them. */
static void through(const ns_bert *m, float *dx, const float *dy, const float *W, int T, int in, int out)
{
    if (ns_bert_tiled(m)) ns_tilegemm_nn(dx, in, dy, out, T, W, in, out, in, 1.0f, true);
    else ns_linear_backward(dx, NULL, NULL, dy, NULL, W, T, in, out);
}

/* dout [n × H] w.r.t. the sentence embeddings → dlast [T × H] w.r.t. the
 * last hidden states (normalisation, then pooling). */
static void pool_backward(const ns_bert *m, const ns_bert_tape *t, const float *dout, float *dlast)
{
    const ns_bert_config *c = ns_bert_config_of(m);
    int H = c->hidden;
    const float *last = t->x + (size_t)t->layers * t->T * H;
    float *dp = ns_xmalloc((size_t)H * sizeof *dp);
    memset(dlast, 0, t->T * H * sizeof *dlast);
    size_t off = 0;
    for (int i = 0; i < t->n; i++) {
        const float *p = t->pooled + (size_t)i * H, *dy = dout + (size_t)i * H;
        int L = t->lens[i];
        if (c->normalize) { /* y = p/‖p‖: dp = (dy − y (y·dy)) / ‖p‖ */
            double nn = 0, yd = 0;
            for (int d = 0; d < H; d++) nn += (double)p[d] * p[d];
            double norm = fmax(sqrt(nn), 1e-12);
            for (int d = 0; d < H; d++) yd += p[d] / norm * dy[d];
            for (int d = 0; d < H; d++) dp[d] = (float)((dy[d] - p[d] / norm * yd) / norm);
        } else {
            memcpy(dp, dy, (size_t)H * sizeof *dp);
        }
        float *dx = dlast + off * H;
        const float *xs = last + off * H;
        if (c->pooling == NS_BERT_POOL_CLS) {
            for (int d = 0; d < H; d++) dx[d] += dp[d];
        } else if (c->pooling == NS_BERT_POOL_MAX) { /* the first maximum, as the forward's strict > keeps */
            for (int d = 0; d < H; d++) {
                int best = 0;
                for (int q = 1; q < L; q++)
                    if (xs[(size_t)q * H + d] > xs[(size_t)best * H + d]) best = q;
                dx[(size_t)best * H + d] += dp[d];
            }
        } else {
            for (int q = 0; q < L; q++)
                for (int d = 0; d < H; d++) dx[(size_t)q * H + d] += dp[d] / (float)L;
        }
        off += (size_t)L;
    }
    free(dp);
}

/* t[L × L] = sᵀ */
static void transpose(float *t, const float *s, int L)
{
    for (int i = 0; i < L; i++)
        for (int j = 0; j < L; j++) t[(size_t)j * L + i] = s[(size_t)i * L + j];
}

/* Attention of layer l: dctx [T × H] → dqkv [T × 3H] (zeroed here); P, dP,
 * Pt scratch of L × L (the products on the tiles when the forward ran on
 * them: Pᵀ and dSᵀ transposed into Pt first). */
static void attention_backward(const ns_bert *m, const ns_bert_tape *t, int l, const float *dctx, float *dqkv,
                               float *P, float *dP, float *Pt)
{
    const bool tiles = ns_bert_tiled(m);
    const ns_bert_config *c = ns_bert_config_of(m);
    int H = c->hidden, nh = c->heads, dh = H / nh;
    float scale = 1.0f / sqrtf((float)dh);
    const float *qkv = t->qkv + (size_t)l * t->T * 3 * H;
    memset(dqkv, 0, t->T * 3 * H * sizeof *dqkv);
    size_t off = 0;
    for (int i = 0; i < t->n; i++) {
        int L = t->lens[i];
        const float *qs = qkv + off * 3 * H;
        float *dqs = dqkv + off * 3 * H;
        const float *dc = dctx + off * H;
        for (int h = 0; h < nh; h++) {
            ns_bert_attention_probs(m, L, qs, h, P);
            const float *dch = dc + h * dh, *q = qs + h * dh, *k = qs + H + h * dh, *v = qs + 2 * H + h * dh;
            /* dV = Pᵀ·dctx;  dP = dctx·Vᵀ */
            if (tiles) {
                transpose(Pt, P, L);
                ns_tilegemm_nn(dqs + 2 * H + h * dh, 3 * H, Pt, L, L, dch, H, L, dh, 1.0f, false);
                ns_tilegemm_nt(dP, L, dch, H, L, v, 3 * H, L, dh, 1.0f);
            } else {
                ns_sgemm(true, false, L, dh, L, 1.0f, P, L, dch, H, 0.0f, dqs + 2 * H + h * dh, 3 * H);
                ns_sgemm(false, true, L, L, dh, 1.0f, dch, H, v, 3 * H, 0.0f, dP, L);
            }
            /* softmax: dS = P ⊙ (dP − Σ_j P·dP) */
            for (int a = 0; a < L; a++) {
                float *pr = P + (size_t)a * L, *dr = dP + (size_t)a * L;
                double dot = 0;
                for (int j = 0; j < L; j++) dot += (double)pr[j] * dr[j];
                for (int j = 0; j < L; j++) dr[j] = pr[j] * (dr[j] - (float)dot);
            }
            /* S = q·kᵀ·scale: dQ = dS·K·scale;  dK = dSᵀ·Q·scale */
            if (tiles) {
                ns_tilegemm_nn(dqs + h * dh, 3 * H, dP, L, L, k, 3 * H, L, dh, scale, false);
                transpose(Pt, dP, L);
                ns_tilegemm_nn(dqs + H + h * dh, 3 * H, Pt, L, L, q, 3 * H, L, dh, scale, false);
            } else {
                ns_sgemm(false, false, L, dh, L, scale, dP, L, k, 3 * H, 0.0f, dqs + h * dh, 3 * H);
                ns_sgemm(true, false, L, dh, L, scale, dP, L, q, 3 * H, 0.0f, dqs + H + h * dh, 3 * H);
            }
        }
        off += (size_t)L;
    }
}

void ns_lora_backward(ns_lora *l, const ns_bert *m, const ns_bert_tape *t, const float *dout)
{
    const ns_bert_config *c = ns_bert_config_of(m);
    const int H = c->hidden, I = c->intermediate, r = l->cfg.rank, T = (int)t->T;
    const size_t TH = t->T * H, TI = t->T * I;
    int Lmax = 1;
    for (int i = 0; i < t->n; i++) Lmax = t->lens[i] > Lmax ? t->lens[i] : Lmax;
    float *dx = ns_xmalloc(TH * sizeof *dx), *dh = ns_xmalloc(TH * sizeof *dh), *dc = ns_xmalloc(TH * sizeof *dc);
    float *dq = ns_xmalloc(3 * TH * sizeof *dq), *di = ns_xmalloc(TI * sizeof *di), *du = ns_xmalloc(TI * sizeof *du);
    float *P = ns_xmalloc((size_t)Lmax * Lmax * sizeof *P), *dP = ns_xmalloc((size_t)Lmax * Lmax * sizeof *dP);
    float *Pt = ns_xmalloc((size_t)Lmax * Lmax * sizeof *Pt);
    float *dxa = ns_xmalloc(t->T * (size_t)r * sizeof *dxa);
    pool_backward(m, t, dout, dx);
    for (int layer = c->layers - 1; layer >= l->first; layer--) {
        ns_bert_layer w;
        ns_bert_layer_weights(m, layer, &w);
        const float *xin = t->x + layer * TH, *ctx = t->ctx + layer * TH;
        const float *xa = t->xa + (size_t)layer * NS_BERT_NTARGETS * t->T * r;
        size_t k0 = (size_t)layer * NS_BERT_NTARGETS;
        /* LayerNorm 2: dx (w.r.t. the layer's output) → dh (w.r.t. h2 = x1 + FFN(x1)) */
        memset(dh, 0, TH * sizeof *dh);
        ns_layernorm_backward(dh, NULL, NULL, dx, t->h2 + layer * TH, w.ln2_g, t->m2 + (size_t)layer * T,
                              t->r2 + (size_t)layer * T, T, H);
        /* FFN: dx1 = dh + W1ᵀ·GELU′(u)·W2ᵀ·dh, into dx */
        memcpy(dx, dh, TH * sizeof *dx);
        memset(di, 0, TI * sizeof *di);
        through(m, di, dh, w.w2, T, I, H);
        memset(du, 0, TI * sizeof *du);
        ns_gelu_backward(du, di, t->u + layer * TI, TI);
        through(m, dx, du, w.w1, T, H, I);
        /* LayerNorm 1: dx1 → dh (w.r.t. h1 = xin + attention output) */
        memset(dh, 0, TH * sizeof *dh);
        ns_layernorm_backward(dh, NULL, NULL, dx, t->h1 + layer * TH, w.ln1_g, t->m1 + (size_t)layer * T,
                              t->r1 + (size_t)layer * T, T, H);
        /* output dense (+ adapter): dctx */
        memset(dc, 0, TH * sizeof *dc);
        through(m, dc, dh, w.wo, T, H, H);
        if (l->a[k0 + NS_BERT_O])
            adapter_backward(l, (int)k0 + NS_BERT_O, ctx, H, xa + NS_BERT_O * t->T * r, dh, H, dc, T, dxa);
        attention_backward(m, t, layer, dc, dq, P, dP, Pt);
        /* query, key, value (+ adapters): the layer's input gets dh (residual) + the projections' */
        bool below = layer > l->first;
        for (int q = NS_BERT_Q; q <= NS_BERT_V; q++)
            if (l->a[k0 + q])
                adapter_backward(l, (int)k0 + q, xin, H, xa + q * t->T * r, dq + q * H, 3 * H, below ? dh : NULL, T,
                                 dxa);
        if (below) {
            through(m, dh, dq, w.wqkv, T, H, 3 * H);
            memcpy(dx, dh, TH * sizeof *dx);
        }
    }
    free(dx);
    free(dh);
    free(dc);
    free(dq);
    free(di);
    free(du);
    free(P);
    free(dP);
    free(Pt);
    free(dxa);
}

/* ---------------------------------------------------------------- checkpoints */

void ns_lora_json(const ns_lora *l, ns_buf *b)
{
    char tn[8];
    ns_lora_targets_name(l->cfg.targets, tn);
    ns_buf_printf(b, "{\"rank\": %d, \"alpha\": %.9g, \"targets\": \"%s\", \"layers\": %d, \"first\": %d}",
                  l->cfg.rank, l->cfg.alpha, tn, l->enc_layers - l->first, l->first);
}

ns_status ns_lora_from_ckpt(ns_lora *l, const ns_bert_config *c, const ns_json *o, const ns_params *file,
                            const char *path, ns_error *err)
{
    memset(l, 0, sizeof *l);
    int64_t rank = 0, layers = 0;
    const char *tn = NULL;
    const ns_json *alpha = o ? ns_json_get(o, "alpha") : NULL;
    if (!o || !ns_json_get_int(o, "rank", &rank) || !ns_json_get_int(o, "layers", &layers) ||
        !ns_json_get_str(o, "targets", &tn) || !alpha || alpha->kind != NS_JSON_NUMBER || rank < 1 ||
        rank > c->hidden || layers < 1 || layers > c->layers || !ns_lora_targets_parse(tn))
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                            "checkpoint: encoder.lora needs rank (1 … %d), alpha, targets and layers (1 … %d) for %s",
                            c->hidden, c->layers, c->name);
    ns_lora_config cfg = {(int)rank, (float)alpha->number, ns_lora_targets_parse(tn), (int)layers};
    ns_status st = declare(l, c, &cfg, err);
    for (int i = 0; i < l->p.n && !st; i++) {
        const ns_tensor_info *ti = &l->p.t[i];
        int j = ns_params_find(file, ti->name);
        if (j < 0 || file->t[j].count != ti->count || file->t[j].ndim != 2 || file->t[j].shape[0] != ti->shape[0])
            st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "checkpoint: adapter tensor %s [%lld × %lld] missing or of "
                              "another shape", ti->name, (long long)ti->shape[0], (long long)ti->shape[1]);
        else
            memcpy(l->p.data + ti->offset, file->data + file->t[j].offset, ti->count * sizeof(float));
    }
    if (st) ns_lora_free(l);
    return st;
}
