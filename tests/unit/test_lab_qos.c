/* The recorder node against writers of every reliability, on loopback (a DDS domain of each
 * test's own): a best-effort writer (as ROS 2 sensor topics and /clock publish) written from
 * Cyclone alone (lab_test_pub --best-effort) is recorded and the manifest states the QoS it
 * was read with; a reliable and a best-effort writer of one topic are each recorded once,
 * the reliable one reliably; a pattern asked for that matched no writer is named in the
 * manifest and on stderr; a run FAILED by queue overflow goes on counting until its finish,
 * so the manifest accounts for every sample published. Waits are generous and outcomes
 * asserted by count and content, never by speed. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/lab.h"
#include "runlab/mcap.h"
#include "runlab/time.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Limits for waits: far above what a busy 2-core machine needs. */
#define LONG_NS (120 * 1000000000ll)

static void use_loopback(void)
{
    if (getenv("CYCLONEDDS_URI"))
        return;
    const char *src = getenv("RUNLAB_SOURCE");
    char uri[4096];
    snprintf(uri, sizeof uri, "file://%s/tests/cyclonedds-loopback.xml", src ? src : ".");
    setenv("CYCLONEDDS_URI", uri, 1);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000l};
    nanosleep(&ts, NULL);
}

/* lab_test_pub with `args` (NULL-terminated, after the program name). */
static pid_t spawn_pub(const char *const *args)
{
    const char *bin = getenv("RUNLAB_BIN");
    char path[4096];
    snprintf(path, sizeof path, "%s/lab_test_pub", bin ? bin : ".");
    char *argv[8] = {path};
    for (int i = 0; args[i] && i < 6; i++)
        argv[i + 1] = (char *)args[i];
    pid_t pid = 0;
    assert_int_equal(posix_spawn(&pid, path, NULL, NULL, argv, environ), 0);
    return pid;
}

static pid_t spawn_reliable(int domain, int count)
{
    char dom[16], cnt[16];
    snprintf(dom, sizeof dom, "%d", domain);
    snprintf(cnt, sizeof cnt, "%d", count);
    return spawn_pub((const char *[]){dom, cnt, NULL});
}

static pid_t spawn_best_effort(int domain)
{
    char dom[16];
    snprintf(dom, sizeof dom, "%d", domain);
    return spawn_pub((const char *[]){"--best-effort", dom, "600", NULL});
}

static int wait_exit(pid_t pid)
{
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static rl_lab_recorder *start_node(int domain, const char *home, const char *const *patterns,
                                   size_t npatterns, const rl_record_options *engine)
{
    rl_lab_recorder_options o;
    rl_lab_recorder_options_default(&o);
    o.domain = domain;
    o.home = home;
    o.lock_dir = home;
    o.patterns = patterns;
    o.pattern_count = npatterns;
    o.engine = engine;
    rl_lab_recorder *n = NULL;
    if (rl_lab_recorder_new(&n, &o) < 0)
        fail_msg("recorder node: %s", rl_error_last());
    return n;
}

/* Waits until the node has received at least `want` messages in all. */
static void wait_received(rl_lab_recorder *n, uint64_t want)
{
    int64_t deadline = rl_mono_ns() + LONG_NS;
    rl_record_status st;
    for (;;) {
        rl_lab_recorder_status(n, &st);
        if (st.received >= want || rl_mono_ns() > deadline)
            break;
        sleep_ms(10);
    }
    if (st.received < want)
        fail_msg("received %llu of %llu", (unsigned long long)st.received,
                 (unsigned long long)want);
}

static void prepare_and_begin(rl_lab_client *cl, const char *run_id, const int *vehicles,
                              size_t nv, rl_lab_reply *rep)
{
    rl_record_run run = {.run_id = run_id, .vehicles = vehicles, .vehicle_count = nv};
    assert_int_equal(rl_lab_client_prepare(cl, &run, LONG_NS, rep), RL_OK);
    if (!rep->ok)
        fail_msg("prepare refused: %s", rep->message);
    rl_lab_reply r;
    assert_int_equal(rl_lab_client_begin(cl, run_id, LONG_NS, &r), RL_OK);
    assert_true(r.ok);
}

static json_object *read_manifest(const char *run_dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", run_dir);
    json_object *m = json_object_from_file(path);
    if (!m)
        fail_msg("%s: unreadable", path);
    return m;
}

static json_object *jget(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v))
        fail_msg("manifest: no key %s", key);
    return v;
}

static const char *jstr(json_object *o, const char *key)
{
    return json_object_get_string(jget(o, key));
}

static int64_t jint(json_object *o, const char *key)
{
    return json_object_get_int64(jget(o, key));
}

/* The manifest's entry of `topic`. */
static json_object *manifest_topic(json_object *m, const char *topic)
{
    json_object *topics = jget(m, "topics");
    for (size_t i = 0; i < json_object_array_length(topics); i++) {
        json_object *t = json_object_array_get_idx(topics, i);
        if (strcmp(jstr(t, "topic"), topic) == 0)
            return t;
    }
    fail_msg("manifest: no topic %s", topic);
    return NULL;
}

/* The reason the manifest's "unmatched" gives for `name`, or NULL. */
static const char *unmatched_reason(json_object *m, const char *name)
{
    json_object *u = jget(m, "unmatched");
    for (size_t i = 0; i < json_object_array_length(u); i++) {
        json_object *e = json_object_array_get_idx(u, i);
        if (strcmp(jstr(e, "name"), name) == 0)
            return jstr(e, "reason");
    }
    return NULL;
}

/* The FinalSample messages of rt/test/final in the bag: per id (7 reliable, 8 best
 * effort), how often each seq (< 4096) appears; each message's content is checked against
 * what lab_test_pub derives from id and seq (label, positions). Returns the count. */
typedef struct final_seen {
    int per_seq[2][4096];
    int count[2];
} final_seen;

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void check_final(const uint8_t *d, size_t len, final_seen *fs)
{
    /* XCDR1 or XCDR2 little endian: {uint32 id; uint64 seq; string label; ...}. */
    assert_true(len >= 4 + 4 + 4 + 8 + 4);
    assert_true(d[0] == 0 && (d[1] == 0x01 || d[1] == 0x07));
    int xcdr1 = d[1] == 0x01;
    const uint8_t *b = d + 4;
    uint32_t id = le32(b);
    size_t off = xcdr1 ? 8 : 4; /* uint64 aligned to 8 in XCDR1, 4 in XCDR2 */
    uint64_t seq = le32(b + off) | (uint64_t)le32(b + off + 4) << 32;
    off += 8;
    uint32_t slen = le32(b + off);
    off += 4;
    assert_true(off + slen <= len - 4);
    char want[64];
    snprintf(want, sizeof want, "sample-%llu", (unsigned long long)seq);
    assert_int_equal(slen, strlen(want) + 1);
    assert_memory_equal(b + off, want, slen);
    assert_true(id == 7 || id == 8);
    assert_true(seq < 4096);
    fs->per_seq[id - 7][seq]++;
    fs->count[id - 7]++;
}

static void read_bag_final(const char *run_dir, const char *run_id, final_seen *fs)
{
    memset(fs, 0, sizeof *fs);
    char path[4096];
    snprintf(path, sizeof path, "%s/bag/%s.mcap", run_dir, run_id);
    rl_mcap_reader *r = NULL;
    if (rl_mcap_reader_open(&r, path, NULL) < 0)
        fail_msg("bag: %s", rl_error_last());
    uint16_t chan = 0xffff;
    rl_mcap_record rec;
    int rc;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1) {
        if (rec.opcode == RL_MCAP_OP_CHANNEL && rec.u.channel.topic.len == 13 &&
            memcmp(rec.u.channel.topic.data, "rt/test/final", 13) == 0)
            chan = rec.u.channel.id;
        if (rec.opcode == RL_MCAP_OP_MESSAGE && rec.u.message.channel_id == chan)
            check_final(rec.u.message.data.data, rec.u.message.data.len, fs);
    }
    if (rc < 0)
        fail_msg("bag: %s", rl_error_last());
    rl_mcap_reader_close(r);
}

/* Sends this process's stderr into a file until restored (the recorder's warnings). A
 * failing test leaves through a long jump: its teardown restores stderr then, so that the
 * failure and the next tests' messages are seen. */
typedef struct stderr_capture {
    int saved;
    char path[4096];
} stderr_capture;

static stderr_capture *g_capture; /* the capture under way, for the teardown */

static int restore_stderr(void **state)
{
    (void)state;
    if (g_capture) {
        fflush(stderr);
        (void)dup2(g_capture->saved, 2);
        close(g_capture->saved);
        g_capture = NULL;
    }
    return 0;
}

static void stderr_capture_begin(stderr_capture *sc, const char *dir)
{
    snprintf(sc->path, sizeof sc->path, "%s/stderr.txt", dir);
    int fd = open(sc->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    fflush(stderr);
    sc->saved = dup(2);
    assert_true(sc->saved >= 0);
    assert_int_equal(dup2(fd, 2), 2);
    close(fd);
    g_capture = sc;
}

/* Restores stderr, echoes what was captured and returns it (free it). */
static char *stderr_capture_end(stderr_capture *sc)
{
    restore_stderr(NULL);
    size_t len = 0;
    char *text = rl_test_read_file(sc->path, &len);
    fprintf(stderr, "%s", text);
    return text;
}

/* A best-effort writer (ROS 2's sensor topics, /clock) is recorded: its samples are in the
 * bag, and the manifest says the topic was read best effort, volatile, keep-all. A pattern
 * asked for and a prepared vehicle that matched no writer are named in the manifest and,
 * when the run ends, on stderr; the lab's own patterns without writers are not. */
static void test_best_effort_writer_recorded(void **state)
{
    (void)state;
    use_loopback();
    int domain = rl_test_domain_another();
    char *home = rl_test_tmpdir();
    stderr_capture sc;
    stderr_capture_begin(&sc, home);
    const char *patterns[] = {"rt/test/*", "rt/nobody/*"};
    rl_lab_recorder *node = start_node(domain, home, patterns, 2, NULL);
    rl_lab_client *cl = NULL;
    assert_int_equal(rl_lab_client_new(&cl, domain), RL_OK);
    const int vehicles[] = {5};
    rl_lab_reply rep, r;
    prepare_and_begin(cl, "best-effort", vehicles, 1, &rep);

    pid_t pub = spawn_best_effort(domain);
    wait_received(node, 20);
    assert_int_equal(kill(pub, SIGTERM), 0);
    assert_int_equal(wait_exit(pub), 0);
    assert_int_equal(rl_lab_client_finish(cl, "best-effort", 0, "test ends", LONG_NS, &r), RL_OK);
    assert_true(r.ok);
    assert_int_equal(r.state, RL_RECORD_INTERRUPTED);
    rl_lab_client_free(cl);
    rl_lab_recorder_free(node);
    char *err = stderr_capture_end(&sc);

    final_seen fs;
    read_bag_final(rep.run_dir, "best-effort", &fs);
    assert_int_equal(fs.count[0], 0);
    assert_true(fs.count[1] >= 20);
    for (int i = 0; i < 4096; i++)
        assert_true(fs.per_seq[1][i] <= 1);
    json_object *m = read_manifest(rep.run_dir);
    json_object *t = manifest_topic(m, "rt/test/final");
    assert_int_equal(jint(t, "written"), fs.count[1]);
    assert_int_equal(jint(t, "received"), fs.count[1]);
    json_object *qos = jget(t, "qos");
    assert_string_equal(jstr(qos, "reliability"), "best_effort");
    assert_string_equal(jstr(qos, "durability"), "volatile");
    assert_string_equal(jstr(qos, "history"), "keep_all");
    assert_false(json_object_object_get_ex(qos, "other_readers", NULL));
    const char *why = unmatched_reason(m, "rt/nobody/*");
    assert_non_null(why);
    assert_string_equal(why, "no writer discovered during the run");
    assert_non_null(unmatched_reason(m, "rt/vehicle/5/*"));
    assert_null(unmatched_reason(m, "rt/clock"));
    assert_null(unmatched_reason(m, "rt/test/*"));
    assert_int_equal(json_object_array_length(jget(m, "unmatched")), 2);
    json_object_put(m);
    assert_non_null(strstr(err, "run best-effort: rt/nobody/* matched no writer: no writer "
                                "discovered during the run"));
    assert_non_null(strstr(err, "rt/vehicle/5/* matched no writer"));
    free(err);
    rl_test_tmpdir_free(home);
}

/* A reliable and a best-effort writer of one topic: the reliable one keeps its reliable
 * reader, the best-effort one gets a reader of its own, and each sample is recorded once
 * (the best-effort reader, which also matches the reliable writer, leaves that writer's
 * samples to the reliable reader). */
static void test_mixed_reliability_recorded_once(void **state)
{
    (void)state;
    use_loopback();
    int domain = rl_test_domain_another();
    char *home = rl_test_tmpdir();
    const char *patterns[] = {"rt/test/*"};
    rl_lab_recorder *node = start_node(domain, home, patterns, 1, NULL);
    rl_lab_client *cl = NULL;
    assert_int_equal(rl_lab_client_new(&cl, domain), RL_OK);
    rl_lab_reply rep, r;
    prepare_and_begin(cl, "mixed", NULL, 0, &rep);

    /* The reliable writers first: the topic's first reader is reliable. */
    assert_int_equal(wait_exit(spawn_reliable(domain, 1)), 0);
    wait_received(node, 2);
    pid_t be = spawn_best_effort(domain);
    wait_received(node, 2 + 10);
    /* Reliable samples now reach both readers; the reliable one records them. The
       publisher writes once both readers matched: one matched first would take samples
       the other never sees (volatile), and the test is about who records them. */
    const int count = 30;
    setenv("LAB_TEST_PUB_FINAL_READERS", "2", 1);
    pid_t rel = spawn_reliable(domain, count);
    unsetenv("LAB_TEST_PUB_FINAL_READERS");
    assert_int_equal(wait_exit(rel), 0);
    wait_received(node, 2 + 10 + 2 * (uint64_t)count);
    assert_int_equal(kill(be, SIGTERM), 0);
    assert_int_equal(wait_exit(be), 0);
    assert_int_equal(rl_lab_client_finish(cl, "mixed", 0, "test ends", LONG_NS, &r), RL_OK);
    assert_true(r.ok);
    rl_lab_client_free(cl);
    rl_lab_recorder_free(node);

    final_seen fs;
    read_bag_final(rep.run_dir, "mixed", &fs);
    assert_int_equal(fs.count[0], 1 + count); /* not twice */
    assert_int_equal(fs.per_seq[0][0], 2);    /* seq 0 from each reliable publisher */
    for (int i = 1; i < count; i++)
        assert_int_equal(fs.per_seq[0][i], 1);
    assert_true(fs.count[1] >= 10);
    for (int i = 0; i < 4096; i++)
        assert_true(fs.per_seq[1][i] <= 1);
    json_object *m = read_manifest(rep.run_dir);
    json_object *t = manifest_topic(m, "rt/test/final");
    assert_int_equal(jint(t, "written"), fs.count[0] + fs.count[1]);
    json_object *qos = jget(t, "qos");
    assert_string_equal(jstr(qos, "reliability"), "reliable");
    assert_string_equal(jstr(qos, "durability"), "volatile");
    json_object *others = jget(qos, "other_readers");
    assert_int_equal(json_object_array_length(others), 1);
    assert_string_equal(jstr(json_object_array_get_idx(others, 0), "reliability"), "best_effort");
    json_object *app = jget(manifest_topic(m, "rt/test/appendable"), "qos");
    assert_string_equal(jstr(app, "reliability"), "reliable");
    assert_false(json_object_object_get_ex(app, "other_readers", NULL));
    assert_int_equal(json_object_array_length(jget(m, "unmatched")), 0);
    json_object_put(m);
    rl_test_tmpdir_free(home);
}

/* A queue of 5 messages held for the whole test (write delay 60 s) overflows on the 6th
 * sample, whatever the speed: the run FAILED. The publisher's samples that come after are
 * still counted, per topic, until the control flow's finish, so the manifest accounts for
 * every sample published: received = published, written + dropped = received. */
static void test_failed_run_counts_until_finish(void **state)
{
    (void)state;
    use_loopback();
    int domain = rl_test_domain_another();
    char *home = rl_test_tmpdir();
    rl_record_options eo;
    rl_record_options_default(&eo);
    eo.max_queued_messages = 5;
    eo.write_delay_ns = 60ll * 1000000000;
    const char *patterns[] = {"rt/test/*"};
    rl_lab_recorder *node = start_node(domain, home, patterns, 1, &eo);
    rl_lab_client *cl = NULL;
    assert_int_equal(rl_lab_client_new(&cl, domain), RL_OK);
    rl_lab_reply rep, r;
    prepare_and_begin(cl, "overflow", NULL, 0, &rep);

    const int count = 40;
    assert_int_equal(wait_exit(spawn_reliable(domain, count)), 0); /* every sample acked */
    wait_received(node, 2 * (uint64_t)count);
    rl_record_status st;
    rl_lab_recorder_status(node, &st);
    assert_int_equal(st.state, RL_RECORD_FAILED);
    assert_non_null(strstr(st.reason, "queue overflow"));
    assert_int_equal(st.received, 2 * (uint64_t)count);
    /* The finish is refused (the run FAILED) and ends the count; the manifest follows. */
    assert_int_equal(rl_lab_client_finish(cl, "overflow", 0, NULL, LONG_NS, &r), RL_OK);
    assert_false(r.ok);
    assert_int_equal(r.state, RL_RECORD_FAILED);
    int64_t deadline = rl_mono_ns() + LONG_NS;
    int64_t received = 0;
    while (received != 2 * count && rl_mono_ns() < deadline) {
        json_object *m = read_manifest(rep.run_dir);
        received = jint(jget(m, "totals"), "received");
        json_object_put(m);
        if (received != 2 * count)
            sleep_ms(10);
    }
    assert_int_equal(received, 2 * count);
    rl_lab_client_free(cl);
    rl_lab_recorder_free(node);

    json_object *m = read_manifest(rep.run_dir);
    assert_string_equal(jstr(m, "state"), "FAILED");
    const char *topics[] = {"rt/test/final", "rt/test/appendable"};
    for (int i = 0; i < 2; i++) {
        json_object *t = manifest_topic(m, topics[i]);
        assert_int_equal(jint(t, "received"), count);
        assert_int_equal(jint(t, "written") + jint(t, "dropped"), count);
        assert_int_equal(jint(t, "inside") + jint(t, "outside") + jint(t, "dropped"), count);
    }
    json_object *tot = jget(m, "totals");
    assert_int_equal(jint(tot, "written"), 5); /* what was queued when it overflowed */
    assert_int_equal(jint(tot, "dropped"), 2 * count - 5);
    json_object_put(m);
    rl_test_tmpdir_free(home);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_best_effort_writer_recorded, restore_stderr),
        cmocka_unit_test(test_mixed_reliability_recorded_once),
        cmocka_unit_test(test_failed_run_counts_until_finish),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
