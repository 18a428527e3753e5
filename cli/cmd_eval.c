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
#include <time.h>
#include <unistd.h>

/* ---- runlab list ----------------------------------------------------------------- */

static void list_usage(FILE *out)
{
    fprintf(out,
            "Usage: runlab list [--json] [--sort [-]FIELD] [FILTERS] [HOME]\n\n"
            "Lists the recorded runs under HOME/experiments (HOME: $RUNLAB_HOME, else ~/runlab),\n"
            "newest first, one row of at most 120 columns each: RUN (the run's time once:\n"
            "the run id when it holds the directory's UTC stamp, as generated ones\n"
            "\"run-<UTC>-<pid>\" do, else the directory name \"<UTC>_<run id>\"; both are\n"
            "what `runlab evaluate` takes), STATE, VEH (how many vehicles), DUR (START..STOP;\n"
            "\"2.5/20s\" for a run stopped early: how far it got of its plan), PLANNER,\n"
            "EVALUATIONS (how many, and the result (PASS, FAIL, INCOMPLETE) of the latest full\n"
            "one; \"+partial\" when a newer evaluation ran only some metrics (--metrics), which\n"
            "does not replace that result), SCENARIO (the simulator's seed and faults) and\n"
            "NOTE (the reason a run did not complete). A cell too long for its column ends\n"
            "in '~'; --json has every field whole (vehicle ids, map hash, each evaluation,\n"
            "the interruption).\n\n"
            "  --json             one JSON array, an object per run (every field, whatever\n"
            "                     the filters: they choose runs, not fields)\n"
            "  --sort [-]FIELD    order by time, name, state, result, duration, planner,\n"
            "                     vehicles, seed, faults or evaluations; ascending, or\n"
            "                     descending with '-' (default -time: newest first)\n\n"
            "Filters (each a comma-separated list of alternatives; all must hold):\n"
            "  --state S          COMPLETE, FAILED, INTERRUPTED, UNFINISHED, ...\n"
            "  --result R         the latest full evaluation's PASS, FAIL, INCOMPLETE, or NONE\n"
            "                     (never fully evaluated)\n"
            "  --since T          recorded at or after T (the directory's UTC stamp, else\n"
            "                     START): YYYY-mm-dd or YYYY-mm-ddTHH:MM:SSZ, UTC, < 2262\n"
            "  --until T          recorded before T (a date alone: before that day's end)\n"
            "  --vehicle ID       runs with any of these vehicle ids\n"
            "  --planner NAME     the manifest's planner\n"
            "  --fault KIND       runs with a simulator fault of that kind (speeding, ...),\n"
            "                     or NONE: runs without a fault\n\n"
            "Exit codes: 0 listed (also none matching), 1 failure, 2 usage (a bad filter\n"
            "value, or a HOME given that is not a directory).\n");
}

enum { LIST_COLUMNS = 120 };

/* One table row being laid out: cells are appended with their width and the row is cut
 * at LIST_COLUMNS, so that no row is wider than a terminal of that many columns. */
typedef struct list_row {
    char text[4 * LIST_COLUMNS];
    int used; /* columns used (bytes: cells are ASCII after escaping) */
} list_row;

/* `s` as cli_print_escaped shows it (\n, \t, \xNN), at most cap - 1 bytes. */
static void escape_into(char *out, size_t cap, const char *s)
{
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && k + 5 < cap; p++) {
        if (*p == '\\' || *p == '\n' || *p == '\t' || *p == '\r')
            k += (size_t)snprintf(out + k, cap - k, "\\%c",
                                  *p == '\n' ? 'n' : *p == '\t' ? 't' : *p == '\r' ? 'r' : '\\');
        else if (*p < 0x20 || *p == 0x7f)
            k += (size_t)snprintf(out + k, cap - k, "\\x%02x", *p);
        else
            out[k++] = (char)*p;
    }
    out[k] = 0;
}

/* Appends `s` escaped in a cell of `width` columns (0: as long as it is), cut with '~'
 * when longer, then a space. A UTF-8 character may count as several columns here: rows
 * come out narrower, never wider. */
static void row_cell(list_row *r, const char *raw, int width, bool left)
{
    char s[1024];
    escape_into(s, sizeof s, raw);
    char cell[LIST_COLUMNS + 1];
    int n = 0, len = (int)strlen(s);
    int w = width > 0 ? width : len;
    if (w > LIST_COLUMNS)
        w = LIST_COLUMNS;
    for (int i = 0; i < len && n < w; i++)
        cell[n++] = s[i];
    if (len > w && w > 0)
        cell[w - 1] = '~';
    cell[n] = 0;
    int room = (int)sizeof r->text - r->used - 1;
    int k = snprintf(r->text + r->used, (size_t)(room > 0 ? room : 0), left ? "%-*s " : "%*s ",
                     w, cell);
    if (k > 0)
        r->used += k < room ? k : room;
}

static void row_print(list_row *r)
{
    while (r->used > 0 && r->text[r->used - 1] == ' ')
        r->used--;
    if (r->used > LIST_COLUMNS) {
        r->used = LIST_COLUMNS;
        r->text[LIST_COLUMNS - 1] = '~';
    }
    printf("%.*s\n", r->used, r->text);
}

/* The cells of one run, in column order. */
enum { C_RUN, C_STATE, C_VEH, C_DUR, C_PLANNER, C_EVAL, C_SCENARIO, C_NOTE, C_COUNT };

static void run_cells(const rl_eval_listed_run *r, char cells[C_COUNT][256])
{
    for (int c = 0; c < C_COUNT; c++)
        snprintf(cells[c], 256, "-");
    /* The run's time once: the directory is "<UTC>_<run id>", and a generated run id holds
       the same UTC ("run-<UTC>-<pid>"): then the run id alone, else the directory name. */
    const char *us = strchr(r->name, '_');
    bool stamped = us && us - r->name == 16 && r->name[8] == 'T';
    bool id_has_time = stamped && r->run_id && strcmp(us + 1, r->run_id) == 0 &&
                       memmem(r->run_id, strlen(r->run_id), r->name, 16);
    snprintf(cells[C_RUN], 256, "%s", id_has_time ? r->run_id : r->name);
    snprintf(cells[C_STATE], 256, "%s", r->state);
    if (r->nvehicles)
        snprintf(cells[C_VEH], 256, "%zu", r->nvehicles);
    /* A run stopped early: how far it got of its plan ("2.5/20s"). */
    if (isfinite(r->duration_s) && r->interruption && isfinite(r->planned_s))
        snprintf(cells[C_DUR], 256, "%.1f/%.0fs", r->duration_s, r->planned_s);
    else if (isfinite(r->duration_s))
        snprintf(cells[C_DUR], 256, "%.1fs", r->duration_s);
    if (r->planner)
        snprintf(cells[C_PLANNER], 256, "%s", r->planner);
    if (r->nevaluations) {
        const rl_eval_listed_evaluation *full = rl_eval_listed_full(r);
        snprintf(cells[C_EVAL], 256, "%zu (%s%s)", r->nevaluations,
                 full ? rl_eval_verdict_name((rl_eval_verdict)full->verdict) : "no full",
                 rl_eval_listed_newer_partial(r) ? " +partial" : "");
    }
    if (r->seed >= 0 || r->nfaults) {
        int k = 0;
        if (r->seed >= 0)
            k = snprintf(cells[C_SCENARIO], 256, "seed %lld", (long long)r->seed);
        for (size_t f = 0; f < r->nfaults && k >= 0 && k < 256; f++)
            k += snprintf(cells[C_SCENARIO] + k, 256 - (size_t)k, "%s%s",
                          k == 0 ? "" : f ? "," : " ", r->faults[f]);
    } else if (r->scenario) {
        snprintf(cells[C_SCENARIO], 256, "%s", r->scenario);
    }
    /* A complete run's reason ("finished") says nothing the state does not. */
    if (r->result && strcmp(r->state, "COMPLETE") != 0)
        snprintf(cells[C_NOTE], 256, "%s", r->result);
}

static void list_text(const rl_eval_listed_run *runs, size_t n)
{
    static const char *const head[C_COUNT] = {"RUN",     "STATE",       "VEH",      "DUR",
                                              "PLANNER", "EVALUATIONS", "SCENARIO", "NOTE"};
    /* Each column as wide as its longest cell, within a cap; NOTE takes what is left. */
    static const int cap[C_COUNT] = {40, 11, 3, 10, 12, 20, 48, 0};
    int width[C_COUNT];
    for (int c = 0; c < C_COUNT; c++)
        width[c] = (int)strlen(head[c]);
    char(*cells)[C_COUNT][256] = n ? calloc(n, sizeof *cells) : NULL;
    for (size_t i = 0; cells && i < n; i++) {
        run_cells(&runs[i], cells[i]);
        for (int c = 0; c < C_COUNT; c++) {
            int len = (int)strlen(cells[i][c]);
            if (len > width[c])
                width[c] = cap[c] && len > cap[c] ? cap[c] : len;
        }
    }
    /* The scenario gives way first when the row would be wider than the terminal, down to
       12 columns, leaving NOTE up to 24 (a longer note is cut at the row's end). */
    int total = 0, note = width[C_NOTE] < 24 ? width[C_NOTE] : 24;
    for (int c = 0; c < C_NOTE; c++)
        total += width[c] + 1;
    if (total + note > LIST_COLUMNS && width[C_SCENARIO] > 12) {
        int over = total + note - LIST_COLUMNS;
        width[C_SCENARIO] = width[C_SCENARIO] - over > 12 ? width[C_SCENARIO] - over : 12;
    }
    static const bool left[C_COUNT] = {true, true, false, false, true, true, true, true};
    list_row row = {.used = 0};
    for (int c = 0; c < C_COUNT; c++)
        row_cell(&row, head[c], c == C_NOTE ? 0 : width[c], left[c]);
    row_print(&row);
    for (size_t i = 0; cells && i < n; i++) {
        row = (list_row){.used = 0};
        for (int c = 0; c < C_COUNT; c++)
            row_cell(&row, cells[i][c], c == C_NOTE ? 0 : width[c], left[c]);
        row_print(&row);
    }
    if (n && !cells)
        fprintf(stderr, "runlab: list: out of memory\n");
    free(cells);
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
        rl_json_key(j, "seed"), r->seed >= 0 ? rl_json_int64(j, r->seed) : rl_json_null(j);
        rl_json_key(j, "faults"), rl_json_begin_array(j);
        for (size_t f = 0; f < r->nfaults; f++)
            rl_json_string(j, r->faults[f]);
        rl_json_end_array(j);
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
                                             {"sort", required_argument, NULL, 's'},
                                             {"help", no_argument, NULL, 'h'},
                                             CLI_FILTER_OPTIONS,
                                             {NULL, 0, NULL, 0}};
    bool json = false, filtered = false;
    const char *sort = NULL;
    rl_eval_run_filter filter = {0};
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
        else if (c == 's')
            sort = optarg;
        else if (cli_filter_option(c, &filter, &filtered))
            continue;
        else if (c == ':')
            return cli_usage_error("list", "option '%s' needs a value", argv[optind - 1]);
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
    if ((filtered && rl_eval_list_filter(runs, &n, &filter) < 0) ||
        (sort && rl_eval_list_sort(runs, n, sort) < 0)) {
        rl_eval_list_free(runs, n);
        return cli_usage_error("list", "%s", rl_error_last());
    }
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
            "Usage: runlab evaluate RUN [--config FILE] [--metrics a,b] [--map FILE]\n"
            "                           [--figures png,svg|svg] [--open]\n"
            "       runlab evaluate --print-config\n"
            "       runlab evaluate --summary [RUN...] [OPTIONS]   (see --summary --help)\n"
            "       runlab evaluate --slurm RUN... [OPTIONS]       (see --slurm --help)\n\n"
            "Evaluates a recorded run offline (bag and runtime map, no running nodes) and writes\n"
            "RUN/evaluations/YYYYmmddTHHMMSSZ/ (_2, _3 on a collision): report.html, checks.csv,\n"
            "summary.json, decoding.csv (per topic: messages that did not decode, the first\n"
            "error), figures/ (PNG and SVG with their records) and config.yaml (the\n"
            "effective configuration). Every check states its coverage (seconds judged of\n"
            "the window); one over a gap longer than its metric's max_gap cannot PASS.\n"
            "RUN is a run directory or a run id (or directory name) under\n"
            "$RUNLAB_HOME/experiments. A FAILED, INTERRUPTED or unfinished run is\n"
            "evaluated as far as its data goes.\n\n"
            "  --config FILE     YAML overriding the defaults per metric section\n"
            "  --metrics a,b     only these metrics (default: all)\n"
            "  --map FILE        evaluate against this map (Lanelet2, CommonRoad or runtime\n"
            "                    map) instead of the run's own, e.g. for a run recorded\n"
            "                    without one\n"
            "  --figures F       png,svg (default): each figure as PNG and SVG; svg: SVG\n"
            "                    alone, the same report (it inlines the SVG) without\n"
            "                    rasterising the PNGs, most of the CPU after the metrics\n"
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
                                             {"figures", required_argument, NULL, 'f'},
                                             {"open", no_argument, NULL, 'o'},
                                             {"print-config", no_argument, NULL, 'p'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) /* one report over many runs */
        if (strcmp(argv[i], "--summary") == 0)
            return cmd_evaluate_summary(argc, argv);
        else if (strcmp(argv[i], "--slurm") == 0) /* many runs as a Slurm array job */
            return cmd_evaluate_slurm(argc, argv);
    rl_eval_options o = {0};
    rl_eval_figures figures = RL_EVAL_FIGURES_PNG_SVG;
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
        case 'f':
            if (cli_parse_figures("evaluate", optarg, &figures) != RL_EXIT_OK)
                return RL_EXIT_USAGE;
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
    int rc = rl_eval_run_figures(dir, &o, figures, &res);
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
