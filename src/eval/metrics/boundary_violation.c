/* Metric boundary_violation: the footprint of each vehicle outside the lab area — the
 * configured `polygon`, else the map's outer boundary (its lab area rectangle) — with the
 * intervals, the time out in all and the worst excess. */
#include "eval/metrics/geo_common.h"
#include "eval/metrics/metrics.h"

#include "runlab/error.h"

#include <math.h>
#include <stdlib.h>

typedef struct area_arg {
    const rl_map_point *poly;
    size_t n;
    double step;
} area_arg;

static double outside_area(const void *arg, const rl_map_box *b)
{
    const area_arg *a = arg;
    return rl_eg_outside_polygon(b, a->poly, a->n, a->step);
}

/* The `polygon` setting: NULL (*n = 0) when null, else at least three [x, y] numbers. */
static int read_polygon(eval_ctx *ctx, rl_map_point **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    json_object *v = NULL;
    if (!json_object_object_get_ex(ctx->settings, "polygon", &v) || !v)
        return RL_OK;
    if (!json_object_is_type(v, json_type_array))
        return rl_error_set(RL_EINVAL, "configuration: boundary_violation.polygon: expected a "
                                       "list of [x, y] points or null");
    size_t len = json_object_array_length(v);
    if (len < 3)
        return rl_error_set(RL_EINVAL, "configuration: boundary_violation.polygon: %zu points, "
                                       "at least 3 needed", len);
    *out = malloc(len * sizeof **out);
    if (!*out)
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory for the area polygon");
    for (size_t i = 0; i < len; i++) {
        json_object *p = json_object_array_get_idx(v, i);
        json_object *x = NULL, *y = NULL;
        if (json_object_is_type(p, json_type_array) && json_object_array_length(p) == 2) {
            x = json_object_array_get_idx(p, 0);
            y = json_object_array_get_idx(p, 1);
        }
        bool num = x && y &&
                   (json_object_is_type(x, json_type_double) || json_object_is_type(x, json_type_int)) &&
                   (json_object_is_type(y, json_type_double) || json_object_is_type(y, json_type_int));
        double px = num ? json_object_get_double(x) : NAN, py = num ? json_object_get_double(y) : NAN;
        if (!isfinite(px) || !isfinite(py)) {
            free(*out);
            *out = NULL;
            return rl_error_set(RL_EINVAL, "configuration: boundary_violation.polygon[%zu]: "
                                           "expected [x, y] with two finite numbers", i);
        }
        (*out)[i] = (rl_map_point){px, py};
    }
    *n = len;
    return RL_OK;
}

int eval_metric_boundary_violation(eval_ctx *ctx)
{
    double step;
    rl_map_point *poly;
    size_t n;
    int rc = eval_setting_f64(ctx, "step", &step);
    if (rc == RL_OK && !(step > 0))
        rc = rl_error_set(RL_EINVAL, "configuration: boundary_violation.step: must be > 0");
    if (rc == RL_OK)
        rc = read_polygon(ctx, &poly, &n);
    if (rc != RL_OK)
        return rc;
    const eval_run *run = ctx->run;
    rl_map_point rect[4];
    if (!poly && !run->map) {
        for (size_t i = 0; rc == RL_OK && i < run->nvehicles; i++)
            rc = eval_check_unavailable(ctx, "outside_area", run->vehicles[i].id,
                                        run->map_missing ? run->map_missing : "no map");
        if (rc == RL_OK && run->nvehicles == 0)
            rc = eval_check_add(ctx, "outside_area", NULL, 0, RL_EVAL_UNAVAILABLE, NAN, NAN,
                                NULL, NULL, "no vehicle in the run");
        return rc;
    }
    if (!poly) {
        rl_map_info info;
        rl_map_get_info(run->map, &info);
        rect[0] = (rl_map_point){info.area_xmin, info.area_ymin};
        rect[1] = (rl_map_point){info.area_xmax, info.area_ymin};
        rect[2] = (rl_map_point){info.area_xmax, info.area_ymax};
        rect[3] = (rl_map_point){info.area_xmin, info.area_ymax};
    }
    area_arg arg = {poly ? poly : rect, poly ? n : 4, step};
    eval_geo_footprint_spec spec = {
        .check = "outside_area",
        .where = poly ? "outside the configured area polygon" : "outside the map's lab area",
        .excess = outside_area,
        .arg = &arg,
        .area = arg.poly,
        .narea = arg.n,
        .figure = "boundary_violation_map",
        .figure_title = "Trajectories and the lab area; crosses: footprint outside",
    };
    rc = eval_geo_footprint_metric(ctx, &spec);
    free(poly);
    return rc;
}
