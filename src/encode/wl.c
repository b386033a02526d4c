/* wl.c — ILG graphs and WL colour refinement (WLPlan's algorithm), colour
 * vocabularies (load, fit, save) and WL-based action encodings.
 *
 * Per state the encoder builds the graph into preallocated CSR arrays
 * (objects, goal nodes, then the state's non-goal atoms), then refines it L
 * times.  A node's key is built in a scratch buffer, sorted (insertion sort
 * for short lists), and looked up in the layer's hash table; counts gather in
 * a dense accumulator whose touched entries are emitted sorted and reset. */
#include "nextstate/encode/wl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/util/json.h"

/* ---- small helpers ----------------------------------------------------- */

/* "name/arity" comparison, WLPlan's predicate order. */
typedef struct named {
    const char *name;
    int arity;
    int id;
} named;

static int cmp_name_arity(const void *a, const void *b)
{
    const named *x = a, *y = b;
    char bx[320], by[320];
    snprintf(bx, sizeof bx, "%s/%d", x->name, x->arity);
    snprintf(by, sizeof by, "%s/%d", y->name, y->arity);
    int c = strcmp(bx, by);
    return c ? c : x->id - y->id;
}

int ns_wl_make_key(int radix, bool multiset, const int *colours, const int *labels, int n, int own, int *key)
{
    for (int i = 0; i < n; i++) key[i] = radix * colours[i] + labels[i];
    ns_sort_int(key, n);
    if (!multiset && n > 1) {
        int m = 1;
        for (int i = 1; i < n; i++)
            if (key[i] != key[m - 1]) key[m++] = key[i];
        n = m;
    }
    key[n] = own;
    return n + 1;
}

/* ---- vocabulary -------------------------------------------------------- */

static void vocab_alloc_layers(ns_wl_vocab *v)
{
    int nl = v->iterations + 1;
    v->keys = ns_xcalloc((size_t)nl, sizeof(ns_tupleset));
    v->ids = ns_xcalloc((size_t)nl, sizeof(int *));
    v->ids_cap = ns_xcalloc((size_t)nl, sizeof(size_t));
    for (int t = 0; t < nl; t++) ns_tupleset_init(&v->keys[t]);
}

static void vocab_set_radix(ns_wl_vocab *v)
{
    v->radix = 1;
    for (int i = 0; i < v->npreds; i++)
        if (v->pred_arity[i] > v->radix) v->radix = v->pred_arity[i];
    v->init_lut_n = 1 + 5 * v->npreds;
}

void ns_wl_vocab_init(ns_wl_vocab *v, const ns_domain *d, int iterations, bool multiset)
{
    memset(v, 0, sizeof *v);
    v->domain_name = ns_xstrdup(d->name ? d->name : "");
    v->iterations = iterations < 0 ? 0 : iterations;
    v->multiset = multiset;
    snprintf(v->package_version, sizeof v->package_version, "2.1.0");
    named *ps = ns_xmalloc(sizeof(named) * ((size_t)d->npreds + 1));
    for (int i = 0; i < d->npreds; i++) ps[i] = (named){d->preds[i].name, d->preds[i].arity, i};
    qsort(ps, (size_t)d->npreds, sizeof(named), cmp_name_arity);
    v->npreds = d->npreds;
    v->pred_names = ns_xcalloc((size_t)d->npreds + 1, sizeof(char *));
    v->pred_arity = ns_xcalloc((size_t)d->npreds + 1, sizeof(int));
    for (int i = 0; i < d->npreds; i++) {
        v->pred_names[i] = ns_xstrdup(ps[i].name);
        v->pred_arity[i] = ps[i].arity;
    }
    free(ps);
    v->nconstants = d->nconstants;
    v->constants = ns_xcalloc((size_t)d->nconstants + 1, sizeof(char *));
    for (int i = 0; i < d->nconstants; i++) v->constants[i] = ns_xstrdup(d->constants[i]);
    qsort(v->constants, (size_t)v->nconstants, sizeof(char *), ns_cmp_str);
    named *as = ns_xmalloc(sizeof(named) * ((size_t)d->nactions + 1));
    for (int i = 0; i < d->nactions; i++) as[i] = (named){d->actions[i].name, d->actions[i].nparams, i};
    qsort(as, (size_t)d->nactions, sizeof(named), cmp_name_arity);
    v->nschemata = d->nactions;
    v->schema_names = ns_xcalloc((size_t)d->nactions + 1, sizeof(char *));
    v->schema_arity = ns_xcalloc((size_t)d->nactions + 1, sizeof(int));
    for (int i = 0; i < d->nactions; i++) {
        v->schema_names[i] = ns_xstrdup(as[i].name);
        v->schema_arity[i] = as[i].arity;
    }
    free(as);
    vocab_set_radix(v);
    vocab_alloc_layers(v);
    v->colour_layer = NULL;
    v->init_lut = ns_xmalloc(sizeof(int) * (size_t)v->init_lut_n);
    for (int i = 0; i < v->init_lut_n; i++) v->init_lut[i] = NS_WL_UNSEEN;
}

void ns_wl_vocab_free(ns_wl_vocab *v)
{
    free(v->domain_name);
    for (int i = 0; i < v->npreds; i++) free(v->pred_names[i]);
    free(v->pred_names);
    free(v->pred_arity);
    for (int i = 0; i < v->nconstants; i++) free(v->constants[i]);
    free(v->constants);
    for (int i = 0; i < v->nschemata; i++) free(v->schema_names[i]);
    free(v->schema_names);
    free(v->schema_arity);
    if (v->keys)
        for (int t = 0; t <= v->iterations; t++) {
            ns_tupleset_free(&v->keys[t]);
            free(v->ids[t]);
        }
    free(v->keys);
    free(v->ids);
    free(v->ids_cap);
    free(v->colour_layer);
    free(v->init_lut);
    memset(v, 0, sizeof *v);
}

int ns_wl_vocab_layer_size(const ns_wl_vocab *v, int t)
{
    return t < 0 || t > v->iterations ? 0 : v->keys[t].n;
}

int ns_wl_vocab_find(const ns_wl_vocab *v, int t, const int *key, int len)
{
    if (t == 0 && len == 1) return key[0] >= 0 && key[0] < v->init_lut_n ? v->init_lut[key[0]] : NS_WL_UNSEEN;
    int e = ns_tupleset_find(&v->keys[t], key, len);
    return e < 0 ? NS_WL_UNSEEN : v->ids[t][e];
}

/* Adds key with colour id to layer t; returns false when the key is
 * already there. */
static bool vocab_put(ns_wl_vocab *v, int t, const int *key, int len, int id)
{
    bool is_new;
    int e = ns_tupleset_insert(&v->keys[t], key, len, &is_new);
    if (!is_new) return false;
    NS_GROW(v->ids[t], v->ids_cap[t], (size_t)e + 1);
    v->ids[t][e] = id;
    return true;
}

static void vocab_build_lut(ns_wl_vocab *v)
{
    for (int i = 0; i < v->init_lut_n; i++) v->init_lut[i] = NS_WL_UNSEEN;
    for (int e = 0; e < v->keys[0].n; e++) {
        int len;
        const int *k = ns_tupleset_get(&v->keys[0], e, &len);
        if (len == 1 && k[0] >= 0 && k[0] < v->init_lut_n) v->init_lut[k[0]] = v->ids[0][e];
    }
}

/* Inserts key into layer t during fitting; returns its id. */
static int vocab_intern(ns_wl_vocab *v, int t, const int *key, int len)
{
    bool is_new;
    int e = ns_tupleset_insert(&v->keys[t], key, len, &is_new);
    if (!is_new) return v->ids[t][e];
    NS_GROW(v->ids[t], v->ids_cap[t], (size_t)e + 1);
    int id = v->ncolours++;
    v->ids[t][e] = id;
    v->colour_layer = ns_xrealloc(v->colour_layer, sizeof(int) * (size_t)v->ncolours);
    v->colour_layer[id] = t;
    return id;
}

bool ns_wl_vocab_equal(const ns_wl_vocab *a, const ns_wl_vocab *b)
{
    if (a->iterations != b->iterations || a->multiset != b->multiset || a->ncolours != b->ncolours ||
        a->npreds != b->npreds)
        return false;
    for (int i = 0; i < a->npreds; i++)
        if (strcmp(a->pred_names[i], b->pred_names[i]) || a->pred_arity[i] != b->pred_arity[i]) return false;
    for (int t = 0; t <= a->iterations; t++) {
        if (a->keys[t].n != b->keys[t].n) return false;
        for (int e = 0; e < a->keys[t].n; e++) {
            int len;
            const int *k = ns_tupleset_get(&a->keys[t], e, &len);
            int f = ns_tupleset_find(&b->keys[t], k, len);
            if (f < 0 || b->ids[t][f] != a->ids[t][e]) return false;
        }
    }
    return true;
}

/* ---- vocabulary JSON --------------------------------------------------- */

typedef struct rawkey {
    int *v;
    int n;
    int id;
    const char *text;
    int line, col;
} rawkey;

static ns_status parse_key(const char *s, rawkey *k, const char *path, int t, ns_error *err)
{
    int cap = 8;
    k->v = ns_xmalloc(sizeof(int) * (size_t)cap);
    k->n = 0;
    const char *p = s;
    for (;;) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p || x < INT_MIN || x > INT_MAX || (t > 0 && x < 0))
            return ns_error_set(err, NS_ERR_INPUT, path, k->line, k->col, "layer %d: malformed colour key \"%s\"", t,
                                s);
        if (k->n == cap) {
            cap *= 2;
            k->v = ns_xrealloc(k->v, sizeof(int) * (size_t)cap);
        }
        k->v[k->n++] = (int)x;
        if (*end == '\0') break;
        if (*end != '.')
            return ns_error_set(err, NS_ERR_INPUT, path, k->line, k->col, "layer %d: malformed colour key \"%s\"", t,
                                s);
        p = end + 1;
    }
    if (t == 0 && k->n != 1)
        return ns_error_set(err, NS_ERR_INPUT, path, k->line, k->col,
                            "layer 0: key \"%s\" must be a single initial colour", s);
    return NS_OK;
}

static bool key_is_flat(const rawkey *k, bool multiset)
{
    for (int i = 1; i + 1 < k->n; i++)
        if (multiset ? k->v[i] < k->v[i - 1] : k->v[i] <= k->v[i - 1]) return false;
    return true;
}

static bool key_is_triples(const rawkey *k, bool multiset, int radix)
{
    if ((k->n - 1) % 3) return false;
    for (int i = 0; i + 1 < k->n; i += 3) {
        int l = k->v[i], c = k->v[i + 1], n = k->v[i + 2];
        if (l < 0 || l >= radix || c < 0 || n < 1 || (!multiset && n != 1)) return false;
        if (i > 0) {
            int pl = k->v[i - 3], pc = k->v[i - 2];
            if (l < pl || (l == pl && c <= pc)) return false;
        }
    }
    return true;
}

static ns_status bad_vocab(ns_error *err, const char *path, const ns_json *at, const char *msg)
{
    return ns_error_set(err, NS_ERR_INPUT, path, at ? at->line : 0, at ? at->col : 0, "WL vocabulary: %s", msg);
}

static ns_status get_named_list(const ns_json *dom, const char *key, bool required, char ***names, int **arity,
                                int *n, const char *path, ns_error *err)
{
    const ns_json *a = ns_json_get(dom, key);
    *n = 0;
    *names = ns_xcalloc(1, sizeof(char *));
    *arity = ns_xcalloc(1, sizeof(int));
    if (!a) {
        if (!required) return NS_OK;
        return ns_error_set(err, NS_ERR_INPUT, path, dom->line, dom->col, "WL vocabulary: domain lacks \"%s\"", key);
    }
    if (a->kind != NS_JSON_ARRAY) return bad_vocab(err, path, a, "domain lists must be arrays");
    *names = ns_xrealloc(*names, sizeof(char *) * ((size_t)a->n + 1));
    *arity = ns_xrealloc(*arity, sizeof(int) * ((size_t)a->n + 1));
    for (int i = 0; i < a->n; i++) {
        const ns_json *e = &a->items[i];
        if (e->kind != NS_JSON_ARRAY || e->n != 2 || e->items[0].kind != NS_JSON_STRING ||
            e->items[1].kind != NS_JSON_NUMBER || !e->items[1].is_integer || e->items[1].integer < 0 ||
            e->items[1].integer > NS_MAX_ARITY)
            return bad_vocab(err, path, e, "a domain entry must be [name, arity]");
        (*names)[*n] = ns_xstrdup(e->items[0].string);
        (*arity)[*n] = (int)e->items[1].integer;
        (*n)++;
    }
    return NS_OK;
}

/* The vocabulary's header: format fields, iterations, hashing and the
 * domain (predicates, schemata, constants). */
static ns_status vocab_header_from_json(ns_wl_vocab *v, const ns_json *j, const char *path, ns_error *err)
{
    if (j->kind != NS_JSON_OBJECT) return bad_vocab(err, path, j, "the file must hold a JSON object");
    const char *s;
    if (ns_json_get_str(j, "feature_name", &s) && strcmp(s, "wl") != 0)
        return bad_vocab(err, path, ns_json_get(j, "feature_name"), "feature_name must be \"wl\"");
    if (ns_json_get_str(j, "graph_representation", &s) && strcmp(s, "ilg") != 0)
        return bad_vocab(err, path, ns_json_get(j, "graph_representation"), "graph_representation must be \"ilg\"");
    if (ns_json_get_str(j, "pruning", &s) && strcmp(s, "none") != 0)
        return bad_vocab(err, path, ns_json_get(j, "pruning"), "only pruning \"none\" is supported");
    if (ns_json_get_str(j, "package_version", &s)) snprintf(v->package_version, sizeof v->package_version, "%s", s);
    int64_t it;
    if (!ns_json_get_int(j, "iterations", &it) || it < 0 || it > 64)
        return bad_vocab(err, path, j, "missing or bad \"iterations\"");
    v->iterations = (int)it;
    const ns_json *ms = ns_json_get(j, "multiset_hash");
    if (!ms || ms->kind != NS_JSON_BOOL) return bad_vocab(err, path, j, "missing or bad \"multiset_hash\"");
    v->multiset = ms->boolean;
    const ns_json *dom = ns_json_get(j, "domain");
    if (!dom || dom->kind != NS_JSON_OBJECT) return bad_vocab(err, path, j, "missing \"domain\"");
    v->domain_name = ns_xstrdup(ns_json_get_str(dom, "name", &s) ? s : "");
    ns_status st = get_named_list(dom, "predicates", true, &v->pred_names, &v->pred_arity, &v->npreds, path, err);
    if (st) return st;
    st = get_named_list(dom, "schemata", false, &v->schema_names, &v->schema_arity, &v->nschemata, path, err);
    if (st) return st;
    const ns_json *co = ns_json_get(dom, "constant_objects");
    v->constants = ns_xcalloc(co && co->kind == NS_JSON_ARRAY ? (size_t)co->n + 1 : 1, sizeof(char *));
    if (co && co->kind == NS_JSON_ARRAY)
        for (int i = 0; i < co->n; i++) {
            if (co->items[i].kind != NS_JSON_STRING) return bad_vocab(err, path, co, "constant_objects must be strings");
            v->constants[v->nconstants++] = ns_xstrdup(co->items[i].string);
        }
    vocab_set_radix(v);
    v->init_lut = ns_xmalloc(sizeof(int) * (size_t)v->init_lut_n);
    return NS_OK;
}

/* Reads every key of the layers of ch into keys / layer_of (the format is
 * decided over all of them: *fmt AUTO becomes FLAT or TRIPLES). */
static ns_status read_colour_keys(ns_wl_vocab *v, const ns_json *ch, rawkey *keys, int *layer_of, int *nkeys,
                                  int *maxid_out, ns_wl_key_format *fmt, const char *path, ns_error *err)
{
    ns_status st = NS_OK;
    int nk = 0, maxid = -1;
    bool flat = true, triples = true;
    for (int t = 0; t < ch->n && st == NS_OK; t++) {
        const ns_json *L = &ch->items[t];
        for (int i = 0; i < L->n; i++) {
            rawkey *k = &keys[nk];
            k->text = L->keys[i];
            k->line = L->items[i].line;
            k->col = L->items[i].col;
            layer_of[nk] = t;
            nk++;
            if ((st = parse_key(L->keys[i], k, path, t, err))) break;
            const ns_json *val = &L->items[i];
            if (val->kind != NS_JSON_NUMBER || !val->is_integer || val->integer < 0 || val->integer >= INT_MAX / 4) {
                st = ns_error_set(err, NS_ERR_INPUT, path, val->line, val->col,
                                  "WL vocabulary: layer %d: key \"%s\" needs a non-negative integer id", t, k->text);
                break;
            }
            k->id = (int)val->integer;
            if (k->id > maxid) maxid = k->id;
            if (t > 0) {
                flat = flat && key_is_flat(k, v->multiset);
                triples = triples && key_is_triples(k, v->multiset, v->radix);
            }
        }
    }
    *nkeys = nk;
    *maxid_out = maxid;
    if (st == NS_OK) {
        if (*fmt == NS_WL_KEYS_AUTO) {
            if (!flat && !triples)
                st = bad_vocab(err, path, ch, "colour keys are neither sorted codes nor (label, colour, count) triples");
            *fmt = flat ? NS_WL_KEYS_FLAT : NS_WL_KEYS_TRIPLES;
        } else if (*fmt == NS_WL_KEYS_FLAT && !flat) {
            st = bad_vocab(err, path, ch, "colour keys are not sorted R*colour+label codes");
        } else if (*fmt == NS_WL_KEYS_TRIPLES && !triples) {
            st = bad_vocab(err, path, ch, "colour keys are not (label, colour, count) triples");
        }
    }
    return st;
}

/* Puts the nk keys read (read_colour_keys) into v's layers, triples turned
 * into sorted codes. */
static ns_status insert_colour_keys(ns_wl_vocab *v, const ns_json *ch, rawkey *keys, const int *layer_of, int nk,
                                    int maxid, ns_wl_key_format fmt, const char *path, ns_error *err)
{
    ns_status st = NS_OK;
    v->ncolours = maxid + 1;
    v->colour_layer = ns_xmalloc(sizeof(int) * ((size_t)v->ncolours + 1));
    for (int i = 0; i < v->ncolours; i++) v->colour_layer[i] = -1;
    int *buf = NULL;
    size_t bcap = 0;
    for (int i = 0; i < nk && st == NS_OK; i++) {
        rawkey *k = &keys[i];
        int t = layer_of[i];
        if (v->colour_layer[k->id] >= 0) {
            st = ns_error_set(err, NS_ERR_INPUT, path, k->line, k->col,
                              "WL vocabulary: colour id %d is used twice (layer %d key \"%s\")", k->id, t, k->text);
            break;
        }
        v->colour_layer[k->id] = t;
        const int *key = k->v;
        int len = k->n;
        if (t > 0 && fmt == NS_WL_KEYS_TRIPLES) {
            size_t need = 1;
            for (int q = 0; q + 1 < k->n; q += 3) need += (size_t)k->v[q + 2];
            if (need > (1u << 24)) {
                st = bad_vocab(err, path, ch, "a colour key has too many neighbours");
                break;
            }
            NS_GROW(buf, bcap, need);
            len = 0;
            for (int q = 0; q + 1 < k->n; q += 3) {
                if (k->v[q + 1] > (INT_MAX - v->radix) / v->radix) {
                    st = bad_vocab(err, path, ch, "a colour in a key is too large");
                    break;
                }
                for (int c = 0; c < k->v[q + 2]; c++) buf[len++] = v->radix * k->v[q + 1] + k->v[q];
            }
            if (st) break;
            ns_sort_int(buf, len);
            buf[len++] = k->v[k->n - 1];
            key = buf;
        }
        if (!vocab_put(v, t, key, len, k->id))
            st = ns_error_set(err, NS_ERR_INPUT, path, k->line, k->col,
                              "WL vocabulary: layer %d: key \"%s\" appears twice", t, k->text);
    }
    free(buf);
    return st;
}

/* colour_to_layer, when present, must agree with the colours read. */
static ns_status check_colour_to_layer(const ns_wl_vocab *v, const ns_json *j, const char *path, ns_error *err)
{
    const ns_json *cl = ns_json_get(j, "colour_to_layer");
    if (cl && cl->kind == NS_JSON_ARRAY)
        for (int i = 0; i < cl->n; i++) {
            const ns_json *e = &cl->items[i];
            if (e->kind != NS_JSON_ARRAY || e->n != 2 || !e->items[0].is_integer || !e->items[1].is_integer)
                return bad_vocab(err, path, e, "colour_to_layer entries must be [id, layer]");
            int64_t id = e->items[0].integer, t = e->items[1].integer;
            if (id < 0 || id >= v->ncolours || v->colour_layer[id] != t)
                return bad_vocab(err, path, e, "colour_to_layer disagrees with colour_hash");
        }
    return NS_OK;
}

static ns_status vocab_from_json(ns_wl_vocab *v, const ns_json *j, const char *path, ns_wl_key_format fmt,
                                 ns_error *err)
{
    ns_status st = vocab_header_from_json(v, j, path, err);
    if (st) return st;
    const ns_json *ch = ns_json_get(j, "colour_hash");
    if (!ch || ch->kind != NS_JSON_ARRAY) return bad_vocab(err, path, j, "missing \"colour_hash\" (a list of layers)");
    if (ch->n != v->iterations + 1) {
        return ns_error_set(err, NS_ERR_INPUT, path, ch->line, ch->col,
                            "WL vocabulary: colour_hash has %d layers, iterations = %d needs %d", ch->n, v->iterations,
                            v->iterations + 1);
    }
    vocab_alloc_layers(v);
    int total = 0;
    for (int t = 0; t < ch->n; t++) {
        if (ch->items[t].kind != NS_JSON_OBJECT) return bad_vocab(err, path, &ch->items[t], "a layer must be an object");
        total += ch->items[t].n;
    }
    rawkey *keys = ns_xcalloc((size_t)total + 1, sizeof(rawkey));
    int *layer_of = ns_xcalloc((size_t)total + 1, sizeof(int));
    int nk = 0, maxid = -1;
    st = read_colour_keys(v, ch, keys, layer_of, &nk, &maxid, &fmt, path, err);
    if (st == NS_OK) st = insert_colour_keys(v, ch, keys, layer_of, nk, maxid, fmt, path, err);
    for (int i = 0; i < nk; i++) free(keys[i].v);
    free(keys);
    free(layer_of);
    if (st == NS_OK) st = check_colour_to_layer(v, j, path, err);
    if (st == NS_OK) vocab_build_lut(v);
    return st;
}

ns_status ns_wl_vocab_parse(ns_wl_vocab *v, const char *text, size_t len, const char *path, ns_wl_key_format fmt,
                            ns_error *err)
{
    memset(v, 0, sizeof *v);
    ns_json j;
    ns_status st = ns_json_parse(&j, text, len, path, err);
    if (st) return st;
    st = vocab_from_json(v, &j, path, fmt, err);
    ns_json_free(&j);
    if (st) ns_wl_vocab_free(v);
    return st;
}

ns_status ns_wl_vocab_load(ns_wl_vocab *v, const char *path, ns_wl_key_format fmt, ns_error *err)
{
    memset(v, 0, sizeof *v);
    char *text;
    size_t len;
    ns_status st = ns_read_file(path, &text, &len, err);
    if (st) return st;
    st = ns_wl_vocab_parse(v, text, len, path, fmt, err);
    free(text);
    return st;
}

typedef struct keystr {
    char *s;
    int id;
} keystr;

static int cmp_keystr(const void *a, const void *b)
{
    return strcmp(((const keystr *)a)->s, ((const keystr *)b)->s);
}

static char *key_text(const ns_wl_vocab *v, int t, const int *k, int len, ns_wl_key_format fmt)
{
    ns_buf b;
    ns_buf_init(&b);
    if (t == 0 || fmt != NS_WL_KEYS_TRIPLES) {
        for (int i = 0; i < len; i++) ns_buf_printf(&b, i ? ".%d" : "%d", k[i]);
    } else {
        /* (label, colour, count) sorted by (label, colour) */
        int n = len - 1;
        int *lc = ns_xmalloc(sizeof(int) * 2 * ((size_t)n + 1));
        for (int i = 0; i < n; i++) {
            lc[2 * i] = k[i] % v->radix;
            lc[2 * i + 1] = k[i] / v->radix;
        }
        /* k is sorted by colour then label; re-sort pairs by (label, colour):
         * a stable pass per label keeps colours ascending */
        bool first = true;
        for (int l = 0; l < v->radix; l++) {
            for (int i = 0; i < n;) {
                if (lc[2 * i] != l) {
                    i++;
                    continue;
                }
                int c = lc[2 * i + 1], cnt = 0, j = i;
                while (j < n && k[j] == k[i]) {
                    cnt++;
                    j++;
                }
                ns_buf_printf(&b, first ? "%d.%d.%d" : ".%d.%d.%d", l, c, cnt);
                first = false;
                i = j;
            }
        }
        free(lc);
        ns_buf_printf(&b, first ? "%d" : ".%d", k[len - 1]);
    }
    return b.data ? b.data : ns_xstrdup("");
}

static void put_named(ns_buf *b, char **names, const int *arity, int n)
{
    ns_buf_putc(b, '[');
    for (int i = 0; i < n; i++) {
        ns_buf_puts(b, i ? ", [" : "[");
        ns_json_put_str(b, names[i]);
        ns_buf_printf(b, ", %d]", arity[i]);
    }
    ns_buf_putc(b, ']');
}

void ns_wl_vocab_write(const ns_wl_vocab *v, ns_wl_key_format fmt, ns_buf *b)
{
    ns_buf_puts(b, "{\n    \"colour_hash\": [");
    for (int t = 0; t <= v->iterations; t++) {
        const ns_tupleset *ts = &v->keys[t];
        keystr *ks = ns_xmalloc(sizeof(keystr) * ((size_t)ts->n + 1));
        for (int e = 0; e < ts->n; e++) {
            int len;
            const int *k = ns_tupleset_get(ts, e, &len);
            ks[e].s = key_text(v, t, k, len, fmt);
            ks[e].id = v->ids[t][e];
        }
        qsort(ks, (size_t)ts->n, sizeof(keystr), cmp_keystr);
        ns_buf_puts(b, t ? ",\n        {" : "\n        {");
        for (int e = 0; e < ts->n; e++) {
            ns_buf_puts(b, e ? ",\n            " : "\n            ");
            ns_json_put_str(b, ks[e].s);
            ns_buf_printf(b, ": %d", ks[e].id);
            free(ks[e].s);
        }
        ns_buf_puts(b, ts->n ? "\n        }" : "}");
        free(ks);
    }
    ns_buf_puts(b, "\n    ],\n    \"colour_to_layer\": [");
    bool first = true;
    for (int id = 0; id < v->ncolours; id++) {
        if (v->colour_layer[id] < 0) continue;
        ns_buf_printf(b, first ? "[%d, %d]" : ", [%d, %d]", id, v->colour_layer[id]);
        first = false;
    }
    ns_buf_puts(b, "],\n    \"domain\": {\"constant_objects\": [");
    for (int i = 0; i < v->nconstants; i++) {
        if (i) ns_buf_puts(b, ", ");
        ns_json_put_str(b, v->constants[i]);
    }
    ns_buf_puts(b, "], \"functions\": [], \"name\": ");
    ns_json_put_str(b, v->domain_name ? v->domain_name : "");
    ns_buf_puts(b, ", \"predicates\": ");
    put_named(b, v->pred_names, v->pred_arity, v->npreds);
    ns_buf_puts(b, ", \"schemata\": ");
    put_named(b, v->schema_names, v->schema_arity, v->nschemata);
    ns_buf_printf(b,
                  "},\n    \"feature_name\": \"wl\",\n    \"graph_representation\": \"ilg\",\n"
                  "    \"iterations\": %d,\n    \"multiset_hash\": %s,\n    \"package_version\": ",
                  v->iterations, v->multiset ? "true" : "false");
    ns_json_put_str(b, v->package_version[0] ? v->package_version : "2.1.0");
    ns_buf_puts(b, ",\n    \"pruning\": \"none\",\n    \"weights\": []\n}\n");
}

ns_status ns_wl_vocab_save(const ns_wl_vocab *v, const char *path, ns_wl_key_format fmt, ns_error *err)
{
    ns_buf b;
    ns_buf_init(&b);
    ns_wl_vocab_write(v, fmt, &b);
    ns_status st = ns_write_file_atomic(path, b.data, b.len, err);
    ns_buf_free(&b);
    return st;
}

/* ---- encoder ----------------------------------------------------------- */

void ns_wl_opts_default(ns_wl_opts *o)
{
    o->iterations = -1;
    o->statics = true;
}

typedef struct objref {
    const char *name;
    bool constant;
    int id;
} objref;

static int cmp_objref(const void *a, const void *b)
{
    const objref *x = a, *y = b;
    if (x->constant != y->constant) return x->constant ? -1 : 1;
    int c = strcmp(x->name, y->name);
    return c ? c : x->id - y->id;
}

static bool lit_equal(const ns_lit *a, const ns_lit *b)
{
    if (a->pred != b->pred || a->neg != b->neg || a->nargs != b->nargs) return false;
    for (int i = 0; i < a->nargs; i++)
        if (a->args[i] != b->args[i]) return false;
    return true;
}

/* Whole atom-argument pool length of the task. */
static int args_pool_len(const ns_task *t)
{
    int n = 0;
    for (int i = 0; i < t->natoms; i++)
        if (t->atoms[i].args_off + t->atoms[i].nargs > n) n = t->atoms[i].args_off + t->atoms[i].nargs;
    for (int i = 0; i < t->nstatics; i++)
        if (t->statics[i].args_off + t->statics[i].nargs > n) n = t->statics[i].args_off + t->statics[i].nargs;
    return n;
}

/* Colour of node kinds; a non-goal atom of vocabulary predicate p. */
static inline int ilg_colour(int p, int kind) { return 1 + 5 * p + kind; }

static void ensure_acc(ns_wl_encoder *e)
{
    int d = e->vocab->ncolours;
    if (e->acc_n == d && e->acc) return;
    free(e->acc);
    free(e->touched);
    e->acc = ns_xcalloc((size_t)d + 1, sizeof(float));
    e->touched = ns_xmalloc(sizeof(int) * ((size_t)d + 1));
    e->acc_n = d;
    e->ntouched = 0;
}

static ns_status enc_fail(ns_wl_encoder *e, ns_error *err, const char *fmt, const char *what)
{
    ns_wl_encoder_free(e);
    return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, fmt, what);
}

/* The vocabulary has no colour for predicate `pred` (`goal`: of a goal) of
 * the task's domain; the message names both domains when they differ (a
 * model learned on another domain). */
static ns_status lacks(ns_wl_encoder *e, ns_error *err, bool goal, const char *pred)
{
    const char *mine = e->vocab->domain_name ? e->vocab->domain_name : "", *theirs = e->task->domain->name;
    char b[512];
    if (theirs && *mine && strcmp(mine, theirs))
        snprintf(b, sizeof b, "the model was learned on domain '%s', not '%s' (no %spredicate '%s' in its vocabulary)",
                 mine, theirs, goal ? "goal " : "", pred);
    else
        snprintf(b, sizeof b, "the vocabulary lacks %spredicate '%s'", goal ? "goal " : "", pred);
    return enc_fail(e, err, "WL: %s", b);
}

ns_status ns_wl_encoder_init(ns_wl_encoder *e, const ns_wl_vocab *v, const ns_task *t, const ns_wl_opts *opts,
                             ns_error *err)
{
    memset(e, 0, sizeof *e);
    e->vocab = v;
    e->task = t;
    ns_wl_opts def;
    ns_wl_opts_default(&def);
    if (!opts) opts = &def;
    e->iterations = opts->iterations < 0 ? v->iterations : opts->iterations;
    e->statics = opts->statics;
    if (e->iterations > v->iterations) {
        char b[64];
        snprintf(b, sizeof b, "%d > %d", e->iterations, v->iterations);
        return enc_fail(e, err, "WL: more iterations than the vocabulary has (%s)", b);
    }
    const ns_domain *d = t->domain;
    const ns_problem *p = t->problem;
    /* predicates by name and arity */
    e->pred_colour = ns_xmalloc(sizeof(int) * ((size_t)d->npreds + 1));
    for (int i = 0; i < d->npreds; i++) {
        e->pred_colour[i] = -1;
        for (int j = 0; j < v->npreds; j++)
            if (v->pred_arity[j] == d->preds[i].arity && !strcmp(v->pred_names[j], d->preds[i].name)) {
                e->pred_colour[i] = j;
                break;
            }
    }
    /* objects: constants sorted, then problem objects sorted */
    e->nobj = p->nobjects;
    objref *os = ns_xmalloc(sizeof(objref) * ((size_t)e->nobj + 1));
    for (int i = 0; i < e->nobj; i++) os[i] = (objref){p->objects[i], i < d->nconstants, i};
    qsort(os, (size_t)e->nobj, sizeof(objref), cmp_objref);
    e->obj_node = ns_xmalloc(sizeof(int) * ((size_t)e->nobj + 1));
    e->node_obj = ns_xmalloc(sizeof(int) * ((size_t)e->nobj + 1));
    for (int i = 0; i < e->nobj; i++) {
        e->node_obj[i] = os[i].id;
        e->obj_node[os[i].id] = i;
    }
    free(os);
    /* atom arguments as nodes, atom colours */
    int plen = args_pool_len(t);
    e->argnode = ns_xmalloc(sizeof(int) * ((size_t)plen + 1));
    for (int i = 0; i < plen; i++) e->argnode[i] = e->obj_node[t->atom_args[i]];
    int na = t->natoms, ns = t->nstatics;
    e->atom_colour = ns_xmalloc(sizeof(int) * ((size_t)na + (size_t)ns + 1));
    int64_t edges = 0;
    for (int i = 0; i < na + ns; i++) {
        const ns_atom *a = i < na ? &t->atoms[i] : &t->statics[i - na];
        int pc = e->pred_colour[a->pred];
        if (pc < 0 && (i < na || e->statics))
            return lacks(e, err, false, d->preds[a->pred].name);
        e->atom_colour[i] = pc < 0 ? -1 : ilg_colour(pc, NS_ILG_NON_GOAL);
        edges += 2 * a->nargs;
    }
    /* goals: positive first, then negative, in problem order, duplicates once */
    e->goal_fluent = ns_xmalloc(sizeof(int) * ((size_t)p->ngoal + 1));
    e->goal_static = ns_xcalloc((size_t)p->ngoal + 1, sizeof(bool));
    e->goal_colour = ns_xmalloc(sizeof(int) * ((size_t)p->ngoal + 1));
    e->goal_args_off = ns_xmalloc(sizeof(int) * ((size_t)p->ngoal + 1));
    e->goal_nargs = ns_xmalloc(sizeof(int) * ((size_t)p->ngoal + 1));
    e->goal_args = ns_xmalloc(sizeof(int) * ((size_t)p->ngoal * NS_MAX_ARITY + 1));
    e->atom_goal = ns_xmalloc(sizeof(int) * ((size_t)na + 1));
    e->static_goal = ns_xmalloc(sizeof(int) * ((size_t)ns + 1));
    for (int i = 0; i < na; i++) e->atom_goal[i] = -1;
    for (int i = 0; i < ns; i++) e->static_goal[i] = -1;
    ns_tupleset sidx;
    ns_tupleset_init(&sidx);
    for (int i = 0; i < ns; i++) {
        int key[NS_MAX_ARITY + 1] = {t->statics[i].pred};
        memcpy(key + 1, t->atom_args + t->statics[i].args_off, sizeof(int) * (size_t)t->statics[i].nargs);
        ns_tupleset_insert(&sidx, key, t->statics[i].nargs + 1, NULL);
    }
    int nargs_used = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < p->ngoal; i++) {
            const ns_lit *l = &p->goal[i];
            if (l->pred == NS_PRED_EQUAL || l->neg != (pass == 1)) continue;
            bool dup = false;
            for (int j = 0; j < i && !dup; j++) dup = lit_equal(&p->goal[j], l);
            if (dup) continue;
            int pc = e->pred_colour[l->pred];
            if (pc < 0) {
                ns_tupleset_free(&sidx);
                return lacks(e, err, true, d->preds[l->pred].name);
            }
            int g = e->ngoal++;
            e->goal_fluent[g] = ns_task_find_atom(t, l->pred, l->args, l->nargs);
            int key[NS_MAX_ARITY + 1] = {l->pred};
            memcpy(key + 1, l->args, sizeof(int) * (size_t)l->nargs);
            int sid = ns_tupleset_find(&sidx, key, l->nargs + 1);
            e->goal_static[g] = sid >= 0;
            e->goal_colour[g] = ilg_colour(pc, l->neg ? NS_ILG_NEG_GOAL_FALSE : NS_ILG_POS_GOAL_FALSE);
            e->goal_args_off[g] = nargs_used;
            e->goal_nargs[g] = l->neg ? 0 : l->nargs;
            for (int k = 0; k < e->goal_nargs[g]; k++) e->goal_args[nargs_used++] = e->obj_node[l->args[k]];
            edges += 2 * e->goal_nargs[g];
            if (e->goal_fluent[g] >= 0) e->atom_goal[e->goal_fluent[g]] = g;
            if (sid >= 0) e->static_goal[sid] = g;
            if (!l->neg) e->npos_goal++;
        }
    ns_tupleset_free(&sidx);
    /* schemata */
    e->schema_index = ns_xmalloc(sizeof(int) * ((size_t)d->nactions + 1));
    for (int i = 0; i < d->nactions; i++) {
        e->schema_index[i] = -1;
        for (int j = 0; j < v->nschemata; j++)
            if (v->schema_arity[j] == d->actions[i].nparams && !strcmp(v->schema_names[j], d->actions[i].name))
                e->schema_index[i] = j;
    }
    e->max_arity = 0;
    for (int j = 0; j < v->nschemata; j++)
        if (v->schema_arity[j] > e->max_arity) e->max_arity = v->schema_arity[j];
    /* scratch */
    e->max_nodes = e->nobj + e->ngoal + na + ns;
    if (edges > INT_MAX / 2) return enc_fail(e, err, "WL: %s", "the task's graphs are too large");
    e->max_edges = (int)edges;
    size_t mn = (size_t)e->max_nodes + 1, me = (size_t)e->max_edges + 1;
    e->colour0 = ns_xmalloc(sizeof(int) * mn);
    e->atom_of_node = ns_xmalloc(sizeof(int) * mn);
    e->off = ns_xmalloc(sizeof(int) * (mn + 1));
    e->deg = ns_xmalloc(sizeof(int) * mn);
    e->col = ns_xmalloc(sizeof(int) * mn);
    e->col2 = ns_xmalloc(sizeof(int) * mn);
    e->order = ns_xmalloc(sizeof(int) * mn);
    e->nb = ns_xmalloc(sizeof(int) * me);
    e->lab = ns_xmalloc(sizeof(int) * me);
    e->key_cap = e->max_edges + 2;
    e->key = ns_xmalloc(sizeof(int) * (size_t)e->key_cap);
    e->objcol = ns_xmalloc(sizeof(int) * ((size_t)(e->iterations + 1) * (size_t)e->nobj + 1));
    for (int i = 0; i < (e->iterations + 1) * e->nobj; i++) e->objcol[i] = NS_WL_UNSEEN;
    return NS_OK;
}

void ns_wl_encoder_free(ns_wl_encoder *e)
{
    free(e->obj_node);
    free(e->node_obj);
    free(e->pred_colour);
    free(e->goal_fluent);
    free(e->goal_static);
    free(e->goal_colour);
    free(e->goal_args);
    free(e->goal_args_off);
    free(e->goal_nargs);
    free(e->argnode);
    free(e->atom_colour);
    free(e->atom_goal);
    free(e->static_goal);
    free(e->atom_rank);
    free(e->schema_index);
    free(e->colour0);
    free(e->atom_of_node);
    free(e->off);
    free(e->nb);
    free(e->lab);
    free(e->deg);
    free(e->col);
    free(e->col2);
    free(e->objcol);
    free(e->key);
    free(e->acc);
    free(e->touched);
    free(e->order);
    free(e->inc_off);
    free(e->inc_nb);
    free(e->inc_lab);
    free(e->inc_col);
    free(e->inc_lay);
    free(e->inc_state);
    free(e->inc_cnt);
    free(e->inc_nz);
    free(e->inc_nzw);
    free(e->inc_mark);
    free(e->inc_chg);
    free(e->inc_chg2);
    memset(e, 0, sizeof *e);
}

/* Ranks of the atoms' texts (fluents then statics), for the fitting order. */
typedef struct textref {
    char *s;
    int id;
} textref;

static int cmp_textref(const void *a, const void *b)
{
    const textref *x = a, *y = b;
    int c = strcmp(x->s, y->s);
    return c ? c : x->id - y->id;
}

static void compute_ranks(ns_wl_encoder *e)
{
    const ns_task *t = e->task;
    int n = t->natoms + t->nstatics;
    textref *r = ns_xmalloc(sizeof(textref) * ((size_t)n + 1));
    for (int i = 0; i < n; i++) {
        ns_buf b;
        ns_buf_init(&b);
        if (i < t->natoms) ns_task_atom_str(t, i, &b);
        else ns_task_static_str(t, i - t->natoms, &b);
        r[i].s = b.data;
        r[i].id = i;
    }
    qsort(r, (size_t)n, sizeof(textref), cmp_textref);
    e->atom_rank = ns_xmalloc(sizeof(int) * ((size_t)n + 1));
    for (int i = 0; i < n; i++) {
        e->atom_rank[r[i].id] = i;
        free(r[i].s);
    }
    free(r);
}

/* Sorts atom ids a[0..n) by rank (fitting only; allocates). */
static void sort_by_rank(const int *rank, int *a, int n)
{
    int64_t *k = ns_xmalloc(sizeof(int64_t) * ((size_t)n + 1));
    for (int i = 0; i < n; i++) k[i] = ((int64_t)rank[a[i]] << 32) | (int64_t)a[i];
    qsort(k, (size_t)n, sizeof(int64_t), ns_cmp_i64);
    for (int i = 0; i < n; i++) a[i] = (int)(k[i] & 0xffffffff);
    free(k);
}

/* ---- graph building ---------------------------------------------------- */

static inline const ns_atom *enc_atom(const ns_wl_encoder *e, int id)
{
    const ns_task *t = e->task;
    return id < t->natoms ? &t->atoms[id] : &t->statics[id - t->natoms];
}

/* Builds the ILG of state s (or of the goal state when goal_only) into the
 * encoder's CSR arrays.  canonical: state atoms in text order (fitting). */
static void build_graph(ns_wl_encoder *e, const ns_word *s, bool goal_only, bool canonical)
{
    const ns_task *t = e->task;
    int nobj = e->nobj, base = e->nobj + e->ngoal, m = 0;
    for (int i = 0; i < nobj; i++) e->colour0[i] = 0;
    for (int g = 0; g < e->ngoal; g++) e->colour0[nobj + g] = e->goal_colour[g];
    if (goal_only) {
        for (int g = 0; g < e->npos_goal; g++) e->colour0[nobj + g] -= 1;
    } else {
        for (int w = 0; w < t->nwords; w++) {
            ns_word x = s[w];
            while (x) {
                int a = (w << 6) + __builtin_ctzll(x);
                x &= x - 1;
                if (a >= t->natoms) break;
                int g = e->atom_goal[a];
                if (g >= 0) e->colour0[nobj + g] -= 1; /* FALSE -> TRUE */
                else e->order[m++] = a;
            }
        }
        if (e->statics) {
            for (int i = 0; i < t->nstatics; i++) {
                int g = e->static_goal[i];
                if (g >= 0) e->colour0[nobj + g] -= 1;
                else e->order[m++] = t->natoms + i;
            }
        }
        if (canonical) {
            if (!e->atom_rank) compute_ranks(e);
            sort_by_rank(e->atom_rank, e->order, m);
        }
    }
    int nn = base + m;
    e->nnodes = nn;
    /* degrees */
    for (int u = 0; u < nn; u++) e->deg[u] = 0;
    for (int g = 0; g < e->npos_goal; g++) {
        int k = e->goal_nargs[g];
        const int *args = e->goal_args + e->goal_args_off[g];
        e->deg[nobj + g] = k;
        for (int i = 0; i < k; i++) e->deg[args[i]]++;
    }
    for (int i = 0; i < m; i++) {
        const ns_atom *a = enc_atom(e, e->order[i]);
        e->colour0[base + i] = e->atom_colour[e->order[i]];
        e->deg[base + i] = a->nargs;
        const int *args = e->argnode + a->args_off;
        for (int j = 0; j < a->nargs; j++) e->deg[args[j]]++;
    }
    e->off[0] = 0;
    for (int u = 0; u < nn; u++) {
        e->off[u + 1] = e->off[u] + e->deg[u];
        e->deg[u] = e->off[u]; /* now a fill cursor */
    }
    for (int g = 0; g < e->npos_goal; g++) {
        int u = nobj + g, k = e->goal_nargs[g];
        const int *args = e->goal_args + e->goal_args_off[g];
        for (int i = 0; i < k; i++) {
            int o = args[i];
            e->nb[e->deg[u]] = o;
            e->lab[e->deg[u]++] = i;
            e->nb[e->deg[o]] = u;
            e->lab[e->deg[o]++] = i;
        }
    }
    for (int i = 0; i < m; i++) {
        int u = base + i;
        const ns_atom *a = enc_atom(e, e->order[i]);
        const int *args = e->argnode + a->args_off;
        for (int j = 0; j < a->nargs; j++) {
            int o = args[j];
            e->nb[e->deg[u]] = o;
            e->lab[e->deg[u]++] = j;
            e->nb[e->deg[o]] = u;
            e->lab[e->deg[o]++] = j;
        }
    }
}

/* ---- refinement -------------------------------------------------------- */

/* One WL iteration t over a CSR graph: cout from cin.  With ins non-NULL,
 * new keys are added to ins (fitting); otherwise unseen keys give unseen. */
static void refine_layer(const ns_wl_vocab *v, ns_wl_vocab *ins, int t, int nn, const int *off, const int *nb,
                         const int *lab, const int *cin, int *cout, int *key)
{
    const int R = v->radix;
    const bool ms = v->multiset;
    for (int u = 0; u < nn; u++) {
        int c = cin[u];
        if (c < 0) {
            cout[u] = NS_WL_UNSEEN;
            continue;
        }
        int k = 0, e0 = off[u], e1 = off[u + 1];
        for (int e = e0; e < e1; e++) {
            int cv = cin[nb[e]];
            if (cv < 0) {
                k = -1;
                break;
            }
            key[k++] = R * cv + lab[e];
        }
        if (k < 0) {
            cout[u] = NS_WL_UNSEEN;
            continue;
        }
        ns_sort_int(key, k);
        if (!ms && k > 1) {
            int q = 1;
            for (int i = 1; i < k; i++)
                if (key[i] != key[q - 1]) key[q++] = key[i];
            k = q;
        }
        key[k++] = c;
        cout[u] = ins ? vocab_intern(ins, t, key, k) : ns_wl_vocab_find(v, t, key, k);
    }
}

/* Runs WL on the built graph; counts into dense (when non-NULL) or the
 * sparse accumulator, or with layers non-NULL only records every node's
 * colour per layer there ([(L+1) × max_nodes]); records object colours per
 * layer. */
static void run_wl(ns_wl_encoder *e, float *dense, int *layers)
{
    const ns_wl_vocab *v = e->vocab;
    int nn = e->nnodes, nobj = e->nobj;
    int *cin = e->col, *cout = e->col2;
    for (int t = 0; t <= e->iterations; t++) {
        if (t == 0) {
            for (int u = 0; u < nn; u++) {
                int c0 = e->colour0[u];
                cin[u] = c0 >= 0 && c0 < v->init_lut_n ? v->init_lut[c0] : NS_WL_UNSEEN;
            }
        } else {
            refine_layer(v, NULL, t, nn, e->off, e->nb, e->lab, cin, cout, e->key);
            int *tmp = cin;
            cin = cout;
            cout = tmp;
        }
        memcpy(e->objcol + (size_t)t * (size_t)nobj, cin, sizeof(int) * (size_t)nobj);
        if (layers) {
            memcpy(layers + (size_t)t * (size_t)e->max_nodes, cin, sizeof(int) * (size_t)nn);
        } else if (dense) {
            for (int u = 0; u < nn; u++)
                if (cin[u] >= 0) dense[cin[u]] += 1.0f;
        } else {
            for (int u = 0; u < nn; u++) {
                int c = cin[u];
                if (c < 0) continue;
                if (e->acc[c] == 0.0f) e->touched[e->ntouched++] = c;
                e->acc[c] += 1.0f;
            }
        }
    }
}

static int emit_sparse(ns_wl_encoder *e, int *idx, float *val)
{
    int n = e->ntouched;
    ns_sort_int(e->touched, n);
    for (int i = 0; i < n; i++) {
        int c = e->touched[i];
        idx[i] = c;
        val[i] = e->acc[c];
        e->acc[c] = 0.0f;
    }
    e->ntouched = 0;
    return n;
}

int ns_wl_max_nnz(const ns_wl_encoder *e)
{
    int64_t n = (int64_t)(e->iterations + 1) * (int64_t)e->max_nodes;
    int d = e->vocab->ncolours;
    return n < d ? (int)n : d;
}

/* ---- incremental encoding ------------------------------------------------
 * ns_wl_features keeps the colours of every node at every layer of the last
 * state it encoded, in the graph of ALL candidate nodes of the task (objects,
 * goal nodes, one node per non-goal fluent atom and per non-goal static when
 * statics are in; node = base + atom id), with absent atom nodes marked
 * WL_ABSENT.  A successor differs from the previous state in a few atoms, so
 * only they change at layer 0, and a node's layer-t colour can change only
 * when its own or a neighbour's layer-(t−1) colour (or presence) did: layer
 * by layer, just the changed nodes and their neighbours are recoloured, and
 * the colour counts are updated by difference.  Colour counts do not depend
 * on the node order, so the features are those of the from-scratch graph
 * exactly (test_wl compares them on random walks).  More than WL_INC_LIMIT
 * changed atoms: from scratch (build_graph, run_wl), then copied in. */
#define WL_ABSENT INT_MIN
enum { WL_INC_LIMIT = 16 };
/* The work of one colour lookup (a key sorted and hashed), in
 * ns_wl_encoder's steps. */
enum { WL_LOOKUP_WORK = 8 };

/* The graph of all candidate nodes (CSR) and the incremental buffers. */
static void inc_build(ns_wl_encoder *e)
{
    const ns_task *t = e->task;
    int na = t->natoms, ns = t->nstatics, nobj = e->nobj, base = nobj + e->ngoal;
    int n = base + na + ns, L = e->iterations;
    int *deg = ns_xcalloc((size_t)n + 1, sizeof(int));
    for (int g = 0; g < e->npos_goal; g++) {
        deg[nobj + g] = e->goal_nargs[g];
        for (int i = 0; i < e->goal_nargs[g]; i++) deg[e->goal_args[e->goal_args_off[g] + i]]++;
    }
    for (int a = 0; a < na + ns; a++) {
        bool in = a < na ? e->atom_goal[a] < 0 : e->statics && e->static_goal[a - na] < 0;
        if (!in) continue;
        const ns_atom *at = enc_atom(e, a);
        deg[base + a] = at->nargs;
        for (int j = 0; j < at->nargs; j++) deg[e->argnode[at->args_off + j]]++;
    }
    e->inc_off = ns_xmalloc(sizeof(int) * ((size_t)n + 2));
    e->inc_off[0] = 0;
    for (int u = 0; u < n; u++) e->inc_off[u + 1] = e->inc_off[u] + deg[u], deg[u] = e->inc_off[u];
    size_t ne = (size_t)e->inc_off[n] + 1;
    e->inc_nb = ns_xmalloc(sizeof(int) * ne);
    e->inc_lab = ns_xmalloc(sizeof(int) * ne);
#define INC_EDGE(u, o, l)                                                          \
    (e->inc_nb[deg[u]] = (o), e->inc_lab[deg[u]++] = (l), e->inc_nb[deg[o]] = (u), \
     e->inc_lab[deg[o]++] = (l))
    for (int g = 0; g < e->npos_goal; g++)
        for (int i = 0; i < e->goal_nargs[g]; i++) INC_EDGE(nobj + g, e->goal_args[e->goal_args_off[g] + i], i);
    for (int a = 0; a < na + ns; a++) {
        bool in = a < na ? e->atom_goal[a] < 0 : e->statics && e->static_goal[a - na] < 0;
        const ns_atom *at = enc_atom(e, a);
        for (int j = 0; in && j < at->nargs; j++) INC_EDGE(base + a, e->argnode[at->args_off + j], j);
    }
#undef INC_EDGE
    free(deg);
    int D = e->vocab->ncolours;
    e->inc_n = n;
    e->inc_col = ns_xmalloc(sizeof(int) * ((size_t)(L + 1) * (size_t)n + 1));
    e->inc_lay = ns_xmalloc(sizeof(int) * ((size_t)(L + 1) * (size_t)e->max_nodes + 1));
    e->inc_state = ns_xcalloc((size_t)t->nwords + 1, sizeof(ns_word));
    e->inc_cnt = ns_xcalloc((size_t)D + 1, sizeof(int));
    e->inc_nz = ns_xcalloc((size_t)D / 64 + 1, sizeof(uint64_t));
    e->inc_nzw = ns_xcalloc((size_t)D / 4096 + 1, sizeof(uint64_t));
    e->inc_mark = ns_xcalloc((size_t)n + 1, sizeof(uint32_t));
    e->inc_chg = ns_xmalloc(sizeof(int) * ((size_t)n + 1));
    e->inc_chg2 = ns_xmalloc(sizeof(int) * ((size_t)n + 1));
    e->inc_valid = false;
    e->work += 4L * (n + e->inc_off[n]) + D / 8; /* the graph's two passes and allocations */
}

static void inc_count(ns_wl_encoder *e, int c, int d)
{
    if (c < 0) return;
    e->inc_cnt[c] += d;
    int w = c >> 6;
    if (e->inc_cnt[c]) {
        e->inc_nz[w] |= 1ull << (c & 63);
        e->inc_nzw[w >> 6] |= 1ull << (w & 63);
    } else {
        e->inc_nz[w] &= ~(1ull << (c & 63));
        if (!e->inc_nz[w]) e->inc_nzw[w >> 6] &= ~(1ull << (w & 63));
    }
}

/* State s from scratch: the compact graph's colours copied into the table. */
static void inc_full(ns_wl_encoder *e, const ns_word *s)
{
    build_graph(e, s, false, false);
    run_wl(e, NULL, e->inc_lay);
    int n = e->inc_n, base = e->nobj + e->ngoal, nn = e->nnodes, D = e->vocab->ncolours;
    memset(e->inc_cnt, 0, sizeof(int) * (size_t)D);
    memset(e->inc_nz, 0, sizeof(uint64_t) * ((size_t)D / 64 + 1));
    memset(e->inc_nzw, 0, sizeof(uint64_t) * ((size_t)D / 4096 + 1));
    for (int t = 0; t <= e->iterations; t++) {
        int *col = e->inc_col + (size_t)t * n;
        const int *lay = e->inc_lay + (size_t)t * e->max_nodes;
        for (int u = base; u < n; u++) col[u] = WL_ABSENT;
        for (int u = 0; u < nn; u++) {
            col[u < base ? u : base + e->order[u - base]] = lay[u];
            inc_count(e, lay[u], 1);
        }
    }
    memcpy(e->inc_state, s, sizeof(ns_word) * (size_t)e->task->nwords);
    e->inc_valid = true;
    e->work += 2L * e->task->nwords + (long)(e->iterations + 1) * (nn + n) +
               (long)e->iterations * (e->off[nn] + (long)WL_LOOKUP_WORK * nn);
}

/* Node u's colour at layer t ≥ 1 from the table's layer t − 1 (u present). */
static int inc_colour(ns_wl_encoder *e, int t, int u)
{
    const ns_wl_vocab *v = e->vocab;
    const int *cin = e->inc_col + (size_t)(t - 1) * e->inc_n;
    int c = cin[u], k = 0, *key = e->key;
    if (c < 0) return NS_WL_UNSEEN;
    for (int j = e->inc_off[u]; j < e->inc_off[u + 1]; j++) {
        int cv = cin[e->inc_nb[j]];
        if (cv == WL_ABSENT) continue;
        if (cv < 0) return NS_WL_UNSEEN;
        key[k++] = v->radix * cv + e->inc_lab[j];
    }
    ns_sort_int(key, k);
    if (!v->multiset && k > 1) {
        int q = 1;
        for (int i = 1; i < k; i++)
            if (key[i] != key[q - 1]) key[q++] = key[i];
        k = q;
    }
    key[k++] = c;
    return ns_wl_vocab_find(v, t, key, k);
}

/* Sets node u's layer-t colour; true when it changed (counts updated). */
static bool inc_set(ns_wl_encoder *e, int t, int u, int c)
{
    int *p = e->inc_col + (size_t)t * e->inc_n + u;
    if (*p == c) return false;
    inc_count(e, *p, -1);
    inc_count(e, c, 1);
    *p = c;
    return true;
}

/* State s from the table's state; false (nothing done) when they differ in
 * more than WL_INC_LIMIT atoms. */
static bool inc_step(ns_wl_encoder *e, const ns_word *s)
{
    const ns_task *t = e->task;
    const ns_word *r = e->inc_state;
    int diff = 0, w = 0;
    for (; w < t->nwords && diff <= WL_INC_LIMIT; w++) /* no popcount call: the words that differ are few */
        for (ns_word x = r[w] ^ s[w]; x; x &= x - 1) diff++;
    e->work += w;
    if (diff > WL_INC_LIMIT) return false;
    long work = 2L * t->nwords; /* the scan for the atoms changed, the state's copy */
    const ns_wl_vocab *v = e->vocab;
    int nobj = e->nobj, base = nobj + e->ngoal, nc = 0;
    int *chg = e->inc_chg, *next = e->inc_chg2;
    for (int w = 0; w < t->nwords; w++)
        for (ns_word x = r[w] ^ s[w]; x; x &= x - 1) {
            int a = (w << 6) + __builtin_ctzll(x), g;
            if (a >= t->natoms) break;
            bool holds = (s[w] >> (a & 63)) & 1;
            int u, c0;
            if ((g = e->atom_goal[a]) >= 0) u = nobj + g, c0 = e->goal_colour[g] - (holds ? 1 : 0);
            else u = base + a, c0 = holds ? e->atom_colour[a] : -1;
            int c = c0 < 0 && !holds ? WL_ABSENT : c0 >= 0 && c0 < v->init_lut_n ? v->init_lut[c0] : NS_WL_UNSEEN;
            if (inc_set(e, 0, u, c)) chg[nc++] = u;
        }
    for (int l = 1; l <= e->iterations; l++) {
        uint32_t stamp = ++e->inc_stamp;
        if (stamp == 0) { /* wrapped: clear the marks */
            memset(e->inc_mark, 0, sizeof(uint32_t) * (size_t)e->inc_n);
            stamp = e->inc_stamp = 1;
        }
        int nx = 0;
        for (int i = 0; i < nc; i++) {
            int u = chg[i];
            for (int j = e->inc_off[u] - 1; j < e->inc_off[u + 1]; j++) {
                int x = j < e->inc_off[u] ? u : e->inc_nb[j];
                if (e->inc_mark[x] == stamp) continue;
                e->inc_mark[x] = stamp;
                bool present = e->inc_col[x] != WL_ABSENT; /* layer 0 holds presence */
                work += present ? 1 + WL_LOOKUP_WORK + (e->inc_off[x + 1] - e->inc_off[x]) / 2 : 1;
                if (inc_set(e, l, x, present ? inc_colour(e, l, x) : WL_ABSENT)) next[nx++] = x;
            }
        }
        int *tmp = chg;
        chg = next, next = tmp, nc = nx;
    }
    memcpy(e->inc_state, s, sizeof(ns_word) * (size_t)t->nwords);
    e->work += work;
    return true;
}

/* The table and counts of state s, incrementally where it can; object colours too. */
static void inc_encode(ns_wl_encoder *e, const ns_word *s)
{
    if (!e->inc_n) inc_build(e);
    if (!e->inc_valid || !inc_step(e, s)) inc_full(e, s);
    for (int t = 0; t <= e->iterations; t++)
        memcpy(e->objcol + (size_t)t * e->nobj, e->inc_col + (size_t)t * e->inc_n, sizeof(int) * (size_t)e->nobj);
    /* the objects' colours copied; the counts' bitmap's summary scanned (ns_wl_features) */
    e->work += (long)(e->iterations + 1) * e->nobj / 8 + e->vocab->ncolours / 4096;
}

int ns_wl_features(ns_wl_encoder *e, const ns_word *s, int *idx, float *val)
{
    inc_encode(e, s);
    int n = 0, D = e->vocab->ncolours;
    for (int u = 0; u <= D / 4096; u++) /* the summary's nonzero words, then their nonzero counts: ascending */
        for (uint64_t y = e->inc_nzw[u]; y; y &= y - 1) {
            int w = (u << 6) + __builtin_ctzll(y);
            for (uint64_t x = e->inc_nz[w]; x; x &= x - 1) {
                int c = (w << 6) + __builtin_ctzll(x);
                idx[n] = c;
                val[n++] = (float)e->inc_cnt[c];
            }
        }
    return n;
}

void ns_wl_features_dense(ns_wl_encoder *e, const ns_word *s, float *out)
{
    memset(out, 0, sizeof(float) * (size_t)e->vocab->ncolours);
    inc_encode(e, s);
    for (int u = 0; u <= e->vocab->ncolours / 4096; u++)
        for (uint64_t y = e->inc_nzw[u]; y; y &= y - 1) {
            int w = (u << 6) + __builtin_ctzll(y);
            for (uint64_t x = e->inc_nz[w]; x; x &= x - 1) {
                int c = (w << 6) + __builtin_ctzll(x);
                out[c] = (float)e->inc_cnt[c];
            }
        }
}

int ns_wl_goal_features(ns_wl_encoder *e, int *idx, float *val)
{
    ensure_acc(e);
    build_graph(e, NULL, true, false);
    run_wl(e, NULL, NULL);
    return emit_sparse(e, idx, val);
}

void ns_wl_goal_features_dense(ns_wl_encoder *e, float *out)
{
    memset(out, 0, sizeof(float) * (size_t)e->vocab->ncolours);
    build_graph(e, NULL, true, false);
    run_wl(e, out, NULL);
}

void ns_wl_refine(ns_wl_encoder *e, const ns_word *s)
{
    ensure_acc(e);
    build_graph(e, s, false, false);
    run_wl(e, NULL, NULL);
    for (int i = 0; i < e->ntouched; i++) e->acc[e->touched[i]] = 0.0f;
    e->ntouched = 0;
}

/* ---- action encodings -------------------------------------------------- */

int ns_wl_action_dim(const ns_wl_encoder *e)
{
    return e->vocab->nschemata + e->max_arity * e->vocab->ncolours;
}

int ns_wl_object_colour(const ns_wl_encoder *e, int obj, int t)
{
    if (obj < 0 || obj >= e->nobj || t < 0 || t > e->iterations) return NS_WL_UNSEEN;
    return e->objcol[(size_t)t * (size_t)e->nobj + (size_t)e->obj_node[obj]];
}

int ns_wl_action_features(const ns_wl_encoder *e, int op, int *idx, float *val)
{
    const ns_task *t = e->task;
    const ns_op *o = &t->ops[op];
    int S = e->vocab->nschemata, D = e->vocab->ncolours, n = 0;
    int sch = e->schema_index[o->schema];
    if (sch >= 0) {
        idx[n] = sch;
        val[n++] = 1.0f;
    }
    const int *args = ns_op_args(t, o);
    int np = t->domain->actions[o->schema].nparams;
    for (int k = 0; k < np && k < e->max_arity; k++) {
        int node = e->obj_node[args[k]], start = n;
        for (int l = 0; l <= e->iterations; l++) {
            int c = e->objcol[(size_t)l * (size_t)e->nobj + (size_t)node];
            if (c < 0) continue;
            idx[n] = S + k * D + c;
            val[n++] = 1.0f;
        }
        ns_sort_int(idx + start, n - start);
    }
    return n;
}

/* ---- fitting ----------------------------------------------------------- */

void ns_wl_fit_init(ns_wl_fitter *f, ns_wl_vocab *v)
{
    memset(f, 0, sizeof *f);
    f->vocab = v;
}

void ns_wl_fit_free(ns_wl_fitter *f)
{
    free(f->gnode_off);
    free(f->gedge_off);
    free(f->colour0);
    free(f->off);
    free(f->nb);
    free(f->lab);
    memset(f, 0, sizeof *f);
}

static void fit_add(ns_wl_fitter *f, ns_wl_encoder *e, const ns_word *s, bool goal_only)
{
    build_graph(e, s, goal_only, true);
    int nn = e->nnodes, ne = e->off[nn];
    size_t gneed = (size_t)f->ngraphs + 2;
    if (gneed > f->gcap) {
        f->gcap = gneed * 2;
        f->gnode_off = ns_xrealloc(f->gnode_off, sizeof(int64_t) * f->gcap);
        f->gedge_off = ns_xrealloc(f->gedge_off, sizeof(int64_t) * f->gcap);
    }
    if (f->ngraphs == 0) f->gnode_off[0] = f->gedge_off[0] = 0;
    /* per graph: nn colours, nn + 1 offsets (offset pool index = node index + graph index) */
    size_t nneed = (size_t)(f->nnodes + nn + f->ngraphs + 2);
    if (nneed > f->ncap) {
        f->ncap = nneed * 2;
        f->colour0 = ns_xrealloc(f->colour0, sizeof(int) * f->ncap);
        f->off = ns_xrealloc(f->off, sizeof(int) * f->ncap);
    }
    size_t eneed = (size_t)(f->nedges + ne + 1);
    if (eneed > f->ecap) {
        f->ecap = eneed * 2;
        f->nb = ns_xrealloc(f->nb, sizeof(int) * f->ecap);
        f->lab = ns_xrealloc(f->lab, sizeof(int) * f->ecap);
    }
    memcpy(f->colour0 + f->nnodes, e->colour0, sizeof(int) * (size_t)nn);
    memcpy(f->off + f->nnodes + f->ngraphs, e->off, sizeof(int) * ((size_t)nn + 1));
    memcpy(f->nb + f->nedges, e->nb, sizeof(int) * (size_t)ne);
    memcpy(f->lab + f->nedges, e->lab, sizeof(int) * (size_t)ne);
    f->nnodes += nn;
    f->nedges += ne;
    f->ngraphs++;
    f->gnode_off[f->ngraphs] = f->nnodes;
    f->gedge_off[f->ngraphs] = f->nedges;
}

void ns_wl_fit_add_state(ns_wl_fitter *f, ns_wl_encoder *e, const ns_word *s) { fit_add(f, e, s, false); }
void ns_wl_fit_add_goal(ns_wl_fitter *f, ns_wl_encoder *e) { fit_add(f, e, NULL, true); }

ns_status ns_wl_fit_finish(ns_wl_fitter *f, ns_error *err)
{
    ns_wl_vocab *v = f->vocab;
    if (f->ngraphs == 0) return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "WL fit: no training states");
    if (v->ncolours != 0) return ns_error_set(err, NS_ERR_INTERNAL, NULL, 0, 0, "WL fit: the vocabulary is not empty");
    int64_t N = f->nnodes;
    int *cur = ns_xmalloc(sizeof(int) * ((size_t)N + 1));
    int *nxt = ns_xmalloc(sizeof(int) * ((size_t)N + 1));
    int maxdeg = 0;
    for (int g = 0; g < f->ngraphs; g++) {
        int64_t b = f->gnode_off[g];
        int nn = (int)(f->gnode_off[g + 1] - b);
        const int *off = f->off + b + g;
        for (int u = 0; u < nn; u++)
            if (off[u + 1] - off[u] > maxdeg) maxdeg = off[u + 1] - off[u];
    }
    int *key = ns_xmalloc(sizeof(int) * ((size_t)maxdeg + 2));
    for (int64_t i = 0; i < N; i++) cur[i] = vocab_intern(v, 0, &f->colour0[i], 1);
    for (int t = 1; t <= v->iterations; t++) {
        for (int g = 0; g < f->ngraphs; g++) {
            int64_t b = f->gnode_off[g], eb = f->gedge_off[g];
            int nn = (int)(f->gnode_off[g + 1] - b);
            refine_layer(v, v, t, nn, f->off + b + g, f->nb + eb, f->lab + eb, cur + b, nxt + b, key);
        }
        int *tmp = cur;
        cur = nxt;
        nxt = tmp;
    }
    free(cur);
    free(nxt);
    free(key);
    vocab_build_lut(v);
    return NS_OK;
}
