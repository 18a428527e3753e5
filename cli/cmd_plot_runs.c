/* The figure tools over run directories (docs/perflog.md): `runlab plot gain-cost`,
 * `runlab plot normalized-gain` and `runlab plot timing`. Each loads runs with
 * runlab/runs.h, draws with runlab/plot.h, writes PNG + SVG below <data root>/figures/ at
 * the input's path (or --out-dir / --output), a .yaml record beside, and prints "Wrote". */
#include "cli.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"
#include "runlab/plot.h"
#include "runlab/runs.h"
#include "runlab/stats.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { GRID = 200, MAX_GROUPS = 32 };

struct popts {
    const char *kind; /* gain-cost, normalized-gain, timing */
    const char *out_dir;
    const char *output;
    const char *gain_col;
    bool open;
    bool by_planner;
    bool per_run;
    char **inputs;
    int ninputs;
};

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
            "  gain-cost        accumulated gain against cost: one curve per run, or (default\n"
            "                   with more than 6 runs, or --by-planner) the median and the\n"
            "                   25-75%% band per planner\n"
            "  normalized-gain  gain divided by the best final gain of the same scene, median\n"
            "                   and band per planner across scenes\n"
            "  timing           per-cycle time without overlap, stacked by component, one\n"
            "                   figure per run\n\n"
            "Figures go below <data root>/figures/ (data root: $RUNLAB_DATA_ROOT, else\n"
            "~/runlab_data) at the input's path; a figure from several inputs goes at the top.\n"
            "Each is written as PNG and SVG with a .yaml record beside it.\n\n"
            "  --out-dir DIR   root of the figures tree instead of <data root>/figures\n"
            "  --output FILE   write exactly this file (.png, .svg or .pdf) and its record\n"
            "  --gain COL      gain column (default: the first *RealAccumulatedGain)\n"
            "  --open          open the figure in the system viewer (needs a display)\n"
            "  -h, --help      show this help\n");
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
        if (strcmp(a, "--out-dir") == 0 || strcmp(a, "--output") == 0 || strcmp(a, "--gain") == 0) {
            if (!v)
                return cli_usage_error("plot", "option '%s' needs a value", a);
            if (a[2] == 'o' && a[5] == '-')
                o->out_dir = v;
            else if (a[2] == 'o')
                o->output = v;
            else
                o->gain_col = v;
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

/* ---- where figures go ------------------------------------------------------------- */

static void data_root(char *out, size_t cap)
{
    const char *r = getenv("RUNLAB_DATA_ROOT");
    if (r && *r)
        snprintf(out, cap, "%s", r);
    else
        snprintf(out, cap, "%s/runlab_data", getenv("HOME") ? getenv("HOME") : ".");
}

/* The figure directory for an input: <figures root>/<input relative to the data root>,
 * or the figures root itself when there is no single input or it lies outside the root. */
static int figure_dir(const struct popts *o, const char *input, char *out, size_t cap)
{
    char root[PATH_MAX], figs[PATH_MAX];
    data_root(root, sizeof root);
    if (o->out_dir)
        snprintf(figs, sizeof figs, "%s", o->out_dir);
    else if (snprintf(figs, sizeof figs, "%s/figures", root) >= (int)sizeof figs)
        return rl_error_set(RL_ERANGE, "figures directory name too long");
    char rroot[PATH_MAX], rin[PATH_MAX];
    const char *rel = NULL;
    if (input && realpath(root, rroot) && realpath(input, rin)) {
        size_t n = strlen(rroot);
        if (strncmp(rin, rroot, n) == 0 && rin[n] == '/')
            rel = rin + n + 1;
    }
    int w = rel ? snprintf(out, cap, "%s/%s", figs, rel) : snprintf(out, cap, "%s", figs);
    if (w < 0 || (size_t)w >= cap)
        return rl_error_set(RL_ERANGE, "figure path too long");
    return rl_fs_mkdirs(out);
}

static void open_viewer(const char *path)
{
    if (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY")) {
        fprintf(stderr, "runlab: plot: --open: no display; open %s yourself\n", path);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        execlp("xdg-open", "xdg-open", path, (char *)NULL);
        _exit(127);
    }
    if (pid > 0) {
        int st;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            fprintf(stderr, "runlab: plot: --open: xdg-open failed for %s\n", path);
    }
}

/* Saves PNG and SVG as <dir>/<stem>.* (or exactly --output), each with its record. */
static int save(rl_figure *fig, const struct popts *o, const char *dir, const char *stem,
                char **inputs, int ninputs, int argc, char **argv)
{
    char png[PATH_MAX], svg[PATH_MAX];
    const char *paths[2] = {png, svg};
    int n = 2;
    if (o->output) {
        snprintf(png, sizeof png, "%s", o->output);
        n = 1;
        char parent[PATH_MAX];
        snprintf(parent, sizeof parent, "%s", o->output);
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent) {
            *slash = '\0';
            if (rl_fs_mkdirs(parent) != RL_OK)
                return cli_fail("plot", "%s", rl_error_last());
        }
    } else if (snprintf(png, sizeof png, "%s/%s.png", dir, stem) >= (int)sizeof png ||
               snprintf(svg, sizeof svg, "%s/%s.svg", dir, stem) >= (int)sizeof svg) {
        return cli_fail("plot", "figure path too long");
    }
    for (int i = 0; i < n; i++)
        if (rl_figure_save(fig, paths[i], RL_PLOT_AUTO) != RL_OK)
            return cli_fail("plot", "%s", rl_error_last());
    rl_figure_record rec = {argc + 1, argv - 1, (const char *const *)inputs, (size_t)ninputs, NULL};
    if (rl_figure_record_write(paths[0], &rec) != RL_OK)
        return cli_fail("plot", "%s", rl_error_last());
    for (int i = 0; i < n; i++)
        printf("Wrote %s\n", paths[i]);
    if (o->open)
        open_viewer(paths[0]);
    return RL_EXIT_OK;
}

/* ---- data ------------------------------------------------------------------------------ */

static const double *gain_column(const rl_run *r, const char *name)
{
    if (name)
        return rl_run_column(r, name);
    for (size_t j = 0; j < r->num_columns; j++) {
        size_t len = strlen(r->column_names[j]);
        if (len >= 19 && strcmp(r->column_names[j] + len - 19, "RealAccumulatedGain") == 0)
            return r->columns[j];
    }
    return NULL;
}

static const char *manifest_str(const rl_run *r, const char *key, const char *dflt)
{
    const char *s;
    return r->manifest && rl_json_get_string(r->manifest, key, &s) == RL_OK ? s : dflt;
}

/* Usable for a gain-cost curve: not skipped, with TotalCost and a gain column. */
static bool curve_of(const rl_run *r, const char *gain_name, const double **cost,
                     const double **gain)
{
    if (r->status == RL_RUN_SKIPPED)
        return false;
    *cost = rl_run_column(r, "TotalCost");
    *gain = gain_column(r, gain_name);
    return *cost && *gain && r->num_rows > 0;
}

/* Gain at cost c: the last row with TotalCost <= c (a step), held after the run ends. */
static double gain_at(const double *cost, const double *gain, size_t n, double c)
{
    double g = NAN;
    for (size_t i = 0; i < n && cost[i] <= c; i++)
        if (isfinite(gain[i]))
            g = gain[i];
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

/* Groups usable runs by the manifest's planner (else the parent directory's name). */
static int group_runs(const rl_run_set *set, const char *gain_name, struct group *g, int *ng,
                      const char **planner_of)
{
    *ng = 0;
    for (size_t i = 0; i < set->count; i++) {
        const double *c = NULL, *y = NULL;
        planner_of[i] = NULL;
        if (!curve_of(set->runs[i], gain_name, &c, &y))
            continue;
        const char *p = manifest_str(set->runs[i], "planner", "unknown");
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

/* A marker where each run of a group ended (its last cost and gain). A run that
 * ended keeps its final gain at larger costs in the median, so without the markers a
 * planner whose runs stopped early would look like it went on without gaining. */
static int draw_run_ends(rl_axes *ax, const rl_run_set *set, const struct group *g, int color,
                         const char *gain_name, const double *scale)
{
    double *ex = calloc(g->n ? g->n : 1, sizeof *ex), *ey = calloc(g->n ? g->n : 1, sizeof *ey);
    if (!ex || !ey) {
        free(ex);
        free(ey);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    size_t n = 0;
    for (size_t r = 0; r < g->n; r++) {
        const rl_run *run = set->runs[g->runs[r]];
        const double *c = NULL, *y = NULL;
        if (!curve_of(run, gain_name, &c, &y))
            continue;
        /* The last row with both values: a torn last row must not hide the end. */
        for (size_t i = run->num_rows; i-- > 0;) {
            if (isfinite(c[i]) && isfinite(y[i])) {
                ex[n] = c[i];
                ey[n] = y[i] / (scale ? scale[g->runs[r]] : 1.0);
                n++;
                break;
            }
        }
    }
    char label[160];
    snprintf(label, sizeof label, "%s: end of a run", g->planner);
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
static int draw_bands(rl_axes *ax, const rl_run_set *set, const struct group *g, int ng,
                      const char *gain_name, const double *scale)
{
    /* The grid starts at the earliest first row: before it no run has a gain yet. */
    double maxc = 0, minc = INFINITY;
    for (size_t i = 0; i < set->count; i++) {
        const double *c = NULL, *y = NULL;
        if (curve_of(set->runs[i], gain_name, &c, &y))
            for (size_t k = 0; k < set->runs[i]->num_rows; k++)
                if (isfinite(c[k])) {
                    maxc = c[k] > maxc ? c[k] : maxc;
                    minc = c[k] < minc ? c[k] : minc;
                }
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
            for (size_t r = 0; r < g[k].n; r++) {
                const rl_run *run = set->runs[g[k].runs[r]];
                const double *c = NULL, *y = NULL;
                curve_of(run, gain_name, &c, &y);
                v[r] = gain_at(c, y, run->num_rows, x[p]) / (scale ? scale[g[k].runs[r]] : 1.0);
            }
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
            rc = draw_run_ends(ax, set, &g[k], k, gain_name, scale);
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
                return unit;
        }
    }
    return NULL;
}

static int load(const struct popts *o, rl_run_set **set)
{
    int rc = cli_load_runs("plot", o->inputs, (size_t)o->ninputs, set);
    if (rc != RL_EXIT_OK)
        return rc;
    for (size_t i = 0; i < (*set)->num_walk_errors; i++)
        fprintf(stderr, "runlab: plot: %s\n", (*set)->walk_errors[i]);
    return RL_EXIT_OK;
}

/* ---- the three figures ---------------------------------------------------------------- */

static int plot_gain_cost(const struct popts *o, int argc, char **argv, bool normalized)
{
    rl_run_set *set;
    int rc = load(o, &set);
    if (rc != RL_EXIT_OK)
        return rc;
    struct group g[MAX_GROUPS];
    int ng = 0;
    const char **planner_of = calloc(set->count ? set->count : 1, sizeof *planner_of);
    double *scale = calloc(set->count ? set->count : 1, sizeof *scale);
    rl_figure *fig = NULL;
    if (!planner_of || !scale || group_runs(set, o->gain_col, g, &ng, planner_of) != RL_OK) {
        rc = cli_fail("plot", "out of memory");
        goto done;
    }
    size_t usable = 0;
    for (int k = 0; k < ng; k++)
        usable += g[k].n;
    if (usable == 0) {
        rc = cli_fail("plot", "no run with TotalCost and a gain column below the input(s)");
        goto done;
    }
    if (normalized) {
        /* The best final gain per scene over every planner is 1. */
        for (size_t i = 0; i < set->count; i++) {
            if (!planner_of[i])
                continue;
            const char *scene = manifest_str(set->runs[i], "scene", "?");
            double best = 0;
            for (size_t j = 0; j < set->count; j++) {
                const double *c = NULL, *y = NULL;
                if (planner_of[j] && strcmp(manifest_str(set->runs[j], "scene", "?"), scene) == 0 &&
                    curve_of(set->runs[j], o->gain_col, &c, &y)) {
                    double last = y[set->runs[j]->num_rows - 1];
                    if (isfinite(last) && last > best)
                        best = last;
                }
            }
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
    const char *gname = o->gain_col ? o->gain_col : "planning.RealAccumulatedGain";
    rl_axes_set_ylabel(ax, normalized ? "Gain / best final gain of the scene" : gname,
                       normalized ? NULL : column_unit(set, gname));
    bool bands = normalized || o->by_planner || (!o->per_run && usable > 6);
    int drc = RL_OK;
    if (bands) {
        drc = draw_bands(ax, set, g, ng, o->gain_col, normalized ? scale : NULL);
    } else {
        for (int k = 0; k < ng && drc == RL_OK; k++)
            for (size_t r = 0; r < g[k].n && drc == RL_OK; r++) {
                const rl_run *run = set->runs[g[k].runs[r]];
                const double *c = NULL, *y = NULL;
                curve_of(run, o->gain_col, &c, &y);
                const char *base = strrchr(run->path, '/');
                char label[200];
                snprintf(label, sizeof label, "%s %s", g[k].planner, base ? base + 1 : run->path);
                rl_series_opts so;
                rl_series_opts_init(&so);
                so.label = label;
                so.color = k;
                drc = rl_axes_step(ax, c, y, run->num_rows, &so);
            }
    }
    if (drc != RL_OK) {
        rc = cli_fail("plot", "%s", rl_error_last());
        goto done;
    }
    char dir[PATH_MAX];
    if (figure_dir(o, normalized || o->ninputs != 1 ? NULL : o->inputs[0], dir, sizeof dir) !=
        RL_OK) {
        rc = cli_fail("plot", "%s", rl_error_last());
        goto done;
    }
    rc = save(fig, o, dir, normalized ? "normalized_gain" : "gain_cost", o->inputs, o->ninputs,
              argc, argv);
done:
    for (int k = 0; k < ng; k++)
        free(g[k].runs);
    free(planner_of);
    free(scale);
    rl_figure_free(fig);
    rl_run_set_free(set);
    return rc;
}

/* The non-overlapping components of a cycle's time: PlanPathTotal, Visualization,
 * RosCallbacks, then every layer's ExpandTime, UpdateTime and StartNodeUpdate (their
 * sub-timers and each layer's PlanPathTime are inside these, so they are not added). */
static bool timing_component(const char *name)
{
    if (strcmp(name, "PlanPathTotal") == 0 || strcmp(name, "Visualization") == 0 ||
        strcmp(name, "RosCallbacks") == 0)
        return true;
    const char *dot = strchr(name, '.');
    return dot && strchr(dot + 1, '.') == NULL &&
           (strcmp(dot + 1, "ExpandTime") == 0 || strcmp(dot + 1, "UpdateTime") == 0 ||
            strcmp(dot + 1, "StartNodeUpdate") == 0);
}

static int plot_timing_run(const struct popts *o, const rl_run *run, int argc, char **argv)
{
    const double *idx = rl_run_column(run, "CycleIndex");
    size_t n = run->num_rows, comp[64];
    int ncomp = 0;
    for (size_t j = 0; j < run->num_columns && ncomp < 64; j++)
        if (timing_component(run->column_names[j]))
            comp[ncomp++] = j;
    if (!idx || ncomp == 0) {
        fprintf(stderr, "runlab: plot: timing: %s has no CycleIndex or timer columns, skipped\n",
                run->path);
        return RL_EXIT_OK;
    }
    double *lo = calloc(n, sizeof *lo), *hi = calloc(n, sizeof *hi);
    rl_figure *fig = NULL;
    int rc = RL_EXIT_OK;
    if (!lo || !hi || rl_figure_new(&fig, 1, 1) != RL_OK ||
        rl_figure_set_size_px(fig, 900, 600, 100) != RL_OK) {
        rc = cli_fail("plot", "out of memory");
        goto done;
    }
    rl_axes *ax = rl_figure_axes(fig, 0, 0);
    char title[PATH_MAX];
    snprintf(title, sizeof title, "Per-cycle time without overlap: %s / %s",
             manifest_str(run, "scene", "?"), manifest_str(run, "planner", "?"));
    rl_axes_set_title(ax, title);
    rl_axes_set_xlabel(ax, "Cycle", NULL);
    /* Milliseconds, or microseconds when no cycle reaches one millisecond. */
    double peak = 0;
    for (size_t i = 0; i < n; i++) {
        double t = 0;
        for (int k = 0; k < ncomp; k++)
            t += isfinite(run->columns[comp[k]][i]) ? run->columns[comp[k]][i] : 0;
        peak = t > peak ? t : peak;
    }
    double unit = peak >= 1e-3 ? 1e3 : 1e6;
    rl_axes_set_ylabel(ax, "Time per cycle", unit == 1e3 ? "ms" : "µs");
    rl_axes_set_legend(ax, RL_LEGEND_OUTSIDE);
    /* Stacked: each component is a band from the sum below it to the sum including it. */
    for (int k = 0; k < ncomp; k++) {
        const double *v = run->columns[comp[k]];
        for (size_t i = 0; i < n; i++) {
            lo[i] = k == 0 ? 0 : hi[i];
            hi[i] = lo[i] + (isfinite(v[i]) ? v[i] * unit : 0);
        }
        rl_series_opts so;
        rl_series_opts_init(&so);
        so.label = run->column_names[comp[k]];
        so.color = k;
        so.dash = 0;
        so.line_width = 0.8;
        so.band_lo = lo;
        so.band_hi = hi;
        if (rl_axes_line(ax, idx, hi, n, &so) != RL_OK) {
            rc = cli_fail("plot", "%s", rl_error_last());
            goto done;
        }
    }
    char dir[PATH_MAX];
    char *in[1] = {run->path};
    if (figure_dir(o, run->path, dir, sizeof dir) != RL_OK) {
        rc = cli_fail("plot", "%s", rl_error_last());
        goto done;
    }
    rc = save(fig, o, dir, "timing", in, 1, argc, argv);
done:
    free(lo);
    free(hi);
    rl_figure_free(fig);
    return rc;
}

static int plot_timing(const struct popts *o, int argc, char **argv)
{
    rl_run_set *set;
    int rc = load(o, &set);
    if (rc != RL_EXIT_OK)
        return rc;
    size_t drawn = 0;
    for (size_t i = 0; i < set->count && rc == RL_EXIT_OK; i++) {
        if (set->runs[i]->status == RL_RUN_SKIPPED)
            continue;
        if (o->output && drawn == 1) {
            fprintf(stderr, "runlab: plot: timing: --output names one file; only the first run "
                            "was drawn\n");
            break;
        }
        rc = plot_timing_run(o, set->runs[i], argc, argv);
        drawn++;
    }
    if (rc == RL_EXIT_OK && drawn == 0)
        rc = cli_fail("plot", "timing: no usable run below the input(s)");
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
    rl_plot_release_caches();
    return rc;
}
