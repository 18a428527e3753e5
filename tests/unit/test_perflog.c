/* Tests of runlab/perflog.h: the run directory and its files, column order, the schema
 * fingerprint (recomputed by an independent Python script), map snapshots, the cost of
 * logging when it is off, and summaries written on SIGINT/SIGTERM. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/perflog.h"
#include "runlab/time.h"

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct ids {
    int plan_total, total_cost, bt_plan, bt_selected, p_expand, p_eval, p_selected, p_gain;
};

static rl_perflog *make_logger(const char *root, bool log, double budget, int maps, struct ids *ids)
{
    rl_perflog_config cfg;
    rl_perflog_config_init(&cfg);
    cfg.root = root;
    cfg.task = "unit";
    cfg.dataset = "grid";
    cfg.scene = "s01";
    cfg.planner = "nbv";
    cfg.log_performance = log;
    cfg.cost_budget = budget;
    cfg.random_seed = 42;
    cfg.num_maps_to_save = maps;
    rl_perflog *pl;
    assert_int_equal(rl_perflog_new(&pl, &cfg), RL_OK);
    /* Declared out of alphabetical order on purpose. */
    assert_int_equal(rl_perflog_add_layer(pl, "planning", "next_best_view"), RL_OK);
    assert_int_equal(rl_perflog_add_layer(pl, "backtracking", "backtracker"), RL_OK);
    assert_int_equal(
        rl_perflog_declare(pl, NULL, "PlanPathTotal", RL_COL_TIMER, "s", NULL, &ids->plan_total),
        RL_OK);
    assert_int_equal(
        rl_perflog_declare(pl, "planning", "ExpandTime", RL_COL_TIMER, "s", NULL, &ids->p_expand),
        RL_OK);
    assert_int_equal(rl_perflog_declare(pl, "planning", "EvaluateNode", RL_COL_TIMER, "s",
                                        "planning.ExpandTime", &ids->p_eval),
                     RL_OK);
    assert_int_equal(rl_perflog_declare(pl, "planning", "TimesSelected", RL_COL_TOTAL, "count",
                                        NULL, &ids->p_selected),
                     RL_OK);
    assert_int_equal(rl_perflog_declare(pl, "planning", "RealAccumulatedGain", RL_COL_GAUGE, "m2",
                                        NULL, &ids->p_gain),
                     RL_OK);
    assert_int_equal(rl_perflog_declare(pl, "backtracking", "PlanPathTime", RL_COL_TIMER, "s",
                                        "PlanPathTotal", &ids->bt_plan),
                     RL_OK);
    assert_int_equal(rl_perflog_declare(pl, "backtracking", "TimesSelected", RL_COL_COUNTER,
                                        "count", NULL, &ids->bt_selected),
                     RL_OK);
    assert_int_equal(
        rl_perflog_declare(pl, NULL, "TotalCost", RL_COL_TOTAL, "s", NULL, &ids->total_cost),
        RL_OK);
    assert_int_equal(rl_perflog_param_f64(pl, "planning.sensor_range", 3.5), RL_OK);
    assert_int_equal(rl_perflog_param_i64(pl, "seed", 42), RL_OK);
    assert_int_equal(rl_perflog_param_str(pl, "cost", "time: \"quoted\""), RL_OK);
    return pl;
}

static char *slurp(const char *dir, const char *name)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        fail_msg("path too long");
    return rl_test_read_file(path, NULL);
}

static bool exists(const char *dir, const char *name)
{
    char path[PATH_MAX];
    struct stat st;
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        fail_msg("path too long");
    return stat(path, &st) == 0;
}

static void run_cycles(rl_perflog *pl, const struct ids *ids, int n)
{
    for (int c = 0; c < n; c++) {
        rl_perflog_timer_start(pl, ids->plan_total);
        rl_perflog_timer_start(pl, ids->p_expand);
        rl_perflog_timer_start(pl, ids->p_eval);
        rl_perflog_timer_stop(pl, ids->p_eval);
        rl_perflog_timer_stop(pl, ids->p_expand);
        rl_perflog_timer_start(pl, ids->bt_plan);
        rl_perflog_timer_stop(pl, ids->bt_plan);
        rl_perflog_timer_stop(pl, ids->plan_total);
        rl_perflog_count(pl, ids->bt_selected, 1);
        rl_perflog_add(pl, ids->p_selected, 1);
        rl_perflog_add(pl, ids->total_cost, 1.5);
        rl_perflog_set(pl, ids->p_gain, 0.25 * c);
        rl_episode_totals t = {1.5 * (c + 1), 2.0 * (c + 1), 1.5 * (c + 1), c + 1};
        rl_perflog_set_totals(pl, &t);
        rl_perflog_set_gain(pl, "planning", 0.25 * (c + 1));
        assert_int_equal(rl_perflog_cycle_end(pl), RL_OK);
    }
}

/* Timers that break the declared nesting are counted and the first is named in the
 * summary; well-nested cycles count nothing. */
static void test_timer_nesting_checked(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    struct ids ids;
    rl_perflog *pl = make_logger(root, true, INFINITY, 0, &ids);
    assert_int_equal(rl_perflog_start(pl), RL_OK);
    run_cycles(pl, &ids, 3); /* well nested */
    char *dir = strdup(rl_perflog_run_dir(pl));
    /* EvaluateNode (parent planning.ExpandTime) started outside its parent... */
    rl_perflog_timer_start(pl, ids.p_eval);
    rl_perflog_timer_stop(pl, ids.p_eval);
    /* ...and backtracking.PlanPathTime stopped after PlanPathTotal stopped. */
    rl_perflog_timer_start(pl, ids.plan_total);
    rl_perflog_timer_start(pl, ids.bt_plan);
    rl_perflog_timer_stop(pl, ids.plan_total);
    rl_perflog_timer_stop(pl, ids.bt_plan);
    assert_int_equal(rl_perflog_cycle_end(pl), RL_OK);
    assert_int_equal(rl_perflog_end(pl, RL_END_GOAL_REACHED), RL_OK);
    char *sum = slurp(dir, "episode_summary.yaml");
    assert_non_null(strstr(sum, "timer_nesting_violations: 2\n"));
    assert_non_null(strstr(sum, "first_nesting_violation: \"planning.EvaluateNode ran outside "
                                "its parent planning.ExpandTime\""));
    free(sum);
    rl_perflog_free(pl);

    /* The well-nested logger of run_cycles says 0 and names nothing. */
    pl = make_logger(root, true, INFINITY, 0, &ids);
    assert_int_equal(rl_perflog_start(pl), RL_OK);
    run_cycles(pl, &ids, 2);
    free(dir);
    dir = strdup(rl_perflog_run_dir(pl));
    assert_int_equal(rl_perflog_end(pl, RL_END_GOAL_REACHED), RL_OK);
    sum = slurp(dir, "episode_summary.yaml");
    assert_non_null(strstr(sum, "timer_nesting_violations: 0\n"));
    assert_null(strstr(sum, "first_nesting_violation"));
    free(sum);
    free(dir);
    rl_perflog_free(pl);
    rl_test_tmpdir_free(root);
}

static void test_run_directory_and_files(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    struct ids ids;
    rl_perflog *pl = make_logger(root, true, 100, 0, &ids);
    assert_null(rl_perflog_run_dir(pl));
    assert_int_equal(rl_perflog_start(pl), RL_OK);
    const char *dir = rl_perflog_run_dir(pl);
    char prefix[PATH_MAX];
    snprintf(prefix, sizeof prefix, "%s/unit/grid/s01/nbv/", root);
    assert_memory_equal(dir, prefix, strlen(prefix));
    const char *stamp = dir + strlen(prefix);
    assert_true(strlen(stamp) >= 15 && stamp[8] == '_');
    /* The schema is fixed once started. */
    int id;
    assert_int_equal(rl_perflog_declare(pl, NULL, "Late", RL_COL_TIMER, "s", NULL, &id), RL_ESTATE);
    assert_int_equal(rl_perflog_start(pl), RL_ESTATE);

    run_cycles(pl, &ids, 5);
    assert_int_equal(rl_perflog_end(pl, RL_END_BUDGET_EXHAUSTED), RL_OK);
    assert_int_equal(rl_perflog_end(pl, RL_END_BUDGET_EXHAUSTED), RL_ESTATE);
    rl_perflog_count(pl, ids.bt_selected, 1); /* after end: ignored */

    char *csv = slurp(dir, "performance_log.csv");
    /* The standard totals the agent did not declare come right after ElapsedWallTimeSec;
     * its own TotalCost stays where it was declared. */
    const char *header = "CycleIndex,ElapsedWallTimeSec,TotalPathLength,TotalPathDuration,"
                         "TotalVisitedNodes,PlanPathTotal,TotalCost,"
                         "backtracking.PlanPathTime,backtracking.TimesSelected,"
                         "planning.ExpandTime,planning.EvaluateNode,planning.TimesSelected,"
                         "planning.RealAccumulatedGain\n";
    assert_memory_equal(csv, header, strlen(header));
    int lines = 0;
    for (char *p = csv; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 6);
    /* Last row: cycle 4, the totals of cycle 4 (length 10, duration 7.5, 5 nodes), total
     * cost 7.5, 1 backtracking selection (counter reset per cycle), 5 planning selections
     * (total), gain 1. */
    char *last = csv + strlen(csv) - 1;
    *last = '\0';
    last = strrchr(csv, '\n') + 1;
    assert_memory_equal(last, "4,", 2);
    char *f[13];
    int nf = 0;
    for (char *tok = strtok(last, ","); tok && nf < 13; tok = strtok(NULL, ","))
        f[nf++] = tok;
    assert_int_equal(nf, 13);
    assert_string_equal(f[2], "10");
    assert_string_equal(f[3], "7.5");
    assert_string_equal(f[4], "5");
    assert_string_equal(f[6], "7.5");
    assert_string_equal(f[8], "1");
    assert_string_equal(f[11], "5");
    assert_string_equal(f[12], "1");
    free(csv);

    char *man = slurp(dir, "run_manifest.yaml");
    assert_non_null(strstr(man, "format_version: 1\n"));
    assert_non_null(strstr(man, "cost_budget: 100.0\n"));
    assert_non_null(strstr(man, "random_seed: 42\n"));
    assert_non_null(strstr(man, "layers:\n  \"backtracking\": \"backtracker\"\n  \"planning\""));
    assert_non_null(strstr(man, "{name: \"planning.EvaluateNode\", type: timer, unit: \"s\", "
                                "parent: \"planning.ExpandTime\"}"));
    assert_non_null(strstr(man, rl_perflog_fingerprint(pl)));
    assert_non_null(strstr(man, "build_git_sha: "));
    free(man);

    char *sum = slurp(dir, "episode_summary.yaml");
    assert_non_null(strstr(sum, "end_reason: budget_exhausted\n"));
    assert_non_null(strstr(sum, "cycles: 5\n"));
    assert_non_null(strstr(sum, "total_cost: 7.5\n"));
    assert_non_null(strstr(sum, "num_visited_nodes: 5\n"));
    assert_non_null(strstr(sum, "real_accumulated_gain:\n  backtracking: 0.0\n  planning: 1.25\n"));
    free(sum);

    char *params = slurp(dir, "params.yaml");
    assert_non_null(strstr(params, "\"planning.sensor_range\": 3.5\n"));
    assert_non_null(strstr(params, "\"cost\": \"time: \\\"quoted\\\"\"\n"));
    free(params);

    /* A second run started in the same second gets its own directory. */
    struct ids ids2;
    rl_perflog *pl2 = make_logger(root, true, 100, 0, &ids2);
    assert_int_equal(rl_perflog_start(pl2), RL_OK);
    assert_string_not_equal(rl_perflog_run_dir(pl2), dir);
    rl_perflog_free(pl2); /* ends as stopped */
    rl_perflog_free(pl);
    rl_test_tmpdir_free(root);
}

/* A planner that declares none of the standard totals still has them in its CSV, right
 * after ElapsedWallTimeSec, holding what rl_perflog_set_totals was last given (nan before
 * the first call); the cost column takes the configured unit. A layer's gain column
 * stands in for rl_perflog_set_gain in the summary when that is never called. */
static void test_standard_totals_added(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    rl_perflog_config cfg;
    rl_perflog_config_init(&cfg);
    cfg.root = root;
    cfg.dataset = "d";
    cfg.scene = "s";
    cfg.planner = "mine";
    cfg.cost_unit = "J";
    rl_perflog *pl;
    int plan, gain, nodes_in_layer;
    assert_int_equal(rl_perflog_new(&pl, &cfg), RL_OK);
    assert_int_equal(rl_perflog_add_layer(pl, "planning", "sampler"), RL_OK);
    assert_int_equal(rl_perflog_declare(pl, "planning", "PlanTime", RL_COL_TIMER, "s", NULL, &plan),
                     RL_OK);
    /* A layer column of a standard name is the layer's, not a standard total. */
    assert_int_equal(rl_perflog_declare(pl, "planning", "TotalCost", RL_COL_GAUGE, "J", NULL,
                                        &nodes_in_layer),
                     RL_OK);
    assert_int_equal(rl_perflog_declare(pl, "planning", "RealAccumulatedGain", RL_COL_TOTAL, "m2",
                                        NULL, &gain),
                     RL_OK);
    assert_int_equal(rl_perflog_start(pl), RL_OK);
    char *dir = strdup(rl_perflog_run_dir(pl));
    for (int c = 0; c < 3; c++) {
        rl_perflog_add(pl, gain, 2);
        if (c > 0) {
            rl_episode_totals t = {10.0 * c, 1.5 * c, 0.5 * c, 3 * c};
            assert_int_equal(rl_perflog_set_totals(pl, &t), RL_OK);
        }
        assert_int_equal(rl_perflog_cycle_end(pl), RL_OK);
    }
    assert_int_equal(rl_perflog_end(pl, RL_END_GOAL_REACHED), RL_OK);
    rl_perflog_free(pl);

    char *csv = slurp(dir, "performance_log.csv");
    char *row0 = strchr(csv, '\n') + 1;
    *strchr(row0, ',') = '\0'; /* cut off the elapsed time, which varies */
    char *rest0 = strchr(row0 + strlen(row0) + 1, ',') + 1;
    const char *header = "CycleIndex,ElapsedWallTimeSec,TotalCost,TotalPathLength,"
                         "TotalPathDuration,TotalVisitedNodes,planning.PlanTime,"
                         "planning.TotalCost,planning.RealAccumulatedGain\n";
    assert_memory_equal(csv, header, strlen(header));
    assert_string_equal(row0, "0");
    assert_memory_equal(rest0, "nan,nan,nan,nan,0,0,2\n", strlen("nan,nan,nan,nan,0,0,2\n"));
    char *row2 = strstr(rest0, "\n2,") + 1;
    char *rest2 = strchr(row2 + 2, ',') + 1;
    assert_string_equal(rest2, "20,3,1,6,0,0,6\n");
    free(csv);

    char *man = slurp(dir, "run_manifest.yaml");
    assert_non_null(strstr(man, "{name: \"TotalCost\", type: total, unit: \"J\", parent: null}"));
    assert_non_null(strstr(man, "{name: \"TotalVisitedNodes\", type: total, unit: \"count\", "
                                "parent: null}"));
    free(man);
    char *sum = slurp(dir, "episode_summary.yaml");
    assert_non_null(strstr(sum, "total_cost: 20.0\n"));
    assert_non_null(strstr(sum, "num_visited_nodes: 6\n"));
    assert_non_null(strstr(sum, "real_accumulated_gain:\n  planning: 6.0\n"));
    free(sum);
    free(dir);

    /* A planner with its own TotalCost that never calls rl_perflog_set_totals: the column
     * is its own (perflog writes nothing into it) and the summary states its value. */
    cfg.cost_unit = "bad unit";
    assert_int_equal(rl_perflog_new(&pl, &cfg), RL_EINVAL);
    cfg.cost_unit = NULL;
    int cost;
    assert_int_equal(rl_perflog_new(&pl, &cfg), RL_OK);
    assert_int_equal(rl_perflog_declare(pl, NULL, "TotalCost", RL_COL_TOTAL, "m", NULL, &cost),
                     RL_OK);
    assert_int_equal(rl_perflog_start(pl), RL_OK);
    dir = strdup(rl_perflog_run_dir(pl));
    rl_perflog_add(pl, cost, 4.5);
    assert_int_equal(rl_perflog_cycle_end(pl), RL_OK);
    assert_int_equal(rl_perflog_end(pl, RL_END_STOPPED), RL_OK);
    rl_perflog_free(pl);
    csv = slurp(dir, "performance_log.csv");
    header = "CycleIndex,ElapsedWallTimeSec,TotalPathLength,TotalPathDuration,"
             "TotalVisitedNodes,TotalCost\n";
    assert_memory_equal(csv, header, strlen(header));
    assert_non_null(strstr(csv, ",nan,nan,nan,4.5\n"));
    free(csv);
    sum = slurp(dir, "episode_summary.yaml");
    assert_non_null(strstr(sum, "total_cost: 4.5\n"));
    assert_non_null(strstr(sum, "num_visited_nodes: 0\n"));
    free(sum);
    free(dir);
    rl_test_tmpdir_free(root);
}

static void test_fingerprint_recomputed_independently(void **state)
{
    (void)state;
    const char *src = getenv("RUNLAB_SOURCE");
    if (!src)
        fail_msg("RUNLAB_SOURCE is not set (tests/CMakeLists.txt sets it)");
    if (system("python3 -c 'import yaml' 2>/dev/null") != 0)
        fail_msg("python3 with yaml is missing (scripts/install-deps.sh installs python3-yaml)");
    char *root = rl_test_tmpdir();
    struct ids ids;
    rl_perflog *pl = make_logger(root, true, INFINITY, 0, &ids);
    assert_int_equal(rl_perflog_start(pl), RL_OK);
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "python3 '%s/tests/tools/fingerprint.py' '%s/run_manifest.yaml'", src,
             rl_perflog_run_dir(pl));
    assert_int_equal(system(cmd), 0);
    /* An unbounded budget is absent from the manifest. */
    char *man = slurp(rl_perflog_run_dir(pl), "run_manifest.yaml");
    assert_null(strstr(man, "cost_budget"));
    free(man);
    rl_perflog_free(pl);
    rl_test_tmpdir_free(root);

    /* The definition itself, on a fixed schema: sha256 of "a\ttimer\ts\t\nb\tcounter\tcount\ta\n".
     */
    const char *names[] = {"a", "b"}, *types[] = {"timer", "counter"}, *units[] = {"s", "count"},
               *parents[] = {NULL, "a"};
    char fp[RL_FINGERPRINT_LEN];
    assert_int_equal(rl_perflog_compute_fingerprint(names, types, units, parents, 2, fp, sizeof fp),
                     RL_OK);
    snprintf(cmd, sizeof cmd,
             "test \"$(printf 'a\\ttimer\\ts\\t\\nb\\tcounter\\tcount\\ta\\n' | sha256sum | "
             "cut -c1-64)\" = '%s'",
             fp + 7);
    assert_int_equal(system(cmd), 0);
}

/* Without a configured root: $RUNLAB_DATA_ROOT, else $HOME/runlab_data. */
static void test_default_data_root(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    rl_perflog_config cfg;
    rl_perflog_config_init(&cfg);
    cfg.dataset = "d";
    cfg.scene = "s";
    cfg.planner = "p";
    rl_perflog *pl;
    char want[PATH_MAX];

    setenv("RUNLAB_DATA_ROOT", root, 1);
    assert_int_equal(rl_perflog_new(&pl, &cfg), RL_OK);
    assert_int_equal(rl_perflog_start(pl), RL_OK);
    snprintf(want, sizeof want, "%s/d/s/p/", root);
    assert_memory_equal(rl_perflog_run_dir(pl), want, strlen(want));
    rl_perflog_free(pl);

    const char *old_home = getenv("HOME");
    char *saved = old_home ? strdup(old_home) : NULL;
    unsetenv("RUNLAB_DATA_ROOT");
    setenv("HOME", root, 1);
    assert_int_equal(rl_perflog_new(&pl, &cfg), RL_OK);
    assert_int_equal(rl_perflog_start(pl), RL_OK);
    snprintf(want, sizeof want, "%s/runlab_data/d/s/p/", root);
    assert_memory_equal(rl_perflog_run_dir(pl), want, strlen(want));
    rl_perflog_free(pl);
    if (saved) {
        setenv("HOME", saved, 1);
        free(saved);
    }
    rl_test_tmpdir_free(root);
}

static void test_bad_declarations(void **state)
{
    (void)state;
    rl_perflog_config cfg;
    rl_perflog_config_init(&cfg);
    rl_perflog *pl;
    cfg.dataset = "grid";
    cfg.scene = "../up";
    cfg.planner = "nbv";
    assert_int_equal(rl_perflog_new(&pl, &cfg), RL_EINVAL);
    cfg.scene = "s";
    cfg.planner = NULL;
    assert_int_equal(rl_perflog_new(&pl, &cfg), RL_EINVAL);
    cfg.planner = "nbv";
    assert_int_equal(rl_perflog_new(&pl, &cfg), RL_OK);
    int id;
    assert_int_equal(rl_perflog_declare(pl, NULL, "a,b", RL_COL_TIMER, "s", NULL, &id), RL_EINVAL);
    assert_int_equal(id, -1);
    assert_int_equal(rl_perflog_declare(pl, NULL, "T", RL_COL_TIMER, "s\n", NULL, &id), RL_EINVAL);
    assert_int_equal(rl_perflog_declare(pl, "nolayer", "T", RL_COL_TIMER, "s", NULL, &id),
                     RL_ENOENT);
    assert_int_equal(rl_perflog_declare(pl, NULL, "C", RL_COL_COUNTER, "count", NULL, &id), RL_OK);
    assert_int_equal(rl_perflog_declare(pl, NULL, "C", RL_COL_COUNTER, "count", NULL, &id),
                     RL_EEXIST);
    assert_int_equal(rl_perflog_declare(pl, NULL, "T", RL_COL_TIMER, "s", "C", &id), RL_EINVAL);
    assert_int_equal(rl_perflog_declare(pl, NULL, "G", RL_COL_GAUGE, "s", "T", &id), RL_EINVAL);
    assert_int_equal(rl_perflog_add_layer(pl, "a.b", "x"), RL_EINVAL);
    assert_int_equal(rl_perflog_param_f64(pl, "bad key", 1), RL_EINVAL);
    assert_int_equal(rl_perflog_cycle_end(pl), RL_ESTATE);
    rl_perflog_free(pl); /* never started: writes nothing */
    /* NULL and invalid handles are ignored by the per-cycle calls. */
    rl_perflog_timer_start(NULL, 0);
    rl_perflog_count(NULL, 3, 1);
}

static void test_logging_off_writes_nothing(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    struct ids ids;
    rl_perflog *pl = make_logger(root, false, 100, 0, &ids);
    assert_int_equal(rl_perflog_start(pl), RL_OK);
    /* What logging off costs is measured in bench/bench_perflog.c (make bench), against a
     * baseline in the same run; here only what it does: the calls are accepted and leave
     * no trace on disk. */
    enum { N = 1000 };
    for (int i = 0; i < N; i++) {
        rl_perflog_timer_start(pl, ids.p_expand);
        rl_perflog_timer_stop(pl, ids.p_expand);
        rl_perflog_count(pl, ids.bt_selected, 1);
        rl_perflog_add(pl, ids.total_cost, 1.0);
    }
    assert_int_equal(rl_perflog_cycle_end(pl), RL_OK);
    const char *dir = rl_perflog_run_dir(pl);
    char keep[PATH_MAX];
    snprintf(keep, sizeof keep, "%s", dir);
    assert_int_equal(rl_perflog_end(pl, RL_END_GOAL_REACHED), RL_OK);
    assert_false(exists(keep, "performance_log.csv"));
    assert_true(exists(keep, "run_manifest.yaml"));
    char *sum = slurp(keep, "episode_summary.yaml");
    assert_non_null(strstr(sum, "cycles: 1\n"));
    assert_non_null(strstr(sum, "end_reason: goal_reached\n"));
    free(sum);
    rl_perflog_free(pl);
    rl_test_tmpdir_free(root);
}

static void test_map_snapshots(void **state)
{
    (void)state;
    char *root = rl_test_tmpdir();
    struct ids ids;
    rl_perflog *pl = make_logger(root, true, 10, 4, &ids);
    assert_int_equal(rl_perflog_start(pl), RL_OK);
    double spent = 0;
    int saved_at[4] = {-1, -1, -1, -1};
    for (int c = 0; c < 12; c++) {
        int k = rl_perflog_map_due(pl, spent, false);
        if (k >= 0) {
            assert_int_equal(
                rl_perflog_save_map(pl, k, "P5\n1 1\n255\n\0", 12, "pgm", spent, spent * 2, spent),
                RL_OK);
            saved_at[k] = c;
            assert_int_equal(rl_perflog_map_due(pl, spent + 100, false), -1); /* one per cycle */
        }
        spent += 1.0;
        assert_int_equal(rl_perflog_cycle_end(pl), RL_OK);
    }
    /* Thresholds 0, 2.5, 5, 7.5 passed after 1, 3, 6 and 8 units of cost. */
    assert_int_equal(saved_at[0], 1);
    assert_int_equal(saved_at[1], 3);
    assert_int_equal(saved_at[2], 6);
    assert_int_equal(saved_at[3], 8);
    const char *dir = rl_perflog_run_dir(pl);
    assert_true(exists(dir, "maps/00003.pgm"));
    char *log = slurp(dir, "map_log.csv");
    assert_non_null(strstr(log, "MapIndex,Cycle,SpentCost,TotalPathLength,TotalPathDuration,File\n"
                                "0,1,1,2,1,maps/00000.pgm\n"));
    free(log);
    assert_int_equal(rl_perflog_save_map(pl, 4, "x", 1, "pgm", 0, 0, 0), RL_EINVAL);
    rl_perflog_free(pl);

    /* Unbounded budget: map 0 only when the episode ends. */
    pl = make_logger(root, true, INFINITY, 3, &ids);
    assert_int_equal(rl_perflog_start(pl), RL_OK);
    assert_int_equal(rl_perflog_map_due(pl, 5, false), -1);
    assert_int_equal(rl_perflog_map_due(pl, 5, true), 0);
    /* maps/ as a link out of the run (issue 29 item 7): refused, nothing written there. */
    char outside[PATH_MAX], link[PATH_MAX + 16];
    snprintf(outside, sizeof outside, "%s/outside", root);
    assert_int_equal(mkdir(outside, 0755), 0);
    snprintf(link, sizeof link, "%s/maps", rl_perflog_run_dir(pl));
    assert_int_equal(symlink(outside, link), 0);
    assert_int_equal(rl_perflog_save_map(pl, 0, "x", 1, "pgm", 0, 0, 0), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "maps: is a symbolic link"));
    assert_false(exists(outside, "00000.pgm"));
    rl_perflog_free(pl);
    rl_test_tmpdir_free(root);
}

/* In a child: start, run cycles, get a signal; `exit_flag` selects the dying mode. */
static void child_episode(const char *root, int sig, int flags, int cycles_before)
{
    struct ids ids;
    rl_perflog *pl = make_logger(root, true, 100, 0, &ids);
    if (rl_perflog_start(pl) != RL_OK || rl_perflog_handle_signals(pl, flags) != RL_OK)
        _exit(3);
    for (int c = 0; c < 1000; c++) {
        if (c == cycles_before)
            raise(sig);
        rl_episode_totals t = {c, c, c, c};
        rl_perflog_set_totals(pl, &t);
        if (rl_perflog_cycle_end(pl) != 0) {
            rl_perflog_end(pl, RL_END_STOPPED);
            rl_perflog_free(pl);
            _exit(0);
        }
    }
    _exit(4);
}

static char *only_run_dir(const char *root)
{
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "ls -d %s/unit/grid/s01/nbv/*/", root);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    static char line[PATH_MAX];
    assert_non_null(fgets(line, sizeof line, p));
    pclose(p);
    line[strcspn(line, "\n")] = '\0';
    return line;
}

static void test_summary_on_signal(void **state)
{
    (void)state;
    /* Default mode: the handler writes the pre-rendered summary, the loop then ends the
     * episode cleanly with exact totals. */
    char *root = rl_test_tmpdir();
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        child_episode(root, SIGTERM, 0, 3);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char *sum = slurp(only_run_dir(root), "episode_summary.yaml");
    assert_non_null(strstr(sum, "end_reason: stopped\n"));
    assert_non_null(strstr(sum, "cycles: 4\n"));
    free(sum);
    rl_test_tmpdir_free(root);

    /* Exit mode: the process dies of SIGINT right away, leaving the summary of the last
     * finished cycle and every CSV row. */
    root = rl_test_tmpdir();
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        child_episode(root, SIGINT, RL_PERFLOG_SIG_EXIT, 3);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT);
    const char *dir = only_run_dir(root);
    sum = slurp(dir, "episode_summary.yaml");
    assert_non_null(strstr(sum, "end_reason: stopped\n"));
    assert_non_null(strstr(sum, "cycles: 3\n"));
    assert_non_null(strstr(sum, "total_cost: 2.0\n"));
    free(sum);
    assert_false(exists(dir, ".episode_summary.yaml.sig"));
    char *csv = slurp(dir, "performance_log.csv");
    int lines = 0;
    for (char *p = csv; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 4);
    free(csv);
    rl_test_tmpdir_free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_directory_and_files),
        cmocka_unit_test(test_standard_totals_added),
        cmocka_unit_test(test_fingerprint_recomputed_independently),
        cmocka_unit_test(test_default_data_root),
        cmocka_unit_test(test_bad_declarations),
        cmocka_unit_test(test_logging_off_writes_nothing),
        cmocka_unit_test(test_map_snapshots),
        cmocka_unit_test(test_summary_on_signal),
        cmocka_unit_test(test_timer_nesting_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
