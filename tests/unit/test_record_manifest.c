/* Tests of the one reader of a run's manifest.json (rl_record_manifest_read): what a
 * recorder wrote reads back field by field; a hand-edited manifest is read as far as it
 * goes (a field of another type stays unset, never an error); a missing, broken or
 * non-object manifest is an error naming the file; the document can be kept. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/json.h"
#include "runlab/record.h"
#include "runlab/time.h"

#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void write_manifest(const char *dir, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    rl_test_write_file(path, text, strlen(text));
}

/* A recorder's own manifest, START and STOP given: every field the readers use. */
static void test_recorded_run_reads_back(void **state)
{
    (void)state;
    char *home = rl_test_tmpdir();
    rl_record_options o;
    rl_record_options_default(&o);
    o.home = home;
    o.minimum_free_bytes = 0;
    o.lab_domain = rl_test_domain();
    rl_recorder *r = NULL;
    assert_int_equal(rl_recorder_new(&r, &o), RL_OK);
    const int vehicles[] = {3, 1};
    rl_record_run run = {.run_id = "manifest-1", .vehicles = vehicles, .vehicle_count = 2,
                         .planner = "astar"};
    if (rl_recorder_prepare(r, &run) != RL_OK)
        fail_msg("prepare: %s", rl_error_last());
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    int64_t start = rl_time_now_ns();
    int64_t stop = start + 2500000000ll;
    assert_int_equal(rl_recorder_mark_start(r, start), RL_OK);
    assert_int_equal(rl_recorder_mark_stop(r, stop), RL_OK);
    assert_int_equal(rl_recorder_finish(r, "done here"), RL_OK);
    assert_int_equal(rl_recorder_wait(r), RL_OK);

    rl_record_manifest m;
    if (rl_record_manifest_read(rl_recorder_run_dir(r), &m) != RL_OK)
        fail_msg("read: %s", rl_error_last());
    assert_non_null(m.doc);
    assert_string_equal(m.format, "runlab.record.manifest");
    assert_string_equal(m.run_id, "manifest-1");
    assert_string_equal(m.state, "COMPLETE");
    assert_string_equal(m.reason, "done here");
    assert_string_equal(m.planner, "astar");
    assert_int_equal(m.start_ns, start);
    assert_int_equal(m.stop_ns, stop);
    assert_non_null(m.start);
    assert_non_null(m.bag_file);
    assert_int_equal(m.recorder_pid, getpid());
    assert_int_equal(m.vehicle_count, 2);
    assert_int_equal(m.vehicles[0], 3);
    assert_int_equal(m.vehicles[1], 1);
    assert_null(m.map_sha256); /* no map given */
    assert_true(isnan(m.planned_duration_s));
    rl_record_manifest_free(&m);
    assert_null(m.doc);
    rl_recorder_free(r);
    rl_test_tmpdir_free(home);
}

/* Keys of another type leave their fields unset; integers among other vehicle entries are
 * kept in order; the runtime map's hash wins over the older "sha256". */
static void test_hand_edited_manifest_reads_as_far_as_it_goes(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    write_manifest(dir, "{\"format\": \"runlab.record.manifest\", \"run_id\": 7,"
                        " \"state\": \"INTERRUPTED\", \"result\": \"gone\","
                        " \"planner\": null, \"vehicles\": [4, \"x\", 2.5, 9],"
                        " \"stamps\": {\"start\": \"2026-01-02T03:04:05.250Z\", \"stop\": 12},"
                        " \"planned_duration_s\": 30.5,"
                        " \"map\": {\"sha256\": \"aa\", \"runtime_map_sha256\": \"bb\"},"
                        " \"recorder\": {\"pid\": \"many\"}, \"bag\": {\"file\": \"bag/run.mcap\"}}");
    rl_record_manifest m;
    assert_int_equal(rl_record_manifest_read(dir, &m), RL_OK);
    assert_null(m.run_id);
    assert_string_equal(m.state, "INTERRUPTED");
    assert_null(m.reason);
    assert_null(m.planner);
    assert_int_equal(m.vehicle_count, 2);
    assert_int_equal(m.vehicles[0], 4);
    assert_int_equal(m.vehicles[1], 9);
    int64_t want;
    assert_int_equal(rl_time_parse_iso("2026-01-02T03:04:05.250Z", &want), RL_OK);
    assert_int_equal(m.start_ns, want);
    assert_string_equal(m.start, "2026-01-02T03:04:05.250Z");
    assert_true(m.stop_ns == RL_RECORD_MANIFEST_NO_STAMP);
    assert_true(m.planned_duration_s == 30.5);
    assert_string_equal(m.map_sha256, "bb");
    assert_int_equal(m.recorder_pid, 0);
    assert_string_equal(m.bag_file, "bag/run.mcap");
    /* A caller keeps the document past the free; its strings stay valid. */
    json_object *doc = m.doc;
    const char *state_text = m.state;
    m.doc = NULL;
    rl_record_manifest_free(&m);
    assert_string_equal(state_text, "INTERRUPTED");
    json_object_put(doc);

    write_manifest(dir, "{\"map\": {\"sha256\": \"aa\"}, \"planned_duration_s\": -1}");
    assert_int_equal(rl_record_manifest_read(dir, &m), RL_OK);
    assert_string_equal(m.map_sha256, "aa");
    assert_true(isnan(m.planned_duration_s));
    assert_null(m.state);
    assert_null(m.format);
    rl_record_manifest_free(&m);
    rl_test_tmpdir_free(dir);
}

static void test_missing_broken_or_no_object_is_an_error(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    rl_record_manifest m;
    assert_int_equal(rl_record_manifest_read(dir, &m), RL_ENOENT);
    assert_non_null(strstr(rl_error_last(), "manifest.json"));
    assert_null(m.doc);
    rl_record_manifest_free(&m);
    write_manifest(dir, "{\"state\": \"COMPLETE\",");
    assert_int_equal(rl_record_manifest_read(dir, &m), RL_EPARSE);
    assert_non_null(strstr(rl_error_last(), "manifest.json"));
    assert_null(m.doc);
    assert_null(m.state);
    rl_record_manifest_free(&m);
    write_manifest(dir, "[\"COMPLETE\"]");
    assert_int_equal(rl_record_manifest_read(dir, &m), RL_EPARSE);
    assert_non_null(strstr(rl_error_last(), "manifest.json: not a JSON object"));
    rl_record_manifest_free(&m);
    rl_record_manifest_free(NULL);
    rl_test_tmpdir_free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recorded_run_reads_back),
        cmocka_unit_test(test_hand_edited_manifest_reads_as_far_as_it_goes),
        cmocka_unit_test(test_missing_broken_or_no_object_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
