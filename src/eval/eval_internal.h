/* The evaluation's inside: the decoded run every metric sees (eval_run), the context a
 * metric runs in (eval_ctx: its settings, where its checks and figures go), the metric
 * descriptor and the helpers for adding checks, intervals and figures. docs/eval.md says
 * how to add a metric with these. */
#ifndef RUNLAB_EVAL_INTERNAL_H
#define RUNLAB_EVAL_INTERNAL_H

#include "runlab/error.h"
#include "runlab/eval.h"
#include "runlab/map.h"
#include "runlab/plot.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- The decoded run ------------------------------------------------------------------
 * Times are seconds since START (double); before START they are negative. `t` is the
 * receive time (the bag's log time), `stamp` the message's header.create_stamp. Arrays
 * hold every decoded message of the topic in log-time order, inside the window or not:
 * use eval_window() for the part inside START..STOP. Everything is owned by the run and
 * read-only for metrics. */

/* Fields a metric may need. A vehicle's `missing[f]` is NULL when field f was decoded,
 * else the reason it was not (the topic is not in the bag, or its schema lacks the field:
 * "rt/vehicle/1/state: schema runlab_msgs::msg::dds_::VehicleState_ has no field 'speed'").
 * A check that needs a missing field is UNAVAILABLE with that reason. The *_TOPIC entries
 * say whether the topic itself is there. */
typedef enum eval_field {
    EVAL_STATE_TOPIC = 0,
    EVAL_STATE_STAMP, /* header.create_stamp */
    EVAL_STATE_POSE,  /* pose.x, pose.y, pose.yaw */
    EVAL_STATE_SPEED, /* speed */
    EVAL_STATE_ACCEL, /* imu_acceleration_forward */
    EVAL_OBS_TOPIC,
    EVAL_OBS_STAMP, /* header.create_stamp: when the positioning system saw the vehicle */
    EVAL_OBS_POSE,
    EVAL_CMD_TOPIC,       /* command_trajectory */
    EVAL_CMD_VALID_AFTER, /* header.valid_after_stamp */
    EVAL_CMD_POINTS,      /* trajectory_points[].t/px/py/vx/vy */
    EVAL_FIELD_COUNT
} eval_field;

typedef struct eval_states {
    size_t n;
    double *t, *stamp;
    double *x, *y, *yaw; /* m, rad */
    double *speed;       /* m/s */
    double *accel;       /* longitudinal acceleration, m/s^2 */
} eval_states;

typedef struct eval_observations {
    size_t n;
    double *t, *stamp;
    double *x, *y, *yaw;
} eval_observations;

typedef struct eval_traj_point {
    double t; /* the point's stamp, s since START */
    double px, py, vx, vy;
} eval_traj_point;

/* One trajectory command: its points are points[first .. first + count). */
typedef struct eval_command {
    double t, stamp, valid_after;
    size_t first, count;
} eval_command;

typedef struct eval_commands {
    size_t n;
    eval_command *cmd;
    size_t npoints;
    eval_traj_point *points;
} eval_commands;

/* A vehicle's topics, for the decoding counts and the coverage of checks. */
typedef enum eval_topic {
    EVAL_TOPIC_STATE = 0,
    EVAL_TOPIC_OBS,
    EVAL_TOPIC_CMD,
    EVAL_TOPIC_COUNT
} eval_topic;

/* "state", "observation", "command_trajectory" (rt/vehicle/<id>/<name>). */
const char *eval_topic_name(eval_topic topic);

/* A topic mostly fails to decode when more than this fraction of its messages did not
 * decode: its checks are INSUFFICIENT with `undecodable` as the reason (docs/eval.md). */
#define EVAL_UNDECODABLE_FRACTION 0.5

/* How one topic of a vehicle decoded (issue 29.8): nothing that did not decode is dropped
 * silently; summary.json, decoding.csv and the report state it per topic. */
typedef struct eval_decoding {
    size_t messages;         /* messages of the topic in the bag, decoded or not */
    size_t failed;           /* of those, how many did not decode */
    size_t first_index;      /* the first that did not: its index among the topic's messages */
    int64_t first_log_ns;    /* its log time (ns since the epoch) */
    double first_t;          /* the same in s since START */
    const char *first_error; /* why it did not decode; NULL when none failed */
    const char *refused;     /* the channel was not decoded at all (its message encoding is
                                not cdr): why; else NULL */
    const char *undecodable; /* more than EVAL_UNDECODABLE_FRACTION failed: the reason its
                                checks are INSUFFICIENT; else NULL */
} eval_decoding;

typedef struct eval_vehicle {
    int id;
    eval_states state;       /* rt/vehicle/<id>/state */
    eval_observations obs;   /* rt/vehicle/<id>/observation */
    eval_commands cmd;       /* rt/vehicle/<id>/command_trajectory */
    eval_decoding decoding[EVAL_TOPIC_COUNT]; /* per eval_topic */
    const char *missing[EVAL_FIELD_COUNT];
} eval_vehicle;

typedef struct eval_run {
    const char *dir;
    const char *run_id;       /* "" when the manifest has none */
    const char *state;        /* manifest state; "UNKNOWN" without a manifest */
    const char *state_reason; /* result.reason or "" */
    bool unfinished;          /* not COMPLETE: FAILED, INTERRUPTED, or still being written */
    int64_t start_ns;         /* time zero: START's stamp, else the first message's log time */
    double window_start, window_stop; /* s since START; START..STOP or the whole run */
    double planned_duration;          /* s: manifest or experiment.json "planned_duration_s";
                                         NaN when not recorded */
    const char *window_note;          /* NULL, or why the window is not START..STOP */
    eval_vehicle *vehicles;           /* manifest order (else topic order) */
    size_t nvehicles;
    const rl_map *map;       /* RUN/map/runtime_map.bin, hash checked; NULL when missing */
    const char *map_missing; /* why map is NULL, else NULL */
    const char *map_given;   /* the file given with --map when map is that, else NULL */
    const char *bag_path;
} eval_run;

/* Indexes of the samples of `t` (sorted, n long) inside the run's window: sets *first and
 * returns how many. */
size_t eval_window(const eval_run *run, const double *t, size_t n, size_t *first);

/* ---- Metrics --------------------------------------------------------------------------
 * A metric reads the run and its settings and adds checks (and figures). It returns RL_OK,
 * or a negative status only when the evaluation cannot go on (out of memory, a setting of
 * the wrong type); missing data is never an error: it is a check's status. */
typedef struct eval_ctx eval_ctx;

typedef struct eval_metric {
    const char *name;    /* also its section in default.yaml and in --config */
    const char *summary; /* one line for --help and the report */
    int (*run)(eval_ctx *ctx);
} eval_metric;

/* The registry (src/eval/metrics/registry.c): every metric, in report order. */
extern const eval_metric eval_metrics[];
extern const size_t eval_metric_total;

/* The data behind the checks a metric is adding (eval_coverage.c; set with
 * eval_coverage_begin): how much of the window it covers, the stretches it leaves
 * unjudged, and whether one of its topics mostly failed to decode. */
typedef struct eval_coverage {
    bool active;
    bool judge_gaps;      /* a PASS over a gap longer than max_gap becomes INSUFFICIENT */
    double window_s;      /* the window's length */
    double judged_s;      /* the part of it within max_gap of a sample */
    double max_gap;
    double (*gaps)[2];    /* the unjudged stretches, in time order */
    size_t ngaps, cap_gaps;
    char what[160];       /* the topics judged, for reasons ("rt/vehicle/2/state") */
    const char *undecodable; /* one of them mostly did not decode: why; else NULL */
    char decode_note[160];   /* some of its messages did not decode: how many ("" none) */
} eval_coverage;

/* What a metric sees while it runs. */
struct eval_ctx {
    const eval_run *run;
    const eval_metric *metric;
    json_object *settings; /* its section of the effective configuration (an object) */
    struct eval_sink *sink; /* where checks and figures go (framework-private) */
    eval_coverage coverage; /* applied to every check added while active */
};

/* ---- Settings: the metric's section of default.yaml merged with --config ---------------
 * RL_EINVAL naming "<metric>.<key>" when the key is missing or of the wrong type. */
int eval_setting_f64(eval_ctx *ctx, const char *key, double *out);

/* ---- Intervals ------------------------------------------------------------------------ */
typedef struct eval_intervals {
    double (*iv)[2];
    size_t n, cap;
} eval_intervals;

/* Appends [t0, t1]. RL_ENOMEM. */
int eval_intervals_add(eval_intervals *s, double t0, double t1);
/* Appends the stretches where mask[i] holds (from the time of the first sample that holds
 * to the time of the last one of each run of samples), keeping those lasting at least
 * min_duration s. A lone sample is not a stretch of zero length: it stands for one sample
 * period, to the next sample's time (the last sample: from the previous one's). */
int eval_intervals_from_mask(eval_intervals *s, const double *t, const bool *mask, size_t n,
                             double min_duration);
/* Sum of the lengths. */
double eval_intervals_total(const eval_intervals *s);
void eval_intervals_free(eval_intervals *s);

/* ---- Limits and their resolution ------------------------------------------------------
 * Every metric states a resolution in default.yaml (`resolution`, in its values' units):
 * the smallest excess over a limit it reports. A value over its limit by less than that is
 * not a violation (3.000000000000025 m/s^2 against 3 is rounding, not a fault), and values
 * are written with the resolution's decimals, so a FAIL never reads "3 over the limit 3". */

/* The metric's `resolution` setting; RL_EINVAL naming the key when missing or negative. */
int eval_setting_resolution(eval_ctx *ctx, double *out);
/* Whether `value` exceeds `limit` by at least `resolution` (0: by anything). The small
 * slack absorbs the binary representation of decimal steps (3.001 - 3 < 0.001). */
bool eval_over_limit(double value, double limit, double resolution);
/* `value` with as many decimals as `resolution` has (at most 9; 0: "%.6g"), trailing zeros
 * dropped: 3.0004 at 0.001 is "3", 3.0012 is "3.001". Returns buf. */
const char *eval_format_value(double value, double resolution, char *buf, size_t cap);

/* ---- Checks ---------------------------------------------------------------------------
 * Adds one check of the running metric: `vehicles` (nvehicles ids, may be 0), status,
 * value and threshold (NaN: not applicable), unit ("" or NULL for none), intervals (may
 * be NULL; copied) and the reason as printf text. Every FAIL should name the vehicles, the
 * interval and the value against the threshold. Returns RL_OK or RL_ENOMEM. */
int eval_check_add(eval_ctx *ctx, const char *check, const int *vehicles, size_t nvehicles,
                   rl_eval_status status, double value, double threshold, const char *unit,
                   const eval_intervals *intervals, const char *reason_fmt, ...)
    __attribute__((format(printf, 10, 11)));

/* Shorthand: the check for one vehicle is UNAVAILABLE because of missing[field], or
 * INSUFFICIENT because only `have` samples (< need) lie in the window. */
int eval_check_unavailable(eval_ctx *ctx, const char *check, int vehicle, const char *why);
int eval_check_insufficient(eval_ctx *ctx, const char *check, int vehicle, size_t have,
                            double need, const char *what);

/* ---- Coverage (eval_coverage.c) -------------------------------------------------------
 * Every check states how much of the window its data covers: judged_s of window_s seconds,
 * where a second is judged when it lies within max_gap of samples on both sides (the
 * window's edges count as gaps when the first sample comes later than max_gap after START,
 * or the last earlier than max_gap before STOP). A metric sets the data of the checks it is
 * about to add with eval_coverage_begin (one vehicle's topic: the sample times `t`, sorted,
 * n long, inside the window or not), adds more with eval_coverage_add (the other vehicle of
 * a pair: the gaps are joined), then adds its checks and calls eval_coverage_end. While it
 * is set, eval_check_add records the coverage on every check, and:
 *   - a check of a topic that mostly did not decode is INSUFFICIENT with that reason
 *     (unless it is UNAVAILABLE or N/A); where fewer did not, the reason says how many;
 *   - with `judge_gaps`, a PASS over a gap longer than max_gap is INSUFFICIENT naming the
 *     gap (start..end, length): what was not seen cannot pass. A FAIL stays: it was judged
 *     from the samples that exist.
 * Returns RL_OK or RL_ENOMEM (the coverage is then unset). */
int eval_coverage_begin(eval_ctx *ctx, const eval_vehicle *v, eval_topic topic, const double *t,
                        size_t n, double max_gap, bool judge_gaps);
int eval_coverage_add(eval_ctx *ctx, const eval_vehicle *v, eval_topic topic, const double *t,
                      size_t n);
/* Only the decoding of another topic the checks read (the commands of command_follow). */
void eval_coverage_topic(eval_ctx *ctx, const eval_vehicle *v, eval_topic topic);
void eval_coverage_end(eval_ctx *ctx);
/* The gaps a coverage found, kept to judge several checks of one topic's data without
 * walking its samples again (vehicle_collision: each vehicle's gaps, joined for every pair
 * it is in). eval_coverage_gaps_copy copies the active coverage's gaps (RL_OK or RL_ENOMEM);
 * eval_coverage_begin_gaps / eval_coverage_add_gaps do what eval_coverage_begin / _add do
 * with the sample times those gaps came from (same window and max_gap), to the same bytes. */
typedef struct eval_coverage_gaps {
    double (*gaps)[2];
    size_t n;
} eval_coverage_gaps;
int eval_coverage_gaps_copy(const eval_ctx *ctx, eval_coverage_gaps *out);
void eval_coverage_gaps_free(eval_coverage_gaps *g);
int eval_coverage_begin_gaps(eval_ctx *ctx, const eval_vehicle *v, eval_topic topic,
                             const eval_coverage_gaps *g, double max_gap, bool judge_gaps);
int eval_coverage_add_gaps(eval_ctx *ctx, const eval_vehicle *v, eval_topic topic,
                           const eval_coverage_gaps *g);
/* The metric's `max_gap` setting; RL_EINVAL naming the key when missing or not > 0. */
int eval_setting_max_gap(eval_ctx *ctx, double *out);

/* ---- Figures --------------------------------------------------------------------------
 * Hands a finished figure to the evaluation (always takes ownership, also on error): it
 * is saved as figures/<name>.png and .svg with their records, and drawn in the report
 * under the checks table with `caption`. `name` is a file stem ([a-z0-9_-]). */
int eval_figure_add(eval_ctx *ctx, const char *name, rl_figure *fig, const char *caption);

/* One line of a figure over time: n samples (t[i], y[i]), s since START. */
typedef struct eval_series_ref {
    const char *label;
    const double *t, *y;
    size_t n;
    int vehicle; /* the vehicle's id: the line takes its colour (eval_vehicle_color) */
    double max_gap; /* > 0: the line breaks where samples are further apart (a gap is drawn
                       as a gap, not as a straight line through it); 0: never */
} eval_series_ref;

/* The common figure of a quantity over time (speed, deviation, pair distance): one line
 * per series, the window's bounds on the time axis, and `threshold` as a dashed line
 * (NaN: none); then eval_figure_add. */
int eval_figure_over_time(eval_ctx *ctx, const char *name, const char *title,
                          const char *ylabel, const char *unit, const eval_series_ref *series,
                          size_t nseries, double threshold, const char *caption);

/* ---- Figures for every check (eval_figures.c) --------------------------------------- */

/* The colour (0xRRGGBB) of vehicle `id` in every figure of the run: the vehicle palette
 * (rl_plot_vehicle_color) at the vehicle's index in run->vehicles (manifest order), so a
 * vehicle has one colour in time plots and maps alike; an id not in the run gets the
 * colour after the last vehicle's. */
unsigned eval_vehicle_color(const eval_run *run, int id);

/* Draws one series (time plot line) in its vehicle's colour, labelled, broken where samples
 * lie further apart than its max_gap (> 0). */
int eval_figure_line(eval_ctx *ctx, rl_axes *ax, const eval_series_ref *series);

/* Names `figure` as the figure that shows the running metric's checks called `check`
 * (NULL: all of them) that are PASS or FAIL and have no figure yet (rl_eval_check.figure,
 * summary.json "figure"). Call it after eval_figure_add succeeded. RL_OK or RL_ENOMEM. */
int eval_check_link_figure(eval_ctx *ctx, const char *check, const char *figure);
/* The same for the checks about exactly these vehicles (a pair: in either order; NULL:
 * any), only the FAIL ones when `failing_only`. */
int eval_check_link_figure_for(eval_ctx *ctx, const char *check, const int *vehicles,
                               size_t nvehicles, bool failing_only, const char *figure);

/* Whether a check of the running metric whose name starts with `prefix` is FAIL. */
bool eval_check_any_failed(eval_ctx *ctx, const char *prefix);
/* Whether this metric added a check named `check` that is INSUFFICIENT (a gap in its data:
 * its figure shows where the track breaks off, so a metric draws it then too). */
bool eval_check_any_insufficient(eval_ctx *ctx, const char *check);

/* One panel of eval_figure_panels: series over time and limits drawn as dashed black
 * lines at lo and hi (NaN: none), e.g. the +- of an absolute limit. `step` draws steps. */
typedef struct eval_panel_spec {
    const char *title, *ylabel, *unit;
    const eval_series_ref *series;
    size_t nseries;
    double limit_lo, limit_hi;
    bool step;
} eval_panel_spec;

/* A figure of npanels (1..4) panels over time stacked on one time axis (the window), then
 * eval_figure_add. */
int eval_figure_panels(eval_ctx *ctx, const char *name, const char *title,
                       const eval_panel_spec *panels, size_t npanels, const char *caption);

#endif
