/* Durability at the system-call level: fsync, rename and write are wrapped at link time
 * (-Wl,--wrap, see tests/CMakeLists.txt), so this test sees the calls librunlab makes and
 * can make them fail. Checked: every rename has its source fsynced after its last write and
 * before the rename, and the target's directory fsynced after it; a failing fsync or write
 * is reported with the path and leaves the old file as it was. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/record.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int __real_fsync(int fd);
int __real_rename(const char *from, const char *to);
ssize_t __real_write(int fd, const void *buf, size_t n);
int __wrap_fsync(int fd);
int __wrap_rename(const char *from, const char *to);
ssize_t __wrap_write(int fd, const void *buf, size_t n);

enum ev_kind { EV_WRITE, EV_FSYNC, EV_RENAME };
typedef struct event {
    enum ev_kind kind;
    char path[PATH_MAX];  /* written or fsynced file, rename source */
    char to[PATH_MAX];    /* rename target */
} event;

#define MAX_EVENTS 20000
static event events[MAX_EVENTS];
static size_t n_events;
static pthread_mutex_t ev_mu = PTHREAD_MUTEX_INITIALIZER;
static char watched[PATH_MAX];       /* only calls on paths under this directory count */
static char fail_fsync_of[PATH_MAX]; /* fsync of a path containing this fails with EIO */
static int fail_fsync_exact;         /* ... only of exactly this path */
static char fail_write_of[PATH_MAX]; /* write to a path containing this fails with ENOSPC */

/* The path behind an open descriptor, "" when it is not a file or directory we watch. */
static void fd_path(int fd, char *out, size_t cap)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, out, cap - 1);
    out[n > 0 ? n : 0] = '\0';
    if (!watched[0] || strncmp(out, watched, strlen(watched)) != 0)
        out[0] = '\0';
}

static void record_event(enum ev_kind kind, const char *path, const char *to)
{
    pthread_mutex_lock(&ev_mu);
    if (n_events < MAX_EVENTS) {
        event *e = &events[n_events++];
        e->kind = kind;
        snprintf(e->path, sizeof e->path, "%s", path);
        snprintf(e->to, sizeof e->to, "%s", to ? to : "");
    }
    pthread_mutex_unlock(&ev_mu);
}

int __wrap_fsync(int fd)
{
    char path[PATH_MAX];
    fd_path(fd, path, sizeof path);
    if (path[0]) {
        if (fail_fsync_of[0] && (fail_fsync_exact ? strcmp(path, fail_fsync_of) == 0
                                                  : strstr(path, fail_fsync_of) != NULL)) {
            errno = EIO;
            return -1;
        }
        record_event(EV_FSYNC, path, NULL);
    }
    return __real_fsync(fd);
}

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
    char path[PATH_MAX];
    fd_path(fd, path, sizeof path);
    if (path[0]) {
        if (fail_write_of[0] && strstr(path, fail_write_of)) {
            errno = ENOSPC;
            return -1;
        }
        record_event(EV_WRITE, path, NULL);
    }
    return __real_write(fd, buf, n);
}

int __wrap_rename(const char *from, const char *to)
{
    char rfrom[PATH_MAX], rto_dir[PATH_MAX], rto[PATH_MAX];
    /* Absolute, symlink-free names, as /proc/self/fd reports them. */
    if (!realpath(from, rfrom))
        snprintf(rfrom, sizeof rfrom, "%s", from);
    snprintf(rto_dir, sizeof rto_dir, "%s", to);
    char *slash = strrchr(rto_dir, '/');
    const char *base = slash ? slash + 1 : to;
    if (slash)
        *slash = '\0';
    else
        snprintf(rto_dir, sizeof rto_dir, ".");
    char dir_real[PATH_MAX];
    if (!realpath(rto_dir, dir_real))
        snprintf(dir_real, sizeof dir_real, "%s", rto_dir);
    snprintf(rto, sizeof rto, "%.*s/%.*s", PATH_MAX / 2, dir_real, PATH_MAX / 2 - 2, base);
    int rc = __real_rename(from, to);
    if (rc == 0 && watched[0] && strncmp(rfrom, watched, strlen(watched)) == 0)
        record_event(EV_RENAME, rfrom, rto);
    return rc;
}

static char *start_watching(void)
{
    char *dir = rl_test_tmpdir();
    assert_non_null(realpath(dir, watched));
    n_events = 0;
    fail_fsync_of[0] = fail_write_of[0] = '\0';
    fail_fsync_exact = 0;
    return dir;
}

static void stop_watching(char *dir)
{
    watched[0] = '\0';
    fail_fsync_of[0] = fail_write_of[0] = '\0';
    rl_test_tmpdir_free(dir);
}

/* The rule for every rename seen: the source was fsynced after its last write and before
 * the rename, and the target's directory is fsynced after the rename. Returns the number
 * of renames checked. */
static size_t check_renames(void)
{
    size_t renames = 0;
    for (size_t i = 0; i < n_events; i++) {
        if (events[i].kind != EV_RENAME)
            continue;
        renames++;
        const char *src = events[i].path;
        long last_write = -1, synced_after_write = -1;
        for (size_t j = 0; j < i; j++) {
            if (strcmp(events[j].path, src) != 0)
                continue;
            if (events[j].kind == EV_WRITE)
                last_write = (long)j, synced_after_write = -1;
            else if (events[j].kind == EV_FSYNC)
                synced_after_write = (long)j;
        }
        if (synced_after_write < 0 || synced_after_write < last_write)
            fail_msg("rename %s -> %s: the source was not fsynced after its last write (write "
                     "#%ld, fsync #%ld)", src, events[i].to, last_write, synced_after_write);
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", events[i].to);
        *strrchr(dir, '/') = '\0';
        int dir_synced = 0;
        for (size_t j = i + 1; j < n_events && !dir_synced; j++)
            dir_synced = events[j].kind == EV_FSYNC && strcmp(events[j].path, dir) == 0;
        if (!dir_synced)
            fail_msg("rename %s -> %s: directory %s not fsynced after it", src, events[i].to, dir);
    }
    return renames;
}

static size_t count_entries(const char *dir)
{
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    size_t n = 0;
    assert_int_equal(fscanf(f, "%zu", &n), 1);
    pclose(f);
    return n;
}

static void test_atomic_write_order(void **state)
{
    (void)state;
    char *dir = start_watching();
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/f.json", watched);
    assert_int_equal(rl_fs_write_atomic(path, "{\"v\":1}", 7, 0644), RL_OK);
    assert_int_equal(rl_fs_write_atomic(path, "{\"v\":2}", 7, 0644), RL_OK);
    assert_int_equal(check_renames(), 2);
    /* The rule is not empty: the events hold the data's write and both fsyncs. */
    size_t writes = 0, fsyncs = 0;
    for (size_t i = 0; i < n_events; i++)
        writes += events[i].kind == EV_WRITE, fsyncs += events[i].kind == EV_FSYNC;
    assert_true(writes >= 2);
    assert_true(fsyncs >= 4);
    char *text = rl_test_read_file(path, NULL);
    assert_string_equal(text, "{\"v\":2}");
    free(text);
    assert_int_equal(count_entries(watched), 1); /* no temporary file left */
    stop_watching(dir);
}

/* A failing fsync (EIO) or write (ENOSPC) of the temporary file: an error that names the
 * path and the call, the old file untouched, no temporary left behind. */
static void check_failure_keeps_old(int fail_fsync)
{
    char *dir = start_watching();
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/keep.json", watched);
    assert_int_equal(rl_fs_write_atomic(path, "old", 3, 0644), RL_OK);
    snprintf(fail_fsync ? fail_fsync_of : fail_write_of, PATH_MAX, "keep.json.tmp.");
    int rc = rl_fs_write_atomic(path, "new contents", 12, 0644);
    assert_int_not_equal(rc, RL_OK);
    const char *msg = rl_error_last();
    print_message("reported: %s\n", msg);
    assert_non_null(strstr(msg, "keep.json"));
    assert_non_null(strstr(msg, fail_fsync ? "fsync" : "write"));
    assert_non_null(strstr(msg, fail_fsync ? "Input/output error" : "No space left"));
    char *text = rl_test_read_file(path, NULL);
    assert_string_equal(text, "old");
    free(text);
    assert_int_equal(count_entries(watched), 1);
    stop_watching(dir);
}

static void test_failing_fsync_keeps_old_file(void **state)
{
    (void)state;
    check_failure_keeps_old(1);
}

static void test_failing_write_keeps_old_file(void **state)
{
    (void)state;
    check_failure_keeps_old(0);
}

/* A failing fsync of the directory after the rename is reported too: the new name is not
 * yet durable, and the caller must hear it. */
static void test_failing_directory_fsync_is_reported(void **state)
{
    (void)state;
    char *dir = start_watching();
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/d.json", watched);
    snprintf(fail_fsync_of, sizeof fail_fsync_of, "%s", watched);
    fail_fsync_exact = 1;
    int rc = rl_fs_write_atomic(path, "x", 1, 0644);
    assert_int_not_equal(rc, RL_OK);
    print_message("reported: %s\n", rl_error_last());
    assert_non_null(strstr(rl_error_last(), "fsync directory"));
    assert_non_null(strstr(rl_error_last(), watched));
    fail_fsync_of[0] = '\0';
    assert_int_equal(rl_fs_write_atomic(path, "y", 1, 0644), RL_OK);
    stop_watching(dir);
}

/* The recorder's run: every manifest rewrite follows the rule, the bag is fsynced after
 * its last write, and the final manifest is in place. */
static void test_recorder_run_files(void **state)
{
    (void)state;
    char *dir = start_watching();
    rl_record_options o;
    rl_record_options_default(&o);
    o.home = watched;
    o.minimum_free_bytes = 0;
    o.lab_domain = rl_test_domain();
    rl_recorder *r = NULL;
    assert_int_equal(rl_recorder_new(&r, &o), RL_OK);
    uint16_t t = 0;
    assert_int_equal(rl_recorder_add_topic(r, "/v", "", "", NULL, 0, "raw", &t), RL_OK);
    rl_record_run run = {.run_id = "durable"};
    assert_int_equal(rl_recorder_prepare(r, &run), RL_OK);
    assert_int_equal(rl_recorder_begin(r), RL_OK);
    char buf[64] = {0};
    for (int i = 0; i < 100; i++)
        assert_int_equal(rl_recorder_push(r, t, 1000 + i, 1000 + i, buf, sizeof buf), RL_OK);
    assert_int_equal(rl_recorder_finish(r, NULL), RL_OK);
    char bag[PATH_MAX];
    assert_non_null(realpath(rl_recorder_bag_path(r), bag));
    rl_recorder_free(r);

    size_t renames = check_renames();
    assert_true(renames >= 2); /* the manifest at prepare and at the end, at least */
    long last_write = -1, last_sync = -1;
    for (size_t i = 0; i < n_events; i++) {
        if (strcmp(events[i].path, bag) != 0)
            continue;
        if (events[i].kind == EV_WRITE)
            last_write = (long)i;
        else if (events[i].kind == EV_FSYNC)
            last_sync = (long)i;
    }
    assert_true(last_write >= 0);
    assert_true(last_sync > last_write);
    stop_watching(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_atomic_write_order),
        cmocka_unit_test(test_failing_fsync_keeps_old_file),
        cmocka_unit_test(test_failing_write_keeps_old_file),
        cmocka_unit_test(test_failing_directory_fsync_is_reported),
        cmocka_unit_test(test_recorder_run_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
