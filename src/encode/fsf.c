/* fsf.c — fixed-size factored encodings (the first paper's slot rules). */
#include "nextstate/encode/fsf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/util/json.h"

static const char *NAMES[] = {"auto", "blocks", "gripper", "logistics", "visitall"};

const char *ns_fsf_domain_name(ns_fsf_domain d)
{
    return (int)d >= 0 && (int)d < 5 ? NAMES[d] : "auto";
}

ns_fsf_domain ns_fsf_domain_parse(const char *s)
{
    if (!strcmp(s, "blocks") || !strcmp(s, "blocksworld")) return NS_FSF_BLOCKS;
    if (!strcmp(s, "gripper") || !strcmp(s, "gripper-strips")) return NS_FSF_GRIPPER;
    if (!strcmp(s, "logistics")) return NS_FSF_LOGISTICS;
    if (!strcmp(s, "visitall") || !strcmp(s, "visitall-from-everywhere") || !strcmp(s, "grid-visit-all"))
        return NS_FSF_VISITALL;
    return NS_FSF_AUTO;
}

static bool has_pred(const ns_domain *d, const char *name, int arity)
{
    int p = ns_domain_find_pred(d, name);
    return p >= 0 && d->preds[p].arity == arity;
}

ns_fsf_domain ns_fsf_domain_detect(const ns_domain *d)
{
    if (has_pred(d, "on", 2) && has_pred(d, "ontable", 1) && has_pred(d, "holding", 1)) return NS_FSF_BLOCKS;
    if (has_pred(d, "at-robby", 1) && has_pred(d, "carry", 2) && has_pred(d, "at", 2)) return NS_FSF_GRIPPER;
    if (has_pred(d, "at-robot", 1) && has_pred(d, "visited", 1)) return NS_FSF_VISITALL;
    if (has_pred(d, "at", 2) && has_pred(d, "in", 2)) return NS_FSF_LOGISTICS;
    return NS_FSF_AUTO;
}

ns_status ns_fsf_config_parse(ns_fsf_config *c, const char *text, size_t len, const char *path, ns_error *err)
{
    memset(c, 0, sizeof *c);
    ns_json j;
    ns_status st = ns_json_parse(&j, text, len, path, err);
    if (st) return st;
    int64_t m;
    const char *dn;
    if (j.kind != NS_JSON_OBJECT || !ns_json_get_int(&j, "max_objects", &m) || m < 1 || m > (1 << 24)) {
        st = ns_error_set(err, NS_ERR_INPUT, path, j.line, j.col, "FSF config: needs a positive integer \"max_objects\"");
    } else {
        c->max_objects = (int)m;
        if (ns_json_get_str(&j, "domain", &dn)) {
            c->domain = ns_fsf_domain_parse(dn);
            if (c->domain == NS_FSF_AUTO && strcmp(dn, "auto") != 0)
                st = ns_error_set(err, NS_ERR_INPUT, path, j.line, j.col, "FSF config: unknown domain \"%s\"", dn);
        }
    }
    ns_json_free(&j);
    return st;
}

ns_status ns_fsf_config_load(ns_fsf_config *c, const char *path, ns_error *err)
{
    char *text;
    size_t len;
    ns_status st = ns_read_file(path, &text, &len, err);
    if (st) return st;
    st = ns_fsf_config_parse(c, text, len, path, err);
    free(text);
    return st;
}

ns_status ns_fsf_config_save(const ns_fsf_config *c, const char *path, ns_error *err)
{
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_printf(&b, "{\"max_objects\": %d", c->max_objects);
    if (c->domain != NS_FSF_AUTO) ns_buf_printf(&b, ", \"domain\": \"%s\"", ns_fsf_domain_name(c->domain));
    ns_buf_puts(&b, "}\n");
    ns_status st = ns_write_file_atomic(path, b.data, b.len, err);
    ns_buf_free(&b);
    return st;
}

/* The slot writes of atom pred(args): up to two (slot, value) pairs. */
static int rules_of(const ns_fsf_encoder *e, const char *pred, const int *args, int nargs, int *slots, float *vals)
{
    const int *S = e->slot;
    switch (e->domain) {
    case NS_FSF_BLOCKS:
        if (nargs == 2 && !strcmp(pred, "on")) {
            slots[0] = S[args[0]];
            vals[0] = (float)S[args[1]];
            return 1;
        }
        if (nargs == 1 && !strcmp(pred, "holding")) {
            slots[0] = S[args[0]];
            vals[0] = -1.0f;
            return 1;
        }
        if (nargs == 1 && !strcmp(pred, "ontable")) {
            slots[0] = S[args[0]];
            vals[0] = 0.0f;
            return 1;
        }
        return 0;
    case NS_FSF_GRIPPER:
        if (nargs == 1 && !strcmp(pred, "at-robby")) {
            slots[0] = 0;
            vals[0] = (float)S[args[0]];
            return 1;
        }
        if (nargs == 2 && !strcmp(pred, "at")) {
            slots[0] = S[args[0]];
            vals[0] = (float)S[args[1]];
            return 1;
        }
        if (nargs == 2 && !strcmp(pred, "carry")) {
            slots[0] = S[args[0]];
            vals[0] = -(float)S[args[1]];
            slots[1] = S[args[1]];
            vals[1] = (float)S[args[0]];
            return 2;
        }
        return 0;
    case NS_FSF_LOGISTICS:
        if (nargs == 2 && !strcmp(pred, "at")) {
            slots[0] = S[args[0]];
            vals[0] = (float)S[args[1]];
            return 1;
        }
        if (nargs == 2 && !strcmp(pred, "in")) {
            slots[0] = S[args[0]];
            vals[0] = -(float)S[args[1]];
            return 1;
        }
        return 0;
    case NS_FSF_VISITALL:
        if (nargs == 1 && !strcmp(pred, "at-robot")) {
            slots[0] = 0;
            vals[0] = (float)S[args[0]];
            return 1;
        }
        if (nargs == 1 && !strcmp(pred, "visited")) {
            slots[0] = S[args[0]];
            vals[0] = 1.0f;
            return 1;
        }
        return 0;
    default:
        return 0;
    }
}


ns_status ns_fsf_encoder_init(ns_fsf_encoder *e, const ns_fsf_config *c, const ns_task *t, ns_error *err)
{
    memset(e, 0, sizeof *e);
    const ns_problem *p = t->problem;
    const ns_domain *d = t->domain;
    e->task = t;
    e->domain = c->domain != NS_FSF_AUTO ? c->domain : ns_fsf_domain_detect(d);
    if (e->domain == NS_FSF_AUTO)
        return ns_error_set(err, NS_ERR_UNSUPPORTED, d->path, 0, 0,
                            "FSF: no slot rules for domain '%s' (blocks, gripper, logistics, visitall only)", d->name);
    if (p->nobjects > c->max_objects)
        return ns_error_set(err, NS_ERR_INPUT, p->path, 0, 0,
                            "FSF: problem '%s' has %d objects, the config allows max_objects %d", p->name,
                            p->nobjects, c->max_objects);
    e->width = c->max_objects + 1;
    ns_named *os = ns_xmalloc(sizeof(ns_named) * ((size_t)p->nobjects + 1));
    for (int i = 0; i < p->nobjects; i++) os[i] = (ns_named){p->objects[i], i};
    qsort(os, (size_t)p->nobjects, sizeof(ns_named), ns_cmp_named);
    e->slot = ns_xmalloc(sizeof(int) * ((size_t)p->nobjects + 1));
    for (int i = 0; i < p->nobjects; i++) e->slot[os[i].id] = i + 1;
    free(os);

    int slots[2];
    float vals[2];
    e->base = ns_xmalloc(sizeof(float) * (size_t)e->width);
    for (int i = 0; i < e->width; i++) e->base[i] = i <= p->nobjects ? 0.0f : NS_FSF_UNUSED;
    for (int i = 0; i < t->nstatics; i++) {
        const ns_atom *a = &t->statics[i];
        int n = rules_of(e, d->preds[a->pred].name, t->atom_args + a->args_off, a->nargs, slots, vals);
        for (int k = 0; k < n; k++) e->base[slots[k]] = vals[k];
    }
    e->rule_off = ns_xmalloc(sizeof(int) * ((size_t)t->natoms + 1));
    e->rule_slot = ns_xmalloc(sizeof(int) * (2 * (size_t)t->natoms + 1));
    e->rule_val = ns_xmalloc(sizeof(float) * (2 * (size_t)t->natoms + 1));
    int nr = 0;
    for (int i = 0; i < t->natoms; i++) {
        const ns_atom *a = &t->atoms[i];
        e->rule_off[i] = nr;
        int n = rules_of(e, d->preds[a->pred].name, t->atom_args + a->args_off, a->nargs, slots, vals);
        for (int k = 0; k < n; k++) {
            e->rule_slot[nr] = slots[k];
            e->rule_val[nr++] = vals[k];
        }
    }
    e->rule_off[t->natoms] = nr;
    e->goal = ns_xmalloc(sizeof(float) * (size_t)e->width);
    for (int i = 0; i < e->width; i++) e->goal[i] = NS_FSF_GOAL_DEFAULT;
    for (int i = 0; i < p->ngoal; i++) {
        const ns_lit *l = &p->goal[i];
        if (l->neg || l->pred == NS_PRED_EQUAL) continue;
        int n = rules_of(e, d->preds[l->pred].name, l->args, l->nargs, slots, vals);
        for (int k = 0; k < n; k++) e->goal[slots[k]] = vals[k];
    }
    return NS_OK;
}

void ns_fsf_encoder_free(ns_fsf_encoder *e)
{
    free(e->slot);
    free(e->rule_off);
    free(e->rule_slot);
    free(e->rule_val);
    free(e->base);
    free(e->goal);
    memset(e, 0, sizeof *e);
}

void ns_fsf_encode(const ns_fsf_encoder *e, const ns_word *s, float *out)
{
    const ns_task *t = e->task;
    memcpy(out, e->base, sizeof(float) * (size_t)e->width);
    for (int w = 0; w < t->nwords; w++) {
        ns_word x = s[w];
        while (x) {
            int a = (w << 6) + __builtin_ctzll(x);
            x &= x - 1;
            if (a >= t->natoms) break;
            for (int r = e->rule_off[a]; r < e->rule_off[a + 1]; r++) out[e->rule_slot[r]] = e->rule_val[r];
        }
    }
}

void ns_fsf_encode_goal(const ns_fsf_encoder *e, float *out)
{
    memcpy(out, e->goal, sizeof(float) * (size_t)e->width);
}
