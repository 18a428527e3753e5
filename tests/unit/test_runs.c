/* Tests of runlab/runs.h: a tree with a good run and one broken run per failure the loader
 * must survive (truncated, NUL bytes, wrong column counts, non-numeric cells, megabyte
 * lines, empty/missing/unreadable files, bad manifests and summaries, symlink loops);
 * each comes back classified with its reason. Also run under ASan. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/perflog.h"
#include "runlab/runs.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A string literal and its length without the terminating NUL (literals may hold NULs). */
#define LIT(s) s, sizeof(s) - 1

/* Writes a complete run with perflog: 20 cycles, 2 layers; returns its directory. */
static char *make_run(const char *root, const char *planner, bool log)
{
    rl_perflog_config cfg;
    rl_perflog_config_init(&cfg);
    cfg.root = root;
    cfg.dataset = "grid";
    cfg.scene = "s01";
    cfg.planner = planner;
    cfg.cost_budget = 50;
    cfg.log_performance = log;
    rl_perflog *pl;
    assert_int_equal(rl_perflog_new(&pl, &cfg), RL_OK);
    int t, c, g, bt;
    assert_int_equal(rl_perflog_add_layer(pl, "planning", "nbv"), RL_OK);
    assert_int_equal(rl_perflog_add_layer(pl, "backtracking", "bt"), RL_OK);
    assert_int_equal(rl_perflog_declare(pl, NULL, "TotalCost", RL_COL_TOTAL, "s", NULL, &c), RL_OK);
    assert_int_equal(
        rl_perflog_declare(pl, "planning", "PlanPathTime", RL_COL_TIMER, "s", NULL, &t), RL_OK);
    assert_int_equal(
        rl_perflog_declare(pl, "planning", "RealAccumulatedGain", RL_COL_GAUGE, "m2", NULL, &g),
        RL_OK);
    assert_int_equal(
        rl_perflog_declare(pl, "backtracking", "TimesSelected", RL_COL_COUNTER, "count", NULL, &bt),
        RL_OK);
    assert_int_equal(rl_perflog_start(pl), RL_OK);
    for (int i = 0; i < 20; i++) {
        rl_perflog_timer_start(pl, t);
        rl_perflog_timer_stop(pl, t);
        rl_perflog_add(pl, c, 0.1);
        rl_perflog_set(pl, g, i * 1e-3);
        rl_perflog_count(pl, bt, i % 2);
        assert_int_equal(rl_perflog_cycle_end(pl), RL_OK);
    }
    char *dir = strdup(rl_perflog_run_dir(pl));
    assert_int_equal(rl_perflog_end(pl, RL_END_BUDGET_EXHAUSTED), RL_OK);
    rl_perflog_free(pl);
    return dir;
}

static void path_of(char *out, const char *dir, const char *name)
{
    if (snprintf(out, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
        fail_msg("path too long");
}

static void append(const char *dir, const char *name, const void *data, size_t len)
{
    char p[PATH_MAX];
    path_of(p, dir, name);
    FILE *f = fopen(p, "ab");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void replace(const char *dir, const char *name, const void *data, size_t len)
{
    char p[PATH_MAX];
    path_of(p, dir, name);
    rl_test_write_file(p, data, len);
}

static void remove_file(const char *dir, const char *name)
{
    char p[PATH_MAX];
    path_of(p, dir, name);
    assert_int_equal(unlink(p), 0);
}

/* Replaces the first occurrence of `from` in a file by `to`. */
static void edit(const char *dir, const char *name, const char *from, const char *to)
{
    char p[PATH_MAX];
    path_of(p, dir, name);
    size_t len;
    char *s = rl_test_read_file(p, &len);
    char *at = strstr(s, from);
    assert_non_null(at);
    size_t a = (size_t)(at - s), fl = strlen(from), tl = strlen(to);
    char *n = malloc(len - fl + tl + 1);
    memcpy(n, s, a);
    memcpy(n + a, to, tl);
    memcpy(n + a + tl, at + fl, len - a - fl);
    rl_test_write_file(p, n, len - fl + tl);
    free(n);
    free(s);
}

struct expect {
    const char *planner;
    rl_run_status status;
    rl_run_reason reason; /* RL_REASON_COUNT: none */
    size_t rows;          /* SIZE_MAX: don't check */
};

static const struct expect cases[] = {
    {"good", RL_RUN_PARSED, RL_REASON_COUNT, 20},
    {"truncated", RL_RUN_DEGRADED, RL_REASON_TRUNCATED_ROW, 20},
    {"nul", RL_RUN_DEGRADED, RL_REASON_NUL_BYTES, 20},
    {"colcount", RL_RUN_DEGRADED, RL_REASON_BAD_ROWS, 20},
    {"nonnumeric", RL_RUN_DEGRADED, RL_REASON_NON_NUMERIC, 21},
    {"megaline", RL_RUN_DEGRADED, RL_REASON_LONG_LINES, 20},
    {"emptycsv", RL_RUN_SKIPPED, RL_REASON_CSV_EMPTY, 0},
    {"nocsv", RL_RUN_SKIPPED, RL_REASON_NO_CSV, 0},
    {"dircsv", RL_RUN_SKIPPED, RL_REASON_CSV_UNREADABLE, 0},
    {"fifocsv", RL_RUN_SKIPPED, RL_REASON_CSV_UNREADABLE, 0},
    {"headeronly", RL_RUN_SKIPPED, RL_REASON_NO_ROWS, 0},
    {"nomanifest", RL_RUN_DEGRADED, RL_REASON_NO_MANIFEST, 20},
    {"badmanifest", RL_RUN_DEGRADED, RL_REASON_BAD_MANIFEST, 20},
    {"cutmanifest", RL_RUN_DEGRADED, RL_REASON_BAD_MANIFEST, 20},
    {"fingerprint", RL_RUN_DEGRADED, RL_REASON_FINGERPRINT_MISMATCH, 20},
    {"columns", RL_RUN_DEGRADED, RL_REASON_COLUMNS_MISMATCH, 20},
    {"nosummary", RL_RUN_DEGRADED, RL_REASON_NO_SUMMARY, 20},
    {"badsummary", RL_RUN_DEGRADED, RL_REASON_BAD_SUMMARY, 20},
    {"nullsummary", RL_RUN_DEGRADED, RL_REASON_BAD_SUMMARY, 20},
    {"utf8summary", RL_RUN_DEGRADED, RL_REASON_BAD_SUMMARY, 20},
    {"nesting", RL_RUN_DEGRADED, RL_REASON_TIMER_NESTING, 20},
    {"logoff", RL_RUN_SKIPPED, RL_REASON_NO_CSV, 0},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

static void break_run(const char *name, const char *dir)
{
    const char *csv = "performance_log.csv";
    if (strcmp(name, "truncated") == 0) {
        append(dir, csv, LIT("20,0.5,2.1"));
    } else if (strcmp(name, "nul") == 0) {
        append(dir, csv, LIT("20,0.5,2.1,0,0.1\0,0\n"));
    } else if (strcmp(name, "colcount") == 0) {
        append(dir, csv, LIT("1,2\n1,2,3,4,5,6,7,8,9,10\n"));
    } else if (strcmp(name, "nonnumeric") == 0) {
        append(dir, csv, LIT("20,abc,nan,nan,nan,2.1,0,0.1,1\n"));
    } else if (strcmp(name, "megaline") == 0) {
        size_t n = 2u << 20;
        char *big = malloc(n + 1);
        memset(big, '7', n);
        big[n] = '\n';
        append(dir, csv, big, n + 1);
        free(big);
    } else if (strcmp(name, "emptycsv") == 0) {
        replace(dir, csv, LIT(""));
    } else if (strcmp(name, "nocsv") == 0) {
        remove_file(dir, csv);
    } else if (strcmp(name, "dircsv") == 0) {
        char p[PATH_MAX];
        remove_file(dir, csv);
        path_of(p, dir, csv);
        assert_int_equal(mkdir(p, 0755), 0);
    } else if (strcmp(name, "fifocsv") == 0) {
        char p[PATH_MAX];
        remove_file(dir, csv);
        path_of(p, dir, csv);
        assert_int_equal(mkfifo(p, 0644), 0);
    } else if (strcmp(name, "headeronly") == 0) {
        replace(dir, csv, LIT("CycleIndex,ElapsedWallTimeSec\n"));
    } else if (strcmp(name, "nomanifest") == 0) {
        remove_file(dir, "run_manifest.yaml");
    } else if (strcmp(name, "badmanifest") == 0) {
        replace(dir, "run_manifest.yaml", LIT("{[: not yaml\n\t- ]"));
    } else if (strcmp(name, "cutmanifest") == 0) {
        char p[PATH_MAX];
        path_of(p, dir, "run_manifest.yaml");
        struct stat st;
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(truncate(p, st.st_size - 40), 0);
    } else if (strcmp(name, "fingerprint") == 0) {
        edit(dir, "run_manifest.yaml",
             "schema_fingerprint: \"sha256:", "schema_fingerprint: \"sha256:0");
    } else if (strcmp(name, "columns") == 0) {
        edit(dir, csv, "TotalCost", "TotalKost");
    } else if (strcmp(name, "nosummary") == 0) {
        remove_file(dir, "episode_summary.yaml");
    } else if (strcmp(name, "badsummary") == 0) {
        replace(dir, "episode_summary.yaml", LIT("cycles: many\n"));
    } else if (strcmp(name, "utf8summary") == 0) {
        /* A YAML directive with invalid UTF-8 once made the parser loop forever. */
        replace(dir, "episode_summary.yaml", LIT("%nd_reason: stopp\x9b\x99\ncycles: \xd1\n"));
    } else if (strcmp(name, "nesting") == 0) {
        edit(dir, "episode_summary.yaml", "timer_nesting_violations: 0\n",
             "timer_nesting_violations: 3\nfirst_nesting_violation: \"a.B ran outside its "
             "parent a.A\"\n");
    } else if (strcmp(name, "nullsummary") == 0) {
        replace(dir, "episode_summary.yaml", LIT("end_reason: stopped\0\0\n"));
    }
}

static void test_tree_of_good_and_broken_runs(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    char *dirs[NCASES];
    for (int i = 0; i < NCASES; i++) {
        dirs[i] = make_run(root, cases[i].planner, strcmp(cases[i].planner, "logoff") != 0);
        break_run(cases[i].planner, dirs[i]);
    }
    /* A symlink loop, a dangling link and a non-run directory in the tree. */
    char p[PATH_MAX];
    path_of(p, root, "grid/s01/loop");
    assert_int_equal(symlink("..", p), 0);
    path_of(p, root, "dangling");
    assert_int_equal(symlink("/nonexistent/runlab", p), 0);
    path_of(p, root, "figures");
    assert_int_equal(mkdir(p, 0755), 0);

    const char *roots[] = {root, "/nonexistent/runlab-root"};
    rl_run_set *set;
    assert_int_equal(rl_runs_load(roots, 2, NULL, &set), RL_OK);
    assert_int_equal(set->count, NCASES);
    assert_true(set->num_walk_errors >= 2); /* the loop and the missing root */
    for (int i = 0; i < NCASES; i++) {
        const struct expect *e = &cases[i];
        const rl_run *run = NULL;
        for (size_t k = 0; k < set->count; k++)
            if (strcmp(set->runs[k]->path, dirs[i]) == 0)
                run = set->runs[k];
        if (!run)
            fail_msg("%s: run %s not found", e->planner, dirs[i]);
        if (run->status != e->status ||
            (e->reason != RL_REASON_COUNT && !rl_run_has_reason(run, e->reason)) ||
            (e->reason == RL_REASON_COUNT && run->reasons != 0) ||
            (e->rows != SIZE_MAX && run->num_rows != e->rows)) {
            for (size_t m = 0; m < run->num_messages; m++)
                print_message("  %s\n", run->messages[m]);
            fail_msg("%s: status %s rows %zu, expected %s with %s, %zu rows", e->planner,
                     rl_run_status_name(run->status), run->num_rows, rl_run_status_name(e->status),
                     rl_run_reason_name(e->reason), e->rows);
        }
        /* Every reason comes with a message naming it. */
        if (e->reason != RL_REASON_COUNT) {
            bool named = false;
            for (size_t m = 0; m < run->num_messages; m++)
                named |= strncmp(run->messages[m], rl_run_reason_name(e->reason),
                                 strlen(rl_run_reason_name(e->reason))) == 0;
            assert_true(named);
        }
    }
    rl_runs_report rep;
    rl_runs_aggregate(set, &rep);
    assert_int_equal(rep.total, NCASES);
    assert_int_equal(rep.by_status[RL_RUN_PARSED], 1);
    assert_int_equal(rep.by_status[RL_RUN_SKIPPED], 6);
    assert_int_equal(rep.by_status[RL_RUN_DEGRADED], NCASES - 7);
    assert_int_equal(rep.by_reason[RL_REASON_CSV_UNREADABLE], 2);
    FILE *devnull = fopen("/dev/null", "w");
    assert_int_equal(rl_runs_report_print(&rep, devnull), RL_OK);
    fclose(devnull);
    rl_run_set_free(set);
    for (int i = 0; i < NCASES; i++)
        free(dirs[i]);
    rl_test_tmpdir_free(root);
}

static void test_values_and_columns(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    char *dir = make_run(root, "values", true);
    append(dir, "performance_log.csv", LIT("20,1e-3,nan,nan,nan,\"2.5\",-0,0.25,nan\n"));
    rl_run *run;
    assert_int_equal(rl_run_load(dir, NULL, &run), RL_OK);
    assert_int_equal(run->status, RL_RUN_PARSED);
    assert_int_equal(run->num_rows, 21);
    /* The standard totals the planner did not declare come after ElapsedWallTimeSec; its
     * own TotalCost stays where it declared it. */
    assert_int_equal(run->num_columns, 9);
    assert_string_equal(run->column_names[2], "TotalPathLength");
    assert_string_equal(run->column_names[3], "TotalPathDuration");
    assert_string_equal(run->column_names[4], "TotalVisitedNodes");
    assert_string_equal(run->column_names[5], "TotalCost");
    const double *cost = rl_run_column(run, "TotalCost");
    const double *gain = rl_run_column(run, "planning.RealAccumulatedGain");
    const double *idx = rl_run_column(run, "CycleIndex");
    assert_non_null(cost);
    assert_null(rl_run_column(run, "Nope"));
    double sum = 0;
    for (int i = 0; i < 20; i++) {
        sum += 0.1;
        assert_true(cost[i] == sum); /* shortest round-trip digits read back exactly */
        assert_true(gain[i] == i * 1e-3);
        assert_true(idx[i] == i);
        /* Never given through rl_perflog_set_totals: nan, not a made-up 0. */
        assert_true(isnan(rl_run_column(run, "TotalPathLength")[i]));
    }
    assert_true(cost[20] == 2.5);
    assert_true(isnan(gain[20]));
    assert_true(rl_run_column(run, "backtracking.TimesSelected")[20] == 0);
    assert_non_null(run->manifest);
    assert_non_null(run->summary);
    rl_run_free(run);

    /* A run directory given directly as a root, with a trailing slash. */
    char withslash[PATH_MAX];
    snprintf(withslash, sizeof withslash, "%s/", dir);
    const char *roots[] = {withslash};
    rl_run_set *set;
    assert_int_equal(rl_runs_load(roots, 1, NULL, &set), RL_OK);
    assert_int_equal(set->count, 1);
    rl_run_set_free(set);
    free(dir);
    rl_test_tmpdir_free(root);
}

static void test_number_forms_and_limits(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    char dir[PATH_MAX];
    path_of(dir, root, "r");
    assert_int_equal(mkdir(dir, 0755), 0);
    const char *csv = "\xEF\xBB\xBF"
                      "A,B,C\r\n"
                      "1.7976931348623157e308,4.9e-324,12345678901234567890\r\n"
                      "+5, 7 ,0x10\r\n"
                      "1e,.,-\r\n"
                      "\r\n"
                      "0.1234567890123456789,-inf,1E22\r\n";
    replace(dir, "performance_log.csv", csv, strlen(csv));
    rl_run *run;
    assert_int_equal(rl_run_load(dir, NULL, &run), RL_OK);
    assert_int_equal(run->status, RL_RUN_DEGRADED); /* no manifest, no summary, "1e" ... */
    assert_true(rl_run_has_reason(run, RL_REASON_NON_NUMERIC));
    assert_int_equal(run->num_rows, 4);
    assert_string_equal(run->column_names[0], "A");
    assert_true(run->columns[0][0] == 1.7976931348623157e308);
    assert_true(run->columns[1][0] == 4.9e-324);
    assert_true(run->columns[2][0] == 12345678901234567890.0);
    assert_true(run->columns[0][1] == 5 && run->columns[1][1] == 7 && run->columns[2][1] == 16);
    assert_true(isnan(run->columns[0][2]) && isnan(run->columns[1][2]) &&
                isnan(run->columns[2][2]));
    assert_true(run->columns[0][3] == 0.1234567890123456789);
    assert_true(isinf(run->columns[1][3]) && run->columns[2][3] == 1e22);
    rl_run_free(run);

    /* Limits: a file over max_csv_bytes is skipped, not read. */
    rl_run_limits lim = {.max_csv_bytes = 16};
    assert_int_equal(rl_run_load(dir, &lim, &run), RL_OK);
    assert_int_equal(run->status, RL_RUN_SKIPPED);
    assert_true(rl_run_has_reason(run, RL_REASON_CSV_TOO_LARGE));
    rl_run_free(run);
    lim = (rl_run_limits){.max_columns = 2};
    assert_int_equal(rl_run_load(dir, &lim, &run), RL_OK);
    assert_int_equal(run->status, RL_RUN_SKIPPED);
    rl_run_free(run);

    assert_int_equal(rl_run_load(NULL, NULL, &run), RL_EINVAL);
    rl_test_tmpdir_free(root);
}

/* Every limit that changes a run's status, at, just below and just above its boundary:
 * a limit equal to the measured size is within it. Sizes are measured here from the bytes
 * written, not taken from runlab. */
static void test_limits_at_their_boundaries(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    char dir[PATH_MAX];
    path_of(dir, root, "r");
    assert_int_equal(mkdir(dir, 0755), 0);
    /* Plain numbers take the loader's fast path, a quoted cell the general one: each path
     * checks the line length itself. */
    static const char *const forms[2][2] = {{"A,B,C\n1,2,3\n4,5,6789\n", "4,5,6789"},
                                            {"A,B,C\n1,2,3\n4,5,\"6789\"\n", "4,5,\"6789\""}};
    for (int form = 0; form < 2; form++) {
        const char *csv = forms[form][0];
        size_t size = strlen(csv), longest = strlen(forms[form][1]);
        replace(dir, "performance_log.csv", csv, size);
        struct {
            const char *what;
            size_t limit;
            rl_run_limits lim;
            int over_reason; /* the reason when the limit is one below */
        } limit_cases[] = {
            {"max_csv_bytes", size, {.max_csv_bytes = 0}, RL_REASON_CSV_TOO_LARGE},
            {"max_columns", 3, {.max_columns = 0}, RL_REASON_CSV_EMPTY},
            {"max_line_bytes", longest, {.max_line_bytes = 0}, RL_REASON_LONG_LINES},
        };
            for (size_t i = 0; i < sizeof limit_cases / sizeof limit_cases[0]; i++) {
            for (int delta = -1; delta <= 1; delta++) {
                rl_run_limits lim = {0};
                size_t v = limit_cases[i].limit + (size_t)(ptrdiff_t)delta;
                if (i == 0)
                    lim.max_csv_bytes = v;
                else if (i == 1)
                    lim.max_columns = v;
                else
                    lim.max_line_bytes = v;
                rl_run *run;
                assert_int_equal(rl_run_load(dir, &lim, &run), RL_OK);
                int over = rl_run_has_reason(run, limit_cases[i].over_reason);
                print_message("%s = %zu (measured %zu): %s\n", limit_cases[i].what, v,
                              limit_cases[i].limit, over ? "over" : "within");
                if (delta < 0) {
                    assert_true(over);
                    assert_int_not_equal(run->status, RL_RUN_PARSED);
                } else {
                    assert_false(over);
                    assert_int_equal(run->num_rows, 2);
                    assert_true(rl_run_column(run, "C")[1] == 6789);
                }
                rl_run_free(run);
            }
        }
    }
    rl_test_tmpdir_free(root);
}

/* Every double written in shortest form or with 17 digits (perflog's gauges and totals)
 * reads back bit-identical to strtod, through the fast paths too. */
static void test_numbers_read_back_exactly(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    char path[PATH_MAX];
    path_of(path, root, "performance_log.csv");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("A,B,C\n", f);
    enum { N = 60000 };
    uint64_t s = 99;
    for (int i = 0; i < N; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double a = (double)(s >> 11) / 9007199254740992.0;      /* [0, 1), 17 digits */
        double b = (double)(s >> 20) * 1e-6 * (i % 2 ? 1 : -1); /* up to ~1.7e7 */
        double c = (double)(s >> 11) * 1e-22;
        fprintf(f, "%.17g,%.16g,%.17g\n", a, b, c);
    }
    fclose(f);
    rl_run *run;
    assert_int_equal(rl_run_load(root, NULL, &run), RL_OK);
    assert_int_equal(run->num_rows, N);
    /* Re-read the text with strtod and compare bits. */
    size_t len;
    char *text = rl_test_read_file(path, &len);
    char *p = strchr(text, '\n') + 1;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < 3; j++) {
            char *end;
            double want = strtod(p, &end);
            if (memcmp(&want, &run->columns[j][i], sizeof want) != 0)
                fail_msg("row %d column %d: %.17g read as %.17g", i, j, want, run->columns[j][i]);
            p = end + 1;
        }
    free(text);
    rl_run_free(run);
    rl_test_tmpdir_free(root);
}

static void test_unreadable_file(void **state)
{
    (void)state;
    if (geteuid() == 0) {
        print_message("SKIP: permissions do not apply to root (covered by dircsv/fifocsv)\n");
        skip();
    }
    char *root = rl_test_tmpdir();
    char *dir = make_run(root, "perm", true);
    char p[PATH_MAX];
    path_of(p, dir, "performance_log.csv");
    assert_int_equal(chmod(p, 0), 0);
    rl_run *run;
    assert_int_equal(rl_run_load(dir, NULL, &run), RL_OK);
    assert_int_equal(run->status, RL_RUN_SKIPPED);
    assert_true(rl_run_has_reason(run, RL_REASON_CSV_UNREADABLE));
    rl_run_free(run);
    free(dir);
    rl_test_tmpdir_free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_of_good_and_broken_runs),
        cmocka_unit_test(test_values_and_columns),
        cmocka_unit_test(test_number_forms_and_limits),
        cmocka_unit_test(test_limits_at_their_boundaries),
        cmocka_unit_test(test_numbers_read_back_exactly),
        cmocka_unit_test(test_unreadable_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
