/* The simulator's two outlets: on a DDS domain in real time (READY, obeys START and STOP,
 * states and observations at their rates), and offline, straight into a run directory
 * through the recorder engine, faster than real time and the same for the same seed. */
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

/* ---- on DDS ----------------------------------------------------------------------------- */

typedef struct sim_dds {
    dds_entity_t pp, ready, trigger;
    dds_entity_t *state, *obs; /* per vehicle */
} sim_dds;

static int sim_dds_open(sim_dds *d, int domain, int vehicles)
{
    int rc = lab_participant(domain, &d->pp);
    if (rc < 0)
        return rc;
    d->state = calloc((size_t)vehicles, sizeof *d->state);
    d->obs = calloc((size_t)vehicles, sizeof *d->obs);
    if (!d->state || !d->obs)
        return rl_error_set(RL_ENOMEM, "out of memory");
    dds_qos_t *q = lab_qos(0, 1);
    dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 8);
    for (int k = 0; k < vehicles; k++) {
        char name[64];
        rl_lab_vehicle_topic(k + 1, "state", name, sizeof name);
        dds_entity_t t = dds_create_topic(d->pp, &runlab_msgs_msg_dds__VehicleState__desc, name,
                                          NULL, NULL);
        d->state[k] = t < 0 ? t : dds_create_writer(d->pp, t, q, NULL);
        rl_lab_vehicle_topic(k + 1, "observation", name, sizeof name);
        t = dds_create_topic(d->pp, &runlab_msgs_msg_dds__VehicleObservation__desc, name, NULL,
                             NULL);
        d->obs[k] = t < 0 ? t : dds_create_writer(d->pp, t, q, NULL);
        if (d->state[k] < 0 || d->obs[k] < 0) {
            dds_delete_qos(q);
            return lab_dds_fail(d->state[k] < 0 ? d->state[k] : d->obs[k], "vehicle writers");
        }
    }
    dds_delete_qos(q);
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
    return RL_OK;
}

static void sim_dds_close(sim_dds *d)
{
    if (d->pp > 0)
        dds_delete(d->pp);
    free(d->state);
    free(d->obs);
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

int rl_lab_sim_run(const rl_lab_sim_options *opts, int (*should_stop)(void *user), void *user)
{
    lab_sim s;
    int rc = lab_sim_init(&s, opts);
    if (rc < 0)
        return rc;
    sim_dds d = {0};
    rc = sim_dds_open(&d, opts->domain, opts->vehicles);
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
    int64_t start = 0, stop = 0, stood_since = 0;
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
        lab_sim_step(&s, t, dt, driving);
        for (int k = 0; k < opts->vehicles; k++) {
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
        /* After STOP: brake, stand half a second, done. */
        if (stop) {
            int moving = 0;
            for (int k = 0; k < opts->vehicles; k++)
                moving |= s.veh[k].v > 0;
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
    uint16_t *state_ids, *obs_ids, trigger_id, ready_id;
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
    if (!o->state_ids || !o->obs_ids)
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
    runlab_msgs_msg_dds__SystemTrigger_ trig = {.kind = 1, .stamp = (uint64_t)OFFLINE_EPOCH_NS};
    if (rc == RL_OK)
        rc = push_sample(o, o->trigger_id, OFFLINE_EPOCH_NS, &trig,
                         &runlab_msgs_msg_dds__SystemTrigger__desc);
    if (rc == RL_OK)
        rc = rl_recorder_mark_start(o->rec, OFFLINE_EPOCH_NS);
    uint64_t ticks = (uint64_t)llround(duration * opts->state_rate_hz);
    for (uint64_t tick = 0; rc == RL_OK && tick <= ticks; tick++) {
        double t = (double)tick * dt;
        int64_t stamp = OFFLINE_EPOCH_NS + (int64_t)llround(t * 1e9);
        lab_sim_step(s, t, dt, 1);
        for (int k = 0; rc == RL_OK && k < opts->vehicles; k++) {
            if (!lab_sim_fault(s, k + 1, RL_LAB_FAULT_STALL_TOPIC, t)) {
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
        if ((tick & 1023) == 0)
            throttle(o->rec);
    }
    int64_t stop = OFFLINE_EPOCH_NS + (int64_t)llround(duration * 1e9);
    trig.kind = 2;
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
    lab_sim_free(&s);
    return rc;
}
