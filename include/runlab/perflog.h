/* runlab/perflog.h: per-cycle performance logging for planners with a replanning loop.
 * One run directory per episode (never overwritten) holding run_manifest.yaml,
 * performance_log.csv (one row per cycle), episode_summary.yaml, params.yaml and optional
 * map snapshots; formats and the schema fingerprint are defined in docs/perflog.md. */
#ifndef RUNLAB_PERFLOG_H
#define RUNLAB_PERFLOG_H

#include "runlab/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { RL_PERFLOG_FORMAT_VERSION = 1 };

/* What a column holds. Timers and counters are reset at every cycle_end; totals never
 * are; gauges keep their last value. The manifest writes the names "timer", "counter",
 * "total" and "gauge". */
typedef enum rl_perflog_type {
    RL_COL_TIMER = 0,   /* steady-clock seconds spent this cycle (start/stop, may nest) */
    RL_COL_COUNTER = 1, /* integer count this cycle */
    RL_COL_TOTAL = 2,   /* cumulative value since the episode started */
    RL_COL_GAUGE = 3    /* value set during the cycle */
} rl_perflog_type;

/* Why an episode ended (episode_summary.yaml's end_reason). */
typedef enum rl_end_reason {
    RL_END_BUDGET_EXHAUSTED = 0,
    RL_END_GOAL_REACHED = 1,
    RL_END_NO_STEP = 2,
    RL_END_STOPPED = 3
} rl_end_reason;

/* "budget_exhausted", "goal_reached", "no_step", "stopped"; "unknown" otherwise. */
RL_API const char *rl_end_reason_name(rl_end_reason reason);

/* "timer", "counter", "total", "gauge"; "unknown" otherwise. */
RL_API const char *rl_perflog_type_name(rl_perflog_type type);

typedef struct rl_perflog_config {
    const char *root;     /* data root; NULL: $RUNLAB_DATA_ROOT, else $HOME/runlab_data */
    const char *task;     /* optional extra level below the root; NULL or "" for none */
    const char *dataset;  /* required; each of these is one checked path component */
    const char *scene;    /* required */
    const char *planner;  /* required */
    const char *cost_unit; /* unit of the TotalCost column perflog adds (NULL: "none") */
    bool log_performance; /* false: no CSV, and timers/counters cost a branch only */
    double cost_budget;   /* <= 0 or infinite: unbounded (absent from the manifest) */
    uint64_t random_seed;
    int num_maps_to_save; /* N > 0: map snapshots (see rl_perflog_map_due) */
} rl_perflog_config;

/* Defaults: everything NULL/0, log_performance true, cost_budget unbounded. */
RL_API void rl_perflog_config_init(rl_perflog_config *cfg);

typedef struct rl_perflog rl_perflog;

/* Creates a logger (nothing is written yet). The config's strings are copied. Names are
 * checked with rl_path_check_name: RL_EINVAL for a bad one. The caller owns `*out`
 * (rl_perflog_free). A logger is used by one thread at a time. */
RL_API int rl_perflog_new(rl_perflog **out, const rl_perflog_config *cfg);

/* Frees the logger. If an episode is running, first ends it as RL_END_STOPPED (so a
 * summary exists). NULL is ignored. */
RL_API void rl_perflog_free(rl_perflog *pl);

/* Declares a layer instance (name -> kind, e.g. "planning" -> "next_best_view"), before
 * rl_perflog_start. Its columns appear after the agent's, prefixed "<name>.", layers
 * sorted by name. RL_EEXIST for a repeated name, RL_ESTATE after start. */
RL_API int rl_perflog_add_layer(rl_perflog *pl, const char *name, const char *kind);

/* Declares a column before rl_perflog_start and returns its handle in `*id`. `layer` NULL
 * for the agent's own columns, else a declared layer's name (the column is then named
 * "<layer>.<name>"). `name`: letters, digits, '_' (1..64 bytes). `unit`: printable, no
 * tab/comma/quote (e.g. "s", "m", "count"). `parent`: NULL, or the full name of a timer
 * declared earlier that this timer runs inside (only timers may have a parent).
 * Errors: RL_EINVAL (bad name/unit/parent), RL_EEXIST, RL_ESTATE after start.
 * The agent columns CycleIndex (counter) and ElapsedWallTimeSec (gauge, s) are always
 * present and come first. The standard totals TotalCost, TotalPathLength (m),
 * TotalPathDuration (s) and TotalVisitedNodes (count) are always present too: perflog
 * adds each one the agent did not declare itself (layer NULL, that name), right after
 * ElapsedWallTimeSec, and logs in it what rl_perflog_set_totals was last given. A column
 * the agent declared under one of these names is its own (it sets it; perflog never
 * writes it). */
RL_API int rl_perflog_declare(rl_perflog *pl, const char *layer, const char *name, rl_perflog_type type,
                       const char *unit, const char *parent, int *id);

/* Records one parameter for params.yaml (flat keys, e.g. "planning.sensor_range"), before
 * start. Keys: letters, digits, '_', '.', '-'. A repeated key replaces the value. */
RL_API int rl_perflog_param_f64(rl_perflog *pl, const char *key, double value);
RL_API int rl_perflog_param_i64(rl_perflog *pl, const char *key, int64_t value);
RL_API int rl_perflog_param_str(rl_perflog *pl, const char *key, const char *value);

/* Starts the episode: creates the run directory
 * <root>[/<task>]/<dataset>/<scene>/<planner>/<YYYYmmdd_HHMMSS>[_k]/ (a new one; an
 * existing name gets the suffix _2, _3, ...), writes run_manifest.yaml and params.yaml,
 * and (with log_performance) performance_log.csv's header. The schema is fixed from here.
 * Errors: RL_ESTATE if already started, RL_EIO/RL_ENOSPC from the file system. */
RL_API int rl_perflog_start(rl_perflog *pl);

/* The run directory, valid after a successful start (until rl_perflog_free); else NULL. */
RL_API const char *rl_perflog_run_dir(const rl_perflog *pl);

/* The manifest's schema_fingerprint ("sha256:<64 hex>"), valid after start; else NULL. */
RL_API const char *rl_perflog_fingerprint(const rl_perflog *pl);

/* Per-cycle recording. These never fail and never allocate; an invalid id, a NULL
 * logger, a logger not started, or log_performance false makes them do nothing. Timer
 * start/stop pairs may nest; a stop without start is ignored. */
RL_API void rl_perflog_timer_start(rl_perflog *pl, int id);
RL_API void rl_perflog_timer_stop(rl_perflog *pl, int id);
RL_API void rl_perflog_count(rl_perflog *pl, int id, int64_t n); /* counter += n */
RL_API void rl_perflog_add(rl_perflog *pl, int id, double v);    /* total += v */
RL_API void rl_perflog_set(rl_perflog *pl, int id, double v);    /* gauge or total = v */

/* Episode totals for episode_summary.yaml and the per-cycle standard total columns; the
 * agent updates them as it goes, typically once per cycle before rl_perflog_cycle_end
 * (they are also what a summary written on a signal holds). Gains are per layer, in the
 * task unit. */
typedef struct rl_episode_totals {
    double total_cost;
    double total_path_length;
    double total_path_duration;
    int64_t num_visited_nodes;
} rl_episode_totals;

/* Sets the totals. Each CSV row written afterwards holds them in the standard total
 * columns perflog added (see rl_perflog_declare); rows before the first call hold nan
 * there. Until the first call, the summary takes each total from the agent's own column
 * of that name (a total or gauge) when it declared one, else 0. RL_EINVAL for NULL. */
RL_API int rl_perflog_set_totals(rl_perflog *pl, const rl_episode_totals *totals);
/* real_accumulated_gain of a declared layer, for the summary. A layer whose gain is never
 * set this way states the value of its "<layer>.RealAccumulatedGain" column (a total or
 * gauge) when it has one, else 0. The figures draw that column (perflog does not add it).
 * RL_ENOENT for an unknown layer. */
RL_API int rl_perflog_set_gain(rl_perflog *pl, const char *layer, double gain);

/* Ends a cycle: with log_performance, writes one CSV row (CycleIndex, ElapsedWallTimeSec,
 * then every column in CSV order) and flushes it, so a crash loses no finished cycle;
 * then resets timers and counters. Counts cycles either way. RL_ESTATE when not started,
 * RL_EIO on a write error. Also returns 1 (instead of RL_OK) when a stop was requested
 * by a signal (see rl_perflog_handle_signals), so loops can test `rc != 0`. */
RL_API int rl_perflog_cycle_end(rl_perflog *pl);

/* Map snapshots. With N = num_maps_to_save > 0 and a finite budget, snapshot k
 * (k = 0..N-1) is due at the first call after spent_cost passed k/N of the budget, at most
 * one per cycle; with an unbounded budget, snapshot 0 is due when `episode_ending`.
 * Returns the due index k (>= 0) or -1 when none is due. */
RL_API int rl_perflog_map_due(rl_perflog *pl, double spent_cost, bool episode_ending);

/* Writes snapshot `k` (as returned by rl_perflog_map_due) to maps/<k, 5 digits>.<ext>
 * atomically and appends a row to map_log.csv (MapIndex, Cycle, SpentCost,
 * TotalPathLength, TotalPathDuration, File). `ext`: 1..8 letters/digits. */
RL_API int rl_perflog_save_map(rl_perflog *pl, int k, const void *data, size_t len, const char *ext,
                        double spent_cost, double path_length, double path_duration);

/* Ends the episode: writes episode_summary.yaml (atomically) and closes the CSV. Later
 * per-cycle calls do nothing; a second end is RL_ESTATE. */
RL_API int rl_perflog_end(rl_perflog *pl, rl_end_reason reason);

/* ---- Signals --------------------------------------------------------------------------
 * SIGINT/SIGTERM during an episode must still leave a summary, but a signal handler may
 * only call async-signal-safe functions (no malloc, stdio, snprintf). So the logger keeps
 * the summary pre-rendered (end_reason: stopped, from the totals of the last finished
 * cycle) in one of two buffers, re-rendered into the other one and published by an atomic
 * index swap after every cycle_end/set_totals/set_gain. The handler only write(2)s the
 * published buffer to a temporary file, rename(2)s it over episode_summary.yaml and sets
 * a stop flag. Then:
 *  - default (flags 0): the program continues; cycle_end returns 1 and
 *    rl_perflog_stop_requested() is true, and the loop ends with rl_perflog_end(
 *    RL_END_STOPPED), which rewrites the summary with exact totals. A second signal
 *    restores the previous disposition and re-raises, so a stuck program still dies.
 *  - RL_PERFLOG_SIG_EXIT: after writing, the previous disposition is restored and the
 *    signal re-raised at once (the process dies as it would have without runlab).
 * Only one logger at a time owns the handlers; installing for another replaces it.
 * Call from the thread running the loop, after rl_perflog_start. */
enum { RL_PERFLOG_SIG_EXIT = 1 };
RL_API int rl_perflog_handle_signals(rl_perflog *pl, int flags);

/* Restores the dispositions saved by rl_perflog_handle_signals (also done by end/free). */
RL_API void rl_perflog_release_signals(void);

/* True once SIGINT/SIGTERM arrived while handlers were installed. Async-signal-safe. */
RL_API bool rl_perflog_stop_requested(void);

/* Computes the schema fingerprint of `n` columns given as parallel arrays (names, type
 * names, units, parents; NULL parent = none) as docs/perflog.md defines it, into `out`
 * ("sha256:" + 64 hex + NUL: at least 72 bytes). Used by the loader to check manifests. */
RL_API int rl_perflog_compute_fingerprint(const char *const *names, const char *const *types,
                                   const char *const *units, const char *const *parents, size_t n,
                                   char *out, size_t cap);

enum { RL_FINGERPRINT_LEN = 72 };

#ifdef __cplusplus
}
#endif
#endif
