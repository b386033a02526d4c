/* featurize.c — text and literal featurizers (see featurize.h): tokenisers,
 * vocabulary fitting, tf-idf weighting, randomized truncated SVD, fixed
 * random vectors, files, and documents drawn from datasets. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/blas.h"
#include "nextstate/featurize.h"
#include "nextstate/json.h"
#include "nextstate/npy.h"

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

struct ns_feat_table {
    int32_t *slots; /* entry id, -1 empty */
    size_t mask;
    uint64_t *hash;
    int64_t *off;
    int32_t *len;
    int64_t n, cap;
    char *arena;
    size_t alen, acap;
};

static inline uint64_t term_hash(const char *s, size_t n)
{
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
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++) w |= (uint64_t)p[i] << (8 * i);
    return ns_hash_mix(h ^ w);
}

static void table_init(ns_feat_table *t)
{
    memset(t, 0, sizeof *t);
    t->mask = 1023;
    t->slots = ns_xmalloc((t->mask + 1) * sizeof *t->slots);
    memset(t->slots, 0xff, (t->mask + 1) * sizeof *t->slots);
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

static inline int64_t table_find(const ns_feat_table *t, const char *key, size_t len, uint64_t h)
{
    size_t i = (size_t)h & t->mask;
    for (;;) {
        int32_t e = t->slots[i];
        if (e < 0) return -1;
        if (t->hash[e] == h && (size_t)t->len[e] == len && !memcmp(t->arena + t->off[e], key, len)) return e;
        i = (i + 1) & t->mask;
    }
}

/* Adds key (known absent) and returns its id. */
static int64_t table_add(ns_feat_table *t, const char *key, size_t len, uint64_t h)
{
    if ((size_t)(t->n + 1) * 2 > t->mask + 1) {
        size_t nm = t->mask * 2 + 1;
        int32_t *ns = ns_xmalloc((nm + 1) * sizeof *ns);
        memset(ns, 0xff, (nm + 1) * sizeof *ns);
        for (int64_t e = 0; e < t->n; e++) {
            size_t i = (size_t)t->hash[e] & nm;
            while (ns[i] >= 0) i = (i + 1) & nm;
            ns[i] = (int32_t)e;
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
    size_t i = (size_t)h & t->mask;
    while (t->slots[i] >= 0) i = (i + 1) & t->mask;
    t->slots[i] = (int32_t)e;
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
    if (b->cap < n + 2) {
        b->data = ns_xrealloc(b->data, n + 2);
        b->cap = n + 2;
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
    b->data[b->len] = 0;
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
    if (b->cap < n + 2) {
        b->data = ns_xrealloc(b->data, n + 2);
        b->cap = n + 2;
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
    b->data[b->len] = 0;
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
 * point into. */
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
