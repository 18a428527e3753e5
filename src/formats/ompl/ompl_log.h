/* OMPL benchmark log files ("The benchmark logfile format"), kept as the lines OMPL's own
 * parser looks at, so that one routine turns them into the SQLite database for both
 * paths: a log read from disk and a benchmark runlab ran itself. Internal to librunlab. */
#ifndef RUNLAB_FORMATS_OMPL_LOG_H
#define RUNLAB_FORMATS_OMPL_LOG_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sqlite3 sqlite3;

/* A growable array of owned strings. */
typedef struct rl_strv {
    char **v;
    size_t n, cap;
} rl_strv;

int rl_strv_push(rl_strv *s, const char *str);
int rl_strv_push_owned(rl_strv *s, char *str); /* takes ownership, also on failure */
void rl_strv_free(rl_strv *s);

typedef struct rl_ompl_planner {
    char *name;             /* the planner line, as written */
    rl_strv common;         /* "key = value" lines */
    rl_strv props;          /* "name words TYPE" lines of the per-run properties */
    rl_strv runs;           /* one line per run: "v1; v2; ...; " */
    bool has_progress;      /* a progress section follows the runs */
    rl_strv progress_props; /* "name words TYPE" lines */
    rl_strv progress;       /* one line per run: "a,b,c,;a,b,c,;" */
} rl_ompl_planner;

typedef struct rl_ompl_log {
    char *version_line;    /* "OMPL version 1.6.0"; NULL when the log has none */
    char *experiment_line; /* "Experiment <name>" */
    rl_strv exp_props;     /* "name words TYPE = value" */
    char *host_line;       /* "Running on <host>" */
    char *date_line;       /* "Starting at <date>" */
    char *setup;           /* text between <<<| and |>>>, newlines kept */
    char *cpuinfo;         /* second such block, NULL when absent */
    char *seed_line;       /* "<seed> is the random seed" */
    char *time_line;       /* "<t> seconds per run" */
    char *mem_line;        /* "<m> MB per run" */
    char *runs_line;       /* "<n> runs per planner"; NULL when absent */
    char *total_line;      /* "<t> seconds spent to collect the data" */
    rl_strv enums;         /* "name|desc0|desc1|..." */
    rl_ompl_planner *planners;
    size_t n_planners;
} rl_ompl_log;

void rl_ompl_log_free(rl_ompl_log *log);

/* Adds a zeroed planner; returns it through `out`. */
int rl_ompl_log_add_planner(rl_ompl_log *log, rl_ompl_planner **out);

/* Parses log text; `name` is used in error messages ("file:line: ..."). */
int rl_ompl_log_parse(const char *text, size_t len, const char *name, rl_ompl_log *out);
int rl_ompl_log_read_file(const char *path, rl_ompl_log *out);

/* Serialises the log into a new NUL-terminated string (caller frees). */
int rl_ompl_log_format(const rl_ompl_log *log, char **out, size_t *out_len);

/* Opens (creating when needed) a database and makes OMPL's base tables. */
int rl_ompl_db_open(const char *path, sqlite3 **out);
/* Inserts one log into the database the way OMPL's parser does. */
int rl_ompl_db_add_log(sqlite3 *db, const rl_ompl_log *log, const char *name);
/* (Re)creates the two views, then closes the database. Always closes. */
int rl_ompl_db_finish(sqlite3 *db);

/* The i-th whitespace-separated token of a line (negative counts from the end) copied
 * into `buf`; returns false when there is no such token. */
bool rl_ompl_token(const char *line, int index, char *buf, size_t cap);

#endif
