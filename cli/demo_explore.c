/* The exploration part of `runlab demo`: a short sweep of the example agent (2 scenes x
 * 2 planners, one seed, small budget) written below the demo's output directory, then
 * the same tree loaded back with the run loader and summarised. */
#include "cli.h"

#include "explore.h"
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/runs.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

int demo_explore(const char *out_dir)
{
    if (rl_fs_mkdirs(out_dir) != RL_OK)
        return cli_fail("demo", "%s", rl_error_last());
    printf("Exploration sweep (example agent, runlab/perflog.h) below %s\n", out_dir);
    explore_config cfg;
    explore_config_init(&cfg);
    cfg.root = out_dir;
    cfg.task = "demo_sweep";
    cfg.budget = 200;
    cfg.num_maps = 3;
    for (int scene = 1; scene <= 2; scene++)
        for (int bt = 1; bt >= 0; bt--) {
            cfg.scene = scene;
            cfg.backtracking = bt;
            explore_result r;
            if (explore_run(&cfg, &r) != RL_OK)
                return cli_fail("demo", "explore: %s", rl_error_last());
            printf("  s%02d %-8s %-16s %3d cycles, total cost " CLI_NUM_FMT " s, final gain " CLI_NUM_FMT
                   " m2\n",
                   scene,
                   explore_planner_name(&cfg), rl_end_reason_name(r.end_reason), r.cycles,
                   r.total_cost, r.gain);
        }
    char sweep_dir[PATH_MAX];
    if (snprintf(sweep_dir, sizeof sweep_dir, "%s/demo_sweep", out_dir) >= (int)sizeof sweep_dir)
        return cli_fail("demo", "output directory name too long");
    const char *roots[] = {sweep_dir};
    rl_run_set *set;
    if (rl_runs_load(roots, 1, NULL, &set) != RL_OK)
        return cli_fail("demo", "loading runs: %s", rl_error_last());
    rl_runs_report rep;
    rl_runs_aggregate(set, &rep);
    printf("Loaded back: %zu runs (parsed %zu, degraded %zu, skipped %zu), %zu cycles in all\n",
           rep.total, rep.by_status[RL_RUN_PARSED], rep.by_status[RL_RUN_DEGRADED],
           rep.by_status[RL_RUN_SKIPPED], rep.rows);
    rl_run_set_free(set);
    printf("  list them: runlab runs %s\n", sweep_dir);
    /* The gain-cost figure of the sweep, exactly as `runlab plot gain-cost` draws it. */
    char figs[PATH_MAX];
    if (snprintf(figs, sizeof figs, "%s/figures", out_dir) >= (int)sizeof figs)
        return cli_fail("demo", "output directory name too long");
    char *args[] = {"runlab", "plot", "gain-cost", "--by-planner", "--out-dir", figs, sweep_dir,
                    NULL};
    if (cmd_plot_runs(6, args + 1) != RL_EXIT_OK)
        return RL_EXIT_FAILURE;
    printf("\n");
    return rep.total == 4 && rep.by_status[RL_RUN_PARSED] == 4
               ? RL_EXIT_OK
               : cli_fail("demo", "explore runs did not load cleanly");
}
