/* The stopping rule `runlab bench` gives the engine for `runs: auto`: turns a spec's
 * adaptive keys into the looks and, at each look, the planners' results into arrays for
 * rl_adapt_decide, its decision into a JSON record of the look and a sentence of why the
 * benchmark stopped. */
#include "runlab/adaptive.h"

#include "runlab/error.h"
#include "runlab/number.h"

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rl_adapt_rule {
    rl_adapt_opts opts;
    char attribute[128];
    unsigned looks[RL_ADAPT_MAX_LOOKS];
    rl_bench_stop_rule rule;
    char stopped[512]; /* the last look's why */
};

/* The attribute of one run: +infinity when the run did not solve exactly or lacks a
 * number there (worse than any solved run). */
static double run_value(const rl_bench_run_data *r, const char *attribute)
{
    if (r->status != RL_RUN_EXACT)
        return INFINITY;
    for (size_t i = 0; i < r->n_props; i++)
        if (strcmp(r->props[i].name, attribute) == 0) {
            char *end = NULL;
            double v = rl_parse_f64(r->props[i].value, &end);
            return r->props[i].value[0] && end && !*end && !isnan(v) ? v : INFINITY;
        }
    return INFINITY;
}

static void fmt_num(char *out, size_t cap, double v)
{
    snprintf(out, cap, "%.3g", v);
}

/* "A < B < C" by pairs won: the settled ranking. */
static void ranking_text(const rl_bench_experiment *e, const rl_adapt_decision *d, char *out,
                         size_t cap)
{
    size_t np = e->n_planners, wins[64] = {0}, idx[64];
    np = np > 64 ? 64 : np;
    for (size_t i = 0; i < d->n_pairs; i++) {
        const rl_adapt_pair *p = &d->pairs[i];
        if (p->a < np && p->b < np)
            wins[p->order < 0 ? p->a : p->b]++;
    }
    for (size_t i = 0; i < np; i++)
        idx[i] = i;
    for (size_t i = 1; i < np; i++) /* insertion sort, most wins first, stable */
        for (size_t j = i; j > 0 && wins[idx[j]] > wins[idx[j - 1]]; j--) {
            size_t t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < np && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? " < " : "",
                                e->planners[idx[i]].name);
}

static int decide(void *ud, size_t look, const rl_bench_experiment *e, bool *stop,
                  char **look_json, char *why, size_t why_cap)
{
    rl_adapt_rule *rule = ud;
    const rl_adapt_opts *o = &rule->opts;
    size_t n_looks = rule->rule.n_looks, n = rule->looks[look], np = e->n_planners;
    *stop = false;
    *look_json = NULL;
    double *vals = calloc(np * n + 1, sizeof *vals);
    bool *oks = calloc(np * n + 1, sizeof *oks);
    const double **vp = calloc(np + 1, sizeof *vp);
    const bool **op = calloc(np + 1, sizeof *op);
    if (!vals || !oks || !vp || !op) {
        free(vals), free(oks), free(vp), free(op);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    int rc = RL_OK;
    for (size_t p = 0; p < np && rc == RL_OK; p++) {
        const rl_bench_planner_data *pd = &e->planners[p];
        if (pd->n_runs < n) {
            rc = rl_error_set(RL_EINVAL, "adaptive: planner %s has %zu runs, the look needs %zu",
                              pd->name, pd->n_runs, n);
            break;
        }
        for (size_t r = 0; r < n; r++) {
            vals[p * n + r] = run_value(&pd->runs[r], rule->attribute);
            oks[p * n + r] = pd->runs[r].status == RL_RUN_EXACT;
        }
        vp[p] = vals + p * n;
        op[p] = oks + p * n;
    }
    rl_adapt_decision d;
    if (rc == RL_OK)
        rc = rl_adapt_decide(o, look, n_looks, vp, op, np, n, &d);
    free(vals), free(oks), free(vp), free(op);
    if (rc < 0)
        return rc;
    bool last = look + 1 == n_looks;
    *stop = d.settled;
    char conf[32], a[32], b[32];
    fmt_num(conf, sizeof conf, o->confidence);
    json_object *j = json_object_new_object();
    json_object_object_add(j, "look", json_object_new_int64((int64_t)look + 1));
    json_object_object_add(j, "runs", json_object_new_int64((int64_t)n));
    json_object_object_add(j, "alpha", json_object_new_double(d.alpha_look));
    json_object_object_add(j, "statistic", json_object_new_double(d.statistic));
    json_object_object_add(j, "bound", json_object_new_double(d.bound));
    json_object_object_add(j, "settled", json_object_new_boolean(d.settled));
    const char *wa = e->planners[d.worst_a].name;
    if (o->goal == RL_ADAPT_RANKING) {
        json_object_object_add(j, "statistic_is", json_object_new_string("Mann-Whitney p"));
        json_object *pairs = json_object_new_array();
        for (size_t i = 0; i < d.n_pairs; i++) {
            const rl_adapt_pair *p = &d.pairs[i];
            json_object *pj = json_object_new_object();
            json_object_object_add(pj, "a", json_object_new_string(e->planners[p->a].name));
            json_object_object_add(pj, "b", json_object_new_string(e->planners[p->b].name));
            json_object_object_add(pj, "p", json_object_new_double(p->p));
            json_object_object_add(pj, "bound", json_object_new_double(p->bound));
            json_object_object_add(pj, "first",
                                   p->order == 0 ? NULL
                                                 : json_object_new_string(
                                                       e->planners[p->order < 0 ? p->a : p->b].name));
            json_object_array_add(pairs, pj);
        }
        json_object_object_add(j, "pairs", pairs);
        const char *wb = e->planners[d.worst_b].name;
        if (d.settled) {
            char order[1024];
            ranking_text(e, &d, order, sizeof order);
            snprintf(why, why_cap, "ranking settled at %s after %zu runs per planner: %s", conf,
                     n, order);
        } else if (last) {
            snprintf(why, why_cap, "max_runs reached, ranking not settled between %s and %s", wa,
                     wb);
        }
    } else {
        json_object_object_add(j, "statistic_is",
                               json_object_new_string(o->goal == RL_ADAPT_CI
                                                          ? "largest relative half-width"
                                                          : "largest half-width"));
        json_object *ivs = json_object_new_array();
        for (size_t i = 0; i < d.n_intervals; i++) {
            const rl_adapt_interval *iv = &d.intervals[i];
            json_object *ij = json_object_new_object();
            json_object_object_add(ij, "planner", json_object_new_string(e->planners[i].name));
            json_object_object_add(ij, "estimate", json_object_new_double(iv->estimate));
            json_object_object_add(ij, "lo", isfinite(iv->lo) ? json_object_new_double(iv->lo)
                                                              : NULL);
            json_object_object_add(ij, "hi", isfinite(iv->hi) ? json_object_new_double(iv->hi)
                                                              : NULL);
            json_object_object_add(ij, "settled", json_object_new_boolean(iv->settled));
            json_object_array_add(ivs, ij);
        }
        json_object_object_add(j, "intervals", ivs);
        if (o->goal == RL_ADAPT_CI) {
            fmt_num(a, sizeof a, 100 * o->relative_width);
            if (d.settled)
                snprintf(why, why_cap, "medians of %s known within %s%% at %s after %zu runs "
                         "per planner", rule->attribute, a, conf, n);
            else if (last)
                snprintf(why, why_cap, "max_runs reached, median of %s for %s not within %s%%",
                         rule->attribute, wa, a);
        } else {
            fmt_num(b, sizeof b, o->width);
            if (d.settled)
                snprintf(why, why_cap, "success rates known within +-%s at %s after %zu runs "
                         "per planner", b, conf, n);
            else if (last)
                snprintf(why, why_cap, "max_runs reached, success rate of %s not within +-%s",
                         wa, b);
        }
    }
    rl_adapt_decision_free(&d);
    snprintf(rule->stopped, sizeof rule->stopped, "%s", why);
    *look_json = strdup(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    json_object_put(j);
    if (!*look_json)
        return rl_error_set(RL_ENOMEM, "out of memory");
    return RL_OK;
}

int rl_adapt_rule_new(const rl_bench_adaptive_keys *keys, rl_adapt_rule **out)
{
    *out = NULL;
    rl_adapt_rule *r = calloc(1, sizeof *r);
    if (!r)
        return rl_error_set(RL_ENOMEM, "out of memory");
    rl_adapt_opts_init(&r->opts);
    r->opts.confidence = keys->confidence;
    r->opts.min_runs = keys->min_runs;
    r->opts.max_runs = keys->max_runs;
    r->opts.relative_width = keys->relative_width;
    r->opts.width = keys->width;
    int rc = rl_adapt_goal_parse(keys->goal, &r->opts.goal);
    if (rc == RL_OK)
        rc = rl_adapt_opts_check(&r->opts);
    if (rc == RL_OK && (!keys->attribute || !keys->attribute[0] ||
                        strlen(keys->attribute) >= sizeof r->attribute))
        rc = rl_error_set(RL_EINVAL, "attribute: 1..%zu bytes", sizeof r->attribute - 1);
    if (rc < 0) {
        free(r);
        return rc;
    }
    snprintf(r->attribute, sizeof r->attribute, "%s", keys->attribute);
    r->rule.n_looks = rl_adapt_looks(&r->opts, r->looks, RL_ADAPT_MAX_LOOKS);
    r->rule.looks = r->looks;
    r->rule.decide = decide;
    r->rule.ud = r;
    *out = r;
    return RL_OK;
}

const rl_bench_stop_rule *rl_adapt_rule_get(const rl_adapt_rule *rule)
{
    return &rule->rule;
}

const char *rl_adapt_rule_stopped(const rl_adapt_rule *rule)
{
    return rule->stopped;
}

void rl_adapt_rule_free(rl_adapt_rule *rule)
{
    free(rule);
}
