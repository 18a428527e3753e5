/* Framework-private: where a metric's checks and figures go while it runs (the running
 * evaluation owns one sink; eval_check.c fills it, eval.c writes it out). */
#ifndef RUNLAB_EVAL_SINK_H
#define RUNLAB_EVAL_SINK_H

#include "eval/eval_internal.h"

typedef struct eval_figure_entry {
    char *name, *caption, *metric;
    rl_figure *fig;
} eval_figure_entry;

struct eval_sink {
    rl_eval_check *checks;
    size_t nchecks, cap_checks;
    eval_figure_entry *figures;
    size_t nfigures, cap_figures;
};

/* Runs the chosen registry entries (chosen[i]) on `run` with their sections of `config`,
 * adding to `sink` (eval.c). */
int eval_run_metrics(const eval_run *run, json_object *config, const bool *chosen,
                     struct eval_sink *sink);

/* Frees one check's members (not the struct). */
void eval_check_clear(rl_eval_check *c);
void eval_sink_clear(struct eval_sink *s);

#endif
