/* The recorder and ROS 2's types. /clock is rosgraph_msgs/Clock, whose schema the recorder
 * knows for ROS 2 writers (they send no type information). The work-around for Cyclone
 * 0.10.2's idlc describing int8 as char in the type information a writer sends
 * (docs/msgdef.md): a publisher process (lab_test_pub --int8, idlc-generated
 * code of tests/idl/lab_test.idl) writes int8 values -128, -1, 0, 127; the recorder node
 * records them. Without a schema in its config the bag's schema (from the type information)
 * says char and -128 reads as 128 -- the documented limitation, checked so that the docs
 * go stale visibly if Cyclone changes; with the type's schema in the config, that schema is
 * the bag's and the values read back as written. On loopback, in a domain of the test's own. */
#include "rl_test.h"

#include "lab/lab_internal.h"

#include "runlab/error.h"
#include "runlab/lab.h"
#include "runlab/mcap.h"
#include "runlab/msgdef.h"
#include "runlab/time.h"

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

#define LONG_NS (60 * 1000000000ll) /* far above what a busy 2-core machine needs */

static const char int8_idl[] =
    "module lab_test { @final struct Int8Sample { int8 v; int8 pair[2]; }; };\n";

static int run_publisher(int domain)
{
    const char *bin = getenv("RUNLAB_BIN");
    char path[4096], dom[16];
    snprintf(path, sizeof path, "%s/lab_test_pub", bin ? bin : ".");
    snprintf(dom, sizeof dom, "%d", domain);
    char *argv[] = {path, "--int8", dom, NULL};
    pid_t pid = 0;
    assert_int_equal(posix_spawn(&pid, path, NULL, NULL, argv, environ), 0);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int bytes_eq(rl_mcap_bytes b, const char *s)
{
    return b.len == strlen(s) && memcmp(b.data, s, b.len) == 0;
}

/* Records one run of rt/test/int8 (schemas: the node's config) and returns the bag's schema
 * text for it and the decoded messages, one JSON object a line (both malloc'd). */
static void record_int8(const rl_lab_schema *schemas, size_t nschemas, char **schema, char **json)
{
    int domain = rl_test_domain();
    char *home = rl_test_tmpdir();
    rl_lab_recorder_options o;
    rl_lab_recorder_options_default(&o);
    o.domain = domain;
    o.home = home;
    o.lock_dir = home; /* a lock of the test's own */
    o.schemas = schemas;
    o.schema_count = nschemas;
    const char *patterns[] = {"rt/test/int8"};
    o.patterns = patterns;
    o.pattern_count = 1;
    rl_lab_recorder *node = NULL;
    if (rl_lab_recorder_new(&node, &o) < 0)
        fail_msg("recorder node: %s", rl_error_last());
    rl_lab_client *cl = NULL;
    assert_int_equal(rl_lab_client_new(&cl, domain), RL_OK);
    rl_record_run run = {.run_id = "int8"};
    rl_lab_reply rep, r2;
    assert_int_equal(rl_lab_client_prepare(cl, &run, LONG_NS, &rep), RL_OK);
    assert_true(rep.ok);
    assert_int_equal(rl_lab_client_begin(cl, NULL, LONG_NS, &r2), RL_OK);
    assert_true(r2.ok);
    assert_int_equal(run_publisher(domain), 0); /* it waits for the recorder's acks */
    int64_t deadline = rl_mono_ns() + LONG_NS;
    rl_record_status st;
    do {
        rl_lab_recorder_status(node, &st);
        struct timespec ts = {0, 10 * 1000000};
        nanosleep(&ts, NULL);
    } while (st.received < 4 && rl_mono_ns() < deadline);
    assert_true(st.received >= 4);
    assert_int_equal(rl_lab_client_finish(cl, NULL, 0, NULL, LONG_NS, &r2), RL_OK);
    assert_true(r2.ok);
    rl_lab_client_free(cl);
    rl_lab_recorder_free(node);

    char path[4096];
    snprintf(path, sizeof path, "%s/bag/int8.mcap", rep.run_dir);
    rl_mcap_reader_options ro;
    rl_mcap_reader_options_default(&ro);
    rl_mcap_reader *r = NULL;
    if (rl_mcap_reader_open(&r, path, &ro) < 0)
        fail_msg("bag: %s", rl_error_last());
    rl_msgdef *def = NULL;
    uint16_t chan = 0xffff, schema_id = 0;
    size_t used = 0;
    *schema = NULL;
    *json = calloc(1, 1);
    rl_mcap_record rec;
    int rc;
    while ((rc = rl_mcap_reader_next(r, &rec)) == 1) {
        if (rec.opcode == RL_MCAP_OP_SCHEMA && bytes_eq(rec.u.schema.name, "lab_test::Int8Sample") &&
            !*schema) { /* the summary repeats it */
            const rl_mcap_schema *s = &rec.u.schema;
            *schema = strndup((const char *)s->data.data, s->data.len);
            schema_id = s->id;
            assert_int_equal(rl_msgdef_parse(&def, "omgidl", "lab_test::Int8Sample",
                                             (const char *)s->data.data, s->data.len), RL_OK);
        } else if (rec.opcode == RL_MCAP_OP_CHANNEL && bytes_eq(rec.u.channel.topic, "rt/test/int8")) {
            assert_int_equal(rec.u.channel.schema_id, schema_id);
            chan = rec.u.channel.id;
        } else if (rec.opcode == RL_MCAP_OP_MESSAGE && rec.u.message.channel_id == chan) {
            char *buf = NULL;
            size_t bcap = 0, n = 0;
            assert_non_null(def);
            assert_int_equal(rl_msg_to_json(def, rec.u.message.data.data, rec.u.message.data.len,
                                            &buf, &bcap, &n), RL_OK);
            char *grown = realloc(*json, used + n + 2);
            assert_non_null(grown);
            *json = grown;
            memcpy(*json + used, buf, n);
            used += n;
            (*json)[used++] = '\n';
            (*json)[used] = '\0';
            free(buf);
        }
    }
    if (rc < 0)
        fail_msg("bag: %s", rl_error_last());
    rl_mcap_reader_close(r);
    rl_msgdef_free(def);
    assert_non_null(*schema);
    rl_test_tmpdir_free(home);
}

static const char written[] = "{\"v\":-128,\"pair\":[-128,127]}\n{\"v\":-1,\"pair\":[-1,0]}\n"
                              "{\"v\":0,\"pair\":[0,-1]}\n{\"v\":127,\"pair\":[127,-128]}\n";

/* Without a config schema: the type information's char, and -128 as 128. */
static void test_int8_from_type_information(void **state)
{
    (void)state;
    char *schema = NULL, *json = NULL;
    record_int8(NULL, 0, &schema, &json);
    if (!strstr(schema, "char v;"))
        fail_msg("Cyclone's type information no longer says char for int8 (update "
                 "docs/msgdef.md):\n%s", schema);
    assert_string_equal(json, "{\"v\":128,\"pair\":[128,127]}\n{\"v\":255,\"pair\":[255,0]}\n"
                              "{\"v\":0,\"pair\":[0,255]}\n{\"v\":127,\"pair\":[127,128]}\n");
    free(schema);
    free(json);
}

/* With the type's schema in the recorder's config: that schema, and the values as written. */
static void test_int8_schema_from_config(void **state)
{
    (void)state;
    const rl_lab_schema schemas[] = {{"lab_test::Int8Sample", int8_idl}};
    char *schema = NULL, *json = NULL;
    record_int8(schemas, 1, &schema, &json);
    assert_string_equal(schema, int8_idl);
    assert_string_equal(json, written);
    free(schema);
    free(json);
}

/* /clock as ROS 2 types it: the recorder's schema for rosgraph_msgs::msg::dds_::Clock_ (with
 * builtin_interfaces' Time) decodes what a ROS 2 clock publisher writes; runlab has no Clock
 * of its own any more. */
static void test_clock_is_rosgraph_msgs(void **state)
{
    (void)state;
    assert_null(lab_builtin_schema("runlab_msgs::msg::dds_::Clock_"));
    char *idl = lab_builtin_schema("rosgraph_msgs::msg::dds_::Clock_");
    assert_non_null(idl);
    assert_string_equal(idl, "module builtin_interfaces { module msg { module dds_ { @final struct Time_ "
                             "{ long sec; unsigned long nanosec; }; }; }; };\n"
                             "module rosgraph_msgs { module msg { module dds_ { @final struct Clock_ "
                             "{ builtin_interfaces::msg::dds_::Time_ clock; }; }; }; };\n");
    rl_msgdef *d = NULL;
    assert_int_equal(rl_msgdef_parse(&d, "omgidl", "rosgraph_msgs::msg::dds_::Clock_", idl, strlen(idl)), RL_OK);
    /* rmw_cyclonedds: CDR_LE, sec = -2, nanosec = 500000000 */
    const uint8_t cdr[] = {0, 1, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0x00, 0x65, 0xcd, 0x1d};
    char *buf = NULL;
    size_t cap = 0, n = 0;
    assert_int_equal(rl_msg_to_json(d, cdr, sizeof cdr, &buf, &cap, &n), RL_OK);
    assert_string_equal(buf, "{\"clock\":{\"sec\":-2,\"nanosec\":500000000}}");
    free(buf);
    rl_msgdef_free(d);
    free(idl);
}

/* The recorder warns of a discovered type only when the type reaches a char (the warning
 * of Cyclone 0.10.2's int8-as-char): every schema's type table holds an entry per
 * primitive kind, char among them, so a look over the whole table warned of every type. */
static void test_char_detection(void **state)
{
    (void)state;
    /* What the type information of lab_test::Int8Sample says (int8 -> char). */
    const char *int8_as_char =
        "module lab_test { @final struct Int8Sample { char v; char pair[2]; }; };";
    assert_true(lab_schema_has_char(int8_as_char, "lab_test::Int8Sample"));
    const char *nested = "module m { @final struct In { sequence<char> s; }; "
                         "@final struct Out { double x; In inner[3]; }; };";
    assert_true(lab_schema_has_char(nested, "m::Out"));
    const char *in_union = "module m { union U switch (long) { case 1: char c; case 2: double d; }; "
                           "@final struct S { U u; }; };";
    assert_true(lab_schema_has_char(in_union, "m::S"));
    /* runlab's own types: octet, bool, numbers, strings; no char anywhere. */
    const char *types[] = {"runlab_msgs::msg::dds_::VehicleState_",
                           "runlab_msgs::msg::dds_::SystemTrigger_",
                           "runlab_msgs::msg::dds_::ReadyStatus_",
                           "runlab_msgs::msg::dds_::VehicleObservation_",
                           "runlab_msgs::msg::dds_::ControlHeartbeat_"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        char *idl = lab_builtin_schema(types[i]);
        assert_non_null(idl);
        if (lab_schema_has_char(idl, types[i]))
            fail_msg("%s: no char, yet detected", types[i]);
        free(idl);
    }
    /* A char the root does not reach (another struct of the schema) is not the type's. */
    const char *apart = "module m { @final struct Other { char c; }; @final struct T { octet b; }; };";
    assert_false(lab_schema_has_char(apart, "m::T"));
    assert_false(lab_schema_has_char("not idl", "m::T"));

    /* Type information is outside input: 40 structs, each holding two of the one before,
     * reach the first by 2^40 paths. Each type is looked at once, so the answer comes at
     * once, char at the bottom or not. */
    for (int with_char = 0; with_char < 2; with_char++) {
        static char dag[16384];
        int len = snprintf(dag, sizeof dag, "module m { @final struct T0 { %s v; }; ",
                           with_char ? "char" : "octet");
        for (int i = 1; i <= 40; i++)
            len += snprintf(dag + len, sizeof dag - (size_t)len,
                            "@final struct T%d { T%d a; T%d b; double x; }; ", i, i - 1, i - 1);
        snprintf(dag + len, sizeof dag - (size_t)len, "};");
        assert_int_equal(lab_schema_has_char(dag, "m::T40"), with_char);
    }
}

int main(void)
{
    if (!getenv("CYCLONEDDS_URI")) {
        const char *src = getenv("RUNLAB_SOURCE");
        char uri[4096];
        snprintf(uri, sizeof uri, "file://%s/tests/cyclonedds-loopback.xml", src ? src : ".");
        setenv("CYCLONEDDS_URI", uri, 1);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_is_rosgraph_msgs),
        cmocka_unit_test(test_int8_from_type_information),
        cmocka_unit_test(test_int8_schema_from_config),
        cmocka_unit_test(test_char_detection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
