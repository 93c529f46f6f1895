/*
 * callbacks.c - the GIL around long calls. The library runs without the
 * GIL; a callback into Python takes it (PyGILState_Ensure: valid on any
 * thread the library calls from) and gives it back. The first exception a
 * callback raises is kept, the library call is stopped through the
 * callback's return value, and the exception is raised when the call has
 * returned.
 */
#include <string.h>

#include "mbspy.h"

void pc_init(pycall *c) { memset(c, 0, sizeof *c); }

void pc_release(pycall *c)
{
    c->ts = PyEval_SaveThread();
    c->released = 1;
}

void pc_restore(pycall *c)
{
    if (!c->released) return;
    PyEval_RestoreThread(c->ts);
    c->released = 0;
}

PyGILState_STATE pc_enter(void) { return PyGILState_Ensure(); }

void pc_leave(PyGILState_STATE s) { PyGILState_Release(s); }

int pc_keep_error(pycall *c)
{
    if (!PyErr_Occurred()) return 0;
    if (c->etype) PyErr_Clear();   /* the first one is reported */
    else PyErr_Fetch(&c->etype, &c->evalue, &c->etb);
    return 1;
}

int pc_failed(const pycall *c) { return c->etype != NULL; }

int pc_finish(pycall *c)
{
    if (!c->etype) return 0;
    PyErr_Restore(c->etype, c->evalue, c->etb);
    c->etype = c->evalue = c->etb = NULL;
    return 1;
}

int pc_check_signals(pycall *c)
{
    PyGILState_STATE s = pc_enter();
    int stop = PyErr_CheckSignals() < 0 && pc_keep_error(c);
    pc_leave(s);
    return stop;
}

int pc_check_signals_every(pycall *c, long *count)
{
    if (++*count < PC_CHECK_EVERY) return 0;
    *count = 0;
    return pc_check_signals(c);
}

int pc_says_stop(PyObject *result) { return result == Py_False; }
