/* `runlab bench`: maps its options onto the bench engine, which parses the YAML spec and
 * owns the benchmark directory (rl_bench_spec_load, rl_bench_run_spec), hands it the
 * built-in planners of examples/, shows progress, writes report.html and prints the
 * summary; `bench import` turns OMPL logs into a database; `bench merge` joins benchmark
 * directories into one; `bench report` rewrites a directory's report.html. */
#include "cli.h"

#include "runlab/adaptive.h"
#include "runlab/bench.h"
#include "runlab/bench_report.h"
#include "runlab/error.h"
#include "runlab/progress.h"
#include "runlab/stats.h"

#ifdef RUNLAB_HAVE_EXAMPLES
#include "rlx.h"
#endif

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_LOGS = 4096 };

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: runlab bench SPEC.yaml [--out-dir ROOT] [-j N] [--adaptive] [--shard K/N]\n"
            "       runlab bench SPEC.yaml --slurm [--shards N] [--partition P] [--time T]\n"
            "                  [--cpus-per-task C] [--mem M] [--array-limit L] [--dry-run]\n"
            "       runlab bench --resume DIR\n"
            "       runlab bench merge SHARD_DIR... --out DIR [--force]\n"
            "       runlab bench status DIR\n"
            "       runlab bench import LOG... --db OUT.db\n"
            "       runlab bench merge DIR... --db OUT.db\n"
            "       runlab bench report DIR\n\n"
            "Benchmarks motion planners as OMPL's Benchmark does, each run in its own process:\n"
            "a run that crashes, aborts, hangs past max_time or exceeds max_mem is recorded with\n"
            "its own status and costs that run only. Results go to a new directory under ROOT\n"
            "(OMPL log, results.db in OMPL's schema for Planner Arena, results.csv, console/,\n"
            "manifest.json, report.html with figures/); its path is the last line of standard\n"
            "output. `bench report DIR` rewrites DIR/report.html from DIR/results.json.\n\n"
            "Options:\n"
            "  --out-dir ROOT where the benchmark directory is created (default: the spec's\n"
            "                 'out', else ./bench-results); --out is the old spelling\n"
            "  -j, --jobs N   runs in parallel (default 1, or the spec's 'jobs'). Parallel runs\n"
            "                 share CPU cores, caches and memory bandwidth, so their times and\n"
            "                 memory are perturbed and not comparable with serial runs; use it\n"
            "                 for smoke tests and sweeps, not for published timings.\n"
            "  --resume DIR   finish an interrupted benchmark: runs in DIR's journal are kept,\n"
            "                 the missing ones run, the outputs are rewritten\n"
            "  --shard K/N    run only the K-th of N slices of the (planner, run) cells, into\n"
            "                 ROOT/<experiment>_shard-K-of-N (run again, it resumes); each\n"
            "                 cell keeps its seed; `bench merge SHARDS... --out DIR` joins\n"
            "                 the N shards into one benchmark (docs/bench.md, on a cluster)\n"
            "  --slurm        write and submit a Slurm array job of N shards and a merge job\n"
            "                 (`runlab bench --slurm --help`); `bench status DIR` follows it\n"
            "  --adaptive     runs: auto whatever the spec's runs say: run every planner\n"
            "                 round-robin and stop when the spec's goal (ranking, ci, success)\n"
            "                 is reached at its confidence, or at max_runs; the manifest and\n"
            "                 report say why it stopped (docs/bench.md, adaptive benchmarks)\n"
            "  --db OUT.db    (import, merge) the database to create or extend\n"
            "  -h, --help     this help\n\n"
            "Spec keys: experiment, problem, planners (name + planner or command, settings,\n"
            "progress), seed, max_time, max_mem, runs (0 = until max_time of summed run time,\n"
            "auto = adaptive), time_between_updates, simplify, save_console_output, jobs, grace,\n"
            "parameters, out; with runs: auto also confidence (0.95), min_runs (10), max_runs\n"
            "(200), goal (ranking|ci|success), attribute (time), relative_width (0.1), width\n"
            "(0.05).\n"
            "See docs/bench.md.\n");
}

/* ---- running -------------------------------------------------------------------------- */

/* Ctrl+C: the harness dies with its runs (they cannot outlive it), and the user is told
 * where the partial benchmark is and how to finish it. The note is made beforehand: a
 * signal handler may only write(2). */
static char interrupt_note[2 * PATH_MAX + 160];
static size_t interrupt_note_len;

static void on_interrupt(int sig)
{
    if (write(STDERR_FILENO, interrupt_note, interrupt_note_len) < 0) {
        /* nothing more to do in a handler */
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void arm_interrupt_note(const char *dir)
{
    int n = snprintf(interrupt_note, sizeof interrupt_note,
                     "\nrunlab: bench: interrupted; the finished runs are kept in %s\n"
                     "Resume with: runlab bench --resume '%s'\n",
                     dir, dir);
    interrupt_note_len = n > 0 && (size_t)n < sizeof interrupt_note ? (size_t)n : 0;
    struct sigaction sa = {0};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static void disarm_interrupt_note(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}

typedef struct ui {
    rl_progress *bar;
    bool quiet;  /* no progress bar (the demo) */
    bool no_bar; /* a merge: nothing runs, so no bar */
} ui;

static void on_run_done(void *ud, const char *planner, size_t run_index, rl_bench_status status,
                        size_t done, size_t total)
{
    (void)total;
    ui *u = ud;
    if (!u->bar)
        return;
    char note[192];
    snprintf(note, sizeof note, "%s run %zu: %s", planner, run_index + 1,
             rl_bench_status_name(status));
    rl_progress_update(u->bar, done, note);
}

static double run_prop(const rl_bench_run_data *r, const char *name)
{
    for (size_t i = 0; i < r->n_props; i++)
        if (strcmp(r->props[i].name, name) == 0)
            return strtod(r->props[i].value, NULL);
    return NAN;
}

/* Times of a planner's runs (all of them, as OMPL's tools count them); returns how many. */
static size_t planner_times(const rl_bench_planner_data *pd, double *out)
{
    size_t n = 0;
    for (size_t r = 0; r < pd->n_runs; r++) {
        double t = run_prop(&pd->runs[r], "time");
        if (isfinite(t))
            out[n++] = t;
    }
    return n;
}

/* Per planner: solved %, median time with its 95% CI, min..max, peak memory; then, as
 * hyperfine does, how much faster the best planner is than each other one, with the
 * rank-sum test's p. The best is the lowest median time among planners that solved. */
static void print_comparison(const rl_bench_experiment *e)
{
    size_t best = SIZE_MAX;
    double best_median = INFINITY;
    printf("\n%-20s %6s  %-34s %-26s %s\n", "planner", "solved", "median time [95% CI]",
           "min ... max", "peak memory");
    for (size_t p = 0; p < e->n_planners; p++) {
        const rl_bench_planner_data *pd = &e->planners[p];
        double *t = malloc((pd->n_runs ? pd->n_runs : 1) * sizeof *t);
        if (!t)
            return;
        size_t n = planner_times(pd, t), solved = 0;
        double mem = 0;
        for (size_t r = 0; r < pd->n_runs; r++) {
            solved += pd->runs[r].status == RL_RUN_EXACT;
            double m = run_prop(&pd->runs[r], "memory");
            if (isfinite(m) && m > mem)
                mem = m;
        }
        rl_median_ci ci;
        char med[64] = "-", range[64] = "-";
        if (n && rl_stats_median_ci(t, n, 0.95, &ci) == RL_OK) {
            if (ci.available)
                snprintf(med, sizeof med, "%.4g s [%.4g, %.4g]", ci.median, ci.lo, ci.hi);
            else
                snprintf(med, sizeof med, "%.4g s [n/a: n < 6]", ci.median);
            double lo = t[0], hi = t[0];
            for (size_t i = 1; i < n; i++)
                lo = fmin(lo, t[i]), hi = fmax(hi, t[i]);
            snprintf(range, sizeof range, "%.4g ... %.4g s", lo, hi);
            if (solved && ci.median < best_median)
                best_median = ci.median, best = p;
        }
        printf("%-20s %5.0f%%  %-34s %-26s %.3g MB\n", pd->name,
               pd->n_runs ? 100.0 * (double)solved / (double)pd->n_runs : 0.0, med, range, mem);
        free(t);
    }
    if (best == SIZE_MAX || e->n_planners < 2)
        return;
    const rl_bench_planner_data *bp = &e->planners[best];
    double *bt = malloc((bp->n_runs ? bp->n_runs : 1) * sizeof *bt);
    if (!bt)
        return;
    size_t bn = planner_times(bp, bt);
    printf("\n%s ran fastest (median time); it is\n", bp->name);
    for (size_t p = 0; p < e->n_planners; p++) {
        const rl_bench_planner_data *pd = &e->planners[p];
        double *t = p == best ? NULL : malloc((pd->n_runs ? pd->n_runs : 1) * sizeof *t);
        if (!t)
            continue;
        size_t n = planner_times(pd, t), solved = 0;
        for (size_t r = 0; r < pd->n_runs; r++)
            solved += pd->runs[r].status == RL_RUN_EXACT;
        double med;
        rl_ranksum rs;
        if (!solved) /* a planner that fails fast is not faster: not compared */
            printf("  (%s solved no run: not compared)\n", pd->name);
        else if (n && rl_stats_median(t, n, &med) == RL_OK && best_median > 0 &&
            rl_stats_ranksum(bt, bn, t, n, &rs) == RL_OK)
            printf("  %8.2f x faster than %s (rank-sum p = %.2g%s)\n", med / best_median,
                   pd->name, rs.p, rs.p < 0.05 ? "" : ", not significant at 5%");
        free(t);
    }
    free(bt);
}

#ifdef RUNLAB_HAVE_EXAMPLES
/* The example problems and planners (examples/rlx.h), which `planner:` and `problem:`
 * name, handed to the engine. */
static void *builtin_problem_new(const char *name)
{
    return rlx_problem_new(name);
}
static void builtin_problem_free(void *p)
{
    rlx_problem_free(p);
}
static const char *builtin_problem_describe(const void *p)
{
    return rlx_problem_describe(p);
}
static int builtin_problem_dimension(const void *p)
{
    return rlx_problem_dimension(p);
}
static char *builtin_problem_json(const void *p)
{
    return rlx_problem_json(p);
}
static const rl_bench_builtins BUILTINS = {builtin_problem_new,      builtin_problem_free,
                                           builtin_problem_describe, builtin_problem_dimension,
                                           builtin_problem_json,     rlx_planner_new};
#define BUILTINS_OR_NULL (&BUILTINS)
#else
#define BUILTINS_OR_NULL NULL
#endif

/* The phases of the engine's run: Ctrl+C's note once the directory exists, the progress
 * bar while the runs go. */
static void on_phase(void *ud, rl_bench_phase phase, const char *dir, size_t total_runs)
{
    ui *u = ud;
    if (phase == RL_BENCH_PHASE_DIR_READY) {
        /* armed before the lock, so whoever sees DIR/.lock appear can interrupt and get
           the note */
        arm_interrupt_note(dir);
    } else if (phase == RL_BENCH_PHASE_RUNS_START) {
        if (!u->quiet && !u->no_bar &&
            rl_progress_new(&u->bar, stderr, "runs", total_runs, -1) < 0)
            u->bar = NULL;
    } else {
        rl_progress_finish(u->bar);
        u->bar = NULL;
        disarm_interrupt_note();
    }
}

int cli_bench_run(const cli_bench_job *job)
{
    const rl_bench_spec *spec = job->spec;
    const char *out_opt = job->out_root, *resume_dir = job->resume_dir;
    long jobs_opt = job->jobs;
    bool adaptive = job->adaptive, quiet = job->quiet;
    char *report_out = job->report_out;
    size_t report_cap = job->report_cap;
    ui u = {.quiet = quiet, .no_bar = job->merge_dirs != NULL};
    /* runs: auto (or --adaptive): the stopping rule of runlab/adaptive.h */
    rl_bench_adaptive_keys akeys;
    adaptive |= spec && rl_bench_spec_adaptive(spec, &akeys);
    rl_adapt_rule *rule = NULL;
    if (adaptive && rl_adapt_rule_new(&akeys, &rule) < 0)
        return cli_fail("bench", "%s", rl_error_last());
    rl_bench_run_opts opts = {.out_root = out_opt,
                              .jobs = jobs_opt > 0 ? (unsigned)jobs_opt : 0,
                              .resume_dir = resume_dir,
                              .finished_marker = "report.html",
                              .builtins = BUILTINS_OR_NULL,
                              .events = {.on_run_done = on_run_done, .ud = &u},
                              .on_phase = on_phase,
                              .ud = &u,
                              .adaptive = adaptive,
                              .stop_rule = rule ? rl_adapt_rule_get(rule) : NULL,
                              .shard_index = job->shard_index,
                              .shard_count = job->shard_count};
    rl_bench_session *ss = NULL;
    int rc = job->merge_dirs ? rl_bench_merge(job->merge_dirs, job->n_merge, job->merge_out,
                                              job->force, &opts, &ss)
                             : rl_bench_run_spec(spec, &opts, &ss);
    rl_progress_finish(u.bar);
    disarm_interrupt_note();
    if (rc == RL_OK && rl_bench_session_finished_already(ss)) {
        const char *dir = rl_bench_session_dir(ss);
        printf("%s: finished already (every run and output is written); nothing to "
               "resume\n%s\n",
               dir, dir);
        rl_bench_session_free(ss);
        rl_adapt_rule_free(rule);
        return RL_EXIT_OK;
    }
    const char *dir = ss ? rl_bench_session_dir(ss) : NULL;
    /* The report reads results.json back: it sits in the analysis layer, above the
     * engine, and `bench report DIR` takes the same path. */
    char report[PATH_MAX];
    if (rc == RL_OK)
        rc = rl_bench_report_write(dir, NULL, report, sizeof report);
    if (rc == RL_OK && report_out)
        snprintf(report_out, report_cap, "%s", report);
    const rl_bench_experiment *e = rc == RL_OK ? rl_bench_session_results(ss) : NULL;
    if (e) {
        for (size_t p = 0; p < e->n_planners; p++) {
            size_t by[RL_RUN_STATUS_COUNT] = {0};
            for (size_t r = 0; r < e->planners[p].n_runs; r++)
                by[e->planners[p].runs[r].status]++;
            printf("%-20s %3zu runs:", e->planners[p].name, e->planners[p].n_runs);
            const char *sep = " ";
            for (int st = 0; st < RL_RUN_STATUS_COUNT; st++)
                if (by[st]) {
                    printf("%s%zu %s", sep, by[st], rl_bench_status_name((rl_bench_status)st));
                    sep = ", ";
                }
            printf("\n");
        }
        print_comparison(e);
        if (rule)
            printf("Stopped: %s\n", rl_adapt_rule_stopped(rule));
        printf("%s\n", dir);
    }
    /* A planner none of whose runs solved is a failed benchmark for scripts and CI,
       with the first reason of each such planner on stderr. */
    bool a_planner_failed = false;
    for (size_t p = 0; e && p < e->n_planners; p++) {
        const rl_bench_planner_data *pd = &e->planners[p];
        bool solved = false;
        const char *first = NULL;
        for (size_t r = 0; r < pd->n_runs; r++) {
            rl_bench_status st = pd->runs[r].status;
            solved |= st == RL_RUN_EXACT || st == RL_RUN_APPROXIMATE;
            if (!first && pd->runs[r].reason)
                first = pd->runs[r].reason;
        }
        if (pd->n_runs && !solved && !quiet) {
            a_planner_failed = true;
            fprintf(stderr, "runlab: bench: planner '%s' solved none of its %zu runs%s%s\n",
                    pd->name, pd->n_runs, first ? "; first reason: " : "", first ? first : "");
        }
    }
    if (rc < 0) {
        int r = cli_fail("bench", "%s", rl_error_last());
        rl_bench_session_free(ss);
        rl_adapt_rule_free(rule);
        return r;
    }
    rl_bench_session_free(ss);
    rl_adapt_rule_free(rule);
    /* the demo's crashing planner fails on purpose: only a real benchmark fails for it */
    return a_planner_failed && !quiet ? RL_EXIT_FAILURE : RL_EXIT_OK;
}

/* ---- import and merge ------------------------------------------------------------------ */

static int cmd_import(int argc, char **argv, bool merge)
{
    const char *db = NULL, *cmd = merge ? "bench merge" : "bench import";
    const char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
    size_t n = 0;
    if (!inputs)
        return cli_fail(cmd, "out of memory");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--db") == 0) {
            if (i + 1 >= argc) {
                free(inputs);
                return cli_usage_error(cmd, "--db needs a file name");
            }
            db = argv[++i];
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            free(inputs);
            if (merge)
                printf("Usage: runlab bench merge DIR... --db OUT.db\n\n"
                       "Adds the OMPL log of each benchmark directory to OUT.db (created if\n"
                       "missing) as OMPL's ompl_benchmark_statistics.py would, views included.\n"
                       "An experiment OUT.db already holds (same name, host, date and seed) is\n"
                       "skipped with a warning, so merging twice never doubles a run.\n"
                       "Prints OUT.db's path. Exit codes: 0 ok, 1 unreadable input, 2 usage.\n");
            else
                printf("Usage: runlab bench import LOG... --db OUT.db\n\n"
                       "Reads OMPL benchmark logs (OMPL's own or runlab's) into OUT.db (created\n"
                       "if missing) in OMPL's schema, as ompl_benchmark_statistics.py does;\n"
                       "Planner Arena opens the result. An experiment OUT.db already holds is\n"
                       "skipped with a warning. Errors name the log's file and line.\n"
                       "Prints OUT.db's path. Exit codes: 0 ok, 1 unreadable input, 2 usage.\n");
            return RL_EXIT_OK;
        } else {
            inputs[n++] = argv[i];
        }
    }
    if (!db || !n) {
        free(inputs);
        return cli_usage_error(cmd, merge ? "need DIR... and --db OUT.db"
                                          : "need LOG... and --db OUT.db");
    }
    char **logs = calloc(MAX_LOGS, sizeof *logs);
    size_t nl = 0;
    for (size_t i = 0; i < n && logs; i++) {
        if (!merge) {
            logs[nl++] = strdup(inputs[i]);
            continue;
        }
        /* a benchmark directory: its OMPL log(s), in name order */
        struct dirent **ents;
        int k = scandir(inputs[i], &ents, NULL, alphasort);
        if (k < 0) {
            int rc = cli_fail(cmd, "%s: %s", inputs[i], strerror(errno));
            for (size_t j = 0; j < nl; j++)
                free(logs[j]);
            free(logs);
            free(inputs);
            return rc;
        }
        size_t before = nl;
        for (int j = 0; j < k; j++) {
            size_t l = strlen(ents[j]->d_name);
            if (l > 4 && strcmp(ents[j]->d_name + l - 4, ".log") == 0 && nl < MAX_LOGS) {
                char p[PATH_MAX];
                snprintf(p, sizeof p, "%s/%s", inputs[i], ents[j]->d_name);
                logs[nl++] = strdup(p);
            }
            free(ents[j]);
        }
        free(ents);
        if (nl == before) {
            int rc = cli_fail(cmd, "%s: no benchmark log (*.log) in this directory", inputs[i]);
            for (size_t j = 0; j < nl; j++)
                free(logs[j]);
            free(logs);
            free(inputs);
            return rc;
        }
    }
    int rc = logs ? rl_bench_import_logs((const char *const *)logs, nl, db)
                  : rl_error_set(RL_ENOMEM, "out of memory");
    for (size_t j = 0; logs && j < nl; j++)
        free(logs[j]);
    free(logs);
    free(inputs);
    if (rc < 0)
        return cli_fail(cmd, "%s", rl_error_last());
    printf("%s\n", db);
    return RL_EXIT_OK;
}

/* `bench report DIR`: (re)writes DIR/report.html and DIR/figures/ from DIR/results.json. */
static int cmd_report(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("Usage: runlab bench report DIR\n\n"
               "Rewrites DIR/report.html and DIR/figures/ from DIR/results.json alone, so it\n"
               "also works on a copied or merged-in benchmark directory. Prints the report's\n"
               "path. Exit codes: 0 ok, 1 DIR has no readable results.json, 2 usage.\n");
        return RL_EXIT_OK;
    }
    if (argc != 2)
        return cli_usage_error("bench report", "expected one benchmark directory");
    char report[PATH_MAX];
    if (rl_bench_report_write(argv[1], NULL, report, sizeof report) < 0)
        return cli_fail("bench report", "%s", rl_error_last());
    printf("%s\n", report);
    return RL_EXIT_OK;
}

/* The benchmark part of `runlab demo`: four built-in planners and one that crashes on
 * the maze, written under `out_parent`. */
int cli_bench_demo(const char *out_parent)
{
    static const char DEMO_SPEC[] = "experiment: demo maze\n"
                                    "problem: maze2d\n"
                                    "seed: 1\n"
                                    "max_time: 0.3\n"
                                    "max_mem: 512\n"
                                    "runs: 8\n"
                                    "parameters: {walls: 5}\n"
                                    "planners:\n"
                                    "  - {name: RRT, planner: rrt}\n"
                                    "  - {name: RRTConnect, planner: rrtconnect}\n"
                                    "  - {name: RRTstar, planner: rrtstar}\n"
                                    "  - {name: PRM, planner: prm}\n"
                                    "  - {name: crashing planner, planner: crash}\n";
    rl_bench_spec *spec = NULL;
    if (rl_bench_spec_parse(DEMO_SPEC, sizeof DEMO_SPEC - 1, "<demo spec>", NULL, &spec) < 0)
        return cli_fail("demo", "%s", rl_error_last());
    printf("Benchmark (runlab bench): 5 planners x 8 runs on a 2-D maze, each run in its own "
           "process\n");
    fflush(stdout);
    char report[PATH_MAX] = "";
    cli_bench_job job = {.spec = spec, .out_root = out_parent, .jobs = 1, .quiet = true,
                         .report_out = report, .report_cap = sizeof report};
    int rc = cli_bench_run(&job);
    rl_bench_spec_free(spec);
    if (rc == RL_EXIT_OK)
        printf("Benchmark report: %s\n", report);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "import") == 0)
        return cmd_import(argc - 1, argv + 1, false);
    if (argc >= 2 && strcmp(argv[1], "merge") == 0) {
        /* --out DIR: shards joined into one benchmark; --db: OMPL logs into a database */
        for (int i = 2; i < argc; i++)
            if (strcmp(argv[i], "--out") == 0 || strncmp(argv[i], "--out=", 6) == 0 ||
                strcmp(argv[i], "--force") == 0)
                return cli_bench_merge_out(argc - 1, argv + 1);
        return cmd_import(argc - 1, argv + 1, true);
    }
    if (argc >= 2 && strcmp(argv[1], "status") == 0)
        return cli_bench_status(argc - 1, argv + 1);
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--slurm") == 0)
            return cli_bench_slurm(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "report") == 0)
        return cmd_report(argc - 1, argv + 1);
    static const struct option opts[] = {{"out-dir", required_argument, NULL, 'o'},
                                         {"out", required_argument, NULL, 'o'}, /* old name */
                                         {"jobs", required_argument, NULL, 'j'},
                                         {"resume", required_argument, NULL, 'r'},
                                         {"adaptive", no_argument, NULL, 'a'},
                                         {"shard", required_argument, NULL, 's'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *out = NULL, *resume = NULL;
    bool adaptive = false;
    long jobs = 0;
    unsigned shard_k = 0, shard_n = 0;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:j:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'j': {
            char *end;
            jobs = strtol(optarg, &end, 10);
            if (*end || jobs < 1 || jobs > 256)
                return cli_usage_error("bench", "-j %s: expected 1..256", optarg);
            break;
        }
        case 'r': resume = optarg; break;
        case 'a': adaptive = true; break;
        case 's':
            if (cli_parse_shard(optarg, &shard_k, &shard_n) < 0)
                return cli_usage_error("bench", "--shard %s: expected K/N with 1 <= K <= N <= "
                                       "100000 (e.g. --shard 3/8)", optarg);
            break;
        case 'h': usage(stdout); return RL_EXIT_OK;
        default: return cli_usage_error("bench", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (resume && shard_n)
        return cli_usage_error("bench", "--resume DIR keeps the shard DIR was made for; give "
                               "no --shard");
    if (resume) {
        if (optind != argc)
            return cli_usage_error("bench", "--resume DIR takes no spec (DIR has spec.json)");
        rl_bench_spec *spec = NULL;
        if (rl_bench_spec_load_dir(resume, &spec) < 0)
            return cli_fail("bench", "--resume %s: %s", resume, rl_error_last());
        cli_bench_job job = {.spec = spec, .jobs = jobs, .resume_dir = resume};
        int r = cli_bench_run(&job);
        rl_bench_spec_free(spec);
        return r;
    }
    if (optind + 1 != argc)
        return cli_usage_error("bench", "expected one SPEC.yaml (or import, merge, --resume)");
    rl_bench_spec *spec = NULL;
    if (rl_bench_spec_load(argv[optind], &spec) < 0)
        return cli_fail("bench", "%s", rl_error_last());
    cli_bench_job job = {.spec = spec, .out_root = out, .jobs = jobs, .adaptive = adaptive,
                         .shard_index = shard_k, .shard_count = shard_n};
    int r = cli_bench_run(&job);
    rl_bench_spec_free(spec);
    return r;
}
