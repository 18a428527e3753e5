/* The simulator's two outlets: on a DDS domain in real time (READY, obeys START and STOP,
 * commands, states and observations at their rates, commands from outside followed), and
 * offline, straight into a run directory through the recorder engine with the map, faster
 * than real time and the same for the same seed. */
#include "lab/lab_internal.h"
#include "lab/lab_sim.h"

#include "runlab/error.h"
#include "runlab/time.h"

#include <dds/ddsi/ddsi_cdrstream.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Offline stamps start here (2026-01-01T00:00:00Z), so a seed gives the same bag. */
#define OFFLINE_EPOCH_NS (1767225600ll * 1000000000ll)

/* 1 when an observation is due at state tick `tick`: observation_rate_hz on average. */
static int observation_due(const rl_lab_sim_options *o, uint64_t tick)
{
    double per = o->observation_rate_hz / o->state_rate_hz;
    return tick == 0 || floor((double)tick * per) != floor((double)(tick - 1) * per);
}

/* Ticks between two commands of the built-in planner (every 0.2 s). */
static uint64_t command_every(const rl_lab_sim_options *o)
{
    long long n = llround(0.2 * o->state_rate_hz);
    return n < 1 ? 1 : (uint64_t)n;
}

/* ---- on DDS ----------------------------------------------------------------------------- */

enum { CMD_TRAJECTORY = 0, CMD_PATH_TRACKING, CMD_SPEED_CURVATURE, CMD_DIRECT, CMD_KINDS };

typedef struct sim_dds {
    dds_entity_t pp, ready, trigger;
    dds_entity_t *state, *obs, *cmd_out; /* per vehicle */
    dds_entity_t *cmd_in;                /* per vehicle and kind */
} sim_dds;

static const char *const cmd_topic[CMD_KINDS] = {"command_trajectory", "command_path_tracking",
                                                 "command_speed_curvature", "command_direct"};
static const dds_topic_descriptor_t *const cmd_desc[CMD_KINDS] = {
    &runlab_msgs_msg_dds__VehicleCommandTrajectory__desc,
    &runlab_msgs_msg_dds__VehicleCommandPathTracking__desc,
    &runlab_msgs_msg_dds__VehicleCommandSpeedCurvature__desc,
    &runlab_msgs_msg_dds__VehicleCommandDirect__desc};

static dds_entity_t vehicle_endpoint(dds_entity_t pp, int id, const char *what,
                                     const dds_topic_descriptor_t *desc, const dds_qos_t *q,
                                     int writer)
{
    char name[64];
    rl_lab_vehicle_topic(id, what, name, sizeof name);
    dds_entity_t t = dds_create_topic(pp, desc, name, NULL, NULL);
    if (t < 0)
        return t;
    return writer ? dds_create_writer(pp, t, q, NULL) : dds_create_reader(pp, t, q, NULL);
}

static int sim_dds_open(sim_dds *d, int domain, int vehicles)
{
    int rc = lab_participant(domain, &d->pp);
    if (rc < 0)
        return rc;
    size_t nv = (size_t)vehicles;
    d->state = calloc(nv, sizeof *d->state);
    d->obs = calloc(nv, sizeof *d->obs);
    d->cmd_out = calloc(nv, sizeof *d->cmd_out);
    d->cmd_in = calloc(nv * CMD_KINDS, sizeof *d->cmd_in);
    if (!d->state || !d->obs || !d->cmd_out || !d->cmd_in)
        return rl_error_set(RL_ENOMEM, "out of memory");
    dds_qos_t *q = lab_qos(0, 1);
    dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 8);
    /* Commands from outside only: the built-in planner's own are the vehicle's already. */
    dds_qos_t *rq = dds_create_qos();
    dds_copy_qos(rq, q);
    dds_qset_ignorelocal(rq, DDS_IGNORELOCAL_PARTICIPANT);
    for (int k = 0; k < vehicles; k++) {
        d->state[k] = vehicle_endpoint(d->pp, k + 1, "state",
                                       &runlab_msgs_msg_dds__VehicleState__desc, q, 1);
        d->obs[k] = vehicle_endpoint(d->pp, k + 1, "observation",
                                     &runlab_msgs_msg_dds__VehicleObservation__desc, q, 1);
        d->cmd_out[k] = vehicle_endpoint(d->pp, k + 1, cmd_topic[CMD_TRAJECTORY], cmd_desc[CMD_TRAJECTORY], q, 1);
        dds_entity_t bad = d->state[k] < 0 ? d->state[k] : d->obs[k] < 0 ? d->obs[k] : d->cmd_out[k];
        for (int c = 0; c < CMD_KINDS; c++) {
            dds_entity_t r = vehicle_endpoint(d->pp, k + 1, cmd_topic[c], cmd_desc[c], rq, 0);
            d->cmd_in[(size_t)k * CMD_KINDS + (size_t)c] = r;
            if (r < 0)
                bad = r;
        }
        if (bad < 0) {
            dds_delete_qos(q);
            dds_delete_qos(rq);
            return lab_dds_fail(bad, "vehicle writers and command readers");
        }
    }
    dds_delete_qos(q);
    dds_delete_qos(rq);
    q = lab_qos(1, 0);
    dds_entity_t t = dds_create_topic(d->pp, &runlab_msgs_msg_dds__ReadyStatus__desc,
                                      RL_LAB_TOPIC_READY, NULL, NULL);
    d->ready = t < 0 ? t : dds_create_writer(d->pp, t, q, NULL);
    dds_delete_qos(q);
    q = lab_qos(1, 1);
    t = dds_create_topic(d->pp, &runlab_msgs_msg_dds__SystemTrigger__desc, RL_LAB_TOPIC_TRIGGER,
                         NULL, NULL);
    d->trigger = t < 0 ? t : dds_create_reader(d->pp, t, q, NULL);
    dds_delete_qos(q);
    if (d->ready < 0 || d->trigger < 0)
        return lab_dds_fail(d->ready < 0 ? d->ready : d->trigger, "ready writer / trigger reader");
    return lab_ros_graph_announce(d->pp, "runlab_sim");
}

static void sim_dds_close(sim_dds *d)
{
    if (d->pp > 0)
        dds_delete(d->pp);
    free(d->state);
    free(d->obs);
    free(d->cmd_out);
    free(d->cmd_in);
}

/* Takes triggers: sets *start / *stop (stamps, ns) when they come. */
static void take_triggers(sim_dds *d, int64_t *start, int64_t *stop)
{
    void *samples[4] = {0};
    dds_sample_info_t si[4];
    dds_return_t n;
    while ((n = dds_take(d->trigger, samples, si, 4, 4)) > 0) {
        for (int i = 0; i < n; i++) {
            const runlab_msgs_msg_dds__SystemTrigger_ *m = samples[i];
            if (!si[i].valid_data)
                continue;
            if (m->kind == runlab_msgs_msg_dds__SystemTrigger_Constants_START && !*start)
                *start = (int64_t)m->stamp > 0 ? (int64_t)m->stamp : rl_time_now_ns();
            else if (m->kind == runlab_msgs_msg_dds__SystemTrigger_Constants_STOP)
                *stop = (int64_t)m->stamp > 0 ? (int64_t)m->stamp : rl_time_now_ns();
        }
        dds_return_loan(d->trigger, samples, n);
    }
}

/* Takes the commands other participants sent to vehicle `k`; hands them over while
 * `driving` (else they are dropped). */
static void take_commands(sim_dds *d, lab_sim *s, int k, int64_t now, int driving)
{
    for (int c = 0; c < CMD_KINDS; c++) {
        dds_entity_t r = d->cmd_in[(size_t)k * CMD_KINDS + (size_t)c];
        void *samples[8] = {0};
        dds_sample_info_t si[8];
        dds_return_t n;
        while ((n = dds_take(r, samples, si, 8, 8)) > 0) {
            for (int i = 0; driving && i < n; i++) {
                if (!si[i].valid_data)
                    continue;
                if (c == CMD_TRAJECTORY) {
                    lab_sim_take_command(s, (size_t)k, samples[i], now);
                } else if (c == CMD_PATH_TRACKING) {
                    lab_sim_take_path(s, (size_t)k, samples[i], now);
                } else if (c == CMD_SPEED_CURVATURE) {
                    const runlab_msgs_msg_dds__VehicleCommandSpeedCurvature_ *m = samples[i];
                    lab_sim_take_external(s, (size_t)k, 1, (int64_t)m->header.valid_after_stamp,
                                          m->speed, m->curvature, now);
                } else {
                    const runlab_msgs_msg_dds__VehicleCommandDirect_ *m = samples[i];
                    lab_sim_take_external(s, (size_t)k, 2, (int64_t)m->header.valid_after_stamp,
                                          m->throttle, m->steering_servo, now);
                }
            }
            dds_return_loan(r, samples, n);
        }
    }
}

int rl_lab_sim_run(const rl_lab_sim_options *opts, int (*should_stop)(void *user), void *user)
{
    lab_sim s;
    int rc = lab_sim_init(&s, opts);
    if (rc < 0)
        return rc;
    sim_dds d = {0};
    rc = sim_dds_open(&d, opts->domain, opts->vehicles);
    if (rc == RL_OK && opts->map_path) /* before READY: a control flow has it by then */
        rc = lab_map_announce(d.pp, opts->map_path);
    for (int k = 0; rc == RL_OK && k < opts->vehicles; k++) {
        char source[32];
        snprintf(source, sizeof source, "vehicle_%d", k + 1);
        runlab_msgs_msg_dds__ReadyStatus_ r = {.source_id = source, .vehicle_id = (uint8_t)(k + 1),
                                               .stamp = (uint64_t)rl_time_now_ns()};
        dds_return_t w = dds_write(d.ready, &r);
        if (w < 0)
            rc = lab_dds_fail(w, "ready status");
    }
    const double dt = 1.0 / opts->state_rate_hz;
    const int64_t tick_ns = (int64_t)(1e9 * dt);
    const uint64_t every = command_every(opts);
    int64_t start = 0, stop = 0, stood_since = 0, last_tick = 0;
    uint64_t driven = 0; /* ticks since START */
    int64_t next = rl_mono_ns();
    for (uint64_t tick = 0; rc == RL_OK; tick++) {
        if (should_stop && should_stop(user))
            break;
        take_triggers(&d, &start, &stop);
        int64_t now = rl_time_now_ns();
        double t = start ? (double)(now - start) / 1e9 : -1.0;
        if (start && !stop && opts->duration > 0 && t >= opts->duration)
            stop = now;
        int driving = start && !stop;
        lab_sim_record(&s);
        for (int k = 0; k < opts->vehicles; k++) {
            take_commands(&d, &s, k, now, driving);
            if (driving && driven % every == 0 && !s.veh[k].external) {
                runlab_msgs_msg_dds__VehicleCommandTrajectory_ c;
                lab_sim_plan(&s, (size_t)k, t, start, &c);
                if (c.trajectory_points._length)
                    (void)dds_write(d.cmd_out[k], &c);
            }
            if (!(driving && lab_sim_fault(&s, k + 1, RL_LAB_FAULT_STALL_TOPIC, t))) {
                runlab_msgs_msg_dds__VehicleState_ m;
                lab_sim_state(&s, (size_t)k, now, &m);
                (void)dds_write(d.state[k], &m);
            }
            if (observation_due(opts, tick)) {
                runlab_msgs_msg_dds__VehicleObservation_ m;
                lab_sim_observation(&s, (size_t)k, now, t, &m);
                (void)dds_write(d.obs[k], &m);
            }
        }
        if (driving)
            driven++;
        /* The vehicles move by the time that passed (a late tick moves them further), so
           they keep up with the planner's wall-clock timetable on a busy machine. */
        double step = last_tick ? (double)(now - last_tick) / 1e9 : dt;
        last_tick = now;
        lab_sim_step(&s, now, t, step < 0 ? 0 : step > 0.1 ? 0.1 : step, driving);
        /* After STOP: brake, stand half a second, done. */
        if (stop) {
            int moving = 0;
            for (int k = 0; k < opts->vehicles; k++)
                moving |= s.veh[k].v != 0;
            if (moving)
                stood_since = 0;
            else if (!stood_since)
                stood_since = rl_mono_ns();
            else if (rl_mono_ns() - stood_since > 500000000ll)
                break;
        }
        next += tick_ns;
        struct timespec ts = {.tv_sec = next / 1000000000ll, .tv_nsec = next % 1000000000ll};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
    if (rc == RL_OK) /* let reliable writers deliver the last samples */
        for (int k = 0; k < opts->vehicles; k++)
            (void)dds_wait_for_acks(d.state[k], DDS_SECS(2));
    sim_dds_close(&d);
    lab_sim_free(&s);
    return rc;
}

/* ---- offline ------------------------------------------------------------------------------ */

typedef struct offline {
    rl_recorder *rec;
    uint16_t *state_ids, *obs_ids, *cmd_ids, trigger_id, ready_id;
} offline;

/* The XCDR1 bytes of `sample` behind the encapsulation header 00 01 00 00 (little-endian
 * CDR, as a ROS 2 writer sends it), pushed to `topic`. */
static int push_sample(offline *o, uint16_t topic, int64_t stamp, const void *sample,
                       const dds_topic_descriptor_t *desc)
{
    dds_ostream_t body;
    dds_ostream_init(&body, 256, 1 /* XCDR1 */);
    (void)dds_stream_write(&body, sample, desc->m_ops);
    uint8_t *buf = malloc(4 + (size_t)body.m_index);
    int rc;
    if (!buf) {
        rc = rl_error_set(RL_ENOMEM, "out of memory");
    } else {
        static const uint8_t header[4] = {0x00, 0x01, 0x00, 0x00};
        memcpy(buf, header, 4);
        memcpy(buf + 4, body.m_buffer, body.m_index);
        rc = rl_recorder_push(o->rec, topic, stamp, stamp, buf, 4 + (size_t)body.m_index);
        free(buf);
    }
    dds_ostream_fini(&body);
    return rc;
}

static int add_topic(offline *o, const char *topic, const dds_topic_descriptor_t *desc,
                     uint16_t *id)
{
    char *idl = lab_builtin_schema(desc->m_typename);
    if (!idl)
        return rl_error_set(RL_ERR, "sim: no schema for %s", desc->m_typename);
    int rc = rl_recorder_add_topic(o->rec, topic, desc->m_typename, "omgidl", idl, strlen(idl),
                                   "cdr", id);
    free(idl);
    return rc;
}

static int offline_topics(offline *o, int vehicles)
{
    o->state_ids = calloc((size_t)vehicles, sizeof *o->state_ids);
    o->obs_ids = calloc((size_t)vehicles, sizeof *o->obs_ids);
    o->cmd_ids = calloc((size_t)vehicles, sizeof *o->cmd_ids);
    if (!o->state_ids || !o->obs_ids || !o->cmd_ids)
        return rl_error_set(RL_ENOMEM, "out of memory");
    int rc = add_topic(o, RL_LAB_TOPIC_TRIGGER, &runlab_msgs_msg_dds__SystemTrigger__desc,
                       &o->trigger_id);
    if (rc == RL_OK)
        rc = add_topic(o, RL_LAB_TOPIC_READY, &runlab_msgs_msg_dds__ReadyStatus__desc, &o->ready_id);
    for (int k = 0; rc == RL_OK && k < vehicles; k++) {
        char name[64];
        rl_lab_vehicle_topic(k + 1, "state", name, sizeof name);
        rc = add_topic(o, name, &runlab_msgs_msg_dds__VehicleState__desc, &o->state_ids[k]);
        rl_lab_vehicle_topic(k + 1, "observation", name, sizeof name);
        if (rc == RL_OK)
            rc = add_topic(o, name, &runlab_msgs_msg_dds__VehicleObservation__desc, &o->obs_ids[k]);
        rl_lab_vehicle_topic(k + 1, "command_trajectory", name, sizeof name);
        if (rc == RL_OK)
            rc = add_topic(o, name, &runlab_msgs_msg_dds__VehicleCommandTrajectory__desc,
                           &o->cmd_ids[k]);
    }
    return rc;
}

/* The engine's queue is bounded: a producer faster than the disk waits for it. */
static void throttle(rl_recorder *rec)
{
    rl_record_status st;
    for (;;) {
        rl_recorder_status(rec, &st);
        if (st.queued_messages < 100000 || st.state != RL_RECORD_RECORDING)
            return;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

static int offline_drive(offline *o, lab_sim *s, const rl_lab_sim_options *opts, double duration)
{
    const double dt = 1.0 / opts->state_rate_hz;
    const uint64_t every = command_every(opts);
    int rc = RL_OK;
    /* READY one second before START. */
    for (int k = 0; rc == RL_OK && k < opts->vehicles; k++) {
        char source[32];
        snprintf(source, sizeof source, "vehicle_%d", k + 1);
        int64_t at = OFFLINE_EPOCH_NS - 1000000000ll;
        runlab_msgs_msg_dds__ReadyStatus_ r = {.source_id = source, .vehicle_id = (uint8_t)(k + 1),
                                               .stamp = (uint64_t)at};
        rc = push_sample(o, o->ready_id, at, &r, &runlab_msgs_msg_dds__ReadyStatus__desc);
    }
    runlab_msgs_msg_dds__SystemTrigger_ trig = {
        .kind = runlab_msgs_msg_dds__SystemTrigger_Constants_START, .stamp = (uint64_t)OFFLINE_EPOCH_NS};
    if (rc == RL_OK)
        rc = push_sample(o, o->trigger_id, OFFLINE_EPOCH_NS, &trig,
                         &runlab_msgs_msg_dds__SystemTrigger__desc);
    if (rc == RL_OK)
        rc = rl_recorder_mark_start(o->rec, OFFLINE_EPOCH_NS);
    uint64_t ticks = (uint64_t)llround(duration * opts->state_rate_hz);
    for (uint64_t tick = 0; rc == RL_OK && tick <= ticks; tick++) {
        double t = (double)tick * dt;
        int64_t stamp = OFFLINE_EPOCH_NS + (int64_t)llround(t * 1e9);
        lab_sim_record(s);
        for (int k = 0; rc == RL_OK && k < opts->vehicles; k++) {
            if (tick % every == 0 && tick < ticks) {
                runlab_msgs_msg_dds__VehicleCommandTrajectory_ c;
                lab_sim_plan(s, (size_t)k, t, OFFLINE_EPOCH_NS, &c);
                if (c.trajectory_points._length)
                    rc = push_sample(o, o->cmd_ids[k], stamp, &c,
                                     &runlab_msgs_msg_dds__VehicleCommandTrajectory__desc);
            }
            if (rc == RL_OK && !lab_sim_fault(s, k + 1, RL_LAB_FAULT_STALL_TOPIC, t)) {
                runlab_msgs_msg_dds__VehicleState_ m;
                lab_sim_state(s, (size_t)k, stamp, &m);
                rc = push_sample(o, o->state_ids[k], stamp, &m,
                                 &runlab_msgs_msg_dds__VehicleState__desc);
            }
            if (rc == RL_OK && observation_due(opts, tick)) {
                runlab_msgs_msg_dds__VehicleObservation_ m;
                lab_sim_observation(s, (size_t)k, stamp, t, &m);
                rc = push_sample(o, o->obs_ids[k], stamp, &m,
                                 &runlab_msgs_msg_dds__VehicleObservation__desc);
            }
        }
        lab_sim_step(s, stamp, t, dt, 1);
        if ((tick & 1023) == 0)
            throttle(o->rec);
    }
    int64_t stop = OFFLINE_EPOCH_NS + (int64_t)llround(duration * 1e9);
    trig.kind = runlab_msgs_msg_dds__SystemTrigger_Constants_STOP;
    trig.stamp = (uint64_t)stop;
    if (rc == RL_OK)
        rc = push_sample(o, o->trigger_id, stop, &trig, &runlab_msgs_msg_dds__SystemTrigger__desc);
    if (rc == RL_OK)
        rc = rl_recorder_mark_stop(o->rec, stop);
    return rc;
}

int rl_lab_sim_offline(const rl_lab_sim_options *opts, const char *home, char *run_dir, size_t cap)
{
    lab_sim s;
    int rc = lab_sim_init(&s, opts);
    if (rc < 0)
        return rc;
    double duration = opts->duration > 0 ? opts->duration : 10.0;
    char home_buf[4096], lock_dir[4200];
    rc = rl_record_home(home, home_buf, sizeof home_buf);
    /* Offline runs take no DDS domain: their lock lives apart from the recorders'. */
    if (rc == RL_OK)
        snprintf(lock_dir, sizeof lock_dir, "%s/locks/offline", home_buf);
    offline o = {0};
    rl_record_options ro;
    rl_record_options_default(&ro);
    ro.home = home_buf;
    ro.lock_dir = lock_dir;
    ro.lab_domain = opts->domain;
    /* Nothing live can be lost offline: the writer may fall behind a loaded machine's disk
     * for as long as it takes; only a disk hung for minutes fails the run. */
    ro.stall_limit_ns = 600 * 1000000000ll;
    if (rc == RL_OK)
        rc = rl_recorder_new(&o.rec, &ro);
    if (rc == RL_OK)
        rc = offline_topics(&o, opts->vehicles);
    int ids[64];
    for (int k = 0; k < opts->vehicles && k < 64; k++)
        ids[k] = k + 1;
    /* The engine's generated ids are per second and process; offline runs come faster. */
    char gen_id[64];
    int64_t now = rl_time_now_ns();
    char stamp[32] = "";
    (void)rl_time_format_compact(now, stamp, sizeof stamp);
    snprintf(gen_id, sizeof gen_id, "sim-%s-%09lld-%d", stamp, (long long)(now % 1000000000ll),
             (int)getpid());
    rl_record_run run = {.run_id = opts->run_id ? opts->run_id : gen_id, .vehicles = ids,
                         .vehicle_count = (size_t)opts->vehicles, .planner = "runlab sim",
                         /* The engine compiles an original into map/runtime_map.bin (the
                            same bytes the vehicles drove on: default read options) and
                            keeps it beside, with both hashes in the manifest. */
                         .map_path = opts->map_path};
    if (rc == RL_OK)
        rc = rl_recorder_prepare(o.rec, &run);
    if (rc == RL_OK)
        rc = rl_recorder_begin(o.rec);
    if (rc == RL_OK)
        rc = offline_drive(&o, &s, opts, duration);
    if (rc == RL_OK) {
        rc = rl_recorder_finish(o.rec, NULL);
        if (rc == RL_OK)
            rc = rl_recorder_wait(o.rec);
    } else if (o.rec) {
        char msg[512];
        lab_copy(msg, sizeof msg, rl_error_last());
        (void)rl_recorder_cancel(o.rec, msg);
        rl_error_set(rc, "%s", msg);
    }
    if (o.rec)
        lab_copy(run_dir, cap, rl_recorder_run_dir(o.rec));
    if (rc < 0) {
        char msg[512];
        lab_copy(msg, sizeof msg, rl_error_last());
        rl_recorder_free(o.rec);
        rl_error_set(rc, "sim: %s", msg);
    } else {
        rl_recorder_free(o.rec);
    }
    free(o.state_ids);
    free(o.obs_ids);
    free(o.cmd_ids);
    lab_sim_free(&s);
    return rc;
}
