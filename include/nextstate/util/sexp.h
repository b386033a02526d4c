/* sexp.h — S-expressions with source positions: the shared reader under the
 * PDDL and plan parsers.  Atoms are lower-cased (PDDL names are
 * case-insensitive); `;` starts a comment that runs to the end of the line. */
#ifndef NEXTSTATE_SEXP_H
#define NEXTSTATE_SEXP_H

#include <stdbool.h>
#include "nextstate/util/error.h"

typedef struct ns_sexp_node {
    bool is_list;
    const char *atom; /* NUL-terminated, lower-case; NULL for lists */
    int line, col;    /* of the atom or the opening parenthesis */
    int nkids;
    int kids;         /* index of the first child in ns_sexp.kid_index */
} ns_sexp_node;

typedef struct ns_sexp {
    const char *path;
    ns_sexp_node *nodes;
    int nnodes;
    int *kid_index;  /* children of list i: kid_index[kids … kids+nkids) */
    int *top;        /* top-level nodes */
    int ntop;
    char *strings;   /* atom text pool */
} ns_sexp;

/* Reads every top-level expression of text.  Unbalanced parentheses, stray
 * characters and nesting deeper than 1000 are NS_ERR_INPUT with a position. */
ns_status ns_sexp_parse(ns_sexp *s, const char *text, const char *path, ns_error *err);
void ns_sexp_free(ns_sexp *s);

static inline const ns_sexp_node *ns_sexp_node_at(const ns_sexp *s, int i) { return &s->nodes[i]; }
/* The k-th child of list node i. */
static inline const ns_sexp_node *ns_sexp_kid(const ns_sexp *s, const ns_sexp_node *n, int k)
{
    return &s->nodes[s->kid_index[n->kids + k]];
}
/* Is node n the atom a? */
bool ns_sexp_is(const ns_sexp_node *n, const char *a);

#endif
