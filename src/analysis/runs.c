/* The run loader (runlab/runs.h): reads run directories into per-column arrays and
 * classifies each run PARSED / DEGRADED / SKIPPED with reasons, never failing on bad
 * input. The CSV scanner here is deliberately tolerant (unlike runlab/csv.h's strict
 * reader): a bad row is dropped and counted, and the rest of the file is still read. */
#include "runlab/runs.h"

#include "runlab/error.h"
#include "runlab/json.h"
#include "runlab/number.h"
#include "runlab/perflog.h"
#include "runlab/record.h"
#include "runlab/yaml.h"

#include "analysis/run_columns.h"
#include "core/number_scan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_DEPTH = 64 };

static const char *const reason_names[RL_REASON_COUNT] = {
    "no_csv",
    "csv_unreadable",
    "csv_empty",
    "csv_too_large",
    "no_rows",
    "truncated_row",
    "bad_rows",
    "non_numeric",
    "nul_bytes",
    "long_lines",
    "no_manifest",
    "bad_manifest",
    "fingerprint_mismatch",
    "columns_mismatch",
    "no_summary",
    "bad_summary",
    "timer_nesting",
};

const char *rl_run_status_name(rl_run_status status)
{
    switch (status) {
    case RL_RUN_PARSED: return "parsed";
    case RL_RUN_DEGRADED: return "degraded";
    case RL_RUN_SKIPPED: return "skipped";
    }
    return "unknown";
}

const char *rl_run_reason_name(rl_run_reason reason)
{
    return (unsigned)reason < RL_REASON_COUNT ? reason_names[reason] : "unknown";
}

bool rl_run_has_reason(const rl_run *run, rl_run_reason reason)
{
    return run && (unsigned)reason < RL_REASON_COUNT && (run->reasons & (1u << reason));
}

static void limits_fill(rl_run_limits *l, const rl_run_limits *in)
{
    memset(l, 0, sizeof *l);
    if (in)
        *l = *in;
    if (!l->max_csv_bytes)
        l->max_csv_bytes = (size_t)1 << 30;
    if (!l->max_line_bytes)
        l->max_line_bytes = (size_t)1 << 20;
    if (!l->max_yaml_bytes)
        l->max_yaml_bytes = (size_t)4 << 20;
    if (!l->max_columns)
        l->max_columns = 4096;
}

/* Adds a reason and a message. Out of memory for the message only loses the message. */
__attribute__((format(printf, 3, 4))) static void note(rl_run *run, rl_run_reason reason,
                                                       const char *fmt, ...)
{
    run->reasons |= 1u << reason;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    char **nm = realloc(run->messages, (run->num_messages + 1) * sizeof *nm);
    if (!nm)
        return;
    run->messages = nm;
    char *s = malloc(strlen(reason_names[reason]) + strlen(buf) + 3);
    if (!s)
        return;
    sprintf(s, "%s: %s", reason_names[reason], buf);
    run->messages[run->num_messages++] = s;
}

/* ---- reading files without trusting them ----------------------------------------------- */

enum read_result { READ_OK, READ_MISSING, READ_UNREADABLE, READ_TOO_LARGE };

/* Reads a regular file whole. O_NONBLOCK so a FIFO planted under a run's file name cannot
 * hang the loader; anything but a regular file is unreadable. `why` gets the reason. */
/* A read buffer kept across files, so loading many runs does not map and fault in fresh
 * pages for every file. */
struct file_buf {
    char *data;
    size_t cap;
    rl_column_arena arena; /* where this thread's runs get their column blocks... */
    bool pooled;           /* ...when loading many runs; else malloc */
};

static void file_buf_release(struct file_buf *fb)
{
    free(fb->data);
    rl_column_arena_release(&fb->arena);
}

/* Reads a regular file whole into `fb` (grown as needed), NUL-terminated. */
static enum read_result read_file_into(const char *path, size_t max, struct file_buf *fb,
                                       size_t *len, char *why, size_t why_cap)
{
    *len = 0;
    why[0] = '\0';
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        struct stat lst;
        if (e == ENOENT && lstat(path, &lst) != 0)
            return READ_MISSING;
        snprintf(why, why_cap, "%s", strerror(e));
        return READ_UNREADABLE;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, why_cap, "not a regular file");
        close(fd);
        return READ_UNREADABLE;
    }
    if ((uint64_t)st.st_size > max) {
        snprintf(why, why_cap, "%lld bytes, limit %zu", (long long)st.st_size, max);
        close(fd);
        return READ_TOO_LARGE;
    }
    size_t size = (size_t)st.st_size;
    if (size + 1 > fb->cap) {
        free(fb->data);
        fb->data = malloc(size + 1);
        fb->cap = fb->data ? size + 1 : 0;
    }
    char *buf = fb->data;
    if (!buf) {
        snprintf(why, why_cap, "out of memory for %zu bytes", size);
        close(fd);
        return READ_UNREADABLE;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(why, why_cap, "%s", strerror(errno));
            close(fd);
            return READ_UNREADABLE;
        }
        if (r == 0)
            break; /* shrank while reading: take what is there */
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    *len = got;
    return READ_OK;
}

/* Reads a regular file whole into a new buffer (*out, to free). */
static enum read_result read_file(const char *path, size_t max, char **out, size_t *len, char *why,
                                  size_t why_cap)
{
    struct file_buf fb = {0};
    enum read_result r = read_file_into(path, max, &fb, len, why, why_cap);
    *out = r == READ_OK ? fb.data : NULL;
    if (r != READ_OK)
        free(fb.data);
    return r;
}

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

static int load_csv(rl_run *run, const char *dir, const rl_run_limits *lim, struct file_buf *fb)
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

/* ---- manifest and summary ----------------------------------------------------------------- */

static json_object *load_yaml(rl_run *run, const char *dir, const char *name, rl_run_reason missing,
                              rl_run_reason bad, const rl_run_limits *lim)
{
    char path[PATH_MAX], why[256];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
        note(run, bad, "path too long");
        return NULL;
    }
    char *buf;
    size_t len;
    switch (read_file(path, lim->max_yaml_bytes, &buf, &len, why, sizeof why)) {
    case READ_MISSING: note(run, missing, "%s not found", name); return NULL;
    case READ_UNREADABLE:
    case READ_TOO_LARGE: note(run, bad, "%s: %s", name, why); return NULL;
    case READ_OK: break;
    }
    json_object *obj = NULL;
    if (memchr(buf, '\0', len)) {
        note(run, bad, "%s contains NUL bytes", name);
    } else if (rl_yaml_parse(buf, len, name, &obj) != RL_OK) {
        note(run, bad, "%s", rl_error_last());
        obj = NULL;
    } else if (!obj || !json_object_is_type(obj, json_type_object)) {
        note(run, bad, "%s is not a mapping", name);
        json_object_put(obj);
        obj = NULL;
    }
    free(buf);
    return obj;
}

static bool str_field(json_object *o, const char *key, const char **out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return false;
    *out = json_object_get_string(v);
    return true;
}

static int check_manifest(rl_run *run)
{
    json_object *m = run->manifest, *cols, *fv;
    if (!json_object_object_get_ex(m, "format_version", &fv) ||
        !json_object_is_type(fv, json_type_int)) {
        note(run, RL_REASON_BAD_MANIFEST, "run_manifest.yaml: format_version missing");
        return RL_OK;
    }
    if (!json_object_object_get_ex(m, "columns", &cols) ||
        !json_object_is_type(cols, json_type_array)) {
        note(run, RL_REASON_BAD_MANIFEST, "run_manifest.yaml: columns missing or not a list");
        return RL_OK;
    }
    size_t n = json_object_array_length(cols);
    const char **a = calloc(4 * (n ? n : 1), sizeof *a);
    if (!a)
        return rl_error_set(RL_ENOMEM, "runs: out of memory");
    for (size_t i = 0; i < n; i++) {
        json_object *c = json_object_array_get_idx(cols, i), *par;
        if (!c || !json_object_is_type(c, json_type_object) || !str_field(c, "name", &a[i]) ||
            !str_field(c, "type", &a[n + i]) || !str_field(c, "unit", &a[2 * n + i])) {
            note(run, RL_REASON_BAD_MANIFEST,
                 "run_manifest.yaml: column %zu lacks name, type or unit", i + 1);
            free(a);
            return RL_OK;
        }
        a[3 * n + i] = "";
        if (json_object_object_get_ex(c, "parent", &par) && par) {
            if (!json_object_is_type(par, json_type_string)) {
                note(run, RL_REASON_BAD_MANIFEST,
                     "run_manifest.yaml: column %zu parent is not a string or null", i + 1);
                free(a);
                return RL_OK;
            }
            a[3 * n + i] = json_object_get_string(par);
        }
    }
    const char *stated;
    char fp[RL_FINGERPRINT_LEN];
    if (!str_field(m, "schema_fingerprint", &stated)) {
        note(run, RL_REASON_BAD_MANIFEST, "run_manifest.yaml: schema_fingerprint missing");
    } else if (rl_perflog_compute_fingerprint(a, a + n, a + 2 * n, a + 3 * n, n, fp, sizeof fp) ==
                   RL_OK &&
               strcmp(fp, stated) != 0) {
        note(run, RL_REASON_FINGERPRINT_MISMATCH,
             "manifest states %.24s..., its columns give %.24s...", stated, fp);
    }
    /* The CSV header against the manifest's columns. */
    if (run->column_names) {
        size_t k = 0;
        while (k < n && k < run->num_columns && strcmp(a[k], run->column_names[k]) == 0)
            k++;
        if (k < n || k < run->num_columns) {
            if (k < n && k < run->num_columns)
                note(run, RL_REASON_COLUMNS_MISMATCH,
                     "CSV column %zu is '%.100s', the manifest says '%.100s'", k + 1,
                     run->column_names[k], a[k]);
            else
                note(run, RL_REASON_COLUMNS_MISMATCH, "CSV has %zu columns, the manifest %zu",
                     run->num_columns, n);
        }
    }
    free(a);
    return RL_OK;
}

static void check_summary(rl_run *run)
{
    json_object *s = run->summary, *v;
    const char *reason;
    if (!str_field(s, "end_reason", &reason)) {
        note(run, RL_REASON_BAD_SUMMARY, "episode_summary.yaml: end_reason missing");
        return;
    }
    if (!json_object_object_get_ex(s, "cycles", &v) || !json_object_is_type(v, json_type_int) ||
        json_object_get_int64(v) < 0)
        note(run, RL_REASON_BAD_SUMMARY, "episode_summary.yaml: cycles missing or not a count");
    /* Absent in summaries written before the check existed: nothing is known then. */
    if (json_object_object_get_ex(s, "timer_nesting_violations", &v)) {
        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0) {
            note(run, RL_REASON_BAD_SUMMARY,
                 "episode_summary.yaml: timer_nesting_violations is not a count");
        } else if (json_object_get_int64(v) > 0) {
            const char *first = NULL;
            if (!str_field(s, "first_nesting_violation", &first))
                first = "not named";
            note(run, RL_REASON_TIMER_NESTING,
                 "%lld timer interval(s) outside their parent (first: %s); the timer columns "
                 "overlap where the manifest says they nest",
                 (long long)json_object_get_int64(v), first);
        }
    }
}

/* ---- a run's numbers ----------------------------------------------------------------- */

static const char gain_suffix[] = ".RealAccumulatedGain";

/* The last finite value of a column, NaN when none. */
static double last_finite(const rl_run *run, const double *col)
{
    if (col)
        for (size_t i = run->num_rows; i-- > 0;)
            if (isfinite(col[i]))
                return col[i];
    return NAN;
}

/* Adds `layer` (n bytes) to the run's sorted gain layers unless present. */
static int add_gain_layer(rl_run *run, const char *layer, size_t n)
{
    size_t k = 0;
    for (; k < run->num_gain_layers; k++) {
        int c = strncmp(run->gain_layers[k], layer, n);
        if (c == 0 && run->gain_layers[k][n] == '\0')
            return RL_OK;
        if (c > 0 || (c == 0 && run->gain_layers[k][n] != '\0'))
            break;
    }
    char **nl = realloc(run->gain_layers, (run->num_gain_layers + 1) * sizeof *nl);
    if (nl)
        run->gain_layers = nl;
    char *name = nl ? strndup(layer, n) : NULL;
    if (!name)
        return rl_error_set(RL_ENOMEM, "runs: out of memory");
    memmove(nl + k + 1, nl + k, (run->num_gain_layers - k) * sizeof *nl);
    nl[k] = name;
    run->num_gain_layers++;
    return RL_OK;
}

/* Fills the run's end-of-run numbers from the summary, else the CSV (docs/perflog.md). */
static int compute_numbers(rl_run *run)
{
    json_object *per_layer = NULL;
    if (run->summary && (!json_object_object_get_ex(run->summary, "real_accumulated_gain",
                                                    &per_layer) ||
                         !json_object_is_type(per_layer, json_type_object)))
        per_layer = NULL;
    if (per_layer) {
        json_object_object_foreach(per_layer, key, val)
        {
            (void)val;
            if (add_gain_layer(run, key, strlen(key)) != RL_OK)
                return RL_ENOMEM;
        }
    }
    const size_t slen = sizeof gain_suffix - 1;
    for (size_t j = 0; j < run->num_columns && run->column_names; j++) {
        const char *n = run->column_names[j];
        size_t len = strlen(n);
        if (len > slen && strcmp(n + len - slen, gain_suffix) == 0 &&
            add_gain_layer(run, n, len - slen) != RL_OK)
            return RL_ENOMEM;
    }
    run->layer_gains = calloc(run->num_gain_layers ? run->num_gain_layers : 1,
                              sizeof *run->layer_gains);
    if (!run->layer_gains)
        return rl_error_set(RL_ENOMEM, "runs: out of memory");
    run->final_gain = run->num_gain_layers ? 0 : NAN;
    run->final_from_summary = run->num_gain_layers > 0;
    for (size_t k = 0; k < run->num_gain_layers; k++) {
        json_object *v;
        double g = NAN;
        if (per_layer && json_object_object_get_ex(per_layer, run->gain_layers[k], &v) &&
            (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))) {
            g = json_object_get_double(v);
        } else {
            char col[256];
            run->final_from_summary = false;
            if (snprintf(col, sizeof col, "%s%s", run->gain_layers[k], gain_suffix) <
                (int)sizeof col)
                g = last_finite(run, rl_run_column(run, col));
        }
        run->layer_gains[k] = g;
        run->final_gain += g;
    }
    json_object *v;
    run->total_cost = run->summary && json_object_object_get_ex(run->summary, "total_cost", &v) &&
                              (json_object_is_type(v, json_type_double) ||
                               json_object_is_type(v, json_type_int))
                          ? json_object_get_double(v)
                          : last_finite(run, rl_run_column(run, "TotalCost"));
    run->elapsed_s = run->summary &&
                             json_object_object_get_ex(run->summary, "elapsed_wall_time_s", &v) &&
                             (json_object_is_type(v, json_type_double) ||
                              json_object_is_type(v, json_type_int))
                         ? json_object_get_double(v)
                         : last_finite(run, rl_run_column(run, "ElapsedWallTimeSec"));
    if (run->manifest && json_object_object_get_ex(run->manifest, "random_seed", &v) &&
        json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0) {
        run->has_seed = true;
        run->seed = json_object_get_uint64(v);
    }
    return RL_OK;
}

double rl_run_layer_gain(const rl_run *run, const char *layer)
{
    if (!run || !layer)
        return NAN;
    for (size_t k = 0; k < run->num_gain_layers; k++)
        if (strcmp(run->gain_layers[k], layer) == 0)
            return run->layer_gains[k];
    return NAN;
}

/* ---- one run --------------------------------------------------------------------------- */

void rl_run_free(rl_run *run)
{
    if (!run)
        return;
    free(run->path);
    for (size_t i = 0; i < run->num_messages; i++)
        free(run->messages[i]);
    free(run->messages);
    if (run->column_names)
        for (size_t j = 0; j < run->num_columns; j++)
            free(run->column_names[j]);
    free(run->column_names);
    if (run->columns)
        rl_columns_free(run->columns[0]);
    free(run->columns);
    json_object_put(run->manifest);
    json_object_put(run->summary);
    for (size_t i = 0; i < run->num_gain_layers; i++)
        free(run->gain_layers[i]);
    free(run->gain_layers);
    free(run->layer_gains);
    free(run);
}

/* rl_run_load with filled-in limits and the caller's read buffer. */
static int run_load(const char *dir, const rl_run_limits *limits, struct file_buf *fb,
                    rl_run **out)
{
    rl_run_limits lim = *limits;
    rl_run *run = calloc(1, sizeof *run);
    if (!run || !(run->path = strdup(dir))) {
        free(run);
        return rl_error_set(RL_ENOMEM, "runs: out of memory");
    }
    int rc = load_csv(run, dir, &lim, fb);
    if (rc == RL_OK) {
        run->manifest = load_yaml(run, dir, "run_manifest.yaml", RL_REASON_NO_MANIFEST,
                                  RL_REASON_BAD_MANIFEST, &lim);
        if (run->manifest)
            rc = check_manifest(run);
    }
    if (rc == RL_OK) {
        run->summary = load_yaml(run, dir, "episode_summary.yaml", RL_REASON_NO_SUMMARY,
                                 RL_REASON_BAD_SUMMARY, &lim);
        if (run->summary)
            check_summary(run);
    }
    if (rc == RL_OK)
        rc = compute_numbers(run);
    if (rc != RL_OK) {
        rl_run_free(run);
        return rc;
    }
    const uint32_t unusable = (1u << RL_REASON_NO_CSV) | (1u << RL_REASON_CSV_UNREADABLE) |
                              (1u << RL_REASON_CSV_EMPTY) | (1u << RL_REASON_CSV_TOO_LARGE) |
                              (1u << RL_REASON_NO_ROWS);
    run->status = (run->reasons & unusable) ? RL_RUN_SKIPPED
                  : run->reasons            ? RL_RUN_DEGRADED
                                            : RL_RUN_PARSED;
    *out = run;
    return RL_OK;
}

int rl_run_load(const char *dir, const rl_run_limits *limits, rl_run **out)
{
    if (!out)
        return rl_error_set(RL_EINVAL, "runs: no output");
    *out = NULL;
    if (!dir)
        return rl_error_set(RL_EINVAL, "runs: no directory");
    rl_run_limits lim;
    limits_fill(&lim, limits);
    struct file_buf fb = {0};
    int rc = run_load(dir, &lim, &fb, out);
    file_buf_release(&fb);
    return rc;
}

const double *rl_run_column(const rl_run *run, const char *name)
{
    if (!run || !name || !run->columns)
        return NULL;
    for (size_t j = 0; j < run->num_columns; j++)
        if (strcmp(run->column_names[j], name) == 0)
            return run->columns[j];
    return NULL;
}

/* ---- walking trees ----------------------------------------------------------------------- */

struct walk {
    char **paths;
    size_t npaths, cappaths;
    char **errors;
    size_t nerrors, caperrors;
    struct {
        dev_t dev;
        ino_t ino;
    } * seen;
    size_t nseen, capseen;
    /* Symbolic links to directories, followed after every real directory was walked. */
    struct deferred_link {
        char *path;
        int depth;
    } * links;
    size_t nlinks, caplinks;
    bool oom;
};

static void push(char ***arr, size_t *n, size_t *cap, char *s, bool *oom)
{
    if (!s) {
        *oom = true;
        return;
    }
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        char **na = realloc(*arr, nc * sizeof *na);
        if (!na) {
            free(s);
            *oom = true;
            return;
        }
        *arr = na;
        *cap = nc;
    }
    (*arr)[(*n)++] = s;
}

__attribute__((format(printf, 2, 3))) static void walk_error(struct walk *w, const char *fmt, ...)
{
    char buf[2 * PATH_MAX + 128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    push(&w->errors, &w->nerrors, &w->caperrors, strdup(buf), &w->oom);
}

static void defer_link(struct walk *w, const char *path, int depth)
{
    if (w->nlinks == w->caplinks) {
        size_t nc = w->caplinks ? w->caplinks * 2 : 16;
        void *nl = realloc(w->links, nc * sizeof *w->links);
        if (!nl) {
            w->oom = true;
            return;
        }
        w->links = nl;
        w->caplinks = nc;
    }
    char *p = strdup(path);
    if (!p) {
        w->oom = true;
        return;
    }
    w->links[w->nlinks].path = p;
    w->links[w->nlinks].depth = depth;
    w->nlinks++;
}

static bool was_visited(const struct walk *w, const struct stat *st)
{
    for (size_t i = 0; i < w->nseen; i++)
        if (w->seen[i].dev == st->st_dev && w->seen[i].ino == st->st_ino)
            return true;
    return false;
}

/* Marks (dev, ino) as visited; false when it already was (a second link to it).
 * A linear scan: trees of runs have thousands of directories, not millions. */
static bool first_visit(struct walk *w, const struct stat *st)
{
    if (was_visited(w, st))
        return false;
    if (w->nseen == w->capseen) {
        size_t nc = w->capseen ? w->capseen * 2 : 256;
        void *ns = realloc(w->seen, nc * sizeof *w->seen);
        if (!ns) {
            w->oom = true;
            return false;
        }
        w->seen = ns;
        w->capseen = nc;
    }
    w->seen[w->nseen].dev = st->st_dev;
    w->seen[w->nseen].ino = st->st_ino;
    w->nseen++;
    return true;
}

static bool is_run_dir(int dfd)
{
    static const char *const files[] = {"run_manifest.yaml", "performance_log.csv",
                                        "episode_summary.yaml"};
    struct stat st;
    for (int i = 0; i < 3; i++)
        if (fstatat(dfd, files[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
            return true;
    return false;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A symbolic link met in a listing: a link to a directory is followed later (defer), a
 * link that resolves to nothing is reported; a link to a file is no business of ours. */
static void note_link(struct walk *w, int dfd, const char *name, const char *path, int depth)
{
    struct stat st;
    if (fstatat(dfd, name, &st, 0) == 0) {
        if (S_ISDIR(st.st_mode))
            defer_link(w, path, depth);
        return;
    }
    int e = errno;
    char target[PATH_MAX];
    ssize_t n = readlinkat(dfd, name, target, sizeof target - 1);
    target[n > 0 ? n : 0] = '\0';
    if (e == ELOOP)
        walk_error(w, "%s: symbolic link loop: '%s' leads back through links to itself, not "
                      "followed",
                   path, target);
    else if (e == ENOENT || e == ENOTDIR)
        walk_error(w, "%s: dangling symbolic link to '%s', not followed", path, target);
    else
        walk_error(w, "%s: symbolic link to '%s': %s", path, target, strerror(e));
}

static void walk_dir(struct walk *w, const char *path, int depth)
{
    if (w->oom)
        return;
    if (depth > MAX_DEPTH) {
        walk_error(w, "%s: deeper than %d levels, not entered", path, MAX_DEPTH);
        return;
    }
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        walk_error(w, "%s: %s", path, strerror(errno));
        return;
    }
    struct stat st;
    if (fstat(dfd, &st) != 0 || !first_visit(w, &st)) {
        if (!w->oom)
            walk_error(w, "%s: directory already visited (a second path to it)", path);
        close(dfd);
        return;
    }
    /* A recorder's run that never finished (its recorder died or still runs) is named as
     * such: it holds no perflog, but a repair or some patience makes it whole. */
    char unfinished[PATH_MAX + 256];
    if (rl_record_run_unfinished(path, unfinished, sizeof unfinished))
        walk_error(w, "%s: %s", path, unfinished);
    if (is_run_dir(dfd)) {
        close(dfd);
        push(&w->paths, &w->npaths, &w->cappaths, strdup(path), &w->oom);
        return;
    }
    DIR *d = fdopendir(dfd);
    if (!d) {
        walk_error(w, "%s: %s", path, strerror(errno));
        close(dfd);
        return;
    }
    /* Children sorted, so the walk (and its errors) come out in a stable order. Real
     * directories now, links to directories once every real one is known. */
    char **kids = NULL, **links = NULL;
    size_t nk = 0, ck = 0, nl = 0, cl = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        unsigned char type = e->d_type;
        if (type == DT_UNKNOWN) {
            struct stat cs;
            if (fstatat(dirfd(d), e->d_name, &cs, AT_SYMLINK_NOFOLLOW) == 0)
                type = S_ISDIR(cs.st_mode) ? DT_DIR : S_ISLNK(cs.st_mode) ? DT_LNK : DT_REG;
        }
        if (type == DT_DIR)
            push(&kids, &nk, &ck, strdup(e->d_name), &w->oom);
        else if (type == DT_LNK)
            push(&links, &nl, &cl, strdup(e->d_name), &w->oom);
    }
    if (nk)
        qsort(kids, nk, sizeof *kids, name_cmp);
    if (nl)
        qsort(links, nl, sizeof *links, name_cmp);
    char child[PATH_MAX];
    for (size_t i = 0; i < nl; i++) {
        if (snprintf(child, sizeof child, "%s/%s", path, links[i]) >= (int)sizeof child)
            walk_error(w, "%s/%s: path too long", path, links[i]);
        else
            note_link(w, dirfd(d), links[i], child, depth + 1);
        free(links[i]);
    }
    free(links);
    closedir(d);
    for (size_t i = 0; i < nk; i++) {
        if (snprintf(child, sizeof child, "%s/%s", path, kids[i]) >= (int)sizeof child)
            walk_error(w, "%s/%s: path too long", path, kids[i]);
        else
            walk_dir(w, child, depth + 1);
        free(kids[i]);
    }
    free(kids);
}

/* Follows the deferred links (more may be added as it goes). A link to a directory the
 * walk already reached is an alias (the recorder's .run-ids/ links): silent, unless the
 * directory is the link's own ancestor, which is a loop. */
static void walk_links(struct walk *w)
{
    for (size_t i = 0; i < w->nlinks && !w->oom; i++) {
        const char *path = w->links[i].path;
        struct stat st;
        if (stat(path, &st) != 0) {
            walk_error(w, "%s: %s", path, strerror(errno));
            continue;
        }
        if (!was_visited(w, &st)) {
            walk_dir(w, path, w->links[i].depth);
            continue;
        }
        char target[PATH_MAX], parent[PATH_MAX], real_parent[PATH_MAX];
        snprintf(parent, sizeof parent, "%s", path);
        char *slash = strrchr(parent, '/');
        if (slash)
            *slash = '\0';
        if (!slash || !realpath(path, target) || !realpath(parent, real_parent))
            continue;
        size_t n = strlen(target);
        if (strncmp(real_parent, target, n) == 0 &&
            (real_parent[n] == '\0' || real_parent[n] == '/' || n == 1))
            walk_error(w, "%s: symbolic link loop: leads back to its ancestor %s, not entered",
                       path, target);
    }
}

void rl_run_set_free(rl_run_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->count; i++)
        rl_run_free(set->runs[i]);
    free(set->runs);
    for (size_t i = 0; i < set->num_walk_errors; i++)
        free(set->walk_errors[i]);
    free(set->walk_errors);
    free(set);
}

/* ---- loading runs on a pool of threads ---------------------------------------------------- */

enum { MAX_THREADS = 16 };

/* Shared by the loading threads: the next run to take, the runs finished (in finishing
 * order, for the progress callback), the threads still working and the first failure.
 * All under `mu`; `finished_cv` wakes the calling thread. */
struct load_pool {
    pthread_mutex_t mu;
    pthread_cond_t finished_cv;
    char *const *paths;
    size_t total, next, num_finished;
    size_t *finished;
    size_t active; /* threads not yet done */
    rl_run **runs;
    rl_run_limits lim;
    int rc;
    char err[512];
};

static void *load_worker(void *arg)
{
    struct load_pool *pool = arg;
    struct file_buf fb = {.pooled = true};
    pthread_mutex_lock(&pool->mu);
    while (pool->next < pool->total) {
        size_t i = pool->next++;
        pthread_mutex_unlock(&pool->mu);
        rl_run *run = NULL;
        int rc = run_load(pool->paths[i], &pool->lim, &fb, &run);
        pthread_mutex_lock(&pool->mu);
        pool->runs[i] = run;
        if (rc != RL_OK && pool->rc == RL_OK) {
            pool->rc = rc;
            snprintf(pool->err, sizeof pool->err, "%s", rl_error_last());
            pool->next = pool->total; /* the others stop after their current run */
        }
        pool->finished[pool->num_finished++] = i;
        pthread_cond_signal(&pool->finished_cv);
    }
    pool->active--;
    pthread_cond_signal(&pool->finished_cv);
    pthread_mutex_unlock(&pool->mu);
    file_buf_release(&fb);
    return NULL;
}

static size_t thread_count(const rl_run_limits *lim, size_t total)
{
    size_t n = lim->threads;
    if (n == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        n = cores > 0 ? (size_t)cores : 1;
    }
    if (n > MAX_THREADS)
        n = MAX_THREADS;
    return n < total ? n : total;
}

/* Loads paths[i] into runs[i] for every i; the calling thread reports progress while the
 * pool loads. On failure the runs loaded so far stay in `runs` for the caller to free. */
static int load_all(char *const *paths, size_t total, const rl_run_limits *limits,
                    rl_runs_progress_fn progress, void *user, rl_run **runs)
{
    struct load_pool pool;
    memset(&pool, 0, sizeof pool);
    limits_fill(&pool.lim, limits);
    pool.paths = paths;
    pool.total = total;
    pool.runs = runs;
    size_t nthreads = thread_count(&pool.lim, total);
    if (nthreads <= 1) {
        struct file_buf fb = {.pooled = true};
        int rc = RL_OK;
        for (size_t i = 0; rc == RL_OK && i < total; i++) {
            rc = run_load(paths[i], &pool.lim, &fb, &runs[i]);
            if (rc == RL_OK && progress)
                progress(i + 1, total, paths[i], user);
        }
        file_buf_release(&fb);
        return rc;
    }
    pool.finished = malloc(total * sizeof *pool.finished);
    if (!pool.finished)
        return rl_error_set(RL_ENOMEM, "runs: out of memory");
    pthread_mutex_init(&pool.mu, NULL);
    pthread_cond_init(&pool.finished_cv, NULL);
    pthread_t tids[MAX_THREADS];
    size_t started = 0;
    for (; started < nthreads; started++) {
        pthread_mutex_lock(&pool.mu);
        pool.active++;
        pthread_mutex_unlock(&pool.mu);
        if (pthread_create(&tids[started], NULL, load_worker, &pool) != 0) {
            pthread_mutex_lock(&pool.mu);
            pool.active--;
            pthread_mutex_unlock(&pool.mu);
            break;
        }
    }
    if (started == 0) {
        pool.rc = rl_error_set(RL_EIO, "runs: cannot start a loading thread");
    } else {
        /* Report each finished run from this thread, as the callback's contract says. */
        size_t reported = 0;
        pthread_mutex_lock(&pool.mu);
        for (;;) {
            while (reported == pool.num_finished && pool.active > 0)
                pthread_cond_wait(&pool.finished_cv, &pool.mu);
            if (reported == pool.num_finished)
                break;
            size_t i = pool.finished[reported++];
            if (pool.rc != RL_OK || !progress)
                continue;
            pthread_mutex_unlock(&pool.mu);
            progress(reported, total, paths[i], user);
            pthread_mutex_lock(&pool.mu);
        }
        pthread_mutex_unlock(&pool.mu);
    }
    for (size_t t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    pthread_cond_destroy(&pool.finished_cv);
    pthread_mutex_destroy(&pool.mu);
    free(pool.finished);
    if (pool.rc != RL_OK && started > 0)
        return rl_error_set(pool.rc, "%s", pool.err);
    return pool.rc;
}

int rl_runs_load(const char *const *roots, size_t num_roots, const rl_run_limits *limits,
                 rl_run_set **out)
{
    return rl_runs_load_progress(roots, num_roots, limits, NULL, NULL, out);
}

/* Walks every root into `w` and sorts the run paths found. */
static void walk_roots(struct walk *w, const char *const *roots, size_t num_roots)
{
    memset(w, 0, sizeof *w);
    for (size_t i = 0; i < num_roots; i++) {
        size_t n = strlen(roots[i]);
        char root[PATH_MAX];
        if (n == 0 || n >= sizeof root) {
            walk_error(w, "'%.200s': empty or too long", roots[i]);
            continue;
        }
        memcpy(root, roots[i], n + 1);
        while (n > 1 && root[n - 1] == '/')
            root[--n] = '\0';
        walk_dir(w, root, 0);
    }
    walk_links(w);
    if (w->npaths)
        qsort(w->paths, w->npaths, sizeof *w->paths, name_cmp);
}

static void walk_free(struct walk *w)
{
    for (size_t i = 0; i < w->npaths; i++)
        free(w->paths[i]);
    free(w->paths);
    for (size_t i = 0; i < w->nerrors; i++)
        free(w->errors[i]);
    free(w->errors);
    free(w->seen);
    for (size_t i = 0; i < w->nlinks; i++)
        free(w->links[i].path);
    free(w->links);
}

int rl_runs_load_progress(const char *const *roots, size_t num_roots,
                          const rl_run_limits *limits, rl_runs_progress_fn progress,
                          void *user, rl_run_set **out)
{
    if (!out)
        return rl_error_set(RL_EINVAL, "runs: no output");
    *out = NULL;
    if (!roots && num_roots)
        return rl_error_set(RL_EINVAL, "runs: no roots");
    struct walk w;
    walk_roots(&w, roots, num_roots);
    rl_run_set *set = calloc(1, sizeof *set);
    int rc = RL_OK;
    if (!set || w.oom) {
        rc = rl_error_set(RL_ENOMEM, "runs: out of memory");
    } else {
        set->runs = calloc(w.npaths ? w.npaths : 1, sizeof *set->runs);
        if (!set->runs)
            rc = rl_error_set(RL_ENOMEM, "runs: out of memory");
        if (rc == RL_OK) {
            rc = load_all(w.paths, w.npaths, limits, progress, user, set->runs);
            set->count = w.npaths; /* on failure, rl_run_set_free skips the NULL slots */
        }
        set->walk_errors = w.errors;
        set->num_walk_errors = w.nerrors;
        w.errors = NULL;
        w.nerrors = 0;
    }
    walk_free(&w);
    if (rc != RL_OK) {
        rl_run_set_free(set);
        return rc;
    }
    *out = set;
    return RL_OK;
}

/* Runs loaded at once by rl_runs_each: enough to keep every loading thread busy, few
 * enough that memory does not grow with the tree. */
enum { EACH_BATCH = 4 * MAX_THREADS };

int rl_runs_each(const char *const *roots, size_t num_roots, const rl_run_limits *limits,
                 rl_runs_each_fn fn, void *user, char ***walk_errors, size_t *num_walk_errors)
{
    if (walk_errors)
        *walk_errors = NULL;
    if (num_walk_errors)
        *num_walk_errors = 0;
    if (!fn || (!roots && num_roots))
        return rl_error_set(RL_EINVAL, "runs: no roots or no callback");
    struct walk w;
    walk_roots(&w, roots, num_roots);
    int rc = w.oom ? rl_error_set(RL_ENOMEM, "runs: out of memory") : RL_OK;
    rl_run *batch[EACH_BATCH];
    for (size_t start = 0; rc == RL_OK && start < w.npaths; start += EACH_BATCH) {
        size_t n = w.npaths - start < EACH_BATCH ? w.npaths - start : EACH_BATCH;
        memset(batch, 0, sizeof batch);
        rc = load_all(w.paths + start, n, limits, NULL, NULL, batch);
        for (size_t i = 0; i < n; i++) {
            if (rc == RL_OK)
                rc = fn(batch[i], start + i, w.npaths, user);
            rl_run_free(batch[i]);
        }
    }
    if (walk_errors && num_walk_errors) {
        *walk_errors = w.errors;
        *num_walk_errors = w.nerrors;
        w.errors = NULL;
        w.nerrors = 0;
    }
    walk_free(&w);
    return rc;
}

void rl_runs_report_add(rl_runs_report *out, const rl_run *r)
{
    out->total++;
    out->by_status[r->status]++;
    out->rows += r->num_rows;
    for (int k = 0; k < RL_REASON_COUNT; k++)
        if (r->reasons & (1u << k))
            out->by_reason[k]++;
}

void rl_runs_aggregate(const rl_run_set *set, rl_runs_report *out)
{
    memset(out, 0, sizeof *out);
    if (!set)
        return;
    out->walk_errors = set->num_walk_errors;
    for (size_t i = 0; i < set->count; i++)
        rl_runs_report_add(out, set->runs[i]);
}

int rl_runs_report_print(const rl_runs_report *rep, FILE *f)
{
    fprintf(f, "runs: %zu (parsed %zu, degraded %zu, skipped %zu), %zu rows\n", rep->total,
            rep->by_status[RL_RUN_PARSED], rep->by_status[RL_RUN_DEGRADED],
            rep->by_status[RL_RUN_SKIPPED], rep->rows);
    for (int k = 0; k < RL_REASON_COUNT; k++)
        if (rep->by_reason[k])
            fprintf(f, "  %-22s %zu\n", reason_names[k], rep->by_reason[k]);
    if (rep->walk_errors)
        fprintf(f, "  %-22s %zu\n", "walk_errors", rep->walk_errors);
    return ferror(f) ? rl_error_set(RL_EIO, "runs: writing the report failed") : RL_OK;
}
