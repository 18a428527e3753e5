/* module.c: the runlab._runlab extension module: its function table, initialisation and
 * the mapping from librunlab's return codes to runlab.Error subclasses (registered by
 * runlab/errors.py at import, so the exception classes are documented Python classes). */
#include "pyrunlab.h"

#include <runlab/error.h>
#include <runlab/version.h>

static PyObject *error_classes; /* dict: int code -> exception class */

PyObject *pyrl_raise(int code, const char *message)
{
    PyObject *cls = NULL;
    if (error_classes) {
        PyObject *key = PyLong_FromLong(code);
        if (key) {
            cls = PyDict_GetItemWithError(error_classes, key);
            Py_DECREF(key);
        }
        if (!cls && !PyErr_Occurred())
            cls = PyDict_GetItemString(error_classes, "default");
    }
    if (PyErr_Occurred())
        return NULL;
    if (code == RL_ENOMEM && !cls)
        return PyErr_NoMemory();
    PyErr_Format(cls ? cls : PyExc_RuntimeError, "%s", message && *message ? message : rl_status_name(code));
    return NULL;
}

static PyObject *register_errors(PyObject *self, PyObject *arg)
{
    (void)self;
    if (!PyDict_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "_register_errors takes a dict");
        return NULL;
    }
    Py_INCREF(arg);
    Py_XSETREF(error_classes, arg);
    Py_RETURN_NONE;
}

/* Raises the exception librunlab's `code` maps to, so tests can check the mapping for
 * codes the loaders only return on rare failures (RL_ENOMEM, RL_EIO). */
static PyObject *raise_code(PyObject *self, PyObject *args)
{
    (void)self;
    int code;
    const char *message;
    if (!PyArg_ParseTuple(args, "is", &code, &message))
        return NULL;
    return pyrl_raise(code, message);
}

static PyObject *status_name(PyObject *self, PyObject *arg)
{
    (void)self;
    long code = PyLong_AsLong(arg);
    if (code == -1 && PyErr_Occurred())
        return NULL;
    return PyUnicode_FromString(rl_status_name((int)code));
}

/* The version of the librunlab this module runs on ("0.2.0"): runlab.__version__, so that
 * the Python package never states a version its library is not. */
static PyObject *library_version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    int major = 0, minor = 0, patch = 0;
    rl_version(&major, &minor, &patch);
    return PyUnicode_FromFormat("%d.%d.%d", major, minor, patch);
}

static PyMethodDef methods[] = {
    {"version", library_version, METH_NOARGS,
     "version() -> the running librunlab's version, e.g. '0.2.0'."},
    {"load_run", pyrl_load_run, METH_VARARGS,
     "load_run(path) -> Run: rl_run_load on one run directory (GIL released)."},
    {"load_runs", pyrl_load_runs, METH_VARARGS,
     "load_runs(roots, progress) -> (runs, walk_errors): rl_runs_load_progress."},
    {"aggregate", pyrl_aggregate, METH_VARARGS,
     "aggregate(runs, walk_errors) -> (text, total, by_status, by_reason, rows)."},
    {"open_mcap", pyrl_open_mcap, METH_VARARGS,
     "open_mcap(path) -> Mcap: rl_mcap_indexed_open (GIL released)."},
    {"list_runs", pyrl_list_runs, METH_VARARGS,
     "list_runs(home) -> [dict]: rl_eval_list_runs, as `runlab list --json`."},
    {"resolve_run", pyrl_resolve_run, METH_VARARGS,
     "resolve_run(run, home) -> str: rl_eval_resolve_run."},
    {"_register_errors", register_errors, METH_O,
     "_register_errors({code: class, 'default': class}): runlab.errors calls this."},
    {"_raise", raise_code, METH_VARARGS,
     "_raise(code, message): raises what librunlab's code maps to (for the tests)."},
    {"status_name", status_name, METH_O, "status_name(code) -> 'EPARSE' etc."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_runlab",
    "The C half of the runlab package: librunlab's loaders called from Python. Use the "
    "documented modules runlab.perflog, runlab.bench, runlab.mcap and runlab.lab instead.",
    -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__runlab(void);
PyMODINIT_FUNC PyInit__runlab(void)
{
    if (pyrl_numpy_init() < 0)
        return NULL;
    if (PyType_Ready(&PyRlRun_Type) < 0 || pyrl_mcap_ready() < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    Py_INCREF(&PyRlRun_Type);
    if (PyModule_AddObject(m, "Run", (PyObject *)&PyRlRun_Type) < 0) {
        Py_DECREF(&PyRlRun_Type);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
