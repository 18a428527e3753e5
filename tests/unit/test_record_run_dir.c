/* Tests of a run's names in the recorder engine: generated run ids that meet one already
 * used (two runs in one second of one process) take the next suffix instead of failing
 * or touching the other run; the run's names are "" while a prepare fills them in another
 * thread and fixed afterwards (the heartbeat and status readers race with prepare); the
 * compression names read back as the values they name, and each has its level range. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/record.h"
#include "runlab/time.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void options(rl_record_options *o, const char *home)
{
    rl_record_options_default(o);
    o->home = home;
    o->minimum_free_bytes = 0;
    o->lab_domain = rl_test_domain();
}

/* Prepares a recorder with a generated id, returns it (the caller frees). */
static rl_recorder *prepare_generated(const rl_record_options *o)
{
    rl_recorder *r = NULL;
    assert_int_equal(rl_recorder_new(&r, o), RL_OK);
    rl_record_run run = {0};
    if (rl_recorder_prepare(r, &run) != RL_OK)
        fail_msg("prepare: %s", rl_error_last());
    return r;
}

static void end_run(rl_recorder *r)
{
    assert_int_equal(rl_recorder_cancel(r, "test"), RL_OK);
    assert_int_equal(rl_recorder_wait(r), RL_OK);
    rl_recorder_free(r);
}

static void test_generated_ids_in_one_second_do_not_collide(void **state)
{
    (void)state;
    char *home = rl_test_tmpdir();
    rl_record_options o;
    options(&o, home);
    /* The generated id of every second from now on for a minute is taken already by a
     * run of this process (its reservation points to a directory of its own). */
    char ids[PATH_MAX + 32], link[2 * PATH_MAX], compact[64];
    snprintf(ids, sizeof ids, "%s/experiments/.run-ids", home);
    char mk[PATH_MAX + 64];
    snprintf(mk, sizeof mk, "%s/experiments", home);
    assert_int_equal(mkdir(mk, 0755), 0);
    assert_int_equal(mkdir(ids, 0755), 0);
    int64_t now = rl_time_now_ns();
    for (int s = 0; s <= 60; s++) {
        assert_int_equal(rl_time_format_compact(now + s * 1000000000ll, compact, sizeof compact),
                         RL_OK);
        snprintf(link, sizeof link, "%s/run-%s-%ld", ids, compact, (long)getpid());
        assert_int_equal(symlink("../someone-else", link), 0);
    }
    rl_recorder *a = prepare_generated(&o);
    char dir_a[PATH_MAX];
    snprintf(dir_a, sizeof dir_a, "%s", rl_recorder_run_dir(a));
    end_run(a);
    /* Its directory name is <compact>_<id>; the base id of that second was taken. */
    const char *name_a = strrchr(dir_a, '/') + 1;
    char base[128];
    snprintf(base, sizeof base, "run-%.*s-%ld", (int)(strchr(name_a, '_') - name_a), name_a,
             (long)getpid());
    snprintf(link, sizeof link, "%s/%s", ids, base);
    char target[PATH_MAX] = "", want[PATH_MAX];
    assert_true(readlink(link, target, sizeof target - 1) > 0);
    int len = (int)(strchr(name_a, '_') - name_a);
    if (strcmp(target, "../someone-else") == 0) /* its second was taken: the next suffix */
        snprintf(want, sizeof want, "%.*s_%s-2", len, name_a, base);
    else /* more than a minute passed (never on a sane machine): the base name is free */
        snprintf(want, sizeof want, "%.*s_%s", len, name_a, base);
    assert_string_equal(name_a, want);
    /* A second and a third run of this process, at once: each takes a free name. */
    rl_recorder *b = prepare_generated(&o);
    char dir_b[PATH_MAX];
    snprintf(dir_b, sizeof dir_b, "%s", rl_recorder_run_dir(b));
    o.lab_domain = rl_test_domain_another();
    rl_recorder *c = prepare_generated(&o);
    assert_string_not_equal(dir_b, dir_a);
    assert_string_not_equal(rl_recorder_run_dir(c), dir_a);
    assert_string_not_equal(rl_recorder_run_dir(c), dir_b);
    end_run(b);
    end_run(c);
    rl_test_tmpdir_free(home);
}

/* A given run id is the caller's: used once, refused after, in the same second too. */
static void test_given_id_is_still_refused(void **state)
{
    (void)state;
    char *home = rl_test_tmpdir();
    rl_record_options o;
    options(&o, home);
    rl_recorder *r = NULL;
    assert_int_equal(rl_recorder_new(&r, &o), RL_OK);
    rl_record_run run = {.run_id = "same"};
    assert_int_equal(rl_recorder_prepare(r, &run), RL_OK);
    end_run(r);
    assert_int_equal(rl_recorder_new(&r, &o), RL_OK);
    assert_int_equal(rl_recorder_prepare(r, &run), RL_EEXIST);
    assert_non_null(strstr(rl_error_last(), "run id 'same' is already used"));
    rl_recorder_free(r);
    rl_test_tmpdir_free(home);
}

struct watcher {
    rl_recorder *r;
    atomic_int stop;
    char seen[PATH_MAX];
    int bad;
};

/* Reads the names as a heartbeat or a status poller does, while prepare runs. */
static void *watch(void *arg)
{
    struct watcher *w = arg;
    while (!atomic_load(&w->stop)) {
        rl_record_status s;
        rl_recorder_status(w->r, &s);
        size_t a = strlen(s.run_dir), b = strlen(s.run_id), c = strlen(rl_recorder_run_dir(w->r));
        if (a && !w->seen[0])
            snprintf(w->seen, sizeof w->seen, "%s", s.run_dir);
        if (a && strcmp(s.run_dir, w->seen) != 0)
            w->bad = 1;
        if ((a == 0) != (b == 0) || (c && c != strlen(w->seen) && w->seen[0]))
            w->bad = 1;
    }
    return NULL;
}

static void test_names_read_while_prepare_fills_them(void **state)
{
    (void)state;
    char *home = rl_test_tmpdir();
    rl_record_options o;
    options(&o, home);
    o.heartbeat_interval_ns = 10 * 1000000ll;
    for (int i = 0; i < 3; i++) {
        struct watcher w = {0};
        assert_int_equal(rl_recorder_new(&w.r, &o), RL_OK);
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, watch, &w), 0);
        char id[32];
        snprintf(id, sizeof id, "race-%d", i);
        rl_record_run run = {.run_id = id};
        assert_int_equal(rl_recorder_prepare(w.r, &run), RL_OK);
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", rl_recorder_run_dir(w.r));
        rl_record_status s;
        rl_recorder_status(w.r, &s);
        assert_string_equal(s.run_id, id);
        atomic_store(&w.stop, 1);
        pthread_join(t, NULL);
        assert_int_equal(w.bad, 0);
        if (w.seen[0])
            assert_string_equal(w.seen, dir);
        end_run(w.r);
    }
    rl_test_tmpdir_free(home);
}

static void test_compression_names_round_trip(void **state)
{
    (void)state;
    const rl_record_compression all[] = {RL_RECORD_COMPRESSION_NONE, RL_RECORD_COMPRESSION_ZSTD,
                                         RL_RECORD_COMPRESSION_LZ4};
    for (size_t i = 0; i < 3; i++) {
        rl_record_compression c = (rl_record_compression)99;
        assert_int_equal(rl_record_compression_from_name(rl_record_compression_name(all[i]), &c),
                         RL_OK);
        assert_int_equal(c, all[i]);
    }
    const char *bad[] = {"ZSTD", "", "zstd ", "xz", NULL};
    for (size_t i = 0; i < 5; i++) {
        rl_record_compression c = RL_RECORD_COMPRESSION_LZ4;
        assert_int_equal(rl_record_compression_from_name(bad[i], &c), RL_EINVAL);
        assert_int_equal(c, RL_RECORD_COMPRESSION_LZ4); /* unchanged */
        assert_non_null(strstr(rl_error_last(), "is not none, zstd or lz4"));
    }
}

/* Each compression's level range, and the one check that uses it: the edges pass, one
 * past either edge fails with the range named; an unknown compression has no range. */
static void test_compression_level_ranges(void **state)
{
    (void)state;
    const struct {
        rl_record_compression c;
        int min, max;
    } want[] = {{RL_RECORD_COMPRESSION_NONE, 0, 0},
                {RL_RECORD_COMPRESSION_ZSTD, -7, 22},
                {RL_RECORD_COMPRESSION_LZ4, 0, 12}};
    for (size_t i = 0; i < 3; i++) {
        int min = 99, max = -99;
        assert_int_equal(rl_record_compression_level_range(want[i].c, &min, &max), RL_OK);
        assert_int_equal(min, want[i].min);
        assert_int_equal(max, want[i].max);
        assert_int_equal(rl_record_compression_level_check(want[i].c, min), RL_OK);
        assert_int_equal(rl_record_compression_level_check(want[i].c, max), RL_OK);
        assert_int_equal(rl_record_compression_level_check(want[i].c, min - 1), RL_EINVAL);
        assert_int_equal(rl_record_compression_level_check(want[i].c, max + 1), RL_EINVAL);
    }
    assert_int_equal(rl_record_compression_level_check(RL_RECORD_COMPRESSION_LZ4, 13), RL_EINVAL);
    assert_string_equal(rl_error_last(), "13 is not 0..12 for lz4");
    assert_int_equal(rl_record_compression_level_check(RL_RECORD_COMPRESSION_ZSTD, -8), RL_EINVAL);
    assert_string_equal(rl_error_last(), "-8 is not -7..22 for zstd");
    int min, max;
    assert_int_equal(rl_record_compression_level_range((rl_record_compression)3, &min, &max),
                     RL_EINVAL);
}

/* The run's parameter snapshots and scenario: the scenario given to prepare is the
 * manifest's; rl_recorder_set_nodes replaces both (config/nodes.json and the manifest's
 * scenario, rewritten at once) while ARMED or RECORDING, refuses text that is no JSON
 * object (changing nothing) and any other state. */
static void test_nodes_and_scenario(void **state)
{
    (void)state;
    char *home = rl_test_tmpdir();
    rl_record_options o;
    options(&o, home);
    rl_recorder *r = NULL;
    assert_int_equal(rl_recorder_new(&r, &o), RL_OK);
    assert_int_equal(rl_recorder_set_nodes(r, "{}", NULL), RL_ESTATE); /* IDLE */
    rl_record_run run = {.run_id = "scenario-1", .nodes_json = "{\"a\": {\"parameters\": {\"x\": 1}}}",
                         .scenario_json = "{\"a\": {\"seed\": 7}}"};
    assert_int_equal(rl_recorder_prepare(r, &run), RL_OK);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/manifest.json", rl_recorder_run_dir(r));
    char *m = rl_test_read_file(path, NULL);
    assert_non_null(strstr(m, "\"scenario\": {\n    \"a\": {\n      \"seed\": 7"));
    free(m);
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    assert_int_equal(rl_recorder_set_nodes(r, "[1]", NULL), RL_EINVAL);
    assert_int_equal(rl_recorder_set_nodes(r, NULL, "not json"), RL_EINVAL);
    assert_int_equal(rl_recorder_set_nodes(r, "{\"b\": {\"parameters\": {\"y\": 2}}}",
                                           "{\"b\": {\"faults\": [\"drift:1:2\"]}}"), RL_OK);
    snprintf(path, sizeof path, "%s/config/nodes.json", rl_recorder_run_dir(r));
    char *nodes = rl_test_read_file(path, NULL);
    assert_non_null(strstr(nodes, "\"b\""));
    assert_null(strstr(nodes, "\"a\""));
    free(nodes);
    snprintf(path, sizeof path, "%s/manifest.json", rl_recorder_run_dir(r));
    m = rl_test_read_file(path, NULL);
    assert_non_null(strstr(m, "drift:1:2"));
    assert_null(strstr(m, "\"seed\": 7"));
    free(m);
    assert_int_equal(rl_recorder_finish(r, "test"), RL_OK);
    assert_int_equal(rl_recorder_wait(r), RL_OK);
    assert_int_equal(rl_recorder_set_nodes(r, "{}", NULL), RL_ESTATE);
    m = rl_test_read_file(path, NULL); /* the final manifest keeps the scenario */
    assert_non_null(strstr(m, "drift:1:2"));
    free(m);
    rl_recorder_free(r);
    rl_test_tmpdir_free(home);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated_ids_in_one_second_do_not_collide),
        cmocka_unit_test(test_given_id_is_still_refused),
        cmocka_unit_test(test_names_read_while_prepare_fills_them),
        cmocka_unit_test(test_compression_names_round_trip),
        cmocka_unit_test(test_compression_level_ranges),
        cmocka_unit_test(test_nodes_and_scenario),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
