/* bert.c — BERT / MPNet sentence encoders (see bert.h). */
#include "nextstate/encode/bert.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/util/blas.h"
#include "nextstate/util/fastmath.h"
#include "nextstate/util/json.h"
#include "nextstate/util/safetensors.h"
#include "nextstate/util/tilegemm.h"

typedef struct layer_w {
    float *wqkv, *bqkv; /* [3H, H], [3H]: query, key, value rows stacked */
    float *wo, *bo;     /* [H, H], [H] */
    float *ln1_g, *ln1_b;
    float *w1, *b1;     /* [I, H], [I] */
    float *w2, *b2;     /* [H, I], [H] */
    float *ln2_g, *ln2_b;
    const uint16_t *twqkv, *two, *tw1, *tw2; /* the four matrices packed for tilegemm.h, or NULL */
} layer_w;

struct ns_bert {
    ns_bert_config c;
    ns_wordpiece *wp;
    float *params; /* one block; the pointers below are carved from it */
    float *word, *pos, *type0, *emb_g, *emb_b;
    float *relbias; /* MPNet: [buckets, heads] */
    layer_w *lw;
    int *bucket;    /* MPNet: bucket of rel = key − query, at rel + max_seq_length − 1 */
    uint64_t fingerprint;
    uint16_t *tiles; /* the layers' matrices packed for AMX bf16x3 products (tilegemm.h), or NULL */
    int threads;     /* encoding threads when the tiles are in use (ns_bert_set_threads) */
};

/* ---------------------------------------------------------------- helpers */

int ns_bert_relative_bucket(int rel, int num_buckets, int max_distance)
{
    /* transformers' MPNet relative_position_bucket, in float32 as torch does */
    int ret = 0, n = -rel;
    num_buckets /= 2;
    if (n < 0) ret += num_buckets;
    n = abs(n);
    int max_exact = num_buckets / 2;
    if (n < max_exact) return ret + n;
    float v = logf((float)n / (float)max_exact) / (float)log((double)max_distance / max_exact) *
              (float)(num_buckets - max_exact);
    int large = max_exact + (int)v;
    if (large > num_buckets - 1) large = num_buckets - 1;
    return ret + large;
}

/* out[rows, h] = LayerNorm(x) (out may be x); mean / rstd (optional)
 * receive each row's mean and 1/√(var + eps) as used. */
static void layer_norm(float *out, const float *x, int rows, int h, const float *g, const float *b, float eps,
                       float *mean_out, float *rstd_out)
{
    for (int r = 0; r < rows; r++) {
        const float *v = x + (size_t)r * h;
        float *o = out + (size_t)r * h;
        double mean = 0, var = 0;
        for (int i = 0; i < h; i++) mean += v[i];
        mean /= h;
        for (int i = 0; i < h; i++) var += (v[i] - mean) * (v[i] - mean);
        var /= h;
        float m = (float)mean, inv = (float)(1.0 / sqrt(var + eps));
        for (int i = 0; i < h; i++) o[i] = (v[i] - m) * inv * g[i] + b[i];
        if (mean_out) mean_out[r] = m, rstd_out[r] = inv;
    }
}

/* y[rows, n] = x[rows, k] · Wᵀ + b, W stored [n, k] (PyTorch Linear); row
 * strides ldx, ldy; through the tiles when W has a packing tw (act, if not
 * NULL, applied as the tiles write each run of outputs; the caller applies
 * it otherwise). */
static void linear(float *y, int ldy, const float *x, int ldx, int rows, int k, int n, const float *w, const float *b,
                   const uint16_t *tw, ns_tile_act act)
{
    if (tw) {
        ns_tilegemm(y, ldy, x, ldx, rows, k, n, tw, b, act);
        return;
    }
    for (int r = 0; r < rows; r++) memcpy(y + (size_t)r * ldy, b, (size_t)n * sizeof *y);
    ns_sgemm(false, true, rows, n, k, 1.0f, x, ldx, w, k, 1.0f, y, ldy);
}

/* y[rows, H] (row stride ldy) += scale · (x·Aᵀ)·Bᵀ for target t of layer l
 * when it has an adapter; xa + t·xs [rows, rank] receives x·Aᵀ. */
static void lora_add(const ns_bert_lora *lora, int l, int t, float *y, int ldy, const float *x, int rows, int H,
                     float *xa, size_t xs)
{
    if (!lora) return;
    const float *A = lora->a[l * NS_BERT_NTARGETS + t], *B = lora->b[l * NS_BERT_NTARGETS + t];
    if (!A || !B) return;
    int r = lora->rank;
    xa += (size_t)t * xs;
    ns_sgemm(false, true, rows, r, H, 1.0f, x, H, A, H, 0.0f, xa, r);
    ns_sgemm(false, true, rows, H, r, lora->scale, xa, r, B, r, 1.0f, y, ldy);
}

/* GELU (erf form) with fastmath.h's erf (|error| ≤ 1e−7): vectorised. */
NS_VEC_CLONES static void gelu(float *out, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = 0.5f * x[i] * (1.0f + ns_fast_erff(x[i] * 0.70710678118654752f));
}

/* GELU in place on one run of outputs, as the tiles write them (the same
 * elementwise arithmetic as gelu over the whole matrix: the same bits). */
static void gelu_run(float *v, int n) { gelu(v, v, (size_t)n); }

/* In-place softmax of row[0..n), e^x by fastmath.h (≤ 1 ulp); the max and
 * the sum in 16 interleaved partials so that the loops vectorise (the max is
 * the same in any order; a chain of scalar maxima was 70 % of the time). */
NS_VEC_CLONES static void softmax(float *row, int n)
{
    float part[16];
    for (int v = 0; v < 16; v++) part[v] = row[0];
    int j = 0;
    for (; j + 16 <= n; j += 16)
        for (int v = 0; v < 16; v++) part[v] = row[j + v] > part[v] ? row[j + v] : part[v];
    float mx = row[0];
    for (; j < n; j++) mx = row[j] > mx ? row[j] : mx;
    for (int v = 0; v < 16; v++) mx = part[v] > mx ? part[v] : mx;
    for (j = 0; j < n; j++) row[j] = ns_fast_expf(row[j] - mx);
    for (int v = 0; v < 16; v++) part[v] = 0;
    for (j = 0; j + 16 <= n; j += 16)
        for (int v = 0; v < 16; v++) part[v] += row[j + v];
    float sum = 0;
    for (; j < n; j++) sum += row[j];
    for (int v = 0; v < 16; v++) sum += part[v];
    float inv = 1.0f / sum;
    for (j = 0; j < n; j++) row[j] *= inv;
}

/* ---------------------------------------------------------------- forward */

/* Head h's probabilities, the scores on the tiles when the model runs on them. */
void ns_bert_attention_probs(const ns_bert *m, int L, const float *qkv, int h, float *s)
{
    const bool tiles = m->tiles != NULL;
    int H = m->c.hidden, nh = m->c.heads, dh = H / nh;
    float scale = 1.0f / sqrtf((float)dh);
    const float *q = qkv + h * dh, *k = qkv + H + h * dh;
    /* s[L, L] = q kᵀ / √dh */
    if (tiles) ns_tilegemm_nt(s, L, q, 3 * H, L, k, 3 * H, L, dh, scale);
    else ns_sgemm(false, true, L, L, dh, scale, q, 3 * H, k, 3 * H, 0.0f, s, L);
    for (int i = 0; i < L; i++) {
        float *row = s + (size_t)i * L;
        if (m->relbias) {
            const int *bk = m->bucket + (m->c.max_seq_length - 1) - i; /* bk[j] = bucket(j − i) */
            for (int j = 0; j < L; j++) row[j] += m->relbias[bk[j] * nh + h];
        }
        softmax(row, L);
    }
}

/* Attention of one sequence of L tokens: qkv [L, 3H] (row stride 3H), ctx
 * [L, H]; both products on the tiles when the model runs on them. */
static void attention(const ns_bert *m, int L, const float *qkv, float *ctx, float *s)
{
    int H = m->c.hidden, nh = m->c.heads, dh = H / nh;
    const bool tiles = m->tiles != NULL;
    for (int h = 0; h < nh; h++) {
        ns_bert_attention_probs(m, L, qkv, h, s);
        /* ctx[:, h] = s v */
        if (tiles) ns_tilegemm_nn(ctx + h * dh, H, s, L, L, qkv + 2 * H + h * dh, 3 * H, L, dh, 1.0f, false);
        else ns_sgemm(false, false, L, dh, L, 1.0f, s, L, qkv + 2 * H + h * dh, 3 * H, 0.0f, ctx + h * dh, H);
    }
}

void ns_bert_tape_free(ns_bert_tape *t)
{
    if (!t) return;
    free(t->blk);
    free(t->lens);
    memset(t, 0, sizeof *t);
}

/* Carves the tape for n sequences of T tokens (grown on demand). */
static void tape_carve(ns_bert_tape *t, const ns_bert_config *c, int rank, int n, const int *lens, size_t T)
{
    size_t H = (size_t)c->hidden, I = (size_t)c->intermediate, NL = (size_t)c->layers, r = (size_t)rank;
    size_t need = (NL + 1) * T * H + NL * T * (3 * H + H + H + I + H + 4 + NS_BERT_NTARGETS * r) + (size_t)n * H;
    if (need > t->cap) {
        free(t->blk);
        t->cap = need;
        t->blk = ns_xmalloc(need * sizeof *t->blk);
    }
    if (n > t->lens_cap) {
        free(t->lens);
        t->lens_cap = n;
        t->lens = ns_xmalloc((size_t)n * sizeof *t->lens);
    }
    memcpy(t->lens, lens, (size_t)n * sizeof *lens);
    t->n = n;
    t->T = T;
    t->layers = c->layers;
    t->hidden = c->hidden;
    t->inter = c->intermediate;
    t->rank = rank;
    float *p = t->blk;
#define TAPE(ptr, count) (t->ptr = p, p += (count))
    TAPE(x, (NL + 1) * T * H);
    TAPE(qkv, NL * T * 3 * H);
    TAPE(ctx, NL * T * H);
    TAPE(h1, NL * T * H);
    TAPE(u, NL * T * I);
    TAPE(h2, NL * T * H);
    TAPE(m1, NL * T);
    TAPE(r1, NL * T);
    TAPE(m2, NL * T);
    TAPE(r2, NL * T);
    TAPE(xa, NL * NS_BERT_NTARGETS * T * r);
    TAPE(pooled, (size_t)n * H);
#undef TAPE
}

/* Word + position (+ token type) embeddings and their LayerNorm into x [T, H]. */
static void embed_tokens(const ns_bert *m, int n, const int32_t *const *ids, const int *lens, float *x, size_t T)
{
    const ns_bert_config *c = &m->c;
    int H = c->hidden;
    size_t t = 0;
    for (int i = 0; i < n; i++) {
        int nonpad = 0;
        for (int p = 0; p < lens[i]; p++, t++) {
            float *row = x + t * H;
            const float *w = m->word + (size_t)ids[i][p] * H;
            int pos = p;
            if (c->arch == NS_BERT_ARCH_MPNET) { /* fairseq positions: pads stay at pad_token_id */
                bool pad = ids[i][p] == c->pad_token_id;
                nonpad += !pad;
                pos = pad ? c->pad_token_id : c->pad_token_id + nonpad;
            }
            const float *pe = m->pos + (size_t)pos * H;
            for (int d = 0; d < H; d++) row[d] = w[d] + pe[d] + (m->type0 ? m->type0[d] : 0.0f);
        }
    }
    layer_norm(x, x, (int)T, H, m->emb_g, m->emb_b, c->layer_norm_eps, NULL, NULL);
}

/* Pooling (and normalisation) of the last hidden states x into out [n, H];
 * pooled (optional) receives the vectors before normalisation. */
static void pool(const ns_bert *m, int n, const int *lens, const float *x, float *out, float *pooled)
{
    const ns_bert_config *c = &m->c;
    int H = c->hidden;
    size_t t = 0;
    for (int i = 0; i < n; i++) {
        float *o = out + (size_t)i * H;
        const float *xs = x + t * H;
        if (c->pooling == NS_BERT_POOL_CLS) {
            memcpy(o, xs, H * sizeof *o);
        } else if (c->pooling == NS_BERT_POOL_MAX) {
            memcpy(o, xs, H * sizeof *o);
            for (int p = 1; p < lens[i]; p++)
                for (int d = 0; d < H; d++) o[d] = xs[(size_t)p * H + d] > o[d] ? xs[(size_t)p * H + d] : o[d];
        } else {
            for (int d = 0; d < H; d++) {
                double sum = 0;
                for (int p = 0; p < lens[i]; p++) sum += xs[(size_t)p * H + d];
                o[d] = (float)(sum / lens[i]);
            }
        }
        if (pooled) memcpy(pooled + (size_t)i * H, o, H * sizeof *o);
        if (c->normalize) {
            double nn = 0;
            for (int d = 0; d < H; d++) nn += (double)o[d] * o[d];
            float inv = (float)(1.0 / fmax(sqrt(nn), 1e-12));
            for (int d = 0; d < H; d++) o[d] *= inv;
        }
        t += (size_t)lens[i];
    }
}

void ns_bert_forward(const ns_bert *m, int n, const int32_t *const *ids, const int *lens, float *hidden, float *out)
{
    ns_bert_forward_lora(m, NULL, n, ids, lens, NULL, hidden, out);
}

/* Without a tape every stage works in place on x (the frozen encoder's
 * buffers); with one, each stage's input goes to the tape and the next
 * stage reads it there — the same arithmetic either way. */
void ns_bert_forward_lora(const ns_bert *m, const ns_bert_lora *lora, int n, const int32_t *const *ids,
                          const int *lens, ns_bert_tape *tape, float *hidden, float *out)
{
    const ns_bert_config *c = &m->c;
    int H = c->hidden, I = c->intermediate, r = lora ? lora->rank : 0;
    size_t T = 0;
    int Lmax = 1;
    for (int i = 0; i < n; i++) {
        T += (size_t)lens[i];
        if (lens[i] > Lmax) Lmax = lens[i];
    }
    size_t TH = T * H, TI = T * I;
    /* at cache lines: the tile products stream whole lines of large outputs (tilegemm.c) */
    float *x = ns_xaligned(TH * sizeof *x), *qkv = tape ? NULL : ns_xaligned(3 * TH * sizeof *qkv);
    float *ctx = tape ? NULL : ns_xaligned(TH * sizeof *ctx), *tmp = ns_xaligned(TH * sizeof *tmp);
    float *inter = ns_xaligned(TI * sizeof *inter), *s = ns_xmalloc((size_t)Lmax * Lmax * sizeof *s);
    float *xa = r && !tape ? ns_xmalloc(T * r * sizeof *xa) : NULL;
    if (tape) tape_carve(tape, c, r, n, lens, T);
    float *x0 = tape ? tape->x : x;
    embed_tokens(m, n, ids, lens, x0, T);

    for (int l = 0; l < c->layers; l++) {
        const layer_w *w = &m->lw[l];
        const float *xin = tape ? tape->x + l * TH : x;
        float *q = tape ? tape->qkv + 3 * l * TH : qkv, *cx = tape ? tape->ctx + l * TH : ctx;
        float *h1 = tape ? tape->h1 + l * TH : x, *u = tape ? tape->u + l * TI : inter;
        float *h2 = tape ? tape->h2 + l * TH : x, *xout = tape ? tape->x + (l + 1) * TH : x;
        float *xal = tape && r ? tape->xa + (size_t)l * NS_BERT_NTARGETS * T * r : xa;
        size_t xs = tape ? T * r : 0; /* the tape keeps x·Aᵀ per target */
        linear(q, 3 * H, xin, H, (int)T, H, 3 * H, w->wqkv, w->bqkv, w->twqkv, NULL);
        for (int t = NS_BERT_Q; t <= NS_BERT_V; t++) lora_add(lora, l, t, q + t * H, 3 * H, xin, (int)T, H, xal, xs);
        size_t off = 0;
        for (int i = 0; i < n; i++) {
            attention(m, lens[i], q + off * 3 * H, cx + off * H, s);
            off += (size_t)lens[i];
        }
        linear(tmp, H, cx, H, (int)T, H, H, w->wo, w->bo, w->two, NULL);
        lora_add(lora, l, NS_BERT_O, tmp, H, cx, (int)T, H, xal, xs);
        for (size_t k = 0; k < TH; k++) h1[k] = xin[k] + tmp[k];
        layer_norm(x, h1, (int)T, H, w->ln1_g, w->ln1_b, c->layer_norm_eps, tape ? tape->m1 + l * T : NULL,
                   tape ? tape->r1 + l * T : NULL);
        const bool fused = w->tw1 && !tape; /* u is inter: GELU as the tiles write it */
        linear(u, I, x, H, (int)T, H, I, w->w1, w->b1, w->tw1, fused ? gelu_run : NULL);
        if (!fused) gelu(inter, u, TI);
        linear(tmp, H, inter, I, (int)T, I, H, w->w2, w->b2, w->tw2, NULL);
        for (size_t k = 0; k < TH; k++) h2[k] = x[k] + tmp[k];
        layer_norm(xout, h2, (int)T, H, w->ln2_g, w->ln2_b, c->layer_norm_eps, tape ? tape->m2 + l * T : NULL,
                   tape ? tape->r2 + l * T : NULL);
    }
    const float *last = tape ? tape->x + c->layers * TH : x;
    if (hidden) memcpy(hidden, last, TH * sizeof *x);
    pool(m, n, lens, last, out, tape ? tape->pooled : NULL);
    free(x);
    free(qkv);
    free(ctx);
    free(tmp);
    free(inter);
    free(s);
    free(xa);
}

int ns_bert_tokenize(const ns_bert *m, const char *text, size_t len, int32_t *ids)
{
    return ns_wordpiece_encode(m->wp, text, len, m->c.max_seq_length, ids);
}

typedef struct window {
    int len, idx;  /* model-input length (CLS and SEP included), window index */
    int text;      /* the text it belongs to */
    int64_t start; /* its first piece in the pieces array */
} window;

static int by_len_desc(const void *a, const void *b)
{
    const window *x = a, *y = b;
    return x->len != y->len ? y->len - x->len : x->idx - y->idx;
}

/* The batches of one encode call, shared by its threads: each takes the
 * next batch (the longest first) and writes its windows' pooled embeddings
 * to wout by sorted position. */
typedef struct batches {
    const ns_bert *m;
    const window *w;
    const int32_t *pieces;
    int64_t nw;
    int batch;
    float *wout; /* [nw, H] */
    atomic_long next, done;
    ns_progress *prog; /* updated by the calling thread only */
    pthread_t caller;
    const char *what;
} batches;

static void *run_batches(void *arg)
{
    batches *B = arg;
    const ns_bert *m = B->m;
    const int ms = m->c.max_seq_length, H = m->c.hidden, batch = B->batch;
    const bool caller = B->prog && pthread_equal(pthread_self(), B->caller);
    int32_t *ids = ns_xmalloc((size_t)batch * ms * sizeof *ids);
    const int32_t **bids = ns_xmalloc((size_t)batch * sizeof *bids);
    int *blens = ns_xmalloc((size_t)batch * sizeof *blens);
    const int cls = ns_wordpiece_cls_id(m->wp), sep = ns_wordpiece_sep_id(m->wp);
    for (;;) {
        int64_t s = atomic_fetch_add(&B->next, batch);
        if (s >= B->nw) break;
        int b = B->nw - s < batch ? (int)(B->nw - s) : batch;
        for (int k = 0; k < b; k++) {
            const window *x = &B->w[s + k];
            int32_t *d = ids + (size_t)k * ms;
            d[0] = cls;
            if (x->len > 2) memcpy(d + 1, B->pieces + x->start, (size_t)(x->len - 2) * sizeof *d);
            d[x->len - 1] = sep;
            bids[k] = d;
            blens[k] = x->len;
        }
        ns_bert_forward(m, b, bids, blens, NULL, B->wout + (size_t)s * H);
        long done = atomic_fetch_add(&B->done, b) + b;
        if (caller) ns_progress_update(B->prog, done, (long)B->nw, B->what);
    }
    free(ids);
    free(bids);
    free(blens);
    return NULL;
}

/* Both encoders: every text becomes one model input (its first
 * max_seq_length − 2 pieces, as sentence-transformers truncates) or, with
 * chunks, one per consecutive max_seq_length − 2 pieces; inputs run in
 * batches sorted by length (on m->threads threads when the tiles are in
 * use); a text's embedding is the mean of its inputs' pooled embeddings,
 * summed in the sorted order whatever the threads (the same bits), normalised
 * again when the model normalises and there were several (one input:
 * exactly the truncating encoder's vector). */
static void encode(const ns_bert *m, int n, const char *const *texts, const size_t *lens, int batch, ns_progress *prog,
                   float *out, bool chunks)
{
    if (n <= 0) return;
    if (batch <= 0) batch = 32;
    const int ms = m->c.max_seq_length, K = ms - 2 > 0 ? ms - 2 : 1, H = m->c.hidden;
    int32_t *pieces = NULL;
    size_t np = 0, cap = 0;
    int64_t *poff = ns_xmalloc((size_t)(n + 1) * sizeof *poff);
    int *nwin = ns_xmalloc((size_t)n * sizeof *nwin);
    int64_t nw = 0;
    for (int i = 0; i < n; i++) {
        size_t len = lens ? lens[i] : strlen(texts[i]);
        poff[i] = (int64_t)np;
        if (ms > 2) ns_wordpiece_tokenize(m->wp, texts[i], len, chunks ? 0 : np + (size_t)K, &pieces, &np, &cap);
        int64_t count = (int64_t)np - poff[i];
        nwin[i] = chunks && count > K ? (int)((count + K - 1) / K) : 1;
        nw += nwin[i];
    }
    poff[n] = (int64_t)np;
    window *w = ns_xmalloc((size_t)nw * sizeof *w);
    nw = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < nwin[i]; k++, nw++) {
            int64_t st = poff[i] + (int64_t)k * K, left = poff[i + 1] - st;
            w[nw].text = i;
            w[nw].start = st;
            w[nw].len = (int)(left < K ? (left > 0 ? left : 0) : K) + 2;
            w[nw].idx = (int)nw;
        }
    qsort(w, (size_t)nw, sizeof *w, by_len_desc);
    batches B = {.m = m, .w = w, .pieces = pieces, .nw = nw, .batch = batch, .prog = prog,
                 .what = chunks ? "windows" : "texts"};
    B.wout = ns_xmalloc((size_t)nw * H * sizeof *B.wout);
    atomic_init(&B.next, 0);
    atomic_init(&B.done, 0);
    B.caller = pthread_self();
    int nt = ns_bert_threads(m), started = 0;
    int64_t nbatch = (nw + batch - 1) / batch;
    if (nt > nbatch) nt = (int)nbatch;
    pthread_t *th = ns_xmalloc((size_t)(nt > 1 ? nt - 1 : 1) * sizeof *th);
    for (int t = 0; t + 1 < nt; t++) started += pthread_create(&th[started], NULL, run_batches, &B) == 0;
    run_batches(&B); /* the calling thread works too (and alone when no thread started) */
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    memset(out, 0, (size_t)n * H * sizeof *out);
    for (int64_t k = 0; k < nw; k++) {
        float *o = out + (size_t)w[k].text * H;
        const float *v = B.wout + (size_t)k * H;
        for (int d = 0; d < H; d++) o[d] += v[d];
    }
    for (int i = 0; i < n; i++) {
        if (nwin[i] == 1) continue;
        float *o = out + (size_t)i * H;
        double nn = 0;
        for (int d = 0; d < H; d++) o[d] /= (float)nwin[i], nn += (double)o[d] * o[d];
        if (m->c.normalize) {
            float inv = (float)(1.0 / fmax(sqrt(nn), 1e-12));
            for (int d = 0; d < H; d++) o[d] *= inv;
        }
    }
    free(th);
    free(B.wout);
    free(w);
    free(nwin);
    free(poff);
    free(pieces);
}

void ns_bert_encode(const ns_bert *m, int n, const char *const *texts, const size_t *lens, int batch, ns_progress *prog,
                    float *out)
{
    encode(m, n, texts, lens, batch, prog, out, false);
}

void ns_bert_encode_chunks(const ns_bert *m, int n, const char *const *texts, const size_t *lens, int batch,
                           ns_progress *prog, float *out)
{
    encode(m, n, texts, lens, batch, prog, out, true);
}

/* ---------------------------------------------------------------- loading */

void ns_bert_layer_weights(const ns_bert *m, int l, ns_bert_layer *o)
{
    const layer_w *w = &m->lw[l];
    *o = (ns_bert_layer){w->wqkv, w->bqkv, w->wo, w->bo, w->ln1_g, w->ln1_b,
                         w->w1,   w->b1,   w->w2, w->b2, w->ln2_g, w->ln2_b};
}

void ns_bert_merge_lora(ns_bert *m, const ns_bert_lora *lora, uint64_t tag)
{
    int H = m->c.hidden, r = lora->rank;
    for (int l = 0; l < m->c.layers; l++)
        for (int t = 0; t < NS_BERT_NTARGETS; t++) {
            const float *A = lora->a[l * NS_BERT_NTARGETS + t], *B = lora->b[l * NS_BERT_NTARGETS + t];
            if (!A || !B) continue;
            float *W = t == NS_BERT_O ? m->lw[l].wo : m->lw[l].wqkv + (size_t)t * H * H;
            ns_sgemm(false, false, H, H, r, lora->scale, B, r, A, H, 1.0f, W, H); /* W[H×H] += scale·B·A */
        }
    m->fingerprint = ns_hash_mix(m->fingerprint ^ ns_hash_mix(tag + 0x6c6f7261ULL)); /* "lora" */
}

const ns_bert_config *ns_bert_config_of(const ns_bert *m) { return &m->c; }
const ns_wordpiece *ns_bert_wordpiece(const ns_bert *m) { return m->wp; }
int ns_bert_dim(const ns_bert *m) { return m->c.hidden; }
uint64_t ns_bert_fingerprint(const ns_bert *m) { return m->fingerprint; }

bool ns_bert_set_tiles(ns_bert *m, bool on)
{
    const ns_bert_config *c = &m->c;
    const int H = c->hidden, I = c->intermediate;
    const size_t sq = ns_tilegemm_size(3 * H, H), so = ns_tilegemm_size(H, H), s1 = ns_tilegemm_size(I, H),
                 s2 = ns_tilegemm_size(H, I);
    free(m->tiles);
    m->tiles = NULL;
    for (int l = 0; l < c->layers; l++) m->lw[l].twqkv = m->lw[l].two = m->lw[l].tw1 = m->lw[l].tw2 = NULL;
    if (!on || !ns_tilegemm_usable()) return false;
    uint16_t *p = m->tiles = ns_xmalloc((size_t)c->layers * (sq + so + s1 + s2) * sizeof *m->tiles);
    for (int l = 0; l < c->layers; l++) {
        layer_w *w = &m->lw[l];
        ns_tilegemm_pack(p, w->wqkv, 3 * H, H), w->twqkv = p, p += sq;
        ns_tilegemm_pack(p, w->wo, H, H), w->two = p, p += so;
        ns_tilegemm_pack(p, w->w1, I, H), w->tw1 = p, p += s1;
        ns_tilegemm_pack(p, w->w2, H, I), w->tw2 = p, p += s2;
    }
    return true;
}

const char *ns_bert_backend(const ns_bert *m) { return m->tiles ? "amx bf16x3" : ns_blas_backend(); }

void ns_bert_set_threads(ns_bert *m, int threads) { m->threads = threads > 1 ? threads : 1; }
int ns_bert_threads(const ns_bert *m) { return m->tiles && m->threads > 1 ? m->threads : 1; }
bool ns_bert_tiled(const ns_bert *m) { return m->tiles != NULL; }

void ns_bert_free(ns_bert *m)
{
    if (!m) return;
    ns_wordpiece_free(m->wp);
    free(m->params);
    free(m->tiles);
    free(m->lw);
    free(m->bucket);
    free(m);
}

static bool cfg_int(const ns_json *j, const char *key, int *out, int dflt)
{
    int64_t v;
    if (ns_json_get_int(j, key, &v)) {
        *out = (int)v;
        return v >= 0 && v < (1 << 30);
    }
    *out = dflt;
    return dflt >= 0;
}

/* Reads config.json into c (architecture and sizes). */
static ns_status read_config(ns_bert_config *c, const char *dir, ns_error *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/config.json", dir);
    ns_json j;
    ns_status rc = ns_json_read(&j, path, err);
    if (rc != NS_OK) return rc;
    const char *type = NULL, *act = "gelu", *pet = "absolute";
    ns_json_get_str(&j, "model_type", &type);
    ns_json_get_str(&j, "hidden_act", &act);
    ns_json_get_str(&j, "position_embedding_type", &pet);
    if (!type || (strcmp(type, "bert") != 0 && strcmp(type, "mpnet") != 0)) {
        rc = ns_error_set(err, NS_ERR_UNSUPPORTED, path, 0, 0, "model_type \"%s\" is not supported (bert, mpnet)",
                          type ? type : "(missing)");
        goto done;
    }
    if (strcmp(act, "gelu") != 0) {
        rc = ns_error_set(err, NS_ERR_UNSUPPORTED, path, 0, 0, "hidden_act \"%s\" is not supported (gelu)", act);
        goto done;
    }
    if (strcmp(pet, "absolute") != 0) {
        rc = ns_error_set(err, NS_ERR_UNSUPPORTED, path, 0, 0,
                          "position_embedding_type \"%s\" is not supported (absolute)", pet);
        goto done;
    }
    c->arch = !strcmp(type, "mpnet") ? NS_BERT_ARCH_MPNET : NS_BERT_ARCH_BERT;
    bool ok = cfg_int(&j, "vocab_size", &c->vocab_size, -1) && cfg_int(&j, "hidden_size", &c->hidden, -1) &&
              cfg_int(&j, "num_hidden_layers", &c->layers, -1) && cfg_int(&j, "num_attention_heads", &c->heads, -1) &&
              cfg_int(&j, "intermediate_size", &c->intermediate, -1) &&
              cfg_int(&j, "max_position_embeddings", &c->max_position, -1) &&
              cfg_int(&j, "type_vocab_size", &c->type_vocab_size, 2) &&
              cfg_int(&j, "pad_token_id", &c->pad_token_id, c->arch == NS_BERT_ARCH_MPNET ? 1 : 0) &&
              cfg_int(&j, "relative_attention_num_buckets", &c->relative_buckets, 32);
    if (!ok || c->hidden <= 0 || c->heads <= 0 || c->hidden % c->heads != 0 || c->layers <= 0 ||
        c->intermediate <= 0 || c->max_position <= 2 || c->vocab_size <= 0 || c->relative_buckets < 2) {
        rc = ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                          "config needs positive vocab_size, hidden_size (a multiple of num_attention_heads), "
                          "num_hidden_layers, intermediate_size and max_position_embeddings");
        goto done;
    }
    const ns_json *eps = ns_json_get(&j, "layer_norm_eps");
    c->layer_norm_eps = eps && eps->kind == NS_JSON_NUMBER ? (float)eps->number : 1e-12f;
done:
    ns_json_free(&j);
    return rc;
}

/* sentence-transformers settings: max_seq_length, pooling, normalisation. */
static ns_status read_st_config(ns_bert_config *c, const char *dir, ns_error *err)
{
    char path[1024];
    ns_json j;
    ns_status rc;
    int usable = c->arch == NS_BERT_ARCH_MPNET ? c->max_position - c->pad_token_id - 1 : c->max_position;
    c->max_seq_length = usable < 512 ? usable : 512;
    c->pooling = NS_BERT_POOL_MEAN;
    c->normalize = false;
    snprintf(path, sizeof path, "%s/sentence_bert_config.json", dir);
    FILE *f = fopen(path, "rb");
    if (f) {
        fclose(f);
        if ((rc = ns_json_read(&j, path, err)) != NS_OK) return rc;
        int64_t v;
        if (ns_json_get_int(&j, "max_seq_length", &v)) {
            if (v < 2 || v > usable) {
                ns_json_free(&j);
                return ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                                    "max_seq_length %lld outside 2..%d (the model's position table)", (long long)v,
                                    usable);
            }
            c->max_seq_length = (int)v;
        }
        ns_json_free(&j);
    }
    const char *pool_dir = "1_Pooling";
    snprintf(path, sizeof path, "%s/modules.json", dir);
    ns_json mods = {0};
    f = fopen(path, "rb");
    if (f) {
        fclose(f);
        if ((rc = ns_json_read(&mods, path, err)) != NS_OK) return rc;
        for (int i = 0; mods.kind == NS_JSON_ARRAY && i < mods.n; i++) {
            const char *type = "", *p = "";
            ns_json_get_str(&mods.items[i], "type", &type);
            ns_json_get_str(&mods.items[i], "path", &p);
            if (strstr(type, "Normalize")) c->normalize = true;
            else if (strstr(type, "Pooling")) pool_dir = p;
            else if (!strstr(type, "Transformer")) {
                rc = ns_error_set(err, NS_ERR_UNSUPPORTED, path, 0, 0, "module \"%s\" is not supported", type);
                ns_json_free(&mods);
                return rc;
            }
        }
    }
    snprintf(path, sizeof path, "%s/%s/config.json", dir, pool_dir);
    ns_json_free(&mods);
    f = fopen(path, "rb");
    if (f) {
        fclose(f);
        if ((rc = ns_json_read(&j, path, err)) != NS_OK) return rc;
        const char *modes[] = {"pooling_mode_mean_tokens", "pooling_mode_cls_token", "pooling_mode_max_tokens",
                               "pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens",
                               "pooling_mode_lasttoken"};
        int on = 0, which = 0;
        for (int k = 0; k < 6; k++) {
            const ns_json *v = ns_json_get(&j, modes[k]);
            if (v && v->kind == NS_JSON_BOOL && v->boolean) {
                on++;
                which = k;
            }
        }
        ns_json_free(&j);
        if (on != 1 || which > 2)
            return ns_error_set(err, NS_ERR_UNSUPPORTED, path, 0, 0,
                                "only one of mean, CLS or max pooling is supported");
        c->pooling = which == 0 ? NS_BERT_POOL_MEAN : which == 1 ? NS_BERT_POOL_CLS : NS_BERT_POOL_MAX;
    }
    return NS_OK;
}

typedef struct loader {
    const ns_safetensors *st;
    const char *prefix; /* "", "bert." or "mpnet." */
    ns_error *err;
    ns_status rc;
} loader;

static void get(loader *ld, float *dst, int ndim, int64_t d0, int64_t d1, const char *fmt, int layer)
{
    if (ld->rc != NS_OK) return;
    char name[256], full[300];
    snprintf(name, sizeof name, fmt, layer);
    snprintf(full, sizeof full, "%s%s", ld->prefix, name);
    int64_t shape[2] = {d0, d1};
    ld->rc = ns_st_read_f32(ld->st, full, ndim, shape, dst, ld->err);
}

static uint64_t file_hash(const char *path, uint64_t h, size_t limit)
{
    char *text;
    size_t len;
    if (ns_read_file(path, &text, &len, NULL) != NS_OK) return ns_hash_mix(h + 1);
    h = ns_hash_bytes(text, len < limit ? len : limit, h);
    free(text);
    return h;
}

ns_status ns_bert_load(ns_bert **out, const char *dir, ns_error *err)
{
    *out = NULL;
    ns_bert *m = ns_xcalloc(1, sizeof *m);
    ns_bert_config *c = &m->c;
    ns_safetensors st = {0};
    ns_status rc;
    char path[1024];
    if ((rc = read_config(c, dir, err)) != NS_OK) goto fail;
    if ((rc = read_st_config(c, dir, err)) != NS_OK) goto fail;
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/') dl--; /* the base name, trailing slashes aside */
    size_t b0 = dl;
    while (b0 > 0 && dir[b0 - 1] != '/') b0--;
    snprintf(c->name, sizeof c->name, "%.*s", (int)(dl - b0), dir + b0);

    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    if ((rc = ns_st_open(&st, path, err)) != NS_OK) goto fail;
    const char *prefix = "";
    if (!ns_st_find(&st, "embeddings.word_embeddings.weight")) {
        const char *cands[] = {"bert.", "mpnet.", "model."};
        for (int k = 0; k < 3; k++) {
            char name[64];
            snprintf(name, sizeof name, "%sembeddings.word_embeddings.weight", cands[k]);
            if (ns_st_find(&st, name)) prefix = cands[k];
        }
    }
    char wname[128];
    snprintf(wname, sizeof wname, "%sembeddings.word_embeddings.weight", prefix);
    const ns_st_tensor *we = ns_st_find(&st, wname);
    if (!we) {
        rc = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "missing tensor \"embeddings.word_embeddings.weight\"");
        goto fail;
    }
    if (we->ndim != 2 || we->shape[1] != c->hidden) {
        rc = ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                          "tensor \"%s\" is not [vocab, %d] (hidden_size in config.json)", wname, c->hidden);
        goto fail;
    }
    if (we->shape[0] != c->vocab_size) {
        rc = ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                          "the word embeddings have %lld rows but config.json says vocab_size %d",
                          (long long)we->shape[0], c->vocab_size);
        goto fail;
    }
    if ((rc = ns_wordpiece_load_dir(&m->wp, dir, err)) != NS_OK) goto fail;
    if (ns_wordpiece_size(m->wp) != c->vocab_size) {
        rc = ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                          "vocabulary does not match the weights: %s/vocab.txt (with added tokens) has %d tokens but "
                          "the word embeddings of %s have %d rows",
                          dir, ns_wordpiece_size(m->wp), path, c->vocab_size);
        goto fail;
    }

    /* the parameter block, carved by a size table */
    int H = c->hidden, I = c->intermediate, V = c->vocab_size, P = c->max_position, NL = c->layers;
    bool mp = c->arch == NS_BERT_ARCH_MPNET;
    size_t layer_size = (size_t)3 * H * H + 3 * H + (size_t)H * H + H + 2 * H + (size_t)I * H + I +
                        (size_t)H * I + H + 2 * H;
    size_t total = (size_t)V * H + (size_t)P * H + (mp ? 0 : (size_t)c->type_vocab_size * H) + 2 * H +
                   (mp ? (size_t)c->relative_buckets * c->heads : 0) + NL * layer_size;
    m->params = ns_xmalloc(total * sizeof *m->params);
    float *p = m->params;
#define CARVE(ptr, count) (ptr = p, p += (count))
    CARVE(m->word, (size_t)V * H);
    CARVE(m->pos, (size_t)P * H);
    if (!mp) CARVE(m->type0, (size_t)c->type_vocab_size * H);
    CARVE(m->emb_g, H);
    CARVE(m->emb_b, H);
    if (mp) CARVE(m->relbias, (size_t)c->relative_buckets * c->heads);
    m->lw = ns_xcalloc((size_t)NL, sizeof *m->lw);
    for (int l = 0; l < NL; l++) {
        layer_w *w = &m->lw[l];
        CARVE(w->wqkv, (size_t)3 * H * H);
        CARVE(w->bqkv, (size_t)3 * H);
        CARVE(w->wo, (size_t)H * H);
        CARVE(w->bo, H);
        CARVE(w->ln1_g, H);
        CARVE(w->ln1_b, H);
        CARVE(w->w1, (size_t)I * H);
        CARVE(w->b1, I);
        CARVE(w->w2, (size_t)H * I);
        CARVE(w->b2, H);
        CARVE(w->ln2_g, H);
        CARVE(w->ln2_b, H);
    }
#undef CARVE
    loader ld = {&st, prefix, err, NS_OK};
    get(&ld, m->word, 2, V, H, "embeddings.word_embeddings.weight", 0);
    get(&ld, m->pos, 2, P, H, "embeddings.position_embeddings.weight", 0);
    if (!mp) get(&ld, m->type0, 2, c->type_vocab_size, H, "embeddings.token_type_embeddings.weight", 0);
    get(&ld, m->emb_g, 1, H, 0, "embeddings.LayerNorm.weight", 0);
    get(&ld, m->emb_b, 1, H, 0, "embeddings.LayerNorm.bias", 0);
    if (mp) get(&ld, m->relbias, 2, c->relative_buckets, c->heads, "encoder.relative_attention_bias.weight", 0);
    const char *qn[3] = {mp ? "encoder.layer.%d.attention.attn.q.weight" : "encoder.layer.%d.attention.self.query.weight",
                         mp ? "encoder.layer.%d.attention.attn.k.weight" : "encoder.layer.%d.attention.self.key.weight",
                         mp ? "encoder.layer.%d.attention.attn.v.weight" : "encoder.layer.%d.attention.self.value.weight"};
    const char *qb[3] = {mp ? "encoder.layer.%d.attention.attn.q.bias" : "encoder.layer.%d.attention.self.query.bias",
                         mp ? "encoder.layer.%d.attention.attn.k.bias" : "encoder.layer.%d.attention.self.key.bias",
                         mp ? "encoder.layer.%d.attention.attn.v.bias" : "encoder.layer.%d.attention.self.value.bias"};
    for (int l = 0; l < NL; l++) {
        layer_w *w = &m->lw[l];
        for (int k = 0; k < 3; k++) {
            get(&ld, w->wqkv + (size_t)k * H * H, 2, H, H, qn[k], l);
            get(&ld, w->bqkv + (size_t)k * H, 1, H, 0, qb[k], l);
        }
        get(&ld, w->wo, 2, H, H, mp ? "encoder.layer.%d.attention.attn.o.weight" : "encoder.layer.%d.attention.output.dense.weight", l);
        get(&ld, w->bo, 1, H, 0, mp ? "encoder.layer.%d.attention.attn.o.bias" : "encoder.layer.%d.attention.output.dense.bias", l);
        get(&ld, w->ln1_g, 1, H, 0, mp ? "encoder.layer.%d.attention.LayerNorm.weight" : "encoder.layer.%d.attention.output.LayerNorm.weight", l);
        get(&ld, w->ln1_b, 1, H, 0, mp ? "encoder.layer.%d.attention.LayerNorm.bias" : "encoder.layer.%d.attention.output.LayerNorm.bias", l);
        get(&ld, w->w1, 2, I, H, "encoder.layer.%d.intermediate.dense.weight", l);
        get(&ld, w->b1, 1, I, 0, "encoder.layer.%d.intermediate.dense.bias", l);
        get(&ld, w->w2, 2, H, I, "encoder.layer.%d.output.dense.weight", l);
        get(&ld, w->b2, 1, H, 0, "encoder.layer.%d.output.dense.bias", l);
        get(&ld, w->ln2_g, 1, H, 0, "encoder.layer.%d.output.LayerNorm.weight", l);
        get(&ld, w->ln2_b, 1, H, 0, "encoder.layer.%d.output.LayerNorm.bias", l);
    }
    if ((rc = ld.rc) != NS_OK) goto fail;
    if (mp) {
        int ms = c->max_seq_length;
        m->bucket = ns_xmalloc((size_t)(2 * ms - 1) * sizeof *m->bucket);
        for (int r = -(ms - 1); r <= ms - 1; r++)
            m->bucket[r + ms - 1] = ns_bert_relative_bucket(r, c->relative_buckets, 128);
    }
    /* fingerprint: settings, tokenizer files, the weight header and size */
    int32_t settings[4] = {c->max_seq_length, (int32_t)c->pooling, c->normalize, (int32_t)c->arch};
    uint64_t h = ns_hash_bytes(settings, sizeof settings, 0x6265727466707231ULL);
    const char *files[] = {"config.json", "vocab.txt", "tokenizer.json", "tokenizer_config.json",
                           "special_tokens_map.json"};
    for (int k = 0; k < 5; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        h = file_hash(path, h, (size_t)-1);
    }
    h = ns_hash_bytes(st.map, st.data_start, h);
    h = ns_hash_bytes(&st.size, sizeof st.size, h);
    m->fingerprint = h;
    ns_st_close(&st);
    if (c->hidden % 32 == 0 && c->intermediate % 32 == 0) ns_bert_set_tiles(m, true); /* whole tiles: every real model */
    *out = m;
    return NS_OK;
fail:
    ns_st_close(&st);
    ns_bert_free(m);
    return rc;
}
