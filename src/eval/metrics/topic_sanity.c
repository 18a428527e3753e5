/* Metric topic_sanity (issue 15): placeholder until its module is written. */
#include "eval/metrics/metrics.h"

#include <math.h>

int eval_metric_topic_sanity(eval_ctx *ctx)
{
    return eval_check_add(ctx, "implemented", NULL, 0, RL_EVAL_UNAVAILABLE, NAN, NAN, NULL, NULL,
                          "metric %s is not implemented yet", ctx->metric->name);
}
