/* Tests of runlab/progress.h: plain-line output at 10% steps, the terminal form with a
 * bar and ETA, unknown totals, and duration formatting. */
#include "rl_test.h"

#include "runlab/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *capture(int force_tty, uint64_t total, uint64_t steps)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    rl_progress *p;
    assert_int_equal(rl_progress_new(&p, f, "runs", total, force_tty), 0);
    for (uint64_t i = 1; i <= steps; i++)
        rl_progress_update(p, i, i == steps ? "last" : NULL);
    rl_progress_finish(p);
    fclose(f);
    return buf;
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_plain_lines_every_ten_percent(void **state)
{
    (void)state;
    char *out = capture(0, 1000, 1000);
    /* Deciles 0..9 once each (first at 1/1000 = 0%), then the final line. */
    assert_int_equal(count(out, "progress: "), 11);
    assert_non_null(strstr(out, "progress: 100/1000 runs (10%)"));
    assert_non_null(strstr(out, "progress: 1000/1000 runs (100%)"));
    assert_non_null(strstr(out, ", last\n"));
    assert_null(strchr(out, '\r'));
    free(out);
}

static void test_tty_bar(void **state)
{
    (void)state;
    char *out = capture(1, 4, 4);
    assert_non_null(strstr(out, "\r\033[K["));
    assert_non_null(strstr(out, "4/4 runs"));
    assert_non_null(strstr(out, "##############################]"));
    assert_int_equal(out[strlen(out) - 1], '\n');
    free(out);
}

static void test_unknown_total(void **state)
{
    (void)state;
    char *out = capture(0, 0, 5);
    assert_non_null(strstr(out, "progress: 5 runs"));
    assert_null(strstr(out, "ETA"));
    free(out);
}

static void test_durations(void **state)
{
    (void)state;
    char buf[16];
    rl_progress_format_duration(42.4, buf, sizeof buf);
    assert_string_equal(buf, "42s");
    rl_progress_format_duration(185, buf, sizeof buf);
    assert_string_equal(buf, "3m05s");
    rl_progress_format_duration(7620, buf, sizeof buf);
    assert_string_equal(buf, "2h07m");
    rl_progress_format_duration(-1, buf, sizeof buf);
    assert_string_equal(buf, "--");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_lines_every_ten_percent),
        cmocka_unit_test(test_tty_bar),
        cmocka_unit_test(test_unknown_total),
        cmocka_unit_test(test_durations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
