/* Tests of runlab/runs.h beyond classification: a run's end-of-run numbers (final gain per
 * layer and in all, total cost, seed, elapsed time; from the summary, else the CSV), a
 * dropped row counted once (bad_rows, not also non_numeric), and the tree walk over
 * symbolic links: the recorder's .run-ids/ aliases pass silently, loops, link chains
 * and dangling links are reported. Expected values are written into the files here. */
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

/* A run of 5 cycles with two layers that each log their gain. The CSV's rows hold the
 * gains 1..5 (planning) and 0.5..2.5 (backtracking), the cost 10..50; the summary is given
 * planning 6.25, backtracking 3, cost 55 (a last move after the last row). */
static char *make_run(const char *root, uint64_t seed)
{
    rl_perflog_config cfg;
    rl_perflog_config_init(&cfg);
    cfg.root = root;
    cfg.dataset = "grid";
    cfg.scene = "s01";
    cfg.planner = "two_layers";
    cfg.random_seed = seed;
    rl_perflog *pl;
    assert_int_equal(rl_perflog_new(&pl, &cfg), RL_OK);
    int cost, pg, bg;
    assert_int_equal(rl_perflog_add_layer(pl, "planning", "nbv"), RL_OK);
    assert_int_equal(rl_perflog_add_layer(pl, "backtracking", "bt"), RL_OK);
    assert_int_equal(rl_perflog_declare(pl, NULL, "TotalCost", RL_COL_TOTAL, "s", NULL, &cost),
                     RL_OK);
    assert_int_equal(
        rl_perflog_declare(pl, "planning", "RealAccumulatedGain", RL_COL_GAUGE, "m2", NULL, &pg),
        RL_OK);
    assert_int_equal(rl_perflog_declare(pl, "backtracking", "RealAccumulatedGain", RL_COL_GAUGE,
                                        "m2", NULL, &bg),
                     RL_OK);
    assert_int_equal(rl_perflog_start(pl), RL_OK);
    for (int i = 1; i <= 5; i++) {
        rl_perflog_add(pl, cost, 10);
        rl_perflog_set(pl, pg, i);
        rl_perflog_set(pl, bg, i * 0.5);
        assert_int_equal(rl_perflog_cycle_end(pl), RL_OK);
    }
    rl_episode_totals t = {55, 12, 13, 6};
    assert_int_equal(rl_perflog_set_totals(pl, &t), RL_OK);
    assert_int_equal(rl_perflog_set_gain(pl, "planning", 6.25), RL_OK);
    assert_int_equal(rl_perflog_set_gain(pl, "backtracking", 3), RL_OK);
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

static void test_final_numbers_from_the_summary_else_the_csv(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    char *dir = make_run(root, 12345678901234ull);
    rl_run *run;
    assert_int_equal(rl_run_load(dir, NULL, &run), RL_OK);
    assert_int_equal(run->status, RL_RUN_PARSED);
    assert_int_equal(run->num_gain_layers, 2);
    assert_string_equal(run->gain_layers[0], "backtracking");
    assert_string_equal(run->gain_layers[1], "planning");
    assert_true(run->layer_gains[0] == 3);
    assert_true(run->layer_gains[1] == 6.25);
    assert_true(run->final_gain == 9.25); /* the sum over the layers */
    assert_true(run->final_from_summary);
    assert_true(rl_run_layer_gain(run, "planning") == 6.25);
    assert_true(isnan(rl_run_layer_gain(run, "nosuch")));
    assert_true(run->total_cost == 55);
    assert_true(run->has_seed);
    assert_true(run->seed == 12345678901234ull);
    assert_true(isfinite(run->elapsed_s) && run->elapsed_s >= 0);
    rl_run_free(run);

    /* Without a summary (a crash): the last row of each layer's column, the last cost. */
    char p[PATH_MAX];
    path_of(p, dir, "episode_summary.yaml");
    assert_int_equal(unlink(p), 0);
    assert_int_equal(rl_run_load(dir, NULL, &run), RL_OK);
    assert_int_equal(run->status, RL_RUN_DEGRADED);
    assert_true(run->final_gain == 5 + 2.5);
    assert_false(run->final_from_summary);
    assert_true(run->total_cost == 50);
    rl_run_free(run);

    /* No gain anywhere: NaN, not 0. */
    path_of(p, dir, "performance_log.csv");
    rl_test_write_file(p, "CycleIndex,TotalCost\n0,1\n", 25);
    assert_int_equal(rl_run_load(dir, NULL, &run), RL_OK);
    assert_int_equal(run->num_gain_layers, 0);
    assert_true(isnan(run->final_gain));
    assert_true(run->total_cost == 1);
    rl_run_free(run);
    free(dir);
    rl_test_tmpdir_free(root);
}

static bool has_message(const rl_run *run, const char *part)
{
    for (size_t m = 0; m < run->num_messages; m++)
        if (strstr(run->messages[m], part))
            return true;
    return false;
}

static void test_dropped_row_is_not_also_non_numeric(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    char *dir = make_run(root, 1);
    char p[PATH_MAX];
    path_of(p, dir, "performance_log.csv");
    FILE *f = fopen(p, "ab");
    assert_non_null(f);
    fputs("x,y\n", f); /* two fields of eight, neither a number: one bad row, nothing else */
    fclose(f);
    rl_run *run;
    assert_int_equal(rl_run_load(dir, NULL, &run), RL_OK);
    assert_true(rl_run_has_reason(run, RL_REASON_BAD_ROWS));
    assert_false(rl_run_has_reason(run, RL_REASON_NON_NUMERIC));
    assert_int_equal(run->num_rows, 5);
    rl_run_free(run);

    /* A kept row with one odd cell: non_numeric, counted once, at its line and column. */
    f = fopen(p, "ab");
    assert_non_null(f);
    fputs("5,x,1,2,3,4,5,6\n", f);
    fclose(f);
    assert_int_equal(rl_run_load(dir, NULL, &run), RL_OK);
    assert_true(rl_run_has_reason(run, RL_REASON_BAD_ROWS));
    assert_true(rl_run_has_reason(run, RL_REASON_NON_NUMERIC));
    assert_true(has_message(run, "non_numeric: 1 cell(s) not numbers, read as NaN, first at "
                                 "line 8 column 2"));
    assert_int_equal(run->num_rows, 6);
    rl_run_free(run);
    free(dir);
    rl_test_tmpdir_free(root);
}

static void mkdir_at(const char *root, const char *rel)
{
    char p[PATH_MAX];
    path_of(p, root, rel);
    assert_int_equal(mkdir(p, 0755), 0);
}

static void link_at(const char *root, const char *rel, const char *target)
{
    char p[PATH_MAX];
    path_of(p, root, rel);
    assert_int_equal(symlink(target, p), 0);
}

static bool has_walk_error(const rl_run_set *set, const char *a, const char *b)
{
    for (size_t i = 0; i < set->num_walk_errors; i++)
        if (strstr(set->walk_errors[i], a) && strstr(set->walk_errors[i], b))
            return true;
    return false;
}

/* A run written before perflog added the standard totals (TotalCost its only one) still
 * loads as parsed: the fingerprint below was computed with Python's hashlib from the
 * definition in docs/perflog.md, not by runlab. */
static void test_run_without_standard_totals_loads(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    char p[PATH_MAX];
    path_of(p, root, "old");
    assert_int_equal(mkdir(p, 0755), 0);
    static const char manifest[] =
        "format_version: 1\n"
        "schema_fingerprint: "
        "\"sha256:8cfd087a75964f313d0636ff451d923bcd633a35e857536e468b9ec3e5c82ece\"\n"
        "dataset: \"grid\"\nscene: \"s01\"\nplanner: \"old\"\nrandom_seed: 3\n"
        "layers:\n  \"planning\": \"nbv\"\n"
        "columns:\n"
        "  - {name: \"CycleIndex\", type: counter, unit: \"none\", parent: null}\n"
        "  - {name: \"ElapsedWallTimeSec\", type: gauge, unit: \"s\", parent: null}\n"
        "  - {name: \"TotalCost\", type: total, unit: \"s\", parent: null}\n"
        "  - {name: \"planning.PlanPathTime\", type: timer, unit: \"s\", parent: null}\n"
        "  - {name: \"planning.RealAccumulatedGain\", type: gauge, unit: \"m2\", parent: null}\n";
    static const char csv[] = "CycleIndex,ElapsedWallTimeSec,TotalCost,planning.PlanPathTime,"
                              "planning.RealAccumulatedGain\n0,0.1,2,0.01,4\n1,0.2,5,0.02,9\n";
    static const char summary[] = "format_version: 1\nend_reason: goal_reached\ncycles: 2\n"
                                  "total_cost: 5.0\nreal_accumulated_gain:\n  planning: 9.0\n";
    path_of(p, root, "old/run_manifest.yaml");
    rl_test_write_file(p, manifest, sizeof manifest - 1);
    path_of(p, root, "old/performance_log.csv");
    rl_test_write_file(p, csv, sizeof csv - 1);
    path_of(p, root, "old/episode_summary.yaml");
    rl_test_write_file(p, summary, sizeof summary - 1);
    path_of(p, root, "old");
    rl_run *run;
    assert_int_equal(rl_run_load(p, NULL, &run), RL_OK);
    for (size_t m = 0; m < run->num_messages; m++)
        print_message("  %s\n", run->messages[m]);
    assert_int_equal(run->status, RL_RUN_PARSED);
    assert_int_equal(run->num_columns, 5);
    assert_null(rl_run_column(run, "TotalPathLength"));
    assert_true(run->total_cost == 5);
    assert_true(run->final_gain == 9);
    rl_run_free(run);
    rl_test_tmpdir_free(root);
}

static void test_walk_over_links(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    /* The recorder's tree (docs/record.md): experiments/.run-ids/<id> -> ../<time>_<id>,
     * with a perflog run of an evaluation inside the run directory. */
    mkdir_at(root, "experiments");
    mkdir_at(root, "experiments/.run-ids");
    mkdir_at(root, "experiments/20261129T201500Z_exp-1");
    mkdir_at(root, "experiments/20261129T201500Z_exp-1/evaluations");
    link_at(root, "experiments/.run-ids/exp-1", "../20261129T201500Z_exp-1");
    /* a finished recording (an unfinished one is reported, as runs must) */
    char man[PATH_MAX];
    path_of(man, root, "experiments/20261129T201500Z_exp-1/manifest.json");
    const char *text = "{\"format\": \"runlab.record.manifest\", \"state\": \"COMPLETE\"}\n";
    rl_test_write_file(man, text, strlen(text));
    char evals[PATH_MAX];
    path_of(evals, root, "experiments/20261129T201500Z_exp-1/evaluations");
    char *run_dir = make_run(evals, 7);

    const char *roots[1];
    char exp[PATH_MAX];
    path_of(exp, root, "experiments");
    roots[0] = exp;
    rl_run_set *set;
    assert_int_equal(rl_runs_load(roots, 1, NULL, &set), RL_OK);
    for (size_t i = 0; i < set->num_walk_errors; i++)
        print_message("  walk error: %s\n", set->walk_errors[i]);
    assert_int_equal(set->num_walk_errors, 0); /* an alias is not a loop */
    assert_int_equal(set->count, 1);
    assert_string_equal(set->runs[0]->path, run_dir); /* by its real path, not .run-ids/ */
    rl_run_set_free(set);

    /* A link to a directory outside the tree is followed; loops and dead ends reported. */
    char *outside = rl_test_tmpdir();
    char *other = make_run(outside, 8);
    link_at(root, "experiments/more", outside);
    link_at(root, "experiments/s1", "s2");
    link_at(root, "experiments/s2", "s1");
    link_at(root, "experiments/dead", "no/such/dir");
    link_at(root, "experiments/20261129T201500Z_exp-1/up", "..");
    assert_int_equal(rl_runs_load(roots, 1, NULL, &set), RL_OK);
    assert_int_equal(set->count, 2);
    bool found = false;
    for (size_t i = 0; i < set->count; i++)
        found |= strstr(set->runs[i]->path, "/more/") != NULL;
    assert_true(found);
    assert_true(has_walk_error(set, "experiments/s1", "symbolic link loop"));
    assert_true(has_walk_error(set, "experiments/s2", "symbolic link loop"));
    assert_true(has_walk_error(set, "experiments/dead", "dangling symbolic link to 'no/such/dir'"));
    assert_true(has_walk_error(set, "exp-1/up", "leads back to its ancestor"));
    assert_int_equal(set->num_walk_errors, 4);
    rl_run_set_free(set);
    free(other);
    free(run_dir);
    rl_test_tmpdir_free(outside);
    rl_test_tmpdir_free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_final_numbers_from_the_summary_else_the_csv),
        cmocka_unit_test(test_dropped_row_is_not_also_non_numeric),
        cmocka_unit_test(test_run_without_standard_totals_loads),
        cmocka_unit_test(test_walk_over_links),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
