/* Tests of runlab/fs.h: atomic writes, never-reused directories (also under a race
 * between processes), bounded reads, free space and checking of user-supplied names. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/fs.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static void test_atomic_write_replaces_and_leaves_no_temp(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    assert_int_equal(rl_fs_write_atomic(path, "old", 3, 0644), RL_OK);
    assert_int_equal(rl_fs_write_atomic(path, "new content", 11, 0600), RL_OK);
    size_t len;
    char *got = rl_test_read_file(path, &len);
    assert_int_equal(len, 11);
    assert_memory_equal(got, "new content", 11);
    free(got);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(count_entries(dir), 1); /* no temporary file left behind */
    rl_test_tmpdir_free(dir);
}

static void test_atomic_write_failure_keeps_old(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/missing-dir/file", dir);
    assert_int_equal(rl_fs_write_atomic(path, "x", 1, 0644), RL_ENOENT);
    assert_non_null(strstr(rl_error_last(), "missing-dir/file"));
    rl_test_tmpdir_free(dir);
}

static void test_read_all_bounds(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/f", dir);
    rl_test_write_file(path, "0123456789", 10);
    char *buf;
    size_t len;
    assert_int_equal(rl_fs_read_all(path, 9, &buf, &len), RL_ERANGE);
    assert_null(buf);
    assert_non_null(strstr(rl_error_last(), "10 bytes"));
    assert_int_equal(rl_fs_read_all(path, 10, &buf, &len), RL_OK);
    assert_int_equal(len, 10);
    assert_int_equal(buf[10], '\0');
    free(buf);
    assert_int_equal(rl_fs_read_all(dir, 100, &buf, &len), RL_EINVAL);
    rl_test_tmpdir_free(dir);
}

static void test_mkdir_new_never_reuses(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char out[PATH_MAX];
    assert_int_equal(rl_fs_mkdir_new(dir, "run", RL_MKDIR_FAIL_IF_EXISTS, out, sizeof out), RL_OK);
    assert_int_equal(rl_fs_mkdir_new(dir, "run", RL_MKDIR_FAIL_IF_EXISTS, out, sizeof out),
                     RL_EEXIST);
    assert_non_null(strstr(rl_error_last(), "never reuses"));
    assert_int_equal(rl_fs_mkdir_new(dir, "run", RL_MKDIR_ADD_SUFFIX, out, sizeof out), RL_OK);
    assert_non_null(strstr(out, "/run_2"));
    assert_int_equal(rl_fs_mkdir_new(dir, "run", RL_MKDIR_ADD_SUFFIX, out, sizeof out), RL_OK);
    assert_non_null(strstr(out, "/run_3"));
    assert_int_equal(rl_fs_mkdir_new(dir, "../escape", RL_MKDIR_ADD_SUFFIX, out, sizeof out),
                     RL_EINVAL);
    rl_test_tmpdir_free(dir);
}

/* Eight processes race for the same name 10 times each: every process gets a distinct
 * directory, and exactly 80 exist afterwards. */
static void test_mkdir_new_race_between_processes(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    enum { PROCS = 8, EACH = 10 };
    for (int p = 0; p < PROCS; p++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            char out[PATH_MAX];
            for (int i = 0; i < EACH; i++) {
                if (rl_fs_mkdir_new(dir, "race", RL_MKDIR_ADD_SUFFIX, out, sizeof out) != RL_OK)
                    _exit(1);
                char line[PATH_MAX + 2];
                int n = snprintf(line, sizeof line, "%s\n", out);
                if (write(fds[1], line, (size_t)n) != n)
                    _exit(2);
            }
            _exit(0);
        }
    }
    close(fds[1]);
    for (int p = 0; p < PROCS; p++) {
        int status;
        wait(&status);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    FILE *f = fdopen(fds[0], "r");
    char lines[PROCS * EACH][PATH_MAX];
    int n = 0;
    while (n < PROCS * EACH && fgets(lines[n], PATH_MAX, f))
        n++;
    fclose(f);
    assert_int_equal(n, PROCS * EACH);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            assert_string_not_equal(lines[i], lines[j]);
    assert_int_equal(count_entries(dir), PROCS * EACH);
    rl_test_tmpdir_free(dir);
}

static void test_free_bytes(void **state)
{
    (void)state;
    uint64_t free_bytes = 0;
    assert_int_equal(rl_fs_free_bytes("/", &free_bytes), RL_OK);
    assert_true(free_bytes > 0);
    assert_int_equal(rl_fs_free_bytes("/no/such/dir", &free_bytes), RL_ENOENT);
}

static void test_check_name(void **state)
{
    (void)state;
    assert_int_equal(rl_path_check_name("run_01-a.b", "run id"), RL_OK);
    assert_int_equal(rl_path_check_name("RRT*", "planner"), RL_OK);
    const char *bad[] = {"", ".", "..", "a/b", "a\\b", "-rf", " x", "a\nb", "tab\there", "\x7f"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(rl_path_check_name(bad[i], "run id"), RL_EINVAL);
        assert_non_null(strstr(rl_error_last(), "run id"));
    }
    char longname[RL_NAME_MAX + 2];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(rl_path_check_name(longname, "run id"), RL_EINVAL);
    longname[RL_NAME_MAX] = '\0';
    assert_int_equal(rl_path_check_name(longname, "run id"), RL_OK);
    assert_int_equal(rl_path_check_name("a\x01", "topic"), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "byte 1 is control character 0x01"));
}

static void test_join(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(rl_path_join(out, sizeof out, "/data", "run1"), RL_OK);
    assert_string_equal(out, "/data/run1");
    assert_int_equal(rl_path_join(out, sizeof out, "/data", ".."), RL_EINVAL);
    assert_int_equal(rl_path_join(out, 8, "/data", "run1"), RL_ERANGE);
    assert_int_equal(rl_path_join_rel(out, sizeof out, "/d", "task/ds/scene"), RL_OK);
    assert_string_equal(out, "/d/task/ds/scene");
    assert_int_equal(rl_path_join_rel(out, sizeof out, "/d", "a/../b"), RL_EINVAL);
    assert_int_equal(rl_path_join_rel(out, sizeof out, "/d", "/etc"), RL_EINVAL);
    assert_int_equal(rl_path_join_rel(out, sizeof out, "/d", "a//b"), RL_EINVAL);
    assert_int_equal(rl_path_join_rel(out, sizeof out, "/d", ""), RL_EINVAL);
}

static void test_sanitize(void **state)
{
    (void)state;
    char out[RL_NAME_MAX + 1];
    rl_path_sanitize_name("/tf_static", out);
    assert_string_equal(out, "_tf_static");
    assert_int_equal(rl_path_check_name(out, "x"), RL_OK);
    rl_path_sanitize_name("..", out);
    assert_int_equal(rl_path_check_name(out, "x"), RL_OK);
    rl_path_sanitize_name("", out);
    assert_int_equal(rl_path_check_name(out, "x"), RL_OK);
    rl_path_sanitize_name("a\nb/c", out);
    assert_string_equal(out, "a_b_c");
}

static void test_mkdirs_and_remove(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char deep[PATH_MAX];
    snprintf(deep, sizeof deep, "%s/a/b/c", dir);
    assert_int_equal(rl_fs_mkdirs(deep), RL_OK);
    assert_int_equal(rl_fs_mkdirs(deep), RL_OK);
    char file[PATH_MAX + 8];
    snprintf(file, sizeof file, "%s/f", deep);
    rl_test_write_file(file, "x", 1);
    assert_int_equal(rl_fs_mkdirs(file), RL_EEXIST);
    char top[PATH_MAX];
    snprintf(top, sizeof top, "%s/a", dir);
    assert_int_equal(rl_fs_remove_tree(top), RL_OK);
    assert_int_equal(count_entries(dir), 0);
    rl_test_tmpdir_free(dir);
}

/* rl_fs_mkdir_in (issue 29 item 7): a link in the place of the directory is refused and its
 * target stays untouched, whether it points to a directory, to nothing or to a file. */
static void test_mkdir_in_refuses_links(void **state)
{
    (void)state;
    char *dir = rl_test_tmpdir();
    char run[PATH_MAX], outside[PATH_MAX], link[PATH_MAX + 16], out[PATH_MAX + 32];
    snprintf(run, sizeof run, "%s/run", dir);
    snprintf(outside, sizeof outside, "%s/outside", dir);
    assert_int_equal(mkdir(run, 0755), 0);
    assert_int_equal(mkdir(outside, 0755), 0);

    assert_int_equal(rl_fs_mkdir_in(run, "new", out, sizeof out), RL_OK);
    struct stat st;
    assert_int_equal(lstat(out, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(rl_fs_mkdir_in(run, "new", out, sizeof out), RL_OK); /* already there */

    snprintf(link, sizeof link, "%s/evaluations", run);
    assert_int_equal(symlink(outside, link), 0);
    assert_int_equal(rl_fs_mkdir_in(run, "evaluations", out, sizeof out), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "evaluations: is a symbolic link"));
    assert_int_equal(count_entries(outside), 0);

    snprintf(link, sizeof link, "%s/dangling", run);
    assert_int_equal(symlink("no-such-dir", link), 0);
    assert_int_equal(rl_fs_mkdir_in(run, "dangling", out, sizeof out), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "dangling: is a symbolic link"));
    char target[PATH_MAX + 16];
    snprintf(target, sizeof target, "%s/no-such-dir", run);
    assert_int_not_equal(access(target, F_OK), 0);

    snprintf(link, sizeof link, "%s/file", run);
    rl_test_write_file(link, "x", 1);
    assert_int_equal(rl_fs_mkdir_in(run, "file", out, sizeof out), RL_EEXIST);
    assert_non_null(strstr(rl_error_last(), "not a directory"));
    assert_int_equal(rl_fs_mkdir_in(run, "../escape", out, sizeof out), RL_EINVAL);
    rl_test_tmpdir_free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_atomic_write_replaces_and_leaves_no_temp),
        cmocka_unit_test(test_atomic_write_failure_keeps_old),
        cmocka_unit_test(test_read_all_bounds),
        cmocka_unit_test(test_mkdir_new_never_reuses),
        cmocka_unit_test(test_mkdir_new_race_between_processes),
        cmocka_unit_test(test_free_bytes),
        cmocka_unit_test(test_check_name),
        cmocka_unit_test(test_join),
        cmocka_unit_test(test_sanitize),
        cmocka_unit_test(test_mkdirs_and_remove),
        cmocka_unit_test(test_mkdir_in_refuses_links),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
