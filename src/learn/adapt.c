/* adapt.c — a world model and its encoder's LoRA adapter trained jointly
 * (adapt.h). */
#include "nextstate/learn/adapt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/encode/wordpiece.h"
#include "nextstate/learn/optim.h"

void ns_adapt_opts_init(ns_adapt_opts *o)
{
    memset(o, 0, sizeof *o);
    o->epochs = 2;
    o->batch = 16;
    o->lr = 1e-4;
    o->tape_mb = 1024;
    o->seed = 1;
}

/* One step's texts, their windows and embeddings. */
typedef struct step_texts {
    int nt, nw, cap_t, cap_w;
    int64_t *row;    /* [nt]: state row r as r, action row r as −1 − r */
    int *first;      /* [nt + 1]: the text's windows first[t] … first[t + 1] */
    int *wlen;       /* [nw] model-input lengths (CLS and SEP included) */
    int64_t *wstart; /* [nw] offset of the window's ids in ids */
    int32_t *ids;
    size_t nids, cap_ids;
    int32_t *pieces; /* tokenizer scratch */
    size_t cap_pieces;
    float *wout, *emb, *demb, *dwin; /* [nw × H], [nt × H], [nt × H], [nw × H] */
    size_t cap_wf, cap_tf;
} step_texts;

struct ns_adapt_feed {
    ns_world_feed hook;
    const ns_bert *m;
    ns_lora *l;
    ns_bert_lora view;
    ns_world_inputs *in;
    const ns_feature_std *ss, *as;
    const ns_row_texts *tx;
    int H;
    size_t tape_tokens; /* the most tokens one tape may hold */
    step_texts s;
    ns_bert_tape tape;
    bool taped;
    int64_t *spos; /* [2n]: each listed state row's text */
    int spos_cap;
    ns_adapt_stats st; /* texts, windows, tokens */
};
typedef struct ns_adapt_feed feed_ctx;

/* Grows *p to at least need elements; whether it grew. */
static bool grow(void **p, int *cap, int need, size_t size)
{
    if (need <= *cap) return false;
    *cap = need + need / 2 + 8;
    *p = ns_xrealloc(*p, (size_t)*cap * size);
    return true;
}

/* Appends a text's windows (as bert.c's encode cuts them). */
static void add_text(feed_ctx *c, int64_t row, const char *text, size_t len)
{
    step_texts *s = &c->s;
    const ns_bert_config *cfg = ns_bert_config_of(c->m);
    const ns_wordpiece *wp = ns_bert_wordpiece(c->m);
    const int K = cfg->max_seq_length - 2 > 0 ? cfg->max_seq_length - 2 : 1;
    size_t np = 0;
    if (cfg->max_seq_length > 2) ns_wordpiece_tokenize(wp, text, len, 0, &s->pieces, &np, &s->cap_pieces);
    int nwin = np > (size_t)K ? (int)((np + K - 1) / K) : 1;
    if (grow((void **)&s->row, &s->cap_t, s->nt + 2, sizeof *s->row))
        s->first = ns_xrealloc(s->first, (size_t)s->cap_t * sizeof *s->first);
    if (grow((void **)&s->wlen, &s->cap_w, s->nw + nwin, sizeof *s->wlen))
        s->wstart = ns_xrealloc(s->wstart, (size_t)s->cap_w * sizeof *s->wstart);
    s->row[s->nt] = row;
    s->first[s->nt] = s->nw;
    for (int k = 0; k < nwin; k++) {
        size_t from = (size_t)k * K, take = np - from < (size_t)K ? np - from : (size_t)K;
        if (np == 0) take = 0;
        if (s->nids + take + 2 > s->cap_ids) {
            s->cap_ids = (s->nids + take + 2) * 2;
            s->ids = ns_xrealloc(s->ids, s->cap_ids * sizeof *s->ids);
        }
        s->wstart[s->nw] = (int64_t)s->nids;
        s->ids[s->nids++] = ns_wordpiece_cls_id(wp);
        if (take) memcpy(s->ids + s->nids, s->pieces + from, take * sizeof *s->ids);
        s->nids += take;
        s->ids[s->nids++] = ns_wordpiece_sep_id(wp);
        s->wlen[s->nw++] = (int)take + 2;
    }
    s->nt++;
    s->first[s->nt] = s->nw;
}

/* Windows [w0, w1) through the encoder (with the tape when tape is set). */
static void encode_windows(feed_ctx *c, int w0, int w1, ns_bert_tape *tape, float *out)
{
    step_texts *s = &c->s;
    int n = w1 - w0;
    const int32_t **p = ns_xmalloc((size_t)(n ? n : 1) * sizeof *p);
    for (int k = 0; k < n; k++) p[k] = s->ids + s->wstart[w0 + k];
    ns_bert_forward_lora(c->m, &c->view, n, p, s->wlen + w0, tape, NULL, out);
    free(p);
}

/* The row features of text t's embedding e: standardised as recorded. */
static float *row_of(feed_ctx *c, int t, const ns_feature_std **sd)
{
    int64_t r = c->s.row[t];
    bool state = r >= 0;
    ns_features *f = state ? &c->in->state : &c->in->action;
    *sd = state ? c->ss : c->as;
    return f->dense + (size_t)(state ? r : -1 - r) * f->dim;
}

static int64_t find_row(const step_texts *s, int64_t row)
{
    for (int t = 0; t < s->nt; t++)
        if (s->row[t] == row) return t;
    return -1;
}

static void feed_prepare(void *ctx, const int64_t *srows, int ns, const int64_t *arows, int na)
{
    feed_ctx *c = ctx;
    step_texts *s = &c->s;
    const ns_row_texts *tx = c->tx;
    const int H = c->H;
    s->nt = s->nw = 0;
    s->nids = 0;
    grow((void **)&c->spos, &c->spos_cap, ns, sizeof *c->spos);
    for (int i = 0; i < ns; i++) { /* distinct states (a batch lists few: a linear search is enough) */
        int64_t t = find_row(s, srows[i]);
        if (t < 0) {
            t = s->nt;
            add_text(c, srows[i], tx->state[srows[i]], tx->state_len[srows[i]]);
        }
        c->spos[i] = t;
    }
    for (int i = 0; i < na; i++) add_text(c, -1 - arows[i], tx->action[arows[i]], tx->action_len[arows[i]]);
    if ((size_t)s->nw * H > s->cap_wf) {
        s->cap_wf = (size_t)s->nw * H * 2;
        s->wout = ns_xrealloc(s->wout, s->cap_wf * sizeof(float));
        s->dwin = ns_xrealloc(s->dwin, s->cap_wf * sizeof(float));
    }
    if ((size_t)s->nt * H > s->cap_tf) {
        s->cap_tf = (size_t)s->nt * H * 2;
        s->emb = ns_xrealloc(s->emb, s->cap_tf * sizeof(float));
        s->demb = ns_xrealloc(s->demb, s->cap_tf * sizeof(float));
    }
    size_t tokens = 0;
    for (int k = 0; k < s->nw; k++) tokens += (size_t)s->wlen[k];
    c->taped = tokens <= c->tape_tokens;
    ns_lora_view(c->l, &c->view);
    encode_windows(c, 0, s->nw, c->taped ? &c->tape : NULL, s->wout);
    c->st.texts += s->nt;
    c->st.windows += s->nw;
    c->st.tokens += (int64_t)tokens;
    const bool norm = ns_bert_config_of(c->m)->normalize;
    for (int t = 0; t < s->nt; t++) {
        int w0 = s->first[t], nwin = s->first[t + 1] - w0;
        float *e = s->emb + (size_t)t * H;
        memcpy(e, s->wout + (size_t)w0 * H, (size_t)H * sizeof *e);
        if (nwin > 1) { /* the windows' mean, normalised again (bert.c's encode) */
            for (int k = 1; k < nwin; k++)
                for (int d = 0; d < H; d++) e[d] += s->wout[(size_t)(w0 + k) * H + d];
            double nn = 0;
            for (int d = 0; d < H; d++) e[d] /= (float)nwin, nn += (double)e[d] * e[d];
            if (norm) {
                float inv = (float)(1.0 / fmax(sqrt(nn), 1e-12));
                for (int d = 0; d < H; d++) e[d] *= inv;
            }
        }
        const ns_feature_std *sd;
        float *f = row_of(c, t, &sd);
        for (int d = 0; d < H; d++) f[d] = sd->dim ? (e[d] - sd->mean[d]) * sd->scale[d] : e[d];
    }
}

static void feed_backward(void *ctx, const int64_t *srows, int ns, const float *dstate, const int64_t *arows, int na,
                          const float *daction)
{
    (void)srows;
    (void)arows;
    feed_ctx *c = ctx;
    step_texts *s = &c->s;
    const int H = c->H;
    const bool norm = ns_bert_config_of(c->m)->normalize;
    memset(s->demb, 0, (size_t)s->nt * H * sizeof(float));
    /* through the standardisation: the states listed (each listing adds), then the actions (distinct) */
    for (int i = 0; i < ns + na; i++) {
        int t = i < ns ? (int)c->spos[i] : s->nt - na + (i - ns);
        const float *g = i < ns ? dstate + (size_t)i * H : daction + (size_t)(i - ns) * H;
        const ns_feature_std *sd = i < ns ? c->ss : c->as;
        float *de = s->demb + (size_t)t * H;
        for (int d = 0; d < H; d++) de[d] += sd->dim ? g[d] * sd->scale[d] : g[d];
    }
    /* through the window mean (and its normalisation) */
    for (int t = 0; t < s->nt; t++) {
        int w0 = s->first[t], nwin = s->first[t + 1] - w0;
        const float *de = s->demb + (size_t)t * H, *e = s->emb + (size_t)t * H;
        if (nwin == 1) {
            memcpy(s->dwin + (size_t)w0 * H, de, (size_t)H * sizeof *de);
            continue;
        }
        double ed = 0, nn = 0; /* e = μ/‖μ‖: dμ = (de − e (e·de)) / ‖μ‖, ‖μ‖ = 1/Σ… from the windows */
        for (int d = 0; d < H; d++) {
            double mu = 0;
            for (int k = 0; k < nwin; k++) mu += s->wout[(size_t)(w0 + k) * H + d];
            mu /= nwin;
            nn += mu * mu;
            ed += (double)e[d] * de[d];
        }
        double norm_mu = norm ? fmax(sqrt(nn), 1e-12) : 1.0;
        for (int d = 0; d < H; d++) {
            float dmu = norm ? (float)((de[d] - e[d] * ed) / norm_mu) : de[d];
            for (int k = 0; k < nwin; k++) s->dwin[(size_t)(w0 + k) * H + d] = dmu / (float)nwin;
        }
    }
    if (c->taped) {
        ns_lora_backward(c->l, c->m, &c->tape, s->dwin);
        return;
    }
    /* recompute in slices whose tape fits */
    float *out = ns_xmalloc((size_t)s->nw * H * sizeof *out);
    for (int w0 = 0; w0 < s->nw;) {
        size_t tok = 0;
        int w1 = w0;
        while (w1 < s->nw && (w1 == w0 || tok + (size_t)s->wlen[w1] <= c->tape_tokens)) tok += (size_t)s->wlen[w1++];
        encode_windows(c, w0, w1, &c->tape, out);
        ns_lora_backward(c->l, c->m, &c->tape, s->dwin + (size_t)w0 * H);
        w0 = w1;
    }
    free(out);
}

void ns_adapt_feed_free(ns_adapt_feed *c)
{
    if (!c) return;
    step_texts *s = &c->s;
    free(s->row), free(s->first), free(s->wlen), free(s->wstart), free(s->ids), free(s->pieces);
    free(s->wout), free(s->emb), free(s->demb), free(s->dwin);
    free(c->spos);
    ns_bert_tape_free(&c->tape);
    free(c);
}

/* Floats a tape keeps per token. */
static size_t tape_floats(const ns_bert_config *c, int rank)
{
    size_t H = (size_t)c->hidden, I = (size_t)c->intermediate, NL = (size_t)c->layers;
    return (NL + 1) * H + NL * (6 * H + I + 4 + NS_BERT_NTARGETS * (size_t)rank);
}

ns_adapt_feed *ns_adapt_feed_new(const ns_bert *m, ns_lora *l, ns_world_inputs *in, const ns_feature_std *ss,
                                 const ns_feature_std *as, const ns_row_texts *texts, int tape_mb)
{
    static const ns_feature_std none = {0};
    feed_ctx *c = ns_xcalloc(1, sizeof *c);
    c->m = m, c->l = l, c->in = in, c->tx = texts, c->H = ns_bert_dim(m);
    c->ss = ss ? ss : &none;
    c->as = as ? as : &none;
    c->tape_tokens = (size_t)(tape_mb > 0 ? tape_mb : 1) * (1u << 20) / 4 / tape_floats(ns_bert_config_of(m), l->cfg.rank);
    c->hook = (ns_world_feed){feed_prepare, feed_backward, c};
    return c;
}

const ns_world_feed *ns_adapt_feed_hook(const ns_adapt_feed *f) { return &f->hook; }

static ns_status check(const ns_world *w, const ns_bert *m, const ns_world_inputs *in, const ns_row_texts *tx,
                       const ns_split *sp, const ns_adapt_opts *o, ns_error *err)
{
    int H = ns_bert_dim(m);
    if (in->state.sparse || in->action.sparse || in->state.dim != H || in->action.dim != H ||
        in->action_rows != NS_AROWS_ACTION)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0,
                            "adapting the encoder needs its own embeddings as dense state and action features (%d "
                            "columns, one row per ground action)", H);
    if (tx->nstates != in->state.nrows || tx->nactions != in->action.nrows)
        return ns_error_set(err, NS_ERR_INTERNAL, NULL, 0, 0, "texts and feature rows differ in number");
    if (w->cfg.state_dim != H || w->cfg.action_dim != H)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "the model does not read %d-wide features", H);
    if (sp->train.n <= 0) return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "the split has no training transitions");
    if (o->batch < 1 || o->epochs < 0 || !(o->lr >= 0) || o->tape_mb < 1)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "bad adaptation options (batch, epochs, lr, tape)");
    return NS_OK;
}

ns_status ns_adapt_train(ns_world *w, ns_lora *l, const ns_bert *m, ns_world_inputs *in, const ns_feature_std *ss,
                         const ns_feature_std *as, const ns_row_texts *texts, const ns_split *sp,
                         const ns_train_opts *to, const ns_adapt_opts *o, ns_adapt_stats *st, ns_error *err)
{
    memset(st, 0, sizeof *st);
    ns_status rc = check(w, m, in, texts, sp, o, err);
    if (rc) return rc;
    ns_world_set_bf16(w, false);
    ns_world_set_int8(w, false);
    ns_adapt_feed *feed = ns_adapt_feed_new(m, l, in, ss, as, texts, o->tape_mb);
    ns_train_opts lo = *to;
    lo.feed = ns_adapt_feed_hook(feed);
    ns_adamw ow, ol;
    ns_adamw_init(&ow, o->head_lr > 0 ? o->head_lr : to->lr, to->weight_decay);
    ow.beta1 = to->beta1, ow.beta2 = to->beta2;
    ns_adamw_init(&ol, o->lr, o->weight_decay);
    const ns_refs *tr = &sp->train;
    int64_t ntr = tr->n, nbatch = (ntr + o->batch - 1) / o->batch;
    int64_t steps = o->steps > 0 ? o->steps : (int64_t)o->epochs * nbatch;
    int *order = ns_xmalloc((size_t)ntr * sizeof *order);
    for (int64_t i = 0; i < ntr; i++) order[i] = (int)i;
    int64_t *brefs = ns_xmalloc((size_t)2 * o->batch * sizeof *brefs);
    ns_rng rng;
    ns_rng_seed(&rng, o->seed ^ 0x6164617074ULL); /* "adapt" */
    ns_world_ws *ws = ns_world_ws_new();
    ns_progress pg;
    ns_progress_init(&pg, o->progress, "adapt");
    double t0 = ns_now(), sum = 0;
    int64_t nb = 0, b0 = ntr;
    for (int64_t step = 0; step < steps; step++) {
        if (b0 >= ntr) { /* a new epoch */
            if (nb) st->last_loss = sum / (double)nb;
            if (step == nbatch) st->first_loss = st->last_loss;
            sum = 0, nb = 0, b0 = 0;
            ns_rng_shuffle_int(&rng, order, (size_t)ntr);
        }
        int bn = (int)(ntr - b0 < o->batch ? ntr - b0 : o->batch);
        for (int i = 0; i < bn; i++) {
            brefs[2 * i] = tr->ref[2 * order[b0 + i]];
            brefs[2 * i + 1] = tr->ref[2 * order[b0 + i] + 1];
        }
        b0 += bn;
        ns_params_zero_grad(&w->p);
        ns_params_zero_grad(&l->p);
        sum += ns_world_batch_loss(w, ws, in, brefs, bn, &lo, &rng, true);
        nb++;
        ns_adamw_step(&ow, &w->p, ow.lr);
        ns_adamw_step(&ol, &l->p, ol.lr);
        st->steps++;
        char what[96];
        snprintf(what, sizeof what, "step %lld/%lld loss %.4f", (long long)step + 1, (long long)steps, sum / (double)nb);
        ns_progress_update(&pg, (long)step + 1, (long)steps, what);
    }
    if (nb) st->last_loss = sum / (double)nb;
    if (steps <= nbatch) st->first_loss = st->last_loss;
    ns_progress_done(&pg);
    st->seconds = ns_now() - t0;
    st->texts = feed->st.texts, st->windows = feed->st.windows, st->tokens = feed->st.tokens;
    free(order);
    free(brefs);
    ns_world_ws_free(ws);
    ns_adapt_feed_free(feed);
    return NS_OK;
}
