/* Drawing of a figure (rl_plot_draw): the panels' ranges and legends, the layout
 * (plot_layout.c), legend placement (plot_legend.c), then per panel the frame, the series
 * (plot_series.c), ticks, labels and legend, the title and the note of what was not drawn.
 * Everything goes through rl_rend, so PNG, SVG and PDF agree. */
#include "analysis/plot_draw.h"

#include "runlab/error.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Axes, ticks, labels ------------------------------------------------------------- */
static void draw_axes_frame(ctx *C, panel *P)
{
    rl_rend *r = C->r;
    rl_axes *ax = P->ax;
    rl_pen grid = {C_GRID, 0.6, NULL, 0, false};
    if (ax->grid) {
        for (int i = 0; i < P->yt.n && !P->ycat; i++) {
            double y = xf(&P->ty, P->yt.v[i]);
            rl_plot_line2(r, P->px, y, P->px + P->pw, y, &grid);
        }
        for (int i = 0; i < P->xt.n && !P->xcat; i++) {
            double x = xf(&P->tx, P->xt.v[i]);
            rl_plot_line2(r, x, P->py, x, P->py + P->ph, &grid);
        }
    }
}

static void draw_ticks(ctx *C, panel *P)
{
    rl_rend *r = C->r;
    rl_axes *ax = P->ax;
    rl_pen spine = {C_SPINE, 0.8, NULL, 0, false};
    rl_pen tick = {C_SPINE, 0.8, NULL, 0, false};
    rl_pen minor = {C_SPINE, 0.6, NULL, 0, false};
    double x0 = P->px, x1 = P->px + P->pw, y0 = P->py, y1 = P->py + P->ph;
    /* Left and bottom spines only: the open frame reads cleaner in print. */
    rl_plot_line2(r, x0, y1, x1, y1, &spine);
    rl_plot_line2(r, x0, y0, x0, y1, &spine);
    for (int i = 0; i < P->xt.n; i++) {
        double x = xf(&P->tx, P->xt.v[i]);
        rl_plot_line2(r, x, y1, x, y1 + TICK_LEN, &tick);
        if (P->xt.rotate)
            r->ops->text(r, x + C->cap_tick * 0.35, y1 + TICK_LEN + 3, P->xt.label[i], FS_TICK,
                         false, &C_TEXT, 1, 45);
        else
            r->ops->text(r, x, y1 + TICK_LEN + 3 + C->cap_tick, P->xt.label[i], FS_TICK, false,
                         &C_TEXT, 0.5, 0);
    }
    for (int i = 0; i < P->xt.nminor; i++) {
        double x = xf(&P->tx, P->xt.minor[i]);
        rl_plot_line2(r, x, y1, x, y1 + TICK_LEN * 0.55, &minor);
    }
    for (int i = 0; i < P->yt.n; i++) {
        double y = xf(&P->ty, P->yt.v[i]);
        rl_plot_line2(r, x0 - TICK_LEN, y, x0, y, &tick);
        r->ops->text(r, x0 - TICK_LEN - 3, y + C->cap_tick / 2, P->yt.label[i], FS_TICK, false,
                     &C_TEXT, 1, 0);
    }
    for (int i = 0; i < P->yt.nminor; i++) {
        double y = xf(&P->ty, P->yt.minor[i]);
        rl_plot_line2(r, x0 - TICK_LEN * 0.55, y, x0, y, &minor);
    }
    char buf[512];
    double xtick_h = C->cap_tick;
    if (P->xt.rotate) {
        double w = fmin(rl_plot_max_w(&P->xt), P->ch * 0.4);
        xtick_h = w * 0.7071 + C->cap_tick * 0.7071;
    }
    double xlabel_y = y1 + TICK_LEN + 4 + xtick_h + 0.25 * FS_TICK + 7 + C->cap_label;
    rl_plot_axis_label_text(&ax->xa, buf, sizeof buf);
    if (buf[0]) {
        rl_plot_fit_text(C, buf, sizeof buf, FS_LABEL, false, P->pw);
        r->ops->text(r, P->px + P->pw / 2, xlabel_y, buf, FS_LABEL, false, &C_TEXT, 0.5, 0);
    }
    if (P->xt.offset_label[0])
        r->ops->text(r, x1, xlabel_y, P->xt.offset_label, FS_TICK, false, &C_TEXT, 1, 0);
    if (P->yt.offset_label[0])
        r->ops->text(r, x0, y0 - 5, P->yt.offset_label, FS_TICK, false, &C_TEXT, 0, 0);
    rl_plot_axis_label_text(&ax->ya, buf, sizeof buf);
    if (buf[0]) {
        rl_plot_fit_text(C, buf, sizeof buf, FS_LABEL, false, P->ph);
        double x = x0 - TICK_LEN - 3 - rl_plot_max_w(&P->yt) - 8 - 0.25 * FS_LABEL;
        r->ops->text(r, x, P->py + P->ph / 2, buf, FS_LABEL, false, &C_TEXT, 0.5, 90);
    }
    if (ax->title) {
        snprintf(buf, sizeof buf, "%s", ax->title);
        rl_plot_fit_text(C, buf, sizeof buf, FS_TITLE, true, P->cw - 2 * PAD);
        /* Centred over the plot area unless that would push it past the cell's edges. */
        double w = rl_measure_text(C->m, buf, FS_TITLE, true);
        double cx = P->px + P->pw / 2;
        cx = fmin(cx, P->cx + P->cw - PAD - w / 2);
        cx = fmax(cx, P->cx + PAD + w / 2);
        r->ops->text(r, cx, P->py - 8, buf, FS_TITLE, true, &C_TEXT, 0.5, 0);
    }
}

static void draw_panel(ctx *C, panel *P)
{
    rl_rend *r = C->r;
    draw_axes_frame(C, P);
    r->ops->clip_push(r, P->px, P->py, P->pw, P->ph);
    rl_plot_draw_series(C, P, NULL);
    r->ops->clip_pop(r);
    if (P->empty)
        r->ops->text(r, P->px + P->pw / 2, P->py + P->ph / 2 + C->cap_label / 2, "no data",
                     FS_LABEL, false, &C_NOTE, 0.5, 0);
    draw_ticks(C, P);
    rl_plot_draw_legend(C, P);
}

static bool panel_empty(const rl_axes *ax)
{
    for (size_t i = 0; i < ax->nseries; i++) {
        const rl_series *s = ax->series[i];
        if (s->n > 0 || s->kind == RL_K_BAR || (s->kind == RL_K_BOX && s->box.n > 0))
            return false;
    }
    return true;
}

int rl_plot_draw(rl_figure *fig, rl_rend *r, rl_measure *m)
{
    ctx C = {0};
    C.fig = fig;
    C.r = r;
    C.m = m;
    C.W = fig->w_in * 72;
    C.H = fig->h_in * 72;
    C.colw = 72.0 / fig->dpi;
    C.np = fig->rows * fig->cols;
    rl_measure_font(m, FS_TICK, &C.cap_tick, NULL);
    rl_measure_font(m, FS_LABEL, &C.cap_label, NULL);
    rl_measure_font(m, FS_TITLE, &C.cap_title, NULL);
    C.p = calloc((size_t)C.np, sizeof *C.p);
    if (!C.p)
        return rl_error_set(RL_ENOMEM, "plot: out of memory");

    size_t nonpos = 0;
    for (int i = 0; i < C.np; i++) {
        panel *P = &C.p[i];
        rl_axes *ax = &fig->axes[i];
        P->ax = ax;
        bool box = rl_plot_has_kind(ax, RL_K_BOX), bar = rl_plot_has_kind(ax, RL_K_BAR);
        P->xcat = box || (bar && !ax->bar_horizontal);
        P->ycat = bar && ax->bar_horizontal;
        P->empty = panel_empty(ax);
        rl_plot_finish_range(&ax->xa, rl_plot_data_range(ax, true), P->xcat, (double)ax->ncat, &P->xlo, &P->xhi);
        rl_plot_finish_range(&ax->ya, rl_plot_data_range(ax, false), P->ycat, (double)ax->ncat, &P->ylo, &P->yhi);
        if (P->ycat) {
            /* First category at the top, as a reader expects of a horizontal bar list. */
            double t = P->ylo;
            P->ylo = P->yhi;
            P->yhi = t;
        }
        P->xlo0 = P->xlo;
        P->xhi0 = P->xhi;
        P->ylo0 = P->ylo;
        P->yhi0 = P->yhi;
        nonpos += rl_plot_count_nonpos(ax);
        rl_plot_build_legend(&C, P);
        P->leg_outside = ax->legend == RL_LEGEND_OUTSIDE;
    }
    fig->skipped_draw = nonpos;

    char note[256] = "";
    if (fig->skipped && nonpos)
        snprintf(note, sizeof note,
                 "Not drawn: %zu NaN or infinite value%s, %zu non-positive "
                 "value%s on log axes",
                 fig->skipped, fig->skipped == 1 ? "" : "s", nonpos, nonpos == 1 ? "" : "s");
    else if (fig->skipped)
        snprintf(note, sizeof note, "Not drawn: %zu NaN or infinite value%s", fig->skipped,
                 fig->skipped == 1 ? "" : "s");
    else if (nonpos)
        snprintf(note, sizeof note, "Not drawn: %zu non-positive value%s on log axes", nonpos,
                 nonpos == 1 ? "" : "s");

    double top = 0, bottom = 0, cap_sup;
    rl_measure_font(m, FS_SUPTITLE, &cap_sup, NULL);
    if (fig->title)
        top = PAD + cap_sup + 8;
    if (note[0])
        bottom = FS_NOTE * 1.6;

    rl_plot_layout(&C, top, bottom);
    /* Legends: a BEST legend that finds no free corner moves outside; lay out again for
     * the narrower plot area. */
    bool relayout = false;
    for (int i = 0; i < C.np; i++) {
        bool was_outside = C.p[i].leg_outside;
        rl_plot_place_legend(&C, &C.p[i]);
        if (C.p[i].leg_outside && !was_outside)
            relayout = true;
    }
    if (relayout)
        rl_plot_layout(&C, top, bottom);

    if (fig->title) {
        char t[512];
        snprintf(t, sizeof t, "%s", fig->title);
        rl_plot_fit_text(&C, t, sizeof t, FS_SUPTITLE, true, C.W - 2 * PAD);
        r->ops->text(r, C.W / 2, PAD + cap_sup + 2, t, FS_SUPTITLE, true, &C_TEXT, 0.5, 0);
    }
    for (int i = 0; i < C.np; i++)
        draw_panel(&C, &C.p[i]);
    if (note[0])
        r->ops->text(r, PAD + 2, C.H - FS_NOTE * 0.55, note, FS_NOTE, false, &C_NOTE, 0, 0);

    for (int i = 0; i < C.np; i++)
        free(C.p[i].leg);
    free(C.p);
    if (C.oom)
        return rl_error_set(RL_ENOMEM, "plot: out of memory while drawing");
    return RL_OK;
}
