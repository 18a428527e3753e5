/* Loading one run directory (rl_run_load): its CSV (run_csv.c), manifest and summary
 * checked against each other, and the run's end-of-run numbers (final gain, total cost,
 * seed); every problem becomes a reason on the run, never a failure. Called by runs.c. */
#include "runlab/runs.h"

#include "analysis/run_columns.h"
#include "runlab/error.h"
#include "runlab/json.h"
#include "runlab/number.h"
#include "runlab/perflog.h"
#include "runlab/record.h"
#include "runlab/yaml.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/runs_internal.h" /* last: it renames the files' shared functions */

void limits_fill(rl_run_limits *l, const rl_run_limits *in)
{
    memset(l, 0, sizeof *l);
    if (in)
        *l = *in;
    if (!l->max_csv_bytes)
        l->max_csv_bytes = (size_t)1 << 30;
    if (!l->max_line_bytes)
        l->max_line_bytes = (size_t)1 << 20;
    if (!l->max_yaml_bytes)
        l->max_yaml_bytes = (size_t)4 << 20;
    if (!l->max_columns)
        l->max_columns = 4096;
}

/* ---- manifest and summary ----------------------------------------------------------------- */

static json_object *load_yaml(rl_run *run, const char *dir, const char *name, rl_run_reason missing,
                              rl_run_reason bad, const rl_run_limits *lim)
{
    char path[PATH_MAX], why[256];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
        note(run, bad, "path too long");
        return NULL;
    }
    char *buf;
    size_t len;
    switch (read_file(path, lim->max_yaml_bytes, &buf, &len, why, sizeof why)) {
    case READ_MISSING: note(run, missing, "%s not found", name); return NULL;
    case READ_UNREADABLE:
    case READ_TOO_LARGE: note(run, bad, "%s: %s", name, why); return NULL;
    case READ_OK: break;
    }
    json_object *obj = NULL;
    if (memchr(buf, '\0', len)) {
        note(run, bad, "%s contains NUL bytes", name);
    } else if (rl_yaml_parse(buf, len, name, &obj) != RL_OK) {
        note(run, bad, "%s", rl_error_last());
        obj = NULL;
    } else if (!obj || !json_object_is_type(obj, json_type_object)) {
        note(run, bad, "%s is not a mapping", name);
        json_object_put(obj);
        obj = NULL;
    }
    free(buf);
    return obj;
}

static bool str_field(json_object *o, const char *key, const char **out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return false;
    *out = json_object_get_string(v);
    return true;
}

static int check_manifest(rl_run *run)
{
    json_object *m = run->manifest, *cols, *fv;
    if (!json_object_object_get_ex(m, "format_version", &fv) ||
        !json_object_is_type(fv, json_type_int)) {
        note(run, RL_REASON_BAD_MANIFEST, "run_manifest.yaml: format_version missing");
        return RL_OK;
    }
    if (!json_object_object_get_ex(m, "columns", &cols) ||
        !json_object_is_type(cols, json_type_array)) {
        note(run, RL_REASON_BAD_MANIFEST, "run_manifest.yaml: columns missing or not a list");
        return RL_OK;
    }
    size_t n = json_object_array_length(cols);
    const char **a = calloc(4 * (n ? n : 1), sizeof *a);
    if (!a)
        return rl_error_set(RL_ENOMEM, "runs: out of memory");
    for (size_t i = 0; i < n; i++) {
        json_object *c = json_object_array_get_idx(cols, i), *par;
        if (!c || !json_object_is_type(c, json_type_object) || !str_field(c, "name", &a[i]) ||
            !str_field(c, "type", &a[n + i]) || !str_field(c, "unit", &a[2 * n + i])) {
            note(run, RL_REASON_BAD_MANIFEST,
                 "run_manifest.yaml: column %zu lacks name, type or unit", i + 1);
            free(a);
            return RL_OK;
        }
        a[3 * n + i] = "";
        if (json_object_object_get_ex(c, "parent", &par) && par) {
            if (!json_object_is_type(par, json_type_string)) {
                note(run, RL_REASON_BAD_MANIFEST,
                     "run_manifest.yaml: column %zu parent is not a string or null", i + 1);
                free(a);
                return RL_OK;
            }
            a[3 * n + i] = json_object_get_string(par);
        }
    }
    const char *stated;
    char fp[RL_FINGERPRINT_LEN];
    if (!str_field(m, "schema_fingerprint", &stated)) {
        note(run, RL_REASON_BAD_MANIFEST, "run_manifest.yaml: schema_fingerprint missing");
    } else if (rl_perflog_compute_fingerprint(a, a + n, a + 2 * n, a + 3 * n, n, fp, sizeof fp) ==
                   RL_OK &&
               strcmp(fp, stated) != 0) {
        note(run, RL_REASON_FINGERPRINT_MISMATCH,
             "manifest states %.24s..., its columns give %.24s...", stated, fp);
    }
    /* The CSV header against the manifest's columns. */
    if (run->column_names) {
        size_t k = 0;
        while (k < n && k < run->num_columns && strcmp(a[k], run->column_names[k]) == 0)
            k++;
        if (k < n || k < run->num_columns) {
            if (k < n && k < run->num_columns)
                note(run, RL_REASON_COLUMNS_MISMATCH,
                     "CSV column %zu is '%.100s', the manifest says '%.100s'", k + 1,
                     run->column_names[k], a[k]);
            else
                note(run, RL_REASON_COLUMNS_MISMATCH, "CSV has %zu columns, the manifest %zu",
                     run->num_columns, n);
        }
    }
    free(a);
    return RL_OK;
}

static void check_summary(rl_run *run)
{
    json_object *s = run->summary, *v;
    const char *reason;
    if (!str_field(s, "end_reason", &reason)) {
        note(run, RL_REASON_BAD_SUMMARY, "episode_summary.yaml: end_reason missing");
        return;
    }
    if (!json_object_object_get_ex(s, "cycles", &v) || !json_object_is_type(v, json_type_int) ||
        json_object_get_int64(v) < 0)
        note(run, RL_REASON_BAD_SUMMARY, "episode_summary.yaml: cycles missing or not a count");
    /* Absent in summaries written before the check existed: nothing is known then. */
    if (json_object_object_get_ex(s, "timer_nesting_violations", &v)) {
        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0) {
            note(run, RL_REASON_BAD_SUMMARY,
                 "episode_summary.yaml: timer_nesting_violations is not a count");
        } else if (json_object_get_int64(v) > 0) {
            const char *first = NULL;
            if (!str_field(s, "first_nesting_violation", &first))
                first = "not named";
            note(run, RL_REASON_TIMER_NESTING,
                 "%lld timer interval(s) outside their parent (first: %s); the timer columns "
                 "overlap where the manifest says they nest",
                 (long long)json_object_get_int64(v), first);
        }
    }
}

/* ---- a run's numbers ----------------------------------------------------------------- */

static const char gain_suffix[] = ".RealAccumulatedGain";

/* The last finite value of a column, NaN when none. */
static double last_finite(const rl_run *run, const double *col)
{
    if (col)
        for (size_t i = run->num_rows; i-- > 0;)
            if (isfinite(col[i]))
                return col[i];
    return NAN;
}

/* Adds `layer` (n bytes) to the run's sorted gain layers unless present. */
static int add_gain_layer(rl_run *run, const char *layer, size_t n)
{
    size_t k = 0;
    for (; k < run->num_gain_layers; k++) {
        int c = strncmp(run->gain_layers[k], layer, n);
        if (c == 0 && run->gain_layers[k][n] == '\0')
            return RL_OK;
        if (c > 0 || (c == 0 && run->gain_layers[k][n] != '\0'))
            break;
    }
    char **nl = realloc(run->gain_layers, (run->num_gain_layers + 1) * sizeof *nl);
    if (nl)
        run->gain_layers = nl;
    char *name = nl ? strndup(layer, n) : NULL;
    if (!name)
        return rl_error_set(RL_ENOMEM, "runs: out of memory");
    memmove(nl + k + 1, nl + k, (run->num_gain_layers - k) * sizeof *nl);
    nl[k] = name;
    run->num_gain_layers++;
    return RL_OK;
}

/* Fills the run's end-of-run numbers from the summary, else the CSV (docs/perflog.md). */
static int compute_numbers(rl_run *run)
{
    json_object *per_layer = NULL;
    if (run->summary && (!json_object_object_get_ex(run->summary, "real_accumulated_gain",
                                                    &per_layer) ||
                         !json_object_is_type(per_layer, json_type_object)))
        per_layer = NULL;
    if (per_layer) {
        json_object_object_foreach(per_layer, key, val)
        {
            (void)val;
            if (add_gain_layer(run, key, strlen(key)) != RL_OK)
                return RL_ENOMEM;
        }
    }
    const size_t slen = sizeof gain_suffix - 1;
    for (size_t j = 0; j < run->num_columns && run->column_names; j++) {
        const char *n = run->column_names[j];
        size_t len = strlen(n);
        if (len > slen && strcmp(n + len - slen, gain_suffix) == 0 &&
            add_gain_layer(run, n, len - slen) != RL_OK)
            return RL_ENOMEM;
    }
    run->layer_gains = calloc(run->num_gain_layers ? run->num_gain_layers : 1,
                              sizeof *run->layer_gains);
    if (!run->layer_gains)
        return rl_error_set(RL_ENOMEM, "runs: out of memory");
    run->final_gain = run->num_gain_layers ? 0 : NAN;
    run->final_from_summary = run->num_gain_layers > 0;
    for (size_t k = 0; k < run->num_gain_layers; k++) {
        json_object *v;
        double g = NAN;
        if (per_layer && json_object_object_get_ex(per_layer, run->gain_layers[k], &v) &&
            (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))) {
            g = json_object_get_double(v);
        } else {
            char col[256];
            run->final_from_summary = false;
            if (snprintf(col, sizeof col, "%s%s", run->gain_layers[k], gain_suffix) <
                (int)sizeof col)
                g = last_finite(run, rl_run_column(run, col));
        }
        run->layer_gains[k] = g;
        run->final_gain += g;
    }
    json_object *v;
    run->total_cost = run->summary && json_object_object_get_ex(run->summary, "total_cost", &v) &&
                              (json_object_is_type(v, json_type_double) ||
                               json_object_is_type(v, json_type_int))
                          ? json_object_get_double(v)
                          : last_finite(run, rl_run_column(run, "TotalCost"));
    run->elapsed_s = run->summary &&
                             json_object_object_get_ex(run->summary, "elapsed_wall_time_s", &v) &&
                             (json_object_is_type(v, json_type_double) ||
                              json_object_is_type(v, json_type_int))
                         ? json_object_get_double(v)
                         : last_finite(run, rl_run_column(run, "ElapsedWallTimeSec"));
    if (run->manifest && json_object_object_get_ex(run->manifest, "random_seed", &v) &&
        json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0) {
        run->has_seed = true;
        run->seed = json_object_get_uint64(v);
    }
    return RL_OK;
}

double rl_run_layer_gain(const rl_run *run, const char *layer)
{
    if (!run || !layer)
        return NAN;
    for (size_t k = 0; k < run->num_gain_layers; k++)
        if (strcmp(run->gain_layers[k], layer) == 0)
            return run->layer_gains[k];
    return NAN;
}

/* ---- one run --------------------------------------------------------------------------- */

void rl_run_free(rl_run *run)
{
    if (!run)
        return;
    free(run->path);
    for (size_t i = 0; i < run->num_messages; i++)
        free(run->messages[i]);
    free(run->messages);
    if (run->column_names)
        for (size_t j = 0; j < run->num_columns; j++)
            free(run->column_names[j]);
    free(run->column_names);
    if (run->columns)
        rl_columns_free(run->columns[0]);
    free(run->columns);
    json_object_put(run->manifest);
    json_object_put(run->summary);
    for (size_t i = 0; i < run->num_gain_layers; i++)
        free(run->gain_layers[i]);
    free(run->gain_layers);
    free(run->layer_gains);
    free(run);
}

/* rl_run_load with filled-in limits and the caller's read buffer. */
int run_load(const char *dir, const rl_run_limits *limits, struct file_buf *fb,
             rl_run **out)
{
    rl_run_limits lim = *limits;
    rl_run *run = calloc(1, sizeof *run);
    if (!run || !(run->path = strdup(dir))) {
        free(run);
        return rl_error_set(RL_ENOMEM, "runs: out of memory");
    }
    int rc = load_csv(run, dir, &lim, fb);
    if (rc == RL_OK) {
        run->manifest = load_yaml(run, dir, "run_manifest.yaml", RL_REASON_NO_MANIFEST,
                                  RL_REASON_BAD_MANIFEST, &lim);
        if (run->manifest)
            rc = check_manifest(run);
    }
    if (rc == RL_OK) {
        run->summary = load_yaml(run, dir, "episode_summary.yaml", RL_REASON_NO_SUMMARY,
                                 RL_REASON_BAD_SUMMARY, &lim);
        if (run->summary)
            check_summary(run);
    }
    if (rc == RL_OK)
        rc = compute_numbers(run);
    if (rc != RL_OK) {
        rl_run_free(run);
        return rc;
    }
    const uint32_t unusable = (1u << RL_REASON_NO_CSV) | (1u << RL_REASON_CSV_UNREADABLE) |
                              (1u << RL_REASON_CSV_EMPTY) | (1u << RL_REASON_CSV_TOO_LARGE) |
                              (1u << RL_REASON_NO_ROWS);
    run->status = (run->reasons & unusable) ? RL_RUN_SKIPPED
                  : run->reasons            ? RL_RUN_DEGRADED
                                            : RL_RUN_PARSED;
    *out = run;
    return RL_OK;
}

int rl_run_load(const char *dir, const rl_run_limits *limits, rl_run **out)
{
    if (!out)
        return rl_error_set(RL_EINVAL, "runs: no output");
    *out = NULL;
    if (!dir)
        return rl_error_set(RL_EINVAL, "runs: no directory");
    rl_run_limits lim;
    limits_fill(&lim, limits);
    struct file_buf fb = {0};
    int rc = run_load(dir, &lim, &fb, out);
    file_buf_release(&fb);
    return rc;
}

const double *rl_run_column(const rl_run *run, const char *name)
{
    if (!run || !name || !run->columns)
        return NULL;
    for (size_t j = 0; j < run->num_columns; j++)
        if (strcmp(run->column_names[j], name) == 0)
            return run->columns[j];
    return NULL;
}
