/* Metric command_follow: how far each vehicle's pose is from the reference of its active
 * trajectory command (chosen as the controller chooses it: the latest whose valid-after
 * stamp has passed, among those received), the reference being the cubic Hermite spline
 * through the command's points. FAIL above max_deviation for at least min_duration. */
#include "eval/metrics/geo_common.h"
#include "eval/metrics/metrics.h"

#include "runlab/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One vehicle's deviation series (the poses that had a reference), kept for the figure. */
typedef struct follow_series {
    int id;
    double *t, *dev;
    double *x, *y; /* the pose's position, for the map of the error */
    size_t n;
} follow_series;

typedef struct follow_settings {
    eval_geo_common_settings common;
    double max_deviation, min_duration, resolution;
} follow_settings;

/* The command's points as rl_eg_traj_point; false when their times go back. */
static bool command_points(const eval_commands *c, size_t k, rl_eg_traj_point *all,
                           const rl_eg_traj_point **pts, size_t *n)
{
    const eval_command *cmd = &c->cmd[k];
    if (cmd->first > c->npoints || cmd->count > c->npoints - cmd->first)
        return false;
    *pts = all + cmd->first;
    *n = cmd->count;
    for (size_t i = 1; i < cmd->count; i++)
        if (!((*pts)[i].t >= (*pts)[i - 1].t))
            return false;
    return true;
}

/* Deviation of every pose that has a reference; fills s->t/dev (the caller frees). */
static int deviations(const eval_vehicle *v, const eval_geo_track *t, follow_series *s)
{
    const eval_commands *c = &v->cmd;
    rl_eg_command *cmds = malloc((c->n ? c->n : 1) * sizeof *cmds);
    rl_eg_activation *act = malloc((c->n ? c->n : 1) * sizeof *act);
    rl_eg_traj_point *pts = malloc((c->npoints ? c->npoints : 1) * sizeof *pts);
    bool *ok = malloc((c->n ? c->n : 1) * sizeof *ok);
    s->t = malloc((t->n ? t->n : 1) * sizeof *s->t);
    s->dev = malloc((t->n ? t->n : 1) * sizeof *s->dev);
    s->x = malloc((t->n ? t->n : 1) * sizeof *s->x);
    s->y = malloc((t->n ? t->n : 1) * sizeof *s->y);
    int rc = RL_OK;
    if (!cmds || !act || !pts || !ok || !s->t || !s->dev || !s->x || !s->y) {
        rc = rl_error_set(RL_ENOMEM, "evaluation: out of memory for command_follow");
        goto done;
    }
    for (size_t i = 0; i < c->npoints; i++) {
        const eval_traj_point *p = &c->points[i];
        pts[i] = (rl_eg_traj_point){p->t, p->px, p->py, p->vx, p->vy};
    }
    for (size_t k = 0; k < c->n; k++) {
        const rl_eg_traj_point *unused;
        size_t n_unused;
        ok[k] = command_points(c, k, pts, &unused, &n_unused);
        cmds[k] = (rl_eg_command){c->cmd[k].t, c->cmd[k].valid_after};
    }
    size_t nact = rl_eg_activations(cmds, c->n, act), cursor = 0;
    for (size_t i = 0; i < t->n; i++) {
        size_t k = rl_eg_active_at(act, nact, &cursor, t->p[i].t);
        double x, y, vx, vy;
        if (k == SIZE_MAX || !ok[k] ||
            !rl_eg_hermite(pts + c->cmd[k].first, c->cmd[k].count, t->p[i].t, &x, &y, &vx, &vy))
            continue;
        s->t[s->n] = t->p[i].t;
        s->dev[s->n] = hypot(t->p[i].x - x, t->p[i].y - y);
        s->x[s->n] = t->p[i].x;
        s->y[s->n] = t->p[i].y;
        s->n++;
    }
done:
    free(cmds);
    free(act);
    free(pts);
    free(ok);
    return rc;
}

static int judge(eval_ctx *ctx, const follow_settings *fs, const follow_series *s)
{
    int id = s->id;
    size_t need = fs->common.min_samples > 1 ? (size_t)fs->common.min_samples : 1;
    if (s->n < need)
        return eval_check_insufficient(ctx, "deviation", id, s->n, need,
                                       "poses with an active command's reference");
    double sum2 = 0, worst = 0, worst_t = 0;
    uint8_t *bad = malloc(s->n);
    if (!bad)
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory for command_follow");
    for (size_t i = 0; i < s->n; i++) {
        sum2 += s->dev[i] * s->dev[i];
        if (s->dev[i] > worst)
            worst = s->dev[i], worst_t = s->t[i];
        bad[i] = eval_over_limit(s->dev[i], fs->max_deviation, fs->resolution);
    }
    double rmse = sqrt(sum2 / (double)s->n);
    rl_eg_interval *iv = NULL;
    size_t niv = 0;
    eval_intervals out = {0};
    int rc = rl_eg_intervals(s->t, bad, s->dev, s->n, fs->common.max_gap, fs->min_duration, &iv,
                             &niv);
    free(bad);
    if (rc == RL_OK)
        rc = eval_geo_intervals(&out, iv, niv);
    if (rc == RL_OK && niv > 0) {
        double fw = 0, ft = 0;
        for (size_t k = 0; k < niv; k++)
            if (iv[k].worst > fw)
                fw = iv[k].worst, ft = iv[k].worst_t;
        char span[64];
        rc = eval_check_add(ctx, "deviation", &id, 1, RL_EVAL_FAIL, fw, fs->max_deviation, "m",
                            &out,
                            "vehicle %d: deviation from the commanded trajectory above %g m "
                            "for %g s or longer %zu time%s (%.2f s in all), %s; worst %.3f m "
                            "at %.2f s against %g m; RMSE %.3f m over %zu poses",
                            id, fs->max_deviation, fs->min_duration, niv, niv == 1 ? "" : "s",
                            eval_intervals_total(&out),
                            eval_geo_interval_text(iv, niv, span, sizeof span), fw, ft,
                            fs->max_deviation, rmse, s->n);
    } else if (rc == RL_OK) {
        rc = eval_check_add(ctx, "deviation", &id, 1, RL_EVAL_PASS, worst, fs->max_deviation,
                            "m", NULL,
                            "vehicle %d: RMSE %.3f m, maximum %.3f m at %.2f s over %zu poses "
                            "(threshold %g m for %g s)",
                            id, rmse, worst, worst_t, s->n, fs->max_deviation, fs->min_duration);
    }
    free(iv);
    eval_intervals_free(&out);
    return rc;
}

/* Deviation over time of every vehicle, with the threshold. */
static int deviation_figure(eval_ctx *ctx, const follow_settings *fs, const follow_series *s,
                            size_t ns)
{
    eval_series_ref *refs = calloc(ns ? ns : 1, sizeof *refs);
    char (*labels)[32] = calloc(ns ? ns : 1, sizeof *labels);
    if (!refs || !labels) {
        free(refs);
        free(labels);
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory for command_follow");
    }
    size_t k = 0;
    for (size_t i = 0; i < ns; i++) {
        if (s[i].n == 0)
            continue;
        snprintf(labels[k], sizeof labels[k], "vehicle %d", s[i].id);
        refs[k] = (eval_series_ref){labels[k], s[i].t, s[i].dev, s[i].n, s[i].id,
                                    fs->common.max_gap};
        k++;
    }
    int rc = eval_figure_over_time(ctx, "command_follow_deviation",
                                   "Deviation from the active trajectory command", "deviation",
                                   "m", refs, k, fs->max_deviation,
                                   "Deviation of each pose from its active command's reference "
                                   "(cubic Hermite), with the threshold");
    if (rc == RL_OK && k)
        rc = eval_check_link_figure(ctx, "deviation", "command_follow_deviation");
    free(refs);
    free(labels);
    return rc;
}

/* The tracks over the map with the deviation colour-mapped along each path (as evo draws
 * the error of a trajectory), when some vehicle has deviations. */
static int deviation_map(eval_ctx *ctx, const follow_settings *fs, const follow_series *s,
                         const eval_geo_track *tracks, size_t ns)
{
    eval_geo_values *values = calloc(ns ? ns : 1, sizeof *values);
    if (!values)
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory for command_follow");
    size_t any = 0;
    for (size_t i = 0; i < ns; i++) {
        values[i] = (eval_geo_values){s[i].x, s[i].y, s[i].dev, s[i].n};
        any += s[i].n;
    }
    int rc = RL_OK;
    if (any)
        rc = eval_geo_value_map_figure(ctx, "command_follow_map",
                                       "Deviation from the commanded trajectory along the path",
                                       "Each vehicle's path (wide, in its colour) with the "
                                       "deviation from its active command colour-mapped along "
                                       "it (bins of max_deviation / 5; yellow: at or over the "
                                       "limit); chevrons: direction at every time tick",
                                       tracks, ns, values, fs->max_deviation, "m");
    free(values);
    return rc;
}

int eval_metric_command_follow(eval_ctx *ctx)
{
    follow_settings fs;
    int rc = eval_geo_settings(ctx, &fs.common);
    if (rc == RL_OK)
        rc = eval_setting_f64(ctx, "max_deviation", &fs.max_deviation);
    if (rc == RL_OK)
        rc = eval_setting_f64(ctx, "min_duration", &fs.min_duration);
    if (rc == RL_OK)
        rc = eval_setting_resolution(ctx, &fs.resolution);
    if (rc != RL_OK)
        return rc;
    const eval_run *run = ctx->run;
    if (run->nvehicles == 0)
        return eval_check_add(ctx, "deviation", NULL, 0, RL_EVAL_UNAVAILABLE, NAN, NAN, NULL,
                              NULL, "no vehicle in the run");
    follow_series *series = calloc(run->nvehicles, sizeof *series);
    eval_geo_track *tracks = calloc(run->nvehicles, sizeof *tracks);
    if (!series || !tracks) {
        free(series);
        free(tracks);
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory for command_follow");
    }
    for (size_t i = 0; rc == RL_OK && i < run->nvehicles; i++) {
        const eval_vehicle *v = &run->vehicles[i];
        series[i].id = v->id;
        const char *missing = v->missing[EVAL_CMD_TOPIC]       ? v->missing[EVAL_CMD_TOPIC]
                              : v->missing[EVAL_CMD_VALID_AFTER] ? v->missing[EVAL_CMD_VALID_AFTER]
                                                                 : v->missing[EVAL_CMD_POINTS];
        eval_geo_track *tp = &tracks[i], t;
        rc = eval_geo_track_make(run, v, tp);
        t = *tp;
        int urc = RL_OK;
        if (rc != RL_OK)
            break;
        tp->break_gap = fs.common.max_gap;
        if ((rc = eval_geo_coverage_begin(ctx, &t, fs.common.max_gap)) == RL_OK)
            eval_coverage_topic(ctx, v, EVAL_TOPIC_CMD); /* the references come from it */
        if (rc != RL_OK)
            (void)0;
        else if (missing)
            rc = eval_check_unavailable(ctx, "deviation", v->id, missing);
        else if (eval_geo_track_usable(ctx, "deviation", &t, fs.common.min_samples,
                                       fs.common.min_coverage, fs.common.max_gap, &urc)) {
            rc = deviations(v, &t, &series[i]);
            if (rc == RL_OK)
                rc = judge(ctx, &fs, &series[i]);
        } else
            rc = urc;
        eval_coverage_end(ctx);
    }
    if (rc == RL_OK)
        rc = deviation_figure(ctx, &fs, series, run->nvehicles);
    if (rc == RL_OK)
        rc = deviation_map(ctx, &fs, series, tracks, run->nvehicles);
    for (size_t i = 0; i < run->nvehicles; i++) {
        free(series[i].t);
        free(series[i].dev);
        free(series[i].x);
        free(series[i].y);
        eval_geo_track_free(&tracks[i]);
    }
    free(series);
    free(tracks);
    return rc;
}
