/* Stopping decisions of adaptive benchmarks (runlab/adaptive.h): the schedule of looks and,
 * at each look, the ranking (pairwise Mann-Whitney with Holm), the medians' intervals or
 * the success rates' exact intervals, each at the error rate spent on that look. */
#include "runlab/adaptive.h"

#include "runlab/error.h"
#include "runlab/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *rl_adapt_goal_name(rl_adapt_goal goal)
{
    switch (goal) {
    case RL_ADAPT_RANKING:
        return "ranking";
    case RL_ADAPT_CI:
        return "ci";
    case RL_ADAPT_SUCCESS:
        return "success";
    }
    return "?";
}

int rl_adapt_goal_parse(const char *word, rl_adapt_goal *out)
{
    for (int g = RL_ADAPT_RANKING; g <= RL_ADAPT_SUCCESS; g++)
        if (word && strcmp(word, rl_adapt_goal_name((rl_adapt_goal)g)) == 0) {
            *out = (rl_adapt_goal)g;
            return RL_OK;
        }
    return rl_error_set(RL_EINVAL, "goal '%s': expected ranking, ci or success",
                        word ? word : "(null)");
}

void rl_adapt_opts_init(rl_adapt_opts *o)
{
    *o = (rl_adapt_opts){.confidence = 0.95,
                         .min_runs = 10,
                         .max_runs = 200,
                         .goal = RL_ADAPT_RANKING,
                         .relative_width = 0.1,
                         .width = 0.05};
}

int rl_adapt_opts_check(const rl_adapt_opts *o)
{
    if (!(o->confidence >= 0.5 && o->confidence <= 0.9999))
        return rl_error_set(RL_EINVAL, "confidence %g: must be 0.5..0.9999", o->confidence);
    if (o->min_runs < 2 || o->min_runs > RL_ADAPT_MAX_RUNS)
        return rl_error_set(RL_EINVAL, "min_runs %u: must be 2..%d", o->min_runs,
                            RL_ADAPT_MAX_RUNS);
    if (o->max_runs < o->min_runs || o->max_runs > RL_ADAPT_MAX_RUNS)
        return rl_error_set(RL_EINVAL, "max_runs %u: must be min_runs (%u)..%d", o->max_runs,
                            o->min_runs, RL_ADAPT_MAX_RUNS);
    if (o->goal < RL_ADAPT_RANKING || o->goal > RL_ADAPT_SUCCESS)
        return rl_error_set(RL_EINVAL, "goal %d: unknown", (int)o->goal);
    if (!(o->relative_width > 0 && o->relative_width <= 10))
        return rl_error_set(RL_EINVAL, "relative_width %g: must be > 0 and <= 10",
                            o->relative_width);
    if (!(o->width > 0 && o->width <= 0.5))
        return rl_error_set(RL_EINVAL, "width %g: must be > 0 and <= 0.5", o->width);
    return RL_OK;
}

/* The schedule at growth factor g: min, ceil(g * previous), ..., max. */
static size_t looks_at(const rl_adapt_opts *o, double g, unsigned *looks, size_t cap)
{
    size_t n = 0;
    unsigned at = o->min_runs;
    for (;;) {
        if (n < cap)
            looks[n] = at;
        n++;
        if (at >= o->max_runs)
            return n;
        double next = ceil((double)at * g);
        at = next >= (double)o->max_runs ? o->max_runs : (unsigned)next;
    }
}

size_t rl_adapt_looks(const rl_adapt_opts *o, unsigned *looks, size_t cap)
{
    /* Growth 1.5 looks often enough to stop soon after the answer is known while keeping
       the looks, over which the error rate is split, few (9 for 10..200). */
    double g = 1.5;
    while (looks_at(o, g, NULL, 0) > RL_ADAPT_MAX_LOOKS)
        g *= 1.25;
    return looks_at(o, g, looks, cap);
}

void rl_adapt_decision_free(rl_adapt_decision *d)
{
    if (!d)
        return;
    free(d->pairs);
    free(d->intervals);
    memset(d, 0, sizeof *d);
}

static int cmp_pair_p(const void *x, const void *y)
{
    const rl_adapt_pair *a = *(rl_adapt_pair *const *)x, *b = *(rl_adapt_pair *const *)y;
    if (a->p != b->p)
        return (a->p > b->p) - (a->p < b->p);
    /* equal p-values: a fixed order, so the decision does not depend on qsort */
    return a->a != b->a ? (a->a > b->a) - (a->a < b->a) : (a->b > b->b) - (a->b < b->b);
}

static int decide_ranking(const double *const *values, size_t np, size_t n, double alpha,
                          rl_adapt_decision *d)
{
    if (np < 2)
        return rl_error_set(RL_EINVAL, "adaptive ranking: needs at least 2 planners");
    size_t m = np * (np - 1) / 2;
    d->pairs = calloc(m, sizeof *d->pairs);
    rl_adapt_pair **order = calloc(m, sizeof *order);
    if (!d->pairs || !order) {
        free(order);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    d->n_pairs = m;
    size_t k = 0;
    int rc = RL_OK;
    for (size_t a = 0; a < np && rc == RL_OK; a++)
        for (size_t b = a + 1; b < np && rc == RL_OK; b++, k++) {
            rl_ranksum t;
            rc = rl_stats_ranksum(values[a], n, values[b], n, &t);
            d->pairs[k] = (rl_adapt_pair){.a = a, .b = b, .p = rc == RL_OK ? t.p : 1};
            /* U of a counts pairs where a is larger: below the mean, a tends smaller */
            d->pairs[k].order = t.u < t.mean_u ? -1 : t.u > t.mean_u ? 1 : 0;
            order[k] = &d->pairs[k];
        }
    if (rc < 0) {
        free(order);
        return rc;
    }
    qsort(order, m, sizeof *order, cmp_pair_p);
    /* Holm's step-down: the i-th smallest p is held to alpha / (m - i); the first one
       that fails leaves it and every later pair undecided. */
    bool failed = false;
    d->settled = true;
    d->statistic = order[m - 1]->p;
    d->bound = alpha;
    d->worst_a = order[m - 1]->a;
    d->worst_b = order[m - 1]->b;
    for (size_t i = 0; i < m; i++) {
        rl_adapt_pair *p = order[i];
        p->bound = alpha / (double)(m - i);
        if (!failed && p->order != 0 && p->p <= p->bound) {
            continue;
        }
        if (!failed) {
            failed = true;
            d->settled = false;
            d->statistic = p->p;
            d->bound = p->bound;
            d->worst_a = p->a;
            d->worst_b = p->b;
        }
        p->order = 0;
    }
    if (d->settled) { /* the last pair's own threshold is alpha / 1 */
        d->bound = order[m - 1]->bound;
    }
    free(order);
    return RL_OK;
}

/* The per-planner goals (ci, success): one interval per planner, each settled when its
 * width statistic is within `bound`; the decision is settled when all are, and its
 * statistic is the widest (worst_a its planner). */
static int intervals_begin(rl_adapt_decision *d, size_t np, double bound)
{
    d->intervals = calloc(np, sizeof *d->intervals);
    if (!d->intervals)
        return rl_error_set(RL_ENOMEM, "out of memory");
    d->n_intervals = np;
    d->settled = true;
    d->statistic = 0;
    d->bound = bound;
    return RL_OK;
}

static void interval_judge(rl_adapt_decision *d, size_t p, double width)
{
    rl_adapt_interval *iv = &d->intervals[p];
    iv->settled = width <= d->bound;
    if (!iv->settled)
        d->settled = false;
    if (p == 0 || width > d->statistic) {
        d->statistic = width;
        d->worst_a = p;
    }
}

static int decide_ci(const rl_adapt_opts *o, const double *const *values, size_t np, size_t n,
                     double level, rl_adapt_decision *d)
{
    int rc0 = intervals_begin(d, np, o->relative_width);
    if (rc0 < 0)
        return rc0;
    for (size_t p = 0; p < np; p++) {
        rl_median_ci ci;
        int rc = rl_stats_median_ci(values[p], n, level, &ci);
        if (rc < 0)
            return rc;
        rl_adapt_interval *iv = &d->intervals[p];
        iv->estimate = ci.median;
        iv->lo = ci.available ? ci.lo : -INFINITY;
        iv->hi = ci.available ? ci.hi : INFINITY;
        double half = fmax(ci.median - iv->lo, iv->hi - ci.median);
        double rel = isfinite(half) && isfinite(ci.median) && ci.median != 0
                         ? half / fabs(ci.median)
                         : (half == 0 ? 0 : INFINITY);
        interval_judge(d, p, rel);
    }
    return RL_OK;
}

static int decide_success(const rl_adapt_opts *o, const bool *const *success, size_t np, size_t n,
                          double level, rl_adapt_decision *d)
{
    int rc0 = intervals_begin(d, np, o->width);
    if (rc0 < 0)
        return rc0;
    for (size_t p = 0; p < np; p++) {
        size_t k = 0;
        for (size_t r = 0; r < n; r++)
            k += success[p][r];
        rl_adapt_interval *iv = &d->intervals[p];
        int rc = rl_adapt_clopper_pearson(k, n, level, &iv->lo, &iv->hi);
        if (rc < 0)
            return rc;
        iv->estimate = (double)k / (double)n;
        interval_judge(d, p, fmax(iv->estimate - iv->lo, iv->hi - iv->estimate));
    }
    return RL_OK;
}

int rl_adapt_decide(const rl_adapt_opts *o, size_t look, size_t n_looks,
                    const double *const *values, const bool *const *success, size_t n_planners,
                    size_t n_runs, rl_adapt_decision *out)
{
    memset(out, 0, sizeof *out);
    int rc = rl_adapt_opts_check(o);
    if (rc < 0)
        return rc;
    if (n_looks == 0 || look >= n_looks)
        return rl_error_set(RL_EINVAL, "adaptive: look %zu of %zu", look, n_looks);
    if (n_planners == 0 || n_runs == 0)
        return rl_error_set(RL_EINVAL, "adaptive: no planners or no runs");
    if (o->goal == RL_ADAPT_SUCCESS ? !success : !values)
        return rl_error_set(RL_EINVAL, "adaptive: no results given");
    if (o->goal != RL_ADAPT_SUCCESS)
        for (size_t p = 0; p < n_planners; p++)
            for (size_t r = 0; r < n_runs; r++)
                if (isnan(values[p][r]))
                    return rl_error_set(RL_EINVAL, "adaptive: planner %zu run %zu is NaN", p, r);
    /* Bonferroni over the looks: P(any false decision at any look) <= sum of the rates
       spent, whatever the dependence between looks and whenever the rule stops. */
    out->alpha_look = (1 - o->confidence) / (double)n_looks;
    switch (o->goal) {
    case RL_ADAPT_RANKING:
        rc = decide_ranking(values, n_planners, n_runs, out->alpha_look, out);
        break;
    case RL_ADAPT_CI:
        rc = decide_ci(o, values, n_planners, n_runs,
                       1 - out->alpha_look / (double)n_planners, out);
        break;
    case RL_ADAPT_SUCCESS:
        rc = decide_success(o, success, n_planners, n_runs,
                            1 - out->alpha_look / (double)n_planners, out);
        break;
    }
    if (rc < 0)
        rl_adapt_decision_free(out);
    return rc;
}

/* log P(X = i), X ~ Binomial(n, p), 0 < p < 1 */
static double log_binom_pmf(size_t n, size_t i, double p)
{
    return lgamma((double)n + 1) - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) +
           (double)i * log(p) + (double)(n - i) * log1p(-p);
}

/* P(X >= k) for X ~ Binomial(n, p); increasing in p. */
static double binom_upper_tail(size_t n, size_t k, double p)
{
    double s = 0;
    for (size_t i = k; i <= n; i++)
        s += exp(log_binom_pmf(n, i, p));
    return s > 1 ? 1 : s;
}

/* The p in (0, 1) where the increasing tail(p) = target, by bisection (to 1e-12). */
static double solve_tail(size_t n, size_t k, double target)
{
    double lo = 0, hi = 1;
    for (int it = 0; it < 60; it++) {
        double mid = (lo + hi) / 2;
        if (binom_upper_tail(n, k, mid) < target)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

int rl_adapt_clopper_pearson(size_t k, size_t n, double level, double *lo, double *hi)
{
    if (n == 0 || k > n || !(level > 0 && level < 1))
        return rl_error_set(RL_EINVAL, "clopper-pearson: %zu of %zu at %g", k, n, level);
    double a2 = (1 - level) / 2;
    /* lo: P(X >= k | lo) = a/2; hi: P(X <= k | hi) = a/2, i.e. P(X >= k+1 | hi) = 1 - a/2 */
    *lo = k == 0 ? 0 : solve_tail(n, k, a2);
    *hi = k == n ? 1 : solve_tail(n, k + 1, 1 - a2);
    return RL_OK;
}
