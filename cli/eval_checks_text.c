/* `runlab evaluate`'s check lines for people: columns as wide as their longest cell (a
 * check name such as "command_trajectory largest gap" keeps its row in line), bounded by
 * the terminal's width, and the checks that did not pass listed last, so they are on
 * screen when the command ends. */
#include "eval_checks_text.h"

#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The room REASON needs beside the other columns (else it goes below them), and the
 * narrowest a shrunk column gets. */
enum { REASON_MIN = 30, COLUMN_MIN = 8, MAX_COLUMNS = 7 };

int eval_text_width(void)
{
    const char *env = getenv("COLUMNS");
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end == 0 && v >= 40 && v <= 1000)
            return (int)v;
    }
    return 100;
}

/* Display columns of UTF-8 text: one per code point (names are ASCII in practice). */
static int text_cols(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Prints `s` in `width` columns: cut to width-1 code points and "…" when longer, padded
 * with spaces (`pad`) and one space between columns, or as it is when it ends the line. */
static void put_cell(FILE *out, const char *s, int width, bool pad)
{
    int cols = text_cols(s);
    if (cols <= width) {
        cli_print_escaped(out, s);
        if (pad)
            fprintf(out, "%*s ", width - cols, "");
        return;
    }
    size_t keep = 0;
    for (int k = 0; s[keep] && k < width - 1; keep++)
        k += (((unsigned char)s[keep + 1] & 0xC0) != 0x80);
    char *cut = strndup(s, keep);
    if (cut)
        cli_print_escaped(out, cut);
    free(cut);
    fputs(pad ? "\u2026 " : "\u2026", out);
}

typedef struct text_table {
    int ncols;
    const char *head[MAX_COLUMNS];
    int width[MAX_COLUMNS]; /* of the columns before the last (REASON), which runs on */
    bool reason_below;      /* REASON on a line of its own, indented (a narrow terminal) */
} text_table;

static void table_measure(text_table *t, const char *const *cells)
{
    for (int i = 0; i < t->ncols - 1; i++) {
        int w = text_cols(cells[i]);
        if (w > t->width[i])
            t->width[i] = w;
    }
}

/* When the columns before REASON leave it fewer than REASON_MIN of `width`, REASON goes on
 * a line of its own under each row, and only when those columns alone are wider than
 * `width` does the widest of them shrink (to COLUMN_MIN at least, its cells cut with "…"). */
static void table_fit(text_table *t, int width)
{
    int used = 0;
    for (int i = 0; i < t->ncols - 1; i++)
        used += t->width[i] + 1;
    t->reason_below = used + REASON_MIN > width;
    while (t->reason_below && used - 1 > width) {
        int widest = -1;
        for (int i = 0; i < t->ncols - 1; i++)
            if (t->width[i] > COLUMN_MIN && (widest < 0 || t->width[i] > t->width[widest]))
                widest = i;
        if (widest < 0)
            return;
        t->width[widest]--;
        used--;
    }
}

static void table_row(FILE *out, const text_table *t, const char *const *cells)
{
    for (int i = 0; i < t->ncols - 1; i++) {
        bool ends_line = t->reason_below && i == t->ncols - 2;
        put_cell(out, cells[i], t->width[i], !ends_line);
        if (ends_line)
            fputs("\n    ", out);
    }
    cli_print_escaped(out, cells[t->ncols - 1]);
    fputc('\n', out);
}

static bool not_passed(const rl_eval_check *c)
{
    return c->status == RL_EVAL_FAIL || c->status == RL_EVAL_INSUFFICIENT ||
           c->status == RL_EVAL_UNAVAILABLE;
}

/* The cells of a check that did not pass: vehicles, the first interval (and how many more),
 * the worst value with its unit. */
typedef struct bad_cells {
    char vehicles[64], intervals[80], worst[80];
} bad_cells;

static void bad_cells_of(const rl_eval_check *c, bad_cells *b)
{
    int k = 0;
    b->vehicles[0] = 0;
    for (size_t i = 0; i < c->nvehicles && k < (int)sizeof b->vehicles - 12; i++)
        k += snprintf(b->vehicles + k, sizeof b->vehicles - (size_t)k, "%s%d", i ? "," : "",
                      c->vehicles[i]);
    if (!c->nvehicles)
        snprintf(b->vehicles, sizeof b->vehicles, "-");
    if (c->nintervals == 0)
        snprintf(b->intervals, sizeof b->intervals, "-");
    else if (c->nintervals == 1)
        snprintf(b->intervals, sizeof b->intervals, "%.6g..%.6g", c->intervals[0][0],
                 c->intervals[0][1]);
    else
        snprintf(b->intervals, sizeof b->intervals, "%.6g..%.6g +%zu", c->intervals[0][0],
                 c->intervals[0][1], c->nintervals - 1);
    /* 4 digits: the limit and the exact value are in the reason and summary.json. */
    if (!isfinite(c->value))
        snprintf(b->worst, sizeof b->worst, "-");
    else
        snprintf(b->worst, sizeof b->worst, "%.4g%s%s", c->value, *c->unit ? " " : "", c->unit);
}

static void print_passed(FILE *out, const rl_eval_result *res, int width)
{
    text_table t = {4, {"STATUS", "METRIC", "CHECK", "REASON"}, {0}, false};
    size_t rows = 0;
    table_measure(&t, t.head);
    for (size_t i = 0; i < res->nchecks; i++) {
        const rl_eval_check *c = &res->checks[i];
        if (not_passed(c))
            continue;
        const char *cells[] = {rl_eval_status_name(c->status), c->metric, c->check, c->reason};
        table_measure(&t, cells);
        rows++;
    }
    if (!rows)
        return;
    table_fit(&t, width);
    table_row(out, &t, t.head);
    for (size_t i = 0; i < res->nchecks; i++) {
        const rl_eval_check *c = &res->checks[i];
        if (not_passed(c))
            continue;
        const char *cells[] = {rl_eval_status_name(c->status), c->metric, c->check, c->reason};
        table_row(out, &t, cells);
    }
}

static void print_not_passed(FILE *out, const rl_eval_result *res, int width)
{
    fprintf(out, "\nNot passed: %zu FAIL, %zu INSUFFICIENT, %zu UNAVAILABLE\n",
            res->counts[RL_EVAL_FAIL], res->counts[RL_EVAL_INSUFFICIENT],
            res->counts[RL_EVAL_UNAVAILABLE]);
    text_table t = {7, {"STATUS", "METRIC", "CHECK", "VEHICLES", "INTERVALS (s)", "WORST", "REASON"},
                    {0}, false};
    size_t rows = 0;
    table_measure(&t, t.head);
    for (int pass = 0; pass < 2; pass++) { /* measure, then print */
        if (pass == 1) {
            if (!rows)
                break;
            table_fit(&t, width);
            table_row(out, &t, t.head);
        }
        for (size_t i = 0; i < res->nchecks; i++) {
            const rl_eval_check *c = &res->checks[i];
            if (!not_passed(c) || c->shared_reason)
                continue;
            bad_cells b;
            bad_cells_of(c, &b);
            const char *cells[] = {rl_eval_status_name(c->status), c->metric, c->check,
                                   b.vehicles, b.intervals, b.worst, c->reason};
            if (pass == 0) {
                table_measure(&t, cells);
                rows++;
            } else
                table_row(out, &t, cells);
        }
    }
    /* Checks sharing a reason: the reason once, naming their metrics. */
    for (const char *p = res->shared_reasons; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char *line = strndup(p, n);
        if (line) {
            cli_print_escaped(out, line);
            fputc('\n', out);
        }
        free(line);
        p += n + (nl ? 1 : 0);
    }
}

void eval_print_checks(FILE *out, const rl_eval_result *res, int width)
{
    print_passed(out, res, width);
    print_not_passed(out, res, width);
}
