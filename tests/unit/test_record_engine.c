/* Tests of the recorder engine with an in-memory bag writer: every transition and
 * refusal, the START..STOP classification with late stamps, queue overflow, writer
 * errors and stalls, free space, the (host, domain) lock, run ids (hostile, reused,
 * raced for by processes), node snapshots, manifests and heartbeats (maps:
 * test_record_map.c). */
#include "rl_test.h"

#include "record_test_sink.h"
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/hash.h"
#include "runlab/record.h"
#include "runlab/time.h"

#include <dirent.h>
#include <json-c/json.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct fixture {
    char *home;
    mem_sink sink;
    rl_record_options opts;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->home = rl_test_tmpdir();
    mem_sink_init(&f->sink);
    rl_record_options_default(&f->opts);
    f->opts.home = f->home;
    f->opts.minimum_free_bytes = 0;
    f->opts.compression = RL_RECORD_COMPRESSION_NONE;
    f->opts.lab_domain = rl_test_domain(); /* the lock is host-wide: a domain of our own */
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    rl_test_tmpdir_free(f->home);
    mem_sink_destroy(&f->sink);
    free(f);
    return 0;
}

static rl_recorder *new_recorder(fixture *f)
{
    rl_recorder *r = NULL;
    int rc = rl_recorder_new(&r, &f->opts);
    if (rc != RL_OK)
        fail_msg("rl_recorder_new: %s", rl_error_last());
    assert_int_equal(rl_recorder_set_sink(r, &mem_sink_ops, &f->sink), RL_OK);
    return r;
}

static void prepare(rl_recorder *r, const char *id)
{
    rl_record_run run = {0};
    run.run_id = id;
    if (rl_recorder_prepare(r, &run) != RL_OK)
        fail_msg("prepare %s: %s", id ? id : "(generated)", rl_error_last());
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Polls until the recorder reaches `state` (5 s at most). */
static void wait_state(rl_recorder *r, rl_record_state state)
{
    for (int i = 0; i < 2500 && rl_recorder_state(r) != state; i++)
        sleep_ms(2);
    assert_string_equal(rl_record_state_name(rl_recorder_state(r)), rl_record_state_name(state));
}

static void wait_drained(rl_recorder *r)
{
    rl_record_status s;
    for (int i = 0; i < 2500; i++) {
        rl_recorder_status(r, &s);
        if (s.queued_messages == 0)
            return;
        sleep_ms(2);
    }
    fail_msg("queue not drained");
}

static json_object *read_manifest(const char *run_dir)
{
    char path[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/manifest.json", run_dir);
    json_object *m = json_object_from_file(path);
    if (!m)
        fail_msg("cannot read %s", path);
    return m;
}

static const char *jstr(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        fail_msg("manifest: %s missing or not a string", key);
    return json_object_get_string(v);
}

static int64_t jint(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
        fail_msg("manifest: %s missing or not an integer", key);
    return json_object_get_int64(v);
}

static json_object *jget(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v))
        fail_msg("manifest: %s missing", key);
    return v;
}

static int path_exists(const char *dir, const char *rel)
{
    char path[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    struct stat st;
    return stat(path, &st) == 0;
}

static int count_dirs(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static uint16_t topic(rl_recorder *r, const char *name)
{
    uint16_t id = 0;
    assert_int_equal(rl_recorder_add_topic(r, name, "std_msgs/String", "ros2msg", "string data", 11,
                                           "cdr", &id),
                     RL_OK);
    return id;
}

/* ---- transitions ------------------------------------------------------------------------- */

static void test_full_run_complete(void **state)
{
    fixture *f = *state;
    rl_recorder *r = new_recorder(f);
    assert_int_equal(rl_recorder_state(r), RL_RECORD_IDLE);
    uint16_t a = topic(r, "/vehicle/1/state");
    prepare(r, "exp-1");
    assert_int_equal(rl_recorder_state(r), RL_RECORD_ARMED);
    const char *dir = rl_recorder_run_dir(r);
    assert_non_null(strstr(dir, "/experiments/"));
    assert_non_null(strstr(dir, "Z_exp-1"));
    for (const char *sub = "bag\0map\0config\0evaluations\0config/recorder.json\0config/"
                           "nodes.json\0manifest.json\0";
         *sub; sub += strlen(sub) + 1)
        assert_true(path_exists(dir, sub));
    json_object *m = read_manifest(dir);
    assert_string_equal(jstr(m, "state"), "ARMED");
    assert_string_equal(jstr(m, "run_id"), "exp-1");
    assert_true(json_object_is_type(jget(m, "result"), json_type_null));
    json_object_put(m);

    assert_int_equal(rl_recorder_push(r, a, 10, 9, "x", 1), RL_OK); /* armed: before START */
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    assert_int_equal(rl_recorder_state(r), RL_RECORD_RECORDING);
    assert_int_equal(rl_recorder_mark_start(r, 100), RL_OK);
    for (int i = 0; i < 10; i++)
        assert_int_equal(rl_recorder_push(r, a, 100 + i, 99 + i, "yy", 2), RL_OK);
    assert_int_equal(rl_recorder_mark_stop(r, 105), RL_OK);
    assert_int_equal(rl_recorder_finish(r, NULL), RL_OK);
    assert_int_equal(rl_recorder_state(r), RL_RECORD_COMPLETE);
    assert_int_equal(f->sink.count, 11);
    assert_int_equal(f->sink.closed, 1);
    for (size_t i = 0; i < f->sink.count; i++)
        assert_int_equal(f->sink.msgs[i].sequence, i + 1);

    m = read_manifest(dir);
    assert_string_equal(jstr(m, "state"), "COMPLETE");
    assert_string_equal(jstr(jget(m, "result"), "state"), "COMPLETE");
    json_object *tot = jget(m, "totals");
    assert_int_equal(jint(tot, "received"), 11);
    assert_int_equal(jint(tot, "inside"), 6); /* 100..105 inclusive */
    assert_int_equal(jint(tot, "outside"), 5);
    assert_int_equal(jint(tot, "written"), 11);
    assert_int_equal(jint(tot, "dropped"), 0);
    assert_int_equal(jint(tot, "bytes"), 21);
    json_object *t0 = json_object_array_get_idx(jget(m, "topics"), 0);
    assert_string_equal(jstr(t0, "topic"), "/vehicle/1/state");
    json_object *st = jget(m, "stamps");
    assert_true(json_object_is_type(jget(st, "finish"), json_type_string));
    assert_string_equal(json_object_get_string(jget(st, "start")), "1970-01-01T00:00:00.000000100Z");
    json_object_put(m);
    rl_recorder_free(r);
}

static void test_refusals_change_nothing(void **state)
{
    fixture *f = *state;
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/a");
    /* IDLE */
    assert_int_equal(rl_recorder_begin(r), RL_ESTATE);
    assert_non_null(strstr(rl_error_last(), "IDLE"));
    assert_int_equal(rl_recorder_mark_start(r, 1), RL_ESTATE);
    assert_int_equal(rl_recorder_mark_stop(r, 1), RL_ESTATE);
    assert_int_equal(rl_recorder_finish(r, NULL), RL_ESTATE);
    assert_int_equal(rl_recorder_cancel(r, NULL), RL_ESTATE);
    assert_int_equal(rl_recorder_push(r, a, 1, 1, "x", 1), RL_ESTATE);
    assert_int_equal(rl_recorder_state(r), RL_RECORD_IDLE);
    assert_int_equal(count_dirs(f->home), 0); /* nothing: the lock is not under the home */
    /* ARMED */
    prepare(r, "refusals");
    rl_record_run run = {.run_id = "other"};
    assert_int_equal(rl_recorder_prepare(r, &run), RL_ESTATE);
    assert_int_equal(rl_recorder_mark_start(r, 1), RL_ESTATE);
    assert_int_equal(rl_recorder_finish(r, NULL), RL_ESTATE);
    assert_int_equal(rl_recorder_state(r), RL_RECORD_ARMED);
    /* RECORDING */
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    assert_int_equal(rl_recorder_begin(r), RL_ESTATE);
    assert_int_equal(rl_recorder_mark_stop(r, 5), RL_ESTATE); /* before START */
    assert_int_equal(rl_recorder_mark_start(r, -1), RL_EINVAL);
    assert_int_equal(rl_recorder_mark_start(r, 10), RL_OK);
    assert_int_equal(rl_recorder_mark_start(r, 11), RL_ESTATE);
    assert_int_equal(rl_recorder_mark_stop(r, 9), RL_EINVAL); /* before START's stamp */
    assert_int_equal(rl_recorder_push(r, 7, 1, 1, "x", 1), RL_EINVAL);
    assert_int_equal(rl_recorder_push(r, a, -1, 1, "x", 1), RL_EINVAL);
    assert_int_equal(rl_recorder_state(r), RL_RECORD_RECORDING);
    /* Finishing without STOP is INTERRUPTED. */
    assert_int_equal(rl_recorder_finish(r, NULL), RL_OK);
    assert_int_equal(rl_recorder_state(r), RL_RECORD_INTERRUPTED);
    rl_record_status s;
    rl_recorder_status(r, &s);
    assert_string_equal(s.reason, "finished without STOP");
    /* Terminal: everything refused. */
    assert_int_equal(rl_recorder_begin(r), RL_ESTATE);
    assert_int_equal(rl_recorder_finish(r, NULL), RL_ESTATE);
    assert_int_equal(rl_recorder_cancel(r, NULL), RL_ESTATE);
    assert_int_equal(rl_recorder_mark_stop(r, 20), RL_ESTATE);
    assert_int_equal(rl_recorder_push(r, a, 1, 1, "x", 1), RL_ESTATE);
    assert_int_equal(rl_recorder_prepare(r, &run), RL_ESTATE);
    assert_int_equal(rl_recorder_state(r), RL_RECORD_INTERRUPTED);
    json_object *m = read_manifest(rl_recorder_run_dir(r));
    assert_string_equal(jstr(m, "state"), "INTERRUPTED");
    assert_string_equal(jstr(jget(m, "result"), "reason"), "finished without STOP");
    json_object_put(m);
    rl_recorder_free(r);
}

static void test_cancel_armed_and_recording(void **state)
{
    fixture *f = *state;
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/a");
    prepare(r, "cancel-armed");
    assert_int_equal(rl_recorder_push(r, a, 1, 1, "x", 1), RL_OK);
    assert_int_equal(rl_recorder_cancel(r, "operator aborted"), RL_OK);
    assert_int_equal(rl_recorder_state(r), RL_RECORD_INTERRUPTED);
    assert_int_equal(f->sink.count, 1); /* queued messages are still written */
    rl_record_status s;
    rl_recorder_status(r, &s);
    assert_string_equal(s.reason, "operator aborted");
    rl_recorder_free(r);

    mem_sink_destroy(&f->sink);
    mem_sink_init(&f->sink);
    r = new_recorder(f);
    a = topic(r, "/a");
    prepare(r, "cancel-recording");
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    assert_int_equal(rl_recorder_mark_start(r, 1), RL_OK);
    assert_int_equal(rl_recorder_mark_stop(r, 2), RL_OK);
    /* A cancel after STOP is still INTERRUPTED: the operator said so. */
    assert_int_equal(rl_recorder_cancel(r, "SIGINT"), RL_OK);
    assert_int_equal(rl_recorder_state(r), RL_RECORD_INTERRUPTED);
    rl_recorder_free(r);

    /* Freeing a recording recorder cancels it and leaves an INTERRUPTED manifest. */
    r = new_recorder(f);
    prepare(r, "freed-while-recording");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", rl_recorder_run_dir(r));
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    rl_recorder_free(r);
    json_object *m = read_manifest(dir);
    assert_string_equal(jstr(m, "state"), "INTERRUPTED");
    json_object_put(m);
}

/* A failure the caller saw (a vehicle lost mid-run): FAILED with the caller's reason word
 * for word, yet nothing lost: messages still held by the write delay are written, the bag
 * is closed, the counts are final (a push after it is refused and not counted), and a
 * second end of the run is refused without changing the manifest. From ARMED too. */
static void test_fail_on_request(void **state)
{
    fixture *f = *state;
    f->opts.write_delay_ns = 10ll * 1000000000; /* every message still held when fail comes */
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/vehicle/2/state");
    prepare(r, "fail-recording");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", rl_recorder_run_dir(r));
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    assert_int_equal(rl_recorder_mark_start(r, 100), RL_OK);
    for (int i = 0; i < 5; i++)
        assert_int_equal(rl_recorder_push(r, a, 100 + i, 99 + i, "yy", 2), RL_OK);
    const char *why = "vehicle 2 lost 5.13 s after START: no state for 1.50 s (last state "
                      "3.63 s after START)";
    /* Everything is read before the recorder is freed and asserted after: a failed check
       then never leaves a live recorder (its lock, its threads) behind. */
    int fail_rc = rl_recorder_fail(r, why);
    rl_record_state after = rl_recorder_state(r);
    size_t written = f->sink.count;
    int closed = f->sink.closed;
    rl_record_status s;
    rl_recorder_status(r, &s);
    char status_reason[512];
    snprintf(status_reason, sizeof status_reason, "%s", s.reason);
    int push_rc = rl_recorder_push(r, a, 200, 199, "z", 1);
    int ends_rc[3] = {rl_recorder_finish(r, NULL), rl_recorder_fail(r, "again"),
                      rl_recorder_cancel(r, "SIGINT")};
    rl_recorder_free(r);
    assert_int_equal(fail_rc, RL_OK);
    assert_int_equal(after, RL_RECORD_FAILED);
    assert_int_equal(written, 5);
    assert_int_equal(closed, 1);
    assert_string_equal(status_reason, why);
    assert_int_equal(push_rc, RL_ESTATE);
    for (int i = 0; i < 3; i++)
        assert_int_equal(ends_rc[i], RL_ESTATE);
    json_object *m = read_manifest(dir);
    assert_string_equal(jstr(m, "state"), "FAILED");
    assert_string_equal(jstr(jget(m, "result"), "state"), "FAILED");
    assert_string_equal(jstr(jget(m, "result"), "reason"), why);
    json_object *tot = jget(m, "totals");
    assert_int_equal(jint(tot, "received"), 5);
    assert_int_equal(jint(tot, "written"), 5);
    assert_int_equal(jint(tot, "inside"), 5);
    assert_int_equal(jint(tot, "dropped"), 0);
    json_object_put(m);

    mem_sink_destroy(&f->sink);
    mem_sink_init(&f->sink);
    r = new_recorder(f);
    prepare(r, "fail-armed");
    snprintf(dir, sizeof dir, "%s", rl_recorder_run_dir(r));
    fail_rc = rl_recorder_fail(r, NULL);
    after = rl_recorder_state(r);
    rl_recorder_free(r);
    assert_int_equal(fail_rc, RL_OK);
    assert_int_equal(after, RL_RECORD_FAILED);
    m = read_manifest(dir);
    assert_string_equal(jstr(m, "state"), "FAILED");
    assert_string_equal(jstr(jget(m, "result"), "reason"), "failed");
    json_object_put(m);

    /* Not before prepare. */
    r = new_recorder(f);
    fail_rc = rl_recorder_fail(r, "x");
    after = rl_recorder_state(r);
    rl_recorder_free(r);
    assert_int_equal(fail_rc, RL_ESTATE);
    assert_int_equal(after, RL_RECORD_IDLE);
}

/* ---- the START..STOP window ----------------------------------------------------------------- */

/* START and STOP arrive after every message, with stamps inside their range: the write
 * delay still classifies each message by its stamp. With payloads of 2 KiB the writer
 * writes every message ahead of the delay (it reaches the bag before the marks) and only
 * their classification waits; with 1-byte payloads they wait whole. */
static void late_start_and_stop_stamps(fixture *f, size_t len)
{
    f->opts.write_delay_ns = 10ll * 1000000000; /* nothing is decided before the marks */
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/a"), b = topic(r, "/b");
    prepare(r, "late-stamps");
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    static char payload[2048];
    memset(payload, 'm', sizeof payload);
    for (int i = 0; i < 100; i++)
        assert_int_equal(rl_recorder_push(r, i % 2 ? b : a, 1000 + i, 1000 + i, payload, len),
                         RL_OK);
    rl_record_status s;
    if (len >= 1024) { /* written ahead: in the bag long before the 10 s delay is over */
        int64_t until = rl_mono_ns() + 60ll * 1000000000;
        do {
            sleep_ms(1);
            rl_recorder_status(r, &s);
        } while (s.written < 100 && rl_mono_ns() < until);
        assert_int_equal(s.written, 100);
        assert_int_equal(s.inside + s.outside, 0); /* not yet classified */
    }
    assert_int_equal(rl_recorder_mark_start(r, 1050), RL_OK);
    assert_int_equal(rl_recorder_mark_stop(r, 1079), RL_OK);
    assert_int_equal(rl_recorder_finish(r, NULL), RL_OK);
    rl_recorder_status(r, &s);
    assert_int_equal(s.inside, 30);
    assert_int_equal(s.outside, 70);
    assert_int_equal(s.written, 100);
    rl_record_topic_stats ta, tb;
    assert_int_equal(rl_recorder_topic_stats(r, a, &ta), RL_OK);
    assert_int_equal(rl_recorder_topic_stats(r, b, &tb), RL_OK);
    assert_int_equal(ta.inside, 15);
    assert_int_equal(tb.inside, 15);
    assert_int_equal(tb.outside, 35);
    assert_int_equal(rl_recorder_topic_stats(r, 9, &ta), RL_ENOENT);
    rl_recorder_free(r);
    assert_int_equal(f->sink.count, 100);
    for (size_t i = 0; i < 100; i++) /* in queue order, whole */
        assert_int_equal(f->sink.msgs[i].log_time, 1000 + i);
}

static void test_late_start_and_stop_stamps(void **state)
{
    late_start_and_stop_stamps(*state, 1);
}

static void test_late_stamps_classify_messages_written_ahead(void **state)
{
    late_start_and_stop_stamps(*state, 2048);
}

static void test_outside_left_out_when_configured(void **state)
{
    fixture *f = *state;
    f->opts.write_delay_ns = 10ll * 1000000000;
    f->opts.keep_outside = 0;
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/a");
    prepare(r, "keep-inside");
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    for (int i = 0; i < 50; i++)
        assert_int_equal(rl_recorder_push(r, a, 2000 + i, 0, "m", 1), RL_OK);
    assert_int_equal(rl_recorder_mark_start(r, 2010), RL_OK);
    assert_int_equal(rl_recorder_mark_stop(r, 2019), RL_OK);
    assert_int_equal(rl_recorder_finish(r, NULL), RL_OK);
    rl_record_status s;
    rl_recorder_status(r, &s);
    assert_int_equal(s.inside, 10);
    assert_int_equal(s.outside, 40);
    assert_int_equal(s.written, 10);
    assert_int_equal(f->sink.count, 10);
    assert_int_equal(f->sink.msgs[0].log_time, 2010);
    rl_recorder_free(r);
}

/* Without a write delay a message is decided when written: a START that comes later
 * cannot pull it into the window. This is what the delay is for. */
static void test_start_after_write_delay_is_too_late(void **state)
{
    fixture *f = *state;
    f->opts.write_delay_ns = 0;
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/a");
    prepare(r, "no-delay");
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    for (int i = 0; i < 10; i++)
        assert_int_equal(rl_recorder_push(r, a, 500 + i, 0, "m", 1), RL_OK);
    wait_drained(r);
    assert_int_equal(rl_recorder_mark_start(r, 500), RL_OK);
    assert_int_equal(rl_recorder_push(r, a, 600, 0, "m", 1), RL_OK);
    assert_int_equal(rl_recorder_mark_stop(r, 700), RL_OK);
    assert_int_equal(rl_recorder_finish(r, NULL), RL_OK);
    rl_record_status s;
    rl_recorder_status(r, &s);
    assert_int_equal(s.outside, 10);
    assert_int_equal(s.inside, 1);
    rl_recorder_free(r);
}

/* ---- failures ------------------------------------------------------------------------------- */

static void test_overflow_fails_and_counts_drops(void **state)
{
    fixture *f = *state;
    f->opts.write_delay_ns = 10ll * 1000000000;
    f->opts.max_queued_messages = 10;
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/a"), b = topic(r, "/b");
    prepare(r, "overflow");
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    for (int i = 0; i < 10; i++)
        assert_int_equal(rl_recorder_push(r, a, 1 + i, 0, "m", 1), RL_OK);
    assert_int_equal(rl_recorder_push(r, b, 20, 0, "m", 1), RL_EBUSY);
    assert_int_equal(rl_recorder_state(r), RL_RECORD_FAILED);
    /* Until the run's finish, what still comes is counted: received and dropped. */
    for (int i = 0; i < 5; i++)
        assert_int_equal(rl_recorder_push(r, a, 21 + i, 0, "mm", 2), RL_ESTATE);
    rl_record_msg late[3] = {{.receive_ns = 30, .data = "x", .len = 1},
                             {.receive_ns = 31, .data = "y", .len = 1},
                             {.receive_ns = 32, .data = "z", .len = 1}};
    size_t queued = 9;
    assert_int_equal(rl_recorder_push_many(r, b, late, 3, &queued), RL_ESTATE);
    assert_int_equal(queued, 0);
    rl_record_topic_stats ta;
    assert_int_equal(rl_recorder_topic_stats(r, a, &ta), RL_OK);
    assert_int_equal(ta.received, 15);
    assert_int_equal(ta.dropped, 5);
    assert_int_equal(ta.bytes, 10 + 5 * 2);
    assert_int_equal(rl_recorder_finish(r, NULL), RL_ESTATE);
    assert_non_null(strstr(rl_error_last(), "queue overflow on /b"));
    /* After the finish nothing is counted any more. */
    assert_int_equal(rl_recorder_push(r, a, 40, 0, "m", 1), RL_ESTATE);
    assert_int_equal(rl_recorder_topic_stats(r, a, &ta), RL_OK);
    assert_int_equal(ta.received, 15);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", rl_recorder_run_dir(r));
    rl_recorder_free(r); /* waits for the writer, which writes what was queued */
    assert_int_equal(f->sink.count, 10);
    assert_int_equal(f->sink.closed, 1);
    json_object *m = read_manifest(dir);
    assert_string_equal(jstr(m, "state"), "FAILED");
    assert_non_null(strstr(jstr(jget(m, "result"), "reason"), "max_queued_messages"));
    json_object *topics = jget(m, "topics");
    assert_int_equal(jint(json_object_array_get_idx(topics, 0), "received"), 15);
    assert_int_equal(jint(json_object_array_get_idx(topics, 0), "dropped"), 5);
    assert_int_equal(jint(json_object_array_get_idx(topics, 0), "written"), 10);
    /* push_many stops at the first refusal, which alone is counted (as a push would). */
    assert_int_equal(jint(json_object_array_get_idx(topics, 1), "dropped"), 2);
    assert_int_equal(jint(json_object_array_get_idx(topics, 1), "received"), 2);
    assert_int_equal(jint(jget(m, "totals"), "received"), 17);
    assert_int_equal(jint(jget(m, "totals"), "written") + jint(jget(m, "totals"), "dropped"), 17);
    json_object_put(m);
}

/* A FAILED run's late counts reach the manifest after the finish without waiting for free
 * (the disk thread rewrites it), and the producer's descriptions (qos, unmatched) are in
 * every manifest, checked on the way in. */
static void test_failed_run_manifest_follows_finish(void **state)
{
    fixture *f = *state;
    f->opts.write_delay_ns = 10ll * 1000000000;
    f->opts.max_queued_messages = 2;
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/a");
    assert_int_equal(rl_recorder_set_topic_qos(r, a, "[1]"), RL_EINVAL);
    assert_int_equal(rl_recorder_set_topic_qos(r, a, "{\"reliability\""), RL_EINVAL);
    assert_int_equal(rl_recorder_set_topic_qos(r, 7, "{}"), RL_ENOENT);
    assert_int_equal(rl_recorder_set_topic_qos(r, a, "{\"reliability\":\"best_effort\"}"),
                     RL_OK);
    rl_record_unmatched um[2] = {{"/b*", "no writer discovered"}, {"/c", NULL}};
    assert_int_equal(rl_recorder_set_unmatched(r, um, 2), RL_EINVAL);
    assert_int_equal(rl_recorder_set_unmatched(r, um, 1), RL_OK);
    prepare(r, "late-counts");
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    for (int i = 0; i < 2; i++)
        assert_int_equal(rl_recorder_push(r, a, 1 + i, 0, "m", 1), RL_OK);
    assert_int_equal(rl_recorder_push(r, a, 3, 0, "m", 1), RL_EBUSY);
    for (int i = 0; i < 7; i++)
        assert_int_equal(rl_recorder_push(r, a, 4 + i, 0, "m", 1), RL_ESTATE);
    assert_int_equal(rl_recorder_cancel(r, "ends"), RL_ESTATE);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", rl_recorder_run_dir(r));
    int64_t deadline = rl_mono_ns() + 60 * 1000000000ll;
    int64_t received = 0;
    while (received != 10 && rl_mono_ns() < deadline) {
        json_object *m = read_manifest(dir);
        if (strcmp(jstr(m, "state"), "FAILED") == 0)
            received = jint(json_object_array_get_idx(jget(m, "topics"), 0), "received");
        json_object_put(m);
        if (received != 10)
            sleep_ms(5);
    }
    assert_int_equal(received, 10);
    json_object *m = read_manifest(dir);
    json_object *t0 = json_object_array_get_idx(jget(m, "topics"), 0);
    assert_int_equal(jint(t0, "dropped"), 8);
    assert_string_equal(jstr(jget(t0, "qos"), "reliability"), "best_effort");
    json_object *un = jget(m, "unmatched");
    assert_int_equal(json_object_array_length(un), 1);
    assert_string_equal(jstr(json_object_array_get_idx(un, 0), "name"), "/b*");
    assert_string_equal(jstr(json_object_array_get_idx(un, 0), "reason"), "no writer discovered");
    json_object_put(m);
    rl_recorder_free(r);
}

/* A batch is queued as the same pushes one by one would be: in order, small and large
 * payloads mixed; refused in IDLE with nothing queued; on overflow it stops at the message
 * that does not fit, which is dropped and counted as a single push would have done. */
static void test_push_many_is_pushes_in_order(void **state)
{
    fixture *f = *state;
    f->opts.write_delay_ns = 10ll * 1000000000;
    f->opts.max_queued_messages = 6;
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/a");
    static unsigned char big[70000]; /* beyond the engine's small-payload size (64 KiB) */
    big[0] = 'B';
    static const char letters[] = "abcdefgh";
    rl_record_msg batch[8];
    for (int i = 0; i < 8; i++)
        batch[i] = (rl_record_msg){.receive_ns = 100 + i, .publish_ns = 50 + i,
                                   .data = i == 2 ? (const void *)big : &letters[i],
                                   .len = i == 2 ? sizeof big : 1};
    size_t queued = 99;
    assert_int_equal(rl_recorder_push_many(r, a, batch, 8, &queued), RL_ESTATE); /* IDLE */
    assert_int_equal(queued, 0);
    rl_record_msg bad = {.receive_ns = -1, .data = "x", .len = 1};
    assert_int_equal(rl_recorder_push_many(r, 9, &bad, 1, &queued), RL_EINVAL);
    prepare(r, "batch");
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    assert_int_equal(rl_recorder_push_many(r, a, &bad, 1, &queued), RL_EINVAL);
    assert_int_equal(queued, 0);
    assert_int_equal(rl_recorder_push_many(r, a, batch, 0, &queued), RL_OK);
    assert_int_equal(rl_recorder_push_many(r, a, batch, 4, &queued), RL_OK);
    assert_int_equal(queued, 4);
    /* Room for two more of the next four. */
    assert_int_equal(rl_recorder_push_many(r, a, batch + 4, 4, &queued), RL_EBUSY);
    assert_int_equal(queued, 2);
    assert_int_equal(rl_recorder_state(r), RL_RECORD_FAILED);
    rl_record_status st;
    rl_recorder_status(r, &st);
    assert_int_equal(st.received, 7);
    assert_int_equal(st.dropped, 1);
    rl_recorder_free(r); /* the writer writes what was queued */
    assert_int_equal(f->sink.count, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(f->sink.msgs[i].log_time, 100 + i);
        assert_int_equal(f->sink.msgs[i].publish_time, 50 + i);
        assert_int_equal(f->sink.msgs[i].len, i == 2 ? sizeof big : 1);
        assert_int_equal(f->sink.msgs[i].first, i == 2 ? 'B' : letters[i]);
    }
}

/* A payload handed over without a copy (rl_record_msg.release): freed by its release, so
 * that ASan sees any use of the bytes after it. */
typedef struct handed_payload {
    unsigned char *bytes;
    int released;
} handed_payload;

static void release_handed(void *ctx)
{
    handed_payload *p = ctx;
    p->released++;
    free(p->bytes);
    p->bytes = NULL;
}

/* Handed-over payloads are written as they are and given back exactly once, after the
 * writer is done with them (also one beyond the small-payload size); one the recorder
 * refuses, or does not reach, stays the caller's: its release is never called. */
static void test_push_many_hands_over_without_copy(void **state)
{
    fixture *f = *state;
    f->opts.write_delay_ns = 10ll * 1000000000;
    f->opts.max_queued_messages = 6;
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/a");
    enum { N = 8 };
    handed_payload p[N];
    rl_record_msg batch[N];
    for (int i = 0; i < N; i++) {
        size_t len = i == 1 ? 70000 : 10 + (size_t)i;
        p[i] = (handed_payload){.bytes = malloc(len)};
        assert_non_null(p[i].bytes);
        memset(p[i].bytes, 'a' + i, len);
        batch[i] = (rl_record_msg){.receive_ns = 100 + i, .publish_ns = 50 + i,
                                   .data = p[i].bytes, .len = len,
                                   .release = release_handed, .release_ctx = &p[i]};
    }
    size_t queued = 99;
    assert_int_equal(rl_recorder_push_many(r, a, batch, N, &queued), RL_ESTATE); /* IDLE */
    assert_int_equal(queued, 0);
    prepare(r, "handed");
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    assert_int_equal(rl_recorder_push_many(r, a, batch, 4, &queued), RL_OK);
    assert_int_equal(queued, 4);
    /* Room for two more of the next four: the seventh is refused, the eighth not reached. */
    assert_int_equal(rl_recorder_push_many(r, a, batch + 4, 4, &queued), RL_EBUSY);
    assert_int_equal(queued, 2);
    rl_recorder_free(r); /* the writer writes what was queued, then gives it back */
    assert_int_equal(f->sink.count, 6);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(p[i].released, 1);
        assert_int_equal(f->sink.msgs[i].log_time, 100 + i);
        assert_int_equal(f->sink.msgs[i].len, i == 1 ? 70000 : 10 + (size_t)i);
        assert_int_equal(f->sink.msgs[i].first, 'a' + i);
    }
    for (int i = 6; i < N; i++) {
        assert_int_equal(p[i].released, 0);
        free(p[i].bytes);
    }
}

/* A writer pass over a batch that became due at once can take long (a slow disk, a slow
 * compressor). Meanwhile it gives the room of what it wrote back to the queue, so steady
 * producers are not refused, and takes what they push, so that it waits out its write
 * delay during the pass instead of after it. */
static void test_long_pass_gives_room_back_and_takes_new_messages(void **state)
{
    fixture *f = *state;
    enum { N = 1000 };
    f->opts.write_delay_ns = 20 * 1000000ll;
    f->opts.stall_limit_ns = 3600 * 1000000000ll; /* no stall verdict on a loaded machine */
    f->sink.write_sleep_us = 200;                 /* the pass takes 200 ms at least */
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/a");
    prepare(r, "long-pass");
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    assert_int_equal(rl_recorder_mark_start(r, 0), RL_OK);
    for (int i = 0; i < N; i++)
        assert_int_equal(rl_recorder_push(r, a, 1 + i, 0, "m", 1), RL_OK);
    rl_record_status s;
    int64_t until = rl_mono_ns() + 60ll * 1000000000; /* a broken writer fails, never hangs */
    do {
        sleep_ms(1);
        rl_recorder_status(r, &s);
    } while (s.written < N / 4 && rl_mono_ns() < until);
    assert_true(s.written >= N / 4);
    assert_true(s.written < N); /* still inside the pass */
    /* Room comes back during the pass (at most one settle interval behind the writes). */
    assert_true(s.queued_messages < N - N / 8);
    assert_true(s.queued_messages >= N - s.written);
    assert_int_equal(rl_recorder_push(r, a, 5000, 0, "late", 4), RL_OK);
    /* The late message leaves the queue long before the pass ends. */
    size_t queued;
    do {
        sleep_ms(1);
        pthread_mutex_lock(&r->mu);
        queued = r->qcount;
        pthread_mutex_unlock(&r->mu);
        rl_recorder_status(r, &s);
    } while (queued && s.written < N && rl_mono_ns() < until);
    assert_int_equal(queued, 0);
    assert_true(s.written < N);
    assert_int_equal(rl_recorder_mark_stop(r, 10000), RL_OK);
    assert_int_equal(rl_recorder_finish(r, NULL), RL_OK);
    rl_recorder_status(r, &s);
    assert_int_equal(s.written, N + 1);
    assert_int_equal(s.queued_messages, 0);
    assert_int_equal(s.dropped, 0);
    rl_recorder_free(r);
}

/* The same topic registered twice: the same id when the definition is the same (two
 * nodes may declare the topic they share), RL_EEXIST and nothing changed otherwise. */
static void test_topic_registered_twice(void **state)
{
    fixture *f = *state;
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/a"), again = 99, other = 99;
    uint16_t b = topic(r, "/b");
    assert_int_equal(rl_recorder_add_topic(r, "/a", "std_msgs/String", "ros2msg", "string data",
                                           11, "cdr", &again),
                     RL_OK);
    assert_int_equal(again, a);
    assert_int_equal(rl_recorder_add_topic(r, "/a", "std_msgs/String", "ros2msg", "string name",
                                           11, "cdr", &other),
                     RL_EEXIST);
    assert_non_null(strstr(rl_error_last(), "/a"));
    assert_int_equal(rl_recorder_add_topic(r, "/a", "std_msgs/String", "ros2msg", "string data",
                                           11, "json", &other),
                     RL_EEXIST);
    assert_int_equal(other, 99);
    uint16_t c = topic(r, "/c");
    assert_int_equal(c, b + 1); /* the refusals took no id */
    assert_int_equal(rl_recorder_add_topic(r, "", "", "", NULL, 0, "raw", &other), RL_EINVAL);
    assert_int_equal(rl_recorder_add_topic(r, "/d", "x", "y", NULL, 4, "raw", &other), RL_EINVAL);
    prepare(r, "topics-twice");
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    assert_int_equal(rl_recorder_push(r, again, 1, 0, "m", 1), RL_OK);
    assert_int_equal(rl_recorder_mark_start(r, 0), RL_OK);
    assert_int_equal(rl_recorder_mark_stop(r, 10), RL_OK);
    assert_int_equal(rl_recorder_finish(r, NULL), RL_OK);
    rl_record_topic_stats ts;
    assert_int_equal(rl_recorder_topic_stats(r, a, &ts), RL_OK);
    assert_int_equal(ts.written, 1);
    rl_recorder_free(r);
}

static void test_overflow_by_bytes(void **state)
{
    fixture *f = *state;
    f->opts.write_delay_ns = 10ll * 1000000000;
    f->opts.max_queued_bytes = 100;
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/a");
    prepare(r, "overflow-bytes");
    char buf[60] = {0};
    assert_int_equal(rl_recorder_push(r, a, 1, 0, buf, sizeof buf), RL_OK);
    assert_int_equal(rl_recorder_push(r, a, 2, 0, buf, sizeof buf), RL_EBUSY);
    assert_non_null(strstr(rl_error_last(), "max_queued_bytes"));
    assert_int_equal(rl_recorder_state(r), RL_RECORD_FAILED);
    rl_recorder_free(r);
    assert_int_equal(f->sink.count, 1);
}

/* A write error (disk full) fails the run; as written count only the messages that
 * reached the file: those of the chunk being filled when the error came never did, and
 * count as dropped, per topic (issue 11, item 2). */
static void test_writer_error_fails_run(void **state)
{
    fixture *f = *state;
    /* Messages are written only once decided (a long write delay): the test decides
     * when, so the batches are what it says, however slow the machine. */
    f->opts.write_delay_ns = 60ll * 1000000000;
    f->opts.flush_interval_ns = 5 * 1000000ll;
    f->opts.stall_limit_ns = 3600 * 1000000000ll;
    f->sink.fail_at = 8;
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/a"), b = topic(r, "/b");
    prepare(r, "disk-full");
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    /* Five messages before START: decided (outside) at START, written, and flushed. */
    for (int i = 0; i < 5; i++)
        assert_int_equal(rl_recorder_push(r, i < 3 ? a : b, 1 + i, 0, "m", 1), RL_OK);
    assert_int_equal(rl_recorder_mark_start(r, 100), RL_OK);
    for (int i = 0; i < 2500; i++) {
        pthread_mutex_lock(&f->sink.mu);
        size_t in_file = f->sink.in_file;
        pthread_mutex_unlock(&f->sink.mu);
        if (in_file == 5)
            break;
        sleep_ms(2);
    }
    pthread_mutex_lock(&f->sink.mu);
    assert_int_equal(f->sink.in_file, 5);
    pthread_mutex_unlock(&f->sink.mu);
    /* Four inside, decided at once by STOP and written in one pass (no flush inside
     * it): a6 and b7 go into the open chunk, a8 fails, b9 is never tried. */
    static const int next[4] = {0, 1, 0, 1};
    for (int i = 0; i < 4; i++)
        assert_int_equal(rl_recorder_push(r, next[i] ? b : a, 200 + i, 0, "m", 1), RL_OK);
    assert_int_equal(rl_recorder_mark_stop(r, 300), RL_OK);
    wait_state(r, RL_RECORD_FAILED);
    rl_record_status s;
    rl_recorder_status(r, &s);
    assert_non_null(strstr(s.reason, "no space left"));
    assert_int_equal(rl_recorder_finish(r, NULL), RL_ESTATE);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", rl_recorder_run_dir(r));
    assert_int_equal(rl_recorder_wait(r), RL_OK);
    rl_recorder_status(r, &s);
    assert_int_equal(s.written, 5);
    assert_int_equal(s.dropped, 4);
    rl_record_topic_stats ta, tb;
    assert_int_equal(rl_recorder_topic_stats(r, a, &ta), RL_OK);
    assert_int_equal(rl_recorder_topic_stats(r, b, &tb), RL_OK);
    assert_int_equal(ta.written, 3);
    assert_int_equal(ta.dropped, 2);
    assert_int_equal(ta.outside, 3);
    assert_int_equal(ta.inside, 0); /* a6 was counted inside when written, then lost */
    assert_int_equal(tb.written, 2);
    assert_int_equal(tb.dropped, 2);
    assert_int_equal(tb.outside, 2);
    assert_int_equal(tb.inside, 0);
    rl_recorder_free(r);
    json_object *m = read_manifest(dir);
    assert_string_equal(jstr(m, "state"), "FAILED");
    json_object *tot = jget(m, "totals");
    assert_int_equal(jint(tot, "received"), 9);
    assert_int_equal(jint(tot, "written"), 5);
    assert_int_equal(jint(tot, "dropped"), 4);
    assert_int_equal(jint(tot, "inside") + jint(tot, "outside") + jint(tot, "dropped"), 9);
    json_object_put(m);
}

static void test_stalled_writer_fails_run(void **state)
{
    fixture *f = *state;
    f->opts.write_delay_ns = 0;
    f->opts.stall_limit_ns = 200 * 1000000ll;
    f->sink.block = 1;
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/a");
    prepare(r, "stall");
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    assert_int_equal(rl_recorder_push(r, a, 1, 0, "m", 1), RL_OK);
    wait_state(r, RL_RECORD_FAILED);
    rl_record_status s;
    rl_recorder_status(r, &s);
    assert_non_null(strstr(s.reason, "stalled"));
    /* The disk thread writes the manifest the monitor asks for, right after the state
     * changes (the writer is stuck and would never come back to do it). */
    int manifest_failed = 0;
    for (int i = 0; i < 2500 && !manifest_failed; i++) {
        json_object *m = read_manifest(rl_recorder_run_dir(r));
        manifest_failed = strcmp(jstr(m, "state"), "FAILED") == 0;
        json_object_put(m);
        if (!manifest_failed)
            sleep_ms(2);
    }
    mem_sink_release(&f->sink);
    assert_true(manifest_failed);
    rl_recorder_free(r);
    assert_int_equal(f->sink.count, 1); /* the late write still landed */
}

struct beats {
    pthread_mutex_t mu;
    int n;
    int saw_armed;
    rl_record_state last;
    char host[256];
};

static void on_beat(const rl_record_status *s, void *user)
{
    struct beats *b = user;
    pthread_mutex_lock(&b->mu);
    b->n++;
    if (s->state == RL_RECORD_ARMED && s->run_dir[0])
        b->saw_armed = 1;
    snprintf(b->host, sizeof b->host, "%s", s->host);
    b->last = s->state;
    pthread_mutex_unlock(&b->mu);
}

/* A pause of the whole process (SIGSTOP, a suspended machine) longer than the stall
 * limit is no writer stall: the run goes on and completes, and the pause is counted
 * (issue 11, item 3). The recorder runs in a child that the test stops and continues. */
static void test_whole_process_pause_is_not_a_stall(void **state)
{
    fixture *f = *state;
    f->opts.write_delay_ns = 0;
    f->opts.stall_limit_ns = 200 * 1000000ll;
    int ready[2], go[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(go), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(ready[0]);
        close(go[1]);
        rl_recorder *r = NULL;
        if (rl_recorder_new(&r, &f->opts) != RL_OK)
            _exit(20);
        rl_recorder_set_sink(r, &mem_sink_ops, &f->sink);
        uint16_t a = 0;
        rl_recorder_add_topic(r, "/a", "", "", NULL, 0, "raw", &a);
        rl_record_run run = {.run_id = "paused"};
        if (rl_recorder_prepare(r, &run) != RL_OK || rl_recorder_begin(r) != RL_OK ||
            rl_recorder_mark_start(r, 0) != RL_OK || rl_recorder_push(r, a, 1, 0, "m", 1) != RL_OK)
            _exit(21);
        char c = 'r';
        if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
            _exit(22);
        /* Continued: wait until the monitor has seen the pause (or failed the run). */
        rl_record_status s;
        for (int i = 0; i < 2500; i++) {
            rl_recorder_status(r, &s);
            if (s.pauses > 0 || s.state != RL_RECORD_RECORDING)
                break;
            sleep_ms(2);
        }
        if (s.state != RL_RECORD_RECORDING)
            _exit(30 + (int)s.state);
        if (s.pauses == 0)
            _exit(23);
        rl_recorder_push(r, a, 2, 0, "m", 1);
        rl_recorder_mark_stop(r, 10);
        int rc = rl_recorder_finish(r, NULL);
        rl_recorder_status(r, &s);
        rl_recorder_free(r);
        _exit(rc == RL_OK && s.state == RL_RECORD_COMPLETE && s.written == 2 ? 0 : 24);
    }
    /* Only the child writes `ready`: a child that ends early gives end-of-file here, not a
       parent waiting on its own open write end for ever. */
    close(ready[1]);
    close(go[0]);
    char c;
    if (read(ready[0], &c, 1) != 1) {
        int early = 0;
        waitpid(pid, &early, 0);
        fail_msg("the recorder's child ended before it was ready (exit %d)",
                 WIFEXITED(early) ? WEXITSTATUS(early) : -1);
    }
    assert_int_equal(kill(pid, SIGSTOP), 0);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, WUNTRACED), pid);
    assert_true(WIFSTOPPED(st));
    sleep_ms(1000); /* five stall limits; longer on a slow machine, which changes nothing */
    assert_int_equal(kill(pid, SIGCONT), 0);
    assert_int_equal(write(go[1], "g", 1), 1);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) == 30 + RL_RECORD_FAILED)
        fail_msg("the pause was taken for a writer stall: the run FAILED");
    assert_int_equal(WEXITSTATUS(st), 0);
    close(ready[0]), close(go[1]);
}

/* A gate in front of every manifest write: closed, writes wait (a frozen disk). */
struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int closed, waiting;
};

static void gate_hook(void *user)
{
    struct gate *g = user;
    pthread_mutex_lock(&g->mu);
    while (g->closed) {
        g->waiting = 1;
        pthread_cond_wait(&g->cv, &g->mu);
    }
    g->waiting = 0;
    pthread_mutex_unlock(&g->mu);
}

static void gate_set(struct gate *g, int closed)
{
    pthread_mutex_lock(&g->mu);
    g->closed = closed;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static int gate_waiting(struct gate *g)
{
    pthread_mutex_lock(&g->mu);
    int w = g->waiting;
    pthread_mutex_unlock(&g->mu);
    return w;
}

static int beats_seen(struct beats *b, rl_record_state *last)
{
    pthread_mutex_lock(&b->mu);
    int n = b->n;
    if (last)
        *last = b->last;
    pthread_mutex_unlock(&b->mu);
    return n;
}

/* A frozen disk: bag writes and manifest writes hang. The monitor still fails the stalled
 * run and goes on beating with FAILED while the manifest write it asked for hangs; a
 * cancel from another thread does not stop the beats either (issue 11, item 4). */
static void test_frozen_disk_never_stops_the_heartbeat(void **state)
{
    fixture *f = *state;
    struct beats b = {.n = 0};
    pthread_mutex_init(&b.mu, NULL);
    struct gate g = {.closed = 0};
    pthread_mutex_init(&g.mu, NULL);
    pthread_cond_init(&g.cv, NULL);
    f->opts.heartbeat = on_beat;
    f->opts.heartbeat_user = &b;
    f->opts.heartbeat_interval_ns = 20 * 1000000ll;
    f->opts.write_delay_ns = 0;
    f->opts.stall_limit_ns = 200 * 1000000ll;
    rl_recorder *r = new_recorder(f);
    r->test_manifest_hook = gate_hook;
    r->test_hook_user = &g;
    uint16_t a = topic(r, "/a");
    prepare(r, "frozen");
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    /* The disk freezes. */
    gate_set(&g, 1);
    pthread_mutex_lock(&f->sink.mu);
    f->sink.block = 1;
    pthread_mutex_unlock(&f->sink.mu);
    assert_int_equal(rl_recorder_push(r, a, 1, 0, "m", 1), RL_OK);
    wait_state(r, RL_RECORD_FAILED);
    for (int i = 0; i < 2500 && !gate_waiting(&g); i++)
        sleep_ms(2);
    assert_true(gate_waiting(&g)); /* the FAILED manifest is being written, and hangs */
    rl_record_state last;
    int n0 = beats_seen(&b, NULL), n = n0;
    for (int i = 0; i < 2500 && n < n0 + 5; i++) {
        sleep_ms(2);
        n = beats_seen(&b, &last);
    }
    assert_true(n >= n0 + 5);
    assert_int_equal(last, RL_RECORD_FAILED);
    rl_record_status s;
    rl_recorder_status(r, &s);
    assert_non_null(strstr(s.reason, "writer stalled"));
    json_object *m = read_manifest(rl_recorder_run_dir(r));
    assert_string_equal(jstr(m, "state"), "RECORDING"); /* the disk has not taken it yet */
    json_object_put(m);
    /* The disk comes back: the FAILED manifest lands. */
    gate_set(&g, 0);
    mem_sink_release(&f->sink);
    int landed = 0;
    for (int i = 0; i < 2500 && !landed; i++) {
        m = read_manifest(rl_recorder_run_dir(r));
        landed = strcmp(jstr(m, "state"), "FAILED") == 0;
        json_object_put(m);
        if (!landed)
            sleep_ms(2);
    }
    assert_true(landed);
    rl_recorder_free(r);
    pthread_mutex_destroy(&b.mu);
    pthread_mutex_destroy(&g.mu);
    pthread_cond_destroy(&g.cv);
}

struct canceller {
    rl_recorder *r;
    int rc;
};

static void *cancel_thread(void *arg)
{
    struct canceller *c = arg;
    c->rc = rl_recorder_cancel(c->r, "SIGINT");
    return NULL;
}

/* A cancel (what runlab record does on SIGINT) while the disk hangs: it waits for the
 * writer, but the heartbeat goes on meanwhile and says the run is closing; when the disk
 * returns the run ends INTERRUPTED with everything written (issue 11, item 4). */
static void test_cancel_on_a_hanging_disk_keeps_the_heartbeat(void **state)
{
    fixture *f = *state;
    struct beats b = {.n = 0};
    pthread_mutex_init(&b.mu, NULL);
    f->opts.heartbeat = on_beat;
    f->opts.heartbeat_user = &b;
    f->opts.heartbeat_interval_ns = 20 * 1000000ll;
    f->opts.write_delay_ns = 0;
    f->opts.stall_limit_ns = 3600 * 1000000000ll; /* no stall verdict: the cancel waits */
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/a");
    prepare(r, "cancel-hang");
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    pthread_mutex_lock(&f->sink.mu);
    f->sink.block = 1;
    pthread_mutex_unlock(&f->sink.mu);
    assert_int_equal(rl_recorder_push(r, a, 1, 0, "m", 1), RL_OK);
    for (int i = 0; i < 2500 && !mem_sink_get(&f->sink, 2); i++)
        sleep_ms(2);
    assert_true(mem_sink_get(&f->sink, 2)); /* the writer hangs in a write */
    struct canceller c = {r, 1};
    pthread_t th;
    pthread_create(&th, NULL, cancel_thread, &c);
    rl_record_status s;
    for (int i = 0; i < 2500; i++) {
        rl_recorder_status(r, &s);
        if (s.closing)
            break;
        sleep_ms(2);
    }
    assert_true(s.closing);
    int n0 = beats_seen(&b, NULL), n = n0;
    for (int i = 0; i < 2500 && n < n0 + 5; i++) {
        sleep_ms(2);
        n = beats_seen(&b, NULL);
    }
    assert_true(n >= n0 + 5); /* beats while the cancel waits for the disk */
    assert_int_equal(c.rc, 1); /* still waiting */
    mem_sink_release(&f->sink);
    pthread_join(th, NULL);
    assert_int_equal(c.rc, RL_OK);
    assert_int_equal(rl_recorder_state(r), RL_RECORD_INTERRUPTED);
    assert_int_equal(mem_sink_get(&f->sink, 0), 1);
    rl_recorder_free(r);
    pthread_mutex_destroy(&b.mu);
}

/* The fsync runs on the durability thread: while one hangs, the writer goes on writing
 * and flushing, and the run completes once it returns. */
static void test_slow_sync_does_not_block_writer(void **state)
{
    fixture *f = *state;
    f->opts.write_delay_ns = 0;
    f->opts.flush_interval_ns = 5 * 1000000ll;
    f->opts.stall_limit_ns = 3600 * 1000000000ll; /* no stall verdict on a loaded machine */
    f->sink.block_sync = 1;
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/a");
    prepare(r, "slow-sync");
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    assert_int_equal(rl_recorder_push(r, a, 1, 0, "m", 1), RL_OK);
    int blocked = 0;
    for (int i = 0; i < 2500 && !blocked; i++) {
        blocked = mem_sink_get(&f->sink, 4);
        if (!blocked)
            sleep_ms(2);
    }
    assert_true(blocked);
    int flushes = mem_sink_get(&f->sink, 1);
    /* Written and flushed again while the sync is still hanging. */
    for (int i = 0; i < 100; i++) {
        assert_int_equal(rl_recorder_push(r, a, 2 + i, 0, "m", 1), RL_OK);
        sleep_ms(1);
    }
    wait_drained(r);
    int more = 0;
    for (int i = 0; i < 2500 && !more; i++) {
        more = mem_sink_get(&f->sink, 1) > flushes;
        if (!more)
            sleep_ms(2);
    }
    assert_true(more);
    assert_int_equal(mem_sink_get(&f->sink, 0), 101);
    assert_int_equal(mem_sink_get(&f->sink, 3), 0);
    assert_int_equal(mem_sink_get(&f->sink, 4), 1);
    assert_int_equal(rl_recorder_state(r), RL_RECORD_RECORDING);
    mem_sink_release(&f->sink);
    assert_int_equal(rl_recorder_mark_start(r, 0), RL_OK);
    assert_int_equal(rl_recorder_mark_stop(r, 1000), RL_OK);
    assert_int_equal(rl_recorder_finish(r, NULL), RL_OK);
    assert_int_equal(rl_recorder_state(r), RL_RECORD_COMPLETE);
    rl_recorder_free(r);
}

/* A failed fsync fails the run like a failed write; a hung one like a stalled writer. */
static void test_sync_error_and_stall_fail_run(void **state)
{
    fixture *f = *state;
    f->opts.write_delay_ns = 0;
    f->opts.flush_interval_ns = 5 * 1000000ll;
    f->sink.fail_sync = 1;
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/a");
    prepare(r, "sync-error");
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    assert_int_equal(rl_recorder_push(r, a, 1, 0, "m", 1), RL_OK);
    wait_state(r, RL_RECORD_FAILED);
    rl_record_status s;
    rl_recorder_status(r, &s);
    assert_non_null(strstr(s.reason, "writer: mem sink: fsync"));
    rl_recorder_free(r);

    mem_sink_destroy(&f->sink);
    mem_sink_init(&f->sink);
    f->opts.stall_limit_ns = 200 * 1000000ll;
    f->sink.block_sync = 1;
    r = new_recorder(f);
    a = topic(r, "/a");
    prepare(r, "sync-stall");
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    assert_int_equal(rl_recorder_push(r, a, 1, 0, "m", 1), RL_OK);
    wait_state(r, RL_RECORD_FAILED);
    rl_recorder_status(r, &s);
    assert_non_null(strstr(s.reason, "fsync stalled"));
    mem_sink_release(&f->sink);
    rl_recorder_free(r);
}

static void test_free_space(void **state)
{
    fixture *f = *state;
    f->opts.minimum_free_bytes = UINT64_MAX;
    rl_recorder *r = new_recorder(f);
    rl_record_run run = {.run_id = "nospace"};
    assert_int_equal(rl_recorder_prepare(r, &run), RL_ENOSPC);
    assert_non_null(strstr(rl_error_last(), "minimum_free_bytes"));
    assert_int_equal(rl_recorder_state(r), RL_RECORD_IDLE);
    char exp[2 * PATH_MAX];
    snprintf(exp, sizeof exp, "%s/experiments", f->home);
    assert_int_equal(count_dirs(exp), 0);
    rl_recorder_free(r);

    /* Space running out during a run: the monitor checks every second. */
    f->opts.minimum_free_bytes = 0;
    r = new_recorder(f);
    prepare(r, "space-runs-out");
    __atomic_store_n(&r->opts.minimum_free_bytes, UINT64_MAX, __ATOMIC_RELAXED); /* disk fills */
    wait_state(r, RL_RECORD_FAILED);
    rl_record_status s;
    rl_recorder_status(r, &s);
    assert_non_null(strstr(s.reason, "free space"));
    rl_recorder_free(r);
}

/* ---- lock, run ids, directories --------------------------------------------------------------- */

static void test_one_recorder_per_domain(void **state)
{
    fixture *f = *state;
    rl_recorder *r1 = new_recorder(f), *r2 = NULL;
    assert_int_equal(rl_recorder_new(&r2, &f->opts), RL_EBUSY);
    char want[64];
    snprintf(want, sizeof want, "pid %ld", (long)getpid());
    assert_non_null(strstr(rl_error_last(), want));
    assert_null(r2);
    /* Another home on the same host and domain is refused too: the lock is host-wide. */
    char *other_home = rl_test_tmpdir();
    rl_record_options other = f->opts;
    other.home = other_home;
    assert_int_equal(rl_recorder_new(&r2, &other), RL_EBUSY);
    assert_non_null(strstr(rl_error_last(), "another recorder is running"));
    assert_null(r2);
    assert_int_equal(count_dirs(other_home), 0); /* and it made nothing there */
    rl_test_tmpdir_free(other_home);
    int domain = f->opts.lab_domain;
    f->opts.lab_domain = rl_test_domain_another(); /* another domain is independent */
    assert_int_equal(rl_recorder_new(&r2, &f->opts), RL_OK);
    rl_recorder_free(r2);
    f->opts.lab_domain = domain;
    rl_recorder_free(r1);
    /* The lock file is in the host-wide directory, open to every user. */
    char lock[2 * PATH_MAX], host[256] = "", sane[RL_NAME_MAX + 1];
    gethostname(host, sizeof host - 1);
    rl_path_sanitize_name(host, sane);
    snprintf(lock, sizeof lock, "%s/runlab-recorder_%s_domain%d.lock", rl_rec_default_lock_dir(),
             sane, domain);
    struct stat st;
    assert_int_equal(stat(lock, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0666);
    /* A lock file left by a dead owner (kill -9) is not an obstacle: flock died with it. */
    rl_test_write_file(lock, "pid 999999 on elsewhere since then\n", 35);
    assert_int_equal(rl_recorder_new(&r2, &f->opts), RL_OK);
    char *text = rl_test_read_file(lock, NULL);
    assert_non_null(strstr(text, want));
    free(text);
    rl_recorder_free(r2);
    /* A symbolic link planted under the lock's name is refused, not followed. */
    int planted = rl_test_domain_another();
    snprintf(lock, sizeof lock, "%s/runlab-recorder_%s_domain%d.lock", rl_rec_default_lock_dir(),
             sane, planted);
    unlink(lock);
    assert_int_equal(symlink("/etc/hostname", lock), 0);
    f->opts.lab_domain = planted;
    assert_int_equal(rl_recorder_new(&r2, &f->opts), RL_EIO);
    assert_non_null(strstr(rl_error_last(), lock));
    unlink(lock);
    f->opts.lab_domain = domain;
}

static void test_hostile_run_ids(void **state)
{
    fixture *f = *state;
    static const char *const bad[] = {"",      ".",     "..",   "../escape", "a/b",  "a\\b",
                                      "a\nb",  "a\x7f", "-rf",  " lead",     "a b",  ".hidden",
                                      "caf\xc3\xa9", "a:b", "$(x)", "a*",    "12345678901234567890123456789012345678901234567890123456789012345"};
    rl_recorder *r = new_recorder(f);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rl_record_run run = {.run_id = bad[i]};
        int rc = rl_recorder_prepare(r, &run);
        if (rc != RL_EINVAL)
            fail_msg("run id #%zu '%s' gave %d", i, bad[i], rc);
        assert_non_null(strstr(rl_error_last(), "run id"));
        assert_int_equal(rl_recorder_state(r), RL_RECORD_IDLE);
    }
    char exp[2 * PATH_MAX];
    snprintf(exp, sizeof exp, "%s/experiments", f->home);
    assert_int_equal(count_dirs(exp), 0);
    assert_int_equal(rl_record_check_run_id("Run_2026-11-29.a"), RL_OK);
    assert_int_equal(rl_record_check_run_id(NULL), RL_EINVAL);
    rl_recorder_free(r);
}

static void test_run_id_never_reused(void **state)
{
    fixture *f = *state;
    rl_recorder *r = new_recorder(f);
    prepare(r, "once");
    char first[PATH_MAX];
    snprintf(first, sizeof first, "%s", rl_recorder_run_dir(r));
    assert_int_equal(rl_recorder_cancel(r, NULL), RL_OK);
    rl_recorder_free(r);

    r = new_recorder(f);
    rl_record_run run = {.run_id = "once"};
    assert_int_equal(rl_recorder_prepare(r, &run), RL_EEXIST);
    assert_non_null(strstr(rl_error_last(), "already used"));
    assert_int_equal(rl_recorder_state(r), RL_RECORD_IDLE);
    prepare(r, NULL); /* a generated id is fine */
    assert_non_null(strstr(rl_recorder_run_dir(r), "_run-"));
    rl_recorder_free(r);
    json_object *m = read_manifest(first);
    assert_string_equal(jstr(m, "state"), "INTERRUPTED"); /* the first run is untouched */
    json_object_put(m);
}

/* Several processes, each its own recorder (own domain), race for one run id: exactly one
 * gets it, and the experiments folder holds exactly one run. */
static void test_processes_race_for_run_id(void **state)
{
    fixture *f = *state;
    enum { N = 6 };
    pid_t pids[N];
    int domains[N];
    for (int i = 0; i < N; i++)
        domains[i] = rl_test_domain_another();
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    for (int i = 0; i < N; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            char c;
            close(pipefd[1]);
            if (read(pipefd[0], &c, 1) < 0)
                _exit(3);
            f->opts.lab_domain = domains[i];
            rl_recorder *r = NULL;
            if (rl_recorder_new(&r, &f->opts) != RL_OK)
                _exit(4);
            rl_recorder_set_sink(r, &mem_sink_ops, &f->sink);
            rl_record_run run = {.run_id = "contested"};
            int rc = rl_recorder_prepare(r, &run);
            if (rc == RL_OK)
                rc = rl_recorder_cancel(r, "race test");
            rl_recorder_free(r);
            _exit(rc == RL_OK ? 0 : rc == RL_EEXIST ? 1 : 2);
        }
    }
    close(pipefd[0]);
    close(pipefd[1]); /* releases every child at once */
    int winners = 0, losers = 0;
    for (int i = 0; i < N; i++) {
        int st = 0;
        assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
        assert_true(WIFEXITED(st));
        if (WEXITSTATUS(st) == 0)
            winners++;
        else if (WEXITSTATUS(st) == 1)
            losers++;
    }
    assert_int_equal(winners, 1);
    assert_int_equal(losers, N - 1);
    char exp[2 * PATH_MAX];
    snprintf(exp, sizeof exp, "%s/experiments", f->home);
    assert_int_equal(count_dirs(exp), 1);
}

static void test_bag_open_failure_stays_idle(void **state)
{
    fixture *f = *state;
    f->sink.fail_open = 1;
    rl_recorder *r = new_recorder(f);
    rl_record_run run = {.run_id = "noopen"};
    assert_int_equal(rl_recorder_prepare(r, &run), RL_EIO);
    assert_non_null(strstr(rl_error_last(), "cannot open"));
    assert_int_equal(rl_recorder_state(r), RL_RECORD_IDLE);
    assert_string_equal(rl_recorder_run_dir(r), "");
    char exp[2 * PATH_MAX];
    snprintf(exp, sizeof exp, "%s/experiments", f->home);
    assert_int_equal(count_dirs(exp), 0);
    f->sink.fail_open = 0;
    prepare(r, "opens");
    assert_int_equal(rl_recorder_state(r), RL_RECORD_ARMED);
    rl_recorder_free(r);
}

static void test_nodes_and_planner(void **state)
{
    fixture *f = *state;
    rl_recorder *r = new_recorder(f);
    int vehicles[] = {1, 4};
    rl_record_run run = {.run_id = "maps", .vehicles = vehicles, .vehicle_count = 2,
                         .planner = "rrt", .map_path = "/nonexistent/map.bin"};
    assert_int_equal(rl_recorder_prepare(r, &run), RL_ENOENT);
    assert_int_equal(rl_recorder_state(r), RL_RECORD_IDLE);
    run.map_path = NULL;
    run.nodes_json = "{\"planner\": ";
    assert_int_equal(rl_recorder_prepare(r, &run), RL_EINVAL);
    assert_int_equal(rl_recorder_state(r), RL_RECORD_IDLE);
    run.nodes_json = "{\"planner\": {\"horizon\": 3}}";
    assert_int_equal(rl_recorder_prepare(r, &run), RL_OK);
    const char *dir = rl_recorder_run_dir(r);
    json_object *m = read_manifest(dir);
    assert_true(json_object_is_type(jget(m, "map"), json_type_null));
    assert_string_equal(jstr(m, "planner"), "rrt");
    assert_int_equal(json_object_array_length(jget(m, "vehicles")), 2);
    assert_true(strlen(jstr(jget(m, "runlab"), "build_revision")) > 0);
    json_object_put(m);
    char path[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/config/nodes.json", dir);
    json_object *nodes = json_object_from_file(path);
    assert_non_null(nodes);
    assert_int_equal(jint(jget(nodes, "planner"), "horizon"), 3);
    json_object_put(nodes);
    snprintf(path, sizeof path, "%s/config/recorder.json", dir);
    json_object *cfg = json_object_from_file(path);
    assert_int_equal(jint(cfg, "max_queued_messages"), 1000000);
    json_object_put(cfg);
    rl_recorder_free(r);
}

/* ---- threads, heartbeat, flush ---------------------------------------------------------------- */

struct pusher {
    rl_recorder *r;
    uint16_t topic;
    int n;
    int failures;
};

static void *push_thread(void *arg)
{
    struct pusher *p = arg;
    for (int i = 0; i < p->n; i++) {
        unsigned char b = (unsigned char)p->topic;
        if (rl_recorder_push(p->r, p->topic, 1000 + i, 1000 + i, &b, 1) != RL_OK)
            p->failures++;
    }
    return NULL;
}

static void test_many_threads_push(void **state)
{
    fixture *f = *state;
    f->opts.write_delay_ns = 1000000; /* 1 ms */
    rl_recorder *r = new_recorder(f);
    enum { T = 4, N = 20000 };
    struct pusher p[T];
    pthread_t th[T];
    char name[32];
    for (int i = 0; i < T; i++) {
        snprintf(name, sizeof name, "/vehicle/%d/state", i);
        p[i] = (struct pusher){r, topic(r, name), N, 0};
    }
    prepare(r, "threads");
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    assert_int_equal(rl_recorder_mark_start(r, 0), RL_OK);
    for (int i = 0; i < T; i++)
        pthread_create(&th[i], NULL, push_thread, &p[i]);
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(p[i].failures, 0);
    }
    assert_int_equal(rl_recorder_mark_stop(r, 1000000), RL_OK);
    assert_int_equal(rl_recorder_finish(r, NULL), RL_OK);
    assert_int_equal(f->sink.count, T * N);
    uint32_t last[T] = {0};
    for (size_t i = 0; i < f->sink.count; i++) {
        mem_written *w = &f->sink.msgs[i];
        assert_int_equal(w->first, w->channel);
        assert_int_equal(w->sequence, last[w->channel] + 1); /* per-topic order kept */
        last[w->channel] = w->sequence;
    }
    rl_record_status s;
    rl_recorder_status(r, &s);
    assert_int_equal(s.inside, T * N);
    assert_int_equal(s.queued_messages, 0);
    rl_recorder_free(r);
}

struct ender {
    rl_recorder *r;
    int cancel;
    int rc;
};

static void *end_thread(void *arg)
{
    struct ender *e = arg;
    e->rc = e->cancel ? rl_recorder_cancel(e->r, "racing cancel") : rl_recorder_finish(e->r, NULL);
    return NULL;
}

/* A finish and a cancel at the same moment: exactly one wins, the other is refused. */
static void test_finish_races_cancel(void **state)
{
    fixture *f = *state;
    for (int round = 0; round < 20; round++) {
        mem_sink_destroy(&f->sink);
        mem_sink_init(&f->sink);
        rl_recorder *r = new_recorder(f);
        uint16_t a = topic(r, "/a");
        char id[32];
        snprintf(id, sizeof id, "race-%d", round);
        prepare(r, id);
        assert_int_equal(rl_recorder_begin(r), RL_OK);
        assert_int_equal(rl_recorder_mark_start(r, 1), RL_OK);
        assert_int_equal(rl_recorder_mark_stop(r, 100), RL_OK);
        for (int i = 0; i < 100; i++)
            assert_int_equal(rl_recorder_push(r, a, 1 + i, 0, "m", 1), RL_OK);
        struct ender e[2] = {{r, 0, 0}, {r, 1, 0}};
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&th[i], NULL, end_thread, &e[i]);
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        assert_true((e[0].rc == RL_OK) != (e[1].rc == RL_OK));
        assert_int_equal(e[0].rc == RL_OK ? e[1].rc : e[0].rc, RL_ESTATE);
        rl_record_state want = e[0].rc == RL_OK ? RL_RECORD_COMPLETE : RL_RECORD_INTERRUPTED;
        assert_int_equal(rl_recorder_state(r), want);
        assert_int_equal(f->sink.count, 100);
        rl_recorder_free(r);
    }
}

static void test_heartbeat_and_flush(void **state)
{
    fixture *f = *state;
    struct beats b = {.n = 0};
    pthread_mutex_init(&b.mu, NULL);
    f->opts.heartbeat = on_beat;
    f->opts.heartbeat_user = &b;
    f->opts.heartbeat_interval_ns = 20 * 1000000ll;
    f->opts.flush_interval_ns = 20 * 1000000ll;
    f->opts.write_delay_ns = 0;
    rl_recorder *r = new_recorder(f);
    uint16_t a = topic(r, "/a");
    prepare(r, "beats");
    assert_int_equal(rl_recorder_push(r, a, 1, 1, "m", 1), RL_OK);
    int ok = 0;
    for (int i = 0; i < 2500 && !ok; i++) {
        pthread_mutex_lock(&b.mu);
        ok = b.saw_armed && b.n >= 3;
        pthread_mutex_unlock(&b.mu);
        ok = ok && mem_sink_get(&f->sink, 1) >= 1; /* flushed without being asked */
        ok = ok && mem_sink_get(&f->sink, 3) >= 1; /* and synced after the flush */
        if (!ok)
            sleep_ms(2);
    }
    assert_true(ok);
    assert_true(strlen(b.host) > 0);
    assert_int_equal(rl_recorder_cancel(r, NULL), RL_OK);
    rl_recorder_free(r);
    assert_int_equal(b.last, RL_RECORD_INTERRUPTED); /* the last beat carries the end */
    pthread_mutex_destroy(&b.mu);
}

static void test_options_checked(void **state)
{
    fixture *f = *state;
    rl_recorder *r = NULL;
    f->opts.flush_interval_ns = 2000000000ll;
    assert_int_equal(rl_recorder_new(&r, &f->opts), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "flush_interval"));
    rl_record_options_default(&f->opts);
    f->opts.home = f->home;
    f->opts.lab_domain = 999;
    assert_int_equal(rl_recorder_new(&r, &f->opts), RL_EINVAL);
    assert_null(r);
    /* The compression level, checked against the codec: zstd up to 22, lz4 up to 12. */
    rl_record_options_default(&f->opts);
    f->opts.home = f->home;
    f->opts.compression_level = 23;
    assert_int_equal(rl_recorder_new(&r, &f->opts), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "compression_level: 23"));
    f->opts.compression = RL_RECORD_COMPRESSION_LZ4;
    f->opts.compression_level = 13;
    assert_int_equal(rl_recorder_new(&r, &f->opts), RL_EINVAL);
    f->opts.compression = RL_RECORD_COMPRESSION_NONE;
    f->opts.compression_level = 1;
    assert_int_equal(rl_recorder_new(&r, &f->opts), RL_EINVAL);
    assert_null(r);
    /* The heartbeat interval: 10 ms .. 10 s, both ends included. */
    const int64_t beats[4] = {10 * 1000000ll - 1, 10 * 1000000ll, 10000000000ll, 10000000001ll};
    for (int k = 0; k < 4; k++) {
        rl_record_options_default(&f->opts);
        f->opts.home = f->home;
        f->opts.lab_domain = rl_test_domain();
        f->opts.heartbeat_interval_ns = beats[k];
        int rc = rl_recorder_new(&r, &f->opts);
        if (k == 0 || k == 3) {
            assert_int_equal(rc, RL_EINVAL);
            assert_non_null(strstr(rl_error_last(), "heartbeat_interval: must be 10 ms..10 s"));
            assert_null(r);
        } else {
            if (rc != RL_OK)
                fail_msg("heartbeat_interval %lld ns: %s", (long long)beats[k], rl_error_last());
            rl_recorder_free(r);
            r = NULL;
        }
    }
    char home[PATH_MAX];
    assert_int_equal(rl_record_home("/x", home, sizeof home), RL_OK);
    assert_string_equal(home, "/x");
    assert_int_equal(rl_record_home("/x", home, 2), RL_ERANGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_full_run_complete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals_change_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_armed_and_recording, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fail_on_request, setup, teardown),
        cmocka_unit_test_setup_teardown(test_late_start_and_stop_stamps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_late_stamps_classify_messages_written_ahead, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_outside_left_out_when_configured, setup, teardown),
        cmocka_unit_test_setup_teardown(test_start_after_write_delay_is_too_late, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overflow_fails_and_counts_drops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_run_manifest_follows_finish, setup, teardown),
        cmocka_unit_test_setup_teardown(test_push_many_is_pushes_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_push_many_hands_over_without_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_topic_registered_twice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overflow_by_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_pass_gives_room_back_and_takes_new_messages,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_writer_error_fails_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stalled_writer_fails_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_whole_process_pause_is_not_a_stall, setup, teardown),
        cmocka_unit_test_setup_teardown(test_frozen_disk_never_stops_the_heartbeat, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cancel_on_a_hanging_disk_keeps_the_heartbeat,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_sync_does_not_block_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync_error_and_stall_fail_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_space, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_recorder_per_domain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_run_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_id_never_reused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_processes_race_for_run_id, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bag_open_failure_stays_idle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nodes_and_planner, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_threads_push, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finish_races_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_heartbeat_and_flush, setup, teardown),
        cmocka_unit_test_setup_teardown(test_options_checked, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
