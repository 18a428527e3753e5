/* The run functions of the metrics, one per module in this folder; registry.c lists them.
 * Adding a metric: docs/eval.md. */
#ifndef RUNLAB_EVAL_METRICS_H
#define RUNLAB_EVAL_METRICS_H

#include "eval/eval_internal.h"

int eval_metric_topic_sanity(eval_ctx *ctx);       /* topic_sanity.c */
int eval_metric_states_speed(eval_ctx *ctx);       /* states_speed.c */
int eval_metric_obs(eval_ctx *ctx);                /* obs.c */
int eval_metric_command_follow(eval_ctx *ctx);     /* command_follow.c */
int eval_metric_vehicle_collision(eval_ctx *ctx);  /* vehicle_collision.c */
int eval_metric_boundary_violation(eval_ctx *ctx); /* boundary_violation.c */
int eval_metric_lanelet_collision(eval_ctx *ctx);  /* lanelet_collision.c */

#endif
