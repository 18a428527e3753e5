/* The registry of metrics: one line each, in report order. Each metric's settings are its
 * section of src/eval/default.yaml. */
#include "eval/metrics/metrics.h"

const eval_metric eval_metrics[] = {
    {"topic_sanity", "count, rate, largest gap, monotonic stamps and stamp offset per topic",
     eval_metric_topic_sanity},
    {"states_speed", "speed and longitudinal acceleration against limits", eval_metric_states_speed},
    {"obs", "observation age and distance between observed and estimated pose", eval_metric_obs},
    {"command_follow", "deviation of the pose from the active trajectory command",
     eval_metric_command_follow},
    {"vehicle_collision", "minimum distance between vehicle footprints, collisions",
     eval_metric_vehicle_collision},
    {"boundary_violation", "footprint outside the lab area", eval_metric_boundary_violation},
    {"lanelet_collision", "footprint leaving the union of lanelets", eval_metric_lanelet_collision},
};

const size_t eval_metric_total = sizeof eval_metrics / sizeof eval_metrics[0];
