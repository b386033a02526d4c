/* wordpiece.c — BERT WordPiece tokenizer (see wordpiece.h). */
#include "nextstate/encode/wordpiece.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/util/json.h"
#include "unicode_tables.h"

/* Decodes UTF-8 into code points; each byte of an invalid sequence reads as
 * U+FFFD. */
static size_t utf8_decode(const char *s, size_t len, uint32_t *out)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, n = 0;
    while (i < len) {
        uint32_t c = p[i];
        if (c < 0x80) {
            out[n++] = c;
            i++;
            continue;
        }
        int k = (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : 0;
        bool ok = k > 0 && len - i >= (size_t)k + 1;
        if (ok) {
            c &= 0x3Fu >> k;
            for (int j = 1; j <= k && ok; j++) {
                ok = (p[i + j] & 0xC0) == 0x80;
                c = c << 6 | (p[i + j] & 0x3F);
            }
            uint32_t min = k == 1 ? 0x80 : k == 2 ? 0x800 : 0x10000;
            ok = ok && c >= min && c <= 0x10FFFF && !(c >= 0xD800 && c <= 0xDFFF);
        }
        if (!ok) {
            out[n++] = 0xFFFD;
            i++;
            continue;
        }
        out[n++] = c;
        i += (size_t)k + 1;
    }
    return n;
}

static int utf8_put(uint32_t c, char *o)
{
    if (c < 0x80) {
        o[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (char)(0xC0 | c >> 6);
        o[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (char)(0xE0 | c >> 12);
        o[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        o[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | c >> 18);
    o[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    o[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/* Growable code-point array. */
typedef struct cpvec {
    uint32_t *v;
    size_t n, cap;
} cpvec;

static void cp_push(cpvec *a, uint32_t c)
{
    if (a->n == a->cap) NS_GROW(a->v, a->cap, a->n + 1);
    a->v[a->n++] = c;
}

/* ---------------------------------------------------------------- tokenizer */

typedef struct added_tok {
    char *content;
    uint32_t *cps; /* content as code points (normalized when .normalized) */
    size_t ncps;
    int id;
    bool single_word, lstrip, rstrip, normalized;
} added_tok;

struct ns_wordpiece {
    ns_wordpiece_opts o;
    bool strip;
    char *unk_s, *cls_s, *sep_s, *prefix_s;
    size_t prefix_len;
    int n;       /* ids 0..n-1 */
    char **tok;  /* by id; NULL for gaps */
    uint32_t *slot; /* hash table of vocabulary ids + 1 (0 empty) */
    size_t mask;
    added_tok *added;
    int nadded;
    int unk, cls, sep;
};

static uint64_t key_hash(const char *s, size_t n) { return ns_hash_bytes(s, n, 0x5750u); }

/* Vocabulary id of s[0..n), or -1 (added tokens are not looked up here). */
static int vocab_find(const ns_wordpiece *wp, const char *s, size_t n)
{
    size_t h = (size_t)key_hash(s, n) & wp->mask;
    for (;;) {
        uint32_t v = wp->slot[h];
        if (!v) return -1;
        const char *t = wp->tok[v - 1];
        if (strlen(t) == n && memcmp(t, s, n) == 0) return (int)v - 1;
        h = (h + 1) & wp->mask;
    }
}

void ns_wordpiece_opts_default(ns_wordpiece_opts *o)
{
    o->lowercase = true;
    o->strip_accents = -1;
    o->clean_text = true;
    o->handle_chinese_chars = true;
    o->max_input_chars_per_word = 100;
    o->unk_token = "[UNK]";
    o->cls_token = "[CLS]";
    o->sep_token = "[SEP]";
    o->prefix = "##";
}

/* Step 2 on code points in[0..n), appended to out. */
static void normalize_cps(const ns_wordpiece *wp, const uint32_t *in, size_t n, cpvec *out)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t c = in[i];
        int k = ns_uc_class(c);
        if (wp->o.clean_text) {
            if (c == 0 || c == 0xFFFD || k == UC_C) continue;
            if (k == UC_W) c = ' ', k = UC_W;
        }
        uint32_t buf[5];
        int m = 0;
        if (wp->o.handle_chinese_chars && k == UC_H) {
            buf[m++] = ' ';
            buf[m++] = c;
            buf[m++] = ' ';
        } else {
            buf[m++] = c;
        }
        for (int j = 0; j < m; j++) {
            uint32_t d[3];
            int nd = 1;
            d[0] = buf[j];
            if (wp->strip) {
                if (ns_uc_class(buf[j]) == UC_M) continue;
                nd = ns_uc_strip(buf[j], d);
            }
            for (int q = 0; q < nd; q++) {
                if (wp->o.lowercase) {
                    if (d[q] == 0x130) { /* İ → i + combining dot above */
                        cp_push(out, 'i');
                        cp_push(out, 0x307);
                        continue;
                    }
                    cp_push(out, ns_uc_lower1(d[q]));
                } else {
                    cp_push(out, d[q]);
                }
            }
        }
    }
}

static bool is_word_cp(uint32_t c) /* regex \w, approximately */
{
    if (c < 128) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    int k = ns_uc_class(c);
    return k == UC_L || k == UC_H || k == UC_M;
}

/* Leftmost-longest match of the added tokens with .normalized == normalized
 * in s[from..n); returns the token index or -1; *at receives the start. */
static int find_added(const ns_wordpiece *wp, bool normalized, const uint32_t *s, size_t from, size_t n, size_t *at)
{
    for (size_t i = from; i < n; i++) {
        int best = -1;
        size_t best_len = 0;
        for (int t = 0; t < wp->nadded; t++) {
            const added_tok *a = &wp->added[t];
            if (a->normalized != normalized || a->ncps == 0 || a->ncps > n - i || a->ncps <= best_len) continue;
            if (memcmp(s + i, a->cps, a->ncps * sizeof *s) == 0) {
                best = t;
                best_len = a->ncps;
            }
        }
        if (best >= 0) {
            *at = i;
            return best;
        }
    }
    return -1;
}

typedef struct emit_ctx {
    int32_t **ids;
    size_t *n, *cap, limit, start;
} emit_ctx;

static bool emit(emit_ctx *e, int id)
{
    if (e->limit && *e->n >= e->limit) return false;
    if (*e->n == *e->cap) NS_GROW(*e->ids, *e->cap, *e->n + 1);
    (*e->ids)[(*e->n)++] = id;
    return !(e->limit && *e->n >= e->limit);
}

/* Step 4 on one word (code points w[0..n)); false when the limit is reached. */
static bool wordpiece_word(const ns_wordpiece *wp, const uint32_t *w, size_t n, emit_ctx *e)
{
    if (n == 0) return true;
    if (n > (size_t)wp->o.max_input_chars_per_word || wp->prefix_len > 16) return emit(e, wp->unk);
    char word[4 * 128], key[16 + 4 * 128];
    size_t off[129], nb = 0; /* byte offset of each character */
    for (size_t i = 0; i < n; i++) {
        off[i] = nb;
        nb += (size_t)utf8_put(w[i], word + nb);
    }
    off[n] = nb;
    int32_t pieces[128];
    int npieces = 0;
    memcpy(key, wp->prefix_s, wp->prefix_len);
    for (size_t start = 0; start < n;) {
        int found = -1;
        size_t end = n;
        for (; end > start; end--) {
            size_t len = off[end] - off[start];
            if (start == 0) {
                found = vocab_find(wp, word, len);
            } else {
                memcpy(key + wp->prefix_len, word + off[start], len);
                found = vocab_find(wp, key, wp->prefix_len + len);
            }
            if (found >= 0) break;
        }
        if (found < 0) return emit(e, wp->unk); /* no segmentation: the whole word is unknown */
        pieces[npieces++] = found;
        start = end;
    }
    for (int i = 0; i < npieces; i++)
        if (!emit(e, pieces[i])) return false;
    return true;
}

/* Step 3 + 4 on normalized code points s[0..n). */
static bool pretok_and_pieces(const ns_wordpiece *wp, const uint32_t *s, size_t n, emit_ctx *e)
{
    size_t i = 0;
    while (i < n) {
        if (ns_uc_white_space(s[i])) {
            i++;
            continue;
        }
        if (ns_uc_class(s[i]) == UC_P) {
            if (!wordpiece_word(wp, s + i, 1, e)) return false;
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && !ns_uc_white_space(s[j]) && ns_uc_class(s[j]) != UC_P) j++;
        if (!wordpiece_word(wp, s + i, j - i, e)) return false;
        i = j;
    }
    return true;
}

/* Splits s[0..n) on added tokens with .normalized == normalized; the pieces
 * between them go to the next stage. */
static bool split_added(const ns_wordpiece *wp, bool normalized, const uint32_t *s, size_t n, emit_ctx *e,
                        cpvec *tmp)
{
    size_t pos = 0, from = 0;
    for (;;) {
        size_t at = 0;
        int t = find_added(wp, normalized, s, from, n, &at);
        size_t start = at, stop = t >= 0 ? at + wp->added[t].ncps : n;
        if (t >= 0) {
            const added_tok *a = &wp->added[t];
            if (a->single_word && ((start > 0 && is_word_cp(s[start - 1])) || (stop < n && is_word_cp(s[stop])))) {
                from = at + 1; /* discarded: keep searching after its start */
                continue;
            }
            if (a->lstrip)
                while (start > pos && ns_uc_white_space(s[start - 1])) start--;
            if (a->rstrip)
                while (stop < n && ns_uc_white_space(s[stop])) stop++;
        } else {
            start = n;
        }
        if (start > pos) {
            if (!normalized) {
                size_t base = tmp->n;
                normalize_cps(wp, s + pos, start - pos, tmp);
                /* tmp may move while the next stage pushes: copy out the span */
                size_t len = tmp->n - base;
                uint32_t *span = ns_xmalloc((len + 1) * sizeof *span);
                memcpy(span, tmp->v + base, len * sizeof *span);
                tmp->n = base;
                bool go = split_added(wp, true, span, len, e, tmp);
                free(span);
                if (!go) return false;
            } else if (!pretok_and_pieces(wp, s + pos, start - pos, e)) {
                return false;
            }
        }
        if (t < 0) break;
        if (!emit(e, wp->added[t].id)) return false;
        pos = from = stop;
    }
    return true;
}

size_t ns_wordpiece_tokenize(const ns_wordpiece *wp, const char *text, size_t len, size_t limit, int32_t **ids,
                             size_t *n, size_t *cap)
{
    size_t before = *n;
    if (limit && *n >= limit) return 0;
    uint32_t *cps = ns_xmalloc((len + 1) * sizeof *cps);
    size_t ncp = utf8_decode(text, len, cps);
    emit_ctx e = {ids, n, cap, limit, before};
    cpvec tmp = {0};
    split_added(wp, false, cps, ncp, &e, &tmp);
    free(tmp.v);
    free(cps);
    return *n - before;
}

int ns_wordpiece_encode(const ns_wordpiece *wp, const char *text, size_t len, int max_len, int32_t *ids)
{
    if (max_len < 2) max_len = 2;
    int32_t *v = NULL;
    size_t n = 0, cap = 0;
    if (max_len > 2) ns_wordpiece_tokenize(wp, text, len, (size_t)max_len - 2, &v, &n, &cap);
    ids[0] = wp->cls;
    for (size_t i = 0; i < n; i++) ids[1 + i] = v[i];
    ids[1 + n] = wp->sep;
    free(v);
    return (int)n + 2;
}

void ns_wordpiece_normalize(const ns_wordpiece *wp, const char *text, size_t len, ns_buf *out)
{
    uint32_t *cps = ns_xmalloc((len + 1) * sizeof *cps);
    size_t ncp = utf8_decode(text, len, cps);
    cpvec v = {0};
    normalize_cps(wp, cps, ncp, &v);
    for (size_t i = 0; i < v.n; i++) {
        char b[4];
        ns_buf_put(out, b, (size_t)utf8_put(v.v[i], b));
    }
    free(v.v);
    free(cps);
}

/* ---------------------------------------------------------------- building */

static int token_id_any(const ns_wordpiece *wp, const char *s)
{
    for (int i = 0; i < wp->nadded; i++)
        if (!strcmp(wp->added[i].content, s)) return wp->added[i].id;
    return vocab_find(wp, s, strlen(s));
}

ns_status ns_wordpiece_new(ns_wordpiece **out, const char *const *vocab, int n, const ns_wordpiece_opts *o,
                           const ns_wordpiece_added *added, int nadded, ns_error *err)
{
    *out = NULL;
    if (n <= 0) return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "empty vocabulary");
    ns_wordpiece *wp = ns_xcalloc(1, sizeof *wp);
    ns_wordpiece_opts d;
    ns_wordpiece_opts_default(&d);
    wp->o = o ? *o : d;
    wp->unk_s = ns_xstrdup(wp->o.unk_token ? wp->o.unk_token : d.unk_token);
    wp->cls_s = ns_xstrdup(wp->o.cls_token ? wp->o.cls_token : d.cls_token);
    wp->sep_s = ns_xstrdup(wp->o.sep_token ? wp->o.sep_token : d.sep_token);
    wp->prefix_s = ns_xstrdup(wp->o.prefix ? wp->o.prefix : d.prefix);
    wp->prefix_len = strlen(wp->prefix_s);
    wp->o.unk_token = wp->unk_s;
    wp->o.cls_token = wp->cls_s;
    wp->o.sep_token = wp->sep_s;
    wp->o.prefix = wp->prefix_s;
    if (wp->o.max_input_chars_per_word <= 0) wp->o.max_input_chars_per_word = 100;
    if (wp->o.max_input_chars_per_word > 128) wp->o.max_input_chars_per_word = 128;
    wp->strip = wp->o.strip_accents < 0 ? wp->o.lowercase : wp->o.strip_accents != 0;
    int total = n;
    for (int i = 0; i < nadded; i++)
        if (added[i].id >= total) total = added[i].id + 1;
    wp->n = total;
    wp->tok = ns_xcalloc((size_t)total, sizeof *wp->tok);
    size_t cap = 16;
    while (cap < 2 * (size_t)n) cap <<= 1;
    wp->mask = cap - 1;
    wp->slot = ns_xcalloc(cap, sizeof *wp->slot);
    for (int i = 0; i < n; i++) {
        wp->tok[i] = ns_xstrdup(vocab[i] ? vocab[i] : "");
        size_t len = strlen(wp->tok[i]);
        size_t h = (size_t)key_hash(wp->tok[i], len) & wp->mask;
        bool dup = false;
        while (wp->slot[h]) {
            if (!strcmp(wp->tok[wp->slot[h] - 1], wp->tok[i])) {
                dup = true; /* a repeated line: the later id wins, as in HF */
                break;
            }
            h = (h + 1) & wp->mask;
        }
        wp->slot[h] = (uint32_t)i + 1;
        (void)dup;
    }
    wp->added = ns_xcalloc((size_t)nadded + 1, sizeof *wp->added);
    for (int i = 0; i < nadded; i++) {
        added_tok *a = &wp->added[wp->nadded++];
        a->content = ns_xstrdup(added[i].content);
        a->id = added[i].id;
        a->single_word = added[i].single_word;
        a->lstrip = added[i].lstrip;
        a->rstrip = added[i].rstrip;
        a->normalized = added[i].normalized;
        size_t len = strlen(a->content);
        uint32_t *raw = ns_xmalloc((len + 1) * sizeof *raw);
        size_t nr = utf8_decode(a->content, len, raw);
        if (a->normalized) {
            cpvec v = {0};
            normalize_cps(wp, raw, nr, &v);
            free(raw);
            a->cps = v.v;
            a->ncps = v.n;
        } else {
            a->cps = raw;
            a->ncps = nr;
        }
        if (a->id >= 0 && a->id < total && !wp->tok[a->id]) wp->tok[a->id] = ns_xstrdup(a->content);
    }
    wp->unk = token_id_any(wp, wp->unk_s);
    wp->cls = token_id_any(wp, wp->cls_s);
    wp->sep = token_id_any(wp, wp->sep_s);
    const char *missing = wp->unk < 0 ? wp->unk_s : wp->cls < 0 ? wp->cls_s : wp->sep < 0 ? wp->sep_s : NULL;
    if (missing) {
        ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "special token \"%s\" is not in the vocabulary (%d tokens)",
                     missing, n);
        ns_wordpiece_free(wp);
        return NS_ERR_INPUT;
    }
    *out = wp;
    return NS_OK;
}

void ns_wordpiece_free(ns_wordpiece *wp)
{
    if (!wp) return;
    for (int i = 0; i < wp->n; i++) free(wp->tok[i]);
    free(wp->tok);
    free(wp->slot);
    for (int i = 0; i < wp->nadded; i++) {
        free(wp->added[i].content);
        free(wp->added[i].cps);
    }
    free(wp->added);
    free(wp->unk_s);
    free(wp->cls_s);
    free(wp->sep_s);
    free(wp->prefix_s);
    free(wp);
}

int ns_wordpiece_size(const ns_wordpiece *wp) { return wp->n; }
const char *ns_wordpiece_token(const ns_wordpiece *wp, int id) { return id >= 0 && id < wp->n ? wp->tok[id] : NULL; }
int ns_wordpiece_id(const ns_wordpiece *wp, const char *token) { return token_id_any(wp, token); }
int ns_wordpiece_unk_id(const ns_wordpiece *wp) { return wp->unk; }
int ns_wordpiece_cls_id(const ns_wordpiece *wp) { return wp->cls; }
int ns_wordpiece_sep_id(const ns_wordpiece *wp) { return wp->sep; }

/* ---------------------------------------------------------------- loading */

static bool json_bool(const ns_json *o, const char *key, bool dflt)
{
    const ns_json *v = ns_json_get(o, key);
    return v && v->kind == NS_JSON_BOOL ? v->boolean : dflt;
}

/* A special token given as a string or as {"content": ...}. */
static const char *json_token(const ns_json *o, const char *key)
{
    const ns_json *v = ns_json_get(o, key);
    if (!v) return NULL;
    if (v->kind == NS_JSON_STRING) return v->string;
    if (v->kind == NS_JSON_OBJECT) {
        const char *s;
        if (ns_json_get_str(v, "content", &s)) return s;
    }
    return NULL;
}

static bool file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

/* vocab.txt's lines, in place (id = line number; "\r\n" endings accepted,
 * line ends trimmed as HF does). */
static char **split_vocab_lines(char *text, size_t len, int *n)
{
    size_t nl = 0;
    for (size_t i = 0; i < len; i++) nl += text[i] == '\n';
    char **lines = ns_xmalloc((nl + 2) * sizeof *lines);
    *n = 0;
    for (char *p = text; p < text + len;) {
        char *e = memchr(p, '\n', (size_t)(text + len - p));
        if (!e) e = text + len;
        char *q = e;
        while (q > p && (q[-1] == '\r' || q[-1] == ' ' || q[-1] == '\t')) q--; /* HF trims line ends */
        *q = '\0';
        lines[(*n)++] = p;
        p = e + 1;
    }
    return lines;
}

/* tokenizer.json's "normalizer" (BertNormalizer only) into o. */
static ns_status tokenizer_normalizer(const ns_json *norm, const char *tpath, ns_wordpiece_opts *o, ns_error *err)
{
    if (!norm || norm->kind != NS_JSON_OBJECT) return NS_OK;
    const char *type;
    if (!ns_json_get_str(norm, "type", &type) || strcmp(type, "BertNormalizer") != 0)
        return ns_error_set(err, NS_ERR_UNSUPPORTED, tpath, norm->line, norm->col,
                            "normalizer \"%s\" is not supported (only BertNormalizer)",
                            ns_json_get_str(norm, "type", &type) ? type : "?");
    o->lowercase = json_bool(norm, "lowercase", true);
    o->clean_text = json_bool(norm, "clean_text", true);
    o->handle_chinese_chars = json_bool(norm, "handle_chinese_chars", true);
    const ns_json *sa = ns_json_get(norm, "strip_accents");
    o->strip_accents = sa && sa->kind == NS_JSON_BOOL ? sa->boolean : -1;
    return NS_OK;
}

/* tokenizer.json's "added_tokens" into *added (allocated here when the
 * array is there; the strings stay in at). */
static ns_status tokenizer_added_tokens(const ns_json *at, const char *tpath, ns_wordpiece_added **added, int *nadded,
                                        ns_error *err)
{
    if (!at || at->kind != NS_JSON_ARRAY) return NS_OK;
    *added = ns_xcalloc((size_t)at->n + 1, sizeof **added);
    for (int i = 0; i < at->n; i++) {
        const ns_json *a = &at->items[i];
        const char *s;
        int64_t id;
        if (!ns_json_get_str(a, "content", &s) || !ns_json_get_int(a, "id", &id) || id < 0 || id > 100000000)
            return ns_error_set(err, NS_ERR_INPUT, tpath, a->line, a->col, "added token without content or id");
        ns_wordpiece_added *d = &(*added)[(*nadded)++];
        d->content = s;
        d->id = (int)id;
        d->single_word = json_bool(a, "single_word", false);
        d->lstrip = json_bool(a, "lstrip", false);
        d->rstrip = json_bool(a, "rstrip", false);
        d->normalized = json_bool(a, "normalized", false);
    }
    return NS_OK;
}

/* tokenizer.json's "post_processor": the CLS and SEP tokens into o. */
static void tokenizer_post_processor(const ns_json *pp, ns_wordpiece_opts *o)
{
    const char *type, *s;
    if (!pp || pp->kind != NS_JSON_OBJECT || !ns_json_get_str(pp, "type", &type)) return;
    if (!strcmp(type, "RobertaProcessing") || !strcmp(type, "BertProcessing")) {
        const ns_json *c = ns_json_get(pp, "cls"), *se = ns_json_get(pp, "sep");
        if (c && c->kind == NS_JSON_ARRAY && c->n >= 1 && c->items[0].kind == NS_JSON_STRING)
            o->cls_token = c->items[0].string;
        if (se && se->kind == NS_JSON_ARRAY && se->n >= 1 && se->items[0].kind == NS_JSON_STRING)
            o->sep_token = se->items[0].string;
    } else if (!strcmp(type, "TemplateProcessing")) {
        const ns_json *single = ns_json_get(pp, "single");
        if (single && single->kind == NS_JSON_ARRAY && single->n >= 2) {
            const ns_json *first = ns_json_get(&single->items[0], "SpecialToken");
            const ns_json *last = ns_json_get(&single->items[single->n - 1], "SpecialToken");
            if (first && ns_json_get_str(first, "id", &s)) o->cls_token = s;
            if (last && ns_json_get_str(last, "id", &s)) o->sep_token = s;
        }
    }
}

/* The fast tokenizer's settings (tokenizer.json, read into tj) for a
 * vocabulary of n lines read from path. */
static ns_status read_tokenizer_json(ns_json *tj, const char *tpath, const char *path, int n, ns_wordpiece_opts *o,
                                     ns_wordpiece_added **added, int *nadded, ns_error *err)
{
    ns_status st;
    if ((st = ns_json_read(tj, tpath, err)) != NS_OK) return st;
    if ((st = tokenizer_normalizer(ns_json_get(tj, "normalizer"), tpath, o, err)) != NS_OK) return st;
    const ns_json *pre = ns_json_get(tj, "pre_tokenizer");
    const char *type;
    if (pre && pre->kind == NS_JSON_OBJECT &&
        (!ns_json_get_str(pre, "type", &type) || strcmp(type, "BertPreTokenizer") != 0))
        return ns_error_set(err, NS_ERR_UNSUPPORTED, tpath, pre->line, pre->col, "pre-tokenizer is not BertPreTokenizer");
    const ns_json *model = ns_json_get(tj, "model");
    if (!model || model->kind != NS_JSON_OBJECT || !ns_json_get_str(model, "type", &type) ||
        strcmp(type, "WordPiece") != 0)
        return ns_error_set(err, NS_ERR_UNSUPPORTED, tpath, 0, 0, "the tokenizer model is not WordPiece");
    const char *s;
    if (ns_json_get_str(model, "unk_token", &s)) o->unk_token = s;
    if (ns_json_get_str(model, "continuing_subword_prefix", &s)) o->prefix = s;
    int64_t mc;
    if (ns_json_get_int(model, "max_input_chars_per_word", &mc)) o->max_input_chars_per_word = (int)mc;
    const ns_json *voc = ns_json_get(model, "vocab");
    if (voc && voc->kind == NS_JSON_OBJECT && voc->n != n)
        return ns_error_set(err, NS_ERR_INPUT, tpath, voc->line, voc->col,
                            "tokenizer.json has %d vocabulary entries but %s has %d lines", voc->n, path, n);
    if ((st = tokenizer_added_tokens(ns_json_get(tj, "added_tokens"), tpath, added, nadded, err)) != NS_OK) return st;
    tokenizer_post_processor(ns_json_get(tj, "post_processor"), o);
    return NS_OK;
}

/* The slow tokenizer's settings: tokenizer_config.json (into cj) and
 * special_tokens_map.json (into mj), when there; the special tokens found
 * among the n lines become added tokens. */
static ns_status read_slow_tokenizer(const char *dir, ns_json *cj, ns_json *mj, char **lines, int n,
                                     ns_wordpiece_opts *o, ns_wordpiece_added **added, int *nadded, ns_error *err)
{
    ns_status st;
    char cpath[1024];
    snprintf(cpath, sizeof cpath, "%s/tokenizer_config.json", dir);
    if (file_exists(cpath)) {
        if ((st = ns_json_read(cj, cpath, err)) != NS_OK) return st;
        o->lowercase = json_bool(cj, "do_lower_case", true);
        o->handle_chinese_chars = json_bool(cj, "tokenize_chinese_chars", true);
        const ns_json *sa = ns_json_get(cj, "strip_accents");
        o->strip_accents = sa && sa->kind == NS_JSON_BOOL ? sa->boolean : -1;
    }
    char mpath[1024];
    snprintf(mpath, sizeof mpath, "%s/special_tokens_map.json", dir);
    if (file_exists(mpath) && (st = ns_json_read(mj, mpath, err)) != NS_OK) return st;
    const char *keys[] = {"unk_token", "cls_token", "sep_token", "pad_token", "mask_token", "bos_token", "eos_token"};
    *added = ns_xcalloc(8, sizeof **added);
    for (int k = 0; k < 7; k++) {
        const char *s = json_token(mj, keys[k]);
        if (!s) s = json_token(cj, keys[k]);
        if (!s && k < 5) s = (const char *[]){"[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"}[k];
        if (!s) continue;
        if (k == 0) o->unk_token = s;
        if (k == 1) o->cls_token = s;
        if (k == 2) o->sep_token = s;
        int id = -1;
        for (int i = 0; i < n; i++)
            if (!strcmp(lines[i], s)) id = i; /* the last line wins, as in a dict */
        bool dup = false;
        for (int i = 0; i < *nadded; i++) dup |= !strcmp((*added)[i].content, s);
        if (id >= 0 && !dup) (*added)[(*nadded)++] = (ns_wordpiece_added){s, id, false, false, false, false};
    }
    return NS_OK;
}

ns_status ns_wordpiece_load_dir(ns_wordpiece **out, const char *dir, ns_error *err)
{
    *out = NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    char *text;
    size_t len;
    if (ns_read_file(path, &text, &len, err) != NS_OK) return err ? err->code : NS_ERR_IO;
    int n;
    char **lines = split_vocab_lines(text, len, &n);
    ns_status st = NS_OK;
    ns_wordpiece_opts o;
    ns_wordpiece_opts_default(&o);
    ns_wordpiece_added *added = NULL;
    int nadded = 0;
    ns_json tj = {0}, cj = {0}, mj = {0}; /* the tokens in o and added point into these */
    char tpath[1024];
    snprintf(tpath, sizeof tpath, "%s/tokenizer.json", dir);
    if (n == 0) st = ns_error_set(err, NS_ERR_INPUT, path, 0, 0, "empty vocabulary");
    else if (file_exists(tpath)) st = read_tokenizer_json(&tj, tpath, path, n, &o, &added, &nadded, err);
    else st = read_slow_tokenizer(dir, &cj, &mj, lines, n, &o, &added, &nadded, err);
    if (st == NS_OK) {
        st = ns_wordpiece_new(out, (const char *const *)lines, n, &o, added, nadded, err);
        if (st != NS_OK && err) {
            char msg[sizeof err->msg];
            memcpy(msg, err->msg, sizeof msg);
            ns_error_set(err, st, path, 0, 0, "%s", msg);
        }
    }
    ns_json_free(&tj);
    ns_json_free(&cj);
    ns_json_free(&mj);
    free(added);
    free(lines);
    free(text);
    return st;
}
