/* The tolerant CSV scanner of the run loader (unlike runlab/csv.h's strict reader): a
 * run's perflog.csv into per-column arrays, a bad row dropped and counted and the rest of
 * the file still read. Called by run_load.c. */
#include "runlab/runs.h"

#include "analysis/run_columns.h"
#include "core/number_scan.h"
#include "runlab/error.h"
#include "runlab/number.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/runs_internal.h" /* last: it renames the files' shared functions */

/* ---- numbers ------------------------------------------------------------------------------ */

/* Slow path: trims blanks and one pair of quotes, accepts what strtod accepts in full. */
static bool parse_slow(const char *s, size_t n, double *out)
{
    while (n && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
        s++;
        n -= 2;
    }
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double v = rl_parse_f64(buf, &end);
    if (end != buf + n)
        return false;
    *out = v;
    return true;
}

/* Reads the number starting at `s` (the field runs to the next ',' or `le`); `*stop` is
 * set to that delimiter. Plain decimals are read exactly in one pass (rl_scan_decimal);
 * anything else (nan, inf, quotes, blanks, over 19 digits, huge exponents) is handed whole
 * to the slow path. */
static bool scan_num(const char *s, const char *le, double *out, const char **stop)
{
    const char *p = rl_scan_decimal(s, le, out);
    if (p && (p == le || *p == ',')) {
        *stop = p;
        return true;
    }
    const char *f = memchr(s, ',', (size_t)(le - s));
    *stop = f ? f : le;
    return parse_slow(s, (size_t)(*stop - s), out);
}

/* ---- the CSV ------------------------------------------------------------------------------ */

/* The common row in one pass: `ncol` plain decimals separated by ',' and ended by LF or
 * CRLF, stored at dst[j]. Returns the start of the next line, or NULL when the
 * row needs the careful path (any other field, another field count, no line end). */
static const char *plain_row(const char *p, const char *end, size_t ncol, double *dst)
{
    for (size_t j = 0;; j++) {
        double v;
        const char *q = rl_scan_decimal_inline(p, end, &v);
        if (!q || q == end)
            return NULL;
        dst[j] = v;
        if (*q == ',') {
            if (j + 1 >= ncol)
                return NULL;
            p = q + 1;
            continue;
        }
        if (j + 1 != ncol)
            return NULL;
        if (*q == '\n')
            return q + 1;
        if (*q == '\r' && q + 1 < end && q[1] == '\n')
            return q + 2;
        return NULL;
    }
}

enum { ROW_BLOCK = 32 };

/* Moves `nrows` rows of `ncol` numbers (row-major) to column arrays dst[j * stride + r]. */
static void block_to_columns(const double *block, size_t nrows, size_t ncol, double *dst,
                             size_t stride)
{
    for (size_t j = 0; j < ncol; j++) {
        double *col = dst + j * stride;
        for (size_t r = 0; r < nrows; r++)
            col[r] = block[r * ncol + j];
    }
}

static size_t count_lines(const char *p, const char *end)
{
    size_t n = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return n + 1;
        n++;
        p = nl + 1;
    }
    return n;
}

static char *dup_field(const char *s, size_t n)
{
    while (n && (s[n - 1] == '\r' || s[n - 1] == ' '))
        n--;
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
        s++;
        n -= 2;
    }
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static int parse_header(rl_run *run, const char *p, const char *eol, const rl_run_limits *lim)
{
    size_t ncol = 1;
    for (const char *q = p; q < eol; q++)
        ncol += *q == ',';
    if (ncol > lim->max_columns) {
        note(run, RL_REASON_CSV_EMPTY, "header has %zu columns, limit %zu", ncol, lim->max_columns);
        return RL_OK;
    }
    run->column_names = calloc(ncol, sizeof *run->column_names);
    if (!run->column_names)
        return rl_error_set(RL_ENOMEM, "runs: out of memory");
    size_t j = 0;
    const char *f = p;
    for (const char *q = p;; q++) {
        if (q == eol || *q == ',') {
            run->column_names[j] = dup_field(f, (size_t)(q - f));
            if (!run->column_names[j])
                return rl_error_set(RL_ENOMEM, "runs: out of memory");
            j++;
            f = q + 1;
            if (q == eol)
                break;
        }
    }
    run->num_columns = ncol;
    return RL_OK;
}

int load_csv(rl_run *run, const char *dir, const rl_run_limits *lim, struct file_buf *fb)
{
    char path[PATH_MAX], why[256];
    if (snprintf(path, sizeof path, "%s/performance_log.csv", dir) >= (int)sizeof path) {
        note(run, RL_REASON_CSV_UNREADABLE, "path too long");
        return RL_OK;
    }
    size_t len;
    switch (read_file_into(path, lim->max_csv_bytes, fb, &len, why, sizeof why)) {
    case READ_MISSING: note(run, RL_REASON_NO_CSV, "performance_log.csv not found"); return RL_OK;
    case READ_UNREADABLE:
        note(run, RL_REASON_CSV_UNREADABLE, "performance_log.csv: %s", why);
        return RL_OK;
    case READ_TOO_LARGE:
        note(run, RL_REASON_CSV_TOO_LARGE, "performance_log.csv: %s", why);
        return RL_OK;
    case READ_OK: break;
    }
    const char *buf = fb->data;
    const char *p = buf, *end = buf + len;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (p == end) {
        note(run, RL_REASON_CSV_EMPTY, "performance_log.csv is empty");
        return RL_OK;
    }
    if (!eol || memchr(p, '\0', (size_t)(eol - p)) || (size_t)(eol - p) > lim->max_line_bytes) {
        note(run, RL_REASON_CSV_EMPTY, "performance_log.csv has no complete header line");
        return RL_OK;
    }
    int rc = parse_header(run, p, eol, lim);
    if (rc != RL_OK || run->num_columns == 0) {
        return rc;
    }
    p = eol + 1;
    size_t ncol = run->num_columns;
    size_t cap = count_lines(p, end);
    if (cap == 0) {
        note(run, RL_REASON_NO_ROWS, "performance_log.csv has a header and no rows");
        return RL_OK;
    }
    if (cap > SIZE_MAX / sizeof(double) / ncol) {
        note(run, RL_REASON_CSV_TOO_LARGE, "%zu lines x %zu columns", cap, ncol);
        return RL_OK;
    }
    double *data = rl_columns_alloc(fb->pooled ? &fb->arena : NULL, cap * ncol * sizeof *data);
    run->columns = calloc(ncol, sizeof *run->columns);
    if (!data || !run->columns) {
        rl_columns_free(data);
        return rl_error_set(RL_ENOMEM, "runs: out of memory for %zu x %zu numbers", cap, ncol);
    }
    /* Rows are parsed into a small row-major block that stays in the first-level cache and
     * moved to the columns ROW_BLOCK at a time: one store stream per column instead of
     * `ncol` lines touched by every row. */
    double *block = malloc(ROW_BLOCK * ncol * sizeof *block);
    if (!block) {
        rl_columns_free(data);
        return rl_error_set(RL_ENOMEM, "runs: out of memory for %zu columns", ncol);
    }
    size_t block_start = 0; /* the row index of block[0] */
    size_t rows = 0, bad = 0, nul = 0, longl = 0, nonnum = 0, line = 1, first_bad = 0;
    size_t first_nonnum_line = 0, first_nonnum_col = 0;
    bool truncated = false;
    while (p < end) {
        line++;
        if (rows - block_start == ROW_BLOCK) {
            block_to_columns(block, ROW_BLOCK, ncol, data + block_start, cap);
            block_start = rows;
        }
        double *row = block + (rows - block_start) * ncol;
        const char *row_end = plain_row(p, end, ncol, row);
        if (row_end) {
            size_t n = (size_t)(row_end - p) - 1;
            n -= row_end[-2] == '\r';
            if (n <= lim->max_line_bytes) {
                rows++;
                p = row_end;
                continue;
            }
        }
        eol = memchr(p, '\n', (size_t)(end - p));
        const char *le = eol ? eol : end;
        const char *next = eol ? eol + 1 : end;
        size_t n = (size_t)(le - p);
        if (n && p[n - 1] == '\r')
            n--;
        if (n == 0) {
            p = next;
            continue;
        }
        if (!eol) {
            truncated = true;
            break;
        }
        if (n > lim->max_line_bytes) {
            longl++;
            p = next;
            continue;
        }
        if (memchr(p, '\0', n)) {
            nul++;
            p = next;
            continue;
        }
        /* Cells go straight into row `rows`; the row only counts once it is complete. */
        /* Non-numeric cells count only once their row is kept: a dropped row is one
         * bad_rows problem, not also a list of odd cells. */
        size_t j = 0, row_nonnum = 0, row_first_nonnum = 0;
        const char *q = p, *le2 = p + n;
        bool ok = true;
        for (;;) {
            if (j >= ncol) {
                ok = false;
                break;
            }
            double v;
            const char *stop;
            if (!scan_num(q, le2, &v, &stop)) {
                v = NAN;
                if (row_nonnum++ == 0)
                    row_first_nonnum = j + 1;
            }
            row[j] = v;
            j++;
            if (stop == le2)
                break;
            q = stop + 1;
        }
        if (!ok || j != ncol) {
            if (bad++ == 0)
                first_bad = line;
            p = next;
            continue;
        }
        if (row_nonnum && nonnum == 0) {
            first_nonnum_line = line;
            first_nonnum_col = row_first_nonnum;
        }
        nonnum += row_nonnum;
        rows++;
        p = next;
    }
    block_to_columns(block, rows - block_start, ncol, data + block_start, cap);
    free(block);
    if (truncated)
        note(run, RL_REASON_TRUNCATED_ROW, "line %zu: last row ends without a newline, dropped",
             line);
    if (bad)
        note(run, RL_REASON_BAD_ROWS, "%zu row(s) without %zu fields dropped, first at line %zu",
             bad, ncol, first_bad);
    if (nul)
        note(run, RL_REASON_NUL_BYTES, "%zu row(s) with NUL bytes dropped", nul);
    if (longl)
        note(run, RL_REASON_LONG_LINES, "%zu line(s) over %zu bytes dropped", longl,
             lim->max_line_bytes);
    if (nonnum)
        note(run, RL_REASON_NON_NUMERIC,
             "%zu cell(s) not numbers, read as NaN, first at line %zu column %zu", nonnum,
             first_nonnum_line, first_nonnum_col);
    if (rows == 0) {
        rl_columns_free(data);
        free(run->columns);
        run->columns = NULL;
        note(run, RL_REASON_NO_ROWS, "performance_log.csv has no complete data row");
        return RL_OK;
    }
    /* Close the gaps left by dropped rows so the block is exactly rows x ncol. */
    if (rows < cap) {
        for (size_t j = 1; j < ncol; j++)
            memmove(data + j * rows, data + j * cap, rows * sizeof *data);
    }
    for (size_t j = 0; j < ncol; j++)
        run->columns[j] = data + j * rows;
    run->num_rows = rows;
    return RL_OK;
}
