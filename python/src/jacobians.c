/*
 * jacobians.c - the Jacobians of include/mbsens/jacobians.h as Data
 * methods (they read the kinematics a call left in the data, like
 * Data.body_pose) and the velocity map of include/mbsens/manifold.h as
 * module functions of (model, q, ...).
 *
 * Sizes: matrices have nv columns, one per velocity in the order of
 * Model.velocity_names; q has nq entries (Model.coord_names).
 */
#include <string.h>

#include "mbspy.h"

static double *D(PyArrayObject *a) { return PyArray_DATA(a); }

/* "world" or "local" (None: world); -1 with ValueError. */
static int axes_arg(PyObject *obj, const char *func, mbs_axes *axes)
{
    *axes = MBS_AXES_WORLD;
    if (!obj || obj == Py_None) return 0;
    const char *s = arg_str(obj, "axes");
    if (!s) return -1;
    if (!strcmp(s, "world")) return 0;
    if (!strcmp(s, "local")) {
        *axes = MBS_AXES_LOCAL;
        return 0;
    }
    PyErr_Format(PyExc_ValueError, "%s: axes: expected 'world' or 'local', got '%s'", func, s);
    return -1;
}

/* Mark the data busy for a call whose result will be res (released on
 * failure); -1 with RuntimeError if a call on it is running. */
static int begin(DataObject *self, PyObject *res)
{
    if (data_acquire(self) == 0) return 0;
    Py_DECREF(res);
    return -1;
}

/* The end of that call with status rc: res, or the library's error. */
static PyObject *done(DataObject *self, const char *func, PyObject *res, int rc)
{
    data_release(self);
    if (rc == MBS_OK) return res;
    Py_DECREF(res);
    return raise_data(self, rc, func);
}

/* (body, point, axes, out) of the frame functions: the body index, the point
 * (NULL: origin) in pt, the axes; -1 on error. */
static int frame_args(DataObject *self, const char *func, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames, double pt[3], const double **point, mbs_axes *axes, PyObject **out)
{
    static const char *const names[] = { "body", "point", "axes", "out" };
    PyObject *a[4];
    if (parse_args(func, args, nargs, kwnames, names, 4, 1, 3, a) < 0) return -1;
    const int body = arg_body(self->model->m, a[0]);
    if (body < 0 || axes_arg(a[2], func, axes) < 0) return -1;
    int ok = 1;
    PyArrayObject *p = arg_vector_opt(a[1], 3, "point", NULL, NULL, &ok);
    if (!ok) return -1;
    *point = NULL;
    if (p) {
        memcpy(pt, PyArray_DATA(p), 3 * sizeof(double));
        *point = pt;
        Py_DECREF(p);
    }
    *out = a[3];
    return body;
}

/* frame_jacobian (dot = 0: J, 6 x nv) and frame_jacobian_dot_v (dot = 1: 6). */
static PyObject *frame(DataObject *self, const char *func, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames, int dot)
{
    double pt[3];
    const double *point;
    mbs_axes axes;
    PyObject *out;
    const int body = frame_args(self, func, args, nargs, kwnames, pt, &point, &axes, &out);
    if (body < 0) return NULL;
    const npy_intp dims[2] = { 6, self->model->nv };
    PyArrayObject *r = arg_out(out, dot ? 1 : 2, dims, "out");
    if (!r || begin(self, (PyObject *)r) < 0) return NULL;
    const mbs_model *m = self->model->m;
    const int rc = dot ? mbs_frame_jacobian_dot_v(m, self->d, body, point, axes, D(r))
                       : mbs_frame_jacobian(m, self->d, body, point, axes, D(r));
    return done(self, func, (PyObject *)r, rc);
}

PyObject *mbspy_data_frame_jacobian(DataObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return frame(self, "frame_jacobian", args, nargs, kwnames, 0);
}

PyObject *mbspy_data_frame_jacobian_dot_v(DataObject *self, PyObject *const *args, Py_ssize_t nargs,
                                          PyObject *kwnames)
{
    return frame(self, "frame_jacobian_dot_v", args, nargs, kwnames, 1);
}

PyObject *mbspy_data_point_jacobian(DataObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = { "point", "out" };
    PyObject *a[2];
    if (parse_args("point_jacobian", args, nargs, kwnames, names, 2, 1, 1, a) < 0) return NULL;
    const int p = arg_point(self->model->m, a[0]);
    if (p < 0) return NULL;
    const npy_intp dims[2] = { 3, self->model->nv };
    PyArrayObject *J = arg_out(a[1], 2, dims, "out");
    if (!J) return NULL;
    if (begin(self, (PyObject *)J) < 0) return NULL;
    const int rc = mbs_point_jacobian(self->model->m, self->d, p, D(J));
    return done(self, "point_jacobian", (PyObject *)J, rc);
}

/* A function of (m, d, matrix rows x nv) or (m, d, vector of n): only out=. */
static PyObject *data_result(DataObject *self, const char *func, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames, int rows, int (*f)(const mbs_model *, mbs_data *, double *))
{
    static const char *const names[] = { "out" };
    PyObject *a[1];
    if (parse_args(func, args, nargs, kwnames, names, 1, 0, 0, a) < 0) return NULL;
    const npy_intp dims[2] = { rows < 0 ? -rows : rows, self->model->nv };
    PyArrayObject *r = arg_out(a[0], rows < 0 ? 1 : 2, dims, "out");
    if (!r) return NULL;
    if (begin(self, (PyObject *)r) < 0) return NULL;
    const int rc = f(self->model->m, self->d, D(r));
    return done(self, func, (PyObject *)r, rc);
}

static int momentum(const mbs_model *m, mbs_data *d, double *h) { return mbs_centroidal_momentum(m, d, h); }
static int momentum_dot_v(const mbs_model *m, mbs_data *d, double *h) { return mbs_centroidal_momentum_dot_v(m, d, h); }

PyObject *mbspy_data_com(DataObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const int nd[3] = { 1, 1, 1 };
    static const npy_intp dims[3][3] = { { 3 }, { 3 }, { 3 } };
    static const char *const what[3] = { "out[0] (position)", "out[1] (velocity)", "out[2] (acceleration)" };
    static const char *const names[] = { "out" };
    PyObject *a[1];
    PyArrayObject *r[3];
    if (parse_args("com", args, nargs, kwnames, names, 1, 0, 0, a) < 0 || arg_outs(a[0], 3, nd, dims, what, r) < 0)
        return NULL;
    PyObject *res = outs_tuple(r, 3);
    if (!res) return NULL;
    if (begin(self, res) < 0) return NULL;
    const int rc = mbs_com(self->model->m, self->d, D(r[0]), D(r[1]), D(r[2]));
    return done(self, "com", res, rc);
}

PyObject *mbspy_data_com_jacobian(DataObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return data_result(self, "com_jacobian", args, nargs, kwnames, 3, mbs_com_jacobian);
}

PyObject *mbspy_data_centroidal_momentum(DataObject *self, PyObject *const *args, Py_ssize_t nargs,
                                         PyObject *kwnames)
{
    return data_result(self, "centroidal_momentum", args, nargs, kwnames, -6, momentum);
}

PyObject *mbspy_data_centroidal_momentum_matrix(DataObject *self, PyObject *const *args, Py_ssize_t nargs,
                                                PyObject *kwnames)
{
    return data_result(self, "centroidal_momentum_matrix", args, nargs, kwnames, 6, mbs_centroidal_momentum_matrix);
}

PyObject *mbspy_data_centroidal_momentum_dot_v(DataObject *self, PyObject *const *args, Py_ssize_t nargs,
                                               PyObject *kwnames)
{
    return data_result(self, "centroidal_momentum_dot_v", args, nargs, kwnames, -6, momentum_dot_v);
}

/* ---------------------------------------------------------------- the velocity map */

static PyObject *py_velocity_map(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "q", "out" };
    PyObject *a[3];
    if (parse_args("velocity_map", args, nargs, kwnames, names, 3, 2, 2, a) < 0) return NULL;
    ModelObject *mo = arg_model("velocity_map", a[0]);
    if (!mo) return NULL;
    PyArrayObject *q = arg_vector(a[1], mo->nq, "q", mo->m, mbs_coord_name);
    if (!q) return NULL;
    const npy_intp dims[2] = { mo->nq, mo->nv };
    PyArrayObject *T = arg_out(a[2], 2, dims, "out");
    if (T) mbs_velocity_map(mo->m, PyArray_DATA(q), D(T));
    Py_DECREF(q);
    return (PyObject *)T;
}

/* (model, q, x, xd): rates = 1 (qd, qdd from v, vd) or 0 (v, vd from qd, qdd). */
static PyObject *velocity_map_apply(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const char *func,
                                    const char *const *names, int rates)
{
    PyObject *a[4];
    if (parse_args(func, args, nargs, kwnames, names, 4, 3, 4, a) < 0) return NULL;
    ModelObject *mo = arg_model(func, a[0]);
    if (!mo) return NULL;
    const npy_intp nin = rates ? mo->nv : mo->nq, nout = rates ? mo->nq : mo->nv;
    entry_name_fn in_names = rates ? mbs_vel_name : mbs_coord_name;
    int ok = 1;
    PyArrayObject *q = arg_vector(a[1], mo->nq, "q", mo->m, mbs_coord_name);
    PyArrayObject *x = q ? arg_vector(a[2], nin, names[2], mo->m, in_names) : NULL;
    PyArrayObject *xd = x ? arg_vector_opt(a[3], nin, names[3], mo->m, in_names, &ok) : NULL;
    npy_intp n = nout;
    PyObject *y = x && ok ? PyArray_SimpleNew(1, &n, NPY_DOUBLE) : NULL;
    PyObject *yd = y && xd ? PyArray_SimpleNew(1, &n, NPY_DOUBLE) : NULL;
    int rc = MBS_ERR_ARG;
    if (y && (!xd || yd)) {
        const double *xdd = xd ? PyArray_DATA(xd) : NULL;
        double *Y = D((PyArrayObject *)y), *YD = yd ? D((PyArrayObject *)yd) : NULL;
        rc = rates ? mbs_rates_from_velocity(mo->m, PyArray_DATA(q), PyArray_DATA(x), xdd, Y, YD)
                   : mbs_velocity_from_rates(mo->m, PyArray_DATA(q), PyArray_DATA(x), xdd, Y, YD);
    }
    Py_XDECREF(q);
    Py_XDECREF(x);
    Py_XDECREF(xd);
    if (rc != MBS_OK) {
        Py_XDECREF(y);
        Py_XDECREF(yd);
        return PyErr_Occurred() ? NULL : raise_status(rc, func);
    }
    return Py_BuildValue("(NN)", y, yd ? yd : Py_NewRef(Py_None));
}

static PyObject *py_rates_from_velocity(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "q", "v", "vd" };
    return velocity_map_apply(args, nargs, kwnames, "rates_from_velocity", names, 1);
}

static PyObject *py_velocity_from_rates(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    static const char *const names[] = { "model", "q", "qd", "qdd" };
    return velocity_map_apply(args, nargs, kwnames, "velocity_from_rates", names, 0);
}

PyMethodDef mbspy_manifold_methods[] = {
    { "velocity_map", FK_CAST(py_velocity_map), METH_FK,
      "velocity_map(model, q, *, out=None)\n--\n\n"
      "T(q) (nq, nv): the rates of the coordinates qd = T(q) v (mbsens/manifold.h); the identity for\n"
      "joints whose velocities are the rates of their coordinates." },
    { "rates_from_velocity", FK_CAST(py_rates_from_velocity), METH_FK,
      "rates_from_velocity(model, q, v, vd=None)\n--\n\n"
      "(qd, qdd): qd = T(q) v and, given vd, qdd = T(q) vd + Tdot v (nq each; qdd None without vd)." },
    { "velocity_from_rates", FK_CAST(py_velocity_from_rates), METH_FK,
      "velocity_from_rates(model, q, qd, qdd=None)\n--\n\n"
      "(v, vd): v = T^+ qd and, given qdd, vd = T^+ (qdd - Tdot v) (nv each; vd None without qdd)." },
    { NULL, NULL, 0, NULL }
};
