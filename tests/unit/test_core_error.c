/* Tests of runlab/error.h and runlab/log.h: the thread-local last-error slot and levels. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/log.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

static void test_set_returns_code_and_keeps_message(void **state)
{
    (void)state;
    rl_error_clear();
    assert_int_equal(rl_error_last_code(), RL_OK);
    assert_string_equal(rl_error_last(), "");
    int rc = rl_error_set(RL_EPARSE, "file %s line %d", "a.csv", 7);
    assert_int_equal(rc, RL_EPARSE);
    assert_int_equal(rl_error_last_code(), RL_EPARSE);
    assert_string_equal(rl_error_last(), "file a.csv line 7");
}

static void test_errno_and_prefix(void **state)
{
    (void)state;
    rl_error_set_errno(RL_EIO, ENOENT, "open %s", "x.json");
    assert_string_equal(rl_error_last(), "open x.json: No such file or directory");
    rl_error_prefix(RL_EPARSE, "run %d", 3);
    assert_string_equal(rl_error_last(), "run 3: open x.json: No such file or directory");
    assert_int_equal(rl_error_last_code(), RL_EPARSE);
}

/* The old message as an argument of the new one: the common "%s: %s", where, why. */
static void test_last_message_as_argument(void **state)
{
    (void)state;
    rl_error_set(RL_EIO, "disk on fire");
    rl_error_set(RL_EPARSE, "results.json: planners[0]: %s", rl_error_last());
    assert_string_equal(rl_error_last(), "results.json: planners[0]: disk on fire");
    rl_error_set_errno(RL_EIO, ENOENT, "reading %s", rl_error_last());
    assert_string_equal(rl_error_last(),
                        "reading results.json: planners[0]: disk on fire: No such file or directory");
}

static void test_long_message_truncated(void **state)
{
    (void)state;
    char big[4000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    rl_error_set(RL_ERR, "%s", big);
    assert_int_equal(strlen(rl_error_last()), 1023);
}

static void *other_thread(void *arg)
{
    (void)arg;
    /* A fresh thread starts with no error, and its error does not leak to others. */
    int clean = rl_error_last_code() == RL_OK && rl_error_last()[0] == '\0';
    rl_error_set(RL_ENOMEM, "thread-local");
    return (void *)(intptr_t)clean;
}

static void test_thread_local(void **state)
{
    (void)state;
    rl_error_set(RL_EINVAL, "main thread");
    pthread_t t;
    void *clean = NULL;
    assert_int_equal(pthread_create(&t, NULL, other_thread, NULL), 0);
    pthread_join(t, &clean);
    assert_true((intptr_t)clean);
    assert_string_equal(rl_error_last(), "main thread");
    assert_int_equal(rl_error_last_code(), RL_EINVAL);
}

static void test_status_names(void **state)
{
    (void)state;
    assert_string_equal(rl_status_name(RL_EPARSE), "EPARSE");
    assert_string_equal(rl_status_name(RL_OK), "OK");
    assert_string_equal(rl_status_name(-999), "UNKNOWN");
}

static void test_log_levels(void **state)
{
    (void)state;
    rl_log_level lvl;
    assert_int_equal(rl_log_level_parse("debug", &lvl), RL_OK);
    assert_int_equal(lvl, RL_LOG_DEBUG);
    assert_int_equal(rl_log_level_parse("loud", &lvl), RL_EINVAL);
    assert_non_null(strstr(rl_error_last(), "loud"));
    rl_log_set_level(RL_LOG_ERROR);
    assert_int_equal(rl_log_get_level(), RL_LOG_ERROR);
    rl_log_info("not shown");
    rl_log_set_level(RL_LOG_WARN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_returns_code_and_keeps_message),
        cmocka_unit_test(test_errno_and_prefix),
        cmocka_unit_test(test_last_message_as_argument),
        cmocka_unit_test(test_long_message_truncated),
        cmocka_unit_test(test_thread_local),
        cmocka_unit_test(test_status_names),
        cmocka_unit_test(test_log_levels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
