/* What a ROS 2 tool on rmw_cyclonedds sees of the graph, written from Cyclone DDS alone
 * (tests/idl/ros_graph_test.idl, compiled with `idlc -t` so that, like rmw_cyclonedds, the
 * reader sends no type information and matches by type name). Usage:
 *   ros_graph_listen DOMAIN SECONDS NODE...
 * Reads ros_discovery_info (reliable, transient-local, keep-all, XCDR1, as rmw's reader) and
 * the built-in DCPSParticipant/DCPSPublication/DCPSSubscription topics until every NODE is
 * announced by a live participant whose gid is its DDS GUID (then zeros to 24 bytes), with at
 * least one reader or writer, each gid the GUID of a reader or writer of that participant
 * that discovery reports (a vehicle_<id> node's on rt/vehicle/<id>/... only). Prints a line
 * per node ("NODE <name> participant=<guid> readers=R writers=W") and exits 0; after SECONDS
 * prints what is missing and exits 1. For tests/cli/test_lab_ros_graph.sh. */
#include "ros_graph_test.h"

#include <dds/dds.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_PP = 64, MAX_NODES = 64, MAX_GIDS = 256, MAX_EP = 4096 };

typedef struct node {
    char name[520]; /* namespace + '/' + name */
    uint8_t readers[MAX_GIDS][24], writers[MAX_GIDS][24];
    uint32_t nreaders, nwriters;
} node;

typedef struct announced {
    uint8_t gid[24];
    node nodes[MAX_NODES];
    uint32_t nnodes;
} announced;

typedef struct endpoint {
    uint8_t key[16], participant[16];
    char topic[256];
    int is_writer;
} endpoint;

static announced graph[MAX_PP];
static size_t ngraph;
static uint8_t alive[MAX_PP][16];
static size_t nalive;
static endpoint eps[MAX_EP];
static size_t neps;

static void copy_gids(uint8_t (*dst)[24], uint32_t *n, const dds_sequence_rmw_dds_common_msg_dds__Gid_ *s)
{
    *n = s->_length < MAX_GIDS ? s->_length : MAX_GIDS;
    for (uint32_t i = 0; i < *n; i++)
        memcpy(dst[i], s->_buffer[i].data, 24);
}

/* The latest announcement per participant gid replaces the earlier one, as in ROS 2's cache. */
static void take_graph(dds_entity_t rd)
{
    void *samples[8] = {0};
    dds_sample_info_t si[8];
    dds_return_t n;
    while ((n = dds_take(rd, samples, si, 8, 8)) > 0) {
        for (int k = 0; k < n; k++) {
            const rmw_dds_common_msg_dds__ParticipantEntitiesInfo_ *m = samples[k];
            if (!si[k].valid_data)
                continue;
            size_t i = 0;
            while (i < ngraph && memcmp(graph[i].gid, m->gid.data, 24) != 0)
                i++;
            if (i == MAX_PP)
                continue;
            if (i == ngraph)
                ngraph++;
            announced *a = &graph[i];
            memcpy(a->gid, m->gid.data, 24);
            a->nnodes = m->node_entities_info_seq._length < MAX_NODES ? m->node_entities_info_seq._length : MAX_NODES;
            for (uint32_t j = 0; j < a->nnodes; j++) {
                const rmw_dds_common_msg_dds__NodeEntitiesInfo_ *ni = &m->node_entities_info_seq._buffer[j];
                snprintf(a->nodes[j].name, sizeof a->nodes[j].name, "%s%s%s", ni->node_namespace,
                         strcmp(ni->node_namespace, "/") == 0 ? "" : "/", ni->node_name);
                copy_gids(a->nodes[j].readers, &a->nodes[j].nreaders, &ni->reader_gid_seq);
                copy_gids(a->nodes[j].writers, &a->nodes[j].nwriters, &ni->writer_gid_seq);
            }
        }
        dds_return_loan(rd, samples, n);
    }
}

static void take_participants(dds_entity_t rd)
{
    void *samples[8] = {0};
    dds_sample_info_t si[8];
    dds_return_t n;
    while ((n = dds_take(rd, samples, si, 8, 8)) > 0) {
        for (int k = 0; k < n; k++) {
            const dds_builtintopic_participant_t *p = samples[k];
            size_t i = 0;
            while (i < nalive && memcmp(alive[i], p->key.v, 16) != 0)
                i++;
            if (si[k].instance_state != DDS_ALIVE_INSTANCE_STATE) {
                if (i < nalive)
                    memcpy(alive[i], alive[--nalive], 16);
            } else if (i == nalive && nalive < MAX_PP) {
                memcpy(alive[nalive++], p->key.v, 16);
            }
        }
        dds_return_loan(rd, samples, n);
    }
}

static void take_endpoints(dds_entity_t rd, int is_writer)
{
    void *samples[16] = {0};
    dds_sample_info_t si[16];
    dds_return_t n;
    while ((n = dds_take(rd, samples, si, 16, 16)) > 0) {
        for (int k = 0; k < n; k++) {
            const dds_builtintopic_endpoint_t *e = samples[k];
            if (!si[k].valid_data || neps == MAX_EP)
                continue;
            endpoint *x = &eps[neps++];
            memcpy(x->key, e->key.v, 16);
            memcpy(x->participant, e->participant_key.v, 16);
            snprintf(x->topic, sizeof x->topic, "%s", e->topic_name);
            x->is_writer = is_writer;
        }
        dds_return_loan(rd, samples, n);
    }
}

static const endpoint *find_endpoint(const uint8_t gid[24], int is_writer)
{
    static const uint8_t zeros[8];
    if (memcmp(gid + 16, zeros, 8) != 0)
        return NULL;
    for (size_t i = 0; i < neps; i++)
        if (eps[i].is_writer == is_writer && memcmp(eps[i].key, gid, 16) == 0)
            return &eps[i];
    return NULL;
}

/* Whether node `name` is announced as the file's head says; *why what is not so. */
static const announced *node_ok(const char *name, const node **out, const char **why)
{
    *why = "no participant announces it";
    for (size_t i = 0; i < ngraph; i++) {
        const announced *a = &graph[i];
        for (uint32_t j = 0; j < a->nnodes; j++) {
            const node *nd = &a->nodes[j];
            if (strcmp(nd->name, name) != 0)
                continue;
            static const uint8_t zeros[8];
            int live = 0;
            for (size_t k = 0; k < nalive; k++)
                live |= memcmp(alive[k], a->gid, 16) == 0;
            if (!live || memcmp(a->gid + 16, zeros, 8) != 0) {
                *why = "the announcing gid is no live participant's GUID padded with zeros";
                continue;
            }
            if (nd->nreaders + nd->nwriters == 0) {
                *why = "it has no readers or writers";
                continue;
            }
            char prefix[64] = "";
            if (strncmp(name, "/vehicle_", 9) == 0)
                snprintf(prefix, sizeof prefix, "rt/vehicle/%s/", name + 9);
            int bad = 0;
            for (uint32_t k = 0; k < nd->nreaders + nd->nwriters && !bad; k++) {
                int w = k >= nd->nreaders;
                const endpoint *e = find_endpoint(w ? nd->writers[k - nd->nreaders] : nd->readers[k], w);
                bad = !e || memcmp(e->participant, a->gid, 16) != 0 ||
                      (prefix[0] && strncmp(e->topic, prefix, strlen(prefix)) != 0);
            }
            if (bad) {
                *why = "a reader or writer gid is not one of that participant's (or not on its vehicle's topics)";
                continue;
            }
            *out = nd;
            return a;
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: ros_graph_listen DOMAIN SECONDS NODE...\n");
        return 2;
    }
    dds_entity_t pp = dds_create_participant((dds_domainid_t)atoi(argv[1]), NULL, NULL);
    if (pp < 0) {
        fprintf(stderr, "ros_graph_listen: participant: %s\n", dds_strretcode(pp));
        return 1;
    }
    dds_entity_t t = dds_create_topic(pp, &rmw_dds_common_msg_dds__ParticipantEntitiesInfo__desc,
                                      "ros_discovery_info", NULL, NULL);
    dds_qos_t *q = dds_create_qos();
    dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
    dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
    dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
    dds_qset_data_representation(q, 1, (dds_data_representation_id_t[]){DDS_DATA_REPRESENTATION_XCDR1});
    dds_entity_t graph_rd = t < 0 ? t : dds_create_reader(pp, t, q, NULL);
    dds_delete_qos(q);
    dds_entity_t prd = dds_create_reader(pp, DDS_BUILTIN_TOPIC_DCPSPARTICIPANT, NULL, NULL);
    dds_entity_t wrd = dds_create_reader(pp, DDS_BUILTIN_TOPIC_DCPSPUBLICATION, NULL, NULL);
    dds_entity_t rrd = dds_create_reader(pp, DDS_BUILTIN_TOPIC_DCPSSUBSCRIPTION, NULL, NULL);
    if (graph_rd < 0 || prd < 0 || wrd < 0 || rrd < 0) {
        fprintf(stderr, "ros_graph_listen: readers: %s\n",
                dds_strretcode(graph_rd < 0 ? graph_rd : prd < 0 ? prd : wrd < 0 ? wrd : rrd));
        return 1;
    }
    printf("LISTENING\n");
    fflush(stdout);
    dds_time_t deadline = dds_time() + DDS_SECS(atoi(argv[2]));
    int nwant = argc - 3, done = 0;
    while (!done && dds_time() < deadline) {
        take_participants(prd);
        take_endpoints(wrd, 1);
        take_endpoints(rrd, 0);
        take_graph(graph_rd);
        done = 1;
        for (int i = 0; i < nwant && done; i++) {
            const node *nd;
            const char *why;
            done = node_ok(argv[3 + i], &nd, &why) != NULL;
        }
        if (!done)
            dds_sleepfor(DDS_MSECS(50));
    }
    for (int i = 0; i < nwant; i++) {
        const node *nd = NULL;
        const char *why = NULL;
        const announced *a = node_ok(argv[3 + i], &nd, &why);
        if (!a) {
            printf("MISSING %s: %s\n", argv[3 + i], why);
            continue;
        }
        printf("NODE %s participant=", argv[3 + i]);
        for (int k = 0; k < 16; k++)
            printf("%02x", a->gid[k]);
        printf(" readers=%u writers=%u\n", nd->nreaders, nd->nwriters);
    }
    fflush(stdout);
    dds_delete(pp);
    return done ? 0 : 1;
}
