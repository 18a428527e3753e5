/* Issue 30: evaluation behaviours no other test read. The overall result for every mix of
 * check statuses, and `passed` in summary.json and the report's result badge when only
 * INSUFFICIENT, only UNAVAILABLE or only N/A checks stand beside PASS; states_speed's
 * braking beyond max_acceleration (the limit is on |a|); topic_sanity's gap from a topic's
 * last message to STOP and from START to its first. Every assertion names what it read. */
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

/* ---- item 1: the overall result and `passed` ------------------------------------------ */

/* The rule over every mix of statuses (each absent, once or many times): FAIL when any is
 * FAIL, else INCOMPLETE when any is INSUFFICIENT or UNAVAILABLE, else PASS (PASS and N/A
 * alone, and no checks at all, are PASS). */
static void test_verdict_of_every_mix(void **state)
{
    (void)state;
    static const size_t amounts[] = {0, 1, 1000};
    size_t combos = 1;
    for (int s = 0; s < RL_EVAL_STATUS_COUNT; s++)
        combos *= 3;
    for (size_t k = 0; k < combos; k++) {
        size_t c[RL_EVAL_STATUS_COUNT], rest = k;
        for (int s = 0; s < RL_EVAL_STATUS_COUNT; s++, rest /= 3)
            c[s] = amounts[rest % 3];
        rl_eval_verdict want = c[RL_EVAL_FAIL]                                  ? RL_EVAL_VERDICT_FAIL
                               : c[RL_EVAL_INSUFFICIENT] || c[RL_EVAL_UNAVAILABLE] ? RL_EVAL_VERDICT_INCOMPLETE
                                                                                 : RL_EVAL_VERDICT_PASS;
        rl_eval_verdict got = rl_eval_verdict_of(c);
        if (got != want)
            fail_msg("counts PASS %zu FAIL %zu INSUFFICIENT %zu UNAVAILABLE %zu N/A %zu: read "
                     "verdict %s, want %s",
                     c[0], c[1], c[2], c[3], c[4], rl_eval_verdict_name(got),
                     rl_eval_verdict_name(want));
    }
}

/* What one evaluation says of itself: the result's verdict and passed, summary.json's
 * "passed", "result" and "counts", and the report's result badge. */
static void expect_outcome(const rl_eval_result *r, const char *what, rl_eval_verdict verdict,
                           bool passed, const char *badge)
{
    if (r->verdict != verdict || r->passed != passed)
        fail_msg("%s: read verdict %s passed %d, want %s passed %d", what,
                 rl_eval_verdict_name(r->verdict), r->passed, rl_eval_verdict_name(verdict),
                 passed);
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/summary.json", r->dir);
    json_object *sum, *counts;
    assert_int_equal(rl_json_read_file(p, 1 << 24, &sum), RL_OK);
    bool sum_passed = !passed;
    const char *result = NULL;
    assert_int_equal(rl_json_get_bool(sum, "passed", &sum_passed), RL_OK);
    assert_int_equal(rl_json_get_string(sum, "result", &result), RL_OK);
    if (sum_passed != passed || strcmp(result, rl_eval_verdict_name(verdict)) != 0)
        fail_msg("%s: summary.json reads passed %s result %s, want passed %s result %s", what,
                 sum_passed ? "true" : "false", result, passed ? "true" : "false",
                 rl_eval_verdict_name(verdict));
    assert_int_equal(rl_json_get_object(sum, "counts", &counts), RL_OK);
    for (int s = 0; s < RL_EVAL_STATUS_COUNT; s++) {
        int64_t n = -1;
        assert_int_equal(rl_json_get_int64(counts, rl_eval_status_name((rl_eval_status)s), &n),
                         RL_OK);
        if ((size_t)n != r->counts[s])
            fail_msg("%s: summary.json counts.%s reads %lld, the result has %zu", what,
                     rl_eval_status_name((rl_eval_status)s), (long long)n, r->counts[s]);
    }
    json_object_put(sum);
    snprintf(p, sizeof p, "%s/report.html", r->dir);
    size_t len;
    char *html = rl_test_read_file(p, &len), want[128];
    snprintf(want, sizeof want, "Result <span class=\"badge %s\">%s</span>", badge,
             rl_eval_verdict_name(verdict));
    if (!strstr(html, want))
        fail_msg("%s: report.html lacks '%s'", what, want);
    free(html);
}

/* One vehicle, no commands, no map: topic_sanity's command_trajectory is N/A (not required,
 * not recorded); obs with a min_samples above its sample count is INSUFFICIENT; the map
 * metrics are UNAVAILABLE. Each beside PASS alone. */
static void test_passed_for_each_status_alone(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir(), *dir = make_dir(root, "run");
    synth_opts o = {.vehicles = 1, .ticks = 300, .lead_ticks = 25};
    synth_ok(dir, &o);
    rl_eval_result r;

    evaluate(dir, "topic_sanity,states_speed", NULL, &r);
    if (r.counts[RL_EVAL_NA] == 0 || r.counts[RL_EVAL_PASS] + r.counts[RL_EVAL_NA] != r.nchecks)
        fail_msg("N/A case: read %zu N/A, %zu PASS of %zu checks; want only PASS and N/A",
                 r.counts[RL_EVAL_NA], r.counts[RL_EVAL_PASS], r.nchecks);
    expect_outcome(&r, "PASS and N/A", RL_EVAL_VERDICT_PASS, true, "pass");
    rl_eval_result_free(&r);

    char cfg[PATH_MAX];
    snprintf(cfg, sizeof cfg, "%s/few.yaml", root);
    write_config(cfg, "obs:\n  min_samples: 100000\n");
    evaluate(dir, "states_speed,obs", cfg, &r);
    if (r.counts[RL_EVAL_INSUFFICIENT] == 0 ||
        r.counts[RL_EVAL_PASS] + r.counts[RL_EVAL_INSUFFICIENT] != r.nchecks)
        fail_msg("INSUFFICIENT case: read %zu INSUFFICIENT, %zu PASS of %zu checks",
                 r.counts[RL_EVAL_INSUFFICIENT], r.counts[RL_EVAL_PASS], r.nchecks);
    expect_outcome(&r, "PASS and INSUFFICIENT", RL_EVAL_VERDICT_INCOMPLETE, false, "incomplete");
    rl_eval_result_free(&r);

    evaluate(dir, "states_speed,boundary_violation", NULL, &r);
    if (r.counts[RL_EVAL_UNAVAILABLE] == 0 ||
        r.counts[RL_EVAL_PASS] + r.counts[RL_EVAL_UNAVAILABLE] != r.nchecks)
        fail_msg("UNAVAILABLE case: read %zu UNAVAILABLE, %zu PASS of %zu checks",
                 r.counts[RL_EVAL_UNAVAILABLE], r.counts[RL_EVAL_PASS], r.nchecks);
    expect_outcome(&r, "PASS and UNAVAILABLE", RL_EVAL_VERDICT_INCOMPLETE, false, "incomplete");
    rl_eval_result_free(&r);

    free(dir);
    rl_test_tmpdir_free(root);
}

/* ---- item 2: braking beyond max_acceleration ----------------------------------------- */

/* On ticks 100..150 (2.00..3.00 s): vehicle 1 brakes at 4 m/s^2, vehicle 2 speeds up at
 * 4 m/s^2, vehicle 3 brakes at exactly 3 m/s^2 (the default limit). */
static double braking(int id, long tick)
{
    if (tick < 100 || tick > 150)
        return 0;
    return id == 1 ? -4.0 : id == 2 ? 4.0 : -3.0;
}

static rl_eval_status accel_status(const char *root, const char *dir, double limit, int id)
{
    char cfg[PATH_MAX], yaml[128];
    snprintf(cfg, sizeof cfg, "%s/accel.yaml", root);
    snprintf(yaml, sizeof yaml, "states_speed:\n  resolution: 0\n  max_acceleration: %.17g\n",
             limit);
    write_config(cfg, yaml);
    rl_eval_result r;
    evaluate(dir, "states_speed", cfg, &r);
    rl_eval_status s = find_check(&r, "states_speed", "acceleration", id)->status;
    rl_eval_result_free(&r);
    return s;
}

static void test_braking_beyond_the_limit(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir(), *dir = make_dir(root, "brake");
    synth_opts o = {.vehicles = 3, .ticks = 300, .lead_ticks = 25, .accel = braking};
    synth_ok(dir, &o);
    rl_eval_result r;
    evaluate(dir, "states_speed", NULL, &r);
    const rl_eval_check *brake = find_check(&r, "states_speed", "acceleration", 1);
    const rl_eval_check *speedup = find_check(&r, "states_speed", "acceleration", 2);
    const rl_eval_check *at = find_check(&r, "states_speed", "acceleration", 3);
    if (brake->status != RL_EVAL_FAIL || brake->value != 4.0)
        fail_msg("braking at 4 m/s^2 against 3: read %s, value %.17g (want FAIL, 4)",
                 rl_eval_status_name(brake->status), brake->value);
    assert_int_equal(brake->nintervals, 1);
    if (fabs(brake->intervals[0][0] - 2.0) > 1e-9 || fabs(brake->intervals[0][1] - 3.0) > 1e-9)
        fail_msg("braking interval read %.6f..%.6f s, want 2..3 s", brake->intervals[0][0],
                 brake->intervals[0][1]);
    if (!strstr(brake->reason, "|longitudinal acceleration| up to 4 m/s^2 over the limit 3"))
        fail_msg("braking reason reads '%s'", brake->reason);
    /* Braking and speeding up alike: the same status, value and interval. */
    if (speedup->status != brake->status || speedup->value != brake->value ||
        speedup->nintervals != 1 || speedup->intervals[0][0] != brake->intervals[0][0] ||
        speedup->intervals[0][1] != brake->intervals[0][1])
        fail_msg("speeding up at 4 m/s^2 read %s value %.17g, braking %s value %.17g",
                 rl_eval_status_name(speedup->status), speedup->value,
                 rl_eval_status_name(brake->status), brake->value);
    if (at->status != RL_EVAL_PASS || at->value != 3.0)
        fail_msg("braking at exactly the limit: read %s value %.17g (want PASS, 3)",
                 rl_eval_status_name(at->status), at->value);
    rl_eval_result_free(&r);
    /* The braking's boundary with resolution 0: a limit at |a| passes, one ulp below fails. */
    rl_eval_status on = accel_status(root, dir, 4.0, 1);
    rl_eval_status below = accel_status(root, dir, nextafter(4.0, 0), 1);
    if (on != RL_EVAL_PASS || below != RL_EVAL_FAIL)
        fail_msg("braking at 4 m/s^2: limit 4 read %s, one ulp below read %s (want PASS, FAIL)",
                 rl_eval_status_name(on), rl_eval_status_name(below));
    free(dir);
    rl_test_tmpdir_free(root);
}

/* ---- item 3: a topic that stops early (or starts late) ------------------------------- */

/* Rewrites the bag without vehicle 1's states (channel 2) received before `from_s` or
 * after `until_s` (seconds since START). */
static void cut_states(const char *dir, double from_s, double until_s)
{
    char in[PATH_MAX], out[PATH_MAX];
    snprintf(in, sizeof in, "%s/bag/run.mcap", dir);
    snprintf(out, sizeof out, "%s/bag/cut.mcap", dir);
    rl_mcap_indexed *x;
    assert_int_equal(rl_mcap_indexed_open(&x, in, 0), RL_OK);
    rl_mcap_writer *w;
    assert_int_equal(rl_mcap_writer_open_path(&w, out, NULL), RL_OK);
    const rl_mcap_schema *schemas;
    const rl_mcap_channel *chans;
    size_t ns = rl_mcap_indexed_schemas(x, &schemas), nc = rl_mcap_indexed_channels(x, &chans);
    for (size_t i = 0; i < ns; i++)
        assert_int_equal(rl_mcap_writer_add_schema(w, &schemas[i]), RL_OK);
    for (size_t i = 0; i < nc; i++)
        assert_int_equal(rl_mcap_writer_add_channel(w, &chans[i]), RL_OK);
    rl_mcap_message_iter *it;
    rl_mcap_message m;
    assert_int_equal(rl_mcap_indexed_messages(x, NULL, &it), RL_OK);
    while (rl_mcap_message_iter_next(it, &m, NULL) == 1) {
        double t = (double)((int64_t)m.log_time - SYNTH_START_NS) / 1e9;
        if (m.channel_id == 2 && (t < from_s - 1e-6 || t > until_s + 1e-6))
            continue;
        assert_int_equal(rl_mcap_writer_add_message(w, &m), RL_OK);
    }
    rl_mcap_message_iter_free(it);
    rl_mcap_indexed_close(x);
    assert_int_equal(rl_mcap_writer_close(w), RL_OK);
    assert_int_equal(rename(out, in), 0);
}

/* The state topic's largest-gap check of vehicle 1 when its states run from `from_s` to
 * `until_s` in a window of 0..8 s: FAIL with the one gap [gap0, gap1], the rate still
 * passing (so only the gap check can tell). */
static void expect_edge_gap(const char *root, const char *name, double from_s, double until_s,
                            double gap0, double gap1)
{
    char *dir = make_dir(root, name);
    synth_opts o = {.vehicles = 1, .ticks = 400, .lead_ticks = 25};
    synth_ok(dir, &o);
    cut_states(dir, from_s, until_s);
    rl_eval_result r;
    evaluate(dir, "topic_sanity", NULL, &r);
    const rl_eval_check *gap = find_check(&r, "topic_sanity", "state largest gap", 1);
    const rl_eval_check *rate = find_check(&r, "topic_sanity", "state rate", 1);
    if (rate->status != RL_EVAL_PASS)
        fail_msg("%s: the state rate read %s (%.3f Hz); the case needs it passing", name,
                 rl_eval_status_name(rate->status), rate->value);
    if (gap->status != RL_EVAL_FAIL || fabs(gap->value - (gap1 - gap0)) > 1e-9)
        fail_msg("%s: state largest gap read %s, %.6f s (want FAIL, %.3f s: %.2f..%.2f)", name,
                 rl_eval_status_name(gap->status), gap->value, gap1 - gap0, gap0, gap1);
    if (gap->nintervals != 1 || fabs(gap->intervals[0][0] - gap0) > 1e-9 ||
        fabs(gap->intervals[0][1] - gap1) > 1e-9)
        fail_msg("%s: read %zu gap interval(s), first %.6f..%.6f s; want one, %.2f..%.2f s",
                 name, gap->nintervals, gap->nintervals ? gap->intervals[0][0] : NAN,
                 gap->nintervals ? gap->intervals[0][1] : NAN, gap0, gap1);
    if (r.verdict != RL_EVAL_VERDICT_FAIL)
        fail_msg("%s: the evaluation's verdict read %s, want FAIL", name,
                 rl_eval_verdict_name(r.verdict));
    rl_eval_result_free(&r);
    free(dir);
}

static void test_topic_gap_at_the_window_edges(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    /* Unbroken: the largest gap is one period (20 ms), PASS. */
    char *dir = make_dir(root, "whole");
    synth_opts o = {.vehicles = 1, .ticks = 400, .lead_ticks = 25};
    synth_ok(dir, &o);
    rl_eval_result r;
    evaluate(dir, "topic_sanity", NULL, &r);
    const rl_eval_check *gap = find_check(&r, "topic_sanity", "state largest gap", 1);
    if (gap->status != RL_EVAL_PASS || fabs(gap->value - 0.02) > 1e-9)
        fail_msg("unbroken states: largest gap read %s %.6f s, want PASS 0.02 s",
                 rl_eval_status_name(gap->status), gap->value);
    rl_eval_result_free(&r);
    free(dir);
    /* States stop at 7.5 s, STOP at 8 s: the gap 7.5..8 (0.5 s, limit 0.1) FAILs. */
    expect_edge_gap(root, "stops-early", -1.0, 7.5, 7.5, 8.0);
    /* States start at 0.5 s, START at 0: the gap 0..0.5 FAILs. */
    expect_edge_gap(root, "starts-late", 0.5, 9.0, 0.0, 0.5);
    rl_test_tmpdir_free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdict_of_every_mix),
        cmocka_unit_test(test_passed_for_each_status_alone),
        cmocka_unit_test(test_braking_beyond_the_limit),
        cmocka_unit_test(test_topic_gap_at_the_window_edges),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    rl_plot_release_caches(); /* the figures' fonts, so that the leak check sees ours only */
    return failed;
}
