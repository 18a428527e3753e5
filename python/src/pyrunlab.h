/* pyrunlab.h: what the C files of the runlab Python extension (runlab._runlab) share:
 * the Run type wrapping an rl_run, and the helper raising a runlab.Error subclass from
 * librunlab's return code and thread-local message. */
#ifndef PYRUNLAB_H
#define PYRUNLAB_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <runlab/runs.h>

/* A loaded run; owns the rl_run. Its numpy columns point into the run's own buffers and
 * keep the Run alive through their base object, so nothing is copied after loading. */
typedef struct {
    PyObject_HEAD
    rl_run *run;
} PyRlRun;

extern PyTypeObject PyRlRun_Type;

/* Wraps `run` (takes ownership, frees it on failure). */
PyObject *pyrl_run_wrap(rl_run *run);

/* Raises the runlab.Error subclass registered for `code` (RL_E*), with `message`.
 * Returns NULL for `return pyrl_raise(...)`. */
PyObject *pyrl_raise(int code, const char *message);

/* Module functions defined in run_object.c. */
PyObject *pyrl_load_run(PyObject *self, PyObject *args);
PyObject *pyrl_load_runs(PyObject *self, PyObject *args);
PyObject *pyrl_aggregate(PyObject *self, PyObject *args);
/* mcap_object.c: the Mcap type and runlab._runlab.open_mcap. */
extern PyTypeObject PyRlMcap_Type;
PyObject *pyrl_open_mcap(PyObject *self, PyObject *args);
int pyrl_mcap_ready(void);

/* lab_list.c: runlab._runlab.list_runs and resolve_run. */
PyObject *pyrl_list_runs(PyObject *self, PyObject *args);
PyObject *pyrl_resolve_run(PyObject *self, PyObject *args);

/* One-time numpy C-API import; returns -1 with an exception set on failure. */
int pyrl_numpy_init(void);

#endif
