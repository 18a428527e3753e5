/* The control flow's side of the recorder node: service calls with rmw_cyclonedds's
 * request header (client id = the request writer's instance handle, a sequence number;
 * replies filtered on both), the system trigger, the recording-state heartbeat, the
 * vehicles' ready status and the map announcement as they arrive, and the control flow's
 * own heartbeat, published from a thread of its own while it drives a run. */
#include "lab/lab_internal.h"

#include "runlab/error.h"
#include "runlab/time.h"

#include "runlab_msgs.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef runlab_msgs_srv_dds__PrepareRecording_Response_ lab_response;

enum { SVC_PREPARE, SVC_BEGIN, SVC_FINISH, SVC_COUNT };

typedef struct client_service {
    dds_entity_t request_writer, reply_reader, reply_waitset;
    uint64_t client_id;
} client_service;

struct rl_lab_client {
    dds_entity_t participant, trigger_writer, heartbeat_reader, ready_reader, map_reader;
    client_service svc[SVC_COUNT];
    int64_t seq;
    pthread_mutex_t mu;
    pthread_cond_t beat;
    rl_lab_heartbeat last; /* under mu */
    uint8_t ready[256];    /* under mu: vehicle ids that reported ready */
    rl_lab_map_announcement map; /* under mu: the newest; map_count of them seen */
    uint64_t map_count;
    /* The control heartbeat: its writer and thread exist from the first drive on. */
    dds_entity_t control_writer;
    pthread_t beat_thread;
    int beat_started;
    pthread_cond_t drive_changed; /* with mu */
    char drive_run_id[80], drive_source[80]; /* under mu; run id "" = not driving */
    int beat_stop;                           /* under mu */
    char host[256];
};

static void on_heartbeat(dds_entity_t reader, void *arg)
{
    lab_handoff_acquire();
    rl_lab_client *c = arg;
    void *samples[4] = {0};
    dds_sample_info_t si[4];
    dds_return_t n;
    while ((n = dds_take(reader, samples, si, 4, 4)) > 0) {
        for (int i = 0; i < n; i++) {
            const runlab_msgs_msg_dds__RecordingState_ *m = samples[i];
            if (!si[i].valid_data)
                continue;
            pthread_mutex_lock(&c->mu);
            rl_lab_heartbeat *h = &c->last;
            h->state = (rl_record_state)m->state;
            lab_copy(h->host, sizeof h->host, m->host);
            h->pid = m->pid;
            h->domain = m->domain;
            lab_copy(h->run_id, sizeof h->run_id, m->run_id);
            lab_copy(h->run_dir, sizeof h->run_dir, m->run_dir);
            lab_copy(h->reason, sizeof h->reason, m->reason);
            h->stamp_ns = (int64_t)m->stamp;
            h->received = m->received;
            h->inside = m->inside;
            h->outside = m->outside;
            h->written = m->written;
            h->dropped = m->dropped;
            h->bytes = m->bytes;
            h->queued_messages = m->queued_messages;
            h->queued_bytes = m->queued_bytes;
            h->topics = m->topics;
            h->seen_mono_ns = rl_mono_ns();
            h->count++;
            pthread_cond_broadcast(&c->beat);
            pthread_mutex_unlock(&c->mu);
        }
        dds_return_loan(reader, samples, n);
    }
    lab_handoff_publish(); /* for rl_lab_client_free, after dds_delete waited for us */
}

static void on_ready(dds_entity_t reader, void *arg)
{
    lab_handoff_acquire();
    rl_lab_client *c = arg;
    void *samples[8] = {0};
    dds_sample_info_t si[8];
    dds_return_t n;
    while ((n = dds_take(reader, samples, si, 8, 8)) > 0) {
        pthread_mutex_lock(&c->mu);
        for (int i = 0; i < n; i++)
            if (si[i].valid_data)
                c->ready[((const runlab_msgs_msg_dds__ReadyStatus_ *)samples[i])->vehicle_id] = 1;
        pthread_cond_broadcast(&c->beat);
        pthread_mutex_unlock(&c->mu);
        dds_return_loan(reader, samples, n);
    }
    lab_handoff_publish();
}

static void on_map(dds_entity_t reader, void *arg)
{
    lab_handoff_acquire();
    rl_lab_client *c = arg;
    void *samples[4] = {0};
    dds_sample_info_t si[4];
    dds_return_t n;
    while ((n = dds_take(reader, samples, si, 4, 4)) > 0) {
        pthread_mutex_lock(&c->mu);
        for (int i = 0; i < n; i++) {
            const runlab_msgs_msg_dds__MapAnnouncement_ *m = samples[i];
            if (!si[i].valid_data || !m->path || !m->path[0])
                continue;
            lab_copy(c->map.path, sizeof c->map.path, m->path);
            lab_copy(c->map.sha256, sizeof c->map.sha256, m->sha256);
            c->map.stamp_ns = (int64_t)m->stamp;
            c->map_count++;
        }
        pthread_cond_broadcast(&c->beat);
        pthread_mutex_unlock(&c->mu);
        dds_return_loan(reader, samples, n);
    }
    lab_handoff_publish();
}

static int make_client_service(rl_lab_client *c, client_service *s, const char *ros_name,
                               const dds_topic_descriptor_t *req, const dds_topic_descriptor_t *rep)
{
    int rc = lab_service_endpoints(c->participant, ros_name, req, rep, 0, &s->request_writer,
                                   &s->reply_reader);
    if (rc < 0)
        return rc;
    dds_instance_handle_t ih = 0;
    dds_return_t drc = dds_get_instance_handle(s->request_writer, &ih);
    if (drc < 0)
        return lab_dds_fail(drc, "request writer handle");
    s->client_id = ih;
    s->reply_waitset = dds_create_waitset(c->participant);
    dds_entity_t cond = dds_create_readcondition(s->reply_reader, DDS_ANY_STATE);
    if (s->reply_waitset < 0 || cond < 0 || dds_waitset_attach(s->reply_waitset, cond, 0) < 0)
        return lab_dds_fail(s->reply_waitset < 0 ? s->reply_waitset : cond, "reply wait");
    return RL_OK;
}

static int client_start(rl_lab_client *c, int domain)
{
    int rc = lab_participant(domain, &c->participant);
    if (rc < 0)
        return rc;
    if ((rc = make_client_service(c, &c->svc[SVC_PREPARE], RL_LAB_SERVICE_PREPARE,
                                  &runlab_msgs_srv_dds__PrepareRecording_Request__desc,
                                  &runlab_msgs_srv_dds__PrepareRecording_Response__desc)) < 0 ||
        (rc = make_client_service(c, &c->svc[SVC_BEGIN], RL_LAB_SERVICE_BEGIN,
                                  &runlab_msgs_srv_dds__BeginRecording_Request__desc,
                                  &runlab_msgs_srv_dds__BeginRecording_Response__desc)) < 0 ||
        (rc = make_client_service(c, &c->svc[SVC_FINISH], RL_LAB_SERVICE_FINISH,
                                  &runlab_msgs_srv_dds__FinishRecording_Request__desc,
                                  &runlab_msgs_srv_dds__FinishRecording_Response__desc)) < 0)
        return rc;
    dds_qos_t *tl = lab_qos(1, 1);
    dds_entity_t trig = dds_create_topic(c->participant, &runlab_msgs_msg_dds__SystemTrigger__desc,
                                         RL_LAB_TOPIC_TRIGGER, NULL, NULL);
    c->trigger_writer = trig < 0 ? trig : dds_create_writer(c->participant, trig, tl, NULL);
    dds_entity_t beat = dds_create_topic(c->participant,
                                         &runlab_msgs_msg_dds__RecordingState__desc,
                                         RL_LAB_TOPIC_RECORDING_STATE, NULL, NULL);
    lab_handoff_publish();
    dds_listener_t *l = dds_create_listener(c);
    dds_lset_data_available(l, on_heartbeat);
    c->heartbeat_reader = beat < 0 ? beat : dds_create_reader(c->participant, beat, tl, l);
    dds_delete_listener(l);
    dds_delete_qos(tl);
    dds_entity_t ready = dds_create_topic(c->participant, &runlab_msgs_msg_dds__ReadyStatus__desc,
                                          RL_LAB_TOPIC_READY, NULL, NULL);
    dds_qos_t *rq = lab_qos(1, 0);
    l = dds_create_listener(c);
    dds_lset_data_available(l, on_ready);
    c->ready_reader = ready < 0 ? ready : dds_create_reader(c->participant, ready, rq, l);
    dds_delete_listener(l);
    dds_entity_t map = dds_create_topic(c->participant, &runlab_msgs_msg_dds__MapAnnouncement__desc,
                                        RL_LAB_TOPIC_MAP, NULL, NULL);
    l = dds_create_listener(c);
    dds_lset_data_available(l, on_map);
    c->map_reader = map < 0 ? map : dds_create_reader(c->participant, map, rq, l);
    dds_delete_listener(l);
    dds_delete_qos(rq);
    if (c->map_reader < 0)
        return lab_dds_fail(c->map_reader, "map announcement reader");
    if (c->trigger_writer < 0)
        return lab_dds_fail(c->trigger_writer, "trigger writer");
    if (c->heartbeat_reader < 0)
        return lab_dds_fail(c->heartbeat_reader, "heartbeat reader");
    if (c->ready_reader < 0)
        return lab_dds_fail(c->ready_reader, "ready reader");
    return lab_ros_graph_announce(c->participant, "runlab_experiment");
}

int rl_lab_client_new(rl_lab_client **out, int domain)
{
    rl_lab_client *c = calloc(1, sizeof *c);
    if (!c)
        return rl_error_set(RL_ENOMEM, "out of memory");
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->beat, &ca);
    pthread_cond_init(&c->drive_changed, &ca);
    pthread_condattr_destroy(&ca);
    int rc = client_start(c, domain);
    if (rc < 0) {
        char msg[512];
        lab_copy(msg, sizeof msg, rl_error_last());
        rl_lab_client_free(c);
        return rl_error_set(rc, "lab client: %s", msg);
    }
    *out = c;
    return RL_OK;
}

void rl_lab_client_free(rl_lab_client *c)
{
    if (!c)
        return;
    if (c->beat_started) {
        pthread_mutex_lock(&c->mu);
        c->beat_stop = 1;
        pthread_cond_broadcast(&c->drive_changed);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->beat_thread, NULL);
    }
    if (c->participant > 0)
        dds_delete(c->participant); /* waits for listeners still running */
    lab_handoff_acquire();
    pthread_cond_destroy(&c->beat);
    pthread_cond_destroy(&c->drive_changed);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* Sends `request` (its first two members are filled here) and waits for its reply. */
static int call(rl_lab_client *c, int which, void *request, int64_t timeout_ns, rl_lab_reply *out)
{
    client_service *s = &c->svc[which];
    int64_t deadline = rl_mono_ns() + timeout_ns;
    int rc = lab_wait_matched(s->request_writer, 1, deadline);
    if (rc == RL_OK)
        rc = lab_wait_matched(s->reply_reader, 0, deadline);
    if (rc < 0)
        return rl_error_prefix(rc, "no recorder service found");
    runlab_msgs_srv_dds__BeginRecording_Request_ *head = request;
    head->client_id = s->client_id;
    head->sequence_number = ++c->seq;
    dds_return_t drc = dds_write(s->request_writer, request);
    if (drc < 0)
        return lab_dds_fail(drc, "service request");
    for (;;) {
        void *samples[4] = {0};
        dds_sample_info_t si[4];
        dds_return_t n;
        while ((n = dds_take(s->reply_reader, samples, si, 4, 4)) > 0) {
            int found = 0;
            for (int i = 0; i < n && !found; i++) {
                const lab_response *r = samples[i];
                if (!si[i].valid_data || r->client_id != s->client_id ||
                    r->sequence_number != head->sequence_number)
                    continue;
                out->ok = r->ok;
                lab_copy(out->message, sizeof out->message, r->message);
                out->state = (rl_record_state)r->state;
                lab_copy(out->run_id, sizeof out->run_id, r->run_id);
                lab_copy(out->run_dir, sizeof out->run_dir, r->run_dir);
                found = 1;
            }
            dds_return_loan(s->reply_reader, samples, n);
            if (found)
                return RL_OK;
        }
        int64_t left = deadline - rl_mono_ns();
        if (left <= 0)
            return rl_error_set(RL_ETIMEOUT, "the recorder did not answer in time");
        (void)dds_waitset_wait(s->reply_waitset, NULL, 0, left);
    }
}

int rl_lab_client_prepare(rl_lab_client *c, const rl_record_run *run, int64_t timeout_ns,
                          rl_lab_reply *out)
{
    uint8_t ids[256];
    size_t n = run->vehicle_count;
    if (n > 256)
        return rl_error_set(RL_EINVAL, "prepare: at most 256 vehicles");
    for (size_t i = 0; i < n; i++) {
        if (run->vehicles[i] < 0 || run->vehicles[i] > 255)
            return rl_error_set(RL_EINVAL, "prepare: vehicle id %d: must be 0..255",
                                run->vehicles[i]);
        ids[i] = (uint8_t)run->vehicles[i];
    }
    runlab_msgs_srv_dds__PrepareRecording_Request_ req = {
        .run_id = (char *)(run->run_id ? run->run_id : ""),
        .vehicles = {._maximum = (uint32_t)n, ._length = (uint32_t)n, ._buffer = ids},
        .planner = (char *)(run->planner ? run->planner : ""),
        .map_path = (char *)(run->map_path ? run->map_path : ""),
        .nodes_json = (char *)(run->nodes_json ? run->nodes_json : ""),
    };
    return call(c, SVC_PREPARE, &req, timeout_ns, out);
}

int rl_lab_client_begin(rl_lab_client *c, const char *run_id, int64_t timeout_ns,
                        rl_lab_reply *out)
{
    runlab_msgs_srv_dds__BeginRecording_Request_ req = {.run_id = (char *)(run_id ? run_id : "")};
    return call(c, SVC_BEGIN, &req, timeout_ns, out);
}

int rl_lab_client_finish(rl_lab_client *c, const char *run_id, int64_t stop_stamp_ns,
                         const char *reason, int64_t timeout_ns, rl_lab_reply *out)
{
    runlab_msgs_srv_dds__FinishRecording_Request_ req = {
        .run_id = (char *)(run_id ? run_id : ""),
        .stop_stamp = stop_stamp_ns > 0 ? (uint64_t)stop_stamp_ns : 0,
        .reason = (char *)(reason ? reason : ""),
    };
    return call(c, SVC_FINISH, &req, timeout_ns, out);
}

int rl_lab_client_trigger(rl_lab_client *c, rl_lab_trigger kind, int64_t stamp_ns)
{
    runlab_msgs_msg_dds__SystemTrigger_ t = {.kind = (uint8_t)kind,
                                             .stamp = stamp_ns > 0 ? (uint64_t)stamp_ns : 0};
    dds_return_t rc = dds_write(c->trigger_writer, &t);
    return rc < 0 ? lab_dds_fail(rc, "system trigger") : RL_OK;
}

static struct timespec abs_mono(int64_t deadline_ns)
{
    struct timespec ts = {.tv_sec = deadline_ns / 1000000000ll,
                          .tv_nsec = deadline_ns % 1000000000ll};
    return ts;
}

/* ---- the control heartbeat ----------------------------------------------------------- */

/* How long rl_lab_client_drive waits for a recorder to match its heartbeat writer and to
 * acknowledge the first beat (none may be listening: an older recorder). */
#define CONTROL_FIRST_BEAT_WAIT_NS (1000 * 1000000ll)

static void write_control_beat(rl_lab_client *c, const char *run_id, const char *source)
{
    runlab_msgs_msg_dds__ControlHeartbeat_ m = {
        .source_id = (char *)source,
        .host = c->host,
        .pid = (int32_t)getpid(),
        .run_id = (char *)run_id,
        .stamp = (uint64_t)rl_time_now_ns(),
    };
    (void)dds_write(c->control_writer, &m); /* a lost beat is one of many */
}

/* Publishes the control heartbeat every period while a run is driven; waits otherwise. */
static void *beat_main(void *arg)
{
    pthread_setname_np(pthread_self(), "rl-control-beat");
    rl_lab_client *c = arg;
    char run_id[sizeof c->drive_run_id], source[sizeof c->drive_source];
    pthread_mutex_lock(&c->mu);
    while (!c->beat_stop) {
        if (!c->drive_run_id[0]) {
            pthread_cond_wait(&c->drive_changed, &c->mu);
            continue;
        }
        memcpy(run_id, c->drive_run_id, sizeof run_id);
        memcpy(source, c->drive_source, sizeof source);
        pthread_mutex_unlock(&c->mu);
        write_control_beat(c, run_id, source);
        struct timespec next = abs_mono(rl_mono_ns() + RL_LAB_CONTROL_HEARTBEAT_PERIOD_NS);
        pthread_mutex_lock(&c->mu);
        /* Sleeps a period; a new run id or a stop wakes it at once. */
        while (!c->beat_stop && strcmp(run_id, c->drive_run_id) == 0 &&
               pthread_cond_timedwait(&c->drive_changed, &c->mu, &next) == 0) {
        }
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

int rl_lab_client_drive(rl_lab_client *c, const char *run_id, const char *source_id)
{
    if (!run_id)
        run_id = "";
    if (!source_id)
        source_id = "runlab client";
    if (strlen(run_id) >= sizeof c->drive_run_id || strlen(source_id) >= sizeof c->drive_source)
        return rl_error_set(RL_EINVAL, "control heartbeat: run id or source longer than %zu "
                            "bytes", sizeof c->drive_run_id - 1);
    if (!c->control_writer && run_id[0]) {
        if (gethostname(c->host, sizeof c->host - 1) != 0)
            lab_copy(c->host, sizeof c->host, "unknown");
        dds_entity_t t = dds_create_topic(c->participant,
                                          &runlab_msgs_msg_dds__ControlHeartbeat__desc,
                                          RL_LAB_TOPIC_CONTROL_HEARTBEAT, NULL, NULL);
        dds_qos_t *q = lab_qos(0, 1);
        dds_entity_t w = t < 0 ? t : dds_create_writer(c->participant, t, q, NULL);
        dds_delete_qos(q);
        if (w < 0)
            return lab_dds_fail(w, "control heartbeat writer");
        c->control_writer = w;
        /* A writer just made is not matched yet, and a volatile beat written before the
           recorder's reader matches never reaches it: the run would not be armed, and a
           control flow dying at once would never be timed out. */
        (void)lab_wait_matched(w, 1, rl_mono_ns() + CONTROL_FIRST_BEAT_WAIT_NS);
    }
    if (run_id[0]) {
        /* The first beat naming the run, acknowledged before we return: from then on the
           recorder times this control flow out. */
        write_control_beat(c, run_id, source_id);
        (void)dds_wait_for_acks(c->control_writer, CONTROL_FIRST_BEAT_WAIT_NS);
    }
    pthread_mutex_lock(&c->mu);
    lab_copy(c->drive_run_id, sizeof c->drive_run_id, run_id);
    lab_copy(c->drive_source, sizeof c->drive_source, source_id);
    pthread_cond_broadcast(&c->drive_changed);
    pthread_mutex_unlock(&c->mu);
    if (!c->beat_started && run_id[0]) {
        if (pthread_create(&c->beat_thread, NULL, beat_main, c) != 0) {
            pthread_mutex_lock(&c->mu);
            c->drive_run_id[0] = '\0';
            pthread_mutex_unlock(&c->mu);
            return rl_error_set(RL_ERR, "control heartbeat: cannot start its thread");
        }
        c->beat_started = 1;
    }
    return RL_OK;
}

int rl_lab_client_wait_heartbeat(rl_lab_client *c, uint64_t count, int64_t timeout_ns,
                                 rl_lab_heartbeat *out)
{
    int64_t deadline = rl_mono_ns() + timeout_ns;
    struct timespec ts = abs_mono(deadline);
    pthread_mutex_lock(&c->mu);
    while (c->last.count <= count && rl_mono_ns() < deadline)
        pthread_cond_timedwait(&c->beat, &c->mu, &ts);
    int rc = RL_OK;
    if (c->last.count > count)
        *out = c->last;
    else
        rc = rl_error_set(RL_ETIMEOUT, "no recorder heartbeat");
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int rl_lab_client_wait_ready(rl_lab_client *c, const int *vehicles, size_t n, int64_t timeout_ns)
{
    int64_t deadline = rl_mono_ns() + timeout_ns;
    struct timespec ts = abs_mono(deadline);
    pthread_mutex_lock(&c->mu);
    for (;;) {
        char missing[512] = "";
        size_t used = 0;
        for (size_t i = 0; i < n; i++)
            if (vehicles[i] < 0 || vehicles[i] > 255 || !c->ready[vehicles[i]]) {
                int w = snprintf(missing + used, sizeof missing - used, "%s%d", used ? ", " : "",
                                 vehicles[i]);
                if (w > 0 && (size_t)w < sizeof missing - used)
                    used += (size_t)w;
            }
        if (!used) {
            pthread_mutex_unlock(&c->mu);
            return RL_OK;
        }
        if (rl_mono_ns() >= deadline) {
            pthread_mutex_unlock(&c->mu);
            return rl_error_set(RL_ETIMEOUT, "vehicles not ready: %s", missing);
        }
        pthread_cond_timedwait(&c->beat, &c->mu, &ts);
    }
}

bool rl_lab_heartbeat_lost(const rl_lab_heartbeat *hb, int64_t now_mono_ns, int64_t timeout_ns)
{
    return now_mono_ns - hb->seen_mono_ns > timeout_ns;
}

size_t rl_lab_client_ready_vehicles(rl_lab_client *c, int *out, size_t cap)
{
    size_t n = 0;
    pthread_mutex_lock(&c->mu);
    for (int id = 0; id < 256; id++)
        if (c->ready[id]) {
            if (n < cap)
                out[n] = id;
            n++;
        }
    pthread_mutex_unlock(&c->mu);
    return n;
}

int rl_lab_client_wait_map(rl_lab_client *c, int64_t timeout_ns, rl_lab_map_announcement *out)
{
    int64_t deadline = rl_mono_ns() + timeout_ns;
    struct timespec ts = abs_mono(deadline);
    pthread_mutex_lock(&c->mu);
    while (!c->map_count && rl_mono_ns() < deadline)
        pthread_cond_timedwait(&c->beat, &c->mu, &ts);
    int rc = RL_OK;
    if (c->map_count)
        *out = c->map;
    else
        rc = rl_error_set(RL_ETIMEOUT, "no map announcement on %s", RL_LAB_TOPIC_MAP);
    pthread_mutex_unlock(&c->mu);
    return rc;
}
