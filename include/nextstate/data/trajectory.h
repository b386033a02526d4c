/* trajectory.h — expert trajectories: the problems of a folder with a plan
 * each (read from a plan folder, or found by A*-LM-cut), grounded, and the
 * states s_0..s_T the plan visits.  This is the training data of the first
 * paper's progress models and of `nextstate encode --plans`.
 *
 * Problems are the *.pddl files of the folder other than domain.pddl, in
 * byte order of their names (the order WLPlan's fitting used); a problem's
 * plan is PLANDIR/<stem>.plan. */
#ifndef NEXTSTATE_TRAJECTORY_H
#define NEXTSTATE_TRAJECTORY_H

#include <stdbool.h>
#include "nextstate/util/error.h"
#include "nextstate/core/pddl.h"
#include "nextstate/core/task.h"

typedef struct ns_traj {
    char *name; /* file stem */
    char *path; /* problem file */
    ns_problem p;
    ns_task t;
    int nstates;     /* plan length + 1 */
    ns_word *states; /* nstates × t.nwords: s_0 = init, …, s_T (a goal state) */
    int *ops;        /* the plan's operator ids [nstates − 1] */
    int *raw_ops;    /* [raw_n]: GBFS's plan as found, when ops is it shortened; else NULL */
    int raw_n;
    bool time_capped; /* solved here, and a search or the shortening stopped at the time limit
                         before its budget: the plan may differ on another machine */
} ns_traj;

typedef struct ns_trajset {
    ns_domain d;
    bool domain_loaded;
    ns_traj *v; /* [cap]; a trajectory's task points at its problem, so v moves only in ns_trajset_add */
    int n, cap;
    int skipped;     /* problems without a plan file (plan folder mode) */
    int unsolved;    /* problems no search solved (satisficing mode) */
    char **unsolved_paths; /* [unsolved]: their files */
    int satisficing; /* trajectories from GBFS, not optimal (satisficing mode) */
    int added;       /* trajectories appended by ns_trajset_add (not optimal) */
    int time_capped; /* problems (solved or not) whose searches or shortening the time limit
                        stopped before their budgets (ns_traj's time_capped) */
} ns_trajset;

/* A planner for ns_trajset_add: a plan for t as a malloc'ed array *ops of *n
 * operator ids; NS_OK, or why there is none (its status, *ops NULL). */
typedef ns_status (*ns_traj_planner)(void *ctx, const ns_task *t, int **ops, int *n);

typedef struct ns_traj_opts {
    const char *plan_dir; /* NULL: solve each problem optimally (A*-LM-cut); else
                             plan_dir/<name>.plan, and plan_dir/raw/<name>.plan as the
                             raw plan (raw_ops, checked valid) when there is one */
    double time_limit;    /* per search when solving; <= 0: none.  With max_work a
                             safety cap: the budgets, not the clock, should stop them */
    long max_work;        /* when solving: the heuristic work of each search (ns_search_opts'
                             max_work), the budget that makes the plans the same on every
                             machine; 0: none (the time limit decides) */
    /* When solving: a problem A*-LM-cut does not solve within the limits
     * gets the plan of GBFS-h^FF (preferred operators) in the same limits
     * instead (satisficing, as IPC learners do), shortened by ns_plan_shorten
     * (NS_TRAJ_SHORTEN_WORK; the time limit again as a safety cap), and one
     * neither solves is skipped (counted in `unsolved`) rather than an error. */
    bool satisficing;
    size_t memory_limit; /* bytes of search data per search; 0: none */
    int jobs;            /* when solving: problems solved at once, each in a child process with
                            its own limits (ns_forkmap); <= 1: one after another in this process */
} ns_traj_opts;

/* The states the shortening of a GBFS plan may hold (ns_plan_shorten's max_bytes). */
#define NS_TRAJ_SHORTEN_BYTES ((size_t)256 << 20)
/* The work its neighbourhoods may do together (ns_plan_shorten's max_work;
 * 13-18 million a CPU second on four childsnack and blocksworld training
 * problems of IPC 2023, so 3-5 s): a
 * budget, not a time, so that the training plans, and the model learned from
 * them, do not depend on the CPU's speed or load. */
#define NS_TRAJ_SHORTEN_WORK 60000000L
/* A default for ns_traj_opts' max_work: about 2-5 CPU seconds of A*-LM-cut on
 * one core of a 2020s x86 CPU (225-470 million steps a second on 54 IPC 2023
 * training problems A* does not solve in 5 s; sokoban 160-190 million, 5-6 s). */
#define NS_TRAJ_SOLVE_WORK 1000000000L

/* A default for o->jobs: the CPUs the physical memory allows, a problem
 * taking o->memory_limit plus NS_TRAJ_SHORTEN_BYTES (ns_forkmap_jobs). */
int ns_traj_jobs(const ns_traj_opts *o);

/* Loads the domain and every problem of problem_dir that has a plan (see
 * above).  A plan that is not applicable, or that does not reach the goal, is
 * NS_ERR_INPUT at its file and line; a problem the planner cannot solve in
 * time is an error naming it (unless o->satisficing); no problem at all is
 * NS_ERR_INPUT. */
ns_status ns_trajset_load(ns_trajset *s, const char *domain_path, const char *problem_dir, const ns_traj_opts *o,
                          ns_error *err);
void ns_trajset_free(ns_trajset *s);

/* Appends the trajectory of the problem file path (read with s's domain,
 * grounded) along the plan fn(ctx, ...) finds, and counts it in `added`.
 * When fn finds none, nothing is added and its status returned (err unset
 * unless fn set it); a plan that does not apply or reach the goal is
 * NS_ERR_INPUT. */
ns_status ns_trajset_add(ns_trajset *s, const char *path, ns_traj_planner fn, void *ctx, ns_error *err);

/* Whether some trajectory of s has a raw plan (GBFS's, before shortening). */
bool ns_trajset_has_raw(const ns_trajset *s);

/* *view: s with each trajectory that has a raw plan following it instead
 * (its states rebuilt, owned by the view), everything else shared with s
 * (no unsolved list); s must outlive it.  Freed by ns_trajset_view_free. */
void ns_trajset_raw_view(const ns_trajset *s, ns_trajset *view);
void ns_trajset_view_free(ns_trajset *view);

/* Writes every trajectory's plan as dir/<name>.plan (IPC format, atomic
 * writes; dir made when missing), and its raw plan, when it has one, as
 * dir/raw/<name>.plan (a stale one removed), so that a later load with
 * plan_dir = dir reads the same trajectories without solving. */
ns_status ns_trajset_save_plans(const ns_trajset *s, const char *dir, ns_error *err);

/* The problem files of folder dir: the names (not paths) of its *.pddl files
 * other than domain.pddl, in byte order, as a malloc'ed array of *n
 * malloc'ed strings; NULL with NS_ERR_IO in err when dir cannot be read. */
char **ns_problem_files(const char *dir, int *n, ns_error *err);

/* Problem paths from command-line arguments: each argument that is not a
 * folder as it is, each folder as its problem files (above), in order; a
 * malloc'ed array of *nout malloc'ed strings, or NULL with NS_ERR_IO in err
 * when a folder cannot be read. */
char **ns_problem_paths(char *const *args, int n, int *nout, ns_error *err);

/* The most objects (constants included) of any problem of s; at least 1. */
int ns_trajset_max_objects(const ns_trajset *s);

/* Total states over all trajectories. */
long ns_trajset_states(const ns_trajset *s);

/* Rebuilds the states of plan ops (n steps) from t's initial state into
 * *states (malloc'ed, (n + 1) × t->nwords); the first step that is not
 * applicable is returned as its index, -1 when all apply. */
int ns_traj_states(const ns_task *t, const int *ops, int n, ns_word **states);

#endif
