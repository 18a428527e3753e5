/* A minimal planner logging with runlab/perflog.h, walked through in docs/perflog.md ("Log
 * your own planner"): each cycle it samples goals in a 20 x 20 grid with a wall and moves to
 * the one that sees most new cells per metre. Usage: perflog_planner [ROOT [SEED [CYCLES]]]. */
#include <runlab/error.h>
#include <runlab/perflog.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 20, SAMPLES = 32 };
static bool seen[N][N];

/* Cells within 2 of (x, y) not seen yet; marks them seen when `mark`. */
static int new_cells(int x, int y, bool mark)
{
    int n = 0;
    for (int i = x - 2; i <= x + 2; i++)
        for (int j = y - 2; j <= y + 2; j++)
            if (i >= 0 && i < N && j >= 0 && j < N && !seen[i][j]) {
                n++;
                seen[i][j] = mark;
            }
    return n;
}

int main(int argc, char **argv)
{
    unsigned seed = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 1;
    int cycles = argc > 3 ? atoi(argv[3]) : 40;
    srand(seed);
    rl_perflog_config cfg;
    rl_perflog_config_init(&cfg);
    cfg.root = argc > 1 ? argv[1] : NULL; /* NULL: $RUNLAB_DATA_ROOT or ~/runlab_data */
    cfg.dataset = "toy";
    cfg.scene = "wall20";
    cfg.planner = "greedy";
    cfg.cost_unit = "m"; /* the cost is the distance driven */
    cfg.random_seed = seed;
    rl_perflog *pl = NULL;
    int plan, collision, samples, gain; /* column handles */
    if (rl_perflog_new(&pl, &cfg) || rl_perflog_add_layer(pl, "planning", "greedy_sampler") ||
        rl_perflog_declare(pl, "planning", "PlanTime", RL_COL_TIMER, "s", NULL, &plan) ||
        rl_perflog_declare(pl, "planning", "CollisionTime", RL_COL_TIMER, "s", "planning.PlanTime",
                           &collision) || /* runs inside PlanTime: its parent */
        rl_perflog_declare(pl, "planning", "Samples", RL_COL_COUNTER, "count", NULL, &samples) ||
        rl_perflog_declare(pl, "planning", "RealAccumulatedGain", RL_COL_TOTAL, "cells", NULL,
                           &gain) ||
        rl_perflog_start(pl) || rl_perflog_handle_signals(pl, 0)) { /* errors are < 0 */
        fprintf(stderr, "perflog_planner: %s\n", rl_error_last());
        rl_perflog_free(pl);
        return 1;
    }
    int x = 0, y = 0, found = 0; /* cells seen from where it moved to */
    new_cells(x, y, true);
    rl_episode_totals totals = {0, 0, 0, 1};
    rl_end_reason why = RL_END_BUDGET_EXHAUSTED;
    for (int c = 0; c < cycles && why == RL_END_BUDGET_EXHAUSTED; c++) {
        rl_perflog_timer_start(pl, plan);
        double best = 0;
        int bx = x, by = y;
        for (int k = 0; k < SAMPLES; k++) {
            int gx = rand() % N, gy = rand() % N;
            rl_perflog_count(pl, samples, 1);
            rl_perflog_timer_start(pl, collision);
            bool blocked = gx == 10 && gy < 15; /* the wall */
            rl_perflog_timer_stop(pl, collision);
            double score = blocked ? 0 : new_cells(gx, gy, false) / (1 + hypot(gx - x, gy - y));
            if (score > best) {
                best = score;
                bx = gx;
                by = gy;
            }
        }
        rl_perflog_timer_stop(pl, plan);
        if (best == 0) { /* no sample sees anything new */
            why = RL_END_NO_STEP;
            continue;
        }
        totals.total_cost = totals.total_path_length += hypot(bx - x, by - y);
        totals.total_path_duration = totals.total_path_length / 0.5; /* at 0.5 m/s */
        totals.num_visited_nodes++;
        x = bx, y = by;
        found += new_cells(x, y, true);
        rl_perflog_set(pl, gain, found);            /* the gain column of this row */
        rl_perflog_set_gain(pl, "planning", found); /* the summary's gain */
        rl_perflog_set_totals(pl, &totals);         /* TotalCost... columns and the summary */
        if (rl_perflog_cycle_end(pl) != RL_OK)      /* 1: SIGINT/SIGTERM, < 0: write error */
            why = RL_END_STOPPED;
    }
    int rc = rl_perflog_end(pl, why); /* writes episode_summary.yaml */
    if (rc == RL_OK)
        printf("%s\n", rl_perflog_run_dir(pl));
    else
        fprintf(stderr, "perflog_planner: %s\n", rl_error_last());
    rl_perflog_free(pl);
    return rc == RL_OK ? 0 : 1;
}
