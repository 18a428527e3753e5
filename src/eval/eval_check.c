/* The helpers metrics build their results with: checks (with the shorthands for
 * UNAVAILABLE and INSUFFICIENT), intervals from boolean series, limits and their
 * resolution, and the window's sample range. Settings are read by eval_settings.c and
 * figures handed over by eval_figures.c. */
#include "eval/eval_sink.h"

#include "eval/eval_coverage.h"

#include "core/text.h"
#include "runlab/error.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rl_eval_status_name(rl_eval_status status)
{
    static const char *const names[] = {"PASS", "FAIL", "INSUFFICIENT", "UNAVAILABLE", "N/A"};
    return (unsigned)status < RL_EVAL_STATUS_COUNT ? names[status] : "?";
}

size_t eval_window(const eval_run *run, const double *t, size_t n, size_t *first)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first sample at or after the window's start */
        size_t mid = lo + (hi - lo) / 2;
        if (t[mid] < run->window_start)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    hi = n;
    while (end < hi) { /* first sample after the window's stop */
        size_t mid = end + (hi - end) / 2;
        if (t[mid] <= run->window_stop)
            end = mid + 1;
        else
            hi = mid;
    }
    *first = lo;
    return end - lo;
}

/* ---- limits and their resolution ---------------------------------------------------- */

/* A decimal step such as 0.001 is not exact in binary, and neither is the difference of
 * two values a step apart: the excess is compared with the resolution less one part in
 * 10^9 of it. */
#define RESOLUTION_SLACK 1e-9

bool eval_over_limit(double value, double limit, double resolution)
{
    if (!(resolution > 0))
        return value > limit;
    return value - limit >= resolution * (1 - RESOLUTION_SLACK);
}

const char *eval_format_value(double value, double resolution, char *buf, size_t cap)
{
    if (!(resolution > 0) || !isfinite(value)) {
        snprintf(buf, cap, "%.6g", value);
        return buf;
    }
    int decimals = 0;
    while (decimals < 9 && resolution * pow(10, decimals) < 1 - RESOLUTION_SLACK)
        decimals++;
    snprintf(buf, cap, "%.*f", decimals, value);
    if (decimals > 0 && strchr(buf, '.')) {
        size_t n = strlen(buf);
        while (n > 0 && buf[n - 1] == '0')
            buf[--n] = 0;
        if (n > 0 && buf[n - 1] == '.')
            buf[--n] = 0;
    }
    if (strcmp(buf, "-0") == 0)
        snprintf(buf, cap, "0");
    return buf;
}

/* ---- intervals ---------------------------------------------------------------------- */

int eval_intervals_add(eval_intervals *s, double t0, double t1)
{
    int rc = rl_grow_array((void **)&s->iv, &s->cap, s->n + 1, sizeof s->iv[0], "intervals");
    if (rc < 0)
        return rc;
    s->iv[s->n][0] = t0;
    s->iv[s->n][1] = t1;
    s->n++;
    return RL_OK;
}

int eval_intervals_from_mask(eval_intervals *s, const double *t, const bool *mask, size_t n,
                             double min_duration)
{
    for (size_t i = 0; i < n;) {
        if (!mask[i]) {
            i++;
            continue;
        }
        size_t j = i;
        while (j + 1 < n && mask[j + 1])
            j++;
        double t0 = t[i], t1 = t[j];
        if (j == i && n > 1) { /* a lone sample stands for its period, inside the data */
            if (i + 1 < n)
                t1 = t[i + 1];
            else
                t0 = t[i - 1];
        }
        if (t1 - t0 >= min_duration) {
            int rc = eval_intervals_add(s, t0, t1);
            if (rc < 0)
                return rc;
        }
        i = j + 1;
    }
    return RL_OK;
}

double eval_intervals_total(const eval_intervals *s)
{
    double sum = 0;
    for (size_t i = 0; i < s->n; i++)
        sum += s->iv[i][1] - s->iv[i][0];
    return sum;
}

void eval_intervals_free(eval_intervals *s)
{
    free(s->iv);
    memset(s, 0, sizeof *s);
}

/* ---- checks ------------------------------------------------------------------------- */

void eval_check_clear(rl_eval_check *c)
{
    free(c->metric);
    free(c->check);
    free(c->vehicles);
    free(c->unit);
    free(c->intervals);
    free(c->reason);
    free(c->figure);
    memset(c, 0, sizeof *c);
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

int eval_check_add(eval_ctx *ctx, const char *check, const int *vehicles, size_t nvehicles,
                   rl_eval_status status, double value, double threshold, const char *unit,
                   const eval_intervals *intervals, const char *reason_fmt, ...)
{
    struct eval_sink *s = ctx->sink;
    int rc = rl_grow_array((void **)&s->checks, &s->cap_checks, s->nchecks + 1,
                           sizeof s->checks[0], "checks");
    if (rc < 0)
        return rc;
    rl_eval_check c = {0};
    c.status = status;
    c.value = value;
    c.threshold = threshold;
    c.judged_s = c.window_s = NAN;
    c.metric = strdup(ctx->metric->name);
    c.check = dup_or_empty(check);
    c.unit = dup_or_empty(unit);
    va_list ap;
    va_start(ap, reason_fmt);
    char small[2];
    va_list ap2;
    va_copy(ap2, ap);
    int need = vsnprintf(small, sizeof small, reason_fmt, ap2);
    va_end(ap2);
    if (need >= 0) {
        c.reason = malloc((size_t)need + 1);
        if (c.reason)
            vsnprintf(c.reason, (size_t)need + 1, reason_fmt, ap);
    }
    va_end(ap);
    int ok = c.metric && c.check && c.unit && c.reason;
    if (ok && ctx->coverage.active) { /* the data's coverage, and what it does to the status */
        c.judged_s = ctx->coverage.judged_s;
        c.window_s = ctx->coverage.window_s;
        char *why = NULL;
        ok = eval_coverage_apply(&ctx->coverage, &c.status, c.reason, &why) == RL_OK;
        if (why) {
            free(c.reason);
            c.reason = why;
        }
    }
    if (ok && nvehicles) {
        c.vehicles = malloc(nvehicles * sizeof *c.vehicles);
        ok = c.vehicles != NULL;
        if (ok) {
            memcpy(c.vehicles, vehicles, nvehicles * sizeof *c.vehicles);
            c.nvehicles = nvehicles;
        }
    }
    if (ok && intervals && intervals->n) {
        c.intervals = malloc(intervals->n * sizeof c.intervals[0]);
        ok = c.intervals != NULL;
        if (ok) {
            memcpy(c.intervals, intervals->iv, intervals->n * sizeof c.intervals[0]);
            c.nintervals = intervals->n;
        }
    }
    if (!ok) {
        eval_check_clear(&c);
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory adding a check");
    }
    s->checks[s->nchecks++] = c;
    return RL_OK;
}

int eval_check_unavailable(eval_ctx *ctx, const char *check, int vehicle, const char *why)
{
    return eval_check_add(ctx, check, &vehicle, 1, RL_EVAL_UNAVAILABLE, NAN, NAN, NULL, NULL,
                          "%s", why);
}

int eval_check_insufficient(eval_ctx *ctx, const char *check, int vehicle, size_t have,
                            double need, const char *what)
{
    return eval_check_add(ctx, check, &vehicle, 1, RL_EVAL_INSUFFICIENT, (double)have, need,
                          "messages", NULL,
                          "vehicle %d: %zu %s inside the window, at least %.0f needed", vehicle,
                          have, what, need);
}

void eval_sink_clear(struct eval_sink *s)
{
    for (size_t i = 0; i < s->nchecks; i++)
        eval_check_clear(&s->checks[i]);
    free(s->checks);
    for (size_t i = 0; i < s->nfigures; i++) {
        free(s->figures[i].name);
        free(s->figures[i].caption);
        free(s->figures[i].metric);
        rl_figure_free(s->figures[i].fig);
    }
    free(s->figures);
    memset(s, 0, sizeof *s);
}
