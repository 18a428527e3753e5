/* The recorder node's parameter snapshots: a reader of rt/lab/parameters for the node's
 * whole life (transient-local, so each node's latest snapshot comes however late the
 * recorder or the node joined), the latest snapshot per node name, and from them and what
 * the control flow handed to prepare a run's config/nodes.json and its manifest scenario. */
#include "lab/lab_internal.h"

#include "runlab/error.h"
#include "runlab/log.h"
#include "runlab/time.h"

#include "runlab_msgs.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Bounds: a snapshot's text and the nodes kept (a hostile writer cannot grow the node). */
enum { PARAMS_MAX_NODES = 64, PARAMS_MAX_TEXT = 64 * 1024, PARAMS_MAX_WRITERS = 256 };

typedef struct node_params {
    char *name;
    json_object *parameters; /* the snapshot's object (or its text as a string) */
    uint64_t stamp;
} node_params;

struct lab_params {
    dds_entity_t reader;
    node_params nodes[PARAMS_MAX_NODES];
    size_t count;
    dds_instance_handle_t writers[PARAMS_MAX_WRITERS]; /* writers whose snapshot came */
    size_t nwriters;
};

int lab_params_new(lab_params **out, dds_entity_t participant)
{
    *out = NULL;
    lab_params *p = calloc(1, sizeof *p);
    if (!p)
        return rl_error_set(RL_ENOMEM, "out of memory");
    dds_entity_t t = dds_create_topic(participant, &runlab_msgs_msg_dds__ParameterSnapshot__desc,
                                      RL_LAB_TOPIC_PARAMETERS, NULL, NULL);
    dds_qos_t *q = lab_qos(1, 0);
    p->reader = t < 0 ? t : dds_create_reader(participant, t, q, NULL);
    dds_delete_qos(q);
    if (p->reader < 0) {
        int rc = lab_dds_fail(p->reader, "parameter snapshot reader");
        free(p);
        return rc;
    }
    *out = p;
    return RL_OK;
}

void lab_params_free(lab_params *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->count; i++) {
        free(p->nodes[i].name);
        json_object_put(p->nodes[i].parameters);
    }
    free(p); /* the reader is the participant's */
}

static void note_writer(lab_params *p, dds_instance_handle_t w)
{
    for (size_t i = 0; i < p->nwriters; i++)
        if (p->writers[i] == w)
            return;
    if (p->nwriters < PARAMS_MAX_WRITERS)
        p->writers[p->nwriters++] = w;
}

static void keep(lab_params *p, const runlab_msgs_msg_dds__ParameterSnapshot_ *m)
{
    if (!m->node_name || !m->node_name[0] || strlen(m->node_name) > 256 || !m->parameters_json)
        return;
    size_t len = strlen(m->parameters_json);
    if (len > PARAMS_MAX_TEXT) {
        rl_log(RL_LOG_WARN, "recorder: parameters of node %.64s: %zu bytes, more than %d: "
               "not kept (the bag has them)", m->node_name, len, PARAMS_MAX_TEXT);
        return;
    }
    size_t k = 0;
    while (k < p->count && strcmp(p->nodes[k].name, m->node_name) != 0)
        k++;
    if (k < p->count && p->nodes[k].stamp > m->stamp)
        return; /* an older snapshot of that node */
    if (k == p->count) {
        if (p->count == PARAMS_MAX_NODES) {
            rl_log(RL_LOG_WARN, "recorder: parameters of more than %d nodes: node %.64s not kept",
                   PARAMS_MAX_NODES, m->node_name);
            return;
        }
        if (!(p->nodes[k].name = strdup(m->node_name)))
            return;
        p->count++;
    }
    /* A snapshot that is no JSON object is kept as the text it is. */
    json_object *o = json_tokener_parse(m->parameters_json);
    if (!json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        o = json_object_new_string(m->parameters_json);
    }
    json_object_put(p->nodes[k].parameters);
    p->nodes[k].parameters = o;
    p->nodes[k].stamp = m->stamp;
}

static void take(lab_params *p)
{
    void *samples[8] = {0};
    dds_sample_info_t si[8];
    dds_return_t n;
    while ((n = dds_take(p->reader, samples, si, 8, 8)) > 0) {
        for (int i = 0; i < n; i++) {
            if (!si[i].valid_data)
                continue;
            note_writer(p, si[i].publication_handle);
            keep(p, samples[i]);
        }
        dds_return_loan(p->reader, samples, n);
    }
}

size_t lab_params_settle(lab_params *p, int64_t timeout_ns)
{
    int64_t deadline = rl_mono_ns() + timeout_ns;
    for (;;) {
        take(p);
        dds_subscription_matched_status_t st;
        size_t missing = 0;
        if (dds_get_subscription_matched_status(p->reader, &st) == DDS_RETCODE_OK &&
            st.current_count > p->nwriters)
            missing = st.current_count - p->nwriters;
        if (!missing || rl_mono_ns() >= deadline)
            return missing;
        struct timespec ts = {0, 10 * 1000000};
        nanosleep(&ts, NULL);
    }
}

int lab_params_build(lab_params *p, const char *given, char **nodes_out, char **scenario_out)
{
    *nodes_out = *scenario_out = NULL;
    take(p);
    json_object *nodes = given && given[0] ? json_tokener_parse(given) : json_object_new_object();
    if (!json_object_is_type(nodes, json_type_object)) {
        json_object_put(nodes);
        return rl_error_set(RL_EINVAL, "node parameter snapshots: not a JSON object");
    }
    for (size_t i = 0; i < p->count; i++) {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "parameters", json_object_get(p->nodes[i].parameters));
        char iso[64] = "";
        (void)rl_time_format_iso((int64_t)p->nodes[i].stamp, iso, sizeof iso);
        json_object_object_add(e, "stamp", json_object_new_string(iso));
        json_object_object_add(e, "source", json_object_new_string(RL_LAB_TOPIC_PARAMETERS));
        json_object_object_add(nodes, p->nodes[i].name, e);
    }
    /* The scenario: each node's own account of what the run was set up to do, the
       "scenario" member of its parameters. */
    json_object *scenario = json_object_new_object();
    json_object_object_foreach(nodes, name, entry) {
        json_object *params, *sc;
        if (json_object_object_get_ex(entry, "parameters", &params) &&
            json_object_object_get_ex(params, "scenario", &sc) &&
            json_object_is_type(sc, json_type_object))
            json_object_object_add(scenario, name, json_object_get(sc));
    }
    const char *nt = json_object_to_json_string_ext(nodes, JSON_C_TO_STRING_PLAIN);
    const char *st = json_object_to_json_string_ext(scenario, JSON_C_TO_STRING_PLAIN);
    *nodes_out = nt ? strdup(nt) : NULL;
    *scenario_out = st ? strdup(st) : NULL;
    json_object_put(nodes);
    json_object_put(scenario);
    if (!*nodes_out || !*scenario_out) {
        free(*nodes_out);
        free(*scenario_out);
        *nodes_out = *scenario_out = NULL;
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    return RL_OK;
}
