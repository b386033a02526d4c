/* dataset.c — building, saving and loading transition datasets. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "nextstate/data/dataset.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/util/json.h"
#include "nextstate/core/succgen.h"

/* ---- growable columns ------------------------------------------------- */

typedef struct col {
    void *data;
    size_t n, cap, size; /* elements, capacity, element size */
} col;

static void col_push(col *c, const void *v, size_t count)
{
    if (c->n + count > c->cap) {
        size_t cap = c->cap ? c->cap : 1024;
        while (cap < c->n + count) cap *= 2;
        c->data = ns_xrealloc(c->data, cap * c->size);
        c->cap = cap;
    }
    memcpy((char *)c->data + c->n * c->size, v, count * c->size);
    c->n += count;
}

/* Moves a column into an array of the given dtype and shape (rows × width). */
static void col_to_array(col *c, ns_array *a, ns_dtype t, int64_t width)
{
    int64_t shape[2] = {(int64_t)(c->n / (size_t)width), width};
    ns_array_init(a, t, width > 1 ? 2 : 1, shape);
    if (c->n) memcpy(a->data, c->data, c->n * c->size);
    free(c->data);
    memset(c, 0, sizeof *c);
}

static char **strs_from_task(const ns_task *t, int n, void (*fn)(const ns_task *, int, ns_buf *))
{
    char **out = ns_xmalloc(sizeof(char *) * ((size_t)n + 1));
    ns_buf b;
    ns_buf_init(&b);
    for (int i = 0; i < n; i++) {
        b.len = 0;
        fn(t, i, &b);
        out[i] = ns_xstrdup(b.data);
    }
    ns_buf_free(&b);
    return out;
}

/* The absolute form of a path read from, so that a manifest's file names
 * work from any working directory (`encode` re-grounds its problems); the
 * path as given when it does not resolve. */
static char *abs_path(const char *path)
{
    char *r = realpath(path, NULL);
    if (!r) return ns_xstrdup(path);
    char *c = ns_xstrdup(r);
    free(r);
    return c;
}

static void fill_problem_names(ns_ds_problem *pr, const ns_task *t, const char *file)
{
    const ns_problem *p = t->problem;
    const ns_domain *d = t->domain;
    pr->name = ns_xstrdup(p->name);
    pr->file = abs_path(file);
    pr->nobjects = p->nobjects;
    pr->objects = ns_xmalloc(sizeof(char *) * ((size_t)p->nobjects + 1));
    pr->object_types = ns_xmalloc(sizeof(char *) * ((size_t)p->nobjects + 1));
    for (int i = 0; i < p->nobjects; i++) {
        pr->objects[i] = ns_xstrdup(p->objects[i]);
        pr->object_types[i] = ns_xstrdup(d->types[p->object_types[i]].name);
    }
    pr->natoms = t->natoms;
    pr->atoms = strs_from_task(t, t->natoms, ns_task_atom_str);
    pr->nstatics = t->nstatics;
    pr->statics = strs_from_task(t, t->nstatics, ns_task_static_str);
    pr->nops = t->nops;
    pr->ops = strs_from_task(t, t->nops, ns_task_op_str);
    pr->ngoal = p->ngoal;
    pr->goal = ns_xmalloc(sizeof(char *) * ((size_t)p->ngoal + 1));
    ns_buf b;
    ns_buf_init(&b);
    for (int i = 0; i < p->ngoal; i++) {
        const ns_lit *l = &p->goal[i];
        b.len = 0;
        ns_buf_puts(&b, l->neg ? "(not (" : "(");
        ns_buf_puts(&b, l->pred == NS_PRED_EQUAL ? "=" : d->preds[l->pred].name);
        for (int j = 0; j < l->nargs; j++) {
            ns_buf_putc(&b, ' ');
            ns_buf_puts(&b, p->objects[l->args[j]]);
        }
        ns_buf_puts(&b, l->neg ? "))" : ")");
        pr->goal[i] = ns_xstrdup(b.data);
    }
    ns_buf_free(&b);
}

static void free_strs(char **s, int n)
{
    for (int i = 0; s && i < n; i++) free(s[i]);
    free(s);
}

static void problem_free(ns_ds_problem *p)
{
    free(p->name);
    free(p->file);
    free_strs(p->objects, p->nobjects);
    free_strs(p->object_types, p->nobjects);
    free_strs(p->atoms, p->natoms);
    free_strs(p->statics, p->nstatics);
    free_strs(p->ops, p->nops);
    free_strs(p->goal, p->ngoal);
    memset(p, 0, sizeof *p);
}

/* ---- build ------------------------------------------------------------ */

typedef struct builder {
    col states, sprob, sg, sh, trans, topt, app_off, app_ops, plan_off, plan_tr, plan_prob;
    int words;
} builder;

static void builder_init(builder *b)
{
    memset(b, 0, sizeof *b);
    b->states.size = sizeof(uint64_t);
    b->sprob.size = b->sg.size = b->sh.size = b->trans.size = b->app_ops.size = b->plan_prob.size = sizeof(int32_t);
    b->topt.size = 1;
    b->app_off.size = b->plan_off.size = b->plan_tr.size = sizeof(int64_t);
    int64_t zero = 0;
    col_push(&b->app_off, &zero, 1);
    col_push(&b->plan_off, &zero, 1);
}

static void builder_free(builder *b)
{
    col *cs[] = {&b->states, &b->sprob, &b->sg, &b->sh, &b->trans, &b->topt,
                 &b->app_off, &b->app_ops, &b->plan_off, &b->plan_tr, &b->plan_prob};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) free(cs[i]->data);
}

/* Appends problem pi's space; state rows are `words` wide for now and
 * re-packed to the final width at the end. */
/* Appends problem pi's states and transitions; returns its number of
 * states.  With o->successors, every applicable operator of every kept state
 * gives a transition; successors outside the kept set are appended after it
 * with g = -1 and h* = NS_HSTAR_UNKNOWN. */
static int64_t add_space(builder *b, int pi, const ns_space *sp, const ns_dataset_opts *o, int64_t offset)
{
    const ns_task *t = sp->task;
    uint32_t n = sp->states.n;
    ns_succgen sg;
    ns_succgen_init(&sg, t);
    int *ops = ns_xmalloc(sizeof(int) * ((size_t)t->nops + 1));
    ns_word *next = ns_xmalloc(sizeof(ns_word) * (size_t)t->nwords);
    int64_t *edge_tr = ns_xmalloc(sizeof(int64_t) * ((size_t)sp->nedges + 1)); /* kept edge -> transition id */
    ns_registry extra;
    ns_registry_init(&extra, t->nwords);
    for (uint32_t s = 0; s < n; s++) {
        const ns_word *w = ns_registry_get(&sp->states, s);
        col_push(&b->states, w, (size_t)t->nwords);
        col_push(&b->sprob, &pi, 1);
        col_push(&b->sg, &sp->g[s], 1);
        col_push(&b->sh, &sp->hstar[s], 1);
        int na = ns_succgen_applicable(&sg, w, ops);
        for (int i = 0; i < na; i++) col_push(&b->app_ops, &(int32_t){ops[i]}, 1);
        int64_t end = (int64_t)b->app_ops.n;
        col_push(&b->app_off, &end, 1);
        /* kept edges and applicable operators are both in ascending op order */
        int64_t e = sp->edge_start[s], e_end = sp->edge_start[s + 1];
        for (int i = 0; i < (o->successors ? na : 0) || e < e_end; i++) {
            int32_t row[4] = {pi, (int32_t)(offset + s), 0, 0};
            uint8_t opt = 0;
            if (e < e_end && (!o->successors || sp->edge_op[e] == ops[i])) {
                row[2] = sp->edge_op[e];
                row[3] = (int32_t)(offset + sp->edge_dst[e]);
                opt = ns_space_edge_optimal(sp, s, e);
                edge_tr[e++] = (int64_t)(b->trans.n / 4);
            } else {
                ns_task_apply(t, ops[i], w, next);
                uint32_t id = ns_registry_find(&sp->states, next);
                bool is_new;
                if (id == NS_NO_STATE) id = n + ns_registry_insert(&extra, next, &is_new);
                row[2] = ops[i];
                row[3] = (int32_t)(offset + id);
            }
            col_push(&b->trans, row, 4);
            col_push(&b->topt, &opt, 1);
        }
    }
    for (uint32_t x = 0; x < extra.n; x++) { /* off-plan successors */
        const ns_word *w = ns_registry_get(&extra, x);
        int32_t g = -1, h = NS_HSTAR_UNKNOWN;
        col_push(&b->states, w, (size_t)t->nwords);
        col_push(&b->sprob, &pi, 1);
        col_push(&b->sg, &g, 1);
        col_push(&b->sh, &h, 1);
        int na = ns_succgen_applicable(&sg, w, ops);
        for (int i = 0; i < na; i++) col_push(&b->app_ops, &(int32_t){ops[i]}, 1);
        int64_t end = (int64_t)b->app_ops.n;
        col_push(&b->app_off, &end, 1);
    }
    if (o->plans > 0 && sp->cstar > 0) {
        int64_t *plans = ns_xmalloc(sizeof(int64_t) * (size_t)o->plans * (size_t)sp->cstar);
        int k = ns_space_sample_plans(sp, o->plans, o->seed ^ ((uint64_t)pi * 0x9e3779b97f4a7c15ULL), plans);
        for (int i = 0; i < k; i++) {
            for (int j = 0; j < sp->cstar; j++) col_push(&b->plan_tr, &edge_tr[plans[(size_t)i * (size_t)sp->cstar + (size_t)j]], 1);
            int64_t end = (int64_t)b->plan_tr.n;
            col_push(&b->plan_off, &end, 1);
            col_push(&b->plan_prob, &pi, 1);
        }
        free(plans);
    }
    int64_t total = (int64_t)n + extra.n;
    ns_registry_free(&extra);
    free(edge_tr);
    free(next);
    free(ops);
    ns_succgen_free(&sg);
    return total;
}

ns_status ns_dataset_build(ns_dataset *ds, const char *domain_path, const char *const *problem_paths, int n,
                           const ns_dataset_opts *o, ns_error *err)
{
    memset(ds, 0, sizeof *ds);
    ns_domain d;
    ns_status st = ns_domain_read(&d, domain_path, err);
    if (st != NS_OK) return st;
    ds->domain_name = ns_xstrdup(d.name);
    ds->domain_file = abs_path(domain_path);
    ds->mode = o->mode;
    ds->successors = o->successors;
    ds->max_states = (int64_t)o->max_states;
    ds->plans_per_problem = o->plans;
    ds->seed = o->seed;
    ds->problems = ns_xcalloc((size_t)n + 1, sizeof(ns_ds_problem));
    builder b;
    builder_init(&b);
    /* rows are collected problem-local width first; remember each width */
    int *widths = ns_xmalloc(sizeof(int) * ((size_t)n + 1));
    int64_t offset = 0;
    ns_progress prog;
    ns_progress_init(&prog, o->progress, "data build");
    for (int i = 0; i < n && st == NS_OK; i++) {
        ns_progress_update(&prog, i, n, problem_paths[i]);
        ns_problem p;
        ns_task t;
        ns_space sp;
        if ((st = ns_problem_read(&p, &d, problem_paths[i], err)) != NS_OK) break;
        /* the per-problem time limit covers grounding too */
        ns_ground_limits gl = {o->time_limit, 0};
        double g0 = ns_cpu_now();
        st = ns_task_ground_limited(&t, &d, &p, &gl, err);
        if (st != NS_OK && st != NS_OUT_OF_TIME && st != NS_OUT_OF_MEMORY) {
            ns_problem_free(&p);
            break;
        }
        if (st == NS_OK) {
            ns_space_opts so = {.mode = o->mode, .max_states = o->max_states, .time_limit = o->time_limit};
            if (so.time_limit > 0) so.time_limit -= ns_cpu_now() - g0;
            if (o->time_limit > 0 && so.time_limit <= 0) /* no time left to set a search up */
                st = ns_error_set(err, NS_OUT_OF_TIME, problem_paths[i], 0, 0,
                                  "grounding used the whole time limit (%g s CPU)", o->time_limit);
            else st = ns_space_build(&sp, &t, &so, err);
        } else {
            memset(&t, 0, sizeof t); /* nothing grounded to free */
        }
        if (st == NS_OUT_OF_TIME || st == NS_OUT_OF_MEMORY) { /* too hard: leave it out, say so */
            ds->skipped = ns_xrealloc(ds->skipped, sizeof(char *) * (size_t)(ds->nskipped + 1));
            ds->skipped_reason = ns_xrealloc(ds->skipped_reason, sizeof(char *) * (size_t)(ds->nskipped + 1));
            ds->skipped[ds->nskipped] = ns_xstrdup(problem_paths[i]);
            ds->skipped_reason[ds->nskipped++] = ns_xstrdup(err ? err->msg : "optimal search failed");
            st = NS_OK;
        } else if (st == NS_OK) {
            ns_ds_problem *pr = &ds->problems[ds->nproblems];
            int pi = ds->nproblems;
            fill_problem_names(pr, &t, problem_paths[i]);
            pr->state_offset = offset;
            pr->cstar = sp.cstar;
            pr->complete = sp.complete;
            pr->optimal_plans = ns_space_count_plans(&sp);
            pr->explored = sp.explored;
            widths[pi] = t.nwords;
            if (t.nwords > ds->words) ds->words = t.nwords;
            pr->nstates = add_space(&b, pi, &sp, o, offset);
            offset += pr->nstates;
            ds->nproblems = pi + 1;
            ns_space_free(&sp);
        }
        ns_task_free(&t);
        ns_problem_free(&p);
    }
    ns_progress_done(&prog);
    ns_domain_free(&d);
    if (st != NS_OK) {
        free(widths);
        builder_free(&b);
        ns_dataset_free(ds);
        return st;
    }
    if (ds->words == 0) ds->words = 1;
    /* re-pack state rows to the common width */
    int64_t shape[2] = {offset, ds->words};
    ns_array_init(&ds->states, NS_U64, 2, shape);
    const uint64_t *src = b.states.data;
    uint64_t *dst = ds->states.data;
    for (int i = 0; i < ds->nproblems; i++)
        for (int64_t s = 0; s < ds->problems[i].nstates; s++) {
            memcpy(dst + (ds->problems[i].state_offset + s) * ds->words, src, sizeof(uint64_t) * (size_t)widths[i]);
            src += widths[i];
        }
    free(widths);
    free(b.states.data);
    b.states.data = NULL;
    col_to_array(&b.sprob, &ds->state_problem, NS_I32, 1);
    col_to_array(&b.sg, &ds->state_g, NS_I32, 1);
    col_to_array(&b.sh, &ds->state_hstar, NS_I32, 1);
    col_to_array(&b.trans, &ds->transitions, NS_I32, 4);
    col_to_array(&b.topt, &ds->transition_optimal, NS_U8, 1);
    col_to_array(&b.app_off, &ds->applicable_offsets, NS_I64, 1);
    col_to_array(&b.app_ops, &ds->applicable_ops, NS_I32, 1);
    col_to_array(&b.plan_off, &ds->plan_offsets, NS_I64, 1);
    col_to_array(&b.plan_tr, &ds->plan_transitions, NS_I64, 1);
    col_to_array(&b.plan_prob, &ds->plan_problem, NS_I32, 1);
    builder_free(&b);
    return NS_OK;
}

/* ---- save ------------------------------------------------------------- */

#define NARRAYS 11
static void arrays_of(const ns_dataset *ds, ns_npy_entry out[NARRAYS])
{
    ns_dataset *d = (ns_dataset *)ds;
    ns_npy_entry list[NARRAYS] = {
        {"states.npy", &d->states},
        {"state_problem.npy", &d->state_problem},
        {"state_g.npy", &d->state_g},
        {"state_hstar.npy", &d->state_hstar},
        {"transitions.npy", &d->transitions},
        {"transition_optimal.npy", &d->transition_optimal},
        {"applicable_offsets.npy", &d->applicable_offsets},
        {"applicable_ops.npy", &d->applicable_ops},
        {"plan_offsets.npy", &d->plan_offsets},
        {"plan_transitions.npy", &d->plan_transitions},
        {"plan_problem.npy", &d->plan_problem},
    };
    memcpy(out, list, sizeof list);
}

static void put_strs(ns_buf *b, const char *key, char **s, int n)
{
    ns_buf_printf(b, ",\n      \"%s\": [", key);
    for (int i = 0; i < n; i++) {
        if (i) ns_buf_puts(b, ", ");
        ns_json_put_str(b, s[i]);
    }
    ns_buf_putc(b, ']');
}

/* Writes into dir, a fresh folder. */
static ns_status save_into(const ns_dataset *ds, const char *dir, ns_error *err)
{
    ns_status st = NS_OK;
    ns_npy_entry arrays[NARRAYS];
    arrays_of(ds, arrays);
    ns_buf files;
    ns_buf_init(&files);
    if ((st = ns_npy_write_listed(dir, arrays, NARRAYS, &files, err)) != NS_OK) {
        ns_buf_free(&files);
        return st;
    }
    size_t plen = strlen(dir) + 64;
    char *path = ns_xmalloc(plen);
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_printf(&b, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"domain\": ", NS_DATASET_FORMAT,
                  NS_DATASET_VERSION);
    ns_json_put_str(&b, ds->domain_name);
    ns_buf_puts(&b, ",\n  \"domain_file\": ");
    ns_json_put_str(&b, ds->domain_file);
    ns_buf_printf(&b,
                  ",\n  \"mode\": \"%s\",\n  \"successors\": %s,\n  \"max_states\": %lld,\n  \"plans_per_problem\": %d,\n  \"seed\": %llu,\n"
                  "  \"words\": %d,\n  \"counts\": {\"problems\": %d, \"states\": %lld, \"transitions\": %lld, "
                  "\"plans\": %lld},\n  \"problems\": [",
                  ds->mode == NS_SPACE_FULL ? "full" : "optimal", ds->successors ? "true" : "false", (long long)ds->max_states, ds->plans_per_problem,
                  (unsigned long long)ds->seed, ds->words, ds->nproblems, (long long)ns_dataset_nstates(ds),
                  (long long)ns_dataset_ntransitions(ds), (long long)ds->plan_problem.shape[0]);
    for (int i = 0; i < ds->nproblems; i++) {
        const ns_ds_problem *p = &ds->problems[i];
        ns_buf_puts(&b, i ? ",\n    {\n      \"name\": " : "\n    {\n      \"name\": ");
        ns_json_put_str(&b, p->name);
        ns_buf_puts(&b, ",\n      \"file\": ");
        ns_json_put_str(&b, p->file);
        ns_buf_printf(&b,
                      ",\n      \"state_offset\": %lld, \"states\": %lld, \"cstar\": %d, \"complete\": %s, "
                      "\"optimal_plans\": ",
                      (long long)p->state_offset, (long long)p->nstates, p->cstar, p->complete ? "true" : "false");
        ns_json_put_num(&b, p->optimal_plans);
        ns_buf_printf(&b, ", \"explored\": %lld", (long long)p->explored);
        put_strs(&b, "objects", p->objects, p->nobjects);
        put_strs(&b, "object_types", p->object_types, p->nobjects);
        put_strs(&b, "atoms", p->atoms, p->natoms);
        put_strs(&b, "statics", p->statics, p->nstatics);
        put_strs(&b, "operators", p->ops, p->nops);
        put_strs(&b, "goal", p->goal, p->ngoal);
        ns_buf_puts(&b, "\n    }");
    }
    ns_buf_puts(&b, "\n  ],\n  \"skipped\": [");
    for (int i = 0; i < ds->nskipped; i++) {
        ns_buf_puts(&b, i ? ",\n    {\"file\": " : "\n    {\"file\": ");
        ns_json_put_str(&b, ds->skipped[i]);
        ns_buf_puts(&b, ", \"reason\": ");
        ns_json_put_str(&b, ds->skipped_reason[i]);
        ns_buf_putc(&b, '}');
    }
    ns_buf_puts(&b, "],\n  ");
    ns_buf_puts(&b, files.data);
    ns_buf_puts(&b, "\n}\n");
    ns_buf_free(&files);
    ns_json_seal(&b);
    snprintf(path, plen, "%s/manifest.json", dir);
    st = ns_write_file_atomic(path, b.data, b.len, err);
    ns_buf_free(&b);
    free(path);
    return st;
}

/* Built beside the destination and swapped in whole, so a failure (or a
 * kill) never costs the previous output. */
ns_status ns_dataset_save(const ns_dataset *ds, const char *dir, ns_error *err)
{
    char *tmp;
    ns_status st = ns_dir_stage(dir, &tmp, err);
    if (st != NS_OK) return st;
    st = save_into(ds, tmp, err);
    if (st != NS_OK) {
        ns_dir_discard(tmp);
        return st;
    }
    return ns_dir_commit(dir, tmp, err);
}

/* ---- load ------------------------------------------------------------- */

static ns_status bad(ns_error *err, const char *file, const char *fmt, const char *what)
{
    return ns_error_set(err, NS_ERR_INPUT, file, 0, 0, fmt, what);
}

static ns_status get_strs(const ns_json *obj, const char *key, char ***out, int *n, const char *file, ns_error *err)
{
    const ns_json *a = ns_json_get(obj, key);
    if (!a || a->kind != NS_JSON_ARRAY) return bad(err, file, "manifest: problem lacks the list '%s'", key);
    *out = ns_xcalloc((size_t)a->n + 1, sizeof(char *));
    *n = a->n;
    for (int i = 0; i < a->n; i++) {
        if (a->items[i].kind != NS_JSON_STRING) return bad(err, file, "manifest: '%s' must hold strings", key);
        (*out)[i] = ns_xstrdup(a->items[i].string);
    }
    return NS_OK;
}

static ns_status load_manifest(ns_dataset *ds, const ns_json *m, const char *file, bool sealed, ns_error *err)
{
    const char *s;
    int64_t v;
    if (m->kind != NS_JSON_OBJECT || !ns_json_get_str(m, "format", &s) || strcmp(s, NS_DATASET_FORMAT))
        return bad(err, file, "not a nextstate dataset manifest (format is not '%s')", NS_DATASET_FORMAT);
    ns_status vst = ns_json_check_version(m, file, sealed, NS_DATASET_VERSION, "dataset", err);
    if (vst) return vst;
    if (!ns_json_get_str(m, "domain", &s)) return bad(err, file, "manifest lacks '%s'", "domain");
    ds->domain_name = ns_xstrdup(s);
    ds->domain_file = ns_xstrdup(ns_json_get_str(m, "domain_file", &s) ? s : "");
    ds->mode = ns_json_get_str(m, "mode", &s) && !strcmp(s, "full") ? NS_SPACE_FULL : NS_SPACE_OPTIMAL;
    ds->max_states = ns_json_get_int(m, "max_states", &v) ? v : 0;
    const ns_json *succ = ns_json_get(m, "successors");
    ds->successors = succ && succ->kind == NS_JSON_BOOL && succ->boolean;
    ds->plans_per_problem = ns_json_get_int(m, "plans_per_problem", &v) ? (int)v : 0;
    ds->seed = ns_json_get_int(m, "seed", &v) ? (uint64_t)v : 0;
    if (!ns_json_get_int(m, "words", &v) || v < 1 || v > 1 << 20) return bad(err, file, "manifest: bad '%s'", "words");
    ds->words = (int)v;
    const ns_json *sk = ns_json_get(m, "skipped");
    for (int i = 0; sk && sk->kind == NS_JSON_ARRAY && i < sk->n; i++) {
        const char *f, *r;
        if (!ns_json_get_str(&sk->items[i], "file", &f) || !ns_json_get_str(&sk->items[i], "reason", &r))
            return bad(err, file, "manifest: bad entry in '%s'", "skipped");
        ds->skipped = ns_xrealloc(ds->skipped, sizeof(char *) * (size_t)(ds->nskipped + 1));
        ds->skipped_reason = ns_xrealloc(ds->skipped_reason, sizeof(char *) * (size_t)(ds->nskipped + 1));
        ds->skipped[ds->nskipped] = ns_xstrdup(f);
        ds->skipped_reason[ds->nskipped++] = ns_xstrdup(r);
    }
    const ns_json *ps = ns_json_get(m, "problems");
    if (!ps || ps->kind != NS_JSON_ARRAY) return bad(err, file, "manifest lacks '%s'", "problems");
    ds->problems = ns_xcalloc((size_t)ps->n + 1, sizeof(ns_ds_problem));
    for (int i = 0; i < ps->n; i++) {
        const ns_json *p = &ps->items[i];
        ns_ds_problem *pr = &ds->problems[i];
        ds->nproblems = i + 1;
        if (p->kind != NS_JSON_OBJECT || !ns_json_get_str(p, "name", &s)) return bad(err, file, "manifest: bad %s", "problem");
        pr->name = ns_xstrdup(s);
        pr->file = ns_xstrdup(ns_json_get_str(p, "file", &s) ? s : "");
        if (!ns_json_get_int(p, "state_offset", &pr->state_offset) || !ns_json_get_int(p, "states", &pr->nstates) ||
            !ns_json_get_int(p, "cstar", &v))
            return bad(err, file, "manifest: problem '%s' lacks state counts", pr->name);
        pr->cstar = (int32_t)v;
        const ns_json *c = ns_json_get(p, "complete");
        pr->complete = c && c->kind == NS_JSON_BOOL && c->boolean;
        c = ns_json_get(p, "optimal_plans");
        pr->optimal_plans = c && c->kind == NS_JSON_NUMBER ? c->number : 0;
        pr->explored = ns_json_get_int(p, "explored", &v) ? v : 0;
        int nt = 0;
        ns_status st;
        if ((st = get_strs(p, "objects", &pr->objects, &pr->nobjects, file, err)) != NS_OK) return st;
        /* object_types is freed with the object count: it must have that
         * length, or it is freed here with its own */
        st = get_strs(p, "object_types", &pr->object_types, &nt, file, err);
        if (st == NS_OK && nt != pr->nobjects)
            st = bad(err, file, "manifest: problem '%s': object_types length differs", pr->name);
        if (st != NS_OK) {
            free_strs(pr->object_types, nt);
            pr->object_types = NULL;
            return st;
        }
        if ((st = get_strs(p, "atoms", &pr->atoms, &pr->natoms, file, err)) != NS_OK ||
            (st = get_strs(p, "statics", &pr->statics, &pr->nstatics, file, err)) != NS_OK ||
            (st = get_strs(p, "operators", &pr->ops, &pr->nops, file, err)) != NS_OK ||
            (st = get_strs(p, "goal", &pr->goal, &pr->ngoal, file, err)) != NS_OK)
            return st;
        if ((pr->natoms + 63) / 64 > ds->words) return bad(err, file, "manifest: problem '%s' is wider than 'words'", pr->name);
    }
    return NS_OK;
}

/* Checks that every value of an i32/i64 array lies in [lo, hi). */
static bool in_range(const ns_array *a, int64_t lo, int64_t hi)
{
    int64_t n = ns_array_count(a);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = a->dtype == NS_I32 ? ((const int32_t *)a->data)[i] : ((const int64_t *)a->data)[i];
        if (v < lo || v >= hi) return false;
    }
    return true;
}

static ns_status check_shapes(const ns_dataset *ds, const char *dir, ns_error *err)
{
    int64_t N = ds->states.shape[0], T = ds->transitions.shape[0], K = ds->plan_problem.shape[0];
    char file[1024];
#define REQUIRE(cond, name, what)                                                              \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            snprintf(file, sizeof file, "%s/%s", dir, name);                                   \
            return ns_error_set(err, NS_ERR_INPUT, file, 0, 0, "inconsistent dataset: %s", what); \
        }                                                                                      \
    } while (0)
    REQUIRE(ds->states.dtype == NS_U64 && ds->states.ndim == 2 && ds->states.shape[1] == ds->words, "states.npy",
            "expected u64 [N, words]");
    REQUIRE(ds->state_problem.dtype == NS_I32 && ds->state_problem.ndim == 1 && ds->state_problem.shape[0] == N,
            "state_problem.npy", "expected i32 [N]");
    REQUIRE(ds->state_g.dtype == NS_I32 && ds->state_g.ndim == 1 && ds->state_g.shape[0] == N, "state_g.npy",
            "expected i32 [N]");
    REQUIRE(ds->state_hstar.dtype == NS_I32 && ds->state_hstar.ndim == 1 && ds->state_hstar.shape[0] == N,
            "state_hstar.npy", "expected i32 [N]");
    REQUIRE(ds->transitions.dtype == NS_I32 && ds->transitions.ndim == 2 && ds->transitions.shape[1] == 4,
            "transitions.npy", "expected i32 [T, 4]");
    REQUIRE(ds->transition_optimal.dtype == NS_U8 && ds->transition_optimal.shape[0] == T, "transition_optimal.npy",
            "expected u8 [T]");
    REQUIRE(ds->applicable_offsets.dtype == NS_I64 && ds->applicable_offsets.shape[0] == N + 1,
            "applicable_offsets.npy", "expected i64 [N+1]");
    REQUIRE(ds->applicable_ops.dtype == NS_I32 && ds->applicable_ops.ndim == 1, "applicable_ops.npy", "expected i32 [A]");
    REQUIRE(ds->plan_offsets.dtype == NS_I64 && ds->plan_offsets.shape[0] == K + 1, "plan_offsets.npy",
            "expected i64 [K+1]");
    REQUIRE(ds->plan_transitions.dtype == NS_I64 && ds->plan_transitions.ndim == 1, "plan_transitions.npy",
            "expected i64 [L]");
    REQUIRE(ds->plan_problem.dtype == NS_I32, "plan_problem.npy", "expected i32 [K]");
    int64_t total = 0;
    for (int i = 0; i < ds->nproblems; i++) {
        REQUIRE(ds->problems[i].state_offset == total, "manifest.json", "problem state ranges are not contiguous");
        total += ds->problems[i].nstates;
    }
    REQUIRE(total == N, "manifest.json", "problem state counts do not add up to states.npy");
    REQUIRE(in_range(&ds->state_problem, 0, ds->nproblems), "state_problem.npy", "problem id out of range");
    {
        const uint64_t *w = ds->states.data;
        const int32_t *spr = ds->state_problem.data;
        for (int64_t s = 0; s < N; s++) { /* no bit set beyond the problem's atoms */
            int na = ds->problems[spr[s]].natoms;
            for (int k = na / 64; k < ds->words; k++) {
                uint64_t keep = k == na / 64 && na % 64 ? (((uint64_t)1 << (na % 64)) - 1) : 0;
                REQUIRE((w[s * ds->words + k] & ~keep) == 0, "states.npy", "a state sets a bit beyond its problem's atoms");
            }
        }
    }
    const int32_t *tr = ds->transitions.data;
    const int32_t *sp = ds->state_problem.data;
    for (int64_t t = 0; t < T; t++) {
        const int32_t *r = tr + 4 * t;
        REQUIRE(r[0] >= 0 && r[0] < ds->nproblems && r[1] >= 0 && r[1] < N && r[3] >= 0 && r[3] < N &&
                    sp[r[1]] == r[0] && sp[r[3]] == r[0] && r[2] >= 0 && r[2] < ds->problems[r[0]].nops,
                "transitions.npy", "row refers to a state, problem or operator out of range");
    }
    const int64_t *ao = ds->applicable_offsets.data;
    REQUIRE(ao[0] == 0 && ao[N] == ds->applicable_ops.shape[0], "applicable_offsets.npy", "offsets do not span the ops");
    for (int64_t s = 0; s < N; s++) REQUIRE(ao[s] <= ao[s + 1], "applicable_offsets.npy", "offsets decrease");
    const int32_t *aops = ds->applicable_ops.data;
    for (int64_t s = 0; s < N; s++)
        for (int64_t k = ao[s]; k < ao[s + 1]; k++)
            REQUIRE(aops[k] >= 0 && aops[k] < ds->problems[sp[s]].nops, "applicable_ops.npy", "operator out of range");
    const int64_t *po = ds->plan_offsets.data;
    REQUIRE(po[0] == 0 && po[K] == ds->plan_transitions.shape[0], "plan_offsets.npy", "offsets do not span the plans");
    for (int64_t k = 0; k < K; k++) REQUIRE(po[k] <= po[k + 1], "plan_offsets.npy", "offsets decrease");
    REQUIRE(in_range(&ds->plan_transitions, 0, T > 0 ? T : 1), "plan_transitions.npy", "transition id out of range");
    REQUIRE(in_range(&ds->plan_problem, 0, ds->nproblems), "plan_problem.npy", "problem id out of range");
#undef REQUIRE
    return NS_OK;
}

ns_status ns_dataset_load(ns_dataset *ds, const char *dir, ns_error *err)
{
    memset(ds, 0, sizeof *ds);
    size_t plen = strlen(dir) + 64;
    char *path = ns_xmalloc(plen);
    snprintf(path, plen, "%s/manifest.json", dir);
    ns_json m;
    bool sealed;
    ns_status st = ns_json_read_sealed(&m, path, &sealed, err);
    if (st == NS_OK) {
        st = load_manifest(ds, &m, path, sealed, err);
        ns_npy_entry arrays[NARRAYS];
        arrays_of(ds, arrays);
        if (st == NS_OK) st = ns_npy_read_listed(dir, ns_json_get(&m, "files"), path, arrays, NARRAYS, err);
        ns_json_free(&m);
    }
    if (st == NS_OK) st = check_shapes(ds, dir, err);
    free(path);
    if (st != NS_OK) ns_dataset_free(ds);
    return st;
}

void ns_dataset_free(ns_dataset *ds)
{
    free(ds->domain_name);
    free(ds->domain_file);
    for (int i = 0; i < ds->nproblems; i++) problem_free(&ds->problems[i]);
    free(ds->problems);
    free_strs(ds->skipped, ds->nskipped);
    free_strs(ds->skipped_reason, ds->nskipped);
    ns_npy_entry arrays[NARRAYS];
    arrays_of(ds, arrays);
    for (int i = 0; i < NARRAYS; i++) ns_array_free(arrays[i].a);
    memset(ds, 0, sizeof *ds);
}
