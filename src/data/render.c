/* render.c — natural-language renderings: template files, per-problem
 * preparation, prompts, literal form.  See render.h for the formats. */
#include "nextstate/data/render.h"
#include "nextstate/core/task.h"

#include <ctype.h>
#include <stdarg.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ARGS 32 /* arguments of an atom text */

static const char HDR_PROBLEM[] = "### PROBLEM DESCRIPTION ###\n";
static const char HDR_STATE[] = "\n\n### CURRENT STATE ###\n";
static const char HDR_GOAL[] = "\n\n### GOAL DESCRIPTION ###\n";
static const char NOT_PREFIX[] = "It is not the case that ";

/* ---------------------------------------------------------------- templates */

/* One piece of a template: literal text[off, off+len) or argument `arg`. */
typedef struct seg {
    int arg; /* -1 for literal text; {n} of a count is arg 0 */
    int off, len;
} seg;

typedef struct tpl {
    char *text; /* the unescaped literal parts */
    seg *segs;
    int nseg;
    int maxarg; /* largest placeholder index, -1 when none */
} tpl;

typedef struct pred_tpl {
    char *pred; /* lower-case */
    int arity;  /* -1: any */
    tpl t;
    int line;
} pred_tpl;

typedef struct count_tpl {
    char *key;
    tpl one, many;
    int line;
} count_tpl;

struct ns_render {
    char *path;
    char **domains;
    int ndomains;
    char *description;
    pred_tpl *atoms, *nots;
    int natoms, nnots;
    size_t atoms_cap, nots_cap;
    count_tpl *counts;
    int ncounts;
    size_t counts_cap;
};

static void tpl_free(tpl *t)
{
    free(t->text);
    free(t->segs);
}

void ns_render_free(ns_render *r)
{
    if (!r) return;
    free(r->path);
    for (int i = 0; i < r->ndomains; i++) free(r->domains[i]);
    free(r->domains);
    free(r->description);
    for (int i = 0; i < r->natoms; i++) free(r->atoms[i].pred), tpl_free(&r->atoms[i].t);
    for (int i = 0; i < r->nnots; i++) free(r->nots[i].pred), tpl_free(&r->nots[i].t);
    free(r->atoms);
    free(r->nots);
    for (int i = 0; i < r->ncounts; i++) {
        free(r->counts[i].key);
        tpl_free(&r->counts[i].one);
        tpl_free(&r->counts[i].many);
    }
    free(r->counts);
    free(r);
}

const char *ns_render_path(const ns_render *r) { return r->path; }

/* Case-insensitive comparison of s[0..n) with NUL-terminated t. */
static bool eq_ci_n(const char *s, size_t n, const char *t)
{
    for (size_t i = 0; i < n; i++, t++)
        if (!*t || tolower((unsigned char)s[i]) != tolower((unsigned char)*t)) return false;
    return *t == '\0';
}

static char *dup_lower_n(const char *s, size_t n)
{
    char *d = ns_xmalloc(n + 1);
    for (size_t i = 0; i < n; i++) d[i] = (char)tolower((unsigned char)s[i]);
    d[n] = '\0';
    return d;
}

bool ns_render_applies_to(const ns_render *r, const char *name)
{
    for (int i = 0; i < r->ndomains; i++)
        if (ns_streq_ci(r->domains[i], name)) return true;
    return false;
}

/* Template of predicate name[0..n) with `arity` arguments: an exact NAME/N
 * entry first, then NAME; NULL when none. */
static const pred_tpl *find_pred(const pred_tpl *a, int na, const char *name, size_t n, int arity)
{
    const pred_tpl *any = NULL;
    for (int i = 0; i < na; i++) {
        if (!eq_ci_n(name, n, a[i].pred)) continue;
        if (a[i].arity == arity) return &a[i];
        if (a[i].arity < 0) any = &a[i];
    }
    return any;
}

bool ns_render_covers(const ns_render *r, const char *pred, int arity)
{
    const pred_tpl *t = find_pred(r->atoms, r->natoms, pred, strlen(pred), arity);
    return t && t->t.maxarg < arity;
}

/* ------------------------------------------------------------------ parsing */

typedef struct lctx {
    const char *path;
    const char *line; /* start of the current line */
    int lineno;
    ns_error *err;
} lctx;

static ns_status bad_at(const lctx *c, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static ns_status bad_at(const lctx *c, const char *at, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ns_error_set(c->err, NS_ERR_INPUT, c->path, c->lineno, (int)(at - c->line) + 1, "%s",
                        msg);
}

/* Parses the template text [s, e) into t.  mode 'a': placeholders {0}…{k}
 * (below `arity` when arity >= 0); mode 'n': only {n}; mode 'd': none. */
static ns_status parse_tpl(const lctx *c, const char *s, const char *e, int mode, int arity, tpl *t)
{
    ns_buf text;
    ns_buf_init(&text);
    seg *segs = NULL;
    size_t cap = 0;
    int nseg = 0, maxarg = -1;
    const char *lit = NULL; /* start of the pending literal run in text */
    size_t lit_off = 0;
    ns_status st = NS_OK;
    for (const char *p = s; p < e;) {
        if (*p == '{' || *p == '}') {
            if (lit) {
                NS_GROW(segs, cap, (size_t)nseg + 1);
                segs[nseg++] = (seg){-1, (int)lit_off, (int)(text.len - lit_off)};
                lit = NULL;
            }
            if (*p == '}') { st = bad_at(c, p, "unmatched '}'"); break; }
            if (mode == 'd') { st = bad_at(c, p, "'{' is not allowed here"); break; }
            const char *q = p + 1;
            int arg = 0;
            if (mode == 'n') {
                if (q >= e || *q != 'n' || q + 1 >= e || q[1] != '}') {
                    st = bad_at(c, p, "malformed placeholder: a count takes only {n}");
                    break;
                }
                q += 2;
            } else {
                const char *d = q;
                while (q < e && isdigit((unsigned char)*q) && q - d < 3) arg = arg * 10 + (*q++ - '0');
                if (q == d || q >= e || *q != '}') {
                    st = bad_at(c, p, "malformed placeholder: expected {0}, {1}, …");
                    break;
                }
                q++;
                if (arity >= 0 && arg >= arity) {
                    st = bad_at(c, p, "placeholder {%d} with arity %d", arg, arity);
                    break;
                }
            }
            NS_GROW(segs, cap, (size_t)nseg + 1);
            segs[nseg++] = (seg){arg, 0, 0};
            if (arg > maxarg) maxarg = arg;
            p = q;
            continue;
        }
        if (!lit) lit = p, lit_off = text.len;
        if (*p == '\\' && p + 1 < e && p[1] == '#') p++;
        ns_buf_putc(&text, *p++);
    }
    if (st == NS_OK && lit) {
        NS_GROW(segs, cap, (size_t)nseg + 1);
        segs[nseg++] = (seg){-1, (int)lit_off, (int)(text.len - lit_off)};
    }
    if (st != NS_OK) {
        ns_buf_free(&text);
        free(segs);
        return st;
    }
    t->text = text.data;
    t->segs = segs;
    t->nseg = nseg;
    t->maxarg = maxarg;
    return NS_OK;
}

static const char *skip_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    return p;
}
static const char *trim_end(const char *s, const char *e)
{
    while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
    return e;
}

/* "NAME[/N] = TEXT": the name and arity go to name and arity, the text bounds to ts and te. */
static ns_status parse_keyed(const lctx *c, const char *p, const char *e, bool allow_arity,
                             char **name, int *arity, const char **ts, const char **te)
{
    const char *n0 = p;
    while (p < e && *p != ' ' && *p != '\t' && *p != '=' && *p != '/') p++;
    if (p == n0) return bad_at(c, p, "expected a name before '='");
    const char *n1 = p;
    *arity = -1;
    if (p < e && *p == '/') {
        if (!allow_arity) return bad_at(c, p, "'/ARITY' is only allowed on atom: and not: lines");
        const char *d = ++p;
        int a = 0;
        while (p < e && isdigit((unsigned char)*p) && p - d < 3) a = a * 10 + (*p++ - '0');
        if (p == d || (p < e && *p != ' ' && *p != '\t' && *p != '='))
            return bad_at(c, d, "expected an arity (a number) after '/'");
        *arity = a;
    }
    p = skip_ws(p, e);
    if (p >= e || *p != '=') return bad_at(c, p, "expected '=' after the name");
    p = skip_ws(p + 1, e);
    if (p >= e) return bad_at(c, p, "expected a text after '='");
    *name = dup_lower_n(n0, (size_t)(n1 - n0));
    *ts = p;
    *te = e;
    return NS_OK;
}

static ns_status add_pred(const lctx *c, pred_tpl **arr, int *n, size_t *cap, const char *p,
                          const char *e, const char *kind)
{
    char *name;
    int arity;
    const char *ts, *te;
    ns_status st = parse_keyed(c, p, e, true, &name, &arity, &ts, &te);
    if (st) return st;
    for (int i = 0; i < *n; i++)
        if ((*arr)[i].arity == arity && strcmp((*arr)[i].pred, name) == 0) {
            st = bad_at(c, p, "duplicate %s template for '%s' (first on line %d)", kind, name,
                        (*arr)[i].line);
            free(name);
            return st;
        }
    tpl t;
    st = parse_tpl(c, ts, te, 'a', arity, &t);
    if (st) {
        free(name);
        return st;
    }
    NS_GROW(*arr, *cap, (size_t)*n + 1);
    (*arr)[(*n)++] = (pred_tpl){name, arity, t, c->lineno};
    return NS_OK;
}

static ns_status add_count(const lctx *c, ns_render *r, const char *p, const char *e)
{
    char *key;
    int arity;
    const char *ts, *te;
    ns_status st = parse_keyed(c, p, e, false, &key, &arity, &ts, &te);
    if (st) return st;
    for (int i = 0; i < r->ncounts; i++)
        if (strcmp(r->counts[i].key, key) == 0) {
            free(key);
            return bad_at(c, p, "duplicate count for '%s'", r->counts[i].key);
        }
    const char *bar = NULL;
    for (const char *q = ts; q < te; q++) {
        if (*q != '|') continue;
        if (bar) {
            free(key);
            return bad_at(c, q, "expected SINGULAR|PLURAL: a second '|'");
        }
        bar = q;
    }
    if (!bar) {
        free(key);
        return bad_at(c, te, "expected SINGULAR|PLURAL: missing '|'");
    }
    const char *s1 = ts, *e1 = trim_end(ts, bar), *s2 = skip_ws(bar + 1, te), *e2 = te;
    if (s1 == e1 || s2 == e2) {
        free(key);
        return bad_at(c, s1 == e1 ? ts : bar + 1, "empty singular or plural form");
    }
    count_tpl ct = {key, {0}, {0}, c->lineno};
    if ((st = parse_tpl(c, s1, e1, 'n', -1, &ct.one)) ||
        (st = parse_tpl(c, s2, e2, 'n', -1, &ct.many))) {
        tpl_free(&ct.one);
        free(key);
        return st;
    }
    NS_GROW(r->counts, r->counts_cap, (size_t)r->ncounts + 1);
    r->counts[r->ncounts++] = ct;
    return NS_OK;
}

static ns_status parse_line(lctx *c, ns_render *r, const char *s, const char *e, size_t *dom_cap,
                            ns_buf *desc)
{
    /* comment: '#' at the start or after whitespace, unless written "\#" */
    for (const char *p = s; p < e; p++) {
        if (*p == '\\' && p + 1 < e && p[1] == '#') { p++; continue; }
        if (*p == '#' && (p == s || p[-1] == ' ' || p[-1] == '\t')) { e = p; break; }
    }
    e = trim_end(s, e);
    const char *p = skip_ws(s, e);
    if (p >= e) return NS_OK;
    const char *k0 = p;
    while (p < e && (isalnum((unsigned char)*p) || *p == '-' || *p == '_')) p++;
    if (p == k0 || p >= e || *p != ':')
        return bad_at(c, p, "expected a directive 'domains:', 'description:', 'count:', "
                            "'atom:' or 'not:'");
    size_t klen = (size_t)(p - k0);
    const char *v = skip_ws(p + 1, e);
    if (eq_ci_n(k0, klen, "domains")) {
        int before = r->ndomains;
        for (const char *q = v; q < e;) {
            while (q < e && (*q == ' ' || *q == '\t' || *q == ',')) q++;
            const char *n0 = q;
            while (q < e && *q != ' ' && *q != '\t' && *q != ',') q++;
            if (q == n0) break;
            NS_GROW(r->domains, *dom_cap, (size_t)r->ndomains + 1);
            r->domains[r->ndomains++] = dup_lower_n(n0, (size_t)(q - n0));
        }
        if (r->ndomains == before) return bad_at(c, v, "'domains:' needs at least one name");
        return NS_OK;
    }
    if (eq_ci_n(k0, klen, "description")) {
        if (v >= e) return bad_at(c, v, "empty description");
        tpl t;
        ns_status st = parse_tpl(c, v, e, 'd', -1, &t);
        if (st) return st;
        if (desc->len) ns_buf_putc(desc, ' ');
        ns_buf_puts(desc, t.text ? t.text : "");
        tpl_free(&t);
        return NS_OK;
    }
    if (eq_ci_n(k0, klen, "count")) return add_count(c, r, v, e);
    if (eq_ci_n(k0, klen, "atom"))
        return add_pred(c, &r->atoms, &r->natoms, &r->atoms_cap, v, e, "atom");
    if (eq_ci_n(k0, klen, "not"))
        return add_pred(c, &r->nots, &r->nnots, &r->nots_cap, v, e, "not");
    return bad_at(c, k0, "unknown directive '%.*s:'", (int)(klen < 60 ? klen : 60), k0);
}

ns_status ns_render_parse(ns_render **out, const char *text, const char *path, ns_error *err)
{
    *out = NULL;
    ns_render *r = ns_xcalloc(1, sizeof *r);
    r->path = ns_xstrdup(path ? path : "");
    lctx c = {r->path, text, 0, err};
    size_t dom_cap = 0;
    ns_buf desc;
    ns_buf_init(&desc);
    ns_status st = NS_OK;
    for (const char *s = text; *s && st == NS_OK;) {
        const char *e = strchr(s, '\n');
        if (!e) e = s + strlen(s);
        c.line = s;
        c.lineno++;
        const char *le = (e > s && e[-1] == '\r') ? e - 1 : e;
        st = parse_line(&c, r, s, le, &dom_cap, &desc);
        s = *e ? e + 1 : e;
    }
    if (st == NS_OK && r->ndomains == 0)
        st = ns_error_set(err, NS_ERR_INPUT, r->path, 0, 0, "missing 'domains:' line");
    if (st == NS_OK && desc.len == 0)
        st = ns_error_set(err, NS_ERR_INPUT, r->path, 0, 0, "missing 'description:' line");
    r->description = desc.data;
    if (st) {
        ns_render_free(r);
        return st;
    }
    *out = r;
    return NS_OK;
}

ns_status ns_render_load(ns_render **r, const char *path, ns_error *err)
{
    *r = NULL;
    char *text;
    ns_status st = ns_read_file(path, &text, NULL, err);
    if (st) return st;
    st = ns_render_parse(r, text, path, err);
    free(text);
    return st;
}

static bool is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* The templates' folder when none is given, into buf: $NEXTSTATE_DOMAINS, else
 * ./domains, else domains beside the executable's folder (build/nextstate →
 * domains, the repository's). */
static const char *default_domains(char *buf, size_t cap)
{
    const char *env = getenv("NEXTSTATE_DOMAINS");
    if (env && *env) return env;
    if (is_dir("domains")) return "domains";
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n > 0) {
        buf[n] = 0;
        for (int up = 0; up < 2; up++) {
            char *slash = strrchr(buf, '/');
            if (!slash) break;
            *slash = 0;
        }
        size_t len = strlen(buf);
        if (len + sizeof "/domains" <= cap) {
            memcpy(buf + len, "/domains", sizeof "/domains");
            if (is_dir(buf)) return buf;
        }
    }
    return "domains";
}

ns_status ns_render_find(ns_render **out, const char *domains_dir, const char *name, ns_error *err)
{
    *out = NULL;
    char buf[4096];
    if (!domains_dir) domains_dir = default_domains(buf, sizeof buf);
    DIR *d = opendir(domains_dir);
    if (!d)
        return ns_error_set(err, NS_ERR_IO, domains_dir, 0, 0,
                            "cannot open the prompt templates' folder (--domains DIR or NEXTSTATE_DOMAINS)");
    char **paths = NULL;
    size_t np = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        size_t n = strlen(domains_dir) + strlen(de->d_name) + 2;
        char *sub = ns_xmalloc(n);
        snprintf(sub, n, "%s/%s", domains_dir, de->d_name);
        DIR *d2 = is_dir(sub) ? opendir(sub) : NULL;
        struct dirent *f;
        while (d2 && (f = readdir(d2))) {
            size_t fl = strlen(f->d_name);
            if (fl < 10 || strncmp(f->d_name, "render", 6) != 0 ||
                strcmp(f->d_name + fl - 4, ".txt") != 0)
                continue;
            size_t m = strlen(sub) + fl + 2;
            char *fp = ns_xmalloc(m);
            snprintf(fp, m, "%s/%s", sub, f->d_name);
            NS_GROW(paths, cap, np + 1);
            paths[np++] = fp;
        }
        if (d2) closedir(d2);
        free(sub);
    }
    closedir(d);
    if (np) qsort(paths, np, sizeof *paths, ns_cmp_str);
    ns_status st = NS_OK;
    ns_render *found = NULL;
    for (size_t i = 0; i < np && st == NS_OK; i++) {
        ns_render *r;
        if ((st = ns_render_load(&r, paths[i], err))) break;
        if (!ns_render_applies_to(r, name)) {
            ns_render_free(r);
            continue;
        }
        if (found) {
            st = ns_error_set(err, NS_ERR_INPUT, paths[i], 0, 0,
                              "domain '%s' is also listed by %s", name, found->path);
            ns_render_free(r);
            break;
        }
        found = r;
    }
    if (st == NS_OK && !found)
        st = ns_error_set(err, NS_ERR_INPUT, domains_dir, 0, 0,
                          "no render template lists domain '%s' (looked in */render*.txt)", name);
    for (size_t i = 0; i < np; i++) free(paths[i]);
    free(paths);
    if (st) {
        ns_render_free(found);
        return st;
    }
    *out = found;
    return NS_OK;
}

/* ------------------------------------------------------------- atom texts */

typedef struct patom {
    bool neg;
    const char *name;
    int nlen;
    int nargs;
    const char *arg[MAX_ARGS];
    int alen[MAX_ARGS];
} patom;

static bool is_name_char(char ch)
{
    return ch && ch != '(' && ch != ')' && !isspace((unsigned char)ch);
}
static const char *skip_space(const char *p)
{
    while (isspace((unsigned char)*p)) p++;
    return p;
}

/* Parses "(pred a b)" at p; returns the position after ')' or NULL. */
static const char *parse_atom_at(const char *p, patom *a)
{
    p = skip_space(p);
    if (*p != '(') return NULL;
    p = skip_space(p + 1);
    a->name = p;
    while (is_name_char(*p)) p++;
    a->nlen = (int)(p - a->name);
    if (a->nlen == 0) return NULL;
    a->nargs = 0;
    for (;;) {
        p = skip_space(p);
        if (*p == ')') return p + 1;
        const char *s = p;
        while (is_name_char(*p)) p++;
        if (p == s || a->nargs == MAX_ARGS) return NULL;
        a->arg[a->nargs] = s;
        a->alen[a->nargs++] = (int)(p - s);
    }
}

/* Parses a whole literal text: "(p a)" or "(not (p a))". */
static bool parse_literal(const char *text, patom *a)
{
    a->neg = false;
    const char *p = skip_space(text);
    if (*p == '(') {
        const char *q = skip_space(p + 1);
        if (tolower((unsigned char)q[0]) == 'n' && tolower((unsigned char)q[1]) == 'o' &&
            tolower((unsigned char)q[2]) == 't') {
            const char *r = skip_space(q + 3);
            if (*r == '(' && (isspace((unsigned char)q[3]) || q[3] == '(')) {
                const char *e = parse_atom_at(r, a);
                if (!e) return false;
                e = skip_space(e);
                if (*e != ')') return false;
                a->neg = true;
                return *skip_space(e + 1) == '\0';
            }
        }
    }
    const char *e = parse_atom_at(p, a);
    return e && *skip_space(e) == '\0';
}

/* Appends t instantiated with a's arguments (t->maxarg < a->nargs). */
static void put_tpl(ns_buf *b, const tpl *t, const patom *a, bool lower_first)
{
    for (int i = 0; i < t->nseg; i++) {
        const seg *s = &t->segs[i];
        if (s->arg >= 0) {
            ns_buf_put(b, a->arg[s->arg], (size_t)a->alen[s->arg]);
        } else if (s->len > 0) {
            size_t at = b->len;
            ns_buf_put(b, t->text + s->off, (size_t)s->len);
            if (lower_first && i == 0) b->data[at] = (char)tolower((unsigned char)b->data[at]);
        }
    }
}

/* Appends the clause of literal text `text` (already parsed into a). */
static ns_status put_clause(ns_buf *b, const ns_render *r, const char *text, const patom *a,
                            ns_error *err)
{
    const pred_tpl *pt = find_pred(r->atoms, r->natoms, a->name, (size_t)a->nlen, a->nargs);
    if (!pt)
        return ns_error_set(err, NS_ERR_INPUT, r->path, 0, 0,
                            "no template for predicate '%.*s' with %d argument%s (atom %s)",
                            a->nlen, a->name, a->nargs, a->nargs == 1 ? "" : "s", text);
    const pred_tpl *nt = a->neg ? find_pred(r->nots, r->nnots, a->name, (size_t)a->nlen, a->nargs)
                                : NULL;
    const pred_tpl *use = nt ? nt : pt;
    if (use->t.maxarg >= a->nargs)
        return ns_error_set(err, NS_ERR_INPUT, r->path, use->line, 0,
                            "template of '%s' uses {%d} but atom %s has %d argument%s",
                            use->pred, use->t.maxarg, text, a->nargs, a->nargs == 1 ? "" : "s");
    if (a->neg && !nt) {
        ns_buf_puts(b, NOT_PREFIX);
        put_tpl(b, &pt->t, a, true);
    } else {
        put_tpl(b, &use->t, a, false);
    }
    return NS_OK;
}

/* Separator before item i of n in "A, B, and C" (also "A, and B"). */
static void put_sep(ns_buf *b, int i, int n)
{
    if (i > 0) ns_buf_puts(b, i == n - 1 ? ", and " : ", ");
}

/* --------------------------------------------------------------- prepared */

struct ns_render_prep {
    int natoms, nstatics;
    char *pool;       /* clauses, each NUL-terminated */
    size_t *off;      /* natoms + nstatics offsets into pool */
    uint32_t *len;    /* their lengths */
    char *head;       /* header, problem text, state header */
    size_t head_len;
    char *tail;       /* goal header, goal text */
    size_t tail_len;
    char *problem;    /* problem text */
    char *goal;       /* goal text */
};

void ns_render_prep_free(ns_render_prep *pp)
{
    if (!pp) return;
    free(pp->pool);
    free(pp->off);
    free(pp->len);
    free(pp->head);
    free(pp->tail);
    free(pp->problem);
    free(pp->goal);
    free(pp);
}

static ns_status bad_text(ns_error *err, const char *what, int i, const char *text)
{
    return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "malformed %s %d: '%s'", what, i,
                        text ? text : "(null)");
}

/* Writes the object-count sentence ("There are 3 cars and 2 locations.") into b. */
static ns_status put_counts(ns_buf *b, const ns_render *r, const ns_render_problem *p,
                            ns_error *err)
{
    if (r->ncounts == 0) return NS_OK;
    ns_strmap objs;
    ns_strmap_init(&objs);
    for (int i = 0; i < p->nobjects; i++) ns_strmap_put(&objs, p->objects[i], i);
    /* unary statics: (predicate name, object id) */
    typedef struct { const char *key; int klen, obj; } unary;
    unary *us = NULL;
    size_t ucap = 0;
    int nu = 0;
    ns_status st = NS_OK;
    char name[256];
    for (int i = 0; i < p->nstatics && st == NS_OK; i++) {
        patom a;
        if (!p->statics[i] || !parse_literal(p->statics[i], &a) || a.neg) {
            st = bad_text(err, "static atom", i, p->statics[i]);
            break;
        }
        if (a.nargs != 1 || a.alen[0] >= (int)sizeof name) continue;
        snprintf(name, sizeof name, "%.*s", a.alen[0], a.arg[0]);
        int o = ns_strmap_get(&objs, name);
        if (o < 0) continue;
        NS_GROW(us, ucap, (size_t)nu + 1);
        us[nu++] = (unary){a.name, a.nlen, o};
    }
    if (st == NS_OK) {
        unsigned char *mark = ns_xcalloc((size_t)p->nobjects + 1, 1);
        ns_buf items;
        ns_buf_init(&items);
        size_t *ioff = ns_xmalloc(sizeof *ioff * ((size_t)r->ncounts + 1));
        int nitems = 0, first_n = 0;
        for (int c = 0; c < r->ncounts; c++) {
            const count_tpl *ct = &r->counts[c];
            memset(mark, 0, (size_t)p->nobjects + 1);
            int n = 0;
            for (int o = 0; o < p->nobjects; o++)
                if (p->object_types && p->object_types[o] && ns_streq_ci(p->object_types[o], ct->key))
                    mark[o] = 1;
            for (int u = 0; u < nu; u++)
                if (eq_ci_n(us[u].key, (size_t)us[u].klen, ct->key)) mark[us[u].obj] = 1;
            for (int o = 0; o < p->nobjects; o++) n += mark[o];
            if (n == 0) continue;
            if (nitems == 0) first_n = n;
            ioff[nitems++] = items.len;
            const tpl *t = n == 1 ? &ct->one : &ct->many;
            for (int s = 0; s < t->nseg; s++) {
                if (t->segs[s].arg >= 0) ns_buf_printf(&items, "%d", n);
                else ns_buf_put(&items, t->text + t->segs[s].off, (size_t)t->segs[s].len);
            }
        }
        ioff[nitems] = items.len;
        if (nitems > 0) {
            ns_buf_puts(b, first_n == 1 ? "There is " : "There are ");
            for (int i = 0; i < nitems; i++) {
                if (i > 0) ns_buf_puts(b, nitems == 2 ? " and " : i == nitems - 1 ? ", and " : ", ");
                ns_buf_put(b, items.data + ioff[i], ioff[i + 1] - ioff[i]);
            }
            ns_buf_putc(b, '.');
        }
        free(ioff);
        ns_buf_free(&items);
        free(mark);
    }
    free(us);
    ns_strmap_free(&objs);
    return st;
}

ns_status ns_render_prep_new(ns_render_prep **out, const ns_render *r, const ns_render_problem *p,
                             ns_error *err)
{
    *out = NULL;
    ns_render_prep *pp = ns_xcalloc(1, sizeof *pp);
    pp->natoms = p->natoms;
    pp->nstatics = p->statics ? p->nstatics : 0;
    size_t total = (size_t)pp->natoms + (size_t)pp->nstatics;
    pp->off = ns_xmalloc(sizeof *pp->off * (total + 1));
    pp->len = ns_xmalloc(sizeof *pp->len * (total + 1));
    ns_buf pool, b;
    ns_buf_init(&pool);
    ns_buf_init(&b);
    ns_status st = NS_OK;
    for (size_t i = 0; i < total && st == NS_OK; i++) {
        bool fluent = i < (size_t)pp->natoms;
        int k = fluent ? (int)i : (int)(i - (size_t)pp->natoms);
        const char *text = fluent ? p->atoms[k] : p->statics[k];
        patom a;
        if (!text || !parse_literal(text, &a) || a.neg) {
            st = bad_text(err, fluent ? "atom" : "static atom", k, text);
            break;
        }
        pp->off[i] = pool.len;
        st = put_clause(&pool, r, text, &a, err);
        pp->len[i] = (uint32_t)(pool.len - pp->off[i]);
        ns_buf_putc(&pool, '\0');
    }
    /* problem text */
    if (st == NS_OK) {
        ns_buf_puts(&b, r->description);
        ns_buf cnt;
        ns_buf_init(&cnt);
        st = put_counts(&cnt, r, p, err);
        if (cnt.len) {
            ns_buf_putc(&b, ' ');
            ns_buf_put(&b, cnt.data, cnt.len);
        }
        ns_buf_free(&cnt);
        pp->problem = ns_xstrdup(b.data);
    }
    /* goal text */
    if (st == NS_OK) {
        b.len = 0;
        b.data[0] = '\0';
        for (int i = 0; i < p->ngoal && st == NS_OK; i++) {
            patom a;
            if (!p->goal[i] || !parse_literal(p->goal[i], &a)) {
                st = bad_text(err, "goal literal", i, p->goal[i]);
                break;
            }
            put_sep(&b, i, p->ngoal);
            st = put_clause(&b, r, p->goal[i], &a, err);
        }
        if (st == NS_OK) pp->goal = ns_xstrdup(b.data);
    }
    if (st == NS_OK) {
        b.len = 0;
        ns_buf_puts(&b, HDR_PROBLEM);
        ns_buf_puts(&b, pp->problem);
        ns_buf_puts(&b, HDR_STATE);
        pp->head_len = b.len;
        pp->head = ns_xstrdup(b.data);
        b.len = 0;
        ns_buf_puts(&b, HDR_GOAL);
        ns_buf_puts(&b, pp->goal);
        pp->tail_len = b.len;
        pp->tail = ns_xstrdup(b.data);
    }
    ns_buf_free(&b);
    pp->pool = pool.data;
    if (st) {
        ns_render_prep_free(pp);
        return st;
    }
    *out = pp;
    return NS_OK;
}

int ns_render_prep_natoms(const ns_render_prep *pp) { return pp->natoms; }
const char *ns_render_prep_clause(const ns_render_prep *pp, int atom)
{
    return pp->pool + pp->off[atom];
}
const char *ns_render_prep_static_clause(const ns_render_prep *pp, int i)
{
    return pp->pool + pp->off[(size_t)pp->natoms + (size_t)i];
}
const char *ns_render_prep_problem_text(const ns_render_prep *pp) { return pp->problem; }
const char *ns_render_prep_goal_text(const ns_render_prep *pp) { return pp->goal; }

static ns_status check_ids(int natoms, const int *ids, int n, ns_error *err)
{
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= natoms)
            return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                                "atom id %d out of range [0, %d)", ids[i], natoms);
        if (i > 0 && ids[i] <= ids[i - 1])
            return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0,
                                "atom ids must be strictly ascending (%d after %d)", ids[i],
                                ids[i - 1]);
    }
    return NS_OK;
}

static void put_state(const ns_render_prep *pp, const int *ids, int n, ns_buf *out)
{
    size_t need = 0;
    for (int i = 0; i < n; i++) need += pp->len[ids[i]] + 6;
    NS_GROW(out->data, out->cap, out->len + need + 1);
    for (int i = 0; i < n; i++) {
        put_sep(out, i, n);
        ns_buf_put(out, pp->pool + pp->off[ids[i]], pp->len[ids[i]]);
    }
}

ns_status ns_render_prep_state(const ns_render_prep *pp, const int *ids, int n, ns_buf *out,
                               ns_error *err)
{
    ns_status st = check_ids(pp->natoms, ids, n, err);
    if (st) return st;
    put_state(pp, ids, n, out);
    return NS_OK;
}

ns_status ns_render_prep_prompt(const ns_render_prep *pp, const int *ids, int n, ns_buf *out,
                                ns_error *err)
{
    ns_status st = check_ids(pp->natoms, ids, n, err);
    if (st) return st;
    ns_buf_put(out, pp->head, pp->head_len);
    put_state(pp, ids, n, out);
    ns_buf_put(out, pp->tail, pp->tail_len);
    return NS_OK;
}

static void put_state_bits(const ns_render_prep *pp, const uint64_t *bits, ns_buf *out)
{
    int nw = (pp->natoms + 63) / 64, n = 0;
    for (int w = 0; w < nw; w++) {
        uint64_t x = bits[w];
        if (w == nw - 1 && (pp->natoms & 63)) x &= ((uint64_t)1 << (pp->natoms & 63)) - 1;
        n += __builtin_popcountll(x);
    }
    int i = 0;
    for (int w = 0; w < nw; w++) {
        uint64_t x = bits[w];
        if (w == nw - 1 && (pp->natoms & 63)) x &= ((uint64_t)1 << (pp->natoms & 63)) - 1;
        while (x) {
            int a = w * 64 + __builtin_ctzll(x);
            x &= x - 1;
            put_sep(out, i++, n);
            ns_buf_put(out, pp->pool + pp->off[a], pp->len[a]);
        }
    }
}

void ns_render_prep_state_bits(const ns_render_prep *pp, const uint64_t *bits, ns_buf *out)
{
    put_state_bits(pp, bits, out);
}

void ns_render_prep_prompt_bits(const ns_render_prep *pp, const uint64_t *bits, ns_buf *out)
{
    ns_buf_put(out, pp->head, pp->head_len);
    put_state_bits(pp, bits, out);
    ns_buf_put(out, pp->tail, pp->tail_len);
}

const char *ns_prompt_layout_name(ns_prompt_layout l) { return l == NS_PROMPT_STATE_FIRST ? "state-first" : "paper"; }

int ns_prompt_layout_parse(const char *s)
{
    if (!strcmp(s, "paper")) return NS_PROMPT_PAPER;
    if (!strcmp(s, "state-first")) return NS_PROMPT_STATE_FIRST;
    return -1;
}

void ns_render_prep_prompt_layout_bits(const ns_render_prep *pp, const uint64_t *bits, ns_prompt_layout l, ns_buf *out)
{
    if (l == NS_PROMPT_PAPER) {
        ns_render_prep_prompt_bits(pp, bits, out);
        return;
    }
    ns_buf_puts(out, HDR_STATE + 2); /* without the blank line that separates it from the problem block */
    put_state_bits(pp, bits, out);
    ns_buf_puts(out, "\n\n");
    ns_buf_puts(out, HDR_PROBLEM);
    ns_buf_puts(out, pp->problem);
    ns_buf_put(out, pp->tail, pp->tail_len);
}

void ns_render_prep_prompt_shuffled_bits(const ns_render_prep *pp, const uint64_t *bits, ns_prompt_layout l,
                                         uint64_t seed, ns_buf *out)
{
    int *ids = ns_xmalloc((size_t)(pp->natoms ? pp->natoms : 1) * sizeof *ids);
    int n = ns_render_true_atoms(bits, pp->natoms, ids);
    ns_rng r;
    ns_rng_seed(&r, seed);
    ns_rng_shuffle_int(&r, ids, (size_t)n);
    if (l == NS_PROMPT_PAPER) {
        ns_buf_put(out, pp->head, pp->head_len);
        put_state(pp, ids, n, out);
        ns_buf_put(out, pp->tail, pp->tail_len);
    } else {
        ns_buf_puts(out, HDR_STATE + 2);
        put_state(pp, ids, n, out);
        ns_buf_puts(out, "\n\n");
        ns_buf_puts(out, HDR_PROBLEM);
        ns_buf_puts(out, pp->problem);
        ns_buf_put(out, pp->tail, pp->tail_len);
    }
    free(ids);
}

void ns_render_prep_context_only(const ns_render_prep *pp, ns_buf *out)
{
    ns_buf_put(out, pp->head, pp->head_len);
    ns_buf_put(out, pp->tail, pp->tail_len);
}

/* ---------------------------------------------------------------- one-shot */

ns_status ns_render_prompt(const ns_render *r, const ns_render_problem *p, const int *ids, int n,
                           ns_buf *out, ns_error *err)
{
    ns_render_prep *pp;
    ns_status st = ns_render_prep_new(&pp, r, p, err);
    if (st) return st;
    st = ns_render_prep_prompt(pp, ids, n, out, err);
    ns_render_prep_free(pp);
    return st;
}

ns_status ns_render_context_only(const ns_render *r, const ns_render_problem *p, ns_buf *out,
                                 ns_error *err)
{
    ns_render_prep *pp;
    ns_status st = ns_render_prep_new(&pp, r, p, err);
    if (st) return st;
    ns_render_prep_context_only(pp, out);
    ns_render_prep_free(pp);
    return NS_OK;
}

ns_status ns_render_state_clauses(const ns_render *r, const ns_render_problem *p, const int *ids,
                                  int n, ns_buf *out, ns_error *err)
{
    ns_render_prep *pp;
    ns_status st = ns_render_prep_new(&pp, r, p, err);
    if (st) return st;
    st = ns_render_prep_state(pp, ids, n, out, err);
    ns_render_prep_free(pp);
    return st;
}

ns_status ns_render_literals(const ns_render_problem *p, const int *ids, int n, ns_buf *out,
                             ns_error *err)
{
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= p->natoms)
            return ns_error_set(err, NS_ERR_INPUT, NULL, 0, 0, "atom id %d out of range [0, %d)",
                                ids[i], p->natoms);
    for (int i = 0; i < n; i++) {
        if (i > 0) ns_buf_putc(out, ' ');
        ns_buf_puts(out, p->atoms[ids[i]]);
    }
    return NS_OK;
}

int ns_render_true_atoms(const uint64_t *bits, int natoms, int *ids)
{
    int n = 0;
    for (int w = 0; w < (natoms + 63) / 64; w++) {
        uint64_t x = bits[w];
        while (x) {
            int a = w * 64 + __builtin_ctzll(x);
            x &= x - 1;
            if (a >= natoms) break;
            ids[n++] = a;
        }
    }
    return n;
}

/* ------------------------------------------------------------ from a task */

void ns_render_names_from_task(ns_render_names *n, const ns_task *t)
{
    const ns_problem *pb = t->problem;
    const ns_domain *d = t->domain;
    int total = 2 * pb->nobjects + t->natoms + t->nstatics + pb->ngoal;
    n->strings = ns_xcalloc((size_t)total + 1, sizeof *n->strings);
    n->nstrings = 0;
    const char **objs = ns_xcalloc((size_t)pb->nobjects + 1, sizeof *objs);
    const char **types = ns_xcalloc((size_t)pb->nobjects + 1, sizeof *types);
    const char **atoms = ns_xcalloc((size_t)t->natoms + 1, sizeof *atoms);
    const char **stat = ns_xcalloc((size_t)t->nstatics + 1, sizeof *stat);
    const char **goal = ns_xcalloc((size_t)pb->ngoal + 1, sizeof *goal);
    ns_buf b;
    ns_buf_init(&b);
#define NS_KEEP_(dst, s) (n->strings[n->nstrings] = ns_xstrdup(s), (dst) = n->strings[n->nstrings++])
    for (int i = 0; i < pb->nobjects; i++) {
        NS_KEEP_(objs[i], pb->objects[i]);
        NS_KEEP_(types[i], d->types[pb->object_types[i]].name);
    }
    for (int i = 0; i < t->natoms; i++) {
        b.len = 0;
        ns_task_atom_str(t, i, &b);
        NS_KEEP_(atoms[i], b.data);
    }
    for (int i = 0; i < t->nstatics; i++) {
        b.len = 0;
        ns_task_static_str(t, i, &b);
        NS_KEEP_(stat[i], b.data);
    }
    for (int i = 0; i < pb->ngoal; i++) {
        const ns_lit *l = &pb->goal[i];
        b.len = 0;
        ns_buf_puts(&b, l->neg ? "(not (" : "(");
        ns_buf_puts(&b, l->pred == NS_PRED_EQUAL ? "=" : d->preds[l->pred].name);
        for (int k = 0; k < l->nargs; k++) {
            ns_buf_putc(&b, ' ');
            ns_buf_puts(&b, pb->objects[l->args[k]]);
        }
        ns_buf_puts(&b, l->neg ? "))" : ")");
        NS_KEEP_(goal[i], b.data);
    }
#undef NS_KEEP_
    ns_buf_free(&b);
    n->p = (ns_render_problem){pb->nobjects, objs, types, t->natoms, atoms,
                               t->nstatics, stat, pb->ngoal, goal};
}

void ns_render_names_free(ns_render_names *n)
{
    for (int i = 0; i < n->nstrings; i++) free(n->strings[i]);
    free(n->strings);
    free((void *)n->p.objects);
    free((void *)n->p.object_types);
    free((void *)n->p.atoms);
    free((void *)n->p.statics);
    free((void *)n->p.goal);
    memset(n, 0, sizeof *n);
}
