/* Tests of the recorder node's rules for how a run ends, on loopback (a DDS domain of the
 * test's own): finish without a reason and without STOP is COMPLETE with STOP at finish and
 * says so, without START it is INTERRUPTED; a reason starting "FAILED: " ends it FAILED,
 * any other INTERRUPTED; a control flow whose heartbeat falls silent, or
 * whose control pipe closes, loses its run (INTERRUPTED "control flow lost", bag closed,
 * node serving on); a control flow that never beat, or beats for another run, is never
 * timed out. Waits are generous and end on the awaited state, never on speed. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/json.h"
#include "runlab/lab.h"
#include "runlab/mcap.h"
#include "runlab/time.h"

#include <json-c/json.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Limits for waits: far above what a busy 2-core machine needs. */
#define LONG_NS (60 * 1000000000ll)
#define MS 1000000ll

static void use_loopback(void)
{
    if (getenv("CYCLONEDDS_URI"))
        return;
    const char *src = getenv("RUNLAB_SOURCE");
    char uri[4096];
    snprintf(uri, sizeof uri, "file://%s/tests/cyclonedds-loopback.xml", src ? src : ".");
    setenv("CYCLONEDDS_URI", uri, 1);
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ll), (long)(ns % 1000000000ll)};
    nanosleep(&ts, NULL);
}

typedef struct setup {
    int domain;
    char *home;
    rl_lab_recorder *node;
    rl_lab_client *cl;
} setup;

static void open_setup(setup *t, int64_t control_timeout_ns, int control_fd)
{
    use_loopback();
    t->domain = rl_test_domain();
    t->home = rl_test_tmpdir();
    rl_lab_recorder_options o;
    rl_lab_recorder_options_default(&o);
    o.domain = t->domain;
    o.home = t->home;
    o.control_timeout_ns = control_timeout_ns;
    o.control_fd = control_fd;
    t->node = NULL;
    if (rl_lab_recorder_new(&t->node, &o) < 0)
        fail_msg("recorder node: %s", rl_error_last());
    t->cl = NULL;
    assert_int_equal(rl_lab_client_new(&t->cl, t->domain), RL_OK);
}

static void close_setup(setup *t)
{
    rl_lab_client_free(t->cl);
    rl_lab_recorder_free(t->node);
    rl_test_tmpdir_free(t->home);
}

/* prepare + begin of run `run_id` through `cl`; the run directory into `dir`. */
static void prepare_begin(rl_lab_client *cl, const char *run_id, char *dir, size_t cap)
{
    rl_record_run run = {.run_id = run_id};
    rl_lab_reply r;
    assert_int_equal(rl_lab_client_prepare(cl, &run, LONG_NS, &r), RL_OK);
    if (!r.ok)
        fail_msg("prepare refused: %s", r.message);
    snprintf(dir, cap, "%s", r.run_dir);
    assert_int_equal(rl_lab_client_begin(cl, run_id, LONG_NS, &r), RL_OK);
    if (!r.ok)
        fail_msg("begin refused: %s", r.message);
    assert_int_equal(r.state, RL_RECORD_RECORDING);
}

/* The START stamp in the run's manifest (0 while null). */
static int64_t manifest_start(const char *run_dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", run_dir);
    json_object *m = NULL, *stamps = NULL;
    if (rl_json_read_file(path, 1 << 20, &m) < 0)
        fail_msg("%s", rl_error_last());
    const char *start = NULL;
    int64_t ns = 0;
    if (rl_json_get_object(m, "stamps", &stamps) == RL_OK &&
        rl_json_get_string(stamps, "start", &start) == RL_OK && start)
        assert_int_equal(rl_time_parse_iso(start, &ns), RL_OK);
    json_object_put(m);
    return ns;
}

/* Publishes START and waits until the node has marked it (the manifest says so). */
static void start_and_wait(setup *t, const char *run_dir)
{
    int64_t stamp = rl_time_now_ns();
    assert_int_equal(rl_lab_client_trigger(t->cl, RL_LAB_START, stamp), RL_OK);
    int64_t deadline = rl_mono_ns() + LONG_NS;
    while (manifest_start(run_dir) == 0 && rl_mono_ns() < deadline)
        sleep_ns(20 * MS);
    assert_true(manifest_start(run_dir) == stamp);
}

/* Waits until the node's run is in a terminal state and returns it. */
static rl_record_state wait_run_ended(rl_lab_recorder *node)
{
    char dir[4096];
    int64_t deadline = rl_mono_ns() + LONG_NS;
    rl_record_state s;
    while ((s = rl_lab_recorder_run(node, dir, sizeof dir)) < RL_RECORD_COMPLETE &&
           rl_mono_ns() < deadline)
        sleep_ns(20 * MS);
    return s;
}

/* The manifest's result state and reason, and its STOP stamp (0 when null). */
typedef struct result {
    char state[32], reason[512];
    int64_t stop_ns;
} result;

/* The manifest is rewritten just after the state changes (the engine sets the state, then
 * writes the manifest), so a reader that saw the state waits for the result to be there. */
static result read_result(const char *run_dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", run_dir);
    json_object *m = NULL, *res = NULL;
    int64_t deadline = rl_mono_ns() + LONG_NS;
    for (;;) {
        if (rl_json_read_file(path, 1 << 20, &m) < 0)
            fail_msg("%s", rl_error_last());
        if (rl_json_get_object(m, "result", &res) == RL_OK && res)
            break;
        json_object_put(m);
        if (rl_mono_ns() > deadline)
            fail_msg("%s: no result", path);
        sleep_ns(20 * MS);
    }
    result r = {0};
    json_object *stamps = NULL;
    const char *state = NULL, *reason = NULL, *stop = NULL;
    assert_int_equal(rl_json_get_string(res, "state", &state), RL_OK);
    assert_int_equal(rl_json_get_string(res, "reason", &reason), RL_OK);
    snprintf(r.state, sizeof r.state, "%s", state);
    snprintf(r.reason, sizeof r.reason, "%s", reason);
    assert_int_equal(rl_json_get_object(m, "stamps", &stamps), RL_OK);
    if (rl_json_get_string(stamps, "stop", &stop) == RL_OK && stop)
        assert_int_equal(rl_time_parse_iso(stop, &r.stop_ns), RL_OK);
    json_object_put(m);
    return r;
}

/* The bag reads to its end with a footer: it was closed, not abandoned. */
static void check_bag_closed(const char *run_dir, const char *run_id)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/bag/%s.mcap", run_dir, run_id);
    rl_mcap_reader *r = NULL;
    if (rl_mcap_reader_open(&r, path, NULL) < 0)
        fail_msg("bag: %s", rl_error_last());
    rl_mcap_record rec;
    int got, footer = 0;
    while ((got = rl_mcap_reader_next(r, &rec)) == 1)
        footer |= rec.opcode == RL_MCAP_OP_FOOTER;
    if (got < 0)
        fail_msg("bag: %s", rl_error_last());
    rl_mcap_reader_close(r);
    assert_true(footer);
}

/* finish without a reason: the run ran its course. With START and no STOP anywhere it is
 * COMPLETE, STOP is the time finish arrived, and the reason says so; with STOP's stamp in
 * the request it is exactly that; without START it is INTERRUPTED and says why. */
static void test_finish_without_stop(void **state)
{
    (void)state;
    setup t;
    open_setup(&t, 0, 0);
    char dir[4096];
    rl_lab_reply r;

    prepare_begin(t.cl, "no-stop", dir, sizeof dir);
    start_and_wait(&t, dir);
    int64_t asked = rl_time_now_ns();
    assert_int_equal(rl_lab_client_finish(t.cl, "no-stop", 0, NULL, LONG_NS, &r), RL_OK);
    int64_t answered = rl_time_now_ns();
    assert_true(r.ok);
    assert_int_equal(r.state, RL_RECORD_COMPLETE);
    result res = read_result(dir);
    assert_string_equal(res.state, "COMPLETE");
    if (!strstr(res.reason, "no STOP was published, so STOP is when finish arrived"))
        fail_msg("reason does not say STOP was implied: %s", res.reason);
    assert_true(res.stop_ns >= asked && res.stop_ns <= answered);

    prepare_begin(t.cl, "given-stop", dir, sizeof dir);
    start_and_wait(&t, dir);
    int64_t stop = rl_time_now_ns();
    assert_int_equal(rl_lab_client_finish(t.cl, "given-stop", stop, NULL, LONG_NS, &r), RL_OK);
    assert_int_equal(r.state, RL_RECORD_COMPLETE);
    res = read_result(dir);
    assert_string_equal(res.reason, "finished");
    assert_true(res.stop_ns == stop);

    prepare_begin(t.cl, "no-start", dir, sizeof dir);
    assert_int_equal(rl_lab_client_finish(t.cl, "no-start", 0, NULL, LONG_NS, &r), RL_OK);
    assert_true(r.ok);
    assert_int_equal(r.state, RL_RECORD_INTERRUPTED);
    res = read_result(dir);
    assert_string_equal(res.state, "INTERRUPTED");
    assert_string_equal(res.reason,
                        "finished without START: none was published on rt/lab/system_trigger");
    assert_true(res.stop_ns == 0);
    close_setup(&t);
}

/* The finish reason's own rule (docs/lab.md, "finish"): one that starts with exactly
 * "FAILED: " ends the run FAILED with the rest as the reason, word for word, the bag closed
 * with its footer; "" COMPLETE; any other text ("SIGINT", or a near miss of the prefix)
 * INTERRUPTED with the whole text. */
static void test_finish_reason_says_failed(void **state)
{
    (void)state;
    setup t;
    open_setup(&t, 0, 0);
    char dir[4096];
    rl_lab_reply r;
    const char *why = "vehicle 2 lost 5.13 s after START: no state for 1.50 s (last state 3.63 s "
                      "after START)";
    char failed[512];
    snprintf(failed, sizeof failed, "%s%s", RL_LAB_FINISH_FAILED_PREFIX, why);
    assert_string_equal(RL_LAB_FINISH_FAILED_PREFIX, "FAILED: ");

    prepare_begin(t.cl, "failed", dir, sizeof dir);
    start_and_wait(&t, dir);
    int64_t stop = rl_time_now_ns();
    assert_int_equal(rl_lab_client_finish(t.cl, "failed", stop, failed, LONG_NS, &r), RL_OK);
    if (!r.ok)
        fail_msg("finish refused: %s", r.message);
    assert_int_equal(r.state, RL_RECORD_FAILED);
    result res = read_result(dir);
    assert_string_equal(res.state, "FAILED");
    assert_string_equal(res.reason, why);
    check_bag_closed(dir, "failed");

    /* Before START too: the failure is the control flow's, not a missing START. */
    prepare_begin(t.cl, "failed-early", dir, sizeof dir);
    assert_int_equal(rl_lab_client_finish(t.cl, "failed-early", 0, "FAILED: x", LONG_NS, &r),
                     RL_OK);
    assert_int_equal(r.state, RL_RECORD_FAILED);
    res = read_result(dir);
    assert_string_equal(res.state, "FAILED");
    assert_string_equal(res.reason, "x");

    prepare_begin(t.cl, "done", dir, sizeof dir);
    start_and_wait(&t, dir);
    stop = rl_time_now_ns();
    assert_int_equal(rl_lab_client_finish(t.cl, "done", stop, "", LONG_NS, &r), RL_OK);
    assert_int_equal(r.state, RL_RECORD_COMPLETE);
    res = read_result(dir);
    assert_string_equal(res.state, "COMPLETE");

    static const char *const interrupted[] = {"SIGINT", "FAILED:x", "failed: x", "FAILED"};
    for (size_t i = 0; i < sizeof interrupted / sizeof *interrupted; i++) {
        char id[32];
        snprintf(id, sizeof id, "interrupted-%zu", i);
        prepare_begin(t.cl, id, dir, sizeof dir);
        start_and_wait(&t, dir);
        assert_int_equal(rl_lab_client_finish(t.cl, id, rl_time_now_ns(), interrupted[i], LONG_NS,
                                              &r),
                         RL_OK);
        assert_int_equal(r.state, RL_RECORD_INTERRUPTED);
        res = read_result(dir);
        assert_string_equal(res.state, "INTERRUPTED");
        assert_string_equal(res.reason, interrupted[i]);
    }
    close_setup(&t);
}

/* A control flow that drives a run and then goes (its client freed without finish, as a
 * killed process): the node ends the run INTERRUPTED "control flow lost", naming it, with
 * the bag closed, and serves the next run. While it beats, the run goes on past the
 * timeout. */
static void test_heartbeat_lost(void **state)
{
    (void)state;
    setup t;
    open_setup(&t, 1500 * MS, 0);
    char dir[4096];
    rl_lab_client *flow = NULL;
    assert_int_equal(rl_lab_client_new(&flow, t.domain), RL_OK);
    prepare_begin(flow, "lost-flow", dir, sizeof dir);
    assert_int_equal(rl_lab_client_drive(flow, "lost-flow", "test flow"), RL_OK);
    /* Twice the timeout with heartbeats: still recording. */
    sleep_ns(3000 * MS);
    char now_dir[4096];
    assert_int_equal(rl_lab_recorder_run(t.node, now_dir, sizeof now_dir), RL_RECORD_RECORDING);
    rl_lab_client_free(flow);
    assert_int_equal(wait_run_ended(t.node), RL_RECORD_INTERRUPTED);
    result res = read_result(dir);
    assert_string_equal(res.state, "INTERRUPTED");
    char want[128];
    snprintf(want, sizeof want, "control flow lost: no heartbeat from test flow (host ");
    if (strncmp(res.reason, want, strlen(want)) != 0)
        fail_msg("reason: %s", res.reason);
    snprintf(want, sizeof want, ", pid %d) for ", (int)getpid());
    if (!strstr(res.reason, want))
        fail_msg("reason does not name the pid: %s", res.reason);
    check_bag_closed(dir, "lost-flow");

    /* The node serves on: the next run, driven to its end, is COMPLETE. */
    prepare_begin(t.cl, "after-loss", dir, sizeof dir);
    assert_int_equal(rl_lab_client_drive(t.cl, "after-loss", NULL), RL_OK);
    start_and_wait(&t, dir);
    rl_lab_reply r;
    int64_t stop = rl_time_now_ns();
    assert_int_equal(rl_lab_client_finish(t.cl, "after-loss", stop, NULL, LONG_NS, &r), RL_OK);
    assert_int_equal(r.state, RL_RECORD_COMPLETE);
    assert_int_equal(rl_lab_client_drive(t.cl, NULL, NULL), RL_OK);
    close_setup(&t);
}

/* A control flow that never beats (an older client, a hand-written one) is never timed
 * out, nor is a run by heartbeats naming another run: after four timeouts the run is still
 * RECORDING and finishes COMPLETE. */
static void test_no_heartbeat_no_timeout(void **state)
{
    (void)state;
    setup t;
    open_setup(&t, 500 * MS, 0);
    char dir[4096];
    prepare_begin(t.cl, "quiet-flow", dir, sizeof dir);
    start_and_wait(&t, dir);
    rl_lab_client *other = NULL;
    assert_int_equal(rl_lab_client_new(&other, t.domain), RL_OK);
    assert_int_equal(rl_lab_client_drive(other, "someone-elses-run", "other flow"), RL_OK);
    sleep_ns(1000 * MS);
    rl_lab_client_free(other); /* its heartbeats stop too */
    sleep_ns(1000 * MS);
    char now_dir[4096];
    assert_int_equal(rl_lab_recorder_run(t.node, now_dir, sizeof now_dir), RL_RECORD_RECORDING);
    rl_lab_reply r;
    int64_t stop = rl_time_now_ns();
    assert_int_equal(rl_lab_client_finish(t.cl, "quiet-flow", stop, NULL, LONG_NS, &r), RL_OK);
    assert_int_equal(r.state, RL_RECORD_COMPLETE);
    close_setup(&t);
}

/* The control pipe: when its write end closes (the starting process ended), the run ends
 * INTERRUPTED "control flow lost" with its bag closed, and the node says so; it still
 * serves. Heartbeats are off here (timeout 0), so only the pipe can end the run. */
static void test_control_pipe_closed(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    setup t;
    open_setup(&t, 0, fds[0]);
    char dir[4096];
    prepare_begin(t.cl, "piped", dir, sizeof dir);
    start_and_wait(&t, dir);
    assert_int_equal(write(fds[1], "x", 1), 1); /* bytes are not an end */
    sleep_ns(300 * MS);
    assert_false(rl_lab_recorder_control_closed(t.node));
    char now_dir[4096];
    assert_int_equal(rl_lab_recorder_run(t.node, now_dir, sizeof now_dir), RL_RECORD_RECORDING);
    close(fds[1]);
    int64_t deadline = rl_mono_ns() + LONG_NS;
    while (!rl_lab_recorder_control_closed(t.node) && rl_mono_ns() < deadline)
        sleep_ns(20 * MS);
    assert_true(rl_lab_recorder_control_closed(t.node));
    /* control_closed comes after the run's end. */
    assert_int_equal(rl_lab_recorder_run(t.node, now_dir, sizeof now_dir), RL_RECORD_INTERRUPTED);
    result res = read_result(dir);
    assert_string_equal(res.state, "INTERRUPTED");
    assert_string_equal(res.reason, "control flow lost: the process that started the recorder "
                                    "has ended (its control pipe closed)");
    check_bag_closed(dir, "piped");
    prepare_begin(t.cl, "after-pipe", dir, sizeof dir);
    rl_lab_reply r;
    assert_int_equal(rl_lab_client_finish(t.cl, "after-pipe", 0, "test ends", LONG_NS, &r), RL_OK);
    assert_int_equal(r.state, RL_RECORD_INTERRUPTED);
    close_setup(&t);
    close(fds[0]);
}

/* The control timeout's bounds: 0 (never) or 0.5 s .. 1 h. */
static void test_control_timeout_checked(void **state)
{
    (void)state;
    use_loopback();
    rl_lab_recorder_options o;
    rl_lab_recorder_options_default(&o);
    assert_true(o.control_timeout_ns == 1500 * MS);
    assert_true(o.control_fd <= 0);
    o.domain = rl_test_domain();
    rl_lab_recorder *n = NULL;
    const int64_t bad[] = {-1, 1, 500 * MS - 1, 3600 * 1000 * MS + 1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o.control_timeout_ns = bad[i];
        assert_int_equal(rl_lab_recorder_new(&n, &o), RL_EINVAL);
        if (!strstr(rl_error_last(), "control flow timeout"))
            fail_msg("message does not name the option: %s", rl_error_last());
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_control_timeout_checked),
        cmocka_unit_test(test_finish_without_stop),
        cmocka_unit_test(test_finish_reason_says_failed),
        cmocka_unit_test(test_heartbeat_lost),
        cmocka_unit_test(test_no_heartbeat_no_timeout),
        cmocka_unit_test(test_control_pipe_closed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
