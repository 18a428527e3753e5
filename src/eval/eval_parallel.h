/* The evaluation's one way of spreading work over the cores: metrics (eval.c) and figures
 * (eval_output.c) are independent tasks whose results are joined in their own order, so
 * the outcome never depends on which thread ran which task, or when. */
#ifndef RUNLAB_EVAL_PARALLEL_H
#define RUNLAB_EVAL_PARALLEL_H

#include <stddef.h>

/* Runs task(ctx, i) for every i < n on up to 4 threads (one per core; the calling thread
 * is one of them), taking the tasks from the last down to the first: callers put their
 * longest tasks last, so that none of those starts at the end. Tasks must only touch what
 * is theirs (task i writes the i-th result). Returns RL_OK, or what the failing task with
 * the lowest i returned, with its error message set on the calling thread; *failed_at
 * (optional) is that i, or n when none failed. RL_ENOMEM when the bookkeeping cannot be
 * allocated (then no task ran). */
int eval_parallel(size_t n, int (*task)(void *ctx, size_t i), void *ctx, size_t *failed_at);

#endif
