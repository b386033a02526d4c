/* featurize.h — encoders on text and literals: the reference featurizers of
 * the EmbedPlan paper (bag of literals, bag of words, TF-IDF, character
 * n-grams, context-only prompts, fixed random vectors, tabular one-hot), for
 * states and for action text.  Vocabularies are fitted on training
 * documents only; a term seen only at transform time gets no column.
 *
 * KINDS (ns_feat_opts_init gives each kind's defaults; every flag below can
 * be changed):
 *
 *   literals  binary bag of literals: a document's terms are its top-level
 *             parenthesised groups, "(at c0 l0) (on c1)" → "(at c0 l0)",
 *             "(on c1)" (a text without parentheses: its whitespace-
 *             separated words), kept byte for byte.  An action "(board c1
 *             l1)" is one term.  Sparse, values 1.
 *   bow       bag of words: word 1-grams (tokens below), raw counts.  Sparse.
 *   tfidf     scikit-learn's TfidfVectorizer(token_pattern=r"[a-z0-9_-]+",
 *             ngram_range=(1, 2), min_df=2 (states) / 1 (actions),
 *             sublinear_tf=True): tokens are the maximal runs of [a-z0-9_-]
 *             in the ASCII-lowercased text, an n-gram joins n consecutive
 *             tokens with one space; tf = 1 + ln(count);
 *             idf = ln((1 + n) / (1 + df)) + 1 over the n training documents;
 *             rows L2-normalised.  When the vocabulary has more than svd_dim
 *             (1024) terms, rows are reduced to svd_dim dense columns by a
 *             truncated SVD fitted on the training rows (below).
 *   char      TfidfVectorizer(analyzer='char', ngram_range=(3, 5)) with the
 *             same min_df / tf / idf / L2 / SVD scheme: the text is
 *             ASCII-lowercased, every run of two or more Unicode whitespace
 *             characters (Python's \s: \t\n\v\f\r, U+001C–001F, space,
 *             U+0085, U+00A0, U+1680, U+2000–200A, U+2028/9, U+202F, U+205F,
 *             U+3000) becomes one space, and every window of 3, 4 and 5 code
 *             points (UTF-8 sequences) is a term.
 *   random    a fixed Gaussian vector per document: N(0, 1) entries,
 *             random_dim (512) of them, drawn from a generator seeded with
 *             ns_hash_bytes(text, len, seed), so the same text always gets
 *             the same vector whichever other texts are featurized
 *             (Marsaglia's polar method; bit-identical on one libm).  No
 *             fitting.  Dense.
 *   onehot    tabular one-hot: one column per distinct training document (the
 *             whole text is the key); an unseen document gets an all-zero row,
 *             or, with onehot_unknown, a 1 in a reserved last column.  Sparse.
 *             Its default source is the literal form, so two problems' states
 *             with the same true atoms (same object names) share a column: the
 *             same world state, which is what an action-conditioned (goal-free)
 *             transition model sees; source PROMPT keys on the goal as well.
 *
 * "Context-only" is not a kind but a source (ns_feat_source): the state's
 * prompt with the CURRENT STATE block emptied (ns_render_prep_context_only),
 * featurized with tfidf (or bow).  The source is recorded in the featurizer
 * so a loaded one is fed the same kind of text.
 *
 * DIFFERENCES FROM SCIKIT-LEARN.  Lowercasing is ASCII only (Python's
 * str.lower() also lowercases non-ASCII letters, and maps U+0130 and U+212A
 * to ASCII letters); texts must be UTF-8 to be saved (a term that is not
 * valid UTF-8 makes ns_featurizer_save fail); values are computed in double
 * and returned as float.  On ASCII text (all nextstate renderings) the
 * sparse TF-IDF and char rows equal scikit-learn's to float precision
 * (tests/unit/test_featurize.c checks 1e-6 against tests/fixtures/featurize/,
 * made by dev/featurize_reference.py).  Columns are the terms in byte order,
 * as scikit-learn's sorted vocabulary_.
 *
 * TRUNCATED SVD.  A randomized subspace iteration (Halko, Martinsson &
 * Tropp) on the training rows X (after tf-idf and L2; not centred, as
 * TruncatedSVD): a seeded Gaussian start of l = svd_dim + svd_oversample
 * columns in term space, svd_iters + 1 products with XᵀX (each followed by
 * block Gram–Schmidt re-orthonormalisation), then Rayleigh–Ritz (a
 * symmetric l × l eigenproblem in double, Householder + QL); products go
 * through ns_sgemm.  When l would reach 3/4 of the V columns, the exact
 * eigendecomposition of XᵀX (V × V) is used instead (cheaper and exact).
 * The subspace spanned matches TruncatedSVD(algorithm="randomized",
 * n_iter=svd_iters)'s, but signs (here: each component's largest-magnitude
 * entry is positive) and rotations within clusters of equal singular
 * values differ, and so do the last digits: compare outputs by
 * reconstruction error or explained variance, not element-wise.  XᵀX is
 * formed in float, so singular values far below the largest carry an
 * absolute error of order σ₁·sqrt(ε_float) ≈ 3e-4 σ₁.  The transform is
 * X · components (U Σ, as TruncatedSVD.transform).  With svd_max_rows > 0
 * the SVD is fitted on that many training rows drawn uniformly with the
 * seed (scikit-learn uses all rows, the default 0 here).  Cost: about
 * 4·(svd_iters + 2)·n·V·l flops with dense rows (2·n·V² on the exact path);
 * the training rows are held as CSR while fitting.
 *
 * FILES.  ns_featurizer_save(f, "DIR/NAME.json") writes NAME.json:
 *   {"format": "nextstate-featurizer", "version": 1, "kind", "source",
 *    "options": {…}, "ndocs": training documents, "nterms": V, "dim",
 *    "terms": [V strings, column order], "df": [V ints],
 *    "terms_crc32": CRC-32 of the terms (each followed by a NUL byte) and
 *        the df values (int64 little-endian),
 *    "svd": {"file": "NAME.svd.npy", "bytes", "crc32", "dim": k,
 *            "singular_values": […], "explained_variance_ratio": […]}}
 * and, when reduced, NAME.svd.npy (float32 [k, V], TruncatedSVD's
 * components_ layout), written first; each file atomically.  idf is
 * recomputed from df and ndocs on load.  Loading checks the format, version,
 * checksums and sizes and names the file on failure (a truncated file is
 * NS_ERR_INPUT "truncated or malformed").
 *
 * SPEED.  Tokenising is one pass over the text into a reused scratch buffer
 * (word n-grams are contiguous spans of the tokens re-joined by single
 * spaces); terms are looked up in an open-addressing table over one byte
 * arena whose slots hold a term's packed bytes (terms of up to 8 bytes, most
 * n-grams, compare with one integer compare) — not util.h's ns_strmap, whose
 * keys must be NUL-terminated strings that outlive it; no allocation per
 * token; a document's terms are counted in a dense per-column scratch
 * array.  Documents are streamed through ns_feat_docs, so rendered prompts
 * are never all held at once.  On a 2-vCPU machine, 288,684 ferry prompts
 * (about 1,300 characters each): tfidf fit 1.1 s + transform 2.0 s, char
 * (sparse, before SVD) transform 10 s. */
#ifndef NEXTSTATE_FEATURIZE_H
#define NEXTSTATE_FEATURIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nextstate/util/csr.h"
#include "nextstate/util/linalg.h"
#include "nextstate/data/dataset.h"
#include "nextstate/util/error.h"
#include "nextstate/data/render.h"
#include "nextstate/util/util.h"

#define NS_FEAT_FORMAT "nextstate-featurizer"
#define NS_FEAT_VERSION 1

typedef enum ns_feat_kind {
    NS_FEAT_LITERALS,
    NS_FEAT_BOW,
    NS_FEAT_TFIDF,
    NS_FEAT_CHAR,
    NS_FEAT_RANDOM,
    NS_FEAT_ONEHOT
} ns_feat_kind;

/* Which text of a dataset a featurizer reads (used by the dataset layer
 * below; recorded in the featurizer file). */
typedef enum ns_feat_source {
    NS_FEAT_SRC_PROMPT,   /* a state's full EmbedPlan prompt */
    NS_FEAT_SRC_CONTEXT,  /* the prompt with the CURRENT STATE block empty */
    NS_FEAT_SRC_LITERALS, /* a state's literal form "(at c0 l0) (on c1)" */
    NS_FEAT_SRC_ACTION    /* an action's grounded text "(board c1 l1)" */
} ns_feat_source;

typedef struct ns_feat_opts {
    ns_feat_kind kind;
    ns_feat_source source;
    int ngram_min, ngram_max; /* word n-grams (bow, tfidf) or character n-grams (char) */
    int min_df;               /* terms in fewer training documents get no column */
    bool binary;              /* counts clipped to 1 (literals, onehot) */
    bool sublinear_tf;        /* tf = 1 + ln(count) */
    bool use_idf;             /* multiply by idf = ln((1+n)/(1+df)) + 1 */
    bool l2_norm;             /* rows scaled to unit L2 norm (zero rows stay zero) */
    int svd_dim;              /* reduce to this many columns when V > svd_dim (0: never) */
    int svd_iters;            /* power iterations (scikit-learn's n_iter) */
    int svd_oversample;       /* extra columns of the random start */
    int64_t svd_max_rows;     /* fit the SVD on at most this many training rows (0: all) */
    int random_dim;           /* random: vector length */
    bool onehot_unknown;      /* onehot: reserve a last column for unseen documents */
    bool distinct;            /* fit counts each distinct document text once (64-bit text
                                 hashes; default: actions yes, states no) */
    uint64_t seed;            /* random vectors and the SVD's random start */
} ns_feat_opts;

/* The defaults of a kind (actions: min_df 1 and source ACTION; states:
 * min_df 2 for tfidf/char and source PROMPT, LITERALS for literals and
 * onehot).  tfidf: words 1–2, sublinear, idf, L2, svd 1024; char: chars
 * 3–5, same weights; bow: words 1–1, counts; literals, onehot: binary;
 * random: 512-d.  SVD: 5 iterations, oversample 10, svd_max_rows 0 (all),
 * seed 0; distinct for actions. */
void ns_feat_opts_init(ns_feat_opts *o, ns_feat_kind kind, bool actions);

/* "literals", "bow", "tfidf", "char", "random", "onehot" <-> kind; -1 when unknown. */
int ns_feat_kind_parse(const char *name);
const char *ns_feat_kind_name(ns_feat_kind k);
/* "prompt", "context", "literals", "action" <-> source; -1 when unknown. */
int ns_feat_source_parse(const char *name);
const char *ns_feat_source_name(ns_feat_source s);

/* A stream of documents: get(ctx, i, out, err) appends document i's text
 * (0 <= i < n) to out, which the caller has emptied. */
typedef struct ns_feat_docs {
    int64_t n;
    void *ctx;
    ns_status (*get)(void *ctx, int64_t i, ns_buf *out, ns_error *err);
} ns_feat_docs;

/* Documents from an array of NUL-terminated strings (borrowed). */
void ns_feat_docs_strings(ns_feat_docs *d, const char *const *texts, int64_t n);

/* Documents of several streams one after the other (to fit on the training
 * data of several datasets).  parts must outlive d; free ctx with
 * ns_feat_docs_concat_free. */
typedef struct ns_feat_concat_ctx {
    const ns_feat_docs *parts;
    int n;
    int64_t *start;
} ns_feat_concat_ctx;
void ns_feat_docs_concat(ns_feat_docs *d, ns_feat_concat_ctx *ctx, const ns_feat_docs *parts, int n);
void ns_feat_docs_concat_free(ns_feat_concat_ctx *ctx);

typedef struct ns_feat_table ns_feat_table; /* term lookup (internal) */

/* A fitted featurizer.  Fields are read-only for callers. */
typedef struct ns_featurizer {
    ns_feat_opts opts;
    int64_t ndocs;     /* training documents */
    int64_t nterms;    /* V: terms (columns of the sparse rows, before any SVD) */
    char *arena;       /* term i: arena + term_off[i], term_len[i] bytes, NUL after */
    int64_t *term_off;
    int32_t *term_len;
    int32_t *df;       /* [V] document frequencies on the training documents */
    double *idf;       /* [V] when use_idf, else NULL */
    int svd_dim;       /* k: output columns of the SVD (0: no reduction) */
    float *components; /* [V × k]: column j of the output = Σ_t x_t · components[t·k + j] */
    float *singular_values;          /* [k], descending */
    float *explained_variance_ratio; /* [k], as TruncatedSVD's, on the SVD's training rows */
    ns_feat_table *table;
} ns_featurizer;

/* Fits on training documents (kinds random and onehot included: random
 * only records its options).  Errors: NS_ERR_INPUT when no term survives
 * min_df (scikit-learn's "empty vocabulary"), or a document source error. */
ns_status ns_featurizer_fit(ns_featurizer *f, const ns_feat_opts *o, const ns_feat_docs *docs, ns_error *err);
void ns_featurizer_free(ns_featurizer *f);

/* Output width: k when reduced, random_dim for random, V (+1 with
 * onehot_unknown) otherwise. */
int64_t ns_featurizer_dim(const ns_featurizer *f);
/* Is the natural output sparse (no SVD, not random)? */
bool ns_featurizer_sparse(const ns_featurizer *f);
/* Column of a term (its bytes), or -1. */
int64_t ns_featurizer_find(const ns_featurizer *f, const char *term, size_t len);

/* The sparse rows (before any SVD) of docs, appended to out, which must be
 * initialised with ns_csr_init(out, ns_featurizer_nsparse(f)).  Not for
 * random (NS_ERR_USAGE). */
ns_status ns_featurizer_transform_sparse(const ns_featurizer *f, const ns_feat_docs *docs, ns_csr *out, ns_error *err);
/* Columns of the sparse rows: V, plus one with onehot_unknown. */
int64_t ns_featurizer_nsparse(const ns_featurizer *f);
/* The final output of docs as dense rows out[docs->n × dim]: random
 * vectors, SVD-reduced rows, or densified sparse rows. */
ns_status ns_featurizer_transform_dense(const ns_featurizer *f, const ns_feat_docs *docs, float *out, ns_error *err);
/* Projects sparse rows (of this featurizer, before SVD) with the SVD:
 * out[rows->nrows × k].  NS_ERR_USAGE when not reduced. */
ns_status ns_featurizer_project(const ns_featurizer *f, const ns_csr *rows, float *out, ns_error *err);

/* Saves to path (a .json file; the SVD basis goes beside it), see FILES. */
ns_status ns_featurizer_save(const ns_featurizer *f, const char *path, ns_error *err);
ns_status ns_featurizer_load(ns_featurizer *f, const char *path, ns_error *err);

/* ns_truncated_svd: util/linalg.h. */

/* ---- datasets ------------------------------------------------------------- */

/* Prepared renderers for every problem of ds: the template is found by the
 * dataset's PDDL domain name under domains_dir (ns_render_find).  *out gets
 * ds->nproblems entries; free with ns_feat_renders_free. */
ns_status ns_feat_renders_new(ns_render_prep ***out, const ns_dataset *ds, const char *domains_dir, ns_error *err);
void ns_feat_renders_free(ns_render_prep **preps, int n);

/* Appends a state's text: PROMPT, CONTEXT (both need preps) or LITERALS. */
void ns_feat_state_text(const ns_dataset *ds, ns_render_prep *const *preps, ns_feat_source src, int64_t state, ns_buf *out);

/* Documents over a dataset: the states ids[0..n) (sources PROMPT, CONTEXT,
 * LITERALS; preps may be NULL for LITERALS), or with source ACTION the
 * actions (problem, operator) pairs[2i], pairs[2i+1] (text: the problem's
 * ops[operator]).  The context holds borrowed pointers. */
typedef struct ns_feat_ds_ctx {
    const ns_dataset *ds;
    ns_render_prep *const *preps;
    ns_feat_source src;
    const int64_t *ids;
} ns_feat_ds_ctx;
void ns_feat_docs_dataset(ns_feat_docs *d, ns_feat_ds_ctx *ctx, const ns_dataset *ds, ns_render_prep *const *preps,
                          ns_feat_source src, const int64_t *ids, int64_t n);

/* Training documents of a split for dataset ds: the distinct states
 * (s and s′) of the training transitions that refer to dataset index d,
 * ascending (*ids, *n; malloc'ed), or with actions the distinct (problem,
 * operator) pairs whose action text is new, in first-seen order (pairs
 * as above, n pairs). */
void ns_feat_train_states(const int64_t *refs, int64_t nrefs, int d, const ns_dataset *ds, int64_t **ids, int64_t *n);
void ns_feat_train_actions(const int64_t *refs, int64_t nrefs, int d, const ns_dataset *ds, int64_t **pairs, int64_t *n);

/* Every action of ds as (problem, operator) pairs, problems in order (the
 * global action id order of ns_action_offsets); *n pairs, malloc'ed. */
int64_t *ns_feat_all_actions(const ns_dataset *ds, int64_t *n);

/* ---- `nextstate featurize`: a dataset's features into a folder ------------ */

/* OUTDIR receives states.npy (float32 [N, D]) or
 * states_{indptr,indices,values,shape}.npy (CSR), one row per dataset state;
 * or for actions, actions.npy / actions_*.npy, one row per (problem,
 * operator) pair, with action_offsets.npy (i64 [P+1]) and
 * transition_action.npy (i64 [T]: the row of each transition's action);
 * featurizer.json (+ featurizer.svd.npy); and last features.json: what was
 * written and the bytes + CRC-32 of every file. */
typedef struct ns_featurize_opts {
    const char *dataset, *out;
    const char *domains;  /* render templates (prompt and context sources) */
    ns_feat_opts feat;    /* kind, source, … of the featurizer to fit */
    /* how to fit (one of): on the training transitions of the split fit_on
     * (every dataset it names), on every row of the dataset (fit_all), or
     * not at all (random features); a featurizer given to the call is used
     * as is and vocab names its file in features.json */
    const char *fit_on, *vocab;
    bool fit_all;
} ns_featurize_opts;

/* What was written, for a summary line. */
typedef struct ns_featurize_report {
    const char *what;     /* "states" or "actions" */
    const char *fit_from; /* "vocab", "split", "all" or "none" */
    ns_feat_kind kind;
    ns_feat_source source;
    int64_t rows, dim, nnz, ndocs, nterms;
    int svd_dim;
    bool sparse;
    double fit_seconds, transform_seconds, write_seconds;
} ns_featurize_report;

/* Fits (unless f is given: a fitted featurizer, e.g. ns_featurizer_load'ed,
 * whose opts decide rows and source) and writes OUTDIR as above. */
ns_status ns_featurize_dataset(const ns_featurize_opts *o, const ns_featurizer *f, ns_featurize_report *rep,
                               ns_error *err);

#endif
