/* wl.h — relational state features: the Instance Learning Graph (ILG) of a
 * state and Weisfeiler–Leman (WL) colour refinement, computed exactly as the
 * WLPlan library does (the first paper's encoder), plus action encodings that
 * survive new objects.
 *
 * The graph of state s for a problem with goal G:
 *   - one node per object, colour 0: domain constants (sorted by bytes), then
 *     the problem's objects (sorted by bytes);
 *   - one node per positive goal atom, colour 1 + 5p + 1 (unachieved) or
 *     1 + 5p + 0 when the atom holds in s, with an edge to each argument
 *     object labelled by the 0-based argument position;
 *   - one node per negative goal atom, colour 1 + 5p + 3, or 1 + 5p + 2 when
 *     the atom holds in s; no edges;
 *   - one node per other atom of s, colour 1 + 5p + 4, with labelled edges to
 *     its arguments (nullary atoms are isolated nodes).
 *   p is the predicate's index in the vocabulary's predicate list (WLPlan
 *   sorts it by the string "name/arity").  Static atoms (task->statics) are
 *   atoms of s when opts.statics is set.
 *
 * Refinement, for t = 1..L: a node whose colour or any neighbour's colour is
 * unseen becomes unseen; otherwise its key is the sorted list of
 * R·c(v) + label over its edges (R = the largest predicate arity, at least 1;
 * repeated values kept with multiset hashing, duplicates removed with set
 * hashing) followed by the node's own colour, and its new colour is that
 * key's id in the layer-t vocabulary (unseen when absent).  Colour ids come
 * from one counter across all layers.  The feature vector has one entry per
 * colour id: for every layer 0..L, the number of nodes of that colour (raw
 * counts; unseen colours are dropped).
 *
 * The vocabulary JSON is WLPlan's model file ("colour_hash": one object per
 * layer mapping dot-joined keys to ids, "colour_to_layer", "domain", …).  Two
 * key spellings exist in the wild, both with the node's own colour last: the
 * paper's files use the flat R·c+label codes above (NS_WL_KEYS_FLAT), while
 * the WLPlan 2.1.0 wheel on PyPI writes (label, colour, count) triples sorted
 * by (label, colour) (NS_WL_KEYS_TRIPLES).  Both load into the same canonical
 * form; either can be written, so WLPlan can read a vocabulary fitted here.
 *
 * The first paper's golden vectors (seedA encodings/graphs) are reproduced
 * bit for bit with its shipped vocabularies, statics in and the goal vector
 * below (ns_wl_opts_default); with statics out every state vector of gripper,
 * logistics and visitall differs (blocks has no statics).  Fitting on its
 * training trajectories (problems in file-name order, states along the
 * plans, statics in, no goal graphs) reproduces the shipped vocabularies id
 * for id. */
#ifndef NEXTSTATE_WL_H
#define NEXTSTATE_WL_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/util/error.h"
#include "nextstate/core/pddl.h"
#include "nextstate/core/task.h"
#include "nextstate/util/util.h"

/* A node colour that the vocabulary does not know. */
#define NS_WL_UNSEEN (-1)

/* ILG initial colour offsets within a predicate's block of five. */
enum {
    NS_ILG_POS_GOAL_TRUE = 0,  /* positive goal atom that holds */
    NS_ILG_POS_GOAL_FALSE = 1, /* positive goal atom that does not hold */
    NS_ILG_NEG_GOAL_TRUE = 2,  /* negative goal atom that holds (goal violated) */
    NS_ILG_NEG_GOAL_FALSE = 3, /* negative goal atom that does not hold */
    NS_ILG_NON_GOAL = 4        /* any other atom of the state */
};

typedef enum ns_wl_key_format {
    NS_WL_KEYS_AUTO,   /* load only: detect from the keys (flat wins a tie) */
    NS_WL_KEYS_FLAT,   /* sorted R·colour+label codes, own colour last (the paper's files) */
    NS_WL_KEYS_TRIPLES /* (label, colour, count) triples, own colour last (WLPlan 2.1.0 on PyPI) */
} ns_wl_key_format;

/* A colour vocabulary: one key → colour-id table per layer 0..iterations.
 * Keys are held in the canonical flat form. */
typedef struct ns_wl_vocab {
    char *domain_name;
    int npreds; /* predicates in colour order (p = index) */
    char **pred_names;
    int *pred_arity;
    int nconstants; /* domain constants (sorted) */
    char **constants;
    int nschemata; /* action schemata (for action encodings) */
    char **schema_names;
    int *schema_arity;
    int iterations; /* L */
    bool multiset;  /* multiset (true) or set hashing */
    int radix;      /* R: largest predicate arity, at least 1 */
    int ncolours;   /* D: colour ids are 0..D-1 */
    ns_tupleset *keys; /* [L+1]: canonical key -> entry */
    int **ids;         /* [L+1][entry] = colour id */
    size_t *ids_cap;
    int *colour_layer; /* [D] layer of each colour id (-1 for a gap) */
    int *init_lut;     /* layer 0: initial colour value -> id (or -1) */
    int init_lut_n;    /* 1 + 5 * npreds */
    char package_version[32];
} ns_wl_vocab;

/* An empty vocabulary for domain d: predicates sorted by "name/arity",
 * constants sorted by bytes, schemata sorted by name.  Fill it with the
 * fitter below.  iterations ≥ 0. */
void ns_wl_vocab_init(ns_wl_vocab *v, const ns_domain *d, int iterations, bool multiset);

/* Reads a WLPlan model JSON (the paper's *_wl.json or a file written by
 * ns_wl_vocab_save or by WLPlan).  fmt selects the key spelling
 * (NS_WL_KEYS_AUTO detects it).  Requires feature_name "wl", graph
 * "ilg", pruning "none"; ids must be distinct and keys well formed
 * (NS_ERR_INPUT naming the file, layer and key otherwise). */
ns_status ns_wl_vocab_load(ns_wl_vocab *v, const char *path, ns_wl_key_format fmt, ns_error *err);
/* The same from JSON text held in memory; path names it in errors. */
ns_status ns_wl_vocab_parse(ns_wl_vocab *v, const char *text, size_t len, const char *path,
                            ns_wl_key_format fmt, ns_error *err);
/* Writes v as WLPlan model JSON (atomically) with keys spelled as fmt
 * (FLAT or TRIPLES; AUTO means FLAT).  Keys are written sorted, so equal
 * vocabularies give equal bytes. */
ns_status ns_wl_vocab_save(const ns_wl_vocab *v, const char *path, ns_wl_key_format fmt, ns_error *err);
/* Appends the JSON text to b (what ns_wl_vocab_save writes). */
void ns_wl_vocab_write(const ns_wl_vocab *v, ns_wl_key_format fmt, ns_buf *b);
void ns_wl_vocab_free(ns_wl_vocab *v);

/* Feature dimension D (number of colour ids). */
static inline int ns_wl_vocab_dim(const ns_wl_vocab *v) { return v->ncolours; }
/* Number of colours of layer t. */
int ns_wl_vocab_layer_size(const ns_wl_vocab *v, int t);
/* Id of a canonical key in layer t, or NS_WL_UNSEEN. */
int ns_wl_vocab_find(const ns_wl_vocab *v, int t, const int *key, int len);
/* True when a and b hold the same keys with the same ids in every layer
 * (and the same iterations, hashing and predicate list). */
bool ns_wl_vocab_equal(const ns_wl_vocab *a, const ns_wl_vocab *b);

typedef struct ns_wl_opts {
    int iterations; /* L used for embedding, ≤ the vocabulary's; -1: the vocabulary's */
    bool statics;   /* static atoms are state atoms ("statics in") */
} ns_wl_opts;

/* iterations -1, statics in (how the paper's vocabularies and golden vectors
 * were made). */
void ns_wl_opts_default(ns_wl_opts *o);

/* Per-task encoder: the mapping of the task onto the vocabulary (predicates
 * by name and arity, objects to nodes, goal nodes) and all scratch memory,
 * allocated once so encoding a state allocates nothing.  Not thread-safe;
 * use one encoder per thread. */
typedef struct ns_wl_encoder {
    const ns_wl_vocab *vocab;
    const ns_task *task;
    int iterations;
    bool statics;
    int nobj, ngoal, npos_goal;
    int *obj_node;    /* task object id -> node */
    int *node_obj;    /* node (< nobj) -> task object id */
    int *pred_colour; /* domain predicate -> vocabulary index p (-1: absent) */
    /* goal nodes nobj .. nobj+ngoal-1 (positive goals first, in problem order) */
    int *goal_fluent;    /* fluent atom id or -1 */
    bool *goal_static;   /* the goal atom is a true static */
    int *goal_colour;    /* colour when the atom does not hold */
    int *goal_args, *goal_args_off, *goal_nargs;
    int *argnode;     /* task->atom_args pool mapped to object nodes */
    int *atom_colour; /* fluent atoms then statics: non-goal colour (-1: predicate absent) */
    int *atom_goal;   /* fluent atom -> goal index or -1 */
    int *static_goal; /* static atom -> goal index or -1 */
    int *atom_rank;   /* fluent atoms then statics: rank of the atom text (fitting order) */
    int *schema_index; /* domain action -> vocabulary schema index (-1: absent) */
    int max_arity;     /* of the domain's actions */
    /* scratch, sized for the largest graph of this task */
    int max_nodes, max_edges;
    int nnodes;
    int *colour0;      /* initial colour value of each node */
    int *atom_of_node; /* node -> fluent atom id, nfluent+static id, or -1 */
    int *off;          /* CSR offsets [max_nodes+1] */
    int *nb, *lab;     /* neighbour node and label */
    int *deg;
    int *col, *col2;   /* colours of the current and next layer */
    int *objcol;       /* [(L+1) * nobj]: object colours per layer of the last state */
    int *key;          /* key buffer */
    int key_cap;
    float *acc;        /* [acc_n] counts of the state being encoded */
    int acc_n;
    int *touched;      /* colour ids with acc != 0 */
    int ntouched;
    int *order;        /* fitting: state atoms sorted by rank */
    /* incremental encoding (ns_wl_features; wl.c): the graph of every candidate node, CSR */
    int inc_n;              /* its nodes (0: not built yet) */
    int *inc_off, *inc_nb, *inc_lab;
    int *inc_col;           /* [(L+1) × inc_n] colours of the last state encoded (absent atoms marked) */
    int *inc_lay;           /* [(L+1) × max_nodes] scratch of a from-scratch encoding */
    ns_word *inc_state;     /* that state */
    bool inc_valid;
    int *inc_cnt;           /* [D] its colour counts */
    uint64_t *inc_nz;       /* bitmap of the non-zero counts */
    uint64_t *inc_nzw;      /* bitmap of inc_nz's non-zero words: a read-out skips the zero ones */
    uint32_t *inc_mark, inc_stamp;
    int *inc_chg, *inc_chg2; /* nodes whose colour changed at the previous / this layer */
    /* The state encodings' work so far, in steps whose count does not depend
       on the CPU (words of the state scanned or copied, nodes and edges of
       the graphs built, a step per two neighbours an update reads, a colour
       lookup at several; wl.c), of about a relaxed exploration's step's time
       (ns_heuristic_work): a planner's cost on any machine
       (ns_planner_result's work). */
    long work;
} ns_wl_encoder;

/* Binds vocabulary v to task t.  Fails (NS_ERR_INPUT) when the task uses a
 * predicate the vocabulary does not list, or opts.iterations exceeds the
 * vocabulary's. */
ns_status ns_wl_encoder_init(ns_wl_encoder *e, const ns_wl_vocab *v, const ns_task *t, const ns_wl_opts *opts,
                             ns_error *err);
void ns_wl_encoder_free(ns_wl_encoder *e);

/* Upper bound on the nonzero features of one state of this task. */
int ns_wl_max_nnz(const ns_wl_encoder *e);

/* WL features of state s (a task->nwords bitset) as a sparse row: writes
 * nnz (index, count) pairs with indices ascending and returns nnz.  idx and
 * val need room for ns_wl_max_nnz(e) entries. */
int ns_wl_features(ns_wl_encoder *e, const ns_word *s, int *idx, float *val);
/* The same as a dense row: writes D floats (zeros included). */
void ns_wl_features_dense(ns_wl_encoder *e, const ns_word *s, float *out);
/* The goal vector as the paper builds it: the features of a state holding
 * exactly the positive goal atoms (no statics, whatever opts.statics says). */
int ns_wl_goal_features(ns_wl_encoder *e, int *idx, float *val);
void ns_wl_goal_features_dense(ns_wl_encoder *e, float *out);

/* Action encodings.  Operator op in state s is encoded as
 *   [ one-hot of its schema (vocabulary schema order, S entries)
 *   ⊕ for each argument position k < A (A = the largest schema arity):
 *       the histogram over colour ids (D entries) of the argument object's
 *       node colours at layers 0..L in the graph of s ]
 * so its dimension is S + A·D and at most 1 + A·(L+1) entries are nonzero.
 * Objects are described only by their WL colours (their roles in s), so a
 * grounding with objects never seen in training still gets a meaningful
 * vector.  Unseen colours are dropped.  The state is the one most recently
 * passed to ns_wl_features / ns_wl_features_dense / ns_wl_refine. */
int ns_wl_action_dim(const ns_wl_encoder *e);
/* Runs WL on s and keeps the object colours (no output). */
void ns_wl_refine(ns_wl_encoder *e, const ns_word *s);
/* Sparse action row of operator op (indices ascending); returns nnz; idx and
 * val need room for 1 + A·(L+1) entries. */
int ns_wl_action_features(const ns_wl_encoder *e, int op, int *idx, float *val);
/* Colour of object obj (task object id) at layer t ≤ L in the last state. */
int ns_wl_object_colour(const ns_wl_encoder *e, int obj, int t);

/* Fitting a vocabulary as WLPlan collects one: graphs are stored as they
 * are added; ns_wl_fit_finish then assigns ids layer by layer — layer 0 over
 * all graphs (in the order added, nodes in graph order: objects, goals,
 * then the state's atoms sorted by their text), then layer 1 over all graphs,
 * and so on — from one counter. */
typedef struct ns_wl_fitter {
    ns_wl_vocab *vocab; /* filled by finish; must be fresh from ns_wl_vocab_init */
    int ngraphs;
    int64_t *gnode_off; /* graph g: nodes [gnode_off[g], gnode_off[g+1]) of the pools */
    int64_t *gedge_off; /* its edges [gedge_off[g], …) */
    size_t gcap;
    int *colour0; /* initial colour values */
    int *off;     /* per node: start of its edges, relative to the graph */
    int *nb, *lab;
    size_t ncap, ecap;
    int64_t nnodes, nedges;
} ns_wl_fitter;

void ns_wl_fit_init(ns_wl_fitter *f, ns_wl_vocab *v);
/* Adds the graph of state s (encoder e must be bound to the fitter's
 * vocabulary; its opts.statics decides whether statics are in). */
void ns_wl_fit_add_state(ns_wl_fitter *f, ns_wl_encoder *e, const ns_word *s);
/* Adds the goal graph (positive goal atoms only), as ns_wl_goal_features sees it. */
void ns_wl_fit_add_goal(ns_wl_fitter *f, ns_wl_encoder *e);
/* Assigns the colour ids into the vocabulary (NS_ERR_INPUT when no graph
 * was added).  Encoders bound before finishing must be re-initialised. */
ns_status ns_wl_fit_finish(ns_wl_fitter *f, ns_error *err);
void ns_wl_fit_free(ns_wl_fitter *f);

/* Canonical key of a node from its neighbours' (colour, label) pairs and its
 * own colour: what refinement looks up (exposed for tests). Writes into key
 * (room for n + 1) and returns the length. */
int ns_wl_make_key(int radix, bool multiset, const int *colours, const int *labels, int n, int own, int *key);

#endif
