/* `runlab runs ROOT...`: lists the runs below the roots with their status, cycles, final
 * gain and cost (or a JSON array with --json); `runlab runs report ROOT...` prints the
 * counts by status and reason. Bad runs are listed, never fatal. */
#include "cli.h"

#include "runlab/error.h"
#include "runlab/json.h"
#include "runlab/progress.h"
#include "runlab/runs.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Below this many runs a load is quick and a progress line would only be noise. */
enum { PROGRESS_MIN_RUNS = 100 };

struct load_progress {
    rl_progress *bar;
    bool tried;
};

static void on_run_loaded(size_t done, size_t total, const char *path, void *user)
{
    (void)path;
    struct load_progress *lp = user;
    if (!lp->tried) {
        lp->tried = true;
        if (total >= PROGRESS_MIN_RUNS && isatty(STDERR_FILENO))
            (void)rl_progress_new(&lp->bar, stderr, "runs", total, 1);
    }
    if (lp->bar)
        rl_progress_update(lp->bar, done, NULL);
}

int cli_load_runs(const char *cmd, char **roots, size_t num_roots, struct rl_run_set **set)
{
    struct load_progress lp = {NULL, false};
    int rc = rl_runs_load_progress((const char *const *)roots, num_roots, NULL, on_run_loaded,
                                   &lp, set);
    rl_progress_finish(lp.bar);
    return rc == RL_OK ? RL_EXIT_OK : cli_fail(cmd, "%s", rl_error_last());
}

static void usage(FILE *out)
{
    fprintf(out, "Usage: runlab runs [--json] ROOT...\n"
                 "       runlab runs report ROOT...\n\n"
                 "Loads every run directory below the roots (see docs/perflog.md) and lists\n"
                 "each with its status (parsed, degraded, skipped), reasons, cycles, final\n"
                 "gain and total cost. 'report' prints the counts by status and reason.\n\n"
                 "  --json      one JSON array, an object per run (path, status, reasons, ...)\n"
                 "  -h, --help  show this help\n"
                 "Exit status 0 even when runs are degraded or skipped.\n");
}

/* Final gain of the first layer with a gain column ("planning.RealAccumulatedGain"): the
 * summary's real_accumulated_gain for that layer, which includes the episode's last move,
 * else the CSV's last value (a run without a summary); NaN when there is no gain column.
 * Taken from the same place as total_cost, so the two columns agree. */
static double final_gain(const rl_run *r)
{
    static const char suffix[] = "RealAccumulatedGain";
    const size_t slen = sizeof suffix - 1;
    for (size_t j = 0; j < r->num_columns; j++) {
        const char *n = r->column_names[j];
        size_t len = strlen(n);
        if (len < slen || strcmp(n + len - slen, suffix) != 0)
            continue;
        json_object *per_layer = NULL;
        double v;
        if (len > slen + 1 && n[len - slen - 1] == '.' && r->summary &&
            rl_json_get_object(r->summary, "real_accumulated_gain", &per_layer) == RL_OK) {
            char layer[128];
            size_t ll = len - slen - 1;
            if (ll < sizeof layer) {
                memcpy(layer, n, ll);
                layer[ll] = '\0';
                if (rl_json_get_double(per_layer, layer, &v) == RL_OK)
                    return v;
            }
        }
        return r->num_rows ? r->columns[j][r->num_rows - 1] : NAN;
    }
    return NAN;
}

/* Total cost from the summary, else the CSV's last TotalCost. */
static double total_cost(const rl_run *r)
{
    double v;
    if (r->summary && rl_json_get_double(r->summary, "total_cost", &v) == RL_OK)
        return v;
    const double *c = rl_run_column(r, "TotalCost");
    return c && r->num_rows ? c[r->num_rows - 1] : NAN;
}

static void print_num(double v)
{
    if (isnan(v))
        printf(" %12s", "-");
    else
        printf(" %12.4g", v);
}

static int print_table(const rl_run_set *set)
{
    printf("%-9s %7s %12s %12s  %s\n", "STATUS", "CYCLES", "FINAL_GAIN", "COST", "PATH  [reasons]");
    for (size_t i = 0; i < set->count; i++) {
        const rl_run *r = set->runs[i];
        printf("%-9s %7zu", rl_run_status_name(r->status), r->num_rows);
        print_num(final_gain(r));
        print_num(total_cost(r));
        printf("  %s", r->path);
        const char *sep = "  [";
        for (int k = 0; k < RL_REASON_COUNT; k++)
            if (rl_run_has_reason(r, (rl_run_reason)k)) {
                printf("%s%s", sep, rl_run_reason_name((rl_run_reason)k));
                sep = ",";
            }
        printf("%s\n", sep[0] == ',' ? "]" : "");
    }
    for (size_t i = 0; i < set->num_walk_errors; i++)
        fprintf(stderr, "runlab: runs: %s\n", set->walk_errors[i]);
    return RL_EXIT_OK;
}

static int print_json(const rl_run_set *set)
{
    rl_json_writer *w;
    if (rl_json_writer_new_file(&w, stdout, RL_JSON_PRETTY) != RL_OK)
        return cli_fail("runs", "%s", rl_error_last());
    int rc = rl_json_begin_array(w);
    for (size_t i = 0; rc == RL_OK && i < set->count; i++) {
        const rl_run *r = set->runs[i];
        rl_json_begin_object(w);
        rl_json_key(w, "path");
        rl_json_string(w, r->path);
        rl_json_key(w, "status");
        rl_json_string(w, rl_run_status_name(r->status));
        rl_json_key(w, "reasons");
        rl_json_begin_array(w);
        for (int k = 0; k < RL_REASON_COUNT; k++)
            if (rl_run_has_reason(r, (rl_run_reason)k))
                rl_json_string(w, rl_run_reason_name((rl_run_reason)k));
        rl_json_end_array(w);
        rl_json_key(w, "messages");
        rl_json_begin_array(w);
        for (size_t m = 0; m < r->num_messages; m++)
            rl_json_string(w, r->messages[m]);
        rl_json_end_array(w);
        rl_json_key(w, "cycles");
        rl_json_uint64(w, r->num_rows);
        rl_json_key(w, "columns");
        rl_json_uint64(w, r->num_columns);
        rl_json_key(w, "final_gain");
        rl_json_double(w, final_gain(r)); /* NaN is written as null */
        rl_json_key(w, "total_cost");
        rl_json_double(w, total_cost(r));
        const char *s;
        rl_json_key(w, "end_reason");
        if (r->summary && rl_json_get_string(r->summary, "end_reason", &s) == RL_OK)
            rl_json_string(w, s);
        else
            rl_json_null(w);
        rc = rl_json_end_object(w);
    }
    if (rc == RL_OK)
        rc = rl_json_end_array(w);
    if (rc == RL_OK)
        rc = rl_json_writer_finish(w);
    rl_json_writer_free(w);
    if (rc != RL_OK)
        return cli_fail("runs", "%s", rl_error_last());
    for (size_t i = 0; i < set->num_walk_errors; i++)
        fprintf(stderr, "runlab: runs: %s\n", set->walk_errors[i]);
    return RL_EXIT_OK;
}

int cmd_runs(int argc, char **argv)
{
    bool json = false, report = false;
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "report") == 0) {
        report = true;
        first = 2;
    }
    optind = first;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'h': usage(stdout); return RL_EXIT_OK;
        default: return cli_usage_error("runs", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error("runs", "no ROOT given");
    rl_run_set *set;
    int lrc = cli_load_runs("runs", argv + optind, (size_t)(argc - optind), &set);
    if (lrc != RL_EXIT_OK)
        return lrc;
    int rc;
    if (report) {
        rl_runs_report rep;
        rl_runs_aggregate(set, &rep);
        rc = rl_runs_report_print(&rep, stdout) == RL_OK ? RL_EXIT_OK
                                                         : cli_fail("runs", "%s", rl_error_last());
        for (size_t i = 0; i < set->num_walk_errors; i++)
            fprintf(stderr, "runlab: runs: %s\n", set->walk_errors[i]);
    } else {
        rc = json ? print_json(set) : print_table(set);
    }
    rl_run_set_free(set);
    return rc;
}
