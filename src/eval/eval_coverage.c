/* The coverage of a check's data (issue 28.4): the stretches of the window its samples leave
 * unjudged (gaps longer than the metric's max_gap), how many seconds they do judge, and
 * whether a topic the check reads mostly failed to decode (issue 29.8). eval_check_add
 * applies what is set here to every check a metric adds (eval_coverage_apply). */
#include "eval/eval_coverage.h"

#include "runlab/error.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *eval_topic_name(eval_topic topic)
{
    static const char *const names[] = {"state", "observation", "command_trajectory"};
    return (unsigned)topic < EVAL_TOPIC_COUNT ? names[topic] : "?";
}

int eval_setting_max_gap(eval_ctx *ctx, double *out)
{
    int rc = eval_setting_f64(ctx, "max_gap", out);
    if (rc == RL_OK && !(*out > 0))
        rc = rl_error_set(RL_EINVAL, "configuration: %s.max_gap: must be > 0", ctx->metric->name);
    return rc;
}

static int gap_add(eval_coverage *c, double t0, double t1)
{
    if (!(t1 > t0))
        return RL_OK;
    if (c->ngaps == c->cap_gaps) {
        size_t cap = c->cap_gaps ? 2 * c->cap_gaps : 8;
        void *g = realloc(c->gaps, cap * sizeof c->gaps[0]);
        if (!g)
            return rl_error_set(RL_ENOMEM, "evaluation: out of memory for the coverage");
        c->gaps = g;
        c->cap_gaps = cap;
    }
    c->gaps[c->ngaps][0] = t0;
    c->gaps[c->ngaps][1] = t1;
    c->ngaps++;
    return RL_OK;
}

/* Adds the stretches of [ws, we] farther than max_gap from samples on both sides: between
 * two consecutive samples more than max_gap apart, and before the first / after the last
 * sample when that edge is more than max_gap long (with no sample at all: the window).
 * Non-finite times and times going back are skipped. */
static int find_gaps(eval_coverage *c, double ws, double we, const double *t, size_t n,
                     double max_gap)
{
    /* A step of exactly max_gap is no gap: 0.05 - -0.2 is 0.25000000000000003 in binary. */
    max_gap *= 1 + 1e-9;
    double prev = ws;
    bool have_prev = false, done = false;
    int rc = RL_OK;
    for (size_t i = 0; rc == RL_OK && i < n && !done; i++) {
        /* The common stretch first, a step a sample: after a sample inside the window, one
           not going back, inside it and within max_gap, only moves prev (a NaN fails the
           first test, an infinity the third; both go the general way below). */
        if (have_prev && prev > ws) {
            while (i < n && t[i] >= prev && t[i] - prev <= max_gap && t[i] < we)
                prev = t[i++];
            if (i == n)
                break;
        }
        double x = t[i];
        if (!isfinite(x) || (have_prev && x < prev))
            continue;
        if (x <= ws) {
            prev = x, have_prev = true;
            continue;
        }
        double from = have_prev ? prev : ws;
        if (x - from > max_gap)
            rc = gap_add(c, fmax(from, ws), fmin(x, we));
        if (x >= we)
            done = true;
        prev = x, have_prev = true;
    }
    if (rc == RL_OK && !done && (!have_prev || we - prev > max_gap))
        rc = gap_add(c, have_prev ? fmax(prev, ws) : ws, we);
    return rc;
}

static int by_start(const void *a, const void *b)
{
    const double *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Sorts and joins overlapping gaps; judged_s is what they leave of the window. */
static void settle(eval_coverage *c)
{
    if (c->ngaps > 1)
        qsort(c->gaps, c->ngaps, sizeof c->gaps[0], by_start);
    size_t k = 0;
    for (size_t i = 0; i < c->ngaps; i++) {
        if (k > 0 && c->gaps[i][0] <= c->gaps[k - 1][1])
            c->gaps[k - 1][1] = fmax(c->gaps[k - 1][1], c->gaps[i][1]);
        else
            c->gaps[k][0] = c->gaps[i][0], c->gaps[k][1] = c->gaps[i][1], k++;
    }
    c->ngaps = k;
    double missing = 0;
    for (size_t i = 0; i < k; i++)
        missing += c->gaps[i][1] - c->gaps[i][0];
    /* To the microsecond: 10 - 4.04 is 5.960000000000001 in binary, and the outputs
       would carry that tail. */
    c->judged_s = fmax(0, round((c->window_s - missing) * 1e6) / 1e6);
}

static void name_topic(eval_coverage *c, const eval_vehicle *v, eval_topic topic)
{
    size_t len = strlen(c->what);
    if (len + 1 < sizeof c->what)
        snprintf(c->what + len, sizeof c->what - len, "%srt/vehicle/%d/%s", len ? " and " : "",
                 v->id, eval_topic_name(topic));
}

void eval_coverage_topic(eval_ctx *ctx, const eval_vehicle *v, eval_topic topic)
{
    eval_coverage *c = &ctx->coverage;
    if ((unsigned)topic >= EVAL_TOPIC_COUNT)
        return;
    const eval_decoding *d = &v->decoding[topic];
    if (!c->undecodable)
        c->undecodable = d->undecodable;
    if (d->failed && !c->decode_note[0])
        snprintf(c->decode_note, sizeof c->decode_note,
                 "%zu of %zu messages of rt/vehicle/%d/%s did not decode (decoding.csv)",
                 d->failed, d->messages, v->id, eval_topic_name(topic));
}

int eval_coverage_add(eval_ctx *ctx, const eval_vehicle *v, eval_topic topic, const double *t,
                      size_t n)
{
    eval_coverage *c = &ctx->coverage;
    const eval_run *run = ctx->run;
    name_topic(c, v, topic);
    eval_coverage_topic(ctx, v, topic);
    int rc = find_gaps(c, run->window_start, run->window_stop, t, n, c->max_gap);
    if (rc < 0) {
        eval_coverage_end(ctx);
        return rc;
    }
    settle(c);
    return RL_OK;
}

/* Ends what was being judged and starts an empty coverage for the window. */
static void coverage_start(eval_ctx *ctx, double max_gap, bool judge_gaps)
{
    eval_coverage_end(ctx);
    eval_coverage *c = &ctx->coverage;
    c->active = true;
    c->judge_gaps = judge_gaps;
    c->max_gap = max_gap;
    c->window_s = fmax(0, ctx->run->window_stop - ctx->run->window_start);
}

int eval_coverage_begin(eval_ctx *ctx, const eval_vehicle *v, eval_topic topic, const double *t,
                        size_t n, double max_gap, bool judge_gaps)
{
    coverage_start(ctx, max_gap, judge_gaps);
    return eval_coverage_add(ctx, v, topic, t, n);
}

int eval_coverage_gaps_copy(const eval_ctx *ctx, eval_coverage_gaps *out)
{
    const eval_coverage *c = &ctx->coverage;
    memset(out, 0, sizeof *out);
    if (c->ngaps == 0)
        return RL_OK;
    out->gaps = malloc(c->ngaps * sizeof out->gaps[0]);
    if (!out->gaps)
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory for the coverage");
    memcpy(out->gaps, c->gaps, c->ngaps * sizeof out->gaps[0]);
    out->n = c->ngaps;
    return RL_OK;
}

void eval_coverage_gaps_free(eval_coverage_gaps *g)
{
    free(g->gaps);
    memset(g, 0, sizeof *g);
}

int eval_coverage_add_gaps(eval_ctx *ctx, const eval_vehicle *v, eval_topic topic,
                           const eval_coverage_gaps *g)
{
    eval_coverage *c = &ctx->coverage;
    name_topic(c, v, topic);
    eval_coverage_topic(ctx, v, topic);
    int rc = RL_OK;
    for (size_t i = 0; rc == RL_OK && i < g->n; i++)
        rc = gap_add(c, g->gaps[i][0], g->gaps[i][1]);
    if (rc < 0) {
        eval_coverage_end(ctx);
        return rc;
    }
    /* The union of stretches does not depend on how they were joined before: the same
       stretches, in the same order, as joining the samples' gaps here. */
    settle(c);
    return RL_OK;
}

int eval_coverage_begin_gaps(eval_ctx *ctx, const eval_vehicle *v, eval_topic topic,
                             const eval_coverage_gaps *g, double max_gap, bool judge_gaps)
{
    coverage_start(ctx, max_gap, judge_gaps);
    return eval_coverage_add_gaps(ctx, v, topic, g);
}

void eval_coverage_end(eval_ctx *ctx)
{
    free(ctx->coverage.gaps);
    memset(&ctx->coverage, 0, sizeof ctx->coverage);
}

/* The longest gap: the one a reason names. */
static size_t longest_gap(const eval_coverage *c)
{
    size_t best = 0;
    for (size_t i = 1; i < c->ngaps; i++)
        if (c->gaps[i][1] - c->gaps[i][0] > c->gaps[best][1] - c->gaps[best][0])
            best = i;
    return best;
}

/* printf into a new string; NULL when out of memory. */
static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *format(const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int need = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    char *out = need >= 0 ? malloc((size_t)need + 1) : NULL;
    if (out)
        vsnprintf(out, (size_t)need + 1, fmt, ap);
    va_end(ap);
    return out;
}

int eval_coverage_apply(const eval_coverage *c, rl_eval_status *status, const char *reason,
                        char **new_reason)
{
    *new_reason = NULL;
    if (!c->active || *status == RL_EVAL_UNAVAILABLE || *status == RL_EVAL_NA)
        return RL_OK;
    if (c->undecodable) {
        *status = RL_EVAL_INSUFFICIENT;
        *new_reason = format("%s; what decoded: %s", c->undecodable, reason);
    } else if (c->judge_gaps && *status == RL_EVAL_PASS && c->ngaps > 0) {
        size_t g = longest_gap(c);
        double t0 = c->gaps[g][0], t1 = c->gaps[g][1];
        char more[48] = "";
        if (c->ngaps > 1)
            snprintf(more, sizeof more, " (and %zu more)", c->ngaps - 1);
        *status = RL_EVAL_INSUFFICIENT;
        *new_reason = format("%s: no data %.2f..%.2f s (%.2f s, longer than max_gap %g s)%s: "
                             "judged %.2f of %.2f s, cannot pass; the rest: %s%s%s",
                             c->what, t0, t1, t1 - t0, c->max_gap, more, c->judged_s,
                             c->window_s, reason, c->decode_note[0] ? "; " : "", c->decode_note);
    } else if (c->decode_note[0]) {
        *new_reason = format("%s; %s", reason, c->decode_note);
    } else
        return RL_OK;
    return *new_reason ? RL_OK
                       : rl_error_set(RL_ENOMEM, "evaluation: out of memory for a reason");
}

/* judged_s / window_s, NaN when not stated (an empty window is covered when judged). */
double eval_check_coverage(const rl_eval_check *c)
{
    if (!isfinite(c->judged_s) || !isfinite(c->window_s))
        return NAN;
    return c->window_s > 0 ? round(c->judged_s / c->window_s * 1e6) / 1e6 : 1; /* 6 digits */
}
