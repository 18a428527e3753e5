/* explore.h: an example 2D grid exploration agent built on runlab's public API only
 * (runlab/perflog.h). A robot with a circular sensor footprint explores a generated scene;
 * a next-best-view planning layer and a backtracking layer choose where to go; every
 * cycle is logged. Deterministic under (scene, seed): only the timers vary between runs. */
#ifndef RUNLAB_EXAMPLE_EXPLORE_H
#define RUNLAB_EXAMPLE_EXPLORE_H

#include <stdbool.h>
#include <stdint.h>

#include "runlab/perflog.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum explore_cost {
    EXPLORE_COST_TIME = 0,    /* seconds: distance / speed + a stop per viewpoint */
    EXPLORE_COST_DISTANCE = 1 /* metres travelled */
} explore_cost;

typedef struct explore_config {
    const char *root;    /* data root (NULL: RUNLAB_DATA_ROOT, else ~/runlab_data) */
    const char *task;    /* optional level below the root */
    int scene;           /* scene id 1..999: the generated world */
    uint64_t seed;       /* the agent's random seed (candidate sampling) */
    int width, height;   /* grid cells (default 48 x 32) */
    double cell_size;    /* m (0.5) */
    double sensor_range; /* m (3.0) */
    double speed;        /* m/s (1.0) */
    double stop_time;    /* s spent sensing at each viewpoint, time cost only (1.0) */
    explore_cost cost;
    double budget;        /* cost budget; <= 0 unbounded (default 200) */
    int num_candidates;   /* viewpoints sampled per cycle (24) */
    double local_radius;  /* m, where the planning layer samples (6.0) */
    bool backtracking;    /* the backtracking layer is present (true) */
    double goal_fraction; /* goal: this fraction of the reachable free area seen (0.95) */
    int num_maps;         /* map snapshots (PGM) to save, 0 none */
    bool log_performance; /* true */
    int max_cycles;       /* safety stop (5000) */
} explore_config;

typedef struct explore_result {
    rl_end_reason end_reason;
    int cycles;
    double total_cost, path_length, path_duration,
        gain; /* final gain: m2 seen, the sum of the layers' gains */
    int64_t visited_nodes;
    char run_dir[4096];
} explore_result;

/* Defaults as documented above. */
void explore_config_init(explore_config *cfg);

/* The planner name a configuration is logged under: "nbv" or "nbv_nobt". */
const char *explore_planner_name(const explore_config *cfg);

/* Runs one episode and writes its run directory. Returns RL_OK or a runlab error code
 * (message in rl_error_last()). Installs SIGINT/SIGTERM handling for the episode, so
 * Ctrl+C ends it as "stopped" with a summary. Not thread-safe (signal handling). */
int explore_run(const explore_config *cfg, explore_result *out);

#ifdef __cplusplus
}
#endif
#endif
