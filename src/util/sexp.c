/* sexp.c — S-expression reader with line:col positions. */
#include "nextstate/util/sexp.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/util/util.h"

#define MAX_DEPTH 1000

typedef struct reader {
    const char *p;
    int line, col;
    const char *path;
    ns_sexp *s;
    size_t node_cap, kid_cap, str_cap, str_len;
    size_t kid_len;
    int *stack; /* pending child indices of open lists */
    size_t stack_len, stack_cap;
    ns_error *err;
} reader;

static void skip_space(reader *r)
{
    for (;;) {
        char c = *r->p;
        if (c == '\n') {
            r->line++;
            r->col = 1;
            r->p++;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            r->col++;
            r->p++;
        } else if (c == ';') {
            while (*r->p && *r->p != '\n') r->p++;
        } else {
            return;
        }
    }
}

static int new_node(reader *r, bool is_list, int line, int col)
{
    NS_GROW(r->s->nodes, r->node_cap, (size_t)r->s->nnodes + 1);
    ns_sexp_node *n = &r->s->nodes[r->s->nnodes];
    memset(n, 0, sizeof *n);
    n->is_list = is_list;
    n->line = line;
    n->col = col;
    return r->s->nnodes++;
}

static void push(reader *r, int v)
{
    NS_GROW(r->stack, r->stack_cap, r->stack_len + 1);
    r->stack[r->stack_len++] = v;
}

/* Parses one expression at r->p (not at ')' or end); returns its node. */
static int parse_expr(reader *r, int depth)
{
    int line = r->line, col = r->col;
    if (*r->p == '(') {
        if (depth >= MAX_DEPTH) {
            ns_error_set(r->err, NS_ERR_INPUT, r->path, line, col, "expressions nested deeper than %d", MAX_DEPTH);
            return -1;
        }
        r->p++;
        r->col++;
        int id = new_node(r, true, line, col);
        size_t base = r->stack_len;
        for (;;) {
            skip_space(r);
            if (*r->p == '\0') {
                ns_error_set(r->err, NS_ERR_INPUT, r->path, line, col,
                             "unbalanced parentheses: '(' is never closed");
                return -1;
            }
            if (*r->p == ')') {
                r->p++;
                r->col++;
                break;
            }
            int kid = parse_expr(r, depth + 1);
            if (kid < 0) return -1;
            push(r, kid);
        }
        size_t nk = r->stack_len - base;
        NS_GROW(r->s->kid_index, r->kid_cap, r->kid_len + nk);
        if (nk) memcpy(r->s->kid_index + r->kid_len, r->stack + base, nk * sizeof(int));
        r->s->nodes[id].kids = (int)r->kid_len;
        r->s->nodes[id].nkids = (int)nk;
        r->kid_len += nk;
        r->stack_len = base;
        return id;
    }
    /* atom: up to whitespace, parenthesis or comment */
    const char *start = r->p;
    while (*r->p && !isspace((unsigned char)*r->p) && *r->p != '(' && *r->p != ')' && *r->p != ';') {
        unsigned char c = (unsigned char)*r->p;
        if (c < 32 || c == 127) {
            ns_error_set(r->err, NS_ERR_INPUT, r->path, r->line, r->col, "unexpected control character 0x%02x", c);
            return -1;
        }
        r->p++;
        r->col++;
    }
    size_t n = (size_t)(r->p - start);
    size_t ok = ns_utf8_valid_prefix(start, n);
    if (ok < n) {
        ns_error_set(r->err, NS_ERR_INPUT, r->path, line, col + (int)ok,
                     "name is not valid UTF-8 (byte 0x%02x)", (unsigned char)start[ok]);
        return -1;
    }
    int id = new_node(r, false, line, col);
    NS_GROW(r->s->strings, r->str_cap, r->str_len + n + 1);
    for (size_t i = 0; i < n; i++) r->s->strings[r->str_len + i] = (char)tolower((unsigned char)start[i]);
    r->s->strings[r->str_len + n] = '\0';
    r->s->nodes[id].kids = (int)r->str_len; /* fixed up to a pointer at the end */
    r->str_len += n + 1;
    return id;
}

ns_status ns_sexp_parse(ns_sexp *s, const char *text, const char *path, ns_error *err)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    if ((unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB && (unsigned char)text[2] == 0xBF)
        text += 3; /* UTF-8 byte-order mark */
    reader r = {.p = text, .line = 1, .col = 1, .path = path, .s = s, .err = err};
    size_t top_cap = 0;
    ns_status st = NS_OK;
    for (;;) {
        skip_space(&r);
        if (*r.p == '\0') break;
        if (*r.p == ')') {
            st = ns_error_set(err, NS_ERR_INPUT, path, r.line, r.col, "unbalanced parentheses: unexpected ')'");
            break;
        }
        int id = parse_expr(&r, 0);
        if (id < 0) {
            st = err ? err->code : NS_ERR_INPUT;
            if (!err) st = NS_ERR_INPUT;
            break;
        }
        NS_GROW(s->top, top_cap, (size_t)s->ntop + 1);
        s->top[s->ntop++] = id;
    }
    free(r.stack);
    if (st != NS_OK) {
        ns_sexp_free(s);
        return st;
    }
    for (int i = 0; i < s->nnodes; i++) {
        if (!s->nodes[i].is_list) {
            s->nodes[i].atom = s->strings + s->nodes[i].kids;
            s->nodes[i].kids = 0;
        }
    }
    return NS_OK;
}

void ns_sexp_free(ns_sexp *s)
{
    free(s->nodes);
    free(s->kid_index);
    free(s->top);
    free(s->strings);
    memset(s, 0, sizeof *s);
}

bool ns_sexp_is(const ns_sexp_node *n, const char *a)
{
    return !n->is_list && strcmp(n->atom, a) == 0;
}
