/* rl_eval_run: one offline evaluation. Builds the effective configuration, loads the run,
 * runs the chosen metrics from the registry (several at once) and writes
 * RUN/evaluations/<UTC>[_N]/ (checks, summary, configuration, figures and the report,
 * eval_output.c), then hands the checks to the caller. */
#include "eval/eval_config.h"
#include "eval/eval_load.h"
#include "eval/eval_output.h"
#include "eval/eval_parallel.h"
#include "eval/eval_sink.h"
#include "eval/eval_verdict.h"

#include "core/text.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/record.h"
#include "runlab/time.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

/* The evaluation directory: the UTC time, then "_2", "_3", ... when it exists, as every
 * new directory runlab makes (rl_fs_mkdir_new: mkdir(2) decides, so two evaluations at
 * once never share one). */
int eval_dir_create(const char *run_dir, int64_t now_ns, char *out, size_t cap)
{
    char parent[PATH_MAX], stamp[32];
    /* RUN/evaluations as a link would put the evaluation outside the run: refused. */
    int rc = rl_fs_mkdir_in(run_dir, "evaluations", parent, sizeof parent);
    if (rc < 0)
        return rl_error_prefix(rc, "evaluation directory");
    if ((rc = rl_time_format_compact(now_ns, stamp, sizeof stamp)) < 0)
        return rc;
    return rl_fs_mkdir_new(parent, stamp, RL_MKDIR_ADD_SUFFIX, out, cap);
}

/* The chosen metrics run on several threads at once (eval_parallel): they only read the
 * run, the map (whose queries are thread-safe) and their settings, and each fills a sink
 * of its own. The sinks are then joined in registry order, so the checks and figures are
 * the same, in the same order, as one after the other; the first metric in that order
 * that failed is reported. The footprint metrics, the longest, are last in the registry,
 * and eval_parallel starts from the last. */
typedef struct metric_tasks {
    const eval_run *run;
    json_object *config;
    const size_t *chosen; /* registry indexes of the chosen metrics, in registry order */
    struct eval_sink *sinks; /* one per chosen metric */
} metric_tasks;

static int run_metric(void *arg, size_t k)
{
    metric_tasks *m = arg;
    const eval_metric *metric = &eval_metrics[m->chosen[k]];
    eval_ctx ctx = {.run = m->run, .metric = metric, .sink = &m->sinks[k]};
    json_object_object_get_ex(m->config, metric->name, &ctx.settings);
    int rc = metric->run(&ctx);
    return rc < 0 ? rl_error_prefix(rc, "metric %s", metric->name) : rc;
}

/* Moves every check and figure of `from` to the end of `to`. */
static int sink_append(struct eval_sink *to, struct eval_sink *from)
{
    int rc = rl_grow_array((void **)&to->checks, &to->cap_checks, to->nchecks + from->nchecks,
                           sizeof to->checks[0], "checks");
    if (rc == RL_OK)
        rc = rl_grow_array((void **)&to->figures, &to->cap_figures,
                           to->nfigures + from->nfigures, sizeof to->figures[0], "figures");
    if (rc < 0)
        return rc;
    if (from->nchecks)
        memcpy(to->checks + to->nchecks, from->checks, from->nchecks * sizeof to->checks[0]);
    if (from->nfigures)
        memcpy(to->figures + to->nfigures, from->figures,
               from->nfigures * sizeof to->figures[0]);
    to->nchecks += from->nchecks;
    to->nfigures += from->nfigures;
    free(from->checks);
    free(from->figures);
    memset(from, 0, sizeof *from);
    return RL_OK;
}

int eval_run_metrics(const eval_run *run, json_object *config, const bool *chosen,
                       struct eval_sink *sink)
{
    size_t n = 0, *order = calloc(eval_metric_total ? eval_metric_total : 1, sizeof *order);
    struct eval_sink *sinks = calloc(eval_metric_total ? eval_metric_total : 1, sizeof *sinks);
    int rc = RL_OK;
    if (!order || !sinks) {
        rc = rl_error_set(RL_ENOMEM, "evaluation: out of memory");
        goto out;
    }
    for (size_t i = 0; i < eval_metric_total; i++)
        if (chosen[i])
            order[n++] = i;
    metric_tasks m = {run, config, order, sinks};
    size_t failed_at;
    rc = eval_parallel(n, run_metric, &m, &failed_at);
    /* What the metrics before the first failing one found is kept, as when they ran one
       after the other. */
    for (size_t k = 0; k < failed_at && k < n; k++) {
        int arc = sink_append(sink, &sinks[k]);
        if (arc < 0) {
            rc = arc;
            break;
        }
    }
out:
    for (size_t k = 0; sinks && k < eval_metric_total; k++)
        eval_sink_clear(&sinks[k]);
    free(order);
    free(sinks);
    return rc;
}

static int fill_result(rl_eval_result *res, const char *dir, const eval_run *run,
                       const char *notes, const eval_verdict *v, struct eval_sink *sink)
{
    res->dir = strdup(dir);
    res->run_state = strdup(run->state);
    res->run_note = strdup(notes);
    res->interruption = strdup(v->interruption);
    res->shared_reasons = strdup(v->shared);
    if (!res->dir || !res->run_state || !res->run_note || !res->interruption ||
        !res->shared_reasons)
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory");
    res->verdict = v->verdict;
    res->passed = v->verdict == RL_EVAL_VERDICT_PASS;
    res->partial = v->partial;
    memcpy(res->counts, v->counts, sizeof res->counts);
    res->checks = sink->checks;
    res->nchecks = sink->nchecks;
    sink->checks = NULL;
    sink->nchecks = sink->cap_checks = 0;
    return RL_OK;
}

const char *rl_eval_phase_name(int phase)
{
    static const char *const names[RL_EVAL_PHASE_COUNT] = {"decode", "metrics", "figures",
                                                           "report"};
    return phase >= 0 && phase < RL_EVAL_PHASE_COUNT ? names[phase] : "?";
}

/* The time profile: each mark ends the current phase and starts the next. */
typedef struct phase_clock {
    int phase;
    double cpu0, wall0;
    double cpu[RL_EVAL_PHASE_COUNT], wall[RL_EVAL_PHASE_COUNT];
} phase_clock;

static double process_cpu_s(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void phase_mark(void *ud)
{
    phase_clock *pc = ud;
    double cpu = process_cpu_s(), wall = (double)rl_mono_ns() / 1e9;
    if (pc->phase >= 0 && pc->phase < RL_EVAL_PHASE_COUNT) {
        pc->cpu[pc->phase] += cpu - pc->cpu0;
        pc->wall[pc->phase] += wall - pc->wall0;
    }
    pc->phase++;
    pc->cpu0 = cpu;
    pc->wall0 = wall;
}

int rl_eval_run(const char *run_dir, const rl_eval_options *opts, rl_eval_result *res)
{
    return rl_eval_run_figures(run_dir, opts, RL_EVAL_FIGURES_PNG_SVG, res);
}

int rl_eval_run_figures(const char *run_dir, const rl_eval_options *opts,
                        rl_eval_figures figures, rl_eval_result *res)
{
    static const rl_eval_options none;
    if (!run_dir || !res)
        return rl_error_set(RL_EINVAL, "rl_eval_run: NULL argument");
    if (figures != RL_EVAL_FIGURES_PNG_SVG && figures != RL_EVAL_FIGURES_SVG)
        return rl_error_set(RL_EINVAL, "rl_eval_run_figures: figures %d (0: PNG and SVG, 1: SVG)",
                            (int)figures);
    if (!opts)
        opts = &none;
    memset(res, 0, sizeof *res);
    bool chosen[64];
    if (eval_metric_total > 64)
        return rl_error_set(RL_ERANGE, "evaluation: too many metrics registered");
    int rc = eval_config_select(opts->metrics, chosen);
    if (rc < 0)
        return rc;
    json_object *config = NULL;
    if ((rc = eval_config_build(opts->config_path, &config)) < 0)
        return rc;
    eval_loaded *loaded = NULL;
    struct eval_sink sink = {0};
    eval_verdict verdict = {0};
    char dir[PATH_MAX];
    phase_clock pc = {.phase = -1};
    phase_mark(&pc); /* decode starts */
    if ((rc = eval_load_with_map(run_dir, opts->map_path, &loaded)) < 0)
        goto out;
    phase_mark(&pc); /* metrics */
    const eval_run *run = eval_loaded_run(loaded);
    if ((rc = eval_run_metrics(run, config, chosen, &sink)) < 0)
        goto out;
    if ((rc = eval_verdict_make(run, chosen, sink.checks, sink.nchecks, &verdict)) < 0)
        goto out;
    phase_mark(&pc); /* figures and files */
    if ((rc = eval_dir_create(run_dir, rl_time_now_ns(), dir, sizeof dir)) < 0)
        goto out;
    eval_output out = {dir, run, eval_loaded_notes(loaded), config, chosen, &sink,
                       opts->argc, opts->argv, &verdict, phase_mark, &pc,
                       figures == RL_EVAL_FIGURES_PNG_SVG};
    if ((rc = eval_output_write(&out)) < 0) /* marks the report's start */
        goto out;
    phase_mark(&pc); /* done */
    rc = fill_result(res, dir, run, eval_loaded_notes(loaded), &verdict, &sink);
    memcpy(res->phase_cpu_s, pc.cpu, sizeof pc.cpu);
    memcpy(res->phase_wall_s, pc.wall, sizeof pc.wall);
out:
    if (rc < 0)
        rl_eval_result_free(res);
    eval_verdict_free(&verdict);
    eval_sink_clear(&sink);
    eval_loaded_free(loaded);
    json_object_put(config);
    return rc;
}

void rl_eval_result_free(rl_eval_result *res)
{
    if (!res)
        return;
    for (size_t i = 0; i < res->nchecks; i++)
        eval_check_clear(&res->checks[i]);
    free(res->checks);
    free(res->dir);
    free(res->run_state);
    free(res->run_note);
    free(res->interruption);
    free(res->shared_reasons);
    memset(res, 0, sizeof *res);
}

int rl_eval_resolve_run(const char *run, const char *home, char *out, size_t cap)
{
    struct stat st;
    if (!run || !*run)
        return rl_error_set(RL_EINVAL, "no run given");
    if (stat(run, &st) == 0 && S_ISDIR(st.st_mode)) {
        size_t n = strlen(run);
        while (n > 1 && run[n - 1] == '/') /* "RUN/" from shell completion */
            n--;
        if (n >= cap)
            return rl_error_set(RL_ERANGE, "%s: path too long", run);
        memcpy(out, run, n);
        out[n] = 0;
        return RL_OK;
    }
    char h[PATH_MAX], exp[PATH_MAX];
    int rc = rl_record_home(home, h, sizeof h);
    if (rc < 0)
        return rl_error_set(RL_ENOENT, "%s: not a directory, and %s", run, rl_error_last());
    if ((rc = rl_path_join(exp, sizeof exp, h, "experiments")) < 0)
        return rc;
    /* A directory name under experiments/, or a run id through the recorder's .run-ids/
       links, or a directory "<UTC>_<run id>". */
    if (rl_path_check_name(run, "run") == RL_OK) {
        char p[PATH_MAX];
        if (rl_path_join(p, sizeof p, exp, run) == RL_OK && stat(p, &st) == 0 &&
            S_ISDIR(st.st_mode))
            return (size_t)snprintf(out, cap, "%s", p) < cap ? RL_OK
                                                              : rl_error_set(RL_ERANGE, "path too long");
        rl_eval_listed_run *runs;
        size_t n;
        if (rl_eval_list_runs(home, &runs, &n) == RL_OK) {
            int found = 0;
            for (size_t i = 0; i < n && !found; i++)
                if (runs[i].run_id && strcmp(runs[i].run_id, run) == 0) {
                    found = (size_t)snprintf(out, cap, "%s", runs[i].dir) < cap;
                }
            rl_eval_list_free(runs, n);
            if (found)
                return RL_OK;
        }
    }
    return rl_error_set(RL_ENOENT, "%s: neither a run directory nor a run id under %s", run, exp);
}
