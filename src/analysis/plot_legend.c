/* Legends of a panel: placement in the corner or edge middle that covers no data (else
 * outside to the right), found by drawing the series into an occupancy grid, and the
 * drawing of the legend box. Called by rl_plot_draw (plot_draw.c). */
#include "analysis/plot_draw.h"

#include "runlab/error.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Legend ------------------------------------------------------------------------- */
void rl_plot_place_legend(ctx *C, panel *P)
{
    P->leg_inside = false;
    if (P->nleg == 0)
        return;
    double inset = 6;
    double xl = P->px + inset, xr = P->px + P->pw - inset - P->leg_w;
    double yt = P->py + inset, yb = P->py + P->ph - inset - P->leg_h;
    double xc = P->px + (P->pw - P->leg_w) / 2, yc = P->py + (P->ph - P->leg_h) / 2;
    /* Corners first (in matplotlib's order), then the middles of the edges. */
    double corners[8][2] = {{xr, yt}, {xl, yt}, {xl, yb}, {xr, yb},
                            {xc, yt}, {xc, yb}, {xr, yc}, {xl, yc}};
    rl_legend_pos pos = P->ax->legend;
    if (pos >= RL_LEGEND_UPPER_RIGHT && pos <= RL_LEGEND_LOWER_RIGHT) {
        int k = pos - RL_LEGEND_UPPER_RIGHT;
        P->leg_x = corners[k][0];
        P->leg_y = corners[k][1];
        P->leg_inside = true;
        return;
    }
    if (pos == RL_LEGEND_OUTSIDE)
        return;
    if (P->leg_w + 2 * inset > P->pw || P->leg_h + 2 * inset > P->ph) {
        P->leg_outside = true;
        return;
    }
    occ o = {0};
    o.x0 = P->px;
    o.y0 = P->py;
    o.w = (int)ceil(P->pw / OCC_CELL) + 1;
    o.h = (int)ceil(P->ph / OCC_CELL) + 1;
    o.g = calloc((size_t)o.w * (size_t)o.h, 1);
    if (!o.g) {
        C->oom = true;
        return;
    }
    o.nboxes = 8;
    for (int k = 0; k < 8; k++) {
        o.boxes[k][0] = corners[k][0] - 2;
        o.boxes[k][1] = corners[k][1] - 2;
        o.boxes[k][2] = corners[k][0] + P->leg_w + 2;
        o.boxes[k][3] = corners[k][1] + P->leg_h + 2;
    }
    rl_plot_draw_series(C, P, &o);
    int best = -1, best_n = 0;
    for (int k = 0; k < 8; k++) {
        int n = rl_plot_occ_count(&o, o.boxes[k][0], o.boxes[k][1], o.boxes[k][2], o.boxes[k][3]);
        if (best < 0 || n < best_n) {
            best = k;
            best_n = n;
        }
    }
    free(o.g);
    if (best_n > 0) {
        P->leg_outside = true;
        return;
    }
    P->leg_x = corners[best][0];
    P->leg_y = corners[best][1];
    P->leg_inside = true;
}

void rl_plot_draw_legend(ctx *C, panel *P)
{
    if (P->nleg == 0 || (!P->leg_inside && !P->leg_outside))
        return;
    rl_rend *r = C->r;
    double x = P->leg_x, y = P->leg_y;
    if (P->leg_outside) {
        x = P->px + P->pw + 10;
        y = P->py;
    }
    rl_rgba bg = {1, 1, 1, 0.9};
    rl_pen frame = {{0.8, 0.8, 0.8, 1}, 0.6, NULL, 0, false};
    rl_plot_rect_path(r, x, y, x + P->leg_w, y + P->leg_h, &bg, &frame);
    double row = FS_LEGEND * 1.45;
    for (int i = 0; i < P->nleg; i++) {
        const rl_series *s = P->leg[i].s;
        int rows = P->leg_rows > 0 ? P->leg_rows : P->nleg; /* column by column */
        double cy = y + 4 + row * (i % rows + 0.5), cx = x + P->leg_colw * (double)(i / rows);
        double hx0 = cx + 6, hx1 = cx + 28;
        rl_rgba col = s->kind == RL_K_BOX && s->opts.color < 0 && !s->opts.use_rgb
                          ? rl_plot_palette_rgba(0, 1)
                          : rl_plot_series_rgba(s, 1);
        switch (s->kind) {
        case RL_K_LINE:
        case RL_K_STEP:
        case RL_K_ECDF: {
            if (P->leg[i].band) {
                rl_rgba f = rl_plot_series_rgba(s, 0.22);
                rl_plot_rect_path(r, hx0, cy - 4.5, hx1, cy + 4.5, &f, NULL);
            }
            rl_pen pen = rl_plot_series_pen(s, true);
            rl_plot_line2(r, hx0, cy, hx1, cy, &pen);
            if (s->marker != RL_MARKER_NONE)
                rl_plot_draw_marker(r, s->marker, (hx0 + hx1) / 2, cy, rl_plot_marker_size(s), &col, NULL);
            break;
        }
        case RL_K_SCATTER: {
            rl_rgba f = rl_plot_series_rgba(s, s->opts.alpha > 0 ? s->opts.alpha : 0.8);
            rl_plot_draw_marker(r, s->marker, (hx0 + hx1) / 2, cy, rl_plot_marker_size(s) * 1.2, &f, NULL);
            break;
        }
        case RL_K_HIST:
        case RL_K_BAR:
        case RL_K_BOX: {
            double a = s->kind == RL_K_HIST ? 0.4 : s->kind == RL_K_BOX ? 0.25 : 1;
            if (s->opts.alpha > 0 && s->opts.alpha <= 1)
                a = s->opts.alpha;
            rl_rgba f = col;
            f.a = a;
            rl_pen e = {col, 1, NULL, 0, false};
            rl_plot_rect_path(r, hx0 + 5, cy - 4.5, hx1 - 5, cy + 4.5, &f, s->kind == RL_K_BAR ? NULL : &e);
            break;
        }
        }
        r->ops->text(r, cx + 34, cy + C->cap_tick / 2, P->leg[i].text, FS_LEGEND, false, &C_TEXT, 0,
                     0);
    }
}
