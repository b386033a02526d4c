/* _core.c — the CPython binding of the nextstate library (the one C file of
 * the Python package; python/nextstate/*.py builds the public API on it).
 *
 * It binds the library's most stable calls only: PDDL parsing, grounding,
 * the successor generator, γ and the goal test, plan parsing and validation,
 * the classical searches and heuristics, the problem generators and WL
 * (vocabulary fitting, loading, saving and encoding).  Library errors become
 * nextstate.NextstateError carrying "file:line:col: message".
 *
 * States cross the boundary as bytes: the task's packed bitset, nwords
 * little-endian 64-bit words (hashable, and np.frombuffer(s, np.uint64)
 * gives the words).  Batches of states are any C-contiguous buffer of
 * n * nwords words (a (n, nwords) uint64 array). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nextstate/core/gen.h"
#include "nextstate/core/heuristic.h"
#include "nextstate/core/pddl.h"
#include "nextstate/core/plan.h"
#include "nextstate/core/search.h"
#include "nextstate/core/succgen.h"
#include "nextstate/core/task.h"
#include "nextstate/encode/encoder.h"
#include "nextstate/encode/wl.h"
#include "nextstate/eval/fit.h"
#include "nextstate/eval/report.h"
#include "nextstate/learn/hwl.h"
#include "nextstate/learn/predictor.h"
#include "nextstate/planner/planner.h"
#include "nextstate/data/trajectory.h"
#include "nextstate/util/error.h"
#include "nextstate/util/util.h"

static PyObject *NsError; /* nextstate.NextstateError */

/* Raises NextstateError from a library error; returns NULL. */
static PyObject *raise_ns(const ns_error *e)
{
    char buf[1024];
    ns_error_format(e, buf, sizeof buf);
    PyObject *inst = PyObject_CallFunction(NsError, "s", buf);
    if (!inst) return NULL;
    PyObject *v;
    v = PyUnicode_FromString(ns_status_name(e->code)); PyObject_SetAttrString(inst, "status", v); Py_XDECREF(v);
    v = PyLong_FromLong((long)e->code); PyObject_SetAttrString(inst, "code", v); Py_XDECREF(v);
    v = PyUnicode_FromString(e->file); PyObject_SetAttrString(inst, "file", v); Py_XDECREF(v);
    v = PyLong_FromLong(e->line); PyObject_SetAttrString(inst, "line", v); Py_XDECREF(v);
    v = PyLong_FromLong(e->col); PyObject_SetAttrString(inst, "col", v); Py_XDECREF(v);
    v = PyUnicode_FromString(e->msg); PyObject_SetAttrString(inst, "msg", v); Py_XDECREF(v);
    PyErr_SetObject(NsError, inst);
    Py_DECREF(inst);
    return NULL;
}

/* ------------------------------------------------------------------ Task */

typedef struct {
    PyObject_HEAD
    ns_domain d;
    ns_problem p;
    ns_task t;
    ns_succgen g;
    int have; /* 1 domain, 2 + problem, 3 + task and succgen */
    int *scratch; /* nops */
} TaskObject;

static void task_dealloc(TaskObject *self)
{
    if (self->have >= 3) {
        ns_succgen_free(&self->g);
        ns_task_free(&self->t);
    }
    if (self->have >= 2) ns_problem_free(&self->p);
    if (self->have >= 1) ns_domain_free(&self->d);
    free(self->scratch);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int task_init(TaskObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"domain", "problem", "domain_text", "problem_text", NULL};
    const char *dpath = NULL, *ppath = NULL, *dtext = NULL, *ptext = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "ss|zz", kwlist, &dpath, &ppath, &dtext, &ptext)) return -1;
    if (self->have) {
        PyErr_SetString(PyExc_RuntimeError, "Task is already initialised");
        return -1;
    }
    ns_error err;
    ns_error_clear(&err);
    ns_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dtext ? ns_domain_parse(&self->d, dtext, dpath, &err) : ns_domain_read(&self->d, dpath, &err);
    Py_END_ALLOW_THREADS
    if (st != NS_OK) { raise_ns(&err); return -1; }
    self->have = 1;
    Py_BEGIN_ALLOW_THREADS
    st = ptext ? ns_problem_parse(&self->p, &self->d, ptext, ppath, &err)
               : ns_problem_read(&self->p, &self->d, ppath, &err);
    Py_END_ALLOW_THREADS
    if (st != NS_OK) { raise_ns(&err); return -1; }
    self->have = 2;
    Py_BEGIN_ALLOW_THREADS
    st = ns_task_ground(&self->t, &self->d, &self->p, &err);
    Py_END_ALLOW_THREADS
    if (st != NS_OK) { raise_ns(&err); return -1; }
    ns_succgen_init(&self->g, &self->t);
    self->have = 3;
    self->scratch = malloc(sizeof(int) * (size_t)(self->t.nops > 0 ? self->t.nops : 1));
    if (!self->scratch) { PyErr_NoMemory(); return -1; }
    return 0;
}

static int task_ready(TaskObject *self)
{
    if (self->have < 3) {
        PyErr_SetString(PyExc_RuntimeError, "Task is not initialised");
        return 0;
    }
    return 1;
}

static size_t state_bytes(const TaskObject *self) { return (size_t)self->t.nwords * sizeof(ns_word); }

static PyObject *state_new(const TaskObject *self, const ns_word *s)
{
    return PyBytes_FromStringAndSize((const char *)s, (Py_ssize_t)state_bytes(self));
}

/* Gets a buffer holding whole states; *n receives their number.  With one
 * set, exactly one state is required. */
static int get_states(TaskObject *self, PyObject *obj, Py_buffer *view, Py_ssize_t *n, int one)
{
    if (!task_ready(self)) return 0;
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS) != 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "a state must be bytes or a C-contiguous uint64 array, not %s",
                     Py_TYPE(obj)->tp_name);
        return 0;
    }
    size_t sb = state_bytes(self);
    if (view->len < 0 || (size_t)view->len % sb != 0 || (one && (size_t)view->len != sb)) {
        PyErr_Format(PyExc_ValueError, "expected %s%zu bytes (%d uint64 words per state), got %zd bytes",
                     one ? "" : "a multiple of ", sb, self->t.nwords, view->len);
        PyBuffer_Release(view);
        return 0;
    }
    if (view->itemsize != 1 && view->itemsize != 8) {
        PyErr_Format(PyExc_ValueError, "states must be uint64 words or bytes (item size %zd)", view->itemsize);
        PyBuffer_Release(view);
        return 0;
    }
    *n = (Py_ssize_t)((size_t)view->len / sb);
    return 1;
}

static PyObject *task_initial_state(TaskObject *self, PyObject *Py_UNUSED(ignored))
{
    if (!task_ready(self)) return NULL;
    return state_new(self, self->t.init);
}

static int parse_op(TaskObject *self, PyObject *o, int *op)
{
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) return 0;
    if (v < 0 || v >= self->t.nops) {
        PyErr_Format(PyExc_IndexError, "operator %ld out of range (task has %d)", v, self->t.nops);
        return 0;
    }
    *op = (int)v;
    return 1;
}

static PyObject *task_applicable(TaskObject *self, PyObject *arg)
{
    Py_buffer v;
    Py_ssize_t n;
    if (!get_states(self, arg, &v, &n, 1)) return NULL;
    int k = ns_succgen_applicable(&self->g, (const ns_word *)v.buf, self->scratch);
    PyBuffer_Release(&v);
    PyObject *out = PyList_New(k);
    if (!out) return NULL;
    for (int i = 0; i < k; i++) PyList_SET_ITEM(out, i, PyLong_FromLong(self->scratch[i]));
    return out;
}

/* (state, operator) arguments: one state's buffer in *v (release it) and the
 * operator id; 0 with a Python exception set. */
static int state_op_args(TaskObject *self, PyObject *args, Py_buffer *v, int *op)
{
    PyObject *s, *o;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "OO", &s, &o)) return 0;
    if (!get_states(self, s, v, &n, 1)) return 0;
    if (!parse_op(self, o, op)) { PyBuffer_Release(v); return 0; }
    return 1;
}

static PyObject *task_is_applicable(TaskObject *self, PyObject *args)
{
    Py_buffer v;
    int op;
    if (!state_op_args(self, args, &v, &op)) return NULL;
    bool a = ns_task_applicable(&self->t, op, (const ns_word *)v.buf);
    PyBuffer_Release(&v);
    return PyBool_FromLong(a);
}

static PyObject *task_apply(TaskObject *self, PyObject *args)
{
    Py_buffer v;
    int op;
    if (!state_op_args(self, args, &v, &op)) return NULL;
    if (!ns_task_applicable(&self->t, op, (const ns_word *)v.buf)) {
        PyBuffer_Release(&v);
        ns_buf b;
        ns_buf_init(&b);
        ns_task_op_str(&self->t, op, &b);
        ns_buf_putc(&b, '\0');
        PyErr_Format(PyExc_ValueError, "operator %s is not applicable in this state", b.data);
        ns_buf_free(&b);
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)state_bytes(self));
    if (out) ns_task_apply(&self->t, op, (const ns_word *)v.buf, (ns_word *)PyBytes_AS_STRING(out));
    PyBuffer_Release(&v);
    return out;
}

static PyObject *task_successors(TaskObject *self, PyObject *arg)
{
    Py_buffer v;
    Py_ssize_t n;
    if (!get_states(self, arg, &v, &n, 1)) return NULL;
    int k = ns_succgen_applicable(&self->g, (const ns_word *)v.buf, self->scratch);
    PyObject *out = PyList_New(k);
    for (int i = 0; out && i < k; i++) {
        PyObject *succ = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)state_bytes(self));
        if (!succ) { Py_CLEAR(out); break; }
        ns_task_apply(&self->t, self->scratch[i], (const ns_word *)v.buf, (ns_word *)PyBytes_AS_STRING(succ));
        PyObject *pair = Py_BuildValue("(iN)", self->scratch[i], succ);
        if (!pair) { Py_CLEAR(out); break; }
        PyList_SET_ITEM(out, i, pair);
    }
    PyBuffer_Release(&v);
    return out;
}

static PyObject *task_is_goal(TaskObject *self, PyObject *arg)
{
    Py_buffer v;
    Py_ssize_t n;
    if (!get_states(self, arg, &v, &n, 1)) return NULL;
    bool g = ns_task_is_goal(&self->t, (const ns_word *)v.buf);
    PyBuffer_Release(&v);
    return PyBool_FromLong(g);
}

static PyObject *buf_str(ns_buf *b)
{
    PyObject *s = PyUnicode_FromStringAndSize(b->data ? b->data : "", (Py_ssize_t)b->len);
    b->len = 0;
    return s;
}

static PyObject *task_atoms(TaskObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"state", "statics", NULL};
    PyObject *s;
    int statics = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|p", kwlist, &s, &statics)) return NULL;
    Py_buffer v;
    Py_ssize_t n;
    if (!get_states(self, s, &v, &n, 1)) return NULL;
    PyObject *out = PyList_New(0);
    ns_buf b;
    ns_buf_init(&b);
    for (int i = 0; out && i < self->t.natoms; i++) {
        if (!ns_bit_get((const ns_word *)v.buf, i)) continue;
        ns_task_atom_str(&self->t, i, &b);
        PyObject *a = buf_str(&b);
        if (!a || PyList_Append(out, a) != 0) Py_CLEAR(out);
        Py_XDECREF(a);
    }
    for (int i = 0; out && statics && i < self->t.nstatics; i++) {
        ns_task_static_str(&self->t, i, &b);
        PyObject *a = buf_str(&b);
        if (!a || PyList_Append(out, a) != 0) Py_CLEAR(out);
        Py_XDECREF(a);
    }
    ns_buf_free(&b);
    PyBuffer_Release(&v);
    return out;
}

static PyObject *names_list(TaskObject *self, int n, void (*fn)(const ns_task *, int, ns_buf *))
{
    if (!task_ready(self)) return NULL;
    PyObject *out = PyList_New(n);
    ns_buf b;
    ns_buf_init(&b);
    for (int i = 0; out && i < n; i++) {
        fn(&self->t, i, &b);
        PyObject *a = buf_str(&b);
        if (!a) { Py_CLEAR(out); break; }
        PyList_SET_ITEM(out, i, a);
    }
    ns_buf_free(&b);
    return out;
}

static PyObject *task_atom_names(TaskObject *self, PyObject *Py_UNUSED(i)) { return names_list(self, self->t.natoms, ns_task_atom_str); }
static PyObject *task_static_names(TaskObject *self, PyObject *Py_UNUSED(i)) { return names_list(self, self->t.nstatics, ns_task_static_str); }
static PyObject *task_op_names(TaskObject *self, PyObject *Py_UNUSED(i)) { return names_list(self, self->t.nops, ns_task_op_str); }

static PyObject *task_info(TaskObject *self, PyObject *Py_UNUSED(i))
{
    if (!task_ready(self)) return NULL;
    return Py_BuildValue("{s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:i,s:i,s:O,s:O}", "domain_name", self->d.name, "problem_name",
                         self->p.name, "domain_path", self->d.path ? self->d.path : "", "problem_path",
                         self->p.path ? self->p.path : "", "natoms", self->t.natoms, "nstatics", self->t.nstatics,
                         "nops", self->t.nops, "nwords", self->t.nwords, "nobjects", self->p.nobjects, "unit_cost",
                         self->t.unit_cost ? Py_True : Py_False, "goal_impossible",
                         self->t.goal_impossible ? Py_True : Py_False);
}

static PyObject *task_op_cost(TaskObject *self, PyObject *o)
{
    int op;
    if (!task_ready(self) || !parse_op(self, o, &op)) return NULL;
    return PyLong_FromLong(self->t.ops[op].cost);
}

/* State holding exactly the given fluent atoms (texts as atoms() prints). */
static PyObject *task_state_from_atoms(TaskObject *self, PyObject *arg)
{
    if (!task_ready(self)) return NULL;
    PyObject *seq = PySequence_Fast(arg, "state_from_atoms expects a sequence of atom strings");
    if (!seq) return NULL;
    PyObject *names = task_atom_names(self, NULL);
    PyObject *index = names ? PyDict_New() : NULL;
    for (Py_ssize_t i = 0; index && i < PyList_GET_SIZE(names); i++) {
        PyObject *k = PyLong_FromSsize_t(i);
        if (!k || PyDict_SetItem(index, PyList_GET_ITEM(names, i), k) != 0) Py_CLEAR(index);
        Py_XDECREF(k);
    }
    Py_XDECREF(names);
    PyObject *out = index ? PyBytes_FromStringAndSize(NULL, (Py_ssize_t)state_bytes(self)) : NULL;
    if (out) memset(PyBytes_AS_STRING(out), 0, state_bytes(self));
    for (Py_ssize_t i = 0; out && i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *a = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *k = PyDict_GetItemWithError(index, a);
        if (!k) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%R is not a fluent atom of this task", a);
            Py_CLEAR(out);
            break;
        }
        ns_bit_set((ns_word *)PyBytes_AS_STRING(out), (int)PyLong_AsLong(k));
    }
    Py_XDECREF(index);
    Py_DECREF(seq);
    return out;
}

/* Bag of literals: a (n, natoms) uint8 0/1 matrix written into out. */
static PyObject *task_literals_into(TaskObject *self, PyObject *args)
{
    PyObject *s, *o;
    if (!PyArg_ParseTuple(args, "OO", &s, &o)) return NULL;
    Py_buffer v, w;
    Py_ssize_t n;
    if (!get_states(self, s, &v, &n, 0)) return NULL;
    if (PyObject_GetBuffer(o, &w, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0) { PyBuffer_Release(&v); return NULL; }
    if (w.len != (Py_ssize_t)((size_t)n * (size_t)self->t.natoms)) {
        PyErr_SetString(PyExc_ValueError, "output buffer has the wrong size");
    } else {
        uint8_t *out = w.buf;
        for (Py_ssize_t r = 0; r < n; r++) {
            const ns_word *st = (const ns_word *)v.buf + (size_t)r * (size_t)self->t.nwords;
            for (int i = 0; i < self->t.natoms; i++) out[(size_t)r * (size_t)self->t.natoms + (size_t)i] = ns_bit_get(st, i);
        }
    }
    PyBuffer_Release(&w);
    PyBuffer_Release(&v);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

static PyObject *task_heuristic(TaskObject *self, PyObject *args)
{
    PyObject *s;
    const char *name;
    if (!PyArg_ParseTuple(args, "Os", &s, &name)) return NULL;
    int k = ns_heuristic_parse(name);
    if (k < 0) return PyErr_Format(PyExc_ValueError, "unknown heuristic '%s' (blind, hmax, hadd, ff or lmcut)", name);
    Py_buffer v;
    Py_ssize_t n;
    if (!get_states(self, s, &v, &n, 1)) return NULL;
    ns_heuristic *h = ns_heuristic_new(&self->t, (ns_heuristic_kind)k);
    int val = ns_heuristic_eval(h, (const ns_word *)v.buf);
    ns_heuristic_free(h);
    PyBuffer_Release(&v);
    if (val == NS_H_INF) Py_RETURN_NONE;
    return PyLong_FromLong(val);
}

/* Plan text -> list of operator ids (raises on unknown names). */
static PyObject *task_parse_plan(TaskObject *self, PyObject *args)
{
    const char *text, *path = "<plan>";
    if (!PyArg_ParseTuple(args, "s|s", &text, &path)) return NULL;
    if (!task_ready(self)) return NULL;
    ns_plan p;
    ns_error err;
    ns_error_clear(&err);
    if (ns_plan_parse(&p, &self->t, text, path, &err) != NS_OK) return raise_ns(&err);
    PyObject *out = PyList_New(p.n);
    for (int i = 0; out && i < p.n; i++) {
        int op = ns_task_find_op(&self->t, p.steps[i].schema, p.steps[i].args, p.steps[i].nargs);
        PyList_SET_ITEM(out, i, PyLong_FromLong(op)); /* -1: a grounding never reached */
    }
    ns_plan_free(&p);
    return out;
}

static PyObject *task_validate(TaskObject *self, PyObject *args)
{
    const char *text, *path = "<plan>";
    if (!PyArg_ParseTuple(args, "s|s", &text, &path)) return NULL;
    if (!task_ready(self)) return NULL;
    ns_plan p;
    ns_error err;
    ns_error_clear(&err);
    if (ns_plan_parse(&p, &self->t, text, path, &err) != NS_OK) return raise_ns(&err);
    ns_validation v;
    ns_status st = ns_plan_validate(&self->t, &p, &v);
    ns_plan_free(&p);
    if (st != NS_OK && st != NS_INVALID_PLAN) {
        ns_error_set(&err, st, path, 0, 0, "plan validation failed: %s", ns_status_name(st));
        return raise_ns(&err);
    }
    return Py_BuildValue("{s:O,s:i,s:i,s:l,s:s}", "valid", v.valid ? Py_True : Py_False, "failed_step",
                         v.failed_step, "length", v.plan_len, "cost", v.cost, "reason", v.reason);
}

static PyObject *task_plan_text(TaskObject *self, PyObject *arg)
{
    if (!task_ready(self)) return NULL;
    PyObject *seq = PySequence_Fast(arg, "plan_text expects a sequence of operator ids");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int *ops = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!ops) { Py_DECREF(seq); return PyErr_NoMemory(); }
    for (Py_ssize_t i = 0; i < n; i++)
        if (!parse_op(self, PySequence_Fast_GET_ITEM(seq, i), &ops[i])) { free(ops); Py_DECREF(seq); return NULL; }
    ns_buf b;
    ns_buf_init(&b);
    ns_plan_write_ops(&self->t, ops, (int)n, &b);
    PyObject *out = buf_str(&b);
    ns_buf_free(&b);
    free(ops);
    Py_DECREF(seq);
    return out;
}

static PyObject *task_solve(TaskObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"search", "heuristic", "time_limit", "memory_limit", "prune_irrelevant", "preferred", NULL};
    const char *search = "astar", *heur = NULL;
    double tl = 0;
    Py_ssize_t ml = 0;
    int prune = 1, pref = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|zzdnpp", kwlist, &search, &heur, &tl, &ml, &prune, &pref)) return NULL;
    if (!task_ready(self)) return NULL;
    ns_search_opts o;
    ns_search_opts_default(&o);
    int a = ns_search_algo_parse(search ? search : "astar");
    if (a < 0) return PyErr_Format(PyExc_ValueError, "unknown search '%s' (bfs, astar, gbfs, lazy or lama)", search);
    o.algo = (ns_search_algo)a;
    /* as `nextstate solve`: h^FF for the greedy searches, LM-cut for A*; BFS and lama ignore it */
    int h = heur ? ns_heuristic_parse(heur) : (o.algo >= NS_SEARCH_GBFS ? NS_H_FF : NS_H_LMCUT);
    if (h < 0) return PyErr_Format(PyExc_ValueError, "unknown heuristic '%s' (blind, hmax, hadd, ff or lmcut)", heur);
    if (ml < 0) return PyErr_Format(PyExc_ValueError, "memory_limit must be >= 0");
    o.heuristic = (ns_heuristic_kind)h;
    o.time_limit = tl;
    o.memory_limit = (size_t)ml;
    o.prune_irrelevant = prune;
    o.preferred = pref;
    ns_search_result r;
    Py_BEGIN_ALLOW_THREADS
    ns_search(&self->t, &o, &r);
    Py_END_ALLOW_THREADS
    PyObject *plan = PyList_New(r.plan ? r.plan_len : 0);
    for (int i = 0; plan && r.plan && i < r.plan_len; i++) PyList_SET_ITEM(plan, i, PyLong_FromLong(r.plan[i]));
    PyObject *out = plan ? Py_BuildValue("{s:s,s:O,s:N,s:l,s:l,s:l,s:l,s:i,s:d,s:s,s:s}", "status",
                                         ns_status_name(r.status), "solved", r.status == NS_OK ? Py_True : Py_False,
                                         "plan", plan, "cost", r.plan_cost, "expanded", r.expanded, "generated",
                                         r.generated, "evaluated", r.evaluated, "initial_h", r.init_h, "seconds",
                                         r.seconds, "search", ns_search_algo_name(o.algo), "heuristic",
                                         o.algo == NS_SEARCH_BFS    ? "none"
                                         : o.algo == NS_SEARCH_LAMA ? "ff+lmcount"
                                                                    : ns_heuristic_name(o.heuristic))
                         : NULL;
    ns_search_result_free(&r);
    return out;
}

static PyMethodDef task_methods[] = {
    {"initial_state", (PyCFunction)task_initial_state, METH_NOARGS, "initial_state() -> bytes: the initial state."},
    {"applicable", (PyCFunction)task_applicable, METH_O, "applicable(state) -> list[int]: applicable operator ids, ascending."},
    {"is_applicable", (PyCFunction)task_is_applicable, METH_VARARGS, "is_applicable(state, op) -> bool."},
    {"apply", (PyCFunction)task_apply, METH_VARARGS, "apply(state, op) -> bytes: γ(state, op); ValueError when op is not applicable."},
    {"successors", (PyCFunction)task_successors, METH_O, "successors(state) -> list[(op, bytes)]."},
    {"is_goal", (PyCFunction)task_is_goal, METH_O, "is_goal(state) -> bool."},
    {"atoms", (PyCFunction)(void (*)(void))task_atoms, METH_VARARGS | METH_KEYWORDS,
     "atoms(state, statics=False) -> list[str]: the true fluent atoms (and the static ones)."},
    {"atom_names", (PyCFunction)task_atom_names, METH_NOARGS, "atom_names() -> list[str]: fluent atoms by id."},
    {"static_names", (PyCFunction)task_static_names, METH_NOARGS, "static_names() -> list[str]: static atoms."},
    {"op_names", (PyCFunction)task_op_names, METH_NOARGS, "op_names() -> list[str]: operators by id."},
    {"info", (PyCFunction)task_info, METH_NOARGS, "info() -> dict: names and sizes."},
    {"op_cost", (PyCFunction)task_op_cost, METH_O, "op_cost(op) -> int."},
    {"state_from_atoms", (PyCFunction)task_state_from_atoms, METH_O, "state_from_atoms(atoms) -> bytes."},
    {"_literals_into", (PyCFunction)task_literals_into, METH_VARARGS, "internal: bag of literals into a buffer."},
    {"heuristic", (PyCFunction)task_heuristic, METH_VARARGS, "heuristic(state, name) -> int | None (None: dead end)."},
    {"parse_plan", (PyCFunction)task_parse_plan, METH_VARARGS, "parse_plan(text, path='<plan>') -> list[int]."},
    {"validate_text", (PyCFunction)task_validate, METH_VARARGS, "validate_text(text, path='<plan>') -> dict."},
    {"plan_text", (PyCFunction)task_plan_text, METH_O, "plan_text(ops) -> str: an IPC plan."},
    {"solve", (PyCFunction)(void (*)(void))task_solve, METH_VARARGS | METH_KEYWORDS,
     "solve(search='astar', heuristic=None, time_limit=0, memory_limit=0, prune_irrelevant=True, preferred=True) -> dict: "
     "search bfs, astar, gbfs, lazy or lama (LAMA-first)."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject TaskType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "nextstate._core.Task",
    .tp_doc = "Task(domain, problem, domain_text=None, problem_text=None): a parsed and grounded PDDL task.",
    .tp_basicsize = sizeof(TaskObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)task_init,
    .tp_dealloc = (destructor)task_dealloc,
    .tp_methods = task_methods,
};

/* --------------------------------------------------------------- WLVocab */

typedef struct {
    PyObject_HEAD
    ns_wl_vocab v;
    int have;   /* vocabulary initialised */
    int fitted; /* ids assigned (fitted or loaded) */
    int statics;
} WLObject;

static void wl_dealloc(WLObject *self)
{
    if (self->have) ns_wl_vocab_free(&self->v);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static TaskObject *as_task(PyObject *o)
{
    if (!PyObject_TypeCheck(o, &TaskType)) {
        PyErr_Format(PyExc_TypeError, "expected a nextstate Task, not %s", Py_TYPE(o)->tp_name);
        return NULL;
    }
    TaskObject *t = (TaskObject *)o;
    return task_ready(t) ? t : NULL;
}

/* _fit(groups, iterations, multiset, statics): groups = [(Task, states buffer)]. */
static PyObject *wl_fit(WLObject *self, PyObject *args)
{
    PyObject *groups;
    int iterations, multiset, statics;
    if (!PyArg_ParseTuple(args, "Oipp", &groups, &iterations, &multiset, &statics)) return NULL;
    if (iterations < 0) return PyErr_Format(PyExc_ValueError, "iterations must be >= 0");
    PyObject *seq = PySequence_Fast(groups, "fit expects a sequence of (task, states)");
    if (!seq) return NULL;
    Py_ssize_t ng = PySequence_Fast_GET_SIZE(seq);
    if (ng == 0) { Py_DECREF(seq); return PyErr_Format(PyExc_ValueError, "fit needs at least one task"); }
    PyObject *g0 = PySequence_Fast_GET_ITEM(seq, 0);
    TaskObject *t0 = PyTuple_Check(g0) && PyTuple_GET_SIZE(g0) == 2 ? as_task(PyTuple_GET_ITEM(g0, 0)) : NULL;
    if (!t0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "fit expects (task, states) pairs");
        Py_DECREF(seq);
        return NULL;
    }
    if (self->have) ns_wl_vocab_free(&self->v);
    self->have = self->fitted = 0;
    ns_wl_vocab_init(&self->v, &t0->d, iterations, multiset);
    self->have = 1;
    self->statics = statics;
    ns_wl_fitter f;
    ns_wl_fit_init(&f, &self->v);
    ns_wl_opts o = {iterations, statics};
    ns_error err;
    ns_error_clear(&err);
    int ok = 1;
    for (Py_ssize_t i = 0; ok && i < ng; i++) {
        PyObject *g = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyTuple_Check(g) || PyTuple_GET_SIZE(g) != 2) {
            PyErr_SetString(PyExc_TypeError, "fit expects (task, states) pairs");
            ok = 0;
            break;
        }
        TaskObject *t = as_task(PyTuple_GET_ITEM(g, 0));
        if (!t) { ok = 0; break; }
        if (strcmp(t->d.name, t0->d.name) != 0) {
            PyErr_Format(PyExc_ValueError, "task of domain '%s' in a fit of domain '%s'", t->d.name, t0->d.name);
            ok = 0;
            break;
        }
        Py_buffer v;
        Py_ssize_t n;
        if (!get_states(t, PyTuple_GET_ITEM(g, 1), &v, &n, 0)) { ok = 0; break; }
        ns_wl_encoder e;
        if (ns_wl_encoder_init(&e, &self->v, &t->t, &o, &err) != NS_OK) {
            PyBuffer_Release(&v);
            raise_ns(&err);
            ok = 0;
            break;
        }
        for (Py_ssize_t k = 0; k < n; k++)
            ns_wl_fit_add_state(&f, &e, (const ns_word *)v.buf + (size_t)k * (size_t)t->t.nwords);
        ns_wl_encoder_free(&e);
        PyBuffer_Release(&v);
    }
    if (ok && ns_wl_fit_finish(&f, &err) != NS_OK) {
        raise_ns(&err);
        ok = 0;
    }
    ns_wl_fit_free(&f);
    Py_DECREF(seq);
    if (!ok) {
        ns_wl_vocab_free(&self->v);
        self->have = 0;
        return NULL;
    }
    self->fitted = 1;
    Py_RETURN_NONE;
}

static int key_format(const char *s, ns_wl_key_format *f)
{
    if (!strcmp(s, "auto")) *f = NS_WL_KEYS_AUTO;
    else if (!strcmp(s, "flat")) *f = NS_WL_KEYS_FLAT;
    else if (!strcmp(s, "triples")) *f = NS_WL_KEYS_TRIPLES;
    else {
        PyErr_Format(PyExc_ValueError, "unknown key format '%s' (auto, flat or triples)", s);
        return 0;
    }
    return 1;
}

static PyObject *wl_load(WLObject *self, PyObject *args)
{
    const char *path, *fmts = "auto";
    int statics = 1;
    if (!PyArg_ParseTuple(args, "s|sp", &path, &fmts, &statics)) return NULL;
    ns_wl_key_format fmt;
    if (!key_format(fmts, &fmt)) return NULL;
    ns_wl_vocab v;
    ns_error err;
    ns_error_clear(&err);
    ns_status st;
    Py_BEGIN_ALLOW_THREADS
    st = ns_wl_vocab_load(&v, path, fmt, &err);
    Py_END_ALLOW_THREADS
    if (st != NS_OK) return raise_ns(&err);
    if (self->have) ns_wl_vocab_free(&self->v);
    self->v = v;
    self->have = self->fitted = 1;
    self->statics = statics;
    Py_RETURN_NONE;
}

static int wl_ready(WLObject *self)
{
    if (!self->fitted) {
        PyErr_SetString(PyExc_RuntimeError, "the WL vocabulary is not fitted (call fit or load first)");
        return 0;
    }
    return 1;
}

static PyObject *wl_save(WLObject *self, PyObject *args)
{
    const char *path, *fmts = "triples";
    if (!PyArg_ParseTuple(args, "s|s", &path, &fmts)) return NULL;
    ns_wl_key_format fmt;
    if (!key_format(fmts, &fmt) || !wl_ready(self)) return NULL;
    ns_error err;
    ns_error_clear(&err);
    if (ns_wl_vocab_save(&self->v, path, fmt, &err) != NS_OK) return raise_ns(&err);
    Py_RETURN_NONE;
}

/* _transform_into(task, states, out float64 buffer (n, D), iterations). */
static PyObject *wl_transform_into(WLObject *self, PyObject *args)
{
    PyObject *to, *so, *oo;
    int iterations = -1;
    if (!PyArg_ParseTuple(args, "OOO|i", &to, &so, &oo, &iterations)) return NULL;
    if (!wl_ready(self)) return NULL;
    TaskObject *t = as_task(to);
    if (!t) return NULL;
    Py_buffer v, w;
    Py_ssize_t n;
    if (!get_states(t, so, &v, &n, 0)) return NULL;
    if (PyObject_GetBuffer(oo, &w, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0) { PyBuffer_Release(&v); return NULL; }
    int D = ns_wl_vocab_dim(&self->v);
    if (w.len != (Py_ssize_t)((size_t)n * (size_t)D * sizeof(double))) {
        PyBuffer_Release(&w);
        PyBuffer_Release(&v);
        return PyErr_Format(PyExc_ValueError, "output buffer has the wrong size");
    }
    ns_wl_opts o = {iterations, self->statics};
    ns_wl_encoder e;
    ns_error err;
    ns_error_clear(&err);
    if (ns_wl_encoder_init(&e, &self->v, &t->t, &o, &err) != NS_OK) {
        PyBuffer_Release(&w);
        PyBuffer_Release(&v);
        return raise_ns(&err);
    }
    int cap = ns_wl_max_nnz(&e);
    int *idx = malloc(sizeof(int) * (size_t)(cap > 0 ? cap : 1));
    float *val = malloc(sizeof(float) * (size_t)(cap > 0 ? cap : 1));
    if (idx && val) {
        double *out = w.buf;
        memset(out, 0, (size_t)w.len);
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t r = 0; r < n; r++) {
            int k = ns_wl_features(&e, (const ns_word *)v.buf + (size_t)r * (size_t)t->t.nwords, idx, val);
            double *row = out + (size_t)r * (size_t)D;
            for (int j = 0; j < k; j++) row[idx[j]] = val[j];
        }
        Py_END_ALLOW_THREADS
    }
    int oom = !idx || !val;
    free(idx);
    free(val);
    ns_wl_encoder_free(&e);
    PyBuffer_Release(&w);
    PyBuffer_Release(&v);
    if (oom) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PyObject *wl_dim(WLObject *self, PyObject *Py_UNUSED(i))
{
    if (!wl_ready(self)) return NULL;
    return PyLong_FromLong(ns_wl_vocab_dim(&self->v));
}

static PyObject *wl_info(WLObject *self, PyObject *Py_UNUSED(i))
{
    if (!wl_ready(self)) return NULL;
    return Py_BuildValue("{s:s,s:i,s:O,s:i,s:O}", "domain_name", self->v.domain_name ? self->v.domain_name : "",
                         "iterations", self->v.iterations, "multiset", self->v.multiset ? Py_True : Py_False,
                         "n_features", ns_wl_vocab_dim(&self->v), "statics", self->statics ? Py_True : Py_False);
}

static PyMethodDef wl_methods[] = {
    {"_fit", (PyCFunction)wl_fit, METH_VARARGS, "internal: fit on [(task, states)]."},
    {"_load", (PyCFunction)wl_load, METH_VARARGS, "internal: load a WLPlan model JSON."},
    {"_save", (PyCFunction)wl_save, METH_VARARGS, "internal: save as WLPlan model JSON."},
    {"_transform_into", (PyCFunction)wl_transform_into, METH_VARARGS, "internal: dense features into a buffer."},
    {"_dim", (PyCFunction)wl_dim, METH_NOARGS, "internal: feature dimension."},
    {"_info", (PyCFunction)wl_info, METH_NOARGS, "internal: vocabulary facts."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject WLType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "nextstate._core.WLVocab",
    .tp_doc = "A WL colour vocabulary (low level; use nextstate.WLFeatureGenerator).",
    .tp_basicsize = sizeof(WLObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)wl_dealloc,
    .tp_methods = wl_methods,
};

/* ----------------------------------------------------------------- Model */

/* A learned model: a heuristic h(s) = w·φ(s) + b (hwl.h) or a next-state
 * predictor (predictor.h, LSTM or XGBoost), trained by _learn or loaded by
 * _load_model; both plan (planner.h). */
typedef struct {
    PyObject_HEAD
    int kind; /* 0 empty, 1 hwl, 2 predictor */
    ns_hwl h;
    ns_predictor p;
} ModelObject;

static PyTypeObject ModelType;

static void model_dealloc(ModelObject *self)
{
    if (self->kind == 1) ns_hwl_free(&self->h);
    else if (self->kind == 2) ns_predictor_free(&self->p);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int model_ready(ModelObject *self)
{
    if (!self->kind) {
        PyErr_SetString(PyExc_RuntimeError, "the model is empty (use nextstate.learn or nextstate.load_model)");
        return 0;
    }
    return 1;
}

static const ns_encoder_spec *model_enc(const ModelObject *self) { return self->kind == 1 ? &self->h.enc : &self->p.enc; }

static const char *model_kind_name(const ModelObject *self)
{
    return self->kind == 1 ? "hwl" : ns_predictor_kind_name(self->p.kind);
}

static PyObject *model_info(ModelObject *self, PyObject *Py_UNUSED(i))
{
    if (!model_ready(self)) return NULL;
    const ns_encoder_spec *e = model_enc(self);
    const char *dom = e->kind == NS_ENCODER_WL && e->wl.domain_name ? e->wl.domain_name : "";
    if (self->kind == 1)
        return Py_BuildValue("{s:s,s:s,s:s,s:i,s:d,s:l,s:i,s:d,s:s,s:i}", "model", "hwl", "encoder", "wl",
                             "domain_name", dom, "dim", self->h.dim, "lambda", self->h.lambda, "train_rows",
                             self->h.rows, "train_problems", self->h.problems, "train_rmse", self->h.rmse, "algo",
                             ns_planner_algo_name(ns_plan_heuristic_algo(&self->h, NS_PLAN_BEAM)), "rank",
                             self->h.rank);
    const ns_predictor *p = &self->p;
    return Py_BuildValue("{s:s,s:s,s:s,s:s,s:i,s:l,s:i,s:d,s:l,s:l}", "model", ns_predictor_kind_name(p->kind), "mode",
                         ns_predictor_mode_name(p->mode), "encoder", ns_encoder_kind_name(p->enc.kind), "domain_name",
                         dom, "dim", p->dim, "size", ns_predictor_size(p), "best_epoch", p->best_epoch, "best_val",
                         p->best_val, "train_rows", p->train_rows, "val_rows", p->val_rows);
}

static PyObject *model_save(ModelObject *self, PyObject *args)
{
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path) || !model_ready(self)) return NULL;
    ns_error err;
    ns_error_clear(&err);
    ns_status st;
    Py_BEGIN_ALLOW_THREADS
    st = self->kind == 1 ? ns_hwl_save(&self->h, path, &err) : ns_predictor_save(&self->p, path, &err);
    Py_END_ALLOW_THREADS
    if (st != NS_OK) return raise_ns(&err);
    Py_RETURN_NONE;
}

/* _plan(task, algo, width, max_steps, time_limit, memory_limit, raw_plan, fallback) -> dict, as
 * `nextstate plan` plans one problem (its plan checked with γ). */
static PyObject *model_plan(ModelObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"task",         "algo",     "width",    "max_steps", "time_limit",
                             "memory_limit", "raw_plan", "fallback", NULL};
    PyObject *to;
    const char *algo = NULL;
    ns_planner_opts o;
    ns_planner_opts_default(&o);
    o.fallback = NS_PLAN_FALLBACK;
    Py_ssize_t ml = 0;
    int raw = 0;
    PyObject *fb = Py_None; /* None: NS_PLAN_FALLBACK */
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|ziidnpO", kwlist, &to, &algo, &o.width, &o.max_steps, &o.time_limit,
                                     &ml, &raw, &fb))
        return NULL;
    if (fb != Py_None && (o.fallback = PyFloat_AsDouble(fb)) == -1.0 && PyErr_Occurred()) return NULL;
    o.raw_plan = raw != 0;
    if (!model_ready(self)) return NULL;
    TaskObject *t = as_task(to);
    if (!t) return NULL;
    if (o.width < 1 || o.max_steps < 0 || ml < 0 || !(o.fallback >= 0 && o.fallback < 1))
        return PyErr_Format(PyExc_ValueError,
                            "width must be >= 1, max_steps and memory_limit >= 0, fallback in [0, 1)");
    o.memory_limit = (size_t)ml;
    const char *name;
    if (self->kind == 1) {
        int a = algo ? ns_planner_algo_parse(algo) : NS_PLAN_BEAM;
        if (a < 0 || (algo && (a == NS_PLAN_BEAM || a == NS_PLAN_RESTART)))
            return PyErr_Format(PyExc_ValueError,
                                "a learned heuristic plans with algo 'lama' (h in LAMA-first's search beside h^FF "
                                "and h^LM), 'lama-h' (in h^FF's place), 'guided' (GBFS on h, h^FF's helpful actions "
                                "preferred) or 'search' (GBFS on h alone), not '%s'; the default is the model's own "
                                "choice, made when it was learned", algo);
        o.algo = ns_plan_heuristic_algo(&self->h, (ns_planner_algo)a);
        name = ns_plan_heuristic_name(&self->h, o.algo);
    } else {
        if (algo) {
            int a = ns_planner_algo_parse(algo);
            if (a < 0 || a == NS_PLAN_LAMA || a == NS_PLAN_LAMA_H)
                return PyErr_Format(PyExc_ValueError, "unknown algo '%s' (beam, restart, search or guided)", algo);
            o.algo = (ns_planner_algo)a;
        }
        name = ns_planner_algo_name(o.algo);
    }
    ns_planner_result r;
    memset(&r, 0, sizeof r);
    ns_error err;
    ns_error_clear(&err);
    ns_status st;
    Py_BEGIN_ALLOW_THREADS
    st = self->kind == 1 ? ns_plan_heuristic(&self->h, &t->t, &o, &r, &err)
                         : ns_plan_learned(&self->p, &t->t, &o, &r, &err);
    if (st == NS_OK && !ns_plan_ops_valid(&t->t, r.plan, r.plan_len))
        st = ns_error_set(&err, NS_ERR_INTERNAL, t->p.path, 0, 0, "the learned planner returned an invalid plan");
    Py_END_ALLOW_THREADS
    if (st != NS_OK && st != NS_INCOMPLETE && st != NS_UNSOLVABLE && st != NS_OUT_OF_TIME && st != NS_OUT_OF_MEMORY) {
        ns_planner_result_free(&r);
        return raise_ns(&err);
    }
    int n = st == NS_OK && r.plan ? r.plan_len : 0;
    PyObject *plan = PyList_New(n);
    for (int i = 0; plan && i < n; i++) PyList_SET_ITEM(plan, i, PyLong_FromLong(r.plan[i]));
    PyObject *out = plan ? Py_BuildValue("{s:s,s:O,s:N,s:i,s:s,s:i,s:l,s:l,s:i,s:O,s:l,s:d,s:d}", "status",
                                         ns_status_name(st), "solved", st == NS_OK ? Py_True : Py_False, "plan", plan,
                                         "plan_length", st == NS_OK ? r.plan_len : -1, "algo", name, "width", r.width,
                                         "expanded", r.expanded, "predictions", r.predictions, "eliminated",
                                         r.eliminated, "classical", r.classical ? Py_True : Py_False, "work",
                                         r.work, "seconds", r.seconds, "model_seconds", r.model_seconds)
                         : NULL;
    ns_planner_result_free(&r);
    return out;
}

/* _h_into(task, states, out float64 [n]): h(s) = w·φ(s) + b of a learned
 * heuristic for each state (the value search orders by, before its clamp
 * at 0 and rounding to thousandths). */
static PyObject *model_h_into(ModelObject *self, PyObject *args)
{
    PyObject *to, *so, *oo;
    if (!PyArg_ParseTuple(args, "OOO", &to, &so, &oo) || !model_ready(self)) return NULL;
    if (self->kind != 1)
        return PyErr_Format(PyExc_TypeError, "a %s next-state model has no heuristic value (learn model='hwl')",
                            model_kind_name(self));
    TaskObject *t = as_task(to);
    if (!t) return NULL;
    Py_buffer v, w;
    Py_ssize_t n;
    if (!get_states(t, so, &v, &n, 0)) return NULL;
    if (PyObject_GetBuffer(oo, &w, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0) { PyBuffer_Release(&v); return NULL; }
    if (w.len != (Py_ssize_t)((size_t)n * sizeof(double))) {
        PyBuffer_Release(&w);
        PyBuffer_Release(&v);
        return PyErr_Format(PyExc_ValueError, "output buffer has the wrong size");
    }
    const ns_hwl *h = &self->h;
    ns_encoder e;
    ns_error err;
    ns_error_clear(&err);
    if (ns_encoder_init(&e, &h->enc, &t->t, &err) != NS_OK) {
        PyBuffer_Release(&w);
        PyBuffer_Release(&v);
        return raise_ns(&err);
    }
    float *phi = malloc(sizeof(float) * ((size_t)h->dim + 1));
    if (phi) {
        double *out = w.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t r = 0; r < n; r++) {
            ns_encoder_state(&e, (const ns_word *)v.buf + (size_t)r * (size_t)t->t.nwords, phi);
            out[r] = ns_hwl_predict(h, phi);
        }
        Py_END_ALLOW_THREADS
    }
    free(phi);
    ns_encoder_free(&e);
    PyBuffer_Release(&w);
    PyBuffer_Release(&v);
    if (!phi) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PyMethodDef model_methods[] = {
    {"info", (PyCFunction)model_info, METH_NOARGS, "info() -> dict: kind, encoder, dimension, training record."},
    {"save", (PyCFunction)model_save, METH_VARARGS, "save(path): writes the model file."},
    {"_plan", (PyCFunction)(void (*)(void))model_plan, METH_VARARGS | METH_KEYWORDS,
     "internal: plan(task, algo, width, max_steps, time_limit, memory_limit) -> dict."},
    {"_h_into", (PyCFunction)model_h_into, METH_VARARGS, "internal: heuristic values into a float64 buffer."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject ModelType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "nextstate._core.Model",
    .tp_doc = "A learned model (low level; use nextstate.learn / nextstate.load_model).",
    .tp_basicsize = sizeof(ModelObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)model_dealloc,
    .tp_methods = model_methods,
};

static ModelObject *model_new(PyObject *cls)
{
    if (!cls || cls == Py_None) cls = (PyObject *)&ModelType;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &ModelType)) {
        PyErr_SetString(PyExc_TypeError, "cls must be a subclass of nextstate._core.Model");
        return NULL;
    }
    return (ModelObject *)PyObject_CallNoArgs(cls);
}

/* learn(domain, train_dir, model, …, cls=None) -> (Model, dict): as
 * `nextstate learn` (trajectories from a plan folder or solved, then the
 * heuristic or the predictor); the dict is what `learn --json` prints. */
static PyObject *mod_learn(PyObject *Py_UNUSED(m), PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"domain", "train_dir", "model", "plans", "val_dir", "val_plans", "encoder", "mode",
                             "iterations", "statics", "lambda_", "lr", "epochs", "hidden", "layers", "batch", "seed",
                             "rounds", "depth", "threads", "max_objects", "solve_time_limit", "solve_memory_limit",
                             "optimal_only", "cls", "rank", "choose", "bootstrap", "jobs", "solve_work", NULL};
    const char *dom, *dir, *model = "hwl", *plans = NULL, *val_dir = NULL, *val_plans = NULL, *encs = "wl",
                                       *modes = NULL;
    ns_predictor_config c;
    ns_predictor_config_init(&c);
    ns_hwl_config hc;
    ns_hwl_config_init(&hc);
    int iterations = 2, statics = 1, maxobj = 0, optimal_only = 0, bootstrap = 0, jobs = 1;
    unsigned long long seed = c.seed;
    double solve_limit = 60, solve_memory = 4096;
    long long solve_work = -1; /* -1: NS_TRAJ_SOLVE_WORK */
    PyObject *cls = NULL;
    ns_choose_opts co;
    ns_choose_opts_default(&co);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "ss|szzzszipddiiiiKiiiiddpOiipiL", kwlist, &dom, &dir, &model, &plans,
                                     &val_dir, &val_plans, &encs, &modes, &iterations, &statics, &hc.lambda, &c.lr,
                                     &c.epochs, &c.hidden, &c.layers, &c.batch, &seed, &c.xgb.max_rounds,
                                     &c.xgb.max_depth, &c.xgb.nthread, &maxobj, &solve_limit, &solve_memory,
                                     &optimal_only, &cls, &hc.rank, &co.problems, &bootstrap, &jobs, &solve_work))
        return NULL;
    if (hc.rank < 0 || co.problems < 0 || solve_work < -1)
        return PyErr_Format(PyExc_ValueError, "rank, choose and solve_work must be >= 0");
    if (solve_work == -1) solve_work = NS_TRAJ_SOLVE_WORK;
    if (!(solve_limit > 0) || !isfinite(solve_limit) || !(solve_memory > 0) || !isfinite(solve_memory)) /* as the CLI */
        return PyErr_Format(PyExc_ValueError, "solve_time_limit and solve_memory_limit must be > 0");
    bool hwl = !strcmp(model, "hwl");
    int k = ns_predictor_kind_parse(model);
    if (!hwl && k < 0) return PyErr_Format(PyExc_ValueError, "model must be 'hwl', 'xgb' or 'lstm', not '%s'", model);
    int enc = ns_encoder_kind_parse(encs);
    if (enc < 0) return PyErr_Format(PyExc_ValueError, "encoder must be 'wl' or 'fsf', not '%s'", encs);
    if (hwl && enc != NS_ENCODER_WL) return PyErr_Format(PyExc_ValueError, "a learned heuristic uses the wl encoder");
    if (modes) {
        int md = ns_predictor_mode_parse(modes);
        if (md < 0) return PyErr_Format(PyExc_ValueError, "mode must be 'state' or 'delta', not '%s'", modes);
        c.mode = (ns_predictor_mode)md;
    }
    if (iterations < 0) /* None in Python: the learned heuristic tries 2 and 4 (ns_choose_opts), the others take 2 */
        iterations = 2;
    else
        co.niter = 0;
    if (maxobj < 0 || c.epochs < 0 || c.hidden < 0 || c.layers < 0 || c.batch < 0 ||
        c.xgb.max_rounds < 0 || c.xgb.max_depth < 0 || c.xgb.nthread < 0)
        return PyErr_Format(PyExc_ValueError, "counts (iterations, epochs, hidden, layers, …) must be >= 0");
    if (!(hc.lambda >= 0) || !(c.lr > 0)) return PyErr_Format(PyExc_ValueError, "lambda_ must be >= 0 and lr > 0");
    if (val_plans && !val_dir) return PyErr_Format(PyExc_ValueError, "val_plans needs val_dir");
    if (!hwl) c.kind = (ns_predictor_kind)k;
    c.seed = (uint64_t)seed;
    c.progress = false;
    hc.iterations = iterations;
    hc.statics = statics;
    ModelObject *mo = model_new(cls);
    if (!mo) return NULL;

    ns_error err;
    ns_error_clear(&err);
    ns_trajset tr, va;
    memset(&tr, 0, sizeof tr);
    memset(&va, 0, sizeof va);
    ns_encoder_spec spec;
    memset(&spec, 0, sizeof spec);
    ns_traj_opts to = {.plan_dir = plans, .time_limit = solve_limit, .max_work = (long)solve_work,
                       .satisficing = !optimal_only, .memory_limit = (size_t)(solve_memory * 1048576.0)};
    to.jobs = co.jobs = jobs >= 0 ? jobs : ns_traj_jobs(&to); /* as `learn` */
    ns_status st;
    double secs = 0, val = NAN;
    Py_BEGIN_ALLOW_THREADS
    st = ns_trajset_load(&tr, dom, dir, &to, &err);
    if (st == NS_OK && val_dir) {
        ns_traj_opts vo = to;
        vo.plan_dir = val_plans;
        st = ns_trajset_load(&va, dom, val_dir, &vo, &err);
    }
    if (st == NS_OK && hwl) {
        double t0 = ns_cpu_with_children();
        hc.seed = (uint64_t)seed;
        co.bootstrap = optimal_only || !bootstrap ? 0 : solve_limit; /* as `learn --bootstrap` */
        co.bootstrap_memory = (size_t)(solve_memory * 1048576.0);
        st = ns_hwl_learn(&mo->h, &tr, dom, dir, &hc, &co, &err);
        secs = ns_cpu_with_children() - t0;
        if (st == NS_OK) {
            mo->kind = 1;
            if (va.n > 0) st = ns_hwl_rmse(&mo->h, &va, &val, &err);
        }
    } else if (st == NS_OK) {
        if (maxobj <= 0 && enc == NS_ENCODER_FSF) { /* slots for every training and validation problem */
            maxobj = ns_trajset_max_objects(&tr);
            if (val_dir && ns_trajset_max_objects(&va) > maxobj) maxobj = ns_trajset_max_objects(&va);
        }
        st = enc == NS_ENCODER_WL ? ns_encoder_spec_fit_wl(&spec, &tr, iterations, statics, &err)
                                  : ns_encoder_spec_fsf(&spec, &tr, maxobj, &err);
        if (st == NS_OK) {
            st = ns_predictor_train(&mo->p, &spec, &tr, val_dir ? &va : NULL, &c, &err);
            mo->kind = 2; /* ns_predictor_free is safe on what train leaves, even on failure */
        }
    }
    Py_END_ALLOW_THREADS
    PyObject *info = NULL;
    if (st == NS_OK && hwl)
        info = Py_BuildValue("{s:s,s:s,s:i,s:i,s:l,s:i,s:d,s:d,s:d,s:i,s:i,s:i,s:s,s:i,s:i,s:l}", "model", "hwl",
                             "encoder", "wl", "dim", mo->h.dim, "train_problems", tr.n, "train_rows", mo->h.rows,
                             "val_problems", va.n, "train_rmse", mo->h.rmse, "val_rmse", val, "seconds", secs,
                             "unsolved", tr.unsolved, "satisficing", tr.satisficing, "time_capped", tr.time_capped,
                             "algo", ns_planner_algo_name(ns_plan_heuristic_algo(&mo->h, NS_PLAN_BEAM)),
                             "choice_time_capped", mo->h.choice.time_capped, "rank", mo->h.rank, "pairs", mo->h.pairs);
    else if (st == NS_OK)
        info = Py_BuildValue("{s:s,s:s,s:s,s:i,s:i,s:l,s:i,s:l,s:l,s:i,s:d,s:K,s:d,s:i,s:i,s:i}", "model",
                             ns_predictor_kind_name(mo->p.kind), "mode", ns_predictor_mode_name(mo->p.mode), "encoder",
                             ns_encoder_kind_name(mo->p.enc.kind), "dim", mo->p.dim, "train_problems", tr.n,
                             "train_rows", mo->p.train_rows, "val_problems", va.n, "val_rows", mo->p.val_rows, "size",
                             ns_predictor_size(&mo->p), "best_epoch", mo->p.best_epoch, "best_val", mo->p.best_val,
                             "seed", (unsigned long long)c.seed, "seconds", mo->p.train_seconds, "unsolved",
                             tr.unsolved, "satisficing", tr.satisficing, "time_capped", tr.time_capped);
    ns_encoder_spec_free(&spec);
    ns_trajset_free(&tr);
    ns_trajset_free(&va);
    if (st != NS_OK) {
        Py_DECREF(mo);
        return raise_ns(&err);
    }
    if (!info) {
        Py_DECREF(mo);
        return NULL;
    }
    return Py_BuildValue("(NN)", (PyObject *)mo, info);
}

/* load_model(path, cls=None) -> Model: a learned heuristic or a predictor,
 * told apart as `nextstate plan` does. */
static PyObject *mod_load_model(PyObject *Py_UNUSED(m), PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path", "cls", NULL};
    const char *path;
    PyObject *cls = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|O", kwlist, &path, &cls)) return NULL;
    ModelObject *mo = model_new(cls);
    if (!mo) return NULL;
    ns_error err;
    ns_error_clear(&err);
    ns_status st;
    bool hwl;
    Py_BEGIN_ALLOW_THREADS
    hwl = ns_hwl_sniff(path);
    st = hwl ? ns_hwl_load(&mo->h, path, &err) : ns_predictor_load(&mo->p, path, &err);
    Py_END_ALLOW_THREADS
    if (st != NS_OK) {
        Py_DECREF(mo);
        return raise_ns(&err);
    }
    mo->kind = hwl ? 1 : 2;
    return (PyObject *)mo;
}

/* train_world(split_dir, out, …) -> str: `nextstate train` (ns_world_fit);
 * the checkpoint's "train" object as JSON text (what `train --json` prints). */
static PyObject *mod_train_world(PyObject *Py_UNUSED(m), PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"split_dir", "out", "model", "layers", "hidden", "out_dim", "t_hidden", "lr",
                             "weight_decay", "tau", "action_weight", "time_limit", "warmup_start", "batch", "epochs",
                             "steps", "min_steps", "warmup", "seed", "action_k", "action_loss", "eval_every",
                             "patience", "dev_pool", "state_features", "action_features", "standardize", "log",
                             NULL};
    ns_fit_opts fo;
    ns_fit_opts_init(&fo);
    ns_world_config *cfg = &fo.cfg;
    ns_train_opts *o = &fo.train;
    const char *split_dir, *out, *kind = NULL, *action_loss = NULL;
    int hidden = 0;
    double tau = o->tau, action_weight = o->action_weight;
    long long steps = o->steps, min_steps = o->min_steps;
    unsigned long long seed = o->seed;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "ss|ziiiiddddddiiLLiKiziiizzzz", kwlist, &split_dir, &out, &kind,
                                     &cfg->layers, &hidden, &cfg->out, &cfg->t_hidden, &o->lr, &o->weight_decay, &tau,
                                     &action_weight, &o->time_limit, &o->warmup_start, &o->batch, &o->epochs, &steps,
                                     &min_steps, &o->warmup_epochs, &seed, &o->action_k, &action_loss, &o->eval_every,
                                     &o->patience, &o->dev_pool, &fo.state_spec, &fo.action_spec, &fo.standardize,
                                     &fo.log_path))
        return NULL;
    if (kind) {
        int k = ns_world_kind_parse(kind);
        if (k < 0) return PyErr_Format(PyExc_ValueError, "model must be 'resmlp' or 'film', not '%s'", kind);
        cfg->kind = (ns_world_kind)k;
    }
    if (cfg->layers < 1 || cfg->layers > NS_WORLD_MAX_LAYERS)
        return PyErr_Format(PyExc_ValueError, "layers must be 1 … %d", NS_WORLD_MAX_LAYERS);
    if (hidden < 0 || cfg->out < 1 || cfg->t_hidden < 0 || o->batch < 1 || o->epochs < 0 || steps < 0 ||
        min_steps < 0 || o->warmup_epochs < 0 || o->action_k < 0 || o->eval_every < 1 || o->patience < 0 ||
        o->dev_pool < 2)
        return PyErr_Format(PyExc_ValueError, "a size or count is out of range (see `nextstate help train`)");
    if (!(o->lr > 0) || !(tau > 0) || !(o->weight_decay >= 0) || !(action_weight >= 0) || !(o->time_limit >= 0) ||
        !(o->warmup_start >= 0))
        return PyErr_Format(PyExc_ValueError, "lr and tau must be > 0; weight_decay, action_weight, time_limit and "
                                              "warmup_start >= 0");
    o->tau = (float)tau;
    o->action_weight = (float)action_weight;
    if (action_loss) {
        if (!strcmp(action_loss, "list")) o->action_grid = false;
        else if (!strcmp(action_loss, "grid")) o->action_grid = true;
        else if (!strcmp(action_loss, "none")) o->action_weight = 0;
        else return PyErr_Format(PyExc_ValueError, "action_loss must be 'list', 'grid' or 'none', not '%s'", action_loss);
    }
    o->steps = steps;
    o->min_steps = min_steps;
    o->seed = (uint64_t)seed;
    o->progress = false;
    cfg->state_hidden = cfg->action_hidden = hidden;
    ns_error err;
    ns_error_clear(&err);
    ns_fit_result r;
    memset(&r, 0, sizeof r);
    ns_status st;
    Py_BEGIN_ALLOW_THREADS
    st = ns_world_fit(split_dir, &fo, out, &r, &err);
    Py_END_ALLOW_THREADS
    if (st != NS_OK) return raise_ns(&err);
    PyObject *s = PyUnicode_FromString(r.json ? r.json : "{}");
    ns_fit_result_free(&r);
    return s;
}

/* evaluate_world(model, split_dir, …) -> str: `nextstate eval --json`
 * (ns_eval_report, ns_report_json). */
static PyObject *mod_evaluate_world(PyObject *Py_UNUSED(m), PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"model", "split_dir", "on", "seed", "latency", "acc", "bf16", "pool_sweep", "rollout",
                             "rollout_pool", "state_features", "action_features", NULL};
    const char *model, *split_dir, *on = "test";
    ns_report_opts ro;
    ns_report_opts_init(&ro);
    ns_eval_opts *eo = &ro.eval;
    unsigned long long seed = eo->seed;
    int acc = eo->acc, bf16 = 0, rollout = 0;
    PyObject *sweep = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "ss|sKippOpizz", kwlist, &model, &split_dir, &on, &seed,
                                     &eo->latency_queries, &acc, &bf16, &sweep, &rollout, &ro.rollout_pool,
                                     &ro.state_spec, &ro.action_spec))
        return NULL;
    if (strcmp(on, "test") && strcmp(on, "dev")) return PyErr_Format(PyExc_ValueError, "on must be 'test' or 'dev'");
    if (eo->latency_queries < 0) return PyErr_Format(PyExc_ValueError, "latency must be >= 0");
    if (ro.rollout_pool != 0 && (ro.rollout_pool < 2 || ro.rollout_pool > 1000000000))
        return PyErr_Format(PyExc_ValueError, "rollout_pool must be a pool size >= 2");
    int *sizes = NULL;
    if (sweep && sweep != Py_None) {
        PyObject *seq = PySequence_Fast(sweep, "pool_sweep expects a sequence of pool sizes (0: full)");
        if (!seq) return NULL;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        sizes = malloc(sizeof(int) * (size_t)(n ? n : 1));
        if (!sizes) { Py_DECREF(seq); return PyErr_NoMemory(); }
        for (Py_ssize_t i = 0; i < n; i++) {
            long x = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
            if ((x == -1 && PyErr_Occurred()) || x == 1 || x < 0 || x > 1000000000L) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "pool sizes must be >= 2 (0: full)");
                free(sizes);
                Py_DECREF(seq);
                return NULL;
            }
            sizes[i] = (int)x;
        }
        ro.nsweep = (int)n;
        Py_DECREF(seq);
    }
    ro.sweep = sizes;
    ro.dev = !strcmp(on, "dev");
    ro.bf16 = bf16;
    ro.rollout = rollout || ro.rollout_pool > 0;
    eo->seed = (uint64_t)seed;
    eo->acc = acc;
    eo->progress = false;
    ns_error err;
    ns_error_clear(&err);
    ns_report rep;
    ns_status st;
    ns_buf b;
    ns_buf_init(&b);
    Py_BEGIN_ALLOW_THREADS
    st = ns_eval_report(split_dir, model, &ro, &rep, &err);
    if (st == NS_OK) {
        ns_report_json(&rep, &b);
        ns_report_free(&rep);
    }
    Py_END_ALLOW_THREADS
    free(sizes);
    PyObject *s = st == NS_OK ? PyUnicode_FromStringAndSize(b.data ? b.data : "", (Py_ssize_t)b.len) : raise_ns(&err);
    ns_buf_free(&b);
    return s;
}

/* ---------------------------------------------------------------- module */

static PyObject *mod_generate(PyObject *Py_UNUSED(m), PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"domain", "options", "seed", "name", NULL};
    const char *dom, *name = "problem";
    PyObject *opts = NULL;
    unsigned long long seed = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|OKs", kwlist, &dom, &opts, &seed, &name)) return NULL;
    ns_gen_arg ga[32];
    int na = 0;
    PyObject *items = opts && opts != Py_None ? PyMapping_Items(opts) : PyList_New(0);
    if (!items) return NULL;
    Py_ssize_t ni = PyList_GET_SIZE(items);
    if (ni > 32) { Py_DECREF(items); return PyErr_Format(PyExc_ValueError, "too many generator options"); }
    for (Py_ssize_t i = 0; i < ni; i++) {
        PyObject *it = PyList_GET_ITEM(items, i);
        const char *k = PyUnicode_AsUTF8(PyTuple_GET_ITEM(it, 0));
        long v = PyLong_AsLong(PyTuple_GET_ITEM(it, 1));
        if (!k || (v == -1 && PyErr_Occurred())) { Py_DECREF(items); return NULL; }
        if (v < INT32_MIN || v > INT32_MAX) { Py_DECREF(items); return PyErr_Format(PyExc_ValueError, "option %s out of range", k); }
        ga[na].name = k;
        ga[na].value = (int)v;
        na++;
    }
    ns_buf b;
    ns_buf_init(&b);
    ns_error err;
    ns_error_clear(&err);
    ns_status st = ns_gen_problem(dom, ga, na, (uint64_t)seed, name, &b, &err);
    Py_DECREF(items);
    PyObject *out = st == NS_OK ? buf_str(&b) : raise_ns(&err);
    ns_buf_free(&b);
    return out;
}

static PyObject *mod_gen_domains(PyObject *Py_UNUSED(m), PyObject *Py_UNUSED(a))
{
    PyObject *out = PyList_New(0);
    for (const char *const *d = ns_gen_domains(); out && *d; d++) {
        PyObject *s = PyUnicode_FromString(*d);
        if (!s || PyList_Append(out, s) != 0) Py_CLEAR(out);
        Py_XDECREF(s);
    }
    return out;
}

static PyObject *mod_gen_options(PyObject *Py_UNUSED(m), PyObject *arg)
{
    const char *dom = PyUnicode_AsUTF8(arg);
    if (!dom) return NULL;
    const ns_gen_option *o = ns_gen_options(dom);
    if (!o) return PyErr_Format(PyExc_ValueError, "no generator for domain '%s'", dom);
    PyObject *out = PyList_New(0);
    for (; out && o->name; o++) {
        PyObject *t = Py_BuildValue("{s:s,s:i,s:i,s:s}", "name", o->name, "default", o->def, "min", o->min, "help",
                                    o->help ? o->help : "");
        if (!t || PyList_Append(out, t) != 0) Py_CLEAR(out);
        Py_XDECREF(t);
    }
    return out;
}

static PyMethodDef mod_methods[] = {
    {"generate", (PyCFunction)(void (*)(void))mod_generate, METH_VARARGS | METH_KEYWORDS,
     "generate(domain, options=None, seed=1, name='problem') -> str: a PDDL problem."},
    {"gen_domains", mod_gen_domains, METH_NOARGS, "gen_domains() -> list[str]."},
    {"gen_options", mod_gen_options, METH_O, "gen_options(domain) -> list[dict]."},
    {"learn", (PyCFunction)(void (*)(void))mod_learn, METH_VARARGS | METH_KEYWORDS,
     "learn(domain, train_dir, model='hwl', …) -> (Model, dict): as `nextstate learn`."},
    {"load_model", (PyCFunction)(void (*)(void))mod_load_model, METH_VARARGS | METH_KEYWORDS,
     "load_model(path, cls=None) -> Model: a learned heuristic or next-state model file."},
    {"train_world", (PyCFunction)(void (*)(void))mod_train_world, METH_VARARGS | METH_KEYWORDS,
     "train_world(split_dir, out, …) -> str: as `nextstate train --json` (JSON text)."},
    {"evaluate_world", (PyCFunction)(void (*)(void))mod_evaluate_world, METH_VARARGS | METH_KEYWORDS,
     "evaluate_world(model, split_dir, …) -> str: as `nextstate eval --json` (JSON text)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef core_module = {PyModuleDef_HEAD_INIT, "nextstate._core",
                                         "The C core of nextstate (see the nextstate package).", -1, mod_methods,
                                         NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void)
{
    if (PyType_Ready(&TaskType) < 0 || PyType_Ready(&WLType) < 0 || PyType_Ready(&ModelType) < 0) return NULL;
    PyObject *m = PyModule_Create(&core_module);
    if (!m) return NULL;
    NsError = PyErr_NewExceptionWithDoc("nextstate.NextstateError",
                                        "A library error; str() is 'file:line:col: message'; attributes status, "
                                        "code, file, line, col, msg.",
                                        NULL, NULL);
    if (!NsError || PyModule_AddObject(m, "NextstateError", NsError) < 0) return NULL;
    Py_INCREF(NsError);
    Py_INCREF(&TaskType);
    if (PyModule_AddObject(m, "Task", (PyObject *)&TaskType) < 0) return NULL;
    Py_INCREF(&WLType);
    if (PyModule_AddObject(m, "WLVocab", (PyObject *)&WLType) < 0) return NULL;
    Py_INCREF(&ModelType);
    if (PyModule_AddObject(m, "Model", (PyObject *)&ModelType) < 0) return NULL;
    return m;
}
