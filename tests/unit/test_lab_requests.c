/* Issue 30 item 5: the recorder node's duplicate-request detection. A request is the same
 * request only when both its client id and its sequence number are: two clients each start
 * at sequence 1, and the second must get its own answer, not the first one's stale reply;
 * one client's next request (a new sequence number) is new too. On loopback, a DDS domain
 * of the test's own; waits end on the awaited reply, with generous limits. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/lab.h"
#include "runlab/time.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_sequence_other_client),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
