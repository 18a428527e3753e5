/* Internal geometry of the evaluation's motion metrics (not public API), on plain arrays:
 * cubic Hermite interpolation of trajectory points, the active command as the vehicle's
 * controller picks it, pose series resampled onto a common time base, footprint distances of
 * a pair, intervals of a condition with a minimum duration, and footprints against the lab
 * area and the lanelets. Times are seconds (relative to any origin the caller chooses). */
#ifndef RUNLAB_SRC_EVAL_GEOMETRY_H
#define RUNLAB_SRC_EVAL_GEOMETRY_H

#include "runlab/map.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The lab's 1:18 car: its rectangle, the pose being the rectangle's centre. */
#define RL_EG_CAR_LENGTH 0.22
#define RL_EG_CAR_WIDTH 0.107

typedef struct rl_eg_pose {
    double t, x, y, yaw;
} rl_eg_pose;

typedef struct rl_eg_traj_point {
    double t, px, py, vx, vy;
} rl_eg_traj_point;

/* Reference of a trajectory at time t: the cubic Hermite spline through the points (position
 * and velocity at each point's time). Points must be in increasing time (equal times: the
 * later point wins). False when n == 0 or t lies outside [first t, last t]. */
bool rl_eg_hermite(const rl_eg_traj_point *pts, size_t n, double t, double *x, double *y,
                   double *vx, double *vy);

/* A command as the controller sees it: when it arrived and its valid-after stamp. */
typedef struct rl_eg_command {
    double received, valid_after;
} rl_eg_command;

/* From time `t` on, command `index` is the active one (until the next change). */
typedef struct rl_eg_activation {
    double t;
    size_t index;
} rl_eg_activation;

/* The controller's choice over time: at time t the active command is, among the commands
 * received by t whose valid-after stamp has passed (<= t), the one with the latest
 * valid-after stamp (equal stamps: the later received, i.e. the higher index; commands are
 * given in the order received). Writes the change points in increasing time to `out`
 * (room for n) and returns how many. */
size_t rl_eg_activations(const rl_eg_command *cmds, size_t n, rl_eg_activation *out);

/* Active command at t, walking `*cursor` forward (start it at 0; t must not decrease between
 * calls with one cursor). SIZE_MAX when none is active yet. */
size_t rl_eg_active_at(const rl_eg_activation *act, size_t n, size_t *cursor, double t);

/* Pose at time t interpolated between the two samples around it (position linear, yaw along
 * the shorter arc), walking `*cursor` forward as rl_eg_active_at. False when t lies outside
 * the samples or the two samples are more than `max_gap` apart (an exact sample time is
 * always answered). Poses must be in non-decreasing time. */
bool rl_eg_pose_at(const rl_eg_pose *poses, size_t n, size_t *cursor, double t, double max_gap,
                   rl_eg_pose *out);

/* Resamples a pose series at t0 + i*step (i < count): out[i] and valid[i] (0 where
 * rl_eg_pose_at says no). */
void rl_eg_resample(const rl_eg_pose *poses, size_t n, double t0, double step, size_t count,
                    double max_gap, rl_eg_pose *out, uint8_t *valid);

/* The footprint (lab car rectangle) of a pose. */
rl_map_box rl_eg_footprint(const rl_eg_pose *p, double length, double width);

/* Distance between the footprints (length x width, centred on the poses) of two poses; 0
 * when they overlap or touch. Agrees with rl_map_box_distance, without its corner lists. */
double rl_eg_rect_distance(const rl_eg_pose *a, const rl_eg_pose *b, double length, double width);

/* Footprint distance of two vehicles on a common time base (both resampled to the same
 * times): dist[i] is NaN where either is invalid, else the distance between the rectangles
 * (0 when they overlap) where the circumscribed circles come within `exact_within` metres;
 * beyond, the clearance of the circumscribed circles (a lower bound, never below
 * exact_within), which saves the exact test for vehicles far apart. */
void rl_eg_pair_distance(const rl_eg_pose *a, const uint8_t *va, const rl_eg_pose *b,
                         const uint8_t *vb, size_t n, double length, double width,
                         double exact_within, double *dist);

/* cos and sin of each pose's yaw, for rl_eg_pair_distance_trig: a vehicle is in many
 * pairs, and the exact distance needs both for every time. */
void rl_eg_yaw_trig(const rl_eg_pose *p, size_t n, double (*cs)[2]);

/* rl_eg_pair_distance with the poses' rl_eg_yaw_trig: the same numbers, bit for bit. */
void rl_eg_pair_distance_trig(const rl_eg_pose *a, const uint8_t *va, const double (*csa)[2],
                              const rl_eg_pose *b, const uint8_t *vb, const double (*csb)[2],
                              size_t n, double length, double width, double exact_within,
                              double *dist);

/* rl_eg_pair_distance_trig where it can matter to a pair's first minimum and its
 * collisions: the same number, bit for bit, wherever the circumscribed circles' clearance
 * is at most min_distance or the smallest distance found (at the time the centres come
 * closest, then as it goes); elsewhere +infinity (the distance is above both there). A
 * pair never within exact_within gets rl_eg_pair_distance_trig's clearances. Returns how
 * many times were computed exactly. */
size_t rl_eg_pair_distance_near(const rl_eg_pose *a, const uint8_t *va, const double (*csa)[2],
                                const rl_eg_pose *b, const uint8_t *vb, const double (*csb)[2],
                                size_t n, double length, double width, double exact_within,
                                double min_distance, double *dist);

/* The closest point of each approach in distances d[i] at times t[i]: an approach begins at
 * a sample within `near` and ends at an unknown distance (NaN) or at one above near x
 * end_factor (>= 1: noise at the edge does not split one pass into many); its point is its
 * first smallest distance. Writes at most n points to at/ad (times, distances); returns how
 * many. */
size_t rl_eg_closest_approaches(const double *t, const double *d, size_t n, double near,
                                double end_factor, double *at, double *ad);

/* A stretch of time over which a condition held. */
typedef struct rl_eg_interval {
    double t0, t1;      /* first and last sample where it held */
    double worst;       /* the largest value over the stretch */
    double worst_t;     /* when */
    size_t first, last; /* sample indices */
} rl_eg_interval;

/* Stretches where bad[i] holds over samples at times t[i] (non-decreasing). A stretch ends at
 * a sample where it does not hold or at a gap between samples above `max_gap` (unknown
 * time is not counted as bad). Stretches lasting less than `min_duration` (t1 - t0) are
 * dropped. `value` (may be NULL) gives `worst`. Returns RL_OK with *out malloc'd (NULL when
 * *count is 0), or RL_ENOMEM. */
int rl_eg_intervals(const double *t, const uint8_t *bad, const double *value, size_t n,
                    double max_gap, double min_duration, rl_eg_interval **out, size_t *count);

/* How far a footprint lies outside a polygon (the lab area; points counter- or clockwise,
 * closed implicitly, the boundary counts as inside): 0 when every point of the rectangle is
 * inside, else the largest distance to the polygon of a corner or of an edge point sampled
 * every `step` metres (> 0), and at least `step`/16 when the polygon only pokes into the
 * rectangle. */
double rl_eg_outside_polygon(const rl_map_box *b, const rl_map_point *poly, size_t n,
                             double step);

/* How far a footprint leaves the union of lanelets: 0 when rl_map_footprint_inside says it
 * is inside (with `gap_tolerance`), else the largest clearance to the nearest lanelet among
 * the corners that are off the lanelets and the middles of the stretches of the perimeter
 * (sampled every `step` metres) that are off (all off: the corners and edge middles); at
 * least step/16 where the footprint is out but no sample shows it. `memo` (may be NULL)
 * answers whether it is inside for poses met before (rl_map_inside_memo, same answers). */
double rl_eg_outside_lanelets(const rl_map *map, rl_map_inside_memo *memo, const rl_map_box *b,
                              double gap_tolerance, double step);

#endif
