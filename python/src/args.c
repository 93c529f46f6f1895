/*
 * args.c - argument parsing and checking: every bad argument (wrong type,
 * shape or dtype, a non-finite value, an unknown name or index) raises here,
 * before the library is called.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mbspy.h"

/* Interned str objects of the argument names (static strings), found by
 * their address: keyword names in a call are interned, so a match is
 * usually one pointer comparison. Filled under the GIL, never freed. */
#define NAME_SLOTS 512
static struct { const char *name; PyObject *str; } name_cache[NAME_SLOTS];

static PyObject *interned(const char *name)
{
    size_t h = ((size_t)name >> 3) % NAME_SLOTS;
    for (int probe = 0; probe < NAME_SLOTS; probe++, h = (h + 1) % NAME_SLOTS) {
        if (name_cache[h].name == name) return name_cache[h].str;
        if (!name_cache[h].name) {
            PyObject *s = PyUnicode_InternFromString(name);
            if (!s) {
                PyErr_Clear();
                return NULL;
            }
            name_cache[h].name = name;
            name_cache[h].str = s;
            return s;
        }
    }
    return NULL;
}

/* Index of keyword `key` in names[0..n-1], or n. */
static int keyword_index(PyObject *key, const char *const *names, int n)
{
    for (int k = 0; k < n; k++)
        if (interned(names[k]) == key) return k;
    int k = 0;
    while (k < n && PyUnicode_CompareWithASCIIString(key, names[k]) != 0) k++;
    return k;
}

int parse_args(const char *func, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
               const char *const *names, int n, int nreq, int npos, PyObject **out)
{
    if (nargs > npos) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional arguments (%zd given)", func, npos,
                     nargs);
        return -1;
    }
    for (int k = 0; k < n; k++) out[k] = k < nargs ? args[k] : NULL;
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t j = 0; j < nkw; j++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, j);
        int k = keyword_index(key, names, n);
        if (k == n) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", func, key);
            return -1;
        }
        if (out[k]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", func, names[k]);
            return -1;
        }
        out[k] = args[nargs + j];
    }
    for (int k = 0; k < nreq; k++)
        if (!out[k]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (pos %d)", func, names[k], k + 1);
            return -1;
        }
    return 0;
}

ModelObject *arg_model(const char *func, PyObject *model)
{
    if (!PyObject_TypeCheck(model, &Model_Type)) {
        PyErr_Format(PyExc_TypeError, "%s(): model must be an mbsens.Model, not %.100s", func,
                     Py_TYPE(model)->tp_name);
        return NULL;
    }
    return (ModelObject *)model;
}

int check_model_data(const char *func, PyObject *model, PyObject *data, ModelObject **mo, DataObject **dobj)
{
    if (!arg_model(func, model)) return -1;
    if (!PyObject_TypeCheck(data, &Data_Type)) {
        PyErr_Format(PyExc_TypeError, "%s(): data must be an mbsens.Data, not %.100s", func,
                     Py_TYPE(data)->tp_name);
        return -1;
    }
    *mo = (ModelObject *)model;
    *dobj = (DataObject *)data;
    if ((*dobj)->model->m != (*mo)->m) {
        PyErr_Format(PyExc_ValueError, "%s(): data was created for another model (Data(model) makes one)", func);
        return -1;
    }
    return 0;
}

int data_acquire(DataObject *d)
{
    if (d->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "this Data is in use by a call that has not returned (another thread, or the call whose "
                        "callback is running): use one Data per thread");
        return -1;
    }
    d->busy = 1;
    return 0;
}

/* ---------------------------------------------------------------- arrays */

static int real_dtype(PyArray_Descr *dt)
{
    switch (dt->kind) {
    case 'f': return dt->elsize <= 8;    /* float16, 32, 64 (not long double: precision lost) */
    case 'i':
    case 'u': return 1;
    default: return 0;
    }
}

static void shape_text(char *buf, size_t len, int ndim, const npy_intp *dims)
{
    size_t k = (size_t)snprintf(buf, len, "(");
    for (int i = 0; i < ndim && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%ld", i ? ", " : "", (long)dims[i]);
    if (k < len) snprintf(buf + k, len - k, ndim == 1 ? ",)" : ")");
}

/* The float64 C-contiguous aligned array of obj (new reference), dtype checked. */
static PyArrayObject *as_double_array(PyObject *obj, const char *what)
{
    if (PyArray_Check(obj)) {
        PyArrayObject *a = (PyArrayObject *)obj;
        PyArray_Descr *dt = PyArray_DESCR(a);
        if (dt->type_num == NPY_DOUBLE && PyArray_ISCARRAY_RO(a) && PyArray_ISNOTSWAPPED(a)) {
            Py_INCREF(obj);
            return a;
        }
        if (!real_dtype(dt)) {
            PyErr_Format(PyExc_TypeError, "%s: expected real numbers, got an array of dtype %R", what, (PyObject *)dt);
            return NULL;
        }
        return (PyArrayObject *)PyArray_FROM_OTF(obj, NPY_DOUBLE, NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST);
    }
    if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: expected an array of real numbers, not %.100s", what, Py_TYPE(obj)->tp_name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_O(obj);
    if (!a) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: expected an array of real numbers, not %.100s", what, Py_TYPE(obj)->tp_name);
        return NULL;
    }
    if (!real_dtype(PyArray_DESCR(a))) {
        PyErr_Format(PyExc_TypeError, "%s: expected real numbers, got %.100s of dtype %R", what,
                     Py_TYPE(obj)->tp_name, (PyObject *)PyArray_DESCR(a));
        Py_DECREF(a);
        return NULL;
    }
    PyArrayObject *b = (PyArrayObject *)PyArray_FROM_OTF((PyObject *)a, NPY_DOUBLE,
                                                         NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST);
    Py_DECREF(a);
    return b;
}

/* The first non-finite entry of x[0..n-1], or -1. */
static npy_intp first_nonfinite(const double *x, npy_intp n)
{
    double s = 0;
    for (npy_intp k = 0; k < n; k++) s += x[k] * 0.0;   /* NaN iff some entry is inf or NaN */
    if (s == 0) return -1;
    for (npy_intp k = 0; k < n; k++)
        if (!isfinite(x[k])) return k;
    return -1;
}

npy_intp array_first_nonfinite(PyArrayObject *a)
{
    return first_nonfinite(PyArray_DATA(a), PyArray_SIZE(a));
}

/* A result that is not finite (an array, or a tuple of arrays): the library
 * reports such results itself; this is the last guard against handing one
 * back silently. -1 with NumericalError set. */
int result_finite(PyObject *res, const char *func)
{
    const Py_ssize_t n = PyTuple_Check(res) ? PyTuple_GET_SIZE(res) : 1;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *a = PyTuple_Check(res) ? PyTuple_GET_ITEM(res, k) : res;
        if (!PyArray_Check(a)) continue;
        npy_intp bad = array_first_nonfinite((PyArrayObject *)a);
        if (bad >= 0) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s: result %zd, entry %ld is not finite (arguments out of range?)", func, k,
                     (long)bad);
            raise_status(MBS_ERR_NUMERIC, msg);
            return -1;
        }
    }
    return 0;
}

PyArrayObject *arg_vector(PyObject *obj, npy_intp n, const char *what, const mbs_model *m, entry_name_fn names)
{
    PyArrayObject *a = as_double_array(obj, what);
    if (!a) return NULL;
    if (PyArray_NDIM(a) != 1 || PyArray_DIM(a, 0) != n) {
        char got[96];
        shape_text(got, sizeof got, PyArray_NDIM(a), PyArray_DIMS(a));
        PyErr_Format(PyExc_ValueError, "%s: expected shape (%ld,), got %s", what, (long)n, got);
        Py_DECREF(a);
        return NULL;
    }
    npy_intp bad = first_nonfinite(PyArray_DATA(a), n);
    if (bad >= 0) {
        const char *name = names && m ? names(m, (int)bad) : NULL;
        char v[32];
        snprintf(v, sizeof v, "%g", ((const double *)PyArray_DATA(a))[bad]);
        PyErr_Format(PyExc_ValueError, "%s[%ld]%s%s%s is %s: arguments must be finite", what, (long)bad,
                     name ? " (" : "", name ? name : "", name ? ")" : "", v);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

PyArrayObject *arg_vector_opt(PyObject *obj, npy_intp n, const char *what, const mbs_model *m, entry_name_fn names,
                              int *ok)
{
    if (!obj || obj == Py_None) return NULL;
    PyArrayObject *a = arg_vector(obj, n, what, m, names);
    if (!a) *ok = 0;
    return a;
}

PyArrayObject *arg_array(PyObject *obj, int ndim, const npy_intp *dims, const char *what)
{
    PyArrayObject *a = as_double_array(obj, what);
    if (!a) return NULL;
    int same = PyArray_NDIM(a) == ndim;
    npy_intp size = 1;
    for (int i = 0; same && i < ndim; i++) {
        same = PyArray_DIM(a, i) == dims[i];
        size *= dims[i];
    }
    if (!same) {
        char want[96], got[96];
        shape_text(want, sizeof want, ndim, dims);
        shape_text(got, sizeof got, PyArray_NDIM(a), PyArray_DIMS(a));
        PyErr_Format(PyExc_ValueError, "%s: expected shape %s, got %s", what, want, got);
        Py_DECREF(a);
        return NULL;
    }
    npy_intp bad = first_nonfinite(PyArray_DATA(a), size);
    if (bad >= 0) {
        PyErr_Format(PyExc_ValueError, "%s: entry %ld (flat index) is not finite: arguments must be finite", what,
                     (long)bad);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

PyArrayObject *arg_out(PyObject *obj, int ndim, const npy_intp *dims, const char *what)
{
    if (!obj || obj == Py_None) return (PyArrayObject *)PyArray_SimpleNew(ndim, (npy_intp *)dims, NPY_DOUBLE);
    if (!PyArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a numpy.ndarray, not %.100s", what, Py_TYPE(obj)->tp_name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)obj;
    if (PyArray_TYPE(a) != NPY_DOUBLE || !PyArray_ISNOTSWAPPED(a)) {
        PyErr_Format(PyExc_TypeError, "%s: expected dtype float64, got %R", what, (PyObject *)PyArray_DESCR(a));
        return NULL;
    }
    int same = PyArray_NDIM(a) == ndim;
    for (int i = 0; same && i < ndim; i++) same = PyArray_DIM(a, i) == dims[i];
    if (!same) {
        char want[96], got[96];
        shape_text(want, sizeof want, ndim, dims);
        shape_text(got, sizeof got, PyArray_NDIM(a), PyArray_DIMS(a));
        PyErr_Format(PyExc_ValueError, "%s: expected shape %s, got %s", what, want, got);
        return NULL;
    }
    if (!PyArray_ISCARRAY(a)) {
        PyErr_Format(PyExc_ValueError, "%s: must be C-contiguous, aligned and writeable", what);
        return NULL;
    }
    Py_INCREF(obj);
    return a;
}

void outs_clear(PyArrayObject **res, int k)
{
    for (int i = 0; i < k; i++) Py_CLEAR(res[i]);
}

int arg_outs(PyObject *out, int k, const int *ndims, const npy_intp (*dims)[3], const char *const *what,
             PyArrayObject **res)
{
    for (int i = 0; i < k; i++) res[i] = NULL;
    if (out && out != Py_None && (!PyTuple_Check(out) || PyTuple_GET_SIZE(out) != k)) {
        PyErr_Format(PyExc_TypeError, "out: expected a tuple of %d arrays (or None entries)", k);
        return -1;
    }
    for (int i = 0; i < k; i++) {
        PyObject *o = out && out != Py_None ? PyTuple_GET_ITEM(out, i) : NULL;
        res[i] = arg_out(o, ndims[i], dims[i], what[i]);
        if (!res[i]) {
            outs_clear(res, i);
            return -1;
        }
        for (int j = 0; j < i; j++)
            if (o && o != Py_None && (PyObject *)res[j] == o) {
                PyErr_Format(PyExc_ValueError, "out: %s and %s are the same array", what[j], what[i]);
                outs_clear(res, i + 1);
                return -1;
            }
    }
    return 0;
}

PyObject *outs_tuple(PyArrayObject **res, int k)
{
    PyObject *t = PyTuple_New(k);
    if (!t) {
        outs_clear(res, k);
        return NULL;
    }
    for (int i = 0; i < k; i++) PyTuple_SET_ITEM(t, i, (PyObject *)res[i]);
    return t;
}

PyObject *vec_new(npy_intp n, const double *x)
{
    PyObject *a = PyArray_SimpleNew(1, &n, NPY_DOUBLE);
    if (a && n > 0) memcpy(PyArray_DATA((PyArrayObject *)a), x, (size_t)n * sizeof(double));
    return a;
}

PyObject *mat_new(npy_intp r, npy_intp c, const double *x)
{
    npy_intp dims[2] = { r, c };
    PyObject *a = PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    if (a && r * c > 0) memcpy(PyArray_DATA((PyArrayObject *)a), x, (size_t)(r * c) * sizeof(double));
    return a;
}

/* ---------------------------------------------------------------- scalars and names */

int arg_double(PyObject *obj, const char *what, double *x)
{
    if (PyBool_Check(obj) || !(PyFloat_Check(obj) || PyLong_Check(obj) || PyNumber_Check(obj)) ||
        PyComplex_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a real number, not %.100s", what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    double v = PyFloat_AsDouble(obj);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: expected a real number, not %.100s", what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (!isfinite(v)) {
        PyErr_Format(PyExc_ValueError, "%s: must be finite, got %R", what, obj);
        return -1;
    }
    *x = v;
    return 0;
}

const char *arg_str(PyObject *obj, const char *what)
{
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a str, not %.100s", what, Py_TYPE(obj)->tp_name);
        return NULL;
    }
    Py_ssize_t len;
    const char *s = PyUnicode_AsUTF8AndSize(obj, &len);
    if (s && (Py_ssize_t)strlen(s) != len) {
        PyErr_Format(PyExc_ValueError, "%s: embedded NUL character", what);
        return NULL;
    }
    return s;
}

typedef struct {
    const char *kind;                                /* "body", ... */
    int lo;                                          /* first valid index */
    int (*count)(const mbs_model *);                 /* last valid index = count (lo = 0: count - 1) */
    int (*find)(const mbs_model *, const char *);
    const char *(*name)(const mbs_model *, int);
    int inclusive;                                   /* 1: indices lo..count */
} index_kind;

static int find_vector(const mbs_model *m, const char *name)
{
    for (int k = 0; k < mbs_model_nvectors(m); k++)
        if (strcmp(mbs_vector_name(m, k), name) == 0) return k;
    return -1;
}

static int arg_index(const mbs_model *m, PyObject *obj, const index_kind *ik)
{
    const int hi = ik->inclusive ? ik->count(m) : ik->count(m) - 1;
    if (PyUnicode_Check(obj)) {
        const char *s = arg_str(obj, ik->kind);
        if (!s) return -1;
        int k = ik->find(m, s);
        if (k < 0) {
            PyObject *known = PyList_New(0);
            for (int i = ik->lo; known && i <= hi && i < ik->lo + 40; i++) {
                PyObject *u = PyUnicode_FromString(ik->name(m, i));
                if (!u || PyList_Append(known, u) < 0) Py_CLEAR(known);
                Py_XDECREF(u);
            }
            if (known) PyErr_Format(PyExc_KeyError, "no %s named '%s' (the model's: %R%s)", ik->kind, s, known,
                                    hi - ik->lo >= 40 ? " ..." : "");
            Py_XDECREF(known);
            return -1;
        }
        return k;
    }
    if (PyBool_Check(obj) || !PyIndex_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: expected an index (int) or a name (str), not %.100s", ik->kind,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    Py_ssize_t k = PyNumber_AsSsize_t(obj, PyExc_IndexError);
    if (k == -1 && PyErr_Occurred()) return -1;
    if (k < ik->lo || k > hi) {
        PyErr_Format(PyExc_IndexError, "%s index %zd out of range %d..%d", ik->kind, k, ik->lo, hi);
        return -1;
    }
    return (int)k;
}

static const index_kind BODY = { "body", 0, mbs_model_nbodies, mbs_body_find, mbs_body_name, 1 };
static const index_kind POINT = { "point", 0, mbs_model_npoints, mbs_point_find, mbs_point_name, 0 };
static const index_kind VECTOR = { "vector", 0, mbs_model_nvectors, find_vector, mbs_vector_name, 0 };
static const index_kind PARAM = { "parameter", 0, mbs_model_nparams, mbs_param_find, mbs_param_name, 0 };
static const index_kind FUNCTION = { "function", 0, mbs_model_nfunctions, mbs_function_find, mbs_function_name, 0 };

int arg_body(const mbs_model *m, PyObject *obj) { return arg_index(m, obj, &BODY); }
int arg_point(const mbs_model *m, PyObject *obj) { return arg_index(m, obj, &POINT); }
int arg_vector_index(const mbs_model *m, PyObject *obj) { return arg_index(m, obj, &VECTOR); }
int arg_param(const mbs_model *m, PyObject *obj) { return arg_index(m, obj, &PARAM); }
int arg_function(const mbs_model *m, PyObject *obj) { return arg_index(m, obj, &FUNCTION); }
