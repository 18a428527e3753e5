/* mcap_object.c: runlab._runlab.Mcap, an MCAP recording opened with librunlab's indexed
 * reader, and its message iterator: each message's payload decoded by runlab's own
 * decoder (rl_msg_to_json, the one `runlab mcap cat --json` uses) with the GIL released;
 * runlab/mcap.py turns the JSON into dicts and DataFrames. */
#include "pyrunlab.h"

#include <stdlib.h>
#include <string.h>

#include <runlab/error.h>
#include <runlab/mcap.h>
#include <runlab/msgdef.h>

enum { CH_UNKNOWN = 0, CH_CDR, CH_JSON, CH_RAW };

typedef struct {
    PyObject_HEAD
    rl_mcap_indexed *idx;
    unsigned char *kind; /* by channel id: CH_* */
    rl_msgdef **defs;    /* by channel id, parsed on first message */
    /* librunlab's indexed reader is for one thread at a time: iterators of this file take
     * the lock (with the GIL released) while they read and decode. */
    PyThread_type_lock lock;
} PyRlMcap;

typedef struct {
    PyObject_HEAD
    PyRlMcap *owner;
    rl_mcap_message_iter *it;
    char *json;
    size_t json_cap;
} PyRlMcapIter;

static PyTypeObject PyRlMcapIter_Type;

static PyObject *bytes_str(rl_mcap_bytes b)
{
    return PyUnicode_DecodeUTF8((const char *)b.data, (Py_ssize_t)b.len, "replace");
}

static void mcap_dealloc(PyRlMcap *self)
{
    if (self->defs)
        for (size_t i = 0; i < 65536; i++)
            rl_msgdef_free(self->defs[i]);
    free(self->defs);
    free(self->kind);
    if (self->idx)
        rl_mcap_indexed_close(self->idx);
    if (self->lock)
        PyThread_free_lock(self->lock);
    PyObject_Free(self);
}

/* open_mcap(path) -> Mcap */
PyObject *pyrl_open_mcap(PyObject *self, PyObject *args);
PyObject *pyrl_open_mcap(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path_bytes;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path_bytes))
        return NULL;
    rl_mcap_indexed *idx = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = rl_mcap_indexed_open(&idx, PyBytes_AS_STRING(path_bytes), 0);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_bytes);
    if (rc < 0)
        return pyrl_raise(rc, rl_error_last());
    PyRlMcap *obj = PyObject_New(PyRlMcap, &PyRlMcap_Type);
    if (!obj) {
        rl_mcap_indexed_close(idx);
        return NULL;
    }
    obj->idx = idx;
    obj->kind = calloc(65536, 1);
    obj->defs = calloc(65536, sizeof *obj->defs);
    obj->lock = PyThread_allocate_lock();
    if (!obj->kind || !obj->defs || !obj->lock) {
        Py_DECREF(obj);
        return PyErr_NoMemory();
    }
    return (PyObject *)obj;
}

/* summary() -> (schemas, channels, statistics or None, warnings)
 *   schemas: [(id, name, encoding, data bytes)], channels: [(id, topic, schema_id,
 *   message_encoding)], statistics: dict */
static PyObject *mcap_summary(PyRlMcap *self, PyObject *unused)
{
    (void)unused;
    const rl_mcap_schema *schemas;
    const rl_mcap_channel *channels;
    size_t ns = rl_mcap_indexed_schemas(self->idx, &schemas);
    size_t nc = rl_mcap_indexed_channels(self->idx, &channels);
    PyObject *s = PyList_New(0), *c = PyList_New(0), *w = PyList_New(0), *st = NULL;
    if (!s || !c || !w)
        goto fail;
    for (size_t i = 0; i < ns; i++) {
        PyObject *t = Py_BuildValue("(HNNy#)", schemas[i].id, bytes_str(schemas[i].name),
                                    bytes_str(schemas[i].encoding),
                                    (const char *)schemas[i].data.data,
                                    (Py_ssize_t)schemas[i].data.len);
        if (!t || PyList_Append(s, t) < 0) {
            Py_XDECREF(t);
            goto fail;
        }
        Py_DECREF(t);
    }
    for (size_t i = 0; i < nc; i++) {
        PyObject *t = Py_BuildValue("(HNHN)", channels[i].id, bytes_str(channels[i].topic),
                                    channels[i].schema_id,
                                    bytes_str(channels[i].message_encoding));
        if (!t || PyList_Append(c, t) < 0) {
            Py_XDECREF(t);
            goto fail;
        }
        Py_DECREF(t);
    }
    const char *const *warnings;
    size_t nw = rl_mcap_indexed_warnings(self->idx, &warnings);
    for (size_t i = 0; i < nw; i++) {
        PyObject *t = PyUnicode_DecodeUTF8(warnings[i], (Py_ssize_t)strlen(warnings[i]),
                                           "replace");
        if (!t || PyList_Append(w, t) < 0) {
            Py_XDECREF(t);
            goto fail;
        }
        Py_DECREF(t);
    }
    const rl_mcap_statistics *stats = rl_mcap_indexed_statistics(self->idx);
    if (stats) {
        PyObject *counts = PyDict_New();
        if (!counts)
            goto fail;
        size_t pos = 0;
        uint16_t id;
        uint64_t n;
        while (rl_mcap_map_u16u64_next(stats->channel_message_counts, &pos, &id, &n) == 1) {
            PyObject *k = PyLong_FromLong(id), *v = PyLong_FromUnsignedLongLong(n);
            if (!k || !v || PyDict_SetItem(counts, k, v) < 0) {
                Py_XDECREF(k);
                Py_XDECREF(v);
                Py_DECREF(counts);
                goto fail;
            }
            Py_DECREF(k);
            Py_DECREF(v);
        }
        st = Py_BuildValue(
            "{s:K,s:I,s:I,s:I,s:I,s:I,s:K,s:K,s:N}", "message_count",
            (unsigned long long)stats->message_count, "schema_count",
            (unsigned)stats->schema_count, "channel_count", (unsigned)stats->channel_count,
            "attachment_count", (unsigned)stats->attachment_count, "metadata_count",
            (unsigned)stats->metadata_count, "chunk_count", (unsigned)stats->chunk_count,
            "message_start_time", (unsigned long long)stats->message_start_time,
            "message_end_time", (unsigned long long)stats->message_end_time,
            "channel_message_counts", counts);
        if (!st)
            goto fail;
    } else {
        st = Py_None;
        Py_INCREF(st);
    }
    return Py_BuildValue("(NNNN)", s, c, st, w);
fail:
    Py_XDECREF(s);
    Py_XDECREF(c);
    Py_XDECREF(w);
    return NULL;
}

static int bytes_eq(rl_mcap_bytes b, const char *s)
{
    return b.len == strlen(s) && memcmp(b.data, s, b.len) == 0;
}

static char *bytes_dup(rl_mcap_bytes b)
{
    char *s = malloc(b.len + 1);
    if (s) {
        memcpy(s, b.data, b.len);
        s[b.len] = '\0';
    }
    return s;
}

/* Decides once per channel how its payloads are decoded (as `mcap cat --json` does).
 * Called without the GIL, under the Mcap's lock. On a schema that does not parse, *why gets
 * the message (to be freed). */
static int channel_kind(PyRlMcap *m, const rl_mcap_channel *ch, char **why)
{
    unsigned char *k = &m->kind[ch->id];
    if (*k != CH_UNKNOWN)
        return *k;
    *k = CH_RAW;
    if (bytes_eq(ch->message_encoding, "json"))
        return *k = CH_JSON;
    if (!bytes_eq(ch->message_encoding, "cdr"))
        return *k;
    const rl_mcap_schema *s = ch->schema_id ? rl_mcap_indexed_schema(m->idx, ch->schema_id) : NULL;
    if (!s)
        return *k;
    char *name = bytes_dup(s->name), *enc = bytes_dup(s->encoding);
    if (name && enc &&
        rl_msgdef_parse(&m->defs[ch->id], enc, name, (const char *)s->data.data, s->data.len) ==
            RL_OK)
        *k = CH_CDR;
    else
        *why = strdup(name && enc ? rl_error_last() : "out of memory");
    free(name);
    free(enc);
    return *k;
}

/* messages(topics or None, start, end) -> iterator of (topic, log_time, kind, payload):
 * kind "json" (payload: JSON text of the decoded message), "raw" (payload: bytes, the
 * channel's encoding is not decoded) or "error" (payload: (message, bytes)). */
static PyObject *mcap_messages(PyRlMcap *self, PyObject *args)
{
    PyObject *topics_in;
    unsigned long long start, end;
    if (!PyArg_ParseTuple(args, "OKK", &topics_in, &start, &end))
        return NULL;
    rl_mcap_query q;
    rl_mcap_query_default(&q);
    q.start_time = start;
    q.end_time = end;
    const char **topics = NULL;
    PyObject *seq = NULL;
    if (topics_in != Py_None) {
        seq = PySequence_Fast(topics_in, "topics must be a sequence of str");
        if (!seq)
            return NULL;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        topics = PyMem_Calloc((size_t)n + 1, sizeof *topics);
        if (!topics) {
            Py_DECREF(seq);
            return PyErr_NoMemory();
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            topics[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i));
            if (!topics[i]) {
                PyMem_Free(topics);
                Py_DECREF(seq);
                return NULL;
            }
        }
        q.topics = topics;
        q.topic_count = (size_t)n;
    }
    rl_mcap_message_iter *it = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    rc = rl_mcap_indexed_messages(self->idx, &q, &it);
    PyThread_release_lock(self->lock);
    Py_END_ALLOW_THREADS
    PyMem_Free(topics);
    Py_XDECREF(seq);
    if (rc < 0)
        return pyrl_raise(rc, rl_error_last());
    PyRlMcapIter *obj = PyObject_New(PyRlMcapIter, &PyRlMcapIter_Type);
    if (!obj) {
        rl_mcap_message_iter_free(it);
        return NULL;
    }
    Py_INCREF(self);
    obj->owner = self;
    obj->it = it;
    obj->json = NULL;
    obj->json_cap = 0;
    return (PyObject *)obj;
}

static void iter_dealloc(PyRlMcapIter *self)
{
    rl_mcap_message_iter_free(self->it);
    free(self->json);
    Py_DECREF(self->owner);
    PyObject_Free(self);
}

static PyObject *iter_next(PyRlMcapIter *self)
{
    rl_mcap_message msg;
    const rl_mcap_channel *ch = NULL;
    int rc, kind = CH_RAW, drc = RL_OK;
    size_t n = 0;
    char *why = NULL;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->owner->lock, WAIT_LOCK);
    rc = rl_mcap_message_iter_next(self->it, &msg, &ch);
    if (rc == 1 && ch) {
        kind = channel_kind(self->owner, ch, &why);
        if (kind == CH_CDR)
            drc = rl_msg_to_json(self->owner->defs[ch->id], msg.data.data, msg.data.len,
                                 &self->json, &self->json_cap, &n);
    }
    Py_END_ALLOW_THREADS
    /* The lock is held until the payload is copied into Python objects: another thread
     * calling this iterator would otherwise overwrite msg.data and the JSON buffer. */
    if (rc <= 0) {
        PyThread_release_lock(self->owner->lock);
        free(why);
        return rc == 0 ? NULL /* StopIteration */ : pyrl_raise(rc, rl_error_last());
    }
    PyObject *topic = ch ? bytes_str(ch->topic) : PyUnicode_FromString("");
    PyObject *result = NULL;
    if (!topic) {
        PyThread_release_lock(self->owner->lock);
        free(why);
        return NULL;
    }
    if (kind == CH_CDR && drc == RL_OK)
        result = Py_BuildValue("(NKss#)", topic, (unsigned long long)msg.log_time, "json",
                               self->json, (Py_ssize_t)n);
    else if (kind == CH_JSON)
        result = Py_BuildValue("(NKsy#)", topic, (unsigned long long)msg.log_time, "jsontext",
                               (const char *)msg.data.data, (Py_ssize_t)msg.data.len);
    else if (kind == CH_CDR || why)
        result = Py_BuildValue("(NKs(sy#))", topic, (unsigned long long)msg.log_time, "error",
                               why ? why : rl_error_last(), (const char *)msg.data.data,
                               (Py_ssize_t)msg.data.len);
    else
        result = Py_BuildValue("(NKsy#)", topic, (unsigned long long)msg.log_time, "raw",
                               (const char *)msg.data.data, (Py_ssize_t)msg.data.len);
    PyThread_release_lock(self->owner->lock);
    free(why);
    return result;
}

static PyMethodDef mcap_methods[] = {
    {"summary", (PyCFunction)mcap_summary, METH_NOARGS,
     "summary() -> (schemas, channels, statistics, warnings)."},
    {"messages", (PyCFunction)mcap_messages, METH_VARARGS,
     "messages(topics, start, end) -> iterator of (topic, log_time, kind, payload)."},
    {NULL, NULL, 0, NULL}};

PyTypeObject PyRlMcap_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "runlab._runlab.Mcap",
    .tp_basicsize = sizeof(PyRlMcap),
    .tp_dealloc = (destructor)mcap_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An MCAP file opened by librunlab's indexed reader (see runlab.mcap).",
    .tp_methods = mcap_methods,
};

static PyTypeObject PyRlMcapIter_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "runlab._runlab.McapMessages",
    .tp_basicsize = sizeof(PyRlMcapIter),
    .tp_dealloc = (destructor)iter_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Messages of an MCAP query, in log-time order.",
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)iter_next,
};

int pyrl_mcap_ready(void)
{
    return PyType_Ready(&PyRlMcap_Type) < 0 || PyType_Ready(&PyRlMcapIter_Type) < 0 ? -1 : 0;
}
