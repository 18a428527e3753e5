/* Metric obs: per vehicle, the age of each observation inside START..STOP (receive time
 * minus header.create_stamp, when the positioning system saw the vehicle) and the distance
 * between the observed pose and the vehicle's own estimate (its state pose interpolated
 * linearly to the moment of the sighting, on the states' header stamps). Draws both over
 * time per vehicle with their limits (figure "obs"), linked to the checks. */
#include "eval/metrics/metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* FAIL or PASS for one series of per-observation values against a limit. */
static int judge(eval_ctx *ctx, int vid, const char *check, const char *what, const char *unit,
                 const double *t, const double *value, size_t n, double limit, double resolution,
                 double min_duration)
{
    bool *over = malloc(n * sizeof *over);
    if (!over)
        return rl_error_set(RL_ENOMEM, "obs: out of memory");
    double worst = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        over[i] = eval_over_limit(value[i], limit, resolution);
        if (value[i] > worst)
            worst = value[i];
    }
    eval_intervals iv = {0};
    int rc = eval_intervals_from_mask(&iv, t, over, n, min_duration);
    free(over);
    char w[48], l[48];
    eval_format_value(worst, resolution, w, sizeof w);
    eval_format_value(limit, resolution, l, sizeof l);
    if (rc == RL_OK) {
        if (iv.n)
            rc = eval_check_add(ctx, check, &vid, 1, RL_EVAL_FAIL, worst, limit, unit, &iv,
                                "vehicle %d: observation %s up to %s %s over the limit %s "
                                "for %.2f s in %zu interval(s), first %.2f..%.2f s",
                                vid, what, w, unit, l, eval_intervals_total(&iv), iv.n,
                                iv.iv[0][0], iv.iv[0][1]);
        else
            rc = eval_check_add(ctx, check, &vid, 1, RL_EVAL_PASS, worst, limit, unit, NULL,
                                "vehicle %d: observation %s at most %s %s (limit %s)", vid,
                                what, w, unit, l);
    }
    eval_intervals_free(&iv);
    return rc;
}

/* The state's position at time `at` on the time base `st` (sorted), interpolated between
 * the two states around it; false when `at` is outside them or they lie more than
 * `max_gap` apart. `*k` is a search hint: forward in steps, back by bisection. */
static bool state_at(const eval_states *s, const double *st, double at, double max_gap, size_t *k,
                     double *x, double *y)
{
    if (*k < s->n && st[*k] > at) { /* sightings' stamps may go back (late ones): search */
        size_t lo = 0, hi = *k;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (st[mid] < at)
                lo = mid + 1;
            else
                hi = mid;
        }
        *k = lo > 0 ? lo - 1 : 0;
    }
    while (*k + 1 < s->n && st[*k + 1] < at)
        (*k)++;
    size_t i = *k;
    if (i + 1 >= s->n || st[i] > at || st[i + 1] < at)
        return false;
    double dt = st[i + 1] - st[i];
    if (dt > max_gap)
        return false;
    double f = dt > 0 ? (at - st[i]) / dt : 0;
    *x = s->x[i] + f * (s->x[i + 1] - s->x[i]);
    *y = s->y[i] + f * (s->y[i + 1] - s->y[i]);
    return isfinite(*x) && isfinite(*y);
}

/* A vehicle's series kept for the figure (owned; n 0 when not computed). */
typedef struct obs_series {
    const double *age_t; /* borrowed from the run */
    double *age;
    size_t nage;
    double *dist_t, *dist;
    size_t ndist;
} obs_series;

static int judge_vehicle(eval_ctx *ctx, const eval_vehicle *v, obs_series *out, double min_samples,
                         double max_age, double max_distance, double max_gap, double resolution,
                         double min_duration, double data_gap)
{
    const eval_run *run = ctx->run;
    size_t first, n = eval_window(run, v->obs.t, v->obs.n, &first);
    int rc;
    bool age_ok = !v->missing[EVAL_OBS_STAMP];
    const char *dist_missing = v->missing[EVAL_OBS_POSE] ? v->missing[EVAL_OBS_POSE]
                                                         : v->missing[EVAL_STATE_POSE];
    if ((rc = eval_coverage_begin(ctx, v, EVAL_TOPIC_OBS, v->obs.t, v->obs.n, data_gap, true)) < 0)
        return rc;
    if (!age_ok)
        rc = eval_check_unavailable(ctx, "age", v->id, v->missing[EVAL_OBS_STAMP]);
    else if ((double)n < min_samples)
        rc = eval_check_insufficient(ctx, "age", v->id, n, min_samples, "observations");
    else {
        double *age = malloc(n * sizeof *age);
        if (!age) {
            eval_coverage_end(ctx);
            return rl_error_set(RL_ENOMEM, "obs: out of memory");
        }
        for (size_t i = 0; i < n; i++)
            age[i] = v->obs.t[first + i] - v->obs.stamp[first + i];
        rc = judge(ctx, v->id, "age", "age", "s", v->obs.t + first, age, n, max_age, resolution,
                   min_duration);
        out->age = age;
        out->age_t = v->obs.t + first;
        out->nage = n;
    }
    eval_coverage_end(ctx);
    if (rc < 0)
        return rc;
    if (dist_missing)
        return eval_check_unavailable(ctx, "distance", v->id, dist_missing);
    /* Compared at the sighting's stamp on the states' stamps; receive times stand in for
       either when the schema has no stamp. */
    const double *obs_time = age_ok ? v->obs.stamp : v->obs.t;
    const double *state_time = v->missing[EVAL_STATE_STAMP] ? v->state.t : v->state.stamp;
    double *t = malloc((n ? n : 1) * sizeof *t), *dist = malloc((n ? n : 1) * sizeof *dist);
    if (!t || !dist) {
        free(t);
        free(dist);
        return rl_error_set(RL_ENOMEM, "obs: out of memory");
    }
    size_t m = 0, hint = 0;
    for (size_t i = first; i < first + n; i++) {
        double x, y;
        if (!state_at(&v->state, state_time, obs_time[i], max_gap, &hint, &x, &y))
            continue;
        t[m] = v->obs.t[i];
        dist[m++] = hypot(v->obs.x[i] - x, v->obs.y[i] - y);
    }
    /* Judged where an observation has states around it: the gaps of either topic. */
    rc = eval_coverage_begin(ctx, v, EVAL_TOPIC_OBS, t, m, data_gap, true);
    if (rc == RL_OK)
        rc = eval_coverage_add(ctx, v, EVAL_TOPIC_STATE, v->state.t, v->state.n);
    if (rc == RL_OK && (double)m < min_samples)
        rc = eval_check_insufficient(ctx, "distance", v->id, m, min_samples,
                                     "observations with states around them");
    else if (rc == RL_OK)
        rc = judge(ctx, v->id, "distance", "distance to the state pose", "m", t, dist, m, max_distance,
                   resolution, min_duration);
    eval_coverage_end(ctx);
    out->dist_t = t;
    out->dist = dist;
    out->ndist = m;
    return rc;
}

/* Age and distance of every vehicle's observations over time with the limits. */
static int obs_figure(eval_ctx *ctx, const obs_series *os, double max_age, double max_distance,
                      double data_gap)
{
    const eval_run *run = ctx->run;
    size_t nv = run->nvehicles;
    eval_series_ref *age = calloc(nv, sizeof *age), *dist = calloc(nv, sizeof *dist);
    char(*labels)[32] = calloc(nv, sizeof *labels);
    int rc = RL_OK;
    if (!age || !dist || !labels)
        rc = rl_error_set(RL_ENOMEM, "obs: out of memory");
    size_t na = 0, nd = 0;
    for (size_t i = 0; rc == RL_OK && i < nv; i++) {
        int id = run->vehicles[i].id;
        snprintf(labels[i], sizeof labels[i], "vehicle %d", id);
        if (os[i].nage)
            age[na++] = (eval_series_ref){labels[i], os[i].age_t, os[i].age, os[i].nage, id,
                                          data_gap};
        if (os[i].ndist)
            dist[nd++] = (eval_series_ref){labels[i], os[i].dist_t, os[i].dist, os[i].ndist, id,
                                           data_gap};
    }
    if (rc == RL_OK && (na || nd)) {
        eval_panel_spec p[2] = {
            {"Observation age (receive time - header stamp)", "age", "s", age, na, NAN, max_age,
             false},
            {"Observed position - state position", "distance", "m", dist, nd, NAN, max_distance,
             false}};
        rc = eval_figure_panels(ctx, "obs", "Observations", p, 2,
                                "Age of each observation and its distance to the vehicle's own "
                                "state pose over time; dashed: the limits (max_age, max_distance)");
        if (rc == RL_OK)
            rc = eval_check_link_figure(ctx, NULL, "obs");
    }
    free(age);
    free(dist);
    free(labels);
    return rc;
}

int eval_metric_obs(eval_ctx *ctx)
{
    double min_samples, max_age, max_distance, max_gap, min_duration, resolution, data_gap;
    int rc;
    if ((rc = eval_setting_f64(ctx, "min_samples", &min_samples)) < 0 ||
        (rc = eval_setting_resolution(ctx, &resolution)) < 0 ||
        (rc = eval_setting_f64(ctx, "max_age", &max_age)) < 0 ||
        (rc = eval_setting_f64(ctx, "max_distance", &max_distance)) < 0 ||
        (rc = eval_setting_f64(ctx, "max_interpolation_gap", &max_gap)) < 0 ||
        (rc = eval_setting_f64(ctx, "min_duration", &min_duration)) < 0 ||
        (rc = eval_setting_max_gap(ctx, &data_gap)) < 0)
        return rc;
    size_t nv = ctx->run->nvehicles;
    obs_series *os = calloc(nv ? nv : 1, sizeof *os);
    if (!os)
        return rl_error_set(RL_ENOMEM, "obs: out of memory");
    for (size_t i = 0; rc == RL_OK && i < nv; i++)
        rc = judge_vehicle(ctx, &ctx->run->vehicles[i], &os[i], min_samples, max_age,
                           max_distance, max_gap, resolution, min_duration, data_gap);
    if (rc == RL_OK && nv)
        rc = obs_figure(ctx, os, max_age, max_distance, data_gap);
    for (size_t i = 0; i < nv; i++) {
        free(os[i].age);
        free(os[i].dist_t);
        free(os[i].dist);
    }
    free(os);
    return rc;
}
