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

static void print_walk_errors(char **errors, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fputs("runlab: runs: ", stderr);
        cli_print_escaped(stderr, errors[i]);
        fputc('\n', stderr);
    }
}

static void table_row(const rl_run *r)
{
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

static int json_run(rl_json_writer *w, const rl_run *r)
{
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
    return rl_json_end_object(w);
}

/* ---- runs --csv: one tidy row per run (docs/perflog.md, "runs --csv") ---------------- */

/* The header's final_gain.<layer> columns are the union of every run's layers, known only
 * at the end; so each run leaves a row of its own: its text fields and numbers, a few
 * hundred bytes, never its columns of numbers nor its parsed YAML. */
enum { CSV_TEXT_FIELDS = 14 };

struct csv_row {
    char *text;           /* the 12 text fields before total_cost, each NUL-terminated */
    double total_cost, final_gain, elapsed_s;
    size_t num_layers;
    const char **layers;  /* interned in csv_rows.names */
    double *gains;
};

struct csv_rows {
    struct csv_row *rows;
    size_t n, cap;
    char **names; /* every layer name seen, sorted (byte order), owned */
    size_t num_names, cap_names;
};

/* The interned copy of a layer name, added in sorted place when new; NULL when out of memory. */
static const char *intern_layer(struct csv_rows *c, const char *name)
{
    size_t lo = 0, hi = c->num_names;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int cmp = strcmp(c->names[mid], name);
        if (cmp == 0)
            return c->names[mid];
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (c->num_names == c->cap_names) {
        size_t nc = c->cap_names ? 2 * c->cap_names : 16;
        char **nn = realloc(c->names, nc * sizeof *nn);
        if (!nn)
            return NULL;
        c->names = nn;
        c->cap_names = nc;
    }
    char *copy = strdup(name);
    if (!copy)
        return NULL;
    memmove(c->names + lo + 1, c->names + lo, (c->num_names - lo) * sizeof *c->names);
    c->names[lo] = copy;
    c->num_names++;
    return copy;
}

static int csv_keep(struct csv_rows *c, const rl_run *r)
{
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 64;
        struct csv_row *nr = realloc(c->rows, nc * sizeof *nr);
        if (!nr)
            return rl_error_set(RL_ENOMEM, "runs: out of memory");
        c->rows = nr;
        c->cap = nc;
    }
    char seed[32] = "", reasons[512] = "";
    if (r->has_seed)
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->seed);
    size_t len = 0;
    for (int k = 0; k < RL_REASON_COUNT; k++)
        if (rl_run_has_reason(r, (rl_run_reason)k) && len < sizeof reasons)
            len += (size_t)snprintf(reasons + len, sizeof reasons - len, "%s%s",
                                    len ? ";" : "", rl_run_reason_name((rl_run_reason)k));
    char cycles[32];
    snprintf(cycles, sizeof cycles, "%zu", r->num_rows);
    const char *base = strrchr(r->path, '/');
    const char *f[] = {r->path, manifest_str(r, "task"), manifest_str(r, "dataset"),
                       manifest_str(r, "scene"), manifest_str(r, "planner"),
                       base ? base + 1 : r->path, manifest_str(r, "start_utc"), seed,
                       rl_run_status_name(r->status), reasons, cycles, end_reason(r)};
    size_t total = 0;
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        total += strlen(f[i] ? f[i] : "") + 1;
    struct csv_row row = {.total_cost = r->total_cost, .final_gain = r->final_gain,
                          .elapsed_s = r->elapsed_s, .num_layers = r->num_gain_layers};
    row.text = malloc(total);
    row.layers = calloc(row.num_layers ? row.num_layers : 1, sizeof *row.layers);
    row.gains = malloc((row.num_layers ? row.num_layers : 1) * sizeof *row.gains);
    bool ok = row.text && row.layers && row.gains;
    for (size_t i = 0, at = 0; ok && i < sizeof f / sizeof *f; i++) {
        size_t n = strlen(f[i] ? f[i] : "") + 1;
        memcpy(row.text + at, f[i] ? f[i] : "", n);
        at += n;
    }
    for (size_t k = 0; ok && k < row.num_layers; k++) {
        row.layers[k] = intern_layer(c, r->gain_layers[k]);
        row.gains[k] = r->layer_gains[k];
        ok = row.layers[k] != NULL;
    }
    if (!ok) {
        free(row.text);
        free(row.layers);
        free(row.gains);
        return rl_error_set(RL_ENOMEM, "runs: out of memory");
    }
    c->rows[c->n++] = row;
    return RL_OK;
}

static void csv_rows_free(struct csv_rows *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->rows[i].text);
        free(c->rows[i].layers);
        free(c->rows[i].gains);
    }
    free(c->rows);
    for (size_t i = 0; i < c->num_names; i++)
        free(c->names[i]);
    free(c->names);
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

static int csv_write(const struct csv_rows *c)
{
    rl_csv_writer *w = NULL;
    if (rl_csv_writer_new(&w, stdout, ',', false) != RL_OK)
        return rl_error_last_code();
    static const char *const head[CSV_TEXT_FIELDS] = {
        "path",   "task",    "dataset", "scene",      "planner",   "stamp",     "start_utc",
        "seed",   "status",  "reasons", "cycles",     "end_reason", "total_cost", "final_gain"};
    for (size_t k = 0; k < CSV_TEXT_FIELDS; k++)
        rl_csv_write_str(w, head[k]);
    char name[300];
    for (size_t k = 0; k < c->num_names; k++) {
        snprintf(name, sizeof name, "final_gain.%s", c->names[k]);
        rl_csv_write_str(w, name);
    }
    rl_csv_write_str(w, "elapsed_time_s");
    int rc = rl_csv_end_row(w);
    for (size_t i = 0; rc == RL_OK && i < c->n; i++) {
        const struct csv_row *r = &c->rows[i];
        const char *t = r->text;
        for (size_t k = 0; k < CSV_TEXT_FIELDS - 2; k++, t += strlen(t) + 1)
            rl_csv_write_str(w, t);
        csv_num(w, r->total_cost);
        csv_num(w, r->final_gain);
        /* both lists are sorted: one merge pass */
        for (size_t k = 0, j = 0; k < c->num_names; k++) {
            bool has = j < r->num_layers && r->layers[j] == c->names[k];
            csv_num(w, has ? r->gains[j++] : NAN);
        }
        csv_num(w, r->elapsed_s);
        rc = rl_csv_end_row(w);
    }
    rl_csv_writer_free(w);
    if (rc == RL_OK && fflush(stdout) != 0)
        rc = rl_error_set(RL_EIO, "writing the CSV failed");
    return rc;
}

/* ---- one pass over the runs: each is printed (or kept as a CSV row) and freed ---------- */

enum out_kind { OUT_TABLE, OUT_JSON, OUT_CSV, OUT_REPORT };

struct runs_out {
    enum out_kind kind;
    rl_json_writer *json;
    struct csv_rows csv;
    rl_runs_report report;
    struct cli_load_progress lp;
};

static int on_run(const rl_run *r, size_t index, size_t total, void *user)
{
    struct runs_out *o = user;
    if (o->kind != OUT_TABLE || !isatty(STDOUT_FILENO)) /* no bar between the table's lines */
        cli_on_run_loaded(index + 1, total, r->path, &o->lp);
    switch (o->kind) {
    case OUT_TABLE: table_row(r); return RL_OK;
    case OUT_JSON: return json_run(o->json, r);
    case OUT_CSV: return csv_keep(&o->csv, r);
    default: rl_runs_report_add(&o->report, r); return RL_OK;
    }
}

static int list_runs(enum out_kind kind, char **roots, size_t num_roots)
{
    int crc = cli_check_roots("runs", roots, num_roots);
    if (crc != RL_EXIT_OK)
        return crc;
    struct runs_out o;
    memset(&o, 0, sizeof o);
    o.kind = kind;
    int rc = RL_OK;
    if (kind == OUT_TABLE)
        printf("%-9s %7s %12s %12s %10s  %s\n", "STATUS", "CYCLES", "FINAL_GAIN", "TOTAL_COST",
               "SEED", "PATH  [reasons]");
    if (kind == OUT_JSON && (rc = rl_json_writer_new_file(&o.json, stdout, RL_JSON_PRETTY)) ==
                                RL_OK)
        rc = rl_json_begin_array(o.json);
    char **errors = NULL;
    size_t nerrors = 0;
    if (rc == RL_OK)
        rc = rl_runs_each((const char *const *)roots, num_roots, NULL, on_run, &o, &errors,
                          &nerrors);
    rl_progress_finish(o.lp.bar);
    if (rc == RL_OK && kind == OUT_JSON && (rc = rl_json_end_array(o.json)) == RL_OK)
        rc = rl_json_writer_finish(o.json);
    if (rc == RL_OK && kind == OUT_CSV)
        rc = csv_write(&o.csv);
    if (rc == RL_OK && kind == OUT_REPORT) {
        o.report.walk_errors = nerrors;
        rc = rl_runs_report_print(&o.report, stdout);
    }
    int exit_code = rc == RL_OK ? RL_EXIT_OK : cli_fail("runs", "%s", rl_error_last());
    if (rc == RL_OK)
        print_walk_errors(errors, nerrors);
    rl_json_writer_free(o.json);
    csv_rows_free(&o.csv);
    for (size_t i = 0; i < nerrors; i++)
        free(errors[i]);
    free(errors);
    return exit_code;
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
    enum out_kind kind = report ? OUT_REPORT : json ? OUT_JSON : csv ? OUT_CSV : OUT_TABLE;
    return list_runs(kind, argv + optind, (size_t)(argc - optind));
}
