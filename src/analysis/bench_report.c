/* The HTML report of a benchmark directory: reads results.json (the bench engine's
 * export, so this analysis module does not depend on the engine's internals), computes
 * per-planner statistics (runlab/stats.h) and draws status rates, box plots and best-cost
 * curves (runlab/plot.h) into report.html and figures/. */
#include "analysis/bench_report_adaptive.h"
#include "runlab/bench_report.h"

#include "runlab/bench.h"
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"
#include "runlab/plot.h"
#include "runlab/report.h"
#include "runlab/stats.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_RESULTS_BYTES = 1 << 30,
    MAX_GRID = 4000,  /* points of a best-cost curve */
    PX_WIDE = 1040,   /* fits the report's 1100 px column, so inline SVG is not scaled */
    PX_NARROW = 760
};

/* The progress property drawn over time (RRT*'s, and OMPL's convention). */
static const char COST_PROGRESS[] = "best cost";

typedef struct dvec {
    double *v;
    size_t n, cap;
    bool oom;
} dvec;

static void dv_push(dvec *d, double x)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 16;
        double *v = realloc(d->v, cap * sizeof *v);
        if (!v) {
            d->oom = true;
            return;
        }
        d->v = v;
        d->cap = cap;
    }
    d->v[d->n++] = x;
}

typedef struct planner_stats {
    const char *name; /* borrowed from the JSON document */
    json_object *runs;
    size_t n_runs, solved;
    size_t by_status[RL_RUN_STATUS_COUNT];
    size_t failed;           /* runs without an exact or approximate solution */
    size_t first_failed;     /* index of the first of them */
    int first_failed_status; /* its status */
    const char *first_reason; /* its reason (borrowed), NULL when it has none */
    dvec time, mem, len;
    int cost_col; /* column of COST_PROGRESS in the progress rows, -1 when none */
    rl_median_ci ci_time, ci_mem, ci_len;
} planner_stats;

typedef struct model {
    json_object *root;
    const char *experiment;
    double max_time, tbu;
    planner_stats *pl;
    size_t n;
    int best; /* index of the best planner, -1 when none solved */
} model;

static void model_free(model *m)
{
    for (size_t i = 0; m->pl && i < m->n; i++) {
        free(m->pl[i].time.v);
        free(m->pl[i].mem.v);
        free(m->pl[i].len.v);
    }
    free(m->pl);
    json_object_put(m->root);
}

static bool is_number(json_object *v)
{
    return json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int);
}

static bool num_of(json_object *o, const char *key, double *out)
{
    json_object *v;
    if (!o || !json_object_object_get_ex(o, key, &v) || !is_number(v))
        return false;
    *out = json_object_get_double(v);
    return true;
}

static int run_status(json_object *run, json_object *props)
{
    double d;
    if (num_of(props, "status", &d) && d >= 0 && d < RL_RUN_STATUS_COUNT)
        return (int)d;
    const char *s = NULL;
    if (rl_json_get_string(run, "status", &s) == RL_OK)
        for (int i = 0; i < RL_RUN_STATUS_COUNT; i++)
            if (strcmp(s, rl_bench_status_name((rl_bench_status)i)) == 0)
                return i;
    return RL_RUN_UNKNOWN;
}

static int model_read(const char *dir, model *m)
{
    memset(m, 0, sizeof *m);
    m->best = -1;
    char path[PATH_MAX];
    int rc = rl_path_join(path, sizeof path, dir, "results.json");
    if (rc < 0)
        return rc;
    if ((rc = rl_json_read_file(path, MAX_RESULTS_BYTES, &m->root)) < 0)
        return rc;
    json_object *planners;
    if (!m->root || !json_object_is_type(m->root, json_type_object))
        return rl_error_set(RL_EPARSE, "%s: not a benchmark's results (no object)", path);
    if ((rc = rl_json_get_string(m->root, "experiment", &m->experiment)) < 0 ||
        (rc = rl_json_get_array(m->root, "planners", &planners)) < 0)
        return rl_error_prefix(rc, "%s", path);
    if (!num_of(m->root, "max_time", &m->max_time) || !(m->max_time > 0))
        m->max_time = NAN;
    if (!num_of(m->root, "time_between_updates", &m->tbu) || !(m->tbu > 0))
        m->tbu = 0.05;
    m->n = json_object_array_length(planners);
    m->pl = calloc(m->n ? m->n : 1, sizeof *m->pl);
    if (!m->pl)
        return rl_error_set(RL_ENOMEM, "out of memory");
    for (size_t i = 0; i < m->n; i++) {
        planner_stats *p = &m->pl[i];
        json_object *jp = json_object_array_get_idx(planners, i), *cols = NULL;
        if (!jp || (rc = rl_json_get_string(jp, "name", &p->name)) < 0 ||
            (rc = rl_json_get_array(jp, "runs", &p->runs)) < 0)
            return rl_error_set(RL_EPARSE, "%s: planners[%zu]: %s", path, i,
                                jp ? rl_error_last() : "expected an object, found null");
        p->cost_col = -1;
        if (rl_json_get_array(jp, "progress_columns", &cols) == RL_OK)
            for (size_t c = 0; c < json_object_array_length(cols); c++) {
                const char *cn = json_object_get_string(json_object_array_get_idx(cols, c));
                if (cn && strcmp(cn, COST_PROGRESS) == 0)
                    p->cost_col = (int)c;
            }
        p->n_runs = json_object_array_length(p->runs);
        for (size_t r = 0; r < p->n_runs; r++) {
            json_object *run = json_object_array_get_idx(p->runs, r), *props = NULL;
            if (!run || rl_json_get_object(run, "properties", &props) < 0)
                props = NULL;
            int st = run ? run_status(run, props) : RL_RUN_UNKNOWN;
            p->by_status[st]++;
            bool solved = st == RL_RUN_EXACT;
            p->solved += solved;
            if (!solved && st != RL_RUN_APPROXIMATE && p->failed++ == 0) {
                const char *reason = NULL;
                p->first_failed = r;
                p->first_failed_status = st;
                if (run && rl_json_get_string(run, "reason", &reason) == RL_OK && reason && *reason)
                    p->first_reason = reason;
            }
            double v;
            if (num_of(props, "time", &v) && isfinite(v))
                dv_push(&p->time, v);
            if (num_of(props, "memory", &v) && isfinite(v))
                dv_push(&p->mem, v);
            if (solved && num_of(props, "solution length", &v) && isfinite(v))
                dv_push(&p->len, v);
        }
        if (p->time.oom || p->mem.oom || p->len.oom)
            return rl_error_set(RL_ENOMEM, "out of memory");
        if ((p->time.n && rl_stats_median_ci(p->time.v, p->time.n, 0.95, &p->ci_time) < 0) ||
            (p->mem.n && rl_stats_median_ci(p->mem.v, p->mem.n, 0.95, &p->ci_mem) < 0) ||
            (p->len.n && rl_stats_median_ci(p->len.v, p->len.n, 0.95, &p->ci_len) < 0))
            return rl_error_last_code();
        if (p->solved > 0 && p->time.n > 0 &&
            (m->best < 0 || p->ci_time.median < m->pl[m->best].ci_time.median))
            m->best = (int)i;
    }
    return RL_OK;
}

/* ---- text helpers ---------------------------------------------------------------------- */

/* Three significant digits, but never an exponent for the sizes people type (a 4096 MB
 * limit reads "4096", not "4.1e+03"). */
static void fmt_num(double v, char *buf, size_t cap)
{
    if (!isfinite(v))
        snprintf(buf, cap, "—");
    else if (fabs(v) >= 1000 && fabs(v) < 1e15)
        snprintf(buf, cap, "%.0f", v);
    else
        snprintf(buf, cap, "%.3g", v);
}

static void fmt_ci(const rl_median_ci *ci, size_t n, char *buf, size_t cap)
{
    char a[24], b[24];
    if (n == 0) {
        snprintf(buf, cap, "—");
    } else if (!ci->available) {
        snprintf(buf, cap, "n/a (n = %zu < 6)", n);
    } else {
        fmt_num(ci->lo, a, sizeof a);
        fmt_num(ci->hi, b, sizeof b);
        /* No-break space and word joiner keep an interval on one line: browsers may
         * otherwise break after the en dash in a narrow column. */
        snprintf(buf, cap, "%s\u00a0–\u2060\u00a0%s", a, b);
    }
}

/* Multi-line header fields (setup, CPU) shown on one line. */
static void one_line(const char *s, char *buf, size_t cap)
{
    size_t o = 0;
    for (; s && *s && o + 3 < cap; s++) {
        if (*s == '\n') {
            if (s[1] && o)
                buf[o++] = ';', buf[o++] = ' ';
        } else {
            buf[o++] = *s;
        }
    }
    buf[o] = 0;
}

/* ---- figures ---------------------------------------------------------------------------- */

typedef struct ctx {
    const char *dir;
    const rl_bench_report_opts *opts;
    char results_path[PATH_MAX];
    rl_report *rep;
} ctx;

/* Saves figures/name.{png,svg} and its record, inlines it and links the files. */
static int emit(ctx *c, rl_figure *fig, const char *name, const char *caption)
{
    char path[PATH_MAX], rel[128];
    int rc = RL_OK;
    static const char *const exts[] = {"png", "svg"};
    for (int i = 0; i < 2 && rc == RL_OK; i++) {
        snprintf(rel, sizeof rel, "figures/%s.%s", name, exts[i]);
        if ((rc = rl_path_join_rel(path, sizeof path, c->dir, rel)) == RL_OK)
            rc = rl_figure_save(fig, path, RL_PLOT_AUTO);
    }
    if (rc < 0)
        return rc;
    const char *inputs[1] = {c->results_path};
    rl_figure_record rec = {0};
    if (c->opts) {
        rec.argc = c->opts->argc;
        rec.argv = c->opts->argv;
    }
    rec.inputs = inputs;
    rec.ninputs = 1;
    rec.description = caption;
    snprintf(rel, sizeof rel, "figures/%s.png", name);
    if ((rc = rl_path_join_rel(path, sizeof path, c->dir, rel)) < 0 ||
        (rc = rl_figure_record_write(path, &rec)) < 0 ||
        (rc = rl_report_figure(c->rep, fig, caption)) < 0)
        return rc;
    char svg[128], yaml[128];
    snprintf(svg, sizeof svg, "figures/%s.svg", name);
    snprintf(yaml, sizeof yaml, "figures/%s.yaml", name);
    if ((rc = rl_report_link(c->rep, rel, "PNG")) < 0 ||
        (rc = rl_report_link(c->rep, svg, "SVG")) < 0 ||
        (rc = rl_report_link(c->rep, yaml, "record")) < 0)
        return rc;
    return RL_OK;
}

static int new_fig(rl_figure **f, int cols, int w, int h)
{
    int rc = rl_figure_new(f, 1, cols);
    if (rc == RL_OK)
        rc = rl_figure_set_size_px(*f, w, h, 100);
    return rc;
}

/* Colours that carry meaning: green solved, orange timeout, red crash... (Okabe-Ito). */
static int status_color(int st)
{
    switch (st) {
    case RL_RUN_EXACT: return 2;
    case RL_RUN_APPROXIMATE: return 5;
    case RL_RUN_TIMEOUT: return 1;
    case RL_RUN_CRASH: return 3;
    case RL_RUN_ABORT: return 4;
    case RL_RUN_OUT_OF_MEMORY: return 7;
    case RL_RUN_ERROR: return 6;
    default: return 0;
    }
}

static int fig_status(ctx *c, const model *m)
{
    rl_figure *f = NULL;
    int rc = new_fig(&f, 1, PX_NARROW, 120 + 34 * (int)m->n);
    const char **cats = calloc(m->n, sizeof *cats);
    double *v = calloc(m->n, sizeof *v);
    if (rc == RL_OK && (!cats || !v))
        rc = rl_error_set(RL_ENOMEM, "out of memory");
    rl_axes *ax = f ? rl_figure_axes(f, 0, 0) : NULL;
    if (rc == RL_OK) {
        rl_axes_set_bar_mode(ax, RL_BAR_STACKED, true);
        rl_axes_set_xlabel(ax, "Share of runs", "%");
        rl_axes_set_xlim(ax, 0, 100);
        rl_axes_set_legend(ax, RL_LEGEND_OUTSIDE);
        for (size_t i = 0; i < m->n; i++)
            cats[i] = m->pl[i].name;
    }
    bool first = true;
    /* Exact solutions first so the solved rate reads from the left edge. */
    static const int order[] = {RL_RUN_EXACT,
                                RL_RUN_APPROXIMATE,
                                RL_RUN_TIMEOUT,
                                RL_RUN_CRASH,
                                RL_RUN_ABORT,
                                RL_RUN_OUT_OF_MEMORY,
                                RL_RUN_ERROR,
                                RL_RUN_UNKNOWN,
                                RL_RUN_INVALID_START,
                                RL_RUN_INVALID_GOAL,
                                RL_RUN_UNRECOGNIZED_GOAL,
                                RL_RUN_INFEASIBLE};
    for (size_t k = 0; rc == RL_OK && k < sizeof order / sizeof order[0]; k++) {
        int st = order[k];
        size_t total = 0;
        for (size_t i = 0; i < m->n; i++) {
            total += m->pl[i].by_status[st];
            v[i] = m->pl[i].n_runs ? 100.0 * (double)m->pl[i].by_status[st] /
                                         (double)m->pl[i].n_runs
                                   : 0;
        }
        if (!total)
            continue;
        rl_series_opts o;
        rl_series_opts_init(&o);
        o.label = rl_bench_status_name((rl_bench_status)st);
        o.color = status_color(st);
        rc = rl_axes_bar(ax, first ? cats : NULL, m->n, v, &o);
        first = false;
    }
    if (rc == RL_OK)
        rc = emit(c, f, "status", "Outcome of the runs per planner (share of runs by status)");
    free(cats);
    free(v);
    rl_figure_free(f);
    return rc;
}

/* Log scale when positive values span more than two decades (fast and slow planners). */
static bool wants_log(const model *m, size_t off)
{
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < m->n; i++) {
        const dvec *d = (const dvec *)((const char *)&m->pl[i] + off);
        for (size_t k = 0; k < d->n; k++) {
            if (d->v[k] <= 0)
                return false;
            lo = fmin(lo, d->v[k]);
            hi = fmax(hi, d->v[k]);
        }
    }
    return hi > 0 && isfinite(lo) && hi / lo > 100;
}

static int fig_boxes(ctx *c, const model *m)
{
    rl_figure *f = NULL;
    int rc = new_fig(&f, 3, PX_WIDE, 400);
    static const struct {
        size_t off;
        const char *title, *label, *unit;
    } panels[3] = {
        {offsetof(planner_stats, time), "Time (all runs)", "Time", "s"},
        {offsetof(planner_stats, mem), "Memory (all runs)", "Memory", "MB"},
        {offsetof(planner_stats, len), "Solution length (solved runs)", "Length", NULL},
    };
    for (int k = 0; k < 3 && rc == RL_OK; k++) {
        rl_axes *ax = rl_figure_axes(f, 0, k);
        rl_axes_set_title(ax, panels[k].title);
        rl_axes_set_ylabel(ax, panels[k].label, panels[k].unit);
        if (wants_log(m, panels[k].off))
            rl_axes_set_yscale(ax, RL_SCALE_LOG);
        for (size_t i = 0; i < m->n && rc == RL_OK; i++) {
            const dvec *d = (const dvec *)((const char *)&m->pl[i] + panels[k].off);
            rl_series_opts o;
            rl_series_opts_init(&o);
            o.color = (int)(i % RL_PLOT_PALETTE_SIZE);
            rc = rl_axes_box(ax, m->pl[i].name, d->v, d->n, &o);
        }
    }
    if (rc == RL_OK)
        rc = emit(c, f, "distributions",
                  "Time, memory and solution length per planner (box: quartiles and median; "
                  "whiskers: 1.5 IQR; points: outliers)");
    rl_figure_free(f);
    return rc;
}

/* Best cost of one run at time t: the last sample at or before t (samples are taken
 * about every tbu, so t gets half a period of slack), or the run's final value once it
 * has ended; +inf while it has no solution. */
/* Element `k` of a progress row, or NULL when the row is not an array or is too short:
 * results.json may have been edited by hand, and json-c aborts on a non-array. */
static json_object *row_cell(json_object *row, size_t k)
{
    return json_object_is_type(row, json_type_array) && k < json_object_array_length(row)
               ? json_object_array_get_idx(row, k)
               : NULL;
}

static double cost_at(json_object *run, int col, double t, double tbu)
{
    json_object *props = NULL, *rows = NULL;
    rl_json_get_object(run, "properties", &props);
    double end, fin;
    if (num_of(props, "time", &end) && t >= end && num_of(props, COST_PROGRESS, &fin) &&
        isfinite(fin))
        return fin;
    double v = INFINITY;
    if (rl_json_get_array(run, "progress", &rows) < 0)
        return v;
    for (size_t i = 0; i < json_object_array_length(rows); i++) {
        json_object *row = json_object_array_get_idx(rows, i);
        json_object *jt = row_cell(row, 0);
        json_object *jv = row_cell(row, (size_t)col);
        if (!is_number(jt) || json_object_get_double(jt) > t + tbu / 2)
            break;
        v = is_number(jv) ? json_object_get_double(jv) : INFINITY;
    }
    return v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median and interquartile band of every run's best cost on a grid of sampling times.
 * Runs without a solution count as +inf, so the median line starts once half of the runs
 * have one and the band once three quarters have (its upper edge is finite from then on:
 * costs only fall and a run keeps its last value). */
static int fig_cost(ctx *c, const model *m, bool *drawn)
{
    *drawn = false;
    double tmax = isfinite(m->max_time) ? m->max_time : 0;
    bool any = false;
    for (size_t i = 0; i < m->n; i++) {
        if (m->pl[i].cost_col < 0)
            continue;
        any = true;
        for (size_t r = 0; r < m->pl[i].n_runs; r++) {
            json_object *rows = NULL;
            json_object *run = json_object_array_get_idx(m->pl[i].runs, r);
            size_t nr;
            if (rl_json_get_array(run, "progress", &rows) == RL_OK &&
                (nr = json_object_array_length(rows)) > 0) {
                json_object *t_last = row_cell(json_object_array_get_idx(rows, nr - 1), 0);
                if (is_number(t_last) && isfinite(json_object_get_double(t_last)))
                    tmax = fmax(tmax, json_object_get_double(t_last));
            }
        }
    }
    if (!any || !(tmax > 0))
        return RL_OK;
    double step = m->tbu;
    while (tmax / step > MAX_GRID)
        step *= 2;
    size_t ng = (size_t)ceil(tmax / step - 1e-9);
    if (ng == 0)
        ng = 1;
    rl_figure *f = NULL;
    int rc = new_fig(&f, 1, PX_NARROW, 440);
    double *t = malloc(ng * sizeof *t), *med = malloc(ng * sizeof *med);
    double *lo = malloc(ng * sizeof *lo), *hi = malloc(ng * sizeof *hi), *vals = NULL;
    if (rc == RL_OK && (!t || !med || !lo || !hi))
        rc = rl_error_set(RL_ENOMEM, "out of memory");
    rl_axes *ax = f ? rl_figure_axes(f, 0, 0) : NULL;
    if (rc == RL_OK) {
        rl_axes_set_xlabel(ax, "Time", "s");
        rl_axes_set_ylabel(ax, "Best cost", NULL);
        rl_axes_set_xlim(ax, 0, tmax);
    }
    for (size_t i = 0; i < m->n && rc == RL_OK; i++) {
        const planner_stats *p = &m->pl[i];
        if (p->cost_col < 0 || p->n_runs == 0)
            continue;
        double *nv = realloc(vals, p->n_runs * sizeof *nv);
        if (!nv) {
            rc = rl_error_set(RL_ENOMEM, "out of memory");
            break;
        }
        vals = nv;
        /* The median is drawn wherever it is finite; the band only where the 75th
         * percentile is finite too, as a second series over the same line. */
        size_t nm = 0, nb = 0, first_band = 0;
        for (size_t g = 0; g < ng; g++) {
            double tg = fmin((double)(g + 1) * step, tmax);
            for (size_t r = 0; r < p->n_runs; r++)
                vals[r] = cost_at(json_object_array_get_idx(p->runs, r), p->cost_col, tg, step);
            qsort(vals, p->n_runs, sizeof *vals, cmp_double);
            double q1, q2, q3;
            rl_stats_quantile_sorted(vals, p->n_runs, 0.25, &q1);
            rl_stats_quantile_sorted(vals, p->n_runs, 0.5, &q2);
            rl_stats_quantile_sorted(vals, p->n_runs, 0.75, &q3);
            if (!isfinite(q2))
                continue;
            if (isfinite(q3) && nb++ == 0)
                first_band = nm;
            t[nm] = tg;
            lo[nm] = q1;
            med[nm] = q2;
            hi[nm] = q3;
            nm++;
        }
        if (nm == 0)
            continue;
        rl_series_opts o;
        rl_series_opts_init(&o);
        o.color = (int)(i % RL_PLOT_PALETTE_SIZE);
        /* Solid, dashed, dash-dot: dotted lines read poorly at this size. */
        o.dash = (int[]){0, 1, 3}[i % 3];
        o.line_width = 2;
        if (nb < nm) {
            o.label = nb ? NULL : p->name;
            rc = rl_axes_line(ax, t, med, nb ? first_band + 1 : nm, &o);
        }
        if (rc == RL_OK && nb) {
            o.label = p->name;
            o.band_lo = lo + first_band;
            o.band_hi = hi + first_band;
            rc = rl_axes_line(ax, t + first_band, med + first_band, nb, &o);
        }
        *drawn = true;
    }
    if (rc == RL_OK && *drawn) {
        char cap[256];
        snprintf(cap, sizeof cap,
                 "Best cost over time: median (line) and interquartile range (band) across "
                 "runs, sampled every %g s",
                 step);
        rc = emit(c, f, "best_cost", cap);
    }
    free(vals);
    free(t);
    free(med);
    free(lo);
    free(hi);
    rl_figure_free(f);
    return rc;
}

/* ---- tables and text -------------------------------------------------------------------- */

static int summary(ctx *c, const model *m)
{
    rl_report *r = c->rep;
    char buf[2048], num[64];
    const char *s;
    int rc = rl_report_heading(r, 2, "Summary");
    if (rc == RL_OK)
        rc = rl_report_kv_begin(r, NULL);
    rl_report_kv(r, "Experiment", m->experiment);
    if (rl_json_get_string(m->root, "setup", &s) == RL_OK && *s) {
        one_line(s, buf, sizeof buf);
        /* the setup text may introduce itself ("Problem maze2d: ..."): not twice */
        const char *text = strncmp(buf, "Problem ", 8) == 0 ? buf + 8 : buf;
        rl_report_kv(r, "Problem", text);
    }
    json_object *params;
    if (rl_json_get_object(m->root, "parameters", &params) == RL_OK &&
        json_object_object_length(params) > 0) {
        size_t o = 0;
        buf[0] = 0;
        json_object_object_foreach(params, k, v)
        {
            if (o < sizeof buf)
                o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s = %s", o ? "; " : "", k,
                                      v ? json_object_get_string(v) : "null");
        }
        rl_report_kv(r, "Parameters", buf);
    }
    snprintf(buf, sizeof buf, "%zu", m->n);
    rl_report_kv(r, "Planners", buf);
    double d;
    if (num_of(m->root, "run_count", &d)) {
        snprintf(buf, sizeof buf, d == 0 ? "until the time budget is spent" : "%.0f per planner",
                 d);
        rl_report_kv(r, "Runs", buf);
    }
    if (isfinite(m->max_time)) {
        fmt_num(m->max_time, num, sizeof num);
        snprintf(buf, sizeof buf, "%s s per run", num);
        rl_report_kv(r, "Time limit", buf);
    }
    if (num_of(m->root, "max_mem", &d)) {
        fmt_num(d, num, sizeof num);
        snprintf(buf, sizeof buf, "%s MB per run", num);
        rl_report_kv(r, "Memory limit", buf);
    }
    if (num_of(m->root, "seed", &d)) {
        snprintf(buf, sizeof buf, "%.0f", d);
        rl_report_kv(r, "Seed", buf);
    }
    if (rl_json_get_string(m->root, "start", &s) == RL_OK)
        rl_report_kv(r, "Started", s);
    if (num_of(m->root, "total_duration", &d)) {
        snprintf(buf, sizeof buf, "%.3g s", d);
        rl_report_kv(r, "Duration", buf);
    }
    if (rl_json_get_string(m->root, "host", &s) == RL_OK)
        rl_report_kv(r, "Host", s);
    if (rl_json_get_string(m->root, "cpu_info", &s) == RL_OK && *s) {
        one_line(s, buf, sizeof buf);
        rl_report_kv(r, "CPU", buf);
    }
    if (rl_json_get_string(m->root, "version", &s) == RL_OK)
        rl_report_kv(r, "Version", s);
    if (rc == RL_OK)
        rc = rl_report_kv_end(r);
    if (m->best >= 0)
        snprintf(buf, sizeof buf,
                 "Best planner: %s, the lowest median time (%.4g s) among the planners that "
                 "solved at least one run.",
                 m->pl[m->best].name, m->pl[m->best].ci_time.median);
    else
        snprintf(buf, sizeof buf, "No planner solved a run, so there is no best planner.");
    if (rc == RL_OK)
        rc = rl_report_paragraph(r, buf);
    static const char *const files[] = {"results.csv", "results.json", "results.db",
                                        "manifest.json"};
    for (size_t i = 0; i < 4 && rc == RL_OK; i++)
        rc = rl_report_link(r, files[i], NULL);
    return rc;
}

static int status_table(ctx *c, const model *m)
{
    int present[RL_RUN_STATUS_COUNT], np = 0;
    for (int st = 0; st < RL_RUN_STATUS_COUNT; st++) {
        size_t total = 0;
        for (size_t i = 0; i < m->n; i++)
            total += m->pl[i].by_status[st];
        if (total)
            present[np++] = st;
    }
    const char *hdr[3 + RL_RUN_STATUS_COUNT];
    hdr[0] = "planner";
    hdr[1] = "runs";
    hdr[2] = "solved";
    for (int k = 0; k < np; k++)
        hdr[3 + k] = rl_bench_status_name((rl_bench_status)present[k]);
    size_t ncols = 3 + (size_t)np;
    int rc = rl_report_table_begin(c->rep, "Runs by status (solved = exact solution)", hdr,
                                   ncols, RL_TABLE_SORTABLE);
    char cells[3 + RL_RUN_STATUS_COUNT][48];
    const char *row[3 + RL_RUN_STATUS_COUNT];
    for (size_t i = 0; i < m->n && rc == RL_OK; i++) {
        const planner_stats *p = &m->pl[i];
        row[0] = p->name;
        snprintf(cells[1], sizeof cells[1], "%zu", p->n_runs);
        snprintf(cells[2], sizeof cells[2], "%.0f%%",
                 p->n_runs ? 100.0 * (double)p->solved / (double)p->n_runs : 0.0);
        for (int k = 0; k < np; k++)
            snprintf(cells[3 + k], sizeof cells[3 + k], "%zu", p->by_status[present[k]]);
        for (size_t k = 1; k < ncols; k++)
            row[k] = cells[k];
        rc = rl_report_table_row(c->rep, row);
    }
    if (rc == RL_OK)
        rc = rl_report_table_end(c->rep);
    return rc;
}

/* Why planners failed: the first failed run of every planner that had one, as the terminal
 * summary prints it for planners that solved nothing. */
static int failure_table(ctx *c, const model *m)
{
    size_t failing = 0;
    for (size_t i = 0; i < m->n; i++)
        failing += m->pl[i].failed > 0;
    if (failing == 0)
        return rl_report_paragraph(c->rep, "Every run found a solution.");
    static const char *const HDR[] = {"planner", "failed runs", "solved none", "first failed run",
                                      "status", "first failure reason"};
    int rc = rl_report_table_begin(c->rep, "First failure of each failing planner", HDR, 6, 0);
    for (size_t i = 0; i < m->n && rc == RL_OK; i++) {
        const planner_stats *p = &m->pl[i];
        if (!p->failed)
            continue;
        char failed[48], first[32];
        snprintf(failed, sizeof failed, "%zu of %zu", p->failed, p->n_runs);
        snprintf(first, sizeof first, "%zu", p->first_failed + 1);
        const char *row[6] = {p->name,
                              failed,
                              p->failed == p->n_runs ? "yes" : "no",
                              first,
                              rl_bench_status_name((rl_bench_status)p->first_failed_status),
                              p->first_reason ? p->first_reason
                                              : "(no reason recorded: the planner's own status)"};
        rc = rl_report_table_row(c->rep, row);
    }
    if (rc == RL_OK)
        rc = rl_report_table_end(c->rep);
    return rc;
}

static int ci_table(ctx *c, const model *m)
{
    static const char *const hdr[] = {"planner",
                                      "n",
                                      "median time [s]",
                                      "time 95% CI [s]",
                                      "median memory [MB]",
                                      "memory 95% CI [MB]",
                                      "n solved",
                                      "median length",
                                      "length 95% CI"};
    int rc = rl_report_table_begin(c->rep, "Medians with 95% confidence intervals", hdr, 9, 0);
    char cells[9][96];
    const char *row[9];
    for (size_t i = 0; i < m->n && rc == RL_OK; i++) {
        const planner_stats *p = &m->pl[i];
        row[0] = p->name;
        snprintf(cells[1], sizeof cells[1], "%zu", p->time.n);
        fmt_num(p->time.n ? p->ci_time.median : NAN, cells[2], sizeof cells[2]);
        fmt_ci(&p->ci_time, p->time.n, cells[3], sizeof cells[3]);
        fmt_num(p->mem.n ? p->ci_mem.median : NAN, cells[4], sizeof cells[4]);
        fmt_ci(&p->ci_mem, p->mem.n, cells[5], sizeof cells[5]);
        snprintf(cells[6], sizeof cells[6], "%zu", p->len.n);
        fmt_num(p->len.n ? p->ci_len.median : NAN, cells[7], sizeof cells[7]);
        fmt_ci(&p->ci_len, p->len.n, cells[8], sizeof cells[8]);
        for (size_t k = 1; k < 9; k++)
            row[k] = cells[k];
        rc = rl_report_table_row(c->rep, row);
    }
    if (rc == RL_OK)
        rc = rl_report_table_end(c->rep);
    return rc;
}

static int ranksum_table(ctx *c, const model *m)
{
    if (m->best < 0)
        return rl_report_paragraph(c->rep, "No planner solved a run: no rank-sum test.");
    const planner_stats *b = &m->pl[m->best];
    char cap[256];
    snprintf(cap, sizeof cap, "Time of each planner against %s (Wilcoxon rank-sum test)",
             b->name);
    static const char *const hdr[] = {"planner", "n",  "median time [s]", "U",
                                      "z",       "p (two-sided)", "effect r", "verdict at 5%"};
    int rc = rl_report_table_begin(c->rep, cap, hdr, 8, 0);
    char cells[8][96];
    const char *row[8];
    for (size_t i = 0; i < m->n && rc == RL_OK; i++) {
        const planner_stats *p = &m->pl[i];
        row[0] = p->name;
        snprintf(cells[1], sizeof cells[1], "%zu", p->time.n);
        fmt_num(p->time.n ? p->ci_time.median : NAN, cells[2], sizeof cells[2]);
        if ((int)i == m->best) {
            snprintf(cells[3], sizeof cells[3], "—");
            snprintf(cells[4], sizeof cells[4], "—");
            snprintf(cells[5], sizeof cells[5], "—");
            snprintf(cells[6], sizeof cells[6], "—");
            snprintf(cells[7], sizeof cells[7], "best (reference)");
        } else if (p->time.n == 0) {
            for (int k = 3; k < 7; k++)
                snprintf(cells[k], sizeof cells[k], "—");
            snprintf(cells[7], sizeof cells[7], "no times");
        } else {
            rl_ranksum t;
            if ((rc = rl_stats_ranksum(p->time.v, p->time.n, b->time.v, b->time.n, &t)) < 0)
                break;
            snprintf(cells[3], sizeof cells[3], "%.1f", t.u);
            snprintf(cells[4], sizeof cells[4], "%.2f", t.z);
            if (t.p < 1e-4)
                snprintf(cells[5], sizeof cells[5], "%.1e", t.p);
            else
                snprintf(cells[5], sizeof cells[5], "%.4f", t.p);
            snprintf(cells[6], sizeof cells[6], "%.2f", t.r_biserial);
            snprintf(cells[7], sizeof cells[7], "%s",
                     t.p < 0.05 ? (t.z > 0 ? "slower" : "faster") : "no significant difference");
        }
        for (size_t k = 1; k < 8; k++)
            row[k] = cells[k];
        rc = rl_report_table_row(c->rep, row);
    }
    if (rc == RL_OK)
        rc = rl_report_table_end(c->rep);
    return rc;
}

static int methods(ctx *c)
{
    static const char *const text[] = {
        "Time is the solve time of each run as the harness recorded it (for every run, "
        "whatever its status: a timeout shows the time limit, a crash the time until the "
        "crash); memory is the run's own peak resident memory growth; solution length is "
        "the \u201csolution length\u201d run property of runs with an exact solution "
        "(before simplification, as OMPL reports it). Status rates are shares of all runs.",
        "Confidence intervals of the median are distribution-free: for n sorted samples "
        "the interval is [x(k), x(n+1\u2212k)] with the largest k whose coverage "
        "1 \u2212 2\u00b7P(B \u2264 k\u22121), B ~ Binomial(n, 1/2), is at least 95%. "
        "With fewer than 6 samples no such interval exists (n/a).",
        "The best planner is the one with the lowest median time among the planners that "
        "solved at least one run. Each other planner's times are compared with the best "
        "planner's by the two-sided Wilcoxon rank-sum (Mann\u2013Whitney U) test: U counts "
        "pairs where the planner is slower (ties count one half), the normal approximation "
        "uses the tie-corrected variance and a continuity correction of 0.5 (as "
        "scipy.stats.mannwhitneyu with method=\"asymptotic\"); effect r = 2U/(n\u2081n\u2082) "
        "\u2212 1 (positive: slower than the best). The approximation is rough below about 8 "
        "runs per planner, and p-values are not corrected for multiple comparisons.",
        "Best-cost curves: each run's latest \u201cbest cost\u201d progress sample at every "
        "sampling time (its final value once it has ended); runs without a solution count "
        "as infinite, so the line starts once half of the planner's runs have a solution and "
        "the band once three quarters have. Line: median across runs; band: 25th to 75th "
        "percentile."};
    int rc = rl_report_heading(c->rep, 2, "Methods");
    for (size_t i = 0; i < sizeof text / sizeof text[0] && rc == RL_OK; i++)
        rc = rl_report_paragraph(c->rep, text[i]);
    return rc;
}

int rl_bench_report_write(const char *dir, const rl_bench_report_opts *opts, char *path_out,
                          size_t cap)
{
    if (!dir || !*dir)
        return rl_error_set(RL_EINVAL, "bench report: no directory");
    model m;
    int rc = model_read(dir, &m);
    ctx c = {.dir = dir, .opts = opts};
    char path[PATH_MAX], title[256];
    if (rc == RL_OK)
        rc = rl_path_join(c.results_path, sizeof c.results_path, dir, "results.json");
    if (rc == RL_OK)
        rc = rl_fs_mkdir_in(dir, "figures", path, sizeof path); /* never through a link */
    if (rc == RL_OK) {
        snprintf(title, sizeof title, "Benchmark report: %s", m.experiment);
        rc = rl_report_new(&c.rep, title);
    }
    bool drawn = false;
    if (rc == RL_OK)
        rc = summary(&c, &m);
    if (rc == RL_OK) /* runs: auto: why it stopped, and the decisions that said so */
        rc = rl_bench_report_adaptive(c.rep, dir);
    if (rc == RL_OK)
        rc = rl_report_heading(c.rep, 2, "Solved and status rates");
    if (rc == RL_OK)
        rc = status_table(&c, &m);
    if (rc == RL_OK && m.n > 0)
        rc = fig_status(&c, &m);
    if (rc == RL_OK && m.n > 0)
        rc = failure_table(&c, &m);
    if (rc == RL_OK)
        rc = rl_report_heading(c.rep, 2, "Time, memory and solution length");
    if (rc == RL_OK && m.n > 0)
        rc = fig_boxes(&c, &m);
    if (rc == RL_OK)
        rc = rl_report_heading(c.rep, 2, "Best cost over time");
    if (rc == RL_OK)
        rc = fig_cost(&c, &m, &drawn);
    if (rc == RL_OK && !drawn)
        rc = rl_report_paragraph(c.rep, "No planner reported the progress property "
                                        "\u201cbest cost\u201d with enough solved runs.");
    if (rc == RL_OK)
        rc = rl_report_heading(c.rep, 2, "Medians and confidence intervals");
    if (rc == RL_OK)
        rc = ci_table(&c, &m);
    if (rc == RL_OK)
        rc = rl_report_heading(c.rep, 2, "Rank-sum test of time against the best planner");
    if (rc == RL_OK)
        rc = ranksum_table(&c, &m);
    if (rc == RL_OK)
        rc = methods(&c);
    if (rc == RL_OK)
        rc = rl_path_join(path, sizeof path, dir, "report.html");
    if (rc == RL_OK)
        rc = rl_report_write(c.rep, path);
    if (rc == RL_OK && path_out && cap)
        snprintf(path_out, cap, "%s", path);
    rl_report_free(c.rep);
    model_free(&m);
    return rc;
}
