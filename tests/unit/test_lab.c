/* Tests of the lab module on loopback (tests/cyclonedds-loopback.xml, a DDS domain of the
 * test's own): ROS 2 names and patterns; a recorder node driven by the client through
 * prepare/begin/START/STOP/finish that records topics of types it was not built with (a
 * publisher process from another IDL, @final and @appendable), checked by decoding the bag's
 * CDR by hand against what was published and the omgidl schema against hand-written IDL;
 * the heartbeat for a late joiner; a second recorder on the domain refused. Outcomes are
 * waited for with generous limits and asserted by count and content, never by speed. */
#include "rl_test.h"

#include "lab/lab_internal.h"
#include "runlab/error.h"
#include "runlab/lab.h"
#include "runlab/mcap.h"
#include "runlab/time.h"

#include "runlab_msgs.h"

#include <dds/ddsi/ddsi_serdata.h>
#include <dds/ddsi/ddsi_sertype.h>

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Limits for waits: far above what a busy 2-core machine needs. */
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

static void test_names(void **state)
{
    (void)state;
    char a[128], b[128];
    assert_int_equal(rl_lab_ros_topic("/chatter", a, sizeof a), RL_OK);
    assert_string_equal(a, "rt/chatter");
    assert_int_equal(rl_lab_ros_topic("chatter", a, sizeof a), RL_EINVAL);
    assert_int_equal(rl_lab_ros_topic("/chatter", a, 6), RL_ERANGE);
    assert_int_equal(rl_lab_ros_type("std_msgs/msg/String", a, sizeof a), RL_OK);
    assert_string_equal(a, "std_msgs::msg::dds_::String_");
    assert_int_equal(rl_lab_ros_type("runlab_msgs/srv/PrepareRecording_Request", a, sizeof a),
                     RL_OK);
    assert_string_equal(a, "runlab_msgs::srv::dds_::PrepareRecording_Request_");
    assert_int_equal(rl_lab_ros_type("std_msgs/String", a, sizeof a), RL_EINVAL);
    assert_int_equal(rl_lab_ros_type("a/b/c/d", a, sizeof a), RL_EINVAL);
    assert_int_equal(rl_lab_ros_service("/lab/evaluation/prepare_recording", a, b, sizeof a), RL_OK);
    assert_string_equal(a, "rq/lab/evaluation/prepare_recordingRequest");
    assert_string_equal(b, "rr/lab/evaluation/prepare_recordingReply");
    assert_int_equal(rl_lab_vehicle_topic(3, "state", a, sizeof a), RL_OK);
    assert_string_equal(a, "rt/vehicle/3/state");

    assert_true(rl_lab_topic_match("rt/lab/*", "rt/lab/system_trigger"));
    assert_true(rl_lab_topic_match("rt/lab/*", "rt/lab/evaluation/recording_state"));
    assert_true(rl_lab_topic_match("rt/vehicle/*/state", "rt/vehicle/12/state"));
    assert_false(rl_lab_topic_match("rt/vehicle/*/state", "rt/vehicle/12/observation"));
    assert_true(rl_lab_topic_match("*", ""));
    assert_true(rl_lab_topic_match("rt/clock", "rt/clock"));
    assert_false(rl_lab_topic_match("rt/clock", "rt/clock2"));
    assert_false(rl_lab_topic_match("rt/lab/*", "rt/la"));
    assert_true(rl_lab_topic_match("a*b*c", "aXXbYYbZc"));
    assert_false(rl_lab_topic_match("a*b*c", "aXXbYYbZ"));
}

/* ---- a CDR reader for the checks (independent of Cyclone and of runlab) ------------- */

typedef struct cdr {
    const uint8_t *p;
    size_t len, off; /* off counts from the first byte after the encapsulation header */
    size_t max_align; /* 8 for XCDR1, 4 for XCDR2 */
    int bad;
} cdr;

static int cdr_open(cdr *c, const uint8_t *data, size_t len, uint16_t *encaps)
{
    if (len < 4)
        return -1;
    *encaps = (uint16_t)(data[0] << 8 | data[1]);
    c->p = data + 4;
    c->len = len - 4;
    c->off = 0;
    c->bad = 0;
    c->max_align = (*encaps == 0x0001) ? 8 : 4;
    return 0;
}

static const uint8_t *cdr_take(cdr *c, size_t size, size_t align)
{
    if (align > c->max_align)
        align = c->max_align;
    c->off = (c->off + align - 1) / align * align;
    if (c->off + size > c->len) {
        c->bad = 1;
        return NULL;
    }
    const uint8_t *at = c->p + c->off;
    c->off += size;
    return at;
}

static uint32_t cdr_u32(cdr *c)
{
    const uint8_t *b = cdr_take(c, 4, 4);
    return b ? (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24
             : 0;
}

static uint64_t cdr_u64(cdr *c)
{
    const uint8_t *b = cdr_take(c, 8, 8);
    uint64_t v = 0;
    for (int i = 7; b && i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

static double cdr_f64(cdr *c)
{
    uint64_t u = cdr_u64(c);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static float cdr_f32(cdr *c)
{
    uint32_t u = cdr_u32(c);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The string's bytes without the NUL, copied into `out`. */
static void cdr_string(cdr *c, char *out, size_t cap)
{
    uint32_t n = cdr_u32(c);
    const uint8_t *b = n ? cdr_take(c, n, 1) : NULL;
    out[0] = '\0';
    if (b && n <= cap && b[n - 1] == '\0')
        memcpy(out, b, n);
    else
        c->bad = 1;
}

/* ---- helpers ----------------------------------------------------------------------- */

static pid_t spawn_publisher(const char *program, int domain, int count, const char *partition)
{
    const char *bin = getenv("RUNLAB_BIN");
    char path[4096], dom[16], cnt[16];
    snprintf(path, sizeof path, "%s/%s", bin ? bin : ".", program);
    snprintf(dom, sizeof dom, "%d", domain);
    snprintf(cnt, sizeof cnt, "%d", count);
    char *argv[] = {path, dom, cnt, (char *)partition, NULL};
    pid_t pid = 0;
    assert_int_equal(posix_spawn(&pid, path, NULL, NULL, argv, environ), 0);
    return pid;
}

static int wait_exit(pid_t pid)
{
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static rl_lab_recorder *start_node_with(int domain, const char *home, const char *pattern,
                                        const rl_lab_schema *schemas, size_t schema_count)
{
    rl_lab_recorder_options o;
    rl_lab_recorder_options_default(&o);
    o.schemas = schemas;
    o.schema_count = schema_count;
    o.domain = domain;
    o.home = home;
    const char *patterns[] = {pattern};
    o.patterns = patterns;
    o.pattern_count = pattern ? 1 : 0;
    rl_lab_recorder *n = NULL;
    int rc = rl_lab_recorder_new(&n, &o);
    if (rc < 0)
        fail_msg("recorder node: %s", rl_error_last());
    return n;
}

static rl_lab_recorder *start_node(int domain, const char *home, const char *pattern)
{
    return start_node_with(domain, home, pattern, NULL, 0);
}

/* Waits until the node has received at least `want` messages. */
static void wait_received(rl_lab_recorder *n, uint64_t want)
{
    int64_t deadline = rl_mono_ns() + LONG_NS;
    rl_record_status st;
    for (;;) {
        rl_lab_recorder_status(n, &st);
        if (st.received >= want || rl_mono_ns() > deadline)
            break;
        struct timespec ts = {0, 10 * 1000000};
        nanosleep(&ts, NULL);
    }
    assert_true(st.received >= want);
}

static const char expected_final_idl[] =
    "module lab_test { @final struct Vec3 { double x; double y; double z; }; };\n"
    "module lab_test { enum Mode { @value(0) IDLE, @value(1) RUNNING, @value(2) FAULT }; };\n"
    "module lab_test { @final struct FinalSample { @key unsigned long id; unsigned long long seq; "
    "string label; sequence<float> values; lab_test::Vec3 pos; lab_test::Mode mode; }; };\n";

static const char expected_appendable_idl[] =
    "module lab_test { @appendable struct AppendableSample { unsigned long id; "
    "unsigned long long seq; string label; double values[3]; }; };\n";

static int bytes_eq(rl_mcap_bytes b, const char *s)
{
    return b.len == strlen(s) && memcmp(b.data, s, b.len) == 0;
}

/* Checks one recorded FinalSample against what lab_test_pub sent; returns its seq. */
static int check_final(const rl_mcap_bytes *d)
{
    cdr c;
    uint16_t encaps = 0;
    assert_int_equal(cdr_open(&c, d->data, d->len, &encaps), 0);
    assert_true(encaps == 0x0001 || encaps == 0x0007); /* XCDR1 or XCDR2, little endian */
    assert_int_equal(cdr_u32(&c), 7);
    uint64_t seq = cdr_u64(&c);
    int i = (int)seq;
    char label[64], want[64];
    cdr_string(&c, label, sizeof label);
    snprintf(want, sizeof want, "sample-%d", i);
    assert_string_equal(label, want);
    uint32_t nv = cdr_u32(&c);
    assert_int_equal(nv, (uint32_t)(i % 3 == 0 ? 0 : i % 3));
    float vals[2] = {(float)i + 0.5f, (float)i * 2.0f};
    for (uint32_t k = 0; k < nv && k < 2; k++)
        assert_true(cdr_f32(&c) == vals[k]);
    assert_true(cdr_f64(&c) == (double)i);
    assert_true(cdr_f64(&c) == -(double)i);
    assert_true(cdr_f64(&c) == 0.25);
    assert_int_equal(cdr_u32(&c), (uint32_t)(i % 3));
    assert_false(c.bad);
    return i;
}

static int check_appendable(const rl_mcap_bytes *d)
{
    cdr c;
    uint16_t encaps = 0;
    assert_int_equal(cdr_open(&c, d->data, d->len, &encaps), 0);
    assert_int_equal(encaps, 0x0009); /* D_CDR2_LE: XCDR2 with a DHEADER */
    uint32_t dheader = cdr_u32(&c);
    size_t body_start = c.off;
    assert_int_equal(cdr_u32(&c), 9);
    int i = (int)cdr_u64(&c);
    char label[64], want[64];
    cdr_string(&c, label, sizeof label);
    snprintf(want, sizeof want, "app-%d", i);
    assert_string_equal(label, want);
    for (int k = 0; k < 3; k++)
        assert_true(cdr_f64(&c) == (double)(i + k));
    assert_false(c.bad);
    assert_int_equal(c.off - body_start, dheader);
    return i;
}

/* Reads the bag; checks schemas and every message of rt/test/final and rt/test/appendable
 * (`count` each, seq 0..count-1 once each). Returns the number of START/STOP triggers. */
static void check_bag(const char *run_dir, const char *run_id, int count, const char *final_idl,
                      int app_schema)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/bag/%s.mcap", run_dir, run_id);
    rl_mcap_reader_options ro;
    rl_mcap_reader_options_default(&ro);
    rl_mcap_reader *r = NULL;
    if (rl_mcap_reader_open(&r, path, &ro) < 0)
        fail_msg("bag: %s", rl_error_last());
    uint16_t schema_final = 0, schema_app = 0, chan_final = 0xffff, chan_app = 0xffff;
    int seen_final[256] = {0}, seen_app[256] = {0};
    int n_final = 0, n_app = 0;
    rl_mcap_record rec;
    int rc;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1) {
        if (rec.opcode == RL_MCAP_OP_HEADER) {
            /* omgidl schemas: the ros2 profile (ros2msg schemas) does not fit. */
            assert_int_equal(rec.u.header.profile.len, 0);
        } else if (rec.opcode == RL_MCAP_OP_SCHEMA) {
            const rl_mcap_schema *s = &rec.u.schema;
            if (bytes_eq(s->name, "lab_test::FinalSample")) {
                assert_true(bytes_eq(s->encoding, "omgidl"));
                if (!bytes_eq(s->data, final_idl))
                    fail_msg("schema:\n%.*s", (int)s->data.len, (const char *)s->data.data);
                schema_final = s->id;
            } else if (bytes_eq(s->name, "lab_test::AppendableSample")) {
                assert_true(bytes_eq(s->encoding, "omgidl"));
                if (!bytes_eq(s->data, expected_appendable_idl))
                    fail_msg("schema:\n%.*s", (int)s->data.len, (const char *)s->data.data);
                schema_app = s->id;
            }
        } else if (rec.opcode == RL_MCAP_OP_CHANNEL) {
            const rl_mcap_channel *ch = &rec.u.channel;
            if (bytes_eq(ch->topic, "rt/test/final")) {
                assert_true(schema_final > 0);
                assert_true(bytes_eq(ch->message_encoding, "cdr"));
                assert_int_equal(ch->schema_id, schema_final);
                chan_final = ch->id;
            } else if (bytes_eq(ch->topic, "rt/test/appendable")) {
                assert_true(bytes_eq(ch->message_encoding, "cdr"));
                assert_int_equal(ch->schema_id, schema_app);
                chan_app = ch->id;
            }
        } else if (rec.opcode == RL_MCAP_OP_MESSAGE) {
            const rl_mcap_message *m = &rec.u.message;
            if (m->channel_id == chan_final) {
                int i = check_final(&m->data);
                assert_true(i >= 0 && i < count && i < 256);
                seen_final[i]++;
                n_final++;
            } else if (m->channel_id == chan_app) {
                int i = check_appendable(&m->data);
                assert_true(i >= 0 && i < count && i < 256);
                seen_app[i]++;
                n_app++;
            }
        }
    }
    if (rc < 0)
        fail_msg("bag: %s", rl_error_last());
    rl_mcap_reader_close(r);
    assert_true(schema_final > 0);
    assert_true(app_schema ? schema_app > 0 : schema_app == 0);
    assert_int_equal(n_final, count);
    assert_int_equal(n_app, count);
    for (int i = 0; i < count; i++) {
        assert_int_equal(seen_final[i], 1);
        assert_int_equal(seen_app[i], 1);
    }
}

/* Two vehicles' READY, published transient-local (keep-last-1, as a vehicle latches it)
 * before prepare; returns the participant (delete it to end the writers). */
static dds_entity_t publish_ready_before_prepare(int domain, rl_lab_recorder *node)
{
    dds_entity_t pp = dds_create_participant((dds_domainid_t)domain, NULL, NULL);
    assert_true(pp > 0);
    dds_entity_t t = dds_create_topic(pp, &runlab_msgs_msg_dds__ReadyStatus__desc,
                                      RL_LAB_TOPIC_READY, NULL, NULL);
    assert_true(t > 0);
    dds_qos_t *q = lab_qos(1, 1);
    for (int v = 1; v <= 2; v++) {
        dds_entity_t w = dds_create_writer(pp, t, q, NULL);
        assert_true(w > 0);
        char source[32];
        snprintf(source, sizeof source, "vehicle_%d", v);
        runlab_msgs_msg_dds__ReadyStatus_ m = {.source_id = source, .vehicle_id = (uint8_t)v,
                                               .stamp = (uint64_t)rl_time_now_ns()};
        assert_int_equal(dds_write(w, &m), DDS_RETCODE_OK);
    }
    dds_delete_qos(q);
    /* The recorder subscribes to the lab topics and holds both while it is IDLE. */
    int64_t deadline = rl_mono_ns() + LONG_NS;
    while (rl_lab_recorder_held_count(node) < 2 && rl_mono_ns() < deadline) {
        struct timespec ts = {0, 10 * 1000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(rl_lab_recorder_held_count(node), 2);
    return pp;
}

/* The bag holds both READY samples, each with its vehicle id, logged before `before_ns`. */
static void check_ready_in_bag(const char *run_dir, const char *run_id, int64_t before_ns)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/bag/%s.mcap", run_dir, run_id);
    rl_mcap_reader *r = NULL;
    if (rl_mcap_reader_open(&r, path, NULL) < 0)
        fail_msg("bag: %s", rl_error_last());
    uint16_t chan = 0xffff;
    int seen[3] = {0};
    rl_mcap_record rec;
    while (rl_mcap_reader_next(r, &rec) == 1) {
        if (rec.opcode == RL_MCAP_OP_CHANNEL && bytes_eq(rec.u.channel.topic, RL_LAB_TOPIC_READY))
            chan = rec.u.channel.id;
        if (rec.opcode == RL_MCAP_OP_MESSAGE && rec.u.message.channel_id == chan) {
            /* CDR: 4-byte header, string source_id (uint32 length incl. NUL, bytes), then
               the uint8 vehicle id. */
            const uint8_t *d = rec.u.message.data.data;
            assert_true(rec.u.message.data.len > 8);
            uint32_t slen = (uint32_t)d[4] | (uint32_t)d[5] << 8 | (uint32_t)d[6] << 16 |
                            (uint32_t)d[7] << 24;
            assert_true(8 + slen < rec.u.message.data.len);
            unsigned v = d[8 + slen];
            char want[32];
            snprintf(want, sizeof want, "vehicle_%u", v);
            assert_true(v >= 1 && v <= 2);
            assert_memory_equal(d + 8, want, strlen(want) + 1);
            assert_true(rec.u.message.log_time < (uint64_t)before_ns);
            seen[v]++;
        }
    }
    rl_mcap_reader_close(r);
    assert_int_equal(seen[1], 1);
    assert_int_equal(seen[2], 1);
}

/* A recorder node recording `pattern` on a domain of the test's own, a client, and two
 * vehicles' latched READY published before prepare. */
typedef struct lab_setup {
    int domain;
    char *home;
    rl_lab_recorder *node;
    rl_lab_client *cl;
    dds_entity_t ready_pp;
} lab_setup;

static void lab_setup_open(lab_setup *ls, const char *pattern)
{
    use_loopback();
    ls->domain = rl_test_domain();
    ls->home = rl_test_tmpdir();
    ls->node = start_node(ls->domain, ls->home, pattern);
    ls->cl = NULL;
    assert_int_equal(rl_lab_client_new(&ls->cl, ls->domain), RL_OK);
    ls->ready_pp = 0;
}

static void lab_setup_close(lab_setup *ls)
{
    if (ls->ready_pp > 0)
        dds_delete(ls->ready_pp);
    rl_lab_client_free(ls->cl);
    rl_lab_recorder_free(ls->node);
    rl_test_tmpdir_free(ls->home);
}

/* The whole sequence with a publisher of types the recorder was not built with. */
static void test_record_unknown_types(void **state)
{
    (void)state;
    lab_setup ls;
    lab_setup_open(&ls, "rt/test/*");
    int domain = ls.domain;
    rl_lab_recorder *node = ls.node;
    rl_lab_client *cl = ls.cl;

    rl_lab_heartbeat hb;
    assert_int_equal(rl_lab_client_wait_heartbeat(cl, 0, LONG_NS, &hb), RL_OK);
    assert_int_equal(hb.state, RL_RECORD_IDLE);
    assert_int_equal(hb.domain, domain);
    ls.ready_pp = publish_ready_before_prepare(domain, node);

    const int vehicles[] = {1, 2};
    rl_record_run run = {.run_id = "lab-e2e", .vehicles = vehicles, .vehicle_count = 2,
                         .planner = "test"};
    rl_lab_reply rep;
    int64_t prepare_asked = rl_time_now_ns();
    assert_int_equal(rl_lab_client_prepare(cl, &run, LONG_NS, &rep), RL_OK);
    assert_int_equal(rl_lab_recorder_held_count(node), 0);
    if (!rep.ok)
        fail_msg("prepare refused: %s", rep.message);
    assert_int_equal(rep.state, RL_RECORD_ARMED);
    assert_string_equal(rep.run_id, "lab-e2e");
    assert_true(rep.run_dir[0] != '\0');
    /* A second prepare is refused with a reason. */
    rl_lab_reply again;
    assert_int_equal(rl_lab_client_prepare(cl, &run, LONG_NS, &again), RL_OK);
    assert_false(again.ok);
    assert_true(again.message[0] != '\0');
    /* Begin for another run id is refused; for this one it is done. */
    assert_int_equal(rl_lab_client_begin(cl, "other-run", LONG_NS, &again), RL_OK);
    assert_false(again.ok);
    assert_int_equal(rl_lab_client_begin(cl, "lab-e2e", LONG_NS, &again), RL_OK);
    assert_true(again.ok);
    assert_int_equal(again.state, RL_RECORD_RECORDING);

    int64_t start = rl_time_now_ns();
    assert_int_equal(rl_lab_client_trigger(cl, RL_LAB_START, start), RL_OK);
    const int count = 25;
    pid_t pub = spawn_publisher("lab_test_pub", domain, count, NULL);
    assert_int_equal(wait_exit(pub), 0);
    /* Both topics plus the START trigger (rt/lab/system_trigger is a lab topic). */
    wait_received(node, 2 * (uint64_t)count + 1);
    int64_t stop = rl_time_now_ns();
    assert_int_equal(rl_lab_client_trigger(cl, RL_LAB_STOP, stop), RL_OK);
    assert_int_equal(rl_lab_client_finish(cl, "lab-e2e", stop, NULL, LONG_NS, &again), RL_OK);
    if (!again.ok)
        fail_msg("finish refused: %s", again.message);
    assert_int_equal(again.state, RL_RECORD_COMPLETE);

    /* The heartbeat says so too, also to a reader that joins now (transient-local). */
    rl_lab_client *late = NULL;
    assert_int_equal(rl_lab_client_new(&late, domain), RL_OK);
    assert_int_equal(rl_lab_client_wait_heartbeat(late, 0, LONG_NS, &hb), RL_OK);
    assert_int_equal(hb.state, RL_RECORD_COMPLETE);
    assert_string_equal(hb.run_id, "lab-e2e");
    assert_string_equal(hb.run_dir, rep.run_dir);
    assert_true(hb.written >= 2 * (uint64_t)count);
    assert_true(hb.topics >= 3);
    /* In the process, the node says how many topics it records: what the heartbeat said,
       or more if one was found since. */
    size_t topics = rl_lab_recorder_topic_count(node);
    assert_true(topics >= 3 && topics >= hb.topics);
    rl_lab_client_free(late);

    check_bag(rep.run_dir, "lab-e2e", count, expected_final_idl, 1);
    check_ready_in_bag(rep.run_dir, "lab-e2e", prepare_asked);
    lab_setup_close(&ls);
}

/* A publisher without type information (idlc -t) in partition "robot1": recorded raw, with
 * FinalSample's schema from the config and AppendableSample without one. */
static void test_writer_without_type_info(void **state)
{
    (void)state;
    use_loopback();
    int domain = rl_test_domain();
    char *home = rl_test_tmpdir();
    char config_idl[1024];
    snprintf(config_idl, sizeof config_idl, "// from the config\n%s", expected_final_idl);
    const rl_lab_schema schemas[] = {{"lab_test::FinalSample", config_idl}};
    rl_lab_recorder *node = start_node_with(domain, home, "rt/test/*", schemas, 1);
    rl_lab_client *cl = NULL;
    assert_int_equal(rl_lab_client_new(&cl, domain), RL_OK);
    rl_record_run run = {.run_id = "lab-notype"};
    rl_lab_reply rep, r2;
    assert_int_equal(rl_lab_client_prepare(cl, &run, LONG_NS, &rep), RL_OK);
    assert_true(rep.ok);
    assert_int_equal(rl_lab_client_begin(cl, NULL, LONG_NS, &r2), RL_OK);
    assert_true(r2.ok);
    const int count = 12;
    pid_t pub = spawn_publisher("lab_test_pub_notype", domain, count, "robot1");
    assert_int_equal(wait_exit(pub), 0);
    wait_received(node, 2 * (uint64_t)count);
    assert_int_equal(rl_lab_client_finish(cl, NULL, 0, NULL, LONG_NS, &r2), RL_OK);
    assert_true(r2.ok);
    assert_int_equal(r2.state, RL_RECORD_INTERRUPTED); /* finished without STOP */
    check_bag(rep.run_dir, "lab-notype", count, config_idl, 0);
    rl_lab_client_free(cl);
    rl_lab_recorder_free(node);
    rl_test_tmpdir_free(home);
}

/* One node, two runs (rosbag2 style: prepare again after a run ended): each run has its own
 * directory and bag with exactly its own samples, and the second run records the latched
 * (transient-local) READY samples again, as a new `ros2 bag record` would. */
static void test_several_runs(void **state)
{
    (void)state;
    lab_setup ls;
    lab_setup_open(&ls, "rt/test/*");
    int domain = ls.domain;
    rl_lab_recorder *node = ls.node;
    rl_lab_client *cl = ls.cl;
    ls.ready_pp = publish_ready_before_prepare(domain, node);

    /* Run 1: COMPLETE. */
    rl_record_run run = {.run_id = "run-one"};
    rl_lab_reply rep1, rep2, r;
    assert_int_equal(rl_lab_client_prepare(cl, &run, LONG_NS, &rep1), RL_OK);
    if (!rep1.ok)
        fail_msg("prepare refused: %s", rep1.message);
    assert_int_equal(rl_lab_client_begin(cl, "run-one", LONG_NS, &r), RL_OK);
    assert_true(r.ok);
    assert_int_equal(rl_lab_client_trigger(cl, RL_LAB_START, rl_time_now_ns()), RL_OK);
    const int count1 = 10, count2 = 7;
    assert_int_equal(wait_exit(spawn_publisher("lab_test_pub", domain, count1, NULL)), 0);
    wait_received(node, 2 * (uint64_t)count1 + 2 + 1); /* + READY x2 + START */
    int64_t stop = rl_time_now_ns();
    assert_int_equal(rl_lab_client_trigger(cl, RL_LAB_STOP, stop), RL_OK);
    assert_int_equal(rl_lab_client_finish(cl, "run-one", stop, NULL, LONG_NS, &r), RL_OK);
    if (!r.ok)
        fail_msg("finish refused: %s", r.message);
    assert_int_equal(r.state, RL_RECORD_COMPLETE);
    char dir[4096];
    assert_int_equal(rl_lab_recorder_run(node, dir, sizeof dir), RL_RECORD_COMPLETE);
    assert_string_equal(dir, rep1.run_dir);
    /* begin again on the ended run: refused, with a reason. */
    assert_int_equal(rl_lab_client_begin(cl, "run-one", LONG_NS, &r), RL_OK);
    assert_false(r.ok);
    assert_true(r.message[0] != '\0');

    /* Run 2 on the same node: a new directory, then INTERRUPTED by a reason. */
    run.run_id = "run-two";
    assert_int_equal(rl_lab_client_prepare(cl, &run, LONG_NS, &rep2), RL_OK);
    if (!rep2.ok)
        fail_msg("second prepare refused: %s", rep2.message);
    assert_int_equal(rep2.state, RL_RECORD_ARMED);
    assert_string_equal(rep2.run_id, "run-two");
    assert_string_not_equal(rep2.run_dir, rep1.run_dir);
    rl_record_status st;
    rl_lab_recorder_status(node, &st);
    assert_string_equal(st.run_id, "run-two");
    assert_int_equal(rl_lab_recorder_run(node, dir, sizeof dir), RL_RECORD_ARMED);
    assert_string_equal(dir, rep2.run_dir);
    assert_int_equal(rl_lab_client_begin(cl, "run-two", LONG_NS, &r), RL_OK);
    assert_true(r.ok);
    assert_int_equal(wait_exit(spawn_publisher("lab_test_pub", domain, count2, NULL)), 0);
    /* Its own samples, READY x2 again and the trigger's latched STOP. */
    wait_received(node, 2 * (uint64_t)count2 + 2 + 1);
    int64_t before = rl_time_now_ns();
    assert_int_equal(rl_lab_client_finish(cl, "run-two", 0, "test ends", LONG_NS, &r), RL_OK);
    assert_true(r.ok);
    assert_int_equal(r.state, RL_RECORD_INTERRUPTED);
    rl_lab_heartbeat hb;
    assert_int_equal(rl_lab_client_wait_heartbeat(cl, 0, LONG_NS, &hb), RL_OK);
    assert_string_equal(hb.run_id, "run-two");

    check_bag(rep1.run_dir, "run-one", count1, expected_final_idl, 1);
    check_bag(rep2.run_dir, "run-two", count2, expected_final_idl, 1);
    check_ready_in_bag(rep2.run_dir, "run-two", before);
    lab_setup_close(&ls);
}

/* A second recorder on the same domain (other home, other lock) is refused through the
 * first one's heartbeat, and the message names its pid. */
static void test_second_recorder_refused(void **state)
{
    (void)state;
    use_loopback();
    int domain = rl_test_domain();
    char *home1 = rl_test_tmpdir(), *home2 = rl_test_tmpdir();
    rl_lab_recorder *first = start_node(domain, home1, NULL);
    rl_lab_recorder_options o;
    rl_lab_recorder_options_default(&o);
    o.domain = domain;
    o.home = home2;
    o.peer_wait_ns = LONG_NS; /* ends as soon as a heartbeat is seen */
    rl_lab_recorder *second = NULL;
    assert_int_equal(rl_lab_recorder_new(&second, &o), RL_EBUSY);
    char pid[32];
    snprintf(pid, sizeof pid, "pid %d", (int)getpid());
    if (!strstr(rl_error_last(), pid))
        fail_msg("message does not name the holder: %s", rl_error_last());
    /* On the same host and home the engine's lock refuses it before the network. */
    o.home = home1;
    assert_int_equal(rl_lab_recorder_new(&second, &o), RL_EBUSY);
    rl_lab_recorder_free(first);
    rl_test_tmpdir_free(home1);
    rl_test_tmpdir_free(home2);
}

/* A raw sample of `size` bytes (all `fill`) of type `tp`, as Cyclone makes one from received
 * bytes. */
static struct ddsi_serdata *raw_sample(const struct ddsi_sertype *tp, size_t size, int fill)
{
    unsigned char *bytes = malloc(size ? size : 1);
    assert_non_null(bytes);
    memset(bytes, fill, size);
    ddsrt_iovec_t iov = {.iov_base = bytes, .iov_len = (ddsrt_iov_len_t)size};
    struct ddsi_serdata *d = ddsi_serdata_from_ser_iov(tp, SDK_DATA, 1, &iov, size);
    free(bytes);
    assert_non_null(d);
    assert_int_equal(ddsi_serdata_size(d), size);
    const unsigned char *got = lab_rawtype_bytes(d);
    assert_non_null(got);
    for (size_t i = 0; i < size; i++)
        assert_int_equal(got[i], fill);
    return d;
}

/* Raw samples above 1 KiB come from a pool of freed ones, the most recently freed first, of
 * the right size class and holding their own bytes; small and very large ones do not; the
 * pool keeps at most 32 MiB, and trimming empties it. */
static void test_rawtype_pool(void **state)
{
    (void)state;
    struct ddsi_sertype *tp = lab_rawtype_new("Raw", 0);
    assert_non_null(tp);
    lab_rawtype_pool_trim();
    assert_int_equal(lab_rawtype_pool_bytes(), 0);

    struct ddsi_serdata *a = raw_sample(tp, 10000, 1);
    const void *a_bytes = lab_rawtype_bytes(a);
    ddsi_serdata_unref(a);
    size_t kept = lab_rawtype_pool_bytes();
    assert_true(kept >= 10000 && kept <= 10000 * 5 / 4 + 256);
    struct ddsi_serdata *b = raw_sample(tp, 9000, 2); /* the same class: a's buffer again */
    assert_ptr_equal(lab_rawtype_bytes(b), a_bytes);
    assert_int_equal(lab_rawtype_pool_bytes(), 0);
    struct ddsi_serdata *c = raw_sample(tp, 30000, 3); /* another class: a new buffer */
    assert_ptr_not_equal(lab_rawtype_bytes(c), a_bytes);
    ddsi_serdata_unref(c);
    ddsi_serdata_unref(b);
    assert_true(lab_rawtype_pool_bytes() >= 39000);
    lab_rawtype_pool_trim();
    assert_int_equal(lab_rawtype_pool_bytes(), 0);

    ddsi_serdata_unref(raw_sample(tp, 100, 4)); /* small: malloc and free */
    ddsi_serdata_unref(raw_sample(tp, (size_t)5 << 20, 5)); /* above 4 MiB: the same */
    assert_int_equal(lab_rawtype_pool_bytes(), 0);

    enum { MANY = 4000 }; /* 40 MB of 10 KB samples: the pool keeps at most 32 MiB */
    struct ddsi_serdata **many = malloc(MANY * sizeof *many);
    assert_non_null(many);
    for (size_t i = 0; i < MANY; i++)
        many[i] = raw_sample(tp, 10000, (int)(i & 0xff));
    for (size_t i = 0; i < MANY; i++)
        ddsi_serdata_unref(many[i]);
    free(many);
    assert_true(lab_rawtype_pool_bytes() > ((size_t)30 << 20));
    assert_true(lab_rawtype_pool_bytes() <= ((size_t)32 << 20));
    lab_rawtype_pool_trim();
    assert_int_equal(lab_rawtype_pool_bytes(), 0);
    ddsi_sertype_unref(tp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_rawtype_pool),
        cmocka_unit_test(test_record_unknown_types),
        cmocka_unit_test(test_writer_without_type_info),
        cmocka_unit_test(test_second_recorder_refused),
        cmocka_unit_test(test_several_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
