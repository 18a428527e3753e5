/* `runlab runs ROOT...`: lists the runs below the roots with their status, cycles, final
 * gain, cost and seed (or a JSON array with --json, a tidy CSV with --csv); `runlab runs
 * report ROOT...` prints the counts by status and reason. Bad runs are listed, never fatal. */
#include "cli.h"

#include "runlab/csv.h"
#include "runlab/error.h"
#include "runlab/json.h"
#include "runlab/number.h"
#include "runlab/progress.h"
#include "runlab/runs.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fprintf(out, "Usage: runlab runs [--json | --csv] ROOT...\n"
                 "       runlab runs report ROOT...\n\n"
                 "Loads every run directory below the roots (see docs/perflog.md) and lists\n"
                 "each with its status (parsed, degraded, skipped), cycles, final gain, total\n"
                 "cost, seed, path and reasons. 'report' prints the counts by status and reason.\n"
                 "Final gain: the sum over layers of each layer's gain at the end of the run\n"
                 "(episode summary, else the CSV's last row); the same number in every output.\n\n"
                 "  --json      one JSON array, an object per run (path, status, reasons, ...)\n"
                 "  --csv       one CSV row per run for pandas and spreadsheets; the columns\n"
                 "              are documented in docs/perflog.md\n"
                 "  -h, --help  show this help\n"
                 "Control characters in paths are shown escaped (\\n, \\t, \\xHH; \\\\ for \\).\n"
                 "Exit status 0 even when runs are degraded or skipped; 1 when a ROOT does not\n"
                 "exist.\n");
}

static void print_num(double v)
{
    if (isnan(v))
        printf(" %12s", "-");
    else
        printf(" " CLI_NUM_FMT_W(12), v);
}

static void print_walk_errors(const rl_run_set *set)
{
    for (size_t i = 0; i < set->num_walk_errors; i++) {
        fputs("runlab: runs: ", stderr);
        cli_print_escaped(stderr, set->walk_errors[i]);
        fputc('\n', stderr);
    }
}

static int print_table(const rl_run_set *set)
{
    printf("%-9s %7s %12s %12s %10s  %s\n", "STATUS", "CYCLES", "FINAL_GAIN", "TOTAL_COST",
           "SEED", "PATH  [reasons]");
    for (size_t i = 0; i < set->count; i++) {
        const rl_run *r = set->runs[i];
        printf("%-9s %7zu", rl_run_status_name(r->status), r->num_rows);
        print_num(r->final_gain);
        print_num(r->total_cost);
        if (r->has_seed)
            printf(" %10llu  ", (unsigned long long)r->seed);
        else
            printf(" %10s  ", "-");
        cli_print_escaped(stdout, r->path);
        const char *sep = "  [";
        for (int k = 0; k < RL_REASON_COUNT; k++)
            if (rl_run_has_reason(r, (rl_run_reason)k)) {
                printf("%s%s", sep, rl_run_reason_name((rl_run_reason)k));
                sep = ",";
            }
        printf("%s\n", sep[0] == ',' ? "]" : "");
    }
    print_walk_errors(set);
    return RL_EXIT_OK;
}

static const char *manifest_str(const rl_run *r, const char *key)
{
    const char *s;
    return r->manifest && rl_json_get_string(r->manifest, key, &s) == RL_OK ? s : NULL;
}

static const char *end_reason(const rl_run *r)
{
    const char *s;
    return r->summary && rl_json_get_string(r->summary, "end_reason", &s) == RL_OK ? s : NULL;
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
        rl_json_double(w, r->final_gain); /* NaN is written as null */
        rl_json_key(w, "final_gain_by_layer");
        rl_json_begin_object(w);
        for (size_t k = 0; k < r->num_gain_layers; k++) {
            rl_json_key(w, r->gain_layers[k]);
            rl_json_double(w, r->layer_gains[k]);
        }
        rl_json_end_object(w);
        rl_json_key(w, "total_cost");
        rl_json_double(w, r->total_cost);
        rl_json_key(w, "elapsed_time_s");
        rl_json_double(w, r->elapsed_s);
        rl_json_key(w, "seed");
        if (r->has_seed)
            rl_json_uint64(w, r->seed);
        else
            rl_json_null(w);
        rl_json_key(w, "end_reason");
        if (end_reason(r))
            rl_json_string(w, end_reason(r));
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
    print_walk_errors(set);
    return RL_EXIT_OK;
}

/* ---- runs --csv: one tidy row per run (docs/perflog.md, "runs --csv") ---------------- */

/* The union of every run's gain layers, sorted; names borrowed from the runs. */
static const char **all_layers(const rl_run_set *set, size_t *n)
{
    size_t cap = 0;
    for (size_t i = 0; i < set->count; i++)
        cap += set->runs[i]->num_gain_layers;
    const char **names = calloc(cap ? cap : 1, sizeof *names);
    *n = 0;
    if (!names)
        return NULL;
    for (size_t i = 0; i < set->count; i++)
        for (size_t k = 0; k < set->runs[i]->num_gain_layers; k++) {
            const char *l = set->runs[i]->gain_layers[k];
            size_t at = 0;
            while (at < *n && strcmp(names[at], l) < 0)
                at++;
            if (at < *n && strcmp(names[at], l) == 0)
                continue;
            memmove(names + at + 1, names + at, (*n - at) * sizeof *names);
            names[at] = l;
            (*n)++;
        }
    return names;
}

static void csv_str(rl_csv_writer *w, const char *s)
{
    rl_csv_write_str(w, s ? s : "");
}

/* A number in the shortest form that reads back exactly, always with a decimal point or
 * exponent ("40.0", as Python writes it) so pandas reads a float column as float64
 * even when every value is whole; an empty cell (NaN) when there is none. */
static void csv_num(rl_csv_writer *w, double v)
{
    char buf[48];
    if (isnan(v)) {
        rl_csv_write_str(w, "");
        return;
    }
    size_t n = rl_format_f64(v, buf, sizeof buf - 2);
    if (isfinite(v) && !strpbrk(buf, ".e"))
        memcpy(buf + n, ".0", 3);
    rl_csv_write_str(w, buf);
}

static int print_csv(const rl_run_set *set)
{
    size_t nl = 0;
    const char **layers = all_layers(set, &nl);
    rl_csv_writer *w = NULL;
    if (!layers || rl_csv_writer_new(&w, stdout, ',', false) != RL_OK) {
        free(layers);
        return cli_fail("runs", "out of memory");
    }
    static const char *const head[] = {"path",   "task",     "dataset",    "scene",
                                       "planner", "stamp",   "start_utc",  "seed",
                                       "status", "reasons", "cycles",     "end_reason",
                                       "total_cost", "final_gain"};
    int rc = RL_OK;
    for (size_t k = 0; k < sizeof head / sizeof *head; k++)
        rl_csv_write_str(w, head[k]);
    char name[300];
    for (size_t k = 0; k < nl; k++) {
        snprintf(name, sizeof name, "final_gain.%s", layers[k]);
        rl_csv_write_str(w, name);
    }
    rl_csv_write_str(w, "elapsed_time_s");
    rc = rl_csv_end_row(w);
    for (size_t i = 0; rc == RL_OK && i < set->count; i++) {
        const rl_run *r = set->runs[i];
        csv_str(w, r->path);
        csv_str(w, manifest_str(r, "task"));
        csv_str(w, manifest_str(r, "dataset"));
        csv_str(w, manifest_str(r, "scene"));
        csv_str(w, manifest_str(r, "planner"));
        const char *base = strrchr(r->path, '/');
        csv_str(w, base ? base + 1 : r->path);
        csv_str(w, manifest_str(r, "start_utc"));
        if (r->has_seed) {
            snprintf(name, sizeof name, "%llu", (unsigned long long)r->seed);
            csv_str(w, name);
        } else {
            csv_str(w, "");
        }
        csv_str(w, rl_run_status_name(r->status));
        char reasons[512] = "";
        size_t len = 0;
        for (int k = 0; k < RL_REASON_COUNT; k++)
            if (rl_run_has_reason(r, (rl_run_reason)k) && len < sizeof reasons)
                len += (size_t)snprintf(reasons + len, sizeof reasons - len, "%s%s",
                                        len ? ";" : "", rl_run_reason_name((rl_run_reason)k));
        csv_str(w, reasons);
        rl_csv_write_i64(w, (int64_t)r->num_rows);
        csv_str(w, end_reason(r));
        csv_num(w, r->total_cost);
        csv_num(w, r->final_gain);
        for (size_t k = 0; k < nl; k++)
            csv_num(w, rl_run_layer_gain(r, layers[k]));
        csv_num(w, r->elapsed_s);
        rc = rl_csv_end_row(w);
    }
    rl_csv_writer_free(w);
    free(layers);
    if (rc == RL_OK && fflush(stdout) != 0)
        rc = rl_error_set(RL_EIO, "writing the CSV failed");
    if (rc != RL_OK)
        return cli_fail("runs", "%s", rl_error_last());
    print_walk_errors(set);
    return RL_EXIT_OK;
}

int cmd_runs(int argc, char **argv)
{
    bool json = false, csv = false, report = false;
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"csv", no_argument, NULL, 'c'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0, 0, 0, 0}};
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "report") == 0) {
        report = true;
        first = 2;
    }
    optind = first;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'c': csv = true; break;
        case 'h': usage(stdout); return RL_EXIT_OK;
        default: return cli_usage_error("runs", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (json && csv)
        return cli_usage_error("runs", "--json and --csv exclude each other");
    if (report && (json || csv))
        return cli_usage_error("runs", "'runs report' prints text only (no --json or --csv)");
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
        print_walk_errors(set);
    } else {
        rc = json ? print_json(set) : csv ? print_csv(set) : print_table(set);
    }
    rl_run_set_free(set);
    return rc;
}
