/* The plot gallery of `runlab demo`: one figure of every plot kind on synthetic but
 * realistic planner-benchmark data (fixed seed), each as PNG and SVG with its .yaml
 * record, one multi-panel figure also as PDF, and gallery.html embedding them all. */
#include "cli.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/plot.h"
#include "runlab/report.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deterministic generator (xorshift64*) so the gallery is the same on every run. */
typedef struct rng {
    uint64_t s;
} rng;

static double rng_u01(rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return (double)((r->s * 0x2545F4914F6CDD1DULL) >> 11) * (1.0 / 9007199254740992.0);
}

static double rng_normal(rng *r)
{
    double u = rng_u01(r), v = rng_u01(r);
    if (u < 1e-300)
        u = 1e-300;
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static const char *const PLANNERS[] = {"RRT*", "PRM*", "BIT*", "FMT*"};

typedef struct gallery {
    const char *dir;
    rl_report *rep;
    int failures;
} gallery;

/* Saves `fig` as name.png and name.svg (+ .pdf when asked) with a record, and adds it to
 * the report with a caption and links to the files. */
static void emit(gallery *g, rl_figure *fig, const char *name, const char *caption, bool pdf)
{
    static const char *const exts[] = {"png", "svg", "pdf"};
    char path[4096];
    int written = 0;
    for (int i = 0; i < (pdf ? 3 : 2); i++) {
        snprintf(path, sizeof path, "%s/%s.%s", g->dir, name, exts[i]);
        if (rl_figure_save(fig, path, RL_PLOT_AUTO) != RL_OK) {
            fprintf(stderr, "runlab: demo: %s\n", rl_error_last());
            g->failures++;
            continue;
        }
        written++;
    }
    rl_figure_record rec = {0};
    rec.description = caption;
    snprintf(path, sizeof path, "%s/%s.png", g->dir, name);
    if (rl_figure_record_write(path, &rec) != RL_OK) {
        fprintf(stderr, "runlab: demo: %s\n", rl_error_last());
        g->failures++;
    } else {
        printf("  %-12s %-30s %s\n", name,
               written == 3 ? ".png .svg .pdf + .yaml record" : ".png .svg + .yaml record",
               caption);
    }
    if (g->rep) {
        char png[300], svg[300], yaml[300];
        snprintf(png, sizeof png, "%s.png", name);
        snprintf(svg, sizeof svg, "%s.svg", name);
        snprintf(yaml, sizeof yaml, "%s.yaml", name);
        rl_report_heading(g->rep, 2, caption);
        if (rl_report_figure(g->rep, fig, NULL) != RL_OK)
            g->failures++;
        rl_report_link(g->rep, png, "PNG");
        rl_report_link(g->rep, svg, "SVG");
        if (pdf) {
            char p[300];
            snprintf(p, sizeof p, "%s.pdf", name);
            rl_report_link(g->rep, p, "PDF");
        }
        rl_report_link(g->rep, yaml, "record");
    }
}

static rl_figure *new_fig(int rows, int cols, double w, double h)
{
    rl_figure *f = NULL;
    if (rl_figure_new(&f, rows, cols) != RL_OK)
        return NULL;
    rl_figure_set_size_in(f, w, h, 100);
    return f;
}

/* Median and interquartile band of 20 runs' cost over time, per planner. */
static void fig_line(gallery *g, rng *r)
{
    rl_figure *f = new_fig(1, 1, 6.4, 4.2);
    if (!f) {
        g->failures++;
        return;
    }
    rl_axes *ax = rl_figure_axes(f, 0, 0);
    rl_axes_set_title(ax, "Solution cost over time (median, IQR of 20 runs)");
    rl_axes_set_xlabel(ax, "Planning time", "s");
    rl_axes_set_ylabel(ax, "Path cost", "m");
    enum { N = 200 };
    double t[N], med[N], lo[N], hi[N];
    for (int p = 0; p < 3; p++) {
        double c0 = 30 + 4 * p, rate = 0.8 + 0.5 * p, floor_c = 18 + 1.5 * p;
        for (int i = 0; i < N; i++) {
            t[i] = 0.05 * (i + 1);
            double m = floor_c + (c0 - floor_c) * exp(-rate * t[i]);
            double spread = 0.6 + 3.5 * exp(-0.7 * t[i]);
            med[i] = m + 0.15 * rng_normal(r);
            lo[i] = med[i] - spread * (0.8 + 0.1 * rng_u01(r));
            hi[i] = med[i] + spread * (1.1 + 0.1 * rng_u01(r));
        }
        rl_series_opts o;
        rl_series_opts_init(&o);
        o.label = PLANNERS[p];
        o.band_lo = lo;
        o.band_hi = hi;
        rl_axes_line(ax, t, med, N, &o);
    }
    emit(g, f, "line_band", "Line with shaded band", false);
    rl_figure_free(f);
}

static void fig_step(gallery *g, rng *r)
{
    rl_figure *f = new_fig(1, 1, 6.4, 4.2);
    if (!f) {
        g->failures++;
        return;
    }
    rl_axes *ax = rl_figure_axes(f, 0, 0);
    rl_axes_set_title(ax, "Best solution found (one run each)");
    rl_axes_set_xlabel(ax, "Planning time", "s");
    rl_axes_set_ylabel(ax, "Best path cost", "m");
    for (int p = 0; p < 4; p++) {
        double t[41], c[41]; /* up to 40 improvements and the final point at t = 10 */
        double cost = 40 + 5 * rng_u01(r), now = 0.2 + 0.3 * rng_u01(r);
        int n = 0;
        while (n < 40 && now < 10) {
            t[n] = now;
            c[n] = cost;
            n++;
            now += 0.1 + rng_u01(r) * (0.6 + 0.3 * p);
            cost -= (cost - 20 - 2 * p) * (0.1 + 0.3 * rng_u01(r));
        }
        t[n] = 10;
        c[n] = cost;
        n++;
        rl_series_opts o;
        rl_series_opts_init(&o);
        o.label = PLANNERS[p];
        rl_axes_step(ax, t, c, (size_t)n, &o);
    }
    emit(g, f, "step", "Step lines", false);
    rl_figure_free(f);
}

static void fig_scatter(gallery *g, rng *r)
{
    rl_figure *f = new_fig(1, 1, 6.4, 4.2);
    if (!f) {
        g->failures++;
        return;
    }
    rl_axes *ax = rl_figure_axes(f, 0, 0);
    rl_axes_set_title(ax, "Planning time against path length");
    rl_axes_set_xlabel(ax, "Planning time", "s");
    rl_axes_set_ylabel(ax, "Path length", "m");
    rl_axes_set_xscale(ax, RL_SCALE_LOG);
    enum { N = 150 };
    double x[N], y[N];
    for (int p = 0; p < 3; p++) {
        for (int i = 0; i < N; i++) {
            x[i] = exp(log(0.02 * (p + 1) * (p + 1)) + 0.8 * rng_normal(r));
            y[i] = 12 + 3 * p - 1.5 * log(x[i]) + 1.2 * rng_normal(r);
        }
        rl_series_opts o;
        rl_series_opts_init(&o);
        o.label = PLANNERS[p];
        rl_axes_scatter(ax, x, y, N, &o);
    }
    emit(g, f, "scatter", "Scatter on a log axis", false);
    rl_figure_free(f);
}

static void fig_box(gallery *g, rng *r)
{
    rl_figure *f = new_fig(1, 1, 6.4, 4.2);
    if (!f) {
        g->failures++;
        return;
    }
    rl_axes *ax = rl_figure_axes(f, 0, 0);
    rl_axes_set_title(ax, "Planning time per planner (50 runs, notched)");
    rl_axes_set_ylabel(ax, "Planning time", "ms");
    enum { N = 50 };
    double v[N];
    for (int p = 0; p < 4; p++) {
        for (int i = 0; i < N; i++) {
            v[i] = 120 + 40 * p + (18 + 6 * p) * rng_normal(r);
            if (i % 17 == 3)
                v[i] += 120 + 30 * rng_u01(r); /* the occasional slow run */
        }
        rl_series_opts o;
        rl_series_opts_init(&o);
        o.notch = true;
        rl_axes_box(ax, PLANNERS[p], v, N, &o);
    }
    emit(g, f, "box", "Box plot (1.5 IQR whiskers, outliers, notches)", false);
    rl_figure_free(f);
}

static void fig_ecdf(gallery *g, rng *r)
{
    rl_figure *f = new_fig(1, 1, 6.4, 4.2);
    if (!f) {
        g->failures++;
        return;
    }
    rl_axes *ax = rl_figure_axes(f, 0, 0);
    rl_axes_set_title(ax, "Time to first solution");
    rl_axes_set_xlabel(ax, "Time to first solution", "s");
    rl_axes_set_ylabel(ax, "Fraction of runs", NULL);
    rl_axes_set_xscale(ax, RL_SCALE_LOG);
    enum { N = 100 };
    double v[N];
    for (int p = 0; p < 4; p++) {
        for (int i = 0; i < N; i++)
            v[i] = exp(log(0.01 * (1 + 2 * p)) + (0.6 + 0.2 * p) * rng_normal(r));
        rl_series_opts o;
        rl_series_opts_init(&o);
        o.label = PLANNERS[p];
        rl_axes_ecdf(ax, v, N, &o);
    }
    emit(g, f, "ecdf", "Empirical CDF", false);
    rl_figure_free(f);
}

static void fig_bar(gallery *g, rng *r)
{
    rl_figure *f = new_fig(1, 1, 6.4, 4.2);
    if (!f) {
        g->failures++;
        return;
    }
    rl_axes *ax = rl_figure_axes(f, 0, 0);
    rl_axes_set_title(ax, "Success rate per environment");
    rl_axes_set_ylabel(ax, "Success rate", "%");
    static const char *const envs[] = {"Maze", "Bugtrap", "Cubicles", "Forest", "Narrow gap"};
    for (int p = 0; p < 3; p++) {
        double v[5];
        for (int e = 0; e < 5; e++)
            v[e] = fmin(100, 55 + 8 * p + 30 * rng_u01(r) - 6 * e);
        rl_series_opts o;
        rl_series_opts_init(&o);
        o.label = PLANNERS[p];
        rl_axes_bar(ax, envs, 5, v, &o);
    }
    emit(g, f, "bar", "Grouped bars", false);
    rl_figure_free(f);
}

static void fig_stacked(gallery *g, rng *r)
{
    rl_figure *f = new_fig(1, 1, 6.4, 3.6);
    if (!f) {
        g->failures++;
        return;
    }
    rl_axes *ax = rl_figure_axes(f, 0, 0);
    rl_axes_set_title(ax, "Where planning time goes");
    rl_axes_set_xlabel(ax, "Mean time per query", "ms");
    rl_axes_set_bar_mode(ax, RL_BAR_STACKED, true);
    static const char *const parts[] = {"Collision checking", "Nearest neighbour", "Other"};
    for (int k = 0; k < 3; k++) {
        double v[4];
        for (int p = 0; p < 4; p++)
            v[p] = (k == 0 ? 60 : k == 1 ? 25 : 10) * (0.7 + 0.6 * rng_u01(r)) * (1 + 0.2 * p);
        rl_series_opts o;
        rl_series_opts_init(&o);
        o.label = parts[k];
        rl_axes_bar(ax, PLANNERS, 4, v, &o);
    }
    emit(g, f, "bar_stacked", "Stacked horizontal bars", false);
    rl_figure_free(f);
}

static void fig_hist(gallery *g, rng *r)
{
    rl_figure *f = new_fig(1, 1, 6.4, 4.2);
    if (!f) {
        g->failures++;
        return;
    }
    rl_axes *ax = rl_figure_axes(f, 0, 0);
    rl_axes_set_title(ax, "Control loop period");
    rl_axes_set_xlabel(ax, "Period", "ms");
    rl_axes_set_ylabel(ax, "Count", NULL);
    enum { N = 2000 };
    double *v = malloc(N * sizeof *v);
    if (!v) {
        rl_figure_free(f);
        g->failures++;
        return;
    }
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < N; i++)
            v[i] = 10 + k * 0.6 + (0.25 + 0.2 * k) * rng_normal(r);
        rl_series_opts o;
        rl_series_opts_init(&o);
        o.label = k ? "with logging" : "without logging";
        rl_axes_hist(ax, v, N, &o);
    }
    free(v);
    emit(g, f, "hist", "Histograms", false);
    rl_figure_free(f);
}

/* A planned path and the driven trajectory on a map: equal aspect, unsorted x. */
static void fig_traj(gallery *g, rng *r)
{
    rl_figure *f = new_fig(1, 1, 6.4, 4.8);
    if (!f) {
        g->failures++;
        return;
    }
    rl_axes *ax = rl_figure_axes(f, 0, 0);
    rl_axes_set_title(ax, "Planned path and driven trajectory");
    rl_axes_set_xlabel(ax, "x", "m");
    rl_axes_set_ylabel(ax, "y", "m");
    rl_axes_set_equal_aspect(ax, true);
    static const double wx[] = {0, 4, 7, 7.5, 4, 1, 0.5, 3.5, 8};
    static const double wy[] = {0, 0.5, 2.5, 5.5, 7, 6, 9, 11, 10.5};
    enum { NW = sizeof wx / sizeof wx[0], N = 400 };
    double px[N], py[N], tx[N], ty[N];
    for (int i = 0; i < N; i++) {
        double u = (double)i / (N - 1) * (NW - 1);
        int k = (int)u < NW - 1 ? (int)u : NW - 2;
        double f01 = u - k, s = f01 * f01 * (3 - 2 * f01);
        px[i] = wx[k] + (wx[k + 1] - wx[k]) * s;
        py[i] = wy[k] + (wy[k + 1] - wy[k]) * s;
        double drift = 0.25 * sin(i * 0.05) + 0.01 * rng_normal(r);
        tx[i] = px[i] + drift;
        ty[i] = py[i] - 0.8 * drift;
    }
    rl_series_opts o;
    rl_series_opts_init(&o);
    o.label = "planned";
    rl_axes_line(ax, px, py, N, &o);
    o.label = "driven";
    rl_axes_line(ax, tx, ty, N, &o);
    rl_series_opts_init(&o);
    o.label = "waypoints";
    o.color = 6;
    o.marker = RL_MARKER_DIAMOND;
    o.marker_size = 6;
    rl_axes_scatter(ax, wx, wy, NW, &o);
    emit(g, f, "trajectory", "Trajectory with equal aspect", false);
    rl_figure_free(f);
}

/* Four panels, a log axis, a million-point line and some NaN to show the note. */
static void fig_panels(gallery *g, rng *r)
{
    rl_figure *f = new_fig(2, 2, 10, 7);
    if (!f) {
        g->failures++;
        return;
    }
    rl_figure_set_title(f, "Run 2026-11-29: controller diagnostics");
    enum { N = 1000000 };
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        rl_figure_free(f);
        g->failures++;
        return;
    }
    for (int i = 0; i < N; i++) {
        x[i] = i * 1e-4;
        y[i] = sin(x[i] * 0.8) * 0.4 + 0.05 * rng_normal(r) + (i % 250000 == 7 ? 0.6 : 0);
        if (i % 100003 == 5)
            y[i] = NAN;
    }
    rl_axes *a = rl_figure_axes(f, 0, 0);
    rl_axes_set_title(a, "Tracking error (1,000,000 samples)");
    rl_axes_set_xlabel(a, "Time", "s");
    rl_axes_set_ylabel(a, "Lateral error", "m");
    rl_series_opts o;
    rl_series_opts_init(&o);
    o.line_width = 0.8;
    rl_axes_line(a, x, y, N, &o);

    a = rl_figure_axes(f, 0, 1);
    rl_axes_set_title(a, "Memory use");
    rl_axes_set_xlabel(a, "Time", "s");
    rl_axes_set_ylabel(a, "Resident set", "B");
    double t[60], mem[60], mem2[60];
    for (int i = 0; i < 60; i++) {
        t[i] = i * 2;
        mem[i] = 180e6 + 2.5e6 * i + 4e6 * rng_u01(r);
        mem2[i] = 120e6 + 0.8e6 * i + 3e6 * rng_u01(r);
    }
    rl_series_opts_init(&o);
    o.label = "planner";
    o.marker = RL_MARKER_CIRCLE;
    o.marker_size = 3.5;
    rl_axes_line(a, t, mem, 60, &o);
    o.label = "mapper";
    o.marker = RL_MARKER_SQUARE;
    rl_axes_line(a, t, mem2, 60, &o);

    a = rl_figure_axes(f, 1, 0);
    rl_axes_set_title(a, "Solve time against problem size");
    rl_axes_set_xlabel(a, "States", NULL);
    rl_axes_set_ylabel(a, "Solve time", "s");
    rl_axes_set_xscale(a, RL_SCALE_LOG);
    rl_axes_set_yscale(a, RL_SCALE_LOG);
    double n[40], s1[40], s2[40];
    for (int i = 0; i < 40; i++) {
        n[i] = pow(10, 1 + i * 0.125);
        s1[i] = 2e-6 * n[i] * log(n[i]) * (0.8 + 0.4 * rng_u01(r));
        s2[i] = 4e-8 * n[i] * n[i] * (0.8 + 0.4 * rng_u01(r));
    }
    rl_series_opts_init(&o);
    o.label = "k-d tree";
    rl_axes_line(a, n, s1, 40, &o);
    o.label = "brute force";
    rl_axes_line(a, n, s2, 40, &o);

    a = rl_figure_axes(f, 1, 1);
    rl_axes_set_title(a, "Goal distance");
    rl_axes_set_xlabel(a, "Distance to goal", "m");
    rl_axes_set_ylabel(a, "Density", NULL);
    double d[500];
    for (int i = 0; i < 500; i++)
        d[i] = i % 97 == 0 ? INFINITY : fabs(0.3 * rng_normal(r) + 0.05);
    rl_series_opts_init(&o);
    o.density = true;
    rl_axes_hist(a, d, 500, &o);
    free(x);
    free(y);
    emit(g, f, "panels", "Several panels, log-log axes, a million points and skipped values", true);
    rl_figure_free(f);
}

int demo_plot(const char *out_dir)
{
    if (rl_fs_mkdirs(out_dir) != RL_OK) {
        fprintf(stderr, "runlab: demo: %s\n", rl_error_last());
        return RL_EXIT_FAILURE;
    }
    gallery g = {out_dir, NULL, 0};
    if (rl_report_new(&g.rep, "runlab plot gallery") != RL_OK) {
        fprintf(stderr, "runlab: demo: %s\n", rl_error_last());
        return RL_EXIT_FAILURE;
    }
    rl_report_paragraph(g.rep, "Every plot kind runlab draws, on synthetic planner-benchmark "
                               "data. Each figure is inlined as SVG below and written beside "
                               "this page as PNG and SVG with a .yaml record.");
    static const char *const index[][3] = {
        {"line_band", "Line with shaded band", "median and IQR of 20 runs"},
        {"step", "Step lines", "best cost so far"},
        {"scatter", "Scatter", "log x axis, marker shapes per series"},
        {"box", "Box plot", "1.5 IQR whiskers, outliers, notches"},
        {"ecdf", "ECDF", "log x axis"},
        {"bar", "Grouped bars", "categories on x"},
        {"bar_stacked", "Stacked bars", "horizontal"},
        {"hist", "Histograms", "two overlapping distributions"},
        {"trajectory", "Path on a map", "equal aspect, unsorted x, waypoints"},
        {"panels", "Four panels", "10\xE2\x81\xB6 points, log-log, skipped values (also PDF)"}};
    const char *hdr[3] = {"figure", "kind", "shows"};
    rl_report_table_begin(g.rep, "Figures in this gallery", hdr, 3, RL_TABLE_SORTABLE);
    for (size_t i = 0; i < sizeof index / sizeof index[0]; i++) {
        char file[64];
        snprintf(file, sizeof file, "%s.svg", index[i][0]);
        rl_report_cell cells[3] = {{RL_CELL_LINK, index[i][0], file, RL_BADGE_NA},
                                   {RL_CELL_TEXT, index[i][1], NULL, RL_BADGE_NA},
                                   {RL_CELL_TEXT, index[i][2], NULL, RL_BADGE_NA}};
        rl_report_table_row_cells(g.rep, cells);
    }
    rl_report_table_end(g.rep);
    rng r = {0x9E3779B97F4A7C15ULL};
    fig_line(&g, &r);
    fig_step(&g, &r);
    fig_scatter(&g, &r);
    fig_box(&g, &r);
    fig_ecdf(&g, &r);
    fig_bar(&g, &r);
    fig_stacked(&g, &r);
    fig_hist(&g, &r);
    fig_traj(&g, &r);
    fig_panels(&g, &r);
    rl_report_heading(g.rep, 2, "Check");
    rl_report_status(g.rep, "Every figure and record written",
                     g.failures ? RL_BADGE_FAIL : RL_BADGE_PASS);
    char path[4096];
    snprintf(path, sizeof path, "%s/gallery.html", out_dir);
    if (rl_report_write(g.rep, path) != RL_OK) {
        fprintf(stderr, "runlab: demo: %s\n", rl_error_last());
        g.failures++;
    } else {
        printf("  gallery page: %s\n", path);
    }
    rl_report_free(g.rep);
    return g.failures ? RL_EXIT_FAILURE : RL_EXIT_OK;
}
