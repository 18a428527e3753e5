/* Framework-private: what the summary over many runs gathers (eval_summary.c) and hands
 * to the writer of its directory (eval_summary_output.c). */
#ifndef RUNLAB_EVAL_SUMMARY_H
#define RUNLAB_EVAL_SUMMARY_H

#include "runlab/eval.h"

/* One check of a run's evaluation, as its summary.json says. */
typedef struct sum_check {
    char *metric, *check, *vehicles, *unit, *reason; /* vehicles: "1 2" */
    rl_eval_status status;
    double value, threshold; /* NaN when the evaluation has none */
} sum_check;

typedef struct sum_run {
    rl_eval_listed_run listed; /* its manifest and evaluations */
    char *group;               /* its value of --group-by ("(none)" when it has none) */
    char *evaluation;          /* the evaluation directory's name used; NULL on error */
    bool reused;               /* read, not evaluated now */
    int verdict;               /* rl_eval_verdict, or -1 when not evaluated */
    char *error;               /* why it could not be evaluated or read, or NULL */
    char *interruption;        /* its summary.json's, or NULL */
    sum_check *checks;
    size_t nchecks;
} sum_run;

typedef struct sum_data {
    sum_run *runs;
    size_t n;
    const rl_eval_summary_options *opts;
    const char *group_by;
    const char *dir;           /* the summary directory (made, empty) */
    char config_sha256[65];
    size_t reused, evaluated, errors;
} sum_data;

/* Writes checks.csv, summary.json, figures/, runs/ links and report.html into d->dir. */
int eval_summary_write(const sum_data *d);

#endif
