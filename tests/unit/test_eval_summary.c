/* Tests of rl_eval_summary (runlab/eval.h) on runs of the offline simulator: several
 * evaluations at once on threads (the TSan build runs this), the counts of runs evaluated
 * and reused, a run that cannot be evaluated listed and not fatal, and an existing output
 * directory refused before anything is evaluated. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/eval.h"
#include "runlab/fs.h"
#include "runlab/lab.h"
#include "runlab/plot.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void simulate(const char *home, int vehicles, uint64_t seed, const char *fault, char *dir)
{
    const char *src = getenv("RUNLAB_SOURCE");
    char map[4096];
    snprintf(map, sizeof map, "%s/data/maps/LabMapCommonRoad.xml", src ? src : ".");
    rl_lab_fault f;
    rl_lab_sim_options o;
    rl_lab_sim_options_default(&o);
    o.vehicles = vehicles;
    o.duration = 4;
    o.seed = seed;
    if (fault) {
        assert_int_equal(rl_lab_fault_parse(fault, &f), RL_OK);
        o.faults = &f;
        o.fault_count = 1;
    }
    o.map_path = map;
    if (rl_lab_sim_offline(&o, home, dir, 4096) < 0)
        fail_msg("%s", rl_error_last());
}

static size_t count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static void test_summary_threads_and_reuse(void **state)
{
    (void)state;
    char *home = rl_test_tmpdir();
    char runs[4][4096];
    simulate(home, 2, 1, NULL, runs[0]);
    simulate(home, 2, 2, "speeding:2:1:3", runs[1]);
    simulate(home, 3, 3, NULL, runs[2]);
    /* Not a run: a directory without a manifest or bag, listed as not evaluated. */
    snprintf(runs[3], sizeof runs[3], "%s/not-a-run", home);
    assert_int_equal(rl_fs_mkdirs(runs[3]), RL_OK);
    const char *dirs[] = {runs[0], runs[1], runs[2], runs[3], runs[1]};
    char out[4200]; /* home is short (a temporary directory) */
    snprintf(out, sizeof out, "%s/summary1", home);
    rl_eval_summary_options o = {.runs = dirs, .nruns = 5, .out_dir = out, .jobs = 4};
    rl_eval_summary_result res;
    if (rl_eval_summary(&o, &res) < 0)
        fail_msg("%s", rl_error_last());
    assert_int_equal(res.nruns, 4); /* runs[1] named twice */
    assert_int_equal(res.evaluated, 4);
    assert_int_equal(res.reused, 0);
    assert_int_equal(res.errors, 1);
    assert_int_equal(res.verdicts[RL_EVAL_VERDICT_FAIL], 1);
    assert_int_equal(res.verdicts[RL_EVAL_VERDICT_PASS], 2);
    assert_int_equal(strlen(res.config_sha256), 64);
    char p[8400];
    snprintf(p, sizeof p, "%s/runs", out);
    assert_int_equal(count_entries(p), 3); /* a link per evaluated run */
    rl_eval_summary_result_free(&res);

    /* Again into another directory: every evaluation reused; none made. */
    snprintf(out, sizeof out, "%s/summary2", home);
    if (rl_eval_summary(&o, &res) < 0)
        fail_msg("%s", rl_error_last());
    assert_int_equal(res.reused, 3);
    assert_int_equal(res.evaluated, 1); /* the directory that is no run, tried again */
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%.4095s/evaluations", runs[i]);
        assert_int_equal(count_entries(p), 1);
    }
    rl_eval_summary_result_free(&res);

    /* An existing directory is refused before any evaluation. */
    assert_int_equal(rl_eval_summary(&o, &res), RL_EEXIST);
    assert_int_equal(res.dir, NULL);
    rl_plot_release_caches();
    rl_test_tmpdir_free(home);
}

static void test_summary_bad_options(void **state)
{
    (void)state;
    rl_eval_summary_options o = {0};
    rl_eval_summary_result res;
    assert_int_equal(rl_eval_summary(&o, &res), RL_EINVAL);
    assert_int_equal(rl_eval_summary(NULL, &res), RL_EINVAL);
    const char *dirs[] = {"/nonexistent/runlab-run"};
    o.runs = dirs;
    o.nruns = 1;
    assert_int_equal(rl_eval_summary(&o, &res), RL_ENOENT);
    assert_non_null(strstr(rl_error_last(), "/nonexistent/runlab-run"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_threads_and_reuse),
        cmocka_unit_test(test_summary_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
