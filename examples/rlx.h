/* rlx: runlab's example planners and problems, built on the public API only
 * (runlab/bench.h). Point robots in [0,1]^2 and [0,1]^3 among axis-aligned boxes
 * (a maze, narrow passages, cluttered fields); RRT, RRT-Connect, RRT*, PRM; a
 * shortcut path simplifier and OMPL's path metrics. Deterministic under a run's seed. */
#ifndef RLX_H
#define RLX_H

#include "runlab/bench.h"

#include <stddef.h>

typedef struct rlx_problem rlx_problem;

/* Names of the built-in problems, NULL-terminated. */
const char *const *rlx_problem_names(void);
/* A new problem by name (RL_ENOENT with the list when unknown); free with rlx_problem_free. */
rlx_problem *rlx_problem_new(const char *name);
void rlx_problem_free(rlx_problem *p);
/* Multi-line description for the log's setup block; valid while the problem lives. */
const char *rlx_problem_describe(const rlx_problem *p);
int rlx_problem_dimension(const rlx_problem *p);
size_t rlx_problem_obstacles(const rlx_problem *p);

/* Names of the built-in planners, NULL-terminated: rrt, rrtconnect, rrtstar, prm, and the
 * misbehaving ones used to test the harness: crash, abort, hang, memhog, exit. */
const char *const *rlx_planner_kinds(void);
/* A planner of `kind` called `name`, with settings as key/value strings (range,
 * goal_bias, k, rewire_factor, mb...). Unknown kinds or settings: NULL with the error
 * set naming them. The planner is owned by the caller until given to rl_bench_add_planner. */
rl_bench_planner *rlx_planner_new(const char *kind, const char *name, const char *const *keys,
                                  const char *const *values, size_t n);

#endif
