/* A synthetic recording for evaluation tests: a recorder-style run directory (manifest.json,
 * bag/run.mcap with omgidl schemas and CDR messages written through the public MCAP and
 * message-encoding API) whose every value the test knows. Vehicle k drives along y = k at a
 * speed the test chooses per 20 ms tick; states at 50 Hz, observations at 20 Hz, trajectory
 * commands at 10 Hz; START at a fixed stamp, STOP `duration` later. Header-only (static). */
#ifndef RL_TEST_EVAL_SYNTH_H
#define RL_TEST_EVAL_SYNTH_H

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/mcap.h"
#include "runlab/msgdef.h"
#include "runlab/time.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYNTH_START_NS 1767225600000000000ll /* 2026-01-01T00:00:00Z */
#define SYNTH_TICK_NS 20000000ll             /* states every 20 ms */

#define SYNTH_IDL_HEAD                                                                          \
    "module runlab_msgs { module msg { module dds_ {\n"                                        \
    "@final struct Header_ { uint64 create_stamp; uint64 valid_after_stamp; };\n"              \
    "@final struct Pose2D_ { double x; double y; double yaw; };\n"
#define SYNTH_IDL_TAIL "}; }; };\n"

/* The full state schema, and an older one without `speed`. */
static const char synth_state_idl[] = SYNTH_IDL_HEAD
    "@final struct VehicleState_ { runlab_msgs::msg::dds_::Header_ header; uint8 vehicle_id;\n"
    "  runlab_msgs::msg::dds_::Pose2D_ pose; double speed; double imu_acceleration_forward; };\n"
    SYNTH_IDL_TAIL;
static const char synth_state_idl_no_speed[] = SYNTH_IDL_HEAD
    "@final struct VehicleState_ { runlab_msgs::msg::dds_::Header_ header; uint8 vehicle_id;\n"
    "  runlab_msgs::msg::dds_::Pose2D_ pose; double imu_acceleration_forward; };\n" SYNTH_IDL_TAIL;
static const char synth_obs_idl[] = SYNTH_IDL_HEAD
    "@final struct VehicleObservation_ { runlab_msgs::msg::dds_::Header_ header; uint8 vehicle_id;\n"
    "  runlab_msgs::msg::dds_::Pose2D_ pose; };\n" SYNTH_IDL_TAIL;
static const char synth_cmd_idl[] = SYNTH_IDL_HEAD
    "@final struct TrajectoryPoint_ { uint64 t; double px; double py; double vx; double vy; };\n"
    "@final struct VehicleCommandTrajectory_ { runlab_msgs::msg::dds_::Header_ header;\n"
    "  uint8 vehicle_id; sequence<runlab_msgs::msg::dds_::TrajectoryPoint_> trajectory_points; };\n"
    SYNTH_IDL_TAIL;
static const char synth_trigger_idl[] =
    "module runlab_msgs { module msg { module dds_ {\n"
    "@final struct SystemTrigger_ { uint8 kind; uint64 stamp; };\n" SYNTH_IDL_TAIL;

typedef struct synth_opts {
    int vehicles;         /* ids 1..vehicles */
    int ticks;            /* START..STOP in 20 ms ticks */
    int lead_ticks;       /* states before START (and after STOP) */
    const char *state_idl;/* NULL: synth_state_idl */
    bool no_trigger, no_observation, commands;
    const char *state;    /* manifest state; NULL: COMPLETE */
    const char *map_json; /* the manifest's "map" value; NULL: null */
    bool unchunked;       /* messages written straight (a cut bag keeps what came before) */
    /* Speed of vehicle `id` at tick i (t = 0.02 i s since START); NULL: 1 m/s. */
    double (*speed)(int id, long tick);
    /* imu_acceleration_forward of vehicle `id` at tick i; NULL: 0. */
    double (*accel)(int id, long tick);
    /* > 0: experiment.json {"status": state, "planned_duration_s": this}, as `runlab
       experiment` writes it. */
    double planned_duration_s;
    long obs_delay_ticks; /* the observation's sighting this many ticks before it is sent */
} synth_opts;

typedef struct synth_writer {
    rl_mcap_writer *w;
    rl_msgdef *defs[5];
    uint32_t seq;
} synth_writer;

/* Schema (def) index: 0 trigger, 1 state, 2 observation, 3 command. */
static int synth_put(synth_writer *s, int def, int channel, int64_t log_ns, const char *json)
{
    uint8_t *buf;
    size_t len;
    int rc = rl_msg_encode_json_text(s->defs[def], json, strlen(json), RL_CDR_LE, &buf, &len);
    if (rc < 0)
        return rc;
    rl_mcap_message m = {(uint16_t)channel, s->seq++, (uint64_t)log_ns, (uint64_t)log_ns, {buf, len}};
    rc = rl_mcap_writer_add_message(s->w, &m);
    free(buf);
    return rc;
}

/* Channel ids: 1 trigger, then per vehicle k (from 0): 2+3k state, 3+3k observation,
   4+3k command. Schema ids: 1 trigger, 2 state, 3 observation, 4 command. */
static int synth_write(const char *dir, const synth_opts *o)
{
    char path[4096];
    int rc;
    snprintf(path, sizeof path, "%s/bag", dir);
    if ((rc = rl_fs_mkdirs(path)) < 0)
        return rc;
    /* Manifest. */
    char vehicles[256] = "";
    for (int k = 1; k <= o->vehicles; k++)
        snprintf(vehicles + strlen(vehicles), sizeof vehicles - strlen(vehicles), "%s%d",
                 k > 1 ? ", " : "", k);
    const char *state = o->state ? o->state : "COMPLETE";
    char manifest[2048], stamps[256] = "";
    if (o->planned_duration_s > 0) { /* START..STOP as the recorder stamps them */
        char t0[48], t1[48];
        rl_time_format_iso(SYNTH_START_NS, t0, sizeof t0);
        rl_time_format_iso(SYNTH_START_NS + o->ticks * SYNTH_TICK_NS, t1, sizeof t1);
        snprintf(stamps, sizeof stamps, " \"stamps\": {\"start\": \"%s\", \"stop\": \"%s\"},\n", t0, t1);
    }
    snprintf(manifest, sizeof manifest,
             "{\"format\": \"runlab.record.manifest\", \"format_version\": 1, \"run_id\": \"synth\",\n"
             " \"state\": \"%s\", \"result\": {\"state\": \"%s\", \"reason\": \"%s\"},\n%s"
             " \"vehicles\": [%s], \"planner\": \"synthetic\", \"map\": %s,\n"
             " \"bag\": {\"file\": \"bag/run.mcap\", \"format\": \"mcap\", \"compression\": \"zstd\", "
             "\"keep_outside\": true}}\n",
             state, state, strcmp(state, "COMPLETE") ? "writer: disk full" : "finished", stamps,
             vehicles,
             o->map_json ? o->map_json : "null");
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    if ((rc = rl_fs_write_atomic(path, manifest, strlen(manifest), 0644)) < 0)
        return rc;
    if (o->planned_duration_s > 0) {
        char note[256];
        snprintf(note, sizeof note, "{\"status\": \"%s\", \"reason\": \"\", \"planned_duration_s\": %.17g}\n",
                 state, o->planned_duration_s);
        snprintf(path, sizeof path, "%s/experiment.json", dir);
        if ((rc = rl_fs_write_atomic(path, note, strlen(note), 0644)) < 0)
            return rc;
    }
    /* Bag. */
    synth_writer s = {0};
    rl_mcap_writer_options wo;
    rl_mcap_writer_options_default(&wo);
    wo.profile = "ros2";
    if (o->unchunked)
        wo.use_chunks = 0;
    snprintf(path, sizeof path, "%s/bag/run.mcap", dir);
    if ((rc = rl_mcap_writer_open_path(&s.w, path, &wo)) < 0)
        return rc;
    const char *idl[4] = {synth_trigger_idl, o->state_idl ? o->state_idl : synth_state_idl,
                          synth_obs_idl, synth_cmd_idl};
    const char *names[4] = {"runlab_msgs::msg::dds_::SystemTrigger_",
                            "runlab_msgs::msg::dds_::VehicleState_",
                            "runlab_msgs::msg::dds_::VehicleObservation_",
                            "runlab_msgs::msg::dds_::VehicleCommandTrajectory_"};
    for (int i = 0; i < 4 && rc == RL_OK; i++) {
        rl_mcap_schema sc = {(uint16_t)(i + 1),
                             {(const uint8_t *)names[i], strlen(names[i])},
                             {(const uint8_t *)"omgidl", 6},
                             {(const uint8_t *)idl[i], strlen(idl[i])}};
        rc = rl_msgdef_parse(&s.defs[i], "omgidl", names[i], idl[i], strlen(idl[i]));
        if (rc == RL_OK)
            rc = rl_mcap_writer_add_schema(s.w, &sc);
    }
    char topic[64];
    for (int c = 1; c <= 1 + 3 * o->vehicles && rc == RL_OK; c++) {
        int k = (c - 2) / 3 + 1, kind = c == 1 ? 0 : (c - 2) % 3 + 1;
        static const char *const suffix[] = {"", "state", "observation", "command_trajectory"};
        if (kind == 0)
            snprintf(topic, sizeof topic, "rt/lab/system_trigger");
        else
            snprintf(topic, sizeof topic, "rt/vehicle/%d/%s", k, suffix[kind]);
        if ((kind == 2 && o->no_observation) || (kind == 3 && !o->commands))
            continue;
        rl_mcap_channel ch = {(uint16_t)c, (uint16_t)(kind + 1),
                              {(const uint8_t *)topic, strlen(topic)},
                              {(const uint8_t *)"cdr", 3}, {NULL, 0}, NULL, 0};
        rc = rl_mcap_writer_add_channel(s.w, &ch);
    }
    /* Messages, tick by tick; positions integrate the speed. */
    double x[64] = {0};
    char json[1024];
    long first = -o->lead_ticks, last = o->ticks + o->lead_ticks;
    for (long i = first; i <= last && rc == RL_OK; i++) {
        int64_t ns = SYNTH_START_NS + i * SYNTH_TICK_NS;
        if (!o->no_trigger && (i == 0 || i == o->ticks)) {
            snprintf(json, sizeof json, "{\"kind\": %d, \"stamp\": %lld}", i == 0 ? 1 : 2, (long long)ns);
            rc = synth_put(&s, 0, 1, ns, json);
        }
        for (int k = 1; k <= o->vehicles && rc == RL_OK; k++) {
            double v = o->speed ? o->speed(k, i) : 1.0;
            double a = o->accel ? o->accel(k, i) : 0.0;
            x[k] += v * 0.02;
            if (o->state_idl == synth_state_idl_no_speed)
                snprintf(json, sizeof json,
                         "{\"header\": {\"create_stamp\": %lld, \"valid_after_stamp\": %lld}, "
                         "\"vehicle_id\": %d, \"pose\": {\"x\": %.17g, \"y\": %d, \"yaw\": 0}, "
                         "\"imu_acceleration_forward\": 0}",
                         (long long)ns, (long long)ns, k, x[k], k);
            else
                snprintf(json, sizeof json,
                         "{\"header\": {\"create_stamp\": %lld, \"valid_after_stamp\": %lld}, "
                         "\"vehicle_id\": %d, \"pose\": {\"x\": %.17g, \"y\": %d, \"yaw\": 0}, "
                         "\"speed\": %.17g, \"imu_acceleration_forward\": %.17g}",
                         (long long)ns, (long long)ns, k, x[k], k, v, a);
            rc = synth_put(&s, 1, 2 + 3 * (k - 1), ns, json);
            /* Observations every 50 ms (ticks divisible by 5, twice per 5 ticks: 0 and 2.5
               are not both ticks, so every 2nd and 5th of each 5) keep 20 Hz on average. */
            if (rc == RL_OK && !o->no_observation && (i % 5 == 0 || (i % 5 + 5) % 5 == 3)) {
                int64_t seen = ns - o->obs_delay_ticks * SYNTH_TICK_NS;
                /* The sighting's position: where the vehicle was when seen (constant-speed
                   approximation is exact for the synthetic runs, whose delays happen at
                   constant speed). */
                double xs = x[k] - (double)o->obs_delay_ticks * v * 0.02;
                snprintf(json, sizeof json,
                         "{\"header\": {\"create_stamp\": %lld, \"valid_after_stamp\": %lld}, "
                         "\"vehicle_id\": %d, \"pose\": {\"x\": %.17g, \"y\": %d, \"yaw\": 0}}",
                         (long long)seen, (long long)ns, k, xs, k);
                rc = synth_put(&s, 2, 3 + 3 * (k - 1), ns, json);
            }
            if (rc == RL_OK && o->commands && (i % 5 + 5) % 5 == 0) {
                snprintf(json, sizeof json,
                         "{\"header\": {\"create_stamp\": %lld, \"valid_after_stamp\": %lld}, "
                         "\"vehicle_id\": %d, \"trajectory_points\": ["
                         "{\"t\": %lld, \"px\": %.17g, \"py\": %d, \"vx\": %.17g, \"vy\": 0},"
                         "{\"t\": %lld, \"px\": %.17g, \"py\": %d, \"vx\": %.17g, \"vy\": 0}]}",
                         (long long)ns, (long long)(ns + 100000000ll), k, (long long)ns, x[k], k, v,
                         (long long)(ns + 500000000ll), x[k] + 0.5 * v, k, v);
                rc = synth_put(&s, 3, 4 + 3 * (k - 1), ns, json);
            }
        }
    }
    if (rc == RL_OK)
        rc = rl_mcap_writer_close(s.w);
    else
        rl_mcap_writer_free(s.w);
    for (int i = 0; i < 4; i++)
        rl_msgdef_free(s.defs[i]);
    return rc;
}

#endif
