/* forkmap.h — independent jobs run in child processes, a few at a time.
 *
 * Each job runs in a forked child, so it has its own CPU clock (a time limit
 * measured with ns_cpu_now inside a job means the job's own CPU time, as in a
 * single process) and its own memory; its result comes back as bytes through
 * a pipe.  A job must not use threads the parent started (OpenBLAS's pool):
 * only the forking thread exists in the child. */
#ifndef NEXTSTATE_FORKMAP_H
#define NEXTSTATE_FORKMAP_H

#include <stdbool.h>
#include <stddef.h>
#include "nextstate/util/error.h"
#include "nextstate/util/util.h"

/* Job i: appends its result to out (in the child). */
typedef void (*ns_forkmap_fn)(void *ctx, int i, ns_buf *out);

/* For i in [0, n): out[i] (initialised here) receives the bytes fn(ctx, i, ·)
 * wrote, with up to `jobs` children at once; jobs <= 1 runs the jobs in this
 * process, in order (as does a job whose fork fails).  ok[i] is false when
 * job i's child died before it finished (out[i] then holds what arrived). */
void ns_forkmap(int n, int jobs, ns_forkmap_fn fn, void *ctx, ns_buf *out, bool *ok);

/* A default for `jobs`: the processors online, fewer when the physical
 * memory would not hold bytes_per_job for each (at least 1). */
int ns_forkmap_jobs(size_t bytes_per_job);

#endif
