/*
 * model.c - mbsens.Model: an immutable mbs_model (loaded from JSON or URDF,
 * from a file or a string), its sizes, names and values, parameter copies
 * (with_params) and the JSON writer.
 */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "mbspy.h"

PyObject *model_wrap(mbs_model *m)
{
    ModelObject *o = PyObject_New(ModelObject, &Model_Type);
    if (!o) {
        mbs_model_free(m);
        return NULL;
    }
    o->m = m;
    o->nq = mbs_model_nq(m);
    o->nv = mbs_model_nv(m);
    o->nparams = mbs_model_nparams(m);
    o->nbodies = mbs_model_nbodies(m);
    return (PyObject *)o;
}

static void Model_dealloc(ModelObject *o)
{
    mbs_model_free(o->m);
    PyObject_Free(o);
}

static PyObject *Model_new(PyTypeObject *t, PyObject *a, PyObject *k)
{
    (void)t, (void)a, (void)k;
    PyErr_SetString(PyExc_TypeError, "use mbsens.Model.load(path) or mbsens.Model.from_string(text)");
    return NULL;
}

/* ---------------------------------------------------------------- loading */

/* The loader's warnings, collected during the call and issued after it. */
static void collect_warning(void *user, const char *msg)
{
    PyObject *list = user, *s = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
    if (s) PyList_Append(list, s);
    Py_XDECREF(s);
    PyErr_Clear();
}

static PyObject *finish_load(mbs_model *m, const mbs_error *err, PyObject *warnings)
{
    if (!m) {
        Py_DECREF(warnings);
        return raise_status(err->code, err->msg);
    }
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(warnings); k++) {
        const char *w = PyUnicode_AsUTF8(PyList_GET_ITEM(warnings, k));
        if (!w || PyErr_WarnEx(mbspy_ModelWarning, w, 2) < 0) {
            Py_DECREF(warnings);
            mbs_model_free(m);
            return NULL;
        }
    }
    Py_DECREF(warnings);
    return model_wrap(m);
}

static int flag_arg(PyObject *obj, const char *what, int *v)
{
    if (!obj || obj == Py_None) return 0;
    if (!PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: expected True or False, not %.100s", what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    *v = obj == Py_True;
    return 0;
}

/* URDF options from the keywords; *given = 1 if any was given. */
static int urdf_options(PyObject *const *kw, mbs_urdf_options *o, int *given)
{
    memset(o, 0, sizeof *o);
    *given = kw[0] || kw[1] || kw[2];
    if (flag_arg(kw[0], "floating_base", &o->floating_base) < 0 ||
        flag_arg(kw[1], "strict_inertia", &o->strict_inertia) < 0 ||
        flag_arg(kw[2], "balance_inertia", &o->balance_inertia) < 0)
        return -1;
    if (o->balance_inertia && o->strict_inertia) {
        PyErr_SetString(PyExc_ValueError, "balance_inertia needs strict_inertia=False");
        return -1;
    }
    return 0;
}

static int is_urdf_name(const char *s)
{
    size_t n = strlen(s);
    return n >= 5 && strcasecmp(s + n - 5, ".urdf") == 0;
}

static PyObject *Model_load(PyObject *cls, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)cls;
    static const char *const names[] = { "path", "floating_base", "strict_inertia", "balance_inertia" };
    PyObject *a[4], *bytes = NULL;
    mbs_urdf_options uo;
    int given;
    if (parse_args("Model.load", args, nargs, kwnames, names, 4, 1, 1, a) < 0 ||
        urdf_options(a + 1, &uo, &given) < 0 || !PyUnicode_FSConverter(a[0], &bytes))
        return NULL;
    const char *path = PyBytes_AS_STRING(bytes);
    if (given && !is_urdf_name(path)) {
        Py_DECREF(bytes);
        PyErr_SetString(PyExc_ValueError, "floating_base, strict_inertia and balance_inertia are URDF options "
                                          "(the file name does not end in .urdf)");
        return NULL;
    }
    PyObject *warnings = PyList_New(0);
    if (!warnings) {
        Py_DECREF(bytes);
        return NULL;
    }
    mbs_error err = { 0, "" };
    uo.warn = collect_warning;
    uo.warn_user = warnings;
    mbs_model *m = is_urdf_name(path) ? mbs_model_load_urdf(path, &uo, &err)
                                      : mbs_model_load_warn(path, collect_warning, warnings, &err);
    Py_DECREF(bytes);
    return finish_load(m, &err, warnings);
}

static PyObject *Model_from_string(PyObject *cls, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)cls;
    static const char *const names[] = { "text", "format", "name", "floating_base", "strict_inertia",
                                         "balance_inertia" };
    PyObject *a[6];
    mbs_urdf_options uo;
    int given;
    if (parse_args("Model.from_string", args, nargs, kwnames, names, 6, 1, 1, a) < 0 ||
        urdf_options(a + 3, &uo, &given) < 0)
        return NULL;
    const char *text = arg_str(a[0], "text"), *format = a[1] && a[1] != Py_None ? arg_str(a[1], "format") : "json";
    const char *name = a[2] && a[2] != Py_None ? arg_str(a[2], "name") : "<string>";
    if (!text || !format || !name) return NULL;
    int urdf = strcmp(format, "urdf") == 0;
    if (!urdf && strcmp(format, "json") != 0) {
        PyErr_Format(PyExc_ValueError, "format: expected 'json' or 'urdf', got '%s'", format);
        return NULL;
    }
    if (given && !urdf) {
        PyErr_SetString(PyExc_ValueError, "floating_base, strict_inertia and balance_inertia need format='urdf'");
        return NULL;
    }
    PyObject *warnings = PyList_New(0);
    if (!warnings) return NULL;
    mbs_error err = { 0, "" };
    uo.warn = collect_warning;
    uo.warn_user = warnings;
    mbs_model *m = urdf ? mbs_model_load_urdf_string(text, name, &uo, &err)
                        : mbs_model_load_string_warn(text, name, collect_warning, warnings, &err);
    return finish_load(m, &err, warnings);
}

/* ---------------------------------------------------------------- derived models, JSON */

static PyObject *Model_to_json(ModelObject *self, PyObject *unused)
{
    (void)unused;
    mbs_error err = { 0, "" };
    char *text = mbs_model_to_json(self->m, &err);
    if (!text) return raise_status(err.code, err.msg);
    PyObject *s = PyUnicode_FromString(text);
    free(text);
    return s;
}

/* values[k] = v for parameter `key` (a name or an index). */
static int set_param(ModelObject *self, double *values, PyObject *key, PyObject *val)
{
    int k = arg_param(self->m, key);
    if (k < 0) return -1;
    char what[300];
    snprintf(what, sizeof what, "parameter %s", mbs_param_name(self->m, k));
    return arg_double(val, what, &values[k]);
}

static PyObject *Model_with_params(ModelObject *self, PyObject *args, PyObject *kwargs)
{
    PyObject *values = NULL;
    if (!PyArg_ParseTuple(args, "|O:with_params", &values)) return NULL;
    const int np = self->nparams;
    double *x = PyMem_Malloc(((size_t)np + 1) * sizeof *x);
    if (!x) return PyErr_NoMemory();
    for (int k = 0; k < np; k++) x[k] = mbs_param_value(self->m, k);
    int ok = 1;
    if (values && values != Py_None && PyDict_Check(values)) {
        PyObject *key, *val;
        Py_ssize_t pos = 0;
        while (ok && PyDict_Next(values, &pos, &key, &val)) ok = set_param(self, x, key, val) == 0;
    } else if (values && values != Py_None) {
        PyArrayObject *a = arg_vector(values, np, "values", self->m, mbs_param_name);
        if (a) memcpy(x, PyArray_DATA(a), (size_t)np * sizeof *x);
        ok = a != NULL;
        Py_XDECREF(a);
    }
    if (ok && kwargs) {
        PyObject *key, *val;
        Py_ssize_t pos = 0;
        while (ok && PyDict_Next(kwargs, &pos, &key, &val)) ok = set_param(self, x, key, val) == 0;
    }
    if (!ok) {
        PyMem_Free(x);
        return NULL;
    }
    mbs_error err = { 0, "" };
    mbs_model *m = mbs_model_with_params(self->m, x, &err);
    PyMem_Free(x);
    if (!m) return raise_status(err.code, err.msg);
    return model_wrap(m);
}

static PyObject *Model_reduce(ModelObject *self, PyObject *unused)
{
    PyObject *text = Model_to_json(self, unused);
    if (!text) return NULL;
    PyObject *ctor = PyObject_GetAttrString((PyObject *)&Model_Type, "from_string");
    PyObject *r = ctor ? Py_BuildValue("(N(N))", ctor, text) : NULL;
    if (!ctor) Py_DECREF(text);
    return r;
}

/* ---------------------------------------------------------------- look-ups */

typedef int (*find_fn)(const mbs_model *, const char *);
typedef const char *(*name_fn)(const mbs_model *, int);

static int coord_find(const mbs_model *m, const char *s)
{
    for (int k = 0; k < mbs_model_nq(m); k++)
        if (strcmp(mbs_coord_name(m, k), s) == 0) return k;
    return -1;
}

static PyObject *lookup(const mbs_model *m, PyObject *arg, const char *kind, find_fn find)
{
    const char *s = arg_str(arg, "name");
    if (!s) return NULL;
    int k = find(m, s);
    if (k < 0) return PyErr_Format(PyExc_KeyError, "no %s named '%s'", kind, s);
    return PyLong_FromLong(k);
}

#define LOOKUP(fname, kind, find) \
    static PyObject *Model_##fname(ModelObject *self, PyObject *arg) { return lookup(self->m, arg, kind, find); }
LOOKUP(body_index, "body", mbs_body_find)
LOOKUP(point_index, "point", mbs_point_find)
LOOKUP(param_index, "parameter", mbs_param_find)
LOOKUP(coord_index, "coordinate", coord_find)
LOOKUP(objective_index, "objective", mbs_objective_find)
LOOKUP(function_index, "function", mbs_function_find)

static PyObject *Model_param(ModelObject *self, PyObject *arg)
{
    int k = arg_param(self->m, arg);
    return k < 0 ? NULL : PyFloat_FromDouble(mbs_param_value(self->m, k));
}

static PyObject *Model_evaluate_function(ModelObject *self, PyObject *args)
{
    PyObject *f, *t;
    double tv, dfdt;
    if (!PyArg_ParseTuple(args, "OO:evaluate_function", &f, &t)) return NULL;
    int k = arg_function(self->m, f);
    if (k < 0 || arg_double(t, "t", &tv) < 0) return NULL;
    double v = mbs_function_eval(self->m, k, tv, &dfdt);
    return Py_BuildValue("(dd)", v, dfdt);
}

PyMethodDef mbspy_model_methods[] = {
    { "load", FK_CAST(Model_load), METH_FK | METH_CLASS,
      "Model.load(path, *, floating_base=False, strict_inertia=False, balance_inertia=False)\n--\n\n"
      "Load a model file: JSON (docs/model-format.md), or URDF when the name ends in .urdf (the keywords are\n"
      "the URDF loader's options). The loader's warnings are issued as mbsens.ModelWarning." },
    { "from_string", FK_CAST(Model_from_string), METH_FK | METH_CLASS,
      "Model.from_string(text, format='json', name='<string>', *, floating_base=False, strict_inertia=False,\n"
      "                  balance_inertia=False)\n--\n\n"
      "A model from JSON or URDF text; `name` stands for the file name in messages." },
    { "to_json", (PyCFunction)Model_to_json, METH_NOARGS,
      "to_json()\n--\n\nThe model as JSON text (docs/model-format.md); loading it gives the same model." },
    { "with_params", (PyCFunction)(void (*)(void))Model_with_params, METH_VARARGS | METH_KEYWORDS,
      "with_params(values=None, /, **by_name)\n--\n\n"
      "A copy of the model with parameter values replaced: `values` holds all of them (array, nparams) or\n"
      "some of them (dict name -> value); keywords name more." },
    { "param", (PyCFunction)Model_param, METH_O, "param(name_or_index)\n--\n\nThe value of a design parameter." },
    { "body_index", (PyCFunction)Model_body_index, METH_O, "body_index(name)\n--\n\nIndex of a body (0: ground)." },
    { "point_index", (PyCFunction)Model_point_index, METH_O, "point_index(name)\n--\n\nIndex of a named point." },
    { "param_index", (PyCFunction)Model_param_index, METH_O, "param_index(name)\n--\n\nIndex of a parameter." },
    { "coord_index", (PyCFunction)Model_coord_index, METH_O, "coord_index(name)\n--\n\nIndex of a coordinate." },
    { "objective_index", (PyCFunction)Model_objective_index, METH_O,
      "objective_index(name)\n--\n\nIndex of an objective." },
    { "function_index", (PyCFunction)Model_function_index, METH_O,
      "function_index(name)\n--\n\nIndex of a time function." },
    { "evaluate_function", (PyCFunction)Model_evaluate_function, METH_VARARGS,
      "evaluate_function(function, t)\n--\n\n(f(t), df/dt) of a time function of the model." },
    { "__reduce__", (PyCFunction)Model_reduce, METH_NOARGS, "Pickling through the JSON text." },
    { NULL, NULL, 0, NULL }
};

/* ---------------------------------------------------------------- attributes */

static PyObject *int_attr(int v) { return PyLong_FromLong(v); }

#define SIZE_GETTER(attr, fn) \
    static PyObject *Model_get_##attr(ModelObject *self, void *c) { (void)c; return int_attr(fn(self->m)); }
SIZE_GETTER(nq, mbs_model_nq)
SIZE_GETTER(nv, mbs_model_nv)
SIZE_GETTER(ndof, mbs_model_ndof)
SIZE_GETTER(nbodies, mbs_model_nbodies)
SIZE_GETTER(nconstraints, mbs_model_nconstraints)
SIZE_GETTER(nparams, mbs_model_nparams)
SIZE_GETTER(npoints, mbs_model_npoints)
SIZE_GETTER(nvectors, mbs_model_nvectors)
SIZE_GETTER(nobjectives, mbs_model_nobjectives)
SIZE_GETTER(noutputs, mbs_model_noutputs)
SIZE_GETTER(nforces, mbs_model_nforces)
SIZE_GETTER(nfunctions, mbs_model_nfunctions)

/* Tuple of name(m, lo..lo+n-1). */
static PyObject *names_tuple(const mbs_model *m, int lo, int n, name_fn name)
{
    PyObject *t = PyTuple_New(n);
    for (int k = 0; t && k < n; k++) {
        const char *s = name(m, lo + k);
        PyObject *u = s ? PyUnicode_FromString(s) : Py_NewRef(Py_None);
        if (!u) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, k, u);
    }
    return t;
}

static const char *joint_type_str(const mbs_model *m, int j) { return mbs_joint_type_name(mbs_joint_type_of(m, j)); }
/* The velocity convention of joint j in the words of the model format. */
static const char *joint_velocities_str(const mbs_model *m, int j)
{
    return mbs_joint_velocities(m, j) == MBS_VELOCITIES_TANGENT ? "tangent" : "euler_rates";
}
static const char *force_type_str(const mbs_model *m, int k) { return mbs_force_type_name(mbs_force_type_of(m, k)); }

#define NAMES_GETTER(attr, lo, count, fn) \
    static PyObject *Model_get_##attr(ModelObject *self, void *c) \
    { (void)c; return names_tuple(self->m, lo, count, fn); }
NAMES_GETTER(body_names, 0, self->nbodies + 1, mbs_body_name)
NAMES_GETTER(joint_names, 1, self->nbodies, mbs_joint_name)
NAMES_GETTER(joint_types, 1, self->nbodies, joint_type_str)
NAMES_GETTER(joint_velocities, 1, self->nbodies, joint_velocities_str)
NAMES_GETTER(coord_names, 0, self->nq, mbs_coord_name)
NAMES_GETTER(velocity_names, 0, self->nv, mbs_vel_name)
NAMES_GETTER(param_names, 0, self->nparams, mbs_param_name)
NAMES_GETTER(point_names, 0, mbs_model_npoints(self->m), mbs_point_name)
NAMES_GETTER(vector_names, 0, mbs_model_nvectors(self->m), mbs_vector_name)
NAMES_GETTER(objective_names, 0, mbs_model_nobjectives(self->m), mbs_objective_name)
NAMES_GETTER(force_names, 0, mbs_model_nforces(self->m), mbs_force_name)
NAMES_GETTER(force_types, 0, mbs_model_nforces(self->m), force_type_str)
NAMES_GETTER(function_names, 0, mbs_model_nfunctions(self->m), mbs_function_name)
NAMES_GETTER(constraint_names, 0, mbs_model_nconstraints(self->m), mbs_constraint_name)
NAMES_GETTER(cut_names, 0, mbs_model_ncuts(self->m), mbs_cut_name)
NAMES_GETTER(driver_names, 0, mbs_model_ndrivers(self->m), mbs_driver_name)

static PyObject *Model_get_name(ModelObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(mbs_model_name(self->m));
}

static PyObject *Model_get_output_names(ModelObject *self, void *c)
{
    (void)c;
    PyObject *list = PyList_New(0);
    for (int k = 0; list && k < mbs_model_noutputs(self->m); k++) {
        mbs_output o = mbs_model_output(self->m, k);
        for (int j = 0; list && j < mbs_output_ncolumns(&o); j++) {
            char buf[512];
            mbs_output_column_name(self->m, &o, j, buf, sizeof buf);
            PyObject *u = PyUnicode_FromString(buf);
            if (!u || PyList_Append(list, u) < 0) Py_CLEAR(list);
            Py_XDECREF(u);
        }
    }
    if (!list) return NULL;
    PyObject *t = PyList_AsTuple(list);
    Py_DECREF(list);
    return t;
}

static PyObject *int_tuple(int lo, int n, const mbs_model *m, int (*fn)(const mbs_model *, int))
{
    PyObject *t = PyTuple_New(n);
    for (int k = 0; t && k < n; k++) {
        PyObject *v = PyLong_FromLong(fn(m, lo + k));
        if (!v) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, k, v);
    }
    return t;
}

static int point_body(const mbs_model *m, int k) { return mbs_point_body(m, k); }
static int vector_body(const mbs_model *m, int k) { return mbs_vector_body(m, k); }

static PyObject *Model_get_body_parents(ModelObject *self, void *c)
{
    (void)c;
    return int_tuple(0, self->nbodies + 1, self->m, mbs_body_parent);
}
static PyObject *Model_get_joint_nq(ModelObject *self, void *c)
{
    (void)c;
    return int_tuple(1, self->nbodies, self->m, mbs_joint_nq);
}
static PyObject *Model_get_joint_nv(ModelObject *self, void *c)
{
    (void)c;
    return int_tuple(1, self->nbodies, self->m, mbs_joint_nv);
}
static PyObject *Model_get_joint_vel_offsets(ModelObject *self, void *c)
{
    (void)c;
    return int_tuple(1, self->nbodies, self->m, mbs_joint_vel_offset);
}
static PyObject *Model_get_joint_coord_offsets(ModelObject *self, void *c)
{
    (void)c;
    return int_tuple(1, self->nbodies, self->m, mbs_joint_coord_offset);
}
static PyObject *Model_get_point_bodies(ModelObject *self, void *c)
{
    (void)c;
    return int_tuple(0, mbs_model_npoints(self->m), self->m, point_body);
}
static PyObject *Model_get_vector_bodies(ModelObject *self, void *c)
{
    (void)c;
    return int_tuple(0, mbs_model_nvectors(self->m), self->m, vector_body);
}

static PyObject *Model_get_assembly_fixed(ModelObject *self, void *c)
{
    (void)c;
    const int *fixed;
    int n = mbs_model_assembly_fixed(self->m, &fixed);
    PyObject *t = PyTuple_New(n);
    for (int k = 0; t && k < n; k++) {
        PyObject *v = PyLong_FromLong(fixed[k]);
        if (!v) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, k, v);
    }
    return t;
}

/* An array of n values fn(m, lo + k). */
static PyObject *values_array(const mbs_model *m, int lo, int n, double (*fn)(const mbs_model *, int))
{
    npy_intp dim = n;
    PyObject *a = PyArray_SimpleNew(1, &dim, NPY_DOUBLE);
    if (!a) return NULL;
    double *x = PyArray_DATA((PyArrayObject *)a);
    for (int k = 0; k < n; k++) x[k] = fn(m, lo + k);
    return a;
}

static PyObject *Model_get_body_masses(ModelObject *self, void *c)
{
    (void)c;
    return values_array(self->m, 0, self->nbodies + 1, mbs_body_mass);
}
static PyObject *Model_get_param_values(ModelObject *self, void *c)
{
    (void)c;
    return values_array(self->m, 0, self->nparams, mbs_param_value);
}
static PyObject *Model_get_param_lower(ModelObject *self, void *c)
{
    (void)c;
    return values_array(self->m, 0, self->nparams, mbs_param_lower);
}
static PyObject *Model_get_param_upper(ModelObject *self, void *c)
{
    (void)c;
    return values_array(self->m, 0, self->nparams, mbs_param_upper);
}

static PyObject *Model_get_params(ModelObject *self, void *c)
{
    (void)c;
    PyObject *d = PyDict_New();
    for (int k = 0; d && k < self->nparams; k++) {
        PyObject *v = PyFloat_FromDouble(mbs_param_value(self->m, k));
        if (!v || PyDict_SetItemString(d, mbs_param_name(self->m, k), v) < 0) Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

static PyObject *initial_state(ModelObject *self, int which)
{
    npy_intp n = self->nq;
    double *q = PyMem_Malloc(2 * ((size_t)n + 1) * sizeof *q);
    if (!q) return PyErr_NoMemory();
    mbs_model_initial_state(self->m, q, q + n + 1);
    PyObject *a = which ? vec_new(self->nv, q + n + 1) : vec_new(n, q);
    PyMem_Free(q);
    return a;
}
static PyObject *Model_get_q0(ModelObject *self, void *c) { (void)c; return initial_state(self, 0); }
static PyObject *Model_get_qd0(ModelObject *self, void *c) { (void)c; return initial_state(self, 1); }

static PyObject *Model_get_gravity(ModelObject *self, void *c)
{
    (void)c;
    double g[3];
    mbs_model_gravity(self->m, g);
    return vec_new(3, g);
}

/* (nbodies, k) array of the joints' limit (k = 4) or dynamics (k = 2) data, NaN where not given. */
static PyObject *joint_table(ModelObject *self, int k)
{
    npy_intp dims[2] = { self->nbodies, k };
    PyObject *a = PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    if (!a) return NULL;
    double *x = PyArray_DATA((PyArrayObject *)a);
    for (int j = 1; j <= self->nbodies; j++) {
        if (k == 4) mbs_joint_limit(self->m, j, x + 4 * (j - 1));
        else mbs_joint_dynamics(self->m, j, x + 2 * (j - 1));
    }
    return a;
}
static PyObject *Model_get_joint_limits(ModelObject *self, void *c) { (void)c; return joint_table(self, 4); }
static PyObject *Model_get_joint_dynamics(ModelObject *self, void *c) { (void)c; return joint_table(self, 2); }

static PyObject *Model_get_simulation_options(ModelObject *self, void *c)
{
    (void)c;
    mbs_sim_options o = mbs_model_sim_options(self->m);
    return options_sim_dict(&o);
}

#define G(name, doc) { #name, (getter)Model_get_##name, NULL, doc, NULL }
PyGetSetDef mbspy_model_getset[] = {
    G(name, "The model's name."),
    G(nq, "Number of coordinates (length of q)."),
    G(nv, "Number of generalized velocities (length of qd, qdd, tau; columns of the derivatives)."),
    G(ndof, "Degrees of freedom of the tree: nq minus one per Euler-parameter quadruple."),
    G(nbodies, "Number of moving bodies (body 0, the ground, not counted)."),
    G(nconstraints, "Constraint rows: loop closure, drivers, Euler normalization."),
    G(nparams, "Number of design parameters."),
    G(npoints, "Number of named points."),
    G(nvectors, "Number of named vectors."),
    G(nobjectives, "Number of objectives."),
    G(noutputs, "Number of outputs (the 'outputs' section; see output_names for the columns)."),
    G(nforces, "Number of force elements."),
    G(nfunctions, "Number of time functions."),
    G(body_names, "Names of the bodies, ground first (index = body index)."),
    G(joint_names, "Names of the joints: joint_names[i - 1] moves body i."),
    G(joint_types, "Types of the joints, as joint_names."),
    G(coord_names, "Names of the coordinates (nq)."),
    G(velocity_names, "Names of the generalized velocities (nv)."),
    G(param_names, "Names of the design parameters."),
    G(point_names, "Names of the named points ('body.point')."),
    G(vector_names, "Names of the named vectors."),
    G(objective_names, "Names of the objectives."),
    G(output_names, "Names of the output columns of simulate()."),
    G(force_names, "Names of the force elements."),
    G(force_types, "Types of the force elements."),
    G(function_names, "Names of the time functions."),
    G(constraint_names, "Names of the constraint rows."),
    G(cut_names, "Names of the cut joints (one per closed loop)."),
    G(driver_names, "Names of the driving constraints."),
    G(body_parents, "Parent body of each body (-1 for the ground)."),
    G(joint_nq, "Coordinates of each joint, as joint_names."),
    G(joint_coord_offsets, "First coordinate of each joint, as joint_names."),
    G(joint_nv, "Velocities of each joint, as joint_names (joint_nq minus 1 for a joint with tangent velocities)."),
    G(joint_vel_offsets, "First velocity of each joint, as joint_names."),
    G(joint_velocities, "Velocity convention of each joint, as joint_names: 'tangent' or 'euler_rates' (the rates\n"
                        "of its coordinates)."),
    G(point_bodies, "Body of each named point."),
    G(vector_bodies, "Body of each named vector."),
    G(assembly_fixed, "Coordinates the model's assembly section holds fixed."),
    G(body_masses, "Mass of each body (ground: 0)."),
    G(param_values, "Values of the design parameters (a copy)."),
    G(param_lower, "Lower bounds of the design parameters."),
    G(param_upper, "Upper bounds of the design parameters."),
    G(params, "The design parameters as a dict name -> value."),
    G(q0, "Initial coordinates of the model file (a copy)."),
    G(qd0, "Initial velocities of the model file (a copy)."),
    G(gravity, "Gravity vector."),
    G(joint_limits, "URDF limits per joint (nbodies x 4: lower, upper, effort, velocity), NaN where not given."),
    G(joint_dynamics, "URDF dynamics per joint (nbodies x 2: damping, friction), NaN where not given."),
    G(simulation_options, "The model's simulation settings, as keywords of simulate()."),
    { NULL, NULL, NULL, NULL, NULL }
};
#undef G

static PyObject *Model_repr(ModelObject *self)
{
    return PyUnicode_FromFormat("<mbsens.Model '%s': %d bodies, nq=%d, nv=%d, %d parameters>", mbs_model_name(self->m),
                                self->nbodies, self->nq, self->nv, self->nparams);
}

PyTypeObject Model_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mbsens.Model",
    .tp_basicsize = sizeof(ModelObject),
    .tp_dealloc = (destructor)Model_dealloc,
    .tp_repr = (reprfunc)Model_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An immutable multibody model (bodies, joints, points, parameters). Any number of Data objects,\n"
              "one per thread, may use it at once. Load one with Model.load(path) or Model.from_string(text).",
    .tp_methods = mbspy_model_methods,
    .tp_getset = mbspy_model_getset,
    .tp_new = Model_new,
};
