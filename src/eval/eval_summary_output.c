/* Writes a summary over many runs (eval_summary.c gathered it): checks.csv (every check of
 * every run), summary.json (runs, pass rates per metric and check overall and per group),
 * figures (pass rates per group; each check's worst value per run), runs/ (a relative link
 * to each run's evaluation) and report.html, failing runs first. */
#include "eval/eval_summary.h"

#include "core/text.h"
#include "runlab/csv.h"
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"
#include "runlab/number.h"
#include "runlab/plot.h"
#include "runlab/report.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_GROUP_COLUMNS = 6, MAX_BAR_GROUPS = 8, MAX_PANELS = 64, PANEL_COLS = 4 };

/* How one run did on one (metric, check): FAIL when any of its instances failed; PASS when
 * each is PASS or N/A and one is PASS; NOT_JUDGED when some is INSUFFICIENT or UNAVAILABLE
 * and none failed; SKIP when every one is N/A or the run has none. */
typedef enum { K_SKIP, K_PASS, K_FAIL, K_NOT_JUDGED } run_outcome;

/* One (metric, check) over all runs. */
typedef struct key_stats {
    const char *metric, *check, *unit; /* borrowed from the first run that has it */
    bool at_least;   /* the limit is a minimum (a rate, a count, a distance apart) */
    size_t pass, fail, not_judged;
    size_t *group_pass, *group_runs; /* per group */
    double *worst;   /* per run, NaN when it has no value */
    double threshold;
} key_stats;

typedef struct summary_view {
    const sum_data *d;
    key_stats *keys;
    size_t nkeys;
    char **groups; /* distinct group values, sorted */
    size_t ngroups;
    size_t *group_of; /* per run, its index in groups */
    char **links;     /* per run, "runs/<k>_<name>" or NULL without an evaluation */
} summary_view;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static size_t key_index(summary_view *v, const sum_check *c)
{
    for (size_t k = 0; k < v->nkeys; k++)
        if (strcmp(v->keys[k].metric, c->metric) == 0 && strcmp(v->keys[k].check, c->check) == 0)
            return k;
    return v->nkeys;
}

static int build_view(summary_view *v)
{
    const sum_data *d = v->d;
    size_t cap = 0;
    v->group_of = calloc(d->n + 1, sizeof *v->group_of);
    v->groups = calloc(d->n + 1, sizeof *v->groups);
    v->links = calloc(d->n + 1, sizeof *v->links);
    if (!v->group_of || !v->groups || !v->links)
        return rl_error_set(RL_ENOMEM, "summary: out of memory");
    for (size_t i = 0; i < d->n; i++) {
        bool have = false;
        for (size_t g = 0; g < v->ngroups && !have; g++)
            have = strcmp(v->groups[g], d->runs[i].group) == 0;
        if (!have)
            v->groups[v->ngroups++] = d->runs[i].group;
    }
    if (v->ngroups > 1)
        qsort(v->groups, v->ngroups, sizeof *v->groups, cmp_str);
    for (size_t i = 0; i < d->n; i++)
        for (size_t g = 0; g < v->ngroups; g++)
            if (strcmp(v->groups[g], d->runs[i].group) == 0)
                v->group_of[i] = g;
    /* The keys in the order they first appear (the registry's order). */
    for (size_t i = 0; i < d->n; i++)
        for (size_t c = 0; c < d->runs[i].nchecks; c++) {
            const sum_check *ck = &d->runs[i].checks[c];
            if (key_index(v, ck) < v->nkeys)
                continue;
            int rc = rl_grow_array((void **)&v->keys, &cap, v->nkeys + 1, sizeof *v->keys, "checks");
            if (rc < 0)
                return rc;
            key_stats *k = &v->keys[v->nkeys++];
            memset(k, 0, sizeof *k);
            k->metric = ck->metric, k->check = ck->check, k->unit = ck->unit;
            k->threshold = NAN;
            k->group_pass = calloc(v->ngroups, sizeof *k->group_pass);
            k->group_runs = calloc(v->ngroups, sizeof *k->group_runs);
            k->worst = malloc(d->n * sizeof *k->worst);
            if (!k->group_pass || !k->group_runs || !k->worst)
                return rl_error_set(RL_ENOMEM, "summary: out of memory");
        }
    /* Which way each limit goes, from the data, by a vote: a value clearly beyond its
       threshold that passes, or one clearly short of it that fails, is evidence of a
       minimum; the opposite of a maximum. "Clearly": a check may pass a value over its
       limit by less than its resolution (docs/eval.md), so such values do not vote. */
    long *votes = calloc(v->nkeys + 1, sizeof *votes);
    if (!votes)
        return rl_error_set(RL_ENOMEM, "summary: out of memory");
    for (size_t i = 0; i < d->n; i++)
        for (size_t c = 0; c < d->runs[i].nchecks; c++) {
            const sum_check *ck = &d->runs[i].checks[c];
            size_t k = key_index(v, ck);
            if (isfinite(ck->threshold))
                v->keys[k].threshold = ck->threshold;
            if (!isfinite(ck->value) || !isfinite(ck->threshold) ||
                (ck->status != RL_EVAL_PASS && ck->status != RL_EVAL_FAIL))
                continue;
            double tol = 1e-3 * fabs(ck->threshold) + 1e-9;
            int side = ck->value > ck->threshold + tol ? 1 : ck->value < ck->threshold - tol ? -1 : 0;
            votes[k] += ck->status == RL_EVAL_PASS ? side : -side; /* > 0: a minimum */
        }
    for (size_t k = 0; k < v->nkeys; k++)
        v->keys[k].at_least = votes[k] > 0;
    free(votes);
    run_outcome *out = calloc(v->nkeys + 1, sizeof *out);
    if (!out)
        return rl_error_set(RL_ENOMEM, "summary: out of memory");
    for (size_t i = 0; i < d->n; i++) {
        const sum_run *r = &d->runs[i];
        memset(out, 0, (v->nkeys + 1) * sizeof *out);
        for (size_t k = 0; k < v->nkeys; k++)
            v->keys[k].worst[i] = NAN;
        for (size_t c = 0; c < r->nchecks; c++) {
            const sum_check *ck = &r->checks[c];
            size_t k = key_index(v, ck);
            key_stats *ks = &v->keys[k];
            run_outcome o = ck->status == RL_EVAL_FAIL ? K_FAIL
                            : ck->status == RL_EVAL_PASS ? K_PASS
                            : ck->status == RL_EVAL_NA   ? K_SKIP
                                                         : K_NOT_JUDGED;
            if (o == K_FAIL || (o == K_NOT_JUDGED && out[k] != K_FAIL) ||
                (o == K_PASS && out[k] == K_SKIP))
                out[k] = o;
            if (isfinite(ck->value) &&
                (isnan(ks->worst[i]) ||
                 (ks->at_least ? ck->value < ks->worst[i] : ck->value > ks->worst[i])))
                ks->worst[i] = ck->value;
        }
        for (size_t k = 0; k < v->nkeys; k++) {
            key_stats *ks = &v->keys[k];
            if (out[k] == K_SKIP)
                continue;
            ks->pass += out[k] == K_PASS;
            ks->fail += out[k] == K_FAIL;
            ks->not_judged += out[k] == K_NOT_JUDGED;
            ks->group_runs[v->group_of[i]]++;
            ks->group_pass[v->group_of[i]] += out[k] == K_PASS;
        }
    }
    free(out);
    return RL_OK;
}

static void free_view(summary_view *v)
{
    for (size_t k = 0; k < v->nkeys; k++) {
        free(v->keys[k].group_pass);
        free(v->keys[k].group_runs);
        free(v->keys[k].worst);
    }
    for (size_t i = 0; v->links && i < v->d->n; i++)
        free(v->links[i]);
    free(v->keys), free(v->groups), free(v->group_of), free(v->links);
}

static double rate(size_t pass, size_t runs)
{
    return runs ? (double)pass / (double)runs : NAN;
}

static const char *verdict_text(const sum_run *r)
{
    return r->verdict < 0 ? "ERROR" : rl_eval_verdict_name((rl_eval_verdict)r->verdict);
}

/* ---- runs/ links ---------------------------------------------------------------------- */

/* `to` relative to the directory `from` (both absolute, no trailing '/'). */
static int relative_path(const char *from, const char *to, char *out, size_t cap)
{
    size_t common = 0, i = 0;
    while (from[i] && from[i] == to[i]) {
        i++;
        if (from[i] == '/' || from[i] == 0)
            common = (to[i] == '/' || to[i] == 0) ? i : common;
    }
    if (from[i] == 0 && (to[i] == '/' || to[i] == 0))
        common = i;
    size_t k = 0;
    for (const char *p = from + common; *p; p++)
        if (*p == '/' && k + 3 < cap) {
            memcpy(out + k, "../", 3);
            k += 3;
        }
    const char *rest = to + common + (to[common] == '/');
    int n = snprintf(out + k, cap - k, "%s", rest);
    if (n < 0 || (size_t)n >= cap - k)
        return rl_error_set(RL_ERANGE, "summary: path too long");
    if (k + (size_t)n == 0)
        snprintf(out, cap, ".");
    return RL_OK;
}

/* runs/<k>_<name> -> the run's evaluation, relative, so that the summary and the runs can
 * move together; the report links <link>/report.html (its links stay inside its folder). */
static int make_links(summary_view *v)
{
    const sum_data *d = v->d;
    char runs_dir[PATH_MAX], real_runs[PATH_MAX];
    int rc = rl_path_join(runs_dir, sizeof runs_dir, d->dir, "runs");
    if (rc < 0 || (rc = rl_fs_mkdirs(runs_dir)) < 0)
        return rc;
    if (!realpath(runs_dir, real_runs))
        return rl_error_set_errno(RL_EIO, errno, "%s", runs_dir);
    for (size_t i = 0; i < d->n; i++) {
        const sum_run *r = &d->runs[i];
        if (!r->evaluation)
            continue;
        char name[96], target[PATH_MAX], eval_dir[PATH_MAX], rel[PATH_MAX], link[PATH_MAX];
        int k = snprintf(name, sizeof name, "%04zu_", i + 1);
        for (const char *p = r->listed.name; *p && k < 80; p++) /* a safe file name */
            name[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                                (*p >= '0' && *p <= '9') || *p == '-' || *p == '.'
                            ? *p
                            : '_';
        name[k] = 0;
        if (snprintf(eval_dir, sizeof eval_dir, "%s/evaluations/%s", r->listed.dir,
                     r->evaluation) >= (int)sizeof eval_dir ||
            !realpath(eval_dir, target))
            return rl_error_set(RL_EIO, "summary: %s: evaluation not found", eval_dir);
        if ((rc = relative_path(real_runs, target, rel, sizeof rel)) < 0 ||
            (rc = rl_path_join(link, sizeof link, runs_dir, name)) < 0)
            return rc;
        if (symlink(rel, link) != 0)
            return rl_error_set_errno(RL_EIO, errno, "summary: link %s", link);
        char href[128];
        snprintf(href, sizeof href, "runs/%s", name);
        if (!(v->links[i] = strdup(href)))
            return rl_error_set(RL_ENOMEM, "summary: out of memory");
    }
    return RL_OK;
}

/* ---- checks.csv ------------------------------------------------------------------------ */

static void fmt_num(double v, char *buf, size_t cap)
{
    buf[0] = 0;
    if (isfinite(v))
        rl_format_f64(v, buf, cap);
}

static int write_csv(const summary_view *v)
{
    const sum_data *d = v->d;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return rl_error_set(RL_ENOMEM, "checks.csv: out of memory");
    rl_csv_writer *w;
    int rc = rl_csv_writer_new(&w, f, ',', false);
    if (rc == RL_OK) {
        static const char *const head[] = {"run", "directory", "group", "result", "evaluation",
                                           "metric", "check", "vehicles", "status", "value",
                                           "threshold", "unit", "reason"};
        rc = rl_csv_write_row(w, head, 13);
        for (size_t i = 0; rc == RL_OK && i < d->n; i++) {
            const sum_run *r = &d->runs[i];
            for (size_t c = 0; rc == RL_OK && c < r->nchecks; c++) {
                const sum_check *ck = &r->checks[c];
                char val[40], thr[40];
                fmt_num(ck->value, val, sizeof val);
                fmt_num(ck->threshold, thr, sizeof thr);
                const char *row[] = {r->listed.run_id ? r->listed.run_id : r->listed.name,
                                     r->listed.dir, r->group, verdict_text(r), r->evaluation,
                                     ck->metric, ck->check, ck->vehicles,
                                     rl_eval_status_name(ck->status), val, thr, ck->unit,
                                     ck->reason};
                rc = rl_csv_write_row(w, row, 13);
            }
        }
        rl_csv_writer_free(w);
    }
    fclose(f);
    char path[PATH_MAX];
    if (rc == RL_OK && (rc = rl_path_join(path, sizeof path, d->dir, "checks.csv")) == RL_OK)
        rc = rl_fs_write_atomic(path, text, len, 0644);
    free(text);
    return rc;
}

/* ---- summary.json ---------------------------------------------------------------------- */

static void json_str_or_null(rl_json_writer *j, const char *s)
{
    s ? rl_json_string(j, s) : rl_json_null(j);
}

static int write_json(const summary_view *v)
{
    const sum_data *d = v->d;
    rl_json_writer *j;
    int rc = rl_json_writer_new_buffer(&j, RL_JSON_PRETTY);
    if (rc < 0)
        return rc;
    size_t verdicts[RL_EVAL_VERDICT_COUNT] = {0};
    for (size_t i = 0; i < d->n; i++)
        if (d->runs[i].verdict >= 0)
            verdicts[d->runs[i].verdict]++;
    rl_json_begin_object(j);
    rl_json_key(j, "format"), rl_json_string(j, "runlab.evaluation_summary");
    rl_json_key(j, "format_version"), rl_json_int64(j, 1);
    rl_json_key(j, "config_sha256"), rl_json_string(j, d->config_sha256);
    rl_json_key(j, "group_by"), rl_json_string(j, d->group_by);
    rl_json_key(j, "counts"), rl_json_begin_object(j);
    rl_json_key(j, "runs"), rl_json_int64(j, (int64_t)d->n);
    rl_json_key(j, "reused"), rl_json_int64(j, (int64_t)d->reused);
    rl_json_key(j, "evaluated"), rl_json_int64(j, (int64_t)d->evaluated);
    rl_json_key(j, "errors"), rl_json_int64(j, (int64_t)d->errors);
    for (int r = 0; r < RL_EVAL_VERDICT_COUNT; r++)
        rl_json_key(j, rl_eval_verdict_name((rl_eval_verdict)r)), rl_json_int64(j, (int64_t)verdicts[r]);
    rl_json_end_object(j);
    rl_json_key(j, "groups"), rl_json_begin_array(j);
    for (size_t g = 0; g < v->ngroups; g++)
        rl_json_string(j, v->groups[g]);
    rl_json_end_array(j);
    rl_json_key(j, "runs"), rl_json_begin_array(j);
    for (size_t i = 0; i < d->n; i++) {
        const sum_run *r = &d->runs[i];
        rl_json_begin_object(j);
        rl_json_key(j, "directory"), rl_json_string(j, r->listed.dir);
        rl_json_key(j, "run_id"), json_str_or_null(j, r->listed.run_id);
        rl_json_key(j, "group"), rl_json_string(j, r->group);
        rl_json_key(j, "result"), json_str_or_null(j, r->verdict < 0 ? NULL : verdict_text(r));
        rl_json_key(j, "evaluation"), json_str_or_null(j, r->evaluation);
        rl_json_key(j, "reused"), rl_json_bool(j, r->reused);
        char report[PATH_MAX];
        snprintf(report, sizeof report, "%s/report.html", v->links[i] ? v->links[i] : "");
        rl_json_key(j, "report"), json_str_or_null(j, v->links[i] ? report : NULL);
        rl_json_key(j, "interruption"), json_str_or_null(j, r->interruption);
        rl_json_key(j, "error"), json_str_or_null(j, r->error);
        size_t counts[RL_EVAL_STATUS_COUNT] = {0};
        for (size_t c = 0; c < r->nchecks; c++)
            counts[r->checks[c].status]++;
        rl_json_key(j, "counts"), rl_json_begin_object(j);
        for (int s = 0; s < RL_EVAL_STATUS_COUNT; s++)
            rl_json_key(j, rl_eval_status_name((rl_eval_status)s)), rl_json_int64(j, (int64_t)counts[s]);
        rl_json_end_object(j);
        rl_json_end_object(j);
    }
    rl_json_end_array(j);
    rl_json_key(j, "checks"), rl_json_begin_array(j);
    for (size_t k = 0; k < v->nkeys; k++) {
        const key_stats *ks = &v->keys[k];
        size_t judged = ks->pass + ks->fail + ks->not_judged;
        rl_json_begin_object(j);
        rl_json_key(j, "metric"), rl_json_string(j, ks->metric);
        rl_json_key(j, "check"), rl_json_string(j, ks->check);
        rl_json_key(j, "unit"), rl_json_string(j, ks->unit);
        rl_json_key(j, "limit"), rl_json_string(j, ks->at_least ? "at least" : "at most");
        rl_json_key(j, "threshold"), rl_json_double(j, ks->threshold);
        rl_json_key(j, "runs"), rl_json_int64(j, (int64_t)judged);
        rl_json_key(j, "PASS"), rl_json_int64(j, (int64_t)ks->pass);
        rl_json_key(j, "FAIL"), rl_json_int64(j, (int64_t)ks->fail);
        rl_json_key(j, "not_judged"), rl_json_int64(j, (int64_t)ks->not_judged);
        rl_json_key(j, "pass_rate"), rl_json_double(j, rate(ks->pass, judged));
        rl_json_key(j, "by_group"), rl_json_begin_object(j);
        for (size_t g = 0; g < v->ngroups; g++) {
            rl_json_key(j, v->groups[g]), rl_json_begin_object(j);
            rl_json_key(j, "runs"), rl_json_int64(j, (int64_t)ks->group_runs[g]);
            rl_json_key(j, "PASS"), rl_json_int64(j, (int64_t)ks->group_pass[g]);
            rl_json_key(j, "pass_rate"), rl_json_double(j, rate(ks->group_pass[g], ks->group_runs[g]));
            rl_json_end_object(j);
        }
        rl_json_end_object(j);
        rl_json_end_object(j);
    }
    rl_json_end_array(j);
    rl_json_end_object(j);
    rc = rl_json_writer_finish(j);
    char path[PATH_MAX];
    if (rc == RL_OK && (rc = rl_path_join(path, sizeof path, d->dir, "summary.json")) == RL_OK) {
        size_t len;
        const char *text = rl_json_writer_buffer(j, &len);
        rl_buf b = {0};
        rl_buf_put(&b, text, len);
        rl_buf_putc(&b, '\n');
        char *all = rl_buf_take(&b, &len);
        rc = all ? rl_fs_write_atomic(path, all, len, 0644)
                 : rl_error_set(RL_ENOMEM, "summary: out of memory");
        free(all);
    }
    rl_json_writer_free(j);
    return rc;
}

/* ---- figures -------------------------------------------------------------------------- */

/* Saves `fig` as figures/<name>.png and .svg with its record; the SVG text goes to *svg. */
static int save_figure(const summary_view *v, rl_figure *fig, const char *name,
                       const char *caption, char **svg)
{
    const sum_data *d = v->d;
    char dir[PATH_MAX], path[PATH_MAX];
    size_t len;
    int rc = rl_path_join(dir, sizeof dir, d->dir, "figures");
    if (rc == RL_OK)
        rc = rl_fs_mkdirs(dir);
    if (rc == RL_OK && snprintf(path, sizeof path, "%s/%s.png", dir, name) >= (int)sizeof path)
        rc = rl_error_set(RL_ERANGE, "summary: path too long");
    if (rc == RL_OK)
        rc = rl_figure_save(fig, path, RL_PLOT_PNG);
    if (rc == RL_OK)
        rc = rl_figure_to_svg(fig, NULL, svg, &len);
    if (rc == RL_OK) {
        memcpy(path + strlen(path) - 3, "svg", 3);
        rc = rl_fs_write_atomic(path, *svg, len, 0644);
    }
    if (rc == RL_OK) {
        rl_figure_record rec = {d->opts->argc, d->opts->argv, NULL, 0, caption};
        rc = rl_figure_record_write(path, &rec);
    }
    return rc < 0 ? rl_error_prefix(rc, "summary figure %s", name) : rc;
}

/* Pass rate (%) per check, one bar series per group (the first MAX_BAR_GROUPS). */
static int figure_pass_rates(const summary_view *v, char **svg)
{
    rl_figure *fig;
    size_t n = v->nkeys, ng = v->ngroups < MAX_BAR_GROUPS ? v->ngroups : MAX_BAR_GROUPS;
    int rc = rl_figure_new(&fig, 1, 1);
    if (rc < 0)
        return rc;
    char **cats = calloc(n, sizeof *cats);
    double *vals = calloc(n, sizeof *vals);
    rc = cats && vals ? RL_OK : rl_error_set(RL_ENOMEM, "summary: out of memory");
    for (size_t k = 0; rc == RL_OK && k < n; k++) {
        rl_buf b = {0};
        rl_buf_printf(&b, "%s/%s", v->keys[k].metric, v->keys[k].check);
        if (!(cats[k] = rl_buf_take(&b, NULL)))
            rc = rl_error_set(RL_ENOMEM, "summary: out of memory");
    }
    rl_axes *ax = rl_figure_axes(fig, 0, 0);
    if (rc == RL_OK)
        rc = rl_figure_set_size_in(fig, 9, 1.5 + 0.22 * (double)n * (ng > 2 ? 2 : 1), 100);
    if (rc == RL_OK)
        rc = rl_axes_set_bar_mode(ax, RL_BAR_GROUPED, true);
    if (rc == RL_OK)
        rc = rl_axes_set_title(ax, "Pass rate per check");
    if (rc == RL_OK)
        rc = rl_axes_set_xlabel(ax, "runs passing", "%");
    for (size_t g = 0; rc == RL_OK && g < ng; g++) {
        for (size_t k = 0; k < n; k++)
            vals[k] = 100.0 * rate(v->keys[k].group_pass[g], v->keys[k].group_runs[g]);
        rl_series_opts so;
        rl_series_opts_init(&so);
        so.label = v->groups[g];
        rc = rl_axes_bar(ax, g ? NULL : (const char *const *)cats, n, vals, &so);
    }
    if (rc == RL_OK && ng > 1)
        rc = rl_axes_set_legend(ax, RL_LEGEND_BEST);
    if (rc == RL_OK)
        rc = save_figure(v, fig, "pass_rate",
                         "Pass rate of each check (runs where every vehicle passes it), one bar "
                         "per group",
                         svg);
    for (size_t k = 0; cats && k < n; k++)
        free(cats[k]);
    free(cats), free(vals);
    rl_figure_free(fig);
    return rc;
}

/* One histogram panel per check with values: each run's worst value. */
static int figure_worst(const summary_view *v, char **svg)
{
    const sum_data *d = v->d;
    size_t panels[MAX_PANELS], np = 0;
    for (size_t k = 0; k < v->nkeys && np < MAX_PANELS; k++)
        for (size_t i = 0; i < d->n; i++)
            if (isfinite(v->keys[k].worst[i])) {
                panels[np++] = k;
                break;
            }
    if (np == 0)
        return RL_OK;
    int cols = np < PANEL_COLS ? (int)np : PANEL_COLS, rows = (int)((np + PANEL_COLS - 1) / PANEL_COLS);
    rl_figure *fig;
    int rc = rl_figure_new(&fig, rows, cols);
    if (rc < 0)
        return rc;
    double *vals = malloc(d->n * sizeof *vals);
    rc = vals ? rl_figure_set_size_in(fig, 3.2 * cols, 2.6 * rows, 100)
              : rl_error_set(RL_ENOMEM, "summary: out of memory");
    for (size_t p = 0; rc == RL_OK && p < np; p++) {
        const key_stats *ks = &v->keys[panels[p]];
        size_t n = 0;
        for (size_t i = 0; i < d->n; i++)
            if (isfinite(ks->worst[i]))
                vals[n++] = ks->worst[i];
        rl_axes *ax = rl_figure_axes(fig, (int)(p / PANEL_COLS), (int)(p % PANEL_COLS));
        char title[160];
        snprintf(title, sizeof title, "%s/%s (%s)", ks->metric, ks->check,
                 ks->at_least ? "min" : "max");
        rl_series_opts so;
        rl_series_opts_init(&so);
        rc = rl_axes_set_title(ax, title);
        if (rc == RL_OK)
            rc = rl_axes_set_xlabel(ax, "worst value", ks->unit);
        if (rc == RL_OK)
            rc = rl_axes_hist(ax, vals, n, &so);
    }
    if (rc == RL_OK)
        rc = rl_figure_set_title(fig, "Worst value per run of each check");
    if (rc == RL_OK)
        rc = save_figure(v, fig, "worst_values",
                         "Distribution over the runs of each check's worst value (the largest, "
                         "or the smallest for a minimum)",
                         svg);
    free(vals);
    rl_figure_free(fig);
    return rc;
}

/* ---- report.html ----------------------------------------------------------------------- */

/* The checks of a run that did not pass, in brief ("states_speed/acceleration (2); ..."). */
static char *failing_checks(const sum_run *r, const char **first_reason)
{
    rl_buf b = {0};
    rl_buf_puts(&b, "");
    size_t shown = 0;
    *first_reason = "";
    for (int pass = 0; pass < 2; pass++) /* FAIL first, then INSUFFICIENT / UNAVAILABLE */
        for (size_t c = 0; c < r->nchecks; c++) {
            const sum_check *ck = &r->checks[c];
            bool want = pass == 0 ? ck->status == RL_EVAL_FAIL
                                  : ck->status == RL_EVAL_INSUFFICIENT ||
                                        ck->status == RL_EVAL_UNAVAILABLE;
            if (!want)
                continue;
            if (!**first_reason)
                *first_reason = ck->reason;
            if (shown++ < 6)
                rl_buf_printf(&b, "%s%s %s/%s (%s)", shown > 1 ? "; " : "",
                              rl_eval_status_name(ck->status), ck->metric, ck->check, ck->vehicles);
        }
    if (shown > 6)
        rl_buf_printf(&b, "; and %zu more", shown - 6);
    return rl_buf_take(&b, NULL);
}

static int report_runs(rl_report *rep, const summary_view *v)
{
    const sum_data *d = v->d;
    static const char *const head[] = {"run", "group", "result", "checks not passing", "reason"};
    int rc = rl_report_table_begin(rep, "Runs that do not pass (FAIL, then INCOMPLETE, then not evaluated)", head, 5,
                                   RL_TABLE_SORTABLE);
    static const int order[] = {RL_EVAL_VERDICT_FAIL, RL_EVAL_VERDICT_INCOMPLETE, -1};
    static const rl_badge badges[] = {RL_BADGE_PASS, RL_BADGE_FAIL, RL_BADGE_INCOMPLETE};
    for (int o = 0; rc == RL_OK && o < 3; o++)
        for (size_t i = 0; rc == RL_OK && i < d->n; i++) {
            const sum_run *r = &d->runs[i];
            if (r->verdict != order[o])
                continue;
            const char *reason;
            char *checks = failing_checks(r, &reason);
            char href[PATH_MAX];
            snprintf(href, sizeof href, "%s/report.html", v->links[i] ? v->links[i] : "");
            const char *name = r->listed.run_id ? r->listed.run_id : r->listed.name;
            rl_report_cell cells[5] = {
                {v->links[i] ? RL_CELL_LINK : RL_CELL_TEXT, name, v->links[i] ? href : NULL, 0},
                {RL_CELL_TEXT, r->group, NULL, 0},
                r->verdict < 0 ? (rl_report_cell){RL_CELL_TEXT, "not evaluated", NULL, 0}
                               : (rl_report_cell){RL_CELL_BADGE, NULL, NULL, badges[r->verdict]},
                {RL_CELL_TEXT, checks ? checks : "", NULL, 0},
                {RL_CELL_TEXT, r->error ? r->error : reason, NULL, 0}};
            rc = rl_report_table_row_cells(rep, cells);
            free(checks);
        }
    return rc == RL_OK ? rl_report_table_end(rep) : rc;
}

static int report_rates(rl_report *rep, const summary_view *v)
{
    size_t ng = v->ngroups < MAX_GROUP_COLUMNS ? v->ngroups : MAX_GROUP_COLUMNS;
    const char *head[4 + MAX_GROUP_COLUMNS] = {"metric", "check", "runs", "pass rate"};
    for (size_t g = 0; g < ng; g++)
        head[4 + g] = v->groups[g];
    char caption[256];
    snprintf(caption, sizeof caption, "Pass rate per check%s%s%s", ng ? " (by " : "",
             ng ? v->d->group_by : "", ng ? ")" : "");
    int rc = rl_report_table_begin(rep, caption, head, 4 + ng, RL_TABLE_SORTABLE);
    for (size_t k = 0; rc == RL_OK && k < v->nkeys; k++) {
        const key_stats *ks = &v->keys[k];
        size_t judged = ks->pass + ks->fail + ks->not_judged;
        char cells_text[4 + MAX_GROUP_COLUMNS][48];
        const char *cells[4 + MAX_GROUP_COLUMNS] = {ks->metric, ks->check};
        snprintf(cells_text[2], 48, "%zu", judged);
        snprintf(cells_text[3], 48, "%.0f%% (%zu/%zu)", 100.0 * rate(ks->pass, judged), ks->pass,
                 judged);
        cells[2] = cells_text[2], cells[3] = cells_text[3];
        for (size_t g = 0; g < ng; g++) {
            if (ks->group_runs[g])
                snprintf(cells_text[4 + g], 48, "%.0f%% (%zu/%zu)",
                         100.0 * rate(ks->group_pass[g], ks->group_runs[g]), ks->group_pass[g],
                         ks->group_runs[g]);
            else
                snprintf(cells_text[4 + g], 48, "-");
            cells[4 + g] = cells_text[4 + g];
        }
        rc = rl_report_table_row(rep, cells);
    }
    return rc == RL_OK ? rl_report_table_end(rep) : rc;
}

static int write_report(const summary_view *v, char *const svgs[2])
{
    const sum_data *d = v->d;
    size_t verdicts[RL_EVAL_VERDICT_COUNT] = {0};
    for (size_t i = 0; i < d->n; i++)
        if (d->runs[i].verdict >= 0)
            verdicts[d->runs[i].verdict]++;
    char title[128];
    snprintf(title, sizeof title, "Summary of %zu runs", d->n);
    rl_report *rep;
    int rc = rl_report_new(&rep, title);
    if (rc < 0)
        return rc;
    rl_report_status(rep, "Result",
                     verdicts[RL_EVAL_VERDICT_FAIL]                        ? RL_BADGE_FAIL
                     : verdicts[RL_EVAL_VERDICT_INCOMPLETE] || d->errors ? RL_BADGE_INCOMPLETE
                                                                           : RL_BADGE_PASS);
    char line[512];
    snprintf(line, sizeof line,
             "%zu runs: %zu PASS, %zu FAIL, %zu INCOMPLETE, %zu not evaluated. %zu evaluations "
             "reused (same configuration, SHA-256 %.12s), %zu made now.",
             d->n, verdicts[0], verdicts[1], verdicts[2], d->errors, d->reused, d->config_sha256,
             d->evaluated);
    rl_report_paragraph(rep, line);
    if (d->n > verdicts[RL_EVAL_VERDICT_PASS] && (rc = report_runs(rep, v)) < 0)
        goto out;
    if ((rc = report_rates(rep, v)) < 0)
        goto out;
    for (int f = 0; f < 2; f++)
        if (svgs[f] && (rc = rl_report_figure_svg(rep, svgs[f], NULL)) < 0)
            goto out;
    rl_report_heading(rep, 2, "Files");
    rl_report_link(rep, "summary.json", NULL);
    rl_report_link(rep, "checks.csv", NULL);
    char path[PATH_MAX];
    if ((rc = rl_path_join(path, sizeof path, d->dir, "report.html")) == RL_OK)
        rc = rl_report_write(rep, path);
out:
    rl_report_free(rep);
    return rc;
}

int eval_summary_write(const sum_data *d)
{
    summary_view v = {.d = d};
    char *svgs[2] = {NULL, NULL};
    int rc = build_view(&v);
    if (rc == RL_OK)
        rc = make_links(&v);
    if (rc == RL_OK)
        rc = write_csv(&v);
    if (rc == RL_OK)
        rc = write_json(&v);
    if (rc == RL_OK && v.nkeys)
        rc = figure_pass_rates(&v, &svgs[0]);
    if (rc == RL_OK && v.nkeys)
        rc = figure_worst(&v, &svgs[1]);
    if (rc == RL_OK)
        rc = write_report(&v, svgs);
    free(svgs[0]), free(svgs[1]);
    free_view(&v);
    return rc < 0 ? rl_error_prefix(rc, "%s", d->dir) : rc;
}
