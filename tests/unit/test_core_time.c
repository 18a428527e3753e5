/* Tests of runlab/time.h: formatting and parsing of UTC stamps, calendar edge cases,
 * and the monotonic clock. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/time.h"

#include <string.h>

static const int64_t NS = 1000000000LL;

static void test_format_known_instant(void **state)
{
    (void)state;
    /* 2026-11-29T20:15:00Z = 1795983300 s since the epoch. */
    int64_t t = 1795983300LL * NS + 123456789;
    char buf[RL_TIME_ISO_LEN];
    assert_int_equal(rl_time_format_iso(t, buf, sizeof buf), RL_OK);
    assert_string_equal(buf, "2026-11-29T20:15:00.123456789Z");
    char compact[RL_TIME_COMPACT_LEN];
    assert_int_equal(rl_time_format_compact(t, compact, sizeof compact), RL_OK);
    assert_string_equal(compact, "20261129T201500Z");
    char dir[RL_TIME_DIRSTAMP_LEN];
    assert_int_equal(rl_time_format_dirstamp(t, dir, sizeof dir), RL_OK);
    assert_string_equal(dir, "20261129_201500");
}

static void test_format_epoch_and_negative(void **state)
{
    (void)state;
    char buf[RL_TIME_ISO_LEN];
    assert_int_equal(rl_time_format_iso(0, buf, sizeof buf), RL_OK);
    assert_string_equal(buf, "1970-01-01T00:00:00.000000000Z");
    assert_int_equal(rl_time_format_iso(-1, buf, sizeof buf), RL_OK);
    assert_string_equal(buf, "1969-12-31T23:59:59.999999999Z");
    /* Leap day of a century leap year. */
    int64_t t;
    assert_int_equal(rl_time_parse_iso("2000-02-29T12:00:00Z", &t), RL_OK);
    assert_int_equal(rl_time_format_iso(t, buf, sizeof buf), RL_OK);
    assert_string_equal(buf, "2000-02-29T12:00:00.000000000Z");
}

static void test_format_buffer_too_small(void **state)
{
    (void)state;
    char small[10];
    assert_int_equal(rl_time_format_iso(0, small, sizeof small), RL_ERANGE);
    assert_non_null(strstr(rl_error_last(), "too small"));
}

static void test_parse_forms(void **state)
{
    (void)state;
    int64_t t;
    assert_int_equal(rl_time_parse_iso("2026-11-29T20:15:00Z", &t), RL_OK);
    assert_int_equal(t, 1795983300LL * NS);
    assert_int_equal(rl_time_parse_iso("2026-11-29T20:15:00.5Z", &t), RL_OK);
    assert_int_equal(t, 1795983300LL * NS + 500000000);
    assert_int_equal(rl_time_parse_iso("2026-11-29T21:15:00.000000001+01:00", &t), RL_OK);
    assert_int_equal(t, 1795983300LL * NS + 1);
    assert_int_equal(rl_time_parse_iso("2026-11-29T20:15:00+00:00", &t), RL_OK);
    assert_int_equal(t, 1795983300LL * NS);
}

static void test_parse_errors_name_offset(void **state)
{
    (void)state;
    int64_t t;
    assert_int_equal(rl_time_parse_iso("2026-11-29 20:15:00Z", &t), RL_EPARSE);
    assert_non_null(strstr(rl_error_last(), "byte 10"));
    assert_int_equal(rl_time_parse_iso("2026-11-29T20:15:00", &t), RL_EPARSE);
    assert_non_null(strstr(rl_error_last(), "time zone"));
    assert_int_equal(rl_time_parse_iso("2026-02-30T00:00:00Z", &t), RL_EPARSE);
    assert_non_null(strstr(rl_error_last(), "out of range"));
    assert_int_equal(rl_time_parse_iso("2026-11-29T20:15:00.1234567890Z", &t), RL_EPARSE);
    assert_int_equal(rl_time_parse_iso("2026-11-29T20:15:00Zjunk", &t), RL_EPARSE);
    assert_non_null(strstr(rl_error_last(), "trailing"));
    assert_int_equal(rl_time_parse_iso("", &t), RL_EPARSE);
}

/* 64-bit nanoseconds hold 1677-09-21T00:12:43.145224192Z .. 2262-04-11T23:47:16.854775807Z:
 * both ends parse exactly, one nanosecond past either end and any later year is refused
 * (it wrapped around before, undefined behaviour caught by UBSan). */
static void test_parse_range_of_int64(void **state)
{
    (void)state;
    int64_t ns = 0;
    assert_int_equal(rl_time_parse_iso("2262-04-11T23:47:16.854775807Z", &ns), RL_OK);
    assert_true(ns == INT64_MAX);
    assert_int_equal(rl_time_parse_iso("1677-09-21T00:12:43.145224192Z", &ns), RL_OK);
    assert_true(ns == INT64_MIN);
    const char *out[] = {"2262-04-11T23:47:16.854775808Z", "2262-04-11T23:47:17Z",
                         "2300-01-01T00:00:00Z",           "9999-12-31T23:59:59.999999999Z",
                         "1677-09-21T00:12:43.145224191Z", "0000-01-01T00:00:00Z",
                         "2262-04-12T01:00:00+01:00x"};
    for (size_t i = 0; i + 1 < sizeof out / sizeof out[0]; i++) {
        ns = 42;
        assert_int_equal(rl_time_parse_iso(out[i], &ns), RL_ERANGE);
        assert_true(ns == 42);
        assert_non_null(strstr(rl_error_last(), out[i]));
        assert_non_null(strstr(rl_error_last(), "out of the range of 64-bit nanoseconds"));
    }
    /* an offset brings an instant back into range */
    assert_int_equal(rl_time_parse_iso("2262-04-12T00:47:16.854775807+01:00", &ns), RL_OK);
    assert_true(ns == INT64_MAX);
}

static void test_round_trip_many(void **state)
{
    (void)state;
    /* Every day across four centuries and odd nanoseconds round-trip exactly. */
    char buf[RL_TIME_ISO_LEN];
    for (int64_t day = -365 * 200; day < 365 * 200; day += 37) {
        int64_t t = day * 86400 * NS + (day * 7919 % 86400) * NS + (day & 0x3fffffff) % NS;
        if (t < 0)
            t = -t;
        int64_t back;
        assert_int_equal(rl_time_format_iso(t, buf, sizeof buf), RL_OK);
        assert_int_equal(rl_time_parse_iso(buf, &back), RL_OK);
        assert_int_equal(back, t);
    }
}

static void test_clocks(void **state)
{
    (void)state;
    int64_t a = rl_mono_ns();
    int64_t b = rl_mono_ns();
    assert_true(b >= a);
    /* The wall clock is after 2020-01-01 on any machine that runs this suite. */
    assert_true(rl_time_now_ns() > 1577836800LL * NS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_known_instant),
        cmocka_unit_test(test_format_epoch_and_negative),
        cmocka_unit_test(test_format_buffer_too_small),
        cmocka_unit_test(test_parse_forms),
        cmocka_unit_test(test_parse_errors_name_offset),
        cmocka_unit_test(test_parse_range_of_int64),
        cmocka_unit_test(test_round_trip_many),
        cmocka_unit_test(test_clocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
