/* Internals shared by the benchmark engine's files: the benchmark object, the run
 * handle a planner sees in its child process, the shared-memory progress slot, and the
 * property-list helpers. Not part of the public API. */
#ifndef RUNLAB_ENGINES_BENCH_INTERNAL_H
#define RUNLAB_ENGINES_BENCH_INTERNAL_H

#include "runlab/bench.h"

#include <pthread.h>
#include <stdatomic.h>

/* Progress values of one run, written by the planner (child) and read by the harness
 * (parent) through a MAP_SHARED page; a sequence lock keeps reads consistent. */
typedef struct rl_bench_shm {
    atomic_flag wlock;          /* serialises writers (a planner's threads) */
    _Atomic uint64_t seq;       /* odd while a write is in progress */
    _Atomic uint64_t published; /* bit i: value i has been set at least once */
    _Atomic uint64_t bits[RL_BENCH_MAX_PROGRESS];
} rl_bench_shm;

struct rl_bench_run {
    int64_t start_ns; /* monotonic, set when solve starts */
    int64_t limit_ns;
    uint64_t seed;
    size_t n_progress;
    rl_bench_shm *shm;
    rl_bench_prop *props;
    size_t n_props, cap_props;
};

struct rl_bench {
    char *name;
    void *problem;
    char *setup_info;
    uint64_t seed;
    rl_bench_prop *params;
    size_t n_params;
    rl_bench_planner **planners;
    size_t n_planners;
    rl_bench_events events;
    rl_bench_experiment results;
    bool **done; /* done[p][r]: run r of planner p has a result */
    char **prop_names; /* distinct run property names so far: each is a database column */
    size_t n_prop_names, cap_prop_names;
    size_t *done_cap;
    double prior_duration; /* seconds spent by earlier sessions (journal "t" lines) */
    int64_t session_ns;    /* monotonic start of this rl_bench_execute */
    pthread_mutex_t lock;  /* guards progress */
    rl_bench_progress progress;
};

/* Property lists: set (replacing a value of the same name) and free. */
int rl_bench_props_set(rl_bench_prop **props, size_t *n, size_t *cap, const char *name,
                       rl_bench_type type, const char *value);
void rl_bench_props_free(rl_bench_prop *props, size_t n);
void rl_bench_run_data_free(rl_bench_run_data *r);
void rl_bench_experiment_clear(rl_bench_experiment *e);
void rl_bench_free_done(rl_bench *b);

/* A name that becomes a database column in OMPL's own parser (run and progress
 * properties, experiment parameters): rl_bench_check_name, and letters, digits, '_' and
 * spaces only, no leading digit, no SQL keyword. */
int rl_bench_check_column_name(const char *name, const char *what);
/* The documented mapping of a name an executable planner reports onto such a column
 * name: every other byte becomes '_', a leading digit gets '_' before it, an SQL keyword
 * gets '_' after it. `out` (cap >= 4) may be shorter than the name when cap is. */
void rl_bench_column_name_map(const char *name, char *out, size_t cap);

/* Checks a property value: no control characters, no ';'. */
int rl_bench_check_value(const char *value, const char *what);

/* Status words of the planner protocol ("exact") and back. */
const char *rl_bench_status_word(rl_bench_status s);
int rl_bench_status_from_word(const char *word, rl_bench_status *out);

/* Formats a double as results store it. */
void rl_bench_fmt_real(double v, char *buf, size_t cap);

uint64_t rl_bench_mix_seed(uint64_t seed, size_t planner, size_t run);

/* Distinct run property names one experiment may have: each becomes a column of OMPL's
 * runs table, and SQLite allows 2000 columns in all. A run that would pass it keeps its
 * status but loses its new properties, with a reason. */
enum { RL_BENCH_MAX_PROPERTY_NAMES = 1000 };

/* ---- results (bench_results.c) ---- */
/* Starts b->results afresh for a session of `req`: header, parameters, planners with
 * their settings and progress names, no runs. RL_OK or RL_ENOMEM. */
int rl_bench_results_init(rl_bench *b, const rl_bench_request *req);
/* Keeps the experiment within RL_BENCH_MAX_PROPERTY_NAMES: drops the run's properties
 * with names beyond it and says so in its reason. */
void rl_bench_limit_property_names(const rl_bench *b, rl_bench_run_data *r);
/* Takes run `ri` of planner `pi` into the results (moved from *r, which is left empty;
 * a run already there is kept and *r freed). RL_OK or RL_ENOMEM. */
int rl_bench_record_result(rl_bench *b, size_t pi, size_t ri, rl_bench_run_data *r);
/* Moves each planner's done runs to the front, in run order, dropping the cells of other
 * shards (a sharded request's results hold its runs only). */
void rl_bench_results_compact(rl_bench *b);
/* How many cells the request runs (its shard's, or every one). */
size_t rl_bench_shard_cells(const rl_bench *b, const rl_bench_request *req);

/* ---- the journal (bench_journal.c) ----
 * journal.tsv: each finished run appended and fsynced, read back by a resumed benchmark. */
typedef struct rl_bench_journal_run {
    size_t planner, run;
    rl_bench_run_data data; /* owned */
} rl_bench_journal_run;

typedef struct rl_bench_journal_runs {
    rl_bench_journal_run *runs;
    size_t n, cap;
    double prior_duration; /* seconds earlier sessions took (the last "t" line); 0: none */
} rl_bench_journal_runs;

/* Opens (creating when missing) the journal at `path` for benchmark `b`: the runs of an
 * existing journal go to `runs` (the caller frees them with rl_bench_journal_runs_free,
 * also on error), a line cut by a kill is dropped, and a new journal gets its header.
 * *fd_out: the descriptor to append to. RL_EINVAL when the journal is another
 * benchmark's, RL_EPARSE (file:line) for a malformed line, RL_EIO, RL_ENOMEM. */
int rl_bench_journal_open(const rl_bench *b, const char *path, rl_bench_journal_runs *runs,
                          int *fd_out);
void rl_bench_journal_runs_free(rl_bench_journal_runs *runs);
/* Appends run `ri` of planner `pi` (np progress properties) and a "t" line with the
 * benchmark's seconds so far (`elapsed`, earlier sessions included), then fsyncs. */
/* write(2) until all of `n` bytes are out (bench_journal.c); 0, or -1 with errno set. */
int rl_bench_write_all(int fd, const char *p, size_t n);

int rl_bench_journal_append(int fd, size_t pi, size_t ri, const rl_bench_run_data *r, size_t np,
                            double elapsed);

/* ---- the processes of each run (bench_tree.c) ----
 * One per rl_bench_execute: for each slot (a run in progress) the set of processes the run
 * started, however they detach (setsid, double fork, a shell's program), so limits apply
 * to all of them and none outlives the run or the harness. Cgroup mode: a v1 memory cgroup
 * per slot below this process's own (when it may create one; root on most systems).
 * /proc mode (the fallback, or forced with RUNLAB_BENCH_TREE=proc): the harness is child
 * subreaper and follows each run's tree through /proc/<pid>/task/<tid>/children. Either
 * way a keeper process kills what is left of every run when the harness dies. Not
 * thread-safe: the harness's loop owns it. */
enum { RL_BENCH_TREE_MAX_SLOTS = 256 };
typedef enum { RL_BENCH_TREE_CGROUP, RL_BENCH_TREE_PROC } rl_bench_tree_mode;
typedef struct rl_bench_trees rl_bench_trees;

/* Resident memory of one process in KiB, as /proc/<pid>/statm counts it; -1 when gone. */
long rl_bench_proc_rss_kb(pid_t pid);
/* Sets up n_slots slots, makes this process a child subreaper (restored by _free) and
 * starts the keeper. */
int rl_bench_trees_new(rl_bench_trees **out, size_t n_slots);
/* "cgroup v1 DIR", "cgroup v2 DIR" or "proc (why)": valid while tr lives. */
const char *rl_bench_trees_describe(const rl_bench_trees *tr);
/* In the run's first process, right after fork: joins the slot's cgroup (cgroup mode). */
void rl_bench_tree_enter(const rl_bench_trees *tr, size_t slot);
/* In the harness after fork: the slot's run starts with `leader`. */
void rl_bench_tree_begin(rl_bench_trees *tr, size_t slot, pid_t leader);
/* Summed resident memory of the run's processes now (KiB, statm's measure; -1 unknown),
 * also following processes started since the last call; the peak is kept. */
/* The harness's limits, apart from the clock (bench_harness.c), so tests can put each at
 * its boundary. When a run is killed for time: max_time + grace from its start of
 * solving (`begin_ns`; 0 before the run said so). Before that an executable's time runs
 * from fork, an in-process child's after a setup allowance; an executable's "start"
 * cannot move its deadline past the setup allowance from fork. */
int64_t rl_bench_deadline_ns(bool is_exec, int64_t fork_ns, int64_t begin_ns, double limit_s,
                             double grace_s);
/* Time is up at the deadline itself. */
bool rl_bench_time_up(int64_t now_ns, int64_t deadline_ns);
/* Over max_mem: resident memory above the run's baseline by more than max_mem MB (exactly
 * max_mem is allowed). */
bool rl_bench_memory_over(long rss_kb, long baseline_kb, double max_mem_mb);

long rl_bench_tree_rss_kb(rl_bench_trees *tr, size_t slot);
long rl_bench_tree_peak_kb(const rl_bench_trees *tr, size_t slot);
/* Starts the slot's peak afresh (an executable planner's start mark). */
void rl_bench_tree_reset_peak(rl_bench_trees *tr, size_t slot);
/* SIGKILLs every process of the slot's run. */
void rl_bench_tree_kill(rl_bench_trees *tr, size_t slot);
/* After the leader's exit was collected: kills and reaps whatever of the run is left. */
void rl_bench_tree_end(rl_bench_trees *tr, size_t slot);
/* Collects orphans that came to the harness as subreaper (never a slot's leader). */
void rl_bench_trees_reap(rl_bench_trees *tr);
/* Ends every slot, stops the keeper, removes the cgroups, restores the subreaper flag. */
void rl_bench_trees_free(rl_bench_trees *tr);

#endif
