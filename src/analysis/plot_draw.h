/* The figure drawing's private types and the calls between its files: rl_plot_draw
 * (plot_draw.c) lays a figure out with plot_layout.c, draws its series with
 * plot_series.c and places and draws legends with plot_legend.c. Sizes are in points;
 * everything goes through rl_rend. */
#ifndef RUNLAB_PLOT_DRAW_H
#define RUNLAB_PLOT_DRAW_H

#include "analysis/plot_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

/* Sizes in points, close to matplotlib's defaults at 6.4 x 4.8 in. */
#define FS_TICK     9.0
#define FS_LABEL    10.0
#define FS_TITLE    11.0
#define FS_SUPTITLE 12.5
#define FS_LEGEND   9.0
#define FS_NOTE     8.0
#define TICK_LEN    3.5
#define PAD         4.0
#define MAX_TICKS   40
#define COORD_LIMIT 1e6

static const rl_rgba C_BLACK = {0, 0, 0, 1};
static const rl_rgba C_TEXT = {0.1, 0.1, 0.1, 1};
static const rl_rgba C_SPINE = {0.2, 0.2, 0.2, 1};
static const rl_rgba C_GRID = {0.88, 0.88, 0.88, 1};
static const rl_rgba C_NOTE = {0.35, 0.35, 0.35, 1};
static const rl_rgba C_WHITE = {1, 1, 1, 1};

/* ---- Coordinate transforms ---------------------------------------------------------- */
typedef struct xform {
    double d0, d1; /* data limits (log10 of them on log axes) */
    double p0, p1; /* page coordinates of d0 and d1 */
    bool log;
} xform;

static inline double xf(const xform *t, double v)
{
    if (t->log)
        v = v > 0 ? log10(v) : -INFINITY;
    return t->p0 + (v - t->d0) / (t->d1 - t->d0) * (t->p1 - t->p0);
}

/* ---- Layout -------------------------------------------------------------------------- */
typedef struct tickset {
    double v[MAX_TICKS];
    char label[MAX_TICKS][96];
    double w[MAX_TICKS];
    int n;
    double step;
    double minor[MAX_TICKS * 10];
    int nminor;
    double offset;         /* subtracted from every label (tiny span, large values) */
    char offset_label[48]; /* "+1.7G", drawn once at the end of the axis */
    bool rotate;           /* category labels at 45 degrees */
    int every;             /* category axis: label every k-th */
} tickset;

typedef struct legend_entry {
    const rl_series *s;
    bool band;
    char text[160]; /* the label, shortened to fit */
} legend_entry;

typedef struct panel {
    rl_axes *ax;
    double cx, cy, cw, ch;         /* cell */
    double ml, mr, mt, mb;         /* margins */
    double px, py, pw, ph;         /* plot area */
    double xlo, xhi, ylo, yhi;     /* view limits (data units) */
    double xlo0, xhi0, ylo0, yhi0; /* limits before an equal-aspect widening */
    bool xcat, ycat, empty;
    xform tx, ty;
    tickset xt, yt;
    legend_entry *leg;
    int nleg;
    double leg_w, leg_h, leg_x, leg_y;
    double leg_colw; /* one column of entries */
    int leg_rows;    /* entries per column: all of them, or fewer in columns outside */
    bool leg_outside, leg_inside;
} panel;

typedef struct ctx {
    rl_figure *fig;
    rl_rend *r;
    rl_measure *m;
    double W, H; /* page size, pt */
    double colw; /* one device pixel, pt */
    double cap_tick, cap_label, cap_title;
    panel *p;
    int np;
    size_t nonpos;
    bool oom;
} ctx;

/* ---- Occupancy grid for legend placement -------------------------------------------- */
#define OCC_CELL 3.0
typedef struct occ {
    unsigned char *g;
    int w, h;
    double x0, y0;
    /* The candidate legend boxes (x0, y0, x1, y1) and which hold data already: once all
     * do, the legend goes outside whatever else is drawn, and drawing stops. */
    double boxes[8][4];
    int nboxes;
    bool hit[8];
} occ;

/* Layout (plot_layout.c): data ranges and view limits, tick choice that measures its
 * labels, margins aligned across the grid, legend entries and their box. */
typedef struct range {
    double lo, hi;
    bool any, stick_lo, stick_hi;
} range;

bool rl_plot_has_kind(const rl_axes *ax, rl_kind k);
/* The range of a panel's data along x (`is_x`) or y. */
range rl_plot_data_range(rl_axes *ax, bool is_x);
/* Values a log axis of the panel cannot show (not drawn, counted in the figure's note). */
size_t rl_plot_count_nonpos(const rl_axes *ax);
/* The view limits of an axis from its data range `r` (`cat`: a category axis of `ncat`). */
void rl_plot_finish_range(const rl_axis *a, range r, bool cat, double ncat, double *lo, double *hi);
/* Shortens `label` in place with "…" until it fits `maxw` points; returns its width. */
double rl_plot_fit_text(ctx *C, char *label, size_t cap, double size, bool bold, double maxw);
double rl_plot_max_w(const tickset *t);
void rl_plot_axis_label_text(const rl_axis *a, char *buf, size_t cap);
/* The panel's legend entries and the size of their box. */
void rl_plot_build_legend(ctx *C, panel *P);
/* Cells, margins (aligned across each grid row and column), plot areas and ticks of every
 * panel, between `top` and `bottom` points of the page kept for the title and the note. */
void rl_plot_layout(ctx *C, double top, double bottom);

/* Series (plot_series.c). rl_plot_draw_series draws the panel's series, or with `o` set
 * marks them into the occupancy grid `o` instead (and stops once every candidate legend
 * box holds data). */
rl_rgba rl_plot_palette_rgba(int i, double a);
rl_rgba rl_plot_series_rgba(const rl_series *s, double a);
rl_pen rl_plot_series_pen(const rl_series *s, bool dashed);
int rl_plot_occ_count(const occ *o, double x0, double y0, double x1, double y1);
void rl_plot_rect_path(rl_rend *r, double x0, double y0, double x1, double y1, const rl_rgba *fill,
                       const rl_pen *pen);
void rl_plot_line2(rl_rend *r, double x0, double y0, double x1, double y1, const rl_pen *pen);
void rl_plot_draw_marker(rl_rend *r, rl_marker mk, double x, double y, double size,
                         const rl_rgba *fill, const rl_pen *edge);
double rl_plot_marker_size(const rl_series *s);
void rl_plot_draw_series(ctx *C, panel *P, occ *o);

/* Legends (plot_legend.c): placement inside where no data lies (else outside), drawing. */
void rl_plot_place_legend(ctx *C, panel *P);
void rl_plot_draw_legend(ctx *C, panel *P);

#endif
