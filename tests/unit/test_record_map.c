/* Tests of the run's map in the recorder engine: an original (CommonRoad, Lanelet2) is
 * compiled into map/runtime_map.bin and stored beside it, a runtime map is stored as it
 * is, the manifest names both hashes, format, projection and frame; a map that does not
 * read names its file and line and reserves nothing; an original that is not the runtime
 * map's source is refused. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/hash.h"
#include "runlab/map.h"
#include "runlab/record.h"

#include <dirent.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Two lanelets: [0,10]x[0,1] and its successor [10,20]x[0,1], ids 7 and 8. */
static const char cr_map[] =
    "<?xml version=\"1.0\"?>\n<commonRoad commonRoadVersion=\"2020a\" benchmarkID=\"T-1\">\n"
    "<lanelet id=\"7\"><leftBound><point><x>0</x><y>1</y></point><point><x>10</x><y>1</y>"
    "</point></leftBound><rightBound><point><x>0</x><y>0</y></point><point><x>10</x><y>0</y>"
    "</point></rightBound><successor ref=\"8\"/></lanelet>\n"
    "<lanelet id=\"8\"><leftBound><point><x>10</x><y>1</y></point><point><x>20</x><y>1</y>"
    "</point></leftBound><rightBound><point><x>10</x><y>0</y></point><point><x>20</x><y>0</y>"
    "</point></rightBound><predecessor ref=\"7\"/></lanelet>\n"
    "</commonRoad>\n";

typedef struct fixture {
    char *home;
    rl_record_options opts;
    char cr_path[PATH_MAX];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->home = rl_test_tmpdir();
    rl_record_options_default(&f->opts);
    f->opts.home = f->home;
    f->opts.minimum_free_bytes = 0;
    f->opts.lab_domain = rl_test_domain();
    snprintf(f->cr_path, sizeof f->cr_path, "%s/two_lanes.xml", f->home);
    rl_test_write_file(f->cr_path, cr_map, strlen(cr_map));
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    rl_test_tmpdir_free(f->home);
    free(f);
    return 0;
}

static void hex_of(const void *data, size_t len, char hex[RL_SHA256_HEX_LEN + 1])
{
    uint8_t d[RL_SHA256_LEN];
    assert_int_equal(rl_sha256(data, len, d), RL_OK);
    rl_sha256_hex(d, hex);
}

static json_object *jget(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v))
        fail_msg("manifest: %s missing", key);
    return v;
}

static const char *jstr(json_object *o, const char *key)
{
    json_object *v = jget(o, key);
    if (!json_object_is_type(v, json_type_string))
        fail_msg("manifest: %s is not a string", key);
    return json_object_get_string(v);
}

/* Prepares a run with `run` and returns its manifest's "map" (the manifest is returned
 * through `manifest` for freeing). The run is cancelled and the recorder freed. */
static json_object *record_map(fixture *f, const rl_record_run *run, char *dir, size_t cap,
                               json_object **manifest)
{
    rl_recorder *r = NULL;
    assert_int_equal(rl_recorder_new(&r, &f->opts), RL_OK);
    if (rl_recorder_prepare(r, run) != RL_OK)
        fail_msg("prepare: %s", rl_error_last());
    snprintf(dir, cap, "%s", rl_recorder_run_dir(r));
    assert_int_equal(rl_recorder_cancel(r, "test"), RL_OK);
    assert_int_equal(rl_recorder_wait(r), RL_OK);
    rl_recorder_free(r);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    *manifest = json_object_from_file(path);
    assert_non_null(*manifest);
    return jget(*manifest, "map");
}

static char *read_in(const char *dir, const char *rel, size_t *len)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    return rl_test_read_file(path, len);
}

static void test_original_compiled_and_stored(void **state)
{
    fixture *f = *state;
    rl_record_run run = {.run_id = "cr", .map_path = f->cr_path};
    char dir[PATH_MAX];
    json_object *m;
    json_object *map = record_map(f, &run, dir, sizeof dir, &m);
    assert_string_equal(jstr(map, "file"), "map/runtime_map.bin");
    assert_string_equal(jstr(map, "original_file"), "map/two_lanes.xml");
    assert_string_equal(jstr(map, "source_format"), "commonroad");
    assert_string_equal(jstr(map, "projection"), "none");
    assert_string_equal(jstr(map, "frame"), "map");
    assert_true(json_object_is_type(jget(map, "origin"), json_type_null));
    /* The original is stored byte for byte; its hash is of the text above. */
    size_t len = 0;
    char *orig = read_in(dir, "map/two_lanes.xml", &len);
    assert_int_equal(len, strlen(cr_map));
    assert_memory_equal(orig, cr_map, len);
    free(orig);
    char hex[RL_SHA256_HEX_LEN + 1];
    hex_of(cr_map, strlen(cr_map), hex);
    assert_string_equal(jstr(map, "source_sha256"), hex);
    assert_int_equal(json_object_get_int64(jget(map, "source_bytes")), (int64_t)strlen(cr_map));
    /* The runtime map: its hash is of the stored bytes, and it is the two lanelets. */
    char *bin = read_in(dir, "map/runtime_map.bin", &len);
    hex_of(bin, len, hex);
    free(bin);
    assert_string_equal(jstr(map, "runtime_map_sha256"), hex);
    assert_string_equal(jstr(map, "sha256"), hex);
    assert_int_equal(json_object_get_int64(jget(map, "bytes")), (int64_t)len);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/map/runtime_map.bin", dir);
    rl_map *rm = NULL;
    assert_int_equal(rl_map_open_file(path, &rm), RL_OK);
    assert_int_equal(rl_map_lanelet_count(rm), 2);
    assert_int_equal(rl_map_lanelet_id(rm, 0), 7);
    assert_int_equal(rl_map_lanelet_id(rm, 1), 8);
    assert_true(rl_map_point_drivable(rm, 15, 0.5));
    assert_false(rl_map_point_drivable(rm, 15, 1.5));
    rl_map_close(rm);
    json_object_put(m);
}

static void test_runtime_map_stored_as_is(void **state)
{
    fixture *f = *state;
    /* A runtime map compiled here, under another name. */
    rl_map_source *src = NULL;
    assert_int_equal(rl_commonroad_read_mem(cr_map, strlen(cr_map), "two_lanes.xml", NULL, &src),
                     RL_OK);
    void *bytes = NULL;
    size_t blen = 0;
    assert_int_equal(rl_map_compile(src, NULL, &bytes, &blen), RL_OK);
    rl_map_source_free(src);
    char bin_path[PATH_MAX + 16];
    snprintf(bin_path, sizeof bin_path, "%s/compiled.rlmap", f->home);
    rl_test_write_file(bin_path, bytes, blen);
    rl_record_run run = {.run_id = "bin", .map_path = bin_path, .map_frame = "world"};
    char dir[PATH_MAX];
    json_object *m;
    json_object *map = record_map(f, &run, dir, sizeof dir, &m);
    assert_string_equal(jstr(map, "file"), "map/runtime_map.bin");
    assert_true(json_object_is_type(jget(map, "original_file"), json_type_null));
    assert_true(json_object_is_type(jget(map, "source_bytes"), json_type_null));
    assert_string_equal(jstr(map, "frame"), "world");
    size_t len = 0;
    char *stored = read_in(dir, "map/runtime_map.bin", &len);
    assert_int_equal(len, blen);
    assert_memory_equal(stored, bytes, blen);
    free(stored);
    char hex[RL_SHA256_HEX_LEN + 1];
    hex_of(bytes, blen, hex);
    assert_string_equal(jstr(map, "runtime_map_sha256"), hex);
    /* The source's hash as the runtime map records it. */
    hex_of(cr_map, strlen(cr_map), hex);
    assert_string_equal(jstr(map, "source_sha256"), hex);
    json_object_put(m);

    /* With its original: stored too. With another file as "original": refused. */
    rl_record_run pair = {.run_id = "pair", .map_path = bin_path, .original_map_path = f->cr_path};
    map = record_map(f, &pair, dir, sizeof dir, &m);
    assert_string_equal(jstr(map, "original_file"), "map/two_lanes.xml");
    json_object_put(m);
    char other[PATH_MAX + 16];
    snprintf(other, sizeof other, "%s/other.xml", f->home);
    rl_test_write_file(other, cr_map, strlen(cr_map) - 1);
    rl_recorder *r = NULL;
    assert_int_equal(rl_recorder_new(&r, &f->opts), RL_OK);
    rl_record_run wrong = {.run_id = "wrong", .map_path = bin_path, .original_map_path = other};
    assert_int_equal(rl_recorder_prepare(r, &wrong), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "is not the source of runtime map"));
    /* An original with an original: refused too. */
    wrong.map_path = f->cr_path;
    wrong.original_map_path = f->cr_path;
    assert_int_equal(rl_recorder_prepare(r, &wrong), RL_EINVAL);
    assert_int_equal(rl_recorder_state(r), RL_RECORD_IDLE);
    rl_recorder_free(r);
    free(bytes);
}

static void test_bad_map_names_line_and_reserves_nothing(void **state)
{
    fixture *f = *state;
    char bad[PATH_MAX + 16];
    snprintf(bad, sizeof bad, "%s/bad.xml", f->home);
    const char *text = "<?xml version=\"1.0\"?>\n<commonRoad>\n<lanelet id=\"1\"><leftBound>"
                       "<point><x>zero</x><y>1</y></point></leftBound></lanelet></commonRoad>\n";
    rl_test_write_file(bad, text, strlen(text));
    rl_recorder *r = NULL;
    assert_int_equal(rl_recorder_new(&r, &f->opts), RL_OK);
    rl_record_run run = {.run_id = "bad", .map_path = bad};
    assert_int_equal(rl_recorder_prepare(r, &run), RL_EPARSE);
    const char *msg = rl_error_last();
    if (!strstr(msg, "bad.xml:3:"))
        fail_msg("message does not name file and line: %s", msg);
    /* Not a map at all. */
    char junk[PATH_MAX + 16];
    snprintf(junk, sizeof junk, "%s/runtime_map.bin", f->home);
    rl_test_write_file(junk, "MAPDATA", 7);
    run.map_path = junk;
    assert_true(rl_recorder_prepare(r, &run) < 0);
    assert_non_null(strstr(rl_error_last(), "runtime_map.bin"));
    assert_int_equal(rl_recorder_state(r), RL_RECORD_IDLE);
    /* The run id was not reserved: it can be used once the map is right. */
    run.map_path = f->cr_path;
    assert_int_equal(rl_recorder_prepare(r, &run), RL_OK);
    rl_recorder_free(r);
}

static void test_lanelet2_with_projection(void **state)
{
    RL_TEST_REQUIRE_SHARED(shared, "record a Lanelet2 map");
    fixture *f = *state;
    char osm[PATH_MAX];
    snprintf(osm, sizeof osm, "%s/maps/mapping_example.osm", shared);
    rl_map_read_options ro;
    rl_map_read_options_init(&ro);
    ro.quiet = true;
    ro.projection = RL_MAP_PROJ_UTM;
    ro.origin_lat = 49.01;
    ro.origin_lon = 8.41;
    rl_record_run run = {.run_id = "osm", .map_path = osm, .map_options = &ro};
    char dir[PATH_MAX];
    json_object *m;
    json_object *map = record_map(f, &run, dir, sizeof dir, &m);
    assert_string_equal(jstr(map, "original_file"), "map/mapping_example.osm");
    assert_string_equal(jstr(map, "source_format"), "lanelet2");
    assert_string_equal(jstr(map, "projection"), "utm");
    json_object *origin = jget(map, "origin");
    assert_true(json_object_get_double(jget(origin, "lat")) == 49.01);
    assert_true(json_object_get_double(jget(origin, "lon")) == 8.41);
    /* The stored runtime map is what compiling the file with these options gives. */
    rl_map_source *src = NULL;
    assert_int_equal(rl_map_source_read_file(osm, &ro, &src), RL_OK);
    void *bytes = NULL;
    size_t blen = 0;
    assert_int_equal(rl_map_compile(src, NULL, &bytes, &blen), RL_OK);
    rl_map_source_free(src);
    size_t len = 0;
    char *stored = read_in(dir, "map/runtime_map.bin", &len);
    assert_int_equal(len, blen);
    assert_memory_equal(stored, bytes, blen);
    free(stored);
    free(bytes);
    json_object_put(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_original_compiled_and_stored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_runtime_map_stored_as_is, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_map_names_line_and_reserves_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_lanelet2_with_projection, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
