/*
 * integrator.c - mbsens.Integrator: the stepper of the library
 * (mbs_integrator_create / reset / step), for loops that act between steps:
 * a controller writing Data.joint_load or body loads, a co-simulation.
 * Each step runs without the GIL; the Data is marked busy only during
 * reset() and step(), so its loads may be changed between them.
 */
#include <string.h>

#include "mbspy.h"

typedef struct {
    PyObject_HEAD
    DataObject *data;      /* strong reference (and through it, the model) */
    mbs_integrator *it;
    double dt;             /* the options' step: the default of step() */
} IntegratorObject;

static PyObject *Integrator_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *model = NULL, *data = Py_None;
    if (!PyArg_ParseTuple(args, "O!|O:Integrator", &Model_Type, &model, &data)) return NULL;
    ModelObject *mo = (ModelObject *)model;
    PyObject *opts = kwargs ? PyDict_Copy(kwargs) : PyDict_New();   /* the options: every keyword but data */
    if (!opts) return NULL;
    PyObject *kwdata = PyDict_GetItemString(opts, "data");
    if (kwdata) {
        if (data != Py_None) {
            Py_DECREF(opts);
            return PyErr_Format(PyExc_TypeError, "Integrator() got multiple values for argument 'data'");
        }
        data = kwdata;
    }
    Py_INCREF(data);   /* kept while opts, which may hold it, is released */
    if (kwdata && PyDict_DelItemString(opts, "data") < 0) {
        Py_DECREF(opts);
        Py_DECREF(data);
        return NULL;
    }
    PyObject *given = data;
    if (data == Py_None) {
        data = PyObject_CallOneArg((PyObject *)&Data_Type, model);
    } else {
        ModelObject *m2;
        DataObject *d2;
        data = check_model_data("Integrator", model, data, &m2, &d2) == 0 ? Py_NewRef(data) : NULL;
    }
    Py_DECREF(given);
    if (!data) {
        Py_DECREF(opts);
        return NULL;
    }
    DataObject *d = (DataObject *)data;
    mbs_sim_options o = mbs_model_sim_options(mo->m);
    opt_mem mem = { 0 };
    IntegratorObject *self = NULL;
    if (options_apply_sim(opts, mo->m, &o, &mem) == 0 && data_acquire(d) == 0) {
        mbs_error err = { 0, "" };
        mbs_integrator *it = mbs_integrator_create(mo->m, d->d, &o, &err);
        data_release(d);
        if (!it) raise_status(err.code, err.msg);
        else if (!(self = (IntegratorObject *)type->tp_alloc(type, 0))) mbs_integrator_free(it);
        else {
            self->data = (DataObject *)Py_NewRef(data);
            self->it = it;
            self->dt = o.dt;
        }
    }
    opt_mem_free(&mem);
    Py_DECREF(opts);
    Py_DECREF(data);
    return (PyObject *)self;
}

static void Integrator_dealloc(IntegratorObject *self)
{
    mbs_integrator_free(self->it);
    Py_XDECREF(self->data);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Integrator_reset(IntegratorObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    static const char *const names[] = { "t", "q", "qd" };
    PyObject *a[3];
    if (parse_args("reset", args, nargs, kwnames, names, 3, 0, 3, a) < 0) return NULL;
    const ModelObject *mo = self->data->model;
    double t = mbs_integrator_options(self->it)->t0;
    int ok = !(a[0] && a[0] != Py_None && arg_double(a[0], "t", &t) < 0);
    PyArrayObject *q = ok ? arg_vector_opt(a[1], mo->nq, "q", mo->m, mbs_coord_name, &ok) : NULL;
    PyArrayObject *qd = ok ? arg_vector_opt(a[2], mo->nv, "qd", mo->m, mbs_coord_name, &ok) : NULL;
    int rc = MBS_OK;
    mbs_error err = { 0, "" };
    if (ok && (ok = data_acquire(self->data) == 0)) {
        Py_BEGIN_ALLOW_THREADS
        rc = mbs_integrator_reset(self->it, t, q ? PyArray_DATA(q) : NULL, qd ? PyArray_DATA(qd) : NULL, &err);
        Py_END_ALLOW_THREADS
        data_release(self->data);
    }
    Py_XDECREF(q);
    Py_XDECREF(qd);
    if (!ok) return NULL;
    if (rc != MBS_OK) return raise_status(rc, err.msg);
    Py_RETURN_NONE;
}

static PyObject *Integrator_step(IntegratorObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = { "h", "n" };
    PyObject *a[2];
    double h = self->dt;
    long n = 1;
    if (parse_args("step", args, nargs, kwnames, names, 2, 0, 2, a) < 0) return NULL;
    if (a[0] && a[0] != Py_None && arg_double(a[0], "h", &h) < 0) return NULL;
    if (a[1] && a[1] != Py_None) {
        n = PyLong_Check(a[1]) && !PyBool_Check(a[1]) ? PyLong_AsLong(a[1]) : 0;
        if (n < 1) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "n: expected a number of steps >= 1");
            return NULL;
        }
    }
    if (!(h > 0)) return PyErr_Format(PyExc_ValueError, "h: the step must be > 0, got %g", h);
    if (data_acquire(self->data) < 0) return NULL;
    int rc = MBS_OK;
    mbs_error err = { 0, "" };
    Py_BEGIN_ALLOW_THREADS
    for (long k = 0; k < n && rc == MBS_OK; k++) rc = mbs_integrator_step(self->it, h, &err);
    Py_END_ALLOW_THREADS
    data_release(self->data);
    if (rc != MBS_OK) return raise_status(rc, err.msg);
    return PyFloat_FromDouble(mbs_integrator_time(self->it));
}

static PyObject *Integrator_get_t(IntegratorObject *self, void *c)
{
    (void)c;
    return PyFloat_FromDouble(mbs_integrator_time(self->it));
}
static PyObject *Integrator_get_q(IntegratorObject *self, void *c)
{
    (void)c;
    return vec_new(self->data->model->nq, mbs_integrator_q(self->it));
}
static PyObject *Integrator_get_qd(IntegratorObject *self, void *c)
{
    (void)c;
    return vec_new(self->data->model->nv, mbs_integrator_qd(self->it));
}
static PyObject *Integrator_get_qdd(IntegratorObject *self, void *c)
{
    (void)c;
    return vec_new(self->data->model->nv, mbs_integrator_qdd(self->it));
}
static PyObject *Integrator_get_stats(IntegratorObject *self, void *c)
{
    (void)c;
    mbs_sim_stats st;
    mbs_integrator_stats(self->it, &st);
    return stats_dict(&st);
}
static PyObject *Integrator_get_options(IntegratorObject *self, void *c)
{
    (void)c;
    return options_sim_dict(mbs_integrator_options(self->it));
}
static PyObject *Integrator_get_data(IntegratorObject *self, void *c)
{
    (void)c;
    return Py_NewRef((PyObject *)self->data);
}

static PyGetSetDef Integrator_getset[] = {
    { "t", (getter)Integrator_get_t, NULL, "Current time.", NULL },
    { "q", (getter)Integrator_get_q, NULL, "Current coordinates (a copy).", NULL },
    { "qd", (getter)Integrator_get_qd, NULL, "Current velocities (a copy).", NULL },
    { "qdd", (getter)Integrator_get_qdd, NULL, "Current accelerations (a copy).", NULL },
    { "stats", (getter)Integrator_get_stats, NULL, "Step statistics since the last reset (a dict).", NULL },
    { "options", (getter)Integrator_get_options, NULL, "The simulation options in use (a dict).", NULL },
    { "data", (getter)Integrator_get_data, NULL, "The Data every evaluation uses (its loads act).", NULL },
    { NULL, NULL, NULL, NULL, NULL }
};

static PyMethodDef Integrator_methods[] = {
    { "reset", FK_CAST(Integrator_reset), METH_FK,
      "reset(t=None, q=None, qd=None)\n--\n\nSet the state at time t (None: the options' t0; q, qd None: the "
      "model's\ninitial state), compute the accelerations, clear the statistics." },
    { "step", FK_CAST(Integrator_step), METH_FK,
      "step(h=None, n=1)\n--\n\nAdvance n steps of h (None: the options' dt); returns the new time. cvodes: "
      "adaptive\ninternal steps up to each output time t + h." },
    { NULL, NULL, 0, NULL }
};

PyTypeObject Integrator_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mbsens.Integrator",
    .tp_basicsize = sizeof(IntegratorObject),
    .tp_dealloc = (destructor)Integrator_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Integrator(model, data=None, **options)\n--\n\n"
              "The time stepper of an open tree (the options of simulate(); data: the Data it evaluates on,\n"
              "made if None). The state starts at the model's initial state at t0; reset() sets another.\n"
              "The loads of its Data (joint_load, add_body_load) act on every step and may be changed\n"
              "between steps.",
    .tp_methods = Integrator_methods,
    .tp_getset = Integrator_getset,
    .tp_new = Integrator_new,
};
