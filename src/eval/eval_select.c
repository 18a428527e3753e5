/* Choosing and ordering listed runs (rl_eval_list_filter, rl_eval_list_sort): the filters
 * and sort keys `runlab list` and `runlab evaluate --summary` share, over what
 * rl_eval_list_runs read from each manifest and evaluation. */
#include "eval/eval_list.h"

#include "runlab/error.h"
#include "runlab/time.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { MAX_ITEM = 128 };

/* Calls match(item, ctx) for each comma-separated item of `list` (empty items skipped);
 * true when one matches. An item longer than MAX_ITEM never matches. */
static bool any_item(const char *list, bool (*match)(const char *item, const void *ctx),
                     const void *ctx)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        char item[MAX_ITEM];
        if (n > 0 && n < sizeof item) {
            memcpy(item, p, n);
            item[n] = 0;
            if (match(item, ctx))
                return true;
        }
        p += n + (p[n] == ',');
    }
    return false;
}

static bool same_name(const char *item, const void *ctx)
{
    const char *s = ctx;
    return s && strcasecmp(item, s) == 0;
}

static const char *result_of(const rl_eval_listed_run *r)
{
    const rl_eval_listed_evaluation *full = rl_eval_listed_full(r);
    return full ? rl_eval_verdict_name((rl_eval_verdict)full->verdict) : "NONE";
}

static bool has_vehicle(const char *item, const void *ctx)
{
    const rl_eval_listed_run *r = ctx;
    long id = strtol(item, NULL, 10);
    for (size_t v = 0; v < r->nvehicles; v++)
        if (r->vehicles[v] == id)
            return true;
    return false;
}

static bool has_fault(const char *item, const void *ctx)
{
    const rl_eval_listed_run *r = ctx;
    if (strcasecmp(item, "none") == 0)
        return r->nfaults == 0;
    size_t n = strlen(item);
    for (size_t f = 0; f < r->nfaults; f++) /* the kind is the fault's text up to ':' */
        if (strncasecmp(r->faults[f], item, n) == 0 &&
            (r->faults[f][n] == 0 || r->faults[f][n] == ':'))
            return true;
    return false;
}

/* A time bound: ISO 8601 as rl_time_parse_iso reads it, or a date YYYY-mm-dd (its 00:00
 * UTC; `day_end` adds a day, so that --until 2026-12-06 takes that whole day). */
static int parse_bound(const char *what, const char *text, bool day_end, int64_t *out)
{
    int y, mo, d;
    char rest;
    if (strlen(text) == 10 && sscanf(text, "%4d-%2d-%2d%c", &y, &mo, &d, &rest) == 3) {
        char iso[32];
        snprintf(iso, sizeof iso, "%.10sT00:00:00Z", text);
        if (rl_time_parse_iso(iso, out) == RL_OK) {
            if (day_end)
                *out += 86400LL * 1000000000LL;
            return RL_OK;
        }
    } else if (rl_time_parse_iso(text, out) == RL_OK) {
        return RL_OK;
    }
    return rl_error_set(RL_EINVAL,
                        "--%s '%s': not a time (YYYY-mm-dd or YYYY-mm-ddTHH:MM:SSZ, UTC)", what,
                        text);
}

/* Every item of a list is one of the names in `known` (NULL-terminated), or a number when
 * `known` is NULL. */
static int check_items(const char *what, const char *list, const char *const *known)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        bool ok = n > 0 && n < MAX_ITEM;
        if (ok && known) {
            ok = false;
            for (const char *const *k = known; *k && !ok; k++)
                ok = strlen(*k) == n && strncasecmp(*k, p, n) == 0;
        } else if (ok) {
            char *end;
            long v = strtol(p, &end, 10);
            ok = end == p + n && v >= 0 && v <= INT_MAX;
        }
        if (!ok)
            return rl_error_set(RL_EINVAL, "--%s: '%.*s' is not %s", what, (int)(n < 64 ? n : 64), p,
                                known ? "one of the accepted values" : "a vehicle id");
        p += n + (p[n] == ',');
    }
    return RL_OK;
}

/* When the run was recorded: the UTC stamp its directory name starts with (the recorder
 * names it so, and it is what `list` shows), else START; INT64_MIN when neither is known. */
static int64_t run_time(const rl_eval_listed_run *r)
{
    const char *n = r->name;
    int64_t t;
    if (strlen(n) >= 16 && n[8] == 'T' && n[15] == 'Z') {
        char iso[32];
        snprintf(iso, sizeof iso, "%.4s-%.2s-%.2sT%.2s:%.2s:%.2sZ", n, n + 4, n + 6, n + 9, n + 11,
                 n + 13);
        if (rl_time_parse_iso(iso, &t) == RL_OK)
            return t;
    }
    return r->start_ns;
}

int rl_eval_list_filter(rl_eval_listed_run *runs, size_t *count, const rl_eval_run_filter *f)
{
    static const char *const results[] = {"PASS", "FAIL", "INCOMPLETE", "NONE", NULL};
    if (!count || (!runs && *count))
        return rl_error_set(RL_EINVAL, "rl_eval_list_filter: NULL argument");
    if (!f)
        return RL_OK;
    int64_t since = INT64_MIN, until = INT64_MAX;
    int rc = RL_OK;
    if (f->since)
        rc = parse_bound("since", f->since, false, &since);
    if (rc == RL_OK && f->until)
        rc = parse_bound("until", f->until, true, &until);
    if (rc == RL_OK && f->result)
        rc = check_items("result", f->result, results);
    if (rc == RL_OK && f->vehicle)
        rc = check_items("vehicle", f->vehicle, NULL);
    if (rc < 0)
        return rc;
    size_t kept = 0;
    for (size_t i = 0; i < *count; i++) {
        rl_eval_listed_run *r = &runs[i];
        bool keep = (!f->state || any_item(f->state, same_name, r->state)) &&
                    (!f->result || any_item(f->result, same_name, result_of(r))) &&
                    (!f->planner || any_item(f->planner, same_name, r->planner)) &&
                    (!f->vehicle || any_item(f->vehicle, has_vehicle, r)) &&
                    (!f->fault || any_item(f->fault, has_fault, r));
        if (keep && (f->since || f->until)) { /* a run without a time has none to compare */
            int64_t t = run_time(r);
            keep = t != INT64_MIN && t >= since && t < until;
        }
        if (keep) {
            if (kept != i)
                runs[kept] = *r;
            kept++;
        } else {
            eval_listed_run_clear(r);
        }
    }
    *count = kept;
    return RL_OK;
}

typedef int (*run_cmp)(const rl_eval_listed_run *a, const rl_eval_listed_run *b);

static int cmp_num(double a, double b)
{
    bool na = isnan(a), nb = isnan(b); /* not known sorts first in ascending order */
    if (na || nb)
        return na == nb ? 0 : na ? -1 : 1;
    return a < b ? -1 : a > b;
}

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

static int by_time(const rl_eval_listed_run *a, const rl_eval_listed_run *b)
{
    int64_t ta = run_time(a), tb = run_time(b);
    if (ta != tb)
        return ta < tb ? -1 : 1;
    return strcmp(a->name, b->name);
}
static int by_name(const rl_eval_listed_run *a, const rl_eval_listed_run *b)
{
    return strcmp(a->name, b->name);
}
static int by_state(const rl_eval_listed_run *a, const rl_eval_listed_run *b)
{
    return cmp_str(a->state, b->state);
}
static int by_result(const rl_eval_listed_run *a, const rl_eval_listed_run *b)
{
    return strcmp(result_of(a), result_of(b));
}
static int by_duration(const rl_eval_listed_run *a, const rl_eval_listed_run *b)
{
    return cmp_num(a->duration_s, b->duration_s);
}
static int by_planner(const rl_eval_listed_run *a, const rl_eval_listed_run *b)
{
    return cmp_str(a->planner, b->planner);
}
static int by_vehicles(const rl_eval_listed_run *a, const rl_eval_listed_run *b)
{
    return cmp_num((double)a->nvehicles, (double)b->nvehicles);
}
static int by_seed(const rl_eval_listed_run *a, const rl_eval_listed_run *b)
{
    return a->seed < b->seed ? -1 : a->seed > b->seed;
}
static int by_faults(const rl_eval_listed_run *a, const rl_eval_listed_run *b)
{
    for (size_t i = 0; i < a->nfaults && i < b->nfaults; i++) {
        int c = strcmp(a->faults[i], b->faults[i]);
        if (c)
            return c;
    }
    return a->nfaults < b->nfaults ? -1 : a->nfaults > b->nfaults;
}
static int by_evaluations(const rl_eval_listed_run *a, const rl_eval_listed_run *b)
{
    return cmp_num((double)a->nevaluations, (double)b->nevaluations);
}

static const struct {
    const char *name;
    run_cmp cmp;
} sort_keys[] = {{"time", by_time},       {"name", by_name},         {"state", by_state},
                 {"result", by_result},   {"duration", by_duration}, {"planner", by_planner},
                 {"vehicles", by_vehicles}, {"seed", by_seed},       {"faults", by_faults},
                 {"evaluations", by_evaluations}};

/* qsort has no context argument: the key and direction of the sort under way are passed
 * through this thread's own variables. */
static _Thread_local run_cmp sort_cmp;
static _Thread_local int sort_sign;

static int cmp_runs(const void *pa, const void *pb)
{
    const rl_eval_listed_run *a = pa, *b = pb;
    int c = sort_cmp(a, b);
    if (c)
        return sort_sign * c;
    return strcmp(b->name, a->name); /* ties: newest directory first, whatever the direction */
}

int rl_eval_list_sort(rl_eval_listed_run *runs, size_t count, const char *field)
{
    if (!field || (!runs && count))
        return rl_error_set(RL_EINVAL, "rl_eval_list_sort: NULL argument");
    int sign = 1;
    const char *name = field;
    if (*name == '-') {
        sign = -1;
        name++;
    }
    for (size_t k = 0; k < sizeof sort_keys / sizeof sort_keys[0]; k++)
        if (strcasecmp(name, sort_keys[k].name) == 0) {
            sort_cmp = sort_keys[k].cmp;
            sort_sign = sign;
            if (count > 1)
                qsort(runs, count, sizeof *runs, cmp_runs);
            return RL_OK;
        }
    return rl_error_set(RL_EINVAL,
                        "--sort '%s': not a field (time, name, state, result, duration, planner, "
                        "vehicles, seed, faults, evaluations; '-' before it: descending)",
                        field);
}
