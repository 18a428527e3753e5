/* Issue 30 items 7 and 8. `solved` for every status a run can end with: 1 for an exact
 * solution only (as OMPL's Benchmark writes it), 0 for approximate, timeout (returned or
 * killed), crash, abort, out of memory, error and the rest, read from the OMPL log runlab
 * writes, from results.db written directly and from results.db imported from the log. The
 * property-name limit RL_BENCH_MAX_PROPERTY_NAMES at N - 1, N and N + 1 distinct names:
 * nothing dropped up to N, exactly the one name past it dropped at N + 1 (the planner's
 * own, never the harness's status, solved or time; also 12 past it) and the run's reason
 * says so. */
#include "rl_test.h"

#include "engines/bench_internal.h"
#include "runlab/bench.h"
#include "runlab/error.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_MEM_MB = 48 };

/* ---- planners, one per outcome ---------------------------------------------------------- */

/* Planners that return a status: it is stored just after the planner (see planner()). */
static rl_bench_status solve_returns(void *self, void *problem, rl_bench_run *run)
{
    (void)problem, (void)run;
    return *(const rl_bench_status *)((rl_bench_planner *)self + 1);
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

/* Takes three times max_mem at once and holds it: over the limit whatever the load. */
static void *volatile memhog_sink;

static rl_bench_status solve_memhog(void *self, void *problem, rl_bench_run *run)
{
    (void)self, (void)problem, (void)run;
    size_t size = (size_t)(3 * MAX_MEM_MB) << 20;
    char *p = malloc(size);
    if (!p)
        return RL_RUN_ERROR;
    memset(p, 1, size);
    memhog_sink = p;
    for (;;)
        pause();
}

/* _exit before reporting: the harness records ERROR. */
static rl_bench_status solve_exit(void *self, void *problem, rl_bench_run *run)
{
    (void)self, (void)problem, (void)run;
    _exit(3);
}

static rl_bench_status solve_hang(void *self, void *problem, rl_bench_run *run)
{
    (void)self, (void)problem, (void)run;
    for (;;)
        pause();
    return RL_RUN_EXACT;
}

static rl_bench_planner *planner(const char *name,
                                 rl_bench_status (*solve)(void *, void *, rl_bench_run *),
                                 rl_bench_status returns)
{
    rl_bench_planner *p = calloc(1, sizeof *p + sizeof(rl_bench_status));
    assert_non_null(p);
    *(rl_bench_status *)(p + 1) = returns;
    p->name = name;
    p->self = p;
    p->solve = solve;
    p->free = free;
    return p;
}

static void request(rl_bench_request *req, double max_time)
{
    rl_bench_request_init(req);
    req->max_time = max_time;
    req->max_mem = MAX_MEM_MB;
    req->run_count = 1;
    req->grace = 0.1;
    req->jobs = 2;
}

static const char *prop(const rl_bench_run_data *r, const char *name)
{
    for (size_t i = 0; i < r->n_props; i++)
        if (strcmp(r->props[i].name, name) == 0)
            return r->props[i].value;
    return NULL;
}

/* ---- item 7: solved per status ------------------------------------------------------------ */

/* The value of property `name` of the one run of each planner in an OMPL log, as written:
   out[planner index]. */
static void log_values(const char *log, const char *name, size_t n_planners, char out[][32])
{
    size_t len;
    char *text = rl_test_read_file(log, &len);
    char *save = NULL, *line = strtok_r(text, "\n", &save);
    size_t planner = 0;
    long col = -1, nprops = -1, k = 0;
    char want[160];
    snprintf(want, sizeof want, "%s BOOLEAN", name);
    for (; line && planner < n_planners; line = strtok_r(NULL, "\n", &save)) {
        if (nprops < 0) {
            if (strstr(line, " properties for each run") && !strstr(line, "progress")) {
                nprops = strtol(line, NULL, 10);
                k = 0;
                col = -1;
            }
            continue;
        }
        if (k < nprops) { /* a property declaration */
            if (strcmp(line, want) == 0)
                col = k;
            k++;
            continue;
        }
        if (strstr(line, " runs")) /* "1 runs" */
            continue;
        /* The run line: values separated by "; ". */
        if (col < 0)
            fail_msg("log: planner %zu declares no '%s'", planner, want);
        char *v = line;
        for (long c = 0; c < col && v; c++) {
            v = strchr(v, ';');
            v = v ? v + 1 : NULL;
        }
        if (!v)
            fail_msg("log: planner %zu's run line has no column %ld: %s", planner, col, line);
        while (*v == ' ')
            v++;
        size_t n = strcspn(v, ";");
        snprintf(out[planner], 32, "%.*s", (int)n, v);
        planner++;
        nprops = -1;
    }
    free(text);
    if (planner != n_planners)
        fail_msg("log: read %zu run lines, want %zu", planner, n_planners);
}

/* solved of the run whose status is `status` in a results.db; -1 when NULL, -2 when no
   such run. */
static int db_solved(const char *db_path, rl_bench_status status)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT solved FROM runs WHERE status = ?", -1, &st, NULL) !=
        SQLITE_OK)
        fail_msg("%s: %s", db_path, sqlite3_errmsg(db));
    sqlite3_bind_int(st, 1, (int)status);
    int got = -2;
    if (sqlite3_step(st) == SQLITE_ROW)
        got = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return got;
}

static void check_solved(rl_bench *b, const rl_bench_status *want, size_t n, const char *tmp,
                         const char *tag)
{
    const rl_bench_experiment *e = rl_bench_results(b);
    assert_int_equal(e->n_planners, n);
    for (size_t p = 0; p < n; p++) {
        const rl_bench_run_data *rd = &e->planners[p].runs[0];
        if (e->planners[p].n_runs != 1 || rd->status != want[p])
            fail_msg("%s: planner %s: read status %s, want %s (%s)", tag, e->planners[p].name,
                     rl_bench_status_name(rd->status), rl_bench_status_name(want[p]),
                     rd->reason ? rd->reason : "");
        const char *solved = prop(rd, "solved");
        const char *expect = want[p] == RL_RUN_EXACT ? "1" : "0";
        if (!solved || strcmp(solved, expect) != 0)
            fail_msg("%s: %s run: read solved %s, want %s", tag, rl_bench_status_name(want[p]),
                     solved ? solved : "(none)", expect);
    }
    char log[1024], direct[1024], via[1024];
    snprintf(log, sizeof log, "%s/%s.log", tmp, tag);
    snprintf(direct, sizeof direct, "%s/%s-direct.db", tmp, tag);
    snprintf(via, sizeof via, "%s/%s-via.db", tmp, tag);
    assert_int_equal(rl_bench_write_log(e, log), RL_OK);
    assert_int_equal(rl_bench_write_db(e, direct), RL_OK);
    const char *logs[] = {log};
    if (rl_bench_import_logs(logs, 1, via) < 0)
        fail_msg("import: %s", rl_error_last());
    char (*in_log)[32] = calloc(n, 32);
    log_values(log, "solved", n, in_log);
    for (size_t p = 0; p < n; p++) {
        int expect = want[p] == RL_RUN_EXACT;
        int d = db_solved(direct, want[p]), v = db_solved(via, want[p]);
        if (strcmp(in_log[p], expect ? "1" : "0") != 0 || d != expect || v != expect)
            fail_msg("%s: %s run: solved read '%s' in the log, %d in results.db, %d in the "
                     "database imported from the log; want %d",
                     tag, rl_bench_status_name(want[p]), in_log[p], d, v, expect);
    }
    free(in_log);
}

static void test_solved_for_every_status(void **state)
{
    (void)state;
    char *tmp = rl_test_tmpdir();
    /* Statuses a planner returns, and those the harness sees (a signal, max_mem, an exit
       before reporting). max_time is generous: none of these waits for it. */
    static const rl_bench_status returned[] = {
        RL_RUN_UNKNOWN,     RL_RUN_INVALID_START, RL_RUN_INVALID_GOAL, RL_RUN_UNRECOGNIZED_GOAL,
        RL_RUN_TIMEOUT,     RL_RUN_APPROXIMATE,   RL_RUN_EXACT,        RL_RUN_INFEASIBLE,
        RL_RUN_ERROR};
    enum { NRET = sizeof returned / sizeof returned[0] };
    rl_bench_status want[NRET + 4];
    rl_bench *b = rl_bench_new("solved per status", NULL, NULL);
    assert_non_null(b);
    char names[NRET][32];
    for (size_t i = 0; i < NRET; i++) {
        snprintf(names[i], sizeof names[i], "returns%d", (int)returned[i]);
        assert_int_equal(rl_bench_add_planner(b, planner(names[i], solve_returns, returned[i])),
                         RL_OK);
        want[i] = returned[i];
    }
    assert_int_equal(rl_bench_add_planner(b, planner("crash", solve_crash, 0)), RL_OK);
    assert_int_equal(rl_bench_add_planner(b, planner("abort", solve_abort, 0)), RL_OK);
    assert_int_equal(rl_bench_add_planner(b, planner("memhog", solve_memhog, 0)), RL_OK);
    assert_int_equal(rl_bench_add_planner(b, planner("exit", solve_exit, 0)), RL_OK);
    want[NRET] = RL_RUN_CRASH;
    want[NRET + 1] = RL_RUN_ABORT;
    want[NRET + 2] = RL_RUN_OUT_OF_MEMORY;
    want[NRET + 3] = RL_RUN_ERROR;
    rl_bench_request req;
    request(&req, 20.0);
    assert_int_equal(rl_bench_execute(b, &req), RL_OK);
    /* Two ERROR runs (returned, exited): db_solved reads the first; both are 0. */
    check_solved(b, want, NRET + 4, tmp, "statuses");
    rl_bench_free(b);
    /* A planner that never looks at the clock: killed after max_time + grace, TIMEOUT. */
    b = rl_bench_new("solved when killed", NULL, NULL);
    assert_int_equal(rl_bench_add_planner(b, planner("hang", solve_hang, 0)), RL_OK);
    request(&req, 0.3);
    assert_int_equal(rl_bench_execute(b, &req), RL_OK);
    const rl_bench_status killed[] = {RL_RUN_TIMEOUT};
    check_solved(b, killed, 1, tmp, "killed");
    rl_bench_free(b);
    rl_test_tmpdir_free(tmp);
}

/* ---- item 8: the property-name limit ------------------------------------------------------ */

static size_t custom_props; /* names the planner below sets, p0000, p0001, ... */

static rl_bench_status solve_many_props(void *self, void *problem, rl_bench_run *run)
{
    (void)self, (void)problem;
    for (size_t i = 0; i < custom_props; i++) {
        char name[32];
        snprintf(name, sizeof name, "p%04zu", i);
        if (rl_bench_run_set_int(run, name, (int64_t)i) != RL_OK)
            return RL_RUN_ERROR;
    }
    return RL_RUN_EXACT;
}

/* One run setting `n` names of its own; the run's data (the bench stays alive). */
static rl_bench *run_with(size_t n)
{
    custom_props = n;
    rl_bench *b = rl_bench_new("property names", NULL, NULL);
    assert_non_null(b);
    assert_int_equal(rl_bench_add_planner(b, planner("many", solve_many_props, 0)), RL_OK);
    rl_bench_request req;
    request(&req, 20.0);
    req.jobs = 1;
    assert_int_equal(rl_bench_execute(b, &req), RL_OK);
    return b;
}

static void test_property_name_limit(void **state)
{
    (void)state;
    /* The names every run has (time, memory, status, solved, ...), counted, not assumed. */
    rl_bench *b = run_with(0);
    size_t base = rl_bench_results(b)->planners[0].runs[0].n_props;
    rl_bench_free(b);
    assert_true(base > 5 && base < RL_BENCH_MAX_PROPERTY_NAMES);
    const size_t limit = RL_BENCH_MAX_PROPERTY_NAMES;
    /* N - 1, N, N + 1, and more past it than the harness has names of its own. */
    const size_t totals[] = {limit - 1, limit, limit + 1, limit + 12};
    for (size_t t = 0; t < sizeof totals / sizeof totals[0]; t++) {
        size_t total = totals[t];
        b = run_with(total - base);
        const rl_bench_run_data *rd = &rl_bench_results(b)->planners[0].runs[0];
        size_t kept = total > limit ? limit : total, dropped = total - kept;
        if (rd->status != RL_RUN_EXACT || rd->n_props != kept)
            fail_msg("%zu names (limit %zu): read status %s, %zu properties kept; want EXACT, %zu",
                     total, limit, rl_bench_status_name(rd->status), rd->n_props, kept);
        const char *why = rd->reason ? rd->reason : "";
        char want[64];
        snprintf(want, sizeof want, "%zu run properties dropped", dropped);
        if (dropped ? !strstr(why, want) : strstr(why, "dropped") != NULL)
            fail_msg("%zu names (limit %zu): reason reads '%s'; want %s", total, limit, why,
                     dropped ? want : "nothing dropped");
        /* The harness's own properties are never the ones dropped. */
        static const char *const own[] = {"time", "memory", "status", "solved", "cpu time",
                                           "wall time", "exit code", "exit signal"};
        for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
            if (!prop(rd, own[i]))
                fail_msg("%zu names (limit %zu): the run lost its '%s'", total, limit, own[i]);
        /* Which of the planner's names went: the last one set, only past the limit. */
        char last[32];
        snprintf(last, sizeof last, "p%04zu", total - base - 1);
        if ((prop(rd, last) != NULL) != !dropped)
            fail_msg("%zu names (limit %zu): the last name %s read %s", total, limit, last,
                     prop(rd, last) ? "kept" : "dropped");
        rl_bench_free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_solved_for_every_status),
        cmocka_unit_test(test_property_name_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
