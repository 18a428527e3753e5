/* `runlab evaluate`'s lines for the checks (cli/eval_checks_text.c): the passed checks in
 * a table whose columns size to their content, then the list of checks that did not pass,
 * last, right above the result line. */
#ifndef RUNLAB_CLI_EVAL_CHECKS_TEXT_H
#define RUNLAB_CLI_EVAL_CHECKS_TEXT_H

#include "runlab/eval.h"

#include <stdio.h>

/* The terminal width the tables fit: $COLUMNS when it is a number 40..1000, else 100. */
int eval_text_width(void);

/* Prints the checks of `res` to `out` fitted to `width` columns (eval_text_width): a table
 * of the PASS and N/A checks (STATUS METRIC CHECK REASON), then "Not passed: ..." and a
 * table of every FAIL, INSUFFICIENT and UNAVAILABLE check (STATUS METRIC CHECK VEHICLES
 * INTERVALS (s) WORST REASON), then the reasons several checks share, once each. Column
 * widths come from the content; when the columns before REASON would leave it fewer than
 * 30 columns REASON goes on a line of its own under each row, indented, and only when those
 * columns alone are wider than `width` do the widest of them shrink, their cells ending in
 * "…". */
void eval_print_checks(FILE *out, const rl_eval_result *res, int width);

#endif
