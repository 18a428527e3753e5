/* Shared pieces of the runlab command: the exit codes, the error line format
 * ("runlab: <what>: <why>" on stderr) and the signature of a subcommand.
 * Each top-level command's entry is a cmd_* function in a cli/cmd_*.c file, listed in
 * cli/main.c's table (cmd_lab.c holds `experiment`, cmd_eval.c `list` and `evaluate`); a
 * command may hand subcommands and parts to files of its own (cmd_mcap_msg.c, plot_*.c,
 * demo_*.c, experiment_*.c; see docs/ARCHITECTURE.md). The shared helpers below live in
 * cli/cli_common.c, but cli_load_runs, which lives in cli/cli_runs.c. */
#ifndef RUNLAB_CLI_H
#define RUNLAB_CLI_H

#include "runlab/bench.h"
#include "runlab/eval.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum { RL_EXIT_OK = 0, RL_EXIT_FAILURE = 1, RL_EXIT_USAGE = 2 };

/* A subcommand: argv[0] is the subcommand's name; returns an RL_EXIT_* code. */
typedef int (*rl_cli_fn)(int argc, char **argv);

/* Prints "runlab: <what>: <why>" to stderr; returns RL_EXIT_FAILURE. */
int cli_fail(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "runlab: <what>: <why>" and "Try 'runlab <cmd> --help'." to stderr; returns
 * RL_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* How every command prints a run's numbers for people (final gain, total cost): the same
 * number shows the same digits in `explore`, `runs` and the demo. */
#define CLI_NUM_FMT "%.6g"
#define CLI_NUM_FMT_W(width) "%" #width ".6g"

/* Writes `s` with control characters escaped (\n, \t, \r, \xHH, and \\ for a
 * backslash), so a hostile path can neither split a line nor reach the terminal. */
void cli_print_escaped(FILE *f, const char *s);

/* The same for `len` bytes that may hold NUL (written as \x00): names read from a file. */
void cli_print_escaped_n(FILE *f, const void *data, size_t len);

/* True when argv holds -h or --help before any "--". */
bool cli_wants_help(int argc, char **argv);

/* rl_runs_load for the commands, with a progress bar on stderr when it is a terminal and
 * there are many runs (walk errors are left to the caller). Returns RL_EXIT_OK, or
 * cli_fail's code with the error printed. */
struct rl_run_set;
int cli_load_runs(const char *cmd, char **roots, size_t num_roots, struct rl_run_set **set);
/* Its parts, for a command that walks runs itself (`runlab runs`, rl_runs_each): each root
 * must be a directory (RL_EXIT_OK, or cli_fail's code with the error printed); and the
 * progress callback (rl_runs_progress_fn), which opens a bar on a terminal once it sees
 * many runs. Zero-initialise the progress; rl_progress_finish(bar) when done. */
int cli_check_roots(const char *cmd, char **roots, size_t num_roots);
struct rl_progress;
struct cli_load_progress {
    struct rl_progress *bar;
    bool tried;
};
void cli_on_run_loaded(size_t done, size_t total, const char *path, void *user);

/* Subcommands. */
int cmd_bench(int argc, char **argv);
/* One benchmark session of the CLI (cmd_bench.c): runs `spec` (or resumes resume_dir, or
 * merges merge_dirs into merge_out) with progress, writes report.html, prints the summary
 * and the directory; returns the exit code. */
typedef struct cli_bench_job {
    const rl_bench_spec *spec; /* NULL when merging */
    const char *out_root;      /* --out-dir */
    long jobs;                 /* -j (0: the spec's) */
    const char *resume_dir;    /* --resume */
    bool adaptive, quiet;      /* --adaptive; no progress bar and no failure exit (demo) */
    unsigned shard_index, shard_count;  /* --shard K/N */
    const char *const *merge_dirs;      /* bench merge DIR... --out OUT */
    size_t n_merge;
    const char *merge_out;
    bool force;
    char *report_out; /* receives report.html's path (may be NULL) */
    size_t report_cap;
} cli_bench_job;
int cli_bench_run(const cli_bench_job *job);
/* `bench merge DIR... --out DIR`, `bench status DIR` and `bench SPEC --slurm`
 * (cmd_bench_cluster.c). */
int cli_bench_merge_out(int argc, char **argv);
/* "K/N" with 1 <= K <= N <= 100000 into *k, *n: 0, or -1 when malformed. */
int cli_parse_shard(const char *text, unsigned *k, unsigned *n);
int cli_bench_status(int argc, char **argv);
int cli_bench_slurm(int argc, char **argv);
/* `evaluate --slurm RUN...` (cmd_eval_slurm.c). */
int cmd_evaluate_slurm(int argc, char **argv);

/* ---- Slurm job scripts (slurm_jobs.c) ---- */
/* The options of the commands that write Slurm jobs. */
typedef struct cli_slurm_opts {
    const char *partition, *time, *mem; /* #SBATCH values, NULL: Slurm's default */
    long cpus, array_limit;             /* 0: not given */
    bool dry_run;                       /* write the scripts, submit nothing */
} cli_slurm_opts;
/* Takes long option `name` (without "--") with `arg` into *so: 1 taken, 0 not one of them,
 * -1 a bad value (the usage error is printed). */
int cli_slurm_option(const char *cmd, const char *name, const char *arg, cli_slurm_opts *so);
/* Writes an sbatch script: "#!/bin/bash", `comment` (lines starting with '#'), the job name,
 * --array=1-array_n[%limit] with --cpus-per-task and --mem when array_n > 0, --output,
 * --partition and --time, then `body`. RL_OK or RL_EIO naming the file. */
int cli_slurm_script(const char *path, const char *comment, const char *job_name,
                     const cli_slurm_opts *so, unsigned array_n, const char *output,
                     const char *body);
/* `sbatch --parsable [--dependency=afterany:AFTER] SCRIPT`; the job id into `id`. */
int cli_slurm_submit(const char *script, const char *after, char *id, size_t cap);
/* Makes ROOT/NAME (a suffix when taken) with slurm/ and SUB/ in it; their absolute paths
 * into the three PATH_MAX buffers. RL_OK or the error (set). */
int cli_slurm_job_dir(const char *root, const char *name, const char *sub, char *abs_dir,
                      char *slurm_dir, char *sub_dir);
/* Submits the array script, then `then_script` after it (afterany), and writes
 * SLURM_DIR/jobs.json: {"array_job", then_key: the second id, count_key: count}. */
int cli_slurm_submit_pair(const char *slurm_dir, const char *array_script,
                          const char *then_script, const char *then_key, const char *count_key,
                          long count, char *array_id, char *then_id, size_t cap);
/* `text` single-quoted for a shell script. */
void cli_shell_quote(FILE *f, const char *text);
/* The benchmark demonstration of `runlab demo` (cmd_bench.c); writes under out_parent. */
int cli_bench_demo(const char *out_parent);
int cmd_demo(int argc, char **argv);
int cmd_mcap(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_runs(int argc, char **argv);
int cmd_explore(int argc, char **argv);
/* `runlab map ...` (cli/cmd_map.c). */
int cmd_map(int argc, char **argv);

/* The exploration demonstration for `runlab demo`: a short sweep of the example agent
 * written below `out_dir` (created if missing), then loading it back with the run
 * loader; prints a few lines to stdout. Returns RL_EXIT_OK or RL_EXIT_FAILURE (message
 * printed). */
int demo_explore(const char *out_dir);

/* The figure tools over run directories (cli/cmd_plot_runs.c): `runlab plot gain-cost`,
 * `normalized-gain` and `timing`. cmd_plot hands its argv over (argv[1] the kind) when
 * cli_plot_runs_handles(argv[1]) is true. */
bool cli_plot_runs_handles(const char *kind);
int cmd_plot_runs(int argc, char **argv);

int cmd_plot(int argc, char **argv);

/* Writes the plot gallery (every plot kind as PNG and SVG with .yaml records, one PDF,
 * and gallery.html embedding them) into out_dir, created if missing; prints one line per
 * file written. Returns an RL_EXIT_* code. */
int demo_plot(const char *out_dir);
int cmd_record(int argc, char **argv);
/* `runlab list` and `runlab evaluate` (cli/cmd_eval.c). */
int cmd_list(int argc, char **argv);
int cmd_evaluate(int argc, char **argv);
/* `runlab evaluate --summary` (cli/cmd_eval_summary.c); cmd_evaluate hands argv over. The
 * run filters `list` shares: CLI_FILTER_OPTIONS in a getopt_long table, and
 * cli_filter_option(c, filter, any) true (and the filter set) when getopt's c was one. */
int cmd_evaluate_summary(int argc, char **argv);
#define CLI_FILTER_OPTIONS                                                                  \
    {"state", required_argument, NULL, 0x100}, {"result", required_argument, NULL, 0x101},  \
    {"since", required_argument, NULL, 0x102}, {"until", required_argument, NULL, 0x103},   \
    {"vehicle", required_argument, NULL, 0x104}, {"planner", required_argument, NULL, 0x105}, \
    {"fault", required_argument, NULL, 0x106}
struct rl_eval_run_filter;
bool cli_filter_option(int c, struct rl_eval_run_filter *filter, bool *any);
/* The lab over DDS (cmd_lab.c): `runlab recorder` and `runlab experiment`. */
int cmd_recorder(int argc, char **argv);
int cmd_experiment(int argc, char **argv);
int cmd_sim(int argc, char **argv);
/* The repository's CPM lab map (data/maps/LabMapCommonRoad.xml) found beside the running
 * executable (installed: <exe>/../share/runlab/maps, else build tree: <exe>/../../data/maps) into
 * `out`; 1 found, 0 not (cmd_sim.c). */
int cli_default_map(char *out, size_t cap);
/* The lab's part of `runlab demo` (demo_lab.c): a simulated experiment recorded over DDS on
 * loopback into a run under out_dir, in DDS domain `domain` (< 0: 231 or 232, whichever no
 * other demo holds); prints its counters and topics, lists the runs and evaluates the new
 * one. Returns an RL_EXIT_* code. */
int demo_lab(const char *out_dir, int domain);

/* The recorder's part of `runlab demo` (demo_record.c): a short synthetic recording into a
 * new run directory under out_dir (an existing directory); prints a few lines. Returns 0
 * on success. */
int demo_record(const char *out_dir);

/* Reads a spec file (YAML or JSON, at most 1 MiB) for `cmd` into `*out` (json_object_put it;
 * NULL on error) and checks that its top is a mapping. RL_EXIT_OK, or cli_fail's code with
 * the error (file, line) printed. */
struct json_object;
int cli_read_spec(const char *cmd, const char *path, struct json_object **out);

/* Parses option `opt`'s value `text` for `cmd` as a number in lo..hi (an integer when
 * `integer`), or prints "<opt> <text>: expected a number lo..hi" (or "an integer") as a
 * usage error and returns its code. */
/* --figures F of `evaluate` and `evaluate --slurm`: "png,svg" (or "svg,png") or "svg"; a usage
 * error naming the choices otherwise (then returns RL_EXIT_USAGE, else RL_EXIT_OK). */
int cli_parse_figures(const char *cmd, const char *text, rl_eval_figures *out);

int cli_parse_number(const char *cmd, const char *opt, const char *text, double lo, double hi,
                     int integer, double *out);

/* Parses a DDS domain id (0..232, an integer) given to `cmd`'s --domain, as
 * cli_parse_number does. */
int cli_parse_domain(const char *cmd, const char *text, int *out);

/* Sleeps `ms` milliseconds (a signal may cut it short: callers poll). */
void cli_sleep_ms(int ms);

/* Sends SIGINT and SIGTERM to `handler`, keeping the former actions in `old` (two entries)
 * for cli_restore_signals. */
struct sigaction;
void cli_catch_signals(void (*handler)(int), struct sigaction *old);
void cli_restore_signals(const struct sigaction *old);

#endif
