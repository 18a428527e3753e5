/* Reading and writing OMPL benchmark logs. The reader accepts exactly what OMPL's
 * ompl_benchmark_statistics.py accepts (optional lines recognised by the same tokens,
 * universal newlines) and keeps each line, so the database step can repeat the parser's
 * own transformations; the writer emits the grammar OMPL 1.5/1.6 write. */
#include "core/text.h"
#include "formats/ompl/ompl_log.h"

#include "runlab/error.h"
#include "runlab/fs.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OMPL_LOG_MAX_BYTES = 1 << 30 };

int rl_strv_push_owned(rl_strv *s, char *str)
{
    if (!str)
        return rl_error_set(RL_ENOMEM, "out of memory");
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        char **v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            free(str);
            return rl_error_set(RL_ENOMEM, "out of memory");
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = str;
    return RL_OK;
}

int rl_strv_push(rl_strv *s, const char *str)
{
    return rl_strv_push_owned(s, strdup(str));
}

void rl_strv_free(rl_strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

void rl_ompl_log_free(rl_ompl_log *log)
{
    if (!log)
        return;
    free(log->version_line);
    free(log->experiment_line);
    rl_strv_free(&log->exp_props);
    free(log->host_line);
    free(log->date_line);
    free(log->setup);
    free(log->cpuinfo);
    free(log->seed_line);
    free(log->time_line);
    free(log->mem_line);
    free(log->runs_line);
    free(log->total_line);
    rl_strv_free(&log->enums);
    for (size_t i = 0; i < log->n_planners; i++) {
        rl_ompl_planner *p = &log->planners[i];
        free(p->name);
        rl_strv_free(&p->common);
        rl_strv_free(&p->props);
        rl_strv_free(&p->runs);
        rl_strv_free(&p->progress_props);
        rl_strv_free(&p->progress);
    }
    free(log->planners);
    memset(log, 0, sizeof *log);
}

int rl_ompl_log_add_planner(rl_ompl_log *log, rl_ompl_planner **out)
{
    rl_ompl_planner *p = realloc(log->planners, (log->n_planners + 1) * sizeof *p);
    if (!p)
        return rl_error_set(RL_ENOMEM, "out of memory");
    log->planners = p;
    memset(&p[log->n_planners], 0, sizeof *p);
    *out = &p[log->n_planners++];
    return RL_OK;
}

/* Python's str.split() on ASCII whitespace. */
static int split_ws(const char *line, const char **start, size_t *lens, int cap)
{
    int n = 0;
    const char *p = line;
    while (*p) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        const char *b = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        if (n < cap) {
            start[n] = b;
            lens[n] = (size_t)(p - b);
        }
        n++;
    }
    return n;
}

enum { MAX_TOKENS = 4096 };

bool rl_ompl_token(const char *line, int index, char *buf, size_t cap)
{
    const char **start = malloc(MAX_TOKENS * sizeof *start);
    size_t *lens = malloc(MAX_TOKENS * sizeof *lens);
    bool ok = false;
    if (start && lens) {
        int n = split_ws(line, start, lens, MAX_TOKENS);
        if (n > MAX_TOKENS)
            n = MAX_TOKENS;
        int i = index < 0 ? n + index : index;
        if (i >= 0 && i < n && lens[i] < cap) {
            memcpy(buf, start[i], lens[i]);
            buf[lens[i]] = '\0';
            ok = true;
        }
    }
    free(start);
    free(lens);
    return ok;
}

static bool token_is(const char *line, int index, const char *want)
{
    char buf[64];
    return rl_ompl_token(line, index, buf, sizeof buf) && strcmp(buf, want) == 0;
}

/* Line cursor over the text with universal newlines (\n, \r\n, \r), as Python's text
 * mode reads it. */
typedef struct cursor {
    const char *text;
    size_t len, pos;
    size_t lineno;
    const char *name;
} cursor;

static bool at_eof(const cursor *c)
{
    return c->pos >= c->len;
}

/* Next line without its terminator, in a new string; NULL at end of input (or no
 * memory, with the error set). */
static char *next_line(cursor *c)
{
    if (at_eof(c))
        return NULL;
    size_t b = c->pos, e = b;
    while (e < c->len && c->text[e] != '\n' && c->text[e] != '\r')
        e++;
    size_t next = e;
    if (next < c->len) {
        if (c->text[next] == '\r' && next + 1 < c->len && c->text[next + 1] == '\n')
            next += 2;
        else
            next += 1;
    }
    c->pos = next;
    c->lineno++;
    char *s = malloc(e - b + 1);
    if (!s) {
        rl_error_set(RL_ENOMEM, "out of memory");
        return NULL;
    }
    memcpy(s, c->text + b, e - b);
    s[e - b] = '\0';
    return s;
}

static int fail(const cursor *c, const char *what)
{
    return rl_error_set(RL_EPARSE, "%s:%zu: %s", c->name, c->lineno, what);
}

/* Reads a line that must exist. */
static int need_line(cursor *c, char **out, const char *what)
{
    size_t before = c->lineno;
    *out = next_line(c);
    if (*out)
        return RL_OK;
    if (rl_error_last_code() == RL_ENOMEM && c->lineno != before)
        return RL_ENOMEM;
    return rl_error_set(RL_ETRUNCATED, "%s:%zu: log ends before %s", c->name, c->lineno + 1, what);
}

/* Peeks at the next line; `keep` says whether it is consumed. */
static int peek_line(cursor *c, char **out)
{
    size_t pos = c->pos, ln = c->lineno;
    *out = next_line(c);
    c->pos = pos;
    c->lineno = ln;
    return *out || at_eof(c) ? RL_OK : RL_ENOMEM;
}

static void skip_line(cursor *c)
{
    char *s = next_line(c);
    free(s);
}

/* A count read as Python's int(token0) would, bounded by the lines left. */
static int line_count(cursor *c, const char *line, const char *what, size_t *out)
{
    char tok[32];
    if (!rl_ompl_token(line, 0, tok, sizeof tok))
        return fail(c, what);
    char *end;
    errno = 0;
    long long v = strtoll(tok, &end, 10);
    if (*end || errno)
        return fail(c, what);
    if (v < 0)
        v = 0; /* range(n) with n < 0 runs no iteration */
    if ((unsigned long long)v > c->len - c->pos + 1)
        return rl_error_set(RL_EPARSE, "%s:%zu: %s: count %lld exceeds the lines left", c->name,
                            c->lineno, what, v);
    *out = (size_t)v;
    return RL_OK;
}

static bool float_token(const char *line, int idx)
{
    char tok[64];
    if (!rl_ompl_token(line, idx, tok, sizeof tok))
        return false;
    char *end;
    strtod(tok, &end);
    return end != tok && *end == '\0';
}

static int read_block(cursor *c, char **out, const char *what)
{
    char *line;
    int rc = need_line(c, &line, what);
    if (rc < 0)
        return rc;
    if (strncmp(line, "<<<|", 4) != 0) {
        free(line);
        return fail(c, "expected <<<| to open the setup block");
    }
    free(line);
    size_t cap = 256, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return rl_error_set(RL_ENOMEM, "out of memory");
    for (;;) {
        rc = need_line(c, &line, "|>>> closing a block");
        if (rc < 0) {
            free(buf);
            return rc;
        }
        if (strncmp(line, "|>>>", 4) == 0) {
            free(line);
            break;
        }
        size_t l = strlen(line);
        if (len + l + 2 > cap) {
            while (len + l + 2 > cap)
                cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                free(line);
                return rl_error_set(RL_ENOMEM, "out of memory");
            }
            buf = nb;
        }
        memcpy(buf + len, line, l);
        len += l;
        buf[len++] = '\n';
        free(line);
    }
    buf[len] = '\0';
    *out = buf;
    return RL_OK;
}

static int read_lines(cursor *c, size_t n, rl_strv *into, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        char *line;
        int rc = need_line(c, &line, what);
        if (rc < 0)
            return rc;
        rc = rl_strv_push_owned(into, line);
        if (rc < 0)
            return rc;
    }
    return RL_OK;
}

/* Property declarations must end in a type word that can go into SQL. */
static int check_decls(cursor *c, const rl_strv *decls, const char *what)
{
    for (size_t i = 0; i < decls->n; i++) {
        char type[64];
        if (!rl_ompl_token(decls->v[i], -1, type, sizeof type))
            return rl_error_set(RL_EPARSE, "%s: %s '%s' has no type", c->name, what, decls->v[i]);
    }
    return RL_OK;
}

static int parse_planner(cursor *c, rl_ompl_log *log)
{
    rl_ompl_planner *p;
    int rc = rl_ompl_log_add_planner(log, &p);
    if (rc < 0)
        return rc;
    char *line = NULL;
    size_t n;
    if ((rc = need_line(c, &p->name, "a planner name")) < 0)
        return rc;
    if ((rc = need_line(c, &line, "the common property count")) < 0)
        return rc;
    rc = line_count(c, line, "expected '<n> common properties'", &n);
    free(line);
    if (rc < 0 || (rc = read_lines(c, n, &p->common, "common properties")) < 0)
        return rc;
    if ((rc = need_line(c, &line, "the run property count")) < 0)
        return rc;
    rc = line_count(c, line, "expected '<n> properties for each run'", &n);
    free(line);
    if (rc < 0 || (rc = read_lines(c, n, &p->props, "run properties")) < 0)
        return rc;
    if ((rc = check_decls(c, &p->props, "run property")) < 0)
        return rc;
    if ((rc = need_line(c, &line, "the run count")) < 0)
        return rc;
    rc = line_count(c, line, "expected '<n> runs'", &n);
    free(line);
    if (rc < 0 || (rc = read_lines(c, n, &p->runs, "runs")) < 0)
        return rc;
    if ((rc = need_line(c, &line, "'.' or a progress section")) < 0)
        return rc;
    char tok[8];
    bool dot = rl_ompl_token(line, 0, tok, sizeof tok) && strcmp(tok, ".") == 0 &&
               !rl_ompl_token(line, 1, tok, sizeof tok);
    if (dot) {
        free(line);
        return RL_OK;
    }
    p->has_progress = true;
    rc = line_count(c, line, "expected '.' or '<n> progress properties for each run'", &n);
    free(line);
    if (rc < 0 || (rc = read_lines(c, n, &p->progress_props, "progress properties")) < 0)
        return rc;
    if ((rc = check_decls(c, &p->progress_props, "progress property")) < 0)
        return rc;
    if ((rc = need_line(c, &line, "the progress run count")) < 0)
        return rc;
    rc = line_count(c, line, "expected '<n> runs'", &n);
    free(line);
    if (rc < 0)
        return rc;
    if (n > p->runs.n)
        return fail(c, "more progress lines than runs");
    if ((rc = read_lines(c, n, &p->progress, "progress data")) < 0)
        return rc;
    if ((rc = need_line(c, &line, "'.' ending the planner")) < 0)
        return rc;
    free(line); /* OMPL's parser skips this line without looking at it */
    return RL_OK;
}

static int parse(cursor *c, rl_ompl_log *log)
{
    char *line;
    int rc;
    if ((rc = peek_line(c, &line)) < 0)
        return rc;
    if (line && token_is(line, 1, "version")) {
        log->version_line = line;
        skip_line(c);
    } else {
        free(line);
    }
    if ((rc = need_line(c, &log->experiment_line, "the Experiment line")) < 0)
        return rc;
    if (!token_is(log->experiment_line, 0, "Experiment"))
        return fail(c, "expected 'Experiment <name>'");
    if ((rc = peek_line(c, &line)) < 0)
        return rc;
    if (line && token_is(line, -2, "experiment") && token_is(line, -1, "properties")) {
        size_t n;
        skip_line(c);
        rc = line_count(c, line, "experiment property count", &n);
        free(line);
        if (rc < 0 || (rc = read_lines(c, n, &log->exp_props, "experiment properties")) < 0)
            return rc;
        for (size_t i = 0; i < n; i++)
            if (!strstr(log->exp_props.v[i], " = "))
                return rl_error_set(RL_EPARSE, "%s: experiment property '%s' has no ' = '", c->name,
                                    log->exp_props.v[i]);
    } else {
        free(line);
    }
    if ((rc = need_line(c, &log->host_line, "'Running on <host>'")) < 0)
        return rc;
    if (!token_is(log->host_line, 0, "Running"))
        return fail(c, "expected 'Running on <host>'");
    if ((rc = need_line(c, &log->date_line, "'Starting at <date>'")) < 0)
        return rc;
    if (strncmp(log->date_line, "Starting", 8) != 0)
        return fail(c, "expected 'Starting at <date>'");
    if ((rc = read_block(c, &log->setup, "the setup block")) < 0)
        return rc;
    if ((rc = peek_line(c, &line)) < 0)
        return rc;
    bool block = line && strncmp(line, "<<<|", 4) == 0;
    free(line);
    if (block && (rc = read_block(c, &log->cpuinfo, "the CPU block")) < 0)
        return rc;
    if ((rc = need_line(c, &log->seed_line, "the random seed")) < 0)
        return rc;
    if (!token_is(log->seed_line, -2, "random") || !token_is(log->seed_line, -1, "seed"))
        return fail(c, "expected '<seed> is the random seed'");
    if ((rc = need_line(c, &log->time_line, "the time limit")) < 0)
        return rc;
    if (!token_is(log->time_line, -3, "seconds") || !token_is(log->time_line, -2, "per") ||
        !token_is(log->time_line, -1, "run") || !float_token(log->time_line, 0))
        return fail(c, "expected '<t> seconds per run'");
    if ((rc = need_line(c, &log->mem_line, "the memory limit")) < 0)
        return rc;
    if (!token_is(log->mem_line, -3, "MB") || !token_is(log->mem_line, -2, "per") ||
        !token_is(log->mem_line, -1, "run") || !float_token(log->mem_line, 0))
        return fail(c, "expected '<m> MB per run'");
    if ((rc = peek_line(c, &line)) < 0)
        return rc;
    if (line && token_is(line, -3, "runs") && token_is(line, -2, "per") &&
        token_is(line, -1, "planner")) {
        size_t dummy;
        skip_line(c);
        log->runs_line = line;
        char tok[32], *end;
        if (!rl_ompl_token(line, 0, tok, sizeof tok) || (strtoll(tok, &end, 10), *end))
            return fail(c, "expected '<n> runs per planner'");
        (void)dummy;
    } else {
        free(line);
    }
    if ((rc = need_line(c, &log->total_line, "the total time")) < 0)
        return rc;
    if (!token_is(log->total_line, -3, "collect") || !token_is(log->total_line, -2, "the") ||
        !token_is(log->total_line, -1, "data") || !float_token(log->total_line, 0))
        return fail(c, "expected '<t> seconds spent to collect the data'");
    if ((rc = peek_line(c, &line)) < 0)
        return rc;
    if (line && token_is(line, -2, "enum")) {
        size_t n;
        skip_line(c);
        rc = line_count(c, line, "enum count", &n);
        free(line);
        if (rc < 0 || (rc = read_lines(c, n, &log->enums, "enums")) < 0)
            return rc;
    } else {
        free(line);
    }
    if ((rc = need_line(c, &line, "the planner count")) < 0)
        return rc;
    size_t np;
    if (!token_is(line, -1, "planners")) {
        free(line);
        return fail(c, "expected '<n> planners'");
    }
    rc = line_count(c, line, "planner count", &np);
    free(line);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < np; i++)
        if ((rc = parse_planner(c, log)) < 0)
            return rc;
    return RL_OK;
}

int rl_ompl_log_parse(const char *text, size_t len, const char *name, rl_ompl_log *out)
{
    memset(out, 0, sizeof *out);
    cursor c = {text, len, 0, 0, name ? name : "<log>"};
    int rc = parse(&c, out);
    if (rc < 0)
        rl_ompl_log_free(out);
    return rc;
}

int rl_ompl_log_read_file(const char *path, rl_ompl_log *out)
{
    char *text;
    size_t len;
    memset(out, 0, sizeof *out);
    int rc = rl_fs_read_all(path, OMPL_LOG_MAX_BYTES, &text, &len);
    if (rc < 0)
        return rc;
    rc = rl_ompl_log_parse(text, len, path, out);
    free(text);
    return rc;
}

static void puts_nl(rl_buf *b, const char *s)
{
    rl_buf_put(b, s, strlen(s));
    rl_buf_put(b, "\n", 1);
}

/* "<n> <what>" count lines. */
static void putf(rl_buf *b, size_t v, const char *what)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%zu ", v);
    rl_buf_put(b, tmp, (size_t)n);
    puts_nl(b, what);
}

static void put_lines(rl_buf *b, const rl_strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        puts_nl(b, s->v[i]);
}

static void put_block(rl_buf *b, const char *text)
{
    puts_nl(b, "<<<|");
    size_t n = strlen(text);
    rl_buf_put(b, text, n);
    if (n && text[n - 1] != '\n')
        rl_buf_put(b, "\n", 1);
    puts_nl(b, "|>>>");
}

int rl_ompl_log_format(const rl_ompl_log *log, char **out, size_t *out_len)
{
    rl_buf b = {0};
    if (log->version_line)
        puts_nl(&b, log->version_line);
    puts_nl(&b, log->experiment_line);
    putf(&b, log->exp_props.n, "experiment properties");
    put_lines(&b, &log->exp_props);
    puts_nl(&b, log->host_line);
    puts_nl(&b, log->date_line);
    put_block(&b, log->setup ? log->setup : "");
    if (log->cpuinfo)
        put_block(&b, log->cpuinfo);
    puts_nl(&b, log->seed_line);
    puts_nl(&b, log->time_line);
    puts_nl(&b, log->mem_line);
    if (log->runs_line)
        puts_nl(&b, log->runs_line);
    puts_nl(&b, log->total_line);
    if (log->enums.n) {
        putf(&b, log->enums.n, "enum type");
        put_lines(&b, &log->enums);
    }
    putf(&b, log->n_planners, "planners");
    for (size_t i = 0; i < log->n_planners; i++) {
        const rl_ompl_planner *p = &log->planners[i];
        puts_nl(&b, p->name);
        putf(&b, p->common.n, "common properties");
        put_lines(&b, &p->common);
        putf(&b, p->props.n, "properties for each run");
        put_lines(&b, &p->props);
        putf(&b, p->runs.n, "runs");
        put_lines(&b, &p->runs);
        if (p->has_progress) {
            putf(&b, p->progress_props.n, "progress properties for each run");
            put_lines(&b, &p->progress_props);
            putf(&b, p->progress.n, "runs");
            put_lines(&b, &p->progress);
        }
        puts_nl(&b, ".");
    }
    if (b.err) {
        free(b.data);
        return b.err;
    }
    *out = b.data;
    if (out_len)
        *out_len = b.len;
    return RL_OK;
}
