/*
 * sensitivity.c - the long calls over whole simulations, without the GIL:
 * mbs_sensitivity (with a history callback and a program's own objective
 * written in Python), mbs_optimize (per-iteration and message callbacks),
 * mbs_check_derivatives, and the model generators. The library's own
 * per-step (sensitivity) and per-iteration (optimize) callbacks are always
 * installed: they run the signal handlers, so Ctrl-C stops a long analysis.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mbspy.h"

/* ---------------------------------------------------------------- a Python objective */

typedef struct {
    pycall pc;
    PyObject *objective, *history;
    long since_check;
} sens_ctx;

/* Copy a returned vector of n finite values into dst. 0 or -1. */
static int take_vector(PyObject *v, int n, const char *what, double *dst)
{
    PyArrayObject *a = arg_vector(v, n, what, NULL, NULL);
    if (!a) return -1;
    memcpy(dst, PyArray_DATA(a), (size_t)n * sizeof(double));
    Py_DECREF(a);
    return 0;
}

/* The objective's result: g, or (g, g_q, g_qd, g_qdd, g_rho) when grad. */
static int objective_result(PyObject *res, int grad, int nq, int np, double *g, double *g_q, double *g_qd,
                            double *g_qdd, double *g_rho)
{
    PyObject *gv = res;
    if (grad) {
        if (!PyTuple_Check(res) || PyTuple_GET_SIZE(res) != 5) {
            PyErr_SetString(PyExc_TypeError, "objective(..., grad=True) must return (g, g_q, g_qd, g_qdd, g_rho)");
            return -1;
        }
        gv = PyTuple_GET_ITEM(res, 0);
    } else if (PyTuple_Check(res) && PyTuple_GET_SIZE(res) == 5) {
        gv = PyTuple_GET_ITEM(res, 0);
    }
    if (arg_double(gv, "objective: g", g) < 0) return -1;
    if (!grad) return 0;
    if (take_vector(PyTuple_GET_ITEM(res, 1), nq, "objective: g_q", g_q) < 0 ||
        take_vector(PyTuple_GET_ITEM(res, 2), nq, "objective: g_qd", g_qd) < 0 ||
        take_vector(PyTuple_GET_ITEM(res, 3), nq, "objective: g_qdd", g_qdd) < 0 ||
        take_vector(PyTuple_GET_ITEM(res, 4), np, "objective: g_rho", g_rho) < 0)
        return -1;
    return 0;
}

static int on_objective(void *user, double t, int nq, const double *q, const double *qd, const double *qdd,
                        int np, const double *rho, double *g, double *g_q, double *g_qd, double *g_qdd,
                        double *g_rho)
{
    sens_ctx *c = user;
    PyGILState_STATE s = pc_enter();
    int rc = -1;
    if (!pc_failed(&c->pc)) {
        const int grad = g_q != NULL;
        PyObject *res = PyObject_CallFunction(c->objective, "dNNNNO", t, vec_new(nq, q), vec_new(nq, qd),
                                              vec_new(nq, qdd), vec_new(np, rho), grad ? Py_True : Py_False);
        if (res && objective_result(res, grad, nq, np, g, g_q, g_qd, g_qdd, g_rho) == 0) rc = 0;
        Py_XDECREF(res);
        pc_keep_error(&c->pc);
    }
    pc_leave(s);
    return rc;
}

/* history(t, psi, grad) observes the run; its result is ignored (the methods
 * of the library do not all stop on a non-zero return, and one that does
 * returns its partial sums as a result). An exception it raises is kept
 * and raised when the analysis has returned. Without a history, the signal
 * handlers run every PC_CHECK_EVERY calls. */
static int on_history(void *user, double t, int nobj, int np, const double *psi, const double *grad)
{
    sens_ctx *c = user;
    if (!c->history) return pc_failed(&c->pc) || pc_check_signals_every(&c->pc, &c->since_check);
    PyGILState_STATE s = pc_enter();
    if (!pc_failed(&c->pc)) {
        PyObject *g = grad ? mat_new(nobj, np, grad) : Py_NewRef(Py_None);
        PyObject *res = PyObject_CallFunction(c->history, "dNN", t, vec_new(nobj, psi), g);
        Py_XDECREF(res);
        pc_keep_error(&c->pc);
    }
    const int stop = pc_failed(&c->pc);
    pc_leave(s);
    return stop;
}

static int callable_or_none(PyObject *f, const char *what)
{
    if (f && f != Py_None && !PyCallable_Check(f)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a callable or None", what);
        return -1;
    }
    return 0;
}

/* The simulation options of a run with its gradient method. */
static PyObject *run_options(const mbs_sim_options *sim, mbs_sens_method method)
{
    PyObject *od = options_sim_dict(sim), *s = od ? PyUnicode_FromString(mbs_sens_method_name(method)) : NULL;
    if (!s || PyDict_SetItemString(od, "method", s) < 0) Py_CLEAR(od);
    Py_XDECREF(s);
    return od;
}

static PyObject *sens_result(const mbs_sens_result *r, const mbs_sens_options *o)
{
    PyObject *od = run_options(&o->sim, o->method);
    return Py_BuildValue("{s:N,s:N,s:d,s:N,s:N}", "psi", vec_new(r->nobj, r->psi), "gradient",
                         mat_new(r->nobj, r->nparam, r->grad), "wall_seconds", r->wall_seconds, "stats",
                         stats_dict(&r->stats), "options", od);
}

/* _sensitivity(model, options, objective, history) -> dict */
static PyObject *py_sensitivity(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "options", "objective", "history" };
    PyObject *a[4];
    if (parse_args("sensitivity", args, nargs, kwnames, names, 4, 1, 4, a) < 0 ||
        callable_or_none(a[2], "objective") < 0 || callable_or_none(a[3], "history") < 0)
        return NULL;
    if (!arg_model("sensitivity", a[0])) return NULL;
    const mbs_model *m = ((ModelObject *)a[0])->m;
    mbs_sens_options o = mbs_sens_options_default(m);
    opt_mem mem = { 0 };
    if (options_apply_sens(a[1] == Py_None ? NULL : a[1], m, &o, &mem) < 0) {
        opt_mem_free(&mem);
        return NULL;
    }
    sens_ctx c;
    pc_init(&c.pc);
    c.objective = a[2] && a[2] != Py_None ? a[2] : NULL;
    c.history = a[3] && a[3] != Py_None ? a[3] : NULL;
    c.since_check = 0;
    if (c.objective) {
        o.objective = on_objective;
        o.objective_user = &c;
    }
    o.history = on_history;
    o.history_user = &c;
    mbs_sens_result r;
    memset(&r, 0, sizeof r);
    mbs_error err = { 0, "" };
    pc_release(&c.pc);
    int rc = mbs_sensitivity(m, &o, &r, &err);
    pc_restore(&c.pc);
    PyObject *res = NULL;
    if (!pc_finish(&c.pc)) res = rc == MBS_OK ? sens_result(&r, &o) : raise_status(rc, err.msg);
    if (rc == MBS_OK) mbs_sens_result_free(&r);
    opt_mem_free(&mem);
    return res;
}

/* ---------------------------------------------------------------- optimize */

typedef struct {
    pycall pc;
    PyObject *callback, *message;
} opt_ctx;

/* callback(it) at every accepted point, if given; the signal handlers run
 * in any case. */
static int on_iteration(void *user, const mbs_opt_iter *it)
{
    opt_ctx *c = user;
    PyGILState_STATE s = pc_enter();
    int stop = 1;
    if (!c->callback) {
        stop = pc_failed(&c->pc);
    } else if (!pc_failed(&c->pc)) {
        PyObject *d = Py_BuildValue("{s:i,s:i,s:i,s:d,s:d,s:d,s:d,s:N,s:N}", "iteration", it->iteration,
                                    "evaluations", it->evaluations, "stage", it->stage, "tf", it->tf, "psi",
                                    it->psi, "gnorm", it->gnorm, "step", it->step, "x", vec_new(it->nparam, it->x),
                                    "grad", vec_new(it->nparam, it->grad));
        PyObject *res = d ? PyObject_CallOneArg(c->callback, d) : NULL;
        stop = !res || pc_says_stop(res);
        Py_XDECREF(res);
        Py_XDECREF(d);
        pc_keep_error(&c->pc);
    }
    if (!stop && PyErr_CheckSignals() < 0) stop = pc_keep_error(&c->pc);
    pc_leave(s);
    return stop;
}

static void on_message(void *user, const char *msg)
{
    opt_ctx *c = user;
    PyGILState_STATE s = pc_enter();
    if (!pc_failed(&c->pc)) {
        PyObject *res = PyObject_CallFunction(c->message, "s", msg);
        Py_XDECREF(res);
        pc_keep_error(&c->pc);
    }
    pc_leave(s);
}

static PyObject *opt_result(const mbs_opt_result *r)
{
    const int n = r->nparam;
    PyObject *od = run_options(&r->sens.sim, r->method);
    return Py_BuildValue("{s:N,s:N,s:N,s:d,s:d,s:d,s:d,s:d,s:i,s:i,s:i,s:i,s:i,s:s,s:s,s:d,s:N}", "x0",
                         vec_new(n, r->x0), "x", vec_new(n, r->x), "grad", vec_new(n, r->grad), "psi_initial",
                         r->psi_initial, "psi_final", r->psi_final, "pg_norm_initial", r->pg_norm_initial, "pg_norm",
                         r->pg_norm, "pg_norm_scaled", r->pg_norm_scaled, "iterations", r->iterations, "evaluations",
                         r->evaluations, "failed_evaluations", r->failed_evaluations, "stages", r->stages,
                         "nlopt_code", r->nlopt_code, "stop_reason", r->stop_reason, "method",
                         mbs_sens_method_name(r->method), "wall_seconds", r->wall_seconds, "options", od);
}

/* _optimize(model, options, callback, message) -> dict */
static PyObject *py_optimize(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "options", "callback", "message" };
    PyObject *a[4];
    if (parse_args("optimize", args, nargs, kwnames, names, 4, 1, 4, a) < 0 ||
        callable_or_none(a[2], "callback") < 0 || callable_or_none(a[3], "message") < 0)
        return NULL;
    if (!arg_model("optimize", a[0])) return NULL;
    const mbs_model *m = ((ModelObject *)a[0])->m;
    mbs_opt_options o = mbs_opt_options_default(m);
    opt_mem mem = { 0 };
    if (options_apply_opt(a[1] == Py_None ? NULL : a[1], m, &o, &mem) < 0) {
        opt_mem_free(&mem);
        return NULL;
    }
    opt_ctx c;
    pc_init(&c.pc);
    c.callback = a[2] && a[2] != Py_None ? a[2] : NULL;
    c.message = a[3] && a[3] != Py_None ? a[3] : NULL;
    o.callback = on_iteration;
    o.callback_user = &c;
    if (c.message) {
        o.message = on_message;
        o.message_user = &c;
    }
    mbs_opt_result r;
    memset(&r, 0, sizeof r);
    mbs_error err = { 0, "" };
    pc_release(&c.pc);
    int rc = mbs_optimize(m, &o, &r, &err);
    pc_restore(&c.pc);
    PyObject *res = NULL;
    if (!pc_finish(&c.pc)) res = rc == MBS_OK ? opt_result(&r) : raise_status(rc, err.msg);
    if (rc == MBS_OK) mbs_opt_result_free(&r);
    opt_mem_free(&mem);
    return res;
}

/* ---------------------------------------------------------------- check */

/* {block name: v[block]} over the check's blocks */
static PyObject *block_dict(const double *v)
{
    PyObject *dict = PyDict_New();
    for (int k = 0; dict && k < MBS_CHECK_NBLOCKS; k++) {
        PyObject *x = PyFloat_FromDouble(v[k]);
        if (!x || PyDict_SetItemString(dict, mbs_check_block_name(k), x) < 0) Py_CLEAR(dict);
        Py_XDECREF(x);
    }
    return dict;
}

static PyObject *py_check(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "samples", "seed", "ref", "q", "qd" };
    PyObject *a[6];
    if (parse_args("check", args, nargs, kwnames, names, 6, 1, 6, a) < 0) return NULL;
    if (!arg_model("check", a[0])) return NULL;
    ModelObject *mo = (ModelObject *)a[0];
    long samples = 10;
    unsigned long seed = 1;
    int ref = MBS_REF_COM, ok = 1;
    if (a[1] && a[1] != Py_None) {
        samples = PyLong_Check(a[1]) && !PyBool_Check(a[1]) ? PyLong_AsLong(a[1]) : 0;
        if (samples < 1 || samples > 100000) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "samples: expected an int in 1..100000");
            return NULL;
        }
    }
    if (a[2] && a[2] != Py_None) {
        if (PyLong_Check(a[2]) && !PyBool_Check(a[2])) seed = PyLong_AsUnsignedLong(a[2]);
        if (!PyLong_Check(a[2]) || PyBool_Check(a[2]) || PyErr_Occurred()) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "seed: expected a non-negative int");
            return NULL;
        }
    }
    if (a[3] && a[3] != Py_None) {
        const char *s = arg_str(a[3], "ref");
        if (!s) return NULL;
        if ((ref = mbs_ref_point_from_name(s)) < 0)
            return PyErr_Format(PyExc_ValueError, "ref: expected 'com', 'origin' or 'joint', got '%s'", s);
    }
    PyArrayObject *q = arg_vector_opt(a[4], mo->nq, "q", mo->m, mbs_coord_name, &ok);
    PyArrayObject *qd = ok ? arg_vector_opt(a[5], mo->nv, "qd", mo->m, mbs_coord_name, &ok) : NULL;
    if (ok && qd && !q) {
        PyErr_SetString(PyExc_ValueError, "check: qd needs q");
        ok = 0;
    }
    mbs_check_report rep;
    mbs_error err = { 0, "" };
    int rc = MBS_OK;
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        rc = mbs_check_derivatives(mo->m, (int)samples, seed, (mbs_ref_point)ref, q ? PyArray_DATA(q) : NULL,
                                   qd ? PyArray_DATA(qd) : NULL, &rep, &err);
        Py_END_ALLOW_THREADS
    }
    Py_XDECREF(q);
    Py_XDECREF(qd);
    if (!ok) return NULL;
    if (rc != MBS_OK) return raise_status(rc, err.msg);
    PyObject *worst = block_dict(rep.worst), *tol = block_dict(rep.tol), *ratio = block_dict(rep.ratio);
    if (worst && tol && ratio) return Py_BuildValue("(iNNNd)", rep.samples, worst, tol, ratio, rep.cond);
    Py_XDECREF(worst);
    Py_XDECREF(tol);
    Py_XDECREF(ratio);
    return NULL;
}

/* ---------------------------------------------------------------- generators */

static PyObject *text_result(char *text, const mbs_error *err)
{
    if (!text) return raise_status(err->code, err->msg);
    PyObject *s = PyUnicode_FromString(text);
    free(text);
    return s;
}

static PyObject *py_generate_chain(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "n", "joint", "floating_base" };
    PyObject *a[3];
    if (parse_args("generate_chain", args, nargs, kwnames, names, 3, 1, 3, a) < 0) return NULL;
    long n = PyLong_Check(a[0]) && !PyBool_Check(a[0]) ? PyLong_AsLong(a[0]) : -1;
    if (n < 0 || n > 1000000) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "n: expected a number of links (int)");
        return NULL;
    }
    const char *joint = a[1] && a[1] != Py_None ? arg_str(a[1], "joint") : "revolute";
    if (!joint) return NULL;
    int jt = mbs_joint_type_from_name(joint);
    if (a[2] && a[2] != Py_None && !PyBool_Check(a[2])) {
        PyErr_SetString(PyExc_TypeError, "floating_base: expected True or False");
        return NULL;
    }
    if (jt < 0) return PyErr_Format(PyExc_ValueError, "joint: expected 'revolute', 'cardan' or 'spherical', got '%s'",
                                    joint);
    mbs_error err = { 0, "" };
    return text_result(mbs_generate_chain_json((int)n, (mbs_joint_type)jt, a[2] == Py_True, &err), &err);
}

static PyObject *py_generate_spline_body(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                         PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "nknots", "tf" };
    PyObject *a[2];
    double tf = 1;
    if (parse_args("generate_spline_body", args, nargs, kwnames, names, 2, 1, 2, a) < 0) return NULL;
    long n = PyLong_Check(a[0]) && !PyBool_Check(a[0]) ? PyLong_AsLong(a[0]) : -1;
    if (n < 0 || n > 100000000) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "nknots: expected a number of knots (int)");
        return NULL;
    }
    if (a[1] && a[1] != Py_None && arg_double(a[1], "tf", &tf) < 0) return NULL;
    mbs_error err = { 0, "" };
    return text_result(mbs_generate_spline_body_json((int)n, tf, &err), &err);
}

PyMethodDef mbspy_run_methods[] = {
    { "_sensitivity", FK_CAST(py_sensitivity), METH_FK,
      "_sensitivity(model, options, objective, history) -> dict (use mbsens.sensitivity)" },
    { "_optimize", FK_CAST(py_optimize), METH_FK,
      "_optimize(model, options, callback, message) -> dict (use mbsens.optimize)" },
    { "_check", FK_CAST(py_check), METH_FK,
      "_check(model, samples, seed, ref, q, qd) -> (samples, worst) (use mbsens.check)" },
    { "generate_chain_json", FK_CAST(py_generate_chain), METH_FK,
      "generate_chain_json(n, joint='revolute', floating_base=False)\n--\n\n"
      "The JSON text of a spatial serial chain of n links (docs/cli.md, generate chain)." },
    { "generate_spline_body_json", FK_CAST(py_generate_spline_body), METH_FK,
      "generate_spline_body_json(nknots, tf=1.0)\n--\n\n"
      "The JSON text of the parameter-count sweep model (a floating body pushed along a spline)." },
    { NULL, NULL, 0, NULL }
};
