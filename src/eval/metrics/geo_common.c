/* Shared pieces of the motion metrics (see geo_common.h): tracks of poses in the window,
 * their coverage, the footprint-against-an-area metric behind boundary_violation and
 * lanelet_collision, and the map figure with trajectories and violations. */
#include "eval/metrics/geo_common.h"

#include "runlab/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int eval_geo_track_make(const eval_run *run, const eval_vehicle *v, eval_geo_track *out)
{
    memset(out, 0, sizeof *out);
    out->id = v->id;
    if (v->missing[EVAL_STATE_TOPIC] || v->missing[EVAL_STATE_POSE]) {
        out->missing = v->missing[EVAL_STATE_TOPIC] ? v->missing[EVAL_STATE_TOPIC]
                                                    : v->missing[EVAL_STATE_POSE];
        return RL_OK;
    }
    const eval_states *s = &v->state;
    size_t first, n = eval_window(run, s->t, s->n, &first);
    if (n == 0)
        return RL_OK;
    out->p = malloc(n * sizeof *out->p);
    if (!out->p)
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory for vehicle %d's poses", v->id);
    const double *time = (!v->missing[EVAL_STATE_STAMP] && s->stamp) ? s->stamp : s->t;
    for (size_t i = first; i < first + n; i++) {
        double t = time[i];
        if (!isfinite(t) || (out->n > 0 && t < out->p[out->n - 1].t))
            continue;
        if (!isfinite(s->x[i]) || !isfinite(s->y[i]) || !isfinite(s->yaw[i]))
            continue;
        out->p[out->n++] = (rl_eg_pose){t, s->x[i], s->y[i], s->yaw[i]};
    }
    return RL_OK;
}

void eval_geo_track_free(eval_geo_track *t)
{
    free(t->p);
    memset(t, 0, sizeof *t);
}

double eval_geo_coverage(const eval_run *run, const eval_geo_track *t, double max_gap)
{
    double span = run->window_stop - run->window_start;
    if (!(span > 0))
        return t->n > 0 ? 1 : 0;
    double covered = 0;
    for (size_t i = 1; i < t->n; i++) {
        double h = t->p[i].t - t->p[i - 1].t;
        if (h <= max_gap)
            covered += h;
    }
    return fmin(1, covered / span);
}

static const eval_vehicle *track_vehicle(const eval_run *run, const eval_geo_track *t)
{
    for (size_t i = 0; i < run->nvehicles; i++)
        if (run->vehicles[i].id == t->id)
            return &run->vehicles[i];
    return NULL;
}

/* The track's times into a new array (NULL with n 0: none). */
static int track_times(const eval_geo_track *t, double **out)
{
    *out = NULL;
    if (t->n == 0)
        return RL_OK;
    *out = malloc(t->n * sizeof **out);
    if (!*out)
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory for the coverage");
    for (size_t i = 0; i < t->n; i++)
        (*out)[i] = t->p[i].t;
    return RL_OK;
}

int eval_geo_coverage_begin(eval_ctx *ctx, const eval_geo_track *t, double max_gap)
{
    const eval_vehicle *v = track_vehicle(ctx->run, t);
    double *times;
    int rc = v ? track_times(t, &times) : RL_OK;
    if (!v || rc < 0)
        return rc;
    rc = eval_coverage_begin(ctx, v, EVAL_TOPIC_STATE, times, t->n, max_gap, true);
    free(times);
    return rc;
}

int eval_geo_coverage_add(eval_ctx *ctx, const eval_geo_track *t)
{
    const eval_vehicle *v = track_vehicle(ctx->run, t);
    double *times;
    int rc = v && ctx->coverage.active ? track_times(t, &times) : RL_OK;
    if (!v || !ctx->coverage.active || rc < 0)
        return rc;
    rc = eval_coverage_add(ctx, v, EVAL_TOPIC_STATE, times, t->n);
    free(times);
    return rc;
}

int eval_geo_coverage_gaps(eval_ctx *ctx, const eval_geo_track *t, double max_gap,
                           eval_coverage_gaps *out)
{
    memset(out, 0, sizeof *out);
    int rc = eval_geo_coverage_begin(ctx, t, max_gap);
    if (rc == RL_OK)
        rc = eval_coverage_gaps_copy(ctx, out);
    eval_coverage_end(ctx);
    return rc;
}

int eval_geo_coverage_begin_gaps(eval_ctx *ctx, const eval_geo_track *t,
                                 const eval_coverage_gaps *g, double max_gap)
{
    const eval_vehicle *v = track_vehicle(ctx->run, t);
    return v ? eval_coverage_begin_gaps(ctx, v, EVAL_TOPIC_STATE, g, max_gap, true) : RL_OK;
}

int eval_geo_coverage_add_gaps(eval_ctx *ctx, const eval_geo_track *t,
                               const eval_coverage_gaps *g)
{
    const eval_vehicle *v = track_vehicle(ctx->run, t);
    if (!v || !ctx->coverage.active)
        return RL_OK;
    return eval_coverage_add_gaps(ctx, v, EVAL_TOPIC_STATE, g);
}

int eval_geo_settings(eval_ctx *ctx, eval_geo_common_settings *s)
{
    int rc = eval_setting_f64(ctx, "min_samples", &s->min_samples);
    if (rc == RL_OK)
        rc = eval_setting_f64(ctx, "min_coverage", &s->min_coverage);
    if (rc == RL_OK)
        rc = eval_setting_f64(ctx, "max_gap", &s->max_gap);
    if (rc == RL_OK && !(s->max_gap > 0))
        rc = rl_error_set(RL_EINVAL, "configuration: %s.max_gap: must be > 0", ctx->metric->name);
    return rc;
}

bool eval_geo_track_usable(eval_ctx *ctx, const char *check, const eval_geo_track *t,
                           double min_samples, double min_coverage, double max_gap, int *rc)
{
    *rc = RL_OK;
    if (t->missing) {
        *rc = eval_check_unavailable(ctx, check, t->id, t->missing);
        return false;
    }
    size_t need = min_samples > 1 ? (size_t)min_samples : 1;
    if (t->n < need) {
        *rc = eval_check_insufficient(ctx, check, t->id, t->n, need, "poses in the window");
        return false;
    }
    double cov = eval_geo_coverage(ctx->run, t, max_gap);
    if (cov < min_coverage) {
        int id = t->id;
        *rc = eval_check_add(ctx, check, &id, 1, RL_EVAL_INSUFFICIENT, cov, min_coverage, "",
                             NULL,
                             "vehicle %d: poses cover %.0f %% of the window (gaps over %g s "
                             "not counted), less than the %.0f %% needed",
                             id, 100 * cov, max_gap, 100 * min_coverage);
        return false;
    }
    return true;
}

int eval_geo_marks_add(eval_geo_marks *m, double x, double y)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 256;
        double *nx = realloc(m->x, cap * sizeof *nx);
        if (nx)
            m->x = nx;
        double *ny = nx ? realloc(m->y, cap * sizeof *ny) : NULL;
        if (!ny)
            return rl_error_set(RL_ENOMEM, "evaluation: out of memory for figure marks");
        m->y = ny;
        m->cap = cap;
    }
    m->x[m->n] = x;
    m->y[m->n] = y;
    m->n++;
    return RL_OK;
}

void eval_geo_marks_free(eval_geo_marks *m)
{
    free(m->x);
    free(m->y);
    memset(m, 0, sizeof *m);
}

int eval_geo_intervals(eval_intervals *out, const rl_eg_interval *iv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = eval_intervals_add(out, iv[i].t0, iv[i].t1);
        if (rc != RL_OK)
            return rc;
    }
    return RL_OK;
}

const char *eval_geo_interval_text(const rl_eg_interval *iv, size_t n, char *buf, size_t cap)
{
    if (n == 0)
        snprintf(buf, cap, "none");
    else if (n == 1)
        snprintf(buf, cap, "%.2f-%.2f s", iv[0].t0, iv[0].t1);
    else
        snprintf(buf, cap, "%.2f-%.2f s (+%zu more)", iv[0].t0, iv[0].t1, n - 1);
    return buf;
}

/* Draws a closed polyline. */
static int draw_ring(rl_axes *ax, const rl_map_point *pts, size_t n, const rl_series_opts *o)
{
    double *x = malloc((n + 1) * sizeof *x), *y = malloc((n + 1) * sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory for the map figure");
    }
    for (size_t i = 0; i <= n; i++)
        x[i] = pts[i % n].x, y[i] = pts[i % n].y;
    int rc = rl_axes_line(ax, x, y, n + 1, o);
    free(x);
    free(y);
    return rc;
}

/* Indexes of at most `cap` points of the track, evenly thinned, the last one kept;
 * returns how many (idx holds cap + 1). */
static size_t thin(size_t n, size_t cap, size_t *idx)
{
    size_t every = n > cap ? (n + cap - 1) / cap : 1, k = 0;
    for (size_t j = 0; j < n; j += every)
        idx[k++] = j;
    if (n > 0 && (n - 1) % every != 0)
        idx[k++] = n - 1;
    return k;
}

/* Draws one track (indexes idx[0..k)) in the vehicle's colour (alpha < 0: its white
 * outline, unlabelled), `width` pt wide, in pieces:
 * cairo strokes a long path that crosses itself lap after lap several times slower than
 * the same segments as short paths. */
#define TRACK_PIECE 100
static int draw_track(eval_ctx *ctx, rl_axes *ax, const eval_geo_track *t, const size_t *idx,
                      size_t k, double width, double alpha)
{
    double *x = malloc((k ? k : 1) * sizeof *x), *y = malloc((k ? k : 1) * sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory for the map figure");
    }
    for (size_t j = 0; j < k; j++)
        x[j] = t->p[idx[j]].x, y[j] = t->p[idx[j]].y;
    char label[32];
    snprintf(label, sizeof label, "vehicle %d", t->id);
    rl_series_opts o;
    rl_series_opts_init(&o);
    o.label = alpha < 0 ? NULL : label;
    o.use_rgb = true;
    o.rgb = alpha < 0 ? 0xFFFFFFu : eval_vehicle_color(ctx->run, t->id);
    o.dash = 0;
    o.line_width = width;
    o.alpha = alpha < 0 ? 0.85 : alpha;
    /* A gap in time (poses further apart than break_gap, and than the thinning's step) is
     * drawn as a gap: the next piece starts after it instead of sharing its end point. */
    double period = t->n > 1 ? (t->p[t->n - 1].t - t->p[0].t) / (double)(t->n - 1) : 0;
    double step = k > 1 ? (double)(idx[1] - idx[0]) : 1;
    double gap = t->break_gap > 0 ? fmax(t->break_gap, 1.5 * step * period) : INFINITY;
    int rc = RL_OK;
    size_t j = 0;
    while (rc == RL_OK && (j == 0 || j + 1 < k)) {
        size_t len = 1;
        while (j + len < k && len < TRACK_PIECE + 1 &&
               !(t->p[idx[j + len]].t - t->p[idx[j + len - 1]].t > gap))
            len++;
        rc = rl_axes_line(ax, x + j, y + j, len, &o);
        o.label = NULL;
        bool broken = j + len < k && t->p[idx[j + len]].t - t->p[idx[j + len - 1]].t > gap;
        j += broken || len == 1 ? len : len - 1;
    }
    free(x);
    free(y);
    return rc;
}

/* The nice time step (1, 2 or 5 x 10^k s) that puts at most 8 ticks in the window. */
static double tick_step(const eval_run *run)
{
    double ticks[16], step = 0;
    double w0 = run->window_start, w1 = run->window_stop;
    if (!(w1 > w0) || rl_plot_ticks_linear(w0, w1, 8, ticks, 16, &step) < 1 || !(step > 0))
        return 0;
    return step;
}

/* Time ticks with the direction of travel: a black chevron pointing the way the vehicle
 * moves at every multiple of `step` s on each track, and a black dot at each start. The
 * chevron's arms are `size` m long (data units: the axes have equal aspect). */
static int draw_ticks(rl_axes *ax, const eval_geo_track *tracks, size_t ntracks, double step,
                      double size)
{
    enum { MAX_TICKS = 64 };
    rl_series_opts o;
    rl_series_opts_init(&o);
    char label[64];
    snprintf(label, sizeof label, "direction, every %g s", step);
    o.label = label;
    o.use_rgb = true;
    o.rgb = RL_PLOT_LIMIT_COLOR;
    o.dash = 0;
    o.line_width = 1.3;
    int rc = RL_OK;
    bool any = false;
    for (size_t v = 0; rc == RL_OK && v < ntracks && step > 0; v++) {
        const eval_geo_track *t = &tracks[v];
        if (t->n < 2)
            continue;
        size_t j = 0, nticks = 0;
        for (double at = ceil(t->p[0].t / step) * step;
             rc == RL_OK && at <= t->p[t->n - 1].t && nticks < MAX_TICKS; at += step, nticks++) {
            while (j + 1 < t->n && t->p[j + 1].t <= at)
                j++;
            size_t a = j > 0 ? j - 1 : 0, b = j + 1 < t->n ? j + 1 : j;
            double dx = t->p[b].x - t->p[a].x, dy = t->p[b].y - t->p[a].y;
            double heading = hypot(dx, dy) > 1e-6 ? atan2(dy, dx) : t->p[j].yaw;
            double tx = t->p[j].x, ty = t->p[j].y;
            double cx[3] = {tx - size * cos(heading + 0.5), tx, tx - size * cos(heading - 0.5)};
            double cy[3] = {ty - size * sin(heading + 0.5), ty, ty - size * sin(heading - 0.5)};
            rc = rl_axes_line(ax, cx, cy, 3, &o);
            o.label = NULL;
            any = true;
        }
    }
    if (rc != RL_OK || !any)
        return rc;
    double *sx = malloc(ntracks * sizeof *sx), *sy = malloc(ntracks * sizeof *sy);
    if (!sx || !sy) {
        free(sx);
        free(sy);
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory for the map figure");
    }
    size_t k = 0;
    for (size_t v = 0; v < ntracks; v++)
        if (tracks[v].n > 0)
            sx[k] = tracks[v].p[0].x, sy[k] = tracks[v].p[0].y, k++;
    rl_series_opts_init(&o);
    o.label = "start";
    o.use_rgb = true;
    o.rgb = RL_PLOT_LIMIT_COLOR;
    o.marker = RL_MARKER_CIRCLE;
    o.marker_size = 5;
    o.alpha = 1;
    rc = rl_axes_scatter(ax, sx, sy, k, &o);
    free(sx);
    free(sy);
    return rc;
}

/* Size of the chevrons: 1.5 % of the larger side of what the figure shows. */
static double tick_size(const eval_geo_track *tracks, size_t ntracks, const rl_map *map)
{
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (size_t v = 0; v < ntracks; v++)
        for (size_t i = 0; i < tracks[v].n; i++) {
            x0 = fmin(x0, tracks[v].p[i].x), x1 = fmax(x1, tracks[v].p[i].x);
            y0 = fmin(y0, tracks[v].p[i].y), y1 = fmax(y1, tracks[v].p[i].y);
        }
    if (map) {
        rl_map_info in;
        rl_map_get_info(map, &in);
        x0 = fmin(x0, in.area_xmin), x1 = fmax(x1, in.area_xmax);
        y0 = fmin(y0, in.area_ymin), y1 = fmax(y1, in.area_ymax);
    }
    double side = fmax(x1 - x0, y1 - y0);
    return isfinite(side) && side > 0 ? 0.015 * side : 0.1;
}

/* The figure's frame and what lies under the tracks: the map's lanelets, the area. */
static int map_base(eval_ctx *ctx, const char *title, const rl_map_point *area, size_t narea,
                    rl_figure **out)
{
    rl_figure *fig;
    int rc = rl_figure_new(&fig, 1, 1);
    if (rc != RL_OK)
        return rc;
    rl_axes *ax = rl_figure_axes(fig, 0, 0);
    rc = rl_figure_set_size_px(fig, 900, 800, 100);
    if (rc == RL_OK)
        rc = rl_axes_set_title(ax, title);
    if (rc == RL_OK)
        rc = rl_axes_set_xlabel(ax, "x", "m");
    if (rc == RL_OK)
        rc = rl_axes_set_ylabel(ax, "y", "m");
    if (rc == RL_OK)
        rc = rl_axes_set_equal_aspect(ax, true);
    if (rc == RL_OK)
        rc = rl_axes_set_legend(ax, RL_LEGEND_OUTSIDE);
    rl_series_opts o;
    rl_series_opts_init(&o);
    o.color = 6;
    o.dash = 0;
    o.line_width = 0.5;
    o.alpha = 0.35;
    const rl_map *map = ctx->run->map;
    size_t nl = map ? rl_map_lanelet_count(map) : 0;
    for (size_t i = 0; i < nl && rc == RL_OK; i++) {
        const rl_map_point *pts;
        size_t n = rl_map_lanelet_line(map, i, RL_MAP_POLYGON, &pts);
        o.label = i == 0 ? "lanelets" : NULL;
        if (n >= 2)
            rc = draw_ring(ax, pts, n, &o);
    }
    if (rc == RL_OK && area && narea >= 2) {
        o.alpha = 1;
        o.line_width = 1.5;
        o.label = "lab area";
        rc = draw_ring(ax, area, narea, &o);
    }
    if (rc != RL_OK) {
        rl_figure_free(fig);
        return rc;
    }
    *out = fig;
    return RL_OK;
}

/* Rendering dominates the cost of the figure: 20 vehicles x 1500 points take about 0.3 s
 * as PNG, so longer tracks are thinned evenly in time. */
enum { MARKS_CAP = 1500, TRACK_POINTS = 1500 };

/* Every track in its vehicle's colour; with `halo` each on a white outline first, so
 * the marks drawn before stay under the line and the track reads through them. */
static int draw_tracks(eval_ctx *ctx, rl_axes *ax, const eval_geo_track *tracks,
                       size_t ntracks, double width, double alpha, bool halo)
{
    size_t *idx = malloc((TRACK_POINTS + 1) * sizeof *idx);
    if (!idx)
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory for the map figure");
    int rc = RL_OK;
    for (size_t i = 0; i < ntracks && rc == RL_OK; i++) {
        if (tracks[i].n == 0)
            continue;
        size_t k = thin(tracks[i].n, TRACK_POINTS, idx);
        if (halo)
            rc = draw_track(ctx, ax, &tracks[i], idx, k, width + 1.2, -1);
        if (rc == RL_OK)
            rc = draw_track(ctx, ax, &tracks[i], idx, k, width, alpha);
    }
    free(idx);
    return rc;
}

int eval_geo_map_figure(eval_ctx *ctx, const char *name, const char *title,
                        const char *caption, const eval_geo_track *tracks, size_t ntracks,
                        const rl_map_point *area, size_t narea, eval_geo_marks *marks,
                        const char *mark_label)
{
    rl_figure *fig;
    int rc = map_base(ctx, title, area, narea, &fig);
    if (rc != RL_OK)
        return rc;
    rl_axes *ax = rl_figure_axes(fig, 0, 0);
    /* The marks first, so the tracks' lines are drawn over them: a mark shows where, the
       track stays readable through it. */
    if (marks && marks->n > 0) {
        rl_series_opts o;
        rl_series_opts_init(&o);
        o.label = mark_label;
        o.use_rgb = true;
        o.rgb = RL_PLOT_VIOLATION_COLOR;
        o.marker = RL_MARKER_CROSS;
        o.marker_size = 9;
        o.below_lines = true;
        /* Every sample out would hide the tracks: at most MARKS_CAP marks, evenly thinned. */
        size_t every = (marks->n + MARKS_CAP - 1) / MARKS_CAP, k = 0;
        for (size_t i = 0; i < marks->n; i += every, k++)
            marks->x[k] = marks->x[i], marks->y[k] = marks->y[i];
        rc = rl_axes_scatter(ax, marks->x, marks->y, k, &o);
    }
    /* The white outline keeps a track readable over the marks; without marks it would only
       hide the lanelets beside the track, at the cost of stroking every track twice. */
    if (rc == RL_OK)
        rc = draw_tracks(ctx, ax, tracks, ntracks, 1.2, 0, marks && marks->n > 0);
    if (rc == RL_OK)
        rc = draw_ticks(ax, tracks, ntracks, tick_step(ctx->run),
                        tick_size(tracks, ntracks, ctx->run->map));
    if (rc != RL_OK) {
        rl_figure_free(fig);
        return rc;
    }
    return eval_figure_add(ctx, name, fig, caption);
}

/* The colour scale of eval_geo_value_map_figure: viridis at six stops. */
#define VALUE_BINS 6
static const unsigned value_colors[VALUE_BINS] = {0x440154, 0x414487, 0x2A788E,
                                                  0x22A884, 0x7AD151, 0xFDE725};

static int value_bin(double v, double top)
{
    int b = (int)floor(v / top * (VALUE_BINS - 1));
    return b < 0 ? 0 : b >= VALUE_BINS ? VALUE_BINS - 1 : b;
}

int eval_geo_value_map_figure(eval_ctx *ctx, const char *name, const char *title,
                              const char *caption, const eval_geo_track *tracks, size_t ntracks,
                              const eval_geo_values *values, double limit, const char *unit)
{
    rl_figure *fig;
    int rc = map_base(ctx, title, NULL, 0, &fig);
    if (rc != RL_OK)
        return rc;
    rl_axes *ax = rl_figure_axes(fig, 0, 0);
    /* Each vehicle's track wide and pale in its colour, the values along it on top. */
    rc = draw_tracks(ctx, ax, tracks, ntracks, 5, 0.45, false);
    /* Bins of limit / 5: the last one holds everything from the limit up. */
    double top = limit > 0 ? limit : 1;
    double width = top / (VALUE_BINS - 1);
    rl_series_opts o;
    for (int b = 0; rc == RL_OK && b < VALUE_BINS; b++) {
        char label[64];
        if (b + 1 < VALUE_BINS)
            snprintf(label, sizeof label, "%.3g-%.3g %s", b * width, (b + 1) * width, unit);
        else
            snprintf(label, sizeof label, ">= %.3g %s (limit)", b * width, unit);
        rl_series_opts_init(&o);
        o.label = label;
        o.use_rgb = true;
        o.rgb = value_colors[b];
        o.dash = 0;
        o.line_width = 2.2;
        rc = rl_axes_line(ax, NULL, NULL, 0, &o); /* the legend's colour scale */
    }
    size_t *idx = malloc((TRACK_POINTS + 1) * sizeof *idx);
    double *x = malloc((TRACK_POINTS + 1) * sizeof *x), *y = malloc((TRACK_POINTS + 1) * sizeof *y);
    if (rc == RL_OK && (!idx || !x || !y))
        rc = rl_error_set(RL_ENOMEM, "evaluation: out of memory for the map figure");
    for (size_t v = 0; rc == RL_OK && v < ntracks; v++) {
        const eval_geo_values *val = &values[v];
        size_t k = thin(val->n, TRACK_POINTS, idx);
        /* Runs of points in one bin as one line; each run ends at the next run's first point
           so the path has no holes. */
        for (size_t i = 0; rc == RL_OK && i + 1 < k;) {
            int b = value_bin(val->v[idx[i]], top);
            size_t j = i, m = 0;
            while (j + 1 < k && value_bin(val->v[idx[j]], top) == b) {
                x[m] = val->x[idx[j]], y[m] = val->y[idx[j]], m++;
                j++;
            }
            x[m] = val->x[idx[j]], y[m] = val->y[idx[j]], m++;
            rl_series_opts_init(&o);
            o.use_rgb = true;
            o.rgb = value_colors[b];
            o.dash = 0;
            o.line_width = 2.2;
            rc = rl_axes_line(ax, x, y, m, &o);
            i = j;
        }
    }
    free(idx);
    free(x);
    free(y);
    if (rc == RL_OK)
        rc = draw_ticks(ax, tracks, ntracks, tick_step(ctx->run),
                        tick_size(tracks, ntracks, ctx->run->map));
    if (rc != RL_OK) {
        rl_figure_free(fig);
        return rc;
    }
    return eval_figure_add(ctx, name, fig, caption);
}

/* One vehicle of a footprint metric: the excess of every pose, the intervals out, the check
 * and the marks. */
static int footprint_vehicle(eval_ctx *ctx, const eval_geo_footprint_spec *spec,
                             const eval_geo_track *t, double length, double width,
                             double min_duration, double max_gap, eval_geo_marks *marks)
{
    double *time = malloc(t->n * sizeof *time), *excess = malloc(t->n * sizeof *excess);
    uint8_t *bad = malloc(t->n);
    rl_eg_interval *iv = NULL;
    size_t niv = 0;
    eval_intervals out = {0};
    int rc = (!time || !excess || !bad)
                 ? rl_error_set(RL_ENOMEM, "evaluation: out of memory for %s", spec->check)
                 : RL_OK;
    double worst = 0, worst_t = NAN;
    for (size_t i = 0; rc == RL_OK && i < t->n; i++) {
        rl_map_box b = rl_eg_footprint(&t->p[i], length, width);
        time[i] = t->p[i].t;
        excess[i] = spec->excess(spec->arg, &b);
        bad[i] = excess[i] > 0;
        if (excess[i] > worst)
            worst = excess[i], worst_t = time[i];
    }
    if (rc == RL_OK)
        rc = rl_eg_intervals(time, bad, excess, t->n, max_gap, min_duration, &iv, &niv);
    if (rc == RL_OK)
        rc = eval_geo_intervals(&out, iv, niv);
    for (size_t k = 0; rc == RL_OK && k < niv; k++)
        for (size_t i = iv[k].first; rc == RL_OK && i <= iv[k].last; i++)
            rc = eval_geo_marks_add(marks, t->p[i].x, t->p[i].y);
    int id = t->id;
    if (rc == RL_OK && niv > 0) {
        double fail_worst = 0, fail_t = 0;
        for (size_t k = 0; k < niv; k++)
            if (iv[k].worst > fail_worst)
                fail_worst = iv[k].worst, fail_t = iv[k].worst_t;
        char span[64];
        rc = eval_check_add(ctx, spec->check, &id, 1, RL_EVAL_FAIL, fail_worst, 0, "m", &out,
                            "vehicle %d: footprint %s %zu time%s for %.2f s in all, %s; "
                            "worst %.3f m out at %.2f s (threshold 0 m)",
                            id, spec->where, niv, niv == 1 ? "" : "s",
                            eval_intervals_total(&out), eval_geo_interval_text(iv, niv, span, sizeof span),
                            fail_worst, fail_t);
    } else if (rc == RL_OK) {
        if (worst > 0)
            rc = eval_check_add(ctx, spec->check, &id, 1, RL_EVAL_PASS, worst, 0, "m", NULL,
                                "vehicle %d: %zu poses; out only briefly (under %g s), worst "
                                "%.3f m at %.2f s",
                                id, t->n, min_duration, worst, worst_t);
        else
            rc = eval_check_add(ctx, spec->check, &id, 1, RL_EVAL_PASS, 0, 0, "m", NULL,
                                "vehicle %d: footprint never %s over %zu poses", id, spec->where,
                                t->n);
    }
    free(time);
    free(excess);
    free(bad);
    free(iv);
    eval_intervals_free(&out);
    return rc;
}

int eval_geo_footprint_metric(eval_ctx *ctx, const eval_geo_footprint_spec *spec)
{
    eval_geo_common_settings cs;
    double length, width, min_duration;
    int rc = eval_geo_settings(ctx, &cs);
    if (rc == RL_OK)
        rc = eval_setting_f64(ctx, "length", &length);
    if (rc == RL_OK)
        rc = eval_setting_f64(ctx, "width", &width);
    if (rc == RL_OK)
        rc = eval_setting_f64(ctx, "min_duration", &min_duration);
    if (rc != RL_OK)
        return rc;
    const eval_run *run = ctx->run;
    eval_geo_track *tracks = calloc(run->nvehicles ? run->nvehicles : 1, sizeof *tracks);
    if (!tracks)
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory for %s", spec->check);
    eval_geo_marks marks = {0};
    for (size_t v = 0; rc == RL_OK && v < run->nvehicles; v++) {
        rc = eval_geo_track_make(run, &run->vehicles[v], &tracks[v]);
        tracks[v].break_gap = cs.max_gap;
        if (rc == RL_OK)
            rc = eval_geo_coverage_begin(ctx, &tracks[v], cs.max_gap);
        int urc;
        if (rc == RL_OK && eval_geo_track_usable(ctx, spec->check, &tracks[v], cs.min_samples,
                                                 cs.min_coverage, cs.max_gap, &urc))
            rc = footprint_vehicle(ctx, spec, &tracks[v], length, width, min_duration,
                                   cs.max_gap, &marks);
        else if (rc == RL_OK)
            rc = urc;
        eval_coverage_end(ctx);
    }
    if (rc == RL_OK && run->nvehicles == 0)
        rc = eval_check_add(ctx, spec->check, NULL, 0, RL_EVAL_UNAVAILABLE, NAN, NAN, NULL, NULL,
                            "no vehicle in the run");
    bool draw = spec->always_figure || marks.n > 0 || eval_check_any_insufficient(ctx, spec->check);
    if (rc == RL_OK && run->nvehicles > 0 && draw)
        rc = eval_geo_map_figure(ctx, spec->figure, spec->figure_title, spec->figure_title,
                                 tracks, run->nvehicles, spec->area, spec->narea, &marks,
                                 "out");
    if (rc == RL_OK && run->nvehicles > 0 && draw)
        rc = eval_check_link_figure(ctx, spec->check, spec->figure);
    for (size_t v = 0; v < run->nvehicles; v++)
        eval_geo_track_free(&tracks[v]);
    free(tracks);
    eval_geo_marks_free(&marks);
    return rc;
}
