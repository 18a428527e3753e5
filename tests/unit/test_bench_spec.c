/* The bench engine's own directory: specs parsed with errors naming file, line and key;
 * rl_bench_run_spec making <out>/<experiment>_<stamp> with spec.json, problem.json,
 * journal, outputs and manifest.json, through a built-in table of the test's own; resume
 * from spec.json keeping the first start; a finished directory left alone. */
#include "rl_test.h"

#include "runlab/bench.h"
#include "runlab/error.h"
#include "runlab/json.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- a built-in table of the test's own: one problem, one planner kind ---------------- */

static int problem_token = 7;

static void *problem_new(const char *name)
{
    if (strcmp(name, "line") == 0)
        return &problem_token;
    rl_error_set(RL_ENOENT, "unknown problem '%s' (known: line)", name);
    return NULL;
}
static void problem_free(void *p)
{
    assert_ptr_equal(p, &problem_token);
}
static const char *problem_describe(const void *p)
{
    (void)p;
    return "a line";
}
static int problem_dimension(const void *p)
{
    (void)p;
    return 3;
}
static char *problem_json(const void *p)
{
    (void)p;
    return strdup("{\"format\": \"test-problem\"}");
}

static rl_bench_status solve_fast(void *self, void *problem, rl_bench_run *run)
{
    (void)self;
    assert_ptr_equal(problem, &problem_token);
    rl_bench_run_set_real(run, "solution length", 2.5);
    return RL_RUN_EXACT;
}

static void planner_free(void *self)
{
    rl_bench_planner *p = self;
    free((char *)p->name);
    free(p);
}

static rl_bench_planner *planner_new(const char *kind, const char *name, const char *const *keys,
                                     const char *const *values, size_t n)
{
    (void)keys, (void)values;
    if (strcmp(kind, "fast") != 0 || n > 0) {
        rl_error_set(RL_EINVAL, "unknown planner kind '%s' or a setting", kind);
        return NULL;
    }
    rl_bench_planner *p = calloc(1, sizeof *p);
    assert_non_null(p);
    p->name = strdup(name);
    p->self = p;
    p->solve = solve_fast;
    p->free = planner_free;
    return p;
}

static const rl_bench_builtins BUILTINS = {problem_new,       problem_free, problem_describe,
                                           problem_dimension, problem_json, planner_new};

/* ---- phases as the caller sees them --------------------------------------------------- */

typedef struct phases {
    int seen[8];
    size_t n;
    size_t total_runs;
    char dir[PATH_MAX];
} phases;

static void on_phase(void *ud, rl_bench_phase phase, const char *dir, size_t total_runs)
{
    phases *ph = ud;
    if (ph->n < 8)
        ph->seen[ph->n++] = (int)phase;
    if (phase == RL_BENCH_PHASE_RUNS_START)
        ph->total_runs = total_runs;
    snprintf(ph->dir, sizeof ph->dir, "%s", dir);
}

static bool exists(const char *dir, const char *name)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* ---- tests ---------------------------------------------------------------------------- */

static void test_spec_errors_name_line_and_key(void **state)
{
    (void)state;
    rl_bench_spec *spec = (rl_bench_spec *)1;
    static const char UNKNOWN[] = "experiment: e\nproblem: line\nbogus: 1\nplanners: [{planner: fast}]\n";
    assert_int_equal(rl_bench_spec_parse(UNKNOWN, strlen(UNKNOWN), "s.yaml", NULL, &spec),
                     RL_EINVAL);
    assert_null(spec);
    assert_string_equal(rl_error_last(), "s.yaml:3: bogus: unknown key");

    static const char RANGE[] = "experiment: e\nproblem: line\nplanners: [{planner: fast}]\n"
                                "max_time: 0\n";
    assert_int_equal(rl_bench_spec_parse(RANGE, strlen(RANGE), "r.yaml", NULL, &spec), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "r.yaml:4: max_time: 0 is outside"));

    static const char PLANNER_KEY[] = "experiment: e\nproblem: line\nplanners:\n"
                                      "  - planner: fast\n  - name: b\n    colour: red\n";
    assert_int_equal(rl_bench_spec_parse(PLANNER_KEY, strlen(PLANNER_KEY), "p.yaml", NULL, &spec),
                     RL_EINVAL);
    assert_string_equal(rl_error_last(), "p.yaml:6: planners[1].colour: unknown key");

    static const char NO_PLANNERS[] = "experiment: e\nproblem: line\n";
    assert_int_equal(rl_bench_spec_parse(NO_PLANNERS, strlen(NO_PLANNERS), "n.yaml", NULL, &spec),
                     RL_EINVAL);
    assert_string_equal(rl_error_last(), "n.yaml: planners: missing (required)");

    static const char GOOD[] = "experiment: my test\nproblem: line\nplanners: [{planner: fast}]\n";
    assert_int_equal(rl_bench_spec_parse(GOOD, strlen(GOOD), "g.yaml", NULL, &spec), RL_OK);
    assert_string_equal(rl_bench_spec_experiment(spec), "my test");
    rl_bench_spec_free(spec);
}

static void test_builtin_planner_needs_a_table(void **state)
{
    (void)state;
    char *tmp = rl_test_tmpdir();
    char text[PATH_MAX + 256];
    int len = snprintf(text, sizeof text,
                       "experiment: e\nproblem: line\nout: %s\nplanners:\n  - planner: fast\n",
                       tmp);
    rl_bench_spec *spec = NULL;
    assert_int_equal(rl_bench_spec_parse(text, (size_t)len, "b.yaml", NULL, &spec), RL_OK);
    rl_bench_session *ss = (rl_bench_session *)1;
    assert_int_equal(rl_bench_run_spec(spec, NULL, &ss), RL_EINVAL);
    assert_null(ss);
    assert_string_equal(rl_error_last(),
                        "b.yaml:5: planners[0].planner: this build has no built-in planners; use "
                        "'command'");
    /* nothing was made: a spec that cannot be built leaves no directory behind */
    DIR *d = opendir(tmp);
    assert_non_null(d);
    struct dirent *de;
    int entries = 0;
    while ((de = readdir(d)) != NULL)
        entries += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    assert_int_equal(entries, 0);
    rl_bench_spec_free(spec);
    rl_test_tmpdir_free(tmp);
}

static void test_run_spec_owns_its_directory(void **state)
{
    (void)state;
    char *tmp = rl_test_tmpdir();
    char text[PATH_MAX + 256];
    int len = snprintf(text, sizeof text,
                       "experiment: unit spec\nproblem: line\nout: %s/root\nruns: 3\nseed: 5\n"
                       "max_time: 5\nparameters: {walls: 2}\n"
                       "planners:\n  - {name: A, planner: fast}\n  - {name: B, planner: fast}\n",
                       tmp);
    rl_bench_spec *spec = NULL;
    assert_int_equal(rl_bench_spec_parse(text, (size_t)len, "u.yaml", "/nowhere", &spec), RL_OK);
    phases ph = {0};
    rl_bench_run_opts opts = {.builtins = &BUILTINS, .on_phase = on_phase, .ud = &ph,
                              .finished_marker = "report.html"};
    rl_bench_session *ss = NULL;
    assert_int_equal(rl_bench_run_spec(spec, &opts, &ss), RL_OK);
    const char *dir = rl_bench_session_dir(ss);
    char root[PATH_MAX];
    snprintf(root, sizeof root, "%s/root/unit_spec_", tmp);
    assert_true(strncmp(dir, root, strlen(root)) == 0);
    assert_string_equal(ph.dir, dir);
    assert_int_equal(ph.n, 3);
    assert_int_equal(ph.seen[0], RL_BENCH_PHASE_DIR_READY);
    assert_int_equal(ph.seen[1], RL_BENCH_PHASE_RUNS_START);
    assert_int_equal(ph.seen[2], RL_BENCH_PHASE_RUNS_END);
    assert_int_equal(ph.total_runs, 6);
    const char *const files[] = {"spec.json",    "problem.json", "journal.tsv", "results.db",
                                 "results.csv",  "results.json", "manifest.json", ".lock",
                                 "console"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        assert_true(exists(dir, files[i]));
    assert_false(rl_bench_session_finished_already(ss));
    const rl_bench_experiment *e = rl_bench_session_results(ss);
    assert_non_null(e);
    assert_int_equal(e->n_planners, 2);
    assert_int_equal(e->planners[1].n_runs, 3);
    assert_int_equal(e->seed, 5);
    assert_string_equal(e->setup_info, "a line");
    bool has_dimension = false;
    for (size_t i = 0; i < e->n_params; i++)
        has_dimension |= strcmp(e->params[i].name, "dimension") == 0 &&
                         strcmp(e->params[i].value, "3") == 0;
    assert_true(has_dimension);
    int64_t first_start = e->start_ns;

    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    json_object *m = NULL, *v = NULL, *c = NULL;
    assert_int_equal(rl_json_read_file(path, 1 << 20, &m), RL_OK);
    assert_true(json_object_object_get_ex(m, "tool", &v));
    assert_string_equal(json_object_get_string(v), "runlab bench");
    assert_true(json_object_object_get_ex(m, "status_counts", &c));
    assert_true(json_object_object_get_ex(c, "B", &v));
    assert_true(json_object_object_get_ex(v, "Exact solution", &v));
    assert_int_equal(json_object_get_int(v), 3);
    json_object_put(m);
    snprintf(path, sizeof path, "%s/spec.json", dir);
    assert_int_equal(rl_json_read_file(path, 1 << 20, &m), RL_OK);
    assert_true(json_object_object_get_ex(m, "source", &v));
    assert_string_equal(json_object_get_string(v), "u.yaml");
    assert_true(json_object_object_get_ex(m, "source_dir", &v));
    assert_string_equal(json_object_get_string(v), "/nowhere");
    json_object_put(m);
    char saved_dir[PATH_MAX];
    snprintf(saved_dir, sizeof saved_dir, "%s", dir);
    rl_bench_session_free(ss);
    rl_bench_spec_free(spec);

    /* resume from spec.json: every run is in the journal, the first start is kept */
    assert_int_equal(rl_bench_spec_load_dir(saved_dir, &spec), RL_OK);
    assert_string_equal(rl_bench_spec_experiment(spec), "unit spec");
    rl_bench_run_opts resume = opts;
    resume.resume_dir = saved_dir;
    ph.n = 0;
    assert_int_equal(rl_bench_run_spec(spec, &resume, &ss), RL_OK);
    assert_string_equal(rl_bench_session_dir(ss), saved_dir);
    assert_int_equal(ph.n, 3); /* the same directory, ready, locked, run */
    e = rl_bench_session_results(ss);
    assert_int_equal(e->planners[0].n_runs, 3);
    assert_true(e->start_ns == first_start);
    rl_bench_session_free(ss);

    /* with the caller's last file written, the directory is finished: nothing runs */
    snprintf(path, sizeof path, "%s/report.html", saved_dir);
    rl_test_write_file(path, "x", 1);
    ph.n = 0;
    assert_int_equal(rl_bench_run_spec(spec, &resume, &ss), RL_OK);
    assert_true(rl_bench_session_finished_already(ss));
    assert_null(rl_bench_session_results(ss));
    assert_int_equal(ph.n, 0);
    rl_bench_session_free(ss);
    rl_bench_spec_free(spec);

    /* a directory without spec.json is no benchmark */
    assert_int_equal(rl_bench_spec_load_dir(tmp, &spec), RL_ENOENT);
    assert_null(spec);
    rl_test_tmpdir_free(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_errors_name_line_and_key),
        cmocka_unit_test(test_builtin_planner_needs_a_table),
        cmocka_unit_test(test_run_spec_owns_its_directory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
