/* The isolated harness: crashing, aborting, hanging, memory-hungry and exiting planners
 * beside good ones, each run recorded with the right status; progress sampling; the
 * round trip log -> reader -> database equal to the database written directly; journal
 * resume after a cut; bad names refused. */
#include "rl_test.h"

#include "bench_dbcmp.h"
#include "runlab/bench.h"
#include "runlab/error.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { HARNESS_MAX_MEM_MB = 48 };

static rl_bench_status solve_fast(void *self, void *problem, rl_bench_run *run)
{
    (void)self;
    (void)problem;
    rl_bench_run_set_real(run, "solution length", 1.5);
    rl_bench_run_set_int(run, "graph states", 42);
    return RL_RUN_EXACT;
}

static const char *const PROGRESS_NAMES[] = {"best cost", "iterations"};
static const rl_bench_type PROGRESS_TYPES[] = {RL_BENCH_REAL, RL_BENCH_INTEGER};

/* Bounded by iterations, not seconds: it ends EXACT however little CPU it gets. Each
 * iteration sleeps 1 ms, so a run lasts at least PROGRESS_ITERATIONS ms. */
enum { PROGRESS_ITERATIONS = 250 };

static rl_bench_status solve_progress(void *self, void *problem, rl_bench_run *run)
{
    (void)self;
    (void)problem;
    double cost = 10;
    for (long it = 1; it <= PROGRESS_ITERATIONS && !rl_bench_run_should_stop(run); it++) {
        cost *= 0.999;
        rl_bench_run_progress(run, 0, cost);
        rl_bench_run_progress(run, 1, (double)it);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    rl_bench_run_set_real(run, "best cost", cost);
    return RL_RUN_EXACT;
}

static rl_bench_status solve_crash(void *self, void *problem, rl_bench_run *run)
{
    (void)self, (void)problem, (void)run;
    raise(SIGSEGV);
    return RL_RUN_EXACT;
}

static rl_bench_status solve_abort(void *self, void *problem, rl_bench_run *run)
{
    (void)self, (void)problem, (void)run;
    abort();
}

static rl_bench_status solve_hang(void *self, void *problem, rl_bench_run *run)
{
    (void)self, (void)problem, (void)run;
    for (;;)
        pause(); /* never looks at the termination check */
    return RL_RUN_EXACT;
}

/* Takes three times max_mem in one step and holds it, so it crosses the limit as soon as it runs
 * at all, and whatever the harness's polling latency it is still above the limit when the
 * harness looks: the outcome does not depend on how much CPU either side gets. */
static void *volatile memhog_sink;

static rl_bench_status solve_memhog(void *self, void *problem, rl_bench_run *run)
{
    (void)self, (void)problem, (void)run;
    size_t size = (size_t)(3 * HARNESS_MAX_MEM_MB) << 20;
    char *p = malloc(size);
    if (!p)
        return RL_RUN_ERROR;
    memset(p, 1, size);
    memhog_sink = p;
    for (;;)
        pause();
}

/* _exit, not exit: under ASan, exit() runs LeakSanitizer's check in the run's process,
 * whose own memory (tens of MB) would count against max_mem. */
static rl_bench_status solve_exit(void *self, void *problem, rl_bench_run *run)
{
    (void)self, (void)problem, (void)run;
    _exit(3);
}

static void settings_fast(void *self, rl_bench_setting_fn emit, void *ctx)
{
    (void)self;
    emit(ctx, "range", "0.1");
    emit(ctx, "goal_bias", "0.05");
}

static rl_bench_planner *mk(const char *name,
                            rl_bench_status (*solve)(void *, void *, rl_bench_run *))
{
    rl_bench_planner *p = calloc(1, sizeof *p);
    p->name = name;
    p->self = p;
    p->solve = solve;
    p->free = free;
    p->settings = settings_fast;
    if (solve == solve_progress) {
        p->n_progress = 2;
        p->progress_names = PROGRESS_NAMES;
        p->progress_types = PROGRESS_TYPES;
    }
    return p;
}

static void post_run(void *ud, const rl_bench_planner *planner, void *problem, rl_bench_run *run)
{
    (void)ud, (void)planner, (void)problem;
    rl_bench_run_set_real(run, "path detour ratio", 1.25);
}

static rl_bench *make_bench(bool bad_ones)
{
    rl_bench *b = rl_bench_new("harness test", NULL, "a test problem\nsecond line");
    assert_non_null(b);
    rl_bench_set_seed(b, 7);
    assert_int_equal(rl_bench_add_param(b, "num obstacles", RL_BENCH_INTEGER, "4"), RL_OK);
    assert_int_equal(rl_bench_add_param(b, "clearance", RL_BENCH_REAL, "0.005"), RL_OK);
    assert_int_equal(rl_bench_add_planner(b, mk("fast", solve_fast)), RL_OK);
    assert_int_equal(rl_bench_add_planner(b, mk("progress", solve_progress)), RL_OK);
    if (bad_ones) {
        assert_int_equal(rl_bench_add_planner(b, mk("crash", solve_crash)), RL_OK);
        assert_int_equal(rl_bench_add_planner(b, mk("abort", solve_abort)), RL_OK);
        assert_int_equal(rl_bench_add_planner(b, mk("hang", solve_hang)), RL_OK);
        assert_int_equal(rl_bench_add_planner(b, mk("memhog", solve_memhog)), RL_OK);
        assert_int_equal(rl_bench_add_planner(b, mk("exit", solve_exit)), RL_OK);
    }
    rl_bench_events ev = {.on_post_run = post_run};
    rl_bench_set_events(b, &ev);
    return b;
}

static const char *prop(const rl_bench_run_data *r, const char *name)
{
    for (size_t i = 0; i < r->n_props; i++)
        if (strcmp(r->props[i].name, name) == 0)
            return r->props[i].value;
    return NULL;
}

/* max_time decides how long the hanging planner costs. Where statuses are asserted it is
 * generous (STATUS_MAX_TIME), so that no good planner, and no memory hog on its way to
 * max_mem, can run out of it on a loaded machine: at load 20 under ASan the hog's 144 MB
 * memset took more than 3 s of wall time. Where only the bookkeeping is checked it is
 * short. */
#define STATUS_MAX_TIME 20.0
#define SHORT_MAX_TIME 0.3

static void request(rl_bench_request *req, unsigned runs, double max_time)
{
    rl_bench_request_init(req);
    req->max_time = max_time;
    req->max_mem = HARNESS_MAX_MEM_MB;
    req->run_count = runs;
    req->time_between_updates = 0.05;
    req->grace = 0.1;
    req->jobs = 2;
}

static void test_bad_planners(void **state)
{
    (void)state;
    rl_bench *b = make_bench(true);
    rl_bench_request req;
    request(&req, 2, STATUS_MAX_TIME);
    assert_int_equal(rl_bench_execute(b, &req), RL_OK);
    const rl_bench_experiment *e = rl_bench_results(b);
    static const rl_bench_status want[] = {RL_RUN_EXACT, RL_RUN_EXACT,   RL_RUN_CRASH,
                                           RL_RUN_ABORT, RL_RUN_TIMEOUT, RL_RUN_OUT_OF_MEMORY,
                                           RL_RUN_ERROR};
    assert_int_equal(e->n_planners, 7);
    for (size_t p = 0; p < e->n_planners; p++) {
        assert_int_equal(e->planners[p].n_runs, 2);
        for (size_t r = 0; r < 2; r++) {
            const rl_bench_run_data *rd = &e->planners[p].runs[r];
            if (rd->status != want[p])
                fail_msg("%s run %zu: status %s, want %s (%s)", e->planners[p].name, r,
                         rl_bench_status_name(rd->status), rl_bench_status_name(want[p]),
                         rd->reason ? rd->reason : "");
            assert_non_null(prop(rd, "time"));
            assert_non_null(prop(rd, "memory"));
        }
    }
    /* the post-run event's property reached the good runs */
    assert_string_equal(prop(&e->planners[0].runs[0], "path detour ratio"), "1.25");
    assert_string_equal(prop(&e->planners[0].runs[0], "solution length"), "1.5");
    /* The hang was killed, and not before max_time + grace: a lower bound, which load
     * cannot break (how late after it the kill came depends on the scheduler). */
    for (size_t r = 0; r < 2; r++) {
        double t = strtod(prop(&e->planners[4].runs[r], "time"), NULL);
        if (!(t >= STATUS_MAX_TIME + req.grace - 0.001))
            fail_msg("hang run %zu killed after %.3f s, before max_time + grace", r, t);
    }
    /* The memory hog was killed for what it held: at least max_mem, recorded as its peak. */
    for (size_t r = 0; r < 2; r++) {
        const rl_bench_run_data *rd = &e->planners[5].runs[r];
        assert_true(strtod(prop(rd, "memory"), NULL) > HARNESS_MAX_MEM_MB);
        assert_non_null(strstr(rd->reason, "above max_mem"));
    }
    /* Progress samples are due on a grid of intervals from the run's start: none before
     * the first interval, each in a later grid slot than the previous one (a late sample
     * does not shift the grid), no more than the run's slots, and at least one in a run that lasted
     * PROGRESS_ITERATIONS ms, five intervals. These hold however the machine is loaded. */
    for (size_t r = 0; r < 2; r++) {
        const rl_bench_run_data *pr = &e->planners[1].runs[r];
        double run_time = strtod(prop(pr, "time"), NULL);
        assert_true(run_time >= PROGRESS_ITERATIONS / 1000.0);
        assert_true(pr->n_samples >= 1);
        size_t width = 3; /* time, best cost, iterations */
        for (size_t k = 0; k < pr->n_samples; k++) {
            double t = pr->samples[k * width];
            if (!(t >= (double)(k + 1) * req.time_between_updates - 1e-9))
                fail_msg("sample %zu at %.4f s, before %zu intervals", k, t, k + 1);
            if (k > 0) {
                double prev_slot = floor(pr->samples[(k - 1) * width] / req.time_between_updates);
                if (!(t >= (prev_slot + 1) * req.time_between_updates - 1e-9))
                    fail_msg("sample %zu at %.4f s, in the grid slot of the previous one", k, t);
            }
            double it = pr->samples[k * width + 2];
            assert_true(it >= 1 && it <= PROGRESS_ITERATIONS);
        }
        assert_true((double)pr->n_samples <= run_time / req.time_between_updates + 1);
    }
    assert_non_null(strstr(e->planners[2].runs[0].reason, "signal 11"));
    assert_non_null(strstr(e->planners[6].runs[0].reason, "code 3"));
    rl_bench_free(b);
}

/* runlab's log, read back by runlab, gives the database runlab writes directly. */
static void test_round_trip(void **state)
{
    (void)state;
    rl_bench *b = make_bench(true);
    rl_bench_request req;
    request(&req, 1, SHORT_MAX_TIME);
    assert_int_equal(rl_bench_execute(b, &req), RL_OK);
    char *tmp = rl_test_tmpdir();
    char log[1024], direct[1024], via[1024], why[2048];
    snprintf(log, sizeof log, "%s/x.log", tmp);
    snprintf(direct, sizeof direct, "%s/direct.db", tmp);
    snprintf(via, sizeof via, "%s/via.db", tmp);
    const rl_bench_experiment *e = rl_bench_results(b);
    assert_int_equal(rl_bench_write_log(e, log), RL_OK);
    assert_int_equal(rl_bench_write_db(e, direct), RL_OK);
    const char *logs[] = {log};
    if (rl_bench_import_logs(logs, 1, via) < 0)
        fail_msg("import: %s", rl_error_last());
    if (dbcmp_files(direct, via, why, sizeof why))
        fail_msg("direct and via-log databases differ: %s", why);
    char name[256];
    assert_int_equal(rl_bench_default_log_name(e, name, sizeof name), RL_OK);
    assert_non_null(strstr(name, ".log"));
    rl_test_tmpdir_free(tmp);
    rl_bench_free(b);
}

static void test_resume(void **state)
{
    (void)state;
    char *tmp = rl_test_tmpdir();
    char journal[1024];
    snprintf(journal, sizeof journal, "%s/journal", tmp);
    rl_bench *b = make_bench(false);
    rl_bench_request req;
    request(&req, 3, STATUS_MAX_TIME);
    req.journal_path = journal;
    assert_int_equal(rl_bench_execute(b, &req), RL_OK);
    /* Every run's time, whatever planner: which runs reach the journal first depends on
     * scheduling, so the check below looks for the kept ones among all of them. */
    char first_times[16][64];
    size_t n_first = 0;
    const rl_bench_experiment *e0 = rl_bench_results(b);
    for (size_t i = 0; i < e0->n_planners; i++)
        for (size_t r = 0; r < e0->planners[i].n_runs && n_first < 16; r++)
            snprintf(first_times[n_first++], sizeof first_times[0], "%s",
                     prop(&e0->planners[i].runs[r], "time"));
    rl_bench_free(b);
    /* keep the header, two runs (each a run line and a "t" line) and half a line, as a
     * kill -9 could leave it */
    size_t len;
    char *text = rl_test_read_file(journal, &len);
    char *p = text;
    for (int i = 0; i < 5; i++)
        p = strchr(p, '\n') + 1;
    size_t keep = (size_t)(p - text) + 10;
    rl_test_write_file(journal, text, keep);
    free(text);
    b = make_bench(false);
    assert_int_equal(rl_bench_execute(b, &req), RL_OK);
    const rl_bench_experiment *e = rl_bench_results(b);
    for (size_t i = 0; i < e->n_planners; i++) {
        assert_int_equal(e->planners[i].n_runs, 3);
        for (size_t r = 0; r < 3; r++)
            assert_int_equal(e->planners[i].runs[r].status, RL_RUN_EXACT);
    }
    /* the two journaled runs are taken over, not repeated: their times reappear */
    int found = 0;
    for (size_t i = 0; i < e->n_planners; i++)
        for (size_t r = 0; r < 3; r++)
            for (size_t k = 0; k < n_first; k++)
                found += strcmp(prop(&e->planners[i].runs[r], "time"), first_times[k]) == 0;
    assert_true(found >= 2);
    /* the journal now has the header and exactly six complete runs, each with its t line */
    text = rl_test_read_file(journal, &len);
    int lines = 0, run_lines = 0;
    for (size_t i = 0; i < len; i++) {
        lines += text[i] == '\n';
        run_lines += strncmp(text + i, "run\t", 4) == 0 && (i == 0 || text[i - 1] == '\n');
    }
    assert_int_equal(lines, 13);
    assert_int_equal(run_lines, 6);
    assert_int_equal(text[len - 1], '\n');
    free(text);
    rl_bench_free(b);
    /* a journal of another benchmark is refused */
    b = rl_bench_new("other", NULL, NULL);
    rl_bench_add_planner(b, mk("fast", solve_fast));
    assert_int_equal(rl_bench_execute(b, &req), RL_EINVAL);
    rl_bench_free(b);
    rl_test_tmpdir_free(tmp);
}

/* The progress snapshot: nothing running before; after a benchmark of two planners, two
 * runs each, every run counted, 100 %, a planner named and nothing running. */
static void test_progress(void **state)
{
    (void)state;
    rl_bench *b = make_bench(false);
    rl_bench_progress p;
    rl_bench_get_progress(b, &p);
    assert_false(p.running);
    assert_int_equal(p.active_run, 0);
    assert_true(p.progress_percentage == 0);
    rl_bench_request req;
    request(&req, 2, STATUS_MAX_TIME);
    assert_int_equal(rl_bench_execute(b, &req), RL_OK);
    rl_bench_get_progress(b, &p);
    assert_false(p.running);
    assert_int_equal(p.active_run, 4);
    assert_true(p.progress_percentage == 100);
    assert_true(strcmp(p.active_planner, "fast") == 0 || strcmp(p.active_planner, "progress") == 0);
    rl_bench_free(b);
}

static void test_run_count_zero(void **state)
{
    (void)state;
    rl_bench *b = rl_bench_new("budget", NULL, NULL);
    rl_bench_add_planner(b, mk("progress", solve_progress));
    rl_bench_request req;
    request(&req, 0, 1.0);
    assert_int_equal(rl_bench_execute(b, &req), RL_OK);
    const rl_bench_experiment *e = rl_bench_results(b);
    /* Runs of at least PROGRESS_ITERATIONS ms repeat until 1 s of run time is spent. A new
     * run starts only while budget is left, so every run but the last began with time to
     * spare; how many fit depends on the machine's load, so only these invariants are
     * asserted: at least two runs unless the first alone spent the budget. */
    const rl_bench_planner_data *pd = &e->planners[0];
    assert_true(pd->n_runs >= 1);
    double before_last = 0;
    for (size_t r = 0; r + 1 < pd->n_runs; r++)
        before_last += strtod(prop(&pd->runs[r], "time"), NULL);
    assert_true(before_last < req.max_time);
    if (pd->n_runs == 1)
        assert_true(strtod(prop(&pd->runs[0], "time"), NULL) >= req.max_time);
    else
        assert_true(before_last >= PROGRESS_ITERATIONS / 1000.0);
    rl_bench_free(b);
}

/* Resumes a one-planner "progress" benchmark from a journal holding `run_line` after the
 * header; its rl_bench_execute must return `want`. The caller frees the benchmark. */
static rl_bench *resume_one_run(const char *journal, const char *run_line,
                                const rl_bench_request *req, int want)
{
    char text[1024];
    int n = snprintf(text, sizeof text, "runlab-bench-journal 1\tsamples\tprogress\n%s", run_line);
    rl_test_write_file(journal, text, (size_t)n);
    rl_bench *b = rl_bench_new("samples", NULL, NULL);
    rl_bench_add_planner(b, mk("progress", solve_progress));
    assert_int_equal(rl_bench_execute(b, req), want);
    return b;
}

/* Issue 16, item 8: a journaled run with thousands of progress samples (a line of more
 * than 4096 fields) reads back whole on --resume, and a line whose sample count does not
 * match its fields is refused instead of being shortened. */
static void test_resume_keeps_every_sample(void **state)
{
    (void)state;
    enum { SAMPLES = 5000 };
    char *tmp = rl_test_tmpdir();
    char journal[1024];
    snprintf(journal, sizeof journal, "%s/journal", tmp);
    FILE *f = fopen(journal, "w");
    assert_non_null(f);
    fprintf(f, "runlab-bench-journal 1\tsamples\tprogress\n");
    fprintf(f, "run\t0\t0\t6\t\t1\ttime\tREAL\t5\t%d", SAMPLES);
    for (int i = 0; i < SAMPLES; i++)
        fprintf(f, "\t%d\t%d\t%d", i + 1, 1000 - i % 1000, i);
    fprintf(f, "\n");
    fclose(f);
    rl_bench *b = rl_bench_new("samples", NULL, NULL);
    rl_bench_add_planner(b, mk("progress", solve_progress));
    rl_bench_request req;
    request(&req, 1, STATUS_MAX_TIME);
    req.journal_path = journal;
    assert_int_equal(rl_bench_execute(b, &req), RL_OK);
    const rl_bench_run_data *r = &rl_bench_results(b)->planners[0].runs[0];
    assert_int_equal(r->n_samples, SAMPLES);
    assert_true(r->samples[3 * (SAMPLES - 1)] == SAMPLES);
    assert_true(r->samples[3 * (SAMPLES - 1) + 2] == SAMPLES - 1);
    rl_bench_free(b);
    /* one sample short of what the line announces: refused, with the line number */
    b = resume_one_run(journal, "run\t0\t0\t6\t\t1\ttime\tREAL\t5\t3\t1\t2\t3\t4\t5\t6\n", &req,
                       RL_EPARSE);
    assert_non_null(strstr(rl_error_last(), "journal:2: malformed journal line"));
    rl_bench_free(b);
    /* An INTEGER progress value that is not whole (a planner may print 2.6) is rounded
     * to the nearest in the OMPL log, not truncated: 2.6 -> 3, 4.4 -> 4, -2.6 -> -3. */
    b = resume_one_run(journal,
                       "run\t0\t0\t6\t\t1\ttime\tREAL\t5\t3\t1\t7\t2.6\t2\t7\t4.4\t3\t7\t-2.6\n",
                       &req, RL_OK);
    char log[1024];
    snprintf(log, sizeof log, "%s/rounded.log", tmp);
    assert_int_equal(rl_bench_write_log(rl_bench_results(b), log), RL_OK);
    size_t len;
    char *text = rl_test_read_file(log, &len);
    const char *line = strstr(text, "7,3,1,;7,4,2,;7,-3,3,;"); /* cost, iterations, time */
    if (!line)
        fail_msg("no rounded progress line in the log:\n%s", text);
    free(text);
    rl_bench_free(b);
    rl_test_tmpdir_free(tmp);
}

/* The request's limits at their boundaries: max_mem and max_time must be above 0, grace
 * may be 0; each refusal names the field (nothing runs). */
static void test_request_bounds(void **state)
{
    (void)state;
    rl_bench *b = make_bench(false);
    rl_bench_request req;
    request(&req, 1, SHORT_MAX_TIME);
    req.max_mem = 0;
    assert_int_equal(rl_bench_execute(b, &req), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "max_mem 0: must be > 0 MB"));
    req.max_mem = -1;
    assert_int_equal(rl_bench_execute(b, &req), RL_EINVAL);
    request(&req, 1, SHORT_MAX_TIME);
    req.max_time = 0;
    assert_int_equal(rl_bench_execute(b, &req), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "max_time 0: must be > 0 seconds"));
    request(&req, 1, SHORT_MAX_TIME);
    req.grace = -0.001;
    assert_int_equal(rl_bench_execute(b, &req), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "grace"));
    rl_bench_free(b);
}

static void test_bad_names(void **state)
{
    (void)state;
    assert_null(rl_bench_new("a\nb", NULL, NULL));
    assert_null(rl_bench_new("x", NULL, "<<<|\n|>>>\n"));
    rl_bench *b = rl_bench_new("ok", NULL, NULL);
    assert_int_equal(rl_bench_add_param(b, "a;b", RL_BENCH_REAL, "1"), RL_EINVAL);
    assert_int_equal(rl_bench_add_param(b, "x", RL_BENCH_REAL, "1;2"), RL_EINVAL);
    assert_int_equal(rl_bench_add_param(b, "x", RL_BENCH_REAL, "1"), RL_OK);
    assert_int_equal(rl_bench_add_param(b, "x", RL_BENCH_REAL, "1"), RL_EEXIST);
    assert_int_equal(rl_bench_add_param(b, "plannerid", RL_BENCH_REAL, "1"), RL_EINVAL);
    assert_int_equal(rl_bench_add_planner(b, mk("p|q", solve_fast)), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "p|q"));
    assert_int_equal(rl_bench_add_planner(b, mk("p", solve_fast)), RL_OK);
    assert_int_equal(rl_bench_add_planner(b, mk("p", solve_fast)), RL_EEXIST);
    assert_int_equal(rl_bench_param_count(b), 1);
    assert_non_null(rl_bench_param(b, "x"));
    rl_bench_clear_planners(b);
    assert_int_equal(rl_bench_planner_count(b), 0);
    rl_bench_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_planners), cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_resume),       cmocka_unit_test(test_run_count_zero),
        cmocka_unit_test(test_resume_keeps_every_sample), cmocka_unit_test(test_bad_names),
        cmocka_unit_test(test_request_bounds),     cmocka_unit_test(test_progress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
