/* Distribution-free statistics for benchmark reports: type-7 quantiles, the binomial
 * (order-statistic) confidence interval of a median, and the Mann-Whitney U rank-sum test
 * with tie-corrected normal approximation. See runlab/stats.h for the contracts. */
#include "runlab/stats.h"

#include "runlab/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int sorted_copy(const double *x, size_t n, double **out)
{
    if (!x || n == 0)
        return rl_error_set(RL_EINVAL, "stats: empty sample");
    for (size_t i = 0; i < n; i++)
        if (isnan(x[i]))
            return rl_error_set(RL_EINVAL, "stats: sample %zu is NaN", i);
    double *s = malloc(n * sizeof *s);
    if (!s)
        return rl_error_set(RL_ENOMEM, "stats: out of memory");
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    *out = s;
    return RL_OK;
}

int rl_stats_quantile_sorted(const double *sorted, size_t n, double p, double *out)
{
    if (!sorted || !out || n == 0 || !(p >= 0 && p <= 1))
        return rl_error_set(RL_EINVAL, "stats: quantile needs samples and 0 <= p <= 1");
    double h = (double)(n - 1) * p;
    size_t i = (size_t)floor(h);
    if (i + 1 >= n) {
        *out = sorted[n - 1];
        return RL_OK;
    }
    double f = h - (double)i;
    /* f == 0 must not touch the neighbour: 0 * inf would be NaN. */
    *out = f == 0 ? sorted[i] : sorted[i] + f * (sorted[i + 1] - sorted[i]);
    return RL_OK;
}

int rl_stats_median(const double *x, size_t n, double *out)
{
    double *s;
    int rc = sorted_copy(x, n, &s);
    if (rc < 0)
        return rc;
    rc = rl_stats_quantile_sorted(s, n, 0.5, out);
    free(s);
    return rc;
}

double rl_stats_binom_half_cdf(size_t n, size_t k)
{
    if (k >= n)
        return 1.0;
    /* Terms summed in log space so that n in the millions neither overflows nor
     * underflows 2^-n before the binomial coefficient is applied. */
    double ln2n = (double)n * log(2.0), lg_n1 = lgamma((double)n + 1), sum = 0;
    for (size_t i = 0; i <= k; i++)
        sum += exp(lg_n1 - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) - ln2n);
    return sum > 1 ? 1 : sum;
}

double rl_stats_normal_cdf(double z)
{
    return 0.5 * erfc(-z / sqrt(2.0));
}

int rl_stats_median_ci(const double *x, size_t n, double level, rl_median_ci *out)
{
    if (!out || !(level > 0 && level < 1))
        return rl_error_set(RL_EINVAL, "stats: confidence level must be in (0, 1)");
    double *s;
    int rc = sorted_copy(x, n, &s);
    if (rc < 0)
        return rc;
    memset(out, 0, sizeof *out);
    rl_stats_quantile_sorted(s, n, 0.5, &out->median);
    out->lo = out->hi = NAN;
    /* Largest k whose pair [x(k), x(n+1-k)] still covers with probability >= level:
     * coverage shrinks as k grows, so walk up from the widest pair. */
    size_t k = 0;
    double cov = 0;
    for (size_t c = 1; 2 * c <= n; c++) {
        double cc = 1 - 2 * rl_stats_binom_half_cdf(n, c - 1);
        if (cc < level)
            break;
        k = c;
        cov = cc;
    }
    if (k > 0) {
        out->available = true;
        out->k = k;
        out->coverage = cov;
        out->lo = s[k - 1];
        out->hi = s[n - k];
    }
    free(s);
    return RL_OK;
}

typedef struct tagged {
    double v;
    int group; /* 0: x, 1: y */
} tagged;

static int cmp_tagged(const void *a, const void *b)
{
    return cmp_double(&((const tagged *)a)->v, &((const tagged *)b)->v);
}

int rl_stats_ranksum(const double *x, size_t nx, const double *y, size_t ny, rl_ranksum *out)
{
    if (!x || !y || !out || nx == 0 || ny == 0)
        return rl_error_set(RL_EINVAL, "stats: rank-sum test needs two non-empty samples");
    size_t n = nx + ny;
    tagged *t = malloc(n * sizeof *t);
    if (!t)
        return rl_error_set(RL_ENOMEM, "stats: out of memory");
    for (size_t i = 0; i < n; i++) {
        t[i].v = i < nx ? x[i] : y[i - nx];
        t[i].group = i < nx ? 0 : 1;
        if (isnan(t[i].v)) {
            free(t);
            return rl_error_set(RL_EINVAL, "stats: rank-sum sample has a NaN value");
        }
    }
    qsort(t, n, sizeof *t, cmp_tagged);
    double r1 = 0, ties = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && t[j].v == t[i].v)
            j++;
        double rank = ((double)i + 1 + (double)j) / 2, m = (double)(j - i);
        for (size_t k = i; k < j; k++)
            if (t[k].group == 0)
                r1 += rank;
        ties += m * m * m - m;
        i = j;
    }
    free(t);
    double dx = (double)nx, dy = (double)ny, dn = (double)n;
    memset(out, 0, sizeof *out);
    out->u = r1 - dx * (dx + 1) / 2;
    out->mean_u = dx * dy / 2;
    double var = dx * dy / 12 * ((dn + 1) - (n > 1 ? ties / (dn * (dn - 1)) : 0));
    out->sd_u = var > 0 ? sqrt(var) : 0;
    double d = out->u - out->mean_u;
    if (out->sd_u > 0) {
        double a = fabs(d) - 0.5;
        out->z = (a > 0 ? a : 0) / out->sd_u * (d < 0 ? -1 : 1);
        out->p = 2 * rl_stats_normal_cdf(-fabs(out->z));
        if (out->p > 1)
            out->p = 1;
    } else {
        out->z = 0;
        out->p = 1;
    }
    out->r_biserial = 2 * out->u / (dx * dy) - 1;
    return RL_OK;
}
