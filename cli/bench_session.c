/* One benchmark session of the CLI (`runlab bench SPEC`, `--resume`, `--shard`, `bench merge
 * --out`, the demo's): hands the engine the built-in planners of examples/, shows progress,
 * arms Ctrl+C's note, writes report.html and prints the summary and the directory. */
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

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
