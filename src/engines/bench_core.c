/* The benchmark object (experiment parameters, planners, events), the run handle that
 * planners use inside their run process, value and name checks, and executable planners.
 * The harness that runs everything is in bench_harness.c, the outputs in bench_output.c. */
#include "engines/bench_internal.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/time.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sqlite3.h>
#include <string.h>

static const char *const TYPE_NAMES[] = {"BOOLEAN", "INTEGER", "REAL", "ENUM", "TEXT"};

const char *rl_bench_type_name(rl_bench_type type)
{
    return (unsigned)type < 5 ? TYPE_NAMES[type] : "?";
}

int rl_bench_type_parse(const char *word, rl_bench_type *out)
{
    for (int i = 0; i < 5; i++)
        if (strcmp(word, TYPE_NAMES[i]) == 0) {
            *out = (rl_bench_type)i;
            return RL_OK;
        }
    if (strcmp(word, "DOUBLE") == 0) {
        *out = RL_BENCH_REAL;
        return RL_OK;
    }
    if (strcmp(word, "STRING") == 0) {
        *out = RL_BENCH_TEXT;
        return RL_OK;
    }
    return rl_error_set(RL_EINVAL, "type '%s': expected BOOLEAN, INTEGER, REAL, ENUM or TEXT",
                        word);
}

static const char *const STATUS_NAMES[RL_RUN_STATUS_COUNT] = {
    "Unknown status", "Invalid start",        "Invalid goal",   "Unrecognized goal type",
    "Timeout",        "Approximate solution", "Exact solution", "Crash",
    "Abort",          "Infeasible",           "Out of memory",  "Error"};
static const char *const STATUS_WORDS[RL_RUN_STATUS_COUNT] = {
    "unknown", "invalid-start", "invalid-goal", "unrecognized-goal", "timeout",       "approximate",
    "exact",   "crash",         "abort",        "infeasible",        "out-of-memory", "error"};

const char *rl_bench_status_name(rl_bench_status status)
{
    return (unsigned)status < RL_RUN_STATUS_COUNT ? STATUS_NAMES[status] : "Unknown status";
}

const char *rl_bench_status_word(rl_bench_status s)
{
    return (unsigned)s < RL_RUN_STATUS_COUNT ? STATUS_WORDS[s] : "unknown";
}

int rl_bench_status_from_word(const char *word, rl_bench_status *out)
{
    for (int i = 0; i < RL_RUN_STATUS_COUNT; i++)
        if (strcmp(word, STATUS_WORDS[i]) == 0) {
            *out = (rl_bench_status)i;
            return RL_OK;
        }
    return rl_error_set(RL_EINVAL, "unknown status '%s'", word);
}

void rl_bench_fmt_real(double v, char *buf, size_t cap)
{
    if (isnan(v))
        snprintf(buf, cap, "nan");
    else if (isinf(v))
        snprintf(buf, cap, v > 0 ? "inf" : "-inf");
    else
        snprintf(buf, cap, "%.10g", v);
}

uint64_t rl_bench_mix_seed(uint64_t seed, size_t planner, size_t run)
{
    /* splitmix64 of the three, so neighbouring runs get unrelated streams */
    uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (1 + (uint64_t)planner * 1000003 + run);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Column names the database defines itself: a property of that name would clash. */
static const char *const RESERVED[] = {"id", "experimentid", "plannerid", "runid"};

int rl_bench_check_name(const char *name, const char *what)
{
    if (!name || !*name)
        return rl_error_set(RL_EINVAL, "%s: empty name", what);
    size_t len = strlen(name);
    if (len > 127)
        return rl_error_set(RL_EINVAL, "%s '%.40s...': longer than 127 bytes", what, name);
    for (const char *p = name; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7f)
            return rl_error_set(RL_EINVAL, "%s '%s': control character at byte %zu", what, name,
                                (size_t)(p - name));
        if (strchr(";|,=\"'", c))
            return rl_error_set(RL_EINVAL,
                                "%s '%s': '%c' would break the OMPL log format or its SQL", what,
                                name, c);
    }
    if (name[0] == ' ' || name[len - 1] == ' ')
        return rl_error_set(RL_EINVAL, "%s '%s': leading or trailing space", what, name);
    for (size_t i = 0; i < sizeof RESERVED / sizeof *RESERVED; i++)
        if (strcmp(name, RESERVED[i]) == 0)
            return rl_error_set(RL_EINVAL, "%s '%s': reserved by the results database", what, name);
    return RL_OK;
}

/* OMPL's ompl_benchmark_statistics.py makes a column of every run property, progress
 * property and experiment parameter, with its spaces turned into '_' and without quoting
 * it: the name must then be a plain SQL identifier and no SQL keyword. */
int rl_bench_check_column_name(const char *name, const char *what)
{
    int rc = rl_bench_check_name(name, what);
    if (rc < 0)
        return rc;
    if (name[0] >= '0' && name[0] <= '9')
        return rl_error_set(RL_EINVAL,
                            "%s '%s': starts with a digit, which OMPL's log parser cannot take "
                            "as a column name",
                            what, name);
    for (const char *p = name; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (!(c == ' ' || c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
              (c >= 'A' && c <= 'Z')))
            return rl_error_set(RL_EINVAL,
                                "%s '%s': '%c' at byte %zu; OMPL's log parser takes only "
                                "letters, digits, '_' and spaces in a column name",
                                what, name, c, (size_t)(p - name));
    }
    char col[128];
    snprintf(col, sizeof col, "%s", name);
    for (char *p = col; *p; p++)
        if (*p == ' ')
            *p = '_';
    if (sqlite3_keyword_check(col, (int)strlen(col)))
        return rl_error_set(RL_EINVAL, "%s '%s': '%s' is an SQL keyword, which OMPL's log parser "
                                       "cannot take as a column name",
                            what, name, col);
    return RL_OK;
}

void rl_bench_column_name_map(const char *name, char *out, size_t cap)
{
    size_t n = 0;
    if (cap < 4)
        return;
    if (name[0] >= '0' && name[0] <= '9')
        out[n++] = '_';
    for (const char *p = name; *p && n + 2 < cap; p++) {
        unsigned char c = (unsigned char)*p;
        bool ok = c == ' ' || c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                  (c >= 'A' && c <= 'Z');
        out[n++] = ok ? (char)c : '_';
    }
    out[n] = '\0';
    char col[256];
    snprintf(col, sizeof col, "%s", out);
    for (char *p = col; *p; p++)
        if (*p == ' ')
            *p = '_';
    if (sqlite3_keyword_check(col, (int)strlen(col)) && n + 1 < cap) {
        out[n++] = '_';
        out[n] = '\0';
    }
}

int rl_bench_check_value(const char *value, const char *what)
{
    if (!value)
        return rl_error_set(RL_EINVAL, "%s: NULL value", what);
    for (const char *p = value; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7f || c == ';')
            return rl_error_set(RL_EINVAL, "%s: value '%s' has a %s", what, value,
                                c == ';' ? "';' (the log's separator)" : "control character");
    }
    return RL_OK;
}

int rl_bench_props_set(rl_bench_prop **props, size_t *n, size_t *cap, const char *name,
                       rl_bench_type type, const char *value)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*props)[i].name, name) == 0) {
            char *v = strdup(value);
            if (!v)
                return rl_error_set(RL_ENOMEM, "out of memory");
            free((*props)[i].value);
            (*props)[i].value = v;
            (*props)[i].type = type;
            return RL_OK;
        }
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        rl_bench_prop *np = realloc(*props, nc * sizeof *np);
        if (!np)
            return rl_error_set(RL_ENOMEM, "out of memory");
        *props = np;
        *cap = nc;
    }
    char *nm = strdup(name), *v = strdup(value);
    if (!nm || !v) {
        free(nm);
        free(v);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    (*props)[(*n)++] = (rl_bench_prop){nm, type, v};
    return RL_OK;
}

void rl_bench_props_free(rl_bench_prop *props, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(props[i].name);
        free(props[i].value);
    }
    free(props);
}

void rl_bench_run_data_free(rl_bench_run_data *r)
{
    free(r->reason);
    rl_bench_props_free(r->props, r->n_props);
    free(r->samples);
    memset(r, 0, sizeof *r);
}

void rl_bench_experiment_clear(rl_bench_experiment *e)
{
    free(e->name);
    rl_bench_props_free(e->params, e->n_params);
    for (size_t i = 0; i < e->n_planners; i++) {
        rl_bench_planner_data *p = &e->planners[i];
        free(p->name);
        rl_bench_props_free(p->settings, p->n_settings);
        for (size_t k = 0; k < p->n_progress; k++)
            free(p->progress_names[k]);
        free(p->progress_names);
        free(p->progress_types);
        for (size_t r = 0; r < p->n_runs; r++)
            rl_bench_run_data_free(&p->runs[r]);
        free(p->runs);
    }
    free(e->planners);
    rl_bench_props_free(e->renamed, e->n_renamed);
    free(e->setup_info);
    free(e->host);
    free(e->cpu_info);
    free(e->process_tree);
    free(e->version);
    memset(e, 0, sizeof *e);
}

/* ---- the run handle -------------------------------------------------------------- */

bool rl_bench_run_should_stop(const rl_bench_run *run)
{
    return rl_mono_ns() - run->start_ns >= run->limit_ns;
}

double rl_bench_run_elapsed(const rl_bench_run *run)
{
    return (double)(rl_mono_ns() - run->start_ns) / 1e9;
}

uint64_t rl_bench_run_seed(const rl_bench_run *run)
{
    return run->seed;
}

int rl_bench_run_progress(rl_bench_run *run, size_t index, double value)
{
    if (index >= run->n_progress)
        return rl_error_set(RL_ERANGE, "progress property %zu of %zu", index, run->n_progress);
    rl_bench_shm *s = run->shm;
    if (!s)
        return RL_OK;
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    while (atomic_flag_test_and_set_explicit(&s->wlock, memory_order_acquire))
        ;
    uint64_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
    atomic_store_explicit(&s->seq, seq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&s->bits[index], bits, memory_order_relaxed);
    atomic_fetch_or_explicit(&s->published, 1ULL << index, memory_order_relaxed);
    atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
    atomic_flag_clear_explicit(&s->wlock, memory_order_release);
    return RL_OK;
}

int rl_bench_run_set(rl_bench_run *run, const char *name, rl_bench_type type, const char *value)
{
    int rc = rl_bench_check_column_name(name, "run property");
    if (rc == RL_OK)
        rc = rl_bench_check_value(value, name);
    if (rc == RL_OK && (unsigned)type > RL_BENCH_TEXT)
        rc = rl_error_set(RL_EINVAL, "run property '%s': bad type %d", name, (int)type);
    if (rc < 0)
        return rc;
    return rl_bench_props_set(&run->props, &run->n_props, &run->cap_props, name, type, value);
}

int rl_bench_run_set_real(rl_bench_run *run, const char *name, double value)
{
    char buf[64];
    rl_bench_fmt_real(value, buf, sizeof buf);
    return rl_bench_run_set(run, name, RL_BENCH_REAL, buf);
}

int rl_bench_run_set_int(rl_bench_run *run, const char *name, int64_t value)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, value);
    return rl_bench_run_set(run, name, RL_BENCH_INTEGER, buf);
}

int rl_bench_run_set_bool(rl_bench_run *run, const char *name, bool value)
{
    return rl_bench_run_set(run, name, RL_BENCH_BOOLEAN, value ? "1" : "0");
}

/* ---- the benchmark object ---------------------------------------------------------- */

void rl_bench_request_init(rl_bench_request *req)
{
    memset(req, 0, sizeof *req);
    req->max_time = 5.0;
    req->max_mem = 4096.0;
    req->run_count = 100;
    req->time_between_updates = 0.05;
    req->display_progress = true;
    req->save_console_output = true;
    req->simplify = true;
    req->jobs = 1;
    req->grace = 0.1;
    req->console_limit = (size_t)1 << 20;
}

rl_bench *rl_bench_new(const char *name, void *problem, const char *setup_info)
{
    if (rl_bench_check_name(name, "experiment name") < 0)
        return NULL;
    rl_bench *b = calloc(1, sizeof *b);
    if (!b) {
        rl_error_set(RL_ENOMEM, "out of memory");
        return NULL;
    }
    b->name = strdup(name);
    b->setup_info = strdup(setup_info ? setup_info : "");
    b->problem = problem;
    pthread_mutex_init(&b->lock, NULL);
    if (!b->name || !b->setup_info) {
        rl_bench_free(b);
        rl_error_set(RL_ENOMEM, "out of memory");
        return NULL;
    }
    if (strstr(b->setup_info, "|>>>") || strstr(b->setup_info, "<<<|")) {
        rl_bench_free(b);
        rl_error_set(RL_EINVAL, "setup info must not contain '<<<|' or '|>>>' (log block marks)");
        return NULL;
    }
    return b;
}

void rl_bench_free_done(rl_bench *b)
{
    if (b->done)
        for (size_t i = 0; i < b->results.n_planners; i++)
            free(b->done[i]);
    free(b->done);
    free(b->done_cap);
    b->done = NULL;
    b->done_cap = NULL;
    for (size_t i = 0; i < b->n_prop_names; i++)
        free(b->prop_names[i]);
    free(b->prop_names);
    b->prop_names = NULL;
    b->n_prop_names = b->cap_prop_names = 0;
}

void rl_bench_free(rl_bench *b)
{
    if (!b)
        return;
    rl_bench_clear_planners(b);
    rl_bench_free_done(b);
    rl_bench_experiment_clear(&b->results);
    rl_bench_props_free(b->params, b->n_params);
    free(b->name);
    free(b->setup_info);
    pthread_mutex_destroy(&b->lock);
    free(b);
}

int rl_bench_add_param(rl_bench *b, const char *name, rl_bench_type type, const char *value)
{
    int rc = rl_bench_check_column_name(name, "experiment parameter");
    if (rc == RL_OK)
        rc = rl_bench_check_value(value, name);
    if (rc < 0)
        return rc;
    if (strstr(name, " = ") || strstr(value, " = "))
        return rl_error_set(RL_EINVAL, "experiment parameter '%s': ' = ' is the log's separator",
                            name);
    if (rl_bench_param(b, name))
        return rl_error_set(RL_EEXIST, "experiment parameter '%s' given twice", name);
    size_t cap = b->n_params;
    return rl_bench_props_set(&b->params, &b->n_params, &cap, name, type, value);
}

size_t rl_bench_param_count(const rl_bench *b)
{
    return b->n_params;
}

const rl_bench_prop *rl_bench_param(const rl_bench *b, const char *name)
{
    for (size_t i = 0; i < b->n_params; i++)
        if (strcmp(b->params[i].name, name) == 0)
            return &b->params[i];
    return NULL;
}

static void planner_free(rl_bench_planner *p)
{
    if (p && p->free)
        p->free(p->self);
}

int rl_bench_add_planner(rl_bench *b, rl_bench_planner *p)
{
    if (!p)
        return rl_error_set(RL_EINVAL, "NULL planner");
    int rc = rl_bench_check_name(p->name, "planner name");
    if (rc == RL_OK && !p->solve && !p->exec_argv)
        rc = rl_error_set(RL_EINVAL, "planner '%s' has no solve", p->name);
    if (rc == RL_OK && p->n_progress > RL_BENCH_MAX_PROGRESS)
        rc = rl_error_set(RL_ERANGE, "planner '%s': more than %d progress properties", p->name,
                          RL_BENCH_MAX_PROGRESS);
    for (size_t i = 0; rc == RL_OK && i < p->n_progress; i++) {
        rc = rl_bench_check_column_name(p->progress_names[i], "progress property");
        if (rc == RL_OK && strcmp(p->progress_names[i], "time") == 0)
            rc = rl_error_set(RL_EINVAL,
                              "planner '%s': progress property 'time' is the "
                              "harness's own",
                              p->name);
    }
    for (size_t i = 0; rc == RL_OK && i < b->n_planners; i++)
        if (strcmp(b->planners[i]->name, p->name) == 0)
            rc = rl_error_set(RL_EEXIST, "planner '%s' added twice", p->name);
    rl_bench_planner **np = NULL;
    if (rc == RL_OK) {
        np = realloc(b->planners, (b->n_planners + 1) * sizeof *np);
        if (!np)
            rc = rl_error_set(RL_ENOMEM, "out of memory");
    }
    if (rc < 0) {
        planner_free(p);
        return rc;
    }
    b->planners = np;
    b->planners[b->n_planners++] = p;
    return RL_OK;
}

size_t rl_bench_planner_count(const rl_bench *b)
{
    return b->n_planners;
}

void rl_bench_clear_planners(rl_bench *b)
{
    for (size_t i = 0; i < b->n_planners; i++)
        planner_free(b->planners[i]);
    free(b->planners);
    b->planners = NULL;
    b->n_planners = 0;
}

void rl_bench_set_seed(rl_bench *b, uint64_t seed)
{
    b->seed = seed;
}

void rl_bench_set_events(rl_bench *b, const rl_bench_events *events)
{
    if (events)
        b->events = *events;
    else
        memset(&b->events, 0, sizeof b->events);
}

void rl_bench_get_progress(rl_bench *b, rl_bench_progress *out)
{
    pthread_mutex_lock(&b->lock);
    *out = b->progress;
    pthread_mutex_unlock(&b->lock);
}

const rl_bench_experiment *rl_bench_results(const rl_bench *b)
{
    return &b->results;
}

/* ---- executable planners ---------------------------------------------------------- */

typedef struct exec_planner {
    rl_bench_planner base;
    char *name;
    char **progress_names;
    rl_bench_type *progress_types;
    rl_bench_prop *settings; /* as the spec gave them (plannerConfigs) */
    size_t n_settings, cap_settings;
} exec_planner;

static void exec_free(void *self);

static void exec_settings(void *self, rl_bench_setting_fn emit, void *ctx)
{
    exec_planner *e = self;
    for (size_t i = 0; i < e->n_settings; i++)
        emit(ctx, e->settings[i].name, e->settings[i].value);
}

int rl_bench_planner_exec_settings(rl_bench_planner *p, const char *const *keys,
                                   const char *const *values, const char *const *json_values,
                                   size_t n)
{
    if (!p || !p->exec_argv || p->free != exec_free)
        return rl_error_set(RL_EINVAL, "settings: not an executable planner");
    exec_planner *e = p->self;
    rl_bench_props_free(e->settings, e->n_settings);
    e->settings = NULL;
    e->n_settings = e->cap_settings = 0;
    free(p->exec_settings_json);
    p->exec_settings_json = NULL;
    size_t len = 3;
    for (size_t i = 0; i < n; i++) {
        if (rl_bench_check_name(keys[i], "setting") < 0 || rl_bench_check_value(values[i], keys[i]) < 0)
            return rl_error_last_code();
        len += 2 * strlen(keys[i]) + strlen(json_values[i]) + 8;
    }
    if (len > 60 * 1024)
        return rl_error_set(RL_EINVAL, "planner '%s': settings longer than 60 KiB as JSON",
                            p->name);
    char *json = malloc(len);
    if (!json)
        return rl_error_set(RL_ENOMEM, "out of memory");
    size_t o = 0;
    json[o++] = '{';
    for (size_t i = 0; i < n; i++) {
        if (i)
            json[o++] = ',';
        json[o++] = '"';
        for (const char *k = keys[i]; *k; k++) { /* names hold no control bytes or '"' */
            if (*k == '\\')
                json[o++] = '\\';
            json[o++] = *k;
        }
        o += (size_t)snprintf(json + o, len - o, "\":%s", json_values[i]);
        if (rl_bench_props_set(&e->settings, &e->n_settings, &e->cap_settings, keys[i],
                               RL_BENCH_TEXT, values[i]) < 0) {
            free(json);
            return RL_ENOMEM;
        }
    }
    json[o++] = '}';
    json[o] = '\0';
    p->exec_settings_json = json;
    p->settings = exec_settings;
    return RL_OK;
}

static void exec_free(void *self)
{
    exec_planner *e = self;
    if (!e)
        return;
    free(e->name);
    for (size_t i = 0; e->base.exec_argv && e->base.exec_argv[i]; i++)
        free(e->base.exec_argv[i]);
    free(e->base.exec_argv);
    for (size_t i = 0; i < e->base.n_progress; i++)
        free(e->progress_names[i]);
    free(e->progress_names);
    free(e->progress_types);
    rl_bench_props_free(e->settings, e->n_settings);
    free(e->base.exec_settings_json);
    free(e);
}

rl_bench_planner *rl_bench_planner_exec(const char *name, const char *const *argv, size_t argc,
                                        const char *const *progress, size_t n_progress)
{
    if (rl_bench_check_name(name, "planner name") < 0)
        return NULL;
    if (!argv || argc == 0) {
        rl_error_set(RL_EINVAL, "planner '%s': empty command", name);
        return NULL;
    }
    if (n_progress > RL_BENCH_MAX_PROGRESS) {
        rl_error_set(RL_ERANGE, "planner '%s': more than %d progress properties", name,
                     RL_BENCH_MAX_PROGRESS);
        return NULL;
    }
    exec_planner *e = calloc(1, sizeof *e);
    if (!e)
        goto nomem;
    e->base.self = e;
    e->base.free = exec_free;
    e->name = strdup(name);
    e->base.name = e->name;
    e->base.exec_argv = calloc(argc + 1, sizeof(char *));
    e->progress_names = calloc(n_progress + 1, sizeof(char *));
    e->progress_types = calloc(n_progress + 1, sizeof(rl_bench_type));
    if (!e->name || !e->base.exec_argv || !e->progress_names || !e->progress_types)
        goto nomem;
    for (size_t i = 0; i < argc; i++)
        if (!(e->base.exec_argv[i] = strdup(argv[i])))
            goto nomem;
    for (size_t i = 0; i < n_progress; i++) {
        /* "best cost REAL": the last word is the type */
        const char *sp = strrchr(progress[i], ' ');
        if (!sp || rl_bench_type_parse(sp + 1, &e->progress_types[i]) < 0) {
            rl_error_set(RL_EINVAL, "planner '%s': progress property '%s' needs 'name TYPE'", name,
                         progress[i]);
            e->base.n_progress = i;
            exec_free(e);
            return NULL;
        }
        e->progress_names[i] = strndup(progress[i], (size_t)(sp - progress[i]));
        e->base.n_progress = i + 1;
        if (!e->progress_names[i])
            goto nomem;
        if (rl_bench_check_column_name(e->progress_names[i], "progress property") < 0) {
            exec_free(e);
            return NULL;
        }
    }
    e->base.progress_names = (const char *const *)e->progress_names;
    e->base.progress_types = e->progress_types;
    return &e->base;
nomem:
    exec_free(e);
    rl_error_set(RL_ENOMEM, "out of memory");
    return NULL;
}
