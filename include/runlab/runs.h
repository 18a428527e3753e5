/* runlab/runs.h: loading run directories written by runlab/perflog.h (or anything that
 * writes the same files) for analysis. The loader never fails on bad input: every run
 * comes back PARSED, DEGRADED or SKIPPED with the reasons why, and the numbers that could
 * be read. Statuses and reasons are defined in docs/perflog.md. */
#ifndef RUNLAB_RUNS_H
#define RUNLAB_RUNS_H

#include "runlab/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rl_run_status {
    RL_RUN_PARSED = 0,   /* every file present and consistent */
    RL_RUN_DEGRADED = 1, /* usable numbers, with reasons */
    RL_RUN_SKIPPED = 2   /* no usable numbers */
} rl_run_status;

/* Why a run is not PARSED. A run can have several; each is a bit in rl_run.reasons. */
typedef enum rl_run_reason {
    RL_REASON_NO_CSV = 0,           /* performance_log.csv missing */
    RL_REASON_CSV_UNREADABLE,       /* not a regular file, permission, I/O error */
    RL_REASON_CSV_EMPTY,            /* zero bytes, or no header line */
    RL_REASON_CSV_TOO_LARGE,        /* over the loader's size limit */
    RL_REASON_NO_ROWS,              /* a header but no complete data row */
    RL_REASON_TRUNCATED_ROW,        /* last line cut off (no newline, short) */
    RL_REASON_BAD_ROWS,             /* rows with a wrong column count, dropped */
    RL_REASON_NON_NUMERIC,          /* cells that are not numbers, read as NaN */
    RL_REASON_NUL_BYTES,            /* rows containing NUL bytes, dropped */
    RL_REASON_LONG_LINES,           /* lines longer than the limit, dropped */
    RL_REASON_NO_MANIFEST,          /* run_manifest.yaml missing */
    RL_REASON_BAD_MANIFEST,         /* unreadable, not YAML, or fields missing/wrong */
    RL_REASON_FINGERPRINT_MISMATCH, /* schema_fingerprint differs from its columns */
    RL_REASON_COLUMNS_MISMATCH,     /* CSV header differs from the manifest's columns */
    RL_REASON_NO_SUMMARY,           /* episode_summary.yaml missing */
    RL_REASON_BAD_SUMMARY,          /* unreadable, not YAML, or fields missing/wrong */
    RL_REASON_TIMER_NESTING,        /* the summary counts timers that ran outside their parent */
    RL_REASON_COUNT
} rl_run_reason;

/* "parsed", "degraded", "skipped". */
RL_API const char *rl_run_status_name(rl_run_status status);
/* Short snake_case name of a reason ("truncated_row"); "unknown" out of range. */
RL_API const char *rl_run_reason_name(rl_run_reason reason);

/* One loaded run. All fields are read-only for the caller and owned by the run. */
typedef struct rl_run {
    char *path; /* the run directory as given/found */
    rl_run_status status;
    uint32_t reasons; /* bit (1u << rl_run_reason) per reason */
    char **messages;  /* human-readable details, one per problem found */
    size_t num_messages;
    size_t num_rows; /* complete data rows kept */
    size_t num_columns;
    char **column_names;   /* from the CSV header, in CSV order */
    double **columns;      /* columns[j][i]: column j, row i; NaN for unreadable cells */
    json_object *manifest; /* parsed run_manifest.yaml, or NULL */
    json_object *summary;  /* parsed episode_summary.yaml, or NULL */
    /* The run's end-of-run numbers, one definition each (docs/perflog.md, "A run's
     * numbers"); `runlab runs`, its JSON and CSV, and the figures all show these. */
    size_t num_gain_layers;
    char **gain_layers;  /* layers with a gain, sorted by name (byte order) */
    double *layer_gains; /* final gain per layer, as gain_layers: the summary's
                          * real_accumulated_gain[layer], else the last finite value of
                          * the CSV column "<layer>.RealAccumulatedGain"; NaN if neither */
    double final_gain;   /* the run's final gain: the sum of layer_gains (NaN: no gain) */
    bool final_from_summary; /* every layer gain came from the episode summary */
    double total_cost;   /* the summary's total_cost, else the last finite TotalCost; NaN */
    double elapsed_s;    /* the summary's elapsed_wall_time_s, else the last
                          * ElapsedWallTimeSec; NaN */
    bool has_seed;
    uint64_t seed;       /* the manifest's random_seed, when has_seed */
} rl_run;

/* Limits; rl_run_load_opts uses defaults for zero fields. */
typedef struct rl_run_limits {
    size_t max_csv_bytes;  /* default 1 GiB */
    size_t max_line_bytes; /* default 1 MiB */
    size_t max_yaml_bytes; /* default 4 MiB */
    size_t max_columns;    /* default 4096 */
    size_t threads;        /* rl_runs_load's loading threads; default one per online core
                            * (at most 16); 1 loads on the calling thread */
} rl_run_limits;

/* Loads one run directory into a new rl_run (free with rl_run_free). Bad or missing files
 * never make it fail: they set the status and reasons. Returns RL_OK, RL_EINVAL (NULL
 * argument) or RL_ENOMEM. `limits` may be NULL. Thread-safe (no shared state). */
RL_API int rl_run_load(const char *dir, const rl_run_limits *limits, rl_run **out);
RL_API void rl_run_free(rl_run *run);

/* Column by name (borrowed, num_rows values) or NULL when the run has no such column. */
RL_API const double *rl_run_column(const rl_run *run, const char *name);

/* Final gain of one layer of the run (see rl_run.layer_gains); NaN when the run has no
 * gain for that layer. */
RL_API double rl_run_layer_gain(const rl_run *run, const char *layer);

/* True when the reason's bit is set. */
RL_API bool rl_run_has_reason(const rl_run *run, rl_run_reason reason);

/* A set of runs found below roots, sorted by path. */
typedef struct rl_run_set {
    rl_run **runs;
    size_t count;
    char **walk_errors; /* directories that could not be read, loops, depth limit */
    size_t num_walk_errors;
} rl_run_set;

/* Walks each root (a run directory itself, or a tree) and loads every run directory: one
 * holding run_manifest.yaml, performance_log.csv or episode_summary.yaml. Real
 * directories are walked first; symbolic links to directories afterwards, and only when
 * they lead to a directory not reached otherwise (a link to a directory already walked,
 * like the recorder's .run-ids/ links, is an alias and passes silently). Walk errors: a
 * link to its own ancestor or a chain of links that never ends (loops), a dangling link,
 * an unreadable directory, depth over 64. A root that does not exist is a walk error, not
 * a failure. Runs are loaded by a small pool of threads (rl_run_limits.threads), one run
 * per task; the set is the same whatever the thread count. Returns RL_OK, RL_EINVAL,
 * RL_ENOMEM or RL_EIO (no thread could be started); free with rl_run_set_free. */
RL_API int rl_runs_load(const char *const *roots, size_t num_roots, const rl_run_limits *limits,
                 rl_run_set **out);

/* Called by rl_runs_load_progress after each run is loaded (`done` of `total`, the path of
 * the run just loaded: with several threads, runs finish in any order), always from the
 * calling thread. */
typedef void (*rl_runs_progress_fn)(size_t done, size_t total, const char *path, void *user);

/* rl_runs_load with a progress callback (NULL: none), for long loads of many runs. */
RL_API int rl_runs_load_progress(const char *const *roots, size_t num_roots,
                          const rl_run_limits *limits, rl_runs_progress_fn progress,
                          void *user, rl_run_set **out);
RL_API void rl_run_set_free(rl_run_set *set);

/* Called by rl_runs_each for each run, in path order (`index` of `total`), always from the
 * calling thread. The run is borrowed: it is freed when the callback returns. A negative
 * return (an RL_E* code, with the message set) stops the walk; rl_runs_each returns it. */
typedef int (*rl_runs_each_fn)(const rl_run *run, size_t index, size_t total, void *user);

/* rl_runs_load without holding every run: the same walk, order and runs, but each run is
 * handed to `fn` and freed before the next few are loaded, so memory does not grow with
 * the number of runs (a batch of at most 64 runs at once, loaded by the pool of
 * rl_run_limits.threads). The walk errors go to *walk_errors (free each string and the
 * array) when both pointers are given. Returns RL_OK, RL_EINVAL, RL_ENOMEM, RL_EIO, or the
 * callback's code. */
RL_API int rl_runs_each(const char *const *roots, size_t num_roots, const rl_run_limits *limits,
                 rl_runs_each_fn fn, void *user, char ***walk_errors, size_t *num_walk_errors);

/* Counts by status and by reason. */
typedef struct rl_runs_report {
    size_t total;
    size_t by_status[3];
    size_t by_reason[RL_REASON_COUNT];
    size_t walk_errors;
    size_t rows; /* data rows over all runs */
} rl_runs_report;

RL_API void rl_runs_aggregate(const rl_run_set *set, rl_runs_report *out);
/* Adds one run to the counts (start from a zeroed report; walk_errors is the caller's). */
RL_API void rl_runs_report_add(rl_runs_report *out, const rl_run *run);

/* Writes the report as text lines ("runs: 12 (parsed 9, degraded 2, skipped 1)" then one
 * line per reason with a count). Returns RL_OK or RL_EIO. */
RL_API int rl_runs_report_print(const rl_runs_report *report, FILE *file);

#ifdef __cplusplus
}
#endif
#endif
