/* forkmap.c — independent jobs in child processes (see forkmap.h). */
#include "nextstate/util/forkmap.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define FORKMAP_MAX_JOBS 64

typedef struct running {
    pid_t pid;
    int fd; /* the pipe's read end */
    int job;
} running;

/* Writes all of b to fd (a pipe's write end); false on an error. */
static bool write_all(int fd, const ns_buf *b)
{
    size_t done = 0;
    while (done < b->len) {
        ssize_t w = write(fd, b->data + done, b->len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        done += (size_t)w;
    }
    return true;
}

/* Starts job i in a child; false when it could not (no pipe or no fork). */
static bool start(running *r, int i, ns_forkmap_fn fn, void *ctx)
{
    int fds[2];
    if (pipe(fds) != 0) return false;
    fflush(NULL); /* the child must not write the parent's buffered output again */
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    if (pid == 0) { /* the child: the job, its bytes, and out without the parent's exit handlers */
        close(fds[0]);
        ns_buf b;
        ns_buf_init(&b);
        fn(ctx, i, &b);
        bool ok = write_all(fds[1], &b);
        close(fds[1]);
        _exit(ok ? 0 : 1);
    }
    close(fds[1]);
    *r = (running){.pid = pid, .fd = fds[0], .job = i};
    return true;
}

/* Reads what r's child sent; true at the end of its output (r reaped, ok set). */
static bool drain(running *r, ns_buf *out, bool *ok)
{
    char chunk[65536];
    ssize_t got = read(r->fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) return false;
    if (got > 0) {
        ns_buf_put(out, chunk, (size_t)got);
        return false;
    }
    close(r->fd);
    int status = 0;
    while (waitpid(r->pid, &status, 0) < 0 && errno == EINTR) {
    }
    *ok = got == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    return true;
}

void ns_forkmap(int n, int jobs, ns_forkmap_fn fn, void *ctx, ns_buf *out, bool *ok)
{
    for (int i = 0; i < n; i++) {
        ns_buf_init(&out[i]);
        ok[i] = false;
    }
    if (jobs > FORKMAP_MAX_JOBS) jobs = FORKMAP_MAX_JOBS;
    running run[FORKMAP_MAX_JOBS];
    struct pollfd pf[FORKMAP_MAX_JOBS];
    nfds_t nrun = 0; /* children running (unsigned: poll's count) */
    int next = 0;
    while (next < n || nrun > 0) {
        while (next < n && nrun < (nfds_t)(jobs > 1 ? jobs : 1)) {
            if (jobs > 1 && start(&run[nrun], next, fn, ctx)) {
                nrun++;
            } else { /* in this process */
                fn(ctx, next, &out[next]);
                ok[next] = true;
            }
            next++;
        }
        if (nrun == 0) continue;
        for (nfds_t k = 0; k < nrun; k++) pf[k] = (struct pollfd){.fd = run[k].fd, .events = POLLIN};
        if (poll(pf, nrun, -1) < 0) {
            if (errno != EINTR && drain(&run[0], &out[run[0].job], &ok[run[0].job])) run[0] = run[--nrun];
            continue; /* (a failed poll reads the first child's pipe, blocking) */
        }
        for (nfds_t k = nrun; k-- > 0;) {
            if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            running *r = &run[k];
            if (drain(r, &out[r->job], &ok[r->job])) run[k] = run[--nrun];
        }
    }
}

int ns_forkmap_jobs(size_t bytes_per_job)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN), pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    long jobs = cpus > 0 ? cpus : 1;
    if (pages > 0 && page > 0 && bytes_per_job > 0) {
        double fit = (double)pages * (double)page / (double)bytes_per_job;
        if (fit < (double)jobs) jobs = fit >= 1 ? (long)fit : 1;
    }
    return (int)jobs;
}
