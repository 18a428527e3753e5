/* Internal to the figure tools over run directories: cli/cmd_plot_runs.c (options,
 * gain-cost and normalized-gain) and cli/plot_timing.c (timing). The options both parse
 * into, and the helpers both use (cli/plot_runs.c) to load runs, place and save figures. */
#ifndef RUNLAB_CLI_PLOT_RUNS_H
#define RUNLAB_CLI_PLOT_RUNS_H

#include "runlab/plot.h"
#include "runlab/runs.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

struct popts {
    const char *kind; /* gain-cost, normalized-gain, timing */
    const char *out_dir;
    const char *output;
    const char *gain_col;
    bool open;
    bool by_planner;
    bool per_run;
    char **inputs;
    int ninputs;
    /* Where figures go (see place_figures): the tree they mirror and the figures root. */
    char base[PATH_MAX];
    char figs[PATH_MAX];
    /* Every figure path written in this invocation: none is written twice. */
    char **written;
    size_t nwritten;
};

/* Loads the runs below the inputs (walk errors to stderr) and decides where figures go.
 * Returns an RL_EXIT_* code (message printed); on success the caller frees `*set`. */
int plot_runs_load(struct popts *o, rl_run_set **set);

/* The figure directory for an input or run (NULL: the top of the figures root). */
int plot_runs_figure_dir(const struct popts *o, const char *input, char *out, size_t cap);

/* Saves PNG and SVG as <dir>/<stem>.* (or exactly --output) with the record, prints
 * "Wrote" lines. Returns an RL_EXIT_* code (message printed). */
int plot_runs_save(rl_figure *fig, struct popts *o, const char *dir, const char *stem,
                   char **inputs, int ninputs, const char *description, int argc, char **argv);

/* A string of the run's manifest, or `dflt`. */
const char *plot_runs_manifest_str(const rl_run *r, const char *key, const char *dflt);

/* Prints why a skipped run has nothing to draw: "runlab: plot: <kind>: <path>: skipped:
 * <reasons> (<first message>)". */
void plot_runs_report_skipped(const char *kind, const rl_run *run);

/* `runlab plot timing` (cli/plot_timing.c). Returns an RL_EXIT_* code. */
int plot_timing(struct popts *o, int argc, char **argv);

#endif
