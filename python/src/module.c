/*
 * module.c - the extension module mbsens._mbsens: its exceptions, types and
 * functions. The Python package mbsens (python/mbsens/) re-exports them.
 *
 * Exceptions: every library status has a class, all derived from
 * mbsens.Error (attribute `code`: the library status) and from the built-in
 * exception a Python user would catch for it:
 *   MBS_ERR_IO           FileError          (OSError)
 *   MBS_ERR_PARSE        ParseError         (ValueError)
 *   MBS_ERR_MODEL        ModelError         (ValueError)
 *   MBS_ERR_ARG          ArgumentError      (ValueError)
 *   MBS_ERR_NUMERIC      NumericalError     (ArithmeticError)
 *   MBS_ERR_UNSUPPORTED  UnsupportedError   (NotImplementedError)
 *   MBS_ERR_NOMEM        OutOfMemoryError   (MemoryError)
 * The message is the library's (file:line:col or JSON path, time and cause).
 */
#define MBSPY_IMPORT_ARRAY
#include "mbspy.h"

PyObject *mbspy_Error;
PyObject *mbspy_ModelWarning;

static const struct {
    int code;
    const char *name;
    PyObject **base;
    const char *doc;
} ERRORS[] = {
    { MBS_ERR_IO, "FileError", &PyExc_OSError, "A file cannot be read or written." },
    { MBS_ERR_PARSE, "ParseError", &PyExc_ValueError, "Syntax error in a model (file:line:col)." },
    { MBS_ERR_MODEL, "ModelError", &PyExc_ValueError, "A model that is well-formed but invalid (its place named)." },
    { MBS_ERR_ARG, "ArgumentError", &PyExc_ValueError, "A bad argument or option, found by the library." },
    { MBS_ERR_NUMERIC, "NumericalError", &PyExc_ArithmeticError,
      "Numerical failure: singular matrix, no convergence (time and cause), non-finite value." },
    { MBS_ERR_UNSUPPORTED, "UnsupportedError", &PyExc_NotImplementedError,
      "A combination of model, method and options the library does not support." },
    { MBS_ERR_NOMEM, "OutOfMemoryError", &PyExc_MemoryError, "The library ran out of memory." },
};
#define NERRORS ((int)(sizeof ERRORS / sizeof ERRORS[0]))
static PyObject *error_class[NERRORS];

PyObject *raise_status(int code, const char *msg)
{
    PyObject *cls = mbspy_Error;
    for (int k = 0; k < NERRORS; k++)
        if (ERRORS[k].code == code) cls = error_class[k];
    if (!msg || !*msg) msg = mbs_status_string(code);
    PyObject *e = PyObject_CallFunction(cls, "s", msg);
    if (!e) return NULL;
    PyObject *c = PyLong_FromLong(code);
    if (!c || PyObject_SetAttrString(e, "code", c) < 0) {
        Py_XDECREF(c);
        Py_DECREF(e);
        return NULL;
    }
    Py_DECREF(c);
    PyErr_SetObject(cls, e);
    Py_DECREF(e);
    return NULL;
}

PyObject *raise_data(const DataObject *d, int code, const char *func)
{
    const char *msg = mbs_data_error(d->d);
    if (msg && *msg) return raise_status(code, msg);
    char buf[256];
    snprintf(buf, sizeof buf, "%s: %s", func, mbs_status_string(code));
    return raise_status(code, buf);
}

static int add_errors(PyObject *mod)
{
    mbspy_Error = PyErr_NewExceptionWithDoc("mbsens.Error",
                                            "Base class of the errors the mbsens library reports; `code` is "
                                            "its status (mbsens/error.h).", PyExc_Exception, NULL);
    if (!mbspy_Error || PyModule_AddObjectRef(mod, "Error", mbspy_Error) < 0) return -1;
    for (int k = 0; k < NERRORS; k++) {
        char qual[64];
        snprintf(qual, sizeof qual, "mbsens.%s", ERRORS[k].name);
        PyObject *bases = PyTuple_Pack(2, mbspy_Error, *ERRORS[k].base);
        if (!bases) return -1;
        error_class[k] = PyErr_NewExceptionWithDoc(qual, ERRORS[k].doc, bases, NULL);
        Py_DECREF(bases);
        if (!error_class[k] || PyModule_AddObjectRef(mod, ERRORS[k].name, error_class[k]) < 0) return -1;
    }
    mbspy_ModelWarning = PyErr_NewExceptionWithDoc("mbsens.ModelWarning",
                                                   "A loader's warning: accepted but suspicious input.",
                                                   PyExc_UserWarning, NULL);
    if (!mbspy_ModelWarning || PyModule_AddObjectRef(mod, "ModelWarning", mbspy_ModelWarning) < 0) return -1;
    return 0;
}

static int add_constants(PyObject *mod)
{
    PyObject *codes = PyDict_New();
    if (!codes) return -1;
    for (int k = 0; k < NERRORS; k++) {
        PyObject *v = PyLong_FromLong(ERRORS[k].code);
        if (!v || PyDict_SetItemString(codes, mbs_status_string(ERRORS[k].code), v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(codes);
            return -1;
        }
        Py_DECREF(v);
    }
    if (PyModule_AddObject(mod, "STATUS", codes) < 0) {
        Py_DECREF(codes);
        return -1;
    }
    return PyModule_AddStringConstant(mod, "library_version", mbs_version());
}

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "mbsens._mbsens",
    "The mbsens C library (recursive multibody dynamics with analytical sensitivities) for numpy arrays.\n"
    "Use it through the package mbsens.", -1, NULL, NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__mbsens(void)
{
    import_array();
    PyObject *mod = PyModule_Create(&moduledef);
    if (!mod) return NULL;
    if (add_errors(mod) < 0 || add_constants(mod) < 0) goto fail;
    if (PyType_Ready(&Model_Type) < 0 || PyType_Ready(&Data_Type) < 0 || PyType_Ready(&Integrator_Type) < 0)
        goto fail;
    if (PyModule_AddObjectRef(mod, "Model", (PyObject *)&Model_Type) < 0 ||
        PyModule_AddObjectRef(mod, "Data", (PyObject *)&Data_Type) < 0 ||
        PyModule_AddObjectRef(mod, "Integrator", (PyObject *)&Integrator_Type) < 0)
        goto fail;
    if (PyModule_AddFunctions(mod, mbspy_dynamics_methods) < 0 ||
        PyModule_AddFunctions(mod, mbspy_constraint_methods) < 0 ||
        PyModule_AddFunctions(mod, mbspy_run_methods) < 0 ||
        PyModule_AddFunctions(mod, mbspy_simulate_methods) < 0 ||
        PyModule_AddFunctions(mod, mbspy_manifold_methods) < 0)
        goto fail;
    return mod;
fail:
    Py_DECREF(mod);
    return NULL;
}
