/* Metric lanelet_collision: the footprint of each vehicle leaving the union of lanelets
 * (every point of its edges, not only the corners; gaps narrower than `tolerance` closed),
 * with the intervals, the time out in all and the worst lateral excess. */
#include "eval/metrics/geo_common.h"
#include "eval/metrics/metrics.h"

#include "runlab/error.h"

#include <math.h>

typedef struct lanes_arg {
    const rl_map *map;
    rl_map_inside_memo *memo; /* the footprints met before (vehicles lap their circuits) */
    double tolerance, step;
} lanes_arg;

static double outside_lanes(const void *arg, const rl_map_box *b)
{
    const lanes_arg *a = arg;
    return rl_eg_outside_lanelets(a->map, a->memo, b, a->tolerance, a->step);
}

int eval_metric_lanelet_collision(eval_ctx *ctx)
{
    lanes_arg arg = {ctx->run->map, NULL, 0, 0};
    int rc = eval_setting_f64(ctx, "tolerance", &arg.tolerance);
    if (rc == RL_OK)
        rc = eval_setting_f64(ctx, "step", &arg.step);
    if (rc == RL_OK && !(arg.step > 0))
        rc = rl_error_set(RL_EINVAL, "configuration: lanelet_collision.step: must be > 0");
    if (rc == RL_OK && !(arg.tolerance >= 0))
        rc = rl_error_set(RL_EINVAL, "configuration: lanelet_collision.tolerance: must be >= 0");
    if (rc != RL_OK)
        return rc;
    const eval_run *run = ctx->run;
    if (!run->map) {
        for (size_t i = 0; rc == RL_OK && i < run->nvehicles; i++)
            rc = eval_check_unavailable(ctx, "off_lanelets", run->vehicles[i].id,
                                        run->map_missing ? run->map_missing : "no map");
        if (rc == RL_OK && run->nvehicles == 0)
            rc = eval_check_add(ctx, "off_lanelets", NULL, 0, RL_EVAL_UNAVAILABLE, NAN, NAN,
                                NULL, NULL, "no vehicle in the run");
        return rc;
    }
    double length = 0, width = 0;
    if ((rc = eval_setting_f64(ctx, "length", &length)) < 0 ||
        (rc = eval_setting_f64(ctx, "width", &width)) < 0)
        return rc;
    /* Without a memo (a size it refuses) every footprint is walked: the same answers. */
    if (rl_map_inside_memo_new(run->map, length, width, &arg.memo) < 0)
        arg.memo = NULL;
    eval_geo_footprint_spec spec = {
        .check = "off_lanelets",
        .where = "off the lanelets",
        .excess = outside_lanes,
        .arg = &arg,
        .figure = "lanelet_collision_map",
        .figure_title = "Trajectories over the lanelets; crosses: footprint off the lanelets",
        .always_figure = true, /* the one map figure of a clean run */
    };
    rc = eval_geo_footprint_metric(ctx, &spec);
    rl_map_inside_memo_free(arg.memo);
    return rc;
}
