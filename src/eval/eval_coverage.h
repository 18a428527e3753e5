/* Framework-private: what eval_check_add does with the coverage a metric set (the metric's
 * side, eval_coverage_begin and the rest, is in eval_internal.h). */
#ifndef RUNLAB_EVAL_COVERAGE_H
#define RUNLAB_EVAL_COVERAGE_H

#include "eval/eval_internal.h"

/* The status and reason a check gets under coverage `c`: *status changed in place, and
 * *new_reason (owned by the caller) the reason replacing `reason`, or NULL when it stays.
 * RL_OK or RL_ENOMEM. */
int eval_coverage_apply(const eval_coverage *c, rl_eval_status *status, const char *reason,
                        char **new_reason);

/* A check's coverage as the outputs state it: judged_s / window_s rounded to 6 digits, NaN
 * when the check states none (an empty window counts as covered). */
double eval_check_coverage(const rl_eval_check *c);

#endif
