/*
 * mbspy.h - what the files of the extension module mbsens._mbsens share:
 * the Model and Data types, argument parsing and checking, errors, and the
 * release of the GIL around long calls with callbacks that take it back.
 *
 * The module binds the public C API (include/mbsens/) only.
 */
#ifndef MBSPY_H
#define MBSPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL mbspy_ARRAY_API
#ifndef MBSPY_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "mbsens/mbsens.h"

/* ---- types ---- */

typedef struct {
    PyObject_HEAD
    mbs_model *m;
    int nq, nv, nparams, nbodies;
} ModelObject;

typedef struct {
    PyObject_HEAD
    ModelObject *model;    /* strong reference */
    mbs_data *d;
    int busy;              /* a call on d is running (read and written with the GIL held) */
} DataObject;

extern PyTypeObject Model_Type;
extern PyTypeObject Data_Type;
extern PyTypeObject Integrator_Type;

/* A new Model owning m (freed with it); NULL with an exception set. */
PyObject *model_wrap(mbs_model *m);

/* ---- errors (module.c) ---- */

extern PyObject *mbspy_Error;          /* mbsens.Error */
extern PyObject *mbspy_ModelWarning;   /* mbsens.ModelWarning */

/* Raise the exception class of library status `code` with `msg`; returns NULL. */
PyObject *raise_status(int code, const char *msg);
/* The same for a failed call on a Data: the message of mbs_data_error. */
PyObject *raise_data(const DataObject *d, int code, const char *func);

/* ---- arguments (args.c) ---- */

/* Positional-or-keyword arguments of a METH_FASTCALL | METH_KEYWORDS
 * function, by name, into out[0..n-1] (borrowed; NULL when absent). The
 * first nreq are required; at most npos may be positional (the others are
 * keyword-only). Returns 0, or -1 with TypeError set. */
int parse_args(const char *func, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
               const char *const *names, int n, int nreq, int npos, PyObject **out);

/* model must be a Model: NULL with TypeError otherwise. */
ModelObject *arg_model(const char *func, PyObject *model);
/* (model, data): data must be a Data of that model. 0 or -1. */
int check_model_data(const char *func, PyObject *model, PyObject *data, ModelObject **mo, DataObject **dobj);
/* Mark data busy (RuntimeError if it already is); data_release undoes it. */
int data_acquire(DataObject *d);
static inline void data_release(DataObject *d) { d->busy = 0; }

/* A read-only input vector of n finite real numbers, as a new reference to
 * an aligned C-contiguous float64 array (a copy where needed). `what` names
 * the argument in messages; names(k) (may be NULL) names entry k.
 * NULL with TypeError (not real numbers) or ValueError (shape, non-finite)
 * set. */
typedef const char *(*entry_name_fn)(const mbs_model *m, int k);
PyArrayObject *arg_vector(PyObject *obj, npy_intp n, const char *what, const mbs_model *m, entry_name_fn names);
/* The same for an array of a given shape (ndim <= 3). */
PyArrayObject *arg_array(PyObject *obj, int ndim, const npy_intp *dims, const char *what);
/* An optional input vector: Py_None or NULL give NULL without error (*ok
 * stays 1); *ok is 0 on error. */
PyArrayObject *arg_vector_opt(PyObject *obj, npy_intp n, const char *what, const mbs_model *m, entry_name_fn names,
                              int *ok);

/* An output array of a given shape: `obj` NULL or None allocates one;
 * otherwise it must be a writeable, C-contiguous float64 ndarray of exactly
 * that shape (new reference returned). NULL with an exception set. */
PyArrayObject *arg_out(PyObject *obj, int ndim, const npy_intp *dims, const char *what);
/* The outputs of a function with k results (k >= 2): `out` is NULL, None
 * or a tuple of k entries, each None or an array as for arg_out. On
 * success res[0..k-1] hold new references; returns 0 or -1. */
int arg_outs(PyObject *out, int k, const int *ndims, const npy_intp (*dims)[3], const char *const *what,
             PyArrayObject **res);
/* The tuple of res[0..k-1] (references stolen), or NULL. */
PyObject *outs_tuple(PyArrayObject **res, int k);
void outs_clear(PyArrayObject **res, int k);

/* Index of a body (int or name), point, vector, parameter, objective,
 * function: -1 with IndexError / KeyError / TypeError set. */
int arg_body(const mbs_model *m, PyObject *obj);
int arg_point(const mbs_model *m, PyObject *obj);
int arg_vector_index(const mbs_model *m, PyObject *obj);
int arg_param(const mbs_model *m, PyObject *obj);
int arg_function(const mbs_model *m, PyObject *obj);
/* A finite double; what names it. -1 (and an exception) on error. */
int arg_double(PyObject *obj, const char *what, double *x);
/* A plain str without NUL characters; NULL with an exception. */
const char *arg_str(PyObject *obj, const char *what);

/* Index (flat) of the first non-finite entry of a C-contiguous float64 array, or -1. */
npy_intp array_first_nonfinite(PyArrayObject *a);
/* 0, or -1 with NumericalError set when an array of `res` (an array, or a
 * tuple of arrays and None) has an entry that is not finite. */
int result_finite(PyObject *res, const char *func);

/* New arrays. */
PyObject *vec_new(npy_intp n, const double *x);   /* copy of x (n >= 0) */
PyObject *mat_new(npy_intp r, npy_intp c, const double *x);

/* ---- GIL and callbacks (callbacks.c) ----
 * A long call releases the GIL with pc_release and takes it back with
 * pc_restore. A callback of the library takes it with pc_enter and gives it
 * back with pc_leave; a Python exception raised there is kept in the
 * context (pc_keep_error; the callback then stops the library call) and
 * raised by pc_finish once the call has returned. */
typedef struct {
    PyThreadState *ts;
    PyObject *etype, *evalue, *etb;   /* the first exception of a callback */
    int released;
} pycall;

void pc_init(pycall *c);
void pc_release(pycall *c);
void pc_restore(pycall *c);
PyGILState_STATE pc_enter(void);
void pc_leave(PyGILState_STATE s);
/* With the GIL: keep the current exception, if any; 1 if there was one. */
int pc_keep_error(pycall *c);
/* 1 if a callback raised. */
int pc_failed(const pycall *c);
/* With the GIL: raise the kept exception (returns 1), or return 0. */
int pc_finish(pycall *c);
/* Without the GIL: run the signal handlers (Ctrl-C); 1 if one raised. */
int pc_check_signals(pycall *c);
/* Without the GIL: pc_check_signals on every PC_CHECK_EVERY-th call
 * (*count counts them); 1 if a handler raised. */
#define PC_CHECK_EVERY 1000
int pc_check_signals_every(pycall *c, long *count);
/* With the GIL: a callback's result means "stop" when it is False. */
int pc_says_stop(PyObject *result);

/* ---- functions of the module (one file each) ---- */
extern PyMethodDef mbspy_dynamics_methods[];
extern PyMethodDef mbspy_constraint_methods[];
extern PyMethodDef mbspy_run_methods[];
extern PyMethodDef mbspy_simulate_methods[];
/* The statistics of a run as a dict (simulate.c). */
PyObject *stats_dict(const mbs_sim_stats *s);
extern PyMethodDef mbspy_data_methods[];
/* The velocity map (jacobians.c) and the Jacobian methods of Data (jacobians.c,
 * in Data's table). */
extern PyMethodDef mbspy_manifold_methods[];
#define MBSPY_DATA_METHOD(name) \
    PyObject *mbspy_data_##name(DataObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
MBSPY_DATA_METHOD(frame_jacobian);
MBSPY_DATA_METHOD(frame_jacobian_dot_v);
MBSPY_DATA_METHOD(point_jacobian);
MBSPY_DATA_METHOD(com);
MBSPY_DATA_METHOD(com_jacobian);
MBSPY_DATA_METHOD(centroidal_momentum);
MBSPY_DATA_METHOD(centroidal_momentum_matrix);
MBSPY_DATA_METHOD(centroidal_momentum_dot_v);
extern PyGetSetDef mbspy_data_getset[];
extern PyMethodDef mbspy_model_methods[];
extern PyGetSetDef mbspy_model_getset[];

/* ---- options (options.c) ----
 * A dict of keyword options (names as in docs/python.md) applied onto the
 * library's option structs. Arrays the options point to (dofs, weights,
 * fixed) live in an opt_mem until opt_mem_free. */
typedef struct {
    mbs_dof *dofs;
    double *weights;
    int *fixed;
} opt_mem;

void opt_mem_free(opt_mem *mem);
int options_apply_sim(PyObject *opts, const mbs_model *m, mbs_sim_options *o, opt_mem *mem);
int options_apply_sens(PyObject *opts, const mbs_model *m, mbs_sens_options *o, opt_mem *mem);
int options_apply_opt(PyObject *opts, const mbs_model *m, mbs_opt_options *o, opt_mem *mem);
/* The simulation options as a dict of keyword values. */
PyObject *options_sim_dict(const mbs_sim_options *o);

#define METH_FK (METH_FASTCALL | METH_KEYWORDS)
#define FK_CAST(f) ((PyCFunction)(void (*)(void))(f))

#endif
