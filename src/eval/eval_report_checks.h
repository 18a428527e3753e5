/* Framework-private: the checks part of report.html (eval_report_checks.c): the block of
 * every check that did not pass, first, then the passed ones folded per metric. */
#ifndef RUNLAB_EVAL_REPORT_CHECKS_H
#define RUNLAB_EVAL_REPORT_CHECKS_H

#include "eval/eval_sink.h"
#include "runlab/report.h"

/* The anchor of figure entry `e` in the report: "fig-<name>". */
void eval_figure_anchor(const eval_figure_entry *e, char *buf, size_t cap);

/* The figure that shows check `c`: the first figure its metric added, or NULL (no link). */
const eval_figure_entry *eval_figure_for_check(const struct eval_sink *s, const rl_eval_check *c);

/* True for the statuses the report and the terminal list first: FAIL, INSUFFICIENT and
 * UNAVAILABLE (PASS and N/A are folded). */
bool eval_check_not_passed(const rl_eval_check *c);

/* Adds to `r` the table "Checks not passed" (FAIL, INSUFFICIENT, UNAVAILABLE in the sink's
 * order, each check's name a link to its figure when there is one; a line saying none without
 * them), then per metric (in the order of their checks) a folded block "metric: N
 * checks PASS" holding its PASS and N/A rows. Every check is in exactly one table, with
 * the same nine columns (metric .. reason). */
int eval_report_checks(rl_report *r, const struct eval_sink *s);

#endif
