/* Adaptive benchmarking's stopping rule (runlab/adaptive.h) measured on simulated planners
 * of known time distributions (equal, 5 % and 50 % apart; normal, lognormal, Pareto,
 * with failures): over 500 simulated benchmarks per case the rate of wrong rankings stays
 * at or below 1 - confidence, and the runs saved against the fixed count of equal accuracy
 * are printed. Fixed seeds: every figure is the same on every machine. */
#include "rl_test.h"

#include "runlab/adaptive.h"
#include "runlab/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SIMS = 500, PLANNERS = 3, MAXN = 200 };

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next_u64(rng *r) /* splitmix64 */
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform01(rng *r) /* (0, 1) */
{
    return ((double)(next_u64(r) >> 11) + 0.5) / 9007199254740992.0;
}

static double normal01(rng *r)
{
    return sqrt(-2 * log(uniform01(r))) * cos(2 * M_PI * uniform01(r));
}

typedef enum dist { NORMAL, LOGNORMAL, PARETO, FAILING } dist;
static const char *const DIST_NAMES[] = {"normal", "lognormal", "pareto(1.5)", "lognormal+20%fail"};

/* One run time of the base planner; planner p's is this times factor^p. */
static double draw(dist d, rng *r)
{
    switch (d) {
    case NORMAL:
        return fmax(1e-3, 1 + 0.15 * normal01(r));
    case LOGNORMAL:
        return exp(0.5 * normal01(r));
    case PARETO: /* heavy tail: infinite variance */
        return pow(uniform01(r), -1 / 1.5);
    case FAILING:
        return uniform01(r) < 0.2 ? INFINITY : exp(0.5 * normal01(r));
    }
    return 1;
}

typedef struct outcome {
    unsigned runs;    /* per planner at the stop */
    bool settled;     /* every pair ordered */
    bool wrong;       /* some pair ordered against the truth (any order, when equal) */
} outcome;

/* One simulated adaptive benchmark: PLANNERS planners, times scaled by factor^p, the
 * runs drawn round-robin so every look sees the same draws whatever the rule. */
static outcome simulate(const rl_adapt_opts *o, dist d, double factor, uint64_t seed)
{
    static double buf[PLANNERS][MAXN];
    rng r = {seed};
    for (size_t i = 0; i < o->max_runs; i++)
        for (size_t p = 0; p < PLANNERS; p++)
            buf[p][i] = draw(d, &r) * pow(factor, (double)p);
    const double *v[PLANNERS] = {buf[0], buf[1], buf[2]};
    unsigned looks[RL_ADAPT_MAX_LOOKS];
    size_t nl = rl_adapt_looks(o, looks, RL_ADAPT_MAX_LOOKS);
    outcome out = {0};
    for (size_t k = 0; k < nl; k++) {
        rl_adapt_decision dec;
        assert_int_equal(rl_adapt_decide(o, k, nl, v, NULL, PLANNERS, looks[k], &dec), RL_OK);
        out.runs = looks[k];
        bool stop = dec.settled || k + 1 == nl;
        if (stop) {
            out.settled = dec.settled;
            for (size_t i = 0; i < dec.n_pairs; i++) {
                int truth = factor > 1 ? -1 : factor < 1 ? 1 : 0; /* a < b: a is faster */
                if (dec.pairs[i].order != 0 && dec.pairs[i].order != truth)
                    out.wrong = true;
            }
        }
        rl_adapt_decision_free(&dec);
        if (stop)
            break;
    }
    return out;
}

/* The largest count c with P(Binomial(n, q) > c) >= 1e-4: a wrong-ranking count above it
 * means the true rate exceeds q, not bad luck. */
static unsigned binomial_tolerance(unsigned n, double q)
{
    double tail = 1;
    for (unsigned c = 0; c <= n; c++) {
        tail -= exp(lgamma(n + 1.0) - lgamma(c + 1.0) - lgamma(n - c + 1.0) + c * log(q) +
                    (n - c) * log1p(-q));
        if (tail < 1e-4)
            return c;
    }
    return n;
}

/* Correct-ranking rate of a fixed count n with one test at the full error rate. */
static double fixed_accuracy(const rl_adapt_opts *adaptive, dist d, double factor, unsigned n)
{
    rl_adapt_opts o = *adaptive;
    o.min_runs = o.max_runs = n; /* one look */
    unsigned right = 0;
    for (unsigned s = 0; s < SIMS; s++) {
        outcome oc = simulate(&o, d, factor, 1000003ull * (s + 1));
        right += oc.settled && !oc.wrong;
    }
    return (double)right / SIMS;
}

static void test_looks_and_intervals(void **state)
{
    (void)state;
    rl_adapt_opts o;
    rl_adapt_opts_init(&o);
    unsigned looks[RL_ADAPT_MAX_LOOKS];
    size_t n = rl_adapt_looks(&o, looks, RL_ADAPT_MAX_LOOKS);
    static const unsigned want[] = {10, 15, 23, 35, 53, 80, 120, 180, 200};
    assert_int_equal(n, 9);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(looks[i], want[i]);
    o.min_runs = 2;
    o.max_runs = RL_ADAPT_MAX_RUNS;
    assert_int_equal(rl_adapt_opts_check(&o), RL_OK);
    n = rl_adapt_looks(&o, looks, RL_ADAPT_MAX_LOOKS);
    assert_true(n <= RL_ADAPT_MAX_LOOKS);
    assert_int_equal(looks[n - 1], RL_ADAPT_MAX_RUNS);
    o.max_runs = 1;
    assert_int_equal(rl_adapt_opts_check(&o), RL_EINVAL);
    rl_adapt_opts_init(&o);
    o.confidence = 1;
    assert_int_equal(rl_adapt_opts_check(&o), RL_EINVAL);
    /* Clopper-Pearson against R's binom.test */
    double lo, hi;
    assert_int_equal(rl_adapt_clopper_pearson(5, 10, 0.95, &lo, &hi), RL_OK);
    assert_float_equal(lo, 0.1870860, 1e-6);
    assert_float_equal(hi, 0.8129140, 1e-6);
    assert_int_equal(rl_adapt_clopper_pearson(0, 10, 0.95, &lo, &hi), RL_OK);
    assert_float_equal(lo, 0, 0);
    assert_float_equal(hi, 0.3084971, 1e-6);
    assert_int_equal(rl_adapt_clopper_pearson(10, 10, 0.95, &lo, &hi), RL_OK);
    assert_float_equal(lo, 0.6915029, 1e-6);
    assert_int_equal(rl_adapt_clopper_pearson(11, 10, 0.95, &lo, &hi), RL_EINVAL);
    rl_adapt_goal g;
    assert_int_equal(rl_adapt_goal_parse("ci", &g), RL_OK);
    assert_int_equal(g, RL_ADAPT_CI);
    assert_int_equal(rl_adapt_goal_parse("fastest", &g), RL_EINVAL);
}

/* A clear ranking settles at the first look that can show it; the decision names the
 * order; the trail's statistic is below its bound. */
static void test_decide_ranking_direct(void **state)
{
    (void)state;
    rl_adapt_opts o;
    rl_adapt_opts_init(&o);
    double a[30], b[30];
    for (int i = 0; i < 30; i++)
        a[i] = 1 + i * 0.01, b[i] = 2 + i * 0.01;
    const double *v[2] = {b, a};
    rl_adapt_decision d;
    assert_int_equal(rl_adapt_decide(&o, 0, 9, v, NULL, 2, 10, &d), RL_OK);
    assert_true(d.settled);
    assert_int_equal(d.n_pairs, 1);
    assert_int_equal(d.pairs[0].order, 1); /* b (index 1 here: a[]) ranks first */
    assert_true(d.statistic <= d.bound);
    assert_float_equal(d.alpha_look, 0.05 / 9, 1e-12);
    rl_adapt_decision_free(&d);
    /* 5 runs each cannot reach 0.05/9: not settled, order withheld */
    assert_int_equal(rl_adapt_decide(&o, 0, 9, v, NULL, 2, 5, &d), RL_OK);
    assert_false(d.settled);
    assert_int_equal(d.pairs[0].order, 0);
    assert_true(d.statistic > d.bound);
    rl_adapt_decision_free(&d);
    /* three planners far apart: Holm holds the pairs, smallest p first, to alpha/3,
       alpha/2 and alpha (alpha = 0.05/9 per look) */
    double c[30];
    for (int i = 0; i < 30; i++)
        c[i] = 3 + i * 0.01;
    const double *v3[3] = {a, b, c};
    assert_int_equal(rl_adapt_decide(&o, 0, 9, v3, NULL, 3, 30, &d), RL_OK);
    assert_true(d.settled);
    assert_int_equal(d.n_pairs, 3);
    double want[3] = {d.alpha_look / 3, d.alpha_look / 2, d.alpha_look}, got[3];
    for (size_t i = 0; i < 3; i++) {
        got[i] = d.pairs[i].bound;
        assert_int_equal(d.pairs[i].order, -1); /* a < b < c */
    }
    for (size_t i = 0; i < 3; i++) /* sorted ascending */
        for (size_t j = i + 1; j < 3; j++)
            if (got[j] < got[i]) {
                double t = got[i];
                got[i] = got[j];
                got[j] = t;
            }
    for (size_t i = 0; i < 3; i++)
        assert_float_equal(got[i], want[i], 1e-15);
    rl_adapt_decision_free(&d);
    a[3] = NAN;
    assert_int_equal(rl_adapt_decide(&o, 0, 9, v, NULL, 2, 10, &d), RL_EINVAL);
    assert_int_equal(rl_adapt_decide(&o, 9, 9, v, NULL, 2, 10, &d), RL_EINVAL);
    assert_int_equal(rl_adapt_decide(&o, 0, 9, v, NULL, 1, 10, &d), RL_EINVAL);
}

/* The promise: at most 1 - confidence wrong rankings, over 500 benchmarks per case. */
static void test_simulated_wrong_ranking_rate(void **state)
{
    (void)state;
    rl_adapt_opts o;
    rl_adapt_opts_init(&o);
    static const double factors[] = {1.0, 1.05, 1.5};
    unsigned tol = binomial_tolerance(SIMS, 1 - o.confidence);
    print_message("%-18s %5s %6s %8s %7s %9s %11s %6s\n", "distribution", "apart", "wrong",
                  "settled", "runs", "accuracy", "fixed-equal", "saved");
    for (int d = NORMAL; d <= FAILING; d++)
        for (size_t f = 0; f < 3; f++) {
            unsigned wrong = 0, settled = 0, right = 0;
            double runs = 0;
            for (unsigned s = 0; s < SIMS; s++) {
                outcome oc = simulate(&o, (dist)d, factors[f], 7919ull * (s + 1) + (uint64_t)d);
                wrong += oc.wrong;
                settled += oc.settled;
                right += oc.settled && !oc.wrong;
                runs += oc.runs;
            }
            runs /= SIMS;
            double acc = (double)right / SIMS;
            /* the fixed count that ranks as often correctly (only where the adaptive rule
               ranks at all: equal planners have no correct ranking) */
            char fixed[32] = "-", saved[32] = "-";
            if (factors[f] > 1 && right > 0) {
                for (unsigned n = 10; n <= 400; n += 10)
                    if (fixed_accuracy(&o, (dist)d, factors[f], n) >= acc) {
                        snprintf(fixed, sizeof fixed, "%u", n);
                        snprintf(saved, sizeof saved, "%.0f%%", 100 * (1 - runs / n));
                        break;
                    }
                if (strcmp(fixed, "-") == 0)
                    snprintf(fixed, sizeof fixed, ">400");
            }
            print_message("%-18s %4.0f%% %6u %8u %7.1f %8.1f%% %11s %6s\n", DIST_NAMES[d],
                          100 * (factors[f] - 1), wrong, settled, runs, 100 * acc, fixed, saved);
            assert_true(wrong <= tol);
            if (factors[f] == 1.5) /* 50 % apart: settled, well before max_runs */
                assert_true(settled >= SIMS * 9 / 10 && runs < 0.75 * o.max_runs);
            if (factors[f] == 1.5 && d == NORMAL) /* and at once when the spread is small */
                assert_true(runs < 20);
            if (factors[f] == 1.0) /* equal: never settles, runs to max_runs */
                assert_true(runs > 195);
        }
}

/* The other goals keep their coverage under optional stopping: the interval at the stop
 * holds the true value at least as often as the confidence says (with tolerance). */
static void test_simulated_ci_and_success(void **state)
{
    (void)state;
    rl_adapt_opts o;
    rl_adapt_opts_init(&o);
    unsigned tol = binomial_tolerance(SIMS, 1 - o.confidence);
    unsigned looks[RL_ADAPT_MAX_LOOKS];
    for (int goal = RL_ADAPT_CI; goal <= RL_ADAPT_SUCCESS; goal++) {
        o.goal = (rl_adapt_goal)goal;
        o.relative_width = 0.15;
        o.width = 0.1;
        size_t nl = rl_adapt_looks(&o, looks, RL_ADAPT_MAX_LOOKS);
        unsigned missed = 0, settled = 0;
        double runs = 0;
        for (unsigned s = 0; s < SIMS; s++) {
            static double v[MAXN];
            static bool ok[MAXN];
            rng r = {31337ull * (s + 1)};
            for (size_t i = 0; i < MAXN; i++) {
                v[i] = exp(0.5 * normal01(&r)); /* median 1 */
                ok[i] = uniform01(&r) < 0.7;
            }
            const double *vp[1] = {v};
            const bool *okp[1] = {ok};
            for (size_t k = 0; k < nl; k++) {
                rl_adapt_decision d;
                assert_int_equal(rl_adapt_decide(&o, k, nl, vp, okp, 1, looks[k], &d), RL_OK);
                if (d.settled || k + 1 == nl) {
                    double truth = goal == RL_ADAPT_CI ? 1.0 : 0.7;
                    missed += !(d.intervals[0].lo <= truth && truth <= d.intervals[0].hi);
                    settled += d.settled;
                    runs += looks[k];
                    rl_adapt_decision_free(&d);
                    break;
                }
                rl_adapt_decision_free(&d);
            }
        }
        print_message("goal %-8s: missed %u of %d (tolerance %u), settled %u, mean runs %.1f\n",
                      rl_adapt_goal_name(o.goal), missed, SIMS, tol, settled, runs / SIMS);
        assert_true(missed <= tol);
        assert_true(settled > SIMS / 2);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_looks_and_intervals),
        cmocka_unit_test(test_decide_ranking_direct),
        cmocka_unit_test(test_simulated_wrong_ranking_rate),
        cmocka_unit_test(test_simulated_ci_and_success),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
