/* rlx: runlab's example planners and problems, built on the public API only
 * (runlab/bench.h). Point robots and rigid bodies (SE(2) rectangles, 3D boxes with a yaw)
 * in [0,1]^2 and [0,1]^3 among axis-aligned boxes (a maze, narrow passages, cluttered
 * fields); RRT, RRT-Connect, RRT*, PRM; a shortcut path simplifier and OMPL's path
 * metrics. Deterministic under a run's seed. */
#ifndef RLX_H
#define RLX_H

#include "runlab/bench.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rlx_problem rlx_problem;

/* Names of the built-in problems, NULL-terminated. */
const char *const *rlx_problem_names(void);
/* A new problem by name (RL_ENOENT with the list when unknown); free with rlx_problem_free. */
rlx_problem *rlx_problem_new(const char *name);
void rlx_problem_free(rlx_problem *p);
/* The problem as a JSON document in the format "runlab-problem/1" of docs/bench.md (what
 * executable planners read from RUNLAB_PROBLEM_FILE). A new string (free() it) or NULL
 * with the error set. */
char *rlx_problem_json(const rlx_problem *p);
/* Multi-line description for the log's setup block; valid while the problem lives. */
const char *rlx_problem_describe(const rlx_problem *p);
/* Coordinates of a state: 2 or 3 for a point (x, y[, z]); 3 for an SE(2) body (x, y, yaw)
 * and 4 for a 3D body (x, y, z, yaw), yaw in radians in [-pi, pi). */
int rlx_problem_dimension(const rlx_problem *p);
size_t rlx_problem_obstacles(const rlx_problem *p);
/* Whether the robot is a body with a heading (a rigid body or a car), not a point. */
bool rlx_problem_is_rigid(const rlx_problem *p);
/* The motion-check resolution the planners use (a distance in the state space). */
double rlx_problem_resolution(const rlx_problem *p);
/* Copies the start and goal states (rlx_problem_dimension values each). */
void rlx_problem_start_goal(const rlx_problem *p, double *start, double *goal);
/* Whether the robot at state q is inside the bounds and clear of every obstacle. */
bool rlx_state_valid(const rlx_problem *p, const double *q);
/* Whether every motion of the path (n states, packed) is valid when checked at
 * `resolution`; false for an empty path. */
bool rlx_path_valid(const rlx_problem *p, const double *states, size_t n, double resolution);

/* Solves p in this process (no isolation; for tests and tools) with a built-in planner
 * (rrt, rrtconnect, rrtstar, prm) and its default settings, for at most max_time seconds
 * and, when max_iterations > 0, at most that many planner iterations (a bound that, unlike
 * time, gives the same result on a loaded machine), seeded with `seed`, then simplifies
 * the path when asked. Returns the run's status
 * (RL_RUN_EXACT...) or a negative error code; *states (packed, free() it) and *n hold the
 * solution or approximate path, NULL and 0 when there is none. */
int rlx_solve(const rlx_problem *p, const char *kind, uint64_t seed, double max_time,
              long max_iterations, bool simplify, double **states, size_t *n);

/* An oriented rectangle: centre, half extents along its own axes, angle (radians). */
typedef struct rlx_rect {
    double cx, cy, hx, hy, theta;
} rlx_rect;
/* Whether two rectangles overlap (touching counts), by the separating-axis test: the
 * collision check of the rigid-body problems. */
bool rlx_rect_overlap(const rlx_rect *a, const rlx_rect *b);
/* Euclidean distance between two rectangles, 0 when they overlap. */
double rlx_rect_distance(const rlx_rect *a, const rlx_rect *b);

/* Names of the built-in planners, NULL-terminated: rrt, rrtconnect, rrtstar, prm, and the
 * misbehaving ones used to test the harness: crash, abort, hang, memhog, exit. */
const char *const *rlx_planner_kinds(void);
/* A planner of `kind` called `name`, with settings as key/value strings (range,
 * goal_bias, k, rewire_factor, mb, max_iterations...). Unknown kinds or settings: NULL with the error
 * set naming them. The planner is owned by the caller until given to rl_bench_add_planner. */
rl_bench_planner *rlx_planner_new(const char *kind, const char *name, const char *const *keys,
                                  const char *const *values, size_t n);

#endif
