/* `runlab list [HOME]`: the recorded runs under HOME/experiments, newest first, with state,
 * vehicles, duration, result, planner, map hash and evaluations (--json for a JSON array).
 * `runlab evaluate RUN`: one offline evaluation of a run (runlab/eval.h); exit 0 PASS, 1 FAIL,
 * 3 INCOMPLETE (nothing failed, some checks INSUFFICIENT or UNAVAILABLE), 2 when it cannot run. */
#include "cli.h"
#include "eval_checks_text.h"

#include "runlab/error.h"
#include "runlab/eval.h"
#include "runlab/json.h"
#include "runlab/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- runlab list ----------------------------------------------------------------- */

static void list_usage(FILE *out)
{
    fprintf(out,
            "Usage: runlab list [--json] [HOME]\n\n"
            "Lists the recorded runs under HOME/experiments (HOME: $RUNLAB_HOME, else ~/runlab),\n"
            "newest first, in these columns: RUN (directory), STATE, VEHICLES, DURATION\n"
            "(START..STOP), PLANNER, MAP (hash, first 12 hex digits), EVALUATIONS (how many,\n"
            "and the result (PASS, FAIL, INCOMPLETE) of the latest full one; \"+partial\" when a\n"
            "newer evaluation ran only some metrics (--metrics), which does not replace that\n"
            "result), SCENARIO (the simulator's vehicle count, seed and faults, from the\n"
            "manifest's scenario) and RESULT (the reason a run did not complete, with\n"
            "\"interrupted after 2.5 of 20 s\" for a run stopped early).\n\n"
            "  --json   one JSON array, an object per run\n\n"
            "Exit codes: 0 listed, 1 failure, 2 usage (also: a HOME given that is not a\n"
            "directory).\n");
}

static void list_text(const rl_eval_listed_run *runs, size_t n)
{
    int width = 3; /* the longest directory name, so columns line up */
    int swidth = 8; /* the longest scenario ("SCENARIO") */
    for (size_t i = 0; i < n; i++) {
        if ((int)strlen(runs[i].name) > width && strlen(runs[i].name) < 200)
            width = (int)strlen(runs[i].name);
        if (runs[i].scenario && (int)strlen(runs[i].scenario) > swidth &&
            strlen(runs[i].scenario) < 120)
            swidth = (int)strlen(runs[i].scenario);
    }
    printf("%-*s %-11s %-9s %9s %-12s %-12s %-17s %-*s %s\n", width, "RUN", "STATE", "VEHICLES",
           "DURATION", "PLANNER", "MAP", "EVALUATIONS", swidth, "SCENARIO", "RESULT");
    /* EVALUATIONS holds "12 (FAIL +partial)" and "12 (INCOMPLETE)"; longer cells push on. */
    for (size_t i = 0; i < n; i++) {
        const rl_eval_listed_run *r = &runs[i];
        char veh[32] = "-", dur[32] = "-", map[16] = "-", ev[48] = "-";
        if (r->nvehicles) {
            int k = 0;
            for (size_t v = 0; v < r->nvehicles && k < (int)sizeof veh - 8; v++)
                k += snprintf(veh + k, sizeof veh - (size_t)k, "%s%d", v ? "," : "", r->vehicles[v]);
        }
        if (isfinite(r->duration_s))
            snprintf(dur, sizeof dur, "%.1f s", r->duration_s);
        if (r->map_sha256)
            snprintf(map, sizeof map, "%.12s", r->map_sha256);
        if (r->nevaluations) {
            const rl_eval_listed_evaluation *full = rl_eval_listed_full(r);
            snprintf(ev, sizeof ev, "%zu (%s%s)", r->nevaluations,
                     full ? rl_eval_verdict_name((rl_eval_verdict)full->verdict) : "no full",
                     rl_eval_listed_newer_partial(r) ? " +partial" : "");
        }
        cli_print_escaped(stdout, r->name);
        int pad = width - (int)strlen(r->name);
        printf("%*s %-11s %-9s %9s ", pad > 0 ? pad : 0, "", r->state, veh, dur);
        const char *planner = r->planner ? r->planner : "-";
        cli_print_escaped(stdout, planner);
        pad = 12 - (int)strlen(planner);
        printf("%*s %-12s %-17s ", pad > 0 ? pad : 0, "", map, ev);
        const char *scenario = r->scenario ? r->scenario : "-";
        cli_print_escaped(stdout, scenario);
        pad = swidth - (int)strlen(scenario);
        printf("%*s ", pad > 0 ? pad : 0, "");
        cli_print_escaped(stdout, r->result ? r->result : "-");
        if (r->interruption)
            printf("; %s", r->interruption);
        printf("\n");
    }
}

static int list_json(const rl_eval_listed_run *runs, size_t n)
{
    rl_json_writer *j;
    int rc = rl_json_writer_new_file(&j, stdout, RL_JSON_PRETTY);
    if (rc < 0)
        return rc;
    rl_json_begin_array(j);
    for (size_t i = 0; i < n; i++) {
        const rl_eval_listed_run *r = &runs[i];
        rl_json_begin_object(j);
        rl_json_key(j, "directory"), rl_json_string(j, r->name);
        rl_json_key(j, "path"), rl_json_string(j, r->dir);
        rl_json_key(j, "run_id"), r->run_id ? rl_json_string(j, r->run_id) : rl_json_null(j);
        rl_json_key(j, "state"), rl_json_string(j, r->state);
        rl_json_key(j, "result"), r->result ? rl_json_string(j, r->result) : rl_json_null(j);
        rl_json_key(j, "vehicles"), rl_json_begin_array(j);
        for (size_t v = 0; v < r->nvehicles; v++)
            rl_json_int64(j, r->vehicles[v]);
        rl_json_end_array(j);
        rl_json_key(j, "start"), r->start ? rl_json_string(j, r->start) : rl_json_null(j);
        rl_json_key(j, "duration"), rl_json_double(j, r->duration_s);
        rl_json_key(j, "planner"), r->planner ? rl_json_string(j, r->planner) : rl_json_null(j);
        rl_json_key(j, "map_sha256"), r->map_sha256 ? rl_json_string(j, r->map_sha256) : rl_json_null(j);
        rl_json_key(j, "scenario"), r->scenario ? rl_json_string(j, r->scenario) : rl_json_null(j);
        rl_json_key(j, "planned_duration"), rl_json_double(j, r->planned_s);
        rl_json_key(j, "interruption");
        r->interruption ? rl_json_string(j, r->interruption) : rl_json_null(j);
        rl_json_key(j, "evaluations"), rl_json_begin_array(j);
        for (size_t e = 0; e < r->nevaluations; e++) {
            const rl_eval_listed_evaluation *ev = &r->evaluations[e];
            rl_json_begin_object(j);
            rl_json_key(j, "name"), rl_json_string(j, ev->name);
            rl_json_key(j, "passed");
            if (ev->passed < 0)
                rl_json_null(j);
            else
                rl_json_bool(j, ev->passed == 1);
            rl_json_key(j, "result");
            ev->verdict < 0 ? rl_json_null(j)
                            : rl_json_string(j, rl_eval_verdict_name((rl_eval_verdict)ev->verdict));
            rl_json_key(j, "partial"), rl_json_bool(j, ev->partial);
            rl_json_end_object(j);
        }
        rl_json_end_array(j);
        /* The run's verdict: its latest full evaluation; a newer partial one is named. */
        const rl_eval_listed_evaluation *full = rl_eval_listed_full(r),
                                        *partial = rl_eval_listed_newer_partial(r);
        rl_json_key(j, "verdict");
        full ? rl_json_string(j, rl_eval_verdict_name((rl_eval_verdict)full->verdict)) : rl_json_null(j);
        rl_json_key(j, "verdict_evaluation");
        full ? rl_json_string(j, full->name) : rl_json_null(j);
        rl_json_key(j, "newer_partial_evaluation");
        partial ? rl_json_string(j, partial->name) : rl_json_null(j);
        rl_json_end_object(j);
    }
    rl_json_end_array(j);
    rc = rl_json_writer_finish(j);
    rl_json_writer_free(j);
    return rc;
}

int cmd_list(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    bool json = false;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            list_usage(stdout);
            return RL_EXIT_OK;
        }
        if (c == 'j')
            json = true;
        else
            return cli_usage_error("list", "unknown option '%s'", argv[optind - 1]);
    }
    if (argc - optind > 1)
        return cli_usage_error("list", "one HOME at most");
    const char *home = optind < argc ? argv[optind] : NULL;
    /* A HOME named on the command line that is not there is a mistake, not an empty list
       (without one, a home not made yet is: nothing recorded). */
    struct stat st;
    if (home) {
        const char *why = stat(home, &st) != 0 ? (errno == ENOENT ? "no such directory"
                                                                  : strerror(errno))
                          : !S_ISDIR(st.st_mode) ? "not a directory" : NULL;
        if (why) {
            fprintf(stderr, "runlab: list: ");
            cli_print_escaped(stderr, home);
            fprintf(stderr, ": %s\n", why);
            return RL_EXIT_USAGE;
        }
    }
    rl_eval_listed_run *runs;
    size_t n;
    if (rl_eval_list_runs(home, &runs, &n) < 0)
        return cli_fail("list", "%s", rl_error_last());
    int rc = RL_OK;
    if (json)
        rc = list_json(runs, n);
    else
        list_text(runs, n);
    rl_eval_list_free(runs, n);
    if (rc < 0)
        return cli_fail("list", "%s", rl_error_last());
    return RL_EXIT_OK;
}

/* ---- runlab evaluate ------------------------------------------------------------- */

/* Nothing failed, but some checks could not be judged (docs/eval.md). */
enum { EXIT_INCOMPLETE = 3 };

static void evaluate_usage(FILE *out)
{
    fprintf(out,
            "Usage: runlab evaluate RUN [--config FILE] [--metrics a,b] [--map FILE] [--open]\n"
            "       runlab evaluate --print-config\n\n"
            "Evaluates a recorded run offline (bag and runtime map, no running nodes) and writes\n"
            "RUN/evaluations/YYYYmmddTHHMMSSZ/ (-2, -3 on a collision): report.html, checks.csv,\n"
            "summary.json, figures/ (PNG and SVG with their records) and config.yaml (the\n"
            "effective configuration). RUN is a run directory or a run id (or directory name)\n"
            "under $RUNLAB_HOME/experiments. A FAILED, INTERRUPTED or unfinished run is\n"
            "evaluated as far as its data goes.\n\n"
            "  --config FILE     YAML overriding the defaults per metric section\n"
            "  --metrics a,b     only these metrics (default: all)\n"
            "  --map FILE        evaluate against this map (Lanelet2, CommonRoad or runtime\n"
            "                    map) instead of the run's own, e.g. for a run recorded\n"
            "                    without one\n"
            "  --open            open report.html with xdg-open afterwards\n"
            "  --print-config    print the built-in default configuration and exit\n\n"
            "Metrics:\n");
    for (size_t i = 0; i < rl_eval_metric_count(); i++)
        fprintf(out, "  %-20s %s\n", rl_eval_metric_name(i), rl_eval_metric_summary(i));
    fprintf(out, "\nResult: FAIL when any check fails; INCOMPLETE when none fails but some are\n"
                 "INSUFFICIENT or UNAVAILABLE; PASS otherwise. A run stopped early says so on the\n"
                 "result line (\"interrupted after 2.5 of 20 s\"); a reason several checks share is\n"
                 "printed once, with the metrics it affects. summary.json records the metrics run\n"
                 "(\"partial\" with --metrics: `runlab list` keeps the latest full result).\n\n"
                 "Exit codes: 0 PASS; 1 FAIL; 3 INCOMPLETE; 2 the evaluation cannot run (usage,\n"
                 "unreadable run, map hash mismatch).\n");
}

static void open_report(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/report.html", dir);
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, 1);
            dup2(devnull, 2);
        }
        execlp("xdg-open", "xdg-open", path, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
        fprintf(stderr, "runlab: evaluate: could not open %s (xdg-open)\n", path);
}

int cmd_evaluate(int argc, char **argv)
{
    static const struct option longopts[] = {{"config", required_argument, NULL, 'c'},
                                             {"metrics", required_argument, NULL, 'm'},
                                             {"map", required_argument, NULL, 'M'},
                                             {"open", no_argument, NULL, 'o'},
                                             {"print-config", no_argument, NULL, 'p'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    rl_eval_options o = {0};
    bool open_it = false, print_config = false;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            evaluate_usage(stdout);
            return RL_EXIT_OK;
        case 'c':
            o.config_path = optarg;
            break;
        case 'm':
            o.metrics = optarg;
            break;
        case 'M':
            o.map_path = optarg;
            break;
        case 'o':
            open_it = true;
            break;
        case 'p':
            print_config = true;
            break;
        case ':':
            return cli_usage_error("evaluate", "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error("evaluate", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (print_config) {
        fputs(rl_eval_default_config(), stdout);
        return RL_EXIT_OK;
    }
    if (argc - optind != 1)
        return cli_usage_error("evaluate", argc - optind ? "one RUN only" : "no RUN given");
    char dir[4096];
    if (rl_eval_resolve_run(argv[optind], NULL, dir, sizeof dir) < 0) {
        fprintf(stderr, "runlab: evaluate: %s\n", rl_error_last());
        return RL_EXIT_USAGE;
    }
    o.argc = argc;
    o.argv = argv;
    rl_eval_result res;
    int rc = rl_eval_run(dir, &o, &res);
    rl_plot_release_caches();
    if (rc < 0) {
        fprintf(stderr, "runlab: evaluate: ");
        cli_print_escaped(stderr, rl_error_last());
        fprintf(stderr, "\n");
        return RL_EXIT_USAGE;
    }
    if (*res.run_note)
        fputs(res.run_note, stdout);
    eval_print_checks(stdout, &res, eval_text_width());
    printf("result: %s%s%s%s (%zu checks: %zu PASS, %zu FAIL, %zu INSUFFICIENT, %zu UNAVAILABLE, %zu N/A)\n",
           rl_eval_verdict_name(res.verdict), *res.interruption ? ", " : "", res.interruption,
           res.partial ? ", partial (--metrics)" : "", res.nchecks, res.counts[RL_EVAL_PASS],
           res.counts[RL_EVAL_FAIL], res.counts[RL_EVAL_INSUFFICIENT],
           res.counts[RL_EVAL_UNAVAILABLE], res.counts[RL_EVAL_NA]);
    printf("%s\n", res.dir);
    if (open_it)
        open_report(res.dir);
    static const int codes[] = {RL_EXIT_OK, RL_EXIT_FAILURE, EXIT_INCOMPLETE};
    int code = codes[res.verdict];
    rl_eval_result_free(&res);
    return code;
}
