/*
 * dynamics.c - the per-instant functions: kinematics, inverse dynamics, mass
 * matrix, bias forces, forward dynamics and every derivative of
 * include/mbsens/derivatives.h, each with an optional out= (one array, or a
 * tuple of arrays in the order of the C function's outputs).
 *
 * Sizes: q has nq entries; qd, qdd, tau and their directions nv; the
 * derivative matrices have nv rows and nv columns for the state (nparams for
 * the parameters).
 *
 * Every call takes (model, data, inputs...): the inputs are checked (shape,
 * dtype, finite values) before the library runs; the GIL is released while
 * it does, so separate Data objects compute in parallel.
 */
#include <stdio.h>
#include <string.h>

#include "mbspy.h"

/* The checked arguments of one call. */
typedef struct {
    ModelObject *mo;
    DataObject *d;
    PyArrayObject *in[8];   /* inputs in the order of the spec; NULL: absent (optional) */
    int nin;
    mbs_fd_algorithm alg;
    PyObject *out;          /* borrowed */
} call;

static const double *IN(const call *c, int k) { return c->in[k] ? PyArray_DATA(c->in[k]) : NULL; }
static double *OUT(PyArrayObject *a) { return PyArray_DATA(a); }

static void call_end(call *c)
{
    for (int k = 0; k < c->nin; k++) Py_CLEAR(c->in[k]);
    if (c->d) data_release(c->d);
    c->d = NULL;
}

static int algorithm_arg(PyObject *obj, mbs_fd_algorithm *alg)
{
    *alg = MBS_FD_RECURSIVE;
    if (!obj || obj == Py_None) return 0;
    const char *s = arg_str(obj, "algorithm");
    if (!s) return -1;
    int a = mbs_fd_algorithm_from_name(s);
    if (a < 0) {
        PyErr_Format(PyExc_ValueError, "algorithm: expected 'fr' (fully recursive) or 'semi' (semi-recursive), "
                                       "got '%s'", s);
        return -1;
    }
    *alg = (mbs_fd_algorithm)a;
    return 0;
}

/* Parse (model, data, inputs..., [algorithm], out). names: "model", "data",
 * the inputs, then "algorithm" if with_alg, then "out". spec has one letter
 * per input: q (nq entries), v (nv), p (nparams); upper case: optional.
 * Marks the data busy; call_end releases it. */
static int call_begin(call *c, const char *func, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                      const char *const *names, const char *spec, int with_alg)
{
    memset(c, 0, sizeof *c);
    const int nin = (int)strlen(spec), n = 2 + nin + with_alg + 1;
    PyObject *a[12];
    int nreq = 2;
    while (nreq - 2 < nin && spec[nreq - 2] >= 'a') nreq++;
    if (parse_args(func, args, nargs, kwnames, names, n, nreq, 2 + nin, a) < 0) return -1;
    ModelObject *mo;
    DataObject *d;
    if (check_model_data(func, a[0], a[1], &mo, &d) < 0) return -1;
    if (with_alg && algorithm_arg(a[2 + nin], &c->alg) < 0) return -1;
    c->mo = mo;
    c->out = a[n - 1];
    for (int k = 0; k < nin; k++) {
        const char kind = (char)(spec[k] | 0x20);
        const npy_intp len = kind == 'q' ? mo->nq : kind == 'v' ? mo->nv : mo->nparams;
        entry_name_fn nm = kind == 'p' ? mbs_param_name : kind == 'v' ? mbs_vel_name : mbs_coord_name;
        int ok = 1;
        c->in[k] = arg_vector_opt(a[2 + k], len, names[2 + k], mo->m, nm, &ok);
        c->nin = k + 1;
        if (!ok) {
            call_end(c);
            return -1;
        }
    }
    if (data_acquire(d) < 0) {
        call_end(c);
        return -1;
    }
    c->d = d;
    return 0;
}

/* Run `stmt` (assigning rc) without the GIL. */
#define NOGIL(stmt) do { Py_BEGIN_ALLOW_THREADS stmt; Py_END_ALLOW_THREADS } while (0)

/* The result of a call: `res` (a new reference) or the library's error. */
static PyObject *call_finish(call *c, int rc, const char *func, PyObject *res)
{
    DataObject *d = c->d;
    call_end(c);
    if (rc != MBS_OK) {
        Py_XDECREF(res);
        return raise_data(d, rc, func);
    }
    if (res && result_finite(res, func) < 0) Py_CLEAR(res);
    return res;
}

/* ---------------------------------------------------------------- kinematics, ID, M, FD */

static PyObject *py_kinematics(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "data", "q", "qd", "qdd", "out" };
    call c;
    if (call_begin(&c, "kinematics", args, nargs, kwnames, names, "qVV", 0) < 0) return NULL;
    if (c.out) {
        call_end(&c);
        PyErr_SetString(PyExc_TypeError, "kinematics() got an unexpected keyword argument 'out'");
        return NULL;
    }
    int rc;
    NOGIL(rc = mbs_kinematics(c.mo->m, c.d->d, IN(&c, 0), IN(&c, 1), IN(&c, 2)));
    return call_finish(&c, rc, "kinematics", Py_NewRef(Py_None));
}

static PyObject *py_inverse_dynamics(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "data", "q", "qd", "qdd", "out" };
    call c;
    if (call_begin(&c, "inverse_dynamics", args, nargs, kwnames, names, "qvv", 0) < 0) return NULL;
    const npy_intp nv = c.mo->nv;
    PyArrayObject *tau = arg_out(c.out, 1, &nv, "out");
    if (!tau) {
        call_end(&c);
        return NULL;
    }
    int rc;
    NOGIL(rc = mbs_inverse_dynamics(c.mo->m, c.d->d, IN(&c, 0), IN(&c, 1), IN(&c, 2), OUT(tau)));
    return call_finish(&c, rc, "inverse_dynamics", (PyObject *)tau);
}

static PyObject *py_mass_matrix(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "data", "q", "out" };
    call c;
    if (call_begin(&c, "mass_matrix", args, nargs, kwnames, names, "q", 0) < 0) return NULL;
    const npy_intp dims[2] = { c.mo->nv, c.mo->nv };
    PyArrayObject *M = arg_out(c.out, 2, dims, "out");
    if (!M) {
        call_end(&c);
        return NULL;
    }
    int rc;
    NOGIL(rc = mbs_mass_matrix(c.mo->m, c.d->d, IN(&c, 0), OUT(M)));
    return call_finish(&c, rc, "mass_matrix", (PyObject *)M);
}

static PyObject *py_bias_forces(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "data", "q", "qd", "out" };
    call c;
    if (call_begin(&c, "bias_forces", args, nargs, kwnames, names, "qv", 0) < 0) return NULL;
    const npy_intp nv = c.mo->nv;
    PyArrayObject *h = arg_out(c.out, 1, &nv, "out");
    if (!h) {
        call_end(&c);
        return NULL;
    }
    int rc;
    NOGIL(rc = mbs_bias_forces(c.mo->m, c.d->d, IN(&c, 0), IN(&c, 1), OUT(h)));
    return call_finish(&c, rc, "bias_forces", (PyObject *)h);
}

static PyObject *py_forward_dynamics(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "data", "q", "qd", "tau", "algorithm", "out" };
    call c;
    if (call_begin(&c, "forward_dynamics", args, nargs, kwnames, names, "qvV", 1) < 0) return NULL;
    const npy_intp nv = c.mo->nv;
    PyArrayObject *qdd = arg_out(c.out, 1, &nv, "out");
    if (!qdd) {
        call_end(&c);
        return NULL;
    }
    int rc;
    NOGIL(rc = mbs_forward_dynamics(c.mo->m, c.d->d, c.alg, IN(&c, 0), IN(&c, 1), IN(&c, 2), OUT(qdd)));
    return call_finish(&c, rc, "forward_dynamics", (PyObject *)qdd);
}

/* ---------------------------------------------------------------- derivatives */

/* k outputs: vectors (nv) where cols[i] < 0, else matrices nv x cols[i]. */
static int deriv_outs(call *c, int k, const npy_intp *cols, const char *const *what, PyArrayObject **r)
{
    int nd[4];
    npy_intp dims[4][3];
    for (int i = 0; i < k; i++) {
        nd[i] = cols[i] < 0 ? 1 : 2;
        dims[i][0] = c->mo->nv;
        dims[i][1] = cols[i];
    }
    if (arg_outs(c->out, k, nd, (const npy_intp(*)[3])dims, what, r) < 0) {
        call_end(c);
        return -1;
    }
    return 0;
}

static PyObject *py_id_derivatives(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "data", "q", "qd", "qdd", "out" };
    static const char *const what[] = { "out[0] (tau)", "out[1] (dtau_dq)", "out[2] (dtau_dqd)" };
    call c;
    PyArrayObject *r[3];
    if (call_begin(&c, "inverse_dynamics_derivatives", args, nargs, kwnames, names, "qvv", 0) < 0) return NULL;
    const npy_intp cols[3] = { -1, c.mo->nv, c.mo->nv };
    if (deriv_outs(&c, 3, cols, what, r) < 0) return NULL;
    int rc;
    NOGIL(rc = mbs_inverse_dynamics_derivatives(c.mo->m, c.d->d, IN(&c, 0), IN(&c, 1), IN(&c, 2), OUT(r[0]),
                                                OUT(r[1]), OUT(r[2])));
    return call_finish(&c, rc, "inverse_dynamics_derivatives", outs_tuple(r, 3));
}

static PyObject *py_id_param_derivatives(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                         PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "data", "q", "qd", "qdd", "out" };
    call c;
    if (call_begin(&c, "inverse_dynamics_param_derivatives", args, nargs, kwnames, names, "qvv", 0) < 0)
        return NULL;
    const npy_intp dims[2] = { c.mo->nv, c.mo->nparams };
    PyArrayObject *J = arg_out(c.out, 2, dims, "out");
    if (!J) {
        call_end(&c);
        return NULL;
    }
    int rc;
    NOGIL(rc = mbs_inverse_dynamics_param_derivatives(c.mo->m, c.d->d, IN(&c, 0), IN(&c, 1), IN(&c, 2), OUT(J)));
    return call_finish(&c, rc, "inverse_dynamics_param_derivatives", (PyObject *)J);
}

static PyObject *py_id_directional(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "data", "q", "qd", "qdd", "dq", "dqd", "dqdd", "drho", "out" };
    call c;
    if (call_begin(&c, "inverse_dynamics_directional", args, nargs, kwnames, names, "qvvVVVP", 0) < 0) return NULL;
    const npy_intp nv = c.mo->nv;
    PyArrayObject *dtau = arg_out(c.out, 1, &nv, "out");
    if (!dtau) {
        call_end(&c);
        return NULL;
    }
    int rc;
    NOGIL(rc = mbs_inverse_dynamics_directional(c.mo->m, c.d->d, IN(&c, 0), IN(&c, 1), IN(&c, 2), IN(&c, 3),
                                                IN(&c, 4), IN(&c, 5), IN(&c, 6), OUT(dtau)));
    return call_finish(&c, rc, "inverse_dynamics_directional", (PyObject *)dtau);
}

static PyObject *py_fd_derivatives(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "data", "q", "qd", "tau", "algorithm", "out" };
    static const char *const what[] = { "out[0] (qdd)", "out[1] (dqdd_dq)", "out[2] (dqdd_dqd)",
                                        "out[3] (dqdd_dtau)" };
    call c;
    PyArrayObject *r[4];
    if (call_begin(&c, "forward_dynamics_derivatives", args, nargs, kwnames, names, "qvV", 1) < 0) return NULL;
    const npy_intp cols[4] = { -1, c.mo->nv, c.mo->nv, c.mo->nv };
    if (deriv_outs(&c, 4, cols, what, r) < 0) return NULL;
    int rc;
    NOGIL(rc = mbs_forward_dynamics_derivatives(c.mo->m, c.d->d, c.alg, IN(&c, 0), IN(&c, 1), IN(&c, 2), OUT(r[0]),
                                                OUT(r[1]), OUT(r[2]), OUT(r[3])));
    return call_finish(&c, rc, "forward_dynamics_derivatives", outs_tuple(r, 4));
}

static PyObject *py_fd_param_derivatives(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                         PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "data", "q", "qd", "tau", "algorithm", "out" };
    static const char *const what[] = { "out[0] (qdd)", "out[1] (dqdd_drho)" };
    call c;
    PyArrayObject *r[2];
    if (call_begin(&c, "forward_dynamics_param_derivatives", args, nargs, kwnames, names, "qvV", 1) < 0)
        return NULL;
    const npy_intp cols[2] = { -1, c.mo->nparams };
    if (deriv_outs(&c, 2, cols, what, r) < 0) return NULL;
    int rc;
    NOGIL(rc = mbs_forward_dynamics_param_derivatives(c.mo->m, c.d->d, c.alg, IN(&c, 0), IN(&c, 1), IN(&c, 2),
                                                      OUT(r[0]), OUT(r[1])));
    return call_finish(&c, rc, "forward_dynamics_param_derivatives", outs_tuple(r, 2));
}

static PyObject *py_fd_directional(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "data", "q", "qd", "tau", "dq", "dqd", "dtau", "drho",
                                         "algorithm", "out" };
    static const char *const what[] = { "out[0] (qdd)", "out[1] (dqdd)" };
    call c;
    PyArrayObject *r[2];
    if (call_begin(&c, "forward_dynamics_directional", args, nargs, kwnames, names, "qvVVVVP", 1) < 0) return NULL;
    const npy_intp cols[2] = { -1, -1 };
    if (deriv_outs(&c, 2, cols, what, r) < 0) return NULL;
    int rc;
    NOGIL(rc = mbs_forward_dynamics_directional(c.mo->m, c.d->d, c.alg, IN(&c, 0), IN(&c, 1), IN(&c, 2), IN(&c, 3),
                                                IN(&c, 4), IN(&c, 5), IN(&c, 6), OUT(r[0]), OUT(r[1])));
    return call_finish(&c, rc, "forward_dynamics_directional", outs_tuple(r, 2));
}

/* ---------------------------------------------------------------- state utilities (no Data) */

static PyObject *py_normalize_state(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "q", "qd" };
    PyObject *a[3];
    if (parse_args("normalize_state", args, nargs, kwnames, names, 3, 2, 3, a) < 0) return NULL;
    if (!arg_model("normalize_state", a[0])) return NULL;
    ModelObject *mo = (ModelObject *)a[0];
    int ok = 1;
    PyArrayObject *q = arg_vector(a[1], mo->nq, "q", mo->m, mbs_coord_name);
    PyArrayObject *qd = q ? arg_vector_opt(a[2], mo->nv, "qd", mo->m, mbs_vel_name, &ok) : NULL;
    PyObject *qn = q && ok ? vec_new(mo->nq, PyArray_DATA(q)) : NULL;
    PyObject *qdn = qd && qn ? vec_new(mo->nv, PyArray_DATA(qd)) : NULL;
    Py_XDECREF(q);
    Py_XDECREF(qd);
    if (!qn || (qd && !qdn)) {
        Py_XDECREF(qn);
        return NULL;
    }
    int rc = mbs_normalize_state(mo->m, PyArray_DATA((PyArrayObject *)qn),
                                 qdn ? PyArray_DATA((PyArrayObject *)qdn) : NULL);
    if (rc != MBS_OK) {
        Py_DECREF(qn);
        Py_XDECREF(qdn);
        return raise_status(rc, "normalize_state: an Euler-parameter quadruple is zero or not finite");
    }
    return Py_BuildValue("(NN)", qn, qdn ? qdn : Py_NewRef(Py_None));
}

/* Euler-parameter maps: (p, x) -> y with x, y of lengths nx, ny. */
static PyObject *euler_map(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const char *func,
                           const char *const *names, int nx, int ny, int inverse)
{
    PyObject *a[2];
    if (parse_args(func, args, nargs, kwnames, names, 2, 2, 2, a) < 0) return NULL;
    PyArrayObject *p = arg_vector(a[0], 4, names[0], NULL, NULL);
    PyArrayObject *x = p ? arg_vector(a[1], nx, names[1], NULL, NULL) : NULL;
    double y[4];
    int rc = MBS_ERR_ARG;
    if (x) rc = inverse ? mbs_euler_rates_from_omega(PyArray_DATA(p), PyArray_DATA(x), y)
                        : mbs_euler_omega_from_rates(PyArray_DATA(p), PyArray_DATA(x), y);
    Py_XDECREF(p);
    if (!x) return NULL;
    Py_DECREF(x);
    if (rc != MBS_OK)   /* the library's only failure: a result that is not finite */
        return raise_status(rc, inverse ? "Euler rates: pdot is not finite" : "Euler rates: w is not finite");
    return vec_new(ny, y);
}

static PyObject *py_euler_omega_from_rates(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                           PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "p", "pdot" };
    return euler_map(args, nargs, kwnames, "euler_omega_from_rates", names, 4, 3, 0);
}

static PyObject *py_euler_rates_from_omega(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                           PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "p", "omega" };
    return euler_map(args, nargs, kwnames, "euler_rates_from_omega", names, 3, 4, 1);
}

PyMethodDef mbspy_dynamics_methods[] = {
    { "kinematics", FK_CAST(py_kinematics), METH_FK,
      "kinematics(model, data, q, qd=None, qdd=None)\n--\n\n"
      "Positions, velocities and accelerations of every body (qd, qdd None: zero), kept in data for its\n"
      "queries (Data.body_pose, Data.point, ...)." },
    { "inverse_dynamics", FK_CAST(py_inverse_dynamics), METH_FK,
      "inverse_dynamics(model, data, q, qd, qdd, *, out=None)\n--\n\n"
      "tau = M(q) qdd - Q(q, qd) by recursive Newton-Euler (nv). Also leaves the kinematics in data." },
    { "mass_matrix", FK_CAST(py_mass_matrix), METH_FK,
      "mass_matrix(model, data, q, *, out=None)\n--\n\nM(q) by composite inertias (nv, nv), full and symmetric." },
    { "bias_forces", FK_CAST(py_bias_forces), METH_FK,
      "bias_forces(model, data, q, qd, *, out=None)\n--\n\nh(q, qd) = -Q(q, qd): inverse dynamics with qdd = 0." },
    { "forward_dynamics", FK_CAST(py_forward_dynamics), METH_FK,
      "forward_dynamics(model, data, q, qd, tau=None, *, algorithm='fr', out=None)\n--\n\n"
      "qdd solving M qdd = Q + tau: algorithm 'fr' (fully recursive, articulated bodies) or 'semi'\n"
      "(composite inertias and Cholesky). The reference point is data.ref." },
    { "inverse_dynamics_derivatives", FK_CAST(py_id_derivatives), METH_FK,
      "inverse_dynamics_derivatives(model, data, q, qd, qdd, *, out=None)\n--\n\n"
      "(tau, dtau_dq, dtau_dqd), the matrices (nv, nv). dtau/dqdd is the mass matrix." },
    { "inverse_dynamics_param_derivatives", FK_CAST(py_id_param_derivatives), METH_FK,
      "inverse_dynamics_param_derivatives(model, data, q, qd, qdd, *, out=None)\n--\n\n"
      "dtau/drho (nv, nparams) for the model's design parameters." },
    { "inverse_dynamics_directional", FK_CAST(py_id_directional), METH_FK,
      "inverse_dynamics_directional(model, data, q, qd, qdd, dq=None, dqd=None, dqdd=None, drho=None, *, "
      "out=None)\n--\n\n"
      "The derivative of inverse dynamics along a direction of the state and parameters (None: zero)." },
    { "forward_dynamics_derivatives", FK_CAST(py_fd_derivatives), METH_FK,
      "forward_dynamics_derivatives(model, data, q, qd, tau=None, *, algorithm='fr', out=None)\n--\n\n"
      "(qdd, dqdd_dq, dqdd_dqd, dqdd_dtau), the matrices (nv, nv)." },
    { "forward_dynamics_param_derivatives", FK_CAST(py_fd_param_derivatives), METH_FK,
      "forward_dynamics_param_derivatives(model, data, q, qd, tau=None, *, algorithm='fr', out=None)\n--\n\n"
      "(qdd, dqdd_drho), the latter (nv, nparams)." },
    { "forward_dynamics_directional", FK_CAST(py_fd_directional), METH_FK,
      "forward_dynamics_directional(model, data, q, qd, tau=None, dq=None, dqd=None, dtau=None, drho=None, *,\n"
      "                             algorithm='fr', out=None)\n--\n\n"
      "(qdd, dqdd): forward dynamics and its derivative along a direction (None: zero)." },
    { "normalize_state", FK_CAST(py_normalize_state), METH_FK,
      "normalize_state(model, q, qd=None)\n--\n\n"
      "(q, qd) projected onto the Euler-parameter manifold (new arrays; qd None gives None)." },
    { "euler_omega_from_rates", FK_CAST(py_euler_omega_from_rates), METH_FK,
      "euler_omega_from_rates(p, pdot)\n--\n\nw = 2 E(p) pdot (|p| = 1)." },
    { "euler_rates_from_omega", FK_CAST(py_euler_rates_from_omega), METH_FK,
      "euler_rates_from_omega(p, omega)\n--\n\npdot = 1/2 E(p)^T w (|p| = 1)." },
    { NULL, NULL, 0, NULL }
};
