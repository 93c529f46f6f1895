/*
 * simulate.c - mbs_simulate without the GIL: every step is recorded in C
 * (t, q, qd, qdd, the model's outputs, and the constraint violations of a
 * closed-loop formulation) into buffers that become the result's arrays
 * at the end (without a copy). An
 * optional progress callback takes the GIL after every step; without one,
 * the signal handlers (Ctrl-C) run every PC_CHECK_EVERY steps.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mbspy.h"

typedef struct {
    pycall pc;
    int nq, nv, ncols, violation;
    size_t n, cap;
    double *t, *q, *qd, *qdd, *out, *viol;
    double vals[MBS_OUTPUT_MAX_COLUMNS];
    mbs_data *fdata;      /* the inverse dynamics of force outputs (NULL without them) */
    PyObject *progress;
    int stopped, nomem;
    long since_check;
} recorder;

static void rec_free(recorder *r)
{
    free(r->t);
    free(r->q);
    free(r->qd);
    free(r->qdd);
    free(r->out);
    free(r->viol);
    mbs_data_free(r->fdata);
}

/* Room for cap rows (no GIL: malloc). 0 or -1. */
static int rec_reserve(recorder *r, size_t cap)
{
    double **a[6] = { &r->t, &r->q, &r->qd, &r->qdd, &r->out, &r->viol };
    const size_t w[6] = { 1, (size_t)r->nq, (size_t)r->nv, (size_t)r->nv, (size_t)r->ncols,
                          r->violation ? 3 : 0 };
    for (int k = 0; k < 6; k++) {
        double *p = realloc(*a[k], (cap * w[k] + 1) * sizeof(double));
        if (!p) return -1;
        *a[k] = p;
    }
    r->cap = cap;
    return 0;
}

/* progress(t, q, qd) with the GIL; 1 to stop. */
static int rec_progress(recorder *r, double t, const double *q, const double *qd)
{
    PyGILState_STATE s = pc_enter();
    PyObject *qa = vec_new(r->nq, q), *qda = qa ? vec_new(r->nv, qd) : NULL;
    PyObject *res = qda ? PyObject_CallFunction(r->progress, "dOO", t, qa, qda) : NULL;
    Py_XDECREF(qa);
    Py_XDECREF(qda);
    int stop = !res;
    if (res && pc_says_stop(res)) stop = r->stopped = 1;
    Py_XDECREF(res);
    pc_keep_error(&r->pc);
    pc_leave(s);
    return stop;
}

static int on_step(void *user, const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                   const double *qdd)
{
    recorder *r = user;
    if (r->n == r->cap && rec_reserve(r, 2 * r->cap + 64) < 0) {
        r->nomem = 1;
        return MBS_ERR_NOMEM;
    }
    const size_t i = r->n++;
    r->t[i] = t;
    memcpy(r->q + i * (size_t)r->nq, q, (size_t)r->nq * sizeof(double));
    memcpy(r->qd + i * (size_t)r->nv, qd, (size_t)r->nv * sizeof(double));
    memcpy(r->qdd + i * (size_t)r->nv, qdd, (size_t)r->nv * sizeof(double));
    double *row = r->out + i * (size_t)r->ncols;
    for (int k = 0; k < mbs_model_noutputs(m); k++) {
        mbs_output o = mbs_model_output(m, k);
        if (o.kind != MBS_OUTPUT_FORCE) mbs_output_eval(m, d, q, &o, r->vals);
        else {
            const int rc = mbs_output_eval_state(m, r->fdata, t, q, qd, qdd, &o, r->vals);
            if (rc) return rc;
        }
        const int nc = mbs_output_ncolumns(&o);
        memcpy(row, r->vals, (size_t)nc * sizeof(double));
        row += nc;
    }
    if (r->violation) mbs_constraint_violation(m, d, t, q, qd, qdd, r->viol + 3 * i);
    if (r->progress) return rec_progress(r, t, q, qd);
    return pc_check_signals_every(&r->pc, &r->since_check);
}

static int output_columns(const mbs_model *m)
{
    int n = 0;
    for (int k = 0; k < mbs_model_noutputs(m); k++) {
        mbs_output o = mbs_model_output(m, k);
        n += mbs_output_ncolumns(&o);
    }
    return n;
}

PyObject *stats_dict(const mbs_sim_stats *s)
{
    return Py_BuildValue("{s:l,s:l,s:l,s:i,s:d,s:l,s:l,s:l,s:l,s:d,s:d,s:d,s:d,s:(ddd),s:(ll)}", "steps", s->steps,
                         "outputs", s->outputs, "iterations", s->iterations, "iterations_max", s->iterations_max,
                         "iterations_mean", s->iterations_mean, "fevals", s->fevals, "tangent_evals",
                         s->tangent_evals, "factorizations", s->factorizations, "error_test_fails",
                         s->error_test_fails, "energy0", s->energy0, "energy", s->energy, "energy_drift",
                         s->energy_drift, "euler_drift", s->euler_drift, "violation", s->violation[0],
                         s->violation[1], s->violation[2], "projections", s->projections[0], s->projections[1]);
}

static void free_capsule(PyObject *cap) { free(PyCapsule_GetPointer(cap, NULL)); }

/* An (n, w) array (w < 0: (n,)) over the recorded buffer *buf, which it then
 * owns (freed with it: *buf is set to NULL); the rows are not copied. */
static PyObject *take_rows(double **buf, npy_intp n, npy_intp w)
{
    npy_intp dims[2] = { n, w };
    PyObject *cap = PyCapsule_New(*buf, NULL, free_capsule);
    if (!cap) return NULL;
    *buf = NULL;
    PyObject *a = PyArray_SimpleNewFromData(w < 0 ? 1 : 2, dims, NPY_DOUBLE, PyCapsule_GetPointer(cap, NULL));
    if (!a || PyArray_SetBaseObject((PyArrayObject *)a, cap) < 0) {
        Py_XDECREF(a);
        Py_DECREF(cap);
        return NULL;
    }
    return a;
}

/* The recorded rows as a dict of arrays (the buffers move into them). */
static PyObject *rec_result(recorder *r)
{
    const npy_intp n = (npy_intp)r->n;
    PyObject *d = PyDict_New();
    const char *const key[6] = { "t", "q", "qd", "qdd", "outputs", "violation" };
    double **buf[6] = { &r->t, &r->q, &r->qd, &r->qdd, &r->out, &r->viol };
    const npy_intp w[6] = { -1, r->nq, r->nv, r->nv, r->ncols, 3 };
    for (int k = 0; d && k < 6; k++) {
        PyObject *a = k == 5 && !r->violation ? Py_NewRef(Py_None) : take_rows(buf[k], n, w[k]);
        if (!a || PyDict_SetItemString(d, key[k], a) < 0) Py_CLEAR(d);
        Py_XDECREF(a);
    }
    return d;
}

/* The first row count to reserve: the output points of [t0, tf] at dt. */
static size_t expected_rows(const mbs_sim_options *o)
{
    double n = (o->tf - o->t0) / o->dt + 2;
    return isfinite(n) && n > 0 && n < 1e6 ? (size_t)n : 1024;
}

/* Run the simulation (arguments checked) and build the result. */
static PyObject *run_simulation(ModelObject *mo, DataObject *d, const mbs_sim_options *o, const double *q0,
                                const double *qd0, PyObject *progress)
{
    recorder r;
    memset(&r, 0, sizeof r);
    pc_init(&r.pc);
    r.nq = mo->nq;
    r.nv = mo->nv;
    r.ncols = output_columns(mo->m);
    r.violation = o->loop != MBS_LOOP_NONE;
    r.progress = progress;
    for (int k = 0; k < mbs_model_noutputs(mo->m); k++)
        if (mbs_model_output(mo->m, k).kind == MBS_OUTPUT_FORCE && !r.fdata && !(r.fdata = mbs_data_create(mo->m, NULL))) {
            rec_free(&r);
            return PyErr_NoMemory();
        }
    if (rec_reserve(&r, expected_rows(o)) < 0) {
        rec_free(&r);
        return PyErr_NoMemory();
    }
    mbs_sim_stats st;
    memset(&st, 0, sizeof st);
    mbs_error err = { 0, "" };
    pc_release(&r.pc);
    int rc = mbs_simulate(mo->m, d->d, o, q0, qd0, on_step, &r, &st, &err);
    pc_restore(&r.pc);
    PyObject *res = NULL;
    if (pc_finish(&r.pc)) {
    } else if (r.nomem) {
        PyErr_NoMemory();
    } else if (rc < 0) {
        raise_status(rc, err.msg);
    } else {
        res = rec_result(&r);
        PyObject *s = res ? stats_dict(&st) : NULL, *od = s ? options_sim_dict(o) : NULL;
        if (!od || PyDict_SetItemString(res, "stats", s) < 0 || PyDict_SetItemString(res, "options", od) < 0 ||
            PyDict_SetItemString(res, "stopped", r.stopped ? Py_True : Py_False) < 0)
            Py_CLEAR(res);
        Py_XDECREF(s);
        Py_XDECREF(od);
    }
    rec_free(&r);
    return res;
}

/* _simulate(model, data, options, q0, qd0, progress) -> dict */
static PyObject *py_simulate(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "data", "options", "q0", "qd0", "progress" };
    PyObject *a[6];
    ModelObject *mo;
    DataObject *d;
    if (parse_args("simulate", args, nargs, kwnames, names, 6, 2, 6, a) < 0 ||
        check_model_data("simulate", a[0], a[1], &mo, &d) < 0)
        return NULL;
    if (a[5] && a[5] != Py_None && !PyCallable_Check(a[5])) {
        PyErr_SetString(PyExc_TypeError, "progress: expected a callable progress(t, q, qd)");
        return NULL;
    }
    mbs_sim_options o = mbs_model_sim_options(mo->m);
    opt_mem mem = { 0 };
    int ok = 1;
    PyArrayObject *q0 = NULL, *qd0 = NULL;
    if (options_apply_sim(a[2] == Py_None ? NULL : a[2], mo->m, &o, &mem) < 0) ok = 0;
    if (ok) q0 = arg_vector_opt(a[3], mo->nq, "q0", mo->m, mbs_coord_name, &ok);
    if (ok) qd0 = arg_vector_opt(a[4], mo->nv, "qd0", mo->m, mbs_coord_name, &ok);
    PyObject *res = NULL;
    if (ok && data_acquire(d) == 0) {
        res = run_simulation(mo, d, &o, q0 ? PyArray_DATA(q0) : NULL, qd0 ? PyArray_DATA(qd0) : NULL,
                             a[5] == Py_None ? NULL : a[5]);
        data_release(d);
    }
    Py_XDECREF(q0);
    Py_XDECREF(qd0);
    opt_mem_free(&mem);
    return res;
}

/* ---------------------------------------------------------------- objective trace */

typedef struct {
    double *t, *g, *psi;
    size_t n, cap;
    int nomem;
} trace;

static int on_trace(void *user, double t, double g, double psi)
{
    trace *tr = user;
    if (tr->n == tr->cap) {
        size_t cap = 2 * tr->cap + 64;
        double *a = realloc(tr->t, cap * sizeof *a), *b = a ? realloc(tr->g, cap * sizeof *b) : NULL;
        if (a) tr->t = a;
        if (b) tr->g = b;
        double *c = b ? realloc(tr->psi, cap * sizeof *c) : NULL;
        if (!c) {
            tr->nomem = 1;
            return 1;
        }
        tr->psi = c;
        tr->cap = cap;
    }
    tr->t[tr->n] = t;
    tr->g[tr->n] = g;
    tr->psi[tr->n++] = psi;
    return 0;
}

/* _objective_trace(model, options, objective, weights) -> (t, g, psi) */
static PyObject *py_objective_trace(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "options", "objective", "weights" };
    PyObject *a[4];
    if (parse_args("objective_trace", args, nargs, kwnames, names, 4, 1, 4, a) < 0) return NULL;
    if (!arg_model("objective_trace", a[0])) return NULL;
    ModelObject *mo = (ModelObject *)a[0];
    mbs_sens_options o = mbs_sens_options_default(mo->m);
    opt_mem mem = { 0 };
    int objective = 0, ok = options_apply_sens(a[1] == Py_None ? NULL : a[1], mo->m, &o, &mem) == 0;
    if (ok && a[2] && a[2] != Py_None) {
        long k = PyLong_Check(a[2]) ? PyLong_AsLong(a[2]) : -1;
        ok = k >= 0 && k < mbs_model_nobjectives(mo->m);
        if (!ok && !PyErr_Occurred()) PyErr_Format(PyExc_IndexError, "objective %R out of range", a[2]);
        objective = (int)k;
    }
    PyArrayObject *w = NULL;
    if (ok) w = arg_vector_opt(a[3], mbs_model_nobjectives(mo->m), "weights", mo->m, mbs_objective_name, &ok);
    PyObject *res = NULL;
    if (ok) {
        trace tr = { 0 };
        mbs_error err = { 0, "" };
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = mbs_objective_trace(mo->m, &o, objective, w ? PyArray_DATA(w) : NULL, on_trace, &tr, &err);
        Py_END_ALLOW_THREADS
        if (tr.nomem) PyErr_NoMemory();
        else if (rc != MBS_OK) raise_status(rc, err.msg);
        else res = Py_BuildValue("(NNN)", vec_new((npy_intp)tr.n, tr.t), vec_new((npy_intp)tr.n, tr.g),
                                 vec_new((npy_intp)tr.n, tr.psi));
        free(tr.t);
        free(tr.g);
        free(tr.psi);
    }
    Py_XDECREF(w);
    opt_mem_free(&mem);
    return res;
}

PyMethodDef mbspy_simulate_methods[] = {
    { "_simulate", FK_CAST(py_simulate), METH_FK,
      "_simulate(model, data, options, q0, qd0, progress) -> dict (use mbsens.simulate)" },
    { "_objective_trace", FK_CAST(py_objective_trace), METH_FK,
      "_objective_trace(model, options, objective, weights) -> (t, g, psi) (use mbsens.objective_trace)" },
    { NULL, NULL, 0, NULL }
};
