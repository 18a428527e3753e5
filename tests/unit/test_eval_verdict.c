/* Tests of an evaluation's verdict (issue 28) on synthetic recordings (eval_synth.h):
 * a value over its limit by less than the metric's resolution passes and a lone sample is
 * one sample period long; the overall result rule (FAIL, else INCOMPLETE, else PASS) in
 * the result, summary.json ("passed" false for INSUFFICIENT and UNAVAILABLE) and the
 * report; a reason shared by several checks given once; a partial evaluation does not
 * replace the run's verdict in the listing; a run stopped early says how far it got. */
#include "rl_test.h"

#include "eval_synth.h"

#include "runlab/eval.h"
#include "runlab/json.h"
#include "runlab/plot.h"

#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *make_dir(const char *root, const char *name)
{
    char *p = malloc(PATH_MAX);
    snprintf(p, PATH_MAX, "%s/%s", root, name);
    assert_int_equal(rl_fs_mkdirs(p), RL_OK);
    return p;
}

static void synth_ok(const char *dir, const synth_opts *o)
{
    if (synth_write(dir, o) != RL_OK)
        fail_msg("synthetic recording: %s", rl_error_last());
}

static void evaluate(const char *dir, const char *metrics, const char *config, rl_eval_result *r)
{
    rl_eval_options o = {0};
    o.config_path = config;
    o.metrics = metrics;
    if (rl_eval_run(dir, &o, r) != RL_OK)
        fail_msg("rl_eval_run: %s", rl_error_last());
}

static void write_config(const char *path, const char *yaml)
{
    rl_test_write_file(path, yaml, strlen(yaml));
}

static const rl_eval_check *find_check(const rl_eval_result *r, const char *metric,
                                       const char *check, int id)
{
    for (size_t i = 0; i < r->nchecks; i++) {
        const rl_eval_check *c = &r->checks[i];
        if (!strcmp(c->metric, metric) && !strcmp(c->check, check) && c->nvehicles == 1 &&
            c->vehicles[0] == id)
            return c;
    }
    fail_msg("no check %s/%s for vehicle %d", metric, check, id);
    return NULL;
}

static json_object *read_summary(const rl_eval_result *r)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/summary.json", r->dir);
    json_object *sum;
    assert_int_equal(rl_json_read_file(p, 1 << 24, &sum), RL_OK);
    return sum;
}

static const char *summary_string(json_object *sum, const char *key)
{
    const char *s = NULL;
    if (rl_json_get_string(sum, key, &s) != RL_OK)
        fail_msg("summary.json: no string '%s'", key);
    return s;
}

static bool summary_passed(json_object *sum)
{
    bool passed = true;
    assert_int_equal(rl_json_get_bool(sum, "passed", &passed), RL_OK);
    return passed;
}

static char *report_text(const rl_eval_result *r)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/report.html", r->dir);
    size_t len;
    return rl_test_read_file(p, &len);
}

/* ---- item 1: resolution ------------------------------------------------------------- */

/* Vehicle 1 brakes at exactly the limit with rounding noise (3.000000000000025 m/s^2, as
 * the simulator's clamped acceleration came out) on ticks 100..200, then one sample at
 * 3.5 m/s^2 (tick 201, 4.02 s); vehicle 2 accelerates at 3.0012 m/s^2 on ticks 300..310;
 * vehicle 3 brakes at 4 m/s^2 in the window's last state only. */
static double noisy_accel(int id, long tick)
{
    if (id == 1 && tick >= 100 && tick <= 200)
        return -3.000000000000025;
    if (id == 1 && tick == 201)
        return 3.5;
    if (id == 2 && tick >= 300 && tick <= 310)
        return 3.0012;
    if (id == 3 && tick == 400) /* the last state of the window (STOP at 8 s) */
        return -4.0;
    return 0;
}

/* Speed at the limit with rounding noise (3 + 1 ulp) for a second. */
static double noisy_speed(int id, long tick)
{
    (void)id;
    return tick >= 100 && tick < 150 ? nextafter(3.0, INFINITY) : 1.0;
}

static void test_rounding_is_not_a_violation(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir(), *dir = make_dir(root, "noise");
    synth_opts o = {.vehicles = 3, .ticks = 400, .lead_ticks = 25, .speed = noisy_speed,
                    .accel = noisy_accel};
    synth_ok(dir, &o);
    rl_eval_result r;
    evaluate(dir, "states_speed", NULL, &r);
    /* Speed 3 + 1 ulp against 3: PASS, written "3". */
    const rl_eval_check *c = find_check(&r, "states_speed", "speed", 2);
    assert_int_equal(c->status, RL_EVAL_PASS);
    assert_true(c->value > 3.0);
    assert_string_equal(c->reason, "vehicle 2: speed at most 3 m/s (limit 3)");
    /* Vehicle 1: the noisy braking is not a violation; the lone 3.5 sample is, over one
       sample period (4.02..4.04 s), not over a zero-length interval. */
    c = find_check(&r, "states_speed", "acceleration", 1);
    assert_int_equal(c->status, RL_EVAL_FAIL);
    assert_true(c->value == 3.5);
    assert_int_equal(c->nintervals, 1);
    assert_true(fabs(c->intervals[0][0] - 4.02) < 1e-9);
    assert_true(fabs(c->intervals[0][1] - 4.04) < 1e-9);
    assert_string_equal(c->reason, "vehicle 1: |longitudinal acceleration| up to 3.5 m/s^2 over "
                                   "the limit 3 for 0.02 s in 1 interval(s), first 4.02..4.04 s");
    /* Vehicle 2: 3.0012 exceeds 3 by more than 0.001: FAIL, written with the resolution's
       decimals, never "3 over the limit 3"; ticks 300..310 are 6.00..6.20 s. */
    c = find_check(&r, "states_speed", "acceleration", 2);
    assert_int_equal(c->status, RL_EVAL_FAIL);
    assert_true(fabs(c->intervals[0][0] - 6.0) < 1e-9 && fabs(c->intervals[0][1] - 6.2) < 1e-9);
    assert_non_null(strstr(c->reason, "up to 3.001 m/s^2 over the limit 3 for 0.20 s"));
    /* Vehicle 3: a lone last sample stands for the period before it, inside the window. */
    c = find_check(&r, "states_speed", "acceleration", 3);
    assert_int_equal(c->status, RL_EVAL_FAIL);
    assert_int_equal(c->nintervals, 1);
    assert_true(fabs(c->intervals[0][0] - 7.98) < 1e-9 && fabs(c->intervals[0][1] - 8.0) < 1e-9);
    rl_eval_result_free(&r);
    /* Resolution 0: any excess counts, so the noise FAILs (as every excess did before). */
    char cfg[PATH_MAX];
    snprintf(cfg, sizeof cfg, "%s/exact.yaml", root);
    write_config(cfg, "states_speed:\n  resolution: 0\n");
    evaluate(dir, "states_speed", cfg, &r);
    assert_int_equal(find_check(&r, "states_speed", "speed", 2)->status, RL_EVAL_FAIL);
    c = find_check(&r, "states_speed", "acceleration", 1);
    assert_int_equal(c->status, RL_EVAL_FAIL);
    assert_int_equal(c->nintervals, 1); /* the noise (2.00..4.00 s) and the spike after it */
    assert_true(fabs(c->intervals[0][0] - 2.0) < 1e-9 && fabs(c->intervals[0][1] - 4.02) < 1e-9);
    rl_eval_result_free(&r);
    /* A negative resolution is refused, naming the key. */
    write_config(cfg, "obs:\n  resolution: -1\n");
    rl_eval_options bad = {0};
    bad.config_path = cfg;
    bad.metrics = "obs";
    assert_int_equal(rl_eval_run(dir, &bad, &r), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "obs.resolution"));
    free(dir);
    rl_test_tmpdir_free(root);
}

/* ---- item 2: one rule for the overall result ---------------------------------------- */

static void test_verdict_rule(void **state)
{
    (void)state;
    size_t none[RL_EVAL_STATUS_COUNT] = {0};
    assert_int_equal(rl_eval_verdict_of(none), RL_EVAL_VERDICT_PASS);
    size_t c[RL_EVAL_STATUS_COUNT] = {[RL_EVAL_PASS] = 5, [RL_EVAL_NA] = 2};
    assert_int_equal(rl_eval_verdict_of(c), RL_EVAL_VERDICT_PASS);
    c[RL_EVAL_INSUFFICIENT] = 1;
    assert_int_equal(rl_eval_verdict_of(c), RL_EVAL_VERDICT_INCOMPLETE);
    c[RL_EVAL_INSUFFICIENT] = 0;
    c[RL_EVAL_UNAVAILABLE] = 1;
    assert_int_equal(rl_eval_verdict_of(c), RL_EVAL_VERDICT_INCOMPLETE);
    c[RL_EVAL_FAIL] = 1;
    assert_int_equal(rl_eval_verdict_of(c), RL_EVAL_VERDICT_FAIL);
    assert_string_equal(rl_eval_verdict_name(RL_EVAL_VERDICT_PASS), "PASS");
    assert_string_equal(rl_eval_verdict_name(RL_EVAL_VERDICT_FAIL), "FAIL");
    assert_string_equal(rl_eval_verdict_name(RL_EVAL_VERDICT_INCOMPLETE), "INCOMPLETE");
    assert_string_equal(rl_eval_verdict_name(RL_EVAL_VERDICT_COUNT), "?");
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* A clean run without a map, every metric: nothing fails, the map metrics are UNAVAILABLE
 * for both vehicles: INCOMPLETE (not FAIL), and their one reason is said once. */
static void test_no_map_is_incomplete_with_one_line(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir(), *dir = make_dir(root, "nomap");
    synth_opts o = {.vehicles = 2, .ticks = 300, .lead_ticks = 25, .commands = true};
    synth_ok(dir, &o);
    rl_eval_result r;
    evaluate(dir, NULL, NULL, &r);
    assert_int_equal(r.counts[RL_EVAL_FAIL], 0);
    assert_int_equal(r.counts[RL_EVAL_INSUFFICIENT], 0);
    assert_int_equal(r.counts[RL_EVAL_UNAVAILABLE], 4); /* boundary, lanelet x 2 vehicles */
    assert_int_equal(r.verdict, RL_EVAL_VERDICT_INCOMPLETE);
    assert_false(r.passed);
    assert_false(r.partial);
    char want[] = "UNAVAILABLE in 4 checks of boundary_violation, lanelet_collision (vehicles 1, "
                  "2): the run has no map (manifest: map is null); `runlab evaluate RUN --map "
                  "FILE` judges them against a map\n";
    assert_string_equal(r.shared_reasons, want);
    for (size_t i = 0; i < r.nchecks; i++)
        assert_int_equal(r.checks[i].shared_reason, r.checks[i].status == RL_EVAL_UNAVAILABLE);
    json_object *sum = read_summary(&r);
    assert_false(summary_passed(sum));
    assert_string_equal(summary_string(sum, "result"), "INCOMPLETE");
    json_object *shared;
    assert_int_equal(rl_json_get_array(sum, "shared_reasons", &shared), RL_OK);
    assert_int_equal(json_object_array_length(shared), 1);
    want[strlen(want) - 1] = 0;
    assert_string_equal(json_object_get_string(json_object_array_get_idx(shared, 0)), want);
    json_object_put(sum);
    char *html = report_text(&r);
    assert_non_null(strstr(html, "<span class=\"badge incomplete\">INCOMPLETE</span>"));
    assert_int_equal(count_of(html, "UNAVAILABLE in 4 checks of"), 1);
    free(html);
    rl_eval_result_free(&r);
    free(dir);
    rl_test_tmpdir_free(root);
}

static double speeding(int id, long tick)
{
    return id == 2 && tick >= 100 && tick <= 150 ? 4.0 : 1.0;
}

/* Issue 30 item 1: INSUFFICIENT alone leaves "passed" false and the result INCOMPLETE;
 * with a FAIL beside it the result is FAIL. */
static void test_insufficient_is_not_passed(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir(), *dir = make_dir(root, "few");
    synth_opts o = {.vehicles = 2, .ticks = 300, .lead_ticks = 25, .speed = speeding};
    synth_ok(dir, &o);
    char cfg[PATH_MAX];
    snprintf(cfg, sizeof cfg, "%s/few.yaml", root);
    write_config(cfg, "obs:\n  min_samples: 100000\n");
    rl_eval_result r;
    evaluate(dir, "obs", cfg, &r);
    assert_int_equal(r.counts[RL_EVAL_INSUFFICIENT], 4); /* age and distance x 2 */
    assert_int_equal(r.counts[RL_EVAL_INSUFFICIENT] + r.counts[RL_EVAL_PASS] +
                         r.counts[RL_EVAL_NA], r.nchecks);
    assert_int_equal(r.verdict, RL_EVAL_VERDICT_INCOMPLETE);
    assert_false(r.passed);
    assert_true(r.partial);
    json_object *sum = read_summary(&r);
    assert_false(summary_passed(sum));
    assert_string_equal(summary_string(sum, "result"), "INCOMPLETE");
    bool partial = false;
    assert_int_equal(rl_json_get_bool(sum, "partial", &partial), RL_OK);
    assert_true(partial);
    json_object_put(sum);
    char *html = report_text(&r);
    assert_non_null(strstr(html, "Result <span class=\"badge incomplete\">"));
    assert_non_null(strstr(html, "A partial evaluation (--metrics): only obs ran"));
    free(html);
    rl_eval_result_free(&r);
    evaluate(dir, "states_speed,obs", cfg, &r);
    assert_int_equal(r.counts[RL_EVAL_FAIL], 1);
    assert_int_equal(r.verdict, RL_EVAL_VERDICT_FAIL);
    sum = read_summary(&r);
    assert_false(summary_passed(sum));
    assert_string_equal(summary_string(sum, "result"), "FAIL");
    json_object_put(sum);
    rl_eval_result_free(&r);
    free(dir);
    rl_test_tmpdir_free(root);
}

/* ---- item 3: a partial evaluation does not replace the verdict ------------------------ */

static void test_partial_keeps_full_verdict(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir(), *home = make_dir(root, "home");
    char *dir = make_dir(home, "experiments/20260101T000000Z_synth");
    synth_opts o = {.vehicles = 2, .ticks = 300, .lead_ticks = 25, .speed = speeding};
    synth_ok(dir, &o);
    rl_eval_result r;
    evaluate(dir, "topic_sanity,states_speed,obs,command_follow,vehicle_collision,"
                  "boundary_violation,lanelet_collision", NULL, &r);
    assert_int_equal(r.verdict, RL_EVAL_VERDICT_FAIL);
    assert_false(r.partial); /* every registered metric named is a full evaluation */
    rl_eval_result_free(&r);
    evaluate(dir, "obs", NULL, &r); /* PASS, but only obs */
    assert_int_equal(r.verdict, RL_EVAL_VERDICT_PASS);
    assert_true(r.partial);
    rl_eval_result_free(&r);
    rl_eval_listed_run *runs;
    size_t n;
    assert_int_equal(rl_eval_list_runs(home, &runs, &n), RL_OK);
    assert_int_equal(n, 1);
    assert_int_equal(runs[0].nevaluations, 2);
    assert_int_equal(runs[0].evaluations[0].verdict, RL_EVAL_VERDICT_FAIL);
    assert_false(runs[0].evaluations[0].partial);
    assert_int_equal(runs[0].evaluations[1].verdict, RL_EVAL_VERDICT_PASS);
    assert_true(runs[0].evaluations[1].partial);
    assert_ptr_equal(rl_eval_listed_full(&runs[0]), &runs[0].evaluations[0]);
    assert_ptr_equal(rl_eval_listed_newer_partial(&runs[0]), &runs[0].evaluations[1]);
    assert_null(runs[0].interruption); /* COMPLETE */
    rl_eval_list_free(runs, n);
    /* A summary written before "result" and "partial": the result from its counts, partial
       when its metrics lack a registered one. */
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/evaluations/29990101T000000Z", dir);
    assert_int_equal(rl_fs_mkdirs(p), RL_OK);
    strcat(p, "/summary.json");
    static const char old[] = "{\"passed\": false, \"metrics\": [\"obs\"], \"counts\": {\"PASS\": 3, "
                              "\"FAIL\": 0, \"INSUFFICIENT\": 0, \"UNAVAILABLE\": 1, \"N/A\": 0}}";
    rl_test_write_file(p, old, sizeof old - 1);
    assert_int_equal(rl_eval_list_runs(home, &runs, &n), RL_OK);
    assert_int_equal(runs[0].nevaluations, 3);
    assert_int_equal(runs[0].evaluations[2].verdict, RL_EVAL_VERDICT_INCOMPLETE);
    assert_true(runs[0].evaluations[2].partial);
    assert_int_equal(runs[0].evaluations[2].passed, 0);
    assert_ptr_equal(rl_eval_listed_full(&runs[0]), &runs[0].evaluations[0]);
    assert_ptr_equal(rl_eval_listed_newer_partial(&runs[0]), &runs[0].evaluations[2]);
    rl_eval_list_free(runs, n);
    free(dir);
    free(home);
    rl_test_tmpdir_free(root);
}

/* ---- item 5: a run stopped early ----------------------------------------------------- */

static void test_interrupted_says_how_far(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir(), *home = make_dir(root, "home");
    char *dir = make_dir(home, "experiments/20260101T000000Z_cut");
    /* Stopped by Ctrl-C after 2.5 s (125 ticks) of a planned 20 s. */
    synth_opts o = {.vehicles = 1, .ticks = 125, .lead_ticks = 5, .state = "INTERRUPTED",
                    .planned_duration_s = 20};
    synth_ok(dir, &o);
    rl_eval_result r;
    evaluate(dir, "states_speed", NULL, &r);
    assert_int_equal(r.verdict, RL_EVAL_VERDICT_PASS);
    assert_string_equal(r.interruption, "interrupted after 2.5 of 20 s");
    json_object *sum = read_summary(&r);
    assert_string_equal(summary_string(sum, "interruption"), "interrupted after 2.5 of 20 s");
    json_object *run;
    double planned = 0;
    assert_int_equal(rl_json_get_object(sum, "run", &run), RL_OK);
    assert_int_equal(rl_json_get_double(run, "planned_duration", &planned), RL_OK);
    assert_true(planned == 20);
    json_object_put(sum);
    char *html = report_text(&r);
    assert_non_null(strstr(html, "interrupted after 2.5 of 20 s; "));
    free(html);
    rl_eval_result_free(&r);
    rl_eval_listed_run *runs;
    size_t n;
    assert_int_equal(rl_eval_list_runs(home, &runs, &n), RL_OK);
    assert_int_equal(n, 1);
    assert_string_equal(runs[0].interruption, "interrupted after 2.5 of 20 s");
    assert_true(runs[0].planned_s == 20);
    rl_eval_list_free(runs, n);
    /* Without a recorded plan it says so; a complete run has no interruption. */
    char *other = make_dir(root, "unplanned");
    o.planned_duration_s = 0;
    synth_ok(other, &o);
    evaluate(other, "states_speed", NULL, &r);
    assert_string_equal(r.interruption, "interrupted after 2.5 s (planned duration not recorded)");
    rl_eval_result_free(&r);
    char *clean = make_dir(root, "complete");
    synth_opts c = {.vehicles = 1, .ticks = 125, .lead_ticks = 5, .planned_duration_s = 2.5};
    synth_ok(clean, &c);
    evaluate(clean, "states_speed", NULL, &r);
    assert_string_equal(r.interruption, "");
    sum = read_summary(&r);
    json_object *v = NULL;
    assert_true(json_object_object_get_ex(sum, "interruption", &v) && v == NULL);
    json_object_put(sum);
    rl_eval_result_free(&r);
    free(clean);
    free(other);
    free(dir);
    free(home);
    rl_test_tmpdir_free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rounding_is_not_a_violation),
        cmocka_unit_test(test_verdict_rule),
        cmocka_unit_test(test_no_map_is_incomplete_with_one_line),
        cmocka_unit_test(test_insufficient_is_not_passed),
        cmocka_unit_test(test_partial_keeps_full_verdict),
        cmocka_unit_test(test_interrupted_says_how_far),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    rl_plot_release_caches(); /* the figures' fonts, so that the leak check sees ours only */
    return failed;
}
