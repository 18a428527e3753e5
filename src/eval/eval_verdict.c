/* An evaluation's overall result from its checks (FAIL, else INCOMPLETE, else PASS), whether
 * it ran every metric, how far an interrupted run got against its planned duration, and
 * the reasons several checks share (eight "the run has no map" become one line naming the
 * metrics and how to supply a map), so that terminal, report and summary.json agree. */
#include "eval/eval_verdict.h"

#include "core/text.h"
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"
#include "runlab/record.h"

#include <limits.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rl_eval_verdict_name(rl_eval_verdict verdict)
{
    static const char *const names[] = {"PASS", "FAIL", "INCOMPLETE"};
    return (unsigned)verdict < RL_EVAL_VERDICT_COUNT ? names[verdict] : "?";
}

rl_eval_verdict rl_eval_verdict_of(const size_t counts[RL_EVAL_STATUS_COUNT])
{
    if (counts[RL_EVAL_FAIL] > 0)
        return RL_EVAL_VERDICT_FAIL;
    if (counts[RL_EVAL_INSUFFICIENT] > 0 || counts[RL_EVAL_UNAVAILABLE] > 0)
        return RL_EVAL_VERDICT_INCOMPLETE;
    return RL_EVAL_VERDICT_PASS;
}

/* Seconds to a tenth, without a trailing ".0": 2.5, 20, 1234.6. */
static const char *seconds_text(double s, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.1f", s);
    size_t n = strlen(buf);
    if (n > 2 && strcmp(buf + n - 2, ".0") == 0)
        buf[n - 2] = 0;
    return buf;
}

void eval_interruption_text(const char *state, double elapsed, double planned, char *buf,
                            size_t cap)
{
    const char *how = strcmp(state, "INTERRUPTED") == 0 ? "interrupted"
                      : strcmp(state, "FAILED") == 0    ? "failed"
                                                        : NULL;
    if (!cap)
        return;
    buf[0] = 0;
    if (!how || !isfinite(elapsed))
        return;
    char got[32], plan[32];
    seconds_text(elapsed, got, sizeof got);
    if (isfinite(planned) && planned > 0)
        snprintf(buf, cap, "%s after %s of %s s", how, got, seconds_text(planned, plan, sizeof plan));
    else
        snprintf(buf, cap, "%s after %s s (planned duration not recorded)", how, got);
}

double eval_planned_duration(const char *dir)
{
    rl_record_manifest m;
    double s = rl_record_manifest_read(dir, &m) == RL_OK ? m.planned_duration_s : NAN;
    rl_record_manifest_free(&m);
    if (isfinite(s))
        return s;
    /* experiment.json beside it when the manifest does not say (eval_verdict.h). */
    char path[PATH_MAX];
    json_object *o = NULL;
    if (rl_path_join(path, sizeof path, dir, "experiment.json") < 0 ||
        rl_json_read_file(path, 16 << 20, &o) < 0)
        return NAN;
    bool found = rl_json_get_double(o, "planned_duration_s", &s) == RL_OK && isfinite(s) && s > 0;
    json_object_put(o);
    return found ? s : NAN;
}

static bool shares_reason(const rl_eval_check *a, const rl_eval_check *b)
{
    return a->status == b->status && strcmp(a->reason, b->reason) == 0;
}

static bool groupable(const rl_eval_check *c)
{
    return c->status != RL_EVAL_PASS && c->status != RL_EVAL_NA;
}

/* One line for the checks from `first` on that share its status and reason. */
static void shared_line(rl_buf *b, const eval_run *run, const rl_eval_check *checks, size_t n,
                        size_t first)
{
    const rl_eval_check *c = &checks[first];
    size_t count = 0;
    for (size_t i = first; i < n; i++)
        count += shares_reason(&checks[i], c);
    rl_buf_printf(b, "%s in %zu checks of ", rl_eval_status_name(c->status), count);
    /* The metrics in report order, each once; then the vehicles, each once. */
    size_t named = 0;
    for (size_t i = first; i < n; i++) {
        if (!shares_reason(&checks[i], c))
            continue;
        bool seen = false;
        for (size_t k = first; k < i && !seen; k++)
            seen = shares_reason(&checks[k], c) && strcmp(checks[k].metric, checks[i].metric) == 0;
        if (!seen)
            rl_buf_printf(b, "%s%s", named++ ? ", " : "", checks[i].metric);
    }
    size_t nveh = 0;
    for (size_t i = first; i < n; i++) {
        if (!shares_reason(&checks[i], c))
            continue;
        for (size_t v = 0; v < checks[i].nvehicles; v++) {
            bool seen = false;
            for (size_t k = first; k <= i && !seen; k++) {
                if (!shares_reason(&checks[k], c))
                    continue;
                size_t upto = k == i ? v : checks[k].nvehicles;
                for (size_t w = 0; w < upto && !seen; w++)
                    seen = checks[k].vehicles[w] == checks[i].vehicles[v];
            }
            if (!seen)
                rl_buf_printf(b, "%s%d", nveh++ ? ", " : " (vehicles ", checks[i].vehicles[v]);
        }
    }
    rl_buf_printf(b, "%s: %s", nveh ? ")" : "", c->reason);
    /* How to supply a map; the loader's note on top gives the whole command line. */
    if (run->map_missing && strcmp(c->reason, run->map_missing) == 0)
        rl_buf_puts(b, "; `runlab evaluate RUN --map FILE` judges them against a map");
    rl_buf_putc(b, '\n');
}

int eval_verdict_make(const eval_run *run, const bool *chosen, rl_eval_check *checks,
                      size_t nchecks, eval_verdict *v)
{
    memset(v, 0, sizeof *v);
    for (size_t i = 0; i < nchecks; i++)
        if ((unsigned)checks[i].status < RL_EVAL_STATUS_COUNT)
            v->counts[checks[i].status]++;
    v->verdict = rl_eval_verdict_of(v->counts);
    for (size_t i = 0; i < eval_metric_total; i++)
        v->partial = v->partial || !chosen[i];
    eval_interruption_text(run->state, run->window_stop - run->window_start,
                           run->planned_duration, v->interruption, sizeof v->interruption);
    rl_buf b = {0};
    rl_buf_puts(&b, "");
    for (size_t i = 0; i < nchecks; i++)
        checks[i].shared_reason = false;
    for (size_t i = 0; i < nchecks; i++) {
        rl_eval_check *c = &checks[i];
        if (!groupable(c) || c->shared_reason) /* a group is written at its first check */
            continue;
        size_t count = 0;
        for (size_t k = i; k < nchecks; k++)
            count += shares_reason(&checks[k], c);
        if (count < 2)
            continue;
        for (size_t k = i; k < nchecks; k++)
            if (shares_reason(&checks[k], c))
                checks[k].shared_reason = true;
        shared_line(&b, run, checks, nchecks, i);
        v->nshared++;
    }
    v->shared = rl_buf_take(&b, NULL);
    if (!v->shared)
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory");
    return RL_OK;
}

void eval_verdict_free(eval_verdict *v)
{
    free(v->shared);
    memset(v, 0, sizeof *v);
}
