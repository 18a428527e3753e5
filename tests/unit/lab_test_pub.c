/* Test publisher for tests/unit/test_lab.c: a separate process with types the recorder was
 * not built with (tests/idl/lab_test.idl). Usage: lab_test_pub DOMAIN COUNT [PARTITION].
 * Waits until a reader matches each topic, writes COUNT samples of lab_test::FinalSample on
 * rt/test/final and of lab_test::AppendableSample on rt/test/appendable (content derived
 * from the sequence number, as test_lab.c expects), waits for the acknowledgements, exits 0
 * (LAB_TEST_PUB_FINAL_READERS=N: waits for N readers of rt/test/final instead of one).
 * `lab_test_pub --triggers DOMAIN SECONDS` instead prints each system trigger it receives
 * ("START <stamp>" / "STOP <stamp> <receive time>", ns) until STOP or SECONDS pass (for
 * tests/cli/test_lab.sh).
 * `lab_test_pub --best-effort DOMAIN SECONDS` writes lab_test::FinalSample with id 8 and seq
 * 0, 1, ... on rt/test/final from a best-effort, volatile writer (as ROS 2 sensor topics and
 * /clock are published), one every 5 ms once a reader matched, until SIGTERM or SECONDS
 * pass (for tests/unit/test_lab_qos.c).
 * `lab_test_pub --vehicle DOMAIN ID SECONDS [best-effort] [observation|observation-exclusive]` is a
 * vehicle written from Cyclone alone: READY (reliable, transient-local) on
 * rt/lab/ready_status, then runlab_msgs VehicleState on rt/vehicle/<ID>/state every 20 ms
 * (reliable, or best effort as ROS 2 sensor topics are) for SECONDS; prints READY once
 * written (for tests/cli/test_lab_flow.sh). With `observation` it also writes
 * VehicleObservation on rt/vehicle/<ID>/observation (reliable) with each state and prints
 * "OBSERVATION MATCHED" once a reader matched it (for tests/cli/test_lab_vehicles.sh);
 * `observation-exclusive` makes that writer's ownership exclusive, which no reader of
 * shared ownership (the recorder's) matches. `lab_test_pub --int8 DOMAIN` writes
 * lab_test::Int8Sample on rt/test/int8 with v = -128, -1, 0, 127 and pair = {v, -v - 1},
 * waits for the acknowledgements and exits 0 (for tests/unit/test_lab_ros.c). */
#include "lab_test.h"
#include "runlab_msgs.h"

#include <dds/dds.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static int wait_matched_n(dds_entity_t w, uint32_t readers)
{
    /* Generous: the machine may be busy; the test asserts counts, never speed. */
    for (int i = 0; i < 12000; i++) {
        dds_publication_matched_status_t st;
        if (dds_get_publication_matched_status(w, &st) == 0 && st.current_count >= readers)
            return 0;
        dds_sleepfor(DDS_MSECS(10));
    }
    return -1;
}

static int wait_matched(dds_entity_t w)
{
    return wait_matched_n(w, 1);
}

static int print_triggers(int domain, int seconds)
{
    dds_entity_t pp = dds_create_participant((dds_domainid_t)domain, NULL, NULL);
    if (pp < 0)
        return 1;
    dds_entity_t t = dds_create_topic(pp, &runlab_msgs_msg_dds__SystemTrigger__desc,
                                      "rt/lab/system_trigger", NULL, NULL);
    dds_qos_t *q = dds_create_qos();
    dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
    dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
    dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 1);
    dds_entity_t rd = dds_create_reader(pp, t, q, NULL);
    dds_delete_qos(q);
    printf("LISTENING\n");
    fflush(stdout);
    for (int i = 0; i < seconds * 100; i++) {
        void *samples[4] = {0};
        dds_sample_info_t si[4];
        dds_return_t n = dds_take(rd, samples, si, 4, 4);
        int stop = 0;
        for (int k = 0; k < n; k++) {
            const runlab_msgs_msg_dds__SystemTrigger_ *m = samples[k];
            if (!si[k].valid_data)
                continue;
            stop |= m->kind == 2;
            printf("%s %llu %lld\n", m->kind == 1 ? "START" : m->kind == 2 ? "STOP" : "OTHER",
                   (unsigned long long)m->stamp, (long long)dds_time());
            fflush(stdout);
        }
        if (n > 0)
            dds_return_loan(rd, samples, n);
        if (stop)
            break;
        dds_sleepfor(DDS_MSECS(10));
    }
    dds_delete(pp);
    return 0;
}

static volatile sig_atomic_t g_stop;

static void on_term(int sig)
{
    (void)sig;
    g_stop = 1;
}

static int publish_best_effort(int domain, int seconds)
{
    signal(SIGTERM, on_term);
    /* A test that failed before stopping us does not leave us running. */
    (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() == 1)
        return 1;
    dds_entity_t pp = dds_create_participant((dds_domainid_t)domain, NULL, NULL);
    if (pp < 0) {
        fprintf(stderr, "lab_test_pub: participant: %s\n", dds_strretcode(pp));
        return 1;
    }
    dds_qos_t *q = dds_create_qos();
    dds_qset_reliability(q, DDS_RELIABILITY_BEST_EFFORT, 0);
    dds_qset_durability(q, DDS_DURABILITY_VOLATILE);
    dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 1);
    dds_entity_t t = dds_create_topic(pp, &lab_test_FinalSample_desc, "rt/test/final", NULL, NULL);
    dds_entity_t w = dds_create_writer(pp, t, q, NULL);
    dds_delete_qos(q);
    if (w < 0) {
        fprintf(stderr, "lab_test_pub: writer: %s\n", dds_strretcode(w));
        return 1;
    }
    if (wait_matched(w) < 0) {
        fprintf(stderr, "lab_test_pub: no reader matched\n");
        return 1;
    }
    dds_time_t end = dds_time() + DDS_SECS(seconds);
    for (uint64_t i = 0; !g_stop && dds_time() < end; i++) {
        char label[32];
        float values[2] = {(float)i + 0.5f, (float)i * 2.0f};
        snprintf(label, sizeof label, "sample-%llu", (unsigned long long)i);
        lab_test_FinalSample f = {
            .id = 8,
            .seq = i,
            .label = label,
            .values = {._maximum = 2, ._length = (uint32_t)(i % 3), ._buffer = values},
            .pos = {.x = (double)i, .y = -(double)i, .z = 0.25},
            .mode = (lab_test_Mode)(i % 3),
        };
        if (dds_write(w, &f) < 0) {
            fprintf(stderr, "lab_test_pub: write failed\n");
            return 1;
        }
        dds_sleepfor(DDS_MSECS(5));
    }
    dds_delete(pp);
    return 0;
}

static int be_vehicle(int domain, int id, int seconds, int best_effort, int observation)
{
    dds_entity_t pp = dds_create_participant((dds_domainid_t)domain, NULL, NULL);
    if (pp < 0)
        return 1;
    dds_qos_t *q = dds_create_qos();
    dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
    dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
    dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
    dds_entity_t tr = dds_create_topic(pp, &runlab_msgs_msg_dds__ReadyStatus__desc,
                                       "rt/lab/ready_status", NULL, NULL);
    dds_entity_t wr = dds_create_writer(pp, tr, q, NULL);
    dds_delete_qos(q);
    char name[64];
    snprintf(name, sizeof name, "rt/vehicle/%d/state", id);
    q = dds_create_qos();
    if (best_effort)
        dds_qset_reliability(q, DDS_RELIABILITY_BEST_EFFORT, 0);
    else
        dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
    dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 8);
    dds_entity_t ts = dds_create_topic(pp, &runlab_msgs_msg_dds__VehicleState__desc, name, NULL, NULL);
    dds_entity_t ws = dds_create_writer(pp, ts, q, NULL);
    dds_delete_qos(q);
    dds_entity_t wo = 0;
    if (observation) {
        snprintf(name, sizeof name, "rt/vehicle/%d/observation", id);
        q = dds_create_qos();
        dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
        dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 8);
        if (observation == 3)
            dds_qset_ownership(q, DDS_OWNERSHIP_EXCLUSIVE);
        dds_entity_t to = dds_create_topic(pp, &runlab_msgs_msg_dds__VehicleObservation__desc,
                                           name, NULL, NULL);
        wo = to < 0 ? to : dds_create_writer(pp, to, q, NULL);
        dds_delete_qos(q);
    }
    if (wr < 0 || ws < 0 || wo < 0) {
        fprintf(stderr, "lab_test_pub: vehicle writers: %s\n",
                dds_strretcode(wr < 0 ? wr : ws < 0 ? ws : wo));
        return 1;
    }
    char source[32];
    snprintf(source, sizeof source, "test_vehicle_%d", id);
    runlab_msgs_msg_dds__ReadyStatus_ r = {.source_id = source, .vehicle_id = (uint8_t)id,
                                           .stamp = (uint64_t)dds_time()};
    if (dds_write(wr, &r) < 0)
        return 1;
    printf("READY\n");
    fflush(stdout);
    for (int i = 0; i < seconds * 50; i++) {
        runlab_msgs_msg_dds__VehicleState_ m = {.vehicle_id = (uint8_t)id, .speed = 0.5};
        m.header.create_stamp = m.header.valid_after_stamp = (uint64_t)dds_time();
        m.pose.x = 0.01 * i;
        (void)dds_write(ws, &m);
        if (wo) {
            runlab_msgs_msg_dds__VehicleObservation_ o = {.header = m.header,
                                                           .vehicle_id = (uint8_t)id,
                                                           .pose = m.pose};
            (void)dds_write(wo, &o);
            dds_publication_matched_status_t st;
            if (observation == 1 && dds_get_publication_matched_status(wo, &st) == 0 &&
                st.current_count > 0) {
                printf("OBSERVATION MATCHED\n");
                fflush(stdout);
                observation = 2;
            }
        }
        dds_sleepfor(DDS_MSECS(20));
    }
    dds_delete(pp);
    return 0;
}

static int publish_int8(int domain)
{
    dds_entity_t pp = dds_create_participant((dds_domainid_t)domain, NULL, NULL);
    if (pp < 0)
        return 1;
    dds_entity_t t = dds_create_topic(pp, &lab_test_Int8Sample_desc, "rt/test/int8", NULL, NULL);
    dds_qos_t *q = dds_create_qos();
    dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
    dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
    dds_entity_t w = t < 0 ? t : dds_create_writer(pp, t, q, NULL);
    dds_delete_qos(q);
    if (w < 0 || wait_matched(w) < 0) {
        fprintf(stderr, "lab_test_pub: int8 writer: %s\n", w < 0 ? dds_strretcode(w) : "no reader matched");
        return 1;
    }
    static const int8_t values[] = {-128, -1, 0, 127};
    for (size_t i = 0; i < sizeof values; i++) {
        lab_test_Int8Sample s = {.v = values[i], .pair = {values[i], (int8_t)(-values[i] - 1)}};
        if (dds_write(w, &s) < 0)
            return 1;
    }
    if (dds_wait_for_acks(w, DDS_SECS(120)) < 0) {
        fprintf(stderr, "lab_test_pub: samples not acknowledged\n");
        return 1;
    }
    dds_delete(pp);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--triggers") == 0)
        return print_triggers(atoi(argv[2]), atoi(argv[3]));
    if (argc == 3 && strcmp(argv[1], "--int8") == 0)
        return publish_int8(atoi(argv[2]));
    if (argc >= 5 && argc <= 7 && strcmp(argv[1], "--vehicle") == 0) {
        int best_effort = 0, observation = 0;
        for (int i = 5; i < argc; i++) {
            best_effort |= strcmp(argv[i], "best-effort") == 0;
            if (strcmp(argv[i], "observation") == 0)
                observation = 1;
            else if (strcmp(argv[i], "observation-exclusive") == 0)
                observation = 3; /* never says MATCHED (1 until it does, then 2) */
        }
        return be_vehicle(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), best_effort, observation);
    }
    if (argc == 4 && strcmp(argv[1], "--best-effort") == 0)
        return publish_best_effort(atoi(argv[2]), atoi(argv[3]));
    if (argc < 3) {
        fprintf(stderr, "usage: lab_test_pub DOMAIN COUNT [PARTITION]\n");
        return 2;
    }
    int domain = atoi(argv[1]), count = atoi(argv[2]);
    dds_entity_t pp = dds_create_participant((dds_domainid_t)domain, NULL, NULL);
    if (pp < 0) {
        fprintf(stderr, "lab_test_pub: participant: %s\n", dds_strretcode(pp));
        return 1;
    }
    dds_entity_t parent = pp;
    if (argc > 3) {
        dds_qos_t *pq = dds_create_qos();
        const char *parts[] = {argv[3]};
        dds_qset_partition(pq, 1, parts);
        parent = dds_create_publisher(pp, pq, NULL);
        dds_delete_qos(pq);
    }
    dds_qos_t *q = dds_create_qos();
    dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
    dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
    dds_entity_t tf = dds_create_topic(pp, &lab_test_FinalSample_desc, "rt/test/final", NULL, NULL);
    dds_entity_t ta = dds_create_topic(pp, &lab_test_AppendableSample_desc, "rt/test/appendable",
                                       NULL, NULL);
    dds_entity_t wf = dds_create_writer(parent, tf, q, NULL);
    dds_entity_t wa = dds_create_writer(parent, ta, q, NULL);
    dds_delete_qos(q);
    if (wf < 0 || wa < 0) {
        fprintf(stderr, "lab_test_pub: writers: %s\n", dds_strretcode(wf < 0 ? wf : wa));
        return 1;
    }
    /* LAB_TEST_PUB_FINAL_READERS: readers rt/test/final must have before the first write
       (a recorder with a reliable and a best-effort reader of it, test_lab_qos.c). */
    const char *want = getenv("LAB_TEST_PUB_FINAL_READERS");
    uint32_t final_readers = want && atoi(want) > 0 ? (uint32_t)atoi(want) : 1;
    if (wait_matched_n(wf, final_readers) < 0 || wait_matched(wa) < 0) {
        fprintf(stderr, "lab_test_pub: no reader matched\n");
        return 1;
    }
    for (int i = 0; i < count; i++) {
        char label[32];
        float values[2] = {(float)i + 0.5f, (float)i * 2.0f};
        snprintf(label, sizeof label, "sample-%d", i);
        lab_test_FinalSample f = {
            .id = 7,
            .seq = (uint64_t)i,
            .label = label,
            .values = {._maximum = 2, ._length = (uint32_t)(i % 3 == 0 ? 0 : i % 3), ._buffer = values},
            .pos = {.x = i, .y = -i, .z = 0.25},
            .mode = (lab_test_Mode)(i % 3),
        };
        char alabel[32];
        snprintf(alabel, sizeof alabel, "app-%d", i);
        lab_test_AppendableSample a = {.id = 9, .seq = (uint64_t)i, .label = alabel,
                                       .values = {i, i + 1, i + 2}};
        if (dds_write(wf, &f) < 0 || dds_write(wa, &a) < 0) {
            fprintf(stderr, "lab_test_pub: write failed\n");
            return 1;
        }
    }
    if (dds_wait_for_acks(wf, DDS_SECS(120)) < 0 || dds_wait_for_acks(wa, DDS_SECS(120)) < 0) {
        fprintf(stderr, "lab_test_pub: samples not acknowledged\n");
        return 1;
    }
    dds_delete(pp);
    return 0;
}
