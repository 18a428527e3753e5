/* lab_list.c: runlab._runlab.list_runs and resolve_run, the lab's runs as `runlab list
 * --json` gives them (rl_eval_list_runs, the same keys and values, NaN as None) and a run
 * named as `runlab evaluate` takes it (rl_eval_resolve_run), for runlab/lab.py. */
#include "pyrunlab.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include <runlab/error.h>
#include <runlab/eval.h>

static PyObject *str_or_none(const char *s)
{
    if (!s)
        Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

static PyObject *num_or_none(double v)
{
    if (isnan(v))
        Py_RETURN_NONE;
    return PyFloat_FromDouble(v);
}

static PyObject *evaluations(const rl_eval_listed_run *r)
{
    PyObject *list = PyList_New((Py_ssize_t)r->nevaluations);
    for (size_t e = 0; list && e < r->nevaluations; e++) {
        const rl_eval_listed_evaluation *ev = &r->evaluations[e];
        PyObject *passed = ev->passed < 0 ? Py_None : PyBool_FromLong(ev->passed == 1);
        if (passed == Py_None)
            Py_INCREF(passed);
        PyObject *d = Py_BuildValue(
            "{s:N,s:N,s:N,s:O}", "name", str_or_none(ev->name), "passed", passed, "result",
            str_or_none(ev->verdict < 0 ? NULL : rl_eval_verdict_name((rl_eval_verdict)ev->verdict)),
            "partial", ev->partial ? Py_True : Py_False);
        if (!d) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)e, d);
    }
    return list;
}

static PyObject *listed_run(const rl_eval_listed_run *r)
{
    PyObject *vehicles = PyList_New((Py_ssize_t)r->nvehicles);
    for (size_t v = 0; vehicles && v < r->nvehicles; v++) {
        PyObject *n = PyLong_FromLong(r->vehicles[v]);
        if (!n) {
            Py_CLEAR(vehicles);
            break;
        }
        PyList_SET_ITEM(vehicles, (Py_ssize_t)v, n);
    }
    PyObject *faults = PyList_New((Py_ssize_t)r->nfaults);
    for (size_t f = 0; faults && f < r->nfaults; f++) {
        PyObject *s = str_or_none(r->faults[f]);
        if (!s) {
            Py_CLEAR(faults);
            break;
        }
        PyList_SET_ITEM(faults, (Py_ssize_t)f, s);
    }
    PyObject *evs = evaluations(r);
    if (!vehicles || !faults || !evs) {
        Py_XDECREF(vehicles);
        Py_XDECREF(faults);
        Py_XDECREF(evs);
        return NULL;
    }
    const rl_eval_listed_evaluation *full = rl_eval_listed_full(r),
                                    *partial = rl_eval_listed_newer_partial(r);
    PyObject *seed = r->seed >= 0 ? PyLong_FromLongLong(r->seed) : (Py_INCREF(Py_None), Py_None);
    return Py_BuildValue(
        "{s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N}",
        "directory", str_or_none(r->name), "path", str_or_none(r->dir), "run_id",
        str_or_none(r->run_id), "state", str_or_none(r->state), "result",
        str_or_none(r->result), "vehicles", vehicles, "start", str_or_none(r->start),
        "duration", num_or_none(r->duration_s), "planner", str_or_none(r->planner),
        "map_sha256", str_or_none(r->map_sha256), "scenario", str_or_none(r->scenario), "seed",
        seed, "faults", faults, "planned_duration", num_or_none(r->planned_s), "interruption",
        str_or_none(r->interruption), "evaluations", evs, "verdict",
        str_or_none(full ? rl_eval_verdict_name((rl_eval_verdict)full->verdict) : NULL),
        "verdict_evaluation", str_or_none(full ? full->name : NULL),
        "newer_partial_evaluation", str_or_none(partial ? partial->name : NULL));
}

/* A path argument that may be None (then NULL: librunlab's default home). */
static int optional_path(PyObject *arg, void *out)
{
    if (arg == Py_None) {
        *(PyObject **)out = NULL;
        return 1;
    }
    return PyUnicode_FSConverter(arg, out);
}

static const char *path_of(PyObject *bytes)
{
    return bytes ? PyBytes_AS_STRING(bytes) : NULL;
}

/* list_runs(home: path or None) -> list of dict, newest first */
PyObject *pyrl_list_runs(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *home_bytes = NULL;
    if (!PyArg_ParseTuple(args, "O&", optional_path, &home_bytes))
        return NULL;
    rl_eval_listed_run *runs = NULL;
    size_t n = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = rl_eval_list_runs(path_of(home_bytes), &runs, &n);
    Py_END_ALLOW_THREADS
    Py_XDECREF(home_bytes);
    if (rc < 0)
        return pyrl_raise(rc, rl_error_last());
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *d = listed_run(&runs[i]);
        if (!d) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, d);
    }
    rl_eval_list_free(runs, n);
    return list;
}

/* resolve_run(run: path, home: path or None) -> str: the run's directory */
PyObject *pyrl_resolve_run(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *run_bytes = NULL, *home_bytes = NULL;
    if (!PyArg_ParseTuple(args, "O&O&", PyUnicode_FSConverter, &run_bytes, optional_path,
                          &home_bytes))
        return NULL;
    char out[PATH_MAX];
    int rc = rl_eval_resolve_run(PyBytes_AS_STRING(run_bytes), path_of(home_bytes), out,
                                 sizeof out);
    Py_DECREF(run_bytes);
    Py_XDECREF(home_bytes);
    if (rc < 0)
        return pyrl_raise(rc, rl_error_last());
    return PyUnicode_DecodeFSDefault(out);
}
