/*
 * options.c - keyword options onto mbs_sim_options, mbs_sens_options and
 * mbs_opt_options. Each option is one row of a table (name, kind, member);
 * the Python names are the C member names, except:
 *   formulation   'fr' | 'semi' (forward dynamics of open trees) or
 *                 'ali3p' | 'matrixr' | 'penalty' | 'index1' (closed
 *                 loops), as the command line's --formulation;
 *   tangent       'analytic' | 'fd' (the trapezoidal Newton tangent);
 *   dofs          Matrix R's independent coordinates: coordinate indices
 *                 or (point index, component) pairs;
 *   method        (optimize) a gradient method, None: chosen automatically.
 * Values are type-checked (a float for a float, an int for an int, True or
 * False for a flag, one of the names for a choice) and numbers must be
 * finite; the ranges are the library's checks. None means "not given".
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "mbspy.h"

enum { K_DOUBLE, K_INT, K_LONG, K_BOOL, K_ENUM };

typedef struct {
    const char *name;
    int kind;
    size_t off;
    int (*from)(const char *);
    const char *(*to)(int);
    const char *choices;
} opt_def;

_Static_assert(sizeof(mbs_ref_point) == sizeof(int) && sizeof(mbs_integrator_type) == sizeof(int) &&
               sizeof(mbs_sens_method) == sizeof(int) && sizeof(mbs_opt_algorithm) == sizeof(int),
               "the enums are stored as int");

#define NAME_FN(fn, type) static const char *fn##_i(int v) { return fn((type)v); }
NAME_FN(mbs_ref_point_name, mbs_ref_point)
NAME_FN(mbs_integrator_name, mbs_integrator_type)
NAME_FN(mbs_nl_solver_name, mbs_nl_solver)
NAME_FN(mbs_tangent_update_name, mbs_tangent_update)
NAME_FN(mbs_cvodes_method_name, mbs_cvodes_method)
NAME_FN(mbs_projection_name, mbs_projection)
NAME_FN(mbs_sens_method_name, mbs_sens_method)
NAME_FN(mbs_opt_algorithm_name, mbs_opt_algorithm)
NAME_FN(mbs_opt_scaling_name, mbs_opt_scaling)

#define S(member) offsetof(mbs_sim_options, member)
static const opt_def SIM[] = {
    { "ref", K_ENUM, S(ref), mbs_ref_point_from_name, mbs_ref_point_name_i, "'com', 'origin' or 'joint'" },
    { "integrator", K_ENUM, S(integrator), mbs_integrator_from_name, mbs_integrator_name_i,
      "'trapezoidal', 'rk4' or 'cvodes'" },
    { "solver", K_ENUM, S(solver), mbs_nl_solver_from_name, mbs_nl_solver_name_i, "'newton' or 'fixedpoint'" },
    { "t0", K_DOUBLE, S(t0), NULL, NULL, NULL },
    { "dt", K_DOUBLE, S(dt), NULL, NULL, NULL },
    { "tf", K_DOUBLE, S(tf), NULL, NULL, NULL },
    { "tolerance", K_DOUBLE, S(tolerance), NULL, NULL, NULL },
    { "max_iterations", K_INT, S(max_iterations), NULL, NULL, NULL },
    { "tangent_update", K_ENUM, S(tangent_update), mbs_tangent_update_from_name, mbs_tangent_update_name_i,
      "'iteration' or 'step'" },
    { "rtol", K_DOUBLE, S(rtol), NULL, NULL, NULL },
    { "atol", K_DOUBLE, S(atol), NULL, NULL, NULL },
    { "cvodes_method", K_ENUM, S(cvodes_method), mbs_cvodes_method_from_name, mbs_cvodes_method_name_i,
      "'bdf' or 'adams'" },
    { "cvodes_max_steps", K_LONG, S(cvodes_max_steps), NULL, NULL, NULL },
    { "project", K_BOOL, S(project), NULL, NULL, NULL },
    { "penalty", K_DOUBLE, S(penalty), NULL, NULL, NULL },
    { "proj_scale", K_DOUBLE, S(proj_scale), NULL, NULL, NULL },
    { "projection", K_ENUM, S(projection), mbs_projection_from_name, mbs_projection_name_i,
      "'penalty' or 'iterative'" },
    { "proj_tol", K_DOUBLE, S(proj_tol), NULL, NULL, NULL },
    { "lambda_factor", K_DOUBLE, S(lambda_factor), NULL, NULL, NULL },
    { "tangent_keep", K_BOOL, S(tangent_keep), NULL, NULL, NULL },
    { "omega", K_DOUBLE, S(omega), NULL, NULL, NULL },
    { "xi", K_DOUBLE, S(xi), NULL, NULL, NULL },
    { "baumgarte", K_BOOL, S(baumgarte), NULL, NULL, NULL },
};
#undef S

#define E(member) offsetof(mbs_sens_options, member)
static const opt_def SENS[] = {
    { "method", K_ENUM, E(method), mbs_sens_method_from_name, mbs_sens_method_name_i,
      "'ddm', 'davm', 'cavm', 'fd' or 'cs'" },
    { "fd_step", K_DOUBLE, E(fd_step), NULL, NULL, NULL },
};
#undef E

#define P(member) offsetof(mbs_opt_options, member)
static const opt_def OPT[] = {
    { "algorithm", K_ENUM, P(algorithm), mbs_opt_algorithm_from_name, mbs_opt_algorithm_name_i,
      "'lbfgs', 'slsqp' or 'mma'" },
    { "objective", K_INT, P(objective), NULL, NULL, NULL },
    { "max_iter", K_INT, P(max_iter), NULL, NULL, NULL },
    { "max_eval", K_INT, P(max_eval), NULL, NULL, NULL },
    { "xtol", K_DOUBLE, P(xtol), NULL, NULL, NULL },
    { "ftol", K_DOUBLE, P(ftol), NULL, NULL, NULL },
    { "pgtol", K_DOUBLE, P(pgtol), NULL, NULL, NULL },
    { "scaling", K_ENUM, P(scaling), mbs_opt_scaling_from_name, mbs_opt_scaling_name_i,
      "'value', 'bounds' or 'none'" },
    { "lbfgs_memory", K_INT, P(lbfgs_memory), NULL, NULL, NULL },
    { "max_failures", K_INT, P(max_failures), NULL, NULL, NULL },
    { "continuation", K_BOOL, P(continuation), NULL, NULL, NULL },
    { "continuation_start", K_DOUBLE, P(continuation_start), NULL, NULL, NULL },
    { "continuation_step", K_DOUBLE, P(continuation_step), NULL, NULL, NULL },
};
#undef P

#define COUNT(t) ((int)(sizeof t / sizeof t[0]))

void opt_mem_free(opt_mem *mem)
{
    PyMem_Free(mem->dofs);
    PyMem_Free(mem->weights);
    PyMem_Free(mem->fixed);
    memset(mem, 0, sizeof *mem);
}

/* ---------------------------------------------------------------- one value */

static int set_value(const opt_def *d, PyObject *v, char *base)
{
    void *p = base + d->off;
    if (d->kind == K_DOUBLE) return arg_double(v, d->name, p);
    if (d->kind == K_BOOL) {
        if (!PyBool_Check(v)) {
            PyErr_Format(PyExc_TypeError, "%s: expected True or False, not %.100s", d->name, Py_TYPE(v)->tp_name);
            return -1;
        }
        *(int *)p = v == Py_True;
        return 0;
    }
    if (d->kind == K_ENUM) {
        const char *s = arg_str(v, d->name);
        int k = s ? d->from(s) : -1;
        if (s && k < 0) PyErr_Format(PyExc_ValueError, "%s: expected %s, got '%s'", d->name, d->choices, s);
        if (k < 0) return -1;
        *(int *)p = k;
        return 0;
    }
    if (PyBool_Check(v) || !PyLong_Check(v)) {
        PyErr_Format(PyExc_TypeError, "%s: expected an int, not %.100s", d->name, Py_TYPE(v)->tp_name);
        return -1;
    }
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred()) return -1;
    if (d->kind == K_INT && (x < -2147483647L || x > 2147483647L)) {
        PyErr_Format(PyExc_OverflowError, "%s: %ld is out of range", d->name, x);
        return -1;
    }
    if (d->kind == K_INT) *(int *)p = (int)x;
    else *(long *)p = x;
    return 0;
}

static PyObject *get_value(const opt_def *d, const char *base)
{
    const void *p = base + d->off;
    switch (d->kind) {
    case K_DOUBLE: return PyFloat_FromDouble(*(const double *)p);
    case K_INT: return PyLong_FromLong(*(const int *)p);
    case K_LONG: return PyLong_FromLong(*(const long *)p);
    case K_BOOL: return PyBool_FromLong(*(const int *)p);
    default: return PyUnicode_FromString(d->to(*(const int *)p));
    }
}

static const opt_def *find(const opt_def *t, int n, PyObject *key)
{
    for (int k = 0; k < n; k++)
        if (PyUnicode_CompareWithASCIIString(key, t[k].name) == 0) return &t[k];
    return NULL;
}

/* ---------------------------------------------------------------- the special ones */

static int set_formulation(PyObject *v, mbs_sim_options *o)
{
    const char *s = arg_str(v, "formulation");
    if (!s) return -1;
    int fd = mbs_fd_algorithm_from_name(s), loop = fd < 0 ? mbs_loop_formulation_from_name(s) : -1;
    if (fd >= 0) {
        o->formulation = (mbs_fd_algorithm)fd;
        o->loop = MBS_LOOP_NONE;
    } else if (loop > 0) {
        o->loop = (mbs_loop_formulation)loop;
    } else {
        PyErr_Format(PyExc_ValueError, "formulation: expected 'fr', 'semi', 'ali3p', 'matrixr', 'penalty' or "
                                       "'index1', got '%s'", s);
        return -1;
    }
    return 0;
}

static int set_tangent(PyObject *v, mbs_sim_options *o)
{
    const char *s = arg_str(v, "tangent");
    if (!s) return -1;
    if (strcmp(s, "analytic") == 0) o->tangent = mbs_tangent_analytic;
    else if (strcmp(s, "fd") == 0) o->tangent = mbs_tangent_fd;
    else {
        PyErr_Format(PyExc_ValueError, "tangent: expected 'analytic' or 'fd', got '%s'", s);
        return -1;
    }
    o->tangent_ctx = NULL;
    return 0;
}

static int small_int(PyObject *v, const char *what, int lo, int hi, int *x)
{
    long k = !PyBool_Check(v) && PyLong_Check(v) ? PyLong_AsLong(v) : lo - 1L;
    if (k == -1 && PyErr_Occurred()) return -1;
    if (k < lo || k > hi) {
        PyErr_Format(PyExc_ValueError, "%s: expected an int in %d..%d, got %R", what, lo, hi, v);
        return -1;
    }
    *x = (int)k;
    return 0;
}

static int set_dofs(PyObject *v, const mbs_model *m, mbs_sim_options *o, opt_mem *mem)
{
    PyObject *seq = PySequence_Fast(v, "dofs: expected a sequence");
    if (!seq) return -1;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyMem_Free(mem->dofs);
    mem->dofs = PyMem_Calloc((size_t)n + 1, sizeof *mem->dofs);
    int ok = mem->dofs != NULL;
    if (!ok) PyErr_NoMemory();
    for (Py_ssize_t k = 0; ok && k < n; k++) {
        PyObject *it = PySequence_Fast_GET_ITEM(seq, k);
        mbs_dof *d = &mem->dofs[k];
        if (PyTuple_Check(it) && PyTuple_GET_SIZE(it) == 2) {
            ok = small_int(PyTuple_GET_ITEM(it, 0), "dofs: point", 0, mbs_model_npoints(m) - 1, &d->point) == 0 &&
                 small_int(PyTuple_GET_ITEM(it, 1), "dofs: component", 0, 2, &d->component) == 0;
        } else {
            d->point = -1;
            ok = small_int(it, "dofs: coordinate", 0, mbs_model_nq(m) - 1, &d->coord) == 0;
        }
    }
    Py_DECREF(seq);
    if (!ok) return -1;
    o->dofs = mem->dofs;
    o->ndofs = (int)n;
    return 0;
}

/* A vector of n values (weights) or of n flags (fixed). */
static int set_weights(PyObject *v, const mbs_model *m, mbs_opt_options *o, opt_mem *mem)
{
    const int n = mbs_model_nobjectives(m);
    PyArrayObject *a = arg_vector(v, n, "weights", m, mbs_objective_name);
    if (!a) return -1;
    PyMem_Free(mem->weights);
    mem->weights = PyMem_Malloc(((size_t)n + 1) * sizeof *mem->weights);
    if (mem->weights) memcpy(mem->weights, PyArray_DATA(a), (size_t)n * sizeof(double));
    Py_DECREF(a);
    if (!mem->weights) {
        PyErr_NoMemory();
        return -1;
    }
    o->weights = mem->weights;
    return 0;
}

static int set_fixed(PyObject *v, const mbs_model *m, mbs_opt_options *o, opt_mem *mem)
{
    const int n = mbs_model_nparams(m);
    PyArrayObject *a = arg_vector(v, n, "fixed", m, mbs_param_name);
    if (!a) return -1;
    PyMem_Free(mem->fixed);
    mem->fixed = PyMem_Malloc(((size_t)n + 1) * sizeof *mem->fixed);
    for (int k = 0; mem->fixed && k < n; k++) mem->fixed[k] = ((const double *)PyArray_DATA(a))[k] != 0;
    Py_DECREF(a);
    if (!mem->fixed) {
        PyErr_NoMemory();
        return -1;
    }
    o->fixed = mem->fixed;
    return 0;
}

static int sim_special(PyObject *key, PyObject *v, const mbs_model *m, mbs_sim_options *o, opt_mem *mem, int *done)
{
    *done = 1;
    if (PyUnicode_CompareWithASCIIString(key, "formulation") == 0) return set_formulation(v, o);
    if (PyUnicode_CompareWithASCIIString(key, "tangent") == 0) return set_tangent(v, o);
    if (PyUnicode_CompareWithASCIIString(key, "dofs") == 0) return set_dofs(v, m, o, mem);
    *done = 0;
    return 0;
}

/* ---------------------------------------------------------------- whole dicts */

static int unknown(PyObject *key)
{
    PyErr_Format(PyExc_TypeError, "unknown option '%S' (docs/python.md lists them)", key);
    return -1;
}

static int check_sim(const mbs_sim_options *o)
{
    mbs_error err = { 0, "" };
    if (mbs_sim_options_check(o, &err) != MBS_OK) {
        raise_status(err.code, err.msg);
        return -1;
    }
    return 0;
}

static int dict_items(PyObject *opts)
{
    if (opts && !PyDict_Check(opts)) {
        PyErr_SetString(PyExc_TypeError, "options: expected a dict");
        return -1;
    }
    return 0;
}

/* One option of the simulation: 1 applied, 0 not a simulation option, -1 error. */
static int apply_sim_one(PyObject *key, PyObject *v, const mbs_model *m, mbs_sim_options *o, opt_mem *mem)
{
    if (!PyUnicode_Check(key)) return unknown(key);
    int done;
    if (sim_special(key, v, m, o, mem, &done) < 0) return -1;
    if (done) return 1;
    const opt_def *d = find(SIM, COUNT(SIM), key);
    if (!d) return 0;
    return set_value(d, v, (char *)o) < 0 ? -1 : 1;
}

int options_apply_sim(PyObject *opts, const mbs_model *m, mbs_sim_options *o, opt_mem *mem)
{
    if (dict_items(opts) < 0) return -1;
    PyObject *key, *v;
    Py_ssize_t pos = 0;
    while (opts && PyDict_Next(opts, &pos, &key, &v)) {
        if (v == Py_None) continue;
        int r = apply_sim_one(key, v, m, o, mem);
        if (r < 0) return -1;
        if (r == 0) return unknown(key);
    }
    return check_sim(o);
}

/* formulation not given: semi-recursive for open trees (as the command line). */
static void default_formulation(PyObject *opts, mbs_sim_options *o)
{
    PyObject *f = opts ? PyDict_GetItemString(opts, "formulation") : NULL;
    if (!f || f == Py_None) o->formulation = MBS_FD_SEMI_RECURSIVE;
}

int options_apply_sens(PyObject *opts, const mbs_model *m, mbs_sens_options *o, opt_mem *mem)
{
    if (dict_items(opts) < 0) return -1;
    default_formulation(opts, &o->sim);
    PyObject *key, *v;
    Py_ssize_t pos = 0;
    while (opts && PyDict_Next(opts, &pos, &key, &v)) {
        if (v == Py_None) continue;
        int r = apply_sim_one(key, v, m, &o->sim, mem);
        if (r < 0) return -1;
        if (r > 0) continue;
        const opt_def *d = find(SENS, COUNT(SENS), key);
        if (!d) return unknown(key);
        if (set_value(d, v, (char *)o) < 0) return -1;
    }
    return check_sim(&o->sim);
}

int options_apply_opt(PyObject *opts, const mbs_model *m, mbs_opt_options *o, opt_mem *mem)
{
    if (dict_items(opts) < 0) return -1;
    default_formulation(opts, &o->sens.sim);
    PyObject *key, *v;
    Py_ssize_t pos = 0;
    while (opts && PyDict_Next(opts, &pos, &key, &v)) {
        if (v == Py_None) continue;
        int r = apply_sim_one(key, v, m, &o->sens.sim, mem);
        if (r < 0) return -1;
        if (r > 0) continue;
        const opt_def *d;
        if (PyUnicode_CompareWithASCIIString(key, "method") == 0) {
            o->auto_method = 0;
            if (set_value(&SENS[0], v, (char *)&o->sens) < 0) return -1;
        } else if (PyUnicode_CompareWithASCIIString(key, "fd_step") == 0) {
            if (set_value(&SENS[1], v, (char *)&o->sens) < 0) return -1;
        } else if (PyUnicode_CompareWithASCIIString(key, "weights") == 0) {
            if (set_weights(v, m, o, mem) < 0) return -1;
        } else if (PyUnicode_CompareWithASCIIString(key, "fixed") == 0) {
            if (set_fixed(v, m, o, mem) < 0) return -1;
        } else if ((d = find(OPT, COUNT(OPT), key))) {
            if (set_value(d, v, (char *)o) < 0) return -1;
        } else {
            return unknown(key);
        }
    }
    return check_sim(&o->sens.sim);
}

/* ---------------------------------------------------------------- back to a dict */

PyObject *options_sim_dict(const mbs_sim_options *o)
{
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    const char *form = o->loop != MBS_LOOP_NONE ? mbs_loop_formulation_name(o->loop)
                                                : mbs_fd_algorithm_name(o->formulation);
    const char *tangent = !o->tangent || o->tangent == mbs_tangent_analytic ? "analytic"
                          : o->tangent == mbs_tangent_fd                    ? "fd"
                                                                            : "custom";
    PyObject *v = PyUnicode_FromString(form);
    int ok = v && PyDict_SetItemString(d, "formulation", v) == 0;
    Py_XDECREF(v);
    v = ok ? PyUnicode_FromString(tangent) : NULL;
    ok = v && PyDict_SetItemString(d, "tangent", v) == 0;
    Py_XDECREF(v);
    for (int k = 0; ok && k < COUNT(SIM); k++) {
        v = get_value(&SIM[k], (const char *)o);
        ok = v && PyDict_SetItemString(d, SIM[k].name, v) == 0;
        Py_XDECREF(v);
    }
    if (!ok) Py_CLEAR(d);
    return d;
}
