/* featurize.c — text and literal featurizers (see featurize.h): tokenisers,
 * vocabulary fitting, tf-idf weighting, randomized truncated SVD, fixed
 * random vectors, files, and documents drawn from datasets. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/util/blas.h"
#include "nextstate/util/linalg.h"
#include "nextstate/encode/featurize.h"
#include "nextstate/data/split.h"
#include "nextstate/encode/encoders.h"
#include "nextstate/encode/features.h"
#include "nextstate/util/json.h"
#include "nextstate/util/npy.h"

/* ---- options ---------------------------------------------------------------- */

static const char *const KIND_NAMES[] = {"literals", "bow", "tfidf", "char", "random", "onehot"};
static const char *const SOURCE_NAMES[] = {"prompt", "context", "literals", "action"};

int ns_feat_kind_parse(const char *name)
{
    for (int i = 0; i < 6; i++)
        if (name && !strcmp(name, KIND_NAMES[i])) return i;
    return -1;
}
const char *ns_feat_kind_name(ns_feat_kind k) { return (unsigned)k < 6 ? KIND_NAMES[k] : "?"; }
int ns_feat_source_parse(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (name && !strcmp(name, SOURCE_NAMES[i])) return i;
    return -1;
}
const char *ns_feat_source_name(ns_feat_source s) { return (unsigned)s < 4 ? SOURCE_NAMES[s] : "?"; }

void ns_feat_opts_init(ns_feat_opts *o, ns_feat_kind kind, bool actions)
{
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->source = actions ? NS_FEAT_SRC_ACTION
                : (kind == NS_FEAT_LITERALS || kind == NS_FEAT_ONEHOT) ? NS_FEAT_SRC_LITERALS
                                                                       : NS_FEAT_SRC_PROMPT;
    o->ngram_min = o->ngram_max = 1;
    o->min_df = 1;
    o->svd_iters = 5;
    o->svd_oversample = 10;
    o->random_dim = 512;
    o->distinct = actions;
    switch (kind) {
    case NS_FEAT_LITERALS:
    case NS_FEAT_ONEHOT: o->binary = true; break;
    case NS_FEAT_BOW: break;
    case NS_FEAT_TFIDF:
    case NS_FEAT_CHAR:
        if (kind == NS_FEAT_TFIDF) o->ngram_max = 2;
        else o->ngram_min = 3, o->ngram_max = 5;
        o->min_df = actions ? 1 : 2;
        o->sublinear_tf = o->use_idf = o->l2_norm = true;
        o->svd_dim = 1024;
        break;
    case NS_FEAT_RANDOM: break;
    }
}

static bool uses_ngrams(ns_feat_kind k) { return k == NS_FEAT_BOW || k == NS_FEAT_TFIDF || k == NS_FEAT_CHAR; }

static ns_status check_opts(const ns_feat_opts *o, ns_error *err)
{
    if ((unsigned)o->kind > NS_FEAT_ONEHOT || (unsigned)o->source > NS_FEAT_SRC_ACTION)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "featurizer: unknown kind or source");
    if (uses_ngrams(o->kind) && (o->ngram_min < 1 || o->ngram_max < o->ngram_min || o->ngram_max > 64))
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "featurizer: bad n-gram range %d..%d", o->ngram_min, o->ngram_max);
    if (o->min_df < 1) return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "featurizer: min_df must be at least 1");
    if (o->svd_dim < 0 || o->svd_iters < 0 || o->svd_oversample < 0 || o->svd_max_rows < 0)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "featurizer: negative SVD option");
    if (o->kind == NS_FEAT_RANDOM && (o->random_dim < 1 || o->random_dim > (1 << 20)))
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "featurizer: random_dim must be in 1..1048576");
    return NS_OK;
}

/* ---- term table: open addressing over one byte arena ------------------------ */

/* A slot holds what a probe compares, so a probe touches one slot: the
 * term's packed bytes when it has at most 8 (then key and len identify it),
 * else its hash (then the bytes are compared too). */
typedef struct tslot {
    uint64_t key;
    int32_t e; /* entry id, -1 empty */
    int32_t len;
} tslot;

struct ns_feat_table {
    tslot *slots;
    size_t mask;
    uint64_t *hash; /* per entry, for growing */
    int64_t *off;
    int32_t *len;
    int64_t n, cap;
    char *arena;
    size_t alen, acap;
};

/* The first min(n, 8) bytes of s as a little-endian word (zero-padded). */
static inline uint64_t pack8(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    if (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        return w;
    }
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++) w |= (uint64_t)p[i] << (8 * i);
    return w;
}

/* pack8 for a key followed by at least 8 readable bytes (the tokenisers'
 * padded scratch buffer): one load and a mask. */
static inline uint64_t pack8_padded(const char *s, size_t n)
{
    uint64_t w;
    memcpy(&w, s, 8);
    return n >= 8 ? w : w & ((1ULL << (8 * n)) - 1);
}

static inline uint64_t hash_short(uint64_t pk, size_t n) { return ns_hash_mix(pk ^ (0x9e3779b97f4a7c15ULL * (n + 1))); }

/* Hash of a term; terms of at most 8 bytes (most n-grams) hash from
 * their packed word alone. */
static inline uint64_t term_hash(const char *s, size_t n)
{
    if (n <= 8) return hash_short(pack8(s, n), n);
    const unsigned char *p = (const unsigned char *)s;
    uint64_t h = 0x9e3779b97f4a7c15ULL * (n + 1);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
        p += 8;
        n -= 8;
    }
    return ns_hash_mix(h ^ pack8((const char *)p, n) ^ 0x5bd1e995ULL);
}

static void table_init(ns_feat_table *t)
{
    memset(t, 0, sizeof *t);
    t->mask = 1023;
    t->slots = ns_xmalloc((t->mask + 1) * sizeof *t->slots);
    for (size_t i = 0; i <= t->mask; i++) t->slots[i].e = -1;
    t->arena = ns_xmalloc(1);
    t->acap = 1;
}

static void table_free(ns_feat_table *t)
{
    if (!t) return;
    free(t->slots);
    free(t->hash);
    free(t->off);
    free(t->len);
    free(t->arena);
    memset(t, 0, sizeof *t);
}

static inline int64_t table_find_pk(const ns_feat_table *t, const char *key, size_t len, uint64_t h, uint64_t pk)
{
    size_t i = (size_t)h & t->mask;
    uint64_t sk = len <= 8 ? pk : h;
    for (;;) {
        const tslot *sl = &t->slots[i];
        if (sl->e < 0) return -1;
        if (sl->key == sk && (size_t)sl->len == len && (len <= 8 || !memcmp(t->arena + t->off[sl->e], key, len)))
            return sl->e;
        i = (i + 1) & t->mask;
    }
}

static inline int64_t table_find(const ns_feat_table *t, const char *key, size_t len, uint64_t h)
{
    return table_find_pk(t, key, len, h, pack8(key, len));
}

/* Lookup of a key in a padded buffer (see pack8_padded). */
static inline int64_t table_find_padded(const ns_feat_table *t, const char *key, size_t len, uint64_t *hash)
{
    uint64_t pk = pack8_padded(key, len);
    uint64_t h = len <= 8 ? hash_short(pk, len) : term_hash(key, len);
    *hash = h;
    return table_find_pk(t, key, len, h, pk);
}

static void slot_put(tslot *slots, size_t mask, uint64_t h, uint64_t key, int32_t e, int32_t len)
{
    size_t i = (size_t)h & mask;
    while (slots[i].e >= 0) i = (i + 1) & mask;
    slots[i].key = key;
    slots[i].e = e;
    slots[i].len = len;
}

/* Adds key (known absent) and returns its id. */
static int64_t table_add(ns_feat_table *t, const char *key, size_t len, uint64_t h)
{
    if ((size_t)(t->n + 1) * 2 > t->mask + 1) {
        size_t nm = t->mask * 2 + 1;
        tslot *ns = ns_xmalloc((nm + 1) * sizeof *ns);
        for (size_t i = 0; i <= nm; i++) ns[i].e = -1;
        for (size_t i = 0; i <= t->mask; i++)
            if (t->slots[i].e >= 0) {
                const tslot *o = &t->slots[i];
                slot_put(ns, nm, t->hash[o->e], o->key, o->e, o->len);
            }
        free(t->slots);
        t->slots = ns;
        t->mask = nm;
    }
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 1024;
        t->hash = ns_xrealloc(t->hash, (size_t)t->cap * sizeof *t->hash);
        t->off = ns_xrealloc(t->off, (size_t)t->cap * sizeof *t->off);
        t->len = ns_xrealloc(t->len, (size_t)t->cap * sizeof *t->len);
    }
    if (t->alen + len + 1 > t->acap) {
        while (t->alen + len + 1 > t->acap) t->acap *= 2;
        t->arena = ns_xrealloc(t->arena, t->acap);
    }
    memcpy(t->arena + t->alen, key, len);
    t->arena[t->alen + len] = 0;
    int64_t e = t->n++;
    t->hash[e] = h;
    t->off[e] = (int64_t)t->alen;
    t->len[e] = (int32_t)len;
    t->alen += len + 1;
    slot_put(t->slots, t->mask, h, len <= 8 ? pack8(key, len) : h, (int32_t)e, (int32_t)len);
    return e;
}

/* A set of 64-bit keys (document-text hashes for `distinct`). */
typedef struct u64set {
    uint64_t *k; /* 0 = empty; key 0 is stored as 1 */
    size_t mask, n;
} u64set;

static bool u64set_insert(u64set *s, uint64_t key)
{
    if (!key) key = 1;
    if (!s->k || (s->n + 1) * 2 > s->mask + 1) {
        size_t nm = s->k ? s->mask * 2 + 1 : 1023;
        uint64_t *nk = ns_xcalloc(nm + 1, sizeof *nk);
        for (size_t i = 0; s->k && i <= s->mask; i++)
            if (s->k[i]) {
                size_t j = (size_t)ns_hash_mix(s->k[i]) & nm;
                while (nk[j]) j = (j + 1) & nm;
                nk[j] = s->k[i];
            }
        free(s->k);
        s->k = nk;
        s->mask = nm;
    }
    size_t i = (size_t)ns_hash_mix(key) & s->mask;
    while (s->k[i]) {
        if (s->k[i] == key) return false;
        i = (i + 1) & s->mask;
    }
    s->k[i] = key;
    s->n++;
    return true;
}

/* ---- tokenising --------------------------------------------------------------- */

typedef struct span {
    uint32_t off, len;
} span;

/* Scratch reused across documents: the normalised text and the term spans
 * into it. */
typedef struct tok {
    ns_buf norm;
    uint32_t *pos; /* char: code-point starts; words: token starts/ends */
    size_t poscap;
    span *sp;
    size_t nsp, spcap;
} tok;

static void tok_init(tok *t)
{
    memset(t, 0, sizeof *t);
    ns_buf_init(&t->norm);
}
static void tok_free(tok *t)
{
    ns_buf_free(&t->norm);
    free(t->pos);
    free(t->sp);
}
static inline void push_span(tok *t, size_t off, size_t len)
{
    if (t->nsp == t->spcap) {
        t->spcap = t->spcap ? t->spcap * 2 : 256;
        t->sp = ns_xrealloc(t->sp, t->spcap * sizeof *t->sp);
    }
    t->sp[t->nsp].off = (uint32_t)off;
    t->sp[t->nsp].len = (uint32_t)len;
    t->nsp++;
}

/* Decodes one UTF-8 code point at s[0..n) (n > 0): returns its length and
 * sets *cp; an invalid byte counts as one code point of its own value. */
static inline size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len;
    uint32_t v, min;
    if ((c & 0xe0) == 0xc0) len = 2, v = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0) len = 3, v = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0) len = 4, v = c & 0x07, min = 0x10000;
    else {
        *cp = c;
        return 1;
    }
    if (len > n) {
        *cp = c;
        return 1;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            *cp = c;
            return 1;
        }
        v = (v << 6) | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) {
        *cp = c;
        return 1;
    }
    *cp = v;
    return len;
}

/* Python's str.isspace() / regex \s on str. */
static inline bool py_space(uint32_t c)
{
    if (c < 0x80) return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20);
    return c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
           c == 0x202f || c == 0x205f || c == 0x3000;
}

static inline char lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c; }
static inline bool word_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'; }

static void grow_pos(tok *t, size_t need)
{
    if (need > t->poscap) {
        t->poscap = need * 2;
        t->pos = ns_xrealloc(t->pos, t->poscap * sizeof *t->pos);
    }
}

/* Word n-grams: tokens [a-z0-9_-]+ of the lowercased text written into
 * t->norm separated by single spaces, so an n-gram is a contiguous span. */
static void tokenize_words(tok *t, const char *s, size_t n, int nmin, int nmax)
{
    ns_buf *b = &t->norm;
    b->len = 0;
    if (b->cap < n + 16) {
        b->data = ns_xrealloc(b->data, n + 16);
        b->cap = n + 16;
    }
    size_t ntok = 0;
    grow_pos(t, 2 * (n / 2 + 2));
    for (size_t i = 0; i < n;) {
        char c = lower(s[i]);
        if (!word_char(c)) {
            i++;
            continue;
        }
        if (ntok) b->data[b->len++] = ' ';
        t->pos[2 * ntok] = (uint32_t)b->len;
        while (i < n && word_char(c = lower(s[i]))) {
            b->data[b->len++] = c;
            i++;
        }
        t->pos[2 * ntok + 1] = (uint32_t)b->len;
        ntok++;
    }
    memset(b->data + b->len, 0, 9); /* NUL + padding for pack8_padded */
    t->nsp = 0;
    for (int g = nmin; g <= nmax && (size_t)g <= ntok; g++)
        for (size_t i = 0; i + (size_t)g <= ntok; i++)
            push_span(t, t->pos[2 * i], t->pos[2 * (i + (size_t)g - 1) + 1] - t->pos[2 * i]);
}

/* Character n-grams (code points) of the lowercased text with runs of two
 * or more whitespace characters replaced by one space. */
static void tokenize_chars(tok *t, const char *s, size_t n, int nmin, int nmax)
{
    ns_buf *b = &t->norm;
    b->len = 0;
    if (b->cap < n + 16) {
        b->data = ns_xrealloc(b->data, n + 16);
        b->cap = n + 16;
    }
    grow_pos(t, n + 2);
    const unsigned char *u = (const unsigned char *)s;
    size_t ncp = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t l = utf8_next(u + i, n - i, &cp);
        if (py_space(cp)) {
            /* a run of whitespace: one space when longer than one, else kept */
            size_t j = i + l, count = 1;
            while (j < n) {
                uint32_t c2;
                size_t l2 = utf8_next(u + j, n - j, &c2);
                if (!py_space(c2)) break;
                j += l2;
                count++;
            }
            t->pos[ncp++] = (uint32_t)b->len;
            if (count > 1) {
                b->data[b->len++] = ' ';
            } else {
                memcpy(b->data + b->len, s + i, l);
                b->len += l;
            }
            i = j;
            continue;
        }
        t->pos[ncp++] = (uint32_t)b->len;
        if (l == 1) b->data[b->len++] = lower(s[i]);
        else {
            memcpy(b->data + b->len, s + i, l);
            b->len += l;
        }
        i += l;
    }
    t->pos[ncp] = (uint32_t)b->len;
    memset(b->data + b->len, 0, 9); /* NUL + padding for pack8_padded */
    t->nsp = 0;
    for (int g = nmin; g <= nmax && (size_t)g <= ncp; g++)
        for (size_t i = 0; i + (size_t)g <= ncp; i++) push_span(t, t->pos[i], t->pos[i + (size_t)g] - t->pos[i]);
}

static inline bool ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* Literals: top-level parenthesised groups; other text: words between
 * whitespace (and parentheses).  Spans point into s itself. */
static void tokenize_literals(tok *t, const char *s, size_t n)
{
    t->nsp = 0;
    for (size_t i = 0; i < n;) {
        if (ascii_space(s[i]) || s[i] == ')') {
            i++;
            continue;
        }
        size_t st = i;
        if (s[i] == '(') {
            int depth = 0;
            for (; i < n; i++) {
                if (s[i] == '(') depth++;
                else if (s[i] == ')' && --depth == 0) {
                    i++;
                    break;
                }
            }
        } else {
            while (i < n && !ascii_space(s[i]) && s[i] != '(' && s[i] != ')') i++;
        }
        push_span(t, st, i - st);
    }
}

/* Tokenises text per the featurizer's kind; returns the buffer the spans
 * point into (padded for pack8_padded when the kind writes t->norm). */
static inline bool padded_kind(ns_feat_kind k) { return k == NS_FEAT_BOW || k == NS_FEAT_TFIDF || k == NS_FEAT_CHAR; }

static const char *tokenize(tok *t, const ns_feat_opts *o, const char *s, size_t n)
{
    switch (o->kind) {
    case NS_FEAT_BOW:
    case NS_FEAT_TFIDF: tokenize_words(t, s, n, o->ngram_min, o->ngram_max); return t->norm.data;
    case NS_FEAT_CHAR: tokenize_chars(t, s, n, o->ngram_min, o->ngram_max); return t->norm.data;
    case NS_FEAT_LITERALS: tokenize_literals(t, s, n); return s;
    case NS_FEAT_ONEHOT:
    default:
        t->nsp = 0;
        push_span(t, 0, n);
        return s;
    }
}

/* ---- document streams ---------------------------------------------------------- */

static ns_status strings_get(void *ctx, int64_t i, ns_buf *out, ns_error *err)
{
    (void)err;
    ns_buf_puts(out, ((const char *const *)ctx)[i]);
    return NS_OK;
}

void ns_feat_docs_strings(ns_feat_docs *d, const char *const *texts, int64_t n)
{
    d->n = n;
    d->ctx = (void *)texts;
    d->get = strings_get;
}

static ns_status concat_get(void *vctx, int64_t i, ns_buf *out, ns_error *err)
{
    ns_feat_concat_ctx *c = vctx;
    int lo = 0, hi = c->n - 1;
    while (lo < hi) { /* last part with start <= i */
        int mid = (lo + hi + 1) / 2;
        if (c->start[mid] <= i) lo = mid;
        else hi = mid - 1;
    }
    return c->parts[lo].get(c->parts[lo].ctx, i - c->start[lo], out, err);
}

void ns_feat_docs_concat(ns_feat_docs *d, ns_feat_concat_ctx *ctx, const ns_feat_docs *parts, int n)
{
    ctx->parts = parts;
    ctx->n = n;
    ctx->start = ns_xmalloc((size_t)(n + 1) * sizeof *ctx->start);
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        ctx->start[i] = total;
        total += parts[i].n;
    }
    ctx->start[n] = total;
    d->n = total;
    d->ctx = ctx;
    d->get = concat_get;
}

void ns_feat_docs_concat_free(ns_feat_concat_ctx *ctx)
{
    free(ctx->start);
    ctx->start = NULL;
}

/* A subset of another stream. */
typedef struct sub_ctx {
    const ns_feat_docs *base;
    const int64_t *idx;
} sub_ctx;

static ns_status sub_get(void *vctx, int64_t i, ns_buf *out, ns_error *err)
{
    sub_ctx *c = vctx;
    return c->base->get(c->base->ctx, c->idx[i], out, err);
}

typedef struct range_ctx {
    const ns_feat_docs *base;
    int64_t start;
} range_ctx;

static ns_status range_get(void *vctx, int64_t i, ns_buf *out, ns_error *err)
{
    range_ctx *c = vctx;
    return c->base->get(c->base->ctx, c->start + i, out, err);
}

/* ---- fitted featurizer: basics ------------------------------------------------ */

void ns_featurizer_free(ns_featurizer *f)
{
    if (f->table) {
        table_free(f->table);
        free(f->table);
    }
    free(f->df);
    free(f->idf);
    free(f->components);
    free(f->singular_values);
    free(f->explained_variance_ratio);
    memset(f, 0, sizeof *f);
}

int64_t ns_featurizer_nsparse(const ns_featurizer *f)
{
    return f->nterms + (f->opts.kind == NS_FEAT_ONEHOT && f->opts.onehot_unknown ? 1 : 0);
}

int64_t ns_featurizer_dim(const ns_featurizer *f)
{
    if (f->opts.kind == NS_FEAT_RANDOM) return f->opts.random_dim;
    if (f->svd_dim > 0) return f->svd_dim;
    return ns_featurizer_nsparse(f);
}

bool ns_featurizer_sparse(const ns_featurizer *f) { return f->opts.kind != NS_FEAT_RANDOM && f->svd_dim == 0; }

int64_t ns_featurizer_find(const ns_featurizer *f, const char *term, size_t len)
{
    if (!f->table) return -1;
    return table_find(f->table, term, len, term_hash(term, len));
}

/* Points the public term fields at the table. */
static void expose_terms(ns_featurizer *f)
{
    f->arena = f->table->arena;
    f->term_off = f->table->off;
    f->term_len = f->table->len;
    f->nterms = f->table->n;
}

static void compute_idf(ns_featurizer *f)
{
    free(f->idf);
    f->idf = NULL;
    if (!f->opts.use_idf) return;
    f->idf = ns_xmalloc((size_t)(f->nterms ? f->nterms : 1) * sizeof *f->idf);
    double n1 = (double)f->ndocs + 1.0;
    for (int64_t j = 0; j < f->nterms; j++) f->idf[j] = log(n1 / ((double)f->df[j] + 1.0)) + 1.0;
}

/* Merge sort of entry ids by their term bytes (byte order; a prefix first). */
static int term_cmp(const ns_feat_table *t, int64_t a, int64_t b)
{
    int32_t la = t->len[a], lb = t->len[b];
    int c = memcmp(t->arena + t->off[a], t->arena + t->off[b], (size_t)(la < lb ? la : lb));
    if (c) return c;
    return (la > lb) - (la < lb);
}

static void sort_terms(int64_t *ids, int64_t n, const ns_feat_table *t)
{
    int64_t *tmp = ns_xmalloc((size_t)(n ? n : 1) * sizeof *tmp);
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = term_cmp(t, ids[j], ids[i]) < 0 ? ids[j++] : ids[i++];
            while (i < mid) tmp[k++] = ids[i++];
            while (j < hi) tmp[k++] = ids[j++];
        }
        memcpy(ids, tmp, (size_t)n * sizeof *ids);
    }
    free(tmp);
}

/* ---- transform to sparse rows ------------------------------------------------------ */

/* Per-call scratch of the sparse transform. */
typedef struct row_scratch {
    tok t;
    ns_buf text;
    int32_t *cnt;   /* [ncols] counts, zero between documents */
    uint64_t *bits; /* [ncols/64] touched columns */
    int32_t *touched, *cols;
    float *vals;
    double *dv;
    size_t cap;
} row_scratch;

static void scratch_init(row_scratch *s, int64_t ncols)
{
    memset(s, 0, sizeof *s);
    tok_init(&s->t);
    ns_buf_init(&s->text);
    s->cnt = ns_xcalloc((size_t)ncols + 1, sizeof *s->cnt);
    s->bits = ns_xcalloc((size_t)ncols / 64 + 1, sizeof *s->bits);
}

static void scratch_free(row_scratch *s)
{
    tok_free(&s->t);
    ns_buf_free(&s->text);
    free(s->cnt);
    free(s->bits);
    free(s->touched);
    free(s->cols);
    free(s->vals);
    free(s->dv);
}

static void scratch_reserve(row_scratch *s, size_t n)
{
    if (n > s->cap) {
        s->cap = n * 2;
        s->touched = ns_xrealloc(s->touched, s->cap * sizeof *s->touched);
        s->cols = ns_xrealloc(s->cols, s->cap * sizeof *s->cols);
        s->vals = ns_xrealloc(s->vals, s->cap * sizeof *s->vals);
        s->dv = ns_xrealloc(s->dv, s->cap * sizeof *s->dv);
    }
}

/* Tokenises s->text and appends its weighted row to out. */
static void doc_row(const ns_featurizer *f, row_scratch *s, ns_csr *out)
{
    const ns_feat_opts *o = &f->opts;
    const char *base = tokenize(&s->t, o, s->text.data ? s->text.data : "", s->text.len);
    scratch_reserve(s, s->t.nsp + 1);
    int64_t unknown = o->kind == NS_FEAT_ONEHOT && o->onehot_unknown ? f->nterms : -1;
    bool padded = padded_kind(o->kind);
    size_t nt = 0;
    int32_t lo = INT32_MAX, hi = -1;
    for (size_t k = 0; k < s->t.nsp; k++) {
        const char *key = base + s->t.sp[k].off;
        size_t len = s->t.sp[k].len;
        uint64_t h;
        int64_t col = padded ? table_find_padded(f->table, key, len, &h) : table_find(f->table, key, len, term_hash(key, len));
        if (col < 0) col = unknown;
        if (col < 0) continue;
        if (s->cnt[col]++ == 0) {
            s->touched[nt++] = (int32_t)col;
            s->bits[col >> 6] |= 1ULL << (col & 63);
            if (col < lo) lo = (int32_t)col;
            if (col > hi) hi = (int32_t)col;
        }
    }
    /* columns ascending: insertion sort when few, else a scan of the bitmap */
    if (nt <= 16) {
        for (size_t i = 0; i < nt; i++) {
            int32_t c = s->touched[i];
            size_t j = i;
            while (j > 0 && s->cols[j - 1] > c) {
                s->cols[j] = s->cols[j - 1];
                j--;
            }
            s->cols[j] = c;
            s->bits[c >> 6] = 0;
        }
    } else {
        size_t m = 0;
        for (int32_t w = lo >> 6; w <= hi >> 6; w++) {
            uint64_t b = s->bits[w];
            while (b) {
                s->cols[m++] = w * 64 + __builtin_ctzll(b);
                b &= b - 1;
            }
            s->bits[w] = 0;
        }
    }
    double sq = 0;
    for (size_t i = 0; i < nt; i++) {
        int32_t c = s->cols[i];
        double v = o->binary ? 1.0 : (double)s->cnt[c];
        s->cnt[c] = 0;
        if (o->sublinear_tf) v = 1.0 + log(v);
        if (f->idf && c < f->nterms) v *= f->idf[c];
        s->dv[i] = v;
        sq += v * v;
    }
    double scale = o->l2_norm && sq > 0 ? 1.0 / sqrt(sq) : 1.0;
    for (size_t i = 0; i < nt; i++) s->vals[i] = (float)(s->dv[i] * scale);
    ns_csr_add_row(out, s->cols, s->vals, (int)nt);
}

ns_status ns_featurizer_transform_sparse(const ns_featurizer *f, const ns_feat_docs *docs, ns_csr *out, ns_error *err)
{
    if (f->opts.kind == NS_FEAT_RANDOM)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "featurizer: random vectors have no sparse form");
    if (out->ncols != ns_featurizer_nsparse(f))
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "featurizer: output matrix has %lld columns, expected %lld",
                            (long long)out->ncols, (long long)ns_featurizer_nsparse(f));
    row_scratch s;
    scratch_init(&s, out->ncols);
    ns_status st = NS_OK;
    for (int64_t i = 0; i < docs->n && !st; i++) {
        s.text.len = 0;
        if (s.text.data) s.text.data[0] = 0;
        if ((st = docs->get(docs->ctx, i, &s.text, err))) break;
        doc_row(f, &s, out);
    }
    scratch_free(&s);
    return st;
}

/* ---- random vectors --------------------------------------------------------------- */

static void random_vec(const char *s, size_t n, uint64_t seed, int dim, float *out)
{
    ns_rng r;
    ns_rng_seed(&r, ns_hash_bytes(s, n, seed));
    /* Marsaglia's polar method: pairs of N(0, 1) values, one log each */
    for (int j = 0; j < dim; j += 2) {
        double u, v, q;
        do {
            u = (double)(ns_rng_next(&r) >> 11) * 0x1p-52 - 1.0;
            v = (double)(ns_rng_next(&r) >> 11) * 0x1p-52 - 1.0;
            q = u * u + v * v;
        } while (q >= 1.0 || q == 0.0);
        double m = sqrt(-2.0 * log(q) / q);
        out[j] = (float)(u * m);
        if (j + 1 < dim) out[j + 1] = (float)(v * m);
    }
}

/* ---- projection -------------------------------------------------------------------- */

ns_status ns_featurizer_project(const ns_featurizer *f, const ns_csr *rows, float *out, ns_error *err)
{
    if (f->svd_dim <= 0) return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "featurizer: no SVD to project with");
    if (rows->ncols != ns_featurizer_nsparse(f))
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "featurizer: rows have %lld columns, expected %lld",
                            (long long)rows->ncols, (long long)ns_featurizer_nsparse(f));
    ns_csr_matmul_dense(rows, f->components, f->svd_dim, out);
    return NS_OK;
}

ns_status ns_featurizer_transform_dense(const ns_featurizer *f, const ns_feat_docs *docs, float *out, ns_error *err)
{
    int64_t dim = ns_featurizer_dim(f);
    if (f->opts.kind == NS_FEAT_RANDOM) {
        ns_buf text;
        ns_buf_init(&text);
        ns_status st = NS_OK;
        for (int64_t i = 0; i < docs->n && !st; i++) {
            text.len = 0;
            if (text.data) text.data[0] = 0;
            if ((st = docs->get(docs->ctx, i, &text, err))) break;
            random_vec(text.data ? text.data : "", text.len, f->opts.seed, (int)dim, out + i * dim);
        }
        ns_buf_free(&text);
        return st;
    }
    const int64_t CH = 4096;
    ns_status st = NS_OK;
    for (int64_t r0 = 0; r0 < docs->n && !st; r0 += CH) {
        range_ctx rc = {docs, r0};
        ns_feat_docs sub = {docs->n - r0 < CH ? docs->n - r0 : CH, &rc, range_get};
        ns_csr X;
        ns_csr_init(&X, ns_featurizer_nsparse(f));
        st = ns_featurizer_transform_sparse(f, &sub, &X, err);
        if (!st) {
            if (f->svd_dim > 0) {
                st = ns_featurizer_project(f, &X, out + r0 * dim, err);
            } else {
                for (int64_t i = 0; i < X.nrows; i++) ns_csr_row_dense(&X, i, out + (r0 + i) * dim);
            }
        }
        ns_csr_free(&X);
    }
    return st;
}

/* ---- fitting ------------------------------------------------------------------------- */

static ns_status fit_svd(ns_featurizer *f, const ns_feat_docs *docs, const uint8_t *counted, ns_error *err)
{
    const ns_feat_opts *o = &f->opts;
    int64_t n = 0;
    for (int64_t i = 0; i < docs->n; i++) n += counted[i];
    int64_t *idx = ns_xmalloc((size_t)(n ? n : 1) * sizeof *idx);
    n = 0;
    for (int64_t i = 0; i < docs->n; i++)
        if (counted[i]) idx[n++] = i;
    if (o->svd_max_rows > 0 && n > o->svd_max_rows) {
        /* a uniform sample (partial Fisher–Yates), then back in order */
        ns_rng r;
        ns_rng_seed(&r, o->seed ^ 0x726f7773ULL /* "rows" */);
        for (int64_t i = 0; i < o->svd_max_rows; i++) {
            int64_t j = i + (int64_t)ns_rng_below(&r, (uint64_t)(n - i));
            int64_t t = idx[i];
            idx[i] = idx[j];
            idx[j] = t;
        }
        n = o->svd_max_rows;
        uint8_t *pick = ns_xcalloc((size_t)docs->n, 1);
        for (int64_t i = 0; i < n; i++) pick[idx[i]] = 1;
        int64_t m = 0;
        for (int64_t i = 0; i < docs->n; i++)
            if (pick[i]) idx[m++] = i;
        free(pick);
    }
    sub_ctx sc = {docs, idx};
    ns_feat_docs sub = {n, &sc, sub_get};
    ns_csr X;
    int64_t V = ns_featurizer_nsparse(f);
    ns_csr_init(&X, V);
    ns_status st = ns_featurizer_transform_sparse(f, &sub, &X, err);
    free(idx);
    if (st) {
        ns_csr_free(&X);
        return st;
    }
    int k = o->svd_dim;
    f->components = ns_xmalloc((size_t)(V * k) * sizeof *f->components);
    f->singular_values = ns_xmalloc((size_t)k * sizeof *f->singular_values);
    f->explained_variance_ratio = ns_xmalloc((size_t)k * sizeof *f->explained_variance_ratio);
    ns_truncated_svd(&X, k, o->svd_oversample, o->svd_iters, o->seed, f->components, f->singular_values);
    /* explained variance as TruncatedSVD: var of X·c over the rows / total
     * variance of X's columns (both uncentred products, centred variances) */
    double *mean = ns_xcalloc((size_t)V, sizeof *mean), sq = 0;
    for (int64_t p = 0; p < X.nnz; p++) {
        mean[X.indices[p]] += X.values[p];
        sq += (double)X.values[p] * X.values[p];
    }
    double nr = X.nrows ? (double)X.nrows : 1.0, msq = 0;
    for (int64_t j = 0; j < V; j++) {
        mean[j] /= nr;
        msq += mean[j] * mean[j];
    }
    double total = sq / nr - msq;
    for (int c = 0; c < k; c++) {
        double mc = 0;
        for (int64_t j = 0; j < V; j++) mc += mean[j] * f->components[j * k + c];
        double s = f->singular_values[c];
        double var = s * s / nr - mc * mc;
        f->explained_variance_ratio[c] = total > 0 ? (float)(var / total) : 0.0f;
    }
    free(mean);
    ns_csr_free(&X);
    f->svd_dim = k;
    return NS_OK;
}

ns_status ns_featurizer_fit(ns_featurizer *f, const ns_feat_opts *o, const ns_feat_docs *docs, ns_error *err)
{
    memset(f, 0, sizeof *f);
    ns_status st = check_opts(o, err);
    if (st) return st;
    f->opts = *o;
    if (o->kind == NS_FEAT_RANDOM) {
        f->ndocs = docs ? docs->n : 0;
        return NS_OK;
    }
    ns_feat_table bt;
    table_init(&bt);
    int32_t *df = NULL;
    int64_t *last = NULL, dfcap = 0;
    u64set seen = {0};
    uint8_t *counted = ns_xcalloc((size_t)docs->n + 1, 1);
    tok t;
    tok_init(&t);
    ns_buf text;
    ns_buf_init(&text);
    bool padded = padded_kind(o->kind);
    for (int64_t i = 0; i < docs->n; i++) {
        text.len = 0;
        if (text.data) text.data[0] = 0;
        if ((st = docs->get(docs->ctx, i, &text, err))) break;
        const char *s = text.data ? text.data : "";
        if (o->distinct && !u64set_insert(&seen, ns_hash_bytes(s, text.len, 0x646f6373ULL))) continue;
        counted[i] = 1;
        f->ndocs++;
        const char *base = tokenize(&t, o, s, text.len);
        for (size_t k = 0; k < t.nsp; k++) {
            const char *key = base + t.sp[k].off;
            size_t len = t.sp[k].len;
            uint64_t h;
            int64_t id = padded ? table_find_padded(&bt, key, len, &h) : table_find(&bt, key, len, h = term_hash(key, len));
            if (id < 0) {
                id = table_add(&bt, key, len, h);
                if (bt.n > dfcap) {
                    dfcap = bt.cap;
                    df = ns_xrealloc(df, (size_t)dfcap * sizeof *df);
                    last = ns_xrealloc(last, (size_t)dfcap * sizeof *last);
                }
                df[id] = 0;
                last[id] = -1;
            }
            if (last[id] != i) {
                last[id] = i;
                df[id]++;
            }
        }
    }
    tok_free(&t);
    ns_buf_free(&text);
    free(seen.k);
    free(last);
    if (!st) {
        int64_t nkeep = 0;
        int64_t *ids = ns_xmalloc((size_t)(bt.n ? bt.n : 1) * sizeof *ids);
        for (int64_t e = 0; e < bt.n; e++)
            if (df[e] >= o->min_df) ids[nkeep++] = e;
        if (!nkeep) {
            st = ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                              "featurizer: empty vocabulary (%lld training documents, no term in at least %d of them)",
                              (long long)f->ndocs, o->min_df);
        } else {
            sort_terms(ids, nkeep, &bt);
            f->table = ns_xmalloc(sizeof *f->table);
            table_init(f->table);
            f->df = ns_xmalloc((size_t)nkeep * sizeof *f->df);
            for (int64_t c = 0; c < nkeep; c++) {
                int64_t e = ids[c];
                table_add(f->table, bt.arena + bt.off[e], (size_t)bt.len[e], bt.hash[e]);
                f->df[c] = df[e];
            }
            expose_terms(f);
            compute_idf(f);
        }
        free(ids);
    }
    table_free(&bt);
    free(df);
    if (!st && o->svd_dim > 0 && ns_featurizer_nsparse(f) > o->svd_dim) st = fit_svd(f, docs, counted, err);
    free(counted);
    if (st) ns_featurizer_free(f);
    return st;
}

/* ---- files ------------------------------------------------------------------------------ */

static bool valid_utf8(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t l = utf8_next(u + i, n - i, &cp);
        if (l == 1 && u[i] >= 0x80) return false;
        i += l;
    }
    return true;
}

static uint32_t terms_crc(const ns_featurizer *f)
{
    uint32_t crc = 0;
    static const char nul = 0;
    for (int64_t j = 0; j < f->nterms; j++) {
        crc = ns_crc32(crc, f->arena + f->term_off[j], (size_t)f->term_len[j]);
        crc = ns_crc32(crc, &nul, 1);
    }
    for (int64_t j = 0; j < f->nterms; j++) {
        int64_t v = f->df[j];
        unsigned char b[8];
        for (int i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)v >> (8 * i));
        crc = ns_crc32(crc, b, 8);
    }
    return crc;
}

/* "DIR/NAME.json" -> "NAME.svd.npy" (basename) and its full path. */
static void svd_paths(const char *path, ns_buf *base, ns_buf *full)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    size_t n = strlen(name);
    if (n > 5 && !strcmp(name + n - 5, ".json")) n -= 5;
    ns_buf_init(base);
    ns_buf_put(base, name, n);
    ns_buf_puts(base, ".svd.npy");
    ns_buf_init(full);
    if (slash) ns_buf_put(full, path, (size_t)(slash - path + 1));
    ns_buf_puts(full, base->data);
}

ns_status ns_featurizer_save(const ns_featurizer *f, const char *path, ns_error *err)
{
    for (int64_t j = 0; j < f->nterms; j++)
        if (!valid_utf8(f->arena + f->term_off[j], (size_t)f->term_len[j]))
            return ns_error_set(err, NS_ERR_UNSUPPORTED, path, 0, 0,
                                "term %lld is not valid UTF-8 (featurized texts must be UTF-8 to be saved)", (long long)j);
    const ns_feat_opts *o = &f->opts;
    ns_buf b;
    ns_buf_init(&b);
    ns_status st = NS_OK;
    int64_t V = ns_featurizer_nsparse(f);
    uint32_t svd_crc = 0;
    size_t svd_bytes = 0;
    ns_buf base, full;
    svd_paths(path, &base, &full);
    if (f->svd_dim > 0) {
        int k = f->svd_dim;
        ns_array a;
        int64_t shape[2] = {k, V};
        ns_array_init(&a, NS_F32, 2, shape);
        float *d = a.data;
        for (int c = 0; c < k; c++)
            for (int64_t t = 0; t < V; t++) d[c * V + t] = f->components[t * k + c];
        ns_buf img;
        ns_buf_init(&img);
        ns_npy_encode(&a, &img);
        svd_bytes = img.len;
        svd_crc = ns_crc32(0, img.data, img.len);
        st = ns_write_file_atomic(full.data, img.data, img.len, err);
        ns_buf_free(&img);
        ns_array_free(&a);
    }
    if (!st) {
        ns_buf_printf(&b, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"kind\": \"%s\",\n  \"source\": \"%s\",\n",
                      NS_FEAT_FORMAT, NS_FEAT_VERSION, ns_feat_kind_name(o->kind), ns_feat_source_name(o->source));
        ns_buf_printf(&b,
                      "  \"options\": {\"ngram_min\": %d, \"ngram_max\": %d, \"min_df\": %d, \"binary\": %s, "
                      "\"sublinear_tf\": %s, \"use_idf\": %s, \"l2_norm\": %s, \"svd_dim\": %d, \"svd_iters\": %d, "
                      "\"svd_oversample\": %d, \"svd_max_rows\": %lld, \"random_dim\": %d, \"onehot_unknown\": %s, "
                      "\"distinct\": %s, \"seed\": \"%llu\"},\n",
                      o->ngram_min, o->ngram_max, o->min_df, o->binary ? "true" : "false", o->sublinear_tf ? "true" : "false",
                      o->use_idf ? "true" : "false", o->l2_norm ? "true" : "false", o->svd_dim, o->svd_iters,
                      o->svd_oversample, (long long)o->svd_max_rows, o->random_dim, o->onehot_unknown ? "true" : "false",
                      o->distinct ? "true" : "false", (unsigned long long)o->seed);
        ns_buf_printf(&b, "  \"ndocs\": %lld,\n  \"nterms\": %lld,\n  \"dim\": %lld,\n  \"terms_crc32\": %u,\n",
                      (long long)f->ndocs, (long long)f->nterms, (long long)ns_featurizer_dim(f),
                      f->nterms ? terms_crc(f) : 0u);
        if (f->svd_dim > 0) {
            ns_buf_puts(&b, "  \"svd\": {\"file\": ");
            ns_json_put_str(&b, base.data);
            ns_buf_printf(&b, ", \"bytes\": %zu, \"crc32\": %u, \"dim\": %d,\n    \"singular_values\": [", svd_bytes, svd_crc,
                          f->svd_dim);
            for (int c = 0; c < f->svd_dim; c++) {
                if (c) ns_buf_puts(&b, ", ");
                ns_json_put_num(&b, f->singular_values[c]);
            }
            ns_buf_puts(&b, "],\n    \"explained_variance_ratio\": [");
            for (int c = 0; c < f->svd_dim; c++) {
                if (c) ns_buf_puts(&b, ", ");
                ns_json_put_num(&b, f->explained_variance_ratio[c]);
            }
            ns_buf_puts(&b, "]},\n");
        }
        ns_buf_puts(&b, "  \"df\": [");
        for (int64_t j = 0; j < f->nterms; j++) ns_buf_printf(&b, j ? ", %d" : "%d", (int)f->df[j]);
        ns_buf_puts(&b, "],\n  \"terms\": [");
        for (int64_t j = 0; j < f->nterms; j++) {
            ns_buf_puts(&b, j ? ",\n    " : "\n    ");
            ns_json_put_strn(&b, f->arena + f->term_off[j], (size_t)f->term_len[j]);
        }
        ns_buf_puts(&b, "\n  ]\n}\n");
        st = ns_write_file_atomic(path, b.data, b.len, err);
    }
    ns_buf_free(&b);
    ns_buf_free(&base);
    ns_buf_free(&full);
    return st;
}

static bool get_bool(const ns_json *o, const char *key, bool *out)
{
    const ns_json *v = ns_json_get(o, key);
    if (!v || v->kind != NS_JSON_BOOL) return false;
    *out = v->boolean;
    return true;
}

static bool get_int(const ns_json *o, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    return ns_json_get_int(o, key, out) && *out >= lo && *out <= hi;
}

ns_status ns_featurizer_load(ns_featurizer *f, const char *path, ns_error *err)
{
    memset(f, 0, sizeof *f);
    ns_json j;
    ns_error perr;
    ns_status st = ns_json_read(&j, path, &perr);
    if (st == NS_ERR_IO) {
        if (err) *err = perr;
        return st;
    }
    if (st) {
        char msg[600];
        ns_error_format(&perr, msg, sizeof msg);
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "not a complete featurizer file (truncated or malformed): %s", msg);
    }
    const char *s;
    int64_t v;
    ns_feat_opts *o = &f->opts;
#define BAD(...)                                                          \
    do {                                                                  \
        st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, __VA_ARGS__);     \
        goto done;                                                        \
    } while (0)
    if (j.kind != NS_JSON_OBJECT || !ns_json_get_str(&j, "format", &s) || strcmp(s, NS_FEAT_FORMAT))
        BAD("not a nextstate featurizer (format is not '%s')", NS_FEAT_FORMAT);
    if (!ns_json_get_int(&j, "version", &v) || v != NS_FEAT_VERSION) {
        st = ns_error_set(err, NS_ERR_UNSUPPORTED, path, 0, 0, "unsupported featurizer version (this build reads %d)",
                          NS_FEAT_VERSION);
        goto done;
    }
    int kind, src;
    if (!ns_json_get_str(&j, "kind", &s) || (kind = ns_feat_kind_parse(s)) < 0) BAD("missing or unknown \"kind\"");
    if (!ns_json_get_str(&j, "source", &s) || (src = ns_feat_source_parse(s)) < 0) BAD("missing or unknown \"source\"");
    const ns_json *op = ns_json_get(&j, "options");
    if (!op || op->kind != NS_JSON_OBJECT) BAD("missing \"options\"");
    o->kind = (ns_feat_kind)kind;
    o->source = (ns_feat_source)src;
    int64_t x[8];
    bool ok = get_int(op, "ngram_min", 0, 64, &x[0]) && get_int(op, "ngram_max", 0, 64, &x[1]) &&
              get_int(op, "min_df", 1, INT32_MAX, &x[2]) && get_int(op, "svd_dim", 0, INT32_MAX, &x[3]) &&
              get_int(op, "svd_iters", 0, INT32_MAX, &x[4]) && get_int(op, "svd_oversample", 0, INT32_MAX, &x[5]) &&
              get_int(op, "svd_max_rows", 0, INT64_MAX, &x[6]) && get_int(op, "random_dim", 1, 1 << 20, &x[7]) &&
              get_bool(op, "binary", &o->binary) && get_bool(op, "sublinear_tf", &o->sublinear_tf) &&
              get_bool(op, "use_idf", &o->use_idf) && get_bool(op, "l2_norm", &o->l2_norm) &&
              get_bool(op, "onehot_unknown", &o->onehot_unknown) && get_bool(op, "distinct", &o->distinct) &&
              ns_json_get_str(op, "seed", &s);
    if (!ok) BAD("\"options\": a member is missing or out of range");
    char *end;
    o->seed = strtoull(s, &end, 10);
    if (!*s || *end) BAD("\"options\": seed is not a decimal number");
    o->ngram_min = (int)x[0];
    o->ngram_max = (int)x[1];
    o->min_df = (int)x[2];
    o->svd_dim = (int)x[3];
    o->svd_iters = (int)x[4];
    o->svd_oversample = (int)x[5];
    o->svd_max_rows = x[6];
    o->random_dim = (int)x[7];
    ns_error cerr;
    if (check_opts(o, &cerr)) BAD("\"options\": %s", cerr.msg);
    int64_t nterms, crc;
    if (!get_int(&j, "ndocs", 0, INT64_MAX, &f->ndocs) || !get_int(&j, "nterms", 0, INT32_MAX, &nterms) ||
        !get_int(&j, "terms_crc32", 0, UINT32_MAX, &crc))
        BAD("missing or bad \"ndocs\", \"nterms\" or \"terms_crc32\"");
    const ns_json *terms = ns_json_get(&j, "terms"), *df = ns_json_get(&j, "df");
    if (!terms || terms->kind != NS_JSON_ARRAY || terms->n != nterms) BAD("\"terms\" is not an array of %lld strings", (long long)nterms);
    if (!df || df->kind != NS_JSON_ARRAY || df->n != nterms) BAD("\"df\" is not an array of %lld integers", (long long)nterms);
    if (o->kind != NS_FEAT_RANDOM && nterms == 0) BAD("empty vocabulary");
    f->table = ns_xmalloc(sizeof *f->table);
    table_init(f->table);
    f->df = ns_xmalloc((size_t)(nterms ? nterms : 1) * sizeof *f->df);
    for (int64_t t = 0; t < nterms; t++) {
        const ns_json *e = &terms->items[t], *d = &df->items[t];
        if (e->kind != NS_JSON_STRING) BAD("\"terms\"[%lld] is not a string", (long long)t);
        if (d->kind != NS_JSON_NUMBER || !d->is_integer || d->integer < 0 || d->integer > INT32_MAX)
            BAD("\"df\"[%lld] is not a count", (long long)t);
        uint64_t h = term_hash(e->string, e->string_len);
        if (table_find(f->table, e->string, e->string_len, h) >= 0) BAD("\"terms\"[%lld] repeats an earlier term", (long long)t);
        table_add(f->table, e->string, e->string_len, h);
        f->df[t] = (int32_t)d->integer;
    }
    expose_terms(f);
    if (f->nterms && terms_crc(f) != (uint32_t)crc)
        BAD("checksum mismatch: the terms or df were changed (terms_crc32 %u, computed %u)", (unsigned)crc, terms_crc(f));
    compute_idf(f);
    const ns_json *svd = ns_json_get(&j, "svd");
    if (svd) {
        int64_t k, bytes, scrc;
        const char *file;
        if (svd->kind != NS_JSON_OBJECT || !ns_json_get_str(svd, "file", &file) || strchr(file, '/') ||
            !get_int(svd, "dim", 1, INT32_MAX, &k) || !get_int(svd, "bytes", 0, INT64_MAX, &bytes) ||
            !get_int(svd, "crc32", 0, UINT32_MAX, &scrc))
            BAD("\"svd\": missing or bad file, dim, bytes or crc32");
        const ns_json *sv = ns_json_get(svd, "singular_values"), *evr = ns_json_get(svd, "explained_variance_ratio");
        if (!sv || sv->kind != NS_JSON_ARRAY || sv->n != k || !evr || evr->kind != NS_JSON_ARRAY || evr->n != k)
            BAD("\"svd\": singular_values / explained_variance_ratio are not arrays of %lld numbers", (long long)k);
        int64_t V = ns_featurizer_nsparse(f);
        if (k >= V) BAD("\"svd\": dim %lld is not below the %lld columns", (long long)k, (long long)V);
        ns_buf full;
        ns_buf_init(&full);
        const char *slash = strrchr(path, '/');
        if (slash) ns_buf_put(&full, path, (size_t)(slash - path + 1));
        ns_buf_puts(&full, file);
        ns_array a;
        uint32_t got;
        st = ns_npy_read(full.data, &a, &got, err);
        if (!st) {
            if (got != (uint32_t)scrc)
                st = ns_error_set(err, NS_ERR_INPUT, full.data, 0, 0,
                                  "checksum mismatch: the file is corrupted (crc32 %u, %s says %u)", got, path, (unsigned)scrc);
            else if (a.dtype != NS_F32 || a.ndim != 2 || a.shape[0] != k || a.shape[1] != V)
                st = ns_error_set(err, NS_ERR_INPUT, full.data, 0, 0, "expected float32 [%lld, %lld]", (long long)k, (long long)V);
            if (!st) {
                f->svd_dim = (int)k;
                f->components = ns_xmalloc((size_t)(k * V) * sizeof *f->components);
                const float *d = a.data;
                for (int64_t c = 0; c < k; c++)
                    for (int64_t t = 0; t < V; t++) f->components[t * k + c] = d[c * V + t];
                f->singular_values = ns_xmalloc((size_t)k * sizeof *f->singular_values);
                f->explained_variance_ratio = ns_xmalloc((size_t)k * sizeof *f->explained_variance_ratio);
                for (int64_t c = 0; c < k; c++) {
                    if (sv->items[c].kind != NS_JSON_NUMBER || evr->items[c].kind != NS_JSON_NUMBER) {
                        st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "\"svd\": a value is not a number");
                        break;
                    }
                    f->singular_values[c] = (float)sv->items[c].number;
                    f->explained_variance_ratio[c] = (float)evr->items[c].number;
                }
            }
            ns_array_free(&a);
        }
        ns_buf_free(&full);
        if (st) goto done;
    }
#undef BAD
done:
    ns_json_free(&j);
    if (st) ns_featurizer_free(f);
    return st;
}

/* ---- datasets ------------------------------------------------------------------------------ */

ns_status ns_feat_renders_new(ns_render_prep ***out, const ns_dataset *ds, const char *domains_dir, ns_error *err)
{
    *out = NULL;
    ns_render *r;
    ns_status st = ns_render_find(&r, domains_dir, ds->domain_name, err);
    if (st) return st;
    ns_render_prep **preps = ns_xcalloc((size_t)ds->nproblems + 1, sizeof *preps);
    for (int i = 0; i < ds->nproblems && !st; i++) {
        const ns_ds_problem *p = &ds->problems[i];
        ns_render_problem rp = {p->nobjects, (const char *const *)p->objects, (const char *const *)p->object_types,
                                p->natoms,   (const char *const *)p->atoms,   p->nstatics,
                                (const char *const *)p->statics, p->ngoal, (const char *const *)p->goal};
        st = ns_render_prep_new(&preps[i], r, &rp, err);
    }
    ns_render_free(r);
    if (st) {
        ns_feat_renders_free(preps, ds->nproblems);
        return st;
    }
    *out = preps;
    return NS_OK;
}

void ns_feat_renders_free(ns_render_prep **preps, int n)
{
    for (int i = 0; preps && i < n; i++)
        if (preps[i]) ns_render_prep_free(preps[i]);
    free(preps);
}

void ns_feat_state_text(const ns_dataset *ds, ns_render_prep *const *preps, ns_feat_source src, int64_t state, ns_buf *out)
{
    int32_t pi = ((const int32_t *)ds->state_problem.data)[state];
    const uint64_t *w = ns_dataset_state(ds, state);
    switch (src) {
    case NS_FEAT_SRC_PROMPT: ns_render_prep_prompt_bits(preps[pi], w, out); break;
    case NS_FEAT_SRC_CONTEXT: ns_render_prep_context_only(preps[pi], out); break;
    default: {
        const ns_ds_problem *p = &ds->problems[pi];
        bool first = true;
        for (int wi = 0; wi * 64 < p->natoms; wi++)
            for (uint64_t b = w[wi]; b; b &= b - 1) {
                int a = wi * 64 + __builtin_ctzll(b);
                if (a >= p->natoms) break;
                if (!first) ns_buf_putc(out, ' ');
                ns_buf_puts(out, p->atoms[a]);
                first = false;
            }
    }
    }
}

static ns_status ds_get(void *vctx, int64_t i, ns_buf *out, ns_error *err)
{
    ns_feat_ds_ctx *c = vctx;
    if (c->src == NS_FEAT_SRC_ACTION) {
        int64_t p = c->ids[2 * i], op = c->ids[2 * i + 1];
        if (p < 0 || p >= c->ds->nproblems || op < 0 || op >= c->ds->problems[p].nops)
            return ns_error_set(err, NS_ERR_INTERNAL, NULL, 0, 0, "featurize: action (%lld, %lld) outside the dataset",
                                (long long)p, (long long)op);
        ns_buf_puts(out, c->ds->problems[p].ops[op]);
        return NS_OK;
    }
    int64_t s = c->ids ? c->ids[i] : i;
    if (s < 0 || s >= ns_dataset_nstates(c->ds))
        return ns_error_set(err, NS_ERR_INTERNAL, NULL, 0, 0, "featurize: state %lld outside the dataset", (long long)s);
    if (c->src != NS_FEAT_SRC_LITERALS && !c->preps)
        return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "featurize: prompts need prepared renderers");
    ns_feat_state_text(c->ds, c->preps, c->src, s, out);
    return NS_OK;
}

void ns_feat_docs_dataset(ns_feat_docs *d, ns_feat_ds_ctx *ctx, const ns_dataset *ds, ns_render_prep *const *preps,
                          ns_feat_source src, const int64_t *ids, int64_t n)
{
    ctx->ds = ds;
    ctx->preps = preps;
    ctx->src = src;
    ctx->ids = ids;
    d->n = n;
    d->ctx = ctx;
    d->get = ds_get;
}

void ns_feat_train_states(const int64_t *refs, int64_t nrefs, int d, const ns_dataset *ds, int64_t **ids, int64_t *n)
{
    ns_train_touch t;
    ns_train_touch_init(&t, refs, nrefs, d, ds);
    *ids = t.states;
    *n = t.nstates;
    t.states = NULL;
    ns_train_touch_free(&t);
}

void ns_feat_train_actions(const int64_t *refs, int64_t nrefs, int d, const ns_dataset *ds, int64_t **pairs, int64_t *n)
{
    ns_train_touch t;
    ns_train_touch_init(&t, refs, nrefs, d, ds);
    *pairs = t.actions;
    *n = t.nactions;
    t.actions = NULL;
    ns_train_touch_free(&t);
}

/* ---- `nextstate featurize`: a dataset's features into a folder ------------ */

#define FEATURES_FORMAT "nextstate-features"

int64_t *ns_feat_all_actions(const ns_dataset *ds, int64_t *n)
{
    int64_t *off = ns_action_offsets(ds), total = off[ds->nproblems], k = 0;
    int64_t *pairs = ns_xmalloc((size_t)(2 * total + 2) * sizeof *pairs);
    for (int p = 0; p < ds->nproblems; p++)
        for (int o = 0; o < ds->problems[p].nops; o++, k++) {
            pairs[2 * k] = p;
            pairs[2 * k + 1] = o;
        }
    free(off);
    *n = total;
    return pairs;
}

/* One dataset with its renderers (when its texts need them). */
typedef struct fz_data {
    ns_dataset ds;
    bool loaded;
    ns_render_prep **preps;
} fz_data;

static void fz_data_free(fz_data *d)
{
    if (d->preps) ns_feat_renders_free(d->preps, d->ds.nproblems);
    if (d->loaded) ns_dataset_free(&d->ds);
    memset(d, 0, sizeof *d);
}

static ns_status fz_data_load(fz_data *d, const char *dir, const char *domains, bool need_render, ns_error *err)
{
    memset(d, 0, sizeof *d);
    ns_status st = ns_dataset_load(&d->ds, dir, err);
    if (st != NS_OK) return st;
    d->loaded = true;
    return need_render ? ns_feat_renders_new(&d->preps, &d->ds, domains, err) : NS_OK;
}

/* Fits on the training transitions of the split o->fit_on (every dataset it
 * names; target is the one being featurized), through the encoder
 * interface. */
static ns_status fit_on_split(const ns_featurize_opts *o, const ns_dataset *target, ns_featurizer *f, ns_error *err)
{
    ns_split sp;
    ns_status st = ns_split_load(&sp, o->fit_on, err);
    if (st != NS_OK) return st;
    int n = sp.ndatasets;
    fz_data *data = ns_xcalloc((size_t)n, sizeof *data);
    const ns_dataset **dsp = ns_xcalloc((size_t)n, sizeof *dsp);
    for (int d = 0; d < n && !st; d++) {
        const char *dir = sp.sources[d].dir;
        if (ns_same_path(dir, o->dataset)) dsp[d] = target;
        else if (!(st = fz_data_load(&data[d], dir, o->domains, false, err))) dsp[d] = &data[d].ds;
    }
    if (!st) st = ns_split_check(&sp, dsp, n, err);
    ns_enc e;
    ns_enc_init_text(&e, &o->feat);
    e.domains = o->domains;
    if (!st && (st = ns_enc_fit(&e, dsp, n, &sp, err)) == NS_OK) st = ns_enc_take_featurizer(&e, f, err);
    ns_enc_free(&e);
    for (int d = 0; d < n; d++) fz_data_free(&data[d]);
    free(data);
    free(dsp);
    ns_split_free(&sp);
    return st;
}

/* The feature matrix: OUT/WHAT.npy or OUT/WHAT_*.npy; *t_write: when the
 * transform ended and writing began. */
static ns_status write_matrix(const ns_featurize_opts *o, const ns_featurizer *f, const ns_feat_docs *docs,
                              ns_featurize_report *r, double *t_write, ns_error *err)
{
    double t = ns_now();
    ns_status st;
    if (r->sparse) {
        ns_csr m;
        ns_csr_init(&m, r->dim);
        st = ns_featurizer_transform_sparse(f, docs, &m, err);
        r->transform_seconds = ns_now() - t;
        *t_write = ns_now();
        r->nnz = m.nnz;
        if (!st) st = ns_csr_save(&m, o->out, r->what, err);
        ns_csr_free(&m);
        return st;
    }
    ns_array x;
    int64_t shape[2] = {r->rows, r->dim};
    ns_array_init(&x, NS_F32, 2, shape);
    st = ns_featurizer_transform_dense(f, docs, x.data, err);
    r->transform_seconds = ns_now() - t;
    *t_write = ns_now();
    r->nnz = r->rows * r->dim;
    ns_buf name;
    ns_buf_init(&name);
    ns_buf_printf(&name, "%s/%s.npy", o->out, r->what);
    if (!st) st = ns_npy_write(name.data, &x, NULL, err);
    ns_buf_free(&name);
    ns_array_free(&x);
    return st;
}

/* action_offsets.npy and transition_action.npy. */
static ns_status write_action_index(const char *out, const ns_dataset *ds, int64_t *offsets, ns_error *err)
{
    ns_buf name;
    ns_buf_init(&name);
    ns_array off = {NS_I64, 1, {ds->nproblems + 1}, offsets};
    ns_buf_printf(&name, "%s/action_offsets.npy", out);
    ns_status st = ns_npy_write(name.data, &off, NULL, err);
    ns_array ta;
    int64_t tshape[1] = {ns_dataset_ntransitions(ds)};
    ns_array_init(&ta, NS_I64, 1, tshape);
    for (int64_t t = 0; t < tshape[0]; t++) {
        const int32_t *tr = ns_dataset_transition(ds, t);
        ((int64_t *)ta.data)[t] = offsets[tr[0]] + tr[2];
    }
    name.len = 0;
    ns_buf_printf(&name, "%s/transition_action.npy", out);
    if (!st) st = ns_npy_write(name.data, &ta, NULL, err);
    ns_array_free(&ta);
    ns_buf_free(&name);
    return st;
}

/* Appends "name": {"bytes": …, "crc32": …} for a file of dir. */
static ns_status put_file_entry(ns_buf *b, const char *dir, const char *name, bool first, ns_error *err)
{
    ns_buf path;
    ns_buf_init(&path);
    ns_buf_printf(&path, "%s/%s", dir, name);
    char *data;
    size_t len;
    ns_status st = ns_read_file(path.data, &data, &len, err);
    if (st == NS_OK) {
        ns_buf_puts(b, first ? "\n    " : ",\n    ");
        ns_json_put_str(b, name);
        ns_buf_printf(b, ": {\"bytes\": %zu, \"crc32\": %u}", len, ns_crc32(0, data, len));
        free(data);
    }
    ns_buf_free(&path);
    return st;
}

/* features.json, last: what was written and every file's size and CRC. */
static ns_status write_manifest(const ns_featurize_opts *o, const ns_dataset *ds, const ns_featurize_report *r,
                               ns_error *err)
{
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_printf(&b, "{\n  \"format\": \"%s\",\n  \"version\": 1,\n  \"dataset\": ", FEATURES_FORMAT);
    ns_json_put_str(&b, o->dataset);
    ns_buf_printf(&b, ",\n  \"domain\": ");
    ns_json_put_str(&b, ds->domain_name);
    ns_buf_printf(&b, ",\n  \"what\": \"%s\",\n  \"kind\": \"%s\",\n  \"source\": \"%s\",\n  \"rows\": %lld,\n  \"dim\": %lld,\n"
                      "  \"sparse\": %s,\n  \"nnz\": %lld,\n  \"featurizer\": \"featurizer.json\",\n  \"fit\": {\"from\": \"%s\"",
                  r->what, ns_feat_kind_name(r->kind), ns_feat_source_name(r->source), (long long)r->rows,
                  (long long)r->dim, r->sparse ? "true" : "false", (long long)r->nnz, r->fit_from);
    if (o->fit_on || o->vocab) {
        ns_buf_puts(&b, ", \"path\": ");
        ns_json_put_str(&b, o->fit_on ? o->fit_on : o->vocab);
    }
    ns_buf_printf(&b, ", \"documents\": %lld, \"terms\": %lld, \"svd_dim\": %d},\n  \"files\": {", (long long)r->ndocs,
                  (long long)r->nterms, r->svd_dim);
    const char *parts[] = {"indptr", "indices", "values", "shape"};
    bool actions = r->source == NS_FEAT_SRC_ACTION;
    char fname[64];
    ns_status st = NS_OK;
    for (int i = 0; i < (r->sparse ? 4 : 1) && !st; i++) {
        if (r->sparse) snprintf(fname, sizeof fname, "%s_%s.npy", r->what, parts[i]);
        else snprintf(fname, sizeof fname, "%s.npy", r->what);
        st = put_file_entry(&b, o->out, fname, i == 0, err);
    }
    if (!st && actions) st = put_file_entry(&b, o->out, "action_offsets.npy", false, err);
    if (!st && actions) st = put_file_entry(&b, o->out, "transition_action.npy", false, err);
    if (!st) st = put_file_entry(&b, o->out, "featurizer.json", false, err);
    if (!st && r->svd_dim > 0) st = put_file_entry(&b, o->out, "featurizer.svd.npy", false, err);
    ns_buf_printf(&b, "\n  },\n  \"seconds\": {\"fit\": %.3f, \"transform\": %.3f, \"write\": %.3f}\n}\n", r->fit_seconds,
                  r->transform_seconds, r->write_seconds);
    ns_buf name;
    ns_buf_init(&name);
    ns_buf_printf(&name, "%s/features.json", o->out);
    if (!st) st = ns_write_file_atomic(name.data, b.data, b.len, err);
    ns_buf_free(&name);
    ns_buf_free(&b);
    return st;
}

/* Fits f as o asks (on the split, on every row of docs, or nothing). */
static ns_status fit_featurizer(const ns_featurize_opts *o, const ns_dataset *ds, const ns_feat_docs *docs,
                                ns_featurizer *f, ns_error *err)
{
    if (o->fit_on && o->feat.kind != NS_FEAT_RANDOM) return fit_on_split(o, ds, f, err);
    ns_feat_docs fd = *docs;
    if (o->feat.kind == NS_FEAT_RANDOM) fd.n = 0; /* nothing to fit */
    return ns_featurizer_fit(f, &o->feat, &fd, err);
}

ns_status ns_featurize_dataset(const ns_featurize_opts *o, const ns_featurizer *given, ns_featurize_report *r,
                               ns_error *err)
{
    memset(r, 0, sizeof *r);
    const ns_feat_opts *fo = given ? &given->opts : &o->feat;
    bool actions = fo->source == NS_FEAT_SRC_ACTION;
    bool render = fo->source == NS_FEAT_SRC_PROMPT || fo->source == NS_FEAT_SRC_CONTEXT;
    r->what = actions ? "actions" : "states";
    r->fit_from = o->vocab ? "vocab" : fo->kind == NS_FEAT_RANDOM ? "none" : o->fit_on ? "split" : o->fit_all ? "all" : "none";
    fz_data target;
    ns_status st = fz_data_load(&target, o->dataset, o->domains, render, err);
    if (st) {
        fz_data_free(&target);
        return st;
    }
    const ns_dataset *ds = &target.ds;
    int64_t *pairs = NULL, *offsets = NULL;
    if (actions) {
        pairs = ns_feat_all_actions(ds, &r->rows);
        offsets = ns_action_offsets(ds);
    } else {
        r->rows = ns_dataset_nstates(ds);
    }
    ns_feat_ds_ctx ctx;
    ns_feat_docs docs;
    ns_feat_docs_dataset(&docs, &ctx, ds, target.preps, fo->source, pairs, r->rows);
    ns_featurizer fitted;
    memset(&fitted, 0, sizeof fitted);
    const ns_featurizer *f = given;
    if (!given) {
        double t = ns_now();
        st = fit_featurizer(o, ds, &docs, &fitted, err);
        r->fit_seconds = ns_now() - t;
        if (!st) f = &fitted;
    }
    if (!st) {
        r->kind = f->opts.kind;
        r->source = f->opts.source;
        r->dim = ns_featurizer_dim(f);
        r->sparse = ns_featurizer_sparse(f);
        r->ndocs = f->ndocs;
        r->nterms = f->nterms;
        r->svd_dim = f->svd_dim;
        st = ns_mkdir_p(o->out, err);
    }
    if (!st) {
        double t = ns_now();
        st = write_matrix(o, f, &docs, r, &t, err);
        if (!st && actions) st = write_action_index(o->out, ds, offsets, err);
        ns_buf name;
        ns_buf_init(&name);
        ns_buf_printf(&name, "%s/featurizer.json", o->out);
        if (!st) st = ns_featurizer_save(f, name.data, err);
        ns_buf_free(&name);
        r->write_seconds = ns_now() - t;
    }
    if (!st) st = write_manifest(o, ds, r, err);
    if (f == &fitted) ns_featurizer_free(&fitted);
    free(pairs);
    free(offsets);
    fz_data_free(&target);
    return st;
}
