/* The figure tools over run directories (docs/perflog.md): `runlab plot gain-cost`,
 * `runlab plot normalized-gain` and `runlab plot timing`. Each loads runs with
 * runlab/runs.h, draws with runlab/plot.h, writes PNG + SVG below <data root>/figures/ at
 * the input's path (or --out-dir / --output), a .yaml record beside, and prints "Wrote". */
#include "cli.h"
#include "plot_runs.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"
#include "runlab/number.h"
#include "runlab/plot.h"
#include "runlab/runs.h"
#include "runlab/stats.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { GRID = 200, MAX_GROUPS = 32 };


bool cli_plot_runs_handles(const char *kind)
{
    return kind && (strcmp(kind, "gain-cost") == 0 || strcmp(kind, "normalized-gain") == 0 ||
                    strcmp(kind, "timing") == 0);
}

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: runlab plot gain-cost [--per-run | --by-planner] [options] ROOT...\n"
            "       runlab plot normalized-gain [options] ROOT...\n"
            "       runlab plot timing [options] RUN_OR_ROOT...\n\n"
            "Figures from run directories (see docs/perflog.md):\n"
            "  gain-cost        accumulated gain against total cost: one step curve per run\n"
            "                   (up to 6 runs), or the median and 25-75%% band per planner\n"
            "  normalized-gain  gain divided by the best final gain of the same scene, median\n"
            "                   and band per planner across scenes\n"
            "  timing           per-cycle time of each run, stacked: the known components\n"
            "                   (PlanPathTotal, <layer>.ExpandTime, ...) where a run has\n"
            "                   them, else every timer without a parent, with nested timers\n"
            "                   drawn inside their parent (from run_manifest.yaml)\n\n"
            "The gain is the sum of the layers' <layer>.RealAccumulatedGain columns (or\n"
            "--gain COL). Each run's end is marked at its final gain and total cost (the\n"
            "numbers `runlab runs` shows); the legend says when that lies beyond the last\n"
            "logged row.\n\n"
            "Figures go below <data root>/figures/ (data root: $RUNLAB_DATA_ROOT, else\n"
            "~/runlab_data) at each input's path relative to the data root. Inputs outside\n"
            "the data root are mirrored relative to their common parent P, below\n"
            "P/figures/. A figure from several inputs goes at the top. Each is written as\n"
            "PNG and SVG with a .yaml record beside it; no path is written twice.\n\n"
            "  --per-run         gain-cost: one curve per run, however many runs\n"
            "  --by-planner      gain-cost: median and band per planner, however few runs\n"
            "  --out-dir DIR     root of the figures tree instead of <data root>/figures\n"
            "  -o, --output FILE write exactly this file (.png, .svg or .pdf) and its record\n"
            "  --gain COL        gain column (default: the sum of *.RealAccumulatedGain)\n"
            "  --open            open the figure in the system viewer (needs a display)\n"
            "  -h, --help        show this help\n");
}

static int parse(int argc, char **argv, struct popts *o)
{
    memset(o, 0, sizeof *o);
    o->kind = argv[1];
    o->inputs = calloc((size_t)argc, sizeof *o->inputs);
    if (!o->inputs)
        return cli_fail("plot", "out of memory");
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **dst = strcmp(a, "--out-dir") == 0 || strcmp(a, "--out") == 0 ? &o->out_dir
                           : strcmp(a, "--output") == 0 || strcmp(a, "-o") == 0  ? &o->output
                           : strcmp(a, "--gain") == 0                            ? &o->gain_col
                                                                                 : NULL;
        if (dst) {
            if (!v)
                return cli_usage_error("plot", "option '%s' needs a value", a);
            *dst = v;
            i++;
        } else if (strcmp(a, "--open") == 0) {
            o->open = true;
        } else if (strcmp(a, "--by-planner") == 0) {
            o->by_planner = true;
        } else if (strcmp(a, "--per-run") == 0) {
            o->per_run = true;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("plot", "unknown option '%s'", a);
        } else {
            o->inputs[o->ninputs++] = argv[i];
        }
    }
    if (o->ninputs == 0)
        return cli_usage_error("plot", "%s: no input directory given", o->kind);
    if (o->by_planner && o->per_run)
        return cli_usage_error("plot", "--by-planner and --per-run exclude each other");
    return RL_EXIT_OK;
}

/* ---- data ------------------------------------------------------------------------------ */

static const char gain_suffix[] = ".RealAccumulatedGain";

/* One run as the gain-cost figures draw it: a step curve and its end. */
struct curve {
    bool usable;
    const double *cost;
    const double *gain; /* a column, or `sum` */
    double *sum;        /* owned: the sum of the layers' gain columns */
    size_t n;
    double end_cost, end_gain; /* total cost and final gain (docs/perflog.md) */
    bool end_beyond_last;      /* the end is not the curve's last point */
};

/* The last row with a finite cost and gain, or false. */
static bool last_point(const struct curve *c, double *x, double *y)
{
    for (size_t i = c->n; i-- > 0;)
        if (isfinite(c->cost[i]) && isfinite(c->gain[i])) {
            *x = c->cost[i];
            *y = c->gain[i];
            return true;
        }
    return false;
}

/* The gain curve of a run: --gain COL, else the sum over its layers of
 * <layer>.RealAccumulatedGain (a run without layers: a column named RealAccumulatedGain).
 * Its end is the run's total cost and final gain, the numbers `runlab runs` shows. */
static int curve_of(const rl_run *r, const char *gain_col, struct curve *c)
{
    memset(c, 0, sizeof *c);
    c->cost = rl_run_column(r, "TotalCost");
    c->n = r->num_rows;
    if (r->status == RL_RUN_SKIPPED || !c->cost || c->n == 0)
        return RL_OK;
    double final = r->final_gain;
    if (gain_col) {
        c->gain = rl_run_column(r, gain_col);
        size_t len = strlen(gain_col), slen = sizeof gain_suffix - 1;
        final = NAN;
        if (len > slen && strcmp(gain_col + len - slen, gain_suffix) == 0) {
            char layer[256];
            snprintf(layer, sizeof layer, "%.*s", (int)(len - slen), gain_col);
            final = rl_run_layer_gain(r, layer);
        }
    } else if (r->num_gain_layers == 0) {
        c->gain = rl_run_column(r, "RealAccumulatedGain");
    } else {
        if (!(c->sum = calloc(c->n, sizeof *c->sum)))
            return rl_error_set(RL_ENOMEM, "out of memory");
        size_t found = 0;
        for (size_t k = 0; k < r->num_gain_layers; k++) {
            char name[300];
            snprintf(name, sizeof name, "%s%s", r->gain_layers[k], gain_suffix);
            const double *col = rl_run_column(r, name);
            if (!col)
                continue;
            found++;
            for (size_t i = 0; i < c->n; i++)
                c->sum[i] += col[i];
        }
        c->gain = found ? c->sum : NULL;
    }
    if (!c->gain)
        return RL_OK;
    double lx = NAN, ly = NAN;
    c->usable = last_point(c, &lx, &ly);
    c->end_cost = isfinite(r->total_cost) ? r->total_cost : lx;
    c->end_gain = isfinite(final) ? final : ly;
    c->end_beyond_last = c->end_cost != lx || c->end_gain != ly;
    return RL_OK;
}

/* Gain at cost c: the last row with TotalCost <= c (a step), held after the run ends. */
static double gain_at(const struct curve *cv, double c)
{
    double g = NAN;
    for (size_t i = 0; i < cv->n && cv->cost[i] <= c; i++)
        if (isfinite(cv->gain[i]))
            g = cv->gain[i];
    return g;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile q of the finite values among v[0..n) (compacted and sorted in place), by the
 * stats module's definition; NaN when none. */
static double quantile(double *v, size_t n, double q)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            v[m++] = v[i];
    double out = NAN;
    qsort(v, m, sizeof *v, cmp_double);
    if (m == 0 || rl_stats_quantile_sorted(v, m, q, &out) != RL_OK)
        return NAN;
    return out;
}

struct group {
    const char *planner;
    size_t *runs;
    size_t n;
};

/* Groups usable runs by the manifest's planner. */
static int group_runs(const rl_run_set *set, const struct curve *cv, struct group *g, int *ng,
                      const char **planner_of)
{
    *ng = 0;
    for (size_t i = 0; i < set->count; i++) {
        planner_of[i] = NULL;
        if (!cv[i].usable)
            continue;
        const char *p = plot_runs_manifest_str(set->runs[i], "planner", "unknown");
        planner_of[i] = p;
        int k = 0;
        while (k < *ng && strcmp(g[k].planner, p) != 0)
            k++;
        if (k == *ng) {
            if (*ng == MAX_GROUPS)
                continue;
            g[k].planner = p;
            g[k].n = 0;
            g[k].runs = calloc(set->count, sizeof *g[k].runs);
            if (!g[k].runs)
                return rl_error_set(RL_ENOMEM, "out of memory");
            (*ng)++;
        }
        g[k].runs[g[k].n++] = i;
    }
    return RL_OK;
}

/* A marker where each run of a group ended: its total cost and final gain. A run that
 * ended keeps its final gain at larger costs in the median, so without the markers a
 * planner whose runs stopped early would look like it went on without gaining. When an
 * end lies beyond the run's last logged row, the legend says so. */
static int draw_run_ends(rl_axes *ax, const struct curve *cv, const struct group *g, int color,
                         const double *scale)
{
    double *ex = calloc(g->n ? g->n : 1, sizeof *ex), *ey = calloc(g->n ? g->n : 1, sizeof *ey);
    if (!ex || !ey) {
        free(ex);
        free(ey);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    size_t n = 0;
    bool beyond = false;
    for (size_t r = 0; r < g->n; r++) {
        const struct curve *c = &cv[g->runs[r]];
        ex[n] = c->end_cost;
        ey[n] = c->end_gain / (scale ? scale[g->runs[r]] : 1.0);
        beyond = beyond || c->end_beyond_last;
        n++;
    }
    char label[200];
    snprintf(label, sizeof label,
             beyond ? "%s: end of run (final gain at total cost, past the last row)"
                    : "%s: end of run",
             g->planner);
    rl_series_opts so;
    rl_series_opts_init(&so);
    so.label = label;
    so.color = color;
    so.marker = RL_MARKER_CIRCLE + color % 7;
    so.marker_size = 6;
    so.alpha = 0.9;
    int rc = n ? rl_axes_scatter(ax, ex, ey, n, &so) : RL_OK;
    free(ex);
    free(ey);
    return rc;
}

/* Median and 25-75% band per planner of (optionally normalised) gain over a cost grid,
 * with the end of every run marked. */
static int draw_bands(rl_axes *ax, const rl_run_set *set, const struct curve *cv,
                      const struct group *g, int ng, const double *scale)
{
    /* The grid starts at the earliest first row: before it no run has a gain yet. */
    double maxc = 0, minc = INFINITY;
    for (size_t i = 0; i < set->count; i++)
        if (cv[i].usable)
            for (size_t k = 0; k < cv[i].n; k++)
                if (isfinite(cv[i].cost[k])) {
                    maxc = cv[i].cost[k] > maxc ? cv[i].cost[k] : maxc;
                    minc = cv[i].cost[k] < minc ? cv[i].cost[k] : minc;
                }
    if (!isfinite(minc) || minc > maxc)
        minc = 0;
    double x[GRID], med[GRID], lo[GRID], hi[GRID];
    for (int k = 0; k < ng; k++) {
        double *v = calloc(g[k].n, sizeof *v);
        if (!v)
            return rl_error_set(RL_ENOMEM, "out of memory");
        for (int p = 0; p < GRID; p++) {
            x[p] = minc + (maxc - minc) * p / (GRID - 1);
            for (size_t r = 0; r < g[k].n; r++)
                v[r] = gain_at(&cv[g[k].runs[r]], x[p]) / (scale ? scale[g[k].runs[r]] : 1.0);
            med[p] = quantile(v, g[k].n, 0.5);
            lo[p] = quantile(v, g[k].n, 0.25);
            hi[p] = quantile(v, g[k].n, 0.75);
        }
        free(v);
        char label[160];
        snprintf(label, sizeof label, "%s (median, 25-75%%, n=%zu)", g[k].planner, g[k].n);
        rl_series_opts so;
        rl_series_opts_init(&so);
        so.label = label;
        so.color = k;
        so.dash = 0;
        so.band_lo = lo;
        so.band_hi = hi;
        int rc = rl_axes_line(ax, x, med, GRID, &so);
        if (rc == RL_OK)
            rc = draw_run_ends(ax, cv, &g[k], k, scale);
        if (rc != RL_OK)
            return rc;
    }
    return RL_OK;
}

/* The manifest unit of column `want` in the first run that declares it. */
static const char *column_unit(const rl_run_set *set, const char *want)
{
    for (size_t i = 0; i < set->count; i++) {
        json_object *cols;
        const rl_run *r = set->runs[i];
        if (!r->manifest || rl_json_get_array(r->manifest, "columns", &cols) != RL_OK)
            continue;
        for (size_t k = 0; k < json_object_array_length(cols); k++) {
            json_object *c = json_object_array_get_idx(cols, k);
            const char *name, *unit;
            if (rl_json_get_string(c, "name", &name) == RL_OK && strcmp(name, want) == 0 &&
                rl_json_get_string(c, "unit", &unit) == RL_OK)
                return strcmp(unit, "none") == 0 ? NULL : unit; /* perflog's "no unit" */
        }
    }
    return NULL;
}

/* The y label of the default gain: the gain columns summed (union over the drawn runs,
 * in order of appearance), or the one column's name; `unit_col` gets the first column,
 * whose manifest unit labels the axis. */
static void gain_label(const rl_run_set *set, const struct curve *cv, char *out, size_t cap,
                       char *unit_col, size_t ucap, char *cols, size_t ccap, size_t *ncols)
{
    enum { MAX_NAMED = 16 };
    const char *named[MAX_NAMED];
    size_t nnamed = 0, len = (size_t)snprintf(out, cap, "Gain, sum of layers "), clen = 0;
    bool more = false;
    unit_col[0] = '\0';
    cols[0] = '\0';
    for (size_t i = 0; i < set->count; i++) {
        const rl_run *r = set->runs[i];
        for (size_t k = 0; cv[i].usable && k < r->num_gain_layers; k++) {
            char col[300];
            snprintf(col, sizeof col, "%s%s", r->gain_layers[k], gain_suffix);
            if (!rl_run_column(r, col)) /* a layer of the summary only: not in the curve */
                continue;
            size_t seen = 0;
            while (seen < nnamed && strcmp(named[seen], r->gain_layers[k]) != 0)
                seen++;
            if (seen < nnamed)
                continue;
            if (nnamed == MAX_NAMED) {
                more = true;
                continue;
            }
            named[nnamed++] = r->gain_layers[k];
            if (nnamed == 1)
                snprintf(unit_col, ucap, "%s", col);
            if (clen < ccap)
                clen += (size_t)snprintf(cols + clen, ccap - clen, "%s%s", nnamed > 1 ? " + " : "",
                                         col);
            if (len < cap)
                len += (size_t)snprintf(out + len, cap - len, "%s%s", nnamed > 1 ? " + " : "",
                                        r->gain_layers[k]);
        }
    }
    if (more && len < cap)
        snprintf(out + len, cap - len, " + ...");
    if (more && clen < ccap)
        snprintf(cols + clen, ccap - clen, " + ...");
    *ncols = nnamed + more;
    if (nnamed == 0) {
        snprintf(unit_col, ucap, "RealAccumulatedGain");
        snprintf(cols, ccap, "RealAccumulatedGain");
        *ncols = 1;
    }
    if (nnamed <= 1) /* one column (or the agent-level one): its name is the label */
        snprintf(out, cap, "%s", unit_col);
}

/* The figure record's description: what the end markers are, and each run's end. */
static char *ends_description(const rl_run_set *set, const struct curve *cv, const char *gain_note)
{
    size_t cap = 256 + strlen(gain_note);
    for (size_t i = 0; i < set->count; i++)
        cap += strlen(set->runs[i]->path) + 96;
    char *d = malloc(cap);
    if (!d)
        return NULL;
    size_t len = (size_t)snprintf(d, cap,
                                  "%s\nEnd-of-run markers: each run's final gain at its total "
                                  "cost (docs/perflog.md, the numbers `runlab runs` shows).\n",
                                  gain_note);
    for (size_t i = 0; i < set->count && len < cap; i++) {
        if (!cv[i].usable)
            continue;
        char c[32], g[32];
        rl_format_f64(cv[i].end_cost, c, sizeof c);
        rl_format_f64(cv[i].end_gain, g, sizeof g);
        len += (size_t)snprintf(d + len, cap - len, "%s: total_cost %s, final_gain %s%s\n",
                                set->runs[i]->path, c, g,
                                cv[i].end_beyond_last ? " (past the last row)" : "");
    }
    return d;
}

/* Why run `r` has no curve (its curve `c` is not usable), exactly; "" when it has one. */
static void why_no_curve(const rl_run *r, const struct curve *c, const char *gain_col, char *out,
                         size_t cap)
{
    out[0] = '\0';
    if (c->usable || r->status == RL_RUN_SKIPPED)
        return;
    if (!c->cost) {
        snprintf(out, cap,
                 "no TotalCost column (runs logged before runlab wrote the totals of "
                 "rl_perflog_set_totals have it only when the planner declared it)");
        return;
    }
    bool any_cost = false;
    for (size_t i = 0; i < c->n; i++)
        any_cost = any_cost || isfinite(c->cost[i]);
    if (!any_cost) {
        snprintf(out, cap,
                 "TotalCost has no value in any row (the planner never passed its totals "
                 "to rl_perflog_set_totals before rl_perflog_cycle_end)");
        return;
    }
    if (gain_col && !c->gain) {
        int len = snprintf(out, cap, "no column '%s' (--gain)", gain_col);
        const char *sep = "; its gain columns: ";
        size_t slen = sizeof gain_suffix - 2; /* "RealAccumulatedGain" */
        for (size_t j = 0; j < r->num_columns && len > 0 && (size_t)len < cap; j++) {
            const char *n = r->column_names[j];
            size_t nl = strlen(n);
            if (nl >= slen && strcmp(n + nl - slen, gain_suffix + 1) == 0) {
                len += snprintf(out + len, cap - (size_t)len, "%s%s", sep, n);
                sep = ", ";
            }
        }
        return;
    }
    if (!c->gain && r->num_gain_layers > 0) {
        snprintf(out, cap,
                 "no <layer>.RealAccumulatedGain column: the summary has a gain for layer '%s' "
                 "but the CSV has no column '%s%s' (declare it and set it every cycle)",
                 r->gain_layers[0], r->gain_layers[0], gain_suffix);
        return;
    }
    if (!c->gain) {
        snprintf(out, cap,
                 "no gain column: no <layer>.RealAccumulatedGain (or RealAccumulatedGain) "
                 "column and no layer gain in the summary");
        return;
    }
    snprintf(out, cap, "no row with both TotalCost and %s%s", gain_col ? gain_col : "the gain",
             gain_col ? "" : " (the sum of the layers' RealAccumulatedGain columns)");
}

/* Names each run below the inputs that gets no curve and why (at most 10 lines). */
static void report_not_drawn(const char *kind, const rl_run_set *set, const struct curve *cv,
                             const char *gain_col)
{
    size_t shown = 0, more = 0;
    for (size_t i = 0; i < set->count; i++) {
        const rl_run *r = set->runs[i];
        char why[400];
        why_no_curve(r, &cv[i], gain_col, why, sizeof why);
        if (cv[i].usable || (r->status != RL_RUN_SKIPPED && !why[0]))
            continue;
        if (shown == 10) {
            more++;
            continue;
        }
        shown++;
        if (r->status == RL_RUN_SKIPPED) {
            plot_runs_report_skipped(kind, r);
            continue;
        }
        fprintf(stderr, "runlab: plot: %s: ", kind);
        cli_print_escaped(stderr, r->path);
        fprintf(stderr, ": not drawn: %s\n", why);
    }
    if (more)
        fprintf(stderr, "runlab: plot: %s: %zu more run(s) not drawn\n", kind, more);
}

/* ---- the three figures ---------------------------------------------------------------- */

static int plot_gain_cost(struct popts *o, int argc, char **argv, bool normalized)
{
    rl_run_set *set;
    int rc = plot_runs_load(o, &set);
    if (rc != RL_EXIT_OK)
        return rc;
    struct group g[MAX_GROUPS];
    int ng = 0;
    size_t cnt = set->count ? set->count : 1;
    const char **planner_of = calloc(cnt, sizeof *planner_of);
    double *scale = calloc(cnt, sizeof *scale);
    struct curve *cv = calloc(cnt, sizeof *cv);
    rl_figure *fig = NULL;
    char *description = NULL;
    bool oom = !planner_of || !scale || !cv;
    for (size_t i = 0; !oom && i < set->count; i++)
        oom = curve_of(set->runs[i], o->gain_col, &cv[i]) != RL_OK;
    if (oom || group_runs(set, cv, g, &ng, planner_of) != RL_OK) {
        rc = cli_fail("plot", "out of memory");
        goto done;
    }
    size_t usable = 0;
    for (int k = 0; k < ng; k++)
        usable += g[k].n;
    report_not_drawn(o->kind, set, cv, o->gain_col);
    if (usable == 0) {
        rc = set->count == 0 ? cli_fail("plot", "%s: no run directory below the input(s)", o->kind)
                             : cli_fail("plot",
                                        "%s: no run with TotalCost and a gain column below the "
                                        "input(s) (each run is named above with what it lacks)",
                                        o->kind);
        goto done;
    }
    if (normalized) {
        /* The best final gain per scene over every planner is 1. */
        for (size_t i = 0; i < set->count; i++) {
            if (!planner_of[i])
                continue;
            const char *scene = plot_runs_manifest_str(set->runs[i], "scene", "?");
            double best = 0;
            for (size_t j = 0; j < set->count; j++)
                if (planner_of[j] &&
                    strcmp(plot_runs_manifest_str(set->runs[j], "scene", "?"), scene) == 0 &&
                    isfinite(cv[j].end_gain) && cv[j].end_gain > best)
                    best = cv[j].end_gain;
            scale[i] = best > 0 ? best : NAN;
        }
    }
    if (rl_figure_new(&fig, 1, 1) != RL_OK || rl_figure_set_size_px(fig, 900, 600, 100) != RL_OK) {
        rc = cli_fail("plot", "%s", rl_error_last());
        goto done;
    }
    rl_axes *ax = rl_figure_axes(fig, 0, 0);
    rl_axes_set_title(ax, normalized ? "Gain normalized per scene against cost"
                                     : "Accumulated gain against cost");
    rl_axes_set_xlabel(ax, "Total cost", column_unit(set, "TotalCost"));
    char ylabel[400], unit_col[300], cols[600], gain_note[700];
    size_t ncols = 1;
    if (o->gain_col) {
        snprintf(ylabel, sizeof ylabel, "%s", o->gain_col);
        snprintf(unit_col, sizeof unit_col, "%s", o->gain_col);
        snprintf(cols, sizeof cols, "%s", o->gain_col);
    } else {
        gain_label(set, cv, ylabel, sizeof ylabel, unit_col, sizeof unit_col, cols, sizeof cols,
                   &ncols);
    }
    /* Which gain the curves are, said on stdout and in the record. */
    if (ncols > 1)
        snprintf(gain_note, sizeof gain_note,
                 "Gain drawn: the sum of %s, row by row (--gain COLUMN draws one)", cols);
    else
        snprintf(gain_note, sizeof gain_note, "Gain drawn: %s%s", cols,
                 o->gain_col ? " (--gain)" : "");
    rl_axes_set_ylabel(ax, normalized ? "Gain / best final gain of the scene" : ylabel,
                       normalized ? NULL : column_unit(set, unit_col));
    bool bands = normalized || o->by_planner || (!o->per_run && usable > 6);
    int drc = RL_OK;
    if (bands) {
        drc = draw_bands(ax, set, cv, g, ng, normalized ? scale : NULL);
    } else {
        for (int k = 0; k < ng && drc == RL_OK; k++) {
            for (size_t r = 0; r < g[k].n && drc == RL_OK; r++) {
                const rl_run *run = set->runs[g[k].runs[r]];
                const char *base = strrchr(run->path, '/');
                char label[200];
                snprintf(label, sizeof label, "%s %s", g[k].planner, base ? base + 1 : run->path);
                rl_series_opts so;
                rl_series_opts_init(&so);
                so.label = label;
                so.color = k;
                drc = rl_axes_step(ax, cv[g[k].runs[r]].cost, cv[g[k].runs[r]].gain, run->num_rows,
                                   &so);
            }
            if (drc == RL_OK)
                drc = draw_run_ends(ax, cv, &g[k], k, NULL);
        }
    }
    if (drc != RL_OK) {
        rc = cli_fail("plot", "%s", rl_error_last());
        goto done;
    }
    char dir[PATH_MAX];
    if (plot_runs_figure_dir(o, normalized || o->ninputs != 1 ? NULL : o->inputs[0], dir,
                             sizeof dir) != RL_OK) {
        rc = cli_fail("plot", "%s", rl_error_last());
        goto done;
    }
    description = ends_description(set, cv, gain_note);
    printf("%s\n", gain_note);
    rc = plot_runs_save(fig, o, dir, normalized ? "normalized_gain" : "gain_cost", o->inputs,
                        o->ninputs, description, argc, argv);
done:
    for (int k = 0; k < ng; k++)
        free(g[k].runs);
    for (size_t i = 0; cv && i < set->count; i++)
        free(cv[i].sum);
    free(cv);
    free(description);
    free(planner_of);
    free(scale);
    rl_figure_free(fig);
    rl_run_set_free(set);
    return rc;
}

int cmd_plot_runs(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return RL_EXIT_OK;
    }
    struct popts o;
    int rc = parse(argc, argv, &o);
    if (rc == RL_EXIT_OK) {
        if (strcmp(o.kind, "timing") == 0)
            rc = plot_timing(&o, argc, argv);
        else
            rc = plot_gain_cost(&o, argc, argv, strcmp(o.kind, "normalized-gain") == 0);
    }
    free(o.inputs);
    for (size_t i = 0; i < o.nwritten; i++)
        free(o.written[i]);
    free(o.written);
    rl_plot_release_caches();
    return rc;
}
