/* runlab/adaptive.h: when to stop a benchmark. Pure decision functions over arrays of
 * per-planner results, valid under optional stopping: a fixed schedule of looks at
 * geometric run counts, the error rate split over the looks (Bonferroni), Holm over the
 * pairs of planners. The bench engine calls them between batches of runs (docs/bench.md). */
#ifndef RUNLAB_ADAPTIVE_H
#define RUNLAB_ADAPTIVE_H

#include "runlab/export.h"

#include "runlab/bench.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What settles an adaptive benchmark. */
typedef enum rl_adapt_goal {
    RL_ADAPT_RANKING = 0, /* every pair of planners ordered (Mann-Whitney, Holm) */
    RL_ADAPT_CI = 1,      /* every planner's median known within relative_width */
    RL_ADAPT_SUCCESS = 2  /* every planner's success rate known within +-width */
} rl_adapt_goal;

/* "ranking", "ci", "success"; "?" for other values. Thread-safe. */
RL_API const char *rl_adapt_goal_name(rl_adapt_goal goal);
/* Parses a goal word. RL_OK or RL_EINVAL. */
RL_API int rl_adapt_goal_parse(const char *word, rl_adapt_goal *out);

enum { RL_ADAPT_MAX_LOOKS = 64, RL_ADAPT_MAX_RUNS = 100000 };

typedef struct rl_adapt_opts {
    double confidence;     /* 0.5..0.9999 (default 0.95) */
    unsigned min_runs;     /* runs per planner at the first look, >= 2 (default 10) */
    unsigned max_runs;     /* the last look, min_runs..RL_ADAPT_MAX_RUNS (default 200) */
    rl_adapt_goal goal;    /* default RL_ADAPT_RANKING */
    double relative_width; /* ci: each end of the median's interval within this fraction
                              of the median (default 0.1) */
    double width;          /* success: the rate's interval within +-width (default 0.05) */
} rl_adapt_opts;

/* Fills the defaults above. */
RL_API void rl_adapt_opts_init(rl_adapt_opts *o);
/* Checks the ranges above; RL_EINVAL names the field. */
RL_API int rl_adapt_opts_check(const rl_adapt_opts *o);

/* The looks: run counts per planner min_runs, ceil(1.5 x previous), ..., max_runs
 * (strictly increasing, at most RL_ADAPT_MAX_LOOKS; growth is raised when needed to stay
 * within that). Writes up to `cap` counts to `looks` and returns how many there are
 * (call with cap 0 to count). Options must have passed rl_adapt_opts_check. Pure. */
RL_API size_t rl_adapt_looks(const rl_adapt_opts *o, unsigned *looks, size_t cap);

/* One pair at a look (ranking). */
typedef struct rl_adapt_pair {
    size_t a, b;  /* planner indices, a < b */
    double p;     /* two-sided Mann-Whitney p-value */
    double bound; /* the Holm threshold it was held to at this look */
    int order;    /* -1: a ranks before b (smaller values), +1: b before a, 0: unsettled */
} rl_adapt_pair;

/* One planner at a look (ci, success). */
typedef struct rl_adapt_interval {
    double estimate; /* median (ci) or success rate (success) */
    double lo, hi;   /* the simultaneous interval (ci: +-inf when not available) */
    bool settled;    /* narrow enough */
} rl_adapt_interval;

/* The decision at one look. */
typedef struct rl_adapt_decision {
    bool settled;        /* the goal is reached: stop */
    double alpha_look;   /* the error rate spent at this look: (1 - confidence) / looks */
    double statistic;    /* ranking: the p-value of the least certain pair (Holm order);
                            ci: the largest relative half-width; success: the largest
                            half-width */
    double bound;        /* what the statistic had to reach: ranking its Holm threshold,
                            ci relative_width, success width */
    size_t worst_a, worst_b; /* ranking: that pair; ci/success: worst_a is the planner */
    rl_adapt_pair *pairs;    /* ranking: n_planners (n_planners - 1) / 2 pairs, else NULL */
    size_t n_pairs;
    rl_adapt_interval *intervals; /* ci/success: one per planner, else NULL */
    size_t n_intervals;
} rl_adapt_decision;

/* Decides at look `look` (0-based, of n_looks = rl_adapt_looks(o, NULL, 0)) over
 * n_planners planners with n_runs results each: values[p][r] is the attribute of run r
 * (lower ranks first; a failed run is +INFINITY, never NaN), success[p][r] whether it
 * solved (only the success goal reads it; values are then ignored and may be NULL).
 * Ranking: pairwise two-sided Mann-Whitney tests; with m pairs sorted by p-value, the
 * i-th (0-based) is decided when it and all before it have p <= alpha_look / (m - i);
 * settled when every pair is. CI: rl_stats_median_ci at 1 - alpha_look / n_planners;
 * success: Clopper-Pearson at 1 - alpha_look / n_planners. Fills *out (free with
 * rl_adapt_decision_free). RL_OK, RL_EINVAL (bad options, look out of range, a NaN
 * value, fewer than 2 planners for ranking, no runs) or RL_ENOMEM. Pure; thread-safe. */
RL_API int rl_adapt_decide(const rl_adapt_opts *o, size_t look, size_t n_looks,
                    const double *const *values, const bool *const *success, size_t n_planners,
                    size_t n_runs, rl_adapt_decision *out);
RL_API void rl_adapt_decision_free(rl_adapt_decision *d);

/* Exact (Clopper-Pearson) interval of a binomial proportion: k successes of n at `level`
 * (0 < level < 1). RL_OK or RL_EINVAL (n == 0, k > n, level out of range). Pure. */
RL_API int rl_adapt_clopper_pearson(size_t k, size_t n, double level, double *lo, double *hi);

/* ---- the stopping rule of `runlab bench` (runs: auto) ----------------------------- */

/* A stopping rule for rl_bench_run_spec made of a spec's adaptive keys: at each look it
 * reads every planner's first n runs (the attribute of a run that did not solve exactly,
 * or that lacks the attribute or has a non-number there, counts as +infinity: worse than
 * any solved run; the success goal reads the exact solutions) and decides with
 * rl_adapt_decide. Its looks say "ranking settled at 0.95 after 23 runs per planner: A <
 * B" or "max_runs reached, ranking not settled between A and B". */
typedef struct rl_adapt_rule rl_adapt_rule;

/* Makes the rule of `keys` (rl_bench_spec_adaptive). RL_OK with *out owned by the caller
 * (rl_adapt_rule_free), RL_EINVAL (the keys' ranges) or RL_ENOMEM. */
RL_API int rl_adapt_rule_new(const rl_bench_adaptive_keys *keys, rl_adapt_rule **out);
/* The rule to put in rl_bench_run_opts.stop_rule; valid while the rule lives. The rule
 * must not be shared by two benchmarks running at once. */
RL_API const rl_bench_stop_rule *rl_adapt_rule_get(const rl_adapt_rule *rule);
/* Why the benchmark the rule last decided stopped ("" before it stopped). Valid while
 * the rule lives. */
RL_API const char *rl_adapt_rule_stopped(const rl_adapt_rule *rule);
RL_API void rl_adapt_rule_free(rl_adapt_rule *rule);

#ifdef __cplusplus
}
#endif
#endif
