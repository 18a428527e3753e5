/* Tests of the motion metrics (command_follow, vehicle_collision, boundary_violation,
 * lanelet_collision) on synthetic decoded runs whose answers are worked by hand: which
 * vehicle fails, over which interval, with which value against which threshold, and when
 * a check is UNAVAILABLE, INSUFFICIENT or N/A. */
#include "one_lane_map.h"
#include "rl_test.h"

#include "eval/eval_sink.h"
#include "eval/metrics/metrics.h"
#include "runlab/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pose of a synthetic vehicle at time t. */
typedef void (*pose_fn)(double t, double *x, double *y, double *yaw);

/* A vehicle with states at 50 Hz from t0 to t1 (s since START). */
static void add_vehicle(eval_run *run, int id, double t0, double t1, pose_fn f)
{
    run->vehicles = realloc(run->vehicles, (run->nvehicles + 1) * sizeof *run->vehicles);
    assert_non_null(run->vehicles);
    eval_vehicle *v = &run->vehicles[run->nvehicles++];
    memset(v, 0, sizeof *v);
    v->id = id;
    size_t n = (size_t)llround((t1 - t0) * 50) + 1;
    eval_states *s = &v->state;
    s->n = n;
    s->t = calloc(n, sizeof(double));
    s->stamp = calloc(n, sizeof(double));
    s->x = calloc(n, sizeof(double));
    s->y = calloc(n, sizeof(double));
    s->yaw = calloc(n, sizeof(double));
    assert_true(s->t && s->stamp && s->x && s->y && s->yaw);
    for (size_t i = 0; i < n; i++) {
        s->t[i] = s->stamp[i] = t0 + (double)i / 50;
        f(s->t[i], &s->x[i], &s->y[i], &s->yaw[i]);
    }
    v->missing[EVAL_CMD_TOPIC] = "rt/vehicle/N/command_trajectory: not recorded";
}

/* Appends a command received at `recv`, valid after `valid`, with points at t = a..b every
 * second on the line y = y0 moving +x at 1 m/s from x = 0 at t = 0. */
static void add_command(eval_vehicle *v, double recv, double valid, double a, double b,
                        double y0)
{
    eval_commands *c = &v->cmd;
    v->missing[EVAL_CMD_TOPIC] = NULL;
    c->cmd = realloc(c->cmd, (c->n + 1) * sizeof *c->cmd);
    size_t np = (size_t)llround(b - a) + 1;
    c->points = realloc(c->points, (c->npoints + np) * sizeof *c->points);
    assert_true(c->cmd && c->points);
    c->cmd[c->n++] = (eval_command){recv, recv, valid, c->npoints, np};
    for (size_t i = 0; i < np; i++) {
        double t = a + (double)i;
        c->points[c->npoints++] = (eval_traj_point){t, t, y0, 1, 0};
    }
}

static void free_run(eval_run *run)
{
    for (size_t i = 0; i < run->nvehicles; i++) {
        eval_vehicle *v = &run->vehicles[i];
        free(v->state.t), free(v->state.stamp), free(v->state.x), free(v->state.y);
        free(v->state.yaw), free(v->cmd.cmd), free(v->cmd.points);
    }
    free(run->vehicles);
}

static eval_run new_run(void)
{
    eval_run run = {0};
    run.window_start = 0;
    run.window_stop = 10;
    run.state = "COMPLETE";
    run.map_missing = "RUN/map/runtime_map.bin: not present";
    return run;
}

/* Runs `fn` as metric `name` with the JSON settings; checks land in *sink. */
static void run_metric(eval_run *run, const char *name, int (*fn)(eval_ctx *), const char *json,
                       struct eval_sink *sink)
{
    eval_metric m = {name, "test", fn};
    json_object *settings = json_tokener_parse(json);
    assert_non_null(settings);
    memset(sink, 0, sizeof *sink);
    eval_ctx ctx = {.run = run, .metric = &m, .settings = settings, .sink = sink};
    int rc = fn(&ctx);
    json_object_put(settings);
    if (rc != RL_OK)
        fail_msg("%s", rl_error_last());
    /* RL_TEST_FIGURES=DIR keeps the figures as PNG for a look. */
    const char *keep = getenv("RL_TEST_FIGURES");
    for (size_t i = 0; keep && i < sink->nfigures; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.png", keep, sink->figures[i].name);
        assert_int_equal(rl_figure_save(sink->figures[i].fig, path, RL_PLOT_AUTO), RL_OK);
    }
}

/* The check about vehicle `id` (first of its vehicles), or about the pair a-b. */
static const rl_eval_check *find(const struct eval_sink *s, int a, int b)
{
    for (size_t i = 0; i < s->nchecks; i++) {
        const rl_eval_check *c = &s->checks[i];
        if (b < 0 && c->nvehicles == 1 && c->vehicles[0] == a)
            return c;
        if (b >= 0 && c->nvehicles == 2 && c->vehicles[0] == a && c->vehicles[1] == b)
            return c;
    }
    fail_msg("no check for vehicle %d/%d", a, b);
    return NULL;
}

#define NEAR(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

/* ---- command_follow ------------------------------------------------------------------- */

static void on_line(double t, double *x, double *y, double *yaw)
{
    *x = t, *y = 0, *yaw = 0;
}
static void off_4_to_6(double t, double *x, double *y, double *yaw)
{
    *x = t, *y = (t >= 4 - 1e-9 && t <= 6 + 1e-9) ? 0.3 : 0, *yaw = 0;
}
static void off_briefly(double t, double *x, double *y, double *yaw)
{
    *x = t, *y = (t >= 2 - 1e-9 && t <= 2.2 + 1e-9) ? 0.3 : 0, *yaw = 0;
}
static void switch_at_5(double t, double *x, double *y, double *yaw)
{
    *x = t, *y = t >= 5 - 1e-9 ? 1 : 0, *yaw = 0;
}

static const char *follow_json = "{\"min_samples\": 10, \"min_coverage\": 0.5, \"max_gap\": 0.25,"
                                 " \"max_deviation\": 0.15, \"min_duration\": 0.5,"
                                 " \"resolution\": 0.001}";

static void test_command_follow(void **state)
{
    (void)state;
    eval_run run = new_run();
    add_vehicle(&run, 1, 0, 10, on_line);
    add_command(&run.vehicles[0], -1, 0, 0, 10, 0);
    add_vehicle(&run, 2, 0, 10, off_4_to_6);
    add_command(&run.vehicles[1], -1, 0, 0, 10, 0);
    add_vehicle(&run, 3, 0, 10, off_briefly);
    add_command(&run.vehicles[2], -1, 0, 0, 10, 0);
    add_vehicle(&run, 4, 0, 10, on_line); /* no commands recorded */
    /* Vehicle 5: a command for y = 0; one received at 3 valid after 5 for y = 1; one
     * received at 7 valid after 4 for y = 5, older than the second: never active. */
    add_vehicle(&run, 5, 0, 10, switch_at_5);
    add_command(&run.vehicles[4], -1, 0, 0, 10, 0);
    add_command(&run.vehicles[4], 3, 5, 0, 10, 1);
    add_command(&run.vehicles[4], 7, 4, 0, 10, 5);
    /* Vehicle 6: its only command is valid from 9.9 s on: 6 poses with a reference. */
    add_vehicle(&run, 6, 0, 10, on_line);
    add_command(&run.vehicles[5], -1, 9.9, 0, 10, 0);

    struct eval_sink s;
    run_metric(&run, "command_follow", eval_metric_command_follow, follow_json, &s);
    assert_int_equal(s.nchecks, 6);
    const rl_eval_check *c = find(&s, 1, -1);
    assert_int_equal(c->status, RL_EVAL_PASS);
    NEAR(c->value, 0, 1e-9);
    c = find(&s, 2, -1);
    assert_int_equal(c->status, RL_EVAL_FAIL);
    assert_string_equal(c->check, "deviation");
    assert_int_equal(c->nintervals, 1);
    NEAR(c->intervals[0][0], 4, 1e-9);
    NEAR(c->intervals[0][1], 6, 1e-9);
    NEAR(c->value, 0.3, 1e-9);
    NEAR(c->threshold, 0.15, 0);
    assert_non_null(strstr(c->reason, "vehicle 2"));
    assert_non_null(strstr(c->reason, "4.00-6.00 s"));
    c = find(&s, 3, -1); /* 0.2 s over: shorter than min_duration */
    assert_int_equal(c->status, RL_EVAL_PASS);
    NEAR(c->value, 0.3, 1e-9);
    assert_int_equal(find(&s, 4, -1)->status, RL_EVAL_UNAVAILABLE);
    assert_non_null(strstr(find(&s, 4, -1)->reason, "command_trajectory"));
    c = find(&s, 5, -1);
    assert_int_equal(c->status, RL_EVAL_PASS);
    NEAR(c->value, 0, 1e-9);
    c = find(&s, 6, -1);
    assert_int_equal(c->status, RL_EVAL_INSUFFICIENT);
    NEAR(c->value, 6, 0);
    /* INSUFFICIENT: linked to the figure of its data where its metric drew one */
    assert_string_equal(c->figure, "command_follow_deviation");
    assert_string_equal(find(&s, 2, -1)->figure, "command_follow_deviation");
    assert_string_equal(find(&s, 3, -1)->figure, "command_follow_deviation");
    /* The deviation over time, and along the path colour-mapped. */
    assert_int_equal(s.nfigures, 2);
    assert_string_equal(s.figures[0].name, "command_follow_deviation");
    assert_string_equal(s.figures[1].name, "command_follow_map");
    eval_sink_clear(&s);
    free_run(&run);
}

/* ---- vehicle_collision ----------------------------------------------------------------- */

/* The SVG of the sink's figure `name` (free it). */
static char *figure_svg(const struct eval_sink *s, const char *name)
{
    rl_figure *fig = NULL;
    for (size_t i = 0; i < s->nfigures; i++)
        if (strcmp(s->figures[i].name, name) == 0)
            fig = s->figures[i].fig;
    assert_non_null(fig);
    char *svg = NULL;
    size_t len = 0;
    assert_int_equal(rl_figure_to_svg(fig, NULL, &svg, &len), RL_OK);
    return svg;
}

static void parked(double t, double *x, double *y, double *yaw)
{
    (void)t;
    *x = 0, *y = 0, *yaw = 0;
}
static void approaching(double t, double *x, double *y, double *yaw)
{
    *x = -2 + 0.5 * t, *y = 0, *yaw = 0; /* touches the parked car while |x| <= 0.22 */
}
static void far_away(double t, double *x, double *y, double *yaw)
{
    (void)t;
    *x = 0, *y = 5, *yaw = M_PI / 2;
}

static const char *collision_json =
    "{\"min_samples\": 10, \"min_coverage\": 0.5, \"max_gap\": 0.25, \"length\": 0.22,"
    " \"width\": 0.107, \"min_distance\": 0.0, \"time_step\": 0.02, \"min_duration\": 0.0}";

static void test_vehicle_collision(void **state)
{
    (void)state;
    eval_run run = new_run();
    add_vehicle(&run, 1, 0, 10, parked);
    struct eval_sink s;
    run_metric(&run, "vehicle_collision", eval_metric_vehicle_collision, collision_json, &s);
    assert_int_equal(s.nchecks, 1);
    assert_int_equal(s.checks[0].status, RL_EVAL_NA);
    eval_sink_clear(&s);

    add_vehicle(&run, 2, 0, 10, approaching);
    add_vehicle(&run, 3, 0, 10, far_away);
    add_vehicle(&run, 4, 0, 2, parked); /* states for 2 s of 10: too little of the window */
    run_metric(&run, "vehicle_collision", eval_metric_vehicle_collision, collision_json, &s);
    assert_int_equal(s.nchecks, 4); /* vehicle 4 alone, then pairs 1-2, 1-3, 2-3 */
    const rl_eval_check *c = find(&s, 4, -1);
    assert_int_equal(c->status, RL_EVAL_INSUFFICIENT);
    c = find(&s, 1, 2);
    assert_int_equal(c->status, RL_EVAL_FAIL);
    assert_int_equal(c->nintervals, 1);
    /* x = -2 + 0.5 t within 0.22 of 0: t in [3.56, 4.44], on a 0.02 s grid. */
    NEAR(c->intervals[0][0], 3.56, 0.0201);
    NEAR(c->intervals[0][1], 4.44, 0.0201);
    NEAR(c->value, 0, 1e-12);
    assert_non_null(strstr(c->reason, "vehicles 1 and 2"));
    c = find(&s, 1, 3);
    assert_int_equal(c->status, RL_EVAL_PASS);
    assert_true(c->value > 1); /* 5 m apart: at least the circles' clearance */
    NEAR(c->value, 5 - hypot(0.22, 0.107), 1e-9);
    assert_int_equal(find(&s, 2, 3)->status, RL_EVAL_PASS);
    assert_int_equal(s.nfigures, 2);
    /* The colliding pair is in the distance figure; 5 m apart (1-3, 2-3) is not near. */
    assert_string_equal(find(&s, 1, 2)->figure, "vehicle_collision_distance");
    /* The collision's mark (distance 0) is drawn whole inside the plot, not cut in half by
       its lower edge. */
    char *svg = figure_svg(&s, "vehicle_collision_distance");
    const char *clip = strstr(svg, "<clipPath");
    assert_non_null(clip);
    double plot_top = strtod(strstr(clip, " y=\"") + 4, NULL);
    double plot_bottom = plot_top + strtod(strstr(clip, " height=\"") + 9, NULL);
    const char *mark = strstr(svg, "<circle cx=\"");
    assert_non_null(mark);
    double cy = strtod(strstr(mark, " cy=\"") + 5, NULL);
    double r = strtod(strstr(mark, " r=\"") + 4, NULL);
    if (!(cy + r <= plot_bottom))
        fail_msg("collision mark at y %g, radius %g: past the plot's foot at %g", cy, r,
                 plot_bottom);
    free(svg);
    assert_null(find(&s, 1, 3)->figure);
    assert_null(find(&s, 2, 3)->figure);
    eval_sink_clear(&s);
    free_run(&run);
}

/* Passes the parked car at 0.3 m beside it every 2 s (x = 0 at t = 0, 2, ..., 10), 1 m
 * past it in between; its footprint-distance comb is what the distance figure must not draw. */
static void passing(double t, double *x, double *y, double *yaw)
{
    *x = sin(M_PI * t / 2), *y = 0.3, *yaw = 0;
}

/* How many of the SVG's circles lie in the plot, left of x_max (the legend's are right of it). */
static size_t circles_left_of(const char *svg, double x_max)
{
    size_t n = 0;
    for (const char *p = svg; (p = strstr(p, "<circle cx=\"")) != NULL; p++)
        n += strtod(p + strlen("<circle cx=\""), NULL) < x_max;
    return n;
}

static void test_vehicle_collision_approaches(void **state)
{
    (void)state;
    eval_run run = new_run();
    add_vehicle(&run, 1, 0, 10, parked);
    add_vehicle(&run, 2, 0, 10, passing);
    struct eval_sink s;
    run_metric(&run, "vehicle_collision", eval_metric_vehicle_collision, collision_json, &s);
    const rl_eval_check *c = find(&s, 1, 2);
    assert_int_equal(c->status, RL_EVAL_PASS);
    NEAR(c->value, 0.3 - 0.107, 1e-6); /* side by side: the gap between the long sides */
    assert_string_equal(c->figure, "vehicle_collision_distance");
    char *svg = figure_svg(&s, "vehicle_collision_distance");
    /* One mark per pass (6, at the ends of the window too), not one per sample of the 500
     * on the time base closer than 0.5 m. The plot ends left of x = 540 of the 648-wide page. */
    assert_int_equal(circles_left_of(svg, 540), 6);
    free(svg);
    eval_sink_clear(&s);
    free_run(&run);
}

/* ---- thresholds at their boundaries ---------------------------------------------------- */

/* Settings `json_fmt` with its one '@' replaced by `v` (all 17 digits) into json[512]. */
static void settings_with(char *json, const char *json_fmt, double v)
{
    const char *at = strchr(json_fmt, '@');
    assert_non_null(at);
    snprintf(json, 512, "%.*s%.17g%s", (int)(at - json_fmt), json_fmt, v, at + 1);
}

/* The status of the check about vehicle `a` (or pair a-b) of metric `name` run with the
 * settings `json_fmt` whose one '@' stands for `v`. */
static rl_eval_status status_at(eval_run *run, const char *name, int (*fn)(eval_ctx *),
                                const char *json_fmt, double v, int a, int b)
{
    char json[512];
    settings_with(json, json_fmt, v);
    struct eval_sink s;
    run_metric(run, name, fn, json, &s);
    rl_eval_status st = find(&s, a, b)->status;
    eval_sink_clear(&s);
    return st;
}

/* Each threshold set to the measured value itself, one ulp below and one ulp above it. */
static void expect_three(eval_run *run, const char *name, int (*fn)(eval_ctx *),
                         const char *json_fmt, double v, int a, int b, rl_eval_status at,
                         rl_eval_status below, rl_eval_status above)
{
    rl_eval_status got[3] = {status_at(run, name, fn, json_fmt, v, a, b),
                             status_at(run, name, fn, json_fmt, nextafter(v, -INFINITY), a, b),
                             status_at(run, name, fn, json_fmt, nextafter(v, INFINITY), a, b)};
    if (got[0] != at || got[1] != below || got[2] != above)
        fail_msg("%s with %s, v = %.17g: at %s (want %s), below %s (want %s), above %s (want %s)",
                 name, json_fmt, v, rl_eval_status_name(got[0]), rl_eval_status_name(at),
                 rl_eval_status_name(got[1]), rl_eval_status_name(below),
                 rl_eval_status_name(got[2]), rl_eval_status_name(above));
}

static void test_thresholds_at_their_boundaries(void **state)
{
    (void)state;
    /* command_follow: vehicle 2 is 0.3 m off from 4.00 s to 6.00 s. FAIL needs a deviation
     * above max_deviation (strictly) for at least min_duration. */
    eval_run run = new_run();
    add_vehicle(&run, 1, 0, 10, off_4_to_6);
    add_command(&run.vehicles[0], -1, 0, 0, 10, 0);
    struct eval_sink s;
    run_metric(&run, "command_follow", eval_metric_command_follow, follow_json, &s);
    const rl_eval_check *c = find(&s, 1, -1);
    double worst = c->value, length = c->intervals[0][1] - c->intervals[0][0];
    eval_sink_clear(&s);
    NEAR(worst, 0.3, 1e-9);
    NEAR(length, 2.0, 1e-9);
    static const char *const dev_fmt =
        "{\"min_samples\": 10, \"min_coverage\": 0.5, \"max_gap\": 0.25,"
        " \"max_deviation\": @, \"min_duration\": 0, \"resolution\": 0}";
    expect_three(&run, "command_follow", eval_metric_command_follow, dev_fmt, worst, 1, -1,
                 RL_EVAL_PASS, RL_EVAL_FAIL, RL_EVAL_PASS);
    /* With a resolution of 1 mm the deviation must exceed the limit by 1 mm: a limit 1 mm
     * under the worst deviation fails, 0.9 mm under it passes. */
    static const char *const res_fmt =
        "{\"min_samples\": 10, \"min_coverage\": 0.5, \"max_gap\": 0.25,"
        " \"max_deviation\": @, \"min_duration\": 0, \"resolution\": 0.001}";
    assert_int_equal(status_at(&run, "command_follow", eval_metric_command_follow, res_fmt,
                               worst - 0.001, 1, -1), RL_EVAL_FAIL);
    assert_int_equal(status_at(&run, "command_follow", eval_metric_command_follow, res_fmt,
                               worst - 0.0009, 1, -1), RL_EVAL_PASS);
    static const char *const dur_fmt =
        "{\"min_samples\": 10, \"min_coverage\": 0.5, \"max_gap\": 0.25,"
        " \"max_deviation\": 0.15, \"min_duration\": @, \"resolution\": 0.001}";
    expect_three(&run, "command_follow", eval_metric_command_follow, dur_fmt, length, 1, -1,
                 RL_EVAL_FAIL, RL_EVAL_FAIL, RL_EVAL_PASS);
    free_run(&run);

    /* vehicle_collision: 1 parked, 3 parked 5 m away (a constant distance), 4 with poses for
     * 2 s of the 10 s window. FAIL at a distance at or under min_distance; INSUFFICIENT
     * when the poses cover less of the window than min_coverage. */
    run = new_run();
    add_vehicle(&run, 1, 0, 10, parked);
    add_vehicle(&run, 3, 0, 10, far_away);
    add_vehicle(&run, 4, 0, 2, parked);
    run_metric(&run, "vehicle_collision", eval_metric_vehicle_collision, collision_json, &s);
    double apart = find(&s, 1, 3)->value, cover = find(&s, 4, -1)->value;
    eval_sink_clear(&s);
    NEAR(apart, 5 - hypot(0.22, 0.107), 1e-9);
    NEAR(cover, 0.2, 1e-9);
    static const char *const dist_fmt =
        "{\"min_samples\": 10, \"min_coverage\": 0.5, \"max_gap\": 0.25, \"length\": 0.22,"
        " \"width\": 0.107, \"min_distance\": @, \"time_step\": 0.02, \"min_duration\": 0.0}";
    expect_three(&run, "vehicle_collision", eval_metric_vehicle_collision, dist_fmt, apart, 1, 3,
                 RL_EVAL_FAIL, RL_EVAL_PASS, RL_EVAL_FAIL);
    /* Coverage: vehicle 4 judged alone (INSUFFICIENT) or paired with the others. */
    static const char *const cover_fmt =
        "{\"min_samples\": 10, \"min_coverage\": @, \"max_gap\": 0.25, \"length\": 0.22,"
        " \"width\": 0.107, \"min_distance\": 0, \"time_step\": 0.02, \"min_duration\": 0.0}";
    const double limits[3] = {cover, nextafter(cover, -INFINITY), nextafter(cover, INFINITY)};
    const bool want_alone[3] = {false, false, true};
    for (int k = 0; k < 3; k++) {
        char json[512];
        settings_with(json, cover_fmt, limits[k]);
        run_metric(&run, "vehicle_collision", eval_metric_vehicle_collision, json, &s);
        bool alone = false, paired = false;
        for (size_t i = 0; i < s.nchecks; i++) {
            const rl_eval_check *x = &s.checks[i];
            alone |= x->nvehicles == 1 && x->vehicles[0] == 4 &&
                     x->status == RL_EVAL_INSUFFICIENT;
            paired |= x->nvehicles == 2 && (x->vehicles[0] == 4 || x->vehicles[1] == 4);
        }
        eval_sink_clear(&s);
        if (alone != want_alone[k] || paired == want_alone[k])
            fail_msg("min_coverage %.17g, coverage %.17g: vehicle 4 %s", limits[k], cover,
                     alone ? "INSUFFICIENT" : paired ? "paired" : "in no check");
    }
    free_run(&run);
}

/* ---- boundary_violation and lanelet_collision ------------------------------------------ */

static void inside_square(double t, double *x, double *y, double *yaw)
{
    (void)t;
    *x = 2, *y = 2, *yaw = 0.4;
}
static void out_2_to_3(double t, double *x, double *y, double *yaw)
{
    *x = (t >= 2 - 1e-9 && t <= 3 + 1e-9) ? 4.0 : 3.8, *y = 1, *yaw = 0; /* front at 4.11 */
}

#define BOUNDARY_JSON                                                                      \
    "{\"min_samples\": 10, \"min_coverage\": 0.5, \"max_gap\": 0.25, \"length\": 0.22,"     \
    " \"width\": 0.107, \"min_duration\": 0.0, \"step\": 0.01, \"polygon\": %s}"

static void test_boundary_violation(void **state)
{
    (void)state;
    eval_run run = new_run();
    add_vehicle(&run, 1, 0, 10, inside_square);
    add_vehicle(&run, 2, 0, 10, out_2_to_3);
    char json[512];
    snprintf(json, sizeof json, BOUNDARY_JSON, "[[0, 0], [4, 0], [4, 4], [0, 4]]");
    struct eval_sink s;
    run_metric(&run, "boundary_violation", eval_metric_boundary_violation, json, &s);
    assert_int_equal(s.nchecks, 2);
    assert_int_equal(find(&s, 1, -1)->status, RL_EVAL_PASS);
    const rl_eval_check *c = find(&s, 2, -1);
    assert_int_equal(c->status, RL_EVAL_FAIL);
    assert_int_equal(c->nintervals, 1);
    NEAR(c->intervals[0][0], 2, 1e-9);
    NEAR(c->intervals[0][1], 3, 1e-9);
    NEAR(c->value, 0.11, 1e-9);
    assert_int_equal(s.nfigures, 1);
    assert_string_equal(c->figure, s.figures[0].name);
    eval_sink_clear(&s);

    /* No polygon and no map: UNAVAILABLE, saying why. */
    snprintf(json, sizeof json, BOUNDARY_JSON, "null");
    run_metric(&run, "boundary_violation", eval_metric_boundary_violation, json, &s);
    assert_int_equal(s.nchecks, 2);
    assert_int_equal(find(&s, 2, -1)->status, RL_EVAL_UNAVAILABLE);
    assert_non_null(strstr(find(&s, 2, -1)->reason, "runtime_map.bin"));
    eval_sink_clear(&s);

    /* A polygon of two points is a configuration error naming the key. */
    snprintf(json, sizeof json, BOUNDARY_JSON, "[[0, 0], [4, 0]]");
    eval_metric m = {"boundary_violation", "test", eval_metric_boundary_violation};
    json_object *settings = json_tokener_parse(json);
    memset(&s, 0, sizeof s);
    eval_ctx ctx = {.run = &run, .metric = &m, .settings = settings, .sink = &s};
    assert_int_equal(eval_metric_boundary_violation(&ctx), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "boundary_violation.polygon"));
    json_object_put(settings);
    eval_sink_clear(&s);
    free_run(&run);
}

static void mid_lane(double t, double *x, double *y, double *yaw)
{
    *x = 1 + 0.5 * t, *y = 0.5, *yaw = 0;
}
static void edge_5_to_6(double t, double *x, double *y, double *yaw)
{
    /* Left side at y = 0.95 + 0.0535 = 1.0035 from 5 s to 6 s. */
    *x = 1 + 0.5 * t, *y = (t >= 5 - 1e-9 && t <= 6 + 1e-9) ? 0.95 : 0.5, *yaw = 0;
}

static void test_lanelet_collision(void **state)
{
    (void)state;
    one_lane_map m; /* one lanelet, [0,10] x [0,1] */
    one_lane_map_open(&m);
    rl_map *map = m.map;

    eval_run run = new_run();
    add_vehicle(&run, 1, 0, 10, mid_lane);
    add_vehicle(&run, 2, 0, 10, edge_5_to_6);
    const char *json = "{\"min_samples\": 10, \"min_coverage\": 0.5, \"max_gap\": 0.25, "
                       "\"length\": 0.22, \"width\": 0.107, \"min_duration\": 0.0, "
                       "\"step\": 0.01, \"tolerance\": 0.0}";
    struct eval_sink s;
    run_metric(&run, "lanelet_collision", eval_metric_lanelet_collision, json, &s);
    assert_int_equal(s.nchecks, 2);
    find(&s, 1, -1);
    assert_int_equal(find(&s, 1, -1)->status, RL_EVAL_UNAVAILABLE); /* no map yet */
    eval_sink_clear(&s);

    run.map = map;
    run.map_missing = NULL;
    run_metric(&run, "lanelet_collision", eval_metric_lanelet_collision, json, &s);
    assert_int_equal(s.nchecks, 2);
    assert_int_equal(find(&s, 1, -1)->status, RL_EVAL_PASS);
    const rl_eval_check *c = find(&s, 2, -1);
    assert_int_equal(c->status, RL_EVAL_FAIL);
    assert_string_equal(c->check, "off_lanelets");
    assert_int_equal(c->nintervals, 1);
    NEAR(c->intervals[0][0], 5, 1e-9);
    NEAR(c->intervals[0][1], 6, 1e-9);
    NEAR(c->value, 0.0035, 1e-9);
    assert_int_equal(s.nfigures, 1);
    eval_sink_clear(&s);

    /* The map's lab area is the lanelets' box [0,10] x [0,1]: the same excursion. */
    run_metric(&run, "boundary_violation", eval_metric_boundary_violation,
               "{\"min_samples\": 10, \"min_coverage\": 0.5, \"max_gap\": 0.25, \"length\": "
               "0.22, \"width\": 0.107, \"min_duration\": 0.0, \"step\": 0.01, \"polygon\": null}",
               &s);
    c = find(&s, 2, -1);
    assert_int_equal(c->status, RL_EVAL_FAIL);
    NEAR(c->value, 0.0035, 1e-9);
    eval_sink_clear(&s);

    free_run(&run);
    one_lane_map_close(&m);
}

/* The coverage of a check's data (issue 28.4), worked by hand on a 10 s window with
 * max_gap 0.25 s: gaps between samples, at the window's edges, a sample before START
 * bridging the start, no sample at all, and a pair joining the gaps of both vehicles. */
static void test_coverage_gaps(void **state)
{
    (void)state;
    eval_run run = {.window_start = 0, .window_stop = 10};
    eval_vehicle v[2] = {{.id = 1}, {.id = 2}};
    eval_metric m = {"states_speed", "test", NULL};
    struct eval_sink s = {0};
    eval_ctx ctx = {.run = &run, .metric = &m, .sink = &s};
    /* 0.1 s steps, none from 3 to 7 s: 4 s unjudged, 6 judged. */
    double a[101];
    size_t na = 0;
    for (int i = 0; i <= 100; i++)
        if (i <= 30 || i >= 70)
            a[na++] = i * 0.1;
    assert_int_equal(eval_coverage_begin(&ctx, &v[0], EVAL_TOPIC_STATE, a, na, 0.25, true), RL_OK);
    assert_int_equal(ctx.coverage.ngaps, 1);
    assert_true(fabs(ctx.coverage.judged_s - 6) < 1e-9 && ctx.coverage.window_s == 10);
    /* A PASS becomes INSUFFICIENT naming the gap; a FAIL stays. */
    assert_int_equal(eval_check_add(&ctx, "c", &v[0].id, 1, RL_EVAL_PASS, 0, 1, "", NULL, "ok"),
                     RL_OK);
    assert_int_equal(eval_check_add(&ctx, "c", &v[0].id, 1, RL_EVAL_FAIL, 2, 1, "", NULL, "bad"),
                     RL_OK);
    assert_int_equal(s.checks[0].status, RL_EVAL_INSUFFICIENT);
    assert_non_null(strstr(s.checks[0].reason, "no data 3.00..7.00 s (4.00 s, longer than "
                                               "max_gap 0.25 s): judged 6.00 of 10.00 s"));
    assert_int_equal(s.checks[1].status, RL_EVAL_FAIL);
    assert_string_equal(s.checks[1].reason, "bad");
    assert_true(fabs(s.checks[1].judged_s - 6) < 1e-9 && s.checks[1].window_s == 10);
    /* The other vehicle of a pair, sparse: a sample before START 0.6 s before the next
       does not bridge the start. The gaps of both join. */
    double b[] = {-0.1, 0.5, 1, 1.2, 2, 9};
    /* 0..0.5 (from -0.1), 0.5..1, 1.2..2, 2..9 (holds 3..7), 9..10: joined 0..1 and
       1.2..10; only 1..1.2 is judged. */
    assert_int_equal(eval_coverage_add(&ctx, &v[1], EVAL_TOPIC_STATE, b, 6), RL_OK);
    assert_int_equal(ctx.coverage.ngaps, 2);
    assert_true(fabs(ctx.coverage.judged_s - 0.2) < 1e-9);
    assert_non_null(strstr(ctx.coverage.what, "rt/vehicle/1/state and rt/vehicle/2/state"));
    /* A sample before START within max_gap bridges the start; STOP's edge within it too. */
    double c[] = {-0.2, 0.05, 0.3, 0.55, 0.8, 1.0};
    run.window_stop = 1.1;
    assert_int_equal(eval_coverage_begin(&ctx, &v[0], EVAL_TOPIC_STATE, c, 6, 0.25, true), RL_OK);
    assert_int_equal(ctx.coverage.ngaps, 0);
    assert_true(fabs(ctx.coverage.judged_s - 1.1) < 1e-9);
    /* No sample: nothing judged. */
    assert_int_equal(eval_coverage_begin(&ctx, &v[0], EVAL_TOPIC_STATE, NULL, 0, 0.25, true), RL_OK);
    assert_true(ctx.coverage.judged_s == 0 && ctx.coverage.ngaps == 1);
    eval_coverage_end(&ctx);
    assert_false(ctx.coverage.active);
    /* Unset: a check states no coverage. */
    assert_int_equal(eval_check_add(&ctx, "c", NULL, 0, RL_EVAL_PASS, 0, 1, "", NULL, "x"), RL_OK);
    assert_true(isnan(s.checks[2].judged_s) && s.checks[2].status == RL_EVAL_PASS);
    eval_sink_clear(&s);
}

/* Random sample times for the kept-gaps test: steps of 0.02..0.1 s with now and then a
 * jump (gaps of 0.2..3 s, some exactly max_gap), a time going back or not finite, starting
 * before or after START. */
static size_t random_times(unsigned *seed, double *t, size_t cap)
{
#define NEXT() (*seed = *seed * 1103515245u + 12345u, (*seed >> 8) & 0xFFFF)
    double x = -0.5 + 1.0 * NEXT() / 65536.0;
    size_t n = 0;
    while (n < cap && x < 10.5) {
        unsigned r = NEXT() % 100;
        if (r < 4)
            t[n++] = NAN;
        else if (r < 6)
            t[n++] = x - 0.3; /* going back: skipped */
        else
            t[n++] = x;
        x += r < 12 ? 0.2 + 2.8 * NEXT() / 65536.0 : r < 15 ? 0.25 : 0.02 + 0.08 * NEXT() / 65536.0;
    }
    return n;
#undef NEXT
}

/* The coverage's gaps as first written (issue 28.4): every sample through one loop, then
 * sorted, joined and summed. The coverage must keep giving this, bit for bit. */
static size_t reference_gaps(double ws, double we, const double *t, size_t n, double max_gap,
                             double (*g)[2], double *judged)
{
    max_gap *= 1 + 1e-9;
    double prev = ws;
    bool have_prev = false, done = false;
    size_t k = 0;
    for (size_t i = 0; i < n && !done; i++) {
        double x = t[i];
        if (!isfinite(x) || (have_prev && x < prev))
            continue;
        if (x <= ws) {
            prev = x, have_prev = true;
            continue;
        }
        double from = have_prev ? prev : ws;
        if (x - from > max_gap && fmin(x, we) > fmax(from, ws))
            g[k][0] = fmax(from, ws), g[k][1] = fmin(x, we), k++;
        if (x >= we)
            done = true;
        prev = x, have_prev = true;
    }
    if (!done && (!have_prev || we - prev > max_gap)) {
        double a = have_prev ? fmax(prev, ws) : ws;
        if (we > a)
            g[k][0] = a, g[k][1] = we, k++;
    }
    /* Found in time order already: join the touching and overlapping. */
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m > 0 && g[i][0] <= g[m - 1][1])
            g[m - 1][1] = fmax(g[m - 1][1], g[i][1]);
        else
            g[m][0] = g[i][0], g[m][1] = g[i][1], m++;
    }
    double missing = 0;
    for (size_t i = 0; i < m; i++)
        missing += g[i][1] - g[i][0];
    *judged = fmax(0, round(((we - ws) - missing) * 1e6) / 1e6);
    return m;
}

/* The coverage of one track against the reference, on random times with every kind of
 * sample the loop treats apart (NaN, going back, exactly max_gap, before START, after STOP,
 * repeated), and on a few shapes by hand. */
static void test_coverage_matches_reference(void **state)
{
    (void)state;
    eval_run run = {.window_start = 0, .window_stop = 10};
    eval_vehicle v = {.id = 4};
    eval_metric m = {"states_speed", "test", NULL};
    struct eval_sink s = {0};
    eval_ctx ctx = {.run = &run, .metric = &m, .sink = &s};
    static double t[2000], g[2100][2];
    unsigned seed = 777;
    for (int round = 0; round < 400; round++) {
        size_t n = random_times(&seed, t, 2000);
        if (round % 7 == 3 && n > 10)
            t[n / 2] = INFINITY, t[n / 3] = t[n / 3 - 1]; /* an infinity, a repeated time */
        run.window_start = round % 5 == 0 ? 0.3 : 0;
        run.window_stop = round % 3 == 0 ? 7.5 : 10;
        double judged;
        size_t k = reference_gaps(run.window_start, run.window_stop, t, n, 0.25, g, &judged);
        assert_int_equal(eval_coverage_begin(&ctx, &v, EVAL_TOPIC_STATE, t, n, 0.25, true), RL_OK);
        assert_int_equal(ctx.coverage.ngaps, k);
        assert_memory_equal(ctx.coverage.gaps, g, k * sizeof g[0]);
        assert_memory_equal(&ctx.coverage.judged_s, &judged, sizeof judged);
        eval_coverage_end(&ctx);
    }
}

/* vehicle_collision finds each track's gaps once and joins them per pair
 * (eval_coverage_begin_gaps / _add_gaps): the coverage must come out bit for bit as
 * eval_coverage_begin / _add give it from the samples, and so must the checks. */
static void test_coverage_kept_gaps(void **state)
{
    (void)state;
    eval_run run = {.window_start = 0, .window_stop = 10};
    eval_vehicle v[2] = {{.id = 3}, {.id = 8}};
    eval_metric m = {"vehicle_collision", "test", NULL};
    struct eval_sink s1 = {0}, s2 = {0};
    eval_ctx c1 = {.run = &run, .metric = &m, .sink = &s1};
    eval_ctx c2 = {.run = &run, .metric = &m, .sink = &s2};
    static double a[2000], b[2000];
    unsigned seed = 12345;
    size_t joined = 0;
    for (int round = 0; round < 300; round++) {
        size_t na = random_times(&seed, a, 2000), nb = random_times(&seed, b, 2000);
        eval_coverage_gaps ga, gb;
        assert_int_equal(eval_coverage_begin(&c1, &v[0], EVAL_TOPIC_STATE, a, na, 0.25, true), RL_OK);
        assert_int_equal(eval_coverage_gaps_copy(&c1, &ga), RL_OK);
        assert_int_equal(eval_coverage_begin(&c1, &v[1], EVAL_TOPIC_STATE, b, nb, 0.25, true), RL_OK);
        assert_int_equal(eval_coverage_gaps_copy(&c1, &gb), RL_OK);
        /* From the samples, as before. */
        assert_int_equal(eval_coverage_begin(&c1, &v[0], EVAL_TOPIC_STATE, a, na, 0.25, true), RL_OK);
        assert_int_equal(eval_coverage_add(&c1, &v[1], EVAL_TOPIC_STATE, b, nb), RL_OK);
        /* From the kept gaps. */
        assert_int_equal(eval_coverage_begin_gaps(&c2, &v[0], EVAL_TOPIC_STATE, &ga, 0.25, true),
                         RL_OK);
        assert_int_equal(eval_coverage_add_gaps(&c2, &v[1], EVAL_TOPIC_STATE, &gb), RL_OK);
        assert_int_equal(c1.coverage.ngaps, c2.coverage.ngaps);
        assert_memory_equal(c1.coverage.gaps, c2.coverage.gaps,
                            c1.coverage.ngaps * sizeof c1.coverage.gaps[0]);
        assert_memory_equal(&c1.coverage.judged_s, &c2.coverage.judged_s, sizeof(double));
        assert_string_equal(c1.coverage.what, c2.coverage.what);
        joined += c1.coverage.ngaps < ga.n + gb.n; /* some gaps of the two overlapped */
        int ids[2] = {3, 8};
        assert_int_equal(eval_check_add(&c1, "collision", ids, 2, RL_EVAL_PASS, 1, 0, "m", NULL,
                                        "ok"), RL_OK);
        assert_int_equal(eval_check_add(&c2, "collision", ids, 2, RL_EVAL_PASS, 1, 0, "m", NULL,
                                        "ok"), RL_OK);
        assert_int_equal(s1.checks[0].status, s2.checks[0].status);
        assert_string_equal(s1.checks[0].reason, s2.checks[0].reason);
        assert_memory_equal(&s1.checks[0].judged_s, &s2.checks[0].judged_s, sizeof(double));
        eval_coverage_end(&c1);
        eval_coverage_end(&c2);
        eval_coverage_gaps_free(&ga);
        eval_coverage_gaps_free(&gb);
        eval_sink_clear(&s1);
        eval_sink_clear(&s2);
    }
    assert_true(joined > 50); /* the rounds did join overlapping gaps */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_command_follow),
        cmocka_unit_test(test_vehicle_collision),
        cmocka_unit_test(test_vehicle_collision_approaches),
        cmocka_unit_test(test_thresholds_at_their_boundaries),
        cmocka_unit_test(test_boundary_violation),
        cmocka_unit_test(test_lanelet_collision),
        cmocka_unit_test(test_coverage_gaps),
        cmocka_unit_test(test_coverage_kept_gaps),
        cmocka_unit_test(test_coverage_matches_reference),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    rl_plot_release_caches(); /* the distance figure's SVG measured text (fontconfig) */
    return failed;
}
