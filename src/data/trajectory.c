/* trajectory.c — problems with their plans, and the states the plans visit. */
#include "nextstate/data/trajectory.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "nextstate/core/plan.h"
#include "nextstate/core/search.h"
#include "nextstate/util/forkmap.h"
#include "nextstate/util/util.h"

int ns_traj_states(const ns_task *t, const int *ops, int n, ns_word **states)
{
    size_t W = (size_t)t->nwords;
    ns_word *s = ns_xcalloc(((size_t)n + 1) * W, sizeof(ns_word));
    memcpy(s, t->init, W * sizeof(ns_word));
    *states = s;
    for (int k = 0; k < n; k++) {
        if (ops[k] < 0 || ops[k] >= t->nops || !ns_task_applicable(t, ops[k], s + (size_t)k * W)) return k;
        ns_task_apply(t, ops[k], s + (size_t)k * W, s + (size_t)(k + 1) * W);
    }
    return -1;
}

/* A plan a search found for a training problem. */
typedef struct found {
    ns_status st;
    bool optimal;
    bool time_capped; /* a search or the shortening stopped at the time limit (ns_traj's) */
    int *ops, n;     /* the plan (GBFS's shortened) */
    int *raw, raw_n; /* GBFS's plan as found when shortening changed it; else NULL */
    char msg[512];   /* why there is none, when found in a child process */
} found;

/* A plan for t (problem file path): A*-LM-cut's, or in satisficing mode
 * past its limits GBFS-h^FF's shortened (see ns_traj_opts). */
static ns_status solve(const ns_task *t, const char *path, const ns_traj_opts *o, found *f, ns_error *err)
{
    memset(f, 0, sizeof *f);
    f->optimal = true;
    ns_search_opts so;
    ns_search_opts_default(&so);
    so.algo = NS_SEARCH_ASTAR;
    so.heuristic = NS_H_LMCUT;
    so.time_limit = o->time_limit;
    so.max_work = o->max_work;
    so.memory_limit = o->memory_limit;
    ns_search_result r;
    ns_status st = ns_search(t, &so, &r);
    f->time_capped = st == NS_OUT_OF_TIME;
    if (o->satisficing && (st == NS_OUT_OF_TIME || st == NS_OUT_OF_MEMORY || st == NS_INCOMPLETE)) {
        ns_search_result_free(&r);
        so.algo = NS_SEARCH_GBFS;
        so.heuristic = NS_H_FF;
        double t0 = ns_cpu_now();
        st = ns_search(t, &so, &r);
        f->time_capped |= st == NS_OUT_OF_TIME;
        if (st == NS_OK) {
            f->optimal = false;
            /* GBFS's plans wander: shortened (a budget of work; the same time limit as a safety cap), they make
               truer cost-to-go labels */
            double until = o->time_limit > 0 ? t0 + o->time_limit : 0;
            int *raw = ns_xmalloc(sizeof(int) * (size_t)(r.plan_len + 1)), n0 = r.plan_len;
            memcpy(raw, r.plan, sizeof(int) * (size_t)n0);
            r.plan_len = ns_plan_shorten(t, r.plan, r.plan_len, until, until, NS_TRAJ_SHORTEN_BYTES,
                                         NS_TRAJ_SHORTEN_WORK);
            f->time_capped |= until > 0 && ns_cpu_now() >= until;
            if (r.plan_len < n0) {
                f->raw = raw;
                f->raw_n = n0;
            } else {
                free(raw);
            }
        }
    }
    if (st != NS_OK) {
        ns_search_result_free(&r);
        return ns_error_set(err, st, path, 0, 0, "no %splan found (search status %d)", o->satisficing ? "" : "optimal ",
                            (int)st);
    }
    f->ops = ns_xcalloc((size_t)r.plan_len + 1, sizeof(int));
    memcpy(f->ops, r.plan, sizeof(int) * (size_t)r.plan_len);
    f->n = r.plan_len;
    ns_search_result_free(&r);
    return NS_OK;
}

/* The plan folder's layout: dir/<stem>.plan, and GBFS's plan as found in
 * dir/raw/<stem>.plan (ns_trajset_save_plans); b cleared first. */
static void plan_path(ns_buf *b, const char *dir, bool raw, int len, const char *stem)
{
    b->len = 0;
    ns_buf_printf(b, "%s/%s%.*s.plan", dir, raw ? "raw/" : "", len, stem);
}

/* The plan file's steps as operator ids of t (*ops malloc'ed, *n steps). */
static ns_status read_ops(const ns_task *t, const char *file, int **ops, int *n, ns_error *err)
{
    ns_plan plan;
    ns_status st = ns_plan_read(&plan, t, file, err);
    if (st != NS_OK) return st;
    *ops = ns_xcalloc((size_t)plan.n + 1, sizeof(int));
    for (int k = 0; k < plan.n; k++) {
        const ns_plan_step *ps = &plan.steps[k];
        (*ops)[k] = ns_task_find_op(t, ps->schema, ps->args, ps->nargs);
        if ((*ops)[k] < 0) {
            /* a step whose operator was pruned by grounding cannot apply */
            st = ns_error_set(err, NS_ERR_INPUT, file, ps->line, 0, "plan step %d is not applicable", k + 1);
            free(*ops);
            *ops = NULL;
            break;
        }
    }
    *n = st == NS_OK ? plan.n : 0;
    ns_plan_free(&plan);
    return st;
}

/* The plan of traj it: read from plan_file (with its raw plan when saved
 * beside it), or found by search (optimally, or — *optimal set false — by
 * GBFS in satisficing mode). */
static ns_status traj_plan(ns_traj *it, const char *plan_file, const ns_traj_opts *o, int *n, bool *optimal,
                           ns_error *err)
{
    if (plan_file) {
        ns_status st = read_ops(&it->t, plan_file, &it->ops, n, err);
        /* GBFS's plan as found beside it (ns_trajset_save_plans), checked here:
           the raw view trusts it */
        ns_buf raw;
        ns_buf_init(&raw);
        plan_path(&raw, o->plan_dir, true, (int)strlen(it->name), it->name);
        struct stat sb;
        if (st == NS_OK && stat(raw.data, &sb) == 0 &&
            (st = read_ops(&it->t, raw.data, &it->raw_ops, &it->raw_n, err)) == NS_OK) {
            if (!ns_plan_ops_valid(&it->t, it->raw_ops, it->raw_n)) {
                st = ns_error_set(err, NS_ERR_INPUT, raw.data, 0, 0, "the plan is not valid");
                free(it->raw_ops);
                it->raw_ops = NULL;
            }
            *optimal = false; /* a GBFS plan, shortened: as when solved here */
        }
        ns_buf_free(&raw);
        return st;
    }
    found f;
    ns_status st = solve(&it->t, it->path, o, &f, err);
    it->time_capped = f.time_capped; /* (solved or not) */
    if (st == NS_OK) {
        it->ops = f.ops;
        *n = f.n;
        it->raw_ops = f.raw;
        it->raw_n = f.raw_n;
        *optimal = f.optimal;
    }
    return st;
}

/* A trajectory's name: the problem file's name without its folder and ".pddl". */
static char *traj_name(const char *path)
{
    const char *b = strrchr(path, '/');
    char *name = ns_xstrdup(b ? b + 1 : path);
    size_t l = strlen(name);
    if (l > 5 && !strcmp(name + l - 5, ".pddl")) name[l - 5] = '\0';
    return name;
}

/* Frees what trajectory it owns. */
static void traj_release(ns_traj *it)
{
    ns_task_free(&it->t);
    ns_problem_free(&it->p);
    free(it->states);
    free(it->ops);
    free(it->raw_ops);
    free(it->name);
    free(it->path);
}

/* Reads and grounds it->path, plans it (with fn when given, else as
 * traj_plan) and rebuilds the plan's states, checked. */
static ns_status load_one(const ns_domain *d, ns_traj *it, const char *plan_file, const ns_traj_opts *o,
                          bool *optimal, ns_traj_planner fn, void *ctx, ns_error *err)
{
    ns_status st = ns_problem_read(&it->p, d, it->path, err);
    if (st != NS_OK) return st;
    st = ns_task_ground(&it->t, d, &it->p, err);
    if (st != NS_OK) {
        ns_problem_free(&it->p);
        return st;
    }
    int n = 0;
    st = fn ? fn(ctx, &it->t, &it->ops, &n) : traj_plan(it, plan_file, o, &n, optimal, err);
    if (st == NS_OK) {
        int bad = ns_traj_states(&it->t, it->ops, n, &it->states);
        it->nstates = n + 1;
        const char *where = plan_file ? plan_file : it->path;
        if (bad >= 0) {
            ns_error_set(err, NS_ERR_INPUT, where, 0, 0, "plan step %d is not applicable", bad + 1);
            st = NS_ERR_INPUT;
        } else if (!ns_task_is_goal(&it->t, it->states + (size_t)n * (size_t)it->t.nwords)) {
            ns_error_set(err, NS_ERR_INPUT, where, 0, 0, "the plan does not reach the goal");
            st = NS_ERR_INPUT;
        }
    }
    if (st != NS_OK) {
        ns_task_free(&it->t);
        ns_problem_free(&it->p);
        free(it->ops);
        free(it->states);
        free(it->raw_ops);
        it->ops = it->raw_ops = NULL;
        it->states = NULL;
    }
    return st;
}

char **ns_problem_files(const char *dir, int *n, ns_error *err)
{
    *n = 0;
    DIR *dp = opendir(dir);
    if (!dp) {
        ns_error_set(err, NS_ERR_IO, dir, 0, 0, "cannot open the problem folder");
        return NULL;
    }
    char **names = ns_xcalloc(1, sizeof(char *));
    size_t cap = 1;
    struct dirent *de;
    while ((de = readdir(dp))) {
        size_t l = strlen(de->d_name);
        if (l < 6 || strcmp(de->d_name + l - 5, ".pddl") || !strcmp(de->d_name, "domain.pddl")) continue;
        NS_GROW(names, cap, (size_t)*n + 1);
        names[(*n)++] = ns_xstrdup(de->d_name);
    }
    closedir(dp);
    if (*n) qsort(names, (size_t)*n, sizeof(char *), ns_cmp_str);
    return names;
}

char **ns_problem_paths(char *const *args, int n, int *nout, ns_error *err)
{
    char **v = ns_xcalloc(1, sizeof(char *));
    size_t cap = 1;
    int k = 0;
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (stat(args[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            NS_GROW(v, cap, (size_t)k + 1);
            v[k++] = ns_xstrdup(args[i]);
            continue;
        }
        int m = 0;
        char **names = ns_problem_files(args[i], &m, err);
        if (!names) {
            for (int j = 0; j < k; j++) free(v[j]);
            free(v);
            *nout = 0;
            return NULL;
        }
        for (int j = 0; j < m; j++) {
            ns_buf b;
            ns_buf_init(&b);
            ns_buf_printf(&b, "%s/%s", args[i], names[j]);
            NS_GROW(v, cap, (size_t)k + 1);
            v[k++] = b.data;
            free(names[j]);
        }
        free(names);
    }
    *nout = k;
    return v;
}

/* ---- the problems of a folder solved in child processes, o->jobs at a time */

typedef struct presolve {
    const ns_trajset *s;
    const char *dir;
    char **names;
    const ns_traj_opts *o;
} presolve;

static void put_ints(ns_buf *b, const int *v, int n) { ns_buf_put(b, v, sizeof *v * (size_t)n); }

/* ns_forkmap's job i: names[i] loaded as a trajectory (load_one); out:
 * status, optimal, n, raw_n, time_capped, the plan, the raw plan, then the error message. */
static void presolve_one(void *ctx, int i, ns_buf *out)
{
    const presolve *c = ctx;
    ns_error err = {0};
    ns_buf path;
    ns_buf_init(&path);
    ns_buf_printf(&path, "%s/%s", c->dir, c->names[i]);
    ns_traj it = {.path = path.data};
    bool optimal = true;
    ns_status st = load_one(&c->s->d, &it, NULL, c->o, &optimal, NULL, NULL, &err);
    int n = st == NS_OK ? it.nstates - 1 : 0, head[5] = {(int)st, optimal, n, it.raw_n, it.time_capped};
    put_ints(out, head, 5);
    put_ints(out, it.ops, n);
    put_ints(out, it.raw_ops, it.raw_n);
    char msg[sizeof ((found *)0)->msg];
    ns_error_format(&err, msg, sizeof msg);
    ns_buf_put(out, msg, strlen(msg) + 1);
    it.path = NULL; /* path's */
    if (st == NS_OK) traj_release(&it);
    ns_buf_free(&path);
}

/* What presolve_one sent, into f; a child that died or sent too little is an internal error. */
static void presolve_read(const ns_buf *b, bool ok, const char *name, found *f)
{
    memset(f, 0, sizeof *f);
    int head[5];
    size_t at = sizeof head;
    if (ok && b->len >= at) {
        memcpy(head, b->data, sizeof head);
        if (head[2] >= 0 && head[3] >= 0 && b->len > at + sizeof(int) * ((size_t)head[2] + (size_t)head[3])) {
            f->st = (ns_status)head[0];
            f->optimal = head[1];
            f->n = head[2];
            f->raw_n = head[3];
            f->time_capped = head[4];
            f->ops = ns_xmalloc(sizeof(int) * (size_t)(f->n + 1));
            memcpy(f->ops, b->data + at, sizeof(int) * (size_t)f->n);
            at += sizeof(int) * (size_t)f->n;
            if (f->raw_n) {
                f->raw = ns_xmalloc(sizeof(int) * (size_t)f->raw_n);
                memcpy(f->raw, b->data + at, sizeof(int) * (size_t)f->raw_n);
                at += sizeof(int) * (size_t)f->raw_n;
            }
            snprintf(f->msg, sizeof f->msg, "%.*s", (int)(b->len - at), b->data + at);
            return;
        }
    }
    f->st = NS_ERR_INTERNAL;
    snprintf(f->msg, sizeof f->msg, "the process solving %s ended without its result", name);
}

/* ns_traj_planner over a presolved plan (handed over). */
static ns_status take_found(void *ctx, const ns_task *t, int **ops, int *n)
{
    (void)t;
    found *f = ctx;
    *ops = f->ops;
    *n = f->n;
    f->ops = NULL;
    return NS_OK;
}

/* names[0..n) of dir solved o->jobs at a time: an array of n (free with presolved_free). */
static found *presolved(const ns_trajset *s, const char *dir, char **names, int n, const ns_traj_opts *o)
{
    presolve c = {.s = s, .dir = dir, .names = names, .o = o};
    ns_buf *out = ns_xcalloc((size_t)n + 1, sizeof *out);
    bool *ok = ns_xcalloc((size_t)n + 1, sizeof *ok);
    found *f = ns_xcalloc((size_t)n + 1, sizeof *f);
    ns_forkmap(n, o->jobs, presolve_one, &c, out, ok);
    for (int i = 0; i < n; i++) {
        presolve_read(&out[i], ok[i], names[i], &f[i]);
        ns_buf_free(&out[i]);
    }
    free(out);
    free(ok);
    return f;
}

static void presolved_free(found *f, int n)
{
    for (int i = 0; f && i < n; i++) {
        free(f[i].ops);
        free(f[i].raw);
    }
    free(f);
}

ns_status ns_trajset_load(ns_trajset *s, const char *domain_path, const char *problem_dir, const ns_traj_opts *o,
                          ns_error *err)
{
    memset(s, 0, sizeof *s);
    ns_status st = ns_domain_read(&s->d, domain_path, err);
    if (st != NS_OK) return st;
    s->domain_loaded = true;
    int n = 0;
    char **names = ns_problem_files(problem_dir, &n, err);
    if (!names) return NS_ERR_IO;
    s->v = ns_xcalloc((size_t)n + 1, sizeof(ns_traj));
    s->cap = n + 1;
    found *pre = o->jobs > 1 && !o->plan_dir ? presolved(s, problem_dir, names, n, o) : NULL;
    for (int i = 0; i < n && st == NS_OK; i++) {
        size_t l = strlen(names[i]);
        ns_buf pp, pl;
        ns_buf_init(&pp);
        ns_buf_init(&pl);
        ns_buf_printf(&pp, "%s/%s", problem_dir, names[i]);
        if (o->plan_dir) plan_path(&pl, o->plan_dir, false, (int)(l - 5), names[i]);
        struct stat sb;
        if (o->plan_dir && stat(pl.data, &sb) != 0) {
            s->skipped++;
        } else {
            ns_traj *it = &s->v[s->n];
            it->name = traj_name(names[i]);
            it->path = pp.data;
            pp.data = NULL;
            bool optimal = true;
            found *fi = pre ? &pre[i] : NULL;
            if (fi) it->time_capped = fi->time_capped;
            if (fi && fi->st != NS_OK) {
                st = ns_error_set(err, fi->st, NULL, 0, 0, "%s", fi->msg);
            } else {
                st = load_one(&s->d, it, o->plan_dir ? pl.data : NULL, o, &optimal, fi ? take_found : NULL, fi, err);
                if (fi && st == NS_OK) { /* the raw plan handed over too */
                    optimal = fi->optimal;
                    it->raw_ops = fi->raw;
                    it->raw_n = fi->raw_n;
                    fi->raw = NULL;
                }
            }
            if (st == NS_OK) {
                s->n++;
                s->satisficing += !optimal;
                s->time_capped += it->time_capped;
            } else {
                if (o->satisficing && !o->plan_dir &&
                    (st == NS_OUT_OF_TIME || st == NS_OUT_OF_MEMORY || st == NS_UNSOLVABLE || st == NS_INCOMPLETE)) {
                    s->time_capped += it->time_capped;
                    s->unsolved_paths = ns_xrealloc(s->unsolved_paths, sizeof(char *) * (size_t)(s->unsolved + 1));
                    s->unsolved_paths[s->unsolved++] = it->path;
                    it->path = NULL;
                    st = NS_OK;
                }
                free(it->name);
                free(it->path);
                memset(it, 0, sizeof *it);
            }
        }
        ns_buf_free(&pp);
        ns_buf_free(&pl);
    }
    presolved_free(pre, n);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    if (st == NS_OK && s->n == 0) {
        ns_error_set(err, NS_ERR_INPUT, problem_dir, 0, 0, "no problem with a plan");
        st = NS_ERR_INPUT;
    }
    return st;
}

void ns_trajset_free(ns_trajset *s)
{
    for (int i = 0; i < s->n; i++) {
        traj_release(&s->v[i]);
    }
    free(s->v);
    for (int i = 0; i < s->unsolved; i++) free(s->unsolved_paths[i]);
    free(s->unsolved_paths);
    if (s->domain_loaded) ns_domain_free(&s->d);
    memset(s, 0, sizeof *s);
}

ns_status ns_trajset_add(ns_trajset *s, const char *path, ns_traj_planner fn, void *ctx, ns_error *err)
{
    if (s->n == s->cap) { /* moved: each task points at its problem, re-pointed */
        int cap = 2 * s->cap + 2;
        s->v = ns_xrealloc(s->v, sizeof(ns_traj) * (size_t)cap);
        memset(s->v + s->cap, 0, sizeof(ns_traj) * (size_t)(cap - s->cap));
        s->cap = cap;
        for (int i = 0; i < s->n; i++) s->v[i].t.problem = &s->v[i].p;
    }
    ns_traj *it = &s->v[s->n];
    it->name = traj_name(path);
    it->path = ns_xstrdup(path);
    bool optimal = false;
    ns_status st = load_one(&s->d, it, NULL, NULL, &optimal, fn, ctx, err);
    if (st == NS_OK) {
        s->n++;
        s->added++;
    } else {
        free(it->name);
        free(it->path);
        memset(it, 0, sizeof *it);
    }
    return st;
}

int ns_trajset_max_objects(const ns_trajset *s)
{
    int m = 1;
    for (int i = 0; i < s->n; i++)
        if (s->v[i].p.nobjects > m) m = s->v[i].p.nobjects;
    return m;
}

long ns_trajset_states(const ns_trajset *s)
{
    long n = 0;
    for (int i = 0; i < s->n; i++) n += s->v[i].nstates;
    return n;
}

bool ns_trajset_has_raw(const ns_trajset *s)
{
    for (int i = 0; i < s->n; i++)
        if (s->v[i].raw_ops) return true;
    return false;
}

void ns_trajset_raw_view(const ns_trajset *s, ns_trajset *view)
{
    *view = *s;
    view->v = ns_xcalloc((size_t)s->n + 1, sizeof(ns_traj));
    view->cap = s->n + 1;
    view->unsolved = 0;
    view->unsolved_paths = NULL;
    for (int i = 0; i < s->n; i++) {
        ns_traj *it = &view->v[i];
        *it = s->v[i];
        if (!it->raw_ops) continue;
        it->ops = it->raw_ops;
        it->nstates = it->raw_n + 1;
        ns_traj_states(&it->t, it->ops, it->raw_n, &it->states); /* valid: GBFS's plan */
    }
}

void ns_trajset_view_free(ns_trajset *view)
{
    for (int i = 0; i < view->n; i++)
        if (view->v[i].raw_ops) free(view->v[i].states); /* the states the view rebuilt */
    free(view->v);
    memset(view, 0, sizeof *view);
}

ns_status ns_trajset_save_plans(const ns_trajset *s, const char *dir, ns_error *err)
{
    ns_status st = ns_mkdir_p(dir, err);
    ns_buf path, plan, rawdir;
    ns_buf_init(&path);
    ns_buf_init(&plan);
    ns_buf_init(&rawdir);
    ns_buf_printf(&rawdir, "%s/raw", dir);
    for (int i = 0; st == NS_OK && i < s->n; i++) {
        const ns_traj *t = &s->v[i];
        int len = (int)strlen(t->name);
        plan.len = 0;
        plan_path(&path, dir, false, len, t->name);
        ns_plan_write_ops(&t->t, t->ops, t->nstates - 1, &plan);
        st = ns_write_file_atomic(path.data, plan.data, plan.len, err);
        /* and GBFS's plan as found in DIR/raw, so that learning from DIR sees
           what learning from scratch saw (a stale one removed) */
        plan.len = 0;
        plan_path(&path, dir, true, len, t->name);
        if (st == NS_OK && t->raw_ops && (st = ns_mkdir_p(rawdir.data, err)) == NS_OK) {
            ns_plan_write_ops(&t->t, t->raw_ops, t->raw_n, &plan);
            st = ns_write_file_atomic(path.data, plan.data, plan.len, err);
        } else if (st == NS_OK && !t->raw_ops && unlink(path.data) != 0 && errno != ENOENT) {
            st = ns_error_set(err, NS_ERR_IO, path.data, 0, 0, "cannot remove a stale raw plan: %s", strerror(errno));
        }
    }
    ns_buf_free(&path);
    ns_buf_free(&plan);
    ns_buf_free(&rawdir);
    return st;
}

int ns_traj_jobs(const ns_traj_opts *o) { return ns_forkmap_jobs(o->memory_limit + NS_TRAJ_SHORTEN_BYTES); }
