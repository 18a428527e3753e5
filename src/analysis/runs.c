/* The run loader (runlab/runs.h): finds run directories under the roots (run_walk.c),
 * loads each (run_load.c) on a pool of threads into per-column arrays, classified PARSED /
 * DEGRADED / SKIPPED with reasons, never failing on bad input, and aggregates and prints
 * the report. */
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

#include "analysis/runs_internal.h" /* last: it renames the files' shared functions */

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
