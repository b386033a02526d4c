/* dataset.h — transition datasets on disk: a directory of NumPy arrays plus a
 * JSON manifest, built from one domain and a list of its problems.
 *
 *   manifest.json            format, version, build options, per-problem names
 *                            (objects, atoms, statics, operators, goal), counts,
 *                            and the byte size + CRC-32 of every array file
 *   states.npy               u64 [N, W]  packed fluent-atom bitsets (problem-local atom ids)
 *   state_problem.npy        i32 [N]     problem of each state
 *   state_g.npy              i32 [N]     distance from the problem's initial state
 *   state_hstar.npy          i32 [N]     goal distance h* (-1: dead end, -2: not computed)
 *   transitions.npy          i32 [T, 4]  (problem, state, operator, next state); state ids global,
 *                                        operator ids problem-local
 *   transition_optimal.npy   u8  [T]     1 when the edge is on an optimal plan
 *   applicable_offsets.npy   i64 [N+1]   applicable operators of state s at
 *   applicable_ops.npy       i32 [A]       applicable_ops[offsets[s] … offsets[s+1])
 *   plan_offsets.npy         i64 [K+1]   sampled optimal plans as transition ids at
 *   plan_transitions.npy     i64 [L]       plan_transitions[offsets[k] … offsets[k+1])
 *   plan_problem.npy         i32 [K]
 *
 * Mode "optimal" keeps the optimal-plan DAG of every problem (the second
 * paper's data); mode "full" keeps every reachable state up to a cap.  With
 * `successors`, every applicable operator of every kept state also gives a
 * transition (flagged non-optimal unless it is a DAG edge); successors outside
 * the kept set are appended after it with g = -1 and h* = -2 (not computed) —
 * the data the action-disambiguation loss and Acc@k need.  States of one
 * problem are contiguous, the kept ones numbered by increasing g, the
 * initial state first.  Writes are atomic; loading checks sizes, checksums, shapes and id
 * ranges and names the offending file. */
#ifndef NEXTSTATE_DATASET_H
#define NEXTSTATE_DATASET_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/util/npy.h"
#include "nextstate/data/space.h"

#define NS_DATASET_FORMAT "nextstate-dataset"
#define NS_DATASET_VERSION 2 /* 2: manifest.json sealed (crc32); 1 still read */
#define NS_HSTAR_UNKNOWN (-2) /* h* of a state outside the explored set */

typedef struct ns_ds_problem {
    char *name, *file;
    int nobjects;
    char **objects, **object_types;
    int natoms;
    char **atoms; /* fluent atoms "(at c0 l0)" by atom id */
    int nstatics;
    char **statics;
    int nops;
    char **ops; /* "(board c0 l0)" by operator id */
    int ngoal;
    char **goal; /* goal literals, "(not (p a))" for negative ones */
    int64_t state_offset, nstates; /* global ids [offset, offset + nstates) */
    int32_t cstar;                 /* optimal plan length, -1 unsolvable */
    bool complete;                 /* exploration not cut by the cap */
    double optimal_plans;          /* optimal plans in the kept DAG (saturates at 2^53) */
    int64_t explored;              /* states generated while exploring */
} ns_ds_problem;

typedef struct ns_dataset {
    char *domain_name, *domain_file;
    ns_space_mode mode;
    bool successors;
    int64_t max_states;
    int plans_per_problem;
    uint64_t seed;
    int nproblems;
    ns_ds_problem *problems;
    /* Problems left out because their optimal search ran out of time or
     * memory (file and reason), recorded in the manifest. */
    int nskipped;
    char **skipped, **skipped_reason;
    int words; /* W: words per state row (the widest problem's) */
    ns_array states, state_problem, state_g, state_hstar;
    ns_array transitions, transition_optimal;
    ns_array applicable_offsets, applicable_ops;
    ns_array plan_offsets, plan_transitions, plan_problem;
} ns_dataset;

typedef struct ns_dataset_opts {
    ns_space_mode mode;
    size_t max_states; /* per problem; 0: the space default */
    int plans;         /* optimal plans sampled per problem (0: none) */
    uint64_t seed;
    double time_limit; /* per problem, for the optimal search */
    bool progress;     /* progress line on stderr when it is a terminal */
    bool successors;   /* add every applicable transition of kept states */
} ns_dataset_opts;

/* Builds from a domain file and problem files (in the given order). */
ns_status ns_dataset_build(ns_dataset *ds, const char *domain_path, const char *const *problem_paths, int n,
                           const ns_dataset_opts *o, ns_error *err);
/* Writes into dir (created if missing); array files first, manifest last. */
ns_status ns_dataset_save(const ns_dataset *ds, const char *dir, ns_error *err);
/* Reads and validates a dataset directory. */
ns_status ns_dataset_load(ns_dataset *ds, const char *dir, ns_error *err);
void ns_dataset_free(ns_dataset *ds);

static inline int64_t ns_dataset_nstates(const ns_dataset *ds) { return ds->states.shape[0]; }
static inline int64_t ns_dataset_ntransitions(const ns_dataset *ds) { return ds->transitions.shape[0]; }
static inline const uint64_t *ns_dataset_state(const ns_dataset *ds, int64_t s)
{
    return (const uint64_t *)ds->states.data + s * ds->words;
}
/* Row t of transitions: problem, state, operator, next state. */
static inline const int32_t *ns_dataset_transition(const ns_dataset *ds, int64_t t)
{
    return (const int32_t *)ds->transitions.data + 4 * t;
}

#endif
