/* Tests of the tick choice and tick labels of runlab/plot.h: 1-2-5 steps, decades on log
 * axes, SI prefixes, powers of ten and the typographic minus. */
#include "rl_test.h"

#include "runlab/plot.h"

#include <math.h>
#include <string.h>

static void assert_ticks(const double *got, int n, const double *want, int m)
{
    assert_int_equal(n, m);
    for (int i = 0; i < n; i++)
        assert_true(fabs(got[i] - want[i]) <= 1e-12 * fmax(1, fabs(want[i])));
}

static void test_linear_unit_range(void **state)
{
    (void)state;
    double t[64], step = 0;
    int n = rl_plot_ticks_linear(0, 1, 6, t, 64, &step);
    const double want[] = {0, 0.2, 0.4, 0.6, 0.8, 1.0};
    assert_ticks(t, n, want, 6);
    assert_true(fabs(step - 0.2) < 1e-15);
    /* Exact multiples, not accumulated sums: 0.6 must print as 0.6. */
    assert_true(t[3] == 3 * 0.2);
}

static void test_linear_zero_to_seven(void **state)
{
    (void)state;
    double t[64], step = 0;
    int n = rl_plot_ticks_linear(0, 7, 6, t, 64, &step);
    const double want[] = {0, 2, 4, 6};
    assert_ticks(t, n, want, 4);
    n = rl_plot_ticks_linear(0, 7, 8, t, 64, &step);
    assert_int_equal(n, 8);
    assert_true(step == 1);
}

static void test_linear_steps_are_1_2_5(void **state)
{
    (void)state;
    double t[64], step;
    const double ranges[][2] = {{-3.7, 12.2},  {1e6, 1.3e6}, {0.0012, 0.0019},
                                {-1e-9, 5e-9}, {17, 18},     {-500, -20}};
    for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++) {
        int n = rl_plot_ticks_linear(ranges[k][0], ranges[k][1], 7, t, 64, &step);
        assert_true(n >= 2 && n <= 7);
        double mant = step / pow(10, floor(log10(step) + 1e-12));
        assert_true(fabs(mant - 1) < 1e-9 || fabs(mant - 2) < 1e-9 || fabs(mant - 5) < 1e-9);
        for (int i = 0; i < n; i++) {
            assert_true(t[i] >= ranges[k][0] - 1e-12 * fabs(ranges[k][0]));
            assert_true(t[i] <= ranges[k][1] + 1e-12 * fabs(ranges[k][1]));
        }
    }
}

static void test_linear_degenerate(void **state)
{
    (void)state;
    double t[8], step;
    assert_int_equal(rl_plot_ticks_linear(5, 5, 6, t, 8, &step), 1);
    assert_true(t[0] == 5);
    assert_int_equal(rl_plot_ticks_linear(NAN, 1, 6, t, 8, &step), 0);
    assert_int_equal(rl_plot_ticks_linear(2, 1, 6, t, 8, &step), 0);
}

static void test_log_decades(void **state)
{
    (void)state;
    double t[64];
    int n = rl_plot_ticks_log(1, 1e6, 10, t, 64);
    const double want[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
    assert_ticks(t, n, want, 7);
    n = rl_plot_ticks_log(1, 1e6, 4, t, 64);
    const double thin[] = {1, 100, 1e4, 1e6};
    assert_ticks(t, n, thin, 4);
    /* Less than two decades: 1-2-5 ticks. */
    n = rl_plot_ticks_log(1, 30, 10, t, 64);
    const double fill[] = {1, 2, 5, 10, 20};
    assert_ticks(t, n, fill, 5);
    assert_int_equal(rl_plot_ticks_log(0, 10, 5, t, 64), 0);
    assert_int_equal(rl_plot_ticks_log(-1, 10, 5, t, 64), 0);
}

static void check_label(double v, double step, const char *want)
{
    char buf[64];
    rl_plot_format_tick(v, step, buf, sizeof buf);
    if (strcmp(buf, want) != 0)
        fail_msg("format_tick(%g, %g) = '%s', want '%s'", v, step, buf, want);
}

static void test_labels(void **state)
{
    (void)state;
    check_label(0, 0.2, "0.0");
    check_label(0, 5, "0");
    check_label(0, 5e-6, "0");
    check_label(0.6000000000000001, 0.2, "0.6");
    check_label(1, 0.2, "1.0");
    check_label(-0.5, 0.25,
                "\xE2\x88\x92"
                "0.50");
    check_label(1500000, 500000, "1.5M");
    check_label(2e6, 500000, "2M");
    check_label(20000, 5000, "20k");
    check_label(2.5e-6, 5e-7, "2.5\xC2\xB5");
    check_label(0.005, 0.001, "5m");
    check_label(250, 50, "250");
    check_label(1e9, 1e9, "1G");
    check_label(-3e4, 1e4,
                "\xE2\x88\x92"
                "30k");
    char buf[4];
    assert_int_equal(rl_plot_format_tick(123456789, 1, buf, sizeof buf), 3);
    assert_int_equal(strlen(buf), 3);
}

static void test_pow10(void **state)
{
    (void)state;
    char buf[32];
    rl_plot_format_pow10(1e-3, buf, sizeof buf);
    assert_string_equal(buf, "10\xE2\x81\xBB\xC2\xB3");
    rl_plot_format_pow10(1e12, buf, sizeof buf);
    assert_string_equal(buf, "10\xC2\xB9\xC2\xB2");
    rl_plot_format_pow10(1, buf, sizeof buf);
    assert_string_equal(buf, "10\xE2\x81\xB0");
}

static void test_palette(void **state)
{
    (void)state;
    assert_int_equal(rl_plot_palette(0), 0x0072B2);
    assert_int_equal(rl_plot_palette(1), 0xE69F00);
    assert_int_equal(rl_plot_palette(8), 0x0072B2);
    assert_int_equal(rl_plot_palette(-1), 0xF0E442);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear_unit_range),
        cmocka_unit_test(test_linear_zero_to_seven),
        cmocka_unit_test(test_linear_steps_are_1_2_5),
        cmocka_unit_test(test_linear_degenerate),
        cmocka_unit_test(test_log_decades),
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_pow10),
        cmocka_unit_test(test_palette),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
