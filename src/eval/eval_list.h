/* Framework-private: what the listing (eval_list.c) lends the run selection (eval_select.c)
 * and the summary over many runs (eval_summary.c). */
#ifndef RUNLAB_EVAL_LIST_H
#define RUNLAB_EVAL_LIST_H

#include "runlab/eval.h"

/* Frees what one listed run owns and zeroes it (not the run itself). */
void eval_listed_run_clear(rl_eval_listed_run *r);

/* Reads one run directory `dir` (no trailing '/') as rl_eval_list_runs reads each: its
 * manifest and evaluations. RL_ENOMEM (then `r` holds nothing). */
int eval_list_one(const char *dir, rl_eval_listed_run *r);

#endif
