/* The recorder node: the recorder engine on the lab's DDS domain. It serves
 * prepare/begin/finish_recording (rmw_cyclonedds's request/reply layout), publishes the
 * engine's heartbeat as recording_state (reliable, transient-local), marks START and STOP
 * from the system trigger, records the lab's, the vehicles' and configured topics, and ends
 * a run whose control flow is lost (lab_control.c). */
#include "lab/lab_control.h"
#include "lab/lab_internal.h"

#include "runlab/error.h"
#include "runlab/log.h"
#include "runlab/time.h"

#include "runlab_msgs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The three responses have the same members, so one C type reads and writes all of them. */
typedef runlab_msgs_srv_dds__PrepareRecording_Response_ lab_response;
_Static_assert(sizeof(runlab_msgs_srv_dds__BeginRecording_Response_) == sizeof(lab_response) &&
                   sizeof(runlab_msgs_srv_dds__FinishRecording_Response_) == sizeof(lab_response),
               "the service responses share one layout");

/* Lab topics every run records besides the vehicles' and the configured ones. */
static const char *const lab_patterns[] = {"rt/lab/*", "rt/clock", "rt/diagnostics*", "rt/tf",
                                           "rt/tf_static"};

enum { SVC_PREPARE, SVC_BEGIN, SVC_FINISH, SVC_COUNT };

typedef struct service {
    dds_entity_t request_reader, reply_writer;
    const dds_topic_descriptor_t *req_desc;
    uint64_t last_client;  /* the last request answered, answered again if repeated */
    int64_t last_seq;
    lab_response last_reply;
    char last_message[512], last_run_id[80], last_run_dir[1024];
} service;

struct rl_lab_recorder {
    rl_lab_recorder_options opts;
    rl_record_options engine_opts; /* each run's engine is made with these */
    /* Owned copies of what the options point to: every run's engine and capture need them,
       long after rl_lab_recorder_new returned. */
    char *home, *lock_dir, *bag_profile;
    char **patterns;
    rl_lab_schema *schemas;
    /* The engine of the current (or last) run; a prepare after a run ended replaces it and
       the capture (renew), in the node's thread, under engine_mu for the readers of the
       status in other threads. NULL only when a renew failed. */
    pthread_mutex_t engine_mu;
    rl_recorder *rec;
    dds_entity_t participant, heartbeat_writer, trigger_reader, control_reader, waitset,
        stop_guard;
    _Atomic dds_entity_t beat_writer; /* 0 until the writer exists; read by the monitor */
    service svc[SVC_COUNT];
    lab_capture *capture;
    _Atomic(lab_capture *) capture_live; /* capture, for the monitor thread */
    lab_params *params;    /* the lab's nodes' parameter snapshots (node thread only) */
    char *given_nodes;     /* what the control flow handed to the current run's prepare */
    int prepared_vehicles[256]; /* the current run's, for READY at begin */
    size_t nprepared;
    pthread_t thread;
    int thread_started;
    atomic_int stop;
    /* The control flow's liveness, in the node's thread: its heartbeat, the control
       descriptor, and whether START was marked for the current run (finish needs it). */
    lab_control_watch control;
    int control_fd_open;
    atomic_bool control_closed;
    int start_marked;
};

void rl_lab_recorder_options_default(rl_lab_recorder_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->heartbeat_interval_ns = 250 * 1000000ll;
    opts->peer_wait_ns = 1500 * 1000000ll;
    opts->control_timeout_ns = 1500 * 1000000ll;
}

/* ---- heartbeat ------------------------------------------------------------------------ */

static void publish_status(rl_lab_recorder *n, const rl_record_status *s)
{
    dds_entity_t w = atomic_load(&n->beat_writer);
    if (w <= 0)
        return;
    /* The engine's names are "" while a prepare fills them and fixed after (record.h):
       the monitor thread may call this during a prepare in the node's thread. */
    runlab_msgs_msg_dds__RecordingState_ m = {
        .state = (uint8_t)s->state,
        .host = (char *)s->host,
        .pid = (int32_t)getpid(),
        .domain = n->opts.domain,
        .run_id = (char *)s->run_id,
        .run_dir = (char *)s->run_dir,
        .reason = (char *)s->reason,
        .stamp = (uint64_t)s->stamp_ns,
        .received = s->received,
        .inside = s->inside,
        .outside = s->outside,
        .written = s->written,
        .dropped = s->dropped,
        .bytes = s->bytes,
        .queued_messages = s->queued_messages,
        .queued_bytes = s->queued_bytes,
        .topics = 0,
    };
    lab_capture *cap = atomic_load(&n->capture_live);
    if (cap)
        m.topics = (uint32_t)lab_capture_topic_count(cap);
    (void)dds_write(w, &m);
}

static void on_heartbeat(const rl_record_status *status, void *user)
{
    publish_status(user, status);
}

/* Listens for another recorder's heartbeat on the domain; RL_EBUSY naming it. */
static int check_no_peer(rl_lab_recorder *n, dds_entity_t topic)
{
    dds_qos_t *q = lab_qos(1, 1);
    dds_entity_t rd = dds_create_reader(n->participant, topic, q, NULL);
    dds_delete_qos(q);
    if (rd < 0)
        return lab_dds_fail(rd, "heartbeat reader");
    int rc = RL_OK;
    int64_t deadline = rl_mono_ns() + n->opts.peer_wait_ns;
    while (rc == RL_OK && rl_mono_ns() < deadline) {
        void *samples[1] = {0};
        dds_sample_info_t si;
        dds_return_t got = dds_take(rd, samples, &si, 1, 1);
        if (got > 0) {
            const runlab_msgs_msg_dds__RecordingState_ *m = samples[0];
            if (si.valid_data)
                rc = rl_error_set(RL_EBUSY,
                                  "another recorder answers on DDS domain %d (host %s, pid %d, "
                                  "state %s)",
                                  n->opts.domain, m->host, (int)m->pid,
                                  rl_record_state_name((rl_record_state)m->state));
            dds_return_loan(rd, samples, got);
        } else {
            dds_sleepfor(DDS_MSECS(20));
        }
    }
    dds_delete(rd);
    return rc;
}

/* ---- services ------------------------------------------------------------------------- */

/* The engine's status; a node whose renewal failed reports FAILED with no run. */
static void node_status(rl_lab_recorder *n, rl_record_status *st)
{
    if (n->rec) {
        rl_recorder_status(n->rec, st);
    } else {
        memset(st, 0, sizeof *st);
        st->state = RL_RECORD_FAILED;
        st->host = st->run_id = st->run_dir = "";
        st->reason = "no engine (a new run could not start)";
    }
}

static void fill_reply(rl_lab_recorder *n, service *s, int ok, const char *message)
{
    lab_copy(s->last_message, sizeof s->last_message, message);
    rl_record_status st;
    node_status(n, &st);
    lab_copy(s->last_run_id, sizeof s->last_run_id, st.run_id);
    lab_copy(s->last_run_dir, sizeof s->last_run_dir, st.run_dir);
    s->last_reply.ok = ok;
    s->last_reply.message = s->last_message;
    s->last_reply.state = (uint8_t)st.state;
    s->last_reply.run_id = s->last_run_id;
    s->last_reply.run_dir = s->last_run_dir;
}

static int run_id_mismatch(rl_lab_recorder *n, service *s, const char *asked)
{
    rl_record_status st;
    node_status(n, &st);
    const char *mine = st.run_id;
    if (asked && asked[0] && strcmp(asked, mine) != 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "run id \"%s\" is not this recorder's run (\"%s\")", asked,
                 mine);
        fill_reply(n, s, 0, msg);
        return 1;
    }
    return 0;
}

static int add_patterns(rl_lab_recorder *n)
{
    int rc = RL_OK;
    /* The lab's own patterns are recorded when there are writers; a run without a clock
       or tf is no news. Configured ones were asked for: a run that finds no writer for
       one says so. */
    for (size_t i = 0; rc == RL_OK && i < sizeof lab_patterns / sizeof lab_patterns[0]; i++)
        rc = lab_capture_add_pattern(n->capture, lab_patterns[i], 0);
    for (size_t i = 0; rc == RL_OK && i < n->opts.pattern_count; i++)
        rc = lab_capture_add_pattern(n->capture, n->opts.patterns[i], 1);
    return rc;
}

/* After a run ended (COMPLETE, INTERRUPTED or FAILED), the next prepare gets a new engine and
 * a new capture, like a new `ros2 bag record`: the last run's vehicles are no longer
 * subscribed, and the new readers receive the transient-local writers' latched samples
 * again (held until the prepare, as for the first run). The engine's host-and-domain lock is
 * let go in between and taken again. */
static int renew(rl_lab_recorder *n)
{
    /* The last run's end, if its control flow never finished it (a FAILED run). */
    lab_capture_settle(n->capture, 1);
    lab_capture_close(n->capture); /* nothing pushes into the old engine after this */
    pthread_mutex_lock(&n->engine_mu);
    rl_recorder_free(n->rec); /* stops its monitor, the only other reader of capture_live */
    n->rec = NULL;
    atomic_store(&n->capture_live, NULL);
    lab_capture_free(n->capture);
    n->capture = NULL;
    int rc = rl_recorder_new(&n->rec, &n->engine_opts);
    if (rc < 0)
        n->rec = NULL;
    if (rc == RL_OK)
        rc = lab_capture_new(&n->capture, n->participant, n->rec, n->opts.schemas,
                             n->opts.schema_count);
    if (rc == RL_OK)
        rc = add_patterns(n);
    if (rc == RL_OK) {
        atomic_store(&n->capture_live, n->capture);
    } else {
        /* Neither half alone: the node answers with errors from now on. */
        char msg[1024];
        lab_copy(msg, sizeof msg, rl_error_last());
        lab_capture_close(n->capture);
        rl_recorder_free(n->rec);
        lab_capture_free(n->capture);
        n->rec = NULL;
        n->capture = NULL;
        rl_error_set(rc, "cannot start a new run: %s", msg);
    }
    pthread_mutex_unlock(&n->engine_mu);
    return rc;
}

static void take_triggers(rl_lab_recorder *n);

static void do_prepare(rl_lab_recorder *n, service *s,
                       const runlab_msgs_srv_dds__PrepareRecording_Request_ *req)
{
    if (!n->rec || rl_recorder_state(n->rec) >= RL_RECORD_COMPLETE) {
        int rc = n->rec && n->capture ? renew(n)
                                      : rl_error_set(RL_ESTATE, "the recorder node lost its "
                                                     "engine in an earlier renewal");
        if (rc < 0) {
            fill_reply(n, s, 0, rl_error_last());
            rl_log(RL_LOG_WARN, "recorder: prepare: %s", rl_error_last());
            return;
        }
    }
    int vehicles[256];
    size_t nv = req->vehicles._length < 256 ? req->vehicles._length : 256;
    for (size_t i = 0; i < nv; i++) {
        vehicles[i] = req->vehicles._buffer[i];
        char pattern[64];
        snprintf(pattern, sizeof pattern, "rt/vehicle/%d/*", vehicles[i]);
        (void)lab_capture_add_pattern(n->capture, pattern, 1);
    }
    memcpy(n->prepared_vehicles, vehicles, nv * sizeof vehicles[0]);
    n->nprepared = nv;
    lab_capture_expect_vehicles(n->capture, vehicles, nv);
    rl_record_run run = {
        .run_id = req->run_id && req->run_id[0] ? req->run_id : NULL,
        .vehicles = vehicles,
        .vehicle_count = nv,
        .planner = req->planner && req->planner[0] ? req->planner : NULL,
        .map_path = req->map_path && req->map_path[0] ? req->map_path : NULL,
    };
    /* The snapshots the node has now; those that come later are added at begin and
       finish (run_snapshots). */
    char *nodes = NULL, *scenario = NULL;
    int rc = lab_params_build(n->params, req->nodes_json, &nodes, &scenario);
    free(n->given_nodes);
    n->given_nodes = rc == RL_OK && req->nodes_json ? strdup(req->nodes_json) : NULL;
    run.nodes_json = nodes;
    run.scenario_json = scenario;
    if (rc == RL_OK)
        rc = rl_recorder_prepare(n->rec, &run);
    free(nodes);
    free(scenario);
    fill_reply(n, s, rc == RL_OK, rc == RL_OK ? "" : rl_error_last());
    if (rc == RL_OK) {
        n->start_marked = 0;
        size_t held = lab_capture_release_held(n->capture);
        if (held)
            rl_log(RL_LOG_INFO, "recorder: %zu transient-local sample(s) received before "
                   "prepare recorded", held);
    }
    rl_log(RL_LOG_INFO, "recorder: prepare %s: %s", run.run_id ? run.run_id : "(new id)",
           rc == RL_OK ? "ARMED" : rl_error_last());
}

/* Rewrites the run's config/nodes.json and scenario with every snapshot received so far
 * (a node that started after prepare, e.g. the simulator after the experiment), waiting up
 * to `settle_ns` for the snapshots of writers already matched. */
static void run_snapshots(rl_lab_recorder *n, int64_t settle_ns)
{
    size_t missing = lab_params_settle(n->params, settle_ns);
    if (missing)
        rl_log(RL_LOG_WARN, "recorder: %zu node(s) announced parameters that did not arrive "
               "in time for config/nodes.json (the bag has what came)", missing);
    char *nodes = NULL, *scenario = NULL;
    int rc = lab_params_build(n->params, n->given_nodes, &nodes, &scenario);
    if (rc == RL_OK)
        rc = rl_recorder_set_nodes(n->rec, nodes, scenario);
    if (rc < 0)
        rl_log(RL_LOG_WARN, "recorder: parameter snapshots not updated: %s", rl_error_last());
    free(nodes);
    free(scenario);
}

/* Every prepared vehicle's READY in the bag before the run begins (and so before START),
 * and every writer discovered by then subscribed: the control flow begins once it saw the
 * READYs, but the recorder's reader of a writer is made after discovery and type lookup,
 * later than the control flow's; on a loaded machine a short run could end before a topic
 * that was there all along had a reader (a bag without one vehicle's state, seen in a
 * 3-second demo). Waits up to `timeout_ns`; then begins anyway, saying what is missing. */
static void await_ready(rl_lab_recorder *n, int64_t timeout_ns)
{
    int64_t deadline = rl_mono_ns() + timeout_ns;
    for (;;) {
        size_t missing = 0;
        int first = 0;
        for (size_t i = 0; i < n->nprepared; i++)
            if (!lab_capture_ready_seen(n->capture, n->prepared_vehicles[i]) && !missing++)
                first = n->prepared_vehicles[i];
        size_t unsubscribed = lab_capture_backlog(n->capture, NULL, 0);
        if (!missing && !unsubscribed)
            return;
        if (rl_mono_ns() >= deadline) {
            char backlog[512];
            lab_capture_backlog(n->capture, backlog, sizeof backlog);
            if (missing)
                rl_log(RL_LOG_WARN, "recorder: begin: READY of %zu prepared vehicle(s) (first: "
                       "%d) not received; beginning without (%s)", missing, first, backlog);
            else /* every READY is in: what is still subscribing is recorded once its reader
                    exists (under ASan a type lookup was seen to take over 10 s) */
                rl_log(RL_LOG_INFO, "recorder: begin: beginning while %s", backlog);
            return;
        }
        struct timespec ts = {0, 5 * 1000000};
        nanosleep(&ts, NULL);
    }
}

static void do_begin(rl_lab_recorder *n, service *s,
                     const runlab_msgs_srv_dds__BeginRecording_Request_ *req)
{
    if (run_id_mismatch(n, s, req->run_id))
        return;
    if (!n->rec) {
        fill_reply(n, s, 0, "no run to begin");
        return;
    }
    if (rl_recorder_state(n->rec) == RL_RECORD_ARMED) {
        /* 10 s: generous for a loaded machine (it returns as soon as every READY is in),
           short beside the control flows' begin timeouts (30-60 s) */
        await_ready(n, 10000000000ll);
        run_snapshots(n, 1000000000ll);
    }
    int rc = rl_recorder_begin(n->rec);
    fill_reply(n, s, rc == RL_OK, rc == RL_OK ? "" : rl_error_last());
}

static void do_finish(rl_lab_recorder *n, service *s,
                      const runlab_msgs_srv_dds__FinishRecording_Request_ *req)
{
    if (run_id_mismatch(n, s, req->run_id))
        return;
    if (!n->rec) {
        fill_reply(n, s, 0, "no run to finish");
        return;
    }
    if (rl_recorder_state(n->rec) == RL_RECORD_RECORDING)
        run_snapshots(n, 0);
    int rc;
    /* What was not recorded goes into the final manifest, and is said once the run ended
       (a FAILED run's finish ends its counts: rl_recorder_finish). */
    if (n->capture)
        lab_capture_settle(n->capture, 0);
    static const char failed_prefix[] = RL_LAB_FINISH_FAILED_PREFIX;
    if (req->reason && !strncmp(req->reason, failed_prefix, sizeof failed_prefix - 1)) {
        /* The control flow judged the run failed (a vehicle lost): FAILED with the rest of
           the reason, word for word the control flow's own sentence. The prefix keeps the
           service's type as it is, and no reason sent before it existed starts so. */
        rc = rl_recorder_fail(n->rec, req->reason + sizeof failed_prefix - 1);
    } else if (req->reason && req->reason[0]) {
        /* A reason means the run did not end as planned (Ctrl+C, a failure the control
           flow saw): INTERRUPTED with that reason, whether STOP came or not. */
        rc = rl_recorder_cancel(n->rec, req->reason);
    } else {
        /* No reason: the run ran its course (docs/lab.md, "finish"). STOP travels on
           another topic and may arrive after this request: the request carries its stamp,
           and triggers already received are taken first. A STOP already marked refuses a
           second mark, which changes nothing. Without any STOP the run still ran its
           course, so STOP is the moment finish arrived, and the manifest's reason says so;
           without START there is no window to evaluate: INTERRUPTED. */
        take_triggers(n);
        if (req->stop_stamp > 0 && req->stop_stamp <= INT64_MAX)
            (void)rl_recorder_mark_stop(n->rec, (int64_t)req->stop_stamp);
        const char *why = NULL;
        if (!n->start_marked)
            why = "finished without START: none was published on " RL_LAB_TOPIC_TRIGGER;
        else if (rl_recorder_mark_stop(n->rec, rl_time_now_ns()) == RL_OK)
            why = "ran its course; no STOP was published, so STOP is when finish arrived";
        rc = rl_recorder_finish(n->rec, why);
    }
    if (rc == RL_OK)
        rc = rl_recorder_wait(n->rec);
    char msg[1024];
    lab_copy(msg, sizeof msg, rc == RL_OK ? "" : rl_error_last());
    if (n->capture && rl_recorder_state(n->rec) >= RL_RECORD_COMPLETE)
        lab_capture_settle(n->capture, 1);
    fill_reply(n, s, rc == RL_OK, msg);
    rl_record_status st;
    node_status(n, &st);
    publish_status(n, &st);
}

static void serve(rl_lab_recorder *n, int which)
{
    service *s = &n->svc[which];
    void *samples[1] = {0};
    dds_sample_info_t si;
    for (;;) {
        dds_return_t got = dds_take(s->request_reader, samples, &si, 1, 1);
        if (got <= 0)
            return;
        if (si.valid_data) {
            /* Every request starts with {uint64 client_id; int64 sequence_number}. */
            const runlab_msgs_srv_dds__BeginRecording_Request_ *head = samples[0];
            uint64_t client = head->client_id;
            int64_t seq = head->sequence_number;
            if (!(client == s->last_client && seq == s->last_seq)) {
                if (which == SVC_PREPARE)
                    do_prepare(n, s, samples[0]);
                else if (which == SVC_BEGIN)
                    do_begin(n, s, samples[0]);
                else
                    do_finish(n, s, samples[0]);
                s->last_client = client;
                s->last_seq = seq;
            }
            s->last_reply.client_id = client;
            s->last_reply.sequence_number = seq;
            /* The client's reply reader may still be matching (rmw waits the same way). */
            (void)lab_wait_matched(s->reply_writer, 1, rl_mono_ns() + 1000000000ll);
            dds_return_t wrc = dds_write(s->reply_writer, &s->last_reply);
            if (wrc < 0)
                rl_log(RL_LOG_WARN, "recorder: reply not sent: %s", dds_strretcode(wrc));
        }
        dds_return_loan(s->request_reader, samples, got);
    }
}

static void take_triggers(rl_lab_recorder *n)
{
    void *samples[8] = {0};
    dds_sample_info_t si[8];
    for (;;) {
        dds_return_t got = dds_take(n->trigger_reader, samples, si, 8, 8);
        if (got <= 0)
            return;
        for (int i = 0; i < got; i++) {
            const runlab_msgs_msg_dds__SystemTrigger_ *t = samples[i];
            if (!si[i].valid_data || t->stamp > INT64_MAX || !n->rec)
                continue;
            int rc = RL_OK;
            if (t->kind == runlab_msgs_msg_dds__SystemTrigger_Constants_START) {
                rc = rl_recorder_mark_start(n->rec, (int64_t)t->stamp);
                n->start_marked |= rc == RL_OK;
            } else if (t->kind == runlab_msgs_msg_dds__SystemTrigger_Constants_STOP)
                rc = rl_recorder_mark_stop(n->rec, (int64_t)t->stamp);
            if (rc < 0)
                rl_log(RL_LOG_INFO, "recorder: trigger %u not marked: %s", (unsigned)t->kind,
                       rl_error_last());
        }
        dds_return_loan(n->trigger_reader, samples, got);
    }
}

/* ---- control flow lost ------------------------------------------------------------------ */

static void end_lost_run(rl_lab_recorder *n, const char *why)
{
    rl_record_state state = rl_recorder_state(n->rec);
    if (state != RL_RECORD_ARMED && state != RL_RECORD_RECORDING)
        return;
    rl_log(RL_LOG_WARN, "recorder: %s: the run ends INTERRUPTED", why);
    if (rl_recorder_cancel(n->rec, why) == RL_OK)
        (void)rl_recorder_wait(n->rec); /* bag closed, manifest final */
    rl_record_status st;
    node_status(n, &st);
    publish_status(n, &st);
}

/* Takes the control heartbeats (a heartbeat counts from when this thread takes it, so a
 * busy node never times a live control flow out), then ends the run if its control flow is
 * lost: the control descriptor reached end of file, or the heartbeat that armed the run's
 * timeout fell silent (lab_control.c has the rule). */
static void watch_control(rl_lab_recorder *n)
{
    rl_record_status st;
    node_status(n, &st);
    void *samples[8] = {0};
    dds_sample_info_t si[8];
    dds_return_t got;
    while ((got = dds_take(n->control_reader, samples, si, 8, 8)) > 0) {
        for (int i = 0; i < got; i++) {
            const runlab_msgs_msg_dds__ControlHeartbeat_ *m = samples[i];
            if (si[i].valid_data)
                lab_control_beat(&n->control, m->run_id, m->source_id, m->host, m->pid,
                                 st.run_id, st.state, rl_mono_ns());
        }
        dds_return_loan(n->control_reader, samples, got);
    }
    if (!n->rec)
        return;
    if (n->control_fd_open && lab_control_fd_closed(n->opts.control_fd)) {
        n->control_fd_open = 0;
        end_lost_run(n, "control flow lost: the process that started the recorder has ended "
                        "(its control pipe closed)");
        atomic_store(&n->control_closed, true);
        return;
    }
    char why[512];
    if (lab_control_lost(&n->control, st.run_id, st.state, rl_mono_ns(), why, sizeof why))
        end_lost_run(n, why);
}

static void *node_main(void *arg)
{
    pthread_setname_np(pthread_self(), "rl-node"); /* for top -H, perf, gdb */
    rl_lab_recorder *n = arg;
    while (!atomic_load(&n->stop)) {
        /* At least every 100 ms: a lost control flow is noticed well within 2 s. */
        (void)dds_waitset_wait(n->waitset, NULL, 0, DDS_MSECS(100));
        take_triggers(n);
        for (int i = 0; i < SVC_COUNT; i++)
            serve(n, i);
        watch_control(n);
    }
    return NULL;
}

/* ---- life cycle ------------------------------------------------------------------------- */

static int make_service(rl_lab_recorder *n, service *s, const char *ros_name,
                        const dds_topic_descriptor_t *req, const dds_topic_descriptor_t *rep)
{
    int rc = lab_service_endpoints(n->participant, ros_name, req, rep, 1, &s->request_reader,
                                   &s->reply_writer);
    if (rc < 0)
        return rc;
    s->req_desc = req;
    s->last_seq = -1;
    dds_entity_t cond = dds_create_readcondition(s->request_reader, DDS_ANY_STATE);
    if (cond < 0 || dds_waitset_attach(n->waitset, cond, 0) < 0)
        return lab_dds_fail(cond, "service wait");
    return RL_OK;
}

static int start(rl_lab_recorder *n)
{
    int rc = lab_participant(n->opts.domain, &n->participant);
    if (rc < 0)
        return rc;
    dds_entity_t beat_topic = dds_create_topic(n->participant,
                                               &runlab_msgs_msg_dds__RecordingState__desc,
                                               RL_LAB_TOPIC_RECORDING_STATE, NULL, NULL);
    if (beat_topic < 0)
        return lab_dds_fail(beat_topic, "heartbeat topic");
    if ((rc = check_no_peer(n, beat_topic)) < 0)
        return rc;
    dds_qos_t *q = lab_qos(1, 1);
    n->heartbeat_writer = dds_create_writer(n->participant, beat_topic, q, NULL);
    dds_delete_qos(q);
    if (n->heartbeat_writer < 0)
        return lab_dds_fail(n->heartbeat_writer, "heartbeat writer");
    atomic_store(&n->beat_writer, n->heartbeat_writer);

    n->waitset = dds_create_waitset(n->participant);
    n->stop_guard = dds_create_guardcondition(n->participant);
    if (n->waitset < 0 || n->stop_guard < 0 || dds_waitset_attach(n->waitset, n->stop_guard, 0) < 0)
        return lab_dds_fail(n->waitset < 0 ? n->waitset : n->stop_guard, "waitset");
    if ((rc = make_service(n, &n->svc[SVC_PREPARE], RL_LAB_SERVICE_PREPARE,
                           &runlab_msgs_srv_dds__PrepareRecording_Request__desc,
                           &runlab_msgs_srv_dds__PrepareRecording_Response__desc)) < 0 ||
        (rc = make_service(n, &n->svc[SVC_BEGIN], RL_LAB_SERVICE_BEGIN,
                           &runlab_msgs_srv_dds__BeginRecording_Request__desc,
                           &runlab_msgs_srv_dds__BeginRecording_Response__desc)) < 0 ||
        (rc = make_service(n, &n->svc[SVC_FINISH], RL_LAB_SERVICE_FINISH,
                           &runlab_msgs_srv_dds__FinishRecording_Request__desc,
                           &runlab_msgs_srv_dds__FinishRecording_Response__desc)) < 0)
        return rc;

    dds_entity_t trig = dds_create_topic(n->participant, &runlab_msgs_msg_dds__SystemTrigger__desc,
                                         RL_LAB_TOPIC_TRIGGER, NULL, NULL);
    q = lab_qos(1, 1);
    n->trigger_reader = trig < 0 ? trig : dds_create_reader(n->participant, trig, q, NULL);
    dds_delete_qos(q);
    if (n->trigger_reader < 0)
        return lab_dds_fail(n->trigger_reader, "trigger reader");
    dds_entity_t cond = dds_create_readcondition(n->trigger_reader, DDS_ANY_STATE);
    if (cond < 0 || dds_waitset_attach(n->waitset, cond, 0) < 0)
        return lab_dds_fail(cond, "trigger wait");
    if ((rc = lab_params_new(&n->params, n->participant)) < 0)
        return rc;
    dds_entity_t ctl = dds_create_topic(n->participant,
                                        &runlab_msgs_msg_dds__ControlHeartbeat__desc,
                                        RL_LAB_TOPIC_CONTROL_HEARTBEAT, NULL, NULL);
    q = lab_qos(0, 16); /* several control flows may beat; each counts for its own run */
    n->control_reader = ctl < 0 ? ctl : dds_create_reader(n->participant, ctl, q, NULL);
    dds_delete_qos(q);
    if (n->control_reader < 0)
        return lab_dds_fail(n->control_reader, "control heartbeat reader");

    if ((rc = lab_capture_new(&n->capture, n->participant, n->rec, n->opts.schemas,
                              n->opts.schema_count)) < 0)
        return rc;
    atomic_store(&n->capture_live, n->capture);
    if ((rc = add_patterns(n)) < 0 || (rc = lab_ros_graph_announce(n->participant, "runlab_recorder")) < 0)
        return rc;
    if (pthread_create(&n->thread, NULL, node_main, n) != 0)
        return rl_error_set(RL_ERR, "cannot start the recorder node's thread");
    n->thread_started = 1;
    return RL_OK;
}

static char *dup_opt(const char *s, int *failed)
{
    char *d = s ? strdup(s) : NULL;
    if (s && !d)
        *failed = 1;
    return d;
}

/* Points n->opts and `eo` at owned copies of their strings, patterns and schemas. */
static int own_options(rl_lab_recorder *n, rl_record_options *eo)
{
    int failed = 0;
    n->home = dup_opt(eo->home, &failed);
    n->lock_dir = dup_opt(eo->lock_dir, &failed);
    n->bag_profile = dup_opt(eo->bag_profile, &failed);
    eo->home = n->home;
    eo->lock_dir = n->lock_dir;
    eo->bag_profile = n->bag_profile;
    n->patterns = calloc(n->opts.pattern_count + 1, sizeof *n->patterns);
    n->schemas = calloc(n->opts.schema_count + 1, sizeof *n->schemas);
    failed |= !n->patterns || !n->schemas;
    for (size_t i = 0; !failed && i < n->opts.pattern_count; i++)
        n->patterns[i] = dup_opt(n->opts.patterns[i], &failed);
    for (size_t i = 0; !failed && i < n->opts.schema_count; i++) {
        n->schemas[i].type_name = dup_opt(n->opts.schemas[i].type_name, &failed);
        n->schemas[i].idl = dup_opt(n->opts.schemas[i].idl, &failed);
    }
    n->opts.patterns = (const char *const *)n->patterns;
    n->opts.schemas = n->schemas;
    n->opts.home = n->home;
    n->opts.lock_dir = n->lock_dir;
    n->opts.engine = NULL;
    return failed ? rl_error_set(RL_ENOMEM, "out of memory") : RL_OK;
}

static void free_owned_options(rl_lab_recorder *n)
{
    for (size_t i = 0; n->patterns && i < n->opts.pattern_count; i++)
        free(n->patterns[i]);
    for (size_t i = 0; n->schemas && i < n->opts.schema_count; i++) {
        free((char *)n->schemas[i].type_name);
        free((char *)n->schemas[i].idl);
    }
    free(n->patterns);
    free(n->schemas);
    free(n->home);
    free(n->lock_dir);
    free(n->bag_profile);
}

int rl_lab_recorder_new(rl_lab_recorder **out, const rl_lab_recorder_options *opts)
{
    if (!out || !opts)
        return rl_error_set(RL_EINVAL, "recorder node: no options");
    if (opts->peer_wait_ns < 0 || opts->heartbeat_interval_ns <= 0)
        return rl_error_set(RL_EINVAL, "recorder node: negative interval");
    if (opts->control_timeout_ns != 0 && (opts->control_timeout_ns < 500 * 1000000ll ||
                                          opts->control_timeout_ns > 3600 * 1000000000ll))
        return rl_error_set(RL_EINVAL, "recorder node: control flow timeout %lld ns: must be "
                            "0 (never) or 0.5 s .. 1 h",
                            (long long)opts->control_timeout_ns);
    for (size_t i = 0; i < opts->schema_count; i++)
        if (!opts->schemas[i].type_name || !opts->schemas[i].idl)
            return rl_error_set(RL_EINVAL, "recorder node: schema %zu without type name or IDL", i);
    rl_lab_recorder *n = calloc(1, sizeof *n);
    if (!n)
        return rl_error_set(RL_ENOMEM, "out of memory");
    n->opts = *opts;
    lab_control_watch_init(&n->control, opts->control_timeout_ns);
    n->control_fd_open = opts->control_fd > 0;
    pthread_mutex_init(&n->engine_mu, NULL);
    rl_record_options eo;
    if (opts->engine)
        eo = *opts->engine;
    else
        rl_record_options_default(&eo);
    eo.home = opts->home;
    eo.lock_dir = opts->lock_dir;
    eo.lab_domain = opts->domain;
    eo.heartbeat_interval_ns = opts->heartbeat_interval_ns;
    /* omgidl schemas: the MCAP ros2 profile (ros2msg schemas) does not fit the bag. */
    if (!eo.bag_profile)
        eo.bag_profile = "";
    eo.heartbeat = on_heartbeat;
    eo.heartbeat_user = n;
    int rc = own_options(n, &eo);
    n->engine_opts = eo;
    if (rc == RL_OK)
        rc = rl_recorder_new(&n->rec, &eo);
    if (rc == RL_OK)
        rc = start(n);
    if (rc < 0) {
        int keep = rc;
        char msg[1024];
        lab_copy(msg, sizeof msg, rl_error_last());
        rl_lab_recorder_free(n);
        return rl_error_set(keep, "%s", msg);
    }
    *out = n;
    return RL_OK;
}

void rl_lab_recorder_status(rl_lab_recorder *n, rl_record_status *out)
{
    pthread_mutex_lock(&n->engine_mu);
    node_status(n, out);
    pthread_mutex_unlock(&n->engine_mu);
}

rl_record_state rl_lab_recorder_run(rl_lab_recorder *n, char *run_dir, size_t cap)
{
    pthread_mutex_lock(&n->engine_mu);
    rl_record_status st;
    node_status(n, &st);
    if (cap)
        snprintf(run_dir, cap, "%s", st.run_dir ? st.run_dir : "");
    pthread_mutex_unlock(&n->engine_mu);
    return st.state;
}

bool rl_lab_recorder_control_closed(rl_lab_recorder *n)
{
    return atomic_load(&n->control_closed);
}

size_t rl_lab_recorder_topic_count(rl_lab_recorder *n)
{
    pthread_mutex_lock(&n->engine_mu);
    size_t count = n->capture ? lab_capture_topic_count(n->capture) : 0;
    pthread_mutex_unlock(&n->engine_mu);
    return count;
}

size_t rl_lab_recorder_held_count(rl_lab_recorder *n)
{
    pthread_mutex_lock(&n->engine_mu);
    size_t count = n->capture ? lab_capture_held_count(n->capture) : 0;
    pthread_mutex_unlock(&n->engine_mu);
    return count;
}

void rl_lab_recorder_free(rl_lab_recorder *n)
{
    if (!n)
        return;
    atomic_store(&n->stop, 1);
    if (n->stop_guard > 0)
        (void)dds_set_guardcondition(n->stop_guard, true);
    if (n->thread_started)
        pthread_join(n->thread, NULL);
    if (n->rec) {
        rl_record_state st = rl_recorder_state(n->rec);
        if (n->capture && st != RL_RECORD_IDLE)
            lab_capture_settle(n->capture, 0);
        if (st == RL_RECORD_ARMED || st == RL_RECORD_RECORDING) {
            (void)rl_recorder_cancel(n->rec, "recorder stopped");
            (void)rl_recorder_wait(n->rec);
        }
        if (n->capture && st != RL_RECORD_IDLE)
            lab_capture_settle(n->capture, 1);
        rl_record_status s;
        rl_recorder_status(n->rec, &s);
        publish_status(n, &s);
    }
    atomic_store(&n->beat_writer, 0);
    if (n->participant > 0)
        dds_delete(n->participant);
    lab_handoff_acquire();
    /* The worker may still be registering a topic: stop it before the engine goes, and
       free the capture after the engine's monitor (which reads its count) has stopped. */
    lab_capture_stop(n->capture);
    rl_recorder_free(n->rec);
    lab_capture_free(n->capture);
    lab_params_free(n->params);
    free(n->given_nodes);
    pthread_mutex_destroy(&n->engine_mu);
    free_owned_options(n);
    free(n);
}
