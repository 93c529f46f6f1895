/*
 * constraints.c - closed loops and driving constraints: evaluation of
 * Phi(q, t), its Jacobian (ncon, nv) and rates, the rank, the violation
 * norms, and the kinematic problems (assembly, velocities, accelerations).
 */
#include <string.h>

#include "mbspy.h"

/* Arguments (model, data, q, [qd, [qdd]], t, ...): nvec state vectors
 * (q: nq, the others nv; those past nreq may be None), then t (default 0). */
typedef struct {
    ModelObject *mo;
    DataObject *d;
    PyArrayObject *x[3];
    int n;
    double t;
} con_args;

static void con_end(con_args *c)
{
    for (int k = 0; k < c->n; k++) Py_CLEAR(c->x[k]);
    if (c->d) data_release(c->d);
    c->d = NULL;
}

static const double *X(const con_args *c, int k) { return c->x[k] ? PyArray_DATA(c->x[k]) : NULL; }

/* a[0..1]: model, data; a[2..2+nvec-1]: the vectors; a[2+nvec]: t. */
static int con_begin(con_args *c, const char *func, PyObject **a, int nvec, int nreq)
{
    static const char *const vn[3] = { "q", "qd", "qdd" };
    memset(c, 0, sizeof *c);
    DataObject *d;
    if (check_model_data(func, a[0], a[1], &c->mo, &d) < 0) return -1;
    for (int k = 0; k < nvec; k++) {
        int ok = 1;
        const npy_intp len = k ? c->mo->nv : c->mo->nq;
        c->x[k] = k < nreq ? arg_vector(a[2 + k], len, vn[k], c->mo->m, mbs_coord_name)
                           : arg_vector_opt(a[2 + k], len, vn[k], c->mo->m, mbs_coord_name, &ok);
        c->n = k + 1;
        if ((k < nreq && !c->x[k]) || !ok) {
            con_end(c);
            return -1;
        }
    }
    if (a[2 + nvec] && arg_double(a[2 + nvec], "t", &c->t) < 0) {
        con_end(c);
        return -1;
    }
    if (data_acquire(d) < 0) {
        con_end(c);
        return -1;
    }
    c->d = d;
    return 0;
}

static PyObject *con_finish(con_args *c, int rc, const char *func, PyObject *res)
{
    DataObject *d = c->d;
    con_end(c);
    if (rc != MBS_OK) {
        Py_XDECREF(res);
        return raise_data(d, rc, func);
    }
    return res;
}

#define NOGIL(stmt) do { Py_BEGIN_ALLOW_THREADS stmt; Py_END_ALLOW_THREADS } while (0)
static double *OUT(PyArrayObject *a) { return PyArray_DATA(a); }

static PyObject *py_constraints(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "data", "q", "t", "out" };
    PyObject *a[5];
    con_args c;
    if (parse_args("constraints", args, nargs, kwnames, names, 5, 3, 4, a) < 0 ||
        con_begin(&c, "constraints", a, 1, 1) < 0)
        return NULL;
    const npy_intp n = mbs_model_nconstraints(c.mo->m);
    PyArrayObject *phi = arg_out(a[4], 1, &n, "out");
    if (!phi) {
        con_end(&c);
        return NULL;
    }
    int rc;
    NOGIL(rc = mbs_constraints(c.mo->m, c.d->d, X(&c, 0), c.t, OUT(phi)));
    return con_finish(&c, rc, "constraints", (PyObject *)phi);
}

static PyObject *py_constraint_jacobian(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "data", "q", "t", "out" };
    PyObject *a[5];
    con_args c;
    if (parse_args("constraint_jacobian", args, nargs, kwnames, names, 5, 3, 4, a) < 0 ||
        con_begin(&c, "constraint_jacobian", a, 1, 1) < 0)
        return NULL;
    const npy_intp dims[2] = { mbs_model_nconstraints(c.mo->m), c.mo->nv };
    PyArrayObject *J = arg_out(a[4], 2, dims, "out");
    if (!J) {
        con_end(&c);
        return NULL;
    }
    int rc;
    NOGIL(rc = mbs_constraint_jacobian(c.mo->m, c.d->d, X(&c, 0), c.t, OUT(J)));
    return con_finish(&c, rc, "constraint_jacobian", (PyObject *)J);
}

static PyObject *py_constraint_eval(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "data", "q", "qd", "t", "out" };
    static const char *const what[] = { "out[0] (phi)", "out[1] (Phi_q)", "out[2] (phid)", "out[3] (b)",
                                        "out[4] (c)" };
    static const int nd[5] = { 1, 2, 1, 1, 1 };
    PyObject *a[6];
    PyArrayObject *r[5];
    con_args c;
    if (parse_args("constraint_eval", args, nargs, kwnames, names, 6, 4, 5, a) < 0 ||
        con_begin(&c, "constraint_eval", a, 2, 2) < 0)
        return NULL;
    const npy_intp n = mbs_model_nconstraints(c.mo->m);
    const npy_intp dims[5][3] = { { n }, { n, c.mo->nv }, { n }, { n }, { n } };
    if (arg_outs(a[5], 5, nd, dims, what, r) < 0) {
        con_end(&c);
        return NULL;
    }
    int rc;
    NOGIL(rc = mbs_constraint_eval(c.mo->m, c.d->d, X(&c, 0), X(&c, 1), c.t, OUT(r[0]), OUT(r[1]), OUT(r[2]),
                                   OUT(r[3]), OUT(r[4])));
    return con_finish(&c, rc, "constraint_eval", outs_tuple(r, 5));
}

static PyObject *py_constraint_rank(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "data", "q", "t" };
    PyObject *a[4];
    con_args c;
    if (parse_args("constraint_rank", args, nargs, kwnames, names, 4, 3, 4, a) < 0 ||
        con_begin(&c, "constraint_rank", a, 1, 1) < 0)
        return NULL;
    int rc, rank = 0;
    NOGIL(rc = mbs_constraint_rank(c.mo->m, c.d->d, X(&c, 0), c.t, &rank));
    return con_finish(&c, rc, "constraint_rank", PyLong_FromLong(rank));
}

static PyObject *py_constraint_violation(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                         PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "data", "q", "qd", "qdd", "t" };
    PyObject *a[6];
    con_args c;
    if (parse_args("constraint_violation", args, nargs, kwnames, names, 6, 3, 6, a) < 0 ||
        con_begin(&c, "constraint_violation", a, 3, 1) < 0)
        return NULL;
    int rc;
    double v[3];
    NOGIL(rc = mbs_constraint_violation(c.mo->m, c.d->d, c.t, X(&c, 0), X(&c, 1), X(&c, 2), v));
    return con_finish(&c, rc, "constraint_violation", vec_new(3, v));
}

/* ---------------------------------------------------------------- kinematic problems */

/* Keywords fixed, tol, max_iter, residual_tol, euler_rows into o; the
 * fixed coordinates (indices or names) go to *fixed (PyMem, freed by the caller). */
static int kin_options(const mbs_model *m, PyObject **kw, mbs_kin_options *o, int **fixed)
{
    mbs_kin_options_default(o);
    *fixed = NULL;
    if (kw[0] && kw[0] != Py_None) {
        PyObject *seq = PySequence_Fast(kw[0], "fixed: expected a sequence of coordinate indices or names");
        if (!seq) return -1;
        const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        *fixed = PyMem_Malloc(((size_t)n + 1) * sizeof **fixed);
        for (Py_ssize_t k = 0; *fixed && k < n; k++) {
            PyObject *it = PySequence_Fast_GET_ITEM(seq, k);
            int j = -1;
            if (PyUnicode_Check(it)) {
                const char *s = arg_str(it, "fixed");
                for (int i = 0; s && i < mbs_model_nq(m) && j < 0; i++)
                    if (strcmp(mbs_coord_name(m, i), s) == 0) j = i;
                if (s && j < 0) PyErr_Format(PyExc_KeyError, "fixed: no coordinate named '%s'", s);
            } else if (!PyBool_Check(it) && PyLong_Check(it)) {
                long v = PyLong_AsLong(it);
                if (v >= 0 && v < mbs_model_nq(m)) j = (int)v;
                else if (!PyErr_Occurred()) PyErr_Format(PyExc_IndexError, "fixed: coordinate %ld out of range", v);
            } else {
                PyErr_SetString(PyExc_TypeError, "fixed: expected coordinate indices or names");
            }
            if (j < 0) {
                Py_DECREF(seq);
                return -1;
            }
            (*fixed)[k] = j;
        }
        Py_DECREF(seq);
        if (!*fixed) {
            PyErr_NoMemory();
            return -1;
        }
        o->fixed = *fixed;
        o->nfixed = (int)n;
    }
    double v;
    if (kw[1] && kw[1] != Py_None) {
        if (arg_double(kw[1], "tol", &v) < 0) return -1;
        o->tol = v;
    }
    if (kw[2] && kw[2] != Py_None) {
        long it = PyLong_Check(kw[2]) && !PyBool_Check(kw[2]) ? PyLong_AsLong(kw[2]) : -1;
        if (it < 1 || it > 1000000) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "max_iter: expected an int in 1..1000000");
            return -1;
        }
        o->max_iter = (int)it;
    }
    if (kw[3] && kw[3] != Py_None) {
        if (arg_double(kw[3], "residual_tol", &v) < 0) return -1;
        o->residual_tol = v;
    }
    if (kw[4] && kw[4] != Py_None) {
        if (!PyBool_Check(kw[4])) {
            PyErr_SetString(PyExc_TypeError, "euler_rows: expected True or False");
            return -1;
        }
        o->euler_rows = kw[4] == Py_True;
    }
    return 0;
}

static PyObject *report_dict(const mbs_assembly_report *r)
{
    return Py_BuildValue("{s:i,s:d,s:d,s:i}", "iterations", r->iterations, "step", r->step, "residual",
                         r->residual, "worst_row", r->worst_row);
}

/* which: 0 assembly, 1 velocities, 2 accelerations. */
static PyObject *kin_problem(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, int which)
{
    static const char *const fname[3] = { "assemble", "solve_velocity", "solve_acceleration" };
    static const char *const names[3][11] = {
        { "model", "data", "q", "t", "fixed", "tol", "max_iter", "residual_tol", "euler_rows" },
        { "model", "data", "q", "qd", "t", "fixed", "tol", "max_iter", "residual_tol", "euler_rows" },
        { "model", "data", "q", "qd", "qdd", "t", "fixed", "tol", "max_iter", "residual_tol", "euler_rows" },
    };
    const int nvec = which + 1, n = 8 + nvec;
    PyObject *a[11];
    con_args c;
    if (parse_args(fname[which], args, nargs, kwnames, names[which], n, 2 + nvec, 3 + nvec, a) < 0 ||
        con_begin(&c, fname[which], a, nvec, nvec) < 0)
        return NULL;
    mbs_kin_options o;
    int *fixed = NULL;
    if (kin_options(c.mo->m, a + 3 + nvec, &o, &fixed) < 0) {
        PyMem_Free(fixed);
        con_end(&c);
        return NULL;
    }
    /* the unknown: a copy of the last vector, solved in place */
    PyObject *x = vec_new(which ? c.mo->nv : c.mo->nq, X(&c, nvec - 1));
    if (!x) {
        PyMem_Free(fixed);
        con_end(&c);
        return NULL;
    }
    double *xv = PyArray_DATA((PyArrayObject *)x);
    mbs_assembly_report rep;
    memset(&rep, 0, sizeof rep);
    int rc;
    if (which == 0) NOGIL(rc = mbs_assemble(c.mo->m, c.d->d, xv, c.t, &o, &rep));
    else if (which == 1) NOGIL(rc = mbs_solve_velocity(c.mo->m, c.d->d, X(&c, 0), xv, c.t, &o));
    else NOGIL(rc = mbs_solve_acceleration(c.mo->m, c.d->d, X(&c, 0), X(&c, 1), xv, c.t, &o));
    PyMem_Free(fixed);
    if (which == 0 && rc == MBS_OK) {
        PyObject *r = report_dict(&rep);
        if (r) {
            x = Py_BuildValue("(NN)", x, r);
        } else {
            Py_DECREF(x);
            x = NULL;
        }
    }
    return con_finish(&c, rc, fname[which], x);
}

static PyObject *py_assemble(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    return kin_problem(args, nargs, kwnames, 0);
}

static PyObject *py_solve_velocity(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    return kin_problem(args, nargs, kwnames, 1);
}

static PyObject *py_solve_acceleration(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    return kin_problem(args, nargs, kwnames, 2);
}

PyMethodDef mbspy_constraint_methods[] = {
    { "constraints", FK_CAST(py_constraints), METH_FK,
      "constraints(model, data, q, t=0.0, *, out=None)\n--\n\nPhi(q, t) (nconstraints): loop closure, drivers, "
      "Euler normalization." },
    { "constraint_jacobian", FK_CAST(py_constraint_jacobian), METH_FK,
      "constraint_jacobian(model, data, q, t=0.0, *, out=None)\n--\n\nPhi_q (nconstraints, nv)." },
    { "constraint_eval", FK_CAST(py_constraint_eval), METH_FK,
      "constraint_eval(model, data, q, qd, t=0.0, *, out=None)\n--\n\n"
      "(phi, Phi_q, phid, b, c) in one kinematics pass: Phi, its Jacobian, dPhi/dt, b = -Phi_t and\n"
      "c = -(dPhi_q/dt) qd - dPhi_t/dt (Phi_q qd = b, Phi_q qdd = c)." },
    { "constraint_rank", FK_CAST(py_constraint_rank), METH_FK,
      "constraint_rank(model, data, q, t=0.0)\n--\n\nNumerical rank of Phi_q (nq - rank: the mobility)." },
    { "constraint_violation", FK_CAST(py_constraint_violation), METH_FK,
      "constraint_violation(model, data, q, qd=None, qdd=None, t=0.0)\n--\n\n"
      "2-norms (|Phi|, |dPhi/dt|, |d2Phi/dt2|) at a state." },
    { "assemble", FK_CAST(py_assemble), METH_FK,
      "assemble(model, data, q, t=0.0, *, fixed=None, tol=None, max_iter=None, residual_tol=None,\n"
      "         euler_rows=None)\n--\n\n"
      "(q, report): coordinates satisfying Phi = 0 from the guess q, holding the `fixed` coordinates\n"
      "(indices or names; None: the model's assembly section); report: iterations, step, residual, worst_row." },
    { "solve_velocity", FK_CAST(py_solve_velocity), METH_FK,
      "solve_velocity(model, data, q, qd, t=0.0, *, fixed=None, tol=None, max_iter=None, residual_tol=None,\n"
      "               euler_rows=None)\n--\n\nConsistent velocities at an assembled q (the fixed ones kept)." },
    { "solve_acceleration", FK_CAST(py_solve_acceleration), METH_FK,
      "solve_acceleration(model, data, q, qd, qdd, t=0.0, *, fixed=None, tol=None, max_iter=None,\n"
      "                   residual_tol=None, euler_rows=None)\n--\n\nConsistent accelerations at an assembled (q, qd)." },
    { NULL, NULL, 0, NULL }
};
