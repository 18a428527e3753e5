/* The recorder's part of `runlab demo`: a short synthetic recording (two vehicles at
 * 200 Hz for about half a second, START and STOP inside it) into a run directory under the
 * demo's output directory, then the bag read back to show that every message is there. */
#include "cli.h"

#include "runlab/error.h"
#include "runlab/mcap.h"
#include "runlab/record.h"
#include "runlab/time.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static int count_bag(const char *path, uint64_t *n)
{
    rl_mcap_indexed *idx = NULL;
    rl_mcap_message_iter *it = NULL;
    int rc = rl_mcap_indexed_open(&idx, path, 0);
    if (rc == RL_OK)
        rc = rl_mcap_indexed_messages(idx, NULL, &it);
    *n = 0;
    rl_mcap_message m;
    int got = 0;
    while (rc == RL_OK && (got = rl_mcap_message_iter_next(it, &m, NULL)) == 1)
        (*n)++;
    if (rc == RL_OK && got < 0)
        rc = got;
    rl_mcap_message_iter_free(it);
    rl_mcap_indexed_close(idx);
    return rc;
}

int demo_record(const char *out_dir)
{
    printf("Recording (runlab record): 2 vehicles at 200 Hz for 0.5 s, START and STOP inside "
           "it, into a new run directory\n");
    rl_record_options o;
    rl_record_options_default(&o);
    o.home = out_dir;
    o.minimum_free_bytes = 16u << 20;
    /* A demonstration is no lab recording: its lock stays in its own directory, so that
     * it never keeps a real recorder of this host (or another demo) from its domain. */
    char locks[4096];
    snprintf(locks, sizeof locks, "%s/locks", out_dir);
    o.lock_dir = locks;
    rl_recorder *r = NULL;
    int rc = rl_recorder_new(&r, &o);
    uint16_t ids[2] = {0, 0};
    static const char schema[] = "float64 x\nfloat64 y\nfloat64 yaw\n";
    for (int v = 0; rc == RL_OK && v < 2; v++) {
        char topic[32];
        snprintf(topic, sizeof topic, "/vehicle/%d/pose", v + 1);
        rc = rl_recorder_add_topic(r, topic, "runlab_msgs/Pose2D", "ros2msg", schema,
                                   sizeof schema - 1, "cdr", &ids[v]);
    }
    int vehicles[2] = {1, 2};
    rl_record_run run = {.run_id = "demo", .vehicles = vehicles, .vehicle_count = 2,
                         .planner = "demo-planner"};
    if (rc == RL_OK)
        rc = rl_recorder_prepare(r, &run);
    if (rc == RL_EEXIST) { /* a demo already ran in this directory: a generated id */
        run.run_id = NULL;
        rc = rl_recorder_prepare(r, &run);
    }
    if (rc == RL_OK)
        rc = rl_recorder_begin(r);
    int64_t t0 = rl_time_now_ns();
    for (int i = 0; rc == RL_OK && i < 100; i++) {
        int64_t now = rl_time_now_ns();
        if (i == 20)
            rc = rl_recorder_mark_start(r, now);
        if (rc == RL_OK && i == 80)
            rc = rl_recorder_mark_stop(r, now);
        double pose[3] = {0.01 * i, 0.5, 0.0};
        for (int v = 0; rc == RL_OK && v < 2; v++)
            rc = rl_recorder_push(r, ids[v], now, now, pose, sizeof pose);
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    if (rc == RL_OK)
        rc = rl_recorder_finish(r, NULL);
    if (rc < 0) {
        printf("  FAIL  recording: %s\n", rl_error_last());
        rl_recorder_free(r);
        return -1;
    }
    rl_record_status s;
    rl_recorder_status(r, &s);
    uint64_t in_bag = 0;
    rc = count_bag(rl_recorder_bag_path(r), &in_bag);
    printf("  recorder: %s, %.2f s, %llu messages: %llu inside START..STOP, %llu outside, "
           "%llu dropped\n",
           rl_record_state_name(s.state), (double)(rl_time_now_ns() - t0) / 1e9,
           (unsigned long long)s.received, (unsigned long long)s.inside,
           (unsigned long long)s.outside, (unsigned long long)s.dropped);
    if (rc < 0)
        printf("  FAIL  reading the bag back: %s\n", rl_error_last());
    else
        printf("  %s  bag read back: %llu of %llu messages\n", in_bag == s.written ? "ok  " : "FAIL",
               (unsigned long long)in_bag, (unsigned long long)s.written);
    printf("  run directory: %s\n", rl_recorder_run_dir(r));
    int ok = rc == RL_OK && in_bag == s.written && s.state == RL_RECORD_COMPLETE;
    rl_recorder_free(r);
    return ok ? 0 : -1;
}
