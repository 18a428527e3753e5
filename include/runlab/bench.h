/* runlab/bench.h: benchmarking motion planners the way OMPL's Benchmark class does, with
 * every run in its own process, so a planner that crashes, aborts, hangs or eats memory
 * costs that run only. Results are kept in memory, journaled run by run, and written as
 * an OMPL benchmark log and as a SQLite database in OMPL's schema (Planner Arena). */
#ifndef RUNLAB_BENCH_H
#define RUNLAB_BENCH_H

#include "runlab/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- values ------------------------------------------------------------------------ */

/* Property types, written into the log as the type word ("REAL") and into SQL as the
 * declared column type. */
typedef enum rl_bench_type {
    RL_BENCH_BOOLEAN = 0,
    RL_BENCH_INTEGER = 1,
    RL_BENCH_REAL = 2,
    RL_BENCH_ENUM = 3,
    RL_BENCH_TEXT = 4
} rl_bench_type;

/* "BOOLEAN", "INTEGER", "REAL", "ENUM", "TEXT"; "?" for other values. Thread-safe. */
RL_API const char *rl_bench_type_name(rl_bench_type type);
/* Parses a type word (case-sensitive, as above; "DOUBLE" is taken as REAL, "STRING" as
 * TEXT). RL_OK or RL_EINVAL. */
RL_API int rl_bench_type_parse(const char *word, rl_bench_type *out);

/* Outcome of one run. 0..8 are OMPL's PlannerStatus values (8 = ABORT) so that OMPL's
 * tools read them; 9.. are runlab's, for what the isolation sees. */
typedef enum rl_bench_status {
    RL_RUN_UNKNOWN = 0,
    RL_RUN_INVALID_START = 1,
    RL_RUN_INVALID_GOAL = 2,
    RL_RUN_UNRECOGNIZED_GOAL = 3,
    RL_RUN_TIMEOUT = 4, /* no solution in max_time, or killed after max_time + grace */
    RL_RUN_APPROXIMATE = 5,
    RL_RUN_EXACT = 6,
    RL_RUN_CRASH = 7, /* killed by a signal other than SIGABRT (SIGSEGV, SIGBUS...) */
    RL_RUN_ABORT = 8, /* SIGABRT: abort(), failed assert */
    RL_RUN_INFEASIBLE = 9,
    RL_RUN_OUT_OF_MEMORY = 10, /* resident memory passed max_mem; the run was killed */
    RL_RUN_ERROR = 11,         /* planner error, exit before reporting, protocol violation */
    RL_RUN_STATUS_COUNT = 12
} rl_bench_status;

/* Description as written in the log's enum line ("Exact solution"). Thread-safe. */
RL_API const char *rl_bench_status_name(rl_bench_status status);

/* ---- inside a run -------------------------------------------------------------------- */

/* The handle a planner gets while it solves, in the run's own process. Not thread-safe
 * except rl_bench_run_should_stop and rl_bench_run_progress, which a planner's worker
 * threads may call. */
typedef struct rl_bench_run rl_bench_run;

/* True once the run's time limit is reached: the planner's termination check. Cheap (one
 * clock read); async-signal-safe. */
RL_API bool rl_bench_run_should_stop(const rl_bench_run *run);
/* Seconds since solve() was called. */
RL_API double rl_bench_run_elapsed(const rl_bench_run *run);
/* The seed of this run (the experiment seed mixed with planner and run index). */
RL_API uint64_t rl_bench_run_seed(const rl_bench_run *run);
/* Publishes the current value of progress property `index` (declared order). The harness
 * samples the published values every time_between_updates from the parent process
 * through shared memory with a sequence lock: the planner never waits and is never read
 * half-way. RL_ERANGE for a bad index. */
RL_API int rl_bench_run_progress(rl_bench_run *run, size_t index, double value);
/* Sets a run property ("solution length", RL_BENCH_REAL, "1.25"). Names: 1..127 bytes,
 * no control characters, ';', '|', ',' or '=' and not one of the database's own columns;
 * values: no control characters or ';'. Returns RL_OK, RL_EINVAL (message says why) or
 * RL_ENOMEM. A name set twice keeps the last value. */
RL_API int rl_bench_run_set(rl_bench_run *run, const char *name, rl_bench_type type, const char *value);
RL_API int rl_bench_run_set_real(rl_bench_run *run, const char *name, double value);
RL_API int rl_bench_run_set_int(rl_bench_run *run, const char *name, int64_t value);
RL_API int rl_bench_run_set_bool(rl_bench_run *run, const char *name, bool value);

/* ---- planners ---------------------------------------------------------------------- */

enum { RL_BENCH_MAX_PROGRESS = 32 };

/* Callback through which a planner lists its settings ("range", "0.1"). */
typedef void (*rl_bench_setting_fn)(void *ctx, const char *key, const char *value);

/* A planner: a small vtable over an opaque problem. setup, solve, run_properties and
 * clear run in the run's child process; free runs in the harness. Only name and solve
 * are required. */
typedef struct rl_bench_planner {
    const char *name; /* as it appears in the results; valid until free */
    void *self;
    /* Reports the planner's settings (OMPL's "common properties"). */
    void (*settings)(void *self, rl_bench_setting_fn emit, void *ctx);
    /* Progress properties beside "time", which the harness adds: names and types. */
    size_t n_progress;
    const char *const *progress_names;
    const rl_bench_type *progress_types;
    /* Prepares for a run (not timed). Negative return: the run is recorded as ERROR. */
    int (*setup)(void *self, void *problem);
    /* Solves until done or rl_bench_run_should_stop; returns the outcome. */
    rl_bench_status (*solve)(void *self, void *problem, rl_bench_run *run);
    /* After solve: adds run properties (solution length...). */
    void (*run_properties)(void *self, void *problem, rl_bench_run *run);
    void (*clear)(void *self);
    void (*free)(void *self);
    /* Executable planners (rl_bench_planner_exec) set this instead of solve. */
    char **exec_argv;
    /* Executable planners: their settings as one JSON object, given to every run as
     * RUNLAB_SETTINGS and as the first line of its standard input (NULL: none). */
    char *exec_settings_json;
} rl_bench_planner;

/* A planner that is a program, run as argv[0] with the arguments, speaking the line
 * protocol of docs/bench.md on its standard output. `progress` lists "name TYPE"
 * declarations of the progress properties it reports (may be NULL). Returns a new
 * planner owned by the caller (free with its free member) or NULL (error set). */
RL_API rl_bench_planner *rl_bench_planner_exec(const char *name, const char *const *argv, size_t argc,
                                        const char *const *progress, size_t n_progress);

/* Gives an executable planner its settings: n keys with their values (strings as the
 * spec wrote them; `json_values[i]` is each value as a JSON scalar: a number, true/false
 * or a quoted string). They are recorded as the planner's settings (OMPL's
 * plannerConfigs) and passed to each run as a JSON object (see exec_settings_json).
 * Replaces earlier settings. RL_OK, RL_EINVAL (not an executable planner, a bad key, a
 * JSON object over 60 KiB) or RL_ENOMEM. Not thread-safe. */
RL_API int rl_bench_planner_exec_settings(rl_bench_planner *p, const char *const *keys,
                                   const char *const *values, const char *const *json_values,
                                   size_t n);

/* ---- requests, events, status -------------------------------------------------------- */

typedef struct rl_bench_request {
    double max_time;             /* seconds per run (default 5) */
    double max_mem;              /* MB of resident memory per run (default 4096) */
    unsigned run_count;          /* runs per planner; 0 = until max_time of summed run
                                    time is spent (default 100) */
    double time_between_updates; /* progress sampling period, seconds (default 0.05) */
    bool display_progress;       /* call the on_run_done event (default true) */
    bool save_console_output;    /* keep each planner's stdout/stderr (default true) */
    bool simplify;               /* passed to planners as the setting "simplify" */
    unsigned jobs;               /* runs in parallel (default 1); parallel runs share
                                    CPUs, caches and memory bandwidth, so their times
                                    are not comparable with serial ones */
    double grace;                /* seconds after max_time before the kill (default 0.1) */
    const char *console_dir;     /* where <planner>.console files go (NULL: discarded) */
    size_t console_limit;        /* bytes of console output kept per run (default 1 MiB);
                                    the rest is dropped, and the file says how much */
    const char *journal_path;    /* append each result here, fsynced (NULL: none) */
    const char *problem_spec;    /* given to executable planners as RUNLAB_PROBLEM */
    const char *problem_file;    /* path given to executable planners as
                                    RUNLAB_PROBLEM_FILE: the problem's geometry as
                                    JSON (docs/bench.md); NULL: the variable is unset */
    int64_t start_ns;            /* the experiment's start (UTC ns; 0: now). A resumed
                                    benchmark passes its first start, so its log keeps
                                    one name and its date. */
    bool round_robin;            /* run r of every planner before run r + 1 of any
                                    (default false: planner by planner, as OMPL) */
    unsigned shard_index;        /* run only the cells of shard shard_index (1-based) of */
    unsigned shard_count;        /* shard_count (rl_bench_cell_shard); 0: every cell.
                                    Needs run_count > 0. The results then hold the
                                    shard's runs only, in order; the journal keeps each
                                    run's index for rl_bench_merge. */
} rl_bench_request;

/* The shard (1..shard_count) that runs cell (planner, run) of a benchmark of n_planners
 * planners: cells are dealt out run by run, planner by planner (k = run * n_planners +
 * planner goes to shard 1 + k % shard_count), so every shard gets the same mix of planners
 * and so about the same expected time (each cell may take up to max_time), and which cells
 * a shard runs depends on the spec and N alone. A cell's seed never depends on its shard
 * (it derives from the spec's seed, planner and run). Thread-safe. */
RL_API unsigned rl_bench_cell_shard(size_t planner, size_t run, size_t n_planners,
                                    unsigned shard_count);

/* Fills the defaults above. */
RL_API void rl_bench_request_init(rl_bench_request *req);

/* Events. on_planner_switch and on_run_done run in the harness; on_pre_run and
 * on_post_run run in the run's process (around solve), where on_post_run may add run
 * properties with rl_bench_run_set. Any may be NULL. */
typedef struct rl_bench_events {
    void (*on_planner_switch)(void *ud, const rl_bench_planner *planner);
    void (*on_pre_run)(void *ud, const rl_bench_planner *planner, void *problem);
    void (*on_post_run)(void *ud, const rl_bench_planner *planner, void *problem,
                        rl_bench_run *run);
    void (*on_run_done)(void *ud, const char *planner, size_t run_index, rl_bench_status status,
                        size_t done, size_t total);
    void *ud;
} rl_bench_events;

/* Snapshot of a running benchmark, readable from any thread at any time. */
typedef struct rl_bench_progress {
    bool running;
    size_t active_run;          /* runs finished so far */
    double progress_percentage; /* 0..100 */
    char active_planner[128];
} rl_bench_progress;

/* ---- results ------------------------------------------------------------------------ */

typedef struct rl_bench_prop {
    char *name;
    rl_bench_type type;
    char *value; /* "" when missing */
} rl_bench_prop;

typedef struct rl_bench_run_data {
    rl_bench_status status;
    char *reason; /* why the harness gave this status (NULL when the planner did) */
    rl_bench_prop *props;
    size_t n_props;
    double *samples; /* n_samples rows of 1 + n_progress values: time first */
    size_t n_samples;
} rl_bench_run_data;

typedef struct rl_bench_planner_data {
    char *name;
    rl_bench_prop *settings; /* common properties (type unused) */
    size_t n_settings;
    size_t n_progress;
    char **progress_names;
    rl_bench_type *progress_types;
    rl_bench_run_data *runs;
    size_t n_runs;
} rl_bench_planner_data;

/* Everything one benchmark produced. */
typedef struct rl_bench_experiment {
    char *name;
    rl_bench_prop *params; /* experiment parameters */
    size_t n_params;
    rl_bench_planner_data *planners;
    size_t n_planners;
    double max_time, max_mem;
    unsigned run_count;
    double time_between_updates;
    int64_t start_ns;      /* wall clock at start, ns since the epoch */
    double total_duration; /* seconds */
    uint64_t seed;
    char *setup_info; /* problem description */
    char *host;
    char *cpu_info;
    char *version; /* "runlab 0.1.0" */
    /* Property names executable planners reported that OMPL's parser cannot take as
     * columns, and what they became (rl_bench_prop.name: the column name used; .value:
     * the name as reported). */
    rl_bench_prop *renamed;
    size_t n_renamed;
    /* How the runs' processes were followed (the last session's): "cgroup v1 DIR",
     * "cgroup v2 DIR" or "proc (why)"; NULL before a benchmark ran. */
    char *process_tree;
} rl_bench_experiment;

/* ---- the benchmark ---------------------------------------------------------------- */

typedef struct rl_bench rl_bench;

/* New benchmark of `problem` (opaque, passed to planners; not owned). `name` is the
 * experiment name (1..127 bytes, no control characters); `setup_info` describes the
 * problem for the log (may be NULL). Returns NULL with the error set. */
RL_API rl_bench *rl_bench_new(const char *name, void *problem, const char *setup_info);
/* Frees the benchmark, its planners (their free) and results. NULL is fine. */
RL_API void rl_bench_free(rl_bench *b);

/* Typed experiment parameters ("num_obstacles", INTEGER, "4"). Names as for run
 * properties; a name given twice is RL_EEXIST. */
RL_API int rl_bench_add_param(rl_bench *b, const char *name, rl_bench_type type, const char *value);
RL_API size_t rl_bench_param_count(const rl_bench *b);
/* The parameter named `name`, or NULL. Valid until the benchmark is freed. */
RL_API const rl_bench_prop *rl_bench_param(const rl_bench *b, const char *name);

/* Adds a planner; the benchmark owns it from then on, also on failure. Names must be
 * unique and valid as for properties. */
RL_API int rl_bench_add_planner(rl_bench *b, rl_bench_planner *planner);
RL_API size_t rl_bench_planner_count(const rl_bench *b);
/* Frees every planner added so far. */
RL_API void rl_bench_clear_planners(rl_bench *b);

RL_API void rl_bench_set_seed(rl_bench *b, uint64_t seed);
RL_API void rl_bench_set_events(rl_bench *b, const rl_bench_events *events);

/* Runs the benchmark. When req->journal_path names an existing journal of this
 * benchmark, its runs are taken as done and only the missing ones run (resume).
 * Returns RL_OK when every run was carried out (whatever their status) or an error
 * of the harness itself (fork, pipes, journal I/O). Not reentrant. */
RL_API int rl_bench_execute(rl_bench *b, const rl_bench_request *req);

/* A consistent snapshot of the running benchmark; any thread. */
RL_API void rl_bench_get_progress(rl_bench *b, rl_bench_progress *out);

/* The results (valid until the next rl_bench_execute or rl_bench_free). */
RL_API const rl_bench_experiment *rl_bench_results(const rl_bench *b);

/* ---- output ------------------------------------------------------------------------ */

/* Writes the results as an OMPL benchmark log (atomically). */
RL_API int rl_bench_write_log(const rl_bench_experiment *e, const char *path);
/* Adds the results to a SQLite database in OMPL's schema (created when missing), the
 * same database OMPL's ompl_benchmark_statistics.py makes of the log. */
RL_API int rl_bench_write_db(const rl_bench_experiment *e, const char *db_path);
/* Default log name from host and start time, "runlab_<host>_<YYYYmmddTHHMMSSZ>.log". */
RL_API int rl_bench_default_log_name(const rl_bench_experiment *e, char *out, size_t cap);
/* Writes one CSV row per run: planner, run, status, then every run property. */
RL_API int rl_bench_write_csv(const rl_bench_experiment *e, const char *path);

/* Writes the whole experiment as JSON (atomically): header fields, parameters, and per
 * planner its settings, progress property names and runs (status, reason, properties
 * as typed JSON values, progress samples as rows of numbers, time first). */
RL_API int rl_bench_write_json(const rl_bench_experiment *e, const char *path);

/* Reads OMPL benchmark logs into one SQLite database, as OMPL's own script does
 * (readBenchmarkLog then computeViews): same schema, rows, values and NULLs. The
 * database is created or extended. An experiment the database already holds (same name,
 * host, start date and seed) is skipped with a warning on the log, never added twice.
 * RL_EPARSE names the file and line. */
RL_API int rl_bench_import_logs(const char *const *paths, size_t n, const char *db_path);

/* Checks a planner, parameter or property name (see rl_bench_run_set). `what` names
 * it in the message. RL_OK or RL_EINVAL. */
RL_API int rl_bench_check_name(const char *name, const char *what);

/* ---- specs and benchmark directories (docs/bench.md) ---------------------------------- */

/* A benchmark spec: the YAML document `runlab bench SPEC.yaml` runs (keys experiment,
 * problem, planners, seed, max_time, ...; docs/bench.md), parsed and checked. Immutable
 * once made: several threads may read one. */
typedef struct rl_bench_spec rl_bench_spec;

/* Parses a spec from `len` bytes of YAML. `source` names it in messages (a file name or
 * "<demo spec>"); `source_dir` is the absolute directory a planner `command:` with a '/'
 * is taken relative to (NULL: the current one). Checks every top-level key, type and
 * range and that each planner entry is a mapping of known keys; planners themselves are
 * checked when the benchmark is built (rl_bench_run_spec). Returns RL_OK with *out owned
 * by the caller (rl_bench_spec_free); RL_EINVAL or RL_EPARSE with the message
 * "SOURCE:LINE: KEY: what" (the line when it can be found); RL_ENOMEM. Thread-safe. */
RL_API int rl_bench_spec_parse(const char *text, size_t len, const char *source, const char *source_dir,
                        rl_bench_spec **out);
/* Reads a spec file (at most 1 MiB) and parses it as above, with relative commands
 * taken from the file's directory. Errors as above, or the read's (RL_ENOENT, RL_EIO). */
RL_API int rl_bench_spec_load(const char *path, rl_bench_spec **out);
/* The spec a benchmark directory was started with (DIR/spec.json, written by
 * rl_bench_run_spec), with its first start time, for resuming it. Errors of the read,
 * or RL_EPARSE when spec.json has no spec. */
RL_API int rl_bench_spec_load_dir(const char *dir, rl_bench_spec **out);
RL_API void rl_bench_spec_free(rl_bench_spec *spec);
/* The experiment's name; valid while the spec lives. */
RL_API const char *rl_bench_spec_experiment(const rl_bench_spec *spec);
/* The spec's shape: its planners, runs per planner (0: until max_time is spent; an
 * adaptive spec's max_runs) and max_time per run in seconds. Any pointer may be NULL.
 * Thread-safe. */
RL_API void rl_bench_spec_shape(const rl_bench_spec *spec, size_t *planners, unsigned *runs,
                                double *max_time);

/* Built-in problems and planners, which live above the library (runlab's are in
 * examples/rlx.h): rl_bench_run_spec asks them for a spec's `problem` and for planners
 * given by `planner:`. Every member is required when the table is given. */
typedef struct rl_bench_builtins {
    /* The problem of that name, or NULL with the error set (then only `command:`
     * planners can run, and they get the name as RUNLAB_PROBLEM). */
    void *(*problem_new)(const char *name);
    void (*problem_free)(void *problem);
    const char *(*problem_describe)(const void *problem); /* the log's setup info */
    int (*problem_dimension)(const void *problem);         /* the "dimension" parameter */
    char *(*problem_json)(const void *problem); /* problem.json (malloc'd), NULL: error */
    /* A planner of kind `kind` with n settings (texts as in the spec), or NULL with the
     * error set (RL_EINVAL: a bad setting). */
    rl_bench_planner *(*planner_new)(const char *kind, const char *name, const char *const *keys,
                                     const char *const *values, size_t n);
} rl_bench_builtins;

/* The adaptive keys of a spec (`runs: auto`, docs/bench.md), as read and range-checked. */
typedef struct rl_bench_adaptive_keys {
    double confidence;     /* 'confidence' (default 0.95) */
    unsigned min_runs;     /* 'min_runs' (default 10) */
    unsigned max_runs;     /* 'max_runs' (default 200) */
    const char *goal;      /* 'goal': "ranking" (default), "ci" or "success" */
    const char *attribute; /* 'attribute': the run property ranked or estimated
                              (default "time") */
    double relative_width; /* 'relative_width' (ci; default 0.1) */
    double width;          /* 'width' (success; default 0.05) */
} rl_bench_adaptive_keys;

/* Whether the spec asks for an adaptive benchmark (`runs: auto`); fills *out with its
 * adaptive keys either way (defaults where absent). Strings are valid while the spec
 * lives. Thread-safe. */
RL_API bool rl_bench_spec_adaptive(const rl_bench_spec *spec, rl_bench_adaptive_keys *out);

/* How an adaptive benchmark stops: the engine runs every planner round-robin up to
 * looks[0] runs, asks `decide`, and goes on to looks[1], ... until it says stop or the
 * looks are over. The rule lives above the engine (runlab/adaptive.h makes one). */
typedef struct rl_bench_stop_rule {
    const unsigned *looks; /* runs per planner at each look, increasing */
    size_t n_looks;
    /* Decides at look `look` from the first looks[look] runs of every planner in `e`
     * (which may hold more after a resume). Sets *stop; puts in *look_json a JSON object
     * of the look (malloc'd text, the engine frees it: runs, statistic, bound, ...)
     * and, when stopping or at the last look, in `why` the sentence saying why the
     * benchmark stopped. RL_OK or an error (set). */
    int (*decide)(void *ud, size_t look, const rl_bench_experiment *e, bool *stop,
                  char **look_json, char *why, size_t why_cap);
    void *ud;
} rl_bench_stop_rule;

/* Where rl_bench_run_spec is: told through rl_bench_run_opts.on_phase. */
typedef enum rl_bench_phase {
    RL_BENCH_PHASE_DIR_READY = 0,  /* the directory exists with spec.json; not yet locked */
    RL_BENCH_PHASE_RUNS_START = 1, /* locked and prepared; the runs start now */
    RL_BENCH_PHASE_RUNS_END = 2    /* the runs are over; the outputs are written next */
} rl_bench_phase;

/* Options of rl_bench_run_spec; zero-initialise for the defaults. */
typedef struct rl_bench_run_opts {
    const char *out_root;   /* parent of the new directory (NULL: the spec's 'out', else
                               ./bench-results) */
    unsigned jobs;          /* runs in parallel (0: the spec's 'jobs') */
    const char *resume_dir; /* finish this benchmark directory instead of making one */
    /* A file the caller writes into the directory after rl_bench_run_spec (NULL: none).
     * A resumed directory that has it and manifest.json is finished: nothing runs. */
    const char *finished_marker;
    const rl_bench_builtins *builtins; /* NULL: no built-in problems or planners */
    rl_bench_events events;            /* as rl_bench_set_events */
    /* Called in the calling thread as the phases begin; `dir` is the directory and
     * `total_runs` the runs the benchmark has (planners x runs). May be NULL. */
    void (*on_phase)(void *ud, rl_bench_phase phase, const char *dir, size_t total_runs);
    void *ud;
    /* Run adaptively (`runs: auto`) whatever the spec's runs say (`--adaptive`); spec.json
     * records it, so a resume runs adaptively too. */
    bool adaptive;
    /* The stopping rule of an adaptive benchmark (required then: RL_EINVAL without it;
     * ignored otherwise). The manifest gets its trail under "adaptive". */
    const rl_bench_stop_rule *stop_rule;
    /* Run shard shard_index (1-based) of shard_count only (0: the whole benchmark); see
     * rl_bench_cell_shard. The directory is then OUT_ROOT/<experiment>_shard-K-of-N, with
     * no time stamp, so that running the same shard again (a requeued cluster task)
     * resumes it rather than starting over: a directory of that name holding another
     * spec or shard is RL_EEXIST. spec.json records the shard, so --resume keeps to it. A
     * shard of an adaptive benchmark (runs: auto) or of runs: 0 is RL_EINVAL. */
    unsigned shard_index, shard_count;
} rl_bench_run_opts;

/* A benchmark carried out by rl_bench_run_spec: its directory (locked until freed) and
 * results. */
typedef struct rl_bench_session rl_bench_session;

/* Runs a spec into its own directory, which the engine owns: builds the benchmark
 * (problem, planners, parameters; errors name the spec's file, line and key), makes
 * OUT_ROOT/<experiment>_<UTC stamp> (a suffix when taken) with spec.json, or reopens
 * opts->resume_dir, locks it (DIR/.lock, one harness per directory: RL_EBUSY names the
 * holder), writes problem.json for a built-in problem, runs every run (journal.tsv,
 * console/) and writes the OMPL log, results.db, results.csv, results.json and
 * manifest.json. On RL_OK *out (owned by the caller; rl_bench_session_free) holds the
 * directory, still locked, so the caller can add its own files (the report). Errors:
 * RL_EINVAL (spec), RL_EBUSY, the harness's (rl_bench_execute), I/O errors naming the
 * file, RL_ENOMEM; a directory already made keeps what was written. Not reentrant: one
 * call per process at a time (the harness is a subreaper). */
RL_API int rl_bench_run_spec(const rl_bench_spec *spec, const rl_bench_run_opts *opts,
                      rl_bench_session **out);
/* Joins the shards of one benchmark (directories made by rl_bench_run_spec with
 * shard_index/shard_count, on any machines) into OUT_DIR, a new directory or an existing
 * one holding no benchmark yet: the same OMPL log, results.db, CSV, JSON and manifest a
 * benchmark of the spec run on one machine has, apart from timings and hosts, with the
 * manifest's "shards" listing every shard's directory, host, CPU model and runlab version.
 * The shards must be of one spec and one N, each given once, all N present and finished,
 * and of one runlab version unless `force`: errors name the shards and what differs or is
 * missing (an unfinished one with its runs done so far and how to resume it). `opts`
 * gives builtins, events, on_phase and finished_marker (its other members are ignored);
 * *out as for rl_bench_run_spec. Not reentrant (as rl_bench_run_spec). */
RL_API int rl_bench_merge(const char *const *shard_dirs, size_t n, const char *out_dir,
                          bool force, const rl_bench_run_opts *opts, rl_bench_session **out);
/* The benchmark directory. Valid until the session is freed. */
RL_API const char *rl_bench_session_dir(const rl_bench_session *s);
/* True when a resumed directory was finished already (no results then). */
RL_API bool rl_bench_session_finished_already(const rl_bench_session *s);
/* The results (NULL when finished already). Valid until the session is freed. */
RL_API const rl_bench_experiment *rl_bench_session_results(const rl_bench_session *s);
/* Releases the directory's lock and frees the session. NULL is fine. */
RL_API void rl_bench_session_free(rl_bench_session *s);

#ifdef __cplusplus
}
#endif
#endif
