/* Framework-private: writing one evaluation directory (eval_output.c). */
#ifndef RUNLAB_EVAL_OUTPUT_H
#define RUNLAB_EVAL_OUTPUT_H

#include "eval/eval_sink.h"
#include "eval/eval_verdict.h"

typedef struct eval_output {
    const char *dir; /* the new evaluation directory */
    const eval_run *run;
    const char *notes; /* for the top of the report, one per line */
    json_object *config;
    const bool *chosen; /* per registry entry */
    struct eval_sink *sink;
    int argc;
    char *const *argv;
    const eval_verdict *verdict; /* the overall result, partial or not, shared reasons */
    void (*mark)(void *ud); /* called between the files and the report (time profile) */
    void *mark_ud;
    bool png; /* each figure as PNG too, not only as SVG */
} eval_output;

/* Creates RUN/evaluations/<now as YYYYmmddTHHMMSSZ>, or with "-2", "-3", ... when that
 * exists (eval.c); the path goes to `out`. */
int eval_dir_create(const char *run_dir, int64_t now_ns, char *out, size_t cap);

/* Writes config.yaml, checks.csv, summary.json, figures/ and report.html. */
int eval_output_write(const eval_output *o);

#endif
