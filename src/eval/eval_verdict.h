/* Framework-private: an evaluation's overall result (the one rule of docs/eval.md), whether
 * it was partial, how far an interrupted run got, and the reasons several checks share,
 * given once. Made by eval_verdict.c from the checks; eval_output.c writes it, eval.c hands
 * it to the caller, eval_list.c reads the same words back. */
#ifndef RUNLAB_EVAL_VERDICT_H
#define RUNLAB_EVAL_VERDICT_H

#include "eval/eval_internal.h"

typedef struct eval_verdict {
    rl_eval_verdict verdict;
    size_t counts[RL_EVAL_STATUS_COUNT];
    bool partial;           /* not every registered metric was chosen */
    char interruption[160]; /* "interrupted after 2.5 of 20 s", or "" */
    char *shared;           /* lines (each '\n'-terminated) of shared reasons, or "" */
    size_t nshared;         /* how many lines */
} eval_verdict;

/* Fills `v` from the checks (setting each check's shared_reason) of `run` with the chosen
 * metrics. RL_ENOMEM. Free with eval_verdict_free. */
int eval_verdict_make(const eval_run *run, const bool *chosen, rl_eval_check *checks,
                      size_t nchecks, eval_verdict *v);
void eval_verdict_free(eval_verdict *v);

/* "interrupted after 2.5 of 20 s" (state INTERRUPTED; "failed after" for FAILED),
 * "interrupted after 2.5 s (planned duration not recorded)" when `planned` is NaN; "" for
 * any other state or an unknown `elapsed`. */
void eval_interruption_text(const char *state, double elapsed, double planned, char *buf,
                            size_t cap);

/* How long the run in `dir` was meant to last: "planned_duration_s" of its manifest.json,
 * else of its experiment.json (written by `runlab experiment`, which knows its
 * --duration); NaN when neither has it. */
double eval_planned_duration(const char *dir);

#endif
