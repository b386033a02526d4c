/* killat.c — an LD_PRELOAD shim for the kill tests: counts the write points
 * of a process (opening a file for writing, rename, renameat2, mkdtemp) and, when
 * NS_KILL_AT=N is set, kills the process with SIGKILL just before the Nth
 * one (NS_KILL_AFTER=1: just after it).  A run with N beyond the last point
 * finishes normally, so a loop N = 1, 2, … meets every write point. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long kill_at(void)
{
    const char *s = getenv("NS_KILL_AT");
    return s ? atol(s) : 0;
}

/* Called at each write point, before (after = 0) and after (after = 1) it. */
static void point(int after)
{
    static long n; /* write points met so far; a shim is one process's only */
    if (!after) n++;
    const char *a = getenv("NS_KILL_AFTER");
    int want_after = a && *a == '1';
    if (n == kill_at() && after == want_after) raise(SIGKILL);
}

FILE *fopen(const char *path, const char *mode)
{
    static FILE *(*real)(const char *, const char *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "fopen");
    int w = mode && (strchr(mode, 'w') || strchr(mode, 'a') || strchr(mode, '+'));
    if (w) point(0);
    FILE *f = real(path, mode);
    if (w) point(1);
    return f;
}

int rename(const char *from, const char *to)
{
    static int (*real)(const char *, const char *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "rename");
    point(0);
    int r = real(from, to);
    point(1);
    return r;
}

int renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned flags)
{
    static int (*real)(int, const char *, int, const char *, unsigned);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "renameat2");
    point(0);
    int r = real(fromfd, from, tofd, to, flags);
    point(1);
    return r;
}

char *mkdtemp(char *tmpl)
{
    static char *(*real)(char *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "mkdtemp");
    point(0);
    char *r = real(tmpl);
    point(1);
    return r;
}
