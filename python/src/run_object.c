/* run_object.c: runlab._runlab.Run, one run loaded by librunlab's rl_run_load, and the
 * loaders behind runlab.perflog (load_run, load_runs, aggregate_report). Columns are numpy
 * arrays over the C loader's own buffers: no Python float per cell, no copy. The GIL is
 * released while C loads. */
#include "pyrunlab.h"

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <runlab/error.h>

int pyrl_numpy_init(void)
{
    import_array1(-1);
    return 0;
}

/* ---- the Run type ------------------------------------------------------------------------ */

PyObject *pyrl_run_wrap(rl_run *run)
{
    PyRlRun *obj = PyObject_New(PyRlRun, &PyRlRun_Type);
    if (!obj) {
        rl_run_free(run);
        return NULL;
    }
    obj->run = run;
    return (PyObject *)obj;
}

static void run_dealloc(PyRlRun *self)
{
    rl_run_free(self->run);
    PyObject_Free(self);
}

static PyObject *double_or_none(double v)
{
    if (isnan(v))
        Py_RETURN_NONE;
    return PyFloat_FromDouble(v);
}

static PyObject *run_path(PyRlRun *self, void *closure)
{
    (void)closure;
    return PyUnicode_DecodeFSDefault(self->run->path);
}

static PyObject *run_status(PyRlRun *self, void *closure)
{
    (void)closure;
    static const char *const names[] = {"PARSED", "DEGRADED", "SKIPPED"};
    unsigned s = (unsigned)self->run->status;
    return PyUnicode_FromString(s < 3 ? names[s] : "SKIPPED");
}

static PyObject *run_reasons(PyRlRun *self, void *closure)
{
    (void)closure;
    PyObject *list = PyList_New(0);
    for (int k = 0; list && k < RL_REASON_COUNT; k++) {
        if (!rl_run_has_reason(self->run, (rl_run_reason)k))
            continue;
        PyObject *name = PyUnicode_FromString(rl_run_reason_name((rl_run_reason)k));
        if (!name || PyList_Append(list, name) < 0) {
            Py_XDECREF(name);
            Py_CLEAR(list);
            break;
        }
        Py_DECREF(name);
    }
    return list;
}

static PyObject *string_list(char *const *items, size_t n)
{
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *s = PyUnicode_DecodeUTF8(items[i], (Py_ssize_t)strlen(items[i]), "replace");
        if (!s) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, s);
    }
    return list;
}

static PyObject *run_messages(PyRlRun *self, void *closure)
{
    (void)closure;
    return string_list(self->run->messages, self->run->num_messages);
}

static PyObject *run_column_names(PyRlRun *self, void *closure)
{
    (void)closure;
    return string_list(self->run->column_names, self->run->num_columns);
}

static PyObject *run_num_rows(PyRlRun *self, void *closure)
{
    (void)closure;
    return PyLong_FromSize_t(self->run->num_rows);
}

/* One column as a 1-D float64 array over the run's buffer; its base is the Run. */
static PyObject *column_array(PyRlRun *self, size_t j)
{
    npy_intp n = (npy_intp)self->run->num_rows;
    double *data = self->run->columns ? self->run->columns[j] : NULL;
    if (!data || n == 0)
        return PyArray_SimpleNew(1, (npy_intp[]){0}, NPY_DOUBLE);
    PyObject *arr = PyArray_SimpleNewFromData(1, &n, NPY_DOUBLE, data);
    if (!arr)
        return NULL;
    Py_INCREF(self);
    if (PyArray_SetBaseObject((PyArrayObject *)arr, (PyObject *)self) < 0) {
        Py_DECREF(arr); /* SetBaseObject stole the reference even on failure */
        return NULL;
    }
    return arr;
}

/* A new dict on each call: caching it here would make a cycle (Run -> dict -> array ->
 * Run) that the collector cannot see, since Run is not a GC type; RunData caches it. */
static PyObject *run_columns(PyRlRun *self, void *closure)
{
    (void)closure;
    PyObject *dict = PyDict_New();
    for (size_t j = 0; dict && j < self->run->num_columns; j++) {
        PyObject *arr = column_array(self, j);
        if (!arr || PyDict_SetItemString(dict, self->run->column_names[j], arr) < 0) {
            Py_XDECREF(arr);
            Py_CLEAR(dict);
            break;
        }
        Py_DECREF(arr);
    }
    return dict;
}

static PyObject *json_text(json_object *obj)
{
    if (!obj)
        Py_RETURN_NONE;
    const char *s = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

static PyObject *run_manifest_json(PyRlRun *self, void *closure)
{
    (void)closure;
    return json_text(self->run->manifest);
}

static PyObject *run_summary_json(PyRlRun *self, void *closure)
{
    (void)closure;
    return json_text(self->run->summary);
}

static PyObject *run_final_gain(PyRlRun *self, void *closure)
{
    (void)closure;
    return double_or_none(self->run->final_gain);
}

static PyObject *run_total_cost(PyRlRun *self, void *closure)
{
    (void)closure;
    return double_or_none(self->run->total_cost);
}

static PyObject *run_elapsed(PyRlRun *self, void *closure)
{
    (void)closure;
    return double_or_none(self->run->elapsed_s);
}

static PyObject *run_seed(PyRlRun *self, void *closure)
{
    (void)closure;
    if (!self->run->has_seed)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(self->run->seed);
}

static PyObject *run_layer_gains(PyRlRun *self, void *closure)
{
    (void)closure;
    PyObject *dict = PyDict_New();
    for (size_t k = 0; dict && k < self->run->num_gain_layers; k++) {
        PyObject *v = double_or_none(self->run->layer_gains[k]);
        if (!v || PyDict_SetItemString(dict, self->run->gain_layers[k], v) < 0)
            Py_CLEAR(dict);
        Py_XDECREF(v);
    }
    return dict;
}

static PyGetSetDef run_getset[] = {
    {"path", (getter)run_path, NULL, "The run directory as given or found.", NULL},
    {"status", (getter)run_status, NULL, "'PARSED', 'DEGRADED' or 'SKIPPED'.", NULL},
    {"reasons", (getter)run_reasons, NULL, "Reason names (docs/perflog.md).", NULL},
    {"messages", (getter)run_messages, NULL, "One human-readable line per problem.", NULL},
    {"num_rows", (getter)run_num_rows, NULL, "Complete data rows kept.", NULL},
    {"column_names", (getter)run_column_names, NULL, "CSV header, in order.", NULL},
    {"columns", (getter)run_columns, NULL, "A new dict name -> float64 ndarray over the run's buffers (no copy).", NULL},
    {"manifest_json", (getter)run_manifest_json, NULL, "run_manifest.yaml as JSON text.", NULL},
    {"summary_json", (getter)run_summary_json, NULL, "episode_summary.yaml as JSON text.", NULL},
    {"final_gain", (getter)run_final_gain, NULL, "Sum of the layer gains, or None.", NULL},
    {"final_gain_by_layer", (getter)run_layer_gains, NULL, "dict layer -> gain.", NULL},
    {"total_cost", (getter)run_total_cost, NULL, "Total cost, or None.", NULL},
    {"elapsed_time_s", (getter)run_elapsed, NULL, "Elapsed wall time, or None.", NULL},
    {"seed", (getter)run_seed, NULL, "The manifest's random_seed, or None.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject PyRlRun_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "runlab._runlab.Run",
    .tp_basicsize = sizeof(PyRlRun),
    .tp_dealloc = (destructor)run_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One run as librunlab's loader read it (wrapped by runlab.perflog.RunData).",
    .tp_getset = run_getset,
};

/* ---- loading ------------------------------------------------------------------------------- */

/* load_run(path: bytes) -> Run */
PyObject *pyrl_load_run(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path_bytes;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path_bytes))
        return NULL;
    const char *path = PyBytes_AS_STRING(path_bytes);
    rl_run *run = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = rl_run_load(path, NULL, &run);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        Py_DECREF(path_bytes);
        return pyrl_raise(rc, rl_error_last());
    }
    Py_DECREF(path_bytes);
    return pyrl_run_wrap(run);
}

/* The progress callback runs on the loading (calling) thread with the GIL released: it
 * takes the GIL back for the Python callable. An exception stops further calls and is
 * raised when loading ends (the C loader cannot be interrupted midway). */
typedef struct {
    PyObject *callable;
    PyThreadState *saved;
    int failed;
} load_progress;

static void on_progress(size_t done, size_t total, const char *path, void *user)
{
    load_progress *p = user;
    if (p->failed)
        return;
    PyEval_RestoreThread(p->saved);
    PyObject *r = PyObject_CallFunction(p->callable, "nny", (Py_ssize_t)done,
                                        (Py_ssize_t)total, path);
    if (!r)
        p->failed = 1;
    Py_XDECREF(r);
    p->saved = PyEval_SaveThread();
}

static void free_roots(char **roots, PyObject **owners, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++)
        Py_XDECREF(owners[i]);
    PyMem_Free(owners);
    PyMem_Free(roots);
}

/* load_runs(roots: sequence of str/path, progress: callable or None)
 *   -> (list of Run, list of walk-error str) */
PyObject *pyrl_load_runs(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *seq_in, *callable;
    if (!PyArg_ParseTuple(args, "OO", &seq_in, &callable))
        return NULL;
    PyObject *seq = PySequence_Fast(seq_in, "roots must be a sequence of paths");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    char **roots = PyMem_Calloc((size_t)n + 1, sizeof *roots);
    PyObject **owners = PyMem_Calloc((size_t)n + 1, sizeof *owners);
    if (!roots || !owners) {
        Py_DECREF(seq);
        free_roots(roots, owners, 0);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyUnicode_FSConverter(PySequence_Fast_GET_ITEM(seq, i), &owners[i])) {
            Py_DECREF(seq);
            free_roots(roots, owners, i);
            return NULL;
        }
        roots[i] = PyBytes_AS_STRING(owners[i]);
    }
    Py_DECREF(seq);

    rl_run_set *set = NULL;
    load_progress prog = {callable == Py_None ? NULL : callable, NULL, 0};
    int rc;
    prog.saved = PyEval_SaveThread();
    rc = rl_runs_load_progress((const char *const *)roots, (size_t)n, NULL,
                               prog.callable ? on_progress : NULL, &prog, &set);
    PyEval_RestoreThread(prog.saved);
    free_roots(roots, owners, n);
    if (rc < 0)
        return pyrl_raise(rc, rl_error_last());
    if (prog.failed) {
        rl_run_set_free(set);
        return NULL;
    }

    PyObject *runs = PyList_New((Py_ssize_t)set->count);
    PyObject *errors = runs ? string_list(set->walk_errors, set->num_walk_errors) : NULL;
    for (size_t i = 0; errors && i < set->count; i++) {
        PyObject *r = pyrl_run_wrap(set->runs[i]); /* takes the run, even on failure */
        set->runs[i] = NULL;
        if (!r) {
            Py_CLEAR(errors);
            break;
        }
        PyList_SET_ITEM(runs, (Py_ssize_t)i, r);
    }
    /* Runs not yet taken (after a failure) are freed with the set; taken ones are NULL. */
    for (size_t i = 0; i < set->count; i++)
        if (set->runs[i])
            rl_run_free(set->runs[i]);
    set->count = 0;
    rl_run_set_free(set);
    if (!errors) {
        Py_XDECREF(runs);
        return NULL;
    }
    PyObject *result = Py_BuildValue("(NN)", runs, errors);
    return result;
}

/* aggregate(runs: sequence of Run, walk_errors: int)
 *   -> (text, total, (parsed, degraded, skipped), {reason: count}, rows) */
PyObject *pyrl_aggregate(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *seq_in;
    Py_ssize_t walk_errors;
    if (!PyArg_ParseTuple(args, "On", &seq_in, &walk_errors))
        return NULL;
    PyObject *seq = PySequence_Fast(seq_in, "runs must be a sequence of runs");
    if (!seq)
        return NULL;
    rl_runs_report report;
    memset(&report, 0, sizeof report);
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyObject_TypeCheck(item, &PyRlRun_Type)) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_TypeError, "runs[%zd] is a %s, not a loaded run", i,
                         Py_TYPE(item)->tp_name);
            return NULL;
        }
        rl_runs_report_add(&report, ((PyRlRun *)item)->run);
    }
    Py_DECREF(seq);
    report.walk_errors = walk_errors < 0 ? 0 : (size_t)walk_errors;

    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return PyErr_NoMemory();
    int rc = rl_runs_report_print(&report, mem);
    if (fclose(mem) != 0 && rc == RL_OK)
        rc = RL_EIO;
    if (rc < 0) {
        free(text);
        return pyrl_raise(rc, rl_error_last());
    }
    PyObject *reasons = PyDict_New();
    for (int k = 0; reasons && k < RL_REASON_COUNT; k++) {
        if (!report.by_reason[k])
            continue;
        PyObject *v = PyLong_FromSize_t(report.by_reason[k]);
        if (!v || PyDict_SetItemString(reasons, rl_run_reason_name((rl_run_reason)k), v) < 0)
            Py_CLEAR(reasons);
        Py_XDECREF(v);
    }
    PyObject *result =
        reasons ? Py_BuildValue("(s#n(nnn)Nn)", text, (Py_ssize_t)len, (Py_ssize_t)report.total,
                                (Py_ssize_t)report.by_status[0], (Py_ssize_t)report.by_status[1],
                                (Py_ssize_t)report.by_status[2], reasons, (Py_ssize_t)report.rows)
                : NULL;
    free(text);
    return result;
}
