/* forest.c — flat tree-ensemble evaluation (see forest.h). */
#include "nextstate/learn/forest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nextstate/util/json.h"
#include "nextstate/util/npy.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define MAGIC "NSFOREST"
#define VERSION 2u
#define PREFIX 16u
#define HEADER_V1 20u /* nfeat, nout, ntrees, nnodes, base_score */
#define HEADER_V2 32u /* the same, flags, two reserved words */

void ns_forest_init(ns_forest *f) { memset(f, 0, sizeof *f); }

void ns_forest_free(ns_forest *f)
{
    if (f->map.data) { /* tree_root, tree_out and cnodes point into it */
        ns_filemap_free(&f->map);
    } else {
        free(f->tree_root);
        free(f->tree_out);
        free(f->cnodes);
    }
    free(f->feat);
    free(f->value);
    free(f->left);
    free(f->right);
    free(f->default_left);
    free(f->nodes);
    free(f->missing);
    ns_forest_init(f);
}

/* Whether tree t adds to output t % nout for every t (XGBoost's order):
 * the sums then run over whole rounds, output by output, in the same order. */
static void set_round_major(ns_forest *f)
{
    f->round_major = true;
    for (int t = 0; t < f->ntrees && f->round_major; t++)
        if (f->tree_out[t] != t % f->nout) f->round_major = false;
}

static void alloc_arrays(ns_forest *f)
{
    size_t t = (size_t)f->ntrees + 1, n = (size_t)f->nnodes + 1;
    f->tree_root = ns_xmalloc(t * sizeof(int32_t));
    f->tree_out = ns_xmalloc(t * sizeof(int32_t));
    f->feat = ns_xmalloc(n * sizeof(int32_t));
    f->value = ns_xmalloc(n * sizeof(float));
    f->left = ns_xmalloc(n * sizeof(int32_t));
    f->right = ns_xmalloc(n * sizeof(int32_t));
    f->default_left = ns_xmalloc(n);
}

/* Every tree's nodes lie in [root, end), its split nodes' children inside
 * it, every node reached at most once from the root (so no cycle, and a walk
 * ends at a leaf), features and outputs in range. */
static ns_status check(const ns_forest *f, const char *path, ns_error *err)
{
    ns_status st = NS_OK;
    uint8_t *seen = ns_xcalloc((size_t)f->nnodes + 1, 1);
    int32_t *stack = ns_xmalloc(sizeof(int32_t) * ((size_t)f->nnodes + 1));
    for (int t = 0; t < f->ntrees && st == NS_OK; t++) {
        int lo = f->tree_root[t], hi = t + 1 < f->ntrees ? f->tree_root[t + 1] : f->nnodes;
        if (lo < 0 || hi > f->nnodes || lo >= hi) {
            st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "forest: tree %d has no nodes", t);
            break;
        }
        if (f->tree_out[t] < 0 || f->tree_out[t] >= f->nout) {
            st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "forest: tree %d: output %d out of range", t,
                              (int)f->tree_out[t]);
            break;
        }
        int sp = 0;
        stack[sp++] = lo;
        seen[lo] = 1;
        while (sp > 0 && st == NS_OK) {
            int i = stack[--sp];
            if (f->feat[i] < 0) continue;
            if (f->feat[i] >= f->nfeat) {
                st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "forest: tree %d: feature %d out of range", t,
                                  (int)f->feat[i]);
                break;
            }
            int32_t ch[2] = {f->left[i], f->right[i]};
            for (int c = 0; c < 2; c++) {
                if (ch[c] < lo || ch[c] >= hi || seen[ch[c]]) {
                    st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "forest: tree %d: node %d has a bad child",
                                      t, i - lo);
                    break;
                }
                seen[ch[c]] = 1;
                stack[sp++] = ch[c];
            }
        }
    }
    free(stack);
    free(seen);
    return st;
}

/* The general packed copy prediction walks when the compact one is absent. */
static void pack_general(ns_forest *f)
{
    f->nodes = ns_xmalloc(sizeof(ns_forest_node) * ((size_t)f->nnodes + 1));
    f->missing = ns_xmalloc(sizeof(int32_t) * ((size_t)f->nnodes + 1));
    for (int i = 0; i < f->nnodes; i++) {
        f->nodes[i] = (ns_forest_node){f->feat[i], f->value[i], f->left[i], f->right[i]};
        f->missing[i] = f->default_left[i] ? f->left[i] : f->right[i];
    }
}

/* The node arrays from the compact form (a version-2 forest has no others). */
static void unpack(ns_forest *f)
{
    size_t n = (size_t)f->nnodes + 1;
    f->feat = ns_xmalloc(n * sizeof(int32_t));
    f->value = ns_xmalloc(n * sizeof(float));
    f->left = ns_xmalloc(n * sizeof(int32_t));
    f->right = ns_xmalloc(n * sizeof(int32_t));
    f->default_left = ns_xmalloc(n);
    for (int t = 0; t < f->ntrees; t++) {
        int lo = f->tree_root[t], hi = t + 1 < f->ntrees ? f->tree_root[t + 1] : f->nnodes;
        for (int i = lo; i < hi; i++) {
            const ns_forest_cnode *c = &f->cnodes[i];
            bool leaf = c->feat == 0xFFFF;
            f->feat[i] = leaf ? -1 : (int32_t)c->feat;
            f->value[i] = c->value;
            f->left[i] = leaf ? -1 : lo + (c->left & 0x7FFF);
            f->right[i] = leaf ? -1 : lo + (c->left & 0x7FFF) + 1;
            f->default_left[i] = !leaf && (c->left & 0x8000);
        }
    }
}

void ns_forest_use_general(ns_forest *f)
{
    if (!f->feat) unpack(f);
    if (f->map.data) { /* tree_root and tree_out into owned memory: the mapping goes */
        size_t t = ((size_t)f->ntrees + 1) * sizeof(int32_t);
        int32_t *r = ns_xmalloc(t), *o = ns_xmalloc(t);
        memcpy(r, f->tree_root, (size_t)f->ntrees * sizeof(int32_t));
        memcpy(o, f->tree_out, (size_t)f->ntrees * sizeof(int32_t));
        f->tree_root = r, f->tree_out = o, f->cnodes = NULL;
        ns_filemap_free(&f->map);
    }
    free(f->cnodes);
    f->cnodes = NULL;
    if (!f->nodes) pack_general(f);
}

/* The compact form (forest.h) when features, tree sizes and children fit,
 * else the general one. */
static void pack(ns_forest *f)
{
    bool fits = f->nfeat < 0xFFFF;
    for (int t = 0; t < f->ntrees && fits; t++) {
        int lo = f->tree_root[t], hi = t + 1 < f->ntrees ? f->tree_root[t + 1] : f->nnodes;
        if (hi - lo > 0x7FFF) fits = false;
        for (int i = lo; i < hi && fits; i++)
            if (f->feat[i] >= 0 && f->right[i] != f->left[i] + 1) fits = false;
    }
    if (!fits) {
        pack_general(f);
        return;
    }
    f->cnodes = ns_xmalloc(sizeof(ns_forest_cnode) * ((size_t)f->nnodes + 1));
    for (int t = 0; t < f->ntrees; t++) {
        int lo = f->tree_root[t], hi = t + 1 < f->ntrees ? f->tree_root[t + 1] : f->nnodes;
        for (int i = lo; i < hi; i++) {
            bool leaf = f->feat[i] < 0;
            f->cnodes[i] = (ns_forest_cnode){f->value[i], leaf ? (uint16_t)0xFFFF : (uint16_t)f->feat[i],
                                             leaf ? (uint16_t)0
                                                  : (uint16_t)((f->left[i] - lo) | (f->default_left[i] ? 0x8000 : 0))};
        }
    }
}

static const ns_json *array_of(const ns_json *o, const char *key, int n)
{
    const ns_json *a = ns_json_get(o, key);
    return a && a->kind == NS_JSON_ARRAY && a->n == n ? a : NULL;
}

ns_status ns_forest_from_xgb_json(ns_forest *f, const char *text, size_t len, int nfeat, int nout, int ntrees,
                                  ns_error *err)
{
    ns_forest_init(f);
    ns_json j;
    ns_status st = ns_json_parse(&j, text, len, "xgboost model", err);
    if (st != NS_OK) return st;
    const ns_json *learner = ns_json_get(&j, "learner");
    const ns_json *lmp = learner ? ns_json_get(learner, "learner_model_param") : NULL;
    const ns_json *gb = learner ? ns_json_get(learner, "gradient_booster") : NULL;
    const ns_json *model = gb ? ns_json_get(gb, "model") : NULL;
    const ns_json *trees = model ? ns_json_get(model, "trees") : NULL;
    const char *bs = NULL, *name = NULL;
    if (!lmp || !ns_json_get_str(lmp, "base_score", &bs) || !model || !trees || trees->kind != NS_JSON_ARRAY ||
        !ns_json_get_str(gb, "name", &name) || strcmp(name, "gbtree") != 0) {
        ns_json_free(&j);
        return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "forest: not an XGBoost gbtree JSON model");
    }
    const ns_json *info = array_of(model, "tree_info", trees->n);
    if (ntrees < 0 || ntrees > trees->n) ntrees = trees->n;
    f->nfeat = nfeat;
    f->nout = nout;
    f->ntrees = ntrees;
    f->base_score = strtof(bs, NULL);
    int nnodes = 0;
    for (int t = 0; t < ntrees; t++) {
        const ns_json *tp = ns_json_get(&trees->items[t], "tree_param");
        const char *nn = NULL;
        int64_t v = 0;
        if (!tp || !(ns_json_get_str(tp, "num_nodes", &nn) ? (v = strtoll(nn, NULL, 10)) > 0
                                                             : ns_json_get_int(tp, "num_nodes", &v)) ||
            v <= 0 || v > (1 << 28) || nnodes > (1 << 30) - v) {
            ns_json_free(&j);
            return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "forest: tree %d: num_nodes missing", t);
        }
        nnodes += (int)v;
    }
    f->nnodes = nnodes;
    alloc_arrays(f);
    int at = 0;
    for (int t = 0; t < ntrees && st == NS_OK; t++) {
        const ns_json *tr = &trees->items[t];
        const ns_json *tp = ns_json_get(tr, "tree_param");
        const char *nn = NULL;
        int64_t v = 0;
        if (ns_json_get_str(tp, "num_nodes", &nn)) v = strtoll(nn, NULL, 10);
        else ns_json_get_int(tp, "num_nodes", &v);
        int n = (int)v;
        const ns_json *L = array_of(tr, "left_children", n), *R = array_of(tr, "right_children", n),
                      *S = array_of(tr, "split_indices", n), *C = array_of(tr, "split_conditions", n),
                      *D = array_of(tr, "default_left", n), *T = ns_json_get(tr, "split_type");
        if (!L || !R || !S || !C || !D) {
            st = ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "forest: tree %d: node arrays missing or short", t);
            break;
        }
        int out = t % nout;
        if (info) {
            if (!info->items[t].is_integer) {
                st = ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "forest: tree_info[%d] not an integer", t);
                break;
            }
            out = (int)info->items[t].integer;
        }
        f->tree_root[t] = at;
        f->tree_out[t] = out;
        for (int i = 0; i < n; i++) {
            if (T && T->kind == NS_JSON_ARRAY && T->n == n && T->items[i].is_integer && T->items[i].integer != 0) {
                st = ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "forest: tree %d: categorical split", t);
                break;
            }
            const ns_json *l = &L->items[i], *r = &R->items[i], *s = &S->items[i], *c = &C->items[i],
                          *d = &D->items[i];
            if (!l->is_integer || !r->is_integer || !s->is_integer || c->kind != NS_JSON_NUMBER) {
                st = ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "forest: tree %d node %d: bad entry", t, i);
                break;
            }
            bool leaf = l->integer == -1;
            f->feat[at + i] = leaf ? -1 : (int32_t)s->integer;
            f->value[at + i] = (float)c->number;
            f->left[at + i] = leaf ? -1 : (int32_t)(at + l->integer);
            f->right[at + i] = leaf ? -1 : (int32_t)(at + r->integer);
            f->default_left[at + i] = (uint8_t)(d->is_integer ? d->integer != 0 : d->boolean);
            if (!leaf && (l->integer < 0 || l->integer >= n || r->integer < 0 || r->integer >= n || s->integer < 0)) {
                st = ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "forest: tree %d node %d: bad child", t, i);
                break;
            }
        }
        at += n;
    }
    ns_json_free(&j);
    if (st == NS_OK) st = check(f, NULL, err);
    if (st == NS_OK) pack(f), set_round_major(f);
    if (st != NS_OK) ns_forest_free(f);
    return st;
}

static void put_u32(ns_buf *b, uint32_t v) { ns_buf_put_le(b, v, 4); }

static uint32_t get_u32(const unsigned char *p) { return (uint32_t)ns_get_le(p, 4); }

static void put_i32s(ns_buf *b, const int32_t *a, int n)
{
    for (int i = 0; i < n; i++) put_u32(b, (uint32_t)a[i]);
}

static void put_f32s(ns_buf *b, const float *a, int n)
{
    for (int i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &a[i], 4);
        put_u32(b, u);
    }
}

/* Whether the compact form holds every split's children after it in its
 * tree, as version 2 requires (XGBoost appends the children it splits). */
static bool forward_only(const ns_forest *f)
{
    if (!f->cnodes) return false;
    for (int t = 0; t < f->ntrees; t++) {
        int lo = f->tree_root[t], hi = t + 1 < f->ntrees ? f->tree_root[t + 1] : f->nnodes;
        for (int i = lo; i < hi; i++)
            if (f->cnodes[i].feat != 0xFFFF && (int)(f->cnodes[i].left & 0x7FFF) <= i - lo) return false;
    }
    return true;
}

static void seal(ns_buf *out, size_t start, uint32_t crc)
{
    unsigned char c[4] = {(unsigned char)crc, (unsigned char)(crc >> 8), (unsigned char)(crc >> 16),
                          (unsigned char)(crc >> 24)};
    memcpy(out->data + start + 12, c, 4);
}

void ns_forest_save(const ns_forest *f, ns_buf *out)
{
    size_t start = out->len;
    bool v2 = forward_only(f);
    ns_buf_put(out, MAGIC, 8);
    put_u32(out, v2 ? 2u : 1u);
    put_u32(out, 0); /* checksum, filled below */
    put_u32(out, (uint32_t)f->nfeat);
    put_u32(out, (uint32_t)f->nout);
    put_u32(out, (uint32_t)f->ntrees);
    put_u32(out, (uint32_t)f->nnodes);
    put_f32s(out, &f->base_score, 1);
    if (v2) {
        put_u32(out, 0); /* flags */
        put_u32(out, 0);
        put_u32(out, 0);
    }
    put_i32s(out, f->tree_root, f->ntrees);
    put_i32s(out, f->tree_out, f->ntrees);
    if (v2) {
        for (int i = 0; i < f->nnodes; i++) {
            const ns_forest_cnode *c = &f->cnodes[i];
            uint32_t u;
            memcpy(&u, &c->value, 4);
            put_u32(out, u);
            put_u32(out, (uint32_t)c->feat | (uint32_t)c->left << 16);
        }
        seal(out, start, ns_crc32c(0, out->data + start + PREFIX, out->len - start - PREFIX));
        return;
    }
    put_i32s(out, f->feat, f->nnodes);
    put_f32s(out, f->value, f->nnodes);
    put_i32s(out, f->left, f->nnodes);
    put_i32s(out, f->right, f->nnodes);
    ns_buf_put(out, (const char *)f->default_left, (size_t)f->nnodes);
    seal(out, start, ns_crc32(0, out->data + start + PREFIX, out->len - start - PREFIX));
}

static void get_i32s(int32_t *a, const unsigned char *p, int n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(a, p, 4 * (size_t)n);
#else
    for (int i = 0; i < n; i++) a[i] = (int32_t)get_u32(p + 4 * (size_t)i);
#endif
}

/* A forest file's length against want, and (crc non-NULL) its checksum:
 * crc over everything after the prefix against the prefix's field. */
static ns_status check_size_crc(const unsigned char *p, size_t len, uint64_t want,
                                uint32_t (*crc)(uint32_t, const void *, size_t), const char *path, ns_error *err)
{
    if ((uint64_t)len != want)
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "forest: %zu bytes, expected %llu (truncated?)", len,
                            (unsigned long long)want);
    if (crc && crc(0, p + PREFIX, len - PREFIX) != get_u32(p + 12))
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "forest: checksum mismatch");
    return NS_OK;
}

/* Version 1: the node arrays, checked, then packed. */
static ns_status load_v1(ns_forest *f, const unsigned char *p, size_t len, const char *path, bool verify,
                         ns_error *err)
{
    uint32_t nn = (uint32_t)f->nnodes, nt = (uint32_t)f->ntrees;
    ns_status st = check_size_crc(p, len, PREFIX + HEADER_V1 + 8ull * nt + 17ull * nn, verify ? ns_crc32 : NULL,
                                  path, err);
    if (st != NS_OK) return st;
    alloc_arrays(f);
    const unsigned char *q = p + PREFIX + HEADER_V1;
    get_i32s(f->tree_root, q, f->ntrees);
    q += 4 * (size_t)nt;
    get_i32s(f->tree_out, q, f->ntrees);
    q += 4 * (size_t)nt;
    get_i32s(f->feat, q, f->nnodes);
    q += 4 * (size_t)nn;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(f->value, q, 4 * (size_t)nn);
#else
    for (uint32_t i = 0; i < nn; i++) {
        uint32_t u = get_u32(q + 4 * (size_t)i);
        memcpy(&f->value[i], &u, 4);
    }
#endif
    q += 4 * (size_t)nn;
    get_i32s(f->left, q, f->nnodes);
    q += 4 * (size_t)nn;
    get_i32s(f->right, q, f->nnodes);
    q += 4 * (size_t)nn;
    memcpy(f->default_left, q, nn);
    st = check(f, path, err);
    if (st == NS_OK) pack(f);
    return st;
}

/* Version 2's checks, in one pass over the nodes: trees in order, each of
 * 1 … 0x8000 nodes, outputs in range; a split's feature in range and its
 * children after it inside its tree (so every walk moves forward and ends
 * at a leaf inside the tree). */
static ns_status check_compact(const ns_forest *f, const char *path, ns_error *err)
{
    for (int t = 0; t < f->ntrees; t++) {
        int lo = f->tree_root[t], hi = t + 1 < f->ntrees ? f->tree_root[t + 1] : f->nnodes;
        if ((t == 0 && lo != 0) || lo < 0 || hi > f->nnodes || lo >= hi || hi - lo > 0x8000)
            return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "forest: tree %d has no nodes or too many", t);
        if (f->tree_out[t] < 0 || f->tree_out[t] >= f->nout)
            return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "forest: tree %d: output %d out of range", t,
                                (int)f->tree_out[t]);
        const ns_forest_cnode *c = f->cnodes + lo;
        int n = hi - lo;
        unsigned bad = 0; /* branch-free: leaves and splits alternate unpredictably */
        for (int i = 0; i < n; i++) {
            int l = c[i].left & 0x7FFF;
            bad |= (unsigned)(c[i].feat != 0xFFFF) & ((unsigned)(c[i].feat >= f->nfeat) | (unsigned)(l <= i) |
                                                      (unsigned)(l + 1 >= n));
        }
        for (int i = 0; bad && i < n; i++) {
            if (c[i].feat == 0xFFFF) continue;
            int l = c[i].left & 0x7FFF;
            if (c[i].feat >= f->nfeat || l <= i || l + 1 >= n)
                return ns_error_set(err, NS_ERR_INPUT, path, 0, 0,
                                    c[i].feat >= f->nfeat ? "forest: tree %d: feature out of range at node %d"
                                                          : "forest: tree %d: node %d has a bad child",
                                    t, i);
        }
    }
    return NS_OK;
}

/* Version 2: the arrays in place at p when allowed (in_place: p outlives
 * f), else copied. */
static ns_status load_v2(ns_forest *f, const unsigned char *p, size_t len, const char *path, bool verify,
                         bool in_place, ns_error *err)
{
    uint32_t nn = (uint32_t)f->nnodes, nt = (uint32_t)f->ntrees;
    ns_status st = check_size_crc(p, len, PREFIX + HEADER_V2 + 8ull * nt + 8ull * nn, verify ? ns_crc32c : NULL,
                                  path, err);
    if (st != NS_OK) return st;
    if (get_u32(p + 36) != 0 || get_u32(p + 40) != 0 || get_u32(p + 44) != 0)
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "forest: unknown flags");
    const unsigned char *q = p + PREFIX + HEADER_V2;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    in_place = in_place && ((uintptr_t)q & 3) == 0;
#else
    in_place = false;
#endif
    if (in_place) {
        f->tree_root = (int32_t *)(uintptr_t)q;
        f->tree_out = (int32_t *)(uintptr_t)(q + 4 * (size_t)nt);
        f->cnodes = (ns_forest_cnode *)(uintptr_t)(q + 8 * (size_t)nt);
    } else {
        size_t t = (size_t)nt + 1;
        f->tree_root = ns_xmalloc(t * sizeof(int32_t));
        f->tree_out = ns_xmalloc(t * sizeof(int32_t));
        f->cnodes = ns_xmalloc(((size_t)nn + 1) * sizeof(ns_forest_cnode));
        get_i32s(f->tree_root, q, f->ntrees);
        get_i32s(f->tree_out, q + 4 * (size_t)nt, f->ntrees);
        const unsigned char *c = q + 8 * (size_t)nt;
        for (uint32_t i = 0; i < nn; i++, c += 8) {
            uint32_t u = get_u32(c), w = get_u32(c + 4);
            memcpy(&f->cnodes[i].value, &u, 4);
            f->cnodes[i].feat = (uint16_t)w;
            f->cnodes[i].left = (uint16_t)(w >> 16);
        }
    }
    return check_compact(f, path, err);
}

/* Loads data (either version); in_place: a version-2 forest may keep
 * pointers into data (the caller then hands f the mapping). */
static ns_status load(ns_forest *f, const void *data, size_t len, const char *path, bool verify, bool in_place,
                      ns_error *err)
{
    ns_forest_init(f);
    const unsigned char *p = data;
    if (len < PREFIX + HEADER_V1 || memcmp(p, MAGIC, 8) != 0)
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "not a nextstate forest file (bad magic or too short)");
    uint32_t version = get_u32(p + 8);
    if (version != 1 && version != 2)
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "forest file version %u (this build reads 1 and %u)",
                            version, VERSION);
    if (version == 2 && len < PREFIX + HEADER_V2)
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "forest: too short for its header");
    uint32_t nf = get_u32(p + 16), no = get_u32(p + 20), nt = get_u32(p + 24), nn = get_u32(p + 28);
    if (nf == 0 || nf > (1u << 28) || no == 0 || no > (1u << 20) || nt > (1u << 26) || nn > (1u << 30) ||
        (version == 2 && nf >= 0xFFFF))
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "forest: sizes out of range");
    f->nfeat = (int)nf;
    f->nout = (int)no;
    f->ntrees = (int)nt;
    f->nnodes = (int)nn;
    uint32_t bsu = get_u32(p + 32);
    memcpy(&f->base_score, &bsu, 4);
    ns_status st = version == 1 ? load_v1(f, p, len, path, verify, err)
                                : load_v2(f, p, len, path, verify, in_place, err);
    if (st == NS_OK) set_round_major(f);
    return st;
}

ns_status ns_forest_load(ns_forest *f, const void *data, size_t len, const char *path, ns_error *err)
{
    ns_status st = load(f, data, len, path, true, false, err);
    if (st != NS_OK) ns_forest_free(f);
    return st;
}

ns_status ns_forest_load_checked(ns_forest *f, const void *data, size_t len, const char *path, ns_error *err)
{
    ns_status st = load(f, data, len, path, false, false, err);
    if (st != NS_OK) ns_forest_free(f);
    return st;
}

ns_status ns_forest_adopt(ns_forest *f, ns_filemap *map, size_t off, size_t len, const char *path, ns_error *err)
{
    ns_filemap m = *map;
    memset(map, 0, sizeof *map);
    if (off > m.len || len > m.len - off) {
        ns_forest_init(f);
        ns_filemap_free(&m);
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "forest: outside the file");
    }
    ns_status st = load(f, (const unsigned char *)m.data + off, len, path, false, true, err);
    bool uses_map = st == NS_OK && f->cnodes && (const unsigned char *)f->cnodes >= (const unsigned char *)m.data &&
                    (const unsigned char *)f->cnodes < (const unsigned char *)m.data + m.len;
    if (st != NS_OK) {
        /* pointers into m must not be freed: drop them before freeing the rest */
        if ((const unsigned char *)f->tree_root >= (const unsigned char *)m.data &&
            (const unsigned char *)f->tree_root < (const unsigned char *)m.data + m.len)
            f->tree_root = NULL, f->tree_out = NULL, f->cnodes = NULL;
        ns_forest_free(f);
        ns_filemap_free(&m);
        return st;
    }
    if (uses_map) f->map = m;
    else ns_filemap_free(&m);
    return NS_OK;
}

ns_status ns_forest_write(const ns_forest *f, const char *path, ns_error *err)
{
    ns_buf b;
    ns_buf_init(&b);
    ns_forest_save(f, &b);
    ns_status st = ns_write_file_atomic(path, b.data, b.len, err);
    ns_buf_free(&b);
    return st;
}

ns_status ns_forest_read(ns_forest *f, const char *path, ns_error *err)
{
    ns_filemap m;
    ns_forest_init(f);
    ns_status st = ns_filemap_open(&m, path, err);
    if (st != NS_OK) return st;
    if (m.len < PREFIX + HEADER_V1 || memcmp(m.data, MAGIC, 8) != 0) {
        ns_filemap_free(&m);
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "not a nextstate forest file (bad magic or too short)");
    }
    uint32_t version = get_u32((const unsigned char *)m.data + 8);
    uint32_t want = get_u32((const unsigned char *)m.data + 12);
    uint32_t got = version == 2   ? ns_crc32c(0, (const unsigned char *)m.data + PREFIX, m.len - PREFIX)
                   : version == 1 ? ns_crc32(0, (const unsigned char *)m.data + PREFIX, m.len - PREFIX)
                                  : want; /* load names the version */
    if (got != want) {
        ns_filemap_free(&m);
        return ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "forest: checksum mismatch");
    }
    size_t len = m.len;
    return ns_forest_adopt(f, &m, 0, len, path, err);
}

/* Trees walked in lockstep: their node loads are independent, so the
 * memory system serves them together instead of one dependent chain at a
 * time; the leaves are then added in tree order, so the sums are those of
 * one tree after the other, to the bit. */
enum { FOREST_LANES = 8 };

static void predict_compact(const ns_forest *f, const float *X, int n, float *out)
{
    const ns_forest_cnode *nodes = f->cnodes;
    for (int r = 0; r < n; r++) {
        const float *x = X + (size_t)r * (size_t)f->nfeat;
        float *o = out + (size_t)r * (size_t)f->nout;
        for (int k = 0; k < f->nout; k++) o[k] = f->base_score;
        int t = 0;
        for (; t + FOREST_LANES <= f->ntrees; t += FOREST_LANES) {
            const ns_forest_cnode *base[FOREST_LANES], *q[FOREST_LANES];
            for (int j = 0; j < FOREST_LANES; j++) base[j] = q[j] = nodes + f->tree_root[t + j];
            for (bool live = true; live;) {
                live = false;
                for (int j = 0; j < FOREST_LANES; j++) {
                    if (q[j]->feat == 0xFFFF) continue;
                    float v = x[q[j]->feat];
                    unsigned l = q[j]->left;
                    q[j] = base[j] + (l & 0x7FFF) + (isnan(v) ? !(l >> 15) : !(v < q[j]->value));
                    live = true;
                }
            }
            for (int j = 0; j < FOREST_LANES; j++) o[f->tree_out[t + j]] += q[j]->value;
        }
        for (; t < f->ntrees; t++) {
            const ns_forest_cnode *base = nodes + f->tree_root[t], *q = base;
            while (q->feat != 0xFFFF) {
                float v = x[q->feat];
                unsigned l = q->left;
                q = base + (l & 0x7FFF) + (isnan(v) ? !(l >> 15) : !(v < q->value));
            }
            o[f->tree_out[t]] += q->value;
        }
    }
}

void ns_forest_predict(const ns_forest *f, const float *X, int n, float *out)
{
    if (f->cnodes) {
        predict_compact(f, X, n, out);
        return;
    }
    const ns_forest_node *nodes = f->nodes;
    const int32_t *missing = f->missing;
    for (int r = 0; r < n; r++) {
        const float *x = X + (size_t)r * (size_t)f->nfeat;
        float *o = out + (size_t)r * (size_t)f->nout;
        for (int k = 0; k < f->nout; k++) o[k] = f->base_score;
        int t = 0;
        for (; t + FOREST_LANES <= f->ntrees; t += FOREST_LANES) {
            int32_t nd[FOREST_LANES];
            const ns_forest_node *q[FOREST_LANES];
            for (int j = 0; j < FOREST_LANES; j++) nd[j] = f->tree_root[t + j], q[j] = &nodes[nd[j]];
            for (bool live = true; live;) {
                live = false;
                for (int j = 0; j < FOREST_LANES; j++) {
                    if (q[j]->feat < 0) continue;
                    float v = x[q[j]->feat];
                    nd[j] = isnan(v) ? missing[nd[j]] : (v < q[j]->value ? q[j]->left : q[j]->right);
                    q[j] = &nodes[nd[j]];
                    live = true;
                }
            }
            for (int j = 0; j < FOREST_LANES; j++) o[f->tree_out[t + j]] += q[j]->value;
        }
        for (; t < f->ntrees; t++) {
            int32_t nd = f->tree_root[t];
            const ns_forest_node *q = &nodes[nd];
            while (q->feat >= 0) {
                float v = x[q->feat];
                nd = isnan(v) ? missing[nd] : (v < q->value ? q->left : q->right);
                q = &nodes[nd];
            }
            o[f->tree_out[t]] += q->value;
        }
    }
}

/* ---- memoised single-input prediction ---- */

void ns_forest_memo_init(ns_forest_memo *m) { memset(m, 0, sizeof *m); }

void ns_forest_memo_free(ns_forest_memo *m)
{
    free(m->x), free(m->leaf), free(m->stamp), free(m->dirty), free(m->ftree_off), free(m->ftree);
    free(m->path), free(m->thr), free(m->went_left), free(m->nan_left), free(m->plen);
    ns_forest_memo_init(m);
}

enum { MEMO_PATH = 8, PATH_UNKNOWN = 0xFF };

/* Tree t walked for x from the general form: its leaf and path in m. */
static void walk_general(const ns_forest *f, ns_forest_memo *m, int t, const float *x)
{
    int32_t nd = f->tree_root[t];
    const ns_forest_node *q = &f->nodes[nd];
    uint16_t *path = m->path + (size_t)t * MEMO_PATH;
    float *thr = m->thr + (size_t)t * MEMO_PATH;
    unsigned went = 0, dl = 0;
    int depth = 0;
    while (q->feat >= 0) {
        float v = x[q->feat];
        bool nan_left = f->missing[nd] == q->left;
        bool left = isnan(v) ? nan_left : v < q->value;
        if (depth < MEMO_PATH) {
            path[depth] = (uint16_t)q->feat;
            thr[depth] = q->value;
            went |= (unsigned)left << depth;
            dl |= (unsigned)nan_left << depth;
        }
        depth++;
        nd = isnan(v) ? f->missing[nd] : (v < q->value ? q->left : q->right);
        q = &f->nodes[nd];
    }
    for (int d = depth; d < MEMO_PATH; d++) path[d] = 0xFFFF;
    m->leaf[t] = q->value;
    m->went_left[t] = (uint8_t)went;
    m->nan_left[t] = (uint8_t)dl;
    m->plen[t] = depth <= MEMO_PATH && f->nfeat < 0xFFFF ? (uint8_t)depth : PATH_UNKNOWN;
}

/* Trees ts[0 … n) walked for x (the compact form in lockstep: independent
 * loads in flight), each one's leaf value and the features, thresholds and
 * directions of its path (the first MEMO_PATH nodes; more: unknown)
 * recorded in m. */
static void walk_trees(const ns_forest *f, ns_forest_memo *m, const float *x, const int *ts, int n)
{
    if (!f->cnodes) {
        for (int k = 0; k < n; k++) walk_general(f, m, ts[k], x);
        return;
    }
    for (int k = 0; k < n; k += FOREST_LANES) {
        int L = n - k < FOREST_LANES ? n - k : FOREST_LANES;
        const ns_forest_cnode *base[FOREST_LANES], *q[FOREST_LANES];
        uint16_t *path[FOREST_LANES];
        float *thr[FOREST_LANES];
        unsigned went[FOREST_LANES], dl[FOREST_LANES];
        int depth[FOREST_LANES];
        for (int j = 0; j < L; j++) {
            base[j] = q[j] = f->cnodes + f->tree_root[ts[k + j]];
            path[j] = m->path + (size_t)ts[k + j] * MEMO_PATH;
            thr[j] = m->thr + (size_t)ts[k + j] * MEMO_PATH;
            went[j] = dl[j] = 0;
            depth[j] = 0;
        }
        for (bool live = true; live;) {
            live = false;
            for (int j = 0; j < L; j++) {
                if (q[j]->feat == 0xFFFF) continue;
                float v = x[q[j]->feat];
                unsigned l = q[j]->left;
                unsigned right = isnan(v) ? !(l >> 15) : !(v < q[j]->value);
                if (depth[j] < MEMO_PATH) {
                    path[j][depth[j]] = q[j]->feat;
                    thr[j][depth[j]] = q[j]->value;
                    went[j] |= (right ^ 1u) << depth[j];
                    dl[j] |= (l >> 15) << depth[j];
                }
                depth[j]++;
                q[j] = base[j] + (l & 0x7FFF) + right;
                live = true;
            }
        }
        for (int j = 0; j < L; j++) {
            int t = ts[k + j];
            for (int d = depth[j]; d < MEMO_PATH; d++) path[j][d] = 0xFFFF;
            m->leaf[t] = q[j]->value;
            m->went_left[t] = (uint8_t)went[j];
            m->nan_left[t] = (uint8_t)dl[j];
            m->plen[t] = depth[j] <= MEMO_PATH ? (uint8_t)depth[j] : PATH_UNKNOWN;
        }
    }
}

/* Bit 2d (d < 8) set where the path p[0..8) tests feature j. */
static inline unsigned path_hits(const uint16_t *p, int j)
{
#if defined(__SSE2__)
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi16(v, _mm_set1_epi16((short)(uint16_t)j))) & 0x5555u;
#else
    unsigned r = 0;
    for (int d = 0; d < MEMO_PATH; d++)
        if (p[d] == (uint16_t)j) r |= 1u << (2 * d);
    return r;
#endif
}

/* Whether tree t's last walk goes another way for the new value v of
 * feature j (its path tests j at a node where v leads to the other child). */
static inline bool turns(const ns_forest_memo *m, int t, int j, float v)
{
    if (m->plen[t] == PATH_UNKNOWN) return true;
    unsigned hits = path_hits(m->path + (size_t)t * MEMO_PATH, j);
    if (!hits) return false;
    const float *thr = m->thr + (size_t)t * MEMO_PATH;
    unsigned went = m->went_left[t], dl = m->nan_left[t];
    bool nan = isnan(v);
    do {
        int d = __builtin_ctz(hits) >> 1;
        hits &= hits - 1;
        unsigned left = nan ? (dl >> d) & 1u : (unsigned)(v < thr[d]);
        if (left != ((went >> d) & 1u)) return true;
    } while (hits);
    return false;
}

static inline int node_feat(const ns_forest *f, int i)
{
    if (f->cnodes) return f->cnodes[i].feat == 0xFFFF ? -1 : (int)f->cnodes[i].feat;
    return f->feat[i];
}

static void memo_build(const ns_forest *f, ns_forest_memo *m)
{
    size_t T = (size_t)f->ntrees + 1, F = (size_t)f->nfeat + 1;
    m->x = ns_xmalloc(F * sizeof(float));
    m->leaf = ns_xmalloc(T * sizeof(float));
    m->stamp = ns_xcalloc(T, sizeof(uint32_t));
    m->dirty = ns_xmalloc(T * sizeof(int));
    m->path = ns_xmalloc(T * MEMO_PATH * sizeof(uint16_t));
    m->thr = ns_xmalloc(T * MEMO_PATH * sizeof(float));
    m->went_left = ns_xmalloc(T);
    m->nan_left = ns_xmalloc(T);
    m->plen = ns_xmalloc(T);
    m->ftree_off = ns_xcalloc(F + 1, sizeof(int));
    /* each (feature, tree) pair once: last[feature] = the last tree counted.
     * Branch-free (leaves and splits alternate unpredictably): a leaf counts
     * as feature nfeat, a slot past the real ones, and leaves and repeated
     * pairs are written into the spare slot ftree[total]. */
    int nf = f->nfeat;
    int *last = ns_xmalloc(F * sizeof(int)), *cnt = ns_xcalloc(F + 1, sizeof(int));
    for (size_t j = 0; j < F; j++) last[j] = -1;
    for (int t = 0; t < f->ntrees; t++) {
        int lo = f->tree_root[t], hi = t + 1 < f->ntrees ? f->tree_root[t + 1] : f->nnodes;
        for (int i = lo; i < hi; i++) {
            int j = node_feat(f, i);
            j = j < 0 ? nf : j;
            cnt[j] += last[j] != t;
            last[j] = t;
        }
    }
    for (int j = 0; j < nf; j++) m->ftree_off[j + 1] = m->ftree_off[j] + cnt[j];
    int total = m->ftree_off[nf];
    m->ftree = ns_xmalloc(((size_t)total + 1) * sizeof(int));
    int *fill = cnt; /* reused: the next free position of each feature's list */
    memcpy(fill, m->ftree_off, (size_t)nf * sizeof(int));
    for (size_t j = 0; j < F; j++) last[j] = -1;
    for (int t = 0; t < f->ntrees; t++) {
        int lo = f->tree_root[t], hi = t + 1 < f->ntrees ? f->tree_root[t + 1] : f->nnodes;
        for (int i = lo; i < hi; i++) {
            int j = node_feat(f, i);
            j = j < 0 ? nf : j;
            int fresh = j < nf && last[j] != t;
            m->ftree[fresh ? fill[j] : total] = t;
            fill[j] += fresh;
            last[j] = t;
        }
    }
    free(last);
    free(cnt);
}

void ns_forest_predict_memo(const ns_forest *f, ns_forest_memo *m, const float *x, float *out)
{
    if (!m->ftree_off) memo_build(f, m);
    int n = 0;
    if (!m->valid) {
        for (int t = 0; t < f->ntrees; t++) m->dirty[n++] = t;
    } else {
        if (++m->now == 0) { /* stamps wrapped: clear them */
            memset(m->stamp, 0, sizeof(uint32_t) * (size_t)f->ntrees);
            m->now = 1;
        }
        for (int j = 0; j < f->nfeat; j++) {
            if (memcmp(&x[j], &m->x[j], sizeof(float)) == 0) continue;
            float v = x[j];
            for (int k = m->ftree_off[j]; k < m->ftree_off[j + 1]; k++) {
                int t = m->ftree[k];
                if (m->stamp[t] == m->now || !turns(m, t, j, v)) continue;
                m->stamp[t] = m->now;
                m->dirty[n++] = t;
            }
        }
    }
    walk_trees(f, m, x, m->dirty, n);
    memcpy(m->x, x, sizeof(float) * (size_t)f->nfeat);
    m->valid = true;
    for (int k = 0; k < f->nout; k++) out[k] = f->base_score;
    if (f->round_major) { /* a round at a time: each output's terms in tree order, as below */
        int R = f->nout;
        for (int t0 = 0; t0 < f->ntrees; t0 += R) {
            const float *l = m->leaf + t0;
            int w = f->ntrees - t0 < R ? f->ntrees - t0 : R, k = 0;
#if defined(__SSE2__)
            for (; k + 4 <= w; k += 4) _mm_storeu_ps(out + k, _mm_add_ps(_mm_loadu_ps(out + k), _mm_loadu_ps(l + k)));
#endif
            for (; k < w; k++) out[k] += l[k];
        }
        return;
    }
    for (int t = 0; t < f->ntrees; t++) out[f->tree_out[t]] += m->leaf[t];
}
