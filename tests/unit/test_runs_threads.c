/* Tests of rl_runs_load's pool of loading threads: many runs loaded by 1, 3 and 8 threads
 * give the same set, every number equal to the double the test wrote (printed %.17g, so
 * strtod reads it back exactly), in line endings LF and CRLF, with quoted and non-numeric
 * cells and a dropped row; the progress callback runs on the calling thread, once per run;
 * rl_runs_each hands the same runs over in path order, batch after batch.
 * Run under ThreadSanitizer (label threads). */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/runs.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { RUNS = 24, ROWS = 300, COLS = 6 };

/* The value of run r, row i, column j: a mix of integers, short decimals and 17-digit
 * doubles, so both the fast and the careful number paths are taken. */
static double value_of(int r, int i, int j)
{
    switch (j) {
    case 0: return i;
    case 1: return (double)(r * 1000 + i) * 0.001;
    case 2: return sin(r + i * 0.37) * 1e-7;
    case 3: return (double)((uint64_t)(r + 1) * 2654435761u * (uint64_t)(i + 1));
    case 4: return exp((i % 50) - 25.0);
    default: return -1.0 / (i + r + 1);
    }
}

struct written {
    char dir[PATH_MAX];
    int rows_kept;
};

static void write_run(const char *root, int r, struct written *w)
{
    snprintf(w->dir, sizeof w->dir, "%s/run%02d", root, r);
    assert_int_equal(mkdir(w->dir, 0755), 0);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/performance_log.csv", w->dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    const char *eol = r % 3 == 1 ? "\r\n" : "\n";
    fprintf(f, "c0,c1,c2,c3,c4,c5%s", eol);
    w->rows_kept = 0;
    for (int i = 0; i < ROWS; i++) {
        if (r % 4 == 2 && i == 7) {
            fprintf(f, "1,2,3%s", eol); /* too few fields: dropped */
            continue;
        }
        for (int j = 0; j < COLS; j++) {
            double v = value_of(r, i, j);
            if (r % 5 == 3 && j == 2 && i % 10 == 0)
                fprintf(f, "\"%.17g\"", v); /* quoted: the careful path */
            else if (r % 6 == 4 && j == 5 && i == 11)
                fprintf(f, "n/a"); /* not a number: NaN */
            else
                fprintf(f, "%.17g", v);
            fputs(j + 1 < COLS ? "," : eol, f);
        }
        w->rows_kept++;
    }
    assert_int_equal(fclose(f), 0);
}

static void check_run(const rl_run *run, int r, const struct written *w)
{
    assert_string_equal(run->path, w->dir);
    assert_int_equal(run->num_rows, (size_t)w->rows_kept);
    assert_int_equal(run->num_columns, COLS);
    int row = 0;
    for (int i = 0; i < ROWS; i++) {
        if (r % 4 == 2 && i == 7)
            continue;
        for (int j = 0; j < COLS; j++) {
            double got = run->columns[j][row];
            if (r % 6 == 4 && j == 5 && i == 11) {
                assert_true(isnan(got));
                continue;
            }
            double want = value_of(r, i, j);
            if (memcmp(&got, &want, sizeof got) != 0)
                fail_msg("run %d row %d column %d: %.17g, want %.17g", r, i, j, got, want);
        }
        row++;
    }
}

struct progress_log {
    pthread_t caller;
    size_t calls, last_done;
    bool wrong_thread, out_of_order;
};

static void on_progress(size_t done, size_t total, const char *path, void *user)
{
    struct progress_log *log = user;
    (void)path;
    if (!pthread_equal(pthread_self(), log->caller))
        log->wrong_thread = true;
    if (done != log->last_done + 1 || total != RUNS)
        log->out_of_order = true;
    log->last_done = done;
    log->calls++;
}

static void test_same_set_with_any_thread_count(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    static struct written w[RUNS];
    for (int r = 0; r < RUNS; r++)
        write_run(root, r, &w[r]);
    static const size_t counts[] = {1, 3, 8};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        rl_run_limits lim = {.threads = counts[c]};
        struct progress_log log = {.caller = pthread_self()};
        const char *roots[] = {root};
        rl_run_set *set;
        assert_int_equal(rl_runs_load_progress(roots, 1, &lim, on_progress, &log, &set), RL_OK);
        assert_int_equal(set->count, RUNS);
        assert_int_equal(log.calls, RUNS);
        assert_false(log.wrong_thread);
        assert_false(log.out_of_order);
        for (int r = 0; r < RUNS; r++) { /* the set is sorted by path: run00, run01, ... */
            check_run(set->runs[r], r, &w[r]);
            bool dropped = r % 4 == 2, nonnum = r % 6 == 4;
            assert_int_equal(rl_run_has_reason(set->runs[r], RL_REASON_BAD_ROWS), dropped);
            assert_int_equal(rl_run_has_reason(set->runs[r], RL_REASON_NON_NUMERIC), nonnum);
        }
        rl_run_set_free(set);
    }
    rl_test_tmpdir_free(root);
}

/* rl_runs_each (issue 29 item 5): more runs than one batch (64) reach the callback in path
 * order, on the calling thread, equal to what was written, with any thread count; a
 * negative return stops the walk and is returned. */
enum { EACH_RUNS = 99 }; /* run00..run98: names sort as numbers */

struct each_log {
    pthread_t caller;
    const struct written *w;
    size_t calls, stop_at;
    bool wrong;
};

static int on_each(const rl_run *run, size_t index, size_t total, void *user)
{
    struct each_log *log = user;
    if (!pthread_equal(pthread_self(), log->caller) || index != log->calls ||
        total != EACH_RUNS)
        log->wrong = true;
    check_run(run, (int)index, &log->w[index]);
    log->calls++;
    return index == log->stop_at ? rl_error_set(RL_ERANGE, "stop here") : RL_OK;
}

static void test_each_in_path_order(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    static struct written w[EACH_RUNS];
    for (int r = 0; r < EACH_RUNS; r++)
        write_run(root, r, &w[r]);
    static const size_t counts[] = {1, 3, 8};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        rl_run_limits lim = {.threads = counts[c]};
        const char *roots[] = {root};
        struct each_log log = {.caller = pthread_self(), .w = w, .stop_at = SIZE_MAX};
        char **errors = NULL;
        size_t nerrors = 0;
        assert_int_equal(rl_runs_each(roots, 1, &lim, on_each, &log, &errors, &nerrors), RL_OK);
        assert_int_equal(log.calls, EACH_RUNS);
        assert_false(log.wrong);
        assert_int_equal(nerrors, 0);
        free(errors);
        log = (struct each_log){.caller = pthread_self(), .w = w, .stop_at = 70};
        assert_int_equal(rl_runs_each(roots, 1, &lim, on_each, &log, NULL, NULL), RL_ERANGE);
        assert_int_equal(log.calls, 71);
        assert_false(log.wrong);
    }
    rl_test_tmpdir_free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_set_with_any_thread_count),
        cmocka_unit_test(test_each_in_path_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
