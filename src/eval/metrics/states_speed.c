/* Metric states_speed: each vehicle's speed and longitudinal acceleration (from its state
 * topic) against limits inside START..STOP, with the time spent over each limit; draws the
 * speed and the acceleration of every vehicle over time with their limits, each linked to
 * its checks. The worked example of docs/eval.md. */
#include "eval/metrics/metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct limit_check {
    const char *check, *what, *unit;
    eval_field field;
    double limit, resolution;
    bool absolute; /* compare |value| (acceleration and braking alike) */
    double max_gap; /* states further apart: the time between is unjudged (and a gap in the
                       figure) */
} limit_check;

/* One vehicle, one quantity: FAIL when it exceeds the limit for at least min_duration. */
static int judge(eval_ctx *ctx, const eval_vehicle *v, const limit_check *lc, const double *values,
                 size_t first, size_t n, double min_duration)
{
    const double *t = v->state.t + first;
    bool *over = malloc(n * sizeof *over);
    if (!over)
        return rl_error_set(RL_ENOMEM, "states_speed: out of memory");
    double worst = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double x = lc->absolute ? fabs(values[first + i]) : values[first + i];
        over[i] = eval_over_limit(x, lc->limit, lc->resolution);
        if (x > worst)
            worst = x;
    }
    eval_intervals iv = {0};
    int rc = eval_intervals_from_mask(&iv, t, over, n, min_duration);
    free(over);
    if (rc < 0)
        return rc;
    char w[48], l[48];
    eval_format_value(worst, lc->resolution, w, sizeof w);
    eval_format_value(lc->limit, lc->resolution, l, sizeof l);
    if (iv.n == 0)
        rc = eval_check_add(ctx, lc->check, &v->id, 1, RL_EVAL_PASS, worst, lc->limit, lc->unit,
                            NULL, "vehicle %d: %s at most %s %s (limit %s)", v->id, lc->what, w,
                            lc->unit, l);
    else
        rc = eval_check_add(ctx, lc->check, &v->id, 1, RL_EVAL_FAIL, worst, lc->limit, lc->unit,
                            &iv,
                            "vehicle %d: %s up to %s %s over the limit %s for %.2f s in %zu "
                            "interval(s), first %.2f..%.2f s",
                            v->id, lc->what, w, lc->unit, l, eval_intervals_total(&iv), iv.n,
                            iv.iv[0][0], iv.iv[0][1]);
    eval_intervals_free(&iv);
    return rc;
}

/* One quantity of every vehicle over time with its limit (+-limit when `absolute`), linked
 * to the checks it shows. */
static int quantity_figure(eval_ctx *ctx, const limit_check *lc, const char *name,
                           const char *title, const char *ylabel, const char *caption)
{
    const eval_run *run = ctx->run;
    if (run->nvehicles == 0)
        return RL_OK;
    eval_series_ref *s = calloc(run->nvehicles, sizeof *s);
    char(*labels)[32] = calloc(run->nvehicles, sizeof *labels);
    if (!s || !labels) {
        free(s);
        free(labels);
        return rl_error_set(RL_ENOMEM, "states_speed: out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < run->nvehicles; i++) {
        const eval_vehicle *v = &run->vehicles[i];
        if (v->missing[lc->field])
            continue;
        snprintf(labels[k], sizeof labels[k], "vehicle %d", v->id);
        const double *y = lc->field == EVAL_STATE_SPEED ? v->state.speed : v->state.accel;
        s[k] = (eval_series_ref){labels[k], v->state.t, y, v->state.n, v->id, lc->max_gap};
        k++;
    }
    int rc = RL_OK;
    if (k) {
        eval_panel_spec p = {title, ylabel, lc->unit, s, k,
                             lc->absolute ? -lc->limit : NAN, lc->limit, false};
        rc = eval_figure_panels(ctx, name, title, &p, 1, caption);
        if (rc == RL_OK)
            rc = eval_check_link_figure(ctx, lc->check, name);
    }
    free(s);
    free(labels);
    return rc;
}

int eval_metric_states_speed(eval_ctx *ctx)
{
    double min_samples, max_speed, max_accel, min_duration, resolution, max_gap;
    int rc;
    if ((rc = eval_setting_f64(ctx, "min_samples", &min_samples)) < 0 ||
        (rc = eval_setting_resolution(ctx, &resolution)) < 0 ||
        (rc = eval_setting_f64(ctx, "max_speed", &max_speed)) < 0 ||
        (rc = eval_setting_f64(ctx, "max_acceleration", &max_accel)) < 0 ||
        (rc = eval_setting_f64(ctx, "min_duration", &min_duration)) < 0 ||
        (rc = eval_setting_max_gap(ctx, &max_gap)) < 0)
        return rc;
    const limit_check checks[] = {
        {"speed", "speed", "m/s", EVAL_STATE_SPEED, max_speed, resolution, false, max_gap},
        {"acceleration", "|longitudinal acceleration|", "m/s^2", EVAL_STATE_ACCEL, max_accel,
         resolution, true, max_gap}};
    const eval_run *run = ctx->run;
    for (size_t i = 0; i < run->nvehicles; i++) {
        const eval_vehicle *v = &run->vehicles[i];
        size_t first, n = eval_window(run, v->state.t, v->state.n, &first);
        if ((rc = eval_coverage_begin(ctx, v, EVAL_TOPIC_STATE, v->state.t, v->state.n, max_gap,
                                      true)) < 0)
            return rc;
        for (size_t c = 0; c < 2 && rc == RL_OK; c++) {
            const limit_check *lc = &checks[c];
            const double *values = c == 0 ? v->state.speed : v->state.accel;
            if (v->missing[lc->field])
                rc = eval_check_unavailable(ctx, lc->check, v->id, v->missing[lc->field]);
            else if ((double)n < min_samples)
                rc = eval_check_insufficient(ctx, lc->check, v->id, n, min_samples,
                                             "states");
            else
                rc = judge(ctx, v, lc, values, first, n, min_duration);
        }
        eval_coverage_end(ctx);
        if (rc < 0)
            return rc;
    }
    rc = quantity_figure(ctx, &checks[0], "speed", "Speed", "speed",
                         "Speed of each vehicle over time; dashed: the limit");
    if (rc == RL_OK)
        rc = quantity_figure(ctx, &checks[1], "acceleration", "Longitudinal acceleration",
                             "acceleration", "Longitudinal acceleration of each vehicle over time; dashed: "
                             "+- the limit (max_acceleration)");
    return rc;
}
