/* runlab/eval.h: offline evaluation of a recorded run (issue 15). Reads a run directory
 * written by the recorder (bag decoded by the bag's own schemas, runtime map checked
 * against the manifest), runs metric modules that return checks, and writes one new
 * RUN/evaluations/<UTC>/ with report.html, checks.csv, summary.json, figures, config.yaml. */
#ifndef RUNLAB_EVAL_H
#define RUNLAB_EVAL_H

#include "runlab/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The outcome of one check. */
typedef enum rl_eval_status {
    RL_EVAL_PASS = 0,
    RL_EVAL_FAIL,
    RL_EVAL_INSUFFICIENT, /* too little data inside the window */
    RL_EVAL_UNAVAILABLE,  /* a needed topic, field or the map is missing */
    RL_EVAL_NA,           /* the check does not apply (one vehicle for collisions) */
    RL_EVAL_STATUS_COUNT
} rl_eval_status;

/* "PASS", "FAIL", "INSUFFICIENT", "UNAVAILABLE", "N/A"; "?" out of range. Thread-safe. */
RL_API const char *rl_eval_status_name(rl_eval_status status);

/* The overall result of an evaluation, one rule (docs/eval.md): FAIL when any check is
 * FAIL; INCOMPLETE when none is but some are INSUFFICIENT or UNAVAILABLE; PASS otherwise
 * (every check PASS or N/A). `runlab evaluate` exits 0, 1 and 3 for them. */
typedef enum rl_eval_verdict {
    RL_EVAL_VERDICT_PASS = 0,
    RL_EVAL_VERDICT_FAIL,
    RL_EVAL_VERDICT_INCOMPLETE,
    RL_EVAL_VERDICT_COUNT
} rl_eval_verdict;

/* "PASS", "FAIL", "INCOMPLETE"; "?" out of range. Thread-safe. */
RL_API const char *rl_eval_verdict_name(rl_eval_verdict verdict);
/* The rule above applied to counts of checks per status. Thread-safe. */
RL_API rl_eval_verdict rl_eval_verdict_of(const size_t counts[RL_EVAL_STATUS_COUNT]);

/* One check's result. Owned by whoever made it (rl_eval_result). `value` and `threshold`
 * are NaN when they do not apply; intervals are [t0, t1] in seconds since START. */
typedef struct rl_eval_check {
    char *metric, *check;
    int *vehicles; /* vehicle ids the check is about (both of a pair) */
    size_t nvehicles;
    rl_eval_status status;
    double value, threshold;
    char *unit;
    double (*intervals)[2];
    size_t nintervals;
    char *reason; /* why it failed / is unavailable, or what was measured; never NULL */
    double judged_s, window_s; /* coverage of its data: the seconds of the window its
                                  samples cover (gaps over the metric's max_gap not counted)
                                  of the window's seconds; NaN when not stated (a check
                                  without data, or about no time series) */
    char *figure; /* the stem of the figure that shows this check (figures/<figure>.png,
                     .svg), or NULL when none does */
    bool shared_reason; /* not PASS or N/A, and other checks have the same status and
                           reason: rl_eval_result.shared_reasons says it once for all */
} rl_eval_check;

/* What an evaluation is asked to do. Zero-initialise; NULL members take defaults. */
typedef struct rl_eval_options {
    const char *config_path; /* YAML overriding default.yaml per metric section; NULL: none */
    const char *metrics;     /* "a,b": only these metrics; NULL: all */
    int argc;                /* command line for the figure records (0: /proc/self/cmdline) */
    char *const *argv;
    const char *map_path;    /* a map file (Lanelet2, CommonRoad or runtime map) evaluated
                                against instead of the run's own, e.g. for a run recorded
                                without one; NULL: the run's (the report names which) */
} rl_eval_options;

/* The result of one evaluation. Free with rl_eval_result_free. */
/* The phases of an evaluation, for its time profile (rl_eval_result.phase_*). */
typedef enum rl_eval_phase {
    RL_EVAL_PHASE_DECODE = 0,  /* the run, its bag decoded by its schemas, the map */
    RL_EVAL_PHASE_METRICS = 1, /* every metric's checks and figure data, and the verdict */
    RL_EVAL_PHASE_FIGURES = 2, /* the directory, figures (PNG, SVG), CSV and JSON files */
    RL_EVAL_PHASE_REPORT = 3,  /* report.html */
    RL_EVAL_PHASE_COUNT = 4
} rl_eval_phase;

/* The phase's name ("decode", "metrics", "figures", "report"), "?" out of range. */
RL_API const char *rl_eval_phase_name(int phase);

typedef struct rl_eval_result {
    rl_eval_verdict verdict; /* the overall result (the rule above) */
    bool passed;       /* verdict is PASS: every check PASS or N/A */
    bool partial;      /* only some of the registered metrics ran (--metrics) */
    size_t counts[RL_EVAL_STATUS_COUNT];
    rl_eval_check *checks;
    size_t nchecks;
    char *dir;         /* the evaluation directory written */
    char *run_state;   /* the manifest's state ("COMPLETE", ...; "UNKNOWN" without one) */
    char *run_note;    /* what the report says on top (unfinished run, no trigger), or "" */
    char *interruption; /* "interrupted after 2.5 of 20 s" for a run that stopped early
                           (INTERRUPTED or FAILED), or "" */
    char *shared_reasons; /* one line per status and reason shared by several checks
                             (naming their metrics, and how to supply what is missing:
                             a map with --map FILE), each ending in '\n'; or "" */
    /* Where the time went, per rl_eval_phase: the process's CPU seconds (user + system,
     * every thread: figures are drawn in parallel) and wall seconds. Several evaluations
     * at once in one process (evaluate --summary) overlap in the CPU figures. */
    double phase_cpu_s[RL_EVAL_PHASE_COUNT];
    double phase_wall_s[RL_EVAL_PHASE_COUNT];
} rl_eval_result;

/* Evaluates the run directory `run_dir` and writes RUN/evaluations/YYYYmmddTHHMMSSZ[-N]/.
 * Returns RL_OK when the evaluation ran (whatever the checks say: see result->passed) or
 * a negative status when it cannot run: RL_EINVAL (bad options, unknown metric, bad
 * configuration: the message names the key), RL_ENOENT / RL_EIO / RL_EPARSE (unreadable
 * run or bag), RL_ECRC (the runtime map's SHA-256 differs from the manifest's; the message
 * names both). A FAILED, INTERRUPTED or unfinished run is evaluated as far as its data
 * goes. Thread-safe apart from plot's font caches (see plot.h). */
RL_API int rl_eval_run(const char *run_dir, const rl_eval_options *opts, rl_eval_result *result);
RL_API void rl_eval_result_free(rl_eval_result *result);

/* The files an evaluation draws its figures into: figures/<name>.png and .svg (what
 * rl_eval_run writes), or the SVG alone. The report inlines the SVG documents either way, so
 * SVG alone gives the same report, checks and summary without rasterising a PNG per figure
 * (most of an evaluation's CPU after decoding and the metrics: docs/eval.md). */
typedef enum rl_eval_figures {
    RL_EVAL_FIGURES_PNG_SVG = 0,
    RL_EVAL_FIGURES_SVG = 1
} rl_eval_figures;

/* rl_eval_run with the figures' files chosen; RL_EINVAL for a value not in rl_eval_figures.
 * (A function of its own rather than a field of rl_eval_options, so programs built against
 * an older rl_eval_options keep working.) */
RL_API int rl_eval_run_figures(const char *run_dir, const rl_eval_options *opts,
                               rl_eval_figures figures, rl_eval_result *result);

/* Resolves RUN as given to `runlab evaluate`: an existing directory, else a run id or
 * directory name under <home>/experiments (home as rl_record_home resolves it). RL_ENOENT
 * names what was tried. */
RL_API int rl_eval_resolve_run(const char *run, const char *home, char *out, size_t cap);

/* The built-in default configuration (default.yaml), NUL-terminated, static. */
RL_API const char *rl_eval_default_config(void);

/* The registered metrics: name and one-line summary of metric i < rl_eval_metric_count(). */
RL_API size_t rl_eval_metric_count(void);
RL_API const char *rl_eval_metric_name(size_t i);
RL_API const char *rl_eval_metric_summary(size_t i);

/* ---- Listing runs (runlab list) ------------------------------------------------------ */

/* One evaluation of a run: its directory name and what its summary.json says. */
typedef struct rl_eval_listed_evaluation {
    char *name;
    int passed; /* 1, 0, or -1 when summary.json is missing or unreadable */
    int verdict; /* rl_eval_verdict, or -1 when summary.json is missing or unreadable
                    (older summaries without "result": from their counts) */
    bool partial; /* it ran only some metrics (summary.json "partial", else its "metrics"
                     lack a registered one) */
} rl_eval_listed_evaluation;

typedef struct rl_eval_listed_run {
    char *dir;          /* full path */
    char *name;         /* directory name */
    char *run_id;       /* NULL when the manifest is missing */
    char *state;        /* manifest state, "RECORDING" etc.; "UNFINISHED"/"UNREADABLE" */
    char *result;       /* result.reason or NULL */
    char *planner;      /* NULL when none */
    char *map_sha256;   /* NULL when no map */
    char *start;        /* START stamp (ISO), or NULL */
    int *vehicles;
    size_t nvehicles;
    double duration_s;  /* STOP - START, NaN when either is missing */
    double planned_s;   /* the planned duration (manifest or experiment.json
                           "planned_duration_s"), NaN when not recorded */
    char *interruption; /* "interrupted after 2.5 of 20 s" when the run is INTERRUPTED or
                           FAILED, else NULL */
    char *scenario;     /* the manifest's scenario in brief ("sim 4 veh seed 7
                           collision:2:6:9"), NULL when it has none */
    rl_eval_listed_evaluation *evaluations; /* oldest first */
    size_t nevaluations;
    int64_t start_ns;   /* START as UTC nanoseconds, INT64_MIN when not recorded */
    int64_t seed;       /* the simulator's seed (manifest scenario), -1 when none */
    char **faults;      /* the simulator's faults as given ("speeding:2:6:12"), in order */
    size_t nfaults;
} rl_eval_listed_run;

/* Every run directory under <home>/experiments (home as rl_record_home resolves it),
 * newest first (by directory name, which starts with the UTC time). A missing
 * experiments/ folder is an empty list. Free with rl_eval_list_free. */
RL_API int rl_eval_list_runs(const char *home, rl_eval_listed_run **out, size_t *count);
/* The run's verdict: its latest evaluation that ran every metric (a newer partial one,
 * `--metrics`, does not replace it), or NULL when it has none. Borrowed from `run`. */
RL_API const rl_eval_listed_evaluation *rl_eval_listed_full(const rl_eval_listed_run *run);
/* Its newest evaluation when that is partial and newer than rl_eval_listed_full's, else
 * NULL. Borrowed from `run`. */
RL_API const rl_eval_listed_evaluation *rl_eval_listed_newer_partial(const rl_eval_listed_run *run);
RL_API void rl_eval_list_free(rl_eval_listed_run *runs, size_t count);

/* Which runs `runlab list` and `runlab evaluate --summary` take (eval_select.c). Each
 * member is NULL for "any", else a comma-separated list whose items are alternatives; the
 * members are all required. Names compare case-insensitively. */
typedef struct rl_eval_run_filter {
    const char *state;   /* manifest states: COMPLETE, FAILED, INTERRUPTED, UNFINISHED, ... */
    const char *result;  /* the latest full evaluation's PASS, FAIL, INCOMPLETE; NONE: none */
    const char *since;   /* recorded at or after (the directory name's UTC stamp, else
                            START): ISO 8601 UTC, or YYYY-mm-dd (that day's 00:00) */
    const char *until;   /* recorded before: same forms (a date alone: before that day's end) */
    const char *vehicle; /* runs with any of these vehicle ids */
    const char *planner; /* the manifest's planner name */
    const char *fault;   /* runs with a simulator fault of this kind ("speeding"), or NONE:
                            runs without a fault */
} rl_eval_run_filter;

/* Keeps in `runs` (first *count) those the filter takes, in their order, freeing the
 * others; *count becomes how many are kept. RL_EINVAL names the member and item that
 * cannot be read (a bad time, a vehicle id that is not a number, an unknown result). A
 * NULL filter keeps every run. Not thread-safe on the same array. */
RL_API int rl_eval_list_filter(rl_eval_listed_run *runs, size_t *count, const rl_eval_run_filter *filter);

/* Sorts runs by `field`: time (recorded: the directory's UTC stamp, else START), name, state, result,
 * duration, planner, vehicles (how many), seed, faults, evaluations (how many); ascending,
 * or descending with a leading '-' ("-time": newest first). Ties keep the directory name
 * order, newest first. RL_EINVAL names an unknown field. */
RL_API int rl_eval_list_sort(rl_eval_listed_run *runs, size_t count, const char *field);

/* ---- One report over many runs (runlab evaluate --summary) ---------------------------- */

/* What a summary is asked to do. Zero-initialise; NULL members take defaults. */
typedef struct rl_eval_summary_options {
    const char *const *runs;  /* run directories (rl_eval_resolve_run's output); a run named
                                 twice is summarised once */
    size_t nruns;
    const char *out_dir;      /* the new directory to write (it must not exist: RL_EEXIST);
                                 NULL: <home>/summaries/<UTC>[_N], home as rl_record_home */
    const char *home;         /* for the default out_dir; NULL: rl_record_home's default */
    const char *config_path;  /* as rl_eval_options; an evaluation is reused only when its
                                 config.yaml is this configuration (same SHA-256) */
    const char *group_by;     /* planner (NULL), scenario (the faults), fault (their kinds),
                                 seed, state, vehicles, or a manifest field path ("a.b") */
    int jobs;                 /* evaluations at once; <= 0: one per core */
    int argc;                 /* command line for the figure records (0: /proc/self/cmdline) */
    char *const *argv;
} rl_eval_summary_options;

/* What a summary found. Free with rl_eval_summary_result_free. */
typedef struct rl_eval_summary_result {
    char *dir;          /* the summary directory written */
    size_t nruns;       /* runs summarised (distinct) */
    size_t reused;      /* runs whose latest full evaluation matched and was read */
    size_t evaluated;   /* runs evaluated now */
    size_t errors;      /* runs that could not be evaluated (listed in the report) */
    size_t verdicts[RL_EVAL_VERDICT_COUNT]; /* runs per result */
    char config_sha256[65]; /* the configuration's hash, as summary.json says */
} rl_eval_summary_result;

/* Summarises many runs in one new directory: report.html, checks.csv (one row per run and
 * check of its evaluation: run, metric, check, vehicles), summary.json (per run its result
 * and evaluation; per metric and check the pass rate overall and per group), figures/ (pass
 * rates per group, the distribution of each check's worst value) and runs/<k>_<name>, a
 * relative symbolic link to each run's evaluation, through which the report links a failing
 * run's own report. Each run's latest full evaluation is reused when it ran with the same
 * configuration and the run's own map; the other runs are evaluated (rl_eval_run, a new
 * evaluation directory each) on up to `jobs` threads. A run that cannot be evaluated is
 * listed with its reason, not fatal. Returns RL_OK, or RL_EINVAL (no runs, bad options or
 * configuration), RL_EEXIST (out_dir exists), RL_EIO / RL_ENOMEM. Call from one thread;
 * it uses plot as rl_eval_run does (rl_plot_release_caches afterwards is the caller's). */
RL_API int rl_eval_summary(const rl_eval_summary_options *opts, rl_eval_summary_result *result);
RL_API void rl_eval_summary_result_free(rl_eval_summary_result *result);

#ifdef __cplusplus
}
#endif

#endif
