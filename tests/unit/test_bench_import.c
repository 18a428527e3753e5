/* `rl_bench_import_logs` against OMPL itself: every log in ../shared/ompl-reference
 * becomes a database equal to the one OMPL's own parser made of it (schema, all rows,
 * NULLs), alone and all four logs into one database. */
#include "rl_test.h"

#include "bench_dbcmp.h"
#include "formats/ompl/ompl_log.h"
#include "runlab/bench.h"
#include "runlab/error.h"

static void import_one(const char *stem)
{
    RL_TEST_REQUIRE_SHARED(shared, "OMPL reference logs");
    char log[1024], ref[1024], out[1024], why[2048];
    char *tmp = rl_test_tmpdir();
    snprintf(log, sizeof log, "%s/ompl-reference/%s.log", shared, stem);
    snprintf(ref, sizeof ref, "%s/ompl-reference/%s.db", shared, stem);
    snprintf(out, sizeof out, "%s/%s.db", tmp, stem);
    const char *logs[] = {log};
    int rc = rl_bench_import_logs(logs, 1, out);
    if (rc < 0)
        fail_msg("import %s: %s", stem, rl_error_last());
    if (dbcmp_files(ref, out, why, sizeof why))
        fail_msg("%s differs from OMPL's database: %s", stem, why);
    rl_test_tmpdir_free(tmp);
}

static void test_point2d(void **state)
{
    (void)state;
    import_one("point2d_rect_slalom");
}
static void test_narrow_runs5(void **state)
{
    (void)state;
    import_one("narrow3d_runs5");
}
static void test_narrow_runcount0(void **state)
{
    (void)state;
    import_one("narrow3d_runcount0");
}
static void test_control(void **state)
{
    (void)state;
    import_one("control_car_block");
}

static void test_all_in_one(void **state)
{
    (void)state;
    RL_TEST_REQUIRE_SHARED(shared, "OMPL reference logs");
    static const char *const stems[] = {"control_car_block", "narrow3d_runcount0", "narrow3d_runs5",
                                        "point2d_rect_slalom"};
    char paths[4][1024], ref[1024], out[1024], why[2048];
    const char *logs[4];
    for (int i = 0; i < 4; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/ompl-reference/%s.log", shared, stems[i]);
        logs[i] = paths[i];
    }
    char *tmp = rl_test_tmpdir();
    snprintf(ref, sizeof ref, "%s/ompl-reference/all_shared_logs.db", shared);
    snprintf(out, sizeof out, "%s/all.db", tmp);
    if (rl_bench_import_logs(logs, 4, out) < 0)
        fail_msg("import: %s", rl_error_last());
    if (dbcmp_files(ref, out, why, sizeof why))
        fail_msg("all_shared_logs differs: %s", why);
    /* the comparison itself must see a difference where there is one */
    snprintf(ref, sizeof ref, "%s/ompl-reference/control_car_block.db", shared);
    assert_int_not_equal(dbcmp_files(ref, out, why, sizeof why), 0);
    rl_test_tmpdir_free(tmp);
}

/* Parsing then formatting a log gives back its bytes: the reader keeps every line. */
static void test_reformat_identical(void **state)
{
    (void)state;
    RL_TEST_REQUIRE_SHARED(shared, "OMPL reference logs");
    char path[1024];
    snprintf(path, sizeof path, "%s/ompl-reference/point2d_rect_slalom.log", shared);
    size_t len;
    char *text = rl_test_read_file(path, &len);
    rl_ompl_log log;
    assert_int_equal(rl_ompl_log_parse(text, len, path, &log), RL_OK);
    char *again;
    size_t again_len;
    assert_int_equal(rl_ompl_log_format(&log, &again, &again_len), RL_OK);
    assert_int_equal(again_len, len);
    assert_memory_equal(again, text, len);
    free(again);
    free(text);
    rl_ompl_log_free(&log);
}

static void test_bad_logs(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "OMPL version 1.6.0\nNot an experiment\n",
        "Experiment x\nRunning on h\nStarting at 2020\n<<<|\nno end\n",
        "Experiment x\nRunning on h\nStarting at d\n<<<|\n|>>>\n1 is the random seed\n"
        "1 seconds per run\n1 MB per run\n1 seconds spent to collect the data\n"
        "99999999 planners\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rl_ompl_log log;
        int rc = rl_ompl_log_parse(bad[i], strlen(bad[i]), "bad.log", &log);
        assert_true(rc < 0);
        assert_non_null(strstr(rl_error_last(), "bad.log"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_point2d),          cmocka_unit_test(test_narrow_runs5),
        cmocka_unit_test(test_narrow_runcount0), cmocka_unit_test(test_control),
        cmocka_unit_test(test_all_in_one),       cmocka_unit_test(test_reformat_identical),
        cmocka_unit_test(test_bad_logs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
