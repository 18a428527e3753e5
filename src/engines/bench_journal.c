/* The benchmark's journal (journal.tsv): one line per finished run, appended and fsynced
 * as each run ends, and read back by a resumed benchmark so only missing runs run again.
 * Format: a header line naming the experiment and planners, then "run" lines (planner,
 * run, status, reason, properties, progress samples) each followed by a "t" line. */
#include "engines/bench_internal.h"

#include "runlab/error.h"
#include "runlab/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* write(2) until all of `n` bytes are out, across EINTR and short writes (async-signal-safe:
 * the harness also uses it in a forked child). 0, or -1 with errno set. */
int rl_bench_write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Appends `s` to the growing line *p, after a tab when `tab`, with tabs, newlines and
 * backslashes escaped (the journal is one run per line, fields split by tabs). */
static void j_field(char **p, size_t *len, size_t *cap, const char *s, bool tab)
{
    size_t need = *len + 2 * strlen(s) + 4;
    if (need > *cap) {
        size_t nc = *cap ? *cap : 1024;
        while (nc < need)
            nc *= 2;
        char *np = realloc(*p, nc);
        if (!np)
            return;
        *p = np;
        *cap = nc;
    }
    if (tab)
        (*p)[(*len)++] = '\t';
    for (; *s; s++) {
        if (*s == '\t' || *s == '\n' || *s == '\\') {
            (*p)[(*len)++] = '\\';
            (*p)[(*len)++] = *s == '\t' ? 't' : *s == '\n' ? 'n' : '\\';
        } else {
            (*p)[(*len)++] = *s;
        }
    }
    (*p)[*len] = '\0';
}

/* Appends a run's line and, in the same write, a "t" line with the seconds the whole
 * benchmark has taken so far (earlier sessions included), so a resumed benchmark reports
 * its total time. */
int rl_bench_journal_append(int fd, size_t pi, size_t ri, const rl_bench_run_data *r, size_t np,
                            double elapsed)
{
    char *line = NULL, num[64];
    size_t len = 0, cap = 0;
    j_field(&line, &len, &cap, "run", false);
    snprintf(num, sizeof num, "%zu", pi);
    j_field(&line, &len, &cap, num, true);
    snprintf(num, sizeof num, "%zu", ri);
    j_field(&line, &len, &cap, num, true);
    snprintf(num, sizeof num, "%d", (int)r->status);
    j_field(&line, &len, &cap, num, true);
    j_field(&line, &len, &cap, r->reason ? r->reason : "", true);
    snprintf(num, sizeof num, "%zu", r->n_props);
    j_field(&line, &len, &cap, num, true);
    for (size_t i = 0; i < r->n_props; i++) {
        j_field(&line, &len, &cap, r->props[i].name, true);
        j_field(&line, &len, &cap, rl_bench_type_name(r->props[i].type), true);
        j_field(&line, &len, &cap, r->props[i].value, true);
    }
    snprintf(num, sizeof num, "%zu", r->n_samples);
    j_field(&line, &len, &cap, num, true);
    for (size_t i = 0; i < r->n_samples * (np + 1); i++) {
        snprintf(num, sizeof num, "%.17g", r->samples[i]);
        j_field(&line, &len, &cap, num, true);
    }
    j_field(&line, &len, &cap, "\n", false);
    if (!line)
        return rl_error_set(RL_ENOMEM, "out of memory");
    line[len - 2] = '\n'; /* j_field escaped the newline; write a real one */
    len--;
    snprintf(num, sizeof num, "t\t%.9g\n", elapsed);
    int rc = RL_OK;
    if (rl_bench_write_all(fd, line, len) < 0 || rl_bench_write_all(fd, num, strlen(num)) < 0 ||
        fsync(fd) < 0)
        rc = rl_error_set_errno(RL_EIO, errno, "journal write");
    free(line);
    return rc;
}

static char *j_unescape(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            *o++ = *p == 't' ? '\t' : *p == 'n' ? '\n' : *p;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    return s;
}

/* Appends one run read back to the list the caller takes over. */
static int push_run(rl_bench_journal_runs *out, size_t pi, size_t ri, rl_bench_run_data *r)
{
    if (out->n == out->cap) {
        size_t nc = out->cap ? 2 * out->cap : 64;
        rl_bench_journal_run *nr = realloc(out->runs, nc * sizeof *nr);
        if (!nr) {
            rl_bench_run_data_free(r);
            return rl_error_set(RL_ENOMEM, "out of memory");
        }
        out->runs = nr;
        out->cap = nc;
    }
    out->runs[out->n++] = (rl_bench_journal_run){.planner = pi, .run = ri, .data = *r};
    memset(r, 0, sizeof *r);
    return RL_OK;
}

/* Reads the runs of an existing journal into `out`; *good_len: the file's length of
 * complete lines. */
static int journal_load(const rl_bench *b, const char *path, const char *header,
                        rl_bench_journal_runs *out, off_t *good_len)
{
    char *text = NULL;
    size_t len = 0;
    int rc = rl_fs_read_all(path, (size_t)1 << 31, &text, &len);
    *good_len = 0;
    if (rc == RL_ENOENT || (rc == RL_OK && len == 0)) {
        free(text);
        rl_error_clear();
        return RL_OK;
    }
    if (rc < 0)
        return rc;
    char *line = text, *nl;
    size_t lineno = 0;
    while ((nl = strchr(line, '\n')) != NULL) {
        *nl = '\0';
        lineno++;
        if (lineno == 1) {
            if (strcmp(line, header) != 0) {
                free(text);
                return rl_error_set(RL_EINVAL,
                                    "%s: journal of another benchmark (planners or experiment "
                                    "differ)",
                                    path);
            }
        } else if (strncmp(line, "t\t", 2) == 0) {
            char *end;
            double t = strtod(line + 2, &end);
            if (end == line + 2 || *end || !(t >= 0)) {
                free(text);
                return rl_error_set(RL_EPARSE, "%s:%zu: malformed journal line", path, lineno);
            }
            out->prior_duration = t;
        } else {
            /* as many fields as the line has: a run with thousands of progress samples
               writes a line of thousands of fields, and all of them must read back */
            size_t max_fields = 1;
            for (const char *p = line; *p; p++)
                max_fields += *p == '\t';
            char **f = malloc(max_fields * sizeof *f);
            if (!f) {
                free(text);
                return rl_error_set(RL_ENOMEM, "out of memory");
            }
            size_t n = 0;
            for (char *p = line; n < max_fields;) {
                f[n++] = p;
                char *tab = strchr(p, '\t');
                if (!tab)
                    break;
                *tab = '\0';
                p = tab + 1;
            }
            size_t pi, ri, np, ns = 0;
            size_t cols = 0;
            bool ok = n >= 7 && strcmp(f[0], "run") == 0 && sscanf(f[1], "%zu", &pi) == 1 &&
                      sscanf(f[2], "%zu", &ri) == 1 && pi < b->n_planners &&
                      sscanf(f[5], "%zu", &np) == 1 && np < n && 6 + 3 * np + 1 <= n;
            if (ok) {
                cols = b->planners[pi]->n_progress + 1;
                ok = sscanf(f[6 + 3 * np], "%zu", &ns) == 1 && ns <= n &&
                     6 + 3 * np + 1 + ns * cols == n;
            }
            if (!ok) {
                free(f);
                free(text);
                return rl_error_set(RL_EPARSE, "%s:%zu: malformed journal line", path, lineno);
            }
            rl_bench_run_data r = {0};
            r.status = (rl_bench_status)atoi(f[3]);
            if (*f[4])
                r.reason = strdup(j_unescape(f[4]));
            size_t cap = 0;
            for (size_t i = 0; i < np; i++) {
                rl_bench_type t = RL_BENCH_TEXT;
                rl_bench_type_parse(f[7 + 3 * i], &t);
                rl_bench_props_set(&r.props, &r.n_props, &cap, j_unescape(f[6 + 3 * i]), t,
                                   j_unescape(f[8 + 3 * i]));
            }
            size_t k = 6 + 3 * np;
            if (ns > 0) {
                r.samples = malloc(ns * cols * sizeof(double));
                if (!r.samples) {
                    free(f);
                    free(text);
                    rl_bench_run_data_free(&r);
                    return rl_error_set(RL_ENOMEM, "out of memory");
                }
                for (size_t i = 0; i < ns * cols; i++)
                    r.samples[i] = strtod(f[k + 1 + i], NULL);
                r.n_samples = ns;
            }
            free(f);
            rc = push_run(out, pi, ri, &r);
            if (rc < 0) {
                free(text);
                return rc;
            }
        }
        *good_len = (off_t)(nl + 1 - text);
        line = nl + 1;
    }
    free(text);
    return RL_OK;
}

/* The journal's first line: the format, the experiment and its planners, so a journal is
 * never resumed by another benchmark. */
static int journal_header(const rl_bench *b, char **out)
{
    char *h = NULL;
    size_t len = 0, cap = 0;
    j_field(&h, &len, &cap, "runlab-bench-journal 1", false);
    j_field(&h, &len, &cap, b->name, true);
    for (size_t i = 0; i < b->n_planners; i++)
        j_field(&h, &len, &cap, b->planners[i]->name, true);
    if (!h)
        return rl_error_set(RL_ENOMEM, "out of memory");
    *out = h;
    return RL_OK;
}

void rl_bench_journal_runs_free(rl_bench_journal_runs *runs)
{
    for (size_t i = 0; i < runs->n; i++)
        rl_bench_run_data_free(&runs->runs[i].data);
    free(runs->runs);
    memset(runs, 0, sizeof *runs);
}

int rl_bench_journal_open(const rl_bench *b, const char *path, rl_bench_journal_runs *runs,
                          int *fd_out)
{
    char *header = NULL;
    off_t good = 0;
    int rc;
    memset(runs, 0, sizeof *runs);
    *fd_out = -1;
    if ((rc = journal_header(b, &header)) < 0 ||
        (rc = journal_load(b, path, header, runs, &good)) < 0) {
        free(header);
        rl_bench_journal_runs_free(runs);
        return rc;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    /* a line cut by a kill is dropped: its run is done again */
    if (fd < 0 || ftruncate(fd, good) < 0 || lseek(fd, 0, SEEK_END) < 0) {
        rc = rl_error_set_errno(RL_EIO, errno, "%s", path);
        free(header);
        if (fd >= 0)
            close(fd);
        rl_bench_journal_runs_free(runs);
        return rc;
    }
    if (good == 0) {
        size_t hl = strlen(header);
        header[hl] = '\n';
        if (rl_bench_write_all(fd, header, hl + 1) < 0 || fsync(fd) < 0)
            rc = rl_error_set_errno(RL_EIO, errno, "%s", path);
    }
    free(header);
    if (rc < 0) {
        close(fd);
        rl_bench_journal_runs_free(runs);
        return rc;
    }
    *fd_out = fd;
    return RL_OK;
}
