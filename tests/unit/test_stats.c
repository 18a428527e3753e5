/* Tests of runlab/stats.h against values worked out by hand (ranks, tie groups) and with
 * exact binomial sums (python3 math.comb, statistics.NormalDist): quantiles, the order-
 * statistic CI of the median (published rank tables: n=20 -> 6..15, n=100 -> 40..61),
 * and the Mann-Whitney U test with ties and continuity correction. */
#include "rl_test.h"

#include "runlab/error.h"
#include "runlab/stats.h"

#include <math.h>
#include <stdlib.h>

static void test_quantiles(void **state)
{
    (void)state;
    const double s[] = {1, 2, 3, 4, 10};
    double q;
    assert_int_equal(rl_stats_quantile_sorted(s, 5, 0.5, &q), RL_OK);
    assert_true(q == 3);
    assert_int_equal(rl_stats_quantile_sorted(s, 5, 0.25, &q), RL_OK);
    assert_true(q == 2);
    assert_int_equal(rl_stats_quantile_sorted(s, 5, 0.9, &q), RL_OK);
    assert_true(fabs(q - 7.6) < 1e-12); /* 4 + 0.6 * (10 - 4) */
    assert_int_equal(rl_stats_quantile_sorted(s, 5, 1, &q), RL_OK);
    assert_true(q == 10);
    const double inf_top[] = {1, 2, INFINITY};
    assert_int_equal(rl_stats_quantile_sorted(inf_top, 3, 0.5, &q), RL_OK);
    assert_true(q == 2);
    assert_int_equal(rl_stats_quantile_sorted(inf_top, 3, 0.75, &q), RL_OK);
    assert_true(isinf(q));
    assert_int_equal(rl_stats_quantile_sorted(s, 0, 0.5, &q), RL_EINVAL);
    assert_int_equal(rl_stats_quantile_sorted(s, 5, 1.5, &q), RL_EINVAL);

    const double even[] = {4, 1, 3, 2};
    assert_int_equal(rl_stats_median(even, 4, &q), RL_OK);
    assert_true(q == 2.5);
    assert_true(even[0] == 4); /* input untouched */
    const double bad[] = {1, NAN};
    assert_int_equal(rl_stats_median(bad, 2, &q), RL_EINVAL);
}

static void test_binomial(void **state)
{
    (void)state;
    assert_true(fabs(rl_stats_binom_half_cdf(10, 1) - 11.0 / 1024) < 1e-15);
    assert_true(fabs(rl_stats_binom_half_cdf(10, 2) - 56.0 / 1024) < 1e-15);
    assert_true(rl_stats_binom_half_cdf(10, 10) == 1);
    assert_true(fabs(rl_stats_binom_half_cdf(1000000, 500000) - 0.5004) < 1e-3);
    assert_true(fabs(rl_stats_normal_cdf(0) - 0.5) < 1e-15);
    assert_true(fabs(rl_stats_normal_cdf(1.959963984540054) - 0.975) < 1e-12);
}

static void test_median_ci(void **state)
{
    (void)state;
    double x[100];
    for (int i = 0; i < 100; i++)
        x[i] = (double)((i * 37) % 100) + 1; /* 1..100 shuffled: x(k) == k */
    rl_median_ci ci;
    /* n = 20: [x(6), x(15)], coverage 1 - 2 * 21700 / 2^20 */
    double s20[20];
    for (int i = 0; i < 20; i++)
        s20[i] = 21 - (i + 1); /* 20..1 */
    assert_int_equal(rl_stats_median_ci(s20, 20, 0.95, &ci), RL_OK);
    assert_true(ci.available);
    assert_int_equal(ci.k, 6);
    assert_true(ci.lo == 6 && ci.hi == 15);
    assert_true(ci.median == 10.5);
    assert_true(fabs(ci.coverage - 0.9586105346679688) < 1e-12);
    /* n = 100: ranks 40 and 61, coverage 0.9648 */
    assert_int_equal(rl_stats_median_ci(x, 100, 0.95, &ci), RL_OK);
    assert_int_equal(ci.k, 40);
    assert_true(ci.lo == 40 && ci.hi == 61);
    assert_true(fabs(ci.coverage - 0.9647997997822952) < 1e-12);
    /* n = 10: [x(2), x(9)], 1 - 2 * 11/1024 */
    const double ten[] = {9, 2, 7, 4, 5, 6, 3, 8, 1, 10};
    assert_int_equal(rl_stats_median_ci(ten, 10, 0.95, &ci), RL_OK);
    assert_true(ci.lo == 2 && ci.hi == 9);
    assert_true(fabs(ci.coverage - 0.978515625) < 1e-15);
    /* n = 6 is the smallest with 95%: [min, max], 1 - 2/64 */
    assert_int_equal(rl_stats_median_ci(ten, 6, 0.95, &ci), RL_OK);
    assert_true(ci.available && ci.k == 1 && ci.lo == 2 && ci.hi == 9);
    assert_true(fabs(ci.coverage - 0.96875) < 1e-15);
    /* n = 5 cannot reach 95% (1 - 2/32 = 93.75%) */
    assert_int_equal(rl_stats_median_ci(ten, 5, 0.95, &ci), RL_OK);
    assert_false(ci.available);
    assert_true(isnan(ci.lo) && isnan(ci.hi));
    assert_true(ci.median == 5);
    assert_int_equal(rl_stats_median_ci(ten, 5, 0.90, &ci), RL_OK);
    assert_true(ci.available && ci.k == 1);
    assert_int_equal(rl_stats_median_ci(ten, 0, 0.95, &ci), RL_EINVAL);
    assert_int_equal(rl_stats_median_ci(ten, 10, 1.0, &ci), RL_EINVAL);
}

static void test_ranksum(void **state)
{
    (void)state;
    rl_ranksum r;
    /* Complete separation, 3 vs 3: U = 0, sd = sqrt(9 * 7 / 12),
     * z = (0 - 4.5 + 0.5) / sd; scipy's mannwhitneyu(asymptotic) gives p = 0.0808556. */
    const double a[] = {1, 2, 3}, b[] = {4, 5, 6};
    assert_int_equal(rl_stats_ranksum(a, 3, b, 3, &r), RL_OK);
    assert_true(r.u == 0);
    assert_true(fabs(r.sd_u - sqrt(5.25)) < 1e-12);
    assert_true(fabs(r.z - (-1.7457431218879391)) < 1e-12);
    assert_true(fabs(r.p - 0.0808555983700523) < 1e-12);
    assert_true(r.r_biserial == -1);
    /* Symmetric: y against x flips U and z, same p. */
    assert_int_equal(rl_stats_ranksum(b, 3, a, 3, &r), RL_OK);
    assert_true(r.u == 9 && r.r_biserial == 1);
    assert_true(fabs(r.p - 0.0808555983700523) < 1e-12);
    /* Ties, worked by hand: sorted 1x 2x 2x 2y 3x 3y 4y 4y 5x 6y 7y; ranks of x
     * 1 + 3 + 3 + 5.5 + 9 = 21.5, U = 21.5 - 15 = 6.5; tie groups 3, 2, 2 give
     * sum(t^3 - t) = 36, var = 30/12 * (12 - 36/110). */
    const double c[] = {1, 2, 2, 3, 5}, d[] = {2, 3, 4, 4, 6, 7};
    assert_int_equal(rl_stats_ranksum(c, 5, d, 6, &r), RL_OK);
    assert_true(r.u == 6.5);
    assert_true(fabs(r.mean_u - 15) < 1e-12);
    assert_true(fabs(r.sd_u * r.sd_u - 2.5 * (12 - 36.0 / 110)) < 1e-9);
    assert_true(fabs(r.z - (-1.4809275530712105)) < 1e-12);
    assert_true(fabs(r.p - 0.13862587987892772) < 1e-12);
    /* 8 vs 10 without ties. */
    const double e[] = {1.1, 2.2, 3.3, 4.4, 5.5, 6.6, 7.7, 8.8};
    const double f[] = {3, 5, 7, 9, 11, 13, 15, 17, 19, 21};
    assert_int_equal(rl_stats_ranksum(e, 8, f, 10, &r), RL_OK);
    assert_true(r.u == 12);
    assert_true(fabs(r.p - 0.014548023867342996) < 1e-12);
    /* Every value tied: no evidence, p = 1. Identical samples: p = 1. */
    const double same[] = {2, 2, 2};
    assert_int_equal(rl_stats_ranksum(same, 3, same, 2, &r), RL_OK);
    assert_true(r.p == 1 && r.z == 0);
    assert_int_equal(rl_stats_ranksum(a, 3, a, 3, &r), RL_OK);
    assert_true(r.p == 1);
    /* Infinite values rank at the end; NaN and empty samples are errors. */
    const double g[] = {1, INFINITY}, h[] = {NAN};
    assert_int_equal(rl_stats_ranksum(a, 3, g, 2, &r), RL_OK);
    assert_true(r.u == 2.5); /* 2 > 1, 3 > 1, 1 = 1 counts one half */
    assert_int_equal(rl_stats_ranksum(a, 3, h, 1, &r), RL_EINVAL);
    assert_int_equal(rl_stats_ranksum(a, 0, b, 3, &r), RL_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantiles),
        cmocka_unit_test(test_binomial),
        cmocka_unit_test(test_median_ci),
        cmocka_unit_test(test_ranksum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
