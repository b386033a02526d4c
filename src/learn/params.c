/* params.c — parameter blocks, seeded initialisation, checkpoints (see params.h). */
#include "nextstate/learn/params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nextstate/util/npy.h"
#include "nextstate/util/util.h"

#define ALIGN_FLOATS 16

void ns_params_init(ns_params *p) { memset(p, 0, sizeof *p); }

void ns_params_free(ns_params *p)
{
    free(p->t);
    free(p->data);
    free(p->grad);
    free(p->m);
    free(p->v);
    memset(p, 0, sizeof *p);
}

static int declare_fail(ns_params *p, const char *fmt, const char *name)
{
    if (!p->bad[0]) snprintf(p->bad, sizeof p->bad, fmt, name);
    return -1;
}

int ns_params_add(ns_params *p, const char *name, int ndim, const int64_t *shape, ns_init_kind init,
                  float bound)
{
    if (p->data) return declare_fail(p, "tensor '%s' declared after ns_params_alloc", name);
    size_t len = strlen(name);
    if (len == 0 || len >= NS_PARAM_NAME_MAX) return declare_fail(p, "tensor name '%s' is empty or too long", name);
    if (ndim < 0 || ndim > NS_PARAM_MAX_DIMS) return declare_fail(p, "tensor '%s': bad number of dimensions", name);
    if (ns_params_find(p, name) >= 0) return declare_fail(p, "tensor '%s' declared twice", name);
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || shape[i] > (int64_t)1 << 40) return declare_fail(p, "tensor '%s': bad shape", name);
        count *= (size_t)shape[i];
    }
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 16;
        p->t = ns_xrealloc(p->t, (size_t)p->cap * sizeof *p->t);
    }
    ns_tensor_info *t = &p->t[p->n];
    memset(t, 0, sizeof *t);
    memcpy(t->name, name, len + 1);
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
    t->count = count;
    t->offset = p->total;
    t->init = init;
    t->bound = bound;
    p->total += (count + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS;
    return p->n++;
}

float ns_init_bound_linear(int fan_in) { return fan_in > 0 ? (float)(1.0 / sqrt((double)fan_in)) : 0.0f; }

float ns_init_bound_xavier(int fan_in, int fan_out)
{
    return fan_in + fan_out > 0 ? (float)sqrt(6.0 / (double)(fan_in + fan_out)) : 0.0f;
}

static void join(char *out, size_t n, const char *prefix, const char *suffix)
{
    snprintf(out, n, "%s%s%s", prefix, prefix[0] ? "." : "", suffix);
}

int ns_params_add_linear(ns_params *p, const char *prefix, int in, int out, bool bias)
{
    char name[NS_PARAM_NAME_MAX + 16];
    float bound = ns_init_bound_linear(in);
    int64_t ws[2] = {out, in}, bs[1] = {out};
    join(name, sizeof name, prefix, "weight");
    int w = ns_params_add(p, name, 2, ws, NS_INIT_UNIFORM, bound);
    if (bias) {
        join(name, sizeof name, prefix, "bias");
        if (ns_params_add(p, name, 1, bs, NS_INIT_UNIFORM, bound) < 0) return -1;
    }
    return w;
}

int ns_params_add_layernorm(ns_params *p, const char *prefix, int dim)
{
    char name[NS_PARAM_NAME_MAX + 16];
    int64_t s[1] = {dim};
    join(name, sizeof name, prefix, "weight");
    int w = ns_params_add(p, name, 1, s, NS_INIT_ONES, 0.0f);
    join(name, sizeof name, prefix, "bias");
    if (ns_params_add(p, name, 1, s, NS_INIT_ZEROS, 0.0f) < 0) return -1;
    return w;
}

ns_status ns_params_alloc(ns_params *p, ns_error *err)
{
    if (p->bad[0]) return ns_error_set(err, NS_ERR_INTERNAL, NULL, 0, 0, "parameters: %s", p->bad);
    if (p->data) return ns_error_set(err, NS_ERR_INTERNAL, NULL, 0, 0, "parameters allocated twice");
    size_t n = p->total ? p->total : 1;
    p->data = ns_xcalloc(n, sizeof(float));
    p->grad = ns_xcalloc(n, sizeof(float));
    p->m = ns_xcalloc(n, sizeof(float));
    p->v = ns_xcalloc(n, sizeof(float));
    return NS_OK;
}

void ns_params_init_values(ns_params *p, uint64_t seed)
{
    for (int i = 0; i < p->n; i++) {
        const ns_tensor_info *t = &p->t[i];
        float *x = p->data + t->offset;
        ns_rng r;
        ns_rng_seed(&r, ns_hash_bytes(t->name, strlen(t->name), seed));
        for (size_t k = 0; k < t->count; k++) {
            switch (t->init) {
            case NS_INIT_ZEROS: x[k] = 0.0f; break;
            case NS_INIT_ONES: x[k] = 1.0f; break;
            case NS_INIT_UNIFORM: x[k] = (float)((2.0 * ns_rng_double(&r) - 1.0) * t->bound); break;
            }
        }
    }
    size_t bytes = p->total * sizeof(float);
    if (p->grad) memset(p->grad, 0, bytes);
    if (p->m) memset(p->m, 0, bytes);
    if (p->v) memset(p->v, 0, bytes);
}

void ns_params_zero_grad(ns_params *p)
{
    if (p->grad) memset(p->grad, 0, p->total * sizeof(float));
}

int ns_params_find(const ns_params *p, const char *name)
{
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->t[i].name, name) == 0) return i;
    return -1;
}

float *ns_params_at(const ns_params *p, float *block, const char *name)
{
    int i = ns_params_find(p, name);
    return i < 0 || !block ? NULL : block + p->t[i].offset;
}

size_t ns_params_count(const ns_params *p)
{
    size_t s = 0;
    for (int i = 0; i < p->n; i++) s += p->t[i].count;
    return s;
}

/* ---- checkpoints ----------------------------------------------------------------- */

static void put_u16(ns_buf *b, uint16_t v)
{
    unsigned char c[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
    ns_buf_put(b, c, 2);
}
static void put_u32(ns_buf *b, uint32_t v)
{
    unsigned char c[4];
    for (int i = 0; i < 4; i++) c[i] = (unsigned char)(v >> (8 * i));
    ns_buf_put(b, c, 4);
}
static void put_u64(ns_buf *b, uint64_t v)
{
    unsigned char c[8];
    for (int i = 0; i < 8; i++) c[i] = (unsigned char)(v >> (8 * i));
    ns_buf_put(b, c, 8);
}
static void put_floats(ns_buf *b, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], 4);
        put_u32(b, u);
    }
}

ns_status ns_params_save(const ns_params *p, const char *path, const ns_ckpt_opts *o, ns_error *err)
{
    if (!p->data) return ns_error_set(err, NS_ERR_INTERNAL, path, 0, 0, "saving unallocated parameters");
    ns_ckpt_opts def = {false, 0, NULL};
    if (!o) o = &def;
    const char *meta = o->meta ? o->meta : "";
    size_t mlen = strlen(meta);
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_put(&b, NS_CKPT_MAGIC, 8);
    put_u32(&b, NS_CKPT_VERSION);
    put_u32(&b, o->moments ? 1u : 0u);
    put_u32(&b, (uint32_t)p->n);
    put_u32(&b, (uint32_t)mlen);
    put_u64(&b, (uint64_t)o->step);
    put_u64(&b, (uint64_t)ns_params_count(p));
    ns_buf_put(&b, meta, mlen);
    for (int i = 0; i < p->n; i++) {
        const ns_tensor_info *t = &p->t[i];
        size_t len = strlen(t->name);
        put_u16(&b, (uint16_t)len);
        ns_buf_put(&b, t->name, len);
        unsigned char nd = (unsigned char)t->ndim;
        ns_buf_put(&b, &nd, 1);
        for (int d = 0; d < t->ndim; d++) put_u64(&b, (uint64_t)t->shape[d]);
    }
    const float *blocks[3] = {p->data, p->m, p->v};
    for (int k = 0; k < (o->moments ? 3 : 1); k++)
        for (int i = 0; i < p->n; i++) put_floats(&b, blocks[k] + p->t[i].offset, p->t[i].count);
    put_u32(&b, ns_crc32(0, b.data, b.len));
    ns_status st = ns_write_file_atomic(path, b.data, b.len, err);
    ns_buf_free(&b);
    return st;
}

/* Bounds-checked little-endian reader over a file image. */
typedef struct rd {
    const unsigned char *p;
    size_t len, pos;
} rd;

static bool take(rd *r, size_t n, const unsigned char **out)
{
    if (r->len - r->pos < n) return false;
    *out = r->p + r->pos;
    r->pos += n;
    return true;
}
static bool get_u64(rd *r, uint64_t *v)
{
    const unsigned char *c;
    if (!take(r, 8, &c)) return false;
    *v = 0;
    for (int i = 7; i >= 0; i--) *v = (*v << 8) | c[i];
    return true;
}
static bool get_u32(rd *r, uint32_t *v)
{
    const unsigned char *c;
    if (!take(r, 4, &c)) return false;
    *v = (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
    return true;
}
static bool get_u16(rd *r, uint16_t *v)
{
    const unsigned char *c;
    if (!take(r, 2, &c)) return false;
    *v = (uint16_t)(c[0] | c[1] << 8);
    return true;
}

static void shape_str(char *out, size_t n, int ndim, const int64_t *shape)
{
    size_t k = (size_t)snprintf(out, n, "[");
    for (int i = 0; i < ndim && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (k < n) snprintf(out + k, n - k, "]");
}

static ns_status truncated(ns_error *err, const char *path, const char *what)
{
    return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "truncated checkpoint (file ends inside %s)", what);
}

/* Parses a checkpoint image into a fresh table *q (allocated, data loaded). */
static ns_status decode(ns_params *q, ns_ckpt_info *info, const unsigned char *buf, size_t len,
                        const char *path, ns_error *err)
{
    ns_params_init(q);
    memset(info, 0, sizeof *info);
    rd r = {buf, len, 0};
    const unsigned char *c;
    if (len < 8 || memcmp(buf, NS_CKPT_MAGIC, 8) != 0)
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "not a nextstate checkpoint (bad magic)");
    r.pos = 8;
    uint32_t version, flags, n, mlen;
    uint64_t step, nfloats;
    if (!get_u32(&r, &version)) return truncated(err, path, "the header");
    if (version != NS_CKPT_VERSION)
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "checkpoint format version %u, this build reads %u",
                            version, NS_CKPT_VERSION);
    if (!get_u32(&r, &flags) || !get_u32(&r, &n) || !get_u32(&r, &mlen) || !get_u64(&r, &step) ||
        !get_u64(&r, &nfloats))
        return truncated(err, path, "the header");
    if (flags & ~1u) return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "unknown checkpoint flags 0x%x", flags);
    if (len < 4 || len - 4 < r.pos)
        return truncated(err, path, "the header");
    /* The CRC first: any later inconsistency of a complete file is corruption. */
    size_t blocks = (flags & 1u) ? 3 : 1;
    if (nfloats > (len / 4) || (uint64_t)r.pos + mlen + blocks * nfloats * 4 + 4 > len)
        return truncated(err, path, "the tensor data");
    uint32_t want = (uint32_t)buf[len - 4] | (uint32_t)buf[len - 3] << 8 | (uint32_t)buf[len - 2] << 16 |
                    (uint32_t)buf[len - 1] << 24;
    uint32_t got = ns_crc32(0, buf, len - 4);
    if (want != got)
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                            "checkpoint checksum mismatch (stored %08x, computed %08x): corrupt or truncated file",
                            want, got);
    r.len = len - 4;
    if (!take(&r, mlen, &c)) return truncated(err, path, "the metadata");
    info->meta = ns_xmalloc((size_t)mlen + 1);
    memcpy(info->meta, c, mlen);
    info->meta[mlen] = 0;
    info->moments = flags & 1u;
    info->step = (int64_t)step;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint16_t nl;
        char name[NS_PARAM_NAME_MAX];
        if (!get_u16(&r, &nl) || !take(&r, nl, &c)) goto trunc_table;
        if (nl == 0 || nl >= NS_PARAM_NAME_MAX || memchr(c, 0, nl)) {
            ns_params_free(q);
            return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "checkpoint tensor %u has a bad name", i);
        }
        memcpy(name, c, nl);
        name[nl] = 0;
        if (!take(&r, 1, &c)) goto trunc_table;
        int nd = c[0];
        int64_t shape[NS_PARAM_MAX_DIMS] = {0};
        if (nd > NS_PARAM_MAX_DIMS) {
            ns_params_free(q);
            return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "checkpoint tensor '%s' has %d dimensions", name, nd);
        }
        uint64_t cnt = 1;
        for (int d = 0; d < nd; d++) {
            uint64_t s;
            if (!get_u64(&r, &s)) goto trunc_table;
            if (s > ((uint64_t)1 << 40) || (s && cnt > nfloats / s)) {
                ns_params_free(q);
                return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "checkpoint tensor '%s' has a bad shape", name);
            }
            shape[d] = (int64_t)s;
            cnt *= s;
        }
        sum += cnt;
        if (ns_params_add(q, name, nd, shape, NS_INIT_ZEROS, 0.0f) < 0) {
            ns_params_free(q);
            return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "checkpoint table: %s", q->bad);
        }
    }
    if (sum != nfloats) {
        ns_params_free(q);
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                            "checkpoint header counts %llu floats but its tensors hold %llu",
                            (unsigned long long)nfloats, (unsigned long long)sum);
    }
    if (r.len - r.pos != blocks * nfloats * 4) {
        ns_params_free(q);
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "checkpoint size does not match its table");
    }
    ns_params_alloc(q, NULL);
    float *dst[3] = {q->data, q->m, q->v};
    for (size_t k = 0; k < blocks; k++)
        for (int i = 0; i < q->n; i++) {
            float *x = dst[k] + q->t[i].offset;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            const unsigned char *c;
            if (q->t[i].count > 0 && take(&r, 4 * q->t[i].count, &c)) memcpy(x, c, 4 * q->t[i].count);
#else
            for (size_t j = 0; j < q->t[i].count; j++) {
                uint32_t u;
                get_u32(&r, &u);
                memcpy(&x[j], &u, 4);
            }
#endif
        }
    return NS_OK;
trunc_table:
    ns_params_free(q);
    return truncated(err, path, "the tensor table");
}

static ns_status read_image(ns_params *q, ns_ckpt_info *info, const char *path, ns_error *err)
{
    char *buf;
    size_t len;
    ns_status st = ns_read_file(path, &buf, &len, err);
    if (st != NS_OK) return st;
    st = decode(q, info, (const unsigned char *)buf, len, path, err);
    free(buf);
    if (st != NS_OK) ns_ckpt_info_free(info);
    return st;
}

ns_status ns_params_read(ns_params *p, const char *path, ns_ckpt_info *info, ns_error *err)
{
    ns_ckpt_info tmp;
    ns_status st = read_image(p, &tmp, path, err);
    if (st != NS_OK) return st;
    if (info) *info = tmp;
    else ns_ckpt_info_free(&tmp);
    return NS_OK;
}

static ns_status load_table(ns_params *p, const char *path, ns_ckpt_info *info, bool more, ns_error *err);

ns_status ns_params_load(ns_params *p, const char *path, ns_ckpt_info *info, ns_error *err)
{
    return load_table(p, path, info, false, err);
}

ns_status ns_params_load_prefix(ns_params *p, const char *path, ns_ckpt_info *info, ns_error *err)
{
    return load_table(p, path, info, true, err);
}

ns_status ns_params_concat(ns_params *out, const ns_params *a, const ns_params *b, ns_error *err)
{
    ns_params_init(out);
    const ns_params *part[2] = {a, b};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < part[k]->n; i++) {
            const ns_tensor_info *t = &part[k]->t[i];
            int j = ns_params_add(out, t->name, t->ndim, t->shape, t->init, t->bound);
            if (j >= 0) out->t[j].no_decay = t->no_decay;
        }
    ns_status st = ns_params_alloc(out, err);
    if (st) {
        ns_params_free(out);
        return st;
    }
    int at = 0;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < part[k]->n; i++, at++) {
            const ns_tensor_info *t = &part[k]->t[i];
            size_t o = out->t[at].offset, n = t->count * sizeof(float);
            memcpy(out->data + o, part[k]->data + t->offset, n);
            memcpy(out->m + o, part[k]->m + t->offset, n);
            memcpy(out->v + o, part[k]->v + t->offset, n);
        }
    return NS_OK;
}

static ns_status load_table(ns_params *p, const char *path, ns_ckpt_info *info, bool more, ns_error *err)
{
    if (!p->data) return ns_error_set(err, NS_ERR_INTERNAL, path, 0, 0, "loading into unallocated parameters");
    ns_params q;
    ns_ckpt_info tmp;
    ns_status st = read_image(&q, &tmp, path, err);
    if (st != NS_OK) return st;
    char a[96], b[96];
    for (int i = 0; i < p->n || i < q.n; i++) {
        if (i >= q.n) {
            st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                              "checkpoint has %d tensors, the model %d: tensor '%s' missing", q.n, p->n,
                              p->t[i].name);
            break;
        }
        if (i >= p->n) {
            if (more) break;
            st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                              "checkpoint has %d tensors, the model %d: unexpected tensor '%s'", q.n, p->n,
                              q.t[i].name);
            break;
        }
        const ns_tensor_info *x = &q.t[i], *y = &p->t[i];
        shape_str(a, sizeof a, x->ndim, x->shape);
        shape_str(b, sizeof b, y->ndim, y->shape);
        if (strcmp(x->name, y->name) != 0) {
            st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                              "tensor %d is '%s' %s in the checkpoint but '%s' %s in the model", i, x->name, a,
                              y->name, b);
            break;
        }
        if (strcmp(a, b) != 0) {
            st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                              "tensor '%s' has shape %s in the checkpoint but %s in the model", x->name, a, b);
            break;
        }
    }
    if (st == NS_OK) {
        for (int i = 0; i < p->n; i++) {
            size_t n = p->t[i].count * sizeof(float);
            memcpy(p->data + p->t[i].offset, q.data + q.t[i].offset, n);
            memcpy(p->m + p->t[i].offset, q.m + q.t[i].offset, n); /* zeros without moments */
            memcpy(p->v + p->t[i].offset, q.v + q.t[i].offset, n);
        }
        if (info) {
            *info = tmp;
            tmp.meta = NULL;
        }
    }
    ns_ckpt_info_free(&tmp);
    ns_params_free(&q);
    return st;
}

void ns_ckpt_info_free(ns_ckpt_info *info)
{
    if (!info) return;
    free(info->meta);
    info->meta = NULL;
}
