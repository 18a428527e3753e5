/* rl_eval_summary: one report over many runs. Reads each run, reuses its latest full
 * evaluation when that ran with the same configuration (config.yaml's SHA-256) and the
 * run's own map, evaluates the others on several threads at once (rl_eval_run each), reads
 * every evaluation's summary.json and hands it all to eval_summary_output.c. */
#include "eval/eval_config.h"
#include "eval/eval_list.h"
#include "eval/eval_summary.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/hash.h"
#include "runlab/json.h"
#include "runlab/record.h"
#include "runlab/time.h"
#include "runlab/yaml.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_SUMMARY_JSON = 64 << 20, MAX_RUNS = 1000000,
       MAX_JOBS = 256 };

/* The effective configuration's SHA-256, over the bytes config.yaml holds for it. */
static int config_hash(const char *config_path, char hex[65])
{
    json_object *config = NULL;
    char *yaml = NULL;
    size_t len = 0;
    int rc = eval_config_build(config_path, &config);
    if (rc == RL_OK)
        rc = rl_yaml_to_string(config, &yaml, &len);
    uint8_t digest[RL_SHA256_LEN];
    if (rc == RL_OK && (rc = rl_sha256(yaml, len, digest)) == RL_OK)
        rl_sha256_hex(digest, hex);
    free(yaml);
    json_object_put(config);
    return rc;
}

/* The latest full evaluation can stand for this configuration: its config.yaml has the
 * same hash and it judged the run against the run's own map (not one given with --map). */
static bool reusable(const sum_run *r, const char *want)
{
    const rl_eval_listed_evaluation *full = rl_eval_listed_full(&r->listed);
    char p[PATH_MAX];
    uint8_t digest[RL_SHA256_LEN];
    char hex[65];
    if (!full || snprintf(p, sizeof p, "%s/evaluations/%s/config.yaml", r->listed.dir,
                          full->name) >= (int)sizeof p ||
        rl_sha256_file(p, digest, NULL) != RL_OK)
        return false;
    rl_sha256_hex(digest, hex);
    if (strcmp(hex, want) != 0)
        return false;
    json_object *sum, *run;
    const char *map;
    snprintf(p, sizeof p, "%s/evaluations/%s/summary.json", r->listed.dir, full->name);
    if (rl_json_read_file(p, MAX_SUMMARY_JSON, &sum) != RL_OK)
        return false;
    bool own = rl_json_get_object(sum, "run", &run) == RL_OK &&
               (rl_json_get_string(run, "map", &map) != RL_OK ||
                strcmp(map, "map/runtime_map.bin") == 0);
    json_object_put(sum);
    return own;
}

/* ---- evaluating the rest on several threads ---------------------------------------- */

typedef struct eval_pool {
    sum_data *d;
    size_t *todo; /* indexes into d->runs */
    size_t n;
    atomic_size_t next;
} eval_pool;

static void evaluate_one(const rl_eval_summary_options *o, sum_run *r)
{
    rl_eval_options eo = {.config_path = o->config_path, .argc = o->argc, .argv = o->argv};
    rl_eval_result res;
    if (rl_eval_run(r->listed.dir, &eo, &res) < 0) {
        r->error = strdup(rl_error_last()); /* this thread's message */
        return;
    }
    const char *slash = strrchr(res.dir, '/');
    r->evaluation = strdup(slash ? slash + 1 : res.dir);
    if (!r->evaluation)
        r->error = strdup("out of memory");
    rl_eval_result_free(&res);
}

static void *pool_worker(void *arg)
{
    eval_pool *p = arg;
    size_t k;
    while ((k = atomic_fetch_add(&p->next, 1)) < p->n) /* each run is its task's alone */
        evaluate_one(p->d->opts, &p->d->runs[p->todo[k]]);
    return NULL;
}

static int jobs_for(int asked, size_t n)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t j = asked > 0 ? (size_t)asked : cores > 0 ? (size_t)cores : 1;
    j = j < n ? j : n;
    return (int)(j < MAX_JOBS ? j : MAX_JOBS);
}

static int evaluate_missing(sum_data *d)
{
    eval_pool p = {d, calloc(d->n ? d->n : 1, sizeof(size_t)), 0, 0};
    if (!p.todo)
        return rl_error_set(RL_ENOMEM, "summary: out of memory");
    for (size_t i = 0; i < d->n; i++)
        if (!d->runs[i].reused)
            p.todo[p.n++] = i;
    atomic_init(&p.next, 0);
    int jobs = jobs_for(d->opts->jobs, p.n);
    pthread_t tids[MAX_JOBS];
    int started = 0;
    while (started + 1 < jobs && pthread_create(&tids[started], NULL, pool_worker, &p) == 0)
        started++;
    pool_worker(&p); /* the calling thread is one of them */
    for (int t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    d->evaluated = p.n;
    free(p.todo);
    return RL_OK;
}

/* ---- reading evaluations ----------------------------------------------------------- */

static char *dup_or(json_object *o, const char *key, const char *dflt)
{
    const char *s;
    return strdup(rl_json_get_string(o, key, &s) == RL_OK ? s : dflt);
}

static double num_or_nan(json_object *o, const char *key)
{
    double v;
    return rl_json_get_double(o, key, &v) == RL_OK ? v : NAN;
}

static int read_check(json_object *c, sum_check *out)
{
    const char *status;
    json_object *veh;
    char vehicles[256] = "";
    if (rl_json_get_array(c, "vehicles", &veh) == RL_OK)
        for (size_t i = 0, k = 0; i < json_object_array_length(veh) && k < sizeof vehicles - 16; i++)
            k += (size_t)snprintf(vehicles + k, sizeof vehicles - k, "%s%lld", i ? " " : "",
                                  (long long)json_object_get_int64(json_object_array_get_idx(veh, i)));
    out->metric = dup_or(c, "metric", "?");
    out->check = dup_or(c, "check", "?");
    out->unit = dup_or(c, "unit", "");
    out->reason = dup_or(c, "reason", "");
    out->vehicles = strdup(vehicles);
    out->value = num_or_nan(c, "value");
    out->threshold = num_or_nan(c, "threshold");
    out->status = RL_EVAL_UNAVAILABLE;
    if (rl_json_get_string(c, "status", &status) == RL_OK)
        for (int s = 0; s < RL_EVAL_STATUS_COUNT; s++)
            if (strcmp(status, rl_eval_status_name((rl_eval_status)s)) == 0)
                out->status = (rl_eval_status)s;
    if (!out->metric || !out->check || !out->unit || !out->reason || !out->vehicles)
        return rl_error_set(RL_ENOMEM, "summary: out of memory");
    return RL_OK;
}

/* The run's evaluation's result and checks. A summary that cannot be read makes the run
 * an error (with the reason), not the summary's failure. */
static int read_evaluation(sum_run *r)
{
    char p[PATH_MAX];
    json_object *sum = NULL, *checks;
    const char *result, *interruption;
    if (snprintf(p, sizeof p, "%s/evaluations/%s/summary.json", r->listed.dir, r->evaluation) >=
            (int)sizeof p ||
        rl_json_read_file(p, MAX_SUMMARY_JSON, &sum) != RL_OK ||
        rl_json_get_string(sum, "result", &result) != RL_OK ||
        rl_json_get_array(sum, "checks", &checks) != RL_OK) {
        json_object_put(sum);
        r->error = strdup("its evaluation's summary.json cannot be read");
        return r->error ? RL_OK : rl_error_set(RL_ENOMEM, "summary: out of memory");
    }
    for (int v = 0; v < RL_EVAL_VERDICT_COUNT; v++)
        if (strcmp(result, rl_eval_verdict_name((rl_eval_verdict)v)) == 0)
            r->verdict = v;
    if (rl_json_get_string(sum, "interruption", &interruption) == RL_OK)
        r->interruption = strdup(interruption);
    size_t n = json_object_array_length(checks);
    int rc = RL_OK;
    r->checks = n ? calloc(n, sizeof *r->checks) : NULL;
    if (n && !r->checks)
        rc = rl_error_set(RL_ENOMEM, "summary: out of memory");
    for (size_t i = 0; rc == RL_OK && i < n; i++) {
        json_object *c = json_object_array_get_idx(checks, i);
        if (!json_object_is_type(c, json_type_object))
            continue;
        rc = read_check(c, &r->checks[r->nchecks++]);
    }
    json_object_put(sum);
    return rc;
}

/* ---- the group of a run ------------------------------------------------------------ */

static char *join_faults(const rl_eval_listed_run *l, bool kinds_only)
{
    if (l->nfaults == 0)
        return strdup("no fault");
    size_t cap = 1;
    for (size_t f = 0; f < l->nfaults; f++)
        cap += strlen(l->faults[f]) + 1;
    char *s = malloc(cap);
    size_t k = 0;
    for (size_t f = 0; s && f < l->nfaults; f++) {
        size_t n = kinds_only ? strcspn(l->faults[f], ":") : strlen(l->faults[f]);
        if (f)
            s[k++] = ',';
        memcpy(s + k, l->faults[f], n);
        k += n;
    }
    if (s)
        s[k] = 0;
    return s;
}

/* A manifest field by its path "a.b.c": strings as they are, anything else as JSON. */
static char *manifest_field(const char *dir, const char *path)
{
    rl_record_manifest m;
    if (rl_record_manifest_read(dir, &m) != RL_OK) {
        rl_record_manifest_free(&m);
        return strdup("(none)");
    }
    json_object *o = m.doc;
    char key[256];
    for (const char *k = path; o && *k;) {
        size_t n = strcspn(k, ".");
        if (n >= sizeof key || !json_object_is_type(o, json_type_object)) {
            o = NULL;
            break;
        }
        memcpy(key, k, n);
        key[n] = 0;
        if (!json_object_object_get_ex(o, key, &o))
            o = NULL;
        k += n + (k[n] == '.');
    }
    char *s = !o ? strdup("(none)")
              : json_object_is_type(o, json_type_string)
                  ? strdup(json_object_get_string(o))
                  : strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    rl_record_manifest_free(&m);
    return s;
}

static char *group_of(const rl_eval_listed_run *l, const char *by)
{
    char buf[64];
    if (strcmp(by, "planner") == 0)
        return strdup(l->planner ? l->planner : "(none)");
    if (strcmp(by, "scenario") == 0)
        return join_faults(l, false);
    if (strcmp(by, "fault") == 0)
        return join_faults(l, true);
    if (strcmp(by, "state") == 0)
        return strdup(l->state);
    if (strcmp(by, "seed") == 0) {
        snprintf(buf, sizeof buf, "%lld", (long long)l->seed);
        return strdup(l->seed >= 0 ? buf : "(none)");
    }
    if (strcmp(by, "vehicles") == 0) {
        snprintf(buf, sizeof buf, "%zu", l->nvehicles);
        return strdup(buf);
    }
    return manifest_field(l->dir, by);
}

/* ---- the entry ----------------------------------------------------------------------- */

static void run_clear(sum_run *r)
{
    eval_listed_run_clear(&r->listed);
    free(r->group), free(r->evaluation), free(r->error), free(r->interruption);
    for (size_t i = 0; i < r->nchecks; i++) {
        sum_check *c = &r->checks[i];
        free(c->metric), free(c->check), free(c->vehicles), free(c->unit), free(c->reason);
    }
    free(r->checks);
}

/* The runs, each once (by its real path), read with their evaluations. */
static int read_runs(sum_data *d)
{
    const rl_eval_summary_options *o = d->opts;
    char **seen = calloc(o->nruns, sizeof *seen);
    d->runs = calloc(o->nruns, sizeof *d->runs);
    int rc = seen && d->runs ? RL_OK : rl_error_set(RL_ENOMEM, "summary: out of memory");
    size_t nseen = 0;
    for (size_t i = 0; rc == RL_OK && i < o->nruns; i++) {
        char real[PATH_MAX];
        if (!o->runs[i] || !realpath(o->runs[i], real)) {
            rc = rl_error_set(RL_ENOENT, "summary: %s: no such run directory",
                              o->runs[i] ? o->runs[i] : "(null)");
            break;
        }
        bool dup = false;
        for (size_t k = 0; k < nseen && !dup; k++)
            dup = strcmp(seen[k], real) == 0;
        if (dup)
            continue;
        if (!(seen[nseen] = strdup(real))) {
            rc = rl_error_set(RL_ENOMEM, "summary: out of memory");
            break;
        }
        nseen++;
        sum_run *r = &d->runs[d->n];
        r->verdict = -1;
        if ((rc = eval_list_one(o->runs[i], &r->listed)) < 0)
            break;
        d->n++;
        if (!(r->group = group_of(&r->listed, d->group_by)))
            rc = rl_error_set(RL_ENOMEM, "summary: out of memory");
    }
    for (size_t k = 0; k < nseen; k++)
        free(seen[k]);
    free(seen);
    return rc;
}

/* The new summary directory: opts->out_dir, which must not exist, or a new
 * <home>/summaries/<UTC>[_N]. */
static int make_dir(const rl_eval_summary_options *o, char *out, size_t cap)
{
    char parent[PATH_MAX], stamp[32];
    int rc;
    if (o->out_dir) {
        const char *slash = strrchr(o->out_dir, '/');
        const char *name = slash ? slash + 1 : o->out_dir;
        if (slash && slash == o->out_dir)
            snprintf(parent, sizeof parent, "/");
        else if ((size_t)snprintf(parent, sizeof parent, "%.*s", slash ? (int)(slash - o->out_dir) : 1,
                                  slash ? o->out_dir : ".") >= sizeof parent)
            return rl_error_set(RL_ERANGE, "%s: path too long", o->out_dir);
        if ((rc = rl_fs_mkdirs(parent)) < 0)
            return rc;
        rc = rl_fs_mkdir_new(parent, name, RL_MKDIR_FAIL_IF_EXISTS, out, cap);
        return rc == RL_EEXIST ? rl_error_set(RL_EEXIST, "%s exists: a summary never overwrites one",
                                              o->out_dir)
                               : rc;
    }
    char home[PATH_MAX];
    if ((rc = rl_record_home(o->home, home, sizeof home)) < 0 ||
        (rc = rl_path_join(parent, sizeof parent, home, "summaries")) < 0 ||
        (rc = rl_fs_mkdirs(parent)) < 0 ||
        (rc = rl_time_format_compact(rl_time_now_ns(), stamp, sizeof stamp)) < 0)
        return rc;
    return rl_fs_mkdir_new(parent, stamp, RL_MKDIR_ADD_SUFFIX, out, cap);
}

int rl_eval_summary(const rl_eval_summary_options *o, rl_eval_summary_result *res)
{
    if (!o || !res)
        return rl_error_set(RL_EINVAL, "rl_eval_summary: NULL argument");
    memset(res, 0, sizeof *res);
    if (o->nruns == 0 || !o->runs)
        return rl_error_set(RL_EINVAL, "summary: no runs to summarise");
    if (o->nruns > MAX_RUNS)
        return rl_error_set(RL_ERANGE, "summary: %zu runs, at most %d", o->nruns, MAX_RUNS);
    sum_data d = {.opts = o, .group_by = o->group_by && *o->group_by ? o->group_by : "planner"};
    char dir[PATH_MAX];
    int rc = config_hash(o->config_path, d.config_sha256);
    if (rc == RL_OK)
        rc = read_runs(&d);
    if (rc == RL_OK)
        rc = make_dir(o, dir, sizeof dir); /* before any evaluation: a bad --out costs none */
    if (rc < 0)
        goto out;
    d.dir = dir;
    for (size_t i = 0; i < d.n; i++) {
        sum_run *r = &d.runs[i];
        if (reusable(r, d.config_sha256)) {
            r->reused = true;
            d.reused++;
            if (!(r->evaluation = strdup(rl_eval_listed_full(&r->listed)->name))) {
                rc = rl_error_set(RL_ENOMEM, "summary: out of memory");
                goto out;
            }
        }
    }
    if ((rc = evaluate_missing(&d)) < 0)
        goto out;
    for (size_t i = 0; rc == RL_OK && i < d.n; i++)
        if (d.runs[i].evaluation)
            rc = read_evaluation(&d.runs[i]);
    for (size_t i = 0; i < d.n; i++)
        if (d.runs[i].verdict < 0)
            d.errors++;
        else
            res->verdicts[d.runs[i].verdict]++;
    if (rc == RL_OK)
        rc = eval_summary_write(&d);
    if (rc == RL_OK && !(res->dir = strdup(dir)))
        rc = rl_error_set(RL_ENOMEM, "summary: out of memory");
    res->nruns = d.n;
    res->reused = d.reused;
    res->evaluated = d.evaluated;
    res->errors = d.errors;
    memcpy(res->config_sha256, d.config_sha256, sizeof res->config_sha256);
out:
    for (size_t i = 0; i < d.n; i++)
        run_clear(&d.runs[i]);
    free(d.runs);
    if (rc < 0)
        rl_eval_summary_result_free(res);
    return rc;
}

void rl_eval_summary_result_free(rl_eval_summary_result *res)
{
    if (!res)
        return;
    free(res->dir);
    memset(res, 0, sizeof *res);
}
