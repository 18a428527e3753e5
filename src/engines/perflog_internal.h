/* Internals of the perflog engine shared by perflog.c (declaration, the episode, signals)
 * and perflog_docs.c (fingerprint, manifest, params and summary documents): the logger's
 * struct and the calls from the first to the second. */
#ifndef RUNLAB_PERFLOG_INTERNAL_H
#define RUNLAB_PERFLOG_INTERNAL_H

#include "core/text.h"
#include "runlab/perflog.h"
#include "runlab/time.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum {
    COL_NAME_MAX = 64,
    FULL_NAME_MAX = 2 * COL_NAME_MAX + 2,
    UNIT_MAX = 32,
    KIND_MAX = 64,
    EXT_MAX = 8,
    MAX_COLUMNS = 4096
};

struct column {
    char name[FULL_NAME_MAX]; /* full name, "<layer>.<name>" for layer columns */
    char unit[UNIT_MAX];
    char parent[FULL_NAME_MAX]; /* "" when none */
    int parent_idx;             /* declaration index of the parent timer, -1 when none */
    rl_perflog_type type;
    int layer; /* -1: the agent */
    int std_total; /* an added standard total column (enum std_total), else -1 */
};

/* The episode totals of rl_perflog_set_totals, logged per cycle under these names unless
 * the planner declared an agent column of that name itself (then that column is its own). */
enum std_total { STD_COST, STD_PATH_LENGTH, STD_PATH_DURATION, STD_VISITED, STD_COUNT };
static const char *const std_total_name[STD_COUNT] = {"TotalCost", "TotalPathLength",
                                                      "TotalPathDuration", "TotalVisitedNodes"};

struct layer {
    char name[COL_NAME_MAX + 1];
    char kind[KIND_MAX];
    double gain;
    bool gain_set; /* rl_perflog_set_gain was called */
    int gain_col;  /* its <layer>.RealAccumulatedGain total or gauge, else -1 (from start) */
};

enum param_kind { PARAM_F64, PARAM_I64, PARAM_STR };
struct param {
    char *key;
    enum param_kind kind;
    double f;
    int64_t i;
    char *s;
};

enum state { ST_NEW, ST_STARTED, ST_ENDED };

struct rl_perflog {
    char *root, *task, *dataset, *scene, *planner;
    char cost_unit[UNIT_MAX];
    bool log;
    double budget; /* INFINITY when unbounded */
    uint64_t seed;
    int num_maps;

    struct column *cols; /* declaration order; 0 and 1 are the built-in columns */
    size_t ncols, capcols;
    struct layer *layers;
    size_t nlayers, caplayers;
    struct param *params;
    size_t nparams, capparams;

    enum state state;
    bool recording; /* started, not ended, log_performance: the per-cycle fast path */
    char run_dir[PATH_MAX];
    char fingerprint[RL_FINGERPRINT_LEN];
    char start_utc[RL_TIME_ISO_LEN];
    int64_t start_mono;

    size_t *order;   /* CSV position -> declaration index */
    double *val;     /* counters, totals, gauges */
    int64_t *acc_ns; /* timers: accumulated this cycle */
    int64_t *t0;     /* timers: start time while running, else 0 */
    FILE *csv;
    char *row; /* row text buffer */
    size_t row_cap;

    uint64_t cycles;
    rl_episode_totals totals;
    bool totals_set; /* rl_perflog_set_totals was called */
    /* The column of each standard total (declaration index): an added one, or the
     * planner's own of that name (which perflog never writes); -1 before start. */
    int std_col[STD_COUNT];

    /* Intervals of a timer declared with a parent that did not lie inside a running
     * interval of the parent: the manifest's nesting (which the timing figures rely on
     * to add only non-overlapping timers) does not hold. Counted, the first named in the
     * summary. */
    uint64_t nesting_violations;
    int first_violation_col; /* declaration index; valid when nesting_violations > 0 */

    int next_map;
    int64_t last_map_cycle;

    /* Pre-rendered summaries for the signal handler: the handler reads sum[active]
     * while the loop renders into the other one and then flips `active`. */
    char *sum[2];
    size_t sum_len[2];
    size_t sum_cap;
    atomic_int active;
    char sum_path[PATH_MAX];
    char sum_sig_tmp[PATH_MAX];
};

/* perflog_docs.c. rl_pl_fmt_f64: the shortest form that reads back to the same double
 * (locale-independent), cut to `cap`. rl_pl_sorted_layers: the layers sorted by name
 * (caller frees; NULL when out of memory). The others return RL_OK or a negative status
 * with the error message set; rl_pl_render_summary writes the summary into `out` (room
 * for pl->sum_cap bytes, NUL-terminated) and returns its length. */
size_t rl_pl_fmt_f64(double v, char *buf, size_t cap);
const struct layer **rl_pl_sorted_layers(const rl_perflog *pl);
int rl_pl_schema_fingerprint(rl_perflog *pl);
int rl_pl_write_manifest(rl_perflog *pl);
int rl_pl_write_params(rl_perflog *pl);
size_t rl_pl_render_summary(const rl_perflog *pl, rl_end_reason reason, char *out);

#endif
