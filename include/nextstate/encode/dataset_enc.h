/* dataset_enc.h — `nextstate encode` as one library call: WL or FSF features
 * of a dataset's states (one matrix) or of plan trajectories (one file per
 * problem, as the first paper's encodings/ folder), and the lifted WL action
 * encodings of every (state, applicable action) pair for the world model.
 *
 * Outputs follow the feature specs of `nextstate train`: OUT.npy is a dense
 * float32 matrix, any other OUT (or sparse) the CSR files
 * OUT_{indptr,indices,values,shape}.npy (csr.h) read back as spec OUT.
 *
 * Dataset states are re-grounded: each problem is read again from the
 * `file` (and the domain from `domain_file`) stored in the manifest — as
 * given, else relative to the dataset directory — and the dataset's atom and
 * operator ids are mapped onto the new task by their texts (an atom the new
 * task lacks is an error), so the encoders see real predicates and objects
 * rather than strings. */
#ifndef NEXTSTATE_ENCODE_DATASET_ENC_H
#define NEXTSTATE_ENCODE_DATASET_ENC_H

#include <stdbool.h>
#include "nextstate/encode/encoder.h"
#include "nextstate/encode/wl.h"
#include "nextstate/util/error.h"

typedef struct ns_encode_opts {
    ns_encoder_kind kind;
    /* input: a dataset directory, or (dataset NULL) the problems of
     * problems_dir that have a plan in plans_dir (trajectory.h) */
    const char *dataset;
    const char *domain, *problems_dir, *plans_dir;
    /* WL vocabulary: loaded from vocab, or fitted (fit) on the encoded
     * states, on fit_on's states when it is a dataset directory, or on the
     * states of its training transitions of this dataset when it is a split
     * directory; a fitted one is saved to vocab_out (default OUT.vocab.json) */
    const char *vocab, *fit_on, *vocab_out;
    bool fit, fit_goals, set;   /* set: set hashing (default multiset) */
    ns_wl_key_format key_format; /* of the saved vocabulary */
    int iterations;              /* -1: the vocabulary's (fit: 2) */
    bool statics;                /* static atoms are state atoms */
    /* FSF: config file, max_objects (0: the config's, else the largest
     * problem), slot rules by name (NULL: the config's, else detected) */
    const char *fsf_config, *fsf_domain;
    int max_objects;
    /* outputs: OUT (dataset: matrix spec; plans: a folder), goal vectors
     * [P, D], action encodings (WL, dataset only), the states' atoms as
     * JSON lines */
    const char *out, *goals, *actions, *states_out;
    bool sparse; /* CSR even for a .npy name */
    int repeat;  /* best of this many timed passes (0: one) */
    /* What was done, one line at a time ("fitted 127 colours …", no
     * newline); NULL: nothing is said. */
    void (*note)(void *ctx, const char *line);
    void *note_ctx;
} ns_encode_opts;

/* Defaults: WL, iterations -1, statics in, flat keys, everything else 0. */
void ns_encode_opts_init(ns_encode_opts *o);

/* Loads, fits, encodes and writes what o asks for.  A contradiction between
 * the options and what was loaded (iterations above the vocabulary's, an
 * unknown fsf_domain) is NS_ERR_USAGE without a file, its message naming the
 * option as `nextstate encode` spells it; every other error is the loader's
 * or writer's.  Options are not checked for consistency otherwise (the CLI
 * does that: WL needs vocab or fit, actions and goals are dataset-mode). */
ns_status ns_encode_run(const ns_encode_opts *o, ns_error *err);

#endif
