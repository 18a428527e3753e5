/* Benchmark results out: the OMPL log, the OMPL-schema SQLite database and CSV. Both the
 * log and the database are made from one OMPL log model (formats/ompl/ompl_log.h), so the
 * database runlab writes equals the one OMPL's parser makes of runlab's log. */
#include "engines/bench_internal.h"
#include "formats/ompl/ompl_log.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"
#include "runlab/time.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *dupf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

/* Block text as the reader returns it: universal newlines, and a final newline. */
static char *block_text(const char *in)
{
    size_t n = strlen(in);
    char *out = malloc(n + 2), *o = out;
    if (!out)
        return NULL;
    for (const char *p = in; *p; p++) {
        if (*p == '\r') {
            *o++ = '\n';
            if (p[1] == '\n')
                p++;
        } else {
            *o++ = *p;
        }
    }
    if (o > out && o[-1] != '\n')
        *o++ = '\n';
    *o = '\0';
    return out;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void fmt_value(rl_bench_type type, double v, char *buf, size_t cap)
{
    if (type == RL_BENCH_REAL || isnan(v) || isinf(v))
        rl_bench_fmt_real(v, buf, cap);
    else
        snprintf(buf, cap, "%lld", (long long)llround(v));
}

typedef struct decl {
    char *line; /* "name TYPE" */
    const char *name;
    size_t index; /* progress: column in the samples (0 = time) */
} decl;

static int cmp_decl(const void *a, const void *b)
{
    return strcmp(((const decl *)a)->line, ((const decl *)b)->line);
}

static int add_planner(rl_ompl_log *log, const rl_bench_planner_data *pd)
{
    rl_ompl_planner *op;
    int rc = rl_ompl_log_add_planner(log, &op);
    if (rc < 0)
        return rc;
    if (!(op->name = strdup(pd->name)))
        return rl_error_set(RL_ENOMEM, "out of memory");
    for (size_t i = 0; i < pd->n_settings && rc == RL_OK; i++)
        rc = rl_strv_push_owned(&op->common,
                                dupf("%s = %s", pd->settings[i].name, pd->settings[i].value));
    if (rc < 0)
        return rc;
    if (op->common.n) /* qsort's base may not be NULL, even for no elements */
        qsort(op->common.v, op->common.n, sizeof(char *), cmp_str);

    /* the union of run property names, sorted as OMPL sorts its "name TYPE" keys */
    size_t nd = 0, capd = 16;
    decl *d = malloc(capd * sizeof *d);
    if (!d)
        return rl_error_set(RL_ENOMEM, "out of memory");
    for (size_t r = 0; r < pd->n_runs && rc == RL_OK; r++)
        for (size_t i = 0; i < pd->runs[r].n_props && rc == RL_OK; i++) {
            const rl_bench_prop *pr = &pd->runs[r].props[i];
            size_t k;
            for (k = 0; k < nd; k++)
                if (strcmp(d[k].name, pr->name) == 0)
                    break;
            if (k < nd)
                continue;
            if (nd == capd) {
                decl *nd2 = realloc(d, 2 * capd * sizeof *d);
                if (!nd2) {
                    rc = rl_error_set(RL_ENOMEM, "out of memory");
                    break;
                }
                d = nd2;
                capd *= 2;
            }
            d[nd].line = dupf("%s %s", pr->name, rl_bench_type_name(pr->type));
            d[nd].name = pr->name;
            if (!d[nd++].line)
                rc = rl_error_set(RL_ENOMEM, "out of memory");
        }
    if (rc == RL_OK && nd)
        qsort(d, nd, sizeof *d, cmp_decl);
    for (size_t k = 0; k < nd && rc == RL_OK; k++)
        rc = rl_strv_push(&op->props, d[k].line);
    for (size_t r = 0; r < pd->n_runs && rc == RL_OK; r++) {
        size_t len = 0;
        for (size_t k = 0; k < nd; k++)
            for (size_t i = 0; i < pd->runs[r].n_props; i++)
                if (strcmp(pd->runs[r].props[i].name, d[k].name) == 0)
                    len += strlen(pd->runs[r].props[i].value);
        char *line = malloc(len + 2 * nd + 1), *o = line;
        if (!line) {
            rc = rl_error_set(RL_ENOMEM, "out of memory");
            break;
        }
        for (size_t k = 0; k < nd; k++) {
            for (size_t i = 0; i < pd->runs[r].n_props; i++)
                if (strcmp(pd->runs[r].props[i].name, d[k].name) == 0) {
                    size_t l = strlen(pd->runs[r].props[i].value);
                    memcpy(o, pd->runs[r].props[i].value, l);
                    o += l;
                    break;
                }
            *o++ = ';';
            *o++ = ' ';
        }
        *o = '\0';
        rc = rl_strv_push_owned(&op->runs, line);
    }
    for (size_t k = 0; k < nd; k++)
        free(d[k].line);
    free(d);
    if (rc < 0 || pd->n_progress == 0)
        return rc;

    /* progress: the planner's properties and "time", sorted */
    size_t np = pd->n_progress + 1;
    decl *pdl = calloc(np, sizeof *pdl);
    if (!pdl)
        return rl_error_set(RL_ENOMEM, "out of memory");
    rl_bench_type *types = malloc(np * sizeof *types);
    if (!types) {
        free(pdl);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    pdl[0] = (decl){dupf("time REAL"), "time", 0};
    types[0] = RL_BENCH_REAL;
    for (size_t k = 0; k < pd->n_progress; k++) {
        pdl[k + 1] =
            (decl){dupf("%s %s", pd->progress_names[k], rl_bench_type_name(pd->progress_types[k])),
                   pd->progress_names[k], k + 1};
        types[k + 1] = pd->progress_types[k];
    }
    for (size_t k = 0; k < np; k++)
        if (!pdl[k].line)
            rc = rl_error_set(RL_ENOMEM, "out of memory");
    if (rc == RL_OK)
        qsort(pdl, np, sizeof *pdl, cmp_decl);
    op->has_progress = true;
    for (size_t k = 0; k < np && rc == RL_OK; k++)
        rc = rl_strv_push(&op->progress_props, pdl[k].line);
    for (size_t r = 0; r < pd->n_runs && rc == RL_OK; r++) {
        const rl_bench_run_data *rd = &pd->runs[r];
        size_t cap = rd->n_samples * np * 32 + 1;
        char *line = malloc(cap), *o = line;
        if (!line) {
            rc = rl_error_set(RL_ENOMEM, "out of memory");
            break;
        }
        *o = '\0';
        for (size_t s = 0; s < rd->n_samples; s++) {
            for (size_t k = 0; k < np; k++) {
                char v[32];
                size_t col = pdl[k].index;
                fmt_value(types[col], rd->samples[s * np + col], v, sizeof v);
                o += snprintf(o, cap - (size_t)(o - line), "%s,", v);
            }
            o += snprintf(o, cap - (size_t)(o - line), ";");
        }
        rc = rl_strv_push_owned(&op->progress, line);
    }
    for (size_t k = 0; k < np; k++)
        free(pdl[k].line);
    free(pdl);
    free(types);
    return rc;
}

static int to_log(const rl_bench_experiment *e, rl_ompl_log *log)
{
    memset(log, 0, sizeof *log);
    char date[32] = "unknown";
    time_t secs = (time_t)(e->start_ns / 1000000000);
    struct tm tm;
    if (gmtime_r(&secs, &tm))
        strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", &tm);
    const char *ver = e->version ? e->version : "runlab";
    const char *sp = strchr(ver, ' ');
    log->version_line =
        sp ? dupf("%.*s version %s", (int)(sp - ver), ver, sp + 1) : dupf("%s version ", ver);
    log->experiment_line = dupf("Experiment %s", e->name);
    log->host_line = dupf("Running on %s", e->host && *e->host ? e->host : "unknown");
    log->date_line = dupf("Starting at %s", date);
    log->setup = block_text(e->setup_info ? e->setup_info : "");
    log->cpuinfo = e->cpu_info ? block_text(e->cpu_info) : NULL;
    log->seed_line = dupf("%" PRIu64 " is the random seed", e->seed);
    log->time_line = dupf("%.10g seconds per run", e->max_time);
    log->mem_line = dupf("%.10g MB per run", e->max_mem);
    log->runs_line = dupf("%u runs per planner", e->run_count);
    log->total_line = dupf("%.10g seconds spent to collect the data", e->total_duration);
    if (!log->version_line || !log->experiment_line || !log->host_line || !log->date_line ||
        !log->setup || (e->cpu_info && !log->cpuinfo) || !log->seed_line || !log->time_line ||
        !log->mem_line || !log->runs_line || !log->total_line) {
        rl_ompl_log_free(log);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    int rc = RL_OK;
    for (size_t i = 0; i < e->n_params && rc == RL_OK; i++)
        rc = rl_strv_push_owned(&log->exp_props,
                                dupf("%s %s = %s", e->params[i].name,
                                     rl_bench_type_name(e->params[i].type), e->params[i].value));
    if (rc == RL_OK && log->exp_props.n)
        qsort(log->exp_props.v, log->exp_props.n, sizeof(char *), cmp_str);
    char en[512] = "status";
    for (int i = 0; i < RL_RUN_STATUS_COUNT; i++) {
        strcat(en, "|");
        strcat(en, rl_bench_status_name((rl_bench_status)i));
    }
    if (rc == RL_OK)
        rc = rl_strv_push(&log->enums, en);
    for (size_t i = 0; i < e->n_planners && rc == RL_OK; i++)
        rc = add_planner(log, &e->planners[i]);
    if (rc < 0)
        rl_ompl_log_free(log);
    return rc;
}

int rl_bench_write_log(const rl_bench_experiment *e, const char *path)
{
    rl_ompl_log log;
    int rc = to_log(e, &log);
    if (rc < 0)
        return rc;
    char *text;
    size_t len;
    rc = rl_ompl_log_format(&log, &text, &len);
    rl_ompl_log_free(&log);
    if (rc < 0)
        return rc;
    rc = rl_fs_write_atomic(path, text, len, 0644);
    free(text);
    return rc;
}

int rl_bench_write_db(const rl_bench_experiment *e, const char *db_path)
{
    rl_ompl_log log;
    int rc = to_log(e, &log);
    if (rc < 0)
        return rc;
    sqlite3 *db;
    rc = rl_ompl_db_open(db_path, &db);
    if (rc == RL_OK) {
        rc = rl_ompl_db_add_log(db, &log, e->name);
        int rc2 = rl_ompl_db_finish(db);
        if (rc == RL_OK)
            rc = rc2;
    }
    rl_ompl_log_free(&log);
    return rc;
}

int rl_bench_default_log_name(const rl_bench_experiment *e, char *out, size_t cap)
{
    char stamp[RL_TIME_COMPACT_LEN], host[RL_NAME_MAX + 1];
    int rc = rl_time_format_compact(e->start_ns, stamp, sizeof stamp);
    if (rc < 0)
        return rc;
    rl_path_sanitize_name(e->host && *e->host ? e->host : "unknown", host);
    if ((size_t)snprintf(out, cap, "runlab_%s_%s.log", host, stamp) >= cap)
        return rl_error_set(RL_ERANGE, "log name longer than %zu bytes", cap);
    return RL_OK;
}

/* ---- CSV ------------------------------------------------------------------------------ */

static void csv_field(FILE *f, const char *s, bool first)
{
    if (!first)
        fputc(',', f);
    if (strpbrk(s, ",\"\n\r")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
}

int rl_bench_write_csv(const rl_bench_experiment *e, const char *path)
{
    rl_strv cols = {0};
    int rc = RL_OK;
    for (size_t p = 0; p < e->n_planners && rc == RL_OK; p++)
        for (size_t r = 0; r < e->planners[p].n_runs && rc == RL_OK; r++)
            for (size_t i = 0; i < e->planners[p].runs[r].n_props && rc == RL_OK; i++) {
                const char *n = e->planners[p].runs[r].props[i].name;
                bool have = false;
                for (size_t k = 0; k < cols.n && !have; k++)
                    have = strcmp(cols.v[k], n) == 0;
                if (!have)
                    rc = rl_strv_push(&cols, n);
            }
    if (rc < 0) {
        rl_strv_free(&cols);
        return rc;
    }
    if (cols.n)
        qsort(cols.v, cols.n, sizeof(char *), cmp_str);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        rl_strv_free(&cols);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    csv_field(f, "experiment", true);
    csv_field(f, "planner", false);
    csv_field(f, "run", false);
    csv_field(f, "status name", false);
    csv_field(f, "reason", false);
    for (size_t k = 0; k < cols.n; k++)
        csv_field(f, cols.v[k], false);
    fputc('\n', f);
    for (size_t p = 0; p < e->n_planners; p++)
        for (size_t r = 0; r < e->planners[p].n_runs; r++) {
            const rl_bench_run_data *rd = &e->planners[p].runs[r];
            char num[32];
            snprintf(num, sizeof num, "%zu", r);
            csv_field(f, e->name, true);
            csv_field(f, e->planners[p].name, false);
            csv_field(f, num, false);
            csv_field(f, rl_bench_status_name(rd->status), false);
            csv_field(f, rd->reason ? rd->reason : "", false);
            for (size_t k = 0; k < cols.n; k++) {
                const char *v = "";
                for (size_t i = 0; i < rd->n_props; i++)
                    if (strcmp(rd->props[i].name, cols.v[k]) == 0)
                        v = rd->props[i].value;
                csv_field(f, v, false);
            }
            fputc('\n', f);
        }
    fclose(f);
    rl_strv_free(&cols);
    rc = buf ? rl_fs_write_atomic(path, buf, len, 0644) : rl_error_set(RL_ENOMEM, "out of memory");
    free(buf);
    return rc;
}

/* ---- JSON ----------------------------------------------------------------------------- */

static json_object *typed_value(const rl_bench_prop *p)
{
    char *end;
    if (!*p->value)
        return NULL;
    if (p->type == RL_BENCH_REAL) {
        double d = strtod(p->value, &end);
        return *end || !isfinite(d) ? json_object_new_string(p->value) : json_object_new_double(d);
    }
    if (p->type == RL_BENCH_INTEGER || p->type == RL_BENCH_ENUM) {
        long long v = strtoll(p->value, &end, 10);
        return *end ? json_object_new_string(p->value) : json_object_new_int64(v);
    }
    if (p->type == RL_BENCH_BOOLEAN)
        return json_object_new_boolean(strcmp(p->value, "0") != 0);
    return json_object_new_string(p->value);
}

int rl_bench_write_json(const rl_bench_experiment *e, const char *path)
{
    json_object *root = json_object_new_object();
    if (!root)
        return rl_error_set(RL_ENOMEM, "out of memory");
    char iso[RL_TIME_ISO_LEN] = "";
    rl_time_format_iso(e->start_ns, iso, sizeof iso);
    json_object_object_add(root, "experiment", json_object_new_string(e->name));
    json_object_object_add(root, "version", json_object_new_string(e->version ? e->version : ""));
    json_object_object_add(root, "host", json_object_new_string(e->host ? e->host : ""));
    json_object_object_add(root, "start", json_object_new_string(iso));
    json_object_object_add(root, "total_duration", json_object_new_double(e->total_duration));
    json_object_object_add(root, "seed", json_object_new_int64((int64_t)e->seed));
    json_object_object_add(root, "max_time", json_object_new_double(e->max_time));
    json_object_object_add(root, "max_mem", json_object_new_double(e->max_mem));
    json_object_object_add(root, "run_count", json_object_new_int64(e->run_count));
    json_object_object_add(root, "time_between_updates",
                           json_object_new_double(e->time_between_updates));
    json_object_object_add(root, "setup",
                           json_object_new_string(e->setup_info ? e->setup_info : ""));
    json_object_object_add(root, "cpu_info",
                           json_object_new_string(e->cpu_info ? e->cpu_info : ""));
    json_object *params = json_object_new_object();
    for (size_t i = 0; i < e->n_params; i++)
        json_object_object_add(params, e->params[i].name, typed_value(&e->params[i]));
    json_object_object_add(root, "parameters", params);
    json_object *planners = json_object_new_array();
    for (size_t p = 0; p < e->n_planners; p++) {
        const rl_bench_planner_data *pd = &e->planners[p];
        json_object *jp = json_object_new_object(), *set = json_object_new_object();
        json_object_object_add(jp, "name", json_object_new_string(pd->name));
        for (size_t i = 0; i < pd->n_settings; i++)
            json_object_object_add(set, pd->settings[i].name,
                                   json_object_new_string(pd->settings[i].value));
        json_object_object_add(jp, "settings", set);
        json_object *pn = json_object_new_array();
        json_object_array_add(pn, json_object_new_string("time"));
        for (size_t i = 0; i < pd->n_progress; i++)
            json_object_array_add(pn, json_object_new_string(pd->progress_names[i]));
        json_object_object_add(jp, "progress_columns", pn);
        json_object *runs = json_object_new_array();
        for (size_t r = 0; r < pd->n_runs; r++) {
            const rl_bench_run_data *rd = &pd->runs[r];
            json_object *jr = json_object_new_object(), *props = json_object_new_object();
            json_object_object_add(jr, "status",
                                   json_object_new_string(rl_bench_status_name(rd->status)));
            json_object_object_add(jr, "reason",
                                   rd->reason ? json_object_new_string(rd->reason) : NULL);
            for (size_t i = 0; i < rd->n_props; i++)
                json_object_object_add(props, rd->props[i].name, typed_value(&rd->props[i]));
            json_object_object_add(jr, "properties", props);
            json_object *samples = json_object_new_array();
            size_t cols = pd->n_progress + 1;
            for (size_t s = 0; s < rd->n_samples; s++) {
                json_object *row = json_object_new_array();
                for (size_t c = 0; c < cols; c++) {
                    double v = rd->samples[s * cols + c];
                    json_object_array_add(row, isfinite(v) ? json_object_new_double(v) : NULL);
                }
                json_object_array_add(samples, row);
            }
            json_object_object_add(jr, "progress", samples);
            json_object_array_add(runs, jr);
        }
        json_object_object_add(jp, "runs", runs);
        json_object_array_add(planners, jp);
    }
    json_object_object_add(root, "planners", planners);
    int rc = rl_json_write_file(path, root);
    json_object_put(root);
    return rc;
}
