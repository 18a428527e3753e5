/* Metric vehicle_collision: the oriented footprints of every pair of vehicles on a common
 * time base (each vehicle's poses interpolated at every time_step, never across a gap above
 * max_gap), their minimum distance, and the intervals where they come closer than
 * min_distance (0: touching or overlapping), one check per pair. */
#include "eval/metrics/geo_common.h"
#include "eval/metrics/metrics.h"

#include "runlab/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Distances beyond this are the circumscribed circles' clearance, not computed exactly. */
#define EXACT_WITHIN 1.0
/* How many of the closest pairs the distance figure shows at most. */
#define FIGURE_PAIRS 6
/* The distance figure shows (and its legend lists) only pairs that come near: closer, at
 * their closest, than NEAR_FACTOR x min_distance or NEAR_DISTANCE m, whichever is larger
 * (two lengths of the 1:18 car), and never beyond EXACT_WITHIN (the figure's top). */
#define NEAR_FACTOR 3.0
#define NEAR_DISTANCE 0.5
/* An approach ends only when the distance climbs this far above the near distance: noise
 * at the edge must not split one pass into many. */
#define APPROACH_END_FACTOR 1.1

typedef struct collision_settings {
    eval_geo_common_settings common;
    double length, width, min_distance, time_step, min_duration;
} collision_settings;

typedef struct pair_result {
    size_t a, b; /* indexes into the usable vehicles */
    double min_dist;
} pair_result;

typedef struct grid {
    double t0, step;
    size_t n;
    double *t;
    rl_eg_pose **pose; /* per usable vehicle */
    uint8_t **valid;
    double (**trig)[2]; /* cos and sin of each pose's yaw (rl_eg_yaw_trig) */
} grid;

static void grid_free(grid *g, size_t nv)
{
    for (size_t i = 0; i < nv && g->pose; i++) {
        free(g->pose[i]);
        free(g->valid[i]);
        free(g->trig[i]);
    }
    free(g->pose);
    free(g->valid);
    free(g->trig);
    free(g->t);
}

/* The common time base over the part of the window some usable track covers. */
static int grid_make(const collision_settings *cs, eval_geo_track *const *tracks, size_t nv,
                     grid *g)
{
    memset(g, 0, sizeof *g);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < nv; i++) {
        lo = fmin(lo, tracks[i]->p[0].t);
        hi = fmax(hi, tracks[i]->p[tracks[i]->n - 1].t);
    }
    double steps = floor((hi - lo) / cs->time_step) + 1;
    if (!(steps >= 1) || steps > 1e8)
        return rl_error_set(RL_EINVAL,
                            "vehicle_collision: %.0f steps of %g s: set a larger time_step",
                            steps, cs->time_step);
    g->t0 = lo;
    g->step = cs->time_step;
    g->n = (size_t)steps;
    g->t = malloc(g->n * sizeof *g->t);
    g->pose = calloc(nv, sizeof *g->pose);
    g->valid = calloc(nv, sizeof *g->valid);
    g->trig = calloc(nv, sizeof *g->trig);
    if (!g->t || !g->pose || !g->valid || !g->trig)
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory for vehicle_collision");
    for (size_t k = 0; k < g->n; k++)
        g->t[k] = lo + (double)k * g->step;
    for (size_t i = 0; i < nv; i++) {
        g->pose[i] = malloc(g->n * sizeof *g->pose[i]);
        g->valid[i] = malloc(g->n);
        g->trig[i] = malloc(g->n * sizeof *g->trig[i]);
        if (!g->pose[i] || !g->valid[i] || !g->trig[i])
            return rl_error_set(RL_ENOMEM, "evaluation: out of memory for vehicle_collision");
        rl_eg_resample(tracks[i]->p, tracks[i]->n, lo, g->step, g->n, cs->common.max_gap,
                       g->pose[i], g->valid[i]);
        rl_eg_yaw_trig(g->pose[i], g->n, g->trig[i]);
    }
    return RL_OK;
}

/* Judges one pair; adds its collision positions to the marks. */
static int judge_pair(eval_ctx *ctx, const collision_settings *cs, const grid *g, size_t a,
                      size_t b, int ida, int idb, double *dist, uint8_t *bad, double *neg,
                      eval_geo_marks *marks, double *min_out)
{
    /* Only the minimum and the times within min_distance count here (the figure computes
     * its pairs' whole series again). */
    rl_eg_pair_distance_near(g->pose[a], g->valid[a], (const double(*)[2])g->trig[a], g->pose[b],
                             g->valid[b], (const double(*)[2])g->trig[b], g->n, cs->length,
                             cs->width, EXACT_WITHIN, cs->min_distance, dist);
    size_t both = 0, nbad = 0;
    double min_dist = INFINITY, min_t = NAN;
    for (size_t k = 0; k < g->n; k++) {
        bool known = !isnan(dist[k]);
        both += known;
        bad[k] = known && dist[k] <= cs->min_distance;
        nbad += bad[k];
        neg[k] = bad[k] ? -dist[k] : NAN; /* only the times too close are read */
        if (known && dist[k] < min_dist)
            min_dist = dist[k], min_t = g->t[k];
    }
    *min_out = min_dist;
    int ids[2] = {ida, idb};
    size_t need = cs->common.min_samples > 1 ? (size_t)cs->common.min_samples : 1;
    if (both < need)
        return eval_check_add(ctx, "collision", ids, 2, RL_EVAL_INSUFFICIENT, (double)both,
                              (double)need, "", NULL,
                              "vehicles %d and %d: both poses known at %zu of the %zu common "
                              "times (every %g s), %zu needed",
                              ida, idb, both, g->n, g->step, need);
    rl_eg_interval *iv = NULL;
    size_t niv = 0;
    eval_intervals out = {0};
    /* Consecutive common times are one step apart; an unknown time ends a stretch. */
    int rc = nbad ? rl_eg_intervals(g->t, bad, neg, g->n, 1.5 * g->step, cs->min_duration, &iv,
                                    &niv)
                  : RL_OK; /* no time too close: no interval */
    if (rc == RL_OK)
        rc = eval_geo_intervals(&out, iv, niv);
    for (size_t k = 0; rc == RL_OK && k < niv; k++)
        for (size_t i = iv[k].first; rc == RL_OK && i <= iv[k].last; i++) {
            rc = eval_geo_marks_add(marks, g->pose[a][i].x, g->pose[a][i].y);
            if (rc == RL_OK)
                rc = eval_geo_marks_add(marks, g->pose[b][i].x, g->pose[b][i].y);
        }
    char span[64];
    if (rc == RL_OK && niv > 0)
        rc = eval_check_add(ctx, "collision", ids, 2, RL_EVAL_FAIL, min_dist, cs->min_distance,
                            "m", &out,
                            "vehicles %d and %d: footprints %s %zu time%s (%.2f s in all), %s; "
                            "minimum distance %.3f m at %.2f s against %g m",
                            ida, idb, cs->min_distance > 0 ? "too close" : "touch or overlap",
                            niv, niv == 1 ? "" : "s", eval_intervals_total(&out),
                            eval_geo_interval_text(iv, niv, span, sizeof span), min_dist, min_t,
                            cs->min_distance);
    else if (rc == RL_OK)
        rc = eval_check_add(ctx, "collision", ids, 2, RL_EVAL_PASS, min_dist, cs->min_distance,
                            "m", NULL,
                            "vehicles %d and %d: minimum distance %s%.3f m at %.2f s over %zu "
                            "common times",
                            ida, idb, min_dist > EXACT_WITHIN ? "at least " : "", min_dist,
                            min_t, both);
    free(iv);
    eval_intervals_free(&out);
    return rc;
}

static int pair_cmp(const void *pa, const void *pb)
{
    const pair_result *a = pa, *b = pb;
    return (a->min_dist > b->min_dist) - (a->min_dist < b->min_dist);
}

/* The distance under which a pair is near (NEAR_FACTOR above). */
static double near_within(const collision_settings *cs)
{
    return fmin(EXACT_WITHIN, fmax(NEAR_FACTOR * cs->min_distance, NEAR_DISTANCE));
}

/* The closest approaches of the pairs that come near, one mark per approach at its closest
 * point, with the threshold: a pass is what a lab looks for, and the distance over a whole
 * run of pairs lapping a circuit is a comb no one can read. Each pair's marks are in the
 * colour of its first vehicle, the marker's shape telling pairs of one vehicle apart. */
static int distance_figure(eval_ctx *ctx, const collision_settings *cs, const grid *g,
                           eval_geo_track *const *tracks, pair_result *pairs, size_t np,
                           double *dist)
{
    qsort(pairs, np, sizeof *pairs, pair_cmp);
    double near = near_within(cs);
    rl_figure *fig;
    int rc = rl_figure_new(&fig, 1, 1);
    if (rc != RL_OK)
        return rc;
    rl_axes *ax = rl_figure_axes(fig, 0, 0);
    double *at = malloc((g->n ? g->n : 1) * sizeof *at), *ad = malloc((g->n ? g->n : 1) * sizeof *ad);
    if (!at || !ad)
        rc = rl_error_set(RL_ENOMEM, "evaluation: out of memory for vehicle_collision_distance");
    if (rc == RL_OK)
        rc = rl_figure_set_size_px(fig, 900, 450, 100);
    if (rc == RL_OK)
        rc = rl_axes_set_xlabel(ax, "time since START", "s");
    if (rc == RL_OK)
        rc = rl_axes_set_ylabel(ax, "closest distance", "m");
    /* A little room below 0 and beyond the window's ends: a collision's mark (distance 0)
       and a pass at the first or last instant are drawn whole, and the threshold's dashes
       at 0 stay off the axis line. */
    double top = near * APPROACH_END_FACTOR;
    if (rc == RL_OK)
        rc = rl_axes_set_ylim(ax, -0.04 * top, top);
    double w0 = ctx->run->window_start, w1 = ctx->run->window_stop, pad = 0.015 * (w1 - w0);
    if (rc == RL_OK && w1 > w0)
        rc = rl_axes_set_xlim(ax, w0 - pad, w1 + pad);
    if (rc == RL_OK)
        rc = rl_axes_set_legend(ax, RL_LEGEND_OUTSIDE);
    rl_series_opts o;
    size_t shown = 0;
    for (size_t p = 0; p < np && p < FIGURE_PAIRS && rc == RL_OK; p++) {
        if (!(pairs[p].min_dist <= near))
            break; /* sorted: no later pair is nearer */
        size_t a = pairs[p].a, b = pairs[p].b;
        rl_eg_pair_distance_trig(g->pose[a], g->valid[a], (const double(*)[2])g->trig[a],
                                 g->pose[b], g->valid[b], (const double(*)[2])g->trig[b], g->n,
                                 cs->length, cs->width, EXACT_WITHIN, dist);
        size_t k = rl_eg_closest_approaches(g->t, dist, g->n, near, APPROACH_END_FACTOR, at, ad);
        char label[64];
        snprintf(label, sizeof label, "vehicles %d-%d", tracks[a]->id, tracks[b]->id);
        rl_series_opts_init(&o);
        o.label = label;
        o.use_rgb = true;
        o.rgb = eval_vehicle_color(ctx->run, tracks[a]->id);
        o.marker = (rl_marker)(RL_MARKER_CIRCLE + (int)(p % 7));
        o.marker_size = 6;
        rc = rl_axes_scatter(ax, at, ad, k, &o);
        int ids[2] = {tracks[a]->id, tracks[b]->id};
        if (rc == RL_OK)
            rc = eval_check_link_figure_for(ctx, "collision", ids, 2, false,
                                            "vehicle_collision_distance");
        shown++;
    }
    if (rc == RL_OK) {
        double x[2] = {ctx->run->window_start, ctx->run->window_stop};
        double y[2] = {cs->min_distance, cs->min_distance};
        rl_series_opts_init(&o);
        o.label = "threshold";
        o.use_rgb = true;
        o.rgb = RL_PLOT_LIMIT_COLOR;
        o.dash = 1;
        rc = rl_axes_line(ax, x, y, 2, &o);
    }
    free(at);
    free(ad);
    char title[96];
    snprintf(title, sizeof title, shown ? "Closest approaches of the pairs within %.2g m"
                                        : "No pair came within %.2g m", near);
    if (rc == RL_OK)
        rc = rl_axes_set_title(ax, title);
    if (rc != RL_OK) {
        rl_figure_free(fig);
        return rc;
    }
    return eval_figure_add(ctx, "vehicle_collision_distance", fig,
                           "Each mark is one approach of a pair at its closest: a stretch of "
                           "known poses that comes within max(3 x min_distance, 0.5 m), ended "
                           "by a pose unknown or by the distance passing 1.1 times that; at "
                           "most the 6 closest pairs, each in its first vehicle's colour with "
                           "its own marker; the dashed line is the threshold");
}

static int run_pairs(eval_ctx *ctx, const collision_settings *cs, eval_geo_track *const *usable,
                     size_t nu, eval_geo_marks *marks)
{
    grid g;
    int rc = grid_make(cs, usable, nu, &g);
    size_t np = nu * (nu - 1) / 2;
    pair_result *pairs = rc == RL_OK ? malloc(np * sizeof *pairs) : NULL;
    double *dist = rc == RL_OK ? malloc(g.n * sizeof *dist) : NULL;
    double *neg = rc == RL_OK ? malloc(g.n * sizeof *neg) : NULL;
    uint8_t *bad = rc == RL_OK ? malloc(g.n) : NULL;
    if (rc == RL_OK && (!pairs || !dist || !neg || !bad))
        rc = rl_error_set(RL_ENOMEM, "evaluation: out of memory for vehicle_collision");
    /* Each track's gaps found once: every vehicle is in nu - 1 pairs. */
    eval_coverage_gaps *gaps = rc == RL_OK ? calloc(nu, sizeof *gaps) : NULL;
    if (rc == RL_OK && !gaps)
        rc = rl_error_set(RL_ENOMEM, "evaluation: out of memory for vehicle_collision");
    for (size_t i = 0; rc == RL_OK && i < nu; i++)
        rc = eval_geo_coverage_gaps(ctx, usable[i], cs->common.max_gap, &gaps[i]);
    size_t k = 0;
    for (size_t a = 0; rc == RL_OK && a < nu; a++)
        for (size_t b = a + 1; rc == RL_OK && b < nu; b++) {
            pairs[k] = (pair_result){a, b, INFINITY};
            /* A pair is judged where both poses are known: the gaps of either track. */
            rc = eval_geo_coverage_begin_gaps(ctx, usable[a], &gaps[a], cs->common.max_gap);
            if (rc == RL_OK)
                rc = eval_geo_coverage_add_gaps(ctx, usable[b], &gaps[b]);
            if (rc == RL_OK)
                rc = judge_pair(ctx, cs, &g, a, b, usable[a]->id, usable[b]->id, dist, bad, neg,
                                marks, &pairs[k].min_dist);
            eval_coverage_end(ctx);
            k++;
        }
    if (rc == RL_OK)
        rc = distance_figure(ctx, cs, &g, usable, pairs, np, dist);
    for (size_t i = 0; gaps && i < nu; i++)
        eval_coverage_gaps_free(&gaps[i]);
    free(gaps);
    free(pairs);
    free(dist);
    free(neg);
    free(bad);
    grid_free(&g, nu);
    return rc;
}

int eval_metric_vehicle_collision(eval_ctx *ctx)
{
    collision_settings cs;
    int rc = eval_geo_settings(ctx, &cs.common);
    if (rc == RL_OK)
        rc = eval_setting_f64(ctx, "length", &cs.length);
    if (rc == RL_OK)
        rc = eval_setting_f64(ctx, "width", &cs.width);
    if (rc == RL_OK)
        rc = eval_setting_f64(ctx, "min_distance", &cs.min_distance);
    if (rc == RL_OK)
        rc = eval_setting_f64(ctx, "time_step", &cs.time_step);
    if (rc == RL_OK)
        rc = eval_setting_f64(ctx, "min_duration", &cs.min_duration);
    if (rc == RL_OK && !(cs.time_step > 0))
        rc = rl_error_set(RL_EINVAL, "configuration: vehicle_collision.time_step: must be > 0");
    if (rc != RL_OK)
        return rc;
    const eval_run *run = ctx->run;
    if (run->nvehicles < 2)
        return eval_check_add(ctx, "collision", run->nvehicles ? &run->vehicles[0].id : NULL,
                              run->nvehicles, RL_EVAL_NA, NAN, NAN, NULL, NULL,
                              "%zu vehicle%s in the run: no pair to collide", run->nvehicles,
                              run->nvehicles == 1 ? "" : "s");
    eval_geo_track *tracks = calloc(run->nvehicles, sizeof *tracks);
    eval_geo_track **usable = calloc(run->nvehicles, sizeof *usable);
    if (!tracks || !usable) {
        free(tracks);
        free(usable);
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory for vehicle_collision");
    }
    size_t nu = 0;
    for (size_t i = 0; rc == RL_OK && i < run->nvehicles; i++) {
        rc = eval_geo_track_make(run, &run->vehicles[i], &tracks[i]);
        tracks[i].break_gap = cs.common.max_gap;
        if (rc == RL_OK)
            rc = eval_geo_coverage_begin(ctx, &tracks[i], cs.common.max_gap);
        int urc;
        if (rc == RL_OK && eval_geo_track_usable(ctx, "collision", &tracks[i],
                                                 cs.common.min_samples, cs.common.min_coverage,
                                                 cs.common.max_gap, &urc))
            usable[nu++] = &tracks[i];
        else if (rc == RL_OK)
            rc = urc;
        eval_coverage_end(ctx);
    }
    eval_geo_marks marks = {0};
    if (rc == RL_OK && nu >= 2)
        rc = run_pairs(ctx, &cs, usable, nu, &marks);
    if (rc == RL_OK && marks.n > 0) /* lanelet_collision draws the trajectories anyway */
        rc = eval_geo_map_figure(ctx, "vehicle_collision_map", "Trajectories and collisions",
                                 "Trajectories over the map; crosses: both vehicles' positions "
                                 "while their footprints were too close",
                                 tracks, run->nvehicles, NULL, 0, &marks, "collision");
    if (rc == RL_OK && marks.n > 0) /* the failing pairs the distance figure had no room for */
        rc = eval_check_link_figure_for(ctx, "collision", NULL, 0, true,
                                        "vehicle_collision_map");
    for (size_t i = 0; i < run->nvehicles; i++)
        eval_geo_track_free(&tracks[i]);
    free(tracks);
    free(usable);
    eval_geo_marks_free(&marks);
    return rc;
}
