/* forest.h — a tree ensemble (XGBoost gbtree, numeric splits) evaluated from
 * flat node arrays, without libxgboost.
 *
 * Built once from XGBoost's JSON model text (ns_forest_from_xgb_json), then
 * saved as a compact binary file that is used in place (no per-node
 * parsing), little endian:
 *   version 2: "NSFOREST" (8 bytes), u32 version (2), u32 CRC-32C of every
 *   byte after the 16-byte prefix, then u32 nfeat, nout, ntrees, nnodes, f32
 *   base_score, u32 flags (0), u32 reserved[2] (0), i32 tree_root[ntrees],
 *   i32 tree_out[ntrees], then the nodes in the compact form below, 8 bytes
 *   each (f32 value, u16 feat, u16 left).  Every split's children follow it
 *   in its tree, so a walk always moves forward and ends.
 *   version 1 (still read; written for a forest the compact form cannot
 *   hold): u32 CRC-32 (IEEE) in the prefix, then u32 nfeat, nout, ntrees,
 *   nnodes, f32 base_score, i32 tree_root[ntrees], i32 tree_out[ntrees], i32
 *   feat[nnodes] (−1 at a leaf), f32 value[nnodes] (split threshold, or leaf
 *   value), i32 left[nnodes], i32 right[nnodes], u8 default_left[nnodes].
 *
 * Prediction: out[k] = base_score, then for every tree in order, in float,
 * out[tree_out[t]] += leaf reached, going left when x[feat] < threshold and,
 * for a missing (NaN) input, the way default_left says — the order and
 * arithmetic of XGBoost 1.7's CPU predictor, so predictions are bit-identical
 * to libxgboost's (tests/unit/test_forest.c checks it). */
#ifndef NEXTSTATE_FOREST_H
#define NEXTSTATE_FOREST_H

#include <stddef.h>
#include <stdint.h>
#include "nextstate/util/error.h"
#include "nextstate/util/util.h"

/* One node as prediction reads it (16 bytes, one cache-line share). */
typedef struct ns_forest_node {
    int32_t feat;  /* −1 at a leaf */
    float value;   /* threshold, or the leaf value */
    int32_t left, right; /* the missing-value child is `missing` */
} ns_forest_node;

/* The compact form prediction uses when every tree allows it (XGBoost's
 * trees do: a split's right child follows its left one): 8 bytes a node, so
 * a forest of a few MB streams half the bytes.  feat 0xFFFF at a leaf;
 * left: bits 0–14 the left child's index within its tree (the right child
 * is the next node), bit 15 set when a missing (NaN) input goes left. */
typedef struct ns_forest_cnode {
    float value;
    uint16_t feat;
    uint16_t left;
} ns_forest_cnode;

typedef struct ns_forest {
    int nfeat, nout, ntrees, nnodes;
    float base_score;
    bool round_major;              /* tree t adds to output t % nout (XGBoost's order) */
    int32_t *tree_root, *tree_out; /* [ntrees] */
    /* the node arrays as read from JSON or a version-1 file (NULL after a
     * version-2 file, which holds the compact form only): */
    int32_t *feat;                 /* [nnodes] */
    float *value;                  /* [nnodes] */
    int32_t *left, *right;         /* [nnodes] */
    uint8_t *default_left;         /* [nnodes] */
    ns_forest_cnode *cnodes;       /* [nnodes]: the compact form, or NULL: */
    ns_forest_node *nodes;         /* [nnodes]: the general one (only without cnodes) */
    int32_t *missing;              /* [nnodes]: child taken for a NaN input (with nodes) */
    ns_filemap map;                /* when map.data is set, tree_root, tree_out and cnodes
                                      point into it (a version-2 file used in place) */
} ns_forest;

void ns_forest_init(ns_forest *f);
void ns_forest_free(ns_forest *f);

/* Reads the first `ntrees` trees (all when ntrees < 0) of XGBoost JSON model
 * text made by ns_xgb_save_json.  The model must take nfeat inputs and have
 * nout outputs (one tree per output per round, tree_info giving the output);
 * categorical splits, other boosters or inconsistent trees are NS_ERR_INPUT.
 * On failure *f is empty. */
ns_status ns_forest_from_xgb_json(ns_forest *f, const char *text, size_t len, int nfeat, int nout, int ntrees,
                                  ns_error *err);

/* Appends the binary form to out: version 2, or version 1 when a split's
 * children do not follow it as the compact form needs. */
void ns_forest_save(const ns_forest *f, ns_buf *out);
/* Loads data[0..len) made by ns_forest_save (either version; copied): a
 * wrong magic, version, checksum, size or an inconsistent tree (child out of
 * its tree, a cycle, feature or output out of range) is NS_ERR_INPUT naming
 * path. */
ns_status ns_forest_load(ns_forest *f, const void *data, size_t len, const char *path, ns_error *err);
/* The same without the checksum pass, for bytes whose integrity the caller
 * has checked (a model file's own checksum covers its forest); every other
 * check stays. */
ns_status ns_forest_load_checked(ns_forest *f, const void *data, size_t len, const char *path, ns_error *err);
/* ns_forest_load_checked of map->data[off .. off + len), taking the mapping
 * over (*map is emptied, also on failure): a version-2 forest is used in
 * place when the host is little endian and the bytes 4-aligned, else copied
 * and the mapping released. */
ns_status ns_forest_adopt(ns_forest *f, ns_filemap *map, size_t off, size_t len, const char *path, ns_error *err);
ns_status ns_forest_write(const ns_forest *f, const char *path, ns_error *err);
ns_status ns_forest_read(ns_forest *f, const char *path, ns_error *err);

/* Drops the compact form and predicts from the general one (the same
 * predictions; tests compare the two). */
void ns_forest_use_general(ns_forest *f);

/* out [n×nout] = predictions for X [n×nfeat] (row-major; NaN = missing). */
void ns_forest_predict(const ns_forest *f, const float *X, int n, float *out);

/* Predictions one input after another, as search makes them: the leaf each
 * tree reached for the last input is kept with the features its path
 * tested and the way it went at each, and for the next one only the trees
 * whose path tested a feature whose new value goes the other way there are
 * walked again (found through an index from features to the trees
 * splitting on them, built at the first call), since the others reach the
 * same leaf; the sums are then
 * formed in tree order as ns_forest_predict forms them, so the outputs are
 * the same to the bit.  A memo serves one forest. */
typedef struct ns_forest_memo {
    float *x;               /* [nfeat] the last input */
    float *leaf;            /* [ntrees] each tree's leaf value for it */
    uint32_t *stamp, now;   /* [ntrees] trees queued in this call */
    int *dirty;             /* [ntrees] the queue */
    uint16_t *path;         /* [ntrees × 8] the features each tree's path tested (0xFFFF past its end) */
    float *thr;             /* [ntrees × 8] their thresholds */
    uint8_t *went_left;     /* [ntrees] bit d: the walk left the node at depth d to the left */
    uint8_t *nan_left;      /* [ntrees] bit d: that node sends a missing input left */
    uint8_t *plen;          /* [ntrees] path length (0xFF: more than 8, or no record) */
    int *ftree_off, *ftree; /* features -> the trees splitting on them (CSR) */
    bool valid;             /* x and leaf hold a prediction */
} ns_forest_memo;

void ns_forest_memo_init(ns_forest_memo *m);
void ns_forest_memo_free(ns_forest_memo *m);
/* out [nout] = the prediction for x [nfeat] (ns_forest_predict's, bit for bit). */
void ns_forest_predict_memo(const ns_forest *f, ns_forest_memo *m, const float *x, float *out);

#endif
