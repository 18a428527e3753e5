/* runlab/stats.h: small, distribution-free statistics for benchmark results: quantiles,
 * the confidence interval of a median from order statistics (binomial), and the Wilcoxon
 * rank-sum (Mann-Whitney U) test with the normal approximation and tie correction.
 * Pure functions: thread-safe, no global state; inputs are never modified. */
#ifndef RUNLAB_STATS_H
#define RUNLAB_STATS_H

#include "runlab/export.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Quantile p (0..1) of `n` samples sorted ascending, interpolated linearly between order
 * statistics (Hyndman & Fan type 7, the default of R and NumPy). The samples must be
 * finite, except that +inf is allowed at the top (a run with no result yet); the result
 * is then +inf when it falls there. Returns RL_OK, or RL_EINVAL for n == 0, a NULL
 * pointer or p outside [0, 1]. */
RL_API int rl_stats_quantile_sorted(const double *sorted, size_t n, double p, double *out);

/* Median of `n` samples in any order (copied and sorted; the input is left as is).
 * NaN samples are RL_EINVAL. Returns RL_OK, RL_EINVAL (n == 0, NaN) or RL_ENOMEM. */
RL_API int rl_stats_median(const double *x, size_t n, double *out);

/* Distribution-free confidence interval of the median. */
typedef struct rl_median_ci {
    double median;   /* sample median */
    bool available;  /* false when n is too small to reach `level` (n < 6 for 95%) */
    double lo, hi;   /* the order statistics x(k) and x(n+1-k) (1-based); NaN when not
                        available */
    size_t k;        /* rank of lo; hi has rank n + 1 - k */
    double coverage; /* exact coverage 1 - 2 P(B <= k-1), B ~ Binomial(n, 1/2); >= level */
} rl_median_ci;

/* Confidence interval for the median of `n` samples at `level` (e.g. 0.95): the
 * narrowest symmetric pair of order statistics [x(k), x(n+1-k)] whose coverage under
 * Binomial(n, 1/2) is at least `level`. No assumption on the distribution beyond
 * independent samples of a continuous variable. Returns RL_OK (also when the interval is
 * not available: out->available is then false), RL_EINVAL (n == 0, NaN sample, level
 * outside (0, 1)) or RL_ENOMEM. */
RL_API int rl_stats_median_ci(const double *x, size_t n, double level, rl_median_ci *out);

/* P(B <= k) for B ~ Binomial(n, 1/2), computed in log space (any n). Pure. */
RL_API double rl_stats_binom_half_cdf(size_t n, size_t k);

/* Standard normal distribution function Phi(z). Pure. */
RL_API double rl_stats_normal_cdf(double z);

/* Wilcoxon rank-sum / Mann-Whitney U test of sample x against sample y. */
typedef struct rl_ranksum {
    double u;       /* U of x: pairs (xi, yj) with xi > yj, ties counting 1/2 */
    double mean_u;  /* nx ny / 2 */
    double sd_u;    /* standard deviation of U under H0, tie-corrected */
    double z;       /* (U - mean_u -+ 0.5) / sd_u: with continuity correction; 0 when
                       sd_u is 0 (every value tied) */
    double p;       /* two-sided p-value from the normal approximation, in [0, 1] */
    double r_biserial; /* effect size 2U/(nx ny) - 1 in [-1, 1]; > 0: x tends larger */
} rl_ranksum;

/* Two-sided rank-sum test of H0 "x and y come from the same distribution" against a shift,
 * with the normal approximation of U, the tie correction of its variance and a continuity
 * correction of 0.5 (as scipy.stats.mannwhitneyu(method="asymptotic") does by default).
 * The approximation is rough below about 8 samples per group. Returns RL_OK, RL_EINVAL
 * (an empty sample, NaN values) or RL_ENOMEM. Infinite values are allowed (they rank
 * at the ends). */
RL_API int rl_stats_ranksum(const double *x, size_t nx, const double *y, size_t ny, rl_ranksum *out);

#ifdef __cplusplus
}
#endif
#endif
