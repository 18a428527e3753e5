/* Issue 30 item 5: the recorder node's duplicate-request detection. A request is the same
 * request only when both its client id and its sequence number are: two clients each start
 * at sequence 1, and the second must get its own answer, not the first one's stale reply;
 * one client's next request (a new sequence number) is new too. And the other direction:
 * the very same request sent again (a client repeating it after a lost reply), from a
 * requester written against Cyclone DDS alone, gets the first answer and is not carried
 * out twice. On loopback, a DDS domain of the test's own; waits end on the awaited reply,
 * with generous limits. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/lab.h"
#include "runlab/time.h"

#include "runlab_msgs.h"

#include <dds/dds.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LONG_NS (60 * 1000000000ll)

static void use_loopback(void)
{
    if (getenv("CYCLONEDDS_URI"))
        return;
    const char *src = getenv("RUNLAB_SOURCE");
    char uri[4096];
    snprintf(uri, sizeof uri, "file://%s/tests/cyclonedds-loopback.xml", src ? src : ".");
    setenv("CYCLONEDDS_URI", uri, 1);
}

static rl_lab_reply prepare(rl_lab_client *c, const char *run_id)
{
    rl_record_run run = {.run_id = run_id};
    rl_lab_reply r;
    if (rl_lab_client_prepare(c, &run, LONG_NS, &r) != RL_OK)
        fail_msg("prepare %s: %s", run_id, rl_error_last());
    return r;
}

static void test_same_sequence_other_client(void **state)
{
    (void)state;
    use_loopback();
    int domain = rl_test_domain();
    char *home = rl_test_tmpdir();
    rl_lab_recorder_options o;
    rl_lab_recorder_options_default(&o);
    o.domain = domain;
    o.home = home;
    rl_lab_recorder *node = NULL;
    if (rl_lab_recorder_new(&node, &o) < 0)
        fail_msg("recorder node: %s", rl_error_last());
    rl_lab_client *a = NULL, *b = NULL;
    assert_int_equal(rl_lab_client_new(&a, domain), RL_OK);
    assert_int_equal(rl_lab_client_new(&b, domain), RL_OK);

    /* A's first request (sequence 1): run dup-a is prepared. */
    rl_lab_reply r = prepare(a, "dup-a");
    if (!r.ok || strcmp(r.run_id, "dup-a") != 0 || r.state != RL_RECORD_ARMED)
        fail_msg("A's prepare: read ok %d run_id '%s' state %s (%s)", r.ok, r.run_id,
                 rl_record_state_name(r.state), r.message);
    /* B's first request, also sequence 1: handled, so refused (a run is ARMED), not A's
       stale "ok, dup-a". */
    r = prepare(b, "dup-b");
    if (r.ok || !strstr(r.message, "ARMED"))
        fail_msg("B's prepare (sequence 1 like A's): read ok %d run_id '%s' message '%s'; want "
                 "refused in state ARMED",
                 r.ok, r.run_id, r.message);
    /* B ends A's run, then prepares again (its sequence 4, the prepare service's last
       request was B's sequence 1): a new run, not B's stale refusal. */
    rl_lab_reply rb, rf;
    assert_int_equal(rl_lab_client_begin(b, "dup-a", LONG_NS, &rb), RL_OK);
    if (!rb.ok)
        fail_msg("B's begin of dup-a: %s", rb.message);
    assert_int_equal(rl_lab_client_finish(b, "dup-a", 0, "test over", LONG_NS, &rf), RL_OK);
    if (!rf.ok)
        fail_msg("B's finish of dup-a: %s", rf.message);
    r = prepare(b, "dup-c");
    if (!r.ok || strcmp(r.run_id, "dup-c") != 0 || r.state != RL_RECORD_ARMED)
        fail_msg("B's second prepare: read ok %d run_id '%s' state %s message '%s'; want ok, "
                 "dup-c, ARMED",
                 r.ok, r.run_id, rl_record_state_name(r.state), r.message);
    rl_lab_client_free(b);
    rl_lab_client_free(a);
    rl_lab_recorder_free(node);
    rl_test_tmpdir_free(home);
}

/* ---- a requester of its own, on Cyclone DDS alone ------------------------------------ */

typedef runlab_msgs_srv_dds__PrepareRecording_Request_ prep_request;
typedef runlab_msgs_srv_dds__PrepareRecording_Response_ prep_reply;

typedef struct requester {
    dds_entity_t pp, writer, reader;
} requester;

static void requester_open(requester *q, int domain)
{
    char rq[256], rr[256];
    assert_int_equal(rl_lab_ros_service(RL_LAB_SERVICE_PREPARE, rq, rr, sizeof rq), RL_OK);
    q->pp = dds_create_participant((dds_domainid_t)domain, NULL, NULL);
    assert_true(q->pp > 0);
    dds_entity_t tq = dds_create_topic(q->pp, &runlab_msgs_srv_dds__PrepareRecording_Request__desc,
                                       rq, NULL, NULL);
    dds_entity_t tr = dds_create_topic(q->pp, &runlab_msgs_srv_dds__PrepareRecording_Response__desc,
                                       rr, NULL, NULL);
    assert_true(tq > 0 && tr > 0);
    dds_qos_t *qos = dds_create_qos();
    dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
    dds_qset_history(qos, DDS_HISTORY_KEEP_ALL, 0);
    q->writer = dds_create_writer(q->pp, tq, qos, NULL);
    q->reader = dds_create_reader(q->pp, tr, qos, NULL);
    dds_delete_qos(qos);
    assert_true(q->writer > 0 && q->reader > 0);
    /* Both ends matched with the node's before the first request. */
    int64_t deadline = rl_mono_ns() + LONG_NS;
    dds_publication_matched_status_t pm = {0};
    dds_subscription_matched_status_t sm = {0};
    while (rl_mono_ns() < deadline) {
        dds_get_publication_matched_status(q->writer, &pm);
        dds_get_subscription_matched_status(q->reader, &sm);
        if (pm.current_count > 0 && sm.current_count > 0)
            break;
        dds_sleepfor(DDS_MSECS(20));
    }
    if (pm.current_count == 0 || sm.current_count == 0)
        fail_msg("requester: the node's service not matched (request %u, reply %u)",
                 pm.current_count, sm.current_count);
}

/* Sends prepare(run_id) as (client, seq) and waits for the reply to exactly that pair. */
static void request_prepare(requester *q, uint64_t client, int64_t seq, const char *run_id,
                            bool *ok, char *message, char *got_run, size_t cap)
{
    prep_request req = {.client_id = client, .sequence_number = seq, .run_id = (char *)run_id,
                        .planner = "", .map_path = "", .nodes_json = ""};
    assert_true(dds_write(q->writer, &req) >= 0);
    int64_t deadline = rl_mono_ns() + LONG_NS;
    while (rl_mono_ns() < deadline) {
        void *samples[1] = {0};
        dds_sample_info_t si;
        while (dds_take(q->reader, samples, &si, 1, 1) > 0) {
            const prep_reply *r = samples[0];
            bool mine = si.valid_data && r->client_id == client && r->sequence_number == seq;
            if (mine) {
                *ok = r->ok;
                snprintf(message, cap, "%s", r->message ? r->message : "");
                snprintf(got_run, cap, "%s", r->run_id ? r->run_id : "");
            }
            dds_return_loan(q->reader, samples, 1);
            if (mine)
                return;
        }
        dds_sleepfor(DDS_MSECS(10));
    }
    fail_msg("no reply to client %llu sequence %lld", (unsigned long long)client, (long long)seq);
}

static void test_repeated_request_answered_once(void **state)
{
    (void)state;
    use_loopback();
    int domain = rl_test_domain();
    char *home = rl_test_tmpdir();
    rl_lab_recorder_options o;
    rl_lab_recorder_options_default(&o);
    o.domain = domain;
    o.home = home;
    rl_lab_recorder *node = NULL;
    if (rl_lab_recorder_new(&node, &o) < 0)
        fail_msg("recorder node: %s", rl_error_last());
    requester q;
    requester_open(&q, domain);
    const uint64_t client = 0xC0FFEE;
    bool ok = false;
    char message[512], run[512], dir[4096];
    request_prepare(&q, client, 1, "rep-a", &ok, message, run, sizeof run);
    if (!ok || strcmp(run, "rep-a") != 0)
        fail_msg("first request: read ok %d run_id '%s' (%s)", ok, run, message);
    /* The same (client, sequence) again: the first answer, not a second prepare (which an
       ARMED node would refuse). What the request carries does not matter then. */
    request_prepare(&q, client, 1, "rep-b", &ok, message, run, sizeof run);
    if (!ok || strcmp(run, "rep-a") != 0)
        fail_msg("repeated request: read ok %d run_id '%s' message '%s'; want the first "
                 "answer (ok, rep-a)",
                 ok, run, message);
    rl_record_state st = rl_lab_recorder_run(node, dir, sizeof dir);
    if (st != RL_RECORD_ARMED || !strstr(dir, "rep-a") || strstr(dir, "rep-b"))
        fail_msg("after the repeat the node's run reads %s in '%s'; want ARMED rep-a",
                 rl_record_state_name(st), dir);
    /* The client's next sequence number is a new request: carried out, so refused. */
    request_prepare(&q, client, 2, "rep-c", &ok, message, run, sizeof run);
    if (ok || !strstr(message, "ARMED"))
        fail_msg("next request (sequence 2): read ok %d run_id '%s' message '%s'; want "
                 "refused in state ARMED",
                 ok, run, message);
    dds_delete(q.pp);
    rl_lab_recorder_free(node);
    rl_test_tmpdir_free(home);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_sequence_other_client),
        cmocka_unit_test(test_repeated_request_answered_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
