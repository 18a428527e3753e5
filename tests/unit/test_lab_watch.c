/* The control flow's vehicle watchdog (src/lab/lab_watch.c): the silence rule, and over DDS
 * on loopback a reliable and a best-effort state writer both heard, the silent vehicle lost
 * and named once, the one still publishing not. The check takes "now" as an argument, so
 * the outcome is decided by the order of events the test waits for, never by speed. */
#include "rl_test.h"

#include "lab/lab_internal.h"
#include "runlab/error.h"
#include "runlab/lab.h"
#include "runlab/time.h"

#include "runlab_msgs.h"

#include <time.h>

static void test_silence_rule(void **state)
{
    (void)state;
    const int64_t s = 1000000000ll;
    /* Measured from the later of the last state and the arming. */
    assert_false(rl_lab_vehicle_silent(0, 10 * s, 11 * s, s));      /* exactly the timeout */
    assert_true(rl_lab_vehicle_silent(0, 10 * s, 11 * s + 1, s));
    assert_false(rl_lab_vehicle_silent(12 * s, 10 * s, 13 * s, s));
    assert_true(rl_lab_vehicle_silent(12 * s, 10 * s, 13 * s + 1, s));
    /* A state from before the arming does not shorten the grace after it. */
    assert_false(rl_lab_vehicle_silent(5 * s, 10 * s, 10 * s + s / 2, s));
}

static dds_entity_t state_writer(dds_entity_t pp, int id, int best_effort)
{
    char name[64];
    rl_lab_vehicle_topic(id, "state", name, sizeof name);
    dds_entity_t t = dds_create_topic(pp, &runlab_msgs_msg_dds__VehicleState__desc, name, NULL, NULL);
    assert_true(t > 0);
    dds_qos_t *q = dds_create_qos();
    if (best_effort)
        dds_qset_reliability(q, DDS_RELIABILITY_BEST_EFFORT, 0);
    else
        dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
    dds_entity_t w = dds_create_writer(pp, t, q, NULL);
    dds_delete_qos(q);
    assert_true(w > 0);
    return w;
}

static void publish(dds_entity_t w, int id)
{
    runlab_msgs_msg_dds__VehicleState_ m = {.vehicle_id = (uint8_t)id};
    m.header.create_stamp = (uint64_t)rl_time_now_ns();
    assert_true(dds_write(w, &m) >= 0);
}

/* Writes until the watch has counted more than `after` states of `id` (60 s at most). */
static void publish_until_heard(rl_lab_vehicle_watch *watch, dds_entity_t w, int id, uint64_t after)
{
    int64_t deadline = rl_mono_ns() + 60000000000ll;
    while (rl_lab_vehicle_watch_states(watch, id) <= after) {
        assert_true(rl_mono_ns() < deadline);
        publish(w, id);
        struct timespec nap = {0, 20000000};
        nanosleep(&nap, NULL);
    }
}

static void test_watch_over_dds(void **state)
{
    (void)state;
    int domain = rl_test_domain();
    const int ids[] = {1, 2};
    rl_lab_vehicle_watch *watch = NULL;
    assert_int_equal(rl_lab_vehicle_watch_new(&watch, domain, ids, 2), RL_OK);
    dds_entity_t pp = dds_create_participant((dds_domainid_t)domain, NULL, NULL);
    assert_true(pp > 0);
    dds_entity_t reliable = state_writer(pp, 1, 0), best_effort = state_writer(pp, 2, 1);
    /* Both kinds of writer are heard (the watch's readers are best effort). */
    publish_until_heard(watch, reliable, 1, 0);
    publish_until_heard(watch, best_effort, 2, 0);
    rl_lab_vehicle_loss lost[4];
    /* Not armed: nobody is lost, however long the silence. */
    assert_int_equal(rl_lab_vehicle_watch_check(watch, rl_mono_ns() + 1000000000000ll, 1, lost, 4), 0);

    /* Vehicle 2 falls silent before arming: its writer goes, and a state of vehicle 1
     * written afterwards is heard (same sender, same path: nothing of 2 is still on its way). */
    dds_delete(best_effort);
    publish_until_heard(watch, reliable, 1, rl_lab_vehicle_watch_states(watch, 1));
    int64_t armed = rl_mono_ns();
    rl_lab_vehicle_watch_arm(watch, armed);
    publish_until_heard(watch, reliable, 1, rl_lab_vehicle_watch_states(watch, 1));
    int64_t now = rl_mono_ns();
    /* A timeout just under the time since arming: 2 (silent since) is lost, 1 is not. */
    size_t n = rl_lab_vehicle_watch_check(watch, now, now - armed - 1, lost, 4);
    assert_int_equal(n, 1);
    assert_int_equal(lost[0].vehicle, 2);
    assert_int_equal(lost[0].last_state_mono_ns, 0); /* none since armed */
    assert_int_equal(lost[0].silent_ns, now - armed);
    /* Reported once only. */
    assert_int_equal(rl_lab_vehicle_watch_check(watch, now, now - armed - 1, lost, 4), 0);
    /* Much later, vehicle 1 is lost too, with its last state after the arming. */
    n = rl_lab_vehicle_watch_check(watch, now + 3600000000000ll, 1000000000ll, lost, 4);
    assert_int_equal(n, 1);
    assert_int_equal(lost[0].vehicle, 1);
    assert_true(lost[0].last_state_mono_ns > armed);
    assert_int_equal(rl_lab_vehicle_watch_states(watch, 7), 0); /* not watched */
    dds_delete(pp);
    rl_lab_vehicle_watch_free(watch);
}

static void test_watch_bad_ids(void **state)
{
    (void)state;
    rl_lab_vehicle_watch *watch = NULL;
    const int bad[] = {1, 300};
    assert_int_equal(rl_lab_vehicle_watch_new(&watch, rl_test_domain(), bad, 2), RL_EINVAL);
    assert_null(watch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_silence_rule),
        cmocka_unit_test(test_watch_over_dds),
        cmocka_unit_test(test_watch_bad_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
