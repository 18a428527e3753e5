/* What ROS 2 tools need to see runlab's nodes: the participant's nodes and their readers and
 * writers on `ros_discovery_info`, written as rmw_cyclonedds (ROS 2 Humble) writes it, so that
 * `ros2 node list` names the recorder, the experiment and each simulated vehicle. The node
 * a reader or writer belongs to follows from its topic (rt/vehicle/<id>/... is vehicle <id>'s). */
#include "lab/lab_internal.h"

#include "runlab/error.h"

#include "lab_ros_types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_NODES = 256, MAX_CHILDREN = 65536 };

/* One node being described: its name and the gids of its endpoints. */
typedef struct graph_node {
    char name[64];
    rmw_dds_common_msg_dds__Gid_ *readers, *writers;
    uint32_t nreaders, nwriters, creaders, cwriters;
} graph_node;

/* rmw_cyclonedds (Humble) puts the 16-byte GUID in front of 24 bytes of zeros. */
static int entity_gid(dds_entity_t e, rmw_dds_common_msg_dds__Gid_ *gid)
{
    dds_guid_t guid;
    if (dds_get_guid(e, &guid) < 0)
        return -1;
    memset(gid, 0, sizeof *gid);
    memcpy(gid->data, guid.v, sizeof guid.v);
    return 0;
}

/* The vehicle id of a topic rt/vehicle/<id>/..., else -1. */
static long vehicle_of(const char *topic)
{
    static const char prefix[] = "rt/vehicle/";
    if (strncmp(topic, prefix, sizeof prefix - 1) != 0)
        return -1;
    char *end = NULL;
    const char *digits = topic + sizeof prefix - 1;
    long id = strtol(digits, &end, 10);
    return end != digits && *end == '/' && id >= 0 && id < 1000000 ? id : -1;
}

static graph_node *node_named(graph_node *nodes, uint32_t *n, const char *name)
{
    for (uint32_t i = 0; i < *n; i++)
        if (strcmp(nodes[i].name, name) == 0)
            return &nodes[i];
    if (*n == MAX_NODES)
        return NULL;
    graph_node *g = &nodes[(*n)++];
    memset(g, 0, sizeof *g);
    lab_copy(g->name, sizeof g->name, name);
    return g;
}

static int push_gid(rmw_dds_common_msg_dds__Gid_ **v, uint32_t *n, uint32_t *cap,
                    const rmw_dds_common_msg_dds__Gid_ *gid)
{
    if (*n == *cap) {
        uint32_t c = *cap ? *cap * 2 : 8;
        void *p = realloc(*v, c * sizeof **v);
        if (!p)
            return rl_error_set(RL_ENOMEM, "out of memory");
        *v = p;
        *cap = c;
    }
    (*v)[(*n)++] = *gid;
    return RL_OK;
}

/* Files reader or writer `e` under its node. Endpoints of the graph itself and of DDS's
 * built-in topics belong to no node, as with rmw_cyclonedds. */
static int add_endpoint(dds_entity_t e, int is_writer, const char *main_node, graph_node *nodes,
                        uint32_t *n)
{
    char topic[256];
    dds_entity_t t = dds_get_topic(e);
    if (t < 0 || dds_get_name(t, topic, sizeof topic) < 0)
        return RL_OK; /* gone meanwhile: nothing to describe */
    if (strncmp(topic, "DCPS", 4) == 0 || strcmp(topic, RL_LAB_TOPIC_ROS_GRAPH) == 0)
        return RL_OK;
    char name[64];
    long vehicle = vehicle_of(topic);
    if (vehicle >= 0)
        snprintf(name, sizeof name, "vehicle_%ld", vehicle);
    else
        lab_copy(name, sizeof name, main_node);
    graph_node *g = node_named(nodes, n, name);
    rmw_dds_common_msg_dds__Gid_ gid;
    if (!g || entity_gid(e, &gid) < 0)
        return RL_OK;
    return is_writer ? push_gid(&g->writers, &g->nwriters, &g->cwriters, &gid)
                     : push_gid(&g->readers, &g->nreaders, &g->creaders, &gid);
}

/* The readers and writers of `participant` (they sit under its publishers and subscribers),
 * malloc'd into *out; *n their count. */
static int endpoints(dds_entity_t participant, dds_entity_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    dds_entity_t *kids = malloc(MAX_CHILDREN * sizeof *kids), *grand = malloc(MAX_CHILDREN * sizeof *grand);
    dds_return_t nk = kids && grand ? dds_get_children(participant, kids, MAX_CHILDREN) : 0;
    int rc = !kids || !grand ? rl_error_set(RL_ENOMEM, "out of memory")
           : nk < 0          ? lab_dds_fail(nk, "ROS 2 graph: the participant's entities")
                             : RL_OK;
    /* A publisher's children are writers, a subscriber's readers; the participant's other
       children (topics, waitsets, guard conditions) have no readers or writers under them. */
    for (int i = 0; rc == RL_OK && i < nk && i < MAX_CHILDREN; i++) {
        dds_return_t ng = dds_get_children(kids[i], grand, MAX_CHILDREN);
        for (int k = 0; rc == RL_OK && k < ng && k < MAX_CHILDREN; k++) {
            if (dds_get_parent(grand[k]) != kids[i] || dds_get_topic(grand[k]) < 0)
                continue;
            if (*n == cap) {
                size_t c = cap ? cap * 2 : 64;
                void *p = realloc(*out, c * sizeof **out);
                if (!p) {
                    rc = rl_error_set(RL_ENOMEM, "out of memory");
                    break;
                }
                *out = p;
                cap = c;
            }
            (*out)[(*n)++] = grand[k];
        }
    }
    free(kids);
    free(grand);
    return rc;
}

static int is_writer(dds_entity_t endpoint)
{
    return dds_get_publisher(endpoint) > 0;
}

static int topic_is(dds_entity_t endpoint, const char *name)
{
    char topic[256];
    dds_entity_t t = dds_get_topic(endpoint);
    return t >= 0 && dds_get_name(t, topic, sizeof topic) >= 0 && strcmp(topic, name) == 0;
}

/* The participant's writer on ros_discovery_info: the one made by an earlier announcement,
 * else a new one (reliable, transient-local, keep-last 1, as rmw_cyclonedds's). */
static dds_entity_t graph_writer(dds_entity_t participant, const dds_entity_t *ep, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (is_writer(ep[i]) && topic_is(ep[i], RL_LAB_TOPIC_ROS_GRAPH))
            return ep[i];
    dds_entity_t topic = dds_create_topic(participant,
                                          &rmw_dds_common_msg_dds__ParticipantEntitiesInfo__desc,
                                          RL_LAB_TOPIC_ROS_GRAPH, NULL, NULL);
    if (topic < 0)
        return topic;
    dds_qos_t *q = lab_qos(1, 1);
    dds_entity_t wr = dds_create_writer(participant, topic, q, NULL);
    dds_delete_qos(q);
    return wr;
}

int lab_ros_graph_announce(dds_entity_t participant, const char *node_name)
{
    graph_node *nodes = calloc(MAX_NODES, sizeof *nodes);
    rmw_dds_common_msg_dds__NodeEntitiesInfo_ *infos = calloc(MAX_NODES, sizeof *infos);
    uint32_t n = 0;
    int rc = nodes && infos ? RL_OK : rl_error_set(RL_ENOMEM, "out of memory");
    dds_entity_t wr = 0, *ep = NULL;
    size_t nep = 0;
    if (rc == RL_OK)
        rc = endpoints(participant, &ep, &nep);
    if (rc == RL_OK && (wr = graph_writer(participant, ep, nep)) < 0)
        rc = lab_dds_fail(wr, "ROS 2 graph writer (" RL_LAB_TOPIC_ROS_GRAPH ")");
    if (rc == RL_OK && !node_named(nodes, &n, node_name)) /* the node itself first, even empty */
        rc = rl_error_set(RL_ERR, "ROS 2 graph: too many nodes");
    for (size_t i = 0; rc == RL_OK && i < nep; i++)
        rc = add_endpoint(ep[i], is_writer(ep[i]), node_name, nodes, &n);
    free(ep);
    if (rc == RL_OK) {
        rmw_dds_common_msg_dds__ParticipantEntitiesInfo_ msg = {0};
        if (entity_gid(participant, &msg.gid) < 0)
            rc = rl_error_set(RL_EIO, "ROS 2 graph: the participant has no GUID");
        for (uint32_t i = 0; i < n; i++) {
            lab_copy(infos[i].node_namespace, sizeof infos[i].node_namespace, "/");
            lab_copy(infos[i].node_name, sizeof infos[i].node_name, nodes[i].name);
            infos[i].reader_gid_seq = (dds_sequence_rmw_dds_common_msg_dds__Gid_){
                ._length = nodes[i].nreaders, ._maximum = nodes[i].nreaders, ._buffer = nodes[i].readers};
            infos[i].writer_gid_seq = (dds_sequence_rmw_dds_common_msg_dds__Gid_){
                ._length = nodes[i].nwriters, ._maximum = nodes[i].nwriters, ._buffer = nodes[i].writers};
        }
        msg.node_entities_info_seq._length = msg.node_entities_info_seq._maximum = n;
        msg.node_entities_info_seq._buffer = infos;
        dds_return_t w = rc == RL_OK ? dds_write(wr, &msg) : 0;
        if (w < 0)
            rc = lab_dds_fail(w, "ROS 2 graph: write");
    }
    for (uint32_t i = 0; nodes && i < n; i++) {
        free(nodes[i].readers);
        free(nodes[i].writers);
    }
    free(nodes);
    free(infos);
    return rc;
}
