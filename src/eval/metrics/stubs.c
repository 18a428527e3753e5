/* Stand-ins for metrics whose modules are not written yet: each reports one UNAVAILABLE
 * check "not implemented", so the registry names all seven. A metric's module replaces
 * its stub here (delete the function below when adding the file). */
#include "eval/metrics/metrics.h"

#include <math.h>

static int not_implemented(eval_ctx *ctx)
{
    return eval_check_add(ctx, "implemented", NULL, 0, RL_EVAL_UNAVAILABLE, NAN, NAN, NULL,
                          NULL, "metric %s is not implemented yet", ctx->metric->name);
}

int eval_metric_command_follow(eval_ctx *ctx)
{
    return not_implemented(ctx);
}

int eval_metric_vehicle_collision(eval_ctx *ctx)
{
    return not_implemented(ctx);
}

int eval_metric_boundary_violation(eval_ctx *ctx)
{
    return not_implemented(ctx);
}

int eval_metric_lanelet_collision(eval_ctx *ctx)
{
    return not_implemented(ctx);
}
