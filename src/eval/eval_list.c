/* `runlab list`'s data: every run directory under <home>/experiments with what its manifest
 * says (state, result, vehicles, planner, map hash, START..STOP) and the evaluations beside
 * it (each with its summary.json's verdict), newest first. Bad runs are listed, not fatal. */
#include "runlab/eval.h"

#include "eval/eval_list.h"
#include "eval/eval_verdict.h"

#include "core/text.h"
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"
#include "runlab/record.h"
#include "runlab/time.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { MAX_SUMMARY_BYTES = 64 << 20 };

static int cmp_names_desc(const void *a, const void *b)
{
    return strcmp(*(char *const *)b, *(char *const *)a);
}

static int cmp_names_asc(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* dir/name for a name read from the directory itself: any byte but '/' may be in it (a
 * newline, a tab), so it is not checked like a user-supplied name (rl_path_join), which
 * would leave such runs out of the list; printing escapes them. False when too long. */
static bool join_entry(char *out, size_t cap, const char *dir, const char *name)
{
    int n = snprintf(out, cap, "%s/%s", dir, name);
    return n >= 0 && (size_t)n < cap;
}

/* Directory names in `dir` (not starting with '.'), sorted. */
static int list_dirs(const char *dir, char ***out, size_t *count, bool newest_first)
{
    *out = NULL;
    *count = 0;
    DIR *d = opendir(dir);
    if (!d)
        return RL_OK;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    int rc = RL_OK;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[PATH_MAX];
        struct stat st;
        if (!join_entry(p, sizeof p, dir, e->d_name) || stat(p, &st) != 0 ||
            !S_ISDIR(st.st_mode))
            continue;
        if ((rc = rl_grow_array((void **)&names, &cap, n + 1, sizeof *names, "runs")) < 0)
            break;
        if (!(names[n] = strdup(e->d_name))) {
            rc = rl_error_set(RL_ENOMEM, "runs: out of memory");
            break;
        }
        n++;
    }
    closedir(d);
    if (rc < 0) {
        for (size_t i = 0; i < n; i++)
            free(names[i]);
        free(names);
        return rc;
    }
    if (n > 1) /* names is NULL when the directory holds none (qsort wants a pointer) */
        qsort(names, n, sizeof *names, newest_first ? cmp_names_desc : cmp_names_asc);
    *out = names;
    *count = n;
    return RL_OK;
}

/* What one evaluation's summary.json says. Summaries written before "result" and
 * "partial" existed: the result from their counts (the same rule), partial when their
 * "metrics" lack a registered metric. */
static void read_summary(json_object *sum, rl_eval_listed_evaluation *e)
{
    bool passed, partial;
    const char *result;
    json_object *o;
    if (rl_json_get_bool(sum, "passed", &passed) == RL_OK)
        e->passed = passed;
    if (rl_json_get_string(sum, "result", &result) == RL_OK) {
        for (int v = 0; v < RL_EVAL_VERDICT_COUNT; v++)
            if (strcmp(result, rl_eval_verdict_name((rl_eval_verdict)v)) == 0)
                e->verdict = v;
    } else if (rl_json_get_object(sum, "counts", &o) == RL_OK) {
        size_t counts[RL_EVAL_STATUS_COUNT] = {0};
        for (int s = 0; s < RL_EVAL_STATUS_COUNT; s++) {
            int64_t n;
            if (rl_json_get_int64(o, rl_eval_status_name((rl_eval_status)s), &n) == RL_OK && n > 0)
                counts[s] = (size_t)n;
        }
        e->verdict = (int)rl_eval_verdict_of(counts);
    }
    if (rl_json_get_bool(sum, "partial", &partial) == RL_OK) {
        e->partial = partial;
    } else if (rl_json_get_array(sum, "metrics", &o) == RL_OK) {
        for (size_t m = 0; m < rl_eval_metric_count(); m++) {
            bool ran = false;
            for (size_t k = 0; k < json_object_array_length(o) && !ran; k++) {
                const char *name = json_object_get_string(json_object_array_get_idx(o, k));
                ran = name && strcmp(name, rl_eval_metric_name(m)) == 0;
            }
            e->partial = e->partial || !ran;
        }
    }
}

static int read_evaluations(rl_eval_listed_run *r)
{
    char dir[PATH_MAX];
    char **names;
    size_t n;
    if (rl_path_join(dir, sizeof dir, r->dir, "evaluations") < 0)
        return RL_OK;
    int rc = list_dirs(dir, &names, &n, false);
    if (rc < 0 || n == 0)
        return rc;
    r->evaluations = calloc(n, sizeof *r->evaluations);
    if (!r->evaluations) {
        for (size_t i = 0; i < n; i++)
            free(names[i]);
        free(names);
        return rl_error_set(RL_ENOMEM, "runs: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        rl_eval_listed_evaluation *e = &r->evaluations[i];
        e->name = names[i];
        e->passed = -1;
        char p[PATH_MAX];
        e->verdict = -1;
        json_object *sum;
        if (snprintf(p, sizeof p, "%s/%s/summary.json", dir, names[i]) < (int)sizeof p &&
            rl_json_read_file(p, MAX_SUMMARY_BYTES, &sum) == RL_OK) {
            read_summary(sum, e);
            json_object_put(sum);
        }
    }
    r->nevaluations = n;
    free(names);
    return RL_OK;
}

/* The manifest's scenario in brief: the simulator's vehicles, seed and faults (the other
 * columns show the control flow's vehicles, duration and planner). NULL when none. */
static char *scenario_brief(json_object *m)
{
    json_object *sc, *sim;
    if (rl_json_get_object(m, "scenario", &sc) != RL_OK ||
        rl_json_get_object(sc, "runlab_sim", &sim) != RL_OK)
        return NULL;
    char buf[512];
    size_t k = (size_t)snprintf(buf, sizeof buf, "sim");
    int64_t v;
    if (rl_json_get_int64(sim, "vehicles", &v) == RL_OK)
        k += (size_t)snprintf(buf + k, sizeof buf - k, " %lld veh", (long long)v);
    if (k < sizeof buf && rl_json_get_int64(sim, "seed", &v) == RL_OK)
        k += (size_t)snprintf(buf + k, sizeof buf - k, " seed %lld", (long long)v);
    json_object *faults;
    if (k < sizeof buf && rl_json_get_array(sim, "faults", &faults) == RL_OK) {
        size_t n = json_object_array_length(faults);
        for (size_t i = 0; i < n && k < sizeof buf; i++) {
            const char *f = json_object_get_string(json_object_array_get_idx(faults, i));
            k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s", i ? "," : " ", f ? f : "?");
        }
    }
    return strdup(buf);
}

/* The scenario's seed and faults one by one, for filtering and sorting. */
static void scenario_fields(json_object *m, rl_eval_listed_run *r)
{
    json_object *sc, *sim, *faults;
    int64_t v;
    if (rl_json_get_object(m, "scenario", &sc) != RL_OK ||
        rl_json_get_object(sc, "runlab_sim", &sim) != RL_OK)
        return;
    if (rl_json_get_int64(sim, "seed", &v) == RL_OK)
        r->seed = v;
    if (rl_json_get_array(sim, "faults", &faults) != RL_OK)
        return;
    size_t n = json_object_array_length(faults);
    r->faults = n ? calloc(n, sizeof *r->faults) : NULL;
    for (size_t i = 0; r->faults && i < n; i++) {
        const char *f = json_object_get_string(json_object_array_get_idx(faults, i));
        if (f && (r->faults[r->nfaults] = strdup(f)))
            r->nfaults++;
    }
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void read_manifest(rl_eval_listed_run *r)
{
    char why[256];
    rl_record_manifest m;
    r->duration_s = NAN;
    r->planned_s = NAN;
    r->start_ns = INT64_MIN;
    r->seed = -1;
    bool unfinished = rl_record_run_unfinished(r->dir, why, sizeof why) == 1;
    if (rl_record_manifest_read(r->dir, &m) < 0) {
        r->state = strdup(unfinished ? "UNFINISHED" : "UNREADABLE");
        rl_record_manifest_free(&m);
        return;
    }
    r->run_id = dup_or_null(m.run_id);
    r->state = strdup(m.state ? m.state : "UNREADABLE");
    r->planner = dup_or_null(m.planner);
    r->scenario = scenario_brief(m.doc);
    scenario_fields(m.doc, r);
    r->result = dup_or_null(m.reason);
    r->map_sha256 = dup_or_null(m.map_sha256);
    r->vehicles = m.vehicle_count ? calloc(m.vehicle_count, sizeof *r->vehicles) : NULL;
    for (size_t i = 0; r->vehicles && i < m.vehicle_count; i++)
        r->vehicles[r->nvehicles++] = m.vehicles[i];
    r->start = dup_or_null(m.start);
    if (m.start_ns != RL_RECORD_MANIFEST_NO_STAMP) {
        r->start_ns = m.start_ns;
        if (m.stop_ns != RL_RECORD_MANIFEST_NO_STAMP)
            r->duration_s = (double)(m.stop_ns - m.start_ns) / 1e9;
    }
    rl_record_manifest_free(&m);
    r->planned_s = eval_planned_duration(r->dir);
    char text[160];
    eval_interruption_text(r->state, r->duration_s, r->planned_s, text, sizeof text);
    if (text[0])
        r->interruption = strdup(text);
}

int rl_eval_list_runs(const char *home, rl_eval_listed_run **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    char h[PATH_MAX], exp[PATH_MAX];
    int rc = rl_record_home(home, h, sizeof h);
    if (rc < 0 || (rc = rl_path_join(exp, sizeof exp, h, "experiments")) < 0)
        return rc;
    char **names;
    size_t n;
    if ((rc = list_dirs(exp, &names, &n, true)) < 0)
        return rc;
    rl_eval_listed_run *runs = n ? calloc(n, sizeof *runs) : NULL;
    if (n && !runs)
        rc = rl_error_set(RL_ENOMEM, "runs: out of memory");
    size_t k = 0;
    for (size_t i = 0; rc == RL_OK && i < n; i++) {
        rl_eval_listed_run *r = &runs[k];
        char p[PATH_MAX];
        if (!join_entry(p, sizeof p, exp, names[i]))
            continue;
        r->dir = strdup(p);
        r->name = strdup(names[i]);
        k++;
        if (!r->dir || !r->name) {
            rc = rl_error_set(RL_ENOMEM, "runs: out of memory");
            break;
        }
        read_manifest(r);
        if (!r->state)
            rc = rl_error_set(RL_ENOMEM, "runs: out of memory");
        if (rc == RL_OK)
            rc = read_evaluations(r);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (rc < 0) {
        rl_eval_list_free(runs, k);
        return rc;
    }
    *out = runs;
    *count = k;
    return RL_OK;
}

int eval_list_one(const char *dir, rl_eval_listed_run *r)
{
    memset(r, 0, sizeof *r);
    const char *slash = strrchr(dir, '/');
    r->dir = strdup(dir);
    r->name = strdup(slash && slash[1] ? slash + 1 : dir);
    if (!r->dir || !r->name) {
        eval_listed_run_clear(r);
        return rl_error_set(RL_ENOMEM, "runs: out of memory");
    }
    read_manifest(r);
    int rc = r->state ? read_evaluations(r) : rl_error_set(RL_ENOMEM, "runs: out of memory");
    if (rc < 0)
        eval_listed_run_clear(r);
    return rc;
}

void rl_eval_list_free(rl_eval_listed_run *runs, size_t count)
{
    for (size_t i = 0; runs && i < count; i++)
        eval_listed_run_clear(&runs[i]);
    free(runs);
}

void eval_listed_run_clear(rl_eval_listed_run *r)
{
    {
        free(r->dir), free(r->name), free(r->run_id), free(r->state), free(r->result);
        free(r->planner), free(r->map_sha256), free(r->start), free(r->vehicles);
        free(r->interruption);
        free(r->scenario);
        for (size_t k = 0; k < r->nfaults; k++)
            free(r->faults[k]);
        free(r->faults);
        for (size_t k = 0; k < r->nevaluations; k++)
            free(r->evaluations[k].name);
        free(r->evaluations);
    }
    memset(r, 0, sizeof *r);
}

const rl_eval_listed_evaluation *rl_eval_listed_full(const rl_eval_listed_run *run)
{
    for (size_t i = run->nevaluations; i-- > 0;)
        if (!run->evaluations[i].partial && run->evaluations[i].verdict >= 0)
            return &run->evaluations[i];
    return NULL;
}

const rl_eval_listed_evaluation *rl_eval_listed_newer_partial(const rl_eval_listed_run *run)
{
    if (run->nevaluations == 0)
        return NULL;
    const rl_eval_listed_evaluation *last = &run->evaluations[run->nevaluations - 1];
    return last->partial && last != rl_eval_listed_full(run) ? last : NULL;
}
