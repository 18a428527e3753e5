/* Internals of the run loader shared by its files: runs.c (rl_runs_load: discovery, the
 * pool of loading threads, the report) calls run_walk.c (finding run directories) and
 * run_load.c (one run), which calls run_csv.c (the tolerant CSV scanner); all use
 * run_read.c (reading files without trusting them, noting what was wrong on the run). */
#ifndef RUNLAB_RUNS_INTERNAL_H
#define RUNLAB_RUNS_INTERNAL_H

#include "analysis/run_columns.h"
#include "runlab/runs.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The functions below were moved out of runs.c whole and keep the names their bodies call
 * them by; these give their symbols the library's prefix (the library exports every
 * non-static name). Each file includes this header after its system headers. */
#define reason_names rl_runs_reason_names
#define note rl_runs_note
#define file_buf_release rl_runs_file_buf_release
#define read_file_into rl_runs_read_file_into
#define read_file rl_runs_read_file
#define load_csv rl_runs_load_csv
#define limits_fill rl_runs_limits_fill
#define run_load rl_runs_run_load
#define name_cmp rl_runs_name_cmp
#define walk_dir rl_runs_walk_dir
#define walk_links rl_runs_walk_links
#define walk_error rl_runs_walk_error

/* ---- run_read.c ---- */

/* The name of each rl_run_reason, as in messages and the report. */
extern const char *const reason_names[RL_REASON_COUNT];

/* Adds a reason and a message to the run. Out of memory for the message only loses the
 * message. */
__attribute__((format(printf, 3, 4))) void note(rl_run *run, rl_run_reason reason,
                                                const char *fmt, ...);

enum read_result { READ_OK, READ_MISSING, READ_UNREADABLE, READ_TOO_LARGE };

/* A read buffer kept across files, so loading many runs does not map and fault in fresh
 * pages for every file. */
struct file_buf {
    char *data;
    size_t cap;
    rl_column_arena arena; /* where this thread's runs get their column blocks... */
    bool pooled;           /* ...when loading many runs; else malloc */
};

void file_buf_release(struct file_buf *fb);
/* Reads a regular file whole into `fb` (grown as needed), NUL-terminated; at most `max`
 * bytes. O_NONBLOCK, so a FIFO under a run's file name cannot hang the loader; anything
 * but a regular file is unreadable. `why` gets the reason. */
enum read_result read_file_into(const char *path, size_t max, struct file_buf *fb, size_t *len,
                                char *why, size_t why_cap);
/* The same into a new buffer (*out, to free). */
enum read_result read_file(const char *path, size_t max, char **out, size_t *len, char *why,
                           size_t why_cap);

/* ---- run_csv.c ---- */

/* Reads DIR/perflog.csv into the run's columns; problems become reasons on the run.
 * Returns RL_OK, or a negative status (out of memory) with the error message set. */
int load_csv(rl_run *run, const char *dir, const rl_run_limits *lim, struct file_buf *fb);

/* ---- run_load.c ---- */

/* `in`, or the defaults where it is NULL or a field is 0. */
void limits_fill(rl_run_limits *l, const rl_run_limits *in);
/* Loads one run directory into *out (rl_run_load with a buffer kept across runs). */
int run_load(const char *dir, const rl_run_limits *limits, struct file_buf *fb, rl_run **out);

/* ---- run_walk.c ---- */

/* Discovery's state: the run directories found, the errors, the directories seen. */
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

/* Adds an error (path and what) to the walk's list. */
__attribute__((format(printf, 2, 3))) void walk_error(struct walk *w, const char *fmt, ...);
/* qsort comparison of two C strings (char *). */
int name_cmp(const void *a, const void *b);
/* Walks `path` (at `depth`) for run directories; links to directories are deferred. */
void walk_dir(struct walk *w, const char *path, int depth);
/* Follows the deferred links, each directory once. */
void walk_links(struct walk *w);

#endif
