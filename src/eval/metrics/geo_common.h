/* What the motion metrics (command_follow, vehicle_collision, boundary_violation,
 * lanelet_collision) share: a vehicle's poses in the window as a track, how much of the
 * window a track covers, the footprint-against-an-area metric, and the figure of the
 * trajectories over the drawn map with violations marked. */
#ifndef RUNLAB_EVAL_GEO_COMMON_H
#define RUNLAB_EVAL_GEO_COMMON_H

#include "eval/eval_geometry.h"
#include "eval/eval_internal.h"

/* A vehicle's poses inside the window in time order, timed by the header stamps (by the
 * receive time when the schema has no stamp); samples whose time goes back are dropped. */
typedef struct eval_geo_track {
    int id;
    rl_eg_pose *p;
    size_t n;
    const char *missing; /* why there are no poses (topic or field missing), else NULL */
    double break_gap;    /* > 0: figures break the track where poses are further apart */
} eval_geo_track;

/* Fills *out for vehicle v. RL_OK or RL_ENOMEM. */
int eval_geo_track_make(const eval_run *run, const eval_vehicle *v, eval_geo_track *out);
void eval_geo_track_free(eval_geo_track *t);

/* Fraction (0..1) of the window within reach of the track: time between consecutive samples
 * at most max_gap apart. */
double eval_geo_coverage(const eval_run *run, const eval_geo_track *t, double max_gap);

/* Checks the track has data enough: adds UNAVAILABLE (no poses) or INSUFFICIENT (fewer than
 * min_samples, or covering less than min_coverage of the window) for `check` and returns
 * false; true when it may be judged. Errors (RL_ENOMEM) in *rc. */
bool eval_geo_track_usable(eval_ctx *ctx, const char *check, const eval_geo_track *t,
                           double min_samples, double min_coverage, double max_gap, int *rc);

/* The coverage (eval_coverage_begin) of the checks about track `t` (its vehicle's state
 * topic, on the track's times), gaps judged; _add joins the other track of a pair. RL_OK or
 * RL_ENOMEM. */
int eval_geo_coverage_begin(eval_ctx *ctx, const eval_geo_track *t, double max_gap);
int eval_geo_coverage_add(eval_ctx *ctx, const eval_geo_track *t);
/* The same from gaps found once per track (eval_geo_coverage_gaps: begin, copy, end; `out`
 * freed with eval_coverage_gaps_free), for a track judged in many checks (the pairs of
 * vehicle_collision): the coverage comes out as eval_geo_coverage_begin / _add give it. */
int eval_geo_coverage_gaps(eval_ctx *ctx, const eval_geo_track *t, double max_gap,
                           eval_coverage_gaps *out);
int eval_geo_coverage_begin_gaps(eval_ctx *ctx, const eval_geo_track *t,
                                 const eval_coverage_gaps *g, double max_gap);
int eval_geo_coverage_add_gaps(eval_ctx *ctx, const eval_geo_track *t,
                               const eval_coverage_gaps *g);

/* Reads the settings every motion metric has: min_samples, min_coverage, max_gap. */
typedef struct eval_geo_common_settings {
    double min_samples, min_coverage, max_gap;
} eval_geo_common_settings;
int eval_geo_settings(eval_ctx *ctx, eval_geo_common_settings *s);

/* Marks on the map figure: points where a violation was seen. */
typedef struct eval_geo_marks {
    double *x, *y;
    size_t n, cap;
} eval_geo_marks;
int eval_geo_marks_add(eval_geo_marks *m, double x, double y);
void eval_geo_marks_free(eval_geo_marks *m);

/* The figure `name`: the map's lanelets (when there is a map), the `area` outline (may be
 * NULL), the marks labelled `mark_label` (thinned in place to at most 1500) in
 * RL_PLOT_VIOLATION_COLOR under every track in its vehicle's colour, and on the tracks
 * time ticks that show the direction (a chevron every nice step, at most 8 in the window)
 * and a dot at each start. */
int eval_geo_map_figure(eval_ctx *ctx, const char *name, const char *title,
                        const char *caption, const eval_geo_track *tracks, size_t ntracks,
                        const rl_map_point *area, size_t narea, eval_geo_marks *marks,
                        const char *mark_label);

/* A value along a vehicle's path (n points at x, y), e.g. the tracking error. */
typedef struct eval_geo_values {
    const double *x, *y, *v;
    size_t n;
} eval_geo_values;

/* The figure `name`: the map's lanelets, each track wide and pale in its vehicle's colour,
 * over it values[i] (of tracks[i]) colour-mapped along the path (viridis in six bins of
 * limit / 5, the last from the limit up; the legend is the colour scale) and the time
 * ticks of eval_geo_map_figure. */
int eval_geo_value_map_figure(eval_ctx *ctx, const char *name, const char *title,
                              const char *caption, const eval_geo_track *tracks, size_t ntracks,
                              const eval_geo_values *values, double limit, const char *unit);

/* A footprint metric: per vehicle, the excess (m) of each footprint over the allowed area
 * (0 inside) from `excess`; FAIL with the intervals where it is out for at least the
 * min_duration setting, naming the worst excess against the threshold 0. Reads the
 * settings length, width, min_duration besides the common ones. Adds the map figure
 * `figure` with the out-of-area positions marked (when any, or `always_figure`). */
typedef double (*eval_geo_excess_fn)(const void *arg, const rl_map_box *footprint);
typedef struct eval_geo_footprint_spec {
    const char *check;  /* check name */
    const char *where;  /* "outside the lab area", for the reasons */
    eval_geo_excess_fn excess;
    const void *arg;
    const rl_map_point *area; /* drawn on the figure; may be NULL */
    size_t narea;
    const char *figure, *figure_title;
    bool always_figure; /* also without anything to mark (else only with violations) */
} eval_geo_footprint_spec;
int eval_geo_footprint_metric(eval_ctx *ctx, const eval_geo_footprint_spec *spec);

/* Adds the eval_intervals of a list of rl_eg_interval. RL_OK or RL_ENOMEM. */
int eval_geo_intervals(eval_intervals *out, const rl_eg_interval *iv, size_t n);

/* "a-b s" of the first interval and "(+N more)" in buf, for reasons. */
const char *eval_geo_interval_text(const rl_eg_interval *iv, size_t n, char *buf, size_t cap);

#endif
