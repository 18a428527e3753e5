/* The checks part of an evaluation's report.html: what did not pass comes first, in one
 * table with links to the figures below, and the passed checks are folded per metric, so a
 * failing report shows its failures without scrolling past every PASS row (issue 28). */
#include "eval/eval_report_checks.h"

#include "core/text.h"
#include "eval/eval_coverage.h"
#include "runlab/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void eval_figure_anchor(const eval_figure_entry *e, char *buf, size_t cap)
{
    snprintf(buf, cap, "fig-%s", e->name);
}

const eval_figure_entry *eval_figure_for_check(const struct eval_sink *s, const rl_eval_check *c)
{
    if (c->figure) { /* the figure the metric named as showing this check */
        for (size_t i = 0; i < s->nfigures; i++)
            if (strcmp(s->figures[i].name, c->figure) == 0)
                return &s->figures[i];
        return NULL;
    }
    for (size_t i = 0; i < s->nfigures; i++)
        if (s->figures[i].metric && strcmp(s->figures[i].metric, c->metric) == 0)
            return &s->figures[i];
    return NULL;
}

bool eval_check_not_passed(const rl_eval_check *c)
{
    return c->status == RL_EVAL_FAIL || c->status == RL_EVAL_INSUFFICIENT ||
           c->status == RL_EVAL_UNAVAILABLE;
}

/* The reason with the coverage after it when under 100 % ("; coverage 60 % (6.0 of 10.0
 * s)"); NULL when the reason stands alone (or out of memory: then it does). */
static char *report_reason(const rl_eval_check *c)
{
    double cov = eval_check_coverage(c);
    if (!isfinite(cov) || cov >= 0.9995)
        return NULL;
    rl_buf b = {0};
    rl_buf_printf(&b, "%s; coverage %.1f %% (%.2f of %.2f s)", c->reason, 100 * cov, c->judged_s,
                  c->window_s);
    return rl_buf_take(&b, NULL);
}

static const char *const COLUMNS[] = {"metric", "check",     "vehicles", "status", "value",
                                      "limit",  "unit", "intervals (s)", "reason"};
enum { CHECK_COLUMNS = 9 };

/* One check's row, the same nine columns in every checks table; with `link`, the check's
 * name links to its figure when it has one (a column of its own would make the table too
 * wide for a 1100 px page). */
static int check_row(rl_report *r, const struct eval_sink *s, const rl_eval_check *c,
                     bool link)
{
    rl_buf vb = {0}, ib = {0};
    rl_buf_puts(&vb, ""), rl_buf_puts(&ib, "");
    for (size_t i = 0; i < c->nvehicles; i++)
        rl_buf_printf(&vb, "%s%d", i ? " " : "", c->vehicles[i]);
    for (size_t i = 0; i < c->nintervals; i++) { /* "; " between: a line may break there */
        /* 9 digits: a time to the µs in an hour's run, without the binary noise of
           12.280000000000001 (checks.csv has every digit) */
        char a[32] = "", b[32] = "";
        if (isfinite(c->intervals[i][0]))
            snprintf(a, sizeof a, "%.9g", c->intervals[i][0]);
        if (isfinite(c->intervals[i][1]))
            snprintf(b, sizeof b, "%.9g", c->intervals[i][1]);
        rl_buf_printf(&ib, "%s%s..%s", i ? "; " : "", a, b);
    }
    char *veh = rl_buf_take(&vb, NULL), *iv = rl_buf_take(&ib, NULL), *why = report_reason(c);
    char val[32] = "", thr[32] = ""; /* for people: 6 digits (the JSON has them all) */
    if (isfinite(c->value))
        snprintf(val, sizeof val, "%.6g", c->value);
    if (isfinite(c->threshold))
        snprintf(thr, sizeof thr, "%.6g", c->threshold);
    char anchor[160] = "#";
    const eval_figure_entry *fig = link ? eval_figure_for_check(s, c) : NULL;
    if (fig)
        eval_figure_anchor(fig, anchor + 1, sizeof anchor - 1);
    int rc;
    if (!veh || !iv)
        rc = rl_error_set(RL_ENOMEM, "report: out of memory");
    else {
        rl_report_cell cells[CHECK_COLUMNS] = {
            {RL_CELL_TEXT, c->metric, NULL, 0},
            fig ? (rl_report_cell){RL_CELL_LINK, c->check, anchor, 0}
                : (rl_report_cell){RL_CELL_TEXT, c->check, NULL, 0},
            {RL_CELL_TEXT, veh, NULL, 0},        {RL_CELL_BADGE, NULL, NULL, (rl_badge)c->status},
            {RL_CELL_TEXT, val, NULL, 0},        {RL_CELL_TEXT, thr, NULL, 0},
            {RL_CELL_TEXT, c->unit, NULL, 0},    {RL_CELL_TEXT, iv, NULL, 0},
            {RL_CELL_TEXT, why ? why : c->reason, NULL, 0}};
        rc = rl_report_table_row_cells(r, cells);
    }
    free(veh), free(iv), free(why);
    return rc;
}

/* The block on top: every check that did not pass, in the sink's order. */
static int not_passed_table(rl_report *r, const struct eval_sink *s)
{
    size_t n[RL_EVAL_STATUS_COUNT] = {0};
    for (size_t i = 0; i < s->nchecks; i++)
        n[s->checks[i].status < RL_EVAL_STATUS_COUNT ? s->checks[i].status : RL_EVAL_NA]++;
    size_t bad = n[RL_EVAL_FAIL] + n[RL_EVAL_INSUFFICIENT] + n[RL_EVAL_UNAVAILABLE];
    if (bad == 0)
        return rl_report_paragraph(r, "Checks not passed: none (every check passed or does not "
                                      "apply).");
    char caption[160];
    snprintf(caption, sizeof caption, "Checks not passed: %zu FAIL, %zu INSUFFICIENT, %zu UNAVAILABLE",
             n[RL_EVAL_FAIL], n[RL_EVAL_INSUFFICIENT], n[RL_EVAL_UNAVAILABLE]);
    int rc = rl_report_table_begin(r, caption, COLUMNS, CHECK_COLUMNS, RL_TABLE_SORTABLE);
    for (size_t i = 0; rc == RL_OK && i < s->nchecks; i++)
        if (eval_check_not_passed(&s->checks[i]))
            rc = check_row(r, s, &s->checks[i], true);
    return rc == RL_OK ? rl_report_table_end(r) : rc;
}

/* One metric's PASS and N/A checks, folded under "metric: N checks PASS[, M N/A]". */
static int passed_block(rl_report *r, const struct eval_sink *s, const char *metric)
{
    size_t pass = 0, na = 0;
    for (size_t i = 0; i < s->nchecks; i++) {
        const rl_eval_check *c = &s->checks[i];
        if (strcmp(c->metric, metric) == 0 && !eval_check_not_passed(c))
            c->status == RL_EVAL_PASS ? pass++ : na++;
    }
    if (pass + na == 0)
        return RL_OK;
    char summary[256], caption[200];
    int k = snprintf(summary, sizeof summary, "%s: %zu check%s PASS", metric, pass,
                     pass == 1 ? "" : "s");
    if (na && k > 0 && (size_t)k < sizeof summary)
        snprintf(summary + k, sizeof summary - (size_t)k, ", %zu N/A", na);
    snprintf(caption, sizeof caption, "Checks of %s that passed", metric);
    int rc = rl_report_details_begin(r, summary);
    if (rc == RL_OK)
        rc = rl_report_table_begin(r, caption, COLUMNS, CHECK_COLUMNS, RL_TABLE_SORTABLE);
    for (size_t i = 0; rc == RL_OK && i < s->nchecks; i++) {
        const rl_eval_check *c = &s->checks[i];
        if (strcmp(c->metric, metric) == 0 && !eval_check_not_passed(c))
            rc = check_row(r, s, c, false);
    }
    if (rc == RL_OK)
        rc = rl_report_table_end(r);
    return rc == RL_OK ? rl_report_details_end(r) : rc;
}

static bool metric_seen_before(const struct eval_sink *s, size_t i)
{
    for (size_t k = 0; k < i; k++)
        if (strcmp(s->checks[k].metric, s->checks[i].metric) == 0)
            return true;
    return false;
}

int eval_report_checks(rl_report *r, const struct eval_sink *s)
{
    int rc = not_passed_table(r, s);
    if (rc == RL_OK)
        rc = rl_report_heading(r, 2, "Checks passed");
    /* The metrics in the order their checks came (the registry's), each once. */
    for (size_t i = 0; rc == RL_OK && i < s->nchecks; i++)
        if (!metric_seen_before(s, i))
            rc = passed_block(r, s, s->checks[i].metric);
    return rc;
}
