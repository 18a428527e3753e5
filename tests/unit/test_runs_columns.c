/* Issue 30 item 6: the run loader against a CSV whose columns are not the manifest's. More
 * columns than run_manifest.yaml declares (a column the planner logged but never declared),
 * or fewer, make the run DEGRADED with the columns_mismatch reason and a message giving
 * both counts; the rows and the declared columns are still read. The same run with its CSV
 * untouched is PARSED. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/perflog.h"
#include "runlab/runs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A complete run with perflog: 20 cycles, one column of each kind; its directory. */
static char *make_run(const char *root, const char *planner)
{
    rl_perflog_config cfg;
    rl_perflog_config_init(&cfg);
    cfg.root = root;
    cfg.dataset = "grid";
    cfg.scene = "s01";
    cfg.planner = planner;
    cfg.cost_budget = 50;
    cfg.log_performance = true;
    rl_perflog *pl;
    assert_int_equal(rl_perflog_new(&pl, &cfg), RL_OK);
    int t, c, g;
    assert_int_equal(rl_perflog_add_layer(pl, "planning", "nbv"), RL_OK);
    assert_int_equal(rl_perflog_declare(pl, NULL, "TotalCost", RL_COL_TOTAL, "s", NULL, &c), RL_OK);
    assert_int_equal(
        rl_perflog_declare(pl, "planning", "PlanPathTime", RL_COL_TIMER, "s", NULL, &t), RL_OK);
    assert_int_equal(
        rl_perflog_declare(pl, "planning", "RealAccumulatedGain", RL_COL_GAUGE, "m2", NULL, &g),
        RL_OK);
    assert_int_equal(rl_perflog_start(pl), RL_OK);
    for (int i = 0; i < 20; i++) {
        rl_perflog_timer_start(pl, t);
        rl_perflog_timer_stop(pl, t);
        rl_perflog_add(pl, c, 0.1);
        rl_perflog_set(pl, g, i * 1e-3);
        assert_int_equal(rl_perflog_cycle_end(pl), RL_OK);
    }
    char *dir = strdup(rl_perflog_run_dir(pl));
    assert_int_equal(rl_perflog_end(pl, RL_END_BUDGET_EXHAUSTED), RL_OK);
    rl_perflog_free(pl);
    return dir;
}

/* Rewrites performance_log.csv line by line: `extra` > 0 appends that many columns
 * ("Extra1", ... in the header, "7" in the rows); < 0 drops the last column. */
static void reshape_csv(const char *dir, int extra)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/performance_log.csv", dir);
    size_t len;
    char *s = rl_test_read_file(p, &len);
    size_t cap = 2 * len + 1024, n = 0;
    char *out = malloc(cap);
    bool header = true;
    for (char *line = s; line < s + len;) {
        char *nl = memchr(line, '\n', (size_t)(s + len - line));
        size_t full = nl ? (size_t)(nl - line) : (size_t)(s + len - line), l = full;
        if (extra < 0) {
            char *comma = line + l;
            while (comma > line && *comma != ',')
                comma--;
            l = (size_t)(comma - line);
        }
        memcpy(out + n, line, l), n += l;
        for (int k = 1; k <= extra; k++)
            n += (size_t)(header ? sprintf(out + n, ",Extra%d", k) : sprintf(out + n, ",7"));
        out[n++] = '\n';
        header = false;
        line += full + 1;
    }
    rl_test_write_file(p, out, n);
    free(out);
    free(s);
}

static bool has_message(const rl_run *run, const char *text)
{
    for (size_t i = 0; i < run->num_messages; i++)
        if (strstr(run->messages[i], text))
            return true;
    return false;
}

static void expect_mismatch(const char *root, const char *planner, int extra)
{
    char *dir = make_run(root, planner);
    rl_run *run = NULL;
    assert_int_equal(rl_run_load(dir, NULL, &run), RL_OK);
    if (run->status != RL_RUN_PARSED)
        fail_msg("%s before the edit: read status %s", planner, rl_run_status_name(run->status));
    size_t declared = run->num_columns;
    rl_run_free(run);
    reshape_csv(dir, extra);
    assert_int_equal(rl_run_load(dir, NULL, &run), RL_OK);
    char want[128];
    snprintf(want, sizeof want, "CSV has %zu columns, the manifest %zu",
             (size_t)((long)declared + extra), declared);
    if (run->status != RL_RUN_DEGRADED || !rl_run_has_reason(run, RL_REASON_COLUMNS_MISMATCH) ||
        !has_message(run, want))
        fail_msg("%s (%+d columns): read status %s, columns_mismatch %d, first message '%s'; "
                 "want degraded, columns_mismatch, '%s'",
                 planner, extra, rl_run_status_name(run->status),
                 rl_run_has_reason(run, RL_REASON_COLUMNS_MISMATCH),
                 run->num_messages ? run->messages[0] : "", want);
    if (run->num_rows != 20 || run->num_columns != (size_t)((long)declared + extra) ||
        !rl_run_column(run, "TotalCost"))
        fail_msg("%s (%+d columns): read %zu rows, %zu columns, TotalCost %s", planner, extra,
                 run->num_rows, run->num_columns, rl_run_column(run, "TotalCost") ? "kept" : "lost");
    rl_run_free(run);
    free(dir);
}

static void test_more_or_fewer_columns_than_declared(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    expect_mismatch(root, "one-more", 1);
    expect_mismatch(root, "two-more", 2);
    expect_mismatch(root, "one-fewer", -1);
    rl_test_tmpdir_free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_more_or_fewer_columns_than_declared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
