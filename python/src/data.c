/*
 * data.c - mbsens.Data: the workspace of one thread (an mbs_data), its
 * settings (reference point, frames of the fully recursive algorithm, time),
 * applied loads, and the results of the last kinematics: body poses,
 * velocities and accelerations, named points and vectors, energies.
 */
#include <string.h>

#include "mbspy.h"

static PyObject *Data_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = { "model", NULL };
    PyObject *model;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!:Data", kw, &Model_Type, &model)) return NULL;
    mbs_error err = { 0, "" };
    mbs_data *d = mbs_data_create(((ModelObject *)model)->m, &err);
    if (!d) return raise_status(err.code, err.msg);
    DataObject *o = (DataObject *)type->tp_alloc(type, 0);
    if (!o) {
        mbs_data_free(d);
        return NULL;
    }
    o->model = (ModelObject *)Py_NewRef(model);
    o->d = d;
    o->busy = 0;
    return (PyObject *)o;
}

static void Data_dealloc(DataObject *o)
{
    mbs_data_free(o->d);
    Py_XDECREF(o->model);
    Py_TYPE(o)->tp_free((PyObject *)o);
}

/* ---------------------------------------------------------------- settings */

static PyObject *Data_get_model(DataObject *self, void *c)
{
    (void)c;
    return Py_NewRef((PyObject *)self->model);
}

static PyObject *Data_get_ref(DataObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(mbs_ref_point_name(mbs_data_ref(self->d)));
}

static int Data_set_ref(DataObject *self, PyObject *v, void *c)
{
    (void)c;
    const char *s = v ? arg_str(v, "ref") : NULL;
    if (!s) {
        if (!v) PyErr_SetString(PyExc_AttributeError, "ref cannot be deleted");
        return -1;
    }
    int r = mbs_ref_point_from_name(s);
    if (r < 0) {
        PyErr_Format(PyExc_ValueError, "ref: expected 'com', 'origin' or 'joint', got '%s'", s);
        return -1;
    }
    if (data_acquire(self) < 0) return -1;
    mbs_data_set_ref(self->d, (mbs_ref_point)r);
    data_release(self);
    return 0;
}

static PyObject *Data_get_fr_frames(DataObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(mbs_data_fr_frames(self->d) == MBS_FR_GLOBAL ? "global" : "joint");
}

static int Data_set_fr_frames(DataObject *self, PyObject *v, void *c)
{
    (void)c;
    const char *s = v ? arg_str(v, "fr_frames") : NULL;
    if (!s) {
        if (!v) PyErr_SetString(PyExc_AttributeError, "fr_frames cannot be deleted");
        return -1;
    }
    int global = strcmp(s, "global") == 0;
    if (!global && strcmp(s, "joint") != 0) {
        PyErr_Format(PyExc_ValueError, "fr_frames: expected 'joint' or 'global', got '%s'", s);
        return -1;
    }
    if (data_acquire(self) < 0) return -1;
    mbs_data_set_fr_frames(self->d, global ? MBS_FR_GLOBAL : MBS_FR_JOINT_FRAMES);
    data_release(self);
    return 0;
}

static PyObject *Data_get_time(DataObject *self, void *c)
{
    (void)c;
    return PyFloat_FromDouble(mbs_data_time(self->d));
}

static int Data_set_time(DataObject *self, PyObject *v, void *c)
{
    (void)c;
    double t;
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "time cannot be deleted");
        return -1;
    }
    if (arg_double(v, "time", &t) < 0 || data_acquire(self) < 0) return -1;
    mbs_data_set_time(self->d, t);
    data_release(self);
    return 0;
}

static PyObject *Data_get_error(DataObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(mbs_data_error(self->d));
}

/* A writeable view of the joint loads (nv), kept alive with the Data. */
static PyObject *Data_get_joint_load(DataObject *self, void *c)
{
    (void)c;
    npy_intp n = self->model->nv;
    PyObject *a = PyArray_SimpleNewFromData(1, &n, NPY_DOUBLE, mbs_data_joint_load(self->d));
    if (!a) return NULL;
    if (PyArray_SetBaseObject((PyArrayObject *)a, Py_NewRef((PyObject *)self)) < 0) {
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

static int Data_set_joint_load(DataObject *self, PyObject *v, void *c)
{
    (void)c;
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "joint_load cannot be deleted (assign zeros)");
        return -1;
    }
    PyArrayObject *a = arg_vector(v, self->model->nv, "joint_load", self->model->m, mbs_coord_name);
    if (!a) return -1;
    if (data_acquire(self) < 0) {
        Py_DECREF(a);
        return -1;
    }
    memcpy(mbs_data_joint_load(self->d), PyArray_DATA(a), (size_t)self->model->nv * sizeof(double));
    data_release(self);
    Py_DECREF(a);
    return 0;
}

PyGetSetDef mbspy_data_getset[] = {
    { "model", (getter)Data_get_model, NULL, "The model of this Data.", NULL },
    { "ref", (getter)Data_get_ref, (setter)Data_set_ref,
      "Reference point of the recursions: 'com' (default), 'origin' or 'joint'. Results do not depend on it\n"
      "(to round-off); it selects the formulation.", NULL },
    { "fr_frames", (getter)Data_get_fr_frames, (setter)Data_set_fr_frames,
      "Frames of the fully recursive forward dynamics: 'joint' (default) or 'global'.", NULL },
    { "time", (getter)Data_get_time, (setter)Data_set_time,
      "Time at which time-dependent loads are evaluated (default 0).", NULL },
    { "error", (getter)Data_get_error, NULL, "The message of the last failed call on this Data ('' if none).", NULL },
    { "joint_load", (getter)Data_get_joint_load, (setter)Data_set_joint_load,
      "Generalized forces applied on the coordinates (nv): a writeable view; kept until changed.", NULL },
    { NULL, NULL, NULL, NULL, NULL }
};

/* ---------------------------------------------------------------- loads */

static PyObject *Data_clear_loads(DataObject *self, PyObject *unused)
{
    (void)unused;
    if (data_acquire(self) < 0) return NULL;
    mbs_data_clear_loads(self->d);
    data_release(self);
    Py_RETURN_NONE;
}

static PyObject *Data_add_body_load(DataObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = { "body", "force", "torque", "point" };
    PyObject *a[4];
    if (parse_args("add_body_load", args, nargs, kwnames, names, 4, 2, 4, a) < 0) return NULL;
    int body = arg_body(self->model->m, a[0]), ok = body >= 0;
    if (ok && body == 0) {
        PyErr_SetString(PyExc_ValueError, "add_body_load: the ground (body 0) carries no load");
        ok = 0;
    }
    PyArrayObject *f = ok ? arg_vector(a[1], 3, "force", NULL, NULL) : NULL;
    ok = ok && f;
    PyArrayObject *n = ok ? arg_vector_opt(a[2], 3, "torque", NULL, NULL, &ok) : NULL;
    PyArrayObject *p = ok ? arg_vector_opt(a[3], 3, "point", NULL, NULL, &ok) : NULL;
    int rc = MBS_OK;
    if (ok && (ok = data_acquire(self) == 0)) {
        rc = mbs_data_add_body_load(self->d, body, p ? PyArray_DATA(p) : NULL, PyArray_DATA(f),
                                    n ? PyArray_DATA(n) : NULL);
        data_release(self);
    }
    Py_XDECREF(f);
    Py_XDECREF(n);
    Py_XDECREF(p);
    if (!ok) return NULL;
    if (rc != MBS_OK) return raise_data(self, rc, "add_body_load");
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------- kinematics results */

/* k outputs of shape (3,) (or the shapes given), out= as a tuple. */
static int outs3(PyObject *out, int k, const char *const *what, PyArrayObject **res)
{
    static const int nd[3] = { 1, 1, 1 };
    static const npy_intp dims[3][3] = { { 3 }, { 3 }, { 3 } };
    return arg_outs(out, k, nd, dims, what, res);
}

static double *D(PyArrayObject *a) { return PyArray_DATA(a); }

/* (index, out) of a query on one body, point or vector (`what`: the name of
 * its argument); -1 on error. */
static int query_args(DataObject *self, const char *func, const char *what, PyObject *const *args,
                      Py_ssize_t nargs, PyObject *kwnames, int (*index)(const mbs_model *, PyObject *),
                      PyObject **out)
{
    const char *const names[] = { what, "out" };
    PyObject *a[2];
    if (parse_args(func, args, nargs, kwnames, names, 2, 1, 1, a) < 0) return -1;
    *out = a[1];
    if (self->busy) return data_acquire(self);   /* raises */
    return index(self->model->m, a[0]);
}

static PyObject *Data_body_pose(DataObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const int nd[2] = { 2, 1 };
    static const npy_intp dims[2][3] = { { 3, 3 }, { 3 } };
    static const char *const what[2] = { "out[0] (rotation)", "out[1] (origin)" };
    PyObject *out;
    PyArrayObject *r[2];
    int b = query_args(self, "body_pose", "body", args, nargs, kwnames, arg_body, &out);
    if (b < 0 || arg_outs(out, 2, nd, dims, what, r) < 0) return NULL;
    mbs_body_pose(self->d, b, D(r[0]), D(r[1]));
    return outs_tuple(r, 2);
}

static PyObject *Data_body_com(DataObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const npy_intp dim = 3;
    PyObject *out;
    int b = query_args(self, "body_com", "body", args, nargs, kwnames, arg_body, &out);
    PyArrayObject *r = b < 0 ? NULL : arg_out(out, 1, &dim, "out");
    if (!r) return NULL;
    mbs_body_com(self->d, b, D(r));
    return (PyObject *)r;
}

static PyObject *Data_body_velocity(DataObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const what[2] = { "out[0] (velocity)", "out[1] (angular velocity)" };
    PyObject *out;
    PyArrayObject *r[2];
    int b = query_args(self, "body_velocity", "body", args, nargs, kwnames, arg_body, &out);
    if (b < 0 || outs3(out, 2, what, r) < 0) return NULL;
    mbs_body_velocity(self->d, b, D(r[0]), D(r[1]));
    return outs_tuple(r, 2);
}

static PyObject *Data_body_acceleration(DataObject *self, PyObject *const *args, Py_ssize_t nargs,
                                        PyObject *kwnames)
{
    static const char *const what[2] = { "out[0] (acceleration)", "out[1] (angular acceleration)" };
    PyObject *out;
    PyArrayObject *r[2];
    int b = query_args(self, "body_acceleration", "body", args, nargs, kwnames, arg_body, &out);
    if (b < 0 || outs3(out, 2, what, r) < 0) return NULL;
    mbs_body_acceleration(self->d, b, D(r[0]), D(r[1]));
    return outs_tuple(r, 2);
}

static const char *const RVA[3] = { "out[0] (position)", "out[1] (velocity)", "out[2] (acceleration)" };

static PyObject *Data_body_point(DataObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = { "body", "local", "out" };
    PyObject *a[3];
    PyArrayObject *r[3];
    if (parse_args("body_point", args, nargs, kwnames, names, 3, 2, 2, a) < 0 || data_acquire(self) < 0)
        return NULL;
    data_release(self);
    int b = arg_body(self->model->m, a[0]);
    PyArrayObject *local = b < 0 ? NULL : arg_vector(a[1], 3, "local", NULL, NULL);
    if (!local || outs3(a[2], 3, RVA, r) < 0) {
        Py_XDECREF(local);
        return NULL;
    }
    mbs_body_point(self->d, b, D(local), D(r[0]), D(r[1]), D(r[2]));
    Py_DECREF(local);
    /* finite for local coordinates up to 1e15 (kinematics.h); beyond, an error */
    PyObject *res = outs_tuple(r, 3);
    if (res && result_finite(res, "body_point") < 0) Py_CLEAR(res);
    return res;
}

static PyObject *Data_point(DataObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *out;
    PyArrayObject *r[3];
    int k = query_args(self, "point", "point", args, nargs, kwnames, arg_point, &out);
    if (k < 0 || outs3(out, 3, RVA, r) < 0) return NULL;
    mbs_point_kinematics(self->model->m, self->d, k, D(r[0]), D(r[1]), D(r[2]));
    return outs_tuple(r, 3);
}

static PyObject *Data_vector(DataObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const what[3] = { "out[0] (vector)", "out[1] (rate)", "out[2] (second rate)" };
    PyObject *out;
    PyArrayObject *r[3];
    int k = query_args(self, "vector", "vector", args, nargs, kwnames, arg_vector_index, &out);
    if (k < 0 || outs3(out, 3, what, r) < 0) return NULL;
    mbs_vector_kinematics(self->model->m, self->d, k, D(r[0]), D(r[1]), D(r[2]));
    return outs_tuple(r, 3);
}

/* ---- every body, point or vector at once ---- */

static int out_only(DataObject *self, const char *func, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames, PyObject **out)
{
    static const char *const names[] = { "out" };
    if (parse_args(func, args, nargs, kwnames, names, 1, 0, 0, out) < 0 || data_acquire(self) < 0) return -1;
    data_release(self);
    return 0;
}

static PyObject *Data_body_poses(DataObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const int nd[2] = { 3, 2 };
    static const char *const what[2] = { "out[0] (rotations)", "out[1] (origins)" };
    const npy_intp nb = self->model->nbodies + 1;
    const npy_intp dims[2][3] = { { nb, 3, 3 }, { nb, 3 } };
    PyObject *out;
    PyArrayObject *r[2];
    if (out_only(self, "body_poses", args, nargs, kwnames, &out) < 0 || arg_outs(out, 2, nd, dims, what, r) < 0)
        return NULL;
    for (int b = 0; b < nb; b++) mbs_body_pose(self->d, b, D(r[0]) + 9 * b, D(r[1]) + 3 * b);
    return outs_tuple(r, 2);
}

static PyObject *rows3(DataObject *self, const char *func, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames, int n, int vectors)
{
    static const int nd[3] = { 2, 2, 2 };
    const npy_intp dims[3][3] = { { n, 3 }, { n, 3 }, { n, 3 } };
    PyObject *out;
    PyArrayObject *r[3];
    if (out_only(self, func, args, nargs, kwnames, &out) < 0 || arg_outs(out, 3, nd, dims, RVA, r) < 0) return NULL;
    for (int k = 0; k < n; k++) {
        if (vectors) mbs_vector_kinematics(self->model->m, self->d, k, D(r[0]) + 3 * k, D(r[1]) + 3 * k, D(r[2]) + 3 * k);
        else mbs_point_kinematics(self->model->m, self->d, k, D(r[0]) + 3 * k, D(r[1]) + 3 * k, D(r[2]) + 3 * k);
    }
    return outs_tuple(r, 3);
}

static PyObject *Data_points(DataObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return rows3(self, "points", args, nargs, kwnames, mbs_model_npoints(self->model->m), 0);
}

static PyObject *Data_vectors(DataObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return rows3(self, "vectors", args, nargs, kwnames, mbs_model_nvectors(self->model->m), 1);
}

/* ---- energies ---- */

static PyObject *Data_kinetic_energy(DataObject *self, PyObject *unused)
{
    (void)unused;
    if (data_acquire(self) < 0) return NULL;
    data_release(self);
    return PyFloat_FromDouble(mbs_kinetic_energy(self->model->m, self->d));
}

static PyObject *Data_potential_energy(DataObject *self, PyObject *unused)
{
    (void)unused;
    if (data_acquire(self) < 0) return NULL;
    data_release(self);
    return PyFloat_FromDouble(mbs_potential_energy(self->model->m, self->d));
}

static PyObject *Data_elastic_energy(DataObject *self, PyObject *q)
{
    PyArrayObject *a = arg_vector(q, self->model->nq, "q", self->model->m, mbs_coord_name);
    if (!a) return NULL;
    if (data_acquire(self) < 0) {
        Py_DECREF(a);
        return NULL;
    }
    data_release(self);
    double e = mbs_elastic_energy(self->model->m, self->d, D(a));
    Py_DECREF(a);
    return PyFloat_FromDouble(e);
}

PyMethodDef mbspy_data_methods[] = {
    { "clear_loads", (PyCFunction)Data_clear_loads, METH_NOARGS,
      "clear_loads()\n--\n\nRemove every body load and zero the joint loads." },
    { "add_body_load", FK_CAST(Data_add_body_load), METH_FK,
      "add_body_load(body, force, torque=None, point=None)\n--\n\n"
      "Add a force (global components) at a body point (local coordinates; None: the centre of mass) and a\n"
      "torque (global components). Loads stay until clear_loads()." },
    { "body_pose", FK_CAST(Data_body_pose), METH_FK,
      "body_pose(body, *, out=None)\n--\n\n(R, origin) of a body (index or name) after kinematics(): rotation\n"
      "matrix (3, 3) from body to global axes, and the global position (3,) of the body frame's origin." },
    { "body_com", FK_CAST(Data_body_com), METH_FK, "body_com(body, *, out=None)\n--\n\nCentre of mass (3,)." },
    { "body_velocity", FK_CAST(Data_body_velocity), METH_FK,
      "body_velocity(body, *, out=None)\n--\n\n(v, w): velocity of the centre of mass and angular velocity." },
    { "body_acceleration", FK_CAST(Data_body_acceleration), METH_FK,
      "body_acceleration(body, *, out=None)\n--\n\n(a, alpha): acceleration of the centre of mass, angular "
      "acceleration." },
    { "body_point", FK_CAST(Data_body_point), METH_FK,
      "body_point(body, local, *, out=None)\n--\n\n(r, v, a) of a body point given in local coordinates." },
    { "point", FK_CAST(Data_point), METH_FK,
      "point(point, *, out=None)\n--\n\n(r, v, a) of a named point (index or 'body.point')." },
    { "vector", FK_CAST(Data_vector), METH_FK,
      "vector(vector, *, out=None)\n--\n\n(u, du/dt, d2u/dt2) of a named vector." },
    { "body_poses", FK_CAST(Data_body_poses), METH_FK,
      "body_poses(*, out=None)\n--\n\n(R, origins) of every body, ground first: shapes (nbodies + 1, 3, 3) and\n"
      "(nbodies + 1, 3)." },
    { "points", FK_CAST(Data_points), METH_FK,
      "points(*, out=None)\n--\n\n(r, v, a) of every named point, each (npoints, 3)." },
    { "vectors", FK_CAST(Data_vectors), METH_FK,
      "vectors(*, out=None)\n--\n\n(u, du/dt, d2u/dt2) of every named vector, each (nvectors, 3)." },
    { "frame_jacobian", FK_CAST(mbspy_data_frame_jacobian), METH_FK,
      "frame_jacobian(body, point=None, axes='world', *, out=None)\n--\n\n"
      "J (6, nv) of a body (index or name) at its point (local coordinates; None: the body frame origin)\n"
      "after kinematics(): [v_P; omega] = J v, linear rows first; axes 'world' or 'local' (the body's)." },
    { "frame_jacobian_dot_v", FK_CAST(mbspy_data_frame_jacobian_dot_v), METH_FK,
      "frame_jacobian_dot_v(body, point=None, axes='world', *, out=None)\n--\n\n"
      "(dJ/dt) v (6,): [a_P; alpha] = J vd + (dJ/dt) v." },
    { "point_jacobian", FK_CAST(mbspy_data_point_jacobian), METH_FK,
      "point_jacobian(point, *, out=None)\n--\n\nJp (3, nv) of a named point (index or 'body.point'): v_P = Jp v." },
    { "com", FK_CAST(mbspy_data_com), METH_FK,
      "com(*, out=None)\n--\n\n(r_G, v_G, a_G): the centre of mass of the system, its velocity and acceleration." },
    { "com_jacobian", FK_CAST(mbspy_data_com_jacobian), METH_FK,
      "com_jacobian(*, out=None)\n--\n\nJ_G (3, nv): v_G = J_G v." },
    { "centroidal_momentum", FK_CAST(mbspy_data_centroidal_momentum), METH_FK,
      "centroidal_momentum(*, out=None)\n--\n\nh_G (6,): linear momentum, angular momentum about G (world axes)." },
    { "centroidal_momentum_matrix", FK_CAST(mbspy_data_centroidal_momentum_matrix), METH_FK,
      "centroidal_momentum_matrix(*, out=None)\n--\n\nA_G (6, nv): h_G = A_G v." },
    { "centroidal_momentum_dot_v", FK_CAST(mbspy_data_centroidal_momentum_dot_v), METH_FK,
      "centroidal_momentum_dot_v(*, out=None)\n--\n\n(dA_G/dt) v (6,): dh_G/dt = A_G vd + (dA_G/dt) v." },
    { "kinetic_energy", (PyCFunction)Data_kinetic_energy, METH_NOARGS,
      "kinetic_energy()\n--\n\nKinetic energy of the last kinematics." },
    { "potential_energy", (PyCFunction)Data_potential_energy, METH_NOARGS,
      "potential_energy()\n--\n\nPotential energy of gravity, -sum m g.r_G, of the last kinematics." },
    { "elastic_energy", (PyCFunction)Data_elastic_energy, METH_O,
      "elastic_energy(q)\n--\n\nPotential energy of the springs at q (the last kinematics must be at q)." },
    { NULL, NULL, 0, NULL }
};

static PyObject *Data_repr(DataObject *self)
{
    return PyUnicode_FromFormat("<mbsens.Data of '%s', ref %s>", mbs_model_name(self->model->m),
                                mbs_ref_point_name(mbs_data_ref(self->d)));
}

PyTypeObject Data_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mbsens.Data",
    .tp_basicsize = sizeof(DataObject),
    .tp_dealloc = (destructor)Data_dealloc,
    .tp_repr = (reprfunc)Data_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Data(model)\n--\n\nThe workspace of every computation on a model, and its last results. One per "
              "thread:\nseparate Data objects may run at once; one Data refuses a second call while one runs.",
    .tp_methods = mbspy_data_methods,
    .tp_getset = mbspy_data_getset,
    .tp_new = Data_new,
};
