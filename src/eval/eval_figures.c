/* Figures that show checks: handing a figure to the evaluation, the one colour of each
 * vehicle in every figure, the line of a series over time, figures of one series set or of
 * stacked panels over time with their limits, and the link from a check to the figure that
 * shows it (summary.json "figure"). */
#include "eval/eval_sink.h"

#include "core/text.h"
#include "runlab/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int figure_name_ok(const char *name)
{
    if (!*name)
        return 0;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
            return 0;
    return 1;
}

int eval_figure_add(eval_ctx *ctx, const char *name, rl_figure *fig, const char *caption)
{
    struct eval_sink *s = ctx->sink;
    if (!fig)
        return rl_error_set(RL_EINVAL, "evaluation: figure '%s': no figure", name);
    if (!figure_name_ok(name)) {
        rl_figure_free(fig);
        return rl_error_set(RL_EINVAL, "evaluation: figure name '%s': use [a-z0-9_-]", name);
    }
    int rc = rl_grow_array((void **)&s->figures, &s->cap_figures, s->nfigures + 1,
                           sizeof s->figures[0], "figures");
    if (rc < 0) {
        rl_figure_free(fig);
        return rc;
    }
    eval_figure_entry e = {strdup(name), strdup(caption ? caption : ""), strdup(ctx->metric->name), fig};
    if (!e.name || !e.caption || !e.metric) {
        free(e.name);
        free(e.caption);
        free(e.metric);
        rl_figure_free(fig);
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory adding a figure");
    }
    s->figures[s->nfigures++] = e;
    return RL_OK;
}

int eval_figure_over_time(eval_ctx *ctx, const char *name, const char *title,
                          const char *ylabel, const char *unit, const eval_series_ref *series,
                          size_t nseries, double threshold, const char *caption)
{
    rl_figure *fig;
    int rc = rl_figure_new(&fig, 1, 1);
    if (rc < 0)
        return rc;
    rl_axes *ax = rl_figure_axes(fig, 0, 0);
    rl_figure_set_size_in(fig, 8, 4, 100);
    rl_axes_set_title(ax, title);
    rl_axes_set_xlabel(ax, "time since START", "s");
    rl_axes_set_ylabel(ax, ylabel, unit);
    rl_axes_set_legend(ax, RL_LEGEND_BEST);
    for (size_t i = 0; rc == RL_OK && i < nseries; i++) {
        rc = eval_figure_line(ctx, ax, &series[i]);
    }
    const eval_run *run = ctx->run;
    if (rc == RL_OK && isfinite(threshold)) {
        rl_series_opts o;
        rl_series_opts_init(&o);
        o.label = "threshold";
        o.use_rgb = true;
        o.rgb = RL_PLOT_LIMIT_COLOR;
        o.dash = 1;
        double x[2] = {run->window_start, run->window_stop}, y[2] = {threshold, threshold};
        rc = rl_axes_line(ax, x, y, 2, &o);
    }
    if (rc == RL_OK && run->window_stop > run->window_start)
        rc = rl_axes_set_xlim(ax, run->window_start, run->window_stop);
    if (rc < 0) {
        rl_figure_free(fig);
        return rc;
    }
    return eval_figure_add(ctx, name, fig, caption);
}

unsigned eval_vehicle_color(const eval_run *run, int id)
{
    size_t i = 0;
    while (i < run->nvehicles && run->vehicles[i].id != id)
        i++;
    return rl_plot_vehicle_color((int)(i % RL_PLOT_VEHICLE_COLORS));
}

int eval_figure_line(eval_ctx *ctx, rl_axes *ax, const eval_series_ref *series)
{
    rl_series_opts o;
    rl_series_opts_init(&o);
    o.label = series->label;
    o.use_rgb = true;
    o.rgb = eval_vehicle_color(ctx->run, series->vehicle);
    o.dash = 0;
    o.line_width = 1.2;
    /* One line per stretch of samples at most max_gap apart, the label on the first: a
     * straight line across a stall would show data where there was none. */
    size_t start = 0, n = series->n;
    const double *t = series->t, *y = series->y;
    int rc = RL_OK;
    for (size_t i = 1; rc == RL_OK && series->max_gap > 0 && i < n; i++)
        if (t[i] - t[i - 1] > series->max_gap) {
            rc = rl_axes_line(ax, t + start, y + start, i - start, &o);
            o.label = NULL;
            start = i;
        }
    if (rc == RL_OK)
        rc = rl_axes_line(ax, t + start, y + start, n - start, &o);
    return rc;
}

/* Whether the check is about exactly `vehicles` (in any order). */
static bool same_vehicles(const rl_eval_check *c, const int *vehicles, size_t n)
{
    if (c->nvehicles != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        bool found = false;
        for (size_t j = 0; j < n && !found; j++)
            found = c->vehicles[j] == vehicles[i];
        if (!found)
            return false;
    }
    return true;
}

int eval_check_link_figure_for(eval_ctx *ctx, const char *check, const int *vehicles,
                               size_t nvehicles, bool failing_only, const char *figure)
{
    struct eval_sink *s = ctx->sink;
    for (size_t i = 0; i < s->nchecks; i++) {
        rl_eval_check *c = &s->checks[i];
        if (c->figure || strcmp(c->metric, ctx->metric->name) != 0 ||
            (check && strcmp(c->check, check) != 0) ||
            (c->status != RL_EVAL_FAIL &&
             (failing_only || (c->status != RL_EVAL_PASS && c->status != RL_EVAL_INSUFFICIENT))) ||
            (vehicles && !same_vehicles(c, vehicles, nvehicles)))
            continue;
        if (!(c->figure = strdup(figure)))
            return rl_error_set(RL_ENOMEM, "evaluation: out of memory linking figure %s", figure);
    }
    return RL_OK;
}

int eval_check_link_figure(eval_ctx *ctx, const char *check, const char *figure)
{
    return eval_check_link_figure_for(ctx, check, NULL, 0, false, figure);
}

bool eval_check_any_insufficient(eval_ctx *ctx, const char *check)
{
    const struct eval_sink *s = ctx->sink;
    for (size_t i = 0; i < s->nchecks; i++) {
        const rl_eval_check *c = &s->checks[i];
        if (c->status == RL_EVAL_INSUFFICIENT && strcmp(c->metric, ctx->metric->name) == 0 &&
            strcmp(c->check, check) == 0)
            return true;
    }
    return false;
}

bool eval_check_any_failed(eval_ctx *ctx, const char *prefix)
{
    const struct eval_sink *s = ctx->sink;
    for (size_t i = 0; i < s->nchecks; i++) {
        const rl_eval_check *c = &s->checks[i];
        if (c->status == RL_EVAL_FAIL && strcmp(c->metric, ctx->metric->name) == 0 &&
            strncmp(c->check, prefix, strlen(prefix)) == 0)
            return true;
    }
    return false;
}

/* A dashed black horizontal line over the window at y (nothing for NaN). */
static int limit_line(eval_ctx *ctx, rl_axes *ax, double y, const char *label)
{
    if (!isfinite(y))
        return RL_OK;
    rl_series_opts o;
    rl_series_opts_init(&o);
    o.label = label;
    o.use_rgb = true;
    o.rgb = RL_PLOT_LIMIT_COLOR;
    o.dash = 1;
    o.line_width = 1;
    double x[2] = {ctx->run->window_start, ctx->run->window_stop}, v[2] = {y, y};
    return rl_axes_line(ax, x, v, 2, &o);
}

static int draw_panel(eval_ctx *ctx, rl_axes *ax, const eval_panel_spec *p, bool last)
{
    const eval_run *run = ctx->run;
    int rc = rl_axes_set_title(ax, p->title);
    if (rc == RL_OK)
        rc = rl_axes_set_ylabel(ax, p->ylabel, p->unit);
    if (rc == RL_OK && last)
        rc = rl_axes_set_xlabel(ax, "time since START", "s");
    if (rc == RL_OK)
        rc = rl_axes_set_legend(ax, RL_LEGEND_OUTSIDE);
    for (size_t i = 0; rc == RL_OK && i < p->nseries; i++) {
        const eval_series_ref *s = &p->series[i];
        if (!p->step) {
            rc = eval_figure_line(ctx, ax, s);
            continue;
        }
        rl_series_opts o;
        rl_series_opts_init(&o);
        o.label = s->label;
        o.use_rgb = true;
        o.rgb = eval_vehicle_color(run, s->vehicle);
        o.dash = 0;
        o.line_width = 1.2;
        rc = rl_axes_step(ax, s->t, s->y, s->n, &o);
    }
    /* One legend entry for the limits of a panel: "limit" names both lines of a +- pair. */
    if (rc == RL_OK)
        rc = limit_line(ctx, ax, p->limit_hi, "limit");
    if (rc == RL_OK)
        rc = limit_line(ctx, ax, p->limit_lo, isfinite(p->limit_hi) ? NULL : "limit");
    if (rc == RL_OK && run->window_stop > run->window_start)
        rc = rl_axes_set_xlim(ax, run->window_start, run->window_stop);
    return rc;
}

int eval_figure_panels(eval_ctx *ctx, const char *name, const char *title,
                       const eval_panel_spec *panels, size_t npanels, const char *caption)
{
    if (npanels < 1 || npanels > 4)
        return rl_error_set(RL_EINVAL, "evaluation: figure %s: %zu panels (1..4)", name, npanels);
    rl_figure *fig;
    int rc = rl_figure_new(&fig, (int)npanels, 1);
    if (rc < 0)
        return rc;
    rc = rl_figure_set_size_in(fig, 9, 1.2 + 2.6 * (double)npanels, 100);
    if (rc == RL_OK && title && npanels > 1)
        rc = rl_figure_set_title(fig, title);
    for (size_t i = 0; rc == RL_OK && i < npanels; i++)
        rc = draw_panel(ctx, rl_figure_axes(fig, (int)i, 0), &panels[i], i + 1 == npanels);
    if (rc < 0) {
        rl_figure_free(fig);
        return rc;
    }
    return eval_figure_add(ctx, name, fig, caption);
}
