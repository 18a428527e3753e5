/* The results a benchmark collects as runs finish or are read back from its journal:
 * the experiment's header and planners (at the start of rl_bench_execute), each run's
 * data in its place, and the limit on distinct property names (database columns). */
#include "engines/bench_internal.h"

#include "runlab/error.h"
#include "runlab/provenance.h"
#include "runlab/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void collect_setting(void *ctx, const char *key, const char *value)
{
    rl_bench_planner_data *pd = ctx;
    size_t cap = pd->n_settings;
    if (rl_bench_check_value(key, "setting") == RL_OK &&
        rl_bench_check_value(value, key) == RL_OK && !strstr(key, " = "))
        rl_bench_props_set(&pd->settings, &pd->n_settings, &cap, key, RL_BENCH_TEXT, value);
}

int rl_bench_results_init(rl_bench *b, const rl_bench_request *req)
{
    rl_bench_free_done(b);
    rl_bench_experiment *e = &b->results;
    rl_bench_experiment_clear(e);
    rl_provenance prov;
    rl_provenance_collect(&prov);
    char ver[64], cpu[512];
    snprintf(ver, sizeof ver, "runlab %s", prov.version);
    snprintf(cpu, sizeof cpu, "model name: %s\ncores: %d\nos: %s\n", prov.cpu_model, prov.cpu_cores,
             prov.os);
    e->name = strdup(b->name);
    e->setup_info = strdup(b->setup_info);
    e->host = strdup(prov.host);
    e->cpu_info = strdup(cpu);
    e->version = strdup(ver);
    e->max_time = req->max_time;
    e->max_mem = req->max_mem;
    e->run_count = req->run_count;
    e->time_between_updates = req->time_between_updates;
    e->seed = b->seed;
    e->start_ns = req->start_ns > 0 ? req->start_ns : rl_time_now_ns();
    e->planners = calloc(b->n_planners ? b->n_planners : 1, sizeof *e->planners);
    b->done = calloc(b->n_planners ? b->n_planners : 1, sizeof *b->done);
    b->done_cap = calloc(b->n_planners ? b->n_planners : 1, sizeof *b->done_cap);
    if (!e->name || !e->setup_info || !e->host || !e->cpu_info || !e->version || !e->planners ||
        !b->done || !b->done_cap)
        return rl_error_set(RL_ENOMEM, "out of memory");
    size_t cap = 0;
    for (size_t i = 0; i < b->n_params; i++)
        if (rl_bench_props_set(&e->params, &e->n_params, &cap, b->params[i].name, b->params[i].type,
                               b->params[i].value) < 0)
            return RL_ENOMEM;
    e->n_planners = b->n_planners;
    for (size_t i = 0; i < b->n_planners; i++) {
        rl_bench_planner *pl = b->planners[i];
        rl_bench_planner_data *pd = &e->planners[i];
        pd->name = strdup(pl->name);
        if (!pd->name)
            return rl_error_set(RL_ENOMEM, "out of memory");
        if (pl->settings)
            pl->settings(pl->self, collect_setting, pd);
        pd->n_progress = pl->n_progress;
        pd->progress_names = calloc(pl->n_progress + 1, sizeof(char *));
        pd->progress_types = calloc(pl->n_progress + 1, sizeof(rl_bench_type));
        if (!pd->progress_names || !pd->progress_types)
            return rl_error_set(RL_ENOMEM, "out of memory");
        for (size_t k = 0; k < pl->n_progress; k++) {
            pd->progress_names[k] = strdup(pl->progress_names[k]);
            pd->progress_types[k] = pl->progress_types ? pl->progress_types[k] : RL_BENCH_REAL;
            if (!pd->progress_names[k])
                return rl_error_set(RL_ENOMEM, "out of memory");
        }
    }
    return RL_OK;
}

static bool prop_name_known(const rl_bench *b, const char *name)
{
    for (size_t i = 0; i < b->n_prop_names; i++)
        if (strcmp(b->prop_names[i], name) == 0)
            return true;
    return false;
}

/* The properties the harness sets on every run (finish); a run keeps them whatever the
 * limit on names, so its status, solved and time always reach the log and database. */
static bool harness_prop_name(const char *name)
{
    static const char *const own[] = {"time",      "memory",    "memory with startup",
                                      "simplification time",    "cpu time",
                                      "wall time", "status",    "solved",
                                      "exit code", "exit signal"};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (strcmp(own[i], name) == 0)
            return true;
    return false;
}

/* Keeps the experiment within RL_BENCH_MAX_PROPERTY_NAMES distinct property names: a run
 * whose new names would pass it loses exactly those of the planner's properties (the run
 * alone pays for them) and says so in its reason. The harness's own names are counted
 * first and always kept (the planner's, set before them, used to push out "exit signal",
 * then "solved" and "status"). One new to an experiment already full ("memory with
 * startup" first seen in a late run) is kept too: the experiment can pass the limit by at
 * most those ten names, far below SQLite's 2000 columns. */
void rl_bench_limit_property_names(const rl_bench *b, rl_bench_run_data *r)
{
    size_t fresh = 0, kept = 0, dropped = 0;
    for (size_t i = 0; i < r->n_props; i++) {
        const char *name = r->props[i].name;
        if (!harness_prop_name(name) || prop_name_known(b, name))
            continue;
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = strcmp(r->props[k].name, name) == 0;
        fresh += !seen;
    }
    for (size_t i = 0; i < r->n_props; i++) {
        bool own = harness_prop_name(r->props[i].name);
        bool known = own || prop_name_known(b, r->props[i].name);
        for (size_t k = 0; !known && k < kept; k++) /* a name repeated in this run */
            known = strcmp(r->props[k].name, r->props[i].name) == 0;
        if (!known && b->n_prop_names + fresh >= RL_BENCH_MAX_PROPERTY_NAMES) {
            free(r->props[i].name);
            free(r->props[i].value);
            dropped++;
            continue;
        }
        fresh += !known;
        r->props[kept++] = r->props[i];
    }
    r->n_props = kept;
    if (!dropped)
        return;
    char *why = NULL;
    if (asprintf(&why, "%s%s%zu run properties dropped: the experiment has reached %d distinct "
                       "property names (each is a database column)",
                 r->reason ? r->reason : "", r->reason ? "; " : "", dropped,
                 RL_BENCH_MAX_PROPERTY_NAMES) >= 0) {
        free(r->reason);
        r->reason = why;
    }
}

static int remember_property_names(rl_bench *b, const rl_bench_run_data *r)
{
    for (size_t i = 0; i < r->n_props; i++) {
        if (prop_name_known(b, r->props[i].name))
            continue;
        if (b->n_prop_names == b->cap_prop_names) {
            size_t nc = b->cap_prop_names ? 2 * b->cap_prop_names : 64;
            char **nn = realloc(b->prop_names, nc * sizeof *nn);
            if (!nn)
                return rl_error_set(RL_ENOMEM, "out of memory");
            b->prop_names = nn;
            b->cap_prop_names = nc;
        }
        if (!(b->prop_names[b->n_prop_names] = strdup(r->props[i].name)))
            return rl_error_set(RL_ENOMEM, "out of memory");
        b->n_prop_names++;
    }
    return RL_OK;
}

int rl_bench_record_result(rl_bench *b, size_t pi, size_t ri, rl_bench_run_data *r)
{
    rl_bench_limit_property_names(b, r);
    if (remember_property_names(b, r) < 0) {
        rl_bench_run_data_free(r);
        return RL_ENOMEM;
    }
    rl_bench_planner_data *pd = &b->results.planners[pi];
    if (ri >= b->done_cap[pi]) {
        size_t nc = b->done_cap[pi] ? b->done_cap[pi] : 16;
        while (nc <= ri)
            nc *= 2;
        rl_bench_run_data *nr = realloc(pd->runs, nc * sizeof *nr);
        if (!nr) {
            rl_bench_run_data_free(r);
            return rl_error_set(RL_ENOMEM, "out of memory");
        }
        pd->runs = nr;
        bool *nd = realloc(b->done[pi], nc * sizeof *nd);
        if (!nd) {
            rl_bench_run_data_free(r);
            return rl_error_set(RL_ENOMEM, "out of memory");
        }
        b->done[pi] = nd;
        memset(pd->runs + b->done_cap[pi], 0, (nc - b->done_cap[pi]) * sizeof *nr);
        memset(nd + b->done_cap[pi], 0, (nc - b->done_cap[pi]) * sizeof *nd);
        b->done_cap[pi] = nc;
    }
    if (b->done[pi][ri]) { /* already known (journal line written twice) */
        rl_bench_run_data_free(r);
        return RL_OK;
    }
    pd->runs[ri] = *r;
    memset(r, 0, sizeof *r);
    b->done[pi][ri] = true;
    if (ri + 1 > pd->n_runs)
        pd->n_runs = ri + 1;
    return RL_OK;
}

void rl_bench_results_compact(rl_bench *b)
{
    for (size_t p = 0; p < b->results.n_planners; p++) {
        rl_bench_planner_data *pd = &b->results.planners[p];
        size_t kept = 0;
        for (size_t r = 0; r < pd->n_runs; r++) {
            if (!b->done[p][r])
                continue;
            if (kept != r) {
                pd->runs[kept] = pd->runs[r];
                memset(&pd->runs[r], 0, sizeof pd->runs[r]);
                b->done[p][kept] = true;
                b->done[p][r] = false;
            }
            kept++;
        }
        pd->n_runs = kept;
    }
}
